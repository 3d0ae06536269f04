/* The stateful part of `hbs bench` (bench_stateful.c). */
#ifndef HBS_CLI_BENCH_STATEFUL_H
#define HBS_CLI_BENCH_STATEFUL_H

#include <stdio.h>

#include "stateful.h"

/* The sets measured when `hbs bench --stateful` names none (NULL-terminated). */
extern const char *const hbs_cli_stateful_bench_default[];

/* Measures each algorithm and prints a table to out; if json is not NULL, *json gets the
 * records as JSON objects in the SLH-DSA bench's schema, one a line (free() it). threads 0:
 * the library default. */
int hbs_cli_bench_stateful(const char *const *algs, size_t nalgs, int do_keygen, int do_sign,
                           int do_verify, unsigned long threads, unsigned long iterations,
                           double min_time, char **json, FILE *out);

/* Key generation of each algorithm with the leaves on the GPU (in memory and to a key file)
 * beside the CPU's, then batch signing and verification, as tables on out (do_keygen,
 * do_batches pick the tables: `--ops keygen` leaves the batches out; do_many_keys adds
 * signing under 16,384 keys a call, `--many-keys`). An error without a GPU. */
int hbs_cli_bench_stateful_gpu(const char *const *algs, size_t nalgs, int do_keygen,
                               int do_batches, int do_many_keys, unsigned long iterations,
                               double min_time, FILE *out);

#endif
