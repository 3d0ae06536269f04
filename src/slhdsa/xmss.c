#include "slhdsa/xmss.h"

#include <stdlib.h>
#include <string.h>

#include "common/pool.h"

#include "hbs/hbs.h"
#include "slhdsa/wots.h"

#define NODE_BATCH 64

static void xmss_leaves(void *user, uint8_t *out, uint32_t first, size_t count)
{
    const slhdsa_xmss_tree *u = user;
    if (u->leaves_made)
        memcpy(out, u->leaf_pks + first * u->c->p->n, count * u->c->p->n);
    else
        hbs_slhdsa_wots_pkgen_many(u->c, out, &u->tree, first, count);
}

static void xmss_nodes(void *user, uint8_t *out, const uint8_t *children, unsigned height,
                       uint32_t first, size_t count)
{
    const slhdsa_xmss_tree *u = user;
    const size_t n = u->c->p->n;
    slhdsa_adrs adrs[NODE_BATCH];

    while (count) {
        size_t todo = count < NODE_BATCH ? count : NODE_BATCH;
        for (size_t i = 0; i < todo; i++) {
            adrs[i] = u->tree;
            adrs_set_type(&adrs[i], ADRS_TREE);
            adrs_set_tree_height(&adrs[i], height);
            adrs_set_tree_index(&adrs[i], first + (uint32_t)i);
        }
        hbs_slhdsa_thash_many(u->c, out, children, 2, adrs, todo);
        out += todo * n;
        children += 2 * todo * n;
        first += (uint32_t)todo;
        count -= todo;
    }
}

void hbs_slhdsa_xmss_tree_init(slhdsa_xmss_tree *xt, const slhdsa_ctx *c, uint32_t layer,
                               uint64_t tree)
{
    memset(&xt->tree, 0, sizeof xt->tree);
    adrs_set_layer(&xt->tree, layer);
    adrs_set_tree(&xt->tree, tree);
    xt->c = c;
    xt->t.n = c->p->n;
    xt->t.height = c->p->hp;
    xt->t.leaves = xmss_leaves;
    xt->t.nodes = xmss_nodes;
    xt->t.user = xt;
    xt->leaves_made = 0;
}

int hbs_slhdsa_xmss_tree(const slhdsa_ctx *c, uint8_t *root, uint8_t *auth, uint32_t layer,
                         uint64_t tree, uint32_t idx)
{
    slhdsa_xmss_tree xt;
    hbs_slhdsa_xmss_tree_init(&xt, c, layer, tree);
    return hbs_merkle_root_auth(&xt.t, root, auth, idx);
}

/* ---- the signer's cache of the top layers ---- */

static size_t cache_trees_before(const hbs_slhdsa_params *p, unsigned layer_from_top)
{
    size_t trees = 0;
    for (unsigned i = 0; i < layer_from_top; i++)
        trees += (size_t)1 << (p->hp * i);
    return trees;
}

size_t hbs_slhdsa_ht_cache_bytes(const hbs_slhdsa_params *p, unsigned layers)
{
    if (layers > p->d || (size_t)p->hp * layers >= 8 * sizeof(size_t) - 16)
        return 0;
    const size_t tree_bytes = (((size_t)2 << p->hp) - 1) * p->n;
    return cache_trees_before(p, layers) * tree_bytes;
}

typedef struct {
    const slhdsa_ctx *c;
    const slhdsa_ht_cache *cache;
    unsigned layer_from_top;
    uint8_t *base;
} cache_run;

static void cache_tree_task(void *arg, size_t t)
{
    const cache_run *r = arg;
    slhdsa_xmss_tree xt;
    hbs_slhdsa_xmss_tree_init(&xt, r->c, r->c->p->d - 1 - r->layer_from_top, t);
    hbs_merkle_full(&xt.t, r->base + t * r->cache->tree_bytes);
}

int hbs_slhdsa_ht_cache_build(slhdsa_ht_cache *cache, const slhdsa_ctx *c, unsigned layers)
{
    const hbs_slhdsa_params *p = c->p;
    const size_t bytes = hbs_slhdsa_ht_cache_bytes(p, layers);
    memset(cache, 0, sizeof *cache);
    if (layers == 0)
        return HBS_OK;
    if (bytes == 0)
        return HBS_ERR_INVALID_ARGUMENT;
    cache->nodes = malloc(bytes);
    if (!cache->nodes)
        return HBS_ERR_NO_MEMORY;
    cache->layers = layers;
    cache->n = p->n;
    cache->tree_bytes = (((size_t)2 << p->hp) - 1) * p->n;
    for (unsigned i = 0; i < layers; i++) {
        cache_run r = {c, cache, i, cache->nodes + cache_trees_before(p, i) * cache->tree_bytes};
        /* one tree: its leaves are spread over threads; many trees: one per thread */
        hbs_parallel_for((size_t)1 << (p->hp * i), cache_tree_task, &r);
    }
    return HBS_OK;
}

void hbs_slhdsa_ht_cache_free(slhdsa_ht_cache *cache)
{
    free(cache->nodes);
    memset(cache, 0, sizeof *cache);
}

const uint8_t *hbs_slhdsa_ht_cache_root(const slhdsa_ht_cache *cache)
{
    /* the top tree comes first, and its root is its last node */
    return cache->nodes + cache->tree_bytes - cache->n;
}

/* ---- signing ---- */

/* The leaves of several small trees of one signature, made as one batch. */
typedef struct {
    const slhdsa_ctx *c;
    slhdsa_xmss_tree **trees;
    slhdsa_adrs adrs[SLHDSA_MAX_D];
    uint32_t per_tree;
    size_t total, per_task;
} small_trees;

static void small_leaves_task(void *arg, size_t task)
{
    const small_trees *st = arg;
    const size_t n = st->c->p->n, first = task * st->per_task;
    size_t count;
    uint8_t pk[HBS_SLHDSA_WOTS_BATCH * SLHDSA_MAX_N]; /* per_task <= the batch */
    if (first >= st->total)
        return;
    count = st->total - first < st->per_task ? st->total - first : st->per_task;
    hbs_slhdsa_wots_pkgen_trees(st->c, pk, st->adrs, st->per_tree, (uint32_t)first, count);
    for (size_t g = first; g < first + count; g++) {
        slhdsa_xmss_tree *xt = st->trees[g / st->per_tree];
        memcpy(xt->leaf_pks + (g % st->per_tree) * n, pk + (g - first) * n, n);
    }
}

/* Makes every leaf of the ntrees trees (each a small tree) in one batch over the threads:
 * tasks of one key generation batch, their number rounded up to a multiple of the threads
 * so that none waits for the last one alone. */
static void make_small_leaves(const slhdsa_ctx *c, slhdsa_xmss_tree **trees, size_t ntrees)
{
    const size_t threads = hbs_get_threads();
    small_trees st;
    size_t tasks;
    st.c = c;
    st.trees = trees;
    st.per_tree = (uint32_t)1 << c->p->hp;
    st.total = ntrees * st.per_tree;
    tasks = (st.total + HBS_SLHDSA_WOTS_BATCH - 1) / HBS_SLHDSA_WOTS_BATCH;
    if (threads > 1)
        tasks = (tasks + threads - 1) / threads * threads;
    st.per_task = (st.total + tasks - 1) / tasks;
    for (size_t j = 0; j < ntrees; j++)
        st.adrs[j] = trees[j]->tree;
    hbs_parallel_for(tasks, small_leaves_task, &st);
    for (size_t j = 0; j < ntrees; j++)
        trees[j]->leaves_made = 1;
}

size_t hbs_slhdsa_ht_sign_jobs(const slhdsa_ctx *c, uint8_t *sig, uint64_t idx_tree,
                               uint32_t idx_leaf, const slhdsa_ht_cache *cache,
                               slhdsa_xmss_tree *trees, uint32_t *leaves, hbs_merkle_job *jobs,
                               uint8_t *roots)
{
    const hbs_slhdsa_params *p = c->p;
    const unsigned cached = cache ? cache->layers : 0;
    slhdsa_xmss_tree *small[SLHDSA_MAX_D];
    size_t njobs = 0;
    /* Every layer's tree and leaf follow from the digest, so all d trees can be built at
     * once; only the WOTS+ signatures chain the layers together. */
    for (uint32_t layer = 0; layer < p->d; layer++) {
        uint8_t *root = roots + (size_t)layer * p->n;
        uint8_t *auth = sig + (size_t)layer * p->xmss_sig_bytes + p->wots_sig_bytes;
        hbs_slhdsa_xmss_tree_init(&trees[layer], c, layer, idx_tree);
        leaves[layer] = idx_leaf;
        if (layer + cached >= p->d) {
            const unsigned from_top = p->d - 1 - layer;
            const uint8_t *nodes =
                cache->nodes + (cache_trees_before(p, from_top) + idx_tree) * cache->tree_bytes;
            hbs_merkle_full_lookup(&trees[layer].t, nodes, root, auth, idx_leaf);
        } else {
            jobs[njobs].tree = &trees[layer].t;
            jobs[njobs].root = root;
            jobs[njobs].auth = auth;
            jobs[njobs].idx = idx_leaf;
            small[njobs] = &trees[layer];
            njobs++;
        }
        idx_leaf = (uint32_t)(idx_tree & ((1u << p->hp) - 1));
        idx_tree >>= p->hp;
    }
    if (njobs > 1 && ((size_t)1 << p->hp) <= SLHDSA_SMALL_TREE_LEAVES)
        make_small_leaves(c, small, njobs);
    return njobs;
}

void hbs_slhdsa_ht_sign_finish(const slhdsa_ctx *c, uint8_t *sig, const uint8_t *msg,
                               const uint8_t *roots, const slhdsa_xmss_tree *trees,
                               const uint32_t *leaves)
{
    const hbs_slhdsa_params *p = c->p;
    for (uint32_t layer = 0; layer < p->d; layer++) {
        const uint8_t *m = layer == 0 ? msg : roots + (size_t)(layer - 1) * p->n;
        hbs_slhdsa_wots_sign(c, sig + (size_t)layer * p->xmss_sig_bytes, m, &trees[layer].tree,
                             leaves[layer]);
    }
}

void hbs_slhdsa_ht_root_from_sig(const slhdsa_ctx *c, uint8_t *root, const uint8_t *sig,
                                 const uint8_t *msg, uint64_t idx_tree, uint32_t idx_leaf)
{
    const hbs_slhdsa_params *p = c->p;
    uint8_t node[SLHDSA_MAX_N], scratch[2 * SLHDSA_MAX_N];
    memcpy(node, msg, p->n);

    for (uint32_t layer = 0; layer < p->d; layer++) {
        slhdsa_xmss_tree xt;
        hbs_slhdsa_xmss_tree_init(&xt, c, layer, idx_tree);
        hbs_slhdsa_wots_pk_from_sig(c, node, sig, node, &xt.tree, idx_leaf);
        hbs_merkle_climb(&xt.t, node, sig + p->wots_sig_bytes, idx_leaf, scratch);
        sig += p->xmss_sig_bytes;
        idx_leaf = (uint32_t)(idx_tree & ((1u << p->hp) - 1));
        idx_tree >>= p->hp;
    }
    memcpy(root, node, p->n);
}
