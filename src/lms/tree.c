/* LMS trees: layout of the cached nodes, parallel and incremental builders, signing at a
 * leaf, and LMS verification. */
#include "lms/tree.h"

#include <stdlib.h>
#include <string.h>

#include "common/ct.h"
#include "common/pool.h"
#include "hbs/hbs.h"
#include "lms/lmots.h"

void hbs_lms_layout_init(hbs_lms_layout *L, const hbs_lms_type *t, const hbs_lmots_type *o,
                         unsigned cache_height)
{
    unsigned c = cache_height ? cache_height : HBS_HSS_CACHE_DEFAULT;
    unsigned b = c / 2 < 2 ? 2 : c / 2, R;
    memset(L, 0, sizeof *L);
    L->lms = t;
    L->ots = o;
    L->h = t->h;
    L->n = t->m;
    L->T = t->h < c ? t->h : c;
    R = L->h - L->T;
    for (unsigned lo = 0; lo < R && L->nstripes < HBS_LMS_MAX_STRIPES; lo += b) {
        L->s[L->nstripes].lo = lo;
        L->s[L->nstripes].hgt = R - lo < b ? R - lo : b;
        L->nstripes++;
    }
}

size_t hbs_lms_top_nodes(const hbs_lms_layout *L) { return ((size_t)2 << L->T) - 1; }

size_t hbs_lms_stripe_nodes(const hbs_lms_layout *L, unsigned s)
{
    return ((size_t)2 << L->s[s].hgt) - 2;
}

uint32_t hbs_lms_stripe_count(const hbs_lms_layout *L, unsigned s)
{
    return (uint32_t)1 << (L->h - L->s[s].lo - L->s[s].hgt);
}

/* Offset (in nodes) of height z in the top buffer, and in a stripe buffer. */
static size_t top_off(const hbs_lms_layout *L, unsigned z)
{
    return ((size_t)2 << L->T) - ((size_t)2 << (L->h - z));
}

static size_t stripe_off(const hbs_lms_stripe *s, unsigned z)
{
    return ((size_t)2 << s->hgt) - ((size_t)2 << (s->lo + s->hgt - z));
}

/* The stripe holding height z (z below the top levels). */
static unsigned stripe_of(const hbs_lms_layout *L, unsigned z)
{
    unsigned s = 0;
    while (s + 1 < L->nstripes && z >= L->s[s + 1].lo)
        s++;
    return s;
}

static void capture(const hbs_lms_view *v, unsigned z, uint32_t k, const uint8_t *node)
{
    const hbs_lms_layout *L = v->L;
    const size_t n = L->n;
    if (z >= L->h - L->T) {
        if (v->top)
            memcpy(v->top + (top_off(L, z) + k) * n, node, n);
        return;
    }
    unsigned s = stripe_of(L, z);
    const hbs_lms_stripe *st = &L->s[s];
    unsigned span = st->lo + st->hgt - z; /* log2 of nodes per subtree at height z */
    if (v->sbuf[s] && (k >> span) == v->ssub[s])
        memcpy(v->sbuf[s] + (stripe_off(st, z) + (k & ((1u << span) - 1))) * n, node, n);
}

/* RFC 8554 node number of (z, k). */
static uint32_t node_r(const hbs_lms_layout *L, unsigned z, uint32_t k)
{
    return ((uint32_t)1 << (L->h - z)) + k;
}

/* Reduces count nodes at height z (first index k0) level by level up to height z + levels,
 * capturing each new node; buf holds the nodes and is clobbered, tmp has room for half. */
static void reduce(const hbs_lms_view *v, uint8_t *buf, uint8_t *tmp, unsigned z, uint32_t k0,
                   unsigned levels)
{
    const size_t n = v->L->n;
    size_t count = (size_t)1 << levels;
    for (unsigned l = 0; l < levels; l++) {
        count >>= 1;
        k0 >>= 1;
        z++;
        hbs_lms_nodes(v->L->lms, v->I, tmp, buf, node_r(v->L, z, k0), count);
        for (size_t i = 0; i < count; i++)
            capture(v, z, k0 + (uint32_t)i, tmp + i * n);
        memcpy(buf, tmp, count * n);
    }
}

/* ---- parallel subtree builder ---- */

#define CHUNK_MAX_LOG 6

typedef struct {
    const hbs_lms_view *v;
    unsigned c;      /* log2 of leaves per chunk */
    uint32_t first;  /* first leaf of the subtree */
    uint8_t *roots;  /* chunk roots */
    const uint8_t *leaves; /* from the engine: the leaves of chunks chunk0 .. (or NULL) */
    size_t chunk0;
    hbs_lms_progress *pr;
    atomic_int err;
} build_run;

static void progress_add(hbs_lms_progress *pr, uint64_t leaves)
{
    uint64_t done;
    if (!pr)
        return;
    done = atomic_fetch_add(&pr->done, leaves) + leaves;
    if (!pr->fn)
        return;
    pthread_mutex_lock(&pr->lock);
    if (!atomic_load(&pr->cancelled) && pr->fn(pr->user, done, pr->total))
        atomic_store(&pr->cancelled, 1);
    pthread_mutex_unlock(&pr->lock);
}

static void chunk_task(void *arg, size_t i)
{
    build_run *r = arg;
    const hbs_lms_view *v = r->v;
    const size_t n = v->L->n, per = (size_t)1 << r->c;
    const uint32_t first = r->first + (uint32_t)(i * per);
    uint8_t buf[((size_t)1 << CHUNK_MAX_LOG) * HBS_LMS_MAX_N];
    uint8_t tmp[((size_t)1 << (CHUNK_MAX_LOG - 1)) * HBS_LMS_MAX_N + HBS_LMS_MAX_N];
    int err;

    if (atomic_load(&r->err) || (r->pr && atomic_load(&r->pr->cancelled)))
        return;
    if (r->leaves) {
        memcpy(buf, r->leaves + (i - r->chunk0) * per * n, per * n);
        err = HBS_OK;
    } else {
        err = hbs_lms_leaves(v->L->lms, v->L->ots, v->I, v->seed, first, per, buf);
    }
    if (err) {
        atomic_store(&r->err, err);
        return;
    }
    for (size_t j = 0; j < per; j++)
        capture(v, 0, first + (uint32_t)j, buf + j * n);
    reduce(v, buf, tmp, 0, first, r->c);
    memcpy(r->roots + i * n, buf, n);
    progress_add(r->pr, per);
}

static void slice_task(void *arg, size_t i)
{
    build_run *r = arg;
    chunk_task(r, r->chunk0 + i);
}

/* The chunks of a subtree with their leaves from the engine, a slice at a time: the
 * engine computes a slice's leaves, the pool captures and reduces its chunks. */
static void engine_chunks(build_run *r, size_t chunks)
{
    const hbs_lms_view *v = r->v;
    const hbs_leaf_engine *e = v->engine;
    const size_t n = v->L->n, per = (size_t)1 << r->c;
    size_t slice = e->slice_leaves / per;
    hbs_lms_leaf_job job;
    uint8_t *buf;

    if (slice == 0)
        slice = 1;
    if (slice > chunks)
        slice = chunks;
    buf = malloc(slice * per * n);
    if (!buf) {
        atomic_store(&r->err, HBS_ERR_NO_MEMORY);
        return;
    }
    job.hash = v->L->ots->hash;
    job.n = v->L->ots->n;
    job.w = v->L->ots->w;
    job.p = v->L->ots->p;
    job.h = v->L->h;
    job.I = v->I;
    job.seed = v->seed;
    r->leaves = buf;
    for (size_t c0 = 0; c0 < chunks; c0 += slice) {
        size_t m = chunks - c0 < slice ? chunks - c0 : slice;
        int err;
        if (atomic_load(&r->err) || (r->pr && atomic_load(&r->pr->cancelled)))
            break;
        err = e->lms_leaves(e->user, &job, r->first + (uint32_t)(c0 * per), m * per, buf);
        if (err) {
            atomic_store(&r->err, err);
            break;
        }
        r->chunk0 = c0;
        hbs_parallel_for(m, slice_task, r);
    }
    hbs_memzero(buf, slice * per * n);
    free(buf);
    r->leaves = NULL;
}

int hbs_lms_build_subtree(const hbs_lms_view *v, unsigned z, uint32_t k, uint8_t *root,
                          hbs_lms_progress *pr)
{
    const size_t n = v->L->n;
    build_run r;
    size_t chunks;
    uint8_t *mem;
    int err;

    r.v = v;
    r.c = z <= 3 ? z : (z - 3 < 3 ? 3 : (z - 3 > CHUNK_MAX_LOG ? CHUNK_MAX_LOG : z - 3));
    r.first = k << z;
    r.pr = pr;
    atomic_init(&r.err, 0);
    chunks = (size_t)1 << (z - r.c);
    mem = malloc(chunks * n + (chunks / 2 + 1) * n);
    if (!mem)
        return HBS_ERR_NO_MEMORY;
    r.roots = mem;
    r.leaves = NULL;
    r.chunk0 = 0;
    if (v->engine && ((size_t)1 << z) >= v->engine->min_leaves)
        engine_chunks(&r, chunks);
    else
        hbs_parallel_for(chunks, chunk_task, &r);
    err = atomic_load(&r.err);
    if (!err && pr && atomic_load(&pr->cancelled))
        err = HBS_ERR_CANCELLED;
    if (!err) {
        reduce(v, r.roots, mem + chunks * n, r.c, (k << z) >> r.c, z - r.c);
        memcpy(root, r.roots, n);
    }
    free(mem);
    return err;
}

int hbs_lms_build_range(const hbs_lms_view *v, unsigned top, uint32_t base, uint32_t r,
                        uint8_t *left)
{
    const size_t n = v->L->n;
    uint32_t off = 0;
    memset(left, 0, (size_t)top * n);
    for (unsigned z = top; z-- > 0;) {
        if (!((r >> z) & 1))
            continue;
        int err = hbs_lms_build_subtree(v, z, (base + off) >> z, left + (size_t)z * n, NULL);
        if (err)
            return err;
        off += (uint32_t)1 << z;
    }
    return HBS_OK;
}

int hbs_lms_builder_step(const hbs_lms_view *v, unsigned top, uint32_t base, uint32_t done,
                         uint8_t *left)
{
    uint8_t leaf[HBS_LMS_MAX_N];
    int err = hbs_lms_leaves(v->L->lms, v->L->ots, v->I, v->seed, base + done, 1, leaf);
    if (err)
        return err;
    hbs_lms_builder_put(v, top, base, done, left, leaf);
    return HBS_OK;
}

void hbs_lms_builder_put(const hbs_lms_view *v, unsigned top, uint32_t base, uint32_t done,
                         uint8_t *left, const uint8_t *leaf)
{
    const size_t n = v->L->n;
    uint8_t node[HBS_LMS_MAX_N], pair[2 * HBS_LMS_MAX_N];
    uint32_t k = base + done;
    unsigned z = 0;
    memcpy(node, leaf, n);
    capture(v, 0, k, node);
    while (z < top && (k & 1)) {
        memcpy(pair, left + (size_t)z * n, n);
        memcpy(pair + n, node, n);
        memset(left + (size_t)z * n, 0, n);
        z++;
        k >>= 1;
        hbs_lms_nodes(v->L->lms, v->I, node, pair, node_r(v->L, z, k), 1);
        capture(v, z, k, node);
    }
    if (z < top)
        memcpy(left + (size_t)z * n, node, n);
}

void hbs_lms_auth_path(const hbs_lms_layout *L, const uint8_t *top, uint8_t *const cur[],
                       uint32_t q, uint8_t *path)
{
    const size_t n = L->n;
    for (unsigned z = 0; z < L->h; z++) {
        uint32_t k = (q >> z) ^ 1;
        const uint8_t *src;
        if (z >= L->h - L->T) {
            src = top + (top_off(L, z) + k) * n;
        } else {
            const hbs_lms_stripe *st = &L->s[stripe_of(L, z)];
            unsigned span = st->lo + st->hgt - z;
            src = cur[stripe_of(L, z)] + (stripe_off(st, z) + (k & ((1u << span) - 1))) * n;
        }
        memcpy(path + (size_t)z * n, src, n);
    }
}

int hbs_lms_sign_at(const hbs_lms_layout *L, const uint8_t *top, uint8_t *const cur[],
                    const uint8_t I[16], const uint8_t *seed, uint32_t q, uint8_t *sig,
                    const uint8_t *msg, size_t msglen)
{
    uint8_t C[HBS_LMS_MAX_N];
    size_t ots_len = hbs_lmots_sig_bytes(L->ots);
    int err;
    hbs_lms_put32(sig, q);
    hbs_lmots_randomizer(L->ots, C, I, q, seed);
    err = hbs_lmots_sign(L->ots, sig + 4, I, q, seed, C, msg, msglen);
    if (err)
        return err;
    hbs_lms_put32(sig + 4 + ots_len, L->lms->code);
    hbs_lms_auth_path(L, top, cur, q, sig + 8 + ots_len);
    return HBS_OK;
}

int hbs_lms_public_key(const hbs_lms_type *t, const hbs_lmots_type *o, const uint8_t I[16],
                       const uint8_t *seed, uint8_t *pk)
{
    hbs_lms_layout L;
    hbs_lms_view v;
    if (!hbs_lms_types_match(t, o))
        return HBS_ERR_UNKNOWN_ALGORITHM;
    hbs_lms_layout_init(&L, t, o, HBS_HSS_CACHE_MIN);
    memset(&v, 0, sizeof v);
    v.L = &L;
    v.I = I;
    v.seed = seed;
    hbs_lms_put32(pk, t->code);
    hbs_lms_put32(pk + 4, o->code);
    memcpy(pk + 8, I, 16);
    return hbs_lms_build_subtree(&v, t->h, 0, pk + 24, NULL);
}

/* ---- verification ---- */

size_t hbs_lms_verify_parse(hbs_lms_parsed *v, const uint8_t *pk, size_t pklen,
                            const uint8_t *sig, size_t siglen)
{
    const hbs_lms_type *t;
    const hbs_lmots_type *o;
    size_t ots_len, need;

    if (pklen < 8 || siglen < 8)
        return 0;
    t = hbs_lms_type_by_code(hbs_lms_get32(pk));
    o = hbs_lmots_type_by_code(hbs_lms_get32(pk + 4));
    if (!hbs_lms_types_match(t, o) || pklen != hbs_lms_pk_bytes(t))
        return 0;
    /* The signature's own type fields must name exactly the key's types. */
    if (hbs_lms_get32(sig + 4) != o->code)
        return 0;
    ots_len = hbs_lmots_sig_bytes(o);
    need = 8 + ots_len + (size_t)t->h * t->m;
    if (siglen < need || hbs_lms_get32(sig + 4 + ots_len) != t->code)
        return 0;
    v->q = hbs_lms_get32(sig);
    if (v->q >> t->h)
        return 0;
    v->t = t;
    v->o = o;
    v->pk = pk;
    v->sig = sig;
    return need;
}

int hbs_lms_verify_batch(const hbs_lms_parsed *v, const uint8_t *const msg[],
                         const size_t msglen[], size_t count)
{
    hbs_lmots_verify_job jobs[HBS_LMOTS_VERIFY_BATCH];
    int ok = 1;
    if (count > HBS_LMOTS_VERIFY_BATCH)
        return 0;
    for (size_t k = 0; k < count; k++)
        hbs_lmots_verify_begin(&jobs[k], v[k].o, v[k].pk + 8, v[k].q, v[k].sig + 8, msg[k],
                               msglen[k]);
    hbs_lmots_verify_end(jobs, count);
    for (size_t k = 0; k < count; k++) {
        const hbs_lms_type *t = v[k].t;
        const size_t n = t->m;
        const uint8_t *I = v[k].pk + 8, *path = v[k].sig + 8 + hbs_lmots_sig_bytes(v[k].o);
        uint8_t node[HBS_LMS_MAX_N], pair[2 * HBS_LMS_MAX_N], lm[22 + HBS_LMS_MAX_N];
        uint32_t r = ((uint32_t)1 << t->h) + v[k].q;
        memcpy(lm, I, 16);
        hbs_lms_put32(lm + 16, r);
        hbs_lms_put16(lm + 20, HBS_LMS_D_LEAF);
        memcpy(lm + 22, jobs[k].Kc, n);
        hbs_lms_hash_many(t->hash, n, node, lm, 22 + n, 1);
        for (unsigned z = 0; z < t->h; z++, r >>= 1) {
            if (r & 1) {
                memcpy(pair, path + (size_t)z * n, n);
                memcpy(pair + n, node, n);
            } else {
                memcpy(pair, node, n);
                memcpy(pair + n, path + (size_t)z * n, n);
            }
            hbs_lms_nodes(t, I, node, pair, r >> 1, 1);
        }
        ok &= hbs_ct_memneq(node, v[k].pk + 24, n) == 0;
    }
    return ok;
}
