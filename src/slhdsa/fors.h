/* FORS (FIPS 205, section 8): k Merkle trees of height a over secret leaves. */
#ifndef HBS_SLHDSA_FORS_H
#define HBS_SLHDSA_FORS_H

#include "core/merkle.h"
#include "slhdsa/thash.h"

/* One FORS tree as a Merkle tree over a leaf generator. */
typedef struct {
    hbs_merkle_tree t;
    const slhdsa_ctx *c;
    slhdsa_adrs kp;  /* FORS_TREE type, key pair set */
    uint32_t offset; /* i * 2^a: where tree i starts in the key pair's index space */
} slhdsa_fors_tree;

/* The first half of signing: writes the k revealed secrets into sig and sets up k Merkle
 * jobs (trees[i], jobs[i]) whose roots go to roots[i*n] and paths into sig. Run the jobs
 * (with other trees' jobs, for parallelism), then hbs_slhdsa_fors_pk_from_roots. */
void hbs_slhdsa_fors_sign_jobs(const slhdsa_ctx *c, uint8_t *sig, const uint8_t *md,
                               const slhdsa_adrs *kp, slhdsa_fors_tree *trees,
                               hbs_merkle_job *jobs, uint8_t *roots);

/* T_k over the k roots: the FORS public key. */
void hbs_slhdsa_fors_pk_from_roots(const slhdsa_ctx *c, uint8_t *pk, const uint8_t *roots,
                                   const slhdsa_adrs *kp);

/* The FORS public key a signature implies. */
void hbs_slhdsa_fors_pk_from_sig(const slhdsa_ctx *c, uint8_t *pk, const uint8_t *sig,
                                 const uint8_t *md, const slhdsa_adrs *kp);

#endif
