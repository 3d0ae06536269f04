/* The pre-hash functions of HashSLH-DSA (FIPS 205, section 10.2.2). */
#include "slhdsa/prehash.h"

#include <string.h>

#include "hash/hash.h"

typedef struct {
    const char *name;
    uint8_t oid_last; /* 2.16.840.1.101.3.4.2.<oid_last> */
    uint8_t digest;
} prehash_info;

static const prehash_info prehash_table[HBS_PREHASH_NUM] = {
    [HBS_PREHASH_NONE] = {"none", 0, 0},
    [HBS_PREHASH_SHA2_224] = {"SHA2-224", 4, 28},
    [HBS_PREHASH_SHA2_256] = {"SHA2-256", 1, 32},
    [HBS_PREHASH_SHA2_384] = {"SHA2-384", 2, 48},
    [HBS_PREHASH_SHA2_512] = {"SHA2-512", 3, 64},
    [HBS_PREHASH_SHA2_512_224] = {"SHA2-512/224", 5, 28},
    [HBS_PREHASH_SHA2_512_256] = {"SHA2-512/256", 6, 32},
    [HBS_PREHASH_SHA3_224] = {"SHA3-224", 7, 28},
    [HBS_PREHASH_SHA3_256] = {"SHA3-256", 8, 32},
    [HBS_PREHASH_SHA3_384] = {"SHA3-384", 9, 48},
    [HBS_PREHASH_SHA3_512] = {"SHA3-512", 10, 64},
    [HBS_PREHASH_SHAKE_128] = {"SHAKE-128", 11, 32},
    [HBS_PREHASH_SHAKE_256] = {"SHAKE-256", 12, 64},
};

int hbs_prehash_by_name(hbs_prehash *out, const char *name)
{
    if (!out)
        return HBS_ERR_INVALID_ARGUMENT;
    *out = HBS_PREHASH_NONE;
    if (!name)
        return HBS_ERR_UNKNOWN_PREHASH;
    for (int i = 1; i < HBS_PREHASH_NUM; i++) {
        if (strcmp(prehash_table[i].name, name) == 0) {
            *out = (hbs_prehash)i;
            return HBS_OK;
        }
    }
    return HBS_ERR_UNKNOWN_PREHASH;
}

const char *hbs_prehash_name(hbs_prehash ph)
{
    if ((unsigned)ph >= HBS_PREHASH_NUM)
        return NULL;
    return prehash_table[ph].name;
}

size_t hbs_prehash_digest_bytes(hbs_prehash ph)
{
    if ((unsigned)ph >= HBS_PREHASH_NUM)
        return 0;
    return prehash_table[ph].digest;
}

static void sha512_variant(uint8_t *out, void (*init)(hbs_sha512_ctx *), const uint8_t *msg,
                           size_t len)
{
    hbs_sha512_ctx c;
    init(&c);
    hbs_sha512_update(&c, msg, len);
    hbs_sha512_final(&c, out);
}

static void sha3_variant(uint8_t *out, size_t bits, const uint8_t *msg, size_t len)
{
    hbs_keccak_ctx c;
    hbs_sha3_init(&c, bits);
    hbs_keccak_absorb(&c, msg, len);
    hbs_sha3_final(&c, out);
}

size_t hbs_slhdsa_prehash(uint8_t *out, hbs_prehash ph, const uint8_t *msg, size_t msglen)
{
    static const uint8_t oid_prefix[10] = {0x06, 0x09, 0x60, 0x86, 0x48,
                                           0x01, 0x65, 0x03, 0x04, 0x02};
    uint8_t *d = out + SLHDSA_PREHASH_OID_BYTES;
    hbs_sha256_ctx s256;

    if (ph == HBS_PREHASH_NONE || (unsigned)ph >= HBS_PREHASH_NUM)
        return 0;
    memcpy(out, oid_prefix, sizeof oid_prefix);
    out[10] = prehash_table[ph].oid_last;
    switch (ph) {
    case HBS_PREHASH_SHA2_224:
        hbs_sha224_init(&s256);
        hbs_sha256_update(&s256, msg, msglen);
        hbs_sha224_final(&s256, d);
        break;
    case HBS_PREHASH_SHA2_256: hbs_sha256(d, msg, msglen); break;
    case HBS_PREHASH_SHA2_384: sha512_variant(d, hbs_sha384_init, msg, msglen); break;
    case HBS_PREHASH_SHA2_512: sha512_variant(d, hbs_sha512_init, msg, msglen); break;
    case HBS_PREHASH_SHA2_512_224: sha512_variant(d, hbs_sha512_224_init, msg, msglen); break;
    case HBS_PREHASH_SHA2_512_256: sha512_variant(d, hbs_sha512_256_init, msg, msglen); break;
    case HBS_PREHASH_SHA3_224: sha3_variant(d, 224, msg, msglen); break;
    case HBS_PREHASH_SHA3_256: sha3_variant(d, 256, msg, msglen); break;
    case HBS_PREHASH_SHA3_384: sha3_variant(d, 384, msg, msglen); break;
    case HBS_PREHASH_SHA3_512: sha3_variant(d, 512, msg, msglen); break;
    case HBS_PREHASH_SHAKE_128: hbs_shake128(d, 32, msg, msglen); break;
    case HBS_PREHASH_SHAKE_256: hbs_shake256(d, 64, msg, msglen); break;
    default: return 0;
    }
    return SLHDSA_PREHASH_OID_BYTES + prehash_table[ph].digest;
}
