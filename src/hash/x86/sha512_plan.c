#include "hash/x86/sha512_plan.h"

#include <string.h>

#define BLOCK HBS_SHA512_BLOCK

static inline uint64_t rotr64(uint64_t x, unsigned n) { return (x >> n) | (x << (64 - n)); }


void hbs_sha512_plan_batch(hbs_sha512_plan *pl, const hbs_sha512_ctx *prefix, size_t inlen,
                       size_t count)
{
    uint64_t total, w[80];
    size_t rem = inlen % BLOCK;

    if (prefix) {
        memcpy(pl->h, prefix->h, sizeof pl->h);
        total = prefix->bytes + inlen;
    } else {
        hbs_sha512_ctx init;
        hbs_sha512_init(&init);
        memcpy(pl->h, init.h, sizeof pl->h);
        total = inlen;
    }
    pl->inlen = inlen;
    pl->full = inlen / BLOCK;
    pl->rem = rem;
    pl->batch_bytes = count * inlen;
    /* 0x80 and the 16-byte length must fit after the tail, else they need a block more. */
    pl->has_const = rem == 0 || rem + 17 > BLOCK;

    for (size_t j = 0; j < 16; j++) {
        size_t kept = rem > 8 * j ? rem - 8 * j : 0; /* message bytes in word j */
        pl->mask[j] = kept >= 8 ? ~0ULL : kept ? ~0ULL << (64 - 8 * kept) : 0;
        pl->tmpl[j] = 0;
        w[j] = 0;
    }
    if (rem)
        pl->tmpl[rem / 8] = 0x80ULL << (56 - 8 * (rem % 8));
    else
        w[0] = 0x80ULL << 56;
    if (!pl->has_const) {
        pl->tmpl[14] = total >> 61;
        pl->tmpl[15] = total << 3;
        return;
    }
    w[14] = total >> 61;
    w[15] = total << 3;
    for (unsigned t = 16; t < 80; t++) {
        uint64_t s0 = rotr64(w[t - 15], 1) ^ rotr64(w[t - 15], 8) ^ (w[t - 15] >> 7);
        uint64_t s1 = rotr64(w[t - 2], 19) ^ rotr64(w[t - 2], 61) ^ (w[t - 2] >> 6);
        w[t] = w[t - 16] + s0 + w[t - 7] + s1;
    }
    for (unsigned t = 0; t < 80; t++)
        pl->kw[t] = hbs_sha512_K[t] + w[t];
}

void hbs_sha512_block_pointers(const uint8_t **p, unsigned lanes, const hbs_sha512_plan *pl,
                           const uint8_t *in, size_t first, size_t active, size_t blk,
                           uint8_t (*copy)[BLOCK], int *copied)
{
    for (unsigned l = 0; l < lanes; l++) {
        size_t off;
        if (l >= active) {
            p[l] = p[active - 1];
            continue;
        }
        off = (first + l) * pl->inlen + blk * BLOCK;
        if (blk < pl->full || off + BLOCK <= pl->batch_bytes) {
            p[l] = in + off;
        } else {
            memcpy(copy[l], in + off, pl->rem);
            memset(copy[l] + pl->rem, 0, BLOCK - pl->rem);
            p[l] = copy[l];
            *copied = 1;
        }
    }
}
