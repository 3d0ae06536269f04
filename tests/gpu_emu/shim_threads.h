/* Host emulation of the CUDA device dialect with real threads: every thread of a block is a
 * host thread, __syncthreads a barrier among them, shared memory one static copy, and the
 * blocks of a launch run one after another. For kernels whose threads do different work
 * between barriers (the one-signature kernel, src/gpu/latency.cuh), which the one-thread
 * shim (shim.h) cannot run. Blocks that wait on each other would hang here; the kernels
 * this runs only count arrivals, and the last to arrive goes on. */
#pragma once
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include <thread>
#include <type_traits>
#include <vector>

#include "shim_common.h"

#define __grid_constant__
/* one block runs at a time: its threads share one static copy */
#define __shared__ static
#define __align__(n) alignas(n)

static thread_local emu_dim threadIdx __attribute__((unused)) = {0, 0, 0};
static emu_dim blockIdx __attribute__((unused)) = {0, 0, 0},
               blockDim __attribute__((unused)) = {1, 1, 1};
static pthread_barrier_t emu_barrier;
#define __syncthreads() ((void)pthread_barrier_wait(&emu_barrier))

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

/* The block's dynamic shared memory (extern __shared__, which the emulation's rewrite of the
 * kernel points here): exactly the launch's bytes, filled with 0xee as a block finds it, so
 * that a read of what the block never wrote gives a wrong signature; the 64 bytes behind
 * it are checked after each block, so that a write past the launch's size stops the run. */
static void *emu_dyn_smem;
enum { EMU_SMEM_GUARD = 64 };

/* kernel<<<grid, block, smem, stream>>>(args), as scripts/gpu-emulate-latency.sh rewrites it */
template <class F> static void emu_launch(unsigned grid, unsigned block, size_t smem, F body)
{
    blockDim = {block, 1, 1};
    unsigned char *sm = static_cast<unsigned char *>(malloc(smem + EMU_SMEM_GUARD));
    if (!sm)
        abort();
    emu_dyn_smem = sm;
    for (unsigned b = 0; b < grid; b++) {
        blockIdx = {b, 0, 0};
        memset(sm, 0xee, smem + EMU_SMEM_GUARD);
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
        for (size_t i = smem; i < smem + EMU_SMEM_GUARD; i++)
            if (sm[i] != 0xee) {
                fprintf(stderr, "emu_launch: block %u wrote past its %zu bytes of shared memory\n",
                        b, smem);
                abort();
            }
    }
    free(sm);
}
