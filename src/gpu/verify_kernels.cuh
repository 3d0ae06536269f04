/* Batch verification: a warp verifies G signatures (G a power of two up to 32) and its
 * lanes share all of their work.
 *
 * Lane g < G owns signature g of the warp: it does that signature's serial hashes (T_k,
 * each layer's T_len and authentication path) and holds its WOTS+ message. Everything
 * else is pooled over the whole warp: the G * k FORS trees (all the same length), and in
 * each layer the G * len chains. Chains differ in length (0 to 15 steps), so a lane that
 * finishes one takes the next from a shared list sorted longest first; the warp then runs
 * about (sum of steps) / 32 iterations instead of the longest lane's share. A large G
 * leaves fewer lanes idle during the serial hashes; a small G gives more threads for a
 * small batch (the host picks G). A warp's lanes sit at different hash call sites at once,
 * so the SHA-256 compressions are the compact ones (hash.cuh): the full unroll of every
 * site overflows the instruction cache. */
#ifndef HBS_GPU_VERIFY_KERNELS_CUH
#define HBS_GPU_VERIFY_KERNELS_CUH

#include "gpu/slhdsa_kernels.cuh"

namespace hbs_gpu {

/* The verifier's SHA-256 form: compact (above), with its additions as IMAD (hash.cuh). */
enum { VERIFY_SHA = SHA_COMPACT | SHA_IMAD };

/* Family words from memory: word loads when aligned (the usual case), bytes otherwise. */
template <int FAM, int N>
__device__ __forceinline__ void load_val_any(uint32_t v[N / 4], const uint8_t *p)
{
    if (((uintptr_t)p & 3) == 0)
        load_val<FAM, N>(v, p);
    else
        load_val_bytes<FAM, N>(v, p);
}

/* Byte j of a value held as family words (j a constant once unrolled). */
template <int FAM, int N>
__device__ __forceinline__ uint32_t val_byte(const uint32_t v[N / 4], int j)
{
    return FAM == FAM_SHA2 ? (v[j >> 2] >> (24 - 8 * (j & 3))) & 0xff
                           : (v[j >> 2] >> (8 * (j & 3))) & 0xff;
}

/* WOTS+ digit c of msg: base-16 digits of the message, then of the checksum (csum). */
template <int FAM, int N>
__device__ __forceinline__ uint32_t msg_digit(const uint32_t msg[N / 4], uint32_t csum, int c)
{
    if (c < 2 * N)
        return (val_byte<FAM, N>(msg, c >> 1) >> (4 * (1 - (c & 1)))) & 15;
    return (csum >> (4 * (2 - (c - 2 * N)))) & 15;
}

template <int FAM, int N>
__device__ __forceinline__ uint32_t msg_checksum(const uint32_t msg[N / 4])
{
    uint32_t csum = 0;
#pragma unroll
    for (int c = 0; c < 2 * N; c++)
        csum += 15 - msg_digit<FAM, N>(msg, 0, c);
    return csum;
}

/* The root of FORS tree gi (global leaf index) from its part e of the signature. */
template <int FAM, int N>
__device__ void fors_root_any(uint32_t node[N / 4], const sp &P, const kregs<FAM, N> &k,
                              const sig_meta &m, const uint8_t *e, uint32_t gi)
{
    uint32_t in[N / 2];
    adrs ad = {0, m.tree, A_FORS_TREE, m.leaf, 0, gi};
    load_val_any<FAM, N>(in, e);
    thash<FAM, N, 1, VERIFY_SHA>(node, k, ad, in);
    for (int z = 0; z < P.a; z++) {
        uint32_t sib[N / 4];
        load_val_any<FAM, N>(sib, e + (size_t)(z + 1) * N);
        const bool right = (gi >> z) & 1;
#pragma unroll
        for (int w = 0; w < N / 4; w++) {
            in[w] = right ? sib[w] : node[w];
            in[N / 4 + w] = right ? node[w] : sib[w];
        }
        ad.c = (uint32_t)z + 1;
        ad.h = gi >> (z + 1);
        thash<FAM, N, 2, VERIFY_SHA>(node, k, ad, in);
    }
}

/* Pool entries: signature slot (5 bits), chain (7 bits), first step (4 bits). */
__device__ __forceinline__ uint16_t pool_entry(int g, int c, uint32_t digit)
{
    return (uint16_t)(g << 11 | c << 4 | digit);
}

/* Dynamic shared memory: (blockDim.x / 32) * G * len entries of 16 bits. scratch: per
 * signature max(k, len) values (FORS roots, then chain ends). */
template <int FAM, int N>
__global__ void __launch_bounds__(128) k_verify_pool(sp P, const sig_meta *meta,
                                                     const uint8_t *digests, int count,
                                                     const dkey *keys, const uint8_t *sigs,
                                                     uint8_t *scratch, int *results, int G)
{
    constexpr int LEN = 2 * N + 3;
    constexpr unsigned FULL = 0xffffffffu;
    extern __shared__ uint16_t vpool[];
    const int lane = threadIdx.x & 31;
    const int first = (int)((blockIdx.x * blockDim.x + threadIdx.x) >> 5) * G;
    if (first >= count)
        return; /* the whole warp */
    uint16_t *pool = vpool + (threadIdx.x >> 5) * G * LEN;
    const int nsig = min(G, count - first);
    const bool owner = lane < nsig;
    const int mine = first + (owner ? lane : 0);
    const size_t slots = (size_t)max(P.k, LEN);
    const unsigned lower = (1u << lane) - 1; /* lanes below this one */

    /* FORS: every tree of the warp's signatures, pooled */
    for (int q = lane; q < nsig * P.k; q += 32) {
        const int g = q / P.k, f = q - g * P.k;
        const int s = first + g;
        const sig_meta m = meta[s];
        kregs<FAM, N> k;
        k.load(&keys[m.key]);
        const uint32_t gi = ((uint32_t)f << P.a) + fors_index(P, digests + (size_t)s * 64, f);
        uint32_t node[N / 4];
        fors_root_any<FAM, N>(node, P, k, m,
                              sigs + (size_t)s * P.sig_bytes + N + (size_t)f * (P.a + 1) * N, gi);
        store_val<FAM, N>(scratch + ((size_t)s * slots + f) * N, node);
    }
    __syncwarp();
    uint8_t *scr = scratch + (size_t)mine * slots * N;
    const uint8_t *ht = sigs + (size_t)mine * P.sig_bytes + N + P.fors_bytes;
    uint32_t msg[N / 4];
    if (owner) {
        const sig_meta m = meta[mine];
        kregs<FAM, N> k;
        k.load(&keys[m.key]);
        adrs ad = {0, m.tree, A_FORS_ROOTS, m.leaf, 0, 0};
        thash_mem<FAM, N, VERIFY_SHA>(msg, k, ad, scr, P.k);
    }
    for (int layer = 0; layer < P.d; layer++) {
        /* the chains of every signature into the pool, longest first (four buckets) */
        const uint32_t csum = owner ? msg_checksum<FAM, N>(msg) : 0;
        int total = 0;
#pragma unroll 1
        for (int b = 0; b < 4; b++) {
            int cnt = 0;
            if (owner) {
#pragma unroll
                for (int c = 0; c < LEN; c++)
                    cnt += (msg_digit<FAM, N>(msg, csum, c) >> 2) == (uint32_t)b;
            }
            int incl = cnt;
#pragma unroll
            for (int off = 1; off < 32; off <<= 1) {
                const int t = __shfl_up_sync(FULL, incl, off);
                if (lane >= off)
                    incl += t;
            }
            int pos = total + incl - cnt;
            total += __shfl_sync(FULL, incl, 31);
            if (owner) {
#pragma unroll
                for (int c = 0; c < LEN; c++) {
                    const uint32_t dg = msg_digit<FAM, N>(msg, csum, c);
                    if ((dg >> 2) == (uint32_t)b)
                        pool[pos++] = pool_entry(lane, c, dg);
                }
            }
        }
        __syncwarp();
        /* every lane: take a chain, step it, store its end, take the next */
        int cur = -1, step = 0;
        size_t out = 0;
        uint32_t v[N / 4];
        kregs<FAM, N> kc;
        adrs ac = {};
        int head = 0;
#pragma unroll 1
        while (true) {
            const unsigned idle = __ballot_sync(FULL, cur < 0);
            if (idle == FULL && head >= total)
                break;
            if (cur < 0) {
                const int idx = head + __popc(idle & lower);
                if (idx < total) {
                    const uint32_t e = pool[idx];
                    const int g = (int)(e >> 11), c = (int)(e >> 4) & 127;
                    const int s = first + g;
                    const sig_meta m = meta[s];
                    kc.load(&keys[m.key]);
                    ac = adrs{(uint32_t)layer, shr64(m.tree, layer * P.hp), A_WOTS_HASH,
                              layer_leaf(P, m, layer), (uint32_t)c, 0};
                    const size_t at = (size_t)s * P.sig_bytes + N + P.fors_bytes +
                                      (size_t)layer * (LEN + P.hp) * N + (size_t)c * N;
                    load_val_any<FAM, N>(v, sigs + at);
                    out = ((size_t)s * slots + c) * N;
                    step = (int)(e & 15);
                    cur = idx;
                }
            }
            head += __popc(idle);
            if (cur >= 0 && step < 15) {
                ac.h = (uint32_t)step;
                thash<FAM, N, 1, VERIFY_SHA>(v, kc, ac, v);
                step++;
            }
            if (cur >= 0 && step == 15) {
                store_val<FAM, N>(scratch + out, v);
                cur = -1;
            }
        }
        __syncwarp();
        if (owner) {
            const sig_meta m = meta[mine];
            kregs<FAM, N> k;
            k.load(&keys[m.key]);
            const uint64_t tree = shr64(m.tree, layer * P.hp);
            const uint32_t leaf = layer_leaf(P, m, layer);
            const uint8_t *ws = ht + (size_t)layer * (LEN + P.hp) * N;
            adrs ad = {(uint32_t)layer, tree, A_WOTS_PK, leaf, 0, 0};
            thash_mem<FAM, N, VERIFY_SHA>(msg, k, ad, scr, LEN);
            ad.type = A_TREE;
            ad.kp = 0;
            const uint8_t *auth = ws + (size_t)LEN * N;
            for (int z = 0; z < P.hp; z++) {
                uint32_t sib[N / 4], in[N / 2];
                load_val_any<FAM, N>(sib, auth + (size_t)z * N);
                const bool right = (leaf >> z) & 1;
#pragma unroll
                for (int w = 0; w < N / 4; w++) {
                    in[w] = right ? sib[w] : msg[w];
                    in[N / 4 + w] = right ? msg[w] : sib[w];
                }
                ad.c = (uint32_t)z + 1;
                ad.h = leaf >> (z + 1);
                thash<FAM, N, 2, VERIFY_SHA>(msg, k, ad, in);
            }
        }
        __syncwarp(); /* the pool and scratch are rewritten by the next layer */
    }
    if (owner) {
        uint32_t root[N / 4], diff = 0;
        load_val_bytes<FAM, N>(root, keys[meta[mine].key].sk + 3 * N);
#pragma unroll
        for (int w = 0; w < N / 4; w++)
            diff |= root[w] ^ msg[w];
        results[mine] = diff ? HBS_ERR_VERIFY_FAILED : 0;
    }
}

} // namespace hbs_gpu

#endif
