/* Hash work per operation and the backend's raw hash rate, so bench can say how close an
 * operation runs to the hash ceiling of the core it runs on.
 *
 * The model counts compressions (SHA-2) or permutations (SHAKE) with the PK.seed block
 * precomputed and no other caching, as ../shared/tools/hashcount.py does, so the figures
 * compare with the GPU anchors. The raw rate is that of F in WOTS+ chains (the chain
 * kernel, most of every operation's hashes) and, for n > 16, of SHA-512 H. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "hash/hash.h"
#include "slhdsa/params.h"

static double md_blocks(size_t bytes, size_t block, size_t pad)
{
    return (double)((bytes + pad + block - 1) / block);
}

typedef struct {
    double s256, s512; /* SHA-2 compressions; for SHAKE, s256 counts permutations */
} cost;

static cost add(cost a, cost b) { return (cost){a.s256 + b.s256, a.s512 + b.s512}; }
static cost mul(double k, cost a) { return (cost){k * a.s256, k * a.s512}; }

/* The cost of one tweakable hash over `m` message bytes. */
static cost thash_cost(const hbs_slhdsa_params *p, size_t m, int is_f)
{
    if (p->family == SLHDSA_FAMILY_SHAKE)
        return (cost){md_blocks(p->n + 32 + m, HBS_SHAKE256_RATE, 1), 0};
    if (p->n > 16 && !is_f)
        return (cost){0, md_blocks(22 + m, 128, 17)};
    return (cost){md_blocks(22 + m, 64, 9), 0};
}

void hbs_cli_hash_model(const hbs_slhdsa_params *p, int op, hbs_cli_hashes *out)
{
    const double L = p->len, k = p->k, a = p->a, d = p->d, hp = p->hp;
    const cost F = thash_cost(p, p->n, 1), H = thash_cost(p, 2 * (size_t)p->n, 0);
    const cost TL = thash_cost(p, p->len * (size_t)p->n, 0);
    const cost TK = thash_cost(p, p->k * (size_t)p->n, 0);
    const double leaves = (double)(1u << p->hp), fleaves = (double)(1u << p->a);
    const cost leaf = add(mul(L * 16, F), TL); /* PRF + 15 F per chain, then T_len */
    const cost tree = add(mul(leaves, leaf), mul(leaves - 1, H));
    cost c;
    if (op == 0) {
        c = tree;
    } else if (op == 1) {
        const cost fors = add(mul(k * fleaves * 2, F), mul(k * (fleaves - 1), H));
        c = add(add(mul(d, tree), fors), TK);
    } else {
        const cost fors = mul(k, add(F, mul(a, H)));
        const cost layer = add(add(mul(L * 7.5, F), TL), mul(hp, H));
        c = add(add(fors, TK), mul(d, layer));
    }
    memset(out, 0, sizeof *out);
    if (p->family == SLHDSA_FAMILY_SHAKE) {
        out->keccak = c.s256;
    } else {
        out->sha256 = c.s256;
        out->sha512 = c.s512;
    }
}

/* Runs fn (which returns the hashes it did) until at least 0.15 s have passed; returns
 * hashes per second. */
static double rate_of(size_t (*fn)(const hbs_slhdsa_params *, uint8_t *, uint8_t *, size_t),
                      const hbs_slhdsa_params *p)
{
    enum { COUNT = 256 };
    uint8_t *in = calloc(COUNT, 256), *out = calloc(COUNT, 64);
    double t0, t, hashes = 0;
    if (!in || !out) {
        free(in);
        free(out);
        return 0;
    }
    fn(p, out, in, COUNT); /* warm up */
    t0 = hbs_cli_now();
    do {
        hashes += (double)fn(p, out, in, COUNT);
        t = hbs_cli_now();
    } while (t - t0 < 0.15);
    free(in);
    free(out);
    return hashes / (t - t0);
}

/* The raw rate of SLH-DSA's F, the bulk of every operation's hashes: WOTS+ chains of 15
 * steps through the chain kernel (which keeps chains in lanes across steps), `count`
 * chains; in holds count * (22 + n) or count * (2n + 32) bytes. */
static size_t run_f_chains(const hbs_slhdsa_params *p, uint8_t *out, uint8_t *in, size_t count)
{
    const int sha2 = p->family != SLHDSA_FAMILY_SHAKE;
    const size_t n = p->n, pre = sha2 ? 0 : n, alen = sha2 ? 22 : 32, len = pre + alen + n;
    const hbs_chain_layout lay = {(uint8_t)(pre + alen - 4), 4, (uint8_t)(pre + alen),
                                  (uint8_t)n};
    hbs_sha256_ctx prefix;
    uint8_t block[64] = {1};
    (void)out;
    for (size_t i = 0; i < count; i++)
        memset(in + i * len + lay.ctr_off, 0, 4); /* every chain from hash address 0 */
    if (sha2) {
        hbs_sha256_init(&prefix);
        hbs_sha256_update(&prefix, block, sizeof block);
        hbs_sha256_chains(&prefix, in, len, &lay, NULL, 15, count);
    } else {
        hbs_shake256_chains(in, len, &lay, NULL, 15, count);
    }
    return 15 * count;
}

static size_t run_sha512(const hbs_slhdsa_params *p, uint8_t *out, uint8_t *in, size_t count)
{
    hbs_sha512_ctx prefix;
    uint8_t block[128] = {1};
    hbs_sha512_init(&prefix);
    hbs_sha512_update(&prefix, block, sizeof block);
    hbs_sha512_many(out, &prefix, in, 22 + 2 * (size_t)p->n, count); /* H: one compression */
    return count;
}

void hbs_cli_hash_raw(const hbs_slhdsa_params *p, hbs_cli_hashes *rate)
{
    memset(rate, 0, sizeof *rate);
    if (p->family == SLHDSA_FAMILY_SHAKE) {
        rate->keccak = rate_of(run_f_chains, p);
        return;
    }
    rate->sha256 = rate_of(run_f_chains, p);
    if (p->n > 16)
        rate->sha512 = rate_of(run_sha512, p);
}

double hbs_cli_hash_seconds(const hbs_cli_hashes *work, const hbs_cli_hashes *rate)
{
    double s = 0;
    if (work->sha256 > 0 && rate->sha256 > 0)
        s += work->sha256 / rate->sha256;
    if (work->sha512 > 0 && rate->sha512 > 0)
        s += work->sha512 / rate->sha512;
    if (work->keccak > 0 && rate->keccak > 0)
        s += work->keccak / rate->keccak;
    return s;
}
