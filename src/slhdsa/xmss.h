/* XMSS trees of the hypertree (FIPS 205, section 6) and the hypertree itself (section 7). */
#ifndef HBS_SLHDSA_XMSS_H
#define HBS_SLHDSA_XMSS_H

#include "core/merkle.h"
#include "slhdsa/thash.h"

/* One XMSS tree of the hypertree as a Merkle tree over WOTS+ public keys. */
typedef struct {
    hbs_merkle_tree t;
    const slhdsa_ctx *c;
    slhdsa_adrs tree; /* layer and tree address */
} slhdsa_xmss_tree;

void hbs_slhdsa_xmss_tree_init(slhdsa_xmss_tree *xt, const slhdsa_ctx *c, uint32_t layer,
                               uint64_t tree);

/* Root of the XMSS tree (layer, tree) and, if auth is not NULL, the authentication path of
 * leaf idx (h' * n bytes). Returns 0 or HBS_ERR_NO_MEMORY. */
int hbs_slhdsa_xmss_tree(const slhdsa_ctx *c, uint8_t *root, uint8_t *auth, uint32_t layer,
                         uint64_t tree, uint32_t idx);

/* The first half of ht_sign: sets up d Merkle jobs, one per layer, whose paths go into sig
 * (d * (len + h') * n bytes) and roots to roots[j*n]. Run them, then finish. */
void hbs_slhdsa_ht_sign_jobs(const slhdsa_ctx *c, uint8_t *sig, uint64_t idx_tree,
                             uint32_t idx_leaf, slhdsa_xmss_tree *trees, hbs_merkle_job *jobs,
                             uint8_t *roots);

/* The second half: the WOTS+ signature of each layer, over msg (the FORS public key) at
 * layer 0 and over the root of the layer below elsewhere. */
void hbs_slhdsa_ht_sign_finish(const slhdsa_ctx *c, uint8_t *sig, const uint8_t *msg,
                               const uint8_t *roots, const slhdsa_xmss_tree *trees,
                               const hbs_merkle_job *jobs);

/* ht_verify's computation: the hypertree root a signature implies (compare with PK.root). */
void hbs_slhdsa_ht_root_from_sig(const slhdsa_ctx *c, uint8_t *root, const uint8_t *sig,
                                 const uint8_t *msg, uint64_t idx_tree, uint32_t idx_leaf);

#endif
