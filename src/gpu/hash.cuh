/* Device hash primitives: SHA-256 and SHA-512 compressions and Keccak-f[1600].
 *
 * Every function works on registers only: the message schedule is a rolling window of 16
 * words and all loops are unrolled, so nothing falls into local memory. Callers build the
 * message blocks themselves (the SLH-DSA tweakable hashes know their layout at compile
 * time), which keeps byte shuffling out of the hot chains. */
#ifndef HBS_GPU_HASH_CUH
#define HBS_GPU_HASH_CUH

#include <stdint.h>

namespace hbs_gpu {

__device__ __constant__ static const uint32_t K256[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
    0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
    0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
    0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
    0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
    0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
    0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
    0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
    0xc67178f2};

__device__ __constant__ static const uint64_t K512[80] = {
    0x428a2f98d728ae22ull, 0x7137449123ef65cdull, 0xb5c0fbcfec4d3b2full, 0xe9b5dba58189dbbcull,
    0x3956c25bf348b538ull, 0x59f111f1b605d019ull, 0x923f82a4af194f9bull, 0xab1c5ed5da6d8118ull,
    0xd807aa98a3030242ull, 0x12835b0145706fbeull, 0x243185be4ee4b28cull, 0x550c7dc3d5ffb4e2ull,
    0x72be5d74f27b896full, 0x80deb1fe3b1696b1ull, 0x9bdc06a725c71235ull, 0xc19bf174cf692694ull,
    0xe49b69c19ef14ad2ull, 0xefbe4786384f25e3ull, 0x0fc19dc68b8cd5b5ull, 0x240ca1cc77ac9c65ull,
    0x2de92c6f592b0275ull, 0x4a7484aa6ea6e483ull, 0x5cb0a9dcbd41fbd4ull, 0x76f988da831153b5ull,
    0x983e5152ee66dfabull, 0xa831c66d2db43210ull, 0xb00327c898fb213full, 0xbf597fc7beef0ee4ull,
    0xc6e00bf33da88fc2ull, 0xd5a79147930aa725ull, 0x06ca6351e003826full, 0x142929670a0e6e70ull,
    0x27b70a8546d22ffcull, 0x2e1b21385c26c926ull, 0x4d2c6dfc5ac42aedull, 0x53380d139d95b3dfull,
    0x650a73548baf63deull, 0x766a0abb3c77b2a8ull, 0x81c2c92e47edaee6ull, 0x92722c851482353bull,
    0xa2bfe8a14cf10364ull, 0xa81a664bbc423001ull, 0xc24b8b70d0f89791ull, 0xc76c51a30654be30ull,
    0xd192e819d6ef5218ull, 0xd69906245565a910ull, 0xf40e35855771202aull, 0x106aa07032bbd1b8ull,
    0x19a4c116b8d2d0c8ull, 0x1e376c085141ab53ull, 0x2748774cdf8eeb99ull, 0x34b0bcb5e19b48a8ull,
    0x391c0cb3c5c95a63ull, 0x4ed8aa4ae3418acbull, 0x5b9cca4f7763e373ull, 0x682e6ff3d6b2b8a3ull,
    0x748f82ee5defb2fcull, 0x78a5636f43172f60ull, 0x84c87814a1f0ab72ull, 0x8cc702081a6439ecull,
    0x90befffa23631e28ull, 0xa4506cebde82bde9ull, 0xbef9a3f7b2c67915ull, 0xc67178f2e372532bull,
    0xca273eceea26619cull, 0xd186b8c721c0c207ull, 0xeada7dd6cde0eb1eull, 0xf57d4f7fee6ed178ull,
    0x06f067aa72176fbaull, 0x0a637dc5a2c898a6ull, 0x113f9804bef90daeull, 0x1b710b35131c471bull,
    0x28db77f523047d84ull, 0x32caab7b40c72493ull, 0x3c9ebe0a15c9bebcull, 0x431d67c49c100d4cull,
    0x4cc5d4becb3e42b6ull, 0x597f299cfc657e2aull, 0x5fcb6fab3ad6faecull, 0x6c44198c4a475817ull};

__device__ __constant__ static const uint64_t KECCAK_RC[24] = {
    0x0000000000000001ull, 0x0000000000008082ull, 0x800000000000808aull, 0x8000000080008000ull,
    0x000000000000808bull, 0x0000000080000001ull, 0x8000000080008081ull, 0x8000000000008009ull,
    0x000000000000008aull, 0x0000000000000088ull, 0x0000000080008009ull, 0x000000008000000aull,
    0x000000008000808bull, 0x800000000000008bull, 0x8000000000008089ull, 0x8000000000008003ull,
    0x8000000000008002ull, 0x8000000000000080ull, 0x000000000000800aull, 0x800000008000000aull,
    0x8000000080008081ull, 0x8000000000008080ull, 0x0000000080000001ull, 0x8000000080008008ull};

__device__ __forceinline__ uint32_t rotr32(uint32_t x, int r) { return __funnelshift_r(x, x, r); }
__device__ __forceinline__ uint64_t rotr64(uint64_t x, int r) { return (x >> r) | (x << (64 - r)); }
__device__ __forceinline__ uint64_t rotl64(uint64_t x, int r)
{
    return r == 0 ? x : (x << r) | (x >> (64 - r));
}

__device__ __forceinline__ uint32_t bswap32(uint32_t x) { return __byte_perm(x, 0, 0x0123); }

/* The IMAD variant of a form (SHA_IMAD, below): five of a round's and an expansion's
 * additions as x * 1 + y, the 1 a constant the compiler cannot see (hbs_one), so they run as
 * IMAD on the FMA pipe, idle otherwise, instead of IADD3 on the integer pipe that the
 * rotations and logic ops keep busy (ncu, 128s one-signature kernel: integer pipe at 78 % of
 * its peak over the whole kernel, FMA pipe at 4 %). IMAD in scope picks the variant. hbs_one is
 * static, one per translation unit like the kernels' other constants (the CPU emulator links
 * several together). */
static __device__ __constant__ uint32_t hbs_one = 1;
#define HBS_MADD(x, y) ((x) * hbs_one + (y))

/* One SHA-256 round; the schedule word w[i & 15] already expanded when i >= 16. */
#define HBS_SHA256_ROUND(i, k)                                                                 \
    do {                                                                                       \
        uint32_t s1 = rotr32(e, 6) ^ rotr32(e, 11) ^ rotr32(e, 25), ch = (e & f) ^ (~e & g);   \
        uint32_t t1 = IMAD ? HBS_MADD(s1, HBS_MADD(ch, h + (k) + w[(i) & 15]))                  \
                           : h + s1 + ch + (k) + w[(i) & 15];                                  \
        uint32_t t2 = (rotr32(a, 2) ^ rotr32(a, 13) ^ rotr32(a, 22)) + ((a & b) ^ (a & c) ^ (b & c)); \
        h = g;                                                                                 \
        g = f;                                                                                 \
        f = e;                                                                                 \
        e = IMAD ? HBS_MADD(d, t1) : d + t1;                                                   \
        d = c;                                                                                 \
        c = b;                                                                                 \
        b = a;                                                                                 \
        a = t1 + t2;                                                                           \
    } while (0)

/* w[i & 15] becomes schedule word i (i >= 16). */
#define HBS_SHA256_EXPAND(i)                                                                   \
    do {                                                                                       \
        uint32_t w15 = w[((i) + 1) & 15], w2 = w[((i) + 14) & 15];                             \
        uint32_t s0 = rotr32(w15, 7) ^ rotr32(w15, 18) ^ (w15 >> 3);                           \
        uint32_t s1 = rotr32(w2, 17) ^ rotr32(w2, 19) ^ (w2 >> 10);                            \
        if (IMAD)                                                                              \
            w[(i) & 15] = HBS_MADD(s0, HBS_MADD(s1, HBS_MADD(w[((i) + 9) & 15], w[(i) & 15]))); \
        else                                                                                   \
            w[(i) & 15] += s0 + s1 + w[((i) + 9) & 15];                                        \
    } while (0)

/* The rolled form's passes from round r0 (a multiple of 16) on. After round i, w[i] (its
 * word used) becomes the word 16 rounds on: the window's other three inputs are then
 * exactly those EXPAND(i + 16) reads. */
#define HBS_SHA256_ROLLED_FROM(r0)                                                             \
    do {                                                                                       \
        _Pragma("unroll 1") for (int r = (r0); r < 64; r += 16)                                \
        {                                                                                      \
            _Pragma("unroll") for (int i = 0; i < 16; i++)                                     \
            {                                                                                  \
                HBS_SHA256_ROUND(i, K256[r + i]);                                              \
                HBS_SHA256_EXPAND(i);                                                          \
            }                                                                                  \
        }                                                                                      \
    } while (0)

/* The chaining value st plus the working variables a..h: a compression's end. */
#define HBS_SHA256_FEED(st)                                                                    \
    do {                                                                                       \
        (st)[0] += a;                                                                          \
        (st)[1] += b;                                                                          \
        (st)[2] += c;                                                                          \
        (st)[3] += d;                                                                          \
        (st)[4] += e;                                                                          \
        (st)[5] += f;                                                                          \
        (st)[6] += g;                                                                          \
        (st)[7] += h;                                                                          \
    } while (0)

/* SHA-256 compression of the block w[16] (big-endian words) into st. w is clobbered.
 * FORM is the code's shape: SHA_FULL unrolls all 64 rounds.
 * SHA_COMPACT: rounds 16..63 as three passes of one 16-round body, a third of the code. The
 * full unroll is faster where warps run one call site hot (signing, key generation); a
 * kernel whose warps are at many call sites at once (batch verification: FORS, chains,
 * T_len, paths) misses the instruction cache with it (H200, 128s verification 3.58 -> 4.09
 * M/s compact, while 128f signing batches lose 5 % with it).
 * SHA_LOOPED: all 64 rounds as four passes of one 16-round body, the next 16 schedule words
 * expanded after each pass: the smallest code (about 6 KB), for kernels whose few warps
 * each run many distinct hash call sites once (the one-signature kernel: latency.cuh).
 * SHA_ROLLED: all 64 rounds as four passes of one body of 16 rounds, each round followed by
 * the expansion of its word for the next pass (the last pass's 16 are wasted): the looped
 * form's code size with the schedule's independent work beside the rounds' serial chain.
 * It lost everywhere (H100, bench/gpu/sha256_forms.cu: F along a chain 3042 cycles a
 * compression at one warp a scheduler, full 2469, looped 2672: one warp already keeps the
 * integer pipe busy, so the wasted expansions cost); no kernel uses it by default.
 * SHA_IMAD, or'ed into a form: the same shape with additions on the FMA pipe (HBS_MADD). With
 * many warps an SM it wins (H100, batches: 128f key generation 2.73 -> 2.93 M/s, signing
 * 121 -> 131 k/s, verification 1.06 -> 1.11 M/s; bench/gpu/sha256_forms.cu at 8 warps an
 * SM, compact T_len 5313 -> 4994 cycles a compression); with one warp a scheduler IMAD's
 * longer latency costs (fchain full 2515 -> 2580 cycles), so the one-signature kernel's forms
 * go without it. */
enum { SHA_FULL = 0, SHA_COMPACT = 1, SHA_LOOPED = 2, SHA_ROLLED = 3, SHA_IMAD = 4 };

/* The form of every call that names none (all but the verifier's and the one-signature
 * kernel's): a build may set it (-DHBS_GPU_SHA256_FORM=2 in CMAKE_CUDA_FLAGS) to compare the
 * forms over all kernels in one device run. */
#ifndef HBS_GPU_SHA256_FORM
#define HBS_GPU_SHA256_FORM (SHA_FULL | SHA_IMAD)
#endif

template <int FORM = HBS_GPU_SHA256_FORM>
__device__ __forceinline__ void sha256_compress(uint32_t st[8], uint32_t w[16])
{
    constexpr int SHAPE = FORM & 3;
    constexpr bool IMAD = (FORM & SHA_IMAD) != 0;
    uint32_t a = st[0], b = st[1], c = st[2], d = st[3], e = st[4], f = st[5], g = st[6],
             h = st[7];
    if constexpr (SHAPE == SHA_ROLLED) {
        HBS_SHA256_ROLLED_FROM(0);
    } else if constexpr (SHAPE == SHA_LOOPED) {
#pragma unroll 1
        for (int r = 0; r < 64; r += 16) {
#pragma unroll
            for (int i = 0; i < 16; i++)
                HBS_SHA256_ROUND(i, K256[r + i]);
            if (r < 48) {
#pragma unroll
                for (int i = 0; i < 16; i++)
                    HBS_SHA256_EXPAND(i);
            }
        }
    } else if constexpr (SHAPE == SHA_COMPACT) {
#pragma unroll
        for (int i = 0; i < 16; i++)
            HBS_SHA256_ROUND(i, K256[i]);
#pragma unroll 1
        for (int r = 16; r < 64; r += 16) {
#pragma unroll
            for (int i = 0; i < 16; i++) {
                HBS_SHA256_EXPAND(i);
                HBS_SHA256_ROUND(i, K256[r + i]);
            }
        }
    } else {
#pragma unroll
        for (int i = 0; i < 64; i++) {
            if (i >= 16)
                HBS_SHA256_EXPAND(i);
            HBS_SHA256_ROUND(i, K256[i]);
        }
    }
    HBS_SHA256_FEED(st);
}

/* The working variables a..h of a compression, as one value the compiler can carry. */
struct sha256_vars {
    uint32_t v[8];
};

/* sha256_compress of w into st where rounds 0 .. R0 - 1 are already done: pre holds the
 * working variables after them (their words were known ahead, so they were computed once,
 * not in every call). w must still hold all 16 words: the schedule reads them. FORM: full
 * unroll, or the compact form's three looped passes for rounds 16 .. 63. */
template <int R0, int FORM = SHA_FULL>
__device__ __forceinline__ void sha256_compress_from(uint32_t st[8], const sha256_vars &pre,
                                                     uint32_t w[16])
{
    constexpr int SHAPE = FORM & 3;
    constexpr bool IMAD = (FORM & SHA_IMAD) != 0;
    uint32_t a = pre.v[0], b = pre.v[1], c = pre.v[2], d = pre.v[3], e = pre.v[4],
             f = pre.v[5], g = pre.v[6], h = pre.v[7];
    if constexpr (SHAPE == SHA_FULL) {
#pragma unroll
        for (int i = 0; i < 64; i++) {
            if (i >= 16)
                HBS_SHA256_EXPAND(i);
            if (i >= R0)
                HBS_SHA256_ROUND(i, K256[i]);
        }
    } else if constexpr (SHAPE == SHA_ROLLED) {
        /* the first pass unrolled (it starts at R0), then the rolled passes */
#pragma unroll
        for (int i = 0; i < 16; i++) {
            if (i >= R0)
                HBS_SHA256_ROUND(i, K256[i]);
            HBS_SHA256_EXPAND(i);
        }
        HBS_SHA256_ROLLED_FROM(16);
    } else {
        /* the compact form's shape (the looped form's calls get it too) */
#pragma unroll
        for (int i = R0; i < 16; i++)
            HBS_SHA256_ROUND(i, K256[i]);
#pragma unroll 1
        for (int r = 16; r < 64; r += 16) {
#pragma unroll
            for (int i = 0; i < 16; i++) {
                HBS_SHA256_EXPAND(i);
                HBS_SHA256_ROUND(i, K256[r + i]);
            }
        }
    }
    HBS_SHA256_FEED(st);
}

/* Rounds R0 .. R1 - 1 (R1 <= 16: words of the block, no schedule) on the working
 * variables s: what sha256_compress_from's callers work out ahead. */
template <int R0, int R1>
__device__ __forceinline__ void sha256_rounds(sha256_vars &s, const uint32_t w[16])
{
    static_assert(0 <= R0 && R0 <= R1 && R1 <= 16, "rounds of the block's own words only");
    constexpr bool IMAD = false; /* worked out once per chain or key: either will do */
    uint32_t a = s.v[0], b = s.v[1], c = s.v[2], d = s.v[3], e = s.v[4], f = s.v[5],
             g = s.v[6], h = s.v[7];
#pragma unroll
    for (int i = R0; i < R1; i++)
        HBS_SHA256_ROUND(i, K256[i]);
    s.v[0] = a;
    s.v[1] = b;
    s.v[2] = c;
    s.v[3] = d;
    s.v[4] = e;
    s.v[5] = f;
    s.v[6] = g;
    s.v[7] = h;
}

/* The schedule of one block with the round constants added (W[i] + K[i], i < 64), to wk
 * (16-byte aligned, shared memory). It depends on the block alone: a kernel that holds all
 * the blocks of a stream at once (T_len over a WOTS+ public key) builds their schedules side
 * by side, one thread a block, and the one thread that must compress them in turn runs only
 * the rounds (sha256_compress_wk), a third less integer work on the serial path. */
__device__ __forceinline__ void sha256_schedule_wk(uint32_t *wk, uint32_t w[16])
{
    constexpr bool IMAD = false;
#pragma unroll
    for (int q = 0; q < 16; q++) {
#pragma unroll
        for (int i = 4 * q; i < 4 * q + 4; i++)
            if (i >= 16)
                HBS_SHA256_EXPAND(i);
        reinterpret_cast<uint4 *>(wk)[q] =
            make_uint4(w[(4 * q) & 15] + K256[4 * q], w[(4 * q + 1) & 15] + K256[4 * q + 1],
                       w[(4 * q + 2) & 15] + K256[4 * q + 2], w[(4 * q + 3) & 15] + K256[4 * q + 3]);
    }
}

/* sha256_compress of a block whose schedule sha256_schedule_wk built: the 64 rounds alone,
 * each pass of 16 reading its words four at a time. FORM: SHA_FULL unrolls the four
 * passes, any other shape loops over them; SHA_IMAD as in sha256_compress. */
template <int FORM>
__device__ __forceinline__ void sha256_compress_wk(uint32_t st[8], const uint32_t *wk)
{
    constexpr bool IMAD = (FORM & SHA_IMAD) != 0;
    uint32_t a = st[0], b = st[1], c = st[2], d = st[3], e = st[4], f = st[5], g = st[6],
             h = st[7];
    const uint4 *q = reinterpret_cast<const uint4 *>(wk);
    /* w: a pass's W[i] + K[i]; the rounds' constant term is then 0 */
#define HBS_SHA256_WK_PASS(r)                                                                  \
    do {                                                                                       \
        uint32_t w[16];                                                                        \
        _Pragma("unroll") for (int x = 0; x < 4; x++)                                          \
        {                                                                                      \
            const uint4 u = q[(r) / 4 + x];                                                    \
            w[4 * x] = u.x;                                                                    \
            w[4 * x + 1] = u.y;                                                                \
            w[4 * x + 2] = u.z;                                                                \
            w[4 * x + 3] = u.w;                                                                \
        }                                                                                      \
        _Pragma("unroll") for (int i = 0; i < 16; i++) HBS_SHA256_ROUND(i, 0u);                \
    } while (0)
    if constexpr ((FORM & 3) == SHA_FULL) {
#pragma unroll
        for (int r = 0; r < 64; r += 16)
            HBS_SHA256_WK_PASS(r);
    } else {
#pragma unroll 1
        for (int r = 0; r < 64; r += 16)
            HBS_SHA256_WK_PASS(r);
    }
#undef HBS_SHA256_WK_PASS
    HBS_SHA256_FEED(st);
}

#undef HBS_SHA256_ROUND
#undef HBS_SHA256_EXPAND
#undef HBS_SHA256_FEED
#undef HBS_SHA256_ROLLED_FROM
#undef HBS_MADD

__device__ __forceinline__ void sha256_iv(uint32_t st[8])
{
    st[0] = 0x6a09e667;
    st[1] = 0xbb67ae85;
    st[2] = 0x3c6ef372;
    st[3] = 0xa54ff53a;
    st[4] = 0x510e527f;
    st[5] = 0x9b05688c;
    st[6] = 0x1f83d9ab;
    st[7] = 0x5be0cd19;
}

/* SHA-512 compression of w[16] (big-endian 64-bit words) into st. w is clobbered. */
__device__ __forceinline__ void sha512_compress(uint64_t st[8], uint64_t w[16])
{
    uint64_t a = st[0], b = st[1], c = st[2], d = st[3], e = st[4], f = st[5], g = st[6],
             h = st[7];
#pragma unroll
    for (int i = 0; i < 80; i++) {
        if (i >= 16) {
            uint64_t w15 = w[(i + 1) & 15], w2 = w[(i + 14) & 15];
            uint64_t s0 = rotr64(w15, 1) ^ rotr64(w15, 8) ^ (w15 >> 7);
            uint64_t s1 = rotr64(w2, 19) ^ rotr64(w2, 61) ^ (w2 >> 6);
            w[i & 15] += s0 + s1 + w[(i + 9) & 15];
        }
        uint64_t t1 = h + (rotr64(e, 14) ^ rotr64(e, 18) ^ rotr64(e, 41)) +
                      ((e & f) ^ (~e & g)) + K512[i] + w[i & 15];
        uint64_t t2 = (rotr64(a, 28) ^ rotr64(a, 34) ^ rotr64(a, 39)) + ((a & b) ^ (a & c) ^ (b & c));
        h = g;
        g = f;
        f = e;
        e = d + t1;
        d = c;
        c = b;
        b = a;
        a = t1 + t2;
    }
    st[0] += a;
    st[1] += b;
    st[2] += c;
    st[3] += d;
    st[4] += e;
    st[5] += f;
    st[6] += g;
    st[7] += h;
}

__device__ __forceinline__ void sha512_iv(uint64_t st[8])
{
    st[0] = 0x6a09e667f3bcc908ull;
    st[1] = 0xbb67ae8584caa73bull;
    st[2] = 0x3c6ef372fe94f82bull;
    st[3] = 0xa54ff53a5f1d36f1ull;
    st[4] = 0x510e527fade682d1ull;
    st[5] = 0x9b05688c2b3e6c1full;
    st[6] = 0x1f83d9abfb41bd6bull;
    st[7] = 0x5be0cd19137e2179ull;
}

/* Keccak-f[1600] on 25 little-endian lanes. */
__device__ __forceinline__ void keccak_f1600(uint64_t s[25])
{
#pragma unroll 1
    for (int round = 0; round < 24; round++) {
        uint64_t c[5], d[5];
#pragma unroll
        for (int x = 0; x < 5; x++)
            c[x] = s[x] ^ s[x + 5] ^ s[x + 10] ^ s[x + 15] ^ s[x + 20];
#pragma unroll
        for (int x = 0; x < 5; x++)
            d[x] = c[(x + 4) % 5] ^ rotl64(c[(x + 1) % 5], 1);
#pragma unroll
        for (int i = 0; i < 25; i++)
            s[i] ^= d[i % 5];
        /* rho and pi: lane (x, y) moves to (y, 2x + 3y), rotated by its offset */
        uint64_t b[25];
        b[0] = s[0];
        b[10] = rotl64(s[1], 1);
        b[7] = rotl64(s[10], 3);
        b[11] = rotl64(s[7], 6);
        b[17] = rotl64(s[11], 10);
        b[18] = rotl64(s[17], 15);
        b[3] = rotl64(s[18], 21);
        b[5] = rotl64(s[3], 28);
        b[16] = rotl64(s[5], 36);
        b[8] = rotl64(s[16], 45);
        b[21] = rotl64(s[8], 55);
        b[24] = rotl64(s[21], 2);
        b[4] = rotl64(s[24], 14);
        b[15] = rotl64(s[4], 27);
        b[23] = rotl64(s[15], 41);
        b[19] = rotl64(s[23], 56);
        b[13] = rotl64(s[19], 8);
        b[12] = rotl64(s[13], 25);
        b[2] = rotl64(s[12], 43);
        b[20] = rotl64(s[2], 62);
        b[14] = rotl64(s[20], 18);
        b[22] = rotl64(s[14], 39);
        b[9] = rotl64(s[22], 61);
        b[6] = rotl64(s[9], 20);
        b[1] = rotl64(s[6], 44);
#pragma unroll
        for (int y = 0; y < 25; y += 5) {
#pragma unroll
            for (int x = 0; x < 5; x++)
                s[y + x] = b[y + x] ^ (~b[y + (x + 1) % 5] & b[y + (x + 2) % 5]);
        }
        s[0] ^= KECCAK_RC[round];
    }
}

} // namespace hbs_gpu

#endif
