/* GPU tests of hbs_gpu_stateful_verify_device, the device-resident batch verifier of LMS/HSS
 * and XMSS/XMSS^MT: for sets of every family, its verdicts equal the CPU verifier's on valid
 * signatures, on copies with a bit flipped at many places (index, randomizer, type codes,
 * chains, paths), on altered messages and on altered public keys, with a key per item and
 * with one key for all; and its argument checks. Without a GPU the tests skip. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hbs/gpu.h"
#include "hbs/stateful.h"
#include "test.h"

static int have_gpu(void)
{
    if (hbs_gpu_device_count() > 0)
        return 1;
    test_skip("no CUDA GPU");
    return 0;
}

static const char *const dv_sets[] = {
    "XMSS-SHA2_10_256",
    "XMSS-SHA2_10_192",
    "XMSS-SHAKE256_10_256",
    "XMSSMT-SHA2_20/4_256",
    "LMS_SHA256_M32_H5/LMOTS_SHA256_N32_W1",
    "LMS_SHA256_M32_H10/LMOTS_SHA256_N32_W4",
    "LMS_SHA256_M32_H5/LMOTS_SHA256_N32_W4,LMS_SHA256_M32_H5/LMOTS_SHA256_N32_W8",
    "LMS_SHAKE_M24_H5/LMOTS_SHAKE_N24_W2",
};
#define DV_SETS (sizeof dv_sets / sizeof dv_sets[0])
#define DV_MSGS 4
#define DV_PER_MSG 18 /* the valid item, 12 signature flips, a message flip, 4 key flips */

/* The items of one set, packed as the device entry wants them, and the CPU's verdicts. */
typedef struct {
    size_t count, sb, pkb;
    uint8_t *sigs, *pks, *mp;
    uint64_t moff[DV_MSGS * DV_PER_MSG];
    uint32_t mlen[DV_MSGS * DV_PER_MSG];
    int cpu[DV_MSGS * DV_PER_MSG];
} dv_items;

static void dv_free(dv_items *it)
{
    free(it->sigs);
    free(it->pks);
    free(it->mp);
}

/* Signs DV_MSGS messages with a new key of alg and builds the items. */
static int dv_build(const char *alg, dv_items *it)
{
    char path[4096];
    static unsigned serial;
    uint8_t pk[HBS_STATEFUL_MAX_PK_BYTES];
    size_t pklen = 0, n = 0, mat = 0;
    hbs_stateful_key *k = NULL;
    const int family = hbs_stateful_family_of(alg);
    memset(it, 0, sizeof *it);
    snprintf(path, sizeof path, "%s/gsd-%u.key", test_tmpdir(), serial++);
    CHECK_INT(hbs_stateful_keygen(alg, path, pk, sizeof pk, &pklen, NULL, 0, NULL, NULL), HBS_OK);
    CHECK_INT(hbs_stateful_open(&k, path, HBS_STATEFUL_NO_SYNC, 16), HBS_OK);
    if (!k) {
        remove(path);
        return 0;
    }
    it->sb = hbs_stateful_sig_bytes(k);
    it->pkb = pklen;
    it->sigs = malloc(DV_MSGS * DV_PER_MSG * it->sb);
    it->pks = malloc(DV_MSGS * DV_PER_MSG * pklen);
    it->mp = malloc(DV_MSGS * DV_PER_MSG * 160);
    if (!it->sigs || !it->pks || !it->mp) {
        hbs_stateful_close(k);
        remove(path);
        return 0;
    }
    for (int m = 0; m < DV_MSGS; m++) {
        const size_t mlen = (size_t)(m * 53) % 150, sb = it->sb;
        uint8_t msg[160], *sig = malloc(sb);
        size_t siglen = 0;
        if (!sig)
            break;
        test_rand_bytes(msg, sizeof msg);
        CHECK_INT(hbs_stateful_sign(k, sig, sb, &siglen, msg, mlen), HBS_OK);
        const size_t flips[] = {0, 3, 4, 5, 8, 12, 20, sb / 3, sb / 2, sb - 1, sb - 40, sb - 100};
        const size_t keyflips[] = {0, 3, 7, pklen / 2};
        for (int v = 0; v < DV_PER_MSG; v++, n++) {
            uint8_t *s = it->sigs + n * sb, *p = it->pks + n * pklen, *mm = it->mp + mat;
            memcpy(s, sig, sb);
            memcpy(p, pk, pklen);
            memcpy(mm, msg, mlen + 1);
            if (v >= 1 && v <= 12)
                s[flips[v - 1]] ^= (uint8_t)(1u << (v % 8));
            else if (v == 13)
                mm[mlen / 2] ^= 0x10; /* (the byte past an empty message is not part of it) */
            else if (v >= 14)
                p[keyflips[v - 14]] ^= 0x01;
            it->moff[n] = mat;
            it->mlen[n] = (uint32_t)mlen;
            mat += mlen + 1;
            it->cpu[n] = hbs_stateful_verify((hbs_stateful_family)family, p, pklen, mm, mlen, s, sb);
        }
        free(sig);
    }
    it->count = n;
    hbs_stateful_close(k);
    remove(path);
    return 1;
}

/* The items on the device, verified there: the verdicts into gpu[]; HBS_OK or an error. */
static int dv_run(const char *alg, const dv_items *it, size_t npks, int *gpu)
{
    void *d_sigs = NULL, *d_pks = NULL, *d_mp = NULL, *d_moff = NULL, *d_mlen = NULL,
         *d_res = NULL;
    const size_t c = it->count;
    int rc = hbs_gpu_alloc(0, &d_sigs, c * it->sb);
    if (!rc) rc = hbs_gpu_alloc(0, &d_pks, npks * it->pkb);
    if (!rc) rc = hbs_gpu_alloc(0, &d_mp, it->moff[c - 1] + it->mlen[c - 1] + 1);
    if (!rc) rc = hbs_gpu_alloc(0, &d_moff, c * sizeof(uint64_t));
    if (!rc) rc = hbs_gpu_alloc(0, &d_mlen, c * sizeof(uint32_t));
    if (!rc) rc = hbs_gpu_alloc(0, &d_res, c * sizeof(int));
    if (!rc) rc = hbs_gpu_copy_to(0, d_sigs, it->sigs, c * it->sb);
    if (!rc) rc = hbs_gpu_copy_to(0, d_pks, it->pks, npks * it->pkb);
    if (!rc) rc = hbs_gpu_copy_to(0, d_mp, it->mp, it->moff[c - 1] + it->mlen[c - 1] + 1);
    if (!rc) rc = hbs_gpu_copy_to(0, d_moff, it->moff, c * sizeof(uint64_t));
    if (!rc) rc = hbs_gpu_copy_to(0, d_mlen, it->mlen, c * sizeof(uint32_t));
    if (!rc)
        rc = hbs_gpu_stateful_verify_device(alg, 0, d_res, d_sigs, d_mp, d_moff, d_mlen, c,
                                            d_pks, npks);
    if (!rc) rc = hbs_gpu_copy_from(0, gpu, d_res, c * sizeof(int));
    hbs_gpu_free(0, d_sigs);
    hbs_gpu_free(0, d_pks);
    hbs_gpu_free(0, d_mp);
    hbs_gpu_free(0, d_moff);
    hbs_gpu_free(0, d_mlen);
    hbs_gpu_free(0, d_res);
    return rc;
}

static void test_gpu_stateful_verify_device(void)
{
    size_t same = 0, items = 0, valid = 0;
    if (!have_gpu())
        return;
    for (size_t i = 0; i < DV_SETS; i++) {
        dv_items it;
        int gpu[DV_MSGS * DV_PER_MSG], agree = 1;
        if (!dv_build(dv_sets[i], &it)) {
            dv_free(&it);
            continue;
        }
        /* a key per item (some altered), then one key for all (items 0 .. 13 of each
         * message use the unaltered key, so their verdicts stand) */
        for (int one = 0; one < 2; one++) {
            const size_t npks = one ? 1 : it.count;
            int rc = dv_run(dv_sets[i], &it, npks, gpu);
            CHECK_MSG(rc == HBS_OK, "%s: %d %s", dv_sets[i], rc, hbs_gpu_last_error());
            for (size_t j = 0; rc == HBS_OK && j < it.count; j++) {
                if (one && j % DV_PER_MSG >= 14)
                    continue;
                CHECK_MSG(gpu[j] == 0 || gpu[j] == HBS_ERR_VERIFY_FAILED,
                          "%s item %zu: verdict %d", dv_sets[i], j, gpu[j]);
                if ((gpu[j] == 0) != (it.cpu[j] == HBS_OK)) {
                    CHECK_MSG(0, "%s item %zu (kind %zu, %s keys): GPU %d, CPU %d", dv_sets[i], j,
                              j % DV_PER_MSG, one ? "one" : "many", gpu[j], it.cpu[j]);
                    agree = 0;
                }
                valid += !one && it.cpu[j] == HBS_OK;
            }
            agree &= rc == HBS_OK;
        }
        items += it.count;
        same += (size_t)agree;
        dv_free(&it);
    }
    test_note("%zu/%zu sets: device-resident GPU verdicts = CPU verdicts (%zu items, %zu valid)",
              same, DV_SETS, items, valid);
}

static void test_gpu_stateful_verify_device_misuse(void)
{
    int dummy = 0;
    const void *p = &dummy;
    if (!have_gpu())
        return;
    CHECK_INT(hbs_gpu_stateful_verify_device("XMSS-SHA2_10_256", 0, NULL, NULL, NULL, NULL, NULL,
                                             0, NULL, 0),
              HBS_OK);
    CHECK_INT(hbs_gpu_stateful_verify_device("XMSS-NOPE", 0, &dummy, p, p, p, p, 1, p, 1),
              HBS_ERR_UNKNOWN_ALGORITHM);
    CHECK_INT(hbs_gpu_stateful_verify_device(NULL, 0, &dummy, p, p, p, p, 1, p, 1),
              HBS_ERR_INVALID_ARGUMENT);
    CHECK_INT(hbs_gpu_stateful_verify_device("XMSS-SHA2_10_256", 0, &dummy, p, p, p, p, 3, p, 2),
              HBS_ERR_INVALID_ARGUMENT);
    CHECK_INT(hbs_gpu_stateful_verify_device("XMSS-SHA2_10_256", 0, NULL, p, p, p, p, 1, p, 1),
              HBS_ERR_INVALID_ARGUMENT);
    CHECK_INT(hbs_gpu_stateful_verify_device("LMS_SHA256_M32_H5/LMOTS_SHA256_N32_W4", 99, &dummy,
                                             p, p, p, p, 1, p, 1),
              HBS_ERR_INVALID_ARGUMENT);
}

const hbs_test hbs_tests_gpu_stateful_device[] = {
    {"verify_device", test_gpu_stateful_verify_device},
    {"verify_device_misuse", test_gpu_stateful_verify_device_misuse},
    {NULL, NULL},
};
