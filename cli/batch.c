/* The file list of a many-file sign or verify, plain file reads, and the --gpu choice. */
#include "batch.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/pool.h"
#include "hbs/gpu.h"

int hbs_cli_files_init(hbs_cli_files *f, size_t cap)
{
    memset(f, 0, sizeof *f);
    f->msgs = calloc(cap ? cap : 1, sizeof *f->msgs);
    f->sigs = calloc(cap ? cap : 1, sizeof *f->sigs);
    f->cap = cap;
    if (!f->msgs || !f->sigs) {
        hbs_cli_files_free(f);
        return hbs_cli_error("sign", "out of memory");
    }
    return HBS_CLI_OK;
}

void hbs_cli_files_add(hbs_cli_files *f, const char *msg)
{
    if (f->count < f->cap) /* cap is the argument count: it cannot run out */
        f->msgs[f->count++] = msg;
}

void hbs_cli_files_free(hbs_cli_files *f)
{
    for (size_t i = 0; f->sigs && i < f->count; i++)
        free(f->sigs[i]);
    free(f->sigs);
    free(f->msgs);
    memset(f, 0, sizeof *f);
}

/* a || b || c || d in a new string; NULL if out of memory. */
static char *concat4(const char *a, const char *b, const char *c, const char *d)
{
    const char *parts[4] = {a, b, c, d};
    size_t len = 0, at = 0;
    for (int i = 0; i < 4; i++)
        len += strlen(parts[i]);
    char *s = malloc(len + 1);
    if (!s)
        return NULL;
    for (int i = 0; i < 4; i++) {
        size_t l = strlen(parts[i]);
        memcpy(s + at, parts[i], l);
        at += l;
    }
    s[at] = '\0';
    return s;
}

/* One name in the collision check: a message, or a signature about to be written. */
typedef struct {
    const char *path;
    int is_sig;
} named_path;

static int by_path(const void *x, const void *y)
{
    const named_path *a = x, *b = y;
    int c = strcmp(a->path, b->path);
    return c ? c : a->is_sig - b->is_sig;
}

/* Two signatures to one file would leave only the last; a signature written over a message
 * named in the same run would destroy it. Names are compared as given (no path folding). */
static int check_collisions(const hbs_cli_files *f)
{
    named_path *all = malloc(2 * f->count * sizeof *all);
    if (!all)
        return hbs_cli_error("sign", "out of memory");
    for (size_t i = 0; i < f->count; i++) {
        all[2 * i] = (named_path){f->msgs[i], 0};
        all[2 * i + 1] = (named_path){f->sigs[i], 1};
    }
    qsort(all, 2 * f->count, sizeof *all, by_path);
    int rc = HBS_CLI_OK;
    for (size_t i = 1; i < 2 * f->count && rc == HBS_CLI_OK; i++) {
        if (strcmp(all[i - 1].path, all[i].path) != 0 || !all[i].is_sig)
            continue;
        rc = all[i - 1].is_sig
                 ? hbs_cli_error(all[i].path, "two messages would sign to this one file")
                 : hbs_cli_error(all[i].path, "is one of the messages; its signature file "
                                              "would replace it");
    }
    free(all);
    return rc;
}

int hbs_cli_files_name_sigs(hbs_cli_files *f, const char *explicit_sig, const char *dir,
                            const char *dir_opt)
{
    if (dir && !*dir)
        return hbs_cli_error(dir_opt, "needs a folder name");
    for (size_t i = 0; i < f->count; i++) {
        const char *m = f->msgs[i];
        if (explicit_sig) {
            f->sigs[i] = concat4(explicit_sig, "", "", "");
        } else if (hbs_cli_is_std(m)) {
            return hbs_cli_error("-", "a message from stdin has no file name to put '.sig' "
                                      "after: name the signature with -x");
        } else if (dir) {
            const char *slash = strrchr(m, '/');
            const char *base = slash ? slash + 1 : m;
            if (*base == '\0')
                return hbs_cli_error(m, "is a folder, not a message file");
            f->sigs[i] = concat4(dir, dir[strlen(dir) - 1] == '/' ? "" : "/", base, ".sig");
        } else {
            f->sigs[i] = concat4(m, ".sig", "", "");
        }
        if (!f->sigs[i])
            return hbs_cli_error(dir_opt, "out of memory");
    }
    return f->count > 1 ? check_collisions(f) : HBS_CLI_OK;
}

int hbs_cli_read_plain(const char *path, uint8_t **out, size_t *outlen)
{
    int fd = hbs_cli_is_std(path) ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
    size_t cap = 4096, used = 0;
    uint8_t *buf = NULL;
    int err = 0;
    *out = NULL;
    *outlen = 0;
    if (fd < 0)
        return errno;
    buf = malloc(cap);
    while (buf) {
        if (used == cap) {
            uint8_t *nb = cap < SIZE_MAX / 2 ? realloc(buf, cap * 2) : NULL;
            if (!nb) {
                err = cap < SIZE_MAX / 2 ? ENOMEM : EFBIG;
                break;
            }
            buf = nb;
            cap *= 2;
        }
        ssize_t r = read(fd, buf + used, cap - used);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            err = errno;
            break;
        }
        if (r == 0)
            break;
        used += (size_t)r;
    }
    if (!buf && !err)
        err = ENOMEM;
    if (fd != STDIN_FILENO)
        close(fd);
    if (err) {
        free(buf);
        return err;
    }
    *out = buf;
    *outlen = used;
    return 0;
}

int hbs_cli_gpu_parse(const char *value, hbs_cli_gpu_mode *out)
{
    if (!value)
        *out = HBS_CLI_GPU_ON;
    else if (strcmp(value, "auto") == 0)
        *out = HBS_CLI_GPU_AUTO;
    else
        return hbs_cli_error("--gpu", "'%s' is not a choice: --gpu, or --gpu=auto to fall back "
                                      "to the CPU without a GPU", value);
    return HBS_CLI_OK;
}

int hbs_cli_many_init(hbs_cli_many_opts *m, int argc)
{
    memset(m, 0, sizeof *m);
    return hbs_cli_files_init(&m->files, (size_t)argc);
}

int hbs_cli_many_option(hbs_cli_many_opts *m, int id, const char *v)
{
    switch (id) {
    case HBS_CLI_OPT_MESSAGE:
    case HBS_CLI_POSITIONAL: hbs_cli_files_add(&m->files, v); break;
    case HBS_CLI_OPT_SIG: m->sig_path = v; break;
    case HBS_CLI_OPT_CONTEXT: m->context_hex = v; break;
    case HBS_CLI_OPT_PREHASH: m->prehash = v; break;
    case HBS_CLI_OPT_RAW: m->raw = 1; break;
    case HBS_CLI_OPT_ALG: m->alg = v; break;
    case HBS_CLI_OPT_VERBOSE: m->verbose = 1; break;
    case HBS_CLI_OPT_GPU: return hbs_cli_gpu_parse(v, &m->gpu) ? -1 : 1;
    case HBS_CLI_OPT_GPU_DEVICES: m->gpu_devices = v; break;
    case HBS_CLI_OPT_BATCH:
        return hbs_cli_parse_uint("--batch", v, 1, 1000000, &m->batch) ? -1 : 1;
    default: return 0;
    }
    return 1;
}

int hbs_cli_many_finish(hbs_cli_many_opts *m, const char *cmd, int dir_given,
                        const char *dir_opt, const char *hint)
{
    if (m->sig_path && m->files.count > 1)
        return hbs_cli_error("-x", "names one signature file, but %zu messages are given: "
                             "leave -x out to %s", m->files.count, hint);
    if (m->sig_path && dir_given)
        return hbs_cli_error(cmd, "-x and %s exclude each other", dir_opt);
    if (m->files.count == 1)
        m->msg_path = m->files.msgs[0];
    return HBS_CLI_OK;
}

void hbs_cli_many_free(hbs_cli_many_opts *m)
{
    hbs_cli_files_free(&m->files);
}

int hbs_cli_gpu_devices(const char *list)
{
    int dev[64];
    size_t n = 0;
    const char *p = list;
    while (p && *p) {
        char *end = NULL;
        long v = strtol(p, &end, 10);
        if (end == p || *p == '-' || *p == '+' || v > 4095 || (*end && *end != ',') ||
            (*end == ',' && !end[1]) || n == sizeof dev / sizeof dev[0])
            break;
        dev[n++] = (int)v;
        p = *end ? end + 1 : end;
    }
    if (!p || *p || n == 0)
        return hbs_cli_error("--gpu-devices", "'%s' is not a list of GPU numbers such as 0 or "
                             "0,2", list ? list : "");
    int err = hbs_gpu_use_devices(dev, n);
    if (err == HBS_ERR_NO_GPU)
        return hbs_cli_error("--gpu-devices", "no CUDA GPU found");
    if (err)
        return hbs_cli_error("--gpu-devices", "'%s': the GPUs here are 0 to %d, each to be "
                             "named once", list, hbs_gpu_device_count() - 1);
    return HBS_CLI_OK;
}

int hbs_cli_gpu_resolve(hbs_cli_gpu_mode *mode, const char *devices)
{
    const char *why = NULL;
    if (*mode == HBS_CLI_GPU_OFF)
        return devices ? hbs_cli_error("--gpu-devices", "applies with --gpu only")
                       : HBS_CLI_OK;
    if (hbs_gpu_device_count() == 0)
#ifdef HBS_HAVE_CUDA
        why = "no CUDA GPU found (no usable device or driver on this machine)";
#else
        why = "no CUDA GPU found (this hbs was built without CUDA)";
#endif
    if (!why) {
        *mode = HBS_CLI_GPU_ON;
        return devices ? hbs_cli_gpu_devices(devices) : HBS_CLI_OK;
    }
    if (*mode == HBS_CLI_GPU_ON)
        return hbs_cli_error("--gpu", "%s; --gpu=auto falls back to the CPU", why);
    fprintf(stderr, "hbs: --gpu=auto: %s; using the CPU\n", why);
    *mode = HBS_CLI_GPU_OFF;
    return HBS_CLI_OK;
}

typedef struct {
    hbs_stateful_family family;
    const uint8_t *pk;
    size_t pklen;
    const uint8_t *const *sigs, *const *msgs;
    const size_t *siglens, *msglens;
    int *results;
} stateful_verify_args;

static void stateful_verify_one(void *arg, size_t i)
{
    const stateful_verify_args *a = arg;
    a->results[i] = hbs_stateful_verify(a->family, a->pk, a->pklen, a->msgs[i], a->msglens[i],
                                        a->sigs[i], a->siglens[i]);
}

void hbs_cli_stateful_verify_all(hbs_stateful_family family, const uint8_t *pk, size_t pklen,
                                 const uint8_t *const *sigs, const size_t *siglens,
                                 const uint8_t *const *msgs, const size_t *msglens,
                                 size_t count, int *results)
{
    stateful_verify_args a = {family, pk, pklen, sigs, msgs, siglens, msglens, results};
    hbs_parallel_for(count, stateful_verify_one, &a);
}

int hbs_cli_first_gpu(void)
{
    int dev = 0;
    return hbs_gpu_devices_used(&dev, 1) > 0 ? dev : 0;
}

void hbs_cli_engine_line(char *out, size_t cap, int gpu)
{
    char name[256];
    if (!gpu) {
        hbs_cli_backend_line(out, cap);
        return;
    }
    int dev[64];
    const int n = hbs_gpu_devices_used(dev, sizeof dev / sizeof dev[0]);
    if (n < 1 || hbs_gpu_device_name(dev[0], name, sizeof name) != HBS_OK)
        snprintf(name, sizeof name, "unknown GPU");
    snprintf(out, cap, "GPU, %s (%d in use)", name, n);
}
