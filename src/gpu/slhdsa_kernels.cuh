/* SLH-DSA kernels. The work of a batch is laid out as "tree jobs": one job is one Merkle
 * tree (an XMSS tree of a hypertree layer, or a FORS tree) with the leaf whose
 * authentication path is wanted. Leaf kernels fill the leaves of every job at once (one
 * thread per WOTS chain or FORS leaf), then one reduction kernel builds every tree's root
 * and path. XMSS and LMS can reuse the reduction as is; only their leaf kernels differ. */
#ifndef HBS_GPU_SLHDSA_KERNELS_CUH
#define HBS_GPU_SLHDSA_KERNELS_CUH

#include "gpu/msg.cuh"
#include "hbs/hbs.h"
#include "gpu/thash.cuh"

namespace hbs_gpu {

/* A parameter set as the kernels take it (by value). */
struct sp {
    int fam, n, h, d, hp, a, k, m, len, len1;
    int sig_bytes, fors_bytes;
};

struct tree_job {
    uint64_t tree;
    uint32_t key, layer, type, kp;
    uint32_t idx_base; /* tree index of leaf 0 (FORS: i * 2^a) */
    uint32_t leaf;     /* leaf whose authentication path is written to auth */
    uint8_t *auth;     /* NULL: no path wanted */
    uint8_t *root;
    uint8_t *nodes;    /* NULL, or every node, level by level (leaves first) */
    uint8_t *wsave;    /* NULL, or the 16 values of every chain of the signed leaf, so the
                          WOTS+ signature is a copy once its message is known */
};

/* What the message digest says about one signature. */
struct sig_meta {
    uint64_t tree;
    uint32_t leaf, key;
};

__device__ __forceinline__ uint64_t shr64(uint64_t v, int s) { return s >= 64 ? 0 : v >> s; }

__device__ __forceinline__ uint32_t layer_leaf(const sp &P, const sig_meta &m, int layer)
{
    return layer == 0 ? m.leaf : (uint32_t)(shr64(m.tree, (layer - 1) * P.hp) & ((1u << P.hp) - 1));
}

__device__ __forceinline__ uint32_t fors_index(const sp &P, const uint8_t *md, int i)
{
    uint32_t v = 0;
    int bit = i * P.a;
    for (int j = 0; j < P.a; j++, bit++)
        v = v << 1 | ((md[bit >> 3] >> (7 - (bit & 7))) & 1u);
    return v;
}

__device__ inline void split_digest(const sp &P, const uint8_t *dg, uint64_t *tree, uint32_t *leaf)
{
    const int md = (P.k * P.a + 7) / 8, tbits = P.h - P.hp;
    const int tb = (tbits + 7) / 8, lb = (P.hp + 7) / 8;
    uint64_t t = 0;
    for (int i = 0; i < tb; i++)
        t = t << 8 | dg[md + i];
    if (tbits < 64)
        t &= ((uint64_t)1 << tbits) - 1;
    uint32_t l = 0;
    for (int i = 0; i < lb; i++)
        l = l << 8 | dg[md + tb + i];
    *tree = t;
    *leaf = l & ((1u << P.hp) - 1);
}

/* Chain digit `c` of WOTS+ message msg (N bytes): base-16 digits, then the checksum's. */
template <int N>
__device__ __forceinline__ uint32_t wots_digit(const uint8_t *msg, int len1, int c)
{
    if (c < len1)
        return (msg[c >> 1] >> (4 * (1 - (c & 1)))) & 15;
    uint32_t csum = 0;
    for (int j = 0; j < len1; j++)
        csum += 15 - ((msg[j >> 1] >> (4 * (1 - (j & 1)))) & 15);
    return (csum >> (4 * (2 - (c - len1)))) & 15;
}

/* ---- keys ---- */

template <int FAM, int N>
__global__ void k_prep_keys(dkey *keys, const uint8_t *src, int nkeys, int stride, int at,
                            int have)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= nkeys)
        return;
    dkey *k = &keys[i];
    const uint8_t *s = src + (size_t)i * stride;
    /* src holds bytes [at, at + have) of SK.seed || SK.prf || PK.seed || PK.root */
    for (int j = 0; j < 4 * N; j++)
        k->sk[j] = j >= at && j < at + have ? s[j - at] : 0;
    const uint8_t *seed = k->sk + 2 * N;
    load_val_bytes<FAM, N>(k->pk_seed, seed);
    load_val_bytes<FAM, N>(k->sk_seed, k->sk);
    if constexpr (FAM == FAM_SHA2) {
        uint32_t w[16];
        for (int j = 0; j < 16; j++)
            w[j] = j < N / 4 ? (uint32_t)seed[4 * j] << 24 | (uint32_t)seed[4 * j + 1] << 16 |
                                   (uint32_t)seed[4 * j + 2] << 8 | seed[4 * j + 3]
                             : 0;
        sha256_iv(k->st256);
        sha256_compress(k->st256, w);
        uint64_t w64[16];
        for (int j = 0; j < 16; j++) {
            uint64_t v = 0;
            for (int b = 0; b < 8; b++)
                v = v << 8 | (8 * j + b < N ? seed[8 * j + b] : 0);
            w64[j] = v;
        }
        sha512_iv(k->st512);
        sha512_compress(k->st512, w64);
    }
}

/* ---- message digests ---- */

/* R (signing) and the digest; meta says which trees and leaves the signature uses. */
template <int FAM, int N>
__global__ void k_msg_sign(sp P, const dkey *keys, int one_key, const uint8_t *mp,
                           const uint64_t *moff, const uint32_t *mlen, const uint8_t *rnd,
                           uint8_t *sigs, uint8_t *digests, sig_meta *meta, int count)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= count)
        return;
    const uint32_t key = one_key ? 0 : (uint32_t)i;
    const uint8_t *sk = keys[key].sk;
    uint8_t *sig = sigs + (size_t)i * P.sig_bytes;
    uint8_t r[32], dg[64];
    prf_msg(FAM == FAM_SHAKE, N, r, sk + N, rnd ? rnd + (size_t)i * N : sk + 2 * N,
            mp + moff[i], mlen[i]);
    for (int j = 0; j < N; j++)
        sig[j] = r[j];
    h_msg(FAM == FAM_SHAKE, N, P.m, dg, r, sk + 2 * N, mp + moff[i], mlen[i]);
    for (int j = 0; j < P.m; j++)
        digests[(size_t)i * 64 + j] = dg[j];
    sig_meta mt;
    split_digest(P, dg, &mt.tree, &mt.leaf);
    mt.key = key;
    meta[i] = mt;
}

template <int FAM, int N>
__global__ void k_msg_verify(sp P, const dkey *keys, int one_key, const uint8_t *mp,
                             const uint64_t *moff, const uint32_t *mlen, const uint8_t *sigs,
                             uint8_t *digests, sig_meta *meta, int count)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= count)
        return;
    const uint32_t key = one_key ? 0 : (uint32_t)i;
    uint8_t dg[64];
    h_msg(FAM == FAM_SHAKE, N, P.m, dg, sigs + (size_t)i * P.sig_bytes, keys[key].sk + 2 * N,
          mp + moff[i], mlen[i]);
    for (int j = 0; j < P.m; j++)
        digests[(size_t)i * 64 + j] = dg[j];
    sig_meta mt;
    split_digest(P, dg, &mt.tree, &mt.leaf);
    mt.key = key;
    meta[i] = mt;
}

/* ---- jobs of a signing batch: nl hypertree layers (d, or d - 1 with the top cached) ---- */

static __global__ void k_make_jobs_sign(sp P, const sig_meta *meta, const uint8_t *digests,
                                        int count, int nl, uint8_t *sigs, uint8_t *xroots,
                                        uint8_t *froots, uint8_t *wsave, tree_job *xjobs,
                                        tree_job *fjobs)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= count)
        return;
    const sig_meta m = meta[i];
    uint8_t *sig = sigs + (size_t)i * P.sig_bytes;
    uint8_t *ht = sig + P.n + P.fors_bytes;
    for (int j = 0; j < nl; j++) {
        tree_job t;
        t.tree = shr64(m.tree, j * P.hp);
        t.key = m.key;
        t.layer = (uint32_t)j;
        t.type = A_TREE;
        t.kp = 0;
        t.idx_base = 0;
        t.leaf = layer_leaf(P, m, j);
        t.auth = ht + (size_t)j * (P.len + P.hp) * P.n + (size_t)P.len * P.n;
        t.root = xroots + ((size_t)i * nl + j) * P.n;
        t.nodes = nullptr;
        t.wsave = wsave + ((size_t)i * nl + j) * P.len * 16 * P.n;
        xjobs[(size_t)i * nl + j] = t;
    }
    const uint8_t *md = digests + (size_t)i * 64;
    for (int f = 0; f < P.k; f++) {
        tree_job t;
        t.tree = m.tree;
        t.key = m.key;
        t.layer = 0;
        t.type = A_FORS_TREE;
        t.kp = m.leaf;
        t.idx_base = (uint32_t)f << P.a;
        t.leaf = fors_index(P, md, f);
        t.auth = sig + P.n + (size_t)f * (P.a + 1) * P.n + P.n;
        t.root = froots + ((size_t)i * P.k + f) * P.n;
        t.nodes = nullptr;
        t.wsave = nullptr;
        fjobs[(size_t)i * P.k + f] = t;
    }
}

/* ---- leaves ---- */

/* One thread per WOTS+ chain of every leaf of every job: PRF, then 15 F. */
template <int FAM, int N>
__global__ void __launch_bounds__(256) k_wots_chains(sp P, const tree_job *jobs, size_t total,
                                                     const dkey *keys, uint8_t *chains)
{
    size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= total)
        return;
    constexpr int LEN = 2 * N + 3;
    const uint32_t per_job = LEN << P.hp;
    const size_t j = t / per_job;
    const uint32_t r = (uint32_t)(t - j * per_job);
    const uint32_t leaf = r / LEN, chain = r - leaf * LEN;
    const tree_job &job = jobs[j];
    kregs<FAM, N> k;
    k.load(&keys[job.key]);
    uint32_t v[N / 4];
    adrs ad = {job.layer, job.tree, A_WOTS_PRF, leaf, chain, 0};
    thash<FAM, N, 1>(v, k, ad, keys[job.key].sk_seed);
    ad.type = A_WOTS_HASH;
    uint8_t *save = job.wsave && leaf == job.leaf ? job.wsave + (size_t)chain * 16 * N : nullptr;
    fchain<FAM, N> f;
    f.start(k, ad);
#pragma unroll 1
    for (uint32_t s = 0; s < 15; s++) {
        if (save)
            store_val<FAM, N>(save + (size_t)s * N, v);
        f.step(v, k, s);
    }
    if (save)
        store_val<FAM, N>(save + (size_t)15 * N, v);
    store_val<FAM, N>(chains + t * N, v);
}

/* One thread per leaf: the WOTS+ public key T_len over its chain ends. */
template <int FAM, int N>
__global__ void k_wots_pk(sp P, const tree_job *jobs, size_t total, const dkey *keys,
                          const uint8_t *chains, uint8_t *leaves)
{
    size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= total)
        return;
    constexpr int LEN = 2 * N + 3;
    const size_t j = t >> P.hp;
    const uint32_t leaf = (uint32_t)(t & ((1u << P.hp) - 1));
    const tree_job &job = jobs[j];
    kregs<FAM, N> k;
    k.load(&keys[job.key]);
    adrs ad = {job.layer, job.tree, A_WOTS_PK, leaf, 0, 0};
    uint32_t v[N / 4];
    thash_mem<FAM, N>(v, k, ad, chains + t * LEN * N, LEN);
    store_val<FAM, N>(leaves + t * N, v);
}

/* One thread per FORS leaf: F(PRF(...)); the signed leaf's secret goes into the signature. */
template <int FAM, int N>
__global__ void __launch_bounds__(256) k_fors_leaves(sp P, const tree_job *jobs, size_t total,
                                                     const dkey *keys, uint8_t *leaves)
{
    size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= total)
        return;
    const size_t j = t >> P.a;
    const uint32_t leaf = (uint32_t)(t & ((1u << P.a) - 1));
    const tree_job &job = jobs[j];
    kregs<FAM, N> k;
    k.load(&keys[job.key]);
    uint32_t v[N / 4];
    adrs ad = {0, job.tree, A_FORS_PRF, job.kp, 0, job.idx_base + leaf};
    thash<FAM, N, 1>(v, k, ad, keys[job.key].sk_seed);
    if (leaf == job.leaf)
        store_val<FAM, N>(job.auth - N, v);
    ad.type = A_FORS_TREE;
    thash<FAM, N, 1>(v, k, ad, v);
    store_val<FAM, N>(leaves + t * N, v);
}

/* FORS trees of up to 2^9 leaves in one kernel: a block per tree, leaves computed into
 * registers (two per thread at most, joined at once), the upper levels reduced in shared
 * memory. No leaf ever goes to global memory, and no second launch. */
template <int FAM, int N>
__global__ void __launch_bounds__(256) k_fors_tree(sp P, const tree_job *jobs, int njobs,
                                                   const dkey *keys)
{
    extern __shared__ uint32_t sh[]; /* blockDim.x nodes of N/4 words */
    const int j = blockIdx.x;
    const int t = threadIdx.x, nt = blockDim.x;
    const tree_job &job = jobs[j];
    kregs<FAM, N> k;
    k.load(&keys[job.key]);
    const int lpt = (1 << P.a) / nt; /* leaves per thread: 1 or 2 */
    uint32_t node[N / 4], in[N / 2];
    adrs ad = {0, job.tree, A_FORS_PRF, job.kp, 0, 0};
#pragma unroll
    for (int q = 0; q < 2; q++) { /* unrolled: q is a constant and `in` stays in registers */
        if (q >= lpt)
            break;
        const uint32_t leaf = (uint32_t)(t * lpt + q);
        uint32_t v[N / 4];
        ad.type = A_FORS_PRF;
        ad.c = 0;
        ad.h = job.idx_base + leaf;
        thash<FAM, N, 1>(v, k, ad, keys[job.key].sk_seed);
        if (leaf == job.leaf)
            store_val<FAM, N>(job.auth - N, v);
        ad.type = A_FORS_TREE;
        thash<FAM, N, 1>(v, k, ad, v);
#pragma unroll
        for (int w = 0; w < N / 4; w++)
            in[q * (N / 4) + w] = v[w];
    }
    int z = 0;
    if (lpt == 2) {
        /* the sibling leaf is the first node of the path */
        if ((job.leaf >> 1) == (uint32_t)t) {
            uint32_t sib[N / 4];
#pragma unroll
            for (int w = 0; w < N / 4; w++)
                sib[w] = (job.leaf & 1) ? in[w] : in[N / 4 + w];
            store_val<FAM, N>(job.auth, sib);
        }
        ad.type = A_FORS_TREE;
        ad.c = 1;
        ad.h = (job.idx_base >> 1) + (uint32_t)t;
        thash<FAM, N, 2>(node, k, ad, in);
        z = 1;
    } else {
#pragma unroll
        for (int w = 0; w < N / 4; w++)
            node[w] = in[w];
    }
#pragma unroll
    for (int w = 0; w < N / 4; w++)
        sh[t * (N / 4) + w] = node[w];
    __syncthreads();
    for (int cnt = nt / 2; cnt >= 1; cnt /= 2, z++) {
        if (t == 0) {
            const uint32_t sib = (job.leaf >> z) ^ 1;
            store_val<FAM, N>(job.auth + (size_t)z * N, sh + sib * (N / 4));
        }
        if (t < cnt) {
#pragma unroll
            for (int w = 0; w < N / 2; w++)
                in[w] = sh[2 * t * (N / 4) + w];
            ad.type = A_FORS_TREE;
            ad.c = (uint32_t)z + 1;
            ad.h = (job.idx_base >> (z + 1)) + (uint32_t)t;
            thash<FAM, N, 2>(node, k, ad, in);
        }
        __syncthreads();
        if (t < cnt) {
#pragma unroll
            for (int w = 0; w < N / 4; w++)
                sh[t * (N / 4) + w] = node[w];
        }
        __syncthreads();
    }
    if (t == 0)
        store_val<FAM, N>(job.root, sh);
}

/* A thread per FORS tree, for batches with enough trees to fill the GPU: treehash over the
 * leaves with one pending node per height. Every lane hashes all the time, where a block
 * per tree leaves most lanes idle in the upper levels (the slow part when H is SHA-512). */
template <int FAM, int N>
__global__ void __launch_bounds__(128) k_fors_thread(sp P, const tree_job *jobs, int njobs,
                                                     const dkey *keys)
{
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= njobs)
        return;
    const tree_job &job = jobs[j];
    kregs<FAM, N> k;
    k.load(&keys[job.key]);
    uint32_t sks[N / 4];
#pragma unroll
    for (int w = 0; w < N / 4; w++)
        sks[w] = keys[job.key].sk_seed[w];
    const uint32_t leaf = job.leaf, nleaves = 1u << P.a;
    uint32_t pending[9][N / 4]; /* a <= 9 */
    uint32_t node[N / 4];
    adrs ad = {0, job.tree, A_FORS_PRF, job.kp, 0, 0};
#pragma unroll 1
    for (uint32_t l = 0; l < nleaves; l++) {
        ad.type = A_FORS_PRF;
        ad.c = 0;
        ad.h = job.idx_base + l;
        thash<FAM, N, 1>(node, k, ad, sks);
        if (l == leaf)
            store_val<FAM, N>(job.auth - N, node);
        ad.type = A_FORS_TREE;
        thash<FAM, N, 1>(node, k, ad, node);
        uint32_t idx = l;
        int z = 0;
#pragma unroll 1
        while (true) {
            if (idx == ((leaf >> z) ^ 1))
                store_val<FAM, N>(job.auth + (size_t)z * N, node);
            if (!(idx & 1))
                break;
            uint32_t in[N / 2];
#pragma unroll
            for (int w = 0; w < N / 4; w++) {
                in[w] = pending[z][w];
                in[N / 4 + w] = node[w];
            }
            z++;
            idx >>= 1;
            ad.c = (uint32_t)z;
            ad.h = (job.idx_base >> z) + idx;
            thash<FAM, N, 2>(node, k, ad, in);
        }
        if (z < P.a) {
#pragma unroll
            for (int w = 0; w < N / 4; w++)
                pending[z][w] = node[w];
        }
    }
    store_val<FAM, N>(job.root, node);
}

/* ---- the Merkle reduction: every job's root and authentication path ----
 * A team of threads per tree (several trees per block when they are small) reduces the
 * leaves in place, level by level; rounds read all children before any parent is written. */
template <int FAM, int N>
__global__ void k_tree_reduce(const tree_job *jobs, int njobs, const dkey *keys,
                              uint8_t *leaves, int height, int team)
{
    const int per_block = blockDim.x / team;
    const int ti = blockIdx.x * per_block + threadIdx.x / team;
    const int lane = threadIdx.x % team;
    const bool live = ti < njobs;
    const tree_job job = live ? jobs[ti] : tree_job{};
    uint8_t *base = leaves + ((size_t)(live ? ti : 0) << height) * N;
    kregs<FAM, N> k;
    if (live)
        k.load(&keys[job.key]);
    size_t node_off = 0;
    for (int z = 0; z < height; z++) {
        const uint32_t cnt = 1u << (height - z - 1);
        if (live && lane == 0 && job.auth) {
            const uint32_t sib = (job.leaf >> z) ^ 1;
            for (int b = 0; b < N; b += 4)
                *reinterpret_cast<uint32_t *>(job.auth + (size_t)z * N + b) =
                    *reinterpret_cast<const uint32_t *>(base + (size_t)sib * N + b);
        }
        if (live && job.nodes)
            for (uint32_t i = lane; i < 2 * cnt; i += team)
                for (int b = 0; b < N; b += 4)
                    *reinterpret_cast<uint32_t *>(job.nodes + (node_off + i) * N + b) =
                        *reinterpret_cast<const uint32_t *>(base + (size_t)i * N + b);
        node_off += 2 * cnt;
        for (uint32_t r = 0; r < cnt; r += team) {
            const uint32_t i = r + lane;
            uint32_t out[N / 4];
            const bool act = live && i < cnt;
            if (act) {
                uint32_t in[N / 2];
                load_val<FAM, N>(in, base + (size_t)(2 * i) * N);
                load_val<FAM, N>(in + N / 4, base + (size_t)(2 * i + 1) * N);
                adrs ad = {job.layer, job.tree, job.type, job.kp, (uint32_t)z + 1,
                           (job.idx_base >> (z + 1)) + i};
                thash<FAM, N, 2>(out, k, ad, in);
            }
            __syncthreads();
            if (act)
                store_val<FAM, N>(base + (size_t)i * N, out);
            __syncthreads();
        }
    }
    if (live && lane == 0) {
        for (int b = 0; b < N; b += 4) {
            uint32_t w = *reinterpret_cast<const uint32_t *>(base + b);
            *reinterpret_cast<uint32_t *>(job.root + b) = w;
            if (job.nodes)
                *reinterpret_cast<uint32_t *>(job.nodes + node_off * N + b) = w;
        }
    }
}

/* ---- after the trees ---- */

/* FORS public key of each signature: T_k over its k roots. */
template <int FAM, int N>
__global__ void k_fors_pk(sp P, const sig_meta *meta, int count, const dkey *keys,
                          const uint8_t *froots, uint8_t *fpk)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= count)
        return;
    const sig_meta m = meta[i];
    kregs<FAM, N> k;
    k.load(&keys[m.key]);
    adrs ad = {0, m.tree, A_FORS_ROOTS, m.leaf, 0, 0};
    uint32_t v[N / 4];
    thash_mem<FAM, N>(v, k, ad, froots + (size_t)i * P.k * N, P.k);
    store_val<FAM, N>(fpk + (size_t)i * N, v);
}

/* The WOTS+ signatures of every layer: one thread per (signature, layer, chain). The
 * message of layer 0 is the FORS public key, of layer j the root of layer j - 1. Layers
 * built in this batch saved their signed leaf's chains (a copy); a cached top layer was not
 * built, so its chains are computed. */
template <int FAM, int N>
__global__ void __launch_bounds__(256) k_wots_sign(sp P, const sig_meta *meta, size_t total,
                                                   const dkey *keys, const uint8_t *fpk,
                                                   const uint8_t *xroots, const uint8_t *wsave,
                                                   int nl, uint8_t *sigs)
{
    size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= total)
        return;
    constexpr int LEN = 2 * N + 3;
    const size_t per_sig = (size_t)P.d * LEN;
    const size_t i = t / per_sig;
    const uint32_t r = (uint32_t)(t - i * per_sig);
    const uint32_t layer = r / LEN, chain = r - layer * LEN;
    const uint8_t *msg = layer == 0 ? fpk + i * N : xroots + (i * nl + layer - 1) * N;
    const uint32_t digit = wots_digit<N>(msg, 2 * N, (int)chain);
    uint8_t *out = sigs + i * P.sig_bytes + P.n + P.fors_bytes +
                   (size_t)layer * (LEN + P.hp) * N + (size_t)chain * N;
    if ((int)layer < nl) {
        const uint8_t *src = wsave + (((i * nl + layer) * LEN + chain) * 16 + digit) * N;
#pragma unroll
        for (int b = 0; b < N; b += 4)
            *reinterpret_cast<uint32_t *>(out + b) = *reinterpret_cast<const uint32_t *>(src + b);
        return;
    }
    const sig_meta m = meta[i];
    kregs<FAM, N> k;
    k.load(&keys[m.key]);
    uint32_t v[N / 4];
    adrs ad = {layer, shr64(m.tree, (int)layer * P.hp), A_WOTS_PRF, layer_leaf(P, m, (int)layer),
               chain, 0};
    thash<FAM, N, 1>(v, k, ad, keys[m.key].sk_seed);
    ad.type = A_WOTS_HASH;
    fchain<FAM, N> f;
    f.start(k, ad);
#pragma unroll 1
    for (uint32_t s = 0; s < digit; s++)
        f.step(v, k, s);
    store_val<FAM, N>(out, v);
}

/* The top layer's authentication paths from a signer's cached tree (nodes level by level). */
static __global__ void k_top_auth(sp P, const sig_meta *meta, int count, const uint8_t *cache,
                           uint8_t *sigs)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= count * P.hp)
        return;
    const int i = t / P.hp, z = t % P.hp;
    const uint32_t leaf = layer_leaf(P, meta[i], P.d - 1);
    size_t off = 0;
    for (int y = 0; y < z; y++)
        off += (size_t)1 << (P.hp - y);
    const uint8_t *src = cache + (off + ((leaf >> z) ^ 1)) * P.n;
    uint8_t *dst = sigs + (size_t)i * P.sig_bytes + P.n + P.fors_bytes +
                   (size_t)(P.d - 1) * (P.len + P.hp) * P.n + (size_t)P.len * P.n +
                   (size_t)z * P.n;
    for (int b = 0; b < P.n; b += 4)
        *reinterpret_cast<uint32_t *>(dst + b) = *reinterpret_cast<const uint32_t *>(src + b);
}

/* Verification kernels: verify_kernels.cuh. */

} // namespace hbs_gpu

#endif
