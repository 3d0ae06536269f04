/* Signing a batch under one stateful key elsewhere (the GPU): the two steps that touch the
 * key, so that the batch's signer needs nothing else of it.
 *
 *  1. hbs_stateful_batch_begin sets the next `count` indices aside durably: the key file's
 *     next moves to at least first + count (written, fsynced, renamed) before it returns
 *     HBS_OK; to first + the key's reserve (hbs_stateful_open) when that is more, so that
 *     the batches after it within that range write nothing (unless the file is there
 *     already). It also hands out the key's exported private state at `first` (the payload
 *     format of lms/hss.h or xmss/xmss.h: seeds, parameters), from which the caller makes
 *     the signatures of indices first .. first + count - 1, each once.
 *  2. hbs_stateful_batch_end moves the key in memory past the batch (to first + count), so
 *     that later signatures continue after it. If that fails, this key object signs no more
 *     (the file is right; reopening it continues after the batch).
 *
 * Between the two calls the key may not be used otherwise. Indices reserved and not used
 * stay burned, as everywhere in the store. */
#ifndef HBS_STATE_STATEFUL_BATCH_H
#define HBS_STATE_STATEFUL_BATCH_H

#include <stddef.h>
#include <stdint.h>

#include "core/leaf_engine.h"
#include "hbs/stateful.h"

#ifdef __cplusplus
extern "C" {
#endif
/* (inside: C declarations for the C++ of src/gpu) */
#include "lms/hss.h"
#include "xmss/xmss.h"

/* HBS_ERR_KEY_EXHAUSTED if fewer than count (>= 1) indices are left (nothing changes);
 * HBS_ERR_IO / HBS_ERR_STATE as hbs_stateful_sign. *state (secret, statelen bytes) is to be
 * released with hbs_stateful_batch_free_state. */
int hbs_stateful_batch_begin(hbs_stateful_key *key, uint64_t count, uint64_t *first,
                             uint8_t **state, size_t *statelen);
/* The state batch_begin would hand out, without setting anything aside: a signer may start
 * on it while batch_begin (in another thread, the only one then using the key) writes the
 * file, and must release nothing unless that returned HBS_OK with the same first index.
 * Errors as batch_begin's, before its file write. */
int hbs_stateful_batch_state(const hbs_stateful_key *key, uint64_t count, uint64_t *first,
                             uint8_t **state, size_t *statelen);
int hbs_stateful_batch_end(hbs_stateful_key *key, uint64_t next);
/* hbs_stateful_batch_end with the leaves of whole trees from an engine (NULL: the CPU): the
 * key's traversal state moves over the batch on the GPU's leaves. The state it ends in is
 * byte-identical either way. */
int hbs_stateful_batch_end_engine(hbs_stateful_key *key, uint64_t next,
                                  const hbs_leaf_engine *engine);
void hbs_stateful_batch_free_state(uint8_t *state, size_t statelen);

/* ---- one signature under each of many keys, its hashing done elsewhere (the GPU) ----
 * hbs_stateful_sign_begin sets the key's next index aside durably when its reservation is
 * used up (the same state update hbs_stateful_sign makes: written, fsynced, renamed), and
 * only then runs the scheme's begin (xmss/xmss.h, lms/hss.h): the signature but its bottom
 * one-time signature goes to sig, and st names the leaves the key's step to the next index
 * needs. hbs_stateful_sign_finish moves the key on with those leaves and the one-time
 * signature made elsewhere (XMSS: leaves n bytes apart, ots len * n bytes; HSS: leaves
 * HBS_LMS_MAX_N bytes apart, ots the p * n bytes of y), or computes them on the CPU when
 * leaves is NULL; the signature is then whole, and byte for byte hbs_stateful_sign's. After
 * a successful begin the index is used whatever happens: call finish (with NULL leaves if
 * nothing else can). Errors as hbs_stateful_sign; a failed begin changes nothing but the
 * file's reservation. */
typedef struct {
    hbs_stateful_family family;
    union {
        hbs_xmss_step x;
        hbs_hss_step h;
    } u;
} hbs_stateful_step;

int hbs_stateful_sign_begin(hbs_stateful_key *key, uint8_t *sig, size_t sigcap,
                            const uint8_t *msg, size_t msglen, hbs_stateful_step *st);
int hbs_stateful_sign_finish(hbs_stateful_key *key, hbs_stateful_step *st,
                             const uint8_t *leaves, const uint8_t *ots, uint8_t *sig,
                             size_t sigcap);
/* An XMSS key's hashing for a leaf engine (seeds point into the key; layer and tree 0);
 * HBS_ERR_INVALID_ARGUMENT for an HSS key. */
int hbs_stateful_xmss_job(const hbs_stateful_key *key, hbs_xmss_leaf_job *job);

#ifdef __cplusplus
}
#endif
#endif
