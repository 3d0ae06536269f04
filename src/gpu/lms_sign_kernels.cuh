/* Kernels of LMS and HSS batch signing under one key (lms_sign.cu). A job is one LM-OTS
 * signature: its leaf and the digits it signs; a chain starts from its secret (the tree's
 * SEED comes in as a kernel parameter only) and stops at its digit. With SHA-256 the fused
 * path builds each tree here, the bottom signatures on the way; for a one-level key the
 * messages and the whole signatures too. */
#ifndef HBS_GPU_LMS_SIGN_KERNELS_CUH
#define HBS_GPU_LMS_SIGN_KERNELS_CUH

#include <stdint.h>

#include "gpu/stateful_device.cuh"
#include "gpu/stateful_hash.cuh"

namespace hbs_gpu {

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
    uint32_t v[NW];
    lms_chain_sha256<NW, false>(v, a.I, a.seed, q, i, digits[t], 0, nullptr);
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
    uint8_t m[23 + 32];
    lms_chain_shake<false>(m, a.I, a.seed, n, q, i, digits[t], 0, nullptr);
    for (uint32_t b = 0; b < n; b++)
        y[t * n + b] = m[23 + b];
}

/* ---- LMS with SHA-256: one tree per launch, the bottom signatures on the way ----
 * As for XMSS: a chain of a leaf that signs a message stores its value after the digit's
 * steps. T[r] (r = 1 .. 2^(h+1) - 1, RFC 8554 numbering) at T + (r - 1) * n. */
struct lf_args {
    uint8_t I[16];
    uint8_t seed[32];
    uint32_t n, p, w, h;
    const int32_t *cap;    /* per leaf of the tree: the job it signs, or -1; or NULL */
    const uint8_t *digits; /* job-major, p each */
    uint8_t *sig;          /* job-major, p * n bytes each */
};

template <int NW> __global__ void lf_chains_sha256(lf_args a, uint8_t *y)
{
    const uint64_t t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= ((uint64_t)a.p << a.h))
        return;
    const uint32_t q = (uint32_t)(t / a.p), i = (uint32_t)(t % a.p);
    const uint32_t steps = (1u << a.w) - 1;
    const int32_t job = a.cap ? a.cap[q] : -1;
    const uint32_t cd = job >= 0 ? a.digits[(uint64_t)job * a.p + i] : 0xffffffffu;
    uint8_t *cap_out = job >= 0 ? a.sig + ((uint64_t)job * a.p + i) * (4 * NW) : nullptr;
    uint32_t v[NW];
    lms_chain_sha256<NW, true>(v, a.I, a.seed, q, i, steps, cd, cap_out);
#pragma unroll
    for (int k = 0; k < NW; k++)
        put_be32(y + t * (4 * NW) + 4 * k, v[k]);
}

/* Leaf q: K = H(I || q || D_PBLC || y[0..p-1]), T[2^h + q] = H(I || r || D_LEAF || K). */
template <int NW> __global__ void lf_leaves_sha256(lf_args a, const uint8_t *y, uint8_t *T)
{
    const uint32_t q = blockIdx.x * blockDim.x + threadIdx.x;
    if (q < (1u << a.h))
        lms_leaf_words<NW>(a.I, q, a.h, a.p, y + (uint64_t)q * a.p * (4 * NW),
                           T + ((uint64_t)(1u << a.h) - 1 + q) * (4 * NW));
}

/* T[r] = H(I || r || D_INTR || T[2r] || T[2r+1]); the children are adjacent in T. */
template <int NW>
__device__ __forceinline__ void lf_node(const uint32_t I[4], uint32_t r, uint8_t *T)
{
    uint32_t v[NW];
    lms_hash_words<NW>(v, I, r, 0x8383, T + (uint64_t)(2 * r - 1) * (4 * NW), 2 * NW);
#pragma unroll
    for (int k = 0; k < NW; k++)
        put_be32(T + (uint64_t)(r - 1) * (4 * NW) + 4 * k, v[k]);
}

/* Nodes r = lv .. 2 lv - 1, one thread each. */
template <int NW> __global__ void lf_level_sha256(lf_args a, uint32_t lv, uint8_t *T)
{
    const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= lv)
        return;
    uint32_t I[4];
#pragma unroll
    for (int k = 0; k < 4; k++)
        I[k] = be32(a.I + 4 * k);
    lf_node<NW>(I, lv + t, T);
}

/* Every level of a small tree in one launch of one block, a level at a time. */
template <int NW> __global__ void __launch_bounds__(512) lf_levels_block_sha256(lf_args a, uint8_t *T)
{
    uint32_t I[4];
#pragma unroll
    for (int k = 0; k < 4; k++)
        I[k] = be32(a.I + 4 * k);
    for (uint32_t lv = 1u << (a.h - 1); lv >= 1; lv /= 2) {
        for (uint32_t t = threadIdx.x; t < lv; t += blockDim.x)
            lf_node<NW>(I, lv + t, T);
        __syncthreads();
    }
}

/* ---- the messages and the signatures of a one-level LMS batch on the GPU ----
 * As for XMSS: each message's C and digits here instead of on the host, and each signature
 * put together here (u32 0 || q || ots type || C || y || lms type || path), then one copy
 * back. The key's only tree signs every message: message t has q = (first + t) mod 2^h. */

/* a[i] = coef(Q || Cksm(Q), i, w) (RFC 8554 section 4.4) for an n-byte Q (n <= 32): the p
 * digits an LM-OTS signature signs; on the host (lms_sign.cu) and the GPU alike. */
__host__ __device__ inline void lms_digits(const uint8_t *Q, uint32_t n, uint32_t w, uint32_t p,
                                           uint32_t ls, uint8_t *a)
{
    const uint32_t per = 8 / w, mask = (1u << w) - 1, u = n * per;
    uint8_t qs[32 + 2];
    uint32_t sum = 0;
    for (uint32_t b = 0; b < n; b++)
        qs[b] = Q[b];
    for (uint32_t i = 0; i < u; i++) {
        a[i] = (uint8_t)((qs[i / per] >> (8 - w * (i % per + 1))) & mask);
        sum += mask - a[i];
    }
    sum <<= ls;
    qs[n] = (uint8_t)(sum >> 8);
    qs[n + 1] = (uint8_t)sum;
    for (uint32_t i = u; i < p; i++)
        a[i] = (uint8_t)((qs[i * w / 8] >> (8 - w * (i % per + 1))) & mask);
}

/* SHA-256 of pre (plen <= 64 bytes) || msg (mlen bytes) into st. */
__device__ __forceinline__ void lf_sha256_bytes(uint32_t st[8], const uint8_t *pre, uint32_t plen,
                                                const uint8_t *msg, uint32_t mlen)
{
    const uint64_t L = (uint64_t)plen + mlen, blocks = (L + 9 + 63) / 64;
    sha256_iv(st);
    for (uint64_t b = 0; b < blocks; b++) {
        uint32_t w[16];
        for (int k = 0; k < 16; k++) {
            uint32_t v = 0;
            for (int c = 0; c < 4; c++) {
                const uint64_t at = b * 64 + 4 * k + c;
                const uint32_t byte = at < plen ? pre[at]
                                      : at < L  ? msg[at - plen]
                                      : at == L ? 0x80u
                                                : 0u;
                v = v << 8 | byte;
            }
            w[k] = v;
        }
        if (b + 1 == blocks) {
            w[14] = (uint32_t)((L * 8) >> 32);
            w[15] = (uint32_t)(L * 8);
        }
        sha256_compress(st, w);
    }
}

struct lf_msg_args {
    const uint8_t *bytes;
    const uint64_t *off;
    const uint32_t *mlen;
    uint8_t I[16], seed[32];
    uint64_t first;
    uint32_t count, n, w, p, ls, h;
    uint8_t *C;      /* n bytes a message */
    uint8_t *digits; /* p a message */
};

/* C = H(I || q || D_RAND || 0xff || SEED), Q = H(I || q || D_MESG || C || message), and
 * Q's digits with the checksum's (lms_coefs), a thread per message. */
__global__ void lf_messages_sha256(lf_msg_args m)
{
    const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= m.count)
        return;
    const uint32_t q = (uint32_t)((m.first + t) & ((1ull << m.h) - 1)), n = m.n;
    uint8_t pre[64], qs[32];
    uint32_t st[8];
    for (int b = 0; b < 16; b++)
        pre[b] = m.I[b];
    put_be32(pre + 16, q);
    pre[20] = 0xff;
    pre[21] = 0xfd;
    pre[22] = 0xff;
    for (uint32_t b = 0; b < n; b++)
        pre[23 + b] = m.seed[b];
    lf_sha256_bytes(st, pre, 23 + n, nullptr, 0);
    pre[20] = 0x81;
    pre[21] = 0x81;
    for (uint32_t b = 0; b < n; b++) {
        pre[22 + b] = (uint8_t)(st[b / 4] >> (24 - 8 * (b % 4)));
        m.C[(uint64_t)t * n + b] = pre[22 + b];
    }
    lf_sha256_bytes(st, pre, 22 + n, m.bytes + m.off[t], m.mlen[t]);
    for (int b = 0; b < 64; b++) /* SEED was there */
        pre[b] = 0;
    for (uint32_t b = 0; b < n; b++)
        qs[b] = (uint8_t)(st[b / 4] >> (24 - 8 * (b % 4)));
    lms_digits(qs, n, m.w, m.p, m.ls, m.digits + (uint64_t)t * m.p);
}

struct lf_asm_args {
    const uint8_t *T;    /* the tree: T[r] at (r - 1) * n */
    const uint8_t *C, *y; /* per message: n bytes; p * n bytes */
    uint8_t *out;
    uint64_t first;
    uint32_t count, sb, n, p, h, ots_code, lms_code;
};

/* A block per signature, a word per thread at a time (every field is whole words). */
__global__ void lf_assemble(lf_asm_args a)
{
    const uint32_t m = blockIdx.x, n = a.n;
    if (m >= a.count)
        return;
    const uint32_t q = (uint32_t)((a.first + m) & ((1ull << a.h) - 1));
    const uint32_t c0 = 12, y0 = c0 + n, t0 = y0 + a.p * n, path0 = t0 + 4;
    uint8_t *s = a.out + (uint64_t)m * a.sb;
    for (uint32_t o = 4 * threadIdx.x; o < a.sb; o += 4 * blockDim.x) {
        const uint8_t *src;
        if (o < c0 || (o >= t0 && o < path0)) { /* L - 1 = 0, q, the two types */
            put_be32(s + o, o == 4 ? q : o == 8 ? a.ots_code : o == t0 ? a.lms_code : 0);
            continue;
        }
        if (o < y0) {
            src = a.C + (uint64_t)m * n + (o - c0);
        } else if (o < t0) {
            src = a.y + (uint64_t)m * a.p * n + (o - y0);
        } else {
            const uint32_t z = (o - path0) / n, r = (((1u << a.h) + q) >> z) ^ 1;
            src = a.T + (uint64_t)(r - 1) * n + (o - path0) % n;
        }
        *(uint32_t *)(s + o) = *(const uint32_t *)src;
    }
}

} // namespace hbs_gpu

#endif
