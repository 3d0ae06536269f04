/* One signature under each of many stateful keys on the GPU (hbs_gpu_stateful_sign_keys).
 *
 * A key's signature at its index is, apart from hashing the message, reading its traversal
 * state and a little bookkeeping, one-time-key work: the bottom one-time signature, and the
 * few leaves the key's step to the next index needs (XMSS: the BDS round's treehash updates,
 * a leaf of the next tree, owed upper-layer work; HSS: one leaf for each stripe's next
 * subtree and the next lower tree). The CPU code splits its own signing at exactly that
 * seam (state/stateful_batch.h): hbs_stateful_sign_begin sets each key's index aside on
 * disk, writes what the key knows into the signature and names the leaves; the GPU computes
 * the one-time signatures and leaves of every key at once, one launch pair per parameter
 * shape; hbs_stateful_sign_finish moves each key on with them. The traversal logic stays the
 * CPU's, so every signature and every key file is byte for byte what hbs_stateful_sign
 * makes; the GPU only changes where hashes are computed.
 *
 * Jobs: one per leaf (a thread per chain, then a thread per leaf for the L-tree or the LMS
 * public key hash), the one-time signature being a job that captures its chains' values at
 * the message's digits (and, for XMSS when the round wants that leaf too, goes on to the
 * leaf). Unlike key generation and the one-key signer, whose seeds travel as kernel
 * parameters, many keys' secrets (XMSS: the PRF and PRF_keygen midstates or seeds; LMS: I
 * and SEED) must sit in a device buffer: it is zeroed on the device before the call
 * returns. If the GPU fails, the CPU computes the same leaves (finish with no leaves), so a
 * reserved index is never left half used. */
#include <algorithm>
#include <memory>

#include "gpu/stateful_device.cuh"
#include "gpu/stateful_hash.cuh"
#include "gpu/stateful_sign.h"

namespace hbs_gpu {

enum { SK_HOST = 76, SK_DEV = 77 };
#define SK_THREADS 128
#define SK_LEAF_THREADS 64

enum { SK_LEAF = 1, SK_SIGN = 2 };

/* A leaf job: leaf `leaf` of tree (layer, tree) of key `key` (XMSS), or leaf q of the LMS
 * tree of job-owned I and SEED; with SK_SIGN its one-time signature of the digits at
 * sig * chains goes to the signatures' slot `sig`; with SK_LEAF its leaf to leaves[job]. */
struct sk_xjob {
    uint64_t tree;
    uint32_t key, layer, leaf, flags, sig;
};

struct sk_key256 {
    uint32_t prf[8], keygen[8];
    uint8_t pub[32];
};

struct sk_key {
    uint8_t pub_seed[64], sk_seed[64];
};

struct sk_ljob {
    uint8_t I[16], seed[32];
    uint32_t q, h, flags, sig;
};

/* Where chain i of a job stops and what it captures: a job that wants its leaf runs the
 * whole chain (top steps), a signature alone only to its digit; dig is the digit of a
 * signing job (top + 1, never reached, otherwise). */
__device__ __forceinline__ void sk_span(uint32_t flags, uint32_t sig, uint32_t i,
                                        const uint8_t *digits, uint32_t chains, uint32_t top,
                                        uint32_t &dig, uint32_t &to)
{
    dig = (flags & SK_SIGN) ? digits[(uint64_t)sig * chains + i] : top + 1;
    to = (flags & SK_LEAF) ? top : dig;
}

/* ---- XMSS, SHA-256 with n = 32 ---- */

__global__ void sk_xchains_sha256(const sk_key256 *keys, const sk_xjob *jobs, uint32_t njobs,
                                  uint32_t len, const uint8_t *digits, uint8_t *vals,
                                  uint8_t *sigs)
{
    const uint64_t t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= (uint64_t)njobs * len)
        return;
    const uint32_t j = (uint32_t)(t / len), i = (uint32_t)(t % len);
    const sk_xjob job = jobs[j];
    const sk_key256 &K = keys[job.key];
    uint32_t dig, to, a[8], v[8], pm[8], km[8];
    sk_span(job.flags, job.sig, i, digits, len, 15, dig, to);
    for (int k = 0; k < 8; k++) {
        pm[k] = K.prf[k];
        km[k] = K.keygen[k];
    }
    a[0] = job.layer;
    a[1] = (uint32_t)(job.tree >> 32);
    a[2] = (uint32_t)job.tree;
    a[3] = 0;
    a[4] = job.leaf;
    a[5] = i;
    a[6] = 0;
    a[7] = 0;
    x256_secret(v, km, K.pub, a);
    uint8_t *cap = sigs + ((uint64_t)job.sig * len + i) * 32;
    x256_chain(v, pm, a, 0, to, [&](uint32_t s, const uint32_t *val) {
        if (s == dig)
            for (int k = 0; k < 8; k++)
                put_be32(cap + 4 * k, val[k]);
    });
    if (job.flags & SK_LEAF)
        for (int k = 0; k < 8; k++)
            put_be32(vals + t * 32 + 4 * k, v[k]);
}

/* The L-tree of each job that wants its leaf, one thread each, in place over its chain ends. */
__global__ void sk_xltree_sha256(const sk_key256 *keys, const sk_xjob *jobs, uint32_t njobs,
                                 uint32_t len, uint8_t *vals, uint8_t *leaves)
{
    const uint32_t j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= njobs || !(jobs[j].flags & SK_LEAF))
        return;
    const sk_xjob job = jobs[j];
    uint32_t *node = reinterpret_cast<uint32_t *>(vals + (uint64_t)j * len * 32);
    uint32_t a[8], pm[8];
    for (int w = 0; w < 8; w++)
        pm[w] = keys[job.key].prf[w];
    a[0] = job.layer;
    a[1] = (uint32_t)(job.tree >> 32);
    a[2] = (uint32_t)job.tree;
    a[3] = 1;
    a[4] = job.leaf;
    x256_ltree_serial(node, len, pm, a);
    for (int w = 0; w < 8; w++)
        reinterpret_cast<uint32_t *>(leaves + (uint64_t)j * 32)[w] = node[w];
}

/* ---- XMSS, any hash (byte streams) ---- */

/* The job's key as the generic hashes read it: the set's sizes from shape, its PUB_SEED,
 * and its SK_SEED when with_sk (else zeros). */
__device__ __forceinline__ void sk_args(xmss_args &x, const xmss_args &shape, const sk_key &K,
                                        bool with_sk)
{
    x.n = shape.n;
    x.padlen = shape.padlen;
    x.len = shape.len;
    for (unsigned k = 0; k < sizeof x.sk_seed; k++) {
        x.pub_seed[k] = k < x.n ? K.pub_seed[k] : 0;
        x.sk_seed[k] = with_sk && k < x.n ? K.sk_seed[k] : 0;
    }
}

__device__ __forceinline__ void sk_adrs(uint8_t a[32], const sk_xjob &job, uint32_t type)
{
    for (int b = 0; b < 32; b++)
        a[b] = 0;
    adrs_set(a, 0, job.layer);
    adrs_set(a, 1, (uint32_t)(job.tree >> 32));
    adrs_set(a, 2, (uint32_t)job.tree);
    adrs_set(a, 3, type);
    adrs_set(a, 4, job.leaf);
}

template <int F>
__global__ void sk_xchains_generic(const sk_key *keys, const sk_xjob *jobs, uint32_t njobs,
                                   xmss_args shape, const uint8_t *digits, uint8_t *vals,
                                   uint8_t *sigs)
{
    const uint32_t len = shape.len, n = shape.n;
    const uint64_t t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= (uint64_t)njobs * len)
        return;
    const uint32_t j = (uint32_t)(t / len), i = (uint32_t)(t % len);
    const sk_xjob job = jobs[j];
    uint32_t dig, to;
    xmss_args x;
    uint8_t adrs[32], v[64], m[64 + 64 + 64 + 32];
    uint8_t *cap = sigs + ((uint64_t)job.sig * len + i) * n;
    sk_span(job.flags, job.sig, i, digits, len, 15, dig, to);
    sk_args(x, shape, keys[job.key], true);
    sk_adrs(adrs, job, 0);
    adrs_set(adrs, 5, i);
    x_secret<F>(v, x, adrs, m);
    for (unsigned k = 0; k < sizeof m; k++)
        m[k] = 0;
    for (unsigned k = 0; k < sizeof x.sk_seed; k++)
        x.sk_seed[k] = 0;
    for (uint32_t s = 0; s < to; s++) {
        if (s == dig)
            for (unsigned k = 0; k < n; k++)
                cap[k] = v[k];
        adrs_set(adrs, 6, s);
        x_thash<F>(v, x, adrs, v, 1);
    }
    if (to == dig)
        for (unsigned k = 0; k < n; k++)
            cap[k] = v[k];
    if (job.flags & SK_LEAF)
        for (unsigned k = 0; k < n; k++)
            vals[t * n + k] = v[k];
}

template <int F>
__global__ void sk_xltree_generic(const sk_key *keys, const sk_xjob *jobs, uint32_t njobs,
                                  xmss_args shape, uint8_t *vals, uint8_t *leaves)
{
    const uint32_t j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= njobs || !(jobs[j].flags & SK_LEAF))
        return;
    const sk_xjob job = jobs[j];
    const uint32_t n = shape.n;
    uint8_t *node = vals + (uint64_t)j * shape.len * n;
    xmss_args x;
    uint8_t adrs[32];
    sk_args(x, shape, keys[job.key], false); /* (the L-tree needs only PUB_SEED) */
    sk_adrs(adrs, job, 1);
    uint32_t l = shape.len;
    for (uint32_t height = 0; l > 1; height++) {
        const uint32_t parents = l / 2;
        adrs_set(adrs, 5, height);
        for (uint32_t i = 0; i < parents; i++) {
            adrs_set(adrs, 6, i);
            x_thash<F>(node + i * n, x, adrs, node + 2 * i * n, 2);
        }
        if (l & 1)
            for (uint32_t k = 0; k < n; k++)
                node[parents * n + k] = node[(l - 1) * n + k];
        l -= parents;
    }
    for (uint32_t k = 0; k < n; k++)
        leaves[(uint64_t)j * n + k] = node[k];
}

/* ---- LMS ---- */

/* Chain i of job j (lms_chain_sha256 / lms_chain_shake), to the coefficient only for a
 * signature that wants no leaf. */
template <int NW>
__global__ void sk_lchains_sha256(const sk_ljob *jobs, uint32_t njobs, uint32_t p, uint32_t w,
                                  const uint8_t *coefs, uint8_t *vals, uint8_t *sigs)
{
    const uint64_t t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= (uint64_t)njobs * p)
        return;
    const uint32_t j = (uint32_t)(t / p), i = (uint32_t)(t % p);
    const sk_ljob &job = jobs[j];
    uint32_t dig, to, v[NW];
    sk_span(job.flags, job.sig, i, coefs, p, (1u << w) - 1, dig, to);
    lms_chain_sha256<NW, true>(v, job.I, job.seed, job.q, i, to, dig,
                               sigs + ((uint64_t)job.sig * p + i) * (4 * NW));
    if (job.flags & SK_LEAF)
#pragma unroll
        for (int k = 0; k < NW; k++)
            put_be32(vals + t * (4 * NW) + 4 * k, v[k]);
}

template <int NW>
__global__ void sk_lleaf_sha256(const sk_ljob *jobs, uint32_t njobs, uint32_t p,
                                const uint8_t *vals, uint8_t *leaves)
{
    const uint32_t j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j < njobs && (jobs[j].flags & SK_LEAF))
        lms_leaf_words<NW>(jobs[j].I, jobs[j].q, jobs[j].h, p, vals + (uint64_t)j * p * (4 * NW),
                           leaves + (uint64_t)j * (4 * NW));
}

__global__ void sk_lchains_shake(const sk_ljob *jobs, uint32_t njobs, uint32_t p, uint32_t w,
                                 uint32_t n, const uint8_t *coefs, uint8_t *vals, uint8_t *sigs)
{
    const uint64_t t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= (uint64_t)njobs * p)
        return;
    const uint32_t j = (uint32_t)(t / p), i = (uint32_t)(t % p);
    const sk_ljob &job = jobs[j];
    uint32_t dig, to;
    uint8_t m[23 + 32];
    sk_span(job.flags, job.sig, i, coefs, p, (1u << w) - 1, dig, to);
    lms_chain_shake<true>(m, job.I, job.seed, n, job.q, i, to, dig,
                          sigs + ((uint64_t)job.sig * p + i) * n);
    if (job.flags & SK_LEAF)
        for (uint32_t k = 0; k < n; k++)
            vals[t * n + k] = m[23 + k];
}

__global__ void sk_lleaf_shake(const sk_ljob *jobs, uint32_t njobs, uint32_t p, uint32_t n,
                               const uint8_t *vals, uint8_t *leaves)
{
    const uint32_t j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j < njobs && (jobs[j].flags & SK_LEAF))
        lms_leaf_stream<SF_SHAKE256>(jobs[j].I, jobs[j].q, jobs[j].h, p, n,
                                     vals + (uint64_t)j * p * n, leaves + (uint64_t)j * n);
}

/* ---- the host side ---- */

/* Where a job's results go back to: key i's step, leaf slot `slot` (or its one-time
 * signature: slot -1). */
struct sk_dest {
    size_t key;
    int slot;
};

/* One parameter shape's jobs (every key of one set family and hashing). */
struct sk_group {
    bool lms = false;
    unsigned func = 0, n = 0, padlen = 0, len = 0; /* XMSS (len: chains) / LMS (func: hash) */
    unsigned w = 0;                                 /* LMS */
    std::vector<sk_key256> keys256;
    std::vector<sk_key> keys;
    std::vector<sk_xjob> xjobs;
    std::vector<sk_ljob> ljobs;
    std::vector<uint8_t> digits; /* len a signature */
    std::vector<sk_dest> dest;
    std::vector<size_t> sig_key; /* the key of each signature slot */
    std::vector<uint8_t> leaves, sigs;
    bool fast() const { return !lms && func == 0 && n == 32; }
    size_t njobs() const { return lms ? ljobs.size() : xjobs.size(); }
    size_t nsigs() const { return sig_key.size(); }
    ~sk_group()
    {
        hbs_memzero(keys256.data(), keys256.size() * sizeof(sk_key256));
        hbs_memzero(keys.data(), keys.size() * sizeof(sk_key));
        hbs_memzero(ljobs.data(), ljobs.size() * sizeof(sk_ljob));
    }
};

/* The group's kernels on d: keys and jobs up, chains, leaves, results down; the device copy
 * of the secrets zeroed before returning. */
static int run_group(device_ctx *d, sk_group &g)
{
    const size_t nj = g.njobs(), ns = g.nsigs(), n = g.n, len = g.len;
    const size_t keyb = g.lms ? 0 : (g.fast() ? g.keys256.size() * sizeof(sk_key256)
                                              : g.keys.size() * sizeof(sk_key));
    const size_t jobb = g.lms ? nj * sizeof(sk_ljob) : nj * sizeof(sk_xjob);
    const size_t digb = g.digits.size();
    auto up = [](size_t b) { return (b + 255) & ~(size_t)255; };
    const size_t o_keys = 0, o_jobs = up(keyb), o_dig = o_jobs + up(jobb),
                 o_vals = o_dig + up(digb), o_leaves = o_vals + up(nj * len * n),
                 o_sigs = o_leaves + up(nj * n), total = o_sigs + up(ns * len * n);
    const size_t in_bytes = o_vals, out_leaves = nj * n, out_sigs = ns * len * n;
    const size_t host_bytes = std::max(in_bytes, out_leaves + out_sigs);
    uint8_t *h, *dv;
    int err;
    if (nj == 0)
        return HBS_OK;
    std::lock_guard<std::mutex> lk(d->lock);
    if ((err = host_buf(d, SK_HOST, host_bytes, (void **)&h)) ||
        (err = dev_buf(d, SK_DEV, total, (void **)&dv)))
        return err;
    if (g.lms)
        memcpy(h + o_jobs, g.ljobs.data(), jobb);
    else if (g.fast())
        memcpy(h + o_keys, g.keys256.data(), keyb);
    else
        memcpy(h + o_keys, g.keys.data(), keyb);
    if (!g.lms)
        memcpy(h + o_jobs, g.xjobs.data(), jobb);
    if (digb)
        memcpy(h + o_dig, g.digits.data(), digb);
    err = cuda_err(cudaMemcpyAsync(dv, h, in_bytes, cudaMemcpyHostToDevice, d->stream),
                   "sign_keys upload", __LINE__);
    const uint64_t chains = (uint64_t)nj * len;
    const unsigned cb = (unsigned)((chains + SK_THREADS - 1) / SK_THREADS),
                   lb = (unsigned)((nj + SK_LEAF_THREADS - 1) / SK_LEAF_THREADS);
    const uint32_t nj32 = (uint32_t)nj;
    uint8_t *vals = dv + o_vals, *leaves = dv + o_leaves, *sigs = dv + o_sigs;
    const uint8_t *dig = dv + o_dig;
    xmss_args shape;
    memset(&shape, 0, sizeof shape);
    shape.n = (uint32_t)n;
    shape.padlen = g.padlen;
    shape.len = (uint32_t)len;
    if (!err) {
        if (g.lms) {
            const sk_ljob *jb = (const sk_ljob *)(dv + o_jobs);
            if (g.func == HBS_LMS_HASH_SHAKE) {
                sk_lchains_shake<<<cb, SK_THREADS, 0, d->stream>>>(jb, nj32, (uint32_t)len, g.w,
                                                                   (uint32_t)n, dig, vals, sigs);
                sk_lleaf_shake<<<lb, SK_LEAF_THREADS, 0, d->stream>>>(jb, nj32, (uint32_t)len,
                                                                      (uint32_t)n, vals, leaves);
            } else if (n == 24) {
                sk_lchains_sha256<6><<<cb, SK_THREADS, 0, d->stream>>>(jb, nj32, (uint32_t)len,
                                                                       g.w, dig, vals, sigs);
                sk_lleaf_sha256<6><<<lb, SK_LEAF_THREADS, 0, d->stream>>>(jb, nj32,
                                                                          (uint32_t)len, vals,
                                                                          leaves);
            } else {
                sk_lchains_sha256<8><<<cb, SK_THREADS, 0, d->stream>>>(jb, nj32, (uint32_t)len,
                                                                       g.w, dig, vals, sigs);
                sk_lleaf_sha256<8><<<lb, SK_LEAF_THREADS, 0, d->stream>>>(jb, nj32,
                                                                          (uint32_t)len, vals,
                                                                          leaves);
            }
        } else if (g.fast()) {
            const sk_key256 *kb = (const sk_key256 *)(dv + o_keys);
            const sk_xjob *jb = (const sk_xjob *)(dv + o_jobs);
            sk_xchains_sha256<<<cb, SK_THREADS, 0, d->stream>>>(kb, jb, nj32, (uint32_t)len,
                                                                dig, vals, sigs);
            sk_xltree_sha256<<<lb, SK_LEAF_THREADS, 0, d->stream>>>(kb, jb, nj32,
                                                                    (uint32_t)len, vals,
                                                                    leaves);
        } else {
            const sk_key *kb = (const sk_key *)(dv + o_keys);
            const sk_xjob *jb = (const sk_xjob *)(dv + o_jobs);
#define SK_GENERIC(F)                                                                          \
    do {                                                                                       \
        sk_xchains_generic<F><<<cb, SK_THREADS, 0, d->stream>>>(kb, jb, nj32, shape, dig,      \
                                                                vals, sigs);                   \
        sk_xltree_generic<F><<<lb, SK_LEAF_THREADS, 0, d->stream>>>(kb, jb, nj32, shape, vals, \
                                                                    leaves);                   \
    } while (0)
            switch (g.func) {
            case SF_SHA256: SK_GENERIC(SF_SHA256); break;
            case SF_SHA512: SK_GENERIC(SF_SHA512); break;
            case SF_SHAKE128: SK_GENERIC(SF_SHAKE128); break;
            default: SK_GENERIC(SF_SHAKE256); break;
            }
#undef SK_GENERIC
        }
        err = cuda_err(cudaGetLastError(), "sign_keys kernels", __LINE__);
    }
    if (!err)
        err = cuda_err(cudaMemcpyAsync(h, leaves, out_leaves, cudaMemcpyDeviceToHost, d->stream),
                       "sign_keys leaves", __LINE__);
    if (!err)
        err = cuda_err(cudaMemcpyAsync(h + out_leaves, sigs, out_sigs, cudaMemcpyDeviceToHost,
                                       d->stream),
                       "sign_keys signatures", __LINE__);
    /* the secrets (keys, and LMS jobs' SEEDs) and the one-time signatures' chain values off
     * the device, whatever happened */
    const cudaError_t z1 = cudaMemsetAsync(dv, 0, o_dig, d->stream);
    const cudaError_t z2 = cudaStreamSynchronize(d->stream);
    if (!err)
        err = cuda_err(z1 != cudaSuccess ? z1 : z2, "sign_keys", __LINE__);
    if (!err) {
        g.leaves.assign(h, h + out_leaves);
        g.sigs.assign(h + out_leaves, h + out_leaves + out_sigs);
    }
    hbs_memzero(h, host_bytes);
    return err;
}

/* The group of a shape, made on first use. */
static sk_group &group_of(std::vector<std::unique_ptr<sk_group>> &groups, bool lms,
                          unsigned func, unsigned n, unsigned padlen, unsigned len, unsigned w)
{
    for (auto &g : groups)
        if (g->lms == lms && g->func == func && g->n == n && g->padlen == padlen &&
            g->len == len && g->w == w)
            return *g;
    groups.emplace_back(new sk_group);
    sk_group &g = *groups.back();
    g.lms = lms;
    g.func = func;
    g.n = n;
    g.padlen = padlen;
    g.len = len;
    g.w = w;
    return g;
}

/* Key i's step as jobs of its group (mid: the key's midstates, for the SHA-256 n = 32
 * kernels). */
static void add_xmss(sk_group &g, size_t i, const hbs_xmss_leaf_job &kj, const hbs_xmss_step &st,
                     const sk_key256 &mid)
{
    const uint32_t key = (uint32_t)(g.fast() ? g.keys256.size() : g.keys.size());
    if (g.fast()) {
        g.keys256.push_back(mid);
    } else {
        sk_key k;
        memset(&k, 0, sizeof k);
        memcpy(k.pub_seed, kj.pub_seed, kj.n);
        memcpy(k.sk_seed, kj.sk_seed, kj.n);
        g.keys.push_back(k);
        hbs_memzero(&k, sizeof k);
    }
    for (uint32_t j = 0; j < st.count; j++) {
        sk_xjob x;
        x.key = key;
        x.layer = st.pos[j].layer;
        x.tree = st.pos[j].tree;
        x.leaf = st.pos[j].leaf;
        x.flags = SK_LEAF;
        x.sig = 0;
        if (j == 0 && st.sign) {
            x.flags = SK_SIGN | (st.want0 ? SK_LEAF : 0);
            x.sig = (uint32_t)g.sig_key.size();
            g.sig_key.push_back(i);
            g.digits.insert(g.digits.end(), st.digits, st.digits + g.len);
        }
        g.xjobs.push_back(x);
        g.dest.push_back({i, (int)j});
    }
}

static void add_ljob(sk_group &g, size_t i, int slot, const hbs_hss_step_leaf &l,
                     const uint8_t *coefs)
{
    sk_ljob x;
    memset(&x, 0, sizeof x);
    memcpy(x.I, l.I, 16);
    memcpy(x.seed, l.seed, l.ots->n);
    x.q = l.q;
    x.h = l.lms->h;
    x.flags = coefs ? SK_SIGN : SK_LEAF;
    if (coefs) {
        x.sig = (uint32_t)g.sig_key.size();
        g.sig_key.push_back(i);
        g.digits.insert(g.digits.end(), coefs, coefs + g.len);
    }
    g.ljobs.push_back(x);
    hbs_memzero(&x, sizeof x);
    g.dest.push_back({i, slot});
}

} // namespace hbs_gpu

using namespace hbs_gpu;

extern "C" int hbs_gpu_stateful_sign_keys(hbs_stateful_key *const *keys, size_t count,
                                          uint8_t *const *sigs, const size_t *sigcaps,
                                          size_t *siglens, const uint8_t *const *msgs,
                                          const size_t *msglens, int *results)
{
    gpu_clear_error();
    if (count == 0)
        return HBS_OK;
    if (!keys || !sigs || !sigcaps || !msgs || !msglens || !results)
        return HBS_ERR_INVALID_ARGUMENT;
    auto fail_all = [&](int err) {
        for (size_t i = 0; i < count; i++) {
            results[i] = err;
            if (siglens)
                siglens[i] = 0;
            if (sigs[i])
                hbs_memzero(sigs[i], sigcaps[i]);
        }
        return err;
    };
    {
        bool bad = false;
        for (size_t i = 0; i < count; i++)
            bad = bad || !keys[i] || !sigs[i] || (!msgs[i] && msglens[i]);
        if (bad)
            return fail_all(HBS_ERR_INVALID_ARGUMENT);
        /* one key twice would sign its index twice from one begin: refused whole */
        std::vector<hbs_stateful_key *> sorted(keys, keys + count);
        std::sort(sorted.begin(), sorted.end());
        if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
            return fail_all(HBS_ERR_INVALID_ARGUMENT);
    }
    std::vector<device_ctx *> &gpus = devices_in_use();
    if (gpus.empty())
        return fail_all(HBS_ERR_NO_GPU);
    sign_timer tm;
    /* (not zeroed by construction: a step is written by begin before anything reads it) */
    std::unique_ptr<hbs_stateful_step[]> steps(new (std::nothrow) hbs_stateful_step[count]);
    std::vector<hbs_xmss_leaf_job> kj;
    std::vector<sk_key256> mids; /* XMSS SHA-256 n = 32 keys' midstates (secret) */
    try {
        kj.resize(count);
        mids.resize(count);
    } catch (...) {
        steps.reset();
    }
    if (!steps)
        return fail_all(HBS_ERR_NO_MEMORY);

    /* 1. every key's index set aside on disk, and what its signature needs */
    par_for(count, [&](size_t i) {
        results[i] = hbs_stateful_sign_begin(keys[i], sigs[i], sigcaps[i], msgs[i], msglens[i],
                                             &steps[i]);
        if (results[i] != HBS_OK || steps[i].family == HBS_STATEFUL_HSS)
            return;
        (void)hbs_stateful_xmss_job(keys[i], &kj[i]);
        if (kj[i].func == SF_SHA256 && kj[i].n == 32) {
            x256_host_midstate(mids[i].prf, 3, kj[i].pub_seed);
            x256_host_midstate(mids[i].keygen, 4, kj[i].sk_seed);
            memcpy(mids[i].pub, kj[i].pub_seed, 32);
        }
    });
    tm.mark("begin (reserve)");

    /* 2. every key's one-time signature and leaves, by shape, on the GPU */
    int gpu_err = HBS_OK;
    std::vector<std::unique_ptr<sk_group>> groups;
    std::vector<std::vector<const uint8_t *>> leaf_at(count);
    std::vector<const uint8_t *> ots_at(count, nullptr);
    try {
        for (size_t i = 0; i < count; i++) {
            if (results[i] != HBS_OK)
                continue;
            if (steps[i].family == HBS_STATEFUL_HSS) {
                const hbs_hss_step &st = steps[i].u.h;
                const hbs_lmots_type *o = st.ots.ots;
                for (uint32_t j = 0; j < st.count; j++) {
                    const hbs_lmots_type *lo = st.leaf[j].ots;
                    add_ljob(group_of(groups, true, lo->hash, lo->n, 0, lo->p, lo->w), i, (int)j,
                             st.leaf[j], nullptr);
                }
                add_ljob(group_of(groups, true, o->hash, o->n, 0, o->p, o->w), i, -1, st.ots,
                         st.coefs);
                leaf_at[i].assign(st.count, nullptr);
            } else {
                const hbs_xmss_step &st = steps[i].u.x;
                add_xmss(group_of(groups, false, kj[i].func, kj[i].n, kj[i].padlen, kj[i].len,
                                  0),
                         i, kj[i], st, mids[i]);
                leaf_at[i].assign(st.count, nullptr);
            }
        }
        tm.mark("jobs");
        for (auto &g : groups) {
            if (gpu_err == HBS_OK)
                gpu_err = run_group(gpus[0], *g);
            if (gpu_err != HBS_OK)
                break;
            const size_t n = g->n, sb = (size_t)g->len * n;
            for (size_t k = 0; k < g->dest.size(); k++) {
                const sk_dest &dd = g->dest[k];
                const bool is_sig = g->lms ? dd.slot < 0 : dd.slot == 0 && (g->xjobs[k].flags & SK_SIGN);
                if (is_sig) {
                    const uint32_t s = g->lms ? g->ljobs[k].sig : g->xjobs[k].sig;
                    ots_at[dd.key] = g->sigs.data() + s * sb;
                }
                if (dd.slot >= 0)
                    leaf_at[dd.key][dd.slot] = g->leaves.data() + k * n;
            }
        }
    } catch (...) {
        gpu_err = HBS_ERR_NO_MEMORY;
    }
    tm.mark("gpu");

    /* 3. every key moves on; the CPU computes what the GPU could not */
    par_for(count, [&](size_t i) {
        if (results[i] != HBS_OK)
            return;
        uint8_t buf[HBS_HSS_STEP_LEAVES * HBS_LMS_MAX_N > HBS_XMSS_STEP_LEAVES * 64
                        ? HBS_HSS_STEP_LEAVES * HBS_LMS_MAX_N
                        : HBS_XMSS_STEP_LEAVES * 64];
        const bool hss = steps[i].family == HBS_STATEFUL_HSS;
        const bool have = gpu_err == HBS_OK && ots_at[i];
        if (have) {
            const size_t stride = hss ? HBS_LMS_MAX_N : kj[i].n;
            const size_t n = hss ? 0 : kj[i].n;
            for (size_t j = 0; j < leaf_at[i].size(); j++) {
                const size_t nj = hss ? steps[i].u.h.leaf[j].ots->n : n;
                if (leaf_at[i][j])
                    memcpy(buf + j * stride, leaf_at[i][j], nj);
                else
                    memset(buf + j * stride, 0, nj);
            }
        }
        results[i] = hbs_stateful_sign_finish(keys[i], &steps[i], have ? buf : nullptr,
                                              have ? ots_at[i] : nullptr, sigs[i], sigcaps[i]);
        hbs_memzero(buf, sizeof buf);
    });
    tm.mark("finish");
    int ret = HBS_OK;
    for (size_t i = 0; i < count; i++) {
        if (results[i] != HBS_OK)
            hbs_memzero(sigs[i], sigcaps[i]);
        if (siglens)
            siglens[i] = results[i] == HBS_OK ? hbs_stateful_sig_bytes(keys[i]) : 0;
        if (results[i] != HBS_OK && ret == HBS_OK)
            ret = results[i];
    }
    hbs_memzero(steps.get(), count * sizeof(hbs_stateful_step));
    hbs_memzero(mids.data(), count * sizeof(sk_key256));
    tm.report(count, ret);
    return ret;
}
