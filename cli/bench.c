/* hbs bench: median, min and max latency and throughput of keygen, sign and verify.
 *
 * Each operation uses --threads library threads (hbs_set_threads). Each of --workers callers
 * repeats it and times every run on the monotonic clock; the latencies of all workers are
 * pooled for median/min/max, and throughput is all operations over the wall time from the
 * first start to the last finish. With --batch B, a run is one call of the batch API on B
 * messages. Beside the times, each row says how close the operation runs to the hash
 * ceiling: the hashes it needs, at the backend's raw single-core rate measured in the same
 * run, against the time it took on its threads. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "batch.h"
#include "bench_stateful.h"
#include "cli.h"
#include "hbs/gpu.h"

enum { OPT_ALG = 1, OPT_THREADS, OPT_WORKERS, OPT_BATCH, OPT_JSON, OPT_OPS, OPT_MIN_TIME,
       OPT_ITERATIONS, OPT_GPU, OPT_MODES, OPT_STATEFUL, OPT_GPU_DEVICES, OPT_MANY_KEYS };

static const hbs_cli_option options[] = {
    {OPT_ALG, 'a', "algorithm", "ALG", "parameter set to measure (repeatable; default all)"},
    {OPT_THREADS, 0, "threads", "N", "library threads per operation (default: all cores "
                                     "with 1 worker, else 1)"},
    {OPT_WORKERS, 0, "workers", "W", "callers running the operation at once (default 1)"},
    {OPT_BATCH, 0, "batch", "B", "sign/verify B messages per call with the batch API "
                                 "(default 1: single calls)"},
    {OPT_JSON, 0, "json", "FILE", "also write the results as a JSON array of records"},
    {OPT_OPS, 0, "ops", "LIST", "operations, comma-separated (default keygen,sign,verify)"},
    {OPT_MIN_TIME, 0, "min-time", "SECONDS", "time per operation and worker (default 1)"},
    {OPT_ITERATIONS, 0, "iterations", "N", "exactly N runs per operation and worker"},
    {OPT_GPU, 0, "gpu", NULL, "measure the GPU (CUDA) instead: latency, batches, the cached "
                              "signer, device-resident verification"},
    {OPT_MODES, 0, "modes", "LIST", "with --gpu, the SLH-DSA measurements to make, "
                                    "comma-separated: latency, batch, signer-cached, device, "
                                    "pinned (batches with the signatures in page-locked "
                                    "memory; default all but pinned)"},
    {OPT_STATEFUL, 0, "stateful", NULL, "also measure the stateful schemes' main sets (LMS/HSS, "
                                        "XMSS); -a takes their names too"},
    {OPT_GPU_DEVICES, 0, "gpu-devices", "LIST", "with --gpu: the GPUs to spread batches over, "
                                                "such as 0,2 (default all)"},
    {OPT_MANY_KEYS, 0, "many-keys", NULL, "with --gpu --stateful: also sign one message under "
                                          "each of 16,384 keys per call "
                                          "(hbs_gpu_stateful_sign_keys)"},
    {0, 0, NULL, NULL, NULL},
};

enum { OP_KEYGEN, OP_SIGN, OP_VERIFY, NUM_OPS };
static const char *const op_names[NUM_OPS] = {"keygen", "sign", "verify"};
/* --modes, in the order of the bits HBS_CLI_GPU_LATENCY .. HBS_CLI_GPU_PINNED */
static const char *const mode_names[] = {"latency", "batch", "signer-cached", "device",
                                         "pinned"};

/* Every sample set has at least this many runs, however slow the operation (s-set signing
 * takes about a second with portable code). */
#define MIN_SAMPLES 3
#define MAX_THREADS 1024

typedef struct {
    const hbs_slhdsa_params *algs[HBS_SLHDSA_NUM_PARAMS];
    size_t nalgs;
    int ops[NUM_OPS];
    unsigned long threads; /* library threads per operation; 0: the default */
    unsigned long workers; /* concurrent callers */
    unsigned long batch;   /* messages per call; 1: the single-message API */
    unsigned long iterations; /* 0: adaptive */
    double min_time;
    const char *json;
    int gpu;
    unsigned modes; /* HBS_CLI_GPU_*: with gpu */
    int modes_given;
    const char *gpu_devices;
    const char *salgs[64]; /* stateful sets (LMS/HSS, XMSS/XMSS^MT) */
    size_t nsalgs;
    int stateful;
    int many_keys;
} bench_args;

/* What every worker of one measurement shares (read-only while they run). */
typedef struct {
    const hbs_slhdsa_params *p;
    int op;
    const uint8_t *sk, *pk, *msg, *sig; /* fixture made before timing */
    size_t msglen;
    size_t batch;
    const hbs_slhdsa_signer *signer;  /* for batches */
    const uint8_t *const *msgs;       /* batch: msg repeated */
    const size_t *msglens;
    const uint8_t *const *sigs, *const *pks;
    const size_t *siglens;
    unsigned long iterations;
    double min_time;
} bench_job;

typedef struct {
    const bench_job *job;
    double *samples; /* milliseconds */
    size_t count, cap;
    double start, end;
    int error; /* HBS_ERR_* of a failed operation, or 0 */
} bench_worker;

typedef struct {
    const hbs_slhdsa_params *p;
    int op;
    hbs_cli_stats st;
    double ops_per_s;
    double hashes;     /* per operation (model) */
    double ceiling_ms; /* those hashes at the raw single-core rate */
    double efficiency; /* ops/s * ceiling / cores used: 1 = every core at its raw rate */
} bench_record;

static int add_alg(bench_args *a, const char *name)
{
    const hbs_slhdsa_params *p;
    if (hbs_cli_is_stateful_alg(name)) {
        if (a->nsalgs == sizeof a->salgs / sizeof a->salgs[0])
            return hbs_cli_error("-a", "too many algorithms");
        a->salgs[a->nsalgs++] = name;
        return HBS_CLI_OK;
    }
    if (hbs_cli_params(name, &p))
        return HBS_CLI_ERROR;
    for (size_t i = 0; i < a->nalgs; i++)
        if (a->algs[i] == p)
            return HBS_CLI_OK;
    a->algs[a->nalgs++] = p;
    return HBS_CLI_OK;
}

/* A comma-separated list of names (opt's value) into bit i of *bits for names[i]. */
static int parse_names(const char *opt, const char *list, const char *const *names, int n,
                       unsigned *bits)
{
    const char *s = list;
    *bits = 0;
    for (;;) {
        size_t len = strcspn(s, ",");
        int found = 0;
        for (int i = 0; i < n; i++) {
            if (strlen(names[i]) == len && strncmp(names[i], s, len) == 0) {
                *bits |= 1u << i;
                found = 1;
            }
        }
        if (!found) {
            char choices[128] = "";
            for (int i = 0; i < n; i++)
                snprintf(choices + strlen(choices), sizeof choices - strlen(choices), "%s%s",
                         i ? ", " : "", names[i]);
            return hbs_cli_error(opt, "unknown name '%.*s' (%s)", (int)len, s, choices);
        }
        if (s[len] == '\0')
            return HBS_CLI_OK;
        s += len + 1;
    }
}

static int parse_ops(bench_args *a, const char *list)
{
    unsigned bits;
    int rc = parse_names("--ops", list, op_names, NUM_OPS, &bits);
    for (int op = 0; op < NUM_OPS; op++)
        a->ops[op] = (bits >> op) & 1;
    return rc;
}

static int parse_args(bench_args *a, int argc, char **argv)
{
    hbs_cli_parser ps;
    const char *v;
    int id, rc = HBS_CLI_OK;
    memset(a, 0, sizeof *a);
    a->workers = 1;
    a->batch = 1;
    a->min_time = 1.0;
    for (int op = 0; op < NUM_OPS; op++)
        a->ops[op] = 1;
    hbs_cli_parser_init(&ps, &hbs_cli_cmd_bench, argc, argv);
    while (rc == HBS_CLI_OK && (id = hbs_cli_parser_next(&ps, &v)) > 0) {
        switch (id) {
        case OPT_ALG: rc = add_alg(a, v); break;
        case OPT_THREADS:
            rc = hbs_cli_parse_uint("--threads", v, 1, MAX_THREADS, &a->threads);
            break;
        case OPT_WORKERS:
            rc = hbs_cli_parse_uint("--workers", v, 1, MAX_THREADS, &a->workers);
            break;
        case OPT_BATCH:
            rc = hbs_cli_parse_uint("--batch", v, 1, 65536, &a->batch);
            break;
        case OPT_JSON: a->json = v; break;
        case OPT_OPS: rc = parse_ops(a, v); break;
        case OPT_MIN_TIME: rc = hbs_cli_parse_seconds("--min-time", v, &a->min_time); break;
        case OPT_ITERATIONS:
            rc = hbs_cli_parse_uint("--iterations", v, 1, 1000000, &a->iterations);
            break;
        case OPT_GPU: a->gpu = 1; break;
        case OPT_GPU_DEVICES: a->gpu_devices = v; break;
        case OPT_MODES:
            rc = parse_names("--modes", v, mode_names,
                             (int)(sizeof mode_names / sizeof mode_names[0]), &a->modes);
            a->modes_given = 1;
            break;
        case OPT_STATEFUL: a->stateful = 1; break;
        case OPT_MANY_KEYS: a->many_keys = 1; break;
        }
    }
    if (rc != HBS_CLI_OK)
        return rc;
    if ((id = hbs_cli_parser_end(id)) != HBS_CLI_OK)
        return id;
    if (a->modes_given && !a->gpu)
        return hbs_cli_error("--modes", "measures the GPU: give --gpu too");
    if (a->gpu_devices && !a->gpu)
        return hbs_cli_error("--gpu-devices", "applies with --gpu only");
    if (!a->modes_given)
        a->modes = HBS_CLI_GPU_MODES;
    if (a->stateful && a->nsalgs == 0)
        for (size_t i = 0; hbs_cli_stateful_bench_default[i]; i++)
            a->salgs[a->nsalgs++] = hbs_cli_stateful_bench_default[i];
    if (a->nalgs == 0 && a->nsalgs == 0)
        for (int i = 0; i < HBS_SLHDSA_NUM_PARAMS; i++)
            a->algs[a->nalgs++] = hbs_slhdsa_params_get((hbs_slhdsa_id)i);
    return HBS_CLI_OK;
}

static int push_sample(bench_worker *w, double ms)
{
    if (w->count == w->cap) {
        size_t cap = w->cap ? 2 * w->cap : 64;
        double *ns = realloc(w->samples, cap * sizeof *ns);
        if (!ns)
            return HBS_ERR_NO_MEMORY;
        w->samples = ns;
        w->cap = cap;
    }
    w->samples[w->count++] = ms;
    return HBS_OK;
}

static int run_op(const bench_job *j, uint8_t *sk, uint8_t *pk, uint8_t *sig)
{
    size_t siglen = hbs_slhdsa_sig_bytes(j->p);
    if (j->batch > 1) {
        int results[64], err = HBS_OK;
        switch (j->op) {
        case OP_KEYGEN:
            for (size_t i = 0; i < j->batch && !err; i++)
                err = hbs_slhdsa_keygen(j->p, sk, pk);
            return err;
        case OP_SIGN:
            return hbs_slhdsa_sign_many(j->signer, sig, j->msgs, j->msglens, j->batch, NULL, 0,
                                        HBS_PREHASH_NONE, NULL);
        default:
            for (size_t i = 0; i < j->batch && !err; i += 64) {
                size_t c = j->batch - i < 64 ? j->batch - i : 64;
                err = hbs_slhdsa_verify_many(j->p, results, j->sigs + i, j->siglens + i,
                                             j->msgs + i, j->msglens + i, c, NULL, 0,
                                             HBS_PREHASH_NONE, j->pks + i);
            }
            return err;
        }
    }
    switch (j->op) {
    case OP_KEYGEN: return hbs_slhdsa_keygen(j->p, sk, pk);
    case OP_SIGN: return hbs_slhdsa_sign(j->p, sig, j->msg, j->msglen, NULL, 0, j->sk);
    default: return hbs_slhdsa_verify(j->p, j->sig, siglen, j->msg, j->msglen, NULL, 0, j->pk);
    }
}

static void *worker_main(void *arg)
{
    bench_worker *w = arg;
    const bench_job *j = w->job;
    uint8_t sk[HBS_SLHDSA_MAX_SK_BYTES], pk[HBS_SLHDSA_MAX_PK_BYTES];
    uint8_t *sig = malloc(HBS_SLHDSA_MAX_SIG_BYTES * j->batch);
    if (!sig) {
        w->error = HBS_ERR_NO_MEMORY;
        return NULL;
    }
    w->start = hbs_cli_now();
    for (;;) {
        double t = hbs_cli_now();
        if (j->iterations ? w->count >= j->iterations
                          : w->count >= MIN_SAMPLES && t - w->start >= j->min_time)
            break;
        int err = run_op(j, sk, pk, sig);
        double ms = (hbs_cli_now() - t) * 1e3;
        if (!err)
            err = push_sample(w, ms);
        if (err) {
            w->error = err;
            break;
        }
    }
    w->end = hbs_cli_now();
    hbs_memzero(sk, sizeof sk);
    free(sig);
    return NULL;
}

/* Runs one measurement with `threads` workers and pools their samples into rec. */
static int measure(bench_record *rec, const bench_job *job, unsigned long threads)
{
    bench_worker *w = calloc(threads, sizeof *w);
    pthread_t *tid = calloc(threads, sizeof *tid);
    int rc = HBS_CLI_OK;
    unsigned long started = 0;
    if (!w || !tid) {
        free(w);
        free(tid);
        return hbs_cli_error("bench", "out of memory");
    }
    for (unsigned long i = 0; i < threads; i++)
        w[i].job = job;
    if (threads == 1) {
        worker_main(&w[0]);
        started = 1;
    } else {
        for (; started < threads; started++)
            if (pthread_create(&tid[started], NULL, worker_main, &w[started]) != 0)
                break;
        for (unsigned long i = 0; i < started; i++)
            pthread_join(tid[i], NULL);
        if (started < threads)
            rc = hbs_cli_error("bench", "cannot start %lu threads", threads);
    }

    size_t total = 0;
    double first = 0, last = 0;
    for (unsigned long i = 0; i < started; i++) {
        if (w[i].error && rc == HBS_CLI_OK)
            rc = hbs_cli_error("bench", "%s %s failed: %s", hbs_slhdsa_name(job->p),
                               op_names[job->op], hbs_strerror(w[i].error));
        total += w[i].count;
        if (i == 0 || w[i].start < first)
            first = w[i].start;
        if (i == 0 || w[i].end > last)
            last = w[i].end;
    }
    double *all = rc == HBS_CLI_OK ? malloc((total ? total : 1) * sizeof *all) : NULL;
    if (rc == HBS_CLI_OK && !all)
        rc = hbs_cli_error("bench", "out of memory");
    if (all) {
        size_t k = 0;
        for (unsigned long i = 0; i < started; i++) {
            memcpy(all + k, w[i].samples, w[i].count * sizeof *all);
            k += w[i].count;
        }
        rec->p = job->p;
        rec->op = job->op;
        hbs_cli_stats_compute(&rec->st, all, total);
        rec->ops_per_s = last > first ? (double)total / (last - first) : 0;
        free(all);
    }
    for (unsigned long i = 0; i < threads; i++)
        free(w[i].samples);
    free(w);
    free(tid);
    return rc;
}

static const hbs_cli_column columns[] = {
    {"algorithm", 20, 1}, {"op", 6, 1},         {"backend", 12, 1},  {"threads", 7, 0},
    {"batch", 5, 0},      {"median ms", 11, 0}, {"min ms", 10, 0},   {"max ms", 10, 0},
    {"ops/s", 10, 0},     {"runs", 5, 0},       {"hashes/op", 10, 0}, {"ceiling ms", 10, 0},
    {"eff %", 6, 0},
};
#define NUM_COLUMNS (sizeof columns / sizeof columns[0])

static void print_header(FILE *out, const bench_args *a)
{
    char cpu[256], date[64], backend[128];
    time_t now = time(NULL);
    struct tm tm;
    hbs_cli_cpu_model(cpu, sizeof cpu);
    if (gmtime_r(&now, &tm))
        strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tm);
    else
        snprintf(date, sizeof date, "unknown");
    hbs_cli_backend_line(backend, sizeof backend);
    const char *commit = getenv("HBS_GIT_COMMIT");

    fprintf(out, "hbs %s bench, %s\n", hbs_version(), date);
    fprintf(out, "cpu: %s (%ld logical CPUs online)\n", cpu, sysconf(_SC_NPROCESSORS_ONLN));
    if (commit && *commit)
        fprintf(out, "commit: %s\n", commit);
    fprintf(out, "backend: %s per operation; %lu worker%s at once\n", backend, a->workers,
            a->workers == 1 ? "" : "s");
    if (hbs_gpu_device_count() > 0) {
        char gpu[256];
        if (hbs_gpu_device_name(0, gpu, sizeof gpu) != 0)
            snprintf(gpu, sizeof gpu, "unknown");
        fprintf(out, "GPU: %s present, not used here ('hbs bench --gpu' measures it)\n", gpu);
    } else {
        fprintf(out, "GPU: not used (none in this build)\n");
    }
    if (a->iterations)
        fprintf(out, "runs: %lu per operation and worker\n", a->iterations);
    else
        fprintf(out, "runs: at least %d and %.2f s per operation and worker\n", MIN_SAMPLES,
                a->min_time);
    fprintf(out, "workload: 32-byte message, pure SLH-DSA, empty context, %s\n",
            a->batch > 1 ? "batch API (a signer with the top layer cached), deterministic"
                         : "hedged signing");
    fprintf(out, "hashes/op: SHA-2 compressions or Keccak permutations (PK.seed block "
                 "precomputed); ceiling: those at this backend's single-core rate, measured "
                 "now; eff: ops/s x ceiling / (threads x workers)\n\n");
}

static void print_row(FILE *out, const bench_record *r, const char *backend,
                      const bench_args *a)
{
    char th[32], bt[32], med[32], mn[32], mx[32], ops[32], runs[32], hs[32], ceil[32], eff[32];
    snprintf(th, sizeof th, "%lu", a->threads);
    snprintf(bt, sizeof bt, "%lu", a->batch);
    snprintf(med, sizeof med, "%.3f", r->st.median);
    snprintf(mn, sizeof mn, "%.3f", r->st.min);
    snprintf(mx, sizeof mx, "%.3f", r->st.max);
    snprintf(ops, sizeof ops, "%.1f", r->ops_per_s);
    snprintf(runs, sizeof runs, "%zu", r->st.count);
    snprintf(hs, sizeof hs, "%.0f", r->hashes);
    snprintf(ceil, sizeof ceil, "%.3f", r->ceiling_ms);
    snprintf(eff, sizeof eff, "%.0f", 100 * r->efficiency);
    const char *cells[NUM_COLUMNS] = {hbs_slhdsa_name(r->p), op_names[r->op], backend, th, bt,
                                      med, mn, mx, ops, runs, hs, ceil, eff};
    hbs_cli_table_row(out, columns, NUM_COLUMNS, cells);
}

/* The records as a JSON array, one object a line; `more` (may be NULL) holds further
 * records, already formatted (the stateful schemes'). */
static int write_json(const char *path, const bench_record *recs, size_t n,
                      const char *backend, const bench_args *a, const char *more)
{
    size_t cap = 64 + n * 512 + (more ? strlen(more) + 4 : 0), used = 0;
    char *buf = malloc(cap);
    if (!buf)
        return hbs_cli_error("bench", "out of memory");
    used += (size_t)snprintf(buf, cap, "[\n");
    for (size_t i = 0; i < n; i++) {
        const bench_record *r = &recs[i];
        used += (size_t)snprintf(
            buf + used, cap - used,
            "  {\"alg\": \"%s\", \"op\": \"%s\", \"backend\": \"%s\", \"threads\": %lu, "
            "\"workers\": %lu, \"batch\": %lu, \"median_ms\": %.6f, \"min_ms\": %.6f, "
            "\"max_ms\": %.6f, \"ops_per_s\": %.3f, \"runs\": %zu, \"hashes_per_op\": %.0f, "
            "\"hash_ceiling_ms\": %.6f, \"hash_efficiency\": %.4f}%s\n",
            hbs_slhdsa_name(r->p), op_names[r->op], backend, a->threads, a->workers, a->batch,
            r->st.median, r->st.min, r->st.max, r->ops_per_s, r->st.count, r->hashes,
            r->ceiling_ms, r->efficiency, i + 1 < n || (more && *more) ? "," : "");
    }
    if (more)
        used += (size_t)snprintf(buf + used, cap - used, "%s", more);
    used += (size_t)snprintf(buf + used, cap - used, "]\n");
    int rc = hbs_cli_write_file(path, (const uint8_t *)buf, used, 0);
    free(buf);
    return rc;
}

/* Keys and signatures for one parameter set, made before anything is timed. */
typedef struct {
    uint8_t sk[HBS_SLHDSA_MAX_SK_BYTES], pk[HBS_SLHDSA_MAX_PK_BYTES];
    uint8_t msg[32];
    uint8_t *sig;
    hbs_slhdsa_signer *signer;
    const uint8_t **msgs, **sigs, **pks;
    size_t *msglens, *siglens;
} bench_fixture;

static void free_fixture(bench_fixture *f)
{
    hbs_memzero(f->sk, sizeof f->sk);
    hbs_slhdsa_signer_free(f->signer);
    free(f->sig);
    free(f->msgs);
    free(f->sigs);
    free(f->pks);
    free(f->msglens);
    free(f->siglens);
    memset(f, 0, sizeof *f);
}

static int make_fixture(bench_fixture *f, const hbs_slhdsa_params *p, size_t batch)
{
    const size_t L = hbs_slhdsa_sig_bytes(p);
    memset(f, 0, sizeof *f);
    for (size_t i = 0; i < sizeof f->msg; i++)
        f->msg[i] = (uint8_t)i;
    f->sig = malloc(L);
    f->msgs = malloc(batch * sizeof *f->msgs);
    f->sigs = malloc(batch * sizeof *f->sigs);
    f->pks = malloc(batch * sizeof *f->pks);
    f->msglens = malloc(batch * sizeof *f->msglens);
    f->siglens = malloc(batch * sizeof *f->siglens);
    if (!f->sig || !f->msgs || !f->sigs || !f->pks || !f->msglens || !f->siglens) {
        free_fixture(f);
        return hbs_cli_error("bench", "out of memory");
    }
    int err = hbs_slhdsa_keygen(p, f->sk, f->pk);
    if (!err)
        err = hbs_slhdsa_sign(p, f->sig, f->msg, sizeof f->msg, NULL, 0, f->sk);
    if (!err)
        err = hbs_slhdsa_verify(p, f->sig, L, f->msg, sizeof f->msg, NULL, 0, f->pk);
    if (!err && batch > 1)
        err = hbs_slhdsa_signer_new(&f->signer, p, f->sk, 1);
    if (err) {
        free_fixture(f);
        return hbs_cli_error("bench", "%s: %s", hbs_slhdsa_name(p), hbs_strerror(err));
    }
    for (size_t i = 0; i < batch; i++) {
        f->msgs[i] = f->msg;
        f->msglens[i] = sizeof f->msg;
        f->sigs[i] = f->sig;
        f->siglens[i] = L;
        f->pks[i] = f->pk;
    }
    return HBS_CLI_OK;
}

static int run(int argc, char **argv)
{
    bench_args a;
    int rc = parse_args(&a, argc, argv);
    if (rc)
        return rc == HBS_CLI_DONE ? HBS_CLI_OK : rc;
    if (a.gpu_devices && hbs_gpu_device_count() > 0 && hbs_cli_gpu_devices(a.gpu_devices))
        return HBS_CLI_ERROR;
    if (a.gpu && a.nsalgs) {
        /* stateful sets: their GPU key generation, after the SLH-DSA sets named (if any) */
        if (a.nalgs)
            rc = hbs_cli_gpu_bench(a.algs, a.nalgs, a.ops, a.modes, a.batch, a.iterations,
                                   a.json);
        if (rc == HBS_CLI_OK)
            rc = hbs_cli_bench_stateful_gpu(a.salgs, a.nsalgs, a.ops[OP_KEYGEN],
                                            a.ops[OP_SIGN] || a.ops[OP_VERIFY],
                                            a.many_keys && a.ops[OP_SIGN], a.iterations,
                                            a.min_time, stdout);
        return rc;
    }
    if (a.gpu)
        return hbs_cli_gpu_bench(a.algs, a.nalgs, a.ops, a.modes, a.batch, a.iterations,
                                 a.json);

    /* Several workers already fill the cores: by default each runs single-threaded, which
     * also keeps them from queueing for the library's one shared thread pool. */
    if (!a.threads)
        a.threads = a.workers == 1 ? hbs_get_threads() : 1;
    if (hbs_set_threads((unsigned)a.threads) != HBS_OK)
        return hbs_cli_error("--threads", "%lu is more than the library allows", a.threads);

    /* With the JSON on stdout the table goes to stderr, so the two never mix. */
    FILE *out = a.json && hbs_cli_is_std(a.json) ? stderr : stdout;
    char backend[64];
    snprintf(backend, sizeof backend, "cpu-%s", hbs_backend_name());
    bench_record *recs = calloc(a.nalgs * NUM_OPS, sizeof *recs);
    if (!recs)
        return hbs_cli_error("bench", "out of memory");

    print_header(out, &a);
    if (a.nalgs)
        hbs_cli_table_header(out, columns, NUM_COLUMNS);
    size_t nrec = 0;
    for (size_t i = 0; i < a.nalgs && rc == HBS_CLI_OK; i++) {
        const hbs_slhdsa_params *p = a.algs[i];
        bench_fixture fx;
        hbs_cli_hashes raw;
        rc = make_fixture(&fx, p, a.batch);
        if (rc != HBS_CLI_OK)
            break;
        hbs_cli_hash_raw(p, &raw);
        for (int op = 0; op < NUM_OPS && rc == HBS_CLI_OK; op++) {
            if (!a.ops[op])
                continue;
            bench_job job = {p, op, fx.sk, fx.pk, fx.msg, fx.sig, sizeof fx.msg, a.batch,
                             fx.signer, fx.msgs, fx.msglens, fx.sigs, fx.pks, fx.siglens,
                             a.iterations, a.min_time};
            bench_record *r = &recs[nrec];
            rc = measure(r, &job, a.workers);
            if (rc != HBS_CLI_OK)
                break;
            hbs_cli_hashes work;
            hbs_cli_hash_model(p, op, &work);
            r->hashes = work.sha256 + work.sha512 + work.keccak;
            r->ceiling_ms = 1e3 * hbs_cli_hash_seconds(&work, &raw);
            r->ops_per_s *= (double)a.batch;
            /* operations per second against what the busy cores could hash */
            const double cores = (double)(a.threads * a.workers);
            r->efficiency = r->ops_per_s * r->ceiling_ms / 1e3 / cores;
            print_row(out, r, backend, &a);
            nrec++;
        }
        free_fixture(&fx);
    }
    char *more = NULL;
    if (rc == HBS_CLI_OK && a.nsalgs)
        rc = hbs_cli_bench_stateful(a.salgs, a.nsalgs, a.ops[OP_KEYGEN], a.ops[OP_SIGN],
                                    a.ops[OP_VERIFY], a.threads,
                                    a.iterations, a.min_time, a.json ? &more : NULL, out);
    if (rc == HBS_CLI_OK && a.json)
        rc = write_json(a.json, recs, nrec, backend, &a, more);
    free(more);
    free(recs);
    return rc;
}

const hbs_cli_command hbs_cli_cmd_bench = {
    "bench",
    run,
    "[-a ALG]... [--threads N] [--workers W] [--batch B] [--json FILE] "
    "[--ops keygen,sign,verify] [--min-time SECONDS] [--iterations N] [--stateful] [--gpu] "
    "[--modes LIST] [--many-keys]",
    "Measure key generation, signing and verification: median, min, max, throughput and "
    "distance to the hash ceiling.",
    "Each operation runs at least 3 times and for --min-time seconds (or exactly --iterations\n"
    "times) in each of --workers callers, on --threads library threads; the latencies of all\n"
    "workers give the median, min and max (per call: a batch of --batch messages), and ops/s\n"
    "is all operations over the wall time. The JSON file is an array of records {alg, op,\n"
    "backend, threads, workers, batch, median_ms, min_ms, max_ms, ops_per_s, runs,\n"
    "hashes_per_op, hash_ceiling_ms, hash_efficiency}.",
    options,
};
