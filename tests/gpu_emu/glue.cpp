/* What the emulated GPU build needs beside the batch verifier and signer: the emulated
 * devices' count, an empty last error, "device memory" that is host memory, key generation
 * "on the GPU" as the CPU does it (byte-identical by the contract of
 * hbs_gpu_stateful_keygen), and a leaf engine whose one-GPU functions compute on the CPU,
 * spread over the emulated GPUs as the real engine is (src/gpu/spread.h). */
#include "core/leaf_engine.h"
#include "gpu/gpu_internal.h"
#include "gpu/spread.h"
#include "hbs/gpu.h"
#include "hbs/stateful.h"

#include <mutex>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
extern "C" {
#include "lms/lmots.h"
#include "lms/params.h"
#include "xmss/internal.h"
#include "xmss/params.h"
}

extern "C" int hbs_gpu_device_count(void) { return (int)hbs_gpu::emu_devices().size(); }

extern "C" int hbs_gpu_devices_used(int *devices, size_t cap)
{
    const std::vector<hbs_gpu::device_ctx *> &v = hbs_gpu::devices_in_use();
    for (size_t i = 0; i < v.size() && i < cap && devices; i++)
        devices[i] = v[i]->ordinal;
    return (int)v.size();
}

extern "C" int hbs_gpu_use_devices(const int *devices, size_t count)
{
    std::vector<hbs_gpu::device_ctx *> chosen;
    for (size_t i = 0; i < count; i++) {
        hbs_gpu::device_ctx *d = hbs_gpu::device_by_ordinal(devices[i]);
        for (hbs_gpu::device_ctx *c : chosen)
            d = c == d ? nullptr : d;
        if (!d)
            return HBS_ERR_INVALID_ARGUMENT;
        chosen.push_back(d);
    }
    hbs_gpu::devices_in_use() = count ? chosen : hbs_gpu::emu_devices();
    return HBS_OK;
}
extern "C" const char *hbs_gpu_last_error(void) { return ""; }

extern "C" int hbs_gpu_alloc(int device, void **out, size_t bytes)
{
    *out = hbs_gpu::device_by_ordinal(device) ? malloc(bytes ? bytes : 1) : nullptr;
    return *out ? HBS_OK : HBS_ERR_INVALID_ARGUMENT;
}
extern "C" void hbs_gpu_free(int, void *p) { free(p); }

/* "Page-locked" memory: plain memory the emulated GPU copies into directly (host_pinned) */
static std::mutex pinned_lock;
static std::vector<std::pair<const uint8_t *, size_t>> pinned;
extern "C" int hbs_gpu_host_alloc(void **out, size_t bytes)
{
    *out = malloc(bytes ? bytes : 1);
    if (!*out)
        return HBS_ERR_NO_MEMORY;
    std::lock_guard<std::mutex> g(pinned_lock);
    pinned.emplace_back((const uint8_t *)*out, bytes ? bytes : 1);
    return HBS_OK;
}
extern "C" void hbs_gpu_host_free(void *p)
{
    std::lock_guard<std::mutex> g(pinned_lock);
    for (size_t i = 0; i < pinned.size(); i++)
        if (pinned[i].first == p) {
            pinned.erase(pinned.begin() + (long)i);
            break;
        }
    free(p);
}
bool hbs_gpu::host_pinned(const void *p, size_t bytes)
{
    const uintptr_t a = (uintptr_t)p;
    std::lock_guard<std::mutex> g(pinned_lock);
    for (const auto &r : pinned) {
        const uintptr_t b = (uintptr_t)r.first;
        if (bytes && bytes <= r.second && a >= b && a - b <= r.second - bytes)
            return true;
    }
    return false;
}
extern "C" int hbs_gpu_copy_to(int, void *dst, const void *src, size_t bytes)
{
    memcpy(dst, src, bytes);
    return HBS_OK;
}
extern "C" int hbs_gpu_copy_from(int, void *dst, const void *src, size_t bytes)
{
    memcpy(dst, src, bytes);
    return HBS_OK;
}

extern "C" int hbs_gpu_device_name(int, char *out, size_t cap)
{
    snprintf(out, cap, "emulated");
    return HBS_OK;
}

static int emu_lms(void *user, const hbs_lms_leaf_job *j, uint32_t first, size_t count, uint8_t *out)
{
    const hbs_lms_type *t = NULL;
    const hbs_lmots_type *o = NULL;
    for (size_t i = 0; i < HBS_LMS_NUM_TYPES; i++)
        if (hbs_lms_types[i].hash == j->hash && hbs_lms_types[i].m == j->n &&
            hbs_lms_types[i].h == j->h)
            t = &hbs_lms_types[i];
    for (size_t i = 0; i < HBS_LMOTS_NUM_TYPES; i++)
        if (hbs_lmots_types[i].hash == j->hash && hbs_lmots_types[i].n == j->n &&
            hbs_lmots_types[i].w == j->w)
            o = &hbs_lmots_types[i];
    if (!t || !o)
        return HBS_ERR_UNSUPPORTED;
    const int err = hbs_lms_leaves(t, o, j->I, j->seed, first, count, out);
    if (err == HBS_OK) {
        hbs_gpu::device_ctx *d = (hbs_gpu::device_ctx *)user;
        std::lock_guard<std::mutex> g(d->lock);
        hbs_gpu::tree_cache_keep_lms(d, j, first, count, out);
    }
    return err;
}

static int emu_xmss(void *user, const hbs_xmss_leaf_job *jobs, size_t njobs, uint32_t first,
                    size_t count, uint8_t *out)
{
    const hbs_xmss_params *p = NULL;
    for (int mt = 0; mt < 2 && !p; mt++)
        for (uint32_t oid = 1; oid < 64 && !p; oid++) {
            const hbs_xmss_params *q = hbs_xmss_params_by_oid(mt, oid);
            if (q && (unsigned)q->func == jobs[0].func && q->n == jobs[0].n &&
                q->len == jobs[0].len && q->padlen == jobs[0].padlen)
                p = q;
        }
    if (!p)
        return HBS_ERR_UNSUPPORTED;
    xmss_ctx c;
    hbs_xmss_ctx_init(&c, p, jobs[0].pub_seed, jobs[0].sk_seed);
    for (size_t k = 0; k < njobs; k++)
        hbs_xmss_leaf_range(&c, out + k * count * p->n, jobs[k].layer, jobs[k].tree, first, count);
    hbs_xmss_ctx_wipe(&c);
    (void)user;
    return HBS_OK;
}

/* Whole trees as the GPU's engine makes them: the leaves here, the levels and the roots'
 * signatures by the emulated kernels (xmss_keygen_begin, _end, _back), which also fill the
 * batch signer's tree cache. The top tree's levels apart from the others' unless
 * HBS_GPU_KEYGEN_STREAMS=1, as on a GPU (xmss_keygen_split). */
static int emu_xmss_trees(void *user, const hbs_xmss_leaf_job *jobs, size_t njobs, unsigned h,
                          uint8_t *out)
{
    const size_t count = (size_t)1 << h, n = jobs[0].n;
    if (njobs == 0 || jobs[0].func != XMSS_FUNC_SHA256 || n != 32 || !jobs[0].oid || h > 16)
        return HBS_ERR_UNSUPPORTED;
    const size_t split = hbs_gpu::xmss_keygen_split(njobs);
    std::vector<uint8_t> leaves(njobs * count * n);
    int err = emu_xmss(user, jobs, njobs, 0, count, leaves.data());
    hbs_gpu::device_ctx *d = (hbs_gpu::device_ctx *)user;
    std::lock_guard<std::mutex> g(d->lock);
    hbs_gpu::xmss_keygen_run kr;
    d->keygen_sigs.clear();
    if (err || (err = hbs_gpu::xmss_keygen_begin(d, jobs, njobs, h, &kr)) ||
        (err = hbs_gpu::xmss_keygen_end(d, jobs, njobs, h, kr, leaves.data(), split)) ||
        (err = hbs_gpu::xmss_keygen_back(d, jobs, njobs, h, kr, out)))
        return err;
    hbs_gpu::tree_cache_keep_xmss(d, jobs, njobs, kr.dnodes);
    return HBS_OK;
}

static int emu_wots_sig(void *user, const hbs_xmss_leaf_job *job, uint32_t leaf,
                        const uint8_t *msg, uint8_t *sig)
{
    return hbs_gpu::keygen_wots_sig((hbs_gpu::device_ctx *)user, job, leaf, msg, sig);
}

int hbs_gpu::leaf_engine_on(hbs_gpu::device_ctx *d, hbs_leaf_engine *e)
{
    memset(e, 0, sizeof *e);
    e->lms_leaves = emu_lms;
    e->xmss_leaves = emu_xmss;
    e->xmss_trees = emu_xmss_trees;
    e->xmss_wots_sig = emu_wots_sig;
    e->user = d;
    e->min_leaves = 32;
    e->slice_leaves = (size_t)1 << 18;
    return d ? HBS_OK : HBS_ERR_NO_GPU;
}

extern "C" int hbs_gpu_leaf_engine(hbs_leaf_engine *e)
{
    static hbs_gpu::spread_engine s = {emu_lms, emu_xmss, hbs_gpu::split_min(1 << 13),
                                       emu_xmss_trees, hbs_gpu::keygen_wots_sig};
    return hbs_gpu::spread_leaf_engine(e, &s, 32, (size_t)1 << 18);
}

/* Key generation "on the GPU": the CPU's, with the leaves from the engine above, which also
 * fills the batch signer's tree cache as the GPU's does. */
extern "C" int hbs_gpu_stateful_keygen(const char *alg, const char *path, unsigned traversal,
                                       uint8_t *pk, size_t pkcap, size_t *pklen,
                                       const uint8_t *seed, size_t seedlen,
                                       hbs_progress_fn progress, void *user)
{
    hbs_leaf_engine e;
    hbs_gpu_leaf_engine(&e);
    return hbs_stateful_keygen_engine(alg, path, traversal, pk, pkcap, pklen, seed, seedlen,
                                      progress, user, &e);
}
