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
#include "hash/x86/sha256_tail128.h"
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
    ADD_STATE(s);
}

/* s += compression of a block that is the same in every lane; kwc[t] = K[t] + W[t]. */
static void compress8_const(__m256i s[8], const uint32_t kwc[64])
{
    __m256i a = s[0], b = s[1], c = s[2], d = s[3], e = s[4], f = s[5], g = s[6], h = s[7];
    __m256i bc = XOR(b, c);
    RND64(KW_CONST);
    ADD_STATE(s);
}

/* ---- moving data between messages and lanes ----------------------------------------- */

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
    sha256_tail t;      /* where each lane's blocks come from, and the padding */
    uint32_t h0[8];     /* starting chaining value */
    uint32_t kwc[64];   /* K + W of the block that is the same in every lane, if any */
} batch_plan;

static void plan_batch(batch_plan *p, const hbs_sha256_ctx *prefix, size_t inlen)
{
    uint8_t tail[2 * 64];
    const uint8_t *same = sha256_tail_plan(&p->t, tail, prefix ? prefix->bytes : 0, inlen);
    memcpy(p->h0, prefix ? prefix->h : IV256, sizeof p->h0);
    if (same)
        sha256_const_schedule(p->kwc, same);
    else
        memset(p->kwc, 0, sizeof p->kwc);
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
    for (size_t blk = 0; blk < p->t.full; blk++) {
        UNROLL(8)
        for (unsigned l = 0; l < LANES; l++) {
            UNROLL(4)
            for (unsigned c = 0; c < 4; c++)
                r[l][c] = load_be128(msg[l] + 64 * blk + 16 * c);
        }
        transpose8(w, (const __m128i(*)[4])r);
        compress8(s, w);
    }
    if (p->t.tail_const) {
        compress8_const(s, p->kwc);
    } else {
        UNROLL(8)
        for (unsigned l = 0; l < LANES; l++)
            sha256_tail_load(r[l], &p->t, msg[l]);
        transpose8(w, (const __m128i(*)[4])r);
        compress8(s, w);
        if (p->t.second_const)
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
