/* SLH-DSA drivers over device pointers, as templates over (family, n): each instantiation
 * lives in its own source file (slhdsa_inst_*.cu) so the six compile in parallel. */
#ifndef HBS_GPU_SLHDSA_OPS_CUH
#define HBS_GPU_SLHDSA_OPS_CUH

#include <stdlib.h>
#include <string.h>

#include <algorithm>

#include "gpu/gpu_internal.h"
#include "gpu/slhdsa_kernels.cuh"
#include "gpu/verify_kernels.cuh"

namespace hbs_gpu {

/* The drivers of one (family, n); every pointer is device memory on d. */
struct ops {
    int (*sign)(device_ctx *, const sp &, uint8_t *, const uint8_t *, const uint64_t *,
                const uint32_t *, size_t, const uint8_t *, size_t, const uint8_t *,
                const uint8_t *, int);
    int (*keygen)(device_ctx *, const sp &, uint8_t *, const uint8_t *, int, int, size_t,
                  uint8_t *);
    int (*verify)(device_ctx *, const sp &, int *, const uint8_t *, const uint8_t *,
                  const uint64_t *, const uint32_t *, size_t, const uint8_t *, size_t);
};

ops ops_sha2_16();
ops ops_sha2_24();
ops ops_sha2_32();
ops ops_shake_16();
ops ops_shake_24();
ops ops_shake_32();

/* Pooled buffer slots of a device_ctx. */
enum {
    D_KEYS, D_SKS, D_RND, D_MP, D_MOFF, D_MLEN, D_SIGS, D_DIG, D_META, D_XJOBS, D_FJOBS,
    D_XROOTS, D_FROOTS, D_FPK, D_CHAINS, D_XLEAVES, D_FLEAVES, D_RES, D_SCRATCH, D_WSAVE,
    D_NSLOTS
};
enum { H_MP, H_MOFF, H_MLEN, H_SIGS, H_SKS, H_RND, H_RES, H_NSLOTS };

static const size_t SCRATCH_BUDGET = (size_t)6 << 30; /* bytes of tree scratch per chunk */

static inline unsigned blocks(size_t total, unsigned tpb) { return (unsigned)((total + tpb - 1) / tpb); }

#define LAUNCH_CHECK() HBS_CUDA(cudaGetLastError())

/* Launches the reduction of njobs trees of the given height whose leaves are in `leaves`. */
template <int FAM, int N>
static int reduce(cudaStream_t st, const tree_job *jobs, int njobs, const dkey *keys,
                  uint8_t *leaves, int height)
{
    const int team = std::min(1 << (height - 1), 256);
    const int tpb = std::max(team, 128);
    const int per_block = tpb / team;
    k_tree_reduce<FAM, N><<<blocks((size_t)njobs, (unsigned)per_block), tpb, 0, st>>>(
        jobs, njobs, keys, leaves, height, team);
    LAUNCH_CHECK();
    return 0;
}

/* Builds the XMSS trees of njobs jobs (leaves, then roots and paths). */
template <int FAM, int N>
static int xmss_trees(device_ctx *d, const sp &P, const tree_job *jobs, int njobs,
                      const dkey *keys)
{
    const size_t leaves = (size_t)njobs << P.hp;
    uint8_t *chains, *xleaves;
    int err;
    if ((err = dev_buf(d, D_CHAINS, leaves * P.len * N, (void **)&chains)) ||
        (err = dev_buf(d, D_XLEAVES, leaves * N, (void **)&xleaves)))
        return err;
    const size_t nch = leaves * P.len;
    k_wots_chains<FAM, N><<<blocks(nch, 128), 128, 0, d->stream>>>(P, jobs, nch, keys, chains);
    LAUNCH_CHECK();
    k_wots_pk<FAM, N><<<blocks(leaves, 128), 128, 0, d->stream>>>(P, jobs, leaves, keys, chains,
                                                                 xleaves);
    LAUNCH_CHECK();
    return reduce<FAM, N>(d->stream, jobs, njobs, keys, xleaves, P.hp);
}

/* How FORS trees of up to 2^9 leaves are built: a thread per tree when the batch has at
 * least FORS_THREAD_TREES of them, else a block per tree (one fused kernel).
 * HBS_GPU_FORS=split (leaves, then the general reduction), =fused or =thread forces one:
 * kept to compare them on new GPUs. */
enum { FORS_SPLIT, FORS_FUSED, FORS_THREAD, FORS_AUTO };
static const size_t FORS_THREAD_TREES = 32768;

static inline int fors_mode(const sp &P, size_t trees)
{
    static int forced = -1; /* cached one-time init */
    if (forced < 0) {
        const char *e = getenv("HBS_GPU_FORS");
        forced = !e ? FORS_AUTO
                    : strcmp(e, "split") == 0 ? FORS_SPLIT
                    : strcmp(e, "fused") == 0 ? FORS_FUSED
                    : strcmp(e, "thread") == 0 ? FORS_THREAD : FORS_AUTO;
    }
    if (P.a > 9)
        return FORS_SPLIT;
    if (forced != FORS_AUTO)
        return forced;
    return trees >= FORS_THREAD_TREES ? FORS_THREAD : FORS_FUSED;
}

/* Per-item memory of a signing chunk, for chunk sizing. */
static size_t sign_item_bytes(const sp &P)
{
    const size_t xl = (size_t)P.d << P.hp;
    return xl * (P.len + 1) * P.n + ((size_t)P.k << P.a) * P.n + (size_t)P.d * P.len * 16 * P.n;
}

template <int FAM, int N>
static int sign_dev(device_ctx *d, const sp &P, uint8_t *sigs, const uint8_t *mp,
                    const uint64_t *moff, const uint32_t *mlen, size_t count,
                    const uint8_t *sks, size_t nkeys, const uint8_t *rnd, const uint8_t *cache,
                    int graph);

/* Captures the one-signature sequence as a CUDA graph into g; nonzero (and nothing kept)
 * if anything in it fails, so the caller simply runs the kernels as usual. */
template <int FAM, int N>
static int capture_sign(device_ctx *d, graph_slot &g, uint64_t key, const sp &P, uint8_t *sigs,
                        const uint8_t *mp, const uint64_t *moff, const uint32_t *mlen,
                        const uint8_t *sks, const uint8_t *rnd)
{
    const uint64_t gen0 = d->gen;
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    if (cudaStreamBeginCapture(d->stream, cudaStreamCaptureModeRelaxed) != cudaSuccess) {
        (void)cudaGetLastError();
        return -1;
    }
    int err = sign_dev<FAM, N>(d, P, sigs, mp, moff, mlen, 1, sks, 1, rnd, nullptr, 0);
    cudaError_t e = cudaStreamEndCapture(d->stream, &graph);
    if (!err && e == cudaSuccess && d->gen == gen0)
        e = cudaGraphInstantiate(&exec, graph, 0);
    else
        err = -1;
    if (graph)
        (void)cudaGraphDestroy(graph);
    if (err || e != cudaSuccess) {
        (void)cudaGetLastError();
        gpu_clear_error();
        return -1;
    }
    if (g.exec)
        (void)cudaGraphExecDestroy(g.exec);
    g.exec = exec;
    g.key = key;
    g.gen = d->gen;
    return 0;
}

/* Signs count items whose inputs are on the device. cache: the signer's top tree or NULL.
 * graph: the inputs sit in the pool's buffers, so a single signature may replay a captured
 * graph (one launch instead of a dozen: that is most of the latency). */
template <int FAM, int N>
static int sign_dev(device_ctx *d, const sp &P, uint8_t *sigs, const uint8_t *mp,
                    const uint64_t *moff, const uint32_t *mlen, size_t count,
                    const uint8_t *sks, size_t nkeys, const uint8_t *rnd, const uint8_t *cache,
                    int graph)
{
    if (graph && count == 1 && nkeys == 1 && !cache) {
        const int has_rnd = rnd != nullptr;
        const uint64_t key = (uint64_t)P.sig_bytes << 4 | (uint64_t)FAM << 1 | (uint64_t)has_rnd;
        graph_slot &g = d->graphs[((FAM * 3 + (N - 16) / 8) * 2 + (P.hp > 4)) * 2 + has_rnd];
        if (g.exec && g.key == key && g.gen == d->gen) {
            HBS_CUDA(cudaGraphLaunch(g.exec, d->stream));
            return 0;
        }
        if (g.warm_key == key && g.warm_gen == d->gen &&
            capture_sign<FAM, N>(d, g, key, P, sigs, mp, moff, mlen, sks, rnd) == 0) {
            HBS_CUDA(cudaGraphLaunch(g.exec, d->stream));
            return 0;
        }
        const int err = sign_dev<FAM, N>(d, P, sigs, mp, moff, mlen, 1, sks, 1, rnd, nullptr, 0);
        if (!err) {
            g.warm_key = key;
            g.warm_gen = d->gen;
        }
        return err;
    }
    dkey *keys;
    int err;
    if ((err = dev_buf(d, D_KEYS, nkeys * sizeof(dkey), (void **)&keys)))
        return err;
    k_prep_keys<FAM, N><<<blocks(nkeys, 128), 128, 0, d->stream>>>(keys, sks, (int)nkeys, 4 * N,
                                                                  0, 4 * N);
    LAUNCH_CHECK();
    const int nl = cache ? P.d - 1 : P.d;
    const size_t chunk = std::max<size_t>(1, std::min(count, SCRATCH_BUDGET / sign_item_bytes(P)));
    for (size_t off = 0; off < count; off += chunk) {
        const size_t c = std::min(chunk, count - off);
        const int one = nkeys == 1;
        const dkey *ck = one ? keys : keys + off;
        uint8_t *csigs = sigs + off * P.sig_bytes;
        uint8_t *dig, *xroots, *froots, *fpk, *fleaves, *wsave;
        sig_meta *meta;
        tree_job *xjobs, *fjobs;
        if ((err = dev_buf(d, D_DIG, c * 64, (void **)&dig)) ||
            (err = dev_buf(d, D_META, c * sizeof(sig_meta), (void **)&meta)) ||
            (err = dev_buf(d, D_XJOBS, c * nl * sizeof(tree_job), (void **)&xjobs)) ||
            (err = dev_buf(d, D_FJOBS, c * P.k * sizeof(tree_job), (void **)&fjobs)) ||
            (err = dev_buf(d, D_XROOTS, c * nl * N, (void **)&xroots)) ||
            (err = dev_buf(d, D_FROOTS, c * P.k * N, (void **)&froots)) ||
            (err = dev_buf(d, D_FPK, c * N, (void **)&fpk)) ||
            (err = dev_buf(d, D_WSAVE, c * nl * P.len * 16 * N, (void **)&wsave)) ||
            (err = dev_buf(d, D_FLEAVES, (c * P.k << P.a) * N, (void **)&fleaves)))
            return err;
        k_msg_sign<FAM, N><<<blocks(c, 64), 64, 0, d->stream>>>(
            P, ck, one, mp, moff + off, mlen + off, rnd ? rnd + off * N : nullptr, csigs, dig,
            meta, (int)c);
        LAUNCH_CHECK();
        k_make_jobs_sign<<<blocks(c, 64), 64, 0, d->stream>>>(P, meta, dig, (int)c, nl, csigs,
                                                              xroots, froots, wsave, xjobs,
                                                              fjobs);
        LAUNCH_CHECK();
        /* FORS on the side stream, beside the hypertree; joined before the WOTS+ step */
        HBS_CUDA(cudaEventRecord(d->fork, d->stream));
        HBS_CUDA(cudaStreamWaitEvent(d->side, d->fork, 0));
        const int fm = fors_mode(P, c * P.k);
        if (fm == FORS_THREAD) {
            k_fors_thread<FAM, N><<<blocks(c * P.k, 128), 128, 0, d->side>>>(P, fjobs,
                                                                            (int)(c * P.k), ck);
            LAUNCH_CHECK();
        } else if (fm == FORS_FUSED) {
            const int nt = std::min(1 << P.a, 256);
            k_fors_tree<FAM, N><<<(unsigned)(c * P.k), nt, nt * N, d->side>>>(P, fjobs,
                                                                             (int)(c * P.k), ck);
            LAUNCH_CHECK();
        } else {
            const size_t nfl = (c * P.k) << P.a;
            k_fors_leaves<FAM, N><<<blocks(nfl, 128), 128, 0, d->side>>>(P, fjobs, nfl, ck,
                                                                         fleaves);
            LAUNCH_CHECK();
            if ((err = reduce<FAM, N>(d->side, fjobs, (int)(c * P.k), ck, fleaves, P.a)))
                return err;
        }
        k_fors_pk<FAM, N><<<blocks(c, 64), 64, 0, d->side>>>(P, meta, (int)c, ck, froots, fpk);
        LAUNCH_CHECK();
        HBS_CUDA(cudaEventRecord(d->join, d->side));
        if ((err = xmss_trees<FAM, N>(d, P, xjobs, (int)(c * nl), ck)))
            return err;
        HBS_CUDA(cudaStreamWaitEvent(d->stream, d->join, 0));
        if (cache) {
            k_top_auth<<<blocks(c * P.hp, 128), 128, 0, d->stream>>>(P, meta, (int)c, cache,
                                                                     csigs);
            LAUNCH_CHECK();
        }
        const size_t nw = c * P.d * P.len;
        k_wots_sign<FAM, N><<<blocks(nw, 128), 128, 0, d->stream>>>(P, meta, nw, ck, fpk, xroots,
                                                                   wsave, nl, csigs);
        LAUNCH_CHECK();
    }
    return 0;
}

static __global__ void k_make_jobs_top(int count, int top_layer, uint8_t *roots, int n, tree_job *jobs,
                                uint8_t *nodes)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= count)
        return;
    tree_job t;
    t.tree = 0;
    t.key = (uint32_t)i;
    t.layer = (uint32_t)top_layer;
    t.type = A_TREE;
    t.kp = 0;
    t.idx_base = 0;
    t.leaf = 0;
    t.auth = nullptr;
    t.root = roots + (size_t)i * n;
    t.nodes = nodes;
    t.wsave = nullptr;
    jobs[i] = t;
}

/* PK.root of count keys whose seeds (3n bytes each) are on the device. With nodes (count
 * 1), every node of the top tree is kept there too. */
template <int FAM, int N>
static int keygen_dev(device_ctx *d, const sp &P, uint8_t *roots, const uint8_t *seeds,
                      int stride, int have, size_t count, uint8_t *nodes)
{
    const size_t per = ((size_t)P.len + 1) * N << P.hp;
    const size_t chunk = std::max<size_t>(1, std::min(count, SCRATCH_BUDGET / per));
    int err;
    for (size_t off = 0; off < count; off += chunk) {
        const size_t c = std::min(chunk, count - off);
        dkey *keys;
        tree_job *jobs;
        if ((err = dev_buf(d, D_KEYS, c * sizeof(dkey), (void **)&keys)) ||
            (err = dev_buf(d, D_XJOBS, c * sizeof(tree_job), (void **)&jobs)))
            return err;
        k_prep_keys<FAM, N><<<blocks(c, 128), 128, 0, d->stream>>>(keys, seeds + off * stride,
                                                                  (int)c, stride, 0, have);
        LAUNCH_CHECK();
        k_make_jobs_top<<<blocks(c, 128), 128, 0, d->stream>>>((int)c, P.d - 1, roots + off * N,
                                                               N, jobs, nodes);
        LAUNCH_CHECK();
        if ((err = xmss_trees<FAM, N>(d, P, jobs, (int)c, keys)))
            return err;
    }
    return 0;
}

/* Signatures per warp in batch verification (see verify_kernels.cuh): as many as keep about
 * VERIFY_THREADS threads busy. The kernel holds about 16 warps per SM (its registers), so
 * more threads than that only add lanes idle in the serial hashes (H200, 128s, 16,384
 * signatures: G = 16 4.09 M/s, G = 32 3.62 M/s; 128f, 65,536: G = 32 best).
 * HBS_GPU_VERIFY_G=1..32 forces it (for tuning on new GPUs). */
static const size_t VERIFY_THREADS = 32768;

static inline int verify_group(size_t count)
{
    static int forced = -1; /* cached one-time init */
    if (forced < 0) {
        const char *e = getenv("HBS_GPU_VERIFY_G");
        const int g = e ? atoi(e) : 0;
        forced = g >= 1 && g <= 32 && (g & (g - 1)) == 0 ? g : 0;
    }
    if (forced)
        return forced;
    int g = 32;
    while (g > 1 && count * 32 / (size_t)g < VERIFY_THREADS)
        g /= 2;
    return g;
}

template <int FAM, int N>
static int verify_dev(device_ctx *d, const sp &P, int *results, const uint8_t *sigs,
                      const uint8_t *mp, const uint64_t *moff, const uint32_t *mlen,
                      size_t count, const uint8_t *pks, size_t npks)
{
    dkey *keys;
    uint8_t *dig, *scratch;
    sig_meta *meta;
    int err;
    const size_t per = (size_t)std::max(P.k, P.len) * N;
    if ((err = dev_buf(d, D_KEYS, npks * sizeof(dkey), (void **)&keys)) ||
        (err = dev_buf(d, D_DIG, count * 64, (void **)&dig)) ||
        (err = dev_buf(d, D_META, count * sizeof(sig_meta), (void **)&meta)) ||
        (err = dev_buf(d, D_SCRATCH, count * per, (void **)&scratch)))
        return err;
    k_prep_keys<FAM, N><<<blocks(npks, 128), 128, 0, d->stream>>>(keys, pks, (int)npks, 2 * N,
                                                                 2 * N, 2 * N);
    LAUNCH_CHECK();
    k_msg_verify<FAM, N><<<blocks(count, 64), 64, 0, d->stream>>>(P, keys, npks == 1, mp, moff,
                                                                 mlen, sigs, dig, meta,
                                                                 (int)count);
    LAUNCH_CHECK();
    /* one warp per block: blocks spread evenly over the multiprocessors */
    const int g = verify_group(count);
    const size_t warps = (count + g - 1) / g;
    const size_t shmem = (size_t)g * P.len * sizeof(uint16_t);
    k_verify_pool<FAM, N><<<(unsigned)warps, 32, shmem, d->stream>>>(P, meta, dig, (int)count,
                                                                     keys, sigs, scratch,
                                                                     results, g);
    LAUNCH_CHECK();
    return 0;
}

template <int FAM, int N> static ops make_ops()
{
    return ops{sign_dev<FAM, N>, keygen_dev<FAM, N>, verify_dev<FAM, N>};
}

} // namespace hbs_gpu

#endif
