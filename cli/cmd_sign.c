/* hbs sign: SLH-DSA or HashSLH-DSA signature of a file. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "stateful.h"

enum { OPT_SECRET = 1, OPT_MESSAGE, OPT_SIG, OPT_CONTEXT, OPT_PREHASH, OPT_DETERMINISTIC,
       OPT_RANDOMNESS, OPT_RAW, OPT_ALG, OPT_RESERVE };

static const hbs_cli_option options[] = {
    {OPT_SECRET, 's', "secret", "FILE", "secret key file"},
    {OPT_MESSAGE, 'm', "message", "FILE", "message to sign"},
    {OPT_SIG, 'x', "signature", "FILE", "signature file to write (raw bytes)"},
    {OPT_CONTEXT, 0, "context", "HEX", "context string, 0 to 255 bytes (default empty)"},
    {OPT_PREHASH, 0, "prehash", "HASH", "HashSLH-DSA with this pre-hash: SHA2-256, SHAKE-128, ..."},
    {OPT_DETERMINISTIC, 0, "deterministic", NULL, "deterministic signing (opt_rand = PK.seed)"},
    {OPT_RANDOMNESS, 0, "randomness", "HEX", "opt_rand to use (n bytes), for known-answer tests"},
    {OPT_RAW, 0, "raw", NULL, "the secret key file holds the bare FIPS 205 bytes (needs -a)"},
    {OPT_ALG, 'a', "algorithm", "ALG", "parameter set of a --raw key"},
    {OPT_RESERVE, 0, "reserve", "N", "stateful keys: set N indices aside per state update "
                                     "(default 1: one update per signature)"},
    {0, 0, NULL, NULL, NULL},
};

typedef struct {
    const char *sk_path, *msg_path, *sig_path, *context_hex, *prehash, *rand_hex, *alg;
    int deterministic, raw;
    unsigned long reserve;
} sign_args;

static int parse_args(sign_args *a, int argc, char **argv)
{
    hbs_cli_parser ps;
    const char *v;
    int id;
    memset(a, 0, sizeof *a);
    hbs_cli_parser_init(&ps, &hbs_cli_cmd_sign, argc, argv);
    while ((id = hbs_cli_parser_next(&ps, &v)) > 0) {
        switch (id) {
        case OPT_SECRET: a->sk_path = v; break;
        case OPT_MESSAGE: a->msg_path = v; break;
        case OPT_SIG: a->sig_path = v; break;
        case OPT_CONTEXT: a->context_hex = v; break;
        case OPT_PREHASH: a->prehash = v; break;
        case OPT_DETERMINISTIC: a->deterministic = 1; break;
        case OPT_RANDOMNESS: a->rand_hex = v; break;
        case OPT_RAW: a->raw = 1; break;
        case OPT_ALG: a->alg = v; break;
        case OPT_RESERVE:
            if (hbs_cli_parse_uint("--reserve", v, 1, 1000000, &a->reserve))
                return HBS_CLI_ERROR;
            break;
        }
    }
    if ((id = hbs_cli_parser_end(id)) != HBS_CLI_OK)
        return id;
    if (!a->sk_path || !a->msg_path || !a->sig_path)
        return hbs_cli_error("sign", "needs -s SECRET, -m MESSAGE and -x SIGNATURE "
                                     "(try 'hbs help sign')");
    if (hbs_cli_is_std(a->sk_path) && hbs_cli_is_std(a->msg_path))
        return hbs_cli_error("sign", "at most one input may be '-' (stdin)");
    if (a->deterministic && a->rand_hex)
        return hbs_cli_error("sign", "--deterministic and --randomness exclude each other");
    return HBS_CLI_OK;
}

/* opt_rand: fresh randomness (hedged, the default), the given bytes, or NULL for the
 * deterministic variant. */
static int choose_randomness(const uint8_t **addrnd, uint8_t *buf, const sign_args *a,
                             const hbs_slhdsa_params *p)
{
    size_t n = hbs_slhdsa_n(p), len;
    *addrnd = NULL;
    if (a->deterministic)
        return HBS_CLI_OK;
    if (a->rand_hex) {
        if (hbs_cli_unhex("--randomness", a->rand_hex, buf, HBS_SLHDSA_MAX_N, &len))
            return HBS_CLI_ERROR;
        if (len != n)
            return hbs_cli_error("--randomness", "%s needs %zu bytes, got %zu",
                                 hbs_slhdsa_name(p), n, len);
    } else {
        int err = hbs_randombytes(buf, n);
        if (err)
            return hbs_cli_error("sign", "%s", hbs_strerror(err));
    }
    *addrnd = buf;
    return HBS_CLI_OK;
}

static int sign_message(const sign_args *a, const hbs_key *sk, const uint8_t *msg,
                        size_t msglen)
{
    const hbs_slhdsa_params *p = hbs_slhdsa_params_get(sk->alg);
    uint8_t ctx[HBS_SLHDSA_MAX_CONTEXT_BYTES], rnd[HBS_SLHDSA_MAX_N];
    size_t ctxlen = 0, siglen = hbs_slhdsa_sig_bytes(p);
    const uint8_t *addrnd;
    hbs_prehash ph;
    uint8_t pk[HBS_SLHDSA_MAX_PK_BYTES];

    if (hbs_cli_choose_prehash(&ph, sk, a->prehash))
        return HBS_CLI_ERROR;
    if (a->context_hex && hbs_cli_unhex("--context", a->context_hex, ctx, sizeof ctx, &ctxlen))
        return HBS_CLI_ERROR;
    /* Recomputing the root catches a corrupt or tampered key file before it signs anything
     * and, like the verification below, a fault in the signing machinery. */
    if (hbs_slhdsa_sk_check(p, pk, sk->bytes) != HBS_OK)
        return hbs_cli_error(a->sk_path, "the secret key is corrupt (its public root does "
                                         "not match its seeds)");
    if (choose_randomness(&addrnd, rnd, a, p))
        return HBS_CLI_ERROR;

    uint8_t *sig = malloc(siglen);
    if (!sig)
        return hbs_cli_error("sign", "out of memory");
    int err = hbs_slhdsa_sign_ex(p, sig, msg, msglen, ctx, ctxlen, ph, sk->bytes, addrnd);
    hbs_memzero(rnd, sizeof rnd);
    int rc;
    if (err)
        rc = hbs_cli_error("sign", "%s", hbs_strerror(err));
    /* A faulty signature can leak secret key material: never release one that does not
     * verify. */
    else if (hbs_slhdsa_verify_ex(p, sig, siglen, msg, msglen, ctx, ctxlen, ph, pk) != HBS_OK)
        rc = hbs_cli_error("sign", "the new signature does not verify (hardware fault?); "
                                   "nothing written");
    else
        rc = hbs_cli_write_file(a->sig_path, sig, siglen, 0);
    free(sig);
    return rc;
}

static int run(int argc, char **argv)
{
    sign_args a;
    int rc = parse_args(&a, argc, argv);
    if (rc)
        return rc == HBS_CLI_DONE ? HBS_CLI_OK : rc;

    if (hbs_cli_is_state_file(a.sk_path)) {
        if (a.context_hex || a.prehash || a.deterministic || a.rand_hex || a.raw)
            return hbs_cli_error("sign", "--context, --prehash, --deterministic, --randomness "
                                         "and --raw apply to SLH-DSA keys only");
        return hbs_cli_stateful_sign(a.sk_path, a.msg_path, a.sig_path,
                                     a.reserve ? a.reserve : 1);
    }
    if (a.reserve)
        return hbs_cli_error("--reserve", "applies to stateful keys only");

    hbs_key sk;
    if (hbs_cli_load_key(&sk, a.sk_path, HBS_KEY_SECRET, a.raw, a.alg))
        return HBS_CLI_ERROR;
    uint8_t *msg;
    size_t msglen;
    rc = hbs_cli_read_file(a.msg_path, &msg, &msglen);
    if (!rc) {
        rc = sign_message(&a, &sk, msg, msglen);
        free(msg);
    }
    hbs_key_wipe(&sk);
    return rc;
}

const hbs_cli_command hbs_cli_cmd_sign = {
    "sign",
    run,
    "-s SECRET -m MESSAGE -x SIGNATURE [--context HEX] [--prehash HASH] "
    "[--deterministic | --randomness HEX] [--raw -a ALG] [--reserve N]",
    "Sign a message.",
    "Signing is hedged by default: fresh randomness from the operating system is mixed in.\n"
    "A key whose OID is a HashSLH-DSA one signs with its bound pre-hash. The key is checked\n"
    "(its root recomputed) before use and each signature is verified before it is written.\n\n"
    "With a stateful key file (LMS/HSS, XMSS) the file's state advances on disk (written,\n"
    "fsynced, renamed) before the signature is made; concurrent signers wait for each other.\n"
    "--reserve N advances it N at a time: fewer syncs, and a crash burns at most N - 1.",
    options,
};
