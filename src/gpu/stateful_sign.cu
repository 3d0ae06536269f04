/* Batch signing under one stateful key on the GPU (hbs_gpu_stateful_sign_many).
 *
 * Order of events: the key's private state at the batch's first index is copied out; a
 * thread sets the batch's indices aside in the key file (state/stateful_batch.h: written,
 * fsynced, renamed) while the signatures are made from the copy; then the key in memory
 * moves past the batch. Nothing is released unless every step succeeded, the reservation
 * first; after a failure the indices stay used.
 *
 * How a batch is signed (xmss_sign.cu, lms_sign.cu). Every tree the batch touches, on every
 * layer (XMSS^MT) or level (HSS), is built whole on the GPU, leaves and inner nodes, unless
 * the tree cache below has it. Each message is first hashed into the digits to sign (XMSS:
 * r and H_msg; LMS: C and Q), by the host over the thread pool, or on the fused paths by a
 * GPU kernel ahead of the chains; the chains of a leaf that signs a message then store
 * their values after the digits' steps on their way to the leaf, so the bottom one-time
 * signatures come with the leaves (XMSS SHA-256 n = 32 and LMS SHA-256 sets; the others
 * build the trees through the leaf engine and sign in a second kernel; a tree from the
 * cache signs from the secrets). The upper one-time signatures (one per lower tree
 * touched) run on the GPU once the trees below are built, one thread per chain; the
 * authentication paths come from the trees, and on the fused paths whole signatures are
 * put together on the GPU. The batch end moves the key's traversal state with the batch's
 * own trees (their leaves, and their inner nodes where a tree is whole, so the CPU hashes
 * nothing there) and the GPU for any other leaves; it ends in the bytes the CPU's skip over
 * the batch ends in. Building whole trees pays when the batch is big against the trees:
 * keys with a tree over 2^16 leaves, or batches that would build more than 2^16 + 64
 * leaves per signature, are signed by the CPU code instead (same bytes).
 *
 * The tree cache keeps public trees on the GPU between calls: those every batch of a key
 * needs (an XMSS^MT key's top layer, an HSS key's top tree), the bottom tree the next
 * batch signs with, and a new key's first trees from GPU key generation, so that a whole
 * small key signed in one batch builds no tree. At most SFS_TREE_CACHE_MAX trees, least
 * recently used out; HBS_GPU_TREE_CACHE=0 keeps none.
 * HBS_GPU_SIGN_TIMING=1 prints the time of every phase to stderr. */
#include "gpu/stateful_sign.h"
#include "gpu/spread.h"

namespace hbs_gpu {

/* (declared in stateful_device.cuh; defined here, where the GPU emulator compiles it too) */
void x256_host_midstate(uint32_t out[8], uint8_t tag, const uint8_t *seed)
{
    hbs_sha256_ctx c;
    uint8_t blk[64];
    memset(blk, 0, 32);
    blk[31] = tag;
    memcpy(blk + 32, seed, 32);
    hbs_sha256_init(&c);
    hbs_sha256_compress(c.h, blk, 1);
    memcpy(out, c.h, 32);
    hbs_memzero(blk, sizeof blk);
    hbs_memzero(&c, sizeof c);
}

/* ---- the tree cache ---- */
bool tree_cache_on()
{
    const char *v = getenv("HBS_GPU_TREE_CACHE");
    return !(v && strcmp(v, "0") == 0);
}

/* The key's identity for the cache: its public values only. */
void tree_cache_id(uint8_t id[32], const hbs_xmss_params *p, const uint8_t *pub_seed,
                   const uint8_t *root)
{
    static const char tag[] = "hbs gpu tree cache v1";
    uint8_t m[sizeof tag + 5 + 2 * 64];
    size_t at = sizeof tag;
    memcpy(m, tag, sizeof tag);
    sput32(m + at, p->oid);
    m[at + 4] = p->mt;
    at += 5;
    memcpy(m + at, pub_seed, p->n);
    memcpy(m + at + p->n, root, p->n);
    hbs_sha256(id, m, at + 2 * (size_t)p->n);
}

/* An LMS tree's identity for the cache: its type, I and root (the nodes follow from them). */
void lms_tree_cache_id(uint8_t id[32], unsigned n, unsigned w, unsigned h, const uint8_t I[16],
                       const uint8_t *root)
{
    static const char tag[] = "hbs gpu lms tree cache v1";
    uint8_t m[sizeof tag + 3 + 16 + 32];
    memcpy(m, tag, sizeof tag);
    m[sizeof tag] = (uint8_t)n;
    m[sizeof tag + 1] = (uint8_t)w;
    m[sizeof tag + 2] = (uint8_t)h;
    memcpy(m + sizeof tag + 3, I, 16);
    memcpy(m + sizeof tag + 19, root, n);
    hbs_sha256(id, m, sizeof tag + 19 + (size_t)n);
}

/* An entry that must not be found (what it holds is not known to be whole). */
void tree_cache_drop(tree_entry *e)
{
    memset(e->id, 0, sizeof e->id);
    e->layer = UINT32_MAX;
    e->used = 0;
}

/* Names the entries of the fill from key generation that is still pending (waiting for its
 * root), or drops them if it failed or they are there already. */
static void tree_cache_resolve(device_ctx *d)
{
    tree_fill &f = d->fill;
    if (!f.done)
        return;
    const bool ok = cudaEventSynchronize(f.done) == cudaSuccess;
    uint8_t id[32];
    if (ok)
        f.name(f.root, id);
    for (size_t i = 0; i < f.e.size(); i++) {
        tree_entry *e = f.e[i];
        bool dup = false;
        for (const tree_entry &t : d->tree_cache)
            dup = dup || (&t != e && t.p && t.layer == f.layer[i] && t.tree == f.tree[i] &&
                          t.bytes == e->bytes && ok && memcmp(t.id, id, 32) == 0);
        if (ok && !dup) {
            memcpy(e->id, id, 32);
            e->layer = f.layer[i];
            e->tree = f.tree[i];
        } else {
            tree_cache_drop(e);
        }
    }
    cudaEventDestroy(f.done);
    if (!ok) {
        (void)cudaGetLastError();
        gpu_clear_error();
    }
    d->fill = tree_fill();
}

tree_entry *tree_cache_find(device_ctx *d, const uint8_t id[32], uint32_t layer, uint64_t tree,
                            size_t bytes, uint64_t tick)
{
    tree_cache_resolve(d);
    for (tree_entry &t : d->tree_cache)
        if (t.p && t.layer == layer && t.tree == tree && t.bytes == bytes &&
            memcmp(t.id, id, 32) == 0) {
            t.used = tick;
            return &t;
        }
    return nullptr;
}

/* A place for a new entry (before anything is launched: freeing memory waits for the
 * device), taking the least recently used one when full, never one this call uses; null
 * when there is none to be had. */
tree_entry *tree_cache_slot(device_ctx *d, const uint8_t id[32], uint32_t layer, uint64_t tree,
                            size_t bytes, uint64_t tick)
{
    tree_cache_resolve(d);
    tree_entry *e = nullptr;
    if (d->tree_cache.size() < SFS_TREE_CACHE_MAX) {
        d->tree_cache.emplace_back();
        e = &d->tree_cache.back();
    } else {
        for (tree_entry &t : d->tree_cache)
            if (t.used != tick && (!e || t.used < e->used))
                e = &t;
        if (!e)
            return nullptr;
    }
    if (e->p && e->bytes != bytes) {
        cudaFree(e->p);
        e->p = nullptr;
    }
    if (!e->p && cudaMalloc(&e->p, bytes) != cudaSuccess) {
        (void)cudaGetLastError();
        e->p = nullptr;
        e->bytes = 0;
        return nullptr;
    }
    memcpy(e->id, id, 32);
    e->layer = layer;
    e->tree = tree;
    e->bytes = bytes;
    e->used = tick;
    return e;
}

/* ---- trees from key generation into the cache ----
 * Key generation on the GPU makes every leaf of a key's first trees; their inner levels cost
 * the GPU a small part of that, and a batch signer that finds the trees makes only the
 * one-time signatures (a whole XMSS-SHA2_10_256 or LMS H10 key signed in one batch builds no
 * tree). A fill is called with d->lock held, once the leaves are in dleaves, and returns
 * while the GPU works on: the CPU meanwhile builds the key's state from the same leaves, and
 * the entries get their name (from the root) at the cache's next use. Best effort: whatever
 * fails leaves the cache without these trees and the GPU's error state clear. */

/* The pending fill's entries (places for trees of `bytes` at (layer[i], tree[i])), taken
 * now, before anything is launched: freeing an old entry waits for the device. */
bool tree_fill_take(device_ctx *d, const std::vector<uint32_t> &layer,
                    const std::vector<uint64_t> &tree, size_t bytes)
{
    static const uint8_t none[32] = {0};
    tree_fill &f = d->fill;
    const uint64_t tick = ++d->tree_tick;
    d->tree_cache.reserve(SFS_TREE_CACHE_MAX); /* entries stay where they are */
    tree_cache_resolve(d);
    for (size_t i = 0; i < layer.size(); i++) {
        tree_entry *e = tree_cache_slot(d, none, UINT32_MAX, 0, bytes, tick);
        if (!e)
            break;
        f.e.push_back(e);
        f.layer.push_back(layer[i]);
        f.tree.push_back(tree[i]);
    }
    return !f.e.empty();
}

/* Starts the pending fill: each entry's tree copied from nodes + at[i], the root from root
 * (device) into pinned memory, then the event its naming waits for. */
void tree_fill_start(device_ctx *d, const std::vector<const uint8_t *> &src,
                     const uint8_t *root, size_t root_len, bool ok)
{
    tree_fill &f = d->fill;
    uint8_t *hroot = nullptr;
    ok = ok && host_buf(d, SFS_FILL_ROOT, 64, (void **)&hroot) == HBS_OK;
    for (size_t i = 0; i < f.e.size() && ok; i++)
        ok = cudaMemcpyAsync(f.e[i]->p, src[i], f.e[i]->bytes, cudaMemcpyDeviceToDevice,
                             d->stream) == cudaSuccess;
    ok = ok && cudaGetLastError() == cudaSuccess &&
         cudaMemcpyAsync(hroot, root, root_len, cudaMemcpyDeviceToHost, d->stream) ==
             cudaSuccess &&
         cudaEventCreateWithFlags(&f.done, cudaEventDisableTiming) == cudaSuccess;
    if (ok && cudaEventRecord(f.done, d->stream) == cudaSuccess) {
        f.root = hroot;
        return;
    }
    /* nothing named: the entries go back unused */
    cudaStreamSynchronize(d->stream);
    if (f.done)
        cudaEventDestroy(f.done);
    for (tree_entry *e : f.e)
        tree_cache_drop(e);
    d->fill = tree_fill();
    (void)cudaGetLastError();
    gpu_clear_error();
}

/* The batch on the CPU, for keys whose trees are too tall to build per batch: the key
 * already holds the indices (they are below its reservation), so no file write happens. */
static int sign_on_cpu(hbs_stateful_key *key, uint8_t *sigs, size_t sb,
                       const uint8_t *const *msgs, const size_t *msglens, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        size_t len = 0;
        int rc = hbs_stateful_sign(key, sigs + i * sb, sb, &len, msgs[i], msglens[i]);
        if (rc != HBS_OK)
            return rc;
        if (len != sb)
            return HBS_ERR_STATE;
    }
    return HBS_OK;
}

/* ---- the batch end: the key moves over the batch on the batch's own leaves ----
 * An engine that hands out the leaves of the trees the batch built and asks the GPU for the
 * rest: the traversal state after the batch is what the CPU would make (the engine changes
 * where leaves come from, never what they are). */
struct cached_engine {
    const hbs_leaf_engine *gpu;
    const std::vector<xtree> *x;
    unsigned H;
    size_t n;
    const std::vector<ltree_t> *l;
};

static int cached_xmss_leaves(void *user, const hbs_xmss_leaf_job *jobs, size_t njobs,
                              uint32_t first, size_t count, uint8_t *out)
{
    const cached_engine *c = (const cached_engine *)user;
    hbs_xmss_leaf_job miss[12];
    size_t at[12], m = 0;
    if (njobs > 12)
        return c->gpu->xmss_leaves(c->gpu->user, jobs, njobs, first, count, out);
    for (size_t k = 0; k < njobs; k++) {
        const xtree *hit = nullptr;
        if (jobs[k].n == c->n && (uint64_t)first + count <= ((uint64_t)1 << c->H))
            for (const xtree &t : *c->x)
                if (t.layer == jobs[k].layer && t.tree == jobs[k].tree)
                    hit = &t;
        if (hit) {
            memcpy(out + k * count * c->n, hit->nodes.data() + (size_t)first * c->n,
                   count * c->n);
        } else {
            miss[m] = jobs[k];
            at[m++] = k;
        }
    }
    if (m == 0)
        return HBS_OK;
    if (m == njobs)
        return c->gpu->xmss_leaves(c->gpu->user, jobs, njobs, first, count, out);
    const size_t n = jobs[0].n;
    uint8_t *tmp = (uint8_t *)malloc(m * count * n); /* C calls this: no exceptions */
    if (!tmp)
        return HBS_ERR_NO_MEMORY;
    int err = c->gpu->xmss_leaves(c->gpu->user, miss, m, first, count, tmp);
    for (size_t i = 0; i < m && !err; i++)
        memcpy(out + at[i] * count * n, tmp + i * count * n, count * n);
    free(tmp);
    return err;
}

/* A whole tree the batch built, leaves and inner nodes: the skip's BDS steps read their inner
 * nodes here instead of hashing them on the CPU (which took 47-69 ms of an 85-108 ms batch of
 * 16,384 XMSS-SHA2_16_256 signatures on the H200's host). */
static const uint8_t *cached_xmss_tree(void *user, const hbs_xmss_leaf_job *job, unsigned h)
{
    const cached_engine *c = (const cached_engine *)user;
    if (job->n != c->n || h != c->H)
        return nullptr;
    const size_t want = (((size_t)2 << h) - 1) * c->n;
    for (const xtree &t : *c->x)
        if (t.layer == job->layer && t.tree == job->tree && t.nodes.size() == want)
            return t.nodes.data();
    return nullptr;
}

/* Whole trees (a far skip rebuilds from them): the batch's own when it built every one,
 * else all of them from the GPU. */
static int cached_xmss_trees(void *user, const hbs_xmss_leaf_job *jobs, size_t njobs, unsigned h,
                             uint8_t *out)
{
    const cached_engine *c = (const cached_engine *)user;
    const size_t tn = ((size_t)2 << h) - 1;
    const uint8_t *hit[12];
    size_t k = 0;
    while (k < njobs && k < 12 && (hit[k] = cached_xmss_tree(user, &jobs[k], h)))
        k++;
    if (njobs == 0 || k < njobs)
        return c->gpu->xmss_trees ? c->gpu->xmss_trees(c->gpu->user, jobs, njobs, h, out)
                                  : HBS_ERR_UNSUPPORTED;
    for (k = 0; k < njobs; k++)
        memcpy(out + k * tn * c->n, hit[k], tn * c->n);
    return HBS_OK;
}

/* The WOTS+ signature the batch made of a tree's root by the layer above (the key's cached
 * one after the batch is one of them, or the next bottom tree's): leaf `leaf` of tree
 * job->tree signs the root of the tree (job->tree << H) + leaf one layer down, if msg is
 * that root. (The CPU took 0.1 ms of a batch's end for it, cold.) */
static int cached_xmss_wots_sig(void *user, const hbs_xmss_leaf_job *job, uint32_t leaf,
                                const uint8_t *msg, uint8_t *sig)
{
    const cached_engine *c = (const cached_engine *)user;
    const size_t tn = ((size_t)2 << c->H) - 1;
    if (c->H == 0 || c->H >= 64 || job->n != c->n || job->layer == 0 ||
        (job->tree >> (64 - c->H)) != 0)
        return HBS_ERR_UNSUPPORTED;
    const uint64_t below = (job->tree << c->H) | leaf;
    for (const xtree &t : *c->x)
        if (t.layer + 1 == job->layer && t.tree == below && t.nodes.size() == tn * c->n &&
            t.wots.size() == (size_t)job->len * c->n &&
            memcmp(t.nodes.data() + (tn - 1) * c->n, msg, c->n) == 0) {
            memcpy(sig, t.wots.data(), t.wots.size());
            return HBS_OK;
        }
    /* (trees this engine had to have built: their signatures came with them) */
    return c->gpu->xmss_wots_sig ? c->gpu->xmss_wots_sig(c->gpu->user, job, leaf, msg, sig)
                                 : HBS_ERR_UNSUPPORTED;
}

static int cached_lms_leaves(void *user, const hbs_lms_leaf_job *job, uint32_t first,
                             size_t count, uint8_t *out)
{
    const cached_engine *c = (const cached_engine *)user;
    for (const ltree_t &t : *c->l) {
        const size_t leaves = t.T.size() / (2 * (size_t)job->n) + 1; /* (2L - 1) m bytes */
        if (memcmp(t.I, job->I, 16) == 0 && leaves == ((size_t)1 << job->h) &&
            t.T.size() == (2 * leaves - 1) * job->n && (uint64_t)first + count <= leaves) {
            memcpy(out, t.T.data() + (leaves - 1 + first) * job->n, count * job->n);
            return HBS_OK;
        }
    }
    return c->gpu->lms_leaves(c->gpu->user, job, first, count, out);
}

/* The GPUs' batches below this many signatures a GPU stay on one GPU. */
#define SFS_SPLIT_SIGS 1024

/* The signatures of one batch, from st (the key's private state at first), spread over the
 * GPUs in use: parts of whole bottom trees (a tree is built once, by the GPU whose part it
 * is), each GPU with its own leaf engine. The trees the parts built go to trees (XMSS) or
 * ltrees (HSS), in order; *cpu if any part found the CPU the better signer. */
static int sign_parts(hbs_stateful_family family, const uint8_t *st, size_t stlen,
                      const uint8_t *pk, size_t pklen, uint64_t first, uint8_t *sigs, size_t sb,
                      const uint8_t *const *msgs, const size_t *msglens, size_t count,
                      bool *cpu, std::vector<xtree> &trees, std::vector<ltree_t> &ltrees,
                      unsigned *tree_h, size_t *node_n, release_gate &gate, sign_timer &tm)
{
    std::vector<device_ctx *> &gpus = devices_in_use();
    if (gpus.empty())
        return HBS_ERR_NO_GPU;
    const bool hss = family == HBS_STATEFUL_HSS;
    const uint64_t tree = hss ? hss_batch_tree(st, stlen) : xmss_batch_tree(st, stlen);
    if (tree == 0)
        return HBS_ERR_STATE;
    /* parts start on tree boundaries of the index, so the count is planned from the
     * boundary before first on */
    const size_t lead = (size_t)(first % tree);
    std::vector<part> parts = plan_parts(count + lead, gpus.size(), split_min(SFS_SPLIT_SIGS),
                                         tree > SIZE_MAX ? SIZE_MAX : (size_t)tree);
    for (part &q : parts) {
        if (q.start == 0)
            q.count -= lead;
        else
            q.start -= lead;
    }
    const size_t np = parts.size();
    std::vector<std::vector<xtree>> xt(np);
    std::vector<std::vector<ltree_t>> lt(np);
    std::vector<sign_timer> tms(np);
    std::vector<char> cpus(np, 0);
    std::vector<unsigned> hs(np, 0);
    std::vector<size_t> ns(np, 0);
    int err = run_parts(gpus, parts, [&](device_ctx *d, const part &q, size_t k) -> int {
        hbs_leaf_engine e;
        bool c = false;
        int r = leaf_engine_on(d, &e);
        sign_timer &t = k == 0 ? tm : tms[k];
        /* nothing may throw across the C interface: out of memory is an error code */
        try {
            if (r == HBS_OK && hss)
                r = hss_batch(d, &e, st, stlen, pk, pklen, first + q.start, sigs + q.start * sb,
                              sb, msgs + q.start, msglens + q.start, q.count, &c, lt[k], gate,
                              t);
            else if (r == HBS_OK)
                r = xmss_batch(d, &e, st, stlen, first + q.start, sigs + q.start * sb, sb,
                               msgs + q.start, msglens + q.start, q.count, k + 1 == np, &c,
                               xt[k], &hs[k], &ns[k], gate, t);
        } catch (const std::bad_alloc &) {
            r = HBS_ERR_NO_MEMORY;
        } catch (...) {
            r = HBS_ERR_GPU;
        }
        cpus[k] = c;
        return r;
    });
    for (size_t k = 0; k < np; k++) {
        *cpu = *cpu || cpus[k];
        if (hs[k]) {
            *tree_h = hs[k];
            *node_n = ns[k];
        }
        if (k > 0 && tm.on && !tms[k].text.empty())
            tm.text += "; gpu " + std::to_string(gpus[k]->ordinal) + ": " + tms[k].text;
    }
    if (np > 1)
        tm.note("gpus", np, gpus.size());
    try {
        for (size_t k = 0; k < np; k++) {
            for (xtree &x : xt[k])
                trees.push_back(std::move(x));
            for (ltree_t &l : lt[k])
                ltrees.push_back(std::move(l));
        }
    } catch (const std::bad_alloc &) {
        err = err ? err : HBS_ERR_NO_MEMORY;
    }
    return err;
}

} // namespace hbs_gpu

using namespace hbs_gpu;

/* The batch after the checks: reserve, sign, move the key on. The reservation (a file
 * write and fsync) runs in a thread of its own while the GPUs sign from a copy of the
 * state; no one-time signature reaches sigs before it is durable (the gate), and nothing is
 * returned unless it succeeded. */
static int sign_many(hbs_stateful_key *key, uint8_t *sigs, size_t sb, const uint8_t *const *msgs,
                     const size_t *msglens, size_t count)
{
    hbs_leaf_engine e, ce;
    uint8_t *state = NULL;
    size_t statelen = 0;
    uint64_t first = 0;
    bool cpu = false;
    int err, end_err;
    sign_timer tm;
    std::vector<xtree> xt;
    std::vector<ltree_t> lt;
    cached_engine cache;
    cache.H = 0;
    cache.n = 0;
    if ((err = hbs_gpu_leaf_engine(&e)) != HBS_OK)
        return err;
    if ((err = hbs_stateful_batch_state(key, count, &first, &state, &statelen)) != HBS_OK)
        return err;
    const hbs_stateful_family family = hbs_stateful_key_family(key);
    /* (read before the reservation's thread starts: it names the key's trees in the cache) */
    uint8_t pk[HBS_STATEFUL_MAX_PK_BYTES];
    size_t pklen = 0;
    if (hbs_stateful_key_public(key, pk, sizeof pk, &pklen) != HBS_OK)
        pklen = 0;
    int res_err = HBS_ERR_STATE;
    uint64_t res_first = 0;
    double res_ms = 0;
    release_gate gate;
    /* from the moment this starts the indices may be used, whatever happens */
    auto reserve_fn = [&] {
        uint8_t *st2 = NULL;
        size_t len2 = 0;
        const double t0 = host_ms();
        res_err = hbs_stateful_batch_begin(key, count, &res_first, &st2, &len2);
        hbs_stateful_batch_free_state(st2, len2);
        res_ms = host_ms() - t0;
        /* (another first than the copy's: the key moved meanwhile, which its lock forbids) */
        gate.open(res_err != HBS_OK ? res_err : res_first != first ? HBS_ERR_STATE : HBS_OK);
    };
    std::thread reserve;
    try {
        reserve = std::thread(reserve_fn);
    } catch (...) {
        reserve_fn(); /* no thread to be had: first the reservation, then the rest */
    }
    tm.mark("state");
    try {
        err = sign_parts(family, state, statelen, pklen ? pk : nullptr, pklen, first, sigs, sb,
                         msgs, msglens, count, &cpu, xt, lt, &cache.H, &cache.n, gate, tm);
    } catch (...) {
        err = HBS_ERR_NO_MEMORY; /* (the parts' vectors) */
    }
    hbs_stateful_batch_free_state(state, statelen);
    if (reserve.joinable())
        reserve.join();
    if (tm.on) {
        char b[96];
        snprintf(b, sizeof b, "reserve (beside) %.3f, waited for it %.3f", res_ms,
                 gate.waited_ms());
        tm.text += (tm.text.empty() ? "" : ", ") + std::string(b);
    }
    if (res_err != HBS_OK)
        return res_err; /* nothing set aside (or the key is unusable): nothing released */
    if (res_first != first)
        err = HBS_ERR_STATE;
    if (err == HBS_OK && cpu) {
        err = sign_on_cpu(key, sigs, sb, msgs, msglens, count);
        tm.mark("cpu signing");
    }
    cache.gpu = &e;
    cache.x = &xt;
    cache.l = &lt;
    ce = e;
    ce.user = &cache;
    ce.xmss_leaves = cached_xmss_leaves;
    ce.xmss_tree = cached_xmss_tree;
    ce.xmss_trees = cached_xmss_trees;
    ce.xmss_wots_sig = cached_xmss_wots_sig;
    ce.lms_leaves = cached_lms_leaves;
    end_err = hbs_stateful_batch_end_engine(key, first + count, &ce);
    tm.mark("batch end");
    if (err == HBS_OK)
        err = end_err;
    tm.report(count, err);
    return err;
}

extern "C" int hbs_gpu_stateful_sign_many(hbs_stateful_key *key, uint8_t *sigs, size_t sigcap,
                                          const uint8_t *const *msgs, const size_t *msglens,
                                          size_t count)
{
    size_t sb;
    int err;
    gpu_clear_error();
    if (!key || (count && (!sigs || !msgs || !msglens)))
        return HBS_ERR_INVALID_ARGUMENT;
    for (size_t i = 0; i < count; i++)
        if (!msgs[i] && msglens[i]) {
            memset(sigs, 0, sigcap);
            return HBS_ERR_INVALID_ARGUMENT;
        }
    sb = count ? hbs_stateful_sig_bytes(key) : 0;
    if (count == 0)
        err = HBS_OK;
    else if (sb == 0 || sigcap / sb < count)
        err = HBS_ERR_BUFFER_TOO_SMALL;
    else if (hbs_stateful_key_remaining(key) < count)
        err = HBS_ERR_KEY_EXHAUSTED;
    else
        err = sign_many(key, sigs, sb, msgs, msglens, count);
    /* every byte of the first count * sb is written on success; the rest is zeroed, and
     * everything is on failure */
    if (sigs && err == HBS_OK)
        memset(sigs + count * sb, 0, sigcap - count * sb);
    else if (sigs)
        hbs_memzero(sigs, sigcap);
    return err;
}
