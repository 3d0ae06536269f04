/* Key files: the standard encodings of public and secret keys.
 *
 * SLH-DSA keys are encoded as in RFC 9909: a public key as a SubjectPublicKeyInfo
 * (PEM label "PUBLIC KEY"), a secret key as a PKCS#8 OneAsymmetricKey (PEM "PRIVATE KEY"),
 * with the algorithm identified by the OIDs 2.16.840.1.101.3.4.3.20-31 (pure SLH-DSA) or
 * 2.16.840.1.101.3.4.3.35-46 (HashSLH-DSA, which binds the pre-hash function).
 */
#ifndef HBS_KEYFILE_H
#define HBS_KEYFILE_H

#include "hbs/hbs.h"
#include "hbs/slhdsa.h"

#ifdef __cplusplus
extern "C" {
#endif

/* SLH-DSA keys, and the public keys of the stateful schemes (RFC 9802: the OIDs
 * id-alg-hss-lms-hashsig 1.2.840.113549.1.9.16.3.17, id-alg-xmss-hashsig 1.3.6.1.5.5.7.6.34
 * and id-alg-xmssmt-hashsig 1.3.6.1.5.5.7.6.35, parameters absent, the raw public key in the
 * BIT STRING). Stateful secret keys are never PKCS#8: they live in state files
 * (hbs/stateful.h), which must not be copied. */
typedef enum {
    HBS_SCHEME_SLHDSA = 1,
    HBS_SCHEME_HSS = 2,    /* LMS/HSS public key: u32 L || LMS public key */
    HBS_SCHEME_XMSS = 3,   /* XMSS public key: u32 OID || root || SEED */
    HBS_SCHEME_XMSSMT = 4, /* XMSS^MT public key, same layout, its own OID registry */
} hbs_scheme;
typedef enum { HBS_KEY_PUBLIC = 1, HBS_KEY_SECRET = 2 } hbs_key_kind;

/* The largest key bytes: an SLH-DSA-256 secret key (128) or an XMSS n = 64 public key (132). */
#define HBS_KEY_MAX_BYTES 136

typedef struct {
    hbs_scheme scheme;
    hbs_key_kind kind;
    hbs_slhdsa_id alg;  /* the SLH-DSA parameter set (0 for the stateful schemes, whose
                         * public key bytes name their parameter set) */
    hbs_prehash prehash; /* HBS_PREHASH_NONE for a pure OID; the bound hash for HashSLH-DSA */
    size_t len;          /* bytes used in `bytes`: the FIPS 205 sk (4n) or pk (2n) */
    uint8_t bytes[HBS_KEY_MAX_BYTES];
} hbs_key;

/* The pre-hash function RFC 9909 binds to the HashSLH-DSA OID of a parameter set
 * (SHA2-256 for SHA2-128*, SHA2-512 for SHA2-192* and SHA2-256*, SHAKE-128 for SHAKE-128*,
 * SHAKE-256 for SHAKE-192* and SHAKE-256*). */
HBS_API hbs_prehash hbs_slhdsa_oid_prehash(hbs_slhdsa_id alg);

/* Upper bounds on the encoded sizes, for buffers. */
#define HBS_KEY_DER_MAX 256
#define HBS_KEY_PEM_MAX 512

/* DER encoding. *outlen holds the capacity of out on entry and the length written on return.
 * On HBS_ERR_BUFFER_TOO_SMALL the output is zeroed and *outlen is set to the size needed
 * (including the NUL for PEM); on other errors *outlen is 0. */
HBS_API HBS_WARN_UNUSED_RESULT int hbs_key_encode_der(const hbs_key *k, uint8_t *out,
                                                      size_t *outlen);
/* PEM encoding (NUL-terminated text, lines of 64 characters, final newline). *outlen as above;
 * the length returned excludes the NUL. */
HBS_API HBS_WARN_UNUSED_RESULT int hbs_key_encode_pem(const hbs_key *k, char *out,
                                                      size_t *outlen);
/* Decodes a key from PEM or DER (detected from the content). Rejects trailing data, unknown
 * OIDs, wrong lengths, and anything else malformed with HBS_ERR_MALFORMED_KEY or
 * HBS_ERR_UNKNOWN_ALGORITHM. For a secret key, also checks the embedded public key is
 * consistent in length (the root itself is checked by hbs_slhdsa_sk_check). */
HBS_API HBS_WARN_UNUSED_RESULT int hbs_key_decode(hbs_key *k, const uint8_t *in, size_t inlen);

/* Zeroes a key structure. */
HBS_API void hbs_key_wipe(hbs_key *k);

#ifdef __cplusplus
}
#endif
#endif
