#include "encoding/der.h"

void hbs_der_reader_init(hbs_der_reader *r, const uint8_t *in, size_t inlen)
{
    r->p = in;
    r->len = in ? inlen : 0;
}

int hbs_der_done(const hbs_der_reader *r) { return r->len == 0; }

int hbs_der_peek_tag(const hbs_der_reader *r) { return r->len ? r->p[0] : -1; }

/* Parses the length octets at p (avail bytes); sets *len and *used. DER (X.690 10.1) wants
 * the short form below 128 and otherwise the fewest length bytes, with no leading zero. */
static int read_length(const uint8_t *p, size_t avail, size_t *len, size_t *used)
{
    if (avail == 0)
        return -1;
    if (p[0] < 0x80) {
        *len = p[0];
        *used = 1;
        return 0;
    }
    size_t nbytes = p[0] & 0x7fu;
    if (nbytes == 0 || nbytes > 3 || nbytes >= avail) /* 0x80 is the BER indefinite form */
        return -1;
    if (p[1] == 0)
        return -1; /* a leading zero byte: not the shortest form */
    size_t v = 0;
    for (size_t i = 1; i <= nbytes; i++)
        v = (v << 8) | p[i];
    if (v < 0x80)
        return -1; /* fits the short form */
    *len = v;
    *used = 1 + nbytes;
    return 0;
}

int hbs_der_read_any(hbs_der_reader *r, int *tag, hbs_der_reader *contents)
{
    if (r->len < 2)
        return -1;
    /* Tag numbers of 31 and up need more identifier octets; nothing here uses them. */
    if ((r->p[0] & 0x1fu) == 0x1fu)
        return -1;
    size_t len, used;
    if (read_length(r->p + 1, r->len - 1, &len, &used) != 0)
        return -1;
    size_t header = 1 + used;
    /* header <= r->len holds, so this comparison cannot wrap. */
    if (len > r->len - header)
        return -1;
    if (tag)
        *tag = r->p[0];
    contents->p = r->p + header;
    contents->len = len;
    r->p += header + len;
    r->len -= header + len;
    return 0;
}

int hbs_der_read(hbs_der_reader *r, int tag, hbs_der_reader *contents)
{
    if (hbs_der_peek_tag(r) != tag)
        return -1;
    return hbs_der_read_any(r, NULL, contents);
}

int hbs_der_read_bits(hbs_der_reader *r, int tag, hbs_der_reader *bytes)
{
    hbs_der_reader save = *r, c;
    if (hbs_der_read(r, tag, &c) != 0)
        return -1;
    /* The first contents byte counts the unused bits of the last byte; a key is whole bytes. */
    if (c.len < 1 || c.p[0] != 0) {
        *r = save;
        return -1;
    }
    bytes->p = c.p + 1;
    bytes->len = c.len - 1;
    return 0;
}

int hbs_der_read_small_uint(hbs_der_reader *r, unsigned *value)
{
    hbs_der_reader save = *r, c;
    if (hbs_der_read(r, HBS_DER_INTEGER, &c) != 0)
        return -1;
    /* One byte holds every value used here (versions 0 and 1); 0x00-0x7f is then the only
     * minimal, non-negative form. */
    if (c.len != 1 || c.p[0] >= 0x80) {
        *r = save;
        return -1;
    }
    *value = c.p[0];
    return 0;
}

int hbs_der_oid_valid(const hbs_der_reader *oid)
{
    if (oid->len == 0)
        return 0;
    int arc_start = 1;
    for (size_t i = 0; i < oid->len; i++) {
        uint8_t b = oid->p[i];
        if (arc_start && b == 0x80)
            return 0; /* a leading 0x80 pads the arc: not the shortest form */
        arc_start = (b & 0x80) == 0;
    }
    return arc_start; /* the last byte must end an arc */
}

size_t hbs_der_header_len(size_t len)
{
    if (len < 0x80)
        return 2;
    if (len <= 0xff)
        return 3;
    if (len <= 0xffff)
        return 4;
    return 5;
}

size_t hbs_der_put_header(uint8_t *out, int tag, size_t len)
{
    size_t h = hbs_der_header_len(len);
    out[0] = (uint8_t)tag;
    if (h == 2) {
        out[1] = (uint8_t)len;
        return 2;
    }
    size_t nbytes = h - 2;
    out[1] = (uint8_t)(0x80u | nbytes);
    for (size_t i = 0; i < nbytes; i++)
        out[2 + i] = (uint8_t)(len >> (8 * (nbytes - 1 - i)));
    return h;
}
