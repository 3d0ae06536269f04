/* Base64 (RFC 4648, section 4: the standard alphabet with '=' padding).
 *
 * Both directions run in time independent of the data bytes: no table lookup or branch
 * depends on a data byte, because PEM files carry secret keys.
 */
#ifndef HBS_ENCODING_BASE64_H
#define HBS_ENCODING_BASE64_H

#include <stddef.h>
#include <stdint.h>

/* Characters the encoding of n bytes takes (no NUL, no line breaks). */
size_t hbs_base64_encoded_len(size_t n);

/* Writes hbs_base64_encoded_len(inlen) characters to out (no NUL terminator). */
void hbs_base64_encode(char *out, const uint8_t *in, size_t inlen);

/* Decodes base64 text, skipping spaces, tabs, CR and LF anywhere when skip_space is set.
 * Strict otherwise: only alphabet characters, a total that is a multiple of 4, at most two
 * '=' and only at the very end, and zero bits in the unused low bits of the last character
 * (so every byte string has exactly one accepted encoding). *outlen holds the capacity of
 * out on entry and the bytes written on return. Returns 0, or -1 if the text is malformed
 * or out is too small; on error out is zeroed up to its capacity. */
int hbs_base64_decode(uint8_t *out, size_t *outlen, const char *in, size_t inlen,
                      int skip_space);

#endif
