/* The one test runner. `hbs_tests` runs everything; `hbs_tests PATTERN...` runs the tests
 * whose "group/name" contains one of the patterns. `--backend NAME` forces a hash backend
 * first; `--backend all` runs the selection once on every backend compiled in, reporting
 * those this CPU lacks as skipped. Exit status 0 only if nothing failed. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hbs/gpu.h"
#include "hbs/hbs.h"
#include "test.h"
#include "groups.h"

static int cur_failures;
static int cur_skipped;
static char cur_skip_reason[512];
static char cur_note[512];

void test_fail(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    if (cur_failures < 20) {
        fprintf(stderr, "    FAIL %s:%d: ", file, line);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
    } else if (cur_failures == 20) {
        fprintf(stderr, "    (further failures not shown)\n");
    }
    cur_failures++;
}

void test_skip(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cur_skip_reason, sizeof cur_skip_reason, fmt, ap);
    va_end(ap);
    cur_skipped = 1;
}

void test_note(const char *fmt, ...)
{
    va_list ap;
    size_t used = strlen(cur_note);
    if (used + 3 >= sizeof cur_note)
        return;
    if (used) {
        strcat(cur_note, "; ");
        used += 2;
    }
    va_start(ap, fmt);
    vsnprintf(cur_note + used, sizeof cur_note - used, fmt, ap);
    va_end(ap);
}

int test_failed(void) { return cur_failures; }

static int selected(const char *full, int argc, char **argv)
{
    if (argc < 2)
        return 1;
    for (int i = 1; i < argc; i++)
        if (strstr(full, argv[i]))
            return 1;
    return 0;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int passed, failed, skipped;

static void run_all(int argc, char **argv)
{
    for (size_t g = 0; hbs_test_groups[g].name; g++) {
        const hbs_test_group *grp = &hbs_test_groups[g];
        for (const hbs_test *t = grp->tests; t->name; t++) {
            char full[256];
            snprintf(full, sizeof full, "%s/%s", grp->name, t->name);
            if (!selected(full, argc, argv))
                continue;
            cur_failures = 0;
            cur_skipped = 0;
            cur_skip_reason[0] = cur_note[0] = '\0';
            double t0 = now_s();
            t->fn();
            double dt = now_s() - t0;
            if (cur_failures) {
                failed++;
                printf("FAIL  %-48s %d failure(s) %s\n", full, cur_failures, cur_note);
            } else if (cur_skipped) {
                skipped++;
                printf("SKIP  %-48s *** SKIPPED: %s ***\n", full, cur_skip_reason);
            } else {
                passed++;
                printf("ok    %-48s %6.2fs  %s\n", full, dt, cur_note);
            }
        }
    }
}

/* Forces a backend for this process and for the hbs processes the CLI tests start. */
static int use_backend(const char *name)
{
    if (hbs_set_backend(name) != HBS_OK)
        return 0;
    setenv("HBS_BACKEND", name, 1);
    return 1;
}

int main(int argc, char **argv)
{
    const char *backend = NULL;
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc >= 3 && strcmp(argv[1], "--backend") == 0) {
        backend = argv[2];
        argv[2] = argv[0];
        argv += 2;
        argc -= 2;
    }
    if (backend && strcmp(backend, "all") == 0) {
        int first = 1;
        for (size_t i = 0; hbs_backend_at(i); i++) {
            const char *name = hbs_backend_at(i);
            printf("\n=== hash backend %s ===\n", name);
            if (!use_backend(name)) {
                skipped++;
                printf("SKIP  %-48s *** SKIPPED: not supported by this CPU ***\n", name);
                continue;
            }
            test_set_full_pass(first);
            first = 0;
            run_all(argc, argv);
        }
    } else {
        if (backend && !use_backend(backend)) {
            fprintf(stderr, "hbs_tests: backend %s is not available here\n", backend);
            return 2;
        }
        printf("hash backend: %s\n", hbs_backend_name());
        run_all(argc, argv);
    }
    hbs_gpu_release(); /* nothing left on the GPU for a leak checker to report */
    printf("\n%d passed, %d failed, %d skipped\n", passed, failed, skipped);
    if (skipped)
        printf("*** %d test(s) SKIPPED: see the SKIP lines above ***\n", skipped);
    return failed ? 1 : 0;
}
