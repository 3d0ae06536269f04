/* What the emulated GPU build needs beside the verifier: a device count of one, an empty
 * last error, "device memory" that is host memory, and key generation "on the GPU" as the
 * CPU does it (byte-identical by the contract of hbs_gpu_stateful_keygen). */
#include "hbs/gpu.h"
#include "hbs/stateful.h"

#include <stdlib.h>
#include <string.h>

extern "C" int hbs_gpu_device_count(void) { return 1; }
extern "C" const char *hbs_gpu_last_error(void) { return ""; }
extern "C" int hbs_gpu_stateful_keygen(const char *alg, const char *path, unsigned traversal,
                                       uint8_t *pk, size_t pkcap, size_t *pklen,
                                       const uint8_t *seed, size_t seedlen,
                                       hbs_progress_fn progress, void *user)
{
    return hbs_stateful_keygen_ex(alg, path, traversal, pk, pkcap, pklen, seed, seedlen,
                                  progress, user);
}

extern "C" int hbs_gpu_alloc(int device, void **out, size_t bytes)
{
    *out = device == 0 ? malloc(bytes ? bytes : 1) : nullptr;
    return *out ? HBS_OK : HBS_ERR_INVALID_ARGUMENT;
}
extern "C" void hbs_gpu_free(int, void *p) { free(p); }
extern "C" int hbs_gpu_copy_to(int, void *dst, const void *src, size_t bytes)
{
    memcpy(dst, src, bytes);
    return HBS_OK;
}
extern "C" int hbs_gpu_copy_from(int, void *dst, const void *src, size_t bytes)
{
    memcpy(dst, src, bytes);
    return HBS_OK;
}
