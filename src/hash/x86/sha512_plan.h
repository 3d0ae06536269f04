/* The scalar, once-per-batch part of the SHA-512 lane kernels (AVX2 and AVX-512): the
 * padding of the final block, the schedule of a block of padding alone, and where each lane
 * reads its blocks. Plain C, compiled without instruction-set flags. */
#ifndef HBS_HASH_X86_SHA512_PLAN_H
#define HBS_HASH_X86_SHA512_PLAN_H

#include "hash/hash.h"

/* What every message of a batch shares. */
typedef struct {
    uint64_t h[8];       /* the state the messages continue from */
    size_t inlen, full;  /* message length, whole blocks in it */
    size_t rem;          /* bytes in the final, partial block (0: none) */
    size_t batch_bytes;  /* count * inlen: no load may reach past this */
    uint64_t mask[16];   /* final block: message bytes kept (big-endian words) */
    uint64_t tmpl[16];   /* final block: padding merged in */
    int has_const;       /* a block of padding alone follows (or is the final block) */
    uint64_t kw[80];     /* its K[t] + W[t] */
} hbs_sha512_plan;

void hbs_sha512_plan_batch(hbs_sha512_plan *pl, const hbs_sha512_ctx *prefix, size_t inlen,
                           size_t count);

/* Where lane l of the group from message `first` reads block `blk` (blk == full: the tail).
 * Lanes past `active` repeat the last message. A tail whose whole block would reach past the
 * batch is copied into copy[l], zero-filled; *copied records that copy holds message bytes. */
void hbs_sha512_block_pointers(const uint8_t **p, unsigned lanes, const hbs_sha512_plan *pl,
                               const uint8_t *in, size_t first, size_t active, size_t blk,
                               uint8_t (*copy)[HBS_SHA512_BLOCK], int *copied);

#endif
