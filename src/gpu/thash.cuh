/* The FIPS 205 tweakable hashes on the device (F, H, PRF, T_l), for both families.
 *
 * Hash values live in registers as N/4 32-bit "family words": big-endian words for the
 * SHA-2 sets (so they drop into SHA-2 message blocks) and little-endian words for SHAKE
 * (so pairs form Keccak lanes). The SHA-2 sets start every call from the PK.seed midstate,
 * computed once per key. FAM and N are template arguments: every block layout is then
 * known at compile time and the compiler keeps all of it in registers. */
#ifndef HBS_GPU_THASH_CUH
#define HBS_GPU_THASH_CUH

#include "gpu/hash.cuh"

namespace hbs_gpu {

enum { FAM_SHA2 = 0, FAM_SHAKE = 1 };
enum { A_WOTS_HASH = 0, A_WOTS_PK = 1, A_TREE = 2, A_FORS_TREE = 3, A_FORS_ROOTS = 4,
       A_WOTS_PRF = 5, A_FORS_PRF = 6 };

/* One key as the kernels need it; built once per key on the device (prep kernel). */
struct dkey {
    uint32_t st256[8];  /* SHA-2: SHA-256 state after PK.seed || 0^(64-n) */
    uint64_t st512[8];  /* SHA-2, n > 16: SHA-512 state after PK.seed || 0^(128-n) */
    uint32_t pk_seed[8]; /* family words */
    uint32_t sk_seed[8];
    uint8_t sk[128];     /* SK.seed || SK.prf || PK.seed || PK.root as bytes */
};

/* ADRS fields; the byte layout is built per family when hashing. */
struct adrs {
    uint32_t layer;
    uint64_t tree;
    uint32_t type, kp, c, h; /* c: chain or tree height; h: hash address or tree index */
};

/* What a thread keeps of its key: the midstates (SHA-2) or PK.seed (SHAKE). */
template <int FAM, int N> struct kregs {
    uint32_t s256[8];
    uint64_t s512[8];
    uint32_t seed[N / 4];
    __device__ __forceinline__ void load(const dkey *k)
    {
        if constexpr (FAM == FAM_SHA2) {
#pragma unroll
            for (int i = 0; i < 8; i++)
                s256[i] = k->st256[i];
            if constexpr (N > 16) {
#pragma unroll
                for (int i = 0; i < 8; i++)
                    s512[i] = k->st512[i];
            }
        } else {
#pragma unroll
            for (int i = 0; i < N / 4; i++)
                seed[i] = k->pk_seed[i];
        }
    }
};

/* ---- family words in memory ---- */

template <int FAM, int N>
__device__ __forceinline__ void load_val(uint32_t v[N / 4], const uint8_t *p)
{
    const uint32_t *w = reinterpret_cast<const uint32_t *>(p);
#pragma unroll
    for (int i = 0; i < N / 4; i++)
        v[i] = FAM == FAM_SHA2 ? bswap32(w[i]) : w[i];
}

template <int FAM, int N>
__device__ __forceinline__ void store_val(uint8_t *p, const uint32_t v[N / 4])
{
    uint32_t *w = reinterpret_cast<uint32_t *>(p);
#pragma unroll
    for (int i = 0; i < N / 4; i++)
        w[i] = FAM == FAM_SHA2 ? bswap32(v[i]) : v[i];
}

/* Family words from bytes at any alignment. */
template <int FAM, int N>
__device__ __forceinline__ void load_val_bytes(uint32_t v[N / 4], const uint8_t *p)
{
#pragma unroll
    for (int i = 0; i < N / 4; i++) {
        uint32_t be = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
                      (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
        v[i] = FAM == FAM_SHA2 ? be : bswap32(be);
    }
}

/* ---- ADRS layouts ---- */

/* ADRSc (22 bytes) as big-endian words; a[5] holds bytes 20..21 in its top half. */
__device__ __forceinline__ void adrsc_words(uint32_t a[6], const adrs &ad)
{
    a[0] = ad.layer << 24 | (uint32_t)(ad.tree >> 40) & 0xffffff;
    a[1] = (uint32_t)(ad.tree >> 8);
    a[2] = (uint32_t)ad.tree << 24 | (ad.type & 0xff) << 16 | ad.kp >> 16;
    a[3] = ad.kp << 16 | ad.c >> 16;
    a[4] = ad.c << 16 | ad.h >> 16;
    a[5] = ad.h << 16;
}

/* The full 32-byte ADRS as 8 little-endian words (SHAKE). */
__device__ __forceinline__ void adrs_words_le(uint32_t a[8], const adrs &ad)
{
    a[0] = bswap32(ad.layer);
    a[1] = 0;
    a[2] = bswap32((uint32_t)(ad.tree >> 32));
    a[3] = bswap32((uint32_t)ad.tree);
    a[4] = bswap32(ad.type);
    a[5] = bswap32(ad.kp);
    a[6] = bswap32(ad.c);
    a[7] = bswap32(ad.h);
}

/* ---- T_l for small l (F, PRF: l = 1; H: l = 2), all in registers ---- */

/* The one block of midstate || ADRSc || in (M words), a[5] holding ADRSc bytes 20..21 in
 * its top half; needs 22 + 4M + 9 <= 64. */
template <int M>
__device__ __forceinline__ void sha256_small_block(uint32_t w[16], const uint32_t a[6],
                                                   const uint32_t in[M])
{
#pragma unroll
    for (int i = 0; i < 5; i++)
        w[i] = a[i];
    w[5] = a[5] | in[0] >> 16;
#pragma unroll
    for (int j = 1; j < M; j++)
        w[5 + j] = in[j - 1] << 16 | in[j] >> 16;
    w[5 + M] = in[M - 1] << 16 | 0x8000;
#pragma unroll
    for (int i = 6 + M; i < 15; i++)
        w[i] = 0;
    w[15] = (64 + 22 + 4 * M) * 8;
}

/* SHA-256 over midstate || ADRSc || in: that block compressed from s256. C: the compact
 * compression (hash.cuh). */
template <int M, int C = HBS_GPU_SHA256_FORM>
__device__ __forceinline__ void sha256_small(uint32_t st[8], const uint32_t s256[8],
                                             const uint32_t a[6], const uint32_t in[M])
{
    uint32_t w[16];
    sha256_small_block<M>(w, a, in);
#pragma unroll
    for (int i = 0; i < 8; i++)
        st[i] = s256[i];
    sha256_compress<C>(st, w);
}

/* SHA-512 over midstate || ADRSc || in (M words); needs 22 + 4M + 17 <= 128. */
template <int M>
__device__ __forceinline__ void sha512_small(uint64_t st[8], const uint64_t s512[8],
                                             const uint32_t a[6], const uint32_t in[M])
{
    uint32_t w[32];
#pragma unroll
    for (int i = 0; i < 5; i++)
        w[i] = a[i];
    w[5] = a[5] | in[0] >> 16;
#pragma unroll
    for (int j = 1; j < M; j++)
        w[5 + j] = in[j - 1] << 16 | in[j] >> 16;
    w[5 + M] = in[M - 1] << 16 | 0x8000;
#pragma unroll
    for (int i = 6 + M; i < 31; i++)
        w[i] = 0;
    w[31] = (128 + 22 + 4 * M) * 8;
    uint64_t w64[16];
#pragma unroll
    for (int i = 0; i < 16; i++)
        w64[i] = (uint64_t)w[2 * i] << 32 | w[2 * i + 1];
#pragma unroll
    for (int i = 0; i < 8; i++)
        st[i] = s512[i];
    sha512_compress(st, w64);
}

/* out = T_L(PK.seed, ADRS, in), in being L values (L = 1 or 2). C: the compact SHA-256
 * compression (hash.cuh). */
template <int FAM, int N, int L, int C = HBS_GPU_SHA256_FORM>
__device__ __forceinline__ void thash(uint32_t out[N / 4], const kregs<FAM, N> &k,
                                      const adrs &ad, const uint32_t in[L * N / 4])
{
    if constexpr (FAM == FAM_SHA2) {
        uint32_t a[6];
        adrsc_words(a, ad);
        if constexpr (N == 16 || L == 1) {
            uint32_t st[8];
            sha256_small<L * N / 4, C>(st, k.s256, a, in);
#pragma unroll
            for (int i = 0; i < N / 4; i++)
                out[i] = st[i];
        } else {
            uint64_t st[8];
            sha512_small<L * N / 4>(st, k.s512, a, in);
#pragma unroll
            for (int i = 0; i < N / 8; i++) {
                out[2 * i] = (uint32_t)(st[i] >> 32);
                out[2 * i + 1] = (uint32_t)st[i];
            }
        }
    } else {
        uint32_t a[8];
        adrs_words_le(a, ad);
        uint64_t s[25];
        constexpr int SL = N / 8, IL = L * N / 8; /* lanes of seed and of input */
#pragma unroll
        for (int i = 0; i < 25; i++)
            s[i] = 0;
#pragma unroll
        for (int i = 0; i < SL; i++)
            s[i] = (uint64_t)k.seed[2 * i + 1] << 32 | k.seed[2 * i];
#pragma unroll
        for (int i = 0; i < 4; i++)
            s[SL + i] = (uint64_t)a[2 * i + 1] << 32 | a[2 * i];
#pragma unroll
        for (int i = 0; i < IL; i++)
            s[SL + 4 + i] = (uint64_t)in[2 * i + 1] << 32 | in[2 * i];
        s[SL + 4 + IL] ^= 0x1f;
        s[16] ^= 0x8000000000000000ull;
        keccak_f1600(s);
#pragma unroll
        for (int i = 0; i < SL; i++) {
            out[2 * i] = (uint32_t)s[i];
            out[2 * i + 1] = (uint32_t)(s[i] >> 32);
        }
    }
}

/* The F calls of one WOTS+ chain, whose addresses differ only in the hash address. With
 * SHA-2 that sits in ADRSc word 5 (it is below 16), so words 0 .. 4 (layer, tree, type, key
 * pair, chain) are the same in every call: start does rounds 0 .. 4 of the block once, and
 * each step the other 59 (5 of 64 rounds saved in every step). SHAKE: thash as it is. C:
 * the compression's form (hash.cuh). */
template <int FAM, int N, int C = HBS_GPU_SHA256_FORM> struct fchain {
    sha256_vars pre;
    uint32_t a[6];
    adrs ad;

    /* chain: the chain's address (type A_WOTS_HASH; its hash address is ignored) */
    __device__ __forceinline__ void start(const kregs<FAM, N> &k, const adrs &chain)
    {
        ad = chain;
        if constexpr (FAM == FAM_SHA2) {
            adrsc_words(a, chain);
#pragma unroll
            for (int i = 0; i < 8; i++)
                pre.v[i] = k.s256[i];
            sha256_rounds<0, 5>(pre, a);
        }
    }

    /* v = F(PK.seed, ADRS with hash address h, v) */
    __device__ __forceinline__ void step(uint32_t v[N / 4], const kregs<FAM, N> &k, uint32_t h)
    {
        if constexpr (FAM == FAM_SHA2) {
            constexpr int M = N / 4;
            uint32_t w[16], st[8];
            a[5] = h << 16;
            sha256_small_block<M>(w, a, v);
#pragma unroll
            for (int i = 0; i < 8; i++)
                st[i] = k.s256[i];
            sha256_compress_from<5, C>(st, pre, w);
#pragma unroll
            for (int i = 0; i < M; i++)
                v[i] = st[i];
        } else {
            ad.h = h;
            thash<FAM, N, 1, C>(v, k, ad, v);
        }
    }
};

/* ---- T_l over values in memory (T_len for WOTS public keys, T_k for FORS roots) ---- */

/* Word j of the stream (input words with a 16-bit shift after ADRSc), then 0x80 and zeros. */
__device__ __forceinline__ uint32_t tl_in_word(const uint32_t *in, int m, int k)
{
    /* the padding byte behaves as one more input word 0x80000000 */
    return k < m ? in[k] : (k == m ? 0x80000000u : 0u);
}

/* Word j >= 5 of the stream ADRSc (22 bytes) || m input words || 0x80 || zeros, as
 * big-endian words: the input shifted by the 16 bits ADRSc overhangs (a: ADRSc's words). */
__device__ __forceinline__ uint32_t tl_shifted_word(const uint32_t a[6], const uint32_t *in,
                                                    int m, int j)
{
    const int kk = j - 5;
    const uint32_t hi = kk == 0 ? a[5] >> 16 : (kk - 1 < m ? bswap32(in[kk - 1]) : 0u);
    const uint32_t lo = kk < m ? bswap32(in[kk]) : (kk == m ? 0x80000000u : 0u);
    return hi << 16 | lo >> 16;
}

template <int FAM, int N, int C = HBS_GPU_SHA256_FORM>
__device__ void thash_mem(uint32_t out[N / 4], const kregs<FAM, N> &k, const adrs &ad,
                          const uint8_t *inb, int nvals)
{
    const int m = nvals * N / 4; /* input words */
    if constexpr (FAM == FAM_SHA2) {
        const uint32_t *in = reinterpret_cast<const uint32_t *>(inb);
        uint32_t a[6];
        adrsc_words(a, ad);
        /* family words of memory are big-endian: the input words are bswapped loads */
        if constexpr (N == 16) {
            const int total = 22 + 4 * m;
            const int nb = (total + 9 + 63) / 64;
            uint32_t st[8];
#pragma unroll
            for (int i = 0; i < 8; i++)
                st[i] = k.s256[i];
            for (int b = 0; b < nb; b++) {
                uint32_t w[16];
#pragma unroll
                for (int i = 0; i < 16; i++) {
                    int j = b * 16 + i;
                    uint32_t v;
                    if (i < 5 && b == 0)
                        v = a[i < 5 ? i : 0]; /* i is a constant here: a stays in registers */
                    else
                        v = tl_shifted_word(a, in, m, j);
                    w[i] = v;
                }
                if (b == nb - 1)
                    w[15] = (uint32_t)(64 + total) * 8;
                sha256_compress<C>(st, w);
            }
#pragma unroll
            for (int i = 0; i < N / 4; i++)
                out[i] = st[i];
        } else {
            const int total = 22 + 4 * m;
            const int nb = (total + 17 + 127) / 128;
            uint64_t st[8];
#pragma unroll
            for (int i = 0; i < 8; i++)
                st[i] = k.s512[i];
            for (int b = 0; b < nb; b++) {
                uint64_t w[16];
#pragma unroll
                for (int i = 0; i < 32; i++) {
                    int j = b * 32 + i;
                    uint32_t v;
                    if (i < 5 && b == 0)
                        v = a[i < 5 ? i : 0];
                    else
                        v = tl_shifted_word(a, in, m, j);
                    if (i & 1)
                        w[i >> 1] |= v;
                    else
                        w[i >> 1] = (uint64_t)v << 32;
                }
                if (b == nb - 1)
                    w[15] = (uint64_t)(128 + total) * 8;
                sha512_compress(st, w);
            }
#pragma unroll
            for (int i = 0; i < N / 8; i++) {
                out[2 * i] = (uint32_t)(st[i] >> 32);
                out[2 * i + 1] = (uint32_t)st[i];
            }
        }
    } else {
        const uint64_t *in = reinterpret_cast<const uint64_t *>(inb);
        uint32_t a[8];
        adrs_words_le(a, ad);
        constexpr int SL = N / 8;
        const int il = nvals * N / 8;
        const int total = SL + 4 + il; /* lanes before the padding */
        const int nb = total / 17 + 1; /* the 0x1f byte always fits after the last lane */
        uint64_t s[25];
#pragma unroll
        for (int i = 0; i < 25; i++)
            s[i] = 0;
        for (int b = 0; b < nb; b++) {
#pragma unroll
            for (int i = 0; i < 17; i++) {
                int g = b * 17 + i;
                uint64_t v;
                /* PK.seed and ADRS fill the first lanes of block 0; i is a constant */
                if (b == 0 && i < SL)
                    v = (uint64_t)k.seed[2 * (i < SL ? i : 0) + 1] << 32 | k.seed[2 * (i < SL ? i : 0)];
                else if (b == 0 && i < SL + 4) {
                    const int q = i < SL + 4 && i >= SL ? i - SL : 0;
                    v = (uint64_t)a[2 * q + 1] << 32 | a[2 * q];
                } else if (g < total)
                    v = in[g - SL - 4];
                else
                    v = g == total ? 0x1full : 0;
                if (b == nb - 1 && i == 16)
                    v ^= 0x8000000000000000ull;
                s[i] ^= v;
            }
            keccak_f1600(s);
        }
#pragma unroll
        for (int i = 0; i < SL; i++) {
            out[2 * i] = (uint32_t)s[i];
            out[2 * i + 1] = (uint32_t)(s[i] >> 32);
        }
    }
}

/* T_len with SHA-256 (SHA-2, n = 16) where LEN is known at compile time (the one-signature
 * kernel's WOTS+ public keys): the stream is PK.seed midstate || ADRSc (22 bytes) || the LEN
 * chain ends, which sit in memory as big-endian bytes (store_val), 4-byte aligned.
 * Word j of the stream (after the midstate) is the same as in thash_mem; here every length
 * is a compile-time constant: block 0 and the tail blocks are assembled with constant
 * indices, and the middle blocks, input words only, in a loop of two-word byte permutes. */
template <int M>
__device__ __forceinline__ uint32_t tl_n16_word(const uint32_t a[6], const uint32_t *in, int j)
{
    return j < 5 ? a[j < 5 ? j : 0] : tl_shifted_word(a, in, M, j);
}

template <int LEN, int C = HBS_GPU_SHA256_FORM>
__device__ __forceinline__ void tlen_sha256_n16(uint32_t out[4], const uint32_t s256[8],
                                                const adrs &ad, const uint32_t *in)
{
    constexpr int M = LEN * 4, TOTAL = 22 + 4 * M, NB = (TOTAL + 9 + 63) / 64;
    constexpr int MID = (M - 11) / 16 + 1; /* blocks 1 .. MID-1: 16 b + 10 < M */
    static_assert(M >= 11 && MID < NB, "T_len layout");
    uint32_t a[6], st[8], w[16];
    adrsc_words(a, ad);
#pragma unroll
    for (int i = 0; i < 8; i++)
        st[i] = s256[i];
#pragma unroll
    for (int i = 0; i < 16; i++)
        w[i] = tl_n16_word<M>(a, in, i);
    sha256_compress<C>(st, w);
#pragma unroll 1
    for (int b = 1; b < MID; b++) {
        /* word i: the low half of input word 16 b + i - 6, the high half of the next */
        const uint32_t *p = in + 16 * b - 6;
#pragma unroll
        for (int i = 0; i < 16; i++)
            w[i] = __byte_perm(p[i], p[i + 1], 0x2345);
        sha256_compress<C>(st, w);
    }
#pragma unroll
    for (int b = MID; b < NB; b++) {
#pragma unroll
        for (int i = 0; i < 16; i++)
            w[i] = tl_n16_word<M>(a, in, b * 16 + i);
        if (b == NB - 1)
            w[15] = (uint32_t)(64 + TOTAL) * 8;
        sha256_compress<C>(st, w);
    }
#pragma unroll
    for (int i = 0; i < 4; i++)
        out[i] = st[i];
}

/* ---- T_l at n = 16 in two passes, for a block that holds all of a stream's values at
 * once (the one-signature kernel's T_len and T_k): the schedules of the stream's blocks side
 * by side, a thread each (tl16_schedule), then one thread runs the rounds alone, block after
 * block (tl16_rounds). The stream is the one of tlen_sha256_n16, of m input words. ---- */

/* 64-byte blocks of the stream after the PK.seed midstate: ADRSc, the input, 0x80, length */
__host__ __device__ constexpr int tl16_blocks(int m) { return (22 + 4 * m + 9 + 63) / 64; }

/* Block b's schedule with the round constants (sha256_schedule_wk) to wk. */
__device__ __forceinline__ void tl16_schedule(uint32_t *wk, const adrs &ad, const uint32_t *in,
                                              int m, int b)
{
    uint32_t a[6], w[16];
    adrsc_words(a, ad);
#pragma unroll
    for (int i = 0; i < 16; i++) {
        if (i < 5 && b == 0)
            w[i] = a[i < 5 ? i : 0]; /* i is a constant here: a stays in registers */
        else
            w[i] = tl_shifted_word(a, in, m, 16 * b + i);
    }
    if (b == tl16_blocks(m) - 1)
        w[15] = (uint32_t)(64 + 22 + 4 * m) * 8;
    sha256_schedule_wk(wk, w);
}

/* out = T_l of the stream whose nb schedules lie at wk, wk + 64, ... (16-byte aligned). C:
 * the compression's form (sha256_compress_wk). */
template <int C>
__device__ __forceinline__ void tl16_rounds(uint32_t out[4], const uint32_t s256[8],
                                            const uint32_t *wk, int nb)
{
    uint32_t st[8];
#pragma unroll
    for (int i = 0; i < 8; i++)
        st[i] = s256[i];
#pragma unroll 1
    for (int b = 0; b < nb; b++)
        sha256_compress_wk<C>(st, wk + 64 * b);
#pragma unroll
    for (int i = 0; i < 4; i++)
        out[i] = st[i];
}

} // namespace hbs_gpu

#endif
