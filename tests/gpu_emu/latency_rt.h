/* The CUDA runtime calls of the one-signature driver (src/gpu/latency.cu) for its host
 * emulation (tests/gpu_emu/latency_test.cpp), beside those of tests/gpu_emu/gpu/
 * gpu_internal.h: device and mapped host memory are host memory, a launch runs to its end
 * before it returns (shim_threads.h), so a stream is always idle. The SM count is an
 * H100's or H200's, so that the signature is cut into blocks as on those GPUs. */
#pragma once
#include "gpu/gpu_internal.h"

enum { cudaStreamNonBlocking = 1, cudaHostAllocMapped = 2, cudaErrorNotReady = 600,
       cudaErrorLaunchFailure = 719 };
enum cudaDeviceAttr { cudaDevAttrMultiProcessorCount = 16, cudaDevAttrClockRate = 13,
                      cudaDevAttrMaxSharedMemoryPerMultiprocessor = 81 };
enum cudaFuncAttribute { cudaFuncAttributeMaxDynamicSharedMemorySize = 8 };
template <class K> static inline int cudaFuncSetAttribute(K, cudaFuncAttribute, int) { return 0; }
static inline int cudaStreamCreateWithFlags(cudaStream_t *s, unsigned)
{
    static int one;
    *s = &one;
    return 0;
}
static inline int cudaStreamDestroy(cudaStream_t) { return 0; }
static inline int cudaStreamQuery(cudaStream_t) { return 0; }
/* (the runtime's own header has these typed overloads) */
template <class T> static inline int cudaMalloc(T **p, size_t n)
{
    return cudaMalloc(reinterpret_cast<void **>(p), n);
}
template <class T> static inline int cudaHostAlloc(T **p, size_t n, unsigned)
{
    return cudaMalloc(reinterpret_cast<void **>(p), n);
}
static inline int cudaFreeHost(void *p) { return cudaFree(p); }
static inline int cudaHostGetDevicePointer(void **d, void *h, unsigned)
{
    *d = h;
    return 0;
}
static inline int cudaMemset(void *p, int v, size_t n)
{
    memset(p, v, n);
    return 0;
}
static inline int cudaMemcpy(void *d, const void *s, size_t n, int)
{
    memcpy(d, s, n);
    return 0;
}
static inline int cudaDeviceGetAttribute(int *v, cudaDeviceAttr a, int)
{
    *v = a == cudaDevAttrMultiProcessorCount             ? 132
         : a == cudaDevAttrMaxSharedMemoryPerMultiprocessor ? 233472
                                                            : 1980000;
    return 0;
}
template <class K>
static inline int cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *nb, K, int, size_t)
{
    *nb = 1;
    return 0;
}
static inline const char *cudaGetErrorString(int) { return "emulated"; }
