/* SLH-DSA (FIPS 205): the stateless hash-based digital signature standard.
 *
 * All 12 parameter sets are served by one code base; a parameter set is chosen at run time
 * through a `const hbs_slhdsa_params *` obtained from hbs_slhdsa_params_get() or
 * hbs_slhdsa_params_by_name(). Keys use the FIPS 205 byte encodings:
 *   sk = SK.seed || SK.prf || PK.seed || PK.root   (4n bytes)
 *   pk = PK.seed || PK.root                        (2n bytes)
 *
 * See hbs.h for the calling conventions (argument order, return codes, outputs on failure).
 */
#ifndef HBS_SLHDSA_H
#define HBS_SLHDSA_H

#include "hbs/hbs.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Parameter set identifiers, in the order of their RFC 9909 object identifiers. */
typedef enum {
    HBS_SLHDSA_SHA2_128S = 0,
    HBS_SLHDSA_SHA2_128F,
    HBS_SLHDSA_SHA2_192S,
    HBS_SLHDSA_SHA2_192F,
    HBS_SLHDSA_SHA2_256S,
    HBS_SLHDSA_SHA2_256F,
    HBS_SLHDSA_SHAKE_128S,
    HBS_SLHDSA_SHAKE_128F,
    HBS_SLHDSA_SHAKE_192S,
    HBS_SLHDSA_SHAKE_192F,
    HBS_SLHDSA_SHAKE_256S,
    HBS_SLHDSA_SHAKE_256F,
    HBS_SLHDSA_NUM_PARAMS
} hbs_slhdsa_id;

/* Sizes in bytes, as constants for static buffers. */
#define HBS_SLHDSA_128_PK_BYTES 32
#define HBS_SLHDSA_128_SK_BYTES 64
#define HBS_SLHDSA_192_PK_BYTES 48
#define HBS_SLHDSA_192_SK_BYTES 96
#define HBS_SLHDSA_256_PK_BYTES 64
#define HBS_SLHDSA_256_SK_BYTES 128
#define HBS_SLHDSA_128S_SIG_BYTES 7856
#define HBS_SLHDSA_128F_SIG_BYTES 17088
#define HBS_SLHDSA_192S_SIG_BYTES 16224
#define HBS_SLHDSA_192F_SIG_BYTES 35664
#define HBS_SLHDSA_256S_SIG_BYTES 29792
#define HBS_SLHDSA_256F_SIG_BYTES 49856

#define HBS_SLHDSA_MAX_N 32
#define HBS_SLHDSA_MAX_PK_BYTES HBS_SLHDSA_256_PK_BYTES
#define HBS_SLHDSA_MAX_SK_BYTES HBS_SLHDSA_256_SK_BYTES
#define HBS_SLHDSA_MAX_SIG_BYTES HBS_SLHDSA_256F_SIG_BYTES
#define HBS_SLHDSA_MAX_CONTEXT_BYTES 255

/* The pre-hash functions FIPS 205 allows for HashSLH-DSA. */
typedef enum {
    HBS_PREHASH_NONE = 0, /* pure SLH-DSA */
    HBS_PREHASH_SHA2_224,
    HBS_PREHASH_SHA2_256,
    HBS_PREHASH_SHA2_384,
    HBS_PREHASH_SHA2_512,
    HBS_PREHASH_SHA2_512_224,
    HBS_PREHASH_SHA2_512_256,
    HBS_PREHASH_SHA3_224,
    HBS_PREHASH_SHA3_256,
    HBS_PREHASH_SHA3_384,
    HBS_PREHASH_SHA3_512,
    HBS_PREHASH_SHAKE_128, /* 256-bit output */
    HBS_PREHASH_SHAKE_256, /* 512-bit output */
    HBS_PREHASH_NUM
} hbs_prehash;

typedef struct hbs_slhdsa_params hbs_slhdsa_params;

/* Parameter set by identifier or by its FIPS 205 name ("SLH-DSA-SHA2-128s"); NULL if unknown. */
HBS_API const hbs_slhdsa_params *hbs_slhdsa_params_get(hbs_slhdsa_id id);
HBS_API const hbs_slhdsa_params *hbs_slhdsa_params_by_name(const char *name);

HBS_API hbs_slhdsa_id hbs_slhdsa_params_id(const hbs_slhdsa_params *p);
HBS_API const char *hbs_slhdsa_name(const hbs_slhdsa_params *p);
HBS_API size_t hbs_slhdsa_n(const hbs_slhdsa_params *p);
HBS_API size_t hbs_slhdsa_pk_bytes(const hbs_slhdsa_params *p);
HBS_API size_t hbs_slhdsa_sk_bytes(const hbs_slhdsa_params *p);
HBS_API size_t hbs_slhdsa_sig_bytes(const hbs_slhdsa_params *p);
/* Bytes of seed material for hbs_slhdsa_keygen_from_seed: SK.seed || SK.prf || PK.seed (3n). */
HBS_API size_t hbs_slhdsa_seed_bytes(const hbs_slhdsa_params *p);

/* Pre-hash function by its FIPS 205 / ACVP name ("SHA2-256", "SHA2-512/224", "SHA3-384",
 * "SHAKE-128", ...); returns HBS_ERR_UNKNOWN_PREHASH for any other name. */
HBS_API HBS_WARN_UNUSED_RESULT int hbs_prehash_by_name(hbs_prehash *out, const char *name);
HBS_API const char *hbs_prehash_name(hbs_prehash ph);
/* Digest length in bytes of a pre-hash function (0 for HBS_PREHASH_NONE). */
HBS_API size_t hbs_prehash_digest_bytes(hbs_prehash ph);

/* ---- Key generation ------------------------------------------------------------------- */

/* slh_keygen: a new key pair from the operating system's random source. */
HBS_API HBS_WARN_UNUSED_RESULT int hbs_slhdsa_keygen(const hbs_slhdsa_params *p, uint8_t *sk,
                                                     uint8_t *pk);

/* slh_keygen_internal: deterministic key generation from seed = SK.seed || SK.prf || PK.seed. */
HBS_API HBS_WARN_UNUSED_RESULT int hbs_slhdsa_keygen_from_seed(const hbs_slhdsa_params *p,
                                                               uint8_t *sk, uint8_t *pk,
                                                               const uint8_t *seed);

/* Recompute the public key from a secret key and check that the sk's PK.root matches it.
 * Returns HBS_ERR_MALFORMED_KEY if it does not. pk may be NULL. */
HBS_API HBS_WARN_UNUSED_RESULT int hbs_slhdsa_sk_check(const hbs_slhdsa_params *p, uint8_t *pk,
                                                       const uint8_t *sk);

/* ---- Signing ---------------------------------------------------------------------------
 * sig must hold hbs_slhdsa_sig_bytes(p) bytes. ctx may be NULL when ctxlen is 0.
 * addrnd is opt_rand: n bytes of fresh randomness (hedged signing), or NULL for the
 * deterministic variant (opt_rand = PK.seed).
 */

/* slh_sign (pure, ph = HBS_PREHASH_NONE) or hash_slh_sign (ph names the pre-hash). */
HBS_API HBS_WARN_UNUSED_RESULT int hbs_slhdsa_sign_ex(const hbs_slhdsa_params *p, uint8_t *sig,
                                                      const uint8_t *msg, size_t msglen,
                                                      const uint8_t *ctx, size_t ctxlen,
                                                      hbs_prehash ph, const uint8_t *sk,
                                                      const uint8_t *addrnd);

/* Hedged slh_sign with randomness from the operating system: the default for most users. */
HBS_API HBS_WARN_UNUSED_RESULT int hbs_slhdsa_sign(const hbs_slhdsa_params *p, uint8_t *sig,
                                                   const uint8_t *msg, size_t msglen,
                                                   const uint8_t *ctx, size_t ctxlen,
                                                   const uint8_t *sk);

/* Hedged hash_slh_sign with randomness from the operating system. */
HBS_API HBS_WARN_UNUSED_RESULT int hbs_slhdsa_hash_sign(const hbs_slhdsa_params *p, uint8_t *sig,
                                                        const uint8_t *msg, size_t msglen,
                                                        const uint8_t *ctx, size_t ctxlen,
                                                        hbs_prehash ph, const uint8_t *sk);

/* slh_sign_internal: signs M' = m exactly as given (no context, no domain separator). */
HBS_API HBS_WARN_UNUSED_RESULT int hbs_slhdsa_sign_internal(const hbs_slhdsa_params *p,
                                                            uint8_t *sig, const uint8_t *m,
                                                            size_t mlen, const uint8_t *sk,
                                                            const uint8_t *addrnd);

/* ---- Signing contexts: repeated signing with one key ------------------------------------
 * A signer expands the key once and caches the top hypertree layers. cache_layers = 1 keeps
 * the top XMSS tree ((2^(h'+1) - 1) * n bytes, built at the cost of one key generation);
 * 2 also keeps every tree of the layer below (2^h' times that: megabytes for the s sets, and
 * the time of some 2^h'/d signatures to build); 0 caches nothing. Signatures are
 * byte-identical to hbs_slhdsa_sign_ex. The secret key is checked against its PK.root when
 * the signer is made (HBS_ERR_MALFORMED_KEY). A signer may be used by several threads. */
typedef struct hbs_slhdsa_signer hbs_slhdsa_signer;

HBS_API HBS_WARN_UNUSED_RESULT int hbs_slhdsa_signer_new(hbs_slhdsa_signer **out,
                                                         const hbs_slhdsa_params *p,
                                                         const uint8_t *sk,
                                                         unsigned cache_layers);
HBS_API void hbs_slhdsa_signer_free(hbs_slhdsa_signer *s);
HBS_API size_t hbs_slhdsa_signer_cache_bytes(const hbs_slhdsa_signer *s);
HBS_API const hbs_slhdsa_params *hbs_slhdsa_signer_params(const hbs_slhdsa_signer *s);

/* As hbs_slhdsa_sign_ex (addrnd NULL: deterministic). */
HBS_API HBS_WARN_UNUSED_RESULT int hbs_slhdsa_signer_sign(const hbs_slhdsa_signer *s,
                                                          uint8_t *sig, const uint8_t *msg,
                                                          size_t msglen, const uint8_t *ctx,
                                                          size_t ctxlen, hbs_prehash ph,
                                                          const uint8_t *addrnd);
/* As hbs_slhdsa_sign_internal. */
HBS_API HBS_WARN_UNUSED_RESULT int hbs_slhdsa_signer_sign_internal(const hbs_slhdsa_signer *s,
                                                                   uint8_t *sig,
                                                                   const uint8_t *m,
                                                                   size_t mlen,
                                                                   const uint8_t *addrnd);

/* ---- Verification ----------------------------------------------------------------------
 * Return 0 if valid, HBS_ERR_VERIFY_FAILED if not (a signature of the wrong length is
 * simply invalid), or another HBS_ERR_* for misuse (NULL pointers, context over 255 bytes).
 */
HBS_API HBS_WARN_UNUSED_RESULT int hbs_slhdsa_verify_ex(const hbs_slhdsa_params *p,
                                                        const uint8_t *sig, size_t siglen,
                                                        const uint8_t *msg, size_t msglen,
                                                        const uint8_t *ctx, size_t ctxlen,
                                                        hbs_prehash ph, const uint8_t *pk);

HBS_API HBS_WARN_UNUSED_RESULT int hbs_slhdsa_verify(const hbs_slhdsa_params *p,
                                                     const uint8_t *sig, size_t siglen,
                                                     const uint8_t *msg, size_t msglen,
                                                     const uint8_t *ctx, size_t ctxlen,
                                                     const uint8_t *pk);

HBS_API HBS_WARN_UNUSED_RESULT int hbs_slhdsa_hash_verify(const hbs_slhdsa_params *p,
                                                          const uint8_t *sig, size_t siglen,
                                                          const uint8_t *msg, size_t msglen,
                                                          const uint8_t *ctx, size_t ctxlen,
                                                          hbs_prehash ph, const uint8_t *pk);

/* slh_verify_internal: verifies over M' = m exactly as given. */
HBS_API HBS_WARN_UNUSED_RESULT int hbs_slhdsa_verify_internal(const hbs_slhdsa_params *p,
                                                              const uint8_t *sig, size_t siglen,
                                                              const uint8_t *m, size_t mlen,
                                                              const uint8_t *pk);

/* ---- Batches: many messages at once, every core busy ------------------------------------
 * Signatures are spread over the thread pool, one per thread; with a single message, the
 * trees inside the signature are spread instead.
 *
 * hbs_slhdsa_sign_many signs msgs[i] (msglens[i] bytes) into sigs + i * sig_bytes, all with
 * the same context and pre-hash; addrnd is NULL (deterministic) or count * n bytes of fresh
 * randomness. On failure every signature is zeroed. */
HBS_API HBS_WARN_UNUSED_RESULT int hbs_slhdsa_sign_many(const hbs_slhdsa_signer *s, uint8_t *sigs,
                                                        const uint8_t *const *msgs,
                                                        const size_t *msglens, size_t count,
                                                        const uint8_t *ctx, size_t ctxlen,
                                                        hbs_prehash ph, const uint8_t *addrnd);

/* Verifies count signatures, each under its own public key pks[i] (pass the same pointer
 * for one key), with one context and pre-hash. results[i] gets 0 or HBS_ERR_VERIFY_FAILED;
 * the return value is 0 if all are valid, HBS_ERR_VERIFY_FAILED if any is not, or another
 * HBS_ERR_* for misuse. */
HBS_API HBS_WARN_UNUSED_RESULT int hbs_slhdsa_verify_many(const hbs_slhdsa_params *p, int *results,
                                                          const uint8_t *const *sigs,
                                                          const size_t *siglens,
                                                          const uint8_t *const *msgs,
                                                          const size_t *msglens, size_t count,
                                                          const uint8_t *ctx, size_t ctxlen,
                                                          hbs_prehash ph,
                                                          const uint8_t *const *pks);

#ifdef __cplusplus
}
#endif
#endif
