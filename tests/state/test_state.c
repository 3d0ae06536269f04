/* Tests of the durable state store (src/state/store.c).
 *
 * 1. Round trips: create, open, commit, reopen; the file bytes against the documented format
 *    built here by hand; argument errors; a new file never replaces an old one.
 * 2. next never goes back.
 * 3. Corrupt files: every bit flipped, every truncation, extensions, well-formed checksums over
 *    bad headers, a directory or a symlink in the key's place: HBS_ERR_STATE (or IO), and the
 *    file is left byte for byte as it was.
 * 4. Locking: the lock holds across the rename of a commit; two threads, two processes (each
 *    with two threads) increment next a thousand times and every value is handed out once.
 * 5. Write failures: an injected failure at every step of commit and create, a read-only
 *    directory (with privileges dropped when running as root), RLIMIT_FSIZE (EFBIG): the
 *    call fails with HBS_ERR_IO, the old file is intact and no temp file is left.
 * 6. A crash test: a child reserves indices and logs each one it uses; it is killed with
 *    SIGKILL at random moments HBS_CRASH_ROUNDS times (default 300); the file always opens,
 *    no index is logged twice, and every logged index is below the stored next. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hash/hash.h"
#include "state/store.h"
#include "test.h"

/* ---- helpers ----------------------------------------------------------------------------- */

typedef struct {
    char dir[512];
    char key[600];
    char lock[620];
    char tmp[620];
} paths;

/* A fresh directory for one test (unique across the backend passes of the runner). */
static void fresh(paths *p, const char *tag)
{
    static unsigned counter;
    snprintf(p->dir, sizeof p->dir, "%s/state-%s-%u", test_tmpdir(), tag, counter++);
    CHECK_MSG(mkdir(p->dir, 0700) == 0, "mkdir %s: %s", p->dir, strerror(errno));
    snprintf(p->key, sizeof p->key, "%s/key", p->dir);
    snprintf(p->lock, sizeof p->lock, "%s/key.lock", p->dir);
    snprintf(p->tmp, sizeof p->tmp, "%s/key.tmp", p->dir);
}

/* A payload whose first 8 bytes hold tag (so a reader can tell which commit wrote it), the
 * rest derived from it. Local state only: the lock tests call it from several threads. */
static void fill_payload(uint8_t *p, size_t len, uint64_t tag)
{
    uint64_t x = tag * 0x9e3779b97f4a7c15ULL + 1;
    for (size_t i = 0; i < len; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        uint8_t b = (uint8_t)(x >> 24);
        if (i < 8)
            b = (uint8_t)(tag >> (8 * i));
        p[i] = b;
    }
}

static uint64_t payload_tag(const uint8_t *p, size_t len)
{
    uint64_t t = 0;
    for (size_t i = 0; i < 8 && i < len; i++)
        t |= (uint64_t)p[i] << (8 * i);
    return t;
}

static int write_file(const char *path, const uint8_t *buf, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t w = len ? fwrite(buf, 1, len, f) : 0;
    return fclose(f) == 0 && w == len ? 0 : -1;
}

static int same_file(const char *path, const uint8_t *buf, size_t len)
{
    size_t n = 0;
    uint8_t *cur = test_read_file(path, &n);
    int same = cur && n == len && (len == 0 || memcmp(cur, buf, len) == 0);
    free(cur);
    return same;
}

/* Entries of a directory other than . and ..; *temps counts names ending in ".tmp". */
static int dir_entries(const char *dir, int *temps)
{
    DIR *d = opendir(dir);
    int n = 0;
    *temps = 0;
    if (!d)
        return -1;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        size_t l = strlen(e->d_name);
        if (l >= 4 && strcmp(e->d_name + l - 4, ".tmp") == 0)
            (*temps)++;
        n++;
    }
    closedir(d);
    return n;
}

static int file_exists(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

/* Runs fn in a child process; CHECK failures there print as usual and make the child exit 1.
 * Returns the child's wait status. */
static int in_child(void (*fn)(void *), void *arg)
{
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        int before = test_failed();
        fn(arg);
        _exit(test_failed() > before ? 1 : 0);
    }
    int status = -1;
    if (pid < 0 || waitpid(pid, &status, 0) != pid)
        return -1;
    return status;
}

static int exited_ok(int status) { return WIFEXITED(status) && WEXITSTATUS(status) == 0; }

/* The file image as store.h documents it, built here independently of the store's encoder. */
static size_t expected_image(uint8_t *out, uint32_t scheme, uint64_t next, const uint8_t *pl,
                             size_t len)
{
    memcpy(out, "HBSSTATE", 8);
    const uint64_t fields[4] = {1, scheme, next, len};
    const int widths[4] = {4, 4, 8, 8};
    size_t at = 8;
    for (int f = 0; f < 4; f++)
        for (int b = widths[f] - 1; b >= 0; b--)
            out[at++] = (uint8_t)(fields[f] >> (8 * b));
    memcpy(out + at, pl, len);
    hbs_sha256(out + at + len, out, at + len);
    return at + len + 32;
}

/* ---- 1. round trips ----------------------------------------------------------------------- */

static void test_round_trip(void)
{
    paths p;
    fresh(&p, "rt");
    static uint8_t a[1000], b[2000], img[2100];
    fill_payload(a, sizeof a, 1);
    fill_payload(b, sizeof b, 2);

    CHECK_INT(hbs_store_create(p.key, 7, 5, a, sizeof a), HBS_OK);
    struct stat st;
    CHECK(stat(p.key, &st) == 0 && (st.st_mode & 0777) == 0600);
    CHECK(stat(p.lock, &st) == 0 && (st.st_mode & 0777) == 0600);
    size_t n = expected_image(img, 7, 5, a, sizeof a);
    CHECK_MSG(same_file(p.key, img, n), "new file differs from the documented format");

    errno = 0;
    CHECK_INT(hbs_store_create(p.key, 7, 0, b, sizeof b), HBS_ERR_IO);
    CHECK_INT(errno, EEXIST);
    CHECK_MSG(same_file(p.key, img, n), "create replaced an existing key");

    hbs_store *s = NULL;
    size_t len = 0;
    CHECK_INT(hbs_store_open(&s, p.key, 0), HBS_OK);
    CHECK_INT(hbs_store_scheme(s), 7);
    CHECK_INT(hbs_store_next(s), 5);
    const uint8_t *pl = hbs_store_payload(s, &len);
    CHECK(len == sizeof a && memcmp(pl, a, len) == 0);

    CHECK_INT(hbs_store_commit(s, 9, b, sizeof b), HBS_OK);
    CHECK_INT(hbs_store_next(s), 9);
    pl = hbs_store_payload(s, &len);
    CHECK(len == sizeof b && memcmp(pl, b, len) == 0);
    n = expected_image(img, 7, 9, b, sizeof b);
    CHECK_MSG(same_file(p.key, img, n), "committed file differs from the documented format");
    CHECK_INT(hbs_store_commit(s, 9, b, sizeof b), HBS_OK); /* the same next is allowed */
    hbs_store_close(s);

    CHECK_INT(hbs_store_open(&s, p.key, HBS_STORE_WAIT), HBS_OK);
    CHECK_INT(hbs_store_next(s), 9);
    pl = hbs_store_payload(s, &len);
    CHECK(len == sizeof b && memcmp(pl, b, len) == 0);
    CHECK_INT(hbs_store_commit(s, 10, NULL, 0), HBS_OK); /* empty payloads are fine */
    CHECK_INT(hbs_store_commit(s, UINT64_MAX, a, 8), HBS_OK);
    hbs_store_close(s);
    CHECK_INT(hbs_store_open(&s, p.key, 0), HBS_OK);
    CHECK(hbs_store_next(s) == UINT64_MAX);
    pl = hbs_store_payload(s, &len);
    CHECK(len == 8 && memcmp(pl, a, 8) == 0);
    hbs_store_close(s);
    int temps;
    CHECK_INT(dir_entries(p.dir, &temps), 2); /* key and key.lock */
    CHECK_INT(temps, 0);

    /* A relative path works too, and the store keeps to its directory after a chdir. */
    char cwd[1024];
    CHECK(getcwd(cwd, sizeof cwd) != NULL);
    CHECK(chdir(p.dir) == 0);
    CHECK_INT(hbs_store_open(&s, "key", 0), HBS_OK);
    CHECK(chdir("/") == 0);
    CHECK_INT(hbs_store_commit(s, UINT64_MAX, b, 16), HBS_OK);
    hbs_store_close(s);
    CHECK(chdir(cwd) == 0);
    CHECK_INT(hbs_store_open(&s, p.key, 0), HBS_OK);
    pl = hbs_store_payload(s, &len);
    CHECK(len == 16 && memcmp(pl, b, 16) == 0);
    hbs_store_close(s);

    /* Misuse. A missing key leaves no lock file behind. */
    char missing[700];
    snprintf(missing, sizeof missing, "%s/nothing", p.dir);
    CHECK_INT(hbs_store_open(&s, missing, 0), HBS_ERR_IO);
    CHECK(s == NULL);
    CHECK_INT(dir_entries(p.dir, &temps), 2);
    CHECK_INT(hbs_store_open(&s, "", 0), HBS_ERR_INVALID_ARGUMENT);
    CHECK_INT(hbs_store_open(&s, NULL, 0), HBS_ERR_INVALID_ARGUMENT);
    CHECK_INT(hbs_store_open(NULL, p.key, 0), HBS_ERR_INVALID_ARGUMENT);
    CHECK_INT(hbs_store_open(&s, p.dir, 0) < 0, 1); /* "dir" names a directory: not a store */
    char slash[700];
    snprintf(slash, sizeof slash, "%s/", p.dir);
    CHECK_INT(hbs_store_open(&s, slash, 0), HBS_ERR_INVALID_ARGUMENT);
    CHECK_INT(hbs_store_open(&s, p.key, 4), HBS_ERR_INVALID_ARGUMENT);
    CHECK_INT(hbs_store_open(&s, p.lock, 0), HBS_ERR_INVALID_ARGUMENT);
    CHECK_INT(hbs_store_open(&s, p.tmp, 0), HBS_ERR_INVALID_ARGUMENT);
    CHECK_INT(hbs_store_create(p.tmp, 1, 0, a, 8), HBS_ERR_INVALID_ARGUMENT);
    char dots[700];
    snprintf(dots, sizeof dots, "%s/..", p.dir);
    CHECK_INT(hbs_store_create(dots, 1, 0, a, 8), HBS_ERR_INVALID_ARGUMENT);
    CHECK_INT(hbs_store_create(missing, 1, 0, NULL, 5), HBS_ERR_INVALID_ARGUMENT);
    CHECK_INT(hbs_store_create(missing, 1, 0, a, HBS_STORE_MAX_PAYLOAD + 1),
              HBS_ERR_INVALID_ARGUMENT);
    CHECK_INT(hbs_store_open(&s, p.key, 0), HBS_OK);
    CHECK_INT(hbs_store_commit(s, UINT64_MAX, NULL, 3), HBS_ERR_INVALID_ARGUMENT);
    CHECK_INT(hbs_store_commit(NULL, 1, a, 3), HBS_ERR_INVALID_ARGUMENT);
    hbs_store_close(s);
    hbs_store_close(NULL);
}

/* ---- 2. next never goes back -------------------------------------------------------------- */

static void test_never_back(void)
{
    paths p;
    fresh(&p, "back");
    uint8_t a[64], b[64];
    fill_payload(a, sizeof a, 100);
    fill_payload(b, sizeof b, 99);
    CHECK_INT(hbs_store_create(p.key, 1, 100, a, sizeof a), HBS_OK);
    size_t n = 0, len;
    uint8_t *before = test_read_file(p.key, &n);
    hbs_store *s;
    CHECK_INT(hbs_store_open(&s, p.key, 0), HBS_OK);
    CHECK_INT(hbs_store_commit(s, 99, b, sizeof b), HBS_ERR_STATE);
    CHECK_INT(hbs_store_commit(s, 0, b, sizeof b), HBS_ERR_STATE);
    CHECK_INT(hbs_store_next(s), 100);
    const uint8_t *pl = hbs_store_payload(s, &len);
    CHECK(len == sizeof a && memcmp(pl, a, len) == 0);
    CHECK(before && same_file(p.key, before, n));
    CHECK_INT(hbs_store_commit(s, 150, a, sizeof a), HBS_OK);
    CHECK_INT(hbs_store_commit(s, 149, b, sizeof b), HBS_ERR_STATE);
    hbs_store_close(s);
    CHECK_INT(hbs_store_open(&s, p.key, 0), HBS_OK);
    CHECK_INT(hbs_store_next(s), 150);
    CHECK_INT(hbs_store_commit(s, 120, b, sizeof b), HBS_ERR_STATE);
    hbs_store_close(s);
    free(before);
}

/* ---- 3. corrupt files --------------------------------------------------------------------- */

/* Writes img as the key file, opens it: must be rejected with want, the file left as it was. */
static int rejects(const paths *p, const uint8_t *img, size_t n, int want)
{
    if (write_file(p->key, img, n) != 0)
        return 0;
    hbs_store *s = (hbs_store *)1;
    int r = hbs_store_open(&s, p->key, 0);
    int ok = r == want && s == NULL && same_file(p->key, img, n);
    if (r == HBS_OK)
        hbs_store_close(s);
    return ok;
}

static void test_corrupt_files(void)
{
    paths p;
    fresh(&p, "corrupt");
    enum { PL = 100 };
    uint8_t pl[PL], img[PL + 64], bad[PL + 64 + 1000];
    fill_payload(pl, PL, 42);
    CHECK_INT(hbs_store_create(p.key, 2, 42, pl, PL), HBS_OK);
    size_t n = expected_image(img, 2, 42, pl, PL);
    CHECK(same_file(p.key, img, n));

    /* Every bit on the first backend pass; one bit per byte (rotating) on the others. */
    int all_bits = test_full_pass();
    size_t flips = 0, cuts = 0;
    for (size_t i = 0; i < n; i++)
        for (int bit = all_bits ? 0 : (int)(i % 8); bit < (all_bits ? 8 : (int)(i % 8) + 1);
             bit++) {
            memcpy(bad, img, n);
            bad[i] ^= (uint8_t)(1u << bit);
            CHECK_MSG(rejects(&p, bad, n, HBS_ERR_STATE), "flip of bit %d of byte %zu", bit, i);
            flips++;
        }
    for (size_t cut = 0; cut < n; cut++, cuts++)
        CHECK_MSG(rejects(&p, img, cut, HBS_ERR_STATE), "truncation to %zu bytes", cut);
    memcpy(bad, img, n);
    memset(bad + n, 0, 1000);
    CHECK(rejects(&p, bad, n + 1, HBS_ERR_STATE));
    bad[n] = 0xff;
    CHECK(rejects(&p, bad, n + 1, HBS_ERR_STATE));
    CHECK(rejects(&p, bad, n + 1000, HBS_ERR_STATE));

    /* Checksums that match bad headers: only the header checks can catch these. */
    struct {
        size_t at;
        uint8_t value;
    } edits[] = {{0, 'h'}, {7, 'X'}, {11, 0}, {11, 2}, {8, 0x80}, {31, PL + 1}, {31, PL - 1},
                 {24, 0x80}, {27, 0x10}, {28, 0x10}};
    for (size_t e = 0; e < sizeof edits / sizeof edits[0]; e++) {
        memcpy(bad, img, n);
        bad[edits[e].at] = edits[e].value;
        hbs_sha256(bad + 32 + PL, bad, 32 + PL);
        CHECK_MSG(rejects(&p, bad, n, HBS_ERR_STATE), "header edit %zu", e);
    }
    /* A length field that matches a longer file, but with the checksum at the old place. */
    memcpy(bad, img, n);
    bad[31] = PL + 1;
    hbs_sha256(bad + 32 + PL, bad, 32 + PL);
    bad[n] = 0;
    CHECK(rejects(&p, bad, n + 1, HBS_ERR_STATE));
    /* The same edits through the parser directly. */
    uint32_t sc;
    uint64_t nx;
    const uint8_t *pp;
    size_t pl_len;
    CHECK_INT(hbs_store_parse(img, n, &sc, &nx, &pp, &pl_len), HBS_OK);
    CHECK(sc == 2 && nx == 42 && pl_len == PL && pp == img + 32);
    CHECK_INT(hbs_store_parse(NULL, 0, &sc, &nx, &pp, &pl_len), HBS_ERR_STATE);
    CHECK(pp == NULL && pl_len == 0 && nx == 0 && sc == 0);

    /* The right image is accepted again: the loop above left nothing behind. */
    CHECK(write_file(p.key, img, n) == 0);
    hbs_store *s;
    CHECK_INT(hbs_store_open(&s, p.key, 0), HBS_OK);
    CHECK_INT(hbs_store_next(s), 42);
    hbs_store_close(s);

    /* Not a regular file in the key's place. */
    CHECK(unlink(p.key) == 0 && mkdir(p.key, 0700) == 0);
    CHECK_INT(hbs_store_open(&s, p.key, 0), HBS_ERR_STATE);
    CHECK(rmdir(p.key) == 0);
    char target[700];
    snprintf(target, sizeof target, "%s/elsewhere", p.dir);
    CHECK(write_file(target, img, n) == 0 && symlink(target, p.key) == 0);
    CHECK_INT(hbs_store_open(&s, p.key, 0), HBS_ERR_IO); /* symlinks are refused (ELOOP) */
    test_note("%zu bit flips, %zu truncations, 13 other forms rejected", flips, cuts);
}

/* ---- 4. locking --------------------------------------------------------------------------- */

static void busy_child(void *arg)
{
    hbs_store *s;
    CHECK_INT(hbs_store_open(&s, (const char *)arg, 0), HBS_ERR_BUSY);
}

static void test_lock_across_rename(void)
{
    paths p;
    fresh(&p, "busy");
    uint8_t a[32];
    fill_payload(a, sizeof a, 0);
    CHECK_INT(hbs_store_create(p.key, 1, 0, a, sizeof a), HBS_OK);
    hbs_store *s, *t;
    CHECK_INT(hbs_store_open(&s, p.key, 0), HBS_OK);
    CHECK_INT(hbs_store_open(&t, p.key, 0), HBS_ERR_BUSY);
    CHECK(t == NULL);
    CHECK(exited_ok(in_child(busy_child, p.key)));
    /* A lock on the key file itself would be left on the old inode by this rename. */
    CHECK_INT(hbs_store_commit(s, 3, a, sizeof a), HBS_OK);
    CHECK_INT(hbs_store_open(&t, p.key, 0), HBS_ERR_BUSY);
    CHECK(exited_ok(in_child(busy_child, p.key)));
    CHECK_INT(hbs_store_commit(s, 4, a, sizeof a), HBS_OK);
    hbs_store_close(s);
    CHECK_INT(hbs_store_open(&t, p.key, 0), HBS_OK);
    CHECK_INT(hbs_store_next(t), 4);
    hbs_store_close(t);
}

enum { INCREMENTS = 1000, START = 7 };

typedef struct {
    const char *path;
    int count;
    uint64_t *got; /* the values this worker handed out */
    int fd;        /* or, if >= 0, a pipe they go to */
    int errors;
} incr_job;

/* One signer: lock, read next, commit next+1 (the payload says which), unlock; repeat.
 * Without fsync: this is about serialisation (with fsync a loaded disk takes a minute), and
 * shorter turns make the signers collide more often. */
static void *incr_worker(void *arg)
{
    incr_job *j = arg;
    uint8_t pl[48];
    for (int i = 0; i < j->count; i++) {
        hbs_store *s;
        if (hbs_store_open(&s, j->path, HBS_STORE_WAIT | HBS_STORE_NO_SYNC) != HBS_OK) {
            j->errors++;
            continue;
        }
        size_t len;
        uint64_t v = hbs_store_next(s);
        const uint8_t *cur = hbs_store_payload(s, &len);
        if (len != sizeof pl || payload_tag(cur, len) != v)
            j->errors++; /* the payload must be the one written with this next */
        fill_payload(pl, sizeof pl, v + 1);
        if (hbs_store_commit(s, v + 1, pl, sizeof pl) != HBS_OK)
            j->errors++;
        hbs_store_close(s);
        if (j->fd >= 0) {
            if (write(j->fd, &v, sizeof v) != (ssize_t)sizeof v)
                j->errors++;
        } else {
            j->got[i] = v;
        }
    }
    return NULL;
}

static int run_threads(incr_job *jobs, int n)
{
    pthread_t th[4];
    int started = 0;
    for (; started < n; started++)
        if (pthread_create(&th[started], NULL, incr_worker, &jobs[started]) != 0)
            break;
    for (int i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    return started == n;
}

static int make_counter_key(const paths *p)
{
    uint8_t pl[48];
    fill_payload(pl, sizeof pl, START);
    return hbs_store_create(p->key, 1, START, pl, sizeof pl);
}

/* Every value START .. START+INCREMENTS-1 exactly once, and the file's next after them. */
static void check_handed_out(const paths *p, const uint64_t *v, size_t n)
{
    static uint8_t seen[INCREMENTS];
    memset(seen, 0, sizeof seen);
    size_t dups = 0, wild = 0;
    for (size_t i = 0; i < n; i++) {
        if (v[i] < START || v[i] >= START + INCREMENTS)
            wild++;
        else if (seen[v[i] - START]++)
            dups++;
    }
    CHECK_INT(n, INCREMENTS);
    CHECK_INT(dups, 0);
    CHECK_INT(wild, 0);
    hbs_store *s;
    CHECK_INT(hbs_store_open(&s, p->key, 0), HBS_OK);
    CHECK_INT(hbs_store_next(s), START + INCREMENTS);
    hbs_store_close(s);
}

static void test_lock_threads(void)
{
    paths p;
    fresh(&p, "threads");
    CHECK_INT(make_counter_key(&p), HBS_OK);
    static uint64_t got[INCREMENTS];
    incr_job jobs[2];
    for (int i = 0; i < 2; i++)
        jobs[i] = (incr_job){p.key, INCREMENTS / 2, got + i * (INCREMENTS / 2), -1, 0};
    CHECK(run_threads(jobs, 2));
    CHECK_INT(jobs[0].errors + jobs[1].errors, 0);
    check_handed_out(&p, got, INCREMENTS);
}

/* A child process of the process test: two threads, each a quarter of the increments. */
static void two_thread_child(void *arg)
{
    incr_job *tmpl = arg;
    incr_job jobs[2] = {*tmpl, *tmpl};
    CHECK(run_threads(jobs, 2));
    CHECK_INT(jobs[0].errors + jobs[1].errors, 0);
}

static void test_lock_processes(void)
{
    paths p;
    fresh(&p, "procs");
    CHECK_INT(make_counter_key(&p), HBS_OK);
    int fds[2];
    CHECK(pipe(fds) == 0); /* 8-byte writes to a pipe are atomic; 8000 bytes fit its buffer */
    incr_job tmpl = {p.key, INCREMENTS / 4, NULL, fds[1], 0};
    fflush(stdout);
    fflush(stderr);
    pid_t kids[2];
    for (int i = 0; i < 2; i++) {
        kids[i] = fork();
        if (kids[i] == 0) {
            close(fds[0]);
            int before = test_failed();
            two_thread_child(&tmpl);
            _exit(test_failed() > before ? 1 : 0);
        }
    }
    close(fds[1]);
    static uint64_t got[INCREMENTS + 1];
    size_t n = 0, have = 0;
    uint8_t *buf = (uint8_t *)got;
    for (;;) {
        ssize_t r = read(fds[0], buf + have, sizeof got - have);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        have += (size_t)r;
        if (have == sizeof got)
            break;
    }
    close(fds[0]);
    n = have / sizeof(uint64_t);
    for (int i = 0; i < 2; i++) {
        int status = -1;
        CHECK(kids[i] > 0 && waitpid(kids[i], &status, 0) == kids[i] && exited_ok(status));
    }
    check_handed_out(&p, got, n);
}

/* ---- 5. write failures -------------------------------------------------------------------- */

/* After a failed commit: s unchanged, the file exactly as before, no temp file. */
static void check_unchanged(const char *key, const char *tmp, hbs_store *s, uint64_t next,
                            const uint8_t *pl, size_t len, const uint8_t *img, size_t n,
                            const char *what)
{
    size_t l;
    const uint8_t *cur = hbs_store_payload(s, &l);
    CHECK_MSG(hbs_store_next(s) == next && l == len && memcmp(cur, pl, len) == 0,
              "%s: the store object changed", what);
    CHECK_MSG(same_file(key, img, n), "%s: the old file changed", what);
    CHECK_MSG(!file_exists(tmp), "%s: a temp file was left", what);
}

static void test_injected_failures(void)
{
    paths p;
    fresh(&p, "inject");
    uint8_t a[300], b[500], img[600];
    fill_payload(a, sizeof a, 10);
    fill_payload(b, sizeof b, 20);
    /* create: every step fails once in turn; nothing is left behind. */
    unsigned steps = 0;
    for (unsigned k = 1; k < 100; k++) {
        (void)hbs_store_test_fail_at(k);
        int r = hbs_store_create(p.key, 3, 10, a, sizeof a);
        unsigned ran = hbs_store_test_fail_at(0);
        if (r == HBS_OK) {
            CHECK_MSG(ran < k, "create succeeded although step %u failed", k);
            break;
        }
        steps = k;
        CHECK_INT(r, HBS_ERR_IO);
        CHECK_MSG(!file_exists(p.key), "create step %u: a key file was left", k);
        CHECK_MSG(!file_exists(p.tmp), "create step %u: a temp file was left", k);
        int temps;
        CHECK_MSG(dir_entries(p.dir, &temps) == 0, "create step %u: files were left", k);
    }
    CHECK_MSG(steps >= 6, "create has %u fallible steps, expected at least 6", steps);
    size_t n = expected_image(img, 3, 10, a, sizeof a);
    CHECK(same_file(p.key, img, n));

    /* commit: the same, with one store object carried through all the failures. */
    hbs_store *s;
    CHECK_INT(hbs_store_open(&s, p.key, 0), HBS_OK);
    unsigned csteps = 0;
    for (unsigned k = 1; k < 100; k++) {
        char what[64];
        snprintf(what, sizeof what, "commit step %u", k);
        (void)hbs_store_test_fail_at(k);
        int r = hbs_store_commit(s, 20, b, sizeof b);
        unsigned ran = hbs_store_test_fail_at(0);
        if (r == HBS_OK) {
            CHECK_MSG(ran < k, "commit succeeded although step %u failed", k);
            break;
        }
        csteps = k;
        CHECK_INT(r, HBS_ERR_IO);
        check_unchanged(p.key, p.tmp, s, 10, a, sizeof a, img, n, what);
    }
    CHECK_MSG(csteps >= 6, "commit has %u fallible steps, expected at least 6", csteps);
    CHECK_INT(hbs_store_next(s), 20);
    hbs_store_close(s);
    CHECK_INT(hbs_store_open(&s, p.key, 0), HBS_OK);
    CHECK_INT(hbs_store_next(s), 20);
    hbs_store_close(s);
    int temps;
    CHECK_INT(dir_entries(p.dir, &temps), 2);
    CHECK_INT(temps, 0);
    test_note("create: %u steps, commit: %u steps, each failed once", steps, csteps);
}

typedef struct {
    const paths *p;
    const uint8_t *a, *img;
    size_t alen, n;
    int want_errno;
} fail_ctx;

/* Opens the key, tries a commit that must fail with HBS_ERR_IO, checks nothing changed.
 * key and tmp are the paths to use (relative ones in the unprivileged child). */
static void commit_must_fail(const fail_ctx *c, const char *key, const char *tmp)
{
    hbs_store *s;
    uint8_t big[1500];
    fill_payload(big, sizeof big, 11);
    CHECK_INT(hbs_store_open(&s, key, 0), HBS_OK);
    if (!s)
        return;
    errno = 0;
    CHECK_INT(hbs_store_commit(s, 11, big, sizeof big), HBS_ERR_IO);
    CHECK_MSG(errno == c->want_errno, "errno %d (%s), expected %d", errno, strerror(errno),
              c->want_errno);
    check_unchanged(key, tmp, s, 10, c->a, c->alen, c->img, c->n, "failed write");
    hbs_store_close(s);
    CHECK_INT(hbs_store_open(&s, key, 0), HBS_OK);
    CHECK_INT(hbs_store_next(s), 10);
    hbs_store_close(s);
}

/* In a child: drop to an unprivileged user, so that the directory's mode counts. */
static void readonly_child(void *arg)
{
    const fail_ctx *c = arg;
    if (chdir(c->p->dir) != 0 || setgroups(0, NULL) != 0 || setgid(65534) != 0 ||
        setuid(65534) != 0)
        _exit(77);
    int fd = open("probe", O_WRONLY | O_CREAT | O_EXCL, 0600);
    CHECK_MSG(fd < 0, "the read-only directory is writable after dropping privileges");
    if (fd >= 0)
        close(fd);
    commit_must_fail(c, "key", "key.tmp");
}

static void test_readonly_dir(void)
{
    paths p;
    fresh(&p, "rodir");
    uint8_t a[100], img[200];
    fill_payload(a, sizeof a, 10);
    CHECK_INT(hbs_store_create(p.key, 1, 10, a, sizeof a), HBS_OK);
    fail_ctx c = {&p, a, img, sizeof a, expected_image(img, 1, 10, a, sizeof a), EACCES};
    CHECK(chmod(p.dir, 0500) == 0);
    char probe[700];
    snprintf(probe, sizeof probe, "%s/probe", p.dir);
    int fd = open(probe, O_WRONLY | O_CREAT | O_EXCL, 0600);
    if (fd < 0) {
        commit_must_fail(&c, p.key, p.tmp);
        test_note("directory mode 0500");
    } else {
        /* Root (or CAP_DAC_OVERRIDE) ignores the mode: hand the files to nobody and run the
         * commit as nobody, for whom the mode counts. */
        close(fd);
        CHECK(unlink(probe) == 0);
        CHECK(chown(p.dir, 65534, 65534) == 0 && chown(p.key, 65534, 65534) == 0 &&
              chown(p.lock, 65534, 65534) == 0);
        int status = in_child(readonly_child, &c);
        if (WIFEXITED(status) && WEXITSTATUS(status) == 77)
            test_skip("running privileged and cannot drop to an unprivileged user; the "
                      "injected-failure and RLIMIT_FSIZE tests cover the write path");
        else
            CHECK_MSG(exited_ok(status), "the unprivileged child failed (status %d)", status);
        test_note("directory mode 0500, commit run as uid 65534 (we are root)");
    }
    CHECK(chmod(p.dir, 0700) == 0);
}

static void fsize_child(void *arg)
{
    const fail_ctx *c = arg;
    struct rlimit rl;
    CHECK(getrlimit(RLIMIT_FSIZE, &rl) == 0);
    rl.rlim_cur = 400; /* the key file has 164 bytes, the new one would have 1564 */
    signal(SIGXFSZ, SIG_IGN);
    CHECK(setrlimit(RLIMIT_FSIZE, &rl) == 0);
    commit_must_fail(c, c->p->key, c->p->tmp);
    /* Small commits still fit, and a new key that does not fit is not created at all. */
    hbs_store *s;
    CHECK_INT(hbs_store_open(&s, c->p->key, 0), HBS_OK);
    CHECK_INT(hbs_store_commit(s, 12, c->a, c->alen), HBS_OK);
    hbs_store_close(s);
    char other[700];
    uint8_t big[1000] = {0};
    snprintf(other, sizeof other, "%s/other", c->p->dir);
    errno = 0;
    CHECK_INT(hbs_store_create(other, 1, 0, big, sizeof big), HBS_ERR_IO);
    CHECK_INT(errno, EFBIG);
    CHECK(!file_exists(other));
}

static void test_file_size_limit(void)
{
    paths p;
    fresh(&p, "fsize");
    uint8_t a[100], img[200];
    fill_payload(a, sizeof a, 10);
    CHECK_INT(hbs_store_create(p.key, 1, 10, a, sizeof a), HBS_OK);
    fail_ctx c = {&p, a, img, sizeof a, expected_image(img, 1, 10, a, sizeof a), EFBIG};
    CHECK(exited_ok(in_child(fsize_child, &c)));
    int temps;
    CHECK_INT(dir_entries(p.dir, &temps), 2);
    CHECK_INT(temps, 0);
}

/* ---- 6. crash test ------------------------------------------------------------------------ */

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* The signer that gets killed: reserve N indices with one commit, then use them one by one,
 * logging each only after the commit that covers it returned. Never returns. */
static void crash_signer(const char *key, int logfd, uint64_t seed)
{
    hbs_store *s;
    uint8_t pl[200];
    if (hbs_store_open(&s, key, HBS_STORE_WAIT) != HBS_OK)
        _exit(3);
    for (;;) {
        uint64_t first = hbs_store_next(s);
        uint64_t n = 1 + rng_next(&seed) % 8;
        fill_payload(pl, sizeof pl, first + n);
        if (hbs_store_commit(s, first + n, pl, sizeof pl) != HBS_OK)
            _exit(4);
        for (uint64_t i = first; i < first + n; i++) {
            /* here a signature with index i would be made and released */
            if (write(logfd, &i, sizeof i) != (ssize_t)sizeof i || fdatasync(logfd) != 0)
                _exit(5);
        }
    }
}

static void test_crash_kill(void)
{
    paths p;
    fresh(&p, "crash");
    const char *env = getenv("HBS_CRASH_ROUNDS");
    long rounds = env && *env ? strtol(env, NULL, 10) : 300;
    if (rounds < 1)
        rounds = 1;
    /* The store does not depend on the hash backend: later passes of --backend all run a
     * sample. */
    int sample = !test_full_pass() && rounds > 50;
    if (sample)
        rounds = 50;
    char logpath[700];
    snprintf(logpath, sizeof logpath, "%s/used.log", p.dir);
    int logfd = open(logpath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    CHECK(logfd >= 0);
    uint8_t pl[200];
    fill_payload(pl, sizeof pl, 0);
    CHECK_INT(hbs_store_create(p.key, 1, 0, pl, sizeof pl), HBS_OK);

    /* The kill window: long enough for several reservations however slow fsync is here. */
    double t0 = now_seconds();
    hbs_store *s;
    CHECK_INT(hbs_store_open(&s, p.key, 0), HBS_OK);
    for (int i = 0; i < 4 && s; i++)
        CHECK_INT(hbs_store_commit(s, 0, pl, sizeof pl), HBS_OK);
    hbs_store_close(s);
    long commit_us = (long)((now_seconds() - t0) * 1e6 / 4);
    long window_us = commit_us * 8 < 12000 ? 12000 : commit_us * 8 > 60000 ? 60000 : commit_us * 8;

    uint8_t *seen = NULL; /* seen[i]: index i was logged */
    size_t seen_cap = 0, logged = 0, read_upto = 0, dups = 0, beyond = 0, opened = 0;
    uint64_t last_next = 0, seed = 0x2545f4914f6cdd1dULL;
    for (long round = 0; round < rounds && !test_failed(); round++) {
        fflush(stdout);
        fflush(stderr);
        uint64_t child_seed = rng_next(&seed);
        pid_t pid = fork();
        if (pid == 0)
            crash_signer(p.key, logfd, child_seed);
        CHECK(pid > 0);
        if (pid < 0)
            break;
        /* Mostly anywhere in the loop; one round in four early, in open or the first commit. */
        uint64_t r = rng_next(&seed);
        long us = (long)(r % 4 == 0 ? (r >> 8) % 400 : (r >> 8) % (uint64_t)window_us);
        struct timespec ts = {us / 1000000, us % 1000000 * 1000};
        nanosleep(&ts, NULL);
        kill(pid, SIGKILL);
        int status = 0;
        CHECK(waitpid(pid, &status, 0) == pid);
        CHECK_MSG(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
                  "round %ld: the signer stopped by itself (status %d)", round, status);

        /* The key file always opens, never goes back, and its payload matches its next. */
        int err = hbs_store_open(&s, p.key, 0);
        CHECK_MSG(err == HBS_OK, "round %ld: open gave %d", round, err);
        if (err)
            break;
        opened++;
        uint64_t next = hbs_store_next(s);
        size_t len;
        const uint8_t *cur = hbs_store_payload(s, &len);
        CHECK_MSG(len == sizeof pl && payload_tag(cur, len) == next,
                  "round %ld: payload not the one written with next", round);
        CHECK_MSG(next >= last_next, "round %ld: next went back", round);
        last_next = next;
        hbs_store_close(s);
        CHECK_MSG(!file_exists(p.tmp), "round %ld: open left the temp file", round);

        /* A kill inside write() may leave part of a record: drop it. */
        size_t loglen = 0;
        uint8_t *log = test_read_file(logpath, &loglen);
        CHECK(log != NULL);
        if (!log)
            break;
        loglen -= loglen % 8;
        CHECK(truncate(logpath, (off_t)loglen) == 0);
        for (; read_upto < loglen; read_upto += 8) {
            uint64_t idx;
            memcpy(&idx, log + read_upto, 8);
            if (idx >= next) {
                beyond++;
                continue;
            }
            if (idx >= seen_cap) {
                size_t cap = seen_cap ? seen_cap : 1024;
                while (cap <= idx)
                    cap *= 2;
                uint8_t *ns = realloc(seen, cap);
                CHECK(ns != NULL);
                if (!ns)
                    break;
                memset(ns + seen_cap, 0, cap - seen_cap);
                seen = ns;
                seen_cap = cap;
            }
            if (seen[idx]++)
                dups++;
            logged++;
        }
        free(log);
    }
    close(logfd);
    free(seen);
    CHECK_INT(dups, 0);
    CHECK_INT(beyond, 0);
    CHECK_INT(opened, rounds);
    CHECK(logged > 0);
    test_note("%ld kills%s within %ld ms, %zu indices used, %llu handed out incl. %llu burned",
              rounds, sample ? " (sample: full on the first backend)" : "", window_us / 1000,
              logged, (unsigned long long)last_next, (unsigned long long)(last_next - logged));
}

const hbs_test hbs_tests_state[] = {
    {"store_round_trip", test_round_trip},
    {"store_never_back", test_never_back},
    {"store_corrupt_files", test_corrupt_files},
    {"store_lock_across_rename", test_lock_across_rename},
    {"store_lock_two_threads", test_lock_threads},
    {"store_lock_two_processes", test_lock_processes},
    {"store_injected_failures", test_injected_failures},
    {"store_readonly_dir", test_readonly_dir},
    {"store_file_size_limit", test_file_size_limit},
    {"store_crash_kill", test_crash_kill},
    {NULL, NULL},
};
