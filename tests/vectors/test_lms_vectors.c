/* LMS / HSS known-answer tests: RFC 8554 Appendix F, RFC 9858 Appendix A, the NIST ACVP LMS
 * folders (acvp/ and acvp-v1.1.0.40/), and liboqs's LMS KATs. The vector folder and the format
 * of each file are described in its README.md.
 *
 * ACVP LMS sigGen files hold no private key (only the group's public key), and RFC signatures
 * carry a random C: those signatures are verified, and where the RFC gives the private key
 * the signature is reproduced byte for byte from its C (the one-time signature) and from our
 * own tree (the authentication path). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hbs/lms.h"
#include "json.h"
#include "lms/hss.h"
#include "lms/lmots.h"
#include "lms/params.h"
#include "lms/tree.h"
#include "test.h"

#define NO_VECTORS "vectors folder not found: set HBS_VECTORS or place ../shared/vectors"

/* ---- reading files ---- */

static uint8_t *load_text(const char *rel, size_t *len)
{
    char path[4096];
    const char *dir = test_vectors_dir();
    uint8_t *text;
    if (!dir) {
        test_skip("%s", NO_VECTORS);
        return NULL;
    }
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    text = test_read_file(path, len);
    CHECK_MSG(text != NULL, "cannot read %s", path);
    return text;
}

static json *load_json(const char *rel)
{
    size_t len;
    uint8_t *text = load_text(rel, &len);
    json *doc;
    if (!text)
        return NULL;
    doc = json_parse((const char *)text, len);
    free(text);
    CHECK_MSG(doc != NULL, "%s: malformed JSON", rel);
    return doc;
}

/* A "key = value" text file (RFC sections, .rsp files): the value of `key` in the section
 * that starts at `sec` (or anywhere if sec is NULL), as newly allocated text without quotes;
 * NULL if absent. Lines beginning with '#' are comments. */
static char *kv_get(const char *text, const char *sec, const char *key)
{
    const char *p = text, *end;
    size_t klen = strlen(key);
    if (sec) {
        p = strstr(text, sec);
        if (!p)
            return NULL;
        p += strlen(sec);
    }
    end = strchr(p, '[');
    while (*p && (!sec || !end || p < end)) {
        const char *eol = strchr(p, '\n');
        size_t linelen = eol ? (size_t)(eol - p) : strlen(p);
        if (p[0] != '#' && linelen > klen && strncmp(p, key, klen) == 0 &&
            (p[klen] == ' ' || p[klen] == '=')) {
            const char *v = memchr(p, '=', linelen);
            if (v) {
                const char *ve = p + linelen;
                v++;
                while (v < ve && (*v == ' ' || *v == '"'))
                    v++;
                while (ve > v && (ve[-1] == ' ' || ve[-1] == '"' || ve[-1] == '\r'))
                    ve--;
                char *out = malloc((size_t)(ve - v) + 1);
                if (!out)
                    return NULL;
                memcpy(out, v, (size_t)(ve - v));
                out[ve - v] = '\0';
                return out;
            }
        }
        if (!eol)
            break;
        p = eol + 1;
    }
    return NULL;
}

static uint8_t *kv_hex(const char *text, const char *sec, const char *key, size_t *len)
{
    char *v = kv_get(text, sec, key);
    uint8_t *out;
    if (!v)
        return NULL;
    out = test_unhex(v, len);
    free(v);
    return out;
}

/* ---- helpers ---- */

/* The LMS signature at the end of an HSS signature with L levels: skips the signed public
 * keys of the upper levels using the typecodes. *off gets its offset; 0 on a parse error. */
static int last_lms_sig(const uint8_t *sig, size_t siglen, const uint8_t *pk, size_t *off)
{
    uint32_t L = hbs_lms_get32(pk);
    const uint8_t *key = pk + 4;
    size_t o = 4;
    for (uint32_t i = 0; i + 1 < L; i++) {
        const hbs_lms_type *t = hbs_lms_type_by_code(hbs_lms_get32(key));
        const hbs_lmots_type *ot = hbs_lmots_type_by_code(hbs_lms_get32(key + 4));
        size_t slen = hbs_lms_sig_bytes(t, ot);
        if (!slen || o + slen + 24 > siglen)
            return 0;
        key = sig + o + slen;
        o += slen + hbs_lms_pk_bytes(hbs_lms_type_by_code(hbs_lms_get32(key)));
    }
    *off = o;
    return o < siglen;
}

/* Re-creates the LMS signature `lsig` (made with tree I, SEED at leaf q over msg) from the
 * private key: the one-time signature from lsig's own C, and the path from our tree.
 * Returns 1 if every byte agrees. */
static int reproduce_lms_sig(const hbs_lms_type *t, const hbs_lmots_type *o, const uint8_t *I,
                             const uint8_t *seed, const uint8_t *lsig, size_t lsiglen,
                             const uint8_t *msg, size_t msglen, const uint8_t *hsspk,
                             size_t hsspklen)
{
    const size_t ots_len = 4 + (size_t)o->n * (1 + o->p), total = 8 + ots_len + t->h * t->m;
    uint32_t q;
    uint8_t *mine, pk[4 + 24 + HBS_LMS_MAX_N], seedbuf[16 + HBS_LMS_MAX_N];
    hbs_hss_key *key = NULL;
    hbs_hss_params p;
    size_t pklen, siglen;
    int ok = 0;

    if (lsiglen != total)
        return 0;
    q = hbs_lms_get32(lsig);
    mine = malloc(4 + total);
    if (!mine)
        return 0;
    memset(&p, 0, sizeof p);
    p.levels = 1;
    p.lms[0] = t;
    p.ots[0] = o;
    memcpy(seedbuf, I, 16);
    memcpy(seedbuf + 16, seed, o->n);
    if (hbs_hss_keygen(&key, pk, sizeof pk, &pklen, &p, seedbuf, 16 + o->n, NULL, NULL) ==
            HBS_OK &&
        (!hsspk || (pklen == hsspklen && memcmp(pk, hsspk, pklen) == 0)) &&
        hbs_hss_key_skip_to(key, q) == HBS_OK &&
        hbs_hss_sign(key, mine, 4 + total, &siglen, msg, msglen) == HBS_OK) {
        /* our signature has our C: keep q, the type fields and the path; redo the OTS part */
        ok = hbs_lmots_sign(o, mine + 8, I, q, seed, lsig + 8, msg, msglen) == HBS_OK &&
             memcmp(mine + 4, lsig, total) == 0;
    }
    hbs_hss_key_free(key);
    free(mine);
    return ok;
}

/* ---- RFC 8554 Appendix F ---- */

static void test_rfc8554(void)
{
    size_t len;
    uint8_t *text = load_text("rfc8554/rfc8554_appendixF_testcases.txt", &len);
    unsigned verified = 0, cases = 0, reproduced = 0;
    if (!text)
        return;
    for (int c = 1; c <= 2; c++) {
        char sec[64];
        size_t pklen, msglen, siglen, l1len, off;
        snprintf(sec, sizeof sec, "[rfc8554_testcase_%d]", c);
        uint8_t *pk = kv_hex((char *)text, sec, "hss_public_key", &pklen);
        uint8_t *msg = kv_hex((char *)text, sec, "message", &msglen);
        uint8_t *sig = kv_hex((char *)text, sec, "hss_signature", &siglen);
        uint8_t *l1 = kv_hex((char *)text, sec, "level1_public_key", &l1len);
        CHECK_MSG(pk && msg && sig && l1, "%s: missing fields", sec);
        if (pk && msg && sig && l1) {
            cases++;
            CHECK_INT(hbs_hss_verify(pk, pklen, msg, msglen, sig, siglen), HBS_OK);
            verified += hbs_hss_verify(pk, pklen, msg, msglen, sig, siglen) == HBS_OK;
            /* the embedded level-1 key is the one the file names */
            const hbs_lms_type *t0 = hbs_lms_type_by_code(hbs_lms_get32(pk + 4));
            const hbs_lmots_type *o0 = hbs_lmots_type_by_code(hbs_lms_get32(pk + 8));
            size_t s0 = hbs_lms_sig_bytes(t0, o0);
            CHECK(4 + s0 + l1len <= siglen && memcmp(sig + 4 + s0, l1, l1len) == 0);
            sig[siglen / 2] ^= 1;
            CHECK_INT(hbs_hss_verify(pk, pklen, msg, msglen, sig, siglen),
                      HBS_ERR_VERIFY_FAILED);
            sig[siglen / 2] ^= 1;
            msg[0] ^= 0x80;
            CHECK_INT(hbs_hss_verify(pk, pklen, msg, msglen, sig, siglen),
                      HBS_ERR_VERIFY_FAILED);
            msg[0] ^= 0x80;
            size_t seedlen, Ilen;
            uint8_t *seed = kv_hex((char *)text, sec, "level1_private_seed", &seedlen);
            uint8_t *I = kv_hex((char *)text, sec, "level1_private_I", &Ilen);
            if (seed && I && last_lms_sig(sig, siglen, pk, &off)) {
                const hbs_lms_type *t1 = hbs_lms_type_by_code(hbs_lms_get32(l1));
                const hbs_lmots_type *o1 = hbs_lmots_type_by_code(hbs_lms_get32(l1 + 4));
                uint8_t mypk[24 + HBS_LMS_MAX_N];
                CHECK_INT(hbs_lms_public_key(t1, o1, I, seed, mypk), HBS_OK);
                CHECK_MEM(mypk, l1, l1len);
                int ok = reproduce_lms_sig(t1, o1, I, seed, sig + off, siglen - off, msg, msglen,
                                           NULL, 0);
                CHECK_MSG(ok, "%s: level-1 signature not reproduced", sec);
                reproduced += ok;
            }
            free(seed);
            free(I);
        }
        free(pk);
        free(msg);
        free(sig);
        free(l1);
    }
    CHECK_INT(cases, 2);
    test_note("rfc8554: %u/%u verify, %u/1 level-1 keys and signatures reproduced", verified,
              cases, reproduced);
    free(text);
}

/* ---- RFC 9858 Appendix A ---- */

static void test_rfc9858(void)
{
    size_t len;
    uint8_t *text = load_text("rfc9858/rfc9858_appendixA_testcases.txt", &len);
    unsigned verified = 0, keys = 0, cases = 0, skipped = 0;
    if (!text)
        return;
    for (int c = 1; c <= 4; c++) {
        char sec[64];
        size_t pklen, msglen, siglen, seedlen, Ilen;
        snprintf(sec, sizeof sec, "[rfc9858_testcase_%d]", c);
        uint8_t *pk = kv_hex((char *)text, sec, "hss_public_key", &pklen);
        uint8_t *msg = kv_hex((char *)text, sec, "message", &msglen);
        uint8_t *sig = kv_hex((char *)text, sec, "hss_signature", &siglen);
        uint8_t *seed = kv_hex((char *)text, sec, "private_seed", &seedlen);
        uint8_t *I = kv_hex((char *)text, sec, "private_I", &Ilen);
        CHECK_MSG(pk && msg && sig && seed && I && Ilen == 16, "%s: missing fields", sec);
        if (pk && msg && sig && seed && I && Ilen == 16 && pklen > 12) {
            const hbs_lms_type *t = hbs_lms_type_by_code(hbs_lms_get32(pk + 4));
            const hbs_lmots_type *o = hbs_lmots_type_by_code(hbs_lms_get32(pk + 8));
            cases++;
            CHECK_INT(hbs_hss_verify(pk, pklen, msg, msglen, sig, siglen), HBS_OK);
            verified += hbs_hss_verify(pk, pklen, msg, msglen, sig, siglen) == HBS_OK;
            sig[siglen - 1] ^= 1;
            CHECK_INT(hbs_hss_verify(pk, pklen, msg, msglen, sig, siglen),
                      HBS_ERR_VERIFY_FAILED);
            sig[siglen - 1] ^= 1;
            /* Tall trees (A.4 is H20: a million leaves) only on the full pass. */
            if (t && o && (t->h <= 10 || test_full_pass())) {
                /* the key generated from (I, SEED) must be the file's public key */
                int ok = reproduce_lms_sig(t, o, I, seed, sig + 4, siglen - 4, msg, msglen, pk,
                                           pklen);
                keys += ok;
                CHECK_MSG(ok, "%s: key or signature not reproduced", sec);
            } else {
                skipped++;
            }
        }
        free(pk);
        free(msg);
        free(sig);
        free(seed);
        free(I);
    }
    CHECK_INT(cases, 4);
    test_note("rfc9858: %u/%u verify, %u/%u keys and signatures regenerated", verified, cases,
              keys, cases - skipped);
    if (skipped)
        test_note("%u H20 key(s) regenerated on the full pass only", skipped);
    free(text);
}

/* ---- ACVP ---- */

/* Group types of an ACVP LMS group; 0 (and a failure) if unknown. */
static int group_types(const json *g, const hbs_lms_type **t, const hbs_lmots_type **o)
{
    *t = hbs_lms_type_by_name(json_str(json_get(g, "lmsMode")));
    *o = hbs_lmots_type_by_name(json_str(json_get(g, "lmOtsMode")));
    CHECK_MSG(*t && *o, "tgId %lld: unknown modes", json_int(json_get(g, "tgId"), -1));
    return *t && *o;
}

static void test_acvp_keygen(void)
{
    json *doc = load_json("acvp/LMS-keyGen-1.0/internalProjection.json");
    const json *groups = json_get(doc, "testGroups");
    unsigned pass = 0, total = 0;
    if (!doc)
        return;
    for (size_t g = 0; g < json_len(groups); g++) {
        const json *grp = json_at(groups, g), *tests = json_get(grp, "tests");
        const hbs_lms_type *t;
        const hbs_lmots_type *o;
        if (!group_types(grp, &t, &o))
            continue;
        for (size_t i = 0; i < json_len(tests); i++) {
            const json *tc = json_at(tests, i);
            size_t seedlen, Ilen, pklen;
            uint8_t *seed = json_hex(tc, "seed", &seedlen), *I = json_hex(tc, "i", &Ilen);
            uint8_t *pk = json_hex(tc, "publicKey", &pklen);
            uint8_t mine[24 + HBS_LMS_MAX_N];
            total++;
            if (seed && I && pk && Ilen == 16 && seedlen == o->n && pklen == 24 + (size_t)t->m &&
                hbs_lms_public_key(t, o, I, seed, mine) == HBS_OK && memcmp(mine, pk, pklen) == 0)
                pass++;
            else
                CHECK_MSG(0, "keyGen tcId %lld differs", json_int(json_get(tc, "tcId"), -1));
            free(seed);
            free(I);
            free(pk);
        }
    }
    CHECK_INT(total, 9);
    test_note("acvp/LMS-keyGen-1.0: %u/%u public keys regenerated", pass, total);
    json_free(doc);
}

/* sigGen: every signature verifies under the group key, and fails with one bit flipped. */
static void siggen_file(const char *rel, unsigned expect_total)
{
    json *doc = load_json(rel);
    const json *groups = json_get(doc, "testGroups");
    unsigned pass = 0, total = 0;
    if (!doc)
        return;
    for (size_t g = 0; g < json_len(groups); g++) {
        const json *grp = json_at(groups, g), *tests = json_get(grp, "tests");
        const hbs_lms_type *t;
        const hbs_lmots_type *o;
        size_t pklen;
        uint8_t *pk = json_hex(grp, "publicKey", &pklen);
        if (!group_types(grp, &t, &o) || !pk) {
            free(pk);
            continue;
        }
        for (size_t i = 0; i < json_len(tests); i++) {
            const json *tc = json_at(tests, i);
            size_t msglen, siglen;
            uint8_t *msg = json_hex(tc, "message", &msglen);
            uint8_t *sig = json_hex(tc, "signature", &siglen);
            int ok = msg && sig && siglen == hbs_lms_sig_bytes(t, o) &&
                     hbs_lms_verify(pk, pklen, msg, msglen, sig, siglen) == HBS_OK;
            if (ok) {
                sig[(siglen * 3) / 4] ^= 0x10;
                ok = hbs_lms_verify(pk, pklen, msg, msglen, sig, siglen) ==
                     HBS_ERR_VERIFY_FAILED;
            }
            CHECK_MSG(ok, "%s tgId %zu tcId %lld", rel, g + 1, json_int(json_get(tc, "tcId"), -1));
            pass += ok;
            total++;
            free(msg);
            free(sig);
        }
        free(pk);
    }
    CHECK_INT(total, expect_total);
    test_note("%.*s: %u/%u verify", (int)(strrchr(rel, '/') - rel), rel, pass, total);
    json_free(doc);
}

static void sigver_file(const char *rel, unsigned expect_total)
{
    json *doc = load_json(rel);
    const json *groups = json_get(doc, "testGroups");
    unsigned agree = 0, total = 0, invalid = 0;
    if (!doc)
        return;
    for (size_t g = 0; g < json_len(groups); g++) {
        const json *grp = json_at(groups, g), *tests = json_get(grp, "tests");
        const hbs_lms_type *t;
        const hbs_lmots_type *o;
        size_t pklen;
        uint8_t *pk = json_hex(grp, "publicKey", &pklen);
        if (!group_types(grp, &t, &o) || !pk) {
            free(pk);
            continue;
        }
        for (size_t i = 0; i < json_len(tests); i++) {
            const json *tc = json_at(tests, i);
            size_t msglen, siglen;
            uint8_t *msg = json_hex(tc, "message", &msglen);
            uint8_t *sig = json_hex(tc, "signature", &siglen);
            int expect = json_is_true(json_get(tc, "testPassed"));
            int got = msg && sig && hbs_lms_verify(pk, pklen, msg, msglen, sig, siglen) == HBS_OK;
            CHECK_MSG(got == expect, "%s tcId %lld (%s): got %d", rel,
                      json_int(json_get(tc, "tcId"), -1), json_str(json_get(tc, "reason")), got);
            agree += got == expect;
            invalid += !expect;
            total++;
            free(msg);
            free(sig);
        }
        free(pk);
    }
    CHECK_INT(total, expect_total);
    test_note("%.*s: %u/%u verdicts agree (%u expected failures)",
              (int)(strrchr(rel, '/') - rel), rel, agree, total, invalid);
    json_free(doc);
}

static void test_acvp_siggen(void)
{
    siggen_file("acvp/LMS-sigGen-1.0/internalProjection.json", 20);
    siggen_file("acvp/LMS-sigGen-SP800-208/internalProjection.json", 42);
    test_note("no private keys in these files: verified, not re-signed");
}

static void test_acvp_sigver(void)
{
    sigver_file("acvp/LMS-sigVer-1.0/internalProjection.json", 8);
    sigver_file("acvp/LMS-sigVer-SP800-208/internalProjection.json", 8);
}

static void test_acvp40_siggen(void)
{
    siggen_file("acvp-v1.1.0.40/LMS-sigGen-1.0/internalProjection.json", 800);
}

static void test_acvp40_sigver(void)
{
    sigver_file("acvp-v1.1.0.40/LMS-sigVer-1.0/internalProjection.json", 320);
}

/* ---- liboqs KATs ---- */

static const char *const liboqs_files[] = {
    "LMS_SHA256_H5_W1",  "LMS_SHA256_H5_W2",  "LMS_SHA256_H5_W4",  "LMS_SHA256_H5_W8",
    "LMS_SHA256_H10_W1", "LMS_SHA256_H10_W2", "LMS_SHA256_H10_W4", "LMS_SHA256_H10_W8",
    "LMS_SHA256_H15_W1", "LMS_SHA256_H15_W2", "LMS_SHA256_H15_W4", "LMS_SHA256_H15_W8",
    "LMS_SHA256_H20_W1", "LMS_SHA256_H20_W2", "LMS_SHA256_H20_W4", "LMS_SHA256_H20_W8",
    "LMS_SHA256_H5_W8_H5_W8", "LMS_SHA256_H10_W4_H5_W8",
};

static void test_liboqs(void)
{
    unsigned pass = 0, total = 0, bare = 0;
    for (size_t f = 0; f < sizeof liboqs_files / sizeof liboqs_files[0]; f++) {
        char rel[256];
        size_t len, pklen, msglen, siglen;
        snprintf(rel, sizeof rel, "liboqs-kat/lms/%s.rsp", liboqs_files[f]);
        uint8_t *text = load_text(rel, &len);
        if (!text)
            return;
        uint8_t *pk = kv_hex((char *)text, NULL, "pk", &pklen);
        uint8_t *msg = kv_hex((char *)text, NULL, "msg", &msglen);
        uint8_t *sig = kv_hex((char *)text, NULL, "sm", &siglen);
        int ok = 0;
        if (pk && msg && sig) {
            /* a bare LMS key is 24 + m bytes; an HSS key has the 4-byte L in front */
            int is_bare = pklen == 24 + 32;
            int (*verify)(const uint8_t *, size_t, const uint8_t *, size_t, const uint8_t *,
                          size_t) = is_bare ? hbs_lms_verify : hbs_hss_verify;
            bare += is_bare;
            ok = verify(pk, pklen, msg, msglen, sig, siglen) == HBS_OK;
            sig[siglen - 40] ^= 4;
            ok = ok && verify(pk, pklen, msg, msglen, sig, siglen) == HBS_ERR_VERIFY_FAILED;
        }
        CHECK_MSG(ok, "%s", rel);
        pass += ok;
        total++;
        free(pk);
        free(msg);
        free(sig);
        free(text);
    }
    test_note("liboqs-kat/lms: %u/%u verify (%u bare LMS)", pass, total, bare);
}

const hbs_test hbs_tests_lms_vectors[] = {
    {"lms_rfc8554", test_rfc8554},
    {"lms_rfc9858", test_rfc9858},
    {"lms_acvp_keygen", test_acvp_keygen},
    {"lms_acvp_siggen", test_acvp_siggen},
    {"lms_acvp_sigver", test_acvp_sigver},
    {"lms_acvp40_siggen", test_acvp40_siggen},
    {"lms_acvp40_sigver", test_acvp40_sigver},
    {"lms_liboqs", test_liboqs},
    {NULL, NULL},
};
