/* The host side of src/gpu/gpu_internal.h for the emulation: "devices" whose memory is host
 * memory, copies are memcpy, streams do nothing. HBS_EMU_DEVICES=N (default 1) makes N of
 * them, so that batches spread over several GPUs (src/gpu/spread.h) run here too. */
#pragma once
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <functional>
#include <mutex>
#include <vector>

#include "core/leaf_engine.h"
#include "gpu/xmss_keygen.h"
#include "gpu/host_pinned.h" /* (host_pinned: glue.cpp, what the emulated hbs_gpu_host_alloc gave) */

typedef int cudaError_t;
typedef int *cudaStream_t;
enum { cudaSuccess = 0, cudaMemcpyHostToDevice = 1, cudaMemcpyDeviceToHost = 2,
       cudaMemcpyDeviceToDevice = 3 };
static inline int cudaMalloc(void **p, size_t n)
{
    *p = malloc(n);
    return *p ? 0 : 2;
}
static inline int cudaFree(void *p)
{
    free(p);
    return 0;
}
static inline int cudaMemcpyAsync(void *d, const void *s, size_t n, int, cudaStream_t)
{
    memcpy(d, s, n);
    return 0;
}
static inline int cudaMemsetAsync(void *d, int v, size_t n, cudaStream_t)
{
    memset(d, v, n);
    return 0;
}
static inline int cudaMemcpy2DAsync(void *d, size_t dpitch, const void *s, size_t spitch,
                                    size_t width, size_t height, int, cudaStream_t)
{
    for (size_t r = 0; r < height; r++)
        memcpy((uint8_t *)d + r * dpitch, (const uint8_t *)s + r * spitch, width);
    return 0;
}
static inline int cudaStreamSynchronize(cudaStream_t) { return 0; }
typedef int cudaEvent_t;
enum { cudaEventDisableTiming = 2 };
static inline int cudaEventCreateWithFlags(cudaEvent_t *e, unsigned)
{
    *e = 1;
    return 0;
}
static inline int cudaEventCreate(cudaEvent_t *e)
{
    *e = 1;
    return 0;
}
static inline int cudaEventElapsedTime(float *ms, cudaEvent_t, cudaEvent_t)
{
    *ms = 0; /* emulated launches run on the host: no GPU time to tell */
    return 0;
}
static inline int cudaEventRecord(cudaEvent_t, cudaStream_t) { return 0; }
static inline int cudaEventSynchronize(cudaEvent_t) { return 0; }
static inline int cudaStreamWaitEvent(cudaStream_t, cudaEvent_t, unsigned) { return 0; }
static inline int cudaEventDestroy(cudaEvent_t) { return 0; }
static inline int cudaGetLastError() { return 0; }
static inline int cudaSetDevice(int) { return 0; }

namespace hbs_gpu {

static inline int gpu_fail(const char *, int, const char *, cudaError_t) { return -99; }
static inline void gpu_clear_error() {}
#define HBS_CUDA(call)                                                                   \
    do {                                                                                 \
        if ((call) != 0)                                                                 \
            return -99;                                                                  \
    } while (0)

struct pool_buf {
    void *p = nullptr;
    size_t cap = 0;
};
struct tree_entry {
    uint8_t id[32] = {0};
    uint32_t layer = 0;
    uint64_t tree = 0, used = 0;
    void *p = nullptr;
    size_t bytes = 0;
};
/* A fill of the tree cache by key generation still running on the GPU (stateful_sign.cu):
 * its entries are taken but cannot be found until the root that names them is back. */
struct tree_fill {
    cudaEvent_t done = 0;
    const uint8_t *root = nullptr; /* pinned: where the root arrives */
    std::function<void(const uint8_t *root, uint8_t id[32])> name;
    std::vector<tree_entry *> e;
    std::vector<uint32_t> layer;
    std::vector<uint64_t> tree;
};

struct device_ctx {
    int ordinal = 0;
    cudaStream_t stream = nullptr, side = nullptr, copy = nullptr;
    cudaStream_t more[3] = {nullptr, nullptr, nullptr};
    cudaEvent_t fork = 0, join = 0;
    std::mutex lock;
    std::vector<pool_buf> dev, host;
    std::vector<tree_entry> tree_cache;
    uint64_t tree_tick = 0;
    tree_fill fill;
    wots_memo keygen_sigs;
};
/* every emulated GPU; devices_in_use() starts as all of them (hbs_gpu_use_devices in
 * tests/gpu_emu/glue.cpp chooses) */
static inline const std::vector<device_ctx *> &emu_devices()
{
    static const std::vector<device_ctx *> v = [] {
        const char *e = getenv("HBS_EMU_DEVICES");
        const int n = e && atoi(e) > 0 && atoi(e) <= 16 ? atoi(e) : 1;
        std::vector<device_ctx *> r;
        for (int i = 0; i < n; i++) {
            r.push_back(new device_ctx);
            r.back()->ordinal = i;
        }
        return r;
    }();
    return v;
}
static inline std::vector<device_ctx *> &devices_in_use()
{
    static std::vector<device_ctx *> v = emu_devices();
    return v;
}
static inline device_ctx *device_by_ordinal(int ordinal)
{
    const std::vector<device_ctx *> &v = emu_devices();
    return ordinal >= 0 && (size_t)ordinal < v.size() ? v[(size_t)ordinal] : nullptr;
}
/* fresh buffers are filled with 0xee, so a read of what was never copied shows */
static inline int emu_buf(std::vector<pool_buf> &v, unsigned slot, size_t bytes, void **out)
{
    if (v.size() <= slot)
        v.resize(slot + 1);
    pool_buf &b = v[slot];
    if (b.cap < bytes) {
        free(b.p);
        b.p = malloc(bytes);
        if (!b.p)
            return -99;
        memset(b.p, 0xee, bytes);
        b.cap = bytes;
    }
    *out = b.p;
    return 0;
}
static inline int dev_buf(device_ctx *d, unsigned slot, size_t bytes, void **out)
{
    return emu_buf(d->dev, slot, bytes, out);
}
static inline int host_buf(device_ctx *d, unsigned slot, size_t bytes, void **out)
{
    return emu_buf(d->host, slot, bytes, out);
}
static inline bool emu_grows(const std::vector<pool_buf> &v, unsigned slot, size_t bytes)
{
    return v.size() <= slot || v[slot].cap < bytes;
}
static inline void sync_streams(device_ctx *) {}
static inline bool dev_buf_grows(const device_ctx *d, unsigned slot, size_t bytes)
{
    return emu_grows(d->dev, slot, bytes);
}
static inline bool host_buf_grows(const device_ctx *d, unsigned slot, size_t bytes)
{
    return emu_grows(d->host, slot, bytes);
}

int leaf_engine_on(device_ctx *d, hbs_leaf_engine *e);

void tree_cache_keep_xmss(device_ctx *d, const hbs_xmss_leaf_job *jobs, size_t njobs,
                          const uint8_t *dnodes);
void tree_cache_keep_lms(device_ctx *d, const hbs_lms_leaf_job *job, uint32_t first,
                         size_t count, const uint8_t *dleaves);

} // namespace hbs_gpu
