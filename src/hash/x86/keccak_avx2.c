/* SHAKE256 of four messages at once with AVX2 (FIPS 202).
 *
 * The Keccak state of message i is lane i of 25 __m256i words: word (x, y) of all four
 * states sits in one register, so a round of Keccak-f[1600] is the scalar round written
 * with vector operations. AVX2 has no 64-bit rotation: it is two shifts and an OR, except
 * the rotations by 8 and 56 bits, which are byte shuffles; chi's ~b & c is vpandn.
 *
 * All messages of a batch have the same length, so the sponge's block structure and the
 * padding are the same for each: whole rate blocks are gathered straight from the messages
 * (one vpgatherqq per 64-bit word, the gather indices being the messages' offsets), the
 * final block XORs in the message tail and then one constant per padding byte. A batch
 * whose count is not a multiple of four fills the idle lanes with the last message again
 * and throws their output away. Nothing branches on or indexes by message data. */
#include <immintrin.h>
#include <string.h>

#include "hbs/hbs.h"
#include "hash/x86/x86.h"

#define LANES 4
#define RATE HBS_SHAKE256_RATE
#define RATE_WORDS (RATE / 8)

static const uint64_t RC[24] = {
    0x0000000000000001ULL, 0x0000000000008082ULL, 0x800000000000808aULL, 0x8000000080008000ULL,
    0x000000000000808bULL, 0x0000000080000001ULL, 0x8000000080008081ULL, 0x8000000000008009ULL,
    0x000000000000008aULL, 0x0000000000000088ULL, 0x0000000080008009ULL, 0x000000008000000aULL,
    0x000000008000808bULL, 0x800000000000008bULL, 0x8000000000008089ULL, 0x8000000000008003ULL,
    0x8000000000008002ULL, 0x8000000000000080ULL, 0x000000000000800aULL, 0x800000008000000aULL,
    0x8000000080008081ULL, 0x8000000000008080ULL, 0x0000000080000001ULL, 0x8000000080008008ULL,
};

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
        keccak_round_x4(t, s, RC[i], rot8, rot56);
        keccak_round_x4(s, t, RC[i + 1], rot8, rot56);
    }
}

/* Scratch that outlives one group of lanes, wiped once per batch. */
typedef struct {
    __m256i s[25];
    uint64_t words[RATE_WORDS * LANES]; /* squeezed words: word j of lane l at j*LANES + l */
    uint64_t tail[LANES];               /* message tails shorter than one word */
} x4_scratch;

static inline __m256i gather(const uint8_t *p, __m256i idx)
{
    return _mm256_i64gather_epi64((const long long *)(const void *)p, idx, 1);
}

/* SHAKE256 of messages first .. first+lanes-1 (1 <= lanes <= LANES); idle lanes repeat
 * message first+lanes-1. */
static void shake256_x4(x4_scratch *w, uint8_t *out, size_t outlen, const uint8_t *in,
                        size_t inlen, size_t first, size_t lanes)
{
    __m256i *s = w->s;
    long long off[LANES];
    __m256i idx;
    size_t left = inlen, done = 0;
    const uint8_t *p = in;

    for (size_t l = 0; l < LANES; l++)
        off[l] = (long long)((first + (l < lanes ? l : lanes - 1)) * inlen);
    idx = _mm256_loadu_si256((const __m256i *)(const void *)off);
    for (unsigned j = 0; j < 25; j++)
        s[j] = _mm256_setzero_si256();

    /* whole rate blocks */
    while (left >= RATE) {
        for (unsigned j = 0; j < RATE_WORDS; j++)
            s[j] = XOR(s[j], gather(p + 8 * j, idx));
        keccak_f1600_x4(s);
        p += RATE;
        left -= RATE;
    }

    /* the final block: whole words, the partial word, then pad10*1 after 0x1f */
    const size_t whole = left / 8, part = left % 8;
    for (size_t j = 0; j < whole; j++)
        s[j] = XOR(s[j], gather(p + 8 * j, idx));
    if (part) {
        __m256i t;
        if (inlen >= 8) {
            /* the word that ends where the message ends, shifted down to its last bytes */
            t = gather(p + left - 8, idx);
            t = _mm256_srlv_epi64(t, _mm256_set1_epi64x((long long)(64 - 8 * part)));
        } else {
            for (size_t l = 0; l < LANES; l++) {
                w->tail[l] = 0;
                memcpy(&w->tail[l], in + (size_t)off[l], part);
            }
            t = _mm256_loadu_si256((const __m256i *)(const void *)w->tail);
        }
        s[whole] = XOR(s[whole], t);
    }
    s[whole] = XOR(s[whole], _mm256_set1_epi64x((long long)(0x1fULL << (8 * part))));
    s[RATE_WORDS - 1] = XOR(s[RATE_WORDS - 1], _mm256_set1_epi64x((long long)(0x80ULL << 56)));
    keccak_f1600_x4(s);

    /* squeeze */
    for (;;) {
        const size_t take = outlen - done < RATE ? outlen - done : RATE;
        const size_t tw = take / 8, tb = take % 8;
        for (size_t j = 0; j < tw + (tb != 0); j++)
            _mm256_storeu_si256((__m256i *)(void *)&w->words[j * LANES], s[j]);
        for (size_t l = 0; l < lanes; l++) {
            uint8_t *o = out + (first + l) * outlen + done;
            for (size_t j = 0; j < tw; j++)
                memcpy(o + 8 * j, &w->words[j * LANES + l], 8);
            if (tb)
                memcpy(o + 8 * tw, &w->words[tw * LANES + l], tb);
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
    x4_scratch w;
    if (count == 0 || outlen == 0)
        return;
    for (size_t i = 0; i < count; i += LANES)
        shake256_x4(&w, out, outlen, in, inlen, i, count - i < LANES ? count - i : LANES);
    hbs_memzero(&w, sizeof w);
}
