/* Stateful keys in files (include/hbs/stateful.h), end to end with real signatures: every
 * signature verifies, no index is ever handed out twice (across reopenings, reservations,
 * splits, two processes at once, SIGKILL at random moments and failed writes), and
 * exhaustion and corrupt files give clear errors. */
#define _GNU_SOURCE /* unshare and CLONE_* for the full-filesystem test */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/leaf_engine.h"
#include "hbs/lms.h"
#include "hbs/stateful.h"
#include "lms/hss.h"
#include "lms/lmots.h"
#include "lms/params.h"
#include "state/stateful_batch.h"
#include "state/store.h"
#include "test.h"
#include "xmss/internal.h"
#include "xmss/xmss.h"

#define MAX_SIG 60000

typedef struct {
    const char *alg;
    hbs_stateful_family family;
    uint64_t total;
} sf_case;

/* Small trees, so that a test can use every index. */
static const sf_case lms5 = {"LMS_SHA256_M32_H5/LMOTS_SHA256_N32_W4", HBS_STATEFUL_HSS, 32};
static const sf_case hss55 = {"LMS_SHA256_M24_H5/LMOTS_SHA256_N24_W8,LMS_SHAKE_M32_H5/LMOTS_SHAKE_N32_W4",
                              HBS_STATEFUL_HSS, 1024};
static const sf_case xmss10 = {"XMSS-SHA2_10_256", HBS_STATEFUL_XMSS, 1024};
static const sf_case xmssmt = {"XMSSMT-SHA2_20/4_256", HBS_STATEFUL_XMSSMT, 1u << 20};

static void key_path(char *out, size_t cap, const char *name)
{
    snprintf(out, cap, "%s/%s", test_tmpdir(), name);
}

static void remove_key(const char *path)
{
    char p[600];
    unlink(path);
    snprintf(p, sizeof p, "%s.lock", path);
    unlink(p);
    snprintf(p, sizeof p, "%s.tmp", path);
    unlink(p);
}

/* The index a signature was made with: HSS reads the bottom level's q, XMSS the index
 * field at the front. */
static uint64_t sig_index(const sf_case *c, const uint8_t *sig, size_t siglen)
{
    if (c->family == HBS_STATEFUL_HSS) {
        /* u32 Nspk, the top level's LMS signature (q first), the bottom public key and
         * the bottom LMS signature: index = q_top * 2^5 + q_bottom for hss55 */
        uint32_t nspk = (uint32_t)sig[0] << 24 | (uint32_t)sig[1] << 16 |
                        (uint32_t)sig[2] << 8 | sig[3];
        uint32_t q0 = (uint32_t)sig[4] << 24 | (uint32_t)sig[5] << 16 |
                      (uint32_t)sig[6] << 8 | sig[7];
        if (nspk == 0)
            return q0;
        {
            /* bottom LMS signature = last (4 + 4 + n(p+1) + 4 + 32*5) bytes, SHAKE N32 W4:
             * p = 67, n = 32 */
            const size_t lmsig = 4 + 4 + 32 * (67 + 1) + 4 + 32 * 5;
            const uint8_t *b = sig + siglen - lmsig;
            uint32_t q1 = (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
            return ((uint64_t)q0 << 5) | q1;
        }
    }
    if (c->family == HBS_STATEFUL_XMSS)
        return (uint64_t)sig[0] << 24 | (uint64_t)sig[1] << 16 | (uint64_t)sig[2] << 8 | sig[3];
    /* XMSS^MT: ceil(h / 8) bytes of index */
    return (uint64_t)sig[0] << 16 | (uint64_t)sig[1] << 8 | sig[2];
}

static int make_key(const sf_case *c, const char *path, uint8_t *pk, size_t *pklen)
{
    remove_key(path);
    return hbs_stateful_keygen(c->alg, path, pk, HBS_STATEFUL_MAX_PK_BYTES, pklen, NULL, 0,
                               NULL, NULL);
}

static int sign_one(hbs_stateful_key *k, uint8_t *sig, size_t *siglen, uint64_t tag)
{
    uint8_t msg[8];
    for (int i = 0; i < 8; i++)
        msg[i] = (uint8_t)(tag >> (8 * i));
    return hbs_stateful_sign(k, sig, MAX_SIG, siglen, msg, sizeof msg);
}

static int verify_one(const sf_case *c, const uint8_t *pk, size_t pklen, const uint8_t *sig,
                      size_t siglen, uint64_t tag)
{
    uint8_t msg[8];
    for (int i = 0; i < 8; i++)
        msg[i] = (uint8_t)(tag >> (8 * i));
    return hbs_stateful_verify(c->family, pk, pklen, msg, sizeof msg, sig, siglen);
}

/* Sign, close, reopen with several reservations: indices only go up, all verify. */
static void run_reopen(const sf_case *c)
{
    char path[512];
    uint8_t pk[HBS_STATEFUL_MAX_PK_BYTES], *sig = malloc(MAX_SIG);
    size_t pklen, siglen;
    uint64_t last = 0, count = 0;
    int first = 1;
    key_path(path, sizeof path, "reopen.key");
    CHECK_INT(make_key(c, path, pk, &pklen), HBS_OK);
    for (uint32_t reserve = 1; reserve <= 7; reserve += 3) {
        hbs_stateful_key *k;
        CHECK_INT(hbs_stateful_open(&k, path, 0, reserve), HBS_OK);
        if (!k)
            break;
        CHECK_INT(hbs_stateful_key_total(k), c->total);
        for (int i = 0; i < 3; i++) {
            uint64_t before = hbs_stateful_key_index(k), idx;
            CHECK_INT(sign_one(k, sig, &siglen, count), HBS_OK);
            CHECK_INT(siglen, hbs_stateful_sig_bytes(k));
            CHECK_INT(verify_one(c, pk, pklen, sig, siglen, count), HBS_OK);
            CHECK_INT(verify_one(c, pk, pklen, sig, siglen, count + 1), HBS_ERR_VERIFY_FAILED);
            idx = sig_index(c, sig, siglen);
            CHECK_INT(idx, before);
            CHECK(first || idx > last);
            first = 0;
            last = idx;
            count++;
        }
        hbs_stateful_close(k);
    }
    /* reserve 7 burned 4 indices at the last close: the next open starts after them */
    {
        hbs_stateful_key *k;
        CHECK_INT(hbs_stateful_open(&k, path, 0, 1), HBS_OK);
        if (k) {
            CHECK_INT(hbs_stateful_key_index(k), last + 1 + 4);
            hbs_stateful_close(k);
        }
    }
    test_note("%s: %llu signatures over 3 openings", c->alg, (unsigned long long)count);
    remove_key(path);
    free(sig);
}

/* The hook a batch signer elsewhere (the GPU) uses: the batch's indices are set aside in
 * the file before anything is signed (a crash then burns them, never reuses them), the key
 * then moves past the batch, and a request larger than what is left changes nothing. */
static void run_batch_reserve(const sf_case *c)
{
    char path[512];
    uint8_t pk[HBS_STATEFUL_MAX_PK_BYTES], *sig = malloc(MAX_SIG), *state = NULL;
    size_t pklen, siglen, statelen = 0;
    uint64_t first = 99;
    hbs_stateful_key *k = NULL;
    key_path(path, sizeof path, "batch.key");
    CHECK_INT(make_key(c, path, pk, &pklen), HBS_OK);
    CHECK_INT(hbs_stateful_open(&k, path, 0, 1), HBS_OK);
    if (!k || !sig) {
        free(sig);
        return;
    }
    CHECK_INT(sign_one(k, sig, &siglen, 0), HBS_OK);
    /* more than is left: nothing changes */
    CHECK_INT(hbs_stateful_batch_begin(k, c->total, &first, &state, &statelen),
              HBS_ERR_KEY_EXHAUSTED);
    CHECK(state == NULL);
    CHECK_INT(hbs_stateful_key_index(k), 1);
    /* 10 set aside, then the process "dies" before the batch ends: reopening starts at 11 */
    CHECK_INT(hbs_stateful_batch_begin(k, 10, &first, &state, &statelen), HBS_OK);
    CHECK_INT(first, 1);
    CHECK(state != NULL && statelen > 0);
    hbs_stateful_batch_free_state(state, statelen);
    state = NULL;
    hbs_stateful_close(k);
    k = NULL;
    CHECK_INT(hbs_stateful_open(&k, path, 0, 1), HBS_OK);
    if (!k) {
        free(sig);
        return;
    }
    CHECK_INT(hbs_stateful_key_index(k), 11);
    /* a batch that ends: the key signs on after it, with the very next index */
    CHECK_INT(hbs_stateful_batch_begin(k, 5, &first, &state, &statelen), HBS_OK);
    CHECK_INT(first, 11);
    hbs_stateful_batch_free_state(state, statelen);
    CHECK_INT(hbs_stateful_batch_end(k, 17), HBS_ERR_INVALID_ARGUMENT); /* past the batch */
    CHECK_INT(hbs_stateful_batch_end(k, 16), HBS_OK);
    CHECK_INT(hbs_stateful_key_index(k), 16);
    CHECK_INT(sign_one(k, sig, &siglen, 16), HBS_OK);
    CHECK_INT(sig_index(c, sig, siglen), 16);
    CHECK_INT(verify_one(c, pk, pklen, sig, siglen, 16), HBS_OK);
    hbs_stateful_close(k);
    /* with a reserve of 20, a batch of 5 sets 20 aside; the next batch within them writes
     * nothing (an armed file fault stays unused); a crash then resumes after the 20 */
    CHECK_INT(hbs_stateful_open(&k, path, 0, 20), HBS_OK);
    if (!k) {
        free(sig);
        return;
    }
    const uint64_t at = hbs_stateful_key_index(k);
    CHECK_INT(hbs_stateful_batch_begin(k, 5, &first, &state, &statelen), HBS_OK);
    CHECK_INT(first, at);
    hbs_stateful_batch_free_state(state, statelen);
    CHECK_INT(hbs_stateful_batch_end(k, at + 5), HBS_OK);
    (void)hbs_store_test_fail_at(1);
    CHECK_INT(hbs_stateful_batch_begin(k, 5, &first, &state, &statelen), HBS_OK);
    CHECK_INT(hbs_store_test_fail_at(0), 0); /* no file operation ran */
    CHECK_INT(first, at + 5);
    hbs_stateful_batch_free_state(state, statelen);
    hbs_stateful_close(k);
    k = NULL;
    CHECK_INT(hbs_stateful_open(&k, path, 0, 1), HBS_OK);
    if (k) /* (a 32-leaf key has fewer left: the reserve stops at its end) */
        CHECK_INT(hbs_stateful_key_index(k), at + 20 < c->total ? at + 20 : c->total);
    hbs_stateful_close(k);
    remove_key(path);
    free(sig);
}

static void test_batch_reserve(void)
{
    run_batch_reserve(&lms5);
    run_batch_reserve(&xmss10);
    run_batch_reserve(&hss55);
}

static void test_reopen_lms(void) { run_reopen(&lms5); }
static void test_reopen_hss(void) { run_reopen(&hss55); }
static void test_reopen_xmss(void) { run_reopen(&xmss10); }
static void test_reopen_xmssmt(void) { run_reopen(&xmssmt); }

/* Every index of a 32-leaf key, then exhaustion; a split key's two halves never overlap. */
static void test_exhaust_and_split(void)
{
    char path[512], part[512];
    uint8_t pk[HBS_STATEFUL_MAX_PK_BYTES], *sig = malloc(MAX_SIG);
    size_t pklen, siglen;
    uint8_t seen[32] = {0};
    hbs_stateful_key *a, *b;
    key_path(path, sizeof path, "split.key");
    key_path(part, sizeof part, "split-part.key");
    remove_key(part);
    CHECK_INT(make_key(&lms5, path, pk, &pklen), HBS_OK);
    CHECK_INT(hbs_stateful_open(&a, path, 0, 2), HBS_OK);
    if (!a)
        goto out;
    CHECK_INT(sign_one(a, sig, &siglen, 0), HBS_OK);
    seen[sig_index(&lms5, sig, siglen)]++;
    CHECK_INT(hbs_stateful_split(a, part, 1000), HBS_ERR_KEY_EXHAUSTED);
    CHECK_INT(hbs_stateful_split(a, part, 16), HBS_OK);
    CHECK_INT(hbs_stateful_key_end(a), 16);
    CHECK_INT(hbs_stateful_split(a, part, 1), HBS_ERR_IO); /* never overwrites a file */
    CHECK_INT(hbs_stateful_open(&b, part, 0, 3), HBS_OK);
    if (!b)
        goto out;
    CHECK_INT(hbs_stateful_key_index(b), 16);
    CHECK_INT(hbs_stateful_key_end(b), 32);
    for (uint64_t t = 1;; t++) {
        int ra = sign_one(a, sig, &siglen, t);
        if (ra == HBS_OK) {
            CHECK_INT(verify_one(&lms5, pk, pklen, sig, siglen, t), HBS_OK);
            seen[sig_index(&lms5, sig, siglen) & 31]++;
        }
        int rb = sign_one(b, sig, &siglen, t);
        if (rb == HBS_OK) {
            CHECK_INT(verify_one(&lms5, pk, pklen, sig, siglen, t), HBS_OK);
            seen[sig_index(&lms5, sig, siglen) & 31]++;
        }
        if (ra == HBS_ERR_KEY_EXHAUSTED && rb == HBS_ERR_KEY_EXHAUSTED)
            break;
        CHECK(ra == HBS_OK || ra == HBS_ERR_KEY_EXHAUSTED);
        CHECK(rb == HBS_OK || rb == HBS_ERR_KEY_EXHAUSTED);
        if (t > 100)
            break;
    }
    for (int i = 0; i < 32; i++)
        CHECK_MSG(seen[i] == 1, "index %d used %d times", i, seen[i]);
    CHECK_INT(hbs_stateful_key_remaining(a), 0);
    hbs_stateful_close(b);
    hbs_stateful_close(a);
    /* still exhausted after reopening */
    CHECK_INT(hbs_stateful_open(&a, path, 0, 1), HBS_OK);
    if (a) {
        CHECK_INT(sign_one(a, sig, &siglen, 99), HBS_ERR_KEY_EXHAUSTED);
        CHECK_INT(siglen, 0);
        hbs_stateful_close(a);
    }
    test_note("32/32 indices used exactly once over two split keys");
out:
    remove_key(path);
    remove_key(part);
    free(sig);
}

/* An injected failure at every step of the state update: no signature, old state kept. */
static void test_write_failures(void)
{
    char path[512];
    uint8_t pk[HBS_STATEFUL_MAX_PK_BYTES], *sig = malloc(MAX_SIG);
    size_t pklen, siglen;
    unsigned steps, failures = 0;
    hbs_stateful_key *k;
    key_path(path, sizeof path, "fail.key");
    CHECK_INT(make_key(&xmss10, path, pk, &pklen), HBS_OK);
    /* count the file operations of one update */
    CHECK_INT(hbs_stateful_open(&k, path, 0, 1), HBS_OK);
    if (!k)
        goto out;
    hbs_store_test_fail_at(0);
    CHECK_INT(sign_one(k, sig, &siglen, 0), HBS_OK);
    steps = hbs_store_test_fail_at(0);
    CHECK(steps >= 3);
    for (unsigned s = 1; s <= steps; s++) {
        uint64_t before = hbs_stateful_key_index(k);
        hbs_store_test_fail_at(s);
        int rc = sign_one(k, sig, &siglen, s);
        hbs_store_test_fail_at(0);
        CHECK_INT(rc, HBS_ERR_IO);
        CHECK_INT(siglen, 0);
        CHECK_INT(hbs_stateful_key_index(k), before);
        failures += rc == HBS_ERR_IO;
        /* the next attempt, without a fault, signs with that same unused index */
        CHECK_INT(sign_one(k, sig, &siglen, s), HBS_OK);
        CHECK_INT(sig_index(&xmss10, sig, siglen), before);
        CHECK_INT(verify_one(&xmss10, pk, pklen, sig, siglen, s), HBS_OK);
    }
    hbs_stateful_close(k);
    test_note("%u of %u injected faults refused the signature", failures, steps);
out:
    remove_key(path);
    free(sig);
}

/* A corrupt key file is refused and left as it is. */
static void test_corrupt_file(void)
{
    char path[512];
    uint8_t pk[HBS_STATEFUL_MAX_PK_BYTES], *img, *img2;
    size_t pklen, len, len2;
    hbs_stateful_key *k;
    FILE *f;
    key_path(path, sizeof path, "corrupt.key");
    CHECK_INT(make_key(&lms5, path, pk, &pklen), HBS_OK);
    img = test_read_file(path, &len);
    CHECK(img != NULL && len > 40);
    if (!img)
        return;
    img[len / 2] ^= 1;
    f = fopen(path, "wb");
    fwrite(img, 1, len, f);
    fclose(f);
    CHECK_INT(hbs_stateful_open(&k, path, 0, 1), HBS_ERR_STATE);
    CHECK(k == NULL);
    img2 = test_read_file(path, &len2);
    CHECK(img2 && len2 == len && memcmp(img, img2, len) == 0);
    free(img);
    free(img2);
    remove_key(path);
}

/* Signs until killed or `limit` signatures, appending "index tag" lines to log after each
 * signature that verifies (fsync'd), so the parent sees every signature released. */
static void crash_child(const char *path, const char *log, const uint8_t *pk, size_t pklen,
                        uint32_t reserve, unsigned limit)
{
    uint8_t *sig = malloc(MAX_SIG);
    hbs_stateful_key *k;
    int fd = open(log, O_WRONLY | O_APPEND | O_CREAT, 0600);
    if (fd < 0 || !sig || hbs_stateful_open(&k, path, HBS_STATEFUL_WAIT, reserve) != HBS_OK)
        _exit(3);
    for (unsigned i = 0; i < limit; i++) {
        size_t siglen;
        uint64_t tag = (uint64_t)getpid() << 20 | i;
        int rc = sign_one(k, sig, &siglen, tag);
        if (rc == HBS_ERR_KEY_EXHAUSTED)
            break;
        if (rc != HBS_OK || verify_one(&xmssmt, pk, pklen, sig, siglen, tag) != HBS_OK)
            _exit(4);
        char line[64];
        int n = snprintf(line, sizeof line, "%llu\n",
                         (unsigned long long)sig_index(&xmssmt, sig, siglen));
        if (write(fd, line, (size_t)n) != n || fsync(fd) != 0)
            _exit(5);
    }
    hbs_stateful_close(k);
    _exit(0);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Checks the log: no index twice, all below the file's next. Returns the count. */
static size_t check_log(const char *log, const char *path)
{
    FILE *f = fopen(log, "r");
    uint64_t *idx = NULL, v;
    size_t n = 0, cap = 0, dups = 0;
    unsigned long long x;
    hbs_stateful_key *k;
    if (!f)
        return 0;
    while (fscanf(f, "%llu", &x) == 1) {
        if (n == cap) {
            cap = cap ? 2 * cap : 1024;
            idx = realloc(idx, cap * sizeof *idx);
        }
        idx[n++] = x;
    }
    fclose(f);
    qsort(idx, n, sizeof *idx, cmp_u64);
    for (size_t i = 1; i < n; i++)
        dups += idx[i] == idx[i - 1];
    CHECK_MSG(dups == 0, "%zu indices used twice", dups);
    CHECK_INT(hbs_stateful_open(&k, path, HBS_STATEFUL_WAIT, 1), HBS_OK);
    if (k) {
        v = hbs_stateful_key_index(k);
        CHECK(n == 0 || idx[n - 1] < v);
        hbs_stateful_close(k);
    }
    free(idx);
    return n;
}

/* Two processes sign with one key file at once. */
static void test_two_processes(void)
{
    char path[512], log[512];
    uint8_t pk[HBS_STATEFUL_MAX_PK_BYTES];
    size_t pklen, n;
    pid_t p[2];
    key_path(path, sizeof path, "two.key");
    key_path(log, sizeof log, "two.log");
    unlink(log);
    CHECK_INT(make_key(&xmssmt, path, pk, &pklen), HBS_OK);
    for (int i = 0; i < 2; i++) {
        p[i] = fork();
        if (p[i] == 0)
            crash_child(path, log, pk, pklen, i ? 3 : 1, 40);
    }
    for (int i = 0; i < 2; i++) {
        int st;
        waitpid(p[i], &st, 0);
        CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child %d status %d", i, st);
    }
    n = check_log(log, path);
    CHECK_INT(n, 80);
    test_note("80 signatures from two processes, no index twice");
    remove_key(path);
    unlink(log);
}

/* SIGKILL at random moments while signing; afterwards the file loads, every released
 * signature verified, and no index appears twice. */
static void test_crash_loop(void)
{
    char path[512], log[512];
    uint8_t pk[HBS_STATEFUL_MAX_PK_BYTES];
    size_t pklen, n;
    const char *env = getenv("HBS_CRASH_ROUNDS");
    unsigned rounds = env ? (unsigned)atoi(env) : 200, killed = 0;
    uint8_t r[4];
    key_path(path, sizeof path, "crash.key");
    key_path(log, sizeof log, "crash.log");
    unlink(log);
    CHECK_INT(make_key(&xmssmt, path, pk, &pklen), HBS_OK);
    for (unsigned i = 0; i < rounds; i++) {
        int st;
        pid_t p = fork();
        if (p == 0)
            crash_child(path, log, pk, pklen, 1 + i % 4, 1000000);
        test_rand_bytes(r, sizeof r);
        struct timespec ts = {0, (long)(1000000 + (r[0] | r[1] << 8) % 20000 * 1000)};
        nanosleep(&ts, NULL);
        kill(p, SIGKILL);
        waitpid(p, &st, 0);
        killed += WIFSIGNALED(st);
        CHECK_MSG(WIFSIGNALED(st) || (WIFEXITED(st) && WEXITSTATUS(st) == 0),
                  "child failed with status %d", st);
    }
    n = check_log(log, path);
    CHECK(n > 0);
    test_note("%u kills, %zu signatures released, none reused", killed, n);
    remove_key(path);
    unlink(log);
}

/* ---- a real full filesystem ----
 * A small tmpfs, mounted in a private mount namespace of a child process (a user namespace
 * too when not root), filled to the last byte: signing must fail with HBS_ERR_IO and no
 * signature, the key file must still load at the same index, and once space is freed the
 * very next signature uses that index. Where the kernel or container allows no such mount
 * the test says so and skips; the injected-failure and RLIMIT_FSIZE tests still cover the
 * write path. */

enum { FULL_SKIP = 77 };

static int private_tmpfs(const char *dir)
{
    if (getuid() != 0 && unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0)
        return -1;
    if (getuid() == 0 && unshare(CLONE_NEWNS) != 0)
        return -1;
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
        return -1;
    return mount("hbs-test", dir, "tmpfs", 0, "size=512k,mode=0700");
}

/* Fills the filesystem of `path` with a filler file; returns how many bytes went in. */
static long fill_up(const char *path)
{
    static const char block[4096];
    long total = 0;
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0)
        return -1;
    for (;;) {
        ssize_t w = write(fd, block, sizeof block);
        if (w <= 0)
            break;
        total += w;
    }
    /* the last partial block, byte by byte, so not even a small write fits */
    while (write(fd, block, 1) == 1)
        total++;
    close(fd);
    return total;
}

static void full_fs_child(void *arg)
{
    const char *dir = arg;
    char path[540], filler[540];
    uint8_t pk[HBS_STATEFUL_MAX_PK_BYTES], *sig = malloc(MAX_SIG);
    size_t pklen, siglen = 1;
    hbs_stateful_key *k = NULL, *k2 = NULL;
    uint64_t before;

    if (!sig || private_tmpfs(dir) != 0)
        _exit(FULL_SKIP);
    snprintf(path, sizeof path, "%s/full.key", dir);
    snprintf(filler, sizeof filler, "%s/filler", dir);
    CHECK_INT(make_key(&lms5, path, pk, &pklen), HBS_OK);
    CHECK_INT(hbs_stateful_open(&k, path, 0, 1), HBS_OK);
    if (!k)
        goto out;
    CHECK_INT(sign_one(k, sig, &siglen, 1), HBS_OK);
    before = hbs_stateful_key_index(k);
    CHECK(fill_up(filler) > 0);

    CHECK_INT(sign_one(k, sig, &siglen, 2), HBS_ERR_IO);
    CHECK_INT(siglen, 0);
    CHECK_INT(hbs_stateful_key_index(k), before);
    hbs_stateful_close(k);
    k = NULL;
    /* the file on the full disk still loads, at the same index */
    CHECK_INT(hbs_stateful_open(&k2, path, 0, 1), HBS_OK);
    if (k2) {
        CHECK_INT(hbs_stateful_key_index(k2), before);
        CHECK_INT(sign_one(k2, sig, &siglen, 3), HBS_ERR_IO);
        unlink(filler);
        CHECK_INT(sign_one(k2, sig, &siglen, 4), HBS_OK);
        CHECK_INT(sig_index(&lms5, sig, siglen), before);
        CHECK_INT(verify_one(&lms5, pk, pklen, sig, siglen, 4), HBS_OK);
        hbs_stateful_close(k2);
    }
out:
    free(sig);
}

static void test_full_filesystem(void)
{
    char dir[512];
    int status;
    pid_t pid;
    key_path(dir, sizeof dir, "fullfs");
    mkdir(dir, 0700);
    fflush(stdout);
    fflush(stderr);
    pid = fork();
    if (pid == 0) {
        int before = test_failed();
        full_fs_child(dir);
        _exit(test_failed() > before ? 1 : 0);
    }
    CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
    rmdir(dir);
    if (pid > 0 && WIFEXITED(status) && WEXITSTATUS(status) == FULL_SKIP) {
        test_skip("no private tmpfs can be mounted here (namespaces not allowed)");
        return;
    }
    CHECK_MSG(pid > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0,
              "the full-filesystem child failed (status %d)", status);
    test_note("512 KiB tmpfs filled: signing refused with HBS_ERR_IO, key file intact, "
              "same index signed once space was freed");
}

/* ---- skipping with a leaf engine (what the GPU batch signer's batch end uses) ----------
 * A leaf engine made of the CPU's own leaf code, counting what it is asked for: a skip with
 * it must end in the very state bytes a skip without it ends in, and use it where it pays. */
#define CPU_ENGINE_TREES 64

typedef struct {
    const hbs_xmss_params *xp;
    size_t calls, leaves;
    /* with whole trees (xmss_tree): those made so far, each 2^(h+1) - 1 nodes; corrupt: one
     * byte of every inner node flipped, so a skip that reads them must come out different */
    int corrupt;
    size_t ntrees;
    uint8_t *trees[CPU_ENGINE_TREES];
    /* whole trees asked of xmss_trees (refuse: it answers HBS_ERR_UNSUPPORTED) */
    size_t whole;
    int refuse;
    /* one-time signatures handed out by xmss_wots_sig (corrupt_wots: one byte flipped) */
    size_t wots;
    int corrupt_wots;
} cpu_engine;

static int cpu_lms_leaves(void *user, const hbs_lms_leaf_job *j, uint32_t first, size_t count,
                          uint8_t *out)
{
    cpu_engine *u = user;
    const hbs_lms_type *t = NULL;
    const hbs_lmots_type *o = NULL;
    for (size_t i = 0; i < HBS_LMS_NUM_TYPES; i++)
        if (hbs_lms_types[i].hash == j->hash && hbs_lms_types[i].m == j->n &&
            hbs_lms_types[i].h == j->h)
            t = &hbs_lms_types[i];
    for (size_t i = 0; i < HBS_LMOTS_NUM_TYPES; i++)
        if (hbs_lmots_types[i].hash == j->hash && hbs_lmots_types[i].n == j->n &&
            hbs_lmots_types[i].w == j->w)
            o = &hbs_lmots_types[i];
    if (!t || !o)
        return HBS_ERR_UNSUPPORTED;
    u->calls++;
    u->leaves += count;
    return hbs_lms_leaves(t, o, j->I, j->seed, first, count, out);
}

static int cpu_xmss_leaves(void *user, const hbs_xmss_leaf_job *jobs, size_t njobs,
                           uint32_t first, size_t count, uint8_t *out)
{
    cpu_engine *u = user;
    xmss_ctx c;
    if (!u->xp || jobs[0].n != u->xp->n || jobs[0].len != u->xp->len || njobs > 12)
        return HBS_ERR_UNSUPPORTED;
    hbs_xmss_ctx_init(&c, u->xp, jobs[0].pub_seed, jobs[0].sk_seed);
    for (size_t k = 0; k < njobs; k++)
        hbs_xmss_leaf_range(&c, out + k * count * u->xp->n, jobs[k].layer, jobs[k].tree, first,
                            count);
    hbs_xmss_ctx_wipe(&c);
    u->calls++;
    u->leaves += njobs * count;
    return HBS_OK;
}

/* Every node of one tree, as a batch signer that built it holds it: leaves, then each level. */
static const uint8_t *cpu_xmss_tree(void *user, const hbs_xmss_leaf_job *job, unsigned h)
{
    cpu_engine *u = user;
    const size_t n = job->n, leaves = (size_t)1 << h;
    xmss_ctx c;
    uint8_t *t;
    if (!u->xp || n != u->xp->n || h != u->xp->tree_h || u->ntrees == CPU_ENGINE_TREES ||
        !(t = malloc((2 * leaves - 1) * n)))
        return NULL;
    hbs_xmss_ctx_init(&c, u->xp, job->pub_seed, job->sk_seed);
    hbs_xmss_leaf_range(&c, t, job->layer, job->tree, 0, leaves);
    hbs_xmss_tree_levels(&c, t, job->layer, job->tree, h);
    hbs_xmss_ctx_wipe(&c);
    if (u->corrupt)
        for (size_t i = leaves; i < 2 * leaves - 1; i++)
            t[i * n] ^= 1;
    u->trees[u->ntrees++] = t;
    return t;
}

/* njobs whole trees at once (what key generation asks the GPU for); corrupt as above. */
static int cpu_xmss_trees(void *user, const hbs_xmss_leaf_job *jobs, size_t njobs, unsigned h,
                          uint8_t *out)
{
    cpu_engine *u = user;
    const size_t leaves = (size_t)1 << h, tn = 2 * leaves - 1;
    xmss_ctx c;
    if (u->refuse || !u->xp || jobs[0].n != u->xp->n || h != u->xp->tree_h)
        return HBS_ERR_UNSUPPORTED;
    hbs_xmss_ctx_init(&c, u->xp, jobs[0].pub_seed, jobs[0].sk_seed);
    for (size_t k = 0; k < njobs; k++) {
        uint8_t *t = out + k * tn * u->xp->n;
        hbs_xmss_leaf_range(&c, t, jobs[k].layer, jobs[k].tree, 0, leaves);
        hbs_xmss_tree_levels(&c, t, jobs[k].layer, jobs[k].tree, h);
        if (u->corrupt)
            for (size_t i = leaves; i < tn; i++)
                t[i * u->xp->n] ^= 1;
    }
    hbs_xmss_ctx_wipe(&c);
    u->whole += njobs;
    u->calls++;
    u->leaves += njobs * leaves;
    return HBS_OK;
}

/* The WOTS+ signature of msg by a leaf, as a batch signer that made it beside its batch
 * hands it out; corrupt_wots as corrupt. */
static int cpu_xmss_wots_sig(void *user, const hbs_xmss_leaf_job *job, uint32_t leaf,
                             const uint8_t *msg, uint8_t *sig)
{
    cpu_engine *u = user;
    uint8_t digits[XMSS_MAX_LEN];
    xmss_leafpos pos = {job->layer, job->tree, leaf};
    xmss_ctx c;
    if (!u->xp || job->n != u->xp->n || job->len != u->xp->len)
        return HBS_ERR_UNSUPPORTED;
    hbs_xmss_ctx_init(&c, u->xp, job->pub_seed, job->sk_seed);
    hbs_xmss_wots_digits(u->xp, digits, msg);
    hbs_xmss_leaves(&c, NULL, &pos, 1, digits, sig, 0);
    hbs_xmss_ctx_wipe(&c);
    if (u->corrupt_wots)
        sig[0] ^= 1;
    u->wots++;
    return HBS_OK;
}

static void cpu_engine_free(cpu_engine *u)
{
    for (size_t i = 0; i < u->ntrees; i++)
        free(u->trees[i]);
    u->ntrees = 0;
}

static void cpu_engine_init(hbs_leaf_engine *e, cpu_engine *u, const hbs_xmss_params *xp)
{
    memset(e, 0, sizeof *e);
    memset(u, 0, sizeof *u);
    u->xp = xp;
    e->lms_leaves = cpu_lms_leaves;
    e->xmss_leaves = cpu_xmss_leaves;
    e->user = u;
    e->min_leaves = 32;
    e->slice_leaves = 4096; /* small: slices get tested */
}

/* Export of a key into buf (cap bytes): its length, 0 on failure. */
static size_t export_xmss(const hbs_xmss_key *k, uint8_t *buf, size_t cap)
{
    size_t len = 0;
    return hbs_xmss_key_export(k, buf, cap, &len) == HBS_OK ? len : 0;
}

static size_t export_hss(const hbs_hss_key *k, uint8_t *buf, size_t cap)
{
    size_t len = 0;
    return hbs_hss_key_export(k, buf, cap, &len) == HBS_OK ? len : 0;
}

#define SKIP_STATE_MAX (1u << 20)

/* Keys a (skips without an engine) and b (with one) from one seed skip to each target in turn
 * and sign there: the same state bytes and signatures after every skip. trees: the engine
 * also hands out whole trees (leaves and inner nodes, as the GPU batch signer's batch end
 * does); 2: with every inner node corrupted, so some state must differ (the nodes are read). */
static void run_skip_engine_xmss(const char *alg, const uint64_t *targets, size_t nt, int trees)
{
    const hbs_xmss_params *p = hbs_xmss_params_by_name(alg);
    hbs_xmss_key *a = NULL, *b = NULL;
    uint8_t seed[3 * 64], pk[256], *ea = malloc(SKIP_STATE_MAX), *eb = malloc(SKIP_STATE_MAX);
    uint8_t *sa = NULL, *sb = NULL;
    size_t pklen, la, lb, used = 0;
    hbs_leaf_engine e;
    cpu_engine u;
    CHECK(p != NULL);
    if (!p || !ea || !eb)
        goto out;
    sa = malloc(p->sig_bytes);
    sb = malloc(p->sig_bytes);
    test_rand_bytes(seed, sizeof seed);
    cpu_engine_init(&e, &u, p);
    if (trees)
        e.xmss_tree = cpu_xmss_tree;
    if (trees == 1) {
        e.xmss_trees = cpu_xmss_trees; /* (far skips rebuild from them) */
        e.xmss_wots_sig = cpu_xmss_wots_sig; /* (and take the signatures between layers) */
    }
    u.corrupt = trees == 2;
    size_t differ = 0;
    CHECK_INT(hbs_xmss_keygen(&a, pk, sizeof pk, &pklen, p, 0, seed, 3 * p->n, NULL, NULL),
              HBS_OK);
    CHECK_INT(hbs_xmss_keygen(&b, pk, sizeof pk, &pklen, p, 0, seed, 3 * p->n, NULL, NULL),
              HBS_OK);
    if (!a || !b || !sa || !sb)
        goto out;
    for (size_t i = 0; i < nt; i++) {
        const size_t before = u.leaves, trees_before = u.ntrees;
        CHECK_INT(hbs_xmss_key_skip_to(a, targets[i]), HBS_OK);
        CHECK_INT(hbs_xmss_key_skip_to_engine(b, targets[i], &e), HBS_OK);
        /* (a rebuild from whole trees the engine holds reads them in place: no leaves) */
        used += u.leaves > before || u.ntrees > trees_before;
        la = export_xmss(a, ea, SKIP_STATE_MAX);
        lb = export_xmss(b, eb, SKIP_STATE_MAX);
        if (trees == 2) {
            /* a corrupted state signs wrongly from here on: compare the states only */
            differ += !(la && la == lb && memcmp(ea, eb, la) == 0);
            if (differ)
                break;
            continue;
        }
        CHECK_MSG(la && la == lb && memcmp(ea, eb, la) == 0,
                  "%s: state after skip to %llu differs with an engine", alg,
                  (unsigned long long)targets[i]);
        CHECK_INT(hbs_xmss_sign(a, sa, p->sig_bytes, &la, seed, 7), HBS_OK);
        CHECK_INT(hbs_xmss_sign(b, sb, p->sig_bytes, &lb, seed, 7), HBS_OK);
        CHECK_MSG(la == lb && memcmp(sa, sb, la) == 0, "%s: signature after skip to %llu",
                  alg, (unsigned long long)targets[i]);
    }
    if (trees == 2) {
        CHECK_MSG(differ > 0, "%s: corrupted inner nodes from the engine changed no state",
                  alg);
        test_note("%s: corrupted engine nodes show", alg);
        goto out;
    }
    CHECK_MSG(used > 0, "%s: the engine was never used", alg);
    if (trees)
        CHECK_MSG(u.ntrees > 0, "%s: no whole tree was asked for", alg);
    if (trees)
        test_note("%s: %zu skips equal with whole trees from the engine (%zu trees, %zu "
                  "one-time signatures between layers)", alg, nt, u.ntrees, u.wots);
    else
        test_note("%s: %zu skips equal with and without an engine (%zu used it: %zu calls, %zu "
                  "leaves)", alg, nt, used, u.calls, u.leaves);
out:
    cpu_engine_free(&u);
    hbs_xmss_key_free(a);
    hbs_xmss_key_free(b);
    free(ea);
    free(eb);
    free(sa);
    free(sb);
}

/* Key generation with an engine that hands out whole trees (xmss_trees, as the GPU's does):
 * the same key, state and first signature as without an engine; with corrupted inner nodes
 * the state differs (they are read, not hashed again); refused, the leaves serve. */
static void run_keygen_trees_xmss(const char *alg)
{
    const hbs_xmss_params *p = hbs_xmss_params_by_name(alg);
    hbs_xmss_key *a = NULL, *b = NULL;
    uint8_t seed[3 * 64], pka[256], pkb[256], *ea = malloc(SKIP_STATE_MAX),
                                              *eb = malloc(SKIP_STATE_MAX);
    size_t pklen, la, lb;
    hbs_leaf_engine e;
    cpu_engine u;
    CHECK(p != NULL);
    if (!p || !ea || !eb)
        goto out;
    test_rand_bytes(seed, sizeof seed);
    CHECK_INT(hbs_xmss_keygen(&a, pka, sizeof pka, &pklen, p, 0, seed, 3 * p->n, NULL, NULL),
              HBS_OK);
    la = a ? export_xmss(a, ea, SKIP_STATE_MAX) : 0;
    /* whole trees, corrupted, refused; with the one-time signatures between layers from
     * the engine too, then those corrupted */
    for (int mode = 0; mode < 5 && a; mode++) {
        cpu_engine_init(&e, &u, p);
        e.xmss_trees = cpu_xmss_trees;
        if (mode >= 3)
            e.xmss_wots_sig = cpu_xmss_wots_sig;
        u.corrupt = mode == 1;
        u.refuse = mode == 2;
        u.corrupt_wots = mode == 4;
        CHECK_INT(hbs_xmss_keygen_engine(&b, pkb, sizeof pkb, &pklen, p, 0, seed, 3 * p->n,
                                         NULL, NULL, &e),
                  HBS_OK);
        lb = b ? export_xmss(b, eb, SKIP_STATE_MAX) : 0;
        const int same = la && la == lb && memcmp(ea, eb, la) == 0 &&
                         memcmp(pka, pkb, pklen) == 0;
        if (mode == 1)
            CHECK_MSG(!same, "%s: corrupted inner nodes from the engine changed nothing", alg);
        else if (mode == 4) /* (a single tree has no signature between layers) */
            CHECK_MSG(same == (p->d == 1), "%s: with corrupted one-time signatures from the "
                      "engine the state %s", alg, same ? "is the same" : "differs");
        else
            CHECK_MSG(same, "%s: key generation with whole trees (mode %d) differs", alg, mode);
        CHECK_MSG(u.wots == (mode >= 3 ? (size_t)p->d - 1 : 0),
                  "%s: %zu one-time signatures asked for", alg, u.wots);
        CHECK_MSG(mode == 2 ? u.whole == 0 && u.leaves > 0
                            : u.whole == p->d && u.leaves == (size_t)p->d << p->tree_h,
                  "%s: %zu whole trees asked for, %zu leaves", alg, u.whole, u.leaves);
        hbs_xmss_key_free(b);
        b = NULL;
    }
    test_note("%s: key generation with whole trees from the engine equal (corrupted: differs; "
              "refused: the leaves serve), and with its one-time signatures between layers",
              alg);
out:
    hbs_xmss_key_free(a);
    free(ea);
    free(eb);
}

static void run_skip_engine_hss(const char *alg, unsigned cache_height, const uint64_t *targets,
                                size_t nt)
{
    hbs_hss_params hp;
    hbs_hss_key *a = NULL, *b = NULL;
    uint8_t seed[16 + 32], pk[256], *ea = malloc(SKIP_STATE_MAX), *eb = malloc(SKIP_STATE_MAX);
    uint8_t *sa = malloc(MAX_SIG), *sb = malloc(MAX_SIG);
    size_t pklen, la, lb, used = 0;
    hbs_leaf_engine e;
    cpu_engine u;
    CHECK_INT(hbs_hss_params_parse(&hp, alg), HBS_OK);
    hp.cache_height = cache_height;
    if (!ea || !eb || !sa || !sb)
        goto out;
    test_rand_bytes(seed, sizeof seed);
    cpu_engine_init(&e, &u, NULL);
    CHECK_INT(hbs_hss_keygen(&a, pk, sizeof pk, &pklen, &hp, seed, 16 + hbs_lms_type_m(hp.lms[0]),
                             NULL, NULL),
              HBS_OK);
    CHECK_INT(hbs_hss_keygen(&b, pk, sizeof pk, &pklen, &hp, seed, 16 + hbs_lms_type_m(hp.lms[0]),
                             NULL, NULL),
              HBS_OK);
    if (!a || !b)
        goto out;
    for (size_t i = 0; i < nt; i++) {
        const size_t before = u.leaves;
        CHECK_INT(hbs_hss_key_skip_to(a, targets[i]), HBS_OK);
        CHECK_INT(hbs_hss_key_skip_to_engine(b, targets[i], &e), HBS_OK);
        used += u.leaves > before;
        la = export_hss(a, ea, SKIP_STATE_MAX);
        lb = export_hss(b, eb, SKIP_STATE_MAX);
        CHECK_MSG(la && la == lb && memcmp(ea, eb, la) == 0,
                  "%s: state after skip to %llu differs with an engine", alg,
                  (unsigned long long)targets[i]);
        CHECK_INT(hbs_hss_sign(a, sa, MAX_SIG, &la, seed, 7), HBS_OK);
        CHECK_INT(hbs_hss_sign(b, sb, MAX_SIG, &lb, seed, 7), HBS_OK);
        CHECK_MSG(la == lb && memcmp(sa, sb, la) == 0, "%s: signature after skip to %llu",
                  alg, (unsigned long long)targets[i]);
    }
    CHECK_MSG(used > 0, "%s: the engine was never used", alg);
    test_note("%s (cache %u): %zu skips equal with and without an engine (%zu used it: %zu "
              "calls, %zu leaves)", alg, cache_height, nt, used, u.calls, u.leaves);
out:
    hbs_hss_key_free(a);
    hbs_hss_key_free(b);
    free(ea);
    free(eb);
    free(sa);
    free(sb);
}

static void test_skip_engine(void)
{
    /* XMSS H10 (K 6): near skips step (cached trees from 8 steps on), far ones rebuild */
    static const uint64_t x10[] = {3, 300, 900, 1000};
    /* XMSS^MT 2 x 10: steps inside a tree and across one (three cached trees), a rebuild */
    static const uint64_t mt2[] = {500, 1500, 5000, 5100, 9000};
    /* XMSS^MT 4 x 5: many tree ends on every layer */
    static const uint64_t mt4[] = {40, 100, 1000, 1100, 40000};
    static const uint64_t h10[] = {2, 100, 700, 1000};
    static const uint64_t h55[] = {1, 37, 300, 301, 900};
    for (int trees = 0; trees <= 2; trees++) {
        run_skip_engine_xmss("XMSS-SHA2_10_256", x10, sizeof x10 / sizeof x10[0], trees);
        run_skip_engine_xmss("XMSSMT-SHA2_20/2_256", mt2, sizeof mt2 / sizeof mt2[0], trees);
        run_skip_engine_xmss("XMSSMT-SHA2_20/4_256", mt4, sizeof mt4 / sizeof mt4[0], trees);
    }
    run_keygen_trees_xmss("XMSS-SHA2_10_256");
    run_keygen_trees_xmss("XMSSMT-SHA2_20/2_256");
    run_keygen_trees_xmss("XMSSMT-SHA2_20/4_256");
    run_keygen_trees_xmss("XMSS-SHAKE_10_512");
    run_skip_engine_hss("LMS_SHA256_M32_H10/LMOTS_SHA256_N32_W4", 4, h10,
                        sizeof h10 / sizeof h10[0]);
    run_skip_engine_hss(hss55.alg, 0, h55, sizeof h55 / sizeof h55[0]);
}

const hbs_test hbs_tests_stateful[] = {
    {"reopen_lms", test_reopen_lms},
    {"reopen_hss_two_levels", test_reopen_hss},
    {"reopen_xmss", test_reopen_xmss},
    {"reopen_xmssmt", test_reopen_xmssmt},
    {"exhaust_and_split", test_exhaust_and_split},
    {"batch_reserve", test_batch_reserve},
    {"skip_engine", test_skip_engine},
    {"write_failures", test_write_failures},
    {"full_filesystem", test_full_filesystem},
    {"corrupt_file", test_corrupt_file},
    {"two_processes", test_two_processes},
    {"crash_loop", test_crash_loop},
    {NULL, NULL},
};
