/* The one-signature path, host side: hashes the message on the CPU, cuts the signature's
 * trees into blocks, launches the kernel of latency.cuh and waits for its flag in mapped
 * host memory (sooner than a stream synchronisation, and no copy command). */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <vector>

#include "gpu/latency.cuh"

extern "C" {
#include "slhdsa/params.h"
#include "slhdsa/prehash.h"
#include "slhdsa/thash.h"
}

namespace hbs_gpu {

/* What one GPU keeps for this path: its own stream, device scratch (arrival counters first,
 * zero between signatures) and mapped pinned memory (the flag, then the signature). */
struct lat_state {
    cudaStream_t stream = nullptr;
    uint8_t *dev = nullptr;
    size_t dev_cap = 0;
    uint8_t *host = nullptr, *host_dev = nullptr;
    size_t host_cap = 0;
    uint32_t seq = 0;
    bool dirty = false; /* a launch failed: the counters may be mid-count */
    lat_timing *timing = nullptr; /* device memory, only with HBS_GPU_LATENCY_TIMING */
    int sms = 0, clock_khz = 0;   /* SMs: the cut of the trees (and the timing line) */
};

/* The device scratch starts with LAT_COUNTERS bytes of arrival counters (latency.cuh:
 * d + k + 2 + d of them, at most 81). The mapped host memory starts with LAT_FLAG bytes: the
 * flag in word 0, block 0's entry (timing only) in word 1; the signature follows. */
enum { LAT_COUNTERS = 512, LAT_FLAG = 64 };
static_assert(2 * 22 + LAT_MAX_K + 2 <= LAT_COUNTERS / 4, "arrival counters (d <= 22)");

static std::mutex states_lock;
static std::vector<lat_state *> states;

static lat_state *state_for(int ordinal)
{
    std::lock_guard<std::mutex> g(states_lock);
    if (states.size() <= (size_t)ordinal)
        states.resize((size_t)ordinal + 1, nullptr);
    if (!states[(size_t)ordinal])
        states[(size_t)ordinal] = new lat_state;
    return states[(size_t)ordinal];
}

/* Best effort, like the pools' release: scratch wiped (it held chain values derived from the
 * secret key) before it is freed, then the next signature sets everything up again. */
void latency_release(int ordinal)
{
    lat_state *st;
    {
        std::lock_guard<std::mutex> g(states_lock);
        if (states.size() <= (size_t)ordinal || !(st = states[(size_t)ordinal]))
            return;
        states[(size_t)ordinal] = nullptr;
    }
    if (st->stream)
        (void)cudaStreamSynchronize(st->stream);
    if (st->dev) {
        (void)cudaMemset(st->dev, 0, st->dev_cap);
        (void)cudaFree(st->dev);
    }
    if (st->host) {
        hbs_memzero(st->host, st->host_cap);
        (void)cudaFreeHost(st->host);
    }
    if (st->timing)
        (void)cudaFree(st->timing);
    if (st->stream)
        (void)cudaStreamDestroy(st->stream);
    delete st;
    (void)cudaGetLastError();
}

static size_t round256(size_t v) { return (v + 255) & ~(size_t)255; }

static int round32(int v) { return (v + 31) & ~31; }

static int floor_log2(unsigned v)
{
    int r = 0;
    while ((2u << r) <= v)
        r++;
    return r;
}

/* HBS_GPU_LAT_LPB / HBS_GPU_LAT_FPB: log2 of the leaves a block takes of a hypertree layer
 * / of a FORS tree, to compare cuts on a new GPU (read once; -1 when unset). */
static int env_lg(const char *name)
{
    const char *e = getenv(name);
    return e && *e ? atoi(e) : -1;
}

int lat_sha_form()
{
    static const int form = env_lg("HBS_GPU_LAT_SHA");
    return form;
}

int lat_ways()
{
    static const int ways = (env_lg("HBS_GPU_LAT_TL2") > 0 ? LAT_TL2 : 0) |
                            (env_lg("HBS_GPU_LAT_SPREAD") > 0 ? LAT_SPREAD : 0) |
                            (env_lg("HBS_GPU_LAT_FORS_FIRST") > 0 ? LAT_FORS_FIRST : 0) |
                            (env_lg("HBS_GPU_LAT_WIDE") > 0 ? LAT_WIDE : 0);
    return ways;
}

int lat_sha2_sc(int n, bool s_set)
{
    const int form = lat_sha_form(), ways = n == 16 ? lat_ways() : 0;
    if (form >= 0)
        return form | ways;
    /* Few warps run the 'f' kernel, each through many hash call sites once: with the fully
     * unrolled compression they wait on instruction fetch (ncu, 128f: 35 % of the chains'
     * and 51 % of T_len's stall samples are "no instruction"). With the looped form (6 KB
     * of code) the same kernel ran faster: H200 128f 0.084 -> 0.067 ms, 256f 0.292 ->
     * 0.257 ms, 128s even. At n = 24 it lost (192f 0.174 -> 0.194), so n = 24 keeps the
     * full form. The 's' sets' many warps an SM hide the fetches: n = 16 runs them in the
     * full form (H100, 128s: 0.275 -> 0.269-0.270 ms with the one call site of lat_sites).
     * Their chains keep the integer pipe busy (ncu, 128s: 78 % of its peak over the
     * kernel): they take the IMAD variant (hash.cuh), the 'f' sets' lone warps not. */
    const int def = (n == 24 || (n == 16 && s_set) ? SHA_FULL : SHA_LOOPED) |
                    (s_set ? SHA_IMAD : 0);
    if (n != 16)
        return def;
    /* At n = 16, T_len and T_k in two passes and each layer's part copied out as soon as it
     * is done; the 's' sets' FORS blocks first. H100, median of 60, two rounds alternating
     * (bench/results/gpu-H100-s19.log): 128f 0.0636-0.0643 -> 0.0606-0.0609 ms (the two
     * passes alone 0.0616-0.0619, the copy-out alone lost: 0.0693); 128s 0.2610-0.2614 ->
     * 0.2302-0.2304 (two passes alone 0.2379, FORS first alone 0.2521-0.2533). The 'f'
     * sets' one block an SM may take all the registers it wants (LAT_WIDE): H200, median of
     * 60, three rounds alternating (bench/results/gpu-H200-s20-wide.log): 128f 0.0591-0.0609
     * -> 0.0570-0.0575 ms, plain 0.0641-0.0649. */
    return def | LAT_TL2 | LAT_SPREAD | (s_set ? LAT_FORS_FIRST : LAT_WIDE) | ways;
}

static const lat_kernel &kernel_for(const hbs_slhdsa_params *p)
{
    static const lat_kernel table[2][3] = {
        {latency_sha2_16(), latency_sha2_24(), latency_sha2_32()},
        {latency_shake_16(), latency_shake_24(), latency_shake_32()}};
    return table[p->family == SLHDSA_FAMILY_SHAKE][(p->n - 16) / 8];
}

/* How one set's signature is cut into blocks, and the scratch it needs. */
struct lat_plan {
    lat_shape s;
    int blocks, threads, smem;
    size_t o_sig, o_wsave, o_roots, o_groots, dev_bytes;
};

static void plan_for(const hbs_slhdsa_params *p, int sms, lat_plan *pl)
{
    const int maxt = kernel_for(p).max_threads;
    static const int env_lpb = env_lg("HBS_GPU_LAT_LPB"), env_fpb = env_lg("HBS_GPU_LAT_FPB");
    const int n = (int)p->n, len = (int)p->len, hp = (int)p->hp, a = (int)p->a;
    const int d = (int)p->d, k = (int)p->k;
    /* The 's' sets have work enough to fill the GPU many times over: blocks of eight leaves
     * spread it evenly over the SMs. The 'f' sets are bound by the chain of one leaf and
     * its tree: a whole tree per block where it fits, so no block waits for another. */
    const bool small = hp >= 8;
    int lpb = hp;
    while (round32(len << lpb) > maxt || (small && lpb > 3))
        lpb--;
    /* ... but a whole tree in one block crowds its SM: one SM issues for 280 chains while
     * most SMs idle (128f on the H200: 55 blocks, the chains 61 us). So the 'f' sets cut
     * their trees into the most hypertree blocks that still fit one per SM (128f: two leaves a
     * block, 121 blocks, the chains 30 us and the signature 0.118 -> 0.090 ms). */
    if (!small && sms > 0)
        while (lpb > 0 && (d << (hp - (lpb - 1))) <= sms)
            lpb--;
    if (env_lpb >= 0)
        lpb = std::min(env_lpb, hp);
    while (lpb > 0 && round32(len << lpb) > maxt)
        lpb--;
    const int threads = round32(len << lpb);
    /* FORS leaves cost two hashes against a chain's sixteen: in the 's' sets a block takes
     * as many as 32 KB of shared memory hold (the tree and its levels), which at n = 16 puts
     * every block in one wave (128s: 504 blocks, 528 fit; with 512 leaves a block, 560 did
     * not; H100 128s 0.270 -> 0.262 ms, SHAKE-128s 0.840 -> 0.817). */
    int fpb = small ? a : std::min(a, floor_log2((unsigned)threads));
    if (env_fpb >= 0)
        fpb = std::min(env_fpb, a);
    while (fpb > 0 && (2 * n << fpb) > 32768)
        fpb--;
    pl->s.d = d;
    pl->s.hp = hp;
    pl->s.a = a;
    pl->s.k = k;
    pl->s.sig_bytes = (int)p->sig_bytes;
    pl->s.fors_bytes = (int)p->fors_sig_bytes;
    pl->s.xg_lg = hp - lpb;
    pl->s.fg_lg = a - fpb;
    pl->threads = threads;
    pl->blocks = (d << pl->s.xg_lg) + (k << pl->s.fg_lg);
    /* the two-pass T_len and T_k (LAT_TL2, SHA-2 at n = 16): their schedules after the heap
     * and after the FORS roots */
    const bool tl2 = p->family == SLHDSA_FAMILY_SHA2 && (lat_sha2_sc(n, small) & LAT_TL2);
    const int tl2_x = tl2 ? (lat_tl2_words(len) << lpb) * 4 : 0;
    const int tl2_k = tl2 ? 16 + tl16_blocks(k * n / 4) * 256 : 0;
    pl->smem = std::max({(len << lpb) * n + (2 * n << lpb) + tl2_x, 2 * n << pl->s.xg_lg,
                         2 * n << fpb, 2 * n << pl->s.fg_lg, k * n + tl2_k, d * n});
    pl->o_sig = LAT_COUNTERS;
    pl->o_wsave = pl->o_sig + round256(p->sig_bytes);
    pl->o_roots = pl->o_wsave + round256((size_t)d * len * 16 * n);
    pl->o_groots = pl->o_roots + round256((size_t)(d + k + 1) * n);
    pl->dev_bytes = pl->o_groots + round256((size_t)((d << pl->s.xg_lg) + (k << pl->s.fg_lg)) * n);
}

/* Device scratch and mapped host memory of at least the plan's sizes. */
static int state_ready(lat_state *st, const lat_plan &pl)
{
    if (!st->stream)
        HBS_CUDA(cudaStreamCreateWithFlags(&st->stream, cudaStreamNonBlocking));
    const size_t hb = LAT_FLAG + (size_t)pl.s.sig_bytes;
    if (st->dev_cap < pl.dev_bytes || st->host_cap < hb) {
        HBS_CUDA(cudaStreamSynchronize(st->stream));
    }
    if (st->dev_cap < pl.dev_bytes) {
        if (st->dev)
            HBS_CUDA(cudaFree(st->dev));
        st->dev = nullptr;
        st->dev_cap = 0;
        HBS_CUDA(cudaMalloc(&st->dev, pl.dev_bytes));
        st->dev_cap = pl.dev_bytes;
        st->dirty = true;
    }
    if (st->host_cap < hb) {
        if (st->host)
            HBS_CUDA(cudaFreeHost(st->host));
        st->host = nullptr;
        st->host_cap = 0;
        HBS_CUDA(cudaHostAlloc(&st->host, hb, cudaHostAllocMapped));
        st->host_cap = hb;
        memset(st->host, 0, LAT_FLAG);
        HBS_CUDA(cudaHostGetDevicePointer(reinterpret_cast<void **>(&st->host_dev), st->host, 0));
    }
    if (st->dirty) {
        HBS_CUDA(cudaMemsetAsync(st->dev, 0, LAT_COUNTERS, st->stream));
        st->dirty = false;
    }
    return 0;
}

static inline void cpu_relax()
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/* ---- timing (HBS_GPU_LATENCY_TIMING=1): one line per signature on stderr ---- */

static bool timing_wanted()
{
    static const bool on = [] {
        const char *e = getenv("HBS_GPU_LATENCY_TIMING");
        return e && *e && strcmp(e, "0") != 0;
    }();
    return on;
}

static uint64_t now_ns()
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The host's instants of one signature (CLOCK_MONOTONIC ns; 0: not seen). */
struct lat_host_times {
    uint64_t entry, msg, launch, launched, start_seen, flag_seen, copied;
};

/* The stamps' starting values: first at the largest value so atomicMin takes any stamp. */
static int timing_reset(lat_state *st)
{
    lat_timing init;
    memset(&init, 0, sizeof init);
    memset(init.first, 0xff, sizeof init.first);
    HBS_CUDA(cudaMemcpy(st->timing, &init, sizeof init, cudaMemcpyHostToDevice));
    return 0;
}

static int timing_ready(lat_state *st, int ordinal)
{
    if (st->timing)
        return 0;
    HBS_CUDA(cudaDeviceGetAttribute(&st->clock_khz, cudaDevAttrClockRate, ordinal));
    HBS_CUDA(cudaMalloc(&st->timing, sizeof(lat_timing)));
    return timing_reset(st);
}

static const char *const phase_names[LP_COUNT] = {
    "entry",    "x-chains", "x-tlen", "x-tree",  "x-arrive",       "x-top",
    "f-leaves", "f-tree",   "f-arrive", "f-top", "f-roots-arrive", "f-pk",
    "units-arrive", "msgs", "copy-out", "fence", "flag"};

static const bool phase_is_point[LP_COUNT] = {true,  false, false, false, true,  false,
                                              false, false, true,  false, true,  false,
                                              true,  false, false, false, true};

/* Microseconds from one host instant to another; -1 where one was not seen. */
static double us_between(uint64_t from, uint64_t to)
{
    return from && to ? (double)(int64_t)(to - from) / 1e3 : -1.0;
}

/* Once the flag is seen: waits for the kernel's end, reads the stamps back, prints the line
 * and resets the stamps for the next signature. None of this is in the times it prints. */
static int timing_report(lat_state *st, const hbs_slhdsa_params *p, const lat_plan &pl,
                         const lat_host_times &h)
{
    lat_timing tm;
    HBS_CUDA(cudaStreamSynchronize(st->stream));
    const uint64_t idle = now_ns();
    HBS_CUDA(cudaMemcpy(&tm, st->timing, sizeof tm, cudaMemcpyDeviceToHost));
    int err = timing_reset(st);
    if (err)
        return err;
    const lat_kernel &k = kernel_for(p);
    /* (a LAT_WIDE kernel is compiled for one block an SM) */
    const bool wide = p->family == SLHDSA_FAMILY_SHA2 &&
                      (lat_sha2_sc((int)p->n, pl.s.hp >= 8) & LAT_WIDE);
    char line[3072];
    size_t at = 0;
    auto put = [&](const char *fmt, auto... v) {
        if (at < sizeof line) {
            const int r = snprintf(line + at, sizeof line - at, fmt, v...);
            at += r > 0 ? (size_t)r : 0;
        }
    };
    put("hbs: gpu latency %s: %d blocks x %d threads, smem %d B, blocks/SM %d compiled for, "
        "%d by occupancy, %d SMs; host prep %.1f us (message %.1f), launch call %.1f us, "
        "launch->kernel start seen %.1f us; GPU us from first block start:",
        p->name, pl.blocks, pl.threads, pl.smem, wide ? 1 : k.per_sm,
        k.occupancy(pl.threads, pl.smem),
        st->sms, us_between(h.entry, h.launch), us_between(h.msg, h.launch),
        us_between(h.launch, h.launched), us_between(h.launch, h.start_seen));
    const unsigned long long t0 = tm.first[LP_ENTRY];
    for (int i = 0; i < LP_COUNT; i++) {
        if (tm.first[i] == ~0ull)
            continue; /* no block had this phase */
        const double a = (double)(tm.first[i] - t0) / 1e3, b = (double)(tm.last[i] - t0) / 1e3;
        if (phase_is_point[i])
            put(" %s %.2f..%.2f,", phase_names[i], a, b);
        else
            put(" %s %.2f..%.2f (block max %.2f),", phase_names[i], a, b,
                st->clock_khz ? (double)tm.cycles[i] * 1e3 / st->clock_khz : -1.0);
    }
    put(" kernel end %.2f us (SM clock %.0f MHz: the last block's cycles over its ns, device "
        "peak %d);",
        (double)(tm.last[LP_FLAG] - t0) / 1e3,
        tm.life_ns ? (double)tm.life_cycles * 1e3 / (double)tm.life_ns : -1.0,
        st->clock_khz / 1000);
    put(" launch->flag seen %.1f us, ->signature copied %.1f us, "
        "->stream idle %.1f us\n",
        us_between(h.launch, h.flag_seen),
        us_between(h.launch, h.copied), us_between(h.launch, idle));
    fputs(line, stderr);
    return 0;
}

/* Spins on the flag the last block writes after the signature; asks the stream now and then
 * so that a failed kernel is an error, not a hang. With h (timing), also notes when block
 * 0's entry and the flag are seen. */
static int wait_flag(lat_state *st, uint32_t seq, lat_host_times *h)
{
    const volatile uint32_t *flag = reinterpret_cast<const volatile uint32_t *>(st->host);
    for (unsigned spins = 1;; spins++) {
        if (h && !h->start_seen && flag[1] == seq)
            h->start_seen = now_ns();
        if (*flag == seq)
            break;
        if ((spins & 4095) == 0) {
            const cudaError_t e = cudaStreamQuery(st->stream);
            if (e == cudaSuccess && *flag != seq) {
                st->dirty = true;
                return gpu_fail(__FILE__, __LINE__, "k_lat_sign ended without its flag",
                                cudaErrorLaunchFailure);
            }
            if (e != cudaSuccess && e != cudaErrorNotReady) {
                st->dirty = true;
                return gpu_fail(__FILE__, __LINE__, "k_lat_sign", e);
            }
        }
        cpu_relax();
    }
    if (h) {
        h->flag_seen = now_ns();
        if (!h->start_seen && flag[1] == seq)
            h->start_seen = h->flag_seen;
    }
    std::atomic_thread_fence(std::memory_order_acquire);
    return 0;
}

static uint64_t load_be(const uint8_t *p, size_t len)
{
    uint64_t v = 0;
    for (size_t i = 0; i < len; i++)
        v = v << 8 | p[i];
    return v;
}

/* Family words (thash.cuh): big-endian for SHA-2, little-endian for SHAKE. */
static void family_words(uint32_t *w, const uint8_t *b, size_t n, bool shake)
{
    for (size_t i = 0; i < n / 4; i++) {
        const uint32_t be = (uint32_t)load_be(b + 4 * i, 4);
        w[i] = shake ? __builtin_bswap32(be) : be;
    }
}

/* R (into r) and H_msg on the CPU; fills the job's key words and indices. */
static void hash_message(const hbs_slhdsa_params *p, lat_job *j, uint8_t *r, const uint8_t *msg,
                         size_t msglen, const uint8_t *ctx, size_t ctxlen, hbs_prehash ph,
                         const uint8_t *sk, const uint8_t *addrnd)
{
    static const uint8_t empty[1] = {0};
    uint8_t pre[2 + HBS_SLHDSA_MAX_CONTEXT_BYTES + SLHDSA_PREHASH_OID_BYTES +
                SLHDSA_PREHASH_MAX_DIGEST];
    uint8_t dg[SLHDSA_MAX_M];
    const size_t n = p->n;
    slhdsa_msg m;
    pre[0] = ph == HBS_PREHASH_NONE ? 0 : 1;
    pre[1] = (uint8_t)ctxlen;
    if (ctxlen)
        memcpy(pre + 2, ctx, ctxlen);
    m.pre = pre;
    m.prelen = 2 + ctxlen;
    if (ph != HBS_PREHASH_NONE)
        m.prelen += hbs_slhdsa_prehash(pre + m.prelen, ph, msg ? msg : empty, msglen);
    /* pure signing hashes M itself; HashSLH-DSA only the prefix, which holds PH(M) */
    m.msg = ph == HBS_PREHASH_NONE && msg ? msg : empty;
    m.msglen = ph == HBS_PREHASH_NONE ? msglen : 0;

    slhdsa_ctx c;
    hbs_slhdsa_ctx_init(&c, p, sk + 2 * n, sk);
    hbs_slhdsa_prf_msg(&c, r, sk + n, addrnd ? addrnd : sk + 2 * n, &m);
    hbs_slhdsa_h_msg(&c, dg, r, sk + 3 * n, &m);
    const bool shake = p->family == SLHDSA_FAMILY_SHAKE;
    memcpy(j->s256, c.sha256_seeded.h, sizeof j->s256);
    memcpy(j->s512, c.sha512_seeded.h, sizeof j->s512);
    family_words(j->pk_seed, sk + 2 * n, n, shake);
    family_words(j->sk_seed, sk, n, shake);
    hbs_slhdsa_ctx_wipe(&c);

    /* the digest: k FORS indices of a bits, then the tree and the leaf (FIPS 205, alg. 19) */
    const size_t md = (p->k * p->a + 7) / 8, tbits = p->h - p->hp;
    const size_t tb = (tbits + 7) / 8, lb = (p->hp + 7) / 8;
    j->tree = load_be(dg + md, tb);
    if (tbits < 64)
        j->tree &= ((uint64_t)1 << tbits) - 1;
    j->leaf = (uint32_t)(load_be(dg + md + tb, lb) & ((1u << p->hp) - 1));
    for (uint32_t i = 0; i < p->k; i++) {
        uint32_t v = 0;
        for (uint32_t b = i * p->a; b < (i + 1) * p->a; b++)
            v = v << 1 | ((dg[b >> 3] >> (7 - (b & 7))) & 1u);
        j->fidx[i] = (uint16_t)v;
    }
    hbs_memzero(dg, sizeof dg);
}

int latency_sign(device_ctx *d, const hbs_slhdsa_params *p, uint8_t *sig, const uint8_t *msg,
                 size_t msglen, const uint8_t *ctx, size_t ctxlen, hbs_prehash ph,
                 const uint8_t *sk, const uint8_t *addrnd)
{
    const bool timing = timing_wanted();
    lat_host_times h;
    memset(&h, 0, sizeof h);
    if (timing)
        h.entry = now_ns();
    lat_state *st = state_for(d->ordinal);
    lat_plan pl;
    int err;
    if (!st->sms)
        HBS_CUDA(cudaDeviceGetAttribute(&st->sms, cudaDevAttrMultiProcessorCount, d->ordinal));
    plan_for(p, st->sms, &pl);
    HBS_CUDA(cudaSetDevice(d->ordinal));
    if ((err = state_ready(st, pl)))
        return err;
    if (timing && (err = timing_ready(st, d->ordinal)))
        return err;
    lat_job j;
    uint8_t r[SLHDSA_MAX_N];
    memset(&j, 0, sizeof j);
    if (timing)
        h.msg = now_ns();
    hash_message(p, &j, r, msg, msglen, ctx, ctxlen, ph, sk, addrnd);
    if (++st->seq == 0) /* never 0, the flag's first value */
        st->seq = 1;
    const uint32_t seq = j.seq = st->seq;
    j.s = pl.s;
    j.blocks = pl.blocks;
    j.threads = pl.threads;
    j.smem = pl.smem;
    j.counters = reinterpret_cast<uint32_t *>(st->dev);
    j.sig = st->dev + pl.o_sig;
    j.wsave = st->dev + pl.o_wsave;
    j.roots = st->dev + pl.o_roots;
    j.groots = reinterpret_cast<uint32_t *>(st->dev + pl.o_groots);
    j.host_flag = reinterpret_cast<uint32_t *>(st->host_dev);
    j.host_sig = st->host_dev + LAT_FLAG;
    if (timing) {
        j.timing = st->timing;
        j.host_start = reinterpret_cast<uint32_t *>(st->host_dev) + 1;
        h.launch = now_ns();
    }
    err = kernel_for(p).launch(j, st->stream);
    hbs_memzero(&j, sizeof j);
    if (err) {
        st->dirty = true;
        return err;
    }
    if (timing)
        h.launched = now_ns();
    if ((err = wait_flag(st, seq, timing ? &h : nullptr)))
        return err;
    memcpy(sig, st->host + LAT_FLAG, p->sig_bytes);
    memcpy(sig, r, p->n);
    if (timing) {
        h.copied = now_ns();
        return timing_report(st, p, pl, h);
    }
    return 0;
}

} // namespace hbs_gpu
