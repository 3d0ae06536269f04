/* Host emulation of the CUDA device dialect, enough to compile the stateful kernels
 * (src/gpu/stateful_*.cuh) with a C++ compiler: qualifiers vanish, the two intrinsics get
 * their documented meaning (atomicAdd too), and a kernel launch becomes a loop over blockIdx.x with
 * blockDim.x = 1 (scripts/gpu-emulate.sh rewrites the <<<...>>> launches). Kernels with
 * shared memory and barriers work when their loops stride by blockDim.x, so that the one
 * thread of a block does all of its work in order. */
#pragma once
#include <stdint.h>
#include <string.h>
/* (before __noinline__ below, which the standard headers spell as an attribute themselves) */
#include <condition_variable>

#define __device__
#define __global__
#define __host__
#define __constant__
#define __forceinline__ inline
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...)
/* one thread a block: block-stride loops do the whole block's work, so barriers are moot
 * (thread_local: each emulated GPU of a spread batch runs its kernels on a host thread) */
#define __shared__ static thread_local
#define __syncthreads() ((void)0)

struct emu_dim {
    unsigned x, y, z;
};
static thread_local emu_dim blockIdx __attribute__((unused)) = {0, 0, 0};
static const emu_dim threadIdx = {0, 0, 0}, blockDim = {1, 1, 1};

struct uint4 {
    uint32_t x, y, z, w;
};
static inline uint4 make_uint4(uint32_t x, uint32_t y, uint32_t z, uint32_t w)
{
    return uint4{x, y, z, w};
}

/* hi:lo shifted right by s & 31, low 32 bits */
static inline uint32_t __funnelshift_r(uint32_t lo, uint32_t hi, uint32_t s)
{
    return (uint32_t)((((uint64_t)hi << 32) | lo) >> (s & 31));
}

/* bytes of y:x (x = bytes 0..3) picked by the selector's nibbles */
static inline uint32_t __byte_perm(uint32_t x, uint32_t y, uint32_t s)
{
    const uint64_t v = ((uint64_t)y << 32) | x;
    uint32_t r = 0;
    for (int i = 0; i < 4; i++)
        r |= (uint32_t)((v >> (8 * ((s >> (4 * i)) & 7))) & 0xff) << (8 * i);
    return r;
}

/* an emulated GPU's threads run one after another, so a plain add is atomic */
static inline uint32_t atomicAdd(uint32_t *p, uint32_t v)
{
    const uint32_t old = *p;
    *p = v + old;
    return old;
}
