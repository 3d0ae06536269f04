/* The keyed hash functions of RFC 8391 section 5.1 / SP 800-208 section 5, in batches:
 *   F(KEY, M)     = Hash(toByte(0, pad) || KEY || M)
 *   H(KEY, M)     = Hash(toByte(1, pad) || KEY || M)
 *   H_msg(KEY, M) = Hash(toByte(2, pad) || KEY || M)
 *   PRF(KEY, M)   = Hash(toByte(3, pad) || KEY || M)
 *   PRF_keygen    = Hash(toByte(4, pad) || SK_SEED || PUB_SEED || ADRS)
 * and the randomised tree hashes (RAND_HASH) built on them, whose keys and bitmasks are PRF
 * outputs of PUB_SEED and the address. Every call hashes a whole batch: the PRFs of all
 * jobs, then F or H of all jobs. */
#include <string.h>

#include "hbs/hbs.h"
#include "xmss/internal.h"

/* Jobs per inner batch: fills the widest backend several times over and keeps the stack
 * buffers below 64 KB. */
#define THASH_CHUNK 64
#define PRF_MAX_IN (XMSS_MAX_N + XMSS_MAX_N + XMSS_MAX_N + XMSS_ADRS_BYTES)

static void to_byte(uint8_t *out, unsigned x, size_t padlen)
{
    memset(out, 0, padlen - 1);
    out[padlen - 1] = (uint8_t)x;
}

void hbs_xmss_ctx_init(xmss_ctx *c, const hbs_xmss_params *p, const uint8_t *pub_seed,
                       const uint8_t *sk_seed)
{
    uint8_t block[HBS_SHA512_BLOCK];
    memset(c, 0, sizeof *c);
    c->p = p;
    memcpy(c->pub_seed, pub_seed, p->n);
    if (sk_seed)
        memcpy(c->sk_seed, sk_seed, p->n);
    c->midstate = (p->func == XMSS_FUNC_SHA256 && p->n == 32) ||
                  (p->func == XMSS_FUNC_SHA512 && p->n == 64);
    if (!c->midstate)
        return;
    to_byte(block, 3, p->padlen);
    memcpy(block + p->padlen, pub_seed, p->n);
    if (p->func == XMSS_FUNC_SHA256) {
        hbs_sha256_init(&c->prf256);
        hbs_sha256_update(&c->prf256, block, HBS_SHA256_BLOCK);
    } else {
        hbs_sha512_init(&c->prf512);
        hbs_sha512_update(&c->prf512, block, HBS_SHA512_BLOCK);
    }
    if (sk_seed) {
        to_byte(block, 4, p->padlen);
        memcpy(block + p->padlen, sk_seed, p->n);
        if (p->func == XMSS_FUNC_SHA256) {
            hbs_sha256_init(&c->keygen256);
            hbs_sha256_update(&c->keygen256, block, HBS_SHA256_BLOCK);
        } else {
            hbs_sha512_init(&c->keygen512);
            hbs_sha512_update(&c->keygen512, block, HBS_SHA512_BLOCK);
        }
    }
    hbs_memzero(block, sizeof block);
}

void hbs_xmss_ctx_wipe(xmss_ctx *c) { hbs_memzero(c, sizeof *c); }

/* count hashes of inlen-byte messages, n bytes out each; mid is a midstate of the set's
 * SHA-2 function or NULL. */
static void hash_many(const xmss_ctx *c, uint8_t *out, const void *mid, const uint8_t *in,
                      size_t inlen, size_t count)
{
    const size_t n = c->p->n;
    switch (c->p->func) {
    case XMSS_FUNC_SHA256:
        if (n == 32) {
            hbs_sha256_many(out, mid, in, inlen, count);
        } else {
            /* SHA-256/192: full digests, then the first n bytes of each */
            uint8_t dig[THASH_CHUNK * 32];
            while (count) {
                size_t m = count < THASH_CHUNK ? count : THASH_CHUNK;
                hbs_sha256_many(dig, mid, in, inlen, m);
                for (size_t i = 0; i < m; i++)
                    memcpy(out + i * n, dig + i * 32, n);
                out += m * n;
                in += m * inlen;
                count -= m;
            }
            hbs_memzero(dig, sizeof dig);
        }
        break;
    case XMSS_FUNC_SHA512:
        hbs_sha512_many(out, mid, in, inlen, count);
        break;
    case XMSS_FUNC_SHAKE128:
        hbs_shake128_many(out, n, in, inlen, count);
        break;
    default:
        hbs_shake256_many(out, n, in, inlen, count);
        break;
    }
}

/* PRF(SEED, ADRS) (keygen = 0) or PRF_keygen(SK_SEED, PUB_SEED || ADRS) (keygen = 1) for
 * count <= 3 * THASH_CHUNK addresses. */
static void prf_batch(const xmss_ctx *c, uint8_t *out, const xmss_adrs *adrs, size_t count,
                      int keygen)
{
    const hbs_xmss_params *p = c->p;
    const size_t n = p->n;
    uint8_t buf[3 * THASH_CHUNK * PRF_MAX_IN];
    const void *mid = NULL;
    size_t pre = 0, jlen;

    if (count == 0)
        return;
    if (c->midstate) {
        if (p->func == XMSS_FUNC_SHA256)
            mid = keygen ? (const void *)&c->keygen256 : (const void *)&c->prf256;
        else
            mid = keygen ? (const void *)&c->keygen512 : (const void *)&c->prf512;
    } else {
        pre = p->padlen + n;
    }
    jlen = pre + (keygen ? n : 0) + XMSS_ADRS_BYTES;
    for (size_t i = 0; i < count; i++) {
        uint8_t *j = buf + i * jlen;
        if (pre) {
            to_byte(j, keygen ? 4 : 3, p->padlen);
            memcpy(j + p->padlen, keygen ? c->sk_seed : c->pub_seed, n);
        }
        if (keygen)
            memcpy(j + pre, c->pub_seed, n);
        memcpy(j + jlen - XMSS_ADRS_BYTES, adrs[i].b, XMSS_ADRS_BYTES);
    }
    hash_many(c, out, mid, buf, jlen, count);
    if (keygen)
        hbs_memzero(buf, count * jlen);
}

void hbs_xmss_prf_keygen_many(const xmss_ctx *c, uint8_t *out, const xmss_adrs *adrs,
                              size_t count)
{
    while (count) {
        size_t m = count < 3 * THASH_CHUNK ? count : 3 * THASH_CHUNK;
        prf_batch(c, out, adrs, m, 1);
        out += m * c->p->n;
        adrs += m;
        count -= m;
    }
}

/* RAND_HASH over `parts` (1 for F, 2 for H) n-byte inputs per job: key = PRF(ADRS, km 0),
 * bitmask j = PRF(ADRS, km j + 1). */
static void rand_hash(const xmss_ctx *c, uint8_t *out, const uint8_t *in, const xmss_adrs *adrs,
                      size_t count, unsigned parts)
{
    const hbs_xmss_params *p = c->p;
    const size_t n = p->n, per = parts + 1, pad = p->padlen, jlen = pad + n + parts * n;
    const size_t m0 = count < THASH_CHUNK ? count : THASH_CHUNK;
    xmss_adrs pa[3 * THASH_CHUNK];
    uint8_t keys[3 * THASH_CHUNK * XMSS_MAX_N];
    uint8_t jobs[THASH_CHUNK * (XMSS_MAX_N * 4)];

    /* the domain prefix is the same in every job and every chunk: written once */
    for (size_t i = 0; i < m0; i++)
        to_byte(jobs + i * jlen, parts == 1 ? 0 : 1, pad);
    while (count) {
        size_t m = count < THASH_CHUNK ? count : THASH_CHUNK;
        for (size_t i = 0; i < m; i++)
            for (unsigned k = 0; k < per; k++) {
                pa[i * per + k] = adrs[i];
                xmss_adrs_set(&pa[i * per + k], 7, k); /* keyAndMask */
            }
        prf_batch(c, keys, pa, m * per, 0);
        for (size_t i = 0; i < m; i++) {
            uint8_t *j = jobs + i * jlen + pad;
            const uint8_t *k = keys + i * per * n, *v = in + i * parts * n;
            memcpy(j, k, n);
            /* n is a multiple of 8: XOR in words */
            for (size_t b = 0; b < parts * n; b += 8) {
                uint64_t x, y;
                memcpy(&x, v + b, 8);
                memcpy(&y, k + n + b, 8);
                x ^= y;
                memcpy(j + n + b, &x, 8);
            }
        }
        hash_many(c, out, NULL, jobs, jlen, m);
        out += m * n;
        in += m * parts * n;
        adrs += m;
        count -= m;
    }
    /* chain values of a signer are secret until published */
    hbs_memzero(jobs, m0 * jlen);
}

void hbs_xmss_thash_f_many(const xmss_ctx *c, uint8_t *out, const uint8_t *in,
                           const xmss_adrs *adrs, size_t count)
{
    rand_hash(c, out, in, adrs, count, 1);
}

void hbs_xmss_thash_h_many(const xmss_ctx *c, uint8_t *out, const uint8_t *in,
                           const xmss_adrs *adrs, size_t count)
{
    rand_hash(c, out, in, adrs, count, 2);
}

void hbs_xmss_prf_r(const xmss_ctx *c, uint8_t *r, const uint8_t *sk_prf, uint64_t idx)
{
    const hbs_xmss_params *p = c->p;
    uint8_t buf[XMSS_MAX_N * 2 + 32];
    size_t len = p->padlen + p->n + 32;
    to_byte(buf, 3, p->padlen);
    memcpy(buf + p->padlen, sk_prf, p->n);
    memset(buf + p->padlen + p->n, 0, 24);
    xmss_put32(buf + len - 8, (uint32_t)(idx >> 32));
    xmss_put32(buf + len - 4, (uint32_t)idx);
    hash_many(c, r, NULL, buf, len, 1);
    hbs_memzero(buf, sizeof buf);
}

void hbs_xmss_hash_msg(const xmss_ctx *c, uint8_t *out, const uint8_t *r, const uint8_t *root,
                       uint64_t idx, const uint8_t *msg, size_t msglen)
{
    const hbs_xmss_params *p = c->p;
    const size_t n = p->n;
    uint8_t head[XMSS_MAX_N * 4];
    size_t hlen = p->padlen + 3 * n;
    to_byte(head, 2, p->padlen);
    memcpy(head + p->padlen, r, n);
    memcpy(head + p->padlen + n, root, n);
    memset(head + p->padlen + 2 * n, 0, n - 8);
    xmss_put32(head + hlen - 8, (uint32_t)(idx >> 32));
    xmss_put32(head + hlen - 4, (uint32_t)idx);
    if (p->func == XMSS_FUNC_SHA256) {
        hbs_sha256_ctx s;
        uint8_t dig[32];
        hbs_sha256_init(&s);
        hbs_sha256_update(&s, head, hlen);
        if (msglen)
            hbs_sha256_update(&s, msg, msglen);
        hbs_sha256_final(&s, dig);
        memcpy(out, dig, n);
    } else if (p->func == XMSS_FUNC_SHA512) {
        hbs_sha512_ctx s;
        hbs_sha512_init(&s);
        hbs_sha512_update(&s, head, hlen);
        if (msglen)
            hbs_sha512_update(&s, msg, msglen);
        hbs_sha512_final(&s, out);
    } else {
        hbs_keccak_ctx k;
        if (p->func == XMSS_FUNC_SHAKE128)
            hbs_shake128_init(&k);
        else
            hbs_shake256_init(&k);
        hbs_keccak_absorb(&k, head, hlen);
        if (msglen)
            hbs_keccak_absorb(&k, msg, msglen);
        hbs_keccak_squeeze(&k, out, n);
    }
}
