/* LMS / LM-OTS type tables, names, and HSS parameter sets. */
#include "lms/params.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#define SHA HBS_LMS_HASH_SHA256
#define SHAKE HBS_LMS_HASH_SHAKE

/* RFC 8554 section 5.1 (SHA-256, m = 32) and RFC 9858 / SP 800-208 (the rest). */
const hbs_lms_type hbs_lms_types[HBS_LMS_NUM_TYPES] = {
    {0x05, "LMS_SHA256_M32_H5", SHA, 32, 5},   {0x06, "LMS_SHA256_M32_H10", SHA, 32, 10},
    {0x07, "LMS_SHA256_M32_H15", SHA, 32, 15}, {0x08, "LMS_SHA256_M32_H20", SHA, 32, 20},
    {0x09, "LMS_SHA256_M32_H25", SHA, 32, 25}, {0x0a, "LMS_SHA256_M24_H5", SHA, 24, 5},
    {0x0b, "LMS_SHA256_M24_H10", SHA, 24, 10}, {0x0c, "LMS_SHA256_M24_H15", SHA, 24, 15},
    {0x0d, "LMS_SHA256_M24_H20", SHA, 24, 20}, {0x0e, "LMS_SHA256_M24_H25", SHA, 24, 25},
    {0x0f, "LMS_SHAKE_M32_H5", SHAKE, 32, 5},  {0x10, "LMS_SHAKE_M32_H10", SHAKE, 32, 10},
    {0x11, "LMS_SHAKE_M32_H15", SHAKE, 32, 15}, {0x12, "LMS_SHAKE_M32_H20", SHAKE, 32, 20},
    {0x13, "LMS_SHAKE_M32_H25", SHAKE, 32, 25}, {0x14, "LMS_SHAKE_M24_H5", SHAKE, 24, 5},
    {0x15, "LMS_SHAKE_M24_H10", SHAKE, 24, 10}, {0x16, "LMS_SHAKE_M24_H15", SHAKE, 24, 15},
    {0x17, "LMS_SHAKE_M24_H20", SHAKE, 24, 20}, {0x18, "LMS_SHAKE_M24_H25", SHAKE, 24, 25},
};

/* RFC 8554 section 4.1 and Appendix B: p and ls follow from n and w (a unit test recomputes
 * them). */
const hbs_lmots_type hbs_lmots_types[HBS_LMOTS_NUM_TYPES] = {
    {0x01, "LMOTS_SHA256_N32_W1", SHA, 32, 1, 265, 7},
    {0x02, "LMOTS_SHA256_N32_W2", SHA, 32, 2, 133, 6},
    {0x03, "LMOTS_SHA256_N32_W4", SHA, 32, 4, 67, 4},
    {0x04, "LMOTS_SHA256_N32_W8", SHA, 32, 8, 34, 0},
    {0x05, "LMOTS_SHA256_N24_W1", SHA, 24, 1, 200, 8},
    {0x06, "LMOTS_SHA256_N24_W2", SHA, 24, 2, 101, 6},
    {0x07, "LMOTS_SHA256_N24_W4", SHA, 24, 4, 51, 4},
    {0x08, "LMOTS_SHA256_N24_W8", SHA, 24, 8, 26, 0},
    {0x09, "LMOTS_SHAKE_N32_W1", SHAKE, 32, 1, 265, 7},
    {0x0a, "LMOTS_SHAKE_N32_W2", SHAKE, 32, 2, 133, 6},
    {0x0b, "LMOTS_SHAKE_N32_W4", SHAKE, 32, 4, 67, 4},
    {0x0c, "LMOTS_SHAKE_N32_W8", SHAKE, 32, 8, 34, 0},
    {0x0d, "LMOTS_SHAKE_N24_W1", SHAKE, 24, 1, 200, 8},
    {0x0e, "LMOTS_SHAKE_N24_W2", SHAKE, 24, 2, 101, 6},
    {0x0f, "LMOTS_SHAKE_N24_W4", SHAKE, 24, 4, 51, 4},
    {0x10, "LMOTS_SHAKE_N24_W8", SHAKE, 24, 8, 26, 0},
};

const hbs_lms_type *hbs_lms_type_by_code(uint32_t code)
{
    for (size_t i = 0; i < HBS_LMS_NUM_TYPES; i++)
        if (hbs_lms_types[i].code == code)
            return &hbs_lms_types[i];
    return NULL;
}

const hbs_lmots_type *hbs_lmots_type_by_code(uint32_t code)
{
    for (size_t i = 0; i < HBS_LMOTS_NUM_TYPES; i++)
        if (hbs_lmots_types[i].code == code)
            return &hbs_lmots_types[i];
    return NULL;
}

const hbs_lms_type *hbs_lms_type_by_name(const char *name)
{
    if (!name)
        return NULL;
    for (size_t i = 0; i < HBS_LMS_NUM_TYPES; i++)
        if (strcasecmp(hbs_lms_types[i].name, name) == 0)
            return &hbs_lms_types[i];
    return NULL;
}

const hbs_lmots_type *hbs_lmots_type_by_name(const char *name)
{
    if (!name)
        return NULL;
    for (size_t i = 0; i < HBS_LMOTS_NUM_TYPES; i++)
        if (strcasecmp(hbs_lmots_types[i].name, name) == 0)
            return &hbs_lmots_types[i];
    return NULL;
}

uint32_t hbs_lms_type_code(const hbs_lms_type *t) { return t ? t->code : 0; }
const char *hbs_lms_type_name(const hbs_lms_type *t) { return t ? t->name : ""; }
unsigned hbs_lms_type_height(const hbs_lms_type *t) { return t ? t->h : 0; }
size_t hbs_lms_type_m(const hbs_lms_type *t) { return t ? t->m : 0; }
uint32_t hbs_lmots_type_code(const hbs_lmots_type *t) { return t ? t->code : 0; }
const char *hbs_lmots_type_name(const hbs_lmots_type *t) { return t ? t->name : ""; }
size_t hbs_lmots_type_n(const hbs_lmots_type *t) { return t ? t->n : 0; }
unsigned hbs_lmots_type_w(const hbs_lmots_type *t) { return t ? t->w : 0; }
unsigned hbs_lmots_type_p(const hbs_lmots_type *t) { return t ? t->p : 0; }

int hbs_lms_types_match(const hbs_lms_type *t, const hbs_lmots_type *o)
{
    return t && o && t->hash == o->hash && t->m == o->n;
}

size_t hbs_lmots_sig_bytes(const hbs_lmots_type *o)
{
    return 4 + (size_t)o->n + (size_t)o->p * o->n;
}

size_t hbs_lms_pk_bytes(const hbs_lms_type *t) { return t ? 24 + (size_t)t->m : 0; }

size_t hbs_lms_sig_bytes(const hbs_lms_type *t, const hbs_lmots_type *ots)
{
    if (!t || !ots)
        return 0;
    return 8 + hbs_lmots_sig_bytes(ots) + (size_t)t->h * t->m;
}

/* ---- HSS parameter sets ---- */

int hbs_hss_params_check(const hbs_hss_params *p)
{
    if (!p || p->levels < 1 || p->levels > HBS_HSS_MAX_LEVELS)
        return HBS_ERR_INVALID_ARGUMENT;
    if (p->cache_height != 0 &&
        (p->cache_height < HBS_HSS_CACHE_MIN || p->cache_height > HBS_HSS_CACHE_MAX))
        return HBS_ERR_INVALID_ARGUMENT;
    for (unsigned i = 0; i < p->levels; i++)
        if (!hbs_lms_types_match(p->lms[i], p->ots[i]))
            return HBS_ERR_UNKNOWN_ALGORITHM;
    return HBS_OK;
}

/* Copies the token [s, e) without surrounding blanks into buf; 0 if empty or too long. */
static int token(char *buf, size_t cap, const char *s, const char *e)
{
    while (s < e && (*s == ' ' || *s == '\t'))
        s++;
    while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
        e--;
    if (e == s || (size_t)(e - s) >= cap)
        return 0;
    memcpy(buf, s, (size_t)(e - s));
    buf[e - s] = '\0';
    return 1;
}

int hbs_hss_params_parse(hbs_hss_params *p, const char *name)
{
    const char *s;
    if (!p || !name)
        return HBS_ERR_INVALID_ARGUMENT;
    memset(p, 0, sizeof *p);
    s = name;
    for (;;) {
        const char *comma = strchr(s, ','), *end = comma ? comma : s + strlen(s);
        const char *slash = memchr(s, '/', (size_t)(end - s));
        char a[32], b[32];
        if (p->levels == HBS_HSS_MAX_LEVELS) {
            memset(p, 0, sizeof *p);
            return HBS_ERR_INVALID_ARGUMENT;
        }
        if (!slash || !token(a, sizeof a, s, slash) || !token(b, sizeof b, slash + 1, end)) {
            memset(p, 0, sizeof *p);
            return HBS_ERR_UNKNOWN_ALGORITHM;
        }
        p->lms[p->levels] = hbs_lms_type_by_name(a);
        p->ots[p->levels] = hbs_lmots_type_by_name(b);
        if (!hbs_lms_types_match(p->lms[p->levels], p->ots[p->levels])) {
            memset(p, 0, sizeof *p);
            return HBS_ERR_UNKNOWN_ALGORITHM;
        }
        p->levels++;
        if (!comma)
            break;
        s = comma + 1;
    }
    return HBS_OK;
}

int hbs_hss_params_name(const hbs_hss_params *p, char *out, size_t outcap, size_t *outlen)
{
    size_t used = 0;
    int err = hbs_hss_params_check(p);
    if (outlen)
        *outlen = 0;
    if (!out || outcap == 0)
        return err ? err : HBS_ERR_BUFFER_TOO_SMALL;
    out[0] = '\0';
    if (err)
        return err;
    for (unsigned i = 0; i < p->levels; i++) {
        int k = snprintf(out + used, outcap - used, "%s%s/%s", i ? "," : "", p->lms[i]->name,
                         p->ots[i]->name);
        if (k < 0 || (size_t)k >= outcap - used) {
            out[0] = '\0';
            return HBS_ERR_BUFFER_TOO_SMALL;
        }
        used += (size_t)k;
    }
    if (outlen)
        *outlen = used;
    return HBS_OK;
}

uint64_t hbs_hss_params_total(const hbs_hss_params *p)
{
    unsigned bits = 0;
    if (hbs_hss_params_check(p) != HBS_OK)
        return 0;
    for (unsigned i = 0; i < p->levels; i++)
        bits += p->lms[i]->h;
    /* 8 levels of H25 would be 2^200: no key gets near 2^64 signatures in practice, so the
     * count saturates rather than wraps. */
    return bits >= 64 ? UINT64_MAX : (uint64_t)1 << bits;
}

size_t hbs_hss_params_pk_bytes(const hbs_hss_params *p)
{
    if (hbs_hss_params_check(p) != HBS_OK)
        return 0;
    return 4 + hbs_lms_pk_bytes(p->lms[0]);
}

size_t hbs_hss_params_sig_bytes(const hbs_hss_params *p)
{
    size_t len = 4;
    if (hbs_hss_params_check(p) != HBS_OK)
        return 0;
    for (unsigned i = 0; i < p->levels; i++) {
        len += hbs_lms_sig_bytes(p->lms[i], p->ots[i]);
        if (i + 1 < p->levels)
            len += hbs_lms_pk_bytes(p->lms[i + 1]);
    }
    return len;
}

/* ---- the list of single-level names ---- */

#define NUM_LEVEL_NAMES 80
static char level_names[NUM_LEVEL_NAMES][48];
static pthread_once_t names_once = PTHREAD_ONCE_INIT;

static void build_names(void)
{
    size_t k = 0;
    for (size_t i = 0; i < HBS_LMS_NUM_TYPES; i++)
        for (size_t j = 0; j < HBS_LMOTS_NUM_TYPES; j++)
            if (hbs_lms_types_match(&hbs_lms_types[i], &hbs_lmots_types[j]) &&
                k < NUM_LEVEL_NAMES)
                snprintf(level_names[k++], sizeof level_names[0], "%s/%s",
                         hbs_lms_types[i].name, hbs_lmots_types[j].name);
}

const char *hbs_lms_name_at(size_t i)
{
    if (i >= NUM_LEVEL_NAMES)
        return NULL;
    pthread_once(&names_once, build_names);
    return level_names[i];
}
