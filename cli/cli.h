/* The hbs command-line tool: what the command files share.
 *
 * Exit codes: 0 success (for verify: the signature is valid), 1 the signature is invalid
 * (verify only), 2 any other error, reported as one line "hbs: <what>: <why>" on stderr.
 */
#ifndef HBS_CLI_H
#define HBS_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "hbs/keyfile.h"
#include "hbs/slhdsa.h"

enum { HBS_CLI_OK = 0, HBS_CLI_INVALID = 1, HBS_CLI_ERROR = 2 };
/* Not an exit code: "stop here with success" (after printing help), for argument parsers. */
#define HBS_CLI_DONE (-1)

#if defined(__GNUC__) || defined(__clang__)
#define HBS_CLI_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define HBS_CLI_PRINTF(a, b)
#endif

/* Prints "hbs: <what>: <why>" on stderr and returns HBS_CLI_ERROR, so callers can
 * `return hbs_cli_error(...)`. */
int hbs_cli_error(const char *what, const char *fmt, ...) HBS_CLI_PRINTF(2, 3);

/* ---- options (opts.c) ---------------------------------------------------------------- */

/* One option a command accepts. `id` is what the parser hands back (> 0). */
typedef struct {
    int id;
    char short_name;       /* 0 if the option has no short form */
    const char *long_name; /* without the leading "--" */
    const char *metavar;   /* name of the value in help text; NULL for a flag */
    const char *help;
} hbs_cli_option;

/* A command: its name, entry point and the text `hbs help NAME` prints. */
typedef struct {
    const char *name;
    int (*run)(int argc, char **argv); /* argv[0] is the command name */
    const char *synopsis;              /* "-a ALG -s SECRET -p PUBLIC [options]" */
    const char *summary;               /* one line */
    const char *details;               /* further paragraphs, may be NULL */
    const hbs_cli_option *options;     /* terminated by an entry with id 0 */
} hbs_cli_command;

/* A getopt-like walk over argv[1..]: "-s VALUE", "--secret VALUE", "--secret=VALUE", and
 * "-" as a value (stdin/stdout). Positional arguments are refused unless the command sets
 * `positional` (after init): then each comes back as HBS_CLI_POSITIONAL with the argument
 * as its value, and "--" makes every later argument positional (names starting with '-').
 * An option whose metavar starts with '[' ("[=auto]") is a flag that may take an inline
 * value: "--gpu" gives NULL, "--gpu=auto" gives "auto". */
typedef struct {
    const hbs_cli_command *cmd;
    int argc;
    char **argv;
    int next;
    int positional;      /* the command takes positional arguments */
    int after_dashdash;  /* "--" was seen: the rest is positional */
} hbs_cli_parser;

/* The id positional arguments come back with; option ids of a command stay below it. */
#define HBS_CLI_POSITIONAL 0x7fff

void hbs_cli_parser_init(hbs_cli_parser *ps, const hbs_cli_command *cmd, int argc, char **argv);
#define HBS_CLI_PARSE_ERROR (-1)
#define HBS_CLI_PARSE_HELP (-2)
/* Returns the id of the next option and sets *value (NULL for a flag); 0 at the end;
 * HBS_CLI_PARSE_ERROR after printing an error (unknown option, missing value, stray
 * argument); HBS_CLI_PARSE_HELP after printing the command's help for -h/--help. */
int hbs_cli_parser_next(hbs_cli_parser *ps, const char **value);
/* What the last result of hbs_cli_parser_next (<= 0) means for the command: HBS_CLI_OK to
 * go on, HBS_CLI_DONE to exit 0 (help shown), HBS_CLI_ERROR. */
int hbs_cli_parser_end(int result);

/* Prints the help text of one command. */
void hbs_cli_print_help(FILE *f, const hbs_cli_command *cmd);

/* Strict number parsing for option values; on error print and return HBS_CLI_ERROR. */
int hbs_cli_parse_uint(const char *opt, const char *s, unsigned long min, unsigned long max,
                       unsigned long *out);
int hbs_cli_parse_seconds(const char *opt, const char *s, double *out);

/* ---- files and hex (io.c) -------------------------------------------------------------- */

/* "-" names stdin (for inputs) or stdout (for outputs). */
int hbs_cli_is_std(const char *path);

/* Reads a whole file (or stdin for "-") into a new buffer. On error prints
 * "hbs: PATH: why" and returns HBS_CLI_ERROR. The caller frees with hbs_cli_free(). */
int hbs_cli_read_file(const char *path, uint8_t **out, size_t *outlen);
/* Wipes and frees a buffer from hbs_cli_read_file (or NULL). */
void hbs_cli_free(uint8_t *buf, size_t len);

/* A file being written: the bytes go to a temporary file in the target's folder, are
 * fsynced, and appear under the final name only on commit (a rename), so a reader never
 * sees half a file and a failure leaves nothing behind. For "-", commit writes stdout. */
typedef struct {
    const char *path;
    char tmp[4096];
    const uint8_t *data; /* only kept for stdout */
    size_t len;
    int pending; /* a temporary file exists */
} hbs_cli_output;

/* secret != 0 gives the file mode 0600; otherwise 0666 less the umask. */
int hbs_cli_output_begin(hbs_cli_output *o, const char *path, const uint8_t *data, size_t len,
                         int secret);
int hbs_cli_output_commit(hbs_cli_output *o);
/* As commit, but an existing file is never replaced: it is an error ("exists") even if the
 * file appeared after the caller last looked (the final name is a hard link, which the
 * kernel refuses over an existing name; where the file system has no hard links, a check
 * just before the rename). */
int hbs_cli_output_commit_new(hbs_cli_output *o);
/* Removes the temporary file, if any. Safe to call after commit. */
void hbs_cli_output_abort(hbs_cli_output *o);
/* begin + commit. */
int hbs_cli_write_file(const char *path, const uint8_t *data, size_t len, int secret);

/* Decodes hex (either case, no separators) of at most cap bytes. Errors are reported as
 * "hbs: OPT: ..." and return HBS_CLI_ERROR. */
int hbs_cli_unhex(const char *opt, const char *hex, uint8_t *out, size_t cap, size_t *outlen);

/* ---- keys (keys.c) ---------------------------------------------------------------------- */

/* The algorithm named by -a; prints an error if unknown. */
int hbs_cli_params(const char *name, const hbs_slhdsa_params **out);

/* Loads a key file: PEM/DER (raw == 0) or the bare FIPS 205 bytes of algorithm alg_name
 * (raw != 0, alg_name required). If alg_name is given for a PEM/DER file it must match. */
int hbs_cli_load_key(hbs_key *k, const char *path, hbs_key_kind kind, int raw,
                     const char *alg_name);

/* The pre-hash to use: the --prehash option, else the one the key's OID binds; a --prehash
 * different from a bound one is an error. */
int hbs_cli_choose_prehash(hbs_prehash *out, const hbs_key *k, const char *option);

/* ---- timing, statistics and tables (stats.c) ----------------------------------------- */

/* Seconds on the monotonic clock (never goes back, unaffected by clock changes). */
double hbs_cli_now(void);

typedef struct {
    double median, min, max; /* in the unit of the samples */
    size_t count;
} hbs_cli_stats;

/* Sorts the samples in place and summarises them (all zero for count 0). */
void hbs_cli_stats_compute(hbs_cli_stats *st, double *samples, size_t count);

/* A fixed-width text table: columns are printed right-aligned unless `left`. */
typedef struct {
    const char *title;
    int width;
    int left;
} hbs_cli_column;

void hbs_cli_table_header(FILE *f, const hbs_cli_column *cols, size_t ncols);
void hbs_cli_table_row(FILE *f, const hbs_cli_column *cols, size_t ncols,
                       const char *const *cells);

/* The CPU model from /proc/cpuinfo, or "unknown". */
void hbs_cli_cpu_model(char *out, size_t cap);
/* A line saying which backend runs, e.g. "CPU, hash backend portable, 16 threads" (the
 * threads the library may use inside one operation). */
void hbs_cli_backend_line(char *out, size_t cap);

/* ---- the commands ----------------------------------------------------------------------- */

extern const hbs_cli_command hbs_cli_cmd_list;
extern const hbs_cli_command hbs_cli_cmd_keygen;
extern const hbs_cli_command hbs_cli_cmd_sign;
extern const hbs_cli_command hbs_cli_cmd_verify;
extern const hbs_cli_command hbs_cli_cmd_demo;
/* The demo's stateful part (cli/demo_stateful.c): the number of sets that failed. */
int hbs_cli_demo_stateful(void);
extern const hbs_cli_command hbs_cli_cmd_bench;

/* ---- the GPU benchmark (gpu_bench.c) ---- */
/* `hbs bench --gpu`: the sets algs[0..nalgs), the operations with ops[op] set (0 keygen,
 * 1 sign, 2 verify); batch > 1 overrides the batch sizes, iterations > 0 the number of
 * timed runs; json as for bench. */
/* The GPU bench's measurements (--modes): a bit each, HBS_CLI_GPU_MODES the default ones
 * (pinned, the batches through page-locked memory, only when asked for). */
enum { HBS_CLI_GPU_LATENCY = 1, HBS_CLI_GPU_BATCH = 2, HBS_CLI_GPU_CACHED = 4,
       HBS_CLI_GPU_DEVICE = 8, HBS_CLI_GPU_PINNED = 16, HBS_CLI_GPU_MODES = 15 };
int hbs_cli_gpu_bench(const hbs_slhdsa_params *const *algs, size_t nalgs, const int *ops,
                      unsigned modes, unsigned long batch, unsigned long iterations,
                      const char *json);

/* ---- hash work and hash ceilings (hashrate.c) ---- */
typedef struct {
    double sha256, sha512, keccak; /* compressions or permutations (or those per second) */
} hbs_cli_hashes;
/* Hashes one operation needs (op: 0 keygen, 1 sign, 2 verify). */
void hbs_cli_hash_model(const hbs_slhdsa_params *p, int op, hbs_cli_hashes *out);
/* The active backend's single-core rates on this set's hot inputs, measured now. */
void hbs_cli_hash_raw(const hbs_slhdsa_params *p, hbs_cli_hashes *rate);
/* Seconds the work takes at those rates: the single-core hash ceiling of the operation. */
double hbs_cli_hash_seconds(const hbs_cli_hashes *work, const hbs_cli_hashes *rate);
/* Hashes a stateful key generation needs: the first tree of every layer (hashrate_stateful.c).
 * 0, or -1 for an unknown set. */
int hbs_cli_stateful_keygen_model(const char *alg, hbs_cli_hashes *out);
/* The H200's own ceiling, measured with a plain kernel (../shared/tools/hash-peak.cu):
 * compressions or permutations per second. Other GPUs are measured against it too. */
#define HBS_CLI_GPU_CEIL_SHA256 13.0e9
#define HBS_CLI_GPU_CEIL_SHA512 4.86e9
#define HBS_CLI_GPU_CEIL_KECCAK 3.47e9
/* Milliseconds the work takes at that ceiling. */
static inline double hbs_cli_gpu_ceiling_ms(const hbs_cli_hashes *w)
{
    return 1e3 * (w->sha256 / HBS_CLI_GPU_CEIL_SHA256 + w->sha512 / HBS_CLI_GPU_CEIL_SHA512 +
                  w->keccak / HBS_CLI_GPU_CEIL_KECCAK);
}

#endif
