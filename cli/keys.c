/* Loading key files (PEM/DER or raw FIPS 205 bytes) and choosing the pre-hash. */
#include <string.h>

#include "cli.h"
#include "stateful.h"

int hbs_cli_params(const char *name, const hbs_slhdsa_params **out)
{
    *out = hbs_slhdsa_params_by_name(name);
    if (!*out)
        return hbs_cli_error("-a", "unknown algorithm '%s' (see 'hbs list')", name);
    return HBS_CLI_OK;
}

static const char *kind_name(hbs_key_kind kind)
{
    return kind == HBS_KEY_SECRET ? "secret key" : "public key";
}

static int load_raw(hbs_key *k, const char *path, const uint8_t *buf, size_t len,
                    hbs_key_kind kind, const char *alg_name)
{
    const hbs_slhdsa_params *p;
    if (!alg_name)
        return hbs_cli_error("--raw", "needs -a ALG to name the algorithm");
    if (hbs_cli_is_stateful_alg(alg_name)) {
        if (kind != HBS_KEY_PUBLIC)
            return hbs_cli_error("--raw", "a stateful secret key is a state file, not raw bytes");
        return hbs_cli_stateful_raw_pk(k, path, buf, len, alg_name);
    }
    if (hbs_cli_params(alg_name, &p))
        return HBS_CLI_ERROR;
    size_t want = kind == HBS_KEY_SECRET ? hbs_slhdsa_sk_bytes(p) : hbs_slhdsa_pk_bytes(p);
    if (len != want)
        return hbs_cli_error(path, "not a raw %s %s: %zu bytes, expected %zu", alg_name,
                             kind_name(kind), len, want);
    k->scheme = HBS_SCHEME_SLHDSA;
    k->kind = kind;
    k->alg = hbs_slhdsa_params_id(p);
    k->prehash = HBS_PREHASH_NONE;
    k->len = len;
    memcpy(k->bytes, buf, len);
    return HBS_CLI_OK;
}

static int load_encoded(hbs_key *k, const char *path, const uint8_t *buf, size_t len,
                        hbs_key_kind kind, const char *alg_name)
{
    int err = hbs_key_decode(k, buf, len);
    if (err)
        return hbs_cli_error(path, "cannot read the key: %s", hbs_strerror(err));
    if (err == HBS_OK && k->scheme != HBS_SCHEME_SLHDSA) {
        if (k->kind != kind)
            return hbs_cli_error(path, "is a public key, expected a secret key (a stateful "
                                       "secret key is its state file)");
        return HBS_CLI_OK; /* the key bytes name their parameter set */
    }
    if (k->kind != kind)
        return hbs_cli_error(path, "is a %s, expected a %s", kind_name(k->kind),
                             kind_name(kind));
    const hbs_slhdsa_params *p = hbs_slhdsa_params_get(k->alg);
    if (!p)
        return hbs_cli_error(path, "unknown algorithm in the key");
    if (alg_name && strcmp(alg_name, hbs_slhdsa_name(p)) != 0)
        return hbs_cli_error(path, "is a %s key, not %s", hbs_slhdsa_name(p), alg_name);
    return HBS_CLI_OK;
}

int hbs_cli_load_key(hbs_key *k, const char *path, hbs_key_kind kind, int raw,
                     const char *alg_name)
{
    uint8_t *buf;
    size_t len;
    memset(k, 0, sizeof *k);
    if (hbs_cli_read_file(path, &buf, &len))
        return HBS_CLI_ERROR;
    const char *name = hbs_cli_is_std(path) ? "stdin" : path;
    int rc = raw ? load_raw(k, name, buf, len, kind, alg_name)
                 : load_encoded(k, name, buf, len, kind, alg_name);
    hbs_cli_free(buf, len);
    if (rc)
        hbs_key_wipe(k);
    return rc;
}

int hbs_cli_choose_prehash(hbs_prehash *out, const hbs_key *k, const char *option)
{
    *out = k->prehash;
    if (!option)
        return HBS_CLI_OK;
    hbs_prehash ph;
    if (hbs_prehash_by_name(&ph, option) != HBS_OK)
        return hbs_cli_error("--prehash", "unknown hash '%s' (FIPS 205 names: SHA2-256, "
                             "SHA2-512/256, SHA3-256, SHAKE-128, ...)", option);
    /* A HashSLH-DSA OID binds its key to one pre-hash (RFC 9909): another is misuse. */
    if (k->prehash != HBS_PREHASH_NONE && k->prehash != ph)
        return hbs_cli_error("--prehash", "%s conflicts with the key, which is bound to %s",
                             option, hbs_prehash_name(k->prehash));
    *out = ph;
    return HBS_CLI_OK;
}
