/* The one-signature GPU path (src/gpu/latency.cu and the kernel of src/gpu/latency.cuh) on
 * the CPU: every GPU thread a host thread (shim_threads.h), the blocks one after another,
 * the SM count an H100's, so the signature is cut into the same blocks as on that GPU.
 * Each set (or those named: latency_test SLH-DSA-SHA2-128f ...) signs pure and pre-hash,
 * with and without a context, deterministic and hedged ('s' sets: one of these), and must
 * give the CPU's signature byte for byte. What it checks: the kernel's logic (the blocks' cut, shared
 * memory, arrivals, the copy-out), not what only the hardware does (memory ordering,
 * timing). The driver's switches (HBS_GPU_LAT_*) apply, so scripts/gpu-emulate.sh runs it
 * once per path. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "emu_rand.h"
#include "gpu/gpu_internal.h"
#include "hbs/slhdsa.h"

namespace hbs_gpu {
int latency_sign(device_ctx *d, const hbs_slhdsa_params *p, uint8_t *sig, const uint8_t *msg,
                 size_t msglen, const uint8_t *ctx, size_t ctxlen, hbs_prehash ph,
                 const uint8_t *sk, const uint8_t *addrnd);
void latency_release(int ordinal);
} // namespace hbs_gpu


int main(int argc, char **argv)
{
    int failures = 0, done = 0;
    hbs_gpu::device_ctx *d = hbs_gpu::device_by_ordinal(0);
    for (int id = 0; id < HBS_SLHDSA_NUM_PARAMS; id++) {
        const hbs_slhdsa_params *p = hbs_slhdsa_params_get((hbs_slhdsa_id)id);
        bool wanted = argc < 2;
        for (int i = 1; i < argc; i++)
            wanted |= strcmp(argv[i], hbs_slhdsa_name(p)) == 0;
        if (!wanted)
            continue;
        const size_t n = hbs_slhdsa_n(p), sb = hbs_slhdsa_sig_bytes(p);
        uint8_t seed[3 * HBS_SLHDSA_MAX_N], sk[HBS_SLHDSA_MAX_SK_BYTES],
            pk[HBS_SLHDSA_MAX_PK_BYTES], msg[100], ctx[40], rnd[HBS_SLHDSA_MAX_N];
        uint8_t *gpu = (uint8_t *)malloc(sb), *cpu = (uint8_t *)malloc(sb);
        rnd_bytes(seed, 3 * n);
        if (!gpu || !cpu || hbs_slhdsa_keygen_from_seed(p, sk, pk, seed) != 0) {
            printf("FAIL %s: setup\n", hbs_slhdsa_name(p));
            return 1;
        }
        const clock_t t0 = clock();
        /* c: bit 0 hedged, bit 1 pre-hash (SHA2-256) with a context; the 's' sets (minutes
         * each here) sign hedged with pre-hash only: their kernel differs in its cut, not in
         * what the host hashes */
        const char *name = hbs_slhdsa_name(p);
        const bool s_set = name[strlen(name) - 1] == 's';
        int cases = 0;
        for (int c = s_set ? 3 : 0; c < 4; c++, cases++) {
            const size_t mlen = rnd32() % (sizeof msg + 1), clen = c & 2 ? 1 + rnd32() % 40 : 0;
            const hbs_prehash ph = c & 2 ? HBS_PREHASH_SHA2_256 : HBS_PREHASH_NONE;
            rnd_bytes(msg, sizeof msg);
            rnd_bytes(ctx, sizeof ctx);
            rnd_bytes(rnd, n);
            const uint8_t *r = c & 1 ? rnd : nullptr;
            memset(gpu, 0x5a, sb);
            const int rc = hbs_gpu::latency_sign(d, p, gpu, msg, mlen, ctx, clen, ph, sk, r);
            if (hbs_slhdsa_sign_ex(p, cpu, msg, mlen, ctx, clen, ph, sk, r) != 0 || rc != 0) {
                printf("FAIL %s case %d: CPU or emulated GPU signing failed (%d)\n",
                       hbs_slhdsa_name(p), c, rc);
                failures++;
                continue;
            }
            if (memcmp(gpu, cpu, sb) != 0) {
                size_t at = 0;
                while (gpu[at] == cpu[at])
                    at++;
                printf("FAIL %s case %d: differs from the CPU at byte %zu of %zu\n",
                       hbs_slhdsa_name(p), c, at, sb);
                failures++;
            }
            done++;
        }
        printf("%-22s %d signature(s), %.1f s of CPU\n", name, cases,
               (double)(clock() - t0) / CLOCKS_PER_SEC);
        free(gpu);
        free(cpu);
    }
    hbs_gpu::latency_release(0);
    printf("latency_test: %d single signatures, %d differ from the CPU or failed\n", done,
           failures);
    return failures ? 1 : 0;
}
