/* libFuzzer target: XMSS / XMSS^MT verification on arbitrary public keys and signatures, and
 * the private-state parser (hbs_xmss_key_import) on arbitrary bytes. Neither may crash;
 * verify answers only "valid" or "invalid", import only "loaded" or "malformed".
 *
 * Input layout:
 *   byte 0   mode: even = verify, odd = import
 *   verify:  byte 1 picks the set (mod the number of sets); then pk_bytes of public key;
 *            2 bytes signature length s (big-endian), min(s, what is left) bytes of
 *            signature; the rest is the message
 *   import:  the rest is the state blob; with mode & 2 its SHA-256 is appended first, so
 *            that the checks behind the digest are reached too. A loaded key signs twice
 *            and exports. */
#include <stdlib.h>
#include <string.h>

#include "hash/hash.h"
#include "hbs/xmss.h"
#include "xmss/xmss.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_verify(const uint8_t *data, size_t size)
{
    size_t count = 0, at = 2;
    while (hbs_xmss_params_at(count))
        count++;
    if (size < 2)
        return;
    const hbs_xmss_params *p = hbs_xmss_params_at(data[1] % count);
    size_t pklen = hbs_xmss_pk_bytes(p);
    if (size - at < pklen + 2)
        return;
    const uint8_t *pk = data + at;
    at += pklen;
    size_t siglen = (size_t)data[at] << 8 | data[at + 1];
    at += 2;
    if (siglen > size - at)
        siglen = size - at;
    const uint8_t *sig = data + at;
    at += siglen;
    int err = hbs_xmss_verify(p, pk, pklen, data + at, size - at, sig, siglen);
    if (err != HBS_OK && err != HBS_ERR_VERIFY_FAILED)
        abort();
}

static void fuzz_import(const uint8_t *data, size_t size, int reseal)
{
    hbs_xmss_key *key = NULL;
    uint8_t *blob = malloc(size + 32);
    if (!blob)
        return;
    memcpy(blob, data, size);
    if (reseal) {
        hbs_sha256(blob + size, blob, size);
        size += 32;
    }
    int err = hbs_xmss_key_import(&key, blob, size);
    if (err != HBS_OK && err != HBS_ERR_MALFORMED_KEY)
        abort();
    if (err == HBS_OK) {
        size_t sl = hbs_xmss_sig_bytes(key), el = hbs_xmss_key_export_bytes(key), got = 0;
        uint8_t *sig = malloc(sl), *out = malloc(el);
        for (int i = 0; i < 2 && sig; i++) {
            err = hbs_xmss_sign(key, sig, sl, &got, data, size < 16 ? size : 16);
            if (err != HBS_OK && err != HBS_ERR_KEY_EXHAUSTED)
                abort();
        }
        if (out && hbs_xmss_key_export(key, out, el, &got) != HBS_OK)
            abort();
        free(sig);
        free(out);
        hbs_xmss_key_free(key);
    }
    free(blob);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    if (data[0] & 1)
        fuzz_import(data + 1, size - 1, (data[0] & 2) != 0);
    else
        fuzz_verify(data, size);
    return 0;
}
