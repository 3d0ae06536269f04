/* LM-OTS (RFC 8554 section 4) and the hashing every LMS layer shares. All chains of a
 * one-time key advance together, one batch hash call per step, so a SIMD backend hashes 8 or
 * 16 of them at once. */
#ifndef HBS_LMS_LMOTS_H
#define HBS_LMS_LMOTS_H

#include <stddef.h>
#include <stdint.h>

#include "hash/hash.h"
#include "lms/params.h"

/* Domain separators of RFC 8554, and ours for values derived from SEED (outside the RFC's:
 * the i field 0xfffd / 0xfffe never names a chain, as p <= 265). */
#define HBS_LMS_D_PBLC 0x8080
#define HBS_LMS_D_MESG 0x8181
#define HBS_LMS_D_LEAF 0x8282
#define HBS_LMS_D_INTR 0x8383
#define HBS_LMS_D_RAND 0xfffd /* the randomizer C */

/* n-byte digests (H of the type) of count equal-length messages, densely packed in out. */
void hbs_lms_hash_many(unsigned hash, size_t n, uint8_t *out, const uint8_t *in, size_t inlen,
                       size_t count);

/* An incremental H for the long, variable-length inputs (the message hash). */
typedef struct {
    unsigned hash;
    size_t n;
    hbs_sha256_ctx sha;
    hbs_keccak_ctx shake;
} hbs_lms_hctx;

void hbs_lms_hinit(hbs_lms_hctx *c, unsigned hash, size_t n);
void hbs_lms_hupdate(hbs_lms_hctx *c, const uint8_t *in, size_t len);
void hbs_lms_hfinal(hbs_lms_hctx *c, uint8_t *out); /* n bytes; wipes the context */

/* The randomizer C of a signature at leaf q: H(I || u32 q || u16 0xfffd || u8 0xff || SEED),
 * the same shape as the RFC 8554 Appendix A derivation of x, so C is unpredictable without
 * SEED and signing is deterministic (a resumed key reproduces its signatures exactly). */
void hbs_lmots_randomizer(const hbs_lmots_type *o, uint8_t *C, const uint8_t I[16], uint32_t q,
                          const uint8_t *seed);

/* Q = H(I || u32 q || u16 D_MESG || C || msg), n bytes. */
void hbs_lmots_message_hash(const hbs_lmots_type *o, uint8_t *Q, const uint8_t I[16],
                            uint32_t q, const uint8_t *C, const uint8_t *msg, size_t msglen);

/* Q and its coefficients with the checksum appended (RFC 8554 section 4.4):
 * a[i] = coef(Q || Cksm(Q), i, w) for i < p: the steps of chain i that a signature takes. */
void hbs_lmots_coefficients(const hbs_lmots_type *o, uint8_t *a, const uint8_t I[16], uint32_t q,
                            const uint8_t *C, const uint8_t *msg, size_t msglen);
/* y[0..p-1] of the one-time key at leaf q for coefficients a (p * n bytes). HBS_OK or
 * HBS_ERR_NO_MEMORY. */
int hbs_lmots_sign_coefficients(const hbs_lmots_type *o, uint8_t *y, const uint8_t I[16],
                                uint32_t q, const uint8_t *seed, const uint8_t *a);
/* The LM-OTS signature (u32 type || C || y[0..p-1]) of msg at leaf q with the given C.
 * Returns HBS_OK or HBS_ERR_NO_MEMORY. */
int hbs_lmots_sign(const hbs_lmots_type *o, uint8_t *sig, const uint8_t I[16], uint32_t q,
                   const uint8_t *seed, const uint8_t *C, const uint8_t *msg, size_t msglen);

/* Candidate public keys (RFC 8554 Algorithm 4b) in two phases, so that the chains of several
 * one-time signatures (the levels of an HSS signature) share the hash lanes:
 * verify_begin hashes the message and reads y from cy = C || y[0..p-1] (the type was checked
 * by the caller); verify_end runs the chains of up to HBS_LMOTS_VERIFY_BATCH jobs and leaves
 * each Kc in its job. I must stay valid in between. */
#define HBS_LMOTS_VERIFY_BATCH 4
typedef struct {
    const hbs_lmots_type *o;
    const uint8_t *I;
    uint32_t q;
    uint8_t a[HBS_LMOTS_MAX_P], steps[HBS_LMOTS_MAX_P];
    uint8_t kmsg[22 + HBS_LMOTS_MAX_P * HBS_LMS_MAX_N]; /* I || q || D_PBLC || z[0..p-1] */
    uint8_t Kc[HBS_LMS_MAX_N];
} hbs_lmots_verify_job;

void hbs_lmots_verify_begin(hbs_lmots_verify_job *j, const hbs_lmots_type *o,
                            const uint8_t I[16], uint32_t q, const uint8_t *cy,
                            const uint8_t *msg, size_t msglen);
void hbs_lmots_verify_end(hbs_lmots_verify_job *jobs, size_t count);

/* Leaf nodes T[2^h + r] of LMS tree (I, SEED) for r = first .. first+count-1 (n bytes each):
 * the whole one-time public keys, batched over leaves. Returns HBS_OK or HBS_ERR_NO_MEMORY. */
int hbs_lms_leaves(const hbs_lms_type *t, const hbs_lmots_type *o, const uint8_t I[16],
                   const uint8_t *seed, uint32_t first, size_t count, uint8_t *out);

/* Interior nodes: out[k] = H(I || u32 r || D_INTR || children[2k] || children[2k+1]) with
 * r = first_r + k, for k < count. */
void hbs_lms_nodes(const hbs_lms_type *t, const uint8_t I[16], uint8_t *out,
                   const uint8_t *children, uint32_t first_r, size_t count);

#endif
