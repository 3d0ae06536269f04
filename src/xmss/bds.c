/* BDS tree traversal (Buchmann, Dahmen, Schneider: "Merkle tree traversal revisited", 2008),
 * as RFC 8391's reference code uses it: the authentication path of the next leaf is kept
 * ready, the right nodes of the top K levels are stored ("retain"), and one treehash
 * instance per lower level computes that level's next right node, (H - K) / 2 leaf updates
 * per signature shared by lowest height first.
 *
 * A state can also be made for any leaf s from scratch (bds_build: every leaf of the tree,
 * in parallel, keeping the nodes the state at s needs), and the state at leaf 0 of a tree
 * can be grown one leaf at a time (bds_feed) while the tree before it is in use. */
#include <stdatomic.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common/pool.h"
#include "hbs/hbs.h"
#include "xmss/internal.h"

size_t hbs_xmss_retain_nodes(unsigned H, unsigned K)
{
    (void)H;
    return ((size_t)1 << K) - K - 1;
}

/* Retained right nodes 3, 5, 7, ... of level lv (H - K <= lv <= H - 2) start here: the
 * levels below it come first, level j holding 2^(H - j - 1) - 1 nodes. */
static size_t retain_offset(const xmss_shape *sh, unsigned lv)
{
    size_t off = 0;
    for (unsigned j = sh->H - sh->K; j < lv; j++)
        off += ((size_t)1 << (sh->H - j - 1)) - 1;
    return off;
}

/* Node idx of level lv >= 1 of the tree into out from its two children in pair: read where
 * the tree's nodes are at hand (an engine built the tree), else hashed. out may be pair + n. */
static void make_node(const xmss_shape *sh, const xmss_treeref *t, uint8_t *out,
                      const uint8_t *pair, unsigned lv, uint32_t idx)
{
    if (t->nodes) {
        memcpy(out, t->nodes + (hbs_xmss_level_at(sh->H, lv) + idx) * sh->n, sh->n);
        return;
    }
    hbs_xmss_tree_nodes(t->c, out, pair, t->layer, t->tree, lv, idx, 1);
}

/* Stores node (lv, i) wherever the state ready to sign leaf s needs it. */
static void capture(const xmss_shape *sh, xmss_bds *b, uint32_t s, unsigned lv, uint32_t i,
                    const uint8_t *node)
{
    const unsigned H = sh->H, K = sh->K;
    const size_t n = sh->n;
    const uint64_t leaves = (uint64_t)1 << H;
    if (lv >= H)
        return;
    /* the authentication path of s */
    if (i == ((s >> lv) ^ 1u))
        memcpy(b->auth[lv], node, n);
    /* a treehash instance's node: the right node that becomes level lv's authentication
     * node at the next multiple t of 2^(lv+1) after s */
    if (lv < H - K) {
        uint64_t t = (((uint64_t)s >> (lv + 1)) + 1) << (lv + 1);
        if (t < leaves && i == (t >> lv) + 1)
            memcpy(b->th[lv].node, node, n);
    }
    /* the retained right nodes of the top levels */
    if (lv + K >= H && lv + 2 <= H && (i & 1) && i >= 3)
        memcpy(b->retain + (retain_offset(sh, lv) + (i - 3) / 2) * n, node, n);
    /* keep: the round r >= s with lv + 1 trailing ones reads node (lv, r >> lv), which the
     * round r - 2^lv stored; if that round is before s, the state must already hold it */
    if (lv + 2 <= H) {
        uint64_t blk = (uint64_t)1 << (lv + 2);
        uint64_t r = ((uint64_t)s & ~(blk - 1)) + ((uint64_t)1 << (lv + 1)) - 1;
        if (r < s)
            r += blk;
        if (r - ((uint64_t)1 << lv) < s && i == (r >> lv))
            memcpy(b->keep[lv >> 1], node, n);
    }
}

/* Resets the bookkeeping of a state for leaf s: every treehash instance complete (its node
 * is captured), an empty stack. */
static void reset(const xmss_shape *sh, xmss_bds *b)
{
    uint8_t *retain = b->retain;
    memset(b, 0, sizeof *b);
    b->retain = retain;
    for (unsigned j = 0; j + sh->K < sh->H; j++) {
        b->th[j].h = (uint8_t)j;
        b->th[j].completed = 1;
    }
}

typedef struct {
    const xmss_shape *sh;
    const xmss_treeref *t;
    xmss_bds *b;
    uint32_t s;
    unsigned bs;   /* log2 of leaves per block */
    uint8_t *tops; /* block roots */
    const uint8_t *leaves; /* from the engine: the leaves of blocks blk0 .. (or NULL) */
    size_t blk0;
    hbs_progress_fn progress;
    void *progress_user;
    uint64_t *done, total;
    pthread_mutex_t lock;
    atomic_int cancelled;
} build_run;

/* Reduces 2^levels nodes at height `base` (first index `first`) to one, capturing every
 * node made. nodes and tmp are clobbered; the result is left in *result. */
static void reduce(build_run *r, uint8_t *nodes, uint8_t *tmp, unsigned levels, unsigned base,
                   uint32_t first, uint8_t *result)
{
    const size_t n = r->sh->n;
    uint8_t *cur = nodes, *next = tmp;
    size_t count = (size_t)1 << levels;
    for (unsigned z = 0; z < levels; z++) {
        count >>= 1;
        hbs_xmss_tree_nodes(r->t->c, next, cur, r->t->layer, r->t->tree, base + z + 1,
                            first >> (z + 1), count);
        for (size_t i = 0; i < count; i++)
            capture(r->sh, r->b, r->s, base + z + 1, (first >> (z + 1)) + (uint32_t)i,
                    next + i * n);
        uint8_t *sw = cur;
        cur = next;
        next = sw;
    }
    memcpy(result, cur, n);
}

#define BUILD_BLOCK_LOG 5

static void build_task(void *arg, size_t blk)
{
    build_run *r = arg;
    const size_t n = r->sh->n, per = (size_t)1 << r->bs;
    const uint32_t first = (uint32_t)(blk * per);
    uint8_t lv[((size_t)1 << BUILD_BLOCK_LOG) * XMSS_MAX_N];
    uint8_t tmp[((size_t)1 << (BUILD_BLOCK_LOG - 1)) * XMSS_MAX_N + XMSS_MAX_N];

    if (atomic_load(&r->cancelled))
        return;
    if (r->leaves)
        memcpy(lv, r->leaves + (blk - r->blk0) * per * n, per * n);
    else
        hbs_xmss_leaf_range(r->t->c, lv, r->t->layer, r->t->tree, first, per);
    for (size_t i = 0; i < per; i++)
        capture(r->sh, r->b, r->s, 0, first + (uint32_t)i, lv + i * n);
    reduce(r, lv, tmp, r->bs, 0, first, r->tops + blk * n);
    if (r->progress) {
        pthread_mutex_lock(&r->lock);
        *r->done += per;
        if (!atomic_load(&r->cancelled) && r->progress(r->progress_user, *r->done, r->total))
            atomic_store(&r->cancelled, 1);
        pthread_mutex_unlock(&r->lock);
    }
}

static void slice_task(void *arg, size_t i)
{
    build_run *r = arg;
    build_task(r, r->blk0 + i);
}

/* The blocks with their leaves from the engine, a slice at a time: the engine computes a
 * slice's leaves, the pool captures and reduces its blocks. */
static int engine_blocks(build_run *r, size_t nblocks)
{
    const xmss_ctx *c = r->t->c;
    const hbs_leaf_engine *e = c->engine;
    const size_t n = r->sh->n, per = (size_t)1 << r->bs;
    size_t slice = e->slice_leaves / per;
    hbs_xmss_leaf_job job;
    uint8_t *buf;
    int err = HBS_OK;

    if (slice == 0)
        slice = 1;
    if (slice > nblocks)
        slice = nblocks;
    buf = malloc(slice * per * n);
    if (!buf)
        return HBS_ERR_NO_MEMORY;
    job.func = c->p->func;
    job.n = c->p->n;
    job.padlen = c->p->padlen;
    job.len = c->p->len;
    job.pub_seed = c->pub_seed;
    job.sk_seed = c->sk_seed;
    job.layer = r->t->layer;
    job.tree = r->t->tree;
    job.oid = c->p->oid;
    job.mt = c->p->mt;
    r->leaves = buf;
    for (size_t b0 = 0; b0 < nblocks && !atomic_load(&r->cancelled); b0 += slice) {
        size_t m = nblocks - b0 < slice ? nblocks - b0 : slice;
        err = e->xmss_leaves(e->user, &job, 1, (uint32_t)(b0 * per), m * per, buf);
        if (err)
            break;
        r->blk0 = b0;
        hbs_parallel_for(m, slice_task, r);
    }
    hbs_memzero(buf, slice * per * n);
    free(buf);
    r->leaves = NULL;
    return err;
}

int hbs_xmss_bds_build(const xmss_shape *sh, const xmss_treeref *t, xmss_bds *b, uint8_t *root,
                       uint32_t s, hbs_progress_fn progress, void *progress_user,
                       uint64_t *done, uint64_t total)
{
    const size_t n = sh->n;
    build_run r;
    uint8_t rootbuf[XMSS_MAX_N];
    size_t nblocks;
    int err = HBS_OK;

    reset(sh, b);
    if (t->nodes) {
        /* every node at hand (an engine built the whole tree): captured, nothing hashed */
        for (unsigned lv = 0; lv < sh->H; lv++) {
            const uint8_t *level = t->nodes + hbs_xmss_level_at(sh->H, lv) * n;
            for (uint32_t i = 0; i < ((uint32_t)1 << (sh->H - lv)); i++)
                capture(sh, b, s, lv, i, level + (size_t)i * n);
        }
        if (root)
            memcpy(root, t->nodes + hbs_xmss_level_at(sh->H, sh->H) * n, n);
        if (progress) {
            *done += (uint64_t)1 << sh->H;
            if (progress(progress_user, *done, total))
                return HBS_ERR_CANCELLED;
        }
        return HBS_OK;
    }
    memset(&r, 0, sizeof r);
    r.sh = sh;
    r.t = t;
    r.b = b;
    r.s = s;
    r.bs = sh->H < BUILD_BLOCK_LOG ? sh->H : BUILD_BLOCK_LOG;
    r.progress = progress;
    r.progress_user = progress_user;
    r.done = done;
    r.total = total;
    atomic_init(&r.cancelled, 0);
    nblocks = (size_t)1 << (sh->H - r.bs);
    /* block roots, then scratch for halving them */
    r.tops = malloc((nblocks + nblocks / 2 + 1) * n);
    if (!r.tops)
        return HBS_ERR_NO_MEMORY;
    pthread_mutex_init(&r.lock, NULL);
    if (t->leaves) {
        r.leaves = t->leaves;
        r.blk0 = 0;
        hbs_parallel_for(nblocks, build_task, &r);
    } else if (t->c->engine && ((size_t)1 << sh->H) >= t->c->engine->min_leaves) {
        err = engine_blocks(&r, nblocks);
    } else {
        hbs_parallel_for(nblocks, build_task, &r);
    }
    pthread_mutex_destroy(&r.lock);
    if (!err && atomic_load(&r.cancelled))
        err = HBS_ERR_CANCELLED;
    if (!err) {
        reduce(&r, r.tops, r.tops + nblocks * n, sh->H - r.bs, r.bs, 0, rootbuf);
        if (root)
            memcpy(root, rootbuf, n);
    }
    free(r.tops);
    return err;
}

void hbs_xmss_bds_feed(const xmss_shape *sh, const xmss_treeref *t, xmss_bds *b,
                       const uint8_t *leaf, uint32_t leaf_idx)
{
    const size_t n = sh->n;
    uint8_t pair[2 * XMSS_MAX_N];
    unsigned lv = 0;
    uint32_t idx = leaf_idx;

    if (leaf_idx == 0)
        reset(sh, b);
    capture(sh, b, 0, 0, leaf_idx, leaf);
    memcpy(pair + n, leaf, n);
    while (b->stack_len > 0 && b->stack_lv[b->stack_len - 1] == lv) {
        memcpy(pair, b->stack[b->stack_len - 1], n);
        b->stack_len--;
        idx >>= 1;
        lv++;
        make_node(sh, t, pair + n, pair, lv, idx);
        capture(sh, b, 0, lv, idx, pair + n);
    }
    if (b->stack_len > sh->H)
        return; /* more leaves than the tree has: never, for a valid state */
    memcpy(b->stack[b->stack_len], pair + n, n);
    b->stack_lv[b->stack_len] = (uint8_t)lv;
    b->stack_len++;
}

/* Trailing one bits of s: the height of the node completed by leaf s. */
static unsigned trailing_ones(uint32_t s)
{
    unsigned tau = 0;
    while (s & 1) {
        s >>= 1;
        tau++;
    }
    return tau;
}

void hbs_xmss_bds_round(const xmss_shape *sh, const xmss_treeref *t, xmss_bds *b, uint32_t s,
                        const uint8_t *leaf)
{
    const unsigned H = sh->H, K = sh->K;
    const size_t n = sh->n;
    const unsigned tau = trailing_ones(s);
    const int dry = t->c == NULL;
    uint8_t pair[2 * XMSS_MAX_N];

    if (tau >= H)
        return; /* the last leaf: nothing comes after it */
    if (tau > 0) {
        /* the left child is s's old authentication node, the right one was kept */
        memcpy(pair, b->auth[tau - 1], n);
        memcpy(pair + n, b->keep[(tau - 1) >> 1], n);
    }
    if (tau + 1 < H && !((s >> (tau + 1)) & 1))
        memcpy(b->keep[tau >> 1], b->auth[tau], n);
    if (tau == 0) {
        if (!dry)
            memcpy(b->auth[0], leaf, n);
        return;
    }
    if (!dry)
        make_node(sh, t, b->auth[tau], pair, tau, s >> tau);
    for (unsigned i = 0; i < tau; i++) {
        if (i + K < H) {
            memcpy(b->auth[i], b->th[i].node, n);
        } else {
            size_t row = (((size_t)s >> i) - 1) >> 1;
            memcpy(b->auth[i], b->retain + (retain_offset(sh, i) + row) * n, n);
        }
    }
    for (unsigned i = 0; i < tau && i + K < H; i++) {
        uint64_t start = (uint64_t)s + 1 + 3 * ((uint64_t)1 << i);
        if (start < ((uint64_t)1 << H)) {
            b->th[i].h = (uint8_t)i;
            b->th[i].next_idx = (uint32_t)start;
            b->th[i].completed = 0;
            b->th[i].stackusage = 0;
        }
    }
}

/* The instance to update next: lowest height of its lowest node on the stack (or of its
 * target when it has none), first on ties; -1 when all are complete. */
static int select_instance(const xmss_shape *sh, const xmss_bds *b)
{
    unsigned best = sh->H;
    int which = -1;
    for (unsigned j = 0; j + sh->K < sh->H; j++) {
        const xmss_treehash *th = &b->th[j];
        unsigned low;
        if (th->completed)
            continue;
        if (th->stackusage == 0) {
            low = j;
        } else {
            low = sh->H;
            for (unsigned u = 0; u < th->stackusage && u < b->stack_len; u++) {
                unsigned l = b->stack_lv[b->stack_len - 1 - u];
                low = l < low ? l : low;
            }
        }
        if (low < best) {
            best = low;
            which = (int)j;
        }
    }
    return which;
}

/* One treehash update of instance j with its next leaf; c NULL: bookkeeping only. */
static void update_instance(const xmss_shape *sh, const xmss_treeref *t, xmss_bds *b,
                            unsigned j, const uint8_t *leaf)
{
    const size_t n = sh->n;
    xmss_treehash *th = &b->th[j];
    uint8_t pair[2 * XMSS_MAX_N];
    unsigned lv = 0;
    uint32_t idx = th->next_idx;

    if (t && t->c)
        memcpy(pair + n, leaf, n);
    while (th->stackusage > 0 && b->stack_lv[b->stack_len - 1] == lv) {
        idx >>= 1;
        lv++;
        if (t && t->c) {
            memcpy(pair, b->stack[b->stack_len - 1], n);
            make_node(sh, t, pair + n, pair, lv, idx);
        }
        b->stack_len--;
        th->stackusage--;
    }
    if (lv == th->h) {
        if (t && t->c)
            memcpy(th->node, pair + n, n);
        th->completed = 1;
    } else if (b->stack_len <= sh->H) { /* always, for a state that passed bds_valid */
        if (t && t->c)
            memcpy(b->stack[b->stack_len], pair + n, n);
        b->stack_lv[b->stack_len] = (uint8_t)lv;
        b->stack_len++;
        th->stackusage++;
    }
    th->next_idx++;
}

size_t hbs_xmss_bds_plan(const xmss_shape *sh, const xmss_bds *b, unsigned updates,
                         uint32_t *leaf_idx)
{
    /* the bookkeeping alone decides which leaves are consumed: replay it on a copy */
    xmss_bds copy;
    size_t k = 0;
    memcpy(&copy, b, sizeof copy);
    for (; k < updates; k++) {
        int j = select_instance(sh, &copy);
        if (j < 0)
            break;
        leaf_idx[k] = copy.th[j].next_idx;
        update_instance(sh, NULL, &copy, (unsigned)j, NULL);
    }
    return k;
}

size_t hbs_xmss_bds_updates_from(const xmss_shape *sh, const xmss_treeref *t, xmss_bds *b,
                                 unsigned updates, const uint8_t *leaves)
{
    size_t k = 0;
    for (; k < updates; k++) {
        int j = select_instance(sh, b);
        if (j < 0)
            break;
        update_instance(sh, t, b, (unsigned)j, leaves + (size_t)b->th[j].next_idx * sh->n);
    }
    return k;
}

void hbs_xmss_bds_update(const xmss_shape *sh, const xmss_treeref *t, xmss_bds *b,
                         const uint8_t *leaf)
{
    int j = select_instance(sh, b);
    if (j >= 0)
        update_instance(sh, t, b, (unsigned)j, leaf);
}

int hbs_xmss_bds_valid(const xmss_shape *sh, const xmss_bds *b, int building, uint32_t fed)
{
    const unsigned H = sh->H;
    unsigned used = 0;
    if (b->stack_len > H + 1)
        return 0;
    for (unsigned i = 0; i < b->stack_len; i++)
        if (b->stack_lv[i] > H)
            return 0;
    if (building) {
        /* a tree being grown: the stack holds the binary digits of the leaves fed, highest
         * first */
        uint64_t sum = 0;
        for (unsigned i = 0; i < b->stack_len; i++) {
            if (i > 0 && b->stack_lv[i] >= b->stack_lv[i - 1])
                return 0;
            sum += (uint64_t)1 << b->stack_lv[i];
        }
        return sum == fed;
    }
    for (unsigned j = 0; j + sh->K < H; j++) {
        const xmss_treehash *th = &b->th[j];
        if (th->h != j || th->completed > 1 || th->next_idx > ((uint32_t)1 << H) ||
            (!th->completed && th->next_idx == ((uint32_t)1 << H)) ||
            (th->completed && th->stackusage))
            return 0;
        used += th->stackusage;
    }
    for (unsigned i = 0; i < b->stack_len; i++)
        if (b->stack_lv[i] >= H)
            return 0;
    return used == b->stack_len;
}
