/* WOTS+ (FIPS 205, section 5), with many chains advanced side by side. */
#ifndef HBS_SLHDSA_WOTS_H
#define HBS_SLHDSA_WOTS_H

#include "slhdsa/thash.h"

/* Key pairs whose chains advance together in key generation: 16 * 67 chains at most. With
 * 16 the chain count (16 * len) and the T_len batch are whole multiples of any lane width,
 * so no lanes idle at a batch's end (8 left a part-filled last group in every batch). */
#define HBS_SLHDSA_WOTS_BATCH 16

/* Public keys of the `count` WOTS+ key pairs first .. first+count-1 in the XMSS tree that
 * `tree` addresses (layer and tree address set); n bytes each. */
void hbs_slhdsa_wots_pkgen_many(const slhdsa_ctx *c, uint8_t *pk, const slhdsa_adrs *tree,
                                uint32_t first, size_t count);

/* The same for leaves counted across trees of per_tree key pairs each: leaf g (first <= g <
 * first + count) is key pair g % per_tree of the tree trees[g / per_tree] addresses, so
 * that the leaves of many small trees fill the lanes as those of one big tree do. */
void hbs_slhdsa_wots_pkgen_trees(const slhdsa_ctx *c, uint8_t *pk, const slhdsa_adrs *trees,
                                 uint32_t per_tree, uint32_t first, size_t count);

/* Signature (len * n bytes) of the n-byte message msg with key pair `leaf`. */
void hbs_slhdsa_wots_sign(const slhdsa_ctx *c, uint8_t *sig, const uint8_t *msg,
                          const slhdsa_adrs *tree, uint32_t leaf);

/* The public key a signature implies. */
void hbs_slhdsa_wots_pk_from_sig(const slhdsa_ctx *c, uint8_t *pk, const uint8_t *sig,
                                 const uint8_t *msg, const slhdsa_adrs *tree, uint32_t leaf);

#endif
