/* What both host emulations of the CUDA device dialect share (shim.h: one thread a block;
 * shim_threads.h: a host thread a GPU thread): the qualifiers, the vector types the kernels
 * use, and the intrinsics whose meaning does not depend on how threads run. */
#pragma once
#include <stdint.h>
#include <string.h>

#define __device__
#define __global__
#define __host__
#define __constant__
#define __forceinline__ inline
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...)

struct emu_dim {
    unsigned x, y, z;
};

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
