/* Unit tests of the key encodings (src/encoding): base64, DER and PEM key files.
 *
 * 1. Published examples: RFC 4648 base64 vectors; the two example keys of RFC 9909
 *    Appendix C, rebuilt byte by byte from the RFC's ASN.1 and compared in DER and PEM.
 * 2. The OID table against the RFC's list of names, and each pre-hash it binds.
 * 3. Round trips for all 12 parameter sets x pure/HashSLH-DSA x public/secret, DER and PEM.
 * 4. The system `openssl asn1parse` reads every encoding with the expected structure.
 * 5. Rejections: truncation at every length, an extra byte, every flip of every header
 *    byte, PEM labels, base64 errors, unknown OIDs, wrong lengths, PKCS#8 variants,
 *    non-DER forms and random garbage, each with the right error code and no crash. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hbs/keyfile.h"
#include "encoding/base64.h"
#include "test.h"

/* ---- helpers ----------------------------------------------------------------------------- */

/* Fills a key of the given shape with pseudo-random bytes. */
static void make_key(hbs_key *k, hbs_slhdsa_id alg, hbs_key_kind kind, int hashed)
{
    const hbs_slhdsa_params *p = hbs_slhdsa_params_get(alg);
    memset(k, 0, sizeof *k);
    k->scheme = HBS_SCHEME_SLHDSA;
    k->kind = kind;
    k->alg = alg;
    k->prehash = hashed ? hbs_slhdsa_oid_prehash(alg) : HBS_PREHASH_NONE;
    k->len = kind == HBS_KEY_SECRET ? hbs_slhdsa_sk_bytes(p) : hbs_slhdsa_pk_bytes(p);
    test_rand_bytes(k->bytes, k->len);
}

static int same_key(const hbs_key *a, const hbs_key *b)
{
    return a->scheme == b->scheme && a->kind == b->kind && a->alg == b->alg &&
           a->prehash == b->prehash && a->len == b->len && memcmp(a->bytes, b->bytes, a->len) == 0;
}

static int all_zero(const void *p, size_t len)
{
    const uint8_t *b = p;
    for (size_t i = 0; i < len; i++)
        if (b[i])
            return 0;
    return 1;
}

static uint8_t *unhex_or_fail(const char *hex, size_t *len)
{
    uint8_t *b = test_unhex(hex, len);
    CHECK_MSG(b != NULL, "bad hex in the test itself");
    return b;
}

static int decode(hbs_key *k, const void *in, size_t len)
{
    return hbs_key_decode(k, (const uint8_t *)in, len);
}

static int decode_str(hbs_key *k, const char *s) { return decode(k, s, strlen(s)); }

static size_t encode_der(const hbs_key *k, uint8_t *out)
{
    size_t len = HBS_KEY_DER_MAX;
    int err = hbs_key_encode_der(k, out, &len);
    CHECK_INT(err, HBS_OK);
    return err ? 0 : len;
}

static size_t encode_pem(const hbs_key *k, char *out)
{
    size_t len = HBS_KEY_PEM_MAX;
    int err = hbs_key_encode_pem(k, out, &len);
    CHECK_INT(err, HBS_OK);
    return err ? 0 : len;
}

/* ---- 1. published examples --------------------------------------------------------------- */

static void test_base64_rfc4648(void)
{
    /* RFC 4648, section 10. */
    static const char *const vec[][2] = {
        {"", ""},         {"f", "Zg=="},         {"fo", "Zm8="},     {"foo", "Zm9v"},
        {"foob", "Zm9vYg=="}, {"fooba", "Zm9vYmE="}, {"foobar", "Zm9vYmFy"},
    };
    for (size_t i = 0; i < sizeof vec / sizeof vec[0]; i++) {
        const char *raw = vec[i][0], *b64 = vec[i][1];
        char enc[16] = {0};
        CHECK_INT(hbs_base64_encoded_len(strlen(raw)), strlen(b64));
        hbs_base64_encode(enc, (const uint8_t *)raw, strlen(raw));
        CHECK_MSG(memcmp(enc, b64, strlen(b64)) == 0, "encode(\"%s\") = %.*s", raw,
                  (int)strlen(b64), enc);
        uint8_t dec[16];
        size_t declen = sizeof dec;
        CHECK_INT(hbs_base64_decode(dec, &declen, b64, strlen(b64), 0), 0);
        CHECK_INT(declen, strlen(raw));
        CHECK_MEM(dec, raw, strlen(raw));
    }
    /* Every byte value through every position of a group. */
    uint8_t all[256], back[256];
    char text[344];
    for (int i = 0; i < 256; i++)
        all[i] = (uint8_t)i;
    for (size_t len = 254; len <= 256; len++) {
        hbs_base64_encode(text, all, len);
        size_t backlen = sizeof back;
        CHECK_INT(hbs_base64_decode(back, &backlen, text, hbs_base64_encoded_len(len), 0), 0);
        CHECK_INT(backlen, len);
        CHECK_MEM(back, all, len);
    }
    /* The alphabet in order: 0x00 0x10 0x83 ... encodes to "ABCD...+/". */
    static const char alphabet[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t alen = sizeof back;
    CHECK_INT(hbs_base64_decode(back, &alen, alphabet, 64, 0), 0);
    CHECK_INT(alen, 48);
    hbs_base64_encode(text, back, 48);
    CHECK_MEM(text, alphabet, 64);
}

static void test_base64_rejects(void)
{
    static const char *const bad[] = {
        "Zg=",      /* not a multiple of 4 */
        "Zg",       /* no padding */
        "Z===",     /* a group needs two characters before padding */
        "====",     /* padding only */
        "Zh==",     /* non-zero bits below the last byte */
        "Zm9=",     /* same with one pad */
        "Zm9v=",    /* padding after a full group */
        "Zg==Zg==", /* data after padding */
        "Zg=a",     /* data after padding inside a group */
        "Zm9v!A==", /* not in the alphabet */
        "Zm-v",     /* the URL-safe alphabet is not ours */
        "Zm_v",
        "Zm9v\x80\x80\x80\x80",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        uint8_t out[16];
        size_t outlen = sizeof out;
        memset(out, 0xaa, sizeof out);
        CHECK_MSG(hbs_base64_decode(out, &outlen, bad[i], strlen(bad[i]), 1) != 0,
                  "accepted \"%s\"", bad[i]);
        CHECK(outlen == 0 && all_zero(out, sizeof out));
    }
    /* White space only where skipping is asked for. */
    uint8_t out[16];
    size_t outlen = sizeof out;
    CHECK(hbs_base64_decode(out, &outlen, "Zm9v\r\nYmFy", 10, 0) != 0);
    outlen = sizeof out;
    static const char spaced[] = " Zm9v\r\n\tYm Fy\n";
    CHECK_INT(hbs_base64_decode(out, &outlen, spaced, strlen(spaced), 1), 0);
    CHECK(outlen == 6 && memcmp(out, "foobar", 6) == 0);
    /* Too small an output. */
    outlen = 5;
    CHECK(hbs_base64_decode(out, &outlen, "Zm9vYmFy", 8, 0) != 0);
}

/* RFC 9909, Appendix C: the example id-slh-dsa-sha2-128s keys. */
static const char rfc_pk_pem[] =
    "-----BEGIN PUBLIC KEY-----\n"
    "MDAwCwYJYIZIAWUDBAMUAyEAK4EJ7Hd8qk4fAkzPz5SX2ZGAUJKA9CVq8rB6+AKJ\n"
    "tJQ=\n"
    "-----END PUBLIC KEY-----\n";
static const char rfc_sk_pem[] =
    "-----BEGIN PRIVATE KEY-----\n"
    "MFICAQAwCwYJYIZIAWUDBAMUBECiJjvKRYYINlIxYASVI9YhZ3+tkNUetgZ6Mn4N\n"
    "HmSlASuBCex3fKpOHwJMz8+Ul9mRgFCSgPQlavKwevgCibSU\n"
    "-----END PRIVATE KEY-----\n";
/* The key bytes, from the RFC's dump of those files. */
static const char rfc_pk_hex[] =
    "2b8109ec777caa4e1f024ccfcf9497d99180509280f4256af2b07af80289b494";
static const char rfc_sk_hex[] =
    "a2263bca45860836523160049523d621677fad90d51eb6067a327e0d1e64a501"
    "2b8109ec777caa4e1f024ccfcf9497d99180509280f4256af2b07af80289b494";
/* The same files in DER, written out by hand from the ASN.1 of RFC 9909 and RFC 5280/5958:
 *   SubjectPublicKeyInfo: 30 30 | AlgorithmIdentifier 30 0b | OID 06 09 60 86 48 01 65 03 04
 *                         03 14 (2.16.840.1.101.3.4.3.20) | BIT STRING 03 21 00 || pk
 *   OneAsymmetricKey:     30 52 | version 02 01 00 | AlgorithmIdentifier (as above) |
 *                         privateKey 04 40 || sk (raw, no inner OCTET STRING) */
static const char rfc_pk_der_head[] = "3030" "300b" "0609608648016503040314" "032100";
static const char rfc_sk_der_head[] = "3052" "020100" "300b" "0609608648016503040314" "0440";

static void check_example(const char *pem, const char *key_hex, const char *head_hex,
                          hbs_key_kind kind)
{
    char want_hex[512];
    snprintf(want_hex, sizeof want_hex, "%s%s", head_hex, key_hex);
    size_t keylen, wantlen;
    uint8_t *key = unhex_or_fail(key_hex, &keylen), *want = unhex_or_fail(want_hex, &wantlen);
    if (!key || !want)
        goto out;

    hbs_key k;
    memset(&k, 0, sizeof k);
    k.scheme = HBS_SCHEME_SLHDSA;
    k.kind = kind;
    k.alg = HBS_SLHDSA_SHA2_128S;
    k.prehash = HBS_PREHASH_NONE;
    k.len = keylen;
    memcpy(k.bytes, key, keylen);

    uint8_t der[HBS_KEY_DER_MAX];
    size_t derlen = encode_der(&k, der);
    CHECK_INT(derlen, wantlen);
    CHECK_MSG(derlen == wantlen && memcmp(der, want, wantlen) == 0,
              "DER differs from the hand-built RFC 9909 encoding");

    char text[HBS_KEY_PEM_MAX];
    size_t textlen = encode_pem(&k, text);
    CHECK_INT(textlen, strlen(pem));
    CHECK_MSG(strcmp(text, pem) == 0, "PEM differs from RFC 9909 Appendix C:\n%s", text);

    hbs_key back;
    CHECK_INT(decode_str(&back, pem), HBS_OK);
    CHECK(same_key(&back, &k));
    CHECK_INT(decode(&back, want, wantlen), HBS_OK);
    CHECK(same_key(&back, &k));
out:
    free(key);
    free(want);
}

static void test_rfc9909_examples(void)
{
    check_example(rfc_pk_pem, rfc_pk_hex, rfc_pk_der_head, HBS_KEY_PUBLIC);
    check_example(rfc_sk_pem, rfc_sk_hex, rfc_sk_der_head, HBS_KEY_SECRET);
    test_note("RFC 9909 Appendix C public and private key");
}

/* ---- 2. the OID table -------------------------------------------------------------------- */

/* RFC 9909, Section 3, as printed: name, arc under 2.16.840.1.101.3.4.3, the FIPS 205 set
 * the name denotes and, for HashSLH-DSA, the pre-hash in the name. */
typedef struct {
    const char *oid_name;
    unsigned arc;
    const char *set;
    const char *prehash;
} rfc_oid;

static const rfc_oid rfc_oids[] = {
    {"id-slh-dsa-sha2-128s", 20, "SLH-DSA-SHA2-128s", NULL},
    {"id-slh-dsa-sha2-128f", 21, "SLH-DSA-SHA2-128f", NULL},
    {"id-slh-dsa-sha2-192s", 22, "SLH-DSA-SHA2-192s", NULL},
    {"id-slh-dsa-sha2-192f", 23, "SLH-DSA-SHA2-192f", NULL},
    {"id-slh-dsa-sha2-256s", 24, "SLH-DSA-SHA2-256s", NULL},
    {"id-slh-dsa-sha2-256f", 25, "SLH-DSA-SHA2-256f", NULL},
    {"id-slh-dsa-shake-128s", 26, "SLH-DSA-SHAKE-128s", NULL},
    {"id-slh-dsa-shake-128f", 27, "SLH-DSA-SHAKE-128f", NULL},
    {"id-slh-dsa-shake-192s", 28, "SLH-DSA-SHAKE-192s", NULL},
    {"id-slh-dsa-shake-192f", 29, "SLH-DSA-SHAKE-192f", NULL},
    {"id-slh-dsa-shake-256s", 30, "SLH-DSA-SHAKE-256s", NULL},
    {"id-slh-dsa-shake-256f", 31, "SLH-DSA-SHAKE-256f", NULL},
    {"id-hash-slh-dsa-sha2-128s-with-sha256", 35, "SLH-DSA-SHA2-128s", "SHA2-256"},
    {"id-hash-slh-dsa-sha2-128f-with-sha256", 36, "SLH-DSA-SHA2-128f", "SHA2-256"},
    {"id-hash-slh-dsa-sha2-192s-with-sha512", 37, "SLH-DSA-SHA2-192s", "SHA2-512"},
    {"id-hash-slh-dsa-sha2-192f-with-sha512", 38, "SLH-DSA-SHA2-192f", "SHA2-512"},
    {"id-hash-slh-dsa-sha2-256s-with-sha512", 39, "SLH-DSA-SHA2-256s", "SHA2-512"},
    {"id-hash-slh-dsa-sha2-256f-with-sha512", 40, "SLH-DSA-SHA2-256f", "SHA2-512"},
    {"id-hash-slh-dsa-shake-128s-with-shake128", 41, "SLH-DSA-SHAKE-128s", "SHAKE-128"},
    {"id-hash-slh-dsa-shake-128f-with-shake128", 42, "SLH-DSA-SHAKE-128f", "SHAKE-128"},
    {"id-hash-slh-dsa-shake-192s-with-shake256", 43, "SLH-DSA-SHAKE-192s", "SHAKE-256"},
    {"id-hash-slh-dsa-shake-192f-with-shake256", 44, "SLH-DSA-SHAKE-192f", "SHAKE-256"},
    {"id-hash-slh-dsa-shake-256s-with-shake256", 45, "SLH-DSA-SHAKE-256s", "SHAKE-256"},
    {"id-hash-slh-dsa-shake-256f-with-shake256", 46, "SLH-DSA-SHAKE-256f", "SHAKE-256"},
};
#define NUM_RFC_OIDS (sizeof rfc_oids / sizeof rfc_oids[0])

/* The RFC entry for a key's algorithm, found by the set's FIPS 205 name. */
static const rfc_oid *rfc_entry(hbs_slhdsa_id alg, int hashed)
{
    const char *name = hbs_slhdsa_name(hbs_slhdsa_params_get(alg));
    for (size_t i = 0; i < NUM_RFC_OIDS; i++)
        if (name && strcmp(rfc_oids[i].set, name) == 0 && (rfc_oids[i].prehash != NULL) == hashed)
            return &rfc_oids[i];
    return NULL;
}

/* The entry for an arc, or NULL. */
static const rfc_oid *rfc_by_arc(unsigned arc)
{
    for (size_t i = 0; i < NUM_RFC_OIDS; i++)
        if (rfc_oids[i].arc == arc)
            return &rfc_oids[i];
    return NULL;
}

static void test_oid_table(void)
{
    for (size_t i = 0; i < NUM_RFC_OIDS; i++) {
        const rfc_oid *e = &rfc_oids[i];
        const hbs_slhdsa_params *p = hbs_slhdsa_params_by_name(e->set);
        CHECK_MSG(p != NULL, "no parameter set %s", e->set);
        if (!p)
            continue;
        hbs_slhdsa_id alg = hbs_slhdsa_params_id(p);
        hbs_prehash want = HBS_PREHASH_NONE;
        if (e->prehash) {
            CHECK_INT(hbs_prehash_by_name(&want, e->prehash), HBS_OK);
            CHECK_MSG(hbs_slhdsa_oid_prehash(alg) == want, "%s: bound pre-hash %d, want %s",
                      e->oid_name, (int)hbs_slhdsa_oid_prehash(alg), e->prehash);
        }
        /* Encode a public key and find the arc as the OID's last byte (offset 14). */
        hbs_key k, back;
        make_key(&k, alg, HBS_KEY_PUBLIC, e->prehash != NULL);
        uint8_t der[HBS_KEY_DER_MAX];
        size_t len = encode_der(&k, der);
        CHECK_MSG(len > 15 && der[14] == e->arc, "%s encodes arc %u, want %u", e->oid_name,
                  len > 15 ? der[14] : 0, e->arc);
        CHECK_INT(decode(&back, der, len), HBS_OK);
        CHECK_INT(back.alg, alg);
        CHECK_INT(back.prehash, want);
    }
    /* The ids follow the RFC's order, as slhdsa.h promises. */
    for (unsigned id = 0; id < HBS_SLHDSA_NUM_PARAMS; id++) {
        CHECK_MSG(strcmp(hbs_slhdsa_name(hbs_slhdsa_params_get((hbs_slhdsa_id)id)),
                         rfc_oids[id].set) == 0,
                  "id %u is %s, the RFC's %u-th OID is %s", id,
                  hbs_slhdsa_name(hbs_slhdsa_params_get((hbs_slhdsa_id)id)), id,
                  rfc_oids[id].oid_name);
    }
    CHECK_INT(hbs_slhdsa_oid_prehash(HBS_SLHDSA_NUM_PARAMS), HBS_PREHASH_NONE);
}

/* ---- 3. round trips ---------------------------------------------------------------------- */

static void test_roundtrip_all(void)
{
    int count = 0;
    for (unsigned id = 0; id < HBS_SLHDSA_NUM_PARAMS; id++) {
        const hbs_slhdsa_params *p = hbs_slhdsa_params_get((hbs_slhdsa_id)id);
        size_t n = hbs_slhdsa_n(p);
        for (int hashed = 0; hashed < 2; hashed++) {
            for (int kind = HBS_KEY_PUBLIC; kind <= HBS_KEY_SECRET; kind++) {
                hbs_key k, back;
                make_key(&k, (hbs_slhdsa_id)id, (hbs_key_kind)kind, hashed);
                uint8_t der[HBS_KEY_DER_MAX];
                char pem[HBS_KEY_PEM_MAX];
                size_t derlen = encode_der(&k, der), pemlen = encode_pem(&k, pem);
                /* Sizes from the ASN.1: 18 header bytes around a public key; around a secret
                 * key 20, or 22 once 4n = 128 needs a two-byte length (and so does the
                 * outer SEQUENCE). */
                size_t want = kind == HBS_KEY_PUBLIC ? 18 + 2 * n : (n == 32 ? 22 : 20) + 4 * n;
                CHECK_INT(derlen, want);
                CHECK_INT(strlen(pem), pemlen);
                CHECK_INT(decode(&back, der, derlen), HBS_OK);
                CHECK_MSG(same_key(&back, &k), "DER round trip of set %u hashed %d kind %d", id,
                          hashed, kind);
                CHECK_INT(decode(&back, pem, pemlen), HBS_OK);
                CHECK_MSG(same_key(&back, &k), "PEM round trip of set %u hashed %d kind %d", id,
                          hashed, kind);
                /* PEM layout: 64-character lines, final newline, matching labels. */
                const char *label = kind == HBS_KEY_PUBLIC ? "PUBLIC KEY" : "PRIVATE KEY";
                char begin[64], end[64];
                snprintf(begin, sizeof begin, "-----BEGIN %s-----\n", label);
                snprintf(end, sizeof end, "-----END %s-----\n", label);
                CHECK(strncmp(pem, begin, strlen(begin)) == 0);
                CHECK(pemlen > strlen(end) && strcmp(pem + pemlen - strlen(end), end) == 0);
                size_t line = 0;
                for (const char *c = pem + strlen(begin); c < pem + pemlen - strlen(end); c++) {
                    if (*c == '\n') {
                        CHECK(line > 0 && line <= 64);
                        line = 0;
                    } else {
                        line++;
                    }
                }
                count += 2;
            }
        }
    }
    test_note("%d encodings", count);
}

/* ---- 4. openssl asn1parse ---------------------------------------------------------------- */

/* One line of `openssl asn1parse` output: depth, length, type and the value after ':'. */
typedef struct {
    int depth;
    long len;
    char type[32];
    char value[600];
} asn1_line;

static int parse_asn1_line(const char *s, asn1_line *l)
{
    const char *d = strstr(s, "d="), *lp = strstr(s, " l=");
    const char *kind = strstr(s, "prim:");
    if (!kind)
        kind = strstr(s, "cons:");
    if (!d || !lp || !kind)
        return -1;
    l->depth = atoi(d + 2);
    l->len = atol(lp + 3);
    const char *t = kind + 5;
    while (*t == ' ')
        t++;
    size_t i = 0;
    /* The type is padded with spaces; a value such as "[HEX DUMP]:..." may follow. */
    while (*t && *t != ':' && *t != '\n' && !(t[0] == ' ' && t[1] == ' ') &&
           i + 1 < sizeof l->type)
        l->type[i++] = *t++;
    while (*t == ' ')
        t++;
    while (i > 0 && l->type[i - 1] == ' ')
        i--;
    l->type[i] = '\0';
    if (*t == ':')
        t++;
    snprintf(l->value, sizeof l->value, "%s", t);
    l->value[strcspn(l->value, "\r\n")] = '\0';
    return 0;
}

static int run_asn1parse(const char *path, int pem, asn1_line *lines, int max)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "openssl asn1parse -inform %s -in '%s' 2>/dev/null",
             pem ? "PEM" : "DER", path);
    FILE *f = popen(cmd, "r");
    if (!f)
        return -1;
    char buf[1024];
    int n = 0;
    while (fgets(buf, sizeof buf, f))
        if (n < max && parse_asn1_line(buf, &lines[n]) == 0)
            n++;
    return pclose(f) == 0 ? n : -1;
}

/* Whether OpenSSL's text for the OID names the right one: the dotted form (OpenSSL before
 * 3.5 knows no SLH-DSA names), or a name that mentions the parameter set. */
static int oid_text_ok(const char *text, const rfc_oid *e)
{
    char dotted[64];
    snprintf(dotted, sizeof dotted, "2.16.840.1.101.3.4.3.%u", e->arc);
    if (strcmp(text, dotted) == 0)
        return 1;
    if (isdigit((unsigned char)text[0]))
        return 0;
    /* "SLH-DSA-SHA2-128s" -> look for "sha2-128s" in the lowered name. */
    char lower[600], want[32];
    size_t i = 0;
    for (; text[i] && i + 1 < sizeof lower; i++)
        lower[i] = (char)tolower((unsigned char)text[i]);
    lower[i] = '\0';
    const char *set = e->set + strlen("SLH-DSA-");
    for (i = 0; set[i] && i + 1 < sizeof want; i++)
        want[i] = (char)tolower((unsigned char)set[i]);
    want[i] = '\0';
    return strstr(lower, want) != NULL && (e->prehash == NULL) == (strstr(lower, "with") == NULL);
}

static int write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t w = fwrite(data, 1, len, f);
    return (fclose(f) == 0 && w == len) ? 0 : -1;
}

static void check_asn1parse(const hbs_key *k, const char *path, int pem)
{
    const rfc_oid *e = rfc_entry(k->alg, k->prehash != HBS_PREHASH_NONE);
    asn1_line l[8];
    int n = run_asn1parse(path, pem, l, 8);
    int pub = k->kind == HBS_KEY_PUBLIC;
    CHECK_MSG(n == (pub ? 4 : 5), "%s: openssl asn1parse gave %d elements", path, n);
    if (n != (pub ? 4 : 5) || !e)
        return;
    int i = 0;
    CHECK(l[i].depth == 0 && strcmp(l[i].type, "SEQUENCE") == 0);
    i++;
    if (!pub) {
        CHECK(l[i].depth == 1 && strcmp(l[i].type, "INTEGER") == 0 && l[i].len == 1);
        CHECK_MSG(strcmp(l[i].value, "00") == 0 || strcmp(l[i].value, "0") == 0,
                  "version %s", l[i].value);
        i++;
    }
    CHECK(l[i].depth == 1 && strcmp(l[i].type, "SEQUENCE") == 0 && l[i].len == 11);
    i++;
    CHECK(l[i].depth == 2 && strcmp(l[i].type, "OBJECT") == 0 && l[i].len == 9);
    CHECK_MSG(oid_text_ok(l[i].value, e), "%s: OID reads '%s', want %s (.%u)", path, l[i].value,
              e->oid_name, e->arc);
    i++;
    if (pub) {
        CHECK(l[i].depth == 1 && strcmp(l[i].type, "BIT STRING") == 0);
        CHECK_INT(l[i].len, k->len + 1);
    } else {
        CHECK(l[i].depth == 1 && strcmp(l[i].type, "OCTET STRING") == 0);
        CHECK_INT(l[i].len, k->len);
        /* OpenSSL prints the contents as "[HEX DUMP]:A226...": they must be the raw sk. */
        char hex[2 * HBS_KEY_MAX_BYTES + 1];
        for (size_t j = 0; j < k->len; j++)
            snprintf(hex + 2 * j, 3, "%02X", k->bytes[j]);
        const char *dump = strstr(l[i].value, "]:");
        CHECK_MSG(dump && strcmp(dump + 2, hex) == 0, "%s: OCTET STRING is not the raw sk", path);
    }
}

static void test_openssl_asn1parse(void)
{
    if (system("openssl version >/dev/null 2>&1") != 0) {
        test_skip("the openssl command is not installed: DER/PEM not cross-checked");
        return;
    }
    int count = 0;
    for (unsigned id = 0; id < HBS_SLHDSA_NUM_PARAMS; id++) {
        for (int hashed = 0; hashed < 2; hashed++) {
            for (int kind = HBS_KEY_PUBLIC; kind <= HBS_KEY_SECRET; kind++) {
                hbs_key k;
                make_key(&k, (hbs_slhdsa_id)id, (hbs_key_kind)kind, hashed);
                uint8_t der[HBS_KEY_DER_MAX];
                char pem[HBS_KEY_PEM_MAX], path[512];
                size_t derlen = encode_der(&k, der), pemlen = encode_pem(&k, pem);
                snprintf(path, sizeof path, "%s/key-%u-%d-%d.der", test_tmpdir(), id, hashed,
                         kind);
                CHECK(write_file(path, der, derlen) == 0);
                check_asn1parse(&k, path, 0);
                snprintf(path, sizeof path, "%s/key-%u-%d-%d.pem", test_tmpdir(), id, hashed,
                         kind);
                CHECK(write_file(path, pem, pemlen) == 0);
                check_asn1parse(&k, path, 1);
                count += 2;
            }
        }
    }
    test_note("%d files read by openssl asn1parse", count);
}

/* ---- 5. rejections ----------------------------------------------------------------------- */

/* Decodes and checks the error; a failed decode must leave the key zeroed. */
static void expect_err(const void *in, size_t len, int want, const char *what)
{
    hbs_key k;
    memset(&k, 0x5a, sizeof k);
    int err = decode(&k, in, len);
    CHECK_MSG(err == want, "%s: got %d (%s), want %d (%s)", what, err, hbs_strerror(err), want,
              hbs_strerror(want));
    if (err)
        CHECK_MSG(all_zero(&k, sizeof k), "%s: key not wiped after an error", what);
}

static void expect_hex(const char *hex, int want, const char *what)
{
    size_t len;
    uint8_t *b = unhex_or_fail(hex, &len);
    if (b)
        expect_err(b, len, want, what);
    free(b);
}

static void test_truncated_and_extended(void)
{
    hbs_key pk, sk;
    make_key(&pk, HBS_SLHDSA_SHAKE_192F, HBS_KEY_PUBLIC, 0);
    make_key(&sk, HBS_SLHDSA_SHA2_256S, HBS_KEY_SECRET, 1);
    const hbs_key *keys[2] = {&pk, &sk};
    for (int i = 0; i < 2; i++) {
        uint8_t der[HBS_KEY_DER_MAX + 1];
        char pem[HBS_KEY_PEM_MAX + 2];
        size_t derlen = encode_der(keys[i], der), pemlen = encode_pem(keys[i], pem);
        for (size_t len = 0; len < derlen; len++)
            expect_err(der, len, HBS_ERR_MALFORMED_KEY, "truncated DER");
        for (int b = 0; b < 256; b++) {
            der[derlen] = (uint8_t)b;
            expect_err(der, derlen + 1, HBS_ERR_MALFORMED_KEY, "DER with one byte more");
        }
        /* PEM is whole once the END line's dashes are; only the final newline may go. */
        for (size_t len = 0; len < pemlen - 1; len++)
            expect_err(pem, len, HBS_ERR_MALFORMED_KEY, "truncated PEM");
        expect_err(pem, pemlen - 1, HBS_OK, "PEM without its final newline");
        pem[pemlen] = 'x';
        expect_err(pem, pemlen + 1, HBS_ERR_MALFORMED_KEY, "PEM with text after END");
        pem[pemlen] = ' ';
        pem[pemlen + 1] = '\n';
        expect_err(pem, pemlen + 2, HBS_OK, "PEM with white space after END");
    }
}

/* Every value of every byte before the key material. Outside the AlgorithmIdentifier a change
 * is always malformed; inside it an OID can become some other well-formed OID (unknown), and
 * its last byte can become another SLH-DSA arc, which must then decode as that set. */
static void flip_headers(const hbs_key *k, size_t algid_start, size_t arc_at, size_t head_len)
{
    uint8_t der[HBS_KEY_DER_MAX];
    size_t derlen = encode_der(k, der);
    int accepted = 0;
    for (size_t i = 0; i < head_len; i++) {
        for (int x = 1; x < 256; x++) {
            uint8_t orig = der[i];
            der[i] = (uint8_t)(orig ^ x);
            hbs_key back;
            int err = decode(&back, der, derlen);
            if (i == arc_at) {
                const rfc_oid *e = rfc_by_arc(der[i]);
                const hbs_slhdsa_params *p = e ? hbs_slhdsa_params_by_name(e->set) : NULL;
                int want;
                if (der[i] & 0x80)
                    want = HBS_ERR_MALFORMED_KEY; /* the OID would not end */
                else if (!p)
                    want = HBS_ERR_UNKNOWN_ALGORITHM;
                else if (hbs_slhdsa_n(p) != hbs_slhdsa_n(hbs_slhdsa_params_get(k->alg)))
                    want = HBS_ERR_MALFORMED_KEY; /* key length wrong for that set */
                else
                    want = HBS_OK;
                CHECK_MSG(err == want, "arc %u: got %d, want %d", der[i], err, want);
                if (err == HBS_OK && p) {
                    accepted++;
                    CHECK(back.alg == hbs_slhdsa_params_id(p) && back.kind == k->kind &&
                          memcmp(back.bytes, k->bytes, k->len) == 0);
                }
            } else if (i >= algid_start && i < arc_at) {
                CHECK_MSG(err == HBS_ERR_MALFORMED_KEY || err == HBS_ERR_UNKNOWN_ALGORITHM,
                          "byte %zu ^ %02x: got %d", i, x, err);
            } else {
                CHECK_MSG(err == HBS_ERR_MALFORMED_KEY, "byte %zu ^ %02x: got %d", i, x, err);
            }
            der[i] = orig;
        }
    }
    /* 128s: 128f and SHAKE-128s/f, pure or hashed, minus the original: 7 other arcs. */
    CHECK_INT(accepted, 7);
}

static void test_header_flips(void)
{
    hbs_key pk, sk;
    make_key(&pk, HBS_SLHDSA_SHA2_128S, HBS_KEY_PUBLIC, 0);
    make_key(&sk, HBS_SLHDSA_SHA2_128S, HBS_KEY_SECRET, 0);
    /* Offsets in the layouts of the RFC 9909 examples (see rfc_*_der_head). */
    flip_headers(&pk, 2, 14, 18);
    flip_headers(&sk, 5, 17, 20);
    /* Every flip in the PEM BEGIN line (and its newline). */
    char pem[HBS_KEY_PEM_MAX];
    size_t pemlen = encode_pem(&pk, pem);
    size_t first = strlen("-----BEGIN PUBLIC KEY-----\n");
    for (size_t i = 0; i < first; i++) {
        for (int x = 1; x < 256; x++) {
            char orig = pem[i];
            pem[i] = (char)(orig ^ x);
            expect_err(pem, pemlen, HBS_ERR_MALFORMED_KEY, "flipped BEGIN line");
            pem[i] = orig;
        }
    }
    test_note("%d header bytes x 255 values", 18 + 20 + (int)first);
}

/* Replaces the first occurrence of `from` in a PEM text; out may be the text itself. */
static void pem_edit(char *out, size_t cap, const char *pem, const char *from, const char *to)
{
    char src[1024];
    snprintf(src, sizeof src, "%s", pem);
    const char *at = strstr(src, from);
    CHECK_MSG(at != NULL, "test text lacks '%s'", from);
    if (!at)
        snprintf(out, cap, "%s", src);
    else
        snprintf(out, cap, "%.*s%s%s", (int)(at - src), src, to, at + strlen(from));
}

static void test_pem_rejects(void)
{
    char buf[1024];
    static const struct {
        const char *from, *to, *what;
    } pk_edits[] = {
        {"BEGIN PUBLIC KEY", "BEGIN RSA PUBLIC KEY", "other BEGIN label"},
        {"END PUBLIC KEY", "END PRIVATE KEY", "END label differs"},
        {"END PUBLIC KEY", "END PUBLIC KEYS", "END label longer"},
        {"-----END PUBLIC KEY-----\n", "", "no END line"},
        {"-----END PUBLIC KEY-----\n", "-----END PUBLIC KEY", "END line cut"},
        {"-----BEGIN PUBLIC KEY-----\n", "", "no BEGIN line"},
        {"KEY-----\nMDAw", "KEY----- MDAw", "base64 on the BEGIN line"},
        {"tJQ=\n-----END", "tJQ=-----END", "END not on its own line"},
        {"tJQ=", "tJQ", "missing padding"},
        {"tJQ=", "tJQ==", "extra padding"},
        {"tJQ=", "tJR=", "non-zero trailing bits"},
        {"MDAw", "MD!w", "character outside the alphabet"},
        {"MDAw", "MD-w", "URL-safe alphabet"},
        {"MDAw", "Proc-Type: 4,ENCRYPTED\nMDAw", "RFC 1421 headers"},
        {"AKJ\ntJQ=", "AKJ\ntJQ=\ntJQ=", "padding in the middle"},
        {"MDAwCwYJ", "MDEwCwYJ", "DER length no longer matches"},
    };
    for (size_t i = 0; i < sizeof pk_edits / sizeof pk_edits[0]; i++) {
        pem_edit(buf, sizeof buf, rfc_pk_pem, pk_edits[i].from, pk_edits[i].to);
        expect_err(buf, strlen(buf), HBS_ERR_MALFORMED_KEY, pk_edits[i].what);
    }
    /* A label must match the structure inside. */
    pem_edit(buf, sizeof buf, rfc_sk_pem, "BEGIN PRIVATE KEY", "BEGIN PUBLIC KEY");
    pem_edit(buf, sizeof buf, buf, "END PRIVATE KEY", "END PUBLIC KEY");
    expect_err(buf, strlen(buf), HBS_ERR_MALFORMED_KEY, "PKCS#8 under PUBLIC KEY");
    pem_edit(buf, sizeof buf, rfc_pk_pem, "BEGIN PUBLIC KEY", "BEGIN PRIVATE KEY");
    pem_edit(buf, sizeof buf, buf, "END PUBLIC KEY", "END PRIVATE KEY");
    expect_err(buf, strlen(buf), HBS_ERR_MALFORMED_KEY, "SPKI under PRIVATE KEY");
    pem_edit(buf, sizeof buf, rfc_sk_pem, "BEGIN PRIVATE KEY", "BEGIN ENCRYPTED PRIVATE KEY");
    pem_edit(buf, sizeof buf, buf, "END PRIVATE KEY", "END ENCRYPTED PRIVATE KEY");
    expect_err(buf, strlen(buf), HBS_ERR_MALFORMED_KEY, "ENCRYPTED PRIVATE KEY");
    expect_err("", 0, HBS_ERR_MALFORMED_KEY, "empty input");
    expect_err("\n\n", 2, HBS_ERR_MALFORMED_KEY, "blank input");
    expect_err("-----BEGIN PUBLIC KEY-----\n-----END PUBLIC KEY-----\n", 52,
               HBS_ERR_MALFORMED_KEY, "empty body");
}

static void test_pem_tolerated(void)
{
    char buf[1024];
    hbs_key a, b;
    CHECK_INT(decode_str(&a, rfc_sk_pem), HBS_OK);
    /* CRLF line ends. */
    size_t o = 0;
    for (const char *c = rfc_sk_pem; *c; c++) {
        if (*c == '\n')
            buf[o++] = '\r';
        buf[o++] = *c;
    }
    buf[o] = '\0';
    CHECK_INT(decode_str(&b, buf), HBS_OK);
    CHECK(same_key(&a, &b));
    /* Text before BEGIN (RFC 7468 section 2 allows data around the boundaries), white space. */
    snprintf(buf, sizeof buf, "Subject: test key\nIssuer: none\n\n%s\n\n  \t\n", rfc_sk_pem);
    CHECK_INT(decode_str(&b, buf), HBS_OK);
    CHECK(same_key(&a, &b));
    /* Text that starts with '0', the DER SEQUENCE tag. */
    snprintf(buf, sizeof buf, "0 comment\n%s", rfc_sk_pem);
    CHECK_INT(decode_str(&b, buf), HBS_OK);
    CHECK(same_key(&a, &b));
    /* Other line lengths and blanks at line ends. */
    pem_edit(buf, sizeof buf, rfc_sk_pem, "Mn4N\nHmSl", "Mn4NHmSl\n");
    pem_edit(buf, sizeof buf, buf, "MFIC", "MFIC  \t\n");
    CHECK_INT(decode_str(&b, buf), HBS_OK);
    CHECK(same_key(&a, &b));
    pem_edit(buf, sizeof buf, rfc_sk_pem, "KEY-----\n", "KEY-----  \n");
    CHECK_INT(decode_str(&b, buf), HBS_OK);
}

static void test_unknown_oids(void)
{
    char hex[512];
    static const char key32[] = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";
    /* Ed25519 (RFC 8410): public and private. */
    snprintf(hex, sizeof hex, "302a300506032b6570032100%s", key32);
    expect_hex(hex, HBS_ERR_UNKNOWN_ALGORITHM, "Ed25519 SPKI");
    snprintf(hex, sizeof hex, "302e020100300506032b657004220420%s", key32);
    expect_hex(hex, HBS_ERR_UNKNOWN_ALGORITHM, "Ed25519 PKCS#8");
    /* RSA with NULL parameters (RFC 8017): still unknown, not malformed. */
    snprintf(hex, sizeof hex, "3031300d06092a864886f70d0101010500032000%s", key32 + 2);
    expect_hex(hex, HBS_ERR_UNKNOWN_ALGORITHM, "RSA SPKI");
    /* Neighbours of our arcs under sigAlgs: ML-DSA-87 (19), HashML-DSA (32-34), 47, 0. */
    static const unsigned arcs[] = {19, 32, 33, 34, 47, 0, 127};
    for (size_t i = 0; i < sizeof arcs / sizeof arcs[0]; i++) {
        snprintf(hex, sizeof hex, "3030300b06096086480165030403%02x032100%s", arcs[i], key32);
        expect_hex(hex, HBS_ERR_UNKNOWN_ALGORITHM, "other sigAlgs arc");
    }
    /* A longer OID that starts like ours. */
    snprintf(hex, sizeof hex, "3031300c060a608648016503040314%02x032100%s", 1, key32);
    expect_hex(hex, HBS_ERR_UNKNOWN_ALGORITHM, "OID extending ours");
    /* Malformed OIDs are malformed, not unknown. */
    snprintf(hex, sizeof hex, "3030300b06096086480165030403%02x032100%s", 0x94, key32);
    expect_hex(hex, HBS_ERR_MALFORMED_KEY, "OID whose last arc does not end");
    snprintf(hex, sizeof hex, "3031300c060a60808648016503040314032100%s", key32);
    expect_hex(hex, HBS_ERR_MALFORMED_KEY, "OID arc padded with 0x80");
    snprintf(hex, sizeof hex, "302730020600032100%s", key32);
    expect_hex(hex, HBS_ERR_MALFORMED_KEY, "empty OID");
}

static void test_wrong_lengths(void)
{
    char hex[1024];
    uint8_t key[200];
    char key_hex[401];
    static const char algid[] = "300b0609608648016503040314"; /* id-slh-dsa-sha2-128s */
    test_rand_bytes(key, sizeof key);
    for (size_t i = 0; i < sizeof key; i++)
        snprintf(key_hex + 2 * i, 3, "%02x", key[i]);
    /* SHA2-128s (n = 16): a public key must be 32 bytes, a secret key 64. */
    static const size_t pk_lens[] = {0, 31, 33, 48, 64};
    for (size_t i = 0; i < sizeof pk_lens / sizeof pk_lens[0]; i++) {
        size_t l = pk_lens[i];
        snprintf(hex, sizeof hex, "30%02zx%s03%02zx00%.*s", 16 + l, algid, l + 1, (int)(2 * l),
                 key_hex);
        expect_hex(hex, HBS_ERR_MALFORMED_KEY, "public key of the wrong length");
    }
    static const size_t sk_lens[] = {0, 32, 63, 65, 96};
    for (size_t i = 0; i < sizeof sk_lens / sizeof sk_lens[0]; i++) {
        size_t l = sk_lens[i];
        snprintf(hex, sizeof hex, "30%02zx020100%s04%02zx%.*s", 18 + l, algid, l, (int)(2 * l),
                 key_hex);
        expect_hex(hex, HBS_ERR_MALFORMED_KEY, "secret key of the wrong length");
    }
    /* The secret key wrapped in an inner OCTET STRING, as some ML-DSA drafts did: RFC 9909
     * puts the raw key directly in privateKey, so this is the wrong length. */
    snprintf(hex, sizeof hex, "3054020100%s04420440%.128s", algid, key_hex);
    expect_hex(hex, HBS_ERR_MALFORMED_KEY, "sk inside an inner OCTET STRING");
}

static void test_pkcs8_variants(void)
{
    char hex[1024];
    /* privateKey 04 40 sk, publicKey [1] 81 21 00 pk: the RFC example, so pk is the sk's
     * last 32 bytes. */
    /* attributes [0]: SET OF { SEQUENCE { OID 1.2.3.4, SET { UTF8String "abc" } } } */
    static const char attr[] = "a00e300c06032a0304" "31050c03616263";
    static const char algid[] = "300b0609608648016503040314";
    char sk_part[300], pk_part[100];
    snprintf(sk_part, sizeof sk_part, "0440%s", rfc_sk_hex);
    snprintf(pk_part, sizeof pk_part, "812100%s", rfc_pk_hex);
    size_t base = 3 + 13 + 66; /* version, algid, privateKey */

    snprintf(hex, sizeof hex, "30%02zx020101%s%s%s", base + 35, algid, sk_part, pk_part);
    expect_hex(hex, HBS_OK, "v2 with the matching publicKey");
    snprintf(hex, sizeof hex, "30%02zx020100%s%s%s", base + 16, algid, sk_part, attr);
    expect_hex(hex, HBS_OK, "v1 with attributes");
    snprintf(hex, sizeof hex, "3081%02zx020101%s%s%s%s", base + 16 + 35, algid, sk_part, attr,
             pk_part);
    expect_hex(hex, HBS_OK, "v2 with attributes and publicKey");

    snprintf(hex, sizeof hex, "30%02zx020101%s%s%s", base + 35, algid, sk_part, pk_part);
    hex[strlen(hex) - 1] ^= 1; /* one bit of PK.root */
    expect_hex(hex, HBS_ERR_MALFORMED_KEY, "publicKey not the sk's");
    snprintf(hex, sizeof hex, "30%02zx020100%s%s%s", base + 35, algid, sk_part, pk_part);
    expect_hex(hex, HBS_ERR_MALFORMED_KEY, "v1 with a publicKey");
    snprintf(hex, sizeof hex, "30%02zx020101%s%s", base, algid, sk_part);
    expect_hex(hex, HBS_ERR_MALFORMED_KEY, "v2 without a publicKey");
    snprintf(hex, sizeof hex, "30%02zx020102%s%s", base, algid, sk_part);
    expect_hex(hex, HBS_ERR_MALFORMED_KEY, "version 2");
    snprintf(hex, sizeof hex, "3081%02zx020101%s%s%s%s", base + 16 + 35, algid, sk_part, pk_part,
             attr);
    expect_hex(hex, HBS_ERR_MALFORMED_KEY, "publicKey before attributes");
    snprintf(hex, sizeof hex, "30%02zx020101%s%s812000%.62s", base + 34, algid, sk_part,
             rfc_pk_hex);
    expect_hex(hex, HBS_ERR_MALFORMED_KEY, "publicKey one byte short");
    snprintf(hex, sizeof hex, "30%02zx020101%s%s812101%s", base + 35, algid, sk_part, rfc_pk_hex);
    expect_hex(hex, HBS_ERR_MALFORMED_KEY, "publicKey with unused bits");
    snprintf(hex, sizeof hex, "30%02zx020100%s%sa0020500", base + 4, algid, sk_part);
    expect_hex(hex, HBS_ERR_MALFORMED_KEY, "attributes that are not Attribute");
    snprintf(hex, sizeof hex, "30%02zx020100%s%s0500", base + 2, algid, sk_part);
    expect_hex(hex, HBS_ERR_MALFORMED_KEY, "an unknown trailing field");
    snprintf(hex, sizeof hex, "30%02zx02010000%s%s", base + 1, algid, sk_part);
    expect_hex(hex, HBS_ERR_MALFORMED_KEY, "version not minimal");
    snprintf(hex, sizeof hex, "30%02zx020100300d06096086480165030403140500%s", base + 2, sk_part);
    expect_hex(hex, HBS_ERR_MALFORMED_KEY, "NULL parameters (RFC 9909: absent)");
}

static void test_non_der(void)
{
    char hex[1024];
    char pk[] = "2b8109ec777caa4e1f024ccfcf9497d99180509280f4256af2b07af80289b494";
    snprintf(hex, sizeof hex, "3030300b0609608648016503040314032100%s", pk);
    expect_hex(hex, HBS_OK, "the reference itself");
    snprintf(hex, sizeof hex, "308130300b0609608648016503040314032100%s", pk);
    expect_hex(hex, HBS_ERR_MALFORMED_KEY, "long-form length below 128");
    snprintf(hex, sizeof hex, "30820030300b0609608648016503040314032100%s", pk);
    expect_hex(hex, HBS_ERR_MALFORMED_KEY, "length with a leading zero byte");
    snprintf(hex, sizeof hex, "3080300b0609608648016503040314032100%s0000", pk);
    expect_hex(hex, HBS_ERR_MALFORMED_KEY, "indefinite length");
    snprintf(hex, sizeof hex, "3030300b0609608648016503040314032101%s", pk);
    expect_hex(hex, HBS_ERR_MALFORMED_KEY, "BIT STRING with unused bits");
    snprintf(hex, sizeof hex, "3030300b0609608648016503040314232100%s", pk);
    expect_hex(hex, HBS_ERR_MALFORMED_KEY, "constructed BIT STRING");
    snprintf(hex, sizeof hex, "3030300b0609608648016503040314042100%s", pk);
    expect_hex(hex, HBS_ERR_MALFORMED_KEY, "OCTET STRING for the public key");
    snprintf(hex, sizeof hex, "3032300d06096086480165030403140500032100%s", pk);
    expect_hex(hex, HBS_ERR_MALFORMED_KEY, "NULL parameters");
    snprintf(hex, sizeof hex, "3130300b0609608648016503040314032100%s", pk);
    expect_hex(hex, HBS_ERR_MALFORMED_KEY, "SET instead of SEQUENCE");
    snprintf(hex, sizeof hex, "3f30300b0609608648016503040314032100%s", pk);
    expect_hex(hex, HBS_ERR_MALFORMED_KEY, "high tag number form");
    snprintf(hex, sizeof hex, "3030300b0609608648016503040314032100%s3000", pk);
    expect_hex(hex, HBS_ERR_MALFORMED_KEY, "a second element after the key");
    snprintf(hex, sizeof hex, "3034300b0609608648016503040314032100%s3000", pk);
    expect_hex(hex, HBS_ERR_MALFORMED_KEY, "an extra field in SubjectPublicKeyInfo");
    /* A 256-bit secret key needs long-form lengths (147 outer, 128 for the key); the same
     * values with a leading zero byte are not DER even though they exceed 127. */
    hbs_key sk;
    make_key(&sk, HBS_SLHDSA_SHA2_256F, HBS_KEY_SECRET, 0);
    uint8_t der[HBS_KEY_DER_MAX + 2], alt[HBS_KEY_DER_MAX + 2];
    size_t len = encode_der(&sk, der);
    CHECK(len == 150 && der[1] == 0x81 && der[2] == 147 && der[19] == 0x04 && der[20] == 0x81);
    expect_err(der, len, HBS_OK, "256-bit sk");
    alt[0] = 0x30, alt[1] = 0x82, alt[2] = 0, alt[3] = 147;
    memcpy(alt + 4, der + 3, len - 3);
    expect_err(alt, len + 1, HBS_ERR_MALFORMED_KEY, "outer length with a leading zero byte");
    memcpy(alt, der, 20);
    alt[1] = 0x81, alt[2] = 148, alt[20] = 0x82, alt[21] = 0, alt[22] = 0x80;
    memcpy(alt + 23, der + 22, len - 22);
    expect_err(alt, len + 1, HBS_ERR_MALFORMED_KEY, "key length with a leading zero byte");
    expect_hex("30833fffff00", HBS_ERR_MALFORMED_KEY, "huge length, short input");
    expect_hex("3084ffffffff00", HBS_ERR_MALFORMED_KEY, "length of four bytes");
    expect_hex("3000", HBS_ERR_MALFORMED_KEY, "empty SEQUENCE");
    expect_hex("30", HBS_ERR_MALFORMED_KEY, "a lone tag");
    expect_hex("3002020100", HBS_ERR_MALFORMED_KEY, "lengths disagree");
}

static void test_garbage(void)
{
    uint8_t buf[400];
    char pem[HBS_KEY_PEM_MAX + 400];
    int ok = 0;
    for (int iter = 0; iter < 20000; iter++) {
        size_t len;
        test_rand_bytes((uint8_t *)&len, sizeof len);
        len %= sizeof buf;
        test_rand_bytes(buf, len);
        if (iter % 3 == 1 && len > 0)
            buf[0] = 0x30;
        if (iter % 3 == 2 && len > 1) {
            buf[0] = 0x30;
            buf[1] = (uint8_t)(len - 2 < 128 ? len - 2 : 0x81);
        }
        hbs_key k;
        int err = decode(&k, buf, len);
        if (err == HBS_OK)
            ok++;
        else
            CHECK_MSG(err == HBS_ERR_MALFORMED_KEY || err == HBS_ERR_UNKNOWN_ALGORITHM,
                      "garbage gave %d", err);
    }
    /* Garbage between PEM boundaries, as text and as bytes. */
    for (int iter = 0; iter < 5000; iter++) {
        size_t len;
        test_rand_bytes((uint8_t *)&len, sizeof len);
        len %= 200;
        static const char b64chars[] =
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=\n";
        size_t o = (size_t)snprintf(pem, sizeof pem, "-----BEGIN PUBLIC KEY-----\n");
        test_rand_bytes((uint8_t *)pem + o, len);
        if (iter % 2) /* text made of base64 characters only */
            for (size_t i = 0; i < len; i++)
                pem[o + i] = b64chars[(uint8_t)pem[o + i] % (sizeof b64chars - 1)];
        o += len;
        o += (size_t)snprintf(pem + o, sizeof pem - o, "\n-----END PUBLIC KEY-----\n");
        hbs_key k;
        int err = decode(&k, pem, o);
        CHECK_MSG(err == HBS_ERR_MALFORMED_KEY || err == HBS_ERR_UNKNOWN_ALGORITHM,
                  "PEM garbage gave %d", err);
    }
    CHECK_INT(ok, 0);
    test_note("25000 random inputs");
}

static void test_misuse(void)
{
    hbs_key k, bad;
    make_key(&k, HBS_SLHDSA_SHAKE_256F, HBS_KEY_SECRET, 0);
    uint8_t der[HBS_KEY_DER_MAX];
    char pem[HBS_KEY_PEM_MAX];
    size_t len;

    len = sizeof der;
    CHECK_INT(hbs_key_encode_der(NULL, der, &len), HBS_ERR_INVALID_ARGUMENT);
    CHECK_INT(hbs_key_encode_der(&k, NULL, &len), HBS_ERR_INVALID_ARGUMENT);
    CHECK_INT(hbs_key_encode_der(&k, der, NULL), HBS_ERR_INVALID_ARGUMENT);
    len = sizeof pem;
    CHECK_INT(hbs_key_encode_pem(NULL, pem, &len), HBS_ERR_INVALID_ARGUMENT);
    CHECK_INT(hbs_key_encode_pem(&k, NULL, &len), HBS_ERR_INVALID_ARGUMENT);

    /* Keys that do not describe a valid encoding. */
    for (int which = 0; which < 6; which++) {
        bad = k;
        switch (which) {
        case 0: bad.len = 96; break;
        case 1: bad.prehash = HBS_PREHASH_SHA2_512; break; /* SHAKE-256f binds SHAKE-256 */
        case 2: bad.alg = HBS_SLHDSA_NUM_PARAMS; break;
        case 3: bad.kind = (hbs_key_kind)3; break;
        case 4: bad.scheme = (hbs_scheme)0; break;
        case 5: bad.prehash = HBS_PREHASH_NUM; break;
        }
        memset(der, 0xaa, sizeof der);
        len = sizeof der;
        CHECK_INT(hbs_key_encode_der(&bad, der, &len), HBS_ERR_INVALID_ARGUMENT);
        CHECK(len == 0 && all_zero(der, sizeof der));
        memset(pem, 0xaa, sizeof pem);
        len = sizeof pem;
        CHECK_INT(hbs_key_encode_pem(&bad, pem, &len), HBS_ERR_INVALID_ARGUMENT);
        CHECK(len == 0 && all_zero(pem, sizeof pem));
    }

    /* Buffers: exactly enough works, one byte less reports the size needed. */
    len = sizeof der;
    CHECK_INT(hbs_key_encode_der(&k, der, &len), HBS_OK);
    size_t need = len;
    len = need - 1;
    memset(der, 0xaa, sizeof der);
    CHECK_INT(hbs_key_encode_der(&k, der, &len), HBS_ERR_BUFFER_TOO_SMALL);
    CHECK_INT(len, need);
    CHECK(all_zero(der, need - 1));
    len = need;
    CHECK_INT(hbs_key_encode_der(&k, der, &len), HBS_OK);

    len = sizeof pem;
    CHECK_INT(hbs_key_encode_pem(&k, pem, &len), HBS_OK);
    need = len + 1; /* with the NUL */
    len = need - 1;
    CHECK_INT(hbs_key_encode_pem(&k, pem, &len), HBS_ERR_BUFFER_TOO_SMALL);
    CHECK_INT(len, need);
    len = need;
    CHECK_INT(hbs_key_encode_pem(&k, pem, &len), HBS_OK);
    CHECK_INT(strlen(pem), need - 1);

    CHECK_INT(hbs_key_decode(NULL, der, 10), HBS_ERR_INVALID_ARGUMENT);
    CHECK_INT(hbs_key_decode(&bad, NULL, 10), HBS_ERR_INVALID_ARGUMENT);
    CHECK_INT(hbs_key_decode(&bad, NULL, 0), HBS_ERR_MALFORMED_KEY);
    hbs_key_wipe(&k);
    CHECK(all_zero(&k, sizeof k));
    hbs_key_wipe(NULL);
}

const hbs_test hbs_tests_encoding[] = {
    {"encoding_base64_rfc4648", test_base64_rfc4648},
    {"encoding_base64_rejects", test_base64_rejects},
    {"encoding_rfc9909_examples", test_rfc9909_examples},
    {"encoding_oid_table", test_oid_table},
    {"encoding_roundtrip_all", test_roundtrip_all},
    {"encoding_openssl_asn1parse", test_openssl_asn1parse},
    {"encoding_truncated_and_extended", test_truncated_and_extended},
    {"encoding_header_flips", test_header_flips},
    {"encoding_pem_rejects", test_pem_rejects},
    {"encoding_pem_tolerated", test_pem_tolerated},
    {"encoding_unknown_oids", test_unknown_oids},
    {"encoding_wrong_lengths", test_wrong_lengths},
    {"encoding_pkcs8_variants", test_pkcs8_variants},
    {"encoding_non_der", test_non_der},
    {"encoding_garbage", test_garbage},
    {"encoding_misuse", test_misuse},
    {NULL, NULL},
};
