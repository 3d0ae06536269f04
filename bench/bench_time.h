/* What the benchmarks of one mechanism (the .c files of bench/) share: a monotonic clock in
 * milliseconds and the comparison qsort takes for their medians. */
#ifndef HBS_BENCH_TIME_H
#define HBS_BENCH_TIME_H

#include <time.h>

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

#endif
