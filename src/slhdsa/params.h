/* SLH-DSA parameter sets as data (FIPS 205, Table 2). One code base serves all 12. */
#ifndef HBS_SLHDSA_PARAMS_H
#define HBS_SLHDSA_PARAMS_H

#include <stddef.h>
#include <stdint.h>

#include "hbs/slhdsa.h"

typedef enum { SLHDSA_FAMILY_SHA2 = 0, SLHDSA_FAMILY_SHAKE = 1 } slhdsa_family;

/* Largest values over all sets, for buffers sized at compile time. */
#define SLHDSA_MAX_N 32
#define SLHDSA_MAX_LEN 67       /* WOTS+ chains: 2n + 3 at n = 32 */
#define SLHDSA_MAX_HP 9         /* h' = h / d */
#define SLHDSA_MAX_D 22
#define SLHDSA_MAX_K 35
#define SLHDSA_MAX_A 14
#define SLHDSA_MAX_M 49
#define SLHDSA_W 16             /* lg_w = 4 in every FIPS 205 set */
#define SLHDSA_LG_W 4

struct hbs_slhdsa_params {
    hbs_slhdsa_id id;
    const char *name;
    slhdsa_family family;
    uint32_t n;   /* security parameter: bytes per hash value */
    uint32_t h;   /* total hypertree height */
    uint32_t d;   /* layers */
    uint32_t hp;  /* h' = h / d: height of one XMSS tree */
    uint32_t a;   /* FORS tree height */
    uint32_t k;   /* FORS trees */
    uint32_t m;   /* bytes of H_msg output */
    /* derived */
    uint32_t len1, len2, len; /* WOTS+ chain counts */
    size_t wots_sig_bytes;    /* len * n */
    size_t xmss_sig_bytes;    /* (len + h') * n */
    size_t fors_sig_bytes;    /* k * (a + 1) * n */
    size_t sig_bytes;
};

#endif
