/* Unit tests of XMSS / XMSS^MT: the parameter table, signing with the BDS traversal against
 * verification and against independently rebuilt states, state export / import, skipping,
 * splitting, exhaustion, and the negative cases that have broken other verifiers. */
#include <stdlib.h>
#include <string.h>

#include "hash/hash.h"
#include "hbs/xmss.h"
#include "test.h"
#include "xmss/params.h"
#include "xmss/xmss.h"

/* Sizes from RFC 8391 section 5 / SP 800-208 (n, h, d, signature bytes). */
static const struct {
    const char *name;
    uint32_t oid;
    int mt;
    size_t n, sig;
    unsigned h, d;
} known[] = {
    {"XMSS-SHA2_10_256", 0x01, 0, 32, 2500, 10, 1},
    {"XMSS-SHA2_20_512", 0x06, 0, 64, 9732, 20, 1},
    {"XMSS-SHAKE_16_256", 0x08, 0, 32, 2692, 16, 1},
    {"XMSS-SHA2_10_192", 0x0d, 0, 24, 1492, 10, 1},
    {"XMSS-SHAKE256_20_256", 0x12, 0, 32, 2820, 20, 1},
    {"XMSS-SHAKE256_10_192", 0x13, 0, 24, 1492, 10, 1},
    {"XMSSMT-SHA2_20/2_256", 0x01, 1, 32, 4963, 20, 2},
    {"XMSSMT-SHA2_60/12_256", 0x08, 1, 32, 27688, 60, 12},
    {"XMSSMT-SHAKE_40/8_256", 0x15, 1, 32, 18469, 40, 8},
    {"XMSSMT-SHA2_20/2_192", 0x21, 1, 24, 3 + 24 + 2 * 51 * 24 + 20 * 24, 20, 2},
    {"XMSSMT-SHAKE256_60/12_192", 0x38, 1, 24, 8 + 24 + 12 * 51 * 24 + 60 * 24, 60, 12},
};

static void test_params(void)
{
    size_t count = 0;
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        const hbs_xmss_params *p = hbs_xmss_params_by_name(known[i].name);
        CHECK_MSG(p != NULL, "%s", known[i].name);
        if (!p)
            continue;
        CHECK(strcmp(hbs_xmss_name(p), known[i].name) == 0);
        CHECK_INT(hbs_xmss_oid(p), known[i].oid);
        CHECK_INT(hbs_xmss_is_mt(p), known[i].mt);
        CHECK_INT(hbs_xmss_n(p), known[i].n);
        CHECK_INT(hbs_xmss_params_sig_bytes(p), known[i].sig);
        CHECK_INT(hbs_xmss_pk_bytes(p), 4 + 2 * known[i].n);
        CHECK_INT(hbs_xmss_height(p), known[i].h);
        CHECK_INT(hbs_xmss_layers(p), known[i].d);
        CHECK(hbs_xmss_params_by_oid(known[i].mt, known[i].oid) == p);
    }
    /* every set: unique name, found by its name in any case and by its OID */
    for (const hbs_xmss_params *p; (p = hbs_xmss_params_at(count)) != NULL; count++) {
        char lower[64];
        size_t j;
        for (j = 0; p->name[j] && j + 1 < sizeof lower; j++)
            lower[j] = (char)(p->name[j] >= 'A' && p->name[j] <= 'Z' ? p->name[j] + 32
                                                                      : p->name[j]);
        lower[j] = 0;
        CHECK(hbs_xmss_params_by_name(lower) == p);
        CHECK(hbs_xmss_params_by_oid(p->mt, p->oid) == p);
        CHECK(p->h % p->d == 0 && p->tree_h <= XMSS_MAX_TREE_HEIGHT);
    }
    CHECK_INT(count, 21 + 56);
    CHECK(hbs_xmss_params_by_name("XMSS-SHA2_10_255") == NULL);
    CHECK(hbs_xmss_params_by_name("XMSSMT-SHA2_20-2_256") == NULL);
    CHECK(hbs_xmss_params_by_name("") == NULL);
    CHECK(hbs_xmss_params_by_name(NULL) == NULL);
    CHECK(hbs_xmss_params_by_oid(0, 0) == NULL);
    CHECK(hbs_xmss_params_by_oid(0, 0x16) == NULL);
    CHECK(hbs_xmss_params_by_oid(1, 0x39) == NULL);
}

static hbs_xmss_key *make_key(const char *name, unsigned k, uint8_t *pk)
{
    const hbs_xmss_params *p = hbs_xmss_params_by_name(name);
    uint8_t seed[3 * 64];
    hbs_xmss_key *key = NULL;
    size_t pklen = 0;
    /* one fixed seed: keys of one set made with different K are the same key */
    for (size_t i = 0; i < sizeof seed; i++)
        seed[i] = (uint8_t)(i * 7 + 1);
    if (!p || hbs_xmss_keygen(&key, pk, HBS_XMSS_MAX_PK_BYTES, &pklen, p, k, seed, 3 * p->n,
                              NULL, NULL) != HBS_OK)
        return NULL;
    return key;
}

static void msg_for(uint8_t *m, uint64_t i)
{
    memset(m, 0, 16);
    for (int b = 0; b < 8; b++)
        m[b] = (uint8_t)(i >> (8 * b));
    m[15] = 0x5a;
}

/* Signs every one of the 1024 indices of an H10 key, verifying each, then runs dry. */
static void test_exhaust_h10(void)
{
    uint8_t pk[HBS_XMSS_MAX_PK_BYTES], m[16];
    const hbs_xmss_params *p = hbs_xmss_params_by_name("XMSS-SHA2_10_256");
    hbs_xmss_key *key = make_key("XMSS-SHA2_10_256", 0, pk);
    uint8_t *sig = malloc(p->sig_bytes);
    size_t siglen, bad = 0;
    CHECK(key != NULL);
    if (!key || !sig) {
        free(sig);
        hbs_xmss_key_free(key);
        return;
    }
    CHECK_INT(hbs_xmss_key_total(key), 1024);
    CHECK_INT(hbs_xmss_key_end(key), 1024);
    for (uint64_t i = 0; i < 1024; i++) {
        msg_for(m, i);
        CHECK_INT(hbs_xmss_key_index(key), i);
        int err = hbs_xmss_sign(key, sig, p->sig_bytes, &siglen, m, sizeof m);
        if (err != HBS_OK || siglen != p->sig_bytes ||
            hbs_xmss_verify(p, pk, p->pk_bytes, m, sizeof m, sig, siglen) != HBS_OK)
            bad++;
        if (i == 1023) {
            /* the last index 2^h - 1 signs and verifies; one more than the index field
             * allows is rejected */
            CHECK(sig[0] == 0 && sig[1] == 0 && sig[2] == 3 && sig[3] == 0xff);
            sig[2] = 4;
            sig[3] = 0;
            CHECK_INT(hbs_xmss_verify(p, pk, p->pk_bytes, m, sizeof m, sig, siglen),
                      HBS_ERR_VERIFY_FAILED);
        }
    }
    CHECK_INT(bad, 0);
    memset(sig, 0x77, p->sig_bytes);
    CHECK_INT(hbs_xmss_sign(key, sig, p->sig_bytes, &siglen, m, sizeof m),
              HBS_ERR_KEY_EXHAUSTED);
    CHECK(sig[0] == 0 && sig[p->sig_bytes - 1] == 0);
    CHECK_INT(hbs_xmss_key_index(key), 1024);
    test_note("1024 signatures, all verified, then exhausted");
    free(sig);
    hbs_xmss_key_free(key);
}

/* Signs indices [from, to) with keys a and b, verifying each signature and comparing the
 * two. With step_a, a walks to `from` one index at a time (the traversal's own rounds) while
 * b jumps (a state rebuilt from scratch when far). */
static void run_and_compare(const hbs_xmss_params *p, hbs_xmss_key *a, hbs_xmss_key *b,
                            const uint8_t *pk, uint64_t from, uint64_t to, size_t *bad,
                            int step_a)
{
    uint8_t *s1 = malloc(p->sig_bytes), *s2 = malloc(p->sig_bytes), m[16];
    size_t l1, l2;
    if (!s1 || !s2) {
        free(s1);
        free(s2);
        (*bad)++;
        return;
    }
    while (step_a && hbs_xmss_key_index(a) < from)
        if (hbs_xmss_key_skip_to(a, hbs_xmss_key_index(a) + 1) != HBS_OK)
            break;
    if (hbs_xmss_key_skip_to(a, from) != HBS_OK || hbs_xmss_key_skip_to(b, from) != HBS_OK)
        (*bad)++;
    for (uint64_t i = from; i < to; i++) {
        msg_for(m, i);
        if (hbs_xmss_sign(a, s1, p->sig_bytes, &l1, m, sizeof m) != HBS_OK ||
            hbs_xmss_sign(b, s2, p->sig_bytes, &l2, m, sizeof m) != HBS_OK ||
            memcmp(s1, s2, p->sig_bytes) != 0 ||
            hbs_xmss_verify(p, pk, p->pk_bytes, m, sizeof m, s1, l1) != HBS_OK) {
            if (*bad < 5)
                test_fail(__FILE__, __LINE__, "%s index %llu", p->name, (unsigned long long)i);
            (*bad)++;
        }
    }
    free(s1);
    free(s2);
}

/* XMSS^MT with trees of height 5: tree switches on every layer, upper-layer work spread
 * over signatures, and skips (stepped and rebuilt) landing on both sides of a switch. */
static void test_mt_traversal(void)
{
    static const unsigned ks[] = {3, 5};
    /* later backend passes: one K and no H10 layers (the same code paths, a third of the
     * time) */
    const size_t nk = test_full_pass() ? 2 : 1;
    for (size_t ki = 0; ki < nk; ki++) {
        const hbs_xmss_params *p = hbs_xmss_params_by_name("XMSSMT-SHA2_20/4_256");
        uint8_t pk[HBS_XMSS_MAX_PK_BYTES], pk2[HBS_XMSS_MAX_PK_BYTES];
        hbs_xmss_key *a = make_key(p->name, ks[ki], pk), *b = make_key(p->name, ks[ki], pk2);
        size_t bad = 0;
        CHECK(a && b);
        if (a && b) {
            CHECK_MEM(pk, pk2, p->pk_bytes);
            run_and_compare(p, a, b, pk, 0, 70, &bad, 0);
            run_and_compare(p, a, b, pk, 1020, 1030, &bad, 1);
            run_and_compare(p, a, b, pk, 2040, 2050, &bad, 1);
            run_and_compare(p, a, b, pk, 32766, 32770, &bad, 0);
            run_and_compare(p, a, b, pk, ((uint64_t)1 << 20) - 3, (uint64_t)1 << 20, &bad, 0);
            CHECK_INT(bad, 0);
            CHECK_INT(hbs_xmss_key_index(a), (uint64_t)1 << 20);
        }
        hbs_xmss_key_free(a);
        hbs_xmss_key_free(b);
    }
    /* two layers of height 10 with K = 4: a few hundred signatures */
    if (test_full_pass()) {
        const hbs_xmss_params *p = hbs_xmss_params_by_name("XMSSMT-SHA2_20/2_256");
        uint8_t pk[HBS_XMSS_MAX_PK_BYTES], pk2[HBS_XMSS_MAX_PK_BYTES];
        hbs_xmss_key *a = make_key(p->name, 4, pk), *b = make_key(p->name, 4, pk2);
        size_t bad = 0;
        if (a && b) {
            run_and_compare(p, a, b, pk, 0, 40, &bad, 0);
            run_and_compare(p, a, b, pk, 1000, 1100, &bad, 1);
            run_and_compare(p, a, b, pk, ((uint64_t)1 << 20) - 2, (uint64_t)1 << 20, &bad, 0);
        } else {
            bad++;
        }
        CHECK_INT(bad, 0);
        hbs_xmss_key_free(a);
        hbs_xmss_key_free(b);
    }
    test_note(test_full_pass() ? "K=3, K=5 (h'=5) and K=4 (h'=10): stepped and rebuilt states agree"
                               : "K=3 (h'=5) only on this pass");
}

/* Export at many indices, import, and both copies sign byte-identically onwards. */
static void test_export_import(void)
{
    const hbs_xmss_params *p = hbs_xmss_params_by_name("XMSSMT-SHA2_20/4_256");
    uint8_t pk[HBS_XMSS_MAX_PK_BYTES], m[16];
    hbs_xmss_key *a = make_key(p->name, 3, pk);
    size_t cap, len = 0, len2 = 0, siglen, bad = 0;
    uint8_t *blob, *blob2, *s1 = malloc(p->sig_bytes), *s2 = malloc(p->sig_bytes);
    if (!a || !s1 || !s2) {
        CHECK(0);
        hbs_xmss_key_free(a);
        free(s1);
        free(s2);
        return;
    }
    cap = hbs_xmss_key_export_bytes(a);
    blob = malloc(cap);
    blob2 = malloc(cap);
    for (uint64_t i = 0; i < 300 && blob && blob2; i++) {
        hbs_xmss_key *b = NULL;
        msg_for(m, i);
        if (hbs_xmss_key_export(a, blob, cap, &len) != HBS_OK || len != cap ||
            hbs_xmss_key_import(&b, blob, len) != HBS_OK ||
            hbs_xmss_key_export(b, blob2, cap, &len2) != HBS_OK || len2 != len ||
            memcmp(blob, blob2, len) != 0 ||
            hbs_xmss_sign(a, s1, p->sig_bytes, &siglen, m, sizeof m) != HBS_OK ||
            hbs_xmss_sign(b, s2, p->sig_bytes, &siglen, m, sizeof m) != HBS_OK ||
            memcmp(s1, s2, p->sig_bytes) != 0 ||
            hbs_xmss_verify(p, pk, p->pk_bytes, m, sizeof m, s1, siglen) != HBS_OK)
            bad++;
        hbs_xmss_key_free(b);
    }
    CHECK_INT(bad, 0);
    /* an XMSS key and an exported exhausted key load too */
    {
        hbs_xmss_key *x = make_key("XMSS-SHA2_10_256", 0, pk), *y = NULL;
        uint8_t *xb;
        size_t xl = hbs_xmss_key_export_bytes(x), got = 0;
        xb = malloc(xl);
        CHECK(xb && x);
        if (xb && x) {
            CHECK_INT(hbs_xmss_key_skip_to(x, 1024), HBS_OK);
            CHECK_INT(hbs_xmss_key_export(x, xb, xl, &got), HBS_OK);
            CHECK_INT(hbs_xmss_key_import(&y, xb, got), HBS_OK);
            CHECK_INT(hbs_xmss_key_index(y), 1024);
            CHECK_INT(hbs_xmss_sign(y, s1, p->sig_bytes, &siglen, m, sizeof m),
                      HBS_ERR_KEY_EXHAUSTED);
            CHECK_INT(hbs_xmss_key_export(x, xb, xl - 1, &got), HBS_ERR_BUFFER_TOO_SMALL);
        }
        hbs_xmss_key_free(x);
        hbs_xmss_key_free(y);
        free(xb);
    }
    test_note("300 export/import round trips, blob %zu bytes", cap);
    free(blob);
    free(blob2);
    free(s1);
    free(s2);
    hbs_xmss_key_free(a);
}

/* Rewrites the digest at the end of a blob, so that structural checks are reached. */
static void reseal(uint8_t *blob, size_t len)
{
    hbs_sha256(blob + len - 32, blob, len - 32);
}

static void test_import_malformed(void)
{
    uint8_t pk[HBS_XMSS_MAX_PK_BYTES];
    hbs_xmss_key *a = make_key("XMSSMT-SHA2_20/4_256", 3, pk), *b = NULL;
    size_t len = hbs_xmss_key_export_bytes(a), got = 0, accepted = 0, tried = 0;
    uint8_t *blob = malloc(len), *bad = malloc(len + 1);
    if (!a || !blob || !bad) {
        CHECK(0);
        goto done;
    }
    CHECK_INT(hbs_xmss_key_skip_to(a, 77), HBS_OK);
    CHECK_INT(hbs_xmss_key_export(a, blob, len, &got), HBS_OK);
    /* every truncation, and one byte too many */
    for (size_t l = 0; l < len; l += (l < 64 ? 1 : 97)) {
        tried++;
        if (hbs_xmss_key_import(&b, blob, l) != HBS_ERR_MALFORMED_KEY || b)
            accepted++;
    }
    memcpy(bad, blob, len);
    bad[len] = 0;
    CHECK_INT(hbs_xmss_key_import(&b, bad, len + 1), HBS_ERR_MALFORMED_KEY);
    /* every single-bit flip the digest sees */
    for (size_t i = 0; i < len; i += 13) {
        memcpy(bad, blob, len);
        bad[i] ^= (uint8_t)(1u << (i % 8));
        tried++;
        if (hbs_xmss_key_import(&b, bad, len) != HBS_ERR_MALFORMED_KEY || b)
            accepted++;
    }
    CHECK_INT(accepted, 0);
    /* resealed structural damage: kind, version, K, index past end, end past total,
     * a stack longer than the tree allows */
    {
        static const struct {
            size_t at;
            uint8_t val;
        } edits[] = {{4, 0}, {4, 2}, {5, 2}, {6, 4}, {6, 0}, {7, 1}, {15, 0xff}, {8, 0x80},
                     {16, 0x80}, {0, 0x7f}};
        for (size_t e = 0; e < sizeof edits / sizeof edits[0]; e++) {
            memcpy(bad, blob, len);
            bad[edits[e].at] = edits[e].val;
            reseal(bad, len);
            CHECK_MSG(hbs_xmss_key_import(&b, bad, len) == HBS_ERR_MALFORMED_KEY && !b,
                      "edit %zu accepted", e);
        }
    }
    /* random bytes over the whole state, resealed: must load or be rejected, never crash */
    for (int r = 0; r < 200; r++) {
        memcpy(bad, blob, len);
        size_t at = 24 + (size_t)(r * 7919) % (len - 56);
        test_rand_bytes(bad + at, 8);
        reseal(bad, len);
        int err = hbs_xmss_key_import(&b, bad, len);
        CHECK(err == HBS_OK || err == HBS_ERR_MALFORMED_KEY);
        if (b) {
            uint8_t *sig = malloc(hbs_xmss_sig_bytes(b));
            size_t sl;
            for (int s = 0; s < 3 && sig; s++)
                (void)hbs_xmss_sign(b, sig, hbs_xmss_sig_bytes(b), &sl, pk, 4);
            free(sig);
        }
        hbs_xmss_key_free(b);
        b = NULL;
    }
    CHECK_INT(hbs_xmss_key_import(&b, NULL, 0), HBS_ERR_MALFORMED_KEY);
    test_note("%zu truncations and flips rejected", tried);
done:
    free(blob);
    free(bad);
    hbs_xmss_key_free(a);
}

static void test_skip_and_end(void)
{
    const hbs_xmss_params *p = hbs_xmss_params_by_name("XMSS-SHA2_10_192");
    uint8_t pk[HBS_XMSS_MAX_PK_BYTES], m[16] = {1};
    hbs_xmss_key *a = make_key(p->name, 0, pk), *b = make_key(p->name, 4, pk);
    uint8_t *sig = malloc(p->sig_bytes), *sig2 = malloc(p->sig_bytes);
    size_t sl;
    if (!a || !b || !sig || !sig2) {
        CHECK(0);
        goto done;
    }
    CHECK_INT(hbs_xmss_key_skip_to(a, 5), HBS_OK);
    CHECK_INT(hbs_xmss_key_skip_to(a, 4), HBS_ERR_INVALID_ARGUMENT);
    CHECK_INT(hbs_xmss_key_set_end(a, 100), HBS_OK);
    CHECK_INT(hbs_xmss_key_set_end(a, 101), HBS_ERR_INVALID_ARGUMENT);
    CHECK_INT(hbs_xmss_key_set_end(a, 4), HBS_ERR_INVALID_ARGUMENT);
    CHECK_INT(hbs_xmss_key_skip_to(a, 101), HBS_ERR_INVALID_ARGUMENT);
    CHECK_INT(hbs_xmss_key_skip_to(a, 98), HBS_OK);
    CHECK_INT(hbs_xmss_key_skip_to(b, 98), HBS_OK); /* a different K, the same signatures */
    CHECK_INT(hbs_xmss_sign(a, sig, p->sig_bytes, &sl, m, 16), HBS_OK);
    CHECK_INT(hbs_xmss_sign(b, sig2, p->sig_bytes, &sl, m, 16), HBS_OK);
    CHECK_MEM(sig, sig2, p->sig_bytes);
    CHECK_INT(hbs_xmss_verify(p, pk, p->pk_bytes, m, 16, sig, sl), HBS_OK);
    CHECK_INT(hbs_xmss_sign(a, sig, p->sig_bytes, &sl, m, 16), HBS_OK);
    CHECK_INT(hbs_xmss_key_index(a), 100);
    CHECK_INT(hbs_xmss_sign(a, sig, p->sig_bytes, &sl, m, 16), HBS_ERR_KEY_EXHAUSTED);
    CHECK_INT(hbs_xmss_sign(a, sig, p->sig_bytes - 1, &sl, m, 16), HBS_ERR_BUFFER_TOO_SMALL);
    CHECK_INT(hbs_xmss_key_set_end(a, 100), HBS_OK);
    /* a split-off range: a second key skipped to the start of the range signs index 100 */
    CHECK_INT(hbs_xmss_key_skip_to(b, 100), HBS_OK);
    CHECK_INT(hbs_xmss_sign(b, sig, p->sig_bytes, &sl, m, 16), HBS_OK);
    CHECK(sig[3] == 100);
    CHECK_INT(hbs_xmss_verify(p, pk, p->pk_bytes, m, 16, sig, sl), HBS_OK);
    /* a far skip rebuilds: the last index of the tree */
    CHECK_INT(hbs_xmss_key_skip_to(b, 1023), HBS_OK);
    CHECK_INT(hbs_xmss_sign(b, sig, p->sig_bytes, &sl, m, 16), HBS_OK);
    CHECK_INT(hbs_xmss_verify(p, pk, p->pk_bytes, m, 16, sig, sl), HBS_OK);
    CHECK_INT(hbs_xmss_sign(b, sig, p->sig_bytes, &sl, m, 16), HBS_ERR_KEY_EXHAUSTED);
done:
    free(sig);
    free(sig2);
    hbs_xmss_key_free(a);
    hbs_xmss_key_free(b);
}

/* Lengths, OIDs, indices and variants that must be rejected. */
static void test_verify_negative(void)
{
    const hbs_xmss_params *p = hbs_xmss_params_by_name("XMSSMT-SHA2_20/2_256");
    const hbs_xmss_params *q = hbs_xmss_params_by_name("XMSSMT-SHAKE256_20/2_256");
    const hbs_xmss_params *x = hbs_xmss_params_by_name("XMSS-SHA2_10_256");
    uint8_t pk[HBS_XMSS_MAX_PK_BYTES], qpk[HBS_XMSS_MAX_PK_BYTES], m[16] = {9};
    hbs_xmss_key *a = make_key(p->name, 0, pk), *b = make_key(q->name, 0, qpk);
    const size_t sb = p->sig_bytes;
    uint8_t *sig = calloc(1, sb + 1000), *qsig = malloc(sb), *tmp = malloc(sb + 1000);
    size_t sl;
    if (!a || !b || !sig || !qsig || !tmp) {
        CHECK(0);
        goto done;
    }
    CHECK_INT(q->sig_bytes, sb);
    CHECK_INT(hbs_xmss_key_skip_to(a, ((uint64_t)1 << 20) - 1), HBS_OK);
    CHECK_INT(hbs_xmss_sign(a, sig, sb, &sl, m, 16), HBS_OK);
    CHECK(sig[0] == 0x0f && sig[1] == 0xff && sig[2] == 0xff);
    CHECK_INT(hbs_xmss_verify(p, pk, p->pk_bytes, m, 16, sig, sb), HBS_OK);
    CHECK_INT(hbs_xmss_sign(b, qsig, sb, &sl, m, 16), HBS_OK);
    CHECK_INT(hbs_xmss_verify(q, qpk, q->pk_bytes, m, 16, qsig, sb), HBS_OK);
    /* lengths: +-1, +-1000, zero */
    CHECK_INT(hbs_xmss_verify(p, pk, p->pk_bytes, m, 16, sig, sb - 1), HBS_ERR_VERIFY_FAILED);
    CHECK_INT(hbs_xmss_verify(p, pk, p->pk_bytes, m, 16, sig, sb + 1), HBS_ERR_VERIFY_FAILED);
    CHECK_INT(hbs_xmss_verify(p, pk, p->pk_bytes, m, 16, sig, sb - 1000),
              HBS_ERR_VERIFY_FAILED);
    CHECK_INT(hbs_xmss_verify(p, pk, p->pk_bytes, m, 16, sig, sb + 1000),
              HBS_ERR_VERIFY_FAILED);
    CHECK_INT(hbs_xmss_verify(p, pk, p->pk_bytes, m, 16, sig, 0), HBS_ERR_VERIFY_FAILED);
    CHECK_INT(hbs_xmss_verify(p, pk, p->pk_bytes - 1, m, 16, sig, sb), HBS_ERR_VERIFY_FAILED);
    CHECK_INT(hbs_xmss_verify(p, pk, p->pk_bytes + 1, m, 16, sig, sb), HBS_ERR_VERIFY_FAILED);
    /* index 2^h: one past the last */
    memcpy(tmp, sig, sb);
    tmp[0] = 0x10;
    tmp[1] = tmp[2] = 0;
    CHECK_INT(hbs_xmss_verify(p, pk, p->pk_bytes, m, 16, tmp, sb), HBS_ERR_VERIFY_FAILED);
    /* an OID that does not match the key: another set's, XMSS's OID 1 (the same number
     * in the other registry), and the right set with the pk's OID changed */
    CHECK_INT(hbs_xmss_verify(q, pk, p->pk_bytes, m, 16, sig, sb), HBS_ERR_VERIFY_FAILED);
    CHECK_INT(hbs_xmss_verify(x, pk, p->pk_bytes, m, 16, sig, sb), HBS_ERR_VERIFY_FAILED);
    memcpy(tmp, pk, p->pk_bytes);
    tmp[3] = 0x29;
    CHECK_INT(hbs_xmss_verify(p, tmp, p->pk_bytes, m, 16, sig, sb), HBS_ERR_VERIFY_FAILED);
    /* a signature of another variant (same sizes) under this key, and the reverse */
    CHECK_INT(hbs_xmss_verify(p, pk, p->pk_bytes, m, 16, qsig, sb), HBS_ERR_VERIFY_FAILED);
    memcpy(tmp, qpk, q->pk_bytes);
    memcpy(tmp, pk, 4);
    CHECK_INT(hbs_xmss_verify(p, tmp, p->pk_bytes, m, 16, qsig, sb), HBS_ERR_VERIFY_FAILED);
    /* any flipped byte of the signature or message */
    for (size_t i = 0; i < sb; i += 97) {
        memcpy(tmp, sig, sb);
        tmp[i] ^= 0x20;
        CHECK_MSG(hbs_xmss_verify(p, pk, p->pk_bytes, m, 16, tmp, sb) == HBS_ERR_VERIFY_FAILED,
                  "flip at %zu", i);
    }
    m[15] ^= 1;
    CHECK_INT(hbs_xmss_verify(p, pk, p->pk_bytes, m, 16, sig, sb), HBS_ERR_VERIFY_FAILED);
    CHECK_INT(hbs_xmss_verify(NULL, pk, p->pk_bytes, m, 16, sig, sb), HBS_ERR_INVALID_ARGUMENT);
done:
    free(sig);
    free(qsig);
    free(tmp);
    hbs_xmss_key_free(a);
    hbs_xmss_key_free(b);
}

static int cancel_at_half(void *user, uint64_t done, uint64_t total)
{
    int *calls = user;
    (*calls)++;
    return done * 2 >= total;
}

static void test_keygen_options(void)
{
    const hbs_xmss_params *p = hbs_xmss_params_by_name("XMSSMT-SHA2_20/4_256");
    uint8_t pk1[HBS_XMSS_MAX_PK_BYTES], pk2[HBS_XMSS_MAX_PK_BYTES], seed[96] = {3};
    hbs_xmss_key *k = NULL;
    size_t pklen;
    int calls = 0;
    unsigned threads = hbs_get_threads();
    CHECK_INT(hbs_xmss_keygen(&k, pk1, sizeof pk1, &pklen, p, 4, seed, 96, NULL, NULL),
              HBS_ERR_INVALID_ARGUMENT); /* h' - K odd */
    CHECK_INT(hbs_xmss_keygen(&k, pk1, sizeof pk1, &pklen, p, 7, seed, 96, NULL, NULL),
              HBS_ERR_INVALID_ARGUMENT); /* K > h' */
    CHECK_INT(hbs_xmss_keygen(&k, pk1, sizeof pk1, &pklen, p, 0, seed, 95, NULL, NULL),
              HBS_ERR_INVALID_ARGUMENT);
    CHECK_INT(hbs_xmss_keygen(&k, pk1, 10, &pklen, p, 0, seed, 96, NULL, NULL),
              HBS_ERR_BUFFER_TOO_SMALL);
    CHECK(k == NULL);
    /* the same key whatever the thread count */
    CHECK_INT(hbs_set_threads(1), HBS_OK);
    CHECK_INT(hbs_xmss_keygen(&k, pk1, sizeof pk1, &pklen, p, 0, seed, 96, NULL, NULL), HBS_OK);
    hbs_xmss_key_free(k);
    CHECK_INT(hbs_set_threads(threads), HBS_OK);
    CHECK_INT(hbs_xmss_keygen(&k, pk2, sizeof pk2, &pklen, p, 0, seed, 96, NULL, NULL), HBS_OK);
    CHECK_MEM(pk1, pk2, pklen);
    CHECK_INT(hbs_xmss_key_bds_k(k), 5);
    hbs_xmss_key_free(k);
    /* random keys differ; progress can cancel */
    CHECK_INT(hbs_xmss_keygen(&k, pk2, sizeof pk2, &pklen, p, 0, NULL, 0, NULL, NULL), HBS_OK);
    CHECK(memcmp(pk1, pk2, pklen) != 0);
    hbs_xmss_key_free(k);
    k = NULL;
    p = hbs_xmss_params_by_name("XMSS-SHA2_10_256");
    CHECK_INT(hbs_xmss_keygen(&k, pk2, sizeof pk2, &pklen, p, 0, NULL, 0, cancel_at_half,
                              &calls),
              HBS_ERR_CANCELLED);
    CHECK(k == NULL && calls > 1);
}

const hbs_test hbs_tests_xmss[] = {
    {"xmss_params", test_params},
    {"xmss_keygen_options", test_keygen_options},
    {"xmss_exhaust_h10", test_exhaust_h10},
    {"xmss_mt_traversal", test_mt_traversal},
    {"xmss_export_import", test_export_import},
    {"xmss_import_malformed", test_import_malformed},
    {"xmss_skip_and_end", test_skip_and_end},
    {"xmss_verify_negative", test_verify_negative},
    {NULL, NULL},
};
