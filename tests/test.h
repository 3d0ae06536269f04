/* A small test harness: one runner, tests grouped by kind (unit, vectors, interop, misuse, cli).
 * A test is a void function; it reports through the CHECK macros and may call test_skip(). */
#ifndef HBS_TEST_H
#define HBS_TEST_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct {
    const char *name;
    void (*fn)(void);
} hbs_test;

/* Called by the CHECK macros; counts a failure and prints where it happened. */
void test_fail(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Marks the running test as skipped, with a reason printed loudly by the runner. */
void test_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Adds a line to the running test's summary (e.g. "49/49 vectors"). */
void test_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Failures so far in the running test. */
int test_failed(void);

#define CHECK(cond)                                                                      \
    do {                                                                                 \
        if (!(cond))                                                                     \
            test_fail(__FILE__, __LINE__, "%s", #cond);                                  \
    } while (0)
#define CHECK_MSG(cond, ...)                                                             \
    do {                                                                                 \
        if (!(cond))                                                                     \
            test_fail(__FILE__, __LINE__, __VA_ARGS__);                                  \
    } while (0)
#define CHECK_INT(a, b)                                                                  \
    do {                                                                                 \
        long long a_ = (long long)(a), b_ = (long long)(b);                              \
        if (a_ != b_)                                                                    \
            test_fail(__FILE__, __LINE__, "%s == %lld, expected %s == %lld", #a, a_, #b, \
                      b_);                                                               \
    } while (0)
#define CHECK_MEM(a, b, n)                                                               \
    do {                                                                                 \
        if (memcmp((a), (b), (n)) != 0)                                                  \
            test_fail(__FILE__, __LINE__, "%s differs from %s (%zu bytes)", #a, #b,      \
                      (size_t)(n));                                                      \
    } while (0)

/* ---- helpers shared by the tests ---- */

/* The folder of test vectors: $HBS_VECTORS, else ../shared/vectors beside the source tree;
 * NULL if it does not exist (tests that need it then skip, loudly). */
const char *test_vectors_dir(void);
/* Reads a whole file; NULL if it cannot. The buffer is NUL-terminated; free() it. */
uint8_t *test_read_file(const char *path, size_t *len);
/* Decodes hex (either case) into a new buffer; NULL on malformed input. free() it. */
uint8_t *test_unhex(const char *hex, size_t *len);
/* Deterministic pseudo-random bytes for tests (xorshift; not for keys). */
void test_rand_bytes(uint8_t *out, size_t len);
/* Path of the hbs binary under test (for CLI tests), from $HBS_BIN or the build tree. */
const char *test_hbs_bin(void);
/* 1 on the first (best) backend pass of `--backend all`, and in a run on one backend; 0 on
 * the later passes. Tests whose full vector set takes minutes (tall-tree key generation) run
 * all of it when this is 1 and a representative subset otherwise, saying so in a note. */
int test_full_pass(void);
void test_set_full_pass(int full);
/* A fresh scratch directory for this run (created on first use). */
const char *test_tmpdir(void);
/* Runs the hbs binary with args[0..n) in a child process: stdin from `in`, stdout to `out`
 * (NULL: /dev/null), stderr to `err` (NULL: /dev/null). Returns the exit status, or 128+N
 * for death by signal N (so a crash is never mistaken for a verdict); -1 if it could not
 * start. */
int test_run_hbs(const char *in, const char *out, const char *err, const char *const *args,
                 size_t n);

#endif
