/* SHAKE256 of four messages at once with AVX2 (FIPS 202).
 *
 * The Keccak state of message i is lane i of 25 __m256i words: word (x, y) of all four
 * states sits in one register, so a round of Keccak-f[1600] is the scalar round written
 * with vector operations. AVX2 has no 64-bit rotation: it is two shifts and an OR, except
 * the rotations by 8 and 56 bits, which are byte shuffles; chi's ~b & c is vpandn.
 *
 * With sixteen registers the state lives in memory; the rounds are bound by the shifts and
 * logic operations (about 185 a round for four lanes), not by the loads and stores.
 *
 * All messages of a batch have the same length, so the sponge's block structure and the
 * padding are the same for each. Message words come in four at a time per lane (loads,
 * masked loads for a short last group) and are transposed into state words; output words
 * leave the same way. A batch whose count is not a multiple of four fills the idle lanes
 * with the last message again and throws their output away. Nothing branches on or
 * indexes by message data. */
#include <immintrin.h>
#include <string.h>

#include "hbs/hbs.h"
#include "hash/x86/x86.h"

#define LANES 4
#define RATE HBS_SHAKE256_RATE
#define RATE_WORDS (RATE / 8)

#define XOR(a, b) _mm256_xor_si256((a), (b))
#define CHI(a, b, c) XOR((a), _mm256_andnot_si256((b), (c))) /* a ^ (~b & c) */
#define ROL(x, n) _mm256_or_si256(_mm256_slli_epi64((x), (n)), _mm256_srli_epi64((x), 64 - (n)))

/* One round from `a` into `e`; word (x, y) is index x + 5y. For each output plane the five
 * words that pi moves there are gathered with theta's column term and rho's rotation into
 * b0..b4, then chi mixes them; iota touches word 0. rot8 and rot56 are the byte shuffles
 * that rotate each 64-bit word left by 8 and 56 bits. */
static inline __attribute__((always_inline)) void
keccak_round_x4(__m256i *restrict e, const __m256i *restrict a, uint64_t rc, __m256i rot8,
                __m256i rot56)
{
    __m256i b0, b1, b2, b3, b4;
    const __m256i c0 = XOR(XOR(XOR(a[0], a[5]), XOR(a[10], a[15])), a[20]);
    const __m256i c1 = XOR(XOR(XOR(a[1], a[6]), XOR(a[11], a[16])), a[21]);
    const __m256i c2 = XOR(XOR(XOR(a[2], a[7]), XOR(a[12], a[17])), a[22]);
    const __m256i c3 = XOR(XOR(XOR(a[3], a[8]), XOR(a[13], a[18])), a[23]);
    const __m256i c4 = XOR(XOR(XOR(a[4], a[9]), XOR(a[14], a[19])), a[24]);
    const __m256i d0 = XOR(c4, ROL(c1, 1));
    const __m256i d1 = XOR(c0, ROL(c2, 1));
    const __m256i d2 = XOR(c1, ROL(c3, 1));
    const __m256i d3 = XOR(c2, ROL(c4, 1));
    const __m256i d4 = XOR(c3, ROL(c0, 1));
    /* plane 0 */
    b0 = XOR(a[0], d0);
    b1 = ROL(XOR(a[6], d1), 44);
    b2 = ROL(XOR(a[12], d2), 43);
    b3 = ROL(XOR(a[18], d3), 21);
    b4 = ROL(XOR(a[24], d4), 14);
    e[0] = XOR(CHI(b0, b1, b2), _mm256_set1_epi64x((long long)rc));
    e[1] = CHI(b1, b2, b3);
    e[2] = CHI(b2, b3, b4);
    e[3] = CHI(b3, b4, b0);
    e[4] = CHI(b4, b0, b1);
    /* plane 1 */
    b0 = ROL(XOR(a[3], d3), 28);
    b1 = ROL(XOR(a[9], d4), 20);
    b2 = ROL(XOR(a[10], d0), 3);
    b3 = ROL(XOR(a[16], d1), 45);
    b4 = ROL(XOR(a[22], d2), 61);
    e[5] = CHI(b0, b1, b2);
    e[6] = CHI(b1, b2, b3);
    e[7] = CHI(b2, b3, b4);
    e[8] = CHI(b3, b4, b0);
    e[9] = CHI(b4, b0, b1);
    /* plane 2 */
    b0 = ROL(XOR(a[1], d1), 1);
    b1 = ROL(XOR(a[7], d2), 6);
    b2 = ROL(XOR(a[13], d3), 25);
    b3 = _mm256_shuffle_epi8(XOR(a[19], d4), rot8);
    b4 = ROL(XOR(a[20], d0), 18);
    e[10] = CHI(b0, b1, b2);
    e[11] = CHI(b1, b2, b3);
    e[12] = CHI(b2, b3, b4);
    e[13] = CHI(b3, b4, b0);
    e[14] = CHI(b4, b0, b1);
    /* plane 3 */
    b0 = ROL(XOR(a[4], d4), 27);
    b1 = ROL(XOR(a[5], d0), 36);
    b2 = ROL(XOR(a[11], d1), 10);
    b3 = ROL(XOR(a[17], d2), 15);
    b4 = _mm256_shuffle_epi8(XOR(a[23], d3), rot56);
    e[15] = CHI(b0, b1, b2);
    e[16] = CHI(b1, b2, b3);
    e[17] = CHI(b2, b3, b4);
    e[18] = CHI(b3, b4, b0);
    e[19] = CHI(b4, b0, b1);
    /* plane 4 */
    b0 = ROL(XOR(a[2], d2), 62);
    b1 = ROL(XOR(a[8], d3), 55);
    b2 = ROL(XOR(a[14], d4), 39);
    b3 = ROL(XOR(a[15], d0), 41);
    b4 = ROL(XOR(a[21], d1), 2);
    e[20] = CHI(b0, b1, b2);
    e[21] = CHI(b1, b2, b3);
    e[22] = CHI(b2, b3, b4);
    e[23] = CHI(b3, b4, b0);
    e[24] = CHI(b4, b0, b1);
}

/* Keccak-f[1600] on four states, two rounds per step, ping-ponging between two arrays. */
static __attribute__((noinline)) void keccak_f1600_x4(__m256i s[25])
{
    const __m256i rot8 = _mm256_setr_epi8(7, 0, 1, 2, 3, 4, 5, 6, 15, 8, 9, 10, 11, 12, 13, 14,
                                          7, 0, 1, 2, 3, 4, 5, 6, 15, 8, 9, 10, 11, 12, 13, 14);
    const __m256i rot56 = _mm256_setr_epi8(1, 2, 3, 4, 5, 6, 7, 0, 9, 10, 11, 12, 13, 14, 15, 8,
                                           1, 2, 3, 4, 5, 6, 7, 0, 9, 10, 11, 12, 13, 14, 15, 8);
    __m256i t[25];
    for (unsigned i = 0; i < 24; i += 2) {
        keccak_round_x4(t, s, hbs_keccak_rc[i], rot8, rot56);
        keccak_round_x4(s, t, hbs_keccak_rc[i + 1], rot8, rot56);
    }
}

/* The 64-bit word at p + off[l] for each lane l. */
static inline __m256i gather(const uint8_t *p, __m256i off)
{
    return _mm256_i64gather_epi64((const long long *)(const void *)p, off, 1);
}

/* Rows r[0..3] (row l: four 64-bit words of lane l) into columns (column j: word j of
 * every lane), or back: the transposition is its own inverse. */
static inline void transpose4(__m256i r[4])
{
    const __m256i t0 = _mm256_unpacklo_epi64(r[0], r[1]), t1 = _mm256_unpackhi_epi64(r[0], r[1]);
    const __m256i t2 = _mm256_unpacklo_epi64(r[2], r[3]), t3 = _mm256_unpackhi_epi64(r[2], r[3]);
    r[0] = _mm256_permute2x128_si256(t0, t2, 0x20);
    r[1] = _mm256_permute2x128_si256(t1, t3, 0x20);
    r[2] = _mm256_permute2x128_si256(t0, t2, 0x31);
    r[3] = _mm256_permute2x128_si256(t1, t3, 0x31);
}

/* Mask of the first k 64-bit words of a row (k <= 4), for vpmaskmovq. */
static inline __m256i first_words(size_t k)
{
    const __m256i index = _mm256_setr_epi64x(0, 1, 2, 3);
    return _mm256_cmpgt_epi64(_mm256_set1_epi64x((long long)k), index);
}

/* Words at + 0..3 of each lane (the first k of them; the rest zero) as columns: word
 * at + j of every lane in r[j]. Masked-off words are neither read nor fault. Written out
 * lane by lane, as are the other per-lane steps: loops here keep rows out of registers. */
static inline void load_columns(__m256i r[4], const uint8_t *const p[LANES], size_t at,
                                size_t k)
{
    if (k == 4) {
        r[0] = _mm256_loadu_si256((const __m256i *)(const void *)(p[0] + at));
        r[1] = _mm256_loadu_si256((const __m256i *)(const void *)(p[1] + at));
        r[2] = _mm256_loadu_si256((const __m256i *)(const void *)(p[2] + at));
        r[3] = _mm256_loadu_si256((const __m256i *)(const void *)(p[3] + at));
    } else {
        const __m256i m = first_words(k);
        r[0] = _mm256_maskload_epi64((const long long *)(const void *)(p[0] + at), m);
        r[1] = _mm256_maskload_epi64((const long long *)(const void *)(p[1] + at), m);
        r[2] = _mm256_maskload_epi64((const long long *)(const void *)(p[2] + at), m);
        r[3] = _mm256_maskload_epi64((const long long *)(const void *)(p[3] + at), m);
    }
    transpose4(r);
}

/* The first `bytes` (<= 32) bytes of row v to dst: whole words with vpmaskmovq, a last
 * partial word through a small buffer that is wiped. */
static inline void store_row(uint8_t *dst, __m256i v, size_t bytes)
{
    if (bytes == 32) {
        _mm256_storeu_si256((__m256i *)(void *)dst, v);
        return;
    }
    _mm256_maskstore_epi64((long long *)(void *)dst, first_words(bytes / 8), v);
    if (bytes % 8) {
        uint64_t w[4];
        _mm256_storeu_si256((__m256i *)(void *)w, v);
        memcpy(dst + bytes / 8 * 8, &w[bytes / 8], bytes % 8);
        hbs_memzero(w, sizeof w);
    }
}

/* One block of n <= RATE message bytes (no padding) into the rate of s: XORed in, or just
 * written if `fresh` (the first block). Lane l's bytes start at p[l] = base + off[l].
 * Whole words 0..15 come in as rows of four words per lane, transposed; word 16 is one
 * gather. A last partial word is the gather of each lane's last eight bytes shifted down,
 * when the message has eight bytes to read there (`back`), else copied byte by byte.
 * base is not used when n is 0 (it may then be NULL). */
static inline void absorb_block(__m256i s[25], const uint8_t *const p[LANES],
                                const uint8_t *base, __m256i off, size_t n, int fresh,
                                int back)
{
    const __m256i z = _mm256_setzero_si256();
    const size_t whole = n / 8, part = n % 8;
    for (size_t g = 0; g < 4; g++) {
        __m256i r[4];
        const size_t k = whole <= 4 * g ? 0 : whole - 4 * g < 4 ? whole - 4 * g : 4;
        if (k)
            load_columns(r, p, 8 * 4 * g, k);
        else
            r[0] = r[1] = r[2] = r[3] = z;
        for (size_t j = 0; j < 4; j++)
            s[4 * g + j] = fresh ? r[j] : XOR(s[4 * g + j], r[j]);
    }
    const __m256i w16 = whole > 16 ? gather(base + 128, off) : z;
    s[16] = fresh ? w16 : XOR(s[16], w16);
    if (part) {
        __m256i t;
        if (back) {
            t = gather(base + n - 8, off);
            t = _mm256_srl_epi64(t, _mm_cvtsi64_si128((long long)(64 - 8 * part)));
        } else {
            uint64_t w[LANES] = {0, 0, 0, 0};
            for (size_t l = 0; l < LANES; l++)
                memcpy(&w[l], p[l] + 8 * whole, part);
            t = _mm256_loadu_si256((const __m256i *)(const void *)w);
            hbs_memzero(w, sizeof w);
        }
        s[whole] = XOR(s[whole], t);
    }
}

/* SHAKE256 of messages first .. first+lanes-1 (1 <= lanes <= LANES); idle lanes repeat
 * message first+lanes-1. The state s is the caller's, to be wiped. */
static void shake256_x4(__m256i s[25], uint8_t *out, size_t outlen, const uint8_t *in,
                        size_t inlen, size_t first, size_t lanes)
{
    const __m256i z = _mm256_setzero_si256();
    const uint8_t *p[LANES];
    uint8_t *o[LANES];
    long long offs[LANES];
    size_t pos = 0, done = 0;

    for (size_t l = 0; l < LANES; l++) {
        const size_t m = first + (l < lanes ? l : lanes - 1);
        offs[l] = (long long)(m * inlen);
        p[l] = inlen ? in + m * inlen : in; /* never offset a NULL base */
        o[l] = out + m * outlen;
    }
    const __m256i off = _mm256_loadu_si256((const __m256i *)(const void *)offs);

    /* absorb: whole blocks, then the last one, partial (perhaps empty), with pad10*1 after
     * the domain bits 0x1f */
    s[17] = s[18] = s[19] = s[20] = s[21] = s[22] = s[23] = s[24] = z;
    for (;;) {
        const size_t n = inlen - pos < RATE ? inlen - pos : RATE;
        absorb_block(s, p, n ? in + pos : in, off, n, pos == 0, inlen >= 8);
        if (n < RATE)
            break;
        for (size_t l = 0; l < LANES; l++)
            p[l] += n;
        pos += n;
        keccak_f1600_x4(s);
    }
    pos = inlen % RATE;
    s[pos / 8] = XOR(s[pos / 8], _mm256_set1_epi64x((long long)(0x1fULL << (8 * (pos % 8)))));
    s[RATE_WORDS - 1] = XOR(s[RATE_WORDS - 1], _mm256_set1_epi64x((long long)(0x80ULL << 56)));
    keccak_f1600_x4(s);

    /* squeeze, 32 bytes of each lane at a time */
    for (;;) {
        const size_t take = outlen - done < RATE ? outlen - done : RATE;
        for (size_t g = 0; 32 * g < take; g++) { /* g = 4: s[17..19] are read, not stored */
            const size_t bytes = take - 32 * g < 32 ? take - 32 * g : 32;
            const size_t at = done + 32 * g;
            __m256i r[4] = {s[4 * g], s[4 * g + 1], s[4 * g + 2], s[4 * g + 3]};
            transpose4(r);
            store_row(o[0] + at, r[0], bytes);
            if (lanes > 1)
                store_row(o[1] + at, r[1], bytes);
            if (lanes > 2)
                store_row(o[2] + at, r[2], bytes);
            if (lanes > 3)
                store_row(o[3] + at, r[3], bytes);
        }
        done += take;
        if (done == outlen)
            break;
        keccak_f1600_x4(s);
    }
}

void hbs_shake256_many_avx2(uint8_t *out, size_t outlen, const uint8_t *in, size_t inlen,
                            size_t count)
{
    __m256i s[25];
    if (count == 0 || outlen == 0)
        return;
    for (size_t i = 0; i < count; i += LANES)
        shake256_x4(s, out, outlen, in, inlen, i, count - i < LANES ? count - i : LANES);
    hbs_memzero(s, sizeof s);
}
