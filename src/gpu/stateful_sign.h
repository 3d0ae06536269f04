/* What the batch signer's files share on the host: stateful_sign.cu (the entry point, the
 * tree cache, the batch end), xmss_sign.cu and lms_sign.cu (each scheme's batches). Pool
 * slots, limits, the tree cache's interface, the thread-pool helpers, the phase timer and
 * the trees a batch builds. */
#ifndef HBS_GPU_STATEFUL_SIGN_H
#define HBS_GPU_STATEFUL_SIGN_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <array>
#include <condition_variable>
#include <mutex>
#include <new>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/leaf_engine.h"
#include "gpu/gpu_internal.h"
#include "gpu/host_clock.h"
#include "hbs/gpu.h"
#include "hbs/lms.h"
#include "hbs/stateful.h"
#include "hbs/xmss.h"
#include "state/stateful_batch.h"
extern "C" {
#include "common/pool.h"
#include "hash/hash.h"
#include "lms/lmots.h"
#include "lms/params.h"
#include "xmss/internal.h"
}

namespace hbs_gpu {

/* Pool slots of the batch signer (stateful.cu has 48 and 49, stateful_verify.cu 70 and
 * 80 .. 91, stateful_keys.cu 76 and 77): staging of the jobs (host and device) and
 * the chain outputs; the fused paths: their upload, the trees' nodes, chain ends, bottom
 * signatures and scratch; the root that names a fill of the tree cache from key generation
 * (host); the two-pass signing's scratch, one per stream; the upper WOTS+ signatures back
 * (host). */
enum { SFS_HOST = 54, SFS_DEV_JOBS = 54, SFS_DEV_OUT = 55 };
enum { SFS_F_UP = 56, SFS_F_NODES = 57, SFS_F_VALS = 58, SFS_F_SIG = 59, SFS_F_LT = 60,
       SFS_F_PREP = 61, SFS_F_JOBS = 62, SFS_F_OUT = 63, SFS_F_VALS2 = 64, SFS_F_LT2 = 65,
       SFS_F_PREP2 = 66, SFS_F_LVPREP = 67, SFS_F_LVPREP2 = 68, SFS_F_UPPREP = 69,
       SFS_F_UPSIG = 78 };
enum { SFS_FILL_ROOT = 71, SFS_F_SPREP = 72, SFS_F_SPREP2 = 73 };
#define SFS_THREADS 256
#define SFS_MAX_TREE_H 16
#define SFS_LEAVES_FREE ((uint64_t)1 << 16)
#define SFS_LEAVES_PER_SIG 64
/* The fused paths hash the messages on the GPU when they are at most this many bytes in
 * all (staged through pinned memory); bigger batches of messages are hashed by the host. */
#define SFS_F_MSG_BYTES ((size_t)64 << 20)
/* Trees up to this height get their inner levels in two launches after their address-only
 * parts, the lower half a block per subtree and the upper half a block per tree (the levels
 * one launch each cost more than the narrow upper levels' idle lanes). */
#ifndef SFS_LEVELS_BLOCK_H
#define SFS_LEVELS_BLOCK_H 12
#endif
/* Trees kept on the GPU between calls, at most. */
#define SFS_TREE_CACHE_MAX 8

static inline bool fuse_enabled()
{
    const char *v = getenv("HBS_GPU_SIGN_FUSE");
    return !v || strcmp(v, "0") != 0;
}

static inline uint32_t sget32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline uint64_t sget64(const uint8_t *p)
{
    return (uint64_t)sget32(p) << 32 | sget32(p + 4);
}

static inline void sput32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

/* ---- the tree cache (stateful_sign.cu): public trees kept on the GPU between calls, named
 * by a digest of their key's public values and their place (HBS_GPU_TREE_CACHE=0: none) ---- */
bool tree_cache_on();
/* An XMSS key's identity: its set, PUB_SEED and root. */
void tree_cache_id(uint8_t id[32], const hbs_xmss_params *p, const uint8_t *pub_seed,
                   const uint8_t *root);
/* An LMS tree's identity: its type, I and root. */
void lms_tree_cache_id(uint8_t id[32], unsigned n, unsigned w, unsigned h, const uint8_t I[16],
                       const uint8_t *root);
/* The entry of (id, layer, tree) holding bytes, or null; marks it used at tick. */
tree_entry *tree_cache_find(device_ctx *d, const uint8_t id[32], uint32_t layer, uint64_t tree,
                            size_t bytes, uint64_t tick);
/* A place for a new entry (before anything is launched: freeing memory waits for the
 * device), the least recently used one when full, never one used at tick; null if none. */
tree_entry *tree_cache_slot(device_ctx *d, const uint8_t id[32], uint32_t layer, uint64_t tree,
                            size_t bytes, uint64_t tick);
/* An entry that must not be found (what it holds is not known to be whole). */
void tree_cache_drop(tree_entry *e);
/* A fill from key generation: its entries taken, then its copies started (see there). */
bool tree_fill_take(device_ctx *d, const std::vector<uint32_t> &layer,
                    const std::vector<uint64_t> &tree, size_t bytes);
void tree_fill_start(device_ctx *d, const std::vector<const uint8_t *> &src,
                     const uint8_t *root, size_t root_len, bool ok);

/* HBS_CUDA for code that must clean up: the error code (0 or HBS_ERR_GPU, recorded). */
static inline int cuda_err(cudaError_t e, const char *what, int line)
{
    return e == cudaSuccess ? 0 : gpu_fail(__FILE__, line, what, e);
}

static inline unsigned sfs_blocks(uint64_t threads)
{
    return (unsigned)((threads + SFS_THREADS - 1) / SFS_THREADS);
}

/* Bytes below which copying on this thread beats waking the pool (about 0.1 ms). */
#define SFS_COPY_ALONE ((size_t)256 << 10)
/* Copies in parts of this many bytes over the pool. */
#define SFS_COPY_PART ((size_t)128 << 10)

/* f(i) for every i < count over the library's thread pool, in at most 256 runs of
 * consecutive i: the pool hands out items one atomic increment at a time, and with 16
 * threads on one counter a trivial body cost about 100 ns an item (1.7 ms for 16,384). */
template <typename F> static void par_for(size_t count, const F &f)
{
    struct run {
        const F *f;
        size_t count, per;
    } r = {&f, count, count / 256 + 1};
    hbs_parallel_for(
        (count + r.per - 1) / r.per,
        [](void *arg, size_t c) {
            const run *q = (const run *)arg;
            const size_t end = (c + 1) * q->per < q->count ? (c + 1) * q->per : q->count;
            for (size_t i = c * q->per; i < end; i++)
                (*q->f)(i);
        },
        (void *)&r);
}

/* memcpy(dst, src, bytes), over the pool when it is big. */
static inline void par_copy(uint8_t *dst, const uint8_t *src, size_t bytes)
{
    if (bytes < SFS_COPY_ALONE) {
        memcpy(dst, src, bytes);
        return;
    }
    par_for((bytes + SFS_COPY_PART - 1) / SFS_COPY_PART, [&](size_t c) {
        const size_t b0 = c * SFS_COPY_PART,
                     b1 = b0 + SFS_COPY_PART < bytes ? b0 + SFS_COPY_PART : bytes;
        memcpy(dst + b0, src + b0, b1 - b0);
    });
}

/* HBS_GPU_SIGN_TIMING=1: the time of every phase of a batch, one line on stderr. */
struct sign_timer {
    bool on = false;
    double t0 = 0, last = 0;
    std::string text;
    sign_timer()
    {
        const char *v = getenv("HBS_GPU_SIGN_TIMING");
        on = v && *v && strcmp(v, "0") != 0;
        t0 = last = on ? host_ms() : 0;
    }
    void mark(const char *what)
    {
        if (!on)
            return;
        const double t = host_ms();
        char b[96];
        snprintf(b, sizeof b, "%s%s %.3f", text.empty() ? "" : ", ", what, t - last);
        text += b;
        last = t;
    }
    void note(const char *what, size_t a, size_t b)
    {
        if (!on)
            return;
        char t[96];
        snprintf(t, sizeof t, "%s%s %zu/%zu", text.empty() ? "" : ", ", what, a, b);
        text += t;
    }
    void report(size_t count, int err)
    {
        if (on)
            fprintf(stderr, "hbs: gpu sign_many(%zu): %s ms; total %.3f ms%s\n", count,
                    text.c_str(), host_ms() - t0, err ? " (failed)" : "");
    }
};

/* HBS_GPU_SIGN_TIMING=2: where the GPU's time of a batch goes, one line on stderr: events
 * recorded on each stream after each step, printed as the milliseconds from the first with
 * their stream (the host-side phase line above cannot see the streams overlap). 3: each
 * mark also with when the host queued it ("q", ms from the first mark's queueing), to tell
 * a GPU that waits for the host from one that is busy. */
struct gpu_timeline {
    bool on = false, host = false;
    std::vector<cudaEvent_t> ev;
    std::vector<std::string> name;
    std::vector<double> queued;
    gpu_timeline()
    {
        const char *v = getenv("HBS_GPU_SIGN_TIMING");
        on = v && atoi(v) >= 2;
        host = v && atoi(v) >= 3;
    }
    void mark(cudaStream_t s, int stream_no, const char *what, long a = -1, long b = -1)
    {
        cudaEvent_t e;
        if (!on || ev.size() >= 512 || cudaEventCreate(&e) != cudaSuccess)
            return;
        if (cudaEventRecord(e, s) != cudaSuccess) {
            cudaEventDestroy(e);
            return;
        }
        char t[96];
        if (b >= 0)
            snprintf(t, sizeof t, "s%d %s %ld-%ld", stream_no, what, a, b);
        else if (a >= 0)
            snprintf(t, sizeof t, "s%d %s %ld", stream_no, what, a);
        else
            snprintf(t, sizeof t, "s%d %s", stream_no, what);
        ev.push_back(e);
        name.push_back(t);
        queued.push_back(host_ms());
    }
    /* after every stream marked has been waited for */
    void report(const char *what)
    {
        if (on && ev.size() > 1 && cudaEventSynchronize(ev.back()) == cudaSuccess) {
            std::string line = "hbs: gpu timeline of ";
            line += what;
            line += " (ms from the first mark):";
            for (size_t i = 1; i < ev.size(); i++) {
                float ms = 0;
                if (cudaEventSynchronize(ev[i]) != cudaSuccess ||
                    cudaEventElapsedTime(&ms, ev[0], ev[i]) != cudaSuccess)
                    ms = -1;
                char t[48];
                if (host)
                    snprintf(t, sizeof t, " %.3f (q %.3f)", (double)ms, queued[i] - queued[0]);
                else
                    snprintf(t, sizeof t, " %.3f", (double)ms);
                line += i > 1 ? ", " : " ";
                line += name[i];
                line += t;
            }
            fprintf(stderr, "%s\n", line.c_str());
        }
        for (cudaEvent_t e : ev)
            cudaEventDestroy(e);
        ev.clear();
        name.clear();
        queued.clear();
    }
    ~gpu_timeline() { report("a batch that failed"); }
};

/* The batch's reservation (its indices set aside in the key file: written, fsynced,
 * renamed), made by a thread beside the signing. Every path waits here before it writes a
 * one-time signature into the caller's memory (directly from the GPU or from the host), so
 * none is there before the reservation is durable: a crash in the call may burn the
 * indices, never hand them out twice. The reservation's thread opens it once, with its
 * result. */
class release_gate {
    std::mutex m_;
    std::condition_variable cv_;
    bool done_ = false;
    int err_ = HBS_ERR_STATE;
    double waited_ = 0; /* ms the signing spent blocked here (HBS_GPU_SIGN_TIMING) */

public:
    void open(int err)
    {
        {
            std::lock_guard<std::mutex> g(m_);
            err_ = err;
            done_ = true;
        }
        cv_.notify_all();
    }
    /* HBS_OK once the indices are durably set aside; the reservation's error otherwise */
    int wait()
    {
        std::unique_lock<std::mutex> g(m_);
        if (!done_) {
            const double t0 = host_ms();
            cv_.wait(g, [this] { return done_; });
            waited_ += host_ms() - t0;
        }
        return err_;
    }
    double waited_ms()
    {
        std::lock_guard<std::mutex> g(m_);
        return waited_;
    }
};

/* Whether building every touched tree whole is worth it (else the CPU signs). */
static inline bool trees_worth_it(unsigned max_h, uint64_t leaves, size_t count)
{
    return max_h <= SFS_MAX_TREE_H && leaves <= SFS_LEAVES_FREE + SFS_LEAVES_PER_SIG * count;
}

/* ---- one-time signatures on the GPU ---- */

/* Uploads the job arrays (bytes at host, len), runs `launch`, copies out_bytes back. */
template <typename L>
static int run_jobs(device_ctx *d, const void *jobs, size_t len, size_t out_bytes, uint8_t *out,
                    L launch)
{
    void *h;
    uint8_t *dj, *dout;
    int err;
    std::lock_guard<std::mutex> g(d->lock);
    if ((err = host_buf(d, SFS_HOST, len, &h)) ||
        (err = dev_buf(d, SFS_DEV_JOBS, len, (void **)&dj)) ||
        (err = dev_buf(d, SFS_DEV_OUT, out_bytes, (void **)&dout)))
        return err;
    memcpy(h, jobs, len);
    HBS_CUDA(cudaMemcpyAsync(dj, h, len, cudaMemcpyHostToDevice, d->stream));
    launch(dj, dout);
    HBS_CUDA(cudaGetLastError());
    HBS_CUDA(cudaMemcpyAsync(out, dout, out_bytes, cudaMemcpyDeviceToHost, d->stream));
    HBS_CUDA(cudaStreamSynchronize(d->stream));
    return HBS_OK;
}

/* ---- the messages of a fused batch, staged for the GPU to hash ---- */

/* Whether the GPU hashes a batch's messages: unless HBS_GPU_SIGN_HOST_MSGS=1 has the host do
 * it (to compare, and to test), or they are too big to stage (SFS_F_MSG_BYTES in all). */
static inline bool msgs_on_gpu(const size_t *msglens, size_t count)
{
    const char *hm = getenv("HBS_GPU_SIGN_HOST_MSGS");
    if (hm && strcmp(hm, "1") == 0)
        return false;
    size_t total = 0;
    for (size_t i = 0; i < count; i++) {
        total += msglens[i];
        if (msglens[i] > UINT32_MAX || total > SFS_F_MSG_BYTES)
            return false;
    }
    return true;
}

/* Where each message starts among all of them, one after another; their bytes in all. */
static inline size_t msg_offsets(std::vector<uint64_t> &moff, const size_t *msglens,
                                 size_t count)
{
    size_t total = 0;
    moff.resize(count);
    for (size_t i = 0; i < count; i++) {
        moff[i] = total;
        total += msglens[i];
    }
    return total;
}

/* The staging: each message's offset (u64) to off, its length (u32) to len, its bytes at
 * bytes + its offset (on the calling thread while that is quicker than waking the pool). */
static inline void stage_msgs(uint8_t *off, uint8_t *len, uint8_t *bytes,
                              const std::vector<uint64_t> &moff, size_t total,
                              const uint8_t *const *msgs, const size_t *msglens)
{
    const size_t count = moff.size();
    for (size_t i = 0; i < count; i++) {
        ((uint64_t *)off)[i] = moff[i];
        ((uint32_t *)len)[i] = (uint32_t)msglens[i];
    }
    auto put = [&](size_t i) {
        if (msglens[i])
            memcpy(bytes + moff[i], msgs[i], msglens[i]);
    };
    if (total < SFS_COPY_ALONE)
        for (size_t i = 0; i < count; i++)
            put(i);
    else
        par_for(count, put);
}

/* ---- the trees a batch builds, as the host gets them back ---- */

struct xtree {
    uint32_t layer;
    uint64_t tree;
    std::vector<uint8_t> nodes; /* level 0 (leaves) first, then each level up */
    /* below the top layer, where the batch made it: the WOTS+ signature of the root by its
     * leaf of the layer above (len * n bytes) */
    std::vector<uint8_t> wots;
};

struct ltree_t {
    unsigned level;
    uint64_t inst;
    uint8_t I[16], seed[HBS_LMS_MAX_N];
    std::vector<uint8_t> T; /* T[r] for r = 1 .. 2^(h+1) - 1 at (r - 1) * m */
    uint8_t pk[24 + HBS_LMS_MAX_N];
};

/* One scheme's batch (xmss_sign.cu, lms_sign.cu): the signatures of indices first ..
 * first + count - 1 made from st, the key's private state at index first or before (its
 * seeds sign every index after), and the trees it built left in trees for the batch end;
 * *cpu set (and nothing done) when the CPU should sign instead. XMSS^MT with with_next also
 * builds the trees the traversal state needs at first + count (for the last part of a
 * batch). Nothing that signs goes into sigs before gate.wait() says HBS_OK. */
int xmss_batch(device_ctx *d, const hbs_leaf_engine *e, const uint8_t *st, size_t stlen,
               uint64_t first, uint8_t *sigs, size_t sb, const uint8_t *const *msgs,
               const size_t *msglens, size_t count, bool with_next, bool *cpu,
               std::vector<xtree> &trees, unsigned *tree_h, size_t *node_n, release_gate &gate,
               sign_timer &tm);
int hss_batch(device_ctx *d, const hbs_leaf_engine *e, const uint8_t *st, size_t stlen,
              const uint8_t *pk, size_t pklen, uint64_t first, uint8_t *sigs, size_t sb,
              const uint8_t *const *msgs, const size_t *msglens, size_t count, bool *cpu,
              std::vector<ltree_t> &trees, release_gate &gate, sign_timer &tm);
/* The signatures of one bottom tree of the key whose private state is st (a batch spread
 * over several GPUs is cut on multiples of it); 0 if st is not such a state. */
uint64_t xmss_batch_tree(const uint8_t *st, size_t stlen);
uint64_t hss_batch_tree(const uint8_t *st, size_t stlen);

} // namespace hbs_gpu

#endif
