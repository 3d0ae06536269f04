/* Byte-oriented streaming hashes for the stateful schemes' key generation on the device:
 * SHA-256, SHA-512, SHAKE128 and SHAKE256 over inputs of any length and alignment (LMS puts
 * its chain values at byte 23; the public-key hash of a one-time key is over a thousand
 * bytes). Bytes gather in a block buffer (local memory); the hash state stays in registers,
 * since every loop over it is unrolled. block() is kept out of line so that each hash is
 * compiled once per kernel, not at every call site. The hot SHA-256 chains have register-only versions
 * in stateful.cu; these serve everything else. */
#ifndef HBS_GPU_STATEFUL_HASH_CUH
#define HBS_GPU_STATEFUL_HASH_CUH

#include <stdint.h>

#include "gpu/hash.cuh"

namespace hbs_gpu {

/* The hash behind a set, numbered as xmss_func (xmss/params.h); LMS uses SF_SHA256 and
 * SF_SHAKE256. */
enum { SF_SHA256 = 0, SF_SHA512 = 1, SF_SHAKE128 = 2, SF_SHAKE256 = 3 };

struct sha256_stream {
    uint32_t st[8];
    uint8_t buf[64];
    unsigned fill;
    uint64_t total;

    __device__ void init()
    {
        sha256_iv(st);
        fill = 0;
        total = 0;
    }
    __device__ __noinline__ void block()
    {
        uint32_t w[16];
#pragma unroll
        for (int i = 0; i < 16; i++)
            w[i] = (uint32_t)buf[4 * i] << 24 | (uint32_t)buf[4 * i + 1] << 16 |
                   (uint32_t)buf[4 * i + 2] << 8 | buf[4 * i + 3];
        sha256_compress(st, w);
    }
    __device__ void absorb(const uint8_t *p, unsigned len)
    {
        for (unsigned i = 0; i < len; i++) {
            buf[fill++] = p[i];
            if (fill == 64) {
                block();
                fill = 0;
            }
        }
        total += len;
    }
    /* The first outlen (<= 32) bytes of the digest. */
    __device__ void finish(uint8_t *out, unsigned outlen)
    {
        const uint64_t bits = total * 8;
        buf[fill++] = 0x80;
        if (fill > 56) {
            while (fill < 64)
                buf[fill++] = 0;
            block();
            fill = 0;
        }
        while (fill < 56)
            buf[fill++] = 0;
#pragma unroll
        for (int i = 0; i < 8; i++)
            buf[56 + i] = (uint8_t)(bits >> (56 - 8 * i));
        block();
#pragma unroll
        for (int i = 0; i < 8; i++)
#pragma unroll
            for (int b = 0; b < 4; b++)
                if ((unsigned)(4 * i + b) < outlen)
                    out[4 * i + b] = (uint8_t)(st[i] >> (24 - 8 * b));
    }
};

struct sha512_stream {
    uint64_t st[8];
    uint8_t buf[128];
    unsigned fill;
    uint64_t total;

    __device__ void init()
    {
        sha512_iv(st);
        fill = 0;
        total = 0;
    }
    __device__ __noinline__ void block()
    {
        uint64_t w[16];
#pragma unroll
        for (int i = 0; i < 16; i++) {
            uint64_t v = 0;
#pragma unroll
            for (int b = 0; b < 8; b++)
                v = v << 8 | buf[8 * i + b];
            w[i] = v;
        }
        sha512_compress(st, w);
    }
    __device__ void absorb(const uint8_t *p, unsigned len)
    {
        for (unsigned i = 0; i < len; i++) {
            buf[fill++] = p[i];
            if (fill == 128) {
                block();
                fill = 0;
            }
        }
        total += len;
    }
    /* The first outlen (<= 64) bytes of the digest. */
    __device__ void finish(uint8_t *out, unsigned outlen)
    {
        const uint64_t bits = total * 8;
        buf[fill++] = 0x80;
        if (fill > 112) {
            while (fill < 128)
                buf[fill++] = 0;
            block();
            fill = 0;
        }
        while (fill < 120)
            buf[fill++] = 0;
#pragma unroll
        for (int i = 0; i < 8; i++)
            buf[120 + i] = (uint8_t)(bits >> (56 - 8 * i));
        block();
#pragma unroll
        for (int i = 0; i < 8; i++)
#pragma unroll
            for (int b = 0; b < 8; b++)
                if ((unsigned)(8 * i + b) < outlen)
                    out[8 * i + b] = (uint8_t)(st[i] >> (56 - 8 * b));
    }
};

/* SHAKE with rate R bytes (168: SHAKE128, 136: SHAKE256). */
template <int R> struct keccak_stream {
    uint64_t s[25];
    uint8_t buf[R];
    unsigned fill;

    __device__ void init()
    {
#pragma unroll
        for (int i = 0; i < 25; i++)
            s[i] = 0;
        fill = 0;
    }
    __device__ __noinline__ void block()
    {
#pragma unroll
        for (int i = 0; i < R / 8; i++) {
            uint64_t v = 0;
#pragma unroll
            for (int b = 7; b >= 0; b--)
                v = v << 8 | buf[8 * i + b];
            s[i] ^= v;
        }
        keccak_f1600(s);
    }
    __device__ void absorb(const uint8_t *p, unsigned len)
    {
        for (unsigned i = 0; i < len; i++) {
            buf[fill++] = p[i];
            if (fill == R) {
                block();
                fill = 0;
            }
        }
    }
    /* The first outlen (<= 64) bytes of the output. */
    __device__ void finish(uint8_t *out, unsigned outlen)
    {
        buf[fill++] = 0x1f;
        while (fill < R)
            buf[fill++] = 0;
        buf[R - 1] |= 0x80;
        block();
#pragma unroll
        for (int i = 0; i < 8; i++)
#pragma unroll
            for (int b = 0; b < 8; b++)
                if ((unsigned)(8 * i + b) < outlen)
                    out[8 * i + b] = (uint8_t)(s[i] >> (8 * b));
    }
};

template <int F> struct stream_of;
template <> struct stream_of<SF_SHA256> {
    typedef sha256_stream type;
};
template <> struct stream_of<SF_SHA512> {
    typedef sha512_stream type;
};
template <> struct stream_of<SF_SHAKE128> {
    typedef keccak_stream<168> type;
};
template <> struct stream_of<SF_SHAKE256> {
    typedef keccak_stream<136> type;
};

/* out (outlen bytes) = the set's hash of m (len bytes). */
template <int F>
__device__ __forceinline__ void sf_hash(uint8_t *out, unsigned outlen, const uint8_t *m,
                                        unsigned len)
{
    typename stream_of<F>::type h;
    h.init();
    h.absorb(m, len);
    h.finish(out, outlen);
}

/* XMSS H_msg(r || root || toByte(idx, n), M) = Hash(toByte(2, padlen) || r || root ||
 * toByte(idx, n) || M), n bytes (hbs_xmss_hash_msg): batch verification and signing. */
template <int F>
__device__ void xmss_hash_msg_dev(uint8_t *out, unsigned n, unsigned padlen, const uint8_t *r,
                                  const uint8_t *root, uint64_t idx, const uint8_t *msg,
                                  uint32_t mlen)
{
    typename stream_of<F>::type h;
    uint8_t b[64];
    h.init();
    for (unsigned k = 0; k < padlen; k++)
        b[k] = 0;
    b[padlen - 1] = 2;
    h.absorb(b, padlen);
    h.absorb(r, n);
    h.absorb(root, n);
    for (unsigned k = 0; k < n; k++)
        b[k] = 0;
    for (unsigned k = 0; k < 8; k++)
        b[n - 1 - k] = (uint8_t)(idx >> (8 * k));
    h.absorb(b, n);
    h.absorb(msg, mlen);
    h.finish(out, n);
}

} // namespace hbs_gpu

#endif
