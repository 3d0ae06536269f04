/* Kernels of XMSS and XMSS^MT batch signing under one key (xmss_sign.cu). A job is one
 * one-time signature: its key's position and the digits it signs. A chain starts from its
 * secret (derived from the seed, which comes in as a kernel parameter only, never through
 * device memory) and stops at its digit. The general path signs jobs here after the leaf
 * engine built the trees; the fused path (SHA-256, n = 32) builds the trees here too, and
 * the messages and whole signatures. */
#ifndef HBS_GPU_XMSS_SIGN_KERNELS_CUH
#define HBS_GPU_XMSS_SIGN_KERNELS_CUH

#include <stdint.h>

#include "gpu/stateful_device.cuh"
#include "gpu/stateful_hash.cuh"

namespace hbs_gpu {

/* XMSS WOTS+ jobs: job k is leaf[k] of tree[k] on layer[k], signing digits[k * len ..]. */
struct xs_jobs {
    const uint32_t *layer, *leaf;
    const uint64_t *tree;
    const uint8_t *digits;
};

/* The address of job k's chain i at hash index s (OTS address, keyAndMask 0). */
__device__ __forceinline__ void xs_adrs(uint32_t a[8], const xs_jobs &j, uint32_t k, uint32_t i,
                                        uint32_t s)
{
    a[0] = j.layer[k];
    a[1] = (uint32_t)(j.tree[k] >> 32);
    a[2] = (uint32_t)j.tree[k];
    a[3] = 0;
    a[4] = j.leaf[k];
    a[5] = i;
    a[6] = s;
    a[7] = 0;
}

/* sk_i = PRF_keygen(SK_SEED, PUB_SEED || ADRS), then digit F steps; out: job-major. */
template <int F>
__global__ void xmss_wots_sign_generic(xmss_args x, xs_jobs j, uint32_t njobs, uint8_t *out)
{
    const uint64_t t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= (uint64_t)njobs * x.len)
        return;
    const uint32_t k = (uint32_t)(t / x.len), i = (uint32_t)(t % x.len);
    uint8_t adrs[32], v[64], m[64 + 64 + 64 + 32];
    for (int b = 0; b < 32; b++)
        adrs[b] = 0;
    adrs_set(adrs, 0, j.layer[k]);
    adrs_set(adrs, 1, (uint32_t)(j.tree[k] >> 32));
    adrs_set(adrs, 2, (uint32_t)j.tree[k]);
    adrs_set(adrs, 4, j.leaf[k]);
    adrs_set(adrs, 5, i);
    x_secret<F>(v, x, adrs, m);
    for (unsigned b = 0; b < sizeof m; b++)
        m[b] = 0;
    const uint32_t steps = j.digits[(uint64_t)k * x.len + i];
    for (uint32_t s = 0; s < steps; s++) {
        adrs_set(adrs, 6, s);
        x_thash<F>(v, x, adrs, v, 1);
    }
    for (unsigned b = 0; b < x.n; b++)
        out[t * x.n + b] = v[b];
}

/* SHA-256 with n = 32, in registers, from the key's PRF and PRF_keygen midstates. */
__global__ void xmss_wots_sign_sha256(xmss_args x, x256_mid mid, xs_jobs j, uint32_t njobs, uint8_t *out)
{
    const uint64_t t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= (uint64_t)njobs * x.len)
        return;
    const uint32_t k = (uint32_t)(t / x.len), i = (uint32_t)(t % x.len);
    uint32_t a[8], v[8], pm[8];
    xs_adrs(a, j, k, i, 0);
#pragma unroll
    for (int b = 0; b < 8; b++)
        pm[b] = mid.prf[b];
    x256_secret(v, mid.keygen, x.pub_seed, a);
    const uint32_t steps = j.digits[(uint64_t)k * x.len + i];
    x256_chain(v, pm, a, 0, steps, [](uint32_t, const uint32_t *) {});
#pragma unroll
    for (int b = 0; b < 8; b++)
        put_be32(out + t * 32 + 4 * b, v[b]);
}

/* ---- XMSS SHA-256 n = 32: whole trees with the bottom signatures on the way ----
 * The trees a batch touches are built on the GPU, leaves and inner nodes. The messages'
 * digits are known before: a chain whose leaf signs a message stores its value after
 * `digit` steps on its way to the public end, so the bottom one-time signatures cost
 * nothing beyond the leaves. Tree k of the batch: layer[k], tree[k]; its nodes at
 * nodes + k * (2^(h+1) - 1) * 32, level 0 (the leaves) first, then each level up. */
#define XF_MAX_LEN 67

struct xf_args {
    xmss_args x; /* the seeds, n (32), len; the tree fields are unused */
    const uint32_t *layer;
    const uint64_t *tree;
    const int32_t *cap;    /* per leaf of the batch: the bottom job it signs, or -1 */
    const uint8_t *digits; /* job-major, len each */
    uint8_t *sig;          /* job-major, len * 32 bytes each */
    uint32_t h, k0;        /* tree height; the first tree of this launch */
    uint64_t leaves;       /* leaves in this launch (whole trees from k0 on) */
};

/* Offset in nodes of level z of a tree of height h. */
__device__ __forceinline__ uint64_t xf_level(uint32_t h, uint32_t z)
{
    return ((uint64_t)2 << h) - ((uint64_t)2 << (h - z));
}

__device__ __forceinline__ uint64_t xf_tree_nodes(uint32_t h) { return ((uint64_t)2 << h) - 1; }

/* The messages of a fused batch, hashed on the GPU (on the host they took a fifth of an
 * XMSS^MT batch): message i has index idx = first + i; r = PRF(SK_PRF, toByte(idx, 32)) to
 * r (i * 32), and the WOTS+ digits of H_msg(r || root || toByte(idx, 32), M)
 * (hbs_xmss_wots_digits, w = 16) to digits (i * len). SHA-256 with n = padlen = 32, word
 * by word: PRF is one compression from prf_mid (the state after toByte(3, 32) || SK_PRF),
 * H_msg two over toByte(2, 32) || r and root || toByte(idx, 32), then the message's. */
struct xf_msg_args {
    const uint8_t *bytes;
    const uint64_t *off;
    const uint32_t *mlen;
    uint64_t first;
    uint32_t count, len1, len;
    uint32_t prf_mid[8], root[8];
    uint8_t *r, *digits;
};

/* The WOTS+ digits (w = 16, n = 32: len1 = 64 and three checksum digits) of the 32-byte
 * value whose big-endian words are v (hbs_xmss_wots_digits). */
__device__ __forceinline__ void xf_digits(const uint32_t v[8], uint32_t len1, uint8_t *out)
{
    uint32_t csum = 0;
    for (uint32_t i = 0; i < len1; i++) {
        const uint32_t d = (v[i / 8] >> (28 - 4 * (i % 8))) & 15;
        out[i] = (uint8_t)d;
        csum += 15 - d;
    }
    out[len1] = (uint8_t)((csum >> 8) & 15);
    out[len1 + 1] = (uint8_t)((csum >> 4) & 15);
    out[len1 + 2] = (uint8_t)(csum & 15);
}

__global__ void xf_messages_sha256(xf_msg_args m)
{
    const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= m.count)
        return;
    const uint64_t idx = m.first + t;
    uint32_t r[8], st[8], w[16];
#pragma unroll
    for (int k = 0; k < 16; k++)
        w[k] = 0;
    w[6] = (uint32_t)(idx >> 32);
    w[7] = (uint32_t)idx;
    w[8] = 0x80000000u;
    w[15] = 96 * 8;
#pragma unroll
    for (int k = 0; k < 8; k++)
        r[k] = m.prf_mid[k];
    sha256_compress(r, w);
    sha256_iv(st);
#pragma unroll
    for (int k = 0; k < 8; k++) {
        w[k] = 0;
        w[8 + k] = r[k];
    }
    w[7] = 2;
    sha256_compress(st, w);
#pragma unroll
    for (int k = 0; k < 8; k++) {
        w[k] = m.root[k];
        w[8 + k] = 0;
    }
    w[14] = (uint32_t)(idx >> 32);
    w[15] = (uint32_t)idx;
    sha256_compress(st, w);
    /* the message, its 0x80 and the bit length of all 128 + mlen bytes */
    const uint8_t *msg = m.bytes + m.off[t];
    const uint32_t mlen = m.mlen[t];
    const uint32_t blocks = (mlen + 9 + 63) / 64;
    for (uint32_t b = 0; b < blocks; b++) {
#pragma unroll
        for (int k = 0; k < 16; k++) {
            uint32_t v = 0;
#pragma unroll
            for (int q = 0; q < 4; q++) {
                const uint32_t at = b * 64 + 4 * k + q;
                const uint32_t byte = at < mlen ? msg[at] : at == mlen ? 0x80u : 0u;
                v = v << 8 | byte;
            }
            w[k] = v;
        }
        if (b + 1 == blocks) {
            const uint64_t bits = ((uint64_t)mlen + 128) * 8;
            w[14] = (uint32_t)(bits >> 32);
            w[15] = (uint32_t)bits;
        }
        sha256_compress(st, w);
    }
#pragma unroll
    for (int k = 0; k < 8; k++)
        put_be32(m.r + (size_t)t * 32 + 4 * k, r[k]);
    xf_digits(st, m.len1, m.digits + (size_t)t * m.len);
}

/* One thread per chain: secret, 15 steps, the end to vals (leaf-major); the value after the
 * signed digit to the job's signature when the leaf signs one. */
template <int FORM = X256_CHAIN_FORM>
__device__ __forceinline__ void xf_chains_one(const xf_args &f, const x256_mid &mid,
                                              uint8_t *vals)
{
    const uint64_t t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= f.leaves * f.x.len)
        return;
    const uint64_t g = t / f.x.len, gg = ((uint64_t)f.k0 << f.h) + g;
    const uint32_t i = (uint32_t)(t % f.x.len), k = f.k0 + (uint32_t)(g >> f.h);
    const int32_t job = f.cap[gg];
    const uint32_t cd = job >= 0 ? f.digits[(uint64_t)job * f.x.len + i] : 0xffffffffu;
    uint8_t *cap_out = job >= 0 ? f.sig + ((uint64_t)job * f.x.len + i) * 32 : nullptr;
    uint32_t a[8], v[8], pm[8];
    a[0] = f.layer[k];
    a[1] = (uint32_t)(f.tree[k] >> 32);
    a[2] = (uint32_t)f.tree[k];
    a[3] = 0;
    a[4] = (uint32_t)(g & ((1u << f.h) - 1));
    a[5] = i;
    a[6] = 0;
    a[7] = 0;
#pragma unroll
    for (int b = 0; b < 8; b++)
        pm[b] = mid.prf[b];
    x256_secret(v, mid.keygen, f.x.pub_seed, a);
    x256_chain<FORM>(v, pm, a, 0, 15, [&](uint32_t s, const uint32_t *cv) {
        if (s == cd)
            for (int b = 0; b < 8; b++)
                put_be32(cap_out + 4 * b, cv[b]);
    });
#pragma unroll
    for (int b = 0; b < 8; b++)
        put_be32(vals + t * 32 + 4 * b, v[b]);
}

__global__ void xf_chains_sha256(xf_args f, x256_mid mid, uint8_t *vals)
{
    xf_chains_one(f, mid, vals);
}

/* The same with its registers capped (sf_chain_minb: blocks of 256 an SM; 3 by default) */
template <int MINB, int FORM = X256_CHAIN_FORM>
__global__ void __launch_bounds__(256, MINB) xf_chains_sha256_cap(xf_args f, x256_mid mid,
                                                                  uint8_t *vals)
{
    xf_chains_one<FORM>(f, mid, vals);
}

/* The L-tree of leaf g from its chain ends (len nodes at vals + g * len * 32): in place. */
__device__ __forceinline__ void xf_ltree_one(const xf_args &f, const uint32_t pm[8],
                                             uint8_t *node, uint64_t g, uint8_t *leaf)
{
    const uint32_t k = f.k0 + (uint32_t)(g >> f.h);
    uint32_t a[8], lv[8], rv[8], res[8];
    a[0] = f.layer[k];
    a[1] = (uint32_t)(f.tree[k] >> 32);
    a[2] = (uint32_t)f.tree[k];
    a[3] = 1;
    a[4] = (uint32_t)(g & ((1u << f.h) - 1));
    a[5] = 0;
    a[6] = 0;
    a[7] = 0;
    uint32_t l = f.x.len;
    for (uint32_t height = 0; l > 1; height++) {
        const uint32_t parents = l / 2;
        for (uint32_t i = 0; i < parents; i++) {
            for (int b = 0; b < 8; b++) {
                lv[b] = be32(node + (2 * i) * 32 + 4 * b);
                rv[b] = be32(node + (2 * i + 1) * 32 + 4 * b);
            }
            a[5] = height;
            a[6] = i;
            x256_h(res, pm, a, lv, rv);
            for (int b = 0; b < 8; b++)
                put_be32(node + i * 32 + 4 * b, res[b]);
        }
        if (l & 1)
            for (int b = 0; b < 32; b++)
                node[parents * 32 + b] = node[(l - 1) * 32 + b];
        l -= parents;
    }
    for (int b = 0; b < 32; b++)
        leaf[b] = node[b];
}

/* One thread per leaf (big launches): the leaf into its tree's level 0. */
__global__ void xf_ltree_serial_sha256(xf_args f, x256_mid mid, uint8_t *vals, uint8_t *nodes)
{
    const uint64_t g = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (g >= f.leaves)
        return;
    uint32_t pm[8];
    for (int b = 0; b < 8; b++)
        pm[b] = mid.prf[b];
    const uint64_t k = f.k0 + (g >> f.h);
    xf_ltree_one(f, pm, vals + g * f.x.len * 32,  g,
                 nodes + (k * xf_tree_nodes(f.h) + (g & ((1u << f.h) - 1))) * 32);
}

/* The L-trees of a launch a level at a time, a thread per node of the level over all its
 * leaves: between the serial kernel (a thread per leaf: a launch of 17,408 leaves is 4 warps
 * an SM, and ncu has it at a quarter of the SM's throughput) and the block kernel (most lanes
 * idle on the narrow levels). An L-tree has no more H calls above level 0 than on it, so
 * level 0's thread i also computes the address-only part (x256_h_prep) of upper call i: the
 * upper levels then cost two serial compressions a node. Nodes between levels are words,
 * xf_lt_stride(len) a leaf; prep holds 24 words (st1, bm0, bm1) per upper call. */
__host__ __device__ __forceinline__ uint32_t xf_lt_stride(uint32_t len) { return (len + 1) / 2; }
__host__ __device__ __forceinline__ uint32_t xf_lt_upper(uint32_t len) { return len - 1 - len / 2; }

__device__ __forceinline__ void xf_lt_addr(const xf_args &f, uint64_t g, uint32_t a[8])
{
    const uint32_t k = f.k0 + (uint32_t)(g >> f.h);
    a[0] = f.layer[k];
    a[1] = (uint32_t)(f.tree[k] >> 32);
    a[2] = (uint32_t)f.tree[k];
    a[3] = 1;
    a[4] = (uint32_t)(g & ((1u << f.h) - 1));
    a[5] = 0;
    a[6] = 0;
    a[7] = 0;
}

/* The finished L-tree root: leaf g of its tree, into the nodes' level 0 (bytes). */
__device__ __forceinline__ void xf_lt_leaf(const xf_args &f, uint64_t g, const uint32_t v[8],
                                           uint8_t *nodes)
{
    const uint64_t k = f.k0 + (g >> f.h);
    uint8_t *leaf = nodes + (k * xf_tree_nodes(f.h) + (g & ((1u << f.h) - 1))) * 32;
    for (int b = 0; b < 8; b++)
        put_be32(leaf + 4 * b, v[b]);
}

/* The L-trees of x256_lt_pack(len) leaves per block (x256_ltree_packed), each leaf into its
 * tree's level 0. */
__global__ void __launch_bounds__(X256_LT_THREADS)
    xf_ltree_packed_sha256(xf_args f, x256_mid mid, const uint8_t *vals, uint8_t *nodes)
{
    const uint32_t len = f.x.len, P = x256_lt_pack(len);
    const uint64_t g0 = (uint64_t)blockIdx.x * P;
    if (g0 >= f.leaves)
        return;
    const uint32_t leaves = f.leaves - g0 < P ? (uint32_t)(f.leaves - g0) : P;
    x256_ltree_block(
        vals + g0 * len * 32, len, leaves, mid.prf,
        [&](uint32_t p, uint32_t a[8]) { xf_lt_addr(f, g0 + p, a); },
        [&](uint32_t p, const uint32_t *root) { xf_lt_leaf(f, g0 + p, root, nodes); });
}

__global__ void xf_ltree_l0_sha256(xf_args f, x256_mid mid, const uint8_t *vals, uint32_t *out,
                                   uint32_t *prep, uint8_t *nodes)
{
    const uint64_t t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const uint32_t len = f.x.len, P = len / 2, S = xf_lt_stride(len), U = xf_lt_upper(len);
    if (t >= f.leaves * S)
        return;
    const uint64_t g = t / S;
    const uint32_t i = (uint32_t)(t % S);
    const uint8_t *src = vals + g * len * 32;
    uint32_t *dst = out + (g * S + i) * 8;
    if (i == P) { /* len odd: the last chain end moves up unchanged */
        for (int b = 0; b < 8; b++)
            dst[b] = be32(src + (len - 1) * 32 + 4 * b);
        return;
    }
    uint32_t a[8], pm[8], lv[8], rv[8], res[8];
    for (int b = 0; b < 8; b++) {
        pm[b] = mid.prf[b];
        lv[b] = be32(src + 2 * i * 32 + 4 * b);
        rv[b] = be32(src + (2 * i + 1) * 32 + 4 * b);
    }
    xf_lt_addr(f, g, a);
    a[6] = i;
    x256_h(res, pm, a, lv, rv);
    if (len == 2)
        xf_lt_leaf(f, g, res, nodes);
    else
        for (int b = 0; b < 8; b++)
            dst[b] = res[b];
    if (i >= U)
        return;
    /* upper call P + i: its height and index there */
    uint32_t l = len, base = 0, height = 0;
    while (P + i >= base + l / 2) {
        base += l / 2;
        l -= l / 2;
        height++;
    }
    uint32_t st1[8], bm0[8], bm1[8];
    xf_lt_addr(f, g, a);
    a[5] = height;
    a[6] = P + i - base;
    x256_h_prep(st1, bm0, bm1, pm, a);
    uint32_t *pp = prep + (g * U + i) * 24;
    for (int b = 0; b < 8; b++) {
        pp[b] = st1[b];
        pp[8 + b] = bm0[b];
        pp[16 + b] = bm1[b];
    }
}

/* One upper level: l nodes a leaf in `in` to l / 2 + (l & 1) in `out` (the root to the
 * tree's nodes when l is 2); their calls' preps from upper call u0 on. */
__global__ void xf_ltree_up_sha256(xf_args f, const uint32_t *in, uint32_t *out,
                                   const uint32_t *prep, uint32_t l, uint32_t u0, uint8_t *nodes)
{
    const uint64_t t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const uint32_t len = f.x.len, S = xf_lt_stride(len), U = xf_lt_upper(len),
                   P = l / 2, W = P + (l & 1);
    if (t >= f.leaves * W)
        return;
    const uint64_t g = t / W;
    const uint32_t i = (uint32_t)(t % W);
    const uint32_t *src = in + g * S * 8;
    uint32_t *dst = out + (g * S + i) * 8;
    if (i == P) {
        for (int b = 0; b < 8; b++)
            dst[b] = src[(l - 1) * 8 + b];
        return;
    }
    const uint32_t *pp = prep + (g * U + u0 + i) * 24;
    uint32_t lv[8], rv[8], st1[8], bm0[8], bm1[8], res[8];
    for (int b = 0; b < 8; b++) {
        lv[b] = src[2 * i * 8 + b];
        rv[b] = src[(2 * i + 1) * 8 + b];
        st1[b] = pp[b];
        bm0[b] = pp[8 + b];
        bm1[b] = pp[16 + b];
    }
    x256_h_data(res, st1, bm0, bm1, lv, rv);
    if (l == 2)
        xf_lt_leaf(f, g, res, nodes);
    else
        for (int b = 0; b < 8; b++)
            dst[b] = res[b];
}

/* Level z (>= 1) of ntrees trees (from f.k0 on) from level z - 1: one thread per node. */
__global__ void xf_level_sha256(xf_args f, x256_mid mid, uint32_t ntrees, uint32_t z, uint8_t *nodes)
{
    const uint64_t t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const uint32_t per_log = f.h - z;
    if (t >= ((uint64_t)ntrees << per_log))
        return;
    const uint32_t k = f.k0 + (uint32_t)(t >> per_log), idx = (uint32_t)(t & ((1u << per_log) - 1));
    uint8_t *base = nodes + (uint64_t)k * xf_tree_nodes(f.h) * 32;
    const uint8_t *below = base + (xf_level(f.h, z - 1) + 2 * (uint64_t)idx) * 32;
    uint8_t *out = base + (xf_level(f.h, z) + idx) * 32;
    uint32_t a[8], pm[8], lv[8], rv[8], res[8];
    for (int b = 0; b < 8; b++) {
        pm[b] = mid.prf[b];
        lv[b] = be32(below + 4 * b);
        rv[b] = be32(below + 32 + 4 * b);
    }
    a[0] = f.layer[k];
    a[1] = (uint32_t)(f.tree[k] >> 32);
    a[2] = (uint32_t)f.tree[k];
    a[3] = 2;
    a[4] = 0;
    a[5] = z - 1;
    a[6] = idx;
    a[7] = 0;
    x256_h(res, pm, a, lv, rv);
    for (int b = 0; b < 8; b++)
        put_be32(out + 4 * b, res[b]);
}

/* The address-only part of every inner node's H (x256_h_prep: st1, bm0, bm1, 24 words) of
 * ntrees trees from f.k0 on, to prep ((2^h - 1) * 24 words a tree, level by level): a
 * thread a node, over the whole GPU (inside the levels kernel below, one SM did all of a
 * tree's: 0.22 ms for ten levels on the H200). */
__global__ void xf_levels_prep_sha256(xf_args f, x256_mid mid, uint32_t ntrees, uint32_t *prep)
{
    const uint64_t t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const uint32_t inner = (1u << f.h) - 1;
    if (t >= (uint64_t)ntrees * inner)
        return;
    const uint32_t k = f.k0 + (uint32_t)(t / inner);
    uint32_t z = 1, idx = (uint32_t)(t % inner), cnt = 1u << (f.h - 1);
    while (idx >= cnt) {
        idx -= cnt;
        cnt >>= 1;
        z++;
    }
    uint32_t a[8], pm[8], st1[8], bm0[8], bm1[8];
    for (int b = 0; b < 8; b++)
        pm[b] = mid.prf[b];
    a[0] = f.layer[k];
    a[1] = (uint32_t)(f.tree[k] >> 32);
    a[2] = (uint32_t)f.tree[k];
    a[3] = 2;
    a[4] = 0;
    a[5] = z - 1;
    a[6] = idx;
    a[7] = 0;
    x256_h_prep(st1, bm0, bm1, pm, a);
    uint32_t *o = prep + t * 24;
    for (int b = 0; b < 8; b++) {
        o[b] = st1[b];
        o[8 + b] = bm0[b];
        o[16 + b] = bm1[b];
    }
}

/* Levels zlo .. zhi of small trees (ntrees from f.k0 on), two serial compressions a node
 * from xf_levels_prep_sha256's prep: a block per subtree of level zhi (2^(h - zhi) of them a
 * tree), a level at a time. Two launches split a tree's levels, so that its lower half is
 * spread over many SMs (one SM doing all of a tree's ten levels took 0.14 ms on the H200). */
__global__ void __launch_bounds__(512) xf_levels_block_sha256(xf_args f, uint32_t ntrees,
                                                              uint8_t *nodes, const uint32_t *prep,
                                                              uint32_t zlo, uint32_t zhi)
{
    const uint32_t nsub = 1u << (f.h - zhi), b = blockIdx.x, tid = threadIdx.x;
    if (b >= ntrees * nsub)
        return;
    const uint32_t k = f.k0 + b / nsub, sub = b % nsub, inner = (1u << f.h) - 1;
    uint8_t *base = nodes + (uint64_t)k * xf_tree_nodes(f.h) * 32;
    const uint32_t *pp = prep + (uint64_t)(b / nsub) * inner * 24;
    uint32_t lv[8], rv[8], res[8], st1[8], bm0[8], bm1[8];
    for (uint32_t z = zlo; z <= zhi; z++) {
        const uint32_t cnt = 1u << (zhi - z), q0 = (1u << f.h) - (2u << (f.h - z));
        const uint8_t *below = base + xf_level(f.h, z - 1) * 32;
        uint8_t *at = base + xf_level(f.h, z) * 32;
        for (uint32_t j = tid; j < cnt; j += blockDim.x) {
            const uint32_t idx = sub * cnt + j;
            const uint32_t *q = pp + (q0 + idx) * 24;
            for (int w = 0; w < 8; w++) {
                lv[w] = be32(below + 2 * (uint64_t)idx * 32 + 4 * w);
                rv[w] = be32(below + (2 * (uint64_t)idx + 1) * 32 + 4 * w);
                st1[w] = q[w];
                bm0[w] = q[8 + w];
                bm1[w] = q[16 + w];
            }
            x256_h_data(res, st1, bm0, bm1, lv, rv);
            for (int w = 0; w < 8; w++)
                put_be32(at + (uint64_t)idx * 32 + 4 * w, res[w]);
        }
        __syncthreads();
    }
}

/* ---- the fused batch's signatures put together on the GPU ----
 * Trees are in batch order: every touched tree of layer 0, then of layer 1, and so on. Each
 * tree below the top layer gets its root signed by its parent's leaf (an upper job, in tree
 * order); then each signature is written whole, so that one copy brings it to the host. */
#define XF_MAX_D 12
/* The longest signature of a fused set: XMSSMT-SHA2_60/12_256's 27,683 bytes. */
#define XF_MAX_SIG 27712

struct xf_up_args {
    const uint8_t *nodes;
    const uint32_t *layer; /* per tree */
    const uint64_t *tree;
    uint32_t *job_layer, *job_leaf;
    uint64_t *job_tree;
    uint8_t *job_digits;
    uint32_t k0, njobs, h, len1, len; /* the jobs of trees k0 .. k0 + njobs - 1 */
};

/* A thread per upper job: its position and the digits of the root it signs. */
__global__ void xf_upper_jobs(xf_up_args u)
{
    const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x, k = u.k0 + t;
    if (t >= u.njobs)
        return;
    const uint8_t *root = u.nodes + ((uint64_t)k * xf_tree_nodes(u.h) + xf_level(u.h, u.h)) * 32;
    uint32_t v[8];
    for (int b = 0; b < 8; b++)
        v[b] = be32(root + 4 * b);
    xf_digits(v, u.len1, u.job_digits + (uint64_t)k * u.len);
    u.job_layer[k] = u.layer[k] + 1;
    u.job_leaf[k] = (uint32_t)(u.tree[k] & ((1u << u.h) - 1));
    u.job_tree[k] = u.tree[k] >> u.h;
}

/* The address-only part of the step at a (x256_f_prep) into o: 16 words. */
template <bool INL>
__device__ __forceinline__ void x256_prep_store(uint32_t *o, const uint32_t pm[8], uint32_t a[8])
{
    uint32_t st1[8], bm[8];
    x256_f_prep<INL>(st1, bm, pm, a);
    for (int b = 0; b < 8; b++) {
        o[b] = st1[b];
        o[8 + b] = bm[b];
    }
}

/* The chain at a from its secret through `steps` steps whose address-only parts are at q
 * (16 words a step); its value, 32 bytes, to out. */
__device__ __forceinline__ void x256_sign_prepped(uint8_t *out, const uint32_t kmid[8],
                                                  const uint8_t *pub_seed, const uint32_t a[8],
                                                  uint32_t steps, const uint32_t *q)
{
    uint32_t v[8];
    x256_secret(v, kmid, pub_seed, a);
#pragma unroll 1
    for (uint32_t s = 0; s < steps; s++) {
        uint32_t st1[8], bm[8];
        for (int b = 0; b < 8; b++) {
            st1[b] = q[s * 16 + b];
            bm[b] = q[s * 16 + 8 + b];
        }
        x256_f_data<true>(v, st1, bm);
    }
    for (int b = 0; b < 8; b++)
        put_be32(out + 4 * b, v[b]);
}

/* The upper jobs' chains, in two launches: the address-only part of F (x256_f_prep: st1 and
 * bm, 16 words) of every step each chain might take, for the trees [k0, k0 + njobs) before
 * they are built (a job's position is its tree's); then, once the roots are signed into
 * digits, each chain alone with one serial compression a step (a thread a chain doing all
 * four took 0.25 ms on the H200 for 17 jobs: latency alone). */
__global__ void xf_upper_prep(xf_args f, x256_mid mid, uint32_t k0, uint32_t njobs, uint32_t *prep)
{
    const uint64_t t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= (uint64_t)njobs * f.x.len * 15)
        return;
    const uint32_t k = k0 + (uint32_t)(t / (f.x.len * 15)),
                   i = (uint32_t)(t / 15 % f.x.len), s = (uint32_t)(t % 15);
    uint32_t a[8], pm[8];
    for (int b = 0; b < 8; b++)
        pm[b] = mid.prf[b];
    const uint64_t tr = f.tree[k];
    a[0] = f.layer[k] + 1;
    a[1] = (uint32_t)(tr >> f.h >> 32);
    a[2] = (uint32_t)(tr >> f.h);
    a[3] = 0;
    a[4] = (uint32_t)(tr & ((1u << f.h) - 1));
    a[5] = i;
    a[6] = s;
    a[7] = 0;
    x256_prep_store<false>(prep + t * 16, pm, a);
}

/* A thread per chain of the upper jobs of trees [k0, k0 + njobs): the secret, then its
 * digit's steps from prep (job-relative, as xf_upper_prep wrote it); out by job, k0 first. */
__global__ void xf_upper_sign(xf_args f, x256_mid mid, xs_jobs j, uint32_t k0, uint32_t njobs,
                              const uint32_t *prep, uint8_t *out)
{
    const uint64_t t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= (uint64_t)njobs * f.x.len)
        return;
    const uint32_t k = k0 + (uint32_t)(t / f.x.len), i = (uint32_t)(t % f.x.len);
    uint32_t a[8];
    xs_adrs(a, j, k, i, 0);
    x256_sign_prepped(out + t * 32, mid.keygen, f.x.pub_seed, a,
                      j.digits[(uint64_t)k * f.x.len + i], prep + t * 15 * 16);
}

/* One-time signatures from the secrets in two passes (SHA-256, n = 32), for the bottom trees
 * the cache has. A thread per chain takes as many steps as its digit, so a warp runs as
 * long as its biggest digit (15 almost always): a kernel that did the whole of each step in
 * its thread took as long as building the tree's every chain (ncu: 615 against 631 us for
 * 1,024 messages). Here a block per job first does the address-only part of every step its
 * chains take (three of F's four compressions; the steps packed, no idle lanes), then a
 * thread per chain takes its secret and its steps at one compression each. prep holds the
 * job's steps from k * len * 15 on, chain by chain, 16 words a step. */
/* (both passes take the key's midstates from the host: a block's thread 0 computing them
 * held up a pass of a few compressions a thread by two) */
__global__ void __launch_bounds__(256) xs_prep_sha256(xmss_args x, x256_mid mid, xs_jobs j,
                                                      uint32_t njobs, uint32_t *prep)
{
    __shared__ uint32_t pre[XF_MAX_LEN + 1];
    const uint32_t k = blockIdx.x, len = x.len;
    if (k >= njobs)
        return;
    if (threadIdx.x == 0) {
        uint32_t sum = 0;
        for (uint32_t i = 0; i < len; i++) {
            pre[i] = sum;
            sum += j.digits[(uint64_t)k * len + i];
        }
        pre[len] = sum;
    }
    __syncthreads();
    uint32_t *o = prep + (uint64_t)k * len * 15 * 16;
    for (uint32_t t = threadIdx.x; t < pre[len]; t += blockDim.x) {
        uint32_t lo = 0, hi = len; /* the chain i with pre[i] <= t < pre[i + 1] */
        while (hi - lo > 1) {
            const uint32_t m = (lo + hi) / 2;
            if (pre[m] <= t)
                lo = m;
            else
                hi = m;
        }
        uint32_t a[8];
        xs_adrs(a, j, k, lo, t - pre[lo]);
        x256_prep_store<true>(o + (uint64_t)t * 16, mid.prf, a);
    }
}

/* The second pass: a thread per chain, its secret, then its steps from prep. */
__global__ void xs_sign_prepped_sha256(xmss_args x, x256_mid mid, xs_jobs j, uint32_t njobs,
                                       const uint32_t *prep, uint8_t *out)
{
    const uint64_t t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= (uint64_t)njobs * x.len)
        return;
    const uint32_t k = (uint32_t)(t / x.len), i = (uint32_t)(t % x.len);
    const uint8_t *dg = j.digits + (uint64_t)k * x.len;
    uint32_t at = 0;
    for (uint32_t c = 0; c < i; c++)
        at += dg[c];
    uint32_t a[8];
    xs_adrs(a, j, k, i, 0);
    x256_sign_prepped(out + t * 32, mid.keygen, x.pub_seed, a, dg[i],
                      prep + ((uint64_t)k * x.len * 15 + at) * 16);
}

struct xf_asm_args {
    const uint8_t *nodes;
    const uint8_t *wots0; /* the bottom one-time signatures, message-major */
    const uint8_t *r;     /* each message's r */
    const uint8_t *upper; /* the upper jobs' one-time signatures */
    uint8_t *out;         /* sb bytes a signature */
    uint64_t first, tfirst[XF_MAX_D];
    uint32_t layer_at[XF_MAX_D];
    uint32_t i0, count, sb, idx_bytes, len, h, d; /* signatures i0 .. i0 + count - 1 */
};

/* A block per signature: each thread gathers 32-byte pieces (r, a chain value, an
 * authentication node; the index goes with r) into shared memory, idx || r || per layer,
 * WOTS+ signature || authentication path; then the block writes the signature out in
 * consecutive words (a thread a piece, written straight to its unaligned place, took 0.75 ms
 * for 16,384 XMSS^MT signatures on the H200). */
__global__ void xf_assemble(xf_asm_args a)
{
    __shared__ uint8_t sig[XF_MAX_SIG];
    if (blockIdx.x >= a.count)
        return;
    const uint32_t per = 1 + a.d * (a.len + a.h);
    const uint64_t i = a.i0 + blockIdx.x, G = a.first + i;
    for (uint32_t s = threadIdx.x; s < per; s += blockDim.x) {
        uint8_t *dst = sig;
        const uint8_t *src;
        if (s == 0) {
            for (uint32_t b = 0; b < a.idx_bytes; b++)
                dst[b] = (uint8_t)(G >> (8 * (a.idx_bytes - 1 - b)));
            dst += a.idx_bytes;
            src = a.r + i * 32;
        } else {
            const uint32_t j = (s - 1) / (a.len + a.h), u = (s - 1) % (a.len + a.h);
            const uint64_t below = j * a.h >= 64 ? 0 : G >> (j * a.h); /* this layer's leaf */
            dst += a.idx_bytes + 32 + (s - 1) * 32;
            if (u < a.len) {
                src = j == 0 ? a.wots0 + (i * a.len + u) * 32
                             : a.upper + ((a.layer_at[j - 1] + (below - a.tfirst[j - 1])) * a.len + u) * 32;
            } else {
                const uint32_t z = u - a.len;
                const uint64_t k = a.layer_at[j] + ((below >> a.h) - a.tfirst[j]),
                               leaf = below & ((1u << a.h) - 1);
                src = a.nodes + (k * xf_tree_nodes(a.h) + xf_level(a.h, z) + ((leaf >> z) ^ 1)) * 32;
            }
        }
        const uint32_t *s32 = reinterpret_cast<const uint32_t *>(src); /* 4-aligned */
        for (int k = 0; k < 8; k++) {
            const uint32_t w = s32[k]; /* little-endian: memory order */
            for (int b = 0; b < 4; b++)
                dst[4 * k + b] = (uint8_t)(w >> (8 * b));
        }
    }
    __syncthreads();
    /* out: the bytes before the first aligned word, the words, the bytes after */
    uint8_t *out = a.out + i * a.sb;
    const uint32_t head = (uint32_t)((4 - ((uintptr_t)out & 3)) & 3) < a.sb
                              ? (uint32_t)((4 - ((uintptr_t)out & 3)) & 3) : a.sb,
                   words = (a.sb - head) / 4;
    for (uint32_t b = threadIdx.x; b < head; b += blockDim.x)
        out[b] = sig[b];
    uint32_t *ow = reinterpret_cast<uint32_t *>(out + head);
    for (uint32_t k = threadIdx.x; k < words; k += blockDim.x) {
        const uint8_t *q = sig + head + 4 * k;
        ow[k] = (uint32_t)q[0] | (uint32_t)q[1] << 8 | (uint32_t)q[2] << 16 | (uint32_t)q[3] << 24;
    }
    for (uint32_t b = head + 4 * words + threadIdx.x; b < a.sb; b += blockDim.x)
        out[b] = sig[b];
}

} // namespace hbs_gpu

#endif
