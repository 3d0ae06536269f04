/* The GPU runtime: device discovery and choice, error messages, pooled buffers. */
#include <cuda_runtime.h>
#include <stdio.h>
#include <string.h>

#include <string>

#include "gpu/gpu_internal.h"
#include "hbs/gpu.h"

namespace hbs_gpu {

static thread_local std::string last_error;

int gpu_fail(const char *file, int line, const char *what, cudaError_t e)
{
    char buf[512];
    const char *base = strrchr(file, '/');
    snprintf(buf, sizeof buf, "%s:%d: %s: %s", base ? base + 1 : file, line, what,
             cudaGetErrorString(e));
    last_error = buf;
    return HBS_ERR_GPU;
}

void gpu_clear_error() { last_error.clear(); }

/* Contexts are made once per ordinal and live as long as the process (cached init). */
static std::mutex registry_lock;
static std::vector<device_ctx *> registry;
static std::vector<device_ctx *> in_use;
static int visible = -1;

static int visible_count()
{
    if (visible < 0) {
        int n = 0;
        if (cudaGetDeviceCount(&n) != cudaSuccess)
            n = 0;
        (void)cudaGetLastError(); /* a missing driver is not an error to keep */
        visible = n;
    }
    return visible;
}

/* The context of an ordinal, made on first use; registry_lock is held. */
static device_ctx *device_locked(int ordinal)
{
    int n = visible_count();
    if (ordinal < 0 || ordinal >= n)
        return nullptr;
    if (registry.empty())
        registry.assign((size_t)n, nullptr);
    if (!registry[(size_t)ordinal]) {
        device_ctx *d = new device_ctx;
        d->ordinal = ordinal;
        registry[(size_t)ordinal] = d;
    }
    return registry[(size_t)ordinal];
}

device_ctx *device_by_ordinal(int ordinal)
{
    std::lock_guard<std::mutex> g(registry_lock);
    return device_locked(ordinal);
}

std::vector<device_ctx *> &devices_in_use()
{
    std::lock_guard<std::mutex> g(registry_lock);
    if (in_use.empty()) {
        int n = visible_count();
        for (int i = 0; i < n; i++)
            in_use.push_back(device_locked(i));
    }
    return in_use;
}

static int ensure_stream(device_ctx *d)
{
    HBS_CUDA(cudaSetDevice(d->ordinal));
    if (!d->stream) {
        HBS_CUDA(cudaStreamCreateWithFlags(&d->stream, cudaStreamNonBlocking));
        HBS_CUDA(cudaStreamCreateWithFlags(&d->side, cudaStreamNonBlocking));
        HBS_CUDA(cudaStreamCreateWithFlags(&d->copy, cudaStreamNonBlocking));
        for (cudaStream_t &s : d->more)
            HBS_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
        HBS_CUDA(cudaEventCreateWithFlags(&d->fork, cudaEventDisableTiming));
        HBS_CUDA(cudaEventCreateWithFlags(&d->join, cudaEventDisableTiming));
        HBS_CUDA(cudaEventCreateWithFlags(&d->staged[0], cudaEventDisableTiming));
        HBS_CUDA(cudaEventCreateWithFlags(&d->staged[1], cudaEventDisableTiming));
        size_t free_b = 0, total_b = 0;
        HBS_CUDA(cudaMemGetInfo(&free_b, &total_b));
        d->mem_total = total_b;
    }
    return 0;
}

/* Whether slot of a pool must grow to hold bytes (it is grown on the next request). */
static bool pool_grows(const std::vector<pool_buf> &v, unsigned slot, size_t bytes)
{
    return v.size() <= slot || v[slot].cap < bytes;
}

int dev_buf(device_ctx *d, unsigned slot, size_t bytes, void **out)
{
    int err = ensure_stream(d);
    if (err)
        return err;
    if (d->dev.size() <= slot)
        d->dev.resize(slot + 1);
    pool_buf &b = d->dev[slot];
    if (b.cap < bytes) {
        if (b.p) {
            HBS_CUDA(cudaStreamSynchronize(d->stream));
            HBS_CUDA(cudaFree(b.p));
            b.p = nullptr;
            b.cap = 0;
        }
        size_t want = bytes + bytes / 4 + 256; /* headroom: fewer regrowths */
        d->gen++;
        HBS_CUDA(cudaMalloc(&b.p, want));
        b.cap = want;
    }
    *out = b.p;
    return 0;
}

bool dev_buf_grows(const device_ctx *d, unsigned slot, size_t bytes)
{
    return pool_grows(d->dev, slot, bytes);
}

bool host_buf_grows(const device_ctx *d, unsigned slot, size_t bytes)
{
    return pool_grows(d->host, slot, bytes);
}

int host_buf(device_ctx *d, unsigned slot, size_t bytes, void **out)
{
    int err = ensure_stream(d);
    if (err)
        return err;
    if (d->host.size() <= slot)
        d->host.resize(slot + 1);
    pool_buf &b = d->host[slot];
    if (b.cap < bytes) {
        if (b.p) {
            HBS_CUDA(cudaStreamSynchronize(d->stream));
            HBS_CUDA(cudaFreeHost(b.p));
            b.p = nullptr;
            b.cap = 0;
        }
        size_t want = bytes + bytes / 4 + 256;
        HBS_CUDA(cudaHostAlloc(&b.p, want, cudaHostAllocDefault));
        b.cap = want;
    }
    *out = b.p;
    return 0;
}

} // namespace hbs_gpu

using namespace hbs_gpu;

extern "C" int hbs_gpu_device_count(void)
{
    std::lock_guard<std::mutex> g(registry_lock);
    return visible_count();
}

extern "C" int hbs_gpu_device_name(int device, char *name, size_t namelen)
{
    cudaDeviceProp prop;
    if (!name || !namelen)
        return HBS_ERR_INVALID_ARGUMENT;
    name[0] = 0;
    if (device < 0 || device >= hbs_gpu_device_count())
        return HBS_ERR_NO_GPU;
    cudaError_t e = cudaGetDeviceProperties(&prop, device);
    if (e != cudaSuccess)
        return gpu_fail(__FILE__, __LINE__, "cudaGetDeviceProperties", e);
    snprintf(name, namelen, "%s", prop.name);
    return HBS_OK;
}

extern "C" const char *hbs_gpu_last_error(void) { return last_error.c_str(); }

extern "C" int hbs_gpu_use_devices(const int *devices, size_t count)
{
    if (count && !devices)
        return HBS_ERR_INVALID_ARGUMENT;
    std::lock_guard<std::mutex> g(registry_lock);
    int n = visible_count();
    if (n == 0)
        return HBS_ERR_NO_GPU;
    std::vector<device_ctx *> chosen;
    for (size_t i = 0; i < count; i++) {
        device_ctx *d = device_locked(devices[i]);
        if (!d)
            return HBS_ERR_INVALID_ARGUMENT;
        for (device_ctx *c : chosen)
            if (c == d)
                return HBS_ERR_INVALID_ARGUMENT;
        chosen.push_back(d);
    }
    if (count == 0)
        for (int i = 0; i < n; i++)
            chosen.push_back(device_locked(i));
    in_use = chosen;
    return HBS_OK;
}

extern "C" int hbs_gpu_devices_used(int *devices, size_t cap)
{
    std::vector<device_ctx *> &v = devices_in_use();
    std::lock_guard<std::mutex> g(registry_lock);
    for (size_t i = 0; i < v.size() && i < cap && devices; i++)
        devices[i] = v[i]->ordinal;
    return (int)v.size();
}

extern "C" int hbs_gpu_alloc(int device, void **out, size_t bytes)
{
    if (!out)
        return HBS_ERR_INVALID_ARGUMENT;
    *out = nullptr;
    if (!device_by_ordinal(device))
        return hbs_gpu_device_count() ? HBS_ERR_INVALID_ARGUMENT : HBS_ERR_NO_GPU;
    HBS_CUDA(cudaSetDevice(device));
    HBS_CUDA(cudaMalloc(out, bytes ? bytes : 1));
    return HBS_OK;
}

extern "C" void hbs_gpu_free(int device, void *p)
{
    if (p && device_by_ordinal(device) && cudaSetDevice(device) == cudaSuccess)
        (void)cudaFree(p);
}

static int copy(int device, void *dst, const void *src, size_t bytes, cudaMemcpyKind kind)
{
    if ((!dst || !src) && bytes)
        return HBS_ERR_INVALID_ARGUMENT;
    if (!device_by_ordinal(device))
        return hbs_gpu_device_count() ? HBS_ERR_INVALID_ARGUMENT : HBS_ERR_NO_GPU;
    if (!bytes)
        return HBS_OK;
    HBS_CUDA(cudaSetDevice(device));
    HBS_CUDA(cudaMemcpy(dst, src, bytes, kind));
    return HBS_OK;
}

extern "C" int hbs_gpu_copy_to(int device, void *dst, const void *src, size_t bytes)
{
    return copy(device, dst, src, bytes, cudaMemcpyHostToDevice);
}

extern "C" int hbs_gpu_copy_from(int device, void *dst, const void *src, size_t bytes)
{
    return copy(device, dst, src, bytes, cudaMemcpyDeviceToHost);
}

extern "C" int hbs_gpu_host_alloc(void **out, size_t bytes)
{
    if (!out)
        return HBS_ERR_INVALID_ARGUMENT;
    *out = nullptr;
    if (hbs_gpu_device_count() == 0)
        return HBS_ERR_NO_GPU;
    const cudaError_t e = cudaHostAlloc(out, bytes ? bytes : 1, cudaHostAllocPortable);
    if (e != cudaSuccess) {
        *out = nullptr;
        return ::hbs_gpu::gpu_fail(__FILE__, __LINE__, "cudaHostAlloc", e);
    }
    return HBS_OK;
}

extern "C" void hbs_gpu_host_free(void *p)
{
    if (p)
        (void)cudaFreeHost(p);
}

namespace hbs_gpu {

/* (a failed query is no error of the caller's: the memory is taken as pageable) */
static bool pinned_at(const void *p)
{
    cudaPointerAttributes a;
    if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
        (void)cudaGetLastError();
        return false;
    }
    return a.type == cudaMemoryTypeHost;
}

bool host_pinned(const void *p, size_t bytes)
{
    return p && bytes && pinned_at(p) && pinned_at((const uint8_t *)p + bytes - 1);
}

void sync_streams(device_ctx *d)
{
    for (cudaStream_t s : {d->stream, d->side, d->copy, d->more[0], d->more[1], d->more[2]})
        if (s)
            (void)cudaStreamSynchronize(s);
}

} // namespace hbs_gpu

/* Best effort: a failing call here has nothing left to protect, so each step runs anyway. */
static void release_device(device_ctx *d)
{
    std::lock_guard<std::mutex> g(d->lock);
    if (cudaSetDevice(d->ordinal) != cudaSuccess)
        return;
    sync_streams(d);
    latency_release(d->ordinal);
    for (graph_slot &s : d->graphs) {
        if (s.exec)
            (void)cudaGraphExecDestroy(s.exec);
        s = graph_slot();
    }
    for (pool_buf &b : d->dev) {
        if (b.p) {
            (void)cudaMemset(b.p, 0, b.cap);
            (void)cudaFree(b.p);
        }
        b = pool_buf();
    }
    for (pool_buf &b : d->host) {
        if (b.p) {
            hbs_memzero(b.p, b.cap);
            (void)cudaFreeHost(b.p);
        }
        b = pool_buf();
    }
    for (tree_entry &t : d->tree_cache)
        if (t.p)
            (void)cudaFree(t.p);
    d->tree_cache.clear();
    if (d->fill.done)
        (void)cudaEventDestroy(d->fill.done);
    d->fill = tree_fill();
    d->dev.clear();
    d->host.clear();
    d->gen++;
    cudaEvent_t *events[] = {&d->fork, &d->join, &d->staged[0], &d->staged[1]};
    for (cudaEvent_t *e : events) {
        if (*e)
            (void)cudaEventDestroy(*e);
        *e = nullptr;
    }
    for (cudaStream_t &s : d->more) {
        if (s)
            (void)cudaStreamDestroy(s);
        s = nullptr;
    }
    if (d->copy)
        (void)cudaStreamDestroy(d->copy);
    if (d->side)
        (void)cudaStreamDestroy(d->side);
    if (d->stream)
        (void)cudaStreamDestroy(d->stream);
    d->copy = d->side = d->stream = nullptr;
    (void)cudaGetLastError();
}

extern "C" void hbs_gpu_release(void)
{
    std::vector<device_ctx *> all;
    {
        std::lock_guard<std::mutex> g(registry_lock);
        for (device_ctx *d : registry)
            if (d)
                all.push_back(d);
    }
    for (device_ctx *d : all)
        release_device(d);
}
