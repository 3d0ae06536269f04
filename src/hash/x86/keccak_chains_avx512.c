/* SHAKE256 hash chains in eight AVX-512 lanes (the hbs_shake256_chains contract of hash.h).
 *
 * As with the SHA-256 chain kernel, each lane walks one chain for all its steps: a step's
 * state is the chain's template (its one padded block with the counter and value cleared),
 * the counter put into its bytes, and the previous output, which is already the first
 * state words of the permutation and only moves to the value's words. A finished lane
 * writes back its value and takes the next chain.
 *
 * Covered: SLH-DSA's SHAKE sets (PK.seed, ADRS, value: counter = hash address at n + 28,
 * value at n + 32, 2n + 32 bytes), compiled as constants, the length too, so the first
 * round leaves out the words that are zero in every step. When the last chains run in at
 * most four lanes, they move to lanes 0..3 and step as four states, at about half the cost
 * of eight. Step counts are public; nothing indexes memory by chain values. */
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
    uint8_t blk[3 * 64];    /* the padding of every message: 0x1f after it, 0x80 at the
                             * rate's end (bytes past the rate stay zero) */
    uint64_t dv[4][LANES], cv[LANES];
} kchain_state;

typedef struct {
    const uint8_t *steps;
    uint32_t steps_all;
    size_t count, next, len;
    uint8_t *msgs;
    __m512i pad[3], clear[3]; /* the rate's three 64-byte rows: padding, field mask */
    size_t lane_chain[LANES];
} kchain_feed;

/* Mask of the first n bytes of a 64-byte row (n <= 64; larger n count as 64). */
static inline __mmask64 first_bytes(size_t n)
{
    return n >= 64 ? ~(__mmask64)0 : ((__mmask64)1 << n) - 1;
}

/* Row k (bytes 64k .. 64k + 63) of a len-byte message, zero past its end. */
static inline __m512i message_row(const uint8_t *m, size_t len, unsigned k)
{
    return len > 64 * k ? _mm512_maskz_loadu_epi8(first_bytes(len - 64 * k), m + 64 * k)
                        : _mm512_setzero_si512();
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

/* Puts the next chain with steps to take into lane l; 0 when there is none. The message
 * comes in by byte-masked loads (a copy through memory would stall the wide loads on store
 * forwarding) and each word reaches lane l by one masked permute. */
static __attribute__((always_inline)) inline int
krefill(kchain_state *st, kchain_feed *f, unsigned l, const unsigned CO, const unsigned CB,
        const unsigned VO, const unsigned N)
{
    const __mmask8 bit = (__mmask8)(1u << l);
    /* bytes 3..0 of each 64-bit word reversed: a big-endian counter in the low word */
    const __m512i be32 = _mm512_broadcast_i32x4(
        _mm_set_epi8(15, 14, 13, 12, 11, 10, 9, 8, 4, 5, 6, 7, 0, 1, 2, 3));
    for (; f->next < f->count; f->next++) {
        const uint32_t todo = f->steps ? f->steps[f->next] : f->steps_all;
        const uint8_t *m = f->msgs + f->next * f->len;
        __m512i row[3], val, ctr;
        if (todo == 0)
            continue;
        f->lane_chain[l] = f->next++;
        for (unsigned k = 0; k < 3; k++)
            row[k] = _mm512_ternarylogic_epi64(message_row(m, f->len, k), f->clear[k], f->pad[k],
                                               0xea); /* m & clear | pad */
        for (unsigned i = 0; i < RATE_WORDS; i++)
            st->w0[i] = _mm512_mask_permutexvar_epi64(st->w0[i], bit, _mm512_set1_epi64(i % 8),
                                                      row[i / 8]);
        val = _mm512_maskz_loadu_epi8(first_bytes(N), m + VO);
        for (unsigned j = 0; j < N / 8; j++)
            st->d[j] = _mm512_mask_permutexvar_epi64(st->d[j], bit, _mm512_set1_epi64(j), val);
        ctr = _mm512_srli_epi64(_mm512_shuffle_epi8(_mm512_maskz_loadu_epi8(first_bytes(CB), m + CO),
                                                    be32),
                                8 * (4 - CB));
        st->ctr = _mm512_mask_permutexvar_epi64(st->ctr, bit, _mm512_setzero_si512(), ctr);
        st->rem = _mm512_mask_set1_epi64(st->rem, bit, (long long)todo);
        return 1;
    }
    return 0;
}

/* Once no chain is left to start and at most four lanes still run, moves them to lanes
 * 0..3 (in order), so that the remaining steps permute four states instead of eight. */
static __attribute__((always_inline)) inline void kcompact(kchain_state *st, kchain_feed *f,
                                                           __mmask8 *live, const unsigned N)
{
    unsigned k = 0;
    for (unsigned l = 0; l < LANES; l++)
        if (*live >> l & 1)
            f->lane_chain[k++] = f->lane_chain[l];
    for (unsigned i = 0; i < RATE_WORDS; i++)
        st->w0[i] = _mm512_maskz_compress_epi64(*live, st->w0[i]);
    for (unsigned j = 0; j < N / 8; j++)
        st->d[j] = _mm512_maskz_compress_epi64(*live, st->d[j]);
    st->ctr = _mm512_maskz_compress_epi64(*live, st->ctr);
    st->rem = _mm512_maskz_compress_epi64(*live, st->rem);
    *live = (__mmask8)((1u << k) - 1);
}

static __attribute__((always_inline)) inline void
kchains8(kchain_state *st, kchain_feed *f, const unsigned CO, const unsigned CB,
         const unsigned VO, const unsigned N, const unsigned LEN)
{
    const unsigned CW = CO / 8, CP = CO % 8, VW = VO / 8;
    /* words zero in every step: between the word holding the padding byte 0x1f and the
     * rate's last word, and the capacity */
    const uint32_t zero = KECCAK_CAPACITY_WORDS(RATE_WORDS) |
                          (((uint32_t)1 << (RATE_WORDS - 1)) - ((uint32_t)2 << (LEN / 8)));
    uint8_t pattern[64];
    __m512i place, s[25];
    __mmask8 live = 0;

    /* byte p of a word takes counter byte (CP + CB - 1 - p) (big-endian), others zero */
    for (unsigned p = 0; p < 64; p++) {
        const unsigned q = p % 8;
        pattern[p] = q >= CP && q < CP + CB ? (uint8_t)(p - q + (CP + CB - 1 - q)) : 0x80;
    }
    place = _mm512_loadu_si512((const void *)pattern);
    for (unsigned k = 0; k < 3; k++)
        f->pad[k] = _mm512_loadu_si512((const void *)(st->blk + 64 * k));
    for (unsigned k = 0; k < 3; k++) {
        uint8_t keep[64];
        for (unsigned b = 0; b < 64; b++) {
            const unsigned at = 64 * k + b;
            keep[b] = (at >= CO && at < CO + CB) || (at >= VO && at < VO + N) ? 0 : 0xff;
        }
        f->clear[k] = _mm512_loadu_si512((const void *)keep);
    }
    for (unsigned l = 0; l < LANES; l++)
        if (krefill(st, f, l, CO, CB, VO, N))
            live |= (__mmask8)(1u << l);

    while (live) {
        __mmask8 done;
        /* unrolled, so that the copy is loads into registers, not a memcpy to the stack */
#pragma GCC unroll 25
        for (unsigned i = 0; i < 25; i++)
            s[i] = i >= RATE_WORDS || zero >> i & 1 ? _mm512_setzero_si512() : st->w0[i];
        s[CW] = _mm512_or_si512(s[CW], _mm512_shuffle_epi8(st->ctr, place));
#pragma GCC unroll 4
        for (unsigned j = 0; j < N / 8; j++)
            s[VW + j] = st->d[j];
        if (live & 0xf0)
            permute_zero_x8(s, zero);
        else
            permute_low4_x8(s, zero);
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
        if (f->next >= f->count && (live & 0xf0) && __builtin_popcount(live) <= 4)
            kcompact(st, f, &live, N);
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
    if (cb == 4 && n == 16 && co == 44 && vo == 48 && len == 64)
        kchains8(&st, &f, 44, 4, 48, 16, 64); /* SLH-DSA-SHAKE-128 */
    else if (cb == 4 && n == 24 && co == 52 && vo == 56 && len == 80)
        kchains8(&st, &f, 52, 4, 56, 24, 80); /* SLH-DSA-SHAKE-192 */
    else if (cb == 4 && n == 32 && co == 60 && vo == 64 && len == 96)
        kchains8(&st, &f, 60, 4, 64, 32, 96); /* SLH-DSA-SHAKE-256 */
    else
        handled = 0;
    hbs_memzero(&st, sizeof st);
    hbs_memzero(&f, sizeof f);
    return handled ? 0 : 1;
}
