/* Keccak-f[1600] rounds on several states at once, one state per 64-bit lane of a vector
 * of words (state i in lane i of 25 words): a template, included by keccak_x8.h once per
 * vector width with
 *   KL_V         the vector type (__m512i: eight states, __m256i: four)
 *   KL_NAME(f)   the name of function f for that width
 *   KL_ZERO, KL_SET1(v), XOR, XOR3, CHI, ROL   its operations
 * No include guard, on purpose. */

/* Theta's parity of column x: the XOR of words x, x + 5, .., x + 20, leaving out the words
 * whose bit is set in `zero` (a compile-time constant: words known to be zero, which a
 * three-way vpternlogq would still read). */
static inline __attribute__((always_inline)) KL_V KL_NAME(column)(const KL_V *a, unsigned x,
                                                               const uint32_t zero)
{
    KL_V v[5];
    unsigned k = 0;
#pragma GCC unroll 5
    for (unsigned y = 0; y < 5; y++)
        if (!(zero >> (x + 5 * y) & 1))
            v[k++] = a[x + 5 * y];
    switch (k) {
    case 5:
        return XOR3(XOR3(v[0], v[1], v[2]), v[3], v[4]);
    case 4:
        return XOR3(XOR(v[0], v[1]), v[2], v[3]);
    case 3:
        return XOR3(v[0], v[1], v[2]);
    case 2:
        return XOR(v[0], v[1]);
    case 1:
        return v[0];
    default:
        return KL_ZERO;
    }
}

/* One round from `a` into `e`; word (x, y) is index x + 5y; words whose bit is set in the
 * constant `zero` are zero (the first round of a fresh one-block state), as in KL_NAME(column). For each output plane the five
 * words that pi moves there are gathered with theta's column term and rho's rotation into
 * b0..b4, then chi mixes them; iota touches word 0.
 *
 * Register budget (32 zmm): the 25 words, theta's five D terms and the plane's five b
 * terms just fit. Folding D into the words as XOR3(A, C[x-1], rol(C[x+1], 1)) would save
 * five instructions a round but keep ten terms live instead of five, and the spills cost
 * more than it saves. Each plane writes e[x+3], e[x+4] first: after them b0 and b1 are
 * dead, so the last three chi steps can overwrite their first operand in place. */
static inline __attribute__((always_inline)) void
KL_NAME(keccak_round)(KL_V *restrict e, const KL_V *restrict a, uint64_t rc, const uint32_t zero)
{
    KL_V b0, b1, b2, b3, b4;
    const KL_V c0 = KL_NAME(column)(a, 0, zero), c1 = KL_NAME(column)(a, 1, zero);
    const KL_V c2 = KL_NAME(column)(a, 2, zero), c3 = KL_NAME(column)(a, 3, zero);
    const KL_V c4 = KL_NAME(column)(a, 4, zero);
    const KL_V d0 = XOR(c4, ROL(c1, 1));
    const KL_V d1 = XOR(c0, ROL(c2, 1));
    const KL_V d2 = XOR(c1, ROL(c3, 1));
    const KL_V d3 = XOR(c2, ROL(c4, 1));
    const KL_V d4 = XOR(c3, ROL(c0, 1));
    /* plane 0 */
    b0 = XOR(a[0], d0);
    b1 = ROL(XOR(a[6], d1), 44);
    b2 = ROL(XOR(a[12], d2), 43);
    b3 = ROL(XOR(a[18], d3), 21);
    b4 = ROL(XOR(a[24], d4), 14);
    e[3] = CHI(b3, b4, b0);
    e[4] = CHI(b4, b0, b1);
    e[0] = XOR(CHI(b0, b1, b2), KL_SET1((long long)rc));
    e[1] = CHI(b1, b2, b3);
    e[2] = CHI(b2, b3, b4);
    /* plane 1 */
    b0 = ROL(XOR(a[3], d3), 28);
    b1 = ROL(XOR(a[9], d4), 20);
    b2 = ROL(XOR(a[10], d0), 3);
    b3 = ROL(XOR(a[16], d1), 45);
    b4 = ROL(XOR(a[22], d2), 61);
    e[8] = CHI(b3, b4, b0);
    e[9] = CHI(b4, b0, b1);
    e[5] = CHI(b0, b1, b2);
    e[6] = CHI(b1, b2, b3);
    e[7] = CHI(b2, b3, b4);
    /* plane 2 */
    b0 = ROL(XOR(a[1], d1), 1);
    b1 = ROL(XOR(a[7], d2), 6);
    b2 = ROL(XOR(a[13], d3), 25);
    b3 = ROL(XOR(a[19], d4), 8);
    b4 = ROL(XOR(a[20], d0), 18);
    e[13] = CHI(b3, b4, b0);
    e[14] = CHI(b4, b0, b1);
    e[10] = CHI(b0, b1, b2);
    e[11] = CHI(b1, b2, b3);
    e[12] = CHI(b2, b3, b4);
    /* plane 3 */
    b0 = ROL(XOR(a[4], d4), 27);
    b1 = ROL(XOR(a[5], d0), 36);
    b2 = ROL(XOR(a[11], d1), 10);
    b3 = ROL(XOR(a[17], d2), 15);
    b4 = ROL(XOR(a[23], d3), 56);
    e[18] = CHI(b3, b4, b0);
    e[19] = CHI(b4, b0, b1);
    e[15] = CHI(b0, b1, b2);
    e[16] = CHI(b1, b2, b3);
    e[17] = CHI(b2, b3, b4);
    /* plane 4 */
    b0 = ROL(XOR(a[2], d2), 62);
    b1 = ROL(XOR(a[8], d3), 55);
    b2 = ROL(XOR(a[14], d4), 39);
    b3 = ROL(XOR(a[15], d0), 41);
    b4 = ROL(XOR(a[21], d1), 2);
    e[23] = CHI(b3, b4, b0);
    e[24] = CHI(b4, b0, b1);
    e[20] = CHI(b0, b1, b2);
    e[21] = CHI(b1, b2, b3);
    e[22] = CHI(b2, b3, b4);
}

/* Keccak-f[1600] on the states of one vector, two rounds per loop step, ping-ponging between two
 * arrays that the compiler keeps in registers (the loop body indexes them only by
 * constants). The first round reads the state and the last writes it back directly: a
 * copy loop would become a memcpy through the stack. Inlined where the state is a local
 * array, it never leaves registers. The words flagged in the constant `zero` are zero on
 * entry, and the first round leaves them out of theta. */
static inline __attribute__((always_inline)) void KL_NAME(permute_zero)(KL_V s[25],
                                                                  const uint32_t zero)
{
    KL_V a[25], t[25];
    KL_NAME(keccak_round)(t, s, hbs_keccak_rc[0], zero);
    KL_NAME(keccak_round)(a, t, hbs_keccak_rc[1], 0);
    for (unsigned i = 2; i < 22; i += 2) {
        KL_NAME(keccak_round)(t, a, hbs_keccak_rc[i], 0);
        KL_NAME(keccak_round)(a, t, hbs_keccak_rc[i + 1], 0);
    }
    KL_NAME(keccak_round)(t, a, hbs_keccak_rc[22], 0);
    KL_NAME(keccak_round)(s, t, hbs_keccak_rc[23], 0);
}
