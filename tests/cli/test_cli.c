/* Tests of the hbs command-line tool: the binary is run as a child process in a scratch
 * folder and judged by its exit status, its output files and (for known answers) NIST's
 * ACVP vectors. */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hbs/gpu.h"
#include "hbs/keyfile.h"
#include "hbs/slhdsa.h"
#include "json.h"
#include "test.h"

/* ---- helpers --------------------------------------------------------------------------- */

/* Paths are kept in rotating buffers: a test may hold up to this many at once. */
#define PATH_SLOTS 64

/* A path in this run's scratch folder. */
static const char *tpath(const char *name)
{
    static char bufs[PATH_SLOTS][512];
    static unsigned next;
    char *b = bufs[next++ % PATH_SLOTS];
    snprintf(b, sizeof bufs[0], "%s/%s", test_tmpdir(), name);
    return b;
}

static const char *stderr_path(void) { return tpath("cli-stderr.txt"); }

/* Runs `hbs ARGS...` (NULL-terminated) with stdin from `in` and stdout to `out` (NULL:
 * /dev/null for both; stderr always to stderr_path()). Returns the exit status, or 128+N
 * for death by signal N (so a crash is never mistaken for a verdict). */
static int run_hbs(const char *in, const char *out, ...)
{
    const char *argv[48];
    size_t argc = 0;
    va_list ap;
    va_start(ap, out);
    while (argc < 47 && (argv[argc] = va_arg(ap, const char *)) != NULL)
        argc++;
    va_end(ap);
    return test_run_hbs(in, out, stderr_path(), argv, argc);
}

static void write_bytes(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    CHECK_MSG(f != NULL, "cannot create %s", path);
    if (!f)
        return;
    CHECK(fwrite(data, 1, len, f) == len);
    CHECK(fclose(f) == 0);
}

static void write_text(const char *path, const char *text)
{
    write_bytes(path, text, strlen(text));
}

/* The file's bytes (NUL-terminated), or NULL; free() them. */
static uint8_t *read_bytes(const char *path, size_t *len)
{
    size_t n = 0;
    uint8_t *b = test_read_file(path, &n);
    if (len)
        *len = b ? n : 0;
    return b;
}

static int file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

static unsigned file_mode(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (unsigned)(st.st_mode & 07777) : 0xffffu;
}

static int file_has_prefix(const char *path, const char *prefix)
{
    uint8_t *b = read_bytes(path, NULL);
    int ok = b && strncmp((const char *)b, prefix, strlen(prefix)) == 0;
    free(b);
    return ok;
}

/* Checks that an error left one line "hbs: ...\n" on stderr. */
static void check_error_line(const char *what)
{
    size_t len;
    char *e = (char *)read_bytes(stderr_path(), &len);
    CHECK_MSG(e && len > 6 && strncmp(e, "hbs: ", 5) == 0 && e[len - 1] == '\n' &&
                  memchr(e, '\n', len) == e + len - 1,
              "%s: stderr is not one 'hbs: ...' line: %s", what, e ? e : "(none)");
    free(e);
}

/* Number of entries of a folder whose names start with '.', other than . and ..: the
 * temporary files an interrupted or failed write would leave. */
static int hidden_files(const char *dir)
{
    int n = 0;
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        if (e->d_name[0] == '.' && strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            n++;
    closedir(d);
    return n;
}

/* A fresh sub-folder of the scratch folder. */
static const char *subdir(const char *name)
{
    const char *p = tpath(name);
    mkdir(p, 0700);
    return p;
}

/* A new, empty sub-folder for one run of a test: the suite runs once per hash backend in
 * the same scratch folder, and a stateful key file is (rightly) never overwritten. */
static const char *fresh_dir(const char *name)
{
    static unsigned runs;
    char n[64];
    snprintf(n, sizeof n, "%s-%u", name, runs++);
    return subdir(n);
}

/* A path in folder dir. */
static const char *in_dir(const char *dir, const char *name)
{
    static char bufs[PATH_SLOTS][600];
    static unsigned next;
    char *b = bufs[next++ % PATH_SLOTS];
    snprintf(b, sizeof bufs[0], "%s/%s", dir, name);
    return b;
}

static int binary_present(void)
{
    if (access(test_hbs_bin(), X_OK) == 0)
        return 1;
    test_fail(__FILE__, __LINE__, "hbs binary not found at %s (set HBS_BIN)", test_hbs_bin());
    return 0;
}

static json *load_json(const char *path)
{
    size_t len;
    uint8_t *text = read_bytes(path, &len);
    json *doc = text ? json_parse((const char *)text, len) : NULL;
    free(text);
    return doc;
}

static const char *const set_names[HBS_SLHDSA_NUM_PARAMS] = {
    "SLH-DSA-SHA2-128s",  "SLH-DSA-SHA2-128f",  "SLH-DSA-SHA2-192s",  "SLH-DSA-SHA2-192f",
    "SLH-DSA-SHA2-256s",  "SLH-DSA-SHA2-256f",  "SLH-DSA-SHAKE-128s", "SLH-DSA-SHAKE-128f",
    "SLH-DSA-SHAKE-192s", "SLH-DSA-SHAKE-192f", "SLH-DSA-SHAKE-256s", "SLH-DSA-SHAKE-256f",
};

#define ALG "SLH-DSA-SHA2-128f"
#define ALG_SIG_BYTES 17088

/* ---- tests ------------------------------------------------------------------------------ */

static void test_list(void)
{
    if (!binary_present())
        return;
    char expect[512] = "";
    for (int i = 0; i < HBS_SLHDSA_NUM_PARAMS; i++) {
        strcat(expect, set_names[i]);
        strcat(expect, "\n");
    }
    CHECK_INT(run_hbs(NULL, tpath("list.txt"), "list", NULL), 0);
    char *out = (char *)read_bytes(tpath("list.txt"), NULL);
    /* SLH-DSA first, then the stateful schemes */
    CHECK_MSG(out && strncmp(out, expect, strlen(expect)) == 0, "hbs list printed:\n%s",
              out ? out : "");
    CHECK(out && strstr(out, "\nLMS_SHA256_M32_H10/LMOTS_SHA256_N32_W8\n"));
    CHECK(out && strstr(out, "\nLMS_SHAKE_M24_H25/LMOTS_SHAKE_N24_W1\n"));
    CHECK(out && strstr(out, "\nXMSS-SHA2_10_256\n"));
    CHECK(out && strstr(out, "\nXMSSMT-SHA2_60/12_512\n"));
    CHECK(out && strstr(out, "\nXMSS-SHAKE256_20_192\n"));
    free(out);
}

static void test_usage(void)
{
    if (!binary_present())
        return;
    const char *out = tpath("usage.txt");
    CHECK_INT(run_hbs(NULL, NULL, NULL), 2);
    CHECK_INT(run_hbs(NULL, NULL, "frobnicate", NULL), 2);
    check_error_line("unknown command");
    CHECK_INT(run_hbs(NULL, NULL, "--bogus", NULL), 2);
    CHECK_INT(run_hbs(NULL, NULL, "sign", "--bogus", NULL), 2);
    check_error_line("unknown option");
    CHECK_INT(run_hbs(NULL, NULL, "verify", "-p", NULL), 2);
    CHECK_INT(run_hbs(NULL, NULL, "list", "extra", NULL), 2);
    CHECK_INT(run_hbs(NULL, NULL, "keygen", "-a", ALG, "-s", tpath("u.sk"), NULL), 2);
    CHECK(!file_exists(tpath("u.sk")));
    CHECK_INT(run_hbs(NULL, NULL, "help", "nope", NULL), 2);
    CHECK_INT(run_hbs(NULL, NULL, "bench", "--threads", "0", NULL), 2);
    CHECK_INT(run_hbs(NULL, NULL, "bench", "--ops", "keygen,frob", NULL), 2);
    CHECK_INT(run_hbs(NULL, NULL, "bench", "-a", "SLH-DSA-SHA2-129f", NULL), 2);
    CHECK_INT(run_hbs(NULL, NULL, "bench", "--min-time", "-1", NULL), 2);
    CHECK_INT(run_hbs(NULL, NULL, "bench", "--gpu", "--modes", "latency,nope", NULL), 2);
    check_error_line("unknown name 'nope'");
    CHECK_INT(run_hbs(NULL, NULL, "bench", "--modes", "latency", NULL), 2);
    check_error_line("give --gpu too");

    CHECK_INT(run_hbs(NULL, out, "--help", NULL), 0);
    CHECK(file_has_prefix(out, "usage: hbs"));
    CHECK_INT(run_hbs(NULL, out, "help", "sign", NULL), 0);
    CHECK(file_has_prefix(out, "usage: hbs sign"));
    CHECK_INT(run_hbs(NULL, out, "verify", "--help", NULL), 0);
    CHECK(file_has_prefix(out, "usage: hbs verify"));
    CHECK_INT(run_hbs(NULL, out, "--version", NULL), 0);
    char *v = (char *)read_bytes(out, NULL);
    CHECK_MSG(v && strstr(v, HBS_VERSION_STRING), "--version printed %s", v ? v : "");
    free(v);
}

/* keygen, sign and verify through PEM key files. */
static void test_roundtrip_pem(void)
{
    if (!binary_present())
        return;
    const char *d = subdir("pem");
    const char *sk = in_dir(d, "sk.pem"), *pk = in_dir(d, "pk.pem"), *msg = in_dir(d, "msg");
    const char *sig = in_dir(d, "sig"), *out = in_dir(d, "out.txt");
    write_text(msg, "a message for the PEM round trip\n");

    CHECK_INT(run_hbs(NULL, NULL, "keygen", "-a", ALG, "-s", sk, "-p", pk, NULL), 0);
    CHECK_INT(file_mode(sk), 0600);
    CHECK(file_has_prefix(sk, "-----BEGIN PRIVATE KEY-----\n"));
    CHECK(file_has_prefix(pk, "-----BEGIN PUBLIC KEY-----\n"));

    /* The files decode with the library, and the secret key holds the public one. */
    size_t sklen, pklen;
    uint8_t *skb = read_bytes(sk, &sklen), *pkb = read_bytes(pk, &pklen);
    hbs_key ks, kp;
    CHECK(skb && hbs_key_decode(&ks, skb, sklen) == HBS_OK);
    CHECK(pkb && hbs_key_decode(&kp, pkb, pklen) == HBS_OK);
    CHECK_INT(ks.kind, HBS_KEY_SECRET);
    CHECK_INT(kp.kind, HBS_KEY_PUBLIC);
    CHECK_INT(ks.alg, HBS_SLHDSA_SHA2_128F);
    CHECK_INT(kp.prehash, HBS_PREHASH_NONE);
    CHECK_INT(ks.len, 64);
    CHECK_INT(kp.len, 32);
    CHECK_MEM(ks.bytes + 32, kp.bytes, 32);
    hbs_key_wipe(&ks);

    CHECK_INT(run_hbs(NULL, NULL, "sign", "-s", sk, "-m", msg, "-x", sig, NULL), 0);
    size_t siglen, msglen;
    uint8_t *s = read_bytes(sig, &siglen), *m = read_bytes(msg, &msglen);
    CHECK_INT(siglen, ALG_SIG_BYTES);
    /* The library agrees that the CLI's signature is valid. */
    CHECK(s && m &&
          hbs_slhdsa_verify(hbs_slhdsa_params_get(HBS_SLHDSA_SHA2_128F), s, siglen, m, msglen,
                            NULL, 0, kp.bytes) == HBS_OK);

    CHECK_INT(run_hbs(NULL, out, "verify", "-p", pk, "-m", msg, "-x", sig, NULL), 0);
    CHECK(file_has_prefix(out, "valid\n"));
    CHECK_INT(run_hbs(NULL, out, "verify", "-q", "-p", pk, "-m", msg, "-x", sig, NULL), 0);
    size_t outlen;
    free(read_bytes(out, &outlen));
    CHECK_INT(outlen, 0);

    /* Hedged signing (the default) differs each time; deterministic does not. */
    const char *sig2 = in_dir(d, "sig2");
    CHECK_INT(run_hbs(NULL, NULL, "sign", "-s", sk, "-m", msg, "-x", sig2, NULL), 0);
    uint8_t *s2 = read_bytes(sig2, NULL);
    CHECK(s && s2 && memcmp(s, s2, ALG_SIG_BYTES) != 0);
    free(s2);
    const char *d1 = in_dir(d, "det1"), *d2 = in_dir(d, "det2");
    CHECK_INT(run_hbs(NULL, NULL, "sign", "--deterministic", "-s", sk, "-m", msg, "-x", d1,
                      NULL), 0);
    CHECK_INT(run_hbs(NULL, NULL, "sign", "--deterministic", "-s", sk, "-m", msg, "-x", d2,
                      NULL), 0);
    uint8_t *b1 = read_bytes(d1, NULL), *b2 = read_bytes(d2, NULL);
    CHECK(b1 && b2 && memcmp(b1, b2, ALG_SIG_BYTES) == 0);
    CHECK_INT(run_hbs(NULL, NULL, "verify", "-p", pk, "-m", msg, "-x", d1, NULL), 0);
    CHECK_INT(hidden_files(d), 0);
    free(b1);
    free(b2);
    free(s);
    free(m);
    free(skb);
    free(pkb);
}

/* keygen, sign and verify with the bare FIPS 205 encodings. */
static void test_roundtrip_raw(void)
{
    if (!binary_present())
        return;
    const char *alg = "SLH-DSA-SHAKE-128f";
    const char *d = subdir("raw");
    const char *sk = in_dir(d, "sk"), *pk = in_dir(d, "pk"), *msg = in_dir(d, "msg");
    const char *sig = in_dir(d, "sig");
    write_text(msg, "raw");

    CHECK_INT(run_hbs(NULL, NULL, "keygen", "--raw", "-a", alg, "-s", sk, "-p", pk, NULL), 0);
    CHECK_INT(file_mode(sk), 0600);
    size_t sklen, pklen, siglen;
    uint8_t *skb = read_bytes(sk, &sklen), *pkb = read_bytes(pk, &pklen);
    CHECK_INT(sklen, 64);
    CHECK_INT(pklen, 32);
    CHECK(skb && pkb && memcmp(skb + 32, pkb, 32) == 0);

    CHECK_INT(run_hbs(NULL, NULL, "sign", "--raw", "-a", alg, "-s", sk, "-m", msg, "-x", sig,
                      NULL), 0);
    free(read_bytes(sig, &siglen));
    CHECK_INT(siglen, 17088);
    CHECK_INT(run_hbs(NULL, NULL, "verify", "--raw", "-a", alg, "-p", pk, "-m", msg, "-x", sig,
                      NULL), 0);
    /* --raw needs -a; -a must name the key's own set. */
    CHECK_INT(run_hbs(NULL, NULL, "sign", "--raw", "-s", sk, "-m", msg, "-x", sig, NULL), 2);
    check_error_line("--raw without -a");
    CHECK_INT(run_hbs(NULL, NULL, "verify", "--raw", "-a", "SLH-DSA-SHA2-192f", "-p", pk, "-m",
                      msg, "-x", sig, NULL), 2);
    if (skb)
        hbs_memzero(skb, sklen);
    free(skb);
    free(pkb);
}

/* '-' for stdin and stdout. */
static void test_stdio(void)
{
    if (!binary_present())
        return;
    const char *d = subdir("stdio");
    const char *sk = in_dir(d, "sk.pem"), *pk = in_dir(d, "pk.pem"), *msg = in_dir(d, "msg");
    const char *sig = in_dir(d, "sig"), *pk2 = in_dir(d, "pk2.pem");
    write_text(msg, "through pipes");

    CHECK_INT(run_hbs(NULL, sk, "keygen", "-a", ALG, "-s", "-", "-p", pk, NULL), 0);
    CHECK(file_has_prefix(sk, "-----BEGIN PRIVATE KEY-----\n"));
    CHECK(file_has_prefix(pk, "-----BEGIN PUBLIC KEY-----\n"));
    CHECK_INT(run_hbs(NULL, NULL, "keygen", "-a", ALG, "-s", "-", "-p", "-", NULL), 2);

    CHECK_INT(run_hbs(sk, sig, "sign", "-s", "-", "-m", msg, "-x", "-", NULL), 0);
    size_t siglen;
    free(read_bytes(sig, &siglen));
    CHECK_INT(siglen, ALG_SIG_BYTES);
    CHECK_INT(run_hbs(msg, NULL, "verify", "-p", pk, "-m", "-", "-x", sig, NULL), 0);
    CHECK_INT(run_hbs(pk, NULL, "verify", "-p", "-", "-m", msg, "-x", sig, NULL), 0);
    CHECK_INT(run_hbs(sig, NULL, "verify", "-p", pk, "-m", msg, "-x", "-", NULL), 0);
    CHECK_INT(run_hbs(msg, NULL, "verify", "-p", "-", "-m", "-", "-x", sig, NULL), 2);
    CHECK_INT(run_hbs(msg, NULL, "sign", "-s", "-", "-m", "-", "-x", sig, NULL), 2);

    /* A message from stdin signs like the same message from a file. */
    const char *sa = in_dir(d, "sa"), *sb = in_dir(d, "sb");
    CHECK_INT(run_hbs(msg, NULL, "sign", "--deterministic", "-s", sk, "-m", "-", "-x", sa,
                      NULL), 0);
    CHECK_INT(run_hbs(NULL, NULL, "sign", "--deterministic", "-s", sk, "-m", msg, "-x", sb,
                      NULL), 0);
    uint8_t *a = read_bytes(sa, NULL), *b = read_bytes(sb, NULL);
    CHECK(a && b && memcmp(a, b, ALG_SIG_BYTES) == 0);
    free(a);
    free(b);

    /* The public key to stdout, the secret one to a file. */
    CHECK_INT(run_hbs(NULL, pk2, "keygen", "-a", ALG, "-s", in_dir(d, "sk2.pem"), "-p", "-",
                      NULL), 0);
    CHECK(file_has_prefix(pk2, "-----BEGIN PUBLIC KEY-----\n"));
    CHECK_INT(file_mode(in_dir(d, "sk2.pem")), 0600);
}

/* keygen --seed reproduces NIST's ACVP keyGen answers (a sample across the sets). */
static void test_keygen_acvp(void)
{
    if (!binary_present())
        return;
    const char *vd = test_vectors_dir();
    char path[4096];
    if (!vd) {
        test_skip("test vectors not found (set HBS_VECTORS)");
        return;
    }
    snprintf(path, sizeof path, "%s/acvp/SLH-DSA-keyGen-FIPS205/internalProjection.json", vd);
    json *doc = load_json(path);
    if (!doc) {
        test_skip("cannot read %s", path);
        return;
    }
    /* SHA2-128s, SHAKE-128f, SHAKE-192s, SHA2-192f, SHAKE-256s, SHA2-256f in that file. */
    static const size_t picks[] = {0, 3, 5, 6, 9, 10};
    const json *groups = json_get(doc, "testGroups");
    const char *sk = tpath("acvp-kg.sk"), *pk = tpath("acvp-kg.pk"), *pem = tpath("acvp-kg.pem");
    int matched = 0;
    for (size_t i = 0; i < sizeof picks / sizeof picks[0]; i++) {
        const json *g = json_at(groups, picks[i]);
        const char *ps = json_str(json_get(g, "parameterSet"));
        const json *t = json_at(json_get(g, "tests"), i % json_len(json_get(g, "tests")));
        const char *s1 = json_str(json_get(t, "skSeed")), *s2 = json_str(json_get(t, "skPrf"));
        const char *s3 = json_str(json_get(t, "pkSeed"));
        size_t elen, plen, glen, gplen;
        uint8_t *esk = json_hex(t, "sk", &elen), *epk = json_hex(t, "pk", &plen);
        CHECK_MSG(ps && s1 && s2 && s3 && esk && epk, "malformed keyGen group %zu", picks[i]);
        if (!(ps && s1 && s2 && s3 && esk && epk)) {
            free(esk);
            free(epk);
            continue;
        }
        char seed[3 * 64 + 1];
        snprintf(seed, sizeof seed, "%s%s%s", s1, s2, s3);
        CHECK_INT(run_hbs(NULL, NULL, "keygen", "--raw", "-a", ps, "--seed", seed, "-s", sk,
                          "-p", pk, NULL), 0);
        uint8_t *gsk = read_bytes(sk, &glen), *gpk = read_bytes(pk, &gplen);
        int sk_ok = gsk && glen == elen && memcmp(gsk, esk, elen) == 0;
        int pk_ok = gpk && gplen == plen && memcmp(gpk, epk, plen) == 0;
        CHECK_MSG(sk_ok, "%s: sk differs", ps);
        CHECK_MSG(pk_ok, "%s: pk differs", ps);
        matched += sk_ok && pk_ok;
        free(gsk);
        free(gpk);

        /* The same seed through PEM: the decoded key holds the same bytes. */
        if (i == 0) {
            CHECK_INT(run_hbs(NULL, NULL, "keygen", "-a", ps, "--seed", seed, "-s", pem, "-p",
                              pk, NULL), 0);
            size_t len;
            uint8_t *b = read_bytes(pem, &len);
            hbs_key k;
            CHECK(b && hbs_key_decode(&k, b, len) == HBS_OK && k.len == elen &&
                  memcmp(k.bytes, esk, elen) == 0);
            hbs_key_wipe(&k);
            free(b);
            /* One hex digit short is the wrong length: an error, and no key file. */
            seed[strlen(seed) - 2] = '\0';
            remove(pem);
            CHECK_INT(run_hbs(NULL, NULL, "keygen", "-a", ps, "--seed", seed, "-s", pem, "-p",
                              pk, NULL), 2);
            CHECK(!file_exists(pem));
        }
        free(esk);
        free(epk);
    }
    test_note("%d/%zu ACVP keyGen vectors", matched, sizeof picks / sizeof picks[0]);
    json_free(doc);
}

/* One ACVP sigGen test through `hbs sign`; returns 1 if it matched. */
static int siggen_one(const char *ps, int deterministic, const json *t)
{
    size_t sklen, msglen, siglen, pklen;
    uint8_t *sk = json_hex(t, "sk", &sklen), *msg = json_hex(t, "message", &msglen);
    uint8_t *sig = json_hex(t, "signature", &siglen), *pk = json_hex(t, "pk", &pklen);
    const char *ctx = json_str(json_get(t, "context"));
    const char *hash = json_str(json_get(t, "hashAlg"));
    const char *rnd = json_str(json_get(t, "additionalRandomness"));
    const char *skf = tpath("acvp-sg.sk"), *pkf = tpath("acvp-sg.pk");
    const char *msgf = tpath("acvp-sg.msg"), *sigf = tpath("acvp-sg.sig");
    int ok = 0;
    if (!sk || !msg || !sig || !pk || !ctx || !hash || (!deterministic && !rnd)) {
        test_fail(__FILE__, __LINE__, "malformed sigGen test %lld",
                  json_int(json_get(t, "tcId"), -1));
        goto out;
    }
    write_bytes(skf, sk, sklen);
    write_bytes(pkf, pk, pklen);
    write_bytes(msgf, msg, msglen);
    remove(sigf);
    const char *ph_opt = strcmp(hash, "none") ? "--prehash" : NULL;
    /* Arguments after a NULL are not seen: the pre-hash pair goes last. */
    int rc = deterministic
                 ? run_hbs(NULL, NULL, "sign", "--raw", "-a", ps, "-s", skf, "-m", msgf, "-x",
                           sigf, "--context", ctx, "--deterministic", ph_opt, hash, NULL)
                 : run_hbs(NULL, NULL, "sign", "--raw", "-a", ps, "-s", skf, "-m", msgf, "-x",
                           sigf, "--context", ctx, "--randomness", rnd, ph_opt, hash, NULL);
    size_t glen;
    uint8_t *got = read_bytes(sigf, &glen);
    ok = rc == 0 && got && glen == siglen && memcmp(got, sig, siglen) == 0;
    CHECK_MSG(ok, "%s tcId %lld (%s): hbs sign exit %d, signature %s", ps,
              json_int(json_get(t, "tcId"), -1), hash, rc, got ? "differs" : "missing");
    free(got);
    CHECK_INT(run_hbs(NULL, NULL, "verify", "--raw", "-a", ps, "-p", pkf, "-m", msgf, "-x",
                      sigf, "--context", ctx, ph_opt, hash, NULL), 0);
out:
    if (sk)
        hbs_memzero(sk, sklen);
    free(sk);
    free(msg);
    free(sig);
    free(pk);
    return ok;
}

/* sign --deterministic / --randomness reproduce NIST's ACVP sigGen answers: all the f sets
 * and SHA2-128s, pure and preHash, with contexts. */
static void test_siggen_acvp(void)
{
    if (!binary_present())
        return;
    const char *vd = test_vectors_dir();
    char path[4096];
    if (!vd) {
        test_skip("test vectors not found (set HBS_VECTORS)");
        return;
    }
    snprintf(path, sizeof path, "%s/acvp/SLH-DSA-sigGen-FIPS205/internalProjection.trimmed.json",
             vd);
    json *doc = load_json(path);
    if (!doc) {
        test_skip("cannot read %s", path);
        return;
    }
    const json *groups = json_get(doc, "testGroups");
    int done = 0, matched = 0;
    for (size_t gi = 0; gi < json_len(groups); gi++) {
        const json *g = json_at(groups, gi);
        const char *ps = json_str(json_get(g, "parameterSet"));
        const char *iface = json_str(json_get(g, "signatureInterface"));
        if (!ps || !iface || strcmp(iface, "external") != 0)
            continue;
        int fast = ps[strlen(ps) - 1] == 'f';
        int det = json_is_true(json_get(g, "deterministic"));
        /* s-set signing is slow: one s set, deterministic only. */
        if (!fast && !(det && strcmp(ps, "SLH-DSA-SHA2-128s") == 0))
            continue;
        const json *tests = json_get(g, "tests");
        for (size_t ti = 0; ti < json_len(tests); ti++) {
            matched += siggen_one(ps, det, json_at(tests, ti));
            done++;
        }
    }
    CHECK_MSG(done >= 26, "only %d sigGen tests found", done);
    test_note("%d/%d ACVP sigGen signatures", matched, done);
    json_free(doc);
}

/* The exit status of verify: 0 valid, 1 invalid, 2 error. */
static void test_verify_exit_codes(void)
{
    if (!binary_present())
        return;
    const char *d = subdir("verify");
    const char *sk = in_dir(d, "sk.pem"), *pk = in_dir(d, "pk.pem"), *msg = in_dir(d, "msg");
    const char *sig = in_dir(d, "sig"), *sigph = in_dir(d, "sigph"), *bad = in_dir(d, "bad");
    const char *rawsk = in_dir(d, "sk.bin"), *rawpk = in_dir(d, "pk.bin");
    write_text(msg, "verify me");
    CHECK_INT(run_hbs(NULL, NULL, "keygen", "-a", ALG, "-s", sk, "-p", pk, NULL), 0);
    CHECK_INT(run_hbs(NULL, NULL, "keygen", "--raw", "-a", ALG, "-s", rawsk, "-p", rawpk, NULL), 0);
    CHECK_INT(run_hbs(NULL, NULL, "sign", "-s", sk, "-m", msg, "-x", sig, "--context", "0102",
                      NULL), 0);
    CHECK_INT(run_hbs(NULL, NULL, "sign", "-s", sk, "-m", msg, "-x", sigph, "--prehash",
                      "SHA2-256", NULL), 0);

    size_t siglen;
    uint8_t *s = read_bytes(sig, &siglen);
    CHECK_INT(siglen, ALG_SIG_BYTES);
    if (!s || siglen != ALG_SIG_BYTES) {
        free(s);
        return;
    }
#define VERIFY(sigfile, ...) run_hbs(NULL, NULL, "verify", "-q", "-p", pk, "-m", msg, "-x", \
                                     sigfile, __VA_ARGS__, NULL)
    CHECK_INT(VERIFY(sig, "--context", "0102"), 0);

    /* Invalid signatures: status 1. */
    s[siglen / 3] ^= 0x10;
    write_bytes(bad, s, siglen);
    s[siglen / 3] ^= 0x10;
    CHECK_INT(VERIFY(bad, "--context", "0102"), 1);
    write_bytes(bad, s, siglen - 1);
    CHECK_INT(VERIFY(bad, "--context", "0102"), 1);
    uint8_t *longer = malloc(siglen + 1);
    if (longer) {
        memcpy(longer, s, siglen);
        longer[siglen] = 0;
        write_bytes(bad, longer, siglen + 1);
        CHECK_INT(VERIFY(bad, "--context", "0102"), 1);
        free(longer);
    }
    write_bytes(bad, "", 0);
    CHECK_INT(VERIFY(bad, "--context", "0102"), 1);
    CHECK_INT(VERIFY(sig, "--context", "0103"), 1);
    /* Hex in either case. */
    const char *sigcase = in_dir(d, "sigcase");
    CHECK_INT(run_hbs(NULL, NULL, "sign", "-s", sk, "-m", msg, "-x", sigcase, "--context",
                      "09afAF", NULL), 0);
    CHECK_INT(VERIFY(sigcase, "--context", "09AFaf"), 0);
    CHECK_INT(VERIFY(sigcase, "--context", "09afae"), 1);
    CHECK_INT(VERIFY(sig, "--context", ""), 1);
    CHECK_INT(VERIFY(sig, "--prehash", "SHA2-256", "--context", "0102"), 1);
    CHECK_INT(VERIFY(sigph, "--prehash", "SHA2-256"), 0);
    CHECK_INT(VERIFY(sigph, "--prehash", "SHA2-512"), 1);
    CHECK_INT(VERIFY(sigph, "--prehash", "SHA3-256"), 1);
    CHECK_INT(VERIFY(sigph, "--context", ""), 1);
    CHECK_INT(run_hbs(NULL, NULL, "verify", "-p", rawpk, "--raw", "-a", ALG, "-m", msg, "-x",
                      sig, "--context", "0102", NULL), 1);

    /* Errors: status 2, one line on stderr. */
    CHECK_INT(VERIFY(in_dir(d, "missing"), "--context", "0102"), 2);
    check_error_line("missing signature file");
    CHECK_INT(run_hbs(NULL, NULL, "verify", "-p", in_dir(d, "missing"), "-m", msg, "-x", sig,
                      NULL), 2);
    check_error_line("missing key file");
    CHECK_INT(run_hbs(NULL, NULL, "verify", "-p", pk, "-m", in_dir(d, "missing"), "-x", sig,
                      NULL), 2);
    CHECK_INT(VERIFY(sig, "--context", "01x2"), 2);
    check_error_line("bad hex");
    CHECK_INT(VERIFY(sig, "--context", "010"), 2);
    char longctx[2 * 256 + 1];
    memset(longctx, 'a', 2 * 256);
    longctx[2 * 256] = '\0';
    CHECK_INT(VERIFY(sig, "--context", longctx), 2);
    CHECK_INT(VERIFY(sig, "--prehash", "MD5"), 2);
    CHECK_INT(VERIFY(sig, "-a", "SLH-DSA-SHAKE-128f"), 2); /* -a contradicts the key */

    const char *kf = in_dir(d, "badkey");
    write_text(kf, "-----BEGIN PUBLIC KEY-----\nbm90IGEga2V5\n-----END PUBLIC KEY-----\n");
    CHECK_INT(run_hbs(NULL, NULL, "verify", "-p", kf, "-m", msg, "-x", sig, NULL), 2);
    check_error_line("garbage PEM");
    write_text(kf, "hello, I am not a key at all\n");
    CHECK_INT(run_hbs(NULL, NULL, "verify", "-p", kf, "-m", msg, "-x", sig, NULL), 2);
    write_bytes(kf, "", 0);
    CHECK_INT(run_hbs(NULL, NULL, "verify", "-p", kf, "-m", msg, "-x", sig, NULL), 2);
    size_t len;
    uint8_t *k = read_bytes(pk, &len);
    if (k) {
        write_bytes(kf, k, len / 2);
        CHECK_INT(run_hbs(NULL, NULL, "verify", "-p", kf, "-m", msg, "-x", sig, NULL), 2);
        check_error_line("truncated PEM key");
        free(k);
    }
    k = read_bytes(rawpk, &len);
    if (k) {
        write_bytes(kf, k, len - 1);
        CHECK_INT(run_hbs(NULL, NULL, "verify", "--raw", "-a", ALG, "-p", kf, "-m", msg, "-x",
                          sig, NULL), 2);
        check_error_line("truncated raw key");
        free(k);
    }
    /* A secret key where a public key belongs. */
    CHECK_INT(run_hbs(NULL, NULL, "verify", "-p", sk, "-m", msg, "-x", sig, NULL), 2);
    CHECK_INT(run_hbs(NULL, NULL, "verify", "--raw", "-a", "SLH-DSA-SHA2-129f", "-p", rawpk,
                      "-m", msg, "-x", sig, NULL), 2);
    check_error_line("unknown algorithm");
    CHECK_INT(run_hbs(NULL, NULL, "verify", "--raw", "-p", rawpk, "-m", msg, "-x", sig, NULL), 2);
#undef VERIFY
    free(s);
}

/* keygen --prehash writes a HashSLH-DSA OID, and the key then signs only with that hash. */
static void test_prehash_bound_key(void)
{
    if (!binary_present())
        return;
    const char *d = subdir("bound");
    const char *sk = in_dir(d, "sk.pem"), *pk = in_dir(d, "pk.pem"), *msg = in_dir(d, "msg");
    const char *sig = in_dir(d, "sig"), *rawpk = in_dir(d, "pk.bin");
    write_text(msg, "pre-hashed");
    remove(sk); /* the suite may run once per hash backend in one scratch folder */
    remove(pk);
    CHECK_INT(run_hbs(NULL, NULL, "keygen", "-a", ALG, "--prehash", "SHA2-512", "-s", sk, "-p",
                      pk, NULL), 2); /* RFC 9909 binds SHA2-256 to the 128-bit SHA2 sets */
    CHECK(!file_exists(sk));
    CHECK_INT(run_hbs(NULL, NULL, "keygen", "-a", ALG, "--raw", "--prehash", "SHA2-256", "-s",
                      sk, "-p", pk, NULL), 2);
    CHECK_INT(run_hbs(NULL, NULL, "keygen", "-a", ALG, "--prehash", "SHA2-256", "-s", sk, "-p",
                      pk, NULL), 0);
    size_t len;
    uint8_t *b = read_bytes(pk, &len);
    hbs_key k;
    CHECK(b && hbs_key_decode(&k, b, len) == HBS_OK);
    free(b);
    CHECK_INT(k.prehash, HBS_PREHASH_SHA2_256);
    write_bytes(rawpk, k.bytes, k.len);

    /* Without --prehash the key's own hash is used: the raw key (no OID) confirms it. */
    CHECK_INT(run_hbs(NULL, NULL, "sign", "-s", sk, "-m", msg, "-x", sig, NULL), 0);
    CHECK_INT(run_hbs(NULL, NULL, "verify", "-p", pk, "-m", msg, "-x", sig, NULL), 0);
    CHECK_INT(run_hbs(NULL, NULL, "verify", "-p", pk, "-m", msg, "-x", sig, "--prehash",
                      "SHA2-256", NULL), 0);
    CHECK_INT(run_hbs(NULL, NULL, "verify", "--raw", "-a", ALG, "-p", rawpk, "-m", msg, "-x",
                      sig, "--prehash", "SHA2-256", NULL), 0);
    CHECK_INT(run_hbs(NULL, NULL, "verify", "--raw", "-a", ALG, "-p", rawpk, "-m", msg, "-x",
                      sig, NULL), 1);
    /* A different hash contradicts the key: an error, not an invalid signature. */
    CHECK_INT(run_hbs(NULL, NULL, "verify", "-p", pk, "-m", msg, "-x", sig, "--prehash",
                      "SHA2-512", NULL), 2);
    check_error_line("conflicting --prehash");
    remove(sig);
    CHECK_INT(run_hbs(NULL, NULL, "sign", "-s", sk, "-m", msg, "-x", sig, "--prehash",
                      "SHA3-256", NULL), 2);
    CHECK(!file_exists(sig));
}

/* sign refuses a secret key whose root does not match its seeds. */
static void test_corrupt_secret_key(void)
{
    if (!binary_present())
        return;
    const char *d = subdir("corrupt");
    const char *sk = in_dir(d, "sk"), *pk = in_dir(d, "pk"), *msg = in_dir(d, "msg");
    const char *sig = in_dir(d, "sig"), *pem = in_dir(d, "sk.pem");
    write_text(msg, "m");
    CHECK_INT(run_hbs(NULL, NULL, "keygen", "--raw", "-a", ALG, "-s", sk, "-p", pk, NULL), 0);
    size_t len;
    uint8_t *b = read_bytes(sk, &len);
    CHECK_INT(len, 64);
    if (!b || len != 64) {
        free(b);
        return;
    }
    static const size_t flips[] = {0, 20, 40, 63}; /* SK.seed, SK.prf, PK.seed, PK.root */
    for (size_t i = 0; i < 4; i++) {
        /* SK.prf only affects signatures, not the root: a key with it changed is still
         * consistent, and signs. */
        int want = flips[i] >= 16 && flips[i] < 32 ? 0 : 2;
        b[flips[i]] ^= 1;
        write_bytes(sk, b, len);
        b[flips[i]] ^= 1;
        remove(sig);
        CHECK_MSG(run_hbs(NULL, NULL, "sign", "--raw", "-a", ALG, "-s", sk, "-m", msg, "-x",
                          sig, NULL) == want,
                  "byte %zu of the secret key flipped: exit status should be %d", flips[i],
                  want);
        CHECK(file_exists(sig) == (want == 0));
    }
    /* The same through a PEM file. */
    hbs_key k;
    memset(&k, 0, sizeof k);
    k.scheme = HBS_SCHEME_SLHDSA;
    k.kind = HBS_KEY_SECRET;
    k.alg = HBS_SLHDSA_SHA2_128F;
    k.prehash = HBS_PREHASH_NONE;
    k.len = len;
    memcpy(k.bytes, b, len);
    k.bytes[len - 1] ^= 0x80;
    char text[HBS_KEY_PEM_MAX];
    size_t tlen = sizeof text;
    CHECK(hbs_key_encode_pem(&k, text, &tlen) == HBS_OK);
    write_bytes(pem, text, tlen);
    remove(sig);
    CHECK_INT(run_hbs(NULL, NULL, "sign", "-s", pem, "-m", msg, "-x", sig, NULL), 2);
    check_error_line("corrupt secret key");
    CHECK(!file_exists(sig));
    hbs_key_wipe(&k);
    hbs_memzero(b, len);
    free(b);
}

/* Key files: mode 0600 whatever the umask, written whole or not at all. */
static void test_file_safety(void)
{
    if (!binary_present())
        return;
    const char *d = subdir("files");
    const char *sk = in_dir(d, "sk.pem"), *pk = in_dir(d, "pk.pem");
    const char *nowhere = in_dir(d, "no/such/folder/key.pem");

    mode_t old = umask(0);
    int rc = run_hbs(NULL, NULL, "keygen", "-a", ALG, "-s", sk, "-p", pk, NULL);
    umask(old);
    CHECK_INT(rc, 0);
    CHECK_INT(file_mode(sk), 0600);
    CHECK_INT(file_mode(pk), 0666);

    /* Overwriting a readable file still yields mode 0600. */
    chmod(sk, 0644);
    CHECK_INT(run_hbs(NULL, NULL, "keygen", "-a", ALG, "-s", sk, "-p", pk, NULL), 0);
    CHECK_INT(file_mode(sk), 0600);

    /* If one file cannot be written, neither is. */
    const char *sk2 = in_dir(d, "sk2.pem"), *pk2 = in_dir(d, "pk2.pem");
    CHECK_INT(run_hbs(NULL, NULL, "keygen", "-a", ALG, "-s", sk2, "-p", nowhere, NULL), 2);
    check_error_line("unwritable public key");
    CHECK(!file_exists(sk2));
    CHECK_INT(run_hbs(NULL, NULL, "keygen", "-a", ALG, "-s", nowhere, "-p", pk2, NULL), 2);
    CHECK(!file_exists(pk2));
    /* A folder in the way fails only at the final rename, after both files are written. */
    const char *sub = subdir("files/in-the-way");
    CHECK_INT(run_hbs(NULL, NULL, "keygen", "-a", ALG, "-s", sub, "-p", pk2, NULL), 2);
    CHECK(!file_exists(pk2));
    CHECK_INT(run_hbs(NULL, NULL, "keygen", "-a", ALG, "-s", sk2, "-p", sub, NULL), 2);
    CHECK(!file_exists(sk2));
    write_text(in_dir(d, "msg"), "m");
    CHECK_INT(run_hbs(NULL, NULL, "sign", "-s", sk, "-m", in_dir(d, "msg"), "-x", nowhere,
                      NULL), 2);
    CHECK_INT(hidden_files(d), 0);
}

/* Every number in a JSON text that follows "KEY": (json.h has no accessor for fractions). */
static size_t numbers_of(const char *text, const char *key, double *out, size_t max)
{
    char pat[64];
    size_t n = 0;
    snprintf(pat, sizeof pat, "\"%s\"", key);
    for (const char *p = strstr(text, pat); p && n < max; p = strstr(p + 1, pat)) {
        p += strlen(pat);
        while (*p == ' ' || *p == ':')
            p++;
        char *end;
        out[n] = strtod(p, &end);
        if (end != p)
            n++;
    }
    return n;
}

/* Checks a bench --json file: one record for each operation in want_ops, with `threads`
 * library threads (0: any), `workers` callers and batches of `batch`. */
static void check_bench_json(const char *path, const char *want_ops, long long threads,
                             long long workers, long long batch)
{
    size_t len;
    char *text = (char *)read_bytes(path, &len);
    json *doc = text ? json_parse(text, len) : NULL;
    CHECK_MSG(doc != NULL, "%s is not valid JSON", path);
    if (!doc) {
        free(text);
        return;
    }
    static const char *const ops[3] = {"keygen", "sign", "verify"};
    int seen[3] = {0, 0, 0};
    size_t want_records = 0;
    for (int o = 0; o < 3; o++)
        want_records += strstr(want_ops, ops[o]) != NULL;
    CHECK_INT(json_len(doc), want_records);
    for (size_t i = 0; i < json_len(doc); i++) {
        const json *r = json_at(doc, i);
        const char *alg = json_str(json_get(r, "alg")), *op = json_str(json_get(r, "op"));
        const char *backend = json_str(json_get(r, "backend"));
        CHECK(alg && strcmp(alg, ALG) == 0);
        CHECK(backend && *backend);
        if (threads)
            CHECK_INT(json_int(json_get(r, "threads"), -1), threads);
        else
            CHECK(json_int(json_get(r, "threads"), -1) >= 1);
        CHECK_INT(json_int(json_get(r, "workers"), -1), workers);
        CHECK_INT(json_int(json_get(r, "batch"), -1), batch);
        CHECK(json_num(json_get(r, "hashes_per_op"), 0) > 1000);
        CHECK(json_num(json_get(r, "hash_efficiency"), -1) > 0);
        for (int o = 0; o < 3; o++)
            if (op && strcmp(op, ops[o]) == 0)
                seen[o]++;
        CHECK(json_get(r, "median_ms") && json_get(r, "min_ms") && json_get(r, "max_ms") &&
              json_get(r, "ops_per_s") && !json_str(json_get(r, "median_ms")));
    }
    for (int o = 0; o < 3; o++)
        CHECK_MSG(seen[o] == (strstr(want_ops, ops[o]) != NULL), "%d %s records", seen[o],
                  ops[o]);

    double med[8], mn[8], mx[8], ops_s[8];
    size_t n1 = numbers_of(text, "median_ms", med, 8), n2 = numbers_of(text, "min_ms", mn, 8);
    size_t n3 = numbers_of(text, "max_ms", mx, 8), n4 = numbers_of(text, "ops_per_s", ops_s, 8);
    CHECK(n1 == want_records && n2 == n1 && n3 == n1 && n4 == n1);
    for (size_t i = 0; i < n1 && i < n2 && i < n3 && i < n4; i++) {
        CHECK_MSG(mn[i] > 0 && mn[i] <= med[i] && med[i] <= mx[i],
                  "record %zu: min %g, median %g, max %g", i, mn[i], med[i], mx[i]);
        CHECK_MSG(ops_s[i] > 0, "record %zu: ops_per_s %g", i, ops_s[i]);
    }
    json_free(doc);
    free(text);
}

static void test_bench_json(void)
{
    if (!binary_present())
        return;
    const char *j = tpath("bench.json"), *out = tpath("bench.txt");
    CHECK_INT(run_hbs(NULL, out, "bench", "-a", ALG, "--iterations", "2", "--json", j, NULL), 0);
    check_bench_json(j, "keygen,sign,verify", 0, 1, 1);
    char *table = (char *)read_bytes(out, NULL);
    CHECK(table && strstr(table, "median ms") && strstr(table, "backend: CPU"));
    free(table);

    remove(j);
    CHECK_INT(run_hbs(NULL, NULL, "bench", "-a", ALG, "--ops", "sign", "--workers", "2",
                      "--iterations", "2", "--json", j, NULL), 0);
    check_bench_json(j, "sign", 1, 2, 1); /* several workers: one library thread each */
    remove(j);
    CHECK_INT(run_hbs(NULL, NULL, "bench", "-a", ALG, "--ops", "keygen,verify", "--threads",
                      "3", "--iterations", "2", "--json", j, NULL), 0);
    check_bench_json(j, "keygen,verify", 3, 1, 1);
    remove(j);
    CHECK_INT(run_hbs(NULL, NULL, "bench", "-a", ALG, "--ops", "sign,verify", "--batch", "3",
                      "--threads", "2", "--iterations", "2", "--json", j, NULL), 0);
    check_bench_json(j, "sign,verify", 2, 1, 3);

    /* --json - puts the JSON alone on stdout. */
    CHECK_INT(run_hbs(NULL, out, "bench", "-a", ALG, "--ops", "verify", "--min-time", "0",
                      "--json", "-", NULL), 0);
    size_t len;
    char *text = (char *)read_bytes(out, &len);
    json *doc = text ? json_parse(text, len) : NULL;
    CHECK_MSG(doc && json_len(doc) == 1, "bench --json - did not print one JSON record");
    json_free(doc);
    free(text);
}

/* bench --stateful --json: each key generation's hashes_per_op is the hash work of the first
 * tree of every layer, as ../shared/tools/hashcount.py counts it (the constant prefix blocks
 * precomputed). hashcount.py prints 2^h (leaf + one node) for the SHA-256 sets: XMSS_10
 * 4,665,344 and LMS H5/W4 35,488, one node (6 and 2) more than a tree's 2^h - 1 inner
 * nodes. The other families, worked by hand from RFC 8391, RFC 8554 and SP 800-208:
 *   XMSS SHAKE128 n = 32 (rate 168): PRF 1, PRF_keygen 1, F 2 + 1, H 3 + 1 permutations;
 *     1024 (67 (1 + 15 x 3) + 66 x 4) + 1023 x 4 = 3,430,396
 *   XMSS SHA-512 n = 64: PRF 1, PRF_keygen 1 (SK_SEED's block ahead), F 2 + 2, H 3 + 3;
 *     1024 (131 (1 + 15 x 4) + 130 x 6) + 1023 x 6 = 8,987,642
 *   XMSS SHA-256/192 (toByte(x, 4): no block is constant): PRF 2, PRF_keygen 2, F 4 + 1,
 *     H 6 + 2; 1024 (51 (2 + 15 x 5) + 50 x 8) + 1023 x 8 = 4,439,032
 *   LMS SHAKE M32 H5/W4 (rate 136): 32 (67 x 16 + 16 (2,167 bytes) + 1) + 31 = 34,879
 *   LMS SHA-256/192 M24 H5/W4 (p = 51): 32 (51 x 16 + 20 + 1) + 31 x 2 = 26,846 */
static void test_bench_stateful_model(void)
{
    if (!binary_present())
        return;
    static const struct {
        const char *alg;
        double hashes;
    } want[] = {
        {"XMSS-SHA2_10_256", 4665344 - 6},
        {"XMSSMT-SHA2_20/2_256", 2 * (4665344 - 6)},
        {"LMS_SHA256_M32_H5/LMOTS_SHA256_N32_W4", 35488 - 2},
        {"LMS_SHA256_M32_H5/LMOTS_SHA256_N32_W4,LMS_SHA256_M32_H5/LMOTS_SHA256_N32_W4",
         2 * (35488 - 2)},
        {"XMSS-SHAKE_10_256", 3430396},
        {"XMSS-SHA2_10_512", 8987642},
        {"XMSS-SHA2_10_192", 4439032},
        {"LMS_SHAKE_M32_H5/LMOTS_SHAKE_N32_W4", 34879},
        {"LMS_SHA256_M24_H5/LMOTS_SHA256_N24_W4", 26846},
    };
    const size_t nw = sizeof want / sizeof want[0];
    const char *j = tpath("bench-stateful.json");
    const char *argv[64];
    size_t a = 0;
    argv[a++] = "bench";
    argv[a++] = "--stateful";
    argv[a++] = "--ops";
    argv[a++] = "keygen";
    argv[a++] = "--iterations";
    argv[a++] = "1";
    argv[a++] = "--json";
    argv[a++] = j;
    for (size_t i = 0; i < nw; i++) {
        argv[a++] = "-a";
        argv[a++] = want[i].alg;
    }
    argv[a] = NULL;
    CHECK_INT(test_run_hbs(NULL, NULL, stderr_path(), argv, a), 0);
    size_t len;
    char *text = (char *)read_bytes(j, &len);
    json *doc = text ? json_parse(text, len) : NULL;
    CHECK_MSG(doc && json_len(doc) == nw, "%s: want %zu keygen records", j, nw);
    for (size_t i = 0; doc && i < json_len(doc) && i < nw; i++) {
        const json *r = json_at(doc, i);
        const char *alg = json_str(json_get(r, "alg")), *op = json_str(json_get(r, "op"));
        CHECK(alg && strcmp(alg, want[i].alg) == 0 && op && strcmp(op, "keygen") == 0);
        const double h = json_num(json_get(r, "hashes_per_op"), -1);
        CHECK_MSG(h == want[i].hashes, "%s: hashes_per_op %.0f, want %.0f", want[i].alg, h,
                  want[i].hashes);
    }
    json_free(doc);
    free(text);
}

/* The demo runs every parameter set and says which backend ran. */
static void test_demo(void)
{
    if (!binary_present())
        return;
    const char *out = tpath("demo.txt");
    CHECK_INT(run_hbs(NULL, out, "demo", NULL), 0);
    char *text = (char *)read_bytes(out, NULL);
    CHECK(text != NULL);
    if (!text)
        return;
    CHECK(strstr(text, "backend: CPU") != NULL);
    CHECK(strstr(text, "GPU: ") != NULL);
    for (int i = 0; i < HBS_SLHDSA_NUM_PARAMS; i++) {
        char row[64];
        snprintf(row, sizeof row, "\n%s ", set_names[i]);
        const char *line = strstr(text, row);
        const char *eol = line ? strchr(line + 1, '\n') : NULL;
        const char *ok = line ? strstr(line, "ok") : NULL;
        CHECK_MSG(line && ok && (!eol || ok < eol), "no passing demo row for %s", set_names[i]);
    }
    /* the stateful part: at least one LMS, one HSS, one XMSS and one XMSS^MT row, all ok */
    {
        static const char *const families[] = {"\nLMS_", "/LMOTS_SHA256_N32_W8,LMS_",
                                               "\nXMSS-", "\nXMSSMT-"};
        for (size_t f = 0; f < sizeof families / sizeof families[0]; f++)
            CHECK_MSG(strstr(text, families[f]) != NULL, "no demo row like '%s'",
                      families[f] + (families[f][0] == '\n'));
        for (const char *line = strstr(text, "\nLMS_"); line; line = strchr(line + 1, '\n')) {
            const char *eol = strchr(line + 1, '\n');
            if (strncmp(line + 1, "LMS_", 4) && strncmp(line + 1, "XMSS", 4))
                continue;
            const char *ok = strstr(line, "ok: verified");
            CHECK_MSG(ok && (!eol || ok < eol), "stateful demo row failed: %.60s", line + 1);
        }
    }
    free(text);
}

/* ---- stateful keys (LMS/HSS, XMSS/XMSS^MT) --------------------------------------------- */

static const char *const stateful_algs[] = {
    "LMS_SHA256_M32_H5/LMOTS_SHA256_N32_W8",
    "LMS_SHA256_M24_H5/LMOTS_SHA256_N24_W4,LMS_SHAKE_M32_H5/LMOTS_SHAKE_N32_W2",
    "XMSS-SHA2_10_256",
    "XMSSMT-SHA2_20/4_256",
};

/* The value of "key": N in the JSON `hbs key info --json` printed to path. */
static long long info_field(const char *path, const char *key)
{
    json *j = load_json(path);
    const json *v = j ? json_get(j, key) : NULL;
    long long x = v ? (long long)json_num(v, -1) : -1;
    json_free(j);
    return x;
}

/* keygen, sign, verify, key info / public, for each family. */
static void test_stateful_roundtrip(void)
{
    if (!binary_present())
        return;
    for (size_t i = 0; i < sizeof stateful_algs / sizeof stateful_algs[0]; i++) {
        char dname[8];
        snprintf(dname, sizeof dname, "sf%zu", i);
        const char *alg = stateful_algs[i], *dir = fresh_dir(dname);
        const char *st = in_dir(dir, "key.state"), *pub = in_dir(dir, "key.pub");
        const char *msg = in_dir(dir, "msg"), *sig = in_dir(dir, "sig"), *sig2 = in_dir(dir, "sig2");
        const char *info = in_dir(dir, "info.json"), *pub2 = in_dir(dir, "pub2");
        hbs_key k;
        size_t len;
        uint8_t *b;
        CHECK_INT(run_hbs(NULL, NULL, "keygen", "-a", alg, "-s", st, "-p", pub, NULL), 0);
        CHECK_INT(file_mode(st), 0600);
        /* the public key is an RFC 9802 SubjectPublicKeyInfo */
        b = read_bytes(pub, &len);
        CHECK(b && file_has_prefix(pub, "-----BEGIN PUBLIC KEY-----"));
        CHECK(b && hbs_key_decode(&k, b, len) == HBS_OK && k.kind == HBS_KEY_PUBLIC &&
              k.scheme == (i < 2 ? HBS_SCHEME_HSS : i == 2 ? HBS_SCHEME_XMSS : HBS_SCHEME_XMSSMT));
        free(b);
        /* never overwritten */
        CHECK_INT(run_hbs(NULL, NULL, "keygen", "-a", alg, "-s", st, "-p", pub2, NULL), 2);
        check_error_line("keygen over an existing state file");
        write_text(msg, "a message for a stateful key\n");
        CHECK_INT(run_hbs(NULL, NULL, "sign", "-s", st, "-m", msg, "-x", sig, NULL), 0);
        CHECK_INT(run_hbs(NULL, NULL, "sign", "-s", st, "-m", msg, "-x", sig2, "--reserve", "4", NULL), 0);
        CHECK_INT(run_hbs(NULL, NULL, "verify", "-p", pub, "-m", msg, "-x", sig, NULL), 0);
        CHECK_INT(run_hbs(NULL, NULL, "verify", "-p", pub, "-m", msg, "-x", sig2, NULL), 0);
        /* two signatures of one message under a stateful key differ (two indices) */
        uint8_t *s1 = read_bytes(sig, &len), *s2 = read_bytes(sig2, NULL);
        CHECK(s1 && s2 && memcmp(s1, s2, len) != 0);
        /* a flipped bit anywhere is invalid (exit 1), as is a signature one byte short */
        if (s1) {
            s1[len / 2] ^= 1;
            write_bytes(sig2, s1, len);
            CHECK_INT(run_hbs(NULL, NULL, "verify", "-p", pub, "-m", msg, "-x", sig2, NULL), 1);
            s1[len / 2] ^= 1;
            write_bytes(sig2, s1, len - 1);
            CHECK_INT(run_hbs(NULL, NULL, "verify", "-p", pub, "-m", msg, "-x", sig2, NULL), 1);
        }
        free(s1);
        free(s2);
        write_text(msg, "another message\n");
        CHECK_INT(run_hbs(NULL, NULL, "verify", "-p", pub, "-m", msg, "-x", sig, NULL), 1);
        /* the reservation of 4 at index 1 set indices 1..4 aside: the next is 5 */
        CHECK_INT(run_hbs(NULL, info, "key", "info", "-s", st, "--json", NULL), 0);
        CHECK_INT(info_field(info, "next_index"), 5);
        CHECK(info_field(info, "remaining") == info_field(info, "total") - 5);
        CHECK_INT(run_hbs(NULL, NULL, "key", "public", "-s", st, "-p", pub2, NULL), 0);
        uint8_t *p1 = read_bytes(pub, &len), *p2 = read_bytes(pub2, NULL);
        CHECK(p1 && p2 && memcmp(p1, p2, len) == 0);
        free(p1);
        free(p2);
        /* SLH-DSA-only options are refused, not ignored */
        CHECK_INT(run_hbs(NULL, NULL, "sign", "-s", st, "-m", msg, "-x", sig, "--context", "00", NULL), 2);
        CHECK_INT(run_hbs(NULL, NULL, "verify", "-p", pub, "-m", msg, "-x", sig, "--prehash", "SHA2-256", NULL), 2);
    }
}

/* A raw public key with -a, and a public key of another set refused. */
static void test_stateful_raw_and_exhaustion(void)
{
    if (!binary_present())
        return;
    const char *dir = fresh_dir("sfx"), *st = in_dir(dir, "k.state"), *pub = in_dir(dir, "k.raw");
    const char *msg = in_dir(dir, "m"), *sig = in_dir(dir, "s"), *info = in_dir(dir, "i.json");
    const char *alg = stateful_algs[0];
    char name[32];
    CHECK_INT(run_hbs(NULL, NULL, "keygen", "-a", alg, "-s", st, "-p", pub, "--raw", NULL), 0);
    write_text(msg, "m");
    for (int i = 0; i < 32; i++) {
        snprintf(name, sizeof name, "s%d", i);
        CHECK_INT(run_hbs(NULL, NULL, "sign", "-s", st, "-m", msg, "-x", in_dir(dir, name), NULL), 0);
    }
    CHECK_INT(run_hbs(NULL, NULL, "verify", "-p", pub, "--raw", "-a", alg, "-m", msg, "-x",
                      in_dir(dir, "s31"), NULL), 0);
    CHECK_INT(run_hbs(NULL, NULL, "verify", "-p", pub, "--raw", "-a", "XMSS-SHA2_10_256", "-m",
                      msg, "-x", in_dir(dir, "s31"), NULL), 2);
    /* all 32 used: the 33rd is refused with a clear message and no signature file */
    CHECK_INT(run_hbs(NULL, NULL, "sign", "-s", st, "-m", msg, "-x", sig, NULL), 2);
    check_error_line("exhausted key");
    char *e = (char *)read_bytes(stderr_path(), NULL);
    CHECK_MSG(e && strstr(e, "exhausted"), "stderr: %s", e ? e : "");
    free(e);
    CHECK(!file_exists(sig));
    CHECK_INT(run_hbs(NULL, info, "key", "info", "-s", st, "--json", NULL), 0);
    CHECK_INT(info_field(info, "remaining"), 0);
}

/* key split: two signers, one public key, disjoint indices. */
static void test_stateful_split(void)
{
    if (!binary_present())
        return;
    const char *dir = fresh_dir("sfs"), *st = in_dir(dir, "a.state"), *part = in_dir(dir, "b.state");
    const char *pub = in_dir(dir, "pub"), *msg = in_dir(dir, "m"), *info = in_dir(dir, "i.json");
    CHECK_INT(run_hbs(NULL, NULL, "keygen", "-a", "XMSS-SHA2_10_256", "-s", st, "-p", pub, NULL), 0);
    /* the traversal memory setting: a valid one signs; an invalid one is refused */
    CHECK_INT(run_hbs(NULL, NULL, "keygen", "-a", "XMSS-SHA2_10_256", "-s", in_dir(dir, "k4"),
                      "-p", in_dir(dir, "p4"), "--traversal", "3", NULL), 2);
    CHECK(!file_exists(in_dir(dir, "k4")));
    CHECK_INT(run_hbs(NULL, NULL, "keygen", "-a", "XMSS-SHA2_10_256", "-s", in_dir(dir, "k4"),
                      "-p", in_dir(dir, "p4"), "--traversal", "4", NULL), 0);
    write_text(msg, "m");
    CHECK_INT(run_hbs(NULL, NULL, "sign", "-s", in_dir(dir, "k4"), "-m", msg, "-x", in_dir(dir, "s4"), NULL), 0);
    CHECK_INT(run_hbs(NULL, NULL, "verify", "-p", in_dir(dir, "p4"), "-m", msg, "-x", in_dir(dir, "s4"), NULL), 0);
    CHECK_INT(run_hbs(NULL, NULL, "key", "split", "-s", st, "-o", part, "-n", "2000", NULL), 2);
    CHECK_INT(run_hbs(NULL, NULL, "key", "split", "-s", st, "-o", part, "-n", "256", NULL), 0);
    CHECK_INT(run_hbs(NULL, NULL, "key", "split", "-s", st, "-o", part, "-n", "1", NULL), 2);
    CHECK_INT(run_hbs(NULL, info, "key", "info", "-s", st, "--json", NULL), 0);
    CHECK_INT(info_field(info, "end"), 768);
    CHECK_INT(run_hbs(NULL, info, "key", "info", "-s", part, "--json", NULL), 0);
    CHECK_INT(info_field(info, "next_index"), 768);
    CHECK_INT(info_field(info, "end"), 1024);
    write_text(msg, "m");
    CHECK_INT(run_hbs(NULL, NULL, "sign", "-s", part, "-m", msg, "-x", in_dir(dir, "sb"), NULL), 0);
    CHECK_INT(run_hbs(NULL, NULL, "sign", "-s", st, "-m", msg, "-x", in_dir(dir, "sa"), NULL), 0);
    CHECK_INT(run_hbs(NULL, NULL, "verify", "-p", pub, "-m", msg, "-x", in_dir(dir, "sa"), NULL), 0);
    CHECK_INT(run_hbs(NULL, NULL, "verify", "-p", pub, "-m", msg, "-x", in_dir(dir, "sb"), NULL), 0);
    /* the index is the signature's first four bytes */
    uint8_t *a = read_bytes(in_dir(dir, "sa"), NULL), *b = read_bytes(in_dir(dir, "sb"), NULL);
    CHECK(a && a[0] == 0 && a[1] == 0 && a[2] == 0 && a[3] == 0);
    CHECK(b && b[2] == 3 && b[3] == 0); /* 768 */
    free(a);
    free(b);
}

/* A corrupt state file is refused with a clear error and left untouched. */
static void test_stateful_corrupt(void)
{
    if (!binary_present())
        return;
    const char *dir = fresh_dir("sfc"), *st = in_dir(dir, "k.state"), *pub = in_dir(dir, "pub");
    const char *msg = in_dir(dir, "m"), *sig = in_dir(dir, "s");
    size_t len, len2;
    CHECK_INT(run_hbs(NULL, NULL, "keygen", "-a", stateful_algs[0], "-s", st, "-p", pub, NULL), 0);
    uint8_t *b = read_bytes(st, &len);
    if (!b)
        return;
    b[len - 40] ^= 0x80;
    write_bytes(st, b, len);
    chmod(st, 0600);
    write_text(msg, "m");
    CHECK_INT(run_hbs(NULL, NULL, "sign", "-s", st, "-m", msg, "-x", sig, NULL), 2);
    check_error_line("corrupt state");
    CHECK(!file_exists(sig));
    uint8_t *c = read_bytes(st, &len2);
    CHECK(c && len2 == len && memcmp(b, c, len) == 0);
    free(b);
    free(c);
    /* a stateful secret key is never accepted as PKCS#8 or raw bytes */
    CHECK_INT(run_hbs(NULL, NULL, "sign", "-s", pub, "-m", msg, "-x", sig, NULL), 2);
}

/* Ctrl-C during a long key generation: exit 2, a one-line message, and no files. */
static void test_stateful_keygen_interrupt(void)
{
    if (!binary_present())
        return;
    const char *dir = fresh_dir("sfi"), *st = in_dir(dir, "tall.state"), *pub = in_dir(dir, "pub");
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        int fout = open("/dev/null", O_WRONLY), ferr = open(stderr_path(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fout < 0 || ferr < 0 || dup2(fout, 1) < 0 || dup2(ferr, 2) < 0)
            _exit(125);
        /* 2^20 leaves of W8: a minute or more on two cores */
        execl(test_hbs_bin(), test_hbs_bin(), "keygen", "-a",
              "LMS_SHA256_M32_H20/LMOTS_SHA256_N32_W8", "-s", st, "-p", pub, (char *)NULL);
        _exit(126);
    }
    usleep(700 * 1000);
    kill(pid, SIGINT);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {
    }
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 2, "status %d", status);
    check_error_line("interrupted keygen");
    char *e = (char *)read_bytes(stderr_path(), NULL);
    CHECK_MSG(e && strstr(e, "interrupted"), "stderr: %s", e ? e : "");
    free(e);
    CHECK(!file_exists(st));
    CHECK(!file_exists(pub));
    CHECK_INT(hidden_files(dir), 0);
}

/* ---- many files at once: sign FILE..., verify FILE... ---------------------------------- */

/* Runs `hbs` with arguments args[0..n) (stdout to out, or /dev/null); as run_hbs. */
static int run_hbs_argv(const char *out, const char *const *args, size_t n)
{
    return test_run_hbs(NULL, out, stderr_path(), args, n);
}

/* Whether stderr of the last run mentions `text`. */
static int stderr_has(const char *text)
{
    char *e = (char *)read_bytes(stderr_path(), NULL);
    int yes = e && strstr(e, text) != NULL;
    free(e);
    return yes;
}

static int same_file(const char *a, const char *b)
{
    size_t la, lb;
    uint8_t *x = read_bytes(a, &la), *y = read_bytes(b, &lb);
    int same = x && y && la == lb && memcmp(x, y, la) == 0;
    free(x);
    free(y);
    return same;
}

#define MANY 7

/* MANY messages of assorted lengths (one empty, one of 5000 bytes) in dir; paths to msgs. */
static void many_messages(const char *dir, char msgs[MANY][600])
{
    uint8_t buf[5000];
    for (int i = 0; i < MANY; i++) {
        char name[16];
        size_t len = i == 0 ? 0 : i == 1 ? sizeof buf : (size_t)(10 * i);
        snprintf(name, sizeof name, "m%d", i);
        snprintf(msgs[i], 600, "%s", in_dir(dir, name));
        test_rand_bytes(buf, len);
        write_bytes(msgs[i], buf, len);
    }
}

static const char *sig_of(const char *msg)
{
    static char bufs[8][4300];
    static unsigned next;
    char *b = bufs[next++ % 8];
    snprintf(b, sizeof bufs[0], "%.4290s.sig", msg);
    return b;
}

/* sign FILE...: FILE.sig beside each (or in -o DIR), byte-identical to the one-message form,
 * never over an existing file without --force, and errors before anything is signed. */
static void test_sign_many(void)
{
    if (!binary_present())
        return;
    const char *d = fresh_dir("many-sign"), *sk = in_dir(d, "sk.pem"), *pk = in_dir(d, "pk.pem");
    char m[MANY][600];
    const char *args[64];
    size_t n = 0;
    CHECK_INT(run_hbs(NULL, NULL, "keygen", "-a", ALG, "-s", sk, "-p", pk, NULL), 0);
    many_messages(d, m);

    /* batches of 3 over 7 files: the last batch is short */
    args[n++] = "sign", args[n++] = "-s", args[n++] = sk, args[n++] = "--deterministic";
    args[n++] = "--batch", args[n++] = "3";
    for (int i = 0; i < MANY; i++)
        args[n++] = m[i];
    CHECK_INT(run_hbs_argv(NULL, args, n), 0);
    for (int i = 0; i < MANY; i++) {
        const char *one = in_dir(d, "one.sig");
        size_t len;
        free(read_bytes(sig_of(m[i]), &len));
        CHECK_MSG(len == ALG_SIG_BYTES, "%s: %zu bytes", sig_of(m[i]), len);
        CHECK_INT(run_hbs(NULL, NULL, "sign", "-s", sk, "-m", m[i], "-x", one,
                          "--deterministic", NULL), 0);
        CHECK_MSG(same_file(one, sig_of(m[i])), "message %d: the many-file signature differs "
                  "from the one-message form's", i);
        remove(one);
    }
    /* existing signature files are kept; --force replaces them (hedged: new bytes) */
    uint8_t *before = read_bytes(sig_of(m[2]), NULL);
    CHECK_INT(run_hbs(NULL, NULL, "sign", "-s", sk, m[1], m[2], NULL), 2);
    check_error_line("sign over existing .sig files");
    CHECK(stderr_has(".sig") && stderr_has("--force"));
    uint8_t *after = read_bytes(sig_of(m[2]), NULL);
    CHECK(before && after && memcmp(before, after, ALG_SIG_BYTES) == 0);
    free(after);
    CHECK_INT(run_hbs(NULL, NULL, "sign", "-s", sk, "--force", "-m", m[1], "-m", m[2], NULL), 0);
    after = read_bytes(sig_of(m[2]), NULL);
    CHECK(before && after && memcmp(before, after, ALG_SIG_BYTES) != 0);
    free(before);
    free(after);
    CHECK_INT(run_hbs(NULL, NULL, "verify", "-q", "-p", pk, "-m", m[2], "-x", sig_of(m[2]),
                      NULL), 0);

    /* -o DIR */
    const char *od = subdir("many-sign-out");
    char osig[700];
    snprintf(osig, sizeof osig, "%s/m3.sig", od);
    remove(osig);
    CHECK_INT(run_hbs(NULL, NULL, "sign", "-s", sk, "-o", od, "--deterministic", m[3], NULL), 0);
    CHECK(same_file(osig, sig_of(m[3])));
    CHECK_INT(run_hbs(NULL, NULL, "sign", "-s", sk, "-o", in_dir(d, "no-such-dir"), m[3],
                      NULL), 2);
    check_error_line("-o to a missing folder");

    /* errors, each before anything is signed */
    const char *e1 = in_dir(d, "e1"), *missing = in_dir(d, "missing");
    write_text(e1, "e1");
    CHECK_INT(run_hbs(NULL, NULL, "sign", "-s", sk, e1, missing, NULL), 2);
    check_error_line("a missing message");
    CHECK(stderr_has(missing));
    CHECK(!file_exists(sig_of(e1)));
    CHECK_INT(run_hbs(NULL, NULL, "sign", "-s", sk, "-x", in_dir(d, "x.sig"), e1, m[1], NULL), 2);
    check_error_line("-x with two messages");
    CHECK(!file_exists(in_dir(d, "x.sig")) && !file_exists(sig_of(e1)));
    CHECK_INT(run_hbs(NULL, NULL, "sign", "-s", sk, "-x", in_dir(d, "x.sig"), "-o", od, e1,
                      NULL), 2);
    CHECK_INT(run_hbs(e1, NULL, "sign", "-s", sk, "-", NULL), 2); /* stdin has no name */
    check_error_line("stdin without -x");
    CHECK_INT(run_hbs(NULL, NULL, "sign", "-s", sk, NULL), 2);
    check_error_line("no message");
    CHECK_INT(run_hbs(NULL, NULL, "sign", "-s", sk, "--gpu=sometimes", e1, NULL), 2);
    /* two messages of one name signing into one folder */
    const char *sa = subdir("many-sign-a"), *sb = subdir("many-sign-b");
    char fa[700], fb[700];
    snprintf(fa, sizeof fa, "%s/same", sa);
    snprintf(fb, sizeof fb, "%s/same", sb);
    write_text(fa, "a");
    write_text(fb, "b");
    CHECK_INT(run_hbs(NULL, NULL, "sign", "-s", sk, "-o", od, fa, fb, NULL), 2);
    check_error_line("two messages, one signature name");
    /* a signature that would replace a message of the same run */
    CHECK_INT(run_hbs(NULL, NULL, "sign", "-s", sk, "--force", e1, sig_of(e1), NULL), 2);
    CHECK(!file_exists(sig_of(e1)));

    /* --gpu: the GPU where there is one, else an error; --gpu=auto falls back */
    const char *g = in_dir(d, "g.sig");
    if (hbs_gpu_device_count() == 0) {
        CHECK_INT(run_hbs(NULL, NULL, "sign", "-s", sk, "--gpu", "--deterministic", "-m", m[4],
                          "-x", g, NULL), 2);
        check_error_line("--gpu without a GPU");
        CHECK(stderr_has("no CUDA GPU"));
        CHECK(!file_exists(g));
    }
    CHECK_INT(run_hbs(NULL, NULL, "sign", "-s", sk, "--gpu=auto", "-v", "--deterministic",
                      "-m", m[4], "-x", g, NULL), 0);
    CHECK(same_file(g, sig_of(m[4])));
    CHECK(stderr_has(hbs_gpu_device_count() ? "GPU" : "CPU"));
    CHECK_INT(hidden_files(d), 0);
}

/* verify FILE...: one line per file in order, exit 0 / 1 / 2, -q, --json, --sig-dir. */
static void test_verify_many(void)
{
    if (!binary_present())
        return;
    const char *d = fresh_dir("many-verify"), *sk = in_dir(d, "sk.pem"), *pk = in_dir(d, "pk.pem");
    const char *out = in_dir(d, "out.txt");
    char m[MANY][600];
    const char *args[64];
    size_t n = 0;
    CHECK_INT(run_hbs(NULL, NULL, "keygen", "-a", ALG, "-s", sk, "-p", pk, NULL), 0);
    many_messages(d, m);
    args[n++] = "sign", args[n++] = "-s", args[n++] = sk;
    for (int i = 0; i < MANY; i++)
        args[n++] = m[i];
    CHECK_INT(run_hbs_argv(NULL, args, n), 0);

    n = 0;
    args[n++] = "verify", args[n++] = "-p", args[n++] = pk, args[n++] = "--batch";
    args[n++] = "2";
    for (int i = 0; i < MANY; i++)
        args[n++] = m[i];
    CHECK_INT(run_hbs_argv(out, args, n), 0);
    char expect[MANY * 700] = "";
    for (int i = 0; i < MANY; i++) {
        strcat(expect, m[i]);
        strcat(expect, ": OK\n");
    }
    char *text = (char *)read_bytes(out, NULL);
    CHECK_MSG(text && strcmp(text, expect) == 0, "verify printed:\n%s", text ? text : "");
    free(text);

    /* a flipped bit and a short signature: invalid, status 1, the rest still OK */
    size_t len;
    uint8_t *s = read_bytes(sig_of(m[2]), &len);
    if (s && len == ALG_SIG_BYTES) {
        s[len / 2] ^= 4;
        write_bytes(sig_of(m[2]), s, len);
        write_bytes(sig_of(m[5]), s, len - 1);
    }
    free(s);
    CHECK_INT(run_hbs_argv(out, args, n), 1);
    text = (char *)read_bytes(out, NULL);
    char line[1400];
    snprintf(line, sizeof line, "%s: INVALID (signature does not match)\n", m[2]);
    CHECK_MSG(text && strstr(text, line), "verify printed:\n%s", text ? text : "");
    snprintf(line, sizeof line, "%s: INVALID (wrong length: %d bytes, expected %d)\n", m[5],
             ALG_SIG_BYTES - 1, ALG_SIG_BYTES);
    CHECK_MSG(text && strstr(text, line), "verify printed:\n%s", text ? text : "");
    snprintf(line, sizeof line, "%s: OK\n%s: OK\n", m[3], m[4]);
    CHECK(text && strstr(text, line));
    free(text);

    /* -q: nothing printed, the same status */
    const char *qargs[64] = {"verify", "-q"};
    memcpy(qargs + 2, args + 1, (n - 1) * sizeof *args);
    CHECK_INT(run_hbs_argv(out, qargs, n + 1), 1);
    free(read_bytes(out, &len));
    CHECK_INT(len, 0);

    /* a missing signature file: status 2, reported in its place, the others still checked */
    remove(sig_of(m[6]));
    CHECK_INT(run_hbs_argv(out, args, n), 2);
    CHECK(stderr_has(sig_of(m[6])));
    text = (char *)read_bytes(out, NULL);
    snprintf(line, sizeof line, "%s: ERROR (", m[6]);
    CHECK(text && strstr(text, line));
    snprintf(line, sizeof line, "%s: OK\n", m[4]);
    CHECK(text && strstr(text, line));
    free(text);

    /* --json: one object per line */
    const char *jargs[64] = {"verify", "--json"};
    memcpy(jargs + 2, args + 1, (n - 1) * sizeof *args);
    CHECK_INT(run_hbs_argv(out, jargs, n + 1), 2);
    text = (char *)read_bytes(out, NULL);
    int lines = 0;
    static const char *const want[MANY] = {"ok", "ok", "invalid", "ok", "ok", "invalid", "error"};
    for (char *p = text, *nl; p && (nl = strchr(p, '\n')) != NULL; p = nl + 1, lines++) {
        json *j = json_parse(p, (size_t)(nl - p));
        CHECK_MSG(j != NULL, "not JSON: %.*s", (int)(nl - p), p);
        if (lines < MANY) {
            CHECK(json_str(json_get(j, "file")) && strcmp(json_str(json_get(j, "file")), m[lines]) == 0);
            const char *st = json_str(json_get(j, "status"));
            CHECK_MSG(st && strcmp(st, want[lines]) == 0, "file %d: status %s", lines, st ? st : "?");
            CHECK(json_is_true(json_get(j, "valid")) == (lines != 2 && lines != 5 && lines != 6));
        }
        json_free(j);
    }
    CHECK_INT(lines, MANY);
    free(text);

    /* --sig-dir, and the one-message -x form with --json */
    const char *sd = fresh_dir("many-verify-sigs");
    CHECK_INT(run_hbs(NULL, NULL, "sign", "-s", sk, "-o", sd, m[0], m[1], NULL), 0);
    CHECK_INT(run_hbs(NULL, out, "verify", "-p", pk, "--sig-dir", sd, m[0], m[1], NULL), 0);
    CHECK_INT(run_hbs(NULL, out, "verify", "-p", pk, "--sig-dir", sd, "--context", "00", m[0],
                      NULL), 1);
    CHECK_INT(run_hbs(NULL, out, "verify", "-p", pk, m[0], "-m", m[1], NULL), 0);
    CHECK_INT(run_hbs(NULL, out, "verify", "-p", pk, "-x", sig_of(m[1]), "--json", m[1], NULL), 0);
    json *j = load_json(out);
    CHECK(j && json_is_true(json_get(j, "valid")));
    json_free(j);
    CHECK_INT(run_hbs(NULL, out, "verify", "-p", pk, "-x", sig_of(m[1]), m[0], m[1], NULL), 2);
    check_error_line("verify -x with two messages");
    CHECK_INT(run_hbs(NULL, out, "verify", "-p", pk, NULL), 2);
    if (hbs_gpu_device_count() == 0) {
        CHECK_INT(run_hbs(NULL, out, "verify", "-p", pk, "--gpu", m[0], m[1], NULL), 2);
        check_error_line("verify --gpu without a GPU");
        CHECK(stderr_has("no CUDA GPU"));
    }
    CHECK_INT(run_hbs(NULL, out, "verify", "-p", pk, "--gpu=auto", m[0], m[1], NULL), 0);
}

/* Many files under a stateful key: consecutive indices, one state update, all or nothing
 * when the key runs short, and GPU batches. */
static void test_stateful_many(void)
{
    if (!binary_present())
        return;
    const char *d = fresh_dir("many-sf"), *st = in_dir(d, "k.state"), *pub = in_dir(d, "k.pub");
    const char *info = in_dir(d, "info.json"), *out = in_dir(d, "out.txt");
    char m[MANY][600];
    const char *args[64];
    size_t n = 0;
    CHECK_INT(run_hbs(NULL, NULL, "keygen", "-a", stateful_algs[0], "-s", st, "-p", pub, NULL), 0);
    many_messages(d, m);
    args[n++] = "sign", args[n++] = "-s", args[n++] = st;
    for (int i = 0; i < 5; i++)
        args[n++] = m[i];
    CHECK_INT(run_hbs_argv(NULL, args, n), 0);
    /* HSS: Nspk (4 bytes), then the LMS index q */
    for (int i = 0; i < 5; i++) {
        uint8_t *s = read_bytes(sig_of(m[i]), NULL);
        CHECK_MSG(s && s[4] == 0 && s[5] == 0 && s[6] == 0 && s[7] == i,
                  "message %d signed with index %d", i, s ? s[7] : -1);
        free(s);
    }
    CHECK_INT(run_hbs(NULL, info, "key", "info", "-s", st, "--json", NULL), 0);
    CHECK_INT(info_field(info, "next_index"), 5);
    args[0] = "verify", args[1] = "-p", args[2] = pub;
    CHECK_INT(run_hbs_argv(out, args, n), 0);
    CHECK_INT(run_hbs(NULL, out, "verify", "-p", pub, m[4], NULL), 0);
    CHECK_INT(run_hbs(NULL, out, "verify", "-p", pub, "-m", m[3], "-x", sig_of(m[4]), NULL), 1);

    /* --reserve 2 over two messages: indices 5 and 6, one update to 7 */
    CHECK_INT(run_hbs(NULL, NULL, "sign", "-s", st, "--reserve", "2", m[5], m[6], NULL), 0);
    CHECK_INT(run_hbs(NULL, info, "key", "info", "-s", st, "--json", NULL), 0);
    CHECK_INT(info_field(info, "next_index"), 7);

    /* 25 indices left: 30 messages sign nothing and spend nothing */
    char names[30][600];
    n = 0;
    args[n++] = "sign", args[n++] = "-s", args[n++] = st;
    for (int i = 0; i < 30; i++) {
        char name[16];
        snprintf(name, sizeof name, "x%d", i);
        snprintf(names[i], sizeof names[i], "%s", in_dir(d, name));
        write_text(names[i], name);
        args[n++] = names[i];
    }
    CHECK_INT(run_hbs_argv(NULL, args, n), 2);
    check_error_line("stateful key too short for the messages");
    CHECK(stderr_has("left"));
    CHECK(!file_exists(sig_of(names[0])));
    CHECK_INT(run_hbs(NULL, info, "key", "info", "-s", st, "--json", NULL), 0);
    CHECK_INT(info_field(info, "next_index"), 7);

    /* --gpu: without a GPU an error that spends nothing (=auto uses the CPU); with one (or
     * the emulated ones of scripts/gpu-emulate.sh), GPU batches of --batch 2 take the next
     * indices in order, verified by the CPU and the GPU verifier */
    if (hbs_gpu_device_count() == 0) {
        CHECK_INT(run_hbs(NULL, NULL, "sign", "-s", st, "--gpu", names[0], NULL), 2);
        check_error_line("--gpu with a stateful key and no GPU");
        CHECK(stderr_has("no CUDA GPU"));
        CHECK(!file_exists(sig_of(names[0])));
        CHECK_INT(run_hbs(NULL, NULL, "verify", "-p", pub, "--gpu", m[0], NULL), 2);
        CHECK_INT(run_hbs(NULL, info, "key", "info", "-s", st, "--json", NULL), 0);
        CHECK_INT(info_field(info, "next_index"), 7);
        CHECK_INT(run_hbs(NULL, NULL, "sign", "-s", st, "--gpu=auto", names[0], names[1],
                          names[2], NULL), 0);
    } else {
        CHECK_INT(run_hbs(NULL, NULL, "sign", "-s", st, "--gpu", "--batch", "2", names[0],
                          names[1], names[2], NULL), 0);
        CHECK_INT(run_hbs(NULL, out, "verify", "-p", pub, "--gpu", names[0], names[1],
                          names[2], NULL), 0);
        /* a message under another's signature: invalid on the GPU too */
        CHECK_INT(run_hbs(NULL, out, "verify", "-p", pub, "--gpu", "-m", names[3], "-x",
                          sig_of(names[2]), NULL), 1);
        /* --gpu-devices: the GPUs by number, each once, and only those there */
        CHECK_INT(run_hbs(NULL, out, "verify", "-p", pub, "--gpu", "--gpu-devices", "0",
                          names[0], names[1], NULL), 0);
        static const char *const bad[] = {"0,0", "x", "0,", "-1", "4000", ""};
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            CHECK_INT(run_hbs(NULL, NULL, "sign", "-s", st, "--gpu", "--gpu-devices", bad[i],
                              names[3], NULL), 2);
            check_error_line("--gpu-devices with a bad list");
            CHECK(stderr_has("--gpu-devices"));
        }
        CHECK(!file_exists(sig_of(names[3])));
    }
    /* --gpu-devices without --gpu: an error, nothing signed */
    CHECK_INT(run_hbs(NULL, NULL, "sign", "-s", st, "--gpu-devices", "0", "-m", names[3], "-x",
                      sig_of(names[3]), NULL), 2);
    check_error_line("--gpu-devices without --gpu");
    CHECK(stderr_has("applies with --gpu only"));
    CHECK(!file_exists(sig_of(names[3])));
    CHECK_INT(run_hbs(NULL, NULL, "verify", "-p", pub, "--gpu-devices", "0", m[0], NULL), 2);
    CHECK_INT(run_hbs(NULL, NULL, "bench", "--gpu-devices", "0", NULL), 2);
    CHECK_INT(run_hbs(NULL, NULL, "keygen", "-a", stateful_algs[0], "-s", in_dir(d, "k2.state"),
                      "-p", in_dir(d, "k2.pub"), "--gpu-devices", "0", NULL), 2);
    CHECK(!file_exists(in_dir(d, "k2.state")));
    for (int i = 0; i < 3; i++) {
        uint8_t *s = read_bytes(sig_of(names[i]), NULL);
        CHECK_MSG(s && s[4] == 0 && s[5] == 0 && s[6] == 0 && s[7] == 7 + i,
                  "%s signed with index %d", names[i], s ? s[7] : -1);
        free(s);
    }
    CHECK_INT(run_hbs(NULL, info, "key", "info", "-s", st, "--json", NULL), 0);
    CHECK_INT(info_field(info, "next_index"), 10);
    CHECK_INT(run_hbs(NULL, out, "verify", "-p", pub, "--gpu=auto", names[0], names[1],
                      names[2], NULL), 0);
}

/* help shows the many-file forms; the old -x forms keep their exact output. */
static void test_many_help(void)
{
    if (!binary_present())
        return;
    const char *out = tpath("many-help.txt");
    CHECK_INT(run_hbs(NULL, out, "help", "sign", NULL), 0);
    char *t = (char *)read_bytes(out, NULL);
    CHECK(t && strstr(t, "FILE...") && strstr(t, "--gpu[=auto]") && strstr(t, "--force") &&
          strstr(t, "-o, --out-dir DIR"));
    free(t);
    CHECK_INT(run_hbs(NULL, out, "verify", "--help", NULL), 0);
    t = (char *)read_bytes(out, NULL);
    CHECK(t && strstr(t, "FILE...") && strstr(t, "--sig-dir DIR") && strstr(t, "--json"));
    free(t);
}

const hbs_test hbs_tests_cli[] = {
    {"stateful_keygen_interrupt", test_stateful_keygen_interrupt},
    {"stateful_roundtrip", test_stateful_roundtrip},
    {"stateful_raw_and_exhaustion", test_stateful_raw_and_exhaustion},
    {"stateful_split", test_stateful_split},
    {"stateful_corrupt", test_stateful_corrupt},
    {"list", test_list},
    {"usage", test_usage},
    {"roundtrip_pem", test_roundtrip_pem},
    {"roundtrip_raw", test_roundtrip_raw},
    {"stdio", test_stdio},
    {"keygen_acvp", test_keygen_acvp},
    {"siggen_acvp", test_siggen_acvp},
    {"verify_exit_codes", test_verify_exit_codes},
    {"prehash_bound_key", test_prehash_bound_key},
    {"corrupt_secret_key", test_corrupt_secret_key},
    {"file_safety", test_file_safety},
    {"bench_json", test_bench_json},
    {"bench_stateful_model", test_bench_stateful_model},
    {"demo", test_demo},
    {"sign_many", test_sign_many},
    {"verify_many", test_verify_many},
    {"stateful_many", test_stateful_many},
    {"many_help", test_many_help},
    {NULL, NULL},
};
