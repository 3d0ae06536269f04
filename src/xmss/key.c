/* XMSS / XMSS^MT private keys: generation, the traversal state of every layer, signing with
 * the state update, skipping ahead, and the export format.
 *
 * State "ready to sign idx", for layer i (leaf l_i and tree t_i of idx on that layer):
 *  - cur: the BDS state of leaf l_i in tree t_i, possibly owing `pending` treehash updates
 *    (layers above the bottom do their per-round work spread over later signatures);
 *  - next (XMSS^MT, below the top, when tree t_i + 1 exists): tree t_i + 1 being grown, with
 *    next_fed <= l_i leaves fed (== l_i on the bottom layer);
 *  - root: the root of tree t_i; wots_sig (i >= 1): the WOTS+ signature of the root of the
 *    layer below by leaf l_i, reused by every signature until that tree changes.
 * A signature computes the bottom WOTS+ signature, the bottom round's leaves and updates,
 * one leaf of the next bottom tree and one unit of owed upper-layer work, all in one batch
 * of leaves. */
#include <stdlib.h>
#include <string.h>

#include "common/pool.h"
#include "hbs/hbs.h"
#include "xmss/internal.h"
#include "xmss/xmss.h"

/* The leaves of a whole tree computed ahead by an engine, for a skip that steps: the steps
 * read them instead of computing them; and its inner nodes where the engine had the whole
 * tree at hand. */
typedef struct {
    uint32_t layer;
    uint64_t tree;
    const uint8_t *leaves; /* 2^H leaves */
    const uint8_t *nodes;  /* every node, leaves first (or NULL) */
} xmss_cached_tree;

#define XMSS_CACHE_TREES 12
/* How many times faster than a CPU thread an engine is taken to make leaves. */
#define ENGINE_SPEEDUP 256

typedef struct {
    xmss_bds cur;
    xmss_bds next;
    uint32_t next_fed;
    uint32_t pending;
    uint8_t root[XMSS_MAX_N];
    uint8_t *wots_sig;
} xmss_layer;

struct hbs_xmss_key {
    const hbs_xmss_params *p;
    xmss_shape sh;
    uint64_t idx, end;
    uint8_t sk_seed[XMSS_MAX_N], sk_prf[XMSS_MAX_N], pub_seed[XMSS_MAX_N], root[XMSS_MAX_N];
    xmss_ctx ctx;
    uint8_t *mem;
    size_t memlen;
    xmss_layer layer[XMSS_MAX_LAYERS];
    const xmss_cached_tree *cache; /* during an engine skip only (else NULL) */
    size_t ncache;
};

#define EXPORT_VERSION 1
#define EXPORT_HEADER 24
#define EXPORT_DIGEST 32

unsigned hbs_xmss_default_bds_k(const hbs_xmss_params *p)
{
    return p->tree_h % 2 ? (p->tree_h < 5 ? p->tree_h : 5) : (p->tree_h < 6 ? p->tree_h : 6);
}

static int valid_k(const hbs_xmss_params *p, unsigned k)
{
    return k >= 2 && k <= p->tree_h && (p->tree_h - k) % 2 == 0 && k <= 16;
}

static uint64_t total_of(const hbs_xmss_params *p) { return (uint64_t)1 << p->h; }

static uint32_t leaf_of(const hbs_xmss_key *k, uint64_t idx, unsigned i)
{
    return (uint32_t)((idx >> (i * k->sh.H)) & (((uint64_t)1 << k->sh.H) - 1));
}

static uint64_t tree_of(const hbs_xmss_key *k, uint64_t idx, unsigned i)
{
    unsigned shift = (i + 1) * k->sh.H;
    return shift >= 64 ? 0 : idx >> shift;
}

/* Whether tree t of layer i has a successor on its layer. */
static int has_next(const hbs_xmss_key *k, unsigned i, uint64_t t)
{
    unsigned trees_log = k->p->h - (i + 1) * k->sh.H;
    return i + 1 < k->p->d && t + 1 < ((uint64_t)1 << trees_log);
}

static void wipe_bds(xmss_bds *b)
{
    uint8_t *retain = b->retain;
    hbs_memzero(b, sizeof *b);
    b->retain = retain;
}

static hbs_xmss_key *key_alloc(const hbs_xmss_params *p, unsigned K)
{
    hbs_xmss_key *k = calloc(1, sizeof *k);
    size_t rbytes, sbytes, off = 0;
    if (!k)
        return NULL;
    k->p = p;
    k->sh.H = p->tree_h;
    k->sh.K = K;
    k->sh.n = p->n;
    rbytes = hbs_xmss_retain_nodes(p->tree_h, K) * p->n;
    sbytes = (size_t)p->len * p->n;
    k->memlen = p->d * (2 * rbytes + sbytes);
    k->mem = calloc(1, k->memlen ? k->memlen : 1);
    if (!k->mem) {
        free(k);
        return NULL;
    }
    for (unsigned i = 0; i < p->d; i++) {
        k->layer[i].cur.retain = k->mem + off;
        k->layer[i].next.retain = k->mem + off + rbytes;
        k->layer[i].wots_sig = k->mem + off + 2 * rbytes;
        off += 2 * rbytes + sbytes;
    }
    return k;
}

void hbs_xmss_key_free(hbs_xmss_key *key)
{
    if (!key)
        return;
    if (key->mem) {
        hbs_memzero(key->mem, key->memlen);
        free(key->mem);
    }
    hbs_memzero(key, sizeof *key);
    free(key);
}

static xmss_treeref tref(const hbs_xmss_key *k, unsigned i, uint64_t tree)
{
    xmss_treeref t = {&k->ctx, i, tree, NULL, NULL};
    for (size_t c = 0; c < k->ncache; c++)
        if (k->cache[c].layer == i && k->cache[c].tree == tree)
            t.nodes = k->cache[c].nodes;
    return t;
}

/* Leaf pos from the trees cached ahead, or NULL. */
static const uint8_t *cached_leaf(const hbs_xmss_key *k, uint32_t layer, uint64_t tree,
                                  uint32_t leaf)
{
    for (size_t i = 0; i < k->ncache; i++)
        if (k->cache[i].layer == layer && k->cache[i].tree == tree)
            return k->cache[i].leaves + (size_t)leaf * k->sh.n;
    return NULL;
}

/* Computes count leaves at pos (any count), those of cached trees read from the cache. */
static void leaves_plain(const hbs_xmss_key *k, uint8_t *out, const xmss_leafpos *pos,
                         size_t count)
{
    const size_t n = k->sh.n;
    xmss_leafpos miss[XMSS_LEAF_CHUNK];
    size_t at[XMSS_LEAF_CHUNK], m = 0;
    uint8_t buf[XMSS_LEAF_CHUNK * XMSS_MAX_N];
    for (size_t j = 0; j < count; j++) {
        const uint8_t *c = cached_leaf(k, pos[j].layer, pos[j].tree, pos[j].leaf);
        if (c) {
            memcpy(out + j * n, c, n);
            continue;
        }
        miss[m] = pos[j];
        at[m++] = j;
        if (m == XMSS_LEAF_CHUNK || j + 1 == count) {
            hbs_xmss_leaves(&k->ctx, buf, miss, m, NULL, NULL, 1);
            for (size_t i = 0; i < m; i++)
                memcpy(out + at[i] * n, buf + i * n, n);
            m = 0;
        }
    }
    if (m) {
        hbs_xmss_leaves(&k->ctx, buf, miss, m, NULL, NULL, 1);
        for (size_t i = 0; i < m; i++)
            memcpy(out + at[i] * n, buf + i * n, n);
    }
}

/* Computes count leaves at pos (any count) in batches; the first batch may also sign (then
 * want0 says whether leaf 0 is wanted too; without digits every leaf is). */
static void leaves_any(const hbs_xmss_key *k, uint8_t *out, const xmss_leafpos *pos,
                       size_t count, const uint8_t *digits, uint8_t *sig, int want0)
{
    size_t done = 0;
    if (digits) {
        size_t m = count < XMSS_LEAF_CHUNK ? count : XMSS_LEAF_CHUNK;
        hbs_xmss_leaves(&k->ctx, out, pos, m, digits, sig, want0);
        done = m;
    }
    if (done < count)
        leaves_plain(k, out + done * k->sh.n, pos + done, count - done);
}

/* A job for the engine: tree `tree` of layer i of this key. */
static void engine_job(const hbs_xmss_key *k, hbs_xmss_leaf_job *j, unsigned i, uint64_t tree)
{
    const hbs_xmss_params *p = k->p;
    j->func = p->func;
    j->n = p->n;
    j->padlen = p->padlen;
    j->len = p->len;
    j->pub_seed = k->pub_seed;
    j->sk_seed = k->sk_seed;
    j->layer = i;
    j->tree = tree;
    j->oid = p->oid;
    j->mt = p->mt;
}

/* WOTS+ signature of an n-byte message by leaf `leaf` of tree `tree` on layer i. */
static void wots_sign(const hbs_xmss_key *k, uint8_t *sig, const uint8_t *msg, unsigned i,
                      uint64_t tree, uint32_t leaf)
{
    uint8_t digits[XMSS_MAX_LEN];
    xmss_leafpos pos = {i, tree, leaf};
    const hbs_leaf_engine *e = k->ctx.engine;
    if (e && e->xmss_wots_sig) { /* (a batch's end: the GPU made it beside the batch) */
        hbs_xmss_leaf_job job;
        engine_job(k, &job, i, tree);
        if (e->xmss_wots_sig(e->user, &job, leaf, msg, sig) == HBS_OK)
            return;
    }
    hbs_xmss_wots_digits(k->p, digits, msg);
    hbs_xmss_leaves(&k->ctx, NULL, &pos, 1, digits, sig, 0);
}

/* Feeds leaves fed .. upto - 1 of tree `tree` of layer i into its next-tree state, the
 * leaves computed in parallel blocks. */
typedef struct {
    const hbs_xmss_key *k;
    unsigned layer;
    uint64_t tree;
    uint32_t first;
    uint8_t *buf;
} feed_run;

#define FEED_BLOCK 32

static void feed_task(void *arg, size_t b)
{
    const feed_run *r = arg;
    hbs_xmss_leaf_range(&r->k->ctx, r->buf + b * FEED_BLOCK * r->k->sh.n, r->layer, r->tree,
                        r->first + (uint32_t)(b * FEED_BLOCK), FEED_BLOCK);
}

void hbs_xmss_key_leaf_job(const hbs_xmss_key *key, hbs_xmss_leaf_job *job)
{
    engine_job(key, job, 0, 0);
}

static int feed_upto(hbs_xmss_key *k, unsigned i, uint64_t tree, uint32_t upto)
{
    xmss_layer *L = &k->layer[i];
    const hbs_leaf_engine *e = k->ctx.engine;
    const uint8_t *cached = cached_leaf(k, i, tree, 0);
    const int use_engine = !cached && e && upto - L->next_fed >= e->min_leaves;
    const size_t n = k->sh.n;
    size_t chunk = 64 * FEED_BLOCK;
    xmss_treeref t = tref(k, i, tree);
    hbs_xmss_leaf_job job;
    uint8_t *buf = NULL;
    if (L->next_fed >= upto)
        return HBS_OK;
    if (cached) {
        for (; L->next_fed < upto; L->next_fed++)
            hbs_xmss_bds_feed(&k->sh, &t, &L->next, cached + (size_t)L->next_fed * n,
                              L->next_fed);
        return HBS_OK;
    }
    if (use_engine) {
        chunk = e->slice_leaves < upto - L->next_fed ? e->slice_leaves : upto - L->next_fed;
        engine_job(k, &job, i, tree);
    }
    buf = malloc(chunk * n);
    if (!buf)
        return HBS_ERR_NO_MEMORY;
    while (L->next_fed < upto) {
        size_t m = upto - L->next_fed;
        feed_run r = {k, i, tree, L->next_fed, buf};
        if (m > chunk)
            m = chunk;
        if (use_engine) {
            int err = e->xmss_leaves(e->user, &job, 1, L->next_fed, m, buf);
            if (err) {
                hbs_memzero(buf, chunk * n);
                free(buf);
                return err;
            }
        } else if (m >= 2 * FEED_BLOCK) {
            m -= m % FEED_BLOCK;
            hbs_parallel_for(m / FEED_BLOCK, feed_task, &r);
        } else {
            hbs_xmss_leaf_range(&k->ctx, buf, i, tree, L->next_fed, m);
        }
        for (size_t j = 0; j < m; j++) {
            hbs_xmss_bds_feed(&k->sh, &t, &L->next, buf + j * n, L->next_fed);
            L->next_fed++;
        }
    }
    hbs_memzero(buf, chunk * n);
    free(buf);
    return HBS_OK;
}

/* The leaves of every layer's current tree at idx in one engine call (an XMSS^MT key's
 * small trees fill the GPU only together), into a new buffer: *out, d << H leaves, or with
 * *whole set, d whole trees (every node) where the engine builds them; NULL (and HBS_OK)
 * when there is no engine or the trees are too small or too tall for one. */
static int engine_all_layers(const hbs_xmss_key *k, uint64_t idx, uint8_t **out, int *whole)
{
    const hbs_leaf_engine *e = k->ctx.engine;
    const hbs_xmss_params *p = k->p;
    const size_t leaves = (size_t)1 << k->sh.H;
    hbs_xmss_leaf_job jobs[XMSS_MAX_LAYERS];
    int err = HBS_ERR_UNSUPPORTED;
    *out = NULL;
    *whole = 0;
    if (!e || leaves < e->min_leaves || p->d * leaves > e->slice_leaves)
        return HBS_OK;
    for (unsigned i = 0; i < p->d; i++)
        engine_job(k, &jobs[i], i, tree_of(k, idx, i));
    if (e->xmss_trees) {
        if (!(*out = malloc(p->d * (2 * leaves - 1) * p->n)))
            return HBS_ERR_NO_MEMORY;
        err = e->xmss_trees(e->user, jobs, p->d, k->sh.H, *out);
        *whole = err == HBS_OK;
        if (err) {
            free(*out);
            *out = NULL;
        }
    }
    if (err == HBS_ERR_UNSUPPORTED) {
        if (!(*out = malloc(p->d * leaves * p->n)))
            return HBS_ERR_NO_MEMORY;
        err = e->xmss_leaves(e->user, jobs, p->d, 0, leaves, *out);
        if (err) {
            free(*out);
            *out = NULL;
        }
    }
    return err;
}

/* Whether the engine holds every layer's tree at idx whole (xmss_tree: a batch signer's
 * batch end), each into held[i]: then a rebuild reads them where they are, no copy. */
static int engine_holds_all(const hbs_xmss_key *k, uint64_t idx, const uint8_t **held)
{
    const hbs_leaf_engine *e = k->ctx.engine;
    hbs_xmss_leaf_job job;
    if (!e || !e->xmss_tree)
        return 0;
    for (unsigned i = 0; i < k->p->d; i++) {
        engine_job(k, &job, i, tree_of(k, idx, i));
        if (!(held[i] = e->xmss_tree(e->user, &job, k->sh.H)))
            return 0;
    }
    return 1;
}

/* Makes every layer's state ready to sign idx from scratch (key generation, far skips). */
static int rebuild_at(hbs_xmss_key *k, uint64_t idx, hbs_progress_fn progress, void *user)
{
    const hbs_xmss_params *p = k->p;
    uint64_t done = 0, total = (uint64_t)p->d << k->sh.H;
    uint8_t *all = NULL;
    const uint8_t *held[XMSS_MAX_LAYERS];
    int whole = 0;
    const int borrowed = engine_holds_all(k, idx, held);
    int err = borrowed ? HBS_OK : engine_all_layers(k, idx, &all, &whole);
    for (unsigned i = 0; i < p->d && !err; i++) {
        xmss_layer *L = &k->layer[i];
        const uint64_t tree = tree_of(k, idx, i);
        xmss_treeref t = tref(k, i, tree);
        if (borrowed)
            t.leaves = t.nodes = held[i];
        else if (all && whole)
            t.leaves = t.nodes = all + i * (((size_t)2 << k->sh.H) - 1) * p->n;
        else if (all)
            t.leaves = all + ((size_t)i << k->sh.H) * p->n;
        err = hbs_xmss_bds_build(&k->sh, &t, &L->cur, L->root, leaf_of(k, idx, i), progress,
                                 user, &done, total);
        if (err)
            break;
        wipe_bds(&L->next);
        L->next_fed = 0;
        L->pending = 0;
        if (has_next(k, i, tree)) {
            err = feed_upto(k, i, tree + 1, leaf_of(k, idx, i));
            if (err)
                break;
        }
        if (i > 0)
            wots_sign(k, L->wots_sig, k->layer[i - 1].root, i, tree, leaf_of(k, idx, i));
    }
    free(all);
    return err;
}

static int set_seeds(hbs_xmss_key *k, const uint8_t *seed)
{
    const size_t n = k->p->n;
    memcpy(k->sk_seed, seed, n);
    memcpy(k->sk_prf, seed + n, n);
    memcpy(k->pub_seed, seed + 2 * n, n);
    hbs_xmss_ctx_init(&k->ctx, k->p, k->pub_seed, k->sk_seed);
    return HBS_OK;
}

int hbs_xmss_key_public(const hbs_xmss_key *key, uint8_t *pk, size_t pkcap, size_t *pklen)
{
    const hbs_xmss_params *p;
    if (!key || !pk)
        return HBS_ERR_INVALID_ARGUMENT;
    p = key->p;
    if (pkcap < p->pk_bytes) {
        memset(pk, 0, pkcap);
        return HBS_ERR_BUFFER_TOO_SMALL;
    }
    xmss_put32(pk, p->oid);
    memcpy(pk + 4, key->root, p->n);
    memcpy(pk + 4 + p->n, key->pub_seed, p->n);
    if (pklen)
        *pklen = p->pk_bytes;
    return HBS_OK;
}

int hbs_xmss_keygen(hbs_xmss_key **key, uint8_t *pk, size_t pkcap, size_t *pklen,
                    const hbs_xmss_params *p, unsigned bds_k, const uint8_t *seed,
                    size_t seedlen, hbs_progress_fn progress, void *progress_user)
{
    return hbs_xmss_keygen_engine(key, pk, pkcap, pklen, p, bds_k, seed, seedlen, progress,
                                  progress_user, NULL);
}

int hbs_xmss_keygen_engine(hbs_xmss_key **key, uint8_t *pk, size_t pkcap, size_t *pklen,
                           const hbs_xmss_params *p, unsigned bds_k, const uint8_t *seed,
                           size_t seedlen, hbs_progress_fn progress, void *progress_user,
                           const hbs_leaf_engine *engine)
{
    uint8_t fresh[3 * XMSS_MAX_N];
    hbs_xmss_key *k;
    int err;

    if (key)
        *key = NULL;
    if (pk && pkcap)
        memset(pk, 0, pkcap);
    if (!key || !p || (pkcap && !pk) || (seed && seedlen != 3u * p->n))
        return HBS_ERR_INVALID_ARGUMENT;
    if (bds_k == 0)
        bds_k = hbs_xmss_default_bds_k(p);
    if (!valid_k(p, bds_k))
        return HBS_ERR_INVALID_ARGUMENT;
    if (pk && pkcap < p->pk_bytes)
        return HBS_ERR_BUFFER_TOO_SMALL;
    if (!seed) {
        err = hbs_randombytes(fresh, 3u * p->n);
        if (err)
            return err;
        seed = fresh;
    }
    k = key_alloc(p, bds_k);
    if (!k) {
        hbs_memzero(fresh, sizeof fresh);
        return HBS_ERR_NO_MEMORY;
    }
    set_seeds(k, seed);
    hbs_memzero(fresh, sizeof fresh);
    k->idx = 0;
    k->end = total_of(p);
    k->ctx.engine = engine;
    err = rebuild_at(k, 0, progress, progress_user);
    k->ctx.engine = NULL;
    if (err) {
        hbs_xmss_key_free(k);
        return err;
    }
    memcpy(k->root, k->layer[p->d - 1].root, p->n);
    if (pk)
        (void)hbs_xmss_key_public(k, pk, pkcap, pklen);
    *key = k;
    return HBS_OK;
}

/* ---- advancing the state ---------------------------------------------------------------- */

/* Performs every update and next-tree leaf layer i still owes (none, on schedule). */
static int flush_owed(hbs_xmss_key *k, unsigned i, uint64_t idx)
{
    xmss_layer *L = &k->layer[i];
    const uint64_t tree = tree_of(k, idx, i);
    xmss_treeref t = tref(k, i, tree);
    while (L->pending) {
        uint32_t li;
        uint8_t leaf[XMSS_MAX_N];
        xmss_leafpos pos;
        if (hbs_xmss_bds_plan(&k->sh, &L->cur, 1, &li) == 0) {
            L->pending = 0;
            break;
        }
        pos.layer = i;
        pos.tree = tree;
        pos.leaf = li;
        leaves_plain(k, leaf, &pos, 1);
        hbs_xmss_bds_update(&k->sh, &t, &L->cur, leaf);
        L->pending--;
    }
    if (has_next(k, i, tree))
        return feed_upto(k, i, tree + 1, leaf_of(k, idx, i));
    return HBS_OK;
}

/* Replaces layer i's tree by the next one, now complete. */
static void switch_tree(hbs_xmss_key *k, unsigned i)
{
    xmss_layer *L = &k->layer[i];
    uint8_t *spare = L->cur.retain;
    memcpy(L->root, L->next.stack[0], k->sh.n);
    L->next.stack_len = 0;
    memcpy(&L->cur, &L->next, sizeof L->cur);
    L->next.retain = spare;
    wipe_bds(&L->next);
    L->next_fed = 0;
    L->pending = 0;
}

/* Layer i >= 1 moves from the leaf it has at `idx` to the next one (the layer below just
 * finished a tree, whose successor is now current). */
static int advance_upper(hbs_xmss_key *k, unsigned i, uint64_t idx)
{
    xmss_layer *L = &k->layer[i];
    const uint32_t s = leaf_of(k, idx, i);
    const uint64_t tree = tree_of(k, idx, i);
    const uint32_t last = (uint32_t)(((uint64_t)1 << k->sh.H) - 1);
    uint64_t nidx = idx + ((uint64_t)1 << (i * k->sh.H));
    xmss_treeref t = tref(k, i, tree);
    int err;

    nidx &= ~((((uint64_t)1) << (i * k->sh.H)) - 1);
    err = flush_owed(k, i, idx);
    if (err)
        return err;
    if (s < last) {
        uint8_t leaf[XMSS_MAX_N];
        if (!(s & 1)) {
            xmss_leafpos pos = {i, tree, s};
            leaves_plain(k, leaf, &pos, 1);
        }
        hbs_xmss_bds_round(&k->sh, &t, &L->cur, s, leaf);
        L->pending = (k->sh.H - k->sh.K) / 2;
    } else {
        err = feed_upto(k, i, tree + 1, (uint32_t)1 << k->sh.H);
        if (err)
            return err;
        switch_tree(k, i);
        err = advance_upper(k, i + 1, idx);
        if (err)
            return err;
    }
    wots_sign(k, L->wots_sig, k->layer[i - 1].root, i, tree_of(k, nidx, i), leaf_of(k, nidx, i));
    return HBS_OK;
}

/* One unit of owed upper-layer work (lowest layer first): a leaf position to compute and
 * which layer / kind it is for. Returns 0 when nothing is owed. */
static int owed_unit(const hbs_xmss_key *k, uint64_t idx, xmss_leafpos *pos, int *is_update)
{
    for (unsigned i = 1; i < k->p->d; i++) {
        const xmss_layer *L = &k->layer[i];
        const uint64_t tree = tree_of(k, idx, i);
        uint32_t li;
        if (L->pending && hbs_xmss_bds_plan(&k->sh, &L->cur, 1, &li) == 1) {
            pos->layer = i;
            pos->tree = tree;
            pos->leaf = li;
            *is_update = 1;
            return 1;
        }
        if (has_next(k, i, tree) && L->next_fed < leaf_of(k, idx, i)) {
            pos->layer = i;
            pos->tree = tree + 1;
            pos->leaf = L->next_fed;
            *is_update = 0;
            return 1;
        }
    }
    return 0;
}

/* What one step from idx to idx + 1 computes, in the order of pos: leaf s itself (when
 * signed, or wanted by the round), the round's treehash updates, one leaf of the next
 * bottom tree, one unit of owed upper-layer work. */
static void step_plan(const hbs_xmss_key *k, int sign, hbs_xmss_step *st)
{
    const uint64_t idx = k->idx;
    const uint32_t s = leaf_of(k, idx, 0);
    const uint64_t tree = tree_of(k, idx, 0);
    const uint32_t last = (uint32_t)(((uint64_t)1 << k->sh.H) - 1);
    const xmss_layer *L0 = &k->layer[0];
    /* the whole tree's leaves at hand (an engine skip): the updates read theirs directly,
     * with no dry run to plan which (two copies of the state a step) */
    const uint8_t *tree_leaves = k->ncache ? cached_leaf(k, 0, tree, 0) : NULL;
    int owed_update = 0;

    memset(st, 0, sizeof *st);
    st->final = idx + 1 >= total_of(k->p);
    st->round = !st->final && s < last;
    st->want0 = st->round && !(s & 1);
    st->sign = sign;
    st->pos[0].layer = 0;
    st->pos[0].tree = tree;
    st->pos[0].leaf = s;
    if (sign || st->want0)
        st->count++;
    if (st->round && !tree_leaves) {
        xmss_bds dry;
        xmss_treeref none = {NULL, 0, 0, NULL, NULL};
        uint32_t upd[XMSS_MAX_TREE_HEIGHT];
        memcpy(&dry, &L0->cur, sizeof dry);
        hbs_xmss_bds_round(&k->sh, &none, &dry, s, NULL);
        st->nupd = (uint32_t)hbs_xmss_bds_plan(&k->sh, &dry, (k->sh.H - k->sh.K) / 2, upd);
        for (uint32_t u = 0; u < st->nupd; u++) {
            st->pos[st->count].layer = 0;
            st->pos[st->count].tree = tree;
            st->pos[st->count].leaf = upd[u];
            st->count++;
        }
        hbs_memzero(&dry, sizeof dry);
    }
    if (!st->final && has_next(k, 0, tree) && L0->next_fed == s) {
        st->pos[st->count].layer = 0;
        st->pos[st->count].tree = tree + 1;
        st->pos[st->count].leaf = s;
        st->count++;
        st->feed = 1;
    }
    if (!st->final && owed_unit(k, idx, &st->pos[st->count], &owed_update)) {
        st->count++;
        st->owed = owed_update ? 2 : 1;
    }
}

/* Moves the state from idx to idx + 1 with the leaves step_plan named (leaves[j] for pos[j];
 * leaves[0] unused unless want0). */
static int step_apply(hbs_xmss_key *k, const hbs_xmss_step *st, const uint8_t *leaves)
{
    const uint64_t idx = k->idx;
    const uint32_t s = leaf_of(k, idx, 0);
    const uint64_t tree = tree_of(k, idx, 0);
    const uint32_t last = (uint32_t)(((uint64_t)1 << k->sh.H) - 1);
    const size_t n = k->sh.n;
    xmss_layer *L0 = &k->layer[0];
    xmss_treeref t0 = tref(k, 0, tree);
    const uint8_t *tree_leaves = k->ncache ? cached_leaf(k, 0, tree, 0) : NULL;
    size_t at = (st->sign || st->want0) ? 1 : 0;

    if (st->final)
        return HBS_OK;
    if (st->round) {
        hbs_xmss_bds_round(&k->sh, &t0, &L0->cur, s, leaves);
        if (tree_leaves)
            (void)hbs_xmss_bds_updates_from(&k->sh, &t0, &L0->cur, (k->sh.H - k->sh.K) / 2,
                                            tree_leaves);
        for (uint32_t u = 0; u < st->nupd; u++)
            hbs_xmss_bds_update(&k->sh, &t0, &L0->cur, leaves + (at++) * n);
    }
    if (st->feed) {
        xmss_treeref tn = tref(k, 0, tree + 1);
        hbs_xmss_bds_feed(&k->sh, &tn, &L0->next, leaves + (at++) * n, s);
        L0->next_fed++;
    }
    if (st->owed) {
        const xmss_leafpos *op = &st->pos[at];
        xmss_layer *L = &k->layer[op->layer];
        xmss_treeref tu = tref(k, op->layer, op->tree);
        if (st->owed == 2) {
            hbs_xmss_bds_update(&k->sh, &tu, &L->cur, leaves + at * n);
            L->pending--;
        } else {
            hbs_xmss_bds_feed(&k->sh, &tu, &L->next, leaves + at * n, op->leaf);
            L->next_fed++;
        }
    }
    if (s == last) {
        int err = feed_upto(k, 0, tree + 1, last + 1);
        if (err)
            return err;
        switch_tree(k, 0);
        return advance_upper(k, 1, idx);
    }
    return HBS_OK;
}

/* The step's leaves on this CPU (and leaf s's WOTS+ signature of digits into sig, if
 * signing). */
static void step_leaves(const hbs_xmss_key *k, const hbs_xmss_step *st, uint8_t *leaves,
                        const uint8_t *digits, uint8_t *sig)
{
    if (st->count)
        leaves_any(k, leaves, st->pos, st->count, st->sign ? digits : NULL, sig,
                   st->sign ? st->want0 : 1);
}

/* Moves the state from idx to idx + 1 (a skip's step: nothing signed). */
static int advance(hbs_xmss_key *k)
{
    hbs_xmss_step st;
    uint8_t leaves[HBS_XMSS_STEP_LEAVES * XMSS_MAX_N];
    int err;
    step_plan(k, 0, &st);
    step_leaves(k, &st, leaves, NULL, NULL);
    err = step_apply(k, &st, leaves);
    hbs_memzero(&st, sizeof st);
    return err;
}

size_t hbs_xmss_sig_bytes(const hbs_xmss_key *key) { return key ? key->p->sig_bytes : 0; }

int hbs_xmss_sign_begin(const hbs_xmss_key *key, uint8_t *sig, size_t sigcap,
                        const uint8_t *msg, size_t msglen, hbs_xmss_step *st)
{
    const hbs_xmss_params *p;
    uint8_t digest[XMSS_MAX_N];
    size_t n, at;

    if (!key || !sig || !st || (msglen && !msg))
        return HBS_ERR_INVALID_ARGUMENT;
    p = key->p;
    n = p->n;
    if (sigcap < p->sig_bytes) {
        memset(sig, 0, sigcap);
        return HBS_ERR_BUFFER_TOO_SMALL;
    }
    if (key->idx >= key->end) {
        memset(sig, 0, sigcap);
        return HBS_ERR_KEY_EXHAUSTED;
    }
    for (unsigned b = 0; b < p->idx_bytes; b++)
        sig[b] = (uint8_t)(key->idx >> (8 * (p->idx_bytes - 1 - b)));
    at = p->idx_bytes;
    hbs_xmss_prf_r(&key->ctx, sig + at, key->sk_prf, key->idx);
    hbs_xmss_hash_msg(&key->ctx, digest, sig + at, key->root, key->idx, msg, msglen);
    at += n;
    step_plan(key, 1, st);
    hbs_xmss_wots_digits(p, st->digits, digest);
    st->index = key->idx;
    st->ots_at = (uint32_t)at;
    /* the bottom auth path is read before the state moves on */
    for (unsigned j = 0; j < key->sh.H; j++)
        memcpy(sig + at + (p->len + j) * n, key->layer[0].cur.auth[j], n);
    for (unsigned i = 1; i < p->d; i++) {
        uint8_t *part = sig + at + (size_t)i * (p->len + key->sh.H) * n;
        memcpy(part, key->layer[i].wots_sig, (size_t)p->len * n);
        for (unsigned j = 0; j < key->sh.H; j++)
            memcpy(part + (p->len + j) * n, key->layer[i].cur.auth[j], n);
    }
    return HBS_OK;
}

int hbs_xmss_sign_finish(hbs_xmss_key *key, hbs_xmss_step *st, const uint8_t *leaves,
                         const uint8_t *ots, uint8_t *sig, size_t sigcap)
{
    uint8_t own[HBS_XMSS_STEP_LEAVES * XMSS_MAX_N];
    int err;
    if (!key || !st || !sig || sigcap < key->p->sig_bytes || st->index != key->idx ||
        !st->sign || st->count == 0 || st->count > HBS_XMSS_STEP_LEAVES) {
        if (sig)
            memset(sig, 0, sigcap);
        return HBS_ERR_INVALID_ARGUMENT;
    }
    if (!leaves) {
        step_leaves(key, st, own, st->digits, sig + st->ots_at);
        leaves = own;
    } else {
        memcpy(sig + st->ots_at, ots, (size_t)key->p->len * key->p->n);
    }
    err = step_apply(key, st, leaves);
    hbs_memzero(own, sizeof own);
    hbs_memzero(st, sizeof *st);
    if (err) {
        /* the index is burnt and the traversal state may be half moved: this copy of the
         * key signs no more (the stored state was not advanced, so it is still good) */
        key->idx++;
        key->end = key->idx;
        memset(sig, 0, sigcap);
        return err;
    }
    key->idx++;
    return HBS_OK;
}

int hbs_xmss_sign(hbs_xmss_key *key, uint8_t *sig, size_t sigcap, size_t *siglen,
                  const uint8_t *msg, size_t msglen)
{
    hbs_xmss_step st;
    int err;
    if (siglen)
        *siglen = 0;
    err = hbs_xmss_sign_begin(key, sig, sigcap, msg, msglen, &st);
    if (err == HBS_OK)
        err = hbs_xmss_sign_finish(key, &st, NULL, NULL, sig, sigcap);
    if (err == HBS_OK && siglen)
        *siglen = key->p->sig_bytes;
    return err;
}

/* ---- accessors, skipping, end ------------------------------------------------------------- */

const hbs_xmss_params *hbs_xmss_key_params(const hbs_xmss_key *key) { return key ? key->p : NULL; }
unsigned hbs_xmss_key_bds_k(const hbs_xmss_key *key) { return key ? key->sh.K : 0; }
uint64_t hbs_xmss_key_index(const hbs_xmss_key *key) { return key ? key->idx : 0; }
uint64_t hbs_xmss_key_end(const hbs_xmss_key *key) { return key ? key->end : 0; }
uint64_t hbs_xmss_key_total(const hbs_xmss_key *key) { return key ? total_of(key->p) : 0; }

int hbs_xmss_key_set_end(hbs_xmss_key *key, uint64_t end)
{
    if (!key || end > key->end || end < key->idx)
        return HBS_ERR_INVALID_ARGUMENT;
    key->end = end;
    return HBS_OK;
}

/* Before a skip that steps from key->idx to index with an engine: the whole trees of the
 * bottom layer the steps compute leaves of (the current one up to the one of index, and the
 * next one being grown), when the steps would compute enough leaves to pay for them: read
 * in place where the engine holds a tree whole (with its inner nodes), else its leaves from
 * the engine into *mem (*memlen bytes, the caller's to wipe and free). Leaves nothing cached
 * (and returns HBS_OK) otherwise. */
static int cache_bottom_trees(hbs_xmss_key *k, uint64_t index, uint64_t step_leaves,
                              const hbs_leaf_engine *e, xmss_cached_tree *trees, uint8_t **mem,
                              size_t *memlen)
{
    const size_t n = k->sh.n, leaves = (size_t)1 << k->sh.H;
    const uint64_t t0 = tree_of(k, k->idx, 0), t1 = tree_of(k, index, 0);
    size_t count = (size_t)(t1 - t0 + 1) + (has_next(k, 0, t1) && leaf_of(k, index, 0) ? 1 : 0);
    size_t missing = 0;
    uint8_t *own;
    hbs_xmss_leaf_job job;
    *mem = NULL;
    *memlen = 0;
    /* an engine (the GPU) makes leaves some hundreds of times faster than one CPU thread,
     * and a batch signer's engine may have the trees already */
    if (step_leaves < e->min_leaves || count > XMSS_CACHE_TREES ||
        step_leaves * ENGINE_SPEEDUP < (uint64_t)count * leaves)
        return HBS_OK;
    /* whole trees the engine holds (the batch signer's own): leaves and inner nodes */
    for (size_t t = 0; t < count; t++) {
        trees[t].layer = 0;
        trees[t].tree = t0 + t;
        engine_job(k, &job, 0, t0 + t);
        trees[t].nodes = e->xmss_tree ? e->xmss_tree(e->user, &job, k->sh.H) : NULL;
        trees[t].leaves = trees[t].nodes;
        missing += trees[t].nodes == NULL;
    }
    /* the leaves of the others, into memory of the skip's */
    if (missing && !(*mem = malloc(missing * leaves * n)))
        return HBS_ERR_NO_MEMORY;
    *memlen = missing * leaves * n;
    own = *mem;
    for (size_t t = 0; t < count; t++) {
        if (trees[t].leaves)
            continue;
        engine_job(k, &job, 0, t0 + t);
        for (size_t at = 0; at < leaves; at += e->slice_leaves) {
            const size_t m = leaves - at < e->slice_leaves ? leaves - at : e->slice_leaves;
            int err = e->xmss_leaves(e->user, &job, 1, (uint32_t)at, m, own + at * n);
            if (err) {
                hbs_memzero(*mem, *memlen);
                free(*mem);
                *mem = NULL;
                *memlen = 0;
                return err;
            }
        }
        trees[t].leaves = own;
        own += leaves * n;
    }
    k->cache = trees;
    k->ncache = count;
    return HBS_OK;
}

int hbs_xmss_key_skip_to(hbs_xmss_key *key, uint64_t index)
{
    return hbs_xmss_key_skip_to_engine(key, index, NULL);
}

int hbs_xmss_key_skip_to_engine(hbs_xmss_key *key, uint64_t index, const hbs_leaf_engine *engine)
{
    uint64_t steps, step_cost, rebuild_cost;
    int err = HBS_OK;
    if (!key || index < key->idx || index > key->end)
        return HBS_ERR_INVALID_ARGUMENT;
    if (index == key->idx)
        return HBS_OK;
    if (index >= total_of(key->p)) {
        /* nothing will be signed again: the traversal state no longer matters */
        key->idx = index;
        return HBS_OK;
    }
    /* stepping costs about (H - K) / 2 + 2 leaves an index; a rebuild about 2^H leaves per
     * layer whose position changes, and the next trees' leaves again. The choice does not
     * depend on the engine: the state after the skip is the same with or without one. */
    steps = index - key->idx;
    step_cost = (key->sh.H - key->sh.K) / 2 + 2;
    rebuild_cost = (uint64_t)key->p->d << (key->sh.H + 1);
    key->ctx.engine = engine;
    if (steps <= rebuild_cost / step_cost) {
        xmss_cached_tree trees[XMSS_CACHE_TREES];
        uint8_t *mem = NULL;
        size_t memlen = 0;
        if (engine)
            err = cache_bottom_trees(key, index, steps * step_cost, engine, trees, &mem,
                                     &memlen);
        while (!err && key->idx < index) {
            err = advance(key);
            key->idx++;
        }
        if (mem) {
            hbs_memzero(mem, memlen);
            free(mem);
        }
        key->cache = NULL;
        key->ncache = 0;
    } else {
        key->idx = index;
        err = rebuild_at(key, index, NULL, NULL);
    }
    key->ctx.engine = NULL;
    return err;
}

/* ---- export / import -------------------------------------------------------------------
 * Layout (big-endian integers), every size fixed by the set and K:
 *   OID u32 | kind u8 (0 XMSS, 1 XMSS^MT) | version u8 (1) | K u8 | 0 u8 | idx u64 | end u64
 *   SK_SEED | SK_PRF | PUB_SEED | root                                   (n bytes each)
 *   per layer, bottom first:
 *     root of its current tree | pending u32 | current BDS state
 *     below the top: next_fed u32 | BDS state of the next tree
 *     above the bottom: the cached WOTS+ signature (len * n)
 *   SHA-256 of everything before it.
 * A BDS state: auth (H nodes) | keep (H/2) | per treehash instance j < H - K: completed u8,
 *   stackusage u8, next_idx u32, node | stack_len u8 | stack levels (H + 1 bytes) |
 *   stack (H + 1 nodes) | retained nodes (2^K - K - 1). */

typedef struct {
    uint8_t *p;
} writer;

typedef struct {
    const uint8_t *p;
} reader;

static void w_bytes(writer *w, const void *src, size_t len)
{
    memcpy(w->p, src, len);
    w->p += len;
}

static void w_u8(writer *w, unsigned v) { *w->p++ = (uint8_t)v; }

static void w_u32(writer *w, uint32_t v)
{
    xmss_put32(w->p, v);
    w->p += 4;
}

static void w_u64(writer *w, uint64_t v)
{
    w_u32(w, (uint32_t)(v >> 32));
    w_u32(w, (uint32_t)v);
}

static void r_bytes(reader *r, void *dst, size_t len)
{
    memcpy(dst, r->p, len);
    r->p += len;
}

static unsigned r_u8(reader *r) { return *r->p++; }

static uint32_t r_u32(reader *r)
{
    uint32_t v = xmss_get32(r->p);
    r->p += 4;
    return v;
}

static uint64_t r_u64(reader *r)
{
    uint64_t hi = r_u32(r);
    return hi << 32 | r_u32(r);
}

static size_t bds_bytes(const xmss_shape *sh)
{
    const size_t H = sh->H, n = sh->n;
    return H * n + (H / 2) * n + (H - sh->K) * (6 + n) + 1 + (H + 1) + (H + 1) * n +
           hbs_xmss_retain_nodes(sh->H, sh->K) * n;
}

static size_t export_bytes(const hbs_xmss_params *p, const xmss_shape *sh)
{
    size_t len = EXPORT_HEADER + 4 * (size_t)p->n;
    for (unsigned i = 0; i < p->d; i++) {
        len += p->n + 4 + bds_bytes(sh);
        if (i + 1 < p->d)
            len += 4 + bds_bytes(sh);
        if (i > 0)
            len += (size_t)p->len * p->n;
    }
    return len + EXPORT_DIGEST;
}

size_t hbs_xmss_key_export_bytes(const hbs_xmss_key *key)
{
    return key ? export_bytes(key->p, &key->sh) : 0;
}

static void w_bds(writer *w, const xmss_shape *sh, const xmss_bds *b)
{
    const size_t n = sh->n;
    for (unsigned j = 0; j < sh->H; j++)
        w_bytes(w, b->auth[j], n);
    for (unsigned j = 0; j < sh->H / 2; j++)
        w_bytes(w, b->keep[j], n);
    for (unsigned j = 0; j + sh->K < sh->H; j++) {
        w_u8(w, b->th[j].completed);
        w_u8(w, b->th[j].stackusage);
        w_u32(w, b->th[j].next_idx);
        w_bytes(w, b->th[j].node, n);
    }
    w_u8(w, b->stack_len);
    w_bytes(w, b->stack_lv, sh->H + 1);
    for (unsigned j = 0; j <= sh->H; j++)
        w_bytes(w, b->stack[j], n);
    w_bytes(w, b->retain, hbs_xmss_retain_nodes(sh->H, sh->K) * n);
}

static void r_bds(reader *r, const xmss_shape *sh, xmss_bds *b)
{
    const size_t n = sh->n;
    for (unsigned j = 0; j < sh->H; j++)
        r_bytes(r, b->auth[j], n);
    for (unsigned j = 0; j < sh->H / 2; j++)
        r_bytes(r, b->keep[j], n);
    for (unsigned j = 0; j + sh->K < sh->H; j++) {
        b->th[j].h = (uint8_t)j;
        b->th[j].completed = (uint8_t)r_u8(r);
        b->th[j].stackusage = (uint8_t)r_u8(r);
        b->th[j].next_idx = r_u32(r);
        r_bytes(r, b->th[j].node, n);
    }
    b->stack_len = (uint8_t)r_u8(r);
    r_bytes(r, b->stack_lv, sh->H + 1);
    for (unsigned j = 0; j <= sh->H; j++)
        r_bytes(r, b->stack[j], n);
    r_bytes(r, b->retain, hbs_xmss_retain_nodes(sh->H, sh->K) * n);
}

int hbs_xmss_key_export(const hbs_xmss_key *key, uint8_t *out, size_t outcap, size_t *outlen)
{
    const hbs_xmss_params *p;
    size_t len;
    writer w;
    if (outlen)
        *outlen = 0;
    if (!key || !out)
        return HBS_ERR_INVALID_ARGUMENT;
    p = key->p;
    len = export_bytes(p, &key->sh);
    if (outcap < len) {
        memset(out, 0, outcap);
        return HBS_ERR_BUFFER_TOO_SMALL;
    }
    w.p = out;
    w_u32(&w, p->oid);
    w_u8(&w, p->mt);
    w_u8(&w, EXPORT_VERSION);
    w_u8(&w, key->sh.K);
    w_u8(&w, 0);
    w_u64(&w, key->idx);
    w_u64(&w, key->end);
    w_bytes(&w, key->sk_seed, p->n);
    w_bytes(&w, key->sk_prf, p->n);
    w_bytes(&w, key->pub_seed, p->n);
    w_bytes(&w, key->root, p->n);
    for (unsigned i = 0; i < p->d; i++) {
        const xmss_layer *L = &key->layer[i];
        w_bytes(&w, L->root, p->n);
        w_u32(&w, L->pending);
        w_bds(&w, &key->sh, &L->cur);
        if (i + 1 < p->d) {
            w_u32(&w, L->next_fed);
            w_bds(&w, &key->sh, &L->next);
        }
        if (i > 0)
            w_bytes(&w, L->wots_sig, (size_t)p->len * p->n);
    }
    hbs_sha256(w.p, out, (size_t)(w.p - out));
    if (outlen)
        *outlen = len;
    return HBS_OK;
}

/* Whether the parsed state is one the signing code can run from without reading or writing
 * out of bounds, and consistent with its index. */
static int state_valid(const hbs_xmss_key *k)
{
    const hbs_xmss_params *p = k->p;
    const uint32_t leaves = (uint32_t)1 << k->sh.H;
    const int live = k->idx < total_of(p);
    if (k->idx > k->end || k->end > total_of(p))
        return 0;
    if (memcmp(k->root, k->layer[p->d - 1].root, p->n) != 0)
        return 0;
    for (unsigned i = 0; i < p->d; i++) {
        const xmss_layer *L = &k->layer[i];
        if (L->pending > (k->sh.H - k->sh.K) / 2 || (i == 0 && L->pending))
            return 0;
        if (!hbs_xmss_bds_valid(&k->sh, &L->cur, 0, 0))
            return 0;
        if (i + 1 < p->d) {
            if (L->next_fed > leaves || !hbs_xmss_bds_valid(&k->sh, &L->next, 1, L->next_fed))
                return 0;
            if (live) {
                const uint64_t tree = tree_of(k, k->idx, i);
                const uint32_t leaf = leaf_of(k, k->idx, i);
                if (!has_next(k, i, tree) ? L->next_fed != 0
                                          : (i == 0 ? L->next_fed != leaf : L->next_fed > leaf))
                    return 0;
            }
        }
    }
    return 1;
}

int hbs_xmss_key_import(hbs_xmss_key **key, const uint8_t *in, size_t inlen)
{
    const hbs_xmss_params *p;
    hbs_xmss_key *k;
    uint8_t digest[32];
    unsigned K;
    reader r;

    if (key)
        *key = NULL;
    if (!key || (!in && inlen))
        return HBS_ERR_INVALID_ARGUMENT;
    if (inlen < EXPORT_HEADER + EXPORT_DIGEST || in[4] > 1 || in[5] != EXPORT_VERSION ||
        in[7] != 0)
        return HBS_ERR_MALFORMED_KEY;
    p = hbs_xmss_params_by_oid(in[4], xmss_get32(in));
    K = in[6];
    if (!p || !valid_k(p, K))
        return HBS_ERR_MALFORMED_KEY;
    {
        xmss_shape sh = {p->tree_h, K, p->n};
        if (inlen != export_bytes(p, &sh))
            return HBS_ERR_MALFORMED_KEY;
    }
    hbs_sha256(digest, in, inlen - EXPORT_DIGEST);
    if (memcmp(digest, in + inlen - EXPORT_DIGEST, EXPORT_DIGEST) != 0)
        return HBS_ERR_MALFORMED_KEY;
    k = key_alloc(p, K);
    if (!k)
        return HBS_ERR_NO_MEMORY;
    r.p = in + 8;
    k->idx = r_u64(&r);
    k->end = r_u64(&r);
    r_bytes(&r, k->sk_seed, p->n);
    r_bytes(&r, k->sk_prf, p->n);
    r_bytes(&r, k->pub_seed, p->n);
    r_bytes(&r, k->root, p->n);
    for (unsigned i = 0; i < p->d; i++) {
        xmss_layer *L = &k->layer[i];
        r_bytes(&r, L->root, p->n);
        L->pending = r_u32(&r);
        r_bds(&r, &k->sh, &L->cur);
        if (i + 1 < p->d) {
            L->next_fed = r_u32(&r);
            r_bds(&r, &k->sh, &L->next);
        }
        if (i > 0)
            r_bytes(&r, L->wots_sig, (size_t)p->len * p->n);
    }
    if (!state_valid(k)) {
        hbs_xmss_key_free(k);
        return HBS_ERR_MALFORMED_KEY;
    }
    hbs_xmss_ctx_init(&k->ctx, p, k->pub_seed, k->sk_seed);
    *key = k;
    return HBS_OK;
}
