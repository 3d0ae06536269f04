/* Keccak-f[1600] and the sponge modes built on it: SHA3-224/256/384/512 and SHAKE128/256
 * (FIPS 202), portable C.
 *
 * Lanes are kept as native 64-bit words; bytes enter and leave in little-endian order
 * through explicit shifts, so the code is endian-neutral. A round reads one array and
 * writes another, so two rounds per loop step need no copying. */
#include <string.h>

#include "hbs/hbs.h"
#include "hash/hash.h"

const uint64_t hbs_keccak_rc[24] = {
    0x0000000000000001ULL, 0x0000000000008082ULL, 0x800000000000808aULL, 0x8000000080008000ULL,
    0x000000000000808bULL, 0x0000000080000001ULL, 0x8000000080008081ULL, 0x8000000000008009ULL,
    0x000000000000008aULL, 0x0000000000000088ULL, 0x0000000080008009ULL, 0x000000008000000aULL,
    0x000000008000808bULL, 0x800000000000008bULL, 0x8000000000008089ULL, 0x8000000000008003ULL,
    0x8000000000008002ULL, 0x8000000000000080ULL, 0x000000000000800aULL, 0x800000008000000aULL,
    0x8000000080008081ULL, 0x8000000000008080ULL, 0x0000000080000001ULL, 0x8000000080008008ULL,
};

static inline uint64_t rotl64(uint64_t x, unsigned n) { return (x << n) | (x >> (64 - n)); }

static inline uint64_t load_le64(const uint8_t *p)
{
    return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 | (uint64_t)p[3] << 24 |
           (uint64_t)p[4] << 32 | (uint64_t)p[5] << 40 | (uint64_t)p[6] << 48 |
           (uint64_t)p[7] << 56;
}

static inline void store_le64(uint8_t *p, uint64_t v)
{
    for (unsigned i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* theta, rho, pi, chi and iota of one round, from `in` into `out`. Lane (x, y) is index
 * x + 5y. For each output plane the five lanes that pi moves there are gathered (with
 * their theta column term and rho rotation) into b0..b4, then chi mixes them. */
static inline void keccak_round(uint64_t *restrict out, const uint64_t *restrict in, uint64_t rc)
{
    uint64_t b0, b1, b2, b3, b4;
    const uint64_t c0 = in[0] ^ in[5] ^ in[10] ^ in[15] ^ in[20];
    const uint64_t c1 = in[1] ^ in[6] ^ in[11] ^ in[16] ^ in[21];
    const uint64_t c2 = in[2] ^ in[7] ^ in[12] ^ in[17] ^ in[22];
    const uint64_t c3 = in[3] ^ in[8] ^ in[13] ^ in[18] ^ in[23];
    const uint64_t c4 = in[4] ^ in[9] ^ in[14] ^ in[19] ^ in[24];
    const uint64_t d0 = c4 ^ rotl64(c1, 1);
    const uint64_t d1 = c0 ^ rotl64(c2, 1);
    const uint64_t d2 = c1 ^ rotl64(c3, 1);
    const uint64_t d3 = c2 ^ rotl64(c4, 1);
    const uint64_t d4 = c3 ^ rotl64(c0, 1);
    /* plane 0 */
    b0 = in[0] ^ d0;
    b1 = rotl64(in[6] ^ d1, 44);
    b2 = rotl64(in[12] ^ d2, 43);
    b3 = rotl64(in[18] ^ d3, 21);
    b4 = rotl64(in[24] ^ d4, 14);
    out[0] = b0 ^ (~b1 & b2) ^ rc;
    out[1] = b1 ^ (~b2 & b3);
    out[2] = b2 ^ (~b3 & b4);
    out[3] = b3 ^ (~b4 & b0);
    out[4] = b4 ^ (~b0 & b1);
    /* plane 1 */
    b0 = rotl64(in[3] ^ d3, 28);
    b1 = rotl64(in[9] ^ d4, 20);
    b2 = rotl64(in[10] ^ d0, 3);
    b3 = rotl64(in[16] ^ d1, 45);
    b4 = rotl64(in[22] ^ d2, 61);
    out[5] = b0 ^ (~b1 & b2);
    out[6] = b1 ^ (~b2 & b3);
    out[7] = b2 ^ (~b3 & b4);
    out[8] = b3 ^ (~b4 & b0);
    out[9] = b4 ^ (~b0 & b1);
    /* plane 2 */
    b0 = rotl64(in[1] ^ d1, 1);
    b1 = rotl64(in[7] ^ d2, 6);
    b2 = rotl64(in[13] ^ d3, 25);
    b3 = rotl64(in[19] ^ d4, 8);
    b4 = rotl64(in[20] ^ d0, 18);
    out[10] = b0 ^ (~b1 & b2);
    out[11] = b1 ^ (~b2 & b3);
    out[12] = b2 ^ (~b3 & b4);
    out[13] = b3 ^ (~b4 & b0);
    out[14] = b4 ^ (~b0 & b1);
    /* plane 3 */
    b0 = rotl64(in[4] ^ d4, 27);
    b1 = rotl64(in[5] ^ d0, 36);
    b2 = rotl64(in[11] ^ d1, 10);
    b3 = rotl64(in[17] ^ d2, 15);
    b4 = rotl64(in[23] ^ d3, 56);
    out[15] = b0 ^ (~b1 & b2);
    out[16] = b1 ^ (~b2 & b3);
    out[17] = b2 ^ (~b3 & b4);
    out[18] = b3 ^ (~b4 & b0);
    out[19] = b4 ^ (~b0 & b1);
    /* plane 4 */
    b0 = rotl64(in[2] ^ d2, 62);
    b1 = rotl64(in[8] ^ d3, 55);
    b2 = rotl64(in[14] ^ d4, 39);
    b3 = rotl64(in[15] ^ d0, 41);
    b4 = rotl64(in[21] ^ d1, 2);
    out[20] = b0 ^ (~b1 & b2);
    out[21] = b1 ^ (~b2 & b3);
    out[22] = b2 ^ (~b3 & b4);
    out[23] = b3 ^ (~b4 & b0);
    out[24] = b4 ^ (~b0 & b1);
}

/* The scratch array is not wiped: this runs millions of times per signature, and callers
 * wipe the contexts that hold the state (as the SHA-2 compressions leave their schedule). */
void hbs_keccak_f1600_portable(uint64_t s[25])
{
    uint64_t t[25];
    for (unsigned i = 0; i < 24; i += 2) {
        keccak_round(t, s, hbs_keccak_rc[i]);
        keccak_round(s, t, hbs_keccak_rc[i + 1]);
    }
}

static void keccak_start(hbs_keccak_ctx *c, size_t rate, uint8_t pad)
{
    memset(c->s, 0, sizeof c->s);
    c->pos = 0;
    c->rate = rate;
    c->pad = pad;
    c->squeezing = 0;
}

void hbs_shake128_init(hbs_keccak_ctx *c) { keccak_start(c, HBS_SHAKE128_RATE, 0x1f); }
void hbs_shake256_init(hbs_keccak_ctx *c) { keccak_start(c, HBS_SHAKE256_RATE, 0x1f); }

/* outbits other than 224, 384 or 512 give SHA3-256: the interface has no error return. */
void hbs_sha3_init(hbs_keccak_ctx *c, size_t outbits)
{
    size_t outbytes = (outbits == 224 || outbits == 384 || outbits == 512) ? outbits / 8 : 32;
    keccak_start(c, 200 - 2 * outbytes, 0x06);
}

/* XOR n bytes into the state starting at byte offset pos (pos + n <= rate). */
static void xor_bytes(uint64_t s[25], size_t pos, const uint8_t *in, size_t n)
{
    while (n && (pos & 7)) {
        s[pos >> 3] ^= (uint64_t)*in++ << (8 * (pos & 7));
        pos++;
        n--;
    }
    while (n >= 8) {
        s[pos >> 3] ^= load_le64(in);
        pos += 8;
        in += 8;
        n -= 8;
    }
    while (n) {
        s[pos >> 3] ^= (uint64_t)*in++ << (8 * (pos & 7));
        pos++;
        n--;
    }
}

/* Copy n bytes of the state starting at byte offset pos (pos + n <= rate). */
static void extract_bytes(const uint64_t s[25], size_t pos, uint8_t *out, size_t n)
{
    while (n && (pos & 7)) {
        *out++ = (uint8_t)(s[pos >> 3] >> (8 * (pos & 7)));
        pos++;
        n--;
    }
    while (n >= 8) {
        store_le64(out, s[pos >> 3]);
        pos += 8;
        out += 8;
        n -= 8;
    }
    while (n) {
        *out++ = (uint8_t)(s[pos >> 3] >> (8 * (pos & 7)));
        pos++;
        n--;
    }
}

void hbs_keccak_absorb(hbs_keccak_ctx *c, const uint8_t *in, size_t len)
{
    size_t pos = c->pos, rate = c->rate;
    while (len) {
        size_t take = rate - pos < len ? rate - pos : len;
        xor_bytes(c->s, pos, in, take);
        pos += take;
        in += take;
        len -= take;
        if (pos == rate) {
            hbs_keccak_f1600_portable(c->s);
            pos = 0;
        }
    }
    c->pos = pos;
}

void hbs_keccak_squeeze(hbs_keccak_ctx *c, uint8_t *out, size_t len)
{
    size_t pos = c->pos, rate = c->rate;
    if (!c->squeezing) {
        /* pad10*1 after the domain bits; the rate is a multiple of 8, so its last byte is
         * the top byte of a lane. */
        c->s[pos >> 3] ^= (uint64_t)c->pad << (8 * (pos & 7));
        c->s[(rate - 1) >> 3] ^= 0x80ULL << 56;
        hbs_keccak_f1600_portable(c->s);
        c->squeezing = 1;
        pos = 0;
    }
    while (len) {
        if (pos == rate) {
            hbs_keccak_f1600_portable(c->s);
            pos = 0;
        }
        size_t take = rate - pos < len ? rate - pos : len;
        extract_bytes(c->s, pos, out, take);
        pos += take;
        out += take;
        len -= take;
    }
    c->pos = pos;
}

void hbs_sha3_final(hbs_keccak_ctx *c, uint8_t *out)
{
    hbs_keccak_squeeze(c, out, (200 - c->rate) / 2);
    hbs_memzero(c, sizeof *c);
}

void hbs_shake256(uint8_t *out, size_t outlen, const uint8_t *in, size_t inlen)
{
    hbs_keccak_ctx c;
    hbs_shake256_init(&c);
    hbs_keccak_absorb(&c, in, inlen);
    hbs_keccak_squeeze(&c, out, outlen);
    hbs_memzero(&c, sizeof c);
}

void hbs_shake128(uint8_t *out, size_t outlen, const uint8_t *in, size_t inlen)
{
    hbs_keccak_ctx c;
    hbs_shake128_init(&c);
    hbs_keccak_absorb(&c, in, inlen);
    hbs_keccak_squeeze(&c, out, outlen);
    hbs_memzero(&c, sizeof c);
}
