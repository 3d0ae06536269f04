/* Batch verification of LMS/HSS and XMSS/XMSS^MT signatures on the GPU
 * (hbs_gpu_stateful_verify_many).
 *
 * The host parses every item exactly as the CPU verifier does (hbs_hss_verify,
 * hbs_xmss_verify): an item that fails there (a wrong length, an unknown or mismatched type,
 * an index out of range, a NULL pointer) gets its verdict from hbs_stateful_verify itself,
 * which rejects it at once, so the verdicts are the CPU's for every input. Well-formed items
 * become GPU jobs: one per XMSS signature, one per level of an HSS signature (the levels are
 * independent: each signs the next level's key, which the signature carries), grouped by
 * parameter set so each launch runs one set.
 *
 * The kernels (stateful_verify_kernels.cuh) run each stage of the work with a thread per
 * piece of it: per job, per chain (grouped by length), per node of an L-tree level.
 *
 * Items go in chunks through two pipeline stages, each with its own stream, pinned staging
 * buffer and device buffer: while the GPU works on one chunk, the host packs the next and
 * its copy runs beside the kernels of the previous one. */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__x86_64__) && defined(__SSE2__)
#include <immintrin.h>
#define SFV_NT_STORES 1 /* copy_stream's non-temporal stores (else memcpy) */
#else
#define SFV_NT_STORES 0
#endif

#include <algorithm>
#include <mutex>
#include <vector>

#include "gpu/gpu_internal.h"
#include "gpu/host_clock.h"
#include "gpu/spread.h"
#include "gpu/stateful_verify_kernels.cuh"
#include "hbs/gpu.h"
#include "hbs/lms.h"
#include "hbs/stateful.h"
#include "hbs/xmss.h"
extern "C" {
#include "common/pool.h"
#include "lms/params.h"
#include "lms/parse.h"
#include "xmss/params.h"
}

namespace hbs_gpu {

/* Chunks in flight, one a stream (at most 6: the device's streams). With two, the two
 * chunks on the GPU run side by side and end together, so the host, which must wait for one
 * of them before it packs the next, may find the GPU empty. With three, a batch of 16,384
 * had its fifth chunk wait for the second to end, then run alone at the end (H100,
 * HBS_GPU_VERIFY_TIMING=3: the GPU on it from 5.7 to 9.5 ms of a 10 ms call, the others done
 * at 8.6): every chunk of such a batch now goes to the GPU as soon as the host has it.
 * XMSSMT-SHA2_20/2_256, 16,384 a call, medians of 14 calls (H100, session 30,
 * bench/results/gpu-H100-s30-stages.log): from ordinary memory 10.5 -> 9.5 ms, from
 * page-locked 9.0 -> 8.55 ms; growing chunks and 5,120 a chunk did no better. */
#define SFV_STAGES 6
/* Pool slots of this file (stateful.cu uses 48 and 49, the signer 54 .. 69, 71 .. 73 and 78,
 * see stateful_sign.h; the keys 76 and 77): staging (host and device) and the kernels'
 * scratch, each + stage. */
enum { SFV_HOST = 80, SFV_DEV = 80, SFV_SCRATCH = 86 };

/* Items per chunk: small enough that the host packs the next chunk while the GPU works on
 * this one, big enough to fill the GPU (4096 XMSS signatures are 274,432 chains a layer).
 * Jobs per launch group: bounds the scratch (an XMSS job with n = 64 takes 17 KB). */
#define SFV_CHUNK_ITEMS 4096
#define SFV_GROUP_JOBS 16384
#define SFV_THREADS 128
/* Batches below this many items a GPU stay on one GPU: a part of fewer than two chunks
 * leaves nothing for the host's packing to hide behind. */
#define SFV_SPLIT_ITEMS (2 * SFV_CHUNK_ITEMS)

/* One GPU job as the host sees it: which item, which kernel set, where its bytes are. */
struct sfv_job {
    uint32_t item;
    const void *set; /* hbs_xmss_params or hbs_lms_type (with ots) */
    const hbs_lmots_type *ots;
    const uint8_t *pk, *sig, *msg;
    size_t pklen, siglen, msglen;
};

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* One level as a job, through the CPU verifier's parse: the signature's length, or 0. */
static size_t lms_parse(sfv_job *j, const uint8_t *pk, size_t pklen, const uint8_t *sig,
                        size_t siglen)
{
    hbs_lms_parsed v;
    const size_t need = hbs_lms_verify_parse(&v, pk, pklen, sig, siglen);
    if (need == 0)
        return 0;
    j->set = v.t;
    j->ots = v.o;
    j->pk = pk;
    j->pklen = pklen;
    j->sig = sig;
    j->siglen = need;
    return need;
}

/* hbs_hss_verify's parse: the levels as jobs (1 to 8), or 0 if the item is malformed. */
static unsigned hss_parse(sfv_job *out, uint32_t item, const uint8_t *pk, size_t pklen,
                          const uint8_t *msg, size_t msglen, const uint8_t *sig, size_t siglen)
{
    const uint8_t *key;
    size_t keylen, off = 4;
    uint32_t L;
    if (!pk || !sig || (!msg && msglen) || pklen < 4 || siglen < 4)
        return 0;
    L = get32(pk);
    if (L < 1 || L > HBS_HSS_MAX_LEVELS || get32(sig) != L - 1)
        return 0;
    key = pk + 4;
    keylen = pklen - 4;
    for (uint32_t i = 0; i < L; i++) {
        size_t slen = lms_parse(&out[i], key, keylen, sig + off, siglen - off);
        if (slen == 0)
            return 0;
        out[i].item = item;
        off += slen;
        if (i + 1 == L) {
            if (off != siglen)
                return 0;
            out[i].msg = msg;
            out[i].msglen = msglen;
            break;
        }
        if (siglen - off < 4)
            return 0;
        keylen = hbs_lms_pk_bytes(hbs_lms_type_by_code(get32(sig + off)));
        if (keylen == 0 || siglen - off < keylen)
            return 0;
        key = sig + off;
        out[i].msg = key;
        out[i].msglen = keylen;
        off += keylen;
    }
    return L;
}

/* hbs_xmss_verify's checks (through hbs_stateful_verify): 1 and a job if well-formed. */
static int xmss_parse(sfv_job *j, uint32_t item, int mt, const uint8_t *pk, size_t pklen,
                      const uint8_t *msg, size_t msglen, const uint8_t *sig, size_t siglen)
{
    const hbs_xmss_params *p;
    uint64_t idx = 0;
    if (!pk || pklen < 4 || !sig || (!msg && msglen))
        return 0;
    p = hbs_xmss_params_by_oid(mt, get32(pk));
    if (!p || pklen != p->pk_bytes || siglen != p->sig_bytes)
        return 0;
    for (unsigned b = 0; b < p->idx_bytes; b++)
        idx = idx << 8 | sig[b];
    if (p->h < 64 && (idx >> p->h) != 0)
        return 0;
    j->item = item;
    j->set = p;
    j->ots = NULL;
    j->pk = pk;
    j->pklen = pklen;
    j->sig = sig;
    j->siglen = siglen;
    j->msg = msg;
    j->msglen = msglen;
    return 1;
}

/* A chunk packed for the GPU: the job arrays, then the bytes they point to. */
struct sfv_stage {
    cudaStream_t stream;
    uint8_t *host, *dev, *scratch;
    std::vector<sfv_job> jobs; /* sorted by set */
    /* the chunk's signatures as one run of page-locked memory (pinned_run), copied to the
     * device as they are after the packed bytes (packed of them); null: packed with the
     * rest */
    const uint8_t *run;
    size_t run_len, packed;
    bool busy;
};

static size_t align8(size_t v) { return (v + 7) & ~(size_t)7; }

/* Bytes a chunk's jobs take in the staging buffer (their signatures apart with a run). */
static size_t stage_bytes(const std::vector<sfv_job> &jobs, bool run)
{
    size_t b = align8(jobs.size() * (3 * 8 + 4 + 1)) + 64;
    for (const sfv_job &j : jobs)
        b += j.pklen + (run ? 0 : j.siglen) + j.msglen;
    return align8(b);
}

static unsigned blocks_of(size_t threads) { return (unsigned)((threads + SFV_THREADS - 1) / SFV_THREADS); }

/* HBS_GPU_VERIFY_TIMING=1: where a call's time goes, on stderr, with the GPU left to run as
 * it does: host parse, host packing (its copies into pinned memory apart), waiting for the
 * GPU. HBS_GPU_VERIFY_TIMING=2 adds the GPU's time per kernel stage, measured by running the
 * stages one at a time (the call is slower then, and the packing takes in the GPU's time).
 * HBS_GPU_VERIFY_TIMING=3 adds each chunk's span on the GPU, from its stream reaching its
 * copy up to its verdicts back (events), beside when the host queued it: whether the chunks'
 * streams overlap, and where the GPU waits for the host. */
enum { PH_START, PH_DIGITS, PH_CHAINS, PH_LTREE, PH_PATH, PH_COUNT };
static const char *const phase_names[PH_COUNT] = {"start", "digits+sort", "chains", "ltree",
                                                  "path/finish"};
static thread_local double phase_ms[PH_COUNT];
static thread_local bool phase_on;
struct sfv_timing {
    bool on, spans_on;
    double parse = 0, pack = 0, wait = 0, start;
    static thread_local double copy; /* the copies of the packing (stage_run) */
    /* (mode 3: two events a chunk, around its stage_run; its items, stage and queue time) */
    std::vector<cudaEvent_t> ev;
    struct span {
        size_t items;
        unsigned stage;
        double queued;
    };
    std::vector<span> spans;
    sfv_timing() : on(getenv("HBS_GPU_VERIFY_TIMING") != nullptr), start(host_ms())
    {
        const char *v = getenv("HBS_GPU_VERIFY_TIMING");
        phase_on = on && strcmp(v, "2") == 0;
        spans_on = on && strcmp(v, "3") == 0;
        copy = 0;
        for (double &p : phase_ms)
            p = 0;
    }
    void add(double &slot, double since)
    {
        if (on)
            slot += host_ms() - since;
    }
    /* mode 3: an event on st (before and after a chunk's stage_run) */
    void mark(cudaStream_t st)
    {
        cudaEvent_t e;
        if (spans_on && cudaEventCreate(&e) == cudaSuccess) {
            cudaEventRecord(e, st);
            ev.push_back(e);
        }
    }
    void chunk(size_t items, unsigned stage)
    {
        if (spans_on)
            spans.push_back({items, stage, host_ms() - start});
    }
    ~sfv_timing()
    {
        if (on)
            fprintf(stderr,
                    "gpu verify: %.3f ms: parse %.3f, pack %.3f (copies %.3f), waiting for the "
                    "GPU %.3f\n",
                    host_ms() - start, parse, pack, copy, wait);
        if (phase_on)
            for (int k = 0; k < PH_COUNT; k++)
                fprintf(stderr, "  gpu %-12s %.3f ms\n", phase_names[k], phase_ms[k]);
        if (spans_on && ev.size() == 2 * spans.size())
            for (size_t c = 0; c < spans.size(); c++) {
                float a = 0, b = 0;
                cudaEventSynchronize(ev[2 * c + 1]);
                cudaEventElapsedTime(&a, ev[0], ev[2 * c]);
                cudaEventElapsedTime(&b, ev[0], ev[2 * c + 1]);
                fprintf(stderr, "  chunk %zu: %zu items, stage %u, queued at %.3f ms: on the GPU "
                        "from %.3f to %.3f ms\n", c, spans[c].items, spans[c].stage,
                        spans[c].queued - spans[0].queued, a, b);
            }
        for (cudaEvent_t e : ev)
            cudaEventDestroy(e);
    }
};
thread_local double sfv_timing::copy;

/* In timing mode 2: the time of everything queued on st since the last mark goes to phase k. */
static void phase_mark(cudaStream_t st, int k)
{
    static thread_local double last;
    if (!phase_on)
        return;
    (void)cudaStreamSynchronize(st);
    const double t = host_ms();
    if (k >= 0)
        phase_ms[k] += t - last;
    last = t;
}

/* The register-resident SHA-256 kernels (n = 32 and toByte(.., 32)) serve the set. */
static bool xv_reg(const hbs_xmss_params *p)
{
    return p->func == XMSS_FUNC_SHA256 && p->n == 32 && p->padlen == 32;
}

/* Chains per job and bytes per chain end, for a job's set; levels: the path levels of all
 * its layers when their address-only parts, and those of its L-trees, are worked out ahead
 * (xv_path_prep, xv_ltree_prep); 0: none. */
static void job_shape(const sfv_job &j, size_t *chains, size_t *n, size_t *levels)
{
    if (!j.ots) {
        const hbs_xmss_params *p = (const hbs_xmss_params *)j.set;
        *chains = p->len;
        *n = p->n;
        *levels = xv_reg(p) ? (size_t)p->d * p->tree_h : 0;
    } else {
        *chains = j.ots->p;
        *n = j.ots->n;
        *levels = 0;
    }
}

/* H calls a job whose address-only parts are worked out ahead: the path levels and the
 * chains - 1 calls of one L-tree (job_shape's levels). */
static size_t prep_calls(size_t chains, size_t levels) { return levels ? levels + chains - 1 : 0; }

/* Scratch bytes of a launch group of count jobs (layout: carve below). */
static size_t scratch_bytes(size_t count, size_t chains, size_t n, size_t levels)
{
    return 2 * SFV_BUCKETS * 4 + count * (64 + 32 + 4 * chains) + align8(count * chains) +
           2 * count * chains * n + count * prep_calls(chains, levels) * 96;
}

static sfv_scratch carve(uint8_t *base, size_t count, size_t chains, size_t n, size_t levels)
{
    sfv_scratch w;
    size_t at = 0;
    w.hist = (uint32_t *)base;
    at += 2 * SFV_BUCKETS * 4;
    w.node = base + at;
    at += count * 64;
    w.mid = (uint32_t *)(base + at);
    at += count * 32;
    w.tasks = (uint32_t *)(base + at);
    at += count * chains * 4;
    w.dig = base + at;
    at += align8(count * chains);
    w.ends[0] = base + at;
    at += count * chains * n;
    w.ends[1] = base + at;
    at += count * chains * n;
    w.pprep = levels ? (uint32_t *)(base + at) : nullptr;
    w.lprep = levels ? w.pprep + levels * 24 * count : nullptr;
    w.stride = (uint32_t)chains;
    return w;
}

template <int F, bool REG>
static void xmss_launches(cudaStream_t st, const xv_set &x, sfv_jobs d, const sfv_scratch &w, uint32_t c)
{
    const uint32_t tasks = c * x.len;
    phase_mark(st, -1);
    sfv_clear<<<1, 1, 0, st>>>(w.hist);
    xv_start<F, REG><<<blocks_of(c), SFV_THREADS, 0, st>>>(x, d, w, c);
    if constexpr (REG)
        xv_path_prep<<<blocks_of((size_t)c * x.d * x.tree_h), SFV_THREADS, 0, st>>>(x, d, w, c);
    phase_mark(st, PH_START);
    for (uint32_t layer = 0; layer < x.d; layer++) {
        xv_digits<<<blocks_of(c), SFV_THREADS, 0, st>>>(x, w, c);
        sfv_scan<<<1, 1, 0, st>>>(w.hist, 16);
        sfv_scatter<<<blocks_of(c), SFV_THREADS, 0, st>>>(w, x.len, 16, c);
        phase_mark(st, PH_DIGITS);
        xv_chains<F, REG><<<blocks_of(tasks), SFV_THREADS, 0, st>>>(x, d, w, layer, tasks);
        phase_mark(st, PH_CHAINS);
        int from = 0;
        if constexpr (REG) {
            xv_ltree_prep<<<blocks_of((size_t)c * (x.len - 1)), SFV_THREADS, 0, st>>>(x, d, w, layer, c);
            for (uint32_t l = x.len, first = 0; l > 1; first += l / 2, l = (l + 1) / 2, from ^= 1)
                xv_ltree_data<<<blocks_of((size_t)c * ((l + 1) / 2)), SFV_THREADS, 0, st>>>(x, w, l, first, from, c);
        } else {
            for (uint32_t l = x.len, height = 0; l > 1; l = (l + 1) / 2, height++, from ^= 1)
                xv_ltree<F><<<blocks_of((size_t)c * ((l + 1) / 2)), SFV_THREADS, 0, st>>>(x, d, w, layer, l, height, from, c);
        }
        phase_mark(st, PH_LTREE);
        xv_path<F, REG><<<blocks_of(c), SFV_THREADS, 0, st>>>(x, d, w, layer, from, c);
        phase_mark(st, PH_PATH);
    }
}

template <int F, int NW>
static void lms_launches(cudaStream_t st, const lv_set &l, sfv_jobs d, const sfv_scratch &w, uint32_t c)
{
    const uint32_t tasks = c * l.p, buckets = 1u << l.w;
    phase_mark(st, -1);
    sfv_clear<<<1, 1, 0, st>>>(w.hist);
    lv_start<F><<<blocks_of(c), SFV_THREADS, 0, st>>>(l, d, w, c);
    phase_mark(st, PH_START);
    lv_digits<<<blocks_of(c), SFV_THREADS, 0, st>>>(l, w, c);
    sfv_scan<<<1, 1, 0, st>>>(w.hist, buckets);
    sfv_scatter<<<blocks_of(c), SFV_THREADS, 0, st>>>(w, l.p, buckets, c);
    phase_mark(st, PH_DIGITS);
    lv_chains<F, NW><<<blocks_of(tasks), SFV_THREADS, 0, st>>>(l, d, w, tasks);
    phase_mark(st, PH_CHAINS);
    lv_finish<F><<<blocks_of(c), SFV_THREADS, 0, st>>>(l, d, w, c);
    phase_mark(st, PH_PATH);
}

/* Jobs [first, first + count) of one set, in groups of at most SFV_GROUP_JOBS. */
static int launch_set(cudaStream_t stream, uint8_t *scratch, const sfv_job &j0, sfv_jobs dj,
                      size_t first, size_t count)
{
    size_t chains, n, levels;
    job_shape(j0, &chains, &n, &levels);
    for (size_t at = first; at < first + count; at += SFV_GROUP_JOBS) {
        const uint32_t c = (uint32_t)std::min((size_t)SFV_GROUP_JOBS, first + count - at);
        const sfv_scratch w = carve(scratch, c, chains, n, levels);
        sfv_jobs d = dj;
        d.pk += at;
        d.sig += at;
        d.msg += at;
        d.msg_len += at;
        d.ok += at;
        if (!j0.ots) {
            const hbs_xmss_params *p = (const hbs_xmss_params *)j0.set;
            const xv_set x = {p->n, p->padlen, p->len, p->len1, p->d, p->tree_h, p->idx_bytes};
            if (xv_reg(p))
                xmss_launches<SF_SHA256, true>(stream, x, d, w, c);
            else if (p->func == XMSS_FUNC_SHA256)
                xmss_launches<SF_SHA256, false>(stream, x, d, w, c);
            else if (p->func == XMSS_FUNC_SHA512)
                xmss_launches<SF_SHA512, false>(stream, x, d, w, c);
            else if (p->func == XMSS_FUNC_SHAKE128)
                xmss_launches<SF_SHAKE128, false>(stream, x, d, w, c);
            else
                xmss_launches<SF_SHAKE256, false>(stream, x, d, w, c);
        } else {
            const hbs_lms_type *t = (const hbs_lms_type *)j0.set;
            const hbs_lmots_type *o = j0.ots;
            const lv_set l = {o->n, o->p, o->w, o->ls, t->h};
            if (o->hash == HBS_LMS_HASH_SHA256 && o->n == 32)
                lms_launches<SF_SHA256, 8>(stream, l, d, w, c);
            else if (o->hash == HBS_LMS_HASH_SHA256)
                lms_launches<SF_SHA256, 6>(stream, l, d, w, c);
            else
                lms_launches<SF_SHAKE256, 0>(stream, l, d, w, c);
        }
        HBS_CUDA(cudaGetLastError());
    }
    return HBS_OK;
}

static bool same_set(const sfv_job &a, const sfv_job &b) { return a.set == b.set && a.ots == b.ots; }

/* Sorts the jobs by set; returns the scratch their launch groups need. */
static size_t sort_jobs(std::vector<sfv_job> &jobs)
{
    const auto before = [](const sfv_job &a, const sfv_job &b) {
        if (a.set != b.set)
            return (uintptr_t)a.set < (uintptr_t)b.set;
        return (uintptr_t)a.ots < (uintptr_t)b.ots;
    };
    if (!std::is_sorted(jobs.begin(), jobs.end(), before)) /* one set: nothing to move */
        std::stable_sort(jobs.begin(), jobs.end(), before);
    size_t need = 0;
    for (size_t first = 0; first < jobs.size();) {
        size_t end = first + 1, chains, n, levels;
        while (end < jobs.size() && same_set(jobs[end], jobs[first]))
            end++;
        job_shape(jobs[first], &chains, &n, &levels);
        need = std::max(need, scratch_bytes(std::min(end - first, (size_t)SFV_GROUP_JOBS), chains,
                                            n, levels));
        first = end;
    }
    return need;
}

/* Packs a stage's jobs, copies them over, runs a launch per set and copies the verdicts
 * back, all queued on the stage's stream. */
/* The host copy of the job arrays holds device addresses; the arena's bytes go at the
 * same offsets in the pinned buffer as in the device buffer. */
struct pack_args {
    const sfv_job *jobs;
    const uint64_t *pk, *sig, *msg;
    uint8_t *host;
    uint64_t dev;
    size_t nj;
    bool sigs; /* false: the signatures go up as they are (a run) */
};

#define SFV_PACK_BLOCK 256

/* A signature into the staging buffer with non-temporal stores: the copy engine reads the
 * buffer right after, and ordinary stores would first read every line they fill and leave
 * it dirty in the CPU's caches. XMSSMT-SHA2_20/2_256 batches of 16,384 from ordinary memory,
 * H100, two rounds: 9.52 / 9.78 ms -> 9.28 / 9.23 (bench/results/gpu-H100-s29-ab.log). */
static void copy_stream(uint8_t *dst, const uint8_t *src, size_t len)
{
#if SFV_NT_STORES
    const size_t head = std::min(len, (size_t)((16 - ((uintptr_t)dst & 15)) & 15));
    memcpy(dst, src, head);
    size_t k = head;
    for (; k + 16 <= len; k += 16)
        _mm_stream_si128((__m128i *)(dst + k), _mm_loadu_si128((const __m128i *)(src + k)));
    memcpy(dst + k, src + k, len - k);
#else
    memcpy(dst, src, len);
#endif
}

static void pack_block(void *arg, size_t b)
{
    const pack_args *a = (const pack_args *)arg;
    const size_t end = std::min(a->nj, (b + 1) * SFV_PACK_BLOCK);
    for (size_t i = b * SFV_PACK_BLOCK; i < end; i++) {
        const sfv_job &j = a->jobs[i];
        memcpy(a->host + (a->pk[i] - a->dev), j.pk, j.pklen);
        if (a->sigs)
            copy_stream(a->host + (a->sig[i] - a->dev), j.sig, j.siglen);
        if (j.msglen)
            memcpy(a->host + (a->msg[i] - a->dev), j.msg, j.msglen);
    }
#if SFV_NT_STORES
    _mm_sfence(); /* the stores seen before the copy up is queued */
#endif
}

static int stage_run(sfv_stage &s, sfv_timing &tm)
{
    const size_t nj = s.jobs.size();
    uint64_t *pk = (uint64_t *)s.host, *sig = pk + nj, *msg = sig + nj;
    uint32_t *msg_len = (uint32_t *)(msg + nj);
    uint8_t *ok = (uint8_t *)(msg_len + nj);
    const uint64_t dev = (uint64_t)(uintptr_t)s.dev;
    /* (a run sits on the device after the packed bytes, each job's signature at its
     * offset in the run) */
    const uint64_t drun = dev + s.packed;
    uint64_t at = align8(nj * (3 * 8 + 4 + 1));
    for (size_t i = 0; i < nj; i++) {
        const sfv_job &j = s.jobs[i];
        const size_t sl = s.run ? 0 : j.siglen;
        pk[i] = dev + at;
        sig[i] = s.run ? drun + (uint64_t)(j.sig - s.run) : dev + at + j.pklen;
        msg[i] = dev + at + j.pklen + sl;
        at += j.pklen + sl + j.msglen;
        msg_len[i] = (uint32_t)j.msglen;
        ok[i] = 0;
    }
    /* the copies into pinned memory are most of the host's work: over the thread pool */
    pack_args pa = {s.jobs.data(), pk, sig, msg, s.host, dev, nj, s.run == nullptr};
    const double t0 = host_ms();
    hbs_parallel_for((nj + SFV_PACK_BLOCK - 1) / SFV_PACK_BLOCK, pack_block, &pa);
    sfv_timing::copy += host_ms() - t0;
    tm.mark(s.stream);
    HBS_CUDA(cudaMemcpyAsync(s.dev, s.host, at, cudaMemcpyHostToDevice, s.stream));
    if (s.run)
        HBS_CUDA(cudaMemcpyAsync(s.dev + (drun - dev), s.run, s.run_len, cudaMemcpyHostToDevice,
                                 s.stream));
    sfv_jobs dj;
    dj.pk = (const uint8_t *const *)s.dev;
    dj.sig = dj.pk + nj;
    dj.msg = dj.sig + nj;
    dj.msg_len = (const uint32_t *)(dj.msg + nj);
    dj.ok = (uint8_t *)(dj.msg_len + nj);
    for (size_t first = 0; first < nj;) {
        size_t end = first + 1;
        while (end < nj && same_set(s.jobs[end], s.jobs[first]))
            end++;
        int err = launch_set(s.stream, s.scratch, s.jobs[first], dj, first, end - first);
        if (err)
            return err;
        first = end;
    }
    HBS_CUDA(cudaMemcpyAsync(ok, dj.ok, nj, cudaMemcpyDeviceToHost, s.stream));
    s.busy = true;
    return HBS_OK;
}

/* Waits for a stage and folds its verdicts into results (an item fails if any job does). */
static int stage_collect(sfv_stage &s, int *results)
{
    if (!s.busy)
        return HBS_OK;
    s.busy = false;
    HBS_CUDA(cudaStreamSynchronize(s.stream));
    const size_t nj = s.jobs.size();
    const uint8_t *ok = s.host + nj * (3 * 8 + 4);
    for (size_t i = 0; i < nj; i++)
        if (!ok[i])
            results[s.jobs[i].item] = HBS_ERR_VERIFY_FAILED;
    return HBS_OK;
}

/* LMS/HSS items go to the GPU unless HBS_GPU_LMS_VERIFY=0 keeps them on the CPU verifier
 * (same verdicts; a way around a GPU or driver that computes them wrong). */
static bool lms_on_gpu()
{
    static const bool on = [] {
        const char *v = getenv("HBS_GPU_LMS_VERIFY");
        return !v || strcmp(v, "0") != 0;
    }();
    return on;
}

/* What the host judges itself: items that are malformed, or LMS/HSS ones while their
 * kernel is off, verified by the CPU verifier over the thread pool. */
struct host_items {
    hbs_stateful_family family;
    int *results;
    const uint8_t *const *sigs, *const *msgs, *const *pks;
    const size_t *siglens, *msglens, *pklens;
    size_t npks;
    const size_t *items;
};

static void host_verify(void *arg, size_t j)
{
    const host_items *h = (const host_items *)arg;
    const size_t i = h->items[j], k = h->npks == 1 ? 0 : i;
    h->results[i] = hbs_stateful_verify(h->family, h->pks[k], h->pklens[k], h->msgs[i],
                                        h->msglens[i], h->sigs[i], h->siglens[i]);
}

/* The parse of a chunk's items over the thread pool, each item's jobs into its own slots
 * (one job an XMSS item, one a level of an HSS item; 0: the host judges the item). */
#define SFV_PARSE_BLOCK 256
struct parse_args {
    hbs_stateful_family family;
    const uint8_t *const *sigs, *const *msgs, *const *pks;
    const size_t *siglens, *msglens, *pklens;
    size_t npks, from, to;
    sfv_job *slots; /* HBS_HSS_MAX_LEVELS an item */
    uint8_t *got;
};

static void parse_block(void *arg, size_t b)
{
    const parse_args *a = (const parse_args *)arg;
    const size_t end = std::min(a->to, a->from + (b + 1) * SFV_PARSE_BLOCK);
    for (size_t i = a->from + b * SFV_PARSE_BLOCK; i < end; i++) {
        const size_t k = a->npks == 1 ? 0 : i, at = i - a->from;
        sfv_job *lv = a->slots + at * HBS_HSS_MAX_LEVELS;
        if (a->family == HBS_STATEFUL_HSS)
            a->got[at] = (uint8_t)(lms_on_gpu() ? hss_parse(lv, (uint32_t)i, a->pks[k],
                                                            a->pklens[k], a->msgs[i],
                                                            a->msglens[i], a->sigs[i],
                                                            a->siglens[i])
                                                : 0);
        else
            a->got[at] = (uint8_t)xmss_parse(lv, (uint32_t)i, a->family == HBS_STATEFUL_XMSSMT,
                                             a->pks[k], a->pklens[k], a->msgs[i],
                                             a->msglens[i], a->sigs[i], a->siglens[i]);
    }
}

/* The jobs of items [from, to) into jobs, in item order; items judged on the host get their
 * verdict now, the others HBS_OK until a job says otherwise. slots and got: scratch. */
static void parse_items(std::vector<sfv_job> &jobs, std::vector<size_t> &on_host,
                        std::vector<sfv_job> &slots, std::vector<uint8_t> &got,
                        hbs_stateful_family family, int *results, const uint8_t *const *sigs,
                        const size_t *siglens, const uint8_t *const *msgs,
                        const size_t *msglens, const uint8_t *const *pks,
                        const size_t *pklens, size_t npks, size_t from, size_t to)
{
    const size_t n = to - from;
    jobs.clear();
    on_host.clear();
    slots.resize(n * HBS_HSS_MAX_LEVELS);
    got.resize(n);
    parse_args pa = {family, sigs, msgs, pks, siglens, msglens, pklens, npks, from, to,
                     slots.data(), got.data()};
    hbs_parallel_for((n + SFV_PARSE_BLOCK - 1) / SFV_PARSE_BLOCK, parse_block, &pa);
    for (size_t i = from; i < to; i++) {
        const unsigned g = got[i - from];
        if (g == 0) {
            on_host.push_back(i);
            continue;
        }
        results[i] = HBS_OK;
        for (unsigned l = 0; l < g; l++)
            jobs.push_back(slots[(i - from) * HBS_HSS_MAX_LEVELS + l]);
    }
    if (!on_host.empty()) {
        host_items h = {family, results, sigs, msgs, pks, siglens, msglens, pklens, npks,
                        on_host.data()};
        hbs_parallel_for(on_host.size(), host_verify, &h);
    }
}

/* HBS_GPU_VERIFY_CHUNK=8..65536 sets the items per chunk (for tuning on other GPUs; small
 * ones put the tests' batches through many chunks). */
static size_t chunk_items()
{
    static const size_t items = [] {
        const char *v = getenv("HBS_GPU_VERIFY_CHUNK");
        const long c = v ? atol(v) : 0;
        return c >= 8 && c <= 65536 ? (size_t)c : (size_t)SFV_CHUNK_ITEMS;
    }();
    return items;
}

/* HBS_GPU_VERIFY_STAGES=1..SFV_STAGES: chunks in flight (to tune on a new GPU or host). */
static unsigned stages_in_flight()
{
    static const unsigned n = [] {
        const char *v = getenv("HBS_GPU_VERIFY_STAGES");
        const long k = v ? atol(v) : 0;
        return k >= 1 && k <= SFV_STAGES ? (unsigned)k : (unsigned)SFV_STAGES;
    }();
    return n;
}

static int verify_chunks(device_ctx *d, hbs_stateful_family family, int *results,
                         const uint8_t *const *sigs, const size_t *siglens,
                         const uint8_t *const *msgs, const size_t *msglens, size_t count,
                         const uint8_t *const *pks, const size_t *pklens, size_t npks)
{
    sfv_timing tm;
    sfv_stage st[SFV_STAGES];
    std::vector<sfv_job> jobs;
    std::vector<size_t> on_host;
    void *first_use;
    int err;
    /* the pools create the streams on first use */
    if ((err = host_buf(d, SFV_HOST, 64, &first_use)))
        return err;
    const cudaStream_t streams[6] = {d->stream, d->side,    d->copy,
                                     d->more[0], d->more[1], d->more[2]};
    static_assert(SFV_STAGES <= 6, "a stream a stage");
    for (int k = 0; k < SFV_STAGES; k++) {
        st[k].stream = streams[k];
        st[k].busy = false;
        st[k].host = st[k].dev = st[k].scratch = nullptr;
        st[k].run = nullptr;
        st[k].run_len = st[k].packed = 0;
    }
    std::vector<sfv_job> slots;
    std::vector<uint8_t> got;
    const size_t chunk = chunk_items();
    /* the first chunk a quarter of the others: the GPU starts after a quarter of the host's
     * work for one chunk, and the host packs the next chunk meanwhile */
    for (size_t from = 0, c = 0, to; from < count; from = to, c++) {
        to = std::min(count, from + (c == 0 && count > chunk ? chunk / 4 : chunk));
        const unsigned k = (unsigned)(c % stages_in_flight());
        sfv_stage &s = st[k];
        double t0 = host_ms();
        parse_items(jobs, on_host, slots, got, family, results, sigs, siglens, msgs, msglens,
                    pks, pklens, npks, from, to);
        tm.add(tm.parse, t0);
        t0 = host_ms();
        if ((err = stage_collect(s, results)))
            return err;
        tm.add(tm.wait, t0);
        if (jobs.empty())
            continue;
        s.jobs.swap(jobs);
        /* signatures in page-locked memory, one after another, go up as they are */
        s.run = pinned_run(sigs + from, siglens + from, to - from, siglens[from]);
        s.run_len = s.run ? (to - from) * siglens[from] : 0;
        s.packed = stage_bytes(s.jobs, s.run != nullptr);
        const size_t need = s.packed, dneed = need + s.run_len, scratch = sort_jobs(s.jobs);
        /* A buffer that grows frees the old one, which waits for the whole device: the other
         * stages' chunks are collected first. Only then, for the pools keep their buffers
         * from call to call: waiting here every call (a quarter-size first chunk makes the
         * next one look bigger) would stall the pipeline each time. */
        if (host_buf_grows(d, SFV_HOST + k, need) || dev_buf_grows(d, SFV_DEV + k, dneed) ||
            dev_buf_grows(d, SFV_SCRATCH + k, scratch)) {
            t0 = host_ms();
            for (sfv_stage &o : st)
                if ((err = stage_collect(o, results)))
                    return err;
            tm.add(tm.wait, t0);
        }
        if ((err = host_buf(d, SFV_HOST + k, need, (void **)&s.host)) ||
            (err = dev_buf(d, SFV_DEV + k, dneed, (void **)&s.dev)) ||
            (err = dev_buf(d, SFV_SCRATCH + k, scratch, (void **)&s.scratch)))
            return err;
        t0 = host_ms();
        if ((err = stage_run(s, tm)))
            return err;
        tm.mark(s.stream);
        tm.chunk(to - from, k);
        tm.add(tm.pack, t0);
    }
    const double t0 = host_ms();
    for (sfv_stage &o : st)
        if ((err = stage_collect(o, results)))
            return err;
    tm.add(tm.wait, t0);
    return HBS_OK;
}

} // namespace hbs_gpu

using namespace hbs_gpu;

extern "C" int hbs_gpu_stateful_verify_many(hbs_stateful_family family, int *results,
                                            const uint8_t *const *sigs, const size_t *siglens,
                                            const uint8_t *const *msgs, const size_t *msglens,
                                            size_t count, const uint8_t *const *pks,
                                            const size_t *pklens, size_t npks)
{
    int err;
    gpu_clear_error();
    if (!results && count)
        return HBS_ERR_INVALID_ARGUMENT;
    for (size_t i = 0; i < count; i++)
        results[i] = HBS_ERR_VERIFY_FAILED;
    if (count == 0)
        return HBS_OK;
    if (!sigs || !siglens || !msgs || !msglens || !pks || !pklens ||
        (npks != 1 && npks != count) || count > 0xffffffffu ||
        (family != HBS_STATEFUL_HSS && family != HBS_STATEFUL_XMSS &&
         family != HBS_STATEFUL_XMSSMT))
        return HBS_ERR_INVALID_ARGUMENT;
    std::vector<device_ctx *> &devs = devices_in_use();
    if (devs.empty())
        return HBS_ERR_NO_GPU;
    const std::vector<part> parts =
        plan_parts(count, devs.size(), split_min(SFV_SPLIT_ITEMS), 1);
    err = run_parts(devs, parts, [&](device_ctx *d, const part &q, size_t) -> int {
        const size_t a = q.start, ka = npks == 1 ? 0 : a;
        std::lock_guard<std::mutex> g(d->lock);
        HBS_CUDA(cudaSetDevice(d->ordinal));
        int r = verify_chunks(d, family, results + a, sigs + a, siglens + a, msgs + a,
                              msglens + a, q.count, pks + ka, pklens + ka, npks);
        if (r)
            sync_streams(d);
        return r;
    });
    if (err) {
        for (size_t i = 0; i < count; i++)
            results[i] = HBS_ERR_VERIFY_FAILED;
        return err;
    }
    for (size_t i = 0; i < count; i++)
        if (results[i] != HBS_OK)
            return HBS_ERR_VERIFY_FAILED;
    return HBS_OK;
}

/* ---- device-resident batches (hbs_gpu_stateful_verify_device) ---- */

namespace hbs_gpu {

/* Pool slots: the job arrays, verdicts and validity of one piece (the scratch is stage 0's). */
enum { SFV_DEV_JOBS = 70 }; /* apart from the batch signer's slots (stateful_sign.h) */

/* One set as the device entry sees it: a job template per level (set and types), the
 * sizes, and what the job kernel checks. */
struct dev_set {
    unsigned levels;
    sfv_job level[HBS_HSS_MAX_LEVELS];
    size_t sig_bytes, pk_bytes;
    const hbs_xmss_params *xp;
    hv_set hv;
};

static int dev_set_of(dev_set *ds, const char *alg)
{
    memset(ds, 0, sizeof *ds);
    const int family = hbs_stateful_family_of(alg);
    if (family < 0)
        return family;
    if (family != HBS_STATEFUL_HSS) {
        const hbs_xmss_params *p = hbs_xmss_params_by_name(alg);
        ds->levels = 1;
        ds->level[0].set = p;
        ds->xp = p;
        ds->sig_bytes = p->sig_bytes;
        ds->pk_bytes = p->pk_bytes;
        return HBS_OK;
    }
    hbs_hss_params hp;
    int err = hbs_hss_params_parse(&hp, alg);
    if (err)
        return err;
    ds->levels = hp.levels;
    ds->hv.L = hp.levels;
    ds->sig_bytes = hbs_hss_params_sig_bytes(&hp);
    ds->pk_bytes = hbs_hss_params_pk_bytes(&hp);
    uint32_t at = 4;
    for (unsigned k = 0; k < hp.levels; k++) {
        hv_level &v = ds->hv.lv[k];
        v.lms_code = hbs_lms_type_code(hp.lms[k]);
        v.ots_code = hbs_lmots_type_code(hp.ots[k]);
        v.n = (uint32_t)hbs_lmots_type_n(hp.ots[k]);
        v.p = hbs_lmots_type_p(hp.ots[k]);
        v.h = hbs_lms_type_height(hp.lms[k]);
        v.sig_at = at;
        at += (uint32_t)hbs_lms_sig_bytes(hp.lms[k], hp.ots[k]);
        v.pk_at = at;
        if (k + 1 < hp.levels)
            at += (uint32_t)hbs_lms_pk_bytes(hp.lms[k + 1]);
        ds->level[k].set = hp.lms[k];
        ds->level[k].ots = hp.ots[k];
    }
    return at == ds->sig_bytes ? HBS_OK : HBS_ERR_UNSUPPORTED;
}

static int verify_device(device_ctx *d, const dev_set &ds, int *d_results, const uint8_t *d_sigs,
                         const uint8_t *d_mp, const uint64_t *d_moff, const uint32_t *d_mlen,
                         size_t count, const uint8_t *d_pks, size_t npks)
{
    const size_t L = ds.levels, piece = SFV_GROUP_JOBS / L;
    size_t scratch = 0;
    for (unsigned k = 0; k < L; k++) {
        size_t chains, n, levels;
        job_shape(ds.level[k], &chains, &n, &levels);
        scratch = std::max(scratch, scratch_bytes(std::min(count, piece), chains, n, levels));
    }
    const size_t jobs_max = std::min(count, piece) * L;
    const size_t arrays = align8(jobs_max * (3 * 8 + 4 + 1)) + align8(std::min(count, piece));
    uint8_t *dw, *dscratch;
    cudaStream_t st = d->stream;
    int err;
    if ((err = dev_buf(d, SFV_DEV_JOBS, arrays, (void **)&dw)) ||
        (err = dev_buf(d, SFV_SCRATCH, scratch, (void **)&dscratch)))
        return err;
    for (size_t at = 0; at < count; at += piece) {
        const uint32_t c = (uint32_t)std::min(piece, count - at), nj = c * (uint32_t)L;
        sfv_jobs_out out;
        out.pk = (const uint8_t **)dw;
        out.sig = out.pk + nj;
        out.msg = out.sig + nj;
        out.msg_len = (uint32_t *)(out.msg + nj);
        uint8_t *ok = (uint8_t *)(out.msg_len + nj), *valid = dw + align8((size_t)nj * 29);
        sfv_dev_in in;
        in.sigs = d_sigs + at * ds.sig_bytes;
        in.mp = d_mp;
        in.pks = d_pks + (npks == 1 ? 0 : at * ds.pk_bytes);
        in.moff = d_moff + at;
        in.mlen = d_mlen + at;
        in.sig_bytes = (uint32_t)ds.sig_bytes;
        in.pk_bytes = (uint32_t)ds.pk_bytes;
        in.one_key = npks == 1;
        if (ds.xp)
            xv_device_jobs<<<blocks_of(c), SFV_THREADS, 0, st>>>(in, ds.xp->oid, ds.xp->h, ds.xp->idx_bytes, out, valid, c);
        else
            hv_device_jobs<<<blocks_of(c), SFV_THREADS, 0, st>>>(in, ds.hv, out, valid, c);
        HBS_CUDA(cudaGetLastError());
        sfv_jobs dj;
        dj.pk = out.pk;
        dj.sig = out.sig;
        dj.msg = out.msg;
        dj.msg_len = out.msg_len;
        dj.ok = ok;
        for (unsigned k = 0; k < L; k++)
            if ((err = launch_set(st, dscratch, ds.level[k], dj, (size_t)k * c, c)))
                return err;
        sfv_device_fold<<<blocks_of(c), SFV_THREADS, 0, st>>>(valid, ok, (uint32_t)L, c, HBS_ERR_VERIFY_FAILED, d_results + at);
        HBS_CUDA(cudaGetLastError());
    }
    HBS_CUDA(cudaStreamSynchronize(st));
    return HBS_OK;
}

} // namespace hbs_gpu

extern "C" int hbs_gpu_stateful_verify_device(const char *alg, int device, int *d_results,
                                              const uint8_t *d_sigs, const uint8_t *d_mp,
                                              const uint64_t *d_moff, const uint32_t *d_mlen,
                                              size_t count, const uint8_t *d_pks, size_t npks)
{
    dev_set ds;
    int err;
    gpu_clear_error();
    if (!alg)
        return HBS_ERR_INVALID_ARGUMENT;
    if ((err = dev_set_of(&ds, alg)) != HBS_OK)
        return err;
    if (count == 0)
        return HBS_OK;
    if (!d_results || !d_sigs || !d_mp || !d_moff || !d_mlen || !d_pks ||
        (npks != 1 && npks != count) || count > 0xffffffffu / ds.levels)
        return HBS_ERR_INVALID_ARGUMENT;
    device_ctx *d = device_by_ordinal(device);
    if (!d)
        return hbs_gpu_device_count() ? HBS_ERR_INVALID_ARGUMENT : HBS_ERR_NO_GPU;
    std::lock_guard<std::mutex> g(d->lock);
    HBS_CUDA(cudaSetDevice(d->ordinal));
    err = verify_device(d, ds, d_results, d_sigs, d_mp, d_moff, d_mlen, count, d_pks, npks);
    if (err)
        cudaStreamSynchronize(d->stream);
    return err;
}
