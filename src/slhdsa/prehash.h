#ifndef HBS_SLHDSA_PREHASH_H
#define HBS_SLHDSA_PREHASH_H

#include "hbs/slhdsa.h"

#define SLHDSA_PREHASH_OID_BYTES 11
#define SLHDSA_PREHASH_MAX_DIGEST 64

/* Writes the DER OID (11 bytes) of ph followed by PH(msg); returns the bytes written, or 0
 * for an unknown ph. out holds at least 11 + 64 bytes. */
size_t hbs_slhdsa_prehash(uint8_t *out, hbs_prehash ph, const uint8_t *msg, size_t msglen);

#endif
