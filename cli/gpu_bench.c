/* `hbs bench --gpu`: GPU key generation, signing and verification, against the device's
 * hash ceiling.
 *
 * For every set: keygen of a batch of keys from seeds; one signature alone (latency, batch
 * 1); a batch signed under a key each; a batch signed under one key with its top layer
 * cached (a GPU signer); batch verification end to end (host memory in and out) and
 * device-resident (data already on the GPU). Each figure is the median of several timed
 * runs after a warm-up, wall clock around the call. The ideal rate is the device's hash
 * ceiling over the hashes the operation needs (hashrate.c's model); efficiency is the
 * measured rate over the ideal one. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch.h"
#include "cli.h"
#include "hbs/gpu.h"

typedef struct {
    const hbs_slhdsa_params *p;
    const char *op, *mode;
    size_t batch, runs;
    hbs_cli_stats st;
    double ops_per_s, hashes, ceiling_ms, efficiency;
} gpu_record;

static const hbs_cli_column columns[] = {
    {"algorithm", 20, 1}, {"op", 6, 1},       {"mode", 14, 1},    {"batch", 6, 0},
    {"median ms", 11, 0}, {"min ms", 10, 0},  {"ops/s", 12, 0},   {"hashes/op", 10, 0},
    {"ideal/s", 12, 0},   {"eff %", 6, 0},
};
#define NUM_COLUMNS (sizeof columns / sizeof columns[0])

/* Everything one set's measurements use, made before anything is timed. */
typedef struct {
    size_t n, sb, count;
    uint8_t *seeds, *sks, *pks, *sigs, *out, *msgbuf, *mprime; /* out: timed signing */
    const uint8_t **msgs, **sigp;
    size_t *msglens, *siglens;
    int *results;
} fixture;

static void fixture_free(fixture *f)
{
    if (f->sks)
        hbs_memzero(f->sks, f->count * 4 * f->n);
    free(f->seeds);
    free(f->sks);
    free(f->pks);
    free(f->sigs);
    free(f->out);
    free(f->msgbuf);
    free(f->mprime);
    free(f->msgs);
    free(f->sigp);
    free(f->msglens);
    free(f->siglens);
    free(f->results);
    memset(f, 0, sizeof *f);
}

static int fixture_make(fixture *f, const hbs_slhdsa_params *p, size_t count, size_t outcount)
{
    memset(f, 0, sizeof *f);
    f->n = hbs_slhdsa_n(p);
    f->sb = hbs_slhdsa_sig_bytes(p);
    f->count = count;
    f->seeds = malloc(count * 3 * f->n);
    f->sks = malloc(count * 4 * f->n);
    f->pks = malloc(count * 2 * f->n);
    f->sigs = malloc(count * f->sb);
    f->out = malloc(outcount * f->sb);
    f->msgbuf = malloc(count * 32);
    f->mprime = malloc(count * 34);
    f->msgs = malloc(count * sizeof *f->msgs);
    f->sigp = malloc(count * sizeof *f->sigp);
    f->msglens = malloc(count * sizeof *f->msglens);
    f->siglens = malloc(count * sizeof *f->siglens);
    f->results = malloc(count * sizeof *f->results);
    if (!f->seeds || !f->sks || !f->pks || !f->sigs || !f->out || !f->msgbuf || !f->mprime || !f->msgs ||
        !f->sigp || !f->msglens || !f->siglens || !f->results)
        return HBS_ERR_NO_MEMORY;
    int err = hbs_randombytes(f->seeds, count * 3 * f->n);
    if (!err)
        err = hbs_randombytes(f->msgbuf, count * 32);
    for (size_t i = 0; i < count; i++) {
        f->msgs[i] = f->msgbuf + i * 32;
        f->msglens[i] = 32;
        f->sigp[i] = f->sigs + i * f->sb;
        f->siglens[i] = f->sb;
        /* M' of pure signing with an empty context: 0, 0, M */
        f->mprime[i * 34] = 0;
        f->mprime[i * 34 + 1] = 0;
        memcpy(f->mprime + i * 34 + 2, f->msgs[i], 32);
    }
    if (!err)
        err = hbs_gpu_slhdsa_keygen_many(p, f->sks, f->pks, f->seeds, count);
    if (!err)
        err = hbs_gpu_slhdsa_sign_many(p, f->sigs, f->msgs, f->msglens, count, NULL, 0,
                                       HBS_PREHASH_NONE, f->sks, count, NULL);
    return err;
}

/* What one timed call needs. */
typedef struct {
    const hbs_slhdsa_params *p;
    fixture *f;
    size_t batch;
    hbs_gpu_signer *signer;
    void *d_sigs, *d_mp, *d_off, *d_len, *d_pks, *d_res;
    uint8_t *h_sigs; /* page-locked (hbs_gpu_host_alloc): the pinned modes' signatures */
    const uint8_t **h_sigp;
} call_ctx;

typedef int (*call_fn)(call_ctx *c);

static int call_keygen(call_ctx *c)
{
    fixture *f = c->f;
    return hbs_gpu_slhdsa_keygen_many(c->p, f->sks, f->pks, f->seeds, c->batch);
}

/* The batch signed into out, a key each. */
static int sign_into(call_ctx *c, uint8_t *out)
{
    fixture *f = c->f;
    return hbs_gpu_slhdsa_sign_many(c->p, out, f->msgs, f->msglens, c->batch, NULL, 0,
                                    HBS_PREHASH_NONE, f->sks, c->batch, NULL);
}

/* The batch's signatures at sigp verified, a key each. */
static int verify_from(call_ctx *c, const uint8_t *const *sigp)
{
    fixture *f = c->f;
    return hbs_gpu_slhdsa_verify_many(c->p, f->results, sigp, f->siglens, f->msgs, f->msglens,
                                      c->batch, NULL, 0, HBS_PREHASH_NONE, f->pks, c->batch);
}

static int call_sign(call_ctx *c) { return sign_into(c, c->f->out); }

static int call_sign_one(call_ctx *c)
{
    fixture *f = c->f;
    return hbs_gpu_slhdsa_sign(c->p, f->out, f->msgs[0], 32, NULL, 0, HBS_PREHASH_NONE, f->sks,
                               NULL);
}

static int call_sign_signer(call_ctx *c)
{
    fixture *f = c->f;
    return hbs_gpu_signer_sign_many(c->signer, f->out, f->msgs, f->msglens, c->batch, NULL, 0,
                                    HBS_PREHASH_NONE, NULL);
}

static int call_verify(call_ctx *c) { return verify_from(c, c->f->sigp); }

static int call_sign_pinned(call_ctx *c) { return sign_into(c, c->h_sigs); }

static int call_verify_pinned(call_ctx *c) { return verify_from(c, c->h_sigp); }

/* The pinned modes' buffer: the fixture's signatures in page-locked memory, one after
 * another (verification takes them from there; signing writes over them the same bytes). */
static int pinned_make(call_ctx *c)
{
    fixture *f = c->f;
    int err = hbs_gpu_host_alloc((void **)&c->h_sigs, c->batch * f->sb);
    if (!err && !(c->h_sigp = malloc(c->batch * sizeof *c->h_sigp)))
        err = HBS_ERR_NO_MEMORY;
    if (!err) {
        memcpy(c->h_sigs, f->sigs, c->batch * f->sb);
        for (size_t i = 0; i < c->batch; i++)
            c->h_sigp[i] = c->h_sigs + i * f->sb;
    }
    return err;
}

static void pinned_free(call_ctx *c)
{
    hbs_gpu_host_free(c->h_sigs);
    free(c->h_sigp);
    c->h_sigs = NULL;
    c->h_sigp = NULL;
}

static int call_verify_device(call_ctx *c)
{
    return hbs_gpu_slhdsa_verify_device(c->p, hbs_cli_first_gpu(), c->d_res, c->d_sigs, c->d_mp, c->d_off,
                                        c->d_len, c->batch, c->d_pks, c->batch);
}

/* Uploads the fixture for the device-resident calls (signatures must be made already). */
static int device_upload(call_ctx *c)
{
    fixture *f = c->f;
    const size_t count = c->batch;
    uint64_t *off = malloc(count * sizeof *off);
    uint32_t *len = malloc(count * sizeof *len);
    int err = off && len ? 0 : HBS_ERR_NO_MEMORY;
    for (size_t i = 0; !err && i < count; i++) {
        off[i] = i * 34;
        len[i] = 34;
    }
    if (!err) err = hbs_gpu_alloc(hbs_cli_first_gpu(), &c->d_sigs, count * f->sb);
    if (!err) err = hbs_gpu_alloc(hbs_cli_first_gpu(), &c->d_mp, count * 34);
    if (!err) err = hbs_gpu_alloc(hbs_cli_first_gpu(), &c->d_off, count * sizeof *off);
    if (!err) err = hbs_gpu_alloc(hbs_cli_first_gpu(), &c->d_len, count * sizeof *len);
    if (!err) err = hbs_gpu_alloc(hbs_cli_first_gpu(), &c->d_pks, count * 2 * f->n);
    if (!err) err = hbs_gpu_alloc(hbs_cli_first_gpu(), &c->d_res, count * sizeof(int));
    if (!err) err = hbs_gpu_copy_to(hbs_cli_first_gpu(), c->d_sigs, f->sigs, count * f->sb);
    if (!err) err = hbs_gpu_copy_to(hbs_cli_first_gpu(), c->d_mp, f->mprime, count * 34);
    if (!err) err = hbs_gpu_copy_to(hbs_cli_first_gpu(), c->d_off, off, count * sizeof *off);
    if (!err) err = hbs_gpu_copy_to(hbs_cli_first_gpu(), c->d_len, len, count * sizeof *len);
    if (!err) err = hbs_gpu_copy_to(hbs_cli_first_gpu(), c->d_pks, f->pks, count * 2 * f->n);
    free(off);
    free(len);
    return err;
}

static void device_free(call_ctx *c)
{
    hbs_gpu_free(hbs_cli_first_gpu(), c->d_sigs);
    hbs_gpu_free(hbs_cli_first_gpu(), c->d_mp);
    hbs_gpu_free(hbs_cli_first_gpu(), c->d_off);
    hbs_gpu_free(hbs_cli_first_gpu(), c->d_len);
    hbs_gpu_free(hbs_cli_first_gpu(), c->d_pks);
    hbs_gpu_free(hbs_cli_first_gpu(), c->d_res);
}

/* A warm-up call, then `runs` timed ones. */
static int measure(gpu_record *r, call_fn fn, call_ctx *c, size_t runs)
{
    double *ms = malloc(runs * sizeof *ms);
    if (!ms)
        return HBS_ERR_NO_MEMORY;
    int err = fn(c);
    for (size_t i = 0; !err && i < runs; i++) {
        double t0 = hbs_cli_now();
        err = fn(c);
        ms[i] = 1e3 * (hbs_cli_now() - t0);
    }
    if (!err) {
        hbs_cli_stats_compute(&r->st, ms, runs);
        r->runs = runs;
        r->ops_per_s = r->st.median > 0 ? 1e3 * (double)r->batch / r->st.median : 0;
    }
    free(ms);
    return err;
}

static void fill_model(gpu_record *r, int op)
{
    hbs_cli_hashes w;
    hbs_cli_hash_model(r->p, op, &w);
    r->hashes = w.sha256 + w.sha512 + w.keccak;
    r->ceiling_ms = hbs_cli_gpu_ceiling_ms(&w);
    r->efficiency = r->ops_per_s * r->ceiling_ms / 1e3;
}

static void print_row(FILE *out, const gpu_record *r)
{
    char bt[32], med[32], mn[32], ops[32], hs[32], ideal[32], eff[32];
    snprintf(bt, sizeof bt, "%zu", r->batch);
    snprintf(med, sizeof med, "%.4f", r->st.median);
    snprintf(mn, sizeof mn, "%.4f", r->st.min);
    snprintf(ops, sizeof ops, "%.0f", r->ops_per_s);
    snprintf(hs, sizeof hs, "%.0f", r->hashes);
    snprintf(ideal, sizeof ideal, "%.0f", r->ceiling_ms > 0 ? 1e3 / r->ceiling_ms : 0);
    snprintf(eff, sizeof eff, "%.1f", 100 * r->efficiency);
    const char *cells[NUM_COLUMNS] = {hbs_slhdsa_name(r->p), r->op, r->mode, bt, med, mn, ops,
                                      hs, ideal, eff};
    hbs_cli_table_row(out, columns, NUM_COLUMNS, cells);
    fflush(out);
}

static int write_json(const char *path, const gpu_record *recs, size_t n, const char *gpu,
                      int ngpus)
{
    size_t cap = 64 + n * 640, used = 0;
    char *buf = malloc(cap);
    if (!buf)
        return hbs_cli_error("bench", "out of memory");
    used += (size_t)snprintf(buf, cap, "[\n");
    for (size_t i = 0; i < n; i++) {
        const gpu_record *r = &recs[i];
        used += (size_t)snprintf(
            buf + used, cap - used,
            "  {\"alg\": \"%s\", \"op\": \"%s\", \"backend\": \"gpu-cuda %s\", \"mode\": \"%s\", "
            "\"threads\": %d, \"workers\": 1, \"batch\": %zu, \"median_ms\": %.6f, "
            "\"min_ms\": %.6f, \"max_ms\": %.6f, \"ops_per_s\": %.3f, \"runs\": %zu, "
            "\"hashes_per_op\": %.0f, \"hash_ceiling_ms\": %.6f, \"hash_efficiency\": %.4f, "
            "\"efficiency\": %.4f}%s\n",
            hbs_slhdsa_name(r->p), r->op, gpu, r->mode, ngpus, r->batch, r->st.median,
            r->st.min, r->st.max, r->ops_per_s, r->runs, r->hashes, r->ceiling_ms,
            r->efficiency, r->efficiency, i + 1 < n ? "," : "");
    }
    used += (size_t)snprintf(buf + used, cap - used, "]\n");
    int rc = hbs_cli_write_file(path, (const uint8_t *)buf, used, 0);
    free(buf);
    return rc;
}

/* Batch sizes: enough to fill the GPU, small enough to keep a run short. */
static size_t sign_batch(const hbs_slhdsa_params *p)
{
    const char *name = hbs_slhdsa_name(p);
    const int small = name[strlen(name) - 1] == 's';
    if (!small)
        return hbs_slhdsa_n(p) == 16 ? 16384 : 8192;
    return hbs_slhdsa_n(p) == 16 ? 4096 : 1024;
}

int hbs_cli_gpu_bench(const hbs_slhdsa_params *const *algs, size_t nalgs, const int *ops,
                      unsigned modes, unsigned long batch, unsigned long iterations,
                      const char *json)
{
    char gpu[256];
    const int ngpus = hbs_gpu_devices_used(NULL, 0);
    if (ngpus == 0)
        return hbs_cli_error("bench --gpu", "%s", hbs_strerror(HBS_ERR_NO_GPU));
    if (hbs_gpu_device_name(hbs_cli_first_gpu(), gpu, sizeof gpu) != 0)
        snprintf(gpu, sizeof gpu, "unknown GPU");
    FILE *out = json && hbs_cli_is_std(json) ? stderr : stdout;
    fprintf(out, "hbs %s bench --gpu\n", hbs_version());
    fprintf(out, "GPU: %s (%d in use)\n", gpu, ngpus);
    fprintf(out, "workload: 32-byte messages, pure SLH-DSA, empty context, deterministic; "
                 "wall clock around each call (copies included, except device-resident)\n");
    fprintf(out, "ideal/s: hash ceiling (H200: %.2f G SHA-256, %.2f G SHA-512, %.2f G Keccak "
                 "per s) over hashes/op; eff: ops/s over ideal/s\n\n",
            HBS_CLI_GPU_CEIL_SHA256 / 1e9, HBS_CLI_GPU_CEIL_SHA512 / 1e9,
            HBS_CLI_GPU_CEIL_KECCAK / 1e9);
    hbs_cli_table_header(out, columns, NUM_COLUMNS);

    gpu_record *recs = calloc(nalgs * 10, sizeof *recs);
    size_t nrec = 0;
    int rc = recs ? HBS_CLI_OK : hbs_cli_error("bench", "out of memory");
    for (size_t a = 0; a < nalgs && rc == HBS_CLI_OK; a++) {
        const hbs_slhdsa_params *p = algs[a];
        const size_t sbatch = batch > 1 ? batch : sign_batch(p);
        /* verification is cheap: big batches (where memory allows) keep the GPU full */
        const size_t vbatch = batch > 1 ? batch : hbs_slhdsa_n(p) == 16 && sbatch > 4096 ? 65536 : 16384;
        const size_t kbatch = batch > 1 ? batch : sign_batch(p) * 4;
        /* the fixture signs as many messages as the largest measurement takes (for 's' sets a
         * big verification batch costs seconds to make): only those of the modes asked for */
        const int sign_many =
            ops[1] && (modes & (HBS_CLI_GPU_BATCH | HBS_CLI_GPU_CACHED | HBS_CLI_GPU_PINNED));
        const int verify_many =
            ops[2] && (modes & (HBS_CLI_GPU_BATCH | HBS_CLI_GPU_DEVICE | HBS_CLI_GPU_PINNED));
        size_t count = 1;
        if (sign_many && sbatch > count)
            count = sbatch;
        if (verify_many && vbatch > count)
            count = vbatch;
        if (ops[0] && (modes & HBS_CLI_GPU_BATCH) && kbatch > count)
            count = kbatch;
        const size_t runs = iterations ? iterations : 5;
        fixture f;
        call_ctx c;
        memset(&c, 0, sizeof c);
        int err = fixture_make(&f, p, count, sign_many ? sbatch : 1);
        c.p = p;
        c.f = &f;
        struct {
            int op_index;
            unsigned mode_bit;
            const char *op, *mode;
            call_fn fn;
            size_t batch, runs;
        } plan[] = {
            {0, HBS_CLI_GPU_BATCH, "keygen", "batch", call_keygen, kbatch, runs},
            {1, HBS_CLI_GPU_LATENCY, "sign", "latency", call_sign_one, 1, runs * 4},
            {1, HBS_CLI_GPU_BATCH, "sign", "batch", call_sign, sbatch, runs},
            {1, HBS_CLI_GPU_CACHED, "sign", "signer-cached", call_sign_signer, sbatch, runs},
            {2, HBS_CLI_GPU_BATCH, "verify", "batch", call_verify, vbatch, runs},
            {2, HBS_CLI_GPU_DEVICE, "verify", "device", call_verify_device, vbatch, runs},
            {1, HBS_CLI_GPU_PINNED, "sign", "pinned", call_sign_pinned, sbatch, runs},
            {2, HBS_CLI_GPU_PINNED, "verify", "pinned", call_verify_pinned, vbatch, runs},
        };
        if (!err && ops[1] && (modes & HBS_CLI_GPU_CACHED))
            err = hbs_gpu_signer_new(&c.signer, p, f.sks);
        for (size_t i = 0; !err && i < sizeof plan / sizeof plan[0]; i++) {
            if (!ops[plan[i].op_index] || !(modes & plan[i].mode_bit))
                continue;
            gpu_record *r = &recs[nrec];
            r->p = p;
            r->op = plan[i].op;
            r->mode = plan[i].mode;
            r->batch = plan[i].batch;
            c.batch = plan[i].batch;
            if (plan[i].fn == call_verify_device)
                err = device_upload(&c);
            if (plan[i].mode_bit == HBS_CLI_GPU_PINNED)
                err = pinned_make(&c);
            if (!err)
                err = measure(r, plan[i].fn, &c, plan[i].runs);
            if (!err && plan[i].op_index == 2) {
                /* the figures only count if every signature was accepted */
                int *res = malloc(c.batch * sizeof *res);
                if (plan[i].fn == call_verify_device && res)
                    err = hbs_gpu_copy_from(hbs_cli_first_gpu(), res, c.d_res, c.batch * sizeof *res);
                else if (res)
                    memcpy(res, f.results, c.batch * sizeof *res);
                for (size_t k = 0; !err && res && k < c.batch; k++)
                    if (res[k])
                        err = HBS_ERR_VERIFY_FAILED;
                free(res);
            }
            if (plan[i].fn == call_verify_device)
                device_free(&c);
            pinned_free(&c);
            if (err)
                break;
            fill_model(r, plan[i].op_index);
            print_row(out, r);
            nrec++;
        }
        if (err)
            rc = hbs_cli_error("bench --gpu", "%s: %s %s", hbs_slhdsa_name(p), hbs_strerror(err),
                               err == HBS_ERR_GPU ? hbs_gpu_last_error() : "");
        hbs_gpu_signer_free(c.signer);
        fixture_free(&f);
    }
    if (rc == HBS_CLI_OK && json)
        rc = write_json(json, recs, nrec, gpu, ngpus);
    free(recs);
    return rc;
}
