/* Key generation of LMS/HSS and XMSS/XMSS^MT on the GPU.
 *
 * The GPU is a leaf engine (core/leaf_engine.h): the CPU key generation asks it for the
 * leaves of whole trees, slice by slice, and builds the trees, the traversal state and the
 * key file from them with its own code, so the key is byte-identical to a CPU-made one.
 * The leaves are nearly all of the work: an LMS leaf at W8 is 34 chains of 255 hashes, an
 * XMSS leaf 67 chains of 15 F calls (4 compressions each) and an L-tree.
 *
 * Two kernels per slice: one thread per chain (secret start, whole chain, public end to
 * device memory), then the leaves from the chain ends (LMS: one thread per leaf hashes the
 * one-time public key; XMSS: the L-trees level by level in shared memory, several leaves a
 * block with SHA-256 and n = 32, one leaf a block otherwise, or a thread per leaf for big
 * slices). The SHA-256 sets with n = 32 (and LMS n = 24) run their chains on register-only
 * code; the rest use the byte streams of stateful_hash.cuh. The layers of an XMSS^MT key
 * go in one launch (1,024-leaf trees alone leave most of the GPU idle). Seeds travel as
 * kernel parameters only: no device buffer ever holds one (chain ends and leaves are
 * public). */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mutex>
#include <vector>

#include "core/leaf_engine.h"
#include "gpu/gpu_internal.h"
#include "gpu/host_clock.h"
#include "gpu/hash.cuh"
#include "gpu/spread.h"
#include "gpu/stateful_device.cuh"
#include "gpu/stateful_hash.cuh"
#include "hbs/gpu.h"

namespace hbs_gpu {

/* Pool slots of this file, clear of the SLH-DSA ones. */
enum { SF_D_CHAINS = 48, SF_D_LEAVES = 49 };

/* Leaves per engine call: 2^18 LMS W8 leaves take 285 MB of chain ends. */
#define SF_SLICE_LEAVES ((size_t)1 << 18)
/* Trees below this many leaves stay on the CPU. */
#define SF_MIN_LEAVES 32

#define SF_THREADS 256
/* The XMSS chain kernel's blocks in launches of up to SF_SMALL_CHAINS chains: small, so that
 * the last blocks spread thin over the SMs (H200, the 2,048 leaves of an XMSS^MT key's two
 * trees: 758 us with 256 threads, whose 536 blocks are 4.06 per SM, so the SMs given a fifth
 * ran it alone at the end; 705 us with 64, 128 or 32). Bigger launches keep SF_THREADS (the
 * batch signer's 4,096 leaves: 1,373 us against 1,464 with 64; XMSS_16 key generation lost
 * 5 % with 64). */
#define SF_CHAIN_THREADS 64
#define SF_SMALL_CHAINS ((uint64_t)1 << 18)
/* From this many XMSS leaves on, one thread reduces a whole L-tree (enough leaves fill the
 * GPU); below, several leaves' L-trees a block (x256_ltree_packed). */
#define SF_SERIAL_LTREE 16384
/* Whole trees (the engine's xmss_trees) up to this height (SFS_MAX_TREE_H, the batch
 * signer's): 4 MB of nodes a tree. */
#define SF_MAX_WHOLE_H 16

/* ---- LMS (RFC 8554) ---- */

struct lms_args {
    uint8_t I[16];
    uint8_t seed[32];
    uint32_t first, count; /* leaves first .. first + count - 1 */
    uint32_t n, p, w, h;
};

/* Chain i of leaf q: x = H(I || q || i || 0xff || SEED), then 2^w - 1 steps; the end goes
 * to y (leaf-major: chain t = leaf * p + i). */
template <int NW> __global__ void lms_chains_sha256(lms_args a, uint8_t *y)
{
    const uint64_t t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= (uint64_t)a.count * a.p)
        return;
    const uint32_t q = a.first + (uint32_t)(t / a.p), i = (uint32_t)(t % a.p);
    uint32_t v[NW];
    lms_chain_sha256<NW, false>(v, a.I, a.seed, q, i, (1u << a.w) - 1, 0, nullptr);
#pragma unroll
    for (int k = 0; k < NW; k++)
        put_be32(y + t * (4 * NW) + 4 * k, v[k]);
}

__global__ void lms_chains_shake(lms_args a, uint8_t *y)
{
    const uint64_t t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= (uint64_t)a.count * a.p)
        return;
    const uint32_t q = a.first + (uint32_t)(t / a.p), i = (uint32_t)(t % a.p), n = a.n;
    uint8_t m[23 + 32];
    lms_chain_shake<false>(m, a.I, a.seed, n, q, i, (1u << a.w) - 1, 0, nullptr);
    for (uint32_t k = 0; k < n; k++)
        y[t * n + k] = m[23 + k];
}

/* Leaf q: K = H(I || q || D_PBLC || y[0..p-1]), then T[2^h + q] = H(I || r || D_LEAF || K). */
template <int F> __global__ void lms_leaf_kernel(lms_args a, const uint8_t *y, uint8_t *out)
{
    const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= a.count)
        return;
    const uint32_t n = a.n;
    lms_leaf_stream<F>(a.I, a.first + t, a.h, a.p, n, y + (uint64_t)t * a.p * n,
                       out + (uint64_t)t * n);
}

/* The same for SHA-256, word-wise (lms_hash_words), in blocks of SF_LEAF_THREADS: a
 * leaf is 18 (W8) to 68 (W1) serial compressions, and 1,024 leaves in blocks of 256 would
 * crowd 4 SMs. */
#define SF_LEAF_THREADS 32
template <int NW> __global__ void lms_leaf_sha256(lms_args a, const uint8_t *y, uint8_t *out)
{
    const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < a.count)
        lms_leaf_words<NW>(a.I, a.first + t, a.h, a.p, y + (uint64_t)t * a.p * (4 * NW),
                           out + (uint64_t)t * (4 * NW));
}

/* ---- XMSS (RFC 8391) ---- */

template <int F> __global__ void xmss_chains_generic(xmss_args x, uint8_t *vals)
{
    const uint64_t t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= (uint64_t)x.ntrees * x.count * x.len)
        return;
    const uint32_t i = (uint32_t)(t % x.len);
    uint8_t adrs[32], v[64], m[64 + 64 + 64 + 32];
    adrs_set(adrs, 4, adrs_base(adrs, x, (uint32_t)(t / x.len), 0));
    adrs_set(adrs, 5, i);
    x_secret<F>(v, x, adrs, m);
    for (uint32_t s = 0; s < 15; s++) {
        adrs_set(adrs, 6, s);
        x_thash<F>(v, x, adrs, v, 1);
    }
    for (unsigned k = 0; k < x.n; k++)
        vals[t * x.n + k] = v[k];
}

/* One block per leaf: the L-tree of its len chain ends, a level at a time in shared
 * memory, one thread per parent. */
template <int F> __global__ void xmss_ltree_generic(xmss_args x, const uint8_t *vals, uint8_t *out)
{
    extern __shared__ uint8_t node[]; /* len * n */
    const uint32_t b = blockIdx.x, tid = threadIdx.x, n = x.n;
    const uint8_t *src = vals + (uint64_t)b * x.len * n;
    uint8_t adrs[32], res[64];
    for (uint32_t k = tid; k < x.len * n; k += blockDim.x)
        node[k] = src[k];
    __syncthreads();
    adrs_set(adrs, 4, adrs_base(adrs, x, b, 1));
    uint32_t l = x.len;
    for (uint32_t height = 0; l > 1; height++) {
        const uint32_t parents = l / 2;
        if (tid < parents) {
            adrs_set(adrs, 5, height);
            adrs_set(adrs, 6, tid);
            x_thash<F>(res, x, adrs, node + 2 * tid * n, 2);
        }
        __syncthreads();
        if (tid < parents)
            for (uint32_t k = 0; k < n; k++)
                node[tid * n + k] = res[k];
        if ((l & 1) && tid == 0)
            for (uint32_t k = 0; k < n; k++)
                node[parents * n + k] = node[(l - 1) * n + k];
        __syncthreads();
        l -= parents;
    }
    if (tid == 0)
        for (uint32_t k = 0; k < n; k++)
            out[(uint64_t)b * n + k] = node[k];
}


template <int FORM>
__global__ void xmss_chains_sha256(xmss_args x, x256_mid mid, uint8_t *vals)
{
    const uint64_t t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= (uint64_t)x.ntrees * x.count * x.len)
        return;
    const uint32_t g = (uint32_t)(t / x.len), k = g / x.count, i = (uint32_t)(t % x.len);
    uint32_t a[8], v[8], w[16], pm[8];
    a[0] = x.layer[k];
    a[1] = (uint32_t)(x.tree[k] >> 32);
    a[2] = (uint32_t)x.tree[k];
    a[3] = 0;
    a[4] = x.first + g % x.count;
    a[5] = i;
    a[6] = 0;
    a[7] = 0;
    /* PRF_keygen: PUB_SEED || ADRS, then a padding block (128 bytes in all) */
#pragma unroll
    for (int k = 0; k < 8; k++) {
        w[k] = be32(x.pub_seed + 4 * k);
        w[8 + k] = a[k];
        v[k] = mid.keygen[k];
        pm[k] = mid.prf[k];
    }
    x256_compress<true>(v, w);
    w[0] = 0x80000000u;
#pragma unroll
    for (int k = 1; k < 15; k++)
        w[k] = 0;
    w[15] = 1024;
    x256_compress<true>(v, w);
    x256_chain<FORM>(v, pm, a, 0, 15, [](uint32_t, const uint32_t *) {});
#pragma unroll
    for (int k = 0; k < 8; k++)
        put_be32(vals + t * 32 + 4 * k, v[k]);
}

/* The L-trees of x256_lt_pack(len) leaves per block (x256_ltree_packed); the chain ends
 * in, a leaf each out. INL: the compressions inline (ltree_inl). */
template <bool INL>
__global__ void __launch_bounds__(X256_LT_THREADS)
    xmss_ltree_sha256(xmss_args x, x256_mid mid, const uint8_t *vals, uint8_t *out)
{
    const uint32_t total = x.ntrees * x.count, P = x256_lt_pack(x.len), g0 = blockIdx.x * P;
    if (g0 >= total)
        return;
    const uint32_t leaves = total - g0 < P ? total - g0 : P;
    x256_ltree_block<INL>(
        vals + (uint64_t)g0 * x.len * 32, x.len, leaves, mid.prf,
        [&](uint32_t p, uint32_t a[8]) {
            const uint32_t g = g0 + p, k = g / x.count;
            a[0] = x.layer[k];
            a[1] = (uint32_t)(x.tree[k] >> 32);
            a[2] = (uint32_t)x.tree[k];
            a[3] = 1;
            a[4] = x.first + g % x.count;
            a[5] = a[6] = a[7] = 0;
        },
        [&](uint32_t p, const uint32_t *root) {
            for (int k = 0; k < 8; k++)
                put_be32(out + (uint64_t)(g0 + p) * 32 + 4 * k, root[k]);
        });
}

/* The L-tree of one leaf per thread, in place over its chain ends: for big slices, where
 * every thread has a whole L-tree to hash and the launch still fills the GPU. */
__global__ void xmss_ltree_sha256_serial(xmss_args x, x256_mid mid, uint8_t *vals, uint8_t *out)
{
    const uint32_t g = blockIdx.x * blockDim.x + threadIdx.x;
    if (g >= x.ntrees * x.count)
        return;
    uint32_t *node = reinterpret_cast<uint32_t *>(vals + (uint64_t)g * x.len * 32);
    const uint32_t k = g / x.count;
    uint32_t a[8], pm[8];
    for (int w = 0; w < 8; w++)
        pm[w] = mid.prf[w];
    a[0] = x.layer[k];
    a[1] = (uint32_t)(x.tree[k] >> 32);
    a[2] = (uint32_t)x.tree[k];
    a[3] = 1;
    a[4] = x.first + g % x.count;
    x256_ltree_serial(node, x.len, pm, a);
    for (int w = 0; w < 8; w++)
        reinterpret_cast<uint32_t *>(out + (uint64_t)g * 32)[w] = node[w];
}

/* ---- the engine ---- */

/* HBS_GPU_KEYGEN_TIMING=1: one line on stderr per engine call, its wall time. */
static double keygen_clock_ms()
{
    static const int on = [] {
        const char *v = getenv("HBS_GPU_KEYGEN_TIMING");
        return v && *v && strcmp(v, "0") != 0;
    }();
    return on ? host_ms() : -1;
}

static void keygen_report(const char *what, size_t trees, size_t leaves, double t0)
{
    if (t0 >= 0)
        fprintf(stderr, "hbs: gpu %s leaves (%zu tree(s) x %zu): %.3f ms\n", what, trees,
                leaves, keygen_clock_ms() - t0);
}

/* HBS_GPU_KEYGEN_TIMING=2: also the GPU's own time of each step of an XMSS engine call,
 * from events recorded between them on the stream (what to shorten next: the chains, the
 * L-trees, the levels or the copy back). */
struct keygen_steps {
    static constexpr int MAX = 8;
    const bool on;
    cudaEvent_t ev[MAX] = {};
    const char *name[MAX] = {};
    int n = 0;
    keygen_steps()
        : on([] {
              const char *v = getenv("HBS_GPU_KEYGEN_TIMING");
              return v && atoi(v) >= 2;
          }())
    {
    }
    explicit keygen_steps(bool on_) : on(on_) {}
    /* the end of step `what` (the first mark is the start) */
    void mark(cudaStream_t s, const char *what)
    {
        if (on && n < MAX && cudaEventCreate(&ev[n]) == cudaSuccess) {
            name[n] = what;
            if (cudaEventRecord(ev[n], s) == cudaSuccess)
                n++;
            else
                cudaEventDestroy(ev[n]);
        }
    }
    void report(size_t trees, size_t leaves)
    {
        if (!on || n < 2 || cudaEventSynchronize(ev[n - 1]) != cudaSuccess)
            return;
        char line[256];
        int at = snprintf(line, sizeof line, "hbs: gpu xmss steps (%zu tree(s) x %zu):", trees,
                          leaves);
        for (int i = 1; i < n && at > 0 && (size_t)at < sizeof line; i++) {
            float ms = 0;
            cudaEventElapsedTime(&ms, ev[i - 1], ev[i]);
            at += snprintf(line + at, sizeof line - at, "%s %s %.3f", i > 1 ? "," : "", name[i],
                           (double)ms);
        }
        fprintf(stderr, "%s ms\n", line);
    }
    ~keygen_steps()
    {
        for (int i = 0; i < n; i++)
            cudaEventDestroy(ev[i]);
        (void)cudaGetLastError(); /* (timing only: nothing of it is the call's error) */
    }
};

static unsigned blocks_for(uint64_t threads)
{
    return (unsigned)((threads + SF_THREADS - 1) / SF_THREADS);
}

/* Copies count leaves back once the kernels are done. */
static int finish(device_ctx *d, uint8_t *out, const uint8_t *dleaves, size_t bytes)
{
    HBS_CUDA(cudaGetLastError());
    HBS_CUDA(cudaMemcpyAsync(out, dleaves, bytes, cudaMemcpyDeviceToHost, d->stream));
    HBS_CUDA(cudaStreamSynchronize(d->stream));
    return HBS_OK;
}

static int lms_leaves_gpu(void *user, const hbs_lms_leaf_job *j, uint32_t first, size_t count,
                          uint8_t *out)
{
    device_ctx *d = (device_ctx *)user;
    const size_t n = j->n, chains = count * j->p;
    uint8_t *dy, *dl;
    lms_args a;
    int err;
    const double t0 = keygen_clock_ms();
    if (count == 0)
        return HBS_OK;
    if ((n != 32 && n != 24) || count > 0xffffffffu)
        return HBS_ERR_UNSUPPORTED;
    std::lock_guard<std::mutex> g(d->lock);
    if ((err = dev_buf(d, SF_D_CHAINS, chains * n, (void **)&dy)) ||
        (err = dev_buf(d, SF_D_LEAVES, count * n, (void **)&dl)))
        return err;
    memset(&a, 0, sizeof a);
    memcpy(a.I, j->I, 16);
    memcpy(a.seed, j->seed, n);
    a.first = first;
    a.count = (uint32_t)count;
    a.n = (uint32_t)n;
    a.p = j->p;
    a.w = j->w;
    a.h = j->h;
    const unsigned lb = (unsigned)((count + SF_LEAF_THREADS - 1) / SF_LEAF_THREADS);
    if (j->hash == 0) {
        if (n == 32) {
            lms_chains_sha256<8><<<blocks_for(chains), SF_THREADS, 0, d->stream>>>(a, dy);
            lms_leaf_sha256<8><<<lb, SF_LEAF_THREADS, 0, d->stream>>>(a, dy, dl);
        } else {
            lms_chains_sha256<6><<<blocks_for(chains), SF_THREADS, 0, d->stream>>>(a, dy);
            lms_leaf_sha256<6><<<lb, SF_LEAF_THREADS, 0, d->stream>>>(a, dy, dl);
        }
    } else {
        lms_chains_shake<<<blocks_for(chains), SF_THREADS, 0, d->stream>>>(a, dy);
        lms_leaf_kernel<SF_SHAKE256><<<lb, SF_LEAF_THREADS, 0, d->stream>>>(a, dy, dl);
    }
    err = finish(d, out, dl, count * n);
    memset(&a, 0, sizeof a);
    if (!err)
        tree_cache_keep_lms(d, j, first, count, dl);
    keygen_report("lms", 1, count, t0);
    return err;
}

template <int F> static void xmss_launch_generic(device_ctx *d, const xmss_args &x, uint8_t *dv,
                                                 uint8_t *dl)
{
    const uint64_t chains = (uint64_t)x.ntrees * x.count * x.len;
    const unsigned lt = ((x.len / 2 + 31) / 32) * 32;
    xmss_chains_generic<F><<<blocks_for(chains), SF_THREADS, 0, d->stream>>>(x, dv);
    xmss_ltree_generic<F><<<x.ntrees * x.count, lt, x.len * x.n, d->stream>>>(x, dv, dl);
}

/* Key generation's packed L-trees with their compressions inline, unless
 * HBS_GPU_LTREE_INL=0 (H100, bench/gpu/chain-forms.sh: the 2,048 L-trees of an XMSS^MT key
 * 0.177 ms with the calls of sf_compress256, 0.142 inline). */
static bool ltree_inl()
{
    static const bool on = [] {
        const char *v = getenv("HBS_GPU_LTREE_INL");
        return !(v && *v && atoi(v) == 0);
    }();
    return on;
}

/* The SHA-256 (n = 32) chains and L-trees of x's trees on stream st: chain ends into dv,
 * leaves into dl. */
static void xmss_leaf_launch_sha256(const xmss_args &x, uint8_t *dv, uint8_t *dl,
                                    cudaStream_t st, keygen_steps &ks)
{
    x256_mid mid;
    x256_host_midstate(mid.prf, 3, x.pub_seed);
    x256_host_midstate(mid.keygen, 4, x.sk_seed);
    const uint64_t leaves = (uint64_t)x.ntrees * x.count, chains = leaves * x.len;
    const uint32_t P = x256_lt_pack(x.len);
    const unsigned ct = chains <= SF_SMALL_CHAINS ? SF_CHAIN_THREADS : SF_THREADS;
    ks.mark(st, ks.n ? "prep" : "start"); /* (after xmss_keygen_begin's) */
    /* (uncapped: capped at 80 or 64 registers, like the batch signer's, these chains ran
     * slower: H100, XMSS_10 0.40-0.42 ms against 0.42-0.45, XMSS_16's whole call 22.7
     * against 25.7-26.7 ms; bench/results/gpu-H100-s20-regs.log; at 56 registers, 1,152 an
     * SM so that an XMSS^MT key's two trees are one wave, no faster either: 0.714-0.735 ms
     * against 0.725-0.731, gpu-H100-s31-fit.log) */
    const unsigned cb = (unsigned)((chains + ct - 1) / ct);
    /* compact for the small launches, where it was measured (XMSS^MT's two trees,
     * XMSS_10: stateful_device.cuh); the big ones' full form is at 96 % of the hash
     * ceiling already (XMSS_20) */
    switch (sf_chain_form(chains <= SF_SMALL_CHAINS ? SHA_COMPACT | SHA_IMAD
                                                   : SHA_FULL | SHA_IMAD)) {
    case SHA_FULL | SHA_IMAD:
        xmss_chains_sha256<SHA_FULL | SHA_IMAD><<<cb, ct, 0, st>>>(x, mid, dv);
        break;
    default:
        xmss_chains_sha256<SHA_COMPACT | SHA_IMAD><<<cb, ct, 0, st>>>(x, mid, dv);
    }
    ks.mark(st, "chains");
    if (leaves >= SF_SERIAL_LTREE)
        xmss_ltree_sha256_serial<<<blocks_for(leaves), SF_THREADS, 0, st>>>(x, mid, dv, dl);
    else if (ltree_inl())
        xmss_ltree_sha256<true><<<(unsigned)((leaves + P - 1) / P), X256_LT_THREADS, 0, st>>>(
            x, mid, dv, dl);
    else
        xmss_ltree_sha256<false><<<(unsigned)((leaves + P - 1) / P), X256_LT_THREADS, 0, st>>>(
            x, mid, dv, dl);
    ks.mark(st, "L-trees");
    hbs_memzero(&mid, sizeof mid);
}

/* The chains and L-trees of leaves first .. first + count - 1 of njobs trees, launched on
 * d->stream into *dl (SF_D_LEAVES: count of job 0, then job 1's, ...); d->lock held. With
 * split (SHA-256, n = 32 only), jobs split .. njobs - 1 go on d->copy instead, forked from
 * d->stream (the caller joins it). */
static int xmss_leaf_kernels(device_ctx *d, const hbs_xmss_leaf_job *jobs, size_t njobs,
                             uint32_t first, size_t count, uint8_t **dl, keygen_steps &ks,
                             size_t split = 0)
{
    const hbs_xmss_leaf_job *j = jobs;
    const size_t n = j->n, leaves = njobs * count, chains = leaves * j->len;
    uint8_t *dv;
    xmss_args x;
    int err;
    if (n > 64 || njobs > SF_MAX_TREES || leaves > 0x7fffffffu)
        return HBS_ERR_UNSUPPORTED;
    if ((err = dev_buf(d, SF_D_CHAINS, chains * n, (void **)&dv)) ||
        (err = dev_buf(d, SF_D_LEAVES, leaves * n, (void **)dl)))
        return err;
    const bool two = j->func == SF_SHA256 && n == 32 && split > 0 && split < njobs;
    if (two) {
        HBS_CUDA(cudaEventRecord(d->fork, d->stream));
        HBS_CUDA(cudaStreamWaitEvent(d->copy, d->fork, 0));
    }
    memset(&x, 0, sizeof x);
    memcpy(x.pub_seed, j->pub_seed, n);
    memcpy(x.sk_seed, j->sk_seed, n);
    for (size_t k = 0; k < njobs; k++) {
        x.tree[k] = jobs[k].tree;
        x.layer[k] = jobs[k].layer;
    }
    x.ntrees = (uint32_t)njobs;
    x.first = first;
    x.count = (uint32_t)count;
    x.n = (uint32_t)n;
    x.padlen = j->padlen;
    x.len = j->len;
    if (two) {
        xmss_args y = x;
        y.ntrees = (uint32_t)(njobs - split);
        for (size_t k = split; k < njobs; k++) {
            y.tree[k - split] = jobs[k].tree;
            y.layer[k - split] = jobs[k].layer;
        }
        x.ntrees = (uint32_t)split;
        keygen_steps none(false);
        xmss_leaf_launch_sha256(x, dv, *dl, d->stream, ks);
        xmss_leaf_launch_sha256(y, dv + split * count * x.len * 32, *dl + split * count * 32,
                                d->copy, none);
        hbs_memzero(&y, sizeof y);
    } else if (j->func == SF_SHA256 && n == 32) {
        xmss_leaf_launch_sha256(x, dv, *dl, d->stream, ks);
    } else if (j->func == SF_SHA256) {
        xmss_launch_generic<SF_SHA256>(d, x, dv, *dl);
    } else if (j->func == SF_SHA512) {
        xmss_launch_generic<SF_SHA512>(d, x, dv, *dl);
    } else if (j->func == SF_SHAKE128) {
        xmss_launch_generic<SF_SHAKE128>(d, x, dv, *dl);
    } else {
        xmss_launch_generic<SF_SHAKE256>(d, x, dv, *dl);
    }
    hbs_memzero(&x, sizeof x);
    return HBS_OK;
}

static int xmss_leaves_gpu(void *user, const hbs_xmss_leaf_job *jobs, size_t njobs,
                           uint32_t first, size_t count, uint8_t *out)
{
    device_ctx *d = (device_ctx *)user;
    uint8_t *dl;
    int err;
    const double t0 = keygen_clock_ms();
    if (count == 0 || njobs == 0)
        return HBS_OK;
    std::lock_guard<std::mutex> g(d->lock);
    keygen_steps ks;
    if ((err = xmss_leaf_kernels(d, jobs, njobs, first, count, &dl, ks)))
        return err;
    err = finish(d, out, dl, njobs * count * jobs[0].n);
    ks.mark(d->stream, "copy back");
    ks.report(njobs, count);
    keygen_report("xmss", njobs, count, t0);
    return err;
}

/* Whole trees (xmss_trees of the engine): the leaves, then their levels on the GPU, every
 * node copied back; the SHA-256 sets with n = 32, whose trees the batch signer keeps too.
 * The WOTS+ signatures of the trees' roots by the layer above come back with them (the
 * engine's xmss_wots_sig hands them out: the CPU took 0.06 ms of an XMSS^MT key's
 * generation for its one). */
static int xmss_trees_gpu(void *user, const hbs_xmss_leaf_job *jobs, size_t njobs, unsigned h,
                          uint8_t *out)
{
    device_ctx *d = (device_ctx *)user;
    uint8_t *dl;
    int err;
    const double t0 = keygen_clock_ms();
    if (njobs == 0 || jobs[0].func != SF_SHA256 || jobs[0].n != 32 || !jobs[0].oid ||
        h > SF_MAX_WHOLE_H)
        return HBS_ERR_UNSUPPORTED;
    const size_t count = (size_t)1 << h;
    std::lock_guard<std::mutex> g(d->lock);
    d->keygen_sigs.clear();
    keygen_steps ks;
    xmss_keygen_run kr;
    const size_t split = xmss_keygen_split(njobs);
    ks.mark(d->stream, "start");
    if ((err = xmss_keygen_begin(d, jobs, njobs, h, &kr)) ||
        (err = xmss_leaf_kernels(d, jobs, njobs, 0, count, &dl, ks, split)) ||
        (err = xmss_keygen_end(d, jobs, njobs, h, kr, dl, split)))
        return err;
    ks.mark(d->stream, kr.nsig ? "levels+sigs" : "levels");
    if ((err = xmss_keygen_back(d, jobs, njobs, h, kr, out)))
        return err;
    ks.mark(d->stream, "copy back");
    ks.report(njobs, count);
    tree_cache_keep_xmss(d, jobs, njobs, kr.dnodes);
    keygen_report("xmss, whole trees,", njobs, count, t0);
    return HBS_OK;
}

static int xmss_wots_sig_gpu(void *user, const hbs_xmss_leaf_job *job, uint32_t leaf,
                             const uint8_t *msg, uint8_t *sig)
{
    return keygen_wots_sig((device_ctx *)user, job, leaf, msg, sig);
}

/* Key generation's calls below this many leaves (of all their trees) stay on one GPU: the
 * 2,048 leaves of an XMSS^MT key's two trees fill only half an H200, so halving them saves
 * little, and on one GPU its whole trees stay there for the batch signer. */
#define SF_SPLIT_LEAVES ((size_t)1 << 13)

int leaf_engine_on(device_ctx *d, hbs_leaf_engine *e)
{
    memset(e, 0, sizeof *e);
    if (!d)
        return HBS_ERR_NO_GPU;
    e->lms_leaves = lms_leaves_gpu;
    e->xmss_leaves = xmss_leaves_gpu;
    e->xmss_trees = xmss_trees_gpu;
    e->xmss_wots_sig = xmss_wots_sig_gpu;
    e->user = d;
    e->min_leaves = SF_MIN_LEAVES;
    e->slice_leaves = SF_SLICE_LEAVES;
    return HBS_OK;
}

} // namespace hbs_gpu

using namespace hbs_gpu;

extern "C" int hbs_gpu_leaf_engine(hbs_leaf_engine *e)
{
    static spread_engine s = {lms_leaves_gpu, xmss_leaves_gpu, split_min(SF_SPLIT_LEAVES),
                              xmss_trees_gpu, keygen_wots_sig};
    if (!e)
        return HBS_ERR_INVALID_ARGUMENT;
    return spread_leaf_engine(e, &s, SF_MIN_LEAVES, SF_SLICE_LEAVES);
}

extern "C" int hbs_gpu_stateful_keygen(const char *alg, const char *path, unsigned traversal,
                                       uint8_t *pk, size_t pkcap, size_t *pklen,
                                       const uint8_t *seed, size_t seedlen,
                                       hbs_progress_fn progress, void *user)
{
    hbs_leaf_engine e;
    int err;
    if (pklen)
        *pklen = 0;
    gpu_clear_error();
    if ((err = hbs_gpu_leaf_engine(&e)) != HBS_OK)
        return err;
    return hbs_stateful_keygen_engine(alg, path, traversal, pk, pkcap, pklen, seed, seedlen,
                                      progress, user, &e);
}
