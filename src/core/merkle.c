#include "core/merkle.h"

#include <stdlib.h>
#include <string.h>

#include "common/pool.h"
#include "hbs/hbs.h"

/* Leaves per block: wide enough to fill any SIMD backend, small enough for the stack and
 * L1, and fine-grained enough to balance threads. */
#define MERKLE_BLOCK_LOG 6
#define MERKLE_BLOCK (1u << MERKLE_BLOCK_LOG)

typedef struct {
    unsigned s;        /* log2 of leaves per block */
    size_t nblocks;    /* blocks of this tree */
    size_t first_task; /* index of its first block in the flat task list */
    uint8_t *tops;     /* nblocks block roots */
    uint8_t *topstmp;  /* nblocks / 2 + 1 nodes of scratch for the upper levels */
} job_plan;

typedef struct {
    const hbs_merkle_job *jobs;
    job_plan *plan;
    size_t njobs;
} merkle_run;

/* Reduces 2^levels nodes at height `base` (the first one has index `first`) to their root,
 * copying into auth[z] the sibling of the path through relative position `rel` when auth is
 * not NULL. nodes and tmp are both clobbered. */
static void reduce(const hbs_merkle_tree *t, uint8_t *root, uint8_t *auth, uint8_t *nodes,
                   uint8_t *tmp, unsigned levels, unsigned base, uint32_t first, uint32_t rel)
{
    const size_t n = t->n;
    uint8_t *cur = nodes, *next = tmp;
    size_t count = (size_t)1 << levels;

    for (unsigned z = 0; z < levels; z++) {
        if (auth)
            memcpy(auth + (size_t)z * n, cur + (size_t)((rel >> z) ^ 1) * n, n);
        count >>= 1;
        t->nodes(t->user, next, cur, base + z + 1, first >> (z + 1), count);
        uint8_t *swap = cur;
        cur = next;
        next = swap;
    }
    memcpy(root, cur, n);
}

static void block_task(void *arg, size_t task)
{
    const merkle_run *r = arg;
    size_t j = 0;
    while (j + 1 < r->njobs && r->plan[j + 1].first_task <= task)
        j++;
    const hbs_merkle_job *job = &r->jobs[j];
    const job_plan *pl = &r->plan[j];
    const hbs_merkle_tree *t = job->tree;
    const size_t b = task - pl->first_task, n = t->n;
    const uint32_t first = (uint32_t)(b << pl->s);
    const int on_path = job->auth && (job->idx >> pl->s) == b;
    uint8_t lv[MERKLE_BLOCK * HBS_MERKLE_MAX_N], tmp[(MERKLE_BLOCK / 2 + 1) * HBS_MERKLE_MAX_N];

    t->leaves(t->user, lv, first, (size_t)1 << pl->s);
    reduce(t, pl->tops + b * n, on_path ? job->auth : NULL, lv, tmp, pl->s, 0, first,
           job->idx & ((1u << pl->s) - 1));
}

static void top_task(void *arg, size_t j)
{
    const merkle_run *r = arg;
    const hbs_merkle_job *job = &r->jobs[j];
    const job_plan *pl = &r->plan[j];
    const hbs_merkle_tree *t = job->tree;
    reduce(t, job->root, job->auth ? job->auth + (size_t)pl->s * t->n : NULL, pl->tops,
           pl->topstmp, t->height - pl->s, pl->s, 0, job->idx >> pl->s);
}

int hbs_merkle_many(const hbs_merkle_job *jobs, size_t njobs)
{
    merkle_run r = {jobs, NULL, njobs};
    size_t tasks = 0, bytes = 0;
    uint8_t *mem;

    if (njobs == 0)
        return HBS_OK;
    r.plan = malloc(njobs * sizeof *r.plan);
    if (!r.plan)
        return HBS_ERR_NO_MEMORY;
    for (size_t j = 0; j < njobs; j++) {
        const hbs_merkle_tree *t = jobs[j].tree;
        job_plan *pl = &r.plan[j];
        pl->s = t->height < MERKLE_BLOCK_LOG ? t->height : MERKLE_BLOCK_LOG;
        pl->nblocks = (size_t)1 << (t->height - pl->s);
        pl->first_task = tasks;
        tasks += pl->nblocks;
        bytes += t->n * (pl->nblocks + pl->nblocks / 2 + 1);
    }
    mem = malloc(bytes);
    if (!mem) {
        free(r.plan);
        return HBS_ERR_NO_MEMORY;
    }
    for (size_t j = 0, off = 0; j < njobs; j++) {
        const size_t n = jobs[j].tree->n;
        job_plan *pl = &r.plan[j];
        pl->tops = mem + off;
        pl->topstmp = pl->tops + pl->nblocks * n;
        off += n * (pl->nblocks + pl->nblocks / 2 + 1);
    }
    hbs_parallel_for(tasks, block_task, &r);
    hbs_parallel_for(njobs, top_task, &r);
    free(mem);
    free(r.plan);
    return HBS_OK;
}

int hbs_merkle_root_auth(const hbs_merkle_tree *t, uint8_t *root, uint8_t *auth, uint32_t idx)
{
    hbs_merkle_job job = {t, root, auth, idx};
    return hbs_merkle_many(&job, 1);
}

typedef struct {
    const hbs_merkle_tree *t;
    uint8_t *nodes;
    unsigned s;
} full_run;

static void full_leaves_task(void *arg, size_t b)
{
    const full_run *r = arg;
    const size_t per = (size_t)1 << r->s;
    r->t->leaves(r->t->user, r->nodes + b * per * r->t->n, (uint32_t)(b * per), per);
}

void hbs_merkle_full(const hbs_merkle_tree *t, uint8_t *nodes)
{
    const size_t n = t->n;
    full_run r = {t, nodes, t->height < MERKLE_BLOCK_LOG ? t->height : MERKLE_BLOCK_LOG};
    hbs_parallel_for((size_t)1 << (t->height - r.s), full_leaves_task, &r);
    /* the levels above the leaves cost 1/len of the leaves: no threads needed */
    uint8_t *level = nodes;
    for (unsigned z = 1; z <= t->height; z++) {
        const size_t count = (size_t)1 << (t->height - z);
        t->nodes(t->user, level + 2 * count * n, level, z, 0, count);
        level += 2 * count * n;
    }
}

void hbs_merkle_full_lookup(const hbs_merkle_tree *t, const uint8_t *nodes, uint8_t *root,
                            uint8_t *auth, uint32_t idx)
{
    const size_t n = t->n;
    const uint8_t *level = nodes;
    for (unsigned z = 0; z < t->height; z++) {
        if (auth)
            memcpy(auth + (size_t)z * n, level + (size_t)((idx >> z) ^ 1) * n, n);
        level += ((size_t)1 << (t->height - z)) * n;
    }
    memcpy(root, level, n);
}

void hbs_merkle_climb(const hbs_merkle_tree *t, uint8_t *node, const uint8_t *auth, uint32_t idx,
                      uint8_t *scratch)
{
    const size_t n = t->n;
    for (unsigned z = 0; z < t->height; z++) {
        if ((idx >> z) & 1) {
            memcpy(scratch, auth + (size_t)z * n, n);
            memcpy(scratch + n, node, n);
        } else {
            memcpy(scratch, node, n);
            memcpy(scratch + n, auth + (size_t)z * n, n);
        }
        t->nodes(t->user, node, scratch, z + 1, idx >> (z + 1), 1);
    }
}
