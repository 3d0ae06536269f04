/* HMAC-SHA256 and HMAC-SHA512 (RFC 2104, FIPS 198-1).
 *
 * init() absorbs the padded key into both the inner and the outer hash, so the context
 * holds two midstates and never the key itself. */
#include <string.h>

#include "hbs/hbs.h"
#include "hash/hash.h"

void hbs_hmac_sha256_init(hbs_hmac_sha256_ctx *c, const uint8_t *key, size_t keylen)
{
    uint8_t k[HBS_SHA256_BLOCK];
    memset(k, 0, sizeof k);
    if (keylen > HBS_SHA256_BLOCK)
        hbs_sha256(k, key, keylen);
    else if (keylen)
        memcpy(k, key, keylen);
    for (size_t i = 0; i < sizeof k; i++)
        k[i] ^= 0x36;
    hbs_sha256_init(&c->inner);
    hbs_sha256_update(&c->inner, k, sizeof k);
    for (size_t i = 0; i < sizeof k; i++)
        k[i] ^= 0x36 ^ 0x5c;
    hbs_sha256_init(&c->outer);
    hbs_sha256_update(&c->outer, k, sizeof k);
    hbs_memzero(k, sizeof k);
}

void hbs_hmac_sha256_update(hbs_hmac_sha256_ctx *c, const uint8_t *in, size_t len)
{
    hbs_sha256_update(&c->inner, in, len);
}

void hbs_hmac_sha256_final(hbs_hmac_sha256_ctx *c, uint8_t out[32])
{
    uint8_t ih[32];
    hbs_sha256_final(&c->inner, ih);
    hbs_sha256_update(&c->outer, ih, sizeof ih);
    hbs_sha256_final(&c->outer, out);
    hbs_memzero(ih, sizeof ih);
    hbs_memzero(c, sizeof *c);
}

void hbs_hmac_sha512_init(hbs_hmac_sha512_ctx *c, const uint8_t *key, size_t keylen)
{
    uint8_t k[HBS_SHA512_BLOCK];
    memset(k, 0, sizeof k);
    if (keylen > HBS_SHA512_BLOCK)
        hbs_sha512(k, key, keylen);
    else if (keylen)
        memcpy(k, key, keylen);
    for (size_t i = 0; i < sizeof k; i++)
        k[i] ^= 0x36;
    hbs_sha512_init(&c->inner);
    hbs_sha512_update(&c->inner, k, sizeof k);
    for (size_t i = 0; i < sizeof k; i++)
        k[i] ^= 0x36 ^ 0x5c;
    hbs_sha512_init(&c->outer);
    hbs_sha512_update(&c->outer, k, sizeof k);
    hbs_memzero(k, sizeof k);
}

void hbs_hmac_sha512_update(hbs_hmac_sha512_ctx *c, const uint8_t *in, size_t len)
{
    hbs_sha512_update(&c->inner, in, len);
}

void hbs_hmac_sha512_final(hbs_hmac_sha512_ctx *c, uint8_t out[64])
{
    uint8_t ih[64];
    hbs_sha512_final(&c->inner, ih);
    hbs_sha512_update(&c->outer, ih, sizeof ih);
    hbs_sha512_final(&c->outer, out);
    hbs_memzero(ih, sizeof ih);
    hbs_memzero(c, sizeof *c);
}
