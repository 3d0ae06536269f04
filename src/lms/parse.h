/* The parse step of LMS verification, apart from the tree code so that C++ callers (the
 * GPU batch verifier) can share it: verify_parse checks a bare LMS signature's typecodes
 * against the bare LMS public key pk, its index and its length (sig may be followed by more
 * data); it returns the signature's length, or 0 if it is malformed. */
#ifndef HBS_LMS_PARSE_H
#define HBS_LMS_PARSE_H

#include <stddef.h>
#include <stdint.h>

#include "lms/params.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    const hbs_lms_type *t;
    const hbs_lmots_type *o;
    const uint8_t *pk, *sig;
    uint32_t q;
} hbs_lms_parsed;

size_t hbs_lms_verify_parse(hbs_lms_parsed *v, const uint8_t *pk, size_t pklen,
                            const uint8_t *sig, size_t siglen);

#ifdef __cplusplus
}
#endif
#endif
