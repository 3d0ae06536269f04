/* Stateful keys on the command line: key generation with a progress bar that Ctrl-C stops
 * cleanly, signing through the state file (the state advances on disk before a signature
 * is written), verification, and the names for `hbs list`. */
#include "stateful.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hbs/gpu.h"
#include "hbs/lms.h"
#include "hbs/xmss.h"

int hbs_cli_is_stateful_alg(const char *name)
{
    return name && hbs_stateful_family_of(name) > 0;
}

int hbs_cli_is_state_file(const char *path)
{
    char head[8];
    FILE *f;
    int yes;
    if (!path || hbs_cli_is_std(path) || !(f = fopen(path, "rb")))
        return 0;
    yes = fread(head, 1, sizeof head, f) == sizeof head && memcmp(head, "HBSSTATE", 8) == 0;
    fclose(f);
    return yes;
}

static hbs_scheme scheme_of(hbs_stateful_family f)
{
    return f == HBS_STATEFUL_HSS    ? HBS_SCHEME_HSS
           : f == HBS_STATEFUL_XMSS ? HBS_SCHEME_XMSS
                                    : HBS_SCHEME_XMSSMT;
}

static hbs_stateful_family family_of_scheme(hbs_scheme s)
{
    return s == HBS_SCHEME_HSS    ? HBS_STATEFUL_HSS
           : s == HBS_SCHEME_XMSS ? HBS_STATEFUL_XMSS
                                  : HBS_STATEFUL_XMSSMT;
}

/* ---- progress and interruption ---------------------------------------------------------- */

static volatile sig_atomic_t interrupted;

static void on_interrupt(int sig)
{
    (void)sig;
    interrupted = 1;
}

typedef struct {
    int tty;     /* draw a bar (stderr is a terminal) */
    int shown;   /* last permille drawn, -1 before the first */
    double start;
} progress_state;

static int progress(void *user, uint64_t done, uint64_t total)
{
    progress_state *ps = user;
    if (interrupted)
        return 1;
    if (!ps->tty || total == 0)
        return 0;
    int permille = (int)(done * 1000 / total);
    if (permille == ps->shown)
        return 0;
    /* a tall tree takes seconds to hours: draw at most a thousand times */
    ps->shown = permille;
    char bar[41];
    int filled = permille * 40 / 1000;
    for (int i = 0; i < 40; i++)
        bar[i] = i < filled ? '#' : '.';
    bar[40] = 0;
    double el = hbs_cli_now() - ps->start;
    fprintf(stderr, "\rkeygen [%s] %5.1f%%  %.1f s", bar, permille / 10.0, el);
    if (done == total)
        fputc('\n', stderr);
    return 0;
}

/* ---- keygen ------------------------------------------------------------------------------- */

int hbs_cli_stateful_write_public(hbs_stateful_family f, const uint8_t *pk, size_t pklen,
                                  const char *path, int raw)
{
    hbs_key k;
    char pem[HBS_KEY_PEM_MAX];
    size_t pemlen = sizeof pem;
    int err, rc;
    if (raw)
        return hbs_cli_write_file(path, pk, pklen, 0);
    memset(&k, 0, sizeof k);
    k.scheme = scheme_of(f);
    k.kind = HBS_KEY_PUBLIC;
    k.len = pklen;
    memcpy(k.bytes, pk, pklen);
    err = hbs_key_encode_pem(&k, pem, &pemlen);
    if (err)
        return hbs_cli_error(path, "cannot encode the public key: %s", hbs_strerror(err));
    rc = hbs_cli_write_file(path, (const uint8_t *)pem, pemlen, 0);
    hbs_key_wipe(&k);
    return rc;
}

int hbs_cli_stateful_keygen(const char *alg, const char *sk_path, const char *pk_path,
                            const char *seed_hex, int raw, unsigned long traversal)
{
    return hbs_cli_stateful_keygen_on(alg, sk_path, pk_path, seed_hex, raw, traversal, 0);
}

int hbs_cli_stateful_keygen_on(const char *alg, const char *sk_path, const char *pk_path,
                               const char *seed_hex, int raw, unsigned long traversal, int gpu)
{
    uint8_t seed[3 * 64], pk[HBS_STATEFUL_MAX_PK_BYTES];
    size_t seedlen = 0, pklen = 0;
    progress_state ps = {isatty(STDERR_FILENO), -1, hbs_cli_now()};
    struct sigaction sa, old_int, old_term;
    int family = hbs_stateful_family_of(alg), err, rc;

    if (hbs_cli_is_std(sk_path))
        return hbs_cli_error("-s", "a stateful key must live in a file: its state advances "
                                   "with every signature");
    if (seed_hex && hbs_cli_unhex("--seed", seed_hex, seed, sizeof seed, &seedlen))
        return HBS_CLI_ERROR;
    if (access(sk_path, F_OK) == 0)
        return hbs_cli_error(sk_path, "exists; a stateful key is never overwritten (its "
                                      "used indices would be forgotten)");
    if (gpu && hbs_gpu_device_count() <= 0) {
        hbs_memzero(seed, sizeof seed);
        return hbs_cli_error("--gpu", "no usable CUDA GPU (this build has no CUDA or this "
                                      "machine has no GPU); drop --gpu to use the CPU");
    }

    /* Ctrl-C during a long key generation stops it cleanly: no key file is written. */
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_interrupt;
    sigemptyset(&sa.sa_mask);
    interrupted = 0;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    if (gpu)
        err = hbs_gpu_stateful_keygen(alg, sk_path, (unsigned)traversal, pk, sizeof pk, &pklen,
                                      seed_hex ? seed : NULL, seedlen, progress, &ps);
    else
        err = hbs_stateful_keygen_ex(alg, sk_path, (unsigned)traversal, pk, sizeof pk, &pklen,
                                     seed_hex ? seed : NULL, seedlen, progress, &ps);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    hbs_memzero(seed, sizeof seed);
    if (ps.tty && ps.shown >= 0 && ps.shown < 1000)
        fputc('\n', stderr);
    if (err == HBS_ERR_CANCELLED)
        return hbs_cli_error("keygen", "interrupted; no key written");
    if (err == HBS_ERR_INVALID_ARGUMENT && traversal)
        return hbs_cli_error("--traversal", "%lu is not a valid setting for %s (LMS: 4..20; "
                             "XMSS: 2..tree height, with height - K even)", traversal, alg);
    if (err == HBS_ERR_INVALID_ARGUMENT && seed_hex)
        return hbs_cli_error("--seed", "wrong length for %s (%zu bytes)", alg, seedlen);
    if (err == HBS_ERR_GPU)
        return hbs_cli_error(sk_path, "key generation failed on the GPU: %s",
                             hbs_gpu_last_error());
    if (err)
        return hbs_cli_error(sk_path, "key generation failed: %s%s%s", hbs_strerror(err),
                             err == HBS_ERR_IO ? ": " : "", err == HBS_ERR_IO ? strerror(errno) : "");
    rc = hbs_cli_stateful_write_public((hbs_stateful_family)family, pk, pklen, pk_path, raw);
    if (rc) {
        /* without its public key the new state file is of no use; nothing signed with it */
        char lock[4200];
        unlink(sk_path);
        snprintf(lock, sizeof lock, "%s.lock", sk_path);
        unlink(lock);
    }
    return rc;
}

/* ---- sign ---------------------------------------------------------------------------------- */

static int open_error(const char *path, int err)
{
    switch (err) {
    case HBS_ERR_BUSY:
        return hbs_cli_error(path, "in use by another signer");
    case HBS_ERR_STATE:
        return hbs_cli_error(path, "the key state is corrupt; the file is left as it is");
    case HBS_ERR_IO:
        return hbs_cli_error(path, "%s", strerror(errno));
    default:
        return hbs_cli_error(path, "%s", hbs_strerror(err));
    }
}

int hbs_cli_stateful_sign(const char *sk_path, const char *msg_path, const char *sig_path,
                          unsigned long reserve)
{
    hbs_stateful_key *k;
    uint8_t pk[HBS_STATEFUL_MAX_PK_BYTES], *msg = NULL, *sig = NULL;
    size_t pklen, msglen, siglen;
    int err, rc;

    if (hbs_cli_read_file(msg_path, &msg, &msglen))
        return HBS_CLI_ERROR;
    err = hbs_stateful_open(&k, sk_path, HBS_STATEFUL_WAIT, (uint32_t)reserve);
    if (err) {
        free(msg);
        return open_error(sk_path, err);
    }
    err = hbs_stateful_key_public(k, pk, sizeof pk, &pklen);
    if (!err && !(sig = malloc(hbs_stateful_sig_bytes(k))))
        err = HBS_ERR_NO_MEMORY;
    if (!err)
        err = hbs_stateful_sign(k, sig, hbs_stateful_sig_bytes(k), &siglen, msg, msglen);
    if (err == HBS_ERR_KEY_EXHAUSTED)
        rc = hbs_cli_error(sk_path, "the key is exhausted: all %llu signatures are used",
                           (unsigned long long)hbs_stateful_key_total(k));
    else if (err == HBS_ERR_IO)
        rc = hbs_cli_error(sk_path, "cannot advance the key state (%s); no signature made",
                           strerror(errno));
    else if (err)
        rc = hbs_cli_error("sign", "%s", hbs_strerror(err));
    /* A faulty signature can leak secret key material: never release one that does not
     * verify. Its index is used up either way. */
    else if (hbs_stateful_verify(hbs_stateful_key_family(k), pk, pklen, msg, msglen, sig,
                                 siglen) != HBS_OK)
        rc = hbs_cli_error("sign", "the new signature does not verify (hardware fault?); "
                                   "nothing written");
    else
        rc = hbs_cli_write_file(sig_path, sig, siglen, 0);
    hbs_stateful_close(k);
    free(sig);
    free(msg);
    return rc;
}

/* ---- verify ------------------------------------------------------------------------------ */

int hbs_cli_stateful_verify(const hbs_key *pk, const char *msg_path, const char *sig_path,
                            int quiet)
{
    uint8_t *msg, *sig;
    size_t msglen, siglen;
    int err;
    if (hbs_cli_read_file(sig_path, &sig, &siglen))
        return HBS_CLI_ERROR;
    if (hbs_cli_read_file(msg_path, &msg, &msglen)) {
        free(sig);
        return HBS_CLI_ERROR;
    }
    err = hbs_stateful_verify(family_of_scheme(pk->scheme), pk->bytes, pk->len, msg, msglen,
                              sig, siglen);
    free(sig);
    free(msg);
    if (err != HBS_OK && err != HBS_ERR_VERIFY_FAILED)
        return hbs_cli_error("verify", "%s", hbs_strerror(err));
    if (!quiet)
        puts(err == HBS_OK ? "valid" : "invalid");
    return err == HBS_OK ? HBS_CLI_OK : HBS_CLI_INVALID;
}

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

int hbs_cli_stateful_raw_pk(hbs_key *k, const char *path, const uint8_t *buf, size_t len,
                            const char *alg)
{
    int family = hbs_stateful_family_of(alg);
    char pem[HBS_KEY_PEM_MAX];
    size_t pemlen = sizeof pem;
    if (family < 0)
        return hbs_cli_error("-a", "unknown algorithm '%s' (see 'hbs list')", alg);
    memset(k, 0, sizeof *k);
    k->scheme = scheme_of((hbs_stateful_family)family);
    k->kind = HBS_KEY_PUBLIC;
    if (len > sizeof k->bytes)
        return hbs_cli_error(path, "not a raw %s public key (%zu bytes)", alg, len);
    k->len = len;
    memcpy(k->bytes, buf, len);
    /* the encoder checks typecodes / OID and length */
    if (hbs_key_encode_pem(k, pem, &pemlen) != HBS_OK)
        return hbs_cli_error(path, "not a raw %s public key", alg);
    /* and the key must be of the named set (HSS: its top level) */
    uint32_t w1 = be32(buf);
    if (family == HBS_STATEFUL_HSS) {
        hbs_hss_params hp;
        if (hbs_hss_params_parse(&hp, alg) != HBS_OK || w1 != hp.levels ||
            be32(buf + 4) != hbs_lms_type_code(hp.lms[0]) ||
            be32(buf + 8) != hbs_lmots_type_code(hp.ots[0]))
            return hbs_cli_error(path, "is not a %s public key", alg);
    } else if (w1 != hbs_xmss_oid(hbs_xmss_params_by_name(alg))) {
        return hbs_cli_error(path, "is not a %s public key", alg);
    }
    return HBS_CLI_OK;
}

void hbs_cli_stateful_list(FILE *f)
{
    const char *name;
    const hbs_xmss_params *p;
    for (size_t i = 0; (name = hbs_lms_name_at(i)) != NULL; i++)
        fprintf(f, "%s\n", name);
    for (size_t i = 0; (p = hbs_xmss_params_at(i)) != NULL; i++)
        fprintf(f, "%s\n", hbs_xmss_name(p));
}
