/* libFuzzer target: hbs_key_decode on arbitrary bytes (DER, PEM, or neither).
 *
 * Beyond "never crashes", it checks what the decoder promises:
 *  - an error is HBS_ERR_MALFORMED_KEY or HBS_ERR_UNKNOWN_ALGORITHM and leaves the key zeroed;
 *  - an accepted key encodes again, as DER and as PEM, to input that decodes to the same key;
 *  - DER is canonical: a DER input of the length we would write is exactly what we write.
 * A broken promise aborts, which libFuzzer reports as a crash. */
#include <stdlib.h>
#include <string.h>

#include "hbs/keyfile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void require(int cond)
{
    if (!cond)
        abort();
}

static int all_zero(const void *p, size_t len)
{
    const uint8_t *b = p;
    uint8_t acc = 0;
    for (size_t i = 0; i < len; i++)
        acc |= b[i];
    return acc == 0;
}

static int same_key(const hbs_key *a, const hbs_key *b)
{
    return a->scheme == b->scheme && a->kind == b->kind && a->alg == b->alg &&
           a->prehash == b->prehash && a->len == b->len && memcmp(a->bytes, b->bytes, a->len) == 0;
}

static int contains(const uint8_t *data, size_t size, const char *needle)
{
    size_t nl = strlen(needle);
    for (size_t i = 0; i + nl <= size; i++)
        if (memcmp(data + i, needle, nl) == 0)
            return 1;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    hbs_key k, back;
    int err = hbs_key_decode(&k, data, size);
    if (err != HBS_OK) {
        require(err == HBS_ERR_MALFORMED_KEY || err == HBS_ERR_UNKNOWN_ALGORITHM);
        require(all_zero(&k, sizeof k));
        return 0;
    }

    uint8_t der[HBS_KEY_DER_MAX];
    size_t derlen = sizeof der;
    require(hbs_key_encode_der(&k, der, &derlen) == HBS_OK);
    require(hbs_key_decode(&back, der, derlen) == HBS_OK && same_key(&k, &back));
    if (size == derlen && data[0] == 0x30 && !contains(data, size, "-----BEGIN "))
        require(memcmp(data, der, derlen) == 0);

    char pem[HBS_KEY_PEM_MAX];
    size_t pemlen = sizeof pem;
    require(hbs_key_encode_pem(&k, pem, &pemlen) == HBS_OK && pemlen == strlen(pem));
    require(hbs_key_decode(&back, (const uint8_t *)pem, pemlen) == HBS_OK && same_key(&k, &back));

    hbs_key_wipe(&k);
    hbs_key_wipe(&back);
    hbs_memzero(der, sizeof der);
    hbs_memzero(pem, sizeof pem);
    return 0;
}
