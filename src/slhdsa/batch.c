/* Batches of signatures: one signature per thread. A signature is ~10^5..10^6 hashes,
 * far above the cost of a task, and inside each one the hash layer still gets wide batches. */
#include <stdatomic.h>
#include <string.h>

#include "common/pool.h"
#include "hbs/slhdsa.h"
#include "slhdsa/params.h"

typedef struct {
    const hbs_slhdsa_signer *s;
    uint8_t *sigs;
    const uint8_t *const *msgs;
    const size_t *msglens;
    const uint8_t *ctx;
    size_t ctxlen;
    hbs_prehash ph;
    const uint8_t *addrnd;
    atomic_int err;
} sign_batch;

static void sign_task(void *arg, size_t i)
{
    sign_batch *b = arg;
    const hbs_slhdsa_params *p = hbs_slhdsa_signer_params(b->s);
    int err = hbs_slhdsa_signer_sign(b->s, b->sigs + i * p->sig_bytes, b->msgs[i], b->msglens[i],
                                     b->ctx, b->ctxlen, b->ph,
                                     b->addrnd ? b->addrnd + i * p->n : NULL);
    if (err) {
        int expected = 0;
        atomic_compare_exchange_strong(&b->err, &expected, err);
    }
}

int hbs_slhdsa_sign_many(const hbs_slhdsa_signer *s, uint8_t *sigs, const uint8_t *const *msgs,
                         const size_t *msglens, size_t count, const uint8_t *ctx, size_t ctxlen,
                         hbs_prehash ph, const uint8_t *addrnd)
{
    const hbs_slhdsa_params *p = hbs_slhdsa_signer_params(s);
    if (!p || (count && (!sigs || !msgs || !msglens)))
        return HBS_ERR_INVALID_ARGUMENT;
    sign_batch b = {s, sigs, msgs, msglens, ctx, ctxlen, ph, addrnd, 0};
    if (count == 1) {
        sign_task(&b, 0); /* one signature: let its trees have the threads */
    } else {
        hbs_parallel_for(count, sign_task, &b);
    }
    int err = atomic_load(&b.err);
    if (err)
        hbs_memzero(sigs, count * p->sig_bytes);
    return err;
}

typedef struct {
    const hbs_slhdsa_params *p;
    int *results;
    const uint8_t *const *sigs;
    const size_t *siglens;
    const uint8_t *const *msgs;
    const size_t *msglens;
    const uint8_t *ctx;
    size_t ctxlen;
    hbs_prehash ph;
    const uint8_t *const *pks;
    atomic_int misuse;
} verify_batch;

static void verify_task(void *arg, size_t i)
{
    verify_batch *b = arg;
    int r = hbs_slhdsa_verify_ex(b->p, b->sigs[i], b->siglens[i], b->msgs[i], b->msglens[i],
                                 b->ctx, b->ctxlen, b->ph, b->pks[i]);
    if (r != HBS_OK && r != HBS_ERR_VERIFY_FAILED) {
        int expected = 0;
        atomic_compare_exchange_strong(&b->misuse, &expected, r);
        r = HBS_ERR_VERIFY_FAILED;
    }
    b->results[i] = r;
}

int hbs_slhdsa_verify_many(const hbs_slhdsa_params *p, int *results, const uint8_t *const *sigs,
                           const size_t *siglens, const uint8_t *const *msgs,
                           const size_t *msglens, size_t count, const uint8_t *ctx, size_t ctxlen,
                           hbs_prehash ph, const uint8_t *const *pks)
{
    if (!p || (count && (!results || !sigs || !siglens || !msgs || !msglens || !pks)))
        return HBS_ERR_INVALID_ARGUMENT;
    verify_batch b = {p, results, sigs, siglens, msgs, msglens, ctx, ctxlen, ph, pks, 0};
    hbs_parallel_for(count, verify_task, &b);
    int misuse = atomic_load(&b.misuse);
    if (misuse)
        return misuse;
    for (size_t i = 0; i < count; i++)
        if (results[i])
            return HBS_ERR_VERIFY_FAILED;
    return HBS_OK;
}
