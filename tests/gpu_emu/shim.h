/* Host emulation of the CUDA device dialect, enough to compile the stateful kernels
 * (src/gpu/stateful_*.cuh) with a C++ compiler: qualifiers vanish, the two intrinsics get
 * their documented meaning (atomicAdd too), and a kernel launch becomes a loop over blockIdx.x with
 * blockDim.x = 1 (scripts/gpu-emulate.sh rewrites the <<<...>>> launches). Kernels with
 * shared memory and barriers work when their loops stride by blockDim.x, so that the one
 * thread of a block does all of its work in order. */
#pragma once
/* (before __noinline__ in shim_common.h, which the standard headers spell as an attribute themselves) */
#include <condition_variable>

#include "shim_common.h"

/* one thread a block: block-stride loops do the whole block's work, so barriers are moot
 * (thread_local: each emulated GPU of a spread batch runs its kernels on a host thread) */
#define __shared__ static thread_local
#define __syncthreads() ((void)0)

static thread_local emu_dim blockIdx __attribute__((unused)) = {0, 0, 0};
static const emu_dim threadIdx = {0, 0, 0}, blockDim = {1, 1, 1};

/* an emulated GPU's threads run one after another, so a plain add is atomic */
static inline uint32_t atomicAdd(uint32_t *p, uint32_t v)
{
    const uint32_t old = *p;
    *p = v + old;
    return old;
}
