/* Key files: SLH-DSA keys in the encodings of RFC 9909.
 *
 * Followed from RFC 9909:
 *  - Section 3 ("Algorithm Identifiers"): the OIDs id-slh-dsa-* = sigAlgs 20..31 and
 *    id-hash-slh-dsa-*-with-* = sigAlgs 35..46, sigAlgs = 2.16.840.1.101.3.4.3, each range
 *    in the order SHA2-128s, 128f, 192s, 192f, 256s, 256f, SHAKE-128s, ..., SHAKE-256f,
 *    which is also the order of hbs_slhdsa_id; the parameters field MUST be absent.
 *  - "Subject Public Key Fields": subjectPublicKey BIT STRING holds the raw FIPS 205 public
 *    key PK.seed || PK.root (2n bytes) with no further ASN.1 wrapping.
 *  - "Private Key Format": OneAsymmetricKey (RFC 5958) whose privateKey OCTET STRING holds
 *    the raw FIPS 205 secret key SK.seed || SK.prf || PK.seed || PK.root (4n bytes) directly,
 *    with no inner OCTET STRING; an optional publicKey [1] holds the raw public key.
 *  - Appendix C: the example keys, which the unit tests reproduce byte for byte. We write the
 *    secret key as that example does: version 0, no attributes, no public key.
 * PEM is the textual encoding of RFC 7468 ("PUBLIC KEY", "PRIVATE KEY").
 */
#include "hbs/keyfile.h"

#include <string.h>

#include "common/ct.h"
#include "hbs/lms.h"
#include "hbs/xmss.h"
#include "encoding/base64.h"
#include "encoding/der.h"

/* ---- algorithm identifiers ---------------------------------------------------------- */

/* DER contents of sigAlgs = 2.16.840.1.101.3.4.3; an SLH-DSA OID appends one arc byte. */
static const uint8_t sig_algs_prefix[8] = {0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x03};
#define OID_CONTENTS_LEN 9

_Static_assert(HBS_KEY_MAX_BYTES >= HBS_SLHDSA_MAX_SK_BYTES, "key buffer too small");

/* Arcs under sigAlgs, indexed by hbs_slhdsa_id; written out rather than computed so that the
 * table reads like the RFC's list. */
static const uint8_t pure_arc[HBS_SLHDSA_NUM_PARAMS] = {
    20, /* id-slh-dsa-sha2-128s */
    21, /* id-slh-dsa-sha2-128f */
    22, /* id-slh-dsa-sha2-192s */
    23, /* id-slh-dsa-sha2-192f */
    24, /* id-slh-dsa-sha2-256s */
    25, /* id-slh-dsa-sha2-256f */
    26, /* id-slh-dsa-shake-128s */
    27, /* id-slh-dsa-shake-128f */
    28, /* id-slh-dsa-shake-192s */
    29, /* id-slh-dsa-shake-192f */
    30, /* id-slh-dsa-shake-256s */
    31, /* id-slh-dsa-shake-256f */
};
static const uint8_t hash_arc[HBS_SLHDSA_NUM_PARAMS] = {
    35, /* id-hash-slh-dsa-sha2-128s-with-sha256 */
    36, /* id-hash-slh-dsa-sha2-128f-with-sha256 */
    37, /* id-hash-slh-dsa-sha2-192s-with-sha512 */
    38, /* id-hash-slh-dsa-sha2-192f-with-sha512 */
    39, /* id-hash-slh-dsa-sha2-256s-with-sha512 */
    40, /* id-hash-slh-dsa-sha2-256f-with-sha512 */
    41, /* id-hash-slh-dsa-shake-128s-with-shake128 */
    42, /* id-hash-slh-dsa-shake-128f-with-shake128 */
    43, /* id-hash-slh-dsa-shake-192s-with-shake256 */
    44, /* id-hash-slh-dsa-shake-192f-with-shake256 */
    45, /* id-hash-slh-dsa-shake-256s-with-shake256 */
    46, /* id-hash-slh-dsa-shake-256f-with-shake256 */
};
static const hbs_prehash bound_prehash[HBS_SLHDSA_NUM_PARAMS] = {
    HBS_PREHASH_SHA2_256,  HBS_PREHASH_SHA2_256,  HBS_PREHASH_SHA2_512,  HBS_PREHASH_SHA2_512,
    HBS_PREHASH_SHA2_512,  HBS_PREHASH_SHA2_512,  HBS_PREHASH_SHAKE_128, HBS_PREHASH_SHAKE_128,
    HBS_PREHASH_SHAKE_256, HBS_PREHASH_SHAKE_256, HBS_PREHASH_SHAKE_256, HBS_PREHASH_SHAKE_256,
};

hbs_prehash hbs_slhdsa_oid_prehash(hbs_slhdsa_id alg)
{
    if ((unsigned)alg >= HBS_SLHDSA_NUM_PARAMS)
        return HBS_PREHASH_NONE;
    return bound_prehash[alg];
}

/* Maps OID contents to a parameter set and pre-hash; -1 if the OID is not one of ours. */
static int oid_lookup(const hbs_der_reader *oid, hbs_slhdsa_id *alg, hbs_prehash *ph)
{
    if (oid->len != OID_CONTENTS_LEN || memcmp(oid->p, sig_algs_prefix, 8) != 0)
        return -1;
    uint8_t arc = oid->p[8];
    for (unsigned i = 0; i < HBS_SLHDSA_NUM_PARAMS; i++) {
        if (arc == pure_arc[i] || arc == hash_arc[i]) {
            *alg = (hbs_slhdsa_id)i;
            *ph = arc == pure_arc[i] ? HBS_PREHASH_NONE : bound_prehash[i];
            return 0;
        }
    }
    return -1;
}

/* RFC 9802 OIDs of the stateful schemes' public keys, indexed by hbs_scheme - HBS_SCHEME_HSS. */
static const struct {
    uint8_t len, bytes[11];
} stateful_oid[3] = {
    {11, {0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x09, 0x10, 0x03, 0x11}}, /* hss-lms */
    {8, {0x2b, 0x06, 0x01, 0x05, 0x05, 0x07, 0x06, 0x22}},                   /* xmss */
    {8, {0x2b, 0x06, 0x01, 0x05, 0x05, 0x07, 0x06, 0x23}},                   /* xmssmt */
};

static int is_stateful(hbs_scheme s) { return s >= HBS_SCHEME_HSS && s <= HBS_SCHEME_XMSSMT; }

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Whether len bytes are a well-formed public key of a stateful scheme: known typecodes or
 * OID, and the length they imply. */
static int stateful_pk_valid(hbs_scheme scheme, const uint8_t *pk, size_t len)
{
    if (len < 4)
        return 0;
    if (scheme == HBS_SCHEME_HSS) {
        const hbs_lms_type *t;
        const hbs_lmots_type *o;
        uint32_t levels = be32(pk);
        if (len < 12 || levels < 1 || levels > HBS_HSS_MAX_LEVELS)
            return 0;
        t = hbs_lms_type_by_code(be32(pk + 4));
        o = hbs_lmots_type_by_code(be32(pk + 8));
        return t && o && hbs_lms_type_m(t) == hbs_lmots_type_n(o) &&
               len == 4 + hbs_lms_pk_bytes(t);
    }
    const hbs_xmss_params *p = hbs_xmss_params_by_oid(scheme == HBS_SCHEME_XMSSMT, be32(pk));
    return p && len == hbs_xmss_pk_bytes(p);
}

/* Parses the contents of an AlgorithmIdentifier. A well-formed OID that is not ours is
 * HBS_ERR_UNKNOWN_ALGORITHM (whatever its parameters); ours with parameters is malformed. */
static int parse_algid(hbs_der_reader a, hbs_key *k)
{
    hbs_der_reader oid, params;
    if (hbs_der_read(&a, HBS_DER_OID, &oid) != 0 || !hbs_der_oid_valid(&oid))
        return HBS_ERR_MALFORMED_KEY;
    int has_params = !hbs_der_done(&a);
    if (has_params && (hbs_der_read_any(&a, NULL, &params) != 0 || !hbs_der_done(&a)))
        return HBS_ERR_MALFORMED_KEY;
    k->scheme = HBS_SCHEME_SLHDSA;
    if (oid_lookup(&oid, &k->alg, &k->prehash) != 0) {
        int found = 0;
        for (unsigned i = 0; i < 3 && !found; i++) {
            if (oid.len == stateful_oid[i].len &&
                memcmp(oid.p, stateful_oid[i].bytes, oid.len) == 0) {
                k->scheme = (hbs_scheme)(HBS_SCHEME_HSS + i);
                k->alg = (hbs_slhdsa_id)0;
                k->prehash = HBS_PREHASH_NONE;
                found = 1;
            }
        }
        if (!found)
            return HBS_ERR_UNKNOWN_ALGORITHM;
    }
    return has_params ? HBS_ERR_MALFORMED_KEY : HBS_OK;
}

static size_t oid_len(const hbs_key *k)
{
    return is_stateful(k->scheme) ? stateful_oid[k->scheme - HBS_SCHEME_HSS].len
                                  : OID_CONTENTS_LEN;
}

static size_t algid_len(const hbs_key *k) { return 2 + 2 + oid_len(k); }

static size_t put_algid(uint8_t *out, const hbs_key *k)
{
    size_t o = hbs_der_put_header(out, HBS_DER_SEQUENCE, 2 + oid_len(k));
    o += hbs_der_put_header(out + o, HBS_DER_OID, oid_len(k));
    if (is_stateful(k->scheme)) {
        memcpy(out + o, stateful_oid[k->scheme - HBS_SCHEME_HSS].bytes, oid_len(k));
        return o + oid_len(k);
    }
    memcpy(out + o, sig_algs_prefix, 8);
    out[o + 8] = k->prehash == HBS_PREHASH_NONE ? pure_arc[k->alg] : hash_arc[k->alg];
    return o + OID_CONTENTS_LEN;
}

/* ---- key checks ------------------------------------------------------------------------ */

static size_t key_len(hbs_slhdsa_id alg, hbs_key_kind kind)
{
    const hbs_slhdsa_params *p = hbs_slhdsa_params_get(alg);
    if (!p)
        return 0;
    return kind == HBS_KEY_SECRET ? hbs_slhdsa_sk_bytes(p) : hbs_slhdsa_pk_bytes(p);
}

/* Whether a key structure is one we can encode. */
static int key_valid(const hbs_key *k)
{
    if (is_stateful(k->scheme))
        return k->kind == HBS_KEY_PUBLIC && k->len <= sizeof k->bytes &&
               stateful_pk_valid(k->scheme, k->bytes, k->len);
    if (k->scheme != HBS_SCHEME_SLHDSA)
        return 0;
    if (k->kind != HBS_KEY_PUBLIC && k->kind != HBS_KEY_SECRET)
        return 0;
    if ((unsigned)k->alg >= HBS_SLHDSA_NUM_PARAMS)
        return 0;
    if (k->prehash != HBS_PREHASH_NONE && k->prehash != bound_prehash[k->alg])
        return 0;
    size_t want = key_len(k->alg, k->kind);
    return want != 0 && k->len == want;
}

/* ---- DER ------------------------------------------------------------------------------- */

/* Length of the contents of the outer SEQUENCE of a valid key's DER encoding. */
static size_t der_body_len(const hbs_key *k)
{
    if (k->kind == HBS_KEY_PUBLIC)
        return algid_len(k) + hbs_der_header_len(k->len + 1) + 1 + k->len;
    return 3 + algid_len(k) + hbs_der_header_len(k->len) + k->len;
}

static size_t der_len(const hbs_key *k)
{
    size_t body = der_body_len(k);
    return hbs_der_header_len(body) + body;
}

/* Writes the DER encoding of a valid key into out, which holds der_len(k) bytes. */
static size_t put_der(uint8_t *out, const hbs_key *k)
{
    size_t o = hbs_der_put_header(out, HBS_DER_SEQUENCE, der_body_len(k));
    if (k->kind == HBS_KEY_PUBLIC) {
        o += put_algid(out + o, k);
        o += hbs_der_put_header(out + o, HBS_DER_BIT_STRING, k->len + 1);
        out[o++] = 0; /* no unused bits */
    } else {
        o += hbs_der_put_header(out + o, HBS_DER_INTEGER, 1);
        out[o++] = 0; /* version v1 (0): no publicKey field */
        o += put_algid(out + o, k);
        o += hbs_der_put_header(out + o, HBS_DER_OCTET_STRING, k->len);
    }
    memcpy(out + o, k->bytes, k->len);
    return o + k->len;
}

/* SubjectPublicKeyInfo ::= SEQUENCE { algorithm AlgorithmIdentifier, subjectPublicKey BIT
 * STRING }, given the outer SEQUENCE's contents. */
static int parse_spki(hbs_key *k, hbs_der_reader r)
{
    hbs_der_reader algid, bits;
    if (hbs_der_read(&r, HBS_DER_SEQUENCE, &algid) != 0 ||
        hbs_der_read_bits(&r, HBS_DER_BIT_STRING, &bits) != 0 || !hbs_der_done(&r))
        return HBS_ERR_MALFORMED_KEY;
    int err = parse_algid(algid, k);
    if (err)
        return err;
    if (is_stateful(k->scheme) ? bits.len > sizeof k->bytes ||
                                     !stateful_pk_valid(k->scheme, bits.p, bits.len)
                               : bits.len != key_len(k->alg, HBS_KEY_PUBLIC))
        return HBS_ERR_MALFORMED_KEY;
    k->kind = HBS_KEY_PUBLIC;
    k->len = bits.len;
    memcpy(k->bytes, bits.p, bits.len);
    return HBS_OK;
}

/* Attributes ::= SET OF Attribute, Attribute ::= SEQUENCE { type OID, values SET }: checked
 * two levels deep without recursion; the values themselves are opaque to us. */
static int attributes_valid(hbs_der_reader set)
{
    while (!hbs_der_done(&set)) {
        hbs_der_reader attr, type, values;
        if (hbs_der_read(&set, HBS_DER_SEQUENCE, &attr) != 0 ||
            hbs_der_read(&attr, HBS_DER_OID, &type) != 0 || !hbs_der_oid_valid(&type) ||
            hbs_der_read(&attr, HBS_DER_SET, &values) != 0 || !hbs_der_done(&attr))
            return 0;
    }
    return 1;
}

/* OneAsymmetricKey ::= SEQUENCE { version, privateKeyAlgorithm, privateKey OCTET STRING,
 * attributes [0] IMPLICIT OPTIONAL, publicKey [1] IMPLICIT BIT STRING OPTIONAL }. RFC 5958:
 * version is v2 (1) exactly when publicKey is present, else v1 (0). */
static int parse_pkcs8(hbs_key *k, hbs_der_reader r)
{
    hbs_der_reader algid, priv, attrs, pub = {NULL, 0};
    unsigned version;
    if (hbs_der_read_small_uint(&r, &version) != 0 || version > 1 ||
        hbs_der_read(&r, HBS_DER_SEQUENCE, &algid) != 0 ||
        hbs_der_read(&r, HBS_DER_OCTET_STRING, &priv) != 0)
        return HBS_ERR_MALFORMED_KEY;
    if (hbs_der_peek_tag(&r) == HBS_DER_CONTEXT_0_CONSTRUCTED &&
        (hbs_der_read(&r, HBS_DER_CONTEXT_0_CONSTRUCTED, &attrs) != 0 || !attributes_valid(attrs)))
        return HBS_ERR_MALFORMED_KEY;
    int has_pub = hbs_der_peek_tag(&r) == HBS_DER_CONTEXT_1_PRIMITIVE;
    if (has_pub && hbs_der_read_bits(&r, HBS_DER_CONTEXT_1_PRIMITIVE, &pub) != 0)
        return HBS_ERR_MALFORMED_KEY;
    if (!hbs_der_done(&r) || (unsigned)has_pub != version)
        return HBS_ERR_MALFORMED_KEY;
    int err = parse_algid(algid, k);
    if (err)
        return err;
    if (k->scheme != HBS_SCHEME_SLHDSA) /* stateful secret keys live in state files */
        return HBS_ERR_UNSUPPORTED;
    size_t sk_len = key_len(k->alg, HBS_KEY_SECRET), pk_len = key_len(k->alg, HBS_KEY_PUBLIC);
    if (priv.len != sk_len)
        return HBS_ERR_MALFORMED_KEY;
    /* The public key is the sk's last 2n bytes (PK.seed || PK.root); both are public, but
     * compare without early exit anyway since the buffer sits next to secrets. */
    if (has_pub && (pub.len != pk_len || hbs_ct_memneq(pub.p, priv.p + (sk_len - pk_len), pk_len)))
        return HBS_ERR_MALFORMED_KEY;
    k->kind = HBS_KEY_SECRET;
    k->len = sk_len;
    memcpy(k->bytes, priv.p, sk_len);
    return HBS_OK;
}

/* Decodes one DER key; want is the kind a PEM label demands, or 0 for either. */
static int decode_der(hbs_key *k, const uint8_t *in, size_t inlen, int want)
{
    hbs_der_reader all, body;
    hbs_der_reader_init(&all, in, inlen);
    if (hbs_der_read(&all, HBS_DER_SEQUENCE, &body) != 0 || !hbs_der_done(&all))
        return HBS_ERR_MALFORMED_KEY;
    /* The first field tells the two structures apart: an AlgorithmIdentifier SEQUENCE in a
     * SubjectPublicKeyInfo, the version INTEGER in a OneAsymmetricKey. */
    int first = hbs_der_peek_tag(&body);
    if (first == HBS_DER_SEQUENCE && want != HBS_KEY_SECRET)
        return parse_spki(k, body);
    if (first == HBS_DER_INTEGER && want != HBS_KEY_PUBLIC)
        return parse_pkcs8(k, body);
    return HBS_ERR_MALFORMED_KEY;
}

/* ---- PEM ------------------------------------------------------------------------------- */

#define PEM_DASHES "-----"
#define PEM_BEGIN "-----BEGIN "
#define PEM_END "-----END "
/* The largest DER a PEM key file may hold: room for attributes beyond our own encodings. */
#define PEM_DER_MAX 2048

static const char *pem_label(hbs_key_kind kind)
{
    return kind == HBS_KEY_SECRET ? "PRIVATE KEY" : "PUBLIC KEY";
}

/* Offset of the first occurrence of needle in in[from, len), or len if there is none. */
static size_t find(const uint8_t *in, size_t len, size_t from, const char *needle)
{
    size_t nl = strlen(needle);
    for (size_t i = from; i < len && len - i >= nl; i++)
        if (memcmp(in + i, needle, nl) == 0)
            return i;
    return len;
}

/* Whether in[at, len) starts with s; advances *at past it if so. */
static int take(const uint8_t *in, size_t len, size_t *at, const char *s)
{
    size_t sl = strlen(s);
    if (len - *at < sl || memcmp(in + *at, s, sl) != 0)
        return 0;
    *at += sl;
    return 1;
}

static int is_blank(uint8_t c) { return c == ' ' || c == '\t'; }
static int is_space(uint8_t c) { return is_blank(c) || c == '\r' || c == '\n'; }

/* Parses the label of "-----BEGIN LABEL-----" at *at (just after "-----BEGIN "), then blanks
 * and the line end. Returns the key kind, or 0 if the label is not one of ours. */
static int take_begin_label(const uint8_t *in, size_t len, size_t *at)
{
    int kind;
    if (take(in, len, at, "PUBLIC KEY" PEM_DASHES))
        kind = HBS_KEY_PUBLIC;
    else if (take(in, len, at, "PRIVATE KEY" PEM_DASHES))
        kind = HBS_KEY_SECRET;
    else
        return 0;
    while (*at < len && is_blank(in[*at]))
        (*at)++;
    if (*at < len && in[*at] == '\r')
        (*at)++;
    return take(in, len, at, "\n") ? kind : 0;
}

static int decode_pem(hbs_key *k, const uint8_t *in, size_t inlen)
{
    /* Text before the BEGIN line is allowed: RFC 7468 section 2 wants parsers to cope with
     * data outside the encapsulation boundaries. */
    size_t at = find(in, inlen, 0, PEM_BEGIN);
    if (at == inlen)
        return HBS_ERR_MALFORMED_KEY;
    at += strlen(PEM_BEGIN);
    int kind = take_begin_label(in, inlen, &at);
    if (!kind)
        return HBS_ERR_MALFORMED_KEY;
    size_t body = at, end = find(in, inlen, at, PEM_END);
    if (end == inlen || (end > body && in[end - 1] != '\n'))
        return HBS_ERR_MALFORMED_KEY; /* no END line, or END not at the start of a line */
    at = end + strlen(PEM_END);
    if (!take(in, inlen, &at, pem_label((hbs_key_kind)kind)) || !take(in, inlen, &at, PEM_DASHES))
        return HBS_ERR_MALFORMED_KEY;
    for (; at < inlen; at++)
        if (!is_space(in[at]))
            return HBS_ERR_MALFORMED_KEY; /* only white space may follow the END line */

    uint8_t der[PEM_DER_MAX];
    size_t derlen = sizeof der;
    int err = HBS_ERR_MALFORMED_KEY;
    if (hbs_base64_decode(der, &derlen, (const char *)in + body, end - body, 1) == 0)
        err = decode_der(k, der, derlen, kind);
    hbs_memzero(der, sizeof der);
    return err;
}

/* Writes "<boundary><label>-----\n" (no NUL); returns its length. */
static size_t put_line(char *out, const char *boundary, const char *label)
{
    size_t o = 0;
    const char *parts[3] = {boundary, label, PEM_DASHES};
    for (size_t i = 0; i < 3; i++) {
        size_t l = strlen(parts[i]);
        memcpy(out + o, parts[i], l);
        o += l;
    }
    out[o++] = '\n';
    return o;
}

/* ---- public functions ------------------------------------------------------------------ */

int hbs_key_encode_der(const hbs_key *k, uint8_t *out, size_t *outlen)
{
    if (!outlen)
        return HBS_ERR_INVALID_ARGUMENT;
    size_t cap = *outlen;
    *outlen = 0;
    if (!out)
        return HBS_ERR_INVALID_ARGUMENT;
    if (!k || !key_valid(k)) {
        hbs_memzero(out, cap);
        return HBS_ERR_INVALID_ARGUMENT;
    }
    size_t need = der_len(k);
    if (need > cap) {
        hbs_memzero(out, cap);
        *outlen = need; /* tell the caller how much room it takes */
        return HBS_ERR_BUFFER_TOO_SMALL;
    }
    *outlen = put_der(out, k);
    return HBS_OK;
}

int hbs_key_encode_pem(const hbs_key *k, char *out, size_t *outlen)
{
    if (!outlen)
        return HBS_ERR_INVALID_ARGUMENT;
    size_t cap = *outlen;
    *outlen = 0;
    if (!out)
        return HBS_ERR_INVALID_ARGUMENT;
    if (!k || !key_valid(k)) {
        hbs_memzero(out, cap);
        return HBS_ERR_INVALID_ARGUMENT;
    }
    uint8_t der[HBS_KEY_DER_MAX]; /* der_len() is at most 150 */
    size_t derlen = put_der(der, k);
    const char *label = pem_label(k->kind);
    size_t b64 = hbs_base64_encoded_len(derlen), lines = (b64 + 63) / 64;
    size_t head = strlen(PEM_BEGIN) + strlen(label) + strlen(PEM_DASHES) + 1;
    size_t tail = strlen(PEM_END) + strlen(label) + strlen(PEM_DASHES) + 1;
    size_t need = head + b64 + lines + tail + 1; /* + 1 for the NUL */
    if (need > cap) {
        hbs_memzero(der, sizeof der);
        hbs_memzero(out, cap);
        *outlen = need; /* tell the caller how much room it takes */
        return HBS_ERR_BUFFER_TOO_SMALL;
    }
    size_t o = put_line(out, PEM_BEGIN, label);
    /* 48 bytes make exactly one 64-character line; only the last chunk can need padding. */
    for (size_t i = 0; i < derlen; i += 48) {
        size_t chunk = derlen - i < 48 ? derlen - i : 48;
        hbs_base64_encode(out + o, der + i, chunk);
        o += hbs_base64_encoded_len(chunk);
        out[o++] = '\n';
    }
    o += put_line(out + o, PEM_END, label);
    out[o] = '\0';
    hbs_memzero(der, sizeof der);
    *outlen = o;
    return HBS_OK;
}

int hbs_key_decode(hbs_key *k, const uint8_t *in, size_t inlen)
{
    if (!k)
        return HBS_ERR_INVALID_ARGUMENT;
    hbs_key_wipe(k);
    if (!in && inlen)
        return HBS_ERR_INVALID_ARGUMENT;
    int err = HBS_ERR_MALFORMED_KEY;
    /* Every DER key starts with a SEQUENCE tag (0x30, the character '0'); anything else is
     * taken as PEM. A '0' that starts explanatory text before a PEM block still gets there. */
    if (inlen > 0 && in[0] == HBS_DER_SEQUENCE)
        err = decode_der(k, in, inlen, 0);
    if (err == HBS_ERR_MALFORMED_KEY && find(in, inlen, 0, PEM_BEGIN) < inlen) {
        hbs_key_wipe(k);
        err = decode_pem(k, in, inlen);
    }
    if (err)
        hbs_key_wipe(k);
    return err;
}

void hbs_key_wipe(hbs_key *k)
{
    if (k)
        hbs_memzero(k, sizeof *k);
}
