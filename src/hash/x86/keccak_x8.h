/* Keccak-f[1600] on eight states in AVX-512 registers (state i in 64-bit lane i of 25
 * words), and on four in 256-bit ones, shared by the SHAKE256 batch kernel and the
 * hash-chain kernel. Static inline: include it only from files compiled with the AVX-512
 * flags (*_avx512.c). */
#ifndef HBS_HASH_X86_KECCAK_X8_H
#define HBS_HASH_X86_KECCAK_X8_H

#include <immintrin.h>

#include "hash/hash.h"

/* Eight states in __m512i words: the kernels' main width. */
#define KL_V __m512i
#define KL_NAME(f) f##_x8
#define KL_ZERO _mm512_setzero_si512()
#define KL_SET1(v) _mm512_set1_epi64(v)
#define XOR(a, b) _mm512_xor_si512((a), (b))
#define XOR3(a, b, c) _mm512_ternarylogic_epi64((a), (b), (c), 0x96) /* a ^ b ^ c */
#define CHI(a, b, c) _mm512_ternarylogic_epi64((a), (b), (c), 0xd2)  /* a ^ (~b & c) */
#define ROL(x, n) _mm512_rol_epi64((x), (n))
#include "hash/x86/keccak_lanes.h"
#undef KL_V
#undef KL_NAME
#undef KL_ZERO
#undef KL_SET1
#undef XOR
#undef XOR3
#undef CHI
#undef ROL

/* Four states in __m256i words (AVX-512VL): a 512-bit operation takes a 256-bit pipe for
 * two cycles where the core splits it (AMD Zen 4), so a batch of at most four messages,
 * such as the one-message hashes of verification that depend on each other, permutes in
 * about half the time of the eight-state version. */
#define KL_V __m256i
#define KL_NAME(f) f##_x4
#define KL_ZERO _mm256_setzero_si256()
#define KL_SET1(v) _mm256_set1_epi64x(v)
#define XOR(a, b) _mm256_xor_si256((a), (b))
#define XOR3(a, b, c) _mm256_ternarylogic_epi64((a), (b), (c), 0x96)
#define CHI(a, b, c) _mm256_ternarylogic_epi64((a), (b), (c), 0xd2)
#define ROL(x, n) _mm256_rol_epi64((x), (n))
#include "hash/x86/keccak_lanes.h"
#undef KL_V
#undef KL_NAME
#undef KL_ZERO
#undef KL_SET1
#undef XOR3
#undef CHI
#undef ROL
#undef XOR
#define XOR(a, b) _mm512_xor_si512((a), (b))

static inline __attribute__((always_inline)) void permute_x8(__m512i s[25])
{
    permute_zero_x8(s, 0);
}

/* The eight-state words s, whose lanes 4..7 are not wanted, permuted as four states: lanes
 * 0..3 come back permuted, lanes 4..7 are left undefined. */
static inline __attribute__((always_inline)) void permute_low4_x8(__m512i s[25],
                                                                  const uint32_t zero)
{
    __m256i h[25];
#pragma GCC unroll 25
    for (unsigned i = 0; i < 25; i++)
        h[i] = _mm512_castsi512_si256(s[i]);
    permute_zero_x4(h, zero);
#pragma GCC unroll 25
    for (unsigned i = 0; i < 25; i++)
        s[i] = _mm512_castsi256_si512(h[i]);
}

/* The words past the rate (the capacity), zero in a state that has absorbed one block. */
#define KECCAK_CAPACITY_WORDS(rate_words) (((uint32_t)1 << 25) - ((uint32_t)1 << (rate_words)))

#endif
