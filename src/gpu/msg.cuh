/* Message hashing on the device: H_msg and PRF_msg over M' of any length (FIPS 205,
 * section 11). One thread hashes one message; inputs are bytes at any alignment, so these
 * streaming hashers buffer bytes (they run once per signature, not in the trees). */
#ifndef HBS_GPU_MSG_CUH
#define HBS_GPU_MSG_CUH

#include "gpu/hash.cuh"

namespace hbs_gpu {

struct sha256_stream {
    uint32_t st[8];
    uint8_t buf[64];
    uint32_t pos;
    uint64_t total;

    __device__ void init() { sha256_iv(st); pos = 0; total = 0; }
    __device__ void block()
    {
        uint32_t w[16];
        for (int i = 0; i < 16; i++)
            w[i] = (uint32_t)buf[4 * i] << 24 | (uint32_t)buf[4 * i + 1] << 16 |
                   (uint32_t)buf[4 * i + 2] << 8 | buf[4 * i + 3];
        sha256_compress(st, w);
        pos = 0;
    }
    __device__ void update(const uint8_t *p, size_t len)
    {
        total += len;
        for (size_t i = 0; i < len; i++) {
            buf[pos++] = p[i];
            if (pos == 64)
                block();
        }
    }
    __device__ void final(uint8_t out[32])
    {
        uint64_t bits = total * 8;
        buf[pos++] = 0x80;
        if (pos > 56) {
            while (pos < 64)
                buf[pos++] = 0;
            block();
        }
        while (pos < 56)
            buf[pos++] = 0;
        for (int i = 0; i < 8; i++)
            buf[56 + i] = (uint8_t)(bits >> (56 - 8 * i));
        block();
        for (int i = 0; i < 32; i++)
            out[i] = (uint8_t)(st[i / 4] >> (24 - 8 * (i % 4)));
    }
};

struct sha512_stream {
    uint64_t st[8];
    uint8_t buf[128];
    uint32_t pos;
    uint64_t total;

    __device__ void init() { sha512_iv(st); pos = 0; total = 0; }
    __device__ void block()
    {
        uint64_t w[16];
        for (int i = 0; i < 16; i++) {
            uint64_t v = 0;
            for (int j = 0; j < 8; j++)
                v = v << 8 | buf[8 * i + j];
            w[i] = v;
        }
        sha512_compress(st, w);
        pos = 0;
    }
    __device__ void update(const uint8_t *p, size_t len)
    {
        total += len;
        for (size_t i = 0; i < len; i++) {
            buf[pos++] = p[i];
            if (pos == 128)
                block();
        }
    }
    __device__ void final(uint8_t out[64])
    {
        uint64_t bits = total * 8;
        buf[pos++] = 0x80;
        if (pos > 112) {
            while (pos < 128)
                buf[pos++] = 0;
            block();
        }
        while (pos < 120)
            buf[pos++] = 0;
        for (int i = 0; i < 8; i++)
            buf[120 + i] = (uint8_t)(bits >> (56 - 8 * i));
        block();
        for (int i = 0; i < 64; i++)
            out[i] = (uint8_t)(st[i / 8] >> (56 - 8 * (i % 8)));
    }
};

struct shake256_stream {
    uint64_t s[25];
    uint32_t pos;

    __device__ void init()
    {
        for (int i = 0; i < 25; i++)
            s[i] = 0;
        pos = 0;
    }
    __device__ void update(const uint8_t *p, size_t len)
    {
        for (size_t i = 0; i < len; i++) {
            s[pos / 8] ^= (uint64_t)p[i] << (8 * (pos % 8));
            if (++pos == 136) {
                keccak_f1600(s);
                pos = 0;
            }
        }
    }
    __device__ void finish()
    {
        s[pos / 8] ^= (uint64_t)0x1f << (8 * (pos % 8));
        s[16] ^= 0x8000000000000000ull;
        keccak_f1600(s);
        pos = 0;
    }
    __device__ void squeeze(uint8_t *out, size_t len)
    {
        for (size_t i = 0; i < len; i++) {
            if (pos == 136) {
                keccak_f1600(s);
                pos = 0;
            }
            out[i] = (uint8_t)(s[pos / 8] >> (8 * (pos % 8)));
            pos++;
        }
    }
};

/* PRF_msg(SK.prf, opt_rand, M') into out (n bytes). */
__device__ inline void prf_msg(int shake, int n, uint8_t *out, const uint8_t *sk_prf,
                               const uint8_t *opt_rand, const uint8_t *m, size_t mlen)
{
    if (shake) {
        shake256_stream h;
        h.init();
        h.update(sk_prf, n);
        h.update(opt_rand, n);
        h.update(m, mlen);
        h.finish();
        h.squeeze(out, n);
        return;
    }
    uint8_t pad[128], mac[64];
    if (n == 16) {
        sha256_stream h;
        for (int i = 0; i < 64; i++)
            pad[i] = (uint8_t)((i < n ? sk_prf[i] : 0) ^ 0x36);
        h.init();
        h.update(pad, 64);
        h.update(opt_rand, n);
        h.update(m, mlen);
        h.final(mac);
        for (int i = 0; i < 64; i++)
            pad[i] = (uint8_t)((i < n ? sk_prf[i] : 0) ^ 0x5c);
        h.init();
        h.update(pad, 64);
        h.update(mac, 32);
        h.final(mac);
    } else {
        sha512_stream h;
        for (int i = 0; i < 128; i++)
            pad[i] = (uint8_t)((i < n ? sk_prf[i] : 0) ^ 0x36);
        h.init();
        h.update(pad, 128);
        h.update(opt_rand, n);
        h.update(m, mlen);
        h.final(mac);
        for (int i = 0; i < 128; i++)
            pad[i] = (uint8_t)((i < n ? sk_prf[i] : 0) ^ 0x5c);
        h.init();
        h.update(pad, 128);
        h.update(mac, 64);
        h.final(mac);
    }
    for (int i = 0; i < n; i++)
        out[i] = mac[i];
}

/* H_msg(R, PK.seed, PK.root, M') into out (m bytes). pk = PK.seed || PK.root. */
__device__ inline void h_msg(int shake, int n, int m, uint8_t *out, const uint8_t *r,
                             const uint8_t *pk, const uint8_t *msg, size_t mlen)
{
    if (shake) {
        shake256_stream h;
        h.init();
        h.update(r, n);
        h.update(pk, 2 * n);
        h.update(msg, mlen);
        h.finish();
        h.squeeze(out, m);
        return;
    }
    /* MGF1(R || PK.seed || SHA-x(R || PK.seed || PK.root || M'), m) */
    uint8_t seed[2 * 32 + 64 + 4], blockout[64]; /* R || PK.seed || digest || counter */
    const int hl = n == 16 ? 32 : 64;
    for (int i = 0; i < n; i++) {
        seed[i] = r[i];
        seed[n + i] = pk[i];
    }
    if (n == 16) {
        sha256_stream h;
        h.init();
        h.update(r, n);
        h.update(pk, 2 * n);
        h.update(msg, mlen);
        h.final(seed + 2 * n);
    } else {
        sha512_stream h;
        h.init();
        h.update(r, n);
        h.update(pk, 2 * n);
        h.update(msg, mlen);
        h.final(seed + 2 * n);
    }
    const int slen = 2 * n + hl;
    for (uint32_t ctr = 0, done = 0; done < (uint32_t)m; ctr++) {
        seed[slen] = (uint8_t)(ctr >> 24);
        seed[slen + 1] = (uint8_t)(ctr >> 16);
        seed[slen + 2] = (uint8_t)(ctr >> 8);
        seed[slen + 3] = (uint8_t)ctr;
        if (n == 16) {
            sha256_stream h;
            h.init();
            h.update(seed, slen + 4);
            h.final(blockout);
        } else {
            sha512_stream h;
            h.init();
            h.update(seed, slen + 4);
            h.final(blockout);
        }
        for (int i = 0; i < hl && done < (uint32_t)m; i++)
            out[done++] = blockout[i];
    }
}

} // namespace hbs_gpu

#endif
