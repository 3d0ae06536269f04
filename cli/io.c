/* Error messages, whole-file reads, atomic writes and hex for the command-line tool. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "hbs/hbs.h"

int hbs_cli_error(const char *what, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "hbs: %s: ", what);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return HBS_CLI_ERROR;
}

int hbs_cli_is_std(const char *path) { return strcmp(path, "-") == 0; }

void hbs_cli_free(uint8_t *buf, size_t len)
{
    if (buf) {
        hbs_memzero(buf, len);
        free(buf);
    }
}

/* Grows a buffer without realloc, so no copy of what may be a secret key is left behind in
 * freed memory. */
static uint8_t *grow(uint8_t *buf, size_t used, size_t newcap)
{
    uint8_t *nb = malloc(newcap);
    if (nb && used)
        memcpy(nb, buf, used);
    hbs_cli_free(buf, used);
    return nb;
}

static int read_fd(int fd, const char *name, size_t hint, uint8_t **out, size_t *outlen)
{
    size_t cap = hint ? hint + 1 : 4096, used = 0;
    uint8_t *buf = malloc(cap);
    if (!buf)
        return hbs_cli_error(name, "out of memory");
    for (;;) {
        if (used == cap) {
            if (cap > SIZE_MAX / 2) {
                hbs_cli_free(buf, used);
                return hbs_cli_error(name, "file too large");
            }
            cap *= 2;
            buf = grow(buf, used, cap);
            if (!buf)
                return hbs_cli_error(name, "out of memory");
        }
        ssize_t r = read(fd, buf + used, cap - used);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int e = errno;
            hbs_cli_free(buf, used);
            return hbs_cli_error(name, "%s", strerror(e));
        }
        if (r == 0)
            break;
        used += (size_t)r;
    }
    *out = buf;
    *outlen = used;
    return HBS_CLI_OK;
}

int hbs_cli_read_file(const char *path, uint8_t **out, size_t *outlen)
{
    *out = NULL;
    *outlen = 0;
    if (hbs_cli_is_std(path))
        return read_fd(STDIN_FILENO, "stdin", 0, out, outlen);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return hbs_cli_error(path, "%s", strerror(errno));
    struct stat st;
    size_t hint = 0;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
        (unsigned long long)st.st_size < SIZE_MAX / 2)
        hint = (size_t)st.st_size;
    int rc = read_fd(fd, path, hint, out, outlen);
    close(fd);
    return rc;
}

static int write_all(int fd, const uint8_t *data, size_t len)
{
    while (len) {
        ssize_t w = write(fd, data, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return -1;
        data += w;
        len -= (size_t)w;
    }
    return 0;
}

/* The folder part of a path ("." if none), for the temporary file and the folder fsync. */
static void folder_of(char *out, size_t cap, const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(out, cap, ".");
    else if (slash == path)
        snprintf(out, cap, "/");
    else
        snprintf(out, cap, "%.*s", (int)(slash - path), path);
}

int hbs_cli_output_begin(hbs_cli_output *o, const char *path, const uint8_t *data, size_t len,
                         int secret)
{
    memset(o, 0, sizeof *o);
    o->path = path;
    if (hbs_cli_is_std(path)) {
        o->data = data;
        o->len = len;
        return HBS_CLI_OK;
    }
    char folder[4096];
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    folder_of(folder, sizeof folder, path);
    if (*base == '\0')
        return hbs_cli_error(path, "is a folder, not a file name");
    int n = snprintf(o->tmp, sizeof o->tmp, "%s/.%s.XXXXXX", folder, base);
    if (n < 0 || (size_t)n >= sizeof o->tmp)
        return hbs_cli_error(path, "path too long");

    int fd = mkstemp(o->tmp); /* mode 0600 from the start: no window where others can read */
    if (fd < 0) {
        int e = errno;
        o->tmp[0] = '\0';
        return hbs_cli_error(path, "cannot create a file in %s: %s", folder, strerror(e));
    }
    o->pending = 1;
    mode_t mode = 0600;
    if (!secret) {
        mode_t mask = umask(0);
        umask(mask);
        mode = 0666 & ~mask;
    }
    int e = 0;
    if (fchmod(fd, mode) != 0 || write_all(fd, data, len) != 0 || fsync(fd) != 0)
        e = errno;
    if (close(fd) != 0 && !e)
        e = errno;
    if (e) {
        hbs_cli_output_abort(o);
        return hbs_cli_error(path, "%s", strerror(e));
    }
    return HBS_CLI_OK;
}

int hbs_cli_output_commit(hbs_cli_output *o)
{
    if (hbs_cli_is_std(o->path)) {
        if (fwrite(o->data, 1, o->len, stdout) != o->len || fflush(stdout) != 0)
            return hbs_cli_error("stdout", "%s", strerror(errno));
        return HBS_CLI_OK;
    }
    if (rename(o->tmp, o->path) != 0) {
        int e = errno;
        hbs_cli_output_abort(o);
        return hbs_cli_error(o->path, "%s", strerror(e));
    }
    o->pending = 0;
    /* Make the rename itself durable; a failure here leaves a complete file, so it is
     * not reported. */
    char folder[4096];
    folder_of(folder, sizeof folder, o->path);
    int dfd = open(folder, O_RDONLY | O_CLOEXEC);
    if (dfd >= 0) {
        (void)fsync(dfd);
        close(dfd);
    }
    return HBS_CLI_OK;
}

int hbs_cli_output_commit_new(hbs_cli_output *o)
{
    if (hbs_cli_is_std(o->path))
        return hbs_cli_output_commit(o);
    if (link(o->tmp, o->path) == 0) {
        unlink(o->tmp);
        o->pending = 0;
        char folder[4096];
        folder_of(folder, sizeof folder, o->path);
        int dfd = open(folder, O_RDONLY | O_CLOEXEC);
        if (dfd >= 0) {
            (void)fsync(dfd);
            close(dfd);
        }
        return HBS_CLI_OK;
    }
    int e = errno;
    if (e == EPERM || e == EOPNOTSUPP || e == ENOSYS) {
        if (access(o->path, F_OK) != 0)
            return hbs_cli_output_commit(o);
        e = EEXIST;
    }
    hbs_cli_output_abort(o);
    if (e == EEXIST)
        return hbs_cli_error(o->path, "exists; not replaced");
    return hbs_cli_error(o->path, "%s", strerror(e));
}

void hbs_cli_output_abort(hbs_cli_output *o)
{
    if (o->pending) {
        unlink(o->tmp);
        o->pending = 0;
    }
}

int hbs_cli_write_file(const char *path, const uint8_t *data, size_t len, int secret)
{
    hbs_cli_output o;
    int rc = hbs_cli_output_begin(&o, path, data, len, secret);
    if (rc == HBS_CLI_OK)
        rc = hbs_cli_output_commit(&o);
    return rc;
}

/* A hex digit's value or -1, without branches: --seed and --randomness are secrets. */
static int hex_digit(char ch)
{
    int c = (unsigned char)ch;
    int d = c - '0';
    int l = (c | 0x20) - 'a';
    int is_d = (d >= 0) & (d <= 9);
    int is_l = (l >= 0) & (l <= 5);
    return (d & -is_d) | ((l + 10) & -is_l) | -(1 ^ (is_d | is_l));
}

int hbs_cli_unhex(const char *opt, const char *hex, uint8_t *out, size_t cap, size_t *outlen)
{
    size_t digits = strlen(hex);
    if (digits % 2)
        return hbs_cli_error(opt, "bad hex: odd number of digits");
    if (digits / 2 > cap)
        return hbs_cli_error(opt, "too long: %zu bytes, at most %zu", digits / 2, cap);
    for (size_t i = 0; i < digits / 2; i++) {
        int hi = hex_digit(hex[2 * i]), lo = hex_digit(hex[2 * i + 1]);
        if (hi < 0 || lo < 0) {
            hbs_memzero(out, cap);
            return hbs_cli_error(opt, "bad hex: unexpected character at position %zu",
                                 hi < 0 ? 2 * i + 1 : 2 * i + 2);
        }
        out[i] = (uint8_t)(hi << 4 | lo);
    }
    *outlen = digits / 2;
    return HBS_CLI_OK;
}
