#include "common/pool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include "hbs/hbs.h"

#define POOL_MAX_THREADS 256

typedef struct {
    pthread_mutex_t lock;      /* guards the fields below */
    pthread_cond_t work_ready; /* a new loop (generation) was posted, or workers must grow */
    pthread_cond_t work_done;  /* the last worker left the current loop */
    pthread_mutex_t busy;      /* held by the one caller whose loop the pool runs */
    unsigned started;          /* worker threads created */
    unsigned long generation;
    unsigned active;           /* workers still inside the current loop */
    unsigned wanted;           /* workers asked to join the current loop */
    hbs_task_fn fn;
    void *arg;
    size_t count;
    atomic_size_t next;
    atomic_ulong posted; /* generation, readable without the lock for spinning workers */
} pool_state;

static pool_state pool = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER,
                          PTHREAD_COND_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, 0, 0, 0, 0,
                          NULL, NULL, 0, 0, 0};
static atomic_uint thread_cap; /* 0: not set yet */

static unsigned default_threads(void)
{
    const char *env = getenv("HBS_THREADS");
    if (env && *env) {
        long v = strtol(env, NULL, 10);
        if (v >= 1)
            return v > POOL_MAX_THREADS ? POOL_MAX_THREADS : (unsigned)v;
    }
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 1)
        n = 1;
    return n > POOL_MAX_THREADS ? POOL_MAX_THREADS : (unsigned)n;
}

unsigned hbs_get_threads(void)
{
    unsigned cap = atomic_load(&thread_cap);
    if (!cap) {
        unsigned expected = 0;
        cap = default_threads();
        if (!atomic_compare_exchange_strong(&thread_cap, &expected, cap))
            cap = expected;
    }
    return cap;
}

int hbs_set_threads(unsigned n)
{
    if (n == 0)
        n = default_threads();
    if (n > POOL_MAX_THREADS)
        return HBS_ERR_INVALID_ARGUMENT;
    atomic_store(&thread_cap, n);
    return HBS_OK;
}

static void run_items(hbs_task_fn fn, void *arg, size_t count)
{
    for (;;) {
        size_t i = atomic_fetch_add(&pool.next, 1);
        if (i >= count)
            break;
        fn(arg, i);
    }
}

/* How long a worker that finished a loop keeps watching for the next one before it sleeps.
 * A signature runs many short loops back to back (an HSS step, the levels of a
 * verification, the layers of a hypertree): waking a sleeping thread costs tens of
 * microseconds, often as much as the loop itself, while a watching one starts at once. */
#define SPIN_NS 100000

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    _mm_pause();
#endif
}

/* Returns once a loop newer than `seen` was posted or SPIN_NS have passed. */
static void watch_for_work(unsigned long seen)
{
    const uint64_t until = now_ns() + SPIN_NS;
    for (unsigned i = 1;; i++) {
        if (atomic_load_explicit(&pool.posted, memory_order_relaxed) != seen)
            return;
        cpu_relax();
        if ((i & 63) == 0 && now_ns() > until)
            return;
    }
}

static void *worker(void *unused)
{
    unsigned long seen = 0;
    (void)unused;
    pthread_mutex_lock(&pool.lock);
    for (;;) {
        if (pool.generation == seen || pool.wanted == 0) {
            pthread_mutex_unlock(&pool.lock);
            watch_for_work(seen);
            pthread_mutex_lock(&pool.lock);
        }
        while (pool.generation == seen || pool.wanted == 0)
            pthread_cond_wait(&pool.work_ready, &pool.lock);
        seen = pool.generation;
        pool.wanted--;
        pool.active++;
        hbs_task_fn fn = pool.fn;
        void *arg = pool.arg;
        size_t count = pool.count;
        pthread_mutex_unlock(&pool.lock);
        run_items(fn, arg, count);
        pthread_mutex_lock(&pool.lock);
        if (--pool.active == 0)
            pthread_cond_signal(&pool.work_done);
    }
    return NULL;
}

/* Grows the pool to `n` workers; returns how many exist. Called with pool.lock held. */
static unsigned grow(unsigned n)
{
    while (pool.started < n) {
        pthread_t t;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        int err = pthread_create(&t, &attr, worker, NULL);
        pthread_attr_destroy(&attr);
        if (err)
            break;
        pool.started++;
    }
    return pool.started;
}

void hbs_parallel_for(size_t count, hbs_task_fn fn, void *arg)
{
    unsigned threads = hbs_get_threads();
    if (count == 0)
        return;
    if (threads <= 1 || count == 1 || pthread_mutex_trylock(&pool.busy) != 0) {
        for (size_t i = 0; i < count; i++)
            fn(arg, i);
        return;
    }
    unsigned helpers = threads - 1;
    if (helpers > count - 1)
        helpers = (unsigned)(count - 1);

    pthread_mutex_lock(&pool.lock);
    helpers = grow(helpers) < helpers ? pool.started : helpers;
    pool.fn = fn;
    pool.arg = arg;
    pool.count = count;
    atomic_store(&pool.next, 0);
    pool.wanted = helpers;
    pool.generation++;
    atomic_store_explicit(&pool.posted, pool.generation, memory_order_relaxed);
    pthread_cond_broadcast(&pool.work_ready);
    pthread_mutex_unlock(&pool.lock);

    run_items(fn, arg, count);

    pthread_mutex_lock(&pool.lock);
    pool.wanted = 0; /* workers that have not joined yet need not */
    while (pool.active)
        pthread_cond_wait(&pool.work_done, &pool.lock);
    pthread_mutex_unlock(&pool.lock);
    pthread_mutex_unlock(&pool.busy);
}
