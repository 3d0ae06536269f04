/* The tail of a batch's SHA-256 messages in 16-byte chunks, for the kernels that assemble
 * blocks from 128-bit loads (AVX2, SHA-NI). All messages have the same length, so the tail
 * (last partial block, 0x80, zeros, bit length) differs between messages only in the
 * message bytes: whole chunks are loaded directly, the one chunk that ends the message is
 * taken from a 16-byte load ending at the message's last byte and moved into place by one
 * byte shuffle, and the padding, made once per batch, is OR'ed in. Static inline, so each
 * kernel compiles it with its own instruction-set flags. */
#ifndef HBS_HASH_X86_SHA256_TAIL128_H
#define HBS_HASH_X86_SHA256_TAIL128_H

#include <immintrin.h>
#include <string.h>

#include "hash/x86/sha256_lanes.h"

/* Byte order of each 32-bit word reversed. */
static ALWAYS_INLINE __m128i bswap_mask128(void)
{
    return _mm_set_epi8(12, 13, 14, 15, 8, 9, 10, 11, 4, 5, 6, 7, 0, 1, 2, 3);
}

/* The 16 bytes at p as four big-endian words. */
static ALWAYS_INLINE __m128i load_be128(const uint8_t *p)
{
    return _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(const void *)p), bswap_mask128());
}

typedef struct {
    __m128i pad[4];     /* first tail block, words byte-swapped, message bytes zero */
    __m128i pmask;      /* shuffle placing the partial chunk's message bytes (see below) */
    size_t full;        /* whole message blocks */
    size_t rem;         /* message bytes in the first tail block */
    unsigned nwhole;    /* whole 16-byte chunks of message in the first tail block */
    int partial;        /* chunk nwhole holds message bytes and padding */
    int small;          /* inlen < 16: the partial chunk cannot come from a load ending at
                           the message end without reading before the message */
    int tail_const;     /* the first tail block is the same for all (rem == 0) */
    int second_const;   /* a second tail block follows, the same for all */
} sha256_tail;

/* Plans the tail of messages of inlen bytes after `bytes` bytes of prefix. Returns the tail
 * block that is the same for every message (in tail, the caller's 128 bytes), whose
 * schedule the caller computes once, or NULL where there is none. */
static inline const uint8_t *sha256_tail_plan(sha256_tail *p, uint8_t tail[128],
                                              uint64_t bytes, size_t inlen)
{
    uint8_t pm[16];
    size_t taillen, r;
    p->full = inlen / 64;
    p->rem = inlen % 64;
    p->nwhole = (unsigned)(p->rem / 16);
    r = p->rem % 16;
    p->partial = r != 0;
    p->small = inlen < 16;
    taillen = p->rem + 9 <= 64 ? 64 : 128;
    memset(tail, 0, 128);
    tail[p->rem] = 0x80;
    store_be64(tail + taillen - 8, (bytes + inlen) << 3);
    for (unsigned c = 0; c < 4; c++)
        p->pad[c] = load_be128(tail + 16 * c);
    /* Byte j of the byte-swapped partial chunk is byte j ^ 3 of the message chunk, which is
     * byte (j ^ 3) + 16 - r of the 16 bytes ending at the message end, if j ^ 3 < r. */
    for (unsigned j = 0; j < 16; j++)
        pm[j] = (j ^ 3u) < r ? (uint8_t)((j ^ 3u) + 16 - r) : 0x80;
    p->pmask = _mm_loadu_si128((const __m128i *)(const void *)pm);
    p->tail_const = p->rem == 0;
    p->second_const = taillen == 128;
    return p->tail_const ? tail : p->second_const ? tail + 64 : NULL;
}

/* Chunks of the first tail block of the message at m (byte-swapped words). */
static ALWAYS_INLINE void sha256_tail_load(__m128i r[4], const sha256_tail *p,
                                           const uint8_t *m)
{
    const uint8_t *t = m + 64 * p->full;
    UNROLL(4)
    for (unsigned c = 0; c < 4; c++) {
        if (c < p->nwhole) {
            r[c] = load_be128(t + 16 * c);
        } else if (c == p->nwhole && p->partial) {
            __m128i x;
            if (!p->small) {
                x = _mm_loadu_si128((const __m128i *)(const void *)(t + p->rem - 16));
            } else {
                /* inlen < 16: copy the message, right-aligned as the load above would */
                uint8_t b[16] = {0};
                for (size_t i = 0; i < p->rem; i++)
                    b[16 - p->rem + i] = t[i];
                x = _mm_loadu_si128((const __m128i *)(const void *)b);
                hbs_memzero(b, sizeof b);
            }
            r[c] = _mm_or_si128(_mm_shuffle_epi8(x, p->pmask), p->pad[c]);
        } else {
            r[c] = p->pad[c];
        }
    }
}

#endif
