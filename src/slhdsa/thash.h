/* The FIPS 205 hash functions (section 11), batch-shaped: every call hashes `count`
 * independent inputs, so the hash layer can fill SIMD lanes or GPU threads. */
#ifndef HBS_SLHDSA_THASH_H
#define HBS_SLHDSA_THASH_H

#include <stddef.h>
#include <stdint.h>

#include "hash/hash.h"
#include "slhdsa/address.h"
#include "slhdsa/params.h"

/* Everything fixed for one key during one operation. */
typedef struct {
    const hbs_slhdsa_params *p;
    uint8_t pk_seed[SLHDSA_MAX_N];
    uint8_t sk_seed[SLHDSA_MAX_N]; /* zero when only verifying */
    hbs_sha256_ctx sha256_seeded;   /* SHA-2 sets: state after PK.seed || 0^(64-n) */
    hbs_sha512_ctx sha512_seeded;   /* SHA-2 sets, n > 16: state after PK.seed || 0^(128-n) */
} slhdsa_ctx;

/* M' as pieces, so a long message is never copied: prefix (domain separator, context,
 * pre-hash OID and digest) followed by the message. */
typedef struct {
    const uint8_t *pre;
    size_t prelen;
    const uint8_t *msg;
    size_t msglen;
} slhdsa_msg;

void hbs_slhdsa_ctx_init(slhdsa_ctx *c, const hbs_slhdsa_params *p, const uint8_t *pk_seed,
                         const uint8_t *sk_seed);
void hbs_slhdsa_ctx_wipe(slhdsa_ctx *c);

/* out_i = T_l(PK.seed, adrs_i, in_i) for i < count; in_i is l*n bytes, out_i n bytes.
 * F is l = 1, H is l = 2. out may equal in (exactly, not partially overlapping). */
void hbs_slhdsa_thash_many(const slhdsa_ctx *c, uint8_t *out, const uint8_t *in, size_t l,
                           const slhdsa_adrs *adrs, size_t count);
/* Advances `count` WOTS+ chains: vals_i <- F(..F(vals_i)) with steps[i] applications (or
 * steps_all when steps is NULL), where adrs_i is chain i's WOTS_HASH address holding its
 * first hash address. The same as calls of thash_many with the hash address counting up,
 * but the hash layer keeps the chains in its lanes between steps (key generation and
 * signing spend most of their time here). */
void hbs_slhdsa_chains(const slhdsa_ctx *c, uint8_t *vals, const slhdsa_adrs *adrs, size_t count,
                       const uint8_t *steps, uint32_t steps_all);
/* out_i = PRF(PK.seed, SK.seed, adrs_i). */
void hbs_slhdsa_prf_many(const slhdsa_ctx *c, uint8_t *out, const slhdsa_adrs *adrs,
                         size_t count);
/* R = PRF_msg(SK.prf, opt_rand, M'), n bytes. */
void hbs_slhdsa_prf_msg(const slhdsa_ctx *c, uint8_t *out, const uint8_t *sk_prf,
                        const uint8_t *opt_rand, const slhdsa_msg *m);
/* H_msg(R, PK.seed, PK.root, M'), m bytes. */
void hbs_slhdsa_h_msg(const slhdsa_ctx *c, uint8_t *out, const uint8_t *r, const uint8_t *pk_root,
                      const slhdsa_msg *m);

#endif
