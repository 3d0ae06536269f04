/* XMSS trees of the hypertree (FIPS 205, section 6) and the hypertree itself (section 7). */
#ifndef HBS_SLHDSA_XMSS_H
#define HBS_SLHDSA_XMSS_H

#include "slhdsa/thash.h"

/* Root of the XMSS tree (layer, tree) and, if auth is not NULL, the authentication path of
 * leaf idx (h' * n bytes). Returns 0 or HBS_ERR_NO_MEMORY. */
int hbs_slhdsa_xmss_tree(const slhdsa_ctx *c, uint8_t *root, uint8_t *auth, uint32_t layer,
                         uint64_t tree, uint32_t idx);

/* ht_sign: signs the n-byte msg (the FORS public key); sig is d * (len + h') * n bytes. */
int hbs_slhdsa_ht_sign(const slhdsa_ctx *c, uint8_t *sig, const uint8_t *msg, uint64_t idx_tree,
                       uint32_t idx_leaf);

/* ht_verify's computation: the hypertree root a signature implies (compare with PK.root). */
void hbs_slhdsa_ht_root_from_sig(const slhdsa_ctx *c, uint8_t *root, const uint8_t *sig,
                                 const uint8_t *msg, uint64_t idx_tree, uint32_t idx_leaf);

#endif
