/* hbs verify: exit 0 if the signature is valid, 1 if not, 2 on any other error; with many
 * files (batch.h), 0 if all are valid, 1 if any is not, 2 if any could not be checked. */
#include <stdlib.h>
#include <string.h>

#include "batch.h"
#include "cli.h"
#include "stateful.h"

enum { OPT_PUBLIC = 1, OPT_QUIET, OPT_SIG_DIR, OPT_JSON };

static const hbs_cli_option options[] = {
    {OPT_PUBLIC, 'p', "public", "FILE", "public key file"},
    {HBS_CLI_OPT_MESSAGE, 'm', "message", "FILE", "signed message (may be repeated; or name the files "
                                          "after the options)"},
    {HBS_CLI_OPT_SIG, 'x', "signature", "FILE", "signature file (raw bytes), for one message"},
    {OPT_SIG_DIR, 0, "sig-dir", "DIR", "the FILE.sig files are in DIR, not beside each FILE"},
    {OPT_JSON, 0, "json", NULL, "one JSON object per file and line, instead of text"},
    {HBS_CLI_OPT_GPU, 0, "gpu", "[=auto]", "verify on the GPU (in batches); without a GPU an error, or "
                                   "the CPU with =auto"},
    {HBS_CLI_OPT_GPU_DEVICES, 0, "gpu-devices", "LIST", "with --gpu: the GPUs to spread the work over, "
                                                  "such as 0,2 (default all)"},
    {HBS_CLI_OPT_BATCH, 0, "batch", "N", "files read and verified at once (default 4096)"},
    {HBS_CLI_OPT_VERBOSE, 'v', "verbose", NULL, "say on stderr which engine verified, and how fast"},
    {HBS_CLI_OPT_CONTEXT, 0, "context", "HEX", "context string, 0 to 255 bytes (default empty)"},
    {HBS_CLI_OPT_PREHASH, 0, "prehash", "HASH", "HashSLH-DSA with this pre-hash: SHA2-256, SHAKE-128, ..."},
    {HBS_CLI_OPT_RAW, 0, "raw", NULL, "the public key file holds the bare FIPS 205 bytes (needs -a)"},
    {HBS_CLI_OPT_ALG, 'a', "algorithm", "ALG", "parameter set of a --raw key"},
    {OPT_QUIET, 'q', "quiet", NULL, "print nothing; the exit status tells"},
    {0, 0, NULL, NULL, NULL},
};

typedef struct {
    hbs_cli_many_opts m;
    const char *pk_path, *sig_dir;
    int quiet, json;
} verify_args;

static int parse_args(verify_args *a, int argc, char **argv)
{
    hbs_cli_parser ps;
    const char *v;
    int id, taken;
    memset(a, 0, sizeof *a);
    if (hbs_cli_many_init(&a->m, argc))
        return HBS_CLI_ERROR;
    hbs_cli_parser_init(&ps, &hbs_cli_cmd_verify, argc, argv);
    ps.positional = 1;
    while ((id = hbs_cli_parser_next(&ps, &v)) > 0) {
        if ((taken = hbs_cli_many_option(&a->m, id, v)) != 0) {
            if (taken < 0)
                return HBS_CLI_ERROR;
            continue;
        }
        switch (id) {
        case OPT_PUBLIC: a->pk_path = v; break;
        case OPT_SIG_DIR: a->sig_dir = v; break;
        case OPT_JSON: a->json = 1; break;
        case OPT_QUIET: a->quiet = 1; break;
        }
    }
    if ((id = hbs_cli_parser_end(id)) != HBS_CLI_OK)
        return id;
    if (!a->pk_path || a->m.files.count == 0)
        return hbs_cli_error("verify", "needs -p PUBLIC and a message file "
                                       "(try 'hbs help verify')");
    if (hbs_cli_many_finish(&a->m, "verify", a->sig_dir != NULL, "--sig-dir",
                            "check FILE.sig beside each (or in --sig-dir)"))
        return HBS_CLI_ERROR;
    int stdin_uses = hbs_cli_is_std(a->pk_path) + (a->m.sig_path && hbs_cli_is_std(a->m.sig_path));
    for (size_t i = 0; i < a->m.files.count; i++)
        stdin_uses += hbs_cli_is_std(a->m.files.msgs[i]);
    if (stdin_uses > 1)
        return hbs_cli_error("verify", "at most one input may be '-' (stdin)");
    return HBS_CLI_OK;
}

static int verify(const verify_args *a, const hbs_key *pk)
{
    const hbs_slhdsa_params *p = hbs_slhdsa_params_get(pk->alg);
    uint8_t ctx[HBS_SLHDSA_MAX_CONTEXT_BYTES];
    size_t ctxlen = 0, msglen, siglen;
    uint8_t *msg, *sig;
    hbs_prehash ph;

    if (hbs_cli_choose_prehash(&ph, pk, a->m.prehash))
        return HBS_CLI_ERROR;
    if (a->m.context_hex && hbs_cli_unhex("--context", a->m.context_hex, ctx, sizeof ctx, &ctxlen))
        return HBS_CLI_ERROR;
    if (hbs_cli_read_file(a->m.sig_path, &sig, &siglen))
        return HBS_CLI_ERROR;
    if (hbs_cli_read_file(a->m.msg_path, &msg, &msglen)) {
        free(sig);
        return HBS_CLI_ERROR;
    }
    int err = hbs_slhdsa_verify_ex(p, sig, siglen, msg, msglen, ctx, ctxlen, ph, pk->bytes);
    free(sig);
    free(msg);
    if (err == HBS_OK || err == HBS_ERR_VERIFY_FAILED) {
        if (!a->quiet)
            puts(err == HBS_OK ? "valid" : "invalid");
        return err == HBS_OK ? HBS_CLI_OK : HBS_CLI_INVALID;
    }
    return hbs_cli_error("verify", "%s", hbs_strerror(err));
}

/* The one-message form with -x, exactly as it has always worked. */
static int verify_one(const verify_args *a)
{
    int rc;
    hbs_key pk;
    if (hbs_cli_load_key(&pk, a->pk_path, HBS_KEY_PUBLIC, a->m.raw, a->m.alg))
        return HBS_CLI_ERROR;
    if (pk.scheme != HBS_SCHEME_SLHDSA) {
        if (a->m.context_hex || a->m.prehash)
            return hbs_cli_error("verify", "--context and --prehash apply to SLH-DSA keys only");
        rc = hbs_cli_stateful_verify(&pk, a->m.msg_path, a->m.sig_path, a->quiet);
    } else {
        rc = verify(a, &pk);
    }
    return rc;
}

static int verify_files(verify_args *a)
{
    hbs_cli_batch_args b = {
        .files = &a->m.files, .key_path = a->pk_path, .context_hex = a->m.context_hex,
        .prehash = a->m.prehash, .verbose = a->m.verbose, .quiet = a->quiet, .json = a->json,
        .terse = a->m.sig_path && !a->json,
        .batch = a->m.batch ? a->m.batch : HBS_CLI_BATCH_DEFAULT,
    };
    if (hbs_cli_files_name_sigs(&a->m.files, a->m.sig_path, a->sig_dir, "--sig-dir"))
        return HBS_CLI_ERROR;
    hbs_key pk;
    if (hbs_cli_load_key(&pk, a->pk_path, HBS_KEY_PUBLIC, a->m.raw, a->m.alg))
        return HBS_CLI_ERROR;
    int stateful = pk.scheme != HBS_SCHEME_SLHDSA, rc;
    if (stateful && (a->m.context_hex || a->m.prehash))
        rc = hbs_cli_error("verify", "--context and --prehash apply to SLH-DSA keys only");
    else
        rc = hbs_cli_gpu_resolve(&a->m.gpu, a->m.gpu_devices);
    b.gpu = a->m.gpu == HBS_CLI_GPU_ON;
    if (rc == HBS_CLI_OK)
        rc = hbs_cli_verify_many(&pk, &b);
    hbs_key_wipe(&pk);
    return rc;
}

static int run(int argc, char **argv)
{
    verify_args a;
    int rc = parse_args(&a, argc, argv);
    if (rc == HBS_CLI_OK)
        rc = a.m.sig_path && a.m.gpu == HBS_CLI_GPU_OFF && !a.m.gpu_devices && !a.json &&
                     !a.m.verbose
                 ? verify_one(&a)
                 : verify_files(&a);
    hbs_cli_many_free(&a.m);
    if (rc == HBS_CLI_DONE)
        return HBS_CLI_OK;
    /* stdout may be a closed pipe or a full disk: an unreported "valid" must not pass. */
    if (fflush(stdout) != 0)
        rc = hbs_cli_error("stdout", "write failed");
    return rc;
}

const hbs_cli_command hbs_cli_cmd_verify = {
    "verify",
    run,
    "-p PUBLIC [options] FILE...\n"
    "       hbs verify -p PUBLIC -m MESSAGE -x SIGNATURE [options]",
    "Verify signatures: exit status 0 if all are valid, 1 if any is invalid, 2 on any other "
    "error.",
    "A signature of the wrong length is invalid (status 1). A key whose OID is a HashSLH-DSA\n"
    "one verifies with its bound pre-hash; a different --prehash is an error (status 2).\n\n"
    "With -x the one message is checked against that file and 'valid' or 'invalid' printed.\n"
    "Otherwise each FILE is checked against FILE.sig (or DIR/FILE.sig with --sig-dir) and a\n"
    "line printed per file, in order: 'FILE: OK', 'FILE: INVALID (why)' or 'FILE: ERROR (why)'\n"
    "for one that cannot be read (also on stderr; the others are still checked). --json\n"
    "prints one object per line instead: {\"file\", \"signature\", \"status\": \"ok\" |\n"
    "\"invalid\" | \"error\", \"valid\", \"reason\"}. -q prints nothing. SLH-DSA signatures\n"
    "are checked in batches of --batch N on every CPU core, or on the GPU with --gpu (without\n"
    "a usable GPU an error, exit 2; --gpu=auto falls back to the CPU and says so).",
    options,
};
