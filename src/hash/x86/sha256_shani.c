/* SHA-256 (FIPS 180-4) with the x86 SHA extensions, several messages interleaved.
 *
 * sha256rnds2 does two rounds but has a latency of several cycles and a throughput of about
 * one per cycle, so one message alone leaves the SHA unit mostly idle. The kernel therefore
 * hashes WAYS independent messages side by side, four rounds at a time each, and the
 * out-of-order core overlaps them. A last group of fewer messages runs a narrower copy of
 * the same code (on AMD Zen 4 one message alone takes 60-70% of the time of a group of
 * four, so this beats filling the group with copies).
 *
 * All messages have the same length, so the tail (last partial block, 0x80, zeros, bit
 * length) differs between messages only in the message bytes: per message, the tail block
 * is assembled from 16-byte chunks (whole chunks loaded directly, the one chunk that ends the
 * message taken from a 16-byte load ending at the message's last byte and moved into place
 * by one byte shuffle), OR'ed with padding made once per batch. A block without message
 * bytes (inlen a multiple of 64, or the second tail block of a 56..63-byte tail) is the same
 * for every message: its schedule plus round constants is computed once per batch.
 *
 * Nothing branches on or indexes memory by message or state data; branches depend only on
 * inlen and count. */
#include <immintrin.h>
#include <string.h>

#include "hbs/hbs.h"
#include "hash/x86/sha256_lanes.h"
#include "hash/x86/sha256_tail128.h"
#include "hash/x86/x86.h"

/* Messages in flight. sha256rnds2 has a latency of 4 cycles and a throughput of one per
 * cycle on AMD Zen 4, so four messages keep it busy; measured there in this kernel (hot case,
 * 38-byte messages after a 64-byte prefix, M compressions/s on one core, GCC 12): 2 ways
 * 33, 3 ways 47, 4 ways 50, 5 ways 51, 6 ways 50. The code below assumes 4. */
#define WAYS 4

/* ---- interleaved compression ---------------------------------------------------------- *
 * State of one message: abef = (F, E, B, A) and cdgh = (H, G, D, C), dword 0 first, the
 * layout sha256rnds2 works on. */

typedef struct {
    __m128i abef, cdgh;
} ni_state;

static ALWAYS_INLINE ni_state ni_from_words(const uint32_t h[8])
{
    ni_state s;
    __m128i abcd = _mm_loadu_si128((const __m128i *)(const void *)h);
    __m128i efgh = _mm_loadu_si128((const __m128i *)(const void *)(h + 4));
    abcd = _mm_shuffle_epi32(abcd, 0xb1);      /* B A D C */
    efgh = _mm_shuffle_epi32(efgh, 0x1b);      /* H G F E */
    s.abef = _mm_alignr_epi8(abcd, efgh, 8);   /* F E B A */
    s.cdgh = _mm_blend_epi16(efgh, abcd, 0xf0); /* H G D C */
    return s;
}

/* ---- per-batch plan ------------------------------------------------------------------- */

typedef struct {
    sha256_tail t;      /* where each message's blocks come from, and the padding */
    __m128i kwc[16];    /* K + W, four rounds each, of the block that is the same for all */
    ni_state s0;        /* starting chaining value */
} batch_plan;

static void plan_batch(batch_plan *p, const hbs_sha256_ctx *prefix, size_t inlen)
{
    uint8_t tail[2 * 64];
    const uint8_t *same = sha256_tail_plan(&p->t, tail, prefix ? prefix->bytes : 0, inlen);
    p->s0 = ni_from_words(prefix ? prefix->h : IV256);
    if (same) {
        uint32_t w[64];
        sha256_const_schedule(w, same);
        for (unsigned q = 0; q < 16; q++)
            p->kwc[q] = _mm_loadu_si128((const __m128i *)(const void *)(w + 4 * q));
    } else {
        memset(p->kwc, 0, sizeof p->kwc);
    }
}

/* The 32-byte big-endian digest of state s. */
static ALWAYS_INLINE void ni_store_digest(uint8_t *out, ni_state s)
{
    __m128i feba = _mm_shuffle_epi32(s.abef, 0x1b); /* A B E F */
    __m128i dchg = _mm_shuffle_epi32(s.cdgh, 0xb1); /* G H C D */
    __m128i abcd = _mm_blend_epi16(feba, dchg, 0xf0);
    __m128i efgh = _mm_alignr_epi8(dchg, feba, 8);
    _mm_storeu_si128((__m128i *)(void *)out, _mm_shuffle_epi8(abcd, bswap_mask128()));
    _mm_storeu_si128((__m128i *)(void *)(out + 16), _mm_shuffle_epi8(efgh, bswap_mask128()));
}

/* Four rounds with kw = K + W for them. */
#define QROUNDS(s, kw)                                                                       \
    do {                                                                                     \
        __m128i kw_ = (kw);                                                                  \
        (s).cdgh = _mm_sha256rnds2_epu32((s).cdgh, (s).abef, kw_);                           \
        (s).abef = _mm_sha256rnds2_epu32((s).abef, (s).cdgh, _mm_shuffle_epi32(kw_, 0x0e));  \
    } while (0)

/* W[4q .. 4q+3] into ring slot q % 4, from the four previous groups. */
#define QSCHED(w, q)                                                                         \
    do {                                                                                     \
        __m128i x_ = _mm_sha256msg1_epu32((w)[(q) & 3], (w)[((q) + 1) & 3]);                 \
        x_ = _mm_add_epi32(x_, _mm_alignr_epi8((w)[((q) + 3) & 3], (w)[((q) + 2) & 3], 4));  \
        (w)[(q) & 3] = _mm_sha256msg2_epu32(x_, (w)[((q) + 3) & 3]);                         \
    } while (0)

#define KQ(q) _mm_load_si128((const __m128i *)(const void *)(hbs_sha256_K + 4 * (q)))

/* s[i] += compression of the block with words w[i][0..3] (clobbered) for i < n; n is a
 * constant after inlining. The messages advance four rounds at a time, side by side. */
static ALWAYS_INLINE void ni_compress(ni_state *s, __m128i (*w)[4], const int n)
{
    ni_state s0[WAYS];
    UNROLL(8)
    for (int i = 0; i < n; i++)
        s0[i] = s[i];
    UNROLL(16)
    for (int q = 0; q < 16; q++) {
        UNROLL(8)
        for (int i = 0; i < n; i++) {
            if (q >= 4)
                QSCHED(w[i], q);
            QROUNDS(s[i], _mm_add_epi32(w[i][q & 3], KQ(q)));
        }
    }
    UNROLL(8)
    for (int i = 0; i < n; i++) {
        s[i].abef = _mm_add_epi32(s[i].abef, s0[i].abef);
        s[i].cdgh = _mm_add_epi32(s[i].cdgh, s0[i].cdgh);
    }
}

/* s[i] += compression of the block that is the same for all, kwc = its K + W. */
static ALWAYS_INLINE void ni_compress_const(ni_state *s, const __m128i kwc[16], const int n)
{
    ni_state s0[WAYS];
    UNROLL(8)
    for (int i = 0; i < n; i++)
        s0[i] = s[i];
    UNROLL(16)
    for (int q = 0; q < 16; q++) {
        UNROLL(8)
        for (int i = 0; i < n; i++)
            QROUNDS(s[i], kwc[q]);
    }
    UNROLL(8)
    for (int i = 0; i < n; i++) {
        s[i].abef = _mm_add_epi32(s[i].abef, s0[i].abef);
        s[i].cdgh = _mm_add_epi32(s[i].cdgh, s0[i].cdgh);
    }
}

/* Block words and schedule of a group: kept by the caller, so that what is left of them in
 * memory can be wiped once per batch. */
typedef struct {
    __m128i w[WAYS][4];
} ni_work;

/* Hashes the n messages starting at in (stride inlen) into out. */
static ALWAYS_INLINE void ni_hash(uint8_t *out, const batch_plan *p, const uint8_t *in,
                                 size_t inlen, ni_work *wk, const int n)
{
    ni_state s[WAYS];
    __m128i(*w)[4] = wk->w;
    const uint8_t *m[WAYS];
    UNROLL(8)
    for (int i = 0; i < n; i++) {
        m[i] = inlen ? in + (size_t)i * inlen : in;
        s[i] = p->s0;
    }
    for (size_t blk = 0; blk < p->t.full; blk++) {
        UNROLL(8)
        for (int i = 0; i < n; i++) {
            UNROLL(4)
            for (unsigned c = 0; c < 4; c++)
                w[i][c] = load_be128(m[i] + 64 * blk + 16 * c);
        }
        ni_compress(s, w, n);
    }
    if (p->t.tail_const) {
        ni_compress_const(s, p->kwc, n);
    } else {
        UNROLL(8)
        for (int i = 0; i < n; i++)
            sha256_tail_load(w[i], &p->t, m[i]);
        ni_compress(s, w, n);
        if (p->t.second_const)
            ni_compress_const(s, p->kwc, n);
    }
    UNROLL(8)
    for (int i = 0; i < n; i++)
        ni_store_digest(out + 32 * i, s[i]);
}

/* Four messages, the width of the main loop, and narrower copies for a last group. */
static void ni_hash4(uint8_t *out, const batch_plan *p, const uint8_t *in, size_t inlen,
                     ni_work *wk)
{
    ni_hash(out, p, in, inlen, wk, 4);
}

static void ni_hash3(uint8_t *out, const batch_plan *p, const uint8_t *in, size_t inlen,
                     ni_work *wk)
{
    ni_hash(out, p, in, inlen, wk, 3);
}

static void ni_hash2(uint8_t *out, const batch_plan *p, const uint8_t *in, size_t inlen,
                     ni_work *wk)
{
    ni_hash(out, p, in, inlen, wk, 2);
}

static void ni_hash1(uint8_t *out, const batch_plan *p, const uint8_t *in, size_t inlen,
                     ni_work *wk)
{
    ni_hash(out, p, in, inlen, wk, 1);
}

void hbs_sha256_many_shani(uint8_t *out, const hbs_sha256_ctx *prefix, const uint8_t *in,
                           size_t inlen, size_t count)
{
    static void (*const narrow[WAYS])(uint8_t *, const batch_plan *, const uint8_t *, size_t,
                                      ni_work *) = {NULL, ni_hash1, ni_hash2, ni_hash3};
    batch_plan p;
    ni_work wk;
    size_t i = 0;
    if (count == 0)
        return;
    plan_batch(&p, prefix, inlen);
    for (; count - i >= WAYS; i += WAYS)
        ni_hash4(out + 32 * i, &p, inlen ? in + i * inlen : in, inlen, &wk);
    if (count > i)
        narrow[count - i](out + 32 * i, &p, inlen ? in + i * inlen : in, inlen, &wk);
    hbs_memzero(&wk, sizeof wk);
    hbs_memzero(&p, sizeof p);
}

/* One message's whole blocks into h: the single-stream case (long inputs, HMAC, checksums
 * over key state files), where the lanes of the batch kernels have nothing to do. */
void hbs_sha256_compress_shani(uint32_t h[8], const uint8_t *blocks, size_t nblocks)
{
    ni_state s = ni_from_words(h);
    __m128i w[1][4];
    for (size_t b = 0; b < nblocks; b++) {
        UNROLL(4)
        for (unsigned c = 0; c < 4; c++)
            w[0][c] = load_be128(blocks + 64 * b + 16 * c);
        ni_compress(&s, w, 1);
    }
    {
        __m128i feba = _mm_shuffle_epi32(s.abef, 0x1b); /* A B E F */
        __m128i dchg = _mm_shuffle_epi32(s.cdgh, 0xb1); /* G H C D */
        _mm_storeu_si128((__m128i *)(void *)h, _mm_blend_epi16(feba, dchg, 0xf0));
        _mm_storeu_si128((__m128i *)(void *)(h + 4), _mm_alignr_epi8(dchg, feba, 8));
    }
    hbs_memzero(w, sizeof w);
}
