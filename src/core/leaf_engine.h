/* A leaf engine: an optional backend (the GPU) that computes many leaves of one LMS or XMSS
 * tree at once for key generation. The CPU code keeps building the tree and the traversal
 * state from those leaves with its own code, so a key made with an engine is byte-identical
 * to one made without. Ranges shorter than min_leaves stay on the CPU; longer ones are asked
 * for in slices of at most slice_leaves leaves (the engine's memory bound). */
#ifndef HBS_CORE_LEAF_ENGINE_H
#define HBS_CORE_LEAF_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include "hbs/hbs.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One LMS tree (RFC 8554): its types' fields and its secrets. */
typedef struct {
    unsigned hash;       /* HBS_LMS_HASH_SHA256 (0) or HBS_LMS_HASH_SHAKE (1) */
    unsigned n, w, p, h; /* LM-OTS n, w and chains; LMS height (for the leaf's node number) */
    const uint8_t *I;    /* 16 bytes */
    const uint8_t *seed; /* n bytes */
} hbs_lms_leaf_job;

/* One XMSS tree (RFC 8391): the set's hash and sizes, the seeds and the tree's address. */
typedef struct {
    unsigned func;        /* xmss_func (xmss/params.h): 0 SHA-256, 1 SHA-512, 2 SHAKE128, 3 SHAKE256 */
    unsigned n, padlen, len;
    const uint8_t *pub_seed, *sk_seed;
    uint32_t layer;
    uint64_t tree;
    /* The set (hbs_xmss_params_by_oid(mt, oid)), from key generation and the key's own
     * traversal; 0 elsewhere. With it an engine may keep the key's whole trees that it makes
     * for a later batch signer (src/gpu: the top layer's, and the bottom one beside it). */
    uint32_t oid;
    unsigned mt;
} hbs_xmss_leaf_job;

typedef struct hbs_leaf_engine {
    /* Leaves first .. first + count - 1 into out (n bytes each). HBS_OK or an error. */
    int (*lms_leaves)(void *user, const hbs_lms_leaf_job *job, uint32_t first, size_t count,
                      uint8_t *out);
    /* XMSS: the same leaves of njobs trees of one key (the layers of an XMSS^MT key, at
     * most 12; seeds and set from jobs[0]) in one go: out holds job 0's count leaves, then
     * job 1's, ... */
    int (*xmss_leaves)(void *user, const hbs_xmss_leaf_job *jobs, size_t njobs, uint32_t first,
                       size_t count, uint8_t *out);
    /* Optional (NULL if not): njobs whole XMSS trees of height h (xmss_leaves' jobs, with
     * first 0 and count 2^h) with every node: out holds job 0's 2^(h+1) - 1 nodes, the
     * leaves first, then each level up, then job 1's, ... HBS_ERR_UNSUPPORTED where the
     * engine cannot (the caller then asks xmss_leaves); otherwise as xmss_leaves. Key
     * generation then hashes no inner node on the CPU. */
    int (*xmss_trees)(void *user, const hbs_xmss_leaf_job *jobs, size_t njobs, unsigned h,
                      uint8_t *out);
    /* Optional (NULL if not): every node of the XMSS tree of job (height h) that the engine
     * already holds, the 2^h leaves first, then each level up (2^(h+1) - 1 nodes of n bytes);
     * NULL when it has none. Valid while the engine is. A skip that steps over such a tree
     * reads its inner nodes instead of hashing them (the same bytes). */
    const uint8_t *(*xmss_tree)(void *user, const hbs_xmss_leaf_job *job, unsigned h);
    /* Optional (NULL if not): the WOTS+ signature of msg (n bytes) by leaf `leaf` of the
     * XMSS tree of job (len * n bytes into sig) where the engine already made it, as a batch
     * signer makes the signature of each tree's root by the layer above: HBS_OK, or
     * HBS_ERR_UNSUPPORTED where it has none (sig untouched; the caller makes it). */
    int (*xmss_wots_sig)(void *user, const hbs_xmss_leaf_job *job, uint32_t leaf,
                         const uint8_t *msg, uint8_t *sig);
    void *user;
    size_t min_leaves, slice_leaves;
} hbs_leaf_engine;

/* The GPU's engine (src/gpu/stateful.cu): HBS_OK, or HBS_ERR_NO_GPU without a usable GPU
 * (always, in a build without CUDA). */
int hbs_gpu_leaf_engine(hbs_leaf_engine *e);

/* hbs_stateful_keygen_ex (hbs/stateful.h) with the leaves of big ranges from an engine
 * (NULL: all on the CPU). */
int hbs_stateful_keygen_engine(const char *alg, const char *path, unsigned traversal,
                               uint8_t *pk, size_t pkcap, size_t *pklen, const uint8_t *seed,
                               size_t seedlen, hbs_progress_fn progress, void *user,
                               const hbs_leaf_engine *engine);

#ifdef __cplusplus
}
#endif
#endif
