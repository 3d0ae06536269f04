/* Internals shared by the XMSS files: the hashing context, addresses, WOTS+, trees and the
 * BDS traversal state. Nothing here is public. */
#ifndef HBS_XMSS_INTERNAL_H
#define HBS_XMSS_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "core/leaf_engine.h"
#include "hash/hash.h"
#include "xmss/params.h"

/* ---- addresses (RFC 8391 section 2.5): 8 big-endian words, kept serialised ---- */
enum { XMSS_ADRS_OTS = 0, XMSS_ADRS_LTREE = 1, XMSS_ADRS_TREE = 2 };

typedef struct {
    uint8_t b[XMSS_ADRS_BYTES];
} xmss_adrs;

static inline void xmss_put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static inline uint32_t xmss_get32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Word i of an address (0 layer, 1-2 tree, 3 type, 4 OTS / L-tree / padding,
 * 5 chain / height, 6 hash / index, 7 keyAndMask). */
static inline void xmss_adrs_set(xmss_adrs *a, unsigned word, uint32_t v)
{
    xmss_put32(a->b + 4 * word, v);
}

/* A fresh address of a type in tree `tree` of `layer` (all other words zero). */
static inline void xmss_adrs_init(xmss_adrs *a, uint32_t layer, uint64_t tree, uint32_t type)
{
    for (unsigned i = 0; i < XMSS_ADRS_BYTES; i++)
        a->b[i] = 0;
    xmss_adrs_set(a, 0, layer);
    xmss_adrs_set(a, 1, (uint32_t)(tree >> 32));
    xmss_adrs_set(a, 2, (uint32_t)tree);
    xmss_adrs_set(a, 3, type);
}

/* ---- hashing context ----
 * With SHA-2 and padlen + n equal to one block (n = 32 with SHA-256, n = 64 with SHA-512),
 * the first block of every PRF input (toByte(3) || SEED) and of every PRF_keygen input
 * (toByte(4) || SK_SEED) is the same for a whole key: it is compressed once here. */
typedef struct {
    const hbs_xmss_params *p;
    uint8_t pub_seed[XMSS_MAX_N];
    uint8_t sk_seed[XMSS_MAX_N]; /* zero for a verifier */
    int midstate;
    hbs_sha256_ctx prf256, keygen256;
    hbs_sha512_ctx prf512, keygen512;
    const hbs_leaf_engine *engine; /* key generation only: leaves of whole trees (or NULL) */
} xmss_ctx;

void hbs_xmss_ctx_init(xmss_ctx *c, const hbs_xmss_params *p, const uint8_t *pub_seed,
                       const uint8_t *sk_seed);
void hbs_xmss_ctx_wipe(xmss_ctx *c);

/* F over count values (n bytes each) with their addresses (keyAndMask is overwritten):
 * out may equal in. */
void hbs_xmss_thash_f_many(const xmss_ctx *c, uint8_t *out, const uint8_t *in,
                           const xmss_adrs *adrs, size_t count);
/* H over count pairs (2n bytes each); out[i] may overlap in only at or below in[2i]. */
void hbs_xmss_thash_h_many(const xmss_ctx *c, uint8_t *out, const uint8_t *in,
                           const xmss_adrs *adrs, size_t count);
/* PRF_keygen(SK_SEED, PUB_SEED || ADRS) for count addresses: WOTS+ secret chain starts. */
void hbs_xmss_prf_keygen_many(const xmss_ctx *c, uint8_t *out, const xmss_adrs *adrs,
                              size_t count);
/* r = PRF(SK_PRF, toByte(idx, 32)). */
void hbs_xmss_prf_r(const xmss_ctx *c, uint8_t *r, const uint8_t *sk_prf, uint64_t idx);
/* H_msg(r || root || toByte(idx, n), M). */
void hbs_xmss_hash_msg(const xmss_ctx *c, uint8_t *out, const uint8_t *r, const uint8_t *root,
                       uint64_t idx, const uint8_t *msg, size_t msglen);

/* ---- WOTS+ and leaves ---- */

/* The len base-16 digits signed for an n-byte message digest (message, then checksum). */
void hbs_xmss_wots_digits(const hbs_xmss_params *p, uint8_t *digits, const uint8_t *msg);

/* Advances count chains: chain i holds vals[i] at position start[i] and moves steps[i]
 * steps, all chains one step per hash batch. adrs[i] is its OTS address with the chain
 * word set. */
void hbs_xmss_chains(const xmss_ctx *c, uint8_t *vals, const xmss_adrs *adrs,
                     const uint8_t *start, const uint8_t *steps, size_t count);
/* As hbs_xmss_chains, also copying chain i's value after cap_at[i] steps (cap_at[i] <=
 * steps[i]) to cap_out + i * n: a signature taken on the way to the public key. */
void hbs_xmss_chains_capture(const xmss_ctx *c, uint8_t *vals, const xmss_adrs *adrs,
                             const uint8_t *start, const uint8_t *steps, size_t count,
                             const uint8_t *cap_at, uint8_t *cap_out);

typedef struct {
    uint32_t layer;
    uint64_t tree;
    uint32_t leaf;
} xmss_leafpos;

/* Most leaves computed in one batch by hbs_xmss_leaves. */
#define XMSS_LEAF_CHUNK 8

/* Computes the leaves (L-tree roots of WOTS+ public keys) at pos[0..count). If sign_digits
 * is not NULL, the WOTS+ signature of those digits by the key of pos[0] is written to
 * sig (len * n bytes) along the way, and leaf_mask bit 0 says whether leaf 0 is wanted too
 * (else only the signature is made). count <= XMSS_LEAF_CHUNK. */
void hbs_xmss_leaves(const xmss_ctx *c, uint8_t *out, const xmss_leafpos *pos, size_t count,
                     const uint8_t *sign_digits, uint8_t *sig, int want_leaf0);

/* Leaves of one tree, consecutive: first .. first + count - 1 (any count). */
void hbs_xmss_leaf_range(const xmss_ctx *c, uint8_t *out, uint32_t layer, uint64_t tree,
                         uint32_t first, size_t count);

/* The WOTS+ public key's leaf from a signature (verification): sig is len * n bytes. */
void hbs_xmss_leaf_from_sig(const xmss_ctx *c, uint8_t *leaf, const uint8_t *sig,
                            const uint8_t *digits, uint32_t layer, uint64_t tree,
                            uint32_t leaf_idx);

/* Tree nodes: count parents at `height` (>= 1) with indices first .. from their children
 * (2n bytes each, left then right). */
void hbs_xmss_tree_nodes(const xmss_ctx *c, uint8_t *out, const uint8_t *children,
                         uint32_t layer, uint64_t tree, unsigned height, uint32_t first,
                         size_t count);

/* A whole tree of height H as one array (what a leaf engine's xmss_tree hands out): the 2^H
 * leaves, then each level up, 2^(H+1) - 1 nodes. Level z starts at node 2^(H+1) - 2^(H+1-z). */
static inline size_t hbs_xmss_level_at(unsigned H, unsigned z)
{
    return ((size_t)2 << H) - ((size_t)2 << (H - z));
}

/* Levels 1 .. H of such an array from its leaves (nodes[0 .. 2^H)). */
void hbs_xmss_tree_levels(const xmss_ctx *c, uint8_t *nodes, uint32_t layer, uint64_t tree,
                          unsigned H);

/* ---- BDS traversal state of one tree (Buchmann, Dahmen, Schneider 2008) ---- */
typedef struct {
    uint8_t h;          /* the height of the node this instance makes */
    uint8_t completed;
    uint8_t stackusage; /* its nodes on the shared stack */
    uint32_t next_idx;  /* next leaf it consumes */
    uint8_t node[XMSS_MAX_N];
} xmss_treehash;

typedef struct {
    uint8_t auth[XMSS_MAX_TREE_HEIGHT][XMSS_MAX_N];
    uint8_t keep[XMSS_MAX_TREE_HEIGHT / 2][XMSS_MAX_N];
    xmss_treehash th[XMSS_MAX_TREE_HEIGHT];
    uint8_t stack[XMSS_MAX_TREE_HEIGHT + 1][XMSS_MAX_N];
    uint8_t stack_lv[XMSS_MAX_TREE_HEIGHT + 1];
    uint8_t stack_len;
    uint8_t *retain; /* hbs_xmss_retain_nodes(H, K) nodes, owned by the key */
} xmss_bds;

/* Shape of the trees of a key: height H, BDS parameter K, node size n. */
typedef struct {
    unsigned H, K, n;
} xmss_shape;

/* Nodes kept for the top K levels: 2^K - K - 1. */
size_t hbs_xmss_retain_nodes(unsigned H, unsigned K);

/* Where the tree lives: the hashing context and the tree's address. */
typedef struct {
    const xmss_ctx *c;
    uint32_t layer;
    uint64_t tree;
    const uint8_t *leaves; /* bds_build: all 2^H leaves, computed ahead (or NULL) */
    const uint8_t *nodes;  /* every node, the leaves first, then each level up (or NULL): the
                            * traversal reads inner nodes here instead of hashing them */
} xmss_treeref;

/* Makes a BDS state ready to sign leaf s from scratch: every leaf of the tree is computed,
 * spread over the thread pool. root may be NULL. progress (may be NULL) is told of leaves
 * done, adding to *done of total; returns HBS_OK or HBS_ERR_CANCELLED / NO_MEMORY. */
int hbs_xmss_bds_build(const xmss_shape *sh, const xmss_treeref *t, xmss_bds *b, uint8_t *root,
                       uint32_t s, hbs_progress_fn progress, void *progress_user,
                       uint64_t *done, uint64_t total);

/* The incremental version for s = 0: feed leaves 0, 1, ... in order (one per call); after
 * the last, the root is in b->stack[0] (stack_len 1). b must start cleared (stack_len 0). */
void hbs_xmss_bds_feed(const xmss_shape *sh, const xmss_treeref *t, xmss_bds *b,
                       const uint8_t *leaf, uint32_t leaf_idx);

/* The traversal round after signing leaf s (s < 2^H - 1): refreshes the authentication
 * path for s + 1. leaf is leaf s when s is even (else unused). t->c NULL: a dry run that
 * only moves the bookkeeping (for planning). */
void hbs_xmss_bds_round(const xmss_shape *sh, const xmss_treeref *t, xmss_bds *b, uint32_t s,
                        const uint8_t *leaf);

/* Plans up to `updates` treehash updates: writes the leaf indices they will consume, in
 * order, and returns how many (fewer when every instance is complete). b is not changed. */
size_t hbs_xmss_bds_plan(const xmss_shape *sh, const xmss_bds *b, unsigned updates,
                         uint32_t *leaf_idx);

/* Up to `updates` treehash updates (as many as the plan would name), each reading its leaf
 * from leaves, all 2^H leaves of the tree at hand; returns how many. Same result as the plan
 * followed by hbs_xmss_bds_update with the leaves it named, without the plan's copy. */
size_t hbs_xmss_bds_updates_from(const xmss_shape *sh, const xmss_treeref *t, xmss_bds *b,
                                 unsigned updates, const uint8_t *leaves);

/* Performs the next treehash update with the leaf the plan named for it. */
void hbs_xmss_bds_update(const xmss_shape *sh, const xmss_treeref *t, xmss_bds *b,
                         const uint8_t *leaf);

/* Structural checks of an imported state (every count and height in range). */
int hbs_xmss_bds_valid(const xmss_shape *sh, const xmss_bds *b, int building, uint32_t fed);

#endif
