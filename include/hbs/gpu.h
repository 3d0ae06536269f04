/* SLH-DSA on NVIDIA GPUs (CUDA): key generation, signing and verification in batches.
 *
 * Every function follows hbs.h's conventions. In a build without CUDA, or on a machine
 * without a usable GPU, each returns HBS_ERR_NO_GPU (hbs_gpu_device_count() returns 0).
 * When a CUDA call fails the function returns HBS_ERR_GPU and hbs_gpu_last_error() gives
 * CUDA's message; nothing aborts. Outputs are byte-identical to the CPU functions of
 * hbs/slhdsa.h.
 *
 * Batches are spread over the GPUs in use (all visible ones unless hbs_gpu_use_devices
 * chose a set). Device memory and pinned host buffers are pooled per GPU and reused across
 * calls; calls from several threads are serialised per GPU.
 */
#ifndef HBS_GPU_H
#define HBS_GPU_H

#include "hbs/hbs.h"
#include "hbs/slhdsa.h"
#include "hbs/stateful.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Number of usable CUDA GPUs (0 without CUDA, without a driver, or without a GPU). */
HBS_API int hbs_gpu_device_count(void);

/* The name of GPU `device` ("NVIDIA H200"), NUL-terminated and cut to fit namelen. */
HBS_API HBS_WARN_UNUSED_RESULT int hbs_gpu_device_name(int device, char *name, size_t namelen);

/* The message of the last HBS_ERR_GPU returned in this thread ("" if none). */
HBS_API const char *hbs_gpu_last_error(void);

/* Chooses the GPUs batches are spread over: devices[0..count) (CUDA ordinals), or every
 * visible GPU when count is 0. Process-wide; not to be called while a batch runs. */
HBS_API HBS_WARN_UNUSED_RESULT int hbs_gpu_use_devices(const int *devices, size_t count);

/* The GPUs in use, as CUDA ordinals: up to cap of them into devices (may be NULL when cap
 * is 0); returns how many there are (0 without a GPU). */
HBS_API int hbs_gpu_devices_used(int *devices, size_t cap);

/* Gives back what the library keeps on the GPUs between calls: pooled device memory and
 * pinned host buffers (wiped first, as they may have held secrets), streams, events and
 * captured graphs. Later calls set them up again. For the end of a program (so that leak
 * checkers such as compute-sanitizer see nothing left) or before the caller resets a
 * device; not while another thread is inside the library. Signers (hbs_gpu_signer) are
 * freed by hbs_gpu_signer_free, not here. */
HBS_API void hbs_gpu_release(void);

/* ---- key generation ---------------------------------------------------------------------
 * count keys from seeds + i * 3n (SK.seed || SK.prf || PK.seed each), as
 * hbs_slhdsa_keygen_from_seed: sks + i * 4n, pks + i * 2n. */
HBS_API HBS_WARN_UNUSED_RESULT int hbs_gpu_slhdsa_keygen_many(const hbs_slhdsa_params *p,
                                                              uint8_t *sks, uint8_t *pks,
                                                              const uint8_t *seeds,
                                                              size_t count);

/* ---- signing ----------------------------------------------------------------------------
 * Signs msgs[i] (msglens[i] bytes) into sigs + i * sig_bytes for i < count, as
 * hbs_slhdsa_sign_ex with one context and pre-hash for the whole batch. Keys: nkeys is 1
 * (every message under sks) or count (message i under sks + i * 4n). addrnd is NULL
 * (deterministic) or count * n bytes of randomness (hedged: message i uses addrnd + i * n).
 * On failure every signature is zeroed. */
HBS_API HBS_WARN_UNUSED_RESULT int hbs_gpu_slhdsa_sign_many(const hbs_slhdsa_params *p,
                                                            uint8_t *sigs,
                                                            const uint8_t *const *msgs,
                                                            const size_t *msglens, size_t count,
                                                            const uint8_t *ctx, size_t ctxlen,
                                                            hbs_prehash ph, const uint8_t *sks,
                                                            size_t nkeys,
                                                            const uint8_t *addrnd);

/* As hbs_gpu_slhdsa_sign_many for slh_sign_internal: msgs[i] is M' exactly as given. */
HBS_API HBS_WARN_UNUSED_RESULT int hbs_gpu_slhdsa_sign_internal_many(
    const hbs_slhdsa_params *p, uint8_t *sigs, const uint8_t *const *msgs,
    const size_t *msglens, size_t count, const uint8_t *sks, size_t nkeys,
    const uint8_t *addrnd);

/* One signature with the whole of one GPU working on it (the latency path): all FORS trees
 * and all hypertree layers at once. As hbs_slhdsa_sign_ex. */
HBS_API HBS_WARN_UNUSED_RESULT int hbs_gpu_slhdsa_sign(const hbs_slhdsa_params *p, uint8_t *sig,
                                                       const uint8_t *msg, size_t msglen,
                                                       const uint8_t *ctx, size_t ctxlen,
                                                       hbs_prehash ph, const uint8_t *sk,
                                                       const uint8_t *addrnd);

/* ---- a signer: one key, its top hypertree layer built once on the GPU -------------------
 * Signatures are byte-identical to hbs_gpu_slhdsa_sign_many with nkeys = 1. The top XMSS
 * tree ((2^(h'+1) - 1) * n bytes) stays on the first GPU in use (and is copied to the others
 * on first use). The secret key is checked against its PK.root (HBS_ERR_MALFORMED_KEY). */
typedef struct hbs_gpu_signer hbs_gpu_signer;

HBS_API HBS_WARN_UNUSED_RESULT int hbs_gpu_signer_new(hbs_gpu_signer **out,
                                                      const hbs_slhdsa_params *p,
                                                      const uint8_t *sk);
HBS_API void hbs_gpu_signer_free(hbs_gpu_signer *s);
HBS_API HBS_WARN_UNUSED_RESULT int hbs_gpu_signer_sign_many(const hbs_gpu_signer *s,
                                                            uint8_t *sigs,
                                                            const uint8_t *const *msgs,
                                                            const size_t *msglens,
                                                            size_t count, const uint8_t *ctx,
                                                            size_t ctxlen, hbs_prehash ph,
                                                            const uint8_t *addrnd);

/* ---- verification -----------------------------------------------------------------------
 * Verifies sigs[i] (siglens[i] bytes) over msgs[i], under pks + i * 2n (npks = count) or
 * pks (npks = 1), with one context and pre-hash (HBS_PREHASH_NONE: pure). results[i] gets
 * 0 or HBS_ERR_VERIFY_FAILED (a wrong length is simply invalid). Returns 0 if all are
 * valid, HBS_ERR_VERIFY_FAILED if any is not, or another HBS_ERR_* code. */
HBS_API HBS_WARN_UNUSED_RESULT int hbs_gpu_slhdsa_verify_many(
    const hbs_slhdsa_params *p, int *results, const uint8_t *const *sigs,
    const size_t *siglens, const uint8_t *const *msgs, const size_t *msglens, size_t count,
    const uint8_t *ctx, size_t ctxlen, hbs_prehash ph, const uint8_t *pks, size_t npks);

/* As hbs_gpu_slhdsa_verify_many for slh_verify_internal (msgs[i] is M'). */
HBS_API HBS_WARN_UNUSED_RESULT int hbs_gpu_slhdsa_verify_internal_many(
    const hbs_slhdsa_params *p, int *results, const uint8_t *const *sigs,
    const size_t *siglens, const uint8_t *const *msgs, const size_t *msglens, size_t count,
    const uint8_t *pks, size_t npks);

/* ---- device-resident batches ------------------------------------------------------------
 * For callers whose data already lives on GPU `device` (pointers are device memory there).
 * M' of item i is d_mp[d_moff[i] .. d_moff[i] + d_mlen[i]) (build it as FIPS 205 does:
 * the internal interface's message as given). Keys as above (nkeys/npks 1 or count);
 * signatures and public keys are packed (stride sig_bytes / 2n). d_results[i] gets 0 or
 * HBS_ERR_VERIFY_FAILED. The call returns once the work is done. */
HBS_API HBS_WARN_UNUSED_RESULT int hbs_gpu_slhdsa_sign_device(
    const hbs_slhdsa_params *p, int device, uint8_t *d_sigs, const uint8_t *d_mp,
    const uint64_t *d_moff, const uint32_t *d_mlen, size_t count, const uint8_t *d_sks,
    size_t nkeys, const uint8_t *d_addrnd);
HBS_API HBS_WARN_UNUSED_RESULT int hbs_gpu_slhdsa_verify_device(
    const hbs_slhdsa_params *p, int device, int *d_results, const uint8_t *d_sigs,
    const uint8_t *d_mp, const uint64_t *d_moff, const uint32_t *d_mlen, size_t count,
    const uint8_t *d_pks, size_t npks);

/* Device memory for the device-resident entry points, for callers without CUDA code of
 * their own (and for tests and benchmarks): plain cudaMalloc/cudaFree/cudaMemcpy on GPU
 * `device`. */
HBS_API HBS_WARN_UNUSED_RESULT int hbs_gpu_alloc(int device, void **out, size_t bytes);
HBS_API void hbs_gpu_free(int device, void *p);
HBS_API HBS_WARN_UNUSED_RESULT int hbs_gpu_copy_to(int device, void *dst, const void *src,
                                                   size_t bytes);
HBS_API HBS_WARN_UNUSED_RESULT int hbs_gpu_copy_from(int device, void *dst, const void *src,
                                                     size_t bytes);

/* Page-locked host memory (cudaHostAlloc, portable to every GPU): a batch's output placed in
 * it (hbs_gpu_stateful_sign_many's sigs) is written there by the GPU itself, where other
 * memory takes one more pass through the library's own staging buffer. Free it with
 * hbs_gpu_host_free. HBS_ERR_NO_GPU without a usable GPU (use malloc then). */
HBS_API HBS_WARN_UNUSED_RESULT int hbs_gpu_host_alloc(void **out, size_t bytes);
HBS_API void hbs_gpu_host_free(void *p);

/* ---- stateful keys (LMS/HSS, XMSS/XMSS^MT): key generation --------------------------------
 * hbs_stateful_keygen_ex (hbs/stateful.h) with the leaves of every tree (at least 32 of them)
 * computed on the GPUs in use (a big key's leaves shared among them): same arguments, same contract, and the same public key
 * and key file byte for byte. The CPU still builds the trees and the traversal state from
 * the leaves and writes the file. progress is called as the leaves come in. */
HBS_API HBS_WARN_UNUSED_RESULT int hbs_gpu_stateful_keygen(const char *alg, const char *path,
                                                           unsigned traversal, uint8_t *pk,
                                                           size_t pkcap, size_t *pklen,
                                                           const uint8_t *seed, size_t seedlen,
                                                           hbs_progress_fn progress,
                                                           void *user);

/* ---- stateful signatures (LMS/HSS, XMSS/XMSS^MT): verification in batches ----------------
 * Verifies sigs[i] (siglens[i] bytes) over msgs[i] (msglens[i] bytes) under pks[i]
 * (pklens[i] bytes), or under pks[0] for every item when npks is 1 (else npks is count), for
 * one family; the public keys name the parameter sets, which may differ between items.
 * results[i] gets exactly hbs_stateful_verify's verdict for item i (HBS_OK or
 * HBS_ERR_VERIFY_FAILED: malformed lengths, types and indices are judged on the host as the
 * CPU verifier judges them). Returns HBS_OK if all are valid, HBS_ERR_VERIFY_FAILED if any
 * is not, or another HBS_ERR_* code (results are then all HBS_ERR_VERIFY_FAILED). Work goes
 * to the GPUs in use (a big batch in one part a GPU), on each in chunks whose copies overlap
 * the kernels of the previous one.
 * HBS_GPU_LMS_VERIFY=0 in the environment has LMS/HSS items verified by the CPU verifier
 * inside this call instead (same verdicts). */
HBS_API HBS_WARN_UNUSED_RESULT int hbs_gpu_stateful_verify_many(
    hbs_stateful_family family, int *results, const uint8_t *const *sigs,
    const size_t *siglens, const uint8_t *const *msgs, const size_t *msglens, size_t count,
    const uint8_t *const *pks, const size_t *pklens, size_t npks);

/* Device-resident batch verification for callers whose data already lives on GPU `device`:
 * count items of the one parameter set `alg` (as hbs_stateful_keygen names it). d_sigs
 * holds the signatures back to back, each of the set's signature length; message i is
 * d_mp + d_moff[i], d_mlen[i] bytes; d_pks the public keys back to back (npks = count) or
 * one key for all (npks = 1). d_results[i] (device memory) gets 0 if item i is valid, else
 * HBS_ERR_VERIFY_FAILED; a key or signature naming other types than alg's, or an index
 * outside the key, is invalid. All pointers are device pointers. Returns when the verdicts
 * are written: HBS_OK (whatever the verdicts), HBS_ERR_UNKNOWN_ALGORITHM,
 * HBS_ERR_INVALID_ARGUMENT, HBS_ERR_NO_GPU or HBS_ERR_GPU. */
HBS_API HBS_WARN_UNUSED_RESULT int hbs_gpu_stateful_verify_device(
    const char *alg, int device, int *d_results, const uint8_t *d_sigs, const uint8_t *d_mp,
    const uint64_t *d_moff, const uint32_t *d_mlen, size_t count, const uint8_t *d_pks,
    size_t npks);

/* ---- stateful signatures: signing a batch under one key ------------------------------------
 * Signs msgs[0..count) with the key's next count indices, in order, into sigs (count *
 * hbs_stateful_sig_bytes(key) bytes, packed; sigcap is its size): byte for byte what count
 * calls of hbs_stateful_sign would give. The key file gives up all count indices (written,
 * fsynced, renamed, as hbs_stateful_sign does; with a reserve of more than count at
 * hbs_stateful_open, that many, and the batches that fall within them write nothing) while
 * the GPU signs, and no one-time
 * signature reaches sigs before that is durable (a crash in the call may burn the indices,
 * never hand one out twice). sigs from hbs_gpu_host_alloc spares a copy.
 * The one-time signatures and the trees of the batch's layers are computed on the GPUs in
 * use (a big batch in parts of whole bottom trees, one a GPU); keys whose trees are too tall to build per batch (a tree over 2^16 leaves, or
 * more leaves than 64 per signature) are signed by the CPU code instead, with the same
 * result. On any failure after the reservation, every signature is zeroed and the indices
 * stay used. HBS_ERR_KEY_EXHAUSTED when fewer than count indices are left (nothing changes). */
HBS_API HBS_WARN_UNUSED_RESULT int hbs_gpu_stateful_sign_many(hbs_stateful_key *key,
                                                              uint8_t *sigs, size_t sigcap,
                                                              const uint8_t *const *msgs,
                                                              const size_t *msglens,
                                                              size_t count);

/* ---- stateful signatures: one message each under many keys ------------------------------
 * Signs msgs[i] (msglens[i] bytes) with keys[i]'s next index into sigs[i] (sigcaps[i] bytes),
 * for i < count: byte for byte what hbs_stateful_sign(keys[i], ...) gives, and each key file
 * ends as it would after that call. The keys must be distinct and may be of any families
 * and sets, mixed. Each key's index is set aside first exactly as hbs_stateful_sign does it
 * (its file written, fsynced and renamed when the reservation of hbs_stateful_open is used
 * up; the keys in parallel over the thread pool), and nothing of a signature is computed
 * before that is durable. Then every key's bottom one-time signature and the leaves its
 * traversal state needs for its next index are computed on the GPU, all keys at once (one
 * launch pair per parameter shape); the CPU puts each signature together from the key's
 * cached authentication paths and moves the key on. results[i] gets key i's own outcome,
 * hbs_stateful_sign's error codes (HBS_ERR_KEY_EXHAUSTED, HBS_ERR_IO, ...): a key whose
 * index could not be set aside signs nothing and keeps that index; a failed key's sigs[i] is
 * zeroed. siglens (may be NULL) gets each signature's length, 0 for a failure. Should the
 * GPU fail after the indices are set aside, the CPU computes the same leaves, so the keys
 * still sign and move on. Returns HBS_OK if every key signed, else the first failure in
 * results; HBS_ERR_INVALID_ARGUMENT (a NULL pointer, or one key twice) and HBS_ERR_NO_GPU
 * fail every item with nothing reserved. Many keys' secrets are uploaded to the GPU for the
 * call (as PRF midstates, or seeds) and zeroed there before it returns. */
HBS_API HBS_WARN_UNUSED_RESULT int hbs_gpu_stateful_sign_keys(
    hbs_stateful_key *const *keys, size_t count, uint8_t *const *sigs, const size_t *sigcaps,
    size_t *siglens, const uint8_t *const *msgs, const size_t *msglens, int *results);

#ifdef __cplusplus
}
#endif
#endif
