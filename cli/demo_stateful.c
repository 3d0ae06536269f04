/* hbs demo, stateful part: LMS/HSS and XMSS/XMSS^MT keys in real key files. Each key signs
 * through its file, so the timed signature includes the fsynced state update that makes
 * index reuse impossible; the second signature must use the next index. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "hbs/stateful.h"

#define MAX_SIG 60000

/* Sets whose key generation takes well under a second on two cores. */
static const char *const demo_sets[] = {
    "LMS_SHA256_M32_H10/LMOTS_SHA256_N32_W8",
    "LMS_SHA256_M24_H10/LMOTS_SHA256_N24_W4",
    "LMS_SHAKE_M32_H10/LMOTS_SHAKE_N32_W4",
    "LMS_SHA256_M32_H10/LMOTS_SHA256_N32_W8,LMS_SHA256_M32_H10/LMOTS_SHA256_N32_W8",
    "XMSS-SHA2_10_256",
    "XMSS-SHAKE256_10_256",
    "XMSSMT-SHA2_20/2_256",
    "XMSSMT-SHA2_40/8_256",
};
#define NUM_DEMO_SETS (sizeof demo_sets / sizeof demo_sets[0])

static const hbs_cli_column columns[] = {
    {"algorithm", 78, 1}, {"keygen ms", 10, 0}, {"sign ms", 8, 0}, {"verify ms", 9, 0},
    {"sig bytes", 9, 0},  {"left", 14, 0},      {"check", 30, 1},
};
#define NUM_COLUMNS (sizeof columns / sizeof columns[0])

static const char demo_message[] = "hbs demo: a message signed with a stateful key";

typedef struct {
    double keygen_ms, sign_ms, verify_ms;
    size_t siglen;
    uint64_t left;
    const char *check; /* NULL when everything passed */
} sf_result;

static void run_one(sf_result *r, const char *alg, const char *path, uint8_t *sig)
{
    const uint8_t *msg = (const uint8_t *)demo_message;
    const size_t msglen = sizeof demo_message - 1;
    uint8_t pk[HBS_STATEFUL_MAX_PK_BYTES];
    size_t pklen;
    hbs_stateful_key *k = NULL;
    int family = hbs_stateful_family_of(alg);
    double t;
    uint64_t first;

    memset(r, 0, sizeof *r);
    t = hbs_cli_now();
    int err = hbs_stateful_keygen(alg, path, pk, sizeof pk, &pklen, NULL, 0, NULL, NULL);
    r->keygen_ms = (hbs_cli_now() - t) * 1e3;
    if (err || family < 0) {
        r->check = "FAILED: key generation";
        goto done;
    }
    if (hbs_stateful_open(&k, path, 0, 1) != HBS_OK) {
        r->check = "FAILED: opening the key file";
        goto done;
    }
    first = hbs_stateful_key_index(k);
    /* the first signature warms the caches and the file; the second is timed */
    err = hbs_stateful_sign(k, sig, MAX_SIG, &r->siglen, msg, msglen);
    t = hbs_cli_now();
    if (!err)
        err = hbs_stateful_sign(k, sig, MAX_SIG, &r->siglen, msg, msglen);
    r->sign_ms = (hbs_cli_now() - t) * 1e3;
    if (err) {
        r->check = "FAILED: signing";
        goto done;
    }
    if (hbs_stateful_key_index(k) != first + 2) {
        r->check = "FAILED: index did not advance";
        goto done;
    }
    r->left = hbs_stateful_key_remaining(k);
    t = hbs_cli_now();
    err = hbs_stateful_verify((hbs_stateful_family)family, pk, pklen, msg, msglen, sig,
                              r->siglen);
    r->verify_ms = (hbs_cli_now() - t) * 1e3;
    if (err) {
        r->check = "FAILED: signature rejected";
        goto done;
    }
    sig[r->siglen / 2] ^= 1;
    if (hbs_stateful_verify((hbs_stateful_family)family, pk, pklen, msg, msglen, sig,
                            r->siglen) != HBS_ERR_VERIFY_FAILED)
        r->check = "FAILED: tampered one accepted";
done:
    hbs_stateful_close(k);
}

static void remove_key(const char *path)
{
    char p[4200];
    unlink(path);
    snprintf(p, sizeof p, "%s.lock", path);
    unlink(p);
}

int hbs_cli_demo_stateful(void)
{
    char dir[] = "/tmp/hbs-demo-XXXXXX", path[64];
    uint8_t *sig = malloc(MAX_SIG);
    int failures = 0;

    if (!sig || !mkdtemp(dir)) {
        free(sig);
        printf("stateful part skipped: no scratch folder\n");
        return 1;
    }
    printf("\nStateful schemes (RFC 8554 LMS/HSS, RFC 8391 XMSS/XMSS^MT, SP 800-208): key files "
           "in %s;\nsign ms includes the state written, fsynced and renamed before the "
           "signature is released\n",
           dir);
    hbs_cli_table_header(stdout, columns, NUM_COLUMNS);
    for (size_t i = 0; i < NUM_DEMO_SETS; i++) {
        sf_result r;
        char kg[32], sg[32], vf[32], sb[32], left[32];
        snprintf(path, sizeof path, "%s/key%zu", dir, i);
        run_one(&r, demo_sets[i], path, sig);
        remove_key(path);
        snprintf(kg, sizeof kg, "%.2f", r.keygen_ms);
        snprintf(sg, sizeof sg, "%.2f", r.sign_ms);
        snprintf(vf, sizeof vf, "%.3f", r.verify_ms);
        snprintf(sb, sizeof sb, "%zu", r.siglen);
        snprintf(left, sizeof left, "%llu", (unsigned long long)r.left);
        const char *cells[NUM_COLUMNS] = {demo_sets[i], kg, sg, vf, sb, left,
                                          r.check ? r.check : "ok: verified, tamper rejected"};
        hbs_cli_table_row(stdout, columns, NUM_COLUMNS, cells);
        failures += r.check != NULL;
    }
    rmdir(dir);
    free(sig);
    return failures;
}
