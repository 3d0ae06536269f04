/* SHAKE256 of eight messages at once with AVX-512 (FIPS 202).
 *
 * The Keccak state of message i is lane i of 25 __m512i words: word (x, y) of all eight
 * states sits in one register, so a round of Keccak-f[1600] is the scalar round written
 * with vector operations. vprolq does the rotations and vpternlogq both theta's five-way
 * column parities (two three-way XORs each) and chi's a ^ (~b & c) (one instruction).
 *
 * All messages of a batch have the same length, so the sponge's block structure and the
 * padding are the same for each: the padding is built once per batch, as state words.
 * Message bytes come in as 64-byte rows per lane (byte-masked loads, which neither read
 * nor fault past the message) transposed into state words; output leaves the same way
 * through byte-masked stores. The common SLH-DSA case, one block in and at most 64 bytes
 * out, runs with the whole state in registers. A batch whose count is not a multiple of
 * eight fills the idle lanes with the last message again and throws their output away; a
 * group of at most four lanes (a small batch, or a batch's tail) permutes only lanes 0..3,
 * in 256-bit registers, at about half the cost.
 * Nothing branches on or indexes by message data.
 *
 * A round is 29 vprolq and 66 logic operations for eight lanes; where vprolq issues once a
 * cycle (as on AMD Zen 4) the rotations set the pace. */
#include <immintrin.h>
#include <string.h>

#include "hbs/hbs.h"
#include "hash/x86/keccak_x8.h"
#include "hash/x86/x86.h"

#define LANES 8
/* Rates in 64-bit words: SHAKE256 (136 bytes) and SHAKE128 (168); arrays take the larger.
 * Functions below take the rate as an argument that is a constant after inlining. */
#define MAX_RATE_WORDS (HBS_SHAKE128_RATE / 8)

/* The out-of-line copies, for states in memory: all eight lanes, or lanes 0..3 only (the
 * others are left undefined), about twice as fast where a group has at most four lanes. */
static __attribute__((noinline)) void keccak_f1600_x8(__m512i s[25]) { permute_x8(s); }
static __attribute__((noinline)) void keccak_f1600_low4(__m512i s[25]) { permute_low4_x8(s, 0); }

/* Rows r[0..7] (row l: eight 64-bit words of lane l) into columns (column j: word j of
 * every lane), or back: the transposition is its own inverse. */
static inline void transpose8(__m512i r[8])
{
    const __m512i t0 = _mm512_unpacklo_epi64(r[0], r[1]), t1 = _mm512_unpackhi_epi64(r[0], r[1]);
    const __m512i t2 = _mm512_unpacklo_epi64(r[2], r[3]), t3 = _mm512_unpackhi_epi64(r[2], r[3]);
    const __m512i t4 = _mm512_unpacklo_epi64(r[4], r[5]), t5 = _mm512_unpackhi_epi64(r[4], r[5]);
    const __m512i t6 = _mm512_unpacklo_epi64(r[6], r[7]), t7 = _mm512_unpackhi_epi64(r[6], r[7]);
    /* 128-bit blocks: 0x88 takes blocks 0 and 2 of each source, 0xdd blocks 1 and 3 */
    const __m512i u0 = _mm512_shuffle_i64x2(t0, t2, 0x88), u1 = _mm512_shuffle_i64x2(t1, t3, 0x88);
    const __m512i u2 = _mm512_shuffle_i64x2(t0, t2, 0xdd), u3 = _mm512_shuffle_i64x2(t1, t3, 0xdd);
    const __m512i u4 = _mm512_shuffle_i64x2(t4, t6, 0x88), u5 = _mm512_shuffle_i64x2(t5, t7, 0x88);
    const __m512i u6 = _mm512_shuffle_i64x2(t4, t6, 0xdd), u7 = _mm512_shuffle_i64x2(t5, t7, 0xdd);
    r[0] = _mm512_shuffle_i64x2(u0, u4, 0x88);
    r[1] = _mm512_shuffle_i64x2(u1, u5, 0x88);
    r[2] = _mm512_shuffle_i64x2(u2, u6, 0x88);
    r[3] = _mm512_shuffle_i64x2(u3, u7, 0x88);
    r[4] = _mm512_shuffle_i64x2(u0, u4, 0xdd);
    r[5] = _mm512_shuffle_i64x2(u1, u5, 0xdd);
    r[6] = _mm512_shuffle_i64x2(u2, u6, 0xdd);
    r[7] = _mm512_shuffle_i64x2(u3, u7, 0xdd);
}

/* Mask of the first n bytes of a 64-byte row (n <= 64). */
static inline __mmask64 first_bytes(size_t n)
{
    return n >= 64 ? ~(__mmask64)0 : ((__mmask64)1 << n) - 1;
}

/* Eight words of each lane from p[l] + at as columns: word j of every lane in r[j]. Only
 * the bytes in mask m are read (the others are zero), and a masked-off byte never faults,
 * so a row may end anywhere, even at the end of mapped memory. Written out lane by lane, as
 * are the other per-lane steps: loops here keep the rows out of registers. */
static inline void load_columns(__m512i r[8], const uint8_t *const p[LANES], size_t at,
                                __mmask64 m)
{
    r[0] = _mm512_maskz_loadu_epi8(m, p[0] + at);
    r[1] = _mm512_maskz_loadu_epi8(m, p[1] + at);
    r[2] = _mm512_maskz_loadu_epi8(m, p[2] + at);
    r[3] = _mm512_maskz_loadu_epi8(m, p[3] + at);
    r[4] = _mm512_maskz_loadu_epi8(m, p[4] + at);
    r[5] = _mm512_maskz_loadu_epi8(m, p[5] + at);
    r[6] = _mm512_maskz_loadu_epi8(m, p[6] + at);
    r[7] = _mm512_maskz_loadu_epi8(m, p[7] + at);
    transpose8(r);
}

/* The inverse: columns col[0..7] to rows, the bytes in m of row l stored at o[l] + at for
 * the first `lanes` lanes; the idle lanes store nothing. */
static inline void store_columns(uint8_t *const o[LANES], size_t at, const __m512i col[8],
                                 __mmask64 m, size_t lanes)
{
    __m512i r[8] = {col[0], col[1], col[2], col[3], col[4], col[5], col[6], col[7]};
    transpose8(r);
    _mm512_mask_storeu_epi8(o[0] + at, m, r[0]);
    _mm512_mask_storeu_epi8(o[1] + at, lanes > 1 ? m : 0, r[1]);
    _mm512_mask_storeu_epi8(o[2] + at, lanes > 2 ? m : 0, r[2]);
    _mm512_mask_storeu_epi8(o[3] + at, lanes > 3 ? m : 0, r[3]);
    _mm512_mask_storeu_epi8(o[4] + at, lanes > 4 ? m : 0, r[4]);
    _mm512_mask_storeu_epi8(o[5] + at, lanes > 5 ? m : 0, r[5]);
    _mm512_mask_storeu_epi8(o[6] + at, lanes > 6 ? m : 0, r[6]);
    _mm512_mask_storeu_epi8(o[7] + at, lanes > 7 ? m : 0, r[7]);
}

/* One block of n <= RATE message bytes into the rate of s: XORed in, or just written if
 * `fresh` (the first block). pad is XORed in too: the padding columns for the last block,
 * NULL for the others. Lane l's bytes start at p[l] = base + off[l]. Bytes 0..127 are two
 * 64-byte rows per lane; word 16 is one gather of each lane's last eight bytes, shifted
 * down. base is not used when n is 0 (it may then be NULL). */
static inline __attribute__((always_inline)) void
absorb_block(__m512i s[25], const uint8_t *const p[LANES], const uint8_t *base, __m512i off,
             size_t n, int fresh, const __m512i *pad, const size_t rate)
{
    const __m512i z = _mm512_setzero_si512();
    __m512i w[MAX_RATE_WORDS + 3];
    if (n > 0)
        load_columns(w, p, 0, first_bytes(n));
    else
        w[0] = w[1] = w[2] = w[3] = w[4] = w[5] = w[6] = w[7] = z;
    if (n > 64)
        load_columns(w + 8, p, 64, first_bytes(n - 64));
    else
        w[8] = w[9] = w[10] = w[11] = w[12] = w[13] = w[14] = w[15] = z;
    if (rate == HBS_SHAKE256_RATE) {
        /* one word past 128: a gather of each lane's last eight bytes, shifted down */
        w[16] = z;
        if (n > 128) {
            w[16] = _mm512_i64gather_epi64(off, base + n - 8, 1);
            w[16] = _mm512_srl_epi64(w[16], _mm_cvtsi64_si128((long long)(8 * (rate - n))));
        }
    } else if (n > 128) { /* SHAKE128: five words past 128 */
        load_columns(w + 16, p, 128, first_bytes(n - 128));
    } else {
        w[16] = w[17] = w[18] = w[19] = w[20] = z;
    }
    (void)off;
    (void)base;
    for (unsigned j = 0; j < rate / 8; j++) {
        const __m512i v = pad ? XOR(w[j], pad[j]) : w[j];
        s[j] = fresh ? v : XOR(s[j], v);
    }
}

/* The padding of a last block of n < rate bytes, as columns: 0x1f after the message,
 * 0x80 in the last byte of the rate. The same for every lane and group of a batch. */
static void padding_columns(__m512i pad[MAX_RATE_WORDS], size_t n, size_t rate)
{
    for (unsigned j = 0; j < rate / 8; j++) {
        uint64_t v = j == n / 8 ? 0x1fULL << (8 * (n % 8)) : 0;
        if (j == rate / 8 - 1)
            v ^= 0x80ULL << 56;
        pad[j] = _mm512_set1_epi64((long long)v);
    }
}

/* Message and output pointers of one group of lanes: lane l serves message first + l;
 * idle lanes (l >= lanes) repeat the last real one. */
typedef struct {
    const uint8_t *p[LANES];
    uint8_t *o[LANES];
    __m512i off; /* message offsets from the batch's first message, for gathers */
    size_t lanes;
} lane_group;

static void lane_group_init(lane_group *g, uint8_t *out, size_t outlen, const uint8_t *in,
                            size_t inlen, size_t first, size_t lanes)
{
    long long offs[LANES];
    for (size_t l = 0; l < LANES; l++) {
        const size_t m = first + (l < lanes ? l : lanes - 1);
        offs[l] = (long long)(m * inlen);
        g->p[l] = inlen ? in + m * inlen : in; /* never offset a NULL base */
        g->o[l] = out + m * outlen;
    }
    g->off = _mm512_loadu_si512(offs);
    g->lanes = lanes;
}

/* The common case in SLH-DSA: a message shorter than one block and at most 64 bytes out.
 * The state is a local array indexed only by constants, so it stays in registers from the
 * loads to the stores, and the unused part of the last round is dropped. */
static inline __attribute__((always_inline)) void
shake_x8_short(const lane_group *g, const __m512i pad[MAX_RATE_WORDS], const uint8_t *in,
               size_t inlen, size_t outlen, const size_t rate)
{
    const __m512i z = _mm512_setzero_si512();
    __m512i s[25];
    absorb_block(s, g->p, in, g->off, inlen, 1, pad, rate);
    for (unsigned j = (unsigned)(rate / 8); j < 25; j++)
        s[j] = z;
    if (g->lanes <= 4)
        permute_low4_x8(s, KECCAK_CAPACITY_WORDS(rate / 8));
    else
        permute_zero_x8(s, KECCAK_CAPACITY_WORDS(rate / 8));
    store_columns(g->o, 0, s, first_bytes(outlen), g->lanes);
}

/* Any lengths: whole blocks, the last (partial, perhaps empty) with its padding, then as
 * many squeezes as outlen needs. The state s is the caller's, to be wiped. */
static inline __attribute__((always_inline)) void
shake_x8(const lane_group *g0, const __m512i pad[MAX_RATE_WORDS], __m512i s[25],
         const uint8_t *in, size_t inlen, size_t outlen, const size_t rate)
{
    const __m512i z = _mm512_setzero_si512();
    lane_group g = *g0;
    void (*const permute)(__m512i *) = g.lanes <= 4 ? keccak_f1600_low4 : keccak_f1600_x8;
    size_t pos = 0, done = 0;

    for (unsigned j = (unsigned)(rate / 8); j < 25; j++)
        s[j] = z;
    for (;;) {
        const size_t n = inlen - pos < rate ? inlen - pos : rate;
        const int last = n < rate;
        absorb_block(s, g.p, n ? in + pos : in, g.off, n, pos == 0, last ? pad : NULL, rate);
        if (last)
            break;
        for (size_t l = 0; l < LANES; l++)
            g.p[l] += n;
        pos += n;
        permute(s);
    }
    permute(s);

    for (;;) { /* squeeze, 64 bytes of each lane at a time */
        const size_t take = outlen - done < rate ? outlen - done : rate;
        for (size_t c = 0; 64 * c < take; c++) /* c = 2: s[16..23] read, the rate's stored */
            store_columns(g.o, done + 64 * c, s + 8 * c, first_bytes(take - 64 * c), g.lanes);
        done += take;
        if (done == outlen)
            break;
        permute(s);
    }
}

static inline __attribute__((always_inline)) void
shake_many(uint8_t *out, size_t outlen, const uint8_t *in, size_t inlen, size_t count,
           const size_t rate)
{
    __m512i pad[MAX_RATE_WORDS], s[25];
    lane_group g;
    if (count == 0 || outlen == 0)
        return;
    padding_columns(pad, inlen % rate, rate);
    for (size_t i = 0; i < count; i += LANES) {
        lane_group_init(&g, out, outlen, in, inlen, i, count - i < LANES ? count - i : LANES);
        if (inlen < rate && outlen <= 64)
            shake_x8_short(&g, pad, in, inlen, outlen, rate);
        else
            shake_x8(&g, pad, s, in, inlen, outlen, rate);
    }
    hbs_memzero(s, sizeof s);
}

void hbs_shake256_many_avx512(uint8_t *out, size_t outlen, const uint8_t *in, size_t inlen,
                              size_t count)
{
    shake_many(out, outlen, in, inlen, count, HBS_SHAKE256_RATE);
}

void hbs_shake128_many_avx512(uint8_t *out, size_t outlen, const uint8_t *in, size_t inlen,
                              size_t count)
{
    shake_many(out, outlen, in, inlen, count, HBS_SHAKE128_RATE);
}
