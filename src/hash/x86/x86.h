/* x86-64 hash backends. Each kernel has the contract of the batch entry point it serves
 * (hash.h): any count, messages of equal length, an optional whole-block prefix state,
 * full digests out; the lane width stays inside the file. Each file is compiled with only
 * its own instruction-set flags and is called only after the CPU check says it may be. */
#ifndef HBS_HASH_X86_H
#define HBS_HASH_X86_H

#include "hash/hash.h"

/* CPU and OS support (CPUID plus XGETBV for the wide register state), detected once. */
int hbs_cpu_has_avx2(void);   /* AVX2 + BMI2, YMM state enabled */
int hbs_cpu_has_avx512(void); /* AVX-512 F, VL, BW; ZMM and opmask state enabled */
int hbs_cpu_has_shani(void);  /* SHA extensions + SSE4.1 */

void hbs_sha256_many_avx2(uint8_t *out, const hbs_sha256_ctx *prefix, const uint8_t *in,
                          size_t inlen, size_t count); /* 8 lanes */
void hbs_sha256_many_avx512(uint8_t *out, const hbs_sha256_ctx *prefix, const uint8_t *in,
                            size_t inlen, size_t count); /* 16 lanes */
void hbs_sha256_many_shani(uint8_t *out, const hbs_sha256_ctx *prefix, const uint8_t *in,
                           size_t inlen, size_t count); /* interleaved messages */
void hbs_sha512_many_avx2(uint8_t *out, const hbs_sha512_ctx *prefix, const uint8_t *in,
                          size_t inlen, size_t count); /* 4 lanes */
void hbs_sha512_many_avx512(uint8_t *out, const hbs_sha512_ctx *prefix, const uint8_t *in,
                            size_t inlen, size_t count); /* 8 lanes */
void hbs_shake256_many_avx2(uint8_t *out, size_t outlen, const uint8_t *in, size_t inlen,
                            size_t count); /* 4 lanes */
void hbs_shake256_many_avx512(uint8_t *out, size_t outlen, const uint8_t *in, size_t inlen,
                              size_t count); /* 8 lanes */
void hbs_shake128_many_avx512(uint8_t *out, size_t outlen, const uint8_t *in, size_t inlen,
                              size_t count); /* 8 lanes */

/* Whole blocks of one message into h with the SHA extensions. */
void hbs_sha256_compress_shani(uint32_t h[8], const uint8_t *blocks, size_t nblocks);

/* Hash chains in 16 lanes; returns nonzero for a layout it leaves to the caller. */
int hbs_sha256_chains_avx512(const hbs_sha256_ctx *prefix, uint8_t *msgs, size_t len,
                             const hbs_chain_layout *lay, const uint8_t *steps,
                             uint32_t steps_all, size_t count);
int hbs_shake256_chains_avx512(uint8_t *msgs, size_t len, const hbs_chain_layout *lay,
                               const uint8_t *steps, uint32_t steps_all, size_t count);

#endif
