/* XMSS / XMSS^MT verification (RFC 8391 sections 4.1.10 and 4.2.5). Every length is checked
 * before any byte of the signature is read; anything wrong is just an invalid signature. */
#include <string.h>

#include "hbs/hbs.h"
#include "xmss/internal.h"

int hbs_xmss_verify(const hbs_xmss_params *p, const uint8_t *pk, size_t pklen,
                    const uint8_t *msg, size_t msglen, const uint8_t *sig, size_t siglen)
{
    uint8_t node[XMSS_MAX_N], pair[2 * XMSS_MAX_N], digits[XMSS_MAX_LEN];
    xmss_ctx c;
    uint64_t idx = 0;
    size_t n, at;
    int ok;

    if (!p || (!pk && pklen) || (!msg && msglen) || (!sig && siglen))
        return HBS_ERR_INVALID_ARGUMENT;
    if (pklen != p->pk_bytes || siglen != p->sig_bytes || xmss_get32(pk) != p->oid)
        return HBS_ERR_VERIFY_FAILED;
    n = p->n;
    for (unsigned b = 0; b < p->idx_bytes; b++)
        idx = idx << 8 | sig[b];
    if (p->h < 64 && (idx >> p->h) != 0)
        return HBS_ERR_VERIFY_FAILED;
    at = p->idx_bytes;
    hbs_xmss_ctx_init(&c, p, pk + 4 + n, NULL);
    hbs_xmss_hash_msg(&c, node, sig + at, pk + 4, idx, msg, msglen);
    at += n;
    for (unsigned i = 0; i < p->d; i++) {
        const uint32_t leaf = (uint32_t)(idx & (((uint64_t)1 << p->tree_h) - 1));
        const uint64_t tree = idx >> p->tree_h;
        const uint8_t *auth = sig + at + (size_t)p->len * n;
        hbs_xmss_wots_digits(p, digits, node);
        hbs_xmss_leaf_from_sig(&c, node, sig + at, digits, i, tree, leaf);
        for (unsigned j = 0; j < p->tree_h; j++) {
            if ((leaf >> j) & 1) {
                memcpy(pair, auth + j * n, n);
                memcpy(pair + n, node, n);
            } else {
                memcpy(pair, node, n);
                memcpy(pair + n, auth + j * n, n);
            }
            hbs_xmss_tree_nodes(&c, node, pair, i, tree, j + 1, leaf >> (j + 1), 1);
        }
        at += ((size_t)p->len + p->tree_h) * n;
        idx = tree;
    }
    ok = memcmp(node, pk + 4, n) == 0;
    hbs_xmss_ctx_wipe(&c);
    return ok ? HBS_OK : HBS_ERR_VERIFY_FAILED;
}
