/* FORS (FIPS 205, section 8): k Merkle trees of height a over secret leaves. */
#ifndef HBS_SLHDSA_FORS_H
#define HBS_SLHDSA_FORS_H

#include "slhdsa/thash.h"

/* Signs md (ceil(k*a/8) bytes) and returns the FORS public key in pk. `kp` addresses the
 * FORS key pair: layer 0, tree idx_tree, key pair idx_leaf. Returns 0 or HBS_ERR_NO_MEMORY. */
int hbs_slhdsa_fors_sign(const slhdsa_ctx *c, uint8_t *sig, uint8_t *pk, const uint8_t *md,
                         const slhdsa_adrs *kp);

/* The FORS public key a signature implies. */
void hbs_slhdsa_fors_pk_from_sig(const slhdsa_ctx *c, uint8_t *pk, const uint8_t *sig,
                                 const uint8_t *md, const slhdsa_adrs *kp);

#endif
