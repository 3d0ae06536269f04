/* hbs sign: SLH-DSA or HashSLH-DSA signature of a file, or of many (batch.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "batch.h"
#include "cli.h"
#include "stateful.h"

enum { OPT_SECRET = 1, OPT_DETERMINISTIC, OPT_RANDOMNESS, OPT_RESERVE, OPT_OUT_DIR,
       OPT_FORCE };

static const hbs_cli_option options[] = {
    {OPT_SECRET, 's', "secret", "FILE", "secret key file"},
    {HBS_CLI_OPT_MESSAGE, 'm', "message", "FILE", "message to sign (may be repeated; or name the "
                                          "files after the options)"},
    {HBS_CLI_OPT_SIG, 'x', "signature", "FILE", "signature file to write (raw bytes), for one message; "
                                        "replaced if it exists"},
    {OPT_OUT_DIR, 'o', "out-dir", "DIR", "write the FILE.sig files into DIR instead of beside "
                                         "each FILE"},
    {OPT_FORCE, 0, "force", NULL, "replace existing FILE.sig files (without -x)"},
    {HBS_CLI_OPT_GPU, 0, "gpu", "[=auto]", "sign on the GPU (in batches); without a GPU an error, or "
                                   "the CPU with =auto"},
    {HBS_CLI_OPT_GPU_DEVICES, 0, "gpu-devices", "LIST", "with --gpu: the GPUs to spread the work over, "
                                                  "such as 0,2 (default all)"},
    {HBS_CLI_OPT_BATCH, 0, "batch", "N", "messages read and signed at once (default 4096)"},
    {HBS_CLI_OPT_VERBOSE, 'v', "verbose", NULL, "say on stderr which engine signed, and how fast"},
    {HBS_CLI_OPT_CONTEXT, 0, "context", "HEX", "context string, 0 to 255 bytes (default empty)"},
    {HBS_CLI_OPT_PREHASH, 0, "prehash", "HASH", "HashSLH-DSA with this pre-hash: SHA2-256, SHAKE-128, ..."},
    {OPT_DETERMINISTIC, 0, "deterministic", NULL, "deterministic signing (opt_rand = PK.seed)"},
    {OPT_RANDOMNESS, 0, "randomness", "HEX", "opt_rand to use (n bytes), for known-answer tests"},
    {HBS_CLI_OPT_RAW, 0, "raw", NULL, "the secret key file holds the bare FIPS 205 bytes (needs -a)"},
    {HBS_CLI_OPT_ALG, 'a', "algorithm", "ALG", "parameter set of a --raw key"},
    {OPT_RESERVE, 0, "reserve", "N", "stateful keys: set N indices aside per state update "
                                     "(default 1 with -x, else all the run needs)"},
    {0, 0, NULL, NULL, NULL},
};

typedef struct {
    hbs_cli_many_opts m;
    const char *sk_path, *rand_hex, *out_dir;
    int deterministic, force;
    unsigned long reserve;
} sign_args;

static int parse_args(sign_args *a, int argc, char **argv)
{
    hbs_cli_parser ps;
    const char *v;
    int id, taken;
    memset(a, 0, sizeof *a);
    if (hbs_cli_many_init(&a->m, argc))
        return HBS_CLI_ERROR;
    hbs_cli_parser_init(&ps, &hbs_cli_cmd_sign, argc, argv);
    ps.positional = 1;
    while ((id = hbs_cli_parser_next(&ps, &v)) > 0) {
        if ((taken = hbs_cli_many_option(&a->m, id, v)) != 0) {
            if (taken < 0)
                return HBS_CLI_ERROR;
            continue;
        }
        switch (id) {
        case OPT_SECRET: a->sk_path = v; break;
        case OPT_OUT_DIR: a->out_dir = v; break;
        case OPT_FORCE: a->force = 1; break;
        case OPT_DETERMINISTIC: a->deterministic = 1; break;
        case OPT_RANDOMNESS: a->rand_hex = v; break;
        case OPT_RESERVE:
            if (hbs_cli_parse_uint("--reserve", v, 1, 1000000, &a->reserve))
                return HBS_CLI_ERROR;
            break;
        }
    }
    if ((id = hbs_cli_parser_end(id)) != HBS_CLI_OK)
        return id;
    if (!a->sk_path || a->m.files.count == 0)
        return hbs_cli_error("sign", "needs -s SECRET and a message file (try 'hbs help sign')");
    if (hbs_cli_many_finish(&a->m, "sign", a->out_dir != NULL, "-o",
                            "write FILE.sig beside each (or into -o DIR)"))
        return HBS_CLI_ERROR;
    if (hbs_cli_is_std(a->sk_path))
        for (size_t i = 0; i < a->m.files.count; i++)
            if (hbs_cli_is_std(a->m.files.msgs[i]))
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

    if (hbs_cli_choose_prehash(&ph, sk, a->m.prehash))
        return HBS_CLI_ERROR;
    if (a->m.context_hex && hbs_cli_unhex("--context", a->m.context_hex, ctx, sizeof ctx, &ctxlen))
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
        rc = hbs_cli_write_file(a->m.sig_path, sig, siglen, 0);
    free(sig);
    return rc;
}

/* Before a many-file run signs anything (or a stateful key spends an index): every message
 * readable, and no signature file in the way unless it may be replaced. */
static int check_files(const sign_args *a, int replace)
{
    const hbs_cli_files *f = &a->m.files;
    struct stat st;
    if (a->out_dir && (stat(a->out_dir, &st) != 0 || !S_ISDIR(st.st_mode)))
        return hbs_cli_error(a->out_dir, "not a folder (-o); nothing signed");
    for (size_t i = 0; i < f->count; i++) {
        if (!hbs_cli_is_std(f->msgs[i]) && access(f->msgs[i], R_OK) != 0)
            return hbs_cli_error(f->msgs[i], "cannot read it: %s; nothing signed",
                                 strerror(errno));
        if (!replace && lstat(f->sigs[i], &st) == 0)
            return hbs_cli_error(f->sigs[i], "exists (--force replaces it); nothing signed");
    }
    return HBS_CLI_OK;
}

static int sign_files(sign_args *a)
{
    /* -x names its file, which is replaced as it always was; names made up here are not
     * replaced without --force. */
    int replace = a->m.sig_path || a->force;
    hbs_cli_batch_args b = {
        .files = &a->m.files, .key_path = a->sk_path, .context_hex = a->m.context_hex,
        .prehash = a->m.prehash, .rand_hex = a->rand_hex, .deterministic = a->deterministic,
        .replace = replace, .verbose = a->m.verbose,
        .batch = a->m.batch ? a->m.batch : HBS_CLI_BATCH_DEFAULT,
    };
    int stateful = hbs_cli_is_state_file(a->sk_path);
    if (stateful && (a->m.context_hex || a->m.prehash || a->deterministic || a->rand_hex || a->m.raw))
        return hbs_cli_error("sign", "--context, --prehash, --deterministic, --randomness "
                                     "and --raw apply to SLH-DSA keys only");
    if (!stateful && a->reserve)
        return hbs_cli_error("--reserve", "applies to stateful keys only");
    if (hbs_cli_gpu_resolve(&a->m.gpu, a->m.gpu_devices))
        return HBS_CLI_ERROR;
    b.gpu = a->m.gpu == HBS_CLI_GPU_ON;
    if (hbs_cli_files_name_sigs(&a->m.files, a->m.sig_path, a->out_dir, "-o") ||
        check_files(a, replace))
        return HBS_CLI_ERROR;
    if (stateful)
        return hbs_cli_stateful_sign_many(a->sk_path, &b, a->reserve);

    hbs_key sk;
    if (hbs_cli_load_key(&sk, a->sk_path, HBS_KEY_SECRET, a->m.raw, a->m.alg))
        return HBS_CLI_ERROR;
    int rc = hbs_cli_slhdsa_sign_many(&sk, &b);
    hbs_key_wipe(&sk);
    return rc;
}

/* The one-message form with -x, exactly as it has always worked. */
static int sign_one(const sign_args *a)
{
    int rc;
    if (hbs_cli_is_state_file(a->sk_path)) {
        if (a->m.context_hex || a->m.prehash || a->deterministic || a->rand_hex || a->m.raw)
            return hbs_cli_error("sign", "--context, --prehash, --deterministic, --randomness "
                                         "and --raw apply to SLH-DSA keys only");
        return hbs_cli_stateful_sign(a->sk_path, a->m.msg_path, a->m.sig_path,
                                     a->reserve ? a->reserve : 1);
    }
    if (a->reserve)
        return hbs_cli_error("--reserve", "applies to stateful keys only");

    hbs_key sk;
    if (hbs_cli_load_key(&sk, a->sk_path, HBS_KEY_SECRET, a->m.raw, a->m.alg))
        return HBS_CLI_ERROR;
    uint8_t *msg;
    size_t msglen;
    rc = hbs_cli_read_file(a->m.msg_path, &msg, &msglen);
    if (!rc) {
        rc = sign_message(a, &sk, msg, msglen);
        free(msg);
    }
    hbs_key_wipe(&sk);
    return rc;
}

static int run(int argc, char **argv)
{
    sign_args a;
    int rc = parse_args(&a, argc, argv);
    if (rc == HBS_CLI_OK)
        rc = a.m.sig_path && a.m.gpu == HBS_CLI_GPU_OFF && !a.m.gpu_devices && !a.m.verbose
                 ? sign_one(&a)
                 : sign_files(&a);
    hbs_cli_many_free(&a.m);
    return rc == HBS_CLI_DONE ? HBS_CLI_OK : rc;
}

const hbs_cli_command hbs_cli_cmd_sign = {
    "sign",
    run,
    "-s SECRET [options] FILE...\n"
    "       hbs sign -s SECRET -m MESSAGE -x SIGNATURE [options]",
    "Sign a message, or many.",
    "Signing is hedged by default: fresh randomness from the operating system is mixed in.\n"
    "A key whose OID is a HashSLH-DSA one signs with its bound pre-hash. The key is checked\n"
    "(its root recomputed) before use and each signature is verified before it is written.\n\n"
    "Many messages (FILE... or several -m): each signature goes to FILE.sig beside FILE, or\n"
    "into -o DIR; an existing one is an error unless --force (-x, for one message, replaces\n"
    "its file as it always has). Every file is checked readable, and every FILE.sig absent,\n"
    "before anything is signed. SLH-DSA messages are signed in batches of --batch N (read\n"
    "N at a time) on every CPU core, or on the GPU with --gpu: without a usable GPU that is an\n"
    "error (exit 2), while --gpu=auto falls back to the CPU and says so. GPU signatures are\n"
    "byte-identical to the CPU's and are verified on the CPU before they are written.\n\n"
    "With a stateful key file (LMS/HSS, XMSS) the file's state advances on disk (written,\n"
    "fsynced, renamed) before the signature is made; concurrent signers wait for each other.\n"
    "--reserve N advances it N at a time: fewer syncs, and a crash burns at most N - 1.\n"
    "Many messages take consecutive indices, all set aside in one update unless --reserve;\n"
    "a key with fewer indices left than messages signs nothing. With --gpu they are signed\n"
    "in batches of --batch N on the GPU(s), each batch's indices given up by the key file\n"
    "before it is signed (a failed batch burns its indices, never reuses one); the\n"
    "signatures are the CPU's byte for byte and are verified on the CPU before writing.",
    options,
};
