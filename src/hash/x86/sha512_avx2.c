/* SHA-512 of four messages at once with AVX2 (FIPS 180-4).
 *
 * Message i of a group of four is lane i of a __m256i: working variable a of all four
 * messages sits in one register, word t of the schedule in another, so a round is the scalar
 * round written with vector operations. AVX2 has no 64-bit rotation: each is two shifts
 * XORed in (a byte shuffle for sigma0's rotation by 8). Maj reuses the a ^ b of the round
 * before as this round's b ^ c. The 80 rounds are unrolled, and so is the schedule, which is
 * computed sixteen words at a time between groups of sixteen rounds: with sixteen registers
 * the schedule lives in memory anyway, and the rounds then hold only the working variables.
 *
 * All messages of a batch have the same length, so their block structure and padding are the
 * same. Once per batch: the final block's padding as a byte mask and a template (the 0x80 and
 * the length, as big-endian words), and, where the padding spills into a block of its own
 * (or the message ends on a block boundary), that block's whole schedule with the round
 * constants added in, since it is the same for every message. Per group: whole blocks are
 * loaded straight from the messages and transposed in registers; the final block is loaded
 * the same way from the message tail, then masked and merged with the template. A whole
 * 128-byte load from a tail would read past the end of the batch for the last message or
 * two: those few tails are copied to a buffer first.
 *
 * A last group of two or three messages fills the idle lanes with its last message again and
 * drops their output; a single message left over goes to the portable code, which is faster
 * for one. Nothing branches on or indexes by message data. */
#include <immintrin.h>
#include <string.h>

#include "hbs/hbs.h"
#include "hash/x86/sha512_plan.h"
#include "hash/x86/sha512_x4.h"
#include "hash/x86/x86.h"

#define BLOCK HBS_SHA512_BLOCK

typedef __m256i vec;

/* ---- four lanes --------------------------------------------------------------------------- */

#define ADD(x, y) _mm256_add_epi64((x), (y))
#define XOR(x, y) _mm256_xor_si256((x), (y))
#define AND(x, y) _mm256_and_si256((x), (y))
#define OR(x, y) _mm256_or_si256((x), (y))
#define SHR(x, n) _mm256_srli_epi64((x), (n))
#define SHL(x, n) _mm256_slli_epi64((x), (n))
#define ROR(x, n) OR(SHR((x), (n)), SHL((x), 64 - (n)))
#define BCAST(v) _mm256_set1_epi64x((long long)(v))

/* Sigma1 and Sigma0 of FIPS 180-4, each rotation as two shifts. */
static inline __attribute__((always_inline)) vec big_sigma1(vec e)
{
    return XOR(XOR(XOR(SHR(e, 14), SHL(e, 50)), XOR(SHR(e, 18), SHL(e, 46))),
               XOR(SHR(e, 41), SHL(e, 23)));
}

static inline __attribute__((always_inline)) vec big_sigma0(vec a)
{
    return XOR(XOR(XOR(SHR(a, 28), SHL(a, 36)), XOR(SHR(a, 34), SHL(a, 30))),
               XOR(SHR(a, 39), SHL(a, 25)));
}

/* One round. ab receives a ^ b for the next round, where it is b ^ c; bc is this round's
 * b ^ c from the round before: Maj(a, b, c) = b ^ ((a ^ b) & (b ^ c)). The sum for the new
 * e is ordered so that only its last two additions wait for Sigma1(e). */
static inline __attribute__((always_inline)) void round_x4(vec a, vec b, vec c, vec *d, vec e,
                                                           vec f, vec g, vec *h, vec kw,
                                                           vec *ab, vec bc)
{
    vec t1 = ADD(*h, kw);
    (void)c; /* it enters through bc */
    t1 = ADD(t1, OR(AND(e, f), _mm256_andnot_si256(e, g)));
    t1 = ADD(t1, big_sigma1(e));
    *d = ADD(*d, t1);
    *ab = XOR(a, b);
    *h = ADD(ADD(t1, big_sigma0(a)), XOR(b, AND(*ab, bc)));
}

/* W[t] for the sixteen rounds from t = r, in the ring of 16 words at w:
 * w[t & 15] += sigma0(w[t-15]) + w[t-7] + sigma1(w[t-2]). */
static inline __attribute__((always_inline)) void schedule16_x4(vec *w, unsigned r)
{
    const vec ror8 = _mm256_setr_epi8(1, 2, 3, 4, 5, 6, 7, 0, 9, 10, 11, 12, 13, 14, 15, 8, 1,
                                      2, 3, 4, 5, 6, 7, 0, 9, 10, 11, 12, 13, 14, 15, 8);
#pragma GCC unroll 16
    for (unsigned t = r; t < r + 16; t++) {
        vec w15 = w[(t + 1) & 15], w2 = w[(t + 14) & 15];
        vec s0 = XOR(XOR(ROR(w15, 1), _mm256_shuffle_epi8(w15, ror8)), SHR(w15, 7));
        vec s1 = XOR(XOR(ROR(w2, 19), ROR(w2, 61)), SHR(w2, 6));
        w[t & 15] = ADD(ADD(w[t & 15], s0), ADD(w[(t + 9) & 15], s1));
    }
}

/* Sixteen rounds from round r; KW(t) is K[t] + W[t] for t = r..r+15. x and y carry a ^ b
 * from round to round, alternately. */
#define ROUNDS16(r, KW)                                                                      \
    do {                                                                                     \
        round_x4(a, b, c, &d, e, f, g, &h, KW((r) + 0), &x, y);                              \
        round_x4(h, a, b, &c, d, e, f, &g, KW((r) + 1), &y, x);                              \
        round_x4(g, h, a, &b, c, d, e, &f, KW((r) + 2), &x, y);                              \
        round_x4(f, g, h, &a, b, c, d, &e, KW((r) + 3), &y, x);                              \
        round_x4(e, f, g, &h, a, b, c, &d, KW((r) + 4), &x, y);                              \
        round_x4(d, e, f, &g, h, a, b, &c, KW((r) + 5), &y, x);                              \
        round_x4(c, d, e, &f, g, h, a, &b, KW((r) + 6), &x, y);                              \
        round_x4(b, c, d, &e, f, g, h, &a, KW((r) + 7), &y, x);                              \
        round_x4(a, b, c, &d, e, f, g, &h, KW((r) + 8), &x, y);                              \
        round_x4(h, a, b, &c, d, e, f, &g, KW((r) + 9), &y, x);                              \
        round_x4(g, h, a, &b, c, d, e, &f, KW((r) + 10), &x, y);                             \
        round_x4(f, g, h, &a, b, c, d, &e, KW((r) + 11), &y, x);                             \
        round_x4(e, f, g, &h, a, b, c, &d, KW((r) + 12), &x, y);                             \
        round_x4(d, e, f, &g, h, a, b, &c, KW((r) + 13), &y, x);                             \
        round_x4(c, d, e, &f, g, h, a, &b, KW((r) + 14), &x, y);                             \
        round_x4(b, c, d, &e, f, g, h, &a, KW((r) + 15), &y, x);                             \
    } while (0)

#define KW_RING(t) ADD(w[(t) & 15], BCAST(k[t]))
#define KW_CONST(t) BCAST(kw[t])

/* s += the working variables after the 80 rounds. */
static inline __attribute__((always_inline)) void add_state(vec s[8], vec a, vec b, vec c,
                                                            vec d, vec e, vec f, vec g, vec h)
{
    s[0] = ADD(s[0], a);
    s[1] = ADD(s[1], b);
    s[2] = ADD(s[2], c);
    s[3] = ADD(s[3], d);
    s[4] = ADD(s[4], e);
    s[5] = ADD(s[5], f);
    s[6] = ADD(s[6], g);
    s[7] = ADD(s[7], h);
}

/* One compression of four blocks, given as 16 transposed big-endian words in w, which serves
 * as the schedule's ring and is left holding W[64..79]. */
static void compress_x4(vec s[8], vec *restrict w)
{
    vec a = s[0], b = s[1], c = s[2], d = s[3], e = s[4], f = s[5], g = s[6], h = s[7];
    vec x, y = XOR(b, c);
    /* Hidden from the optimizer, so that the round constants are broadcast from memory
     * rather than built in a general register and moved over. */
    const uint64_t *k = hbs_sha512_K;
    __asm__("" : "+r"(k));
    ROUNDS16(0, KW_RING);
    schedule16_x4(w, 16);
    ROUNDS16(16, KW_RING);
    schedule16_x4(w, 32);
    ROUNDS16(32, KW_RING);
    schedule16_x4(w, 48);
    ROUNDS16(48, KW_RING);
    schedule16_x4(w, 64);
    ROUNDS16(64, KW_RING);
    add_state(s, a, b, c, d, e, f, g, h);
}

/* One compression of a block that is the same in every lane, from its K + W. */
static void compress_const_x4(vec s[8], const uint64_t kw[80])
{
    vec a = s[0], b = s[1], c = s[2], d = s[3], e = s[4], f = s[5], g = s[6], h = s[7];
    vec x, y = XOR(b, c);
    ROUNDS16(0, KW_CONST);
    ROUNDS16(16, KW_CONST);
    ROUNDS16(32, KW_CONST);
    ROUNDS16(48, KW_CONST);
    ROUNDS16(64, KW_CONST);
    add_state(s, a, b, c, d, e, f, g, h);
}

#define SG_V vec
#define SG_LANES 4
#define SG_NAME(f) f##_x4
#define SG_BCAST BCAST
#define SG_MERGE(m, mask, tmpl) OR(AND((m), (mask)), (tmpl))
#include "hash/x86/sha512_group.h"

/* ---- the batch ------------------------------------------------------------------------------- */

void hbs_sha512_many_avx2(uint8_t *out, const hbs_sha512_ctx *prefix, const uint8_t *in,
                          size_t inlen, size_t count)
{
    const size_t groups = count / 4, left = count % 4;
    hbs_sha512_plan pl;
    uint8_t copy[4][BLOCK];
    vec m[16];
    int copied = 0;

    if (count == 0)
        return;
    if (count == 1) {
        hbs_sha512_many_portable(out, prefix, in, inlen, count);
        return;
    }
    hbs_sha512_plan_batch(&pl, prefix, inlen, count);
    for (size_t g = 0; g < groups; g++)
        group_x4(out, &pl, in, 4 * g, 4, m, copy, &copied);
    if (left >= 2) {
        group_x4(out, &pl, in, 4 * groups, left, m, copy, &copied);
    } else if (left == 1) {
        const size_t last = count - 1;
        hbs_sha512_many_portable(out + 64 * last, prefix, inlen ? in + last * inlen : in, inlen,
                                 1);
    }

    hbs_memzero(pl.h, sizeof pl.h);
    if (copied)
        hbs_memzero(copy, sizeof copy);
    hbs_memzero(m, sizeof m);
}
