/* LMS and LM-OTS types as data (RFC 8554 section 4.1 and 5.1, RFC 9858, SP 800-208): one
 * table row per IANA typecode; every size the code needs is a field, so one code base serves
 * every type. */
#ifndef HBS_LMS_PARAMS_H
#define HBS_LMS_PARAMS_H

#include <stddef.h>
#include <stdint.h>

#include "hbs/lms.h"

/* The hash function H of a type: SHA-256 (truncated to n bytes for n = 24) or SHAKE256 with
 * an n-byte output. */
enum { HBS_LMS_HASH_SHA256 = 0, HBS_LMS_HASH_SHAKE = 1 };

struct hbs_lmots_type {
    uint32_t code;
    const char *name;
    uint8_t hash; /* HBS_LMS_HASH_* */
    uint8_t n;    /* bytes per hash output */
    uint8_t w;    /* Winternitz parameter: bits per chain */
    uint16_t p;   /* chains: ceil(8n/w) for the digest plus the checksum chains */
    uint8_t ls;   /* left shift of the checksum */
};

struct hbs_lms_type {
    uint32_t code;
    const char *name;
    uint8_t hash;
    uint8_t m; /* bytes per node */
    uint8_t h; /* tree height */
};

#define HBS_LMS_NUM_TYPES 20
#define HBS_LMOTS_NUM_TYPES 16
#define HBS_LMOTS_MAX_P 265

extern const hbs_lms_type hbs_lms_types[HBS_LMS_NUM_TYPES];
extern const hbs_lmots_type hbs_lmots_types[HBS_LMOTS_NUM_TYPES];

/* 1 if the two types use the same hash and output length (required within one level). */
int hbs_lms_types_match(const hbs_lms_type *t, const hbs_lmots_type *o);

/* Sizes: LM-OTS signature 4 + n + p*n; LMS signature 4 + that + 4 + h*m. */
size_t hbs_lmots_sig_bytes(const hbs_lmots_type *o);

/* Big-endian helpers used by every LMS encoding. */
static inline void hbs_lms_put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static inline uint32_t hbs_lms_get32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline void hbs_lms_put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

#endif
