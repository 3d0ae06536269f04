/* Kernels of batch verification of the stateful schemes, one stage of the work per launch
 * so that every stage has a thread per piece of work:
 *
 *   start     a thread per job: the message digest (XMSS H_msg, LMS Q); with SHA-256 and
 *             n = 32 (the register hashes) also a thread per path level of each layer:
 *             its H's address-only part (path_prep)
 *   digits    a thread per job: the one-time signature's digits, counted per digit value
 *   scan      one thread: where each digit value's chains start in the task list
 *   scatter   a thread per job: its chains into the task list, grouped by digit
 *   chains    a thread per chain, longest chains first: the chain's remaining steps
 *   ltree     (XMSS) a thread per pair of nodes, one launch per level of the L-tree; with
 *             the register hashes first a thread per H call of the whole L-tree, its
 *             address-only part (ltree_prep), then the levels two compressions a call
 *   path      (XMSS) a thread per job: up the authentication path; the root is the next
 *             layer's message, or compared with the public key on the last layer
 *   finish    (LMS) a thread per job: K, the leaf, up the path, compared with the key
 *
 * A job is one XMSS / XMSS^MT signature (all its layers, one after the other) or one level
 * of an HSS signature (the host ANDs the levels). Chains are grouped by digit because a
 * warp runs as long as its longest chain: sorted, the 32 chains of a warp have the same
 * length, and the long ones are started first. The host has parsed and length-checked
 * every job (or, for the device-resident entry, a kernel has), so a thread reads only
 * inside its job's bytes. What locates the jobs is kept as structure of arrays (one array
 * per field), so the loads of a warp coalesce. */
#ifndef HBS_GPU_STATEFUL_VERIFY_KERNELS_CUH
#define HBS_GPU_STATEFUL_VERIFY_KERNELS_CUH

#include <stdint.h>

#include "gpu/stateful_device.cuh"
#include "gpu/stateful_hash.cuh"

namespace hbs_gpu {

#define XMSS_GPU_MAX_LEN 131    /* WOTS+ chains of an n = 64 set */
#define HBS_GPU_LMOTS_MAX_P 265 /* LM-OTS chains of W1 with n = 32 */
#define SFV_BUCKETS 256         /* digit values: LM-OTS W8 has 256 */
#define SFV_CHAIN_BITS 9        /* a task is job << 9 | chain */

/* Where job t's bytes are (device pointers), and its verdict (1 valid, 0 not). For LMS, pk
 * is the bare LMS public key and sig the bare LMS signature of one level. */
struct sfv_jobs {
    const uint8_t *const *pk, *const *sig, *const *msg;
    const uint32_t *msg_len;
    uint8_t *ok;
};

/* Device scratch of one launch group, per job: node (64 bytes: the value the current
 * layer signs), mid (XMSS SHA-256 n = 32: the PRF midstate of its PUB_SEED), dig (its
 * digits), ends[0] and ends[1] (chain ends, then the L-tree's levels in turn); and the
 * task list and the bucket counters (hist[b], then the cursors at SFV_BUCKETS + b). */
struct sfv_scratch {
    uint8_t *node, *dig, *ends[2];
    uint32_t *mid, *tasks, *hist;
    /* the path's address-only parts (xv_path_prep): 24 words a level of each layer's path,
     * word-major ((layer * tree_h + level) * 24 + word) * count + job, so that a warp's
     * loads of one word are one run */
    uint32_t *pprep;
    /* the L-trees' address-only parts (xv_ltree_prep), the same way: (call * 24 + word) *
     * count + job, the len - 1 calls of a job's L-tree numbered level by level */
    uint32_t *lprep;
    uint32_t stride; /* chains per job */
};

/* One XMSS parameter set (every job of a launch uses it). */
struct xv_set {
    uint32_t n, padlen, len, len1, d, tree_h, idx_bytes;
};

/* One LMS level type pair (m == n within a level). */
struct lv_set {
    uint32_t n, p, w, ls, h;
};

__device__ __forceinline__ uint32_t sfv_thread() { return blockIdx.x * blockDim.x + threadIdx.x; }

__device__ __forceinline__ uint64_t sfv_index(const uint8_t *sig, unsigned bytes)
{
    uint64_t idx = 0;
    for (unsigned b = 0; b < bytes; b++)
        idx = idx << 8 | sig[b];
    return idx;
}

/* ---- shared stages ---- */

__global__ void sfv_clear(uint32_t *hist)
{
    if (sfv_thread() == 0)
        for (int b = 0; b < 2 * SFV_BUCKETS; b++)
            hist[b] = 0;
}

/* How often each value 0..15 occurs among dg[0..len): 16-bit counts, two to a word (a job
 * has at most 265 chains), in registers: every index below is a constant once unrolled. */
__device__ __forceinline__ void sfv_counts16(const uint8_t *dg, uint32_t len, uint32_t c[8])
{
#pragma unroll
    for (int k = 0; k < 8; k++)
        c[k] = 0;
    for (uint32_t i = 0; i < len; i++) {
        const uint32_t d = dg[i], inc = 1u << (16 * (d & 1));
#pragma unroll
        for (int k = 0; k < 8; k++)
            c[k] += (d >> 1) == (uint32_t)k ? inc : 0;
    }
}

__device__ __forceinline__ uint32_t sfv_count_of(const uint32_t c[8], int b)
{
    return (c[b >> 1] >> (16 * (b & 1))) & 0xffff;
}

/* Adds the digits dg[0..len) of one job to the bucket counts. */
__device__ void sfv_count(const uint8_t *dg, uint32_t len, uint32_t buckets, uint32_t *hist)
{
    if (buckets <= 16) {
        uint32_t c[8];
        sfv_counts16(dg, len, c);
#pragma unroll
        for (int b = 0; b < 16; b++)
            if (sfv_count_of(c, b))
                atomicAdd(&hist[b], sfv_count_of(c, b));
        return;
    }
    for (uint32_t b = 0; b < buckets; b++) {
        uint32_t c = 0;
        for (uint32_t i = 0; i < len; i++)
            c += dg[i] == b;
        if (c)
            atomicAdd(&hist[b], c);
    }
}

/* The cursors from the counts, which are cleared for the next layer. */
__global__ void sfv_scan(uint32_t *hist, uint32_t buckets)
{
    if (sfv_thread() != 0)
        return;
    uint32_t at = 0;
    for (uint32_t b = 0; b < buckets; b++) {
        hist[SFV_BUCKETS + b] = at;
        at += hist[b];
        hist[b] = 0;
    }
}

__global__ void sfv_scatter(sfv_scratch w, uint32_t len, uint32_t buckets, uint32_t count)
{
    const uint32_t t = sfv_thread();
    if (t >= count)
        return;
    const uint8_t *dg = w.dig + (size_t)t * w.stride;
    if (buckets <= 16) {
        uint32_t c[8], at[16];
        sfv_counts16(dg, len, c);
#pragma unroll
        for (int b = 0; b < 16; b++)
            at[b] = sfv_count_of(c, b) ? atomicAdd(&w.hist[SFV_BUCKETS + b], sfv_count_of(c, b)) : 0;
        for (uint32_t i = 0; i < len; i++) {
            const uint32_t d = dg[i];
            uint32_t pos = 0;
#pragma unroll
            for (int b = 0; b < 16; b++) {
                pos = d == (uint32_t)b ? at[b] : pos;
                at[b] += d == (uint32_t)b;
            }
            w.tasks[pos] = t << SFV_CHAIN_BITS | i;
        }
        return;
    }
    for (uint32_t b = 0; b < buckets; b++) {
        uint32_t c = 0;
        for (uint32_t i = 0; i < len; i++)
            c += dg[i] == b;
        if (c == 0)
            continue;
        uint32_t at = atomicAdd(&w.hist[SFV_BUCKETS + b], c);
        for (uint32_t i = 0; i < len; i++)
            if (dg[i] == b)
                w.tasks[at++] = t << SFV_CHAIN_BITS | i;
    }
}

/* ---- XMSS / XMSS^MT ---- */

__device__ __forceinline__ void words_be(uint32_t *w, const uint8_t *b, unsigned nw)
{
    for (unsigned k = 0; k < nw; k++)
        w[k] = be32(b + 4 * k);
}

/* Where a job is on `layer`: the leaf and tree there, and the layer's part of the
 * signature (WOTS+ signature, then authentication path). */
struct xv_pos {
    uint32_t leaf;
    uint64_t tree;
    const uint8_t *part;
};

__device__ __forceinline__ xv_pos xv_locate(const xv_set &s, const uint8_t *sig, uint32_t layer)
{
    const uint64_t at = sfv_index(sig, s.idx_bytes) >> (layer * s.tree_h); /* h <= 60 */
    xv_pos p;
    p.leaf = (uint32_t)(at & ((1u << s.tree_h) - 1));
    p.tree = at >> s.tree_h;
    p.part = sig + s.idx_bytes + s.n + (size_t)layer * (s.len + s.tree_h) * s.n;
    return p;
}

/* The byte-stream hashes want the set and PUB_SEED in an xmss_args. */
__device__ __forceinline__ void xv_args(xmss_args &x, const xv_set &s, const uint8_t *pk)
{
    for (unsigned k = 0; k < s.n; k++)
        x.pub_seed[k] = pk[4 + s.n + k];
    x.n = s.n;
    x.padlen = s.padlen;
    x.len = s.len;
}

__device__ __forceinline__ void xv_adrs(uint8_t a[32], uint32_t layer, uint64_t tree,
                                        uint32_t type, uint32_t w4, uint32_t w5, uint32_t w6)
{
    for (int b = 0; b < 32; b++)
        a[b] = 0;
    adrs_set(a, 0, layer);
    adrs_set(a, 1, (uint32_t)(tree >> 32));
    adrs_set(a, 2, (uint32_t)tree);
    adrs_set(a, 3, type);
    adrs_set(a, 4, w4);
    adrs_set(a, 5, w5);
    adrs_set(a, 6, w6);
}

/* H_msg, and the PRF midstate of toByte(3, 32) || PUB_SEED for the register hashes. */
template <int F, bool REG>
__global__ void xv_start(xv_set s, sfv_jobs j, sfv_scratch w,
                         uint32_t count)
{
    const uint32_t t = sfv_thread();
    if (t >= count)
        return;
    const uint8_t *pk = j.pk[t], *sig = j.sig[t];
    xmss_hash_msg_dev<F>(w.node + (size_t)t * 64, s.n, s.padlen, sig + s.idx_bytes, pk + 4,
                         sfv_index(sig, s.idx_bytes), j.msg[t], j.msg_len[t]);
    if constexpr (REG) {
        uint32_t m[16], st[8];
        for (int k = 0; k < 7; k++)
            m[k] = 0;
        m[7] = 3;
        words_be(m + 8, pk + 36, 8);
        sha256_iv(st);
        sf_compress256(st, m);
        for (int k = 0; k < 8; k++)
            w.mid[(size_t)t * 8 + k] = st[k];
    }
}

/* The len base-16 digits of the node: 2n message digits, then the 3 checksum digits (as
 * hbs_xmss_wots_digits). */
__global__ void xv_digits(xv_set s, sfv_scratch w, uint32_t count)
{
    const uint32_t t = sfv_thread();
    if (t >= count)
        return;
    const uint8_t *v = w.node + (size_t)t * 64;
    uint8_t *dg = w.dig + (size_t)t * w.stride;
    unsigned csum = 0;
    for (unsigned i = 0; i < s.len1; i++) {
        const uint8_t d = (uint8_t)((v[i / 2] >> (i % 2 ? 0 : 4)) & 15);
        dg[i] = d;
        csum += 15u - d;
    }
    dg[s.len1] = (uint8_t)((csum >> 8) & 15);
    dg[s.len1 + 1] = (uint8_t)((csum >> 4) & 15);
    dg[s.len1 + 2] = (uint8_t)(csum & 15);
    sfv_count(dg, s.len, 16, w.hist);
}

template <int F, bool REG>
__global__ void xv_chains(xv_set s, sfv_jobs j, sfv_scratch w,
                          uint32_t layer, uint32_t ntasks)
{
    const uint32_t t = sfv_thread();
    if (t >= ntasks)
        return;
    const uint32_t task = w.tasks[t], job = task >> SFV_CHAIN_BITS,
                   c = task & ((1u << SFV_CHAIN_BITS) - 1);
    const uint8_t *pk = j.pk[job], *sig = j.sig[job];
    const xv_pos at = xv_locate(s, sig, layer);
    const uint32_t first = w.dig[(size_t)job * w.stride + c], n = s.n;
    const uint8_t *in = at.part + (size_t)c * n;
    uint8_t *out = w.ends[0] + ((size_t)job * w.stride + c) * n;
    if constexpr (REG) {
        uint32_t v[8], mid[8], a[8] = {layer, (uint32_t)(at.tree >> 32), (uint32_t)at.tree, 0,
                                       at.leaf, c, 0, 0};
        words_be(v, in, 8);
        for (int k = 0; k < 8; k++)
            mid[k] = w.mid[(size_t)job * 8 + k];
#pragma unroll 1
        for (uint32_t st = first; st < 15; st++) {
            a[6] = st;
            x256_f<true>(v, mid, a);
        }
        for (int k = 0; k < 8; k++)
            put_be32(out + 4 * k, v[k]);
    } else {
        xmss_args x;
        uint8_t adrs[32], v[64];
        xv_args(x, s, pk);
        xv_adrs(adrs, layer, at.tree, 0, at.leaf, c, 0);
        for (unsigned k = 0; k < n; k++)
            v[k] = in[k];
        for (uint32_t st = first; st < 15; st++) {
            adrs_set(adrs, 6, st);
            x_thash<F>(v, x, adrs, v, 1);
        }
        for (unsigned k = 0; k < n; k++)
            out[k] = v[k];
    }
}

/* One level of the L-tree: l nodes in ends[from] become (l + 1) / 2 in the other buffer
 * (an odd last node moves up unhashed). The byte-stream hashes: the register ones go
 * through xv_ltree_prep and xv_ltree_data. */
template <int F>
__global__ void xv_ltree(xv_set s, sfv_jobs j, sfv_scratch w,
                         uint32_t layer, uint32_t l, uint32_t height, int from, uint32_t count)
{
    const uint32_t per = (l + 1) / 2;
    const uint64_t t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= (uint64_t)count * per)
        return;
    const uint32_t job = (uint32_t)(t / per), i = (uint32_t)(t % per), n = s.n;
    const uint8_t *in = w.ends[from] + (size_t)job * w.stride * n;
    uint8_t *out = w.ends[from ^ 1] + ((size_t)job * w.stride + i) * n;
    if (2 * i + 1 >= l) {
        for (unsigned k = 0; k < n; k++)
            out[k] = in[(size_t)(l - 1) * n + k];
        return;
    }
    const xv_pos at = xv_locate(s, j.sig[job], layer);
    xmss_args x;
    uint8_t adrs[32], pair[128], r[64];
    xv_args(x, s, j.pk[job]);
    xv_adrs(adrs, layer, at.tree, 1, at.leaf, height, i);
    for (unsigned k = 0; k < 2 * n; k++)
        pair[k] = in[(size_t)2 * i * n + k];
    x_thash<F>(r, x, adrs, pair, 2);
    for (unsigned k = 0; k < n; k++)
        out[k] = r[k];
}

/* An H's address-only part (x256_h_prep: st1 and the two bitmasks, 24 words) in the
 * word-major layout of pprep and lprep: word k of job j's part at at[k * count], where at
 * points at the part's slot for job j. */
__device__ __forceinline__ void xv_put_prep(uint32_t *at, uint32_t count, const uint32_t st1[8],
                                            const uint32_t bm0[8], const uint32_t bm1[8])
{
#pragma unroll
    for (int k = 0; k < 8; k++) {
        at[(size_t)k * count] = st1[k];
        at[(size_t)(8 + k) * count] = bm0[k];
        at[(size_t)(16 + k) * count] = bm1[k];
    }
}

__device__ __forceinline__ void xv_get_prep(const uint32_t *at, uint32_t count, uint32_t st1[8],
                                            uint32_t bm0[8], uint32_t bm1[8])
{
#pragma unroll
    for (int k = 0; k < 8; k++) {
        st1[k] = at[(size_t)k * count];
        bm0[k] = at[(size_t)(8 + k) * count];
        bm1[k] = at[(size_t)(16 + k) * count];
    }
}

/* The address-only parts of all len - 1 H calls of every job's L-tree on this layer, a
 * thread a call (x256_h_prep: four of H's six compressions). The levels (xv_ltree_data) are
 * left two compressions a call: the launches of the small top levels, a few calls a job,
 * had run a whole H a thread with the multiprocessors nearly empty (H100, ncu: 54-85 us
 * each at 6-28 % occupancy for 16,384 jobs). */
__global__ void xv_ltree_prep(xv_set s, sfv_jobs j, sfv_scratch w, uint32_t layer,
                              uint32_t count)
{
    const uint64_t t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= (uint64_t)count * (s.len - 1))
        return;
    const uint32_t job = (uint32_t)(t % count), c = (uint32_t)(t / count);
    uint32_t l = s.len, off = 0, lvl = 0;
    while (c >= off + l / 2) {
        off += l / 2;
        l -= l / 2;
        lvl++;
    }
    const xv_pos at = xv_locate(s, j.sig[job], layer);
    uint32_t mid[8], st1[8], bm0[8], bm1[8],
        a[8] = {layer, (uint32_t)(at.tree >> 32), (uint32_t)at.tree, 1, at.leaf, lvl, c - off, 0};
    for (int k = 0; k < 8; k++)
        mid[k] = w.mid[(size_t)job * 8 + k];
    x256_h_prep_folded(st1, bm0, bm1, mid, a);
    xv_put_prep(w.lprep + (size_t)c * 24 * count + job, count, st1, bm0, bm1);
}

/* One level of every job's L-tree from xv_ltree_prep's parts: the level's l nodes in
 * ends[from] to its (l + 1) / 2 parents in ends[from ^ 1], its calls numbered from first.
 * A thread a parent, the jobs' threads side by side (the prep loads are one run a warp);
 * the chain ends are 4-aligned, read and written a word at a time. */
__global__ void xv_ltree_data(xv_set s, sfv_scratch w, uint32_t l, uint32_t first, int from,
                              uint32_t count)
{
    const uint32_t per = (l + 1) / 2;
    const uint64_t t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= (uint64_t)count * per)
        return;
    const uint32_t job = (uint32_t)(t % count), i = (uint32_t)(t / count);
    const uint32_t *in = (const uint32_t *)(w.ends[from] + (size_t)job * w.stride * 32);
    uint32_t *out = (uint32_t *)(w.ends[from ^ 1] + ((size_t)job * w.stride + i) * 32);
    if (2 * i + 1 >= l) {
        for (int k = 0; k < 8; k++)
            out[k] = in[(size_t)(l - 1) * 8 + k];
        return;
    }
    uint32_t lw[8], rw[8], r[8], st1[8], bm0[8], bm1[8];
#pragma unroll
    for (int k = 0; k < 8; k++) {
        lw[k] = bswap32(in[(size_t)2 * i * 8 + k]);
        rw[k] = bswap32(in[(size_t)(2 * i + 1) * 8 + k]);
    }
    xv_get_prep(w.lprep + (size_t)(first + i) * 24 * count + job, count, st1, bm0, bm1);
    x256_h_data<true>(r, st1, bm0, bm1, lw, rw);
#pragma unroll
    for (int k = 0; k < 8; k++)
        out[k] = bswap32(r[k]);
}

/* The address-only part (x256_h_prep: four of H's six compressions) of every level of
 * every layer's path, all at once before the chains: it depends on the key's public seed and
 * the signature's index only. A thread a level then, where the path itself, a thread a job
 * up tree_h levels one after another, left a multiprocessor one warp a scheduler (H100,
 * ncu: 6 % occupancy, 181 us of one layer's path for 16,384 jobs). */
__global__ void xv_path_prep(xv_set s, sfv_jobs j, sfv_scratch w, uint32_t count)
{
    const uint32_t t = sfv_thread();
    if (t >= count * s.d * s.tree_h)
        return;
    const uint32_t job = t % count, r = t / count, level = r % s.tree_h, layer = r / s.tree_h;
    const xv_pos at = xv_locate(s, j.sig[job], layer);
    uint32_t mid[8], st1[8], bm0[8], bm1[8],
        a[8] = {layer, (uint32_t)(at.tree >> 32), (uint32_t)at.tree, 2, 0, level,
                at.leaf >> (level + 1), 0};
    for (int k = 0; k < 8; k++)
        mid[k] = w.mid[(size_t)job * 8 + k];
    x256_h_prep_folded(st1, bm0, bm1, mid, a);
    xv_put_prep(w.pprep + (size_t)r * 24 * count + job, count, st1, bm0, bm1);
}

/* Up the authentication path from the L-tree's root (in ends[from]); on the last layer the
 * root is compared with the public key's. With REG, each level's address-only part comes
 * from xv_path_prep: two compressions a level are left to this thread. */
template <int F, bool REG>
__global__ void xv_path(xv_set s, sfv_jobs j, sfv_scratch w,
                        uint32_t layer, int from, uint32_t count)
{
    const uint32_t t = sfv_thread();
    if (t >= count)
        return;
    const uint8_t *pk = j.pk[t], *sig = j.sig[t];
    const xv_pos at = xv_locate(s, sig, layer);
    const uint32_t n = s.n, H = s.tree_h;
    const uint8_t *auth = at.part + (size_t)s.len * n;
    const uint8_t *leaf = w.ends[from] + (size_t)t * w.stride * n;
    uint8_t *node = w.node + (size_t)t * 64;
    if constexpr (REG) {
        uint32_t cur[8];
        const uint32_t *pp = w.pprep + (size_t)layer * H * 24 * count + t;
        words_be(cur, leaf, 8);
#pragma unroll 1
        for (uint32_t k = 0; k < H; k++, pp += (size_t)24 * count) {
            uint32_t sib[8], res[8], st1[8], bm0[8], bm1[8], lw[8], rw[8];
            words_be(sib, auth + (size_t)k * 32, 8);
            xv_get_prep(pp, count, st1, bm0, bm1);
            const bool right = (at.leaf >> k) & 1;
#pragma unroll
            for (int b = 0; b < 8; b++) {
                lw[b] = right ? sib[b] : cur[b];
                rw[b] = right ? cur[b] : sib[b];
            }
            x256_h_data<true>(res, st1, bm0, bm1, lw, rw);
#pragma unroll
            for (int b = 0; b < 8; b++)
                cur[b] = res[b];
        }
        for (int k = 0; k < 8; k++)
            put_be32(node + 4 * k, cur[k]);
    } else {
        xmss_args x;
        uint8_t adrs[32], pair[128];
        xv_args(x, s, pk);
        xv_adrs(adrs, layer, at.tree, 2, 0, 0, 0);
        for (unsigned b = 0; b < n; b++)
            node[b] = leaf[b];
        for (uint32_t k = 0; k < H; k++) {
            adrs_set(adrs, 5, k);
            adrs_set(adrs, 6, at.leaf >> (k + 1));
            const int right = (at.leaf >> k) & 1;
            for (unsigned b = 0; b < n; b++) {
                pair[(right ? n : 0) + b] = node[b];
                pair[(right ? 0 : n) + b] = auth[(size_t)k * n + b];
            }
            x_thash<F>(node, x, adrs, pair, 2);
        }
    }
    if (layer + 1 == s.d) {
        uint8_t diff = 0;
        for (unsigned k = 0; k < n; k++)
            diff |= node[k] ^ pk[4 + k];
        j.ok[t] = diff == 0;
    }
}

/* ---- LMS (one HSS level) ---- */

/* Q = H(I || u32str(q) || u16str(D_MESG) || C || message). */
template <int F>
__global__ void lv_start(lv_set s, sfv_jobs j, sfv_scratch w,
                         uint32_t count)
{
    const uint32_t t = sfv_thread();
    if (t >= count)
        return;
    const uint8_t *pk = j.pk[t], *sig = j.sig[t];
    uint8_t head[22];
    typename stream_of<F>::type h;
    for (int k = 0; k < 16; k++)
        head[k] = pk[8 + k];
    for (int k = 0; k < 4; k++)
        head[16 + k] = sig[k];
    head[20] = 0x81;
    head[21] = 0x81;
    h.init();
    h.absorb(head, 22);
    h.absorb(sig + 8, s.n);
    h.absorb(j.msg[t], j.msg_len[t]);
    h.finish(w.node + (size_t)t * 64, s.n);
}

/* a[i] = coef(Q || Cksm(Q), i, w) for i < p (RFC 8554 section 4.4). */
__global__ void lv_digits(lv_set s, sfv_scratch w, uint32_t count)
{
    const uint32_t t = sfv_thread();
    if (t >= count)
        return;
    const uint8_t *Q = w.node + (size_t)t * 64;
    uint8_t *a = w.dig + (size_t)t * w.stride;
    const unsigned wb = s.w, per_byte = 8 / wb, mask = (1u << wb) - 1, u = s.n * per_byte;
    uint32_t sum = 0;
    for (unsigned i = 0; i < u; i++) {
        a[i] = (uint8_t)((Q[i / per_byte] >> (8 - wb * (i % per_byte + 1))) & mask);
        sum += mask - a[i];
    }
    sum <<= s.ls;
    for (unsigned i = u; i < s.p; i++) {
        /* checksum bytes follow Q: byte n is sum >> 8, byte n + 1 the low byte */
        const unsigned byte = i * wb / 8;
        const uint32_t cb = byte == s.n ? (sum >> 8) & 0xff : sum & 0xff;
        a[i] = (uint8_t)((cb >> (8 - wb * (i % per_byte + 1))) & mask);
    }
    sfv_count(a, s.p, 1u << wb, w.hist);
}

/* NW > 0: SHA-256 chain steps in registers (n = 4 * NW); NW = 0: byte streams of F. */
template <int F, int NW>
__global__ void lv_chains(lv_set s, sfv_jobs j, sfv_scratch w,
                          uint32_t ntasks)
{
    const uint32_t t = sfv_thread();
    if (t >= ntasks)
        return;
    const uint32_t task = w.tasks[t], job = task >> SFV_CHAIN_BITS,
                   c = task & ((1u << SFV_CHAIN_BITS) - 1);
    const uint8_t *pk = j.pk[job], *sig = j.sig[job];
    const uint32_t n = s.n, q = be32(sig), top = (1u << s.w) - 1,
                   first = w.dig[(size_t)job * w.stride + c];
    const uint8_t *y = sig + 8 + n + (size_t)c * n;
    uint8_t *out = w.ends[0] + ((size_t)job * w.stride + c) * n;
    if constexpr (NW > 0) {
        uint32_t Iw[4], pre[8], v[NW];
        words_be(Iw, pk + 8, 4);
        lms_prefix_rounds(pre, Iw, q);
        words_be(v, y, NW);
#pragma unroll 1
        for (uint32_t st = first; st < top; st++)
            lms_step_sha256<NW>(pre, Iw, q, c, st, v);
        for (int k = 0; k < NW; k++)
            put_be32(out + 4 * k, v[k]);
    } else {
        uint8_t m[23 + 32];
        for (int k = 0; k < 16; k++)
            m[k] = pk[8 + k];
        put_be32(m + 16, q);
        m[20] = (uint8_t)(c >> 8);
        m[21] = (uint8_t)c;
        for (uint32_t k = 0; k < n; k++)
            m[23 + k] = y[k];
        for (uint32_t st = first; st < top; st++) {
            m[22] = (uint8_t)st;
            sf_hash<F>(m + 23, n, m, 23 + n);
        }
        for (uint32_t k = 0; k < n; k++)
            out[k] = m[23 + k];
    }
}

/* K = H(I || u32str(q) || u16str(D_PBLC) || z[0] || ... || z[p-1]), the leaf, up the path
 * (RFC 8554 Algorithm 6a), compared with the key's T[1]. */
template <int F>
__global__ void lv_finish(lv_set s, sfv_jobs j, sfv_scratch w,
                          uint32_t count)
{
    const uint32_t t = sfv_thread();
    if (t >= count)
        return;
    const uint8_t *pk = j.pk[t], *sig = j.sig[t];
    const uint32_t n = s.n, q = be32(sig);
    uint8_t node[22 + 64], cur[32];
    typename stream_of<F>::type h;
    for (int k = 0; k < 16; k++)
        node[k] = pk[8 + k];
    put_be32(node + 16, q);
    node[20] = 0x80;
    node[21] = 0x80;
    h.init();
    h.absorb(node, 22);
    h.absorb(w.ends[0] + (size_t)t * w.stride * n, s.p * n);
    uint32_t r = (1u << s.h) + q;
    put_be32(node + 16, r);
    node[20] = 0x82;
    node[21] = 0x82;
    h.finish(node + 22, n);
    sf_hash<F>(cur, n, node, 22 + n);
    const uint8_t *path = sig + 12 + n + (size_t)s.p * n;
    for (uint32_t z = 0; z < s.h; z++, r >>= 1) {
        put_be32(node + 16, r >> 1);
        node[20] = 0x83;
        node[21] = 0x83;
        for (uint32_t k = 0; k < n; k++) {
            node[22 + ((r & 1) ? n : 0) + k] = cur[k];
            node[22 + ((r & 1) ? 0 : n) + k] = path[(size_t)z * n + k];
        }
        sf_hash<F>(cur, n, node, 22 + 2 * n);
    }
    uint8_t diff = 0;
    for (uint32_t k = 0; k < n; k++)
        diff |= cur[k] ^ pk[24 + k];
    j.ok[t] = diff == 0;
}

/* ---- the device-resident entry: jobs from the caller's packed arrays ---- */

/* The caller's arrays: count signatures and keys of one set, packed; messages at mp + moff. */
struct sfv_dev_in {
    const uint8_t *sigs, *mp, *pks;
    const uint64_t *moff;
    const uint32_t *mlen;
    uint32_t sig_bytes, pk_bytes, one_key;
};

/* The job arrays, as written. */
struct sfv_jobs_out {
    const uint8_t **pk, **sig, **msg;
    uint32_t *msg_len;
};

/* XMSS: the key names the set's OID and the index lies inside the key (hbs_xmss_verify's
 * checks, the lengths being the set's by the caller's layout). */
__global__ void xv_device_jobs(sfv_dev_in in, uint32_t oid, uint32_t h, uint32_t idx_bytes,
                               sfv_jobs_out out, uint8_t *valid, uint32_t count)
{
    const uint32_t t = sfv_thread();
    if (t >= count)
        return;
    const uint8_t *pk = in.pks + (in.one_key ? 0 : (size_t)t * in.pk_bytes);
    const uint8_t *sig = in.sigs + (size_t)t * in.sig_bytes;
    out.pk[t] = pk;
    out.sig[t] = sig;
    out.msg[t] = in.mp + in.moff[t];
    out.msg_len[t] = in.mlen[t];
    const uint64_t idx = sfv_index(sig, idx_bytes);
    valid[t] = be32(pk) == oid && (h >= 64 || (idx >> h) == 0);
}

/* One HSS level of the set: its types and where its parts sit in every signature. */
struct hv_level {
    uint32_t lms_code, ots_code, n, p, h;
    uint32_t sig_at; /* its LMS signature */
    uint32_t pk_at;  /* the next level's key (below the bottom level: unused) */
};

struct hv_set {
    uint32_t L;
    hv_level lv[8];
};

/* HSS: job k * count + t is level k of item t. An item is valid if every type code in its
 * key and signature is the set's, Nspk = L - 1 and every q lies inside its tree. */
__global__ void hv_device_jobs(sfv_dev_in in, hv_set s, sfv_jobs_out out, uint8_t *valid,
                               uint32_t count)
{
    const uint32_t t = sfv_thread();
    if (t >= count)
        return;
    const uint8_t *pk = in.pks + (in.one_key ? 0 : (size_t)t * in.pk_bytes);
    const uint8_t *sig = in.sigs + (size_t)t * in.sig_bytes;
    bool ok = be32(pk) == s.L && be32(pk + 4) == s.lv[0].lms_code &&
              be32(pk + 8) == s.lv[0].ots_code && be32(sig) == s.L - 1;
    for (uint32_t k = 0; k < s.L; k++) {
        const hv_level &v = s.lv[k];
        const uint8_t *ls = sig + v.sig_at;
        const size_t job = (size_t)k * count + t;
        ok = ok && ((uint64_t)be32(ls) >> v.h) == 0 && be32(ls + 4) == v.ots_code &&
             be32(ls + 8 + v.n + (size_t)v.p * v.n) == v.lms_code;
        out.pk[job] = k == 0 ? pk + 4 : sig + s.lv[k - 1].pk_at;
        out.sig[job] = ls;
        if (k + 1 < s.L) {
            const uint8_t *next = sig + v.pk_at;
            ok = ok && be32(next) == s.lv[k + 1].lms_code && be32(next + 4) == s.lv[k + 1].ots_code;
            out.msg[job] = next;
            out.msg_len[job] = 24 + s.lv[k + 1].n;
        } else {
            out.msg[job] = in.mp + in.moff[t];
            out.msg_len[job] = in.mlen[t];
        }
    }
    valid[t] = ok;
}

/* results[t] = 0 if the item is valid and each of its levels' jobs verified, else fail. */
__global__ void sfv_device_fold(const uint8_t *valid, const uint8_t *ok, uint32_t levels,
                                uint32_t count, int fail, int *results)
{
    const uint32_t t = sfv_thread();
    if (t >= count)
        return;
    bool v = valid[t];
    for (uint32_t k = 0; k < levels; k++)
        v = v && ok[(size_t)k * count + t];
    results[t] = v ? 0 : fail;
}

} // namespace hbs_gpu

#endif
