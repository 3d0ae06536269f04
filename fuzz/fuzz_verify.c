/* libFuzzer target: SLH-DSA verification on arbitrary public keys, contexts, signatures and
 * messages. It must never crash and never report anything but "valid" or "invalid".
 *
 * Input layout:
 *   byte 0      selector: parameter set = sel mod 12, pre-hash = sel mod 13 (0: pure);
 *               sel >= 156 (every pair already reachable below) calls verify_internal
 *   2n bytes    public key
 *   1 byte      context length c, then c bytes of context
 *   2 bytes     signature length s (big-endian), then min(s, what is left) bytes of signature
 *   the rest    message
 * A signature of the wrong length is rejected before any hashing, so the large parameter sets
 * only cost time when the fuzzer (or a seed) gets the length exactly right. */
#include <stdlib.h>
#include <string.h>

#include "hbs/slhdsa.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Calls verify as the selector asks. */
static int verify(const hbs_slhdsa_params *p, int internal, hbs_prehash ph, const uint8_t *sig,
                  size_t siglen, const uint8_t *msg, size_t msglen, const uint8_t *ctx,
                  size_t ctxlen, const uint8_t *pk)
{
    if (internal)
        return hbs_slhdsa_verify_internal(p, sig, siglen, msg, msglen, pk);
    return hbs_slhdsa_verify_ex(p, sig, siglen, msg, msglen, ctx, ctxlen, ph, pk);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    unsigned sel = data[0];
    hbs_slhdsa_id id = (hbs_slhdsa_id)(sel % HBS_SLHDSA_NUM_PARAMS);
    const hbs_slhdsa_params *p = hbs_slhdsa_params_get(id);
    hbs_prehash ph = (hbs_prehash)(sel % HBS_PREHASH_NUM);
    int internal = sel >= HBS_SLHDSA_NUM_PARAMS * HBS_PREHASH_NUM;
    size_t pklen = hbs_slhdsa_pk_bytes(p), at = 1;

    if (size - at < pklen + 1)
        return 0;
    const uint8_t *pk = data + at;
    at += pklen;
    size_t ctxlen = data[at++];
    if (size - at < ctxlen + 2)
        return 0;
    const uint8_t *ctx = data + at;
    at += ctxlen;
    size_t siglen = (size_t)data[at] << 8 | data[at + 1];
    at += 2;
    if (siglen > size - at)
        siglen = size - at;
    const uint8_t *sig = data + at;
    at += siglen;
    const uint8_t *msg = data + at;
    size_t msglen = size - at;

    int err = verify(p, internal, ph, sig, siglen, msg, msglen, ctx, ctxlen, pk);
    if (err != HBS_OK && err != HBS_ERR_VERIFY_FAILED)
        abort();
    if (err == HBS_OK) {
        /* A valid signature (a seed, or a lucky find): one flipped bit must break it, or the
         * verifier accepts more than it should. */
        uint8_t *bad = malloc(siglen);
        if (!bad)
            return 0;
        memcpy(bad, sig, siglen);
        bad[siglen / 2] ^= (uint8_t)(1u << (sel & 7));
        if (verify(p, internal, ph, bad, siglen, msg, msglen, ctx, ctxlen, pk) !=
            HBS_ERR_VERIFY_FAILED)
            abort();
        free(bad);
    }
    return 0;
}
