/* Backend selection and the batch ("many") entry points.
 *
 * Backends are listed best first, each with a check that this CPU and OS can run it. The
 * choice is made once, the first time anyone asks: the best available candidate, unless
 * HBS_BACKEND names another available one. Tests may force a backend by name afterwards.
 * A backend's NULL entries fall back to the portable batch functions below. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "hbs/hbs.h"
#include "hash/hash.h"
#ifndef HBS_NO_X86
#include "hash/x86/x86.h"
#endif

static inline void store_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static inline void store_be64(uint8_t *p, uint64_t v)
{
    store_be32(p, (uint32_t)(v >> 32));
    store_be32(p + 4, (uint32_t)v);
}

/* Message or digest i of a batch; a zero length never offsets, so a NULL base (allowed with
 * length 0) is never used in arithmetic. */
static inline const uint8_t *nth_in(const uint8_t *base, size_t i, size_t len)
{
    return len ? base + i * len : base;
}

static inline uint8_t *nth_out(uint8_t *base, size_t i, size_t len)
{
    return len ? base + i * len : base;
}

/* ---- portable batch functions ------------------------------------------------------------
 * All messages have the same length, so the padding of the last block(s) is the same for
 * each: it is written once, and per message only the message tail is copied in front of it
 * before one or two direct compressions, without the buffering of update(). */

void hbs_sha256_many_portable(uint8_t *out, const hbs_sha256_ctx *prefix, const uint8_t *in,
                                 size_t inlen, size_t count)
{
    hbs_sha256_ctx start;
    uint8_t tail[2 * HBS_SHA256_BLOCK];
    uint32_t h[8];
    size_t full = inlen / HBS_SHA256_BLOCK, rem = inlen % HBS_SHA256_BLOCK;
    size_t tailblocks = rem + 9 <= HBS_SHA256_BLOCK ? 1 : 2;
    size_t taillen = tailblocks * HBS_SHA256_BLOCK;

    if (prefix)
        start = *prefix;
    else
        hbs_sha256_init(&start);
    memset(tail, 0, sizeof tail);
    tail[rem] = 0x80;
    store_be64(tail + taillen - 8, (start.bytes + inlen) << 3);

    for (size_t i = 0; i < count; i++) {
        const uint8_t *m = nth_in(in, i, inlen);
        memcpy(h, start.h, sizeof h);
        if (full)
            hbs_sha256_compress_portable(h, m, full);
        if (rem)
            memcpy(tail, m + full * HBS_SHA256_BLOCK, rem);
        hbs_sha256_compress_portable(h, tail, tailblocks);
        for (unsigned j = 0; j < 8; j++)
            store_be32(out + 32 * i + 4 * j, h[j]);
    }
    hbs_memzero(&start, sizeof start);
    hbs_memzero(tail, sizeof tail);
    hbs_memzero(h, sizeof h);
}

void hbs_sha512_many_portable(uint8_t *out, const hbs_sha512_ctx *prefix, const uint8_t *in,
                                 size_t inlen, size_t count)
{
    hbs_sha512_ctx start;
    uint8_t tail[2 * HBS_SHA512_BLOCK];
    uint64_t h[8];
    size_t full = inlen / HBS_SHA512_BLOCK, rem = inlen % HBS_SHA512_BLOCK;
    size_t tailblocks = rem + 17 <= HBS_SHA512_BLOCK ? 1 : 2;
    size_t taillen = tailblocks * HBS_SHA512_BLOCK;
    uint64_t total;

    if (prefix)
        start = *prefix;
    else
        hbs_sha512_init(&start);
    total = start.bytes + inlen;
    memset(tail, 0, sizeof tail);
    tail[rem] = 0x80;
    store_be64(tail + taillen - 16, total >> 61);
    store_be64(tail + taillen - 8, total << 3);

    for (size_t i = 0; i < count; i++) {
        const uint8_t *m = nth_in(in, i, inlen);
        memcpy(h, start.h, sizeof h);
        if (full)
            hbs_sha512_compress_portable(h, m, full);
        if (rem)
            memcpy(tail, m + full * HBS_SHA512_BLOCK, rem);
        hbs_sha512_compress_portable(h, tail, tailblocks);
        for (unsigned j = 0; j < 8; j++)
            store_be64(out + 64 * i + 8 * j, h[j]);
    }
    hbs_memzero(&start, sizeof start);
    hbs_memzero(tail, sizeof tail);
    hbs_memzero(h, sizeof h);
}

void hbs_shake256_many_portable(uint8_t *out, size_t outlen, const uint8_t *in, size_t inlen,
                                   size_t count)
{
    hbs_keccak_ctx c;
    for (size_t i = 0; i < count; i++) {
        hbs_shake256_init(&c);
        hbs_keccak_absorb(&c, nth_in(in, i, inlen), inlen);
        hbs_keccak_squeeze(&c, nth_out(out, i, outlen), outlen);
    }
    hbs_memzero(&c, sizeof c);
}

void hbs_shake128_many_portable(uint8_t *out, size_t outlen, const uint8_t *in, size_t inlen,
                                   size_t count)
{
    hbs_keccak_ctx c;
    for (size_t i = 0; i < count; i++) {
        hbs_shake128_init(&c);
        hbs_keccak_absorb(&c, nth_in(in, i, inlen), inlen);
        hbs_keccak_squeeze(&c, nth_out(out, i, outlen), outlen);
    }
    hbs_memzero(&c, sizeof c);
}

/* ---- hash chains ------------------------------------------------------------------------ */

static uint32_t steps_of(const uint8_t *steps, uint32_t steps_all, size_t i)
{
    return steps ? steps[i] : steps_all;
}

static void chain_count_up(uint8_t *msg, const hbs_chain_layout *lay)
{
    for (size_t b = lay->ctr_bytes; b-- > 0;)
        if (++msg[lay->ctr_off + b] != 0)
            break;
}

/* The reference: one chain, one step at a time. */
void hbs_sha256_chains_portable(const hbs_sha256_ctx *prefix, uint8_t *msgs, size_t len,
                                const hbs_chain_layout *lay, const uint8_t *steps,
                                uint32_t steps_all, size_t count)
{
    uint8_t dig[32];
    for (size_t i = 0; i < count; i++) {
        uint8_t *m = msgs + i * len;
        for (uint32_t s = steps_of(steps, steps_all, i); s > 0; s--) {
            hbs_sha256_many_portable(dig, prefix, m, len, 1);
            memcpy(m + lay->val_off, dig, lay->n);
            chain_count_up(m, lay);
        }
    }
    hbs_memzero(dig, sizeof dig);
}

void hbs_shake256_chains_portable(uint8_t *msgs, size_t len, const hbs_chain_layout *lay,
                                  const uint8_t *steps, uint32_t steps_all, size_t count)
{
    uint8_t dig[32];
    for (size_t i = 0; i < count; i++) {
        uint8_t *m = msgs + i * len;
        for (uint32_t s = steps_of(steps, steps_all, i); s > 0; s--) {
            hbs_shake256_many_portable(dig, lay->n, m, len, 1);
            memcpy(m + lay->val_off, dig, lay->n);
            chain_count_up(m, lay);
        }
    }
    hbs_memzero(dig, sizeof dig);
}

/* For backends without a chain kernel: every round hashes the chains that still have steps
 * left as one batch, gathered into a contiguous buffer. */
static void chains_lockstep(int shake, const hbs_sha256_ctx *prefix, uint8_t *msgs, size_t len,
                            const hbs_chain_layout *lay, const uint8_t *steps,
                            uint32_t steps_all, size_t count)
{
    enum { CHUNK = 128, MAXLEN = 136 };
    uint8_t buf[CHUNK * MAXLEN], dig[CHUNK * 32];
    size_t idx[CHUNK], used = 0;

    if (len > MAXLEN) { /* long messages are rare: keep the buffer small, go one by one */
        if (shake)
            hbs_shake256_chains_portable(msgs, len, lay, steps, steps_all, count);
        else
            hbs_sha256_chains_portable(prefix, msgs, len, lay, steps, steps_all, count);
        return;
    }
    for (size_t base = 0; base < count; base += CHUNK) {
        const size_t todo = count - base < CHUNK ? count - base : CHUNK;
        for (uint32_t round = 0;; round++) {
            size_t active = 0;
            for (size_t i = base; i < base + todo; i++) {
                if (steps_of(steps, steps_all, i) <= round)
                    continue;
                memcpy(buf + active * len, msgs + i * len, len);
                idx[active++] = i;
            }
            if (!active)
                break;
            used = active > used ? active : used;
            if (shake)
                hbs_shake256_many(dig, lay->n, buf, len, active);
            else
                hbs_sha256_many(dig, prefix, buf, len, active);
            for (size_t j = 0; j < active; j++) {
                uint8_t *m = msgs + idx[j] * len;
                memcpy(m + lay->val_off, dig + (shake ? lay->n : 32) * j, lay->n);
                chain_count_up(m, lay);
            }
        }
    }
    hbs_memzero(buf, used * len);
    hbs_memzero(dig, used * 32);
}

/* The single-stream SHA-256 compression of the SIMD backends: SHA-NI where the CPU has it. */
static void compress_shani_if_present(uint32_t h[8], const uint8_t *blocks, size_t nblocks)
{
#if !defined(HBS_NO_X86) && !defined(HBS_NO_SHANI)
    if (hbs_cpu_has_shani()) {
        hbs_sha256_compress_shani(h, blocks, nblocks);
        return;
    }
#endif
    hbs_sha256_compress_portable(h, blocks, nblocks);
}

/* ---- the backend list ------------------------------------------------------------------- */

static const hbs_hash_backend portable_backend = {
    "portable",
    hbs_sha256_many_portable,
    hbs_sha512_many_portable,
    hbs_shake256_many_portable,
    hbs_shake128_many_portable,
    NULL,
    NULL,
    hbs_sha256_compress_portable,
};

static int always_available(void) { return 1; }

/* hbs_hash_backend has no room for a capability check, so the list pairs each backend
 * with one. */
typedef struct {
    const hbs_hash_backend *backend;
    int (*available)(void); /* nonzero if this CPU and OS can run the backend */
} backend_candidate;

/* Best first. SIMD backends go above "portable", which must stay last. */
#if !defined(HBS_NO_X86) && !defined(HBS_NO_AVX512)
static const hbs_hash_backend avx512_backend = {
    "avx512",
    hbs_sha256_many_avx512,
    hbs_sha512_many_avx512,
    hbs_shake256_many_avx512,
    hbs_shake128_many_avx512,
    hbs_sha256_chains_avx512,
    hbs_shake256_chains_avx512,
    compress_shani_if_present,
};
#endif
#if !defined(HBS_NO_X86) && !defined(HBS_NO_SHANI) && !defined(HBS_NO_AVX2)
/* SHA-NI for SHA-256, AVX2 lanes for the rest: the best on CPUs without AVX-512. */
static const hbs_hash_backend shani_backend = {
    "shani",
    hbs_sha256_many_shani,
    hbs_sha512_many_avx2,
    hbs_shake256_many_avx2,
    NULL,
    NULL,
    NULL,
    compress_shani_if_present,
};
static int shani_available(void) { return hbs_cpu_has_shani() && hbs_cpu_has_avx2(); }
#endif
#if !defined(HBS_NO_X86) && !defined(HBS_NO_AVX2)
static const hbs_hash_backend avx2_backend = {
    "avx2",
    hbs_sha256_many_avx2,
    hbs_sha512_many_avx2,
    hbs_shake256_many_avx2,
    NULL,
    NULL,
    NULL,
    compress_shani_if_present,
};
#endif

static const backend_candidate candidates[] = {
#if !defined(HBS_NO_X86) && !defined(HBS_NO_AVX512)
    {&avx512_backend, hbs_cpu_has_avx512},
#endif
#if !defined(HBS_NO_X86) && !defined(HBS_NO_SHANI) && !defined(HBS_NO_AVX2)
    {&shani_backend, shani_available},
#endif
#if !defined(HBS_NO_X86) && !defined(HBS_NO_AVX2)
    {&avx2_backend, hbs_cpu_has_avx2},
#endif
    {&portable_backend, always_available},
};
#define N_CANDIDATES (sizeof candidates / sizeof candidates[0])

static _Atomic(const hbs_hash_backend *) active_backend;
static pthread_once_t choose_once = PTHREAD_ONCE_INIT;

static const hbs_hash_backend *find_available(const char *name)
{
    for (size_t i = 0; i < N_CANDIDATES; i++)
        if (strcmp(candidates[i].backend->name, name) == 0 && candidates[i].available())
            return candidates[i].backend;
    return NULL;
}

static void choose_backend(void)
{
    const hbs_hash_backend *chosen = NULL;
    const char *env = getenv("HBS_BACKEND");
    if (env && *env)
        chosen = find_available(env); /* an unknown name is ignored, silently */
    for (size_t i = 0; !chosen && i < N_CANDIDATES; i++)
        if (candidates[i].available())
            chosen = candidates[i].backend;
    atomic_store_explicit(&active_backend, chosen, memory_order_release);
}

const hbs_hash_backend *hbs_hash_backend_active(void)
{
    const hbs_hash_backend *b = atomic_load_explicit(&active_backend, memory_order_acquire);
    if (!b) {
        pthread_once(&choose_once, choose_backend);
        b = atomic_load_explicit(&active_backend, memory_order_acquire);
    }
    return b;
}

int hbs_hash_force_backend(const char *name)
{
    const hbs_hash_backend *b;
    if (!name)
        return HBS_ERR_INVALID_ARGUMENT;
    /* Make the one-time choice first, so that it cannot later overwrite this one. */
    pthread_once(&choose_once, choose_backend);
    b = find_available(name);
    if (!b)
        return HBS_ERR_UNSUPPORTED;
    atomic_store_explicit(&active_backend, b, memory_order_release);
    return HBS_OK;
}

const char *hbs_backend_name(void) { return hbs_hash_backend_active()->name; }

const char *hbs_backend_at(size_t i)
{
    return i < N_CANDIDATES ? candidates[i].backend->name : NULL;
}

int hbs_backend_supported(const char *name) { return name && find_available(name) != NULL; }

int hbs_set_backend(const char *name) { return hbs_hash_force_backend(name); }

/* ---- batch entry points ----------------------------------------------------------------- */

void hbs_sha256_many(uint8_t *out, const hbs_sha256_ctx *prefix, const uint8_t *in, size_t inlen,
                     size_t count)
{
    const hbs_hash_backend *b;
    if (count == 0)
        return;
    if (prefix && prefix->buflen) {
        /* Outside the contract (backends may assume whole blocks); still give the right
         * answer, the slow way. */
        for (size_t i = 0; i < count; i++) {
            hbs_sha256_ctx c = *prefix;
            hbs_sha256_update(&c, nth_in(in, i, inlen), inlen);
            hbs_sha256_final(&c, out + 32 * i);
        }
        return;
    }
    b = hbs_hash_backend_active();
    (b->sha256_many ? b->sha256_many : hbs_sha256_many_portable)(out, prefix, in, inlen, count);
}

void hbs_sha512_many(uint8_t *out, const hbs_sha512_ctx *prefix, const uint8_t *in, size_t inlen,
                     size_t count)
{
    const hbs_hash_backend *b;
    if (count == 0)
        return;
    if (prefix && prefix->buflen) {
        for (size_t i = 0; i < count; i++) {
            hbs_sha512_ctx c = *prefix;
            c.outlen = 64; /* full digests whatever variant the prefix came from */
            hbs_sha512_update(&c, nth_in(in, i, inlen), inlen);
            hbs_sha512_final(&c, out + 64 * i);
        }
        return;
    }
    b = hbs_hash_backend_active();
    (b->sha512_many ? b->sha512_many : hbs_sha512_many_portable)(out, prefix, in, inlen, count);
}

void hbs_shake256_many(uint8_t *out, size_t outlen, const uint8_t *in, size_t inlen,
                       size_t count)
{
    const hbs_hash_backend *b;
    if (count == 0)
        return;
    b = hbs_hash_backend_active();
    (b->shake256_many ? b->shake256_many : hbs_shake256_many_portable)(out, outlen, in, inlen,
                                                                    count);
}

void hbs_shake128_many(uint8_t *out, size_t outlen, const uint8_t *in, size_t inlen,
                       size_t count)
{
    const hbs_hash_backend *b;
    if (count == 0)
        return;
    b = hbs_hash_backend_active();
    (b->shake128_many ? b->shake128_many : hbs_shake128_many_portable)(out, outlen, in, inlen,
                                                                    count);
}

void hbs_sha256_chains(const hbs_sha256_ctx *prefix, uint8_t *msgs, size_t len,
                       const hbs_chain_layout *lay, const uint8_t *steps, uint32_t steps_all,
                       size_t count)
{
    const hbs_hash_backend *b;
    if (count == 0)
        return;
    if (prefix && prefix->buflen) {
        hbs_sha256_chains_portable(prefix, msgs, len, lay, steps, steps_all, count);
        return;
    }
    b = hbs_hash_backend_active();
    if (b->sha256_chains && b->sha256_chains(prefix, msgs, len, lay, steps, steps_all, count) == 0)
        return;
    chains_lockstep(0, prefix, msgs, len, lay, steps, steps_all, count);
}

void hbs_shake256_chains(uint8_t *msgs, size_t len, const hbs_chain_layout *lay,
                         const uint8_t *steps, uint32_t steps_all, size_t count)
{
    const hbs_hash_backend *b;
    if (count == 0)
        return;
    b = hbs_hash_backend_active();
    if (b->shake256_chains && b->shake256_chains(msgs, len, lay, steps, steps_all, count) == 0)
        return;
    chains_lockstep(1, NULL, msgs, len, lay, steps, steps_all, count);
}

void hbs_sha256_compress(uint32_t h[8], const uint8_t *blocks, size_t nblocks)
{
    const hbs_hash_backend *b = hbs_hash_backend_active();
    (b->sha256_compress ? b->sha256_compress : hbs_sha256_compress_portable)(h, blocks, nblocks);
}
