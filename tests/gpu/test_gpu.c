/* GPU SLH-DSA: every output compared with the CPU implementation, for all 12 sets.
 *
 * Keys from seeds, deterministic and hedged signatures (the same randomness given to both),
 * pure, pre-hash and internal interfaces, contexts, messages of many lengths, batches from
 * 1 to 10,000, the signer with its cached top layer, the device-resident entry points, the
 * ACVP vectors, and verification rejecting every kind of damage. Without a GPU every test
 * skips and says so. */
#include <stdlib.h>
#include <string.h>

#include "hbs/gpu.h"
#include "hbs/slhdsa.h"
#include "json.h"
#include "test.h"

#define NO_GPU "no CUDA GPU: this build has no CUDA or this machine has no usable GPU"

static int have_gpu(void)
{
    if (hbs_gpu_device_count() > 0)
        return 1;
    test_skip("%s", NO_GPU);
    return 0;
}

static int is_small(const hbs_slhdsa_params *p) /* the "s" sets: slow on the CPU */
{
    size_t len = strlen(hbs_slhdsa_name(p));
    return hbs_slhdsa_name(p)[len - 1] == 's';
}

static size_t rand_below(size_t bound)
{
    uint8_t b[4];
    test_rand_bytes(b, sizeof b);
    uint32_t v = (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
    return bound ? v % bound : 0;
}

/* A batch of messages of assorted lengths (including empty and long ones). */
typedef struct {
    size_t count;
    uint8_t **msgs;
    size_t *lens;
} msg_set;

static int msgs_make(msg_set *s, size_t count)
{
    s->count = count;
    s->msgs = calloc(count, sizeof *s->msgs);
    s->lens = calloc(count, sizeof *s->lens);
    if (!s->msgs || !s->lens)
        return -1;
    for (size_t i = 0; i < count; i++) {
        size_t len = i == 0 ? 0 : i == 1 ? 5000 : rand_below(300);
        s->lens[i] = len;
        s->msgs[i] = malloc(len ? len : 1);
        if (!s->msgs[i])
            return -1;
        test_rand_bytes(s->msgs[i], len);
    }
    return 0;
}

static void msgs_free(msg_set *s)
{
    for (size_t i = 0; s->msgs && i < s->count; i++)
        free(s->msgs[i]);
    free(s->msgs);
    free(s->lens);
}

/* count key pairs from random seeds, made on the CPU. */
static int cpu_keys(const hbs_slhdsa_params *p, uint8_t *sks, uint8_t *pks, size_t count)
{
    const size_t n = hbs_slhdsa_n(p);
    uint8_t seed[3 * HBS_SLHDSA_MAX_N];
    for (size_t i = 0; i < count; i++) {
        test_rand_bytes(seed, 3 * n);
        if (hbs_slhdsa_keygen_from_seed(p, sks + i * 4 * n, pks + i * 2 * n, seed) != 0)
            return -1;
    }
    return 0;
}

/* ---- key generation ---------------------------------------------------------------------- */

static void test_gpu_keygen(void)
{
    if (!have_gpu())
        return;
    size_t total = 0;
    for (int id = 0; id < HBS_SLHDSA_NUM_PARAMS; id++) {
        const hbs_slhdsa_params *p = hbs_slhdsa_params_get((hbs_slhdsa_id)id);
        const size_t n = hbs_slhdsa_n(p), count = is_small(p) ? 3 : 40;
        uint8_t *seeds = malloc(count * 3 * n), *sks = malloc(count * 4 * n),
                *pks = malloc(count * 2 * n);
        uint8_t sk[HBS_SLHDSA_MAX_SK_BYTES], pk[HBS_SLHDSA_MAX_PK_BYTES];
        CHECK(seeds && sks && pks);
        if (seeds && sks && pks) {
            test_rand_bytes(seeds, count * 3 * n);
            int rc = hbs_gpu_slhdsa_keygen_many(p, sks, pks, seeds, count);
            CHECK_MSG(rc == 0, "%s: keygen_many: %d %s", hbs_slhdsa_name(p), rc,
                      hbs_gpu_last_error());
            for (size_t i = 0; rc == 0 && i < count; i++) {
                CHECK(hbs_slhdsa_keygen_from_seed(p, sk, pk, seeds + i * 3 * n) == 0);
                CHECK_MSG(memcmp(sk, sks + i * 4 * n, 4 * n) == 0 &&
                              memcmp(pk, pks + i * 2 * n, 2 * n) == 0,
                          "%s: key %zu differs from the CPU's", hbs_slhdsa_name(p), i);
            }
            total += count;
        }
        free(seeds);
        free(sks);
        free(pks);
    }
    test_note("%zu keys over 12 sets", total);
}

/* ---- signing, compared byte for byte with the CPU ----------------------------------------- */

typedef enum { MODE_PURE, MODE_PREHASH, MODE_INTERNAL } sign_mode;

/* Signs a batch on the GPU and on the CPU, compares, then verifies on the GPU. Returns the
 * signatures (count * sig_bytes) for the damage tests, or NULL. */
static uint8_t *sign_and_compare(const hbs_slhdsa_params *p, const msg_set *ms,
                                 const uint8_t *sks, size_t nkeys, const uint8_t *pks,
                                 sign_mode mode, hbs_prehash ph, const uint8_t *ctx,
                                 size_t ctxlen, int hedged)
{
    const size_t n = hbs_slhdsa_n(p), sb = hbs_slhdsa_sig_bytes(p), count = ms->count;
    uint8_t *sigs = malloc(count * sb), *cpu = malloc(sb), *rnd = malloc(count * n + 1);
    int *res = calloc(count, sizeof *res);
    size_t *lens = malloc(count * sizeof *lens);
    const uint8_t **sp = malloc(count * sizeof *sp);
    if (!sigs || !cpu || !rnd || !res || !lens || !sp) {
        CHECK_MSG(0, "out of memory");
        goto fail;
    }
    test_rand_bytes(rnd, count * n);
    const uint8_t *const *msgs = (const uint8_t *const *)ms->msgs;
    int rc;
    if (mode == MODE_INTERNAL)
        rc = hbs_gpu_slhdsa_sign_internal_many(p, sigs, msgs, ms->lens, count, sks, nkeys,
                                               hedged ? rnd : NULL);
    else
        rc = hbs_gpu_slhdsa_sign_many(p, sigs, msgs, ms->lens, count, ctx, ctxlen,
                                      mode == MODE_PREHASH ? ph : HBS_PREHASH_NONE, sks, nkeys,
                                      hedged ? rnd : NULL);
    CHECK_MSG(rc == 0, "%s: GPU sign: %d %s", hbs_slhdsa_name(p), rc, hbs_gpu_last_error());
    if (rc)
        goto fail;
    for (size_t i = 0; i < count; i++) {
        const uint8_t *sk = sks + (nkeys == 1 ? 0 : i * 4 * n);
        const uint8_t *r = hedged ? rnd + i * n : NULL;
        if (mode == MODE_INTERNAL)
            rc = hbs_slhdsa_sign_internal(p, cpu, ms->msgs[i], ms->lens[i], sk, r);
        else
            rc = hbs_slhdsa_sign_ex(p, cpu, ms->msgs[i], ms->lens[i], ctx, ctxlen,
                                    mode == MODE_PREHASH ? ph : HBS_PREHASH_NONE, sk, r);
        CHECK(rc == 0);
        if (memcmp(cpu, sigs + i * sb, sb) != 0) {
            size_t at = 0;
            while (sigs[i * sb + at] == cpu[at])
                at++;
            CHECK_MSG(0, "%s mode %d ph %d item %zu (msg %zu bytes): GPU signature differs "
                      "from the CPU's at byte %zu of %zu", hbs_slhdsa_name(p), (int)mode,
                      (int)ph, i, ms->lens[i], at, sb);
            goto fail;
        }
        sp[i] = sigs + i * sb;
        lens[i] = sb;
    }
    if (mode == MODE_INTERNAL)
        rc = hbs_gpu_slhdsa_verify_internal_many(p, res, sp, lens, msgs, ms->lens, count, pks,
                                                 nkeys);
    else
        rc = hbs_gpu_slhdsa_verify_many(p, res, sp, lens, msgs, ms->lens, count, ctx, ctxlen,
                                        mode == MODE_PREHASH ? ph : HBS_PREHASH_NONE, pks,
                                        nkeys);
    CHECK_MSG(rc == 0, "%s mode %d: GPU verify of good signatures: %d %s", hbs_slhdsa_name(p),
              (int)mode, rc, hbs_gpu_last_error());
    free(cpu);
    free(rnd);
    free(res);
    free(lens);
    free(sp);
    return sigs;
fail:
    free(sigs);
    free(cpu);
    free(rnd);
    free(res);
    free(lens);
    free(sp);
    return NULL;
}

/* Damaged copies of each signature: one bit flipped in R, in FORS, in every hypertree
 * layer, and every wrong length; the GPU must reject each (and accept the original). */
static void check_damage(const hbs_slhdsa_params *p, const uint8_t *sigs, const msg_set *ms,
                         const uint8_t *pks, size_t npks, const uint8_t *ctx, size_t ctxlen)
{
    const size_t n = hbs_slhdsa_n(p), sb = hbs_slhdsa_sig_bytes(p);
    const size_t len = 2 * n + 3;
    /* sig = R | FORS | d layers of (len + h') * n: d and h' of each set (FIPS 205 Table 2) */
    static const unsigned hts[12][2] = {{7, 9}, {22, 3}, {7, 9}, {22, 3}, {8, 8}, {17, 4},
                                        {7, 9}, {22, 3}, {7, 9}, {22, 3}, {8, 8}, {17, 4}};
    const hbs_slhdsa_id id = hbs_slhdsa_params_id(p);
    const size_t layers = hts[id][0], layer_bytes = (len + hts[id][1]) * n;
    const size_t fors = sb - n - layers * layer_bytes;
    const size_t variants = 2 + layers + 3; /* R, FORS, each layer, 3 lengths */
    const size_t count = ms->count * variants;
    uint8_t *bad = malloc(count * (sb + 1));
    const uint8_t **sp = malloc(count * sizeof *sp), **mp = malloc(count * sizeof *mp);
    size_t *lens = malloc(count * sizeof *lens), *mlens = malloc(count * sizeof *mlens);
    uint8_t *pkv = malloc(count * 2 * n);
    int *res = malloc(count * sizeof *res);
    if (!bad || !sp || !mp || !lens || !mlens || !pkv || !res) {
        CHECK_MSG(0, "out of memory");
        goto done;
    }
    size_t v = 0;
    for (size_t i = 0; i < ms->count; i++) {
        for (size_t k = 0; k < variants; k++, v++) {
            uint8_t *b = bad + v * (sb + 1);
            memcpy(b, sigs + i * sb, sb);
            b[sb] = 0;
            lens[v] = sb;
            size_t at;
            if (k == 0)
                at = rand_below(n);
            else if (k == 1)
                at = n + rand_below(fors);
            else if (k < 2 + layers)
                at = n + fors + (k - 2) * layer_bytes + rand_below(layer_bytes);
            else
                at = sb; /* no flip: a wrong length */
            if (at < sb)
                b[at] ^= (uint8_t)(1u << rand_below(8));
            if (k == 2 + layers)
                lens[v] = sb - 1;
            else if (k == 3 + layers)
                lens[v] = sb + 1;
            else if (k == 4 + layers)
                lens[v] = 0;
            sp[v] = b;
            mp[v] = ms->msgs[i];
            mlens[v] = ms->lens[i];
            memcpy(pkv + v * 2 * n, pks + (npks == 1 ? 0 : i * 2 * n), 2 * n);
        }
    }
    int rc = hbs_gpu_slhdsa_verify_many(p, res, sp, lens, mp, mlens, count, ctx, ctxlen,
                                        HBS_PREHASH_NONE, pkv, count);
    CHECK_MSG(rc == HBS_ERR_VERIFY_FAILED, "%s: damaged batch verify returned %d %s",
              hbs_slhdsa_name(p), rc, hbs_gpu_last_error());
    size_t accepted = 0;
    for (size_t i = 0; i < count; i++)
        accepted += res[i] == 0;
    CHECK_MSG(accepted == 0, "%s: %zu of %zu damaged signatures accepted", hbs_slhdsa_name(p),
              accepted, count);
done:
    free(bad);
    free(sp);
    free(mp);
    free(lens);
    free(mlens);
    free(pkv);
    free(res);
}

static const hbs_prehash prehashes[] = {
    HBS_PREHASH_SHA2_256, HBS_PREHASH_SHA2_512,   HBS_PREHASH_SHAKE_128,
    HBS_PREHASH_SHA3_256, HBS_PREHASH_SHAKE_256,  HBS_PREHASH_SHA2_224,
    HBS_PREHASH_SHA2_384, HBS_PREHASH_SHA2_512_224, HBS_PREHASH_SHA2_512_256,
    HBS_PREHASH_SHA3_224, HBS_PREHASH_SHA3_384,   HBS_PREHASH_SHA3_512};

static void test_gpu_sign_all_sets(void)
{
    if (!have_gpu())
        return;
    size_t signed_total = 0;
    for (int id = 0; id < HBS_SLHDSA_NUM_PARAMS && !test_failed(); id++) {
        const hbs_slhdsa_params *p = hbs_slhdsa_params_get((hbs_slhdsa_id)id);
        const size_t n = hbs_slhdsa_n(p), count = is_small(p) ? 3 : 6;
        uint8_t *sks = malloc(count * 4 * n), *pks = malloc(count * 2 * n), ctx[255];
        msg_set ms = {0, NULL, NULL};
        if (!sks || !pks || msgs_make(&ms, count) || cpu_keys(p, sks, pks, count)) {
            CHECK_MSG(0, "setup failed");
            free(sks);
            free(pks);
            msgs_free(&ms);
            continue;
        }
        const size_t ctxlen = rand_below(256);
        test_rand_bytes(ctx, sizeof ctx);
        /* pure, a context, deterministic, a key per message */
        uint8_t *sigs = sign_and_compare(p, &ms, sks, count, pks, MODE_PURE, HBS_PREHASH_NONE,
                                         ctx, ctxlen, 0);
        if (sigs)
            check_damage(p, sigs, &ms, pks, count, ctx, ctxlen);
        free(sigs);
        /* pre-hash, hedged, one key */
        sigs = sign_and_compare(p, &ms, sks, 1, pks, MODE_PREHASH,
                                prehashes[id % (sizeof prehashes / sizeof prehashes[0])], ctx,
                                ctxlen / 2, 1);
        free(sigs);
        /* internal, hedged, a key per message */
        sigs = sign_and_compare(p, &ms, sks, count, pks, MODE_INTERNAL, HBS_PREHASH_NONE, NULL,
                                0, 1);
        free(sigs);
        /* the latency entry point */
        {
            uint8_t *one = malloc(hbs_slhdsa_sig_bytes(p)), *cpu = malloc(hbs_slhdsa_sig_bytes(p));
            if (one && cpu) {
                int rc = hbs_gpu_slhdsa_sign(p, one, ms.msgs[2], ms.lens[2], ctx, ctxlen,
                                             HBS_PREHASH_NONE, sks, NULL);
                CHECK_MSG(rc == 0, "%s: hbs_gpu_slhdsa_sign: %d %s", hbs_slhdsa_name(p), rc,
                          hbs_gpu_last_error());
                CHECK(hbs_slhdsa_sign_ex(p, cpu, ms.msgs[2], ms.lens[2], ctx, ctxlen,
                                         HBS_PREHASH_NONE, sks, NULL) == 0);
                CHECK_MSG(memcmp(one, cpu, hbs_slhdsa_sig_bytes(p)) == 0,
                          "%s: one-signature path differs from the CPU", hbs_slhdsa_name(p));
            }
            free(one);
            free(cpu);
        }
        signed_total += 3 * count + 1;
        free(sks);
        free(pks);
        msgs_free(&ms);
    }
    test_note("%zu signatures over 12 sets match the CPU; damaged copies rejected",
              signed_total);
}

/* ---- the one-signature path, called again and again ----------------------------------------
 * From the second call on it replays a captured CUDA graph: every replay must still give the
 * CPU's signature, for new messages, contexts and randomness. */
static void test_gpu_latency_repeat(void)
{
    if (!have_gpu())
        return;
    static const hbs_slhdsa_id ids[] = {HBS_SLHDSA_SHA2_128F, HBS_SLHDSA_SHAKE_192F};
    size_t done = 0;
    for (size_t t = 0; t < sizeof ids / sizeof ids[0]; t++) {
        const hbs_slhdsa_params *p = hbs_slhdsa_params_get(ids[t]);
        const size_t n = hbs_slhdsa_n(p), sb = hbs_slhdsa_sig_bytes(p);
        uint8_t sk[HBS_SLHDSA_MAX_SK_BYTES], pk[HBS_SLHDSA_MAX_PK_BYTES], msg[64], ctx[16],
            rnd[HBS_SLHDSA_MAX_N];
        uint8_t *gpu = malloc(sb), *cpu = malloc(sb);
        if (!gpu || !cpu || cpu_keys(p, sk, pk, 1)) {
            CHECK_MSG(0, "setup failed");
            free(gpu);
            free(cpu);
            continue;
        }
        for (int i = 0; i < 8; i++) {
            const size_t mlen = (size_t)(i * 7) % sizeof msg, clen = (size_t)i % sizeof ctx;
            const uint8_t *r = i & 1 ? rnd : NULL;
            test_rand_bytes(msg, sizeof msg);
            test_rand_bytes(ctx, sizeof ctx);
            test_rand_bytes(rnd, n);
            if (i == 4)
                hbs_gpu_release(); /* pools, streams and graphs are set up again */
            int rc = hbs_gpu_slhdsa_sign(p, gpu, msg, mlen, ctx, clen, HBS_PREHASH_NONE, sk, r);
            CHECK_MSG(rc == 0, "%s call %d: %d %s", hbs_slhdsa_name(p), i, rc, hbs_gpu_last_error());
            CHECK(hbs_slhdsa_sign_ex(p, cpu, msg, mlen, ctx, clen, HBS_PREHASH_NONE, sk, r) == 0);
            CHECK_MSG(memcmp(gpu, cpu, sb) == 0, "%s call %d differs from the CPU",
                      hbs_slhdsa_name(p), i);
            done++;
        }
        free(gpu);
        free(cpu);
    }
    test_note("%zu single signatures in a row match the CPU (the pools released halfway)", done);
}

/* ---- big batches ------------------------------------------------------------------------ */

static void big_batch(const hbs_slhdsa_params *p, size_t count, int many_keys)
{
    const size_t n = hbs_slhdsa_n(p), sb = hbs_slhdsa_sig_bytes(p);
    const size_t nkeys = many_keys ? count : 1;
    uint8_t *seeds = malloc(nkeys * 3 * n), *sks = malloc(nkeys * 4 * n),
            *pks = malloc(nkeys * 2 * n), *sigs = malloc(count * sb), *rnd = malloc(count * n),
            *cpu = malloc(sb);
    uint8_t sk1[HBS_SLHDSA_MAX_SK_BYTES], pk1[HBS_SLHDSA_MAX_PK_BYTES];
    const uint8_t **sp = malloc(count * sizeof *sp);
    size_t *lens = malloc(count * sizeof *lens);
    int *res = malloc(count * sizeof *res);
    msg_set ms = {0, NULL, NULL};
    if (!seeds || !sks || !pks || !sigs || !rnd || !cpu || !sp || !lens || !res ||
        msgs_make(&ms, count)) {
        CHECK_MSG(0, "out of memory");
        goto done;
    }
    test_rand_bytes(seeds, nkeys * 3 * n);
    test_rand_bytes(rnd, count * n);
    int rc = hbs_gpu_slhdsa_keygen_many(p, sks, pks, seeds, nkeys);
    CHECK_MSG(rc == 0, "keygen: %d %s", rc, hbs_gpu_last_error());
    if (rc)
        goto done;
    for (size_t s = 0; s < 8; s++) {
        size_t i = s == 0 ? nkeys - 1 : rand_below(nkeys);
        CHECK(hbs_slhdsa_keygen_from_seed(p, sk1, pk1, seeds + i * 3 * n) == 0);
        CHECK_MSG(memcmp(sk1, sks + i * 4 * n, 4 * n) == 0, "%s: batch key %zu differs",
                  hbs_slhdsa_name(p), i);
    }
    rc = hbs_gpu_slhdsa_sign_many(p, sigs, (const uint8_t *const *)ms.msgs, ms.lens, count,
                                  NULL, 0, HBS_PREHASH_NONE, sks, nkeys, rnd);
    CHECK_MSG(rc == 0, "sign: %d %s", rc, hbs_gpu_last_error());
    if (rc)
        goto done;
    for (size_t s = 0; s < 6; s++) {
        size_t i = s == 0 ? count - 1 : rand_below(count);
        const uint8_t *sk = sks + (many_keys ? i * 4 * n : 0);
        CHECK(hbs_slhdsa_sign_ex(p, cpu, ms.msgs[i], ms.lens[i], NULL, 0, HBS_PREHASH_NONE, sk,
                                 rnd + i * n) == 0);
        CHECK_MSG(memcmp(cpu, sigs + i * sb, sb) == 0, "%s: batch signature %zu of %zu differs",
                  hbs_slhdsa_name(p), i, count);
    }
    /* every tenth signature damaged: exactly those must fail */
    for (size_t i = 0; i < count; i++) {
        if (i % 10 == 3)
            sigs[i * sb + rand_below(sb)] ^= 0x10;
        sp[i] = sigs + i * sb;
        lens[i] = sb;
    }
    rc = hbs_gpu_slhdsa_verify_many(p, res, sp, lens, (const uint8_t *const *)ms.msgs, ms.lens,
                                    count, NULL, 0, HBS_PREHASH_NONE, pks, nkeys);
    CHECK_MSG(rc == (count > 3 ? HBS_ERR_VERIFY_FAILED : 0), "verify of %zu: %d %s", count, rc,
              hbs_gpu_last_error());
    size_t wrong = 0;
    for (size_t i = 0; i < count; i++)
        wrong += (res[i] == 0) != (i % 10 != 3);
    CHECK_MSG(wrong == 0, "%s: %zu of %zu verdicts wrong", hbs_slhdsa_name(p), wrong, count);
    test_note("%s: %zu signatures, %s", hbs_slhdsa_name(p), count,
              many_keys ? "a key each" : "one key");
done:
    free(seeds);
    free(sks);
    free(pks);
    free(sigs);
    free(rnd);
    free(cpu);
    free(sp);
    free(lens);
    free(res);
    msgs_free(&ms);
}

static void test_gpu_big_batches(void)
{
    if (!have_gpu())
        return;
    big_batch(hbs_slhdsa_params_get(HBS_SLHDSA_SHA2_128F), 10000, 1);
    big_batch(hbs_slhdsa_params_get(HBS_SLHDSA_SHAKE_128F), 10000, 0);
    big_batch(hbs_slhdsa_params_get(HBS_SLHDSA_SHA2_128S), 2000, 0);
    /* 256s needs more than one chunk of scratch at this size */
    big_batch(hbs_slhdsa_params_get(HBS_SLHDSA_SHA2_256S), 600, 1);
    static const size_t odd[] = {1, 2, 31, 257};
    for (size_t i = 0; i < sizeof odd / sizeof odd[0]; i++)
        big_batch(hbs_slhdsa_params_get(HBS_SLHDSA_SHA2_192F), odd[i], (int)(i & 1));
}

/* ---- page-locked memory (hbs_gpu_host_alloc) ---------------------------------------------- */

/* A batch signed into page-locked memory (the GPU copies the signatures there itself) equals
 * the batch signed into malloc'd memory, and the CPU's; verified from there (each part of
 * the batch that is one run of signatures goes up as it is): all valid; one flipped bit
 * fails alone; an extended one (which breaks its part's run: that part is gathered as
 * usual) fails alone. 9,000 signatures: two parts. */
static void pinned_batch(const hbs_slhdsa_params *p, size_t count)
{
    const size_t sb = hbs_slhdsa_sig_bytes(p);
    uint8_t sk[4 * HBS_SLHDSA_MAX_N], pk[2 * HBS_SLHDSA_MAX_N], *plain = malloc(count * sb),
            *cpu = malloc(sb), *pin = NULL;
    const uint8_t **sp = malloc(count * sizeof *sp);
    size_t *lens = malloc(count * sizeof *lens), wrong = 0;
    int *res = malloc(count * sizeof *res), rc;
    msg_set ms = {0};
    if (!plain || !cpu || !sp || !lens || !res || msgs_make(&ms, count) != 0 ||
        cpu_keys(p, sk, pk, 1) != 0) {
        CHECK(0);
        goto done;
    }
    rc = hbs_gpu_host_alloc((void **)&pin, count * sb);
    CHECK_MSG(rc == HBS_OK, "hbs_gpu_host_alloc: %d %s", rc, hbs_gpu_last_error());
    if (rc != HBS_OK)
        goto done;
    CHECK_INT(hbs_gpu_slhdsa_sign_many(p, plain, (const uint8_t *const *)ms.msgs, ms.lens, count,
                                       NULL, 0, HBS_PREHASH_NONE, sk, 1, NULL),
              HBS_OK);
    memset(pin, 0xa5, count * sb);
    CHECK_INT(hbs_gpu_slhdsa_sign_many(p, pin, (const uint8_t *const *)ms.msgs, ms.lens, count,
                                       NULL, 0, HBS_PREHASH_NONE, sk, 1, NULL),
              HBS_OK);
    CHECK_MSG(memcmp(plain, pin, count * sb) == 0, "%s: signatures into page-locked memory "
              "differ from those into malloc'd memory", hbs_slhdsa_name(p));
    for (size_t i = 0; i < count; i += count / 3) {
        CHECK_INT(hbs_slhdsa_sign_ex(p, cpu, ms.msgs[i], ms.lens[i], NULL, 0, HBS_PREHASH_NONE,
                                     sk, NULL),
                  HBS_OK);
        CHECK_MSG(memcmp(cpu, pin + i * sb, sb) == 0, "%s: signature %zu differs from the CPU's",
                  hbs_slhdsa_name(p), i);
    }
    for (size_t i = 0; i < count; i++) {
        sp[i] = pin + i * sb;
        lens[i] = sb;
    }
    const size_t flip = 5, ext = count - 100;
    for (int round = 0; round < 3; round++) {
        if (round == 1)
            pin[flip * sb + sb / 3] ^= 0x04;
        if (round == 2)
            lens[ext] = sb + 1;
        rc = hbs_gpu_slhdsa_verify_many(p, res, sp, lens, (const uint8_t *const *)ms.msgs,
                                        ms.lens, count, NULL, 0, HBS_PREHASH_NONE, pk, 1);
        CHECK_MSG(rc == (round ? HBS_ERR_VERIFY_FAILED : 0), "%s: verify round %d: %d %s",
                  hbs_slhdsa_name(p), round, rc, hbs_gpu_last_error());
        for (size_t i = 0; i < count; i++)
            wrong += (res[i] == 0) == ((round >= 1 && i == flip) || (round == 2 && i == ext));
    }
    CHECK_MSG(wrong == 0, "%s: %zu verdicts wrong", hbs_slhdsa_name(p), wrong);
    test_note("%s: %zu signatures into and verified from page-locked memory",
              hbs_slhdsa_name(p), count);
done:
    hbs_gpu_host_free(pin);
    free(plain);
    free(cpu);
    free(sp);
    free(lens);
    free(res);
    msgs_free(&ms);
}

static void test_gpu_pinned(void)
{
    if (!have_gpu())
        return;
    pinned_batch(hbs_slhdsa_params_get(HBS_SLHDSA_SHA2_128F), 9000);
    pinned_batch(hbs_slhdsa_params_get(HBS_SLHDSA_SHAKE_192F), 300);
}

/* ---- signer with the cached top layer ------------------------------------------------------ */

static void test_gpu_signer(void)
{
    if (!have_gpu())
        return;
    static const hbs_slhdsa_id ids[] = {HBS_SLHDSA_SHA2_128S, HBS_SLHDSA_SHAKE_128F,
                                        HBS_SLHDSA_SHA2_256F, HBS_SLHDSA_SHAKE_192S};
    for (size_t t = 0; t < sizeof ids / sizeof ids[0]; t++) {
        const hbs_slhdsa_params *p = hbs_slhdsa_params_get(ids[t]);
        const size_t n = hbs_slhdsa_n(p), sb = hbs_slhdsa_sig_bytes(p), count = 40;
        uint8_t sk[HBS_SLHDSA_MAX_SK_BYTES], pk[HBS_SLHDSA_MAX_PK_BYTES], ctx[7] = "context";
        uint8_t *a = malloc(count * sb), *b = malloc(count * sb), *rnd = malloc(count * n);
        msg_set ms = {0, NULL, NULL};
        hbs_gpu_signer *s = NULL;
        if (!a || !b || !rnd || msgs_make(&ms, count) || cpu_keys(p, sk, pk, 1)) {
            CHECK_MSG(0, "setup failed");
            goto next;
        }
        test_rand_bytes(rnd, count * n);
        int rc = hbs_gpu_signer_new(&s, p, sk);
        CHECK_MSG(rc == 0, "%s: signer_new: %d %s", hbs_slhdsa_name(p), rc, hbs_gpu_last_error());
        if (rc)
            goto next;
        for (int hedged = 0; hedged < 2; hedged++) {
            rc = hbs_gpu_signer_sign_many(s, a, (const uint8_t *const *)ms.msgs, ms.lens, count,
                                          ctx, sizeof ctx, HBS_PREHASH_NONE, hedged ? rnd : NULL);
            CHECK_MSG(rc == 0, "signer_sign_many: %d %s", rc, hbs_gpu_last_error());
            rc = hbs_gpu_slhdsa_sign_many(p, b, (const uint8_t *const *)ms.msgs, ms.lens, count,
                                          ctx, sizeof ctx, HBS_PREHASH_NONE, sk, 1,
                                          hedged ? rnd : NULL);
            CHECK(rc == 0);
            CHECK_MSG(memcmp(a, b, count * sb) == 0, "%s: signer output differs",
                      hbs_slhdsa_name(p));
        }
        /* and the CPU agrees on one of them */
        CHECK(hbs_slhdsa_sign_ex(p, b, ms.msgs[5], ms.lens[5], ctx, sizeof ctx,
                                 HBS_PREHASH_NONE, sk, rnd + 5 * n) == 0);
        CHECK_MSG(memcmp(a + 5 * sb, b, sb) == 0, "%s: signer differs from the CPU",
                  hbs_slhdsa_name(p));
        /* a key whose PK.root does not match is refused */
        {
            hbs_gpu_signer *bad = NULL;
            sk[3 * n] ^= 1;
            CHECK_INT(hbs_gpu_signer_new(&bad, p, sk), HBS_ERR_MALFORMED_KEY);
            CHECK(bad == NULL);
            sk[3 * n] ^= 1;
        }
    next:
        hbs_gpu_signer_free(s);
        free(a);
        free(b);
        free(rnd);
        msgs_free(&ms);
    }
}

/* ---- device-resident entry points ---------------------------------------------------------- */

static void test_gpu_device_resident(void)
{
    if (!have_gpu())
        return;
    const hbs_slhdsa_params *p = hbs_slhdsa_params_get(HBS_SLHDSA_SHA2_128F);
    const size_t n = hbs_slhdsa_n(p), sb = hbs_slhdsa_sig_bytes(p), count = 100;
    uint8_t sk[HBS_SLHDSA_MAX_SK_BYTES], pk[HBS_SLHDSA_MAX_PK_BYTES];
    uint8_t *mp = malloc(count * 40), *sigs = malloc(count * sb), *cpu = malloc(sb);
    uint64_t moff[100];
    uint32_t mlen[100];
    int res[100];
    void *d_mp = NULL, *d_off = NULL, *d_len = NULL, *d_sk = NULL, *d_pk = NULL, *d_sigs = NULL,
         *d_res = NULL;
    if (!mp || !sigs || !cpu || cpu_keys(p, sk, pk, 1)) {
        CHECK_MSG(0, "setup failed");
        goto done;
    }
    test_rand_bytes(mp, count * 40);
    for (size_t i = 0; i < count; i++) {
        moff[i] = i * 40;
        mlen[i] = (uint32_t)(i % 41);
    }
    int rc = hbs_gpu_alloc(0, &d_mp, count * 40);
    if (!rc) rc = hbs_gpu_alloc(0, &d_off, sizeof moff);
    if (!rc) rc = hbs_gpu_alloc(0, &d_len, sizeof mlen);
    if (!rc) rc = hbs_gpu_alloc(0, &d_sk, 4 * n);
    if (!rc) rc = hbs_gpu_alloc(0, &d_pk, 2 * n);
    if (!rc) rc = hbs_gpu_alloc(0, &d_sigs, count * sb);
    if (!rc) rc = hbs_gpu_alloc(0, &d_res, sizeof res);
    if (!rc) rc = hbs_gpu_copy_to(0, d_mp, mp, count * 40);
    if (!rc) rc = hbs_gpu_copy_to(0, d_off, moff, sizeof moff);
    if (!rc) rc = hbs_gpu_copy_to(0, d_len, mlen, sizeof mlen);
    if (!rc) rc = hbs_gpu_copy_to(0, d_sk, sk, 4 * n);
    if (!rc) rc = hbs_gpu_copy_to(0, d_pk, pk, 2 * n);
    if (!rc) rc = hbs_gpu_slhdsa_sign_device(p, 0, d_sigs, d_mp, d_off, d_len, count, d_sk, 1, NULL);
    if (!rc) rc = hbs_gpu_copy_from(0, sigs, d_sigs, count * sb);
    if (!rc) rc = hbs_gpu_slhdsa_verify_device(p, 0, d_res, d_sigs, d_mp, d_off, d_len, count, d_pk, 1);
    if (!rc) rc = hbs_gpu_copy_from(0, res, d_res, sizeof res);
    CHECK_MSG(rc == 0, "device-resident: %d %s", rc, hbs_gpu_last_error());
    for (size_t i = 0; rc == 0 && i < count; i++) {
        CHECK_MSG(res[i] == 0, "device-resident verify rejected item %zu", i);
        if (i % 33 == 0) {
            CHECK(hbs_slhdsa_sign_internal(p, cpu, mp + moff[i], mlen[i], sk, NULL) == 0);
            CHECK_MSG(memcmp(cpu, sigs + i * sb, sb) == 0, "device-resident item %zu differs", i);
        }
    }
done:
    hbs_gpu_free(0, d_mp);
    hbs_gpu_free(0, d_off);
    hbs_gpu_free(0, d_len);
    hbs_gpu_free(0, d_sk);
    hbs_gpu_free(0, d_pk);
    hbs_gpu_free(0, d_sigs);
    hbs_gpu_free(0, d_res);
    free(mp);
    free(sigs);
    free(cpu);
}

/* ---- misuse --------------------------------------------------------------------------------- */

static void test_gpu_misuse(void)
{
    const hbs_slhdsa_params *p = hbs_slhdsa_params_get(HBS_SLHDSA_SHA2_128F);
    uint8_t sig[HBS_SLHDSA_128F_SIG_BYTES], sk[64] = {0};
    const uint8_t *m[1] = {sk};
    size_t l[1] = {3};
    if (!have_gpu()) {
        CHECK_INT(hbs_gpu_slhdsa_sign_many(p, sig, m, l, 1, NULL, 0, HBS_PREHASH_NONE, sk, 1,
                                           NULL), HBS_ERR_NO_GPU);
        int none = 0;
        CHECK_INT(hbs_gpu_use_devices(&none, 1), HBS_ERR_NO_GPU);
        CHECK_INT(hbs_gpu_devices_used(NULL, 0), 0);
        return;
    }
    CHECK_INT(hbs_gpu_slhdsa_sign_many(p, sig, m, l, 1, NULL, 3, HBS_PREHASH_NONE, sk, 1, NULL),
              HBS_ERR_INVALID_ARGUMENT);
    CHECK_INT(hbs_gpu_slhdsa_sign_many(p, sig, m, l, 1, sk, 256, HBS_PREHASH_NONE, sk, 1, NULL),
              HBS_ERR_CONTEXT_TOO_LONG);
    CHECK_INT(hbs_gpu_slhdsa_sign_many(p, sig, m, l, 1, NULL, 0, HBS_PREHASH_NUM, sk, 1, NULL),
              HBS_ERR_UNKNOWN_PREHASH);
    CHECK_INT(hbs_gpu_slhdsa_sign_many(p, sig, m, l, 1, NULL, 0, HBS_PREHASH_NONE, sk, 2, NULL),
              HBS_ERR_INVALID_ARGUMENT);
    CHECK_INT(hbs_gpu_slhdsa_sign_many(NULL, sig, m, l, 1, NULL, 0, HBS_PREHASH_NONE, sk, 1,
                                       NULL), HBS_ERR_INVALID_ARGUMENT);
    int dev = 0, used[64], twice[2] = {0, 0}, beyond = hbs_gpu_device_count();
    CHECK_INT(hbs_gpu_use_devices(&dev, 1), 0);
    CHECK_INT(hbs_gpu_devices_used(used, 64), 1);
    CHECK_INT(used[0], 0);
    CHECK_INT(hbs_gpu_use_devices(twice, 2), HBS_ERR_INVALID_ARGUMENT);
    CHECK_INT(hbs_gpu_use_devices(&beyond, 1), HBS_ERR_INVALID_ARGUMENT);
    CHECK_INT(hbs_gpu_devices_used(used, 64), 1); /* a refused choice changes nothing */
    CHECK_INT(hbs_gpu_use_devices(NULL, 0), 0);
    CHECK_INT(hbs_gpu_devices_used(NULL, 0), hbs_gpu_device_count());
    char name[128];
    CHECK_INT(hbs_gpu_device_name(0, name, sizeof name), 0);
    test_note("GPU 0: %s; %d GPU(s)", name, hbs_gpu_device_count());
}

/* ---- ACVP --------------------------------------------------------------------------------- */

static json *load_vectors(const char *rel)
{
    const char *dir = test_vectors_dir();
    char path[4096];
    size_t len;
    if (!dir) {
        test_skip("vectors folder not found: set HBS_VECTORS");
        return NULL;
    }
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    uint8_t *text = test_read_file(path, &len);
    if (!text) {
        test_skip("%s not found", path);
        return NULL;
    }
    json *doc = json_parse((const char *)text, len);
    free(text);
    CHECK_MSG(doc != NULL, "%s: malformed JSON", path);
    return doc;
}

static void test_gpu_acvp_keygen(void)
{
    if (!have_gpu())
        return;
    json *doc = load_vectors("acvp/SLH-DSA-keyGen-FIPS205/internalProjection.json");
    if (!doc)
        return;
    const json *groups = json_get(doc, "testGroups");
    size_t ok = 0, total = 0;
    for (size_t g = 0; g < json_len(groups); g++) {
        const json *grp = json_at(groups, g);
        const hbs_slhdsa_params *p =
            hbs_slhdsa_params_by_name(json_str(json_get(grp, "parameterSet")));
        const json *tests = json_get(grp, "tests");
        CHECK(p != NULL);
        if (!p)
            continue;
        const size_t n = hbs_slhdsa_n(p), count = json_len(tests);
        uint8_t *seeds = calloc(count, 3 * n), *sks = malloc(count * 4 * n),
                *pks = malloc(count * 2 * n);
        for (size_t i = 0; seeds && i < count; i++) {
            const char *f[3] = {"skSeed", "skPrf", "pkSeed"};
            for (int j = 0; j < 3; j++) {
                size_t l = 0;
                uint8_t *v = json_hex(json_at(tests, i), f[j], &l);
                CHECK(v && l == n);
                if (v && l == n)
                    memcpy(seeds + i * 3 * n + j * n, v, n);
                free(v);
            }
        }
        int rc = seeds && sks && pks ? hbs_gpu_slhdsa_keygen_many(p, sks, pks, seeds, count) : -1;
        CHECK_MSG(rc == 0, "keygen: %d %s", rc, hbs_gpu_last_error());
        for (size_t i = 0; rc == 0 && i < count; i++) {
            size_t skl = 0, pkl = 0;
            uint8_t *esk = json_hex(json_at(tests, i), "sk", &skl);
            uint8_t *epk = json_hex(json_at(tests, i), "pk", &pkl);
            int good = esk && epk && skl == 4 * n && pkl == 2 * n &&
                       memcmp(esk, sks + i * 4 * n, 4 * n) == 0 &&
                       memcmp(epk, pks + i * 2 * n, 2 * n) == 0;
            CHECK_MSG(good, "%s keyGen tcId %lld differs", hbs_slhdsa_name(p),
                      json_int(json_get(json_at(tests, i), "tcId"), -1));
            ok += good;
            free(esk);
            free(epk);
        }
        total += count;
        free(seeds);
        free(sks);
        free(pks);
    }
    json_free(doc);
    test_note("%zu/%zu ACVP keyGen vectors", ok, total);
}

/* Runs every sigGen test of a file on the GPU; compares with the expected signature when the
 * file has one, else with the CPU's; the GPU verifies its own signature. */
static void acvp_siggen(const char *rel, int answers)
{
    json *doc = load_vectors(rel);
    if (!doc)
        return;
    const json *groups = json_get(doc, "testGroups");
    size_t ok = 0, total = 0;
    for (size_t g = 0; g < json_len(groups); g++) {
        const json *grp = json_at(groups, g);
        const hbs_slhdsa_params *p =
            hbs_slhdsa_params_by_name(json_str(json_get(grp, "parameterSet")));
        const char *si = json_str(json_get(grp, "signatureInterface"));
        const char *pre = json_str(json_get(grp, "preHash"));
        const int internal = si && strcmp(si, "internal") == 0;
        const int det = json_is_true(json_get(grp, "deterministic"));
        const json *tests = json_get(grp, "tests");
        CHECK(p != NULL);
        if (!p)
            continue;
        const size_t n = hbs_slhdsa_n(p), sb = hbs_slhdsa_sig_bytes(p);
        uint8_t *sig = malloc(sb), *ref = malloc(sb);
        for (size_t i = 0; sig && ref && i < json_len(tests); i++) {
            const json *t = json_at(tests, i);
            size_t skl = 0, ml = 0, cl = 0, rl = 0, el = 0;
            uint8_t *sk = json_hex(t, "sk", &skl), *msg = json_hex(t, "message", &ml);
            uint8_t *ctx = internal ? NULL : json_hex(t, "context", &cl);
            uint8_t *rnd = det ? NULL : json_hex(t, "additionalRandomness", &rl);
            uint8_t *exp = answers ? json_hex(t, "signature", &el) : NULL;
            hbs_prehash ph = HBS_PREHASH_NONE;
            const char *alg = json_str(json_get(t, "hashAlg"));
            if (!internal && pre && strcmp(pre, "preHash") == 0)
                CHECK(alg && hbs_prehash_by_name(&ph, alg) == 0);
            int good = 0;
            if (sk && skl == 4 * n && msg && (det || (rnd && rl == n))) {
                const uint8_t *mp[1] = {msg};
                size_t mlens[1] = {ml}, sl[1] = {sb};
                const uint8_t *sp[1] = {sig};
                int res[1], rc, vr;
                if (internal)
                    rc = hbs_gpu_slhdsa_sign_internal_many(p, sig, mp, mlens, 1, sk, 1, rnd);
                else
                    rc = hbs_gpu_slhdsa_sign_many(p, sig, mp, mlens, 1, ctx, cl, ph, sk, 1, rnd);
                if (answers) {
                    good = rc == 0 && exp && el == sb && memcmp(exp, sig, sb) == 0;
                } else {
                    int crc = internal ? hbs_slhdsa_sign_internal(p, ref, msg, ml, sk, rnd)
                                       : hbs_slhdsa_sign_ex(p, ref, msg, ml, ctx, cl, ph, sk, rnd);
                    good = rc == 0 && crc == 0 && memcmp(ref, sig, sb) == 0;
                }
                if (internal)
                    vr = hbs_gpu_slhdsa_verify_internal_many(p, res, sp, sl, mp, mlens, 1,
                                                             sk + 2 * n, 1);
                else
                    vr = hbs_gpu_slhdsa_verify_many(p, res, sp, sl, mp, mlens, 1, ctx, cl, ph,
                                                    sk + 2 * n, 1);
                good = good && vr == 0;
                CHECK_MSG(good, "%s %s tgId %lld tcId %lld: GPU sign %d verify %d %s", rel,
                          hbs_slhdsa_name(p), json_int(json_get(grp, "tgId"), -1),
                          json_int(json_get(t, "tcId"), -1), rc, vr, hbs_gpu_last_error());
            } else {
                CHECK_MSG(0, "%s: malformed test", rel);
            }
            ok += good;
            total++;
            free(sk);
            free(msg);
            free(ctx);
            free(rnd);
            free(exp);
        }
        free(sig);
        free(ref);
    }
    json_free(doc);
    test_note("%s: %zu/%zu", answers ? "NIST answers" : "prompts vs CPU", ok, total);
}

static void test_gpu_acvp_siggen(void)
{
    if (!have_gpu())
        return;
    acvp_siggen("acvp/SLH-DSA-sigGen-FIPS205/internalProjection.trimmed.json", 1);
    acvp_siggen("acvp/SLH-DSA-sigGen-FIPS205/prompt.json", 0);
}

static void test_gpu_acvp_sigver(void)
{
    if (!have_gpu())
        return;
    json *doc = load_vectors("acvp-2024-rustcrypto/SLH-DSA-sigVer-FIPS205/internalProjection.json");
    if (!doc)
        return;
    const json *groups = json_get(doc, "testGroups");
    size_t ok = 0, total = 0;
    for (size_t g = 0; g < json_len(groups); g++) {
        const json *grp = json_at(groups, g);
        const hbs_slhdsa_params *p =
            hbs_slhdsa_params_by_name(json_str(json_get(grp, "parameterSet")));
        const json *tests = json_get(grp, "tests");
        CHECK(p != NULL);
        if (!p)
            continue;
        for (size_t i = 0; i < json_len(tests); i++) {
            const json *t = json_at(tests, i);
            size_t pl = 0, ml = 0, sl = 0;
            uint8_t *pk = json_hex(t, "pk", &pl), *msg = json_hex(t, "message", &ml),
                    *sig = json_hex(t, "signature", &sl);
            const int expect = json_is_true(json_get(t, "testPassed"));
            int res[1] = {-99};
            const uint8_t *sp[1] = {sig}, *mp[1] = {msg};
            size_t sls[1] = {sl}, mls[1] = {ml};
            int rc = pk && msg && sig && pl == 2 * hbs_slhdsa_n(p)
                         ? hbs_gpu_slhdsa_verify_internal_many(p, res, sp, sls, mp, mls, 1, pk, 1)
                         : -99;
            int good = expect ? rc == 0 : rc == HBS_ERR_VERIFY_FAILED;
            CHECK_MSG(good, "sigVer %s tcId %lld: expected %s, got %d", hbs_slhdsa_name(p),
                      json_int(json_get(t, "tcId"), -1), expect ? "valid" : "invalid", rc);
            ok += good;
            total++;
            free(pk);
            free(msg);
            free(sig);
        }
    }
    json_free(doc);
    test_note("%zu/%zu sigVer verdicts", ok, total);
}

/* ---- verification batches mixing valid and invalid items ---------------------------------- */

/* count items over `distinct` signatures of one key, by pointer: item i is valid unless
 * i % 7 is 4 (a damaged copy), 5 (one byte short) or 6 (another item's message), and with a
 * public key per item, unless i % 11 is 5 (another key). With `device`, the same batch
 * (lengths all right) goes through the device-resident entry point too. Batch sizes pick
 * how many signatures the GPU gives each warp, so these reach every layout. */
static void verify_mixed(const hbs_slhdsa_params *p, size_t count, size_t distinct, int many_pks,
                         int device)
{
    const size_t n = hbs_slhdsa_n(p), sb = hbs_slhdsa_sig_bytes(p);
    uint8_t sks[2 * 4 * HBS_SLHDSA_MAX_N], pks[2 * 2 * HBS_SLHDSA_MAX_N];
    uint8_t *sigs = malloc(distinct * sb), *bad = malloc(distinct * sb);
    uint8_t *pkb = malloc(count * 2 * n), *flat = NULL, *mflat = NULL;
    const uint8_t **sp = malloc(count * sizeof *sp), **mp = malloc(count * sizeof *mp);
    size_t *sl = malloc(count * sizeof *sl), *ml = malloc(count * sizeof *ml);
    int *res = malloc(count * sizeof *res), *want = malloc(count * sizeof *want);
    uint64_t *moff = NULL;
    uint32_t *mlen = NULL;
    void *d_sigs = NULL, *d_mp = NULL, *d_off = NULL, *d_len = NULL, *d_pk = NULL, *d_res = NULL;
    msg_set ms = {0, NULL, NULL};
    if (!sigs || !bad || !pkb || !sp || !mp || !sl || !ml || !res || !want ||
        msgs_make(&ms, distinct) || cpu_keys(p, sks, pks, 2)) {
        CHECK_MSG(0, "setup failed");
        goto done;
    }
    int rc = hbs_gpu_slhdsa_sign_many(p, sigs, (const uint8_t *const *)ms.msgs, ms.lens, distinct,
                                      NULL, 0, HBS_PREHASH_NONE, sks, 1, NULL);
    CHECK_MSG(rc == 0, "sign: %d %s", rc, hbs_gpu_last_error());
    if (rc)
        goto done;
    for (size_t s = 0; s < 3; s++) { /* a big enough batch takes another FORS path */
        const size_t j = s == 0 ? distinct - 1 : rand_below(distinct);
        CHECK(hbs_slhdsa_sign_ex(p, bad, ms.msgs[j], ms.lens[j], NULL, 0, HBS_PREHASH_NONE, sks,
                                 NULL) == 0);
        CHECK_MSG(memcmp(bad, sigs + j * sb, sb) == 0, "%s: signature %zu of %zu differs",
                  hbs_slhdsa_name(p), j, distinct);
    }
    memcpy(bad, sigs, distinct * sb);
    for (size_t j = 0; j < distinct; j++)
        bad[j * sb + rand_below(sb)] ^= (uint8_t)(1u << rand_below(8));
    size_t nvalid = 0;
    for (size_t i = 0; i < count; i++) {
        const size_t j = i % distinct, kind = i % 7, jm = kind == 6 ? (j + 1) % distinct : j;
        sp[i] = (kind == 4 ? bad : sigs) + j * sb;
        sl[i] = kind == 5 ? sb - 1 : sb;
        mp[i] = ms.msgs[jm];
        ml[i] = ms.lens[jm];
        int ok = kind < 4 || (kind == 6 && ms.lens[jm] == ms.lens[j] &&
                              memcmp(ms.msgs[jm], ms.msgs[j], ms.lens[j]) == 0);
        const int other_key = many_pks && i % 11 == 5;
        memcpy(pkb + i * 2 * n, pks + (other_key ? 2 * n : 0), 2 * n);
        /* bit 0: valid as given; bit 1: valid at full length (device-resident) */
        want[i] = (ok && !other_key) | (ok || kind == 5) * !other_key << 1;
        nvalid += (size_t)(want[i] & 1);
    }
    rc = hbs_gpu_slhdsa_verify_many(p, res, sp, sl, mp, ml, count, NULL, 0, HBS_PREHASH_NONE,
                                    many_pks ? pkb : pks, many_pks ? count : 1);
    CHECK_MSG(rc == (nvalid == count ? 0 : HBS_ERR_VERIFY_FAILED), "%s: verify of %zu: %d %s",
              hbs_slhdsa_name(p), count, rc, hbs_gpu_last_error());
    size_t wrong = 0;
    for (size_t i = 0; i < count; i++)
        wrong += (res[i] == 0) != (want[i] & 1) ||
                 (res[i] != 0 && res[i] != HBS_ERR_VERIFY_FAILED);
    CHECK_MSG(wrong == 0, "%s: %zu of %zu verdicts wrong", hbs_slhdsa_name(p), wrong, count);
    if (device) {
        /* M' of pure signing with an empty context: 0, 0, M */
        size_t total = 0;
        for (size_t i = 0; i < count; i++)
            total += 2 + ml[i];
        flat = malloc(count * sb);
        mflat = malloc(total + 1);
        moff = malloc(count * sizeof *moff);
        mlen = malloc(count * sizeof *mlen);
        if (!flat || !mflat || !moff || !mlen) {
            CHECK_MSG(0, "out of memory");
            goto done;
        }
        size_t pos = 0;
        for (size_t i = 0; i < count; i++) {
            memcpy(flat + i * sb, sp[i], sb);
            moff[i] = pos;
            mlen[i] = (uint32_t)(2 + ml[i]);
            mflat[pos] = 0;
            mflat[pos + 1] = 0;
            if (ml[i])
                memcpy(mflat + pos + 2, mp[i], ml[i]);
            pos += 2 + ml[i];
        }
        const size_t npk = many_pks ? count : 1;
        rc = hbs_gpu_alloc(0, &d_sigs, count * sb);
        if (!rc) rc = hbs_gpu_alloc(0, &d_mp, total + 1);
        if (!rc) rc = hbs_gpu_alloc(0, &d_off, count * sizeof *moff);
        if (!rc) rc = hbs_gpu_alloc(0, &d_len, count * sizeof *mlen);
        if (!rc) rc = hbs_gpu_alloc(0, &d_pk, npk * 2 * n);
        if (!rc) rc = hbs_gpu_alloc(0, &d_res, count * sizeof(int));
        if (!rc) rc = hbs_gpu_copy_to(0, d_sigs, flat, count * sb);
        if (!rc) rc = hbs_gpu_copy_to(0, d_mp, mflat, total + 1);
        if (!rc) rc = hbs_gpu_copy_to(0, d_off, moff, count * sizeof *moff);
        if (!rc) rc = hbs_gpu_copy_to(0, d_len, mlen, count * sizeof *mlen);
        if (!rc) rc = hbs_gpu_copy_to(0, d_pk, many_pks ? pkb : pks, npk * 2 * n);
        if (!rc)
            rc = hbs_gpu_slhdsa_verify_device(p, 0, d_res, d_sigs, d_mp, d_off, d_len, count,
                                              d_pk, npk);
        if (!rc) rc = hbs_gpu_copy_from(0, res, d_res, count * sizeof(int));
        CHECK_MSG(rc == 0, "%s: device-resident verify: %d %s", hbs_slhdsa_name(p), rc,
                  hbs_gpu_last_error());
        wrong = 0;
        for (size_t i = 0; rc == 0 && i < count; i++)
            wrong += (res[i] == 0) != (want[i] >> 1) ||
                     (res[i] != 0 && res[i] != HBS_ERR_VERIFY_FAILED);
        CHECK_MSG(wrong == 0, "%s: device-resident: %zu of %zu verdicts wrong",
                  hbs_slhdsa_name(p), wrong, count);
    }
    test_note("%s: %zu items (%zu valid)%s%s", hbs_slhdsa_name(p), count, nvalid,
              many_pks ? ", a key each" : "", device ? ", also device-resident" : "");
done:
    hbs_gpu_free(0, d_sigs);
    hbs_gpu_free(0, d_mp);
    hbs_gpu_free(0, d_off);
    hbs_gpu_free(0, d_len);
    hbs_gpu_free(0, d_pk);
    hbs_gpu_free(0, d_res);
    free(sigs);
    free(bad);
    free(pkb);
    free(flat);
    free(mflat);
    free(moff);
    free(mlen);
    free(sp);
    free(mp);
    free(sl);
    free(ml);
    free(res);
    free(want);
    msgs_free(&ms);
}

static void test_gpu_verify_mixed(void)
{
    if (!have_gpu())
        return;
    const hbs_slhdsa_params *f128 = hbs_slhdsa_params_get(HBS_SLHDSA_SHA2_128F);
    static const size_t small[] = {1, 2, 33};
    for (size_t i = 0; i < sizeof small / sizeof small[0]; i++)
        verify_mixed(f128, small[i], 7, (int)(i & 1), 1);
    verify_mixed(f128, 70000, 500, 0, 0);
    verify_mixed(f128, 70000, 500, 1, 1);
    verify_mixed(hbs_slhdsa_params_get(HBS_SLHDSA_SHA2_256F), 5000, 100, 1, 1);
    verify_mixed(hbs_slhdsa_params_get(HBS_SLHDSA_SHAKE_192F), 3000, 50, 0, 1);
    verify_mixed(hbs_slhdsa_params_get(HBS_SLHDSA_SHA2_192F), 3000, 1100, 1, 0);
    verify_mixed(hbs_slhdsa_params_get(HBS_SLHDSA_SHA2_192S), 600, 20, 1, 0);
}

/* ---- the one-signature path over every set ------------------------------------------------
 * hbs_gpu_slhdsa_sign hashes the message on the host and builds every tree in one kernel:
 * each set, pure and pre-hash, with and without a context, deterministic and hedged, must
 * give the CPU's signature. */
static void test_gpu_latency_all_sets(void)
{
    if (!have_gpu())
        return;
    size_t done = 0;
    for (int id = 0; id < HBS_SLHDSA_NUM_PARAMS && !test_failed(); id++) {
        const hbs_slhdsa_params *p = hbs_slhdsa_params_get((hbs_slhdsa_id)id);
        const size_t n = hbs_slhdsa_n(p), sb = hbs_slhdsa_sig_bytes(p);
        uint8_t sk[HBS_SLHDSA_MAX_SK_BYTES], pk[HBS_SLHDSA_MAX_PK_BYTES], msg[200], ctx[255],
            rnd[HBS_SLHDSA_MAX_N];
        uint8_t *gpu = malloc(sb), *cpu = malloc(sb);
        if (!gpu || !cpu || cpu_keys(p, sk, pk, 1)) {
            CHECK_MSG(0, "setup failed");
            free(gpu);
            free(cpu);
            continue;
        }
        for (int c = 0; c < 4; c++) {
            /* c: bit 0 hedged, bit 1 pre-hash; a context in cases 1 and 2 */
            const size_t mlen = rand_below(sizeof msg + 1);
            const size_t clen = c == 1 || c == 2 ? 1 + rand_below(sizeof ctx) : 0;
            const hbs_prehash ph =
                c & 2 ? prehashes[(size_t)(id + c) % (sizeof prehashes / sizeof prehashes[0])]
                      : HBS_PREHASH_NONE;
            const uint8_t *m = mlen ? msg : NULL, *r = c & 1 ? rnd : NULL;
            test_rand_bytes(msg, sizeof msg);
            test_rand_bytes(ctx, sizeof ctx);
            test_rand_bytes(rnd, n);
            int rc = hbs_gpu_slhdsa_sign(p, gpu, m, mlen, ctx, clen, ph, sk, r);
            CHECK_MSG(rc == 0, "%s case %d: %d %s", hbs_slhdsa_name(p), c, rc,
                      hbs_gpu_last_error());
            CHECK(hbs_slhdsa_sign_ex(p, cpu, m, mlen, ctx, clen, ph, sk, r) == 0);
            if (rc == 0 && memcmp(gpu, cpu, sb) != 0) {
                size_t at = 0;
                while (gpu[at] == cpu[at])
                    at++;
                CHECK_MSG(0, "%s case %d (msg %zu bytes, ctx %zu, ph %d): differs from the CPU "
                          "at byte %zu of %zu", hbs_slhdsa_name(p), c, mlen, clen, (int)ph, at,
                          sb);
            }
            done++;
        }
        free(gpu);
        free(cpu);
    }
    test_note("%zu single signatures (12 sets, pure/pre-hash, context, hedged) match the CPU",
              done);
}

const hbs_test hbs_tests_gpu[] = {
    {"misuse", test_gpu_misuse},
    {"keygen", test_gpu_keygen},
    {"sign_all_sets", test_gpu_sign_all_sets},
    {"latency_repeat", test_gpu_latency_repeat},
    {"big_batches", test_gpu_big_batches},
    {"pinned", test_gpu_pinned},
    {"signer", test_gpu_signer},
    {"device_resident", test_gpu_device_resident},
    {"acvp_keygen", test_gpu_acvp_keygen},
    {"acvp_siggen", test_gpu_acvp_siggen},
    {"acvp_sigver", test_gpu_acvp_sigver},
    {"verify_mixed", test_gpu_verify_mixed},
    {"latency_all_sets", test_gpu_latency_all_sets},
    {NULL, NULL},
};
