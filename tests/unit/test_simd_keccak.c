/* Unit tests of the x86 SHAKE256 batch kernels (src/hash/x86/keccak_avx2.c, _avx512.c).
 *
 * Each kernel is compared with the portable batch function, the reference, on
 * pseudo-random messages:
 *  - every message length 0..300 (all positions of the tail in a word and in a rate block,
 *    one, two and three blocks), 500, 1000 and 4096+17, with counts that walk through
 *    0..40 and output lengths that walk through short, word-unaligned and multi-block ones;
 *  - every count 0..40, 1000 and 1003 for the hot lengths of SLH-DSA (64..137 byte
 *    inputs, 16/24/32 byte outputs);
 *  - every output length 0..300 for a few inputs (several squeezes).
 * The messages start right after, or end right before, an inaccessible page, so a kernel
 * that reads one byte outside the batch faults; guard bytes before and after the output
 * catch writes outside it.
 * A kernel the CPU cannot run, or the build left out, is reported skipped. */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "hash/hash.h"
#include "test.h"

#if (defined(__x86_64__) || defined(_M_X64)) && !defined(HBS_NO_X86)
#include "hash/x86/x86.h"
#if !defined(HBS_NO_AVX2)
#define HAVE_AVX2_KERNEL 1
#endif
#if !defined(HBS_NO_AVX512)
#define HAVE_AVX512_KERNEL 1
#endif
#endif

#if defined(HAVE_AVX2_KERNEL) || defined(HAVE_AVX512_KERNEL)

typedef void (*shake_many_fn)(uint8_t *out, size_t outlen, const uint8_t *in, size_t inlen,
                              size_t count);

#define GUARD 32
#define CANARY 0xa5

/* Messages placed right after or right before a page that may not be touched, so that a
 * kernel reading one byte outside the batch faults. */
typedef struct {
    uint8_t *map;
    size_t maplen;
    uint8_t *in;
} guarded_input;

static int guarded_alloc(guarded_input *g, size_t len, int at_end)
{
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    const size_t pages = (len + page - 1) / page;
    g->maplen = (pages + 2) * page;
    g->map = mmap(NULL, g->maplen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (g->map == MAP_FAILED) {
        g->map = NULL;
        return -1;
    }
    if (mprotect(g->map, page, PROT_NONE) != 0 ||
        mprotect(g->map + (pages + 1) * page, page, PROT_NONE) != 0) {
        munmap(g->map, g->maplen);
        g->map = NULL;
        return -1;
    }
    g->in = at_end ? g->map + (pages + 1) * page - len : g->map + page;
    return 0;
}

static void guarded_free(guarded_input *g)
{
    if (g->map)
        munmap(g->map, g->maplen);
    g->map = NULL;
}

/* The reference the kernel under test is compared with: the portable SHAKE256 or SHAKE128. */
static shake_many_fn reference = hbs_shake256_many_portable;

/* One comparison, with the messages placed against the guard page after them
 * (`at_end`) or before them; returns nonzero on a mismatch (already reported). */
static int compare_placed(const char *name, shake_many_fn fn, size_t inlen, size_t count,
                          size_t outlen, int at_end)
{
    guarded_input g;
    const size_t total_in = inlen * count, total_out = outlen * count;
    uint8_t *ref = malloc(total_out + 1);
    uint8_t *got = malloc(total_out + 2 * GUARD);
    const uint8_t *in;
    int bad = 0;

    if (!ref || !got || guarded_alloc(&g, total_in, at_end) != 0) {
        free(ref);
        free(got);
        CHECK_MSG(0, "out of memory");
        return 1;
    }
    test_rand_bytes(g.in, total_in);
    in = total_in ? g.in : NULL; /* a NULL base is allowed when there are no bytes */
    memset(ref, 0, total_out + 1);
    memset(got, CANARY, total_out + 2 * GUARD);

    reference(total_out ? ref : NULL, outlen, in, inlen, count);
    fn(total_out ? got + GUARD : NULL, outlen, in, inlen, count);

    if (memcmp(ref, got + GUARD, total_out) != 0) {
        size_t i = 0;
        while (ref[i] == got[GUARD + i])
            i++;
        test_fail(__FILE__, __LINE__,
                  "%s: inlen %zu count %zu outlen %zu: message %zu differs at byte %zu", name,
                  inlen, count, outlen, i / outlen, i % outlen);
        bad = 1;
    }
    for (size_t i = 0; i < GUARD; i++) {
        if (got[i] != CANARY || got[GUARD + total_out + i] != CANARY) {
            test_fail(__FILE__, __LINE__,
                      "%s: inlen %zu count %zu outlen %zu: wrote outside the output", name,
                      inlen, count, outlen);
            bad = 1;
            break;
        }
    }
    guarded_free(&g);
    free(ref);
    free(got);
    return bad;
}

static int compare_one(const char *name, shake_many_fn fn, size_t inlen, size_t count,
                       size_t outlen)
{
    return compare_placed(name, fn, inlen, count, outlen, 1) ||
           compare_placed(name, fn, inlen, count, outlen, 0);
}

static const size_t OUTLENS[] = {16, 24, 32, 1, 7, 8, 9, 64, 135, 136, 137, 200, 272, 273, 0};
#define N_OUTLENS (sizeof OUTLENS / sizeof OUTLENS[0])

static void check_kernel(const char *name, shake_many_fn fn)
{
    size_t runs = 0;
    int bad = 0;

    /* every length class, counts 0..40 in turn */
    static const size_t long_in[] = {500, 1000, 4096 + 17};
    const size_t n_in = 301 + sizeof long_in / sizeof long_in[0];
    for (size_t k = 0; k < n_in && !bad; k++) {
        const size_t len = k <= 300 ? k : long_in[k - 301];
        bad |= compare_one(name, fn, len, k % 41, OUTLENS[k % N_OUTLENS]);
        bad |= compare_one(name, fn, len, 1 + (k * 7) % 40, OUTLENS[(k + 5) % N_OUTLENS]);
        runs += 2;
    }
    /* the hot cases of SLH-DSA (F, H, PRF inputs; n-byte outputs): every count, and large
     * ones */
    static const size_t hot_in[] = {64, 80, 96, 104, 128, 135, 136, 137};
    static const size_t hot_out[] = {16, 24, 32};
    for (size_t a = 0; a < sizeof hot_in / sizeof hot_in[0] && !bad; a++)
        for (size_t b = 0; b < sizeof hot_out / sizeof hot_out[0] && !bad; b++) {
            for (size_t count = 0; count <= 40 && !bad; count++, runs++)
                bad |= compare_one(name, fn, hot_in[a], count, hot_out[b]);
            bad |= compare_one(name, fn, hot_in[a], 1000, hot_out[b]);
            bad |= compare_one(name, fn, hot_in[a], 1003, hot_out[b]);
            runs += 2;
        }
    /* every output length, through several squeezes */
    static const size_t sq_in[] = {0, 5, 64, 136, 168};
    for (size_t a = 0; a < sizeof sq_in / sizeof sq_in[0] && !bad; a++)
        for (size_t outlen = 0; outlen <= 300 && !bad; outlen++, runs++)
            bad |= compare_one(name, fn, sq_in[a], 1 + (outlen % 11), outlen);
    test_note("%zu batches match portable", runs);
}

#endif /* HAVE_AVX2_KERNEL || HAVE_AVX512_KERNEL */

static void test_simd_keccak_avx2(void)
{
#ifdef HAVE_AVX2_KERNEL
    if (!hbs_cpu_has_avx2()) {
        test_skip("AVX2 not supported by this CPU");
        return;
    }
    reference = hbs_shake256_many_portable;
    check_kernel("avx2", hbs_shake256_many_avx2);
#else
    test_skip("AVX2 backend not built");
#endif
}

static void test_simd_keccak_avx512(void)
{
#ifdef HAVE_AVX512_KERNEL
    if (!hbs_cpu_has_avx512()) {
        test_skip("AVX-512 not supported by this CPU");
        return;
    }
    reference = hbs_shake256_many_portable;
    check_kernel("avx512", hbs_shake256_many_avx512);
#else
    test_skip("AVX-512 backend not built");
#endif
}

/* SHAKE128 (rate 168, XMSS-SHAKE_*): the same kernel with the other rate. */
static void test_simd_shake128_avx512(void)
{
#ifdef HAVE_AVX512_KERNEL
    if (!hbs_cpu_has_avx512()) {
        test_skip("AVX-512 not supported by this CPU");
        return;
    }
    reference = hbs_shake128_many_portable;
    check_kernel("avx512 shake128", hbs_shake128_many_avx512);
    reference = hbs_shake256_many_portable;
#else
    test_skip("AVX-512 backend not built");
#endif
}

const hbs_test hbs_tests_simd_keccak[] = {
    {"simd_keccak_avx2_matches_portable", test_simd_keccak_avx2},
    {"simd_keccak_avx512_matches_portable", test_simd_keccak_avx512},
    {"simd_shake128_avx512_matches_portable", test_simd_shake128_avx512},
    {NULL, NULL},
};
