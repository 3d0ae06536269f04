/* The SHA-512 compression with AVX-512 (vprorq, vpternlogq) on several messages at once, one
 * per 64-bit lane: a template, included by sha512_avx512.c once per vector width with
 *   SR_V          the vector type (__m512i: eight messages, __m256i with AVX-512VL: four)
 *   SR_NAME(f)    the name of function f for that width
 *   ADD, ROR, SHR, TL (vpternlogq), BCAST   its operations
 * and ROUNDS16, KW_LOADED, KW_NEXT, KW_CONST and the TL_ truth tables from the includer.
 * No include guard, on purpose. */

/* One round. The sum for the new e is ordered so that only its last two additions wait for
 * Sigma1(e): h + K + W is ready rounds ahead. */
static inline __attribute__((always_inline)) void SR_NAME(round)(SR_V a, SR_V b, SR_V c,
                                                                 SR_V *d, SR_V e, SR_V f,
                                                                 SR_V g, SR_V *h, SR_V kw)
{
    SR_V t1 = ADD(ADD(*h, kw), TL(e, f, g, TL_CH));
    t1 = ADD(t1, TL(ROR(e, 14), ROR(e, 18), ROR(e, 41), TL_XOR3));
    *d = ADD(*d, t1);
    *h = ADD(ADD(t1, TL(a, b, c, TL_MAJ)), TL(ROR(a, 28), ROR(a, 34), ROR(a, 39), TL_XOR3));
}

/* W[t], t >= 16, in a ring of 16: w[t & 15] += sigma0(w[t-15]) + w[t-7] + sigma1(w[t-2]). */
static inline __attribute__((always_inline)) SR_V SR_NAME(next_w)(SR_V w[16], unsigned t)
{
    SR_V w15 = w[(t + 1) & 15], w2 = w[(t + 14) & 15];
    SR_V s0 = TL(ROR(w15, 1), ROR(w15, 8), SHR(w15, 7), TL_XOR3);
    SR_V s1 = TL(ROR(w2, 19), ROR(w2, 61), SHR(w2, 6), TL_XOR3);
    w[t & 15] = ADD(ADD(w[t & 15], s0), ADD(w[(t + 9) & 15], s1));
    return w[t & 15];
}

/* s += the working variables after the 80 rounds. */
static inline __attribute__((always_inline)) void SR_NAME(add_state)(SR_V s[8], SR_V a, SR_V b,
                                                                     SR_V c, SR_V d, SR_V e,
                                                                     SR_V f, SR_V g, SR_V h)
{
    s[0] = ADD(s[0], a);
    s[1] = ADD(s[1], b);
    s[2] = ADD(s[2], c);
    s[3] = ADD(s[3], d);
    s[4] = ADD(s[4], e);
    s[5] = ADD(s[5], f);
    s[6] = ADD(s[6], g);
    s[7] = ADD(s[7], h);
}

/* One compression of a block per lane, given as 16 transposed big-endian words. */
static void SR_NAME(compress)(SR_V s[8], SR_V m[16])
{
    SR_V a = s[0], b = s[1], c = s[2], d = s[3], e = s[4], f = s[5], g = s[6], h = s[7];
    SR_V w[16];
    /* Hidden from the optimizer, so that the round constants stay in memory and are added
     * with an embedded broadcast, not built in a general register and moved over. */
    const uint64_t *k = hbs_sha512_K;
    __asm__("" : "+r"(k));
    memcpy(w, m, sizeof w);
    ROUNDS16(SR_NAME(round), 0, KW_LOADED);
    ROUNDS16(SR_NAME(round), 16, KW_NEXT);
    ROUNDS16(SR_NAME(round), 32, KW_NEXT);
    ROUNDS16(SR_NAME(round), 48, KW_NEXT);
    ROUNDS16(SR_NAME(round), 64, KW_NEXT);
    SR_NAME(add_state)(s, a, b, c, d, e, f, g, h);
}

/* One compression of a block that is the same in every lane, from its K + W. */
static void SR_NAME(compress_const)(SR_V s[8], const uint64_t kw[80])
{
    SR_V a = s[0], b = s[1], c = s[2], d = s[3], e = s[4], f = s[5], g = s[6], h = s[7];
    ROUNDS16(SR_NAME(round), 0, KW_CONST);
    ROUNDS16(SR_NAME(round), 16, KW_CONST);
    ROUNDS16(SR_NAME(round), 32, KW_CONST);
    ROUNDS16(SR_NAME(round), 48, KW_CONST);
    ROUNDS16(SR_NAME(round), 64, KW_CONST);
    SR_NAME(add_state)(s, a, b, c, d, e, f, g, h);
}
