/* The 16-lane SHA-256 compression for AVX-512 (message l in 32-bit lane l of each ZMM
 * register), shared by the batch kernel and the hash-chain kernel. Static inline: include
 * it only from files compiled with the AVX-512 flags (*_avx512.c). */
#ifndef HBS_HASH_X86_SHA256_X16_H
#define HBS_HASH_X86_SHA256_X16_H

#include <immintrin.h>

#include "hash/x86/sha256_lanes.h"

/* Hides a table's address from the optimiser, so that round constants are added straight
 * from memory (embedded broadcast); a compiler may otherwise rebuild each one from an
 * immediate in a general-purpose register, a slow path on AMD cores. */
#define OPAQUE(p) __asm__("" : "+r"(p))

/* ---- the 16-lane compression -------------------------------------------------------- */

#define ADD(x, y) _mm512_add_epi32((x), (y))
#define ROR(x, n) _mm512_ror_epi32((x), (n))
#define XOR3(x, y, z) _mm512_ternarylogic_epi32((x), (y), (z), 0x96)
#define BSIG0(x) XOR3(ROR(x, 2), ROR(x, 13), ROR(x, 22))
#define BSIG1(x) XOR3(ROR(x, 6), ROR(x, 11), ROR(x, 25))
#define SSIG0(x) XOR3(ROR(x, 7), ROR(x, 18), _mm512_srli_epi32((x), 3))
#define SSIG1(x) XOR3(ROR(x, 17), ROR(x, 19), _mm512_srli_epi32((x), 10))
#define CH(e, f, g) _mm512_ternarylogic_epi32((e), (f), (g), 0xca)  /* e ? f : g */
#define MAJ(a, b, c) _mm512_ternarylogic_epi32((a), (b), (c), 0xe8) /* majority */

/* One round; the caller renames a..h instead of shifting them, so only d and h change.
 * kw is K[t] + W[t]. */
#define RND(a, b, c, d, e, f, g, h, kw)                                                      \
    do {                                                                                     \
        __m512i t1_ = ADD(ADD((h), (kw)), ADD(CH((e), (f), (g)), BSIG1(e)));                 \
        (d) = ADD((d), t1_);                                                                 \
        (h) = ADD(t1_, ADD(BSIG0(a), MAJ((a), (b), (c))));                                   \
    } while (0)

/* W[t] for t >= 16 replaces W[t-16] in the ring w[16]. */
static inline __m512i sched(__m512i w[16], unsigned t)
{
    w[t & 15] = ADD(ADD(SSIG1(w[(t - 2) & 15]), w[(t - 7) & 15]),
                    ADD(SSIG0(w[(t - 15) & 15]), w[t & 15]));
    return w[t & 15];
}

#define KW_MSG(t) ADD(_mm512_set1_epi32((int)k[t]), (t) < 16 ? w[(t) & 15] : sched(w, (t)))
#define KW_CONST(t) _mm512_set1_epi32((int)kwc[t])

/* s += compression of the block whose words are w[0..15] (one lane per message);
 * w is used as the schedule ring and left clobbered. */
static inline void compress16(__m512i s[8], __m512i w[16])
{
    __m512i a = s[0], b = s[1], c = s[2], d = s[3], e = s[4], f = s[5], g = s[6], h = s[7];
    const uint32_t *k = hbs_sha256_K;
    OPAQUE(k);
    RND64(KW_MSG);
    ADD_STATE(s);
}

/* s += compression of a block that is the same in every lane; kwc[t] = K[t] + W[t]. */
static inline void compress16_const(__m512i s[8], const uint32_t kwc[64])
{
    __m512i a = s[0], b = s[1], c = s[2], d = s[3], e = s[4], f = s[5], g = s[6], h = s[7];
    RND64(KW_CONST);
    ADD_STATE(s);
}

static ALWAYS_INLINE __m512i bswap32x16(__m512i x)
{
    const __m512i m = _mm512_broadcast_i32x4(
        _mm_set_epi8(12, 13, 14, 15, 8, 9, 10, 11, 4, 5, 6, 7, 0, 1, 2, 3));
    return _mm512_shuffle_epi8(x, m);
}

#endif
