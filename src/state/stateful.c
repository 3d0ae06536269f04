/* Stateful keys in files: the durable store (store.c) joined to the in-memory keys of
 * LMS/HSS (src/lms) and XMSS/XMSS^MT (src/xmss).
 *
 * The rule that makes reuse impossible: an index i is signed with only after a commit of
 * some next > i has returned HBS_OK (store.h explains why that suffices). The key in memory
 * runs ahead of nothing: before signing at index i we check i < reserved, where `reserved`
 * is the `next` on disk; when i reaches it, the state is exported at i and committed with
 * next = i + reserve (at most end). After a crash the file's next is at least every index
 * used, and open() skips the key forward to it. */
#include "hbs/stateful.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hbs/lms.h"
#include "hbs/xmss.h"
#include "core/leaf_engine.h"
#include "lms/hss.h"
#include "state/stateful_batch.h"
#include "state/store.h"
#include "xmss/xmss.h"

struct hbs_stateful_key {
    hbs_store *store;
    hbs_stateful_family family;
    hbs_hss_key *hss;
    hbs_xmss_key *xmss;
    uint64_t reserved; /* the next on disk: indices below it may be used, once */
    uint32_t reserve;
};

int hbs_stateful_family_of(const char *alg)
{
    hbs_hss_params hp;
    const hbs_xmss_params *xp;
    if (!alg)
        return HBS_ERR_INVALID_ARGUMENT;
    if (hbs_hss_params_parse(&hp, alg) == HBS_OK)
        return HBS_STATEFUL_HSS;
    xp = hbs_xmss_params_by_name(alg);
    if (xp)
        return hbs_xmss_is_mt(xp) ? HBS_STATEFUL_XMSSMT : HBS_STATEFUL_XMSS;
    return HBS_ERR_UNKNOWN_ALGORITHM;
}

/* ---- the two families behind one set of calls ----------------------------------------- */

static int key_export(const hbs_stateful_key *k, uint8_t **out, size_t *len)
{
    size_t need = 0;
    int rc;
    *out = NULL;
    if (k->hss) {
        rc = hbs_hss_key_export(k->hss, NULL, 0, &need);
        if (rc != HBS_OK && rc != HBS_ERR_BUFFER_TOO_SMALL)
            return rc;
    } else {
        need = hbs_xmss_key_export_bytes(k->xmss);
    }
    if (!(*out = malloc(need ? need : 1)))
        return HBS_ERR_NO_MEMORY;
    rc = k->hss ? hbs_hss_key_export(k->hss, *out, need, len)
                : hbs_xmss_key_export(k->xmss, *out, need, len);
    if (rc != HBS_OK) {
        hbs_memzero(*out, need);
        free(*out);
        *out = NULL;
    }
    return rc;
}

static void free_blob(uint8_t *b, size_t len)
{
    if (b) {
        hbs_memzero(b, len);
        free(b);
    }
}

static int key_import(hbs_stateful_key *k, uint32_t scheme, const uint8_t *in, size_t len)
{
    int rc;
    if (scheme == HBS_STORE_SCHEME_HSS) {
        rc = hbs_hss_key_import(&k->hss, in, len);
        k->family = HBS_STATEFUL_HSS;
    } else if (scheme == HBS_STORE_SCHEME_XMSS) {
        rc = hbs_xmss_key_import(&k->xmss, in, len);
        if (rc == HBS_OK)
            k->family = hbs_xmss_is_mt(hbs_xmss_key_params(k->xmss)) ? HBS_STATEFUL_XMSSMT
                                                                    : HBS_STATEFUL_XMSS;
    } else {
        return HBS_ERR_STATE;
    }
    return rc == HBS_ERR_MALFORMED_KEY ? HBS_ERR_STATE : rc;
}

uint64_t hbs_stateful_key_index(const hbs_stateful_key *k)
{
    return k->hss ? hbs_hss_key_index(k->hss) : hbs_xmss_key_index(k->xmss);
}

uint64_t hbs_stateful_key_end(const hbs_stateful_key *k)
{
    return k->hss ? hbs_hss_key_end(k->hss) : hbs_xmss_key_end(k->xmss);
}

uint64_t hbs_stateful_key_total(const hbs_stateful_key *k)
{
    return k->hss ? hbs_hss_key_total(k->hss) : hbs_xmss_key_total(k->xmss);
}

uint64_t hbs_stateful_key_remaining(const hbs_stateful_key *k)
{
    return hbs_stateful_key_end(k) - hbs_stateful_key_index(k);
}

static int key_skip_to_engine(hbs_stateful_key *k, uint64_t index, const hbs_leaf_engine *e)
{
    return k->hss ? hbs_hss_key_skip_to_engine(k->hss, index, e)
                  : hbs_xmss_key_skip_to_engine(k->xmss, index, e);
}

static int key_skip_to(hbs_stateful_key *k, uint64_t index)
{
    return key_skip_to_engine(k, index, NULL);
}

static int key_set_end(hbs_stateful_key *k, uint64_t end)
{
    return k->hss ? hbs_hss_key_set_end(k->hss, end) : hbs_xmss_key_set_end(k->xmss, end);
}

size_t hbs_stateful_sig_bytes(const hbs_stateful_key *k)
{
    return k->hss ? hbs_hss_sig_bytes(k->hss) : hbs_xmss_sig_bytes(k->xmss);
}

hbs_stateful_family hbs_stateful_key_family(const hbs_stateful_key *k) { return k->family; }

int hbs_stateful_key_alg(const hbs_stateful_key *k, char *out, size_t outcap)
{
    const char *name;
    size_t len;
    if (!k || !out || !outcap)
        return HBS_ERR_INVALID_ARGUMENT;
    if (k->hss)
        return hbs_hss_params_name(hbs_hss_key_params(k->hss), out, outcap, NULL);
    name = hbs_xmss_name(hbs_xmss_key_params(k->xmss));
    len = strlen(name);
    if (len + 1 > outcap) {
        out[0] = 0;
        return HBS_ERR_BUFFER_TOO_SMALL;
    }
    memcpy(out, name, len + 1);
    return HBS_OK;
}

int hbs_stateful_key_public(const hbs_stateful_key *k, uint8_t *pk, size_t pkcap, size_t *pklen)
{
    if (!k || !pk || !pklen)
        return HBS_ERR_INVALID_ARGUMENT;
    return k->hss ? hbs_hss_key_public(k->hss, pk, pkcap, pklen)
                  : hbs_xmss_key_public(k->xmss, pk, pkcap, pklen);
}

static void key_free(hbs_stateful_key *k)
{
    hbs_hss_key_free(k->hss);
    hbs_xmss_key_free(k->xmss);
    k->hss = NULL;
    k->xmss = NULL;
}

/* ---- files ------------------------------------------------------------------------------ */

int hbs_stateful_keygen(const char *alg, const char *path, uint8_t *pk, size_t pkcap,
                        size_t *pklen, const uint8_t *seed, size_t seedlen,
                        hbs_progress_fn progress, void *user)
{
    return hbs_stateful_keygen_ex(alg, path, 0, pk, pkcap, pklen, seed, seedlen, progress,
                                  user);
}

int hbs_stateful_keygen_ex(const char *alg, const char *path, unsigned traversal, uint8_t *pk,
                           size_t pkcap, size_t *pklen, const uint8_t *seed, size_t seedlen,
                           hbs_progress_fn progress, void *user)
{
    return hbs_stateful_keygen_engine(alg, path, traversal, pk, pkcap, pklen, seed, seedlen,
                                      progress, user, NULL);
}

int hbs_stateful_keygen_engine(const char *alg, const char *path, unsigned traversal,
                               uint8_t *pk, size_t pkcap, size_t *pklen, const uint8_t *seed,
                               size_t seedlen, hbs_progress_fn progress, void *user,
                               const hbs_leaf_engine *engine)
{
    hbs_stateful_key k;
    hbs_hss_params hp;
    uint8_t *blob = NULL;
    size_t bloblen = 0;
    uint32_t scheme;
    int family, rc;

    if (!alg || !path || !pk || !pklen || (!seed && seedlen))
        return HBS_ERR_INVALID_ARGUMENT;
    *pklen = 0;
    family = hbs_stateful_family_of(alg);
    if (family < 0)
        return family;
    memset(&k, 0, sizeof k);
    if (family == HBS_STATEFUL_HSS) {
        if ((rc = hbs_hss_params_parse(&hp, alg)) != HBS_OK)
            return rc;
        hp.cache_height = traversal;
        if (hbs_hss_params_check(&hp) != HBS_OK)
            return HBS_ERR_INVALID_ARGUMENT;
        rc = hbs_hss_keygen_engine(&k.hss, pk, pkcap, pklen, &hp, seed, seedlen, progress, user,
                                   engine);
        scheme = HBS_STORE_SCHEME_HSS;
    } else {
        rc = hbs_xmss_keygen_engine(&k.xmss, pk, pkcap, pklen, hbs_xmss_params_by_name(alg),
                                    traversal, seed, seedlen, progress, user, engine);
        scheme = HBS_STORE_SCHEME_XMSS;
    }
    if (rc == HBS_OK)
        rc = key_export(&k, &blob, &bloblen);
    if (rc == HBS_OK)
        rc = hbs_store_create(path, scheme, hbs_stateful_key_index(&k), blob, bloblen);
    if (rc != HBS_OK) {
        hbs_memzero(pk, pkcap);
        *pklen = 0;
    }
    free_blob(blob, bloblen);
    key_free(&k);
    return rc;
}

int hbs_stateful_open(hbs_stateful_key **key, const char *path, int flags, uint32_t reserve)
{
    hbs_stateful_key *k;
    const uint8_t *payload;
    size_t len;
    int rc, sflags = 0;

    if (!key)
        return HBS_ERR_INVALID_ARGUMENT;
    *key = NULL;
    if (!path || reserve == 0)
        return HBS_ERR_INVALID_ARGUMENT;
    if (!(k = calloc(1, sizeof *k)))
        return HBS_ERR_NO_MEMORY;
    k->reserve = reserve;
    if (flags & HBS_STATEFUL_WAIT)
        sflags |= HBS_STORE_WAIT;
    if (flags & HBS_STATEFUL_NO_SYNC)
        sflags |= HBS_STORE_NO_SYNC;
    rc = hbs_store_open(&k->store, path, sflags);
    if (rc == HBS_OK) {
        payload = hbs_store_payload(k->store, &len);
        rc = key_import(k, hbs_store_scheme(k->store), payload, len);
    }
    if (rc == HBS_OK) {
        /* Indices below the file's next may have been used (reserved before a crash or by
         * an earlier session): skip them. A next past end means the key is used up. */
        k->reserved = hbs_store_next(k->store);
        if (k->reserved > hbs_stateful_key_end(k))
            k->reserved = hbs_stateful_key_end(k);
        if (k->reserved > hbs_stateful_key_index(k))
            rc = key_skip_to(k, k->reserved);
        else if (k->reserved < hbs_stateful_key_index(k))
            rc = HBS_ERR_STATE; /* a payload ahead of its file's next was never written */
    }
    if (rc != HBS_OK) {
        hbs_stateful_close(k);
        return rc;
    }
    *key = k;
    return HBS_OK;
}

/* The next a state update from index sets on disk for count indices (count <= what is
 * left): count or the key's reserve, whichever is more, but no further than the key's end. */
static uint64_t reserve_next(const hbs_stateful_key *k, uint64_t index, uint64_t count)
{
    const uint64_t want = count > k->reserve ? count : k->reserve;
    const uint64_t end = hbs_stateful_key_end(k);
    return want > end - index ? end : index + want;
}

/* Sets aside indices index .. next-1 on disk: exports the key at its index and commits. */
static int reserve_more(hbs_stateful_key *k)
{
    const uint64_t next = reserve_next(k, hbs_stateful_key_index(k), 1);
    uint8_t *blob;
    size_t len = 0;
    int rc;
    if ((rc = key_export(k, &blob, &len)) != HBS_OK)
        return rc;
    rc = hbs_store_commit(k->store, next, blob, len);
    free_blob(blob, len);
    if (rc == HBS_OK)
        k->reserved = next;
    return rc;
}

/* Before a signature at the key's index: there is one, sig can hold it, and the state on
 * disk covers it (written now when the reservation is used up). */
static int reserve_for_sign(hbs_stateful_key *k, size_t sigcap)
{
    const uint64_t index = hbs_stateful_key_index(k);
    int rc;
    if (index >= hbs_stateful_key_end(k))
        return HBS_ERR_KEY_EXHAUSTED;
    if (sigcap < hbs_stateful_sig_bytes(k))
        return HBS_ERR_BUFFER_TOO_SMALL;
    if (index >= k->reserved && (rc = reserve_more(k)) != HBS_OK)
        return rc;
    if (index >= k->reserved) /* cannot happen: reserve_more covers index or fails */
        return HBS_ERR_STATE;
    return HBS_OK;
}

int hbs_stateful_sign(hbs_stateful_key *k, uint8_t *sig, size_t sigcap, size_t *siglen,
                      const uint8_t *msg, size_t msglen)
{
    int rc;
    if (!k || !sig || !siglen || (!msg && msglen))
        return HBS_ERR_INVALID_ARGUMENT;
    *siglen = 0;
    if ((rc = reserve_for_sign(k, sigcap)) != HBS_OK)
        return rc;
    rc = k->hss ? hbs_hss_sign(k->hss, sig, sigcap, siglen, msg, msglen)
                : hbs_xmss_sign(k->xmss, sig, sigcap, siglen, msg, msglen);
    if (rc != HBS_OK) {
        hbs_memzero(sig, sigcap);
        *siglen = 0;
    }
    return rc;
}

int hbs_stateful_split(hbs_stateful_key *k, const char *new_path, uint64_t count)
{
    hbs_stateful_key part;
    uint8_t *blob = NULL, *pblob = NULL;
    size_t len = 0, plen = 0;
    uint64_t end, start, floor;
    int rc;

    if (!k || !new_path || count == 0)
        return HBS_ERR_INVALID_ARGUMENT;
    end = hbs_stateful_key_end(k);
    /* what is reserved on disk stays with this key */
    floor = k->reserved > hbs_stateful_key_index(k) ? k->reserved : hbs_stateful_key_index(k);
    if (count > end - floor)
        return HBS_ERR_KEY_EXHAUSTED;
    start = end - count;
    /* A file already there would make the last step fail after this key gave the range
     * up: refuse before (the create below still refuses, race-free, if one appears). */
    if (access(new_path, F_OK) == 0) {
        errno = EEXIST;
        return HBS_ERR_IO;
    }

    /* The new key: this key's state before it gives anything up, moved to start. */
    memset(&part, 0, sizeof part);
    if ((rc = key_export(k, &pblob, &plen)) != HBS_OK)
        return rc;
    rc = key_import(&part, hbs_store_scheme(k->store), pblob, plen);
    free_blob(pblob, plen);
    pblob = NULL;
    if (rc == HBS_OK)
        rc = key_skip_to(&part, start);
    if (rc == HBS_OK)
        rc = key_export(&part, &pblob, &plen);
    if (rc != HBS_OK)
        goto out;

    /* First this key gives up [start, end) durably, then the new file appears. */
    if ((rc = key_set_end(k, start)) != HBS_OK)
        goto out;
    if ((rc = key_export(k, &blob, &len)) == HBS_OK)
        rc = hbs_store_commit(k->store, hbs_store_next(k->store), blob, len);
    if (rc != HBS_OK) {
        /* the file still offers the range; so does the key object, reloaded from it */
        hbs_stateful_key fresh;
        const uint8_t *payload;
        size_t plen2;
        memset(&fresh, 0, sizeof fresh);
        payload = hbs_store_payload(k->store, &plen2);
        if (key_import(&fresh, hbs_store_scheme(k->store), payload, plen2) == HBS_OK &&
            key_skip_to(&fresh, floor) == HBS_OK) {
            key_free(k);
            k->hss = fresh.hss;
            k->xmss = fresh.xmss;
        }
        goto out;
    }
    rc = hbs_store_create(new_path, hbs_store_scheme(k->store), start, pblob, plen);
out:
    free_blob(blob, len);
    free_blob(pblob, plen);
    key_free(&part);
    return rc;
}

void hbs_stateful_close(hbs_stateful_key *k)
{
    if (!k)
        return;
    key_free(k);
    hbs_store_close(k->store);
    hbs_memzero(k, sizeof *k);
    free(k);
}

int hbs_stateful_verify(hbs_stateful_family family, const uint8_t *pk, size_t pklen,
                        const uint8_t *msg, size_t msglen, const uint8_t *sig, size_t siglen)
{
    const hbs_xmss_params *p;
    if (family == HBS_STATEFUL_HSS)
        return hbs_hss_verify(pk, pklen, msg, msglen, sig, siglen);
    if (family != HBS_STATEFUL_XMSS && family != HBS_STATEFUL_XMSSMT)
        return HBS_ERR_INVALID_ARGUMENT;
    if (!pk || pklen < 4)
        return HBS_ERR_VERIFY_FAILED;
    p = hbs_xmss_params_by_oid(family == HBS_STATEFUL_XMSSMT,
                               (uint32_t)pk[0] << 24 | (uint32_t)pk[1] << 16 |
                                   (uint32_t)pk[2] << 8 | pk[3]);
    if (!p)
        return HBS_ERR_VERIFY_FAILED;
    return hbs_xmss_verify(p, pk, pklen, msg, msglen, sig, siglen);
}

/* ---- batches signed elsewhere (state/stateful_batch.h) ---------------------------------- */

int hbs_stateful_batch_begin(hbs_stateful_key *k, uint64_t count, uint64_t *first,
                             uint8_t **state, size_t *statelen)
{
    uint64_t index, next;
    int rc;
    if (!k || !first || !state || !statelen || count == 0)
        return HBS_ERR_INVALID_ARGUMENT;
    *state = NULL;
    *statelen = 0;
    index = hbs_stateful_key_index(k);
    if (index >= hbs_stateful_key_end(k) || count > hbs_stateful_key_end(k) - index)
        return HBS_ERR_KEY_EXHAUSTED;
    if ((rc = key_export(k, state, statelen)) != HBS_OK)
        return rc;
    next = index + count;
    if (next > k->reserved) {
        /* as many as the key's reserve when that is more: the batches after this one
         * within it write nothing */
        next = reserve_next(k, index, count);
        rc = hbs_store_commit(k->store, next, *state, *statelen);
        if (rc != HBS_OK) {
            hbs_stateful_batch_free_state(*state, *statelen);
            *state = NULL;
            *statelen = 0;
            return rc;
        }
        k->reserved = next;
    }
    *first = index;
    return HBS_OK;
}

int hbs_stateful_batch_state(const hbs_stateful_key *k, uint64_t count, uint64_t *first,
                             uint8_t **state, size_t *statelen)
{
    uint64_t index;
    int rc;
    if (!k || !first || !state || !statelen || count == 0)
        return HBS_ERR_INVALID_ARGUMENT;
    *state = NULL;
    *statelen = 0;
    index = hbs_stateful_key_index(k);
    if (index >= hbs_stateful_key_end(k) || count > hbs_stateful_key_end(k) - index)
        return HBS_ERR_KEY_EXHAUSTED;
    if ((rc = key_export(k, state, statelen)) != HBS_OK)
        return rc;
    *first = index;
    return HBS_OK;
}

int hbs_stateful_batch_end(hbs_stateful_key *k, uint64_t next)
{
    return hbs_stateful_batch_end_engine(k, next, NULL);
}

int hbs_stateful_batch_end_engine(hbs_stateful_key *k, uint64_t next,
                                  const hbs_leaf_engine *engine)
{
    int rc;
    if (!k || next > k->reserved)
        return HBS_ERR_INVALID_ARGUMENT;
    rc = key_skip_to_engine(k, next, engine);
    if (rc != HBS_OK)
        (void)key_set_end(k, hbs_stateful_key_index(k));
    return rc;
}

void hbs_stateful_batch_free_state(uint8_t *state, size_t statelen) { free_blob(state, statelen); }

/* ---- one signature under each of many keys (state/stateful_batch.h) -------------------- */

int hbs_stateful_sign_begin(hbs_stateful_key *k, uint8_t *sig, size_t sigcap,
                            const uint8_t *msg, size_t msglen, hbs_stateful_step *st)
{
    int rc;
    if (!k || !sig || !st || (!msg && msglen))
        return HBS_ERR_INVALID_ARGUMENT;
    if ((rc = reserve_for_sign(k, sigcap)) != HBS_OK)
        return rc;
    st->family = k->family;
    rc = k->hss ? hbs_hss_sign_begin(k->hss, sig, sigcap, msg, msglen, &st->u.h)
                : hbs_xmss_sign_begin(k->xmss, sig, sigcap, msg, msglen, &st->u.x);
    if (rc != HBS_OK)
        hbs_memzero(sig, sigcap);
    return rc;
}

int hbs_stateful_sign_finish(hbs_stateful_key *k, hbs_stateful_step *st,
                             const uint8_t *leaves, const uint8_t *ots, uint8_t *sig,
                             size_t sigcap)
{
    int rc;
    if (!k || !st || !sig || st->family != k->family)
        return HBS_ERR_INVALID_ARGUMENT;
    rc = k->hss ? hbs_hss_sign_finish(k->hss, &st->u.h, leaves, ots, sig, sigcap)
                : hbs_xmss_sign_finish(k->xmss, &st->u.x, leaves, ots, sig, sigcap);
    if (rc != HBS_OK)
        hbs_memzero(sig, sigcap);
    return rc;
}

int hbs_stateful_xmss_job(const hbs_stateful_key *k, hbs_xmss_leaf_job *job)
{
    if (!k || !job || !k->xmss)
        return HBS_ERR_INVALID_ARGUMENT;
    hbs_xmss_key_leaf_job(k->xmss, job);
    return HBS_OK;
}
