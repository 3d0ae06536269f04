// Host emulation of the SLH-DSA kernels: runs the device code (src/gpu/*.cuh) on the CPU,
// thread by thread (a block's threads as real threads when the kernel has barriers), and
// compares key generation, signing (with and without the cached top layer) and
// verification with the CPU library, for every parameter set. It found the first bugs of
// the GPU code on a machine without a GPU; it is not part of the build.
//
//   cmake --build build            # any build: the C library is all it links
//   g++ -std=c++20 -O2 -w -Iinclude -Isrc src/gpu/tools/emulate.cpp build/libhbs.a \
//       -lpthread -o /tmp/emulate
//   /tmp/emulate [set-index|-1 [cached 0|1]]     # HBS_GPU_FORS=split|thread: other FORS paths
//   EMU_G (signatures per warp in verification, default 2), EMU_COUNT (signatures, default 2),
//   EMU_MISALIGN=1 (verify signatures at an odd address)
//
// Slow (the s sets take about 10 s each): one or two signatures per set.
#include <barrier>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <thread>
#include <vector>

struct dim { unsigned x; };
static thread_local dim blockIdx, threadIdx;
static thread_local dim blockDim;
static thread_local std::barrier<> *cur_bar;
#define __device__
#define __global__
#define __forceinline__ inline
#define __constant__
#define __launch_bounds__(x)
static inline uint32_t __funnelshift_r(uint32_t lo, uint32_t hi, unsigned s)
{
    s &= 31;
    uint64_t v = ((uint64_t)hi << 32) | lo;
    return (uint32_t)(v >> s);
}
static inline uint32_t __byte_perm(uint32_t x, uint32_t y, uint32_t sel)
{
    uint8_t b[8];
    for (int i = 0; i < 4; i++) { b[i] = (uint8_t)(x >> (8 * i)); b[4 + i] = (uint8_t)(y >> (8 * i)); }
    uint32_t r = 0;
    for (int i = 0; i < 4; i++) r |= (uint32_t)b[(sel >> (4 * i)) & 7] << (8 * i);
    return r;
}
static inline void __syncthreads() { cur_bar->arrive_and_wait(); }
static inline void __syncwarp(unsigned = 0xffffffffu) { cur_bar->arrive_and_wait(); }
// warp exchanges (blocks of one warp here): write, barrier, read, barrier
static int g_x[1024];
static inline unsigned __ballot_sync(unsigned, int p) { cur_bar->arrive_and_wait(); g_x[threadIdx.x] = p != 0; cur_bar->arrive_and_wait(); unsigned r = 0; unsigned w = threadIdx.x & ~31u; for (unsigned i = 0; i < 32; i++) r |= (unsigned)g_x[w + i] << i; cur_bar->arrive_and_wait(); return r; }
static inline int __shfl_up_sync(unsigned, int v, int off) { cur_bar->arrive_and_wait(); g_x[threadIdx.x] = v; cur_bar->arrive_and_wait(); unsigned l = threadIdx.x & 31; int r = l >= (unsigned)off ? g_x[threadIdx.x - off] : v; cur_bar->arrive_and_wait(); return r; }
static inline int __shfl_sync(unsigned, int v, int src) { cur_bar->arrive_and_wait(); g_x[threadIdx.x] = v; cur_bar->arrive_and_wait(); int r = g_x[(threadIdx.x & ~31u) + src]; cur_bar->arrive_and_wait(); return r; }
static inline int __popc(unsigned v) { return __builtin_popcount(v); }
using std::min; using std::max;
static inline unsigned __activemask() { return 0xffffffffu; }

#define __shared__
namespace hbs_gpu { uint32_t sh[4096]; uint16_t vpool[8192]; }
#include <algorithm>
#include "gpu/slhdsa_kernels.cuh"
#include "gpu/verify_kernels.cuh"


extern "C" {
#include "hbs/slhdsa.h"
#include "slhdsa/params.h"
}
using namespace hbs_gpu;

// Runs fn over a grid; with barriers each block runs as real threads.
static void launch(unsigned grid, unsigned block, bool barriers, const std::function<void()> &fn)
{
    for (unsigned b = 0; b < grid; b++) {
        if (!barriers) {
            for (unsigned t = 0; t < block; t++) {
                blockIdx.x = b; threadIdx.x = t; blockDim.x = block;
                fn();
            }
            continue;
        }
        std::barrier<> bar((std::ptrdiff_t)block);
        std::vector<std::thread> th;
        for (unsigned t = 0; t < block; t++)
            th.emplace_back([&, b, t]() {
                blockIdx.x = b; threadIdx.x = t; blockDim.x = block; cur_bar = &bar;
                fn();
            });
        for (auto &x : th) x.join();
    }
}
static unsigned nb(size_t total, unsigned tpb) { return (unsigned)((total + tpb - 1) / tpb); }

static sp make_sp(const hbs_slhdsa_params *p)
{
    sp P;
    P.fam = p->family == SLHDSA_FAMILY_SHAKE ? FAM_SHAKE : FAM_SHA2;
    P.n = (int)p->n; P.h = (int)p->h; P.d = (int)p->d; P.hp = (int)p->hp; P.a = (int)p->a;
    P.k = (int)p->k; P.m = (int)p->m; P.len = (int)p->len; P.len1 = (int)p->len1;
    P.sig_bytes = (int)p->sig_bytes; P.fors_bytes = (int)p->fors_sig_bytes;
    return P;
}

template <int FAM, int N>
static void reduce(const tree_job *jobs, int njobs, const dkey *keys, uint8_t *leaves, int height)
{
    const int team = std::min(1 << (height - 1), 256);
    const int tpb = std::max(team, 128);
    const int per_block = tpb / team;
    launch(nb(njobs, per_block), tpb, true, [&]() { k_tree_reduce<FAM, N>(jobs, njobs, keys, leaves, height, team); });
}

template <int FAM, int N>
static int run_set(const hbs_slhdsa_params *p, int count, int use_cache)
{
    const sp P = make_sp(p);
    const int n = N, L = P.len;
    std::vector<uint8_t> seeds(count * 3 * n), sks(count * 4 * n), pks(count * 2 * n);
    for (auto &b : seeds) b = (uint8_t)rand();
    // CPU keys
    for (int i = 0; i < count; i++)
        if (hbs_slhdsa_keygen_from_seed(p, &sks[i * 4 * n], &pks[i * 2 * n], &seeds[i * 3 * n])) return 1;
    int bad = 0;
    // --- keygen emulation ---
    {
        std::vector<dkey> keys(count);
        launch(nb(count, 128), 128, false, [&]() { k_prep_keys<FAM, N>(keys.data(), seeds.data(), count, 3 * n, 0, 3 * n); });
        std::vector<tree_job> jobs(count);
        std::vector<uint8_t> roots(count * n);
        const size_t leaves = (size_t)count << P.hp;
        std::vector<uint8_t> chains(leaves * L * n), xl(leaves * n);
        std::vector<uint8_t> nodes(((size_t)2 << P.hp) * n);
        for (int i = 0; i < count; i++) {
            jobs[i] = tree_job{0, (uint32_t)i, (uint32_t)P.d - 1, A_TREE, 0, 0, 0, nullptr, roots.data() + i * n, count == 1 ? nodes.data() : nullptr, nullptr};
        }
        launch(nb(leaves * L, 128), 128, false, [&]() { k_wots_chains<FAM, N>(P, jobs.data(), leaves * L, keys.data(), chains.data()); });
        launch(nb(leaves, 128), 128, false, [&]() { k_wots_pk<FAM, N>(P, jobs.data(), leaves, keys.data(), chains.data(), xl.data()); });
        reduce<FAM, N>(jobs.data(), count, keys.data(), xl.data(), P.hp);
        for (int i = 0; i < count; i++)
            if (memcmp(&roots[i * n], &sks[i * 4 * n + 3 * n], n)) { printf("  keygen %d differs\n", i); bad++; }
    }
    // --- signing emulation (internal interface, hedged for odd i) ---
    std::vector<uint8_t> msgs(count * 40), rnd(count * n);
    for (auto &b : msgs) b = (uint8_t)rand();
    for (auto &b : rnd) b = (uint8_t)rand();
    std::vector<uint64_t> moff(count);
    std::vector<uint32_t> mlen(count);
    for (int i = 0; i < count; i++) { moff[i] = i * 40; mlen[i] = (uint32_t)(i * 7 % 41); }
    const int one = use_cache; // the cached path signs with one key
    const int nkeys = one ? 1 : count;
    std::vector<dkey> keys(nkeys);
    launch(nb(nkeys, 128), 128, false, [&]() { k_prep_keys<FAM, N>(keys.data(), sks.data(), nkeys, 4 * n, 0, 4 * n); });
    std::vector<uint8_t> cache;
    if (use_cache) { // top tree of key 0 with all nodes
        cache.resize(((size_t)2 << P.hp) * n);
        std::vector<tree_job> j1(1);
        std::vector<uint8_t> r(n), ch(((size_t)L << P.hp) * n), xl((size_t)n << P.hp);
        j1[0] = tree_job{0, 0, (uint32_t)P.d - 1, A_TREE, 0, 0, 0, nullptr, r.data(), cache.data(), nullptr};
        size_t lv = (size_t)1 << P.hp;
        launch(nb(lv * L, 128), 128, false, [&]() { k_wots_chains<FAM, N>(P, j1.data(), lv * L, keys.data(), ch.data()); });
        launch(nb(lv, 128), 128, false, [&]() { k_wots_pk<FAM, N>(P, j1.data(), lv, keys.data(), ch.data(), xl.data()); });
        reduce<FAM, N>(j1.data(), 1, keys.data(), xl.data(), P.hp);
        if (memcmp(r.data(), &sks[3 * n], n)) { printf("  cache root differs\n"); bad++; }
    }
    const int nl = use_cache ? P.d - 1 : P.d;
    std::vector<uint8_t> sigs((size_t)count * P.sig_bytes), dig(count * 64), xroots(count * nl * n), froots(count * P.k * n), fpk(count * n);
    std::vector<uint8_t> wsave((size_t)count * nl * L * 16 * n), fleaves(((size_t)count * P.k << P.a) * n);
    std::vector<sig_meta> meta(count);
    std::vector<tree_job> xjobs(count * nl), fjobs(count * P.k);
    launch(nb(count, 64), 64, false, [&]() { k_msg_sign<FAM, N>(P, keys.data(), one, msgs.data(), moff.data(), mlen.data(), rnd.data(), sigs.data(), dig.data(), meta.data(), count); });
    launch(nb(count, 64), 64, false, [&]() { k_make_jobs_sign(P, meta.data(), dig.data(), count, nl, sigs.data(), xroots.data(), froots.data(), wsave.data(), xjobs.data(), fjobs.data()); });
    const size_t nfl = ((size_t)count * P.k) << P.a;
    const char *fors_env = getenv("HBS_GPU_FORS");
    if (P.a <= 9 && fors_env && strcmp(fors_env, "thread") == 0) {
        launch(nb(count * P.k, 128), 128, false, [&]() { k_fors_thread<FAM, N>(P, fjobs.data(), count * P.k, keys.data()); });
    } else if (P.a <= 9 && !(fors_env && strcmp(fors_env, "split") == 0)) {
        const int nt = std::min(1 << P.a, 256);
        launch(count * P.k, nt, true, [&]() { k_fors_tree<FAM, N>(P, fjobs.data(), count * P.k, keys.data()); });
    } else {
        launch(nb(nfl, 128), 128, false, [&]() { k_fors_leaves<FAM, N>(P, fjobs.data(), nfl, keys.data(), fleaves.data()); });
        reduce<FAM, N>(fjobs.data(), count * P.k, keys.data(), fleaves.data(), P.a);
    }
    launch(nb(count, 64), 64, false, [&]() { k_fors_pk<FAM, N>(P, meta.data(), count, keys.data(), froots.data(), fpk.data()); });
    {
        const size_t leaves = ((size_t)count * nl) << P.hp;
        std::vector<uint8_t> chains(leaves * L * n), xl(leaves * n);
        launch(nb(leaves * L, 128), 128, false, [&]() { k_wots_chains<FAM, N>(P, xjobs.data(), leaves * L, keys.data(), chains.data()); });
        launch(nb(leaves, 128), 128, false, [&]() { k_wots_pk<FAM, N>(P, xjobs.data(), leaves, keys.data(), chains.data(), xl.data()); });
        reduce<FAM, N>(xjobs.data(), count * nl, keys.data(), xl.data(), P.hp);
    }
    if (use_cache)
        launch(nb(count * P.hp, 128), 128, false, [&]() { k_top_auth(P, meta.data(), count, cache.data(), sigs.data()); });
    const size_t nw = (size_t)count * P.d * L;
    launch(nb(nw, 128), 128, false, [&]() { k_wots_sign<FAM, N>(P, meta.data(), nw, keys.data(), fpk.data(), xroots.data(), wsave.data(), nl, sigs.data()); });
    std::vector<uint8_t> cpu(P.sig_bytes);
    for (int i = 0; i < count; i++) {
        const uint8_t *sk = &sks[(one ? 0 : i) * 4 * n];
        hbs_slhdsa_sign_internal(p, cpu.data(), &msgs[moff[i]], mlen[i], sk, &rnd[i * n]);
        if (memcmp(cpu.data(), &sigs[(size_t)i * P.sig_bytes], P.sig_bytes)) {
            size_t at = 0;
            while (cpu[at] == sigs[(size_t)i * P.sig_bytes + at]) at++;
            printf("  sig %d differs at byte %zu (R=%d fors<%d)\n", i, at, n, n + P.fors_bytes);
            for (int f = 0; f < P.k; f++) {
                size_t o = n + (size_t)f * (P.a + 1) * n;
                int dsk = memcmp(&cpu[o], &sigs[(size_t)i * P.sig_bytes + o], n) != 0;
                int dau = memcmp(&cpu[o + n], &sigs[(size_t)i * P.sig_bytes + o + n], (size_t)P.a * n) != 0;
                if (dsk || dau) printf("   fors tree %d: sk %d auth %d\n", f, dsk, dau);
            }
            size_t ho = n + P.fors_bytes;
            int dht = memcmp(&cpu[ho], &sigs[(size_t)i * P.sig_bytes + ho], P.sig_bytes - ho) != 0;
            printf("   ht differs: %d\n", dht);
            bad++;
        }
    }
    // --- verification emulation: originals valid, a flipped copy invalid ---
    std::vector<uint8_t> vs(sigs);
    vs[(size_t)1 * P.sig_bytes + P.sig_bytes - 5] ^= 1;
    std::vector<dkey> vkeys(nkeys);
    launch(nb(nkeys, 128), 128, false, [&]() { k_prep_keys<FAM, N>(vkeys.data(), pks.data(), nkeys, 2 * n, 2 * n, 2 * n); });
    std::vector<sig_meta> vmeta(count);
    std::vector<uint8_t> vdig(count * 64);
    launch(nb(count, 64), 64, false, [&]() { k_msg_verify<FAM, N>(P, vkeys.data(), one, msgs.data(), moff.data(), mlen.data(), vs.data(), vdig.data(), vmeta.data(), count); });
    const int G = getenv("EMU_G") ? atoi(getenv("EMU_G")) : 2;
    std::vector<uint8_t> scr((size_t)count * std::max(P.k, L) * n);
    std::vector<int> res(count, 7);
    std::vector<uint8_t> vs1(vs.size() + 1); /* misaligned copy when EMU_MISALIGN */
    const uint8_t *vsp = vs.data();
    if (getenv("EMU_MISALIGN")) { memcpy(vs1.data() + 1, vs.data(), vs.size()); vsp = vs1.data() + 1; }
    launch(nb(count, G), 32, true, [&]() { k_verify_pool<FAM, N>(P, vmeta.data(), vdig.data(), count, vkeys.data(), vsp, scr.data(), res.data(), G); });
    for (int i = 0; i < count; i++) {
        int want = i == 1 ? HBS_ERR_VERIFY_FAILED : 0;
        if (res[i] != want) { printf("  verify %d: %d, want %d\n", i, res[i], want); bad++; }
    }
    return bad;
}

int main(int argc, char **argv)
{
    int only = argc > 1 ? atoi(argv[1]) : -1;
    int cache = argc > 2 ? atoi(argv[2]) : 0;
    int total_bad = 0;
    for (int id = 0; id < HBS_SLHDSA_NUM_PARAMS; id++) {
        if (only >= 0 && id != only) continue;
        const hbs_slhdsa_params *p = hbs_slhdsa_params_get((hbs_slhdsa_id)id);
        const int count = getenv("EMU_COUNT") ? atoi(getenv("EMU_COUNT")) : 2;
        int bad;
        switch ((p->family == SLHDSA_FAMILY_SHAKE) * 3 + (p->n - 16) / 8) {
        case 0: bad = run_set<FAM_SHA2, 16>(p, count, cache); break;
        case 1: bad = run_set<FAM_SHA2, 24>(p, count, cache); break;
        case 2: bad = run_set<FAM_SHA2, 32>(p, count, cache); break;
        case 3: bad = run_set<FAM_SHAKE, 16>(p, count, cache); break;
        case 4: bad = run_set<FAM_SHAKE, 24>(p, count, cache); break;
        default: bad = run_set<FAM_SHAKE, 32>(p, count, cache); break;
        }
        printf("%s: %s\n", hbs_slhdsa_name(p), bad ? "FAIL" : "ok");
        fflush(stdout);
        total_bad += bad;
    }
    return total_bad != 0;
}
