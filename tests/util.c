#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test.h"

#ifndef HBS_SOURCE_DIR
#define HBS_SOURCE_DIR "."
#endif
#ifndef HBS_BINARY_DIR
#define HBS_BINARY_DIR "build"
#endif

static int is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

const char *test_vectors_dir(void)
{
    static char path[4096];
    static int done;
    if (done)
        return path[0] ? path : NULL;
    done = 1;
    const char *env = getenv("HBS_VECTORS");
    if (env && *env)
        snprintf(path, sizeof path, "%s", env);
    else
        snprintf(path, sizeof path, "%s/../shared/vectors", HBS_SOURCE_DIR);
    if (!is_dir(path))
        path[0] = '\0';
    return path[0] ? path : NULL;
}

uint8_t *test_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    uint8_t *buf = malloc(cap + 1);
    for (;;) {
        if (!buf)
            break;
        size_t r = fread(buf + n, 1, cap - n, f);
        n += r;
        if (n < cap)
            break;
        cap *= 2;
        uint8_t *nb = realloc(buf, cap + 1);
        if (!nb) {
            free(buf);
            buf = NULL;
        } else {
            buf = nb;
        }
    }
    fclose(f);
    if (!buf)
        return NULL;
    buf[n] = 0;
    if (len)
        *len = n;
    return buf;
}

static int hexval(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

uint8_t *test_unhex(const char *hex, size_t *len)
{
    size_t n = strlen(hex);
    if (n % 2)
        return NULL;
    uint8_t *out = malloc(n / 2 + 1);
    if (!out)
        return NULL;
    for (size_t i = 0; i < n / 2; i++) {
        int a = hexval(hex[2 * i]), b = hexval(hex[2 * i + 1]);
        if (a < 0 || b < 0) {
            free(out);
            return NULL;
        }
        out[i] = (uint8_t)(a << 4 | b);
    }
    if (len)
        *len = n / 2;
    return out;
}

void test_rand_bytes(uint8_t *out, size_t len)
{
    static uint64_t s = 0x9e3779b97f4a7c15ULL;
    for (size_t i = 0; i < len; i++) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        out[i] = (uint8_t)(s >> 32);
    }
}

const char *test_hbs_bin(void)
{
    static char path[4096];
    const char *env = getenv("HBS_BIN");
    if (env && *env)
        return env;
    snprintf(path, sizeof path, "%s/hbs", HBS_BINARY_DIR);
    return path;
}

const char *test_tmpdir(void)
{
    static char path[256];
    if (!path[0]) {
        const char *base = getenv("TMPDIR");
        snprintf(path, sizeof path, "%s/hbs-tests-XXXXXX", base && *base ? base : "/tmp");
        if (!mkdtemp(path)) {
            fprintf(stderr, "mkdtemp: %s\n", strerror(errno));
            exit(2);
        }
    }
    return path;
}

static int full_pass = 1;

int test_full_pass(void)
{
    return full_pass;
}

void test_set_full_pass(int full)
{
    full_pass = full;
}

int test_run_hbs(const char *in, const char *out, const char *err, const char *const *args,
                 size_t n)
{
    const char **argv = malloc((n + 2) * sizeof *argv);
    int status;
    pid_t pid;
    if (!argv)
        return -1;
    argv[0] = test_hbs_bin();
    for (size_t i = 0; i < n; i++)
        argv[i + 1] = args[i];
    argv[n + 1] = NULL;
    fflush(stdout);
    fflush(stderr);
    pid = fork();
    if (pid == 0) {
        int fin = open(in ? in : "/dev/null", O_RDONLY);
        int fout = open(out ? out : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int ferr = open(err ? err : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fin < 0 || fout < 0 || ferr < 0 || dup2(fin, 0) < 0 || dup2(fout, 1) < 0 ||
            dup2(ferr, 2) < 0)
            _exit(125);
        execv(argv[0], (char *const *)argv);
        _exit(126);
    }
    free(argv);
    if (pid < 0)
        return -1;
    while (waitpid(pid, &status, 0) < 0) {
    }
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}
