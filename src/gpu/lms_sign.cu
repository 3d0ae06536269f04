/* LMS and HSS batches of the GPU batch signer (stateful_sign.cu has the entry point and the
 * order of events): every tree the batch touches built on the GPU; with SHA-256 everywhere
 * the fused path, where the bottom one-time signatures come with the leaves, and for a
 * one-level key the messages and the whole signatures are made on the GPU too. Also what
 * key generation keeps of an LMS key's trees for it. */
#include "gpu/stateful_sign.h"
#include "gpu/lms_sign_kernels.cuh"

namespace hbs_gpu {

/* ---- LMS / HSS ---- */

struct hss_view {
    unsigned L;
    const hbs_lms_type *lms[HBS_HSS_MAX_LEVELS];
    const hbs_lmots_type *ots[HBS_HSS_MAX_LEVELS];
    unsigned shift[HBS_HSS_MAX_LEVELS];
    const uint8_t *I0, *seed0;
    const uint8_t *root0; /* the top level's root (from the public key), or NULL */
};

/* SEED and I of tree inst of level i >= 1 (lms/hss.h: derived with the top level's hash). */
static void hss_child(const hss_view &v, unsigned i, uint64_t inst, uint8_t *I, uint8_t *seed)
{
    uint8_t m[16 + 4 + 2 + 1 + 8 + HBS_LMS_MAX_N], out[32];
    const size_t len = 31 + v.lms[0]->m;
    memcpy(m, v.I0, 16);
    sput32(m + 16, i);
    m[20] = 0xff;
    m[21] = 0xfe;
    sput32(m + 23, (uint32_t)(inst >> 32));
    sput32(m + 27, (uint32_t)inst);
    memcpy(m + 31, v.seed0, v.lms[0]->m);
    m[22] = 0;
    hbs_lms_hash_many(v.lms[0]->hash, 32, out, m, len, 1);
    memcpy(seed, out, v.lms[i]->m);
    m[22] = 1;
    hbs_lms_hash_many(v.lms[0]->hash, 32, out, m, len, 1);
    memcpy(I, out, 16);
    hbs_memzero(m, sizeof m);
    hbs_memzero(out, sizeof out);
}

/* The tree's public key (u32 type || u32 otstype || I || T[1]). */
static void lms_set_pk(const hss_view &v, ltree_t &t)
{
    sput32(t.pk, v.lms[t.level]->code);
    sput32(t.pk + 4, v.ots[t.level]->code);
    memcpy(t.pk + 8, t.I, 16);
    memcpy(t.pk + 24, t.T.data(), v.lms[t.level]->m);
}

static int lms_build(const hbs_leaf_engine *e, const hss_view &v, ltree_t &t)
{
    const hbs_lms_type *lt = v.lms[t.level];
    const hbs_lmots_type *o = v.ots[t.level];
    const size_t m = lt->m, leaves = (size_t)1 << lt->h;
    hbs_lms_leaf_job job;
    t.T.assign((2 * leaves - 1) * m, 0);
    job.hash = o->hash;
    job.n = o->n;
    job.w = o->w;
    job.p = o->p;
    job.h = lt->h;
    job.I = t.I;
    job.seed = t.seed;
    for (size_t at = 0; at < leaves; at += e->slice_leaves) {
        const size_t c = leaves - at < e->slice_leaves ? leaves - at : e->slice_leaves;
        int err = e->lms_leaves(e->user, &job, (uint32_t)at, c, t.T.data() + (leaves - 1 + at) * m);
        if (err)
            return err;
    }
    /* the inner nodes level by level, each level in runs of up to 64 over the pool */
    for (size_t lv = leaves / 2; lv >= 1; lv /= 2) {
        const size_t run = lv < 64 ? lv : 64;
        par_for(lv / run, [&](size_t w) {
            const size_t r0 = lv + w * run; /* first node number of the run */
            hbs_lms_nodes(lt, t.I, t.T.data() + (r0 - 1) * m, t.T.data() + (2 * r0 - 1) * m,
                          (uint32_t)r0, run);
        });
    }
    lms_set_pk(v, t);
    return HBS_OK;
}

/* The inner nodes of an LMS tree whose leaves are in place in Tk, on stream st. */
template <int NW> static void lf_levels(const lf_args &a, uint8_t *Tk, cudaStream_t st)
{
    if (a.h <= SFS_LEVELS_BLOCK_H)
        lf_levels_block_sha256<NW><<<1, 512, 0, st>>>(a, Tk);
    else
        for (uint32_t lv = 1u << (a.h - 1); lv >= 1; lv /= 2)
            lf_level_sha256<NW><<<sfs_blocks(lv), SFS_THREADS, 0, st>>>(a, lv, Tk);
}

/* One LMS tree of the fused path: chains, leaves, inner levels. A leaf hashes its whole
 * one-time public key (34 compressions at W4), so the leaves go in blocks of 32 threads:
 * a 1,024-leaf tree then spreads over 32 SMs instead of crowding 4. */
template <int NW> static void lf_tree(device_ctx *d, const lf_args &a, uint8_t *dvals, uint8_t *Tk)
{
    const uint64_t leaves = (uint64_t)1 << a.h, chains = (uint64_t)a.p << a.h;
    const unsigned lt = leaves >= 32768 ? 128 : 32;
    lf_chains_sha256<NW><<<sfs_blocks(chains), SFS_THREADS, 0, d->stream>>>(a, dvals);
    lf_leaves_sha256<NW><<<(unsigned)((leaves + lt - 1) / lt), lt, 0, d->stream>>>(a, dvals, Tk);
    lf_levels<NW>(a, Tk, d->stream);
}

/* The fused path (every level SHA-256): every tree built on the GPU, one after another
 * (each one's SEED a kernel parameter), leaves and inner nodes, the bottom level's trees
 * (trees[bottom0 ..]) signing the count messages on the way: message m at leaf q[m] of tree
 * tree[m], digits dig + m * p; its y into out[m] + 8 + n. The nodes come back into the trees. */
/* With `whole` (a one-level key: its one tree signs every message), the batch is done
 * here to the end: the messages hashed, the signatures put together and copied into
 * whole->sigs; dig and out are unused. */
struct lf_whole {
    const uint8_t *const *msgs;
    const size_t *mlens;
    uint8_t *sigs;
    size_t sb;
    uint64_t first;
};

static int lms_fused(device_ctx *d, const hss_view &v, std::vector<ltree_t> &trees,
                     size_t bottom0, size_t count, const size_t *tree, const uint32_t *q,
                     const uint8_t *dig, uint8_t *const *out, const lf_whole *whole,
                     release_gate &gate, sign_timer &tm)
{
    const unsigned b = v.L - 1;
    const size_t T = trees.size(), hb = v.lms[b]->h, pb = v.ots[b]->p, nb = v.ots[b]->n;
    const size_t nbottom = T - bottom0;
    std::vector<size_t> t_at(T + 1, 0);
    size_t vals = 0;
    for (size_t k = 0; k < T; k++) {
        const unsigned i = trees[k].level;
        t_at[k + 1] = t_at[k] + (((size_t)2 << v.lms[i]->h) - 1) * v.lms[i]->m;
        const size_t c = ((size_t)v.ots[i]->p << v.lms[i]->h) * v.ots[i]->n;
        vals = c > vals ? c : vals;
    }
    /* upload: cap, the digits (or room for them), q; with `whole`, the messages' offsets,
     * lengths and bytes. On the GPU: y, then with `whole` C and the signatures. */
    std::vector<uint64_t> moff;
    const size_t mbytes = whole ? msg_offsets(moff, whole->mlens, count) : 0;
    const size_t a_dig = 4 * (nbottom << hb), a_q = (a_dig + count * pb + 7) & ~(size_t)7,
                 a_off = a_q + ((4 * count + 7) & ~(size_t)7), a_mlen = a_off + 8 * count,
                 a_msg = a_mlen + 4 * count,
                 up_len = whole ? a_msg + mbytes : a_q + 4 * count,
                 sig_bytes = count * pb * nb + (whole ? count * nb : 0), node_bytes = t_at[T],
                 out_bytes = whole ? count * whole->sb : 0;
    uint8_t *hup, *dup, *dnodes, *dvals, *dsig, *hnodes, *hsig = nullptr, *dout = nullptr,
                                                         *hout = nullptr;
    /* whole->sigs in page-locked memory (hbs_gpu_host_alloc): the GPU copies into it */
    const bool direct = whole && host_pinned(whole->sigs, out_bytes);
    int err;
    std::lock_guard<std::mutex> g(d->lock);
    if ((err = host_buf(d, SFS_F_UP, up_len, (void **)&hup)) ||
        (err = dev_buf(d, SFS_F_UP, up_len, (void **)&dup)) ||
        (err = dev_buf(d, SFS_F_NODES, node_bytes, (void **)&dnodes)) ||
        (err = dev_buf(d, SFS_F_VALS, vals, (void **)&dvals)) ||
        (err = dev_buf(d, SFS_F_SIG, sig_bytes, (void **)&dsig)) ||
        (err = host_buf(d, SFS_F_NODES, node_bytes, (void **)&hnodes)) ||
        (!whole && (err = host_buf(d, SFS_F_SIG, sig_bytes, (void **)&hsig))) ||
        (whole && (err = dev_buf(d, SFS_F_OUT, out_bytes, (void **)&dout))) ||
        (whole && !direct && (err = host_buf(d, SFS_F_OUT, out_bytes, (void **)&hout))))
        return err;
    if (direct)
        hout = whole->sigs;
    int32_t *cap = (int32_t *)hup;
    memset(cap, 0xff, 4 * (nbottom << hb));
    for (size_t m = 0; m < count; m++)
        cap[((tree[m] - bottom0) << hb) + q[m]] = (int32_t)m;
    if (whole) {
        stage_msgs(hup + a_off, hup + a_mlen, hup + a_msg, moff, mbytes, whole->msgs,
                   whole->mlens);
    } else {
        memcpy(hup + a_dig, dig, count * pb);
    }
    memcpy(hup + a_q, q, 4 * count);
    /* the top level's tree from the cache, or into it for later batches (every batch of the
     * key needs it); its one-time signatures, if it is the bottom level, from the secrets */
    tree_entry *hit0 = nullptr, *keep0 = nullptr;
    if (tree_cache_on() && v.root0 && trees[0].level == 0 && v.lms[0]->h <= SFS_MAX_TREE_H) {
        uint8_t id[32];
        const uint64_t tick = ++d->tree_tick;
        lms_tree_cache_id(id, v.ots[0]->n, v.ots[0]->w, v.lms[0]->h, v.I0, v.root0);
        d->tree_cache.reserve(SFS_TREE_CACHE_MAX);
        if (!(hit0 = tree_cache_find(d, id, 0, 0, t_at[1], tick)))
            keep0 = tree_cache_slot(d, id, 0, 0, t_at[1], tick);
    }
    tm.note("trees from the cache", hit0 ? 1 : 0, T);
    err = cuda_err(cudaMemcpyAsync(dup, hup, up_len, cudaMemcpyHostToDevice, d->stream),
                   "cudaMemcpyAsync", __LINE__);
    if (!err && whole) {
        lf_msg_args ma;
        memset(&ma, 0, sizeof ma);
        ma.bytes = dup + a_msg;
        ma.off = (const uint64_t *)(dup + a_off);
        ma.mlen = (const uint32_t *)(dup + a_mlen);
        memcpy(ma.I, v.I0, 16);
        memcpy(ma.seed, v.seed0, nb);
        ma.first = whole->first;
        ma.count = (uint32_t)count;
        ma.n = (uint32_t)nb;
        ma.w = v.ots[b]->w;
        ma.p = (uint32_t)pb;
        ma.ls = v.ots[b]->ls;
        ma.h = (uint32_t)hb;
        ma.C = dsig + count * pb * nb;
        ma.digits = dup + a_dig;
        lf_messages_sha256<<<(unsigned)((count + 31) / 32), 32, 0, d->stream>>>(ma);
        hbs_memzero(&ma, sizeof ma);
    }
    for (size_t k = 0; k < T && !err; k++) {
        const unsigned i = trees[k].level, h = v.lms[i]->h;
        const hbs_lmots_type *o = v.ots[i];
        uint8_t *Tk = dnodes + t_at[k];
        lf_args a;
        memset(&a, 0, sizeof a);
        memcpy(a.I, trees[k].I, 16);
        memcpy(a.seed, trees[k].seed, o->n);
        a.n = o->n;
        a.p = o->p;
        a.w = o->w;
        a.h = h;
        if (k >= bottom0) {
            a.cap = (const int32_t *)dup + ((k - bottom0) << hb);
            a.digits = dup + a_dig;
            a.sig = dsig;
        }
        if (k == 0 && hit0) {
            err = cuda_err(cudaMemcpyAsync(Tk, hit0->p, t_at[1], cudaMemcpyDeviceToDevice,
                                           d->stream),
                           "cudaMemcpyAsync", __LINE__);
            size_t ia = 0, ib = 0; /* its messages (consecutive) */
            while (k >= bottom0 && ia < count && tree[ia] != k)
                ia++;
            for (ib = ia; k >= bottom0 && ib < count && tree[ib] == k;)
                ib++;
            if (!err && ib > ia) {
                ls_args la;
                memcpy(la.I, a.I, 16);
                memcpy(la.seed, a.seed, sizeof la.seed);
                la.n = a.n;
                la.p = a.p;
                const uint32_t nj = (uint32_t)(ib - ia);
                const uint32_t *qs = (const uint32_t *)(dup + a_q) + ia;
                const uint8_t *dg = dup + a_dig + ia * pb;
                const unsigned b = sfs_blocks((uint64_t)nj * pb);
                if (o->n == 32)
                    lms_ots_sign_sha256<8><<<b, SFS_THREADS, 0, d->stream>>>(la, qs, dg, nj, dsig + ia * pb * nb);
                else
                    lms_ots_sign_sha256<6><<<b, SFS_THREADS, 0, d->stream>>>(la, qs, dg, nj, dsig + ia * pb * nb);
                hbs_memzero(&la, sizeof la);
            }
        } else if (o->n == 32) {
            lf_tree<8>(d, a, dvals, Tk);
        } else {
            lf_tree<6>(d, a, dvals, Tk);
        }
        if (k == 0 && keep0 && !err)
            err = cuda_err(cudaMemcpyAsync(keep0->p, Tk, t_at[1], cudaMemcpyDeviceToDevice,
                                           d->stream),
                           "cudaMemcpyAsync", __LINE__);
        hbs_memzero(&a, sizeof a);
    }
    if (!err)
        err = cuda_err(cudaGetLastError(), "kernel launch", __LINE__);
    if (!err)
        err = cuda_err(cudaMemcpyAsync(hnodes, dnodes, node_bytes, cudaMemcpyDeviceToHost,
                                       d->stream),
                       "cudaMemcpyAsync", __LINE__);
    if (!err && !whole)
        err = cuda_err(cudaMemcpyAsync(hsig, dsig, sig_bytes, cudaMemcpyDeviceToHost, d->stream),
                       "cudaMemcpyAsync", __LINE__);
    if (!err && whole) {
        lf_asm_args as;
        as.T = dnodes;
        as.C = dsig + count * pb * nb;
        as.y = dsig;
        as.out = dout;
        as.first = whole->first;
        as.count = (uint32_t)count;
        as.sb = (uint32_t)whole->sb;
        as.n = (uint32_t)nb;
        as.p = (uint32_t)pb;
        as.h = (uint32_t)hb;
        as.ots_code = v.ots[b]->code;
        as.lms_code = v.lms[b]->code;
        lf_assemble<<<(unsigned)count, 128, 0, d->stream>>>(as);
        err = cuda_err(cudaGetLastError(), "kernel launch", __LINE__);
        /* into the caller's memory only once the reservation is durable */
        if (!err && direct)
            err = gate.wait();
        if (!err)
            err = cuda_err(cudaMemcpyAsync(hout, dout, out_bytes, cudaMemcpyDeviceToHost,
                                           d->stream),
                           "cudaMemcpyAsync", __LINE__);
    }
    if (!err)
        err = cuda_err(cudaStreamSynchronize(d->stream), "cudaStreamSynchronize", __LINE__);
    if (err) {
        cudaStreamSynchronize(d->stream);
        if (keep0) /* what it holds is not known to be whole */
            tree_cache_drop(keep0);
        return err;
    }
    tm.mark("gpu trees+signatures");
    par_for(T, [&](size_t k) {
        trees[k].T.assign(hnodes + t_at[k], hnodes + t_at[k + 1]);
        lms_set_pk(v, trees[k]);
    });
    if (direct) /* (the GPU has copied them) */
        return HBS_OK;
    if ((err = gate.wait()))
        return err;
    if (whole)
        par_copy(whole->sigs, hout, out_bytes);
    else
        par_for(count, [&](size_t m) { memcpy(out[m] + 8 + nb, hsig + m * pb * nb, pb * nb); });
    return HBS_OK;
}

/* One LMS signature being made: where it goes and what it signs. */
struct lsig {
    size_t tree;  /* index into the trees */
    uint32_t q;
    uint8_t *out; /* q || ots type || C || y || lms type || path */
};

/* The levels of the HSS private state st (its header checked, and room for each level's
 * types), or 0 if it is not one. */
static unsigned hss_state_levels(const uint8_t *st, size_t stlen)
{
    if (stlen < 8 || memcmp(st, "HSSK", 4) != 0 || st[4] != 1 || st[5] < 1 ||
        st[5] > HBS_HSS_MAX_LEVELS || stlen < 8 + 8 * (size_t)st[5])
        return 0;
    return st[5];
}

uint64_t hss_batch_tree(const uint8_t *st, size_t stlen)
{
    const unsigned L = hss_state_levels(st, stlen);
    const hbs_lms_type *t = L ? hbs_lms_type_by_code(sget32(st + 8 * (size_t)L)) : nullptr;
    return t ? (uint64_t)1 << t->h : 0;
}

int hss_batch(device_ctx *d, const hbs_leaf_engine *e, const uint8_t *st, size_t stlen,
              const uint8_t *pk, size_t pklen, uint64_t first, uint8_t *sigs, size_t sb,
              const uint8_t *const *msgs, const size_t *msglens, size_t count, bool *cpu,
              std::vector<ltree_t> &trees, release_gate &gate, sign_timer &tm)
{
    hss_view v;
    size_t off;
    if ((v.L = hss_state_levels(st, stlen)) == 0)
        return HBS_ERR_STATE;
    off = 8;
    unsigned maxh = 0, total_h = 0;
    for (unsigned i = 0; i < v.L; i++, off += 8) {
        v.lms[i] = hbs_lms_type_by_code(sget32(st + off));
        v.ots[i] = hbs_lmots_type_by_code(sget32(st + off + 4));
        if (!hbs_lms_types_match(v.lms[i], v.ots[i]))
            return HBS_ERR_STATE;
        maxh = v.lms[i]->h > maxh ? v.lms[i]->h : maxh;
        total_h += v.lms[i]->h;
    }
    if (stlen < off + 16 + v.lms[0]->m + 16 || sget64(st + off + 16 + v.lms[0]->m) > first)
        return HBS_ERR_STATE;
    v.I0 = st + off;
    v.seed0 = st + off + 16;
    /* the public key, u32 L || u32 type || u32 otstype || I || T[1], names the top tree */
    v.root0 = pk && pklen == 28 + (size_t)v.lms[0]->m && sget32(pk) == v.L &&
                      sget32(pk + 4) == v.lms[0]->code && sget32(pk + 8) == v.ots[0]->code &&
                      memcmp(pk + 12, v.I0, 16) == 0
                  ? pk + 28
                  : nullptr;
    for (unsigned i = v.L, s = 0; i-- > 0;) {
        v.shift[i] = s;
        s += v.lms[i]->h;
    }
    size_t need = 4;
    for (unsigned i = 0; i < v.L; i++)
        need += hbs_lms_sig_bytes(v.lms[i], v.ots[i]) + (i ? 24 + v.lms[i]->m : 0);
    if (need != sb || total_h > 63)
        return HBS_ERR_STATE;
    const uint64_t last = first + count - 1;
    uint64_t ifirst[HBS_HSS_MAX_LEVELS], ilast[HBS_HSS_MAX_LEVELS], leaves = 0;
    for (unsigned i = 0; i < v.L; i++) {
        const unsigned sh = v.shift[i] + v.lms[i]->h;
        ifirst[i] = sh >= 64 ? 0 : first >> sh;
        ilast[i] = sh >= 64 ? 0 : last >> sh;
        leaves += (ilast[i] - ifirst[i] + 1) << v.lms[i]->h;
    }
    if (!trees_worth_it(maxh, leaves, count)) {
        *cpu = true;
        return HBS_OK;
    }
    size_t level_at[HBS_HSS_MAX_LEVELS];
    int err = HBS_OK;
    for (unsigned i = 0; i < v.L; i++) {
        level_at[i] = trees.size();
        for (uint64_t k = ifirst[i]; k <= ilast[i]; k++) {
            trees.emplace_back();
            ltree_t &t = trees.back();
            t.level = i;
            t.inst = k;
            if (i == 0) {
                memcpy(t.I, v.I0, 16);
                memcpy(t.seed, v.seed0, v.lms[0]->m);
            } else {
                hss_child(v, i, k, t.I, t.seed);
            }
        }
    }
    /* the signatures: the top L-1 levels sign each touched child tree's key, the bottom
     * level each message; upper ones go in per-tree scratch, bottom ones in place */
    std::vector<lsig> jobs;
    std::vector<std::vector<uint8_t>> upper(trees.size());
    for (unsigned i = 1; i < v.L; i++)
        for (size_t k = level_at[i]; k < level_at[i] + (ilast[i] - ifirst[i] + 1); k++) {
            const ltree_t &child = trees[k];
            const unsigned pl = i - 1;
            const uint64_t pinst = child.inst >> v.lms[pl]->h;
            lsig s;
            s.tree = level_at[pl] + (size_t)(pinst - ifirst[pl]);
            s.q = (uint32_t)(child.inst & ((1u << v.lms[pl]->h) - 1));
            upper[k].assign(hbs_lms_sig_bytes(v.lms[pl], v.ots[pl]), 0);
            s.out = upper[k].data();
            jobs.push_back(s);
        }
    const size_t nupper = jobs.size();
    jobs.resize(nupper + count);
    std::vector<size_t> dig_at(jobs.size() + 1, 0);
    {
        const unsigned b = v.L - 1;
        const size_t bottom_sig = hbs_lms_sig_bytes(v.lms[b], v.ots[b]);
        for (size_t m = 0; m < count; m++) {
            const uint64_t G = first + m;
            lsig &s = jobs[nupper + m];
            s.tree = level_at[b] + (size_t)((G >> v.lms[b]->h) - ifirst[b]);
            s.q = (uint32_t)(G & ((1u << v.lms[b]->h) - 1));
            s.out = sigs + m * sb + sb - bottom_sig;
        }
    }
    for (size_t k = 0; k < jobs.size(); k++)
        dig_at[k + 1] = dig_at[k] + v.ots[trees[jobs[k].tree].level]->p;
    std::vector<uint8_t> a_all(dig_at[jobs.size()]); /* digits, job-major */
    /* C, Q and the digits of job k on the host; q and the types written now */
    auto prepare = [&](size_t k) {
        const lsig &s = jobs[k];
        const ltree_t &t = trees[s.tree];
        const hbs_lmots_type *o = v.ots[t.level];
        const uint8_t *msg;
        size_t mlen;
        uint8_t Q[HBS_LMS_MAX_N];
        if (k < nupper) {
            /* the child's key: the job order above follows the trees of levels 1 .. L-1 */
            const ltree_t &child = trees[level_at[1] + k];
            msg = child.pk;
            mlen = 24 + v.lms[child.level]->m;
        } else {
            msg = msgs[k - nupper];
            mlen = msglens[k - nupper];
        }
        sput32(s.out, s.q);
        sput32(s.out + 4, o->code);
        hbs_lmots_randomizer(o, s.out + 8, t.I, s.q, t.seed);
        hbs_lmots_message_hash(o, Q, t.I, s.q, s.out + 8, msg, mlen);
        lms_digits(Q, o->n, o->w, o->p, o->ls, a_all.data() + dig_at[k]);
    };
    bool fused = fuse_enabled();
    for (unsigned i = 0; i < v.L; i++)
        fused = fused && v.ots[i]->hash == HBS_LMS_HASH_SHA256 && v.lms[i]->m == v.ots[i]->n &&
                (v.ots[i]->n == 32 || v.ots[i]->n == 24);
    /* a one-level key's batch is done on the GPU to the end (messages hashed, signatures
     * put together) when the GPU hashes the messages (msgs_on_gpu) */
    const bool whole = fused && v.L == 1 && msgs_on_gpu(msglens, count);
    /* the bottom jobs' digits need no tree: they are hashed first, over the pool */
    if (!whole)
        par_for(count, [&](size_t m) { prepare(nupper + m); });
    tm.mark("messages");
    size_t kend = jobs.size(); /* the jobs the chains below still sign */
    if (fused) {
        std::vector<size_t> jt(count);
        std::vector<uint32_t> jq(count);
        std::vector<uint8_t *> jo(count);
        for (size_t m = 0; m < count; m++) {
            jt[m] = jobs[nupper + m].tree;
            jq[m] = jobs[nupper + m].q;
            jo[m] = jobs[nupper + m].out;
        }
        lf_whole wh = {msgs, msglens, sigs, sb, first};
        err = lms_fused(d, v, trees, level_at[v.L - 1], count, jt.data(), jq.data(),
                        a_all.data() + dig_at[nupper], jo.data(), whole ? &wh : nullptr, gate,
                        tm);
        kend = nupper;
    } else {
        for (size_t k = 0; k < trees.size() && !err; k++)
            err = lms_build(e, v, trees[k]);
    }
    tm.mark(fused ? "copies" : "trees");
    for (size_t k = 0; k < nupper && !err; k++)
        prepare(k);
    /* the chains: one launch per tree (its I and SEED are the kernel's parameters) */
    for (size_t k = 0; k < kend && !err;) {
        const size_t tr = jobs[k].tree;
        const hbs_lmots_type *o = v.ots[trees[tr].level];
        const size_t n = o->n, p = o->p;
        size_t end = k;
        while (end < kend && jobs[end].tree == tr)
            end++;
        const size_t nj = end - k;
        std::vector<uint8_t> packed(4 * nj + nj * p), y(nj * p * n);
        for (size_t i = 0; i < nj; i++)
            memcpy(packed.data() + 4 * i, &jobs[k + i].q, 4);
        memcpy(packed.data() + 4 * nj, a_all.data() + dig_at[k], nj * p);
        ls_args la;
        memset(&la, 0, sizeof la);
        memcpy(la.I, trees[tr].I, 16);
        memcpy(la.seed, trees[tr].seed, n);
        la.n = (uint32_t)n;
        la.p = (uint32_t)p;
        err = run_jobs(d, packed.data(), packed.size(), y.size(), y.data(),
                       [&](uint8_t *dj, uint8_t *dout) {
                           const uint32_t *qs = (const uint32_t *)dj;
                           const uint8_t *dg = dj + 4 * nj;
                           const unsigned b = sfs_blocks((uint64_t)nj * p);
                           if (o->hash == HBS_LMS_HASH_SHA256 && n == 32)
                               lms_ots_sign_sha256<8><<<b, SFS_THREADS, 0, d->stream>>>(la, qs, dg, (uint32_t)nj, dout);
                           else if (o->hash == HBS_LMS_HASH_SHA256)
                               lms_ots_sign_sha256<6><<<b, SFS_THREADS, 0, d->stream>>>(la, qs, dg, (uint32_t)nj, dout);
                           else
                               lms_ots_sign_shake<<<b, SFS_THREADS, 0, d->stream>>>(la, qs, dg, (uint32_t)nj, dout);
                       });
        hbs_memzero(&la, sizeof la);
        /* (the bottom jobs' y go into the caller's memory: the reservation first) */
        if (!err && end > nupper)
            err = gate.wait();
        if (!err)
            par_for(nj, [&](size_t i) {
                memcpy(jobs[k + i].out + 8 + n, y.data() + i * p * n, p * n);
            });
        k = end;
    }
    tm.mark("one-time signatures");
    /* assembly: L-1 || (signature of level i's key by level i-1 || level i's key) ...,
     * and every LMS signature's type and path (done on the GPU for a whole batch) */
    if (!err && !whole)
        err = gate.wait(); /* (the upper one-time signatures go in now) */
    if (!err && !whole) {
        par_for(jobs.size(), [&](size_t k) {
            const lsig &s = jobs[k];
            const ltree_t &t = trees[s.tree];
            const hbs_lms_type *lt = v.lms[t.level];
            const size_t ots_len = hbs_lmots_sig_bytes(v.ots[t.level]);
            sput32(s.out + 4 + ots_len, lt->code);
            uint8_t *path = s.out + 8 + ots_len;
            uint32_t r = (1u << lt->h) + s.q;
            for (unsigned z = 0; z < lt->h; z++, r >>= 1)
                memcpy(path + z * lt->m, t.T.data() + (size_t)((r ^ 1) - 1) * lt->m, lt->m);
        });
        par_for(count, [&](size_t m) {
            const uint64_t G = first + m;
            uint8_t *s = sigs + m * sb;
            size_t at = 4;
            sput32(s, v.L - 1);
            for (unsigned i = 1; i < v.L; i++) {
                const size_t k =
                    level_at[i] + (size_t)((G >> (v.shift[i] + v.lms[i]->h)) - ifirst[i]);
                memcpy(s + at, upper[k].data(), upper[k].size());
                at += upper[k].size();
                memcpy(s + at, trees[k].pk, 24 + v.lms[i]->m);
                at += 24 + v.lms[i]->m;
            }
        });
    }
    tm.mark("assembly");
    for (ltree_t &t : trees)
        hbs_memzero(t.seed, sizeof t.seed);
    return err;
}

/* LMS (SHA-256): a whole tree, named by its own type, I and root. */
void tree_cache_keep_lms(device_ctx *d, const hbs_lms_leaf_job *j, uint32_t first,
                         size_t count, const uint8_t *dleaves)
{
    if (!tree_cache_on() || first != 0 || j->hash != HBS_LMS_HASH_SHA256 ||
        (j->n != 32 && j->n != 24) || j->h > SFS_MAX_TREE_H || count != (size_t)1 << j->h)
        return;
    const size_t n = j->n, bytes = (2 * count - 1) * n;
    uint8_t *dT;
    if (dev_buf(d, SFS_F_NODES, bytes, (void **)&dT) ||
        !tree_fill_take(d, std::vector<uint32_t>(1, 0), std::vector<uint64_t>(1, 0), bytes)) {
        gpu_clear_error();
        return;
    }
    lf_args a;
    memset(&a, 0, sizeof a); /* the levels need no secret */
    memcpy(a.I, j->I, 16);
    a.n = (uint32_t)n;
    a.p = j->p;
    a.w = j->w;
    a.h = j->h;
    const bool ok = cudaMemcpyAsync(dT + (count - 1) * n, dleaves, count * n,
                                    cudaMemcpyDeviceToDevice, d->stream) == cudaSuccess;
    if (ok && n == 32)
        lf_levels<8>(a, dT, d->stream);
    else if (ok)
        lf_levels<6>(a, dT, d->stream);
    std::array<uint8_t, 16> I;
    memcpy(I.data(), j->I, 16);
    const unsigned nn = j->n, w = j->w, h = j->h;
    d->fill.name = [nn, w, h, I](const uint8_t *root, uint8_t id[32]) {
        lms_tree_cache_id(id, nn, w, h, I.data(), root);
    };
    tree_fill_start(d, std::vector<const uint8_t *>(1, dT), dT, n, ok);
}

} // namespace hbs_gpu
