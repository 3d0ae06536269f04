/* Hash work of stateful key generation, so `hbs bench --gpu --stateful` can set each key
 * generation against the device's hash ceiling, as gpu_bench.c does for SLH-DSA.
 *
 * Key generation here builds the first tree of every layer (the public key's and the state
 * fast signing starts from), leaves and inner nodes, as the engines do. Counted as
 * ../shared/tools/hashcount.py counts: compressions (SHA-2) or permutations (SHAKE), with
 * every block that holds only a key's constant prefix (toByte || SEED, or an LMS key's I)
 * precomputed, nothing else cached. */
#include <string.h>

#include "cli.h"
#include "hash/hash.h"
#include "hbs/lms.h"
#include "hbs/stateful.h"
#include "lms/params.h"
#include "xmss/params.h"

typedef struct {
    size_t block, pad; /* block (or rate) bytes; the fewest padding bytes after a message */
    int keccak;
} hash_shape;

/* Compressions or permutations for `bytes` bytes of which the first `fixed` are the same
 * for every call under a key: the whole blocks among them are hashed once, ahead. */
static double blocks(const hash_shape *s, size_t bytes, size_t fixed)
{
    const size_t ahead = fixed / s->block * s->block;
    return (double)((bytes - ahead + s->pad + s->block - 1) / s->block);
}

/* RFC 8391 with SP 800-208's PRF_keygen: a tree of 2^t leaves. */
static double xmss_tree(const hbs_xmss_params *p, unsigned t, hash_shape *s)
{
    const size_t n = p->n, pad = p->padlen;
    switch (p->func) {
    case XMSS_FUNC_SHA512:
        *s = (hash_shape){128, 17, 0};
        break;
    case XMSS_FUNC_SHAKE128:
        *s = (hash_shape){HBS_SHAKE128_RATE, 1, 1};
        break;
    case XMSS_FUNC_SHAKE256:
        *s = (hash_shape){HBS_SHAKE256_RATE, 1, 1};
        break;
    default:
        *s = (hash_shape){64, 9, 0};
    }
    /* PRF: toByte(3) || SEED || ADRS; PRF_keygen: toByte(4) || SK_SEED || PUB_SEED || ADRS;
     * F: toByte(0) || KEY || M; H: toByte(1) || KEY || LEFT || RIGHT */
    const double prf = blocks(s, pad + n + 32, pad + n);
    const double prf_keygen = blocks(s, pad + 2 * n + 32, pad + 2 * n);
    const double f = 2 * prf + blocks(s, pad + 2 * n, 0);
    const double h = 3 * prf + blocks(s, pad + 3 * n, 0);
    const double len = p->len, leaves = (double)((uint64_t)1 << t);
    const double leaf = len * (prf_keygen + (XMSS_W - 1) * f) + (len - 1) * h;
    return leaves * leaf + (leaves - 1) * h;
}

/* RFC 8554 with SP 800-208's pseudorandom key generation (Appendix A): a tree of type t. */
static double lms_tree(const hbs_lms_type *t, const hbs_lmots_type *o, hash_shape *s)
{
    const size_t n = o->n, m = t->m;
    *s = t->hash == HBS_LMS_HASH_SHAKE ? (hash_shape){HBS_SHAKE256_RATE, 1, 1}
                                       : (hash_shape){64, 9, 0};
    /* a secret (I || q || i || 0xff || SEED) and 2^w - 1 steps (I || q || i || j || tmp) a
     * chain; the key's hash (I || q || D_PBLC || y); the leaf (I || r || D_LEAF || K); an
     * inner node (I || r || D_INTR || left || right) */
    const double hashes_a_chain = (double)(1u << o->w); /* the secret and 2^w - 1 steps */
    const double leaf = o->p * hashes_a_chain * blocks(s, 23 + n, 0) +
                        blocks(s, 22 + (size_t)o->p * n, 0) + blocks(s, 22 + m, 0);
    const double leaves = (double)((uint64_t)1 << t->h);
    return leaves * leaf + (leaves - 1) * blocks(s, 22 + 2 * m, 0);
}

int hbs_cli_stateful_keygen_model(const char *alg, hbs_cli_hashes *out)
{
    hash_shape s = {64, 9, 0};
    double c = 0;
    memset(out, 0, sizeof *out);
    if (hbs_stateful_family_of(alg) == HBS_STATEFUL_HSS) {
        hbs_hss_params p;
        if (hbs_hss_params_parse(&p, alg) != HBS_OK)
            return -1;
        for (unsigned i = 0; i < p.levels; i++)
            c += lms_tree(p.lms[i], p.ots[i], &s);
    } else {
        const hbs_xmss_params *p = hbs_xmss_params_by_name(alg);
        if (!p)
            return -1;
        c = p->d * xmss_tree(p, p->tree_h, &s);
    }
    if (s.keccak)
        out->keccak = c;
    else if (s.block == 128)
        out->sha512 = c;
    else
        out->sha256 = c;
    return 0;
}
