/* Hash chains (hbs_sha256_chains, hbs_shake256_chains) on the active backend against the one-step-at-a-time
 * reference, for the layouts the schemes use and a few they don't (which take the
 * fallback path), uniform and mixed step counts, with and without a prefix midstate. */
#include <stdlib.h>
#include <string.h>

#include "hash/hash.h"
#include "test.h"

typedef struct {
    hbs_chain_layout lay;
    size_t len;
    uint32_t max_steps;
    const char *what;
    int shake;
} chain_case;

static const chain_case cases[] = {
    {{18, 4, 22, 16}, 38, 15, "SLH-DSA-SHA2-128", 0},
    {{18, 4, 22, 24}, 46, 15, "SLH-DSA-SHA2-192", 0},
    {{18, 4, 22, 32}, 54, 15, "SLH-DSA-SHA2-256", 0},
    {{22, 1, 23, 32}, 55, 255, "LM-OTS n=32", 0},
    {{22, 1, 23, 24}, 47, 255, "LM-OTS n=24", 0},
    {{0, 2, 7, 20}, 40, 40, "odd layout", 0},
    {{60, 3, 4, 32}, 70, 9, "two-block message", 0},
    {{44, 4, 48, 16}, 64, 15, "SLH-DSA-SHAKE-128", 1},
    {{52, 4, 56, 24}, 80, 15, "SLH-DSA-SHAKE-192", 1},
    {{60, 4, 64, 32}, 96, 15, "SLH-DSA-SHAKE-256", 1},
    {{22, 1, 23, 32}, 55, 255, "LM-OTS SHAKE n=32", 1},
    {{3, 2, 9, 20}, 140, 7, "SHAKE two-block message", 1},
};

static int run_case(const chain_case *c, const hbs_sha256_ctx *prefix, size_t count,
                    int uniform)
{
    const size_t len = c->len;
    uint8_t *a = malloc(count * len + 1), *b = malloc(count * len + 1);
    uint8_t *steps = malloc(count + 1);
    uint32_t all = 1 + (uint32_t)(count % c->max_steps);
    int ok;
    test_rand_bytes(a, count * len);
    test_rand_bytes(steps, count);
    for (size_t i = 0; i < count; i++) {
        steps[i] = (uint8_t)(steps[i] % (c->max_steps + 1));
        /* start counters low enough that some chains run to the counter's top */
        a[i * len + c->lay.ctr_off + c->lay.ctr_bytes - 1] %= 16;
    }
    memcpy(b, a, count * len);
    if (c->shake) {
        hbs_shake256_chains(a, len, &c->lay, uniform ? NULL : steps, all, count);
        hbs_shake256_chains_portable(b, len, &c->lay, uniform ? NULL : steps, all, count);
    } else {
        hbs_sha256_chains(prefix, a, len, &c->lay, uniform ? NULL : steps, all, count);
        hbs_sha256_chains_portable(prefix, b, len, &c->lay, uniform ? NULL : steps, all, count);
    }
    ok = count == 0 || memcmp(a, b, count * len) == 0;
    free(a);
    free(b);
    free(steps);
    return ok;
}

static void test_chains_match_reference(void)
{
    static const size_t counts[] = {0, 1, 2, 7, 15, 16, 17, 31, 33, 40, 100, 560};
    hbs_sha256_ctx pre;
    uint8_t seed[64];
    size_t runs = 0;
    test_rand_bytes(seed, sizeof seed);
    hbs_sha256_init(&pre);
    hbs_sha256_update(&pre, seed, sizeof seed);
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
        for (size_t j = 0; j < sizeof counts / sizeof counts[0]; j++)
            for (int uniform = 0; uniform < 2; uniform++)
                for (int withpre = 0; withpre < 2 - cases[k].shake; withpre++) {
                    CHECK_MSG(run_case(&cases[k], withpre ? &pre : NULL, counts[j], uniform),
                              "%s, %zu chains, %s steps, %s prefix", cases[k].what, counts[j],
                              uniform ? "uniform" : "mixed", withpre ? "with" : "no");
                    runs++;
                }
    test_note("%zu batches", runs);
}

const hbs_test hbs_tests_chains[] = {
    {"chains_match_reference", test_chains_match_reference},
    {NULL, NULL},
};
