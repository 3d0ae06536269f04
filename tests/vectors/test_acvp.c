/* SLH-DSA known-answer tests: NIST ACVP vectors, the RustCrypto copy of the 2024 ACVP
 * sigVer vectors, BoringSSL's test data, and slhdsa-c's answers to every NIST sigGen prompt.
 * Only the public API (hbs/slhdsa.h) is used, so these tests see what a user sees.
 *
 * The vector folder and what each file holds are described in its README.md. */
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hbs/slhdsa.h"
#include "json.h"
#include "test.h"

#define NO_VECTORS "vectors folder not found: set HBS_VECTORS or place ../shared/vectors"

#define KEYGEN_FILE "acvp/SLH-DSA-keyGen-FIPS205/internalProjection.json"
#define SIGGEN_NIST_FILE "acvp/SLH-DSA-sigGen-FIPS205/internalProjection.trimmed.json"
#define SIGGEN_PROMPT_FILE "acvp/SLH-DSA-sigGen-FIPS205/prompt.json"
#define SIGGEN_ANSWERS_FILE "slhdsa-c/SLH-DSA-sigGen-FIPS205.answers.json"
#define SIGVER_RUST_FILE "acvp-2024-rustcrypto/SLH-DSA-sigVer-FIPS205/internalProjection.json"

/* ---- reading the vector files ------------------------------------------------------------ */

/* <vectors>/<rel> into *path; 0 after a loud skip when there is no vector folder. */
static int vectors_path(char *path, size_t size, const char *rel)
{
    const char *dir = test_vectors_dir();
    if (!dir) {
        test_skip("%s", NO_VECTORS);
        return 0;
    }
    snprintf(path, size, "%s/%s", dir, rel);
    return 1;
}

/* Reads and parses <vectors>/<rel>; NULL after a skip (no folder) or a failure. */
static json *load_json(const char *rel)
{
    char path[4096];
    size_t len;
    if (!vectors_path(path, sizeof path, rel))
        return NULL;
    uint8_t *text = test_read_file(path, &len);
    if (!text) {
        CHECK_MSG(0, "cannot read %s", path);
        return NULL;
    }
    json *doc = json_parse((const char *)text, len);
    free(text);
    CHECK_MSG(doc != NULL, "%s: malformed JSON", path);
    return doc;
}

static const char *short_name(const hbs_slhdsa_params *p)
{
    const char *name = hbs_slhdsa_name(p);
    return strncmp(name, "SLH-DSA-", 8) == 0 ? name + 8 : name;
}

/* The group's parameter set; NULL (and a failure) if it names none we know. */
static const hbs_slhdsa_params *group_params(const char *file, const json *grp)
{
    const char *name = json_str(json_get(grp, "parameterSet"));
    const hbs_slhdsa_params *p = name ? hbs_slhdsa_params_by_name(name) : NULL;
    CHECK_MSG(p != NULL, "%s tgId %lld: unknown parameterSet %s", file,
              json_int(json_get(grp, "tgId"), -1), name ? name : "(missing)");
    return p;
}

/* Index of the first differing byte (len if none): tells R, FORS and HT failures apart. */
static size_t first_diff(const uint8_t *a, const uint8_t *b, size_t len)
{
    size_t i = 0;
    while (i < len && a[i] == b[i])
        i++;
    return i;
}

/* ---- per-parameter-set counts ------------------------------------------------------------ */

typedef struct {
    unsigned pass[HBS_SLHDSA_NUM_PARAMS], total[HBS_SLHDSA_NUM_PARAMS];
    const hbs_slhdsa_params *params[HBS_SLHDSA_NUM_PARAMS];
} tally;

static void tally_add(tally *t, const hbs_slhdsa_params *p, int ok)
{
    hbs_slhdsa_id id = hbs_slhdsa_params_id(p);
    if ((unsigned)id >= HBS_SLHDSA_NUM_PARAMS)
        return;
    t->params[id] = p;
    t->total[id]++;
    t->pass[id] += ok ? 1u : 0u;
}

static void tally_note(const tally *t)
{
    for (int i = 0; i < HBS_SLHDSA_NUM_PARAMS; i++)
        if (t->total[i])
            test_note("%s %u/%u", short_name(t->params[i]), t->pass[i], t->total[i]);
}

/* ---- running independent jobs over all cores --------------------------------------------- */

/* A job's cost class; 0 leaves the job out (it failed to load and was reported). */
typedef unsigned (*job_cost_fn)(const void *job);
typedef void (*job_run_fn)(void *job);

typedef struct {
    char *jobs;
    size_t stride;
    job_run_fn run;
    const size_t *order; /* jobs in the order to start them: slowest first */
    size_t count, next, done;
    const char *label;
    struct timespec t0;
    pthread_mutex_t lock;
} work_queue;

static double seconds_since(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) * 1e-9;
}

/* Takes jobs until none are left. Workers never use the CHECK macros: the runner's counters
 * are not thread-safe, so results are checked after the join. */
static void *job_worker(void *arg)
{
    work_queue *q = arg;
    for (;;) {
        pthread_mutex_lock(&q->lock);
        size_t k = q->next < q->count ? q->next++ : q->count;
        pthread_mutex_unlock(&q->lock);
        if (k == q->count)
            return NULL;
        q->run(q->jobs + q->order[k] * q->stride);
        pthread_mutex_lock(&q->lock);
        q->done++;
        if (q->done % 50 == 0 || q->done == q->count)
            fprintf(stderr, "    %s: %zu/%zu done (%.0f s)\n", q->label, q->done, q->count,
                    seconds_since(&q->t0));
        pthread_mutex_unlock(&q->lock);
    }
}

/* The small ("s") sets take several times longer than the fast ones; starting them first
 * keeps the end of a run from waiting on one core's slow job. Never 0. */
static unsigned params_cost(const hbs_slhdsa_params *p)
{
    const char *name = hbs_slhdsa_name(p);
    size_t len = strlen(name);
    return (len && name[len - 1] == 's' ? 1000u : 0u) + (unsigned)hbs_slhdsa_n(p);
}

/* Runs count jobs of `stride` bytes each over all cores, costliest first. */
static void run_parallel(void *jobs, size_t stride, size_t count, job_cost_fn cost,
                         job_run_fn run, const char *label)
{
    size_t *order = malloc((count ? count : 1) * sizeof *order), m = 0;
    unsigned *costs = malloc((count ? count : 1) * sizeof *costs);
    CHECK_MSG(order && costs, "out of memory");
    if (!order || !costs) {
        free(order);
        free(costs);
        return;
    }
    for (size_t i = 0; i < count; i++) {
        costs[i] = cost((char *)jobs + i * stride);
        if (costs[i])
            order[m++] = i;
    }
    /* Insertion sort, stable: at most a few hundred jobs. */
    for (size_t i = 1; i < m; i++) {
        size_t v = order[i], j = i;
        for (; j > 0 && costs[order[j - 1]] < costs[v]; j--)
            order[j] = order[j - 1];
        order[j] = v;
    }
    work_queue q;
    memset(&q, 0, sizeof q);
    q.jobs = jobs;
    q.stride = stride;
    q.run = run;
    q.order = order;
    q.count = m;
    q.label = label;
    clock_gettime(CLOCK_MONOTONIC, &q.t0);
    pthread_mutex_init(&q.lock, NULL);

    /* Any one-time set-up (hash dispatch) happens here, before threads race for it. */
    (void)hbs_backend_name();
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    size_t nthreads = ncpu > 1 ? (size_t)ncpu : 1;
    if (nthreads > 256)
        nthreads = 256;
    if (nthreads > m)
        nthreads = m ? m : 1;
    pthread_t threads[256];
    size_t started = 0;
    while (started < nthreads && pthread_create(&threads[started], NULL, job_worker, &q) == 0)
        started++;
    if (started == 0)
        job_worker(&q); /* no threads to be had: do the work here */
    for (size_t i = 0; i < started; i++)
        pthread_join(threads[i], NULL);
    pthread_mutex_destroy(&q.lock);
    free(order);
    free(costs);
}

/* ---- a. key generation (ACVP keyGen) ----------------------------------------------------- */

typedef struct {
    const hbs_slhdsa_params *p; /* NULL: failed to load (reported) */
    char where[200];
    uint8_t seed[3 * HBS_SLHDSA_MAX_N];
    uint8_t want_sk[HBS_SLHDSA_MAX_SK_BYTES], want_pk[HBS_SLHDSA_MAX_PK_BYTES];
    uint8_t sk[HBS_SLHDSA_MAX_SK_BYTES], pk[HBS_SLHDSA_MAX_PK_BYTES];
    int rc;
} keygen_job;

/* Fills job from the seed pieces (SK.seed || SK.prf || PK.seed, in order) and the expected
 * keys; any may be NULL (not hex or missing): that is reported and job->p stays NULL. */
static void keygen_job_set(keygen_job *job, const hbs_slhdsa_params *p, uint8_t *const *parts,
                           const size_t *partlens, size_t nparts, const uint8_t *sk,
                           size_t sklen, const uint8_t *pk, size_t pklen)
{
    size_t seedlen = 0;
    job->p = NULL;
    for (size_t i = 0; i < nparts; i++) {
        if (!parts[i] || seedlen + partlens[i] > sizeof job->seed) {
            CHECK_MSG(0, "%s: seed missing, not hex or too long", job->where);
            return;
        }
        memcpy(job->seed + seedlen, parts[i], partlens[i]);
        seedlen += partlens[i];
    }
    if (!sk || !pk || seedlen != hbs_slhdsa_seed_bytes(p) || sklen != hbs_slhdsa_sk_bytes(p) ||
        pklen != hbs_slhdsa_pk_bytes(p)) {
        CHECK_MSG(0, "%s: keys missing, not hex, or of lengths that do not fit %s", job->where,
                  hbs_slhdsa_name(p));
        return;
    }
    memcpy(job->want_sk, sk, sklen);
    memcpy(job->want_pk, pk, pklen);
    job->p = p;
}

static unsigned keygen_job_cost(const void *job)
{
    const keygen_job *k = job;
    return k->p ? params_cost(k->p) : 0;
}

static void keygen_job_run(void *job)
{
    keygen_job *k = job;
    k->rc = hbs_slhdsa_keygen_from_seed(k->p, k->sk, k->pk, k->seed);
}

/* Reports a finished job; 1 if both keys are as expected. */
static int keygen_job_check(const keygen_job *k)
{
    size_t sklen = hbs_slhdsa_sk_bytes(k->p), pklen = hbs_slhdsa_pk_bytes(k->p);
    CHECK_MSG(k->rc == 0, "%s: keygen_from_seed returned %d", k->where, k->rc);
    if (k->rc != 0)
        return 0;
    int ok = 1;
    if (memcmp(k->sk, k->want_sk, sklen) != 0) {
        CHECK_MSG(0, "%s: sk differs (first at byte %zu)", k->where,
                  first_diff(k->sk, k->want_sk, sklen));
        ok = 0;
    }
    if (memcmp(k->pk, k->want_pk, pklen) != 0) {
        CHECK_MSG(0, "%s: pk differs (first at byte %zu)", k->where,
                  first_diff(k->pk, k->want_pk, pklen));
        ok = 0;
    }
    return ok;
}

static void acvp_keygen_load(keygen_job *job, const hbs_slhdsa_params *p, const json *t)
{
    static const char *const keys[3] = {"skSeed", "skPrf", "pkSeed"};
    uint8_t *parts[3];
    size_t lens[3] = {0, 0, 0}, sklen = 0, pklen = 0, n = hbs_slhdsa_n(p);
    int each_n = 1;
    for (int i = 0; i < 3; i++) {
        parts[i] = json_hex(t, keys[i], &lens[i]);
        each_n &= lens[i] == n;
    }
    uint8_t *sk = json_hex(t, "sk", &sklen), *pk = json_hex(t, "pk", &pklen);
    if (each_n)
        keygen_job_set(job, p, parts, lens, 3, sk, sklen, pk, pklen);
    else
        CHECK_MSG(0, "%s: skSeed/skPrf/pkSeed missing or not n bytes each", job->where);
    for (int i = 0; i < 3; i++)
        free(parts[i]);
    free(sk);
    free(pk);
}

static void test_acvp_keygen(void)
{
    json *doc = load_json(KEYGEN_FILE);
    if (!doc)
        return;
    const json *groups = json_get(doc, "testGroups");
    size_t total = 0, k = 0;
    for (size_t g = 0; g < json_len(groups); g++)
        total += json_len(json_get(json_at(groups, g), "tests"));
    keygen_job *jobs = calloc(total ? total : 1, sizeof *jobs);
    CHECK_MSG(jobs != NULL, "out of memory");
    for (size_t g = 0; jobs && g < json_len(groups); g++) {
        const json *grp = json_at(groups, g);
        const hbs_slhdsa_params *p = group_params(KEYGEN_FILE, grp);
        const json *tests = json_get(grp, "tests");
        for (size_t i = 0; i < json_len(tests); i++, k++) {
            const json *tc = json_at(tests, i);
            snprintf(jobs[k].where, sizeof jobs[k].where, "%s tgId %lld tcId %lld",
                     KEYGEN_FILE, json_int(json_get(grp, "tgId"), -1),
                     json_int(json_get(tc, "tcId"), -1));
            if (p)
                acvp_keygen_load(&jobs[k], p, tc);
        }
    }
    json_free(doc);
    if (!jobs)
        return;
    CHECK_MSG(total == 120, "%s: %zu tests, expected 120", KEYGEN_FILE, total);
    run_parallel(jobs, sizeof *jobs, total, keygen_job_cost, keygen_job_run, "keyGen");
    tally t;
    memset(&t, 0, sizeof t);
    for (size_t i = 0; i < total; i++)
        if (jobs[i].p)
            tally_add(&t, jobs[i].p, keygen_job_check(&jobs[i]));
    tally_note(&t);
    free(jobs);
}

/* ---- signing cases, run in parallel ------------------------------------------------------ */

enum { IFACE_PURE, IFACE_PREHASH, IFACE_INTERNAL };
static const char *const iface_names[] = {"pure", "prehash", "internal"};

typedef struct {
    const hbs_slhdsa_params *p;
    char where[200];     /* file and test id, for failure messages */
    long long tc;
    int iface;
    hbs_prehash ph;
    char ph_name[24];    /* as the file spells it; "none" for pure and internal */
    uint8_t *sk, *pk, *msg, *ctx, *addrnd, *expect; /* addrnd NULL: deterministic */
    size_t msglen, ctxlen, expectlen;
    /* results, written by one worker thread */
    uint8_t *sig;
    int sign_rc, verify_rc;
} sig_case;

static void sig_case_free(sig_case *c)
{
    free(c->sk);
    free(c->pk);
    free(c->msg);
    free(c->ctx);
    free(c->addrnd);
    free(c->expect);
    free(c->sig);
}

/* The interface and prehash of an ACVP sigGen test; -1 (and a failure) if unclear. */
static int acvp_interface(sig_case *c, const json *grp, const json *t)
{
    const char *si = json_str(json_get(grp, "signatureInterface"));
    const char *mode = json_str(json_get(grp, "preHash"));
    const char *alg = json_str(json_get(t, "hashAlg"));
    c->ph = HBS_PREHASH_NONE;
    snprintf(c->ph_name, sizeof c->ph_name, "none");
    if (si && strcmp(si, "internal") == 0) {
        c->iface = IFACE_INTERNAL;
        return 0;
    }
    if (!si || strcmp(si, "external") != 0 || !mode) {
        CHECK_MSG(0, "%s: unknown signatureInterface/preHash", c->where);
        return -1;
    }
    if (strcmp(mode, "pure") == 0) {
        c->iface = IFACE_PURE;
        CHECK_MSG(!alg || strcmp(alg, "none") == 0, "%s: pure test with hashAlg %s", c->where,
                  alg);
        return !alg || strcmp(alg, "none") == 0 ? 0 : -1;
    }
    c->iface = IFACE_PREHASH;
    if (strcmp(mode, "preHash") != 0 || !alg || strlen(alg) >= sizeof c->ph_name ||
        hbs_prehash_by_name(&c->ph, alg) != 0) {
        CHECK_MSG(0, "%s: unknown preHash %s / hashAlg %s", c->where, mode, alg ? alg : "-");
        return -1;
    }
    /* Copied: the parsed file is freed before the cases run. */
    memcpy(c->ph_name, alg, strlen(alg) + 1);
    return 0;
}

/* Fills c from an ACVP sigGen test (prompt or internalProjection); the expected signature
 * is read when want_sig is set. -1 (and a failure) if a field is missing or malformed. */
static int sig_case_from_acvp(sig_case *c, const char *file, const json *grp, const json *t,
                              const hbs_slhdsa_params *p, int want_sig)
{
    size_t n = hbs_slhdsa_n(p), sklen = 0, pklen = 0, rndlen = 0;
    memset(c, 0, sizeof *c);
    c->p = p;
    c->tc = json_int(json_get(t, "tcId"), -1);
    snprintf(c->where, sizeof c->where, "%s tgId %lld tcId %lld", file,
             json_int(json_get(grp, "tgId"), -1), c->tc);
    if (acvp_interface(c, grp, t) != 0)
        return -1;
    c->sk = json_hex(t, "sk", &sklen);
    c->msg = json_hex(t, "message", &c->msglen);
    if (!c->sk || sklen != hbs_slhdsa_sk_bytes(p) || !c->msg) {
        CHECK_MSG(0, "%s: sk or message missing or malformed", c->where);
        return -1;
    }
    /* Internal tests carry no context; the pure and preHash ones always do. */
    if (c->iface != IFACE_INTERNAL) {
        c->ctx = json_hex(t, "context", &c->ctxlen);
        CHECK_MSG(c->ctx != NULL, "%s: context missing or malformed", c->where);
        if (!c->ctx)
            return -1;
    }
    if (!json_is_true(json_get(grp, "deterministic"))) {
        c->addrnd = json_hex(t, "additionalRandomness", &rndlen);
        CHECK_MSG(c->addrnd && rndlen == n, "%s: hedged test without n bytes of "
                  "additionalRandomness", c->where);
        if (!c->addrnd || rndlen != n)
            return -1;
    }
    if (json_get(t, "pk")) {
        c->pk = json_hex(t, "pk", &pklen);
        CHECK_MSG(c->pk && pklen == 2 * n, "%s: pk malformed", c->where);
        if (!c->pk || pklen != 2 * n)
            return -1;
        CHECK_MSG(memcmp(c->pk, c->sk + 2 * n, 2 * n) == 0, "%s: pk is not the end of sk",
                  c->where);
    } else {
        c->pk = malloc(2 * n);
        if (!c->pk)
            return -1;
        memcpy(c->pk, c->sk + 2 * n, 2 * n);
    }
    if (want_sig) {
        c->expect = json_hex(t, "signature", &c->expectlen);
        CHECK_MSG(c->expect != NULL, "%s: signature missing or malformed", c->where);
        if (!c->expect)
            return -1;
    }
    return 0;
}

static unsigned sig_case_cost(const void *job)
{
    const sig_case *c = job;
    return c->p ? params_cost(c->p) : 0;
}

/* Signs and verifies one case (in a worker thread: no CHECK here). */
static void sig_case_run(void *job)
{
    sig_case *c = job;
    const hbs_slhdsa_params *p = c->p;
    size_t siglen = hbs_slhdsa_sig_bytes(p);
    c->sig = malloc(siglen);
    if (!c->sig) {
        c->sign_rc = c->verify_rc = HBS_ERR_NO_MEMORY;
        return;
    }
    if (c->iface == IFACE_INTERNAL)
        c->sign_rc = hbs_slhdsa_sign_internal(p, c->sig, c->msg, c->msglen, c->sk, c->addrnd);
    else
        c->sign_rc = hbs_slhdsa_sign_ex(p, c->sig, c->msg, c->msglen, c->ctx, c->ctxlen, c->ph,
                                        c->sk, c->addrnd);
    if (c->sign_rc != 0) {
        c->verify_rc = c->sign_rc;
        return;
    }
    switch (c->iface) {
    case IFACE_PURE:
        c->verify_rc = hbs_slhdsa_verify(p, c->sig, siglen, c->msg, c->msglen, c->ctx,
                                         c->ctxlen, c->pk);
        break;
    case IFACE_PREHASH:
        c->verify_rc = hbs_slhdsa_hash_verify(p, c->sig, siglen, c->msg, c->msglen, c->ctx,
                                              c->ctxlen, c->ph, c->pk);
        break;
    default:
        c->verify_rc = hbs_slhdsa_verify_internal(p, c->sig, siglen, c->msg, c->msglen, c->pk);
        break;
    }
}

/* Reports a finished case; 1 if it signed, verified and (when known) matched. */
static int sig_case_check(const sig_case *c)
{
    size_t siglen = hbs_slhdsa_sig_bytes(c->p);
    CHECK_MSG(c->sign_rc == 0, "%s: sign (%s) returned %d", c->where, iface_names[c->iface],
              c->sign_rc);
    if (c->sign_rc != 0)
        return 0;
    CHECK_MSG(c->verify_rc == 0, "%s: own %s signature does not verify (%d)", c->where,
              iface_names[c->iface], c->verify_rc);
    int ok = c->verify_rc == 0;
    if (c->expect) {
        if (c->expectlen != siglen) {
            CHECK_MSG(0, "%s: expected signature has %zu bytes, not %zu", c->where,
                      c->expectlen, siglen);
            ok = 0;
        } else if (memcmp(c->sig, c->expect, siglen) != 0) {
            CHECK_MSG(0, "%s: signature differs from the expected one (first at byte %zu of %zu)",
                      c->where, first_diff(c->sig, c->expect, siglen), siglen);
            ok = 0;
        }
    }
    return ok;
}

/* Loads every test of an ACVP sigGen file into a new array (*count entries). */
static sig_case *load_acvp_siggen(const json *doc, const char *file, int want_sig,
                                  size_t *count)
{
    const json *groups = json_get(doc, "testGroups");
    size_t total = 0, k = 0;
    for (size_t g = 0; g < json_len(groups); g++)
        total += json_len(json_get(json_at(groups, g), "tests"));
    sig_case *cases = calloc(total ? total : 1, sizeof *cases);
    CHECK_MSG(cases != NULL, "out of memory");
    if (!cases)
        return NULL;
    for (size_t g = 0; g < json_len(groups); g++) {
        const json *grp = json_at(groups, g);
        const hbs_slhdsa_params *p = group_params(file, grp);
        const json *tests = json_get(grp, "tests");
        for (size_t i = 0; i < json_len(tests); i++, k++) {
            if (!p) {
                cases[k].tc = json_int(json_get(json_at(tests, i), "tcId"), -1);
                continue; /* reported by group_params; p stays NULL */
            }
            if (sig_case_from_acvp(&cases[k], file, grp, json_at(tests, i), p, want_sig) != 0)
                cases[k].p = NULL; /* reported; counted as failed */
        }
    }
    *count = total;
    return cases;
}

static void free_cases(sig_case *cases, size_t count)
{
    for (size_t i = 0; cases && i < count; i++)
        sig_case_free(&cases[i]);
    free(cases);
}

/* ---- b. sigGen with NIST's answers (the trimmed internalProjection) ---------------------- */

static void test_acvp_siggen_nist(void)
{
    json *doc = load_json(SIGGEN_NIST_FILE);
    if (!doc)
        return;
    size_t count = 0;
    sig_case *cases = load_acvp_siggen(doc, SIGGEN_NIST_FILE, 1, &count);
    json_free(doc);
    if (!cases)
        return;
    CHECK_MSG(count == 49, "%s: %zu tests, expected 49", SIGGEN_NIST_FILE, count);
    run_parallel(cases, sizeof *cases, count, sig_case_cost, sig_case_run,
                 "sigGen NIST answers");
    tally t;
    memset(&t, 0, sizeof t);
    for (size_t i = 0; i < count; i++)
        if (cases[i].p)
            tally_add(&t, cases[i].p, sig_case_check(&cases[i]));
    tally_note(&t);
    free_cases(cases, count);
}

/* ---- c. every NIST sigGen prompt, against slhdsa-c's answers ----------------------------- */

static void put_hex(FILE *f, const uint8_t *b, size_t n)
{
    static const char digits[] = "0123456789abcdef";
    char buf[4096];
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        buf[k++] = digits[b[i] >> 4];
        buf[k++] = digits[b[i] & 15];
        if (k == sizeof buf) {
            fwrite(buf, 1, k, f);
            k = 0;
        }
    }
    fwrite(buf, 1, k, f);
}

/* One JSON object per line, for the interoperability test to verify elsewhere. */
static void write_jsonl(const sig_case *cases, size_t count, const char *path)
{
    FILE *f = fopen(path, "w");
    CHECK_MSG(f != NULL, "cannot write %s", path);
    if (!f)
        return;
    size_t written = 0;
    for (size_t i = 0; i < count; i++) {
        const sig_case *c = &cases[i];
        if (!c->p || c->sign_rc != 0)
            continue;
        fprintf(f, "{\"tcId\":%lld,\"alg\":\"%s\",\"iface\":\"%s\",\"prehash\":\"%s\",\"pk\":\"",
                c->tc, hbs_slhdsa_name(c->p), iface_names[c->iface], c->ph_name);
        put_hex(f, c->pk, 2 * hbs_slhdsa_n(c->p));
        fputs("\",\"msg\":\"", f);
        put_hex(f, c->msg, c->msglen);
        fputs("\",\"ctx\":\"", f);
        put_hex(f, c->ctx, c->ctx ? c->ctxlen : 0);
        fputs("\",\"sig\":\"", f);
        put_hex(f, c->sig, hbs_slhdsa_sig_bytes(c->p));
        fputs("\"}\n", f);
        written++;
    }
    int err = ferror(f);
    err |= fclose(f);
    CHECK_MSG(err == 0, "error writing %s", path);
    test_note("%zu cases in %s", written, path);
}

/* Compares with slhdsa-c's answers (same tests, same order); marks mismatches as failures. */
static void compare_answers(const sig_case *cases, size_t count, int *ok)
{
    char path[4096];
    size_t len, k = 0, compared = 0, equal = 0;
    if (!vectors_path(path, sizeof path, SIGGEN_ANSWERS_FILE))
        return;
    uint8_t *text = test_read_file(path, &len);
    if (!text) {
        test_note("no %s: signatures not compared", SIGGEN_ANSWERS_FILE);
        return;
    }
    json *doc = json_parse((const char *)text, len);
    free(text);
    CHECK_MSG(doc != NULL, "%s: malformed JSON", path);
    const json *groups = json_get(doc, "testGroups");
    for (size_t g = 0; g < json_len(groups); g++) {
        const json *tests = json_get(json_at(groups, g), "tests");
        for (size_t i = 0; i < json_len(tests); i++, k++) {
            const json *t = json_at(tests, i);
            long long tc = json_int(json_get(t, "tcId"), -1);
            if (k >= count || cases[k].tc != tc) {
                CHECK_MSG(0, "%s: tcId %lld is not in the prompt's order", SIGGEN_ANSWERS_FILE,
                          tc);
                continue;
            }
            const sig_case *c = &cases[k];
            if (!c->p || c->sign_rc != 0)
                continue;
            size_t siglen = hbs_slhdsa_sig_bytes(c->p), alen = 0;
            uint8_t *answer = json_hex(t, "signature", &alen);
            compared++;
            if (answer && alen == siglen && memcmp(answer, c->sig, siglen) == 0) {
                equal++;
            } else {
                CHECK_MSG(0, "%s (%s, %s): signature differs from slhdsa-c's answer "
                          "(first at byte %zu of %zu)", c->where, short_name(c->p),
                          iface_names[c->iface],
                          answer && alen == siglen ? first_diff(answer, c->sig, siglen) : 0,
                          siglen);
                ok[k] = 0;
            }
            free(answer);
        }
    }
    CHECK_MSG(k == count, "%s: %zu tests, the prompt has %zu", SIGGEN_ANSWERS_FILE, k, count);
    test_note("slhdsa-c answers: %zu/%zu equal", equal, compared);
    json_free(doc);
}

static void test_acvp_siggen_prompt(void)
{
    json *doc = load_json(SIGGEN_PROMPT_FILE);
    if (!doc)
        return;
    size_t count = 0;
    sig_case *cases = load_acvp_siggen(doc, SIGGEN_PROMPT_FILE, 0, &count);
    json_free(doc);
    int *ok = calloc(count ? count : 1, sizeof *ok);
    CHECK_MSG(ok != NULL, "out of memory");
    if (!cases || !ok) {
        free(ok);
        free_cases(cases, count);
        return;
    }
    CHECK_MSG(count == 624, "%s: %zu tests, expected 624", SIGGEN_PROMPT_FILE, count);
    run_parallel(cases, sizeof *cases, count, sig_case_cost, sig_case_run, "sigGen prompts");
    for (size_t i = 0; i < count; i++)
        ok[i] = cases[i].p && sig_case_check(&cases[i]);
    compare_answers(cases, count, ok);
    tally t;
    memset(&t, 0, sizeof t);
    for (size_t i = 0; i < count; i++)
        if (cases[i].p)
            tally_add(&t, cases[i].p, ok[i]);
    tally_note(&t);
    char path[512];
    snprintf(path, sizeof path, "%s/prompt-signatures.jsonl", test_tmpdir());
    write_jsonl(cases, count, path);
    free(ok);
    free_cases(cases, count);
}

/* ---- d. slh_verify_internal verdicts (ACVP 2024 sigVer, kept by RustCrypto) -------------- */

static size_t rust_resigned;

/* A valid signature of this file is also a known answer of slh_sign_internal: signing the
 * message with its sk and additionalRandomness (opt_rand) must give it back exactly. */
static int rust_resign(const hbs_slhdsa_params *p, const char *where, const json *t,
                       const uint8_t *msg, size_t msglen, const uint8_t *sig, size_t siglen)
{
    size_t sklen = 0, rndlen = 0;
    uint8_t *sk = json_hex(t, "sk", &sklen), *rnd = json_hex(t, "additionalRandomness", &rndlen);
    uint8_t *mine = malloc(hbs_slhdsa_sig_bytes(p));
    int ok = 1;
    if (sk && rnd && mine && sklen == hbs_slhdsa_sk_bytes(p) && rndlen == hbs_slhdsa_n(p)) {
        ok = hbs_slhdsa_sign_internal(p, mine, msg, msglen, sk, rnd) == HBS_OK &&
             siglen == hbs_slhdsa_sig_bytes(p) && memcmp(mine, sig, siglen) == 0;
        CHECK_MSG(ok, "%s: sign_internal(sk, message, additionalRandomness) differs", where);
        rust_resigned += ok;
    }
    free(sk);
    free(rnd);
    free(mine);
    return ok;
}

static int rust_sigver_case(const hbs_slhdsa_params *p, const char *where, const json *t)
{
    size_t pklen = 0, msglen = 0, siglen = 0;
    uint8_t *pk = json_hex(t, "pk", &pklen), *msg = json_hex(t, "message", &msglen);
    uint8_t *sig = json_hex(t, "signature", &siglen);
    const json *verdict = json_get(t, "testPassed");
    long long bits = json_int(json_get(t, "messageLength"), -1);
    int ok = 0;
    if (!pk || !msg || !sig || !verdict || pklen != hbs_slhdsa_pk_bytes(p)) {
        CHECK_MSG(0, "%s: pk/message/signature/testPassed missing or malformed", where);
    } else if (bits >= 0 && (unsigned long long)bits != 8ull * msglen) {
        CHECK_MSG(0, "%s: messageLength %lld bits but %zu message bytes", where, bits, msglen);
    } else {
        int want = json_is_true(verdict);
        int rc = hbs_slhdsa_verify_internal(p, sig, siglen, msg, msglen, pk);
        ok = want ? rc == 0 : rc == HBS_ERR_VERIFY_FAILED;
        if (ok && want)
            ok = rust_resign(p, where, t, msg, msglen, sig, siglen);
        CHECK_MSG(ok, "%s (%s): verify_internal returned %d, expected %s", where,
                  json_str(json_get(t, "reason")) ? json_str(json_get(t, "reason")) : "",
                  rc, want ? "valid" : "HBS_ERR_VERIFY_FAILED");
    }
    free(pk);
    free(msg);
    free(sig);
    return ok;
}

static void test_rustcrypto_sigver(void)
{
    json *doc = load_json(SIGVER_RUST_FILE);
    if (!doc)
        return;
    tally t;
    memset(&t, 0, sizeof t);
    size_t seen = 0, valid = 0;
    const json *groups = json_get(doc, "testGroups");
    for (size_t g = 0; g < json_len(groups); g++) {
        const json *grp = json_at(groups, g);
        const hbs_slhdsa_params *p = group_params(SIGVER_RUST_FILE, grp);
        const json *tests = json_get(grp, "tests");
        for (size_t i = 0; p && i < json_len(tests); i++) {
            const json *tc = json_at(tests, i);
            char where[256];
            snprintf(where, sizeof where, "%s tgId %lld tcId %lld", SIGVER_RUST_FILE,
                     json_int(json_get(grp, "tgId"), -1), json_int(json_get(tc, "tcId"), -1));
            tally_add(&t, p, rust_sigver_case(p, where, tc));
            valid += json_is_true(json_get(tc, "testPassed")) ? 1u : 0u;
            seen++;
        }
    }
    CHECK_MSG(seen == 45, "%s: %zu tests, expected 45", SIGVER_RUST_FILE, seen);
    tally_note(&t);
    test_note("%zu valid, %zu invalid; %zu valid ones re-made exactly by sign_internal", valid,
              seen - valid, rust_resigned);
    CHECK_MSG(rust_resigned == valid, "only %zu of %zu valid signatures re-made", rust_resigned,
              valid);
    rust_resigned = 0;
    json_free(doc);
}

/* ---- e. BoringSSL's test data: `name: hex` records separated by blank lines -------------- */

#define BSSL_MAX_FIELDS 8

typedef struct {
    const char *name[BSSL_MAX_FIELDS], *value[BSSL_MAX_FIELDS];
    size_t nfields;
    int line; /* first line of the record */
} bssl_record;

typedef struct {
    char path[4096];
    const char *file; /* "boringssl/<name>", for messages */
    char file_buf[300];
    const hbs_slhdsa_params *p;
    char *text;       /* the file, cut into NUL-terminated lines */
    bssl_record *recs;
    size_t nrecs;
} bssl_file;

static const char *rec_get(const bssl_record *r, const char *name)
{
    for (size_t i = 0; i < r->nfields; i++)
        if (strcmp(r->name[i], name) == 0)
            return r->value[i];
    return NULL;
}

static uint8_t *rec_hex(const bssl_record *r, const char *name, size_t *len)
{
    const char *v = rec_get(r, name);
    return v ? test_unhex(v, len) : NULL;
}

/* Cuts text into records in place; -1 on a malformed line or too many fields. */
static int bssl_parse(bssl_file *bf)
{
    size_t cap = 0;
    bssl_record *cur = NULL;
    char *line = bf->text;
    for (int lineno = 1; line; lineno++) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        size_t len = strlen(line);
        if (len && line[len - 1] == '\r')
            line[--len] = '\0';
        char *colon = strchr(line, ':');
        if (len == 0) {
            cur = NULL; /* a blank line ends the record */
        } else if (line[0] != '#') {
            if (!colon)
                return -1;
            if (!cur) {
                if (bf->nrecs == cap) {
                    cap = cap ? 2 * cap : 16;
                    bssl_record *r = realloc(bf->recs, cap * sizeof *r);
                    if (!r)
                        return -1;
                    bf->recs = r;
                }
                cur = &bf->recs[bf->nrecs++];
                memset(cur, 0, sizeof *cur);
                cur->line = lineno;
            }
            if (cur->nfields == BSSL_MAX_FIELDS)
                return -1;
            *colon = '\0';
            char *v = colon + 1;
            while (*v == ' ' || *v == '\t')
                v++;
            cur->name[cur->nfields] = line;
            cur->value[cur->nfields++] = v;
        }
        line = nl ? nl + 1 : NULL;
    }
    return 0;
}

/* "slhdsa_shake_256f_siggen.txt" -> SLH-DSA-SHAKE-256f, if its kind is `kind`. */
static const hbs_slhdsa_params *bssl_file_params(const char *fname, const char *kind)
{
    char suffix[64], name[64];
    size_t flen = strlen(fname), i = 0, o;
    snprintf(suffix, sizeof suffix, "_%s.txt", kind);
    size_t slen = strlen(suffix);
    if (strncmp(fname, "slhdsa_", 7) != 0 || flen <= 7 + slen ||
        strcmp(fname + flen - slen, suffix) != 0 || flen - slen - 7 > 40)
        return NULL;
    memcpy(name, "SLH-DSA-", 8);
    o = 8;
    /* Upper-case the hash, keep the size letter: sha2_128s -> SHA2-128s. */
    const char *s = fname + 7;
    size_t n = flen - slen - 7;
    for (; i < n && s[i] != '_'; i++)
        name[o++] = (char)(s[i] >= 'a' && s[i] <= 'z' ? s[i] - 'a' + 'A' : s[i]);
    if (i == n)
        return NULL;
    name[o++] = '-';
    for (i++; i < n; i++)
        name[o++] = s[i];
    name[o] = '\0';
    return hbs_slhdsa_params_by_name(name);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void bssl_files_free(bssl_file *files, size_t n)
{
    for (size_t i = 0; files && i < n; i++) {
        free(files[i].text);
        free(files[i].recs);
    }
    free(files);
}

/* Every boringssl/slhdsa_*_<kind>.txt, read and cut into records, sorted by name; NULL
 * after a skip or a failure. */
static bssl_file *bssl_load(const char *kind, size_t *nfiles)
{
    char dir[4096];
    *nfiles = 0;
    if (!vectors_path(dir, sizeof dir, "boringssl"))
        return NULL;
    DIR *d = opendir(dir);
    CHECK_MSG(d != NULL, "cannot open %s", dir);
    if (!d)
        return NULL;
    char *names[64];
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && n < 64)
        if (bssl_file_params(e->d_name, kind))
            names[n++] = strdup(e->d_name);
    closedir(d);
    qsort(names, n, sizeof names[0], cmp_str);
    bssl_file *files = calloc(n ? n : 1, sizeof *files);
    int bad = !files;
    for (size_t i = 0; i < n; i++) {
        if (!names[i] || bad) {
            bad = 1;
            free(names[i]);
            continue;
        }
        bssl_file *bf = &files[i];
        int w = snprintf(bf->path, sizeof bf->path, "%s/%s", dir, names[i]);
        if (w < 0 || (size_t)w >= sizeof bf->path) {
            CHECK_MSG(0, "path too long: %s/%s", dir, names[i]);
            bad = 1;
            free(names[i]);
            continue;
        }
        snprintf(bf->file_buf, sizeof bf->file_buf, "boringssl/%s", names[i]);
        bf->file = bf->file_buf;
        bf->p = bssl_file_params(names[i], kind);
        free(names[i]);
        bf->text = (char *)test_read_file(bf->path, NULL);
        CHECK_MSG(bf->text != NULL, "cannot read %s", bf->path);
        if (!bf->text || bssl_parse(bf) != 0) {
            CHECK_MSG(!bf->text, "%s: malformed record file", bf->path);
            bad = 1;
        }
    }
    CHECK_MSG(n > 0, "no boringssl/slhdsa_*_%s.txt files in %s", kind, dir);
    if (bad || n == 0) {
        bssl_files_free(files, n);
        return NULL;
    }
    *nfiles = n;
    return files;
}

static void bssl_where(char *where, size_t size, const bssl_file *bf, size_t i)
{
    snprintf(where, size, "%s record %zu (line %d)", bf->file, i + 1, bf->recs[i].line);
}

static void test_boringssl_keygen(void)
{
    size_t nfiles, count = 0, k = 0;
    bssl_file *files = bssl_load("keygen", &nfiles);
    for (size_t f = 0; f < nfiles; f++)
        count += files[f].nrecs;
    keygen_job *jobs = calloc(count ? count : 1, sizeof *jobs);
    CHECK_MSG(jobs != NULL, "out of memory");
    for (size_t f = 0; jobs && f < nfiles; f++) {
        for (size_t i = 0; i < files[f].nrecs; i++, k++) {
            size_t seedlen = 0, pklen = 0, sklen = 0;
            bssl_where(jobs[k].where, sizeof jobs[k].where, &files[f], i);
            uint8_t *seed = rec_hex(&files[f].recs[i], "seed", &seedlen);
            uint8_t *pk = rec_hex(&files[f].recs[i], "pub", &pklen);
            uint8_t *sk = rec_hex(&files[f].recs[i], "priv", &sklen);
            keygen_job_set(&jobs[k], files[f].p, &seed, &seedlen, 1, sk, sklen, pk, pklen);
            free(seed);
            free(pk);
            free(sk);
        }
    }
    if (jobs && nfiles) {
        run_parallel(jobs, sizeof *jobs, count, keygen_job_cost, keygen_job_run,
                     "boringssl keygen");
        k = 0;
        for (size_t f = 0; f < nfiles; f++) {
            size_t pass = 0;
            for (size_t i = 0; i < files[f].nrecs; i++, k++)
                pass += jobs[k].p && keygen_job_check(&jobs[k]) ? 1u : 0u;
            CHECK_MSG(files[f].nrecs > 0, "%s: no records", files[f].file);
            test_note("%s %zu/%zu", short_name(files[f].p), pass, files[f].nrecs);
        }
    }
    free(jobs);
    bssl_files_free(files, nfiles);
}

/* siggen records: slh_sign_internal with `entropy` as opt_rand must give `sig`. */
static int sig_case_from_bssl(sig_case *c, const bssl_file *bf, size_t i)
{
    const bssl_record *r = &bf->recs[i];
    size_t n = hbs_slhdsa_n(bf->p), sklen = 0, rndlen = 0;
    memset(c, 0, sizeof *c);
    c->p = bf->p;
    c->tc = (long long)i + 1;
    c->iface = IFACE_INTERNAL;
    snprintf(c->ph_name, sizeof c->ph_name, "none");
    bssl_where(c->where, sizeof c->where, bf, i);
    c->sk = rec_hex(r, "priv", &sklen);
    c->addrnd = rec_hex(r, "entropy", &rndlen);
    c->msg = rec_hex(r, "msg", &c->msglen);
    c->expect = rec_hex(r, "sig", &c->expectlen);
    c->pk = malloc(2 * n);
    if (!c->sk || !c->addrnd || !c->msg || !c->expect || !c->pk ||
        sklen != hbs_slhdsa_sk_bytes(bf->p) || rndlen != n) {
        CHECK_MSG(0, "%s: priv/entropy/msg/sig missing or malformed", c->where);
        return -1;
    }
    memcpy(c->pk, c->sk + 2 * n, 2 * n);
    return 0;
}

static void test_boringssl_siggen(void)
{
    size_t nfiles, count = 0, k = 0;
    bssl_file *files = bssl_load("siggen", &nfiles);
    for (size_t f = 0; f < nfiles; f++)
        count += files[f].nrecs;
    sig_case *cases = calloc(count ? count : 1, sizeof *cases);
    CHECK_MSG(cases != NULL, "out of memory");
    for (size_t f = 0; cases && f < nfiles; f++)
        for (size_t i = 0; i < files[f].nrecs; i++, k++)
            if (sig_case_from_bssl(&cases[k], &files[f], i) != 0)
                cases[k].p = NULL;
    if (cases && nfiles) {
        run_parallel(cases, sizeof *cases, count, sig_case_cost, sig_case_run,
                     "boringssl siggen");
        k = 0;
        for (size_t f = 0; f < nfiles; f++) {
            size_t pass = 0;
            for (size_t i = 0; i < files[f].nrecs; i++, k++)
                pass += cases[k].p && sig_case_check(&cases[k]) ? 1u : 0u;
            CHECK_MSG(files[f].nrecs > 0, "%s: no records", files[f].file);
            test_note("%s %zu/%zu", short_name(files[f].p), pass, files[f].nrecs);
        }
    }
    free_cases(cases, count);
    bssl_files_free(files, nfiles);
}

static void test_boringssl_sigver(void)
{
    size_t nfiles;
    bssl_file *files = bssl_load("sigver", &nfiles);
    for (size_t f = 0; f < nfiles; f++) {
        const bssl_file *bf = &files[f];
        size_t pass = 0, valid = 0;
        for (size_t i = 0; i < bf->nrecs; i++) {
            char where[512];
            size_t pklen = 0, msglen = 0, siglen = 0;
            bssl_where(where, sizeof where, bf, i);
            uint8_t *pk = rec_hex(&bf->recs[i], "pub", &pklen);
            uint8_t *msg = rec_hex(&bf->recs[i], "msg", &msglen);
            uint8_t *sig = rec_hex(&bf->recs[i], "sig", &siglen);
            const char *v = rec_get(&bf->recs[i], "valid");
            int want = v && strcmp(v, "true") == 0;
            if (!pk || !msg || !sig || !v || (!want && strcmp(v, "false") != 0) ||
                pklen != hbs_slhdsa_pk_bytes(bf->p)) {
                CHECK_MSG(0, "%s: pub/msg/sig/valid missing or malformed", where);
            } else {
                int rc = hbs_slhdsa_verify_internal(bf->p, sig, siglen, msg, msglen, pk);
                int ok = want ? rc == 0 : rc == HBS_ERR_VERIFY_FAILED;
                CHECK_MSG(ok, "%s: verify_internal returned %d, expected %s (signature of %zu "
                          "bytes)", where, rc, want ? "valid" : "HBS_ERR_VERIFY_FAILED", siglen);
                pass += (size_t)ok;
                valid += (size_t)want;
            }
            free(pk);
            free(msg);
            free(sig);
        }
        CHECK_MSG(bf->nrecs > 0, "%s: no records", bf->file);
        test_note("%s %zu/%zu (%zu valid)", short_name(bf->p), pass, bf->nrecs, valid);
    }
    bssl_files_free(files, nfiles);
}

/* The DER object identifiers FIPS 205 prefixes to a pre-hashed message: all are
 * 2.16.840.1.101.3.4.2.x (06 09 60 86 48 01 65 03 04 02 x). */
static const struct {
    const char *name;
    uint8_t last;
} prehash_oids[] = {
    {"SHA2-256", 1},     {"SHA2-384", 2},     {"SHA2-512", 3},  {"SHA2-224", 4},
    {"SHA2-512/224", 5}, {"SHA2-512/256", 6}, {"SHA3-224", 7},  {"SHA3-256", 8},
    {"SHA3-384", 9},     {"SHA3-512", 10},    {"SHAKE-128", 11}, {"SHAKE-256", 12},
};

/* BoringSSL spells SHA-2 names "SHA-256"; FIPS 205 / ACVP spell them "SHA2-256". */
static void acvp_hash_name(char *out, size_t size, const char *name)
{
    if (strncmp(name, "SHA-", 4) == 0)
        snprintf(out, size, "SHA2-%s", name + 4);
    else
        snprintf(out, size, "%s", name);
}

/* prehash records hold the digest, not the message (BoringSSL's prehash_verify takes the
 * hashed message), and the public API only hashes messages itself. So M' of HashSLH-DSA is
 * built here: 0x01 || len(ctx) || ctx || OID(hash) || digest, then slh_verify_internal. */
static int bssl_prehash_case(const hbs_slhdsa_params *p, const char *where,
                             const bssl_record *r)
{
    size_t pklen = 0, dlen = 0, ctxlen = 0, siglen = 0;
    uint8_t *pk = rec_hex(r, "pub", &pklen), *digest = rec_hex(r, "msg", &dlen);
    uint8_t *ctx = rec_hex(r, "context", &ctxlen), *sig = rec_hex(r, "sig", &siglen);
    const char *hash = rec_get(r, "hash");
    char name[32];
    hbs_prehash ph = HBS_PREHASH_NONE;
    int oid = -1, ok = 0;
    uint8_t *mp = NULL;
    if (hash) {
        acvp_hash_name(name, sizeof name, hash);
        for (size_t i = 0; i < sizeof prehash_oids / sizeof prehash_oids[0]; i++)
            if (strcmp(prehash_oids[i].name, name) == 0)
                oid = prehash_oids[i].last;
    }
    if (!pk || !digest || !ctx || !sig || oid < 0 || pklen != hbs_slhdsa_pk_bytes(p) ||
        ctxlen > 255) {
        CHECK_MSG(0, "%s: pub/hash/msg/context/sig missing or malformed", where);
    } else if (hbs_prehash_by_name(&ph, name) != 0) {
        CHECK_MSG(0, "%s: hbs_prehash_by_name does not know %s", where, name);
    } else if (hbs_prehash_digest_bytes(ph) != dlen) {
        CHECK_MSG(0, "%s: %s digest of %zu bytes, hbs_prehash_digest_bytes says %zu", where,
                  name, dlen, hbs_prehash_digest_bytes(ph));
    } else if ((mp = malloc(2 + ctxlen + 11 + dlen)) != NULL) {
        static const uint8_t oid_prefix[10] = {0x06, 0x09, 0x60, 0x86, 0x48,
                                               0x01, 0x65, 0x03, 0x04, 0x02};
        size_t mlen = 0;
        mp[mlen++] = 1;
        mp[mlen++] = (uint8_t)ctxlen;
        memcpy(mp + mlen, ctx, ctxlen);
        mlen += ctxlen;
        memcpy(mp + mlen, oid_prefix, sizeof oid_prefix);
        mlen += sizeof oid_prefix;
        mp[mlen++] = (uint8_t)oid;
        memcpy(mp + mlen, digest, dlen);
        mlen += dlen;
        int rc = hbs_slhdsa_verify_internal(p, sig, siglen, mp, mlen, pk);
        CHECK_MSG(rc == 0, "%s (%s): verify_internal over M' returned %d", where, name, rc);
        /* And a changed digest must not verify. */
        mp[mlen - 1] ^= 1;
        int rc2 = hbs_slhdsa_verify_internal(p, sig, siglen, mp, mlen, pk);
        CHECK_MSG(rc2 == HBS_ERR_VERIFY_FAILED, "%s (%s): altered digest gave %d", where, name,
                  rc2);
        ok = rc == 0 && rc2 == HBS_ERR_VERIFY_FAILED;
    }
    free(pk);
    free(digest);
    free(ctx);
    free(sig);
    free(mp);
    return ok;
}

static void test_boringssl_prehash(void)
{
    size_t nfiles;
    bssl_file *files = bssl_load("prehash", &nfiles);
    for (size_t f = 0; f < nfiles; f++) {
        const bssl_file *bf = &files[f];
        size_t pass = 0;
        for (size_t i = 0; i < bf->nrecs; i++) {
            char where[512];
            bssl_where(where, sizeof where, bf, i);
            pass += (size_t)bssl_prehash_case(bf->p, where, &bf->recs[i]);
        }
        CHECK_MSG(bf->nrecs > 0, "%s: no records", bf->file);
        test_note("%s %zu/%zu", short_name(bf->p), pass, bf->nrecs);
    }
    bssl_files_free(files, nfiles);
}

/* ---- f. NIST sigVer verdicts without their inputs ---------------------------------------- */

static void test_acvp_sigver_nist(void)
{
    test_skip("expectedResults.json holds verdicts without inputs (prompt too large to ship)");
}

const hbs_test hbs_tests_vectors[] = {
    {"acvp_keygen", test_acvp_keygen},
    {"acvp_siggen_nist", test_acvp_siggen_nist},
    {"acvp_sigver_rustcrypto", test_rustcrypto_sigver},
    {"acvp_sigver_nist", test_acvp_sigver_nist},
    {"boringssl_keygen", test_boringssl_keygen},
    {"boringssl_siggen", test_boringssl_siggen},
    {"boringssl_sigver", test_boringssl_sigver},
    {"boringssl_prehash", test_boringssl_prehash},
    {"acvp_siggen_prompt", test_acvp_siggen_prompt},
    {NULL, NULL},
};
