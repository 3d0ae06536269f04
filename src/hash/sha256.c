/* SHA-256 and SHA-224 (FIPS 180-4), portable C.
 *
 * The compression function is the hot spot of SLH-DSA-SHA2, so its 64 rounds are written
 * out in groups of 16 with the eight working variables renamed instead of shifted, and the
 * message schedule is kept in a 16-word ring that the compiler can hold in registers. */
#include <string.h>

#include "hbs/hbs.h"
#include "hash/hash.h"

const uint32_t hbs_sha256_K[64] __attribute__((aligned(64))) = {
    0x428a2f98u, 0x71374491u, 0xb5c0fbcfu, 0xe9b5dba5u,
    0x3956c25bu, 0x59f111f1u, 0x923f82a4u, 0xab1c5ed5u,
    0xd807aa98u, 0x12835b01u, 0x243185beu, 0x550c7dc3u,
    0x72be5d74u, 0x80deb1feu, 0x9bdc06a7u, 0xc19bf174u,
    0xe49b69c1u, 0xefbe4786u, 0x0fc19dc6u, 0x240ca1ccu,
    0x2de92c6fu, 0x4a7484aau, 0x5cb0a9dcu, 0x76f988dau,
    0x983e5152u, 0xa831c66du, 0xb00327c8u, 0xbf597fc7u,
    0xc6e00bf3u, 0xd5a79147u, 0x06ca6351u, 0x14292967u,
    0x27b70a85u, 0x2e1b2138u, 0x4d2c6dfcu, 0x53380d13u,
    0x650a7354u, 0x766a0abbu, 0x81c2c92eu, 0x92722c85u,
    0xa2bfe8a1u, 0xa81a664bu, 0xc24b8b70u, 0xc76c51a3u,
    0xd192e819u, 0xd6990624u, 0xf40e3585u, 0x106aa070u,
    0x19a4c116u, 0x1e376c08u, 0x2748774cu, 0x34b0bcb5u,
    0x391c0cb3u, 0x4ed8aa4au, 0x5b9cca4fu, 0x682e6ff3u,
    0x748f82eeu, 0x78a5636fu, 0x84c87814u, 0x8cc70208u,
    0x90befffau, 0xa4506cebu, 0xbef9a3f7u, 0xc67178f2u,
};

static const uint32_t IV256[8] = {
    0x6a09e667u, 0xbb67ae85u, 0x3c6ef372u, 0xa54ff53au,
    0x510e527fu, 0x9b05688cu, 0x1f83d9abu, 0x5be0cd19u,
};

static const uint32_t IV224[8] = {
    0xc1059ed8u, 0x367cd507u, 0x3070dd17u, 0xf70e5939u,
    0xffc00b31u, 0x68581511u, 0x64f98fa7u, 0xbefa4fa4u,
};

/* Byte-wise loads and stores: no alignment or aliasing assumptions, and compilers turn
 * them into a single load plus byte swap. */
static inline uint32_t load_be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

static inline void store_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static inline void store_be64(uint8_t *p, uint64_t v)
{
    store_be32(p, (uint32_t)(v >> 32));
    store_be32(p + 4, (uint32_t)v);
}

static inline uint32_t rotr32(uint32_t x, unsigned n) { return (x >> n) | (x << (32 - n)); }

/* One round. Instead of shifting a..h, the caller passes them rotated by one position
 * each round; only d and h change. */
static inline void sha256_round(uint32_t a, uint32_t b, uint32_t c, uint32_t *d, uint32_t e,
                                uint32_t f, uint32_t g, uint32_t *h, uint32_t kw)
{
    uint32_t s1 = rotr32(e, 6) ^ rotr32(e, 11) ^ rotr32(e, 25);
    uint32_t ch = g ^ (e & (f ^ g));
    uint32_t t1 = *h + s1 + ch + kw;
    uint32_t s0 = rotr32(a, 2) ^ rotr32(a, 13) ^ rotr32(a, 22);
    uint32_t maj = (a & b) | (c & (a | b));
    *d += t1;
    *h = t1 + s0 + maj;
}

/* Schedule word 16 positions ahead of w[i], written back into the ring. */
static inline uint32_t sha256_next_w(uint32_t w[16], unsigned i)
{
    uint32_t w15 = w[(i + 1) & 15], w2 = w[(i + 14) & 15];
    uint32_t s0 = rotr32(w15, 7) ^ rotr32(w15, 18) ^ (w15 >> 3);
    uint32_t s1 = rotr32(w2, 17) ^ rotr32(w2, 19) ^ (w2 >> 10);
    w[i] += s0 + w[(i + 9) & 15] + s1;
    return w[i];
}

/* Sixteen rounds starting at round r; the first group uses the loaded words, later groups
 * extend the schedule as they go. */
#define SHA256_ROUNDS16(W)                                                                   \
    do {                                                                                     \
        sha256_round(a, b, c, &d, e, f, g, &h, k[0] + W(0));                                 \
        sha256_round(h, a, b, &c, d, e, f, &g, k[1] + W(1));                                 \
        sha256_round(g, h, a, &b, c, d, e, &f, k[2] + W(2));                                 \
        sha256_round(f, g, h, &a, b, c, d, &e, k[3] + W(3));                                 \
        sha256_round(e, f, g, &h, a, b, c, &d, k[4] + W(4));                                 \
        sha256_round(d, e, f, &g, h, a, b, &c, k[5] + W(5));                                 \
        sha256_round(c, d, e, &f, g, h, a, &b, k[6] + W(6));                                 \
        sha256_round(b, c, d, &e, f, g, h, &a, k[7] + W(7));                                 \
        sha256_round(a, b, c, &d, e, f, g, &h, k[8] + W(8));                                 \
        sha256_round(h, a, b, &c, d, e, f, &g, k[9] + W(9));                                 \
        sha256_round(g, h, a, &b, c, d, e, &f, k[10] + W(10));                               \
        sha256_round(f, g, h, &a, b, c, d, &e, k[11] + W(11));                               \
        sha256_round(e, f, g, &h, a, b, c, &d, k[12] + W(12));                               \
        sha256_round(d, e, f, &g, h, a, b, &c, k[13] + W(13));                               \
        sha256_round(c, d, e, &f, g, h, a, &b, k[14] + W(14));                               \
        sha256_round(b, c, d, &e, f, g, h, &a, k[15] + W(15));                               \
    } while (0)
#define SHA256_W_LOADED(i) w[i]
#define SHA256_W_NEXT(i) sha256_next_w(w, i)

void hbs_sha256_compress_portable(uint32_t state[8], const uint8_t *blocks, size_t nblocks)
{
    uint32_t w[16];
    while (nblocks--) {
        uint32_t a = state[0], b = state[1], c = state[2], d = state[3];
        uint32_t e = state[4], f = state[5], g = state[6], h = state[7];
        const uint32_t *k = hbs_sha256_K;
        for (unsigned i = 0; i < 16; i++)
            w[i] = load_be32(blocks + 4 * i);
        SHA256_ROUNDS16(SHA256_W_LOADED);
        for (k = hbs_sha256_K + 16; k < hbs_sha256_K + 64; k += 16)
            SHA256_ROUNDS16(SHA256_W_NEXT);
        state[0] += a;
        state[1] += b;
        state[2] += c;
        state[3] += d;
        state[4] += e;
        state[5] += f;
        state[6] += g;
        state[7] += h;
        blocks += 64;
    }
}

void hbs_sha256_init(hbs_sha256_ctx *c)
{
    memcpy(c->h, IV256, sizeof c->h);
    c->bytes = 0;
    c->buflen = 0;
}

void hbs_sha224_init(hbs_sha256_ctx *c)
{
    memcpy(c->h, IV224, sizeof c->h);
    c->bytes = 0;
    c->buflen = 0;
}

void hbs_sha256_update(hbs_sha256_ctx *c, const uint8_t *in, size_t len)
{
    if (len == 0)
        return; /* in may be NULL */
    c->bytes += len;
    if (c->buflen) {
        size_t take = 64 - c->buflen;
        if (take > len)
            take = len;
        memcpy(c->buf + c->buflen, in, take);
        c->buflen += take;
        in += take;
        len -= take;
        if (c->buflen < 64)
            return;
        hbs_sha256_compress(c->h, c->buf, 1);
        c->buflen = 0;
    }
    if (len >= 64) {
        size_t n = len / 64;
        hbs_sha256_compress(c->h, in, n);
        in += 64 * n;
        len -= 64 * n;
    }
    if (len) {
        memcpy(c->buf, in, len);
        c->buflen = len;
    }
}

/* Pads, compresses the last block(s) and leaves the final chaining value in c->h. */
static void sha256_pad(hbs_sha256_ctx *c)
{
    size_t n = c->buflen;
    c->buf[n++] = 0x80;
    if (n > 56) {
        memset(c->buf + n, 0, 64 - n);
        hbs_sha256_compress(c->h, c->buf, 1);
        n = 0;
    }
    memset(c->buf + n, 0, 56 - n);
    store_be64(c->buf + 56, c->bytes << 3);
    hbs_sha256_compress(c->h, c->buf, 1);
}

void hbs_sha256_final(hbs_sha256_ctx *c, uint8_t out[32])
{
    sha256_pad(c);
    for (unsigned i = 0; i < 8; i++)
        store_be32(out + 4 * i, c->h[i]);
    hbs_memzero(c, sizeof *c);
}

void hbs_sha224_final(hbs_sha256_ctx *c, uint8_t out[28])
{
    sha256_pad(c);
    for (unsigned i = 0; i < 7; i++)
        store_be32(out + 4 * i, c->h[i]);
    hbs_memzero(c, sizeof *c);
}

void hbs_sha256(uint8_t out[32], const uint8_t *in, size_t len)
{
    hbs_sha256_ctx c;
    hbs_sha256_init(&c);
    hbs_sha256_update(&c, in, len);
    hbs_sha256_final(&c, out);
}
