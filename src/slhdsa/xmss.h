/* XMSS trees of the hypertree (FIPS 205, section 6) and the hypertree itself (section 7). */
#ifndef HBS_SLHDSA_XMSS_H
#define HBS_SLHDSA_XMSS_H

#include "core/merkle.h"
#include "slhdsa/thash.h"

/* Trees of at most this many leaves have them made for all layers at once when signing. */
#define SLHDSA_SMALL_TREE_LEAVES 16

/* One XMSS tree of the hypertree as a Merkle tree over WOTS+ public keys. */
typedef struct {
    hbs_merkle_tree t;
    const slhdsa_ctx *c;
    slhdsa_adrs tree; /* layer and tree address */
    int leaves_made;  /* leaf_pks holds every leaf (a small tree, made beforehand) */
    uint8_t leaf_pks[SLHDSA_SMALL_TREE_LEAVES * SLHDSA_MAX_N];
} slhdsa_xmss_tree;

void hbs_slhdsa_xmss_tree_init(slhdsa_xmss_tree *xt, const slhdsa_ctx *c, uint32_t layer,
                               uint64_t tree);

/* Root of the XMSS tree (layer, tree) and, if auth is not NULL, the authentication path of
 * leaf idx (h' * n bytes). Returns 0 or HBS_ERR_NO_MEMORY. */
int hbs_slhdsa_xmss_tree(const slhdsa_ctx *c, uint8_t *root, uint8_t *auth, uint32_t layer,
                         uint64_t tree, uint32_t idx);

/* The top hypertree layers of one key with every node stored: a signer's cache. Cached
 * layer i (counted from the top, layer d-1-i) holds 2^(h'*i) trees. */
typedef struct {
    unsigned layers;
    size_t n;
    size_t tree_bytes; /* (2^(h'+1) - 1) * n */
    uint8_t *nodes;    /* the top tree, then the next layer's trees in order, ... */
} slhdsa_ht_cache;

/* Bytes a cache of `layers` layers takes, or 0 if that overflows. */
size_t hbs_slhdsa_ht_cache_bytes(const hbs_slhdsa_params *p, unsigned layers);
/* Builds the cache (allocating it); returns 0, HBS_ERR_NO_MEMORY or HBS_ERR_INVALID_ARGUMENT. */
int hbs_slhdsa_ht_cache_build(slhdsa_ht_cache *cache, const slhdsa_ctx *c, unsigned layers);
void hbs_slhdsa_ht_cache_free(slhdsa_ht_cache *cache);
/* Root of the whole hypertree, from the cache (layers >= 1). */
const uint8_t *hbs_slhdsa_ht_cache_root(const slhdsa_ht_cache *cache);

/* The first half of ht_sign: sets up a Merkle job per layer not in the cache (which may be
 * NULL), whose paths go into sig (d * (len + h') * n bytes) and roots to roots[j*n]; cached
 * layers are filled in at once. Small trees (the f sets) get their leaves made here, all
 * layers in one batch, so that their few leaves each do not leave lanes idle. Fills trees[] and leaves[] for every layer and returns the
 * number of jobs. Run them, then finish. */
size_t hbs_slhdsa_ht_sign_jobs(const slhdsa_ctx *c, uint8_t *sig, uint64_t idx_tree,
                               uint32_t idx_leaf, const slhdsa_ht_cache *cache,
                               slhdsa_xmss_tree *trees, uint32_t *leaves, hbs_merkle_job *jobs,
                               uint8_t *roots);

/* The second half: the WOTS+ signature of each layer, over msg (the FORS public key) at
 * layer 0 and over the root of the layer below elsewhere. */
void hbs_slhdsa_ht_sign_finish(const slhdsa_ctx *c, uint8_t *sig, const uint8_t *msg,
                               const uint8_t *roots, const slhdsa_xmss_tree *trees,
                               const uint32_t *leaves);

/* ht_verify's computation: the hypertree root a signature implies (compare with PK.root). */
void hbs_slhdsa_ht_root_from_sig(const slhdsa_ctx *c, uint8_t *root, const uint8_t *sig,
                                 const uint8_t *msg, uint64_t idx_tree, uint32_t idx_leaf);

#endif
