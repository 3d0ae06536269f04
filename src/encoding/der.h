/* A strict reader and a small writer for the DER subset that key files need.
 *
 * The reader accepts only what DER allows: one-byte tags (no high tag numbers), definite
 * lengths in the shortest form, and contents that lie wholly inside the enclosing element.
 * It never recurses: a caller walks nested elements one level at a time, so hostile input
 * cannot exhaust the stack. Lengths are limited to HBS_DER_MAX_LEN, far above any key file,
 * so no length arithmetic can overflow.
 */
#ifndef HBS_ENCODING_DER_H
#define HBS_ENCODING_DER_H

#include <stddef.h>
#include <stdint.h>

/* Universal and context-specific tags used by SubjectPublicKeyInfo and OneAsymmetricKey. */
#define HBS_DER_INTEGER 0x02
#define HBS_DER_BIT_STRING 0x03
#define HBS_DER_OCTET_STRING 0x04
#define HBS_DER_NULL 0x05
#define HBS_DER_OID 0x06
#define HBS_DER_SEQUENCE 0x30
#define HBS_DER_SET 0x31
#define HBS_DER_CONTEXT_0_CONSTRUCTED 0xa0 /* [0] IMPLICIT SET OF, as in attributes */
#define HBS_DER_CONTEXT_1_PRIMITIVE 0x81   /* [1] IMPLICIT BIT STRING, as in publicKey */

/* The longest contents the reader accepts (a length of up to three bytes). */
#define HBS_DER_MAX_LEN 0xffffffu

/* A window on bytes still to be read. */
typedef struct {
    const uint8_t *p;
    size_t len;
} hbs_der_reader;

void hbs_der_reader_init(hbs_der_reader *r, const uint8_t *in, size_t inlen);

/* Whether every byte of the window has been consumed. */
int hbs_der_done(const hbs_der_reader *r);

/* Tag of the next element, or -1 if the window is empty. Consumes nothing. */
int hbs_der_peek_tag(const hbs_der_reader *r);

/* Reads one element of any tag: its tag into *tag (may be NULL) and a window on its contents
 * into *contents. Returns 0, or -1 if the next bytes are not one well-formed DER element; on
 * error the reader is left unchanged. */
int hbs_der_read_any(hbs_der_reader *r, int *tag, hbs_der_reader *contents);

/* Reads one element that must carry `tag`; -1 if it is absent, malformed or of another tag. */
int hbs_der_read(hbs_der_reader *r, int tag, hbs_der_reader *contents);

/* Reads a BIT STRING (under `tag`, which is HBS_DER_BIT_STRING or an implicit tag) whose
 * unused-bit count is 0, and returns a window on the bytes after that count. */
int hbs_der_read_bits(hbs_der_reader *r, int tag, hbs_der_reader *bytes);

/* Reads an INTEGER that is small and not negative, in its minimal encoding. */
int hbs_der_read_small_uint(hbs_der_reader *r, unsigned *value);

/* Whether the contents of an OBJECT IDENTIFIER are well formed: not empty, each arc in the
 * shortest base-128 form, the last byte ending an arc. */
int hbs_der_oid_valid(const hbs_der_reader *oid);

/* ---- writing ---- */

/* Bytes the identifier and length octets take for contents of `len` bytes. */
size_t hbs_der_header_len(size_t len);

/* Writes the tag and length octets; returns how many were written (hbs_der_header_len(len)).
 * `len` must not exceed HBS_DER_MAX_LEN; the caller has checked that out has room. */
size_t hbs_der_put_header(uint8_t *out, int tag, size_t len);

#endif
