/* Constant-time helpers: no branch or memory index depends on the data compared. */
#ifndef HBS_CT_H
#define HBS_CT_H
#include <stddef.h>
#include <stdint.h>

/* 0 if equal, 1 otherwise; time depends only on len. */
static inline int hbs_ct_memneq(const uint8_t *a, const uint8_t *b, size_t len)
{
    uint8_t d = 0;
    for (size_t i = 0; i < len; i++)
        d |= (uint8_t)(a[i] ^ b[i]);
    return (int)((((uint32_t)d) + 0xffu) >> 8);
}
#endif
