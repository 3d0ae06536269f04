/* Unit tests of the x86 SHA-256 batch kernels (src/hash/x86/sha256_{avx2,avx512,shani}.c).
 *
 * Each kernel is called directly (not through the dispatcher) and compared with the
 * portable batch function, its reference, on pseudo-random messages:
 *  - every length 0..300, then 500, 1000 and 4096 + 17;
 *  - every count 0..40, so that every remainder of every lane width is met, and a few
 *    batches of 1000;
 *  - no prefix, one-block and two-block midstates, and a SHA-224 midstate (another IV);
 *  - the batch placed at the start and at the end of an allocation of exactly its size,
 *    so that a sanitizer build catches reads outside the messages; a canary after the
 *    digests catches writes past the batch;
 *  - a NULL input with length 0.
 * A kernel the CPU cannot run is reported as skipped, never as passed. */
#include <stdlib.h>
#include <string.h>

#include "hbs/hbs.h"
#include "hash/hash.h"
#include "test.h"

#if defined(__x86_64__) && !defined(HBS_NO_X86)
#include "hash/x86/x86.h"
#define HAVE_X86 1
#else
#define HAVE_X86 0
#endif
#if HAVE_X86 && (!defined(HBS_NO_AVX2) || !defined(HBS_NO_AVX512) || !defined(HBS_NO_SHANI))
#define HAVE_KERNELS 1
#else
#define HAVE_KERNELS 0
#endif

#if HAVE_KERNELS
typedef void (*sha256_many_fn)(uint8_t *out, const hbs_sha256_ctx *prefix, const uint8_t *in,
                               size_t inlen, size_t count);

#define MAX_COUNT 40
#define BIG_COUNT 1000
#define CANARY 32
#define CANARY_BYTE 0xa5

/* Prefix kinds: none, SHA-256 after 64 and 128 bytes, SHA-224 after 64 bytes. */
#define N_PREFIXES 4

static void make_prefix(hbs_sha256_ctx *p, unsigned kind)
{
    uint8_t pre[128];
    test_rand_bytes(pre, sizeof pre);
    if (kind == 3)
        hbs_sha224_init(p);
    else
        hbs_sha256_init(p);
    hbs_sha256_update(p, pre, kind == 2 ? 128 : kind ? 64 : 0);
}

static const char *prefix_name(unsigned kind)
{
    static const char *const names[N_PREFIXES] = {"no prefix", "64-byte prefix",
                                                  "128-byte prefix", "SHA-224 prefix"};
    return names[kind];
}

/* Runs fn on messages first..first+count-1 of the `total` messages in `in` and compares
 * with want (the digests of all `total`); returns 0 after reporting the first difference. */
static int check_batch(const char *kernel, sha256_many_fn fn, const hbs_sha256_ctx *prefix,
                       unsigned kind, const uint8_t *in, size_t inlen, size_t first,
                       size_t count, const uint8_t *want, uint8_t *out)
{
    const uint8_t *batch = inlen ? in + first * inlen : in;
    memset(out, CANARY_BYTE, count * 32 + CANARY);
    fn(out, prefix, batch, inlen, count);
    for (size_t i = 0; i < count; i++) {
        if (memcmp(out + 32 * i, want + 32 * (first + i), 32) != 0) {
            test_fail(__FILE__, __LINE__,
                      "%s: %s, inlen %zu, messages %zu..%zu: digest %zu differs", kernel,
                      prefix_name(kind), inlen, first, first + count - 1, i);
            return 0;
        }
    }
    for (size_t j = 0; j < CANARY; j++) {
        if (out[count * 32 + j] != CANARY_BYTE) {
            test_fail(__FILE__, __LINE__, "%s: %s, inlen %zu, count %zu: wrote past the batch",
                      kernel, prefix_name(kind), inlen, count);
            return 0;
        }
    }
    return 1;
}

/* All counts 0..MAX_COUNT of one message length, at both ends of an exact allocation.
 * Returns the number of batches that matched. */
static size_t check_length(const char *kernel, sha256_many_fn fn, size_t inlen, unsigned kind,
                           uint8_t *want, uint8_t *out)
{
    hbs_sha256_ctx prefix;
    const hbs_sha256_ctx *pp = kind ? &prefix : NULL;
    uint8_t *in = inlen ? malloc(MAX_COUNT * inlen) : NULL;
    size_t ok = 0;
    if (inlen && !in) {
        CHECK_MSG(0, "out of memory");
        return 0;
    }
    make_prefix(&prefix, kind);
    if (in)
        test_rand_bytes(in, MAX_COUNT * inlen);
    hbs_sha256_many_portable(want, pp, in, inlen, MAX_COUNT);
    for (size_t count = 0; count <= MAX_COUNT; count++) {
        if (!check_batch(kernel, fn, pp, kind, in, inlen, 0, count, want, out))
            break;
        if (!check_batch(kernel, fn, pp, kind, in, inlen, MAX_COUNT - count, count, want, out))
            break;
        ok += 2;
    }
    free(in);
    return ok;
}

/* Large batches of the lengths SLH-DSA uses most, and a few others. */
static size_t check_big(const char *kernel, sha256_many_fn fn, uint8_t *want, uint8_t *out)
{
    static const size_t lens[] = {38, 54, 86, 0, 55, 56, 64, 119, 200};
    size_t ok = 0;
    for (size_t l = 0; l < sizeof lens / sizeof lens[0]; l++) {
        size_t inlen = lens[l];
        hbs_sha256_ctx prefix;
        uint8_t *in = inlen ? malloc(BIG_COUNT * inlen) : NULL;
        if (inlen && !in) {
            CHECK_MSG(0, "out of memory");
            return ok;
        }
        make_prefix(&prefix, 1);
        if (in)
            test_rand_bytes(in, BIG_COUNT * inlen);
        hbs_sha256_many_portable(want, &prefix, in, inlen, BIG_COUNT);
        if (check_batch(kernel, fn, &prefix, 1, in, inlen, 0, BIG_COUNT, want, out))
            ok++;
        if (check_batch(kernel, fn, &prefix, 1, in, inlen, 3, BIG_COUNT - 3, want, out))
            ok++;
        free(in);
    }
    return ok;
}

static void check_kernel(const char *kernel, sha256_many_fn fn)
{
    static const size_t extra_lens[] = {500, 1000, 4096 + 17};
    uint8_t *want = malloc(BIG_COUNT * 32), *out = malloc(BIG_COUNT * 32 + CANARY);
    size_t batches = 0, lengths = 0;
    if (!want || !out) {
        CHECK_MSG(0, "out of memory");
        goto done;
    }
    for (size_t inlen = 0; inlen <= 300 + sizeof extra_lens / sizeof extra_lens[0]; inlen++) {
        size_t len = inlen <= 300 ? inlen : extra_lens[inlen - 301];
        for (unsigned kind = 0; kind < N_PREFIXES; kind++) {
            /* The SHA-224 midstate only needs the lengths around the block boundaries. */
            if (kind == 3 && len % 64 > 8 && len % 64 < 48)
                continue;
            batches += check_length(kernel, fn, len, kind, want, out);
            if (test_failed())
                goto done;
        }
        lengths++;
    }
    batches += check_big(kernel, fn, want, out);
    {
        /* NULL input with length 0 */
        uint8_t e[32];
        memset(out, CANARY_BYTE, 3 * 32 + CANARY);
        fn(out, NULL, NULL, 0, 3);
        hbs_sha256(e, NULL, 0);
        CHECK_MEM(out, e, 32);
        CHECK_MEM(out + 64, e, 32);
        CHECK_INT(out[96], CANARY_BYTE);
        fn(out, NULL, NULL, 0, 0);
    }
    test_note("%zu lengths x %d prefixes x counts 0..%d and %d, %zu batches", lengths,
              N_PREFIXES, MAX_COUNT, BIG_COUNT, batches);
done:
    free(want);
    free(out);
}
#endif /* HAVE_KERNELS */

#if HAVE_X86 && !defined(HBS_NO_AVX2)
static void test_sha256_avx2(void)
{
    if (!hbs_cpu_has_avx2()) {
        test_skip("AVX2 not supported by this CPU");
        return;
    }
    check_kernel("sha256_many_avx2", hbs_sha256_many_avx2);
}
#else
static void test_sha256_avx2(void) { test_skip("AVX2 kernel not built for this target"); }
#endif

#if HAVE_X86 && !defined(HBS_NO_AVX512)
static void test_sha256_avx512(void)
{
    if (!hbs_cpu_has_avx512()) {
        test_skip("AVX-512 not supported by this CPU");
        return;
    }
    check_kernel("sha256_many_avx512", hbs_sha256_many_avx512);
}
#else
static void test_sha256_avx512(void) { test_skip("AVX-512 kernel not built for this target"); }
#endif

#if HAVE_X86 && !defined(HBS_NO_SHANI)
static void test_sha256_shani(void)
{
    if (!hbs_cpu_has_shani()) {
        test_skip("SHA-NI not supported by this CPU");
        return;
    }
    check_kernel("sha256_many_shani", hbs_sha256_many_shani);
}
#else
static void test_sha256_shani(void) { test_skip("SHA-NI kernel not built for this target"); }
#endif

const hbs_test hbs_tests_simd_sha256[] = {
    {"simd_sha256_avx2_vs_portable", test_sha256_avx2},
    {"simd_sha256_avx512_vs_portable", test_sha256_avx512},
    {"simd_sha256_shani_vs_portable", test_sha256_shani},
    {NULL, NULL},
};
