/* hbs key: look at and manage stateful key files (LMS/HSS, XMSS/XMSS^MT).
 *   hbs key info -s STATE            algorithm, next index, signatures left
 *   hbs key public -s STATE -p FILE   the public key of a state file
 *   hbs key split -s STATE -o NEW -n COUNT
 *                                     move the last COUNT signatures to a new key file */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "stateful.h"

enum { OPT_SECRET = 1, OPT_OUT, OPT_COUNT, OPT_PUBLIC, OPT_RAW, OPT_JSON };

static const hbs_cli_option options[] = {
    {OPT_SECRET, 's', "secret", "STATE", "stateful key (state) file"},
    {OPT_OUT, 'o', "out", "FILE", "split: the new key file (must not exist)"},
    {OPT_COUNT, 'n', "count", "N", "split: how many signatures the new key takes"},
    {OPT_PUBLIC, 'p', "public", "FILE", "public: where to write the public key"},
    {OPT_RAW, 0, "raw", NULL, "public: write the bare public key bytes instead of PEM"},
    {OPT_JSON, 0, "json", NULL, "info: print one JSON object"},
    {0, 0, NULL, NULL, NULL},
};

typedef struct {
    const char *sub, *sk_path, *out, *pk_path;
    unsigned long count;
    int raw, json;
} key_args;

static int parse_args(key_args *a, int argc, char **argv)
{
    hbs_cli_parser ps;
    const char *v;
    int id;
    memset(a, 0, sizeof *a);
    if (argc < 2 || argv[1][0] == '-') {
        if (argc >= 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
            hbs_cli_print_help(stdout, &hbs_cli_cmd_key);
            return HBS_CLI_DONE;
        }
        return hbs_cli_error("key", "needs a subcommand: info, public or split "
                                    "(try 'hbs help key')");
    }
    a->sub = argv[1];
    hbs_cli_parser_init(&ps, &hbs_cli_cmd_key, argc - 1, argv + 1);
    while ((id = hbs_cli_parser_next(&ps, &v)) > 0) {
        switch (id) {
        case OPT_SECRET: a->sk_path = v; break;
        case OPT_OUT: a->out = v; break;
        case OPT_PUBLIC: a->pk_path = v; break;
        case OPT_RAW: a->raw = 1; break;
        case OPT_JSON: a->json = 1; break;
        case OPT_COUNT:
            if (hbs_cli_parse_uint("--count", v, 1, (unsigned long)-1, &a->count))
                return HBS_CLI_ERROR;
            break;
        }
    }
    if ((id = hbs_cli_parser_end(id)) != HBS_CLI_OK)
        return id;
    if (!a->sk_path)
        return hbs_cli_error("key", "needs -s STATE");
    if (strcmp(a->sub, "split") == 0 && (!a->out || !a->count))
        return hbs_cli_error("key split", "needs -o NEW and -n COUNT");
    if (strcmp(a->sub, "public") == 0 && !a->pk_path)
        return hbs_cli_error("key public", "needs -p FILE");
    if (strcmp(a->sub, "info") && strcmp(a->sub, "split") && strcmp(a->sub, "public"))
        return hbs_cli_error("key", "unknown subcommand '%s' (info, public or split)", a->sub);
    return HBS_CLI_OK;
}

static int open_key(hbs_stateful_key **k, const char *path)
{
    int err = hbs_stateful_open(k, path, HBS_STATEFUL_WAIT, 1);
    if (err == HBS_OK)
        return HBS_CLI_OK;
    if (err == HBS_ERR_IO)
        return hbs_cli_error(path, "%s", strerror(errno));
    if (err == HBS_ERR_STATE)
        return hbs_cli_error(path, "not a stateful key file, or its state is corrupt");
    return hbs_cli_error(path, "%s", hbs_strerror(err));
}

static int info(const key_args *a, hbs_stateful_key *k)
{
    char alg[1024];
    if (hbs_stateful_key_alg(k, alg, sizeof alg) != HBS_OK)
        return hbs_cli_error(a->sk_path, "cannot name the algorithm");
    unsigned long long next = hbs_stateful_key_index(k), end = hbs_stateful_key_end(k),
                       total = hbs_stateful_key_total(k);
    if (a->json)
        printf("{\"algorithm\": \"%s\", \"next_index\": %llu, \"end\": %llu, \"total\": %llu, "
               "\"remaining\": %llu, \"signature_bytes\": %zu}\n",
               alg, next, end, total, end - next, hbs_stateful_sig_bytes(k));
    else
        printf("algorithm:        %s\n"
               "next index:       %llu\n"
               "signatures left:  %llu%s\n"
               "total:            %llu\n"
               "usable indices:   %llu .. %llu\n"
               "signature bytes:  %zu\n",
               alg, next, end - next, end == next ? " (exhausted)" : "", total, next,
               end ? end - 1 : 0, hbs_stateful_sig_bytes(k));
    return fflush(stdout) == 0 ? HBS_CLI_OK : hbs_cli_error("stdout", "write failed");
}

static int public_key(const key_args *a, hbs_stateful_key *k)
{
    uint8_t pk[HBS_STATEFUL_MAX_PK_BYTES];
    size_t pklen;
    if (hbs_stateful_key_public(k, pk, sizeof pk, &pklen) != HBS_OK)
        return hbs_cli_error(a->sk_path, "cannot read the public key");
    return hbs_cli_stateful_write_public(hbs_stateful_key_family(k), pk, pklen, a->pk_path,
                                         a->raw);
}

static int split(const key_args *a, hbs_stateful_key *k)
{
    int err = hbs_stateful_split(k, a->out, a->count);
    if (err == HBS_ERR_KEY_EXHAUSTED)
        return hbs_cli_error("key split", "only %llu signatures left, cannot give away %lu",
                             (unsigned long long)hbs_stateful_key_remaining(k), a->count);
    if (err == HBS_ERR_IO)
        return hbs_cli_error(a->out, "%s", strerror(errno));
    if (err)
        return hbs_cli_error("key split", "%s", hbs_strerror(err));
    printf("%s: indices %llu .. %llu\n%s: %llu signatures left\n", a->out,
           (unsigned long long)hbs_stateful_key_end(k),
           (unsigned long long)(hbs_stateful_key_end(k) + a->count - 1), a->sk_path,
           (unsigned long long)hbs_stateful_key_remaining(k));
    return HBS_CLI_OK;
}

static int run(int argc, char **argv)
{
    key_args a;
    hbs_stateful_key *k;
    int rc = parse_args(&a, argc, argv);
    if (rc)
        return rc == HBS_CLI_DONE ? HBS_CLI_OK : rc;
    if (open_key(&k, a.sk_path))
        return HBS_CLI_ERROR;
    if (strcmp(a.sub, "info") == 0)
        rc = info(&a, k);
    else if (strcmp(a.sub, "public") == 0)
        rc = public_key(&a, k);
    else
        rc = split(&a, k);
    hbs_stateful_close(k);
    return rc;
}

const hbs_cli_command hbs_cli_cmd_key = {
    "key",
    run,
    "info -s STATE [--json] | public -s STATE -p FILE [--raw] | split -s STATE -o NEW -n COUNT",
    "Show or manage a stateful (LMS/HSS, XMSS) key file.",
    "info shows the algorithm, the next index and the signatures left. public writes the\n"
    "key's public key. split moves the last COUNT signatures into a new key file for another\n"
    "signer under the same public key: the old file gives them up first, durably, so no\n"
    "index can ever be used by both (choose COUNT as a multiple of the bottom tree's leaves\n"
    "to hand over whole subtrees).",
    options,
};
