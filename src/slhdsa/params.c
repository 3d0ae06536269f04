#include "slhdsa/params.h"

#include <string.h>

#define WOTS_LEN1(n) (2 * (n))
#define WOTS_LEN(n) (WOTS_LEN1(n) + 3)
#define SET(ID, NAME, FAM, N, H, D, A, K, M)                                                 \
    {ID, NAME, FAM, N, H, D, (H) / (D), A, K, M, WOTS_LEN1(N), 3, WOTS_LEN(N),                 \
     (size_t)WOTS_LEN(N) * (N), (size_t)(WOTS_LEN(N) + (H) / (D)) * (N),                      \
     (size_t)(K) * ((A) + 1) * (N),                                                           \
     (size_t)(N) * (1 + (size_t)(K) * ((A) + 1) + (size_t)(H) + (size_t)(D) * WOTS_LEN(N))}

static const struct hbs_slhdsa_params slhdsa_sets[HBS_SLHDSA_NUM_PARAMS] = {
    SET(HBS_SLHDSA_SHA2_128S, "SLH-DSA-SHA2-128s", SLHDSA_FAMILY_SHA2, 16, 63, 7, 12, 14, 30),
    SET(HBS_SLHDSA_SHA2_128F, "SLH-DSA-SHA2-128f", SLHDSA_FAMILY_SHA2, 16, 66, 22, 6, 33, 34),
    SET(HBS_SLHDSA_SHA2_192S, "SLH-DSA-SHA2-192s", SLHDSA_FAMILY_SHA2, 24, 63, 7, 14, 17, 39),
    SET(HBS_SLHDSA_SHA2_192F, "SLH-DSA-SHA2-192f", SLHDSA_FAMILY_SHA2, 24, 66, 22, 8, 33, 42),
    SET(HBS_SLHDSA_SHA2_256S, "SLH-DSA-SHA2-256s", SLHDSA_FAMILY_SHA2, 32, 64, 8, 14, 22, 47),
    SET(HBS_SLHDSA_SHA2_256F, "SLH-DSA-SHA2-256f", SLHDSA_FAMILY_SHA2, 32, 68, 17, 9, 35, 49),
    SET(HBS_SLHDSA_SHAKE_128S, "SLH-DSA-SHAKE-128s", SLHDSA_FAMILY_SHAKE, 16, 63, 7, 12, 14, 30),
    SET(HBS_SLHDSA_SHAKE_128F, "SLH-DSA-SHAKE-128f", SLHDSA_FAMILY_SHAKE, 16, 66, 22, 6, 33, 34),
    SET(HBS_SLHDSA_SHAKE_192S, "SLH-DSA-SHAKE-192s", SLHDSA_FAMILY_SHAKE, 24, 63, 7, 14, 17, 39),
    SET(HBS_SLHDSA_SHAKE_192F, "SLH-DSA-SHAKE-192f", SLHDSA_FAMILY_SHAKE, 24, 66, 22, 8, 33, 42),
    SET(HBS_SLHDSA_SHAKE_256S, "SLH-DSA-SHAKE-256s", SLHDSA_FAMILY_SHAKE, 32, 64, 8, 14, 22, 47),
    SET(HBS_SLHDSA_SHAKE_256F, "SLH-DSA-SHAKE-256f", SLHDSA_FAMILY_SHAKE, 32, 68, 17, 9, 35, 49),
};

const hbs_slhdsa_params *hbs_slhdsa_params_get(hbs_slhdsa_id id)
{
    if ((unsigned)id >= HBS_SLHDSA_NUM_PARAMS)
        return NULL;
    return &slhdsa_sets[id];
}

const hbs_slhdsa_params *hbs_slhdsa_params_by_name(const char *name)
{
    if (!name)
        return NULL;
    for (size_t i = 0; i < HBS_SLHDSA_NUM_PARAMS; i++)
        if (strcmp(slhdsa_sets[i].name, name) == 0)
            return &slhdsa_sets[i];
    return NULL;
}

hbs_slhdsa_id hbs_slhdsa_params_id(const hbs_slhdsa_params *p) { return p->id; }
const char *hbs_slhdsa_name(const hbs_slhdsa_params *p) { return p ? p->name : NULL; }
size_t hbs_slhdsa_n(const hbs_slhdsa_params *p) { return p ? p->n : 0; }
size_t hbs_slhdsa_pk_bytes(const hbs_slhdsa_params *p) { return p ? 2 * (size_t)p->n : 0; }
size_t hbs_slhdsa_sk_bytes(const hbs_slhdsa_params *p) { return p ? 4 * (size_t)p->n : 0; }
size_t hbs_slhdsa_sig_bytes(const hbs_slhdsa_params *p) { return p ? p->sig_bytes : 0; }
size_t hbs_slhdsa_seed_bytes(const hbs_slhdsa_params *p) { return p ? 3 * (size_t)p->n : 0; }
