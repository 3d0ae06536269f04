/* What the CUDA sources share on the host side: error capture and the per-GPU pools. */
#ifndef HBS_GPU_INTERNAL_H
#define HBS_GPU_INTERNAL_H

#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>

#include <functional>
#include <mutex>
#include <vector>

#include "core/leaf_engine.h"
#include "gpu/host_pinned.h"
#include "gpu/xmss_keygen.h"

namespace hbs_gpu {

/* Records "file:line: call: message" as this thread's last error; returns HBS_ERR_GPU. */
int gpu_fail(const char *file, int line, const char *what, cudaError_t e);
void gpu_clear_error();

#define HBS_CUDA(call)                                                                   \
    do {                                                                                 \
        cudaError_t e_ = (call);                                                         \
        if (e_ != cudaSuccess)                                                           \
            return ::hbs_gpu::gpu_fail(__FILE__, __LINE__, #call, e_);                   \
    } while (0)

/* A buffer that only grows: device memory, or pinned host memory. */
struct pool_buf {
    void *p = nullptr;
    size_t cap = 0;
};

/* A captured kernel sequence (the one-signature path), valid while the pool's buffers stay
 * where they were (gen). warm_*: a plain run with this key has sized the buffers. */
struct graph_slot {
    cudaGraphExec_t exec = nullptr;
    uint64_t key = 0, gen = 0, warm_key = 0, warm_gen = 0;
};

/* One GPU's pooled buffers; `lock` serialises the calls that use it. */
/* A public tree kept on the GPU between batches (the top layer of an XMSS^MT key: every
 * batch of that key needs it): its nodes, keyed by a digest of the key's public values and
 * the tree's place. */
struct tree_entry {
    uint8_t id[32] = {0};
    uint32_t layer = 0;
    uint64_t tree = 0, used = 0;
    void *p = nullptr;
    size_t bytes = 0;
};

/* A fill of the tree cache by key generation still running on the GPU (stateful_sign.h):
 * its entries are taken but cannot be found until the root that names them is back. */
struct tree_fill {
    cudaEvent_t done = nullptr;
    const uint8_t *root = nullptr; /* pinned: where the root arrives */
    std::function<void(const uint8_t *root, uint8_t id[32])> name;
    std::vector<tree_entry *> e;
    std::vector<uint32_t> layer;
    std::vector<uint64_t> tree;
};

struct device_ctx {
    int ordinal = 0;
    cudaStream_t stream = nullptr;
    cudaStream_t side = nullptr;            /* FORS beside the hypertree; key generation's
                                             * address-only work beside the chains */
    cudaStream_t copy = nullptr;            /* results going back while kernels run */
    cudaStream_t more[3] = {nullptr, nullptr, nullptr}; /* the verifier's chunks in flight
                                                         * beyond those three streams */
    cudaEvent_t fork = nullptr, join = nullptr;
    cudaEvent_t staged[2] = {nullptr, nullptr}; /* halves of a double-buffered upload */
    std::mutex lock;
    std::vector<pool_buf> dev, host;
    uint64_t gen = 1;        /* bumped whenever a device buffer moves */
    graph_slot graphs[32];
    size_t mem_total = 0;
    std::vector<tree_entry> tree_cache;
    uint64_t tree_tick = 0;
    tree_fill fill;
    wots_memo keygen_sigs;
};

/* The GPUs in use (the chosen set, or every visible one); empty without a GPU. */
std::vector<device_ctx *> &devices_in_use();
/* The context of CUDA ordinal `ordinal` (created on first use); NULL if out of range. */
device_ctx *device_by_ordinal(int ordinal);

/* The leaf engine of GPU d alone (stateful.cu; hbs_gpu_leaf_engine spreads over all). */
int leaf_engine_on(device_ctx *d, hbs_leaf_engine *e);

/* Waits for every stream of d, best effort (errors ignored): after a failed call, so that
 * none of its work runs on into the next or into freed memory. */
void sync_streams(device_ctx *d);

/* Device buffer `slot` of at least `bytes`; the old content is lost when it grows. */
int dev_buf(device_ctx *d, unsigned slot, size_t bytes, void **out);
/* Pinned host buffer `slot` of at least `bytes`. */
int host_buf(device_ctx *d, unsigned slot, size_t bytes, void **out);
/* Whether dev_buf / host_buf would have to grow slot for bytes (growing synchronizes the
 * device: a caller with work in flight on another stream waits for it first). */
bool dev_buf_grows(const device_ctx *d, unsigned slot, size_t bytes);
bool host_buf_grows(const device_ctx *d, unsigned slot, size_t bytes);

/* Whole trees that key generation made on the GPU, kept for the batch signer when it would
 * look for them (xmss_sign.cu, lms_sign.cu); d->lock held. XMSS: the nodes from
 * xmss_keygen_end; LMS: the leaves in device memory at dleaves. */
void tree_cache_keep_xmss(device_ctx *d, const hbs_xmss_leaf_job *jobs, size_t njobs,
                          const uint8_t *dnodes);
void tree_cache_keep_lms(device_ctx *d, const hbs_lms_leaf_job *job, uint32_t first,
                         size_t count, const uint8_t *dleaves);

/* Frees what the one-signature path keeps for GPU `ordinal` (latency.cu); its device lock
 * held. */
void latency_release(int ordinal);

} // namespace hbs_gpu

#endif
