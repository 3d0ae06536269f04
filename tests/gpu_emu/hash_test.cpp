/* Device hashes written word by word, on the CPU (scripts/gpu-emulate.sh builds and runs
 * it), each against SHA-256 of the whole message by the library's own hbs_sha256, so a wrong
 * precomputed round, message word or schedule word shows as a wrong digest:
 *   - fchain (gpu/thash.cuh): SLH-DSA's F along a WOTS+ chain, which starts every step
 *     from the chain's own first rounds, n = 16, 24, 32, in every compression form
 *     (hash.cuh), against F = SHA-256(PK.seed || 0^(64-n) || ADRSc || M) and against
 *     thash;
 *   - tlen_sha256_n16 (gpu/thash.cuh): T_len over a WOTS+ public key at n = 16, the
 *     one-signature kernel's, in every form, against SHA-256 of PK.seed || pad || ADRSc || pk;
 *     and tl16_schedule + tl16_rounds, its two-pass way, for T_len and T_k;
 *   - x256_chain and x256_h (gpu/stateful_device.cuh): XMSS's F along a chain and H, from
 *     the PRF midstate, against RFC 8391's PRF, F and H spelled out byte by byte. */
#include "gpu/thash.cuh"
#include "gpu/stateful_device.cuh"

#include <stdio.h>
#include <stdlib.h>

#include "emu_rand.h"

extern "C" {
#include "hash/hash.h"
}

using namespace hbs_gpu;

static const uint32_t sha256_iv_words[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                            0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};

namespace hbs_gpu {
/* (defined in xmss_sign.cu, which this program does not link) */
void x256_host_midstate(uint32_t out[8], uint8_t tag, const uint8_t *seed)
{
    uint8_t block[64] = {0};
    block[31] = tag;
    memcpy(block + 32, seed, 32);
    memcpy(out, sha256_iv_words, sizeof sha256_iv_words);
    hbs_sha256_compress(out, block, 1);
}
} // namespace hbs_gpu

static int failures = 0, checks = 0;
#define EXPECT(c)                                                                        \
    do {                                                                                 \
        checks++;                                                                        \
        if (!(c) && failures++ < 10)                                                     \
            fprintf(stderr, "hash_test:%d: %s\n", __LINE__, #c);                         \
    } while (0)


static void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}
static void to_words(uint32_t *w, const uint8_t *b, size_t nw)
{
    for (size_t i = 0; i < nw; i++)
        w[i] = (uint32_t)b[4 * i] << 24 | (uint32_t)b[4 * i + 1] << 16 |
               (uint32_t)b[4 * i + 2] << 8 | b[4 * i + 3];
}
static void to_bytes(uint8_t *b, const uint32_t *w, size_t nw)
{
    for (size_t i = 0; i < nw; i++)
        put32(b + 4 * i, w[i]);
}

/* ---- SLH-DSA F along a chain ---- */

/* FIPS 205's F and T_l for the SHA-2 sets (SHA-256 ones):
 * Trunc_n(SHA-256(PK.seed || toByte(0, 64 - n) || ADRSc || M)), M of mlen bytes. */
static void slh_sha256_ref(uint8_t *out, size_t n, const uint8_t *pk_seed, const adrs &ad,
                           const uint8_t *m, size_t mlen)
{
    uint8_t msg[64 + 22 + 35 * 16] = {0}, md[32];
    memcpy(msg, pk_seed, n);
    uint8_t *c = msg + 64;
    c[0] = (uint8_t)ad.layer;
    for (int i = 0; i < 8; i++)
        c[1 + i] = (uint8_t)(ad.tree >> (56 - 8 * i));
    c[9] = (uint8_t)ad.type;
    put32(c + 10, ad.kp);
    put32(c + 14, ad.c);
    put32(c + 18, ad.h);
    memcpy(msg + 86, m, mlen);
    hbs_sha256(md, msg, 86 + mlen);
    memcpy(out, md, n);
}

/* The SHA-256 state after PK.seed || toByte(0, 64 - n): the kernels' midstate. */
static void slh_midstate(uint32_t s256[8], const uint8_t *pk_seed, size_t n)
{
    uint8_t block[64] = {0};
    memcpy(block, pk_seed, n);
    memcpy(s256, sha256_iv_words, sizeof sha256_iv_words);
    hbs_sha256_compress(s256, block, 1);
}

template <int N, int C> static void check_fchain()
{
    constexpr int W = N / 4;
    for (int trial = 0; trial < 20; trial++) {
        uint8_t seed[N], v0[N];
        rnd_bytes(seed, N);
        rnd_bytes(v0, N);
        kregs<FAM_SHA2, N> k;
        slh_midstate(k.s256, seed, N);
        adrs ad = {rnd32() & 0xff, (uint64_t)rnd32() << 32 | rnd32(), A_WOTS_HASH, rnd32(),
                   rnd32() % 67, 0};
        uint32_t v[W], t[W];
        to_words(v, v0, W);
        memcpy(t, v, sizeof v);
        uint8_t ref[N];
        memcpy(ref, v0, N);
        fchain<FAM_SHA2, N, C> f;
        f.start(k, ad);
        for (uint32_t h = 0; h < 15; h++) {
            adrs at = ad;
            at.h = h;
            slh_sha256_ref(ref, N, seed, at, ref, N);
            f.step(v, k, h);
            thash<FAM_SHA2, N, 1, C>(t, k, at, t);
            uint8_t got[N];
            to_bytes(got, v, W);
            EXPECT(memcmp(got, ref, N) == 0);
            EXPECT(memcmp(v, t, sizeof v) == 0);
        }
    }
}

/* ---- SLH-DSA T_len over a WOTS+ public key (n = 16, LEN = 35) ---- */

/* FIPS 205's T_len for the SHA-2 sets at n = 16: SHA-256(PK.seed || 0^48 || ADRSc || pk). */
template <int C> static void check_tlen()
{
    constexpr int LEN = 35, N = 16;
    for (int trial = 0; trial < 20; trial++) {
        uint8_t seed[N], pk[LEN * N], md[N];
        rnd_bytes(seed, N);
        rnd_bytes(pk, sizeof pk);
        uint32_t s256[8];
        slh_midstate(s256, seed, N);
        const adrs ad = {rnd32() & 0xff, (uint64_t)rnd32() << 32 | rnd32(), A_WOTS_PK,
                         rnd32(), 0, 0};
        slh_sha256_ref(md, N, seed, ad, pk, sizeof pk);
        /* the chain ends as the kernel keeps them: big-endian bytes, 4-byte aligned */
        uint32_t in[LEN * N / 4], out[4];
        memcpy(in, pk, sizeof pk);
        tlen_sha256_n16<LEN, C>(out, s256, ad, in);
        uint8_t got[N];
        to_bytes(got, out, 4);
        EXPECT(memcmp(got, md, N) == 0);
    }
}

/* The two-pass T_l (tl16_schedule, then tl16_rounds): T_len over a WOTS+ public key and
 * T_k over the FORS roots of every n = 16 set (k = 14, 33) and lengths around the block
 * edges, in the forms the one-signature kernel runs them. */
template <int C> static void check_tl16()
{
    constexpr int N = 16;
    const int counts[] = {35, 14, 33, 1, 2, 3, 10, 11, 12, 13, 27, 28, 29};
    for (int vals : counts) {
        for (int trial = 0; trial < 4; trial++) {
            uint8_t seed[N], in8[35 * N + 16], md[N];
            rnd_bytes(seed, N);
            rnd_bytes(in8, (size_t)vals * N);
            uint32_t s256[8];
            slh_midstate(s256, seed, N);
            const adrs ad = {rnd32() & 0xff, (uint64_t)rnd32() << 32 | rnd32(),
                             vals == 35 ? A_WOTS_PK : A_FORS_ROOTS, rnd32(), 0, 0};
            slh_sha256_ref(md, N, seed, ad, in8, (size_t)vals * N);
            uint32_t in[(35 * N + 16) / 4], out[4];
            memcpy(in, in8, (size_t)vals * N);
            const int m = vals * N / 4, nb = tl16_blocks(m);
            alignas(16) uint32_t wk[16 * 64];
            for (int b = nb - 1; b >= 0; b--) /* any order: the blocks are independent */
                tl16_schedule(wk + 64 * b, ad, in, m, b);
            tl16_rounds<C>(out, s256, wk, nb);
            uint8_t got[N];
            to_bytes(got, out, 4);
            EXPECT(memcmp(got, md, N) == 0);
        }
    }
}

/* ---- XMSS F and H (RFC 8391, SHA2_256 with n = 32) ---- */

static void xmss_prf_ref(uint8_t out[32], const uint8_t seed[32], const uint32_t a[8])
{
    uint8_t m[96] = {0};
    m[31] = 3;
    memcpy(m + 32, seed, 32);
    for (int i = 0; i < 8; i++)
        put32(m + 64 + 4 * i, a[i]);
    hbs_sha256(out, m, 96);
}

/* F (parts 1) or H (parts 2) over in, a's keyAndMask set here */
static void xmss_thash_ref(uint8_t out[32], const uint8_t seed[32], uint32_t a[8],
                           const uint8_t *in, int parts)
{
    uint8_t m[32 + 32 + 64] = {0}, key[32], bm[32];
    m[31] = (uint8_t)(parts - 1);
    a[7] = 0;
    xmss_prf_ref(key, seed, a);
    memcpy(m + 32, key, 32);
    for (int j = 0; j < parts; j++) {
        a[7] = (uint32_t)j + 1;
        xmss_prf_ref(bm, seed, a);
        for (int i = 0; i < 32; i++)
            m[64 + 32 * j + i] = in[32 * j + i] ^ bm[i];
    }
    hbs_sha256(out, m, 64 + 32 * parts);
}

static void check_x256()
{
    for (int trial = 0; trial < 20; trial++) {
        uint8_t seed[32], v0[32], lr[64];
        rnd_bytes(seed, 32);
        rnd_bytes(v0, 32);
        rnd_bytes(lr, 64);
        uint32_t mid[8];
        x256_host_midstate(mid, 3, seed);
        uint32_t a[8] = {rnd32() % 12, rnd32(), rnd32(), 0, rnd32() & 0xfffff, rnd32() % 67, 0, 0};
        /* a chain from a random start: every value the chain passes through */
        const uint32_t from = rnd32() % 15;
        uint8_t ref[16][32];
        memcpy(ref[from], v0, 32);
        for (uint32_t s = from; s < 15; s++) {
            uint32_t r[8];
            memcpy(r, a, sizeof r);
            r[6] = s;
            xmss_thash_ref(ref[s + 1], seed, r, ref[s], 1);
        }
        uint32_t v[8], ga[8];
        to_words(v, v0, 8);
        memcpy(ga, a, sizeof ga);
        uint32_t seen = 0;
        x256_chain(v, mid, ga, from, 15, [&](uint32_t s, const uint32_t *cv) {
            uint8_t got[32];
            to_bytes(got, cv, 8);
            EXPECT(memcmp(got, ref[s], 32) == 0);
            seen++;
        });
        EXPECT(seen == 16 - from);
        /* F alone, inline (rounds known ahead left out) and out of line */
        for (int inl = 0; inl < 2; inl++) {
            uint32_t fa[8], fv[8];
            memcpy(fa, a, sizeof fa);
            fa[6] = from;
            to_words(fv, v0, 8);
            if (inl)
                x256_f<true>(fv, mid, fa);
            else
                x256_f<false>(fv, mid, fa);
            uint8_t fgot[32];
            to_bytes(fgot, fv, 8);
            EXPECT(memcmp(fgot, ref[from + 1], 32) == 0);
        }
        /* H, as the L-trees and tree levels hash */
        uint32_t ha[8] = {a[0], a[1], a[2], 1 + rnd32() % 2, a[4], rnd32() % 10, rnd32() & 0xffff, 0};
        uint8_t href[32], got[32];
        uint32_t hr[8];
        memcpy(hr, ha, sizeof hr);
        xmss_thash_ref(href, seed, hr, lr, 2);
        uint32_t l[8], r[8], out[8];
        to_words(l, lr, 8);
        to_words(r, lr + 32, 8);
        x256_h<true>(out, mid, ha, l, r);
        to_bytes(got, out, 8);
        EXPECT(memcmp(got, href, 32) == 0);
        memcpy(ha, hr, sizeof ha);
        ha[7] = 0;
        x256_h<false>(out, mid, ha, l, r);
        to_bytes(got, out, 8);
        EXPECT(memcmp(got, href, 32) == 0);
    }
}

int main()
{
    /* every shape, with its additions on the integer pipe and as IMAD (SHA_IMAD) */
    check_fchain<16, SHA_FULL>();
    check_fchain<16, SHA_COMPACT>();
    check_fchain<16, SHA_LOOPED>();
    check_fchain<16, SHA_ROLLED>();
    check_fchain<16, SHA_FULL | SHA_IMAD>();
    check_fchain<16, SHA_COMPACT | SHA_IMAD>();
    check_fchain<16, SHA_LOOPED | SHA_IMAD>();
    check_fchain<24, SHA_FULL>();
    check_fchain<24, SHA_COMPACT>();
    check_fchain<24, SHA_ROLLED>();
    check_fchain<24, SHA_FULL | SHA_IMAD>();
    check_fchain<32, SHA_FULL>();
    check_fchain<32, SHA_COMPACT>();
    check_fchain<32, SHA_LOOPED>();
    check_fchain<32, SHA_ROLLED>();
    check_fchain<32, SHA_COMPACT | SHA_IMAD>();
    check_tlen<SHA_FULL>();
    check_tlen<SHA_COMPACT>();
    check_tlen<SHA_LOOPED>();
    check_tlen<SHA_ROLLED>();
    check_tlen<SHA_FULL | SHA_IMAD>();
    check_tlen<SHA_COMPACT | SHA_IMAD>();
    check_tl16<SHA_FULL>();
    check_tl16<SHA_LOOPED>();
    check_tl16<SHA_FULL | SHA_IMAD>();
    check_tl16<SHA_LOOPED | SHA_IMAD>();
    check_x256();
    printf("hash_test: %d checks, %d failed (SLH-DSA F chains n = 16/24/32, T_len n = 16 in one "
           "and two passes, T_k n = 16 in two, "
           "XMSS F chains and H, against SHA-256 of the whole message)\n",
           checks, failures);
    return failures ? 1 : 0;
}
