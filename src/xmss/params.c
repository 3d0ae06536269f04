#include "xmss/params.h"

#include <string.h>

/* One row per set. Everything else follows from (n, h, d) with w = 16:
 * len1 = 8n / 4 = 2n digits; len2 = floor(log2(len1 * 15) / 4) + 1 = 3 for n = 24, 32, 64;
 * padlen = n, except 4 for the n = 24 sets of SP 800-208;
 * index bytes = 4 for XMSS, ceil(h / 8) for XMSS^MT. */
#define XSET(nm, o, is_mt, fn, nn, hh, dd)                                                   \
    {                                                                                        \
        nm, o, is_mt, fn, nn, (nn) == 24 ? 4 : (nn), hh, dd, (hh) / (dd), 2 * (nn), 3,       \
            2 * (nn) + 3, (is_mt) ? ((hh) + 7) / 8 : 4,                                      \
            ((is_mt) ? ((hh) + 7) / 8 : 4) + (nn) + (dd) * (2 * (nn) + 3) * (nn) + (hh) * (nn), \
            4 + 2 * (nn)                                                                     \
    }

static const hbs_xmss_params xmss_sets[] = {
    /* XMSS: RFC 8391 OIDs 0x01-0x0c, SP 800-208 OIDs 0x0d-0x15 */
    XSET("XMSS-SHA2_10_256", 0x01, 0, XMSS_FUNC_SHA256, 32, 10, 1),
    XSET("XMSS-SHA2_16_256", 0x02, 0, XMSS_FUNC_SHA256, 32, 16, 1),
    XSET("XMSS-SHA2_20_256", 0x03, 0, XMSS_FUNC_SHA256, 32, 20, 1),
    XSET("XMSS-SHA2_10_512", 0x04, 0, XMSS_FUNC_SHA512, 64, 10, 1),
    XSET("XMSS-SHA2_16_512", 0x05, 0, XMSS_FUNC_SHA512, 64, 16, 1),
    XSET("XMSS-SHA2_20_512", 0x06, 0, XMSS_FUNC_SHA512, 64, 20, 1),
    XSET("XMSS-SHAKE_10_256", 0x07, 0, XMSS_FUNC_SHAKE128, 32, 10, 1),
    XSET("XMSS-SHAKE_16_256", 0x08, 0, XMSS_FUNC_SHAKE128, 32, 16, 1),
    XSET("XMSS-SHAKE_20_256", 0x09, 0, XMSS_FUNC_SHAKE128, 32, 20, 1),
    XSET("XMSS-SHAKE_10_512", 0x0a, 0, XMSS_FUNC_SHAKE256, 64, 10, 1),
    XSET("XMSS-SHAKE_16_512", 0x0b, 0, XMSS_FUNC_SHAKE256, 64, 16, 1),
    XSET("XMSS-SHAKE_20_512", 0x0c, 0, XMSS_FUNC_SHAKE256, 64, 20, 1),
    XSET("XMSS-SHA2_10_192", 0x0d, 0, XMSS_FUNC_SHA256, 24, 10, 1),
    XSET("XMSS-SHA2_16_192", 0x0e, 0, XMSS_FUNC_SHA256, 24, 16, 1),
    XSET("XMSS-SHA2_20_192", 0x0f, 0, XMSS_FUNC_SHA256, 24, 20, 1),
    XSET("XMSS-SHAKE256_10_256", 0x10, 0, XMSS_FUNC_SHAKE256, 32, 10, 1),
    XSET("XMSS-SHAKE256_16_256", 0x11, 0, XMSS_FUNC_SHAKE256, 32, 16, 1),
    XSET("XMSS-SHAKE256_20_256", 0x12, 0, XMSS_FUNC_SHAKE256, 32, 20, 1),
    XSET("XMSS-SHAKE256_10_192", 0x13, 0, XMSS_FUNC_SHAKE256, 24, 10, 1),
    XSET("XMSS-SHAKE256_16_192", 0x14, 0, XMSS_FUNC_SHAKE256, 24, 16, 1),
    XSET("XMSS-SHAKE256_20_192", 0x15, 0, XMSS_FUNC_SHAKE256, 24, 20, 1),
    /* XMSS^MT: RFC 8391 OIDs 0x01-0x20, SP 800-208 OIDs 0x21-0x38 */
    XSET("XMSSMT-SHA2_20/2_256", 0x01, 1, XMSS_FUNC_SHA256, 32, 20, 2),
    XSET("XMSSMT-SHA2_20/4_256", 0x02, 1, XMSS_FUNC_SHA256, 32, 20, 4),
    XSET("XMSSMT-SHA2_40/2_256", 0x03, 1, XMSS_FUNC_SHA256, 32, 40, 2),
    XSET("XMSSMT-SHA2_40/4_256", 0x04, 1, XMSS_FUNC_SHA256, 32, 40, 4),
    XSET("XMSSMT-SHA2_40/8_256", 0x05, 1, XMSS_FUNC_SHA256, 32, 40, 8),
    XSET("XMSSMT-SHA2_60/3_256", 0x06, 1, XMSS_FUNC_SHA256, 32, 60, 3),
    XSET("XMSSMT-SHA2_60/6_256", 0x07, 1, XMSS_FUNC_SHA256, 32, 60, 6),
    XSET("XMSSMT-SHA2_60/12_256", 0x08, 1, XMSS_FUNC_SHA256, 32, 60, 12),
    XSET("XMSSMT-SHA2_20/2_512", 0x09, 1, XMSS_FUNC_SHA512, 64, 20, 2),
    XSET("XMSSMT-SHA2_20/4_512", 0x0a, 1, XMSS_FUNC_SHA512, 64, 20, 4),
    XSET("XMSSMT-SHA2_40/2_512", 0x0b, 1, XMSS_FUNC_SHA512, 64, 40, 2),
    XSET("XMSSMT-SHA2_40/4_512", 0x0c, 1, XMSS_FUNC_SHA512, 64, 40, 4),
    XSET("XMSSMT-SHA2_40/8_512", 0x0d, 1, XMSS_FUNC_SHA512, 64, 40, 8),
    XSET("XMSSMT-SHA2_60/3_512", 0x0e, 1, XMSS_FUNC_SHA512, 64, 60, 3),
    XSET("XMSSMT-SHA2_60/6_512", 0x0f, 1, XMSS_FUNC_SHA512, 64, 60, 6),
    XSET("XMSSMT-SHA2_60/12_512", 0x10, 1, XMSS_FUNC_SHA512, 64, 60, 12),
    XSET("XMSSMT-SHAKE_20/2_256", 0x11, 1, XMSS_FUNC_SHAKE128, 32, 20, 2),
    XSET("XMSSMT-SHAKE_20/4_256", 0x12, 1, XMSS_FUNC_SHAKE128, 32, 20, 4),
    XSET("XMSSMT-SHAKE_40/2_256", 0x13, 1, XMSS_FUNC_SHAKE128, 32, 40, 2),
    XSET("XMSSMT-SHAKE_40/4_256", 0x14, 1, XMSS_FUNC_SHAKE128, 32, 40, 4),
    XSET("XMSSMT-SHAKE_40/8_256", 0x15, 1, XMSS_FUNC_SHAKE128, 32, 40, 8),
    XSET("XMSSMT-SHAKE_60/3_256", 0x16, 1, XMSS_FUNC_SHAKE128, 32, 60, 3),
    XSET("XMSSMT-SHAKE_60/6_256", 0x17, 1, XMSS_FUNC_SHAKE128, 32, 60, 6),
    XSET("XMSSMT-SHAKE_60/12_256", 0x18, 1, XMSS_FUNC_SHAKE128, 32, 60, 12),
    XSET("XMSSMT-SHAKE_20/2_512", 0x19, 1, XMSS_FUNC_SHAKE256, 64, 20, 2),
    XSET("XMSSMT-SHAKE_20/4_512", 0x1a, 1, XMSS_FUNC_SHAKE256, 64, 20, 4),
    XSET("XMSSMT-SHAKE_40/2_512", 0x1b, 1, XMSS_FUNC_SHAKE256, 64, 40, 2),
    XSET("XMSSMT-SHAKE_40/4_512", 0x1c, 1, XMSS_FUNC_SHAKE256, 64, 40, 4),
    XSET("XMSSMT-SHAKE_40/8_512", 0x1d, 1, XMSS_FUNC_SHAKE256, 64, 40, 8),
    XSET("XMSSMT-SHAKE_60/3_512", 0x1e, 1, XMSS_FUNC_SHAKE256, 64, 60, 3),
    XSET("XMSSMT-SHAKE_60/6_512", 0x1f, 1, XMSS_FUNC_SHAKE256, 64, 60, 6),
    XSET("XMSSMT-SHAKE_60/12_512", 0x20, 1, XMSS_FUNC_SHAKE256, 64, 60, 12),
    XSET("XMSSMT-SHA2_20/2_192", 0x21, 1, XMSS_FUNC_SHA256, 24, 20, 2),
    XSET("XMSSMT-SHA2_20/4_192", 0x22, 1, XMSS_FUNC_SHA256, 24, 20, 4),
    XSET("XMSSMT-SHA2_40/2_192", 0x23, 1, XMSS_FUNC_SHA256, 24, 40, 2),
    XSET("XMSSMT-SHA2_40/4_192", 0x24, 1, XMSS_FUNC_SHA256, 24, 40, 4),
    XSET("XMSSMT-SHA2_40/8_192", 0x25, 1, XMSS_FUNC_SHA256, 24, 40, 8),
    XSET("XMSSMT-SHA2_60/3_192", 0x26, 1, XMSS_FUNC_SHA256, 24, 60, 3),
    XSET("XMSSMT-SHA2_60/6_192", 0x27, 1, XMSS_FUNC_SHA256, 24, 60, 6),
    XSET("XMSSMT-SHA2_60/12_192", 0x28, 1, XMSS_FUNC_SHA256, 24, 60, 12),
    XSET("XMSSMT-SHAKE256_20/2_256", 0x29, 1, XMSS_FUNC_SHAKE256, 32, 20, 2),
    XSET("XMSSMT-SHAKE256_20/4_256", 0x2a, 1, XMSS_FUNC_SHAKE256, 32, 20, 4),
    XSET("XMSSMT-SHAKE256_40/2_256", 0x2b, 1, XMSS_FUNC_SHAKE256, 32, 40, 2),
    XSET("XMSSMT-SHAKE256_40/4_256", 0x2c, 1, XMSS_FUNC_SHAKE256, 32, 40, 4),
    XSET("XMSSMT-SHAKE256_40/8_256", 0x2d, 1, XMSS_FUNC_SHAKE256, 32, 40, 8),
    XSET("XMSSMT-SHAKE256_60/3_256", 0x2e, 1, XMSS_FUNC_SHAKE256, 32, 60, 3),
    XSET("XMSSMT-SHAKE256_60/6_256", 0x2f, 1, XMSS_FUNC_SHAKE256, 32, 60, 6),
    XSET("XMSSMT-SHAKE256_60/12_256", 0x30, 1, XMSS_FUNC_SHAKE256, 32, 60, 12),
    XSET("XMSSMT-SHAKE256_20/2_192", 0x31, 1, XMSS_FUNC_SHAKE256, 24, 20, 2),
    XSET("XMSSMT-SHAKE256_20/4_192", 0x32, 1, XMSS_FUNC_SHAKE256, 24, 20, 4),
    XSET("XMSSMT-SHAKE256_40/2_192", 0x33, 1, XMSS_FUNC_SHAKE256, 24, 40, 2),
    XSET("XMSSMT-SHAKE256_40/4_192", 0x34, 1, XMSS_FUNC_SHAKE256, 24, 40, 4),
    XSET("XMSSMT-SHAKE256_40/8_192", 0x35, 1, XMSS_FUNC_SHAKE256, 24, 40, 8),
    XSET("XMSSMT-SHAKE256_60/3_192", 0x36, 1, XMSS_FUNC_SHAKE256, 24, 60, 3),
    XSET("XMSSMT-SHAKE256_60/6_192", 0x37, 1, XMSS_FUNC_SHAKE256, 24, 60, 6),
    XSET("XMSSMT-SHAKE256_60/12_192", 0x38, 1, XMSS_FUNC_SHAKE256, 24, 60, 12),
};

#define XMSS_NUM_SETS (sizeof xmss_sets / sizeof xmss_sets[0])

size_t hbs_xmss_params_count(void) { return XMSS_NUM_SETS; }

const hbs_xmss_params *hbs_xmss_params_at(size_t i)
{
    return i < XMSS_NUM_SETS ? &xmss_sets[i] : NULL;
}

static int lower(int c) { return c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c; }

static int same_name(const char *a, const char *b)
{
    for (; *a && *b; a++, b++)
        if (lower((unsigned char)*a) != lower((unsigned char)*b))
            return 0;
    return *a == *b;
}

const hbs_xmss_params *hbs_xmss_params_by_name(const char *name)
{
    if (!name)
        return NULL;
    for (size_t i = 0; i < XMSS_NUM_SETS; i++)
        if (same_name(name, xmss_sets[i].name))
            return &xmss_sets[i];
    return NULL;
}

const hbs_xmss_params *hbs_xmss_params_by_oid(int mt, uint32_t oid)
{
    for (size_t i = 0; i < XMSS_NUM_SETS; i++)
        if (xmss_sets[i].oid == oid && xmss_sets[i].mt == (mt != 0))
            return &xmss_sets[i];
    return NULL;
}

const char *hbs_xmss_name(const hbs_xmss_params *p) { return p ? p->name : NULL; }
uint32_t hbs_xmss_oid(const hbs_xmss_params *p) { return p ? p->oid : 0; }
int hbs_xmss_is_mt(const hbs_xmss_params *p) { return p ? p->mt : 0; }
size_t hbs_xmss_n(const hbs_xmss_params *p) { return p ? p->n : 0; }
unsigned hbs_xmss_height(const hbs_xmss_params *p) { return p ? p->h : 0; }
unsigned hbs_xmss_layers(const hbs_xmss_params *p) { return p ? p->d : 0; }
size_t hbs_xmss_pk_bytes(const hbs_xmss_params *p) { return p ? p->pk_bytes : 0; }
size_t hbs_xmss_params_sig_bytes(const hbs_xmss_params *p) { return p ? p->sig_bytes : 0; }
