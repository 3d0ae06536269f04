/* Merkle trees over a leaf generator: the root and one authentication path, computed in
 * blocks of leaves so that memory stays small and every hash call is a wide batch. */
#ifndef HBS_CORE_MERKLE_H
#define HBS_CORE_MERKLE_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    size_t n;            /* bytes per node */
    unsigned height;     /* leaves = 2^height */
    /* Writes leaves first .. first+count-1 (n bytes each) to out. */
    void (*leaves)(void *user, uint8_t *out, uint32_t first, size_t count);
    /* Writes count parents at `height` (>= 1), indices first .. first+count-1, from their
     * 2*count children (left, right, left, right, ...). out never overlaps children. */
    void (*nodes)(void *user, uint8_t *out, const uint8_t *children, unsigned height,
                  uint32_t first, size_t count);
    void *user;
} hbs_merkle_tree;

/* Root of the tree and, if auth is not NULL, the authentication path of leaf `idx`
 * (height * n bytes, bottom level first). Returns 0 or HBS_ERR_NO_MEMORY. */
int hbs_merkle_root_auth(const hbs_merkle_tree *t, uint8_t *root, uint8_t *auth, uint32_t idx);

/* Walks from a leaf to the root along an authentication path (the verifier's side).
 * `node` holds the leaf on entry and the root on return; `scratch` is 2n bytes. */
void hbs_merkle_climb(const hbs_merkle_tree *t, uint8_t *node, const uint8_t *auth, uint32_t idx,
                      uint8_t *scratch);

#endif
