/* Batch signing under one stateful key on the GPU (hbs_gpu_stateful_sign_many).
 *
 * Order of events: the key's private state at the batch's first index is copied out; a
 * thread sets the batch's indices aside in the key file (state/stateful_batch.h: written,
 * fsynced, renamed) while the signatures are made from the copy; then the key in memory
 * moves past the batch. Nothing is released unless every step succeeded, the reservation
 * first; after a failure the indices stay used.
 *
 * How a batch is signed. Every tree the batch touches, on every layer (XMSS^MT) or level
 * (HSS), is built whole on the GPU, leaves and inner nodes. Each message is first hashed
 * into the digits to sign (XMSS: r and H_msg; LMS: C and Q), by the host over the thread
 * pool, or for the fused XMSS path by a GPU kernel ahead of the chains;
 * the chains of a leaf that signs a message then store their values after the digits'
 * steps on their way to the leaf, so the bottom one-time signatures come with the leaves
 * (XMSS SHA-256 n = 32 and LMS SHA-256 sets; the others build the trees through the leaf
 * engine and sign in a second kernel). The upper one-time signatures (one per lower tree
 * touched) run on the GPU once the trees below are built, one thread per chain; the
 * authentication paths come from the trees. The batch end moves the key's traversal state
 * with the batch's own trees (and the GPU for any other leaves); it ends in the bytes the
 * CPU's skip over the batch ends in. Building whole trees pays when the batch is big
 * against the trees: keys with a tree over 2^16 leaves, or batches that would build more
 * than 2^16 + 64 leaves per signature, are signed by the CPU code instead (same bytes).
 * HBS_GPU_SIGN_TIMING=1 prints the time of every phase to stderr. */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <array>
#include <mutex>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "core/leaf_engine.h"
#include "gpu/gpu_internal.h"
#include "gpu/stateful_sign_kernels.cuh"
#include "hbs/gpu.h"
#include "hbs/lms.h"
#include "hbs/stateful.h"
#include "hbs/xmss.h"
#include "state/stateful_batch.h"
extern "C" {
#include "common/pool.h"
#include "hash/hash.h"
#include "lms/lmots.h"
#include "lms/params.h"
#include "xmss/internal.h"
}

namespace hbs_gpu {

/* Pool slots of this file: staging of the jobs (host and device) and the chain outputs;
 * the fused XMSS path: its upload, the trees' nodes, chain ends, bottom signatures. */
enum { SFS_HOST = 54, SFS_DEV_JOBS = 54, SFS_DEV_OUT = 55 };
enum { SFS_F_UP = 56, SFS_F_NODES = 57, SFS_F_VALS = 58, SFS_F_SIG = 59, SFS_F_LT = 60,
       SFS_F_PREP = 61, SFS_F_JOBS = 62, SFS_F_OUT = 63, SFS_F_VALS2 = 64, SFS_F_LT2 = 65,
       SFS_F_PREP2 = 66, SFS_F_LVPREP = 67, SFS_F_LVPREP2 = 68, SFS_F_UPPREP = 69 };
enum { SFS_FILL_ROOT = 71, SFS_F_SPREP = 72, SFS_F_SPREP2 = 73 };
/* The bottom trees from the cache sign in two passes (xs_prep_sha256) while their steps'
 * scratch, 960 words a message, stays under this; above, in one. */
#define SFS_SPREP_MAX ((size_t)256 << 20) /* host: the root a fill of the cache from key generation names */

#define SFS_THREADS 256
#define SFS_MAX_TREE_H 16
#define SFS_LEAVES_FREE ((uint64_t)1 << 16)
#define SFS_LEAVES_PER_SIG 64
/* Fused XMSS path: leaves per launch at most (2^18 leaves of chain ends: 575 MB). */
#define SFS_F_SLICE ((uint64_t)1 << 18)
/* The fused path builds the bottom layer's trees in up to this many groups, on two streams
 * by turns, each group's signatures going back to the host while the next is built; batches
 * of signatures under SFS_F_GROUP_MIN_BYTES in all are one group. */
#define SFS_F_GROUPS 4
#define SFS_F_GROUP_MIN_BYTES ((size_t)4 << 20)
/* HBS_GPU_SIGN_GROUPS=N sets the groups (at most this many), whatever the batch's size. */
#define SFS_F_GROUPS_MAX 16
/* The fused path hashes the messages on the GPU when they are at most this many bytes in
 * all (staged through pinned memory); bigger batches of messages are hashed by the host. */
#define SFS_F_MSG_BYTES ((size_t)64 << 20)
/* Trees up to this height get their inner levels in two launches after their address-only
 * parts, the lower half a block per subtree and the upper half a block per tree (the levels
 * one launch each cost more than the narrow upper levels' idle lanes). */
#ifndef SFS_LEVELS_BLOCK_H
#define SFS_LEVELS_BLOCK_H 12
#endif
/* Below this many leaves a launch gives each L-tree a block of threads (latency: 1,024 leaves
 * measured 1.12 ms against 1.28 ms level at a time on the H200). */
#ifndef SFS_F_BLOCK_LTREE
#define SFS_F_BLOCK_LTREE 4096
#endif
/* From this many leaves a launch on, a thread per L-tree (enough of them to fill the GPU; the
 * level-at-a-time kernels' scratch would be 4 KB a leaf); between the two, level at a time. */
#ifndef SFS_F_SERIAL_LTREE
#define SFS_F_SERIAL_LTREE ((uint64_t)1 << 17)
#endif

/* HBS_GPU_LTREE=serial|block|levels: the fused path's L-tree kernel, whatever the launch's
 * size (for comparison); otherwise chosen by size. */
enum lt_kind { LT_SERIAL, LT_BLOCK, LT_LEVELS };
static lt_kind ltree_kind(uint64_t leaves)
{
    const char *v = getenv("HBS_GPU_LTREE");
    if (v && strcmp(v, "serial") == 0)
        return LT_SERIAL;
    if (v && strcmp(v, "block") == 0)
        return LT_BLOCK;
    if (v && strcmp(v, "levels") == 0)
        return LT_LEVELS;
    return leaves < SFS_F_BLOCK_LTREE ? LT_BLOCK
           : leaves < SFS_F_SERIAL_LTREE ? LT_LEVELS : LT_SERIAL;
}

/* HBS_GPU_SIGN_FUSE=0: the XMSS SHA-256 sets take the general path too (for comparison). */
static bool fuse_enabled()
{
    const char *v = getenv("HBS_GPU_SIGN_FUSE");
    return !v || strcmp(v, "0") != 0;
}

static uint32_t sget32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint64_t sget64(const uint8_t *p) { return (uint64_t)sget32(p) << 32 | sget32(p + 4); }

static void sput32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

/* ---- the top layer's trees kept between batches (HBS_GPU_TREE_CACHE=0: not kept) ---- */
#define SFS_TREE_CACHE_MAX 8

static bool tree_cache_on()
{
    const char *v = getenv("HBS_GPU_TREE_CACHE");
    return !(v && strcmp(v, "0") == 0);
}

/* The key's identity for the cache: its public values only. */
static void tree_cache_id(uint8_t id[32], const hbs_xmss_params *p, const uint8_t *pub_seed,
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
static void lms_tree_cache_id(uint8_t id[32], unsigned n, unsigned w, unsigned h,
                              const uint8_t I[16], const uint8_t *root)
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
static void tree_cache_drop(tree_entry *e)
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

static tree_entry *tree_cache_find(device_ctx *d, const uint8_t id[32], uint32_t layer,
                                   uint64_t tree, size_t bytes, uint64_t tick)
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
static tree_entry *tree_cache_slot(device_ctx *d, const uint8_t id[32], uint32_t layer,
                                   uint64_t tree, size_t bytes, uint64_t tick)
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

/* HBS_CUDA for code that must clean up: the error code (0 or HBS_ERR_GPU, recorded). */
static int cuda_err(cudaError_t e, const char *what, int line)
{
    return e == cudaSuccess ? 0 : gpu_fail(__FILE__, line, what, e);
}

/* An XMSS signature's index: idx_bytes big-endian bytes of G. */
static void xmss_put_idx(uint8_t *s, unsigned idx_bytes, uint64_t G)
{
    for (unsigned b = 0; b < idx_bytes; b++)
        s[b] = (uint8_t)(G >> (8 * (idx_bytes - 1 - b)));
}

static unsigned sfs_blocks(uint64_t threads)
{
    return (unsigned)((threads + SFS_THREADS - 1) / SFS_THREADS);
}

/* Bytes below which copying on this thread beats waking the pool (about 0.1 ms). */
#define SFS_COPY_ALONE ((size_t)256 << 10)
/* Copies in parts of this many bytes over the pool. */
#define SFS_COPY_PART ((size_t)128 << 10)

/* f(i) for every i < count over the library's thread pool, in at most 256 runs of
 * consecutive i: the pool hands out items one atomic increment at a time, and with 16
 * threads on one counter a trivial body cost about 100 ns an item (1.7 ms for 16,384). */
template <typename F> static void par_for(size_t count, const F &f)
{
    struct run {
        const F *f;
        size_t count, per;
    } r = {&f, count, count / 256 + 1};
    hbs_parallel_for(
        (count + r.per - 1) / r.per,
        [](void *arg, size_t c) {
            const run *q = (const run *)arg;
            const size_t end = (c + 1) * q->per < q->count ? (c + 1) * q->per : q->count;
            for (size_t i = c * q->per; i < end; i++)
                (*q->f)(i);
        },
        (void *)&r);
}

/* memcpy(dst, src, bytes), over the pool when it is big. */
static void par_copy(uint8_t *dst, const uint8_t *src, size_t bytes)
{
    if (bytes < SFS_COPY_ALONE) {
        memcpy(dst, src, bytes);
        return;
    }
    par_for((bytes + SFS_COPY_PART - 1) / SFS_COPY_PART, [&](size_t c) {
        const size_t b0 = c * SFS_COPY_PART,
                     b1 = b0 + SFS_COPY_PART < bytes ? b0 + SFS_COPY_PART : bytes;
        memcpy(dst + b0, src + b0, b1 - b0);
    });
}

static double now_ms()
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* HBS_GPU_SIGN_TIMING=1: the time of every phase of a batch, one line on stderr. */
struct sign_timer {
    bool on = false;
    double t0 = 0, last = 0;
    std::string text;
    sign_timer()
    {
        const char *v = getenv("HBS_GPU_SIGN_TIMING");
        on = v && *v && strcmp(v, "0") != 0;
        t0 = last = on ? now_ms() : 0;
    }
    void mark(const char *what)
    {
        if (!on)
            return;
        const double t = now_ms();
        char b[96];
        snprintf(b, sizeof b, "%s%s %.3f", text.empty() ? "" : ", ", what, t - last);
        text += b;
        last = t;
    }
    void note(const char *what, size_t a, size_t b)
    {
        if (!on)
            return;
        char t[96];
        snprintf(t, sizeof t, "%s%s %zu/%zu", text.empty() ? "" : ", ", what, a, b);
        text += t;
    }
    void report(size_t count, int err)
    {
        if (on)
            fprintf(stderr, "hbs: gpu sign_many(%zu): %s ms; total %.3f ms%s\n", count,
                    text.c_str(), now_ms() - t0, err ? " (failed)" : "");
    }
};

/* Whether building every touched tree whole is worth it (else the CPU signs). */
static bool trees_worth_it(unsigned max_h, uint64_t leaves, size_t count)
{
    return max_h <= SFS_MAX_TREE_H && leaves <= SFS_LEAVES_FREE + SFS_LEAVES_PER_SIG * count;
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

/* ---- one-time signatures on the GPU ---- */

/* Uploads the job arrays (bytes at host, len), runs `launch`, copies out_bytes back. */
template <typename L>
static int run_jobs(device_ctx *d, const void *jobs, size_t len, size_t out_bytes, uint8_t *out,
                    L launch)
{
    void *h;
    uint8_t *dj, *dout;
    int err;
    std::lock_guard<std::mutex> g(d->lock);
    if ((err = host_buf(d, SFS_HOST, len, &h)) ||
        (err = dev_buf(d, SFS_DEV_JOBS, len, (void **)&dj)) ||
        (err = dev_buf(d, SFS_DEV_OUT, out_bytes, (void **)&dout)))
        return err;
    memcpy(h, jobs, len);
    HBS_CUDA(cudaMemcpyAsync(dj, h, len, cudaMemcpyHostToDevice, d->stream));
    launch(dj, dout);
    HBS_CUDA(cudaGetLastError());
    HBS_CUDA(cudaMemcpyAsync(out, dout, out_bytes, cudaMemcpyDeviceToHost, d->stream));
    HBS_CUDA(cudaStreamSynchronize(d->stream));
    return HBS_OK;
}

/* ---- XMSS / XMSS^MT ---- */

struct xtree {
    uint32_t layer;
    uint64_t tree;
    std::vector<uint8_t> nodes; /* level 0 (leaves) first, then each level up */
};

/* Offset (in nodes) of level z (0: leaves) of a tree of height H. */
static size_t xlevel(unsigned H, unsigned z)
{
    size_t off = 0;
    for (unsigned k = 0; k < z; k++)
        off += (size_t)1 << (H - k);
    return off;
}

/* Node i of level z (0: leaves) of a tree of height H, n-byte nodes. */
static const uint8_t *xnode(const xtree &t, unsigned H, size_t n, unsigned z, uint64_t i)
{
    return t.nodes.data() + (xlevel(H, z) + i) * n;
}

/* The inner nodes of every tree from its leaves, level by level, each level's nodes of all
 * trees spread over the thread pool in runs of up to 64. */
static void xmss_inner(const xmss_ctx *c, std::vector<xtree> &trees, unsigned H, size_t n)
{
    for (unsigned z = 1; z <= H; z++) {
        const size_t per = (size_t)1 << (H - z), run = per < 64 ? per : 64, runs = per / run;
        const size_t below = xlevel(H, z - 1), at = xlevel(H, z);
        par_for(trees.size() * runs, [&](size_t w) {
            xtree &t = trees[w / runs];
            const size_t first = (w % runs) * run;
            hbs_xmss_tree_nodes(c, t.nodes.data() + (at + first) * n,
                                t.nodes.data() + (below + 2 * first) * n, t.layer, t.tree, z,
                                (uint32_t)first, run);
        });
    }
}

/* Every touched tree: leaves from the engine (up to 12 trees a call), inner nodes here. */
static int xmss_build(const hbs_leaf_engine *e, const xmss_ctx *c, const hbs_xmss_params *p,
                      const uint8_t *sk_seed, const uint8_t *pub_seed, std::vector<xtree> &trees)
{
    const unsigned H = p->tree_h;
    const size_t n = p->n, leaves = (size_t)1 << H;
    size_t per_call = e->slice_leaves / leaves;
    if (per_call > 12)
        per_call = 12;
    if (per_call == 0)
        return HBS_ERR_UNSUPPORTED;
    for (xtree &t : trees)
        t.nodes.resize((2 * leaves - 1) * n);
    std::vector<uint8_t> out(per_call * leaves * n);
    for (size_t at = 0; at < trees.size(); at += per_call) {
        const size_t m = trees.size() - at < per_call ? trees.size() - at : per_call;
        hbs_xmss_leaf_job jobs[12];
        for (size_t k = 0; k < m; k++) {
            jobs[k].func = p->func;
            jobs[k].n = p->n;
            jobs[k].padlen = p->padlen;
            jobs[k].len = p->len;
            jobs[k].pub_seed = pub_seed;
            jobs[k].sk_seed = sk_seed;
            jobs[k].layer = trees[at + k].layer;
            jobs[k].tree = trees[at + k].tree;
            jobs[k].oid = 0; /* nothing kept: this path builds its trees every batch */
            jobs[k].mt = 0;
        }
        int err = e->xmss_leaves(e->user, jobs, m, 0, leaves, out.data());
        if (err)
            return err;
        for (size_t k = 0; k < m; k++)
            memcpy(trees[at + k].nodes.data(), out.data() + k * leaves * n, leaves * n);
    }
    xmss_inner(c, trees, H, n);
    return HBS_OK;
}

static void xmss_auth(const xtree &t, unsigned H, size_t n, uint32_t leaf, uint8_t *out)
{
    for (unsigned z = 0; z < H; z++)
        memcpy(out + z * n, xnode(t, H, n, z, (leaf >> z) ^ 1), n);
}

/* The fused batch's messages on the GPU: each one's r (to r_out, 32 bytes each) and the
 * digits its bottom WOTS+ signature signs (to digits), from the uploaded bytes. */
static void xf_messages(device_ctx *d, const hbs_xmss_params *p, uint64_t first, size_t count,
                        const uint8_t *sk_prf, const uint8_t *root, const uint8_t *bytes,
                        const uint8_t *off, const uint8_t *mlen, uint8_t *r_out, uint8_t *digits)
{
    xf_msg_args m;
    memset(&m, 0, sizeof m);
    m.bytes = bytes;
    m.off = (const uint64_t *)off;
    m.mlen = (const uint32_t *)mlen;
    m.first = first;
    m.count = (uint32_t)count;
    m.len1 = p->len1;
    m.len = p->len;
    /* PRF's first block, toByte(3, 32) || SK_PRF, is the same for every message */
    hbs_sha256_ctx c;
    uint8_t blk[64];
    memset(blk, 0, 32);
    blk[31] = 3;
    memcpy(blk + 32, sk_prf, 32);
    hbs_sha256_init(&c);
    hbs_sha256_compress(c.h, blk, 1);
    memcpy(m.prf_mid, c.h, sizeof m.prf_mid);
    for (int k = 0; k < 8; k++)
        m.root[k] = sget32(root + 4 * k);
    hbs_memzero(blk, sizeof blk);
    hbs_memzero(&c, sizeof c);
    m.r = r_out;
    m.digits = digits;
    /* blocks of 32: a batch of 1,024 messages then spreads over 32 SMs, not 4 */
    xf_messages_sha256<<<(unsigned)((count + 31) / 32), 32, 0, d->stream>>>(m);
    hbs_memzero(&m, sizeof m);
}

/* Scratch of xf_levels for ntrees trees of height H: their inner nodes' address-only parts. */
static size_t xf_levels_scratch(unsigned H, uint64_t ntrees)
{
    return H <= SFS_LEVELS_BLOCK_H ? ntrees * (((size_t)1 << H) - 1) * 96 + 96 : 0;
}

/* The inner levels of trees [ka, kb) of f, their leaves in place in nodes, on stream st
 * (lvp: xf_levels_scratch bytes for kb - ka trees). */
static void xf_levels(xf_args &f, uint64_t ka, uint64_t kb, uint8_t *nodes, uint32_t *lvp,
                      cudaStream_t st)
{
    const unsigned H = f.h;
    const uint32_t nt = (uint32_t)(kb - ka);
    f.k0 = (uint32_t)ka;
    if (H <= SFS_LEVELS_BLOCK_H) {
        xf_levels_prep_sha256<<<sfs_blocks((uint64_t)nt * ((1u << H) - 1)), SFS_THREADS, 0, st>>>(f, nt, lvp);
        /* the lower half of the levels a block per subtree, then the upper half */
        const unsigned zm = H / 2 > 0 ? H / 2 : H;
        xf_levels_block_sha256<<<(unsigned)((uint64_t)nt << (H - zm)), zm > 1 ? 1u << (zm - 1) : 1u, 0, st>>>(f, nt, nodes, lvp, 1, zm);
        if (zm < H)
            xf_levels_block_sha256<<<nt, H - zm > 6 ? 512u : 32u, 0, st>>>(f, nt, nodes, lvp, zm + 1, H);
    } else {
        for (unsigned z = 1; z <= H; z++)
            xf_level_sha256<<<sfs_blocks((uint64_t)nt << (H - z)), SFS_THREADS, 0, st>>>(f, nt, z, nodes);
    }
}

/* The fused path (SHA-256, n = 32): every tree of `trees` (the bottom layer's first, from
 * tree tfirst0 on) built on the GPU, leaves and inner nodes, with the count bottom WOTS+
 * signatures (job i: message first + i, leaf leaf[i] of tree tree[i]) taken on the way and
 * written into place after each signature's r. The digits they sign are dig + i * len (r
 * already in place), or with dig null come from the messages, hashed on the GPU (r then
 * written too). The nodes come back into trees. */
static int xmss_fused(device_ctx *d, const hbs_xmss_params *p, const uint8_t *sk_seed,
                      const uint8_t *sk_prf, const uint8_t *pub_seed, const uint8_t *root,
                      std::vector<xtree> &trees, const uint64_t *tfirst,
                      const std::vector<size_t> &layer_at, uint64_t first, size_t count,
                      const uint32_t *leaf, const uint64_t *tree, const uint8_t *dig,
                      const uint8_t *const *msgs, const size_t *msglens, uint8_t *sigs,
                      size_t sb, sign_timer &tm)
{
    const unsigned H = p->tree_h, D = p->d;
    const size_t len = p->len, T = trees.size(), tn = ((size_t)2 << H) - 1;
    const uint64_t tfirst0 = tfirst[0];
    /* upload: layer[T], tree[T] (8-aligned), cap[T << H], room for the digits (the GPU
     * writes them), the messages' offsets and lengths, their bytes (or, hashed by the host,
     * their r) */
    const size_t a_tree = (4 * T + 7) & ~(size_t)7, a_cap = a_tree + 8 * T,
                 a_dig = a_cap + 4 * (T << H), a_off = (a_dig + count * len + 7) & ~(size_t)7,
                 a_mlen = a_off + 8 * count, a_jlay = a_mlen + 4 * count,
                 a_jleaf = a_jlay + 4 * count, a_jtree = (a_jleaf + 4 * count + 7) & ~(size_t)7,
                 a_msg = (a_jtree + 8 * count + 15) & ~(size_t)15;
    std::vector<uint64_t> moff(dig ? 0 : count);
    size_t mbytes = 0;
    for (size_t i = 0; i < moff.size(); i++) {
        moff[i] = mbytes;
        mbytes += msglens[i];
    }
    const size_t up_len = a_msg + (dig ? count * 32 : mbytes);
    /* on the GPU: the bottom WOTS+ signatures, then each message's r; the upper jobs (one a
     * tree below the top layer: positions, digits) and their signatures; the signatures */
    const size_t sig_bytes = count * len * 32 + count * 32, node_bytes = T * tn * 32,
                 nup = layer_at[D - 1], j_leaf = 4 * nup, j_tree = (8 * nup + 7) & ~(size_t)7,
                 j_dig = j_tree + 8 * nup, j_sig = (j_dig + nup * len + 15) & ~(size_t)15,
                 j_bytes = j_sig + nup * len * 32 + 8, out_bytes = count * sb;
    uint64_t slice_trees = SFS_F_SLICE >> H;
    if (slice_trees == 0)
        slice_trees = 1;
    /* the upper layers' trees (every signature needs them) on the side stream, beside the
     * bottom layer's, which are built in groups on the two streams by turns: each group's
     * signatures are put together and go back to the host while the next group is built */
    const uint64_t nbottom = ((first + count - 1) >> H) - tfirst0 + 1; /* signed with */
    size_t groups = out_bytes < SFS_F_GROUP_MIN_BYTES ? 1 : SFS_F_GROUPS;
    if (const char *v = getenv("HBS_GPU_SIGN_GROUPS")) { /* to compare, and to test */
        const long w = strtol(v, nullptr, 10);
        groups = w < 1 ? 1 : w > SFS_F_GROUPS_MAX ? SFS_F_GROUPS_MAX : (size_t)w;
    }
    groups = groups < nbottom ? groups : nbottom;
    /* the scratch of the biggest launch, one set per stream in use */
    const uint64_t gsize = (nbottom + groups - 1) / groups, usize = T - nbottom;
    uint64_t span = gsize > usize ? gsize : usize;
    span = span < slice_trees ? span : slice_trees;
    const bool two = groups > 1 || usize > 0;
    auto kind = [&](uint64_t trees_in) {
        return ltree_kind((trees_in < slice_trees ? trees_in : slice_trees) << H);
    };
    const bool need_lt = kind(gsize) == LT_LEVELS || (usize && kind(usize) == LT_LEVELS) ||
                         (groups > 1 && kind(nbottom / groups) == LT_LEVELS);
    uint8_t *hup, *dup, *dnodes, *dvals[2] = {nullptr, nullptr}, *dsig, *hnodes, *djobs, *dout,
            *hout;
    uint32_t *dlt[2] = {nullptr, nullptr}, *dprep[2] = {nullptr, nullptr};
    const uint32_t lt_s = xf_lt_stride((uint32_t)len), lt_u = xf_lt_upper((uint32_t)len);
    const size_t vals_b = (span << H) * len * 32, lt_b = (span << H) * lt_s * 32,
                 prep_b = (span << H) * lt_u * 96 + 96,
                 lvp_b = xf_levels_scratch(H, gsize > usize ? gsize : usize);
    uint32_t *dlvp[2] = {nullptr, nullptr}, *dupp = nullptr, *dsprep[2] = {nullptr, nullptr};
    int err;
    std::lock_guard<std::mutex> g(d->lock);
    if ((err = host_buf(d, SFS_F_UP, up_len, (void **)&hup)) ||
        (err = dev_buf(d, SFS_F_UP, up_len, (void **)&dup)) ||
        (err = dev_buf(d, SFS_F_NODES, node_bytes, (void **)&dnodes)) ||
        (err = dev_buf(d, SFS_F_VALS, vals_b, (void **)&dvals[0])) ||
        (two && (err = dev_buf(d, SFS_F_VALS2, vals_b, (void **)&dvals[1]))) ||
        (need_lt && (err = dev_buf(d, SFS_F_LT, lt_b, (void **)&dlt[0]))) ||
        (need_lt && (err = dev_buf(d, SFS_F_PREP, prep_b, (void **)&dprep[0]))) ||
        (need_lt && two && (err = dev_buf(d, SFS_F_LT2, lt_b, (void **)&dlt[1]))) ||
        (need_lt && two && (err = dev_buf(d, SFS_F_PREP2, prep_b, (void **)&dprep[1]))) ||
        (lvp_b && (err = dev_buf(d, SFS_F_LVPREP, lvp_b, (void **)&dlvp[0]))) ||
        (lvp_b && two && (err = dev_buf(d, SFS_F_LVPREP2, lvp_b, (void **)&dlvp[1]))) ||
        (err = dev_buf(d, SFS_F_SIG, sig_bytes, (void **)&dsig)) ||
        (err = dev_buf(d, SFS_F_JOBS, j_bytes, (void **)&djobs)) ||
        (err = dev_buf(d, SFS_F_UPPREP, nup * len * 15 * 64 + 64, (void **)&dupp)) ||
        (err = dev_buf(d, SFS_F_OUT, out_bytes, (void **)&dout)) ||
        (err = host_buf(d, SFS_F_NODES, node_bytes, (void **)&hnodes)) ||
        (err = host_buf(d, SFS_F_OUT, out_bytes, (void **)&hout)))
        return err;
    int32_t *cap = (int32_t *)(hup + a_cap);
    for (size_t k = 0; k < T; k++) {
        ((uint32_t *)hup)[k] = trees[k].layer;
        ((uint64_t *)(hup + a_tree))[k] = trees[k].tree;
    }
    memset(cap, 0xff, 4 * (T << H));
    for (size_t i = 0; i < count; i++)
        cap[((size_t)(tree[i] - tfirst0) << H) + leaf[i]] = (int32_t)i;
    /* each message's one-time key as a job, for the bottom trees the cache has */
    memset(hup + a_jlay, 0, 4 * count);
    memcpy(hup + a_jleaf, leaf, 4 * count);
    memcpy(hup + a_jtree, tree, 8 * count);
    if (dig) { /* hashed by the host: the digits, and r from the signatures */
        memcpy(hup + a_dig, dig, count * len);
        par_for(count, [&](size_t i) {
            memcpy(hup + a_msg + i * 32, sigs + i * sb + p->idx_bytes, 32);
        });
        HBS_CUDA(cudaMemcpyAsync(dup, hup, up_len, cudaMemcpyHostToDevice, d->stream));
    } else {
        for (size_t i = 0; i < count; i++) {
            ((uint64_t *)(hup + a_off))[i] = moff[i];
            ((uint32_t *)(hup + a_mlen))[i] = (uint32_t)msglens[i];
        }
        auto put = [&](size_t i) {
            if (msglens[i])
                memcpy(hup + a_msg + moff[i], msgs[i], msglens[i]);
        };
        if (mbytes < SFS_COPY_ALONE)
            for (size_t i = 0; i < count; i++)
                put(i);
        else
            par_for(count, put);
        HBS_CUDA(cudaMemcpyAsync(dup, hup, up_len, cudaMemcpyHostToDevice, d->stream));
        xf_messages(d, p, first, count, sk_prf, root, dup + a_msg, dup + a_off, dup + a_mlen,
                    dsig + count * len * 32, dup + a_dig);
    }
    xf_args f;
    memset(&f, 0, sizeof f);
    memcpy(f.x.pub_seed, pub_seed, 32);
    memcpy(f.x.sk_seed, sk_seed, 32);
    f.x.n = 32;
    f.x.padlen = p->padlen;
    f.x.len = (uint32_t)len;
    f.layer = (const uint32_t *)dup;
    f.tree = (const uint64_t *)(dup + a_tree);
    f.cap = (const int32_t *)(dup + a_cap);
    f.digits = dup + a_dig;
    f.sig = dsig;
    f.h = H;
    /* the key's PRF and PRF_keygen midstates (toByte(3 | 4, 32) || seed) */
    x256_mid xmid;
    {
        hbs_sha256_ctx c;
        uint8_t blk[64];
        memset(blk, 0, 32);
        blk[31] = 3;
        memcpy(blk + 32, pub_seed, 32);
        hbs_sha256_init(&c);
        hbs_sha256_compress(c.h, blk, 1);
        memcpy(xmid.prf, c.h, sizeof xmid.prf);
        blk[31] = 4;
        memcpy(blk + 32, sk_seed, 32);
        hbs_sha256_init(&c);
        hbs_sha256_compress(c.h, blk, 1);
        memcpy(xmid.keygen, c.h, sizeof xmid.keygen);
        hbs_memzero(blk, sizeof blk);
        hbs_memzero(&c, sizeof c);
    }
    xf_asm_args a;
    memset(&a, 0, sizeof a);
    a.nodes = dnodes;
    a.wots0 = dsig;
    a.r = dig ? dup + a_msg : dsig + count * len * 32;
    a.upper = djobs + j_sig;
    a.out = dout;
    a.first = first;
    for (unsigned j = 0; j < D; j++) {
        a.tfirst[j] = tfirst[j];
        a.layer_at[j] = (uint32_t)layer_at[j];
    }
    a.sb = (uint32_t)sb;
    a.idx_bytes = p->idx_bytes;
    a.len = (uint32_t)len;
    a.h = H;
    a.d = D;
    /* trees [ka, kb) on stream st with scratch set q: leaves and L-trees a slice at a time,
     * then the inner levels; then the upper jobs of those below the top layer */
    std::vector<tree_entry *> hit(T, nullptr), keep(T, nullptr);
    /* trees [ka, kb) built: leaves and L-trees a slice at a time, then the inner levels */
    auto build_trees = [&](uint64_t ka, uint64_t kb, cudaStream_t st, int q) {
        for (uint64_t k0 = ka; k0 < kb; k0 += slice_trees) {
            const uint64_t m = kb - k0 < slice_trees ? kb - k0 : slice_trees;
            f.k0 = (uint32_t)k0;
            f.leaves = m << H;
            xf_chains_sha256<<<sfs_blocks(f.leaves * len), SFS_THREADS, 0, st>>>(f, dvals[q]);
            const lt_kind lt = kind(m);
            if (lt == LT_SERIAL) {
                xf_ltree_serial_sha256<<<sfs_blocks(f.leaves), SFS_THREADS, 0, st>>>(f, dvals[q], dnodes);
            } else if (lt == LT_BLOCK) {
                xf_ltree_block_sha256<<<(unsigned)f.leaves, 64, 0, st>>>(f, dvals[q], dnodes);
            } else {
                /* level 0 from the chain ends into dlt, then back and forth with dvals */
                uint32_t *in = dlt[q], *out = (uint32_t *)dvals[q];
                xf_ltree_l0_sha256<<<sfs_blocks(f.leaves * lt_s), SFS_THREADS, 0, st>>>(f, dvals[q], dlt[q], dprep[q], dnodes);
                uint32_t l = lt_s, u0 = 0;
                while (l > 1) {
                    xf_ltree_up_sha256<<<sfs_blocks(f.leaves * (l / 2 + (l & 1))), SFS_THREADS, 0, st>>>(f, in, out, dprep[q], l, u0, dnodes);
                    u0 += l / 2;
                    l -= l / 2;
                    uint32_t *tmp = in;
                    in = out;
                    out = tmp;
                }
            }
        }
        xf_levels(f, ka, kb, dnodes, dlvp[q], st);
    };
    /* trees [ka, kb) on stream st with scratch set q: built, or copied from the cache (a
     * bottom tree that comes from there gets its messages' one-time signatures from their
     * secrets, the chains only as far as the digits); those to keep go to the cache; then
     * the upper jobs of the trees below the top layer */
    auto make = [&](uint64_t ka, uint64_t kb, cudaStream_t st, int q) {
        const uint64_t ke = kb < nup ? kb : nup; /* the roots that upper jobs sign */
        if (ka < ke)
            xf_upper_prep<<<sfs_blocks((ke - ka) * len * 15), SFS_THREADS, 0, st>>>(f, (uint32_t)ka, (uint32_t)(ke - ka), dupp + ka * len * 15 * 16);
        for (uint64_t k = ka; k < kb && !err;) {
            if (!hit[k]) {
                uint64_t kr = k;
                while (kr < kb && !hit[kr])
                    kr++;
                build_trees(k, kr, st, q);
                k = kr;
                continue;
            }
            err = cuda_err(cudaMemcpyAsync(dnodes + k * tn * 32, hit[k]->p, tn * 32,
                                           cudaMemcpyDeviceToDevice, st),
                           "cudaMemcpyAsync", __LINE__);
            if (k < nbottom) {
                const uint64_t G0 = (tfirst0 + k) << H, G1 = (tfirst0 + k + 1) << H;
                const size_t ia = G0 <= first ? 0 : (size_t)(G0 - first),
                             ib = G1 - first < count ? (size_t)(G1 - first) : count;
                xs_jobs jb;
                jb.layer = (const uint32_t *)(dup + a_jlay) + ia;
                jb.leaf = (const uint32_t *)(dup + a_jleaf) + ia;
                jb.tree = (const uint64_t *)(dup + a_jtree) + ia;
                jb.digits = dup + a_dig + ia * len;
                if (dsprep[q]) {
                    xs_prep_sha256<<<(unsigned)(ib - ia), 256, 0, st>>>(f.x, xmid, jb, (uint32_t)(ib - ia), dsprep[q]);
                    xs_sign_prepped_sha256<<<sfs_blocks((uint64_t)(ib - ia) * len), SFS_THREADS, 0, st>>>(f.x, xmid, jb, (uint32_t)(ib - ia), dsprep[q], dsig + ia * len * 32);
                } else {
                    xmss_wots_sign_sha256<<<sfs_blocks((uint64_t)(ib - ia) * len), SFS_THREADS, 0, st>>>(f.x, jb, (uint32_t)(ib - ia), dsig + ia * len * 32);
                }
            }
            k++;
        }
        for (uint64_t k = ka; k < kb && !err; k++)
            if (keep[k])
                err = cuda_err(cudaMemcpyAsync(keep[k]->p, dnodes + k * tn * 32, tn * 32,
                                               cudaMemcpyDeviceToDevice, st),
                               "cudaMemcpyAsync", __LINE__);
        if (ka < ke) {
            xf_up_args u;
            u.nodes = dnodes;
            u.layer = f.layer;
            u.tree = f.tree;
            u.job_layer = (uint32_t *)djobs;
            u.job_leaf = (uint32_t *)(djobs + j_leaf);
            u.job_tree = (uint64_t *)(djobs + j_tree);
            u.job_digits = djobs + j_dig;
            u.k0 = (uint32_t)ka;
            u.njobs = (uint32_t)(ke - ka);
            u.h = H;
            u.len1 = p->len1;
            u.len = (uint32_t)len;
            xf_upper_jobs<<<sfs_blocks(ke - ka), SFS_THREADS, 0, st>>>(u);
            xs_jobs j;
            j.layer = u.job_layer;
            j.leaf = u.job_leaf;
            j.tree = u.job_tree;
            j.digits = u.job_digits;
            xf_upper_sign<<<sfs_blocks((ke - ka) * len), SFS_THREADS, 0, st>>>(f, j, (uint32_t)ka, u.njobs, dupp + ka * len * 15 * 16, djobs + j_sig + ka * len * 32);
        }
    };
    cudaStream_t st[2] = {d->stream, d->side};
    /* events: 0 the upload (and messages) done, 1 the upper trees, 2 the nodes back, then per
     * group its signatures put together and back */
    cudaEvent_t ev[3 + 2 * SFS_F_GROUPS_MAX];
    size_t made = 0;
    for (; made < 3 + 2 * groups; made++)
        if ((err = cuda_err(cudaEventCreateWithFlags(&ev[made], cudaEventDisableTiming),
                            "cudaEventCreateWithFlags", __LINE__)))
            break;
    /* signature i's bottom tree is tree[i] - tfirst0: the first signature of group g */
    auto sig_at = [&](size_t g) -> size_t {
        const uint64_t G = (tfirst0 + nbottom * g / groups) << H;
        return g == groups ? count : G <= first ? 0 : (size_t)(G - first);
    };
    /* trees the cache has are copied, not built; kept for later batches: the top layer's
     * trees (every batch needs them) and the bottom tree of the next index (the next batch
     * signs with it). Before anything runs, the new entries' memory. */
    if (!err && tree_cache_on()) {
        uint8_t id[32];
        tree_cache_id(id, p, pub_seed, root);
        const uint64_t tick = ++d->tree_tick, next = first + count,
                       next_tree = p->h >= 64 || next < ((uint64_t)1 << p->h)
                                       ? next >> H : UINT64_MAX;
        d->tree_cache.reserve(SFS_TREE_CACHE_MAX); /* entries stay where they are */
        for (size_t k = 0; k < T; k++) {
            const uint32_t layer = trees[k].layer;
            if (layer != D - 1 && layer != 0)
                continue;
            if (!(hit[k] = tree_cache_find(d, id, layer, trees[k].tree, tn * 32, tick)) &&
                (layer == D - 1 || trees[k].tree == next_tree))
                keep[k] = tree_cache_slot(d, id, layer, trees[k].tree, tn * 32, tick);
        }
    }
    if (tm.on) {
        size_t h = 0;
        for (tree_entry *e : hit)
            h += e != nullptr;
        tm.note("trees from the cache", h, T);
    }
    /* the two-pass signing's scratch for the bottom trees from the cache, one per stream */
    {
        size_t most = 0;
        for (uint64_t k = 0; k < nbottom; k++)
            if (hit[k]) {
                const uint64_t G0 = (tfirst0 + k) << H, G1 = (tfirst0 + k + 1) << H;
                const size_t ia = G0 <= first ? 0 : (size_t)(G0 - first),
                             ib = G1 - first < count ? (size_t)(G1 - first) : count;
                most = ib - ia > most ? ib - ia : most;
            }
        const size_t b = most * len * 15 * 64;
        if (!err && most && b <= SFS_SPREP_MAX) {
            err = dev_buf(d, SFS_F_SPREP, b, (void **)&dsprep[0]);
            if (!err && two)
                err = dev_buf(d, SFS_F_SPREP2, b, (void **)&dsprep[1]);
        }
    }
    if (!err && !(err = cuda_err(cudaEventRecord(ev[0], st[0]), "cudaEventRecord", __LINE__)) &&
        usize && !(err = cuda_err(cudaStreamWaitEvent(st[1], ev[0], 0), "cudaStreamWaitEvent", __LINE__)))
        make(nbottom, T, st[1], 1);
    if (!err)
        err = cuda_err(cudaEventRecord(ev[1], st[1]), "cudaEventRecord", __LINE__);
    for (size_t g = 0; g < groups && !err; g++) {
        cudaStream_t s = st[g & 1];
        if (g == 1 && (err = cuda_err(cudaStreamWaitEvent(s, ev[0], 0), "cudaStreamWaitEvent", __LINE__)))
            break;
        make(nbottom * g / groups, nbottom * (g + 1) / groups, s, (int)(g & 1));
        a.i0 = (uint32_t)sig_at(g);
        a.count = (uint32_t)(sig_at(g + 1) - a.i0);
        if ((err = cuda_err(cudaStreamWaitEvent(s, ev[1], 0), "cudaStreamWaitEvent", __LINE__)))
            break;
        if (a.count)
            xf_assemble<<<a.count, 128, 0, s>>>(a);
        if ((err = cuda_err(cudaGetLastError(), "kernel launch", __LINE__)) ||
            (err = cuda_err(cudaEventRecord(ev[3 + 2 * g], s), "cudaEventRecord", __LINE__)) ||
            (err = cuda_err(cudaStreamWaitEvent(d->copy, ev[3 + 2 * g], 0), "cudaStreamWaitEvent", __LINE__)) ||
            (err = cuda_err(cudaMemcpyAsync(hout + (size_t)a.i0 * sb, dout + (size_t)a.i0 * sb,
                                            (size_t)a.count * sb, cudaMemcpyDeviceToHost, d->copy),
                            "cudaMemcpyAsync", __LINE__)) ||
            (err = cuda_err(cudaEventRecord(ev[4 + 2 * g], d->copy), "cudaEventRecord", __LINE__)))
            break;
    }
    const cudaEvent_t ev_nodes = ev[2];
    hbs_memzero(&f, sizeof f);
    hbs_memzero(&xmid, sizeof xmid);
    /* the nodes once every group is built (the copy stream has waited for all of them) */
    if (!err &&
        !(err = cuda_err(cudaMemcpyAsync(hnodes, dnodes, node_bytes, cudaMemcpyDeviceToHost,
                                         d->copy),
                         "cudaMemcpyAsync", __LINE__)))
        err = cuda_err(cudaEventRecord(ev_nodes, d->copy), "cudaEventRecord", __LINE__);
    /* each group's signatures into the caller's memory as they arrive */
    for (size_t g = 0; g < groups && !err; g++) {
        if ((err = cuda_err(cudaEventSynchronize(ev[4 + 2 * g]), "cudaEventSynchronize", __LINE__)))
            break;
        if (g == 0)
            tm.mark("gpu (first group)");
        const size_t a0 = sig_at(g) * sb, a1 = sig_at(g + 1) * sb;
        par_copy(sigs + a0, hout + a0, a1 - a0);
    }
    if (!err && !(err = cuda_err(cudaEventSynchronize(ev_nodes), "cudaEventSynchronize", __LINE__)))
        /* under the lock still: the pinned buffers are the pool's */
        par_for(T, [&](size_t k) {
            trees[k].nodes.resize(tn * 32);
            memcpy(trees[k].nodes.data(), hnodes + k * tn * 32, tn * 32);
        });
    if (err) {
        cudaStreamSynchronize(d->stream);
        cudaStreamSynchronize(d->side);
        cudaStreamSynchronize(d->copy);
        for (tree_entry *e : keep) /* what they hold is not known to be whole */
            if (e)
                tree_cache_drop(e);
    }
    for (size_t c = 0; c < made; c++)
        cudaEventDestroy(ev[c]);
    return err;
}

static int xmss_batch(device_ctx *d, const hbs_leaf_engine *e, const uint8_t *st, size_t stlen,
                      uint64_t first, uint8_t *sigs, size_t sb, const uint8_t *const *msgs,
                      const size_t *msglens, size_t count, bool *cpu, std::vector<xtree> &trees,
                      unsigned *tree_h, size_t *node_n, sign_timer &tm)
{
    const hbs_xmss_params *p;
    if (stlen < 24 || st[5] != 1)
        return HBS_ERR_STATE;
    p = hbs_xmss_params_by_oid(st[4], sget32(st));
    if (!p || stlen < 24 + 4 * (size_t)p->n || sget64(st + 8) != first || p->sig_bytes != sb)
        return HBS_ERR_STATE;
    const size_t n = p->n, len = p->len;
    const unsigned H = p->tree_h, D = p->d;
    const uint8_t *sk_seed = st + 24, *sk_prf = st + 24 + n, *pub_seed = st + 24 + 2 * n,
                  *root = st + 24 + 3 * n;
    const uint64_t last = first + count - 1;
    const uint32_t mask = (uint32_t)(((uint64_t)1 << H) - 1);
    /* trees per layer j: first_tree[j] .. last_tree[j] */
    uint64_t tfirst[XMSS_MAX_LAYERS], tlast[XMSS_MAX_LAYERS], leaves = 0;
    for (unsigned j = 0; j < D; j++) {
        const unsigned sh = H * (j + 1);
        tfirst[j] = sh >= 64 ? 0 : first >> sh;
        tlast[j] = sh >= 64 ? 0 : last >> sh;
        leaves += (tlast[j] - tfirst[j] + 1) << H;
    }
    if (!trees_worth_it(H, leaves, count)) {
        *cpu = true;
        return HBS_OK;
    }
    xmss_ctx c;
    hbs_xmss_ctx_init(&c, p, pub_seed, sk_seed);
    *tree_h = H;
    *node_n = n;
    std::vector<size_t> layer_at(D);
    for (unsigned j = 0; j < D; j++) {
        layer_at[j] = trees.size();
        for (uint64_t t = tfirst[j]; t <= tlast[j]; t++) {
            xtree x;
            x.layer = j;
            x.tree = t;
            trees.push_back(x);
        }
    }
    /* the trees the key's traversal state needs at the next index: without them the batch's
     * end has the GPU build the next bottom tree alone, after the batch (1 ms of an XMSS^MT
     * batch of 16,384 on the H200); here they are built beside the batch's own (at the end
     * of the list: they are not signed with) */
    const uint64_t next = first + count;
    if (D > 1 && (p->h >= 64 || next < ((uint64_t)1 << p->h)))
        for (unsigned j = 0; j < D; j++) {
            const unsigned sh = H * (j + 1);
            const uint64_t t = sh >= 64 ? 0 : next >> sh;
            if (t > tlast[j]) {
                xtree x;
                x.layer = j;
                x.tree = t;
                trees.push_back(x);
            }
        }
    /* the jobs: one per message (bottom), then one per tree below the top */
    size_t nupper = 0;
    std::vector<size_t> upper_at(D, 0);
    for (unsigned j = 1; j < D; j++) {
        upper_at[j] = count + nupper;
        nupper += (size_t)(tlast[j - 1] - tfirst[j - 1] + 1);
    }
    const size_t njobs = count + nupper;
    const size_t a_layer = 0, a_leaf = 4 * njobs, a_tree = (8 * njobs + 7) & ~(size_t)7,
                 a_dig = a_tree + 8 * njobs, total = a_dig + njobs * len;
    std::vector<uint8_t> packed(total);
    uint32_t *J_layer = (uint32_t *)(packed.data() + a_layer),
             *J_leaf = (uint32_t *)(packed.data() + a_leaf);
    uint64_t *J_tree = (uint64_t *)(packed.data() + a_tree);
    uint8_t *J_dig = packed.data() + a_dig;
    const bool fused = p->func == XMSS_FUNC_SHA256 && n == 32 && len <= XF_MAX_LEN &&
                       D <= XF_MAX_D && sb <= XF_MAX_SIG && fuse_enabled();
    /* the messages' r, H_msg and digits, over the pool; the fused path hashes them on the
     * GPU instead, unless they are too big to stage there (or HBS_GPU_SIGN_HOST_MSGS=1 has
     * the host hash them, to compare) */
    const char *hm = getenv("HBS_GPU_SIGN_HOST_MSGS");
    bool gpu_msgs = fused && !(hm && strcmp(hm, "1") == 0);
    size_t mtotal = 0;
    for (size_t i = 0; i < count && gpu_msgs; i++) {
        mtotal += msglens[i];
        gpu_msgs = msglens[i] <= UINT32_MAX && mtotal <= SFS_F_MSG_BYTES;
    }
    auto job = [&](size_t i) {
        const uint64_t G = first + i;
        if (!gpu_msgs) {
            /* (with the GPU's messages, the pass that copies r writes idx: one pass over
             * the signatures' memory, not two) */
            uint8_t *s = sigs + i * sb, digest[XMSS_MAX_N];
            xmss_put_idx(s, p->idx_bytes, G);
            hbs_xmss_prf_r(&c, s + p->idx_bytes, sk_prf, G);
            hbs_xmss_hash_msg(&c, digest, s + p->idx_bytes, root, G, msgs[i], msglens[i]);
            hbs_xmss_wots_digits(p, J_dig + i * len, digest);
        }
        J_layer[i] = 0;
        J_leaf[i] = (uint32_t)G & mask;
        J_tree[i] = G >> H;
    };
    if (gpu_msgs) /* three stores a message: the pool's wake-up would cost more */
        for (size_t i = 0; i < count; i++)
            job(i);
    else
        par_for(count, job);
    tm.mark("messages");
    int err;
    if (fused)
        err = xmss_fused(d, p, sk_seed, sk_prf, pub_seed, root, trees, tfirst, layer_at, first,
                         count, J_leaf, J_tree, gpu_msgs ? nullptr : J_dig, msgs, msglens,
                         sigs, sb, tm);
    else
        err = xmss_build(e, &c, p, sk_seed, pub_seed, trees);
    tm.mark(fused ? "copies" : "trees");
    if (fused) { /* the signatures are whole */
        hbs_xmss_ctx_wipe(&c);
        return err;
    }
    for (unsigned j = 1; j < D && !err; j++) {
        size_t job = upper_at[j];
        for (size_t k = layer_at[j - 1]; k < layer_at[j - 1] + (tlast[j - 1] - tfirst[j - 1] + 1);
             k++, job++) {
            const xtree &below = trees[k];
            hbs_xmss_wots_digits(p, J_dig + job * len, xnode(below, H, n, H, 0));
            J_layer[job] = j;
            J_leaf[job] = (uint32_t)below.tree & mask;
            J_tree[job] = below.tree >> H;
        }
    }
    std::vector<uint8_t> ots;
    if (!err && njobs) {
        xmss_args x;
        memset(&x, 0, sizeof x);
        memcpy(x.pub_seed, pub_seed, n);
        memcpy(x.sk_seed, sk_seed, n);
        x.n = (uint32_t)n;
        x.padlen = p->padlen;
        x.len = (uint32_t)len;
        ots.resize(njobs * len * n);
        const uint32_t nj = (uint32_t)njobs;
        err = run_jobs(d, packed.data(), total, ots.size(), ots.data(),
                       [&](uint8_t *dj, uint8_t *dout) {
                           xs_jobs j;
                           j.layer = (const uint32_t *)(dj + a_layer);
                           j.leaf = (const uint32_t *)(dj + a_leaf);
                           j.tree = (const uint64_t *)(dj + a_tree);
                           j.digits = dj + a_dig;
                           const unsigned b = sfs_blocks((uint64_t)nj * len);
                           if (p->func == XMSS_FUNC_SHA256 && n == 32)
                               xmss_wots_sign_sha256<<<b, SFS_THREADS, 0, d->stream>>>(x, j, nj, dout);
                           else if (p->func == XMSS_FUNC_SHA256)
                               xmss_wots_sign_generic<SF_SHA256><<<b, SFS_THREADS, 0, d->stream>>>(x, j, nj, dout);
                           else if (p->func == XMSS_FUNC_SHA512)
                               xmss_wots_sign_generic<SF_SHA512><<<b, SFS_THREADS, 0, d->stream>>>(x, j, nj, dout);
                           else if (p->func == XMSS_FUNC_SHAKE128)
                               xmss_wots_sign_generic<SF_SHAKE128><<<b, SFS_THREADS, 0, d->stream>>>(x, j, nj, dout);
                           else
                               xmss_wots_sign_generic<SF_SHAKE256><<<b, SFS_THREADS, 0, d->stream>>>(x, j, nj, dout);
                       });
        hbs_memzero(&x, sizeof x);
        tm.mark("one-time signatures");
    }
    /* assembly: idx || r || per layer, WOTS+ signature || authentication path */
    if (!err)
        par_for(count, [&](size_t i) {
            const uint64_t G = first + i;
            uint8_t *s = sigs + i * sb + p->idx_bytes + n;
            for (unsigned j = 0; j < D; j++) {
                const uint64_t below = j * H >= 64 ? 0 : G >> (j * H); /* this layer's leaf */
                const uint64_t tree = below >> H;
                const size_t job = j == 0 ? i : upper_at[j] + (size_t)(below - tfirst[j - 1]);
                memcpy(s, ots.data() + job * len * n, len * n);
                xmss_auth(trees[layer_at[j] + (size_t)(tree - tfirst[j])], H, n,
                          (uint32_t)below & mask, s + len * n);
                s += (len + H) * n;
            }
        });
    tm.mark("assembly");
    hbs_xmss_ctx_wipe(&c);
    return err;
}

/* ---- LMS / HSS ---- */

struct ltree_t {
    unsigned level;
    uint64_t inst;
    uint8_t I[16], seed[HBS_LMS_MAX_N];
    std::vector<uint8_t> T; /* T[r] for r = 1 .. 2^(h+1) - 1 at (r - 1) * m */
    uint8_t pk[24 + HBS_LMS_MAX_N];
};

struct hss_view {
    unsigned L;
    const hbs_lms_type *lms[HBS_HSS_MAX_LEVELS];
    const hbs_lmots_type *ots[HBS_HSS_MAX_LEVELS];
    unsigned shift[HBS_HSS_MAX_LEVELS];
    const uint8_t *I0, *seed0;
    const uint8_t *root0; /* the top level's root (from the public key), or NULL */
};

/* SEED and I of tree inst of level i >= 1 (lms/hss.h: derived with the top level's hash). */
static void hss_child(const hss_view &v, unsigned i, uint64_t inst, uint8_t *I, uint8_t *seed)
{
    uint8_t m[16 + 4 + 2 + 1 + 8 + HBS_LMS_MAX_N], out[32];
    const size_t len = 31 + v.lms[0]->m;
    memcpy(m, v.I0, 16);
    sput32(m + 16, i);
    m[20] = 0xff;
    m[21] = 0xfe;
    sput32(m + 23, (uint32_t)(inst >> 32));
    sput32(m + 27, (uint32_t)inst);
    memcpy(m + 31, v.seed0, v.lms[0]->m);
    m[22] = 0;
    hbs_lms_hash_many(v.lms[0]->hash, 32, out, m, len, 1);
    memcpy(seed, out, v.lms[i]->m);
    m[22] = 1;
    hbs_lms_hash_many(v.lms[0]->hash, 32, out, m, len, 1);
    memcpy(I, out, 16);
    hbs_memzero(m, sizeof m);
    hbs_memzero(out, sizeof out);
}

/* a[i] = coef(Q || Cksm(Q), i, w) (RFC 8554 section 4.4). */
static void lms_coefs(const hbs_lmots_type *o, uint8_t *a, const uint8_t *Q)
{
    const unsigned w = o->w, per_byte = 8 / w, mask = (1u << w) - 1;
    const size_t u = (size_t)o->n * per_byte;
    uint8_t qs[HBS_LMS_MAX_N + 2];
    uint32_t sum = 0;
    memcpy(qs, Q, o->n);
    for (size_t i = 0; i < u; i++) {
        a[i] = (uint8_t)((qs[i / per_byte] >> (8 - w * (unsigned)(i % per_byte + 1))) & mask);
        sum += mask - a[i];
    }
    sum <<= o->ls;
    qs[o->n] = (uint8_t)(sum >> 8);
    qs[o->n + 1] = (uint8_t)sum;
    for (size_t i = u; i < o->p; i++)
        a[i] = (uint8_t)((qs[i * w / 8] >> (8 - w * (unsigned)(i % per_byte + 1))) & mask);
}

/* The tree's public key (u32 type || u32 otstype || I || T[1]). */
static void lms_set_pk(const hss_view &v, ltree_t &t)
{
    sput32(t.pk, v.lms[t.level]->code);
    sput32(t.pk + 4, v.ots[t.level]->code);
    memcpy(t.pk + 8, t.I, 16);
    memcpy(t.pk + 24, t.T.data(), v.lms[t.level]->m);
}

static int lms_build(const hbs_leaf_engine *e, const hss_view &v, ltree_t &t)
{
    const hbs_lms_type *lt = v.lms[t.level];
    const hbs_lmots_type *o = v.ots[t.level];
    const size_t m = lt->m, leaves = (size_t)1 << lt->h;
    hbs_lms_leaf_job job;
    t.T.assign((2 * leaves - 1) * m, 0);
    job.hash = o->hash;
    job.n = o->n;
    job.w = o->w;
    job.p = o->p;
    job.h = lt->h;
    job.I = t.I;
    job.seed = t.seed;
    for (size_t at = 0; at < leaves; at += e->slice_leaves) {
        const size_t c = leaves - at < e->slice_leaves ? leaves - at : e->slice_leaves;
        int err = e->lms_leaves(e->user, &job, (uint32_t)at, c, t.T.data() + (leaves - 1 + at) * m);
        if (err)
            return err;
    }
    /* the inner nodes level by level, each level in runs of up to 64 over the pool */
    for (size_t lv = leaves / 2; lv >= 1; lv /= 2) {
        const size_t run = lv < 64 ? lv : 64;
        par_for(lv / run, [&](size_t w) {
            const size_t r0 = lv + w * run; /* first node number of the run */
            hbs_lms_nodes(lt, t.I, t.T.data() + (r0 - 1) * m, t.T.data() + (2 * r0 - 1) * m,
                          (uint32_t)r0, run);
        });
    }
    lms_set_pk(v, t);
    return HBS_OK;
}

/* The inner nodes of an LMS tree whose leaves are in place in Tk, on stream st. */
template <int NW> static void lf_levels(const lf_args &a, uint8_t *Tk, cudaStream_t st)
{
    if (a.h <= SFS_LEVELS_BLOCK_H)
        lf_levels_block_sha256<NW><<<1, 512, 0, st>>>(a, Tk);
    else
        for (uint32_t lv = 1u << (a.h - 1); lv >= 1; lv /= 2)
            lf_level_sha256<NW><<<sfs_blocks(lv), SFS_THREADS, 0, st>>>(a, lv, Tk);
}

/* One LMS tree of the fused path: chains, leaves, inner levels. A leaf hashes its whole
 * one-time public key (34 compressions at W4), so the leaves go in blocks of 32 threads:
 * a 1,024-leaf tree then spreads over 32 SMs instead of crowding 4. */
template <int NW> static void lf_tree(device_ctx *d, const lf_args &a, uint8_t *dvals, uint8_t *Tk)
{
    const uint64_t leaves = (uint64_t)1 << a.h, chains = (uint64_t)a.p << a.h;
    const unsigned lt = leaves >= 32768 ? 128 : 32;
    lf_chains_sha256<NW><<<sfs_blocks(chains), SFS_THREADS, 0, d->stream>>>(a, dvals);
    lf_leaves_sha256<NW><<<(unsigned)((leaves + lt - 1) / lt), lt, 0, d->stream>>>(a, dvals, Tk);
    lf_levels<NW>(a, Tk, d->stream);
}

/* The fused path (every level SHA-256): every tree built on the GPU, one after another
 * (each one's SEED a kernel parameter), leaves and inner nodes, the bottom level's trees
 * (trees[bottom0 ..]) signing the count messages on the way: message m at leaf q[m] of tree
 * tree[m], digits dig + m * p; its y into out[m] + 8 + n. The nodes come back into the trees. */
/* With `whole` (a one-level key: its one tree signs every message), the batch is done
 * here to the end: the messages hashed, the signatures put together and copied into
 * whole->sigs; dig and out are unused. */
struct lf_whole {
    const uint8_t *const *msgs;
    const size_t *mlens;
    uint8_t *sigs;
    size_t sb;
    uint64_t first;
};

static int lms_fused(device_ctx *d, const hss_view &v, std::vector<ltree_t> &trees,
                     size_t bottom0, size_t count, const size_t *tree, const uint32_t *q,
                     const uint8_t *dig, uint8_t *const *out, const lf_whole *whole,
                     sign_timer &tm)
{
    const unsigned b = v.L - 1;
    const size_t T = trees.size(), hb = v.lms[b]->h, pb = v.ots[b]->p, nb = v.ots[b]->n;
    const size_t nbottom = T - bottom0;
    std::vector<size_t> t_at(T + 1, 0);
    size_t vals = 0;
    for (size_t k = 0; k < T; k++) {
        const unsigned i = trees[k].level;
        t_at[k + 1] = t_at[k] + (((size_t)2 << v.lms[i]->h) - 1) * v.lms[i]->m;
        const size_t c = ((size_t)v.ots[i]->p << v.lms[i]->h) * v.ots[i]->n;
        vals = c > vals ? c : vals;
    }
    /* upload: cap, the digits (or room for them), q; with `whole`, the messages' offsets,
     * lengths and bytes. On the GPU: y, then with `whole` C and the signatures. */
    std::vector<uint64_t> moff(whole ? count : 0);
    size_t mbytes = 0;
    for (size_t m = 0; m < moff.size(); m++) {
        moff[m] = mbytes;
        mbytes += whole->mlens[m];
    }
    const size_t a_dig = 4 * (nbottom << hb), a_q = (a_dig + count * pb + 7) & ~(size_t)7,
                 a_off = a_q + ((4 * count + 7) & ~(size_t)7), a_mlen = a_off + 8 * count,
                 a_msg = a_mlen + 4 * count,
                 up_len = whole ? a_msg + mbytes : a_q + 4 * count,
                 sig_bytes = count * pb * nb + (whole ? count * nb : 0), node_bytes = t_at[T],
                 out_bytes = whole ? count * whole->sb : 0;
    uint8_t *hup, *dup, *dnodes, *dvals, *dsig, *hnodes, *hsig = nullptr, *dout = nullptr,
                                                         *hout = nullptr;
    int err;
    std::lock_guard<std::mutex> g(d->lock);
    if ((err = host_buf(d, SFS_F_UP, up_len, (void **)&hup)) ||
        (err = dev_buf(d, SFS_F_UP, up_len, (void **)&dup)) ||
        (err = dev_buf(d, SFS_F_NODES, node_bytes, (void **)&dnodes)) ||
        (err = dev_buf(d, SFS_F_VALS, vals, (void **)&dvals)) ||
        (err = dev_buf(d, SFS_F_SIG, sig_bytes, (void **)&dsig)) ||
        (err = host_buf(d, SFS_F_NODES, node_bytes, (void **)&hnodes)) ||
        (!whole && (err = host_buf(d, SFS_F_SIG, sig_bytes, (void **)&hsig))) ||
        (whole && (err = dev_buf(d, SFS_F_OUT, out_bytes, (void **)&dout))) ||
        (whole && (err = host_buf(d, SFS_F_OUT, out_bytes, (void **)&hout))))
        return err;
    int32_t *cap = (int32_t *)hup;
    memset(cap, 0xff, 4 * (nbottom << hb));
    for (size_t m = 0; m < count; m++)
        cap[((tree[m] - bottom0) << hb) + q[m]] = (int32_t)m;
    if (whole) {
        for (size_t m = 0; m < count; m++) {
            ((uint64_t *)(hup + a_off))[m] = moff[m];
            ((uint32_t *)(hup + a_mlen))[m] = (uint32_t)whole->mlens[m];
        }
        auto put = [&](size_t m) {
            if (whole->mlens[m])
                memcpy(hup + a_msg + moff[m], whole->msgs[m], whole->mlens[m]);
        };
        if (mbytes < SFS_COPY_ALONE)
            for (size_t m = 0; m < count; m++)
                put(m);
        else
            par_for(count, put);
    } else {
        memcpy(hup + a_dig, dig, count * pb);
    }
    memcpy(hup + a_q, q, 4 * count);
    /* the top level's tree from the cache, or into it for later batches (every batch of the
     * key needs it); its one-time signatures, if it is the bottom level, from the secrets */
    tree_entry *hit0 = nullptr, *keep0 = nullptr;
    if (tree_cache_on() && v.root0 && trees[0].level == 0 && v.lms[0]->h <= SFS_MAX_TREE_H) {
        uint8_t id[32];
        const uint64_t tick = ++d->tree_tick;
        lms_tree_cache_id(id, v.ots[0]->n, v.ots[0]->w, v.lms[0]->h, v.I0, v.root0);
        d->tree_cache.reserve(SFS_TREE_CACHE_MAX);
        if (!(hit0 = tree_cache_find(d, id, 0, 0, t_at[1], tick)))
            keep0 = tree_cache_slot(d, id, 0, 0, t_at[1], tick);
    }
    tm.note("trees from the cache", hit0 ? 1 : 0, T);
    err = cuda_err(cudaMemcpyAsync(dup, hup, up_len, cudaMemcpyHostToDevice, d->stream),
                   "cudaMemcpyAsync", __LINE__);
    if (!err && whole) {
        lf_msg_args ma;
        memset(&ma, 0, sizeof ma);
        ma.bytes = dup + a_msg;
        ma.off = (const uint64_t *)(dup + a_off);
        ma.mlen = (const uint32_t *)(dup + a_mlen);
        memcpy(ma.I, v.I0, 16);
        memcpy(ma.seed, v.seed0, nb);
        ma.first = whole->first;
        ma.count = (uint32_t)count;
        ma.n = (uint32_t)nb;
        ma.w = v.ots[b]->w;
        ma.p = (uint32_t)pb;
        ma.ls = v.ots[b]->ls;
        ma.h = (uint32_t)hb;
        ma.C = dsig + count * pb * nb;
        ma.digits = dup + a_dig;
        lf_messages_sha256<<<(unsigned)((count + 31) / 32), 32, 0, d->stream>>>(ma);
        hbs_memzero(&ma, sizeof ma);
    }
    for (size_t k = 0; k < T && !err; k++) {
        const unsigned i = trees[k].level, h = v.lms[i]->h;
        const hbs_lmots_type *o = v.ots[i];
        uint8_t *Tk = dnodes + t_at[k];
        lf_args a;
        memset(&a, 0, sizeof a);
        memcpy(a.I, trees[k].I, 16);
        memcpy(a.seed, trees[k].seed, o->n);
        a.n = o->n;
        a.p = o->p;
        a.w = o->w;
        a.h = h;
        if (k >= bottom0) {
            a.cap = (const int32_t *)dup + ((k - bottom0) << hb);
            a.digits = dup + a_dig;
            a.sig = dsig;
        }
        if (k == 0 && hit0) {
            err = cuda_err(cudaMemcpyAsync(Tk, hit0->p, t_at[1], cudaMemcpyDeviceToDevice,
                                           d->stream),
                           "cudaMemcpyAsync", __LINE__);
            size_t ia = 0, ib = 0; /* its messages (consecutive) */
            while (k >= bottom0 && ia < count && tree[ia] != k)
                ia++;
            for (ib = ia; k >= bottom0 && ib < count && tree[ib] == k;)
                ib++;
            if (!err && ib > ia) {
                ls_args la;
                memcpy(la.I, a.I, 16);
                memcpy(la.seed, a.seed, sizeof la.seed);
                la.n = a.n;
                la.p = a.p;
                const uint32_t nj = (uint32_t)(ib - ia);
                const uint32_t *qs = (const uint32_t *)(dup + a_q) + ia;
                const uint8_t *dg = dup + a_dig + ia * pb;
                const unsigned b = sfs_blocks((uint64_t)nj * pb);
                if (o->n == 32)
                    lms_ots_sign_sha256<8><<<b, SFS_THREADS, 0, d->stream>>>(la, qs, dg, nj, dsig + ia * pb * nb);
                else
                    lms_ots_sign_sha256<6><<<b, SFS_THREADS, 0, d->stream>>>(la, qs, dg, nj, dsig + ia * pb * nb);
                hbs_memzero(&la, sizeof la);
            }
        } else if (o->n == 32) {
            lf_tree<8>(d, a, dvals, Tk);
        } else {
            lf_tree<6>(d, a, dvals, Tk);
        }
        if (k == 0 && keep0 && !err)
            err = cuda_err(cudaMemcpyAsync(keep0->p, Tk, t_at[1], cudaMemcpyDeviceToDevice,
                                           d->stream),
                           "cudaMemcpyAsync", __LINE__);
        hbs_memzero(&a, sizeof a);
    }
    if (!err)
        err = cuda_err(cudaGetLastError(), "kernel launch", __LINE__);
    if (!err)
        err = cuda_err(cudaMemcpyAsync(hnodes, dnodes, node_bytes, cudaMemcpyDeviceToHost,
                                       d->stream),
                       "cudaMemcpyAsync", __LINE__);
    if (!err && !whole)
        err = cuda_err(cudaMemcpyAsync(hsig, dsig, sig_bytes, cudaMemcpyDeviceToHost, d->stream),
                       "cudaMemcpyAsync", __LINE__);
    if (!err && whole) {
        lf_asm_args as;
        as.T = dnodes;
        as.C = dsig + count * pb * nb;
        as.y = dsig;
        as.out = dout;
        as.first = whole->first;
        as.count = (uint32_t)count;
        as.sb = (uint32_t)whole->sb;
        as.n = (uint32_t)nb;
        as.p = (uint32_t)pb;
        as.h = (uint32_t)hb;
        as.ots_code = v.ots[b]->code;
        as.lms_code = v.lms[b]->code;
        lf_assemble<<<(unsigned)count, 128, 0, d->stream>>>(as);
        err = cuda_err(cudaGetLastError(), "kernel launch", __LINE__);
        if (!err)
            err = cuda_err(cudaMemcpyAsync(hout, dout, out_bytes, cudaMemcpyDeviceToHost,
                                           d->stream),
                           "cudaMemcpyAsync", __LINE__);
    }
    if (!err)
        err = cuda_err(cudaStreamSynchronize(d->stream), "cudaStreamSynchronize", __LINE__);
    if (err) {
        cudaStreamSynchronize(d->stream);
        if (keep0) /* what it holds is not known to be whole */
            tree_cache_drop(keep0);
        return err;
    }
    tm.mark("gpu trees+signatures");
    par_for(T, [&](size_t k) {
        trees[k].T.assign(hnodes + t_at[k], hnodes + t_at[k + 1]);
        lms_set_pk(v, trees[k]);
    });
    if (whole) {
        par_copy(whole->sigs, hout, out_bytes);
    } else {
        par_for(count, [&](size_t m) { memcpy(out[m] + 8 + nb, hsig + m * pb * nb, pb * nb); });
    }
    return HBS_OK;
}

/* One LMS signature being made: where it goes and what it signs. */
struct lsig {
    size_t tree;  /* index into the trees */
    uint32_t q;
    uint8_t *out; /* q || ots type || C || y || lms type || path */
};

static int hss_batch(device_ctx *d, const hbs_leaf_engine *e, const uint8_t *st, size_t stlen,
                     const uint8_t *pk, size_t pklen, uint64_t first, uint8_t *sigs, size_t sb,
                     const uint8_t *const *msgs, const size_t *msglens, size_t count, bool *cpu,
                     std::vector<ltree_t> &trees, sign_timer &tm)
{
    hss_view v;
    size_t off;
    if (stlen < 8 || memcmp(st, "HSSK", 4) != 0 || st[4] != 1)
        return HBS_ERR_STATE;
    v.L = st[5];
    if (v.L < 1 || v.L > HBS_HSS_MAX_LEVELS || stlen < 8 + 8 * (size_t)v.L)
        return HBS_ERR_STATE;
    off = 8;
    unsigned maxh = 0, total_h = 0;
    for (unsigned i = 0; i < v.L; i++, off += 8) {
        v.lms[i] = hbs_lms_type_by_code(sget32(st + off));
        v.ots[i] = hbs_lmots_type_by_code(sget32(st + off + 4));
        if (!hbs_lms_types_match(v.lms[i], v.ots[i]))
            return HBS_ERR_STATE;
        maxh = v.lms[i]->h > maxh ? v.lms[i]->h : maxh;
        total_h += v.lms[i]->h;
    }
    if (stlen < off + 16 + v.lms[0]->m + 16 || sget64(st + off + 16 + v.lms[0]->m) != first)
        return HBS_ERR_STATE;
    v.I0 = st + off;
    v.seed0 = st + off + 16;
    /* the public key, u32 L || u32 type || u32 otstype || I || T[1], names the top tree */
    v.root0 = pk && pklen == 28 + (size_t)v.lms[0]->m && sget32(pk) == v.L &&
                      sget32(pk + 4) == v.lms[0]->code && sget32(pk + 8) == v.ots[0]->code &&
                      memcmp(pk + 12, v.I0, 16) == 0
                  ? pk + 28
                  : nullptr;
    for (unsigned i = v.L, s = 0; i-- > 0;) {
        v.shift[i] = s;
        s += v.lms[i]->h;
    }
    size_t need = 4;
    for (unsigned i = 0; i < v.L; i++)
        need += hbs_lms_sig_bytes(v.lms[i], v.ots[i]) + (i ? 24 + v.lms[i]->m : 0);
    if (need != sb || total_h > 63)
        return HBS_ERR_STATE;
    const uint64_t last = first + count - 1;
    uint64_t ifirst[HBS_HSS_MAX_LEVELS], ilast[HBS_HSS_MAX_LEVELS], leaves = 0;
    for (unsigned i = 0; i < v.L; i++) {
        const unsigned sh = v.shift[i] + v.lms[i]->h;
        ifirst[i] = sh >= 64 ? 0 : first >> sh;
        ilast[i] = sh >= 64 ? 0 : last >> sh;
        leaves += (ilast[i] - ifirst[i] + 1) << v.lms[i]->h;
    }
    if (!trees_worth_it(maxh, leaves, count)) {
        *cpu = true;
        return HBS_OK;
    }
    size_t level_at[HBS_HSS_MAX_LEVELS];
    int err = HBS_OK;
    for (unsigned i = 0; i < v.L; i++) {
        level_at[i] = trees.size();
        for (uint64_t k = ifirst[i]; k <= ilast[i]; k++) {
            trees.emplace_back();
            ltree_t &t = trees.back();
            t.level = i;
            t.inst = k;
            if (i == 0) {
                memcpy(t.I, v.I0, 16);
                memcpy(t.seed, v.seed0, v.lms[0]->m);
            } else {
                hss_child(v, i, k, t.I, t.seed);
            }
        }
    }
    /* the signatures: the top L-1 levels sign each touched child tree's key, the bottom
     * level each message; upper ones go in per-tree scratch, bottom ones in place */
    std::vector<lsig> jobs;
    std::vector<std::vector<uint8_t>> upper(trees.size());
    for (unsigned i = 1; i < v.L; i++)
        for (size_t k = level_at[i]; k < level_at[i] + (ilast[i] - ifirst[i] + 1); k++) {
            const ltree_t &child = trees[k];
            const unsigned pl = i - 1;
            const uint64_t pinst = child.inst >> v.lms[pl]->h;
            lsig s;
            s.tree = level_at[pl] + (size_t)(pinst - ifirst[pl]);
            s.q = (uint32_t)(child.inst & ((1u << v.lms[pl]->h) - 1));
            upper[k].assign(hbs_lms_sig_bytes(v.lms[pl], v.ots[pl]), 0);
            s.out = upper[k].data();
            jobs.push_back(s);
        }
    const size_t nupper = jobs.size();
    jobs.resize(nupper + count);
    std::vector<size_t> dig_at(jobs.size() + 1, 0);
    {
        const unsigned b = v.L - 1;
        const size_t bottom_sig = hbs_lms_sig_bytes(v.lms[b], v.ots[b]);
        for (size_t m = 0; m < count; m++) {
            const uint64_t G = first + m;
            lsig &s = jobs[nupper + m];
            s.tree = level_at[b] + (size_t)((G >> v.lms[b]->h) - ifirst[b]);
            s.q = (uint32_t)(G & ((1u << v.lms[b]->h) - 1));
            s.out = sigs + m * sb + sb - bottom_sig;
        }
    }
    for (size_t k = 0; k < jobs.size(); k++)
        dig_at[k + 1] = dig_at[k] + v.ots[trees[jobs[k].tree].level]->p;
    std::vector<uint8_t> a_all(dig_at[jobs.size()]); /* digits, job-major */
    /* C, Q and the digits of job k on the host; q and the types written now */
    auto prepare = [&](size_t k) {
        const lsig &s = jobs[k];
        const ltree_t &t = trees[s.tree];
        const hbs_lmots_type *o = v.ots[t.level];
        const uint8_t *msg;
        size_t mlen;
        uint8_t Q[HBS_LMS_MAX_N];
        if (k < nupper) {
            /* the child's key: the job order above follows the trees of levels 1 .. L-1 */
            const ltree_t &child = trees[level_at[1] + k];
            msg = child.pk;
            mlen = 24 + v.lms[child.level]->m;
        } else {
            msg = msgs[k - nupper];
            mlen = msglens[k - nupper];
        }
        sput32(s.out, s.q);
        sput32(s.out + 4, o->code);
        hbs_lmots_randomizer(o, s.out + 8, t.I, s.q, t.seed);
        hbs_lmots_message_hash(o, Q, t.I, s.q, s.out + 8, msg, mlen);
        lms_coefs(o, a_all.data() + dig_at[k], Q);
    };
    bool fused = fuse_enabled();
    for (unsigned i = 0; i < v.L; i++)
        fused = fused && v.ots[i]->hash == HBS_LMS_HASH_SHA256 && v.lms[i]->m == v.ots[i]->n &&
                (v.ots[i]->n == 32 || v.ots[i]->n == 24);
    /* a one-level key's batch is done on the GPU to the end (messages hashed, signatures
     * put together) unless the messages are too big to stage there (or
     * HBS_GPU_SIGN_HOST_MSGS=1 has the host do it, to compare) */
    const char *hm = getenv("HBS_GPU_SIGN_HOST_MSGS");
    bool whole = fused && v.L == 1 && !(hm && strcmp(hm, "1") == 0);
    size_t mtotal = 0;
    for (size_t m = 0; m < count && whole; m++) {
        mtotal += msglens[m];
        whole = msglens[m] <= UINT32_MAX && mtotal <= SFS_F_MSG_BYTES;
    }
    /* the bottom jobs' digits need no tree: they are hashed first, over the pool */
    if (!whole)
        par_for(count, [&](size_t m) { prepare(nupper + m); });
    tm.mark("messages");
    size_t kend = jobs.size(); /* the jobs the chains below still sign */
    if (fused) {
        std::vector<size_t> jt(count);
        std::vector<uint32_t> jq(count);
        std::vector<uint8_t *> jo(count);
        for (size_t m = 0; m < count; m++) {
            jt[m] = jobs[nupper + m].tree;
            jq[m] = jobs[nupper + m].q;
            jo[m] = jobs[nupper + m].out;
        }
        lf_whole wh = {msgs, msglens, sigs, sb, first};
        err = lms_fused(d, v, trees, level_at[v.L - 1], count, jt.data(), jq.data(),
                        a_all.data() + dig_at[nupper], jo.data(), whole ? &wh : nullptr, tm);
        kend = nupper;
    } else {
        for (size_t k = 0; k < trees.size() && !err; k++)
            err = lms_build(e, v, trees[k]);
    }
    tm.mark(fused ? "copies" : "trees");
    for (size_t k = 0; k < nupper && !err; k++)
        prepare(k);
    /* the chains: one launch per tree (its I and SEED are the kernel's parameters) */
    for (size_t k = 0; k < kend && !err;) {
        const size_t tr = jobs[k].tree;
        const hbs_lmots_type *o = v.ots[trees[tr].level];
        const size_t n = o->n, p = o->p;
        size_t end = k;
        while (end < kend && jobs[end].tree == tr)
            end++;
        const size_t nj = end - k;
        std::vector<uint8_t> packed(4 * nj + nj * p), y(nj * p * n);
        for (size_t i = 0; i < nj; i++)
            memcpy(packed.data() + 4 * i, &jobs[k + i].q, 4);
        memcpy(packed.data() + 4 * nj, a_all.data() + dig_at[k], nj * p);
        ls_args la;
        memset(&la, 0, sizeof la);
        memcpy(la.I, trees[tr].I, 16);
        memcpy(la.seed, trees[tr].seed, n);
        la.n = (uint32_t)n;
        la.p = (uint32_t)p;
        err = run_jobs(d, packed.data(), packed.size(), y.size(), y.data(),
                       [&](uint8_t *dj, uint8_t *dout) {
                           const uint32_t *qs = (const uint32_t *)dj;
                           const uint8_t *dg = dj + 4 * nj;
                           const unsigned b = sfs_blocks((uint64_t)nj * p);
                           if (o->hash == HBS_LMS_HASH_SHA256 && n == 32)
                               lms_ots_sign_sha256<8><<<b, SFS_THREADS, 0, d->stream>>>(la, qs, dg, (uint32_t)nj, dout);
                           else if (o->hash == HBS_LMS_HASH_SHA256)
                               lms_ots_sign_sha256<6><<<b, SFS_THREADS, 0, d->stream>>>(la, qs, dg, (uint32_t)nj, dout);
                           else
                               lms_ots_sign_shake<<<b, SFS_THREADS, 0, d->stream>>>(la, qs, dg, (uint32_t)nj, dout);
                       });
        hbs_memzero(&la, sizeof la);
        if (!err)
            par_for(nj, [&](size_t i) {
                memcpy(jobs[k + i].out + 8 + n, y.data() + i * p * n, p * n);
            });
        k = end;
    }
    tm.mark("one-time signatures");
    /* assembly: L-1 || (signature of level i's key by level i-1 || level i's key) ...,
     * and every LMS signature's type and path (done on the GPU for a whole batch) */
    if (!err && !whole) {
        par_for(jobs.size(), [&](size_t k) {
            const lsig &s = jobs[k];
            const ltree_t &t = trees[s.tree];
            const hbs_lms_type *lt = v.lms[t.level];
            const size_t ots_len = hbs_lmots_sig_bytes(v.ots[t.level]);
            sput32(s.out + 4 + ots_len, lt->code);
            uint8_t *path = s.out + 8 + ots_len;
            uint32_t r = (1u << lt->h) + s.q;
            for (unsigned z = 0; z < lt->h; z++, r >>= 1)
                memcpy(path + z * lt->m, t.T.data() + (size_t)((r ^ 1) - 1) * lt->m, lt->m);
        });
        par_for(count, [&](size_t m) {
            const uint64_t G = first + m;
            uint8_t *s = sigs + m * sb;
            size_t at = 4;
            sput32(s, v.L - 1);
            for (unsigned i = 1; i < v.L; i++) {
                const size_t k =
                    level_at[i] + (size_t)((G >> (v.shift[i] + v.lms[i]->h)) - ifirst[i]);
                memcpy(s + at, upper[k].data(), upper[k].size());
                at += upper[k].size();
                memcpy(s + at, trees[k].pk, 24 + v.lms[i]->m);
                at += 24 + v.lms[i]->m;
            }
        });
    }
    tm.mark("assembly");
    for (ltree_t &t : trees)
        hbs_memzero(t.seed, sizeof t.seed);
    return err;
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
static bool tree_fill_take(device_ctx *d, const std::vector<uint32_t> &layer,
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
static void tree_fill_start(device_ctx *d, const std::vector<const uint8_t *> &src,
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

/* XMSS (SHA-256, n = 32): the trees of layers 0 and d - 1 among jobs, when they are whole
 * and the top layer's is one of them (its root, the key's, names the key's trees). */
void tree_cache_keep_xmss(device_ctx *d, const hbs_xmss_leaf_job *jobs, size_t njobs,
                          uint32_t first, size_t count, const uint8_t *dleaves)
{
    if (!tree_cache_on() || first != 0 || njobs == 0 || njobs > SF_MAX_TREES || !jobs[0].oid)
        return;
    const hbs_xmss_params *p = hbs_xmss_params_by_oid(jobs[0].mt, jobs[0].oid);
    if (!p || p->func != XMSS_FUNC_SHA256 || p->n != 32 || jobs[0].n != 32 ||
        p->tree_h > SFS_MAX_TREE_H || count != (size_t)1 << p->tree_h)
        return;
    const unsigned H = p->tree_h, D = p->d;
    const size_t tn = ((size_t)2 << H) - 1, lvp_b = xf_levels_scratch(H, njobs);
    size_t top = njobs;
    std::vector<uint32_t> layer;
    std::vector<uint64_t> tree;
    std::vector<size_t> which;
    for (size_t k = 0; k < njobs; k++) {
        if (jobs[k].layer == D - 1 && jobs[k].tree == 0)
            top = k;
        if (jobs[k].layer == 0 || jobs[k].layer == D - 1) {
            layer.push_back(jobs[k].layer);
            tree.push_back(jobs[k].tree);
            which.push_back(k);
        }
    }
    if (top == njobs)
        return;
    /* (staged from pageable memory: the copy has its bytes when it returns, where a pinned
     * buffer of the pool could be written over by the next call before the copy runs) */
    const size_t a_tree = (4 * njobs + 7) & ~(size_t)7, up = a_tree + 8 * njobs;
    std::vector<uint8_t> hv(up);
    uint8_t *hup = hv.data(), *dup, *dnodes;
    uint32_t *dlvp = nullptr;
    if (dev_buf(d, SFS_F_UP, up, (void **)&dup) ||
        dev_buf(d, SFS_F_NODES, njobs * tn * 32, (void **)&dnodes) ||
        (lvp_b && dev_buf(d, SFS_F_LVPREP, lvp_b, (void **)&dlvp)) ||
        !tree_fill_take(d, layer, tree, tn * 32)) {
        gpu_clear_error();
        return;
    }
    for (size_t k = 0; k < njobs; k++) {
        ((uint32_t *)hup)[k] = jobs[k].layer;
        ((uint64_t *)(hup + a_tree))[k] = jobs[k].tree;
    }
    bool ok = cudaMemcpyAsync(dup, hup, up, cudaMemcpyHostToDevice, d->stream) == cudaSuccess;
    for (size_t k = 0; k < njobs && ok; k++)
        ok = cudaMemcpyAsync(dnodes + k * tn * 32, dleaves + k * count * 32, count * 32,
                             cudaMemcpyDeviceToDevice, d->stream) == cudaSuccess;
    xf_args f;
    memset(&f, 0, sizeof f);
    memcpy(f.x.pub_seed, jobs[0].pub_seed, 32); /* the levels need no secret */
    f.x.n = 32;
    f.x.padlen = p->padlen;
    f.x.len = p->len;
    f.layer = (const uint32_t *)dup;
    f.tree = (const uint64_t *)(dup + a_tree);
    f.h = H;
    if (ok)
        xf_levels(f, 0, njobs, dnodes, dlvp, d->stream);
    std::vector<const uint8_t *> src;
    for (size_t i = 0; i < d->fill.e.size(); i++)
        src.push_back(dnodes + which[i] * tn * 32);
    std::array<uint8_t, 32> ps;
    memcpy(ps.data(), jobs[0].pub_seed, 32);
    d->fill.name = [p, ps](const uint8_t *root, uint8_t id[32]) {
        tree_cache_id(id, p, ps.data(), root);
    };
    tree_fill_start(d, src, dnodes + (top * tn + tn - 1) * 32, 32, ok);
}

/* LMS (SHA-256): a whole tree, named by its own type, I and root. */
void tree_cache_keep_lms(device_ctx *d, const hbs_lms_leaf_job *j, uint32_t first,
                         size_t count, const uint8_t *dleaves)
{
    if (!tree_cache_on() || first != 0 || j->hash != HBS_LMS_HASH_SHA256 ||
        (j->n != 32 && j->n != 24) || j->h > SFS_MAX_TREE_H || count != (size_t)1 << j->h)
        return;
    const size_t n = j->n, bytes = (2 * count - 1) * n;
    uint8_t *dT;
    if (dev_buf(d, SFS_F_NODES, bytes, (void **)&dT) ||
        !tree_fill_take(d, std::vector<uint32_t>(1, 0), std::vector<uint64_t>(1, 0), bytes)) {
        gpu_clear_error();
        return;
    }
    lf_args a;
    memset(&a, 0, sizeof a); /* the levels need no secret */
    memcpy(a.I, j->I, 16);
    a.n = (uint32_t)n;
    a.p = j->p;
    a.w = j->w;
    a.h = j->h;
    const bool ok = cudaMemcpyAsync(dT + (count - 1) * n, dleaves, count * n,
                                    cudaMemcpyDeviceToDevice, d->stream) == cudaSuccess;
    if (ok && n == 32)
        lf_levels<8>(a, dT, d->stream);
    else if (ok)
        lf_levels<6>(a, dT, d->stream);
    std::array<uint8_t, 16> I;
    memcpy(I.data(), j->I, 16);
    const unsigned nn = j->n, w = j->w, h = j->h;
    d->fill.name = [nn, w, h, I](const uint8_t *root, uint8_t id[32]) {
        lms_tree_cache_id(id, nn, w, h, I.data(), root);
    };
    tree_fill_start(d, std::vector<const uint8_t *>(1, dT), dT, n, ok);
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

} // namespace hbs_gpu

using namespace hbs_gpu;

/* The batch after the checks: reserve, sign, move the key on. The reservation (a file
 * write and fsync) runs in a thread of its own while the GPU signs from a copy of the
 * state: nothing is released unless it succeeded. */
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
    device_ctx *d = (device_ctx *)e.user;
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
    /* from the moment this starts the indices may be used, whatever happens */
    auto reserve_fn = [&] {
        uint8_t *st2 = NULL;
        size_t len2 = 0;
        const double t0 = now_ms();
        res_err = hbs_stateful_batch_begin(key, count, &res_first, &st2, &len2);
        hbs_stateful_batch_free_state(st2, len2);
        res_ms = now_ms() - t0;
    };
    std::thread reserve;
    try {
        reserve = std::thread(reserve_fn);
    } catch (...) {
        reserve_fn(); /* no thread to be had: first the reservation, then the rest */
    }
    tm.mark("state");
    /* nothing may throw across the C interface: out of memory is an error code */
    try {
        if (family == HBS_STATEFUL_HSS)
            err = hss_batch(d, &e, state, statelen, pklen ? pk : nullptr, pklen, first, sigs,
                            sb, msgs, msglens, count, &cpu, lt, tm);
        else
            err = xmss_batch(d, &e, state, statelen, first, sigs, sb, msgs, msglens, count,
                             &cpu, xt, &cache.H, &cache.n, tm);
    } catch (const std::bad_alloc &) {
        err = HBS_ERR_NO_MEMORY;
    } catch (...) {
        err = HBS_ERR_GPU;
    }
    hbs_stateful_batch_free_state(state, statelen);
    if (reserve.joinable())
        reserve.join();
    if (tm.on) {
        char b[64];
        snprintf(b, sizeof b, "reserve (beside) %.3f", res_ms);
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
