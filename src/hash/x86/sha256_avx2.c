/* SHA-256 (FIPS 180-4) for AVX2: 8 messages at once, message l in 32-bit lane l of each
 * YMM register.
 *
 * A batch is cut into groups of 8 messages; a last, short group repeats its last message
 * in the idle lanes and stores only the valid digests. All messages have the same length,
 * so the tail (last partial block, 0x80, zeros, bit length) differs between lanes only in
 * the message bytes: per lane it is assembled from 16-byte chunks (whole chunks loaded
 * directly, the one chunk that ends the message taken from a 16-byte load ending at the
 * message's last byte and moved into place by one byte shuffle), OR'ed with padding made
 * once per batch. A final block that holds no message bytes at all (inlen a multiple of
 * 64, or the second block of a 56..63-byte tail) is the same in every lane: its schedule
 * plus round constants is computed once per batch and broadcast.
 *
 * AVX2 has no rotate: each rotation is two shifts and an OR folded into the XORs of the
 * Sigma functions. Maj(a, b, c) = b ^ ((a ^ b) & (b ^ c)) reuses a ^ b as the next round's
 * b ^ c. The 64 rounds and the schedule are unrolled, the working variables renamed.
 *
 * Nothing branches on or indexes memory by message or state data; branches depend only on
 * inlen and count. */
#include <immintrin.h>
#include <string.h>

#include "hbs/hbs.h"
#include "hash/x86/sha256_lanes.h"
#include "hash/x86/x86.h"

#define LANES 8

/* Hides a table's address from the optimiser, so that round constants are broadcast from
 * memory; a compiler may otherwise rebuild each one from an immediate in a general-purpose
 * register, a slow path on AMD cores. */
#define OPAQUE(p) __asm__("" : "+r"(p))

/* ---- the 8-lane compression --------------------------------------------------------- */

#define ADD(x, y) _mm256_add_epi32((x), (y))
#define XOR(x, y) _mm256_xor_si256((x), (y))
#define SHR(x, n) _mm256_srli_epi32((x), (n))
#define SHL(x, n) _mm256_slli_epi32((x), (n))
/* rotr(x, a) ^ rotr(x, b) ^ rotr(x, c), the right and left halves gathered */
#define ROT3(x, a, b, c)                                                                     \
    XOR(XOR(XOR(SHR(x, a), SHR(x, b)), SHR(x, c)),                                           \
        XOR(XOR(SHL(x, 32 - (a)), SHL(x, 32 - (b))), SHL(x, 32 - (c))))
#define BSIG0(x) ROT3(x, 2, 13, 22)
#define BSIG1(x) ROT3(x, 6, 11, 25)
#define SSIG0(x)                                                                             \
    XOR(XOR(XOR(SHR(x, 7), SHR(x, 18)), SHR(x, 3)), XOR(SHL(x, 25), SHL(x, 14)))
#define SSIG1(x)                                                                             \
    XOR(XOR(XOR(SHR(x, 17), SHR(x, 19)), SHR(x, 10)), XOR(SHL(x, 15), SHL(x, 13)))
#define CH(e, f, g) XOR((g), _mm256_and_si256((e), XOR((f), (g))))

/* One round; the caller renames a..h instead of shifting them, so only d and h change.
 * kw is K[t] + W[t]; bc holds b ^ c on entry and a ^ b on exit. */
#define RND(a, b, c, d, e, f, g, h, kw)                                                      \
    do {                                                                                     \
        __m256i t1_ = ADD(ADD(ADD((h), (kw)), CH((e), (f), (g))), BSIG1(e));                 \
        __m256i ab_ = XOR((a), (b));                                                         \
        __m256i maj_ = XOR((b), _mm256_and_si256(ab_, bc));                                  \
        bc = ab_;                                                                            \
        (d) = ADD((d), t1_);                                                                 \
        (h) = ADD(t1_, ADD(BSIG0(a), maj_));                                                 \
    } while (0)

#define RND8(t, KW)                                                                          \
    do {                                                                                     \
        RND(a, b, c, d, e, f, g, h, KW((t) + 0));                                            \
        RND(h, a, b, c, d, e, f, g, KW((t) + 1));                                            \
        RND(g, h, a, b, c, d, e, f, KW((t) + 2));                                            \
        RND(f, g, h, a, b, c, d, e, KW((t) + 3));                                            \
        RND(e, f, g, h, a, b, c, d, KW((t) + 4));                                            \
        RND(d, e, f, g, h, a, b, c, KW((t) + 5));                                            \
        RND(c, d, e, f, g, h, a, b, KW((t) + 6));                                            \
        RND(b, c, d, e, f, g, h, a, KW((t) + 7));                                            \
    } while (0)

#define RND64(KW)                                                                            \
    do {                                                                                     \
        RND8(0, KW);                                                                         \
        RND8(8, KW);                                                                         \
        RND8(16, KW);                                                                        \
        RND8(24, KW);                                                                        \
        RND8(32, KW);                                                                        \
        RND8(40, KW);                                                                        \
        RND8(48, KW);                                                                        \
        RND8(56, KW);                                                                        \
    } while (0)

/* W[t] for t >= 16 replaces W[t-16] in the ring w[16]. */
static ALWAYS_INLINE __m256i sched(__m256i w[16], unsigned t)
{
    w[t & 15] = ADD(ADD(SSIG1(w[(t - 2) & 15]), w[(t - 7) & 15]),
                    ADD(SSIG0(w[(t - 15) & 15]), w[t & 15]));
    return w[t & 15];
}

#define KW_MSG(t) ADD(_mm256_set1_epi32((int)k[t]), (t) < 16 ? w[(t) & 15] : sched(w, (t)))
#define KW_CONST(t) _mm256_set1_epi32((int)kwc[t])

/* s += compression of the block whose words are w[0..15] (one lane per message); w is used
 * as the schedule ring and left clobbered. */
static void compress8(__m256i s[8], __m256i w[16])
{
    __m256i a = s[0], b = s[1], c = s[2], d = s[3], e = s[4], f = s[5], g = s[6], h = s[7];
    __m256i bc = XOR(b, c);
    const uint32_t *k = hbs_sha256_K;
    OPAQUE(k);
    RND64(KW_MSG);
    s[0] = ADD(s[0], a);
    s[1] = ADD(s[1], b);
    s[2] = ADD(s[2], c);
    s[3] = ADD(s[3], d);
    s[4] = ADD(s[4], e);
    s[5] = ADD(s[5], f);
    s[6] = ADD(s[6], g);
    s[7] = ADD(s[7], h);
}

/* s += compression of a block that is the same in every lane; kwc[t] = K[t] + W[t]. */
static void compress8_const(__m256i s[8], const uint32_t kwc[64])
{
    __m256i a = s[0], b = s[1], c = s[2], d = s[3], e = s[4], f = s[5], g = s[6], h = s[7];
    __m256i bc = XOR(b, c);
    RND64(KW_CONST);
    s[0] = ADD(s[0], a);
    s[1] = ADD(s[1], b);
    s[2] = ADD(s[2], c);
    s[3] = ADD(s[3], d);
    s[4] = ADD(s[4], e);
    s[5] = ADD(s[5], f);
    s[6] = ADD(s[6], g);
    s[7] = ADD(s[7], h);
}

/* ---- moving data between messages and lanes ----------------------------------------- */

static ALWAYS_INLINE __m128i bswap_mask128(void)
{
    return _mm_set_epi8(12, 13, 14, 15, 8, 9, 10, 11, 4, 5, 6, 7, 0, 1, 2, 3);
}

static ALWAYS_INLINE __m256i bswap32x8(__m256i x)
{
    return _mm256_shuffle_epi8(x, _mm256_broadcastsi128_si256(bswap_mask128()));
}

/* r[l][g] holds words 4g..4g+3 of lane l's block (decoded); afterwards w[j] holds word j of
 * every lane. Lanes l and l + 4 share a register, then a 4x4 transpose per 128-bit half. */
static ALWAYS_INLINE void transpose8(__m256i w[16], const __m128i r[LANES][4])
{
    UNROLL(4)
    for (unsigned g = 0; g < 4; g++) {
        __m256i x[4], t[4];
        UNROLL(4)
        for (unsigned l = 0; l < 4; l++)
            x[l] = _mm256_inserti128_si256(_mm256_castsi128_si256(r[l][g]), r[l + 4][g], 1);
        t[0] = _mm256_unpacklo_epi32(x[0], x[1]);
        t[1] = _mm256_unpackhi_epi32(x[0], x[1]);
        t[2] = _mm256_unpacklo_epi32(x[2], x[3]);
        t[3] = _mm256_unpackhi_epi32(x[2], x[3]);
        w[4 * g + 0] = _mm256_unpacklo_epi64(t[0], t[2]);
        w[4 * g + 1] = _mm256_unpackhi_epi64(t[0], t[2]);
        w[4 * g + 2] = _mm256_unpacklo_epi64(t[1], t[3]);
        w[4 * g + 3] = _mm256_unpackhi_epi64(t[1], t[3]);
    }
}

/* Writes the digests of the first nvalid lanes of state s to out (32 bytes each). */
static ALWAYS_INLINE void store_digests8(uint8_t *out, const __m256i s[8], size_t nvalid)
{
    __m256i t[8], u[8], o[8];
    UNROLL(8)
    for (unsigned i = 0; i < 8; i += 2) {
        t[i] = _mm256_unpacklo_epi32(s[i], s[i + 1]);
        t[i + 1] = _mm256_unpackhi_epi32(s[i], s[i + 1]);
    }
    /* u[j] (abcd) and u[4 + j] (efgh), 128-bit half k: message 4k + j */
    UNROLL(2)
    for (unsigned g = 0; g < 2; g++) {
        u[4 * g + 0] = _mm256_unpacklo_epi64(t[4 * g], t[4 * g + 2]);
        u[4 * g + 1] = _mm256_unpackhi_epi64(t[4 * g], t[4 * g + 2]);
        u[4 * g + 2] = _mm256_unpacklo_epi64(t[4 * g + 1], t[4 * g + 3]);
        u[4 * g + 3] = _mm256_unpackhi_epi64(t[4 * g + 1], t[4 * g + 3]);
    }
    UNROLL(4)
    for (unsigned j = 0; j < 4; j++) {
        o[j] = _mm256_permute2x128_si256(u[j], u[4 + j], 0x20);
        o[4 + j] = _mm256_permute2x128_si256(u[j], u[4 + j], 0x31);
    }
    UNROLL(8)
    for (unsigned m = 0; m < LANES; m++)
        if (m < nvalid)
            _mm256_storeu_si256((__m256i *)(void *)(out + 32 * m), bswap32x8(o[m]));
}

/* ---- the batch ------------------------------------------------------------------------ */

typedef struct {
    __m128i pad[4];     /* first tail block, words byte-swapped, message bytes zero */
    __m128i pmask;      /* shuffle placing the partial chunk's message bytes (see below) */
    uint32_t h0[8];     /* starting chaining value */
    uint32_t kwc[64];   /* K + W of the block that is the same in every lane, if any */
    size_t full;        /* whole message blocks */
    size_t rem;         /* message bytes in the first tail block */
    unsigned nwhole;    /* whole 16-byte chunks of message in the first tail block */
    int partial;        /* chunk nwhole holds message bytes and padding */
    int small;          /* inlen < 16: the partial chunk cannot come from a load ending at
                           the message end without reading before the message */
    int tail_const;     /* the first tail block is the same in every lane (rem == 0) */
    int second_const;   /* a second tail block follows, the same in every lane */
} batch_plan;

static void plan_batch(batch_plan *p, const hbs_sha256_ctx *prefix, size_t inlen)
{
    uint8_t tail[2 * 64], pm[16];
    uint64_t bytes = prefix ? prefix->bytes : 0;
    size_t taillen, r;
    memcpy(p->h0, prefix ? prefix->h : IV256, sizeof p->h0);
    p->full = inlen / 64;
    p->rem = inlen % 64;
    p->nwhole = (unsigned)(p->rem / 16);
    r = p->rem % 16;
    p->partial = r != 0;
    p->small = inlen < 16;
    taillen = p->rem + 9 <= 64 ? 64 : 128;
    memset(tail, 0, sizeof tail);
    tail[p->rem] = 0x80;
    store_be64(tail + taillen - 8, (bytes + inlen) << 3);
    for (unsigned c = 0; c < 4; c++)
        p->pad[c] = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(const void *)(tail + 16 * c)),
                                     bswap_mask128());
    /* Byte j of the byte-swapped partial chunk is byte j ^ 3 of the message chunk, which is
     * byte (j ^ 3) + 16 - r of the 16 bytes ending at the message end, if j ^ 3 < r. */
    for (unsigned j = 0; j < 16; j++)
        pm[j] = (j ^ 3u) < r ? (uint8_t)((j ^ 3u) + 16 - r) : 0x80;
    p->pmask = _mm_loadu_si128((const __m128i *)(const void *)pm);
    p->tail_const = p->rem == 0;
    p->second_const = taillen == 128;
    if (p->tail_const)
        sha256_const_schedule(p->kwc, tail);
    else if (p->second_const)
        sha256_const_schedule(p->kwc, tail + 64);
    else
        memset(p->kwc, 0, sizeof p->kwc);
}

/* Chunks of the first tail block of the message at m (byte-swapped words). */
static ALWAYS_INLINE void load_tail(__m128i r[4], const batch_plan *p, const uint8_t *m)
{
    const uint8_t *t = m + 64 * p->full;
    UNROLL(4)
    for (unsigned c = 0; c < 4; c++) {
        if (c < p->nwhole) {
            r[c] = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(const void *)(t + 16 * c)),
                                    bswap_mask128());
        } else if (c == p->nwhole && p->partial) {
            __m128i x;
            if (!p->small) {
                x = _mm_loadu_si128((const __m128i *)(const void *)(t + p->rem - 16));
            } else {
                /* inlen < 16: copy the message, right-aligned as the load above would */
                uint8_t b[16] = {0};
                for (size_t i = 0; i < p->rem; i++)
                    b[16 - p->rem + i] = t[i];
                x = _mm_loadu_si128((const __m128i *)(const void *)b);
                hbs_memzero(b, sizeof b);
            }
            r[c] = _mm_or_si128(_mm_shuffle_epi8(x, p->pmask), p->pad[c]);
        } else {
            r[c] = p->pad[c];
        }
    }
}

/* Chaining values, block words and schedule of a group: kept by the caller, so that what
 * is left of them in memory can be wiped once per batch. */
typedef struct {
    __m256i s[8], w[16];
    __m128i r[LANES][4];
} work8;

/* Hashes the messages msg[0..7] (duplicates allowed) and stores the first nvalid digests. */
static void hash8(uint8_t *out, const batch_plan *p, const uint8_t *const msg[LANES],
                  size_t nvalid, work8 *wk)
{
    __m256i *s = wk->s, *w = wk->w;
    __m128i(*r)[4] = wk->r;
    UNROLL(8)
    for (unsigned i = 0; i < 8; i++)
        s[i] = _mm256_set1_epi32((int)p->h0[i]);
    for (size_t blk = 0; blk < p->full; blk++) {
        UNROLL(8)
        for (unsigned l = 0; l < LANES; l++) {
            UNROLL(4)
            for (unsigned c = 0; c < 4; c++)
                r[l][c] = _mm_shuffle_epi8(
                    _mm_loadu_si128((const __m128i *)(const void *)(msg[l] + 64 * blk + 16 * c)),
                    bswap_mask128());
        }
        transpose8(w, (const __m128i(*)[4])r);
        compress8(s, w);
    }
    if (p->tail_const) {
        compress8_const(s, p->kwc);
    } else {
        UNROLL(8)
        for (unsigned l = 0; l < LANES; l++)
            load_tail(r[l], p, msg[l]);
        transpose8(w, (const __m128i(*)[4])r);
        compress8(s, w);
        if (p->second_const)
            compress8_const(s, p->kwc);
    }
    store_digests8(out, s, nvalid);
}

void hbs_sha256_many_avx2(uint8_t *out, const hbs_sha256_ctx *prefix, const uint8_t *in,
                          size_t inlen, size_t count)
{
    batch_plan p;
    work8 wk;
    const uint8_t *msg[LANES];
    if (count == 0)
        return;
    plan_batch(&p, prefix, inlen);
    for (size_t i = 0; i < count; i += LANES) {
        size_t nvalid = count - i < LANES ? count - i : LANES;
        for (size_t l = 0; l < LANES; l++) {
            size_t j = l < nvalid ? i + l : count - 1; /* idle lanes repeat the last message */
            msg[l] = inlen ? in + j * inlen : in;
        }
        hash8(out + 32 * i, &p, msg, nvalid, &wk);
    }
    hbs_memzero(&wk, sizeof wk);
    hbs_memzero(&p, sizeof p);
}
