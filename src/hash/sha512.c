/* SHA-512, SHA-384, SHA-512/224 and SHA-512/256 (FIPS 180-4), portable C.
 *
 * Same structure as sha256.c: 80 rounds in groups of 16 with renamed working variables
 * and a 16-word schedule ring. The four variants differ only in initial value and in how
 * many output bytes final() writes. */
#include <string.h>

#include "hbs/hbs.h"
#include "hash/hash.h"

const uint64_t hbs_sha512_K[80] __attribute__((aligned(64))) = {
    0x428a2f98d728ae22ULL, 0x7137449123ef65cdULL, 0xb5c0fbcfec4d3b2fULL, 0xe9b5dba58189dbbcULL,
    0x3956c25bf348b538ULL, 0x59f111f1b605d019ULL, 0x923f82a4af194f9bULL, 0xab1c5ed5da6d8118ULL,
    0xd807aa98a3030242ULL, 0x12835b0145706fbeULL, 0x243185be4ee4b28cULL, 0x550c7dc3d5ffb4e2ULL,
    0x72be5d74f27b896fULL, 0x80deb1fe3b1696b1ULL, 0x9bdc06a725c71235ULL, 0xc19bf174cf692694ULL,
    0xe49b69c19ef14ad2ULL, 0xefbe4786384f25e3ULL, 0x0fc19dc68b8cd5b5ULL, 0x240ca1cc77ac9c65ULL,
    0x2de92c6f592b0275ULL, 0x4a7484aa6ea6e483ULL, 0x5cb0a9dcbd41fbd4ULL, 0x76f988da831153b5ULL,
    0x983e5152ee66dfabULL, 0xa831c66d2db43210ULL, 0xb00327c898fb213fULL, 0xbf597fc7beef0ee4ULL,
    0xc6e00bf33da88fc2ULL, 0xd5a79147930aa725ULL, 0x06ca6351e003826fULL, 0x142929670a0e6e70ULL,
    0x27b70a8546d22ffcULL, 0x2e1b21385c26c926ULL, 0x4d2c6dfc5ac42aedULL, 0x53380d139d95b3dfULL,
    0x650a73548baf63deULL, 0x766a0abb3c77b2a8ULL, 0x81c2c92e47edaee6ULL, 0x92722c851482353bULL,
    0xa2bfe8a14cf10364ULL, 0xa81a664bbc423001ULL, 0xc24b8b70d0f89791ULL, 0xc76c51a30654be30ULL,
    0xd192e819d6ef5218ULL, 0xd69906245565a910ULL, 0xf40e35855771202aULL, 0x106aa07032bbd1b8ULL,
    0x19a4c116b8d2d0c8ULL, 0x1e376c085141ab53ULL, 0x2748774cdf8eeb99ULL, 0x34b0bcb5e19b48a8ULL,
    0x391c0cb3c5c95a63ULL, 0x4ed8aa4ae3418acbULL, 0x5b9cca4f7763e373ULL, 0x682e6ff3d6b2b8a3ULL,
    0x748f82ee5defb2fcULL, 0x78a5636f43172f60ULL, 0x84c87814a1f0ab72ULL, 0x8cc702081a6439ecULL,
    0x90befffa23631e28ULL, 0xa4506cebde82bde9ULL, 0xbef9a3f7b2c67915ULL, 0xc67178f2e372532bULL,
    0xca273eceea26619cULL, 0xd186b8c721c0c207ULL, 0xeada7dd6cde0eb1eULL, 0xf57d4f7fee6ed178ULL,
    0x06f067aa72176fbaULL, 0x0a637dc5a2c898a6ULL, 0x113f9804bef90daeULL, 0x1b710b35131c471bULL,
    0x28db77f523047d84ULL, 0x32caab7b40c72493ULL, 0x3c9ebe0a15c9bebcULL, 0x431d67c49c100d4cULL,
    0x4cc5d4becb3e42b6ULL, 0x597f299cfc657e2aULL, 0x5fcb6fab3ad6faecULL, 0x6c44198c4a475817ULL,
};

static const uint64_t IV512[8] = {
    0x6a09e667f3bcc908ULL, 0xbb67ae8584caa73bULL, 0x3c6ef372fe94f82bULL, 0xa54ff53a5f1d36f1ULL,
    0x510e527fade682d1ULL, 0x9b05688c2b3e6c1fULL, 0x1f83d9abfb41bd6bULL, 0x5be0cd19137e2179ULL,
};

static const uint64_t IV384[8] = {
    0xcbbb9d5dc1059ed8ULL, 0x629a292a367cd507ULL, 0x9159015a3070dd17ULL, 0x152fecd8f70e5939ULL,
    0x67332667ffc00b31ULL, 0x8eb44a8768581511ULL, 0xdb0c2e0d64f98fa7ULL, 0x47b5481dbefa4fa4ULL,
};

static const uint64_t IV512_224[8] = {
    0x8c3d37c819544da2ULL, 0x73e1996689dcd4d6ULL, 0x1dfab7ae32ff9c82ULL, 0x679dd514582f9fcfULL,
    0x0f6d2b697bd44da8ULL, 0x77e36f7304c48942ULL, 0x3f9d85a86a1d36c8ULL, 0x1112e6ad91d692a1ULL,
};

static const uint64_t IV512_256[8] = {
    0x22312194fc2bf72cULL, 0x9f555fa3c84c64c2ULL, 0x2393b86b6f53b151ULL, 0x963877195940eabdULL,
    0x96283ee2a88effe3ULL, 0xbe5e1e2553863992ULL, 0x2b0199fc2c85b8aaULL, 0x0eb72ddc81c52ca2ULL,
};

static inline uint64_t load_be64(const uint8_t *p)
{
    return (uint64_t)p[0] << 56 | (uint64_t)p[1] << 48 | (uint64_t)p[2] << 40 |
           (uint64_t)p[3] << 32 | (uint64_t)p[4] << 24 | (uint64_t)p[5] << 16 |
           (uint64_t)p[6] << 8 | (uint64_t)p[7];
}

static inline void store_be64(uint8_t *p, uint64_t v)
{
    for (unsigned i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (56 - 8 * i));
}

static inline uint64_t rotr64(uint64_t x, unsigned n) { return (x >> n) | (x << (64 - n)); }

static inline void sha512_round(uint64_t a, uint64_t b, uint64_t c, uint64_t *d, uint64_t e,
                                uint64_t f, uint64_t g, uint64_t *h, uint64_t kw)
{
    uint64_t s1 = rotr64(e, 14) ^ rotr64(e, 18) ^ rotr64(e, 41);
    uint64_t ch = g ^ (e & (f ^ g));
    uint64_t t1 = *h + s1 + ch + kw;
    uint64_t s0 = rotr64(a, 28) ^ rotr64(a, 34) ^ rotr64(a, 39);
    uint64_t maj = (a & b) | (c & (a | b));
    *d += t1;
    *h = t1 + s0 + maj;
}

static inline uint64_t sha512_next_w(uint64_t w[16], unsigned i)
{
    uint64_t w15 = w[(i + 1) & 15], w2 = w[(i + 14) & 15];
    uint64_t s0 = rotr64(w15, 1) ^ rotr64(w15, 8) ^ (w15 >> 7);
    uint64_t s1 = rotr64(w2, 19) ^ rotr64(w2, 61) ^ (w2 >> 6);
    w[i] += s0 + w[(i + 9) & 15] + s1;
    return w[i];
}

#define SHA512_ROUNDS16(W)                                                                   \
    do {                                                                                     \
        sha512_round(a, b, c, &d, e, f, g, &h, k[0] + W(0));                                 \
        sha512_round(h, a, b, &c, d, e, f, &g, k[1] + W(1));                                 \
        sha512_round(g, h, a, &b, c, d, e, &f, k[2] + W(2));                                 \
        sha512_round(f, g, h, &a, b, c, d, &e, k[3] + W(3));                                 \
        sha512_round(e, f, g, &h, a, b, c, &d, k[4] + W(4));                                 \
        sha512_round(d, e, f, &g, h, a, b, &c, k[5] + W(5));                                 \
        sha512_round(c, d, e, &f, g, h, a, &b, k[6] + W(6));                                 \
        sha512_round(b, c, d, &e, f, g, h, &a, k[7] + W(7));                                 \
        sha512_round(a, b, c, &d, e, f, g, &h, k[8] + W(8));                                 \
        sha512_round(h, a, b, &c, d, e, f, &g, k[9] + W(9));                                 \
        sha512_round(g, h, a, &b, c, d, e, &f, k[10] + W(10));                               \
        sha512_round(f, g, h, &a, b, c, d, &e, k[11] + W(11));                               \
        sha512_round(e, f, g, &h, a, b, c, &d, k[12] + W(12));                               \
        sha512_round(d, e, f, &g, h, a, b, &c, k[13] + W(13));                               \
        sha512_round(c, d, e, &f, g, h, a, &b, k[14] + W(14));                               \
        sha512_round(b, c, d, &e, f, g, h, &a, k[15] + W(15));                               \
    } while (0)
#define SHA512_W_LOADED(i) w[i]
#define SHA512_W_NEXT(i) sha512_next_w(w, i)

void hbs_sha512_compress_portable(uint64_t state[8], const uint8_t *blocks, size_t nblocks)
{
    uint64_t w[16];
    while (nblocks--) {
        uint64_t a = state[0], b = state[1], c = state[2], d = state[3];
        uint64_t e = state[4], f = state[5], g = state[6], h = state[7];
        const uint64_t *k = hbs_sha512_K;
        for (unsigned i = 0; i < 16; i++)
            w[i] = load_be64(blocks + 8 * i);
        SHA512_ROUNDS16(SHA512_W_LOADED);
        for (k = hbs_sha512_K + 16; k < hbs_sha512_K + 80; k += 16)
            SHA512_ROUNDS16(SHA512_W_NEXT);
        state[0] += a;
        state[1] += b;
        state[2] += c;
        state[3] += d;
        state[4] += e;
        state[5] += f;
        state[6] += g;
        state[7] += h;
        blocks += 128;
    }
}

static void sha512_start(hbs_sha512_ctx *c, const uint64_t iv[8], size_t outlen)
{
    memcpy(c->h, iv, sizeof c->h);
    c->bytes = 0;
    c->buflen = 0;
    c->outlen = outlen;
}

void hbs_sha512_init(hbs_sha512_ctx *c) { sha512_start(c, IV512, 64); }
void hbs_sha384_init(hbs_sha512_ctx *c) { sha512_start(c, IV384, 48); }
void hbs_sha512_224_init(hbs_sha512_ctx *c) { sha512_start(c, IV512_224, 28); }
void hbs_sha512_256_init(hbs_sha512_ctx *c) { sha512_start(c, IV512_256, 32); }

void hbs_sha512_update(hbs_sha512_ctx *c, const uint8_t *in, size_t len)
{
    if (len == 0)
        return; /* in may be NULL */
    c->bytes += len;
    if (c->buflen) {
        size_t take = 128 - c->buflen;
        if (take > len)
            take = len;
        memcpy(c->buf + c->buflen, in, take);
        c->buflen += take;
        in += take;
        len -= take;
        if (c->buflen < 128)
            return;
        hbs_sha512_compress_portable(c->h, c->buf, 1);
        c->buflen = 0;
    }
    if (len >= 128) {
        size_t n = len / 128;
        hbs_sha512_compress_portable(c->h, in, n);
        in += 128 * n;
        len -= 128 * n;
    }
    if (len) {
        memcpy(c->buf, in, len);
        c->buflen = len;
    }
}

void hbs_sha512_final(hbs_sha512_ctx *c, uint8_t *out)
{
    uint8_t full[64];
    size_t n = c->buflen;
    c->buf[n++] = 0x80;
    if (n > 112) {
        memset(c->buf + n, 0, 128 - n);
        hbs_sha512_compress_portable(c->h, c->buf, 1);
        n = 0;
    }
    memset(c->buf + n, 0, 112 - n);
    /* The length field is 128 bits; a 64-bit byte count fills 67 of them. */
    store_be64(c->buf + 112, c->bytes >> 61);
    store_be64(c->buf + 120, c->bytes << 3);
    hbs_sha512_compress_portable(c->h, c->buf, 1);
    for (unsigned i = 0; i < 8; i++)
        store_be64(full + 8 * i, c->h[i]);
    memcpy(out, full, c->outlen <= 64 ? c->outlen : 64);
    hbs_memzero(full, sizeof full);
    hbs_memzero(c, sizeof *c);
}

void hbs_sha512(uint8_t out[64], const uint8_t *in, size_t len)
{
    hbs_sha512_ctx c;
    hbs_sha512_init(&c);
    hbs_sha512_update(&c, in, len);
    hbs_sha512_final(&c, out);
}
