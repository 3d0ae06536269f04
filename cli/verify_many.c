/* `hbs verify` over many files: each message against its signature file, in batches on
 * the CPU (every core) or the GPU. One line (or JSON object) per file, in the order given;
 * an unreadable file is reported and the others are still checked. */
#include "batch.h"

#include <stdlib.h>
#include <string.h>

#include "hbs/gpu.h"
#include "stateful.h"

typedef enum { ST_OK, ST_INVALID, ST_ERROR } verdict;

/* One file of a batch. */
typedef struct {
    uint8_t *msg, *sig;
    size_t msglen, siglen;
    verdict v;
    char reason[300];
} item;

/* The options that shape SLH-DSA verification, decoded once. */
typedef struct {
    const hbs_slhdsa_params *p; /* NULL for a stateful key */
    hbs_stateful_family family;
    uint8_t ctx[HBS_SLHDSA_MAX_CONTEXT_BYTES];
    size_t ctxlen;
    hbs_prehash ph;
} verify_options;

/* The batch's arrays for the library calls (only the readable items are passed). */
typedef struct {
    item *items;
    const uint8_t **sigs, **msgs, **pks;
    size_t *siglens, *msglens;
    int *results;
    size_t *index; /* library slot -> item */
} batch;

static int batch_alloc(batch *b, size_t max)
{
    b->items = calloc(max, sizeof *b->items);
    b->sigs = calloc(max, sizeof *b->sigs);
    b->msgs = calloc(max, sizeof *b->msgs);
    b->pks = calloc(max, sizeof *b->pks);
    b->siglens = calloc(max, sizeof *b->siglens);
    b->msglens = calloc(max, sizeof *b->msglens);
    b->results = calloc(max, sizeof *b->results);
    b->index = calloc(max, sizeof *b->index);
    if (!b->items || !b->sigs || !b->msgs || !b->pks || !b->siglens || !b->msglens ||
        !b->results || !b->index)
        return hbs_cli_error("verify", "out of memory for a batch of %zu (try --batch)", max);
    return HBS_CLI_OK;
}

static void batch_free(batch *b)
{
    free(b->items);
    free(b->sigs);
    free(b->msgs);
    free(b->pks);
    free(b->siglens);
    free(b->msglens);
    free(b->results);
    free(b->index);
}

static void item_clear(item *it)
{
    free(it->msg);
    free(it->sig);
    memset(it, 0, sizeof *it);
}

/* Reads one file's signature and message; an unreadable one is an error verdict, reported
 * on stderr now and on stdout in order later. */
static void item_read(item *it, const char *msg_path, const char *sig_path)
{
    const char *bad = sig_path;
    int e = hbs_cli_read_plain(sig_path, &it->sig, &it->siglen);
    if (!e) {
        bad = msg_path;
        e = hbs_cli_read_plain(msg_path, &it->msg, &it->msglen);
    }
    if (!e) {
        it->v = ST_OK; /* until the verifier says otherwise */
        return;
    }
    if (hbs_cli_is_std(bad))
        bad = "stdin";
    it->v = ST_ERROR;
    snprintf(it->reason, sizeof it->reason, "%s: %s", bad, strerror(e));
    hbs_cli_error(bad, "%s", strerror(e));
}

/* The readable items of the batch's first count into the library's arrays, all under pk:
 * how many there are. */
static size_t gather(batch *b, size_t count, const uint8_t *pk)
{
    size_t m = 0;
    for (size_t i = 0; i < count; i++) {
        item *it = &b->items[i];
        if (it->v == ST_ERROR)
            continue;
        b->sigs[m] = it->sig;
        b->siglens[m] = it->siglen;
        b->msgs[m] = it->msg;
        b->msglens[m] = it->msglen;
        b->pks[m] = pk;
        b->index[m++] = i;
    }
    return m;
}

static int verify_slhdsa(batch *b, size_t count, const verify_options *o, const hbs_key *pk,
                         int gpu)
{
    const size_t want = hbs_slhdsa_sig_bytes(o->p), m = gather(b, count, pk->bytes);
    if (m == 0)
        return HBS_CLI_OK;
    int err = gpu ? hbs_gpu_slhdsa_verify_many(o->p, b->results, b->sigs, b->siglens, b->msgs,
                                               b->msglens, m, o->ctx, o->ctxlen, o->ph,
                                               pk->bytes, 1)
                  : hbs_slhdsa_verify_many(o->p, b->results, b->sigs, b->siglens, b->msgs,
                                           b->msglens, m, o->ctx, o->ctxlen, o->ph, b->pks);
    if (err == HBS_ERR_GPU)
        return hbs_cli_error("--gpu", "%s", hbs_gpu_last_error());
    if (err && err != HBS_ERR_VERIFY_FAILED)
        return hbs_cli_error(gpu ? "--gpu" : "verify", "%s", hbs_strerror(err));
    for (size_t j = 0; j < m; j++) {
        item *it = &b->items[b->index[j]];
        if (b->results[j] == 0)
            continue;
        it->v = ST_INVALID;
        if (it->siglen != want)
            snprintf(it->reason, sizeof it->reason, "wrong length: %zu bytes, expected %zu",
                     it->siglen, want);
        else
            snprintf(it->reason, sizeof it->reason, "signature does not match");
    }
    return HBS_CLI_OK;
}

static int verify_stateful(batch *b, size_t count, const verify_options *o, const hbs_key *pk,
                           int gpu)
{
    const size_t m = gather(b, count, pk->bytes), pklen = pk->len;
    if (m == 0)
        return HBS_CLI_OK;
    if (gpu) {
        int err = hbs_gpu_stateful_verify_many(o->family, b->results, b->sigs, b->siglens,
                                               b->msgs, b->msglens, m, b->pks, &pklen, 1);
        if (err == HBS_ERR_GPU)
            return hbs_cli_error("--gpu", "%s", hbs_gpu_last_error());
        if (err && err != HBS_ERR_VERIFY_FAILED)
            return hbs_cli_error("--gpu", "%s", hbs_strerror(err));
    } else {
        hbs_cli_stateful_verify_all(o->family, pk->bytes, pklen, b->sigs, b->siglens, b->msgs,
                                    b->msglens, m, b->results);
    }
    for (size_t k = 0; k < m; k++) {
        item *it = &b->items[b->index[k]];
        if (b->results[k] == HBS_OK)
            continue;
        it->v = ST_INVALID;
        snprintf(it->reason, sizeof it->reason, "signature does not match");
    }
    return HBS_CLI_OK;
}

/* A JSON string: quotes, backslashes and control characters escaped; other bytes as they
 * are (a file name that is UTF-8 stays valid JSON). */
static void json_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(out, "\\%c", c);
        else if (c < 0x20)
            fprintf(out, "\\u%04x", c);
        else
            fputc(c, out);
    }
    fputc('"', out);
}

static void print_item(const item *it, const char *msg_path, const char *sig_path,
                       const hbs_cli_batch_args *a)
{
    static const char *const names[] = {"ok", "invalid", "error"};
    if (a->quiet)
        return;
    if (a->json) {
        fputs("{\"file\": ", stdout);
        json_string(stdout, msg_path);
        fputs(", \"signature\": ", stdout);
        json_string(stdout, sig_path);
        printf(", \"status\": \"%s\", \"valid\": %s", names[it->v],
               it->v == ST_OK ? "true" : "false");
        if (it->v != ST_OK) {
            fputs(", \"reason\": ", stdout);
            json_string(stdout, it->reason);
        }
        fputs("}\n", stdout);
    } else if (a->terse) {
        if (it->v != ST_ERROR)
            puts(it->v == ST_OK ? "valid" : "invalid");
    } else if (it->v == ST_OK) {
        printf("%s: OK\n", msg_path);
    } else {
        printf("%s: %s (%s)\n", msg_path, it->v == ST_INVALID ? "INVALID" : "ERROR",
               it->reason);
    }
}

static int decode_options(verify_options *o, const hbs_key *pk, const hbs_cli_batch_args *a)
{
    memset(o, 0, sizeof *o);
    if (pk->scheme != HBS_SCHEME_SLHDSA) {
        o->family = pk->scheme == HBS_SCHEME_HSS    ? HBS_STATEFUL_HSS
                    : pk->scheme == HBS_SCHEME_XMSS ? HBS_STATEFUL_XMSS
                                                    : HBS_STATEFUL_XMSSMT;
        return HBS_CLI_OK;
    }
    o->p = hbs_slhdsa_params_get(pk->alg);
    if (!o->p)
        return hbs_cli_error(a->key_path, "unknown algorithm in the key");
    if (hbs_cli_choose_prehash(&o->ph, pk, a->prehash))
        return HBS_CLI_ERROR;
    if (a->context_hex &&
        hbs_cli_unhex("--context", a->context_hex, o->ctx, sizeof o->ctx, &o->ctxlen))
        return HBS_CLI_ERROR;
    return HBS_CLI_OK;
}

int hbs_cli_verify_many(const hbs_key *pk, const hbs_cli_batch_args *a)
{
    const hbs_cli_files *f = a->files;
    const size_t max = f->count < a->batch ? f->count : a->batch;
    double start = hbs_cli_now(), engine = 0;
    size_t done = 0, invalid = 0, errors = 0;
    verify_options o;
    batch b;
    int rc;

    memset(&b, 0, sizeof b);
    rc = decode_options(&o, pk, a);
    if (rc == HBS_CLI_OK)
        rc = batch_alloc(&b, max);
    while (rc == HBS_CLI_OK && done < f->count) {
        size_t count = 0, bytes = 0;
        while (done + count < f->count && count < max && bytes < HBS_CLI_BATCH_BYTES) {
            item *it = &b.items[count];
            item_read(it, f->msgs[done + count], f->sigs[done + count]);
            bytes += it->msglen + it->siglen;
            count++;
        }
        double t0 = hbs_cli_now();
        if (o.p)
            rc = verify_slhdsa(&b, count, &o, pk, a->gpu);
        else
            rc = verify_stateful(&b, count, &o, pk, a->gpu);
        engine += hbs_cli_now() - t0;
        for (size_t i = 0; i < count; i++) {
            if (rc == HBS_CLI_OK) {
                print_item(&b.items[i], f->msgs[done + i], f->sigs[done + i], a);
                invalid += b.items[i].v == ST_INVALID;
                errors += b.items[i].v == ST_ERROR;
            }
            item_clear(&b.items[i]);
        }
        if (rc == HBS_CLI_OK)
            done += count;
    }
    batch_free(&b);
    if (a->verbose)
        fprintf(stderr, "hbs: verify: %zu file%s (%zu invalid, %zu unreadable)\n", done,
                done == 1 ? "" : "s", invalid, errors);
    if (a->verbose && done) {
        char line[300];
        double all = hbs_cli_now() - start;
        hbs_cli_engine_line(line, sizeof line, a->gpu);
        fprintf(stderr, "hbs: verify: %s: %.3f s verifying (%.1f/s), %.3f s in all (%.1f/s "
                        "with file I/O)\n",
                line, engine, engine > 0 ? (double)done / engine : 0.0, all,
                all > 0 ? (double)done / all : 0.0);
    }
    if (rc)
        return rc;
    return errors ? HBS_CLI_ERROR : invalid ? HBS_CLI_INVALID : HBS_CLI_OK;
}
