/* XMSS / XMSS^MT stateful keys in memory (internal: signing from memory without the durable
 * key store is what reuses one-time keys). The state store and the CLI build on this.
 *
 * A key holds its secret seeds, the next index it will sign with, the first index it may
 * not use (end), and the BDS traversal state of every layer, including the next tree of
 * each XMSS^MT layer below the top, grown a leaf at a time so that no signature rebuilds a
 * tree. Traversal memory is set by the BDS parameter K at key generation: the top K levels
 * of every tree keep their right nodes (2^K - K - 1 nodes), and a signature computes about
 * (h' - K) / 2 + 1 leaves for a tree of height h'. */
#ifndef HBS_XMSS_XMSS_H
#define HBS_XMSS_XMSS_H

#include <stddef.h>
#include <stdint.h>

#include "core/leaf_engine.h"
#include "hbs/xmss.h"
#include "xmss/internal.h"

typedef struct hbs_xmss_key hbs_xmss_key;

/* The default BDS parameter for trees of height h': 6 (5 for h' = 5); the state then keeps
 * 57 nodes for the top levels, and signing costs about (h' - 6) / 2 + 1.5 leaves. */
unsigned hbs_xmss_default_bds_k(const hbs_xmss_params *p);

/* Key generation. bds_k = 0 picks the default; otherwise 2 <= K <= h' with h' - K even.
 * seed is SK_SEED || SK_PRF || PUB_SEED (3n bytes, as in the RFC 8391 reference code and the
 * known-answer files), or NULL for fresh randomness. pk gets OID || root || SEED. */
int hbs_xmss_keygen(hbs_xmss_key **key, uint8_t *pk, size_t pkcap, size_t *pklen,
                    const hbs_xmss_params *p, unsigned bds_k, const uint8_t *seed,
                    size_t seedlen, hbs_progress_fn progress, void *progress_user);
/* hbs_xmss_keygen with the leaves of whole trees from an engine (core/leaf_engine.h; NULL:
 * the CPU). The key is byte-identical either way. */
int hbs_xmss_keygen_engine(hbs_xmss_key **key, uint8_t *pk, size_t pkcap, size_t *pklen,
                           const hbs_xmss_params *p, unsigned bds_k, const uint8_t *seed,
                           size_t seedlen, hbs_progress_fn progress, void *progress_user,
                           const hbs_leaf_engine *engine);

/* The whole private state, self-describing (OID, kind, version), with a SHA-256 digest at
 * the end; hbs_xmss_key_export_bytes says how long it is. */
size_t hbs_xmss_key_export_bytes(const hbs_xmss_key *key);
int hbs_xmss_key_export(const hbs_xmss_key *key, uint8_t *out, size_t outcap, size_t *outlen);
/* Rejects anything malformed with HBS_ERR_MALFORMED_KEY. */
int hbs_xmss_key_import(hbs_xmss_key **key, const uint8_t *in, size_t inlen);

int hbs_xmss_key_public(const hbs_xmss_key *key, uint8_t *pk, size_t pkcap, size_t *pklen);
const hbs_xmss_params *hbs_xmss_key_params(const hbs_xmss_key *key);
unsigned hbs_xmss_key_bds_k(const hbs_xmss_key *key);
uint64_t hbs_xmss_key_index(const hbs_xmss_key *key);
uint64_t hbs_xmss_key_end(const hbs_xmss_key *key);
uint64_t hbs_xmss_key_total(const hbs_xmss_key *key);
int hbs_xmss_key_skip_to(hbs_xmss_key *key, uint64_t index);
/* hbs_xmss_key_skip_to with the leaves of whole trees from an engine (core/leaf_engine.h;
 * NULL: the CPU): the rebuild of a far skip, and the trees a near skip steps through. The
 * state after it is byte-identical either way. */
int hbs_xmss_key_skip_to_engine(hbs_xmss_key *key, uint64_t index,
                                const hbs_leaf_engine *engine);
int hbs_xmss_key_set_end(hbs_xmss_key *key, uint64_t end);
size_t hbs_xmss_sig_bytes(const hbs_xmss_key *key);
/* Signs with index(), then advances; HBS_ERR_KEY_EXHAUSTED when index == end. */
/* ---- signing in two halves, for a signer that computes the leaves elsewhere (the GPU, for
 * many keys at once); hbs_xmss_sign is begin then finish with the CPU's leaves ----
 * begin (the key unchanged) writes what the key knows into sig: the index, r, the
 * authentication paths and the upper layers' cached one-time signatures; and names in st
 * the leaves the step to the next index needs: pos[0] is leaf s, whose WOTS+ signature of
 * st->digits goes to sig + st->ots_at (its leaf is wanted only when want0), then the
 * traversal's leaves. finish moves the key on with leaves[j] (n bytes) of pos[j] and the
 * one-time signature ots (len * n bytes), or computes them itself when leaves is NULL; it
 * must follow begin with no other use of the key between. The step is secret (digits are
 * not, but the positions tell the traversal) and finish wipes it. */
#define HBS_XMSS_STEP_LEAVES (1 + XMSS_MAX_TREE_HEIGHT / 2 + 2)
typedef struct {
    uint32_t count; /* leaves named in pos */
    xmss_leafpos pos[HBS_XMSS_STEP_LEAVES];
    int sign, want0;
    uint8_t digits[XMSS_MAX_LEN];
    uint32_t ots_at;
    /* the plan's own */
    uint64_t index;
    uint32_t nupd;
    int final, round, feed, owed; /* owed: 0 none, 1 a next-tree leaf, 2 an update */
} hbs_xmss_step;

/* The key's hashing as a leaf engine's job (seeds point into the key; layer and tree 0). */
void hbs_xmss_key_leaf_job(const hbs_xmss_key *key, hbs_xmss_leaf_job *job);
int hbs_xmss_sign_begin(const hbs_xmss_key *key, uint8_t *sig, size_t sigcap,
                        const uint8_t *msg, size_t msglen, hbs_xmss_step *st);
int hbs_xmss_sign_finish(hbs_xmss_key *key, hbs_xmss_step *st, const uint8_t *leaves,
                         const uint8_t *ots, uint8_t *sig, size_t sigcap);

int hbs_xmss_sign(hbs_xmss_key *key, uint8_t *sig, size_t sigcap, size_t *siglen,
                  const uint8_t *msg, size_t msglen);
void hbs_xmss_key_free(hbs_xmss_key *key);

#endif
