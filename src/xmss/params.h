/* XMSS / XMSS^MT parameter sets as data (RFC 8391 section 5, SP 800-208 section 5). */
#ifndef HBS_XMSS_PARAMS_H
#define HBS_XMSS_PARAMS_H

#include <stddef.h>
#include <stdint.h>

#include "hbs/xmss.h"

/* The hash function behind F, H, H_msg, PRF and PRF_keygen. */
typedef enum {
    XMSS_FUNC_SHA256,   /* SHA-256, n = 32, or truncated to n = 24 (SHA-256/192) */
    XMSS_FUNC_SHA512,   /* SHA-512, n = 64 */
    XMSS_FUNC_SHAKE128, /* RFC 8391 SHAKE sets with n = 32 */
    XMSS_FUNC_SHAKE256  /* RFC 8391 SHAKE sets with n = 64, SP 800-208 SHAKE256/256 and /192 */
} xmss_func;

#define XMSS_W 16
#define XMSS_MAX_N 64
#define XMSS_MAX_LEN 131 /* WOTS+ chains for n = 64 */
#define XMSS_MAX_LAYERS 12
#define XMSS_MAX_TREE_HEIGHT 20
#define XMSS_ADRS_BYTES 32

struct hbs_xmss_params {
    const char *name;
    uint32_t oid;
    uint8_t mt;          /* 0: XMSS, 1: XMSS^MT */
    uint8_t func;        /* xmss_func */
    uint8_t n;           /* bytes per hash value */
    uint8_t padlen;      /* bytes of the toByte(x, padlen) domain prefix: n, or 4 for n = 24 */
    uint8_t h;           /* total height */
    uint8_t d;           /* layers */
    uint8_t tree_h;      /* height of one tree: h / d */
    uint8_t len1, len2, len; /* WOTS+ chains: message digits, checksum digits, total */
    uint8_t idx_bytes;   /* index field of a signature */
    uint32_t sig_bytes;
    uint32_t pk_bytes;
};

/* Number of parameter sets (XMSS and XMSS^MT together). */
size_t hbs_xmss_params_count(void);

#endif
