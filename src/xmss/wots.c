/* WOTS+ (RFC 8391 section 3.1) with w = 16, and the leaves built from it (L-trees, section
 * 4.1.5). Secret chain starts come from PRF_keygen (SP 800-208 section 5 and the RFC 8391
 * reference code): sk_i = PRF_keygen(SK_SEED, PUB_SEED || ADRS(chain i, hash 0, km 0)).
 *
 * All chains in a batch advance together, one hash batch per step, so a signature's 67 (or
 * 51, or 131) chains, or the 536 chains of 8 leaves, each make a wide batch. */
#include <string.h>

#include "hbs/hbs.h"
#include "xmss/internal.h"

/* Chains gathered per inner batch. */
#define CHAIN_GATHER 64

void hbs_xmss_wots_digits(const hbs_xmss_params *p, uint8_t *digits, const uint8_t *msg)
{
    unsigned csum = 0;
    for (unsigned i = 0; i < p->len1; i++) {
        digits[i] = (uint8_t)((msg[i / 2] >> (i % 2 ? 0 : 4)) & 15);
        csum += 15u - digits[i];
    }
    /* len2 = 3 digits: the checksum shifted left by 4 and written as 2 bytes, whose first
     * three nibbles are the checksum's three nibbles */
    digits[p->len1] = (uint8_t)((csum >> 8) & 15);
    digits[p->len1 + 1] = (uint8_t)((csum >> 4) & 15);
    digits[p->len1 + 2] = (uint8_t)(csum & 15);
}

void hbs_xmss_chains_capture(const xmss_ctx *c, uint8_t *vals, const xmss_adrs *adrs,
                             const uint8_t *start, const uint8_t *steps, size_t count,
                             const uint8_t *cap_at, uint8_t *cap_out)
{
    const size_t n = c->p->n;
    uint8_t gv[CHAIN_GATHER * XMSS_MAX_N];
    xmss_adrs ga[CHAIN_GATHER];
    xmss_adrs all[XMSS_LEAF_CHUNK * XMSS_MAX_LEN];
    size_t gi[CHAIN_GATHER];
    unsigned maxsteps = 0;
    int copied = 0;

    for (size_t i = 0; i < count; i++)
        maxsteps = steps[i] > maxsteps ? steps[i] : maxsteps;
    for (unsigned s = 0; s <= maxsteps; s++) {
        size_t m = 0, active = 0;
        if (cap_at)
            for (size_t i = 0; i < count; i++)
                if (cap_at[i] == s)
                    memcpy(cap_out + i * n, vals + i * n, n);
        if (s == maxsteps)
            break;
        for (size_t i = 0; i < count; i++)
            active += s < steps[i];
        if (active == count && count <= XMSS_LEAF_CHUNK * XMSS_MAX_LEN) {
            /* every chain steps (key generation): hash in place, no gathering */
            if (!copied) {
                memcpy(all, adrs, count * sizeof *adrs);
                copied = 1;
            }
            for (size_t i = 0; i < count; i++)
                xmss_adrs_set(&all[i], 6, (uint32_t)start[i] + s);
            hbs_xmss_thash_f_many(c, vals, vals, all, count);
            continue;
        }
        for (size_t i = 0; i <= count; i++) {
            /* flush a full gather (or the last, partial one) */
            if (m == CHAIN_GATHER || (i == count && m)) {
                hbs_xmss_thash_f_many(c, gv, gv, ga, m);
                for (size_t j = 0; j < m; j++)
                    memcpy(vals + gi[j] * n, gv + j * n, n);
                m = 0;
            }
            if (i == count)
                break;
            if (s >= steps[i])
                continue;
            gi[m] = i;
            ga[m] = adrs[i];
            xmss_adrs_set(&ga[m], 6, (uint32_t)start[i] + s);
            memcpy(gv + m * n, vals + i * n, n);
            m++;
        }
    }
    hbs_memzero(gv, sizeof gv);
}

void hbs_xmss_chains(const xmss_ctx *c, uint8_t *vals, const xmss_adrs *adrs,
                     const uint8_t *start, const uint8_t *steps, size_t count)
{
    hbs_xmss_chains_capture(c, vals, adrs, start, steps, count, NULL, NULL);
}

/* The L-tree of one WOTS+ public key (len values in pk, clobbered), root to out. */
static void ltree(const xmss_ctx *c, uint8_t *out, uint8_t *pk, uint32_t layer, uint64_t tree,
                  uint32_t leaf)
{
    const size_t n = c->p->n;
    xmss_adrs a[(XMSS_MAX_LEN + 1) / 2];
    size_t l = c->p->len;
    for (uint32_t height = 0; l > 1; height++) {
        size_t parents = l / 2;
        for (size_t i = 0; i < parents; i++) {
            xmss_adrs_init(&a[i], layer, tree, XMSS_ADRS_LTREE);
            xmss_adrs_set(&a[i], 4, leaf);
            xmss_adrs_set(&a[i], 5, height);
            xmss_adrs_set(&a[i], 6, (uint32_t)i);
        }
        /* parent i overwrites node i, which was read before (node 2i and 2i+1) */
        hbs_xmss_thash_h_many(c, pk, pk, a, parents);
        if (l % 2)
            memmove(pk + parents * n, pk + (l - 1) * n, n);
        l -= parents;
    }
    memcpy(out, pk, n);
}

void hbs_xmss_leaves(const xmss_ctx *c, uint8_t *out, const xmss_leafpos *pos, size_t count,
                     const uint8_t *sign_digits, uint8_t *sig, int want_leaf0)
{
    const hbs_xmss_params *p = c->p;
    const size_t n = p->n, len = p->len, nch = count * len;
    uint8_t vals[XMSS_LEAF_CHUNK * XMSS_MAX_LEN * XMSS_MAX_N];
    xmss_adrs adrs[XMSS_LEAF_CHUNK * XMSS_MAX_LEN];
    uint8_t start[XMSS_LEAF_CHUNK * XMSS_MAX_LEN], steps[XMSS_LEAF_CHUNK * XMSS_MAX_LEN];
    uint8_t cap[XMSS_LEAF_CHUNK * XMSS_MAX_LEN];
    const int only_sig = sign_digits && !want_leaf0;

    if (count == 0 || count > XMSS_LEAF_CHUNK)
        return;
    for (size_t k = 0; k < count; k++)
        for (size_t i = 0; i < len; i++) {
            xmss_adrs *a = &adrs[k * len + i];
            xmss_adrs_init(a, pos[k].layer, pos[k].tree, XMSS_ADRS_OTS);
            xmss_adrs_set(a, 4, pos[k].leaf);
            xmss_adrs_set(a, 5, (uint32_t)i);
        }
    hbs_xmss_prf_keygen_many(c, vals, adrs, nch);
    memset(start, 0, nch);
    memset(steps, XMSS_W - 1, nch);
    memset(cap, 0xff, nch);
    if (sign_digits) {
        memcpy(cap, sign_digits, len);
        if (only_sig)
            memcpy(steps, sign_digits, len);
    }
    hbs_xmss_chains_capture(c, vals, adrs, start, steps, nch, sign_digits ? cap : NULL, sig);
    for (size_t k = only_sig ? 1 : 0; k < count; k++)
        ltree(c, out + k * n, vals + k * len * n, pos[k].layer, pos[k].tree, pos[k].leaf);
    hbs_memzero(vals, nch * n);
}

void hbs_xmss_leaf_range(const xmss_ctx *c, uint8_t *out, uint32_t layer, uint64_t tree,
                         uint32_t first, size_t count)
{
    xmss_leafpos pos[XMSS_LEAF_CHUNK];
    while (count) {
        size_t m = count < XMSS_LEAF_CHUNK ? count : XMSS_LEAF_CHUNK;
        for (size_t k = 0; k < m; k++) {
            pos[k].layer = layer;
            pos[k].tree = tree;
            pos[k].leaf = first + (uint32_t)k;
        }
        hbs_xmss_leaves(c, out, pos, m, NULL, NULL, 1);
        out += m * c->p->n;
        first += (uint32_t)m;
        count -= m;
    }
}

void hbs_xmss_leaf_from_sig(const xmss_ctx *c, uint8_t *leaf, const uint8_t *sig,
                            const uint8_t *digits, uint32_t layer, uint64_t tree,
                            uint32_t leaf_idx)
{
    const hbs_xmss_params *p = c->p;
    const size_t n = p->n, len = p->len;
    uint8_t vals[XMSS_MAX_LEN * XMSS_MAX_N];
    xmss_adrs adrs[XMSS_MAX_LEN];
    uint8_t steps[XMSS_MAX_LEN];
    for (size_t i = 0; i < len; i++) {
        xmss_adrs_init(&adrs[i], layer, tree, XMSS_ADRS_OTS);
        xmss_adrs_set(&adrs[i], 4, leaf_idx);
        xmss_adrs_set(&adrs[i], 5, (uint32_t)i);
        steps[i] = (uint8_t)(XMSS_W - 1 - digits[i]);
    }
    memcpy(vals, sig, len * n);
    hbs_xmss_chains(c, vals, adrs, digits, steps, len);
    ltree(c, leaf, vals, layer, tree, leaf_idx);
}

void hbs_xmss_tree_levels(const xmss_ctx *c, uint8_t *nodes, uint32_t layer, uint64_t tree,
                          unsigned H)
{
    const size_t n = c->p->n;
    for (unsigned z = 1; z <= H; z++)
        hbs_xmss_tree_nodes(c, nodes + hbs_xmss_level_at(H, z) * n,
                            nodes + hbs_xmss_level_at(H, z - 1) * n, layer, tree, z, 0,
                            (size_t)1 << (H - z));
}

void hbs_xmss_tree_nodes(const xmss_ctx *c, uint8_t *out, const uint8_t *children,
                         uint32_t layer, uint64_t tree, unsigned height, uint32_t first,
                         size_t count)
{
    const size_t n = c->p->n;
    xmss_adrs a[64];
    while (count) {
        size_t m = count < 64 ? count : 64;
        for (size_t i = 0; i < m; i++) {
            xmss_adrs_init(&a[i], layer, tree, XMSS_ADRS_TREE);
            xmss_adrs_set(&a[i], 5, height - 1);
            xmss_adrs_set(&a[i], 6, first + (uint32_t)i);
        }
        hbs_xmss_thash_h_many(c, out, children, a, m);
        out += m * n;
        children += 2 * m * n;
        first += (uint32_t)m;
        count -= m;
    }
}
