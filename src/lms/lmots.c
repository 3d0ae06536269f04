/* LM-OTS: key derivation, chains, signing, candidate public keys, and LMS leaves. */
#include "lms/lmots.h"

#include <stdlib.h>
#include <string.h>

#include "hbs/hbs.h"

/* A chain message: I || u32 q || u16 i || u8 j || tmp (n bytes), RFC 8554 Algorithm 1. The
 * RFC 8554 Appendix A key derivation I || q || i || 0xff || SEED has the same shape, so one
 * buffer serves both. */
#define CH_Q 16
#define CH_I 20
#define CH_J 22
#define CH_TMP 23
#define CH_LEN(n) (23 + (size_t)(n))

/* Leaves computed together by hbs_lms_leaves: 8 leaves of W8 (34 chains) fill 17 calls of 16
 * lanes exactly. */
#define LEAF_BATCH 8

void hbs_lms_hash_many(unsigned hash, size_t n, uint8_t *out, const uint8_t *in, size_t inlen,
                       size_t count)
{
    if (hash == HBS_LMS_HASH_SHAKE) {
        hbs_shake256_many(out, n, in, inlen, count);
    } else if (n == 32) {
        hbs_sha256_many(out, NULL, in, inlen, count);
    } else {
        /* SHA-256/192: full digests into a bounce buffer, then the first n bytes of each. */
        uint8_t tmp[64 * 32];
        for (size_t done = 0; done < count;) {
            size_t k = count - done < 64 ? count - done : 64;
            hbs_sha256_many(tmp, NULL, in + done * inlen, inlen, k);
            for (size_t i = 0; i < k; i++)
                memcpy(out + (done + i) * n, tmp + 32 * i, n);
            done += k;
        }
        hbs_memzero(tmp, sizeof tmp);
    }
}

void hbs_lms_hinit(hbs_lms_hctx *c, unsigned hash, size_t n)
{
    c->hash = hash;
    c->n = n;
    if (hash == HBS_LMS_HASH_SHAKE)
        hbs_shake256_init(&c->shake);
    else
        hbs_sha256_init(&c->sha);
}

void hbs_lms_hupdate(hbs_lms_hctx *c, const uint8_t *in, size_t len)
{
    if (c->hash == HBS_LMS_HASH_SHAKE)
        hbs_keccak_absorb(&c->shake, in, len);
    else
        hbs_sha256_update(&c->sha, in, len);
}

void hbs_lms_hfinal(hbs_lms_hctx *c, uint8_t *out)
{
    if (c->hash == HBS_LMS_HASH_SHAKE) {
        hbs_keccak_squeeze(&c->shake, out, c->n);
    } else {
        uint8_t d[32];
        hbs_sha256_final(&c->sha, d);
        memcpy(out, d, c->n);
        hbs_memzero(d, sizeof d);
    }
    hbs_memzero(c, sizeof *c);
}

/* Copies one n-byte value. The two sizes are spelled out so that the copies in the chain
 * loops compile to a few vector moves instead of calls to memcpy. */
static inline void copy_n(uint8_t *dst, const uint8_t *src, size_t n)
{
    if (n == 32)
        memcpy(dst, src, 32);
    else if (n == 24)
        memcpy(dst, src, 24);
    else
        memcpy(dst, src, n);
}

/* Writes I || q || i || j into a chain message header. */
static void chain_header(uint8_t *m, const uint8_t I[16], uint32_t q, uint16_t i, uint8_t j)
{
    memcpy(m, I, 16);
    hbs_lms_put32(m + CH_Q, q);
    hbs_lms_put16(m + CH_I, i);
    m[CH_J] = j;
}

void hbs_lmots_randomizer(const hbs_lmots_type *o, uint8_t *C, const uint8_t I[16], uint32_t q,
                          const uint8_t *seed)
{
    uint8_t m[CH_LEN(HBS_LMS_MAX_N)];
    chain_header(m, I, q, HBS_LMS_D_RAND, 0xff);
    memcpy(m + CH_TMP, seed, o->n);
    hbs_lms_hash_many(o->hash, o->n, C, m, CH_LEN(o->n), 1);
    hbs_memzero(m, sizeof m);
}

void hbs_lmots_message_hash(const hbs_lmots_type *o, uint8_t *qs, const uint8_t I[16],
                            uint32_t q, const uint8_t *C, const uint8_t *msg, size_t msglen)
{
    hbs_lms_hctx c;
    uint8_t head[22];

    memcpy(head, I, 16);
    hbs_lms_put32(head + 16, q);
    hbs_lms_put16(head + 20, HBS_LMS_D_MESG);
    hbs_lms_hinit(&c, o->hash, o->n);
    hbs_lms_hupdate(&c, head, sizeof head);
    hbs_lms_hupdate(&c, C, o->n);
    if (o->hash == HBS_LMS_HASH_SHA256 && msglen >= HBS_SHA256_BLOCK - 22 - (size_t)o->n) {
        /* Complete the first block, then hash the rest of the message through the batch
         * entry point with that block as its prefix: it runs on SHA-NI where the CPU has it. */
        const size_t fill = HBS_SHA256_BLOCK - 22 - (size_t)o->n;
        uint8_t d[32];
        hbs_sha256_update(&c.sha, msg, fill);
        hbs_sha256_many(d, &c.sha, msg + fill, msglen - fill, 1);
        memcpy(qs, d, o->n);
        hbs_memzero(&c, sizeof c);
    } else {
        if (msglen)
            hbs_lms_hupdate(&c, msg, msglen);
        hbs_lms_hfinal(&c, qs);
    }
}

/* Q and its coefficients with the checksum appended (RFC 8554 section 4.4):
 * a[i] = coef(Q || Cksm(Q), i, w) for i < p. */
void hbs_lmots_coefficients(const hbs_lmots_type *o, uint8_t *a, const uint8_t I[16], uint32_t q,
                            const uint8_t *C, const uint8_t *msg, size_t msglen)
{
    uint8_t qs[HBS_LMS_MAX_N + 2];
    const unsigned w = o->w, per_byte = 8 / w, mask = (1u << w) - 1;
    const size_t u = (size_t)o->n * per_byte;
    uint32_t sum = 0;

    hbs_lmots_message_hash(o, qs, I, q, C, msg, msglen);
    for (size_t i = 0; i < u; i++) {
        unsigned shift = 8 - w * (unsigned)(i % per_byte + 1);
        a[i] = (uint8_t)((qs[i / per_byte] >> shift) & mask);
        sum += mask - a[i];
    }
    sum <<= o->ls;
    hbs_lms_put16(qs + o->n, (uint16_t)sum);
    for (size_t i = u; i < o->p; i++) {
        size_t bit = i * w;
        unsigned shift = 8 - w * (unsigned)(i % per_byte + 1);
        a[i] = (uint8_t)((qs[bit / 8] >> shift) & mask);
    }
}

/* One one-time key's chains for chains_run: chain i goes from vals[i] (hash index j =
 * start[i]) through steps[i] hashes, in place. */
typedef struct {
    const uint8_t *I;
    uint32_t q;
    uint8_t *vals;
    const uint8_t *start, *steps;
    size_t p;
} chain_set;

#define MAX_SETS HBS_LMOTS_VERIFY_BATCH

/* Chains in the hash layer, which keeps them in its lanes across steps (one step: hash the
 * message with its j, put the first n bytes in tmp, j + 1). */
static void lms_chains(unsigned hash, size_t n, uint8_t *msgs, const uint8_t *steps,
                       unsigned steps_all, size_t count)
{
    const hbs_chain_layout lay = {CH_J, 1, CH_TMP, (uint8_t)n};
    if (hash == HBS_LMS_HASH_SHAKE)
        hbs_shake256_chains(msgs, CH_LEN(n), &lay, steps, steps_all, count);
    else
        hbs_sha256_chains(NULL, msgs, CH_LEN(n), &lay, steps, steps_all, count);
}

/* Advances the chains of up to MAX_SETS one-time keys of one hash and n together. Chains go
 * to the hash layer longest first: its lanes take the next chain as one ends, so several
 * keys (the levels of an HSS signature) share the lanes and the short chains fill the tail.
 * The schedule depends only on start/steps, which the signature reveals anyway. */
static void chains_run(unsigned hash, size_t n, const chain_set *sets, size_t nsets)
{
    const size_t len = CH_LEN(n);
    uint8_t *msgs;
    uint16_t order[MAX_SETS * HBS_LMOTS_MAX_P];
    uint8_t steps[MAX_SETS * HBS_LMOTS_MAX_P];
    size_t count[256] = {0}, pos[256], total = 0;

    /* counting sort by steps, descending; an id is set * 512 + chain */
    for (size_t k = 0; k < nsets; k++)
        for (size_t i = 0; i < sets[k].p; i++)
            count[sets[k].steps[i]]++;
    for (size_t s = 256, acc = 0; s-- > 0;) {
        pos[s] = acc;
        acc += count[s];
    }
    for (size_t k = 0; k < nsets; k++)
        for (size_t i = 0; i < sets[k].p; i++)
            order[pos[sets[k].steps[i]]++] = (uint16_t)(k * 512 + i);
    for (size_t k = 0; k < nsets; k++)
        total += sets[k].p;
    if (!(msgs = malloc(total > 0 ? total * len : 1))) {
        /* cannot happen in practice (a few KiB); fall back to one chain at a time */
        for (size_t k = 0; k < nsets; k++)
            for (size_t c = 0; c < sets[k].p; c++) {
                uint8_t m[CH_LEN(HBS_LMS_MAX_N)];
                chain_header(m, sets[k].I, sets[k].q, (uint16_t)c, sets[k].start[c]);
                copy_n(m + CH_TMP, sets[k].vals + c * n, n);
                lms_chains(hash, n, m, &sets[k].steps[c], 0, 1);
                copy_n(sets[k].vals + c * n, m + CH_TMP, n);
                hbs_memzero(m, sizeof m);
            }
        return;
    }
    for (size_t t = 0; t < total; t++) {
        const chain_set *cs = &sets[order[t] / 512];
        const size_t c = order[t] % 512;
        uint8_t *m = msgs + t * len;
        chain_header(m, cs->I, cs->q, (uint16_t)c, cs->start[c]);
        copy_n(m + CH_TMP, cs->vals + c * n, n);
        steps[t] = cs->steps[c];
    }
    lms_chains(hash, n, msgs, steps, 0, total);
    for (size_t t = 0; t < total; t++) {
        const chain_set *cs = &sets[order[t] / 512];
        copy_n(cs->vals + (order[t] % 512) * n, msgs + t * len + CH_TMP, n);
    }
    hbs_memzero(msgs, total * len);
    free(msgs);
}

int hbs_lmots_sign_coefficients(const hbs_lmots_type *o, uint8_t *y, const uint8_t I[16],
                                uint32_t q, const uint8_t *seed, const uint8_t *a)
{
    const size_t n = o->n, len = CH_LEN(n);
    uint8_t zero[HBS_LMOTS_MAX_P];
    uint8_t *m = malloc(o->p * len);
    if (!m)
        return HBS_ERR_NO_MEMORY;
    /* x[i] = H(I || q || i || 0xff || SEED), all p at once, straight into the signature */
    for (size_t i = 0; i < o->p; i++) {
        chain_header(m + i * len, I, q, (uint16_t)i, 0xff);
        memcpy(m + i * len + CH_TMP, seed, n);
    }
    hbs_lms_hash_many(o->hash, n, y, m, len, o->p);
    hbs_memzero(m, o->p * len);
    free(m);
    memset(zero, 0, sizeof zero);
    {
        const chain_set cs = {I, q, y, zero, a, o->p};
        chains_run(o->hash, n, &cs, 1);
    }
    return HBS_OK;
}

int hbs_lmots_sign(const hbs_lmots_type *o, uint8_t *sig, const uint8_t I[16], uint32_t q,
                   const uint8_t *seed, const uint8_t *C, const uint8_t *msg, size_t msglen)
{
    uint8_t a[HBS_LMOTS_MAX_P];
    hbs_lms_put32(sig, o->code);
    memcpy(sig + 4, C, o->n);
    hbs_lmots_coefficients(o, a, I, q, C, msg, msglen);
    return hbs_lmots_sign_coefficients(o, sig + 4 + o->n, I, q, seed, a);
}

void hbs_lmots_verify_begin(hbs_lmots_verify_job *j, const hbs_lmots_type *o,
                            const uint8_t I[16], uint32_t q, const uint8_t *cy,
                            const uint8_t *msg, size_t msglen)
{
    const uint8_t top = (uint8_t)((1u << o->w) - 1);
    j->o = o;
    j->I = I;
    j->q = q;
    hbs_lmots_coefficients(o, j->a, I, q, cy, msg, msglen);
    for (size_t i = 0; i < o->p; i++)
        j->steps[i] = (uint8_t)(top - j->a[i]);
    memcpy(j->kmsg, I, 16);
    hbs_lms_put32(j->kmsg + 16, q);
    hbs_lms_put16(j->kmsg + 20, HBS_LMS_D_PBLC);
    memcpy(j->kmsg + 22, cy + o->n, (size_t)o->p * o->n);
}

void hbs_lmots_verify_end(hbs_lmots_verify_job *jobs, size_t count)
{
    unsigned char done[HBS_LMOTS_VERIFY_BATCH] = {0};
    if (count > HBS_LMOTS_VERIFY_BATCH)
        count = HBS_LMOTS_VERIFY_BATCH;
    /* jobs of one hash and n share the lanes */
    for (size_t first = 0; first < count; first++) {
        chain_set sets[MAX_SETS];
        size_t nsets = 0;
        if (done[first])
            continue;
        for (size_t k = first; k < count; k++) {
            if (done[k] || jobs[k].o->hash != jobs[first].o->hash ||
                jobs[k].o->n != jobs[first].o->n)
                continue;
            done[k] = 1;
            sets[nsets].I = jobs[k].I;
            sets[nsets].q = jobs[k].q;
            sets[nsets].vals = jobs[k].kmsg + 22;
            sets[nsets].start = jobs[k].a;
            sets[nsets].steps = jobs[k].steps;
            sets[nsets].p = jobs[k].o->p;
            nsets++;
        }
        chains_run(jobs[first].o->hash, jobs[first].o->n, sets, nsets);
    }
    for (size_t k = 0; k < count; k++)
        hbs_lms_hash_many(jobs[k].o->hash, jobs[k].o->n, jobs[k].Kc, jobs[k].kmsg,
                          22 + (size_t)jobs[k].o->p * jobs[k].o->n, 1);
}

/* The leaves of one batch (count <= LEAF_BATCH), with scratch from the caller. */
static void leaf_batch(const hbs_lms_type *t, const hbs_lmots_type *o, const uint8_t I[16],
                       const uint8_t *seed, uint32_t first, size_t count, uint8_t *out,
                       uint8_t *msgs, uint8_t *vals, uint8_t *kmsg)
{
    const size_t n = o->n, len = CH_LEN(n), p = o->p, chains = count * p;
    const size_t klen = 22 + p * n;
    const unsigned steps = (1u << o->w) - 1;
    uint8_t kout[LEAF_BATCH * HBS_LMS_MAX_N], tmsg[LEAF_BATCH * (22 + HBS_LMS_MAX_N)];

    for (size_t l = 0; l < count; l++)
        for (size_t i = 0; i < p; i++) {
            uint8_t *m = msgs + (l * p + i) * len;
            chain_header(m, I, first + (uint32_t)l, (uint16_t)i, 0xff);
            memcpy(m + CH_TMP, seed, n);
        }
    hbs_lms_hash_many(o->hash, n, vals, msgs, len, chains);
    /* every chain runs its full length, from j = 0 */
    for (size_t c = 0; c < chains; c++) {
        uint8_t *m = msgs + c * len;
        m[CH_J] = 0;
        copy_n(m + CH_TMP, vals + c * n, n);
    }
    lms_chains(o->hash, n, msgs, NULL, steps, chains);
    for (size_t c = 0; c < chains; c++)
        copy_n(vals + c * n, msgs + c * len + CH_TMP, n);
    for (size_t l = 0; l < count; l++) {
        uint8_t *k = kmsg + l * klen;
        memcpy(k, I, 16);
        hbs_lms_put32(k + 16, first + (uint32_t)l);
        hbs_lms_put16(k + 20, HBS_LMS_D_PBLC);
        memcpy(k + 22, vals + l * p * n, p * n);
    }
    hbs_lms_hash_many(o->hash, n, kout, kmsg, klen, count);
    for (size_t l = 0; l < count; l++) {
        uint8_t *m = tmsg + l * (22 + n);
        memcpy(m, I, 16);
        hbs_lms_put32(m + 16, ((uint32_t)1 << t->h) + first + (uint32_t)l);
        hbs_lms_put16(m + 20, HBS_LMS_D_LEAF);
        memcpy(m + 22, kout + l * n, n);
    }
    hbs_lms_hash_many(t->hash, t->m, out, tmsg, 22 + n, count);
}

int hbs_lms_leaves(const hbs_lms_type *t, const hbs_lmots_type *o, const uint8_t I[16],
                   const uint8_t *seed, uint32_t first, size_t count, uint8_t *out)
{
    const size_t n = o->n, p = o->p, batch = count < LEAF_BATCH ? count : LEAF_BATCH;
    const size_t msgs_len = batch * p * CH_LEN(n), vals_len = batch * p * n;
    const size_t kmsg_len = batch * (22 + p * n);
    uint8_t *mem;
    if (count == 0)
        return HBS_OK;
    mem = malloc(msgs_len + vals_len + kmsg_len);
    if (!mem)
        return HBS_ERR_NO_MEMORY;
    for (size_t done = 0; done < count; done += batch) {
        size_t k = count - done < batch ? count - done : batch;
        leaf_batch(t, o, I, seed, first + (uint32_t)done, k, out + done * n, mem,
                   mem + msgs_len, mem + msgs_len + vals_len);
    }
    hbs_memzero(mem, msgs_len + vals_len + kmsg_len);
    free(mem);
    return HBS_OK;
}

void hbs_lms_nodes(const hbs_lms_type *t, const uint8_t I[16], uint8_t *out,
                   const uint8_t *children, uint32_t first_r, size_t count)
{
    const size_t m = t->m, len = 22 + 2 * m;
    uint8_t buf[32 * (22 + 2 * HBS_LMS_MAX_N)];
    for (size_t done = 0; done < count;) {
        size_t k = count - done < 32 ? count - done : 32;
        for (size_t i = 0; i < k; i++) {
            uint8_t *b = buf + i * len;
            memcpy(b, I, 16);
            hbs_lms_put32(b + 16, first_r + (uint32_t)(done + i));
            hbs_lms_put16(b + 20, HBS_LMS_D_INTR);
            memcpy(b + 22, children + (done + i) * 2 * m, 2 * m);
        }
        hbs_lms_hash_many(t->hash, m, out + done * m, buf, len, k);
        done += k;
    }
}
