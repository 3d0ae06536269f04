/* The hash layer: SHA-2, SHA-3/SHAKE, HMAC, MGF1, and batch ("many") entry points.
 *
 * Scheme code never hashes one short message at a time in a loop: it hands the layer
 * `count` independent messages of equal length and the layer decides how many lanes to
 * fill (portable: one at a time; SIMD backends: 4, 8 or 16; GPU: millions).
 *
 * Batch layout: message i is in[i*inlen .. i*inlen+inlen), digest i is out[i*outlen ..).
 * A `prefix` state, when given, has already absorbed whole blocks (a midstate, e.g. of the
 * SLH-DSA PK.seed block); each message is hashed as the continuation of a copy of it.
 */
#ifndef HBS_HASH_H
#define HBS_HASH_H

#include <stddef.h>
#include <stdint.h>

#define HBS_SHA256_BLOCK 64
#define HBS_SHA512_BLOCK 128
#define HBS_SHAKE128_RATE 168
#define HBS_SHAKE256_RATE 136

/* ---- SHA-256 / SHA-224 ---- */
typedef struct {
    uint32_t h[8];
    uint64_t bytes; /* total bytes absorbed so far */
    uint8_t buf[64];
    size_t buflen;
} hbs_sha256_ctx;

void hbs_sha256_init(hbs_sha256_ctx *c);
void hbs_sha224_init(hbs_sha256_ctx *c);
void hbs_sha256_update(hbs_sha256_ctx *c, const uint8_t *in, size_t len);
void hbs_sha256_final(hbs_sha256_ctx *c, uint8_t out[32]);
void hbs_sha224_final(hbs_sha256_ctx *c, uint8_t out[28]);
void hbs_sha256(uint8_t out[32], const uint8_t *in, size_t len);
/* Compressions of whole 64-byte blocks into state h: the portable reference, and the
 * dispatched one (SHA-NI where the active backend may use it) that update() runs on. */
void hbs_sha256_compress_portable(uint32_t h[8], const uint8_t *blocks, size_t nblocks);
void hbs_sha256_compress(uint32_t h[8], const uint8_t *blocks, size_t nblocks);

/* The round constants (FIPS 180-4, 4.2.2), shared by the portable code and every backend. */
extern const uint32_t hbs_sha256_K[64];

/* ---- SHA-512 / SHA-384 / SHA-512/224 / SHA-512/256 ---- */
typedef struct {
    uint64_t h[8];
    uint64_t bytes;
    uint8_t buf[128];
    size_t buflen;
    size_t outlen; /* 64, 48, 28 or 32 */
} hbs_sha512_ctx;

void hbs_sha512_init(hbs_sha512_ctx *c);
void hbs_sha384_init(hbs_sha512_ctx *c);
void hbs_sha512_224_init(hbs_sha512_ctx *c);
void hbs_sha512_256_init(hbs_sha512_ctx *c);
void hbs_sha512_update(hbs_sha512_ctx *c, const uint8_t *in, size_t len);
/* Writes c->outlen bytes. */
void hbs_sha512_final(hbs_sha512_ctx *c, uint8_t *out);
void hbs_sha512(uint8_t out[64], const uint8_t *in, size_t len);
void hbs_sha512_compress_portable(uint64_t h[8], const uint8_t *blocks, size_t nblocks);

extern const uint64_t hbs_sha512_K[80]; /* FIPS 180-4, 4.2.3 */

/* ---- Keccak: SHA3-224/256/384/512, SHAKE128, SHAKE256 ---- */
typedef struct {
    uint64_t s[25];
    size_t pos;  /* byte position in the rate portion */
    size_t rate; /* bytes */
    uint8_t pad; /* domain separation byte: 0x06 for SHA3, 0x1f for SHAKE */
    int squeezing;
} hbs_keccak_ctx;

/* The round constants of Keccak-f[1600] (FIPS 202, 3.2.5), shared by every backend. */
extern const uint64_t hbs_keccak_rc[24];

void hbs_keccak_f1600_portable(uint64_t s[25]);
void hbs_shake128_init(hbs_keccak_ctx *c);
void hbs_shake256_init(hbs_keccak_ctx *c);
void hbs_sha3_init(hbs_keccak_ctx *c, size_t outbits); /* 224, 256, 384 or 512 */
void hbs_keccak_absorb(hbs_keccak_ctx *c, const uint8_t *in, size_t len);
/* SHAKE: may be called repeatedly to squeeze more output. */
void hbs_keccak_squeeze(hbs_keccak_ctx *c, uint8_t *out, size_t len);
/* SHA3: writes the (rate-derived) digest length: 28, 32, 48 or 64 bytes. */
void hbs_sha3_final(hbs_keccak_ctx *c, uint8_t *out);
void hbs_shake256(uint8_t *out, size_t outlen, const uint8_t *in, size_t inlen);
void hbs_shake128(uint8_t *out, size_t outlen, const uint8_t *in, size_t inlen);

/* ---- HMAC and MGF1 ---- */
typedef struct {
    hbs_sha256_ctx inner, outer;
} hbs_hmac_sha256_ctx;
typedef struct {
    hbs_sha512_ctx inner, outer;
} hbs_hmac_sha512_ctx;

void hbs_hmac_sha256_init(hbs_hmac_sha256_ctx *c, const uint8_t *key, size_t keylen);
void hbs_hmac_sha256_update(hbs_hmac_sha256_ctx *c, const uint8_t *in, size_t len);
void hbs_hmac_sha256_final(hbs_hmac_sha256_ctx *c, uint8_t out[32]);
void hbs_hmac_sha512_init(hbs_hmac_sha512_ctx *c, const uint8_t *key, size_t keylen);
void hbs_hmac_sha512_update(hbs_hmac_sha512_ctx *c, const uint8_t *in, size_t len);
void hbs_hmac_sha512_final(hbs_hmac_sha512_ctx *c, uint8_t out[64]);

/* MGF1 (RFC 8017) with SHA-256 / SHA-512 over seed, writing outlen bytes. */
void hbs_mgf1_sha256(uint8_t *out, size_t outlen, const uint8_t *seed, size_t seedlen);
void hbs_mgf1_sha512(uint8_t *out, size_t outlen, const uint8_t *seed, size_t seedlen);

/* ---- Batch entry points (dispatched to the best backend) ----
 * prefix may be NULL (plain hash of each message); if given, prefix->buflen must be 0.
 * out receives full digests: 32 bytes (SHA-256) or 64 bytes (SHA-512) per message.
 */
void hbs_sha256_many(uint8_t *out, const hbs_sha256_ctx *prefix, const uint8_t *in, size_t inlen,
                     size_t count);
void hbs_sha512_many(uint8_t *out, const hbs_sha512_ctx *prefix, const uint8_t *in, size_t inlen,
                     size_t count);
/* SHAKE256 of each message, outlen bytes each. */
void hbs_shake256_many(uint8_t *out, size_t outlen, const uint8_t *in, size_t inlen,
                       size_t count);

/* SHAKE128 of each message, outlen bytes each (XMSS-SHAKE_* of RFC 8391). */
void hbs_shake128_many(uint8_t *out, size_t outlen, const uint8_t *in, size_t inlen,
                       size_t count);

/* ---- Hash chains (WOTS+, LM-OTS, ...) ----
 * Chain i is message i (len bytes at msgs + i*len) holding a big-endian step counter of
 * ctr_bytes bytes at ctr_off and an n-byte value at val_off. One step hashes
 * prefix || message, writes the first n digest bytes over the value and adds one to the
 * counter (modulo its width). Chain i takes steps[i] steps, or steps_all when steps is NULL;
 * on return each message holds its chain's last value and counter. The two fields lie
 * inside the message and do not overlap; n <= 32. Backends keep the chains in their lanes
 * across steps, so the values never leave the registers between steps. */
typedef struct {
    uint8_t ctr_off, ctr_bytes, val_off, n;
} hbs_chain_layout;

void hbs_sha256_chains(const hbs_sha256_ctx *prefix, uint8_t *msgs, size_t len,
                       const hbs_chain_layout *lay, const uint8_t *steps, uint32_t steps_all,
                       size_t count);
/* The same with SHAKE256 (n output bytes) and no prefix. */
void hbs_shake256_chains(uint8_t *msgs, size_t len, const hbs_chain_layout *lay,
                         const uint8_t *steps, uint32_t steps_all, size_t count);

/* The portable batch functions: the reference every backend is compared with, and the
 * fallback for what a backend leaves out. */
void hbs_sha256_many_portable(uint8_t *out, const hbs_sha256_ctx *prefix, const uint8_t *in,
                              size_t inlen, size_t count);
void hbs_sha512_many_portable(uint8_t *out, const hbs_sha512_ctx *prefix, const uint8_t *in,
                              size_t inlen, size_t count);
void hbs_shake256_many_portable(uint8_t *out, size_t outlen, const uint8_t *in, size_t inlen,
                                size_t count);
void hbs_shake128_many_portable(uint8_t *out, size_t outlen, const uint8_t *in, size_t inlen,
                                size_t count);
void hbs_sha256_chains_portable(const hbs_sha256_ctx *prefix, uint8_t *msgs, size_t len,
                                const hbs_chain_layout *lay, const uint8_t *steps,
                                uint32_t steps_all, size_t count);
void hbs_shake256_chains_portable(uint8_t *msgs, size_t len, const hbs_chain_layout *lay,
                                  const uint8_t *steps, uint32_t steps_all, size_t count);

/* ---- Backends ----
 * A backend fills whichever entries it accelerates; NULL entries fall back to portable.
 * Selection is made once (CPU features, then the HBS_BACKEND environment variable) and can
 * be forced down for tests with hbs_hash_force_backend().
 */
typedef struct {
    const char *name;
    void (*sha256_many)(uint8_t *out, const hbs_sha256_ctx *prefix, const uint8_t *in,
                        size_t inlen, size_t count);
    void (*sha512_many)(uint8_t *out, const hbs_sha512_ctx *prefix, const uint8_t *in,
                        size_t inlen, size_t count);
    void (*shake256_many)(uint8_t *out, size_t outlen, const uint8_t *in, size_t inlen,
                          size_t count);
    void (*shake128_many)(uint8_t *out, size_t outlen, const uint8_t *in, size_t inlen,
                          size_t count);
    /* Returns 0 if it handled the call, nonzero to leave it to the lock-step fallback
     * (a layout or length the kernel does not cover). */
    int (*sha256_chains)(const hbs_sha256_ctx *prefix, uint8_t *msgs, size_t len,
                         const hbs_chain_layout *lay, const uint8_t *steps, uint32_t steps_all,
                         size_t count);
    int (*shake256_chains)(uint8_t *msgs, size_t len, const hbs_chain_layout *lay,
                           const uint8_t *steps, uint32_t steps_all, size_t count);
    void (*sha256_compress)(uint32_t h[8], const uint8_t *blocks, size_t nblocks);
} hbs_hash_backend;

const hbs_hash_backend *hbs_hash_backend_active(void);
/* Force a backend by name ("portable", ...); returns 0 or a negative HBS_ERR_* code. */
int hbs_hash_force_backend(const char *name);

#endif
