/* hbs verify: exit 0 if the signature is valid, 1 if not, 2 on any other error. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "stateful.h"

enum { OPT_PUBLIC = 1, OPT_MESSAGE, OPT_SIG, OPT_CONTEXT, OPT_PREHASH, OPT_RAW, OPT_ALG,
       OPT_QUIET };

static const hbs_cli_option options[] = {
    {OPT_PUBLIC, 'p', "public", "FILE", "public key file"},
    {OPT_MESSAGE, 'm', "message", "FILE", "signed message"},
    {OPT_SIG, 'x', "signature", "FILE", "signature file (raw bytes)"},
    {OPT_CONTEXT, 0, "context", "HEX", "context string, 0 to 255 bytes (default empty)"},
    {OPT_PREHASH, 0, "prehash", "HASH", "HashSLH-DSA with this pre-hash: SHA2-256, SHAKE-128, ..."},
    {OPT_RAW, 0, "raw", NULL, "the public key file holds the bare FIPS 205 bytes (needs -a)"},
    {OPT_ALG, 'a', "algorithm", "ALG", "parameter set of a --raw key"},
    {OPT_QUIET, 'q', "quiet", NULL, "print nothing; the exit status tells"},
    {0, 0, NULL, NULL, NULL},
};

typedef struct {
    const char *pk_path, *msg_path, *sig_path, *context_hex, *prehash, *alg;
    int raw, quiet;
} verify_args;

static int parse_args(verify_args *a, int argc, char **argv)
{
    hbs_cli_parser ps;
    const char *v;
    int id;
    memset(a, 0, sizeof *a);
    hbs_cli_parser_init(&ps, &hbs_cli_cmd_verify, argc, argv);
    while ((id = hbs_cli_parser_next(&ps, &v)) > 0) {
        switch (id) {
        case OPT_PUBLIC: a->pk_path = v; break;
        case OPT_MESSAGE: a->msg_path = v; break;
        case OPT_SIG: a->sig_path = v; break;
        case OPT_CONTEXT: a->context_hex = v; break;
        case OPT_PREHASH: a->prehash = v; break;
        case OPT_RAW: a->raw = 1; break;
        case OPT_ALG: a->alg = v; break;
        case OPT_QUIET: a->quiet = 1; break;
        }
    }
    if ((id = hbs_cli_parser_end(id)) != HBS_CLI_OK)
        return id;
    if (!a->pk_path || !a->msg_path || !a->sig_path)
        return hbs_cli_error("verify", "needs -p PUBLIC, -m MESSAGE and -x SIGNATURE "
                                       "(try 'hbs help verify')");
    int stdin_uses = hbs_cli_is_std(a->pk_path) + hbs_cli_is_std(a->msg_path) +
                     hbs_cli_is_std(a->sig_path);
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

    if (hbs_cli_choose_prehash(&ph, pk, a->prehash))
        return HBS_CLI_ERROR;
    if (a->context_hex && hbs_cli_unhex("--context", a->context_hex, ctx, sizeof ctx, &ctxlen))
        return HBS_CLI_ERROR;
    if (hbs_cli_read_file(a->sig_path, &sig, &siglen))
        return HBS_CLI_ERROR;
    if (hbs_cli_read_file(a->msg_path, &msg, &msglen)) {
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

static int run(int argc, char **argv)
{
    verify_args a;
    int rc = parse_args(&a, argc, argv);
    if (rc)
        return rc == HBS_CLI_DONE ? HBS_CLI_OK : rc;
    hbs_key pk;
    if (hbs_cli_load_key(&pk, a.pk_path, HBS_KEY_PUBLIC, a.raw, a.alg))
        return HBS_CLI_ERROR;
    if (pk.scheme != HBS_SCHEME_SLHDSA) {
        if (a.context_hex || a.prehash)
            return hbs_cli_error("verify", "--context and --prehash apply to SLH-DSA keys only");
        rc = hbs_cli_stateful_verify(&pk, a.msg_path, a.sig_path, a.quiet);
    } else {
        rc = verify(&a, &pk);
    }
    /* stdout may be a closed pipe or a full disk: an unreported "valid" must not pass. */
    if (fflush(stdout) != 0)
        rc = hbs_cli_error("stdout", "write failed");
    return rc;
}

const hbs_cli_command hbs_cli_cmd_verify = {
    "verify",
    run,
    "-p PUBLIC -m MESSAGE -x SIGNATURE [--context HEX] [--prehash HASH] [--raw -a ALG] [-q]",
    "Verify a signature: exit status 0 if valid, 1 if invalid, 2 on any other error.",
    "A signature of the wrong length is invalid (status 1). A key whose OID is a HashSLH-DSA\n"
    "one verifies with its bound pre-hash; a different --prehash is an error (status 2).",
    options,
};
