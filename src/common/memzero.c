#include <string.h>

#include "hbs/hbs.h"

/* A volatile function pointer keeps the compiler from proving the store dead. */
static void *(*const volatile memset_v)(void *, int, size_t) = memset;

void hbs_memzero(void *p, size_t len)
{
    if (p && len)
        memset_v(p, 0, len);
}
