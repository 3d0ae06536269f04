#include "core/merkle.h"

#include <stdlib.h>
#include <string.h>

#include "hbs/hbs.h"

/* Leaves per block: wide enough to fill any backend, small enough for L1/L2. */
#define MERKLE_BLOCK_LOG 6
/* At most this many block roots are kept, so huge trees use bigger blocks instead. */
#define MERKLE_TOP_LOG 12

/* Reduces 2^levels nodes at height `base` (the first one has index `first`) to their root,
 * copying into auth[z] the sibling of the path through relative position `rel` when auth is
 * not NULL. nodes and tmp are both clobbered. */
static void reduce(const hbs_merkle_tree *t, uint8_t *root, uint8_t *auth, uint8_t *nodes,
                   uint8_t *tmp, unsigned levels, unsigned base, uint32_t first, uint32_t rel)
{
    const size_t n = t->n;
    uint8_t *cur = nodes, *next = tmp;
    size_t count = (size_t)1 << levels;

    for (unsigned z = 0; z < levels; z++) {
        if (auth)
            memcpy(auth + (size_t)z * n, cur + (size_t)((rel >> z) ^ 1) * n, n);
        count >>= 1;
        t->nodes(t->user, next, cur, base + z + 1, first >> (z + 1), count);
        uint8_t *swap = cur;
        cur = next;
        next = swap;
    }
    memcpy(root, cur, n);
}

int hbs_merkle_root_auth(const hbs_merkle_tree *t, uint8_t *root, uint8_t *auth, uint32_t idx)
{
    const size_t n = t->n;
    const unsigned h = t->height;
    unsigned s = h < MERKLE_BLOCK_LOG ? h : MERKLE_BLOCK_LOG;
    if (h - s > MERKLE_TOP_LOG)
        s = h - MERKLE_TOP_LOG;
    const unsigned top = h - s;
    const size_t block = (size_t)1 << s, nblocks = (size_t)1 << top;
    const uint32_t mask = (uint32_t)(block - 1);
    /* leaves of a block, scratch for its levels, then the block roots and their scratch */
    uint8_t *mem = malloc(n * (block + block / 2 + 1 + nblocks + nblocks / 2 + 1));
    if (!mem)
        return HBS_ERR_NO_MEMORY;
    uint8_t *lv = mem, *lvtmp = lv + block * n, *tops = lvtmp + (block / 2 + 1) * n;
    uint8_t *topstmp = tops + nblocks * n;

    for (size_t b = 0; b < nblocks; b++) {
        const uint32_t first = (uint32_t)(b << s);
        const int on_path = auth && (idx >> s) == b;
        t->leaves(t->user, lv, first, block);
        reduce(t, tops + b * n, on_path ? auth : NULL, lv, lvtmp, s, 0, first, idx & mask);
    }
    reduce(t, root, auth ? auth + (size_t)s * n : NULL, tops, topstmp, top, s, 0, idx >> s);
    hbs_memzero(mem, n * (block + block / 2 + 1 + nblocks + nblocks / 2 + 1));
    free(mem);
    return HBS_OK;
}

void hbs_merkle_climb(const hbs_merkle_tree *t, uint8_t *node, const uint8_t *auth, uint32_t idx,
                      uint8_t *scratch)
{
    const size_t n = t->n;
    for (unsigned z = 0; z < t->height; z++) {
        if ((idx >> z) & 1) {
            memcpy(scratch, auth + (size_t)z * n, n);
            memcpy(scratch + n, node, n);
        } else {
            memcpy(scratch, node, n);
            memcpy(scratch + n, auth + (size_t)z * n, n);
        }
        t->nodes(t->user, node, scratch, z + 1, idx >> (z + 1), 1);
    }
}
