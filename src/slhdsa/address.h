/* ADRS (FIPS 205, section 4.2): 32 bytes of big-endian words, kept in byte form so the
 * hash layer can consume it directly (and compress it to ADRSc for the SHA-2 sets). */
#ifndef HBS_SLHDSA_ADDRESS_H
#define HBS_SLHDSA_ADDRESS_H

#include <stdint.h>
#include <string.h>

#define SLHDSA_ADRS_BYTES 32
#define SLHDSA_ADRSC_BYTES 22

enum {
    ADRS_WOTS_HASH = 0,
    ADRS_WOTS_PK = 1,
    ADRS_TREE = 2,
    ADRS_FORS_TREE = 3,
    ADRS_FORS_ROOTS = 4,
    ADRS_WOTS_PRF = 5,
    ADRS_FORS_PRF = 6,
};

typedef struct {
    uint8_t b[SLHDSA_ADRS_BYTES];
} slhdsa_adrs;

static inline void adrs_put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static inline uint32_t adrs_get32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline void adrs_set_layer(slhdsa_adrs *a, uint32_t layer) { adrs_put32(a->b, layer); }

/* The tree address is 12 bytes; FIPS 205 tree indices fit in the low 8. */
static inline void adrs_set_tree(slhdsa_adrs *a, uint64_t tree)
{
    memset(a->b + 4, 0, 4);
    adrs_put32(a->b + 8, (uint32_t)(tree >> 32));
    adrs_put32(a->b + 12, (uint32_t)tree);
}

/* setTypeAndClear: the type changes and the last 12 bytes are zeroed. */
static inline void adrs_set_type(slhdsa_adrs *a, uint32_t type)
{
    adrs_put32(a->b + 16, type);
    memset(a->b + 20, 0, 12);
}

static inline void adrs_set_keypair(slhdsa_adrs *a, uint32_t kp) { adrs_put32(a->b + 20, kp); }
static inline uint32_t adrs_keypair(const slhdsa_adrs *a) { return adrs_get32(a->b + 20); }
static inline void adrs_set_chain(slhdsa_adrs *a, uint32_t c) { adrs_put32(a->b + 24, c); }
static inline void adrs_set_hash(slhdsa_adrs *a, uint32_t h) { adrs_put32(a->b + 28, h); }
static inline void adrs_set_tree_height(slhdsa_adrs *a, uint32_t z) { adrs_put32(a->b + 24, z); }
static inline void adrs_set_tree_index(slhdsa_adrs *a, uint32_t i) { adrs_put32(a->b + 28, i); }
static inline uint32_t adrs_tree_index(const slhdsa_adrs *a) { return adrs_get32(a->b + 28); }

/* ADRSc for the SHA-2 sets: layer (1) || tree (8) || type (1) || last 12 bytes. */
static inline void adrs_compress(uint8_t c[SLHDSA_ADRSC_BYTES], const slhdsa_adrs *a)
{
    c[0] = a->b[3];
    memcpy(c + 1, a->b + 8, 8);
    c[9] = a->b[19];
    memcpy(c + 10, a->b + 20, 12);
}

#endif
