#include "slhdsa/thash.h"

#include <string.h>

#include "hbs/hbs.h"

/* Inputs are gathered into a bounded stack buffer and handed to the hash layer in chunks:
 * big enough to fill any SIMD backend, small enough to stay in L1. */
#define THASH_BUF 16384
#define THASH_MAX_CHUNK 64

void hbs_slhdsa_ctx_init(slhdsa_ctx *c, const hbs_slhdsa_params *p, const uint8_t *pk_seed,
                         const uint8_t *sk_seed)
{
    uint8_t block[HBS_SHA512_BLOCK];
    memset(c, 0, sizeof *c);
    c->p = p;
    memcpy(c->pk_seed, pk_seed, p->n);
    if (sk_seed)
        memcpy(c->sk_seed, sk_seed, p->n);
    if (p->family != SLHDSA_FAMILY_SHA2)
        return;
    /* The first block of every F/H/T/PRF input is PK.seed padded with zeros: hash it once. */
    memset(block, 0, sizeof block);
    memcpy(block, pk_seed, p->n);
    hbs_sha256_init(&c->sha256_seeded);
    hbs_sha256_update(&c->sha256_seeded, block, HBS_SHA256_BLOCK);
    if (p->n > 16) {
        hbs_sha512_init(&c->sha512_seeded);
        hbs_sha512_update(&c->sha512_seeded, block, HBS_SHA512_BLOCK);
    }
}

void hbs_slhdsa_ctx_wipe(slhdsa_ctx *c) { hbs_memzero(c, sizeof *c); }

/* Copies one value of n bytes (n = 16, 24, 32, or 48 or 64 for H's two values; any other
 * length too): fixed sizes become a few register moves, where a call into memcpy per job
 * would cost more than the copy (the loops below copy thousands per signature). */
static inline void copy_value(uint8_t *dst, const uint8_t *src, size_t n)
{
    if (n == 16)
        memcpy(dst, src, 16);
    else if (n == 24)
        memcpy(dst, src, 24);
    else if (n == 32)
        memcpy(dst, src, 32);
    else if (n == 48)
        memcpy(dst, src, 48);
    else if (n == 64)
        memcpy(dst, src, 64);
    else
        memcpy(dst, src, n);
}

/* in_stride is 0 for PRF, whose input (SK.seed) is the same for every job. */
static void thash_sha2(const slhdsa_ctx *c, uint8_t *out, const uint8_t *in, size_t in_stride,
                       size_t inbytes, size_t l, const slhdsa_adrs *adrs, size_t count)
{
    const size_t n = c->p->n;
    /* FIPS 205 section 11.2: F and PRF always use SHA-256; H and T_l use SHA-512 for n > 16. */
    const int wide = l > 1 && n > 16;
    const size_t dlen = wide ? 64 : 32;
    const size_t jlen = SLHDSA_ADRSC_BYTES + inbytes;
    size_t chunk = THASH_BUF / jlen;
    uint8_t buf[THASH_BUF];
    uint8_t dig[THASH_MAX_CHUNK * 64];
    size_t used = 0; /* most jobs in one chunk */

    if (chunk > THASH_MAX_CHUNK)
        chunk = THASH_MAX_CHUNK;
    while (count) {
        size_t todo = count < chunk ? count : chunk;
        for (size_t i = 0; i < todo; i++) {
            adrs_compress(buf + i * jlen, &adrs[i]);
            copy_value(buf + i * jlen + SLHDSA_ADRSC_BYTES, in + i * in_stride, inbytes);
        }
        used = todo > used ? todo : used;
        if (wide)
            hbs_sha512_many(dig, &c->sha512_seeded, buf, jlen, todo);
        else
            hbs_sha256_many(dig, &c->sha256_seeded, buf, jlen, todo);
        for (size_t i = 0; i < todo; i++)
            copy_value(out + i * n, dig + i * dlen, n);
        out += todo * n;
        in += todo * in_stride;
        adrs += todo;
        count -= todo;
    }
    /* inputs may be secret (PRF seeds, chain starts): wipe what was used, not all 20 KB */
    hbs_memzero(buf, used * jlen);
    hbs_memzero(dig, used * dlen);
}

static void thash_shake(const slhdsa_ctx *c, uint8_t *out, const uint8_t *in, size_t in_stride,
                        size_t inbytes, const slhdsa_adrs *adrs, size_t count)
{
    const size_t n = c->p->n;
    const size_t jlen = n + SLHDSA_ADRS_BYTES + inbytes;
    size_t chunk = THASH_BUF / jlen, used = 0;
    uint8_t buf[THASH_BUF];

    if (chunk > THASH_MAX_CHUNK)
        chunk = THASH_MAX_CHUNK;
    while (count) {
        size_t todo = count < chunk ? count : chunk;
        for (size_t i = 0; i < todo; i++) {
            uint8_t *j = buf + i * jlen;
            copy_value(j, c->pk_seed, n);
            memcpy(j + n, adrs[i].b, SLHDSA_ADRS_BYTES);
            copy_value(j + n + SLHDSA_ADRS_BYTES, in + i * in_stride, inbytes);
        }
        used = todo > used ? todo : used;
        hbs_shake256_many(out, n, buf, jlen, todo);
        out += todo * n;
        in += todo * in_stride;
        adrs += todo;
        count -= todo;
    }
    hbs_memzero(buf, used * jlen);
}

void hbs_slhdsa_thash_many(const slhdsa_ctx *c, uint8_t *out, const uint8_t *in, size_t l,
                           const slhdsa_adrs *adrs, size_t count)
{
    const size_t bytes = l * c->p->n;
    if (c->p->family == SLHDSA_FAMILY_SHA2)
        thash_sha2(c, out, in, bytes, bytes, l, adrs, count);
    else
        thash_shake(c, out, in, bytes, bytes, adrs, count);
}

void hbs_slhdsa_chains(const slhdsa_ctx *c, uint8_t *vals, const slhdsa_adrs *adrs, size_t count,
                       const uint8_t *steps, uint32_t steps_all)
{
    enum { CHAIN_CHUNK = 256 };
    const size_t n = c->p->n;
    const int sha2 = c->p->family == SLHDSA_FAMILY_SHA2;
    /* each chain's message: [PK.seed (SHAKE)] ADRS(c) value; where the hash address and
     * value sit */
    const size_t pre = sha2 ? 0 : n, alen = sha2 ? SLHDSA_ADRSC_BYTES : SLHDSA_ADRS_BYTES;
    const size_t jlen = pre + alen + n, hpos = pre + alen - 4, vpos = pre + alen;
    const hbs_chain_layout lay = {(uint8_t)hpos, 4, (uint8_t)vpos, (uint8_t)n};
    uint8_t buf[CHAIN_CHUNK * (SLHDSA_MAX_N + SLHDSA_ADRS_BYTES + SLHDSA_MAX_N)];
    size_t used = 0;

    while (count) {
        const size_t todo = count < CHAIN_CHUNK ? count : CHAIN_CHUNK;
        used = todo > used ? todo : used;
        for (size_t i = 0; i < todo; i++) {
            uint8_t *j = buf + i * jlen;
            if (sha2) {
                adrs_compress(j, &adrs[i]);
            } else {
                copy_value(j, c->pk_seed, n);
                memcpy(j + n, adrs[i].b, SLHDSA_ADRS_BYTES);
            }
            copy_value(j + vpos, vals + i * n, n);
        }
        if (sha2)
            hbs_sha256_chains(&c->sha256_seeded, buf, jlen, &lay, steps, steps_all, todo);
        else
            hbs_shake256_chains(buf, jlen, &lay, steps, steps_all, todo);
        for (size_t i = 0; i < todo; i++)
            copy_value(vals + i * n, buf + i * jlen + vpos, n);
        vals += todo * n;
        adrs += todo;
        if (steps)
            steps += todo;
        count -= todo;
    }
    hbs_memzero(buf, used * jlen);
}

void hbs_slhdsa_prf_many(const slhdsa_ctx *c, uint8_t *out, const slhdsa_adrs *adrs,
                         size_t count)
{
    if (c->p->family == SLHDSA_FAMILY_SHA2)
        thash_sha2(c, out, c->sk_seed, 0, c->p->n, 1, adrs, count);
    else
        thash_shake(c, out, c->sk_seed, 0, c->p->n, adrs, count);
}

void hbs_slhdsa_prf_msg(const slhdsa_ctx *c, uint8_t *out, const uint8_t *sk_prf,
                        const uint8_t *opt_rand, const slhdsa_msg *m)
{
    const size_t n = c->p->n;
    if (c->p->family == SLHDSA_FAMILY_SHAKE) {
        hbs_keccak_ctx k;
        hbs_shake256_init(&k);
        hbs_keccak_absorb(&k, sk_prf, n);
        hbs_keccak_absorb(&k, opt_rand, n);
        hbs_keccak_absorb(&k, m->pre, m->prelen);
        hbs_keccak_absorb(&k, m->msg, m->msglen);
        hbs_keccak_squeeze(&k, out, n);
        hbs_memzero(&k, sizeof k);
    } else if (n == 16) {
        hbs_hmac_sha256_ctx h;
        uint8_t mac[32];
        hbs_hmac_sha256_init(&h, sk_prf, n);
        hbs_hmac_sha256_update(&h, opt_rand, n);
        hbs_hmac_sha256_update(&h, m->pre, m->prelen);
        hbs_hmac_sha256_update(&h, m->msg, m->msglen);
        hbs_hmac_sha256_final(&h, mac);
        memcpy(out, mac, n);
        hbs_memzero(&h, sizeof h);
        hbs_memzero(mac, sizeof mac);
    } else {
        hbs_hmac_sha512_ctx h;
        uint8_t mac[64];
        hbs_hmac_sha512_init(&h, sk_prf, n);
        hbs_hmac_sha512_update(&h, opt_rand, n);
        hbs_hmac_sha512_update(&h, m->pre, m->prelen);
        hbs_hmac_sha512_update(&h, m->msg, m->msglen);
        hbs_hmac_sha512_final(&h, mac);
        memcpy(out, mac, n);
        hbs_memzero(&h, sizeof h);
        hbs_memzero(mac, sizeof mac);
    }
}

void hbs_slhdsa_h_msg(const slhdsa_ctx *c, uint8_t *out, const uint8_t *r, const uint8_t *pk_root,
                      const slhdsa_msg *m)
{
    const size_t n = c->p->n;
    /* MGF1 seed: R || PK.seed || digest; at most 32 + 32 + 64 bytes. */
    uint8_t seed[2 * SLHDSA_MAX_N + 64];

    if (c->p->family == SLHDSA_FAMILY_SHAKE) {
        hbs_keccak_ctx k;
        hbs_shake256_init(&k);
        hbs_keccak_absorb(&k, r, n);
        hbs_keccak_absorb(&k, c->pk_seed, n);
        hbs_keccak_absorb(&k, pk_root, n);
        hbs_keccak_absorb(&k, m->pre, m->prelen);
        hbs_keccak_absorb(&k, m->msg, m->msglen);
        hbs_keccak_squeeze(&k, out, c->p->m);
        return;
    }
    memcpy(seed, r, n);
    memcpy(seed + n, c->pk_seed, n);
    if (n == 16) {
        hbs_sha256_ctx h;
        hbs_sha256_init(&h);
        hbs_sha256_update(&h, r, n);
        hbs_sha256_update(&h, c->pk_seed, n);
        hbs_sha256_update(&h, pk_root, n);
        hbs_sha256_update(&h, m->pre, m->prelen);
        hbs_sha256_update(&h, m->msg, m->msglen);
        hbs_sha256_final(&h, seed + 2 * n);
        hbs_mgf1_sha256(out, c->p->m, seed, 2 * n + 32);
    } else {
        hbs_sha512_ctx h;
        hbs_sha512_init(&h);
        hbs_sha512_update(&h, r, n);
        hbs_sha512_update(&h, c->pk_seed, n);
        hbs_sha512_update(&h, pk_root, n);
        hbs_sha512_update(&h, m->pre, m->prelen);
        hbs_sha512_update(&h, m->msg, m->msglen);
        hbs_sha512_final(&h, seed + 2 * n);
        hbs_mgf1_sha512(out, c->p->m, seed, 2 * n + 64);
    }
}
