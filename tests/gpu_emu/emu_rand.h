/* The emulation tests' random inputs: xorshift64, the same sequence in every run, so that a
 * failure repeats. */
#pragma once
#include <stddef.h>
#include <stdint.h>

static uint64_t emu_rng = 0x9e3779b97f4a7c15ull;
static inline uint32_t rnd32()
{
    emu_rng ^= emu_rng << 13;
    emu_rng ^= emu_rng >> 7;
    emu_rng ^= emu_rng << 17;
    return (uint32_t)(emu_rng >> 16);
}
static inline void rnd_bytes(uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)rnd32();
}
