/* XMSS and XMSS^MT (RFC 8391, with the SP 800-208 parameter sets): read-only operations.
 *
 * A parameter set is a constant chosen at run time by name ("XMSS-SHA2_10_256",
 * "XMSSMT-SHA2_20/2_256", "XMSS-SHAKE256_10_192", ...; case-insensitive) or by its OID from
 * the IANA registries. The XMSS and XMSS^MT registries number their OIDs independently, so
 * an OID alone does not name a set: lookups by OID say which registry.
 *
 * Encodings are those of RFC 8391:
 *   public key = OID (4 bytes, big-endian) || root (n) || SEED (n)
 *   signature  = idx (4 bytes for XMSS, ceil(h/8) for XMSS^MT) || r (n) || the WOTS+
 *                signature and authentication path of each layer, bottom layer first.
 *
 * Signing is not here: a stateful key must never sign from a copy of its state. Keys are
 * made and used through the durable key store.
 */
#ifndef HBS_XMSS_H
#define HBS_XMSS_H

#include "hbs/hbs.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hbs_xmss_params hbs_xmss_params;

/* Largest sizes over every set (for static buffers). */
#define HBS_XMSS_MAX_N 64
#define HBS_XMSS_MAX_PK_BYTES (4 + 2 * HBS_XMSS_MAX_N)

/* Every set, XMSS first, each registry in OID order; NULL past the end. */
HBS_API const hbs_xmss_params *hbs_xmss_params_at(size_t i);
/* By name, ignoring case; NULL if unknown. */
HBS_API const hbs_xmss_params *hbs_xmss_params_by_name(const char *name);
/* By OID: mt = 0 looks in the XMSS registry, mt = 1 in the XMSS^MT one; NULL if unknown. */
HBS_API const hbs_xmss_params *hbs_xmss_params_by_oid(int mt, uint32_t oid);

/* The canonical name, as the RFC / SP 800-208 spell it. */
HBS_API const char *hbs_xmss_name(const hbs_xmss_params *p);
HBS_API uint32_t hbs_xmss_oid(const hbs_xmss_params *p);
/* 1 for XMSS^MT, 0 for XMSS. */
HBS_API int hbs_xmss_is_mt(const hbs_xmss_params *p);
HBS_API size_t hbs_xmss_n(const hbs_xmss_params *p);
/* Total tree height h and number of layers d (1 for XMSS). */
HBS_API unsigned hbs_xmss_height(const hbs_xmss_params *p);
HBS_API unsigned hbs_xmss_layers(const hbs_xmss_params *p);
HBS_API size_t hbs_xmss_pk_bytes(const hbs_xmss_params *p);
HBS_API size_t hbs_xmss_params_sig_bytes(const hbs_xmss_params *p);

/* Verifies sig over msg with the public key pk of set p. Returns HBS_OK, or
 * HBS_ERR_VERIFY_FAILED for anything else about the inputs: a public key of another length
 * or whose OID is not p's, a signature of the wrong length, an index of 2^h or more, or a
 * signature that does not match. HBS_ERR_INVALID_ARGUMENT only for NULL pointers with
 * nonzero lengths or a NULL p. */
HBS_API HBS_WARN_UNUSED_RESULT int hbs_xmss_verify(const hbs_xmss_params *p, const uint8_t *pk,
                                                   size_t pklen, const uint8_t *msg,
                                                   size_t msglen, const uint8_t *sig,
                                                   size_t siglen);

#ifdef __cplusplus
}
#endif
#endif
