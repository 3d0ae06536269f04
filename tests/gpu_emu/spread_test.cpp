/* Checks of src/gpu/spread.h on the emulated GPUs (scripts/gpu-emulate.sh builds and runs
 * it with HBS_EMU_DEVICES=3): how batches are cut into parts, and the leaf engine that
 * spreads key generation, whose leaves must land where one GPU would have put them. */
#include "gpu/gpu_internal.h"
#include "gpu/spread.h"

#include <stdio.h>

#include <atomic>
#include <set>

using namespace hbs_gpu;

static int failures = 0;
#define EXPECT(c)                                                                        \
    do {                                                                                 \
        if (!(c) && failures++ < 10)                                                     \
            fprintf(stderr, "spread_test:%d: %s\n", __LINE__, #c);                       \
    } while (0)

static void check_plans()
{
    for (size_t count = 0; count <= 120; count++)
        for (size_t nd = 1; nd <= 5; nd++)
            for (size_t min = 1; min <= 9; min += 4)
                for (size_t align = 1; align <= 9; align += 2) {
                    const std::vector<part> p = plan_parts(count, nd, min, align);
                    EXPECT(count == 0 ? p.empty() : !p.empty());
                    EXPECT(p.size() <= nd);
                    size_t at = 0, lo = SIZE_MAX, hi = 0;
                    for (size_t k = 0; k < p.size(); k++) {
                        EXPECT(p[k].start == at && p[k].count > 0);
                        EXPECT(k == 0 || p[k].start % align == 0);
                        EXPECT(p.size() == 1 || p[k].count >= min);
                        at += p[k].count;
                        lo = std::min(lo, p[k].count);
                        hi = std::max(hi, p[k].count);
                    }
                    EXPECT(at == count);
                    /* balanced: parts differ by a unit at most, and the last may be a unit short */
                    EXPECT(p.size() < 2 || hi - lo < 2 * align);
                    /* as many parts as the sizes allow */
                    const size_t units = (count + align - 1) / align, more = p.size() + 1;
                    if (count && more <= std::min(nd, units)) {
                        bool fits = true;
                        for (size_t i = 0, at = 0; i < more; i++) {
                            const size_t end = i + 1 == more ? count : (i + 1) * units / more * align;
                            fits = fits && end - at >= min;
                            at = end;
                        }
                        EXPECT(!fits);
                    }
                }
}

/* A leaf's bytes as any engine must give them: a function of its tree and index only. */
static void fake_leaf(uint8_t *out, size_t n, const hbs_xmss_leaf_job *j, uint32_t i)
{
    for (size_t b = 0; b < n; b++)
        out[b] = (uint8_t)(i * 131 + j->layer * 17 + j->tree * 7 + b);
}

static std::atomic<unsigned> used_mask{0};
static std::atomic<int> fail_on{-1};

static int fake_xmss(void *user, const hbs_xmss_leaf_job *jobs, size_t njobs, uint32_t first,
                     size_t count, uint8_t *out)
{
    device_ctx *d = (device_ctx *)user;
    used_mask |= 1u << d->ordinal;
    if (d->ordinal == fail_on)
        return HBS_ERR_GPU;
    for (size_t k = 0; k < njobs; k++)
        for (size_t i = 0; i < count; i++)
            fake_leaf(out + (k * count + i) * jobs[0].n, jobs[0].n, &jobs[k], first + (uint32_t)i);
    return HBS_OK;
}

static int fake_lms(void *user, const hbs_lms_leaf_job *j, uint32_t first, size_t count,
                    uint8_t *out)
{
    device_ctx *d = (device_ctx *)user;
    used_mask |= 1u << d->ordinal;
    for (size_t i = 0; i < count; i++)
        for (size_t b = 0; b < j->n; b++)
            out[i * j->n + b] = (uint8_t)((first + i) * 29 + b);
    return HBS_OK;
}

static void check_engine()
{
    const size_t nd = devices_in_use().size();
    EXPECT(nd == 3);
    uint8_t seed[32] = {0};
    for (size_t min_part : {(size_t)1, (size_t)64, (size_t)100000}) {
        spread_engine s = {fake_lms, fake_xmss, min_part};
        hbs_leaf_engine e;
        EXPECT(spread_leaf_engine(&e, &s, 32, 1000) == HBS_OK);
        EXPECT(e.slice_leaves == 1000 * nd);
        for (size_t njobs = 1; njobs <= 3; njobs++)
            for (size_t count : {(size_t)1, (size_t)2, (size_t)7, (size_t)300}) {
                hbs_xmss_leaf_job jobs[3];
                for (size_t k = 0; k < 3; k++) {
                    jobs[k] = hbs_xmss_leaf_job();
                    jobs[k].n = 24;
                    jobs[k].pub_seed = jobs[k].sk_seed = seed;
                    jobs[k].layer = (uint32_t)k;
                    jobs[k].tree = 5 - k;
                }
                const uint32_t first = 40;
                std::vector<uint8_t> got(njobs * count * 24, 0xee), want(got.size());
                used_mask = 0;
                EXPECT(e.xmss_leaves(e.user, jobs, njobs, first, count, got.data()) == HBS_OK);
                for (size_t k = 0; k < njobs; k++)
                    for (size_t i = 0; i < count; i++)
                        fake_leaf(want.data() + (k * count + i) * 24, 24, &jobs[k],
                                  first + (uint32_t)i);
                EXPECT(got == want);
                const size_t parts = plan_parts(count, nd, (min_part + njobs - 1) / njobs, 1).size();
                EXPECT(__builtin_popcount(used_mask) == (int)parts);
            }
        hbs_lms_leaf_job lj = hbs_lms_leaf_job();
        lj.n = 32;
        std::vector<uint8_t> got(100 * 32), want(got.size());
        EXPECT(e.lms_leaves(e.user, &lj, 9, 100, got.data()) == HBS_OK);
        EXPECT(fake_lms(devices_in_use()[0], &lj, 9, 100, want.data()) == HBS_OK && got == want);
    }
    /* a failing GPU fails the call */
    spread_engine s = {fake_lms, fake_xmss, 1};
    hbs_leaf_engine e;
    EXPECT(spread_leaf_engine(&e, &s, 32, 1000) == HBS_OK);
    hbs_xmss_leaf_job j = hbs_xmss_leaf_job();
    j.n = 32;
    std::vector<uint8_t> out(90 * 32);
    fail_on = 2;
    EXPECT(e.xmss_leaves(e.user, &j, 1, 0, 90, out.data()) == HBS_ERR_GPU);
    fail_on = -1;
}

static void check_run_parts()
{
    std::vector<device_ctx *> &g = devices_in_use();
    const std::vector<part> p = plan_parts(30, g.size(), 1, 1);
    std::vector<int> seen(30, 0);
    std::set<int> gpus;
    std::mutex m;
    int rc = run_parts(g, p, [&](device_ctx *d, const part &q, size_t k) -> int {
        std::lock_guard<std::mutex> l(m);
        gpus.insert(d->ordinal);
        EXPECT(d == g[k]);
        for (size_t i = q.start; i < q.start + q.count; i++)
            seen[i]++;
        return k == 2 ? -7 : k == 1 ? -5 : 0;
    });
    EXPECT(rc == -5); /* the first error by part order */
    EXPECT(gpus.size() == 3);
    for (int v : seen)
        EXPECT(v == 1);
}

int main()
{
    check_plans();
    check_engine();
    check_run_parts();
    if (failures == 0)
        printf("spread_test: plans, the spread leaf engine and run_parts: ok\n");
    return failures ? 1 : 0;
}
