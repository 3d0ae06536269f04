/* Unit tests of the SHA-512 SIMD kernels (src/hash/x86/sha512_*.c): each kernel is called
 * directly, not through the dispatcher, and compared with the portable batch function on
 * random messages of every length from 0 to 300 bytes and a few longer ones, every count from
 * 0 to 40 and a few large ones, without a prefix and with one- and two-block prefixes.
 *
 * Each call gets an input buffer of exactly count * inlen bytes at an odd address, so that
 * AddressSanitizer sees any read past the batch, and an output buffer at an odd address with
 * a canary after the last digest. A kernel whose instruction set this CPU lacks is reported
 * skipped, never passed. */
#include <stdlib.h>
#include <string.h>

#include "hbs/hbs.h"
#include "hash/hash.h"
#include "hash/x86/x86.h"
#include "test.h"

#if (defined(__x86_64__) || defined(__amd64__)) && !defined(HBS_NO_X86)
#define HAVE_X86 1
#else
#define HAVE_X86 0
#endif

typedef void (*sha512_many_fn)(uint8_t *out, const hbs_sha512_ctx *prefix, const uint8_t *in,
                               size_t inlen, size_t count);

#define MAX_COUNT 40
#define CANARY 67 /* bytes after the last digest that must stay untouched */
#define MAX_LEN (4096 + 17)

static const size_t LONG_LENS[] = {500, 1000, 4096 + 17};
/* For the large counts: SLH-DSA's H (70, 86 bytes) and T_l-like lengths, and the padding
 * limits around one and two blocks. */
static const size_t LARGE_COUNT_LENS[] = {0, 1, 70, 86, 111, 112, 118, 127, 128, 129, 300};
static const size_t LARGE_COUNTS[] = {1000, 1001, 1007};

/* Runs fn on count messages of inlen bytes taken from msgs and compares with want (the
 * portable digests of the same messages). Returns 1 if all is well. */
static int check_one(const char *kernel, const char *what, sha512_many_fn fn,
                     const hbs_sha512_ctx *prefix, const uint8_t *msgs, size_t inlen,
                     size_t count, const uint8_t *want)
{
    const size_t inbytes = count * inlen, outbytes = count * 64;
    uint8_t *inbuf = malloc(inbytes + 1), *outbuf = malloc(outbytes + 1 + CANARY);
    const uint8_t *in = NULL;
    uint8_t *out = NULL;
    hbs_sha512_ctx before;
    int ok = 1;

    if (!inbuf || !outbuf) {
        test_fail(__FILE__, __LINE__, "out of memory");
        free(inbuf);
        free(outbuf);
        return 0;
    }
    /* The contract allows NULL for an empty input and for the output of an empty batch. */
    if (inbytes) {
        memcpy(inbuf + 1, msgs, inbytes);
        in = inbuf + 1;
    }
    memset(outbuf, 0xee, outbytes + 1 + CANARY);
    if (count)
        out = outbuf + 1;
    if (prefix)
        before = *prefix;

    fn(out, prefix, in, inlen, count);

    if (outbytes && memcmp(outbuf + 1, want, outbytes) != 0) {
        size_t i = 0;
        while (memcmp(outbuf + 1 + 64 * i, want + 64 * i, 64) == 0)
            i++;
        test_fail(__FILE__, __LINE__, "%s, %s: inlen %zu count %zu: digest %zu differs", kernel,
                  what, inlen, count, i);
        ok = 0;
    }
    if (outbuf[0] != 0xee) {
        test_fail(__FILE__, __LINE__, "%s, %s: inlen %zu count %zu: wrote before the output",
                  kernel, what, inlen, count);
        ok = 0;
    }
    for (size_t j = 1 + outbytes; ok && j < outbytes + 1 + CANARY; j++) {
        if (outbuf[j] != 0xee) {
            test_fail(__FILE__, __LINE__, "%s, %s: inlen %zu count %zu: wrote past the batch",
                      kernel, what, inlen, count);
            ok = 0;
        }
    }
    if (inbytes && memcmp(inbuf + 1, msgs, inbytes) != 0) {
        test_fail(__FILE__, __LINE__, "%s, %s: inlen %zu count %zu: input changed", kernel,
                  what, inlen, count);
        ok = 0;
    }
    if (prefix && memcmp(&before, prefix, sizeof before) != 0) {
        test_fail(__FILE__, __LINE__, "%s, %s: inlen %zu count %zu: prefix changed", kernel,
                  what, inlen, count);
        ok = 0;
    }
    free(inbuf);
    free(outbuf);
    return ok;
}

/* Every count 0..MAX_COUNT for one message length; returns the number of calls checked, or
 * 0 after the first failure (one failure says enough). */
static size_t check_counts(const char *kernel, const char *what, sha512_many_fn fn,
                           const hbs_sha512_ctx *prefix, const uint8_t *msgs, size_t inlen,
                           uint8_t *want)
{
    hbs_sha512_many_portable(want, prefix, msgs, inlen, MAX_COUNT);
    for (size_t count = 0; count <= MAX_COUNT; count++)
        if (!check_one(kernel, what, fn, prefix, msgs, inlen, count, want))
            return 0;
    return MAX_COUNT + 1;
}

static void make_prefix(hbs_sha512_ctx *c, size_t prelen)
{
    uint8_t pre[2 * HBS_SHA512_BLOCK];
    test_rand_bytes(pre, prelen);
    hbs_sha512_init(c);
    hbs_sha512_update(c, pre, prelen);
}

__attribute__((unused)) static void check_kernel(const char *kernel, sha512_many_fn fn)
{
    static const size_t prelens[] = {0, HBS_SHA512_BLOCK, 2 * HBS_SHA512_BLOCK};
    const size_t max_count = LARGE_COUNTS[sizeof LARGE_COUNTS / sizeof LARGE_COUNTS[0] - 1];
    uint8_t *msgs = malloc(MAX_COUNT * MAX_LEN), *want = malloc(max_count * 64);
    uint8_t *big = malloc(max_count * 300);
    size_t calls = 0;

    if (!msgs || !want || !big) {
        CHECK_MSG(0, "out of memory");
        goto done;
    }
    test_rand_bytes(msgs, MAX_COUNT * MAX_LEN);
    test_rand_bytes(big, max_count * 300);

    for (size_t p = 0; p < sizeof prelens / sizeof prelens[0]; p++) {
        hbs_sha512_ctx prefix;
        const hbs_sha512_ctx *pp = NULL;
        char what[64];
        if (prelens[p]) {
            make_prefix(&prefix, prelens[p]);
            pp = &prefix;
        }
        snprintf(what, sizeof what, "prefix of %zu bytes", prelens[p]);
        for (size_t inlen = 0; inlen <= 300; inlen++)
            calls += check_counts(kernel, what, fn, pp, msgs, inlen, want);
        for (size_t l = 0; l < sizeof LONG_LENS / sizeof LONG_LENS[0]; l++)
            calls += check_counts(kernel, what, fn, pp, msgs, LONG_LENS[l], want);
    }

    /* Large counts, with the one-block prefix of SLH-DSA's PK.seed block. */
    {
        hbs_sha512_ctx prefix;
        make_prefix(&prefix, HBS_SHA512_BLOCK);
        for (size_t l = 0; l < sizeof LARGE_COUNT_LENS / sizeof LARGE_COUNT_LENS[0]; l++) {
            const size_t inlen = LARGE_COUNT_LENS[l];
            hbs_sha512_many_portable(want, &prefix, big, inlen, max_count);
            for (size_t c = 0; c < sizeof LARGE_COUNTS / sizeof LARGE_COUNTS[0]; c++)
                calls += check_one(kernel, "large count", fn, &prefix, big, inlen,
                                   LARGE_COUNTS[c], want);
        }
    }

    /* Prefixes of other kinds: another initial value (SHA-384, SHA-512/256), and a made-up
     * midstate whose byte count needs both words of the 128-bit length field. */
    {
        static const size_t lens[] = {0, 5, 70, 86, 111, 112, 118, 128, 255, 256, 300};
        hbs_sha512_ctx odd[3];
        const char *names[3] = {"sha384 prefix", "sha512/256 prefix", "huge byte count"};
        uint8_t pre[HBS_SHA512_BLOCK];
        test_rand_bytes(pre, sizeof pre);
        hbs_sha384_init(&odd[0]);
        hbs_sha512_update(&odd[0], pre, sizeof pre);
        hbs_sha512_256_init(&odd[1]);
        hbs_sha512_update(&odd[1], pre, sizeof pre);
        hbs_sha512_init(&odd[2]);
        test_rand_bytes((uint8_t *)odd[2].h, sizeof odd[2].h);
        odd[2].bytes = 0xe000000000000000ULL + 3 * HBS_SHA512_BLOCK;
        for (size_t k = 0; k < 3; k++)
            for (size_t l = 0; l < sizeof lens / sizeof lens[0]; l++)
                calls += check_counts(kernel, names[k], fn, &odd[k], msgs, lens[l], want);
    }
    test_note("%zu calls compared with portable", calls);
done:
    free(msgs);
    free(want);
    free(big);
}

static void test_sha512_avx2(void)
{
#if HAVE_X86 && !defined(HBS_NO_AVX2)
    if (!hbs_cpu_has_avx2()) {
        test_skip("AVX2 not supported by this CPU");
        return;
    }
    check_kernel("sha512_many_avx2", hbs_sha512_many_avx2);
#else
    test_skip("AVX2 backend not compiled in");
#endif
}

static void test_sha512_avx512(void)
{
#if HAVE_X86 && !defined(HBS_NO_AVX512)
    if (!hbs_cpu_has_avx512()) {
        test_skip("AVX-512 not supported by this CPU");
        return;
    }
    check_kernel("sha512_many_avx512", hbs_sha512_many_avx512);
#else
    test_skip("AVX-512 backend not compiled in");
#endif
}

const hbs_test hbs_tests_simd_sha512[] = {
    {"simd_sha512_avx2_matches_portable", test_sha512_avx2},
    {"simd_sha512_avx512_matches_portable", test_sha512_avx512},
    {NULL, NULL},
};
