/* Spreading one batch, or one key generation, over the GPUs in use: the work is cut into
 * contiguous parts, one a GPU, each run on a host thread of its own; the parts' results go
 * where the whole's would. Host code only (the GPU emulator compiles it too). */
#ifndef HBS_GPU_SPREAD_H
#define HBS_GPU_SPREAD_H

#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <new>
#include <thread>
#include <utility>
#include <vector>

#include "core/leaf_engine.h"
#include "gpu/gpu_internal.h"

namespace hbs_gpu {

/* One GPU's part of a batch: items start .. start + count - 1. */
struct part {
    size_t start, count;
};

/* The smallest part worth a GPU of its own, in items (`dflt`), unless HBS_GPU_SPLIT_MIN
 * sets it (tuning, and tests that spread small batches over the emulated GPUs). */
static inline size_t split_min(size_t dflt)
{
    const char *v = getenv("HBS_GPU_SPLIT_MIN");
    if (!v || !*v)
        return dflt;
    char *end = nullptr;
    const unsigned long long m = strtoull(v, &end, 10);
    return end && *end == 0 && m > 0 ? (size_t)m : dflt;
}

/* count items cut into at most ndev parts of about equal size, each at least min_part items
 * (unless there is only one) and each starting on a multiple of align (items that share
 * work, such as the signatures of one tree, stay together). */
static inline std::vector<part> plan_parts(size_t count, size_t ndev, size_t min_part,
                                           size_t align)
{
    std::vector<part> parts;
    if (count == 0)
        return parts;
    align = align ? align : 1;
    min_part = min_part ? min_part : 1;
    const size_t units = (count + align - 1) / align;
    for (size_t np = std::min(ndev ? ndev : 1, units); np >= 1; np--) {
        parts.clear();
        bool small = false;
        for (size_t i = 0, at = 0; i < np; i++) {
            /* units i*units/np .. (i+1)*units/np - 1: sizes differ by one unit at most, the
             * last part perhaps less (count need not be a multiple of align) */
            const size_t end = i + 1 == np ? count : (i + 1) * units / np * align;
            parts.push_back(part{at, end - at});
            small = small || end - at < min_part;
            at = end;
        }
        if (!small || np == 1)
            break;
    }
    return parts;
}

/* fn(gpu, part, k) for each part k on gpus[k], the first on the calling thread and the rest
 * on threads of their own; the first error by part order, or 0. A thread that cannot be
 * had runs its part on the calling thread afterwards. */
template <class F>
static int run_parts(const std::vector<device_ctx *> &gpus, const std::vector<part> &parts,
                     F &&fn)
{
    std::vector<int> rc(parts.size(), 0);
    std::vector<std::thread> th;
    std::vector<size_t> later;
    for (size_t k = 1; k < parts.size(); k++) {
        try {
            th.emplace_back([&, k] { rc[k] = fn(gpus[k], parts[k], k); });
        } catch (...) {
            later.push_back(k);
        }
    }
    if (!parts.empty())
        rc[0] = fn(gpus[0], parts[0], (size_t)0);
    for (std::thread &t : th)
        t.join();
    for (size_t k : later)
        rc[k] = fn(gpus[k], parts[k], k);
    for (int r : rc)
        if (r)
            return r;
    return 0;
}

/* ---- a leaf engine over several GPUs (key generation, and a signer's batch end) ----
 * Each call's leaves are cut into ranges, one a GPU, that the one-GPU engine functions
 * (user: that GPU's device_ctx) compute side by side. Calls below min_part leaves a GPU stay
 * on the first GPU, which also keeps the whole trees it makes for the batch signer. */
struct spread_engine {
    int (*lms)(void *d, const hbs_lms_leaf_job *job, uint32_t first, size_t count, uint8_t *out);
    int (*xmss)(void *d, const hbs_xmss_leaf_job *jobs, size_t njobs, uint32_t first,
                size_t count, uint8_t *out);
    size_t min_part;
    /* whole trees of one GPU (hbs_leaf_engine's xmss_trees), or null */
    int (*xmss_trees)(void *d, const hbs_xmss_leaf_job *jobs, size_t njobs, unsigned h,
                      uint8_t *out);
    /* a WOTS+ signature one GPU made beside its whole trees (hbs_leaf_engine's
     * xmss_wots_sig), or null */
    int (*xmss_wots_sig)(device_ctx *d, const hbs_xmss_leaf_job *job, uint32_t leaf,
                         const uint8_t *msg, uint8_t *sig);
};

static inline std::vector<part> leaf_parts(const spread_engine *s, size_t count, size_t njobs)
{
    /* (the parts are counted in leaves of all njobs trees: what the GPU's time goes by) */
    const size_t per_leaf = njobs ? njobs : 1;
    return plan_parts(count, devices_in_use().size(), (s->min_part + per_leaf - 1) / per_leaf,
                      1);
}

static inline int spread_lms_leaves(void *user, const hbs_lms_leaf_job *job, uint32_t first,
                                    size_t count, uint8_t *out)
{
    const spread_engine *s = (const spread_engine *)user;
    std::vector<device_ctx *> &gpus = devices_in_use();
    if (gpus.empty())
        return HBS_ERR_NO_GPU;
    return run_parts(gpus, leaf_parts(s, count, 1), [&](device_ctx *d, const part &q, size_t) {
        return s->lms(d, job, first + (uint32_t)q.start, q.count, out + q.start * job->n);
    });
}

static inline int spread_xmss_leaves(void *user, const hbs_xmss_leaf_job *jobs, size_t njobs,
                                     uint32_t first, size_t count, uint8_t *out)
{
    const spread_engine *s = (const spread_engine *)user;
    std::vector<device_ctx *> &gpus = devices_in_use();
    if (gpus.empty())
        return HBS_ERR_NO_GPU;
    const std::vector<part> parts = leaf_parts(s, count, njobs);
    if (parts.size() <= 1 || njobs == 0)
        return s->xmss(gpus[0], jobs, njobs, first, count, out);
    const size_t n = jobs[0].n;
    /* out holds each tree's count leaves in turn: with one tree a part writes its own
     * stretch; with several, each part's leaves (tree after tree) go through a buffer */
    std::vector<std::vector<uint8_t>> tmp(njobs > 1 ? parts.size() : 0);
    try {
        for (size_t k = 0; k < tmp.size(); k++)
            tmp[k].resize(njobs * parts[k].count * n);
    } catch (const std::bad_alloc &) {
        return HBS_ERR_NO_MEMORY;
    }
    int err = run_parts(gpus, parts, [&](device_ctx *d, const part &q, size_t k) {
        return s->xmss(d, jobs, njobs, first + (uint32_t)q.start, q.count,
                       njobs > 1 ? tmp[k].data() : out + q.start * n);
    });
    for (size_t k = 0; k < tmp.size() && !err; k++)
        for (size_t j = 0; j < njobs; j++)
            memcpy(out + (j * count + parts[k].start) * n,
                   tmp[k].data() + j * parts[k].count * n, parts[k].count * n);
    return err;
}

/* Whole trees on the first GPU, where a call of their leaves would not be spread (else
 * HBS_ERR_UNSUPPORTED: the caller asks for the leaves, which all GPUs share). */
static inline int spread_xmss_trees(void *user, const hbs_xmss_leaf_job *jobs, size_t njobs,
                                    unsigned h, uint8_t *out)
{
    const spread_engine *s = (const spread_engine *)user;
    std::vector<device_ctx *> &gpus = devices_in_use();
    if (gpus.empty())
        return HBS_ERR_NO_GPU;
    if (!s->xmss_trees || leaf_parts(s, (size_t)1 << h, njobs).size() > 1)
        return HBS_ERR_UNSUPPORTED;
    return s->xmss_trees(gpus[0], jobs, njobs, h, out);
}

/* From whichever GPU in use has it (whole trees go to the first; the set may change between
 * calls). */
static inline int spread_xmss_wots_sig(void *user, const hbs_xmss_leaf_job *job, uint32_t leaf,
                                       const uint8_t *msg, uint8_t *sig)
{
    const spread_engine *s = (const spread_engine *)user;
    if (s->xmss_wots_sig)
        for (device_ctx *d : devices_in_use())
            if (s->xmss_wots_sig(d, job, leaf, msg, sig) == HBS_OK)
                return HBS_OK;
    return HBS_ERR_UNSUPPORTED;
}

/* *e: the engine over the GPUs in use, with one-GPU functions lms and xmss (s: static, as
 * the engine points at it), each GPU's calls at most slice leaves. */
static inline int spread_leaf_engine(hbs_leaf_engine *e, spread_engine *s, size_t min_leaves,
                                     size_t slice)
{
    memset(e, 0, sizeof *e);
    const size_t nd = devices_in_use().size();
    if (nd == 0)
        return HBS_ERR_NO_GPU;
    e->lms_leaves = spread_lms_leaves;
    e->xmss_leaves = spread_xmss_leaves;
    e->xmss_trees = spread_xmss_trees;
    e->xmss_wots_sig = spread_xmss_wots_sig;
    e->user = s;
    e->min_leaves = min_leaves;
    e->slice_leaves = slice * nd;
    return HBS_OK;
}

} // namespace hbs_gpu

#endif
