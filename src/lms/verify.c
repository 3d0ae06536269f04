/* HSS and LMS verification (RFC 8554 Algorithms 6 and 6a / section 6.3). Every length is
 * derived from typecodes and checked before anything is read; any mismatch is a failed
 * verification, never an error of another kind. */
#include <string.h>

#include "common/pool.h"
#include "hbs/lms.h"
#include "lms/lmots.h"
#include "lms/params.h"
#include "lms/tree.h"

int hbs_lms_verify(const uint8_t *pk, size_t pklen, const uint8_t *msg, size_t msglen,
                   const uint8_t *sig, size_t siglen)
{
    hbs_lms_parsed v;
    size_t used;
    if (!pk || !sig || (!msg && msglen))
        return HBS_ERR_VERIFY_FAILED;
    /* 0 means malformed (an empty signature must not pass as "all of it used") */
    used = hbs_lms_verify_parse(&v, pk, pklen, sig, siglen);
    if (used == 0 || used != siglen || !hbs_lms_verify_batch(&v, &msg, &msglen, 1))
        return HBS_ERR_VERIFY_FAILED;
    return HBS_OK;
}

typedef struct {
    const hbs_lms_parsed *v;
    const uint8_t *const *m;
    const size_t *mlen;
    uint32_t L;
    uint32_t groups;
    int ok[HBS_HSS_MAX_LEVELS];
} level_run;

/* Group g verifies levels g, g + groups, g + 2 * groups, ..., HBS_LMOTS_VERIFY_BATCH at a
 * time. */
static void level_task(void *arg, size_t g)
{
    level_run *r = arg;
    hbs_lms_parsed v[HBS_LMOTS_VERIFY_BATCH];
    const uint8_t *m[HBS_LMOTS_VERIFY_BATCH];
    size_t mlen[HBS_LMOTS_VERIFY_BATCH], count = 0;
    int ok = 1;
    for (uint32_t i = (uint32_t)g; i < r->L; i += r->groups) {
        v[count] = r->v[i];
        m[count] = r->m[i];
        mlen[count] = r->mlen[i];
        if (++count == HBS_LMOTS_VERIFY_BATCH || i + r->groups >= r->L) {
            ok &= hbs_lms_verify_batch(v, m, mlen, count);
            count = 0;
        }
    }
    r->ok[g] = ok;
}

/* Waking a pool thread costs some microseconds; it pays only when a level's chains are
 * long (W4 and W8: about 2^w / 2 * p hashes a level). */
static int levels_worth_splitting(const hbs_lms_parsed *v, uint32_t L)
{
    size_t hashes = 0;
    for (uint32_t i = 0; i < L; i++)
        hashes += (size_t)v[i].o->p << (v[i].o->w - 1);
    return hashes >= 1000;
}

int hbs_hss_verify(const uint8_t *pk, size_t pklen, const uint8_t *msg, size_t msglen,
                   const uint8_t *sig, size_t siglen)
{
    hbs_lms_parsed v[HBS_HSS_MAX_LEVELS];
    const uint8_t *m[HBS_HSS_MAX_LEVELS];
    size_t mlen[HBS_HSS_MAX_LEVELS];
    const uint8_t *key;
    size_t keylen, off = 4;
    uint32_t L;

    if (!pk || !sig || (!msg && msglen) || pklen < 4 || siglen < 4)
        return HBS_ERR_VERIFY_FAILED;
    L = hbs_lms_get32(pk);
    if (L < 1 || L > HBS_HSS_MAX_LEVELS || hbs_lms_get32(sig) != L - 1)
        return HBS_ERR_VERIFY_FAILED;
    key = pk + 4;
    keylen = pklen - 4;
    /* parse every level first: sig[i] is followed by the public key it signs */
    for (uint32_t i = 0; i < L; i++) {
        size_t slen = hbs_lms_verify_parse(&v[i], key, keylen, sig + off, siglen - off);
        if (slen == 0)
            return HBS_ERR_VERIFY_FAILED;
        off += slen;
        if (i + 1 == L) {
            if (off != siglen)
                return HBS_ERR_VERIFY_FAILED;
            m[i] = msg;
            mlen[i] = msglen;
            break;
        }
        if (siglen - off < 4)
            return HBS_ERR_VERIFY_FAILED;
        keylen = hbs_lms_pk_bytes(hbs_lms_type_by_code(hbs_lms_get32(sig + off)));
        if (keylen == 0 || siglen - off < keylen)
            return HBS_ERR_VERIFY_FAILED;
        key = sig + off;
        m[i] = key;
        mlen[i] = keylen;
        off += keylen;
    }
    {
        /* Each level signs the next level's public key, which the signature carries, so the
         * levels are independent: spread them over the pool. One group per pool thread
         * (levels dealt round-robin) keeps the lanes of each thread as full as one batch. */
        level_run r = {v, m, mlen, L, 0, {0}};
        unsigned threads = hbs_get_threads();
        r.groups = threads < 2 ? 1 : (threads < L ? threads : L);
        if (r.groups > 1 && levels_worth_splitting(v, L))
            hbs_parallel_for(r.groups, level_task, &r);
        else {
            r.groups = 1;
            level_task(&r, 0);
        }
        for (uint32_t g = 0; g < r.groups; g++)
            if (!r.ok[g])
                return HBS_ERR_VERIFY_FAILED;
    }
    return HBS_OK;
}
