/* Device probe: how fast one warp runs the SHA-2 (n = 16) hashes of the one-signature
 * kernel in each SHA-256 code form of hash.cuh, with the SM nearly to itself.
 *
 * The one-signature kernel (latency.cuh) has about one warp per scheduler, so its critical
 * path (a WOTS+ chain, then T_len) is paced by one warp's instruction stream: what counts
 * there is the latency of a compression, not the device's throughput. This measures, per
 * form and for 1 to 8 warps an SM, the cycles one compression takes in
 *   fchain   F along a chain, rounds 0..4 worked out once (thash.cuh's fchain)
 *   F        F from scratch (thash<SHA2, 16, 1>)
 *   T_len    tlen_sha256_n16<35> (10 compressions over 35 values in shared memory)
 * and checks that every form computes the same values.
 *
 * Build and run on the GPU machine:
 *   nvcc -O3 -std=c++17 -arch=sm_90 -I src -I include bench/gpu/sha256_forms.cu -o sha256_forms
 *   ./sha256_forms
 */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#include <algorithm>
#include <vector>

#include "gpu/latency.cuh"

using namespace hbs_gpu;

namespace {

enum { M_FCHAIN, M_F, M_TLEN, M_COUNT };
const char *const mode_name[M_COUNT] = {"fchain", "F", "T_len"};
/* the four shapes, then three of them with SHA_IMAD (additions on the FMA pipe) */
const int forms[] = {SHA_FULL, SHA_COMPACT, SHA_LOOPED, SHA_ROLLED,
                     SHA_FULL | SHA_IMAD, SHA_COMPACT | SHA_IMAD, SHA_LOOPED | SHA_IMAD};
const char *const form_name[] = {"full", "compact", "looped", "rolled",
                                 "full+i", "compact+i", "looped+i"};
enum { FORMS = sizeof forms / sizeof forms[0] };
enum { LEN = 35, W = 4, MAX_THREADS = 256 };

struct probe_args {
    kregs<FAM_SHA2, 16> k;
    uint32_t seed;
    int iters;
    uint32_t *out;
    unsigned long long *cycles;
};

__device__ uint32_t mix(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x7feb352d;
    x ^= x >> 15;
    return x;
}

template <int FORM, int MODE>
__global__ void __launch_bounds__(MAX_THREADS, 4) k_probe(const __grid_constant__ probe_args a)
{
    extern __shared__ uint32_t sh[];
    const uint32_t id = blockIdx.x * blockDim.x + threadIdx.x;
    uint32_t v[W];
    for (int i = 0; i < W; i++)
        v[i] = mix(a.seed + id * 4 + (uint32_t)i);
    adrs ad = {3, 0x123456789abull + id, A_WOTS_HASH, id & 7, id % LEN, 0};
    uint32_t *ends = sh + threadIdx.x * LEN * W;
    if (MODE == M_TLEN)
        for (int i = 0; i < LEN * W; i++)
            ends[i] = mix(id * 977 + (uint32_t)i);
    __syncthreads();
    const long long t0 = clock64();
    if (MODE == M_FCHAIN) {
        fchain<FAM_SHA2, 16, FORM> f;
#pragma unroll 1
        for (int it = 0; it < a.iters; it += 15) {
            ad.c = (uint32_t)(it / 15) % LEN;
            f.start(a.k, ad);
#pragma unroll 1
            for (uint32_t s = 0; s < 15; s++)
                f.step(v, a.k, s);
        }
    } else if (MODE == M_F) {
#pragma unroll 1
        for (int it = 0; it < a.iters; it++) {
            ad.h = (uint32_t)it % 15;
            ad.c = (uint32_t)(it / 15) % LEN;
            thash<FAM_SHA2, 16, 1, FORM>(v, a.k, ad, v);
        }
    } else {
        ad.type = A_WOTS_PK;
#pragma unroll 1
        for (int it = 0; it < a.iters; it += 10) {
            tlen_sha256_n16<LEN, FORM>(v, a.k.s256, ad, ends);
            ends[it / 10 % (LEN * W)] ^= v[0];
        }
    }
    __syncthreads();
    const long long t1 = clock64();
    for (int i = 0; i < W; i++)
        a.out[id * W + i] = v[i];
    if (threadIdx.x == 0)
        a.cycles[blockIdx.x] = (unsigned long long)(t1 - t0);
}

#define CK(x)                                                                                  \
    do {                                                                                       \
        cudaError_t e_ = (x);                                                                  \
        if (e_ != cudaSuccess) {                                                               \
            fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_));       \
            exit(1);                                                                           \
        }                                                                                      \
    } while (0)

typedef void (*kern)(probe_args);

template <int FORM> kern pick(int mode)
{
    return mode == M_FCHAIN ? k_probe<FORM, M_FCHAIN>
           : mode == M_F    ? k_probe<FORM, M_F>
                            : k_probe<FORM, M_TLEN>;
}

kern pick_form(int form, int mode)
{
    switch (form) {
    case SHA_FULL:
        return pick<SHA_FULL>(mode);
    case SHA_COMPACT:
        return pick<SHA_COMPACT>(mode);
    case SHA_LOOPED:
        return pick<SHA_LOOPED>(mode);
    case SHA_FULL | SHA_IMAD:
        return pick<SHA_FULL | SHA_IMAD>(mode);
    case SHA_COMPACT | SHA_IMAD:
        return pick<SHA_COMPACT | SHA_IMAD>(mode);
    case SHA_LOOPED | SHA_IMAD:
        return pick<SHA_LOOPED | SHA_IMAD>(mode);
    default:
        return pick<SHA_ROLLED>(mode);
    }
}

} // namespace

int main(int argc, char **argv)
{
    const int iters = argc > 1 ? atoi(argv[1]) : 600; /* compressions per thread */
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    int clock_khz = 0;
    CK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));
    const int sms = prop.multiProcessorCount;
    printf("%s, %d SMs, %d MHz; %d compressions a thread; one block an SM\n", prop.name, sms,
           clock_khz / 1000, iters);
    probe_args a;
    memset(&a, 0, sizeof a);
    for (int i = 0; i < 8; i++)
        a.k.s256[i] = 0x6a09e667u * (uint32_t)(i + 1) ^ 0x5be0cd19u;
    a.seed = 12345;
    a.iters = iters;
    CK(cudaMalloc(&a.out, (size_t)sms * MAX_THREADS * W * 4));
    CK(cudaMalloc(&a.cycles, (size_t)sms * 8));
    std::vector<uint32_t> out((size_t)sms * MAX_THREADS * W), ref[M_COUNT];
    std::vector<unsigned long long> cyc((size_t)sms);
    const int threads[] = {32, 64, 128, 256};
    int bad = 0;
    printf("%-7s %-9s", "hash", "form");
    for (int t : threads)
        printf(" %6d thr: cyc/compr  Gc/s", t);
    printf("\n");
    for (int mode = 0; mode < M_COUNT; mode++) {
        for (int form = 0; form < FORMS; form++) {
            kern k = pick_form(forms[form], mode);
            const int smem = mode == M_TLEN ? MAX_THREADS * LEN * W * 4 : 0;
            CK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
            printf("%-7s %-9s", mode_name[mode], form_name[form]);
            for (int t : threads) {
                k<<<sms, t, (size_t)(mode == M_TLEN ? t * LEN * W * 4 : 0)>>>(a); /* warm */
                CK(cudaDeviceSynchronize());
                cudaEvent_t e0, e1;
                CK(cudaEventCreate(&e0));
                CK(cudaEventCreate(&e1));
                CK(cudaEventRecord(e0));
                k<<<sms, t, (size_t)(mode == M_TLEN ? t * LEN * W * 4 : 0)>>>(a);
                CK(cudaEventRecord(e1));
                CK(cudaDeviceSynchronize());
                float ms = 0;
                CK(cudaEventElapsedTime(&ms, e0, e1));
                CK(cudaMemcpy(cyc.data(), a.cycles, cyc.size() * 8, cudaMemcpyDeviceToHost));
                CK(cudaMemcpy(out.data(), a.out, out.size() * 4, cudaMemcpyDeviceToHost));
                std::sort(cyc.begin(), cyc.end());
                const double per = (double)cyc[cyc.size() / 2] / iters;
                const double rate = (double)sms * t * iters / (ms * 1e-3) / 1e9;
                printf(" %17.0f %5.2f", per, rate);
                const size_t used = (size_t)sms * t * W;
                if (t == threads[3]) {
                    if (form == 0)
                        ref[mode].assign(out.begin(), out.begin() + (long)used);
                    else if (!std::equal(ref[mode].begin(), ref[mode].end(), out.begin())) {
                        printf("  DIFFERS from full");
                        bad++;
                    }
                }
                CK(cudaEventDestroy(e0));
                CK(cudaEventDestroy(e1));
            }
            printf("\n");
        }
    }
    /* the forms agree; and T_len is checked as SHA-256 by the tests, F and fchain too */
    printf("%s\n", bad ? "FORMS DIFFER" : "every form gives the same values");
    return bad ? 1 : 0;
}
