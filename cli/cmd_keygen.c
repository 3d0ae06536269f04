/* hbs keygen: a new key pair, written as PEM key files or raw FIPS 205 bytes. */
#include <string.h>

#include "batch.h"
#include "cli.h"
#include "hbs/gpu.h"
#include "stateful.h"

enum { OPT_ALG = 1, OPT_SECRET, OPT_PUBLIC, OPT_SEED, OPT_RAW, OPT_PREHASH, OPT_TRAVERSAL,
       OPT_GPU, OPT_GPU_DEVICES };

static const hbs_cli_option options[] = {
    {OPT_ALG, 'a', "algorithm", "ALG", "parameter set, e.g. SLH-DSA-SHA2-128s (see 'hbs list')"},
    {OPT_SECRET, 's', "secret", "FILE", "secret key file to write (mode 0600)"},
    {OPT_PUBLIC, 'p', "public", "FILE", "public key file to write"},
    {OPT_SEED, 0, "seed", "HEX", "SK.seed || SK.prf || PK.seed (3n bytes): deterministic keys"},
    {OPT_RAW, 0, "raw", NULL, "write the bare FIPS 205 key bytes instead of PEM"},
    {OPT_PREHASH, 0, "prehash", "HASH", "write the HashSLH-DSA OID, which binds this pre-hash"},
    {OPT_TRAVERSAL, 0, "traversal", "N", "stateful keys: traversal memory (LMS cache height "
                                        "4-20, default 8; XMSS BDS K, default 6)"},
    {OPT_GPU, 0, "gpu", NULL, "stateful keys: compute the trees' leaves on the GPU (same "
                              "key; an error without a GPU)"},
    {OPT_GPU_DEVICES, 0, "gpu-devices", "LIST", "with --gpu: the GPUs to share a big key's "
                                                "leaves, such as 0,2 (default all)"},
    {0, 0, NULL, NULL, NULL},
};

typedef struct {
    const char *alg, *sk_path, *pk_path, *seed_hex, *prehash, *gpu_devices;
    int raw, gpu;
    unsigned long traversal;
} keygen_args;

static int parse_args(keygen_args *a, int argc, char **argv)
{
    hbs_cli_parser ps;
    const char *v;
    int id;
    memset(a, 0, sizeof *a);
    hbs_cli_parser_init(&ps, &hbs_cli_cmd_keygen, argc, argv);
    while ((id = hbs_cli_parser_next(&ps, &v)) > 0) {
        switch (id) {
        case OPT_ALG: a->alg = v; break;
        case OPT_SECRET: a->sk_path = v; break;
        case OPT_PUBLIC: a->pk_path = v; break;
        case OPT_SEED: a->seed_hex = v; break;
        case OPT_RAW: a->raw = 1; break;
        case OPT_GPU: a->gpu = 1; break;
        case OPT_GPU_DEVICES: a->gpu_devices = v; break;
        case OPT_PREHASH: a->prehash = v; break;
        case OPT_TRAVERSAL:
            if (hbs_cli_parse_uint("--traversal", v, 1, 64, &a->traversal))
                return HBS_CLI_ERROR;
            break;
        }
    }
    if ((id = hbs_cli_parser_end(id)) != HBS_CLI_OK)
        return id;
    if (!a->alg || !a->sk_path || !a->pk_path)
        return hbs_cli_error("keygen", "needs -a ALG, -s SECRET and -p PUBLIC "
                                       "(try 'hbs help keygen')");
    if (hbs_cli_is_std(a->sk_path) && hbs_cli_is_std(a->pk_path))
        return hbs_cli_error("keygen", "at most one of -s and -p may be '-' (stdout)");
    if (a->raw && a->prehash)
        return hbs_cli_error("--prehash", "a raw key cannot record a pre-hash; use PEM");
    return HBS_CLI_OK;
}

/* The pre-hash a HashSLH-DSA OID will carry; only the one RFC 9909 assigns to the set. */
static int keygen_prehash(hbs_prehash *out, const hbs_slhdsa_params *p, const char *name)
{
    *out = HBS_PREHASH_NONE;
    if (!name)
        return HBS_CLI_OK;
    hbs_prehash ph;
    if (hbs_prehash_by_name(&ph, name) != HBS_OK)
        return hbs_cli_error("--prehash", "unknown hash '%s'", name);
    hbs_prehash bound = hbs_slhdsa_oid_prehash(hbs_slhdsa_params_id(p));
    if (ph != bound)
        return hbs_cli_error("--prehash", "%s keys can only bind %s (RFC 9909), not %s",
                             hbs_slhdsa_name(p), hbs_prehash_name(bound), name);
    *out = ph;
    return HBS_CLI_OK;
}

static int make_keys(hbs_key *sk, hbs_key *pk, const hbs_slhdsa_params *p, const char *seed_hex)
{
    uint8_t seed[3 * HBS_SLHDSA_MAX_N];
    size_t seedlen = 0;
    int err;
    if (seed_hex) {
        if (hbs_cli_unhex("--seed", seed_hex, seed, sizeof seed, &seedlen))
            return HBS_CLI_ERROR;
        if (seedlen != hbs_slhdsa_seed_bytes(p)) {
            hbs_memzero(seed, sizeof seed);
            return hbs_cli_error("--seed", "%s needs %zu bytes (SK.seed || SK.prf || PK.seed), "
                                 "got %zu", hbs_slhdsa_name(p), hbs_slhdsa_seed_bytes(p), seedlen);
        }
        err = hbs_slhdsa_keygen_from_seed(p, sk->bytes, pk->bytes, seed);
        hbs_memzero(seed, sizeof seed);
    } else {
        err = hbs_slhdsa_keygen(p, sk->bytes, pk->bytes);
    }
    if (err)
        return hbs_cli_error("keygen", "%s", hbs_strerror(err));
    sk->len = hbs_slhdsa_sk_bytes(p);
    pk->len = hbs_slhdsa_pk_bytes(p);
    return HBS_CLI_OK;
}

/* Encodes a key as PEM, or copies its raw bytes, into out (HBS_KEY_PEM_MAX bytes). */
static int encode_key(uint8_t *out, size_t *outlen, const hbs_key *k, int raw)
{
    if (raw) {
        memcpy(out, k->bytes, k->len);
        *outlen = k->len;
        return HBS_CLI_OK;
    }
    size_t len = HBS_KEY_PEM_MAX;
    int err = hbs_key_encode_pem(k, (char *)out, &len);
    if (err)
        return hbs_cli_error("keygen", "cannot encode the key: %s", hbs_strerror(err));
    *outlen = len;
    return HBS_CLI_OK;
}

/* Writes both files, or neither: each goes to a temporary file first and both are renamed
 * only once both are complete; if the second rename fails the first file is removed. */
static int write_pair(const keygen_args *a, const uint8_t *sk_enc, size_t sk_len,
                      const uint8_t *pk_enc, size_t pk_len)
{
    hbs_cli_output sk_out, pk_out;
    if (hbs_cli_output_begin(&sk_out, a->sk_path, sk_enc, sk_len, 1))
        return HBS_CLI_ERROR;
    if (hbs_cli_output_begin(&pk_out, a->pk_path, pk_enc, pk_len, 0)) {
        hbs_cli_output_abort(&sk_out);
        return HBS_CLI_ERROR;
    }
    /* The public key first: if stdout takes the secret key, nothing is left to undo. */
    if (hbs_cli_output_commit(&pk_out)) {
        hbs_cli_output_abort(&sk_out);
        return HBS_CLI_ERROR;
    }
    if (hbs_cli_output_commit(&sk_out)) {
        if (!hbs_cli_is_std(a->pk_path))
            (void)remove(a->pk_path);
        return HBS_CLI_ERROR;
    }
    return HBS_CLI_OK;
}

static int run(int argc, char **argv)
{
    keygen_args a;
    int rc = parse_args(&a, argc, argv);
    if (rc)
        return rc == HBS_CLI_DONE ? HBS_CLI_OK : rc;

    if (a.gpu_devices && !a.gpu)
        return hbs_cli_error("--gpu-devices", "applies with --gpu only");
    if (hbs_cli_is_stateful_alg(a.alg)) {
        if (a.prehash)
            return hbs_cli_error("--prehash", "applies to SLH-DSA keys only");
        if (a.gpu_devices && hbs_gpu_device_count() > 0 && hbs_cli_gpu_devices(a.gpu_devices))
            return HBS_CLI_ERROR;
        return hbs_cli_stateful_keygen_on(a.alg, a.sk_path, a.pk_path, a.seed_hex, a.raw,
                                          a.traversal, a.gpu);
    }
    if (a.gpu)
        return hbs_cli_error("--gpu", "keygen on the GPU is for stateful (LMS, XMSS) keys; "
                                      "SLH-DSA keys take microseconds on the CPU");
    if (a.traversal)
        return hbs_cli_error("--traversal", "applies to stateful (LMS, XMSS) keys only");

    const hbs_slhdsa_params *p;
    hbs_prehash ph;
    if (hbs_cli_params(a.alg, &p) || keygen_prehash(&ph, p, a.prehash))
        return HBS_CLI_ERROR;

    hbs_key sk, pk;
    uint8_t sk_enc[HBS_KEY_PEM_MAX], pk_enc[HBS_KEY_PEM_MAX];
    size_t sk_len = 0, pk_len = 0;
    memset(&sk, 0, sizeof sk);
    memset(&pk, 0, sizeof pk);
    sk.scheme = pk.scheme = HBS_SCHEME_SLHDSA;
    sk.kind = HBS_KEY_SECRET;
    pk.kind = HBS_KEY_PUBLIC;
    sk.alg = pk.alg = hbs_slhdsa_params_id(p);
    sk.prehash = pk.prehash = ph;

    rc = make_keys(&sk, &pk, p, a.seed_hex);
    if (!rc)
        rc = encode_key(sk_enc, &sk_len, &sk, a.raw);
    if (!rc)
        rc = encode_key(pk_enc, &pk_len, &pk, a.raw);
    if (!rc)
        rc = write_pair(&a, sk_enc, sk_len, pk_enc, pk_len);
    hbs_key_wipe(&sk);
    hbs_memzero(sk_enc, sizeof sk_enc);
    return rc;
}

const hbs_cli_command hbs_cli_cmd_keygen = {
    "keygen",
    run,
    "-a ALG -s SECRET -p PUBLIC [--seed HEX] [--raw] [--prehash HASH] [--traversal N] [--gpu]",
    "Generate a key pair.",
    "Keys are written as PEM (RFC 9909: PKCS#8 secret key, SubjectPublicKeyInfo public key)\n"
    "unless --raw is given. Without --seed the keys come from the operating system's random\n"
    "source. A --seed on the command line is visible to other users of this machine: use it\n"
    "for tests and known-answer checks only.\n\n"
    "Stateful algorithms (LMS/HSS such as LMS_SHA256_M32_H10/LMOTS_SHA256_N32_W8, levels\n"
    "joined by ',' for HSS; XMSS-SHA2_10_256, XMSSMT-SHA2_20/2_256, ...) write the secret key\n"
    "as a state file (mode 0600, never overwritten; never copy it: a copy reuses one-time\n"
    "keys) and the public key as an RFC 9802 SubjectPublicKeyInfo. Tall trees show a progress\n"
    "bar on a terminal; Ctrl-C stops cleanly and writes nothing. --seed is I || SEED (LMS)\n"
    "or SK_SEED || SK_PRF || PUB_SEED (XMSS). --gpu computes the leaves of stateful keys on\n"
    "the GPU (the same key, byte for byte); without a usable GPU it is an error (exit 2).",
    options,
};
