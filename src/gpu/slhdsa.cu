/* SLH-DSA on the GPU: the host side. Each operation has a device-pointer driver (used as
 * is by the device-resident entry points) and a host entry point that stages data through
 * pinned buffers, splits the batch over the GPUs in use and copies results back. */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <thread>
#include <vector>

#include "gpu/gpu_internal.h"
#include "gpu/host_clock.h"
#include "gpu/latency.cuh"
#include "gpu/spread.h"
#include "gpu/slhdsa_ops.cuh"
#include "hbs/gpu.h"

extern "C" {
#include "slhdsa/params.h"
#include "slhdsa/prehash.h"
}

namespace hbs_gpu {

static sp make_sp(const hbs_slhdsa_params *p)
{
    sp P;
    P.fam = p->family == SLHDSA_FAMILY_SHAKE ? FAM_SHAKE : FAM_SHA2;
    P.n = (int)p->n;
    P.h = (int)p->h;
    P.d = (int)p->d;
    P.hp = (int)p->hp;
    P.a = (int)p->a;
    P.k = (int)p->k;
    P.m = (int)p->m;
    P.len = (int)p->len;
    P.len1 = (int)p->len1;
    P.sig_bytes = (int)p->sig_bytes;
    P.fors_bytes = (int)p->fors_sig_bytes;
    return P;
}

static const ops *ops_for(const sp &P)
{
    static const ops table[2][3] = {{ops_sha2_16(), ops_sha2_24(), ops_sha2_32()},
                                    {ops_shake_16(), ops_shake_24(), ops_shake_32()}};
    return &table[P.fam][(P.n - 16) / 8];
}

/* ---- spreading a batch over the GPUs ---- */

template <class F> static int run_split(size_t count, F &&fn)
{
    std::vector<device_ctx *> &devs = devices_in_use();
    if (devs.empty())
        return HBS_ERR_NO_GPU;
    std::vector<part> parts = plan_parts(count, devs.size(), 1, 1);
    if (parts.empty())
        parts.push_back(part{0, 0});
    return run_parts(devs, parts, [&](device_ctx *d, const part &q, size_t) -> int {
        std::lock_guard<std::mutex> g(d->lock);
        return fn(d, q.start, q.count);
    });
}

/* The small inputs of a batch, packed into one pinned buffer and sent in one copy (a copy
 * costs microseconds of latency however small it is): M' offsets and lengths, keys,
 * randomness, then every M'. */
struct staged {
    uint64_t *moff;
    uint32_t *mlen;
    uint8_t *keys, *rnd, *mp;
};

static size_t align16(size_t v) { return (v + 15) & ~(size_t)15; }

static int stage_inputs(device_ctx *d, staged *dst, const uint8_t *const *msgs,
                        const size_t *msglens, size_t count, const uint8_t *ctx, size_t ctxlen,
                        hbs_prehash ph, int internal, const uint8_t *keys, size_t keybytes,
                        const uint8_t *rnd, size_t rndbytes)
{
    const size_t phb =
        ph == HBS_PREHASH_NONE ? 0 : SLHDSA_PREHASH_OID_BYTES + hbs_prehash_digest_bytes(ph);
    size_t total = 0;
    for (size_t i = 0; i < count; i++) {
        if (msglens[i] > 0xffffffffu - 512)
            return HBS_ERR_INVALID_ARGUMENT;
        total += internal ? msglens[i] : 2 + ctxlen + (ph == HBS_PREHASH_NONE ? msglens[i] : phb);
    }
    const size_t o_len = align16(count * 8), o_keys = o_len + align16(count * 4);
    const size_t o_rnd = o_keys + align16(keybytes), o_mp = o_rnd + align16(rndbytes);
    const size_t bytes = o_mp + total + 1;
    uint8_t *h, *dv;
    int err;
    if ((err = host_buf(d, H_MP, bytes, (void **)&h)) || (err = dev_buf(d, D_MP, bytes, (void **)&dv)))
        return err;
    uint64_t *moff = reinterpret_cast<uint64_t *>(h);
    uint32_t *mlen = reinterpret_cast<uint32_t *>(h + o_len);
    if (keybytes)
        memcpy(h + o_keys, keys, keybytes);
    if (rndbytes)
        memcpy(h + o_rnd, rnd, rndbytes);
    size_t pos = 0;
    for (size_t i = 0; i < count; i++) {
        uint8_t *o = h + o_mp + pos;
        size_t len = 0;
        if (!internal) {
            o[0] = ph == HBS_PREHASH_NONE ? 0 : 1;
            o[1] = (uint8_t)ctxlen;
            if (ctxlen)
                memcpy(o + 2, ctx, ctxlen);
            len = 2 + ctxlen;
        }
        if (internal || ph == HBS_PREHASH_NONE) {
            if (msglens[i])
                memcpy(o + len, msgs[i], msglens[i]);
            len += msglens[i];
        } else {
            static const uint8_t empty[1] = {0};
            len += hbs_slhdsa_prehash(o + len, ph, msgs[i] ? msgs[i] : empty, msglens[i]);
        }
        moff[i] = pos;
        mlen[i] = (uint32_t)len;
        pos += len;
    }
    HBS_CUDA(cudaMemcpyAsync(dv, h, o_mp + pos + 1, cudaMemcpyHostToDevice, d->stream));
    dst->moff = reinterpret_cast<uint64_t *>(dv);
    dst->mlen = reinterpret_cast<uint32_t *>(dv + o_len);
    dst->keys = dv + o_keys;
    dst->rnd = rndbytes ? dv + o_rnd : nullptr;
    dst->mp = dv + o_mp;
    return 0;
}

/* Wipes the pinned staging buffer once its copy is done (it held secret keys). */
static void unstage(device_ctx *d, size_t keybytes, size_t count)
{
    void *h;
    if (!host_buf(d, H_MP, 1, &h))
        hbs_memzero(static_cast<uint8_t *>(h) + align16(count * 8) + align16(count * 4), keybytes);
}

/* Runs fn(first, last) over [0, count) on several host threads when there is enough to copy
 * (bytes in all): host memory copies into and out of pinned buffers otherwise limit
 * end-to-end rates. */
template <class F> static void host_parallel(size_t count, size_t bytes, F &&fn)
{
    const size_t hw = std::max(1u, std::thread::hardware_concurrency());
    const size_t nt = std::min<size_t>({hw, 16, count, bytes >> 22});
    if (nt <= 1) {
        fn((size_t)0, count);
        return;
    }
    std::vector<std::thread> th;
    const size_t per = (count + nt - 1) / nt;
    for (size_t t = 1; t < nt; t++) {
        const size_t a = std::min(count, t * per), b = std::min(count, a + per);
        th.emplace_back([&fn, a, b]() { fn(a, b); });
    }
    fn((size_t)0, std::min(count, per));
    for (auto &x : th)
        x.join();
}

/* Uploads host bytes through a pinned slot. */
static int upload(device_ctx *d, unsigned hslot, unsigned dslot, const void *src, size_t len,
                  uint8_t **out)
{
    void *h;
    int err;
    if ((err = host_buf(d, hslot, len, &h)) || (err = dev_buf(d, dslot, len, (void **)out)))
        return err;
    memcpy(h, src, len);
    HBS_CUDA(cudaMemcpyAsync(*out, h, len, cudaMemcpyHostToDevice, d->stream));
    return 0;
}

/* Parts a signing batch is cut into so that the signatures of part c go back to the host
 * (and into the caller's buffer) while part c + 1 is signed: about 64 MiB of signatures each,
 * four at most (each part must still fill the GPU). */
static size_t sign_parts(size_t cnt, size_t sig_bytes)
{
    return std::max<size_t>(1, std::min<size_t>({4, cnt / 1024, cnt * sig_bytes >> 26}));
}

static int sign_host(const hbs_slhdsa_params *p, uint8_t *sigs, const uint8_t *const *msgs,
                     const size_t *msglens, size_t count, const uint8_t *ctx, size_t ctxlen,
                     hbs_prehash ph, int internal, const uint8_t *sks, size_t nkeys,
                     const uint8_t *addrnd, const std::vector<std::pair<device_ctx *, uint8_t *>> *caches)
{
    const sp P = make_sp(p);
    const ops *o = ops_for(P);
    const size_t n = p->n, sb = p->sig_bytes;
    return run_split(count, [&](device_ctx *d, size_t start, size_t cnt) -> int {
        staged in;
        uint8_t *dsigs, *hsigs;
        const uint8_t *cache = nullptr;
        int err;
        if (caches)
            for (auto &c : *caches)
                if (c.first == d)
                    cache = c.second;
        const size_t nk = nkeys == 1 ? 1 : cnt;
        /* sigs in page-locked memory (hbs_gpu_host_alloc): the GPU copies into it, no staging */
        const bool direct = host_pinned(sigs + start * sb, cnt * sb);
        if ((err = stage_inputs(d, &in, msgs + start, msglens + start, cnt, ctx, ctxlen, ph,
                                internal, sks + (nkeys == 1 ? 0 : start * 4 * n), nk * 4 * n,
                                addrnd ? addrnd + start * n : nullptr, addrnd ? cnt * n : 0)) ||
            (err = dev_buf(d, D_SIGS, cnt * sb, (void **)&dsigs)) ||
            (!direct && (err = host_buf(d, H_SIGS, cnt * sb, (void **)&hsigs))))
            return err;
        if (direct)
            hsigs = sigs + start * sb;
        /* signing runs on the main stream, the copies back on the side stream */
        const size_t parts = sign_parts(cnt, sb), per = (cnt + parts - 1) / parts;
        std::vector<cudaEvent_t> back(parts, nullptr);
        for (size_t c = 0; !err && c < parts; c++) {
            const size_t off = c * per, m = std::min(per, cnt - off);
            err = o->sign(d, P, dsigs + off * sb, in.mp, in.moff + off, in.mlen + off, m,
                          in.keys + (nk == 1 ? 0 : off * 4 * n), nk == 1 ? 1 : m,
                          in.rnd ? in.rnd + off * n : nullptr, cache, cnt == 1 && !cache);
            cudaError_t e = cudaSuccess;
            if (!err)
                e = cudaEventCreateWithFlags(&back[c], cudaEventDisableTiming);
            if (!err && e == cudaSuccess)
                e = cudaEventRecord(back[c], d->stream);
            if (!err && e == cudaSuccess)
                e = cudaStreamWaitEvent(d->side, back[c], 0);
            if (!err && e == cudaSuccess)
                e = cudaMemcpyAsync(hsigs + off * sb, dsigs + off * sb, m * sb,
                                    cudaMemcpyDeviceToHost, d->side);
            if (!err && e == cudaSuccess)
                e = cudaEventRecord(back[c], d->side);
            if (!err && e != cudaSuccess)
                err = gpu_fail(__FILE__, __LINE__, "copying signatures back", e);
        }
        for (size_t c = 0; !err && c < parts; c++) {
            const cudaError_t e = cudaEventSynchronize(back[c]);
            if (e != cudaSuccess) {
                err = gpu_fail(__FILE__, __LINE__, "copying signatures back", e);
                break;
            }
            const size_t off = c * per, m = std::min(per, cnt - off);
            if (direct)
                continue;
            host_parallel(m, m * sb, [&](size_t a, size_t b) {
                memcpy(sigs + (start + off + a) * sb, hsigs + (off + a) * sb, (b - a) * sb);
            });
        }
        (void)cudaStreamSynchronize(d->stream);
        (void)cudaStreamSynchronize(d->side);
        for (cudaEvent_t ev : back)
            if (ev)
                (void)cudaEventDestroy(ev);
        unstage(d, nk * 4 * n, cnt);
        return err;
    });
}

/* Signatures per part of a verification batch: each part goes up on the side stream while
 * the part before it is verified on the main stream. Parts stay large (a small part runs
 * with few signatures per warp, which wastes lanes: verify_kernels.cuh). */
static size_t verify_part(size_t cnt)
{
    /* HBS_GPU_VERIFY_PART=N (at least 256): the part's size, for tuning on other GPUs */
    static const size_t forced = [] {
        const char *v = getenv("HBS_GPU_VERIFY_PART");
        const long n = v ? atol(v) : 0;
        return n >= 256 ? (size_t)n : (size_t)0;
    }();
    if (forced)
        return std::min(cnt, forced);
    return std::min(cnt, std::max<size_t>((cnt + 3) / 4, 8192));
}

/* HBS_GPU_VERIFY_TIMING=1: where a batch verification's time goes on the host, one line on
 * stderr a GPU: staging the messages and keys, gathering the signatures into pinned memory,
 * waiting for a pinned half to be free, queueing the kernels, waiting for the verdicts. */
struct verify_timer {
    bool on = getenv("HBS_GPU_VERIFY_TIMING") != nullptr;
    double t0 = host_ms(), last = t0, inputs = 0, gather = 0, staged = 0, queue = 0, verdicts = 0;
    void to(double &slot)
    {
        if (!on)
            return;
        const double t = host_ms();
        slot += t - last;
        last = t;
    }
    void report(size_t cnt, size_t parts)
    {
        if (on)
            fprintf(stderr,
                    "gpu slh-dsa verify(%zu, %zu parts): %.3f ms: inputs %.3f, gather %.3f, "
                    "waiting for a pinned half %.3f, queueing %.3f, waiting for the verdicts "
                    "%.3f\n",
                    cnt, parts, host_ms() - t0, inputs, gather, staged, queue, verdicts);
    }
};

static int verify_host(const hbs_slhdsa_params *p, int *results, const uint8_t *const *sigs,
                       const size_t *siglens, const uint8_t *const *msgs,
                       const size_t *msglens, size_t count, const uint8_t *ctx, size_t ctxlen,
                       hbs_prehash ph, int internal, const uint8_t *pks, size_t npks)
{
    const sp P = make_sp(p);
    const ops *o = ops_for(P);
    const size_t n = p->n, sb = p->sig_bytes;
    return run_split(count, [&](device_ctx *d, size_t start, size_t cnt) -> int {
        staged in;
        uint8_t *dsigs, *hsigs;
        int *dres, *hres;
        int err;
        const size_t nk = npks == 1 ? 1 : cnt;
        /* the host gathers part c + 1 into one pinned half (on several threads) while part c
         * is copied from the other */
        const size_t part = verify_part(cnt);
        verify_timer tm;
        if ((err = stage_inputs(d, &in, msgs + start, msglens + start, cnt, ctx, ctxlen, ph,
                                internal, pks + (npks == 1 ? 0 : start * 2 * n), nk * 2 * n,
                                nullptr, 0)) ||
            (err = host_buf(d, H_SIGS, 2 * part * sb, (void **)&hsigs)) ||
            (err = dev_buf(d, D_SIGS, cnt * sb, (void **)&dsigs)) ||
            (err = dev_buf(d, D_RES, cnt * sizeof(int), (void **)&dres)) ||
            (err = host_buf(d, H_RES, cnt * sizeof(int), (void **)&hres)))
            return err;
        tm.to(tm.inputs);
        for (size_t off = 0, c = 0; off < cnt; off += part, c++) {
            const size_t m = std::min(part, cnt - off);
            uint8_t *half = hsigs + (c & 1) * part * sb;
            /* a part already in page-locked memory, in one piece, goes up from there */
            const uint8_t *src = pinned_run(sigs + start + off, siglens + start + off, m, sb);
            if (!src) {
                if (c >= 2)
                    HBS_CUDA(cudaEventSynchronize(d->staged[c & 1]));
                tm.to(tm.staged);
                host_parallel(m, m * sb, [&](size_t lo, size_t hi) {
                    for (size_t i = lo; i < hi; i++) {
                        /* a signature of the wrong length is hashed as zeros, then rejected */
                        const size_t j = start + off + i;
                        if (siglens[j] == sb)
                            memcpy(half + i * sb, sigs[j], sb);
                        else
                            memset(half + i * sb, 0, sb);
                    }
                });
                tm.to(tm.gather);
                src = half;
            }
            HBS_CUDA(cudaMemcpyAsync(dsigs + off * sb, src, m * sb, cudaMemcpyHostToDevice,
                                     d->side));
            HBS_CUDA(cudaEventRecord(d->staged[c & 1], d->side));
            HBS_CUDA(cudaStreamWaitEvent(d->stream, d->staged[c & 1], 0));
            if ((err = o->verify(d, P, dres + off, dsigs + off * sb, in.mp, in.moff + off,
                                 in.mlen + off, m, in.keys + (nk == 1 ? 0 : off * 2 * n),
                                 nk == 1 ? 1 : m))) {
                (void)cudaStreamSynchronize(d->stream);
                return err;
            }
            tm.to(tm.queue);
        }
        HBS_CUDA(cudaMemcpyAsync(hres, dres, cnt * sizeof(int), cudaMemcpyDeviceToHost,
                                 d->stream));
        HBS_CUDA(cudaStreamSynchronize(d->stream));
        tm.to(tm.verdicts);
        tm.report(cnt, (cnt + part - 1) / part);
        for (size_t i = 0; i < cnt; i++)
            results[start + i] = siglens[start + i] == sb ? hres[i] : HBS_ERR_VERIFY_FAILED;
        return 0;
    });
}

} // namespace hbs_gpu

using namespace hbs_gpu;

struct hbs_gpu_signer {
    const hbs_slhdsa_params *p;
    uint8_t sk[4 * SLHDSA_MAX_N];
    std::vector<std::pair<device_ctx *, uint8_t *>> caches;
};

/* ---- argument checks shared by the entry points ---- */

static int check_msgs(const uint8_t *const *msgs, const size_t *msglens, size_t count)
{
    if (count && (!msgs || !msglens))
        return HBS_ERR_INVALID_ARGUMENT;
    for (size_t i = 0; i < count; i++)
        if (!msgs[i] && msglens[i])
            return HBS_ERR_INVALID_ARGUMENT;
    return 0;
}

static int check_ctx(const uint8_t *ctx, size_t ctxlen, hbs_prehash ph)
{
    if (!ctx && ctxlen)
        return HBS_ERR_INVALID_ARGUMENT;
    if (ctxlen > HBS_SLHDSA_MAX_CONTEXT_BYTES)
        return HBS_ERR_CONTEXT_TOO_LONG;
    if ((unsigned)ph >= HBS_PREHASH_NUM)
        return HBS_ERR_UNKNOWN_PREHASH;
    return 0;
}

static int sign_entry(const hbs_slhdsa_params *p, uint8_t *sigs, const uint8_t *const *msgs,
                      const size_t *msglens, size_t count, const uint8_t *ctx, size_t ctxlen,
                      hbs_prehash ph, int internal, const uint8_t *sks, size_t nkeys,
                      const uint8_t *addrnd, const hbs_gpu_signer *signer)
{
    if (!p || (count && !sigs))
        return HBS_ERR_INVALID_ARGUMENT;
    int err = 0;
    if (!sks || (nkeys != 1 && nkeys != count))
        err = HBS_ERR_INVALID_ARGUMENT;
    if (!err)
        err = check_msgs(msgs, msglens, count);
    if (!err && !internal)
        err = check_ctx(ctx, ctxlen, ph);
    if (!err && count)
        err = hbs_gpu_device_count() ? 0 : HBS_ERR_NO_GPU;
    if (!err && count)
        err = sign_host(p, sigs, msgs, msglens, count, ctx, ctxlen, ph, internal, sks, nkeys,
                        addrnd, signer ? &signer->caches : nullptr);
    if (err && count)
        hbs_memzero(sigs, count * p->sig_bytes);
    return err;
}

extern "C" int hbs_gpu_slhdsa_sign_many(const hbs_slhdsa_params *p, uint8_t *sigs,
                                        const uint8_t *const *msgs, const size_t *msglens,
                                        size_t count, const uint8_t *ctx, size_t ctxlen,
                                        hbs_prehash ph, const uint8_t *sks, size_t nkeys,
                                        const uint8_t *addrnd)
{
    return sign_entry(p, sigs, msgs, msglens, count, ctx, ctxlen, ph, 0, sks, nkeys, addrnd,
                      nullptr);
}

extern "C" int hbs_gpu_slhdsa_sign_internal_many(const hbs_slhdsa_params *p, uint8_t *sigs,
                                                 const uint8_t *const *msgs,
                                                 const size_t *msglens, size_t count,
                                                 const uint8_t *sks, size_t nkeys,
                                                 const uint8_t *addrnd)
{
    return sign_entry(p, sigs, msgs, msglens, count, nullptr, 0, HBS_PREHASH_NONE, 1, sks,
                      nkeys, addrnd, nullptr);
}

extern "C" int hbs_gpu_slhdsa_sign(const hbs_slhdsa_params *p, uint8_t *sig, const uint8_t *msg,
                                   size_t msglen, const uint8_t *ctx, size_t ctxlen,
                                   hbs_prehash ph, const uint8_t *sk, const uint8_t *addrnd)
{
    /* its own path (latency.cu): one launch, every tree of the signature at once. Not for
     * the SHAKE 'f' sets: there one thread's Keccak chain is slower in that kernel than in
     * the batch kernels, whose graph is faster (H200: 0.20 against 0.29 ms for 128f). */
    if (p && p->family == SLHDSA_FAMILY_SHAKE && p->hp < 8)
        return sign_entry(p, sig, &msg, &msglen, 1, ctx, ctxlen, ph, 0, sk, 1, addrnd, nullptr);
    if (!p || !sig)
        return HBS_ERR_INVALID_ARGUMENT;
    int err = !sk || (!msg && msglen) ? HBS_ERR_INVALID_ARGUMENT : 0;
    if (!err)
        err = check_ctx(ctx, ctxlen, ph);
    if (!err)
        err = hbs_gpu_device_count() ? 0 : HBS_ERR_NO_GPU;
    if (!err) {
        device_ctx *d = devices_in_use()[0];
        std::lock_guard<std::mutex> g(d->lock);
        err = latency_sign(d, p, sig, msg, msglen, ctx, ctxlen, ph, sk, addrnd);
    }
    if (err)
        hbs_memzero(sig, p->sig_bytes);
    return err;
}

extern "C" int hbs_gpu_slhdsa_keygen_many(const hbs_slhdsa_params *p, uint8_t *sks,
                                          uint8_t *pks, const uint8_t *seeds, size_t count)
{
    if (!p || (count && (!sks || !pks || !seeds))) {
        return HBS_ERR_INVALID_ARGUMENT;
    }
    if (!count)
        return 0;
    if (!hbs_gpu_device_count())
        return HBS_ERR_NO_GPU;
    const sp P = make_sp(p);
    const ops *o = ops_for(P);
    const size_t n = p->n;
    int err = run_split(count, [&](device_ctx *d, size_t start, size_t cnt) -> int {
        uint8_t *dseeds, *droots, *hroots;
        int e;
        if ((e = upload(d, H_SKS, D_SKS, seeds + start * 3 * n, cnt * 3 * n, &dseeds)) ||
            (e = dev_buf(d, D_XROOTS, cnt * n, (void **)&droots)) ||
            (e = host_buf(d, H_SIGS, cnt * n, (void **)&hroots)))
            return e;
        if ((e = o->keygen(d, P, droots, dseeds, (int)(3 * n), (int)(3 * n), cnt, nullptr)))
            return e;
        HBS_CUDA(cudaMemcpyAsync(hroots, droots, cnt * n, cudaMemcpyDeviceToHost, d->stream));
        HBS_CUDA(cudaStreamSynchronize(d->stream));
        void *hk;
        if (!host_buf(d, H_SKS, cnt * 3 * n, &hk))
            hbs_memzero(hk, cnt * 3 * n);
        for (size_t i = 0; i < cnt; i++) {
            const uint8_t *s = seeds + (start + i) * 3 * n;
            uint8_t *sk = sks + (start + i) * 4 * n, *pk = pks + (start + i) * 2 * n;
            memmove(sk, s, 3 * n);
            memcpy(sk + 3 * n, hroots + i * n, n);
            memcpy(pk, sk + 2 * n, 2 * n);
        }
        return 0;
    });
    if (err) {
        hbs_memzero(sks, count * 4 * n);
        hbs_memzero(pks, count * 2 * n);
    }
    return err;
}

extern "C" int hbs_gpu_slhdsa_verify_many(const hbs_slhdsa_params *p, int *results,
                                          const uint8_t *const *sigs, const size_t *siglens,
                                          const uint8_t *const *msgs, const size_t *msglens,
                                          size_t count, const uint8_t *ctx, size_t ctxlen,
                                          hbs_prehash ph, const uint8_t *pks, size_t npks)
{
    int err;
    if (!p || (count && (!results || !sigs || !siglens || !pks)) ||
        (npks != 1 && npks != count))
        return HBS_ERR_INVALID_ARGUMENT;
    if ((err = check_msgs(msgs, msglens, count)) || (err = check_ctx(ctx, ctxlen, ph)))
        return err;
    for (size_t i = 0; i < count; i++)
        if (!sigs[i] && siglens[i])
            return HBS_ERR_INVALID_ARGUMENT;
    if (!count)
        return 0;
    if (!hbs_gpu_device_count())
        return HBS_ERR_NO_GPU;
    err = verify_host(p, results, sigs, siglens, msgs, msglens, count, ctx, ctxlen, ph, 0, pks,
                      npks);
    if (err)
        return err;
    for (size_t i = 0; i < count; i++)
        if (results[i])
            return HBS_ERR_VERIFY_FAILED;
    return 0;
}

extern "C" int hbs_gpu_slhdsa_verify_internal_many(const hbs_slhdsa_params *p, int *results,
                                                   const uint8_t *const *sigs,
                                                   const size_t *siglens,
                                                   const uint8_t *const *msgs,
                                                   const size_t *msglens, size_t count,
                                                   const uint8_t *pks, size_t npks)
{
    int err;
    if (!p || (count && (!results || !sigs || !siglens || !pks)) ||
        (npks != 1 && npks != count))
        return HBS_ERR_INVALID_ARGUMENT;
    if ((err = check_msgs(msgs, msglens, count)))
        return err;
    for (size_t i = 0; i < count; i++)
        if (!sigs[i] && siglens[i])
            return HBS_ERR_INVALID_ARGUMENT;
    if (!count)
        return 0;
    if (!hbs_gpu_device_count())
        return HBS_ERR_NO_GPU;
    err = verify_host(p, results, sigs, siglens, msgs, msglens, count, nullptr, 0,
                      HBS_PREHASH_NONE, 1, pks, npks);
    if (err)
        return err;
    for (size_t i = 0; i < count; i++)
        if (results[i])
            return HBS_ERR_VERIFY_FAILED;
    return 0;
}

/* ---- signers ---- */

extern "C" int hbs_gpu_signer_new(hbs_gpu_signer **out, const hbs_slhdsa_params *p,
                                  const uint8_t *sk)
{
    if (!out)
        return HBS_ERR_INVALID_ARGUMENT;
    *out = nullptr;
    if (!p || !sk)
        return HBS_ERR_INVALID_ARGUMENT;
    if (!hbs_gpu_device_count())
        return HBS_ERR_NO_GPU;
    hbs_gpu_signer *s = new (std::nothrow) hbs_gpu_signer;
    if (!s)
        return HBS_ERR_NO_MEMORY;
    s->p = p;
    memcpy(s->sk, sk, 4 * p->n);
    const sp P = make_sp(p);
    const ops *o = ops_for(P);
    const size_t n = p->n, nodes = ((size_t)2 << p->hp) - 1;
    int err = 0;
    for (device_ctx *d : devices_in_use()) {
        std::lock_guard<std::mutex> g(d->lock);
        uint8_t *cache = nullptr, *dseed, *droot, hroot[SLHDSA_MAX_N];
        err = dev_buf(d, D_XROOTS, n, (void **)&droot);
        if (!err)
            err = upload(d, H_SKS, D_SKS, sk, 3 * n, &dseed);
        if (!err) {
            cudaError_t e = cudaMalloc(&cache, nodes * n);
            if (e != cudaSuccess)
                err = gpu_fail(__FILE__, __LINE__, "cudaMalloc", e);
        }
        if (!err)
            s->caches.emplace_back(d, cache);
        if (!err)
            err = o->keygen(d, P, droot, dseed, (int)(3 * n), (int)(3 * n), 1, cache);
        if (!err) {
            cudaError_t e = cudaMemcpyAsync(hroot, droot, n, cudaMemcpyDeviceToHost, d->stream);
            if (e == cudaSuccess)
                e = cudaStreamSynchronize(d->stream);
            if (e != cudaSuccess)
                err = gpu_fail(__FILE__, __LINE__, "cudaMemcpy", e);
        }
        void *hk;
        if (!host_buf(d, H_SKS, 3 * n, &hk))
            hbs_memzero(hk, 3 * n);
        if (!err && memcmp(hroot, sk + 3 * n, n) != 0)
            err = HBS_ERR_MALFORMED_KEY;
        if (err)
            break;
    }
    if (err) {
        hbs_gpu_signer_free(s);
        return err;
    }
    *out = s;
    return 0;
}

extern "C" void hbs_gpu_signer_free(hbs_gpu_signer *s)
{
    if (!s)
        return;
    for (auto &c : s->caches) {
        if (cudaSetDevice(c.first->ordinal) == cudaSuccess)
            (void)cudaFree(c.second);
    }
    hbs_memzero(s->sk, sizeof s->sk);
    delete s;
}

extern "C" int hbs_gpu_signer_sign_many(const hbs_gpu_signer *s, uint8_t *sigs,
                                        const uint8_t *const *msgs, const size_t *msglens,
                                        size_t count, const uint8_t *ctx, size_t ctxlen,
                                        hbs_prehash ph, const uint8_t *addrnd)
{
    if (!s)
        return HBS_ERR_INVALID_ARGUMENT;
    return sign_entry(s->p, sigs, msgs, msglens, count, ctx, ctxlen, ph, 0, s->sk, 1, addrnd, s);
}

/* ---- device-resident ---- */

extern "C" int hbs_gpu_slhdsa_sign_device(const hbs_slhdsa_params *p, int device,
                                          uint8_t *d_sigs, const uint8_t *d_mp,
                                          const uint64_t *d_moff, const uint32_t *d_mlen,
                                          size_t count, const uint8_t *d_sks, size_t nkeys,
                                          const uint8_t *d_addrnd)
{
    if (!p || (count && (!d_sigs || !d_mp || !d_moff || !d_mlen || !d_sks)) ||
        (nkeys != 1 && nkeys != count))
        return HBS_ERR_INVALID_ARGUMENT;
    device_ctx *d = device_by_ordinal(device);
    if (!d)
        return hbs_gpu_device_count() ? HBS_ERR_INVALID_ARGUMENT : HBS_ERR_NO_GPU;
    if (!count)
        return 0;
    const sp P = make_sp(p);
    std::lock_guard<std::mutex> g(d->lock);
    int err = ops_for(P)->sign(d, P, d_sigs, d_mp, d_moff, d_mlen, count, d_sks, nkeys,
                               d_addrnd, nullptr, 0);
    if (!err) {
        cudaError_t e = cudaStreamSynchronize(d->stream);
        if (e != cudaSuccess)
            err = gpu_fail(__FILE__, __LINE__, "cudaStreamSynchronize", e);
    }
    return err;
}

extern "C" int hbs_gpu_slhdsa_verify_device(const hbs_slhdsa_params *p, int device,
                                            int *d_results, const uint8_t *d_sigs,
                                            const uint8_t *d_mp, const uint64_t *d_moff,
                                            const uint32_t *d_mlen, size_t count,
                                            const uint8_t *d_pks, size_t npks)
{
    if (!p || (count && (!d_results || !d_sigs || !d_mp || !d_moff || !d_mlen || !d_pks)) ||
        (npks != 1 && npks != count))
        return HBS_ERR_INVALID_ARGUMENT;
    device_ctx *d = device_by_ordinal(device);
    if (!d)
        return hbs_gpu_device_count() ? HBS_ERR_INVALID_ARGUMENT : HBS_ERR_NO_GPU;
    if (!count)
        return 0;
    const sp P = make_sp(p);
    std::lock_guard<std::mutex> g(d->lock);
    int err = ops_for(P)->verify(d, P, d_results, d_sigs, d_mp, d_moff, d_mlen, count, d_pks,
                                 npks);
    if (!err) {
        cudaError_t e = cudaStreamSynchronize(d->stream);
        if (e != cudaSuccess)
            err = gpu_fail(__FILE__, __LINE__, "cudaStreamSynchronize", e);
    }
    return err;
}
