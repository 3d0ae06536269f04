/* The host's part of stateful key generation with a leaf engine: the key generated through
 * hbs_stateful_keygen_engine with an engine that hands out leaves it recorded in a first
 * run, so that a run's time is all the host's own work (the trees above the leaves, the
 * traversal state, the one-time signatures between layers, the key file) beside a copy of
 * the leaves. What no faster engine (GPU) can remove from key generation: GPU key generation
 * of XMSSMT-SHA2_20/2_256 takes 1.5 ms on an H100, of which the GPU's leaves are about 1.2.
 * Two columns: the engine hands out the leaves alone (the host hashes every inner node), or
 * the whole trees too, as the GPU's engine does (xmss_trees). The public keys of all runs
 * must be equal; the table gives the median of the runs, the engine's share of it, and
 * --json writes them.
 *
 *   cmake --build build --target hbs_bench_keygen_host
 *   build/hbs_bench_keygen_host [-a XMSSMT-SHA2_20/2_256] [--runs 21] [--dir /tmp]
 *                               [--json FILE]
 * (--dir: where the key file is written and synced, then removed; /dev/shm leaves the disk
 * out of it.) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_time.h"
#include "core/leaf_engine.h"
#include "hbs/stateful.h"
#include "xmss/internal.h"
#include "xmss/params.h"

typedef struct {
    uint32_t layer, first;
    uint64_t tree;
    size_t count, bytes;
    uint8_t *leaves;
    uint8_t *nodes; /* a whole tree's every node (the leaves, then each level up), or NULL */
} recorded;

typedef struct {
    recorded r[64];
    size_t nr;
    int replay; /* 0: compute and record; 1: hand out what was recorded */
    double engine_ms;
} recorder;

static recorded *find(recorder *rc, const hbs_xmss_leaf_job *j, uint32_t first, size_t count)
{
    for (size_t i = 0; i < rc->nr; i++)
        if (rc->r[i].layer == j->layer && rc->r[i].tree == j->tree &&
            rc->r[i].first == first && rc->r[i].count == count)
            return &rc->r[i];
    return NULL;
}

static int leaves(void *user, const hbs_xmss_leaf_job *jobs, size_t njobs, uint32_t first,
                  size_t count, uint8_t *out)
{
    recorder *rc = user;
    const double s = now_ms();
    for (size_t k = 0; k < njobs; k++) {
        const hbs_xmss_leaf_job *j = &jobs[k];
        uint8_t *o = out + k * count * j->n;
        recorded *r = find(rc, j, first, count);
        if (rc->replay) {
            if (!r)
                return HBS_ERR_UNSUPPORTED; /* a call the first run did not make */
            memcpy(o, r->leaves, r->bytes);
            continue;
        }
        const hbs_xmss_params *p = hbs_xmss_params_by_oid(j->mt, j->oid);
        if (!p || rc->nr == sizeof rc->r / sizeof rc->r[0])
            return HBS_ERR_UNSUPPORTED;
        xmss_ctx c;
        hbs_xmss_ctx_init(&c, p, j->pub_seed, j->sk_seed);
        hbs_xmss_leaf_range(&c, o, j->layer, j->tree, first, count);
        r = &rc->r[rc->nr];
        r->bytes = count * j->n;
        r->nodes = NULL;
        if (!(r->leaves = malloc(r->bytes))) {
            hbs_xmss_ctx_wipe(&c);
            return HBS_ERR_NO_MEMORY;
        }
        memcpy(r->leaves, o, r->bytes);
        if (first == 0 && count == (size_t)1 << p->tree_h) {
            /* a whole tree: its inner nodes too, for the runs whose engine hands them out */
            if (!(r->nodes = malloc((2 * count - 1) * j->n))) {
                hbs_xmss_ctx_wipe(&c);
                return HBS_ERR_NO_MEMORY;
            }
            memcpy(r->nodes, o, r->bytes);
            hbs_xmss_tree_levels(&c, r->nodes, j->layer, j->tree, p->tree_h);
        }
        hbs_xmss_ctx_wipe(&c);
        r->layer = j->layer;
        r->tree = j->tree;
        r->first = first;
        r->count = count;
        rc->nr++;
    }
    rc->engine_ms += now_ms() - s;
    return HBS_OK;
}

/* The engine's xmss_trees: whole trees the first run recorded. */
static int trees(void *user, const hbs_xmss_leaf_job *jobs, size_t njobs, unsigned h,
                 uint8_t *out)
{
    recorder *rc = user;
    const double s = now_ms();
    const size_t tn = ((size_t)2 << h) - 1;
    for (size_t k = 0; k < njobs; k++) {
        recorded *r = find(rc, &jobs[k], 0, (size_t)1 << h);
        if (!r || !r->nodes)
            return HBS_ERR_UNSUPPORTED;
        memcpy(out + k * tn * jobs[k].n, r->nodes, tn * jobs[k].n);
    }
    rc->engine_ms += now_ms() - s;
    return HBS_OK;
}

/* runs key generations from seed with the recorded leaves (the record made first); their
 * public keys checked against pk0; medians into *total, *engine (tot, eng: runs each). */
static int measure(const char *alg, const char *path, const uint8_t *seed,
                   const hbs_xmss_params *xp, hbs_leaf_engine *e, unsigned long runs,
                   double *tot, double *eng, const uint8_t *pk0, size_t pklen0, int *same,
                   double *total, double *engine)
{
    recorder *rc = e->user;
    uint8_t pk[256];
    size_t pklen = 0;
    for (unsigned long r = 0; r < runs; r++) {
        rc->replay = 1;
        rc->engine_ms = 0;
        unlink(path);
        const double s = now_ms();
        int err = hbs_stateful_keygen_engine(alg, path, 0, pk, sizeof pk, &pklen, seed,
                                             3 * xp->n, NULL, NULL, e);
        tot[r] = now_ms() - s;
        eng[r] = rc->engine_ms;
        if (err) {
            fprintf(stderr, "keygen_host: %s: %s\n", alg, hbs_strerror(err));
            return err;
        }
        *same &= pklen == pklen0 && memcmp(pk, pk0, pklen) == 0;
    }
    qsort(tot, runs, sizeof *tot, cmp_double);
    qsort(eng, runs, sizeof *eng, cmp_double);
    *total = tot[runs / 2];
    *engine = eng[runs / 2];
    return HBS_OK;
}

int main(int argc, char **argv)
{
    const char *alg = "XMSSMT-SHA2_20/2_256", *json = NULL, *where = "/tmp";
    unsigned long runs = 21;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-a") && i + 1 < argc)
            alg = argv[++i];
        else if (!strcmp(argv[i], "--runs") && i + 1 < argc)
            runs = strtoul(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--json") && i + 1 < argc)
            json = argv[++i];
        else if (!strcmp(argv[i], "--dir") && i + 1 < argc)
            where = argv[++i];
        else {
            fprintf(stderr,
                    "usage: %s [-a XMSS or XMSS^MT set] [--runs R] [--dir DIR] [--json FILE]\n",
                    argv[0]);
            return 2;
        }
    }
    const hbs_xmss_params *xp = hbs_xmss_params_by_name(alg);
    if (!xp || runs == 0 || runs > 1000) {
        fprintf(stderr, "keygen_host: an XMSS or XMSS^MT set, 1..1000 runs\n");
        return 2;
    }
    char dir[512], path[600];
    snprintf(dir, sizeof dir, "%s/hbs-keygen-host-XXXXXX", where);
    if (!mkdtemp(dir)) {
        fprintf(stderr, "keygen_host: cannot make a folder in %s\n", where);
        return 1;
    }
    snprintf(path, sizeof path, "%s/key.state", dir);
    static recorder rc;
    hbs_leaf_engine e;
    memset(&e, 0, sizeof e);
    e.xmss_leaves = leaves;
    e.user = &rc;
    e.min_leaves = 32;
    e.slice_leaves = (size_t)1 << 20;
    uint8_t seed[3 * 64], pk0[256];
    size_t pklen0 = 0;
    for (size_t i = 0; i < sizeof seed; i++)
        seed[i] = (uint8_t)(i * 7 + 1);
    double *tot = calloc(runs, sizeof *tot), *eng = calloc(runs, sizeof *eng);
    double a = 0, b = 0, at = 0, bt = 0;
    int same = 1, err = !tot || !eng;
    /* the first key generation records the leaves (the CPU computes them); then the runs
     * replay them, first with the leaves alone, then with the whole trees handed out too
     * (xmss_trees, as the GPU's engine does: no inner node hashed on the host), alternating */
    rc.replay = 0;
    if (!err && (err = hbs_stateful_keygen_engine(alg, path, 0, pk0, sizeof pk0, &pklen0, seed,
                                                  3 * xp->n, NULL, NULL, &e)))
        fprintf(stderr, "keygen_host: %s: %s\n", alg, hbs_strerror(err));
    for (int round = 0; round < 2 && !err; round++) {
        double x, y;
        e.xmss_trees = NULL;
        err = measure(alg, path, seed, xp, &e, runs, tot, eng, pk0, pklen0, &same, &x, &y);
        if (!err) {
            a += x / 2;
            b += y / 2;
            e.xmss_trees = trees;
            err = measure(alg, path, seed, xp, &e, runs, tot, eng, pk0, pklen0, &same, &x, &y);
            at += x / 2;
            bt += y / 2;
        }
    }
    unlink(path);
    rmdir(dir);
    for (size_t i = 0; i < rc.nr; i++) {
        free(rc.r[i].leaves);
        free(rc.r[i].nodes);
    }
    if (err) {
        free(tot);
        free(eng);
        return 1;
    }
    printf("key generation of %s with its leaves handed out at once (its key file written in "
           "%s), the mean of two rounds' medians of %lu runs; public keys %s\n",
           alg, where, runs, same ? "equal" : "DIFFER");
    printf("%-28s %14s %14s\n", "ms", "leaves", "whole trees");
    printf("%-28s %14.3f %14.3f\n", "whole call", a, at);
    printf("%-28s %14.3f %14.3f\n", "in the engine (copies)", b, bt);
    printf("%-28s %14.3f %14.3f\n", "the host's own work", a - b, at - bt);
    if (json) {
        FILE *f = fopen(json, "w");
        if (!f)
            return 1;
        fprintf(f,
                "{\"alg\": \"%s\", \"runs\": %lu, \"total_ms\": %.6f, \"engine_ms\": %.6f, "
                "\"host_ms\": %.6f, \"trees_total_ms\": %.6f, \"trees_engine_ms\": %.6f, "
                "\"trees_host_ms\": %.6f, \"keys_equal\": %s}\n",
                alg, runs, a, b, a - b, at, bt, at - bt, same ? "true" : "false");
        fclose(f);
    }
    free(tot);
    free(eng);
    return same ? 0 : 1;
}
