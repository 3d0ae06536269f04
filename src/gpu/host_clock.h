/* The host's monotonic clock in milliseconds, for the GPU code's timing lines
 * (HBS_GPU_*_TIMING); one definition for the real GPU build and the emulator alike. */
#ifndef HBS_GPU_HOST_CLOCK_H
#define HBS_GPU_HOST_CLOCK_H

#include <time.h>

static inline double host_ms()
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

#endif
