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
#include "hash/x86/sha256_x16.h"
#include "hash/x86/x86.h"

#define LANES 16

/* ---- moving data between messages and lanes ----------------------------------------- */

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
