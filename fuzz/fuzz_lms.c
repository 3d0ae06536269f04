/* libFuzzer target: LMS / HSS signature and public-key parsing in verification, and the
 * parser of exported HSS key states. Verification must answer only "valid" or "invalid";
 * import must accept or reject cleanly, and an accepted state must export to the same bytes.
 *
 * Input layout:
 *   byte 0      selector: 0 HSS verify, 1 bare LMS verify, 2 key-state import (mod 3);
 *               for 0 and 1 the rest is:
 *   2 bytes     public key length p (big-endian), then min(p, what is left) bytes of key
 *   2 bytes     signature length s, then min(s, what is left) bytes of signature
 *   the rest    message
 * Lengths are taken from the input so that the fuzzer can reach exact sizes: a signature of
 * the wrong length for its typecodes is rejected before any hashing. */
#include <stdlib.h>
#include <string.h>

#include "hbs/lms.h"
#include "lms/hss.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const uint8_t *take(const uint8_t *data, size_t size, size_t *at, size_t *len)
{
    size_t want;
    const uint8_t *p;
    if (size - *at < 2) {
        *len = 0;
        return data + *at;
    }
    want = (size_t)data[*at] << 8 | data[*at + 1];
    *at += 2;
    if (want > size - *at)
        want = size - *at;
    p = data + *at;
    *at += want;
    *len = want;
    return p;
}

static void fuzz_import(const uint8_t *in, size_t len)
{
    hbs_hss_key *k = NULL;
    int err = hbs_hss_key_import(&k, in, len);
    if (err != HBS_OK) {
        if (err != HBS_ERR_MALFORMED_KEY && err != HBS_ERR_NO_MEMORY)
            abort();
        if (k)
            abort();
        return;
    }
    size_t outlen = 0;
    uint8_t *out = malloc(len);
    if (!out || hbs_hss_key_export(k, out, len, &outlen) != HBS_OK || outlen != len ||
        memcmp(out, in, len) != 0)
        abort();
    free(out);
    hbs_hss_key_free(k);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t at = 1, pklen, siglen;
    const uint8_t *pk, *sig;
    unsigned mode;
    int err;
    if (size < 1)
        return 0;
    mode = data[0] % 3;
    if (mode == 2) {
        fuzz_import(data + 1, size - 1);
        return 0;
    }
    pk = take(data, size, &at, &pklen);
    sig = take(data, size, &at, &siglen);
    if (mode == 0)
        err = hbs_hss_verify(pk, pklen, data + at, size - at, sig, siglen);
    else
        err = hbs_lms_verify(pk, pklen, data + at, size - at, sig, siglen);
    if (err != HBS_OK && err != HBS_ERR_VERIFY_FAILED)
        abort();
    if (err == HBS_OK && siglen > 0) {
        /* a valid signature (from a seed): one flipped bit of it must break it */
        uint8_t *bad = malloc(siglen);
        if (!bad)
            return 0;
        memcpy(bad, sig, siglen);
        bad[siglen - 1] ^= 1;
        err = mode == 0 ? hbs_hss_verify(pk, pklen, data + at, size - at, bad, siglen)
                        : hbs_lms_verify(pk, pklen, data + at, size - at, bad, siglen);
        if (err != HBS_ERR_VERIFY_FAILED)
            abort();
        free(bad);
    }
    return 0;
}
