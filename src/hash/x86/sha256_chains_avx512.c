/* SHA-256 hash chains in 16 AVX-512 lanes (the hbs_sha256_chains contract of hash.h).
 *
 * Each lane walks one chain for all its steps without leaving the registers: the message
 * words of a step are the chain's template words (its bytes with the counter and value
 * fields cleared, padding included) OR'ed with the counter and the previous digest words
 * shifted into their byte positions. When a lane's chain ends, its value and counter are
 * written back and the lane takes the next chain, so lanes stay busy when chains have
 * different lengths (signature verification) as well as when they are all alike (key
 * generation).
 *
 * The layouts in use are compiled as constants (SLH-DSA: counter = hash address at byte
 * 18, value at 22; LMS: one-byte counter j at 22, value at 23); other layouts, and
 * messages that do not fit in one block with their padding, are left to the caller.
 *
 * What never changes along a chain is hashed once per chain, not once per step: words 0..4
 * (the address and, in SLH-DSA, the hash address's high half) feed rounds 0..4 and the
 * parts of schedule words 16..20 made of them. That needs a counter that does not carry
 * into word 4 along any chain (SLH-DSA's count from below 16): checked up front, and a
 * call that would carry is left to the caller. The zero words between the padding byte and
 * the length drop out of the schedule at compile time, the message length being a
 * constant of each layout too.
 *
 * Step counts decide only when a lane is refilled; they are public in every use (they
 * come from message digests or are fixed), and nothing indexes memory by chain values. */
#include <immintrin.h>
#include <string.h>

#include "hbs/hbs.h"
#include "hash/x86/sha256_x16.h"
#include "hash/x86/x86.h"

#define LANES 16

typedef struct {
    __m512i w0[16];   /* template words, fields cleared, lane l = the chain in lane l */
    __m512i d[8];     /* chain values as big-endian words */
    __m512i ctr, rem; /* counter and steps left, per lane */
    __m512i pre[8];   /* working variables A..H after rounds 0..4, which see only words
                       * 0..4 (the address and the counter's high half, never the value) */
    __m512i part[5];  /* the parts of W[16..20] made of words 0..4 (and the length word) */
    uint8_t blk[64];  /* the padding of every message: 0x80 after it, its length in bits */
    uint32_t dv[8][LANES], cv[LANES];
} chain_state;

static ALWAYS_INLINE uint32_t load_be(const uint8_t *p, unsigned bytes)
{
    uint32_t v = 0;
    for (unsigned i = 0; i < bytes; i++)
        v = v << 8 | p[i];
    return v;
}

static ALWAYS_INLINE void store_be(uint8_t *p, uint32_t v, unsigned bytes)
{
    for (unsigned i = bytes; i-- > 0; v >>= 8)
        p[i] = (uint8_t)v;
}

/* Mask, in big-endian word t of a block, of the bytes [off, off + len). */
static ALWAYS_INLINE uint32_t field_mask(unsigned t, unsigned off, unsigned len)
{
    uint32_t m = 0;
    for (unsigned b = 0; b < 4; b++)
        if (4 * t + b >= off && 4 * t + b < off + len)
            m |= 0xffu << (8 * (3 - b));
    return m;
}

/* What a call shares between its steps; wiped at the end. */
typedef struct {
    const uint8_t *steps;
    uint32_t steps_all;
    size_t count, next, len;
    uint8_t *msgs;
    __m512i clear; /* zero on the counter and value bytes */
    __m512i pad;   /* the padding words: 0x80 after the message, the length in bits */
    size_t lane_chain[LANES];
} chain_feed;

/* Mask of the first n bytes of a 64-byte row (n <= 64). */
static ALWAYS_INLINE __mmask64 first_bytes(size_t n)
{
    return n >= 64 ? ~(__mmask64)0 : ((__mmask64)1 << n) - 1;
}

/* Puts the next chain that has steps to take into lane l; 0 when there is none. The
 * message is read with byte-masked loads straight into registers (a copy through memory
 * would stall the wide load on store forwarding), and each field reaches lane l by one
 * masked permute; no broadcast from a general register but the step count's. */
static ALWAYS_INLINE int refill(chain_state *st, chain_feed *f, unsigned l, const unsigned CO,
                                const unsigned CB, const unsigned VO, const unsigned N)
{
    const __mmask16 bit = (__mmask16)(1u << l);
    for (; f->next < f->count; f->next++) {
        const uint32_t todo = f->steps ? f->steps[f->next] : f->steps_all;
        const uint8_t *m = f->msgs + f->next * f->len;
        __m512i words, val, ctr;
        if (todo == 0)
            continue;
        f->lane_chain[l] = f->next++;
        words = bswap32x16(_mm512_maskz_loadu_epi8(first_bytes(f->len), m));
        words = _mm512_ternarylogic_epi32(words, f->clear, f->pad, 0xea); /* w & clear | pad */
        val = bswap32x16(_mm512_maskz_loadu_epi8(first_bytes(N), m + VO));
        ctr = _mm512_srli_epi32(bswap32x16(_mm512_maskz_loadu_epi8(first_bytes(CB), m + CO)),
                                8 * (4 - CB));
        UNROLL(16)
        for (unsigned t = 0; t < 16; t++)
            st->w0[t] = _mm512_mask_permutexvar_epi32(st->w0[t], bit, _mm512_set1_epi32((int)t),
                                                      words);
        UNROLL(8)
        for (unsigned k = 0; k < N / 4; k++)
            st->d[k] = _mm512_mask_permutexvar_epi32(st->d[k], bit, _mm512_set1_epi32((int)k),
                                                     val);
        st->ctr = _mm512_mask_permutexvar_epi32(st->ctr, bit, _mm512_setzero_si512(), ctr);
        st->rem = _mm512_mask_set1_epi32(st->rem, bit, (int)todo);
        return 1;
    }
    return 0;
}

/* Rounds 0..4 are run per chain (chain_precompute), so a step starts at round 5. */
#define FIXED_WORDS 5

/* The counter's bits in big-endian word t of a block: the counter shifted to its bytes
 * there, zero where word t holds none of them. */
static ALWAYS_INLINE __m512i ctr_part(__m512i ctr, unsigned t, const unsigned CO,
                                      const unsigned CB)
{
    const int sh = 8 * (3 + 4 * (int)t - (int)(CO + CB - 1));
    const uint32_t m = field_mask(t, CO, CB);
    const __m512i x = sh >= 0 ? _mm512_slli_epi32(ctr, (unsigned)sh)
                              : _mm512_srli_epi32(ctr, (unsigned)-sh);
    return m ? _mm512_and_si512(x, _mm512_set1_epi32((int)m)) : _mm512_setzero_si512();
}

/* Word t of the block is zero in every message: past the padding byte and before the
 * length's low word (the length's high word is zero for one-block messages). */
static ALWAYS_INLINE int zero_word(unsigned t, const unsigned LEN)
{
    return t >= (LEN + 4) / 4 && t <= 14;
}

/* The message words 5..15 of one step: template, counter and value (words 0..4 are the
 * chain's, see chain_precompute). */
static ALWAYS_INLINE void step_words(__m512i w[16], const chain_state *st, const unsigned CO,
                                     const unsigned CB, const unsigned VO, const unsigned N)
{
    const unsigned Q = VO / 4, R = VO % 4, NW = N / 4;
    UNROLL(11)
    for (unsigned t = FIXED_WORDS; t < 16; t++)
        w[t] = field_mask(t, CO, CB) ? _mm512_or_si512(st->w0[t], ctr_part(st->ctr, t, CO, CB))
                                     : st->w0[t];
    UNROLL(9)
    for (unsigned j = 0; j <= NW; j++) {
        if (R == 0) {
            if (j < NW)
                w[Q + j] = _mm512_or_si512(w[Q + j], st->d[j]);
            continue;
        }
        if (j > 0)
            w[Q + j] = _mm512_or_si512(w[Q + j], _mm512_slli_epi32(st->d[j - 1], 32 - 8 * R));
        if (j < NW)
            w[Q + j] = _mm512_or_si512(w[Q + j], _mm512_srli_epi32(st->d[j], 8 * R));
    }
}

/* Once per refill, for all lanes at once: rounds 0..4 from h0 over words 0..4 (the
 * counter's bits there do not change along a chain; the caller checked), and the parts of
 * W[16..20] that depend on those words and the length word alone. */
static ALWAYS_INLINE void chain_precompute(chain_state *st, const uint32_t h0[8],
                                           const unsigned CO, const unsigned CB)
{
    __m512i x[FIXED_WORDS];
    __m512i a = _mm512_set1_epi32((int)h0[0]), b = _mm512_set1_epi32((int)h0[1]),
            c = _mm512_set1_epi32((int)h0[2]), d = _mm512_set1_epi32((int)h0[3]),
            e = _mm512_set1_epi32((int)h0[4]), f = _mm512_set1_epi32((int)h0[5]),
            g = _mm512_set1_epi32((int)h0[6]), h = _mm512_set1_epi32((int)h0[7]);
    UNROLL(5)
    for (unsigned t = 0; t < FIXED_WORDS; t++)
        x[t] = field_mask(t, CO, CB) ? _mm512_or_si512(st->w0[t], ctr_part(st->ctr, t, CO, CB))
                                     : st->w0[t];
#define KW_FIXED(t) ADD(_mm512_set1_epi32((int)hbs_sha256_K[t]), x[t])
    RND(a, b, c, d, e, f, g, h, KW_FIXED(0));
    RND(h, a, b, c, d, e, f, g, KW_FIXED(1));
    RND(g, h, a, b, c, d, e, f, KW_FIXED(2));
    RND(f, g, h, a, b, c, d, e, KW_FIXED(3));
    RND(e, f, g, h, a, b, c, d, KW_FIXED(4));
#undef KW_FIXED
    /* after five renamed rounds A..H live in d, e, f, g, h, a, b, c */
    st->pre[0] = d;
    st->pre[1] = e;
    st->pre[2] = f;
    st->pre[3] = g;
    st->pre[4] = h;
    st->pre[5] = a;
    st->pre[6] = b;
    st->pre[7] = c;
    /* W16 = s1(W14) + W9 + s0(W1) + W0 (W14 is zero), W17 = s1(W15) + W10 + s0(W2) + W1,
     * W18 = s1(W16) + W11 + s0(W3) + W2, W19 = s1(W17) + W12 + s0(W4) + W3,
     * W20 = s1(W18) + W13 + s0(W5) + W4 */
    st->part[0] = ADD(SSIG0(x[1]), x[0]);
    st->part[1] = ADD(ADD(SSIG1(st->w0[15]), SSIG0(x[2])), x[1]);
    st->part[2] = ADD(SSIG0(x[3]), x[2]);
    st->part[3] = ADD(SSIG0(x[4]), x[3]);
    st->part[4] = x[4];
}

/* W[t] (16 <= t < 64) into the ring w, which holds W[5..15] and, in slots 0..4, the parts
 * of W[16..20] from chain_precompute. Terms of zero words are left out at compile time. */
static ALWAYS_INLINE __m512i chain_sched(__m512i w[16], unsigned t, const unsigned LEN)
{
    __m512i x = w[t & 15]; /* W[t-16], or the precomputed part of W[t] */
    if (t >= 21 && zero_word(t - 16, LEN))
        x = _mm512_setzero_si512();
    if (t != 17 && !zero_word(t - 2, LEN))
        x = ADD(x, SSIG1(w[(t - 2) & 15]));
    if (!zero_word(t - 7, LEN))
        x = ADD(x, w[(t - 7) & 15]);
    if (t >= 20 && !zero_word(t - 15, LEN))
        x = ADD(x, SSIG0(w[(t - 15) & 15]));
    w[t & 15] = x;
    return x;
}

#define KW_CHAIN(t)                                                                          \
    ((t) >= 16 ? ADD(_mm512_set1_epi32((int)k[t]), chain_sched(w, (t), LEN))                 \
     : zero_word((t), LEN) ? _mm512_set1_epi32((int)k[t])                                    \
                           : ADD(_mm512_set1_epi32((int)k[t]), w[(t) & 15]))

/* The first N/4 words of h0 + the compression of a step's block from round 5 on, into s;
 * w as step_words and chain_precompute leave it (clobbered). */
static ALWAYS_INLINE void compress_step(__m512i *s, const uint32_t h0[8], const __m512i pre[8],
                                        __m512i w[16], const unsigned LEN, const unsigned N)
{
    /* A..H after round 4 sit where round 5's renaming expects them */
    __m512i d = pre[0], e = pre[1], f = pre[2], g = pre[3], h = pre[4], a = pre[5],
            b = pre[6], c = pre[7];
    const uint32_t *k = hbs_sha256_K;
    OPAQUE(k);
    RND(d, e, f, g, h, a, b, c, KW_CHAIN(5));
    RND(c, d, e, f, g, h, a, b, KW_CHAIN(6));
    RND(b, c, d, e, f, g, h, a, KW_CHAIN(7));
    RND8(8, KW_CHAIN);
    RND8(16, KW_CHAIN);
    RND8(24, KW_CHAIN);
    RND8(32, KW_CHAIN);
    RND8(40, KW_CHAIN);
    RND8(48, KW_CHAIN);
    RND8(56, KW_CHAIN);
    {
        const __m512i v[8] = {a, b, c, d, e, f, g, h};
        UNROLL(8)
        for (unsigned j = 0; j < N / 4; j++)
            s[j] = ADD(_mm512_set1_epi32((int)h0[j]), v[j]);
    }
}

static ALWAYS_INLINE void chains16(chain_state *st, chain_feed *f, const uint32_t h0[8],
                                   const unsigned CO, const unsigned CB, const unsigned VO,
                                   const unsigned N, const unsigned LEN)
{
    __m512i w[16];
    __mmask16 live = 0;
    uint32_t keep[16];

    for (unsigned t = 0; t < 16; t++)
        keep[t] = ~(field_mask(t, CO, CB) | field_mask(t, VO, N));
    f->clear = _mm512_loadu_si512((const void *)keep);
    f->pad = bswap32x16(_mm512_loadu_si512((const void *)st->blk));
    for (unsigned l = 0; l < LANES; l++)
        if (refill(st, f, l, CO, CB, VO, N))
            live |= (__mmask16)(1u << l);
    chain_precompute(st, h0, CO, CB);

    while (live) {
        __mmask16 done;
        step_words(w, st, CO, CB, VO, N);
        UNROLL(5)
        for (unsigned t = 0; t < FIXED_WORDS; t++)
            w[t] = st->part[t];
        compress_step(st->d, h0, st->pre, w, LEN, N);
        st->ctr = _mm512_add_epi32(st->ctr, _mm512_set1_epi32(1));
        st->rem = _mm512_sub_epi32(st->rem, _mm512_set1_epi32(1));
        done = _mm512_mask_cmpeq_epi32_mask(live, st->rem, _mm512_setzero_si512());
        if (!done)
            continue;
        UNROLL(8)
        for (unsigned k = 0; k < N / 4; k++)
            _mm512_storeu_si512((void *)st->dv[k], st->d[k]);
        _mm512_storeu_si512((void *)st->cv, st->ctr);
        live &= (__mmask16)~done;
        for (unsigned l = 0; l < LANES; l++) {
            if (!(done >> l & 1))
                continue;
            uint8_t *m = f->msgs + f->lane_chain[l] * f->len;
            for (unsigned k = 0; k < N / 4; k++)
                store_be(m + VO + 4 * k, st->dv[k][l], 4);
            store_be(m + CO, st->cv[l], CB);
            if (refill(st, f, l, CO, CB, VO, N))
                live |= (__mmask16)(1u << l);
        }
        chain_precompute(st, h0, CO, CB);
    }
}

/* Whether the counter's bytes in words 0..4 stay the same along every chain (true for
 * SLH-DSA, whose chains count from below 16), so that those words are the chain's. The
 * counters read here are public (hash addresses and LM-OTS indices). */
static int fixed_words_hold(const uint8_t *msgs, size_t len, unsigned co, unsigned cb,
                            const uint8_t *steps, uint32_t steps_all, size_t count)
{
    const unsigned low = co + cb > 4 * FIXED_WORDS ? co + cb - 4 * FIXED_WORDS : 0;
    const uint64_t span = (uint64_t)1 << (8 * low);
    if (co >= 4 * FIXED_WORDS)
        return 1;
    for (size_t i = 0; i < count; i++) {
        const uint32_t todo = steps ? steps[i] : steps_all;
        if (todo && load_be(msgs + i * len + co, cb) % span + todo - 1 >= span)
            return 0;
    }
    return 1;
}

int hbs_sha256_chains_avx512(const hbs_sha256_ctx *prefix, uint8_t *msgs, size_t len,
                             const hbs_chain_layout *lay, const uint8_t *steps,
                             uint32_t steps_all, size_t count)
{
    chain_state st;
    chain_feed f;
    uint32_t h0[8];
    const uint64_t bits = ((prefix ? prefix->bytes : 0) + len) << 3;
    const unsigned co = lay->ctr_off, cb = lay->ctr_bytes, vo = lay->val_off, n = lay->n;
    int handled = 1;

    /* one block with its padding; words 0..4 free of the value and, along each chain, of
     * counter changes */
    if (len + 9 > 64 || vo < 4 * FIXED_WORDS || co + cb > 64 || bits >> 32 ||
        !fixed_words_hold(msgs, len, co, cb, steps, steps_all, count))
        return 1;
    memcpy(h0, prefix ? prefix->h : IV256, sizeof h0);
    memset(&st, 0, sizeof st);
    st.blk[len] = 0x80;
    store_be64(st.blk + 56, bits);
    f.steps = steps;
    f.steps_all = steps_all;
    f.count = count;
    f.next = 0;
    f.len = len;
    f.msgs = msgs;

    /* the layouts in use, each compiled with its constants and message length */
    if (co == 18 && cb == 4 && vo == 22 && n == 16 && len == 38)
        chains16(&st, &f, h0, 18, 4, 22, 16, 38); /* SLH-DSA-SHA2-128 */
    else if (co == 18 && cb == 4 && vo == 22 && n == 24 && len == 46)
        chains16(&st, &f, h0, 18, 4, 22, 24, 46); /* SLH-DSA-SHA2-192 */
    else if (co == 18 && cb == 4 && vo == 22 && n == 32 && len == 54)
        chains16(&st, &f, h0, 18, 4, 22, 32, 54); /* SLH-DSA-SHA2-256 */
    else if (co == 22 && cb == 1 && vo == 23 && n == 32 && len == 55)
        chains16(&st, &f, h0, 22, 1, 23, 32, 55); /* LM-OTS, n = 32 */
    else if (co == 22 && cb == 1 && vo == 23 && n == 24 && len == 47)
        chains16(&st, &f, h0, 22, 1, 23, 24, 47); /* LM-OTS, n = 24 */
    else
        handled = 0;
    hbs_memzero(&st, sizeof st);
    hbs_memzero(&f, sizeof f);
    return handled ? 0 : 1;
}
