/* `hbs sign` over many files: SLH-DSA in batches on the CPU (every core) or the GPU, and
 * stateful keys one index after another on the CPU or in batches on the GPU. Every
 * signature is verified on the CPU before it is written: a faulty one can leak secret key
 * material, and the CPU check is independent of the GPU that made it. */
#include "batch.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hbs/gpu.h"
#include "stateful.h"

/* The engine that makes a batch's signatures; the key is expanded (and checked against its
 * root) once. */
typedef struct {
    const hbs_slhdsa_params *p;
    hbs_slhdsa_signer *cpu;
    hbs_gpu_signer *gpu;
} signer;

static int signer_open(signer *s, const hbs_key *sk, const hbs_cli_batch_args *a)
{
    int err;
    memset(s, 0, sizeof *s);
    s->p = hbs_slhdsa_params_get(sk->alg);
    if (!s->p)
        return hbs_cli_error(a->key_path, "unknown algorithm in the key");
    if (a->gpu)
        err = hbs_gpu_signer_new(&s->gpu, s->p, sk->bytes);
    else /* the cached top layer pays off from the second signature on */
        err = hbs_slhdsa_signer_new(&s->cpu, s->p, sk->bytes, a->files->count > 1 ? 1 : 0);
    if (err == HBS_ERR_MALFORMED_KEY)
        return hbs_cli_error(a->key_path, "the secret key is corrupt (its public root does "
                                          "not match its seeds)");
    if (err == HBS_ERR_GPU)
        return hbs_cli_error("--gpu", "%s", hbs_gpu_last_error());
    if (err)
        return hbs_cli_error(a->gpu ? "--gpu" : "sign", "%s", hbs_strerror(err));
    return HBS_CLI_OK;
}

static void signer_close(signer *s)
{
    hbs_slhdsa_signer_free(s->cpu);
    hbs_gpu_signer_free(s->gpu);
}

static int signer_sign(const signer *s, uint8_t *sigs, const uint8_t *const *msgs,
                       const size_t *lens, size_t count, const uint8_t *ctx, size_t ctxlen,
                       hbs_prehash ph, const uint8_t *addrnd)
{
    if (s->gpu)
        return hbs_gpu_signer_sign_many(s->gpu, sigs, msgs, lens, count, ctx, ctxlen, ph,
                                        addrnd);
    return hbs_slhdsa_sign_many(s->cpu, sigs, msgs, lens, count, ctx, ctxlen, ph, addrnd);
}

/* The buffers of one batch, sized once for the largest. */
typedef struct {
    uint8_t **msgs;
    size_t *lens;
    uint8_t *sigs;
    const uint8_t **sigp, **pks;
    size_t *siglens;
    int *results;
    uint8_t *rnd;
    size_t count;  /* messages read into the batch */
    int sigs_gpu;  /* sigs from hbs_gpu_host_alloc */
} batch;

/* With the GPU the signatures' buffer is page-locked (the GPU writes them there itself). */
static int batch_alloc(batch *b, size_t max, size_t siglen, size_t n, int gpu)
{
    memset(b, 0, sizeof *b);
    b->msgs = calloc(max, sizeof *b->msgs);
    b->lens = calloc(max, sizeof *b->lens);
    if (gpu && hbs_gpu_host_alloc((void **)&b->sigs, max * siglen) == HBS_OK)
        b->sigs_gpu = 1;
    else
        b->sigs = malloc(max * siglen);
    b->sigp = calloc(max, sizeof *b->sigp);
    b->pks = calloc(max, sizeof *b->pks);
    b->siglens = calloc(max, sizeof *b->siglens);
    b->results = calloc(max, sizeof *b->results);
    b->rnd = malloc(max * n);
    if (!b->msgs || !b->lens || !b->sigs || !b->sigp || !b->pks || !b->siglens ||
        !b->results || !b->rnd)
        return hbs_cli_error("sign", "out of memory for a batch of %zu (try --batch)", max);
    return HBS_CLI_OK;
}

static void batch_clear(batch *b)
{
    for (size_t i = 0; i < b->count; i++)
        free(b->msgs[i]);
    b->count = 0;
}

static void batch_free(batch *b, size_t max, size_t n)
{
    if (b->msgs)
        batch_clear(b);
    if (b->rnd)
        hbs_memzero(b->rnd, max * n);
    free(b->msgs);
    free(b->lens);
    if (b->sigs_gpu)
        hbs_gpu_host_free(b->sigs);
    else
        free(b->sigs);
    free(b->sigp);
    free(b->pks);
    free(b->siglens);
    free(b->results);
    free(b->rnd);
}

/* Reads messages first.. into b until it holds `max` of them or HBS_CLI_BATCH_BYTES. */
static int batch_read(batch *b, const hbs_cli_files *f, size_t first, size_t max)
{
    size_t bytes = 0;
    while (first + b->count < f->count && b->count < max && bytes < HBS_CLI_BATCH_BYTES) {
        const char *path = f->msgs[first + b->count];
        int e = hbs_cli_read_plain(path, &b->msgs[b->count], &b->lens[b->count]);
        if (e)
            return hbs_cli_error(hbs_cli_is_std(path) ? "stdin" : path, "%s", strerror(e));
        bytes += b->lens[b->count++];
    }
    return HBS_CLI_OK;
}

static int write_sig(const char *path, const uint8_t *sig, size_t len, int replace)
{
    hbs_cli_output o;
    int rc = hbs_cli_output_begin(&o, path, sig, len, 0);
    if (rc == HBS_CLI_OK)
        rc = replace ? hbs_cli_output_commit(&o) : hbs_cli_output_commit_new(&o);
    return rc;
}

/* The options that shape SLH-DSA signatures, decoded once. */
typedef struct {
    uint8_t ctx[HBS_SLHDSA_MAX_CONTEXT_BYTES];
    size_t ctxlen;
    hbs_prehash ph;
    uint8_t rnd[HBS_SLHDSA_MAX_N]; /* --randomness */
    int fixed_rnd;
} sign_options;

static int decode_options(sign_options *o, const hbs_key *sk, const hbs_slhdsa_params *p,
                          const hbs_cli_batch_args *a)
{
    size_t len;
    memset(o, 0, sizeof *o);
    if (hbs_cli_choose_prehash(&o->ph, sk, a->prehash))
        return HBS_CLI_ERROR;
    if (a->context_hex &&
        hbs_cli_unhex("--context", a->context_hex, o->ctx, sizeof o->ctx, &o->ctxlen))
        return HBS_CLI_ERROR;
    if (a->rand_hex) {
        if (hbs_cli_unhex("--randomness", a->rand_hex, o->rnd, sizeof o->rnd, &len))
            return HBS_CLI_ERROR;
        if (len != hbs_slhdsa_n(p))
            return hbs_cli_error("--randomness", "%s needs %zu bytes, got %zu",
                                 hbs_slhdsa_name(p), hbs_slhdsa_n(p), len);
        o->fixed_rnd = 1;
    }
    return HBS_CLI_OK;
}

/* opt_rand for every message of the batch: NULL (deterministic), the given bytes for each,
 * or fresh randomness (hedged, the default). */
static int batch_randomness(const uint8_t **addrnd, batch *b, const sign_options *o,
                            const hbs_cli_batch_args *a, size_t n)
{
    *addrnd = NULL;
    if (a->deterministic)
        return HBS_CLI_OK;
    if (o->fixed_rnd) {
        for (size_t i = 0; i < b->count; i++)
            memcpy(b->rnd + i * n, o->rnd, n);
    } else {
        int err = hbs_randombytes(b->rnd, b->count * n);
        if (err)
            return hbs_cli_error("sign", "%s", hbs_strerror(err));
    }
    *addrnd = b->rnd;
    return HBS_CLI_OK;
}

/* Signs, checks and writes one batch (messages first .. first + b->count). */
static int sign_batch(const signer *s, batch *b, const sign_options *o, const uint8_t *pk,
                      const hbs_cli_batch_args *a, size_t first, double *sign_time)
{
    const size_t n = hbs_slhdsa_n(s->p), siglen = hbs_slhdsa_sig_bytes(s->p);
    const uint8_t *addrnd;
    if (batch_randomness(&addrnd, b, o, a, n))
        return HBS_CLI_ERROR;
    double t0 = hbs_cli_now();
    int err = signer_sign(s, b->sigs, (const uint8_t *const *)b->msgs, b->lens, b->count,
                          o->ctx, o->ctxlen, o->ph, addrnd);
    *sign_time += hbs_cli_now() - t0;
    hbs_memzero(b->rnd, b->count * n);
    if (err == HBS_ERR_GPU)
        return hbs_cli_error("--gpu", "%s", hbs_gpu_last_error());
    if (err)
        return hbs_cli_error("sign", "%s", hbs_strerror(err));
    for (size_t i = 0; i < b->count; i++) {
        b->sigp[i] = b->sigs + i * siglen;
        b->siglens[i] = siglen;
        b->pks[i] = pk;
    }
    err = hbs_slhdsa_verify_many(s->p, b->results, b->sigp, b->siglens,
                                 (const uint8_t *const *)b->msgs, b->lens, b->count, o->ctx,
                                 o->ctxlen, o->ph, b->pks);
    if (err == HBS_ERR_VERIFY_FAILED) {
        size_t bad = 0;
        while (bad + 1 < b->count && b->results[bad] == 0)
            bad++;
        return hbs_cli_error(a->files->msgs[first + bad], "the new signature does not verify "
                             "(hardware fault?); nothing of this batch written");
    }
    if (err)
        return hbs_cli_error("sign", "%s", hbs_strerror(err));
    for (size_t i = 0; i < b->count; i++)
        if (write_sig(a->files->sigs[first + i], b->sigp[i], siglen, a->replace))
            return HBS_CLI_ERROR;
    return HBS_CLI_OK;
}

static void report(const char *what, const hbs_cli_batch_args *a, size_t done, double engine,
                   double all, const char *engine_what)
{
    char line[300];
    hbs_cli_engine_line(line, sizeof line, a->gpu);
    fprintf(stderr, "hbs: %s: %zu message%s with %s: %.3f s %s (%.1f/s), %.3f s in all "
                    "(%.1f/s with file I/O)\n",
            what, done, done == 1 ? "" : "s", line, engine, engine_what,
            engine > 0 ? (double)done / engine : 0.0, all, all > 0 ? (double)done / all : 0.0);
}

int hbs_cli_slhdsa_sign_many(const hbs_key *sk, const hbs_cli_batch_args *a)
{
    const hbs_cli_files *f = a->files;
    const size_t max = f->count < a->batch ? f->count : a->batch;
    double start = hbs_cli_now(), sign_time = 0;
    sign_options o;
    signer s;
    batch b;
    size_t done = 0;
    int rc;

    const hbs_slhdsa_params *p = hbs_slhdsa_params_get(sk->alg);
    if (!p)
        return hbs_cli_error(a->key_path, "unknown algorithm in the key");
    if (decode_options(&o, sk, p, a))
        return HBS_CLI_ERROR;
    rc = signer_open(&s, sk, a);
    if (rc == HBS_CLI_OK)
        rc = batch_alloc(&b, max, hbs_slhdsa_sig_bytes(p), hbs_slhdsa_n(p), a->gpu);
    else
        memset(&b, 0, sizeof b);
    /* sk = SK.seed || SK.prf || PK.seed || PK.root, and the signer has checked the root */
    const uint8_t *pk = sk->bytes + 2 * hbs_slhdsa_n(p);
    while (rc == HBS_CLI_OK && done < f->count) {
        rc = batch_read(&b, f, done, max);
        if (rc == HBS_CLI_OK)
            rc = sign_batch(&s, &b, &o, pk, a, done, &sign_time);
        done += rc == HBS_CLI_OK ? b.count : 0;
        batch_clear(&b);
    }
    batch_free(&b, max, hbs_slhdsa_n(p));
    signer_close(&s);
    hbs_memzero(&o, sizeof o);
    if (a->verbose)
        report("sign", a, done, sign_time, hbs_cli_now() - start, "signing");
    return rc;
}

/* ---- stateful keys --------------------------------------------------------------------- */

static int open_error(const char *path, int err)
{
    if (err == HBS_ERR_BUSY)
        return hbs_cli_error(path, "in use by another signer");
    if (err == HBS_ERR_STATE)
        return hbs_cli_error(path, "the key state is corrupt; the file is left as it is");
    if (err == HBS_ERR_IO)
        return hbs_cli_error(path, "%s", strerror(errno));
    return hbs_cli_error(path, "%s", hbs_strerror(err));
}

/* One message: read, signed with the next index, verified, written. */
static int stateful_sign_one(hbs_stateful_key *k, const uint8_t *pk, size_t pklen,
                             uint8_t *sig, const char *msg_path, const char *sig_path,
                             const hbs_cli_batch_args *a, double *sign_time)
{
    uint8_t *msg;
    size_t msglen, siglen;
    int e = hbs_cli_read_plain(msg_path, &msg, &msglen);
    if (e)
        return hbs_cli_error(msg_path, "%s", strerror(e));
    double t0 = hbs_cli_now();
    int err = hbs_stateful_sign(k, sig, hbs_stateful_sig_bytes(k), &siglen, msg, msglen);
    *sign_time += hbs_cli_now() - t0;
    int rc;
    if (err == HBS_ERR_IO)
        rc = hbs_cli_error(a->key_path, "cannot advance the key state (%s); no signature "
                                        "made for %s", strerror(errno), msg_path);
    else if (err)
        rc = hbs_cli_error(msg_path, "%s", hbs_strerror(err));
    /* its index is used up either way */
    else if (hbs_stateful_verify(hbs_stateful_key_family(k), pk, pklen, msg, msglen, sig,
                                 siglen) != HBS_OK)
        rc = hbs_cli_error(msg_path, "the new signature does not verify (hardware fault?); "
                                     "nothing written");
    else
        rc = write_sig(sig_path, sig, siglen, a->replace);
    free(msg);
    return rc;
}

/* GPU batches of a->batch messages: each batch's indices are given up by the key file
 * (written, fsynced, renamed) inside hbs_gpu_stateful_sign_many before any signature of
 * the batch reaches b.sigs; the
 * signatures are verified on the CPU, then written. *done counts the files written. */
static int stateful_sign_gpu(hbs_stateful_key *k, const uint8_t *pk, size_t pklen,
                             const hbs_cli_batch_args *a, double *sign_time, size_t *done)
{
    const hbs_cli_files *f = a->files;
    const size_t max = f->count < a->batch ? f->count : a->batch, sb = hbs_stateful_sig_bytes(k);
    batch b;
    int rc = batch_alloc(&b, max, sb, 1, 1);
    while (rc == HBS_CLI_OK && *done < f->count) {
        rc = batch_read(&b, f, *done, max);
        if (rc != HBS_CLI_OK)
            break;
        double t0 = hbs_cli_now();
        int err = hbs_gpu_stateful_sign_many(k, b.sigs, max * sb, (const uint8_t *const *)b.msgs,
                                             b.lens, b.count);
        *sign_time += hbs_cli_now() - t0;
        if (err == HBS_ERR_GPU)
            rc = hbs_cli_error("--gpu", "%s; nothing of this batch written",
                               hbs_gpu_last_error());
        else if (err == HBS_ERR_IO)
            rc = hbs_cli_error(a->key_path, "cannot advance the key state (%s); nothing of "
                                            "this batch signed", strerror(errno));
        else if (err)
            rc = hbs_cli_error("sign", "%s", hbs_strerror(err));
        if (rc != HBS_CLI_OK)
            break;
        for (size_t i = 0; i < b.count; i++) {
            b.sigp[i] = b.sigs + i * sb;
            b.siglens[i] = sb;
        }
        hbs_cli_stateful_verify_all(hbs_stateful_key_family(k), pk, pklen, b.sigp, b.siglens,
                                    (const uint8_t *const *)b.msgs, b.lens, b.count, b.results);
        for (size_t i = 0; i < b.count && rc == HBS_CLI_OK; i++)
            if (b.results[i] != HBS_OK)
                rc = hbs_cli_error(f->msgs[*done + i], "the new signature does not verify "
                                   "(hardware fault?); nothing of this batch written");
        const size_t base = *done;
        for (size_t i = 0; i < b.count && rc == HBS_CLI_OK; i++)
            if ((rc = write_sig(f->sigs[base + i], b.sigs + i * sb, sb, a->replace)) ==
                HBS_CLI_OK)
                (*done)++;
        hbs_memzero(b.sigs, max * sb);
        batch_clear(&b);
    }
    batch_free(&b, max, 1);
    return rc;
}

int hbs_cli_stateful_sign_many(const char *sk_path, const hbs_cli_batch_args *a,
                               unsigned long reserve)
{
    const hbs_cli_files *f = a->files;
    uint8_t pk[HBS_STATEFUL_MAX_PK_BYTES], *sig = NULL;
    double start = hbs_cli_now(), sign_time = 0;
    hbs_stateful_key *k;
    size_t pklen, done = 0;
    int err, rc = HBS_CLI_OK;

    /* One state update for the whole run unless --reserve says otherwise: the file covers
     * every index before the first signature, and a crash burns at most the rest of them
     * (never gives one out twice: src/state/stateful.c). */
    if (reserve == 0)
        reserve = f->count < 1000000 ? f->count : 1000000;
    err = hbs_stateful_open(&k, sk_path, HBS_STATEFUL_WAIT, (uint32_t)reserve);
    if (err)
        return open_error(sk_path, err);
    if (hbs_stateful_key_remaining(k) < f->count)
        rc = hbs_cli_error(sk_path, "%llu signatures left for %zu messages; nothing signed",
                           (unsigned long long)hbs_stateful_key_remaining(k), f->count);
    if (rc == HBS_CLI_OK && (err = hbs_stateful_key_public(k, pk, sizeof pk, &pklen)) != 0)
        rc = hbs_cli_error(sk_path, "%s", hbs_strerror(err));
    if (rc == HBS_CLI_OK && !(sig = malloc(hbs_stateful_sig_bytes(k))))
        rc = hbs_cli_error("sign", "out of memory");
    if (rc == HBS_CLI_OK && a->gpu) {
        rc = stateful_sign_gpu(k, pk, pklen, a, &sign_time, &done);
    } else {
        for (; rc == HBS_CLI_OK && done < f->count; done++)
            rc = stateful_sign_one(k, pk, pklen, sig, f->msgs[done], f->sigs[done], a,
                                   &sign_time);
        if (rc && done > 0)
            done--;
    }
    hbs_stateful_close(k);
    free(sig);
    if (a->verbose)
        report("sign", a, done, sign_time, hbs_cli_now() - start,
               a->gpu ? "signing in batches" : "signing, one index after another");
    return rc;
}
