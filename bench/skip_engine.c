/* The batch end of GPU batch signing on the CPU alone: an XMSS key skips over a batch of
 * indices with a leaf engine that has the key's whole tree at hand (as the GPU batch signer
 * has the trees it built). Once with the leaves only (the skip hashes every inner node its
 * BDS steps need) and once with the inner nodes as well (it hashes none). Both must end in
 * the same state bytes; the table gives the median time of each and their ratio, and
 * --json writes them.
 *
 *   cmake --build build --target hbs_bench_skip
 *   build/hbs_bench_skip [-a XMSS-SHA2_16_256] [--count 16384] [--runs 3] [--json FILE]
 *                        [--nodes-only]   (no leaves-only runs: to profile the other)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_time.h"
#include "core/leaf_engine.h"
#include "hbs/xmss.h"
#include "xmss/internal.h"
#include "xmss/xmss.h"

typedef struct {
    const uint8_t *tree; /* every node of tree 0, leaves first */
    size_t n;
} whole_tree;

static int tree_leaves(void *user, const hbs_xmss_leaf_job *jobs, size_t njobs, uint32_t first,
                       size_t count, uint8_t *out)
{
    const whole_tree *w = user;
    if (njobs != 1 || jobs[0].layer != 0 || jobs[0].tree != 0)
        return HBS_ERR_UNSUPPORTED;
    memcpy(out, w->tree + (size_t)first * w->n, count * w->n);
    return HBS_OK;
}

static const uint8_t *tree_nodes(void *user, const hbs_xmss_leaf_job *job, unsigned h)
{
    const whole_tree *w = user;
    (void)h;
    return job->layer == 0 && job->tree == 0 ? w->tree : NULL;
}

int main(int argc, char **argv)
{
    const char *alg = "XMSS-SHA2_16_256", *json = NULL;
    unsigned long count = 16384, runs = 3;
    int nodes_only = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-a") && i + 1 < argc)
            alg = argv[++i];
        else if (!strcmp(argv[i], "--count") && i + 1 < argc)
            count = strtoul(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--runs") && i + 1 < argc)
            runs = strtoul(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--json") && i + 1 < argc)
            json = argv[++i];
        else if (!strcmp(argv[i], "--nodes-only"))
            nodes_only = 1;
        else {
            fprintf(stderr,
                    "usage: %s [-a XMSS-set] [--count N] [--runs R] [--json FILE] "
                    "[--nodes-only]\n",
                    argv[0]);
            return 2;
        }
    }
    const hbs_xmss_params *p = hbs_xmss_params_by_name(alg);
    if (!p || p->d != 1 || runs == 0 || runs > 64 || count == 0 ||
        count >= ((uint64_t)1 << p->tree_h)) {
        fprintf(stderr, "skip_engine: a single-tree XMSS set, 0 < count < 2^h, 1..64 runs\n");
        return 2;
    }
    const size_t n = p->n, leaves = (size_t)1 << p->tree_h;
    uint8_t seed[3 * 64], pk[256], *tree = malloc((2 * leaves - 1) * n);
    size_t pklen;
    hbs_xmss_key *base = NULL;
    for (size_t i = 0; i < sizeof seed; i++)
        seed[i] = (uint8_t)(i * 7 + 1);
    fprintf(stderr, "skip_engine: %s key and its tree on the CPU...\n", alg);
    if (!tree || hbs_xmss_keygen(&base, pk, sizeof pk, &pklen, p, 0, seed, 3 * n, NULL, NULL)) {
        fprintf(stderr, "skip_engine: key generation failed\n");
        return 1;
    }
    {
        xmss_ctx c;
        hbs_xmss_ctx_init(&c, p, seed + 2 * n, seed);
        hbs_xmss_leaf_range(&c, tree, 0, 0, 0, leaves);
        hbs_xmss_tree_levels(&c, tree, 0, 0, p->tree_h);
        hbs_xmss_ctx_wipe(&c);
    }
    const size_t xlen = hbs_xmss_key_export_bytes(base);
    uint8_t *x0 = malloc(xlen), *xa = malloc(xlen), *xb = malloc(xlen);
    size_t l0 = 0;
    if (!x0 || !xa || !xb || hbs_xmss_key_export(base, x0, xlen, &l0))
        return 1;
    whole_tree w = {tree, n};
    hbs_leaf_engine e;
    memset(&e, 0, sizeof e);
    e.xmss_leaves = tree_leaves;
    e.user = &w;
    e.min_leaves = 32;
    e.slice_leaves = leaves;
    double t[2][64];
    int same = 1;
    for (unsigned long r = 0; r < runs; r++)
        for (int nodes = nodes_only; nodes < 2; nodes++) {
            hbs_xmss_key *k = NULL;
            size_t len = 0;
            e.xmss_tree = nodes ? tree_nodes : NULL;
            if (hbs_xmss_key_import(&k, x0, l0))
                return 1;
            const double s = now_ms();
            const int err = hbs_xmss_key_skip_to_engine(k, count, &e);
            t[nodes][r] = now_ms() - s;
            if (err || hbs_xmss_key_export(k, nodes ? xb : xa, xlen, &len))
                return 1;
            hbs_xmss_key_free(k);
            if (nodes && !nodes_only)
                same &= memcmp(xa, xb, len) == 0;
        }
    qsort(t[0], runs, sizeof t[0][0], cmp_double);
    qsort(t[1], runs, sizeof t[1][0], cmp_double);
    const double a = nodes_only ? 0 : t[0][runs / 2], b = t[1][runs / 2];
    printf("skip over %lu indices of %s from index 0, median of %lu runs, one thread of the "
           "skip; states %s\n",
           count, alg, runs, same ? "equal" : "DIFFER");
    printf("%-28s %12s\n", "engine gives", "ms");
    printf("%-28s %12.3f\n", "leaves", a);
    printf("%-28s %12.3f\n", "leaves and inner nodes", b);
    printf("%-28s %12.1f\n", "ratio", b > 0 ? a / b : 0);
    if (json) {
        FILE *f = fopen(json, "w");
        if (!f)
            return 1;
        fprintf(f,
                "{\"alg\": \"%s\", \"count\": %lu, \"runs\": %lu, \"leaves_ms\": %.6f, "
                "\"nodes_ms\": %.6f, \"states_equal\": %s}\n",
                alg, count, runs, a, b, same ? "true" : "false");
        fclose(f);
    }
    hbs_xmss_key_free(base);
    free(tree);
    free(x0);
    free(xa);
    free(xb);
    return same ? 0 : 1;
}
