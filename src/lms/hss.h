/* HSS stateful keys in memory (RFC 8554 section 6): key generation, signing with a cached
 * tree traversal, export and import of the whole private state, skipping ahead.
 *
 * INTERNAL: signing from memory without the durable store (src/state/) is exactly what
 * reuses one-time keys; only the store and the tests call hbs_hss_sign.
 *
 * Key material. The top level's I and SEED come from the caller's seed (I || SEED, 16 + n
 * bytes, as in ACVP keyGen and RFC 8554 Appendix A) or from hbs_randombytes. Every lower
 * tree (level i >= 1, instance k: the k-th tree that level uses) is derived from them with
 * the top level's hash F (SHA-256 or SHAKE256, 32-byte output):
 *   SEED(i,k) = F(I0 || u32 i || u16 0xfffe || u8 0 || u64 k || SEED0), first n_i bytes
 *   I(i,k)    = F(I0 || u32 i || u16 0xfffe || u8 1 || u64 k || SEED0), first 16 bytes
 * (0xfffe is never a chain index, so these inputs differ from every RFC 8554 hash input.)
 * The randomizer C of each signature is derived from SEED too (lmots.h), so a key signs
 * deterministically and a resumed key reproduces an uninterrupted key's signatures.
 *
 * Traversal. Each level keeps the nodes described in tree.h for its current tree; levels
 * below the top also build their next tree, one leaf per step of their own index, so it is
 * ready when the current one runs out and no signature pays for a whole tree. The state after
 * index G is a function of G alone: export after skip_to(G) equals export after signing up to
 * G. Memory per level is about (2^(c+1) + 4 * 2^(c/2)) * n bytes for the current tree and as
 * much again for the next one (c = cache_height, default 8: 16 KiB + 2 KiB per tree at
 * n = 32; the whole state is rewritten with every update of the key file, so a smaller
 * state signs faster through the file: H10/W8 0.65 ms at 8 against 1.0 ms at 10 on one
 * Zen 4 core), and a signature computes one leaf per stripe of the bottom tree plus one leaf of
 * the next bottom tree.
 *
 * Limits: the heights of all levels may sum to at most 63 (index fits a uint64_t).
 */
#ifndef HBS_LMS_HSS_H
#define HBS_LMS_HSS_H

#include <stddef.h>
#include <stdint.h>

#include "hbs/hbs.h"
#include "hbs/lms.h"
#include "core/leaf_engine.h"
#include "lms/params.h"

#define HBS_HSS_MAX_TOTAL_HEIGHT 63

typedef struct hbs_hss_key hbs_hss_key;

/* Generates a key; writes the HSS public key (pk) and a new key object (*key). seed: NULL for
 * a random key, else I || SEED of the top level (16 + n0 bytes). progress (may be NULL) sees
 * leaves done out of all leaves of the first tree of every level; returning nonzero cancels
 * (HBS_ERR_CANCELLED). */
int hbs_hss_keygen(hbs_hss_key **key, uint8_t *pk, size_t pkcap, size_t *pklen,
                   const hbs_hss_params *params, const uint8_t *seed, size_t seedlen,
                   hbs_progress_fn progress, void *progress_user);
/* hbs_hss_keygen with the leaves of whole trees from an engine (core/leaf_engine.h; NULL:
 * the CPU). The key is byte-identical either way. */
int hbs_hss_keygen_engine(hbs_hss_key **key, uint8_t *pk, size_t pkcap, size_t *pklen,
                          const hbs_hss_params *params, const uint8_t *seed, size_t seedlen,
                          hbs_progress_fn progress, void *progress_user,
                          const hbs_leaf_engine *engine);

/* The whole private state (parameters, seeds, index, end, traversal): versioned, with a
 * SHA-256 checksum. Call with out == NULL (outcap 0) to learn the size. */
int hbs_hss_key_export(const hbs_hss_key *key, uint8_t *out, size_t outcap, size_t *outlen);
/* Rejects anything malformed (wrong magic or version, unknown types, bad lengths, index past
 * end, checksum mismatch) with HBS_ERR_MALFORMED_KEY. */
int hbs_hss_key_import(hbs_hss_key **key, const uint8_t *in, size_t inlen);
int hbs_hss_key_public(const hbs_hss_key *key, uint8_t *pk, size_t pkcap, size_t *pklen);
/* The parameters of a key (cache_height resolved). */
const hbs_hss_params *hbs_hss_key_params(const hbs_hss_key *key);

uint64_t hbs_hss_key_index(const hbs_hss_key *key); /* next index sign() uses */
uint64_t hbs_hss_key_end(const hbs_hss_key *key);   /* first index it may not use */
uint64_t hbs_hss_key_total(const hbs_hss_key *key); /* 2^(sum of heights) */

/* Moves forward to index (key_index <= index <= end): steps when near, rebuilds the affected
 * caches when far. */
int hbs_hss_key_skip_to(hbs_hss_key *key, uint64_t index);
/* hbs_hss_key_skip_to with the leaves of big subtrees from an engine (core/leaf_engine.h;
 * NULL: the CPU), which then rebuilds rather than steps unless the skip is tiny. The state
 * after it is byte-identical either way. */
int hbs_hss_key_skip_to_engine(hbs_hss_key *key, uint64_t index,
                               const hbs_leaf_engine *engine);
/* Lowers end (key_index <= end <= current end). */
int hbs_hss_key_set_end(hbs_hss_key *key, uint64_t end);

size_t hbs_hss_sig_bytes(const hbs_hss_key *key);
/* Signs msg with index(), then advances. HBS_ERR_KEY_EXHAUSTED when index == end. */
int hbs_hss_sign(hbs_hss_key *key, uint8_t *sig, size_t sigcap, size_t *siglen,
                 const uint8_t *msg, size_t msglen);

/* ---- signing in two halves, for a signer that computes the leaves elsewhere (the GPU, for
 * many keys at once); hbs_hss_sign is begin then finish with the CPU's leaves ----
 * begin writes all of the signature but the bottom one-time signature's y (at sig +
 * st->ots_at, p * n bytes: the chains of leaf st->ots taken st->coefs steps) and names in
 * st the leaves the step to the next index needs (leaf[j]: I, SEED and q of its tree, the
 * key's own bytes). finish moves the key on with leaves[j] at j * HBS_LMS_MAX_N and y, or
 * computes them itself when leaves is NULL; it must follow begin with no other use of the
 * key between, and wipes st. */
/* (a level's next tree and one leaf a stripe: HBS_LMS_MAX_STRIPES of lms/tree.h) */
#define HBS_HSS_STEP_LEAVES (HBS_HSS_MAX_LEVELS * (12 + 1))
typedef struct {
    const hbs_lms_type *lms;
    const hbs_lmots_type *ots;
    const uint8_t *I, *seed;
    uint32_t q;
} hbs_hss_step_leaf;

typedef struct {
    uint32_t count;
    hbs_hss_step_leaf leaf[HBS_HSS_STEP_LEAVES];
    hbs_hss_step_leaf ots;
    uint8_t coefs[HBS_LMOTS_MAX_P];
    uint32_t ots_at;
    uint64_t index;
} hbs_hss_step;

int hbs_hss_sign_begin(hbs_hss_key *key, uint8_t *sig, size_t sigcap, const uint8_t *msg,
                       size_t msglen, hbs_hss_step *st);
int hbs_hss_sign_finish(hbs_hss_key *key, hbs_hss_step *st, const uint8_t *leaves,
                        const uint8_t *y, uint8_t *sig, size_t sigcap);

/* hbs_hss_verify is declared in hbs/lms.h. */

void hbs_hss_key_free(hbs_hss_key *key); /* wipes */

#endif
