#include "encoding/base64.h"

#include <string.h>

#include "hbs/hbs.h"

/* All ones if a >= b, else 0; a and b below 2^31. Branch-free so that data never steers
 * control flow or memory addresses. */
static uint32_t ge_mask(uint32_t a, uint32_t b)
{
    return 0u - (((a - b) >> 31) ^ 1u);
}

static uint32_t range_mask(uint32_t c, uint32_t lo, uint32_t hi)
{
    return ge_mask(c, lo) & ge_mask(hi, c);
}

/* The character for a 6-bit value: 'A'-'Z', 'a'-'z', '0'-'9', '+', '/' by offsets that
 * switch on as v crosses 26, 52, 62 and 63. */
static char encode_char(uint32_t v)
{
    uint32_t c = v + 'A';
    c += ge_mask(v, 26) & 6u;   /* 'a' - 'A' - 26 */
    c -= ge_mask(v, 52) & 75u;  /* from 'a' + 26 down to '0' */
    c -= ge_mask(v, 62) & 15u;  /* from '0' + 10 down to '+' */
    c += ge_mask(v, 63) & 3u;   /* from '+' + 1 up to '/' */
    return (char)c;
}

/* The 6-bit value of an alphabet character; *valid becomes all ones for one, else 0. */
static uint32_t decode_char(uint32_t c, uint32_t *valid)
{
    uint32_t up = range_mask(c, 'A', 'Z');
    uint32_t lo = range_mask(c, 'a', 'z');
    uint32_t dg = range_mask(c, '0', '9');
    uint32_t pl = range_mask(c, '+', '+');
    uint32_t sl = range_mask(c, '/', '/');
    *valid = up | lo | dg | pl | sl;
    return (up & (c - 'A')) | (lo & (c - 'a' + 26)) | (dg & (c - '0' + 52)) | (pl & 62u) |
           (sl & 63u);
}

size_t hbs_base64_encoded_len(size_t n) { return (n + 2) / 3 * 4; }

void hbs_base64_encode(char *out, const uint8_t *in, size_t inlen)
{
    size_t i = 0;
    for (; i + 3 <= inlen; i += 3) {
        uint32_t w = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | in[i + 2];
        *out++ = encode_char(w >> 18);
        *out++ = encode_char((w >> 12) & 63u);
        *out++ = encode_char((w >> 6) & 63u);
        *out++ = encode_char(w & 63u);
    }
    size_t rest = inlen - i;
    if (rest == 0)
        return;
    uint32_t w = (uint32_t)in[i] << 16;
    if (rest == 2)
        w |= (uint32_t)in[i + 1] << 8;
    *out++ = encode_char(w >> 18);
    *out++ = encode_char((w >> 12) & 63u);
    *out++ = rest == 2 ? encode_char((w >> 6) & 63u) : '=';
    *out = '=';
}

static int is_space(uint8_t c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

int hbs_base64_decode(uint8_t *out, size_t *outlen, const char *in, size_t inlen,
                      int skip_space)
{
    size_t cap = *outlen, n = 0, q = 0, pads = 0;
    uint32_t quad[4] = {0, 0, 0, 0}, bad = 0;
    int finished = 0, ok = 0;
    for (size_t i = 0; i < inlen; i++) {
        uint8_t c = (uint8_t)in[i];
        if (skip_space && is_space(c))
            continue;
        if (finished)
            goto done; /* anything after the padded last group */
        if (c == '=') {
            if (q < 2)
                goto done; /* a group keeps at least two characters (one byte) */
            pads++;
            quad[q++] = 0;
        } else {
            if (pads)
                goto done; /* data after padding */
            uint32_t valid;
            quad[q++] = decode_char(c, &valid);
            bad |= ~valid;
        }
        if (q < 4)
            continue;
        size_t bytes = 3 - pads;
        if (bytes > cap - n)
            goto done;
        uint32_t w = quad[0] << 18 | quad[1] << 12 | quad[2] << 6 | quad[3];
        uint8_t b[3] = {(uint8_t)(w >> 16), (uint8_t)(w >> 8), (uint8_t)w};
        memcpy(out + n, b, bytes);
        hbs_memzero(b, sizeof b);
        n += bytes;
        /* Bits below the last byte must be zero, or two texts would decode alike. */
        if (pads == 1)
            bad |= quad[2] & 3u;
        else if (pads == 2)
            bad |= quad[1] & 15u;
        finished = pads > 0;
        q = 0;
    }
    ok = q == 0 && bad == 0;
done:
    hbs_memzero(quad, sizeof quad);
    if (!ok) {
        hbs_memzero(out, cap);
        *outlen = 0;
        return -1;
    }
    *outlen = n;
    return 0;
}
