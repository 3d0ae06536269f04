/* The one-signature path (hbs_gpu_slhdsa_sign): one kernel launch per signature.
 *
 * The host hashes the message (R and H_msg are a few compressions, faster on the CPU than
 * in one GPU thread), so every tree and leaf index is known before the launch and travels
 * in the kernel's parameters with the key: nothing is copied to the device. Every XMSS tree
 * of every hypertree layer and every FORS tree is then independent, so all of them are
 * built at once: a block takes a run of leaves of one tree (a thread per WOTS+ chain or per
 * FORS leaf) and reduces them to a subtree root in shared memory; the block arriving last
 * at a tree joins the subtree roots. The block arriving last of all knows every layer's
 * message and writes the whole signature straight into mapped host memory, each layer's
 * WOTS+ signature picked from the chain values saved on the way, then a flag the host polls.
 * The critical path is one leaf (PRF, 15 F, T_len) and one tree's height of H, plus the
 * launch and the copy out. */
#ifndef HBS_GPU_LATENCY_CUH
#define HBS_GPU_LATENCY_CUH

#include <cuda_runtime.h>
#include <string.h>

#include <type_traits>

#include "gpu/gpu_internal.h"
#include "gpu/thash.cuh"
#include "hbs/slhdsa.h"

namespace hbs_gpu {

enum { LAT_MAX_K = 35 };

/* Timing (HBS_GPU_LATENCY_TIMING=1, latency.cu): what the kernel stamps. A phase runs from
 * a block's previous stamp to the next one; a point (arrival at a counter, the flag) is one
 * instant. Thread 0 stamps, mostly right after a __syncthreads, so a phase covers the whole
 * block's work. */
enum lat_phase {
    LP_ENTRY,          /* point: a block starts */
    LP_X_CHAINS,       /* hypertree block: PRF and 15 F per chain, the signed leaf's saves */
    LP_X_TLEN,         /* T_len: the WOTS+ public keys of the block's leaves */
    LP_X_TREE,         /* the levels of the block's subtree */
    LP_X_ARRIVE,       /* point: a block at its layer's counter (layers cut into blocks) */
    LP_X_TOP,          /* the layer's top levels, in its last block */
    LP_F_LEAVES,       /* FORS block: PRF and F per leaf */
    LP_F_TREE,         /* the levels of the block's subtree */
    LP_F_ARRIVE,       /* point: a block at its tree's counter (trees cut into blocks) */
    LP_F_TOP,          /* the tree's top levels, in its last block */
    LP_F_ROOTS_ARRIVE, /* point: a FORS root done, at the counter of the k trees */
    LP_F_PK,           /* T_k over the k roots, one thread of the last tree's block */
    LP_UNITS_ARRIVE,   /* point: a layer root or the FORS public key done, at the last counter */
    LP_MSGS,           /* the last block: the layers' messages (roots) read */
    LP_COPY_OUT,       /* the signature into mapped host memory (WOTS+ parts picked from the
                        * saves on the way): the loads and stores issued */
    LP_FENCE,          /* __threadfence_system: the stores seen by the host */
    LP_FLAG,           /* point: the flag written */
    LP_COUNT
};

/* Per phase over all blocks, in device memory: the earliest start and latest end
 * (%globaltimer, ns, one clock for all SMs) and the longest a single block took (clock64
 * cycles of its SM: finer than the global timer, whose steps may be a microsecond). The last
 * block also gives its life from entry to flag in both clocks: their ratio is the SM clock
 * the kernel really ran at. The host sets first to ~0 and the rest to 0 before each
 * signature. */
struct lat_timing {
    unsigned long long first[LP_COUNT], last[LP_COUNT], cycles[LP_COUNT];
    unsigned long long life_ns, life_cycles;
};

/* The largest block each kernel takes and the blocks per SM it is compiled for (its
 * register budget): in the 's' sets every SM should hold a thousand chains or so at once.
 * The SHA-2 chains need few registers (SHA-512, for H and T at n > 16, spills a little);
 * Keccak needs about 96, so the SHAKE blocks are smaller. */
template <int FAM, int N> struct lat_bounds {
    static constexpr int threads = FAM == FAM_SHA2 ? (N == 16 ? 288 : N == 24 ? 416 : 544)
                                                   : (N == 24 ? 224 : 288);
    static constexpr int per_sm = FAM == FAM_SHA2 ? (N == 16 ? 4 : 2) : (N == 24 ? 3 : 2);
};

/* Call sites of the hashes a block runs twice (its subtree, then its tree's top; a FORS
 * leaf's PRF, then its F): 1 shares one site (less code, and the SHA-512 of n > 16 spills
 * less), 2 writes each out (the looped 128f kernel is faster so). H100, one signature,
 * median of 60, two runs: 192f 0.172 -> 0.164 ms and 256f 0.254-0.260 -> 0.228-0.244 with one
 * site, 128s in the full form 0.275 -> 0.270 (in the full form with two it lost), while the
 * looped 128f went 0.0645-0.0652 -> 0.0662-0.0672. SHAKE keeps its two (not measured). */
template <int FAM, int N, int SC> struct lat_sites {
    static constexpr int n = FAM == FAM_SHAKE || (N == 16 && (SC & 3) == SHA_LOOPED) ? 2 : 1;
};

/* Or'ed into the kernel's SHA-256 form (SC), ways of the kernel (SHA-2 at n = 16 only): the
 * host picks them (lat_sha2_sc), HBS_GPU_LAT_TL2=1, _SPREAD=1, _FORS_FIRST=1 and _WIDE=1 add
 * them to a form chosen with HBS_GPU_LAT_SHA (to compare; lat_launch has the mixes).
 * LAT_TL2: T_len and T_k in two passes (thash.cuh, tl16_*): a block holds all of a stream's
 * values at once, so its threads build the schedules of all the stream's blocks side by
 * side and one thread a stream runs only the rounds (128f: T_len, ten compressions by one
 * thread a leaf, was a third of the signature's critical path, 17.5 us of it; 12.3 so).
 * LAT_SPREAD: each layer's part of the signature to the host as soon as it is done
 * (lat_layer_out), not the whole by the last block (lat_finish).
 * LAT_FORS_FIRST: the FORS blocks take the first block indices, which the GPU starts first
 * (the 's' sets' FORS trees end last: H100 128s, their public key at 262 us, the layers'
 * roots by 253).
 * LAT_WIDE: launch bounds of one block an SM, so registers up to 224 (the 'f' sets run one
 * block an SM anyway; the 's' sets need four, which caps them at 56): 128f's chains and
 * T_len had been held to 56 (H200, one signature 0.0591-0.0609 -> 0.0570-0.0575 ms). */
enum { LAT_TL2 = 8, LAT_SPREAD = 16, LAT_FORS_FIRST = 32, LAT_WIDE = 64 };

/* Words of shared memory the two-pass T_len takes per leaf (LEN values of 16 bytes): the
 * schedules, and 4 more so that the leaves of a block start in different banks. */
__host__ __device__ constexpr int lat_tl2_words(int len) { return tl16_blocks(4 * len) * 64 + 4; }

/* How one signature's work is cut into blocks. */
struct lat_shape {
    int d, hp, a, k;
    int sig_bytes, fors_bytes;
    int xg_lg; /* log2 of the blocks per hypertree layer */
    int fg_lg; /* log2 of the blocks per FORS tree */
};

/* One signature as the host prepared it: the key as family words and midstates, where the
 * digest points, where the scratch is. Non-template, so the host code needs no kernels. */
struct lat_job {
    uint32_t s256[8];
    uint64_t s512[8];
    uint32_t pk_seed[8], sk_seed[8];
    uint64_t tree;
    uint32_t leaf, seq;
    uint16_t fidx[LAT_MAX_K];
    lat_shape s;
    int blocks, threads, smem;
    uint8_t *sig, *wsave, *roots, *host_sig;
    uint32_t *groots, *counters, *host_flag;
    lat_timing *timing;   /* null unless timing: then the stamps go here */
    uint32_t *host_start; /* with timing: block 0 writes seq here on entry (mapped) */
};

/* One (family, n): its launcher (one signature's kernel on stream st), its largest block,
 * the blocks per SM its register budget is compiled for, and the blocks per SM the occupancy
 * calculator allows for a launch shape (-1 if it fails; for the timing line). */
struct lat_kernel {
    int (*launch)(const lat_job &, cudaStream_t);
    int max_threads;
    int per_sm;
    int (*occupancy)(int threads, int smem);
};
lat_kernel latency_sha2_16();
lat_kernel latency_sha2_24();
lat_kernel latency_sha2_32();
lat_kernel latency_shake_16();
lat_kernel latency_shake_24();
lat_kernel latency_shake_32();

/* The host driver (latency.cu): hbs_gpu_slhdsa_sign's work on GPU d, d->lock held. */
int latency_sign(device_ctx *d, const hbs_slhdsa_params *p, uint8_t *sig, const uint8_t *msg,
                 size_t msglen, const uint8_t *ctx, size_t ctxlen, hbs_prehash ph,
                 const uint8_t *sk, const uint8_t *addrnd);

/* The kernel's parameters: the key words live in the parameter space (constant bank), so the
 * hashes read the midstate from there rather than holding it in registers. */
template <int FAM, int N> struct lat_args {
    kregs<FAM, N> k;
    uint32_t sk_seed[N / 4];
    lat_shape s;
    uint64_t tree;
    uint32_t leaf, seq;
    uint16_t fidx[LAT_MAX_K];
    uint8_t *sig;       /* the signature in device memory, as laid out in FIPS 205 */
    uint8_t *wsave;     /* all 16 values of each chain of each layer's signed leaf */
    uint8_t *roots;     /* layer roots (d), FORS roots (k), FORS public key: bytes */
    uint32_t *groots;   /* subtree roots of the blocks of each tree: family words */
    uint32_t *counters; /* arrivals: per layer, per FORS tree, FORS trees, units, and per
                           layer its part of the signature (lat_layer_out) */
    uint8_t *host_sig;  /* mapped pinned memory, as the device addresses it */
    uint32_t *host_flag;
    lat_timing *timing;   /* null: no stamps (the only cost is the test of this pointer) */
    uint32_t *host_start; /* mapped: block 0's entry, for the host's side of the timing */
};

__device__ __forceinline__ unsigned long long lat_globaltimer()
{
    unsigned long long t = 0;
#ifdef __CUDA_ARCH__ /* (not in the host emulation: tests/gpu_emu/latency_test.cpp) */
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
#endif
    return t;
}

/* Thread 0 ends phase p of its block now (point: p is this instant). The block's previous
 * stamp waits in shared memory, not in registers the whole kernel would carry. */
__device__ __forceinline__ void lat_stamp(lat_timing *tm, int p, bool point)
{
    __shared__ unsigned long long prev_g, prev_c, entry_g, entry_c;
    if (!tm || threadIdx.x != 0)
        return;
    const unsigned long long g = lat_globaltimer(), c = (unsigned long long)clock64();
    atomicMin(&tm->first[p], point ? g : prev_g);
    atomicMax(&tm->last[p], g);
    if (!point)
        atomicMax(&tm->cycles[p], c - prev_c);
    if (p == LP_ENTRY) {
        entry_g = g;
        entry_c = c;
    }
    if (p == LP_FLAG) {
        tm->life_ns = g - entry_g;
        tm->life_cycles = c - entry_c;
    }
    prev_g = g;
    prev_c = c;
}

__device__ __forceinline__ uint64_t lat_shr(uint64_t v, int s) { return s >= 64 ? 0 : v >> s; }

template <int N> __device__ __forceinline__ void node_get(uint32_t v[N / 4], const uint32_t *p)
{
#pragma unroll
    for (int w = 0; w < N / 4; w++)
        v[w] = p[w];
}

template <int N> __device__ __forceinline__ void node_put(uint32_t *p, const uint32_t v[N / 4])
{
#pragma unroll
    for (int w = 0; w < N / 4; w++)
        p[w] = v[w];
}

/* Chain c's digit of a WOTS+ message (N bytes): base-16 digits, then the checksum's three. */
template <int N> __device__ __forceinline__ uint32_t lat_digit(const uint8_t *msg, int c)
{
    if (c < 2 * N)
        return (msg[c >> 1] >> (4 * (1 - (c & 1)))) & 15;
    uint32_t csum = 0;
    for (int j = 0; j < N; j++)
        csum += 30 - (msg[j] >> 4) - (msg[j] & 15);
    return (csum >> (4 * (2 - (c - 2 * N)))) & 15;
}

/* True in every thread of the block that arrives last of `total` at counter; that block then
 * sees what the others wrote before arriving. atomicInc wraps the counter back to 0 on the
 * last arrival, so nothing needs resetting between signatures. Call with the whole block. */
__device__ __forceinline__ bool lat_arrive(uint32_t *counter, uint32_t total)
{
    __shared__ uint32_t last;
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0)
        last = atomicInc(counter, total - 1) == total - 1;
    __syncthreads();
    const bool l = last != 0;
    if (l)
        __threadfence();
    return l;
}

/* Reduces the 2^lg nodes of height z0 in heap[2^lg + i] (tree index base + i) to heap[1];
 * every level stays in the heap (level y at heap[2^(lg-y) ..]). Afterwards the nodes of
 * the authentication path of leaf `target` that lie in this subtree go to auth + z * N. */
template <int FAM, int N, int SC>
__device__ void lat_reduce(const kregs<FAM, N> &k, adrs ad, uint32_t *heap, int lg, int z0,
                           uint32_t base, uint32_t target, uint8_t *auth)
{
    constexpr int W = N / 4;
    const int t = threadIdx.x;
    for (int y = 1; y <= lg; y++) {
        const int cnt = 1 << (lg - y);
        for (int i = t; i < cnt; i += blockDim.x) {
            uint32_t in[2 * W], out[W];
            node_get<N>(in, heap + 2 * (cnt + i) * W);
            node_get<N>(in + W, heap + (2 * (cnt + i) + 1) * W);
            ad.c = (uint32_t)(z0 + y);
            ad.h = (base >> y) + (uint32_t)i;
            thash<FAM, N, 2, SC>(out, k, ad, in);
            node_put<N>(heap + (cnt + i) * W, out);
        }
        __syncthreads();
    }
    if (t < lg && (target >> (z0 + lg)) == (base >> lg)) {
        const uint32_t sib = (target >> (z0 + t)) ^ 1;
        const uint32_t at = (uint32_t)((1 << lg) >> t) + sib - (base >> t);
        store_val<FAM, N>(auth + (size_t)(z0 + t) * N, heap + at * W);
    }
}

/* Block g of hypertree layer j: its 2^(hp - xg_lg) leaves, their subtree, and the top of
 * the tree if it arrives last. True when the layer's root is done. */
template <int FAM, int N, int SC>
__device__ bool lat_xmss(const lat_args<FAM, N> &a, int j, int g, uint32_t *sh)
{
    constexpr int LEN = 2 * N + 3, W = N / 4;
    const lat_shape &s = a.s;
    const int lg = s.hp - s.xg_lg, lpb = 1 << lg, t = threadIdx.x;
    const uint64_t tree = lat_shr(a.tree, j * s.hp);
    const uint32_t target =
        j == 0 ? a.leaf : (uint32_t)(lat_shr(a.tree, (j - 1) * s.hp) & ((1u << s.hp) - 1));
    uint8_t *ends = reinterpret_cast<uint8_t *>(sh); /* chain ends, bytes, leaf by leaf */
    uint32_t *heap = sh + lpb * LEN * W;
    uint8_t *auth = a.sig + N + s.fors_bytes + (size_t)j * (LEN + s.hp) * N + LEN * N;
    if (t < lpb * LEN) {
        const int ll = t / LEN, c = t - ll * LEN;
        const uint32_t leaf = ((uint32_t)g << lg) + (uint32_t)ll;
        adrs ad = {(uint32_t)j, tree, A_WOTS_PRF, leaf, (uint32_t)c, 0};
        uint32_t v[W];
        thash<FAM, N, 1, SC>(v, a.k, ad, a.sk_seed);
        ad.type = A_WOTS_HASH;
        /* the signed leaf keeps every value: its WOTS+ signature is then a copy */
        uint8_t *save = leaf == target ? a.wsave + ((size_t)j * LEN + c) * 16 * N : nullptr;
        fchain<FAM, N, SC> f;
        f.start(a.k, ad);
#pragma unroll 1
        for (uint32_t st = 0; st < 15; st++) {
            if (save)
                store_val<FAM, N>(save + st * N, v);
            f.step(v, a.k, st);
        }
        if (save)
            store_val<FAM, N>(save + 15 * N, v);
        store_val<FAM, N>(ends + (size_t)t * N, v);
    }
    __syncthreads();
    lat_stamp(a.timing, LP_X_CHAINS, false);
    if constexpr (FAM == FAM_SHA2 && N == 16 && (SC & LAT_TL2) != 0) {
        constexpr int NB = tl16_blocks(4 * LEN), TLS = lat_tl2_words(LEN);
        uint32_t *wk = heap + 2 * lpb * W; /* after the heap (plan_for counts it) */
        for (int x = t; x < lpb * NB; x += blockDim.x) {
            const int l = x / NB, b = x - l * NB;
            const adrs ad = {(uint32_t)j, tree, A_WOTS_PK, ((uint32_t)g << lg) + (uint32_t)l,
                             0, 0};
            tl16_schedule(wk + l * TLS + b * 64, ad,
                          reinterpret_cast<const uint32_t *>(ends) + (size_t)l * LEN * W,
                          4 * LEN, b);
        }
        __syncthreads();
        for (int l = t; l < lpb; l += blockDim.x) {
            uint32_t v[W];
            tl16_rounds<SC>(v, a.k.s256, wk + l * TLS, NB);
            node_put<N>(heap + (lpb + l) * W, v);
        }
    } else {
        for (int l = t; l < lpb; l += blockDim.x) {
            adrs ad = {(uint32_t)j, tree, A_WOTS_PK, ((uint32_t)g << lg) + (uint32_t)l, 0, 0};
            uint32_t v[W];
            if constexpr (FAM == FAM_SHA2 && N == 16)
                tlen_sha256_n16<LEN, SC>(v, a.k.s256, ad,
                                         reinterpret_cast<const uint32_t *>(ends) +
                                             (size_t)l * LEN * W);
            else
                thash_mem<FAM, N, SC>(v, a.k, ad, ends + (size_t)l * LEN * N, LEN);
            node_put<N>(heap + (lpb + l) * W, v);
        }
    }
    __syncthreads();
    lat_stamp(a.timing, LP_X_TLEN, false);
    /* the block's subtree, then (the last block of the layer) the tree's top (lat_sites) */
    const adrs ad = {(uint32_t)j, tree, A_TREE, 0, 0, 0};
    /* the subtree's root to the layer's counter; true in the last block, the roots gathered */
    auto gather = [&]() {
        const int G = 1 << s.xg_lg;
        uint32_t *gr = a.groots + ((size_t)j << s.xg_lg) * W;
        if (t < W)
            gr[g * W + t] = heap[W + t];
        lat_stamp(a.timing, LP_X_ARRIVE, true);
        if (!lat_arrive(&a.counters[j], (uint32_t)G))
            return false;
        heap = sh; /* the chain ends are dead now */
        for (int i = t; i < G * W; i += blockDim.x)
            heap[G * W + i] = __ldcg(gr + i);
        __syncthreads();
        return true;
    };
    if constexpr (lat_sites<FAM, N, SC>::n == 2) {
        lat_reduce<FAM, N, SC>(a.k, ad, heap, lg, 0, (uint32_t)g << lg, target, auth);
        lat_stamp(a.timing, LP_X_TREE, false);
        if (s.xg_lg > 0) {
            if (!gather())
                return false;
            lat_reduce<FAM, N, SC>(a.k, ad, heap, s.xg_lg, lg, 0, target, auth);
            lat_stamp(a.timing, LP_X_TOP, false);
        }
    } else {
        int rlg = lg, z0 = 0;
        uint32_t base = (uint32_t)g << lg;
        for (int top = 0;; top++) {
            lat_reduce<FAM, N, SC>(a.k, ad, heap, rlg, z0, base, target, auth);
            lat_stamp(a.timing, top ? LP_X_TOP : LP_X_TREE, false);
            if (top || s.xg_lg == 0)
                break;
            if (!gather())
                return false;
            rlg = s.xg_lg;
            z0 = lg;
            base = 0;
        }
    }
    if (t == 0)
        store_val<FAM, N>(a.roots + (size_t)j * N, heap + W);
    return true;
}

/* Block g of FORS tree i: its leaves, their subtree, the tree's top if it arrives last and
 * T_k over all roots if it is the last tree. True when the FORS public key is done. */
template <int FAM, int N, int SC>
__device__ bool lat_fors(const lat_args<FAM, N> &a, int i, int g, uint32_t *sh)
{
    constexpr int W = N / 4;
    const lat_shape &s = a.s;
    const int lg = s.a - s.fg_lg, fpb = 1 << lg, t = threadIdx.x;
    const uint32_t base = ((uint32_t)i << s.a) + ((uint32_t)g << lg);
    const uint32_t target = ((uint32_t)i << s.a) + a.fidx[i];
    uint8_t *tsig = a.sig + N + (size_t)i * (s.a + 1) * N; /* secret value, then the path */
    uint32_t *heap = sh;
    for (int l = t; l < fpb; l += blockDim.x) {
        const uint32_t idx = base + (uint32_t)l;
        adrs ad = {0, a.tree, A_FORS_PRF, a.leaf, 0, idx};
        uint32_t v[W];
        if constexpr (lat_sites<FAM, N, SC>::n == 2) {
            thash<FAM, N, 1, SC>(v, a.k, ad, a.sk_seed);
            if (idx == target)
                store_val<FAM, N>(tsig, v);
            ad.type = A_FORS_TREE;
            thash<FAM, N, 1, SC>(v, a.k, ad, v);
        } else {
            /* the secret value (PRF), then the leaf (F), at one call site */
#pragma unroll
            for (int i = 0; i < W; i++)
                v[i] = a.sk_seed[i];
#pragma unroll 1
            for (int st = 0; st < 2; st++) {
                thash<FAM, N, 1, SC>(v, a.k, ad, v);
                if (st == 0 && idx == target)
                    store_val<FAM, N>(tsig, v);
                ad.type = A_FORS_TREE;
            }
        }
        node_put<N>(heap + (fpb + l) * W, v);
    }
    __syncthreads();
    lat_stamp(a.timing, LP_F_LEAVES, false);
    /* the block's subtree, then (the last block of the tree) the tree's top (lat_sites) */
    const adrs ad = {0, a.tree, A_FORS_TREE, a.leaf, 0, 0};
    /* the subtree's root to the tree's counter; true in the last block, the roots gathered */
    auto gather = [&]() {
        const int G = 1 << s.fg_lg;
        uint32_t *gr = a.groots + (((size_t)s.d << s.xg_lg) + ((size_t)i << s.fg_lg)) * W;
        if (t < W)
            gr[g * W + t] = heap[W + t];
        lat_stamp(a.timing, LP_F_ARRIVE, true);
        if (!lat_arrive(&a.counters[s.d + i], (uint32_t)G))
            return false;
        for (int x = t; x < G * W; x += blockDim.x)
            heap[G * W + x] = __ldcg(gr + x);
        __syncthreads();
        return true;
    };
    if constexpr (lat_sites<FAM, N, SC>::n == 2) {
        lat_reduce<FAM, N, SC>(a.k, ad, heap, lg, 0, base, target, tsig + N);
        lat_stamp(a.timing, LP_F_TREE, false);
        if (s.fg_lg > 0) {
            if (!gather())
                return false;
            lat_reduce<FAM, N, SC>(a.k, ad, heap, s.fg_lg, lg, (uint32_t)i << s.fg_lg, target,
                                   tsig + N);
            lat_stamp(a.timing, LP_F_TOP, false);
        }
    } else {
        int rlg = lg, z0 = 0;
        uint32_t rbase = base;
        for (int top = 0;; top++) {
            lat_reduce<FAM, N, SC>(a.k, ad, heap, rlg, z0, rbase, target, tsig + N);
            lat_stamp(a.timing, top ? LP_F_TOP : LP_F_TREE, false);
            if (top || s.fg_lg == 0)
                break;
            if (!gather())
                return false;
            rlg = s.fg_lg;
            z0 = lg;
            rbase = (uint32_t)i << s.fg_lg;
        }
    }
    if (t == 0)
        store_val<FAM, N>(a.roots + (size_t)(s.d + i) * N, heap + W);
    lat_stamp(a.timing, LP_F_ROOTS_ARRIVE, true);
    if (!lat_arrive(&a.counters[s.d + s.k], (uint32_t)s.k))
        return false;
    const uint32_t *r = reinterpret_cast<const uint32_t *>(a.roots + (size_t)s.d * N);
    for (int x = t; x < s.k * W; x += blockDim.x)
        sh[x] = __ldcg(r + x);
    __syncthreads();
    const adrs pk = {0, a.tree, A_FORS_ROOTS, a.leaf, 0, 0};
    if constexpr (FAM == FAM_SHA2 && N == 16 && (SC & LAT_TL2) != 0) {
        const int m = s.k * W, nb = tl16_blocks(m);
        uint32_t *wk = sh + ((m + 3) & ~3); /* after the roots (plan_for counts it) */
        for (int b = t; b < nb; b += blockDim.x)
            tl16_schedule(wk + 64 * b, pk, sh, m, b);
        __syncthreads();
        if (t == 0) {
            uint32_t v[W];
            tl16_rounds<SC>(v, a.k.s256, wk, nb);
            store_val<FAM, N>(a.roots + (size_t)(s.d + s.k) * N, v);
        }
    } else if (t == 0) {
        uint32_t v[W];
        thash_mem<FAM, N, SC>(v, a.k, pk, reinterpret_cast<const uint8_t *>(sh), s.k);
        store_val<FAM, N>(a.roots + (size_t)(s.d + s.k) * N, v);
    }
    lat_stamp(a.timing, LP_F_PK, false); /* thread 0 did T_k: its stamp is the end */
    return true;
}

/* Bytes [off, off + len) of the signature to the host, a chunk a thread at a time (len and
 * off multiples of the chunk: lat_finish's chunks). The WOTS+ signature of layer j reads
 * the chain values its digits pick (msg: the N bytes that layer signs); the rest a.sig. */
template <int FAM, int N>
__device__ void lat_copy_out(const lat_args<FAM, N> &a, int off, int len, int j,
                             const uint8_t *msg)
{
    constexpr int LEN = 2 * N + 3;
    constexpr int CB = N % 16 == 0 ? 16 : 8;
    using chunk = typename std::conditional<CB == 16, uint4, uint2>::type;
    const int wots = N + a.s.fors_bytes + j * (LEN + a.s.hp) * N; /* layer j's first byte */
    chunk *to = reinterpret_cast<chunk *>(a.host_sig);
    for (int x = threadIdx.x; x < len / CB; x += blockDim.x) {
        const int o = off + x * CB;
        const uint8_t *src = a.sig + o;
        if (msg && o >= wots && o < wots + LEN * N) {
            const int c = (o - wots) / N;
            const uint32_t digit = lat_digit<N>(msg, c);
            src = a.wsave + (((size_t)j * LEN + c) * 16 + digit) * N + (o - wots - c * N);
        }
        to[o / CB] = __ldcg(reinterpret_cast<const chunk *>(src));
    }
}

/* The spread copy-out: layer j's part of the signature (its WOTS+ signature, then its
 * authentication path) goes to the host as soon as both what it signs (layer j - 1's root,
 * or the FORS public key) and its own root are done: every chain value and path node of
 * the layer is in place then. Of the two blocks that finish those, the second to arrive at
 * the layer's counter writes it. The flag then waits only for the last layers' few hundred
 * bytes, not for one block copying the whole signature at the end (lat_finish). */
template <int FAM, int N>
__device__ void lat_layer_out(const lat_args<FAM, N> &a, int j, uint32_t *sh)
{
    constexpr int LEN = 2 * N + 3, W = N / 4;
    const lat_shape &s = a.s;
    if (!lat_arrive(&a.counters[s.d + s.k + 2 + j], 2))
        return;
    const uint32_t *m =
        reinterpret_cast<const uint32_t *>(a.roots + (size_t)(j == 0 ? s.d + s.k : j - 1) * N);
    if (threadIdx.x < W)
        sh[threadIdx.x] = __ldcg(m + threadIdx.x);
    __syncthreads();
    const int layer = (LEN + s.hp) * N;
    lat_copy_out<FAM, N>(a, N + s.fors_bytes + j * layer, layer, j,
                         reinterpret_cast<const uint8_t *>(sh));
    __syncthreads(); /* sh is read above */
}

/* The last block: the signature to the host and the flag after it, in one pass. Each chunk
 * is read from where it lies: a layer's WOTS+ signature from the chain values saved on the
 * way (the one its digit picks), the rest (FORS, authentication paths) from a.sig. Nothing
 * is first copied into a.sig, so there is no second pass behind a fence; a thread has a
 * few loads in flight before it stores. Chunks of 16 bytes where every part of the
 * signature is 16-aligned (n = 16, 32), else of 8 (n = 24): a chunk never straddles two
 * values. */
template <int FAM, int N> __device__ void lat_finish(const lat_args<FAM, N> &a, uint32_t *sh)
{
    constexpr int LEN = 2 * N + 3, W = N / 4;
    constexpr int CB = N % 16 == 0 ? 16 : 8; /* bytes per chunk */
    using chunk = typename std::conditional<CB == 16, uint4, uint2>::type;
    constexpr int BATCH = 4; /* loads in flight per thread */
    const lat_shape &s = a.s;
    const int t = threadIdx.x, nt = (int)blockDim.x;
    /* layer 0 signs the FORS public key, layer j the root of layer j - 1 */
    for (int x = t; x < s.d * W; x += nt) {
        const int j = x / W;
        const uint8_t *m = a.roots + (size_t)(j == 0 ? s.d + s.k : j - 1) * N;
        sh[x] = __ldcg(reinterpret_cast<const uint32_t *>(m) + (x - j * W));
    }
    __syncthreads();
    lat_stamp(a.timing, LP_MSGS, false);
    const uint8_t *msgs = reinterpret_cast<const uint8_t *>(sh);
    const int chunks = s.sig_bytes / CB;
    const int xmss0 = N + s.fors_bytes;  /* byte offset of layer 0 */
    const int layer = (LEN + s.hp) * N; /* bytes per layer: WOTS+ signature, then path */
    chunk *to = reinterpret_cast<chunk *>(a.host_sig);
    for (int x0 = t; x0 < chunks; x0 += BATCH * nt) {
        chunk v[BATCH];
#pragma unroll
        for (int u = 0; u < BATCH; u++) {
            const int x = x0 + u * nt;
            if (x >= chunks)
                break;
            const int o = x * CB;
            const uint8_t *src = a.sig + o;
            if (o >= xmss0) {
                const int j = (o - xmss0) / layer, r = o - xmss0 - j * layer;
                if (r < LEN * N) {
                    const int c = r / N;
                    const uint32_t digit = lat_digit<N>(msgs + (size_t)j * N, c);
                    src = a.wsave + (((size_t)j * LEN + c) * 16 + digit) * N + (r - c * N);
                }
            }
            v[u] = __ldcg(reinterpret_cast<const chunk *>(src));
        }
#pragma unroll
        for (int u = 0; u < BATCH; u++) {
            const int x = x0 + u * nt;
            if (x >= chunks)
                break;
            to[x] = v[u];
        }
    }
    if (a.timing) {
        __syncthreads();
        lat_stamp(a.timing, LP_COPY_OUT, false);
    }
    __threadfence_system();
    __syncthreads();
    lat_stamp(a.timing, LP_FENCE, false);
    if (t == 0)
        *reinterpret_cast<volatile uint32_t *>(a.host_flag) = a.seq;
    lat_stamp(a.timing, LP_FLAG, true);
}

template <int FAM, int N, int SC>
__global__ void __launch_bounds__(lat_bounds<FAM, N>::threads,
                                  (SC & LAT_WIDE) ? 1 : lat_bounds<FAM, N>::per_sm)
    k_lat_sign(const __grid_constant__ lat_args<FAM, N> a)
{
    extern __shared__ __align__(16) uint32_t lat_sh[];
    const int nx = a.s.d << a.s.xg_lg, nf = a.s.k << a.s.fg_lg;
    const int b = (SC & LAT_FORS_FIRST) == 0 ? (int)blockIdx.x
                  : (int)blockIdx.x < nf     ? nx + (int)blockIdx.x
                                             : (int)blockIdx.x - nf;
    if (a.timing) {
        lat_stamp(a.timing, LP_ENTRY, true);
        if (b == 0 && threadIdx.x == 0)
            *reinterpret_cast<volatile uint32_t *>(a.host_start) = a.seq;
    }
    const bool done =
        b < nx ? lat_xmss<FAM, N, SC>(a, b >> a.s.xg_lg, b & ((1 << a.s.xg_lg) - 1), lat_sh)
               : lat_fors<FAM, N, SC>(a, (b - nx) >> a.s.fg_lg, (b - nx) & ((1 << a.s.fg_lg) - 1),
                                  lat_sh);
    if (!done)
        return;
    if constexpr ((SC & LAT_SPREAD) != 0) {
        if (b < nx) {
            const int j = b >> a.s.xg_lg;
            lat_layer_out<FAM, N>(a, j, lat_sh);
            if (j + 1 < a.s.d)
                lat_layer_out<FAM, N>(a, j + 1, lat_sh);
        } else {
            lat_copy_out<FAM, N>(a, 0, N + a.s.fors_bytes, 0, nullptr);
            lat_layer_out<FAM, N>(a, 0, lat_sh);
        }
        /* what this block wrote reaches the host before the flag can */
        __threadfence_system();
    }
    /* units: the d layers and the FORS public key */
    lat_stamp(a.timing, LP_UNITS_ARRIVE, true);
    if (lat_arrive(&a.counters[a.s.d + a.s.k + 1], (uint32_t)a.s.d + 1)) {
        if constexpr ((SC & LAT_SPREAD) == 0) {
            lat_finish<FAM, N>(a, lat_sh);
            return;
        }
        __threadfence_system();
        __syncthreads();
        lat_stamp(a.timing, LP_FENCE, false);
        if (threadIdx.x == 0)
            *reinterpret_cast<volatile uint32_t *>(a.host_flag) = a.seq;
        lat_stamp(a.timing, LP_FLAG, true);
    }
}

/* HBS_GPU_LAT_SHA: the SHA-256 code form of the SHA-2 kernels (hash.cuh: 0 full, 1 compact,
 * 2 looped, 3 rolled; 4 and 6: full and looped with SHA_IMAD), to compare them on a new GPU;
 * -1 (unset) for each set's default. Read once. */
int lat_sha_form();
/* The LAT_* ways the environment adds (HBS_GPU_LAT_TL2, _SPREAD, _FORS_FIRST, _WIDE = 1),
 * or'ed. Read once. */
int lat_ways();
/* The SHA-2 kernel's SC for n and an 's' set (hp >= 8) or an 'f' one: the form (the set's,
 * or HBS_GPU_LAT_SHA's, which then comes without the default ways, to compare with) and the
 * LAT_* ways (at n = 16 the default ones, and those of lat_ways). */
int lat_sha2_sc(int n, bool s_set);

template <int FAM, int N, int SC> static int lat_launch_form(const lat_job &j, cudaStream_t st)
{
    lat_args<FAM, N> a;
    memset(&a, 0, sizeof a);
    memcpy(a.k.s256, j.s256, sizeof a.k.s256);
    memcpy(a.k.s512, j.s512, sizeof a.k.s512);
    memcpy(a.k.seed, j.pk_seed, sizeof a.k.seed);
    memcpy(a.sk_seed, j.sk_seed, sizeof a.sk_seed);
    a.s = j.s;
    a.tree = j.tree;
    a.leaf = j.leaf;
    a.seq = j.seq;
    memcpy(a.fidx, j.fidx, sizeof a.fidx);
    a.sig = j.sig;
    a.wsave = j.wsave;
    a.roots = j.roots;
    a.groots = j.groots;
    a.counters = j.counters;
    a.host_sig = j.host_sig;
    a.host_flag = j.host_flag;
    a.timing = j.timing;
    a.host_start = j.host_start;
    k_lat_sign<FAM, N, SC><<<(unsigned)j.blocks, (unsigned)j.threads, (size_t)j.smem, st>>>(a);
    const cudaError_t e = cudaGetLastError();
    hbs_memzero(&a, sizeof a);
    return e == cudaSuccess ? 0 : gpu_fail(__FILE__, __LINE__, "k_lat_sign", e);
}

template <int FAM, int N> static int lat_launch(const lat_job &j, cudaStream_t st)
{
    if constexpr (FAM == FAM_SHA2) {
        /* (the set's form and ways: lat_sha2_sc) */
        const int sc = lat_sha2_sc(N, j.s.hp >= 8);
        switch (sc) {
        case SHA_COMPACT:
            return lat_launch_form<FAM, N, SHA_COMPACT>(j, st);
        case SHA_LOOPED:
            return lat_launch_form<FAM, N, SHA_LOOPED>(j, st);
        case SHA_ROLLED:
            return lat_launch_form<FAM, N, SHA_ROLLED>(j, st);
        case SHA_FULL | SHA_IMAD:
            return lat_launch_form<FAM, N, SHA_FULL | SHA_IMAD>(j, st);
        case SHA_LOOPED | SHA_IMAD:
            return lat_launch_form<FAM, N, SHA_LOOPED | SHA_IMAD>(j, st);
        default:
            break;
        }
        if constexpr (N == 16) {
            switch (sc) {
            case SHA_LOOPED | LAT_TL2 | LAT_SPREAD | LAT_WIDE:
                return lat_launch_form<FAM, N, SHA_LOOPED | LAT_TL2 | LAT_SPREAD | LAT_WIDE>(j, st);
            case SHA_FULL | SHA_IMAD | LAT_TL2 | LAT_SPREAD | LAT_FORS_FIRST:
                return lat_launch_form<FAM, N,
                                       SHA_FULL | SHA_IMAD | LAT_TL2 | LAT_SPREAD | LAT_FORS_FIRST>(
                    j, st);
            default:
                break; /* any other mix: the full form */
            }
        }
    }
    return lat_launch_form<FAM, N, SHA_FULL>(j, st);
}

template <int FAM, int N> static int lat_occupancy(int threads, int smem)
{
    int nb = 0;
    const cudaError_t e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &nb, k_lat_sign<FAM, N, SHA_FULL>, threads, (size_t)smem);
    if (e != cudaSuccess) {
        (void)cudaGetLastError(); /* a failed query must not fail the next launch's check */
        return -1;
    }
    return nb;
}

template <int FAM, int N> static lat_kernel lat_make()
{
    return lat_kernel{lat_launch<FAM, N>, lat_bounds<FAM, N>::threads,
                      lat_bounds<FAM, N>::per_sm, lat_occupancy<FAM, N>};
}

} // namespace hbs_gpu

#endif
