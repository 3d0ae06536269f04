/* HSS keys in memory: generation, signing with the cached traversal, skip, export, import. */
#include "lms/hss.h"

#include <stdlib.h>
#include <string.h>

#include "common/pool.h"
#include "hash/hash.h"
#include "lms/lmots.h"
#include "lms/params.h"
#include "lms/tree.h"

#define S_MAX HBS_LMS_MAX_STRIPES

typedef struct {
    hbs_lms_layout L;
    unsigned shift;   /* sum of the heights below this level */
    uint8_t I[16];    /* current tree */
    uint8_t seed[HBS_LMS_MAX_N];
    uint8_t nI[16];   /* next tree (levels >= 1) */
    uint8_t nseed[HBS_LMS_MAX_N];
    /* pointers into the key's memory block (see layout_mem) */
    uint8_t *top, *cur[S_MAX], *next[S_MAX], *left[S_MAX];
    uint8_t *psig; /* levels >= 1: the parent's LMS signature of this tree's public key */
    size_t psiglen;
    uint8_t *ntop, *ncur[S_MAX], *nleft; /* levels >= 1: the next tree, under construction */
} hss_level;

struct hbs_hss_key {
    hbs_hss_params params;
    uint8_t I0[16];
    uint8_t seed0[HBS_LMS_MAX_N];
    uint64_t index, end, total;
    int stale; /* the caches do not match index (an advance failed): rebuild before use */
    hss_level lv[HBS_HSS_MAX_LEVELS];
    uint8_t *mem;
    size_t memlen;
    const hbs_leaf_engine *engine; /* during key generation only: leaves of whole trees */
};

#define MAGIC "HSSK"
/* How many times faster than a CPU thread an engine is taken to make leaves. */
#define ENGINE_SPEEDUP 256
#define VERSION 1

/* ---- small helpers ---- */

static void put64(uint8_t *p, uint64_t v)
{
    hbs_lms_put32(p, (uint32_t)(v >> 32));
    hbs_lms_put32(p + 4, (uint32_t)v);
}

static uint64_t get64(const uint8_t *p)
{
    return (uint64_t)hbs_lms_get32(p) << 32 | hbs_lms_get32(p + 4);
}

static uint32_t level_q(const hbs_hss_key *k, unsigned i, uint64_t G)
{
    return (uint32_t)((G >> k->lv[i].shift) & (((uint64_t)1 << k->lv[i].L.h) - 1));
}

static uint64_t level_inst(const hbs_hss_key *k, unsigned i, uint64_t G)
{
    return G >> (k->lv[i].shift + k->lv[i].L.h);
}

/* Instances (trees) level i uses over the key's life. */
static uint64_t level_insts(const hbs_hss_key *k, unsigned i)
{
    return k->total >> (k->lv[i].shift + k->lv[i].L.h);
}

/* SEED and I of tree `inst` of level i >= 1 (see hss.h). */
static void derive_child(const hbs_hss_key *k, unsigned i, uint64_t inst, uint8_t *I,
                         uint8_t *seed)
{
    const hbs_lms_type *top = k->params.lms[0];
    uint8_t m[16 + 4 + 2 + 1 + 8 + HBS_LMS_MAX_N], out[32];
    const size_t len = 31 + top->m;
    memcpy(m, k->I0, 16);
    hbs_lms_put32(m + 16, i);
    hbs_lms_put16(m + 20, 0xfffe);
    put64(m + 23, inst);
    memcpy(m + 31, k->seed0, top->m);
    for (uint8_t which = 0; which < 2; which++) {
        m[22] = which;
        hbs_lms_hash_many(top->hash, 32, out, m, len, 1);
        if (which == 0)
            memcpy(seed, out, k->params.lms[i]->m);
        else
            memcpy(I, out, 16);
    }
    hbs_memzero(m, sizeof m);
    hbs_memzero(out, sizeof out);
}

static void tree_secrets(const hbs_hss_key *k, unsigned i, uint64_t inst, uint8_t *I,
                         uint8_t *seed)
{
    if (i == 0) {
        memcpy(I, k->I0, 16);
        memcpy(seed, k->seed0, k->params.lms[0]->m);
    } else {
        derive_child(k, i, inst, I, seed);
    }
}

/* Lays the caches out in one block (or just measures it when base is NULL). */
static size_t layout_mem(hbs_hss_key *k, uint8_t *base)
{
    size_t off = 0;
#define TAKE(ptr, bytes)                                                                      \
    do {                                                                                      \
        if (base)                                                                             \
            (ptr) = base + off;                                                               \
        off += (bytes);                                                                       \
    } while (0)
    for (unsigned i = 0; i < k->params.levels; i++) {
        hss_level *lv = &k->lv[i];
        const hbs_lms_layout *L = &lv->L;
        const size_t n = L->n, top = hbs_lms_top_nodes(L) * n;
        TAKE(lv->top, top);
        for (unsigned s = 0; s < L->nstripes; s++) {
            const size_t sb = hbs_lms_stripe_nodes(L, s) * n;
            TAKE(lv->cur[s], sb);
            TAKE(lv->next[s], sb);
            TAKE(lv->left[s], (L->s[s].lo + L->s[s].hgt) * n);
        }
        if (i == 0)
            continue;
        lv->psiglen = hbs_lms_sig_bytes(k->params.lms[i - 1], k->params.ots[i - 1]);
        TAKE(lv->psig, lv->psiglen);
        TAKE(lv->ntop, top);
        for (unsigned s = 0; s < L->nstripes; s++)
            TAKE(lv->ncur[s], hbs_lms_stripe_nodes(L, s) * n);
        TAKE(lv->nleft, L->h * n);
    }
#undef TAKE
    return off;
}

/* Fills in everything that follows from the parameters, up to the block's size. */
static void key_layout(hbs_hss_key *k)
{
    unsigned shift = 0;
    for (unsigned i = k->params.levels; i-- > 0;) {
        hbs_lms_layout_init(&k->lv[i].L, k->params.lms[i], k->params.ots[i],
                            k->params.cache_height);
        k->lv[i].shift = shift;
        shift += k->params.lms[i]->h;
    }
    k->total = (uint64_t)1 << shift;
    k->memlen = layout_mem(k, NULL);
}

/* Allocates the zeroed block and points the levels into it. */
static int key_alloc(hbs_hss_key *k)
{
    k->mem = calloc(1, k->memlen);
    if (!k->mem)
        return HBS_ERR_NO_MEMORY;
    layout_mem(k, k->mem);
    return HBS_OK;
}

static unsigned total_height(const hbs_hss_params *p)
{
    unsigned t = 0;
    for (unsigned i = 0; i < p->levels; i++)
        t += p->lms[i]->h;
    return t;
}

static hbs_lms_view view_of(const hss_level *lv, const uint8_t *I, const uint8_t *seed)
{
    hbs_lms_view v;
    memset(&v, 0, sizeof v);
    v.L = &lv->L;
    v.I = I;
    v.seed = seed;
    return v;
}

static const uint8_t *root_of(const hss_level *lv)
{
    return lv->top + (hbs_lms_top_nodes(&lv->L) - 1) * lv->L.n;
}

/* u32 type || u32 otstype || I || root of level i's current tree. */
static void level_pub(const hbs_hss_key *k, unsigned i, uint8_t *pk)
{
    const hss_level *lv = &k->lv[i];
    hbs_lms_put32(pk, k->params.lms[i]->code);
    hbs_lms_put32(pk + 4, k->params.ots[i]->code);
    memcpy(pk + 8, lv->I, 16);
    memcpy(pk + 24, root_of(lv), lv->L.n);
}

/* Level i-1 signs level i's public key at its index for G. */
static int sign_child(hbs_hss_key *k, unsigned i, uint64_t G)
{
    hss_level *par = &k->lv[i - 1];
    uint8_t pub[24 + HBS_LMS_MAX_N];
    level_pub(k, i, pub);
    return hbs_lms_sign_at(&par->L, par->top, par->cur, par->I, par->seed,
                           level_q(k, i - 1, G), k->lv[i].psig, pub, 24 + k->lv[i].L.n);
}

/* ---- building the caches for an index from scratch ---- */

/* Level i's caches for index G. full: also the current tree (top levels and current
 * subtrees); otherwise only the stripes whose current subtree changes from index `from`. */
static int rebuild_level(hbs_hss_key *k, unsigned i, uint64_t G, int full, uint64_t from,
                         hbs_lms_progress *pr)
{
    hss_level *lv = &k->lv[i];
    const hbs_lms_layout *L = &lv->L;
    const size_t n = L->n;
    const uint32_t q = level_q(k, i, G), qf = level_q(k, i, from);
    const uint64_t inst = level_inst(k, i, G);
    uint8_t root[HBS_LMS_MAX_N];
    int err;

    if (full) {
        hbs_lms_view v;
        tree_secrets(k, i, inst, lv->I, lv->seed);
        v = view_of(lv, lv->I, lv->seed);
        v.top = lv->top;
        v.engine = k->engine;
        for (unsigned s = 0; s < L->nstripes; s++) {
            v.sbuf[s] = lv->cur[s];
            v.ssub[s] = q >> (L->s[s].lo + L->s[s].hgt);
        }
        err = hbs_lms_build_subtree(&v, L->h, 0, root, pr);
        if (err)
            return err;
        if (i > 0 && (err = sign_child(k, i, G)) != HBS_OK)
            return err;
    } else {
        for (unsigned s = 0; s < L->nstripes; s++) {
            const unsigned top = L->s[s].lo + L->s[s].hgt;
            if ((q >> top) == (qf >> top))
                continue;
            hbs_lms_view v = view_of(lv, lv->I, lv->seed);
            v.engine = k->engine;
            v.sbuf[s] = lv->cur[s];
            v.ssub[s] = q >> top;
            if ((err = hbs_lms_build_subtree(&v, top, q >> top, root, NULL)) != HBS_OK)
                return err;
        }
    }
    /* the next subtree of every stripe, q mod span leaves into it */
    for (unsigned s = 0; s < L->nstripes; s++) {
        const unsigned top = L->s[s].lo + L->s[s].hgt;
        const uint32_t c = q >> top;
        memset(lv->next[s], 0, hbs_lms_stripe_nodes(L, s) * n);
        memset(lv->left[s], 0, (size_t)top * n);
        if (c + 1 >= hbs_lms_stripe_count(L, s))
            continue;
        hbs_lms_view v = view_of(lv, lv->I, lv->seed);
        v.engine = k->engine;
        v.sbuf[s] = lv->next[s];
        v.ssub[s] = c + 1;
        err = hbs_lms_build_range(&v, top, (c + 1) << top, q & ((1u << top) - 1), lv->left[s]);
        if (err)
            return err;
    }
    /* the next tree of a lower level, q leaves into it */
    if (i > 0) {
        memset(lv->ntop, 0, hbs_lms_top_nodes(L) * n);
        for (unsigned s = 0; s < L->nstripes; s++)
            memset(lv->ncur[s], 0, hbs_lms_stripe_nodes(L, s) * n);
        memset(lv->nleft, 0, (size_t)L->h * n);
        memset(lv->nI, 0, sizeof lv->nI);
        memset(lv->nseed, 0, sizeof lv->nseed);
        if (inst + 1 < level_insts(k, i)) {
            hbs_lms_view v;
            derive_child(k, i, inst + 1, lv->nI, lv->nseed);
            v = view_of(lv, lv->nI, lv->nseed);
            v.engine = k->engine;
            v.top = lv->ntop;
            memcpy(v.sbuf, lv->ncur, sizeof lv->ncur);
            err = hbs_lms_build_range(&v, L->h, 0, q, lv->nleft);
            if (err)
                return err;
        }
    }
    hbs_memzero(root, sizeof root);
    return HBS_OK;
}

/* Caches for index G, top level first (a parent signs its children's new trees). full: start
 * from nothing; otherwise reuse what is still valid from the current index. */
static int rebuild(hbs_hss_key *k, uint64_t G, int full, hbs_lms_progress *pr)
{
    for (unsigned i = 0; i < k->params.levels; i++) {
        int whole = full || level_inst(k, i, G) != level_inst(k, i, k->index);
        int err = rebuild_level(k, i, G, whole, k->index, pr);
        if (err)
            return err;
    }
    return HBS_OK;
}

/* ---- stepping: the caches for G+1 from those for G ----
 * One step is a few independent leaf computations (the next lower tree's next leaf, one leaf
 * of each stripe's next subtree), each writing only its own buffers, followed by cheap
 * bookkeeping that must run in level order (a finished tree hands over, and the level above
 * signs the new one). The leaves run as one parallel loop, with the bottom level's one-time
 * signature of the message beside them when signing. */

#define MAX_JOBS (HBS_HSS_MAX_LEVELS * (S_MAX + 1))
_Static_assert(MAX_JOBS == HBS_HSS_STEP_LEAVES, "a step's leaves");

typedef struct {
    hbs_lms_view v;
    unsigned top;
    uint32_t base, done;
    uint8_t *left;
} step_job;

typedef struct {
    step_job jobs[MAX_JOBS];
    int errs[MAX_JOBS + 1];
    size_t njobs;
    /* the leaves made elsewhere (leaves[j] at j * HBS_LMS_MAX_N), or NULL: computed here */
    const uint8_t *leaves;
    /* the message's one-time signature, run as the last task when ots_o is set: y from the
     * coefficients ots_a */
    const hbs_lmots_type *ots_o;
    uint8_t *ots_y;
    const uint8_t *ots_I, *ots_seed, *ots_a;
    uint32_t ots_q;
} step_run;

static void step_task(void *arg, size_t j)
{
    step_run *r = arg;
    if (j < r->njobs) {
        const step_job *b = &r->jobs[j];
        if (r->leaves) {
            hbs_lms_builder_put(&b->v, b->top, b->base, b->done, b->left,
                                r->leaves + j * HBS_LMS_MAX_N);
            r->errs[j] = HBS_OK;
        } else {
            r->errs[j] = hbs_lms_builder_step(&b->v, b->top, b->base, b->done, b->left);
        }
    } else {
        r->errs[j] = hbs_lmots_sign_coefficients(r->ots_o, r->ots_y, r->ots_I, r->ots_q,
                                                 r->ots_seed, r->ots_a);
    }
}

/* The leaf computations of level i's step from G to G+1. */
static void collect_level(hbs_hss_key *k, unsigned i, uint64_t G, step_run *r)
{
    hss_level *lv = &k->lv[i];
    const hbs_lms_layout *L = &lv->L;
    const uint32_t qo = level_q(k, i, G), qn = level_q(k, i, G + 1);

    if (qo == qn)
        return;
    if (i > 0 && level_inst(k, i, G) + 1 < level_insts(k, i)) {
        step_job *b = &r->jobs[r->njobs++];
        b->v = view_of(lv, lv->nI, lv->nseed);
        b->v.top = lv->ntop;
        memcpy(b->v.sbuf, lv->ncur, sizeof lv->ncur);
        b->top = L->h;
        b->base = 0;
        b->done = qo;
        b->left = lv->nleft;
    }
    if (qn == 0)
        return; /* the tree is used up; its stripes need nothing more */
    for (unsigned s = 0; s < L->nstripes; s++) {
        const unsigned top = L->s[s].lo + L->s[s].hgt;
        const uint32_t c = qo >> top;
        step_job *b;
        if (c + 1 >= hbs_lms_stripe_count(L, s))
            continue;
        b = &r->jobs[r->njobs++];
        b->v = view_of(lv, lv->I, lv->seed);
        b->v.sbuf[s] = lv->next[s];
        b->v.ssub[s] = c + 1;
        b->top = top;
        b->base = (c + 1) << top;
        b->done = qo & ((1u << top) - 1);
        b->left = lv->left[s];
    }
}

/* Level i's bookkeeping once its leaves are in. */
static int finish_level(hbs_hss_key *k, unsigned i, uint64_t G)
{
    hss_level *lv = &k->lv[i];
    const hbs_lms_layout *L = &lv->L;
    const size_t n = L->n;
    const uint32_t qo = level_q(k, i, G), qn = level_q(k, i, G + 1);

    if (qo == qn)
        return HBS_OK;
    if (qn == 0) {
        /* this level's tree ran out: the next one, complete now, takes over */
        memcpy(lv->top, lv->ntop, hbs_lms_top_nodes(L) * n);
        memset(lv->ntop, 0, hbs_lms_top_nodes(L) * n);
        for (unsigned s = 0; s < L->nstripes; s++) {
            memcpy(lv->cur[s], lv->ncur[s], hbs_lms_stripe_nodes(L, s) * n);
            memset(lv->ncur[s], 0, hbs_lms_stripe_nodes(L, s) * n);
            memset(lv->next[s], 0, hbs_lms_stripe_nodes(L, s) * n);
            memset(lv->left[s], 0, (L->s[s].lo + L->s[s].hgt) * n);
        }
        memset(lv->nleft, 0, (size_t)L->h * n);
        memcpy(lv->I, lv->nI, 16);
        memcpy(lv->seed, lv->nseed, sizeof lv->seed);
        memset(lv->nI, 0, sizeof lv->nI);
        memset(lv->nseed, 0, sizeof lv->nseed);
        if (level_inst(k, i, G + 1) + 1 < level_insts(k, i))
            derive_child(k, i, level_inst(k, i, G + 1) + 1, lv->nI, lv->nseed);
        return sign_child(k, i, G + 1);
    }
    for (unsigned s = 0; s < L->nstripes; s++) {
        const unsigned top = L->s[s].lo + L->s[s].hgt;
        const uint32_t c = qo >> top, mask = (1u << top) - 1;
        if (c + 1 >= hbs_lms_stripe_count(L, s))
            continue;
        if ((qn & mask) == 0) {
            memcpy(lv->cur[s], lv->next[s], hbs_lms_stripe_nodes(L, s) * n);
            memset(lv->next[s], 0, hbs_lms_stripe_nodes(L, s) * n);
        }
    }
    return HBS_OK;
}

/* The step from index to index + 1: its leaf computations (the builders') into r. */
static void plan_step(hbs_hss_key *k, step_run *r)
{
    r->njobs = 0;
    if (k->index + 1 < k->total)
        for (unsigned i = 0; i < k->params.levels; i++)
            collect_level(k, i, k->index, r);
}

/* index -> index + 1, with r's one-time signature (if any) computed alongside, and the
 * builders' leaves computed here or taken from r->leaves. The one-time signature's inputs
 * must not live in the key: the step rewrites it. */
static int advance_with(hbs_hss_key *k, step_run *r)
{
    const uint64_t G = k->index;
    const unsigned levels = k->params.levels;
    int err = HBS_OK;
    size_t tasks;

    plan_step(k, r);
    tasks = r->njobs + (r->ots_o != NULL);
    if (tasks > 1 && !r->leaves)
        hbs_parallel_for(tasks, step_task, r);
    else
        for (size_t j = 0; j < tasks; j++)
            step_task(r, j);
    for (size_t j = 0; j < tasks; j++)
        if (r->errs[j] && !err)
            err = r->errs[j];
    if (G + 1 < k->total)
        for (unsigned i = 0; i < levels && !err; i++)
            err = finish_level(k, i, G);
    k->index = G + 1;
    if (err)
        k->stale = 1;
    return err;
}

static int advance(hbs_hss_key *k)
{
    step_run r;
    r.ots_o = NULL;
    r.leaves = NULL;
    return advance_with(k, &r);
}

/* ---- the public operations ---- */

static hbs_hss_key *key_new(const hbs_hss_params *params)
{
    hbs_hss_key *k = calloc(1, sizeof *k);
    if (!k)
        return NULL;
    k->params = *params;
    if (!k->params.cache_height)
        k->params.cache_height = HBS_HSS_CACHE_DEFAULT;
    for (unsigned i = params->levels; i < HBS_HSS_MAX_LEVELS; i++) {
        k->params.lms[i] = NULL;
        k->params.ots[i] = NULL;
    }
    return k;
}

void hbs_hss_key_free(hbs_hss_key *key)
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

int hbs_hss_key_public(const hbs_hss_key *key, uint8_t *pk, size_t pkcap, size_t *pklen)
{
    size_t need;
    if (pklen)
        *pklen = 0;
    if (!key || !pk)
        return HBS_ERR_INVALID_ARGUMENT;
    need = 4 + hbs_lms_pk_bytes(key->params.lms[0]);
    if (pkcap < need) {
        memset(pk, 0, pkcap);
        return HBS_ERR_BUFFER_TOO_SMALL;
    }
    hbs_lms_put32(pk, key->params.levels);
    level_pub(key, 0, pk + 4);
    if (pklen)
        *pklen = need;
    return HBS_OK;
}

int hbs_hss_keygen(hbs_hss_key **key, uint8_t *pk, size_t pkcap, size_t *pklen,
                   const hbs_hss_params *params, const uint8_t *seed, size_t seedlen,
                   hbs_progress_fn progress, void *progress_user)
{
    return hbs_hss_keygen_engine(key, pk, pkcap, pklen, params, seed, seedlen, progress,
                                 progress_user, NULL);
}

int hbs_hss_keygen_engine(hbs_hss_key **key, uint8_t *pk, size_t pkcap, size_t *pklen,
                          const hbs_hss_params *params, const uint8_t *seed, size_t seedlen,
                          hbs_progress_fn progress, void *progress_user,
                          const hbs_leaf_engine *engine)
{
    hbs_hss_key *k;
    hbs_lms_progress pr;
    size_t n0;
    int err;

    if (key)
        *key = NULL;
    if (pklen)
        *pklen = 0;
    if (!key || !pk)
        return HBS_ERR_INVALID_ARGUMENT;
    memset(pk, 0, pkcap);
    if ((err = hbs_hss_params_check(params)) != HBS_OK)
        return err;
    if (total_height(params) > HBS_HSS_MAX_TOTAL_HEIGHT)
        return HBS_ERR_UNSUPPORTED;
    n0 = params->lms[0]->m;
    if (pkcap < 28 + n0)
        return HBS_ERR_BUFFER_TOO_SMALL;
    if (seed && seedlen != 16 + n0)
        return HBS_ERR_INVALID_ARGUMENT;
    k = key_new(params);
    if (!k)
        return HBS_ERR_NO_MEMORY;
    if (seed) {
        memcpy(k->I0, seed, 16);
        memcpy(k->seed0, seed + 16, n0);
    } else if ((err = hbs_randombytes(k->I0, 16)) != HBS_OK ||
               (err = hbs_randombytes(k->seed0, n0)) != HBS_OK) {
        hbs_hss_key_free(k);
        return err;
    }
    key_layout(k);
    if ((err = key_alloc(k)) != HBS_OK) {
        hbs_hss_key_free(k);
        return err;
    }
    k->end = k->total;
    memset(&pr, 0, sizeof pr);
    pr.fn = progress;
    pr.user = progress_user;
    for (unsigned i = 0; i < params->levels; i++)
        pr.total += (uint64_t)1 << params->lms[i]->h;
    atomic_init(&pr.done, 0);
    atomic_init(&pr.cancelled, 0);
    pthread_mutex_init(&pr.lock, NULL);
    k->engine = engine;
    err = rebuild(k, 0, 1, &pr);
    k->engine = NULL;
    pthread_mutex_destroy(&pr.lock);
    if (err) {
        hbs_hss_key_free(k);
        return err;
    }
    if ((err = hbs_hss_key_public(k, pk, pkcap, pklen)) != HBS_OK) {
        hbs_hss_key_free(k);
        return err;
    }
    *key = k;
    return HBS_OK;
}

const hbs_hss_params *hbs_hss_key_params(const hbs_hss_key *key)
{
    return key ? &key->params : NULL;
}

uint64_t hbs_hss_key_index(const hbs_hss_key *key) { return key ? key->index : 0; }
uint64_t hbs_hss_key_end(const hbs_hss_key *key) { return key ? key->end : 0; }
uint64_t hbs_hss_key_total(const hbs_hss_key *key) { return key ? key->total : 0; }

size_t hbs_hss_sig_bytes(const hbs_hss_key *key)
{
    return key ? hbs_hss_params_sig_bytes(&key->params) : 0;
}

int hbs_hss_key_set_end(hbs_hss_key *key, uint64_t end)
{
    if (!key || end < key->index || end > key->end)
        return HBS_ERR_INVALID_ARGUMENT;
    key->end = end;
    return HBS_OK;
}

/* Leaves a rebuild for index G would compute, roughly (for choosing step or rebuild). */
static uint64_t rebuild_cost(const hbs_hss_key *k, uint64_t G)
{
    uint64_t cost = 0;
    for (unsigned i = 0; i < k->params.levels; i++) {
        const hss_level *lv = &k->lv[i];
        const uint32_t q = level_q(k, i, G), qf = level_q(k, i, k->index);
        if (level_inst(k, i, G) != level_inst(k, i, k->index))
            cost += (uint64_t)1 << lv->L.h;
        for (unsigned s = 0; s < lv->L.nstripes; s++) {
            const unsigned top = lv->L.s[s].lo + lv->L.s[s].hgt;
            if ((q >> top) != (qf >> top))
                cost += (uint64_t)1 << top;
            cost += q & ((1u << top) - 1);
        }
        if (i > 0)
            cost += q;
    }
    return cost;
}

/* Leaves one step computes, at most. */
static uint64_t step_cost(const hbs_hss_key *k)
{
    uint64_t cost = 0;
    for (unsigned i = 0; i < k->params.levels; i++)
        cost += k->lv[i].L.nstripes + (i > 0);
    return cost ? cost : 1;
}

int hbs_hss_key_skip_to(hbs_hss_key *key, uint64_t index)
{
    return hbs_hss_key_skip_to_engine(key, index, NULL);
}

int hbs_hss_key_skip_to_engine(hbs_hss_key *key, uint64_t index, const hbs_leaf_engine *engine)
{
    uint64_t step_leaves;
    int err = HBS_OK;
    if (!key || index < key->index || index > key->end)
        return HBS_ERR_INVALID_ARGUMENT;
    if (index == key->index && !key->stale)
        return HBS_OK;
    if (index >= key->total) {
        key->index = index;
        return HBS_OK;
    }
    /* the state at an index is a function of the index alone: stepping and rebuilding end
     * in the same bytes, so an engine (leaves some hundreds of times faster than a CPU thread)
     * simply makes rebuilding the cheaper way sooner */
    step_leaves = (index - key->index) * step_cost(key);
    if (!key->stale &&
        (engine ? step_leaves < engine->min_leaves ||
                      step_leaves * ENGINE_SPEEDUP < rebuild_cost(key, index)
                : step_leaves <= rebuild_cost(key, index) / hbs_get_threads())) {
        while (key->index < index && !err)
            err = advance(key);
        return err;
    }
    key->engine = engine;
    err = rebuild(key, index, key->stale, NULL);
    key->engine = NULL;
    key->index = index;
    key->stale = err != HBS_OK;
    return err;
}

int hbs_hss_sign_begin(hbs_hss_key *key, uint8_t *sig, size_t sigcap, const uint8_t *msg,
                       size_t msglen, hbs_hss_step *st)
{
    size_t need, off = 4;
    int err;
    if (!key || !sig || !st || (!msg && msglen))
        return HBS_ERR_INVALID_ARGUMENT;
    need = hbs_hss_sig_bytes(key);
    if (sigcap < need) {
        memset(sig, 0, sigcap);
        return HBS_ERR_BUFFER_TOO_SMALL;
    }
    if (key->index >= key->end) {
        memset(sig, 0, sigcap);
        return HBS_ERR_KEY_EXHAUSTED;
    }
    if (key->stale) {
        if ((err = rebuild(key, key->index, 1, NULL)) != HBS_OK) {
            memset(sig, 0, sigcap);
            return err;
        }
        key->stale = 0;
    }
    hbs_lms_put32(sig, key->params.levels - 1);
    for (unsigned i = 1; i < key->params.levels; i++) {
        memcpy(sig + off, key->lv[i].psig, key->lv[i].psiglen);
        off += key->lv[i].psiglen;
        level_pub(key, i, sig + off);
        off += 24 + key->lv[i].L.n;
    }
    {
        /* the bottom level's authentication path is read now, before the step */
        const unsigned b = key->params.levels - 1;
        const hss_level *lv = &key->lv[b];
        const hbs_lmots_type *o = lv->L.ots;
        const uint32_t q = level_q(key, b, key->index);
        const size_t ots_len = hbs_lmots_sig_bytes(o);
        uint8_t *C = sig + off + 8;
        step_run r;
        hbs_lms_put32(sig + off, q);
        hbs_lms_put32(sig + off + 4, o->code);
        hbs_lmots_randomizer(o, C, lv->I, q, lv->seed);
        hbs_lmots_coefficients(o, st->coefs, lv->I, q, C, msg, msglen);
        hbs_lms_put32(sig + off + 4 + ots_len, lv->L.lms->code);
        hbs_lms_auth_path(&lv->L, lv->top, lv->cur, q, sig + off + 8 + ots_len);
        st->ots.lms = lv->L.lms;
        st->ots.ots = o;
        st->ots.I = lv->I;
        st->ots.seed = lv->seed;
        st->ots.q = q;
        st->ots_at = (uint32_t)(off + 8 + o->n);
        plan_step(key, &r);
        st->count = (uint32_t)r.njobs;
        for (size_t j = 0; j < r.njobs; j++) {
            const step_job *sj = &r.jobs[j];
            st->leaf[j].lms = sj->v.L->lms;
            st->leaf[j].ots = sj->v.L->ots;
            st->leaf[j].I = sj->v.I;
            st->leaf[j].seed = sj->v.seed;
            st->leaf[j].q = sj->base + sj->done;
        }
    }
    st->index = key->index;
    return HBS_OK;
}

int hbs_hss_sign_finish(hbs_hss_key *key, hbs_hss_step *st, const uint8_t *leaves,
                        const uint8_t *y, uint8_t *sig, size_t sigcap)
{
    uint8_t I[16], seed[HBS_LMS_MAX_N];
    step_run r;
    int err;
    if (!key || !st || !sig || sigcap < hbs_hss_sig_bytes(key) || st->index != key->index ||
        key->stale || (leaves && !y)) {
        if (sig)
            memset(sig, 0, sigcap);
        return HBS_ERR_INVALID_ARGUMENT;
    }
    r.leaves = leaves;
    r.ots_o = NULL;
    if (leaves) {
        memcpy(sig + st->ots_at, y, st->ots.ots->p * (size_t)st->ots.ots->n);
    } else {
        /* the one-time signature runs beside the step, from copies of I and SEED the step
         * may replace */
        memcpy(I, st->ots.I, 16);
        memcpy(seed, st->ots.seed, sizeof seed);
        r.ots_o = st->ots.ots;
        r.ots_y = sig + st->ots_at;
        r.ots_I = I;
        r.ots_seed = seed;
        r.ots_a = st->coefs;
        r.ots_q = st->ots.q;
    }
    err = advance_with(key, &r);
    hbs_memzero(seed, sizeof seed);
    hbs_memzero(st, sizeof *st);
    if (err) {
        /* the index is used up either way; a signature whose state cannot advance is not
         * released */
        memset(sig, 0, sigcap);
        return err;
    }
    return HBS_OK;
}

int hbs_hss_sign(hbs_hss_key *key, uint8_t *sig, size_t sigcap, size_t *siglen,
                 const uint8_t *msg, size_t msglen)
{
    hbs_hss_step st;
    int err;
    if (siglen)
        *siglen = 0;
    err = hbs_hss_sign_begin(key, sig, sigcap, msg, msglen, &st);
    if (err == HBS_OK)
        err = hbs_hss_sign_finish(key, &st, NULL, NULL, sig, sigcap);
    if (err == HBS_OK && siglen)
        *siglen = hbs_hss_sig_bytes(key);
    return err;
}

/* ---- export and import ----
 * "HSSK" || u8 version || u8 L || u8 cache_height || u8 0 || L * (u32 lms || u32 ots) ||
 * I0 (16) || SEED0 (n0) || u64 index || u64 end || cache block || SHA-256 of all before. */

static size_t header_bytes(const hbs_hss_params *p)
{
    return 8 + 8 * (size_t)p->levels + 16 + p->lms[0]->m + 16;
}

int hbs_hss_key_export(const hbs_hss_key *key, uint8_t *out, size_t outcap, size_t *outlen)
{
    size_t need, off;
    if (outlen)
        *outlen = 0;
    if (!key || !outlen)
        return HBS_ERR_INVALID_ARGUMENT;
    if (key->stale)
        return HBS_ERR_STATE;
    need = header_bytes(&key->params) + key->memlen + 32;
    *outlen = need;
    if (!out || outcap < need) {
        if (out)
            memset(out, 0, outcap);
        return out ? HBS_ERR_BUFFER_TOO_SMALL : HBS_OK;
    }
    memcpy(out, MAGIC, 4);
    out[4] = VERSION;
    out[5] = (uint8_t)key->params.levels;
    out[6] = (uint8_t)key->params.cache_height;
    out[7] = 0;
    off = 8;
    for (unsigned i = 0; i < key->params.levels; i++) {
        hbs_lms_put32(out + off, key->params.lms[i]->code);
        hbs_lms_put32(out + off + 4, key->params.ots[i]->code);
        off += 8;
    }
    memcpy(out + off, key->I0, 16);
    off += 16;
    memcpy(out + off, key->seed0, key->params.lms[0]->m);
    off += key->params.lms[0]->m;
    put64(out + off, key->index);
    put64(out + off + 8, key->end);
    off += 16;
    memcpy(out + off, key->mem, key->memlen);
    off += key->memlen;
    hbs_sha256(out + off, out, off);
    return HBS_OK;
}

int hbs_hss_key_import(hbs_hss_key **key, const uint8_t *in, size_t inlen)
{
    hbs_hss_params p;
    hbs_hss_key *k;
    uint8_t sum[32];
    size_t off;

    if (key)
        *key = NULL;
    if (!key || (!in && inlen))
        return HBS_ERR_INVALID_ARGUMENT;
    if (inlen < 8 || memcmp(in, MAGIC, 4) != 0 || in[4] != VERSION || in[7] != 0)
        return HBS_ERR_MALFORMED_KEY;
    memset(&p, 0, sizeof p);
    p.levels = in[5];
    p.cache_height = in[6];
    if (p.levels < 1 || p.levels > HBS_HSS_MAX_LEVELS || p.cache_height == 0 ||
        inlen < 8 + 8 * (size_t)p.levels)
        return HBS_ERR_MALFORMED_KEY;
    off = 8;
    for (unsigned i = 0; i < p.levels; i++, off += 8) {
        p.lms[i] = hbs_lms_type_by_code(hbs_lms_get32(in + off));
        p.ots[i] = hbs_lmots_type_by_code(hbs_lms_get32(in + off + 4));
    }
    if (hbs_hss_params_check(&p) != HBS_OK || total_height(&p) > HBS_HSS_MAX_TOTAL_HEIGHT ||
        inlen < header_bytes(&p))
        return HBS_ERR_MALFORMED_KEY;
    k = key_new(&p);
    if (!k)
        return HBS_ERR_NO_MEMORY;
    /* the length is checked before the (possibly large) block is allocated */
    key_layout(k);
    if (inlen != header_bytes(&p) + k->memlen + 32) {
        hbs_hss_key_free(k);
        return HBS_ERR_MALFORMED_KEY;
    }
    if (key_alloc(k) != HBS_OK) {
        hbs_hss_key_free(k);
        return HBS_ERR_NO_MEMORY;
    }
    memcpy(k->I0, in + off, 16);
    off += 16;
    memcpy(k->seed0, in + off, p.lms[0]->m);
    off += p.lms[0]->m;
    k->index = get64(in + off);
    k->end = get64(in + off + 8);
    off += 16;
    if (inlen != off + k->memlen + 32 || k->end > k->total || k->index > k->end) {
        hbs_hss_key_free(k);
        return HBS_ERR_MALFORMED_KEY;
    }
    hbs_sha256(sum, in, off + k->memlen);
    if (memcmp(sum, in + off + k->memlen, 32) != 0) {
        hbs_hss_key_free(k);
        return HBS_ERR_MALFORMED_KEY;
    }
    memcpy(k->mem, in + off, k->memlen);
    /* the secrets of the current and next trees follow from the index */
    for (unsigned i = 0; i < p.levels; i++) {
        const uint64_t G = k->index < k->total ? k->index : k->total - 1;
        const uint64_t inst = level_inst(k, i, G);
        tree_secrets(k, i, inst, k->lv[i].I, k->lv[i].seed);
        if (i > 0 && inst + 1 < level_insts(k, i))
            derive_child(k, i, inst + 1, k->lv[i].nI, k->lv[i].nseed);
    }
    *key = k;
    return HBS_OK;
}
