/* Many message files in one `hbs sign` or `hbs verify`: the list of files and where their
 * signatures go, the choice of engine (--gpu), and the two batch drivers. Files are read in
 * batches of at most `batch` messages (and about BATCH_BYTES of them), so a run over
 * 100,000 files never holds them all in memory. */
#ifndef HBS_CLI_BATCH_H
#define HBS_CLI_BATCH_H

#include "cli.h"
#include "hbs/stateful.h"

/* Messages per batch unless --batch says otherwise, and the message bytes a batch stops
 * growing at (a single larger file still makes a batch of one). */
#define HBS_CLI_BATCH_DEFAULT 4096
#define HBS_CLI_BATCH_BYTES ((size_t)256 << 20)

/* The message files of a run and the signature file of each. */
typedef struct {
    const char **msgs; /* paths as given (argv strings) */
    char **sigs;       /* owned */
    size_t count, cap;
} hbs_cli_files;

/* An empty list with room for cap messages; HBS_CLI_ERROR if out of memory. */
int hbs_cli_files_init(hbs_cli_files *f, size_t cap);
void hbs_cli_files_add(hbs_cli_files *f, const char *msg);
/* Names each message's signature file: `explicit_sig` for a single message (-x), else
 * FILE.sig beside FILE, or DIR/BASENAME.sig when dir is given (-o, --sig-dir). "-" (stdin)
 * needs -x. Two messages signing to the same file are an error. */
int hbs_cli_files_name_sigs(hbs_cli_files *f, const char *explicit_sig, const char *dir,
                            const char *dir_opt);
void hbs_cli_files_free(hbs_cli_files *f);

/* Reads a whole file ("-": stdin) without printing anything: 0, or the errno of the
 * failure. Messages and signatures are not secret: plain free() of *out. */
int hbs_cli_read_plain(const char *path, uint8_t **out, size_t *outlen);

/* --gpu: off, on (no GPU is an error), or auto (no GPU: the CPU, with a note). */
typedef enum { HBS_CLI_GPU_OFF = 0, HBS_CLI_GPU_ON, HBS_CLI_GPU_AUTO } hbs_cli_gpu_mode;

/* The value of --gpu ("--gpu" gives NULL, "--gpu=auto" gives "auto"). */
int hbs_cli_gpu_parse(const char *value, hbs_cli_gpu_mode *out);
/* Settles the engine before any work: --gpu without a usable GPU is an error; --gpu=auto
 * then falls back to the CPU with a note on stderr. On return *mode is OFF or ON. devices:
 * the value of --gpu-devices (NULL: every visible GPU), applied when the GPU is used. */
int hbs_cli_gpu_resolve(hbs_cli_gpu_mode *mode, const char *devices);
/* --gpu-devices LIST ("0,2"): the CUDA ordinals the GPU work spreads over, each once;
 * a bad list, or a GPU that is not there, is an error (reported). */
int hbs_cli_gpu_devices(const char *list);
/* results[i] = hbs_stateful_verify's verdict on sigs[i] over msgs[i] under pk, for every
 * i < count, over every CPU core. */
void hbs_cli_stateful_verify_all(hbs_stateful_family family, const uint8_t *pk, size_t pklen,
                                 const uint8_t *const *sigs, const size_t *siglens,
                                 const uint8_t *const *msgs, const size_t *msglens,
                                 size_t count, int *results);

/* The first GPU in use (where device-resident work goes), 0 without one. */
int hbs_cli_first_gpu(void);
/* "GPU: NVIDIA H200 (1 in use)" or the CPU backend line, for --verbose. */
void hbs_cli_engine_line(char *out, size_t cap, int gpu);

/* The options sign and verify share: the message files (-m and the names after the
 * options), -x, --context, --prehash, --raw with -a, --gpu, --gpu-devices, --batch and
 * --verbose. Each
 * command lists them in its option table under these ids, with its own help text. */
enum { HBS_CLI_OPT_MESSAGE = 100, HBS_CLI_OPT_SIG, HBS_CLI_OPT_CONTEXT, HBS_CLI_OPT_PREHASH,
       HBS_CLI_OPT_RAW, HBS_CLI_OPT_ALG, HBS_CLI_OPT_GPU, HBS_CLI_OPT_BATCH,
       HBS_CLI_OPT_VERBOSE, HBS_CLI_OPT_GPU_DEVICES };

typedef struct {
    hbs_cli_files files;
    const char *msg_path; /* the message when there is exactly one */
    const char *sig_path, *context_hex, *prehash, *alg;
    int raw, verbose;
    hbs_cli_gpu_mode gpu;
    const char *gpu_devices; /* --gpu-devices, or NULL */
    unsigned long batch; /* 0: HBS_CLI_BATCH_DEFAULT */
} hbs_cli_many_opts;

/* Room for the files of argc arguments; HBS_CLI_ERROR if out of memory. */
int hbs_cli_many_init(hbs_cli_many_opts *m, int argc);
/* Takes one parsed option if it is a shared one: 1 taken, 0 not a shared option, or
 * -1 for a bad value (reported). */
int hbs_cli_many_option(hbs_cli_many_opts *m, int id, const char *value);
/* After parsing: -x names one signature file, so it takes one message, and it excludes the
 * folder option (`dir_opt`, set when dir_given); sets msg_path for a single message. `hint`
 * ends the -x error: where the signatures go instead. */
int hbs_cli_many_finish(hbs_cli_many_opts *m, const char *cmd, int dir_given,
                        const char *dir_opt, const char *hint);
void hbs_cli_many_free(hbs_cli_many_opts *m);

/* What sign and verify hand to the batch drivers. */
typedef struct {
    const hbs_cli_files *files;
    const char *key_path; /* -s or -p, for messages about the key */
    const char *context_hex, *prehash, *rand_hex;
    int deterministic;
    int replace;  /* signature files may be replaced (-x, or --force) */
    int gpu;      /* resolved: 1 for the GPU engine */
    int verbose;
    int quiet;    /* verify: print nothing */
    int json;     /* verify: one JSON object per line */
    int terse;    /* verify: "valid"/"invalid" lines, as the -x form always printed */
    size_t batch;
} hbs_cli_batch_args;

/* Signs every message with an SLH-DSA key, batch by batch, on the CPU (all cores) or the
 * GPU; each signature is verified on the CPU before it is written. */
int hbs_cli_slhdsa_sign_many(const hbs_key *sk, const hbs_cli_batch_args *a);
/* Signs the messages with consecutive indices of a stateful key, one after another on the
 * CPU, or on the GPU in batches of a->batch (each batch's indices given up by the key file
 * before it is signed); every signature is verified on the CPU before it is written. The
 * key must have an index left for every message, or nothing is signed. reserve 0: all the
 * indices the run needs are set aside in one state update. */
int hbs_cli_stateful_sign_many(const char *sk_path, const hbs_cli_batch_args *a,
                               unsigned long reserve);
/* Verifies every message against its signature file and reports each (see cmd_verify.c). */
int hbs_cli_verify_many(const hbs_key *pk, const hbs_cli_batch_args *a);

#endif
