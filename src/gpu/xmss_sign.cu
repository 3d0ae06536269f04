/* XMSS and XMSS^MT batches of the GPU batch signer (stateful_sign.cu has the entry point and
 * the order of events): every tree the batch touches built on the GPU; with SHA-256 and
 * n = 32 the fused path, where the messages, the trees, the one-time signatures and the
 * whole signatures are all made on the GPU; otherwise the leaves from the engine and the
 * rest here. Also what key generation keeps of an XMSS key's trees for it. */
#include "gpu/stateful_sign.h"
#include "gpu/xmss_sign_kernels.cuh"

namespace hbs_gpu {

/* Fused XMSS path: leaves per launch at most (2^18 leaves of chain ends: 575 MB). */
#define SFS_F_SLICE ((uint64_t)1 << 18)
/* The fused path builds the bottom layer's trees in up to this many groups, on two streams
 * by turns, each group's signatures going back to the host while the next is built; batches
 * of signatures under SFS_F_GROUP_MIN_BYTES in all are one group. (H100, XMSSMT-SHA2_20/2_256
 * batches of 16,384, median of 7, two rounds: 2 groups 9.79/9.86 ms, 4 9.08/8.76, 8
 * 8.63/8.60, 16 9.99/9.74; bench/results/gpu-H100-s21-groups.log) */
#define SFS_F_GROUPS 8
#define SFS_F_GROUP_MIN_BYTES ((size_t)4 << 20)
/* HBS_GPU_SIGN_GROUPS=N sets the groups (at most this many), whatever the batch's size. */
#define SFS_F_GROUPS_MAX 16
/* From this many leaves a launch on, a thread per L-tree (enough of them to fill the GPU);
 * below, several L-trees a block (x256_ltree_packed). HBS_GPU_LTREE=levels runs the
 * level-at-a-time kernels instead (for comparison). */
#ifndef SFS_F_SERIAL_LTREE
#define SFS_F_SERIAL_LTREE ((uint64_t)1 << 17)
#endif
/* The bottom trees from the cache sign in two passes (xs_prep_sha256) while their steps'
 * scratch, 960 words a message, stays under this; above, in one. */
#define SFS_SPREP_MAX ((size_t)256 << 20)


/* HBS_GPU_LTREE=serial|packed|levels: the fused path's L-tree kernel, whatever the launch's
 * size (for comparison); otherwise chosen by size. */
enum lt_kind { LT_SERIAL, LT_PACKED, LT_LEVELS };
static lt_kind ltree_kind(uint64_t leaves)
{
    const char *v = getenv("HBS_GPU_LTREE");
    if (v && strcmp(v, "serial") == 0)
        return LT_SERIAL;
    if (v && strcmp(v, "packed") == 0)
        return LT_PACKED;
    if (v && strcmp(v, "levels") == 0)
        return LT_LEVELS;
    return leaves < SFS_F_SERIAL_LTREE ? LT_PACKED : LT_SERIAL;
}

/* HBS_GPU_SIGN_FUSE=0: the XMSS SHA-256 sets take the general path too (for comparison). */
/* An XMSS signature's index: idx_bytes big-endian bytes of G. */
static void xmss_put_idx(uint8_t *s, unsigned idx_bytes, uint64_t G)
{
    for (unsigned b = 0; b < idx_bytes; b++)
        s[b] = (uint8_t)(G >> (8 * (idx_bytes - 1 - b)));
}

/* ---- XMSS / XMSS^MT ---- */

/* Node i of level z (0: leaves) of a tree of height H, n-byte nodes. */
static const uint8_t *xnode(const xtree &t, unsigned H, size_t n, unsigned z, uint64_t i)
{
    return t.nodes.data() + (hbs_xmss_level_at(H, z) + i) * n;
}

/* The inner nodes of every tree from its leaves, level by level, each level's nodes of all
 * trees spread over the thread pool in runs of up to 64. */
static void xmss_inner(const xmss_ctx *c, std::vector<xtree> &trees, unsigned H, size_t n)
{
    for (unsigned z = 1; z <= H; z++) {
        const size_t per = (size_t)1 << (H - z), run = per < 64 ? per : 64, runs = per / run;
        const size_t below = hbs_xmss_level_at(H, z - 1), at = hbs_xmss_level_at(H, z);
        par_for(trees.size() * runs, [&](size_t w) {
            xtree &t = trees[w / runs];
            const size_t first = (w % runs) * run;
            hbs_xmss_tree_nodes(c, t.nodes.data() + (at + first) * n,
                                t.nodes.data() + (below + 2 * first) * n, t.layer, t.tree, z,
                                (uint32_t)first, run);
        });
    }
}

/* Every touched tree: leaves from the engine (up to 12 trees a call), inner nodes here. */
static int xmss_build(const hbs_leaf_engine *e, const xmss_ctx *c, const hbs_xmss_params *p,
                      const uint8_t *sk_seed, const uint8_t *pub_seed, std::vector<xtree> &trees)
{
    const unsigned H = p->tree_h;
    const size_t n = p->n, leaves = (size_t)1 << H;
    size_t per_call = e->slice_leaves / leaves;
    if (per_call > 12)
        per_call = 12;
    if (per_call == 0)
        return HBS_ERR_UNSUPPORTED;
    for (xtree &t : trees)
        t.nodes.resize((2 * leaves - 1) * n);
    std::vector<uint8_t> out(per_call * leaves * n);
    for (size_t at = 0; at < trees.size(); at += per_call) {
        const size_t m = trees.size() - at < per_call ? trees.size() - at : per_call;
        hbs_xmss_leaf_job jobs[12];
        for (size_t k = 0; k < m; k++) {
            jobs[k].func = p->func;
            jobs[k].n = p->n;
            jobs[k].padlen = p->padlen;
            jobs[k].len = p->len;
            jobs[k].pub_seed = pub_seed;
            jobs[k].sk_seed = sk_seed;
            jobs[k].layer = trees[at + k].layer;
            jobs[k].tree = trees[at + k].tree;
            jobs[k].oid = 0; /* nothing kept: this path builds its trees every batch */
            jobs[k].mt = 0;
        }
        int err = e->xmss_leaves(e->user, jobs, m, 0, leaves, out.data());
        if (err)
            return err;
        for (size_t k = 0; k < m; k++)
            memcpy(trees[at + k].nodes.data(), out.data() + k * leaves * n, leaves * n);
    }
    xmss_inner(c, trees, H, n);
    return HBS_OK;
}

static void xmss_auth(const xtree &t, unsigned H, size_t n, uint32_t leaf, uint8_t *out)
{
    for (unsigned z = 0; z < H; z++)
        memcpy(out + z * n, xnode(t, H, n, z, (leaf >> z) ^ 1), n);
}

/* The fused batch's messages on the GPU: each one's r (to r_out, 32 bytes each) and the
 * digits its bottom WOTS+ signature signs (to digits), from the uploaded bytes. */
static void xf_messages(device_ctx *d, const hbs_xmss_params *p, uint64_t first, size_t count,
                        const uint8_t *sk_prf, const uint8_t *root, const uint8_t *bytes,
                        const uint8_t *off, const uint8_t *mlen, uint8_t *r_out, uint8_t *digits)
{
    xf_msg_args m;
    memset(&m, 0, sizeof m);
    m.bytes = bytes;
    m.off = (const uint64_t *)off;
    m.mlen = (const uint32_t *)mlen;
    m.first = first;
    m.count = (uint32_t)count;
    m.len1 = p->len1;
    m.len = p->len;
    /* PRF's first block, toByte(3, 32) || SK_PRF, is the same for every message */
    x256_host_midstate(m.prf_mid, 3, sk_prf);
    for (int k = 0; k < 8; k++)
        m.root[k] = sget32(root + 4 * k);
    m.r = r_out;
    m.digits = digits;
    /* blocks of 32: a batch of 1,024 messages then spreads over 32 SMs, not 4 */
    xf_messages_sha256<<<(unsigned)((count + 31) / 32), 32, 0, d->stream>>>(m);
    hbs_memzero(&m, sizeof m);
}

/* Scratch of xf_levels for ntrees trees of height H: their inner nodes' address-only parts. */
static size_t xf_levels_scratch(unsigned H, uint64_t ntrees)
{
    return H <= SFS_LEVELS_BLOCK_H ? ntrees * (((size_t)1 << H) - 1) * 96 + 96 : 0;
}

/* The address-only part of the inner nodes of trees [ka, kb) of f into lvp
 * (xf_levels_scratch bytes for kb - ka trees), on stream st: it needs no leaf. */
static void xf_levels_prep(xf_args &f, const x256_mid &mid, uint64_t ka, uint64_t kb,
                           uint32_t *lvp, cudaStream_t st)
{
    const uint32_t nt = (uint32_t)(kb - ka);
    f.k0 = (uint32_t)ka;
    if (f.h <= SFS_LEVELS_BLOCK_H)
        xf_levels_prep_sha256<<<sfs_blocks((uint64_t)nt * ((1u << f.h) - 1)), SFS_THREADS, 0, st>>>(f, mid, nt, lvp);
}

/* The inner levels of trees [ka, kb) of f, their leaves in place in nodes, on stream st,
 * after xf_levels_prep of the same trees into lvp. */
static void xf_levels_build(xf_args &f, const x256_mid &mid, uint64_t ka, uint64_t kb,
                            uint8_t *nodes, const uint32_t *lvp, cudaStream_t st)
{
    const unsigned H = f.h;
    const uint32_t nt = (uint32_t)(kb - ka);
    f.k0 = (uint32_t)ka;
    if (H <= SFS_LEVELS_BLOCK_H) {
        /* the lower half of the levels a block per subtree, then the upper half */
        const unsigned zm = H / 2 > 0 ? H / 2 : H;
        xf_levels_block_sha256<<<(unsigned)((uint64_t)nt << (H - zm)), zm > 1 ? 1u << (zm - 1) : 1u, 0, st>>>(f, nt, nodes, lvp, 1, zm);
        if (zm < H)
            xf_levels_block_sha256<<<nt, H - zm > 6 ? 512u : 32u, 0, st>>>(f, nt, nodes, lvp, zm + 1, H);
    } else {
        for (unsigned z = 1; z <= H; z++)
            xf_level_sha256<<<sfs_blocks((uint64_t)nt << (H - z)), SFS_THREADS, 0, st>>>(f, mid, nt, z, nodes);
    }
}

/* The inner levels of trees [ka, kb) of f, their leaves in place in nodes, on stream st
 * (lvp: xf_levels_scratch bytes for kb - ka trees). */
static void xf_levels(xf_args &f, const x256_mid &mid, uint64_t ka, uint64_t kb, uint8_t *nodes,
                      uint32_t *lvp, cudaStream_t st)
{
    xf_levels_prep(f, mid, ka, kb, lvp, st);
    xf_levels_build(f, mid, ka, kb, nodes, lvp, st);
}

/* The upper jobs of nj trees in device memory: each tree's root signer (layer, leaf, tree),
 * the digits of the root, then the signatures (the fused batch's, and key generation's). */
struct upper_jobs {
    size_t leaf, tree, dig, sig, bytes;
    upper_jobs(size_t nj, size_t len)
    {
        leaf = 4 * nj;
        tree = (8 * nj + 7) & ~(size_t)7;
        dig = tree + 8 * nj;
        sig = (dig + nj * len + 15) & ~(size_t)15;
        bytes = sig + nj * len * 32 + 8;
    }
};

/* The WOTS+ signatures of the roots of trees [ka, kb) of f (their nodes in place) by their
 * parents' leaves, on st: the upper jobs at djobs (layout uj), then their chains from the
 * address-only parts that xf_upper_prep wrote to prep for the same trees. */
static void xf_sign_roots(const xf_args &f, const x256_mid &mid, const hbs_xmss_params *p,
                          const uint8_t *nodes, uint8_t *djobs, const upper_jobs &uj,
                          uint64_t ka, uint64_t kb, const uint32_t *prep, cudaStream_t st)
{
    const size_t len = p->len;
    xf_up_args u;
    u.nodes = nodes;
    u.layer = f.layer;
    u.tree = f.tree;
    u.job_layer = (uint32_t *)djobs;
    u.job_leaf = (uint32_t *)(djobs + uj.leaf);
    u.job_tree = (uint64_t *)(djobs + uj.tree);
    u.job_digits = djobs + uj.dig;
    u.k0 = (uint32_t)ka;
    u.njobs = (uint32_t)(kb - ka);
    u.h = f.h;
    u.len1 = p->len1;
    u.len = (uint32_t)len;
    xf_upper_jobs<<<sfs_blocks(kb - ka), SFS_THREADS, 0, st>>>(u);
    xs_jobs j;
    j.layer = u.job_layer;
    j.leaf = u.job_leaf;
    j.tree = u.job_tree;
    j.digits = u.job_digits;
    xf_upper_sign<<<sfs_blocks((kb - ka) * len), SFS_THREADS, 0, st>>>(f, mid, j, (uint32_t)ka, u.njobs, prep + ka * len * 15 * 16, djobs + uj.sig + ka * len * 32);
}

/* The fused path (SHA-256, n = 32): every tree of `trees` (the bottom layer's first, from
 * tree tfirst0 on) built on the GPU, leaves and inner nodes, with the count bottom WOTS+
 * signatures (job i: message first + i, leaf leaf[i] of tree tree[i]) taken on the way and
 * written into place after each signature's r. The digits they sign are dig + i * len (r
 * already in place), or with dig null come from the messages, hashed on the GPU (r then
 * written too). The nodes come back into trees. */
static int xmss_fused(device_ctx *d, const hbs_xmss_params *p, const uint8_t *sk_seed,
                      const uint8_t *sk_prf, const uint8_t *pub_seed, const uint8_t *root,
                      std::vector<xtree> &trees, const uint64_t *tfirst,
                      const std::vector<size_t> &layer_at, uint64_t first, size_t count,
                      const uint32_t *leaf, const uint64_t *tree, const uint8_t *dig,
                      const uint8_t *const *msgs, const size_t *msglens, uint8_t *sigs,
                      size_t sb, release_gate &gate, sign_timer &tm)
{
    const unsigned H = p->tree_h, D = p->d;
    const size_t len = p->len, T = trees.size(), tn = ((size_t)2 << H) - 1;
    const uint64_t tfirst0 = tfirst[0];
    /* upload: layer[T], tree[T] (8-aligned), cap[T << H], the messages' offsets and
     * lengths, their bytes (or, hashed by the host, their r), then the digits: last, for
     * when the GPU writes them they need not go up (1.1 MB of a batch of 16,384) */
    const size_t a_tree = (4 * T + 7) & ~(size_t)7, a_cap = a_tree + 8 * T,
                 a_off = (a_cap + 4 * (T << H) + 7) & ~(size_t)7,
                 a_mlen = a_off + 8 * count, a_jlay = a_mlen + 4 * count,
                 a_jleaf = a_jlay + 4 * count, a_jtree = (a_jleaf + 4 * count + 7) & ~(size_t)7,
                 a_msg = (a_jtree + 8 * count + 15) & ~(size_t)15;
    std::vector<uint64_t> moff;
    const size_t mbytes = dig ? 0 : msg_offsets(moff, msglens, count);
    const size_t a_dig = (a_msg + (dig ? count * 32 : mbytes) + 15) & ~(size_t)15,
                 up_len = a_dig + (dig ? count * len : 0), dev_len = a_dig + count * len;
    /* on the GPU: the bottom WOTS+ signatures, then each message's r; the upper jobs (one a
     * tree below the top layer: positions, digits) and their signatures; the signatures */
    const size_t sig_bytes = count * len * 32 + count * 32, node_bytes = T * tn * 32,
                 nup = layer_at[D - 1], out_bytes = count * sb;
    const upper_jobs uj(T, len);
    /* the trees below the top layer: [0, nup) and, after the top layer's, the next ones
     * [ntail, T) (the key's state after the batch: it keeps the signature of the next
     * bottom tree's root, which the batch's end takes from here); their upper jobs are
     * numbered as the trees */
    size_t ntail = nup;
    while (ntail < T && trees[ntail].layer == D - 1)
        ntail++;
    auto below_top = [&](uint64_t ka, uint64_t kb, auto fn) {
        const uint64_t b0 = kb < nup ? kb : nup, a1 = ka > ntail ? ka : ntail;
        if (ka < b0)
            fn(ka, b0);
        if (a1 < kb)
            fn(a1, kb);
    };
    uint64_t slice_trees = SFS_F_SLICE >> H;
    if (slice_trees == 0)
        slice_trees = 1;
    /* the upper layers' trees (every signature needs them) on the side stream, beside the
     * bottom layer's, which are built in groups on the two streams by turns: each group's
     * signatures are put together and go back to the host while the next group is built */
    const uint64_t nbottom = ((first + count - 1) >> H) - tfirst0 + 1; /* signed with */
    size_t groups = out_bytes < SFS_F_GROUP_MIN_BYTES ? 1 : SFS_F_GROUPS;
    if (const char *v = getenv("HBS_GPU_SIGN_GROUPS")) { /* to compare, and to test */
        const long w = strtol(v, nullptr, 10);
        groups = w < 1 ? 1 : w > SFS_F_GROUPS_MAX ? SFS_F_GROUPS_MAX : (size_t)w;
    }
    groups = groups < nbottom ? groups : nbottom;
    /* group g signs with bottom trees [gb[g], gb[g + 1]) */
    std::vector<uint64_t> gb(groups + 1);
    for (size_t g = 0; g <= groups; g++)
        gb[g] = nbottom * g / groups;
    uint64_t gsize = 0, gmin = nbottom;
    for (size_t g = 0; g < groups; g++) {
        gsize = gb[g + 1] - gb[g] > gsize ? gb[g + 1] - gb[g] : gsize;
        gmin = gb[g + 1] - gb[g] < gmin ? gb[g + 1] - gb[g] : gmin;
    }
    /* the scratch of the biggest launch, one set per stream in use */
    const uint64_t usize = T - nbottom;
    uint64_t span = gsize > usize ? gsize : usize;
    span = span < slice_trees ? span : slice_trees;
    const bool two = groups > 1 || usize > 0;
    auto kind = [&](uint64_t trees_in) {
        return ltree_kind((trees_in < slice_trees ? trees_in : slice_trees) << H);
    };
    const bool need_lt = kind(gsize) == LT_LEVELS || (usize && kind(usize) == LT_LEVELS) ||
                         (groups > 1 && kind(gmin) == LT_LEVELS);
    uint8_t *hup, *dup, *dnodes, *hupsig, *dvals[2] = {nullptr, nullptr}, *dsig, *hnodes, *djobs, *dout,
            *hout;
    uint32_t *dlt[2] = {nullptr, nullptr}, *dprep[2] = {nullptr, nullptr};
    const uint32_t lt_s = xf_lt_stride((uint32_t)len), lt_u = xf_lt_upper((uint32_t)len);
    const size_t vals_b = (span << H) * len * 32, lt_b = (span << H) * lt_s * 32,
                 prep_b = (span << H) * lt_u * 96 + 96,
                 lvp_b = xf_levels_scratch(H, gsize > usize ? gsize : usize);
    uint32_t *dlvp[2] = {nullptr, nullptr}, *dupp = nullptr, *dsprep[2] = {nullptr, nullptr};
    /* sigs in page-locked memory (hbs_gpu_host_alloc): the GPU copies into it, no staging */
    const bool direct = host_pinned(sigs, out_bytes);
    int err;
    std::lock_guard<std::mutex> g(d->lock);
    if ((err = host_buf(d, SFS_F_UP, up_len, (void **)&hup)) ||
        (err = dev_buf(d, SFS_F_UP, dev_len, (void **)&dup)) ||
        (err = dev_buf(d, SFS_F_NODES, node_bytes, (void **)&dnodes)) ||
        (err = dev_buf(d, SFS_F_VALS, vals_b, (void **)&dvals[0])) ||
        (two && (err = dev_buf(d, SFS_F_VALS2, vals_b, (void **)&dvals[1]))) ||
        (need_lt && (err = dev_buf(d, SFS_F_LT, lt_b, (void **)&dlt[0]))) ||
        (need_lt && (err = dev_buf(d, SFS_F_PREP, prep_b, (void **)&dprep[0]))) ||
        (need_lt && two && (err = dev_buf(d, SFS_F_LT2, lt_b, (void **)&dlt[1]))) ||
        (need_lt && two && (err = dev_buf(d, SFS_F_PREP2, prep_b, (void **)&dprep[1]))) ||
        (lvp_b && (err = dev_buf(d, SFS_F_LVPREP, lvp_b, (void **)&dlvp[0]))) ||
        (lvp_b && two && (err = dev_buf(d, SFS_F_LVPREP2, lvp_b, (void **)&dlvp[1]))) ||
        (err = dev_buf(d, SFS_F_SIG, sig_bytes, (void **)&dsig)) ||
        (err = dev_buf(d, SFS_F_JOBS, uj.bytes, (void **)&djobs)) ||
        (err = dev_buf(d, SFS_F_UPPREP, T * len * 15 * 64 + 64, (void **)&dupp)) ||
        (err = dev_buf(d, SFS_F_OUT, out_bytes, (void **)&dout)) ||
        (err = host_buf(d, SFS_F_NODES, node_bytes, (void **)&hnodes)) ||
        (err = host_buf(d, SFS_F_UPSIG, T * len * 32 + 32, (void **)&hupsig)) ||
        (!direct && (err = host_buf(d, SFS_F_OUT, out_bytes, (void **)&hout))))
        return err;
    if (direct)
        hout = sigs;
    gpu_timeline tl;
    tl.mark(d->stream, 0, "start");
    int32_t *cap = (int32_t *)(hup + a_cap);
    for (size_t k = 0; k < T; k++) {
        ((uint32_t *)hup)[k] = trees[k].layer;
        ((uint64_t *)(hup + a_tree))[k] = trees[k].tree;
    }
    memset(cap, 0xff, 4 * (T << H));
    for (size_t i = 0; i < count; i++)
        cap[((size_t)(tree[i] - tfirst0) << H) + leaf[i]] = (int32_t)i;
    /* the trees' head goes up first: the stream of the upper trees and the next bottom
     * tree reads nothing else (none of their leaves signs a message), so it starts while
     * the host stages the messages and they go up and are hashed */
    HBS_CUDA(cudaMemcpyAsync(dup, hup, a_off, cudaMemcpyHostToDevice, d->stream));
    tl.mark(d->stream, 0, "head up");
    xf_args f;
    memset(&f, 0, sizeof f);
    memcpy(f.x.pub_seed, pub_seed, 32);
    memcpy(f.x.sk_seed, sk_seed, 32);
    f.x.n = 32;
    f.x.padlen = p->padlen;
    f.x.len = (uint32_t)len;
    f.layer = (const uint32_t *)dup;
    f.tree = (const uint64_t *)(dup + a_tree);
    f.cap = (const int32_t *)(dup + a_cap);
    f.digits = dup + a_dig;
    f.sig = dsig;
    f.h = H;
    /* the key's PRF and PRF_keygen midstates (toByte(3 | 4, 32) || seed) */
    x256_mid xmid;
    x256_host_midstate(xmid.prf, 3, pub_seed);
    x256_host_midstate(xmid.keygen, 4, sk_seed);
    xf_asm_args a;
    memset(&a, 0, sizeof a);
    a.nodes = dnodes;
    a.wots0 = dsig;
    a.r = dig ? dup + a_msg : dsig + count * len * 32;
    a.upper = djobs + uj.sig;
    a.out = dout;
    a.first = first;
    for (unsigned j = 0; j < D; j++) {
        a.tfirst[j] = tfirst[j];
        a.layer_at[j] = (uint32_t)layer_at[j];
    }
    a.sb = (uint32_t)sb;
    a.idx_bytes = p->idx_bytes;
    a.len = (uint32_t)len;
    a.h = H;
    a.d = D;
    /* trees [ka, kb) on stream st with scratch set q: leaves and L-trees a slice at a time,
     * then the inner levels; then the upper jobs of those below the top layer */
    std::vector<tree_entry *> hit(T, nullptr), keep(T, nullptr);
    /* trees [ka, kb) built: leaves and L-trees a slice at a time, then the inner levels */
    auto build_trees = [&](uint64_t ka, uint64_t kb, cudaStream_t st, int q) {
        for (uint64_t k0 = ka; k0 < kb; k0 += slice_trees) {
            const uint64_t m = kb - k0 < slice_trees ? kb - k0 : slice_trees;
            f.k0 = (uint32_t)k0;
            f.leaves = m << H;
            /* capped at 80 registers, 3 blocks an SM instead of 2: H100, XMSSMT-SHA2_20/2_256
             * batches of 16,384, median of 5, two rounds: 9.540-9.546 ms -> 8.988-9.118
             * (64 registers: 8.997-9.297; bench/results/gpu-H100-s20-regs.log) */
            const int minb = sf_chain_minb(3);
            const unsigned cb = sfs_blocks(f.leaves * len);
            if (minb == 4) {
                xf_chains_sha256_cap<4><<<cb, SFS_THREADS, 0, st>>>(f, xmid, dvals[q]);
            } else if (minb != 3) {
                xf_chains_sha256<<<cb, SFS_THREADS, 0, st>>>(f, xmid, dvals[q]);
            } else if (sf_chain_form(X256_CHAIN_FORM) == (SHA_COMPACT | SHA_IMAD)) {
                xf_chains_sha256_cap<3, SHA_COMPACT | SHA_IMAD><<<cb, SFS_THREADS, 0, st>>>(f, xmid, dvals[q]);
            } else {
                xf_chains_sha256_cap<3, SHA_FULL | SHA_IMAD><<<cb, SFS_THREADS, 0, st>>>(f, xmid, dvals[q]);
            }
            tl.mark(st, q, "chains", (long)k0, (long)(k0 + m));
            const lt_kind lt = kind(m);
            if (lt == LT_SERIAL) {
                xf_ltree_serial_sha256<<<sfs_blocks(f.leaves), SFS_THREADS, 0, st>>>(f, xmid, dvals[q], dnodes);
            } else if (lt == LT_PACKED) {
                const uint32_t P = x256_lt_pack((uint32_t)len);
                xf_ltree_packed_sha256<<<(unsigned)((f.leaves + P - 1) / P), X256_LT_THREADS, 0, st>>>(f, xmid, dvals[q], dnodes);
            } else {
                /* level 0 from the chain ends into dlt, then back and forth with dvals */
                uint32_t *in = dlt[q], *out = (uint32_t *)dvals[q];
                xf_ltree_l0_sha256<<<sfs_blocks(f.leaves * lt_s), SFS_THREADS, 0, st>>>(f, xmid, dvals[q], dlt[q], dprep[q], dnodes);
                uint32_t l = lt_s, u0 = 0;
                while (l > 1) {
                    xf_ltree_up_sha256<<<sfs_blocks(f.leaves * (l / 2 + (l & 1))), SFS_THREADS, 0, st>>>(f, in, out, dprep[q], l, u0, dnodes);
                    u0 += l / 2;
                    l -= l / 2;
                    uint32_t *tmp = in;
                    in = out;
                    out = tmp;
                }
            }
            tl.mark(st, q, "L-trees", (long)k0, (long)(k0 + m));
        }
        xf_levels(f, xmid, ka, kb, dnodes, dlvp[q], st);
        tl.mark(st, q, "levels", (long)ka, (long)kb);
    };
    /* the signatures bottom tree k (k < nbottom) makes: [first, second) of the batch's */
    auto sigs_of = [&](uint64_t k) {
        const uint64_t G0 = (tfirst0 + k) << H, G1 = (tfirst0 + k + 1) << H;
        return std::make_pair(G0 <= first ? (size_t)0 : (size_t)(G0 - first),
                              G1 - first < count ? (size_t)(G1 - first) : count);
    };
    /* trees [ka, kb) on stream st with scratch set q: built, or copied from the cache (a
     * bottom tree that comes from there gets its messages' one-time signatures from their
     * secrets, the chains only as far as the digits); those to keep go to the cache; then
     * the upper jobs of the trees below the top layer */
    auto make = [&](uint64_t ka, uint64_t kb, cudaStream_t st, int q) {
        below_top(ka, kb, [&](uint64_t ja, uint64_t jb) {
            xf_upper_prep<<<sfs_blocks((jb - ja) * len * 15), SFS_THREADS, 0, st>>>(f, xmid, (uint32_t)ja, (uint32_t)(jb - ja), dupp + ja * len * 15 * 16);
        });
        for (uint64_t k = ka; k < kb && !err;) {
            if (!hit[k]) {
                uint64_t kr = k;
                while (kr < kb && !hit[kr])
                    kr++;
                build_trees(k, kr, st, q);
                k = kr;
                continue;
            }
            err = cuda_err(cudaMemcpyAsync(dnodes + k * tn * 32, hit[k]->p, tn * 32,
                                           cudaMemcpyDeviceToDevice, st),
                           "cudaMemcpyAsync", __LINE__);
            if (k < nbottom) {
                const auto [ia, ib] = sigs_of(k);
                xs_jobs jb;
                jb.layer = (const uint32_t *)(dup + a_jlay) + ia;
                jb.leaf = (const uint32_t *)(dup + a_jleaf) + ia;
                jb.tree = (const uint64_t *)(dup + a_jtree) + ia;
                jb.digits = dup + a_dig + ia * len;
                if (dsprep[q]) {
                    xs_prep_sha256<<<(unsigned)(ib - ia), 256, 0, st>>>(f.x, xmid, jb, (uint32_t)(ib - ia), dsprep[q]);
                    xs_sign_prepped_sha256<<<sfs_blocks((uint64_t)(ib - ia) * len), SFS_THREADS, 0, st>>>(f.x, xmid, jb, (uint32_t)(ib - ia), dsprep[q], dsig + ia * len * 32);
                } else {
                    xmss_wots_sign_sha256<<<sfs_blocks((uint64_t)(ib - ia) * len), SFS_THREADS, 0, st>>>(f.x, xmid, jb, (uint32_t)(ib - ia), dsig + ia * len * 32);
                }
            }
            k++;
        }
        for (uint64_t k = ka; k < kb && !err; k++)
            if (keep[k])
                err = cuda_err(cudaMemcpyAsync(keep[k]->p, dnodes + k * tn * 32, tn * 32,
                                               cudaMemcpyDeviceToDevice, st),
                               "cudaMemcpyAsync", __LINE__);
        below_top(ka, kb, [&](uint64_t ja, uint64_t jb) {
            xf_sign_roots(f, xmid, p, dnodes, djobs, uj, ja, jb, dupp, st);
        });
        tl.mark(st, q, "made", (long)ka, (long)kb);
    };
    cudaStream_t st[2] = {d->stream, d->side};
    /* events: 0 the upload (and messages) done, 1 the upper trees, then per group its
     * signatures put together, and they and its trees' nodes back */
    cudaEvent_t ev[2 + 2 * SFS_F_GROUPS_MAX];
    size_t made = 0;
    for (; made < 2 + 2 * groups; made++)
        if ((err = cuda_err(cudaEventCreateWithFlags(&ev[made], cudaEventDisableTiming),
                            "cudaEventCreateWithFlags", __LINE__)))
            break;
    /* signature i's bottom tree is tree[i] - tfirst0: the first signature of group g */
    auto sig_at = [&](size_t g) -> size_t {
        return g == groups ? count : sigs_of(gb[g]).first;
    };
    /* trees the cache has are copied, not built; kept for later batches: the top layer's
     * trees (every batch needs them) and the bottom tree of the next index (the next batch
     * signs with it). Before anything runs, the new entries' memory. */
    if (!err && tree_cache_on()) {
        uint8_t id[32];
        tree_cache_id(id, p, pub_seed, root);
        const uint64_t tick = ++d->tree_tick, next = first + count,
                       next_tree = p->h >= 64 || next < ((uint64_t)1 << p->h)
                                       ? next >> H : UINT64_MAX;
        d->tree_cache.reserve(SFS_TREE_CACHE_MAX); /* entries stay where they are */
        for (size_t k = 0; k < T; k++) {
            const uint32_t layer = trees[k].layer;
            if (layer != D - 1 && layer != 0)
                continue;
            if (!(hit[k] = tree_cache_find(d, id, layer, trees[k].tree, tn * 32, tick)) &&
                (layer == D - 1 || trees[k].tree == next_tree))
                keep[k] = tree_cache_slot(d, id, layer, trees[k].tree, tn * 32, tick);
        }
    }
    if (tm.on) {
        size_t h = 0;
        for (tree_entry *e : hit)
            h += e != nullptr;
        tm.note("trees from the cache", h, T);
    }
    /* the two-pass signing's scratch for the bottom trees from the cache, one per stream */
    {
        size_t most = 0;
        for (uint64_t k = 0; k < nbottom; k++)
            if (hit[k]) {
                const auto [ia, ib] = sigs_of(k);
                most = ib - ia > most ? ib - ia : most;
            }
        const size_t b = most * len * 15 * 64;
        if (!err && most && b <= SFS_SPREP_MAX) {
            err = dev_buf(d, SFS_F_SPREP, b, (void **)&dsprep[0]);
            if (!err && two)
                err = dev_buf(d, SFS_F_SPREP2, b, (void **)&dsprep[1]);
        }
    }
    /* ev[0]: the head up (stream 1 waits for nothing else); then the rest and the messages,
     * and ev[0] again: what the groups wait for */
    if (!err && !(err = cuda_err(cudaEventRecord(ev[0], st[0]), "cudaEventRecord", __LINE__)) &&
        usize && !(err = cuda_err(cudaStreamWaitEvent(st[1], ev[0], 0), "cudaStreamWaitEvent", __LINE__)))
        make(nbottom, T, st[1], 1);
    if (!err)
        err = cuda_err(cudaEventRecord(ev[1], st[1]), "cudaEventRecord", __LINE__);
    if (!err) {
        /* each message's one-time key as a job, for the bottom trees the cache has */
        memset(hup + a_jlay, 0, 4 * count);
        memcpy(hup + a_jleaf, leaf, 4 * count);
        memcpy(hup + a_jtree, tree, 8 * count);
        if (dig) { /* hashed by the host: the digits, and r from the signatures */
            memcpy(hup + a_dig, dig, count * len);
            par_for(count, [&](size_t i) {
                memcpy(hup + a_msg + i * 32, sigs + i * sb + p->idx_bytes, 32);
            });
        } else {
            stage_msgs(hup + a_off, hup + a_mlen, hup + a_msg, moff, mbytes, msgs, msglens);
        }
        tl.mark(d->stream, 0, "staged");
        err = cuda_err(cudaMemcpyAsync(dup + a_off, hup + a_off, up_len - a_off,
                                       cudaMemcpyHostToDevice, d->stream),
                       "cudaMemcpyAsync", __LINE__);
        tl.mark(d->stream, 0, "uploaded");
        if (!err && !dig)
            xf_messages(d, p, first, count, sk_prf, root, dup + a_msg, dup + a_off, dup + a_mlen,
                        dsig + count * len * 32, dup + a_dig);
        tl.mark(d->stream, 0, "upload and messages");
    }
    if (!err)
        err = cuda_err(cudaEventRecord(ev[0], st[0]), "cudaEventRecord", __LINE__);
    for (size_t g = 0; g < groups && !err; g++) {
        cudaStream_t s = st[g & 1];
        if (g == 1 && (err = cuda_err(cudaStreamWaitEvent(s, ev[0], 0), "cudaStreamWaitEvent", __LINE__)))
            break;
        make(gb[g], gb[g + 1], s, (int)(g & 1));
        a.i0 = (uint32_t)sig_at(g);
        a.count = (uint32_t)(sig_at(g + 1) - a.i0);
        if ((err = cuda_err(cudaStreamWaitEvent(s, ev[1], 0), "cudaStreamWaitEvent", __LINE__)))
            break;
        if (a.count)
            xf_assemble<<<a.count, 128, 0, s>>>(a);
        tl.mark(s, (int)(g & 1), "assembled", (long)g);
        if ((err = cuda_err(cudaGetLastError(), "kernel launch", __LINE__)) ||
            (err = cuda_err(cudaEventRecord(ev[2 + 2 * g], s), "cudaEventRecord", __LINE__)))
            break;
    }
    /* every group is queued; the copies into the caller's memory only once the reservation
     * is durable (it takes about a millisecond, the first group several) */
    if (!err && direct)
        err = gate.wait();
    /* fn(ka, kb) over the trees of group g: its own, and with group 0 the upper ones too
     * (its assembly waited for them); the first error */
    auto group_trees = [&](size_t g, auto fn) -> int {
        const int e = fn(gb[g], gb[g + 1]);
        return e || g != 0 || nbottom == T ? e : fn(nbottom, T);
    };
    auto copy_nodes = [&](uint64_t ka, uint64_t kb) {
        return cuda_err(cudaMemcpyAsync(hnodes + ka * tn * 32, dnodes + ka * tn * 32,
                                        (kb - ka) * tn * 32, cudaMemcpyDeviceToHost, d->copy),
                        "cudaMemcpyAsync", __LINE__);
    };
    /* per group, its signatures then its trees' nodes: only the last group's are left to
     * copy once the GPU is done (all the nodes at the end, 1.2 MB of an XMSS^MT batch, came
     * back after the last signatures) */
    for (size_t g = 0; g < groups && !err; g++) {
        const size_t i0 = sig_at(g), n = sig_at(g + 1) - i0;
        if ((err = cuda_err(cudaStreamWaitEvent(d->copy, ev[2 + 2 * g], 0), "cudaStreamWaitEvent", __LINE__)) ||
            (err = cuda_err(cudaMemcpyAsync(hout + i0 * sb, dout + i0 * sb, n * sb,
                                            cudaMemcpyDeviceToHost, d->copy),
                            "cudaMemcpyAsync", __LINE__)) ||
            (err = group_trees(g, copy_nodes)) ||
            /* with the last group, the upper WOTS+ signatures (the top layer's slots hold
             * none): the key's state after the batch holds one of them, and the batch's end
             * takes it from there */
            (g + 1 == groups &&
             (err = cuda_err(cudaMemcpyAsync(hupsig, djobs + uj.sig, T * len * 32,
                                             cudaMemcpyDeviceToHost, d->copy),
                             "cudaMemcpyAsync", __LINE__))) ||
            (err = cuda_err(cudaEventRecord(ev[3 + 2 * g], d->copy), "cudaEventRecord", __LINE__)))
            break;
        tl.mark(d->copy, 2, "copied", (long)g);
    }
    hbs_memzero(&f, sizeof f);
    hbs_memzero(&xmid, sizeof xmid);
    /* each group's signatures into the caller's memory as they arrive, and its trees' nodes
     * (under the lock still: the pinned buffers are the pool's) */
    auto nodes_back = [&](uint64_t ka, uint64_t kb) {
        for (uint64_t k = ka; k < kb; k++) {
            trees[k].nodes.resize(tn * 32);
            memcpy(trees[k].nodes.data(), hnodes + k * tn * 32, tn * 32);
        }
        return 0;
    };
    for (size_t g = 0; g < groups && !err; g++) {
        if ((err = cuda_err(cudaEventSynchronize(ev[3 + 2 * g]), "cudaEventSynchronize", __LINE__)))
            break;
        if (g == 0)
            tm.mark("gpu (first group)");
        if (!direct) {
            if (g == 0 && (err = gate.wait()))
                break;
            const size_t a0 = sig_at(g) * sb, a1 = sig_at(g + 1) * sb;
            par_copy(sigs + a0, hout + a0, a1 - a0);
        }
        group_trees(g, nodes_back);
    }
    if (!err)
        below_top(0, T, [&](uint64_t ja, uint64_t jb) {
            for (uint64_t k = ja; k < jb; k++)
                trees[k].wots.assign(hupsig + k * len * 32, hupsig + (k + 1) * len * 32);
        });
    if (!err)
        tl.report("sign_many");
    if (err) {
        cudaStreamSynchronize(d->stream);
        cudaStreamSynchronize(d->side);
        cudaStreamSynchronize(d->copy);
        for (tree_entry *e : keep) /* what they hold is not known to be whole */
            if (e)
                tree_cache_drop(e);
    }
    for (size_t c = 0; c < made; c++)
        cudaEventDestroy(ev[c]);
    return err;
}

/* The set of the XMSS private state st (its header checked), or null if it is not one. */
static const hbs_xmss_params *xmss_state_params(const uint8_t *st, size_t stlen)
{
    return stlen >= 24 && st[5] == 1 ? hbs_xmss_params_by_oid(st[4], sget32(st)) : nullptr;
}

uint64_t xmss_batch_tree(const uint8_t *st, size_t stlen)
{
    const hbs_xmss_params *p = xmss_state_params(st, stlen);
    return p ? (uint64_t)1 << p->tree_h : 0;
}

int xmss_batch(device_ctx *d, const hbs_leaf_engine *e, const uint8_t *st, size_t stlen,
               uint64_t first, uint8_t *sigs, size_t sb, const uint8_t *const *msgs,
               const size_t *msglens, size_t count, bool with_next, bool *cpu,
               std::vector<xtree> &trees, unsigned *tree_h, size_t *node_n, release_gate &gate,
               sign_timer &tm)
{
    const hbs_xmss_params *p = xmss_state_params(st, stlen);
    if (!p || stlen < 24 + 4 * (size_t)p->n || sget64(st + 8) > first || p->sig_bytes != sb)
        return HBS_ERR_STATE;
    const size_t n = p->n, len = p->len;
    const unsigned H = p->tree_h, D = p->d;
    const uint8_t *sk_seed = st + 24, *sk_prf = st + 24 + n, *pub_seed = st + 24 + 2 * n,
                  *root = st + 24 + 3 * n;
    const uint64_t last = first + count - 1;
    const uint32_t mask = (uint32_t)(((uint64_t)1 << H) - 1);
    /* trees per layer j: first_tree[j] .. last_tree[j] */
    uint64_t tfirst[XMSS_MAX_LAYERS], tlast[XMSS_MAX_LAYERS], leaves = 0;
    for (unsigned j = 0; j < D; j++) {
        const unsigned sh = H * (j + 1);
        tfirst[j] = sh >= 64 ? 0 : first >> sh;
        tlast[j] = sh >= 64 ? 0 : last >> sh;
        leaves += (tlast[j] - tfirst[j] + 1) << H;
    }
    if (!trees_worth_it(H, leaves, count)) {
        *cpu = true;
        return HBS_OK;
    }
    xmss_ctx c;
    hbs_xmss_ctx_init(&c, p, pub_seed, sk_seed);
    *tree_h = H;
    *node_n = n;
    std::vector<size_t> layer_at(D);
    for (unsigned j = 0; j < D; j++) {
        layer_at[j] = trees.size();
        for (uint64_t t = tfirst[j]; t <= tlast[j]; t++) {
            xtree x;
            x.layer = j;
            x.tree = t;
            trees.push_back(x);
        }
    }
    /* the trees the key's traversal state needs at the next index: without them the batch's
     * end has the GPU build the next bottom tree alone, after the batch (1 ms of an XMSS^MT
     * batch of 16,384 on the H200); here they are built beside the batch's own (at the end
     * of the list: they are not signed with) */
    const uint64_t next = first + count;
    if (D > 1 && with_next && (p->h >= 64 || next < ((uint64_t)1 << p->h)))
        for (unsigned j = 0; j < D; j++) {
            const unsigned sh = H * (j + 1);
            const uint64_t t = sh >= 64 ? 0 : next >> sh;
            if (t > tlast[j]) {
                xtree x;
                x.layer = j;
                x.tree = t;
                trees.push_back(x);
            }
        }
    /* the jobs: one per message (bottom), then one per tree below the top */
    size_t nupper = 0;
    std::vector<size_t> upper_at(D, 0);
    for (unsigned j = 1; j < D; j++) {
        upper_at[j] = count + nupper;
        nupper += (size_t)(tlast[j - 1] - tfirst[j - 1] + 1);
    }
    const size_t njobs = count + nupper;
    const size_t a_layer = 0, a_leaf = 4 * njobs, a_tree = (8 * njobs + 7) & ~(size_t)7,
                 a_dig = a_tree + 8 * njobs, total = a_dig + njobs * len;
    const bool fused = p->func == XMSS_FUNC_SHA256 && n == 32 && len <= XF_MAX_LEN &&
                       D <= XF_MAX_D && sb <= XF_MAX_SIG && fuse_enabled();
    /* the messages' r, H_msg and digits, over the pool; the fused path hashes them on the
     * GPU instead (msgs_on_gpu) */
    const bool gpu_msgs = fused && msgs_on_gpu(msglens, count);
    /* (without the digits when the GPU makes them: zeroing them cost the host about 0.1 ms
     * of a batch of 16,384, before the GPU gets its first work) */
    tm.mark("plan");
    std::vector<uint8_t> packed(gpu_msgs ? a_dig : total);
    uint32_t *J_layer = (uint32_t *)(packed.data() + a_layer),
             *J_leaf = (uint32_t *)(packed.data() + a_leaf);
    uint64_t *J_tree = (uint64_t *)(packed.data() + a_tree);
    uint8_t *J_dig = gpu_msgs ? nullptr : packed.data() + a_dig;
    auto job = [&](size_t i) {
        const uint64_t G = first + i;
        if (!gpu_msgs) {
            /* (with the GPU's messages, the pass that copies r writes idx: one pass over
             * the signatures' memory, not two) */
            uint8_t *s = sigs + i * sb, digest[XMSS_MAX_N];
            xmss_put_idx(s, p->idx_bytes, G);
            hbs_xmss_prf_r(&c, s + p->idx_bytes, sk_prf, G);
            hbs_xmss_hash_msg(&c, digest, s + p->idx_bytes, root, G, msgs[i], msglens[i]);
            hbs_xmss_wots_digits(p, J_dig + i * len, digest);
        }
        J_layer[i] = 0;
        J_leaf[i] = (uint32_t)G & mask;
        J_tree[i] = G >> H;
    };
    if (gpu_msgs) /* three stores a message: the pool's wake-up would cost more */
        for (size_t i = 0; i < count; i++)
            job(i);
    else
        par_for(count, job);
    tm.mark("messages");
    int err;
    if (fused)
        err = xmss_fused(d, p, sk_seed, sk_prf, pub_seed, root, trees, tfirst, layer_at, first,
                         count, J_leaf, J_tree, gpu_msgs ? nullptr : J_dig, msgs, msglens,
                         sigs, sb, gate, tm);
    else
        err = xmss_build(e, &c, p, sk_seed, pub_seed, trees);
    tm.mark(fused ? "copies" : "trees");
    if (fused) { /* the signatures are whole */
        hbs_xmss_ctx_wipe(&c);
        return err;
    }
    for (unsigned j = 1; j < D && !err; j++) {
        size_t job = upper_at[j];
        for (size_t k = layer_at[j - 1]; k < layer_at[j - 1] + (tlast[j - 1] - tfirst[j - 1] + 1);
             k++, job++) {
            const xtree &below = trees[k];
            hbs_xmss_wots_digits(p, J_dig + job * len, xnode(below, H, n, H, 0));
            J_layer[job] = j;
            J_leaf[job] = (uint32_t)below.tree & mask;
            J_tree[job] = below.tree >> H;
        }
    }
    std::vector<uint8_t> ots;
    if (!err && njobs) {
        xmss_args x;
        memset(&x, 0, sizeof x);
        memcpy(x.pub_seed, pub_seed, n);
        memcpy(x.sk_seed, sk_seed, n);
        x.n = (uint32_t)n;
        x.padlen = p->padlen;
        x.len = (uint32_t)len;
        ots.resize(njobs * len * n);
        const uint32_t nj = (uint32_t)njobs;
        x256_mid xmid;
        memset(&xmid, 0, sizeof xmid);
        if (n == 32) {
            x256_host_midstate(xmid.prf, 3, pub_seed);
            x256_host_midstate(xmid.keygen, 4, sk_seed);
        }
        err = run_jobs(d, packed.data(), total, ots.size(), ots.data(),
                       [&](uint8_t *dj, uint8_t *dout) {
                           xs_jobs j;
                           j.layer = (const uint32_t *)(dj + a_layer);
                           j.leaf = (const uint32_t *)(dj + a_leaf);
                           j.tree = (const uint64_t *)(dj + a_tree);
                           j.digits = dj + a_dig;
                           const unsigned b = sfs_blocks((uint64_t)nj * len);
                           if (p->func == XMSS_FUNC_SHA256 && n == 32)
                               xmss_wots_sign_sha256<<<b, SFS_THREADS, 0, d->stream>>>(x, xmid, j, nj, dout);
                           else if (p->func == XMSS_FUNC_SHA256)
                               xmss_wots_sign_generic<SF_SHA256><<<b, SFS_THREADS, 0, d->stream>>>(x, j, nj, dout);
                           else if (p->func == XMSS_FUNC_SHA512)
                               xmss_wots_sign_generic<SF_SHA512><<<b, SFS_THREADS, 0, d->stream>>>(x, j, nj, dout);
                           else if (p->func == XMSS_FUNC_SHAKE128)
                               xmss_wots_sign_generic<SF_SHAKE128><<<b, SFS_THREADS, 0, d->stream>>>(x, j, nj, dout);
                           else
                               xmss_wots_sign_generic<SF_SHAKE256><<<b, SFS_THREADS, 0, d->stream>>>(x, j, nj, dout);
                       });
        hbs_memzero(&x, sizeof x);
        hbs_memzero(&xmid, sizeof xmid);
        tm.mark("one-time signatures");
    }
    /* assembly: idx || r || per layer, WOTS+ signature || authentication path (once the
     * reservation is durable) */
    if (!err)
        err = gate.wait();
    if (!err)
        par_for(count, [&](size_t i) {
            const uint64_t G = first + i;
            uint8_t *s = sigs + i * sb + p->idx_bytes + n;
            for (unsigned j = 0; j < D; j++) {
                const uint64_t below = j * H >= 64 ? 0 : G >> (j * H); /* this layer's leaf */
                const uint64_t tree = below >> H;
                const size_t job = j == 0 ? i : upper_at[j] + (size_t)(below - tfirst[j - 1]);
                memcpy(s, ots.data() + job * len * n, len * n);
                xmss_auth(trees[layer_at[j] + (size_t)(tree - tfirst[j])], H, n,
                          (uint32_t)below & mask, s + len * n);
                s += (len + H) * n;
            }
        });
    tm.mark("assembly");
    hbs_xmss_ctx_wipe(&c);
    return err;
}

static const hbs_xmss_params *keygen_set(const hbs_xmss_leaf_job *jobs, size_t njobs, unsigned H)
{
    const hbs_xmss_params *p = hbs_xmss_params_by_oid(jobs[0].mt, jobs[0].oid);
    if (!p || p->func != XMSS_FUNC_SHA256 || jobs[0].n != 32 || p->tree_h != H || H >= 32 ||
        njobs == 0 || njobs > SF_MAX_TREES)
        return nullptr;
    return p;
}

/* The kernels' arguments for key generation's trees (r.dup: their places); the key
 * generation midstate too when secret (the roots' signatures). */
static void keygen_args(xf_args &f, x256_mid &mid, const hbs_xmss_params *p,
                        const hbs_xmss_leaf_job *jobs, unsigned H, const xmss_keygen_run &r,
                        bool secret)
{
    memset(&f, 0, sizeof f);
    memcpy(f.x.pub_seed, jobs[0].pub_seed, 32);
    f.x.n = 32;
    f.x.padlen = p->padlen;
    f.x.len = p->len;
    f.layer = (const uint32_t *)r.dup;
    f.tree = (const uint64_t *)(r.dup + r.a_tree);
    f.h = H;
    memset(&mid, 0, sizeof mid);
    x256_host_midstate(mid.prf, 3, jobs[0].pub_seed);
    if (secret)
        x256_host_midstate(mid.keygen, 4, jobs[0].sk_seed);
}

int xmss_keygen_begin(device_ctx *d, const hbs_xmss_leaf_job *jobs, size_t njobs, unsigned H,
                      xmss_keygen_run *r)
{
    const hbs_xmss_params *p = keygen_set(jobs, njobs, H);
    if (!p)
        return HBS_ERR_UNSUPPORTED;
    const size_t len = p->len, tn = ((size_t)2 << H) - 1, lvp_b = xf_levels_scratch(H, njobs);
    *r = xmss_keygen_run();
    /* each job's root is signed by the next job's leaf when that is its parent tree (a key's
     * trees at one index: layer 0 first), so the key's code need not sign them on the CPU */
    r->nsig = njobs - 1;
    for (size_t k = 0; k + 1 < njobs; k++)
        if (jobs[k + 1].layer != jobs[k].layer + 1 || jobs[k + 1].tree != jobs[k].tree >> H)
            r->nsig = 0;
    const upper_jobs kj(r->nsig, len);
    /* (staged from pageable memory: the copy has its bytes when it returns, where a pinned
     * buffer of the pool could be written over by the next call before the copy runs) */
    r->a_tree = (4 * njobs + 7) & ~(size_t)7;
    const size_t up = r->a_tree + 8 * njobs;
    std::vector<uint8_t> hv(up);
    int err;
    if ((err = dev_buf(d, SFS_F_UP, up, (void **)&r->dup)) ||
        (err = dev_buf(d, SFS_F_NODES, njobs * tn * 32, (void **)&r->dnodes)) ||
        (lvp_b && (err = dev_buf(d, SFS_F_LVPREP, lvp_b, (void **)&r->dlvp))) ||
        (r->nsig && (err = dev_buf(d, SFS_F_JOBS, kj.bytes, (void **)&r->djobs))) ||
        (r->nsig && (err = dev_buf(d, SFS_F_UPPREP, r->nsig * len * 15 * 64 + 64,
                                   (void **)&r->dupp))))
        return err;
    for (size_t k = 0; k < njobs; k++) {
        ((uint32_t *)hv.data())[k] = jobs[k].layer;
        ((uint64_t *)(hv.data() + r->a_tree))[k] = jobs[k].tree;
    }
    /* on the side stream, beside the chains: a few thousand threads that fit on the SMs next
     * to the chains' one wave (H200: on d->stream before them, 0.05 ms more a key) */
    HBS_CUDA(cudaEventRecord(d->fork, d->stream));
    HBS_CUDA(cudaStreamWaitEvent(d->side, d->fork, 0));
    HBS_CUDA(cudaMemcpyAsync(r->dup, hv.data(), up, cudaMemcpyHostToDevice, d->side));
    xf_args f;
    x256_mid mid;
    keygen_args(f, mid, p, jobs, H, *r, false); /* the address-only parts need no secret */
    xf_levels_prep(f, mid, 0, njobs, r->dlvp, d->side);
    if (r->nsig)
        xf_upper_prep<<<sfs_blocks(r->nsig * len * 15), SFS_THREADS, 0, d->side>>>(f, mid, 0, (uint32_t)r->nsig, r->dupp);
    HBS_CUDA(cudaGetLastError());
    HBS_CUDA(cudaEventRecord(d->join, d->side));
    return HBS_OK;
}

int xmss_keygen_end(device_ctx *d, const hbs_xmss_leaf_job *jobs, size_t njobs, unsigned H,
                    const xmss_keygen_run &r, const uint8_t *dleaves, size_t split)
{
    const hbs_xmss_params *p = keygen_set(jobs, njobs, H);
    if (!p)
        return HBS_ERR_UNSUPPORTED;
    const size_t len = p->len, tn = ((size_t)2 << H) - 1, count = (size_t)1 << H;
    const size_t na = split > 0 && split < njobs ? split : njobs;
    if (na < njobs) {
        HBS_CUDA(cudaMemcpy2DAsync(r.dnodes + na * tn * 32, tn * 32, dleaves + na * count * 32,
                                   count * 32, count * 32, njobs - na,
                                   cudaMemcpyDeviceToDevice, d->copy));
        HBS_CUDA(cudaStreamWaitEvent(d->copy, d->join, 0));
    }
    HBS_CUDA(cudaMemcpy2DAsync(r.dnodes, tn * 32, dleaves, count * 32, count * 32, na,
                               cudaMemcpyDeviceToDevice, d->stream));
    HBS_CUDA(cudaStreamWaitEvent(d->stream, d->join, 0)); /* xmss_keygen_begin's work */
    xf_args f;
    x256_mid mid;
    keygen_args(f, mid, p, jobs, H, r, r.nsig > 0);
    if (na < njobs) {
        xf_args g = f;
        xf_levels_build(g, mid, na, njobs, r.dnodes,
                        r.dlvp ? r.dlvp + na * (count - 1) * 24 : nullptr, d->copy);
    }
    xf_levels_build(f, mid, 0, na, r.dnodes, r.dlvp, d->stream);
    if (r.nsig)
        xf_sign_roots(f, mid, p, r.dnodes, r.djobs, upper_jobs(r.nsig, len), 0, r.nsig, r.dupp,
                      d->stream);
    hbs_memzero(&mid, sizeof mid);
    if (na < njobs) { /* d->copy's levels */
        HBS_CUDA(cudaEventRecord(d->fork, d->copy));
        HBS_CUDA(cudaStreamWaitEvent(d->stream, d->fork, 0));
    }
    HBS_CUDA(cudaGetLastError());
    return HBS_OK;
}

int xmss_keygen_back(device_ctx *d, const hbs_xmss_leaf_job *jobs, size_t njobs, unsigned H,
                     const xmss_keygen_run &r, uint8_t *out)
{
    const hbs_xmss_params *p = keygen_set(jobs, njobs, H);
    if (!p)
        return HBS_ERR_UNSUPPORTED;
    const size_t len = p->len, tn = ((size_t)2 << H) - 1, nb = njobs * tn * 32,
                 sb = r.nsig * len * 32;
    const upper_jobs kj(r.nsig, len);
    uint8_t *h;
    int err;
    /* through page-locked memory: from pageable memory the copy back of an XMSS^MT key's
     * two trees (131 KB) took 0.055 ms */
    if ((err = host_buf(d, SFS_F_NODES, nb + sb, (void **)&h)))
        return err;
    HBS_CUDA(cudaMemcpyAsync(h, r.dnodes, nb, cudaMemcpyDeviceToHost, d->stream));
    if (sb)
        HBS_CUDA(cudaMemcpyAsync(h + nb, r.djobs + kj.sig, sb, cudaMemcpyDeviceToHost,
                                 d->stream));
    HBS_CUDA(cudaStreamSynchronize(d->stream));
    memcpy(out, h, nb);
    wots_memo &m = d->keygen_sigs;
    m.clear();
    try {
        m.pub_seed.assign(jobs[0].pub_seed, jobs[0].pub_seed + 32);
        for (size_t k = 0; k < r.nsig; k++) {
            wots_memo::sig s;
            s.layer = jobs[k + 1].layer;
            s.tree = jobs[k + 1].tree;
            s.leaf = (uint32_t)(jobs[k].tree & ((1u << H) - 1));
            s.root.assign(h + (k * tn + tn - 1) * 32, h + (k * tn + tn) * 32);
            s.bytes.assign(h + nb + k * len * 32, h + nb + (k + 1) * len * 32);
            m.sigs.push_back(std::move(s));
        }
    } catch (const std::bad_alloc &) {
        m.clear(); /* (the key's code signs them itself) */
    }
    return HBS_OK;
}

void wots_memo::clear()
{
    for (sig &s : sigs)
        hbs_memzero(s.bytes.data(), s.bytes.size());
    sigs.clear();
    pub_seed.clear();
}

int keygen_wots_sig(device_ctx *d, const hbs_xmss_leaf_job *job, uint32_t leaf,
                    const uint8_t *msg, uint8_t *sig)
{
    std::lock_guard<std::mutex> g(d->lock);
    wots_memo &m = d->keygen_sigs;
    const size_t n = job->n;
    if (m.pub_seed.size() != n || memcmp(m.pub_seed.data(), job->pub_seed, n) != 0)
        return HBS_ERR_UNSUPPORTED;
    for (size_t i = 0; i < m.sigs.size(); i++) {
        wots_memo::sig &s = m.sigs[i];
        if (s.layer == job->layer && s.tree == job->tree && s.leaf == leaf &&
            s.root.size() == n && memcmp(s.root.data(), msg, n) == 0 &&
            s.bytes.size() == (size_t)job->len * n) {
            memcpy(sig, s.bytes.data(), s.bytes.size());
            hbs_memzero(s.bytes.data(), s.bytes.size());
            m.sigs.erase(m.sigs.begin() + (long)i); /* (once: the key keeps it) */
            return HBS_OK;
        }
    }
    return HBS_ERR_UNSUPPORTED;
}

/* XMSS (SHA-256, n = 32): the trees of layers 0 and d - 1 among jobs, when the top layer's
 * is one of them (its root, the key's, names the key's trees); dnodes from
 * xmss_keygen_end, whose work on d->stream comes first. */
void tree_cache_keep_xmss(device_ctx *d, const hbs_xmss_leaf_job *jobs, size_t njobs,
                          const uint8_t *dnodes)
{
    if (!tree_cache_on() || njobs == 0 || njobs > SF_MAX_TREES || !jobs[0].oid)
        return;
    const hbs_xmss_params *p = hbs_xmss_params_by_oid(jobs[0].mt, jobs[0].oid);
    if (!p || p->func != XMSS_FUNC_SHA256 || p->n != 32 || jobs[0].n != 32 ||
        p->tree_h > SFS_MAX_TREE_H)
        return;
    const unsigned H = p->tree_h, D = p->d;
    const size_t tn = ((size_t)2 << H) - 1;
    size_t top = njobs;
    std::vector<uint32_t> layer;
    std::vector<uint64_t> tree;
    std::vector<size_t> which;
    for (size_t k = 0; k < njobs; k++) {
        if (jobs[k].layer == D - 1 && jobs[k].tree == 0)
            top = k;
        if (jobs[k].layer == 0 || jobs[k].layer == D - 1) {
            layer.push_back(jobs[k].layer);
            tree.push_back(jobs[k].tree);
            which.push_back(k);
        }
    }
    if (top == njobs || !tree_fill_take(d, layer, tree, tn * 32)) {
        gpu_clear_error();
        return;
    }
    std::vector<const uint8_t *> src;
    for (size_t i = 0; i < d->fill.e.size(); i++)
        src.push_back(dnodes + which[i] * tn * 32);
    std::array<uint8_t, 32> ps;
    memcpy(ps.data(), jobs[0].pub_seed, 32);
    d->fill.name = [p, ps](const uint8_t *root, uint8_t id[32]) {
        tree_cache_id(id, p, ps.data(), root);
    };
    tree_fill_start(d, src, dnodes + (top * tn + tn - 1) * 32, 32, true);
}

} // namespace hbs_gpu
