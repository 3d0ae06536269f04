/* SHA-256 (FIPS 180-4) for AVX-512: 16 messages at once, message l in 32-bit lane l of
 * each ZMM register.
 *
 * A batch is cut into groups of 16 messages; a last, short group repeats its last message
 * in the idle lanes and stores only the valid digests (masked stores). All messages have
 * the same length, so the tail (last partial block, 0x80, zeros, bit length) differs
 * between lanes only in the message bytes: it is built per lane by one masked byte load
 * OR'ed with a padding block made once per batch. A final block that holds no message
 * bytes at all (inlen a multiple of 64, or a tail of 56..63 bytes spilling its length into
 * a second block) is the same in every lane: its schedule plus round constants is
 * computed once per batch and broadcast.
 *
 * Rounds use vprord for the rotations and vpternlogd for Ch, Maj and the three-way XORs
 * of the Sigma functions; the 64 rounds and the message schedule are unrolled, with the
 * working variables renamed instead of moved.
 *
 * A batch whose last group would hold at most SHANI_REMAINDER_MAX messages hands that group
 * to the SHA-NI kernel where the CPU has SHA-NI: a 16-lane group costs the same whatever
 * its fill, while SHA-NI costs per message (AMD Zen 4, hot case, 38-byte messages after a
 * 64-byte prefix, one call: 16 lanes 340-360 ns; SHA-NI 1 message 88 ns, 4: 122-148 ns,
 * 8: 205 ns, 12: 297-346 ns, 16: 362-383 ns).
 *
 * Measured and rejected: SHA-NI messages interleaved with the 16 lanes inside the rounds
 * (16 + k messages per group, one four-round SHA-NI step per four vector rounds), meant to
 * run the SHA unit beside the vector unit. On AMD Zen 4 (EPYC, family 25 model 17; a Zen 5
 * was not available) sha256rnds2 issues to the same pipe as vprord/vpternlogd (4 rnds2 +
 * 2 zmm rotates take 6 cycles, the sum of both alone), and the SHA instructions exist only
 * in legacy SSE encoding. Cycles per block, rounds only, clang 14 / gcc 12: plain 16 lanes
 * 60 / 70; 16 + 1 SHA-NI 63 / 73; 16 + 2: 64 / 71; 16 + 4: 76 / 75; 16 + 6: 77 / 83; plain
 * SHA-NI, 4 messages interleaved, 82 / 65 (compression alone, no loads or transposes). No
 * mix beat the plain kernel.
 *
 * Nothing branches on or indexes memory by message or state data; branches depend only on
 * inlen and count. */
#include <immintrin.h>
#include <string.h>

#include "hbs/hbs.h"
#include "hash/x86/sha256_lanes.h"
#include "hash/x86/x86.h"

#define LANES 16

/* Hides a table's address from the optimiser, so that round constants are added straight
 * from memory (embedded broadcast); a compiler may otherwise rebuild each one from an
 * immediate in a general-purpose register, a slow path on AMD cores. */
#define OPAQUE(p) __asm__("" : "+r"(p))

/* ---- the 16-lane compression -------------------------------------------------------- */

#define ADD(x, y) _mm512_add_epi32((x), (y))
#define ROR(x, n) _mm512_ror_epi32((x), (n))
#define XOR3(x, y, z) _mm512_ternarylogic_epi32((x), (y), (z), 0x96)
#define BSIG0(x) XOR3(ROR(x, 2), ROR(x, 13), ROR(x, 22))
#define BSIG1(x) XOR3(ROR(x, 6), ROR(x, 11), ROR(x, 25))
#define SSIG0(x) XOR3(ROR(x, 7), ROR(x, 18), _mm512_srli_epi32((x), 3))
#define SSIG1(x) XOR3(ROR(x, 17), ROR(x, 19), _mm512_srli_epi32((x), 10))
#define CH(e, f, g) _mm512_ternarylogic_epi32((e), (f), (g), 0xca)  /* e ? f : g */
#define MAJ(a, b, c) _mm512_ternarylogic_epi32((a), (b), (c), 0xe8) /* majority */

/* One round; the caller renames a..h instead of shifting them, so only d and h change.
 * kw is K[t] + W[t]. */
#define RND(a, b, c, d, e, f, g, h, kw)                                                      \
    do {                                                                                     \
        __m512i t1_ = ADD(ADD((h), (kw)), ADD(CH((e), (f), (g)), BSIG1(e)));                 \
        (d) = ADD((d), t1_);                                                                 \
        (h) = ADD(t1_, ADD(BSIG0(a), MAJ((a), (b), (c))));                                   \
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
static inline __m512i sched(__m512i w[16], unsigned t)
{
    w[t & 15] = ADD(ADD(SSIG1(w[(t - 2) & 15]), w[(t - 7) & 15]),
                    ADD(SSIG0(w[(t - 15) & 15]), w[t & 15]));
    return w[t & 15];
}

#define KW_MSG(t) ADD(_mm512_set1_epi32((int)k[t]), (t) < 16 ? w[(t) & 15] : sched(w, (t)))
#define KW_CONST(t) _mm512_set1_epi32((int)kwc[t])

/* s += compression of the block whose words are w[0..15] (one lane per message);
 * w is used as the schedule ring and left clobbered. */
static inline void compress16(__m512i s[8], __m512i w[16])
{
    __m512i a = s[0], b = s[1], c = s[2], d = s[3], e = s[4], f = s[5], g = s[6], h = s[7];
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
static inline void compress16_const(__m512i s[8], const uint32_t kwc[64])
{
    __m512i a = s[0], b = s[1], c = s[2], d = s[3], e = s[4], f = s[5], g = s[6], h = s[7];
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

static ALWAYS_INLINE __m512i bswap32x16(__m512i x)
{
    const __m512i m = _mm512_broadcast_i32x4(
        _mm_set_epi8(12, 13, 14, 15, 8, 9, 10, 11, 4, 5, 6, 7, 0, 1, 2, 3));
    return _mm512_shuffle_epi8(x, m);
}

/* r[l] holds the 16 big-endian-decoded words of lane l's block; afterwards w[j] holds word
 * j of every lane. Three rounds of 2x2 block swaps (dwords, qwords, 128-bit lanes twice). */
static ALWAYS_INLINE void transpose16(__m512i w[16], const __m512i r[16])
{
    __m512i t[16], u[16], v[16];
    UNROLL(16)
    for (unsigned i = 0; i < 16; i += 2) {
        t[i] = _mm512_unpacklo_epi32(r[i], r[i + 1]);
        t[i + 1] = _mm512_unpackhi_epi32(r[i], r[i + 1]);
    }
    /* u[4g + j], 128-bit lane k: rows 4g..4g+3, word 4k + j */
    UNROLL(16)
    for (unsigned g = 0; g < 4; g++) {
        u[4 * g + 0] = _mm512_unpacklo_epi64(t[4 * g], t[4 * g + 2]);
        u[4 * g + 1] = _mm512_unpackhi_epi64(t[4 * g], t[4 * g + 2]);
        u[4 * g + 2] = _mm512_unpacklo_epi64(t[4 * g + 1], t[4 * g + 3]);
        u[4 * g + 3] = _mm512_unpackhi_epi64(t[4 * g + 1], t[4 * g + 3]);
    }
    UNROLL(16)
    for (unsigned j = 0; j < 4; j++) {
        v[4 * j + 0] = _mm512_shuffle_i32x4(u[j], u[4 + j], 0x44);
        v[4 * j + 1] = _mm512_shuffle_i32x4(u[j], u[4 + j], 0xee);
        v[4 * j + 2] = _mm512_shuffle_i32x4(u[8 + j], u[12 + j], 0x44);
        v[4 * j + 3] = _mm512_shuffle_i32x4(u[8 + j], u[12 + j], 0xee);
    }
    UNROLL(16)
    for (unsigned j = 0; j < 4; j++) {
        w[j] = _mm512_shuffle_i32x4(v[4 * j], v[4 * j + 2], 0x88);
        w[4 + j] = _mm512_shuffle_i32x4(v[4 * j], v[4 * j + 2], 0xdd);
        w[8 + j] = _mm512_shuffle_i32x4(v[4 * j + 1], v[4 * j + 3], 0x88);
        w[12 + j] = _mm512_shuffle_i32x4(v[4 * j + 1], v[4 * j + 3], 0xdd);
    }
}

/* Writes the digests of the first nvalid lanes of state s to out (32 bytes each). */
static ALWAYS_INLINE void store_digests16(uint8_t *out, const __m512i s[8], size_t nvalid)
{
    __m512i t[8], u[8], v[8], o[8];
    UNROLL(16)
    for (unsigned i = 0; i < 8; i += 2) {
        t[i] = _mm512_unpacklo_epi32(s[i], s[i + 1]);
        t[i + 1] = _mm512_unpackhi_epi32(s[i], s[i + 1]);
    }
    /* u[j] (abcd) and u[4 + j] (efgh), 128-bit lane k: message 4k + j */
    UNROLL(16)
    for (unsigned g = 0; g < 2; g++) {
        u[4 * g + 0] = _mm512_unpacklo_epi64(t[4 * g], t[4 * g + 2]);
        u[4 * g + 1] = _mm512_unpackhi_epi64(t[4 * g], t[4 * g + 2]);
        u[4 * g + 2] = _mm512_unpacklo_epi64(t[4 * g + 1], t[4 * g + 3]);
        u[4 * g + 3] = _mm512_unpackhi_epi64(t[4 * g + 1], t[4 * g + 3]);
    }
    UNROLL(16)
    for (unsigned j = 0; j < 4; j++) {
        /* lanes 0, 2 (v[2j]) and 1, 3 (v[2j+1]) of u[j] and u[4 + j] */
        v[2 * j] = _mm512_shuffle_i32x4(u[j], u[4 + j], 0x88);
        v[2 * j + 1] = _mm512_shuffle_i32x4(u[j], u[4 + j], 0xdd);
    }
    /* o[m] = messages 2m and 2m + 1; message 4k + j sits in v[2j + (k & 1)], half k >> 1 */
    UNROLL(16)
    for (unsigned p = 0; p < 2; p++) {
        /* messages j = 2p, 2p + 1 with k = 0..3 */
        UNROLL(16)
        for (unsigned k = 0; k < 2; k++) {
            o[2 * k + p] = _mm512_shuffle_i32x4(v[4 * p + k], v[4 * p + 2 + k], 0x88);
            o[2 * k + 4 + p] = _mm512_shuffle_i32x4(v[4 * p + k], v[4 * p + 2 + k], 0xdd);
        }
    }
    if (nvalid == LANES) {
        UNROLL(16)
        for (unsigned m = 0; m < 8; m++)
            _mm512_storeu_si512((void *)(out + 64 * m), bswap32x16(o[m]));
    } else {
        UNROLL(16)
        for (unsigned m = 0; 2 * m < nvalid; m++) {
            __mmask16 k = 2 * m + 1 < nvalid ? (__mmask16)0xffff : (__mmask16)0x00ff;
            _mm512_mask_storeu_epi32((void *)(out + 64 * m), k, bswap32x16(o[m]));
        }
    }
}

/* ---- the batch ------------------------------------------------------------------------ */

typedef struct {
    __m512i pad;      /* first tail block without its message bytes */
    uint32_t h0[8];   /* starting chaining value */
    uint32_t kwc[64]; /* K + W of the block that is the same in every lane, if any */
    size_t inlen;
    size_t full;      /* whole message blocks */
    size_t rem;       /* message bytes in the first tail block */
    __mmask64 remmask;
    int tail_const;   /* the first tail block is the same in every lane (rem == 0) */
    int second_const; /* a second tail block follows, the same in every lane */
} batch_plan;

static void plan_batch(batch_plan *p, const hbs_sha256_ctx *prefix, size_t inlen)
{
    uint8_t tail[2 * 64];
    uint64_t bytes = prefix ? prefix->bytes : 0;
    size_t taillen;
    memcpy(p->h0, prefix ? prefix->h : IV256, sizeof p->h0);
    p->inlen = inlen;
    p->full = inlen / 64;
    p->rem = inlen % 64;
    p->remmask = p->rem ? (((__mmask64)1 << p->rem) - 1) : 0;
    taillen = p->rem + 9 <= 64 ? 64 : 128;
    memset(tail, 0, sizeof tail);
    tail[p->rem] = 0x80;
    store_be64(tail + taillen - 8, (bytes + inlen) << 3);
    p->pad = _mm512_loadu_si512((const void *)tail);
    p->tail_const = p->rem == 0;
    p->second_const = taillen == 128;
    if (p->tail_const)
        sha256_const_schedule(p->kwc, tail);
    else if (p->second_const)
        sha256_const_schedule(p->kwc, tail + 64);
    else
        memset(p->kwc, 0, sizeof p->kwc);
}

/* Chaining values and schedule of a group: kept by the caller, so that what is left of
 * them in memory can be wiped once per batch. */
typedef struct {
    __m512i s[8], w[16];
} work16;

/* Hashes the messages msg[0..15] (duplicates allowed) and stores the first nvalid digests. */
static void hash16(uint8_t *out, const batch_plan *p, const uint8_t *const msg[LANES],
                   size_t nvalid, work16 *wk)
{
    __m512i *s = wk->s, *w = wk->w, r[16];
    UNROLL(16)
    for (unsigned i = 0; i < 8; i++)
        s[i] = _mm512_set1_epi32((int)p->h0[i]);
    for (size_t blk = 0; blk < p->full; blk++) {
        UNROLL(16)
        for (unsigned l = 0; l < LANES; l++)
            r[l] = bswap32x16(_mm512_loadu_si512((const void *)(msg[l] + 64 * blk)));
        transpose16(w, r);
        compress16(s, w);
    }
    if (p->tail_const) {
        compress16_const(s, p->kwc);
    } else {
        UNROLL(16)
        for (unsigned l = 0; l < LANES; l++)
            r[l] = bswap32x16(_mm512_or_si512(
                _mm512_maskz_loadu_epi8(p->remmask, (const void *)(msg[l] + 64 * p->full)),
                p->pad));
        transpose16(w, r);
        compress16(s, w);
        if (p->second_const)
            compress16_const(s, p->kwc);
    }
    store_digests16(out, s, nvalid);
}

/* A last group of at most this many messages goes to the SHA-NI kernel, where the CPU has
 * it, instead of a 16-lane group (see the measurements above). */
#define SHANI_REMAINDER_MAX 8

void hbs_sha256_many_avx512(uint8_t *out, const hbs_sha256_ctx *prefix, const uint8_t *in,
                            size_t inlen, size_t count)
{
    batch_plan p;
    work16 wk;
    const uint8_t *msg[LANES];
    size_t end = count;
    if (count == 0)
        return;
#ifndef HBS_NO_SHANI
    if (count % LANES != 0 && count % LANES <= SHANI_REMAINDER_MAX && hbs_cpu_has_shani()) {
        end = count - count % LANES;
        hbs_sha256_many_shani(out + 32 * end, prefix, inlen ? in + end * inlen : in, inlen,
                              count - end);
        if (end == 0)
            return;
    }
#endif
    plan_batch(&p, prefix, inlen);
    for (size_t i = 0; i < end; i += LANES) {
        size_t nvalid = end - i < LANES ? end - i : LANES;
        for (size_t l = 0; l < LANES; l++) {
            size_t j = l < nvalid ? i + l : end - 1; /* idle lanes repeat the last message */
            msg[l] = inlen ? in + j * inlen : in;
        }
        hash16(out + 32 * i, &p, msg, nvalid, &wk);
    }
    hbs_memzero(&wk, sizeof wk);
    hbs_memzero(&p, sizeof p);
}
