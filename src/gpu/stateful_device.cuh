/* Device hashing of the stateful schemes shared by key generation (stateful.cu), batch
 * verification (stateful_verify.cu) and batch signing (xmss_sign.cu, lms_sign.cu): the LMS
 * chain step in registers, the XMSS addresses, PRF, F and H for every hash (byte streams),
 * and the register-only SHA-256 versions for n = 32. Each .cu file compiles its own copy. */
#ifndef HBS_GPU_STATEFUL_DEVICE_CUH
#define HBS_GPU_STATEFUL_DEVICE_CUH

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/hash.cuh"
#include "gpu/stateful_hash.cuh"

namespace hbs_gpu {


/* SHA-256 round i on the working variables s (a..h). */
__device__ __forceinline__ void sha256_round(uint32_t s[8], int i, uint32_t wi)
{
    uint32_t t1 = s[7] + (rotr32(s[4], 6) ^ rotr32(s[4], 11) ^ rotr32(s[4], 25)) +
                  ((s[4] & s[5]) ^ (~s[4] & s[6])) + K256[i] + wi;
    uint32_t t2 = (rotr32(s[0], 2) ^ rotr32(s[0], 13) ^ rotr32(s[0], 22)) +
                  ((s[0] & s[1]) ^ (s[0] & s[2]) ^ (s[1] & s[2]));
    s[7] = s[6];
    s[6] = s[5];
    s[5] = s[4];
    s[4] = s[3] + t1;
    s[3] = s[2];
    s[2] = s[1];
    s[1] = s[0];
    s[0] = t1 + t2;
}

/* Every message of one LMS chain starts with I || q (words 0..4), so rounds 0..4 of its
 * one-block compression are the same for the whole chain: done once, here. */
__device__ __forceinline__ void lms_prefix_rounds(uint32_t s[8], const uint32_t I[4], uint32_t q)
{
    sha256_iv(s);
    sha256_round(s, 0, I[0]);
    sha256_round(s, 1, I[1]);
    sha256_round(s, 2, I[2]);
    sha256_round(s, 3, I[3]);
    sha256_round(s, 4, q);
}

/* One SHA-256 hash of an LMS chain message I || q || i || j || v (23 + 4NW bytes: one
 * block), v in big-endian words, replaced by the first NW words of the digest. pre holds
 * the working variables after rounds 0..4 (lms_prefix_rounds). */
template <int NW>
__device__ __forceinline__ void lms_step_sha256(const uint32_t pre[8], const uint32_t I[4],
                                                uint32_t q, uint32_t i, uint32_t j,
                                                uint32_t v[NW])
{
    uint32_t w[16], s[8];
    w[0] = I[0];
    w[1] = I[1];
    w[2] = I[2];
    w[3] = I[3];
    w[4] = q;
    w[5] = i << 16 | j << 8 | v[0] >> 24;
#pragma unroll
    for (int k = 0; k + 1 < NW; k++)
        w[6 + k] = v[k] << 8 | v[k + 1] >> 24;
    w[5 + NW] = v[NW - 1] << 8 | 0x80;
#pragma unroll
    for (int k = 6 + NW; k < 15; k++)
        w[k] = 0;
    w[15] = (23 + 4 * NW) * 8;
#pragma unroll
    for (int k = 0; k < 8; k++)
        s[k] = pre[k];
#pragma unroll
    for (int r = 5; r < 64; r++) {
        if (r >= 16) {
            uint32_t w15 = w[(r + 1) & 15], w2 = w[(r + 14) & 15];
            w[r & 15] += (rotr32(w15, 7) ^ rotr32(w15, 18) ^ (w15 >> 3)) +
                         (rotr32(w2, 17) ^ rotr32(w2, 19) ^ (w2 >> 10)) + w[(r + 9) & 15];
        }
        sha256_round(s, r, w[r & 15]);
    }
    /* the digest is the IV plus the working variables */
    v[0] = s[0] + 0x6a09e667;
    v[1] = s[1] + 0xbb67ae85;
    v[2] = s[2] + 0x3c6ef372;
    v[3] = s[3] + 0xa54ff53a;
    v[4] = s[4] + 0x510e527f;
    v[5] = s[5] + 0x9b05688c;
    if (NW > 6) {
        v[NW > 6 ? 6 : 0] = s[6] + 0x1f83d9ab;
        v[NW > 7 ? 7 : 0] = s[7] + 0x5be0cd19;
    }
}

/* SHA-256 of an LMS message I || u32 || u16 || Y, Y being nyw big-endian words at y (in
 * device memory, 4-byte aligned): the leaf's public key hash K (Y = the chain ends) and an
 * inner node (Y = both children). Word-wise rather than through a byte stream: the 22-byte
 * header puts every Y word across two message words, which two shifts rebuild; the first
 * NW words of the digest go to out. */
template <int NW>
__device__ __forceinline__ void lms_hash_words(uint32_t out[NW], const uint32_t I[4],
                                               uint32_t u, uint32_t d, const uint8_t *y,
                                               uint32_t nyw)
{
    const uint32_t *yw = reinterpret_cast<const uint32_t *>(y);
    const uint32_t len = 22 + 4 * nyw, nblocks = (len + 9 + 63) / 64;
    uint32_t st[8], w[16], prev = 0;
    sha256_iv(st);
#pragma unroll 1
    for (uint32_t b = 0; b < nblocks; b++) {
#pragma unroll
        for (int j = 0; j < 16; j++) {
            const uint32_t g = 16 * b + j; /* message word g: bytes 4g .. 4g + 3 */
            uint32_t v = 0;
            if (g < 4)
                v = I[j & 3];
            else if (g == 4)
                v = u;
            else if (g <= 5 + nyw) {
                /* Y word g - 5's low half after the header's or Y word g - 6's */
                const uint32_t cur = g - 5 < nyw ? bswap32(yw[g - 5]) : 0;
                v = (g == 5 ? d << 16 : prev << 16) | (g - 5 < nyw ? cur >> 16 : 0x8000u);
                prev = cur;
            }
            if (b + 1 == nblocks && j == 15)
                v = 8 * len;
            w[j] = v;
        }
        sha256_compress(st, w);
    }
#pragma unroll
    for (int k = 0; k < NW; k++)
        out[k] = st[k];
}

/* The same for a Y of NW words in registers (one block: 22 + 4 NW < 56 bytes). */
template <int NW>
__device__ __forceinline__ void lms_hash_regs(uint32_t out[NW], const uint32_t I[4],
                                              uint32_t u, uint32_t d, const uint32_t y[NW])
{
    uint32_t st[8], w[16];
#pragma unroll
    for (int k = 0; k < 4; k++)
        w[k] = I[k];
    w[4] = u;
    w[5] = d << 16 | y[0] >> 16;
#pragma unroll
    for (int k = 1; k < NW; k++)
        w[5 + k] = y[k - 1] << 16 | y[k] >> 16;
    w[5 + NW] = y[NW - 1] << 16 | 0x8000u;
#pragma unroll
    for (int k = 6 + NW; k < 15; k++)
        w[k] = 0;
    w[15] = 8 * (22 + 4 * NW);
    sha256_iv(st);
    sha256_compress(st, w);
#pragma unroll
    for (int k = 0; k < NW; k++)
        out[k] = st[k];
}

__device__ __forceinline__ uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

__device__ __forceinline__ void put_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

/* LMS leaf q of a tree of height h (key generation and batch signing): K = H(I || q ||
 * D_PBLC || y[0 .. p-1]) over its p chain ends at y, then T[2^h + q] = H(I || r || D_LEAF
 * || K) to out (NW words, big-endian). */
template <int NW>
__device__ __forceinline__ void lms_leaf_words(const uint8_t *Ib, uint32_t q, uint32_t h,
                                               uint32_t p, const uint8_t *y, uint8_t *out)
{
    uint32_t I[4], K[NW], leaf[NW];
#pragma unroll
    for (int k = 0; k < 4; k++)
        I[k] = be32(Ib + 4 * k);
    lms_hash_words<NW>(K, I, q, 0x8080, y, p * NW);
    lms_hash_regs<NW>(leaf, I, (1u << h) + q, 0x8282, K);
#pragma unroll
    for (int k = 0; k < NW; k++)
        put_be32(out + 4 * k, leaf[k]);
}



/* Leaves first .. first + count - 1 of each of ntrees trees of one key (the layers of an
 * XMSS^MT key are built in one launch): global leaf g is leaf first + g % count of tree
 * g / count. */
#define SF_MAX_TREES 12
struct xmss_args {
    uint8_t pub_seed[64], sk_seed[64];
    uint64_t tree[SF_MAX_TREES];
    uint32_t layer[SF_MAX_TREES];
    uint32_t ntrees, first, count;
    uint32_t n, padlen, len;
};

/* ADRS word k (big-endian) in a 32-byte address. */
__device__ __forceinline__ void adrs_set(uint8_t a[32], int k, uint32_t v) { put_be32(a + 4 * k, v); }

/* The address of global leaf g's tree (type set, all else zero) and its leaf index. */
__device__ __forceinline__ uint32_t adrs_base(uint8_t a[32], const xmss_args &x, uint32_t g,
                                              uint32_t type)
{
    const uint32_t k = g / x.count;
    for (int b = 0; b < 32; b++)
        a[b] = 0;
    adrs_set(a, 0, x.layer[k]);
    adrs_set(a, 1, (uint32_t)(x.tree[k] >> 32));
    adrs_set(a, 2, (uint32_t)x.tree[k]);
    adrs_set(a, 3, type);
    return x.first + g % x.count;
}

/* toByte(v, padlen) || key (n bytes) at m; returns the length written. */
__device__ __forceinline__ unsigned put_prefix(uint8_t *m, const xmss_args &x, unsigned v,
                                               const uint8_t *key)
{
    for (unsigned k = 0; k + 1 < x.padlen; k++)
        m[k] = 0;
    m[x.padlen - 1] = (uint8_t)v;
    for (unsigned k = 0; k < x.n; k++)
        m[x.padlen + k] = key[k];
    return x.padlen + x.n;
}

/* PRF(PUB_SEED, ADRS) with keyAndMask km. */
template <int F>
__device__ __forceinline__ void x_prf(uint8_t *out, const xmss_args &x, uint8_t adrs[32],
                                      uint32_t km)
{
    uint8_t m[64 + 64 + 32];
    unsigned at = put_prefix(m, x, 3, x.pub_seed);
    adrs_set(adrs, 7, km);
    for (int k = 0; k < 32; k++)
        m[at + k] = adrs[k];
    sf_hash<F>(out, x.n, m, at + 32);
}

/* RAND_HASH over parts (1: F, 2: H) n-byte inputs in `in`, result to out. */
template <int F>
__device__ __forceinline__ void x_thash(uint8_t *out, const xmss_args &x, uint8_t adrs[32],
                                        const uint8_t *in, unsigned parts)
{
    uint8_t key[64], bm[64], m[64 + 64 + 128];
    const unsigned n = x.n;
    x_prf<F>(key, x, adrs, 0);
    unsigned at = put_prefix(m, x, parts == 1 ? 0 : 1, key);
    for (unsigned j = 0; j < parts; j++) {
        x_prf<F>(bm, x, adrs, j + 1);
        for (unsigned k = 0; k < n; k++)
            m[at + k] = in[j * n + k] ^ bm[k];
        at += n;
    }
    sf_hash<F>(out, n, m, at);
}

/* One SHA-256 compression kept out of line: the XMSS kernels call it from many places,
 * and one copy compiles (and caches) far better than a dozen unrolled ones. */
static __device__ __noinline__ void sf_compress256(uint32_t st[8], uint32_t w[16])
{
    sha256_compress(st, w);
}

/* HBS_GPU_CHAIN_REGS=64|80|0: the batch signer's XMSS SHA-256 chain kernel in the instance
 * whose registers are capped so that 4 (64) or 3 (80) blocks of 256 threads fit an SM, or
 * uncapped (0: 127 registers, 2 blocks), to compare. The blocks an SM asked of the compiler
 * (0: uncapped), or dflt when unset. Read once. */
static inline int sf_chain_minb(int dflt)
{
    static const int b = [] {
        const char *v = getenv("HBS_GPU_CHAIN_REGS");
        if (!v || !*v)
            return -1;
        const int r = atoi(v);
        return r == 64 ? 4 : r == 80 ? 3 : 0;
    }();
    return b < 0 ? dflt : b;
}

/* The working variables after rounds 0 .. 7 from the IV of a block whose words 0 .. 6 are
 * zero and word 7 is w7, worked out by the compiler. XMSS's F and H key their hash with a
 * first block toByte(0 or 1, 32) || KEY: a quarter of its rounds need not run. (Its own
 * round and constants: sha256_rounds reads K256 from __constant__ memory, which no
 * constant expression can.) */
__host__ __device__ constexpr sha256_vars sha256_iv_rounds8(uint32_t w7)
{
    constexpr uint32_t k[8] = {0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5,
                               0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5};
    uint32_t s[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                     0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    for (int i = 0; i < 8; i++) {
        const uint32_t a = s[0], e = s[4];
        const uint32_t s1 = (e >> 6 | e << 26) ^ (e >> 11 | e << 21) ^ (e >> 25 | e << 7),
                       s0 = (a >> 2 | a << 30) ^ (a >> 13 | a << 19) ^ (a >> 22 | a << 10);
        const uint32_t t1 = s[7] + s1 + ((e & s[5]) ^ (~e & s[6])) + k[i] + (i == 7 ? w7 : 0),
                       t2 = s0 + ((a & s[1]) ^ (a & s[2]) ^ (s[1] & s[2]));
        for (int j = 7; j > 0; j--)
            s[j] = s[j - 1];
        s[4] += t1;
        s[0] = t1 + t2;
    }
    sha256_vars r = {};
    for (int j = 0; j < 8; j++)
        r.v[j] = s[j];
    return r;
}

/* SHA-256 with n = 32 in registers: every PRF starts from the midstate of
 * toByte(3, 32) || PUB_SEED, every PRF_keygen from that of toByte(4, 32) || SK_SEED (both
 * made by the host, x256_host_midstate, and passed to the kernels). */
struct x256_mid {
    uint32_t prf[8], keygen[8];
};

/* The form of every chain kernel's compressions unless HBS_GPU_CHAIN_FORM picks another. */
#ifndef X256_CHAIN_FORM
#define X256_CHAIN_FORM HBS_GPU_SHA256_FORM
#endif

/* HBS_GPU_CHAIN_FORM=full|compact: the form of the XMSS SHA-256 chain kernels' compressions
 * (key generation's and the batch signer's), to compare: full unroll or compact (hash.cuh;
 * each with SHA_IMAD). The form, or dflt when unset. Read once. (Session 23 also measured
 * the looped form and one out-of-line compression, below; their kernels went, to keep the
 * build short.)
 * Key generation's small launches (up to 2^18 chains) run compact, the signer full (H100,
 * bench/gpu/chain-forms.sh, bench/results/gpu-H100-s23-forms.log, two rounds: the chains of
 * XMSSMT-SHA2_20/2_256's two trees 0.79/0.81 ms full, 0.727/0.730 compact, 0.735/0.731
 * looped, 0.82 call; batches of 16,384 signatures 9.00/9.04 ms full, 9.81/10.06 compact,
 * 9.71/9.32 looped, 10.1/11.0 call). A full chain step is four unrolled compressions, about
 * 100 KB of loop code. */
static inline int sf_chain_form(int dflt)
{
    static const int f = [] {
        const char *v = getenv("HBS_GPU_CHAIN_FORM");
        return !v || !*v                ? -1
               : !strcmp(v, "full")    ? SHA_FULL | SHA_IMAD
               : !strcmp(v, "compact") ? SHA_COMPACT | SHA_IMAD
                                       : -1;
    }();
    return f < 0 ? dflt : f;
}

/* The compression of the register hashes below: out of line (one copy per kernel, which
 * compiles and caches well), or inline with INL (a step's independent PRFs can then
 * interleave: XMSS verification ran 8 % faster so on the H200). */
template <bool INL, int FORM = HBS_GPU_SHA256_FORM>
__device__ __forceinline__ void x256_compress(uint32_t st[8], uint32_t w[16])
{
    if constexpr (INL)
        sha256_compress<FORM>(st, w);
    else
        sf_compress256(st, w);
}

/* PRF: block 2 is ADRS || padding (96 bytes in all). */
template <bool INL = false, int FORM = HBS_GPU_SHA256_FORM>
__device__ __forceinline__ void x256_prf(uint32_t out[8], const uint32_t mid[8],
                                         const uint32_t a[8])
{
    uint32_t w[16];
#pragma unroll
    for (int k = 0; k < 8; k++) {
        w[k] = a[k];
        out[k] = mid[k];
    }
    w[8] = 0x80000000u;
#pragma unroll
    for (int k = 9; k < 15; k++)
        w[k] = 0;
    w[15] = 768;
    x256_compress<INL, FORM>(out, w);
}

/* A chain's secret, PRF_keygen(SK_SEED, PUB_SEED || ADRS) with a's hash address 0: two
 * compressions from kmid, the state after toByte(4, 32) || SK_SEED. */
__device__ __forceinline__ void x256_secret(uint32_t v[8], const uint32_t kmid[8],
                                            const uint8_t *pub_seed, const uint32_t a[8])
{
    uint32_t w[16];
#pragma unroll
    for (int k = 0; k < 8; k++) {
        w[k] = be32(pub_seed + 4 * k);
        w[8 + k] = a[k];
        v[k] = kmid[k];
    }
    x256_compress<true>(v, w);
    w[0] = 0x80000000u;
#pragma unroll
    for (int k = 1; k < 15; k++)
        w[k] = 0;
    w[15] = 1024;
    x256_compress<true>(v, w);
}

/* The address-only part of F at a's step: st1, the state after F's first block
 * (toByte(0, 32) || KEY), and the bitmask bm. Three of F's four compressions; they do not
 * depend on the chain value. */
template <bool INL = false, int FORM = HBS_GPU_SHA256_FORM>
__device__ __forceinline__ void x256_f_prep(uint32_t st1[8], uint32_t bm[8],
                                            const uint32_t mid[8], uint32_t a[8])
{
    uint32_t key[8], w[16];
    a[7] = 0;
    x256_prf<INL, FORM>(key, mid, a);
    a[7] = 1;
    x256_prf<INL, FORM>(bm, mid, a);
#pragma unroll
    for (int k = 0; k < 8; k++) {
        w[k] = 0;
        w[8 + k] = key[k];
    }
    sha256_iv(st1);
    x256_compress<INL, FORM>(st1, w);
}

/* The verifier's F and H (x256_f<true>, x256_h<true>) leave out rounds known ahead
 * (x256_f_prep_folded, x256_h_prep_folded):
 * a step's PRFs at a differ only from ADRS word 7 (keyAndMask) on, so they share rounds
 * 0 .. 6, and the keyed first block toByte(TAG, 32) || KEY starts with eight constant words.
 * The verifier's F calls are many and short (H100: XMSS-SHA2_10_256 batches of 16,384
 * 2.51-2.57 -> 2.72 M/s). The chains of key generation and signing keep x256_f_prep: there
 * the same folding (and a chain's rounds 0 .. 5 done once) tied or lost, twice (dfcb764;
 * session 21, bench/results/gpu-H100-s21-fold.log): those kernels are not bound by their
 * instruction count. */

/* Rounds 0 .. 6 of the PRF block ADRS || padding at a, from mid, into s7; w gets the block
 * (word 7 left to x256_prf_from7). */
__device__ __forceinline__ void x256_prf_rounds7(sha256_vars &s7, uint32_t w[16],
                                                 const uint32_t mid[8], const uint32_t a[8])
{
#pragma unroll
    for (int k = 0; k < 8; k++) {
        w[k] = a[k];
        s7.v[k] = mid[k];
    }
    sha256_rounds<0, 7>(s7, w);
    w[8] = 0x80000000u;
#pragma unroll
    for (int k = 9; k < 15; k++)
        w[k] = 0;
    w[15] = 768;
}

/* The PRF at x256_prf_rounds7's address with keyAndMask km. */
__device__ __forceinline__ void x256_prf_from7(uint32_t out[8], const uint32_t mid[8],
                                               const sha256_vars &s7, const uint32_t w[16],
                                               uint32_t km)
{
    uint32_t wk[16];
#pragma unroll
    for (int k = 0; k < 16; k++)
        wk[k] = w[k];
    wk[7] = km;
#pragma unroll
    for (int k = 0; k < 8; k++)
        out[k] = mid[k];
    sha256_compress_from<7, HBS_GPU_SHA256_FORM>(out, s7, wk);
}

/* st1, the state after the keyed first block toByte(TAG, 32) || key (F: 0, H: 1). */
template <uint32_t TAG>
__device__ __forceinline__ void x256_keyed_block(uint32_t st1[8], const uint32_t key[8])
{
    constexpr sha256_vars pre = sha256_iv_rounds8(TAG);
    uint32_t w[16];
#pragma unroll
    for (int k = 0; k < 8; k++) {
        w[k] = k == 7 ? TAG : 0;
        w[8 + k] = key[k];
    }
    sha256_iv(st1);
    sha256_compress_from<8, HBS_GPU_SHA256_FORM>(st1, pre, w);
}

/* x256_f_prep, inline, without the rounds known ahead (above). */
__device__ __forceinline__ void x256_f_prep_folded(uint32_t st1[8], uint32_t bm[8],
                                                   const uint32_t mid[8], uint32_t a[8])
{
    uint32_t key[8], w[16];
    sha256_vars s7;
    x256_prf_rounds7(s7, w, mid, a);
    x256_prf_from7(key, mid, s7, w, 0);
    x256_prf_from7(bm, mid, s7, w, 1);
    a[7] = 1;
    x256_keyed_block<0>(st1, key);
}

/* F's last block, the one that depends on v: v = compress(st1, (v ^ bm) || padding). */
template <bool INL = false, int FORM = HBS_GPU_SHA256_FORM>
__device__ __forceinline__ void x256_f_data(uint32_t v[8], const uint32_t st1[8],
                                            const uint32_t bm[8])
{
    uint32_t w[16], st[8];
#pragma unroll
    for (int k = 0; k < 8; k++) {
        w[k] = v[k] ^ bm[k];
        st[k] = st1[k];
    }
    w[8] = 0x80000000u;
#pragma unroll
    for (int k = 9; k < 15; k++)
        w[k] = 0;
    w[15] = 768;
    x256_compress<INL, FORM>(st, w);
#pragma unroll
    for (int k = 0; k < 8; k++)
        v[k] = st[k];
}

/* F on v in place: a holds the address (keyAndMask is set here). */
template <bool INL = false>
__device__ __forceinline__ void x256_f(uint32_t v[8], const uint32_t mid[8], uint32_t a[8])
{
    uint32_t st1[8], bm[8];
    if constexpr (INL)
        x256_f_prep_folded(st1, bm, mid, a);
    else
        x256_f_prep<INL>(st1, bm, mid, a);
    x256_f_data<INL>(v, st1, bm);
}

/* Chain steps from .. to - 1 on v (a[6] takes each step): the address-only work of step
 * s + 1 is written beside step s's data block, so a thread always has two independent
 * compressions to interleave (a chain alone is a serial dependency the SM can only hide
 * with other warps). cap(s, v) sees the value before each step, cap(to, v) the end. */
template <int FORM = X256_CHAIN_FORM, typename Cap>
__device__ __forceinline__ void x256_chain(uint32_t v[8], const uint32_t mid[8], uint32_t a[8],
                                           uint32_t from, uint32_t to, const Cap &cap)
{
    if (from < to) {
        uint32_t st1[8], bm[8];
        a[6] = from;
        x256_f_prep<true, FORM>(st1, bm, mid, a);
#pragma unroll 1
        for (uint32_t s = from; s + 1 < to; s++) {
            uint32_t nst1[8], nbm[8];
            cap(s, v);
            a[6] = s + 1;
            x256_f_prep<true, FORM>(nst1, nbm, mid, a);
            x256_f_data<true, FORM>(v, st1, bm);
#pragma unroll
            for (int k = 0; k < 8; k++) {
                st1[k] = nst1[k];
                bm[k] = nbm[k];
            }
        }
        cap(to - 1, v);
        x256_f_data<true, FORM>(v, st1, bm);
    }
    cap(to, v);
}

/* H's address-only part: st1, the state after its first block (toByte(1, 32) || KEY), and
 * both bitmasks. Four of H's six compressions; they do not depend on the children. */
template <bool INL = false>
__device__ __forceinline__ void x256_h_prep(uint32_t st1[8], uint32_t bm0[8], uint32_t bm1[8],
                                            const uint32_t mid[8], uint32_t a[8])
{
    uint32_t key[8], w[16];
    a[7] = 0;
    x256_prf<INL>(key, mid, a);
#pragma unroll
    for (int k = 0; k < 7; k++)
        w[k] = 0;
    w[7] = 1;
#pragma unroll
    for (int k = 0; k < 8; k++)
        w[8 + k] = key[k];
    sha256_iv(st1);
    x256_compress<INL>(st1, w);
    a[7] = 1;
    x256_prf<INL>(bm0, mid, a);
    a[7] = 2;
    x256_prf<INL>(bm1, mid, a);
}

/* x256_h_prep, inline, without the rounds known ahead (as x256_f_prep_folded). */
__device__ __forceinline__ void x256_h_prep_folded(uint32_t st1[8], uint32_t bm0[8],
                                                   uint32_t bm1[8], const uint32_t mid[8],
                                                   uint32_t a[8])
{
    uint32_t key[8], w[16];
    sha256_vars s7;
    x256_prf_rounds7(s7, w, mid, a);
    x256_prf_from7(key, mid, s7, w, 0);
    x256_prf_from7(bm0, mid, s7, w, 1);
    x256_prf_from7(bm1, mid, s7, w, 2);
    a[7] = 2;
    x256_keyed_block<1>(st1, key);
}

/* H's two blocks that depend on the children l and r. */
template <bool INL = false>
__device__ __forceinline__ void x256_h_data(uint32_t out[8], const uint32_t st1[8],
                                            const uint32_t bm0[8], const uint32_t bm1[8],
                                            const uint32_t l[8], const uint32_t r[8])
{
    uint32_t w[16];
#pragma unroll
    for (int k = 0; k < 8; k++) {
        out[k] = st1[k];
        w[k] = l[k] ^ bm0[k];
        w[8 + k] = r[k] ^ bm1[k];
    }
    x256_compress<INL>(out, w);
    w[0] = 0x80000000u;
#pragma unroll
    for (int k = 1; k < 15; k++)
        w[k] = 0;
    w[15] = 1024;
    x256_compress<INL>(out, w);
}

/* H of l || r into out. */
template <bool INL = false>
__device__ __forceinline__ void x256_h(uint32_t out[8], const uint32_t mid[8], uint32_t a[8],
                                       const uint32_t l[8], const uint32_t r[8])
{
    uint32_t st1[8], bm0[8], bm1[8];
    if constexpr (INL)
        x256_h_prep_folded(st1, bm0, bm1, mid, a);
    else
        x256_h_prep<INL>(st1, bm0, bm1, mid, a);
    x256_h_data<INL>(out, st1, bm0, bm1, l, r);
}

/* The L-trees of several leaves per block, for launches too small for a thread per leaf.
 * One leaf per block left most lanes idle: an L-tree of 67 nodes has 33, 17, 8, 4, 2, 1, 1
 * H calls a level, so its warps ran a quarter full (H200: 292 us for the 2,048 L-trees of
 * an XMSS^MT key, against 783 us for all their chains). Here a block of X256_LT_THREADS
 * takes x256_lt_pack(len) leaves and numbers all their calls level by level, leaf by leaf
 * within a level, so a level's calls fill consecutive lanes. First every call's
 * address-only part (x256_h_prep: four of H's six compressions) goes to prep, all calls at
 * once; then each level costs two serial compressions (x256_h_data), its results parked in
 * their spent prep slots until the level's barrier. nodew holds the leaves' chain ends, len *
 * 8 words a leaf; the roots end at word 0 of each leaf's. addr(p, a) sets words 0..4 of leaf
 * p's L-tree address. Every thread of the block calls this; the loops stride by blockDim.x,
 * so one thread a block also does it all (tests/gpu_emu). */
#define X256_LT_THREADS 192
#define X256_LT_LEN 67 /* the longest len (n = 32, w = 16) */
#define X256_LT_P 5    /* leaves a block at that len: 5 * 33 calls on level 0 */
#define X256_LT_NODEW (X256_LT_P * X256_LT_LEN * 8)
#define X256_LT_PREPW (X256_LT_P * (X256_LT_LEN - 1) * 24)
__host__ __device__ __forceinline__ uint32_t x256_lt_pack(uint32_t len)
{
    const uint32_t p = X256_LT_THREADS / (len / 2);
    return p < X256_LT_P ? p : X256_LT_P;
}

template <bool INL = false, typename Addr>
__device__ __forceinline__ void x256_ltree_packed(uint32_t *nodew, uint32_t *prep,
                                                  const uint32_t mid[8], uint32_t len,
                                                  uint32_t leaves, const Addr &addr)
{
    const uint32_t tid = threadIdx.x;
    for (uint32_t c = tid; c < leaves * (len - 1); c += blockDim.x) {
        uint32_t l = len, off = 0, lvl = 0;
        while (c >= off + leaves * (l / 2)) {
            off += leaves * (l / 2);
            l -= l / 2;
            lvl++;
        }
        uint32_t a[8], st1[8], bm0[8], bm1[8];
        addr((c - off) / (l / 2), a);
        a[5] = lvl;
        a[6] = (c - off) % (l / 2);
        if constexpr (INL)
            x256_h_prep_folded(st1, bm0, bm1, mid, a);
        else
            x256_h_prep(st1, bm0, bm1, mid, a);
        for (int k = 0; k < 8; k++) {
            prep[c * 24 + k] = st1[k];
            prep[c * 24 + 8 + k] = bm0[k];
            prep[c * 24 + 16 + k] = bm1[k];
        }
    }
    __syncthreads();
    uint32_t l = len, off = 0;
    while (l > 1) {
        const uint32_t par = l / 2, cnt = leaves * par;
        for (uint32_t c = tid; c < cnt; c += blockDim.x) {
            const uint32_t *lv = nodew + ((c / par) * len + 2 * (c % par)) * 8;
            uint32_t *pp = prep + (off + c) * 24, res[8];
            x256_h_data<INL>(res, pp, pp + 8, pp + 16, lv, lv + 8);
            for (int k = 0; k < 8; k++)
                pp[k] = res[k];
        }
        __syncthreads();
        for (uint32_t c = tid; c < cnt; c += blockDim.x)
            for (int k = 0; k < 8; k++)
                nodew[((c / par) * len + c % par) * 8 + k] = prep[(off + c) * 24 + k];
        /* an odd level's last node moves up unchanged (no call of the level writes there) */
        if (l & 1)
            for (uint32_t p = tid; p < leaves; p += blockDim.x)
                for (int k = 0; k < 8; k++)
                    nodew[(p * len + par) * 8 + k] = nodew[(p * len + l - 1) * 8 + k];
        __syncthreads();
        off += cnt;
        l -= par;
    }
}

/* A block's L-trees (x256_ltree_packed) from global memory: the chain ends of `leaves`
 * consecutive leaves at vals (len * 32 bytes a leaf), leaves at most x256_lt_pack(len);
 * root(p, w) takes leaf p's root (8 words). For the kernels of key generation and of the
 * batch signer, which differ only in the address and where the root goes. */
template <bool INL = false, typename Addr, typename Root>
__device__ __forceinline__ void x256_ltree_block(const uint8_t *vals, uint32_t len,
                                                 uint32_t leaves, const uint32_t mid[8],
                                                 const Addr &addr, const Root &root)
{
    __shared__ uint32_t nodew[X256_LT_NODEW], prep[X256_LT_PREPW];
    for (uint32_t k = threadIdx.x; k < leaves * len * 8; k += blockDim.x)
        nodew[k] = be32(vals + 4 * k);
    __syncthreads();
    x256_ltree_packed<INL>(nodew, prep, mid, len, leaves, addr);
    for (uint32_t p = threadIdx.x; p < leaves; p += blockDim.x)
        root(p, (const uint32_t *)(nodew + p * len * 8));
}

/* The L-tree of one leaf on one thread, in place over its len chain ends at node (8 words a
 * node, each word as the bytes lie in memory): a[0..4] name the leaf's L-tree (type 1), the
 * root ends in node[0..7]. For big launches, where every thread has a whole L-tree. */
__device__ __forceinline__ void x256_ltree_serial(uint32_t *node, uint32_t len,
                                                  const uint32_t pm[8], uint32_t a[8])
{
    uint32_t lv[8], rv[8], res[8];
    uint32_t l = len;
    for (uint32_t height = 0; l > 1; height++) {
        const uint32_t parents = l / 2;
        for (uint32_t i = 0; i < parents; i++) {
            for (int w = 0; w < 8; w++) {
                lv[w] = bswap32(node[2 * i * 8 + w]);
                rv[w] = bswap32(node[(2 * i + 1) * 8 + w]);
            }
            a[5] = height;
            a[6] = i;
            x256_h(res, pm, a, lv, rv);
            for (int w = 0; w < 8; w++)
                node[i * 8 + w] = bswap32(res[w]);
        }
        if (l & 1)
            for (int w = 0; w < 8; w++)
                node[parents * 8 + w] = node[(l - 1) * 8 + w];
        l -= parents;
    }
}

/* LM-OTS chain i of leaf q with SHA-256 (RFC 8554 Appendix A): x = H(I || q || i || 0xff ||
 * SEED), then `steps` steps into v; with CAP, the value after cd steps (cd <= steps) also
 * goes to cap (a signature taken on the way; cd beyond steps: none). */
template <int NW, bool CAP>
__device__ __forceinline__ void lms_chain_sha256(uint32_t v[NW], const uint8_t *Ib,
                                                 const uint8_t *seed, uint32_t q, uint32_t i,
                                                 uint32_t steps, uint32_t cd, uint8_t *cap)
{
    uint32_t I[4], pre[8];
#pragma unroll
    for (int k = 0; k < 4; k++)
        I[k] = be32(Ib + 4 * k);
#pragma unroll
    for (int k = 0; k < NW; k++)
        v[k] = be32(seed + 4 * k);
    lms_prefix_rounds(pre, I, q);
    lms_step_sha256<NW>(pre, I, q, i, 0xff, v);
#pragma unroll 1
    for (uint32_t j = 0; j < steps; j++) {
        if (CAP && j == cd)
            for (int k = 0; k < NW; k++)
                put_be32(cap + 4 * k, v[k]);
        lms_step_sha256<NW>(pre, I, q, i, j, v);
    }
    if (CAP && cd == steps)
        for (int k = 0; k < NW; k++)
            put_be32(cap + 4 * k, v[k]);
}

/* The same with SHAKE256 (n bytes), the chain value ending at m + 23 (m: 23 + n bytes). */
template <bool CAP>
__device__ __forceinline__ void lms_chain_shake(uint8_t *m, const uint8_t *I,
                                                const uint8_t *seed, uint32_t n, uint32_t q,
                                                uint32_t i, uint32_t steps, uint32_t cd,
                                                uint8_t *cap)
{
    for (int k = 0; k < 16; k++)
        m[k] = I[k];
    put_be32(m + 16, q);
    m[20] = (uint8_t)(i >> 8);
    m[21] = (uint8_t)i;
    m[22] = 0xff;
    for (uint32_t k = 0; k < n; k++)
        m[23 + k] = seed[k];
    sf_hash<SF_SHAKE256>(m + 23, n, m, 23 + n);
    for (uint32_t s = 0; s < steps; s++) {
        if (CAP && s == cd)
            for (uint32_t k = 0; k < n; k++)
                cap[k] = m[23 + k];
        m[22] = (uint8_t)s;
        sf_hash<SF_SHAKE256>(m + 23, n, m, 23 + n);
    }
    if (CAP && cd == steps)
        for (uint32_t k = 0; k < n; k++)
            cap[k] = m[23 + k];
}

/* An LMS leaf through a byte stream: K = H(I || q || D_PBLC || y[0..p-1]), then
 * H(I || 2^h + q || D_LEAF || K) to out (n bytes). */
template <int F>
__device__ __forceinline__ void lms_leaf_stream(const uint8_t *I, uint32_t q, uint32_t h,
                                                uint32_t p, uint32_t n, const uint8_t *y,
                                                uint8_t *out)
{
    uint8_t head[22 + 32];
    typename stream_of<F>::type st;
    for (int k = 0; k < 16; k++)
        head[k] = I[k];
    put_be32(head + 16, q);
    head[20] = 0x80;
    head[21] = 0x80;
    st.init();
    st.absorb(head, 22);
    st.absorb(y, p * n);
    st.finish(head + 22, n);
    put_be32(head + 16, (1u << h) + q);
    head[20] = 0x82;
    head[21] = 0x82;
    sf_hash<F>(out, n, head, 22 + n);
}

/* sk_i = PRF_keygen(SK_SEED, PUB_SEED || ADRS) for XMSS's chain of adrs (n bytes to v),
 * through the caller's m (which then holds SK_SEED: the caller wipes it where it must). */
template <int F>
__device__ __forceinline__ void x_secret(uint8_t *v, const xmss_args &x, const uint8_t adrs[32],
                                         uint8_t m[64 + 64 + 64 + 32])
{
    unsigned at = put_prefix(m, x, 4, x.sk_seed);
    for (unsigned k = 0; k < x.n; k++)
        m[at + k] = x.pub_seed[k];
    at += x.n;
    for (int k = 0; k < 32; k++)
        m[at + k] = adrs[k];
    sf_hash<F>(v, x.n, m, at + 32);
}

/* The SHA-256 state after the block toByte(tag, 32) || seed (32 bytes), on the host: the
 * midstates of XMSS's PRF (tag 3) and PRF_keygen (tag 4). Kernels take them as parameters:
 * a block's thread 0 computing them held every block up by two compressions. */
void x256_host_midstate(uint32_t out[8], uint8_t tag, const uint8_t *seed);
} // namespace hbs_gpu

#endif
