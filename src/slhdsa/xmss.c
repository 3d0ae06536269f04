#include "slhdsa/xmss.h"

#include <string.h>

#include "hbs/hbs.h"
#include "slhdsa/wots.h"

#define NODE_BATCH 64

static void xmss_leaves(void *user, uint8_t *out, uint32_t first, size_t count)
{
    const slhdsa_xmss_tree *u = user;
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
}

int hbs_slhdsa_xmss_tree(const slhdsa_ctx *c, uint8_t *root, uint8_t *auth, uint32_t layer,
                         uint64_t tree, uint32_t idx)
{
    slhdsa_xmss_tree xt;
    hbs_slhdsa_xmss_tree_init(&xt, c, layer, tree);
    return hbs_merkle_root_auth(&xt.t, root, auth, idx);
}

void hbs_slhdsa_ht_sign_jobs(const slhdsa_ctx *c, uint8_t *sig, uint64_t idx_tree,
                             uint32_t idx_leaf, slhdsa_xmss_tree *trees, hbs_merkle_job *jobs,
                             uint8_t *roots)
{
    const hbs_slhdsa_params *p = c->p;
    /* Every layer's tree and leaf follow from the digest, so all d trees can be built at
     * once; only the WOTS+ signatures chain the layers together. */
    for (uint32_t layer = 0; layer < p->d; layer++) {
        hbs_slhdsa_xmss_tree_init(&trees[layer], c, layer, idx_tree);
        jobs[layer].tree = &trees[layer].t;
        jobs[layer].root = roots + (size_t)layer * p->n;
        jobs[layer].auth = sig + (size_t)layer * p->xmss_sig_bytes + p->wots_sig_bytes;
        jobs[layer].idx = idx_leaf;
        idx_leaf = (uint32_t)(idx_tree & ((1u << p->hp) - 1));
        idx_tree >>= p->hp;
    }
}

void hbs_slhdsa_ht_sign_finish(const slhdsa_ctx *c, uint8_t *sig, const uint8_t *msg,
                               const uint8_t *roots, const slhdsa_xmss_tree *trees,
                               const hbs_merkle_job *jobs)
{
    const hbs_slhdsa_params *p = c->p;
    for (uint32_t layer = 0; layer < p->d; layer++) {
        const uint8_t *m = layer == 0 ? msg : roots + (size_t)(layer - 1) * p->n;
        hbs_slhdsa_wots_sign(c, sig + (size_t)layer * p->xmss_sig_bytes, m, &trees[layer].tree,
                             jobs[layer].idx);
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
