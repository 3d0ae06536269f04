/* Host emulation of the CUDA device dialect with real threads: every thread of a block is a
 * host thread, __syncthreads a barrier among them, shared memory one static copy, and the
 * blocks of a launch run one after another. For kernels whose threads do different work
 * between barriers (the one-signature kernel, src/gpu/latency.cuh), which the one-thread
 * shim (shim.h) cannot run. Blocks that wait on each other would hang here; the kernels
 * this runs only count arrivals, and the last to arrive goes on. */
#pragma once
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include <thread>
#include <type_traits>
#include <vector>

#define __device__
#define __global__
#define __host__
#define __constant__
#define __forceinline__ inline
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...)
#define __grid_constant__
/* one block runs at a time: its threads share one static copy */
#define __shared__ static
#define __align__(n) alignas(n)

struct emu_dim {
    unsigned x, y, z;
};
static thread_local emu_dim threadIdx __attribute__((unused)) = {0, 0, 0};
static emu_dim blockIdx __attribute__((unused)) = {0, 0, 0},
               blockDim __attribute__((unused)) = {1, 1, 1};
static pthread_barrier_t emu_barrier;
#define __syncthreads() ((void)pthread_barrier_wait(&emu_barrier))

struct uint2 {
    uint32_t x, y;
};
struct uint4 {
    uint32_t x, y, z, w;
};
static inline uint4 make_uint4(uint32_t x, uint32_t y, uint32_t z, uint32_t w)
{
    return uint4{x, y, z, w};
}

static inline uint32_t __funnelshift_r(uint32_t lo, uint32_t hi, uint32_t s)
{
    return (uint32_t)((((uint64_t)hi << 32) | lo) >> (s & 31));
}
static inline uint32_t __byte_perm(uint32_t x, uint32_t y, uint32_t s)
{
    const uint64_t v = ((uint64_t)y << 32) | x;
    uint32_t r = 0;
    for (int i = 0; i < 4; i++)
        r |= (uint32_t)((v >> (8 * ((s >> (4 * i)) & 7))) & 0xff) << (8 * i);
    return r;
}
static inline int __popc(uint32_t v) { return __builtin_popcount(v); }

/* the threads of a block run at once: atomics are real ones */
static inline uint32_t atomicAdd(uint32_t *p, uint32_t v)
{
    return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST);
}
static inline uint32_t atomicInc(uint32_t *p, uint32_t limit)
{
    uint32_t old = __atomic_load_n(p, __ATOMIC_SEQ_CST);
    while (!__atomic_compare_exchange_n(p, &old, old >= limit ? 0 : old + 1, false,
                                        __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
    }
    return old;
}
static inline unsigned long long atomicMin(unsigned long long *p, unsigned long long v)
{
    unsigned long long old = __atomic_load_n(p, __ATOMIC_SEQ_CST);
    while (v < old && !__atomic_compare_exchange_n(p, &old, v, false, __ATOMIC_SEQ_CST,
                                                   __ATOMIC_SEQ_CST)) {
    }
    return old;
}
static inline unsigned long long atomicMax(unsigned long long *p, unsigned long long v)
{
    unsigned long long old = __atomic_load_n(p, __ATOMIC_SEQ_CST);
    while (v > old && !__atomic_compare_exchange_n(p, &old, v, false, __ATOMIC_SEQ_CST,
                                                   __ATOMIC_SEQ_CST)) {
    }
    return old;
}
static inline void __threadfence() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
static inline void __threadfence_system() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
static inline long long clock64() { return 0; }
template <class T> static inline T __ldcg(const T *p) { return *p; }

/* kernel<<<grid, block, smem, stream>>>(args), as scripts/gpu-emulate.sh rewrites it */
template <class F> static void emu_launch(unsigned grid, unsigned block, F body)
{
    blockDim = {block, 1, 1};
    for (unsigned b = 0; b < grid; b++) {
        blockIdx = {b, 0, 0};
        pthread_barrier_init(&emu_barrier, nullptr, block);
        std::vector<std::thread> th;
        th.reserve(block);
        for (unsigned t = 0; t < block; t++)
            th.emplace_back([t, &body] {
                threadIdx = {t, 0, 0};
                body();
            });
        for (std::thread &x : th)
            x.join();
        pthread_barrier_destroy(&emu_barrier);
    }
}
