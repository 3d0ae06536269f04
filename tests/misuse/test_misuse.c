/* Bad input: every wrong length, flipped region, wrong context, wrong parameter set and
 * misused argument gets the right verdict or error code, and nothing crashes. */
#include <stdlib.h>
#include <string.h>

#include "hbs/keyfile.h"
#include "hbs/slhdsa.h"
#include "test.h"

typedef struct {
    const hbs_slhdsa_params *p;
    uint8_t sk[HBS_SLHDSA_MAX_SK_BYTES], pk[HBS_SLHDSA_MAX_PK_BYTES];
    uint8_t *sig;
    size_t siglen;
} signed_case;

static const uint8_t msg[] = "a message that must not be altered";
static const uint8_t ctx[] = "context";

static int make_case(signed_case *c, hbs_slhdsa_id id, hbs_prehash ph)
{
    uint8_t seed[3 * HBS_SLHDSA_MAX_N];
    c->p = hbs_slhdsa_params_get(id);
    c->siglen = hbs_slhdsa_sig_bytes(c->p);
    c->sig = malloc(c->siglen + 1);
    test_rand_bytes(seed, sizeof seed);
    if (!c->sig || hbs_slhdsa_keygen_from_seed(c->p, c->sk, c->pk, seed) != HBS_OK ||
        hbs_slhdsa_sign_ex(c->p, c->sig, msg, sizeof msg, ctx, sizeof ctx, ph, c->sk, NULL) !=
            HBS_OK) {
        test_fail(__FILE__, __LINE__, "could not make a signature");
        return 0;
    }
    return 1;
}

static int verify_case(const signed_case *c, const uint8_t *sig, size_t siglen, hbs_prehash ph)
{
    return hbs_slhdsa_verify_ex(c->p, sig, siglen, msg, sizeof msg, ctx, sizeof ctx, ph, c->pk);
}

/* The sets used for the exhaustive flips: both hash families, both shapes. */
static const hbs_slhdsa_id flip_sets[] = {HBS_SLHDSA_SHA2_128F, HBS_SLHDSA_SHAKE_192F,
                                          HBS_SLHDSA_SHA2_256F, HBS_SLHDSA_SHA2_128S};

static void test_signature_lengths(void)
{
    for (size_t s = 0; s < sizeof flip_sets / sizeof flip_sets[0]; s++) {
        signed_case c;
        if (!make_case(&c, flip_sets[s], HBS_PREHASH_NONE))
            return;
        CHECK_INT(verify_case(&c, c.sig, c.siglen, HBS_PREHASH_NONE), HBS_OK);
        CHECK_INT(verify_case(&c, c.sig, c.siglen - 1, HBS_PREHASH_NONE), HBS_ERR_VERIFY_FAILED);
        c.sig[c.siglen] = 0;
        CHECK_INT(verify_case(&c, c.sig, c.siglen + 1, HBS_PREHASH_NONE), HBS_ERR_VERIFY_FAILED);
        CHECK_INT(verify_case(&c, c.sig, 0, HBS_PREHASH_NONE), HBS_ERR_VERIFY_FAILED);
        CHECK_INT(verify_case(&c, NULL, 0, HBS_PREHASH_NONE), HBS_ERR_VERIFY_FAILED);
        CHECK_INT(verify_case(&c, c.sig, 1, HBS_PREHASH_NONE), HBS_ERR_VERIFY_FAILED);
        free(c.sig);
    }
}

/* One flipped bit in R, in each FORS tree (secret and path) and in each hypertree layer
 * (WOTS+ signature and authentication path) must each be caught. */
static void test_flipped_regions(void)
{
    for (size_t s = 0; s < sizeof flip_sets / sizeof flip_sets[0]; s++) {
        signed_case c;
        if (!make_case(&c, flip_sets[s], HBS_PREHASH_NONE))
            return;
        const size_t n = hbs_slhdsa_n(c.p);
        /* derive the layout from the sizes: sig = R | FORS | d * (WOTS | auth) */
        size_t d = 0, a = 0, k = 0, hp = 0;
        static const size_t dims[HBS_SLHDSA_NUM_PARAMS][4] = {
            {7, 12, 14, 9}, {22, 6, 33, 3}, {7, 14, 17, 9}, {22, 8, 33, 3},
            {8, 14, 22, 8}, {17, 9, 35, 4}, {7, 12, 14, 9}, {22, 6, 33, 3},
            {7, 14, 17, 9}, {22, 8, 33, 3}, {8, 14, 22, 8}, {17, 9, 35, 4}};
        d = dims[flip_sets[s]][0];
        a = dims[flip_sets[s]][1];
        k = dims[flip_sets[s]][2];
        hp = dims[flip_sets[s]][3];
        const size_t len = 2 * n + 3, fors = k * (a + 1) * n, xmss = (len + hp) * n;
        CHECK_INT(n + fors + d * xmss, c.siglen);
        size_t pos[2 + 2 * 35 + 2 * 22 + 1], np = 0;
        pos[np++] = 0;     /* R */
        pos[np++] = n - 1; /* R, last byte */
        for (size_t t = 0; t < k; t++) {
            pos[np++] = n + t * (a + 1) * n;         /* revealed secret */
            pos[np++] = n + t * (a + 1) * n + a * n; /* last auth node */
        }
        for (size_t l = 0; l < d; l++) {
            pos[np++] = n + fors + l * xmss + (l * 7) % (len * n);   /* WOTS+ */
            pos[np++] = n + fors + l * xmss + len * n + (l % hp) * n; /* auth */
        }
        pos[np++] = c.siglen - 1;
        int caught = 0;
        for (size_t i = 0; i < np; i++) {
            c.sig[pos[i]] ^= 0x01;
            int r = verify_case(&c, c.sig, c.siglen, HBS_PREHASH_NONE);
            CHECK_MSG(r == HBS_ERR_VERIFY_FAILED, "%s: flip at byte %zu accepted (%d)",
                      hbs_slhdsa_name(c.p), pos[i], r);
            caught += r == HBS_ERR_VERIFY_FAILED;
            c.sig[pos[i]] ^= 0x01;
        }
        CHECK_INT(verify_case(&c, c.sig, c.siglen, HBS_PREHASH_NONE), HBS_OK);
        test_note("%s %d/%zu flips caught", hbs_slhdsa_name(c.p), caught, np);
        free(c.sig);
    }
}

static void test_wrong_inputs(void)
{
    signed_case c;
    uint8_t other[HBS_SLHDSA_MAX_PK_BYTES];
    if (!make_case(&c, HBS_SLHDSA_SHA2_128F, HBS_PREHASH_NONE))
        return;
    const size_t L = c.siglen;
    /* wrong context: different byte, shorter, none */
    uint8_t ctx2[sizeof ctx];
    memcpy(ctx2, ctx, sizeof ctx);
    ctx2[0] ^= 1;
    CHECK_INT(hbs_slhdsa_verify(c.p, c.sig, L, msg, sizeof msg, ctx2, sizeof ctx, c.pk),
              HBS_ERR_VERIFY_FAILED);
    CHECK_INT(hbs_slhdsa_verify(c.p, c.sig, L, msg, sizeof msg, ctx, sizeof ctx - 1, c.pk),
              HBS_ERR_VERIFY_FAILED);
    CHECK_INT(hbs_slhdsa_verify(c.p, c.sig, L, msg, sizeof msg, NULL, 0, c.pk),
              HBS_ERR_VERIFY_FAILED);
    /* wrong message */
    CHECK_INT(hbs_slhdsa_verify(c.p, c.sig, L, msg, sizeof msg - 1, ctx, sizeof ctx, c.pk),
              HBS_ERR_VERIFY_FAILED);
    /* pure signature checked as pre-hash, and as the internal interface */
    CHECK_INT(verify_case(&c, c.sig, L, HBS_PREHASH_SHA2_256), HBS_ERR_VERIFY_FAILED);
    CHECK_INT(hbs_slhdsa_verify_internal(c.p, c.sig, L, msg, sizeof msg, c.pk),
              HBS_ERR_VERIFY_FAILED);
    /* wrong parameter set of the same sizes (SHA2 <-> SHAKE) */
    CHECK_INT(hbs_slhdsa_verify(hbs_slhdsa_params_get(HBS_SLHDSA_SHAKE_128F), c.sig, L, msg,
                                sizeof msg, ctx, sizeof ctx, c.pk),
              HBS_ERR_VERIFY_FAILED);
    /* wrong parameter set of other sizes: the length alone rejects it */
    CHECK_INT(hbs_slhdsa_verify(hbs_slhdsa_params_get(HBS_SLHDSA_SHA2_128S), c.sig, L, msg,
                                sizeof msg, ctx, sizeof ctx, c.pk),
              HBS_ERR_VERIFY_FAILED);
    /* wrong public key: each half */
    memcpy(other, c.pk, sizeof other);
    other[0] ^= 0x80;
    CHECK_INT(hbs_slhdsa_verify(c.p, c.sig, L, msg, sizeof msg, ctx, sizeof ctx, other),
              HBS_ERR_VERIFY_FAILED);
    memcpy(other, c.pk, sizeof other);
    other[hbs_slhdsa_n(c.p)] ^= 0x80;
    CHECK_INT(hbs_slhdsa_verify(c.p, c.sig, L, msg, sizeof msg, ctx, sizeof ctx, other),
              HBS_ERR_VERIFY_FAILED);
    free(c.sig);

    /* a pre-hash signature under another pre-hash, or as pure */
    if (!make_case(&c, HBS_SLHDSA_SHAKE_128F, HBS_PREHASH_SHA3_256))
        return;
    CHECK_INT(verify_case(&c, c.sig, L, HBS_PREHASH_SHA3_256), HBS_OK);
    CHECK_INT(verify_case(&c, c.sig, L, HBS_PREHASH_SHA3_384), HBS_ERR_VERIFY_FAILED);
    CHECK_INT(verify_case(&c, c.sig, L, HBS_PREHASH_NONE), HBS_ERR_VERIFY_FAILED);
    free(c.sig);
}

static void test_argument_errors(void)
{
    const hbs_slhdsa_params *p = hbs_slhdsa_params_get(HBS_SLHDSA_SHA2_128F);
    uint8_t sk[64], pk[32], seed[48], big[256];
    uint8_t *sig = malloc(HBS_SLHDSA_MAX_SIG_BYTES);
    test_rand_bytes(seed, sizeof seed);
    memset(big, 7, sizeof big);
    CHECK_INT(hbs_slhdsa_keygen_from_seed(p, sk, pk, seed), HBS_OK);

    /* context of 256 bytes: rejected by sign (output zeroed) and verify */
    memset(sig, 0xee, hbs_slhdsa_sig_bytes(p));
    CHECK_INT(hbs_slhdsa_sign_ex(p, sig, msg, sizeof msg, big, 256, HBS_PREHASH_NONE, sk, NULL),
              HBS_ERR_CONTEXT_TOO_LONG);
    int zero = 1;
    for (size_t i = 0; i < hbs_slhdsa_sig_bytes(p); i++)
        zero &= sig[i] == 0;
    CHECK_MSG(zero, "signature buffer not wiped after a failed sign");
    CHECK_INT(hbs_slhdsa_verify(p, sig, hbs_slhdsa_sig_bytes(p), msg, sizeof msg, big, 256, pk),
              HBS_ERR_CONTEXT_TOO_LONG);
    /* 255 bytes is the limit and works */
    CHECK_INT(hbs_slhdsa_sign_ex(p, sig, msg, sizeof msg, big, 255, HBS_PREHASH_NONE, sk, NULL),
              HBS_OK);
    CHECK_INT(hbs_slhdsa_verify(p, sig, hbs_slhdsa_sig_bytes(p), msg, sizeof msg, big, 255, pk),
              HBS_OK);
    /* unknown pre-hash values */
    CHECK_INT(hbs_slhdsa_sign_ex(p, sig, msg, sizeof msg, NULL, 0, (hbs_prehash)99, sk, NULL),
              HBS_ERR_UNKNOWN_PREHASH);
    CHECK_INT(hbs_slhdsa_verify_ex(p, sig, hbs_slhdsa_sig_bytes(p), msg, sizeof msg, NULL, 0,
                                   (hbs_prehash)HBS_PREHASH_NUM, pk),
              HBS_ERR_UNKNOWN_PREHASH);
    CHECK_INT(hbs_slhdsa_hash_verify(p, sig, hbs_slhdsa_sig_bytes(p), msg, sizeof msg, NULL, 0,
                                     HBS_PREHASH_NONE, pk),
              HBS_ERR_UNKNOWN_PREHASH);
    /* NULL pointers */
    uint8_t sk3[64], pk3[32];
    memset(sk3, 0xee, sizeof sk3);
    memset(pk3, 0xee, sizeof pk3);
    CHECK_INT(hbs_slhdsa_keygen(NULL, sk3, pk3), HBS_ERR_INVALID_ARGUMENT);
    CHECK_INT(hbs_slhdsa_keygen(p, NULL, pk3), HBS_ERR_INVALID_ARGUMENT);
    CHECK_INT(hbs_slhdsa_keygen_from_seed(p, sk3, pk3, NULL), HBS_ERR_INVALID_ARGUMENT);
    CHECK_MSG(sk3[0] == 0 && sk3[63] == 0 && pk3[0] == 0 && pk3[31] == 0,
              "outputs not wiped after a failed keygen");
    uint8_t inplace[64], pk2[32];
    memcpy(inplace, seed, sizeof seed);
    CHECK_INT(hbs_slhdsa_keygen_from_seed(p, inplace, pk2, inplace), HBS_OK); /* in place */
    CHECK_MEM(inplace, sk, sizeof sk);
    CHECK_INT(hbs_slhdsa_sign(p, NULL, msg, sizeof msg, NULL, 0, sk), HBS_ERR_INVALID_ARGUMENT);
    CHECK_INT(hbs_slhdsa_sign(p, sig, msg, sizeof msg, NULL, 0, NULL), HBS_ERR_INVALID_ARGUMENT);
    CHECK_INT(hbs_slhdsa_sign(p, sig, NULL, 5, NULL, 0, sk), HBS_ERR_INVALID_ARGUMENT);
    CHECK_INT(hbs_slhdsa_sign(p, sig, msg, sizeof msg, NULL, 3, sk), HBS_ERR_INVALID_ARGUMENT);
    CHECK_INT(hbs_slhdsa_sign(NULL, sig, msg, sizeof msg, NULL, 0, sk), HBS_ERR_INVALID_ARGUMENT);
    CHECK_INT(hbs_slhdsa_verify(p, sig, 10, msg, sizeof msg, NULL, 0, NULL),
              HBS_ERR_INVALID_ARGUMENT);
    CHECK_INT(hbs_slhdsa_verify(NULL, sig, 10, msg, sizeof msg, NULL, 0, pk),
              HBS_ERR_INVALID_ARGUMENT);
    CHECK_INT(hbs_slhdsa_verify(p, NULL, 10, msg, sizeof msg, NULL, 0, pk),
              HBS_ERR_INVALID_ARGUMENT);
    CHECK_INT(hbs_slhdsa_sign_internal(p, sig, NULL, 1, sk, NULL), HBS_ERR_INVALID_ARGUMENT);
    CHECK_INT(hbs_slhdsa_verify_internal(p, sig, 1, NULL, 1, pk), HBS_ERR_INVALID_ARGUMENT);
    CHECK_INT(hbs_slhdsa_sk_check(p, pk, NULL), HBS_ERR_INVALID_ARGUMENT);
    /* empty messages are legal */
    CHECK_INT(hbs_slhdsa_sign_ex(p, sig, NULL, 0, NULL, 0, HBS_PREHASH_NONE, sk, NULL), HBS_OK);
    CHECK_INT(hbs_slhdsa_verify(p, sig, hbs_slhdsa_sig_bytes(p), NULL, 0, NULL, 0, pk), HBS_OK);
    CHECK_INT(hbs_slhdsa_sign_internal(p, sig, NULL, 0, sk, NULL), HBS_OK);
    CHECK_INT(hbs_slhdsa_verify_internal(p, sig, hbs_slhdsa_sig_bytes(p), NULL, 0, pk), HBS_OK);
    /* every error has a message */
    for (int e = 0; e >= -12; e--)
        CHECK(hbs_strerror(e) != NULL && strlen(hbs_strerror(e)) > 0);
    CHECK(strcmp(hbs_strerror(-1000), "unknown error") == 0);
    free(sig);
}

static void test_hedged_and_deterministic(void)
{
    const hbs_slhdsa_params *p = hbs_slhdsa_params_get(HBS_SLHDSA_SHAKE_128F);
    uint8_t sk[64], pk[32];
    const size_t L = hbs_slhdsa_sig_bytes(p);
    uint8_t *a = malloc(L), *b = malloc(L);
    CHECK_INT(hbs_slhdsa_keygen(p, sk, pk), HBS_OK);
    CHECK_INT(hbs_slhdsa_sign(p, a, msg, sizeof msg, ctx, sizeof ctx, sk), HBS_OK);
    CHECK_INT(hbs_slhdsa_sign(p, b, msg, sizeof msg, ctx, sizeof ctx, sk), HBS_OK);
    CHECK_MSG(memcmp(a, b, L) != 0, "two hedged signatures are equal");
    CHECK_INT(hbs_slhdsa_verify(p, a, L, msg, sizeof msg, ctx, sizeof ctx, pk), HBS_OK);
    CHECK_INT(hbs_slhdsa_verify(p, b, L, msg, sizeof msg, ctx, sizeof ctx, pk), HBS_OK);
    CHECK_INT(hbs_slhdsa_sign_ex(p, a, msg, sizeof msg, ctx, sizeof ctx, HBS_PREHASH_NONE, sk,
                                 NULL), HBS_OK);
    CHECK_INT(hbs_slhdsa_sign_ex(p, b, msg, sizeof msg, ctx, sizeof ctx, HBS_PREHASH_NONE, sk,
                                 NULL), HBS_OK);
    CHECK_MEM(a, b, L);
    free(a);
    free(b);
}

/* Key files cut short, extended or garbled are refused with an error, never a crash. */
static void test_bad_key_files(void)
{
    hbs_key k, out;
    uint8_t der[HBS_KEY_DER_MAX + 1];
    char pem[HBS_KEY_PEM_MAX];
    memset(&k, 0, sizeof k);
    k.scheme = HBS_SCHEME_SLHDSA;
    k.alg = HBS_SLHDSA_SHA2_128S;
    k.prehash = HBS_PREHASH_NONE;
    for (int kind = HBS_KEY_PUBLIC; kind <= HBS_KEY_SECRET; kind++) {
        k.kind = (hbs_key_kind)kind;
        k.len = kind == HBS_KEY_PUBLIC ? 32 : 64;
        test_rand_bytes(k.bytes, k.len);
        size_t dlen = HBS_KEY_DER_MAX, plen = sizeof pem;
        CHECK_INT(hbs_key_encode_der(&k, der, &dlen), HBS_OK);
        CHECK_INT(hbs_key_encode_pem(&k, pem, &plen), HBS_OK);
        CHECK_INT(hbs_key_decode(&out, der, dlen), HBS_OK);
        for (size_t cut = 0; cut < dlen; cut++)
            CHECK_MSG(hbs_key_decode(&out, der, cut) < 0, "DER cut at %zu accepted", cut);
        der[dlen] = 0;
        CHECK(hbs_key_decode(&out, der, dlen + 1) < 0);
        for (size_t cut = 0; cut + 30 < plen; cut += 7)
            CHECK_MSG(hbs_key_decode(&out, (const uint8_t *)pem, cut) < 0,
                      "PEM cut at %zu accepted", cut);
        pem[40] = '*';
        CHECK(hbs_key_decode(&out, (const uint8_t *)pem, plen) < 0);
    }
    static const char garbage[] = "-----BEGIN PUBLIC KEY-----\nnot base64 at all!\n"
                                  "-----END PUBLIC KEY-----\n";
    CHECK(hbs_key_decode(&out, (const uint8_t *)garbage, sizeof garbage - 1) < 0);
    CHECK(hbs_key_decode(&out, (const uint8_t *)"", 0) < 0);
    CHECK(hbs_key_decode(&out, (const uint8_t *)"hello world", 11) < 0);
}

const hbs_test hbs_tests_misuse[] = {
    {"signature_lengths", test_signature_lengths},
    {"flipped_regions", test_flipped_regions},
    {"wrong_context_set_prehash_key", test_wrong_inputs},
    {"argument_errors", test_argument_errors},
    {"hedged_and_deterministic", test_hedged_and_deterministic},
    {"bad_key_files", test_bad_key_files},
    {NULL, NULL},
};
