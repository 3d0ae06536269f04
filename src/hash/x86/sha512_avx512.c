/* SHA-512 of eight messages at once with AVX-512 (FIPS 180-4).
 *
 * Message i of a group of eight is lane i of a __m512i: working variable a of all eight
 * messages sits in one register, word j of the schedule in another, so a round is the scalar
 * round written with vector operations. vprorq does the rotations, vpternlogq the three-way
 * XORs of the Sigma and sigma functions and Ch and Maj in one instruction each. The 80 rounds
 * and the schedule are unrolled.
 *
 * All messages of a batch have the same length, so their block structure and padding are the
 * same. Per batch, once: the final block's padding as a byte mask and a template (the 0x80 and
 * the length, as big-endian words), and, where the padding spills into a block of its own
 * (or the message ends on a block boundary), that block's whole schedule with the round
 * constants added in, since it is the same for every message. Per group of eight: whole
 * blocks are loaded straight from the messages and transposed in registers; the final block
 * is loaded the same way from the message tail, which is then masked and merged with the
 * template in one vpternlogq per word. Loading a whole 128-byte block from a tail would read
 * past the end of the batch for the last message or two: those few tails are first copied to
 * a buffer. A group of fewer than eight fills the idle lanes with its last message again and
 * throws their output away. Nothing branches on or indexes by message data. */
#include <immintrin.h>
#include <string.h>

#include "hbs/hbs.h"
#include "hash/x86/x86.h"

#define LANES 8
#define BLOCK HBS_SHA512_BLOCK

typedef __m512i vec;

static const uint64_t K[80] = {
    0x428a2f98d728ae22ULL, 0x7137449123ef65cdULL, 0xb5c0fbcfec4d3b2fULL, 0xe9b5dba58189dbbcULL,
    0x3956c25bf348b538ULL, 0x59f111f1b605d019ULL, 0x923f82a4af194f9bULL, 0xab1c5ed5da6d8118ULL,
    0xd807aa98a3030242ULL, 0x12835b0145706fbeULL, 0x243185be4ee4b28cULL, 0x550c7dc3d5ffb4e2ULL,
    0x72be5d74f27b896fULL, 0x80deb1fe3b1696b1ULL, 0x9bdc06a725c71235ULL, 0xc19bf174cf692694ULL,
    0xe49b69c19ef14ad2ULL, 0xefbe4786384f25e3ULL, 0x0fc19dc68b8cd5b5ULL, 0x240ca1cc77ac9c65ULL,
    0x2de92c6f592b0275ULL, 0x4a7484aa6ea6e483ULL, 0x5cb0a9dcbd41fbd4ULL, 0x76f988da831153b5ULL,
    0x983e5152ee66dfabULL, 0xa831c66d2db43210ULL, 0xb00327c898fb213fULL, 0xbf597fc7beef0ee4ULL,
    0xc6e00bf33da88fc2ULL, 0xd5a79147930aa725ULL, 0x06ca6351e003826fULL, 0x142929670a0e6e70ULL,
    0x27b70a8546d22ffcULL, 0x2e1b21385c26c926ULL, 0x4d2c6dfc5ac42aedULL, 0x53380d139d95b3dfULL,
    0x650a73548baf63deULL, 0x766a0abb3c77b2a8ULL, 0x81c2c92e47edaee6ULL, 0x92722c851482353bULL,
    0xa2bfe8a14cf10364ULL, 0xa81a664bbc423001ULL, 0xc24b8b70d0f89791ULL, 0xc76c51a30654be30ULL,
    0xd192e819d6ef5218ULL, 0xd69906245565a910ULL, 0xf40e35855771202aULL, 0x106aa07032bbd1b8ULL,
    0x19a4c116b8d2d0c8ULL, 0x1e376c085141ab53ULL, 0x2748774cdf8eeb99ULL, 0x34b0bcb5e19b48a8ULL,
    0x391c0cb3c5c95a63ULL, 0x4ed8aa4ae3418acbULL, 0x5b9cca4f7763e373ULL, 0x682e6ff3d6b2b8a3ULL,
    0x748f82ee5defb2fcULL, 0x78a5636f43172f60ULL, 0x84c87814a1f0ab72ULL, 0x8cc702081a6439ecULL,
    0x90befffa23631e28ULL, 0xa4506cebde82bde9ULL, 0xbef9a3f7b2c67915ULL, 0xc67178f2e372532bULL,
    0xca273eceea26619cULL, 0xd186b8c721c0c207ULL, 0xeada7dd6cde0eb1eULL, 0xf57d4f7fee6ed178ULL,
    0x06f067aa72176fbaULL, 0x0a637dc5a2c898a6ULL, 0x113f9804bef90daeULL, 0x1b710b35131c471bULL,
    0x28db77f523047d84ULL, 0x32caab7b40c72493ULL, 0x3c9ebe0a15c9bebcULL, 0x431d67c49c100d4cULL,
    0x4cc5d4becb3e42b6ULL, 0x597f299cfc657e2aULL, 0x5fcb6fab3ad6faecULL, 0x6c44198c4a475817ULL,
};

/* ---- scalar helpers (once per batch) ------------------------------------------------------ */

static inline uint64_t load_be64(const uint8_t *p)
{
    return (uint64_t)p[0] << 56 | (uint64_t)p[1] << 48 | (uint64_t)p[2] << 40 |
           (uint64_t)p[3] << 32 | (uint64_t)p[4] << 24 | (uint64_t)p[5] << 16 |
           (uint64_t)p[6] << 8 | (uint64_t)p[7];
}

static inline uint64_t rotr64(uint64_t x, unsigned n) { return (x >> n) | (x << (64 - n)); }

/* K[t] + W[t] for the 80 rounds of one block that is the same for every message. */
static void schedule_with_k(uint64_t kw[80], const uint8_t block[BLOCK])
{
    uint64_t w[80];
    for (unsigned t = 0; t < 16; t++)
        w[t] = load_be64(block + 8 * t);
    for (unsigned t = 16; t < 80; t++) {
        uint64_t s0 = rotr64(w[t - 15], 1) ^ rotr64(w[t - 15], 8) ^ (w[t - 15] >> 7);
        uint64_t s1 = rotr64(w[t - 2], 19) ^ rotr64(w[t - 2], 61) ^ (w[t - 2] >> 6);
        w[t] = w[t - 16] + s0 + w[t - 7] + s1;
    }
    for (unsigned t = 0; t < 80; t++)
        kw[t] = K[t] + w[t];
}

/* ---- eight lanes -------------------------------------------------------------------------- */

#define ADD(x, y) _mm512_add_epi64((x), (y))
#define ROR(x, n) _mm512_ror_epi64((x), (n))
#define XOR3(x, y, z) _mm512_ternarylogic_epi64((x), (y), (z), 0x96) /* x ^ y ^ z */
#define CH(x, y, z) _mm512_ternarylogic_epi64((x), (y), (z), 0xca)   /* x ? y : z */
#define MAJ(x, y, z) _mm512_ternarylogic_epi64((x), (y), (z), 0xe8)  /* majority */
#define MERGE(x, m, t) _mm512_ternarylogic_epi64((x), (m), (t), 0xea) /* (x & m) | t */
#define BCAST(v) _mm512_set1_epi64((long long)(v))

/* One round. The sum for the new e is ordered so that only S1 + (h + K + W + Ch) and d + T1
 * wait for S1(e): h + K + W is ready rounds ahead. */
static inline __attribute__((always_inline)) void round_x8(vec a, vec b, vec c, vec *d, vec e,
                                                           vec f, vec g, vec *h, vec kw)
{
    vec s1 = XOR3(ROR(e, 14), ROR(e, 18), ROR(e, 41));
    vec s0 = XOR3(ROR(a, 28), ROR(a, 34), ROR(a, 39));
    vec t1 = ADD(ADD(ADD(*h, kw), CH(e, f, g)), s1);
    *d = ADD(*d, t1);
    *h = ADD(t1, ADD(s0, MAJ(a, b, c)));
}

/* W[t] for t >= 16 in a ring of 16: w[t & 15] += sigma0(w[t-15]) + w[t-7] + sigma1(w[t-2]). */
static inline __attribute__((always_inline)) vec next_w_x8(vec w[16], unsigned t)
{
    vec w15 = w[(t + 1) & 15], w2 = w[(t + 14) & 15];
    vec s0 = XOR3(ROR(w15, 1), ROR(w15, 8), _mm512_srli_epi64(w15, 7));
    vec s1 = XOR3(ROR(w2, 19), ROR(w2, 61), _mm512_srli_epi64(w2, 6));
    w[t & 15] = ADD(ADD(w[t & 15], s0), ADD(w[(t + 9) & 15], s1));
    return w[t & 15];
}

/* Sixteen rounds from round r; KW(t) is K[t] + W[t] for t = r..r+15. */
#define ROUNDS16(r, KW)                                                                      \
    do {                                                                                     \
        round_x8(a, b, c, &d, e, f, g, &h, KW((r) + 0));                                     \
        round_x8(h, a, b, &c, d, e, f, &g, KW((r) + 1));                                     \
        round_x8(g, h, a, &b, c, d, e, &f, KW((r) + 2));                                     \
        round_x8(f, g, h, &a, b, c, d, &e, KW((r) + 3));                                     \
        round_x8(e, f, g, &h, a, b, c, &d, KW((r) + 4));                                     \
        round_x8(d, e, f, &g, h, a, b, &c, KW((r) + 5));                                     \
        round_x8(c, d, e, &f, g, h, a, &b, KW((r) + 6));                                     \
        round_x8(b, c, d, &e, f, g, h, &a, KW((r) + 7));                                     \
        round_x8(a, b, c, &d, e, f, g, &h, KW((r) + 8));                                     \
        round_x8(h, a, b, &c, d, e, f, &g, KW((r) + 9));                                     \
        round_x8(g, h, a, &b, c, d, e, &f, KW((r) + 10));                                    \
        round_x8(f, g, h, &a, b, c, d, &e, KW((r) + 11));                                    \
        round_x8(e, f, g, &h, a, b, c, &d, KW((r) + 12));                                    \
        round_x8(d, e, f, &g, h, a, b, &c, KW((r) + 13));                                    \
        round_x8(c, d, e, &f, g, h, a, &b, KW((r) + 14));                                    \
        round_x8(b, c, d, &e, f, g, h, &a, KW((r) + 15));                                    \
    } while (0)

#define KW_LOADED(t) ADD(w[t], BCAST(K[t]))
#define KW_NEXT(t) ADD(next_w_x8(w, t), BCAST(K[t]))
#define KW_CONST(t) BCAST(kw[t])

/* One compression of eight blocks, given as 16 transposed big-endian words. */
static void compress_x8(vec s[8], const vec m[16])
{
    vec a = s[0], b = s[1], c = s[2], d = s[3], e = s[4], f = s[5], g = s[6], h = s[7];
    vec w[16];
    memcpy(w, m, sizeof w);
    ROUNDS16(0, KW_LOADED);
    ROUNDS16(16, KW_NEXT);
    ROUNDS16(32, KW_NEXT);
    ROUNDS16(48, KW_NEXT);
    ROUNDS16(64, KW_NEXT);
    s[0] = ADD(s[0], a);
    s[1] = ADD(s[1], b);
    s[2] = ADD(s[2], c);
    s[3] = ADD(s[3], d);
    s[4] = ADD(s[4], e);
    s[5] = ADD(s[5], f);
    s[6] = ADD(s[6], g);
    s[7] = ADD(s[7], h);
}

/* One compression of a block that is the same in every lane, from its K + W. */
static void compress_const_x8(vec s[8], const uint64_t kw[80])
{
    vec a = s[0], b = s[1], c = s[2], d = s[3], e = s[4], f = s[5], g = s[6], h = s[7];
    ROUNDS16(0, KW_CONST);
    ROUNDS16(16, KW_CONST);
    ROUNDS16(32, KW_CONST);
    ROUNDS16(48, KW_CONST);
    ROUNDS16(64, KW_CONST);
    s[0] = ADD(s[0], a);
    s[1] = ADD(s[1], b);
    s[2] = ADD(s[2], c);
    s[3] = ADD(s[3], d);
    s[4] = ADD(s[4], e);
    s[5] = ADD(s[5], f);
    s[6] = ADD(s[6], g);
    s[7] = ADD(s[7], h);
}

/* Transposes an 8x8 matrix of 64-bit words: r[i] word j becomes r[j] word i. */
static inline __attribute__((always_inline)) void transpose_x8(vec r[8])
{
    const vec even = _mm512_setr_epi64(0, 1, 8, 9, 4, 5, 12, 13);
    const vec odd = _mm512_setr_epi64(2, 3, 10, 11, 6, 7, 14, 15);
    /* a: pairs of rows interleaved, [r0.0 r1.0 r0.2 r1.2 ...] and [r0.1 r1.1 r0.3 r1.3 ...] */
    vec a0 = _mm512_unpacklo_epi64(r[0], r[1]), a1 = _mm512_unpackhi_epi64(r[0], r[1]);
    vec a2 = _mm512_unpacklo_epi64(r[2], r[3]), a3 = _mm512_unpackhi_epi64(r[2], r[3]);
    vec a4 = _mm512_unpacklo_epi64(r[4], r[5]), a5 = _mm512_unpackhi_epi64(r[4], r[5]);
    vec a6 = _mm512_unpacklo_epi64(r[6], r[7]), a7 = _mm512_unpackhi_epi64(r[6], r[7]);
    /* b: words j and j+4 of rows 0..3 (b0..b3) or 4..7 (b4..b7); j = 0, 2, 1, 3 */
    vec b0 = _mm512_permutex2var_epi64(a0, even, a2), b1 = _mm512_permutex2var_epi64(a0, odd, a2);
    vec b2 = _mm512_permutex2var_epi64(a1, even, a3), b3 = _mm512_permutex2var_epi64(a1, odd, a3);
    vec b4 = _mm512_permutex2var_epi64(a4, even, a6), b5 = _mm512_permutex2var_epi64(a4, odd, a6);
    vec b6 = _mm512_permutex2var_epi64(a5, even, a7), b7 = _mm512_permutex2var_epi64(a5, odd, a7);
    r[0] = _mm512_shuffle_i64x2(b0, b4, 0x44);
    r[4] = _mm512_shuffle_i64x2(b0, b4, 0xee);
    r[2] = _mm512_shuffle_i64x2(b1, b5, 0x44);
    r[6] = _mm512_shuffle_i64x2(b1, b5, 0xee);
    r[1] = _mm512_shuffle_i64x2(b2, b6, 0x44);
    r[5] = _mm512_shuffle_i64x2(b2, b6, 0xee);
    r[3] = _mm512_shuffle_i64x2(b3, b7, 0x44);
    r[7] = _mm512_shuffle_i64x2(b3, b7, 0xee);
}

static inline vec bswap64_x8(vec x)
{
    const vec idx = _mm512_broadcast_i32x4(
        _mm_setr_epi8(7, 6, 5, 4, 3, 2, 1, 0, 15, 14, 13, 12, 11, 10, 9, 8));
    return _mm512_shuffle_epi8(x, idx);
}

/* Block words 0..15 of the eight blocks at p[0..7], transposed and as big-endian words. */
static inline __attribute__((always_inline)) void load_x8(vec m[16], const uint8_t *const p[8])
{
    for (unsigned half = 0; half < 2; half++) {
        vec *r = m + 8 * half;
        for (unsigned l = 0; l < LANES; l++)
            r[l] = _mm512_loadu_si512((const void *)(p[l] + 64 * half));
        transpose_x8(r);
        for (unsigned j = 0; j < 8; j++)
            r[j] = bswap64_x8(r[j]);
    }
}

void hbs_sha512_many_avx512(uint8_t *out, const hbs_sha512_ctx *prefix, const uint8_t *in,
                            size_t inlen, size_t count)
{
    const size_t full = inlen / BLOCK, rem = inlen % BLOCK;
    /* The final block holds the message tail if there is one; a block of padding alone
     * follows it if the tail leaves no room for 0x80 and the 16-byte length, or is the
     * final block if there is no tail. */
    const int has_const = rem == 0 || rem + 17 > BLOCK;
    const size_t batch_bytes = count * inlen;
    hbs_sha512_ctx start;
    uint8_t pad[2 * BLOCK], maskb[BLOCK];
    uint64_t mask_w[16], tmpl_w[16], kw[80];
    uint8_t copy[LANES][BLOCK];
    vec m[16], s[8];
    uint64_t total;
    size_t taillen;

    if (prefix)
        start = *prefix;
    else
        hbs_sha512_init(&start);
    total = start.bytes + inlen;

    memset(pad, 0, sizeof pad);
    memset(maskb, 0, sizeof maskb);
    memset(maskb, 0xff, rem);
    pad[rem] = 0x80;
    taillen = rem + 17 <= BLOCK ? BLOCK : 2 * BLOCK;
    for (unsigned i = 0; i < 8; i++) {
        pad[taillen - 16 + i] = (uint8_t)((total >> 61) >> (56 - 8 * i));
        pad[taillen - 8 + i] = (uint8_t)((total << 3) >> (56 - 8 * i));
    }
    for (unsigned j = 0; j < 16; j++) {
        mask_w[j] = load_be64(maskb + 8 * j);
        tmpl_w[j] = load_be64(pad + 8 * j);
    }
    if (has_const)
        schedule_with_k(kw, pad + (rem ? BLOCK : 0));
    memset(copy, 0, sizeof copy);

    for (size_t first = 0; first < count; first += LANES) {
        const size_t active = count - first < LANES ? count - first : LANES;
        size_t msg_off[LANES];
        const uint8_t *p[LANES];

        for (unsigned l = 0; l < LANES; l++)
            msg_off[l] = (first + (l < active ? l : active - 1)) * inlen;
        for (unsigned j = 0; j < 8; j++)
            s[j] = BCAST(start.h[j]);

        for (size_t blk = 0; blk < full; blk++) {
            for (unsigned l = 0; l < LANES; l++)
                p[l] = in + msg_off[l] + blk * BLOCK;
            load_x8(m, p);
            compress_x8(s, m);
        }
        if (rem) {
            for (unsigned l = 0; l < LANES; l++) {
                const size_t off = msg_off[l] + full * BLOCK;
                if (off + BLOCK <= batch_bytes) {
                    p[l] = in + off;
                } else {
                    memcpy(copy[l], in + off, rem);
                    p[l] = copy[l];
                }
            }
            load_x8(m, p);
            for (unsigned j = 0; j < 16; j++)
                m[j] = MERGE(m[j], BCAST(mask_w[j]), BCAST(tmpl_w[j]));
            compress_x8(s, m);
        }
        if (has_const)
            compress_const_x8(s, kw);

        transpose_x8(s);
        for (unsigned l = 0; l < active; l++)
            _mm512_storeu_si512((void *)(out + (first + l) * 64), bswap64_x8(s[l]));
    }

    hbs_memzero(&start, sizeof start);
    hbs_memzero(copy, sizeof copy);
    hbs_memzero(m, sizeof m);
    hbs_memzero(s, sizeof s);
}
