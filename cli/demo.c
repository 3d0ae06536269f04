/* hbs demo: key generation, signing and verification with every SLH-DSA parameter set and
 * a choice of stateful ones (demo_stateful.c), timed. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "hbs/gpu.h"

static const hbs_cli_option options[] = {{0, 0, NULL, NULL, NULL}};

static const char demo_message[] = "hbs demo: a message signed with SLH-DSA (FIPS 205)";

static const hbs_cli_column columns[] = {
    {"algorithm", 20, 1}, {"keygen ms", 10, 0}, {"sign ms", 10, 0}, {"verify ms", 10, 0},
    {"sig bytes", 9, 0},  {"pk bytes", 8, 0},   {"check", 30, 1},
};
#define NUM_COLUMNS (sizeof columns / sizeof columns[0])

typedef struct {
    double keygen_ms, sign_ms, verify_ms;
    const char *check; /* NULL when everything passed */
} demo_result;

/* One parameter set: keygen, sign and verify once each (timed), then make sure a
 * signature with one flipped bit is rejected. */
static void run_one(demo_result *r, const hbs_slhdsa_params *p, uint8_t *sig)
{
    uint8_t sk[HBS_SLHDSA_MAX_SK_BYTES], pk[HBS_SLHDSA_MAX_PK_BYTES];
    const uint8_t *msg = (const uint8_t *)demo_message;
    size_t msglen = sizeof demo_message - 1, siglen = hbs_slhdsa_sig_bytes(p);
    double t;

    memset(r, 0, sizeof *r);
    t = hbs_cli_now();
    int err = hbs_slhdsa_keygen(p, sk, pk);
    r->keygen_ms = (hbs_cli_now() - t) * 1e3;
    if (err) {
        r->check = "FAILED: key generation";
        goto done;
    }
    t = hbs_cli_now();
    err = hbs_slhdsa_sign(p, sig, msg, msglen, NULL, 0, sk);
    r->sign_ms = (hbs_cli_now() - t) * 1e3;
    if (err) {
        r->check = "FAILED: signing";
        goto done;
    }
    t = hbs_cli_now();
    err = hbs_slhdsa_verify(p, sig, siglen, msg, msglen, NULL, 0, pk);
    r->verify_ms = (hbs_cli_now() - t) * 1e3;
    if (err) {
        r->check = "FAILED: signature rejected";
        goto done;
    }
    sig[siglen / 2] ^= 1;
    if (hbs_slhdsa_verify(p, sig, siglen, msg, msglen, NULL, 0, pk) != HBS_ERR_VERIFY_FAILED)
        r->check = "FAILED: tampered one accepted";
done:
    hbs_memzero(sk, sizeof sk);
}

static const hbs_cli_column gpu_columns[] = {
    {"algorithm", 20, 1}, {"gpu sign ms", 11, 0}, {"batch sigs/s", 12, 0},
    {"gpu verify", 10, 1}, {"check", 36, 1},
};
#define GPU_COLUMNS (sizeof gpu_columns / sizeof gpu_columns[0])
#define GPU_BATCH 256

/* The GPU part: for every set one signature alone (timed), a batch of GPU_BATCH (timed),
 * both compared with the CPU's deterministic signature, then verified on the GPU with one
 * tampered copy. Returns the number of sets that failed. */
static int gpu_demo(const char *gpu, uint8_t *sig)
{
    const uint8_t *msg = (const uint8_t *)demo_message;
    size_t msglen = sizeof demo_message - 1;
    uint8_t *gsig = malloc(HBS_SLHDSA_MAX_SIG_BYTES * (size_t)GPU_BATCH);
    const uint8_t *msgs[GPU_BATCH], *sigs[2];
    size_t lens[GPU_BATCH], siglens[2];
    int failures = 0;
    if (!gsig) {
        printf("GPU part skipped: out of memory\n");
        return 1;
    }
    for (size_t i = 0; i < GPU_BATCH; i++) {
        msgs[i] = msg;
        lens[i] = msglen;
    }
    printf("\nGPU (%s): deterministic signing, compared with the CPU\n", gpu);
    hbs_cli_table_header(stdout, gpu_columns, GPU_COLUMNS);
    for (int i = 0; i < HBS_SLHDSA_NUM_PARAMS; i++) {
        const hbs_slhdsa_params *p = hbs_slhdsa_params_get((hbs_slhdsa_id)i);
        const size_t sb = hbs_slhdsa_sig_bytes(p);
        uint8_t sk[HBS_SLHDSA_MAX_SK_BYTES], pk[HBS_SLHDSA_MAX_PK_BYTES];
        char one[32] = "-", rate[32] = "-";
        const char *check = "ok: same as CPU, tamper rejected", *ver = "-";
        int res[2];
        int err = hbs_slhdsa_keygen(p, sk, pk);
        if (!err)
            err = hbs_slhdsa_sign_ex(p, sig, msg, msglen, NULL, 0, HBS_PREHASH_NONE, sk, NULL);
        if (!err)
            err = hbs_gpu_slhdsa_sign(p, gsig, msg, msglen, NULL, 0, HBS_PREHASH_NONE, sk, NULL);
        double t = hbs_cli_now();
        if (!err)
            err = hbs_gpu_slhdsa_sign(p, gsig, msg, msglen, NULL, 0, HBS_PREHASH_NONE, sk, NULL);
        snprintf(one, sizeof one, "%.3f", (hbs_cli_now() - t) * 1e3);
        t = hbs_cli_now();
        if (!err)
            err = hbs_gpu_slhdsa_sign_many(p, gsig + sb, msgs, lens, GPU_BATCH - 1, NULL, 0,
                                           HBS_PREHASH_NONE, sk, 1, NULL);
        snprintf(rate, sizeof rate, "%.0f", (GPU_BATCH - 1) / (hbs_cli_now() - t));
        if (err) {
            check = "FAILED: GPU error";
        } else if (memcmp(gsig, sig, sb) != 0 || memcmp(gsig + sb, sig, sb) != 0) {
            check = "FAILED: differs from the CPU";
        } else {
            memcpy(gsig + sb, gsig, sb);
            gsig[sb + sb / 2] ^= 1;
            sigs[0] = gsig;
            sigs[1] = gsig + sb;
            siglens[0] = siglens[1] = sb;
            err = hbs_gpu_slhdsa_verify_many(p, res, sigs, siglens, msgs, lens, 2, NULL, 0,
                                             HBS_PREHASH_NONE, pk, 1);
            ver = res[0] == 0 ? "valid" : "REJECTED";
            if (res[0] != 0 || res[1] != HBS_ERR_VERIFY_FAILED)
                check = "FAILED: GPU verification";
        }
        hbs_memzero(sk, sizeof sk);
        const char *cells[GPU_COLUMNS] = {hbs_slhdsa_name(p), one, rate, ver, check};
        hbs_cli_table_row(stdout, gpu_columns, GPU_COLUMNS, cells);
        failures += strncmp(check, "ok", 2) != 0;
    }
    free(gsig);
    return failures;
}

static int run(int argc, char **argv)
{
    hbs_cli_parser ps;
    const char *v;
    int id;
    hbs_cli_parser_init(&ps, &hbs_cli_cmd_demo, argc, argv);
    while ((id = hbs_cli_parser_next(&ps, &v)) > 0) {
    }
    if ((id = hbs_cli_parser_end(id)) != HBS_CLI_OK)
        return id == HBS_CLI_DONE ? HBS_CLI_OK : id;

    char backend[128];
    hbs_cli_backend_line(backend, sizeof backend);
    printf("hbs %s demo: SLH-DSA (FIPS 205), every parameter set, then LMS/HSS and XMSS; one "
           "run of each operation\n",
           hbs_version());
    printf("backend: %s\n", backend);
    char gpu[256] = "";
    const int have_gpu = hbs_gpu_device_count() > 0 && hbs_gpu_device_name(0, gpu, sizeof gpu) == 0;
    if (have_gpu)
        printf("GPU: %s: used after the CPU table (same keys, byte-identical signatures)\n", gpu);
    else
        printf("GPU: not used (none in this build)\n");
    printf("message: \"%s\" (%zu bytes); pure SLH-DSA, empty context, hedged signing\n\n",
           demo_message, sizeof demo_message - 1);

    uint8_t *sig = malloc(HBS_SLHDSA_MAX_SIG_BYTES);
    if (!sig)
        return hbs_cli_error("demo", "out of memory");
    int failures = 0;
    double t0 = hbs_cli_now();
    hbs_cli_table_header(stdout, columns, NUM_COLUMNS);
    for (int i = 0; i < HBS_SLHDSA_NUM_PARAMS; i++) {
        const hbs_slhdsa_params *p = hbs_slhdsa_params_get((hbs_slhdsa_id)i);
        demo_result r;
        char kg[32], sg[32], vf[32], sb[32], pb[32];
        run_one(&r, p, sig);
        snprintf(kg, sizeof kg, "%.2f", r.keygen_ms);
        snprintf(sg, sizeof sg, "%.2f", r.sign_ms);
        snprintf(vf, sizeof vf, "%.2f", r.verify_ms);
        snprintf(sb, sizeof sb, "%zu", hbs_slhdsa_sig_bytes(p));
        snprintf(pb, sizeof pb, "%zu", hbs_slhdsa_pk_bytes(p));
        const char *cells[NUM_COLUMNS] = {hbs_slhdsa_name(p), kg, sg, vf, sb, pb,
                                          r.check ? r.check : "ok: verified, tamper rejected"};
        hbs_cli_table_row(stdout, columns, NUM_COLUMNS, cells);
        failures += r.check != NULL;
    }
    const int sf_failures = hbs_cli_demo_stateful();
    failures += sf_failures;
    if (have_gpu)
        failures += gpu_demo(gpu, sig);
    free(sig);
    printf("\ntotal %.2f s. ", hbs_cli_now() - t0);
    if (failures) {
        printf("%d parameter set(s) FAILED\n", failures);
        fflush(stdout);
        return hbs_cli_error("demo", "%d parameter set(s) failed", failures);
    }
    printf("All %d SLH-DSA parameter sets and the stateful ones: signatures verified, tampered "
           "signatures rejected.\n",
           (int)HBS_SLHDSA_NUM_PARAMS);
    if (fflush(stdout) != 0)
        return hbs_cli_error("stdout", "write failed");
    return HBS_CLI_OK;
}

const hbs_cli_command hbs_cli_cmd_demo = {
    "demo",
    run,
    "",
    "Run key generation, signing and verification with every parameter set and time them.",
    "Times are of one run each (see 'hbs bench' for medians). Exit status 2 if any\n"
    "signature fails to verify or a tampered one is accepted.",
    options,
};
