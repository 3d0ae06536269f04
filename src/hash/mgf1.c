/* MGF1 (RFC 8017, B.2.1): out = Hash(seed || C(0)) || Hash(seed || C(1)) || ...
 * truncated to outlen, with C(i) the 4-byte big-endian counter.
 *
 * The seed is absorbed once; each counter block continues from a copy of that state.
 * (The counter wraps after 2^32 blocks; RFC 8017 forbids asking for that much.) */
#include <string.h>

#include "hbs/hbs.h"
#include "hash/hash.h"

static void be32(uint8_t out[4], uint32_t v)
{
    out[0] = (uint8_t)(v >> 24);
    out[1] = (uint8_t)(v >> 16);
    out[2] = (uint8_t)(v >> 8);
    out[3] = (uint8_t)v;
}

void hbs_mgf1_sha256(uint8_t *out, size_t outlen, const uint8_t *seed, size_t seedlen)
{
    hbs_sha256_ctx base, c;
    uint8_t ctr[4], block[32];
    hbs_sha256_init(&base);
    hbs_sha256_update(&base, seed, seedlen);
    for (uint32_t i = 0; outlen; i++) {
        size_t n = outlen < sizeof block ? outlen : sizeof block;
        c = base;
        be32(ctr, i);
        hbs_sha256_update(&c, ctr, sizeof ctr);
        hbs_sha256_final(&c, block);
        memcpy(out, block, n);
        out += n;
        outlen -= n;
    }
    hbs_memzero(&base, sizeof base);
    hbs_memzero(block, sizeof block);
}

void hbs_mgf1_sha512(uint8_t *out, size_t outlen, const uint8_t *seed, size_t seedlen)
{
    hbs_sha512_ctx base, c;
    uint8_t ctr[4], block[64];
    hbs_sha512_init(&base);
    hbs_sha512_update(&base, seed, seedlen);
    for (uint32_t i = 0; outlen; i++) {
        size_t n = outlen < sizeof block ? outlen : sizeof block;
        c = base;
        be32(ctr, i);
        hbs_sha512_update(&c, ctr, sizeof ctr);
        hbs_sha512_final(&c, block);
        memcpy(out, block, n);
        out += n;
        outlen -= n;
    }
    hbs_memzero(&base, sizeof base);
    hbs_memzero(block, sizeof block);
}
