/* Unit tests of the hash layer (src/hash).
 *
 * 1. Published examples: FIPS 180-4 examples for every SHA-2 variant, FIPS 202 examples
 *    for SHA-3 and SHAKE, RFC 4231 for HMAC.
 * 2. Pseudo-random inputs against the system `openssl` for every function, at every length
 *    0..300 and a few longer ones (one openssl run digests all the files at once).
 * 3. Internal consistency: batch == one at a time (with and without a midstate prefix, on
 *    every backend this CPU runs), split updates == one-shot, squeeze in pieces == one-shot.
 * 4. Backend forcing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hbs/hbs.h"
#include "hash/hash.h"
#include "test.h"

/* ---- a uniform view of every algorithm ----------------------------------------------- */

typedef union {
    hbs_sha256_ctx s256;
    hbs_sha512_ctx s512;
    hbs_keccak_ctx k;
    hbs_hmac_sha256_ctx h256;
    hbs_hmac_sha512_ctx h512;
} any_ctx;

typedef struct {
    const char *name;
    const char *ossl; /* openssl dgst option */
    size_t outlen;    /* digest length; for SHAKE the length tests use by default */
    int xof;
    void (*init)(any_ctx *c);
    void (*update)(any_ctx *c, const uint8_t *in, size_t len);
    void (*final)(any_ctx *c, uint8_t *out, size_t outlen);
} hash_algo;

static void sha224_init_w(any_ctx *c) { hbs_sha224_init(&c->s256); }
static void sha256_init_w(any_ctx *c) { hbs_sha256_init(&c->s256); }
static void sha256_update_w(any_ctx *c, const uint8_t *in, size_t len)
{
    hbs_sha256_update(&c->s256, in, len);
}
static void sha224_final_w(any_ctx *c, uint8_t *out, size_t n)
{
    (void)n;
    hbs_sha224_final(&c->s256, out);
}
static void sha256_final_w(any_ctx *c, uint8_t *out, size_t n)
{
    (void)n;
    hbs_sha256_final(&c->s256, out);
}

static void sha384_init_w(any_ctx *c) { hbs_sha384_init(&c->s512); }
static void sha512_init_w(any_ctx *c) { hbs_sha512_init(&c->s512); }
static void sha512_224_init_w(any_ctx *c) { hbs_sha512_224_init(&c->s512); }
static void sha512_256_init_w(any_ctx *c) { hbs_sha512_256_init(&c->s512); }
static void sha512_update_w(any_ctx *c, const uint8_t *in, size_t len)
{
    hbs_sha512_update(&c->s512, in, len);
}
static void sha512_final_w(any_ctx *c, uint8_t *out, size_t n)
{
    (void)n;
    hbs_sha512_final(&c->s512, out);
}

static void sha3_224_init_w(any_ctx *c) { hbs_sha3_init(&c->k, 224); }
static void sha3_256_init_w(any_ctx *c) { hbs_sha3_init(&c->k, 256); }
static void sha3_384_init_w(any_ctx *c) { hbs_sha3_init(&c->k, 384); }
static void sha3_512_init_w(any_ctx *c) { hbs_sha3_init(&c->k, 512); }
static void shake128_init_w(any_ctx *c) { hbs_shake128_init(&c->k); }
static void shake256_init_w(any_ctx *c) { hbs_shake256_init(&c->k); }
static void keccak_update_w(any_ctx *c, const uint8_t *in, size_t len)
{
    hbs_keccak_absorb(&c->k, in, len);
}
static void sha3_final_w(any_ctx *c, uint8_t *out, size_t n)
{
    (void)n;
    hbs_sha3_final(&c->k, out);
}
static void shake_final_w(any_ctx *c, uint8_t *out, size_t n) { hbs_keccak_squeeze(&c->k, out, n); }

/* HMAC in the uniform view uses one fixed key, longer than a SHA-256 block. */
static const uint8_t HMAC_KEY[] =
    "a fixed HMAC key for the split tests, longer than sixty-four bytes";
static void hmac256_init_w(any_ctx *c)
{
    hbs_hmac_sha256_init(&c->h256, HMAC_KEY, sizeof HMAC_KEY);
}
static void hmac256_update_w(any_ctx *c, const uint8_t *in, size_t len)
{
    hbs_hmac_sha256_update(&c->h256, in, len);
}
static void hmac256_final_w(any_ctx *c, uint8_t *out, size_t n)
{
    (void)n;
    hbs_hmac_sha256_final(&c->h256, out);
}
static void hmac512_init_w(any_ctx *c)
{
    hbs_hmac_sha512_init(&c->h512, HMAC_KEY, sizeof HMAC_KEY);
}
static void hmac512_update_w(any_ctx *c, const uint8_t *in, size_t len)
{
    hbs_hmac_sha512_update(&c->h512, in, len);
}
static void hmac512_final_w(any_ctx *c, uint8_t *out, size_t n)
{
    (void)n;
    hbs_hmac_sha512_final(&c->h512, out);
}

static const hash_algo ALGOS[] = {
    {"sha224", "-sha224", 28, 0, sha224_init_w, sha256_update_w, sha224_final_w},
    {"sha256", "-sha256", 32, 0, sha256_init_w, sha256_update_w, sha256_final_w},
    {"sha384", "-sha384", 48, 0, sha384_init_w, sha512_update_w, sha512_final_w},
    {"sha512", "-sha512", 64, 0, sha512_init_w, sha512_update_w, sha512_final_w},
    {"sha512-224", "-sha512-224", 28, 0, sha512_224_init_w, sha512_update_w, sha512_final_w},
    {"sha512-256", "-sha512-256", 32, 0, sha512_256_init_w, sha512_update_w, sha512_final_w},
    {"sha3-224", "-sha3-224", 28, 0, sha3_224_init_w, keccak_update_w, sha3_final_w},
    {"sha3-256", "-sha3-256", 32, 0, sha3_256_init_w, keccak_update_w, sha3_final_w},
    {"sha3-384", "-sha3-384", 48, 0, sha3_384_init_w, keccak_update_w, sha3_final_w},
    {"sha3-512", "-sha3-512", 64, 0, sha3_512_init_w, keccak_update_w, sha3_final_w},
    {"shake128", "-shake128", 200, 1, shake128_init_w, keccak_update_w, shake_final_w},
    {"shake256", "-shake256", 200, 1, shake256_init_w, keccak_update_w, shake_final_w},
    {"hmac-sha256", NULL, 32, 0, hmac256_init_w, hmac256_update_w, hmac256_final_w},
    {"hmac-sha512", NULL, 64, 0, hmac512_init_w, hmac512_update_w, hmac512_final_w},
};
#define N_ALGOS (sizeof ALGOS / sizeof ALGOS[0])

static const hash_algo *algo_by_name(const char *name)
{
    for (size_t i = 0; i < N_ALGOS; i++)
        if (strcmp(ALGOS[i].name, name) == 0)
            return &ALGOS[i];
    return NULL;
}

static void algo_hash(const hash_algo *a, uint8_t *out, size_t outlen, const uint8_t *in,
                      size_t len)
{
    any_ctx c;
    a->init(&c);
    a->update(&c, in, len);
    a->final(&c, out, outlen);
}

/* Compares got with a hex string; reports a failure naming `what` on mismatch. */
static void check_hex(const char *what, const uint8_t *got, size_t n, const char *hex)
{
    size_t elen = 0;
    uint8_t *exp = test_unhex(hex, &elen);
    if (!exp || elen != n) {
        test_fail(__FILE__, __LINE__, "%s: bad expected hex (or length %zu != %zu)", what,
                  elen, n);
    } else if (memcmp(got, exp, n) != 0) {
        test_fail(__FILE__, __LINE__, "%s: digest differs from the published value", what);
    }
    free(exp);
}

/* ---- 1. published examples ------------------------------------------------------------- */

static const char MSG_448[] = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
static const char MSG_896[] = "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmn"
                              "hijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu";

/* FIPS 180-4 examples (NIST CSRC "Examples with intermediate values") and the usual
 * one-million-'a' message. Messages: 0 "abc", 1 the 448-bit one, 2 the 896-bit one,
 * 3 one million 'a'. */
static const struct {
    const char *algo;
    int msg;
    const char *hex;
} SHA2_KNOWN[] = {
    {"sha224", 0, "23097d223405d8228642a477bda255b32aadbce4bda0b3f7e36c9da7"},
    {"sha224", 1, "75388b16512776cc5dba5da1fd890150b0c6455cb4f58b1952522525"},
    {"sha224", 2, "c97ca9a559850ce97a04a96def6d99a9e0e0e2ab14e6b8df265fc0b3"},
    {"sha224", 3, "20794655980c91d8bbb4c1ea97618a4bf03f42581948b2ee4ee7ad67"},
    {"sha256", 0, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
    {"sha256", 1, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
    {"sha256", 2, "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"},
    {"sha256", 3, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"},
    {"sha384", 0,
     "cb00753f45a35e8bb5a03d699ac65007272c32ab0eded1631a8b605a43ff5bed"
     "8086072ba1e7cc2358baeca134c825a7"},
    {"sha384", 1,
     "3391fdddfc8dc7393707a65b1b4709397cf8b1d162af05abfe8f450de5f36bc6"
     "b0455a8520bc4e6f5fe95b1fe3c8452b"},
    {"sha384", 2,
     "09330c33f71147e83d192fc782cd1b4753111b173b3b05d22fa08086e3b0f712"
     "fcc7c71a557e2db966c3e9fa91746039"},
    {"sha384", 3,
     "9d0e1809716474cb086e834e310a4a1ced149e9c00f248527972cec5704c2a5b"
     "07b8b3dc38ecc4ebae97ddd87f3d8985"},
    {"sha512", 0,
     "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a"
     "2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f"},
    {"sha512", 1,
     "204a8fc6dda82f0a0ced7beb8e08a41657c16ef468b228a8279be331a703c335"
     "96fd15c13b1b07f9aa1d3bea57789ca031ad85c7a71dd70354ec631238ca3445"},
    {"sha512", 2,
     "8e959b75dae313da8cf4f72814fc143f8f7779c6eb9f7fa17299aeadb6889018"
     "501d289e4900f7e4331b99dec4b5433ac7d329eeb6dd26545e96e55b874be909"},
    {"sha512", 3,
     "e718483d0ce769644e2e42c7bc15b4638e1f98b13b2044285632a803afa973eb"
     "de0ff244877ea60a4cb0432ce577c31beb009c5c2c49aa2e4eadb217ad8cc09b"},
    {"sha512-224", 0, "4634270f707b6a54daae7530460842e20e37ed265ceee9a43e8924aa"},
    {"sha512-224", 1, "e5302d6d54bb242275d1e7622d68df6eb02dedd13f564c13dbda2174"},
    {"sha512-224", 2, "23fec5bb94d60b23308192640b0c453335d664734fe40e7268674af9"},
    {"sha512-224", 3, "37ab331d76f0d36de422bd0edeb22a28accd487b7a8453ae965dd287"},
    {"sha512-256", 0, "53048e2681941ef99b2e29b76b4c7dabe4c2d0c634fc6d46e0e2f13107e7af23"},
    {"sha512-256", 1, "bde8e1f9f19bb9fd3406c90ec6bc47bd36d8ada9f11880dbc8a22a7078b6a461"},
    {"sha512-256", 2, "3928e184fb8690f840da3988121d31be65cb9d3ef83ee6146feac861e19b563a"},
    {"sha512-256", 3, "9a59a052930187a97038cae692f30708aa6491923ef5194394dc68d56c74fb21"},
};

static void test_sha2_published(void)
{
    size_t million = 1000000;
    uint8_t *ma = malloc(million);
    const uint8_t *msgs[4] = {(const uint8_t *)"abc", (const uint8_t *)MSG_448,
                              (const uint8_t *)MSG_896, ma};
    size_t lens[4] = {3, sizeof MSG_448 - 1, sizeof MSG_896 - 1, million};
    uint8_t out[64];
    size_t n = 0;
    CHECK(lens[1] * 8 == 448 && lens[2] * 8 == 896);
    if (!ma) {
        CHECK_MSG(0, "out of memory");
        return;
    }
    memset(ma, 'a', million);
    for (size_t i = 0; i < sizeof SHA2_KNOWN / sizeof SHA2_KNOWN[0]; i++) {
        const hash_algo *a = algo_by_name(SHA2_KNOWN[i].algo);
        char what[64];
        int m = SHA2_KNOWN[i].msg;
        snprintf(what, sizeof what, "%s message %d", a->name, m);
        algo_hash(a, out, a->outlen, msgs[m], lens[m]);
        check_hex(what, out, a->outlen, SHA2_KNOWN[i].hex);
        n++;
        /* The one-shot functions too. */
        if (strcmp(a->name, "sha256") == 0) {
            hbs_sha256(out, msgs[m], lens[m]);
            check_hex(what, out, 32, SHA2_KNOWN[i].hex);
        } else if (strcmp(a->name, "sha512") == 0) {
            hbs_sha512(out, msgs[m], lens[m]);
            check_hex(what, out, 64, SHA2_KNOWN[i].hex);
        }
    }
    free(ma);
    test_note("%zu published digests", n);
}

/* FIPS 202 examples (NIST CSRC): "", "abc" and 200 bytes of 0xa3 (the 1600-bit message).
 * For SHAKE the output length is that of the hex string; 512 bytes for 0xa3, as NIST
 * prints 4096 output bits there. */
static const char SHAKE128_A3_512[] =
    "131ab8d2b594946b9c81333f9bb6e0ce75c3b93104fa3469d3917457385da037"
    "cf232ef7164a6d1eb448c8908186ad852d3f85a5cf28da1ab6fe343817197846"
    "7f1c05d58c7ef38c284c41f6c2221a76f12ab1c04082660250802294fb871802"
    "13fdef5b0ecb7df50ca1f8555be14d32e10f6edcde892c09424b29f597afc270"
    "c904556bfcb47a7d40778d390923642b3cbd0579e60908d5a000c1d08b98ef93"
    "3f806445bf87f8b009ba9e94f7266122ed7ac24e5e266c42a82fa1bbefb7b8db"
    "0066e16a85e0493f07df4809aec084a593748ac3dde5a6d7aae1e8b6e5352b2d"
    "71efbb47d4caeed5e6d633805d2d323e6fd81b4684b93a2677d45e7421c2c6ae"
    "a259b855a698fd7d13477a1fe53e5a4a6197dbec5ce95f505b520bcd9570c4a8"
    "265a7e01f89c0c002c59bfec6cd4a5c109258953ee5ee70cd577ee217af21fa7"
    "0178f0946c9bf6ca8751793479f6b537737e40b6ed28511d8a2d7e73eb75f8da"
    "ac912ff906e0ab955b083bac45a8e5e9b744c8506f37e9b4e749a184b30f43eb"
    "188d855f1b70d71ff3e50c537ac1b0f8974f0fe1a6ad295ba42f6aec74d123a7"
    "abedde6e2c0711cab36be5acb1a5a11a4b1db08ba6982efccd716929a7741cfc"
    "63aa4435e0b69a9063e880795c3dc5ef3272e11c497a91acf699fefee206227a"
    "44c9fb359fd56ac0a9a75a743cff6862f17d7259ab075216c0699511643b6439";
static const char SHAKE256_A3_512[] =
    "cd8a920ed141aa0407a22d59288652e9d9f1a7ee0c1e7c1ca699424da84a904d"
    "2d700caae7396ece96604440577da4f3aa22aeb8857f961c4cd8e06f0ae6610b"
    "1048a7f64e1074cd629e85ad7566048efc4fb500b486a3309a8f26724c0ed628"
    "001a1099422468de726f1061d99eb9e93604d5aa7467d4b1bd6484582a384317"
    "d7f47d750b8f5499512bb85a226c4243556e696f6bd072c5aa2d9b69730244b5"
    "6853d16970ad817e213e470618178001c9fb56c54fefa5fee67d2da524bb3b0b"
    "61ef0e9114a92cdbb6cccb98615cfe76e3510dd88d1cc28ff99287512f24bfaf"
    "a1a76877b6f37198e3a641c68a7c42d45fa7acc10dae5f3cefb7b735f12d4e58"
    "9f7a456e78c0f5e4c4471fffa5e4fa0514ae974d8c2648513b5db494cea84715"
    "6d277ad0e141c24c7839064cd08851bc2e7ca109fd4e251c35bb0a04fb05b364"
    "ff8c4d8b59bc303e25328c09a882e952518e1a8ae0ff265d61c465896973d749"
    "0499dc639fb8502b39456791b1b6ec5bcc5d9ac36a6df622a070d43fed781f5f"
    "149f7b62675e7d1a4d6dec48c1c7164586eae06a51208c0b791244d307726505"
    "c3ad4b26b6822377257aa152037560a739714a3ca79bd605547c9b78dd1f596f"
    "2d4f1791bc689a0e9b799a37339c04275733740143ef5d2b58b96a363d4e0807"
    "6a1a9d7846436e4dca5728b6f760eef0ca92bf0be5615e96959d767197a0beeb";

/* Messages: 0 "", 1 "abc", 2 200 bytes of 0xa3. */
static const struct {
    const char *algo;
    int msg;
    const char *hex;
} SHA3_KNOWN[] = {
    {"sha3-224", 0, "6b4e03423667dbb73b6e15454f0eb1abd4597f9a1b078e3f5b5a6bc7"},
    {"sha3-224", 1, "e642824c3f8cf24ad09234ee7d3c766fc9a3a5168d0c94ad73b46fdf"},
    {"sha3-224", 2, "9376816aba503f72f96ce7eb65ac095deee3be4bf9bbc2a1cb7e11e0"},
    {"sha3-256", 0, "a7ffc6f8bf1ed76651c14756a061d662f580ff4de43b49fa82d80a4b80f8434a"},
    {"sha3-256", 1, "3a985da74fe225b2045c172d6bd390bd855f086e3e9d525b46bfe24511431532"},
    {"sha3-256", 2, "79f38adec5c20307a98ef76e8324afbfd46cfd81b22e3973c65fa1bd9de31787"},
    {"sha3-384", 0,
     "0c63a75b845e4f7d01107d852e4c2485c51a50aaaa94fc61995e71bbee983a2a"
     "c3713831264adb47fb6bd1e058d5f004"},
    {"sha3-384", 1,
     "ec01498288516fc926459f58e2c6ad8df9b473cb0fc08c2596da7cf0e49be4b2"
     "98d88cea927ac7f539f1edf228376d25"},
    {"sha3-384", 2,
     "1881de2ca7e41ef95dc4732b8f5f002b189cc1e42b74168ed1732649ce1dbcdd"
     "76197a31fd55ee989f2d7050dd473e8f"},
    {"sha3-512", 0,
     "a69f73cca23a9ac5c8b567dc185a756e97c982164fe25859e0d1dcc1475c80a6"
     "15b2123af1f5f94c11e3e9402c3ac558f500199d95b6d3e301758586281dcd26"},
    {"sha3-512", 1,
     "b751850b1a57168a5693cd924b6b096e08f621827444f70d884f5d0240d2712e"
     "10e116e9192af3c91a7ec57647e3934057340b4cf408d5a56592f8274eec53f0"},
    {"sha3-512", 2,
     "e76dfad22084a8b1467fcf2ffa58361bec7628edf5f3fdc0e4805dc48caeeca8"
     "1b7c13c30adf52a3659584739a2df46be589c51ca1a4a8416df6545a1ce8ba00"},
    {"shake128", 0, "7f9c2ba4e88f827d616045507605853ed73b8093f6efbc88eb1a6eacfa66ef26"},
    {"shake128", 1, "5881092dd818bf5cf8a3ddb793fbcba74097d5c526a6d35f97b83351940f2cc8"},
    {"shake128", 2, SHAKE128_A3_512},
    {"shake256", 0,
     "46b9dd2b0ba88d13233b3feb743eeb243fcd52ea62b81b82b50c27646ed5762f"
     "d75dc4ddd8c0f200cb05019d67b592f6fc821c49479ab48640292eacb3b7c4be"},
    {"shake256", 1,
     "483366601360a8771c6863080cc4114d8db44530f8f1e1ee4f94ea37e78b5739"
     "d5a15bef186a5386c75744c0527e1faa9f8726e462a12a4feb06bd8801e751e4"},
    {"shake256", 2, SHAKE256_A3_512},
};

static void test_sha3_published(void)
{
    uint8_t a3[200], out[512];
    const uint8_t *msgs[3] = {(const uint8_t *)"", (const uint8_t *)"abc", a3};
    size_t lens[3] = {0, 3, sizeof a3};
    size_t n = 0;
    memset(a3, 0xa3, sizeof a3);
    for (size_t i = 0; i < sizeof SHA3_KNOWN / sizeof SHA3_KNOWN[0]; i++) {
        const hash_algo *a = algo_by_name(SHA3_KNOWN[i].algo);
        size_t outlen = a->xof ? strlen(SHA3_KNOWN[i].hex) / 2 : a->outlen;
        int m = SHA3_KNOWN[i].msg;
        char what[64];
        snprintf(what, sizeof what, "%s message %d", a->name, m);
        algo_hash(a, out, outlen, msgs[m], lens[m]);
        check_hex(what, out, outlen, SHA3_KNOWN[i].hex);
        if (strcmp(a->name, "shake128") == 0) {
            hbs_shake128(out, outlen, msgs[m], lens[m]);
            check_hex(what, out, outlen, SHA3_KNOWN[i].hex);
        } else if (strcmp(a->name, "shake256") == 0) {
            hbs_shake256(out, outlen, msgs[m], lens[m]);
            check_hex(what, out, outlen, SHA3_KNOWN[i].hex);
        }
        n++;
    }
    test_note("%zu published digests", n);
}

/* RFC 4231, test cases 1-7 (case 5 is compared on its first 128 bits, as published). */
static void test_hmac_rfc4231(void)
{
    uint8_t k_0b[20], k_aa20[20], k_seq[25], k_0c[20], k_aa131[131], d_dd[50], d_cd[50];
    static const char D6[] = "Test Using Larger Than Block-Size Key - Hash Key First";
    static const char D7[] = "This is a test using a larger than block-size key and a larger "
                             "than block-size data. The key needs to be hashed before being "
                             "used by the HMAC algorithm.";
    memset(k_0b, 0x0b, sizeof k_0b);
    memset(k_aa20, 0xaa, sizeof k_aa20);
    for (size_t i = 0; i < sizeof k_seq; i++)
        k_seq[i] = (uint8_t)(i + 1);
    memset(k_0c, 0x0c, sizeof k_0c);
    memset(k_aa131, 0xaa, sizeof k_aa131);
    memset(d_dd, 0xdd, sizeof d_dd);
    memset(d_cd, 0xcd, sizeof d_cd);
    const struct {
        const uint8_t *key;
        size_t keylen;
        const uint8_t *data;
        size_t datalen;
        size_t cmplen256, cmplen512;
        const char *hex256, *hex512;
    } cases[7] = {
        {k_0b, 20, (const uint8_t *)"Hi There", 8, 32, 64,
         "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7",
         "87aa7cdea5ef619d4ff0b4241a1d6cb02379f4e2ce4ec2787ad0b30545e17cde"
         "daa833b7d6b8a702038b274eaea3f4e4be9d914eeb61f1702e696c203a126854"},
        {(const uint8_t *)"Jefe", 4, (const uint8_t *)"what do ya want for nothing?", 28, 32, 64,
         "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843",
         "164b7a7bfcf819e2e395fbe73b56e0a387bd64222e831fd610270cd7ea250554"
         "9758bf75c05a994a6d034f65f8f0e6fdcaeab1a34d4a6b4b636e070a38bce737"},
        {k_aa20, 20, d_dd, 50, 32, 64,
         "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe",
         "fa73b0089d56a284efb0f0756c890be9b1b5dbdd8ee81a3655f83e33b2279d39"
         "bf3e848279a722c806b485a47e67c807b946a337bee8942674278859e13292fb"},
        {k_seq, 25, d_cd, 50, 32, 64,
         "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b",
         "b0ba465637458c6990e5a8c5f61d4af7e576d97ff94b872de76f8050361ee3db"
         "a91ca5c11aa25eb4d679275cc5788063a5f19741120c4f2de2adebeb10a298dd"},
        {k_0c, 20, (const uint8_t *)"Test With Truncation", 20, 16, 16,
         "a3b6167473100ee06e0c796c2955552b", "415fad6271580a531d4179bc891d87a6"},
        {k_aa131, 131, (const uint8_t *)D6, sizeof D6 - 1, 32, 64,
         "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54",
         "80b24263c7c1a3ebb71493c1dd7be8b49b46d1f41b4aeec1121b013783f8f352"
         "6b56d037e05f2598bd0fd2215d6a1e5295e64f73f63f0aec8b915a985d786598"},
        {k_aa131, 131, (const uint8_t *)D7, sizeof D7 - 1, 32, 64,
         "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2",
         "e37b6a775dc87dbaa4dfa9f96e5e3ffddebd71f8867289865df5a32d20cdc944"
         "b6022cac3c4982b10d5eeb55c3e4de15134676fb6de0446065c97440fa8c6a58"},
    };
    CHECK_INT(sizeof D6 - 1, 54);
    CHECK_INT(sizeof D7 - 1, 152);
    for (int i = 0; i < 7; i++) {
        uint8_t out[64];
        char what[64];
        hbs_hmac_sha256_ctx c256;
        hbs_hmac_sha512_ctx c512;
        hbs_hmac_sha256_init(&c256, cases[i].key, cases[i].keylen);
        hbs_hmac_sha256_update(&c256, cases[i].data, cases[i].datalen);
        hbs_hmac_sha256_final(&c256, out);
        snprintf(what, sizeof what, "HMAC-SHA256 RFC 4231 case %d", i + 1);
        check_hex(what, out, cases[i].cmplen256, cases[i].hex256);
        hbs_hmac_sha512_init(&c512, cases[i].key, cases[i].keylen);
        hbs_hmac_sha512_update(&c512, cases[i].data, cases[i].datalen);
        hbs_hmac_sha512_final(&c512, out);
        snprintf(what, sizeof what, "HMAC-SHA512 RFC 4231 case %d", i + 1);
        check_hex(what, out, cases[i].cmplen512, cases[i].hex512);
    }
    test_note("14 RFC 4231 MACs");
}

/* ---- 2. against the system openssl ------------------------------------------------------- */

/* Lengths of the random messages: every length up to 300 (all block and rate boundaries of
 * every function lie below that), then some longer ones. */
static const size_t LONG_LENS[] = {447, 448, 449, 1000, 1023, 1024, 1025, 4096, 8191, 65537};
#define N_MSGS (301 + sizeof LONG_LENS / sizeof LONG_LENS[0])

static size_t msg_len(size_t i) { return i <= 300 ? i : LONG_LENS[i - 301]; }

typedef struct {
    uint8_t *data[N_MSGS];
    char dir[300];
} msg_files;

static int have_openssl(void)
{
    char line[256] = "";
    FILE *p = popen("openssl version 2>/dev/null", "r");
    if (!p)
        return 0;
    if (!fgets(line, sizeof line, p))
        line[0] = '\0';
    return pclose(p) == 0 && strncmp(line, "OpenSSL", 7) == 0;
}

static int write_file(const char *path, const uint8_t *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    int ok;
    if (!f)
        return 0;
    ok = fwrite(data, 1, len, f) == len;
    return fclose(f) == 0 && ok;
}

/* Writes n files named <dir>/<stem><i>; returns 0 on failure. */
static int write_files(const char *dir, const char *stem, uint8_t *const *data,
                       const size_t *lens, size_t n)
{
    char path[512];
    for (size_t i = 0; i < n; i++) {
        snprintf(path, sizeof path, "%s/%s%zu", dir, stem, i);
        if (!write_file(path, data[i], lens[i]))
            return 0;
    }
    return 1;
}

static void remove_files(const char *dir, const char *stem, size_t n)
{
    char path[512];
    for (size_t i = 0; i < n; i++) {
        snprintf(path, sizeof path, "%s/%s%zu", dir, stem, i);
        unlink(path);
    }
}

/* Runs `openssl dgst ARGS -r <stem>0 .. <stem>{n-1}` in dir and decodes one digest of
 * outlen bytes per file into out. Returns 0 (after reporting why) on any failure. */
static int openssl_dgst(const char *dir, const char *args, const char *stem, size_t n,
                        size_t outlen, uint8_t *out)
{
    size_t cap = strlen(dir) + strlen(args) + n * (strlen(stem) + 24) + 128, used;
    char *cmd = malloc(cap), *line = NULL;
    size_t linecap = 0, got = 0;
    FILE *p;
    int ok = 1;
    if (!cmd)
        return 0;
    used = (size_t)snprintf(cmd, cap, "cd '%s' && openssl dgst %s -r", dir, args);
    for (size_t i = 0; i < n; i++)
        used += (size_t)snprintf(cmd + used, cap - used, " %s%zu", stem, i);
    snprintf(cmd + used, cap - used, " 2>&1");
    p = popen(cmd, "r");
    if (!p) {
        free(cmd);
        test_fail(__FILE__, __LINE__, "popen failed for: openssl dgst %s", args);
        return 0;
    }
    while (getline(&line, &linecap, p) > 0) {
        char name[64];
        size_t hexlen = 2 * outlen;
        uint8_t *bytes;
        snprintf(name, sizeof name, " *%s%zu", stem, got);
        if (got >= n || strlen(line) < hexlen + strlen(name) ||
            strncmp(line + hexlen, name, strlen(name)) != 0) {
            ok = 0;
            break;
        }
        line[hexlen] = '\0';
        bytes = test_unhex(line, NULL);
        if (!bytes) {
            ok = 0;
            break;
        }
        memcpy(out + got * outlen, bytes, outlen);
        free(bytes);
        got++;
    }
    if (pclose(p) != 0 || got != n)
        ok = 0;
    if (!ok)
        test_fail(__FILE__, __LINE__, "openssl dgst %s: unexpected output (%zu of %zu read)%s%s",
                  args, got, n, line ? ": " : "", line ? line : "");
    free(line);
    free(cmd);
    return ok;
}

/* Creates the random message files once per test; NULL if openssl is missing (skipped)
 * or on failure (reported). */
static msg_files *msg_files_create(void)
{
    msg_files *m;
    size_t lens[N_MSGS];
    if (!have_openssl()) {
        test_skip("no usable `openssl` command found (OpenSSL 1.1.1 or later is needed)");
        return NULL;
    }
    m = calloc(1, sizeof *m);
    if (!m) {
        CHECK_MSG(0, "out of memory");
        return NULL;
    }
    snprintf(m->dir, sizeof m->dir, "%s", test_tmpdir());
    for (size_t i = 0; i < N_MSGS; i++) {
        lens[i] = msg_len(i);
        m->data[i] = malloc(lens[i] + 1);
        if (!m->data[i]) {
            CHECK_MSG(0, "out of memory");
            return NULL; /* a test process: the leak on this path does not matter */
        }
        test_rand_bytes(m->data[i], lens[i]);
    }
    if (!write_files(m->dir, "hm", m->data, lens, N_MSGS)) {
        CHECK_MSG(0, "cannot write message files in %s", m->dir);
        return NULL;
    }
    return m;
}

static void msg_files_free(msg_files *m)
{
    if (!m)
        return;
    remove_files(m->dir, "hm", N_MSGS);
    for (size_t i = 0; i < N_MSGS; i++)
        free(m->data[i]);
    free(m);
}

/* Compares one algorithm (at output length outlen) on every message file with openssl. */
static size_t compare_with_openssl(const msg_files *m, const hash_algo *a, const char *args,
                                   size_t outlen)
{
    uint8_t *want = malloc(N_MSGS * outlen), mine[1024];
    size_t bad = 0;
    if (!want) {
        CHECK_MSG(0, "out of memory");
        return 0;
    }
    if (openssl_dgst(m->dir, args, "hm", N_MSGS, outlen, want)) {
        for (size_t i = 0; i < N_MSGS; i++) {
            algo_hash(a, mine, outlen, m->data[i], msg_len(i));
            if (memcmp(mine, want + i * outlen, outlen) != 0 && bad++ < 5)
                test_fail(__FILE__, __LINE__, "%s (openssl %s): differs at message length %zu",
                          a->name, args, msg_len(i));
        }
    }
    free(want);
    return N_MSGS;
}

static void test_openssl_digests(void)
{
    msg_files *m = msg_files_create();
    size_t compared = 0, runs = 0;
    static const size_t xoflens[] = {1, 32, 64, 135, 136, 137, 167, 168, 169, 400};
    if (!m)
        return;
    for (size_t i = 0; i < N_ALGOS; i++) {
        const hash_algo *a = &ALGOS[i];
        if (!a->ossl)
            continue;
        if (!a->xof) {
            compared += compare_with_openssl(m, a, a->ossl, a->outlen);
            runs++;
            continue;
        }
        for (size_t j = 0; j < sizeof xoflens / sizeof xoflens[0]; j++) {
            char args[64];
            snprintf(args, sizeof args, "%s -xoflen %zu", a->ossl, xoflens[j]);
            compared += compare_with_openssl(m, a, args, xoflens[j]);
            runs++;
        }
    }
    /* The one-shot helpers, once each, against SHA-256/SHA-512/SHAKE run above. */
    {
        uint8_t x[64], y[64];
        for (size_t i = 0; i < N_MSGS; i += 37) {
            algo_hash(algo_by_name("sha256"), x, 32, m->data[i], msg_len(i));
            hbs_sha256(y, m->data[i], msg_len(i));
            CHECK_MEM(x, y, 32);
            algo_hash(algo_by_name("sha512"), x, 64, m->data[i], msg_len(i));
            hbs_sha512(y, m->data[i], msg_len(i));
            CHECK_MEM(x, y, 64);
            algo_hash(algo_by_name("shake128"), x, 64, m->data[i], msg_len(i));
            hbs_shake128(y, 64, m->data[i], msg_len(i));
            CHECK_MEM(x, y, 64);
            algo_hash(algo_by_name("shake256"), x, 64, m->data[i], msg_len(i));
            hbs_shake256(y, 64, m->data[i], msg_len(i));
            CHECK_MEM(x, y, 64);
        }
    }
    msg_files_free(m);
    test_note("%zu digests in %zu openssl runs", compared, runs);
}

static void hex_encode(char *out, const uint8_t *in, size_t len)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < len; i++) {
        out[2 * i] = digits[in[i] >> 4];
        out[2 * i + 1] = digits[in[i] & 15];
    }
    out[2 * len] = '\0';
}

static void test_openssl_hmac(void)
{
    static const size_t keylens[] = {0, 1, 20, 32, 63, 64, 65, 100, 127, 128, 129, 131, 300};
    msg_files *m = msg_files_create();
    size_t compared = 0, runs = 0;
    uint8_t key[300], *want = NULL;
    char *args = NULL;
    if (!m)
        return;
    want = malloc(N_MSGS * 64);
    args = malloc(2 * sizeof key + 64);
    if (!want || !args) {
        CHECK_MSG(0, "out of memory");
        goto done;
    }
    for (size_t k = 0; k < sizeof keylens / sizeof keylens[0]; k++) {
        size_t keylen = keylens[k];
        test_rand_bytes(key, keylen);
        for (int wide = 0; wide < 2; wide++) {
            size_t outlen = wide ? 64 : 32;
            const char *md = wide ? "-sha512" : "-sha256";
            size_t used;
            /* openssl refuses an empty hexkey; -hmac "" gives the empty key. */
            if (keylen == 0) {
                snprintf(args, 2 * sizeof key + 64, "%s -hmac ''", md);
            } else {
                used = (size_t)snprintf(args, 2 * sizeof key + 64,
                                        "%s -mac HMAC -macopt hexkey:", md);
                hex_encode(args + used, key, keylen);
            }
            runs++;
            if (!openssl_dgst(m->dir, args, "hm", N_MSGS, outlen, want))
                continue;
            for (size_t i = 0; i < N_MSGS; i++) {
                uint8_t mine[64];
                if (wide) {
                    hbs_hmac_sha512_ctx c;
                    hbs_hmac_sha512_init(&c, keylen ? key : NULL, keylen);
                    hbs_hmac_sha512_update(&c, m->data[i], msg_len(i));
                    hbs_hmac_sha512_final(&c, mine);
                } else {
                    hbs_hmac_sha256_ctx c;
                    hbs_hmac_sha256_init(&c, keylen ? key : NULL, keylen);
                    hbs_hmac_sha256_update(&c, m->data[i], msg_len(i));
                    hbs_hmac_sha256_final(&c, mine);
                }
                CHECK_MSG(memcmp(mine, want + i * outlen, outlen) == 0,
                          "HMAC%s key length %zu message length %zu differs from openssl", md,
                          keylen, msg_len(i));
                compared++;
            }
        }
    }
done:
    free(want);
    free(args);
    msg_files_free(m);
    test_note("%zu MACs in %zu openssl runs", compared, runs);
}

/* MGF1 checked against openssl's SHA-256 / SHA-512 of seed || C for each counter C. */
static void test_openssl_mgf1(void)
{
    static const size_t seedlens[] = {0, 1, 32, 55, 60, 64, 100, 123, 128, 200};
    static const size_t outlens[] = {0, 1, 31, 32, 33, 63, 64, 65, 100, 128, 129, 257, 1000};
    enum { MAXOUT = 1000, MAXSEED = 200, NBLK = MAXOUT / 32 + 1 };
    uint8_t seed[MAXSEED], want[NBLK * 32 + 64], mine[MAXOUT + 1];
    uint8_t *files[NBLK];
    size_t lens[NBLK], checked = 0, runs = 0;
    char dir[300];
    int files_ok = 1;
    if (!have_openssl()) {
        test_skip("no usable `openssl` command found (OpenSSL 1.1.1 or later is needed)");
        return;
    }
    snprintf(dir, sizeof dir, "%s", test_tmpdir());
    for (size_t i = 0; i < NBLK; i++)
        files[i] = malloc(MAXSEED + 4);
    for (size_t i = 0; i < NBLK; i++)
        if (!files[i])
            files_ok = 0;
    for (size_t s = 0; files_ok && s < sizeof seedlens / sizeof seedlens[0]; s++) {
        size_t seedlen = seedlens[s];
        test_rand_bytes(seed, seedlen);
        for (int wide = 0; wide < 2; wide++) {
            size_t hlen = wide ? 64 : 32, nblk = (MAXOUT + hlen - 1) / hlen;
            for (size_t c = 0; c < nblk; c++) {
                memcpy(files[c], seed, seedlen);
                files[c][seedlen] = (uint8_t)(c >> 24);
                files[c][seedlen + 1] = (uint8_t)(c >> 16);
                files[c][seedlen + 2] = (uint8_t)(c >> 8);
                files[c][seedlen + 3] = (uint8_t)c;
                lens[c] = seedlen + 4;
            }
            if (!write_files(dir, "mg", files, lens, nblk)) {
                CHECK_MSG(0, "cannot write files in %s", dir);
                files_ok = 0;
                break;
            }
            runs++;
            if (!openssl_dgst(dir, wide ? "-sha512" : "-sha256", "mg", nblk, hlen, want))
                continue;
            for (size_t o = 0; o < sizeof outlens / sizeof outlens[0]; o++) {
                size_t outlen = outlens[o];
                mine[outlen] = 0x5a;
                if (wide)
                    hbs_mgf1_sha512(mine, outlen, seedlen ? seed : NULL, seedlen);
                else
                    hbs_mgf1_sha256(mine, outlen, seedlen ? seed : NULL, seedlen);
                CHECK_MSG(memcmp(mine, want, outlen) == 0,
                          "MGF1-SHA%d seed length %zu output length %zu differs", wide ? 512 : 256,
                          seedlen, outlen);
                CHECK_MSG(mine[outlen] == 0x5a, "MGF1 wrote past outlen %zu", outlen);
                checked++;
            }
            remove_files(dir, "mg", nblk);
        }
    }
    for (size_t i = 0; i < NBLK; i++)
        free(files[i]);
    CHECK_MSG(files_ok, "out of memory or file error");
    test_note("%zu MGF1 outputs in %zu openssl runs", checked, runs);
}

/* ---- 3. internal consistency ------------------------------------------------------------- */

/* Names of every backend that may be compiled in; the tests run on each one this CPU
 * supports. Extend when adding a backend. */
static const char *const BACKEND_NAMES[] = {"portable", "avx2", "avx512", "shani",
                                            "sha256x8", "neon", NULL};

/* SLH-DSA-SHA2 hashes 22 + k*n bytes after the PK.seed block; the rest sit on either side
 * of the one-block / two-block padding limits of SHA-256 (55/56) and SHA-512 (111/112). */
static const size_t BATCH_LENS[] = {0,   1,   2,   21,  22,  31,  32,  33,  54,  55,
                                    56,  57,  63,  64,  65,  86,  100, 111, 112, 113,
                                    119, 120, 127, 128, 129, 150, 200, 255, 256, 257};
#define MAX_COUNT 40
#define N_BATCH_LENS (sizeof BATCH_LENS / sizeof BATCH_LENS[0])

/* Runs many() for every count 0..MAX_COUNT and compares with precomputed digests `want`
 * (digest i at want + i*dlen); the slot after the last digest must stay untouched. */
typedef void (*many_fn)(uint8_t *out, const void *prefix, const uint8_t *in, size_t inlen,
                        size_t count, size_t outlen);

static void many_sha256(uint8_t *out, const void *prefix, const uint8_t *in, size_t inlen,
                        size_t count, size_t outlen)
{
    (void)outlen;
    hbs_sha256_many(out, prefix, in, inlen, count);
}

static void many_sha512(uint8_t *out, const void *prefix, const uint8_t *in, size_t inlen,
                        size_t count, size_t outlen)
{
    (void)outlen;
    hbs_sha512_many(out, prefix, in, inlen, count);
}

static void many_shake256(uint8_t *out, const void *prefix, const uint8_t *in, size_t inlen,
                          size_t count, size_t outlen)
{
    (void)prefix;
    hbs_shake256_many(out, outlen, in, inlen, count);
}

static int check_all_counts(const char *what, many_fn fn, const void *prefix, const uint8_t *in,
                            size_t inlen, size_t dlen, size_t cmplen, const uint8_t *want,
                            uint8_t *out)
{
    for (size_t count = 0; count <= MAX_COUNT; count++) {
        memset(out, 0xee, (MAX_COUNT + 1) * dlen + 1);
        fn(out, prefix, in, inlen, count, dlen);
        for (size_t i = 0; i < count; i++) {
            if (memcmp(out + i * dlen, want + i * dlen, cmplen) != 0) {
                test_fail(__FILE__, __LINE__, "%s: inlen %zu count %zu: digest %zu differs", what,
                          inlen, count, i);
                return 0;
            }
        }
        for (size_t j = count * dlen; j < (MAX_COUNT + 1) * dlen + 1; j++) {
            if (out[j] != 0xee) {
                test_fail(__FILE__, __LINE__, "%s: inlen %zu count %zu: wrote past the batch",
                          what, inlen, count);
                return 0;
            }
        }
    }
    return 1;
}

/* prelen bytes absorbed by the prefix; variant: 0 SHA-256, 1 SHA-224 (only the first 28
 * bytes of each full digest are compared with SHA-224). */
static void batch_sha256_case(const char *backend, size_t prelen, int sha224, const uint8_t *in,
                              uint8_t *want, uint8_t *out, size_t *cases)
{
    uint8_t pre[256];
    hbs_sha256_ctx prefix;
    char what[128];
    test_rand_bytes(pre, prelen);
    if (sha224)
        hbs_sha224_init(&prefix);
    else
        hbs_sha256_init(&prefix);
    hbs_sha256_update(&prefix, pre, prelen);
    snprintf(what, sizeof what, "sha256_many [%s] %s prefix %zu", backend,
             sha224 ? "sha224" : "sha256", prelen);
    for (size_t l = 0; l < N_BATCH_LENS; l++) {
        size_t inlen = BATCH_LENS[l];
        for (size_t i = 0; i < MAX_COUNT; i++) {
            hbs_sha256_ctx c = prefix;
            hbs_sha256_update(&c, in + i * inlen, inlen);
            if (sha224)
                hbs_sha224_final(&c, want + 32 * i);
            else
                hbs_sha256_final(&c, want + 32 * i);
        }
        /* Without a prefix only the plain SHA-256 case applies. */
        if (check_all_counts(what, many_sha256, (prelen || sha224) ? &prefix : NULL, in, inlen,
                             32, sha224 ? 28 : 32, want, out))
            (*cases)++;
    }
}

static void batch_sha512_case(const char *backend, size_t prelen, int sha512_256,
                              const uint8_t *in, uint8_t *want, uint8_t *out, size_t *cases)
{
    uint8_t pre[256];
    hbs_sha512_ctx prefix;
    char what[128];
    test_rand_bytes(pre, prelen);
    if (sha512_256)
        hbs_sha512_256_init(&prefix);
    else
        hbs_sha512_init(&prefix);
    hbs_sha512_update(&prefix, pre, prelen);
    snprintf(what, sizeof what, "sha512_many [%s] %s prefix %zu", backend,
             sha512_256 ? "sha512-256" : "sha512", prelen);
    for (size_t l = 0; l < N_BATCH_LENS; l++) {
        size_t inlen = BATCH_LENS[l];
        for (size_t i = 0; i < MAX_COUNT; i++) {
            hbs_sha512_ctx c = prefix;
            hbs_sha512_update(&c, in + i * inlen, inlen);
            hbs_sha512_final(&c, want + 64 * i);
        }
        if (check_all_counts(what, many_sha512, (prelen || sha512_256) ? &prefix : NULL, in,
                             inlen, 64, sha512_256 ? 32 : 64, want, out))
            (*cases)++;
    }
}

static void test_batch_matches_single(void)
{
    static const size_t shake_outlens[] = {1, 16, 32, 64, 135, 136, 137, 300};
    const char *original = hbs_backend_name();
    uint8_t *in = malloc(MAX_COUNT * 300), *want = malloc(MAX_COUNT * 300),
            *out = malloc((MAX_COUNT + 1) * 300 + 1);
    size_t cases = 0, backends = 0;
    char ran[256] = "";
    if (!in || !want || !out) {
        CHECK_MSG(0, "out of memory");
        goto done;
    }
    test_rand_bytes(in, MAX_COUNT * 300);
    for (size_t b = 0; BACKEND_NAMES[b]; b++) {
        const char *name = BACKEND_NAMES[b];
        if (hbs_hash_force_backend(name) != HBS_OK)
            continue;
        CHECK(strcmp(hbs_backend_name(), name) == 0);
        backends++;
        if (strlen(ran) + strlen(name) + 2 < sizeof ran) {
            strcat(ran, ran[0] ? " " : "");
            strcat(ran, name);
        }
        /* SHA-256: no prefix, one-block (the SLH-DSA PK.seed block) and two-block
         * midstates, and a SHA-224 midstate (full 32-byte outputs). */
        batch_sha256_case(name, 0, 0, in, want, out, &cases);
        batch_sha256_case(name, 64, 0, in, want, out, &cases);
        batch_sha256_case(name, 128, 0, in, want, out, &cases);
        batch_sha256_case(name, 64, 1, in, want, out, &cases);
        batch_sha512_case(name, 0, 0, in, want, out, &cases);
        batch_sha512_case(name, 128, 0, in, want, out, &cases);
        batch_sha512_case(name, 256, 0, in, want, out, &cases);
        batch_sha512_case(name, 128, 1, in, want, out, &cases);
        for (size_t o = 0; o < sizeof shake_outlens / sizeof shake_outlens[0]; o++) {
            size_t outlen = shake_outlens[o];
            char what[128];
            snprintf(what, sizeof what, "shake256_many [%s] outlen %zu", name, outlen);
            for (size_t l = 0; l < N_BATCH_LENS; l++) {
                size_t inlen = BATCH_LENS[l];
                for (size_t i = 0; i < MAX_COUNT; i++)
                    hbs_shake256(want + i * outlen, outlen, in + i * inlen, inlen);
                if (check_all_counts(what, many_shake256, NULL, in, inlen, outlen, outlen, want,
                                     out))
                    cases++;
            }
        }
        /* A NULL input with length 0, and a prefix with buffered bytes (outside the
         * contract, but it must still give the right answer). */
        {
            uint8_t d[3 * 64], e[64];
            hbs_sha256_ctx p256, c256;
            hbs_sha512_ctx p512, c512;
            hbs_sha256_many(d, NULL, NULL, 0, 3);
            hbs_sha256(e, NULL, 0);
            CHECK_MEM(d + 64, e, 32);
            hbs_sha512_many(d, NULL, NULL, 0, 3);
            hbs_sha512(e, NULL, 0);
            CHECK_MEM(d + 128, e, 64);
            hbs_shake256_many(d, 50, NULL, 0, 3);
            hbs_shake256(e, 50, NULL, 0);
            CHECK_MEM(d + 100, e, 50);
            hbs_sha256_init(&p256);
            hbs_sha256_update(&p256, in, 70);
            hbs_sha256_many(d, &p256, in + 100, 10, 3);
            c256 = p256;
            hbs_sha256_update(&c256, in + 120, 10);
            hbs_sha256_final(&c256, e);
            CHECK_MEM(d + 64, e, 32);
            hbs_sha512_init(&p512);
            hbs_sha512_update(&p512, in, 130);
            hbs_sha512_many(d, &p512, in + 300, 10, 3);
            c512 = p512;
            hbs_sha512_update(&c512, in + 320, 10);
            hbs_sha512_final(&c512, e);
            CHECK_MEM(d + 128, e, 64);
        }
    }
    CHECK_INT(hbs_hash_force_backend(original), HBS_OK);
    CHECK_INT(backends >= 1, 1);
    test_note("%zu (function, length, prefix) cases x counts 0..%d on: %s", cases, MAX_COUNT,
              ran);
done:
    free(in);
    free(want);
    free(out);
}

/* Every function: update split at every offset (and in three pieces, and byte by byte,
 * with empty updates mixed in) gives the one-shot digest. */
static void test_incremental_splits(void)
{
    enum { LEN = 300 };
    uint8_t msg[LEN], ref[200], got[200];
    size_t checks = 0;
    test_rand_bytes(msg, LEN);
    for (size_t a = 0; a < N_ALGOS; a++) {
        const hash_algo *h = &ALGOS[a];
        size_t outlen = h->outlen;
        any_ctx c;
        algo_hash(h, ref, outlen, msg, LEN);
        for (size_t i = 0; i <= LEN; i++) {
            h->init(&c);
            h->update(&c, msg, i);
            h->update(&c, NULL, 0);
            h->update(&c, msg + i, LEN - i);
            h->final(&c, got, outlen);
            CHECK_MSG(memcmp(got, ref, outlen) == 0, "%s: split at %zu differs", h->name, i);
            checks++;
        }
        for (size_t i = 0; i <= LEN; i += 7) {
            for (size_t j = i; j <= LEN; j += 11) {
                h->init(&c);
                h->update(&c, msg, i);
                h->update(&c, msg + i, j - i);
                h->update(&c, msg + j, LEN - j);
                h->final(&c, got, outlen);
                CHECK_MSG(memcmp(got, ref, outlen) == 0, "%s: split at %zu,%zu differs",
                          h->name, i, j);
                checks++;
            }
        }
        h->init(&c);
        for (size_t i = 0; i < LEN; i++)
            h->update(&c, msg + i, 1);
        h->final(&c, got, outlen);
        CHECK_MSG(memcmp(got, ref, outlen) == 0, "%s: byte-by-byte differs", h->name);
        checks++;
    }
    test_note("%zu split checks over %zu functions", checks, (size_t)N_ALGOS);
}

/* SHAKE: squeezing in pieces of any size (including 0) gives the one-shot output. */
static void test_shake_squeeze_pieces(void)
{
    enum { OUT = 1000 };
    static const size_t inlens[] = {0, 1, 135, 136, 137, 167, 168, 169, 300};
    uint8_t msg[300], ref[OUT], got[OUT];
    size_t checks = 0;
    test_rand_bytes(msg, sizeof msg);
    for (int wide = 0; wide < 2; wide++) {
        const hash_algo *h = algo_by_name(wide ? "shake256" : "shake128");
        size_t rate = wide ? HBS_SHAKE256_RATE : HBS_SHAKE128_RATE;
        const size_t fixed[] = {1, 3, 8, 9, rate - 1, rate, rate + 1, 2 * rate + 5};
        for (size_t l = 0; l < sizeof inlens / sizeof inlens[0]; l++) {
            size_t inlen = inlens[l];
            algo_hash(h, ref, OUT, msg, inlen);
            /* Fixed piece sizes, then growing ones, then pseudo-random ones. */
            for (size_t pattern = 0; pattern < sizeof fixed / sizeof fixed[0] + 2; pattern++) {
                any_ctx c;
                size_t done = 0, step = 0;
                h->init(&c);
                h->update(&c, msg, inlen);
                while (done < OUT) {
                    size_t piece;
                    if (pattern < sizeof fixed / sizeof fixed[0]) {
                        piece = fixed[pattern];
                    } else if (pattern == sizeof fixed / sizeof fixed[0]) {
                        piece = step++; /* 0, 1, 2, ... */
                    } else {
                        uint8_t r[2];
                        test_rand_bytes(r, 2);
                        piece = (size_t)((r[0] << 8 | r[1]) % 300);
                    }
                    if (piece > OUT - done)
                        piece = OUT - done;
                    hbs_keccak_squeeze(&c.k, got + done, piece);
                    done += piece;
                }
                CHECK_MSG(memcmp(got, ref, OUT) == 0, "%s inlen %zu: squeeze pattern %zu differs",
                          h->name, inlen, pattern);
                checks++;
            }
        }
    }
    test_note("%zu piecewise squeezes", checks);
}

/* ---- 4. backends ------------------------------------------------------------------------ */

static void test_backend_force(void)
{
    const hbs_hash_backend *start = hbs_hash_backend_active();
    const char *original;
    CHECK(start != NULL);
    if (!start)
        return;
    original = start->name;
    CHECK(original != NULL && strcmp(hbs_backend_name(), original) == 0);
    CHECK_INT(hbs_hash_force_backend("portable"), HBS_OK);
    CHECK(strcmp(hbs_backend_name(), "portable") == 0);
    CHECK(strcmp(hbs_hash_backend_active()->name, "portable") == 0);
    CHECK_INT(hbs_hash_force_backend("no-such-backend"), HBS_ERR_UNSUPPORTED);
    CHECK_INT(hbs_hash_force_backend(""), HBS_ERR_UNSUPPORTED);
    CHECK_INT(hbs_hash_force_backend("PORTABLE"), HBS_ERR_UNSUPPORTED);
    CHECK_INT(hbs_hash_force_backend(NULL), HBS_ERR_INVALID_ARGUMENT);
    /* A rejected name leaves the backend as it was. */
    CHECK(strcmp(hbs_backend_name(), "portable") == 0);
    CHECK_INT(hbs_hash_force_backend(original), HBS_OK);
    CHECK(hbs_hash_backend_active() == start);
    test_note("active backend: %s", original);
}

const hbs_test hbs_tests_hash[] = {
    {"hash_sha2_published", test_sha2_published},
    {"hash_sha3_shake_published", test_sha3_published},
    {"hash_hmac_rfc4231", test_hmac_rfc4231},
    {"hash_openssl_digests", test_openssl_digests},
    {"hash_openssl_hmac", test_openssl_hmac},
    {"hash_openssl_mgf1", test_openssl_mgf1},
    {"hash_batch_matches_single", test_batch_matches_single},
    {"hash_incremental_splits", test_incremental_splits},
    {"hash_shake_squeeze_pieces", test_shake_squeeze_pieces},
    {"hash_backend_force", test_backend_force},
    {NULL, NULL},
};
