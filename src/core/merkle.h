/* Merkle trees over a leaf generator: roots and authentication paths, computed in blocks of
 * leaves so that memory stays small, every hash call is a wide batch, and the blocks of
 * several trees can be spread over threads together. */
#ifndef HBS_CORE_MERKLE_H
#define HBS_CORE_MERKLE_H

#include <stddef.h>
#include <stdint.h>

#define HBS_MERKLE_MAX_N 64

typedef struct {
    size_t n;        /* bytes per node, at most HBS_MERKLE_MAX_N */
    unsigned height; /* leaves = 2^height */
    /* Writes leaves first .. first+count-1 (n bytes each) to out. Called from several
     * threads at once for different ranges. */
    void (*leaves)(void *user, uint8_t *out, uint32_t first, size_t count);
    /* Writes count parents at `height` (>= 1), indices first .. first+count-1, from their
     * 2*count children (left, right, left, right, ...). out never overlaps children. */
    void (*nodes)(void *user, uint8_t *out, const uint8_t *children, unsigned height,
                  uint32_t first, size_t count);
    void *user;
} hbs_merkle_tree;

typedef struct {
    const hbs_merkle_tree *tree;
    uint8_t *root;  /* n bytes out */
    uint8_t *auth;  /* height * n bytes out (bottom level first), or NULL */
    uint32_t idx;   /* the leaf whose path is wanted */
} hbs_merkle_job;

/* Computes every job's root and path, spreading the work over the thread pool.
 * Returns 0 or HBS_ERR_NO_MEMORY. */
int hbs_merkle_many(const hbs_merkle_job *jobs, size_t njobs);

/* One tree: hbs_merkle_many with a single job. */
int hbs_merkle_root_auth(const hbs_merkle_tree *t, uint8_t *root, uint8_t *auth, uint32_t idx);

/* Every node of the tree, level by level: 2^h leaves, then 2^(h-1) nodes, ..., the root
 * last ((2^(h+1) - 1) * n bytes). Leaves are spread over the thread pool. */
void hbs_merkle_full(const hbs_merkle_tree *t, uint8_t *nodes);

/* Root and path of leaf idx read from a tree stored by hbs_merkle_full. */
void hbs_merkle_full_lookup(const hbs_merkle_tree *t, const uint8_t *nodes, uint8_t *root,
                            uint8_t *auth, uint32_t idx);

/* Walks from a leaf to the root along an authentication path (the verifier's side).
 * `node` holds the leaf on entry and the root on return; `scratch` is 2n bytes. */
void hbs_merkle_climb(const hbs_merkle_tree *t, uint8_t *node, const uint8_t *auth, uint32_t idx,
                      uint8_t *scratch);

#endif
