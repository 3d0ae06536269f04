/* LMS / HSS unit tests: parameter tables and names, sign/verify round trips over every type
 * family, the negative cases that broke other verifiers, the stateful key (exhaustion,
 * export/import, skip_to, set_end), and key-state parsing. */
#include <stdlib.h>
#include <string.h>

#include "hbs/lms.h"
#include "hash/hash.h"
#include "lms/hss.h"
#include "lms/lmots.h"
#include "lms/params.h"
#include "test.h"

/* ---- helpers ---- */

static int parse(hbs_hss_params *p, const char *name, unsigned cache)
{
    int err = hbs_hss_params_parse(p, name);
    CHECK_MSG(err == HBS_OK, "cannot parse %s", name);
    p->cache_height = cache;
    return err == HBS_OK;
}

/* A key from a fixed seed (I || SEED), so that tests can make it again. */
static hbs_hss_key *make_key(const hbs_hss_params *p, uint8_t tag, uint8_t *pk, size_t *pklen)
{
    uint8_t seed[16 + HBS_LMS_MAX_N];
    hbs_hss_key *k = NULL;
    for (size_t i = 0; i < sizeof seed; i++)
        seed[i] = (uint8_t)(tag * 31 + i);
    int err = hbs_hss_keygen(&k, pk, 4 + 24 + HBS_LMS_MAX_N, pklen, p, seed,
                             16 + p->lms[0]->m, NULL, NULL);
    CHECK_INT(err, HBS_OK);
    return err == HBS_OK ? k : NULL;
}

static uint8_t *export_key(const hbs_hss_key *k, size_t *len)
{
    uint8_t *buf;
    if (hbs_hss_key_export(k, NULL, 0, len) != HBS_OK)
        return NULL;
    buf = malloc(*len);
    if (buf && hbs_hss_key_export(k, buf, *len, len) != HBS_OK) {
        free(buf);
        return NULL;
    }
    return buf;
}

/* ---- parameters ---- */

static void test_params_table(void)
{
    for (size_t i = 0; i < HBS_LMOTS_NUM_TYPES; i++) {
        /* RFC 8554 Appendix B: u = ceil(8n/w), v = ceil((floor(lg((2^w-1) u)) + 1) / w) */
        const hbs_lmots_type *o = &hbs_lmots_types[i];
        unsigned u = (8u * o->n + o->w - 1) / o->w, max = ((1u << o->w) - 1) * u, lg = 0;
        while ((max >> (lg + 1)) != 0)
            lg++;
        unsigned v = (lg + 1 + o->w - 1) / o->w;
        CHECK_MSG(o->p == u + v && o->ls == 16 - v * o->w, "%s", o->name);
        CHECK(hbs_lmots_type_by_code(o->code) == o);
        CHECK(hbs_lmots_type_by_name(o->name) == o);
    }
    for (size_t i = 0; i < HBS_LMS_NUM_TYPES; i++) {
        const hbs_lms_type *t = &hbs_lms_types[i];
        CHECK(hbs_lms_type_by_code(t->code) == t);
        CHECK(hbs_lms_type_by_name(t->name) == t);
    }
    CHECK(hbs_lms_type_by_code(0) == NULL && hbs_lms_type_by_code(0x19) == NULL);
    CHECK(hbs_lmots_type_by_code(0) == NULL && hbs_lmots_type_by_code(0x11) == NULL);
    /* RFC 8554 Table 1 and section 5.1 */
    CHECK_INT(hbs_lms_sig_bytes(hbs_lms_type_by_code(6), hbs_lmots_type_by_code(4)), 1452);
    CHECK_INT(hbs_lms_pk_bytes(hbs_lms_type_by_code(6)), 56);
}

static void test_params_names(void)
{
    hbs_hss_params p;
    char buf[512];
    size_t len, count = 0;
    CHECK_INT(hbs_hss_params_parse(&p, "lms_sha256_m32_h10/lmots_sha256_n32_w8, "
                                       "LMS_SHAKE_M24_H5/LMOTS_SHAKE_N24_W2"),
              HBS_OK);
    CHECK_INT(p.levels, 2);
    CHECK_INT(hbs_hss_params_name(&p, buf, sizeof buf, &len), HBS_OK);
    CHECK(strcmp(buf, "LMS_SHA256_M32_H10/LMOTS_SHA256_N32_W8,"
                      "LMS_SHAKE_M24_H5/LMOTS_SHAKE_N24_W2") == 0);
    CHECK_INT(len, strlen(buf));
    CHECK_INT(hbs_hss_params_name(&p, buf, 20, &len), HBS_ERR_BUFFER_TOO_SMALL);
    CHECK_INT(hbs_hss_params_total(&p), 1u << 15);
    /* mismatched hash or n within a level, unknown names, too many levels */
    CHECK_INT(hbs_hss_params_parse(&p, "LMS_SHA256_M32_H10/LMOTS_SHAKE_N32_W8"),
              HBS_ERR_UNKNOWN_ALGORITHM);
    CHECK_INT(hbs_hss_params_parse(&p, "LMS_SHA256_M32_H10/LMOTS_SHA256_N24_W8"),
              HBS_ERR_UNKNOWN_ALGORITHM);
    CHECK_INT(hbs_hss_params_parse(&p, "LMS_SHA256_M32_H11/LMOTS_SHA256_N32_W8"),
              HBS_ERR_UNKNOWN_ALGORITHM);
    CHECK_INT(hbs_hss_params_parse(&p, "LMS_SHA256_M32_H10"), HBS_ERR_UNKNOWN_ALGORITHM);
    CHECK_INT(hbs_hss_params_parse(&p, ""), HBS_ERR_UNKNOWN_ALGORITHM);
    CHECK_INT(hbs_hss_params_parse(&p, "LMS_SHA256_M32_H10/LMOTS_SHA256_N32_W8,"),
              HBS_ERR_UNKNOWN_ALGORITHM);
    {
        char many[1024] = "";
        for (int i = 0; i < 9; i++)
            strcat(many, i ? ",LMS_SHA256_M32_H5/LMOTS_SHA256_N32_W8"
                           : "LMS_SHA256_M32_H5/LMOTS_SHA256_N32_W8");
        CHECK_INT(hbs_hss_params_parse(&p, many), HBS_ERR_INVALID_ARGUMENT);
        many[strlen(many) - strlen(",LMS_SHA256_M32_H5/LMOTS_SHA256_N32_W8")] = '\0';
        CHECK_INT(hbs_hss_params_parse(&p, many), HBS_OK);
        CHECK_INT(p.levels, 8);
    }
    for (const char *name; (name = hbs_lms_name_at(count)) != NULL; count++) {
        CHECK_MSG(hbs_hss_params_parse(&p, name) == HBS_OK && p.levels == 1, "%s", name);
        CHECK(hbs_hss_params_name(&p, buf, sizeof buf, &len) == HBS_OK && strcmp(buf, name) == 0);
    }
    CHECK_INT(count, 80);
}

/* The message hash takes a faster road for longer messages: both roads agree with a plain
 * hash of the concatenation, at every length around the block boundary. */
static void test_message_hash(void)
{
    uint8_t I[16], C[32], msg[200], buf[22 + 32 + 200], want[64], got[32];
    unsigned checked = 0;
    test_rand_bytes(I, sizeof I);
    test_rand_bytes(C, sizeof C);
    test_rand_bytes(msg, sizeof msg);
    for (size_t t = 0; t < HBS_LMOTS_NUM_TYPES; t += 3) {
        const hbs_lmots_type *o = &hbs_lmots_types[t];
        for (size_t len = 0; len <= sizeof msg; len++) {
            memcpy(buf, I, 16);
            buf[16] = 0, buf[17] = 0, buf[18] = 1, buf[19] = 2;
            buf[20] = 0x81, buf[21] = 0x81;
            memcpy(buf + 22, C, o->n);
            memcpy(buf + 22 + o->n, msg, len);
            if (o->hash == HBS_LMS_HASH_SHAKE)
                hbs_shake256(want, o->n, buf, 22 + o->n + len);
            else
                hbs_sha256(want, buf, 22 + o->n + len);
            hbs_lmots_message_hash(o, got, I, 0x0102, C, msg, len);
            CHECK_MSG(memcmp(got, want, o->n) == 0, "%s, %zu bytes", o->name, len);
            checked++;
        }
    }
    test_note("%u message hashes", checked);
}

/* ---- round trips ---- */

/* Signs a few messages with a key of `name` (at indices 0, 1 and, after a skip, the last) and
 * checks each verifies and fails when altered. */
static void roundtrip(const char *name)
{
    hbs_hss_params p;
    uint8_t pk[64], msg[100];
    size_t pklen, siglen;
    if (!parse(&p, name, 0))
        return;
    hbs_hss_key *k = make_key(&p, 7, pk, &pklen);
    if (!k)
        return;
    CHECK_INT(pklen, hbs_hss_params_pk_bytes(&p));
    size_t cap = hbs_hss_sig_bytes(k);
    uint8_t *sig = malloc(cap);
    for (int i = 0; i < 3 && sig; i++) {
        if (i == 2)
            CHECK_INT(hbs_hss_key_skip_to(k, hbs_hss_key_total(k) - 1), HBS_OK);
        test_rand_bytes(msg, sizeof msg);
        CHECK_INT(hbs_hss_sign(k, sig, cap, &siglen, msg, sizeof msg), HBS_OK);
        CHECK_INT(siglen, cap);
        CHECK_MSG(hbs_hss_verify(pk, pklen, msg, sizeof msg, sig, siglen) == HBS_OK, "%s #%d",
                  name, i);
        msg[3] ^= 1;
        CHECK(hbs_hss_verify(pk, pklen, msg, sizeof msg, sig, siglen) == HBS_ERR_VERIFY_FAILED);
        msg[3] ^= 1;
        sig[siglen - 5] ^= 0x40;
        CHECK(hbs_hss_verify(pk, pklen, msg, sizeof msg, sig, siglen) == HBS_ERR_VERIFY_FAILED);
    }
    CHECK_INT(hbs_hss_sign(k, sig, cap, &siglen, msg, sizeof msg), HBS_ERR_KEY_EXHAUSTED);
    free(sig);
    hbs_hss_key_free(k);
}

static void test_roundtrip_types(void)
{
    /* every LM-OTS type with an H5 tree of its family */
    for (size_t i = 0; i < HBS_LMOTS_NUM_TYPES; i++) {
        const hbs_lmots_type *o = &hbs_lmots_types[i];
        char name[96];
        snprintf(name, sizeof name, "LMS_%s_M%u_H5/%s",
                 o->hash == HBS_LMS_HASH_SHAKE ? "SHAKE" : "SHA256", o->n, o->name);
        roundtrip(name);
    }
    /* tree heights with a cheap one-time key; mixed HSS */
    roundtrip("LMS_SHA256_M32_H10/LMOTS_SHA256_N32_W2");
    roundtrip("LMS_SHAKE_M24_H10/LMOTS_SHAKE_N24_W2");
    roundtrip("LMS_SHA256_M32_H5/LMOTS_SHA256_N32_W4,LMS_SHAKE_M24_H5/LMOTS_SHAKE_N24_W1,"
              "LMS_SHA256_M24_H5/LMOTS_SHA256_N24_W8");
    roundtrip("LMS_SHA256_M24_H5/LMOTS_SHA256_N24_W4,LMS_SHA256_M32_H5/LMOTS_SHA256_N32_W4,"
              "LMS_SHA256_M32_H5/LMOTS_SHA256_N32_W4,LMS_SHA256_M32_H5/LMOTS_SHA256_N32_W4,"
              "LMS_SHA256_M32_H5/LMOTS_SHA256_N32_W4,LMS_SHA256_M32_H5/LMOTS_SHA256_N32_W4,"
              "LMS_SHA256_M32_H5/LMOTS_SHA256_N32_W4,LMS_SHAKE_M32_H5/LMOTS_SHAKE_N32_W4");
    test_note("16 LM-OTS types, H10, HSS with 3 and 8 levels");
}

/* ---- negative cases ---- */

static void test_negative(void)
{
    hbs_hss_params p, p2;
    uint8_t pk[64], pk2[64], msg[32] = "negative cases";
    size_t pklen, pk2len, siglen, sig2len;
    if (!parse(&p, "LMS_SHA256_M32_H5/LMOTS_SHA256_N32_W8", 0) ||
        !parse(&p2, "LMS_SHAKE_M32_H5/LMOTS_SHAKE_N32_W8", 0))
        return;
    hbs_hss_key *k = make_key(&p, 1, pk, &pklen), *k2 = make_key(&p2, 1, pk2, &pk2len);
    size_t cap = hbs_hss_sig_bytes(k);
    uint8_t *sig = calloc(1, cap + 2000), *sig2 = calloc(1, cap + 2000);
    if (!k || !k2 || !sig || !sig2)
        goto done;
    CHECK_INT(hbs_hss_sign(k, sig, cap, &siglen, msg, sizeof msg), HBS_OK);
    CHECK_INT(hbs_hss_sign(k2, sig2, cap, &sig2len, msg, sizeof msg), HBS_OK);
    CHECK_INT(hbs_hss_verify(pk, pklen, msg, sizeof msg, sig, siglen), HBS_OK);
    /* short and over-long signatures */
    const size_t lens[] = {0, 3, 4, 8, 12, siglen - 1000, siglen - 1, siglen + 1, siglen + 1000};
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
        uint8_t *copy = malloc(lens[i] + 1);
        memcpy(copy, sig, lens[i] < siglen ? lens[i] : siglen);
        if (lens[i] > siglen)
            memset(copy + siglen, 0, lens[i] - siglen);
        CHECK_MSG(hbs_hss_verify(pk, pklen, msg, sizeof msg, copy, lens[i]) ==
                      HBS_ERR_VERIFY_FAILED,
                  "length %zu accepted", lens[i]);
        free(copy);
    }
    /* a wrong level count, in the key or in the signature */
    sig[3] = 1;
    CHECK_INT(hbs_hss_verify(pk, pklen, msg, sizeof msg, sig, siglen), HBS_ERR_VERIFY_FAILED);
    sig[3] = 0;
    pk[3] = 2;
    CHECK_INT(hbs_hss_verify(pk, pklen, msg, sizeof msg, sig, siglen), HBS_ERR_VERIFY_FAILED);
    pk[3] = 0;
    CHECK_INT(hbs_hss_verify(pk, pklen, msg, sizeof msg, sig, siglen), HBS_ERR_VERIFY_FAILED);
    pk[3] = 9;
    CHECK_INT(hbs_hss_verify(pk, pklen, msg, sizeof msg, sig, siglen), HBS_ERR_VERIFY_FAILED);
    pk[3] = 1;
    CHECK_INT(hbs_hss_verify(pk, pklen - 1, msg, sizeof msg, sig, siglen), HBS_ERR_VERIFY_FAILED);
    CHECK_INT(hbs_hss_verify(pk, 3, msg, sizeof msg, sig, siglen), HBS_ERR_VERIFY_FAILED);
    /* typecodes in the signature that do not match the key (OTS at 8, LMS after the OTS) */
    const size_t lms_at = 8 + 4 + 32 + 34 * 32;
    for (uint32_t code = 0; code < 0x20; code++) {
        uint8_t save[4];
        memcpy(save, sig + 8, 4);
        sig[11] = (uint8_t)code;
        sig[8] = sig[9] = sig[10] = 0;
        CHECK(code == 4 || hbs_hss_verify(pk, pklen, msg, sizeof msg, sig, siglen) ==
                               HBS_ERR_VERIFY_FAILED);
        memcpy(sig + 8, save, 4);
        memcpy(save, sig + lms_at, 4);
        sig[lms_at + 3] = (uint8_t)code;
        CHECK(code == 5 || hbs_hss_verify(pk, pklen, msg, sizeof msg, sig, siglen) ==
                               HBS_ERR_VERIFY_FAILED);
        memcpy(sig + lms_at, save, 4);
    }
    sig[8] = 1; /* a typecode with its high bytes set */
    CHECK_INT(hbs_hss_verify(pk, pklen, msg, sizeof msg, sig, siglen), HBS_ERR_VERIFY_FAILED);
    sig[8] = 0;
    /* key typecodes that do not match the signature */
    pk[7] = 6; /* H10 tree */
    CHECK_INT(hbs_hss_verify(pk, pklen, msg, sizeof msg, sig, siglen), HBS_ERR_VERIFY_FAILED);
    pk[7] = 5;
    pk[11] = 3; /* W4 */
    CHECK_INT(hbs_hss_verify(pk, pklen, msg, sizeof msg, sig, siglen), HBS_ERR_VERIFY_FAILED);
    pk[11] = 4;
    CHECK_INT(hbs_hss_verify(pk, pklen, msg, sizeof msg, sig, siglen), HBS_OK);
    /* a signature of another variant (SHAKE, same sizes) under the SHA-256 key and back */
    CHECK_INT(sig2len, siglen);
    CHECK_INT(hbs_hss_verify(pk, pklen, msg, sizeof msg, sig2, sig2len), HBS_ERR_VERIFY_FAILED);
    CHECK_INT(hbs_hss_verify(pk2, pk2len, msg, sizeof msg, sig, siglen), HBS_ERR_VERIFY_FAILED);
    CHECK_INT(hbs_hss_verify(pk2, pk2len, msg, sizeof msg, sig2, sig2len), HBS_OK);
    /* index 2^h - 1 is accepted, 2^h (and above) rejected */
    CHECK_INT(hbs_hss_key_skip_to(k, 31), HBS_OK);
    CHECK_INT(hbs_hss_sign(k, sig, cap, &siglen, msg, sizeof msg), HBS_OK);
    CHECK_INT(sig[7], 31);
    CHECK_INT(hbs_hss_verify(pk, pklen, msg, sizeof msg, sig, siglen), HBS_OK);
    sig[7] = 32;
    CHECK_INT(hbs_hss_verify(pk, pklen, msg, sizeof msg, sig, siglen), HBS_ERR_VERIFY_FAILED);
    sig[7] = 31;
    sig[4] = 0x80;
    CHECK_INT(hbs_hss_verify(pk, pklen, msg, sizeof msg, sig, siglen), HBS_ERR_VERIFY_FAILED);
    sig[4] = 0;
    /* the bare LMS verifier sees the same signature without the HSS prefixes */
    CHECK_INT(hbs_lms_verify(pk + 4, pklen - 4, msg, sizeof msg, sig + 4, siglen - 4), HBS_OK);
    CHECK_INT(hbs_lms_verify(pk + 4, pklen - 4, msg, sizeof msg, sig + 4, siglen - 5),
              HBS_ERR_VERIFY_FAILED);
    CHECK_INT(hbs_lms_verify(pk, pklen, msg, sizeof msg, sig, siglen), HBS_ERR_VERIFY_FAILED);
    for (size_t l = 0; l < 12; l++) /* empty and short bare signatures and keys */
        CHECK(hbs_lms_verify(pk + 4, pklen - 4, msg, sizeof msg, sig + 4, l) ==
                  HBS_ERR_VERIFY_FAILED &&
              hbs_lms_verify(pk + 4, l, msg, sizeof msg, sig + 4, siglen - 4) ==
                  HBS_ERR_VERIFY_FAILED &&
              hbs_lms_verify(sig, l, msg, 0, sig, l) == HBS_ERR_VERIFY_FAILED);
    CHECK_INT(hbs_hss_verify(NULL, 0, msg, sizeof msg, sig, siglen), HBS_ERR_VERIFY_FAILED);
    CHECK_INT(hbs_hss_verify(pk, pklen, NULL, 5, sig, siglen), HBS_ERR_VERIFY_FAILED);
done:
    free(sig);
    free(sig2);
    hbs_hss_key_free(k);
    hbs_hss_key_free(k2);
}

/* Two-level signatures: the signed public key of level 1 must be checked too. */
static void test_negative_hss(void)
{
    hbs_hss_params p;
    uint8_t pk[64], msg[8] = "hss";
    size_t pklen, siglen;
    if (!parse(&p, "LMS_SHA256_M32_H5/LMOTS_SHA256_N32_W4,LMS_SHA256_M24_H5/LMOTS_SHA256_N24_W4",
               0))
        return;
    hbs_hss_key *k = make_key(&p, 3, pk, &pklen);
    size_t cap = k ? hbs_hss_sig_bytes(k) : 0;
    uint8_t *sig = malloc(cap + 1);
    if (!k || !sig)
        goto done;
    CHECK_INT(hbs_hss_sign(k, sig, cap, &siglen, msg, sizeof msg), HBS_OK);
    CHECK_INT(hbs_hss_verify(pk, pklen, msg, sizeof msg, sig, siglen), HBS_OK);
    /* every byte of the signature matters (sampled) */
    for (size_t i = 0; i < siglen; i += 7) {
        sig[i] ^= 0x01;
        CHECK_MSG(hbs_hss_verify(pk, pklen, msg, sizeof msg, sig, siglen) == HBS_ERR_VERIFY_FAILED,
                  "byte %zu", i);
        sig[i] ^= 0x01;
    }
    /* every truncation */
    for (size_t len = 0; len < siglen; len += 13)
        CHECK(hbs_hss_verify(pk, pklen, msg, sizeof msg, sig, len) == HBS_ERR_VERIFY_FAILED);
    CHECK_INT(hbs_hss_verify(pk, pklen, msg, sizeof msg, sig, siglen + 1), HBS_ERR_VERIFY_FAILED);
done:
    free(sig);
    hbs_hss_key_free(k);
}

/* ---- the stateful key ---- */

static void test_exhaust(void)
{
    hbs_hss_params p;
    uint8_t pk[64], msg[16];
    size_t pklen, siglen;
    unsigned ok = 0;
    if (!parse(&p, "LMS_SHA256_M32_H5/LMOTS_SHA256_N32_W8", 0))
        return;
    hbs_hss_key *k = make_key(&p, 5, pk, &pklen);
    size_t cap = k ? hbs_hss_sig_bytes(k) : 0;
    uint8_t *sig = malloc(cap);
    if (!k || !sig)
        goto done;
    CHECK_INT(hbs_hss_key_total(k), 32);
    CHECK_INT(hbs_hss_key_end(k), 32);
    for (uint64_t i = 0; i < 32; i++) {
        CHECK_INT(hbs_hss_key_index(k), i);
        memset(msg, (int)i, sizeof msg);
        CHECK_INT(hbs_hss_sign(k, sig, cap, &siglen, msg, sizeof msg), HBS_OK);
        CHECK_INT(hbs_lms_get32(sig + 4), i);
        ok += hbs_hss_verify(pk, pklen, msg, sizeof msg, sig, siglen) == HBS_OK;
    }
    CHECK_INT(ok, 32);
    CHECK_INT(hbs_hss_key_index(k), 32);
    CHECK_INT(hbs_hss_sign(k, sig, cap, &siglen, msg, sizeof msg), HBS_ERR_KEY_EXHAUSTED);
    CHECK_INT(siglen, 0);
    CHECK_INT(hbs_hss_sign(k, sig, cap, &siglen, msg, sizeof msg), HBS_ERR_KEY_EXHAUSTED);
    test_note("32/32 signatures of H5 verified, then exhausted");
done:
    free(sig);
    hbs_hss_key_free(k);
}

/* Two levels of H5: 1024 signatures cross 31 bottom-tree changes, each prepared over the
 * previous tree's signatures; every signature verifies and no index repeats. */
static void test_exhaust_hss(void)
{
    hbs_hss_params p;
    uint8_t pk[64], msg[16], seen[1024] = {0};
    size_t pklen, siglen;
    unsigned ok = 0, unique = 0;
    if (!parse(&p, "LMS_SHA256_M32_H5/LMOTS_SHA256_N32_W2,LMS_SHA256_M32_H5/LMOTS_SHA256_N32_W2",
               0))
        return;
    hbs_hss_key *k = make_key(&p, 6, pk, &pklen);
    size_t cap = k ? hbs_hss_sig_bytes(k) : 0, lvl0 = hbs_lms_sig_bytes(p.lms[0], p.ots[0]);
    uint8_t *sig = malloc(cap);
    if (!k || !sig)
        goto done;
    for (unsigned i = 0; i < 1024; i++) {
        memset(msg, (int)i, sizeof msg);
        if (hbs_hss_sign(k, sig, cap, &siglen, msg, sizeof msg) != HBS_OK)
            break;
        ok += hbs_hss_verify(pk, pklen, msg, sizeof msg, sig, siglen) == HBS_OK;
        /* the index pair (q0, q1) of this signature */
        unsigned q0 = hbs_lms_get32(sig + 4), q1 = hbs_lms_get32(sig + 4 + lvl0 + 56);
        unsigned g = q0 * 32 + q1;
        CHECK_MSG(g == i, "signature %u carries indices %u/%u", i, q0, q1);
        if (g < 1024 && !seen[g]++)
            unique++;
    }
    CHECK_INT(ok, 1024);
    CHECK_INT(unique, 1024);
    CHECK_INT(hbs_hss_sign(k, sig, cap, &siglen, msg, sizeof msg), HBS_ERR_KEY_EXHAUSTED);
    test_note("1024/1024 two-level signatures verified, then exhausted");
done:
    free(sig);
    hbs_hss_key_free(k);
}

/* A key signing without interruption against one exported and imported before every
 * signature, and one made fresh and moved with skip_to: same signatures, same state bytes.
 * The small cache setting gives the H10 tree three stripes, so the stripe builders and the
 * next-tree builder are all exercised. */
static void test_export_import(void)
{
    hbs_hss_params p;
    uint8_t pk[64], pk2[64], msg[24];
    size_t pklen, pk2len, la, lb, siglen, sig2len;
    unsigned compared = 0, skips = 0;
    if (!parse(&p, "LMS_SHA256_M32_H10/LMOTS_SHA256_N32_W2,LMS_SHA256_M24_H5/LMOTS_SHA256_N24_W4",
               4))
        return;
    hbs_hss_key *a = make_key(&p, 9, pk, &pklen);
    size_t cap = a ? hbs_hss_sig_bytes(a) : 0;
    uint8_t *sa = malloc(cap), *sb = malloc(cap);
    if (!a || !sa || !sb)
        goto done;
    const uint64_t stops[] = {0, 1, 2, 3, 31, 32, 33, 63, 64, 65, 127, 128, 200, 255, 256, 300};
    size_t next_stop = 0;
    for (uint64_t i = 0; i <= 300; i++) {
        if (next_stop < sizeof stops / sizeof stops[0] && stops[next_stop] == i) {
            next_stop++;
            uint8_t *ea = export_key(a, &la);
            hbs_hss_key *b = NULL, *c = make_key(&p, 9, pk2, &pk2len);
            CHECK(ea && hbs_hss_key_import(&b, ea, la) == HBS_OK);
            if (c) {
                CHECK_INT(hbs_hss_key_skip_to(c, i), HBS_OK);
                uint8_t *ec = export_key(c, &lb);
                CHECK_MSG(ec && lb == la && memcmp(ea, ec, la) == 0,
                          "state after skip_to(%llu) differs", (unsigned long long)i);
                skips++;
                free(ec);
            }
            if (b) {
                uint8_t *eb = export_key(b, &lb);
                CHECK(eb && lb == la && memcmp(ea, eb, la) == 0);
                free(eb);
                test_rand_bytes(msg, sizeof msg);
                CHECK_INT(hbs_hss_sign(b, sb, cap, &sig2len, msg, sizeof msg), HBS_OK);
                CHECK_INT(hbs_hss_sign(a, sa, cap, &siglen, msg, sizeof msg), HBS_OK);
                CHECK(siglen == sig2len && memcmp(sa, sb, siglen) == 0);
                CHECK_INT(hbs_hss_verify(pk, pklen, msg, sizeof msg, sa, siglen), HBS_OK);
                compared++;
                hbs_hss_key_free(b);
                hbs_hss_key_free(c);
                free(ea);
                continue;
            }
            hbs_hss_key_free(c);
            free(ea);
        }
        test_rand_bytes(msg, sizeof msg);
        CHECK_INT(hbs_hss_sign(a, sa, cap, &siglen, msg, sizeof msg), HBS_OK);
    }
    /* far skips (rebuilds) against short steps from there */
    {
        const uint64_t far[] = {1000, 5000, 20000, 32000, 32767};
        hbs_hss_key *c = make_key(&p, 9, pk2, &pk2len);
        for (size_t i = 0; c && i < sizeof far / sizeof far[0]; i++) {
            hbs_hss_key *d = make_key(&p, 9, pk2, &pk2len);
            CHECK_INT(hbs_hss_key_skip_to(c, far[i] - (far[i] > 3 ? 3 : 0)), HBS_OK);
            for (int s = 0; s < 3 && hbs_hss_key_index(c) < far[i]; s++) {
                test_rand_bytes(msg, sizeof msg);
                CHECK_INT(hbs_hss_sign(c, sa, cap, &siglen, msg, sizeof msg), HBS_OK);
                CHECK_INT(hbs_hss_verify(pk, pklen, msg, sizeof msg, sa, siglen), HBS_OK);
            }
            if (d && hbs_hss_key_skip_to(d, far[i]) == HBS_OK) {
                uint8_t *ec = export_key(c, &la), *ed = export_key(d, &lb);
                CHECK_MSG(ec && ed && la == lb && memcmp(ec, ed, la) == 0,
                          "far skip to %llu differs from stepping",
                          (unsigned long long)far[i]);
                free(ec);
                free(ed);
                test_rand_bytes(msg, sizeof msg);
                CHECK_INT(hbs_hss_sign(d, sa, cap, &siglen, msg, sizeof msg), HBS_OK);
                CHECK_INT(hbs_hss_verify(pk, pklen, msg, sizeof msg, sa, siglen), HBS_OK);
                CHECK_INT(hbs_lms_get32(sa + 4), far[i] >> 5);
                skips++;
            }
            hbs_hss_key_free(d);
        }
        hbs_hss_key_free(c);
    }
    test_note("%u imported keys signed identically; %u skip_to states equal to stepping",
              compared, skips);
done:
    free(sa);
    free(sb);
    hbs_hss_key_free(a);
}

/* Every index of an H10 tree with a small cache (stripes of heights 2, 2 and 1 under a
 * 5-level top): each stripe's next subtree is built one leaf per signature and swapped in;
 * every signature verifies, and the stepped state equals a rebuilt one along the way. */
static void test_stripes_walk(void)
{
    hbs_hss_params p;
    uint8_t pk[64], msg[8];
    size_t pklen, siglen, la, lb;
    unsigned ok = 0, same = 0;
    if (!parse(&p, "LMS_SHAKE_M24_H10/LMOTS_SHAKE_N24_W2", 5))
        return;
    hbs_hss_key *k = make_key(&p, 8, pk, &pklen);
    size_t cap = k ? hbs_hss_sig_bytes(k) : 0;
    uint8_t *sig = malloc(cap);
    if (!k || !sig)
        goto done;
    for (unsigned i = 0; i < 1024; i++) {
        if (i % 97 == 5) {
            hbs_hss_key *c = make_key(&p, 8, pk, &pklen);
            uint8_t *ek = export_key(k, &la), *ec = NULL;
            if (c && hbs_hss_key_skip_to(c, i) == HBS_OK)
                ec = export_key(c, &lb);
            same += ek && ec && la == lb && memcmp(ek, ec, la) == 0;
            CHECK_MSG(ek && ec && la == lb && memcmp(ek, ec, la) == 0, "index %u", i);
            free(ek);
            free(ec);
            hbs_hss_key_free(c);
        }
        memcpy(msg, &i, sizeof i);
        if (hbs_hss_sign(k, sig, cap, &siglen, msg, sizeof msg) != HBS_OK)
            break;
        ok += hbs_hss_verify(pk, pklen, msg, sizeof msg, sig, siglen) == HBS_OK;
    }
    CHECK_INT(ok, 1024);
    CHECK_INT(hbs_hss_sign(k, sig, cap, &siglen, msg, sizeof msg), HBS_ERR_KEY_EXHAUSTED);
    test_note("1024/1024 verified; %u states equal to rebuilt ones", same);
done:
    free(sig);
    hbs_hss_key_free(k);
}

static void test_skip_and_end(void)
{
    hbs_hss_params p;
    uint8_t pk[64], msg[4] = "end";
    size_t pklen, siglen;
    if (!parse(&p, "LMS_SHA256_M32_H5/LMOTS_SHA256_N32_W4,LMS_SHA256_M32_H5/LMOTS_SHA256_N32_W4",
               0))
        return;
    hbs_hss_key *k = make_key(&p, 2, pk, &pklen);
    size_t cap = k ? hbs_hss_sig_bytes(k) : 0;
    uint8_t *sig = malloc(cap);
    if (!k || !sig)
        goto done;
    CHECK_INT(hbs_hss_key_total(k), 1024);
    CHECK_INT(hbs_hss_key_skip_to(k, 100), HBS_OK);
    CHECK_INT(hbs_hss_key_skip_to(k, 99), HBS_ERR_INVALID_ARGUMENT);
    CHECK_INT(hbs_hss_key_set_end(k, 1025), HBS_ERR_INVALID_ARGUMENT);
    CHECK_INT(hbs_hss_key_set_end(k, 99), HBS_ERR_INVALID_ARGUMENT);
    CHECK_INT(hbs_hss_key_set_end(k, 103), HBS_OK);
    CHECK_INT(hbs_hss_key_set_end(k, 104), HBS_ERR_INVALID_ARGUMENT);
    CHECK_INT(hbs_hss_key_skip_to(k, 104), HBS_ERR_INVALID_ARGUMENT);
    for (unsigned i = 100; i < 103; i++) {
        CHECK_INT(hbs_hss_sign(k, sig, cap, &siglen, msg, sizeof msg), HBS_OK);
        CHECK_INT(hbs_hss_verify(pk, pklen, msg, sizeof msg, sig, siglen), HBS_OK);
    }
    CHECK_INT(hbs_hss_key_index(k), 103);
    CHECK_INT(hbs_hss_sign(k, sig, cap, &siglen, msg, sizeof msg), HBS_ERR_KEY_EXHAUSTED);
    CHECK_INT(hbs_hss_key_skip_to(k, 103), HBS_OK);
    CHECK_INT(hbs_hss_key_set_end(k, 103), HBS_OK);
    /* a split-off range [500, 600) signs there and nowhere else */
    {
        hbs_hss_key *s = make_key(&p, 2, pk, &pklen);
        CHECK(s && hbs_hss_key_skip_to(s, 500) == HBS_OK && hbs_hss_key_set_end(s, 600) == HBS_OK);
        for (unsigned i = 0; s && i < 100; i++)
            CHECK(hbs_hss_sign(s, sig, cap, &siglen, msg, sizeof msg) == HBS_OK &&
                  hbs_hss_verify(pk, pklen, msg, sizeof msg, sig, siglen) == HBS_OK);
        CHECK(s && hbs_hss_sign(s, sig, cap, &siglen, msg, sizeof msg) == HBS_ERR_KEY_EXHAUSTED);
        /* the end survives export and import */
        size_t len;
        uint8_t *e = s ? export_key(s, &len) : NULL;
        hbs_hss_key *t = NULL;
        CHECK(e && hbs_hss_key_import(&t, e, len) == HBS_OK);
        CHECK(t && hbs_hss_key_end(t) == 600 && hbs_hss_key_index(t) == 600);
        hbs_hss_key_free(t);
        free(e);
        hbs_hss_key_free(s);
    }
    CHECK_INT(hbs_hss_sign(k, sig, 10, &siglen, msg, sizeof msg), HBS_ERR_BUFFER_TOO_SMALL);
done:
    free(sig);
    hbs_hss_key_free(k);
}

static void test_import_malformed(void)
{
    hbs_hss_params p;
    uint8_t pk[64];
    size_t pklen, len;
    unsigned rejected = 0, tried = 0;
    if (!parse(&p, "LMS_SHA256_M32_H5/LMOTS_SHA256_N32_W4,LMS_SHA256_M24_H5/LMOTS_SHA256_N24_W2",
               0))
        return;
    hbs_hss_key *k = make_key(&p, 4, pk, &pklen), *t = NULL;
    uint8_t *e = k ? export_key(k, &len) : NULL;
    if (!e)
        goto done;
    CHECK_INT(hbs_hss_key_import(&t, e, len), HBS_OK);
    hbs_hss_key_free(t);
    t = NULL;
    /* every truncation and one extra byte */
    for (size_t l = 0; l <= len + 1; l += (l < 200 ? 1 : 97)) {
        if (l == len)
            continue;
        uint8_t *c = malloc(l + 1);
        memcpy(c, e, l < len ? l : len);
        if (l > len)
            c[len] = 0;
        tried++;
        rejected += hbs_hss_key_import(&t, c, l) == HBS_ERR_MALFORMED_KEY && t == NULL;
        hbs_hss_key_free(t);
        t = NULL;
        free(c);
    }
    /* a flipped bit anywhere (sampled), in the header especially */
    for (size_t i = 0; i < len; i += (i < 100 ? 1 : 53)) {
        e[i] ^= 0x04;
        tried++;
        rejected += hbs_hss_key_import(&t, e, len) == HBS_ERR_MALFORMED_KEY && t == NULL;
        hbs_hss_key_free(t);
        t = NULL;
        e[i] ^= 0x04;
    }
    CHECK_INT(rejected, tried);
    CHECK_INT(hbs_hss_key_import(&t, NULL, 0), HBS_ERR_MALFORMED_KEY);
    test_note("%u/%u malformed states rejected", rejected, tried);
done:
    free(e);
    hbs_hss_key_free(k);
}

typedef struct {
    uint64_t last, total;
    unsigned calls, cancel_after;
} progress_log;

static int on_progress(void *user, uint64_t done, uint64_t total)
{
    progress_log *l = user;
    l->calls++;
    if (done > l->last)
        l->last = done;
    l->total = total;
    return l->cancel_after && l->calls >= l->cancel_after;
}

static void test_keygen_progress(void)
{
    hbs_hss_params p;
    uint8_t pk[64];
    size_t pklen;
    hbs_hss_key *k = NULL;
    progress_log log = {0, 0, 0, 0};
    if (!parse(&p, "LMS_SHA256_M32_H10/LMOTS_SHA256_N32_W1,LMS_SHA256_M32_H5/LMOTS_SHA256_N32_W1",
               0))
        return;
    CHECK_INT(hbs_hss_keygen(&k, pk, sizeof pk, &pklen, &p, NULL, 0, on_progress, &log), HBS_OK);
    CHECK_INT(log.total, 1024 + 32);
    CHECK_INT(log.last, 1024 + 32);
    CHECK(log.calls >= 2);
    hbs_hss_key_free(k);
    k = NULL;
    log.calls = 0;
    log.cancel_after = 2;
    CHECK_INT(hbs_hss_keygen(&k, pk, sizeof pk, &pklen, &p, NULL, 0, on_progress, &log),
              HBS_ERR_CANCELLED);
    CHECK(k == NULL);
    /* random keys differ; bad arguments */
    uint8_t pk2[64];
    hbs_hss_key *k2 = NULL;
    CHECK_INT(hbs_hss_keygen(&k, pk, sizeof pk, &pklen, &p, NULL, 0, NULL, NULL), HBS_OK);
    CHECK_INT(hbs_hss_keygen(&k2, pk2, sizeof pk2, &pklen, &p, NULL, 0, NULL, NULL), HBS_OK);
    CHECK(memcmp(pk, pk2, pklen) != 0);
    hbs_hss_key_free(k);
    hbs_hss_key_free(k2);
    CHECK_INT(hbs_hss_keygen(&k, pk, 10, &pklen, &p, NULL, 0, NULL, NULL),
              HBS_ERR_BUFFER_TOO_SMALL);
    CHECK_INT(hbs_hss_keygen(&k, pk, sizeof pk, &pklen, &p, pk2, 5, NULL, NULL),
              HBS_ERR_INVALID_ARGUMENT);
    p.cache_height = 3;
    CHECK_INT(hbs_hss_keygen(&k, pk, sizeof pk, &pklen, &p, NULL, 0, NULL, NULL),
              HBS_ERR_INVALID_ARGUMENT);
}

const hbs_test hbs_tests_lms[] = {
    {"lms_params_table", test_params_table},
    {"lms_params_names", test_params_names},
    {"lms_message_hash", test_message_hash},
    {"lms_roundtrip_types", test_roundtrip_types},
    {"lms_negative", test_negative},
    {"lms_negative_hss", test_negative_hss},
    {"lms_exhaust_h5", test_exhaust},
    {"lms_exhaust_hss", test_exhaust_hss},
    {"lms_export_import_skip", test_export_import},
    {"lms_stripes_walk", test_stripes_walk},
    {"lms_skip_and_end", test_skip_and_end},
    {"lms_import_malformed", test_import_malformed},
    {"lms_keygen_progress", test_keygen_progress},
    {NULL, NULL},
};
