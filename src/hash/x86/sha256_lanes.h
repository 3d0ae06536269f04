/* What the SHA-256 lane kernels (AVX2, AVX-512, SHA-NI) share: byte order helpers, the
 * initial value and the scalar schedule of a block that is the same in every lane. Static
 * inline, so each kernel compiles it with its own instruction-set flags. */
#ifndef HBS_HASH_X86_SHA256_LANES_H
#define HBS_HASH_X86_SHA256_LANES_H

#include <stdint.h>

#include "hash/hash.h"

#define ALWAYS_INLINE inline __attribute__((always_inline))
/* Loops over lanes and words must be unrolled for the data to stay in registers. */
#define UNROLL_(n) _Pragma(#n)
#define UNROLL(n) UNROLL_(GCC unroll n)

static const uint32_t IV256[8] = {
    0x6a09e667u, 0xbb67ae85u, 0x3c6ef372u, 0xa54ff53au,
    0x510e527fu, 0x9b05688cu, 0x1f83d9abu, 0x5be0cd19u,
};

static inline uint32_t rotr32(uint32_t x, unsigned n) { return (x >> n) | (x << (32 - n)); }

static inline void store_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static inline void store_be64(uint8_t *p, uint64_t v)
{
    store_be32(p, (uint32_t)(v >> 32));
    store_be32(p + 4, (uint32_t)v);
}

static inline uint32_t load_be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

/* kwc[t] = K[t] + W[t] for the 64 rounds of one block (once per batch). */
static inline void sha256_const_schedule(uint32_t kwc[64], const uint8_t block[64])
{
    uint32_t w[64];
    for (unsigned t = 0; t < 16; t++)
        w[t] = load_be32(block + 4 * t);
    for (unsigned t = 16; t < 64; t++) {
        uint32_t s0 = rotr32(w[t - 15], 7) ^ rotr32(w[t - 15], 18) ^ (w[t - 15] >> 3);
        uint32_t s1 = rotr32(w[t - 2], 17) ^ rotr32(w[t - 2], 19) ^ (w[t - 2] >> 10);
        w[t] = w[t - 16] + s0 + w[t - 7] + s1;
    }
    for (unsigned t = 0; t < 64; t++)
        kwc[t] = hbs_sha256_K[t] + w[t];
}

/* ---- round structure of the vector kernels (AVX2, AVX-512) -------------------------------
 * Macros, expanded with the kernel's own vector ADD, its round RND and its working variables
 * a..h, which the rounds rename instead of shifting. */

#define RND8(t, KW)                                                                          \
    do {                                                                                     \
        RND(a, b, c, d, e, f, g, h, KW((t) + 0));                                            \
        RND(h, a, b, c, d, e, f, g, KW((t) + 1));                                            \
        RND(g, h, a, b, c, d, e, f, KW((t) + 2));                                            \
        RND(f, g, h, a, b, c, d, e, KW((t) + 3));                                            \
        RND(e, f, g, h, a, b, c, d, KW((t) + 4));                                            \
        RND(d, e, f, g, h, a, b, c, KW((t) + 5));                                            \
        RND(c, d, e, f, g, h, a, b, KW((t) + 6));                                            \
        RND(b, c, d, e, f, g, h, a, KW((t) + 7));                                            \
    } while (0)

#define RND64(KW)                                                                            \
    do {                                                                                     \
        RND8(0, KW);                                                                         \
        RND8(8, KW);                                                                         \
        RND8(16, KW);                                                                        \
        RND8(24, KW);                                                                        \
        RND8(32, KW);                                                                        \
        RND8(40, KW);                                                                        \
        RND8(48, KW);                                                                        \
        RND8(56, KW);                                                                        \
    } while (0)

/* s[i] += the working variables, after the rounds. */
#define ADD_STATE(s)                                                                         \
    do {                                                                                     \
        (s)[0] = ADD((s)[0], a);                                                             \
        (s)[1] = ADD((s)[1], b);                                                             \
        (s)[2] = ADD((s)[2], c);                                                             \
        (s)[3] = ADD((s)[3], d);                                                             \
        (s)[4] = ADD((s)[4], e);                                                             \
        (s)[5] = ADD((s)[5], f);                                                             \
        (s)[6] = ADD((s)[6], g);                                                             \
        (s)[7] = ADD((s)[7], h);                                                             \
    } while (0)

#endif
