/* Kernels of batch signing under one stateful key: the one-time signatures, one thread per
 * chain. A job is one one-time signature: its key's position and the digits it signs (the
 * host hashed the message). A chain starts from its secret (derived from the seed, which
 * comes in as a kernel parameter only, never through device memory) and stops at its digit.
 * The trees (leaves: stateful.cu's kernels) and everything else come from the host. */
#ifndef HBS_GPU_STATEFUL_SIGN_KERNELS_CUH
#define HBS_GPU_STATEFUL_SIGN_KERNELS_CUH

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
    unsigned at = put_prefix(m, x, 4, x.sk_seed);
    for (unsigned b = 0; b < x.n; b++)
        m[at + b] = x.pub_seed[b];
    at += x.n;
    for (int b = 0; b < 32; b++)
        m[at + b] = adrs[b];
    sf_hash<F>(v, x.n, m, at + 32);
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
__global__ void xmss_wots_sign_sha256(xmss_args x, xs_jobs j, uint32_t njobs, uint8_t *out)
{
    __shared__ x256_mid mid;
    const uint64_t t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (threadIdx.x == 0)
        x256_midstates(&mid, x);
    __syncthreads();
    if (t >= (uint64_t)njobs * x.len)
        return;
    const uint32_t k = (uint32_t)(t / x.len), i = (uint32_t)(t % x.len);
    uint32_t a[8], v[8], w[16], pm[8];
    a[0] = j.layer[k];
    a[1] = (uint32_t)(j.tree[k] >> 32);
    a[2] = (uint32_t)j.tree[k];
    a[3] = 0;
    a[4] = j.leaf[k];
    a[5] = i;
    a[6] = 0;
    a[7] = 0;
#pragma unroll
    for (int b = 0; b < 8; b++) {
        w[b] = be32(x.pub_seed + 4 * b);
        w[8 + b] = a[b];
        v[b] = mid.keygen[b];
        pm[b] = mid.prf[b];
    }
    sf_compress256(v, w);
    w[0] = 0x80000000u;
#pragma unroll
    for (int b = 1; b < 15; b++)
        w[b] = 0;
    w[15] = 1024;
    sf_compress256(v, w);
    const uint32_t steps = j.digits[(uint64_t)k * x.len + i];
#pragma unroll 1
    for (uint32_t s = 0; s < steps; s++) {
        a[6] = s;
        x256_f(v, pm, a);
    }
#pragma unroll
    for (int b = 0; b < 8; b++)
        put_be32(out + t * 32 + 4 * b, v[b]);
}

/* One LMS tree's LM-OTS jobs: job k signs at leaf q[k] the digits[k * p ..]. */
struct ls_args {
    uint8_t I[16];
    uint8_t seed[32];
    uint32_t n, p;
};

/* x = H(I || q || i || 0xff || SEED), then digit steps (hash index j = 0, 1, ...). */
template <int NW>
__global__ void lms_ots_sign_sha256(ls_args a, const uint32_t *qs, const uint8_t *digits,
                                    uint32_t njobs, uint8_t *y)
{
    const uint64_t t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= (uint64_t)njobs * a.p)
        return;
    const uint32_t k = (uint32_t)(t / a.p), i = (uint32_t)(t % a.p), q = qs[k];
    const uint32_t steps = digits[t];
    uint32_t I[4], v[NW], pre[8];
#pragma unroll
    for (int b = 0; b < 4; b++)
        I[b] = be32(a.I + 4 * b);
#pragma unroll
    for (int b = 0; b < NW; b++)
        v[b] = be32(a.seed + 4 * b);
    lms_prefix_rounds(pre, I, q);
    lms_step_sha256<NW>(pre, I, q, i, 0xff, v);
#pragma unroll 1
    for (uint32_t s = 0; s < steps; s++)
        lms_step_sha256<NW>(pre, I, q, i, s, v);
#pragma unroll
    for (int b = 0; b < NW; b++)
        put_be32(y + t * (4 * NW) + 4 * b, v[b]);
}

__global__ void lms_ots_sign_shake(ls_args a, const uint32_t *qs, const uint8_t *digits,
                                   uint32_t njobs, uint8_t *y)
{
    const uint64_t t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= (uint64_t)njobs * a.p)
        return;
    const uint32_t k = (uint32_t)(t / a.p), i = (uint32_t)(t % a.p), q = qs[k], n = a.n;
    const uint32_t steps = digits[t];
    uint8_t m[23 + 32];
    for (int b = 0; b < 16; b++)
        m[b] = a.I[b];
    put_be32(m + 16, q);
    m[20] = (uint8_t)(i >> 8);
    m[21] = (uint8_t)i;
    m[22] = 0xff;
    for (uint32_t b = 0; b < n; b++)
        m[23 + b] = a.seed[b];
    sf_hash<SF_SHAKE256>(m + 23, n, m, 23 + n);
    for (uint32_t s = 0; s < steps; s++) {
        m[22] = (uint8_t)s;
        sf_hash<SF_SHAKE256>(m + 23, n, m, 23 + n);
    }
    for (uint32_t b = 0; b < n; b++)
        y[t * n + b] = m[23 + b];
}

} // namespace hbs_gpu

#endif
