/* The per-group driver of the SHA-512 lane kernels (sha512_plan.h says what a plan holds):
 * a template, included once per vector width by sha512_avx2.c and sha512_avx512.c with
 *   SG_V            the vector type (one message per 64-bit lane)
 *   SG_LANES        its lanes
 *   SG_NAME(f)      the name of function f for that width; the includer has defined
 *                   load (16 transposed big-endian words of SG_LANES blocks),
 *                   compress, compress_const and store (the digests of the active lanes)
 *   SG_BCAST(x)     x in every lane
 *   SG_MERGE(m, mask, tmpl)   (m & mask) | tmpl
 * No include guard, on purpose. */

/* Digests of messages first .. first+active-1 (active <= SG_LANES). m and copy are the
 * caller's scratch, wiped by it. */
static void SG_NAME(group)(uint8_t *out, const hbs_sha512_plan *pl, const uint8_t *in,
                           size_t first, size_t active, SG_V m[16],
                           uint8_t (*copy)[HBS_SHA512_BLOCK], int *copied)
{
    const uint8_t *p[SG_LANES];
    SG_V s[8];
#pragma GCC unroll 16
    for (unsigned j = 0; j < 8; j++)
        s[j] = SG_BCAST(pl->h[j]);
    for (size_t blk = 0; blk < pl->full; blk++) {
        hbs_sha512_block_pointers(p, SG_LANES, pl, in, first, active, blk, copy, copied);
        SG_NAME(load)(m, p);
        SG_NAME(compress)(s, m);
    }
    if (pl->rem) {
        hbs_sha512_block_pointers(p, SG_LANES, pl, in, first, active, pl->full, copy, copied);
        SG_NAME(load)(m, p);
#pragma GCC unroll 16
        for (unsigned j = 0; j < 16; j++)
            m[j] = SG_MERGE(m[j], SG_BCAST(pl->mask[j]), SG_BCAST(pl->tmpl[j]));
        SG_NAME(compress)(s, m);
    }
    if (pl->has_const)
        SG_NAME(compress_const)(s, pl->kw);
    SG_NAME(store)(out + 64 * first, s, active);
}
