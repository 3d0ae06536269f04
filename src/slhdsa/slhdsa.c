/* SLH-DSA key generation, signing and verification (FIPS 205, sections 9 and 10). */
#include <stdlib.h>
#include <string.h>

#include "common/ct.h"
#include "hbs/slhdsa.h"
#include "slhdsa/fors.h"
#include "slhdsa/prehash.h"
#include "slhdsa/xmss.h"

/* M' prefix: domain separator, context length, context, then for HashSLH-DSA the OID and
 * PH(M). */
#define MPRIME_PREFIX_MAX (2 + HBS_SLHDSA_MAX_CONTEXT_BYTES + SLHDSA_PREHASH_OID_BYTES + \
                           SLHDSA_PREHASH_MAX_DIGEST)

static const uint8_t empty[1];

static uint64_t load_be(const uint8_t *p, size_t len)
{
    uint64_t v = 0;
    for (size_t i = 0; i < len; i++)
        v = v << 8 | p[i];
    return v;
}

/* Splits H_msg's output into the FORS message and the hypertree leaf (algorithm 19/20). */
static void split_digest(const hbs_slhdsa_params *p, const uint8_t *digest, uint64_t *idx_tree,
                         uint32_t *idx_leaf)
{
    const size_t md_bytes = (p->k * p->a + 7) / 8;
    const unsigned tree_bits = p->h - p->hp;
    const size_t tree_bytes = (tree_bits + 7) / 8, leaf_bytes = (p->hp + 7) / 8;
    uint64_t t = load_be(digest + md_bytes, tree_bytes);
    if (tree_bits < 64)
        t &= ((uint64_t)1 << tree_bits) - 1;
    *idx_tree = t;
    *idx_leaf = (uint32_t)(load_be(digest + md_bytes + tree_bytes, leaf_bytes) &
                           (((uint64_t)1 << p->hp) - 1));
}

int hbs_slhdsa_keygen_from_seed(const hbs_slhdsa_params *p, uint8_t *sk, uint8_t *pk,
                                const uint8_t *seed)
{
    slhdsa_ctx c;
    uint8_t root[SLHDSA_MAX_N];
    int err;

    if (!p || !sk || !pk || !seed) {
        if (p && sk)
            hbs_memzero(sk, 4 * p->n);
        if (p && pk)
            hbs_memzero(pk, 2 * p->n);
        return HBS_ERR_INVALID_ARGUMENT;
    }
    const size_t n = p->n;
    hbs_slhdsa_ctx_init(&c, p, seed + 2 * n, seed);
    err = hbs_slhdsa_xmss_tree(&c, root, NULL, p->d - 1, 0, 0);
    hbs_slhdsa_ctx_wipe(&c);
    if (err) {
        hbs_memzero(sk, 4 * n);
        hbs_memzero(pk, 2 * n);
        return err;
    }
    /* seed may alias sk: move PK.seed before anything else is written over it */
    memmove(sk, seed, 3 * n);
    memcpy(sk + 3 * n, root, n);
    memcpy(pk, sk + 2 * n, 2 * n);
    return HBS_OK;
}

int hbs_slhdsa_keygen(const hbs_slhdsa_params *p, uint8_t *sk, uint8_t *pk)
{
    uint8_t seed[3 * SLHDSA_MAX_N];
    int err;
    if (!p || !sk || !pk)
        return hbs_slhdsa_keygen_from_seed(p, sk, pk, NULL);
    err = hbs_randombytes(seed, 3 * p->n);
    if (!err)
        err = hbs_slhdsa_keygen_from_seed(p, sk, pk, seed);
    else {
        hbs_memzero(sk, 4 * p->n);
        hbs_memzero(pk, 2 * p->n);
    }
    hbs_memzero(seed, sizeof seed);
    return err;
}

int hbs_slhdsa_sk_check(const hbs_slhdsa_params *p, uint8_t *pk, const uint8_t *sk)
{
    slhdsa_ctx c;
    uint8_t root[SLHDSA_MAX_N];
    int err;
    if (!p || !sk)
        return HBS_ERR_INVALID_ARGUMENT;
    const size_t n = p->n;
    hbs_slhdsa_ctx_init(&c, p, sk + 2 * n, sk);
    err = hbs_slhdsa_xmss_tree(&c, root, NULL, p->d - 1, 0, 0);
    hbs_slhdsa_ctx_wipe(&c);
    if (!err && hbs_ct_memneq(root, sk + 3 * n, n))
        err = HBS_ERR_MALFORMED_KEY;
    if (pk) {
        if (err)
            hbs_memzero(pk, 2 * n);
        else
            memcpy(pk, sk + 2 * n, 2 * n);
    }
    return err;
}

struct hbs_slhdsa_signer {
    const hbs_slhdsa_params *p;
    uint8_t sk[4 * SLHDSA_MAX_N];
    slhdsa_ht_cache cache;
};

/* slh_sign_internal over M' given in pieces; cache may be NULL. */
static int sign_mprime(const hbs_slhdsa_params *p, uint8_t *sig, const slhdsa_msg *m,
                       const uint8_t *sk, const uint8_t *addrnd, const slhdsa_ht_cache *cache)
{
    const size_t n = p->n;
    const uint8_t *sk_prf = sk + n, *pk_seed = sk + 2 * n, *pk_root = sk + 3 * n;
    slhdsa_ctx c;
    uint8_t digest[SLHDSA_MAX_M], fors_pk[SLHDSA_MAX_N];
    uint8_t fors_roots[SLHDSA_MAX_K * SLHDSA_MAX_N], ht_roots[SLHDSA_MAX_D * SLHDSA_MAX_N];
    uint8_t *ht_sig = sig + n + p->fors_sig_bytes;
    slhdsa_fors_tree fors_trees[SLHDSA_MAX_K];
    slhdsa_xmss_tree xmss_trees[SLHDSA_MAX_D];
    hbs_merkle_job jobs[SLHDSA_MAX_K + SLHDSA_MAX_D];
    uint32_t leaves[SLHDSA_MAX_D];
    size_t njobs;
    uint64_t idx_tree;
    uint32_t idx_leaf;
    slhdsa_adrs kp;
    int err;

    hbs_slhdsa_ctx_init(&c, p, pk_seed, sk);
    hbs_slhdsa_prf_msg(&c, sig, sk_prf, addrnd ? addrnd : pk_seed, m);
    hbs_slhdsa_h_msg(&c, digest, sig, pk_root, m);
    split_digest(p, digest, &idx_tree, &idx_leaf);

    memset(&kp, 0, sizeof kp);
    adrs_set_tree(&kp, idx_tree);
    adrs_set_type(&kp, ADRS_FORS_TREE);
    adrs_set_keypair(&kp, idx_leaf);
    /* All k FORS trees and all d hypertree trees are independent: build them together. */
    hbs_slhdsa_fors_sign_jobs(&c, sig + n, digest, &kp, fors_trees, jobs, fors_roots);
    njobs = p->k + hbs_slhdsa_ht_sign_jobs(&c, ht_sig, idx_tree, idx_leaf, cache, xmss_trees,
                                           leaves, jobs + p->k, ht_roots);
    err = hbs_merkle_many(jobs, njobs);
    if (!err) {
        hbs_slhdsa_fors_pk_from_roots(&c, fors_pk, fors_roots, &kp);
        hbs_slhdsa_ht_sign_finish(&c, ht_sig, fors_pk, ht_roots, xmss_trees, leaves);
    }
    hbs_slhdsa_ctx_wipe(&c);
    if (err)
        hbs_memzero(sig, p->sig_bytes);
    return err;
}

/* slh_verify_internal over M' given in pieces. */
static int verify_mprime(const hbs_slhdsa_params *p, const uint8_t *sig, size_t siglen,
                         const slhdsa_msg *m, const uint8_t *pk)
{
    const size_t n = p->n;
    slhdsa_ctx c;
    uint8_t digest[SLHDSA_MAX_M], fors_pk[SLHDSA_MAX_N], root[SLHDSA_MAX_N];
    uint64_t idx_tree;
    uint32_t idx_leaf;
    slhdsa_adrs kp;

    if (siglen != p->sig_bytes)
        return HBS_ERR_VERIFY_FAILED;
    hbs_slhdsa_ctx_init(&c, p, pk, NULL);
    hbs_slhdsa_h_msg(&c, digest, sig, pk + n, m);
    split_digest(p, digest, &idx_tree, &idx_leaf);

    memset(&kp, 0, sizeof kp);
    adrs_set_tree(&kp, idx_tree);
    adrs_set_type(&kp, ADRS_FORS_TREE);
    adrs_set_keypair(&kp, idx_leaf);
    hbs_slhdsa_fors_pk_from_sig(&c, fors_pk, sig + n, digest, &kp);
    hbs_slhdsa_ht_root_from_sig(&c, root, sig + n + p->fors_sig_bytes, fors_pk, idx_tree,
                                idx_leaf);
    return hbs_ct_memneq(root, pk + n, n) ? HBS_ERR_VERIFY_FAILED : HBS_OK;
}

/* Builds the M' prefix of FIPS 205 algorithms 22/23 (and 24/25 for verification). */
static int build_prefix(uint8_t *pre, size_t *prelen, const uint8_t *msg, size_t msglen,
                        const uint8_t *ctx, size_t ctxlen, hbs_prehash ph)
{
    if (ctxlen > HBS_SLHDSA_MAX_CONTEXT_BYTES)
        return HBS_ERR_CONTEXT_TOO_LONG;
    if ((unsigned)ph >= HBS_PREHASH_NUM)
        return HBS_ERR_UNKNOWN_PREHASH;
    pre[0] = ph == HBS_PREHASH_NONE ? 0 : 1;
    pre[1] = (uint8_t)ctxlen;
    if (ctxlen)
        memcpy(pre + 2, ctx, ctxlen);
    *prelen = 2 + ctxlen;
    if (ph != HBS_PREHASH_NONE)
        *prelen += hbs_slhdsa_prehash(pre + *prelen, ph, msg, msglen);
    return HBS_OK;
}

static int sign_external(const hbs_slhdsa_params *p, uint8_t *sig, const uint8_t *msg,
                         size_t msglen, const uint8_t *ctx, size_t ctxlen, hbs_prehash ph,
                         const uint8_t *sk, const uint8_t *addrnd, const slhdsa_ht_cache *cache)
{
    uint8_t pre[MPRIME_PREFIX_MAX];
    slhdsa_msg m;
    int err;

    if (!p || !sig)
        return HBS_ERR_INVALID_ARGUMENT;
    if (!sk || (!msg && msglen) || (!ctx && ctxlen)) {
        hbs_memzero(sig, p->sig_bytes);
        return HBS_ERR_INVALID_ARGUMENT;
    }
    err = build_prefix(pre, &m.prelen, msg ? msg : empty, msglen, ctx, ctxlen, ph);
    if (err) {
        hbs_memzero(sig, p->sig_bytes);
        return err;
    }
    m.pre = pre;
    /* Pure signing hashes M itself; HashSLH-DSA signs only the prefix, which holds PH(M). */
    m.msg = ph == HBS_PREHASH_NONE && msg ? msg : empty;
    m.msglen = ph == HBS_PREHASH_NONE ? msglen : 0;
    return sign_mprime(p, sig, &m, sk, addrnd, cache);
}

int hbs_slhdsa_sign_ex(const hbs_slhdsa_params *p, uint8_t *sig, const uint8_t *msg,
                       size_t msglen, const uint8_t *ctx, size_t ctxlen, hbs_prehash ph,
                       const uint8_t *sk, const uint8_t *addrnd)
{
    return sign_external(p, sig, msg, msglen, ctx, ctxlen, ph, sk, addrnd, NULL);
}

int hbs_slhdsa_sign(const hbs_slhdsa_params *p, uint8_t *sig, const uint8_t *msg, size_t msglen,
                    const uint8_t *ctx, size_t ctxlen, const uint8_t *sk)
{
    return hbs_slhdsa_hash_sign(p, sig, msg, msglen, ctx, ctxlen, HBS_PREHASH_NONE, sk);
}

int hbs_slhdsa_hash_sign(const hbs_slhdsa_params *p, uint8_t *sig, const uint8_t *msg,
                         size_t msglen, const uint8_t *ctx, size_t ctxlen, hbs_prehash ph,
                         const uint8_t *sk)
{
    uint8_t rnd[SLHDSA_MAX_N];
    int err;
    if (!p || !sig)
        return HBS_ERR_INVALID_ARGUMENT;
    err = hbs_randombytes(rnd, p->n);
    if (err) {
        hbs_memzero(sig, p->sig_bytes);
        return err;
    }
    err = hbs_slhdsa_sign_ex(p, sig, msg, msglen, ctx, ctxlen, ph, sk, rnd);
    hbs_memzero(rnd, sizeof rnd);
    return err;
}

int hbs_slhdsa_sign_internal(const hbs_slhdsa_params *p, uint8_t *sig, const uint8_t *m,
                             size_t mlen, const uint8_t *sk, const uint8_t *addrnd)
{
    slhdsa_msg msg = {empty, 0, m ? m : empty, mlen};
    if (!p || !sig)
        return HBS_ERR_INVALID_ARGUMENT;
    if (!sk || (!m && mlen)) {
        hbs_memzero(sig, p->sig_bytes);
        return HBS_ERR_INVALID_ARGUMENT;
    }
    return sign_mprime(p, sig, &msg, sk, addrnd, NULL);
}

int hbs_slhdsa_verify_ex(const hbs_slhdsa_params *p, const uint8_t *sig, size_t siglen,
                         const uint8_t *msg, size_t msglen, const uint8_t *ctx, size_t ctxlen,
                         hbs_prehash ph, const uint8_t *pk)
{
    uint8_t pre[MPRIME_PREFIX_MAX];
    slhdsa_msg m;
    int err;

    if (!p || !pk || (!sig && siglen) || (!msg && msglen) || (!ctx && ctxlen))
        return HBS_ERR_INVALID_ARGUMENT;
    err = build_prefix(pre, &m.prelen, msg ? msg : empty, msglen, ctx, ctxlen, ph);
    if (err)
        return err;
    m.pre = pre;
    m.msg = ph == HBS_PREHASH_NONE && msg ? msg : empty;
    m.msglen = ph == HBS_PREHASH_NONE ? msglen : 0;
    return verify_mprime(p, sig, siglen, &m, pk);
}

int hbs_slhdsa_verify(const hbs_slhdsa_params *p, const uint8_t *sig, size_t siglen,
                      const uint8_t *msg, size_t msglen, const uint8_t *ctx, size_t ctxlen,
                      const uint8_t *pk)
{
    return hbs_slhdsa_verify_ex(p, sig, siglen, msg, msglen, ctx, ctxlen, HBS_PREHASH_NONE, pk);
}

int hbs_slhdsa_hash_verify(const hbs_slhdsa_params *p, const uint8_t *sig, size_t siglen,
                           const uint8_t *msg, size_t msglen, const uint8_t *ctx, size_t ctxlen,
                           hbs_prehash ph, const uint8_t *pk)
{
    if (ph == HBS_PREHASH_NONE)
        return HBS_ERR_UNKNOWN_PREHASH;
    return hbs_slhdsa_verify_ex(p, sig, siglen, msg, msglen, ctx, ctxlen, ph, pk);
}

int hbs_slhdsa_verify_internal(const hbs_slhdsa_params *p, const uint8_t *sig, size_t siglen,
                               const uint8_t *m, size_t mlen, const uint8_t *pk)
{
    slhdsa_msg msg = {empty, 0, m ? m : empty, mlen};
    if (!p || !pk || (!sig && siglen) || (!m && mlen))
        return HBS_ERR_INVALID_ARGUMENT;
    return verify_mprime(p, sig, siglen, &msg, pk);
}

/* ---- signers ---- */

int hbs_slhdsa_signer_new(hbs_slhdsa_signer **out, const hbs_slhdsa_params *p, const uint8_t *sk,
                          unsigned cache_layers)
{
    hbs_slhdsa_signer *s;
    slhdsa_ctx c;
    int err;

    if (!out)
        return HBS_ERR_INVALID_ARGUMENT;
    *out = NULL;
    if (!p || !sk || cache_layers > p->d)
        return HBS_ERR_INVALID_ARGUMENT;
    s = calloc(1, sizeof *s);
    if (!s)
        return HBS_ERR_NO_MEMORY;
    s->p = p;
    memcpy(s->sk, sk, 4 * (size_t)p->n);
    hbs_slhdsa_ctx_init(&c, p, sk + 2 * p->n, sk);
    err = hbs_slhdsa_ht_cache_build(&s->cache, &c, cache_layers);
    hbs_slhdsa_ctx_wipe(&c);
    /* the cached top tree's root is PK.root: a free check of the key */
    if (!err && cache_layers &&
        hbs_ct_memneq(hbs_slhdsa_ht_cache_root(&s->cache), sk + 3 * p->n, p->n))
        err = HBS_ERR_MALFORMED_KEY;
    if (!err && !cache_layers)
        err = hbs_slhdsa_sk_check(p, NULL, sk);
    if (err) {
        hbs_slhdsa_signer_free(s);
        return err;
    }
    *out = s;
    return HBS_OK;
}

void hbs_slhdsa_signer_free(hbs_slhdsa_signer *s)
{
    if (!s)
        return;
    hbs_slhdsa_ht_cache_free(&s->cache);
    hbs_memzero(s, sizeof *s);
    free(s);
}

size_t hbs_slhdsa_signer_cache_bytes(const hbs_slhdsa_signer *s)
{
    return s ? hbs_slhdsa_ht_cache_bytes(s->p, s->cache.layers) : 0;
}

const hbs_slhdsa_params *hbs_slhdsa_signer_params(const hbs_slhdsa_signer *s)
{
    return s ? s->p : NULL;
}

int hbs_slhdsa_signer_sign(const hbs_slhdsa_signer *s, uint8_t *sig, const uint8_t *msg,
                           size_t msglen, const uint8_t *ctx, size_t ctxlen, hbs_prehash ph,
                           const uint8_t *addrnd)
{
    if (!s)
        return HBS_ERR_INVALID_ARGUMENT;
    return sign_external(s->p, sig, msg, msglen, ctx, ctxlen, ph, s->sk, addrnd, &s->cache);
}

int hbs_slhdsa_signer_sign_internal(const hbs_slhdsa_signer *s, uint8_t *sig, const uint8_t *m,
                                    size_t mlen, const uint8_t *addrnd)
{
    slhdsa_msg msg = {empty, 0, m ? m : empty, mlen};
    if (!s || !sig)
        return HBS_ERR_INVALID_ARGUMENT;
    if (!m && mlen) {
        hbs_memzero(sig, s->p->sig_bytes);
        return HBS_ERR_INVALID_ARGUMENT;
    }
    return sign_mprime(s->p, sig, &msg, s->sk, addrnd, &s->cache);
}
