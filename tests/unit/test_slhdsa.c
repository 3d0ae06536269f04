/* Unit tests of the SLH-DSA building blocks and API conventions (no external data). */
#include <stdlib.h>
#include <string.h>

#include "core/merkle.h"
#include "hash/hash.h"
#include "hbs/slhdsa.h"
#include "test.h"

/* FIPS 205, Table 2: n, pk bytes, sig bytes, in the order of hbs_slhdsa_id. */
static const struct {
    const char *name;
    size_t n, pk, sig;
} table2[HBS_SLHDSA_NUM_PARAMS] = {
    {"SLH-DSA-SHA2-128s", 16, 32, 7856},   {"SLH-DSA-SHA2-128f", 16, 32, 17088},
    {"SLH-DSA-SHA2-192s", 24, 48, 16224},  {"SLH-DSA-SHA2-192f", 24, 48, 35664},
    {"SLH-DSA-SHA2-256s", 32, 64, 29792},  {"SLH-DSA-SHA2-256f", 32, 64, 49856},
    {"SLH-DSA-SHAKE-128s", 16, 32, 7856},  {"SLH-DSA-SHAKE-128f", 16, 32, 17088},
    {"SLH-DSA-SHAKE-192s", 24, 48, 16224}, {"SLH-DSA-SHAKE-192f", 24, 48, 35664},
    {"SLH-DSA-SHAKE-256s", 32, 64, 29792}, {"SLH-DSA-SHAKE-256f", 32, 64, 49856},
};

static void test_params_table(void)
{
    for (int i = 0; i < HBS_SLHDSA_NUM_PARAMS; i++) {
        const hbs_slhdsa_params *p = hbs_slhdsa_params_get((hbs_slhdsa_id)i);
        CHECK(p != NULL);
        if (!p)
            continue;
        CHECK(strcmp(hbs_slhdsa_name(p), table2[i].name) == 0);
        CHECK(hbs_slhdsa_params_by_name(table2[i].name) == p);
        CHECK_INT(hbs_slhdsa_params_id(p), i);
        CHECK_INT(hbs_slhdsa_n(p), table2[i].n);
        CHECK_INT(hbs_slhdsa_pk_bytes(p), table2[i].pk);
        CHECK_INT(hbs_slhdsa_sk_bytes(p), 2 * table2[i].pk);
        CHECK_INT(hbs_slhdsa_sig_bytes(p), table2[i].sig);
        CHECK_INT(hbs_slhdsa_seed_bytes(p), 3 * table2[i].n);
        CHECK(hbs_slhdsa_sig_bytes(p) <= HBS_SLHDSA_MAX_SIG_BYTES);
    }
    CHECK_INT(HBS_SLHDSA_128S_SIG_BYTES, 7856);
    CHECK_INT(HBS_SLHDSA_128F_SIG_BYTES, 17088);
    CHECK_INT(HBS_SLHDSA_192S_SIG_BYTES, 16224);
    CHECK_INT(HBS_SLHDSA_192F_SIG_BYTES, 35664);
    CHECK_INT(HBS_SLHDSA_256S_SIG_BYTES, 29792);
    CHECK_INT(HBS_SLHDSA_256F_SIG_BYTES, 49856);
    CHECK(hbs_slhdsa_params_get(HBS_SLHDSA_NUM_PARAMS) == NULL);
    CHECK(hbs_slhdsa_params_get((hbs_slhdsa_id)-1) == NULL);
    CHECK(hbs_slhdsa_params_by_name("SLH-DSA-SHA2-128S") == NULL);
    CHECK(hbs_slhdsa_params_by_name("") == NULL);
    CHECK(hbs_slhdsa_params_by_name(NULL) == NULL);
}

static void test_prehash_names(void)
{
    static const char *names[] = {"SHA2-224", "SHA2-256", "SHA2-384", "SHA2-512",
                                  "SHA2-512/224", "SHA2-512/256", "SHA3-224", "SHA3-256",
                                  "SHA3-384", "SHA3-512", "SHAKE-128", "SHAKE-256"};
    static const size_t bytes[] = {28, 32, 48, 64, 28, 32, 28, 32, 48, 64, 32, 64};
    for (size_t i = 0; i < 12; i++) {
        hbs_prehash ph;
        CHECK_INT(hbs_prehash_by_name(&ph, names[i]), HBS_OK);
        CHECK(strcmp(hbs_prehash_name(ph), names[i]) == 0);
        CHECK_INT(hbs_prehash_digest_bytes(ph), bytes[i]);
    }
    hbs_prehash ph;
    CHECK_INT(hbs_prehash_by_name(&ph, "SHA-256"), HBS_ERR_UNKNOWN_PREHASH);
    CHECK_INT(hbs_prehash_by_name(&ph, "none"), HBS_ERR_UNKNOWN_PREHASH);
    CHECK_INT(hbs_prehash_by_name(&ph, "MD5"), HBS_ERR_UNKNOWN_PREHASH);
    CHECK_INT(hbs_prehash_by_name(&ph, NULL), HBS_ERR_UNKNOWN_PREHASH);
    CHECK(hbs_prehash_name((hbs_prehash)99) == NULL);
}

/* The external interface is the internal one applied to M' (FIPS 205 algorithms 22, 23):
 * rebuild M' by hand and compare. */
static void test_external_is_internal_of_mprime(void)
{
    const hbs_slhdsa_params *p = hbs_slhdsa_params_get(HBS_SLHDSA_SHAKE_128F);
    uint8_t seed[48], sk[64], pk[32], msg[100], ctx[7], mp[2 + 7 + 11 + 64 + 100];
    uint8_t *s1 = malloc(HBS_SLHDSA_MAX_SIG_BYTES), *s2 = malloc(HBS_SLHDSA_MAX_SIG_BYTES);
    test_rand_bytes(seed, sizeof seed);
    test_rand_bytes(msg, sizeof msg);
    test_rand_bytes(ctx, sizeof ctx);
    CHECK_INT(hbs_slhdsa_keygen_from_seed(p, sk, pk, seed), HBS_OK);

    mp[0] = 0;
    mp[1] = sizeof ctx;
    memcpy(mp + 2, ctx, sizeof ctx);
    memcpy(mp + 2 + sizeof ctx, msg, sizeof msg);
    CHECK_INT(hbs_slhdsa_sign_ex(p, s1, msg, sizeof msg, ctx, sizeof ctx, HBS_PREHASH_NONE, sk,
                                 NULL), HBS_OK);
    CHECK_INT(hbs_slhdsa_sign_internal(p, s2, mp, 2 + sizeof ctx + sizeof msg, sk, NULL), HBS_OK);
    CHECK_MEM(s1, s2, hbs_slhdsa_sig_bytes(p));
    CHECK_INT(hbs_slhdsa_verify_internal(p, s1, hbs_slhdsa_sig_bytes(p), mp,
                                         2 + sizeof ctx + sizeof msg, pk), HBS_OK);

    /* HashSLH-DSA with SHA2-256: OID 2.16.840.1.101.3.4.2.1 then SHA-256(M) */
    static const uint8_t oid[11] = {0x06, 0x09, 0x60, 0x86, 0x48, 0x01,
                                    0x65, 0x03, 0x04, 0x02, 0x01};
    mp[0] = 1;
    memcpy(mp + 2 + sizeof ctx, oid, sizeof oid);
    hbs_sha256(mp + 2 + sizeof ctx + sizeof oid, msg, sizeof msg);
    CHECK_INT(hbs_slhdsa_sign_ex(p, s1, msg, sizeof msg, ctx, sizeof ctx, HBS_PREHASH_SHA2_256,
                                 sk, pk), HBS_OK);
    CHECK_INT(hbs_slhdsa_sign_internal(p, s2, mp, 2 + sizeof ctx + sizeof oid + 32, sk, pk),
              HBS_OK);
    CHECK_MEM(s1, s2, hbs_slhdsa_sig_bytes(p));
    /* addrnd = PK.seed is the deterministic variant */
    CHECK_INT(hbs_slhdsa_sign_ex(p, s2, msg, sizeof msg, ctx, sizeof ctx, HBS_PREHASH_SHA2_256,
                                 sk, NULL), HBS_OK);
    CHECK_MEM(s1, s2, hbs_slhdsa_sig_bytes(p));
    CHECK_INT(hbs_slhdsa_hash_verify(p, s1, hbs_slhdsa_sig_bytes(p), msg, sizeof msg, ctx,
                                     sizeof ctx, HBS_PREHASH_SHA2_256, pk), HBS_OK);
    free(s1);
    free(s2);
}

static void test_keygen_random_and_check(void)
{
    for (int i = 0; i < HBS_SLHDSA_NUM_PARAMS; i++) {
        const hbs_slhdsa_params *p = hbs_slhdsa_params_get((hbs_slhdsa_id)i);
        uint8_t sk1[128], pk1[64], sk2[128], pk2[64], pkc[64];
        if (i % 2 == 0 && i != HBS_SLHDSA_SHA2_128S && i != HBS_SLHDSA_SHAKE_128S)
            continue; /* key generation of the s sets is slow; two of them suffice here */
        CHECK_INT(hbs_slhdsa_keygen(p, sk1, pk1), HBS_OK);
        CHECK_INT(hbs_slhdsa_keygen(p, sk2, pk2), HBS_OK);
        CHECK(memcmp(sk1, sk2, hbs_slhdsa_sk_bytes(p)) != 0);
        CHECK_MEM(pk1, sk1 + 2 * hbs_slhdsa_n(p), hbs_slhdsa_pk_bytes(p));
        CHECK_INT(hbs_slhdsa_sk_check(p, pkc, sk1), HBS_OK);
        CHECK_MEM(pkc, pk1, hbs_slhdsa_pk_bytes(p));
        /* seed and sk may be the same buffer */
        uint8_t buf[128];
        memcpy(buf, sk1, 3 * hbs_slhdsa_n(p));
        CHECK_INT(hbs_slhdsa_keygen_from_seed(p, buf, pk2, buf), HBS_OK);
        CHECK_MEM(buf, sk1, hbs_slhdsa_sk_bytes(p));
        sk1[3 * hbs_slhdsa_n(p)] ^= 1;
        CHECK_INT(hbs_slhdsa_sk_check(p, pkc, sk1), HBS_ERR_MALFORMED_KEY);
    }
}

/* ---- the generic Merkle tree, against a naive recursive definition ---- */

typedef struct {
    unsigned calls;
} toy_user;

static void toy_leaves(void *user, uint8_t *out, uint32_t first, size_t count)
{
    (void)user;
    for (size_t i = 0; i < count; i++) {
        uint8_t in[4] = {(uint8_t)(first + i), (uint8_t)((first + i) >> 8), 0xaa, 0x55};
        uint8_t d[32];
        hbs_sha256(d, in, sizeof in);
        memcpy(out + i * 16, d, 16);
    }
}

static void toy_nodes(void *user, uint8_t *out, const uint8_t *children, unsigned height,
                      uint32_t first, size_t count)
{
    toy_user *u = user;
    u->calls++;
    for (size_t i = 0; i < count; i++) {
        uint8_t in[32 + 5], d[32];
        memcpy(in, children + 2 * i * 16, 32);
        in[32] = (uint8_t)height;
        in[33] = (uint8_t)(first + i);
        in[34] = (uint8_t)((first + i) >> 8);
        in[35] = in[36] = 0;
        hbs_sha256(d, in, sizeof in);
        memcpy(out + i * 16, d, 16);
    }
}

static void naive_node(uint8_t *out, uint32_t i, unsigned z)
{
    if (z == 0) {
        toy_leaves(NULL, out, i, 1);
        return;
    }
    uint8_t ch[32];
    toy_user u = {0};
    naive_node(ch, 2 * i, z - 1);
    naive_node(ch + 16, 2 * i + 1, z - 1);
    toy_nodes(&u, out, ch, z, i, 1);
}

static void test_merkle_generic(void)
{
    static const unsigned heights[] = {1, 3, 6, 7, 10};
    for (size_t hi = 0; hi < sizeof heights / sizeof heights[0]; hi++) {
        const unsigned h = heights[hi];
        toy_user u = {0};
        hbs_merkle_tree t = {16, h, toy_leaves, toy_nodes, &u};
        uint8_t root[16], want[16], auth[16 * 10], node[16], scratch[32];
        naive_node(want, 0, h);
        const uint32_t leaves = 1u << h;
        const uint32_t step = leaves > 64 ? leaves / 37 + 1 : 1;
        for (uint32_t idx = 0; idx < leaves; idx += step) {
            CHECK_INT(hbs_merkle_root_auth(&t, root, auth, idx), 0);
            CHECK_MEM(root, want, 16);
            for (unsigned z = 0; z < h; z++) {
                naive_node(node, (idx >> z) ^ 1, z);
                CHECK_MEM(auth + z * 16, node, 16);
            }
            toy_leaves(NULL, node, idx, 1);
            hbs_merkle_climb(&t, node, auth, idx, scratch);
            CHECK_MEM(node, want, 16);
        }
        CHECK_INT(hbs_merkle_root_auth(&t, root, NULL, 0), 0);
        CHECK_MEM(root, want, 16);
    }
}

/* A signer's cached layers and any thread count give byte-identical signatures. */
static void test_signer_cache_and_threads(void)
{
    static const hbs_slhdsa_id ids[] = {HBS_SLHDSA_SHA2_128F, HBS_SLHDSA_SHAKE_256F,
                                        HBS_SLHDSA_SHA2_192F, HBS_SLHDSA_SHA2_128S};
    const unsigned saved = hbs_get_threads();
    for (size_t t = 0; t < sizeof ids / sizeof ids[0]; t++) {
        const hbs_slhdsa_params *p = hbs_slhdsa_params_get(ids[t]);
        const size_t L = hbs_slhdsa_sig_bytes(p);
        uint8_t seed[96], sk[128], pk[64], msg[33], ctx[3] = {1, 2, 3};
        uint8_t *want = malloc(L), *got = malloc(L);
        test_rand_bytes(seed, sizeof seed);
        test_rand_bytes(msg, sizeof msg);
        CHECK_INT(hbs_set_threads(1), HBS_OK);
        CHECK_INT(hbs_slhdsa_keygen_from_seed(p, sk, pk, seed), HBS_OK);
        CHECK_INT(hbs_slhdsa_sign_ex(p, want, msg, sizeof msg, ctx, sizeof ctx, HBS_PREHASH_NONE,
                                     sk, NULL), HBS_OK);
        for (unsigned threads = 2; threads <= 5; threads += 3) {
            CHECK_INT(hbs_set_threads(threads), HBS_OK);
            CHECK_INT(hbs_slhdsa_sign_ex(p, got, msg, sizeof msg, ctx, sizeof ctx,
                                         HBS_PREHASH_NONE, sk, NULL), HBS_OK);
            CHECK_MSG(memcmp(want, got, L) == 0, "%s: %u threads differ", hbs_slhdsa_name(p),
                      threads);
        }
        const unsigned max_layers = ids[t] == HBS_SLHDSA_SHA2_128S ? 1 : 2;
        for (unsigned layers = 0; layers <= max_layers; layers++) {
            hbs_slhdsa_signer *s = NULL;
            CHECK_INT(hbs_slhdsa_signer_new(&s, p, sk, layers), HBS_OK);
            if (!s)
                continue;
            CHECK(hbs_slhdsa_signer_params(s) == p);
            CHECK_INT(hbs_slhdsa_signer_sign(s, got, msg, sizeof msg, ctx, sizeof ctx,
                                             HBS_PREHASH_NONE, NULL), HBS_OK);
            CHECK_MSG(memcmp(want, got, L) == 0, "%s: signer with %u cached layers differs",
                      hbs_slhdsa_name(p), layers);
            CHECK_INT(hbs_slhdsa_signer_sign_internal(s, got, msg, sizeof msg, pk), HBS_OK);
            CHECK_INT(hbs_slhdsa_verify_internal(p, got, L, msg, sizeof msg, pk), HBS_OK);
            hbs_slhdsa_signer_free(s);
        }
        /* a secret key whose PK.root is wrong is refused */
        hbs_slhdsa_signer *bad = NULL;
        sk[3 * hbs_slhdsa_n(p)] ^= 1;
        CHECK_INT(hbs_slhdsa_signer_new(&bad, p, sk, 1), HBS_ERR_MALFORMED_KEY);
        CHECK_INT(hbs_slhdsa_signer_new(&bad, p, sk, 0), HBS_ERR_MALFORMED_KEY);
        CHECK(bad == NULL);
        CHECK_INT(hbs_slhdsa_signer_new(&bad, p, sk, 1000), HBS_ERR_INVALID_ARGUMENT);
        free(want);
        free(got);
    }
    CHECK_INT(hbs_set_threads(saved), HBS_OK);
}

static void test_batches(void)
{
    const hbs_slhdsa_params *p = hbs_slhdsa_params_get(HBS_SLHDSA_SHAKE_128F);
    const size_t L = hbs_slhdsa_sig_bytes(p);
    enum { COUNT = 6 };
    uint8_t seed[48], sk[64], pk[32], msgbuf[COUNT][20], rnd[COUNT * 16];
    const uint8_t *msgs[COUNT], *sigp[COUNT], *pks[COUNT];
    size_t lens[COUNT], siglens[COUNT];
    int results[COUNT];
    uint8_t *sigs = malloc(COUNT * L), *one = malloc(L);
    hbs_slhdsa_signer *s = NULL;

    test_rand_bytes(seed, sizeof seed);
    test_rand_bytes(rnd, sizeof rnd);
    CHECK_INT(hbs_slhdsa_keygen_from_seed(p, sk, pk, seed), HBS_OK);
    CHECK_INT(hbs_slhdsa_signer_new(&s, p, sk, 1), HBS_OK);
    for (int i = 0; i < COUNT; i++) {
        test_rand_bytes(msgbuf[i], sizeof msgbuf[i]);
        msgs[i] = msgbuf[i];
        lens[i] = (size_t)i * 3; /* lengths 0, 3, 6, ... */
        sigp[i] = sigs + (size_t)i * L;
        siglens[i] = L;
        pks[i] = pk;
    }
    for (int pass = 0; pass < 2; pass++) {
        const uint8_t *r = pass ? rnd : NULL;
        CHECK_INT(hbs_slhdsa_sign_many(s, sigs, msgs, lens, COUNT, NULL, 0, HBS_PREHASH_NONE, r),
                  HBS_OK);
        for (int i = 0; i < COUNT; i++) {
            CHECK_INT(hbs_slhdsa_sign_ex(p, one, msgs[i], lens[i], NULL, 0, HBS_PREHASH_NONE, sk,
                                         r ? r + i * 16 : NULL), HBS_OK);
            CHECK_MEM(one, sigs + (size_t)i * L, L);
        }
        CHECK_INT(hbs_slhdsa_verify_many(p, results, sigp, siglens, msgs, lens, COUNT, NULL, 0,
                                         HBS_PREHASH_NONE, pks), HBS_OK);
    }
    sigs[3 * L + 100] ^= 1;
    siglens[5] = L - 1;
    CHECK_INT(hbs_slhdsa_verify_many(p, results, sigp, siglens, msgs, lens, COUNT, NULL, 0,
                                     HBS_PREHASH_NONE, pks), HBS_ERR_VERIFY_FAILED);
    for (int i = 0; i < COUNT; i++)
        CHECK_INT(results[i], i == 3 || i == 5 ? HBS_ERR_VERIFY_FAILED : HBS_OK);
    hbs_slhdsa_signer_free(s);
    free(sigs);
    free(one);
}

const hbs_test hbs_tests_slhdsa[] = {
    {"slhdsa_batches", test_batches},
    {"slhdsa_signer_cache_threads", test_signer_cache_and_threads},
    {"slhdsa_params_table", test_params_table},
    {"slhdsa_prehash_names", test_prehash_names},
    {"slhdsa_external_is_internal", test_external_is_internal_of_mprime},
    {"slhdsa_keygen_random", test_keygen_random_and_check},
    {"merkle_generic", test_merkle_generic},
    {NULL, NULL},
};
