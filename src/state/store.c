/* The durable state store (see store.h for the file format and the crash-safety argument).
 *
 * Every file operation goes through the directory's descriptor (openat, renameat, ...), taken
 * once at open: the store keeps working on the same directory even if the process changes
 * its working directory, and the temp and lock files are certain to sit beside the key. */
#include "state/store.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h> /* renameat */
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/ct.h"
#include "hash/hash.h"

#ifndef NAME_MAX
#define NAME_MAX 255
#endif

static const uint8_t store_magic[8] = {'H', 'B', 'S', 'S', 'T', 'A', 'T', 'E'};

struct hbs_store {
    int dirfd;
    int lockfd;
    int flags;
    char *name; /* the key file, relative to dirfd */
    char *tmp;  /* name.tmp */
    uint32_t scheme;
    uint64_t next;
    uint8_t *payload;
    size_t len;
};

/* ---- test-only fault injection ------------------------------------------------------------ */

static atomic_uint fault_step; /* 0: off */
static atomic_uint fault_ops;  /* fallible operations since the last hbs_store_test_fail_at */

unsigned hbs_store_test_fail_at(unsigned step)
{
    unsigned ran = atomic_exchange(&fault_ops, 0u);
    atomic_store(&fault_step, step);
    return ran;
}

static atomic_uint hold_ms; /* 0: off */

unsigned hbs_store_test_hold(unsigned ms) { return atomic_exchange(&hold_ms, ms); }

/* Counts one fallible operation; 1 if it is the one that must fail. The counter only grows,
 * so a chosen step fails exactly once. */
static int fault_now(void)
{
    unsigned n = atomic_fetch_add(&fault_ops, 1u) + 1u;
    unsigned k = atomic_load(&fault_step);
    return k != 0 && n == k;
}

/* ---- byte order --------------------------------------------------------------------------- */

static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 3; i >= 0; i--, v >>= 8)
        p[i] = (uint8_t)v;
}

static void put64(uint8_t *p, uint64_t v)
{
    for (int i = 7; i >= 0; i--, v >>= 8)
        p[i] = (uint8_t)v;
}

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint64_t get64(const uint8_t *p)
{
    return (uint64_t)get32(p) << 32 | get32(p + 4);
}

/* ---- the file image ----------------------------------------------------------------------- */

size_t hbs_store_encoded_bytes(size_t len)
{
    return HBS_STORE_HEADER_BYTES + len + HBS_STORE_CHECKSUM_BYTES;
}

void hbs_store_encode(uint8_t *out, uint32_t scheme, uint64_t next, const uint8_t *payload,
                      size_t len)
{
    memcpy(out, store_magic, sizeof store_magic);
    put32(out + 8, HBS_STORE_FORMAT_VERSION);
    put32(out + 12, scheme);
    put64(out + 16, next);
    put64(out + 24, (uint64_t)len);
    if (len)
        memcpy(out + HBS_STORE_HEADER_BYTES, payload, len);
    hbs_sha256(out + HBS_STORE_HEADER_BYTES + len, out, HBS_STORE_HEADER_BYTES + len);
}

int hbs_store_parse(const uint8_t *in, size_t inlen, uint32_t *scheme, uint64_t *next,
                    const uint8_t **payload, size_t *len)
{
    const size_t fixed = HBS_STORE_HEADER_BYTES + HBS_STORE_CHECKSUM_BYTES;
    uint8_t sum[32];
    *scheme = 0;
    *next = 0;
    *payload = NULL;
    *len = 0;
    if (!in || inlen < fixed || memcmp(in, store_magic, sizeof store_magic) != 0)
        return HBS_ERR_STATE;
    if (get32(in + 8) != HBS_STORE_FORMAT_VERSION)
        return HBS_ERR_STATE;
    uint64_t l = get64(in + 24);
    if (l > HBS_STORE_MAX_PAYLOAD || l != (uint64_t)(inlen - fixed))
        return HBS_ERR_STATE;
    size_t body = HBS_STORE_HEADER_BYTES + (size_t)l;
    hbs_sha256(sum, in, body);
    if (hbs_ct_memneq(sum, in + body, sizeof sum))
        return HBS_ERR_STATE;
    *scheme = get32(in + 12);
    *next = get64(in + 16);
    *payload = in + HBS_STORE_HEADER_BYTES;
    *len = (size_t)l;
    return HBS_OK;
}

/* A copy of an image, wiped on free: the payload is a secret key. */
static uint8_t *encode_new(uint32_t scheme, uint64_t next, const uint8_t *payload, size_t len,
                           size_t *outlen)
{
    *outlen = hbs_store_encoded_bytes(len);
    uint8_t *img = malloc(*outlen);
    if (img)
        hbs_store_encode(img, scheme, next, payload, len);
    return img;
}

static void wipe_free(void *p, size_t len)
{
    if (p) {
        hbs_memzero(p, len);
        free(p);
    }
}

/* ---- file operations (each one a fault-injection step) ----------------------------------- */

static int write_all(int fd, const uint8_t *p, size_t n)
{
    if (fault_now()) {
        /* A full disk usually takes part of the data first. */
        if (write(fd, p, n / 2) < 0) {
            /* nothing more to do: the failure is being simulated anyway */
        }
        errno = ENOSPC;
        return -1;
    }
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* fsync that reaches the medium where the platform needs more than fsync (macOS). */
static int sync_fd(int fd, int nosync)
{
    if (fault_now()) {
        errno = EIO;
        return -1;
    }
    if (nosync)
        return 0;
#ifdef F_FULLFSYNC
    if (fcntl(fd, F_FULLFSYNC) == 0)
        return 0;
#endif
    while (fsync(fd) != 0)
        if (errno != EINTR)
            return -1;
    return 0;
}

/* close() can report a deferred write error (NFS); it counts as a failed write. */
static int close_checked(int fd)
{
    int r = close(fd);
    if (fault_now()) {
        errno = EIO;
        return -1;
    }
    return r == 0 || errno == EINTR ? 0 : -1;
}

static int create_excl(int dirfd, const char *name)
{
    if (fault_now()) {
        errno = EIO;
        return -1;
    }
    int fd;
    do
        fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    while (fd < 0 && errno == EINTR);
    return fd;
}

static int rename_in(int dirfd, const char *from, const char *to)
{
    if (fault_now()) {
        errno = EIO;
        return -1;
    }
    return renameat(dirfd, from, dirfd, to);
}

static int link_in(int dirfd, const char *from, const char *to)
{
    if (fault_now()) {
        errno = EIO;
        return -1;
    }
    return linkat(dirfd, from, dirfd, to, 0);
}

/* Removes a name, keeping errno for the caller's error report. */
static void unlink_quiet(int dirfd, const char *name)
{
    int e = errno;
    (void)unlinkat(dirfd, name, 0);
    errno = e;
}

/* Writes img to a fresh temp file and makes it durable; on failure no temp file is left. */
static int write_temp(int dirfd, const char *tmp, const uint8_t *img, size_t n, int nosync)
{
    (void)unlinkat(dirfd, tmp, 0); /* a crashed commit's leftover (we hold the lock) */
    int fd = create_excl(dirfd, tmp);
    if (fd < 0)
        return -1;
    if (write_all(fd, img, n) != 0 || sync_fd(fd, nosync) != 0) {
        int e = errno;
        (void)close(fd);
        errno = e;
        unlink_quiet(dirfd, tmp);
        return -1;
    }
    if (close_checked(fd) != 0) {
        unlink_quiet(dirfd, tmp);
        return -1;
    }
    return 0;
}

/* Temp file, fsync, rename over name, fsync the directory. Returns 0, REPLACE_UNTOUCHED
 * (failed before the rename: the file is as it was) or REPLACE_RENAMED (the directory fsync
 * failed after the rename: the new contents are in place but maybe not durable). */
enum { REPLACE_UNTOUCHED = 1, REPLACE_RENAMED = 2 };

static int replace_file(int dirfd, const char *tmp, const char *name, const uint8_t *img,
                        size_t n, int nosync)
{
    if (write_temp(dirfd, tmp, img, n, nosync) != 0)
        return REPLACE_UNTOUCHED;
    const unsigned hold = atomic_load(&hold_ms);
    if (hold) { /* (tests: a slow disk, the new state not yet in place) */
        struct timespec t = {(time_t)(hold / 1000), (long)(hold % 1000) * 1000000L};
        while (nanosleep(&t, &t) != 0 && errno == EINTR) {
        }
    }
    if (rename_in(dirfd, tmp, name) != 0) {
        unlink_quiet(dirfd, tmp);
        return REPLACE_UNTOUCHED;
    }
    return sync_fd(dirfd, nosync) != 0 ? REPLACE_RENAMED : 0;
}

/* ---- paths and locking -------------------------------------------------------------------- */

typedef struct {
    int dirfd;
    char *name, *tmp, *lock;
} store_names;

static void names_free(store_names *nm)
{
    if (nm->dirfd >= 0)
        (void)close(nm->dirfd);
    free(nm->name);
    free(nm->tmp);
    free(nm->lock);
    nm->dirfd = -1;
    nm->name = nm->tmp = nm->lock = NULL;
}

static char *concat(const char *a, size_t alen, const char *b)
{
    size_t blen = strlen(b);
    char *s = malloc(alen + blen + 1);
    if (s) {
        memcpy(s, a, alen);
        memcpy(s + alen, b, blen + 1);
    }
    return s;
}

/* Splits path into its directory (opened) and the names of the key, temp and lock files. */
static int names_init(store_names *nm, const char *path)
{
    nm->dirfd = -1;
    nm->name = nm->tmp = nm->lock = NULL;
    if (!path || !*path)
        return HBS_ERR_INVALID_ARGUMENT;
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    size_t blen = strlen(base);
    if (blen == 0 || blen + 5 > NAME_MAX || strcmp(base, ".") == 0 || strcmp(base, "..") == 0)
        return HBS_ERR_INVALID_ARGUMENT;
    /* K.tmp is removed as a stale temp file and K.lock is K's lock: neither may be a key. */
    if ((blen >= 4 && strcmp(base + blen - 4, ".tmp") == 0) ||
        (blen >= 5 && strcmp(base + blen - 5, ".lock") == 0))
        return HBS_ERR_INVALID_ARGUMENT;
    char *dir = slash ? concat(path, slash == path ? 1 : (size_t)(slash - path), "")
                      : concat(".", 1, "");
    nm->name = concat(base, blen, "");
    nm->tmp = concat(base, blen, ".tmp");
    nm->lock = concat(base, blen, ".lock");
    if (!dir || !nm->name || !nm->tmp || !nm->lock) {
        free(dir);
        names_free(nm);
        return HBS_ERR_NO_MEMORY;
    }
    do
        nm->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    while (nm->dirfd < 0 && errno == EINTR);
    int e = errno;
    free(dir);
    if (nm->dirfd < 0) {
        names_free(nm);
        errno = e;
        return HBS_ERR_IO;
    }
    return HBS_OK;
}

/* Takes the exclusive lock on name.lock; returns its descriptor or a negative HBS_ERR_*.
 * flock belongs to the open file description, so each call (thread) competes on its own.
 * If the lock file was replaced between our open and our lock, the lock is on a stale inode
 * that another signer would not see: start again. */
static int take_lock(int dirfd, const char *lock, int wait)
{
    for (;;) {
        int fd = openat(dirfd, lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd < 0 && (errno == EACCES || errno == EROFS || errno == EPERM))
            fd = openat(dirfd, lock, O_RDONLY | O_CLOEXEC | O_NOFOLLOW); /* read-only dir */
        if (fd < 0) {
            if (errno == EINTR)
                continue;
            return HBS_ERR_IO;
        }
        int r;
        do
            r = flock(fd, LOCK_EX | (wait ? 0 : LOCK_NB));
        while (r != 0 && errno == EINTR);
        if (r != 0) {
            int e = errno;
            (void)close(fd);
            errno = e;
            return e == EWOULDBLOCK ? HBS_ERR_BUSY : HBS_ERR_IO;
        }
        struct stat held, named;
        if (fstat(fd, &held) != 0) {
            int e = errno;
            (void)close(fd);
            errno = e;
            return HBS_ERR_IO;
        }
        if (fstatat(dirfd, lock, &named, AT_SYMLINK_NOFOLLOW) == 0 &&
            held.st_dev == named.st_dev && held.st_ino == named.st_ino)
            return fd;
        (void)close(fd);
    }
}

static void release_lock(int fd)
{
    if (fd >= 0) {
        (void)flock(fd, LOCK_UN);
        (void)close(fd);
    }
}

/* ---- create ------------------------------------------------------------------------------- */

/* Puts the durable temp file in place under name without replacing an existing file: a hard
 * link fails atomically with EEXIST. Filesystems without hard links fall back to a check and
 * a rename, which is safe against other hbs signers because we hold the lock. */
static int place_new(int dirfd, const char *tmp, const char *name)
{
    if (link_in(dirfd, tmp, name) == 0) {
        (void)unlinkat(dirfd, tmp, 0);
        return 0;
    }
    if (errno == EPERM || errno == EOPNOTSUPP || errno == ENOTSUP || errno == ENOSYS ||
        errno == EMLINK) {
        struct stat st;
        if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
            errno = EEXIST;
            return -1;
        }
        if (errno == ENOENT)
            return rename_in(dirfd, tmp, name);
    }
    return -1;
}

int hbs_store_create(const char *path, uint32_t scheme, uint64_t next, const uint8_t *payload,
                     size_t len)
{
    if ((!payload && len) || len > HBS_STORE_MAX_PAYLOAD)
        return HBS_ERR_INVALID_ARGUMENT;
    store_names nm;
    int err = names_init(&nm, path);
    if (err)
        return err;
    /* Fail at once rather than wait for the lock a signer of an existing key may hold for
     * long; the link below is what makes "new file only" exact. */
    struct stat st;
    if (fstatat(nm.dirfd, nm.name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
        names_free(&nm);
        errno = EEXIST;
        return HBS_ERR_IO;
    }
    int lockfd = take_lock(nm.dirfd, nm.lock, 1);
    if (lockfd < 0) {
        int e = errno;
        names_free(&nm);
        errno = e;
        return lockfd;
    }
    size_t n;
    uint8_t *img = encode_new(scheme, next, payload, len, &n);
    if (!img) {
        err = HBS_ERR_NO_MEMORY;
    } else if (write_temp(nm.dirfd, nm.tmp, img, n, 0) != 0) {
        err = HBS_ERR_IO;
    } else if (place_new(nm.dirfd, nm.tmp, nm.name) != 0) {
        unlink_quiet(nm.dirfd, nm.tmp);
        err = HBS_ERR_IO;
    } else if (sync_fd(nm.dirfd, 0) != 0) {
        /* Not known to be durable: take it back rather than report a key that may vanish. */
        unlink_quiet(nm.dirfd, nm.name);
        err = HBS_ERR_IO;
    }
    int e = errno;
    wipe_free(img, n);
    /* No key, no lock file. Removing it while we hold it is safe: a signer waiting on it
     * finds, once it has it, that the name no longer leads to it, and starts again. */
    if (err && fstatat(nm.dirfd, nm.name, &st, AT_SYMLINK_NOFOLLOW) != 0 && errno == ENOENT)
        (void)unlinkat(nm.dirfd, nm.lock, 0);
    release_lock(lockfd);
    names_free(&nm);
    errno = e;
    return err;
}

/* ---- open / commit / close ---------------------------------------------------------------- */

static int read_exact(int fd, uint8_t *p, size_t n)
{
    while (n) {
        ssize_t r = read(fd, p, n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return HBS_ERR_IO;
        if (r == 0)
            return HBS_ERR_STATE; /* shorter than fstat said */
        p += r;
        n -= (size_t)r;
    }
    return HBS_OK;
}

/* Reads and checks the key file into s (scheme, next, a private copy of the payload). */
static int load(hbs_store *s)
{
    int fd;
    do
        fd = openat(s->dirfd, s->name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    while (fd < 0 && errno == EINTR);
    if (fd < 0)
        return HBS_ERR_IO;
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        (void)close(fd);
        errno = e;
        return HBS_ERR_IO;
    }
    const uint64_t most = hbs_store_encoded_bytes(HBS_STORE_MAX_PAYLOAD);
    if (!S_ISREG(st.st_mode) || st.st_size < 0 || (uint64_t)st.st_size > most) {
        (void)close(fd);
        return HBS_ERR_STATE;
    }
    size_t n = (size_t)st.st_size;
    uint8_t *img = malloc(n ? n : 1);
    if (!img) {
        (void)close(fd);
        return HBS_ERR_NO_MEMORY;
    }
    int err = read_exact(fd, img, n);
    int e = errno;
    (void)close(fd);
    const uint8_t *payload = NULL;
    if (!err)
        err = hbs_store_parse(img, n, &s->scheme, &s->next, &payload, &s->len);
    if (!err) {
        s->payload = malloc(s->len ? s->len : 1);
        if (!s->payload)
            err = HBS_ERR_NO_MEMORY;
        else if (s->len)
            memcpy(s->payload, payload, s->len);
    }
    wipe_free(img, n);
    errno = e;
    return err;
}

void hbs_store_close(hbs_store *s)
{
    if (!s)
        return;
    release_lock(s->lockfd);
    if (s->dirfd >= 0)
        (void)close(s->dirfd);
    wipe_free(s->payload, s->len);
    free(s->name);
    free(s->tmp);
    hbs_memzero(s, sizeof *s);
    free(s);
}

int hbs_store_open(hbs_store **out, const char *path, int flags)
{
    if (!out)
        return HBS_ERR_INVALID_ARGUMENT;
    *out = NULL;
    if (flags & ~(HBS_STORE_WAIT | HBS_STORE_NO_SYNC))
        return HBS_ERR_INVALID_ARGUMENT;
    store_names nm;
    int err = names_init(&nm, path);
    if (err)
        return err;
    /* No key, no lock file: a mistyped path must not leave litter. */
    struct stat st;
    if (fstatat(nm.dirfd, nm.name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
        int e = errno;
        names_free(&nm);
        errno = e;
        return HBS_ERR_IO;
    }
    hbs_store *s = calloc(1, sizeof *s);
    if (!s) {
        names_free(&nm);
        return HBS_ERR_NO_MEMORY;
    }
    s->lockfd = -1;
    s->flags = flags;
    s->dirfd = nm.dirfd;
    s->name = nm.name;
    s->tmp = nm.tmp;
    int lockfd = take_lock(s->dirfd, nm.lock, flags & HBS_STORE_WAIT);
    int e = errno;
    free(nm.lock);
    if (lockfd < 0) {
        hbs_store_close(s);
        errno = e;
        return lockfd;
    }
    s->lockfd = lockfd;
    /* Read only now, under the lock: a previous holder may have advanced the file. */
    (void)unlinkat(s->dirfd, s->tmp, 0); /* a crashed commit's leftover; fails harmlessly */
    err = load(s);
    if (err) {
        e = errno;
        hbs_store_close(s);
        errno = e;
        return err;
    }
    *out = s;
    return HBS_OK;
}

uint32_t hbs_store_scheme(const hbs_store *s) { return s ? s->scheme : 0; }

uint64_t hbs_store_next(const hbs_store *s) { return s ? s->next : 0; }

const uint8_t *hbs_store_payload(const hbs_store *s, size_t *len)
{
    if (len)
        *len = s ? s->len : 0;
    return s ? s->payload : NULL;
}

/* After a failed directory fsync the file holds the new state, perhaps not durably. Putting
 * the old one back keeps "a failed commit changes nothing"; if that fails as well, the file
 * keeps a next at least the old one, which is still safe (the caller released nothing). */
static void roll_back(hbs_store *s, int nosync)
{
    int e = errno;
    size_t n;
    uint8_t *img = encode_new(s->scheme, s->next, s->payload, s->len, &n);
    if (img) {
        (void)replace_file(s->dirfd, s->tmp, s->name, img, n, nosync);
        wipe_free(img, n);
    }
    errno = e;
}

int hbs_store_commit(hbs_store *s, uint64_t next, const uint8_t *payload, size_t len)
{
    if (!s || (!payload && len) || len > HBS_STORE_MAX_PAYLOAD)
        return HBS_ERR_INVALID_ARGUMENT;
    if (next < s->next)
        return HBS_ERR_STATE;
    int nosync = (s->flags & HBS_STORE_NO_SYNC) != 0;
    /* What can fail for lack of memory is done before the file is touched. */
    uint8_t *copy = malloc(len ? len : 1);
    size_t n = 0;
    uint8_t *img = copy ? encode_new(s->scheme, next, payload, len, &n) : NULL;
    if (!img) {
        free(copy);
        return HBS_ERR_NO_MEMORY;
    }
    if (len)
        memcpy(copy, payload, len);
    int r = replace_file(s->dirfd, s->tmp, s->name, img, n, nosync);
    int e = errno;
    wipe_free(img, n);
    if (r != 0) {
        if (r == REPLACE_RENAMED)
            roll_back(s, nosync);
        wipe_free(copy, len);
        errno = e;
        return HBS_ERR_IO;
    }
    wipe_free(s->payload, s->len);
    s->payload = copy;
    s->len = len;
    s->next = next;
    return HBS_OK;
}
