/* A process-wide pool of worker threads for data-parallel loops. The caller of
 * hbs_parallel_for works too; when the pool is busy with another caller's loop, or threads
 * are capped at 1, the loop simply runs on the calling thread. Results never depend on how
 * many threads ran. */
#ifndef HBS_COMMON_POOL_H
#define HBS_COMMON_POOL_H

#include <stddef.h>

typedef void (*hbs_task_fn)(void *arg, size_t index);

/* Calls fn(arg, i) once for every i < count, spread over the pool. */
void hbs_parallel_for(size_t count, hbs_task_fn fn, void *arg);

#endif
