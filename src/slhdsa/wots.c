#include "slhdsa/wots.h"

#include <string.h>

#include "hbs/hbs.h"

/* base_2b (FIPS 205 algorithm 4) for b = 4, followed by the checksum digits. */
static void wots_digits(const hbs_slhdsa_params *p, uint32_t *digits, const uint8_t *msg)
{
    uint32_t csum = 0;
    for (uint32_t i = 0; i < p->len1; i++) {
        digits[i] = (msg[i / 2] >> (i % 2 ? 0 : 4)) & 0xf;
        csum += SLHDSA_W - 1 - digits[i];
    }
    /* len2 = 3 digits of 4 bits: csum << 4 as 2 bytes, read as 3 nibbles from the top */
    csum <<= 4;
    digits[p->len1] = (csum >> 12) & 0xf;
    digits[p->len1 + 1] = (csum >> 8) & 0xf;
    digits[p->len1 + 2] = (csum >> 4) & 0xf;
}

/* Public keys of leaves first .. first+count-1 counted across trees: with per_tree > 0,
 * leaf g is key pair g % per_tree of trees[g / per_tree]; with 0, key pair g of trees[0]. */
static void pkgen(const slhdsa_ctx *c, uint8_t *pk, const slhdsa_adrs *trees, uint32_t per_tree,
                  uint32_t first, size_t count)
{
    const hbs_slhdsa_params *p = c->p;
    const size_t n = p->n, len = p->len;
    slhdsa_adrs adrs[HBS_SLHDSA_WOTS_BATCH * SLHDSA_MAX_LEN];
    uint8_t vals[HBS_SLHDSA_WOTS_BATCH * SLHDSA_MAX_LEN * SLHDSA_MAX_N];

    while (count) {
        const size_t nb = count < HBS_SLHDSA_WOTS_BATCH ? count : HBS_SLHDSA_WOTS_BATCH;
        const size_t jobs = nb * len;
        for (size_t l = 0; l < nb; l++) {
            const uint32_t g = first + (uint32_t)l;
            for (size_t i = 0; i < len; i++) {
                slhdsa_adrs *a = &adrs[l * len + i];
                *a = per_tree ? trees[g / per_tree] : trees[0];
                adrs_set_type(a, ADRS_WOTS_PRF);
                adrs_set_keypair(a, per_tree ? g % per_tree : g);
                adrs_set_chain(a, (uint32_t)i);
            }
        }
        hbs_slhdsa_prf_many(c, vals, adrs, jobs);
        for (size_t j = 0; j < jobs; j++)
            adrs_put32(adrs[j].b + 16, ADRS_WOTS_HASH); /* hash address 0: the chain start */
        hbs_slhdsa_chains(c, vals, adrs, jobs, NULL, SLHDSA_W - 1);
        for (size_t l = 0; l < nb; l++) {
            const uint32_t g = first + (uint32_t)l;
            slhdsa_adrs *a = &adrs[l];
            *a = per_tree ? trees[g / per_tree] : trees[0];
            adrs_set_type(a, ADRS_WOTS_PK);
            adrs_set_keypair(a, per_tree ? g % per_tree : g);
        }
        hbs_slhdsa_thash_many(c, pk, vals, len, adrs, nb);
        pk += nb * n;
        first += (uint32_t)nb;
        count -= nb;
    }
    hbs_memzero(vals, sizeof vals);
}

void hbs_slhdsa_wots_pkgen_many(const slhdsa_ctx *c, uint8_t *pk, const slhdsa_adrs *tree,
                                uint32_t first, size_t count)
{
    pkgen(c, pk, tree, 0, first, count);
}

void hbs_slhdsa_wots_pkgen_trees(const slhdsa_ctx *c, uint8_t *pk, const slhdsa_adrs *trees,
                                 uint32_t per_tree, uint32_t first, size_t count)
{
    pkgen(c, pk, trees, per_tree, first, count);
}

/* Advances chain i of key pair `leaf` from position start[i] by steps[i], all chains at once.
 * The chains go to the hash layer longest first: its lanes take the next chain as one
 * ends, and short chains last fill the lanes best at the end of the batch. */
static void wots_chains(const slhdsa_ctx *c, uint8_t *vals, const uint32_t *start,
                        const uint32_t *steps, const slhdsa_adrs *tree, uint32_t leaf)
{
    const size_t n = c->p->n, len = c->p->len;
    slhdsa_adrs adrs[SLHDSA_MAX_LEN];
    uint8_t st[SLHDSA_MAX_LEN], buf[SLHDSA_MAX_LEN * SLHDSA_MAX_N];
    size_t order[SLHDSA_MAX_LEN], m = 0;

    memset(st, 0, sizeof st); /* all written below; this keeps gcc's flow analysis quiet */
    memset(adrs, 0, sizeof adrs);
    for (uint32_t s = SLHDSA_W; s-- > 0;)
        for (size_t i = 0; i < len; i++)
            if (steps[i] == s)
                order[m++] = i;
    for (size_t k = 0; k < m; k++) {
        const size_t i = order[k];
        slhdsa_adrs *a = &adrs[k];
        *a = *tree;
        adrs_set_type(a, ADRS_WOTS_HASH);
        adrs_set_keypair(a, leaf);
        adrs_set_chain(a, (uint32_t)i);
        adrs_set_hash(a, start[i]);
        st[k] = (uint8_t)steps[i];
        memcpy(buf + k * n, vals + i * n, n);
    }
    hbs_slhdsa_chains(c, buf, adrs, m, st, 0);
    for (size_t k = 0; k < m; k++)
        memcpy(vals + order[k] * n, buf + k * n, n);
    hbs_memzero(buf, sizeof buf);
}

void hbs_slhdsa_wots_sign(const slhdsa_ctx *c, uint8_t *sig, const uint8_t *msg,
                          const slhdsa_adrs *tree, uint32_t leaf)
{
    const size_t len = c->p->len;
    uint32_t digits[SLHDSA_MAX_LEN], zero[SLHDSA_MAX_LEN];
    slhdsa_adrs adrs[SLHDSA_MAX_LEN];

    wots_digits(c->p, digits, msg);
    for (size_t i = 0; i < len; i++) {
        adrs[i] = *tree;
        adrs_set_type(&adrs[i], ADRS_WOTS_PRF);
        adrs_set_keypair(&adrs[i], leaf);
        adrs_set_chain(&adrs[i], (uint32_t)i);
        zero[i] = 0;
    }
    hbs_slhdsa_prf_many(c, sig, adrs, len);
    wots_chains(c, sig, zero, digits, tree, leaf);
}

void hbs_slhdsa_wots_pk_from_sig(const slhdsa_ctx *c, uint8_t *pk, const uint8_t *sig,
                                 const uint8_t *msg, const slhdsa_adrs *tree, uint32_t leaf)
{
    const size_t n = c->p->n, len = c->p->len;
    uint32_t digits[SLHDSA_MAX_LEN], steps[SLHDSA_MAX_LEN];
    uint8_t vals[SLHDSA_MAX_LEN * SLHDSA_MAX_N];
    slhdsa_adrs a = *tree;

    wots_digits(c->p, digits, msg);
    for (size_t i = 0; i < len; i++)
        steps[i] = SLHDSA_W - 1 - digits[i];
    memcpy(vals, sig, len * n);
    wots_chains(c, vals, digits, steps, tree, leaf);
    adrs_set_type(&a, ADRS_WOTS_PK);
    adrs_set_keypair(&a, leaf);
    hbs_slhdsa_thash_many(c, pk, vals, len, &a, 1);
}
