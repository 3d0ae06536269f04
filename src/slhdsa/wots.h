/* WOTS+ (FIPS 205, section 5), with many chains advanced side by side. */
#ifndef HBS_SLHDSA_WOTS_H
#define HBS_SLHDSA_WOTS_H

#include "slhdsa/thash.h"

/* Public keys of the `count` WOTS+ key pairs first .. first+count-1 in the XMSS tree that
 * `tree` addresses (layer and tree address set); n bytes each. */
void hbs_slhdsa_wots_pkgen_many(const slhdsa_ctx *c, uint8_t *pk, const slhdsa_adrs *tree,
                                uint32_t first, size_t count);

/* Signature (len * n bytes) of the n-byte message msg with key pair `leaf`. */
void hbs_slhdsa_wots_sign(const slhdsa_ctx *c, uint8_t *sig, const uint8_t *msg,
                          const slhdsa_adrs *tree, uint32_t leaf);

/* The public key a signature implies. */
void hbs_slhdsa_wots_pk_from_sig(const slhdsa_ctx *c, uint8_t *pk, const uint8_t *sig,
                                 const uint8_t *msg, const slhdsa_adrs *tree, uint32_t leaf);

#endif
