/* Key generation's whole XMSS trees on the GPU (xmss_sign.cu): what the engine
 * (stateful.cu, or the emulation's glue) calls around the kernels of their leaves, and the
 * WOTS+ signatures made beside them. Host code; shared by gpu_internal.h and its emulation. */
#ifndef HBS_GPU_XMSS_KEYGEN_H
#define HBS_GPU_XMSS_KEYGEN_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <vector>

#include "core/leaf_engine.h"

namespace hbs_gpu {

struct device_ctx;

/* How many of a whole-trees call's njobs trees go on d->stream, the rest on d->copy beside
 * them (0: all on d->stream). The top tree goes on a stream of its own, so that the lower
 * trees' L-trees, levels and root signatures, latency-bound, run beside its chains rather
 * than after them (H100, bench/gpu/keygen-streams.sh, medians of 15 in three rounds:
 * XMSSMT-SHA2_20/2_256 1.099 / 1.128 / 1.063 ms on one stream, 1.017 / 1.104 / 1.018 on two).
 * HBS_GPU_KEYGEN_STREAMS=1 keeps every tree on one stream. Read once; the emulator's glue
 * calls it too. */
inline size_t xmss_keygen_split(size_t njobs)
{
    static const bool one = [] {
        const char *v = getenv("HBS_GPU_KEYGEN_STREAMS");
        return v && *v && atoi(v) == 1;
    }();
    return one || njobs < 2 ? 0 : njobs - 1;
}

/* The WOTS+ signatures that key generation made on the GPU beside its trees (each tree's
 * root by its parent's leaf), kept until the key's own code asks for them through the
 * engine's xmss_wots_sig; one call's, replaced by the next. */
struct wots_memo {
    struct sig {
        uint32_t layer = 0, leaf = 0; /* the signing tree's layer and leaf */
        uint64_t tree = 0;
        std::vector<uint8_t> root, bytes; /* the signed root (n), the signature (len * n) */
    };
    std::vector<uint8_t> pub_seed; /* the key's (n bytes) */
    std::vector<sig> sigs;
    void clear();
};

/* Key generation's whole XMSS trees (SHA-256, n = 32, height H; xmss_sign.cu), on
 * d->stream around the kernels of their leaves, d->lock held; HBS_ERR_UNSUPPORTED for other
 * sets.
 * - xmss_keygen_begin, before them: the trees' places go up and the work that needs no leaf
 *   runs, on d->side beside them: the address-only parts of the inner nodes, and those of
 *   the WOTS+ signature of each job's root by the next job's leaf where the jobs are one
 *   tree a layer, each the parent of the one before (a key's current trees).
 * - xmss_keygen_end: the levels above the leaves (dleaves, 2^H of each job in turn) into
 *   r.dnodes (each job's 2^(H+1) - 1 nodes, leaves first), then those signatures. With
 *   split, the leaves of jobs split .. njobs - 1 come from d->copy (xmss_leaf_kernels'
 *   split), and their levels are built there, beside those of the others and the
 *   signatures on d->stream, which then waits for them.
 * - xmss_keygen_back: all of it back, the nodes to out, the signatures to d->keygen_sigs. */
struct xmss_keygen_run {
    uint8_t *dup = nullptr, *djobs = nullptr, *dnodes = nullptr;
    uint32_t *dlvp = nullptr, *dupp = nullptr;
    size_t a_tree = 0, nsig = 0; /* nsig: the roots signed (those of jobs 0 .. nsig - 1) */
};
int xmss_keygen_begin(device_ctx *d, const hbs_xmss_leaf_job *jobs, size_t njobs, unsigned H,
                      xmss_keygen_run *r);
int xmss_keygen_end(device_ctx *d, const hbs_xmss_leaf_job *jobs, size_t njobs, unsigned H,
                    const xmss_keygen_run &r, const uint8_t *dleaves, size_t split = 0);
int xmss_keygen_back(device_ctx *d, const hbs_xmss_leaf_job *jobs, size_t njobs, unsigned H,
                     const xmss_keygen_run &r, uint8_t *out);
/* The engine's xmss_wots_sig (core/leaf_engine.h) from d->keygen_sigs (stateful.cu). */
int keygen_wots_sig(device_ctx *d, const hbs_xmss_leaf_job *job, uint32_t leaf,
                    const uint8_t *msg, uint8_t *sig);
} // namespace hbs_gpu

#endif
