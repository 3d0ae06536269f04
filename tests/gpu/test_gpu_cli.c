/* `hbs sign --gpu` and `hbs verify --gpu` over many files, judged against the CPU path of the
 * same binary: deterministic signatures (and signatures with given randomness) byte for
 * byte, hedged ones by verification, and the verdicts on damaged signatures line for line.
 * Without a GPU every test skips and says so. */
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hbs/gpu.h"
#include "hbs/slhdsa.h"
#include "test.h"

#define NO_GPU "no CUDA GPU: this build has no CUDA or this machine has no usable GPU"

static int have_gpu_and_binary(void)
{
    if (hbs_gpu_device_count() == 0) {
        test_skip("%s", NO_GPU);
        return 0;
    }
    if (access(test_hbs_bin(), X_OK) != 0) {
        test_fail(__FILE__, __LINE__, "hbs binary not found at %s (set HBS_BIN)",
                  test_hbs_bin());
        return 0;
    }
    return 1;
}

/* ---- running hbs ------------------------------------------------------------------------ */

/* An argument list that grows: the command, then as many file names as a test wants. */
typedef struct {
    const char **v;
    size_t n, cap;
} args;

static void args_add(args *a, const char *s)
{
    if (a->n + 2 > a->cap) {
        size_t cap = a->cap ? 2 * a->cap : 64;
        const char **v = realloc(a->v, cap * sizeof *v);
        if (!v)
            return;
        a->v = v;
        a->cap = cap;
    }
    a->v[a->n++] = s;
}

static const char *stderr_path(void)
{
    static char p[600];
    snprintf(p, sizeof p, "%s/gpu-cli-stderr.txt", test_tmpdir());
    return p;
}

static int run_args(const char *out, const args *a)
{
    return test_run_hbs(NULL, out, stderr_path(), a->v, a->n);
}

/* run_args for a short fixed list (NULL-terminated), then the files names[0..count). */
static int run_hbs(const char *out, char **names, size_t count, const char *first, ...)
{
    args a = {0};
    va_list ap;
    va_start(ap, first);
    for (const char *s = first; s; s = va_arg(ap, const char *))
        args_add(&a, s);
    va_end(ap);
    for (size_t i = 0; i < count; i++)
        args_add(&a, names[i]);
    int rc = a.v ? run_args(out, &a) : -1;
    free(a.v);
    return rc;
}

static int stderr_has(const char *text)
{
    size_t len;
    char *e = (char *)test_read_file(stderr_path(), &len);
    int yes = e && strstr(e, text) != NULL;
    free(e);
    return yes;
}

/* ---- files ---------------------------------------------------------------------------- */

static char *path_in(const char *dir, const char *name)
{
    size_t len = strlen(dir) + strlen(name) + 2;
    char *p = malloc(len);
    if (p)
        snprintf(p, len, "%s/%s", dir, name);
    return p;
}

/* A new folder for one run (the suite may run once per hash backend in one scratch folder). */
static char *fresh_dir(const char *name)
{
    static unsigned runs;
    char n[64];
    snprintf(n, sizeof n, "gpu-cli-%s-%u", name, runs++);
    char *p = path_in(test_tmpdir(), n);
    if (p)
        mkdir(p, 0700);
    return p;
}

static int write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    int ok = fwrite(data, 1, len, f) == len;
    return fclose(f) == 0 && ok ? 0 : -1;
}

/* count messages m0..m{count-1} in dir, of lengths 0, 5000 and assorted small ones. */
static char **make_messages(const char *dir, size_t count)
{
    static uint8_t buf[5000];
    char **names = calloc(count, sizeof *names);
    for (size_t i = 0; names && i < count; i++) {
        char n[32];
        size_t len = i == 0 ? 0 : i == 1 ? sizeof buf : (i * 37) % 300;
        snprintf(n, sizeof n, "m%zu", i);
        names[i] = path_in(dir, n);
        test_rand_bytes(buf, len);
        CHECK(names[i] && write_file(names[i], buf, len) == 0);
    }
    return names;
}

static void free_names(char **names, size_t count)
{
    for (size_t i = 0; names && i < count; i++)
        free(names[i]);
    free(names);
}

/* dir/BASENAME(msg).sig, as `-o dir` names it. */
static char *sig_in(const char *dir, const char *msg)
{
    const char *slash = strrchr(msg, '/');
    char base[300];
    snprintf(base, sizeof base, "%s.sig", slash ? slash + 1 : msg);
    return path_in(dir, base);
}

/* How many of the messages have signature files that differ between folders a and b (a
 * missing file counts as different). */
static size_t count_differences(char **msgs, size_t count, const char *a, const char *b,
                                size_t sig_bytes)
{
    size_t diff = 0;
    for (size_t i = 0; i < count; i++) {
        char *pa = sig_in(a, msgs[i]), *pb = sig_in(b, msgs[i]);
        size_t la = 0, lb = 0;
        uint8_t *x = pa ? test_read_file(pa, &la) : NULL, *y = pb ? test_read_file(pb, &lb) : NULL;
        if (!x || !y || la != sig_bytes || lb != sig_bytes || memcmp(x, y, la) != 0) {
            if (diff == 0)
                test_fail(__FILE__, __LINE__, "%s: the GPU and CPU signatures differ", msgs[i]);
            diff++;
        }
        free(x);
        free(y);
        free(pa);
        free(pb);
    }
    return diff;
}

/* ---- tests ------------------------------------------------------------------------------ */

/* A set, and the hex of n bytes of randomness for it. */
typedef struct {
    const char *name;
    const char *rand_hex;
} set_case;

static const set_case sets[] = {
    {"SLH-DSA-SHA2-128f", "000102030405060708090a0b0c0d0e0f"},
    {"SLH-DSA-SHAKE-192f", "101112131415161718191a1b1c1d1e1f2021222324252627"},
    {"SLH-DSA-SHA2-256s", "303132333435363738393a3b3c3d3e3f404142434445464748494a4b4c4d4e4f"},
};

/* Deterministic signing, and signing with given randomness, on the GPU and the CPU: the same
 * bytes, with batches (--batch) that leave a short last one; pure and pre-hash with a context. */
static void test_sign_matches_cpu(void)
{
    if (!have_gpu_and_binary())
        return;
    size_t files = 0;
    for (size_t s = 0; s < sizeof sets / sizeof sets[0]; s++) {
        const hbs_slhdsa_params *p = hbs_slhdsa_params_by_name(sets[s].name);
        const size_t count = strstr(sets[s].name, "256s") ? 40 : 257;
        char *dir = fresh_dir("sign");
        char *sk = path_in(dir, "sk.pem"), *pk = path_in(dir, "pk.pem");
        char *gpu = path_in(dir, "gpu");
        char **msgs = make_messages(dir, count);
        CHECK(p && dir && sk && pk && gpu && msgs);
        if (!p || !dir || !sk || !pk || !gpu || !msgs)
            goto next;
        CHECK_INT(run_hbs(NULL, NULL, 0, "keygen", "-a", sets[s].name, "-s", sk, "-p", pk,
                          NULL), 0);
        /* three variants: pure deterministic, pre-hash + context deterministic, and pure
         * with given randomness (the hedged code path, reproducibly) */
        for (int v = 0; v < 3; v++) {
            const char *o1 = v == 1 ? "--prehash" : v == 2 ? "--randomness" : "--deterministic";
            const char *o1v = v == 1 ? "SHA2-256" : v == 2 ? sets[s].rand_hex : NULL;
            const char *o2 = v == 1 ? "--deterministic" : NULL;
            char *cv, *gv;
            char sub[16];
            snprintf(sub, sizeof sub, "cpu%d", v);
            cv = path_in(dir, sub);
            snprintf(sub, sizeof sub, "gpu%d", v);
            gv = path_in(dir, sub);
            mkdir(cv, 0700);
            mkdir(gv, 0700);
            if (o1v)
                CHECK_INT(run_hbs(NULL, msgs, count, "sign", "-s", sk, "-o", cv, "--context",
                                  "c0ffee", o1, o1v, o2, NULL), 0);
            else
                CHECK_INT(run_hbs(NULL, msgs, count, "sign", "-s", sk, "-o", cv, o1, NULL), 0);
            if (o1v)
                CHECK_INT(run_hbs(NULL, msgs, count, "sign", "-s", sk, "-o", gv, "--gpu", "-v",
                                  "--batch", "100", "--context", "c0ffee", o1, o1v, o2, NULL),
                          0);
            else
                CHECK_INT(run_hbs(NULL, msgs, count, "sign", "-s", sk, "-o", gv, "--gpu", "-v",
                                  "--batch", "100", o1, NULL), 0);
            CHECK_MSG(stderr_has("GPU"), "sign --gpu -v does not name the GPU engine");
            size_t diff = count_differences(msgs, count, cv, gv, hbs_slhdsa_sig_bytes(p));
            CHECK_MSG(diff == 0, "%s variant %d: %zu of %zu signatures differ", sets[s].name,
                      v, diff, count);
            files += count;
            free(cv);
            free(gv);
        }
        /* hedged on the GPU (fresh randomness): the CPU verifies every one */
        mkdir(gpu, 0700);
        CHECK_INT(run_hbs(NULL, msgs, count, "sign", "-s", sk, "-o", gpu, "--gpu", NULL), 0);
        CHECK_INT(run_hbs(NULL, msgs, count, "verify", "-q", "-p", pk, "--sig-dir", gpu, NULL),
                  0);
    next:
        free_names(msgs, count);
        free(sk);
        free(pk);
        free(gpu);
        free(dir);
    }
    test_note("%zu signature files compared", files);
}

/* The same verdicts, line for line, from verify --gpu and the CPU: all valid, then with a
 * flipped bit, a short signature, another message's signature and a missing file. */
static void test_verify_matches_cpu(void)
{
    if (!have_gpu_and_binary())
        return;
    const size_t count = 300;
    char *dir = fresh_dir("verify");
    char *sk = path_in(dir, "sk.pem"), *pk = path_in(dir, "pk.pem"), *sd = path_in(dir, "sigs");
    char *out_c = path_in(dir, "cpu.txt"), *out_g = path_in(dir, "gpu.txt");
    char **msgs = make_messages(dir, count);
    CHECK(dir && sk && pk && sd && out_c && out_g && msgs);
    if (!dir || !sk || !pk || !sd || !out_c || !out_g || !msgs)
        goto done;
    mkdir(sd, 0700);
    CHECK_INT(run_hbs(NULL, NULL, 0, "keygen", "-a", "SLH-DSA-SHAKE-128f", "-s", sk, "-p", pk,
                      NULL), 0);
    CHECK_INT(run_hbs(NULL, msgs, count, "sign", "-s", sk, "-o", sd, "--gpu", "--context", "01",
                      NULL), 0);
    CHECK_INT(run_hbs(out_g, msgs, count, "verify", "-p", pk, "--sig-dir", sd, "--gpu", "-v",
                      "--context", "01", NULL), 0);
    CHECK_MSG(stderr_has("GPU"), "verify --gpu -v does not name the GPU engine");
    CHECK_INT(run_hbs(NULL, msgs, count, "verify", "-p", pk, "--sig-dir", sd, "--gpu",
                      "--context", "02", NULL), 1);

    /* damage: a flipped bit (7), one byte short (100), m200's signature over m201 */
    char *s7 = sig_in(sd, msgs[7]), *s100 = sig_in(sd, msgs[100]);
    char *s200 = sig_in(sd, msgs[200]), *s201 = sig_in(sd, msgs[201]), *s299 = sig_in(sd, msgs[299]);
    size_t len = 0;
    uint8_t *b = s7 ? test_read_file(s7, &len) : NULL;
    CHECK(b && len > 100);
    if (b && len > 100) {
        b[len / 3] ^= 0x40;
        CHECK(write_file(s7, b, len) == 0);
        CHECK(write_file(s100, b, len - 1) == 0);
    }
    free(b);
    b = s200 ? test_read_file(s200, &len) : NULL;
    CHECK(b && write_file(s201, b, len) == 0);
    free(b);
    for (int pass = 0; pass < 2; pass++) {
        /* pass 0: invalid ones only (status 1); pass 1: and a missing file (status 2) */
        if (pass == 1)
            remove(s299);
        const int want = pass == 0 ? 1 : 2;
        for (int as_json = 0; as_json < 2; as_json++) {
            const char *fmt = as_json ? "--json" : "--batch";
            const char *fmtv = as_json ? NULL : "64";
            if (fmtv) {
                CHECK_INT(run_hbs(out_c, msgs, count, "verify", "-p", pk, "--sig-dir", sd,
                                  "--context", "01", fmt, fmtv, NULL), want);
                CHECK_INT(run_hbs(out_g, msgs, count, "verify", "-p", pk, "--sig-dir", sd,
                                  "--context", "01", "--gpu", fmt, fmtv, NULL), want);
            } else {
                CHECK_INT(run_hbs(out_c, msgs, count, "verify", "-p", pk, "--sig-dir", sd,
                                  "--context", "01", fmt, NULL), want);
                CHECK_INT(run_hbs(out_g, msgs, count, "verify", "-p", pk, "--sig-dir", sd,
                                  "--context", "01", "--gpu", fmt, NULL), want);
            }
            size_t lc = 0, lg = 0;
            char *tc = (char *)test_read_file(out_c, &lc), *tg = (char *)test_read_file(out_g, &lg);
            CHECK_MSG(tc && tg && lc == lg && memcmp(tc, tg, lc) == 0,
                      "pass %d%s: verify --gpu printed something else than the CPU", pass,
                      as_json ? " (--json)" : "");
            size_t invalid = 0;
            for (const char *q = tc; q && (q = strstr(q, as_json ? "\"invalid\"" : "INVALID")); q++)
                invalid++;
            CHECK_MSG(invalid == 3, "pass %d: %zu invalid, expected 3", pass, invalid);
            free(tc);
            free(tg);
        }
    }
    free(s7);
    free(s100);
    free(s200);
    free(s201);
    free(s299);
done:
    free_names(msgs, count);
    free(sk);
    free(pk);
    free(sd);
    free(out_c);
    free(out_g);
    free(dir);
}

/* Thousands of files: more than one default batch of 4096, signed and verified on the GPU
 * and compared with the CPU's signatures. */
static void test_many_files(void)
{
    if (!have_gpu_and_binary())
        return;
    const size_t count = 5000;
    char *dir = fresh_dir("many");
    char *sk = path_in(dir, "sk.pem"), *pk = path_in(dir, "pk.pem");
    char *cpu = path_in(dir, "cpu"), *gpu = path_in(dir, "gpu");
    char **msgs = make_messages(dir, count);
    CHECK(dir && sk && pk && cpu && gpu && msgs);
    if (dir && sk && pk && cpu && gpu && msgs) {
        mkdir(cpu, 0700);
        mkdir(gpu, 0700);
        CHECK_INT(run_hbs(NULL, NULL, 0, "keygen", "-a", "SLH-DSA-SHA2-128f", "-s", sk, "-p",
                          pk, NULL), 0);
        CHECK_INT(run_hbs(NULL, msgs, count, "sign", "-s", sk, "-o", cpu, "--deterministic",
                          NULL), 0);
        CHECK_INT(run_hbs(NULL, msgs, count, "sign", "-s", sk, "-o", gpu, "--deterministic",
                          "--gpu", NULL), 0);
        size_t diff = count_differences(msgs, count, cpu, gpu,
                                        hbs_slhdsa_sig_bytes(hbs_slhdsa_params_get(
                                            HBS_SLHDSA_SHA2_128F)));
        CHECK_MSG(diff == 0, "%zu of %zu signatures differ", diff, count);
        CHECK_INT(run_hbs(NULL, msgs, count, "verify", "-q", "-p", pk, "--sig-dir", gpu,
                          "--gpu", NULL), 0);
        /* signatures are not replaced without --force, on the GPU path too */
        CHECK_INT(run_hbs(NULL, msgs, 1, "sign", "-s", sk, "-o", gpu, "--gpu", NULL), 2);
        test_note("%zu files", count);
    }
    free_names(msgs, count);
    free(sk);
    free(pk);
    free(cpu);
    free(gpu);
    free(dir);
}

const hbs_test hbs_tests_gpu_cli[] = {
    {"sign_matches_cpu", test_sign_matches_cpu},
    {"verify_matches_cpu", test_verify_matches_cpu},
    {"many_files", test_many_files},
    {NULL, NULL},
};
