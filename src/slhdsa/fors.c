#include "slhdsa/fors.h"

#include <string.h>

#include "core/merkle.h"
#include "hbs/hbs.h"

#define FORS_BATCH 64


/* base_2b(md, a, k): k indices of a bits, most significant bit first. */
static void fors_indices(const hbs_slhdsa_params *p, uint32_t *idx, const uint8_t *md)
{
    size_t bit = 0;
    for (uint32_t i = 0; i < p->k; i++) {
        uint32_t v = 0;
        for (uint32_t j = 0; j < p->a; j++, bit++)
            v = (v << 1) | ((md[bit >> 3] >> (7 - (bit & 7))) & 1u);
        idx[i] = v;
    }
}

static void fors_set_adrs(slhdsa_adrs *a, const slhdsa_adrs *kp, uint32_t type, uint32_t height,
                          uint32_t index)
{
    *a = *kp;
    adrs_set_type(a, type);
    adrs_set_keypair(a, adrs_keypair(kp));
    adrs_set_tree_height(a, height);
    adrs_set_tree_index(a, index);
}

/* Leaves are F(PRF(...)): the secret values never leave this function's output buffer,
 * which the F pass overwrites in place. */
static void fors_leaves(void *user, uint8_t *out, uint32_t first, size_t count)
{
    const slhdsa_fors_tree *u = user;
    const size_t n = u->c->p->n;
    slhdsa_adrs adrs[FORS_BATCH];

    while (count) {
        size_t todo = count < FORS_BATCH ? count : FORS_BATCH;
        for (size_t i = 0; i < todo; i++)
            fors_set_adrs(&adrs[i], &u->kp, ADRS_FORS_PRF, 0, u->offset + first + (uint32_t)i);
        hbs_slhdsa_prf_many(u->c, out, adrs, todo);
        for (size_t i = 0; i < todo; i++)
            adrs_put32(adrs[i].b + 16, ADRS_FORS_TREE);
        hbs_slhdsa_thash_many(u->c, out, out, 1, adrs, todo);
        out += todo * n;
        first += (uint32_t)todo;
        count -= todo;
    }
}

static void fors_nodes(void *user, uint8_t *out, const uint8_t *children, unsigned height,
                       uint32_t first, size_t count)
{
    const slhdsa_fors_tree *u = user;
    const size_t n = u->c->p->n;
    const uint32_t base = u->offset >> height;
    slhdsa_adrs adrs[FORS_BATCH];

    while (count) {
        size_t todo = count < FORS_BATCH ? count : FORS_BATCH;
        for (size_t i = 0; i < todo; i++)
            fors_set_adrs(&adrs[i], &u->kp, ADRS_FORS_TREE, height,
                          base + first + (uint32_t)i);
        hbs_slhdsa_thash_many(u->c, out, children, 2, adrs, todo);
        out += todo * n;
        children += 2 * todo * n;
        first += (uint32_t)todo;
        count -= todo;
    }
}

static void fors_tree_init(slhdsa_fors_tree *ft, const slhdsa_ctx *c, const slhdsa_adrs *kp,
                           uint32_t tree)
{
    ft->c = c;
    ft->kp = *kp;
    ft->offset = tree << c->p->a;
    ft->t.n = c->p->n;
    ft->t.height = c->p->a;
    ft->t.leaves = fors_leaves;
    ft->t.nodes = fors_nodes;
    ft->t.user = ft;
}

void hbs_slhdsa_fors_pk_from_roots(const slhdsa_ctx *c, uint8_t *pk, const uint8_t *roots,
                                   const slhdsa_adrs *kp)
{
    slhdsa_adrs a = *kp;
    adrs_set_type(&a, ADRS_FORS_ROOTS);
    adrs_set_keypair(&a, adrs_keypair(kp));
    hbs_slhdsa_thash_many(c, pk, roots, c->p->k, &a, 1);
}

void hbs_slhdsa_fors_sign_jobs(const slhdsa_ctx *c, uint8_t *sig, const uint8_t *md,
                               const slhdsa_adrs *kp, slhdsa_fors_tree *trees,
                               hbs_merkle_job *jobs, uint8_t *roots)
{
    const hbs_slhdsa_params *p = c->p;
    const size_t n = p->n;
    uint32_t idx[SLHDSA_MAX_K];
    slhdsa_adrs a[SLHDSA_MAX_K];

    fors_indices(p, idx, md);
    for (uint32_t i = 0; i < p->k; i++) {
        uint8_t *tree_sig = sig + (size_t)i * (p->a + 1) * n;
        fors_tree_init(&trees[i], c, kp, i);
        fors_set_adrs(&a[i], kp, ADRS_FORS_PRF, 0, trees[i].offset + idx[i]);
        jobs[i].tree = &trees[i].t;
        jobs[i].root = roots + (size_t)i * n;
        jobs[i].auth = tree_sig + n;
        jobs[i].idx = idx[i];
    }
    /* the revealed secrets: one PRF each, cheaper than keeping the trees' secrets around */
    hbs_slhdsa_prf_many(c, roots, a, p->k);
    for (uint32_t i = 0; i < p->k; i++)
        memcpy(sig + (size_t)i * (p->a + 1) * n, roots + (size_t)i * n, n);
    hbs_memzero(roots, (size_t)p->k * n);
}

void hbs_slhdsa_fors_pk_from_sig(const slhdsa_ctx *c, uint8_t *pk, const uint8_t *sig,
                                 const uint8_t *md, const slhdsa_adrs *kp)
{
    const hbs_slhdsa_params *p = c->p;
    const size_t n = p->n, tree_sig = (size_t)(p->a + 1) * n;
    uint32_t idx[SLHDSA_MAX_K];
    uint8_t nodes[SLHDSA_MAX_K * SLHDSA_MAX_N], pairs[SLHDSA_MAX_K * 2 * SLHDSA_MAX_N];
    slhdsa_adrs adrs[SLHDSA_MAX_K];

    fors_indices(p, idx, md);
    /* The k paths are independent: climb them side by side, one batch of k per level. */
    for (uint32_t i = 0; i < p->k; i++) {
        fors_set_adrs(&adrs[i], kp, ADRS_FORS_TREE, 0, (i << p->a) + idx[i]);
        memcpy(nodes + i * n, sig + i * tree_sig, n);
    }
    hbs_slhdsa_thash_many(c, nodes, nodes, 1, adrs, p->k);
    for (uint32_t z = 0; z < p->a; z++) {
        for (uint32_t i = 0; i < p->k; i++) {
            const uint8_t *auth = sig + i * tree_sig + n + (size_t)z * n;
            const uint32_t pos = (i << p->a) + idx[i];
            const int right = (pos >> z) & 1;
            memcpy(pairs + (2 * i + (right ? 1 : 0)) * n, nodes + i * n, n);
            memcpy(pairs + (2 * i + (right ? 0 : 1)) * n, auth, n);
            adrs_set_tree_height(&adrs[i], z + 1);
            adrs_set_tree_index(&adrs[i], pos >> (z + 1));
        }
        hbs_slhdsa_thash_many(c, nodes, pairs, 2, adrs, p->k);
    }
    hbs_slhdsa_fors_pk_from_roots(c, pk, nodes, kp);
}
