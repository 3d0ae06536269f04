/* SHAKE256 hash chains in eight AVX-512 lanes (the hbs_shake256_chains contract of hash.h).
 *
 * As with the SHA-256 chain kernel, each lane walks one chain for all its steps: a step's
 * state is the chain's template (its one padded block with the counter and value cleared),
 * the counter put into its bytes, and the previous output, which is already the first
 * state words of the permutation and only moves to the value's words. A finished lane
 * writes back its value and takes the next chain.
 *
 * Covered: one-block messages (len < 136) whose value starts on a state word and whose
 * counter sits inside one word; SLH-DSA's SHAKE sets (counter = hash address at n + 28,
 * value at n + 32) are compiled as constants. Step counts are public; nothing indexes
 * memory by chain values. */
#include <immintrin.h>
#include <string.h>

#include "hbs/hbs.h"
#include "hash/x86/keccak_x8.h"
#include "hash/x86/x86.h"

#define LANES 8
#define RATE HBS_SHAKE256_RATE
#define RATE_WORDS (RATE / 8)

typedef struct {
    __m512i w0[RATE_WORDS]; /* template words, fields cleared */
    __m512i d[4];           /* chain values: the first n / 8 output words */
    __m512i ctr, rem;       /* counter and steps left, per lane (low 32 bits) */
    uint8_t blk[RATE];      /* one template being loaded */
    uint64_t dv[4][LANES], cv[LANES];
} kchain_state;

typedef struct {
    const uint8_t *steps;
    uint32_t steps_all;
    size_t count, next, len;
    uint8_t *msgs;
    size_t lane_chain[LANES];
} kchain_feed;

static inline uint64_t load_le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (unsigned i = 8; i-- > 0;)
        v = v << 8 | p[i];
    return v;
}

static inline uint32_t load_be_n(const uint8_t *p, unsigned bytes)
{
    uint32_t v = 0;
    for (unsigned i = 0; i < bytes; i++)
        v = v << 8 | p[i];
    return v;
}

static inline void store_be_n(uint8_t *p, uint32_t v, unsigned bytes)
{
    for (unsigned i = bytes; i-- > 0; v >>= 8)
        p[i] = (uint8_t)v;
}

static inline void store_le64(uint8_t *p, uint64_t v)
{
    for (unsigned i = 0; i < 8; i++, v >>= 8)
        p[i] = (uint8_t)v;
}

static __attribute__((always_inline)) inline int
krefill(kchain_state *st, kchain_feed *f, unsigned l, const unsigned CO, const unsigned CB,
        const unsigned VO, const unsigned N)
{
    const __mmask8 bit = (__mmask8)(1u << l);
    for (; f->next < f->count; f->next++) {
        const uint32_t todo = f->steps ? f->steps[f->next] : f->steps_all;
        const uint8_t *m = f->msgs + f->next * f->len;
        if (todo == 0)
            continue;
        f->lane_chain[l] = f->next++;
        memcpy(st->blk, m, f->len);
        memset(st->blk + CO, 0, CB);
        memset(st->blk + VO, 0, N);
        for (unsigned i = 0; i < RATE_WORDS; i++)
            st->w0[i] = _mm512_mask_set1_epi64(st->w0[i], bit, (long long)load_le64(st->blk + 8 * i));
        for (unsigned j = 0; j < N / 8; j++)
            st->d[j] = _mm512_mask_set1_epi64(st->d[j], bit, (long long)load_le64(m + VO + 8 * j));
        st->ctr = _mm512_mask_set1_epi64(st->ctr, bit, (long long)load_be_n(m + CO, CB));
        st->rem = _mm512_mask_set1_epi64(st->rem, bit, (long long)todo);
        return 1;
    }
    return 0;
}

static __attribute__((always_inline)) inline void
kchains8(kchain_state *st, kchain_feed *f, const unsigned CO, const unsigned CB,
         const unsigned VO, const unsigned N)
{
    const unsigned CW = CO / 8, CP = CO % 8, VW = VO / 8;
    uint8_t pattern[64];
    __m512i place, s[25];
    __mmask8 live = 0;

    /* byte p of a word takes counter byte (CP + CB - 1 - p) (big-endian), others zero */
    for (unsigned p = 0; p < 64; p++) {
        const unsigned q = p % 8;
        pattern[p] = q >= CP && q < CP + CB ? (uint8_t)(p - q + (CP + CB - 1 - q)) : 0x80;
    }
    place = _mm512_loadu_si512((const void *)pattern);
    for (unsigned l = 0; l < LANES; l++)
        if (krefill(st, f, l, CO, CB, VO, N))
            live |= (__mmask8)(1u << l);

    while (live) {
        __mmask8 done;
        for (unsigned i = 0; i < RATE_WORDS; i++)
            s[i] = st->w0[i];
        for (unsigned i = RATE_WORDS; i < 25; i++)
            s[i] = _mm512_setzero_si512();
        s[CW] = _mm512_or_si512(s[CW], _mm512_shuffle_epi8(st->ctr, place));
        for (unsigned j = 0; j < N / 8; j++)
            s[VW + j] = st->d[j];
        permute_x8(s);
        for (unsigned j = 0; j < N / 8; j++)
            st->d[j] = s[j];
        st->ctr = _mm512_add_epi64(st->ctr, _mm512_set1_epi64(1));
        st->rem = _mm512_sub_epi64(st->rem, _mm512_set1_epi64(1));
        done = _mm512_mask_cmpeq_epi64_mask(live, st->rem, _mm512_setzero_si512());
        if (!done)
            continue;
        for (unsigned j = 0; j < N / 8; j++)
            _mm512_storeu_si512((void *)st->dv[j], st->d[j]);
        _mm512_storeu_si512((void *)st->cv, st->ctr);
        live &= (__mmask8)~done;
        for (unsigned l = 0; l < LANES; l++) {
            if (!(done >> l & 1))
                continue;
            uint8_t *m = f->msgs + f->lane_chain[l] * f->len;
            for (unsigned j = 0; j < N / 8; j++)
                store_le64(m + VO + 8 * j, st->dv[j][l]);
            store_be_n(m + CO, (uint32_t)st->cv[l], CB);
            if (krefill(st, f, l, CO, CB, VO, N))
                live |= (__mmask8)(1u << l);
        }
    }
    hbs_memzero(s, sizeof s);
}

int hbs_shake256_chains_avx512(uint8_t *msgs, size_t len, const hbs_chain_layout *lay,
                               const uint8_t *steps, uint32_t steps_all, size_t count)
{
    kchain_state st;
    kchain_feed f;
    const unsigned co = lay->ctr_off, cb = lay->ctr_bytes, vo = lay->val_off, n = lay->n;
    int handled = 1;

    if (len + 1 > RATE)
        return 1;
    memset(&st, 0, sizeof st);
    st.blk[len] ^= 0x1f;
    st.blk[RATE - 1] ^= 0x80;
    f.steps = steps;
    f.steps_all = steps_all;
    f.count = count;
    f.next = 0;
    f.len = len;
    f.msgs = msgs;
    if (cb == 4 && n == 16 && co == 44 && vo == 48)
        kchains8(&st, &f, 44, 4, 48, 16); /* SLH-DSA-SHAKE-128 */
    else if (cb == 4 && n == 24 && co == 52 && vo == 56)
        kchains8(&st, &f, 52, 4, 56, 24); /* SLH-DSA-SHAKE-192 */
    else if (cb == 4 && n == 32 && co == 60 && vo == 64)
        kchains8(&st, &f, 60, 4, 64, 32); /* SLH-DSA-SHAKE-256 */
    else
        handled = 0;
    hbs_memzero(&st, sizeof st);
    hbs_memzero(&f, sizeof f);
    return handled ? 0 : 1;
}
