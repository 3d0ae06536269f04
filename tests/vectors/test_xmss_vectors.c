/* XMSS / XMSS^MT known answers: liboqs-kat/xmss (the RFC 8391 reference code's answers,
 * every set) and pqc-kat-xmss (SP 800-208 sets, ACVP-style keyGen / sigGen / sigVer).
 *
 * Verification runs on every vector on every pass. Reproducing a key (and the signature at
 * its index) means computing whole trees: 2^h' leaves per layer. The first pass reproduces
 * every vector whose trees have at most 2^16 leaves (H16: seconds each on two cores);
 * later passes a representative few. H20 trees (a minute or more each) run only with
 * HBS_XMSS_HEAVY=1. */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "hbs/xmss.h"
#include "json.h"
#include "test.h"
#include "xmss/params.h"
#include "xmss/xmss.h"

static int heavy(void)
{
    const char *e = getenv("HBS_XMSS_HEAVY");
    return e && *e && *e != '0';
}

/* Whether this pass rebuilds trees of this set: all with h' <= 16 on the first pass (every
 * set with HBS_XMSS_HEAVY), and on later passes only the cheap ones (SHA-256, n <= 32,
 * at most 2^11 leaves in all). */
static int rebuild_wanted(const hbs_xmss_params *p, int first_of_kind)
{
    if (heavy())
        return 1;
    if (p->tree_h > 16)
        return 0;
    if (test_full_pass())
        return 1;
    if (p->tree_h > 10)
        return 0;
    return first_of_kind && p->func == XMSS_FUNC_SHA256 && ((size_t)p->d << p->tree_h) <= 2048;
}

/* ---- liboqs-kat/xmss: one .rsp file per set ---- */

static uint8_t *rsp_field(const char *txt, const char *key, size_t *len)
{
    char pat[32];
    const char *at;
    snprintf(pat, sizeof pat, "\n%s = ", key);
    at = strstr(txt, pat);
    if (!at)
        return NULL;
    at += strlen(pat);
    size_t l = strcspn(at, "\r\n");
    char *hex = malloc(l + 1);
    if (!hex)
        return NULL;
    memcpy(hex, at, l);
    hex[l] = 0;
    uint8_t *out = test_unhex(hex, len);
    free(hex);
    return out;
}

/* "XMSSMT-SHA2_20-2_256.rsp" -> "XMSSMT-SHA2_20/2_256" */
static const hbs_xmss_params *rsp_params(const char *file)
{
    char name[64];
    size_t l = strlen(file);
    if (l < 5 || l - 4 >= sizeof name)
        return NULL;
    memcpy(name, file, l - 4);
    name[l - 4] = 0;
    if (strncmp(name, "XMSSMT-", 7) == 0) {
        char *dash = strchr(name + 7, '-');
        if (dash)
            *dash = '/';
    }
    return hbs_xmss_params_by_name(name);
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void test_liboqs(void)
{
    const char *vd = test_vectors_dir();
    char dir[4096], path[8192];
    char *names[64];
    size_t nfiles = 0, verified = 0, rebuilt = 0, cheap_seen = 0;
    DIR *d;
    struct dirent *e;
    if (!vd) {
        test_skip("no test vectors folder (set HBS_VECTORS)");
        return;
    }
    snprintf(dir, sizeof dir, "%s/liboqs-kat/xmss", vd);
    d = opendir(dir);
    if (!d) {
        test_skip("%s missing", dir);
        return;
    }
    while ((e = readdir(d)) != NULL && nfiles < 64)
        if (strstr(e->d_name, ".rsp"))
            names[nfiles++] = strdup(e->d_name);
    closedir(d);
    qsort(names, nfiles, sizeof names[0], cmp_names);
    CHECK_INT(nfiles, 37);
    for (size_t f = 0; f < nfiles; f++) {
        const hbs_xmss_params *p = rsp_params(names[f]);
        size_t len, pklen = 0, sklen = 0, msglen = 0, smlen = 0;
        uint8_t *txt, *pk = NULL, *sk = NULL, *msg = NULL, *sm = NULL;
        char *body;
        snprintf(path, sizeof path, "%s/%s", dir, names[f]);
        txt = test_read_file(path, &len);
        CHECK_MSG(p && txt, "%s", names[f]);
        if (!p || !txt) {
            free(txt);
            continue;
        }
        /* a leading newline lets every field be found as "\nkey = " */
        body = malloc(len + 2);
        if (body) {
            body[0] = '\n';
            memcpy(body + 1, txt, len + 1);
            pk = rsp_field(body, "pk", &pklen);
            sk = rsp_field(body, "sk", &sklen);
            msg = rsp_field(body, "msg", &msglen);
            sm = rsp_field(body, "sm", &smlen);
        }
        CHECK_MSG(pk && sk && msg && sm, "%s: fields", names[f]);
        if (pk && sk && msg && sm) {
            CHECK_MSG(hbs_xmss_verify(p, pk, pklen, msg, msglen, sm, smlen) == HBS_OK,
                      "%s: verify", p->name);
            sm[smlen / 3] ^= 0x10;
            CHECK_MSG(hbs_xmss_verify(p, pk, pklen, msg, msglen, sm, smlen) ==
                          HBS_ERR_VERIFY_FAILED,
                      "%s: corrupted signature accepted", p->name);
            sm[smlen / 3] ^= 0x10;
            verified++;
            /* sk = OID || idx || SK_SEED || SK_PRF || root || PUB_SEED || (BDS state) */
            int cheap = p->func == XMSS_FUNC_SHA256 && ((size_t)p->d << p->tree_h) <= 2048;
            if (rebuild_wanted(p, cheap && cheap_seen++ < 3) &&
                sklen >= 4 + p->idx_bytes + 4u * p->n) {
                const uint8_t *s = sk + 4 + p->idx_bytes;
                uint8_t seed[3 * XMSS_MAX_N], pk2[HBS_XMSS_MAX_PK_BYTES];
                uint8_t *sig = malloc(p->sig_bytes);
                hbs_xmss_key *key = NULL;
                size_t l2 = 0, sl = 0;
                memcpy(seed, s, 2 * p->n);
                memcpy(seed + 2 * p->n, s + 3 * p->n, p->n);
                CHECK_INT(hbs_xmss_keygen(&key, pk2, sizeof pk2, &l2, p, 0, seed, 3 * p->n,
                                          NULL, NULL),
                          HBS_OK);
                if (key && sig) {
                    CHECK_MSG(l2 == pklen && memcmp(pk2, pk, pklen) == 0, "%s: pk", p->name);
                    CHECK_INT(hbs_xmss_sign(key, sig, p->sig_bytes, &sl, msg, msglen), HBS_OK);
                    CHECK_MSG(sl == smlen && memcmp(sig, sm, smlen) == 0, "%s: sig", p->name);
                    rebuilt++;
                }
                free(sig);
                hbs_xmss_key_free(key);
            }
        }
        free(pk);
        free(sk);
        free(msg);
        free(sm);
        free(body);
        free(txt);
    }
    for (size_t f = 0; f < nfiles; f++)
        free(names[f]);
    test_note("%zu/37 verified; %zu keys and signatures reproduced%s", verified, rebuilt,
              heavy() ? "" : " (H20 with HBS_XMSS_HEAVY=1)");
}

/* ---- pqc-kat-xmss ---- */

static json *load_json(const char *dir, const char *folder, const char *file)
{
    char path[8192];
    size_t len;
    uint8_t *txt;
    json *j;
    snprintf(path, sizeof path, "%s/pqc-kat-xmss/%s/%s", dir, folder, file);
    txt = test_read_file(path, &len);
    if (!txt)
        return NULL;
    j = json_parse((const char *)txt, len);
    free(txt);
    return j;
}

/* The set of a group: its "param" name or, lacking one, its OID (an XMSS OID). */
static const hbs_xmss_params *group_params(const json *g)
{
    const char *name = json_str(json_get(g, "param"));
    if (name)
        return hbs_xmss_params_by_name(name);
    return hbs_xmss_params_by_oid(0, (uint32_t)json_int(json_get(g, "OID"), -1));
}

static const json *find_test(const json *doc, long long tg, long long tc)
{
    const json *groups = json_get(doc, "testGroups");
    for (size_t g = 0; g < json_len(groups); g++) {
        const json *grp = json_at(groups, g);
        if (json_int(json_get(grp, "tgId"), -1) != tg)
            continue;
        const json *tests = json_get(grp, "tests");
        for (size_t t = 0; t < json_len(tests); t++)
            if (json_int(json_get(json_at(tests, t), "tcId"), -1) == tc)
                return json_at(tests, t);
    }
    return NULL;
}

static const json *find_group(const json *doc, long long tg)
{
    const json *groups = json_get(doc, "testGroups");
    for (size_t g = 0; g < json_len(groups); g++)
        if (json_int(json_get(json_at(groups, g), "tgId"), -1) == tg)
            return json_at(groups, g);
    return NULL;
}

/* Folders of one mode, sorted. */
static size_t list_folders(const char *vd, const char *mode, char **out, size_t max)
{
    char dir[4096];
    size_t n = 0;
    DIR *d;
    struct dirent *e;
    snprintf(dir, sizeof dir, "%s/pqc-kat-xmss", vd);
    d = opendir(dir);
    if (!d)
        return 0;
    while ((e = readdir(d)) != NULL && n < max)
        if (strstr(e->d_name, mode))
            out[n++] = strdup(e->d_name);
    closedir(d);
    qsort(out, n, sizeof out[0], cmp_names);
    return n;
}

static void test_pqckat_keygen(void)
{
    const char *vd = test_vectors_dir();
    char *folders[32];
    size_t nf, done = 0, all = 0;
    if (!vd) {
        test_skip("no test vectors folder (set HBS_VECTORS)");
        return;
    }
    nf = list_folders(vd, "-keyGen-", folders, 32);
    CHECK_INT(nf, 12);
    for (size_t f = 0; f < nf; f++) {
        json *pr = load_json(vd, folders[f], "prompt.json");
        json *ex = load_json(vd, folders[f], "expectedResults.json");
        const json *groups = json_get(pr, "testGroups");
        CHECK_MSG(pr && ex, "%s", folders[f]);
        for (size_t g = 0; g < json_len(groups); g++) {
            const json *grp = json_at(groups, g);
            const hbs_xmss_params *p = group_params(grp);
            const json *tests = json_get(grp, "tests");
            long long tg = json_int(json_get(grp, "tgId"), -1);
            CHECK_MSG(p != NULL, "%s: set", folders[f]);
            for (size_t t = 0; p && t < json_len(tests); t++) {
                const json *tc = json_at(tests, t);
                const json *want = find_test(ex, tg, json_int(json_get(tc, "tcId"), -1));
                size_t n = p->n, l1 = 0, l2 = 0, l3 = 0, pkl = 0, skl = 0;
                uint8_t seed[3 * XMSS_MAX_N], pk[HBS_XMSS_MAX_PK_BYTES];
                uint8_t *a = json_hex(tc, "S_XMSS", &l1), *b = json_hex(tc, "SK_PRF", &l2);
                uint8_t *c = json_hex(tc, "I", &l3), *s = json_hex(tc, "seed", &l1);
                uint8_t *wpk = json_hex(want, "publicKey", &pkl);
                uint8_t *wsk = json_hex(want, "secretKey", &skl);
                all++;
                if (s && l1 == 3 * n) {
                    memcpy(seed, s, 3 * n); /* SK_SEED || SK_PRF || PUB_SEED in one field */
                } else if (a && b && c && l1 == n && l2 == n && l3 == n) {
                    memcpy(seed, a, n);
                    memcpy(seed + n, b, n);
                    memcpy(seed + 2 * n, c, n);
                } else {
                    CHECK_MSG(0, "%s tc %zu: inputs", folders[f], t);
                }
                if (wpk && wsk && rebuild_wanted(p, t == 0)) {
                    hbs_xmss_key *key = NULL;
                    size_t got = 0;
                    CHECK_INT(hbs_xmss_keygen(&key, pk, sizeof pk, &got, p, 0, seed, 3 * n,
                                              NULL, NULL),
                              HBS_OK);
                    /* one folder gives root || SEED and idx || secrets without the OID */
                    size_t skip = pkl == 2 * n ? 4 : 0;
                    CHECK_MSG(got == pkl + skip && memcmp(pk + skip, wpk, pkl) == 0,
                              "%s tc %zu: public key", folders[f], t);
                    /* secretKey = [OID] || idx (4) || SK_SEED || SK_PRF || root || SEED */
                    CHECK_MSG(skl == 4 * n + 8 - skip, "%s: sk length", folders[f]);
                    if (skl == 4 * n + 8 - skip) {
                        const uint8_t *w = wsk + 8 - skip;
                        CHECK(memcmp(w, seed, 2 * n) == 0);
                        CHECK(memcmp(w + 2 * n, pk + 4, n) == 0);
                        CHECK(memcmp(w + 3 * n, seed + 2 * n, n) == 0);
                        CHECK(wsk[4 - skip] == 0 && wsk[7 - skip] == 0);
                    }
                    hbs_xmss_key_free(key);
                    done++;
                }
                free(a);
                free(b);
                free(c);
                free(s);
                free(wpk);
                free(wsk);
            }
        }
        json_free(pr);
        json_free(ex);
        free(folders[f]);
    }
    test_note("%zu/%zu keys reproduced%s", done, all,
              heavy() ? "" : " (H20 with HBS_XMSS_HEAVY=1; H16 only on the first pass)");
}

typedef struct {
    long long tc;
    uint64_t q;
    const json *t;
} siggen_case;

static int by_q(const void *a, const void *b)
{
    const siggen_case *x = a, *y = b;
    return x->q < y->q ? -1 : x->q > y->q;
}

static void test_pqckat_siggen(void)
{
    const char *vd = test_vectors_dir();
    char *folders[32];
    size_t nf, done = 0, all = 0;
    if (!vd) {
        test_skip("no test vectors folder (set HBS_VECTORS)");
        return;
    }
    nf = list_folders(vd, "-sigGen-", folders, 32);
    CHECK_INT(nf, 4);
    for (size_t f = 0; f < nf; f++) {
        json *pr = load_json(vd, folders[f], "prompt.json");
        json *ex = load_json(vd, folders[f], "expectedResults.json");
        const json *groups = json_get(pr, "testGroups");
        CHECK_MSG(pr && ex, "%s", folders[f]);
        for (size_t g = 0; g < json_len(groups); g++) {
            const json *grp = json_at(groups, g);
            const hbs_xmss_params *p = group_params(grp);
            const json *tests = json_get(grp, "tests");
            long long tg = json_int(json_get(grp, "tgId"), -1);
            size_t nt = json_len(tests), l1 = 0, l2 = 0, l3 = 0, l4 = 0, pkl = 0;
            uint8_t *a = json_hex(grp, "S_XMSS", &l1), *b = json_hex(grp, "SK_PRF", &l2);
            uint8_t *c = json_hex(grp, "I", &l3), *root = json_hex(grp, "PK_root", &l4);
            uint8_t *wpk = json_hex(find_group(ex, tg), "publicKey", &pkl);
            siggen_case *cases = calloc(nt ? nt : 1, sizeof *cases);
            hbs_xmss_key *key = NULL;
            uint8_t seed[3 * XMSS_MAX_N], pk[HBS_XMSS_MAX_PK_BYTES];
            uint8_t *sig = p ? malloc(p->sig_bytes) : NULL;
            size_t got = 0;
            all += nt;
            CHECK_MSG(p && a && b && c && root && wpk && cases && sig, "%s: group", folders[f]);
            if (!(p && a && b && c && root && wpk && cases && sig) || l1 != p->n ||
                !rebuild_wanted(p, 1))
                goto next_group;
            memcpy(seed, a, p->n);
            memcpy(seed + p->n, b, p->n);
            memcpy(seed + 2 * p->n, c, p->n);
            CHECK_INT(hbs_xmss_keygen(&key, pk, sizeof pk, &got, p, 0, seed, 3 * p->n, NULL,
                                      NULL),
                      HBS_OK);
            if (!key)
                goto next_group;
            CHECK(got == pkl && memcmp(pk, wpk, pkl) == 0 && memcmp(pk + 4, root, p->n) == 0);
            /* sign in index order: the key only moves forward */
            for (size_t t = 0; t < nt; t++) {
                cases[t].t = json_at(tests, t);
                cases[t].tc = json_int(json_get(cases[t].t, "tcId"), -1);
                cases[t].q = (uint64_t)json_int(json_get(cases[t].t, "q"), 0);
            }
            qsort(cases, nt, sizeof *cases, by_q);
            for (size_t t = 0; t < nt; t++) {
                size_t ml = 0, wl = 0, sl = 0;
                uint8_t *msg = json_hex(cases[t].t, "message", &ml);
                uint8_t *want = json_hex(find_test(ex, tg, cases[t].tc), "signature", &wl);
                if (!test_full_pass() && !heavy() && t >= 3) {
                    free(msg);
                    free(want);
                    continue;
                }
                if (t > 0 && cases[t].q == cases[t - 1].q) {
                    /* the same index twice: a stateful key will not do it; the stored
                     * answer must still verify */
                } else {
                    CHECK_INT(hbs_xmss_key_skip_to(key, cases[t].q), HBS_OK);
                }
                /* the answers are signature || message (the reference code's "sm") */
                if (msg && want && wl == p->sig_bytes + ml) {
                    if (hbs_xmss_key_index(key) == cases[t].q) {
                        CHECK_INT(hbs_xmss_sign(key, sig, p->sig_bytes, &sl, msg, ml), HBS_OK);
                        CHECK_MSG(sl == p->sig_bytes && memcmp(sig, want, sl) == 0,
                                  "%s tc %lld: signature", folders[f], cases[t].tc);
                    }
                    CHECK_INT(hbs_xmss_verify(p, pk, got, msg, ml, want, p->sig_bytes), HBS_OK);
                    done++;
                } else {
                    CHECK_MSG(0, "%s tc %lld: fields", folders[f], cases[t].tc);
                }
                free(msg);
                free(want);
            }
        next_group:
            hbs_xmss_key_free(key);
            free(sig);
            free(cases);
            free(a);
            free(b);
            free(c);
            free(root);
            free(wpk);
        }
        json_free(pr);
        json_free(ex);
        free(folders[f]);
    }
    test_note("%zu/%zu signatures reproduced", done, all);
}

static void test_pqckat_sigver(void)
{
    const char *vd = test_vectors_dir();
    char *folders[32];
    size_t nf, agree = 0, all = 0, valid = 0;
    if (!vd) {
        test_skip("no test vectors folder (set HBS_VECTORS)");
        return;
    }
    nf = list_folders(vd, "-sigVer-", folders, 32);
    CHECK_INT(nf, 10);
    for (size_t f = 0; f < nf; f++) {
        json *pr = load_json(vd, folders[f], "prompt.json");
        json *ex = load_json(vd, folders[f], "expectedResults.json");
        const json *groups = json_get(pr, "testGroups");
        CHECK_MSG(pr && ex, "%s", folders[f]);
        for (size_t g = 0; g < json_len(groups); g++) {
            const json *grp = json_at(groups, g);
            const hbs_xmss_params *p = group_params(grp);
            const json *tests = json_get(grp, "tests");
            long long tg = json_int(json_get(grp, "tgId"), -1);
            size_t pkl = 0;
            uint8_t *pk = json_hex(grp, "publicKey", &pkl);
            CHECK_MSG(p && pk, "%s: group", folders[f]);
            for (size_t t = 0; p && pk && t < json_len(tests); t++) {
                const json *tc = json_at(tests, t);
                long long id = json_int(json_get(tc, "tcId"), -1);
                const json *want = json_get(find_test(ex, tg, id), "testPassed");
                size_t ml = 0, sl = 0;
                uint8_t *msg = json_hex(tc, "message", &ml), *sig = json_hex(tc, "signature", &sl);
                all++;
                CHECK_MSG(msg && sig && want && sl >= ml, "%s tc %lld: fields", folders[f], id);
                if (msg && sig && want && sl >= ml) {
                    /* the signature field is signature || message */
                    int ok = hbs_xmss_verify(p, pk, pkl, msg, ml, sig, sl - ml) == HBS_OK &&
                             memcmp(sig + sl - ml, msg, ml) == 0;
                    CHECK_MSG(ok == json_is_true(want), "%s tc %lld: %s", folders[f], id,
                              json_str(json_get(tc, "comment")));
                    agree += ok == json_is_true(want);
                    valid += ok;
                }
                free(msg);
                free(sig);
            }
            free(pk);
        }
        json_free(pr);
        json_free(ex);
        free(folders[f]);
    }
    test_note("%zu/%zu verdicts agree (%zu valid, %zu rejected)", agree, all, valid, all - valid);
}

const hbs_test hbs_tests_xmss_vectors[] = {
    {"xmss_liboqs_kat", test_liboqs},
    {"xmss_pqckat_sigver", test_pqckat_sigver},
    {"xmss_pqckat_siggen", test_pqckat_siggen},
    {"xmss_pqckat_keygen", test_pqckat_keygen},
    {NULL, NULL},
};
