/* Kernels of batch verification of the stateful schemes: one thread per XMSS / XMSS^MT
 * signature (all its layers), one thread per LMS signature (one level of an HSS signature;
 * the host ANDs the levels). The host has parsed and length-checked everything, so a thread
 * reads only inside its item. Items live in one byte arena; what locates them is kept as
 * structure of arrays (one array per field), so the loads of a warp coalesce. */
#ifndef HBS_GPU_STATEFUL_VERIFY_KERNELS_CUH
#define HBS_GPU_STATEFUL_VERIFY_KERNELS_CUH

#include <stdint.h>

#include "gpu/stateful_device.cuh"
#include "gpu/stateful_hash.cuh"

namespace hbs_gpu {

#define XMSS_GPU_MAX_LEN 131     /* WOTS+ chains of an n = 64 set */
#define HBS_GPU_LMOTS_MAX_P 265  /* LM-OTS chains of W1 with n = 32 */

/* Where job t's bytes are in the arena, and its verdict (1 valid, 0 not). For LMS, pk is
 * the bare LMS public key and sig the bare LMS signature of one level. */
struct sfv_jobs {
    const uint64_t *pk_off, *sig_off, *msg_off;
    const uint32_t *msg_len;
    uint8_t *ok;
};

/* One XMSS parameter set (every job of a launch uses it). */
struct xv_set {
    uint32_t n, padlen, len, len1, d, tree_h, idx_bytes;
};

/* One LMS level type pair (m == n within a level). */
struct lv_set {
    uint32_t n, p, w, ls, h;
};

__device__ __forceinline__ uint64_t sfv_index(const uint8_t *sig, unsigned bytes)
{
    uint64_t idx = 0;
    for (unsigned b = 0; b < bytes; b++)
        idx = idx << 8 | sig[b];
    return idx;
}

/* H_msg(r || root || toByte(idx, n), M) = Hash(toByte(2, padlen) || r || root ||
 * toByte(idx, n) || M), n bytes. */
template <int F>
__device__ void xv_hash_msg(uint8_t *out, const xv_set &s, const uint8_t *r, const uint8_t *root,
                            uint64_t idx, const uint8_t *msg, uint32_t mlen)
{
    typename stream_of<F>::type h;
    uint8_t b[64];
    h.init();
    for (unsigned k = 0; k < s.padlen; k++)
        b[k] = 0;
    b[s.padlen - 1] = 2;
    h.absorb(b, s.padlen);
    h.absorb(r, s.n);
    h.absorb(root, s.n);
    for (unsigned k = 0; k < s.n; k++)
        b[k] = 0;
    for (unsigned k = 0; k < 8; k++)
        b[s.n - 1 - k] = (uint8_t)(idx >> (8 * k));
    h.absorb(b, s.n);
    h.absorb(msg, mlen);
    h.finish(out, s.n);
}

/* The len base-16 digits of an n-byte value: 2n message digits, then the 3 checksum
 * digits (as hbs_xmss_wots_digits). */
__device__ __forceinline__ void xv_digits(uint8_t *dg, const uint8_t *v, unsigned len1)
{
    unsigned csum = 0;
    for (unsigned i = 0; i < len1; i++) {
        dg[i] = (uint8_t)((v[i / 2] >> (i % 2 ? 0 : 4)) & 15);
        csum += 15u - dg[i];
    }
    dg[len1] = (uint8_t)((csum >> 8) & 15);
    dg[len1 + 1] = (uint8_t)((csum >> 4) & 15);
    dg[len1 + 2] = (uint8_t)(csum & 15);
}

/* Any hash, any n: byte addresses and the byte-stream PRF / F / H of stateful_device.cuh.
 * MAXB is the largest len * n of the hash's sets (the L-tree works in local memory). */
template <int F, int MAXB>
__global__ void xmss_verify_generic(xv_set s, sfv_jobs j, const uint8_t *arena, uint32_t count)
{
    const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= count)
        return;
    const uint8_t *pk = arena + j.pk_off[t], *sig = arena + j.sig_off[t];
    const uint32_t n = s.n, H = s.tree_h;
    xmss_args x;
    uint8_t node[64], dg[XMSS_GPU_MAX_LEN], adrs[32], ends[MAXB];
    for (unsigned k = 0; k < n; k++)
        x.pub_seed[k] = pk[4 + n + k];
    x.n = n;
    x.padlen = s.padlen;
    x.len = s.len;
    uint64_t idx = sfv_index(sig, s.idx_bytes);
    const uint8_t *p = sig + s.idx_bytes;
    xv_hash_msg<F>(node, s, p, pk + 4, idx, arena + j.msg_off[t], j.msg_len[t]);
    p += n;
    for (uint32_t layer = 0; layer < s.d; layer++) {
        const uint32_t leaf = (uint32_t)(idx & ((1u << H) - 1));
        const uint64_t tree = idx >> H;
        xv_digits(dg, node, s.len1);
        for (uint32_t i = 0; i < s.len; i++) {
            uint8_t *v = ends + i * n;
            for (unsigned k = 0; k < n; k++)
                v[k] = p[i * n + k];
            for (int b = 0; b < 32; b++)
                adrs[b] = 0;
            adrs_set(adrs, 0, layer);
            adrs_set(adrs, 1, (uint32_t)(tree >> 32));
            adrs_set(adrs, 2, (uint32_t)tree);
            adrs_set(adrs, 4, leaf);
            adrs_set(adrs, 5, i);
            for (uint32_t st = dg[i]; st < 15; st++) {
                adrs_set(adrs, 6, st);
                x_thash<F>(v, x, adrs, v, 1);
            }
        }
        /* the L-tree, in place */
        for (int b = 0; b < 32; b++)
            adrs[b] = 0;
        adrs_set(adrs, 0, layer);
        adrs_set(adrs, 1, (uint32_t)(tree >> 32));
        adrs_set(adrs, 2, (uint32_t)tree);
        adrs_set(adrs, 3, 1);
        adrs_set(adrs, 4, leaf);
        uint32_t l = s.len;
        for (uint32_t height = 0; l > 1; height++) {
            const uint32_t parents = l / 2;
            adrs_set(adrs, 5, height);
            for (uint32_t i = 0; i < parents; i++) {
                adrs_set(adrs, 6, i);
                x_thash<F>(ends + i * n, x, adrs, ends + 2 * i * n, 2);
            }
            if (l & 1)
                for (unsigned k = 0; k < n; k++)
                    ends[parents * n + k] = ends[(l - 1) * n + k];
            l -= parents;
        }
        /* up the tree along the authentication path */
        const uint8_t *auth = p + (size_t)s.len * n;
        uint8_t pair[128];
        for (unsigned k = 0; k < n; k++)
            node[k] = ends[k];
        adrs_set(adrs, 3, 2);
        adrs_set(adrs, 4, 0);
        for (uint32_t k = 0; k < H; k++) {
            adrs_set(adrs, 5, k);
            adrs_set(adrs, 6, leaf >> (k + 1));
            const int right = (leaf >> k) & 1;
            for (unsigned b = 0; b < n; b++) {
                pair[(right ? n : 0) + b] = node[b];
                pair[(right ? 0 : n) + b] = auth[k * n + b];
            }
            x_thash<F>(node, x, adrs, pair, 2);
        }
        p += (size_t)(s.len + H) * n;
        idx >>= H;
    }
    uint8_t diff = 0;
    for (unsigned k = 0; k < n; k++)
        diff |= node[k] ^ pk[4 + k];
    j.ok[t] = diff == 0;
}

__device__ __forceinline__ void words_be(uint32_t *w, const uint8_t *b, unsigned nw)
{
    for (unsigned k = 0; k < nw; k++)
        w[k] = be32(b + 4 * k);
}

/* SHA-256 with n = 32 (padlen 32, len 67): the register-only F and H of stateful_device.cuh
 * from the PRF midstate of PUB_SEED. */
__global__ void xmss_verify_sha256(xv_set s, sfv_jobs j, const uint8_t *arena, uint32_t count)
{
    const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= count)
        return;
    const uint8_t *pk = arena + j.pk_off[t], *sig = arena + j.sig_off[t];
    const uint32_t H = s.tree_h;
    uint32_t mid[8], w[16], node[8], a[8], ends[67 * 8];
    uint8_t nb[32], dg[67];
    /* PRF midstate: toByte(3, 32) || PUB_SEED */
    for (int k = 0; k < 7; k++)
        w[k] = 0;
    w[7] = 3;
    words_be(w + 8, pk + 36, 8);
    sha256_iv(mid);
    sf_compress256(mid, w);
    uint64_t idx = sfv_index(sig, s.idx_bytes);
    const uint8_t *p = sig + s.idx_bytes;
    xv_hash_msg<SF_SHA256>(nb, s, p, pk + 4, idx, arena + j.msg_off[t], j.msg_len[t]);
    p += 32;
    for (uint32_t layer = 0; layer < s.d; layer++) {
        const uint32_t leaf = (uint32_t)(idx & ((1u << H) - 1));
        const uint64_t tree = idx >> H;
        xv_digits(dg, nb, 64);
        a[0] = layer;
        a[1] = (uint32_t)(tree >> 32);
        a[2] = (uint32_t)tree;
        a[3] = 0;
        a[4] = leaf;
        for (uint32_t i = 0; i < 67; i++) {
            uint32_t *v = ends + i * 8;
            words_be(v, p + i * 32, 8);
            a[5] = i;
#pragma unroll 1
            for (uint32_t st = dg[i]; st < 15; st++) {
                a[6] = st;
                x256_f(v, mid, a);
            }
        }
        a[3] = 1;
        uint32_t l = 67;
        for (uint32_t height = 0; l > 1; height++) {
            const uint32_t parents = l / 2;
            a[5] = height;
            for (uint32_t i = 0; i < parents; i++) {
                uint32_t lv[8], rv[8];
                for (int k = 0; k < 8; k++) {
                    lv[k] = ends[2 * i * 8 + k];
                    rv[k] = ends[(2 * i + 1) * 8 + k];
                }
                a[6] = i;
                x256_h(ends + i * 8, mid, a, lv, rv);
            }
            if (l & 1)
                for (int k = 0; k < 8; k++)
                    ends[parents * 8 + k] = ends[(l - 1) * 8 + k];
            l -= parents;
        }
        for (int k = 0; k < 8; k++)
            node[k] = ends[k];
        const uint8_t *auth = p + 67 * 32;
        a[3] = 2;
        a[4] = 0;
        for (uint32_t k = 0; k < H; k++) {
            uint32_t sib[8], res[8];
            words_be(sib, auth + k * 32, 8);
            a[5] = k;
            a[6] = leaf >> (k + 1);
            if ((leaf >> k) & 1)
                x256_h(res, mid, a, sib, node);
            else
                x256_h(res, mid, a, node, sib);
            for (int b = 0; b < 8; b++)
                node[b] = res[b];
        }
        for (int k = 0; k < 8; k++)
            put_be32(nb + 4 * k, node[k]);
        p += (67 + H) * 32;
        idx >>= H;
    }
    uint8_t diff = 0;
    for (unsigned k = 0; k < 32; k++)
        diff |= nb[k] ^ pk[4 + k];
    j.ok[t] = diff == 0;
}

/* a[i] = coef(Q || Cksm(Q), i, w) for i < p (RFC 8554 section 4.4). */
__device__ __forceinline__ void lv_coefs(uint8_t *a, const uint8_t *Q, const lv_set &s)
{
    const unsigned w = s.w, per_byte = 8 / w, mask = (1u << w) - 1, u = s.n * per_byte;
    uint8_t qs[34];
    uint32_t sum = 0;
    for (unsigned k = 0; k < s.n; k++)
        qs[k] = Q[k];
    for (unsigned i = 0; i < u; i++) {
        a[i] = (uint8_t)((qs[i / per_byte] >> (8 - w * (i % per_byte + 1))) & mask);
        sum += mask - a[i];
    }
    sum <<= s.ls;
    qs[s.n] = (uint8_t)(sum >> 8);
    qs[s.n + 1] = (uint8_t)sum;
    for (unsigned i = u; i < s.p; i++)
        a[i] = (uint8_t)((qs[i * w / 8] >> (8 - w * (i % per_byte + 1))) & mask);
}

/* One LMS signature (RFC 8554 Algorithms 4b and 6a): candidate public key from the LM-OTS
 * signature, leaf, root along the path, compared with the key's T[1]. NW > 0: SHA-256 chain
 * steps in registers (n = 4 * NW); NW = 0: byte streams of hash F. */
template <int F, int NW>
__global__ void lms_verify_kernel(lv_set s, sfv_jobs j, const uint8_t *arena, uint32_t count)
{
    const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= count)
        return;
    const uint8_t *pk = arena + j.pk_off[t], *sig = arena + j.sig_off[t];
    const uint8_t *I = pk + 8, *C = sig + 8, *y = sig + 8 + s.n;
    const uint32_t n = s.n, q = be32(sig), top = (1u << s.w) - 1;
    uint8_t head[23 + 64], Q[32], a[HBS_GPU_LMOTS_MAX_P];
    typename stream_of<F>::type h;
    for (int k = 0; k < 16; k++)
        head[k] = I[k];
    put_be32(head + 16, q);
    head[20] = 0x81;
    head[21] = 0x81;
    h.init();
    h.absorb(head, 22);
    h.absorb(C, n);
    h.absorb(arena + j.msg_off[t], j.msg_len[t]);
    h.finish(Q, n);
    lv_coefs(a, Q, s);
    /* the chain ends z[0..p-1] are kept, and K = H(I || q || D_PBLC || z[0] || ... ||
     * z[p-1]) hashed after the chains: one hash stream is live at a time (with the
     * running K stream live across the chains' own hashes the kernel gave wrong results
     * on sm_90) */
    uint8_t zs[HBS_GPU_LMOTS_MAX_P * 32];
    uint32_t Iw[4], pre[8];
    if constexpr (NW > 0) {
        for (int k = 0; k < 4; k++)
            Iw[k] = be32(I + 4 * k);
        lms_prefix_rounds(pre, Iw, q);
    }
    for (uint32_t i = 0; i < s.p; i++) {
        uint8_t *z = zs + i * n;
        if constexpr (NW > 0) {
            uint32_t v[NW];
            for (int k = 0; k < NW; k++)
                v[k] = be32(y + i * n + 4 * k);
#pragma unroll 1
            for (uint32_t st = a[i]; st < top; st++)
                lms_step_sha256<NW>(pre, Iw, q, i, st, v);
            for (int k = 0; k < NW; k++)
                put_be32(z + 4 * k, v[k]);
        } else {
            uint8_t m[23 + 32];
            for (int k = 0; k < 20; k++)
                m[k] = head[k];
            m[20] = (uint8_t)(i >> 8);
            m[21] = (uint8_t)i;
            for (uint32_t k = 0; k < n; k++)
                m[23 + k] = y[i * n + k];
            for (uint32_t st = a[i]; st < top; st++) {
                m[22] = (uint8_t)st;
                sf_hash<F>(m + 23, n, m, 23 + n);
            }
            for (uint32_t k = 0; k < n; k++)
                z[k] = m[23 + k];
        }
    }
    typename stream_of<F>::type kh;
    head[20] = 0x80;
    head[21] = 0x80;
    kh.init();
    kh.absorb(head, 22);
    kh.absorb(zs, s.p * n);
    uint8_t node[22 + 64];
    for (int k = 0; k < 16; k++)
        node[k] = I[k];
    uint32_t r = (1u << s.h) + q;
    put_be32(node + 16, r);
    node[20] = 0x82;
    node[21] = 0x82;
    kh.finish(node + 22, n);
    uint8_t cur[32];
    sf_hash<F>(cur, n, node, 22 + n);
    const uint8_t *path = sig + 12 + n + s.p * n;
    for (uint32_t z = 0; z < s.h; z++, r >>= 1) {
        put_be32(node + 16, r >> 1);
        node[20] = 0x83;
        node[21] = 0x83;
        for (uint32_t k = 0; k < n; k++) {
            node[22 + ((r & 1) ? n : 0) + k] = cur[k];
            node[22 + ((r & 1) ? 0 : n) + k] = path[z * n + k];
        }
        sf_hash<F>(cur, n, node, 22 + 2 * n);
    }
    uint8_t diff = 0;
    for (uint32_t k = 0; k < n; k++)
        diff |= cur[k] ^ pk[24 + k];
    j.ok[t] = diff == 0;
}

} // namespace hbs_gpu

#endif
