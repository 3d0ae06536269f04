/* SHA-512 of eight messages at once with AVX-512 (FIPS 180-4).
 *
 * Message i of a group of eight is lane i of a __m512i: working variable a of all eight
 * messages sits in one register, word t of the schedule in another, so a round is the scalar
 * round written with vector operations. vprorq does the rotations, vpternlogq the three-way
 * XORs of the Sigma and sigma functions, Ch and Maj in one instruction each. The 80 rounds
 * and the schedule are unrolled.
 *
 * All messages of a batch have the same length, so their block structure and padding are the
 * same. Once per batch: the final block's padding as a byte mask and a template (the 0x80 and
 * the length, as big-endian words), and, where the padding spills into a block of its own
 * (or the message ends on a block boundary), that block's whole schedule with the round
 * constants added in, since it is the same for every message. Per group: whole blocks are
 * loaded straight from the messages and transposed in registers; the final block is loaded
 * the same way from the message tail, then masked and merged with the template in one
 * vpternlogq per word. A whole 128-byte load from a tail would read past the end of the
 * batch for the last message or two: those few tails are copied to a buffer first.
 *
 * A last group of two to four messages runs on four lanes of a __m256i (the same code with
 * AVX-512VL), which costs about two thirds of an eight-lane group where 512-bit operations
 * take two passes through 256-bit units (Zen 4); a single message left over goes to the
 * portable code, which is faster for one. Idle lanes repeat the group's last message and
 * their output is dropped.
 * Nothing branches on or indexes by message data. */
#include <immintrin.h>
#include <string.h>

#include "hbs/hbs.h"
#include "hash/x86/sha512_plan.h"
#include "hash/x86/sha512_x4.h"
#include "hash/x86/x86.h"

#define BLOCK HBS_SHA512_BLOCK

/* Sixteen rounds from round r with round function RND; KW(t) is K[t] + W[t]. */
#define ROUNDS16(RND, r, KW)                                                                 \
    do {                                                                                     \
        RND(a, b, c, &d, e, f, g, &h, KW((r) + 0));                                          \
        RND(h, a, b, &c, d, e, f, &g, KW((r) + 1));                                          \
        RND(g, h, a, &b, c, d, e, &f, KW((r) + 2));                                          \
        RND(f, g, h, &a, b, c, d, &e, KW((r) + 3));                                          \
        RND(e, f, g, &h, a, b, c, &d, KW((r) + 4));                                          \
        RND(d, e, f, &g, h, a, b, &c, KW((r) + 5));                                          \
        RND(c, d, e, &f, g, h, a, &b, KW((r) + 6));                                          \
        RND(b, c, d, &e, f, g, h, &a, KW((r) + 7));                                          \
        RND(a, b, c, &d, e, f, g, &h, KW((r) + 8));                                          \
        RND(h, a, b, &c, d, e, f, &g, KW((r) + 9));                                          \
        RND(g, h, a, &b, c, d, e, &f, KW((r) + 10));                                         \
        RND(f, g, h, &a, b, c, d, &e, KW((r) + 11));                                         \
        RND(e, f, g, &h, a, b, c, &d, KW((r) + 12));                                         \
        RND(d, e, f, &g, h, a, b, &c, KW((r) + 13));                                         \
        RND(c, d, e, &f, g, h, a, &b, KW((r) + 14));                                         \
        RND(b, c, d, &e, f, g, h, &a, KW((r) + 15));                                         \
    } while (0)

/* vpternlogq truth tables, operands (x, y, z) */
#define TL_XOR3 0x96  /* x ^ y ^ z */
#define TL_CH 0xca    /* x ? y : z */
#define TL_MAJ 0xe8   /* majority */
#define TL_MERGE 0xea /* (x & y) | z */

#define KW_LOADED(t) ADD(w[t], BCAST(k[t]))
#define KW_NEXT(t) ADD(SR_NAME(next_w)(w, t), BCAST(k[t]))
#define KW_CONST(t) BCAST(kw[t])
#define MERGE(m, mask, tmpl) TL((m), (mask), (tmpl), TL_MERGE)

/* ---- eight lanes (ZMM) ---------------------------------------------------------------------- */

typedef __m512i v8;

#define SR_V v8
#define SR_NAME(f) f##_x8
#define ADD(x, y) _mm512_add_epi64((x), (y))
#define ROR(x, n) _mm512_ror_epi64((x), (n))
#define SHR(x, n) _mm512_srli_epi64((x), (n))
#define TL(x, y, z, f) _mm512_ternarylogic_epi64((x), (y), (z), (f))
#define BCAST(v) _mm512_set1_epi64((long long)(v))
#include "hash/x86/sha512_rounds_avx512.h"

/* Transposes an 8x8 matrix of 64-bit words: word j of r[i] becomes word i of r[j]. */
static inline __attribute__((always_inline)) void transpose_x8(v8 r[8])
{
    const v8 lo = _mm512_setr_epi64(0, 1, 8, 9, 4, 5, 12, 13);
    const v8 hi = _mm512_setr_epi64(2, 3, 10, 11, 6, 7, 14, 15);
    /* pairs of rows interleaved: a0 = r0.0 r1.0 r0.2 r1.2 ..., a1 = r0.1 r1.1 r0.3 r1.3 ... */
    v8 a0 = _mm512_unpacklo_epi64(r[0], r[1]), a1 = _mm512_unpackhi_epi64(r[0], r[1]);
    v8 a2 = _mm512_unpacklo_epi64(r[2], r[3]), a3 = _mm512_unpackhi_epi64(r[2], r[3]);
    v8 a4 = _mm512_unpacklo_epi64(r[4], r[5]), a5 = _mm512_unpackhi_epi64(r[4], r[5]);
    v8 a6 = _mm512_unpacklo_epi64(r[6], r[7]), a7 = _mm512_unpackhi_epi64(r[6], r[7]);
    /* words j and j + 4 of rows 0..3 (b0..b3) or rows 4..7 (b4..b7), for j = 0, 2, 1, 3 */
    v8 b0 = _mm512_permutex2var_epi64(a0, lo, a2), b1 = _mm512_permutex2var_epi64(a0, hi, a2);
    v8 b2 = _mm512_permutex2var_epi64(a1, lo, a3), b3 = _mm512_permutex2var_epi64(a1, hi, a3);
    v8 b4 = _mm512_permutex2var_epi64(a4, lo, a6), b5 = _mm512_permutex2var_epi64(a4, hi, a6);
    v8 b6 = _mm512_permutex2var_epi64(a5, lo, a7), b7 = _mm512_permutex2var_epi64(a5, hi, a7);
    r[0] = _mm512_shuffle_i64x2(b0, b4, 0x44);
    r[4] = _mm512_shuffle_i64x2(b0, b4, 0xee);
    r[2] = _mm512_shuffle_i64x2(b1, b5, 0x44);
    r[6] = _mm512_shuffle_i64x2(b1, b5, 0xee);
    r[1] = _mm512_shuffle_i64x2(b2, b6, 0x44);
    r[5] = _mm512_shuffle_i64x2(b2, b6, 0xee);
    r[3] = _mm512_shuffle_i64x2(b3, b7, 0x44);
    r[7] = _mm512_shuffle_i64x2(b3, b7, 0xee);
}

static inline v8 bswap_x8(v8 x)
{
    const v8 idx = _mm512_broadcast_i32x4(
        _mm_setr_epi8(7, 6, 5, 4, 3, 2, 1, 0, 15, 14, 13, 12, 11, 10, 9, 8));
    return _mm512_shuffle_epi8(x, idx);
}

/* Words 0..15 of the eight blocks at p[0..7], transposed, as big-endian words. */
static inline __attribute__((always_inline)) void load_x8(v8 m[16], const uint8_t *const p[8])
{
#pragma GCC unroll 16
    for (unsigned half = 0; half < 2; half++) {
        v8 *r = m + 8 * half;
#pragma GCC unroll 16
        for (unsigned l = 0; l < 8; l++)
            r[l] = _mm512_loadu_si512((const void *)(p[l] + 64 * half));
        transpose_x8(r);
#pragma GCC unroll 16
        for (unsigned j = 0; j < 8; j++)
            r[j] = bswap_x8(r[j]);
    }
}

/* The digests of the first `active` lanes of state s (clobbered) to out, 64 bytes each. */
static inline __attribute__((always_inline)) void store_x8(uint8_t *out, v8 s[8],
                                                           size_t active)
{
    transpose_x8(s);
    for (unsigned l = 0; l < active; l++)
        _mm512_storeu_si512((void *)(out + 64 * l), bswap_x8(s[l]));
}

#define SG_V v8
#define SG_LANES 8
#define SG_NAME(f) f##_x8
#define SG_BCAST BCAST
#define SG_MERGE MERGE
#include "hash/x86/sha512_group.h"

#undef SR_V
#undef SR_NAME
#undef ADD
#undef ROR
#undef SHR
#undef TL
#undef BCAST
#undef SG_V
#undef SG_LANES
#undef SG_NAME
#undef SG_BCAST
#undef SG_MERGE

/* ---- four lanes (YMM, AVX-512VL) ------------------------------------------------------------ */

typedef __m256i v4;

#define SR_V v4
#define SR_NAME(f) f##_x4
#define ADD(x, y) _mm256_add_epi64((x), (y))
#define ROR(x, n) _mm256_ror_epi64((x), (n))
#define SHR(x, n) _mm256_srli_epi64((x), (n))
#define TL(x, y, z, f) _mm256_ternarylogic_epi64((x), (y), (z), (f))
#define BCAST(v) _mm256_set1_epi64x((long long)(v))
#include "hash/x86/sha512_rounds_avx512.h"

#define SG_V v4
#define SG_LANES 4
#define SG_NAME(f) f##_x4
#define SG_BCAST BCAST
#define SG_MERGE MERGE
#include "hash/x86/sha512_group.h"

/* ---- the batch ------------------------------------------------------------------------------- */

void hbs_sha512_many_avx512(uint8_t *out, const hbs_sha512_ctx *prefix, const uint8_t *in,
                            size_t inlen, size_t count)
{
    const size_t groups = count / 8, left = count % 8;
    hbs_sha512_plan pl;
    uint8_t copy[8][BLOCK];
    v8 m8[16];
    v4 m4[16];
    int copied = 0, used8 = 0, used4 = 0;

    if (count == 0)
        return;
    if (count == 1) {
        hbs_sha512_many_portable(out, prefix, in, inlen, count);
        return;
    }
    hbs_sha512_plan_batch(&pl, prefix, inlen, count);
    for (size_t g = 0; g < groups; g++) {
        group_x8(out, &pl, in, 8 * g, 8, m8, copy, &copied);
        used8 = 1;
    }
    if (left >= 5) {
        group_x8(out, &pl, in, 8 * groups, left, m8, copy, &copied);
        used8 = 1;
    } else if (left >= 2) {
        group_x4(out, &pl, in, 8 * groups, left, m4, copy, &copied);
        used4 = 1;
    } else if (left == 1) {
        const size_t last = count - 1;
        hbs_sha512_many_portable(out + 64 * last, prefix, inlen ? in + last * inlen : in, inlen,
                                 1);
    }

    hbs_memzero(pl.h, sizeof pl.h);
    if (copied)
        hbs_memzero(copy, sizeof copy);
    if (used8)
        hbs_memzero(m8, sizeof m8);
    if (used4)
        hbs_memzero(m4, sizeof m4);
}
