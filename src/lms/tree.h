/* LMS trees: the cache layout of the signer's traversal, tree builders, signing at a leaf.
 *
 * Node (z, k) is the k-th node at height z (leaves are z = 0); RFC 8554 numbers it
 * r = 2^(h-z) + k.
 *
 * What the signer keeps of a tree of height h, given the memory setting c (cache_height):
 *  - the top T = min(h, c) levels in full: every node at heights h-T .. h (2^(T+1) - 1);
 *  - below them, R = h - T levels cut into stripes of height b = max(2, c/2) (the highest
 *    one may be lower), bottom first. For each stripe, at heights lo .. lo+hgt-1: the
 *    subtree that holds the current leaf ("cur", 2^(hgt+1) - 2 nodes), the next subtree being
 *    built ("next", same size), and the builder's pending left nodes ("left", lo + hgt).
 * The next subtree of a stripe spanning S = 2^(lo+hgt) leaves gets one leaf per signature,
 * so it is complete exactly when the current one runs out: a signature costs one leaf per
 * stripe, and the state after any index is a function of that index alone.
 * With the default c = 10 (n = 32): H5/H10 keep the whole tree (64 KiB) and compute no
 * leaves when signing; H15 one stripe (1 leaf per signature); H20 two; H25 three.
 */
#ifndef HBS_LMS_TREE_H
#define HBS_LMS_TREE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "core/leaf_engine.h"
#include "lms/params.h"
#include "lms/parse.h"

#define HBS_LMS_MAX_STRIPES 12

typedef struct {
    unsigned lo, hgt;
} hbs_lms_stripe;

typedef struct {
    const hbs_lms_type *lms;
    const hbs_lmots_type *ots;
    unsigned h, n, T, nstripes;
    hbs_lms_stripe s[HBS_LMS_MAX_STRIPES];
} hbs_lms_layout;

void hbs_lms_layout_init(hbs_lms_layout *L, const hbs_lms_type *t, const hbs_lmots_type *o,
                         unsigned cache_height);
size_t hbs_lms_top_nodes(const hbs_lms_layout *L);
size_t hbs_lms_stripe_nodes(const hbs_lms_layout *L, unsigned s);
/* Subtrees of stripe s in the tree (2^(h - lo - hgt)). */
uint32_t hbs_lms_stripe_count(const hbs_lms_layout *L, unsigned s);

/* Where a builder stores the nodes it computes: `top` takes heights h-T..h, sbuf[s] the
 * subtree ssub[s] of stripe s; NULL buffers take nothing. */
typedef struct {
    const hbs_lms_layout *L;
    const uint8_t *I;
    const uint8_t *seed;
    uint8_t *top;
    uint8_t *sbuf[HBS_LMS_MAX_STRIPES];
    uint32_t ssub[HBS_LMS_MAX_STRIPES];
    const hbs_leaf_engine *engine; /* NULL, or where big subtrees get their leaves */
} hbs_lms_view;

/* Progress of a long build, counted in leaves; shared by every thread of it. */
typedef struct {
    hbs_progress_fn fn;
    void *user;
    uint64_t total;
    atomic_uint_fast64_t done;
    atomic_int cancelled;
    pthread_mutex_t lock;
} hbs_lms_progress;

/* All nodes of the subtree rooted at (z, k), spread over the thread pool; root gets n bytes.
 * pr may be NULL. Returns HBS_OK, HBS_ERR_NO_MEMORY or HBS_ERR_CANCELLED. */
int hbs_lms_build_subtree(const hbs_lms_view *v, unsigned z, uint32_t k, uint8_t *root,
                          hbs_lms_progress *pr);

/* The state of a builder of the subtree of height `top` whose first leaf is `base`, after its
 * first r leaves: every node complete within them is captured, and left[z] (z < top) holds
 * the root of the block of 2^z leaves for each bit z set in r (zeros elsewhere). */
int hbs_lms_build_range(const hbs_lms_view *v, unsigned top, uint32_t base, uint32_t r,
                        uint8_t *left);

/* One more leaf (number base + done) for such a builder: computes it, climbs while it
 * completes right children, captures every node. Returns HBS_OK or HBS_ERR_NO_MEMORY. */
int hbs_lms_builder_step(const hbs_lms_view *v, unsigned top, uint32_t base, uint32_t done,
                         uint8_t *left);
/* The same with the leaf (n bytes) made elsewhere. */
void hbs_lms_builder_put(const hbs_lms_view *v, unsigned top, uint32_t base, uint32_t done,
                         uint8_t *left, const uint8_t *leaf);

/* The authentication path of leaf q (h nodes, bottom first) from the cached top and the
 * current subtrees of the stripes. */
void hbs_lms_auth_path(const hbs_lms_layout *L, const uint8_t *top, uint8_t *const cur[],
                       uint32_t q, uint8_t *path);

/* The LMS signature of msg at leaf q (hbs_lms_sig_bytes long) from the cached nodes.
 * Returns HBS_OK or HBS_ERR_NO_MEMORY. */
int hbs_lms_sign_at(const hbs_lms_layout *L, const uint8_t *top, uint8_t *const cur[],
                    const uint8_t I[16], const uint8_t *seed, uint32_t q, uint8_t *sig,
                    const uint8_t *msg, size_t msglen);

/* The LMS public key (u32 type || u32 otstype || I || root) of the tree (I, SEED): every
 * leaf, spread over the threads. Returns HBS_OK or an error. */
int hbs_lms_public_key(const hbs_lms_type *t, const hbs_lmots_type *o, const uint8_t I[16],
                       const uint8_t *seed, uint8_t *pk);

/* Verification in two steps, so that the levels of an HSS signature share hash lanes:
 * hbs_lms_verify_parse (lms/parse.h), then verify_batch checks up to
 * HBS_LMOTS_VERIFY_BATCH parsed signatures, each over its message (RFC 8554 Algorithm 6):
 * 1 if all are valid. */
int hbs_lms_verify_batch(const hbs_lms_parsed *v, const uint8_t *const msg[],
                         const size_t msglen[], size_t count);

#endif
