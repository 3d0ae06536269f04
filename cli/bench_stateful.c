/* hbs bench for the stateful schemes (LMS/HSS, XMSS/XMSS^MT): key generation (in memory,
 * on the library's threads), signing through a key file with the state update written
 * before each signature (once without fsync, to show the compute, and once with it, as a
 * real signer runs), and verification. Same table and JSON records as the SLH-DSA bench;
 * the hash-count fields are 0 here (no model yet for these schemes). */
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "batch.h"
#include "bench_stateful.h"
#include "core/leaf_engine.h"
#include "hbs/gpu.h"
#include "hbs/lms.h"
#include "hbs/xmss.h"
#include "lms/hss.h"
#include "xmss/xmss.h"

/* Sets the performance targets name; measured by default. */
const char *const hbs_cli_stateful_bench_default[] = {
    "LMS_SHA256_M32_H10/LMOTS_SHA256_N32_W8",
    "LMS_SHA256_M32_H15/LMOTS_SHA256_N32_W8",
    "LMS_SHA256_M32_H10/LMOTS_SHA256_N32_W8,LMS_SHA256_M32_H10/LMOTS_SHA256_N32_W8",
    "LMS_SHA256_M32_H10/LMOTS_SHA256_N32_W4",
    "XMSS-SHA2_10_256",
    "XMSSMT-SHA2_20/2_256",
    NULL,
};

enum { SOP_KEYGEN, SOP_SIGN, SOP_SIGN_FSYNC, SOP_VERIFY, NUM_SOPS };
static const char *const sop_names[NUM_SOPS] = {"keygen", "sign", "sign+fsync", "verify"};

typedef struct {
    const char *alg;
    int op;
    hbs_cli_stats st;
    double ops_per_s;
    double hashes; /* per key generation (hashrate_stateful.c); 0 for the other operations */
} srecord;

#define MAX_SAMPLES 100000

/* In-memory key generation (no file), on the library's threads. */
static int keygen_once(const char *alg)
{
    uint8_t pk[HBS_STATEFUL_MAX_PK_BYTES];
    size_t pklen;
    int err;
    if (hbs_stateful_family_of(alg) == HBS_STATEFUL_HSS) {
        hbs_hss_params p;
        hbs_hss_key *k = NULL;
        if ((err = hbs_hss_params_parse(&p, alg)) != HBS_OK)
            return err;
        err = hbs_hss_keygen(&k, pk, sizeof pk, &pklen, &p, NULL, 0, NULL, NULL);
        hbs_hss_key_free(k);
    } else {
        hbs_xmss_key *k = NULL;
        err = hbs_xmss_keygen(&k, pk, sizeof pk, &pklen, hbs_xmss_params_by_name(alg), 0, NULL,
                              0, NULL, NULL);
        hbs_xmss_key_free(k);
    }
    return err;
}

typedef struct {
    double *samples;
    size_t count;
    double start, end;
} sample_set;

static int keep_going(const sample_set *s, double min_time, unsigned long iterations)
{
    if (s->count >= MAX_SAMPLES)
        return 0;
    if (iterations)
        return s->count < iterations;
    return s->count < 3 || hbs_cli_now() - s->start < min_time;
}

static void add_sample(sample_set *s, double t0)
{
    s->samples[s->count++] = (hbs_cli_now() - t0) * 1e3;
}

static int measure_keygen(sample_set *s, const char *alg, double min_time,
                          unsigned long iterations)
{
    int err = HBS_OK;
    s->start = hbs_cli_now();
    while (err == HBS_OK && keep_going(s, min_time, iterations)) {
        double t0 = hbs_cli_now();
        err = keygen_once(alg);
        add_sample(s, t0);
    }
    s->end = hbs_cli_now();
    return err;
}

/* Signs through a key file until the time is up or the key is used up; then verifies the
 * last signature as often (verify set). */
static int measure_sign(sample_set *s, sample_set *v, const char *alg, const char *path,
                        int sync, double min_time, unsigned long iterations)
{
    uint8_t pk[HBS_STATEFUL_MAX_PK_BYTES], msg[32] = {1}, *sig = NULL;
    size_t pklen, siglen = 0;
    hbs_stateful_key *k = NULL;
    char lock[4200];
    int err;

    unlink(path);
    err = hbs_stateful_keygen(alg, path, pk, sizeof pk, &pklen, NULL, 0, NULL, NULL);
    if (err == HBS_OK)
        err = hbs_stateful_open(&k, path, sync ? 0 : HBS_STATEFUL_NO_SYNC, 1);
    if (err == HBS_OK && !(sig = malloc(hbs_stateful_sig_bytes(k))))
        err = HBS_ERR_NO_MEMORY;
    s->start = hbs_cli_now();
    while (err == HBS_OK && hbs_stateful_key_remaining(k) > 0 &&
           keep_going(s, min_time, iterations)) {
        double t0 = hbs_cli_now();
        msg[0]++;
        err = hbs_stateful_sign(k, sig, hbs_stateful_sig_bytes(k), &siglen, msg, sizeof msg);
        add_sample(s, t0);
    }
    s->end = hbs_cli_now();
    if (err == HBS_OK && v) {
        v->start = hbs_cli_now();
        while (err == HBS_OK && keep_going(v, min_time, iterations)) {
            double t0 = hbs_cli_now();
            err = hbs_stateful_verify(hbs_stateful_key_family(k), pk, pklen, msg, sizeof msg,
                                      sig, siglen);
            add_sample(v, t0);
        }
        v->end = hbs_cli_now();
    }
    hbs_stateful_close(k);
    free(sig);
    unlink(path);
    snprintf(lock, sizeof lock, "%s.lock", path);
    unlink(lock);
    return err;
}

static void finish(srecord *r, const char *alg, int op, sample_set *s)
{
    r->alg = alg;
    r->op = op;
    r->ops_per_s = s->end > s->start ? (double)s->count / (s->end - s->start) : 0;
    r->hashes = 0;
    hbs_cli_hashes w;
    if (op == SOP_KEYGEN && hbs_cli_stateful_keygen_model(alg, &w) == 0)
        r->hashes = w.sha256 + w.sha512 + w.keccak;
    hbs_cli_stats_compute(&r->st, s->samples, s->count);
    s->count = 0;
}

static const hbs_cli_column scolumns[] = {
    {"algorithm", 78, 1}, {"op", 10, 1},      {"threads", 7, 0}, {"median ms", 12, 0},
    {"min ms", 11, 0},     {"max ms", 11, 0}, {"ops/s", 11, 0},  {"runs", 6, 0},
};
#define NUM_SCOLUMNS (sizeof scolumns / sizeof scolumns[0])

static void print_srow(FILE *out, const srecord *r, unsigned long threads)
{
    char th[32], med[32], mn[32], mx[32], ops[32], runs[32];
    /* what the operation was allowed: key generation, LMS/HSS signing (a step's leaves beside
     * the one-time signature) and HSS verification (independent levels) use the threads */
    unsigned long t = threads;
    snprintf(th, sizeof th, "%lu", t);
    snprintf(med, sizeof med, "%.3f", r->st.median);
    snprintf(mn, sizeof mn, "%.3f", r->st.min);
    snprintf(mx, sizeof mx, "%.3f", r->st.max);
    snprintf(ops, sizeof ops, "%.1f", r->ops_per_s);
    snprintf(runs, sizeof runs, "%zu", r->st.count);
    const char *cells[NUM_SCOLUMNS] = {r->alg, sop_names[r->op], th, med, mn, mx, ops, runs};
    hbs_cli_table_row(out, scolumns, NUM_SCOLUMNS, cells);
}

/* The records as JSON objects, one a line, each line ending ",\n" but the last. */
static char *json_rows(const srecord *recs, size_t n, const char *backend, unsigned long threads)
{
    size_t cap = 64 + n * 640, used = 0;
    char *buf = malloc(cap);
    if (!buf)
        return NULL;
    buf[0] = 0;
    for (size_t i = 0; i < n; i++) {
        const srecord *r = &recs[i];
        used += (size_t)snprintf(
            buf + used, cap - used,
            "  {\"alg\": \"%s\", \"op\": \"%s\", \"backend\": \"%s\", \"threads\": %lu, "
            "\"workers\": 1, \"batch\": 1, \"median_ms\": %.6f, \"min_ms\": %.6f, "
            "\"max_ms\": %.6f, \"ops_per_s\": %.3f, \"runs\": %zu, \"hashes_per_op\": %.0f, "
            "\"hash_ceiling_ms\": 0, \"hash_efficiency\": 0}%s\n",
            r->alg, sop_names[r->op], backend, threads,
            r->st.median, r->st.min, r->st.max, r->ops_per_s, r->st.count, r->hashes,
            i + 1 < n ? "," : "");
    }
    return buf;
}

int hbs_cli_bench_stateful(const char *const *algs, size_t nalgs, int do_keygen, int do_sign,
                           int do_verify, unsigned long threads, unsigned long iterations,
                           double min_time, char **json, FILE *out)
{
    char dir[] = "/tmp/hbs-bench-XXXXXX", path[64];
    sample_set s = {0}, v = {0};
    srecord *recs = calloc(nalgs * NUM_SOPS, sizeof *recs);
    size_t nrec = 0;
    int rc = HBS_CLI_OK, err = HBS_OK;
    char backend[64];

    for (size_t i = 0; i < nalgs; i++)
        if (hbs_stateful_family_of(algs[i]) < 0)
            return hbs_cli_error("-a", "unknown algorithm '%s' (see 'hbs list')", algs[i]);
    s.samples = malloc(MAX_SAMPLES * sizeof *s.samples);
    v.samples = malloc(MAX_SAMPLES * sizeof *v.samples);
    if (!recs || !s.samples || !v.samples || !mkdtemp(dir)) {
        free(recs);
        free(s.samples);
        free(v.samples);
        return hbs_cli_error("bench", "out of memory or no temporary folder");
    }
    snprintf(path, sizeof path, "%s/key.state", dir);
    if (threads && hbs_set_threads((unsigned)threads) != HBS_OK)
        rc = hbs_cli_error("--threads", "cannot use %lu threads", threads);
    threads = hbs_get_threads();
    snprintf(backend, sizeof backend, "cpu-%s", hbs_backend_name());
    fprintf(out, "\nstateful schemes: %lu library thread(s); keygen in memory; sign through a key "
                 "file (state written before each signature: 'sign' without fsync, "
                 "'sign+fsync' as a real signer); verify of the last signature\n",
            threads);
    hbs_cli_table_header(out, scolumns, NUM_SCOLUMNS);
    for (size_t i = 0; rc == HBS_CLI_OK && err == HBS_OK && i < nalgs; i++) {
        if (do_keygen && (err = measure_keygen(&s, algs[i], min_time, iterations)) == HBS_OK) {
            finish(&recs[nrec], algs[i], SOP_KEYGEN, &s);
            print_srow(out, &recs[nrec++], threads);
        }
        if (err == HBS_OK && (do_sign || do_verify)) {
            err = measure_sign(&s, do_verify ? &v : NULL, algs[i], path, 0, min_time, iterations);
            if (err == HBS_OK && do_sign) {
                finish(&recs[nrec], algs[i], SOP_SIGN, &s);
                print_srow(out, &recs[nrec++], threads);
            }
            s.count = 0;
            if (err == HBS_OK && do_verify) {
                finish(&recs[nrec], algs[i], SOP_VERIFY, &v);
                print_srow(out, &recs[nrec++], threads);
            }
        }
        if (err == HBS_OK && do_sign) {
            err = measure_sign(&s, NULL, algs[i], path, 1, min_time / 2, iterations);
            if (err == HBS_OK) {
                finish(&recs[nrec], algs[i], SOP_SIGN_FSYNC, &s);
                print_srow(out, &recs[nrec++], threads);
            }
        }
        fflush(out);
    }
    if (err != HBS_OK)
        rc = hbs_cli_error("bench", "%s", hbs_strerror(err));
    if (rc == HBS_CLI_OK && json && !(*json = json_rows(recs, nrec, backend, threads)))
        rc = hbs_cli_error("bench", "out of memory");
    rmdir(dir);
    free(recs);
    free(s.samples);
    free(v.samples);
    return rc;
}

/* ---- key generation on the GPU (`hbs bench --gpu --stateful`) ----------------------------
 * The same key generation with the leaves from the GPU engine: in memory (the compute), and
 * through hbs_gpu_stateful_keygen to a key file (what a user waits for, fsyncs included);
 * beside it the CPU in memory on every core, once (a tall tree takes minutes there; past
 * 2^16 leaves it is left out: the CPU's time grows with the leaves, so a 2^16 row scales). */

/* Leaves of the trees key generation builds (the first tree of every level or layer). */
static double keygen_leaves(const char *alg)
{
    double leaves = 0;
    if (hbs_stateful_family_of(alg) == HBS_STATEFUL_HSS) {
        hbs_hss_params p;
        if (hbs_hss_params_parse(&p, alg) == HBS_OK)
            for (unsigned i = 0; i < p.levels; i++)
                leaves += (double)((uint64_t)1 << hbs_lms_type_height(p.lms[i]));
    } else {
        const hbs_xmss_params *p = hbs_xmss_params_by_name(alg);
        if (p)
            leaves = (double)hbs_xmss_layers(p) *
                     (double)((uint64_t)1 << (hbs_xmss_height(p) / hbs_xmss_layers(p)));
    }
    return leaves;
}

static int keygen_engine_once(const char *alg, const hbs_leaf_engine *e)
{
    uint8_t pk[HBS_STATEFUL_MAX_PK_BYTES];
    size_t pklen;
    int err;
    if (hbs_stateful_family_of(alg) == HBS_STATEFUL_HSS) {
        hbs_hss_params p;
        hbs_hss_key *k = NULL;
        if ((err = hbs_hss_params_parse(&p, alg)) != HBS_OK)
            return err;
        err = hbs_hss_keygen_engine(&k, pk, sizeof pk, &pklen, &p, NULL, 0, NULL, NULL, e);
        hbs_hss_key_free(k);
    } else {
        hbs_xmss_key *k = NULL;
        err = hbs_xmss_keygen_engine(&k, pk, sizeof pk, &pklen, hbs_xmss_params_by_name(alg),
                                     0, NULL, 0, NULL, NULL, e);
        hbs_xmss_key_free(k);
    }
    return err;
}

/* Median of the samples (sorted in place). */
static double median_ms(sample_set *s)
{
    for (size_t i = 1; i < s->count; i++)
        for (size_t j = i; j > 0 && s->samples[j - 1] > s->samples[j]; j--) {
            double t = s->samples[j];
            s->samples[j] = s->samples[j - 1];
            s->samples[j - 1] = t;
        }
    return s->count ? s->samples[s->count / 2] : 0;
}

/* ---- batches on the GPU: signing under one key, verification ---------------------------
 * A batch of min(16,384, the key's size) messages of 32 bytes signed with one call of
 * hbs_gpu_stateful_sign_many (the key file reserves the batch once, with fsync; then once
 * more without the fsync, to show the compute), a fresh key
 * (made on the GPU, not timed) whenever the current one has too few indices left; then
 * 16,384 signatures verified with one call of hbs_gpu_stateful_verify_many (the batch's
 * signatures over again where the key has fewer: a GPU needs big batches to fill it). */
#define GPU_BATCH 16384

/* hbs_gpu_stateful_verify_device over vbatch items already on the GPU (the batch's
 * signatures and messages over again): its median ms into *ms. Every verdict must be 0. */
static int device_verify_ms(const char *alg, const uint8_t *sigs, size_t batch, size_t sb,
                            const uint8_t *mbuf, const uint8_t *pk, size_t pklen, size_t vbatch,
                            unsigned long iterations, double min_time, sample_set *s, double *ms)
{
    uint8_t *hs = malloc(vbatch * sb);
    uint64_t *moff = malloc(vbatch * sizeof *moff);
    uint32_t *mlen = malloc(vbatch * sizeof *mlen);
    int *res = malloc(vbatch * sizeof *res);
    void *d_sigs = NULL, *d_mp = NULL, *d_moff = NULL, *d_mlen = NULL, *d_pk = NULL,
         *d_res = NULL;
    int err = HBS_OK;
    if (!hs || !moff || !mlen || !res) {
        err = HBS_ERR_NO_MEMORY;
        goto out;
    }
    for (size_t i = 0; i < vbatch; i++) {
        memcpy(hs + i * sb, sigs + (i % batch) * sb, sb);
        moff[i] = (uint64_t)(i % batch) * 32;
        mlen[i] = 32;
    }
    if ((err = hbs_gpu_alloc(hbs_cli_first_gpu(), &d_sigs, vbatch * sb)) ||
        (err = hbs_gpu_alloc(hbs_cli_first_gpu(), &d_mp, batch * 32)) ||
        (err = hbs_gpu_alloc(hbs_cli_first_gpu(), &d_moff, vbatch * sizeof *moff)) ||
        (err = hbs_gpu_alloc(hbs_cli_first_gpu(), &d_mlen, vbatch * sizeof *mlen)) ||
        (err = hbs_gpu_alloc(hbs_cli_first_gpu(), &d_pk, pklen)) ||
        (err = hbs_gpu_alloc(hbs_cli_first_gpu(), &d_res, vbatch * sizeof *res)) ||
        (err = hbs_gpu_copy_to(hbs_cli_first_gpu(), d_sigs, hs, vbatch * sb)) ||
        (err = hbs_gpu_copy_to(hbs_cli_first_gpu(), d_mp, mbuf, batch * 32)) ||
        (err = hbs_gpu_copy_to(hbs_cli_first_gpu(), d_moff, moff, vbatch * sizeof *moff)) ||
        (err = hbs_gpu_copy_to(hbs_cli_first_gpu(), d_mlen, mlen, vbatch * sizeof *mlen)) ||
        (err = hbs_gpu_copy_to(hbs_cli_first_gpu(), d_pk, pk, pklen)))
        goto out;
    s->count = 0;
    s->start = hbs_cli_now();
    while (err == HBS_OK && keep_going(s, min_time, iterations)) {
        double t0 = hbs_cli_now();
        err = hbs_gpu_stateful_verify_device(alg, hbs_cli_first_gpu(), d_res, d_sigs, d_mp, d_moff, d_mlen, vbatch,
                                             d_pk, 1);
        add_sample(s, t0);
    }
    *ms = median_ms(s);
    if (err == HBS_OK && (err = hbs_gpu_copy_from(hbs_cli_first_gpu(), res, d_res, vbatch * sizeof *res)) == HBS_OK)
        for (size_t i = 0; i < vbatch; i++)
            if (res[i] != 0) {
                fprintf(stderr, "hbs: bench: %s: device-resident verification rejected item %zu\n",
                        alg, i);
                err = HBS_ERR_VERIFY_FAILED;
                break;
            }
out:
    hbs_gpu_free(hbs_cli_first_gpu(), d_sigs);
    hbs_gpu_free(hbs_cli_first_gpu(), d_mp);
    hbs_gpu_free(hbs_cli_first_gpu(), d_moff);
    hbs_gpu_free(hbs_cli_first_gpu(), d_mlen);
    hbs_gpu_free(hbs_cli_first_gpu(), d_pk);
    hbs_gpu_free(hbs_cli_first_gpu(), d_res);
    free(hs);
    free(moff);
    free(mlen);
    free(res);
    return err;
}

/* hbs_gpu_stateful_verify_many over the vbatch signatures at sp (all valid): its median ms
 * into *ms. */
static int batch_verify_ms(const char *alg, hbs_stateful_family family,
                           const uint8_t *const *sp, const size_t *slens,
                           const uint8_t *const *msgs, const size_t *mlens, size_t vbatch,
                           const uint8_t *pk, size_t pklen, int *res, unsigned long iterations,
                           double min_time, sample_set *s, double *ms)
{
    const uint8_t *pk1 = pk;
    int err = HBS_OK;
    s->count = 0;
    s->start = hbs_cli_now();
    while (err == HBS_OK && keep_going(s, min_time, iterations)) {
        double t0 = hbs_cli_now();
        err = hbs_gpu_stateful_verify_many(family, res, sp, slens, msgs, mlens, vbatch, &pk1,
                                           &pklen, 1);
        add_sample(s, t0);
        if (err == HBS_ERR_VERIFY_FAILED) {
            size_t bad = 0;
            for (size_t i = 0; i < vbatch; i++)
                bad += res[i] != HBS_OK;
            fprintf(stderr, "hbs: bench: %s: the GPU rejected %zu of %zu valid signatures\n",
                    alg, bad, vbatch);
        }
    }
    *ms = median_ms(s);
    return err;
}

static int gpu_batch_row(const char *alg, const char *path, const char *lock,
                         unsigned long iterations, double min_time, sample_set *s, FILE *out)
{
    hbs_stateful_key *k = NULL;
    uint8_t pk[HBS_STATEFUL_MAX_PK_BYTES], *sigs = NULL, *mbuf = NULL, *psigs = NULL,
            *pv = NULL;
    const uint8_t **msgs = NULL, **sp = NULL, **spv = NULL;
    size_t *mlens = NULL, *slens = NULL, pklen = 0, batch = GPU_BATCH, vbatch = GPU_BATCH, sb = 0;
    size_t runs = 0;
    int *res = NULL, err = HBS_OK;
    double sign_ms = 0, nosync_ms = 0, pinned_ms = 0, verify_ms = 0, vpinned_ms = 0,
           device_ms = 0;

    /* a key first, for its sizes */
    unlink(path);
    unlink(lock);
    if ((err = hbs_gpu_stateful_keygen(alg, path, 0, pk, sizeof pk, &pklen, NULL, 0, NULL,
                                       NULL)) ||
        (err = hbs_stateful_open(&k, path, 0, 1)))
        goto out;
    if (hbs_stateful_key_total(k) < batch)
        batch = (size_t)hbs_stateful_key_total(k);
    sb = hbs_stateful_sig_bytes(k);
    sigs = malloc(batch * sb);
    mbuf = malloc(batch * 32);
    msgs = malloc(vbatch * sizeof *msgs);
    sp = malloc(vbatch * sizeof *sp);
    spv = malloc(vbatch * sizeof *spv);
    mlens = malloc(vbatch * sizeof *mlens);
    slens = malloc(vbatch * sizeof *slens);
    res = malloc(vbatch * sizeof *res);
    if (!sigs || !mbuf || !msgs || !sp || !mlens || !slens || !res) {
        err = HBS_ERR_NO_MEMORY;
        goto out;
    }
    for (size_t i = 0; i < batch; i++) {
        memset(mbuf + i * 32, (int)(i * 7), 32);
        mbuf[i * 32] = (uint8_t)(i >> 8);
    }
    for (size_t i = 0; i < vbatch; i++) {
        msgs[i] = mbuf + (i % batch) * 32;
        mlens[i] = 32;
        sp[i] = sigs + (i % batch) * sb;
        slens[i] = sb;
    }
    /* signing as a real signer does (the reservation fsynced), then without the fsync (the
     * compute alone), then fsynced again into page-locked memory (hbs_gpu_host_alloc: the
     * GPU writes the signatures there itself, no staging copy): the key file is reopened
     * with each mode's flag */
    if (hbs_gpu_host_alloc((void **)&psigs, batch * sb) != HBS_OK)
        psigs = NULL; /* (its column says 0) */
    for (int mode = 0; mode < 3 && err == HBS_OK; mode++) {
        const int flags = mode == 1 ? HBS_STATEFUL_NO_SYNC : 0;
        uint8_t *into = mode == 2 ? psigs : sigs;
        if (mode == 2 && !psigs)
            break;
        if (mode) {
            hbs_stateful_close(k);
            k = NULL;
            if ((err = hbs_stateful_open(&k, path, flags, 1)))
                break;
        }
        s->count = 0;
        s->start = hbs_cli_now();
        while (err == HBS_OK && keep_going(s, min_time, iterations)) {
            double t0;
            if (hbs_stateful_key_remaining(k) < batch) {
                hbs_stateful_close(k);
                k = NULL;
                unlink(path);
                unlink(lock);
                if ((err = hbs_gpu_stateful_keygen(alg, path, 0, pk, sizeof pk, &pklen, NULL,
                                                   0, NULL, NULL)) ||
                    (err = hbs_stateful_open(&k, path, flags, 1)))
                    break;
            }
            t0 = hbs_cli_now();
            err = hbs_gpu_stateful_sign_many(k, into, batch * sb, msgs, mlens, batch);
            add_sample(s, t0);
        }
        if (mode == 0) {
            runs = s->count;
            sign_ms = median_ms(s);
        } else if (mode == 1) {
            nosync_ms = median_ms(s);
        } else {
            pinned_ms = median_ms(s);
            /* (the verification below takes the latest key's signatures) */
            memcpy(sigs, psigs, batch * sb);
        }
    }
    err = batch_verify_ms(alg, hbs_stateful_key_family(k), sp, slens, msgs, mlens, vbatch, pk,
                          pklen, res, iterations, min_time, s, &verify_ms);
    /* the same from page-locked memory, the signatures one after another (they go up to the
     * GPU as they are) */
    if (err == HBS_OK && hbs_gpu_host_alloc((void **)&pv, vbatch * sb) == HBS_OK && spv) {
        for (size_t i = 0; i < vbatch; i++) {
            memcpy(pv + i * sb, sigs + (i % batch) * sb, sb);
            spv[i] = pv + i * sb;
        }
        err = batch_verify_ms(alg, hbs_stateful_key_family(k), spv, slens, msgs, mlens, vbatch,
                              pk, pklen, res, iterations, min_time, s, &vpinned_ms);
    }
    if (err == HBS_OK)
        err = device_verify_ms(alg, sigs, batch, sb, mbuf, pk, pklen, vbatch, iterations,
                               min_time, s, &device_ms);
    if (err == HBS_OK)
        fprintf(out,
                "%-64s %7zu %12.3f %12.0f %12.0f %12.0f %7zu %12.3f %12.0f %12.0f %12.0f %6zu\n",
                alg, batch, sign_ms, sign_ms > 0 ? (double)batch / (sign_ms / 1e3) : 0,
                nosync_ms > 0 ? (double)batch / (nosync_ms / 1e3) : 0,
                pinned_ms > 0 ? (double)batch / (pinned_ms / 1e3) : 0, vbatch, verify_ms,
                verify_ms > 0 ? (double)vbatch / (verify_ms / 1e3) : 0,
                vpinned_ms > 0 ? (double)vbatch / (vpinned_ms / 1e3) : 0,
                device_ms > 0 ? (double)vbatch / (device_ms / 1e3) : 0, runs);
    fflush(out);
out:
    hbs_stateful_close(k);
    unlink(path);
    unlink(lock);
    free(sigs);
    hbs_gpu_host_free(psigs);
    hbs_gpu_host_free(pv);
    free(spv);
    free(mbuf);
    free(msgs);
    free(sp);
    free(mlens);
    free(slens);
    free(res);
    return err;
}

/* ---- one message under each of many keys (hbs_gpu_stateful_sign_keys) ----
 * MANY_KEYS key files: MANY_DISTINCT keys made on the GPU, each copied into MANY_KEYS /
 * MANY_DISTINCT files. The copies sign the same indices as their originals, which is
 * exactly the work of as many distinct keys (nothing on the GPU or the CPU is shared
 * between them) at a fraction of the key generation; copying a real key file reuses its
 * one-time keys and must never be done outside a benchmark. */
#define MANY_KEYS 16384
#define MANY_DISTINCT 256
#define MANY_RESERVE 64

static int copy_file(const char *from, const char *to)
{
    FILE *a = fopen(from, "rb"), *b = a ? fopen(to, "wb") : NULL;
    char buf[65536];
    size_t got;
    int ok = a && b;
    while (ok && (got = fread(buf, 1, sizeof buf, a)) > 0)
        ok = fwrite(buf, 1, got, b) == got;
    if (a)
        fclose(a);
    if (b && fclose(b) != 0)
        ok = 0;
    return ok ? HBS_OK : HBS_ERR_IO;
}

static int gpu_keys_row(const char *alg, const char *dir, unsigned long iterations,
                        double min_time, sample_set *s, FILE *out)
{
    hbs_stateful_key **keys = calloc(MANY_KEYS, sizeof *keys);
    uint8_t **sp = calloc(MANY_KEYS, sizeof *sp), *sigs = NULL, pk[HBS_STATEFUL_MAX_PK_BYTES];
    const uint8_t **msgs = calloc(MANY_KEYS, sizeof *msgs);
    size_t *caps = calloc(MANY_KEYS, sizeof *caps), *mlens = calloc(MANY_KEYS, sizeof *mlens);
    int *res = calloc(MANY_KEYS, sizeof *res), err = HBS_OK;
    uint8_t msg[32];
    char path[128];
    size_t nk = 0, sb = 0, pklen = 0;
    double nosync_ms = 0, fsync_ms = 0, t0;
    struct rlimit rl;
    size_t want = MANY_KEYS;
    /* every open key holds two descriptors (its folder and its lock): as many as allowed
     * (raising the hard limit works for root), else fewer keys */
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
        const rlim_t need = 2 * MANY_KEYS + 256;
        struct rlimit up = rl;
        if (up.rlim_cur < need) {
            up.rlim_cur = up.rlim_max = need > rl.rlim_max ? need : rl.rlim_max;
            if (setrlimit(RLIMIT_NOFILE, &up) != 0) {
                rl.rlim_cur = rl.rlim_max;
                (void)setrlimit(RLIMIT_NOFILE, &rl);
            }
        }
        if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < need)
            want = rl.rlim_cur > 512 ? (size_t)(rl.rlim_cur - 256) / 2 / MANY_DISTINCT *
                                           MANY_DISTINCT
                                     : MANY_DISTINCT;
    }
    if (!keys || !sp || !msgs || !caps || !mlens || !res) {
        err = HBS_ERR_NO_MEMORY;
        goto out;
    }
    for (size_t d = 0; d < MANY_DISTINCT && err == HBS_OK; d++) {
        snprintf(path, sizeof path, "%s/many-%zu-0.state", dir, d);
        err = hbs_gpu_stateful_keygen(alg, path, 0, pk, sizeof pk, &pklen, NULL, 0, NULL, NULL);
        for (size_t c = 1; c < MANY_KEYS / MANY_DISTINCT && err == HBS_OK; c++) {
            char to[160];
            snprintf(to, sizeof to, "%s/many-%zu-%zu.state", dir, d, c);
            err = copy_file(path, to);
        }
    }
    memset(msg, 0x5a, sizeof msg);
    for (int mode = 0; mode < 2 && err == HBS_OK; mode++) {
        /* both with MANY_RESERVE indices set aside a time (a real signer's setting: with a
         * reserve of 1 every call writes every key file, 1.2-2.3 s for 9,728 files on the
         * H100 machine); 0: no fsync, the median call (the compute: no file written);
         * 1: fsync, the mean over a whole reserve's calls (one writes and fsyncs them all) */
        const int flags = mode == 0 ? HBS_STATEFUL_NO_SYNC : 0;
        for (size_t i = 0; i < nk; i++)
            hbs_stateful_close(keys[i]);
        nk = 0;
        for (size_t d = 0; d < MANY_DISTINCT && err == HBS_OK; d++)
            for (size_t c = 0; c < want / MANY_DISTINCT && err == HBS_OK; c++, nk++) {
                snprintf(path, sizeof path, "%s/many-%zu-%zu.state", dir, d, c);
                err = hbs_stateful_open(&keys[nk], path, flags, MANY_RESERVE);
            }
        if (err != HBS_OK)
            break;
        if (!sigs) {
            sb = hbs_stateful_sig_bytes(keys[0]);
            if (!(sigs = malloc(MANY_KEYS * sb))) {
                err = HBS_ERR_NO_MEMORY;
                break;
            }
            for (size_t i = 0; i < MANY_KEYS; i++) {
                sp[i] = sigs + i * sb;
                caps[i] = sb;
                msgs[i] = msg;
                mlens[i] = sizeof msg;
            }
        }
        if (mode == 0) {
            s->count = 0;
            s->start = hbs_cli_now();
            while (err == HBS_OK && keep_going(s, min_time, iterations)) {
                t0 = hbs_cli_now();
                err = hbs_gpu_stateful_sign_keys(keys, nk, sp, caps, NULL, msgs, mlens, res);
                add_sample(s, t0);
            }
            nosync_ms = median_ms(s);
        } else {
            /* every call of a reserve: one in MANY_RESERVE writes and fsyncs all files */
            t0 = hbs_cli_now();
            for (int r = 0; r < MANY_RESERVE && err == HBS_OK; r++)
                err = hbs_gpu_stateful_sign_keys(keys, nk, sp, caps, NULL, msgs, mlens, res);
            fsync_ms = (hbs_cli_now() - t0) * 1e3 / MANY_RESERVE;
        }
    }
    /* the last batch verifies (under the originals' public keys, which the copies share) */
    if (err == HBS_OK) {
        size_t bad = 0;
        for (size_t i = 0; i < nk; i += want / MANY_DISTINCT) {
            uint8_t kpk[HBS_STATEFUL_MAX_PK_BYTES];
            size_t kl = 0;
            if (hbs_stateful_key_public(keys[i], kpk, sizeof kpk, &kl) != HBS_OK ||
                hbs_stateful_verify(hbs_stateful_key_family(keys[i]), kpk, kl, msg, sizeof msg,
                                    sp[i], sb) != HBS_OK)
                bad++;
        }
        if (bad)
            err = HBS_ERR_VERIFY_FAILED;
    }
    if (err == HBS_OK)
        fprintf(out, "%-64s %7zu %12.3f %12.0f %12.3f %12.0f %6zu\n", alg, nk, nosync_ms,
                nosync_ms > 0 ? (double)nk / (nosync_ms / 1e3) : 0, fsync_ms,
                fsync_ms > 0 ? (double)nk / (fsync_ms / 1e3) : 0, s->count);
    fflush(out);
out:
    for (size_t i = 0; i < nk; i++)
        hbs_stateful_close(keys[i]);
    for (size_t d = 0; d < MANY_DISTINCT; d++)
        for (size_t c = 0; c < MANY_KEYS / MANY_DISTINCT; c++) {
            char lk[160];
            snprintf(path, sizeof path, "%s/many-%zu-%zu.state", dir, d, c);
            snprintf(lk, sizeof lk, "%s.lock", path);
            unlink(path);
            unlink(lk);
        }
    free(keys);
    free(sp);
    free(sigs);
    free(msgs);
    free(caps);
    free(mlens);
    free(res);
    return err;
}

int hbs_cli_bench_stateful_gpu(const char *const *algs, size_t nalgs, int do_keygen,
                               int do_batches, int do_many_keys, unsigned long iterations,
                               double min_time, FILE *out)
{
    char dir[] = "/tmp/hbs-bench-XXXXXX", path[64], lock[80], gpu[256] = "";
    sample_set s = {0};
    hbs_leaf_engine e;
    int err = HBS_OK;

    for (size_t i = 0; i < nalgs; i++)
        if (hbs_stateful_family_of(algs[i]) < 0)
            return hbs_cli_error("-a", "unknown algorithm '%s' (see 'hbs list')", algs[i]);
    if (hbs_gpu_leaf_engine(&e) != HBS_OK)
        return hbs_cli_error("--gpu", "no usable CUDA GPU");
    if (hbs_gpu_device_name(hbs_cli_first_gpu(), gpu, sizeof gpu) != HBS_OK)
        snprintf(gpu, sizeof gpu, "unknown");
    s.samples = malloc(MAX_SAMPLES * sizeof *s.samples);
    if (!s.samples || !mkdtemp(dir)) {
        free(s.samples);
        return hbs_cli_error("bench", "out of memory or no temporary folder");
    }
    snprintf(path, sizeof path, "%s/key.state", dir);
    snprintf(lock, sizeof lock, "%s.lock", path);
    if (do_keygen)
        fprintf(out, "\nstateful key generation on the GPU (%s): median ms of the whole call; "
                 "'mem' in memory, 'file' through hbs_gpu_stateful_keygen (key file written "
                 "and fsynced); CPU in memory on %u thread(s), one run; 'ideal ms': the "
                 "first tree of every layer at the H200's hash ceiling (%.2f G SHA-256, "
                 "%.2f G SHA-512, %.2f G Keccak per s), 'eff': ideal over gpu mem\n",
            gpu, hbs_get_threads(), HBS_CLI_GPU_CEIL_SHA256 / 1e9,
            HBS_CLI_GPU_CEIL_SHA512 / 1e9, HBS_CLI_GPU_CEIL_KECCAK / 1e9);
    if (do_keygen)
        fprintf(out, "%-64s %12s %12s %6s %12s %9s %12s %6s\n", "algorithm", "gpu mem",
                "gpu file", "runs", "cpu mem", "cpu/gpu", "ideal ms", "eff %");
    for (size_t i = 0; err == HBS_OK && do_keygen && i < nalgs; i++) {
        double gmem, gfile, cpu = 0;
        uint8_t pk[HBS_STATEFUL_MAX_PK_BYTES];
        size_t pklen, runs;
        /* warm-up (device buffers, first launches), not worth it for trees of seconds */
        if (keygen_leaves(algs[i]) <= (double)(1u << 20))
            err = keygen_engine_once(algs[i], &e);
        s.count = 0;
        s.start = hbs_cli_now();
        while (err == HBS_OK && keep_going(&s, min_time, iterations)) {
            double t0 = hbs_cli_now();
            err = keygen_engine_once(algs[i], &e);
            add_sample(&s, t0);
        }
        runs = s.count;
        gmem = median_ms(&s);
        s.count = 0;
        s.start = hbs_cli_now();
        while (err == HBS_OK && keep_going(&s, min_time, iterations)) {
            double t0;
            unlink(path);
            unlink(lock);
            t0 = hbs_cli_now();
            err = hbs_gpu_stateful_keygen(algs[i], path, 0, pk, sizeof pk, &pklen, NULL, 0,
                                          NULL, NULL);
            add_sample(&s, t0);
        }
        unlink(path);
        unlink(lock);
        gfile = median_ms(&s);
        if (err == HBS_OK && keygen_leaves(algs[i]) <= (double)(1u << 16)) {
            double t0 = hbs_cli_now();
            err = keygen_once(algs[i]);
            cpu = (hbs_cli_now() - t0) * 1e3;
        }
        if (err != HBS_OK)
            break;
        char cm[32] = "-", ratio[32] = "-", ideal[32] = "-", eff[32] = "-";
        hbs_cli_hashes w;
        if (cpu > 0) {
            snprintf(cm, sizeof cm, "%.1f", cpu);
            snprintf(ratio, sizeof ratio, "%.1f", cpu / gmem);
        }
        if (hbs_cli_stateful_keygen_model(algs[i], &w) == 0) {
            const double ims = hbs_cli_gpu_ceiling_ms(&w);
            snprintf(ideal, sizeof ideal, "%.3f", ims);
            snprintf(eff, sizeof eff, "%.1f", gmem > 0 ? 100 * ims / gmem : 0);
        }
        fprintf(out, "%-64s %12.3f %12.3f %6zu %12s %9s %12s %6s\n", algs[i], gmem, gfile,
                runs, cm, ratio, ideal, eff);
        fflush(out);
    }
    if (err == HBS_OK && do_batches) {
        fprintf(out, "\nstateful batches on the GPU (%s): one call of "
                     "hbs_gpu_stateful_sign_many (one key, indices reserved with fsync) and of "
                     "hbs_gpu_stateful_verify_many per batch of 16,384 (the signed batch "
                     "repeated where the key has fewer); median ms and per second; "
                     "'nosync/s' signs with the key file opened HBS_STATEFUL_NO_SYNC (the "
                     "compute without the fsync); 'pinned/s' signs with the fsync into "
                     "page-locked memory from hbs_gpu_host_alloc, 'vpinned/s' verifies "
                     "from there; 'device/s' verifies the same batch with "
                     "hbs_gpu_stateful_verify_device, its data already on the GPU\n",
                gpu);
        fprintf(out, "%-64s %7s %12s %12s %12s %12s %7s %12s %12s %12s %12s %6s\n",
                "algorithm", "batch", "sign ms", "sign/s", "nosync/s", "pinned/s", "vbatch",
                "verify ms", "verify/s", "vpinned/s", "device/s", "runs");
    }
    for (size_t i = 0; err == HBS_OK && do_batches && i < nalgs; i++)
        err = gpu_batch_row(algs[i], path, lock, iterations, min_time, &s, out);
    if (err == HBS_OK && do_many_keys) {
        fprintf(out, "\nstateful signing under many keys on the GPU (%s): one call of "
                     "hbs_gpu_stateful_sign_keys signs one 32-byte message under each of "
                     "%d keys (%d made on the GPU, each copied into %d files: the same work as "
                     "distinct keys; fewer where the descriptor limit allows fewer open keys), "
                     "opened with a reserve of %d; 'nosync': HBS_STATEFUL_NO_SYNC, median ms "
                     "of a call (no file written: the compute); 'fsync': with fsync, the mean "
                     "of %d calls (the first writes and fsyncs every key file)\n",
                gpu, MANY_KEYS, MANY_DISTINCT, MANY_KEYS / MANY_DISTINCT, MANY_RESERVE,
                MANY_RESERVE);
        fprintf(out, "%-64s %7s %12s %12s %12s %12s %6s\n", "algorithm", "keys", "nosync ms",
                "nosync/s", "fsync ms", "fsync/s", "runs");
    }
    for (size_t i = 0; err == HBS_OK && do_many_keys && i < nalgs; i++)
        err = gpu_keys_row(algs[i], dir, iterations, min_time, &s, out);
    rmdir(dir);
    free(s.samples);
    if (err != HBS_OK)
        return hbs_cli_error("bench", "%s%s%s", hbs_strerror(err), err == HBS_ERR_GPU ? ": " : "",
                             err == HBS_ERR_GPU ? hbs_gpu_last_error() : "");
    return HBS_CLI_OK;
}
