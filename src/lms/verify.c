/* HSS and LMS verification (RFC 8554 Algorithms 6 and 6a / section 6.3). Every length is
 * derived from typecodes and checked before anything is read; any mismatch is a failed
 * verification, never an error of another kind. */
#include <string.h>

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
    for (uint32_t i = 0; i < L; i += HBS_LMOTS_VERIFY_BATCH) {
        size_t count = L - i < HBS_LMOTS_VERIFY_BATCH ? L - i : HBS_LMOTS_VERIFY_BATCH;
        if (!hbs_lms_verify_batch(v + i, m + i, mlen + i, count))
            return HBS_ERR_VERIFY_FAILED;
    }
    return HBS_OK;
}
