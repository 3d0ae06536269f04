/* Stateful hash-based signatures (LMS/HSS, XMSS/XMSS^MT) with keys that live in files.
 *
 * A stateful private key is a file that holds its next unused index. Every signature this
 * API returns was made only after the file on disk had advanced past its index (written,
 * fsynced, renamed over the old file, directory fsynced), and the file is locked while a
 * key is open, so no one-time key is ever used twice through this API, even across crashes
 * and between processes. A crash can burn indices (those reserved but not used); it cannot
 * give one out twice. There is deliberately no way to sign from a key held only in memory.
 *
 * Algorithm names are the standards' own: "LMS_SHA256_M32_H10/LMOTS_SHA256_N32_W8", HSS as
 * levels joined by ',' (top first), "XMSS-SHA2_10_256", "XMSSMT-SHA2_20/2_256", ...
 */
#ifndef HBS_STATEFUL_H
#define HBS_STATEFUL_H

#include <stddef.h>
#include <stdint.h>

#include "hbs/hbs.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    HBS_STATEFUL_HSS = 1,  /* LMS and HSS (RFC 8554, SP 800-208) */
    HBS_STATEFUL_XMSS = 2, /* XMSS (RFC 8391, SP 800-208) */
    HBS_STATEFUL_XMSSMT = 3, /* XMSS^MT: its OIDs are a registry of their own */
} hbs_stateful_family;

/* The family of an algorithm name, or HBS_ERR_UNKNOWN_ALGORITHM. */
HBS_API int hbs_stateful_family_of(const char *alg);

/* Largest public key and signature of any stateful set (for buffers). */
#define HBS_STATEFUL_MAX_PK_BYTES 200

typedef struct hbs_stateful_key hbs_stateful_key;

/* Flags of hbs_stateful_open. */
#define HBS_STATEFUL_WAIT 1    /* wait while another signer holds the key (else HBS_ERR_BUSY) */
#define HBS_STATEFUL_NO_SYNC 2 /* benchmarks only: no fsync, so a power failure can roll the
                                  file back and reuse indices. Never for a real key */

/* Generates a key and writes it to a new file at path (mode 0600; an existing file is never
 * overwritten: HBS_ERR_IO). pk receives the public key in the standard encoding (HSS: L ||
 * top LMS public key; XMSS: OID || root || SEED). seed: NULL for fresh randomness, else the
 * scheme's seed (HSS: I || SEED of the top level, 16 + n bytes; XMSS: SK_SEED || SK_PRF ||
 * PUB_SEED, 3n bytes). progress may be NULL; returning nonzero from it cancels cleanly
 * (HBS_ERR_CANCELLED, no file written). */
HBS_API HBS_WARN_UNUSED_RESULT int hbs_stateful_keygen(const char *alg, const char *path,
                                                       uint8_t *pk, size_t pkcap, size_t *pklen,
                                                       const uint8_t *seed, size_t seedlen,
                                                       hbs_progress_fn progress, void *user);

/* hbs_stateful_keygen with a choice of traversal memory, the setting that trades the
 * memory kept with the key (and rewritten with every state update) against the hashing of
 * each signature: for LMS/HSS the cache height c (4..20, default 8: about 2^(c+1) nodes per
 * tree), for XMSS/XMSS^MT the BDS parameter K (2..h', h' - K even, default 6: 2^K - K - 1
 * nodes per tree, about (h' - K) / 2 + 1 leaves per signature). 0 picks the default. */
HBS_API HBS_WARN_UNUSED_RESULT int hbs_stateful_keygen_ex(const char *alg, const char *path,
                                                          unsigned traversal, uint8_t *pk,
                                                          size_t pkcap, size_t *pklen,
                                                          const uint8_t *seed, size_t seedlen,
                                                          hbs_progress_fn progress, void *user);

/* Opens and locks a key file. reserve (>= 1) is how many indices each state update sets
 * aside: 1 writes the file before every signature; N writes it once per N signatures and a
 * crash burns at most N - 1 indices (a batch, hbs_gpu_stateful_sign_many, sets aside its
 * count or N, whichever is more). Errors: HBS_ERR_BUSY, HBS_ERR_STATE (corrupt file,
 * left as it is), HBS_ERR_IO, HBS_ERR_NO_MEMORY. */
HBS_API HBS_WARN_UNUSED_RESULT int hbs_stateful_open(hbs_stateful_key **key, const char *path,
                                                     int flags, uint32_t reserve);

/* Signs msg with the key's next index. The state on disk covers the index before the
 * signature is made. HBS_ERR_KEY_EXHAUSTED when no index is left; HBS_ERR_IO when the state
 * cannot be written (no signature is made then, and the file keeps its old state). */
HBS_API HBS_WARN_UNUSED_RESULT int hbs_stateful_sign(hbs_stateful_key *key, uint8_t *sig,
                                                     size_t sigcap, size_t *siglen,
                                                     const uint8_t *msg, size_t msglen);

HBS_API hbs_stateful_family hbs_stateful_key_family(const hbs_stateful_key *key);
/* The canonical algorithm name into out (NUL-terminated). */
HBS_API HBS_WARN_UNUSED_RESULT int hbs_stateful_key_alg(const hbs_stateful_key *key, char *out,
                                                        size_t outcap);
HBS_API HBS_WARN_UNUSED_RESULT int hbs_stateful_key_public(const hbs_stateful_key *key,
                                                           uint8_t *pk, size_t pkcap,
                                                           size_t *pklen);
HBS_API size_t hbs_stateful_sig_bytes(const hbs_stateful_key *key);
/* The next index a signature will use, the first index this key may not use (smaller than
 * total after a split), the key's size, and what is left (end - next). */
HBS_API uint64_t hbs_stateful_key_index(const hbs_stateful_key *key);
HBS_API uint64_t hbs_stateful_key_end(const hbs_stateful_key *key);
HBS_API uint64_t hbs_stateful_key_total(const hbs_stateful_key *key);
HBS_API uint64_t hbs_stateful_key_remaining(const hbs_stateful_key *key);

/* Moves the last `count` indices of this key into a new key file at new_path (which must
 * not exist), for another signer under the same public key. This key's file gives them up
 * first, durably; then the new file is written. If the second step fails the indices are
 * lost to both, never shared. Choose count as a multiple of the bottom tree's leaves (HSS,
 * XMSS^MT) to hand over whole subtrees. */
HBS_API HBS_WARN_UNUSED_RESULT int hbs_stateful_split(hbs_stateful_key *key,
                                                      const char *new_path, uint64_t count);

/* Unlocks and wipes. Indices reserved but not used stay burned. NULL is fine. */
HBS_API void hbs_stateful_close(hbs_stateful_key *key);

/* Verifies sig over msg under pk for a family (the public key encodes the parameter set).
 * HBS_OK or HBS_ERR_VERIFY_FAILED. */
HBS_API HBS_WARN_UNUSED_RESULT int hbs_stateful_verify(hbs_stateful_family family,
                                                       const uint8_t *pk, size_t pklen,
                                                       const uint8_t *msg, size_t msglen,
                                                       const uint8_t *sig, size_t siglen);

#ifdef __cplusplus
}
#endif
#endif
