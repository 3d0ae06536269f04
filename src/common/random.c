#include <errno.h>
#include <sys/random.h>

#include "hbs/hbs.h"

int hbs_randombytes(uint8_t *out, size_t len)
{
    size_t done = 0;
    while (done < len) {
        size_t chunk = len - done > 256 ? 256 : len - done;
        ssize_t r = getrandom(out + done, chunk, 0);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            hbs_memzero(out, len);
            return HBS_ERR_RANDOMNESS;
        }
        done += (size_t)r;
    }
    return HBS_OK;
}
