/* GPU key generation of the stateful schemes (LMS/HSS, XMSS/XMSS^MT): every key made on the
 * GPU equals the CPU's byte for byte (public key and the whole key file, traversal state
 * included), for sets of every family; signatures from a GPU-made key verify; the RFC 8554 /
 * RFC 9858 LMS keys and the pqc-kat-xmss keyGen vectors come out of the GPU path. Batch
 * verification gives the CPU's verdict for valid and corrupted signatures of every family;
 * batch signing under one key gives the CPU's signatures byte for byte and advances the key
 * file by the batch. Without a
 * GPU every test skips and says so. */
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hbs/gpu.h"
#include "hbs/lms.h"
#include "hbs/stateful.h"
#include "hbs/xmss.h"
#include "core/leaf_engine.h"
#include "json.h"
#include "state/stateful_batch.h"
#include "state/store.h"
#include "test.h"
#include "xmss/internal.h"
#include "xmss/params.h"

#define NO_GPU "no CUDA GPU: this build has no CUDA or this machine has no usable GPU"

static int have_gpu(void)
{
    if (hbs_gpu_device_count() > 0)
        return 1;
    test_skip("%s", NO_GPU);
    return 0;
}

/* Makes the key of alg from a fixed seed on the CPU and on the GPU and compares the public
 * keys and the key files. With sign, also signs a few messages with the GPU-made key and
 * verifies them. Returns 1 if all agree. */
static int same_key(const char *alg, unsigned traversal, int sign)
{
    char cpu_path[4096], gpu_path[4096];
    static unsigned serial;
    uint8_t seed[3 * 64], pk_cpu[HBS_STATEFUL_MAX_PK_BYTES], pk_gpu[HBS_STATEFUL_MAX_PK_BYTES];
    size_t seedlen, pklen_cpu = 0, pklen_gpu = 0, flen_cpu = 0, flen_gpu = 0;
    uint8_t *f_cpu, *f_gpu;
    int family = hbs_stateful_family_of(alg), ok = 1, rc;

    CHECK_MSG(family > 0, "%s: unknown", alg);
    if (family <= 0)
        return 0;
    /* the seed length follows from n: try the lengths the sets use */
    test_rand_bytes(seed, sizeof seed);
    snprintf(cpu_path, sizeof cpu_path, "%s/gs-cpu-%u.key", test_tmpdir(), serial);
    snprintf(gpu_path, sizeof gpu_path, "%s/gs-gpu-%u.key", test_tmpdir(), serial++);
    seedlen = 0;
    {
        static const size_t lens[] = {16 + 24, 16 + 32, 3 * 24, 3 * 32, 3 * 64};
        for (size_t i = 0; i < sizeof lens / sizeof lens[0] && !seedlen; i++) {
            rc = hbs_stateful_keygen_ex(alg, cpu_path, traversal, pk_cpu, sizeof pk_cpu,
                                        &pklen_cpu, seed, lens[i], NULL, NULL);
            if (rc == HBS_OK)
                seedlen = lens[i];
            else
                CHECK_MSG(rc == HBS_ERR_INVALID_ARGUMENT, "%s: CPU keygen %d", alg, rc);
        }
    }
    CHECK_MSG(seedlen, "%s: no seed length accepted", alg);
    if (!seedlen)
        return 0;
    rc = hbs_gpu_stateful_keygen(alg, gpu_path, traversal, pk_gpu, sizeof pk_gpu, &pklen_gpu,
                                 seed, seedlen, NULL, NULL);
    CHECK_MSG(rc == HBS_OK, "%s: GPU keygen %d (%s)", alg, rc, hbs_gpu_last_error());
    if (rc != HBS_OK) {
        remove(cpu_path);
        return 0;
    }
    CHECK_MSG(pklen_gpu == pklen_cpu && memcmp(pk_cpu, pk_gpu, pklen_cpu) == 0,
              "%s: public keys differ", alg);
    ok &= pklen_gpu == pklen_cpu && memcmp(pk_cpu, pk_gpu, pklen_cpu) == 0;
    f_cpu = test_read_file(cpu_path, &flen_cpu);
    f_gpu = test_read_file(gpu_path, &flen_gpu);
    CHECK_MSG(f_cpu && f_gpu && flen_cpu == flen_gpu && memcmp(f_cpu, f_gpu, flen_cpu) == 0,
              "%s: key files differ", alg);
    ok &= f_cpu && f_gpu && flen_cpu == flen_gpu && memcmp(f_cpu, f_gpu, flen_cpu) == 0;
    free(f_cpu);
    free(f_gpu);
    if (sign) {
        hbs_stateful_key *k = NULL;
        CHECK_INT(hbs_stateful_open(&k, gpu_path, 0, 4), HBS_OK);
        for (int m = 0; k && m < 5; m++) {
            uint8_t msg[40], *sig;
            size_t siglen = 0, cap = hbs_stateful_sig_bytes(k);
            test_rand_bytes(msg, sizeof msg);
            sig = malloc(cap);
            CHECK(sig != NULL);
            if (!sig)
                break;
            CHECK_INT(hbs_stateful_sign(k, sig, cap, &siglen, msg, sizeof msg), HBS_OK);
            CHECK_INT(hbs_stateful_verify((hbs_stateful_family)family, pk_gpu, pklen_gpu, msg,
                                          sizeof msg, sig, siglen),
                      HBS_OK);
            sig[siglen / 3] ^= 1;
            CHECK_INT(hbs_stateful_verify((hbs_stateful_family)family, pk_gpu, pklen_gpu, msg,
                                          sizeof msg, sig, siglen),
                      HBS_ERR_VERIFY_FAILED);
            free(sig);
        }
        hbs_stateful_close(k);
    }
    remove(cpu_path);
    remove(gpu_path);
    return ok;
}

static void run_sets(const char *const *algs, size_t count, int sign)
{
    size_t same = 0;
    if (!have_gpu())
        return;
    for (size_t i = 0; i < count; i++)
        same += (size_t)same_key(algs[i], 0, sign);
    test_note("%zu/%zu sets: GPU key = CPU key", same, count);
}

static void test_gpu_stateful_misuse(void)
{
    uint8_t pk[HBS_STATEFUL_MAX_PK_BYTES];
    size_t pklen = 1;
    char path[4096];
    if (!have_gpu())
        return;
    snprintf(path, sizeof path, "%s/gs-misuse.key", test_tmpdir());
    CHECK_INT(hbs_gpu_stateful_keygen("XMSS-NOPE", path, 0, pk, sizeof pk, &pklen, NULL, 0,
                                      NULL, NULL),
              HBS_ERR_UNKNOWN_ALGORITHM);
    CHECK_INT(pklen, 0);
    CHECK_INT(hbs_gpu_stateful_keygen("XMSS-SHA2_10_256", NULL, 0, pk, sizeof pk, &pklen, NULL,
                                      0, NULL, NULL),
              HBS_ERR_INVALID_ARGUMENT);
    CHECK_INT(hbs_gpu_stateful_keygen("XMSS-SHA2_10_256", path, 0, pk, sizeof pk, &pklen, pk,
                                      5, NULL, NULL),
              HBS_ERR_INVALID_ARGUMENT);
    /* an existing file is never overwritten */
    CHECK_INT(hbs_gpu_stateful_keygen("LMS_SHA256_M32_H5/LMOTS_SHA256_N32_W1", path, 0, pk,
                                      sizeof pk, &pklen, NULL, 0, NULL, NULL),
              HBS_OK);
    CHECK_INT(hbs_gpu_stateful_keygen("LMS_SHA256_M32_H5/LMOTS_SHA256_N32_W1", path, 0, pk,
                                      sizeof pk, &pklen, NULL, 0, NULL, NULL),
              HBS_ERR_IO);
    remove(path);
}

static void test_gpu_stateful_lms(void)
{
    static const char *const algs[] = {
        "LMS_SHA256_M32_H5/LMOTS_SHA256_N32_W1", "LMS_SHA256_M32_H5/LMOTS_SHA256_N32_W2",
        "LMS_SHA256_M32_H5/LMOTS_SHA256_N32_W4", "LMS_SHA256_M32_H5/LMOTS_SHA256_N32_W8",
        "LMS_SHA256_M32_H10/LMOTS_SHA256_N32_W8", "LMS_SHA256_M24_H5/LMOTS_SHA256_N24_W1",
        "LMS_SHA256_M24_H10/LMOTS_SHA256_N24_W4", "LMS_SHA256_M24_H5/LMOTS_SHA256_N24_W8",
        "LMS_SHAKE_M32_H5/LMOTS_SHAKE_N32_W1",   "LMS_SHAKE_M32_H10/LMOTS_SHAKE_N32_W4",
        "LMS_SHAKE_M24_H5/LMOTS_SHAKE_N24_W2",   "LMS_SHAKE_M24_H5/LMOTS_SHAKE_N24_W8",
    };
    run_sets(algs, sizeof algs / sizeof algs[0], 0);
}

static void test_gpu_stateful_hss(void)
{
    static const char *const algs[] = {
        "LMS_SHA256_M32_H10/LMOTS_SHA256_N32_W4,LMS_SHA256_M32_H5/LMOTS_SHA256_N32_W8",
        "LMS_SHA256_M24_H5/LMOTS_SHA256_N24_W2,LMS_SHA256_M24_H5/LMOTS_SHA256_N24_W4",
        "LMS_SHAKE_M32_H5/LMOTS_SHAKE_N32_W4,LMS_SHAKE_M32_H5/LMOTS_SHAKE_N32_W4",
    };
    run_sets(algs, sizeof algs / sizeof algs[0], 1);
}

static void test_gpu_stateful_xmss(void)
{
    static const char *const algs[] = {
        "XMSS-SHA2_10_256",     "XMSS-SHAKE_10_256",     "XMSS-SHA2_10_512",
        "XMSS-SHAKE256_10_192", "XMSS-SHA2_10_192",      "XMSS-SHAKE256_10_256",
        "XMSS-SHAKE_10_512",    "XMSSMT-SHA2_20/2_256",  "XMSSMT-SHA2_40/4_256",
        "XMSSMT-SHAKE_20/4_256", "XMSSMT-SHA2_20/4_192",
    };
    run_sets(algs, sizeof algs / sizeof algs[0], 0);
}

/* Another traversal setting, a tall tree, and signatures from GPU-made keys. */
static void test_gpu_stateful_tall_and_sign(void)
{
    static const char *const algs[] = {
        "XMSS-SHA2_16_256",
        "LMS_SHA256_M32_H15/LMOTS_SHA256_N32_W4",
        "XMSS-SHA2_10_256",
        "XMSSMT-SHA2_20/2_256",
        "LMS_SHA256_M32_H10/LMOTS_SHA256_N32_W4",
    };
    if (!have_gpu())
        return;
    run_sets(algs, sizeof algs / sizeof algs[0], 1);
    CHECK(same_key("XMSS-SHA2_10_256", 4, 1));
    CHECK(same_key("LMS_SHA256_M32_H10/LMOTS_SHA256_N32_W2", 4, 1));
}

/* The GPU engine's whole trees of a key's current trees at one index come with the WOTS+
 * signature of each tree's root by the layer above (key generation takes them instead of
 * signing on the CPU): each equals the CPU's, is handed out once, and only for its root. */
static int gpu_root_sigs(const char *alg, uint64_t idx)
{
    const hbs_xmss_params *p = hbs_xmss_params_by_name(alg);
    hbs_leaf_engine e;
    hbs_xmss_leaf_job jobs[12];
    uint8_t seeds[2 * 64], digits[128], gsig[67 * 64], csig[67 * 64], bad[64];
    int ok = 1;
    if (!p || hbs_gpu_leaf_engine(&e) != HBS_OK || !e.xmss_trees || !e.xmss_wots_sig)
        return 0;
    const size_t n = p->n, H = p->tree_h, tn = ((size_t)2 << H) - 1;
    uint8_t *nodes = malloc(p->d * tn * n);
    if (!nodes)
        return 0;
    test_rand_bytes(seeds, sizeof seeds);
    for (unsigned i = 0; i < p->d; i++) {
        memset(&jobs[i], 0, sizeof jobs[i]);
        jobs[i].func = p->func;
        jobs[i].n = (unsigned)n;
        jobs[i].padlen = p->padlen;
        jobs[i].len = p->len;
        jobs[i].pub_seed = seeds;
        jobs[i].sk_seed = seeds + 64;
        jobs[i].layer = i;
        jobs[i].tree = idx >> ((i + 1) * H);
        jobs[i].oid = p->oid;
        jobs[i].mt = p->mt;
    }
    if (e.xmss_trees(e.user, jobs, p->d, (unsigned)H, nodes) != HBS_OK) {
        free(nodes);
        return 0;
    }
    xmss_ctx c;
    hbs_xmss_ctx_init(&c, p, seeds, seeds + 64);
    for (unsigned i = 0; i + 1 < p->d; i++) {
        const uint8_t *root = nodes + (i * tn + tn - 1) * n;
        const uint32_t leaf = (uint32_t)(jobs[i].tree & ((1u << H) - 1));
        const xmss_leafpos pos = {i + 1, jobs[i + 1].tree, leaf};
        memcpy(bad, root, n);
        bad[n - 1] ^= 1;
        /* another root, or another leaf: none */
        ok &= e.xmss_wots_sig(e.user, &jobs[i + 1], leaf, bad, gsig) == HBS_ERR_UNSUPPORTED;
        ok &= e.xmss_wots_sig(e.user, &jobs[i + 1], leaf ^ 1, root, gsig) ==
              HBS_ERR_UNSUPPORTED;
        ok &= e.xmss_wots_sig(e.user, &jobs[i + 1], leaf, root, gsig) == HBS_OK;
        hbs_xmss_wots_digits(p, digits, root);
        hbs_xmss_leaves(&c, NULL, &pos, 1, digits, csig, 0);
        ok &= memcmp(gsig, csig, p->len * n) == 0;
        ok &= e.xmss_wots_sig(e.user, &jobs[i + 1], leaf, root, gsig) == HBS_ERR_UNSUPPORTED;
    }
    hbs_xmss_ctx_wipe(&c);
    free(nodes);
    return ok;
}

static void test_gpu_stateful_root_sigs(void)
{
    if (!have_gpu())
        return;
    CHECK(gpu_root_sigs("XMSSMT-SHA2_20/2_256", 0));
    CHECK(gpu_root_sigs("XMSSMT-SHA2_20/2_256", 0x2f3a1));
    CHECK(gpu_root_sigs("XMSSMT-SHA2_40/4_256", 0x9e3779b97ull));
    test_note("3 keys' trees: the roots' signatures made beside them equal the CPU's");
}

/* ---- vectors ---- */

static char *text_field(const char *text, const char *sec, const char *key)
{
    const char *p = strstr(text, sec), *end, *line;
    size_t klen = strlen(key);
    if (!p)
        return NULL;
    p += strlen(sec);
    end = strchr(p, '[');
    for (line = p; *line && (!end || line < end);) {
        const char *eol = strchr(line, '\n');
        size_t ll = eol ? (size_t)(eol - line) : strlen(line);
        if (ll > klen && strncmp(line, key, klen) == 0 &&
            (line[klen] == ' ' || line[klen] == '=')) {
            const char *v = memchr(line, '=', ll), *ve = line + ll;
            if (!v)
                return NULL;
            v++;
            while (v < ve && (*v == ' ' || *v == '"'))
                v++;
            while (ve > v && (ve[-1] == ' ' || ve[-1] == '"' || ve[-1] == '\r'))
                ve--;
            char *out = malloc((size_t)(ve - v) + 1);
            if (out) {
                memcpy(out, v, (size_t)(ve - v));
                out[ve - v] = 0;
            }
            return out;
        }
        line = eol ? eol + 1 : line + ll;
    }
    return NULL;
}

static uint8_t *text_hex(const char *text, const char *sec, const char *key, size_t *len)
{
    char *v = text_field(text, sec, key);
    uint8_t *b = v ? test_unhex(v, len) : NULL;
    free(v);
    return b;
}

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* The name of an LMS / LM-OTS typecode pair, as the stateful API spells it. */
static int lms_alg_name(char *out, size_t cap, uint32_t lms, uint32_t ots)
{
    const hbs_lms_type *t = hbs_lms_type_by_code(lms);
    const hbs_lmots_type *o = hbs_lmots_type_by_code(ots);
    if (!t || !o)
        return 0;
    snprintf(out, cap, "%s/%s", hbs_lms_type_name(t), hbs_lmots_type_name(o));
    return 1;
}

/* GPU key of one LMS tree (I, SEED) must be `want` (u32 type || u32 ots || I || root). */
static int lms_vector_key(const uint8_t *want, size_t wantlen, const uint8_t *I,
                          const uint8_t *seed, size_t seedlen)
{
    char alg[128], path[4096];
    static unsigned serial;
    uint8_t s[16 + 32], pk[HBS_STATEFUL_MAX_PK_BYTES];
    size_t pklen = 0;
    int ok;
    if (wantlen < 8 || seedlen > 32 || !lms_alg_name(alg, sizeof alg, be32(want), be32(want + 4)))
        return 0;
    memcpy(s, I, 16);
    memcpy(s + 16, seed, seedlen);
    snprintf(path, sizeof path, "%s/gs-vec-%u.key", test_tmpdir(), serial++);
    ok = hbs_gpu_stateful_keygen(alg, path, 0, pk, sizeof pk, &pklen, s, 16 + seedlen, NULL,
                                 NULL) == HBS_OK &&
         pklen == 4 + wantlen && memcmp(pk + 4, want, wantlen) == 0;
    remove(path);
    return ok;
}

static void test_gpu_stateful_lms_vectors(void)
{
    const char *dir = test_vectors_dir();
    char path[4096];
    size_t len;
    uint8_t *text;
    unsigned keys = 0, cases = 0;
    if (!have_gpu())
        return;
    if (!dir) {
        test_skip("vectors folder not found: set HBS_VECTORS");
        return;
    }
    /* RFC 8554 Appendix F test case 2: the level-1 key from its I and SEED */
    snprintf(path, sizeof path, "%s/rfc8554/rfc8554_appendixF_testcases.txt", dir);
    text = test_read_file(path, &len);
    CHECK_MSG(text != NULL, "cannot read %s", path);
    if (text) {
        size_t l1len, seedlen, Ilen;
        const char *sec = "[rfc8554_testcase_2]";
        uint8_t *l1 = text_hex((char *)text, sec, "level1_public_key", &l1len);
        uint8_t *seed = text_hex((char *)text, sec, "level1_private_seed", &seedlen);
        uint8_t *I = text_hex((char *)text, sec, "level1_private_I", &Ilen);
        CHECK(l1 && seed && I && Ilen == 16);
        if (l1 && seed && I && Ilen == 16) {
            int ok = lms_vector_key(l1, l1len, I, seed, seedlen);
            CHECK_MSG(ok, "rfc8554 level-1 key");
            keys += (unsigned)ok;
            cases++;
        }
        free(l1);
        free(seed);
        free(I);
        free(text);
    }
    /* RFC 9858 Appendix A: four one-level keys (A.4 is H20) */
    snprintf(path, sizeof path, "%s/rfc9858/rfc9858_appendixA_testcases.txt", dir);
    text = test_read_file(path, &len);
    CHECK_MSG(text != NULL, "cannot read %s", path);
    for (int c = 1; text && c <= 4; c++) {
        char sec[64];
        size_t pklen, seedlen, Ilen;
        snprintf(sec, sizeof sec, "[rfc9858_testcase_%d]", c);
        uint8_t *pk = text_hex((char *)text, sec, "hss_public_key", &pklen);
        uint8_t *seed = text_hex((char *)text, sec, "private_seed", &seedlen);
        uint8_t *I = text_hex((char *)text, sec, "private_I", &Ilen);
        CHECK_MSG(pk && seed && I && Ilen == 16 && pklen > 4, "%s: fields", sec);
        if (pk && seed && I && Ilen == 16 && pklen > 4) {
            int ok = lms_vector_key(pk + 4, pklen - 4, I, seed, seedlen);
            CHECK_MSG(ok, "%s: key not reproduced on the GPU", sec);
            keys += (unsigned)ok;
            cases++;
        }
        free(pk);
        free(seed);
        free(I);
    }
    free(text);
    CHECK_INT(cases, 5);
    test_note("%u/%u RFC 8554 / RFC 9858 LMS keys reproduced on the GPU", keys, cases);
}

static void test_gpu_stateful_xmss_vectors(void)
{
    const char *dir = test_vectors_dir();
    char base[4096];
    DIR *d;
    struct dirent *e;
    unsigned keys = 0, cases = 0;
    if (!have_gpu())
        return;
    if (!dir) {
        test_skip("vectors folder not found: set HBS_VECTORS");
        return;
    }
    snprintf(base, sizeof base, "%s/pqc-kat-xmss", dir);
    d = opendir(base);
    CHECK_MSG(d != NULL, "cannot open %s", base);
    while (d && (e = readdir(d)) != NULL) {
        char path[8192];
        size_t plen, elen;
        uint8_t *pt, *et;
        json *pr, *ex;
        if (!strstr(e->d_name, "-keyGen-"))
            continue;
        snprintf(path, sizeof path, "%s/%s/prompt.json", base, e->d_name);
        pt = test_read_file(path, &plen);
        snprintf(path, sizeof path, "%s/%s/expectedResults.json", base, e->d_name);
        et = test_read_file(path, &elen);
        pr = pt ? json_parse((const char *)pt, plen) : NULL;
        ex = et ? json_parse((const char *)et, elen) : NULL;
        CHECK_MSG(pr && ex, "%s: files", e->d_name);
        const json *groups = json_get(pr, "testGroups");
        const json *egroups = json_get(ex, "testGroups");
        for (size_t g = 0; pr && ex && g < json_len(groups); g++) {
            const json *grp = json_at(groups, g), *egrp = NULL;
            const char *name = json_str(json_get(grp, "param"));
            const hbs_xmss_params *p =
                name ? hbs_xmss_params_by_name(name)
                     : hbs_xmss_params_by_oid(0, (uint32_t)json_int(json_get(grp, "OID"), -1));
            long long tg = json_int(json_get(grp, "tgId"), -1);
            for (size_t k = 0; k < json_len(egroups); k++)
                if (json_int(json_get(json_at(egroups, k), "tgId"), -2) == tg)
                    egrp = json_at(egroups, k);
            CHECK_MSG(p && egrp, "%s: group %lld", e->d_name, tg);
            if (!p || !egrp)
                continue;
            const json *tests = json_get(grp, "tests"), *etests = json_get(egrp, "tests");
            /* every case of the H10 and H16 sets; the first of the H20 ones */
            size_t ntests = hbs_xmss_height(p) >= 20 && json_len(tests) ? 1 : json_len(tests);
            for (size_t t = 0; t < ntests; t++) {
                const json *tc = json_at(tests, t), *want = NULL;
                long long id = json_int(json_get(tc, "tcId"), -1);
                size_t n = hbs_xmss_n(p), l1 = 0, l2 = 0, l3 = 0, ls = 0, pkl = 0, got = 0;
                uint8_t seed[3 * 64], pk[HBS_STATEFUL_MAX_PK_BYTES];
                char kpath[8192];
                for (size_t k = 0; k < json_len(etests); k++)
                    if (json_int(json_get(json_at(etests, k), "tcId"), -2) == id)
                        want = json_at(etests, k);
                uint8_t *a = json_hex(tc, "S_XMSS", &l1), *b = json_hex(tc, "SK_PRF", &l2);
                uint8_t *c = json_hex(tc, "I", &l3), *s = json_hex(tc, "seed", &ls);
                uint8_t *wpk = want ? json_hex(want, "publicKey", &pkl) : NULL;
                int have = 0;
                if (s && ls == 3 * n) {
                    memcpy(seed, s, 3 * n);
                    have = 1;
                } else if (a && b && c && l1 == n && l2 == n && l3 == n) {
                    memcpy(seed, a, n);
                    memcpy(seed + n, b, n);
                    memcpy(seed + 2 * n, c, n);
                    have = 1;
                }
                CHECK_MSG(have && wpk, "%s tc %lld: inputs", e->d_name, id);
                if (have && wpk) {
                    size_t skip;
                    int rc;
                    snprintf(kpath, sizeof kpath, "%s/gs-kat-%u.key", test_tmpdir(), cases);
                    rc = hbs_gpu_stateful_keygen(hbs_xmss_name(p), kpath, 0, pk, sizeof pk,
                                                 &got, seed, 3 * n, NULL, NULL);
                    /* one folder gives root || SEED without the OID */
                    skip = pkl == 2 * n ? 4 : 0;
                    int ok = rc == HBS_OK && got == pkl + skip &&
                             memcmp(pk + skip, wpk, pkl) == 0;
                    CHECK_MSG(ok, "%s tc %lld: public key (rc %d)", e->d_name, id, rc);
                    keys += (unsigned)ok;
                    cases++;
                    remove(kpath);
                }
                free(a);
                free(b);
                free(c);
                free(s);
                free(wpk);
            }
        }
        json_free(pr);
        json_free(ex);
        free(pt);
        free(et);
    }
    if (d)
        closedir(d);
    CHECK(cases > 0);
    test_note("%u/%u pqc-kat-xmss keyGen public keys reproduced on the GPU", keys, cases);
}

/* ---- batch verification and batch signing (hbs_gpu_stateful_verify_many, _sign_many) ---- */

/* A key of alg made on the GPU from seed into path (the seed length tried as in same_key). */
static int batch_key(const char *alg, const char *path, const uint8_t *seed, uint8_t *pk,
                     size_t *pklen)
{
    static const size_t lens[] = {16 + 24, 16 + 32, 3 * 24, 3 * 32, 3 * 64};
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
        int rc = hbs_gpu_stateful_keygen(alg, path, 0, pk, HBS_STATEFUL_MAX_PK_BYTES, pklen,
                                         seed, lens[i], NULL, NULL);
        if (rc == HBS_OK)
            return 1;
        if (rc != HBS_ERR_INVALID_ARGUMENT) {
            CHECK_MSG(0, "%s: GPU keygen %d (%s)", alg, rc, hbs_gpu_last_error());
            return 0;
        }
    }
    CHECK_MSG(0, "%s: no seed length accepted", alg);
    return 0;
}

#define VB_MSGS 4
#define VB_MAX_ITEMS (VB_MSGS * 24)

/* Signs a few messages on the CPU, then judges them and corrupted copies (flipped bits in
 * the signature, the message and the public key, lengths off by one, other type codes) on
 * the GPU and on the CPU: every verdict must agree. */
static int verify_set(const char *alg)
{
    char path[4096];
    static unsigned serial;
    uint8_t seed[3 * 64], pk[HBS_STATEFUL_MAX_PK_BYTES];
    size_t pklen = 0, sb, n = 0, valid = 0;
    hbs_stateful_key *k = NULL;
    int family = hbs_stateful_family_of(alg), ok = 1, rc;
    const uint8_t *sigs[VB_MAX_ITEMS], *msgs[VB_MAX_ITEMS], *pks[VB_MAX_ITEMS];
    size_t siglens[VB_MAX_ITEMS], msglens[VB_MAX_ITEMS], pklens[VB_MAX_ITEMS];
    uint8_t *own[3 * VB_MAX_ITEMS];
    size_t nown = 0;
    int gpu[VB_MAX_ITEMS], cpu[VB_MAX_ITEMS];

    test_rand_bytes(seed, sizeof seed);
    snprintf(path, sizeof path, "%s/gsv-%u.key", test_tmpdir(), serial++);
    if (family <= 0 || !batch_key(alg, path, seed, pk, &pklen))
        return 0;
    CHECK_INT(hbs_stateful_open(&k, path, HBS_STATEFUL_NO_SYNC, 16), HBS_OK);
    if (!k) {
        remove(path);
        return 0;
    }
    sb = hbs_stateful_sig_bytes(k);
    for (int m = 0; m < VB_MSGS; m++) {
        const size_t mlen = (size_t)(m * 37) % 130;
        uint8_t *msg = malloc(mlen + 1), *sig = malloc(sb + 1);
        size_t siglen = 0;
        own[nown++] = msg;
        own[nown++] = sig;
        test_rand_bytes(msg, mlen + 1);
        rc = hbs_stateful_sign(k, sig, sb, &siglen, msg, mlen);
        CHECK_MSG(rc == HBS_OK && siglen == sb, "%s: CPU sign %d", alg, rc);
        sig[sb] = 0x5a;
        /* the valid item, then its corruptions */
        const size_t at[] = {0, 3, 5, 8, sb / 3, sb / 2, sb - 1, sb - 40};
        size_t base = n;
        sigs[n] = sig, siglens[n] = sb, msgs[n] = msg, msglens[n] = mlen, pks[n] = pk,
        pklens[n] = pklen, n++;
        for (size_t c = 0; c < sizeof at / sizeof at[0]; c++) {
            uint8_t *bad = malloc(sb + 1);
            memcpy(bad, sig, sb + 1);
            bad[at[c]] ^= (uint8_t)(1u << (c % 8));
            own[nown++] = bad;
            sigs[n] = bad, siglens[n] = sb, msgs[n] = msg, msglens[n] = mlen, pks[n] = pk,
            pklens[n] = pklen, n++;
        }
        /* lengths off by one: the signature (one byte more or less), the message, the key */
        sigs[n] = sig, siglens[n] = sb - 1, msgs[n] = msg, msglens[n] = mlen, pks[n] = pk,
        pklens[n] = pklen, n++;
        sigs[n] = sig, siglens[n] = sb + 1, msgs[n] = msg, msglens[n] = mlen, pks[n] = pk,
        pklens[n] = pklen, n++;
        sigs[n] = sig, siglens[n] = sb, msgs[n] = msg, msglens[n] = mlen + 1, pks[n] = pk,
        pklens[n] = pklen, n++;
        if (mlen) {
            sigs[n] = sig, siglens[n] = sb, msgs[n] = msg, msglens[n] = mlen - 1, pks[n] = pk,
            pklens[n] = pklen, n++;
        }
        sigs[n] = sig, siglens[n] = sb, msgs[n] = msg, msglens[n] = mlen, pks[n] = pk,
        pklens[n] = pklen - 1, n++;
        /* type codes: the public key's first words, and the signature's type fields */
        {
            const size_t spots[] = {3, 7, 11};
            for (size_t c = 0; c < sizeof spots / sizeof spots[0]; c++) {
                uint8_t *bk = malloc(pklen);
                memcpy(bk, pk, pklen);
                bk[spots[c] % pklen] ^= 1;
                own[nown++] = bk;
                sigs[n] = sig, siglens[n] = sb, msgs[n] = msg, msglens[n] = mlen, pks[n] = bk,
                pklens[n] = pklen, n++;
            }
        }
        /* a flipped message bit */
        if (mlen) {
            uint8_t *bm = malloc(mlen);
            memcpy(bm, msg, mlen);
            bm[mlen / 2] ^= 0x10;
            own[nown++] = bm;
            sigs[n] = sig, siglens[n] = sb, msgs[n] = bm, msglens[n] = mlen, pks[n] = pk,
            pklens[n] = pklen, n++;
        }
        (void)base;
    }
    for (size_t i = 0; i < n; i++)
        cpu[i] = hbs_stateful_verify((hbs_stateful_family)family, pks[i], pklens[i], msgs[i],
                                     msglens[i], sigs[i], siglens[i]);
    rc = hbs_gpu_stateful_verify_many((hbs_stateful_family)family, gpu, sigs, siglens, msgs,
                                      msglens, n, pks, pklens, n);
    CHECK_MSG(rc == HBS_ERR_VERIFY_FAILED, "%s: verify_many %d (%s)", alg, rc,
              hbs_gpu_last_error());
    for (size_t i = 0; i < n; i++) {
        CHECK_MSG(gpu[i] == cpu[i], "%s item %zu: GPU %d, CPU %d", alg, i, gpu[i], cpu[i]);
        ok &= gpu[i] == cpu[i];
        valid += cpu[i] == HBS_OK;
    }
    CHECK_MSG(valid == VB_MSGS, "%s: %zu valid items", alg, valid);
    /* the valid ones alone, under one shared public key */
    {
        const uint8_t *vs[VB_MSGS], *vm[VB_MSGS];
        size_t vsl[VB_MSGS], vml[VB_MSGS], c = 0;
        int res[VB_MSGS];
        for (size_t i = 0; i < n && c < VB_MSGS; i++)
            if (cpu[i] == HBS_OK) {
                vs[c] = sigs[i], vsl[c] = siglens[i], vm[c] = msgs[i], vml[c] = msglens[i];
                c++;
            }
        const uint8_t *pk1 = pk;
        rc = hbs_gpu_stateful_verify_many((hbs_stateful_family)family, res, vs, vsl, vm, vml, c,
                                          &pk1, &pklen, 1);
        CHECK_MSG(rc == HBS_OK, "%s: valid batch %d (%s)", alg, rc, hbs_gpu_last_error());
        ok &= rc == HBS_OK;
    }
    for (size_t i = 0; i < nown; i++)
        free(own[i]);
    hbs_stateful_close(k);
    remove(path);
    return ok;
}

static const char *const batch_sets[] = {
    "XMSS-SHA2_10_256",
    "XMSS-SHAKE_10_256",
    "XMSS-SHA2_10_192",
    "XMSS-SHA2_10_512",
    "XMSS-SHAKE256_10_256",
    "XMSSMT-SHA2_20/2_256",
    "XMSSMT-SHAKE_20/4_256",
    "LMS_SHA256_M32_H5/LMOTS_SHA256_N32_W1",
    "LMS_SHA256_M32_H5/LMOTS_SHA256_N32_W2",
    "LMS_SHA256_M32_H10/LMOTS_SHA256_N32_W4",
    "LMS_SHA256_M32_H5/LMOTS_SHA256_N32_W8",
    "LMS_SHA256_M32_H10/LMOTS_SHA256_N32_W8",
    "LMS_SHA256_M32_H5/LMOTS_SHA256_N32_W4,LMS_SHA256_M32_H5/LMOTS_SHA256_N32_W8",
    "LMS_SHAKE_M32_H5/LMOTS_SHAKE_N32_W4",
    "LMS_SHA256_M24_H5/LMOTS_SHA256_N24_W4",
    "LMS_SHAKE_M24_H5/LMOTS_SHAKE_N24_W2",
};
#define N_BATCH_SETS (sizeof batch_sets / sizeof batch_sets[0])

static int lms_on_cpu(void)
{
    const char *v = getenv("HBS_GPU_LMS_VERIFY");
    return v && strcmp(v, "0") == 0;
}

static void test_gpu_stateful_verify_many(void)
{
    size_t same = 0;
    int res[1];
    if (!have_gpu())
        return;
    CHECK_INT(hbs_gpu_stateful_verify_many(HBS_STATEFUL_HSS, res, NULL, NULL, NULL, NULL, 0,
                                           NULL, NULL, 0),
              HBS_OK);
    CHECK_INT(hbs_gpu_stateful_verify_many((hbs_stateful_family)9, res, NULL, NULL, NULL, NULL,
                                           1, NULL, NULL, 1),
              HBS_ERR_INVALID_ARGUMENT);
    char differ[1024] = "";
    for (size_t i = 0; i < N_BATCH_SETS; i++) {
        const int agree = verify_set(batch_sets[i]);
        same += (size_t)agree;
        if (!agree && strlen(differ) + strlen(batch_sets[i]) + 3 < sizeof differ) {
            strcat(differ, " ");
            strcat(differ, batch_sets[i]);
        }
    }
    test_note("%zu/%zu sets: GPU verdicts = CPU verdicts (valid and corrupted)%s%s%s", same,
              N_BATCH_SETS, *differ ? "; differ:" : "", differ,
              lms_on_cpu() ? "; LMS/HSS items judged by the CPU verifier (HBS_GPU_LMS_VERIFY=0)"
                           : "");
}

/* Signs batches of the given sizes with a GPU key and the same messages one by one with a
 * CPU copy of that key (same seed: seed_in's 3 * 64 bytes, or random ones): the signatures
 * must be equal, and both keys must stand at the same index, in memory and in the file.
 * A third copy skips over each batch on the CPU (hbs_stateful_batch_begin / _end): the GPU
 * key's state must then be the same bytes (the skip's route over a tree's end differs from
 * signing one by one, so that copy's state is not compared). */
/* With sign_pinned set, sign_set's GPU signatures go into page-locked memory from
 * hbs_gpu_host_alloc, which the GPU fills itself (no staging copy). */
static int sign_pinned;

static uint8_t *sig_buf(size_t bytes, int pinned)
{
    void *p = NULL;
    if (!pinned)
        return malloc(bytes);
    if (hbs_gpu_host_alloc(&p, bytes) != HBS_OK)
        CHECK_MSG(0, "hbs_gpu_host_alloc(%zu): %s", bytes, hbs_gpu_last_error());
    return p;
}

static void sig_buf_free(uint8_t *p, int pinned)
{
    if (pinned)
        hbs_gpu_host_free(p);
    else
        free(p);
}

static int sign_set(const char *alg, const size_t *batches, size_t nb, const uint8_t *seed_in)
{
    char pc[4096], pg[4096], px[4096];
    static unsigned serial;
    uint8_t seed[3 * 64], pk[HBS_STATEFUL_MAX_PK_BYTES], pk2[HBS_STATEFUL_MAX_PK_BYTES];
    size_t pklen = 0, pklen2 = 0, sb;
    hbs_stateful_key *kc = NULL, *kg = NULL, *kx = NULL;
    int ok = 1, rc;
    if (seed_in)
        memcpy(seed, seed_in, sizeof seed);
    else
        test_rand_bytes(seed, sizeof seed);
    snprintf(pc, sizeof pc, "%s/gss-cpu-%u.key", test_tmpdir(), serial);
    snprintf(pg, sizeof pg, "%s/gss-gpu-%u.key", test_tmpdir(), serial);
    snprintf(px, sizeof px, "%s/gss-skip-%u.key", test_tmpdir(), serial++);
    if (!batch_key(alg, pc, seed, pk, &pklen) || !batch_key(alg, pg, seed, pk2, &pklen2) ||
        !batch_key(alg, px, seed, pk2, &pklen2))
        return 0;
    CHECK_INT(hbs_stateful_open(&kc, pc, HBS_STATEFUL_NO_SYNC, 64), HBS_OK);
    CHECK_INT(hbs_stateful_open(&kg, pg, HBS_STATEFUL_NO_SYNC, 1), HBS_OK);
    CHECK_INT(hbs_stateful_open(&kx, px, HBS_STATEFUL_NO_SYNC, 1), HBS_OK);
    if (!kc || !kg || !kx)
        goto out;
    sb = hbs_stateful_sig_bytes(kg);
    for (size_t b = 0; b < nb && ok; b++) {
        const size_t count = batches[b];
        const uint64_t before = hbs_stateful_key_index(kg);
        uint8_t *gs = sig_buf(count * sb, sign_pinned), *cs = malloc(sb),
                *mbuf = malloc(count * 64);
        const uint8_t **msgs = malloc(count * sizeof *msgs);
        size_t *lens = malloc(count * sizeof *lens), bad = 0;
        if (!gs || !cs || !mbuf || !msgs || !lens) {
            CHECK(0);
            ok = 0;
        } else {
            test_rand_bytes(mbuf, count * 64);
            for (size_t i = 0; i < count; i++) {
                msgs[i] = mbuf + i * 64;
                lens[i] = (i * 13) % 65;
            }
            rc = hbs_gpu_stateful_sign_many(kg, gs, count * sb, msgs, lens, count);
            CHECK_MSG(rc == HBS_OK, "%s: sign_many(%zu) %d (%s)", alg, count, rc,
                      hbs_gpu_last_error());
            ok &= rc == HBS_OK;
            CHECK_MSG(hbs_stateful_key_index(kg) == before + count,
                      "%s: index %llu after %zu from %llu", alg,
                      (unsigned long long)hbs_stateful_key_index(kg), count,
                      (unsigned long long)before);
            for (size_t i = 0; i < count && ok; i++) {
                size_t len = 0;
                rc = hbs_stateful_sign(kc, cs, sb, &len, msgs[i], lens[i]);
                if (rc != HBS_OK || len != sb || memcmp(cs, gs + i * sb, sb) != 0)
                    bad++;
            }
            CHECK_MSG(bad == 0, "%s: batch of %zu from index %llu: %zu signatures differ",
                      alg, count, (unsigned long long)before, bad);
            ok &= bad == 0;
            /* the GPU key moved over the batch (its batch end, on the batch's own trees)
             * into the very state the CPU's skip over the batch makes */
            uint8_t *xg = NULL, *xs = NULL;
            size_t lg = 0, ls = 0;
            uint64_t fg = 0, fs = 0;
            rc = hbs_stateful_batch_begin(kx, count, &fs, &xs, &ls);
            hbs_stateful_batch_free_state(xs, ls);
            xs = NULL;
            CHECK_INT(rc, HBS_OK);
            CHECK_INT(hbs_stateful_batch_end(kx, fs + count), HBS_OK);
            if (ok && hbs_stateful_key_remaining(kg) > 0) {
                CHECK_INT(hbs_stateful_batch_state(kg, 1, &fg, &xg, &lg), HBS_OK);
                CHECK_INT(hbs_stateful_batch_state(kx, 1, &fs, &xs, &ls), HBS_OK);
                const int same = xg && xs && fg == fs && lg == ls && memcmp(xg, xs, lg) == 0;
                CHECK_MSG(same, "%s: key state after a batch of %zu from index %llu differs "
                          "from the CPU skip's", alg, count, (unsigned long long)before);
                ok &= same;
                hbs_stateful_batch_free_state(xg, lg);
                hbs_stateful_batch_free_state(xs, ls);
            }
        }
        sig_buf_free(gs, sign_pinned);
        free(cs);
        free(mbuf);
        free(msgs);
        free(lens);
    }
    /* the file holds the advanced index: reopen and sign once more on both */
    if (ok) {
        const uint64_t at = hbs_stateful_key_index(kg);
        uint8_t *a = malloc(sb), *b = malloc(sb);
        size_t la = 0, lb = 0;
        hbs_stateful_close(kg);
        kg = NULL;
        CHECK_INT(hbs_stateful_open(&kg, pg, HBS_STATEFUL_NO_SYNC, 1), HBS_OK);
        if (kg && a && b && hbs_stateful_key_remaining(kg) > 0) {
            CHECK_INT(hbs_stateful_key_index(kg), at);
            CHECK_INT(hbs_stateful_sign(kg, a, sb, &la, (const uint8_t *)"after", 5), HBS_OK);
            CHECK_INT(hbs_stateful_sign(kc, b, sb, &lb, (const uint8_t *)"after", 5), HBS_OK);
            CHECK_MSG(la == lb && memcmp(a, b, la) == 0, "%s: after the batch", alg);
            ok &= la == lb && memcmp(a, b, la) == 0;
        }
        free(a);
        free(b);
    }
out:
    hbs_stateful_close(kc);
    hbs_stateful_close(kg);
    hbs_stateful_close(kx);
    remove(pc);
    remove(pg);
    remove(px);
    return ok;
}

static void test_gpu_stateful_sign_many(void)
{
    static const size_t small[] = {1, 7, 19};
    static const size_t big[] = {1, 1500, 3000};
    static const size_t whole[] = {3, 1021};
    size_t same = 0, sets = 0;
    if (!have_gpu())
        return;
    for (size_t i = 0; i < N_BATCH_SETS; i++, sets++)
        same += (size_t)sign_set(batch_sets[i], small, 3, NULL);
    /* batches over tree boundaries and of thousands; a whole key */
    same += (size_t)sign_set("XMSSMT-SHA2_20/2_256", big, 3, NULL), sets++;
    same += (size_t)sign_set("LMS_SHA256_M32_H5/LMOTS_SHA256_N32_W4,LMS_SHA256_M32_H10/LMOTS_SHA256_N32_W2", big, 3, NULL), sets++;
    same += (size_t)sign_set("XMSS-SHA2_10_256", whole, 2, NULL), sets++;
    /* four layers of 32-leaf trees; an HSS key whose levels differ in n */
    same += (size_t)sign_set("XMSSMT-SHA2_20/4_256", big, 3, NULL), sets++;
    same += (size_t)sign_set("LMS_SHA256_M24_H5/LMOTS_SHA256_N24_W8,LMS_SHA256_M32_H10/LMOTS_SHA256_N32_W4", big, 3, NULL), sets++;
    test_note("%zu/%zu sets: GPU batch signatures = CPU signatures byte for byte", same, sets);
}

/* The same into page-locked memory (hbs_gpu_host_alloc), which the GPU fills itself: the
 * fused XMSS^MT path in groups, a whole small key, a one-level LMS key (signed whole on
 * the GPU), an HSS key of two levels. */
static void test_gpu_stateful_sign_many_pinned(void)
{
    static const size_t big[] = {1, 1500, 3000}, whole[] = {3, 1021}, lms[] = {32};
    size_t same = 0, sets = 0;
    if (!have_gpu())
        return;
    sign_pinned = 1;
    same += (size_t)sign_set("XMSSMT-SHA2_20/2_256", big, 3, NULL), sets++;
    same += (size_t)sign_set("XMSS-SHA2_10_256", whole, 2, NULL), sets++;
    same += (size_t)sign_set("LMS_SHA256_M32_H5/LMOTS_SHA256_N32_W4", lms, 1, NULL), sets++;
    same += (size_t)sign_set("LMS_SHA256_M32_H5/LMOTS_SHA256_N32_W4,LMS_SHA256_M32_H10/LMOTS_SHA256_N32_W2", big, 3, NULL), sets++;
    sign_pinned = 0;
    test_note("%zu/%zu sets: GPU batch signatures into page-locked memory = CPU signatures",
              same, sets);
}

/* The signing paths, one set each: fused XMSS^MT, general XMSS (SHAKE), a one-level LMS key
 * (signed whole on the GPU), HSS; PATH_COUNT messages a batch (two batches: a 32-leaf key
 * has room). */
static const char *const path_algs[] = {
    "XMSSMT-SHA2_20/2_256", "XMSS-SHAKE_10_256", "LMS_SHA256_M32_H5/LMOTS_SHA256_N32_W4",
    "LMS_SHA256_M32_H5/LMOTS_SHA256_N32_W4,LMS_SHA256_M32_H5/LMOTS_SHA256_N32_W8"};
#define N_PATH_ALGS (sizeof path_algs / sizeof path_algs[0])
enum { PATH_COUNT = 12 };

typedef struct {
    uint8_t bytes[PATH_COUNT][16];
    const uint8_t *msgs[PATH_COUNT];
    size_t lens[PATH_COUNT];
} path_msgs;

static void path_msgs_make(path_msgs *m)
{
    for (size_t i = 0; i < PATH_COUNT; i++) {
        test_rand_bytes(m->bytes[i], sizeof m->bytes[i]);
        m->msgs[i] = m->bytes[i];
        m->lens[i] = sizeof m->bytes[i];
    }
}

/* A new GPU-made key of path_algs[a] in the file path (tag-a in the test folder), opened
 * with fsync; null if none. */
static hbs_stateful_key *path_key(size_t a, const char *tag, char *path, size_t cap,
                                  uint8_t *pk, size_t *pklen)
{
    uint8_t seed[3 * 64];
    hbs_stateful_key *k = NULL;
    test_rand_bytes(seed, sizeof seed);
    snprintf(path, cap, "%s/gss-%s-%zu.key", test_tmpdir(), tag, a);
    if (!batch_key(path_algs[a], path, seed, pk, pklen))
        return NULL;
    CHECK_INT(hbs_stateful_open(&k, path, 0, 1), HBS_OK);
    return k;
}

/* How many of the batch's signatures in buf do not verify. */
static size_t path_bad(hbs_stateful_key *k, const uint8_t *pk, size_t pklen, const path_msgs *m,
                       const uint8_t *buf, size_t sb)
{
    size_t bad = 0;
    for (size_t i = 0; i < PATH_COUNT; i++)
        bad += hbs_stateful_verify(hbs_stateful_key_family(k), pk, pklen, m->msgs[i],
                                   m->lens[i], buf + i * sb, sb) != HBS_OK;
    return bad;
}

/* The reservation fails (an I/O error injected into the key file's update, which runs
 * beside the signing): the call returns that error, the buffer holds no signature (every
 * byte zero, into pageable or page-locked memory), the key stays at its index; then the
 * same batch signs, and every signature verifies. Each signing path: fused XMSS^MT, the
 * general XMSS path (SHAKE), a one-level LMS key signed whole, HSS. */
static void test_gpu_stateful_sign_many_reserve_fails(void)
{
    char path[4096];
    uint8_t pk[HBS_STATEFUL_MAX_PK_BYTES];
    size_t pklen = 0, refused = 0, runs = 0;
    path_msgs m;
    if (!have_gpu())
        return;
    path_msgs_make(&m);
    for (size_t a = 0; a < N_PATH_ALGS; a++) {
        hbs_stateful_key *k = path_key(a, "resfail", path, sizeof path, pk, &pklen);
        const size_t sb = k ? hbs_stateful_sig_bytes(k) : 0;
        for (int pinned = 0; k && pinned < 2; pinned++, runs++) {
            uint8_t *buf = sig_buf(PATH_COUNT * sb, pinned);
            if (!buf)
                break;
            const uint64_t before = hbs_stateful_key_index(k);
            memset(buf, 0xa5, PATH_COUNT * sb);
            (void)hbs_store_test_fail_at(1);
            const int rc =
                hbs_gpu_stateful_sign_many(k, buf, PATH_COUNT * sb, m.msgs, m.lens, PATH_COUNT);
            (void)hbs_store_test_fail_at(0);
            size_t left = 0;
            for (size_t i = 0; i < PATH_COUNT * sb; i++)
                left += buf[i] != 0;
            CHECK_MSG(rc == HBS_ERR_IO, "%s: sign_many with a failing reservation: %d",
                      path_algs[a], rc);
            CHECK_MSG(left == 0, "%s: %zu bytes left in the buffer after a failed reservation",
                      path_algs[a], left);
            CHECK_INT(hbs_stateful_key_index(k), before);
            refused += rc == HBS_ERR_IO && left == 0 && hbs_stateful_key_index(k) == before;
            /* without the fault: the same indices, signed */
            CHECK_INT(hbs_gpu_stateful_sign_many(k, buf, PATH_COUNT * sb, m.msgs, m.lens,
                                                 PATH_COUNT),
                      HBS_OK);
            CHECK_INT(hbs_stateful_key_index(k), before + PATH_COUNT);
            const size_t bad = path_bad(k, pk, pklen, &m, buf, sb);
            CHECK_MSG(bad == 0, "%s: %zu signatures do not verify", path_algs[a], bad);
            sig_buf_free(buf, pinned);
        }
        hbs_stateful_close(k);
        remove(path);
    }
    test_note("%zu/%zu batches refused whole when the reservation failed", refused, runs);
}

/* A key opened with a reserve of 100: its first batch sets the reserve aside (one file
 * write), the next batch within it writes nothing (an armed file fault stays unused) and
 * signs on; every signature verifies, and reopening resumes after the reserve (or at the
 * key's end). Each signing path. */
static void test_gpu_stateful_sign_many_reserve_ahead(void)
{
    char path[4096];
    uint8_t pk[HBS_STATEFUL_MAX_PK_BYTES];
    size_t pklen = 0, good = 0;
    path_msgs m;
    if (!have_gpu())
        return;
    path_msgs_make(&m);
    for (size_t a = 0; a < N_PATH_ALGS; a++) {
        hbs_stateful_key *k = path_key(a, "ahead", path, sizeof path, pk, &pklen);
        if (!k)
            continue;
        const size_t sb = hbs_stateful_sig_bytes(k);
        const uint64_t total = hbs_stateful_key_total(k);
        hbs_stateful_close(k);
        k = NULL;
        CHECK_INT(hbs_stateful_open(&k, path, 0, 100), HBS_OK);
        uint8_t *buf = malloc(PATH_COUNT * sb);
        int ok = k && buf;
        for (int round = 0; ok && round < 2; round++) {
            if (round == 1)
                (void)hbs_store_test_fail_at(1);
            const int rc =
                hbs_gpu_stateful_sign_many(k, buf, PATH_COUNT * sb, m.msgs, m.lens, PATH_COUNT);
            const unsigned ops = round == 1 ? hbs_store_test_fail_at(0) : 0;
            CHECK_MSG(rc == HBS_OK, "%s: batch %d: %d", path_algs[a], round, rc);
            CHECK_MSG(ops == 0, "%s: the batch within the reserve ran %u file operations",
                      path_algs[a], ops);
            const size_t bad = path_bad(k, pk, pklen, &m, buf, sb);
            CHECK_MSG(bad == 0, "%s: %zu signatures do not verify", path_algs[a], bad);
            ok &= rc == HBS_OK && ops == 0 && bad == 0;
        }
        hbs_stateful_close(k);
        k = NULL;
        CHECK_INT(hbs_stateful_open(&k, path, 0, 1), HBS_OK);
        if (k && ok) {
            const uint64_t want = total < 100 ? total : 100;
            CHECK_MSG(hbs_stateful_key_index(k) == want, "%s: reopened at %llu, not %llu",
                      path_algs[a], (unsigned long long)hbs_stateful_key_index(k),
                      (unsigned long long)want);
            good += hbs_stateful_key_index(k) == want;
        }
        free(buf);
        hbs_stateful_close(k);
        remove(path);
    }
    test_note("%zu/%zu sets: a second batch within the key's reserve wrote nothing", good,
              N_PATH_ALGS);
}

/* A thread watching the end of every signature in a buffer filled with 0xa5: the ms (from
 * t0) at which the first of them changed, or -1 if none did before stop. */
typedef struct {
    const volatile uint8_t *buf;
    size_t sb, count;
    volatile int stop;
    double t0, first;
} sig_watch;

static double mono_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static void *watch_sigs(void *arg)
{
    sig_watch *w = arg;
    w->first = -1;
    while (!w->stop && w->first < 0)
        for (size_t i = 0; i < w->count && w->first < 0; i++)
            for (size_t b = w->sb - 32; b < w->sb; b++)
                if (w->buf[i * w->sb + b] != 0xa5) {
                    w->first = mono_ms() - w->t0;
                    break;
                }
    return NULL;
}

/* No signature reaches the caller's buffer before the batch's reservation is in place: with
 * the key file's update held back (a slow disk: hbs_store_test_hold) the GPU finishes long
 * before the reservation, and a thread watching the buffer must see the end of every
 * signature (written with its one-time signature or after it, on every path) stay as it was
 * until the hold is over; then every signature verifies. Into pageable and page-locked
 * memory; fused XMSS^MT, general XMSS (SHAKE), a one-level LMS key, HSS. */
static void test_gpu_stateful_sign_many_slow_disk(void)
{
    enum { HOLD_MS = 300 };
    char path[4096];
    uint8_t pk[HBS_STATEFUL_MAX_PK_BYTES];
    size_t pklen = 0, held = 0, runs = 0;
    double earliest = 1e9;
    path_msgs m;
    if (!have_gpu())
        return;
    path_msgs_make(&m);
    for (size_t a = 0; a < N_PATH_ALGS; a++) {
        hbs_stateful_key *k = path_key(a, "slow", path, sizeof path, pk, &pklen);
        const size_t sb = k ? hbs_stateful_sig_bytes(k) : 0;
        for (int pinned = 0; k && pinned < 2; pinned++, runs++) {
            uint8_t *buf = sig_buf(PATH_COUNT * sb, pinned);
            pthread_t th;
            if (!buf)
                break;
            memset(buf, 0xa5, PATH_COUNT * sb);
            sig_watch w = {buf, sb, PATH_COUNT, 0, mono_ms(), -1};
            (void)hbs_store_test_hold(HOLD_MS);
            const int started = pthread_create(&th, NULL, watch_sigs, &w) == 0;
            const int rc =
                hbs_gpu_stateful_sign_many(k, buf, PATH_COUNT * sb, m.msgs, m.lens, PATH_COUNT);
            (void)hbs_store_test_hold(0);
            w.stop = 1;
            if (started)
                pthread_join(th, NULL);
            CHECK(started);
            CHECK_MSG(rc == HBS_OK, "%s: sign_many %d (%s)", path_algs[a], rc,
                      hbs_gpu_last_error());
            CHECK_MSG(w.first < 0 || w.first >= HOLD_MS - 5,
                      "%s (%s memory): a signature was in the buffer %.1f ms into the call, "
                      "before the reservation (held %d ms)",
                      path_algs[a], pinned ? "page-locked" : "pageable", w.first, HOLD_MS);
            held += w.first < 0 || w.first >= HOLD_MS - 5;
            if (w.first >= 0 && w.first < earliest)
                earliest = w.first;
            const size_t bad = path_bad(k, pk, pklen, &m, buf, sb);
            CHECK_MSG(bad == 0, "%s: %zu signatures do not verify", path_algs[a], bad);
            sig_buf_free(buf, pinned);
        }
        hbs_stateful_close(k);
        remove(path);
    }
    test_note("%zu/%zu batches: nothing in the buffer before the reservation (held %d ms; "
              "the first signature bytes seen at %.0f ms)",
              held, runs, HOLD_MS, earliest < 1e9 ? earliest : -1.0);
}

/* Batch verification of signatures that lie one after another in page-locked memory (they
 * go up to the GPU as they are, without the packing's copy): every verdict HBS_OK; one
 * flipped bit fails that item alone; an item of another length breaks the run (the chunk
 * is packed as usual) and fails alone. XMSS^MT, a one-level LMS key, HSS. */
static void test_gpu_stateful_verify_pinned(void)
{
    static const char *const algs[] = {
        "XMSSMT-SHA2_20/2_256", "LMS_SHA256_M32_H10/LMOTS_SHA256_N32_W4",
        "LMS_SHA256_M32_H5/LMOTS_SHA256_N32_W4,LMS_SHA256_M32_H5/LMOTS_SHA256_N32_W8"};
    enum { COUNT = 40 };
    char path[4096];
    uint8_t seed[3 * 64], pk[HBS_STATEFUL_MAX_PK_BYTES], mbuf[COUNT][20];
    const uint8_t *msgs[COUNT], *sp[COUNT], *pks[1];
    size_t lens[COUNT], slens[COUNT], pklen = 0, pkl[1], good = 0;
    int res[COUNT];
    if (!have_gpu())
        return;
    for (size_t i = 0; i < COUNT; i++) {
        test_rand_bytes(mbuf[i], sizeof mbuf[i]);
        msgs[i] = mbuf[i];
        lens[i] = i % 21;
    }
    for (size_t a = 0; a < sizeof algs / sizeof algs[0]; a++) {
        hbs_stateful_key *k = NULL;
        uint8_t *buf = NULL;
        test_rand_bytes(seed, sizeof seed);
        snprintf(path, sizeof path, "%s/gss-vpinned-%zu.key", test_tmpdir(), a);
        if (!batch_key(algs[a], path, seed, pk, &pklen))
            continue;
        CHECK_INT(hbs_stateful_open(&k, path, HBS_STATEFUL_NO_SYNC, 1), HBS_OK);
        const size_t sb = k ? hbs_stateful_sig_bytes(k) : 0;
        if (k && (buf = sig_buf(COUNT * sb, 1)) != NULL) {
            const hbs_stateful_family fam = hbs_stateful_key_family(k);
            int ok = 1;
            CHECK_INT(hbs_gpu_stateful_sign_many(k, buf, COUNT * sb, msgs, lens, COUNT), HBS_OK);
            pks[0] = pk;
            pkl[0] = pklen;
            for (size_t i = 0; i < COUNT; i++) {
                sp[i] = buf + i * sb;
                slens[i] = sb;
            }
            /* all valid; then one bit flipped in item 7; then item 30 one byte short */
            for (int round = 0; round < 3; round++) {
                if (round == 1)
                    buf[7 * sb + sb / 2] ^= 0x10;
                if (round == 2) {
                    buf[7 * sb + sb / 2] ^= 0x10;
                    slens[30] = sb - 1;
                }
                const int rc = hbs_gpu_stateful_verify_many(fam, res, sp, slens, msgs, lens,
                                                            COUNT, pks, pkl, 1);
                CHECK_MSG(rc == HBS_OK || rc == HBS_ERR_VERIFY_FAILED, "%s: verify_many %d",
                          algs[a], rc);
                size_t wrong = 0;
                for (size_t i = 0; i < COUNT; i++) {
                    const int bad = (round == 1 && i == 7) || (round == 2 && i == 30);
                    wrong += (res[i] == HBS_OK) == bad;
                }
                CHECK_MSG(wrong == 0, "%s: round %d: %zu wrong verdicts", algs[a], round, wrong);
                ok &= wrong == 0;
            }
            good += (size_t)ok;
        }
        sig_buf_free(buf, 1);
        hbs_stateful_close(k);
        remove(path);
    }
    test_note("%zu/%zu sets: verdicts from page-locked signatures right (valid, a flipped "
              "bit, a short one)", good, sizeof algs / sizeof algs[0]);
}

/* Two keys alike in their public seed (XMSS: PUB_SEED; HSS: I) and different in their
 * secret one, made on the GPU one after the other: key generation keeps each key's first
 * trees on the GPU for the batch signer, and each key's batches must get its own (the cache
 * names a key's trees by its root too). Whole keys and parts of keys, XMSS, XMSS^MT, LMS. */
static void test_gpu_stateful_sign_many_cache(void)
{
    static const char *const algs[] = {"XMSS-SHA2_10_256", "XMSSMT-SHA2_20/2_256",
                                       "LMS_SHA256_M32_H5/LMOTS_SHA256_N32_W4",
                                       "LMS_SHA256_M24_H5/LMOTS_SHA256_N24_W8"};
    static const size_t parts[] = {3, 29}, whole[] = {32};
    uint8_t seed[3 * 64], other[3 * 64];
    size_t same = 0, runs = 0;
    if (!have_gpu())
        return;
    for (size_t a = 0; a < sizeof algs / sizeof algs[0]; a++) {
        const int small = strncmp(algs[a], "LMS", 3) == 0;
        test_rand_bytes(seed, sizeof seed);
        memcpy(other, seed, sizeof other);
        other[19] ^= 0x40; /* in SK_SEED (XMSS) or SEED (HSS, after the 16 bytes of I) */
        for (int k = 0; k < 2; k++, runs++)
            same += (size_t)sign_set(algs[a], k == 0 && small ? whole : parts,
                                     k == 0 && small ? 1 : 2, k ? other : seed);
    }
    test_note("%zu/%zu keys with the same public seed: GPU batch signatures = CPU's", same,
              runs);
}

/* ---- one message under each of many keys (hbs_gpu_stateful_sign_keys) ---- */

#define SK_PER_SET 3
#define SK_ROUNDS 5

/* Every set of batch_sets, SK_PER_SET keys each (one at index 0, others skipped to just
 * before a tree boundary of the bottom layer), each with a CPU twin from the same seed. Five
 * rounds of one call signing a message under every key at once, all families and shapes
 * mixed: each signature equals the twin's hbs_stateful_sign byte for byte, and afterwards
 * each key's state equals its twin's. A key at its end reports HBS_ERR_KEY_EXHAUSTED alone;
 * an injected failure of one key's reservation leaves that key untouched and its signature
 * zero while the others sign; one key twice is refused whole. */
static void test_gpu_stateful_sign_keys(void)
{
    enum { NK = N_BATCH_SETS * SK_PER_SET + 1 };
    char paths[2 * NK][512];
    hbs_stateful_key *kg[NK], *kc[NK];
    uint8_t *sigs[NK], *csig = NULL, mbuf[NK][40];
    const uint8_t *msgs[NK];
    size_t caps[NK], lens[NK], slens[NK], nk = 0, same = 0, total = 0;
    int res[NK];
    memset(paths, 0, sizeof paths);
    if (!have_gpu())
        return;
    memset(kg, 0, sizeof kg);
    memset(kc, 0, sizeof kc);
    memset(sigs, 0, sizeof sigs);
    for (size_t a = 0; a < N_BATCH_SETS; a++)
        for (size_t r = 0; r < SK_PER_SET; r++, nk++) {
            uint8_t seed[3 * 64], pk[HBS_STATEFUL_MAX_PK_BYTES];
            size_t pklen = 0;
            test_rand_bytes(seed, sizeof seed);
            snprintf(paths[2 * nk], sizeof paths[0], "%s/gsk-g-%zu.key", test_tmpdir(), nk);
            snprintf(paths[2 * nk + 1], sizeof paths[0], "%s/gsk-c-%zu.key", test_tmpdir(), nk);
            if (!batch_key(batch_sets[a], paths[2 * nk], seed, pk, &pklen) ||
                !batch_key(batch_sets[a], paths[2 * nk + 1], seed, pk, &pklen))
                goto out;
            CHECK_INT(hbs_stateful_open(&kg[nk], paths[2 * nk], HBS_STATEFUL_NO_SYNC, 1), HBS_OK);
            CHECK_INT(hbs_stateful_open(&kc[nk], paths[2 * nk + 1], HBS_STATEFUL_NO_SYNC, 1),
                      HBS_OK);
            if (!kg[nk] || !kc[nk])
                goto out;
            /* r = 1: two before index 1,024 (a boundary of every layer of the multi-tree keys
             * here), or half of a smaller key (a bottom-tree boundary of the two-level HSS
             * key), so the rounds cross it; r = 2: a little way in */
            const uint64_t tot = hbs_stateful_key_total(kg[nk]);
            uint64_t to = 0;
            if (r == 1)
                to = (tot > 1024 ? 1024 : tot / 2) - 2;
            else if (r == 2)
                to = 5;
            for (int t = 0; t < 2 && to; t++) {
                hbs_stateful_key *k = t ? kc[nk] : kg[nk];
                uint8_t *st = NULL;
                size_t stl = 0;
                uint64_t first = 0;
                CHECK_INT(hbs_stateful_batch_begin(k, to, &first, &st, &stl), HBS_OK);
                hbs_stateful_batch_free_state(st, stl);
                CHECK_INT(hbs_stateful_batch_end(k, first + to), HBS_OK);
            }
            caps[nk] = hbs_stateful_sig_bytes(kg[nk]);
            sigs[nk] = malloc(caps[nk]);
            if (!sigs[nk])
                goto out;
        }
    {
        /* an exhausted key: an H5 key moved to its end */
        uint8_t seed[3 * 64], pk[HBS_STATEFUL_MAX_PK_BYTES], *st = NULL;
        size_t pklen = 0, stl = 0;
        uint64_t first = 0;
        test_rand_bytes(seed, sizeof seed);
        snprintf(paths[2 * nk], sizeof paths[0], "%s/gsk-g-%zu.key", test_tmpdir(), nk);
        paths[2 * nk + 1][0] = 0;
        if (!batch_key("LMS_SHA256_M32_H5/LMOTS_SHA256_N32_W4", paths[2 * nk], seed, pk, &pklen))
            goto out;
        CHECK_INT(hbs_stateful_open(&kg[nk], paths[2 * nk], HBS_STATEFUL_NO_SYNC, 1), HBS_OK);
        if (!kg[nk])
            goto out;
        CHECK_INT(hbs_stateful_batch_begin(kg[nk], 32, &first, &st, &stl), HBS_OK);
        hbs_stateful_batch_free_state(st, stl);
        CHECK_INT(hbs_stateful_batch_end(kg[nk], 32), HBS_OK);
        caps[nk] = hbs_stateful_sig_bytes(kg[nk]);
        sigs[nk] = malloc(caps[nk]);
        if (!sigs[nk])
            goto out;
        nk++;
    }
    csig = malloc(8 << 20);
    if (!csig)
        goto out;
    for (int round = 0; round < SK_ROUNDS; round++) {
        test_rand_bytes(&mbuf[0][0], sizeof mbuf);
        for (size_t i = 0; i < nk; i++) {
            msgs[i] = mbuf[i];
            lens[i] = (i * 7 + (size_t)round) % 41;
        }
        const int rc = hbs_gpu_stateful_sign_keys(kg, nk, sigs, caps, slens, msgs, lens, res);
        CHECK_MSG(rc == HBS_ERR_KEY_EXHAUSTED, "round %d: sign_keys %d (%s)", round, rc,
                  hbs_gpu_last_error());
        CHECK_INT(res[nk - 1], HBS_ERR_KEY_EXHAUSTED);
        CHECK_INT(slens[nk - 1], 0);
        for (size_t i = 0; i + 1 < nk; i++, total++) {
            size_t cl = 0;
            const int crc = hbs_stateful_sign(kc[i], csig, 8 << 20, &cl, msgs[i], lens[i]);
            const int ok = res[i] == HBS_OK && crc == HBS_OK && slens[i] == cl &&
                           memcmp(csig, sigs[i], cl) == 0;
            CHECK_MSG(ok, "%s key %zu round %d: result %d, CPU %d, lengths %zu/%zu, %s",
                      batch_sets[i / SK_PER_SET], i % SK_PER_SET, round, res[i], crc, slens[i],
                      cl, ok ? "" : "bytes differ");
            same += (size_t)ok;
        }
    }
    /* each key's whole state equals its twin's */
    for (size_t i = 0; i + 1 < nk; i++) {
        uint8_t *xg = NULL, *xc = NULL;
        size_t lg = 0, lc = 0;
        uint64_t fg = 0, fc = 0;
        if (hbs_stateful_key_remaining(kg[i]) == 0)
            continue;
        CHECK_INT(hbs_stateful_batch_state(kg[i], 1, &fg, &xg, &lg), HBS_OK);
        CHECK_INT(hbs_stateful_batch_state(kc[i], 1, &fc, &xc, &lc), HBS_OK);
        CHECK_MSG(xg && xc && fg == fc && lg == lc && memcmp(xg, xc, lg) == 0,
                  "%s key %zu: state after the rounds differs from the CPU's",
                  batch_sets[i / SK_PER_SET], i % SK_PER_SET);
        hbs_stateful_batch_free_state(xg, lg);
        hbs_stateful_batch_free_state(xc, lc);
    }
    test_note("%zu/%zu signatures under %zu keys (%zu sets) equal the CPU's", same, total,
              nk - 1, (size_t)N_BATCH_SETS);
    {
        /* one reservation fails (keys with a reserve of 1 write their file every time) */
        uint64_t before[NK];
        size_t io = 0, ok = 0, which = NK;
        for (size_t i = 0; i < nk; i++)
            before[i] = hbs_stateful_key_index(kg[i]);
        for (size_t i = 0; i < nk; i++)
            memset(sigs[i], 0xa5, caps[i]);
        (void)hbs_store_test_fail_at(1);
        const int rc = hbs_gpu_stateful_sign_keys(kg, nk - 1, sigs, caps, slens, msgs, lens, res);
        (void)hbs_store_test_fail_at(0);
        for (size_t i = 0; i + 1 < nk; i++) {
            if (res[i] == HBS_ERR_IO) {
                size_t left = 0;
                for (size_t b = 0; b < caps[i]; b++)
                    left += sigs[i][b] != 0;
                io++;
                which = i;
                CHECK_MSG(left == 0 && hbs_stateful_key_index(kg[i]) == before[i],
                          "the key whose reservation failed: %zu bytes left, index moved %d",
                          left, hbs_stateful_key_index(kg[i]) != before[i]);
            } else {
                ok += res[i] == HBS_OK && hbs_stateful_key_index(kg[i]) == before[i] + 1;
            }
        }
        CHECK_INT(rc, HBS_ERR_IO);
        CHECK_MSG(io == 1 && ok + 1 == nk - 1, "failed reservation: %zu refused, %zu signed of %zu",
                  io, ok, nk - 1);
        test_note("one failed reservation: key %zu refused alone, %zu keys signed", which, ok);
    }
    {
        /* one key twice: refused whole, nothing moves */
        hbs_stateful_key *two[2] = {kg[0], kg[0]};
        const uint64_t before = hbs_stateful_key_index(kg[0]);
        CHECK_INT(hbs_gpu_stateful_sign_keys(two, 2, sigs, caps, slens, msgs, lens, res),
                  HBS_ERR_INVALID_ARGUMENT);
        CHECK_INT(res[0], HBS_ERR_INVALID_ARGUMENT);
        CHECK_INT(hbs_stateful_key_index(kg[0]), before);
    }
out:
    free(csig);
    for (size_t i = 0; i < NK; i++) {
        hbs_stateful_close(kg[i]);
        hbs_stateful_close(kc[i]);
        free(sigs[i]);
    }
    for (size_t i = 0; i < 2 * NK; i++)
        if (paths[i][0])
            remove(paths[i]);
}

static void test_gpu_stateful_sign_many_misuse(void)
{
    char path[4096];
    uint8_t seed[3 * 64], pk[HBS_STATEFUL_MAX_PK_BYTES], sig[4];
    size_t pklen = 0;
    hbs_stateful_key *k = NULL;
    const uint8_t *m[2] = {(const uint8_t *)"a", (const uint8_t *)"b"};
    size_t ml[2] = {1, 1};
    if (!have_gpu())
        return;
    test_rand_bytes(seed, sizeof seed);
    snprintf(path, sizeof path, "%s/gss-misuse.key", test_tmpdir());
    if (!batch_key("LMS_SHA256_M32_H5/LMOTS_SHA256_N32_W8", path, seed, pk, &pklen))
        return;
    CHECK_INT(hbs_stateful_open(&k, path, HBS_STATEFUL_NO_SYNC, 1), HBS_OK);
    if (k) {
        size_t sb = hbs_stateful_sig_bytes(k);
        uint8_t *all = malloc(40 * sb);
        CHECK_INT(hbs_gpu_stateful_sign_many(k, sig, sizeof sig, m, ml, 2),
                  HBS_ERR_BUFFER_TOO_SMALL);
        CHECK_INT(hbs_stateful_key_index(k), 0);
        if (all) {
            const uint8_t *mm[40];
            size_t mml[40];
            for (int i = 0; i < 40; i++)
                mm[i] = m[0], mml[i] = 1;
            /* 32 indices: 33 is too many and changes nothing; 32 is all of them */
            CHECK_INT(hbs_gpu_stateful_sign_many(k, all, 40 * sb, mm, mml, 33),
                      HBS_ERR_KEY_EXHAUSTED);
            CHECK_INT(hbs_stateful_key_index(k), 0);
            CHECK_INT(hbs_gpu_stateful_sign_many(k, all, 40 * sb, mm, mml, 32), HBS_OK);
            CHECK_INT(hbs_stateful_key_index(k), 32);
            CHECK_INT(hbs_stateful_verify(HBS_STATEFUL_HSS, pk, pklen, m[0], 1, all + 31 * sb,
                                          sb),
                      HBS_OK);
            CHECK_INT(hbs_gpu_stateful_sign_many(k, all, 40 * sb, mm, mml, 1),
                      HBS_ERR_KEY_EXHAUSTED);
        }
        free(all);
    }
    hbs_stateful_close(k);
    remove(path);
}

const hbs_test hbs_tests_gpu_stateful[] = {
    {"misuse", test_gpu_stateful_misuse},
    {"lms", test_gpu_stateful_lms},
    {"hss", test_gpu_stateful_hss},
    {"xmss_keys", test_gpu_stateful_xmss},
    {"tall_and_sign", test_gpu_stateful_tall_and_sign},
    {"root_sigs", test_gpu_stateful_root_sigs},
    {"lms_vectors", test_gpu_stateful_lms_vectors},
    {"xmss_vectors", test_gpu_stateful_xmss_vectors},
    {"verify_many", test_gpu_stateful_verify_many},
    {"sign_many", test_gpu_stateful_sign_many},
    {"sign_many_misuse", test_gpu_stateful_sign_many_misuse},
    {"sign_many_cache", test_gpu_stateful_sign_many_cache},
    {"sign_many_pinned", test_gpu_stateful_sign_many_pinned},
    {"sign_many_slow_disk", test_gpu_stateful_sign_many_slow_disk},
    {"sign_many_reserve_ahead", test_gpu_stateful_sign_many_reserve_ahead},
    {"verify_pinned", test_gpu_stateful_verify_pinned},
    {"sign_many_reserve_fails", test_gpu_stateful_sign_many_reserve_fails},
    {"sign_keys", test_gpu_stateful_sign_keys},
    {NULL, NULL},
};
