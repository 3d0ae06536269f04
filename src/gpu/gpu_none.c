/* The GPU API in a build without CUDA: every call says there is no GPU. The build leaves
 * this file out when it compiles the CUDA sources. */
#include <string.h>

#include "core/leaf_engine.h"
#include "hbs/gpu.h"

int hbs_gpu_device_count(void) { return 0; }

int hbs_gpu_device_name(int device, char *name, size_t namelen)
{
    (void)device;
    if (name && namelen)
        name[0] = 0;
    return HBS_ERR_NO_GPU;
}

const char *hbs_gpu_last_error(void) { return ""; }

int hbs_gpu_devices_used(int *devices, size_t cap)
{
    (void)devices;
    (void)cap;
    return 0;
}

int hbs_gpu_use_devices(const int *devices, size_t count)
{
    (void)devices;
    (void)count;
    return HBS_ERR_NO_GPU;
}

int hbs_gpu_slhdsa_keygen_many(const hbs_slhdsa_params *p, uint8_t *sks, uint8_t *pks,
                               const uint8_t *seeds, size_t count)
{
    (void)p;
    (void)sks;
    (void)pks;
    (void)seeds;
    (void)count;
    return HBS_ERR_NO_GPU;
}

/* Signing outputs are zeroed on failure, as everywhere in the library. */
static int no_gpu_sigs(const hbs_slhdsa_params *p, uint8_t *sigs, size_t count)
{
    if (p && sigs && count)
        memset(sigs, 0, count * hbs_slhdsa_sig_bytes(p));
    return HBS_ERR_NO_GPU;
}

int hbs_gpu_slhdsa_sign_many(const hbs_slhdsa_params *p, uint8_t *sigs,
                             const uint8_t *const *msgs, const size_t *msglens, size_t count,
                             const uint8_t *ctx, size_t ctxlen, hbs_prehash ph,
                             const uint8_t *sks, size_t nkeys, const uint8_t *addrnd)
{
    (void)msgs;
    (void)msglens;
    (void)ctx;
    (void)ctxlen;
    (void)ph;
    (void)sks;
    (void)nkeys;
    (void)addrnd;
    return no_gpu_sigs(p, sigs, count);
}

int hbs_gpu_slhdsa_sign_internal_many(const hbs_slhdsa_params *p, uint8_t *sigs,
                                      const uint8_t *const *msgs, const size_t *msglens,
                                      size_t count, const uint8_t *sks, size_t nkeys,
                                      const uint8_t *addrnd)
{
    (void)msgs;
    (void)msglens;
    (void)sks;
    (void)nkeys;
    (void)addrnd;
    return no_gpu_sigs(p, sigs, count);
}

int hbs_gpu_slhdsa_sign(const hbs_slhdsa_params *p, uint8_t *sig, const uint8_t *msg,
                        size_t msglen, const uint8_t *ctx, size_t ctxlen, hbs_prehash ph,
                        const uint8_t *sk, const uint8_t *addrnd)
{
    (void)msg;
    (void)msglen;
    (void)ctx;
    (void)ctxlen;
    (void)ph;
    (void)sk;
    (void)addrnd;
    return no_gpu_sigs(p, sig, 1);
}

int hbs_gpu_signer_new(hbs_gpu_signer **out, const hbs_slhdsa_params *p, const uint8_t *sk)
{
    (void)p;
    (void)sk;
    if (out)
        *out = NULL;
    return HBS_ERR_NO_GPU;
}

void hbs_gpu_signer_free(hbs_gpu_signer *s) { (void)s; }

int hbs_gpu_signer_sign_many(const hbs_gpu_signer *s, uint8_t *sigs, const uint8_t *const *msgs,
                             const size_t *msglens, size_t count, const uint8_t *ctx,
                             size_t ctxlen, hbs_prehash ph, const uint8_t *addrnd)
{
    (void)s;
    (void)sigs;
    (void)msgs;
    (void)msglens;
    (void)count;
    (void)ctx;
    (void)ctxlen;
    (void)ph;
    (void)addrnd;
    return HBS_ERR_NO_GPU;
}

int hbs_gpu_slhdsa_verify_many(const hbs_slhdsa_params *p, int *results,
                               const uint8_t *const *sigs, const size_t *siglens,
                               const uint8_t *const *msgs, const size_t *msglens, size_t count,
                               const uint8_t *ctx, size_t ctxlen, hbs_prehash ph,
                               const uint8_t *pks, size_t npks)
{
    (void)p;
    (void)results;
    (void)sigs;
    (void)siglens;
    (void)msgs;
    (void)msglens;
    (void)count;
    (void)ctx;
    (void)ctxlen;
    (void)ph;
    (void)pks;
    (void)npks;
    return HBS_ERR_NO_GPU;
}

int hbs_gpu_slhdsa_verify_internal_many(const hbs_slhdsa_params *p, int *results,
                                        const uint8_t *const *sigs, const size_t *siglens,
                                        const uint8_t *const *msgs, const size_t *msglens,
                                        size_t count, const uint8_t *pks, size_t npks)
{
    (void)p;
    (void)results;
    (void)sigs;
    (void)siglens;
    (void)msgs;
    (void)msglens;
    (void)count;
    (void)pks;
    (void)npks;
    return HBS_ERR_NO_GPU;
}

int hbs_gpu_slhdsa_sign_device(const hbs_slhdsa_params *p, int device, uint8_t *d_sigs,
                               const uint8_t *d_mp, const uint64_t *d_moff,
                               const uint32_t *d_mlen, size_t count, const uint8_t *d_sks,
                               size_t nkeys, const uint8_t *d_addrnd)
{
    (void)p;
    (void)device;
    (void)d_sigs;
    (void)d_mp;
    (void)d_moff;
    (void)d_mlen;
    (void)count;
    (void)d_sks;
    (void)nkeys;
    (void)d_addrnd;
    return HBS_ERR_NO_GPU;
}

int hbs_gpu_slhdsa_verify_device(const hbs_slhdsa_params *p, int device, int *d_results,
                                 const uint8_t *d_sigs, const uint8_t *d_mp,
                                 const uint64_t *d_moff, const uint32_t *d_mlen, size_t count,
                                 const uint8_t *d_pks, size_t npks)
{
    (void)p;
    (void)device;
    (void)d_results;
    (void)d_sigs;
    (void)d_mp;
    (void)d_moff;
    (void)d_mlen;
    (void)count;
    (void)d_pks;
    (void)npks;
    return HBS_ERR_NO_GPU;
}

int hbs_gpu_alloc(int device, void **out, size_t bytes)
{
    (void)device;
    (void)bytes;
    if (out)
        *out = NULL;
    return HBS_ERR_NO_GPU;
}

void hbs_gpu_release(void) {}

int hbs_gpu_host_alloc(void **out, size_t bytes)
{
    (void)bytes;
    if (out)
        *out = NULL;
    return HBS_ERR_NO_GPU;
}

void hbs_gpu_host_free(void *p) { (void)p; }

void hbs_gpu_free(int device, void *p)
{
    (void)device;
    (void)p;
}

int hbs_gpu_copy_to(int device, void *dst, const void *src, size_t bytes)
{
    (void)device;
    (void)dst;
    (void)src;
    (void)bytes;
    return HBS_ERR_NO_GPU;
}

int hbs_gpu_copy_from(int device, void *dst, const void *src, size_t bytes)
{
    (void)device;
    (void)dst;
    (void)src;
    (void)bytes;
    return HBS_ERR_NO_GPU;
}

int hbs_gpu_stateful_keygen(const char *alg, const char *path, unsigned traversal, uint8_t *pk,
                            size_t pkcap, size_t *pklen, const uint8_t *seed, size_t seedlen,
                            hbs_progress_fn progress, void *user)
{
    (void)alg;
    (void)path;
    (void)traversal;
    (void)pk;
    (void)pkcap;
    (void)seed;
    (void)seedlen;
    (void)progress;
    (void)user;
    if (pklen)
        *pklen = 0;
    return HBS_ERR_NO_GPU;
}

int hbs_gpu_leaf_engine(hbs_leaf_engine *e)
{
    if (e)
        memset(e, 0, sizeof *e);
    return HBS_ERR_NO_GPU;
}

int hbs_gpu_stateful_verify_many(hbs_stateful_family family, int *results,
                                 const uint8_t *const *sigs, const size_t *siglens,
                                 const uint8_t *const *msgs, const size_t *msglens, size_t count,
                                 const uint8_t *const *pks, const size_t *pklens, size_t npks)
{
    (void)family;
    (void)sigs;
    (void)siglens;
    (void)msgs;
    (void)msglens;
    (void)pks;
    (void)pklens;
    (void)npks;
    for (size_t i = 0; results && i < count; i++)
        results[i] = HBS_ERR_VERIFY_FAILED;
    return HBS_ERR_NO_GPU;
}

/* No index is reserved: the key is left exactly as it was. */
int hbs_gpu_stateful_sign_many(hbs_stateful_key *key, uint8_t *sigs, size_t sigcap,
                               const uint8_t *const *msgs, const size_t *msglens, size_t count)
{
    (void)key;
    (void)msgs;
    (void)msglens;
    (void)count;
    if (sigs)
        memset(sigs, 0, sigcap);
    return HBS_ERR_NO_GPU;
}

/* Nothing reserved, nothing signed. */
int hbs_gpu_stateful_sign_keys(hbs_stateful_key *const *keys, size_t count, uint8_t *const *sigs,
                               const size_t *sigcaps, size_t *siglens,
                               const uint8_t *const *msgs, const size_t *msglens, int *results)
{
    (void)keys;
    (void)msgs;
    (void)msglens;
    for (size_t i = 0; i < count; i++) {
        if (results)
            results[i] = HBS_ERR_NO_GPU;
        if (siglens)
            siglens[i] = 0;
        if (sigs && sigs[i] && sigcaps)
            memset(sigs[i], 0, sigcaps[i]);
    }
    return count ? HBS_ERR_NO_GPU : HBS_OK;
}

int hbs_gpu_stateful_verify_device(const char *alg, int device, int *d_results,
                                   const uint8_t *d_sigs, const uint8_t *d_mp,
                                   const uint64_t *d_moff, const uint32_t *d_mlen, size_t count,
                                   const uint8_t *d_pks, size_t npks)
{
    (void)alg;
    (void)device;
    (void)d_results;
    (void)d_sigs;
    (void)d_mp;
    (void)d_moff;
    (void)d_mlen;
    (void)count;
    (void)d_pks;
    (void)npks;
    return HBS_ERR_NO_GPU;
}
