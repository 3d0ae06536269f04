/* LMS and HSS (RFC 8554, with the SP 800-208 / RFC 9858 parameter sets): the read-only side.
 *
 * Parameter lookup by name and IANA typecode, sizes, and HSS verification. Nothing here signs:
 * signing from a key held only in memory is what reuses one-time keys, so the signing side
 * lives behind the durable key store.
 *
 * Names. One level is written "LMS_SHA256_M32_H10/LMOTS_SHA256_N32_W8" (SHAKE256:
 * "LMS_SHAKE_M32_H10/LMOTS_SHAKE_N32_W8"; n = 24: "LMS_SHA256_M24_H10/LMOTS_SHA256_N24_W8");
 * an HSS key is its levels joined by ',' top level first. Parsing ignores case; within one
 * level the LMS and LM-OTS types must use the same hash and the same n (SP 800-208).
 *
 * Encodings are those of RFC 8554: an HSS public key is u32 L || LMS public key of the top
 * level; an HSS signature is u32 (L-1) || (LMS signature || LMS public key) per lower level ||
 * the LMS signature of the message. See hbs.h for the calling conventions.
 */
#ifndef HBS_LMS_H
#define HBS_LMS_H

#include "hbs/hbs.h"

#ifdef __cplusplus
extern "C" {
#endif

#define HBS_HSS_MAX_LEVELS 8
#define HBS_LMS_I_BYTES 16
#define HBS_LMS_MAX_N 32

typedef struct hbs_lms_type hbs_lms_type;     /* an LMS tree type, e.g. LMS_SHA256_M32_H10 */
typedef struct hbs_lmots_type hbs_lmots_type; /* an LM-OTS type, e.g. LMOTS_SHA256_N32_W8 */

/* Types by IANA typecode or by name (case-insensitive); NULL if unknown. */
HBS_API const hbs_lms_type *hbs_lms_type_by_code(uint32_t code);
HBS_API const hbs_lms_type *hbs_lms_type_by_name(const char *name);
HBS_API const hbs_lmots_type *hbs_lmots_type_by_code(uint32_t code);
HBS_API const hbs_lmots_type *hbs_lmots_type_by_name(const char *name);

HBS_API uint32_t hbs_lms_type_code(const hbs_lms_type *t);
HBS_API const char *hbs_lms_type_name(const hbs_lms_type *t);
HBS_API unsigned hbs_lms_type_height(const hbs_lms_type *t); /* h: 2^h one-time keys */
HBS_API size_t hbs_lms_type_m(const hbs_lms_type *t);        /* bytes per tree node */
HBS_API uint32_t hbs_lmots_type_code(const hbs_lmots_type *t);
HBS_API const char *hbs_lmots_type_name(const hbs_lmots_type *t);
HBS_API size_t hbs_lmots_type_n(const hbs_lmots_type *t);
HBS_API unsigned hbs_lmots_type_w(const hbs_lmots_type *t);
HBS_API unsigned hbs_lmots_type_p(const hbs_lmots_type *t);  /* chains per one-time key */

/* The LMS public key (24 + m bytes) and signature sizes of one level. */
HBS_API size_t hbs_lms_pk_bytes(const hbs_lms_type *t);
HBS_API size_t hbs_lms_sig_bytes(const hbs_lms_type *t, const hbs_lmots_type *ots);

/* An HSS parameter set: 1 to 8 levels, top first, each an LMS type with a matching LM-OTS
 * type. cache_height c is the memory setting of the signer's tree traversal (0: the default,
 * HBS_HSS_CACHE_DEFAULT = 10); verification ignores it. The signer keeps the top c levels of
 * each tree and, below them, stripes of c/2 levels, each costing one leaf computation per
 * signature: with c = 10 a tree takes about 70 KiB (n = 32, twice that for a lower level,
 * which also builds its next tree), and a signature computes no leaf for H5/H10, one for H15,
 * two for H20, three for H25, plus one of the next bottom tree when L > 1. */
#define HBS_HSS_CACHE_DEFAULT 8
#define HBS_HSS_CACHE_MIN 4
#define HBS_HSS_CACHE_MAX 20
typedef struct {
    unsigned levels;
    const hbs_lms_type *lms[HBS_HSS_MAX_LEVELS];
    const hbs_lmots_type *ots[HBS_HSS_MAX_LEVELS];
    unsigned cache_height;
} hbs_hss_params;

/* Parses a name as described above into *p (cache_height 0). HBS_ERR_UNKNOWN_ALGORITHM for
 * an unknown level or a level whose types do not match, HBS_ERR_INVALID_ARGUMENT for NULL or
 * more than 8 levels. */
HBS_API HBS_WARN_UNUSED_RESULT int hbs_hss_params_parse(hbs_hss_params *p, const char *name);
/* Checks a parameter set: level count, known and matching types, cache_height 0 or in range. */
HBS_API HBS_WARN_UNUSED_RESULT int hbs_hss_params_check(const hbs_hss_params *p);
/* The canonical name (NUL-terminated) into out; *outlen (if not NULL) gets its length without
 * the NUL. HBS_ERR_BUFFER_TOO_SMALL if it does not fit (out is then ""). */
HBS_API HBS_WARN_UNUSED_RESULT int hbs_hss_params_name(const hbs_hss_params *p, char *out,
                                                       size_t outcap, size_t *outlen);
/* 2^(sum of heights): the signatures the key can make; 0 if p is invalid. */
HBS_API uint64_t hbs_hss_params_total(const hbs_hss_params *p);
HBS_API size_t hbs_hss_params_pk_bytes(const hbs_hss_params *p);  /* 4 + 24 + m of level 0 */
HBS_API size_t hbs_hss_params_sig_bytes(const hbs_hss_params *p);

/* Every valid single-level name (80 of them), in typecode order; NULL past the end. */
HBS_API const char *hbs_lms_name_at(size_t i);

/* HSS verification (any L from 1 to 8, any mix of types). Returns HBS_OK, or
 * HBS_ERR_VERIFY_FAILED for anything else: a wrong length, unknown or mismatched typecodes,
 * an index out of range, a malformed public key. Never reads outside its inputs. */
HBS_API HBS_WARN_UNUSED_RESULT int hbs_hss_verify(const uint8_t *pk, size_t pklen,
                                                  const uint8_t *msg, size_t msglen,
                                                  const uint8_t *sig, size_t siglen);

/* Verification of a bare LMS signature (no HSS prefixes) under a bare LMS public key, as
 * used by ACVP. Same results as hbs_hss_verify. */
HBS_API HBS_WARN_UNUSED_RESULT int hbs_lms_verify(const uint8_t *pk, size_t pklen,
                                                  const uint8_t *msg, size_t msglen,
                                                  const uint8_t *sig, size_t siglen);

#ifdef __cplusplus
}
#endif
#endif
