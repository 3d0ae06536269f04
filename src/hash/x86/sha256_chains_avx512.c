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
    __m512i pre[8];   /* working variables after the first four rounds, which see only
                       * the template's first four words (no counter, no value) */
    uint8_t blk[64];  /* one template being loaded */
    uint32_t dv[8][LANES], cv[LANES];
} chain_state;

/* The working variables after the first four rounds from h0 over each lane's template
 * words 0..3 (A..H; see compress16_from4): once per refill, for all lanes at once. */
static ALWAYS_INLINE void four_rounds16(chain_state *st, const uint32_t h0[8])
{
    __m512i a = _mm512_set1_epi32((int)h0[0]), b = _mm512_set1_epi32((int)h0[1]),
            c = _mm512_set1_epi32((int)h0[2]), d = _mm512_set1_epi32((int)h0[3]),
            e = _mm512_set1_epi32((int)h0[4]), f = _mm512_set1_epi32((int)h0[5]),
            g = _mm512_set1_epi32((int)h0[6]), h = _mm512_set1_epi32((int)h0[7]);
#define KW_TMPL(t) ADD(_mm512_set1_epi32((int)hbs_sha256_K[t]), st->w0[t])
    RND(a, b, c, d, e, f, g, h, KW_TMPL(0));
    RND(h, a, b, c, d, e, f, g, KW_TMPL(1));
    RND(g, h, a, b, c, d, e, f, KW_TMPL(2));
    RND(f, g, h, a, b, c, d, e, KW_TMPL(3));
#undef KW_TMPL
    st->pre[0] = e;
    st->pre[1] = f;
    st->pre[2] = g;
    st->pre[3] = h;
    st->pre[4] = a;
    st->pre[5] = b;
    st->pre[6] = c;
    st->pre[7] = d;
}

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
    size_t lane_chain[LANES];
} chain_feed;

/* Puts the next chain that has steps to take into lane l; 0 when there is none. */
static ALWAYS_INLINE int refill(chain_state *st, chain_feed *f, unsigned l, const unsigned CO,
                                const unsigned CB, const unsigned VO, const unsigned N)
{
    const __mmask16 bit = (__mmask16)(1u << l);
    for (; f->next < f->count; f->next++) {
        const uint32_t todo = f->steps ? f->steps[f->next] : f->steps_all;
        const uint8_t *m = f->msgs + f->next * f->len;
        __m512i words;
        if (todo == 0)
            continue;
        f->lane_chain[l] = f->next++;
        memcpy(st->blk, m, f->len);
        words = _mm512_and_si512(bswap32x16(_mm512_loadu_si512((const void *)st->blk)), f->clear);
        UNROLL(16)
        for (unsigned t = 0; t < 16; t++)
            st->w0[t] = _mm512_mask_permutexvar_epi32(st->w0[t], bit, _mm512_set1_epi32((int)t),
                                                      words);
        UNROLL(8)
        for (unsigned k = 0; k < N / 4; k++)
            st->d[k] = _mm512_mask_set1_epi32(st->d[k], bit, (int)load_be(m + VO + 4 * k, 4));
        st->ctr = _mm512_mask_set1_epi32(st->ctr, bit, (int)load_be(m + CO, CB));
        st->rem = _mm512_mask_set1_epi32(st->rem, bit, (int)todo);
        return 1;
    }
    return 0;
}

/* The message words of one step: template, counter and value. */
static ALWAYS_INLINE void step_words(__m512i w[16], const chain_state *st, const unsigned CO,
                                     const unsigned CB, const unsigned VO, const unsigned N)
{
    const unsigned E = CO + CB - 1, WE = E / 4, SH = 8 * (3 - E % 4);
    const unsigned Q = VO / 4, R = VO % 4, NW = N / 4;
    UNROLL(16)
    for (unsigned t = 0; t < 16; t++)
        w[t] = st->w0[t];
    w[WE] = _mm512_or_si512(w[WE], _mm512_and_si512(_mm512_slli_epi32(st->ctr, SH),
                                                    _mm512_set1_epi32((int)field_mask(WE, CO, CB))));
    if (CO < 4 * WE)
        w[WE - 1] = _mm512_or_si512(
            w[WE - 1], _mm512_and_si512(_mm512_srli_epi32(st->ctr, 32 - SH),
                                        _mm512_set1_epi32((int)field_mask(WE - 1, CO, CB))));
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

static ALWAYS_INLINE void chains16(chain_state *st, chain_feed *f, const uint32_t h0[8],
                                   const unsigned CO, const unsigned CB, const unsigned VO,
                                   const unsigned N)
{
    __m512i w[16], s[8];
    __mmask16 live = 0;
    uint32_t keep[16];

    for (unsigned t = 0; t < 16; t++)
        keep[t] = ~(field_mask(t, CO, CB) | field_mask(t, VO, N));
    f->clear = _mm512_loadu_si512((const void *)keep);
    for (unsigned l = 0; l < LANES; l++)
        if (refill(st, f, l, CO, CB, VO, N))
            live |= (__mmask16)(1u << l);
    four_rounds16(st, h0);

    while (live) {
        __mmask16 done;
        step_words(w, st, CO, CB, VO, N);
        UNROLL(8)
        for (unsigned k = 0; k < 8; k++)
            s[k] = _mm512_set1_epi32((int)h0[k]);
        compress16_from4(s, st->pre, w);
        UNROLL(8)
        for (unsigned k = 0; k < N / 4; k++)
            st->d[k] = s[k];
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
        four_rounds16(st, h0);
    }
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

    /* one block with its padding; the first four words free of counter and value */
    if (len + 9 > 64 || co < 16 || vo < 16)
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

    /* the layouts in use, each compiled with its constants */
    if (co == 18 && cb == 4 && vo == 22 && n == 16)
        chains16(&st, &f, h0, 18, 4, 22, 16); /* SLH-DSA-SHA2-128 */
    else if (co == 18 && cb == 4 && vo == 22 && n == 24)
        chains16(&st, &f, h0, 18, 4, 22, 24); /* SLH-DSA-SHA2-192 */
    else if (co == 18 && cb == 4 && vo == 22 && n == 32)
        chains16(&st, &f, h0, 18, 4, 22, 32); /* SLH-DSA-SHA2-256 */
    else if (co == 22 && cb == 1 && vo == 23 && n == 32)
        chains16(&st, &f, h0, 22, 1, 23, 32); /* LM-OTS, n = 32 */
    else if (co == 22 && cb == 1 && vo == 23 && n == 24)
        chains16(&st, &f, h0, 22, 1, 23, 24); /* LM-OTS, n = 24 */
    else
        handled = 0;
    hbs_memzero(&st, sizeof st);
    hbs_memzero(&f, sizeof f);
    return handled ? 0 : 1;
}
