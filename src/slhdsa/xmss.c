#include "slhdsa/xmss.h"

#include <string.h>

#include "core/merkle.h"
#include "hbs/hbs.h"
#include "slhdsa/wots.h"

#define NODE_BATCH 64

typedef struct {
    const slhdsa_ctx *c;
    slhdsa_adrs tree; /* layer and tree address */
} xmss_user;

static void xmss_leaves(void *user, uint8_t *out, uint32_t first, size_t count)
{
    const xmss_user *u = user;
    hbs_slhdsa_wots_pkgen_many(u->c, out, &u->tree, first, count);
}

static void xmss_nodes(void *user, uint8_t *out, const uint8_t *children, unsigned height,
                       uint32_t first, size_t count)
{
    const xmss_user *u = user;
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

static void xmss_setup(hbs_merkle_tree *t, xmss_user *u, const slhdsa_ctx *c, uint32_t layer,
                       uint64_t tree)
{
    memset(&u->tree, 0, sizeof u->tree);
    adrs_set_layer(&u->tree, layer);
    adrs_set_tree(&u->tree, tree);
    u->c = c;
    t->n = c->p->n;
    t->height = c->p->hp;
    t->leaves = xmss_leaves;
    t->nodes = xmss_nodes;
    t->user = u;
}

int hbs_slhdsa_xmss_tree(const slhdsa_ctx *c, uint8_t *root, uint8_t *auth, uint32_t layer,
                         uint64_t tree, uint32_t idx)
{
    hbs_merkle_tree t;
    xmss_user u;
    xmss_setup(&t, &u, c, layer, tree);
    return hbs_merkle_root_auth(&t, root, auth, idx);
}

int hbs_slhdsa_ht_sign(const slhdsa_ctx *c, uint8_t *sig, const uint8_t *msg, uint64_t idx_tree,
                       uint32_t idx_leaf)
{
    const hbs_slhdsa_params *p = c->p;
    uint8_t root[SLHDSA_MAX_N], next[SLHDSA_MAX_N];
    memcpy(root, msg, p->n);

    for (uint32_t layer = 0; layer < p->d; layer++) {
        xmss_user u;
        hbs_merkle_tree t;
        xmss_setup(&t, &u, c, layer, idx_tree);
        /* The tree's root is the message of the next layer; building the tree for the
         * authentication path yields it, so xmss_pkFromSig is not needed. */
        int err = hbs_merkle_root_auth(&t, next, sig + p->wots_sig_bytes, idx_leaf);
        if (err)
            return err;
        hbs_slhdsa_wots_sign(c, sig, root, &u.tree, idx_leaf);
        memcpy(root, next, p->n);
        sig += p->xmss_sig_bytes;
        idx_leaf = (uint32_t)(idx_tree & ((1u << p->hp) - 1));
        idx_tree >>= p->hp;
    }
    return HBS_OK;
}

void hbs_slhdsa_ht_root_from_sig(const slhdsa_ctx *c, uint8_t *root, const uint8_t *sig,
                                 const uint8_t *msg, uint64_t idx_tree, uint32_t idx_leaf)
{
    const hbs_slhdsa_params *p = c->p;
    uint8_t node[SLHDSA_MAX_N], scratch[2 * SLHDSA_MAX_N];
    memcpy(node, msg, p->n);

    for (uint32_t layer = 0; layer < p->d; layer++) {
        xmss_user u;
        hbs_merkle_tree t;
        xmss_setup(&t, &u, c, layer, idx_tree);
        hbs_slhdsa_wots_pk_from_sig(c, node, sig, node, &u.tree, idx_leaf);
        hbs_merkle_climb(&t, node, sig + p->wots_sig_bytes, idx_leaf, scratch);
        sig += p->xmss_sig_bytes;
        idx_leaf = (uint32_t)(idx_tree & ((1u << p->hp) - 1));
        idx_tree >>= p->hp;
    }
    memcpy(root, node, p->n);
}
