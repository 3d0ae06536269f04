/* SHA-512 of eight messages at once with AVX-512 (FIPS 180-4).
 *
 * Message i of a group of eight is lane i of a __m512i: working variable a of all eight
 * messages sits in one register, word t of the schedule in another, so a round is the scalar
 * round written with vector operations. vprorq does the rotations, vpternlogq the three-way
 * XORs of the Sigma and sigma functions, Ch and Maj in one instruction each. The 80 rounds
 * and the schedule are unrolled.
 *
 * All messages of a batch have the same length, so their block structure and padding are the
 * same. Once per batch: the final block's padding as a byte mask and a template (the 0x80 and
 * the length, as big-endian words), and, where the padding spills into a block of its own
 * (or the message ends on a block boundary), that block's whole schedule with the round
 * constants added in, since it is the same for every message. Per group: whole blocks are
 * loaded straight from the messages and transposed in registers; the final block is loaded
 * the same way from the message tail, then masked and merged with the template in one
 * vpternlogq per word. A whole 128-byte load from a tail would read past the end of the
 * batch for the last message or two: those few tails are copied to a buffer first.
 *
 * A last group of two to four messages runs on four lanes of a __m256i (the same code with
 * AVX-512VL), which costs about two thirds of an eight-lane group where 512-bit operations
 * take two passes through 256-bit units (Zen 4); a single message left over goes to the
 * portable code, which is faster for one. Idle lanes repeat the group's last message and
 * their output is dropped.
 * Nothing branches on or indexes by message data. */
#include <immintrin.h>
#include <string.h>

#include "hbs/hbs.h"
#include "hash/x86/sha512_plan.h"
#include "hash/x86/x86.h"

#define BLOCK HBS_SHA512_BLOCK

/* Sixteen rounds from round r with round function RND; KW(t) is K[t] + W[t]. */
#define ROUNDS16(RND, r, KW)                                                                 \
    do {                                                                                     \
        RND(a, b, c, &d, e, f, g, &h, KW((r) + 0));                                          \
        RND(h, a, b, &c, d, e, f, &g, KW((r) + 1));                                          \
        RND(g, h, a, &b, c, d, e, &f, KW((r) + 2));                                          \
        RND(f, g, h, &a, b, c, d, &e, KW((r) + 3));                                          \
        RND(e, f, g, &h, a, b, c, &d, KW((r) + 4));                                          \
        RND(d, e, f, &g, h, a, b, &c, KW((r) + 5));                                          \
        RND(c, d, e, &f, g, h, a, &b, KW((r) + 6));                                          \
        RND(b, c, d, &e, f, g, h, &a, KW((r) + 7));                                          \
        RND(a, b, c, &d, e, f, g, &h, KW((r) + 8));                                          \
        RND(h, a, b, &c, d, e, f, &g, KW((r) + 9));                                          \
        RND(g, h, a, &b, c, d, e, &f, KW((r) + 10));                                         \
        RND(f, g, h, &a, b, c, d, &e, KW((r) + 11));                                         \
        RND(e, f, g, &h, a, b, c, &d, KW((r) + 12));                                         \
        RND(d, e, f, &g, h, a, b, &c, KW((r) + 13));                                         \
        RND(c, d, e, &f, g, h, a, &b, KW((r) + 14));                                         \
        RND(b, c, d, &e, f, g, h, &a, KW((r) + 15));                                         \
    } while (0)

/* vpternlogq truth tables, operands (x, y, z) */
#define TL_XOR3 0x96  /* x ^ y ^ z */
#define TL_CH 0xca    /* x ? y : z */
#define TL_MAJ 0xe8   /* majority */
#define TL_MERGE 0xea /* (x & y) | z */

/* ---- eight lanes (ZMM) ---------------------------------------------------------------------- */

typedef __m512i v8;

#define ADD8(x, y) _mm512_add_epi64((x), (y))
#define ROR8(x, n) _mm512_ror_epi64((x), (n))
#define TL8(x, y, z, f) _mm512_ternarylogic_epi64((x), (y), (z), (f))
#define BCAST8(v) _mm512_set1_epi64((long long)(v))

/* One round. The sum for the new e is ordered so that only its last two additions wait for
 * Sigma1(e): h + K + W is ready rounds ahead. */
static inline __attribute__((always_inline)) void round_x8(v8 a, v8 b, v8 c, v8 *d, v8 e, v8 f,
                                                           v8 g, v8 *h, v8 kw)
{
    v8 t1 = ADD8(ADD8(*h, kw), TL8(e, f, g, TL_CH));
    t1 = ADD8(t1, TL8(ROR8(e, 14), ROR8(e, 18), ROR8(e, 41), TL_XOR3));
    *d = ADD8(*d, t1);
    *h = ADD8(ADD8(t1, TL8(a, b, c, TL_MAJ)),
              TL8(ROR8(a, 28), ROR8(a, 34), ROR8(a, 39), TL_XOR3));
}

/* W[t], t >= 16, in a ring of 16: w[t & 15] += sigma0(w[t-15]) + w[t-7] + sigma1(w[t-2]). */
static inline __attribute__((always_inline)) v8 next_w_x8(v8 w[16], unsigned t)
{
    v8 w15 = w[(t + 1) & 15], w2 = w[(t + 14) & 15];
    v8 s0 = TL8(ROR8(w15, 1), ROR8(w15, 8), _mm512_srli_epi64(w15, 7), TL_XOR3);
    v8 s1 = TL8(ROR8(w2, 19), ROR8(w2, 61), _mm512_srli_epi64(w2, 6), TL_XOR3);
    w[t & 15] = ADD8(ADD8(w[t & 15], s0), ADD8(w[(t + 9) & 15], s1));
    return w[t & 15];
}

#define KW8_LOADED(t) ADD8(w[t], BCAST8(k[t]))
#define KW8_NEXT(t) ADD8(next_w_x8(w, t), BCAST8(k[t]))
#define KW8_CONST(t) BCAST8(kw[t])

/* One compression of eight blocks, given as 16 transposed big-endian words. */
static void compress_x8(v8 s[8], const v8 m[16])
{
    v8 a = s[0], b = s[1], c = s[2], d = s[3], e = s[4], f = s[5], g = s[6], h = s[7];
    v8 w[16];
    /* Hidden from the optimizer, so that the round constants stay in memory and are added
     * with an embedded broadcast, not built in a general register and moved over. */
    const uint64_t *k = hbs_sha512_K;
    __asm__("" : "+r"(k));
    memcpy(w, m, sizeof w);
    ROUNDS16(round_x8, 0, KW8_LOADED);
    ROUNDS16(round_x8, 16, KW8_NEXT);
    ROUNDS16(round_x8, 32, KW8_NEXT);
    ROUNDS16(round_x8, 48, KW8_NEXT);
    ROUNDS16(round_x8, 64, KW8_NEXT);
    s[0] = ADD8(s[0], a);
    s[1] = ADD8(s[1], b);
    s[2] = ADD8(s[2], c);
    s[3] = ADD8(s[3], d);
    s[4] = ADD8(s[4], e);
    s[5] = ADD8(s[5], f);
    s[6] = ADD8(s[6], g);
    s[7] = ADD8(s[7], h);
}

/* One compression of a block that is the same in every lane, from its K + W. */
static void compress_const_x8(v8 s[8], const uint64_t kw[80])
{
    v8 a = s[0], b = s[1], c = s[2], d = s[3], e = s[4], f = s[5], g = s[6], h = s[7];
    ROUNDS16(round_x8, 0, KW8_CONST);
    ROUNDS16(round_x8, 16, KW8_CONST);
    ROUNDS16(round_x8, 32, KW8_CONST);
    ROUNDS16(round_x8, 48, KW8_CONST);
    ROUNDS16(round_x8, 64, KW8_CONST);
    s[0] = ADD8(s[0], a);
    s[1] = ADD8(s[1], b);
    s[2] = ADD8(s[2], c);
    s[3] = ADD8(s[3], d);
    s[4] = ADD8(s[4], e);
    s[5] = ADD8(s[5], f);
    s[6] = ADD8(s[6], g);
    s[7] = ADD8(s[7], h);
}

/* Transposes an 8x8 matrix of 64-bit words: word j of r[i] becomes word i of r[j]. */
static inline __attribute__((always_inline)) void transpose_x8(v8 r[8])
{
    const v8 lo = _mm512_setr_epi64(0, 1, 8, 9, 4, 5, 12, 13);
    const v8 hi = _mm512_setr_epi64(2, 3, 10, 11, 6, 7, 14, 15);
    /* pairs of rows interleaved: a0 = r0.0 r1.0 r0.2 r1.2 ..., a1 = r0.1 r1.1 r0.3 r1.3 ... */
    v8 a0 = _mm512_unpacklo_epi64(r[0], r[1]), a1 = _mm512_unpackhi_epi64(r[0], r[1]);
    v8 a2 = _mm512_unpacklo_epi64(r[2], r[3]), a3 = _mm512_unpackhi_epi64(r[2], r[3]);
    v8 a4 = _mm512_unpacklo_epi64(r[4], r[5]), a5 = _mm512_unpackhi_epi64(r[4], r[5]);
    v8 a6 = _mm512_unpacklo_epi64(r[6], r[7]), a7 = _mm512_unpackhi_epi64(r[6], r[7]);
    /* words j and j + 4 of rows 0..3 (b0..b3) or rows 4..7 (b4..b7), for j = 0, 2, 1, 3 */
    v8 b0 = _mm512_permutex2var_epi64(a0, lo, a2), b1 = _mm512_permutex2var_epi64(a0, hi, a2);
    v8 b2 = _mm512_permutex2var_epi64(a1, lo, a3), b3 = _mm512_permutex2var_epi64(a1, hi, a3);
    v8 b4 = _mm512_permutex2var_epi64(a4, lo, a6), b5 = _mm512_permutex2var_epi64(a4, hi, a6);
    v8 b6 = _mm512_permutex2var_epi64(a5, lo, a7), b7 = _mm512_permutex2var_epi64(a5, hi, a7);
    r[0] = _mm512_shuffle_i64x2(b0, b4, 0x44);
    r[4] = _mm512_shuffle_i64x2(b0, b4, 0xee);
    r[2] = _mm512_shuffle_i64x2(b1, b5, 0x44);
    r[6] = _mm512_shuffle_i64x2(b1, b5, 0xee);
    r[1] = _mm512_shuffle_i64x2(b2, b6, 0x44);
    r[5] = _mm512_shuffle_i64x2(b2, b6, 0xee);
    r[3] = _mm512_shuffle_i64x2(b3, b7, 0x44);
    r[7] = _mm512_shuffle_i64x2(b3, b7, 0xee);
}

static inline v8 bswap_x8(v8 x)
{
    const v8 idx = _mm512_broadcast_i32x4(
        _mm_setr_epi8(7, 6, 5, 4, 3, 2, 1, 0, 15, 14, 13, 12, 11, 10, 9, 8));
    return _mm512_shuffle_epi8(x, idx);
}

/* Words 0..15 of the eight blocks at p[0..7], transposed, as big-endian words. */
static inline __attribute__((always_inline)) void load_x8(v8 m[16], const uint8_t *const p[8])
{
#pragma GCC unroll 16
    for (unsigned half = 0; half < 2; half++) {
        v8 *r = m + 8 * half;
#pragma GCC unroll 16
        for (unsigned l = 0; l < 8; l++)
            r[l] = _mm512_loadu_si512((const void *)(p[l] + 64 * half));
        transpose_x8(r);
#pragma GCC unroll 16
        for (unsigned j = 0; j < 8; j++)
            r[j] = bswap_x8(r[j]);
    }
}

/* Digests of messages first .. first+active-1 (active <= 8). m and copy are the caller's
 * scratch, wiped by it. */
static void group_x8(uint8_t *out, const hbs_sha512_plan *pl, const uint8_t *in, size_t first,
                     size_t active, v8 m[16], uint8_t (*copy)[BLOCK], int *copied)
{
    const uint8_t *p[8];
    v8 s[8];
#pragma GCC unroll 16
    for (unsigned j = 0; j < 8; j++)
        s[j] = BCAST8(pl->h[j]);
    for (size_t blk = 0; blk < pl->full; blk++) {
        hbs_sha512_block_pointers(p, 8, pl, in, first, active, blk, copy, copied);
        load_x8(m, p);
        compress_x8(s, m);
    }
    if (pl->rem) {
        hbs_sha512_block_pointers(p, 8, pl, in, first, active, pl->full, copy, copied);
        load_x8(m, p);
#pragma GCC unroll 16
        for (unsigned j = 0; j < 16; j++)
            m[j] = TL8(m[j], BCAST8(pl->mask[j]), BCAST8(pl->tmpl[j]), TL_MERGE);
        compress_x8(s, m);
    }
    if (pl->has_const)
        compress_const_x8(s, pl->kw);
    transpose_x8(s);
    for (unsigned l = 0; l < active; l++)
        _mm512_storeu_si512((void *)(out + (first + l) * 64), bswap_x8(s[l]));
}

/* ---- four lanes (YMM, AVX-512VL) ------------------------------------------------------------ */

typedef __m256i v4;

#define ADD4(x, y) _mm256_add_epi64((x), (y))
#define ROR4(x, n) _mm256_ror_epi64((x), (n))
#define TL4(x, y, z, f) _mm256_ternarylogic_epi64((x), (y), (z), (f))
#define BCAST4(v) _mm256_set1_epi64x((long long)(v))

static inline __attribute__((always_inline)) void round_x4(v4 a, v4 b, v4 c, v4 *d, v4 e, v4 f,
                                                           v4 g, v4 *h, v4 kw)
{
    v4 s1 = TL4(ROR4(e, 14), ROR4(e, 18), ROR4(e, 41), TL_XOR3);
    v4 s0 = TL4(ROR4(a, 28), ROR4(a, 34), ROR4(a, 39), TL_XOR3);
    v4 t1 = ADD4(ADD4(ADD4(*h, kw), TL4(e, f, g, TL_CH)), s1);
    *d = ADD4(*d, t1);
    *h = ADD4(t1, ADD4(s0, TL4(a, b, c, TL_MAJ)));
}

static inline __attribute__((always_inline)) v4 next_w_x4(v4 w[16], unsigned t)
{
    v4 w15 = w[(t + 1) & 15], w2 = w[(t + 14) & 15];
    v4 s0 = TL4(ROR4(w15, 1), ROR4(w15, 8), _mm256_srli_epi64(w15, 7), TL_XOR3);
    v4 s1 = TL4(ROR4(w2, 19), ROR4(w2, 61), _mm256_srli_epi64(w2, 6), TL_XOR3);
    w[t & 15] = ADD4(ADD4(w[t & 15], s0), ADD4(w[(t + 9) & 15], s1));
    return w[t & 15];
}

#define KW4_LOADED(t) ADD4(w[t], BCAST4(k[t]))
#define KW4_NEXT(t) ADD4(next_w_x4(w, t), BCAST4(k[t]))
#define KW4_CONST(t) BCAST4(kw[t])

static void compress_x4(v4 s[8], const v4 m[16])
{
    v4 a = s[0], b = s[1], c = s[2], d = s[3], e = s[4], f = s[5], g = s[6], h = s[7];
    v4 w[16];
    const uint64_t *k = hbs_sha512_K;
    __asm__("" : "+r"(k));
    memcpy(w, m, sizeof w);
    ROUNDS16(round_x4, 0, KW4_LOADED);
    ROUNDS16(round_x4, 16, KW4_NEXT);
    ROUNDS16(round_x4, 32, KW4_NEXT);
    ROUNDS16(round_x4, 48, KW4_NEXT);
    ROUNDS16(round_x4, 64, KW4_NEXT);
    s[0] = ADD4(s[0], a);
    s[1] = ADD4(s[1], b);
    s[2] = ADD4(s[2], c);
    s[3] = ADD4(s[3], d);
    s[4] = ADD4(s[4], e);
    s[5] = ADD4(s[5], f);
    s[6] = ADD4(s[6], g);
    s[7] = ADD4(s[7], h);
}

static void compress_const_x4(v4 s[8], const uint64_t kw[80])
{
    v4 a = s[0], b = s[1], c = s[2], d = s[3], e = s[4], f = s[5], g = s[6], h = s[7];
    ROUNDS16(round_x4, 0, KW4_CONST);
    ROUNDS16(round_x4, 16, KW4_CONST);
    ROUNDS16(round_x4, 32, KW4_CONST);
    ROUNDS16(round_x4, 48, KW4_CONST);
    ROUNDS16(round_x4, 64, KW4_CONST);
    s[0] = ADD4(s[0], a);
    s[1] = ADD4(s[1], b);
    s[2] = ADD4(s[2], c);
    s[3] = ADD4(s[3], d);
    s[4] = ADD4(s[4], e);
    s[5] = ADD4(s[5], f);
    s[6] = ADD4(s[6], g);
    s[7] = ADD4(s[7], h);
}

/* Transposes a 4x4 matrix of 64-bit words: word j of r[i] becomes word i of r[j]. */
static inline __attribute__((always_inline)) void transpose_x4(v4 r[4])
{
    v4 t0 = _mm256_unpacklo_epi64(r[0], r[1]); /* r0.0 r1.0 r0.2 r1.2 */
    v4 t1 = _mm256_unpackhi_epi64(r[0], r[1]); /* r0.1 r1.1 r0.3 r1.3 */
    v4 t2 = _mm256_unpacklo_epi64(r[2], r[3]); /* r2.0 r3.0 r2.2 r3.2 */
    v4 t3 = _mm256_unpackhi_epi64(r[2], r[3]); /* r2.1 r3.1 r2.3 r3.3 */
    r[0] = _mm256_permute2x128_si256(t0, t2, 0x20);
    r[1] = _mm256_permute2x128_si256(t1, t3, 0x20);
    r[2] = _mm256_permute2x128_si256(t0, t2, 0x31);
    r[3] = _mm256_permute2x128_si256(t1, t3, 0x31);
}

static inline v4 bswap_x4(v4 x)
{
    const v4 idx = _mm256_setr_epi8(7, 6, 5, 4, 3, 2, 1, 0, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6,
                                    5, 4, 3, 2, 1, 0, 15, 14, 13, 12, 11, 10, 9, 8);
    return _mm256_shuffle_epi8(x, idx);
}

static inline __attribute__((always_inline)) void load_x4(v4 m[16], const uint8_t *const p[4])
{
#pragma GCC unroll 16
    for (unsigned q = 0; q < 4; q++) {
        v4 *r = m + 4 * q;
#pragma GCC unroll 16
        for (unsigned l = 0; l < 4; l++)
            r[l] = _mm256_loadu_si256((const void *)(p[l] + 32 * q));
        transpose_x4(r);
#pragma GCC unroll 16
        for (unsigned j = 0; j < 4; j++)
            r[j] = bswap_x4(r[j]);
    }
}

/* As group_x8, for active <= 4. */
static void group_x4(uint8_t *out, const hbs_sha512_plan *pl, const uint8_t *in, size_t first,
                     size_t active, v4 m[16], uint8_t (*copy)[BLOCK], int *copied)
{
    const uint8_t *p[4];
    v4 s[8];
#pragma GCC unroll 16
    for (unsigned j = 0; j < 8; j++)
        s[j] = BCAST4(pl->h[j]);
    for (size_t blk = 0; blk < pl->full; blk++) {
        hbs_sha512_block_pointers(p, 4, pl, in, first, active, blk, copy, copied);
        load_x4(m, p);
        compress_x4(s, m);
    }
    if (pl->rem) {
        hbs_sha512_block_pointers(p, 4, pl, in, first, active, pl->full, copy, copied);
        load_x4(m, p);
#pragma GCC unroll 16
        for (unsigned j = 0; j < 16; j++)
            m[j] = TL4(m[j], BCAST4(pl->mask[j]), BCAST4(pl->tmpl[j]), TL_MERGE);
        compress_x4(s, m);
    }
    if (pl->has_const)
        compress_const_x4(s, pl->kw);
    transpose_x4(s);
    transpose_x4(s + 4);
    for (unsigned l = 0; l < active; l++) {
        uint8_t *o = out + (first + l) * 64;
        _mm256_storeu_si256((void *)o, bswap_x4(s[l]));
        _mm256_storeu_si256((void *)(o + 32), bswap_x4(s[4 + l]));
    }
}

/* ---- the batch ------------------------------------------------------------------------------- */

void hbs_sha512_many_avx512(uint8_t *out, const hbs_sha512_ctx *prefix, const uint8_t *in,
                            size_t inlen, size_t count)
{
    const size_t groups = count / 8, left = count % 8;
    hbs_sha512_plan pl;
    uint8_t copy[8][BLOCK];
    v8 m8[16];
    v4 m4[16];
    int copied = 0, used8 = 0, used4 = 0;

    if (count == 0)
        return;
    if (count == 1) {
        hbs_sha512_many_portable(out, prefix, in, inlen, count);
        return;
    }
    hbs_sha512_plan_batch(&pl, prefix, inlen, count);
    for (size_t g = 0; g < groups; g++) {
        group_x8(out, &pl, in, 8 * g, 8, m8, copy, &copied);
        used8 = 1;
    }
    if (left >= 5) {
        group_x8(out, &pl, in, 8 * groups, left, m8, copy, &copied);
        used8 = 1;
    } else if (left >= 2) {
        group_x4(out, &pl, in, 8 * groups, left, m4, copy, &copied);
        used4 = 1;
    } else if (left == 1) {
        const size_t last = count - 1;
        hbs_sha512_many_portable(out + 64 * last, prefix, inlen ? in + last * inlen : in, inlen,
                                 1);
    }

    hbs_memzero(pl.h, sizeof pl.h);
    if (copied)
        hbs_memzero(copy, sizeof copy);
    if (used8)
        hbs_memzero(m8, sizeof m8);
    if (used4)
        hbs_memzero(m4, sizeof m4);
}
