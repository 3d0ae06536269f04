/* SHAKE256 of eight messages at once with AVX-512 (FIPS 202).
 *
 * The Keccak state of message i is lane i of 25 __m512i words: word (x, y) of all eight
 * states sits in one register, so a round of Keccak-f[1600] is the scalar round written
 * with vector operations. vprolq does the rotations, vpternlogq the five-way column
 * parities of theta (two three-way XORs), theta's XOR of D folded into one three-way XOR
 * per word, and chi's a ^ (~b & c) in a single instruction.
 *
 * All messages of a batch have the same length, so the sponge's block structure and the
 * padding are the same for each: whole rate blocks are gathered straight from the messages
 * (one vpgatherqq per 64-bit word, the gather indices being the messages' offsets), the
 * final block XORs in the message tail and then one constant per padding byte. A batch
 * whose count is not a multiple of eight fills the idle lanes with the last message again
 * and throws their output away. Nothing branches on or indexes by message data. */
#include <immintrin.h>
#include <string.h>

#include "hbs/hbs.h"
#include "hash/x86/x86.h"

#define LANES 8
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

#define XOR3(a, b, c) _mm512_ternarylogic_epi64((a), (b), (c), 0x96) /* a ^ b ^ c */
#define CHI(a, b, c) _mm512_ternarylogic_epi64((a), (b), (c), 0xd2)  /* a ^ (~b & c) */
#define ROL(x, n) _mm512_rol_epi64((x), (n))

/* One round from `a` into `e`; word (x, y) is index x + 5y. For each output plane the five
 * words that pi moves there are gathered with theta's column term and rho's rotation into
 * b0..b4, then chi mixes them; iota touches word 0. */
static inline __attribute__((always_inline)) void
keccak_round_x8(__m512i *restrict e, const __m512i *restrict a, uint64_t rc)
{
    __m512i b0, b1, b2, b3, b4;
    const __m512i c0 = XOR3(XOR3(a[0], a[5], a[10]), a[15], a[20]);
    const __m512i c1 = XOR3(XOR3(a[1], a[6], a[11]), a[16], a[21]);
    const __m512i c2 = XOR3(XOR3(a[2], a[7], a[12]), a[17], a[22]);
    const __m512i c3 = XOR3(XOR3(a[3], a[8], a[13]), a[18], a[23]);
    const __m512i c4 = XOR3(XOR3(a[4], a[9], a[14]), a[19], a[24]);
    /* theta's D[x] = C[x-1] ^ rol(C[x+1], 1), applied as XOR3(A, C[x-1], rol(C[x+1], 1)) */
    const __m512i r0 = ROL(c0, 1), r1 = ROL(c1, 1), r2 = ROL(c2, 1), r3 = ROL(c3, 1),
                  r4 = ROL(c4, 1);
#define TH0(w) XOR3((w), c4, r1)
#define TH1(w) XOR3((w), c0, r2)
#define TH2(w) XOR3((w), c1, r3)
#define TH3(w) XOR3((w), c2, r4)
#define TH4(w) XOR3((w), c3, r0)
    /* plane 0 */
    b0 = TH0(a[0]);
    b1 = ROL(TH1(a[6]), 44);
    b2 = ROL(TH2(a[12]), 43);
    b3 = ROL(TH3(a[18]), 21);
    b4 = ROL(TH4(a[24]), 14);
    e[0] = _mm512_xor_si512(CHI(b0, b1, b2), _mm512_set1_epi64((long long)rc));
    e[1] = CHI(b1, b2, b3);
    e[2] = CHI(b2, b3, b4);
    e[3] = CHI(b3, b4, b0);
    e[4] = CHI(b4, b0, b1);
    /* plane 1 */
    b0 = ROL(TH3(a[3]), 28);
    b1 = ROL(TH4(a[9]), 20);
    b2 = ROL(TH0(a[10]), 3);
    b3 = ROL(TH1(a[16]), 45);
    b4 = ROL(TH2(a[22]), 61);
    e[5] = CHI(b0, b1, b2);
    e[6] = CHI(b1, b2, b3);
    e[7] = CHI(b2, b3, b4);
    e[8] = CHI(b3, b4, b0);
    e[9] = CHI(b4, b0, b1);
    /* plane 2 */
    b0 = ROL(TH1(a[1]), 1);
    b1 = ROL(TH2(a[7]), 6);
    b2 = ROL(TH3(a[13]), 25);
    b3 = ROL(TH4(a[19]), 8);
    b4 = ROL(TH0(a[20]), 18);
    e[10] = CHI(b0, b1, b2);
    e[11] = CHI(b1, b2, b3);
    e[12] = CHI(b2, b3, b4);
    e[13] = CHI(b3, b4, b0);
    e[14] = CHI(b4, b0, b1);
    /* plane 3 */
    b0 = ROL(TH4(a[4]), 27);
    b1 = ROL(TH0(a[5]), 36);
    b2 = ROL(TH1(a[11]), 10);
    b3 = ROL(TH2(a[17]), 15);
    b4 = ROL(TH3(a[23]), 56);
    e[15] = CHI(b0, b1, b2);
    e[16] = CHI(b1, b2, b3);
    e[17] = CHI(b2, b3, b4);
    e[18] = CHI(b3, b4, b0);
    e[19] = CHI(b4, b0, b1);
    /* plane 4 */
    b0 = ROL(TH2(a[2]), 62);
    b1 = ROL(TH3(a[8]), 55);
    b2 = ROL(TH4(a[14]), 39);
    b3 = ROL(TH0(a[15]), 41);
    b4 = ROL(TH1(a[21]), 2);
    e[20] = CHI(b0, b1, b2);
    e[21] = CHI(b1, b2, b3);
    e[22] = CHI(b2, b3, b4);
    e[23] = CHI(b3, b4, b0);
    e[24] = CHI(b4, b0, b1);
#undef TH0
#undef TH1
#undef TH2
#undef TH3
#undef TH4
}

/* Keccak-f[1600] on eight states. Two rounds per step, ping-ponging between two arrays
 * that the compiler keeps in registers (the loop body indexes them only by constants). */
static __attribute__((noinline)) void keccak_f1600_x8(__m512i s[25])
{
    __m512i a[25], t[25];
    for (unsigned i = 0; i < 25; i++)
        a[i] = s[i];
    for (unsigned i = 0; i < 24; i += 2) {
        keccak_round_x8(t, a, RC[i]);
        keccak_round_x8(a, t, RC[i + 1]);
    }
    for (unsigned i = 0; i < 25; i++)
        s[i] = a[i];
}

/* Scratch that outlives one group of lanes, wiped once per batch. */
typedef struct {
    __m512i s[25];
    uint64_t words[RATE_WORDS * LANES]; /* squeezed words: word j of lane l at j*LANES + l */
    uint64_t tail[LANES];               /* message tails shorter than one word */
} x8_scratch;

/* SHAKE256 of messages first .. first+lanes-1 (1 <= lanes <= LANES); idle lanes repeat
 * message first+lanes-1. */
static void shake256_x8(x8_scratch *w, uint8_t *out, size_t outlen, const uint8_t *in,
                        size_t inlen, size_t first, size_t lanes)
{
    __m512i *s = w->s;
    long long off[LANES];
    __m512i idx;
    size_t left = inlen, done = 0;
    const uint8_t *p = in;

    for (size_t l = 0; l < LANES; l++)
        off[l] = (long long)((first + (l < lanes ? l : lanes - 1)) * inlen);
    idx = _mm512_loadu_si512(off);
    for (unsigned j = 0; j < 25; j++)
        s[j] = _mm512_setzero_si512();

    /* whole rate blocks */
    while (left >= RATE) {
        for (unsigned j = 0; j < RATE_WORDS; j++)
            s[j] = _mm512_xor_si512(s[j], _mm512_i64gather_epi64(idx, p + 8 * j, 1));
        keccak_f1600_x8(s);
        p += RATE;
        left -= RATE;
    }

    /* the final block: whole words, the partial word, then pad10*1 after 0x1f */
    const size_t whole = left / 8, part = left % 8;
    for (size_t j = 0; j < whole; j++)
        s[j] = _mm512_xor_si512(s[j], _mm512_i64gather_epi64(idx, p + 8 * j, 1));
    if (part) {
        __m512i t;
        if (inlen >= 8) {
            /* the word that ends where the message ends, shifted down to its last bytes */
            t = _mm512_i64gather_epi64(idx, p + left - 8, 1);
            t = _mm512_srlv_epi64(t, _mm512_set1_epi64((long long)(64 - 8 * part)));
        } else {
            for (size_t l = 0; l < LANES; l++) {
                w->tail[l] = 0;
                memcpy(&w->tail[l], in + (size_t)off[l], part);
            }
            t = _mm512_loadu_si512(w->tail);
        }
        s[whole] = _mm512_xor_si512(s[whole], t);
    }
    s[whole] = _mm512_xor_si512(s[whole], _mm512_set1_epi64((long long)(0x1fULL << (8 * part))));
    s[RATE_WORDS - 1] =
        _mm512_xor_si512(s[RATE_WORDS - 1], _mm512_set1_epi64((long long)(0x80ULL << 56)));
    keccak_f1600_x8(s);

    /* squeeze */
    for (;;) {
        const size_t take = outlen - done < RATE ? outlen - done : RATE;
        const size_t tw = take / 8, tb = take % 8;
        for (size_t j = 0; j < tw + (tb != 0); j++)
            _mm512_storeu_si512(&w->words[j * LANES], s[j]);
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
        keccak_f1600_x8(s);
    }
}

void hbs_shake256_many_avx512(uint8_t *out, size_t outlen, const uint8_t *in, size_t inlen,
                              size_t count)
{
    x8_scratch w;
    if (count == 0 || outlen == 0)
        return;
    for (size_t i = 0; i < count; i += LANES)
        shake256_x8(&w, out, outlen, in, inlen, i, count - i < LANES ? count - i : LANES);
    hbs_memzero(&w, sizeof w);
}
