/* Moving SHA-512 data between four messages and the 64-bit lanes of a __m256i: shared by
 * the AVX2 kernel and the four-lane path of the AVX-512 kernel. Plain AVX2; static inline,
 * so each kernel compiles it with its own instruction-set flags. */
#ifndef HBS_HASH_X86_SHA512_X4_H
#define HBS_HASH_X86_SHA512_X4_H

#include <immintrin.h>
#include <stdint.h>

/* Transposes a 4x4 matrix of 64-bit words: word j of r[i] becomes word i of r[j]. */
static inline __attribute__((always_inline)) void transpose_x4(__m256i r[4])
{
    __m256i t0 = _mm256_unpacklo_epi64(r[0], r[1]); /* r0.0 r1.0 r0.2 r1.2 */
    __m256i t1 = _mm256_unpackhi_epi64(r[0], r[1]); /* r0.1 r1.1 r0.3 r1.3 */
    __m256i t2 = _mm256_unpacklo_epi64(r[2], r[3]); /* r2.0 r3.0 r2.2 r3.2 */
    __m256i t3 = _mm256_unpackhi_epi64(r[2], r[3]); /* r2.1 r3.1 r2.3 r3.3 */
    r[0] = _mm256_permute2x128_si256(t0, t2, 0x20);
    r[1] = _mm256_permute2x128_si256(t1, t3, 0x20);
    r[2] = _mm256_permute2x128_si256(t0, t2, 0x31);
    r[3] = _mm256_permute2x128_si256(t1, t3, 0x31);
}

static inline __m256i bswap_x4(__m256i x)
{
    const __m256i idx = _mm256_setr_epi8(7, 6, 5, 4, 3, 2, 1, 0, 15, 14, 13, 12, 11, 10, 9, 8,
                                         7, 6, 5, 4, 3, 2, 1, 0, 15, 14, 13, 12, 11, 10, 9, 8);
    return _mm256_shuffle_epi8(x, idx);
}

/* Words 0..15 of the four blocks at p[0..3], transposed, as big-endian words. */
static inline __attribute__((always_inline)) void load_x4(__m256i m[16],
                                                          const uint8_t *const p[4])
{
#pragma GCC unroll 16
    for (unsigned q = 0; q < 4; q++) {
        __m256i *r = m + 4 * q;
#pragma GCC unroll 16
        for (unsigned l = 0; l < 4; l++)
            r[l] = _mm256_loadu_si256((const void *)(p[l] + 32 * q));
        transpose_x4(r);
#pragma GCC unroll 16
        for (unsigned j = 0; j < 4; j++)
            r[j] = bswap_x4(r[j]);
    }
}

/* The digests of the first `active` lanes of state s (clobbered) to out, 64 bytes each. */
static inline __attribute__((always_inline)) void store_x4(uint8_t *out, __m256i s[8],
                                                           size_t active)
{
    transpose_x4(s);
    transpose_x4(s + 4);
    for (unsigned l = 0; l < active; l++) {
        _mm256_storeu_si256((void *)(out + 64 * l), bswap_x4(s[l]));
        _mm256_storeu_si256((void *)(out + 64 * l + 32), bswap_x4(s[4 + l]));
    }
}

#endif
