/* Interoperability with @noble/post-quantum, an independent SLH-DSA implementation written in
 * JavaScript (version pinned in tests/interop/package.json), driven through noble.mjs:
 *  a. hbs signs, noble verifies, and noble rejects a tampered copy of each signature;
 *  b. noble makes keys and signatures from seeds, hbs verifies them and makes the same bytes;
 *  c. noble verifies every NIST prompt signature that the vectors group wrote in this run.
 * Each batch is one node process (noble.mjs spreads it over the CPU cores itself).
 * Noble's SHAKE "s" signing takes up to ~40 s per signature, so the s sets are sampled
 * lightly (about 1.5 minutes for the group on 2 cores). HBS_INTEROP_FULL=1 widens the
 * samples: hbs signs every pre-hash function with every set, and noble signs with every set,
 * pre-hash and internal included (several minutes more). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "hbs/slhdsa.h"
#include "json.h"
#include "test.h"

#ifndef HBS_SOURCE_DIR
#define HBS_SOURCE_DIR "."
#endif
#define INTEROP_DIR HBS_SOURCE_DIR "/tests/interop"
#define NOBLE_MODULE INTEROP_DIR "/node_modules/@noble/post-quantum/slh-dsa.js"

/* The test's own spelling of the names, so that a wrong name in hbs cannot agree with itself. */
static const char *const set_names[HBS_SLHDSA_NUM_PARAMS] = {
    "SLH-DSA-SHA2-128s",  "SLH-DSA-SHA2-128f",  "SLH-DSA-SHA2-192s",  "SLH-DSA-SHA2-192f",
    "SLH-DSA-SHA2-256s",  "SLH-DSA-SHA2-256f",  "SLH-DSA-SHAKE-128s", "SLH-DSA-SHAKE-128f",
    "SLH-DSA-SHAKE-192s", "SLH-DSA-SHAKE-192f", "SLH-DSA-SHAKE-256s", "SLH-DSA-SHAKE-256f",
};

#define NUM_PH 12
static const struct {
    hbs_prehash ph;
    const char *name;
} prehashes[NUM_PH] = {
    {HBS_PREHASH_SHA2_224, "SHA2-224"},         {HBS_PREHASH_SHA2_256, "SHA2-256"},
    {HBS_PREHASH_SHA2_384, "SHA2-384"},         {HBS_PREHASH_SHA2_512, "SHA2-512"},
    {HBS_PREHASH_SHA2_512_224, "SHA2-512/224"}, {HBS_PREHASH_SHA2_512_256, "SHA2-512/256"},
    {HBS_PREHASH_SHA3_224, "SHA3-224"},         {HBS_PREHASH_SHA3_256, "SHA3-256"},
    {HBS_PREHASH_SHA3_384, "SHA3-384"},         {HBS_PREHASH_SHA3_512, "SHA3-512"},
    {HBS_PREHASH_SHAKE_128, "SHAKE-128"},       {HBS_PREHASH_SHAKE_256, "SHAKE-256"},
};

enum { IFACE_PURE, IFACE_PREHASH, IFACE_INTERNAL };
static const char *const iface_names[] = {"pure", "prehash", "internal"};

/* Where opt_rand comes from: PK.seed (deterministic), the case's addrnd, or the signer's own
 * random source (hbs_slhdsa_sign / hash_sign on our side, noble's default on noble's). */
enum { RND_DET, RND_GIVEN, RND_OWN };
static const char *const rnd_names[] = {"deterministic", "hedged", "hedged (own randomness)"};

#define MAX_MSG 320
#define MAX_CASES 256

typedef struct {
    hbs_slhdsa_id id;
    const hbs_slhdsa_params *p;
    int iface, rnd, ph; /* ph: index into prehashes[], -1 for none */
    int keys_only;      /* direction b: compare keygen only (no noble signature) */
    size_t msglen, ctxlen;
    uint8_t seed[3 * HBS_SLHDSA_MAX_N];
    uint8_t addrnd[HBS_SLHDSA_MAX_N];
    uint8_t ctx[HBS_SLHDSA_MAX_CONTEXT_BYTES];
    uint8_t msg[MAX_MSG + 1]; /* + 1: room for the "longer message" tampering */
    uint8_t sk[HBS_SLHDSA_MAX_SK_BYTES], pk[HBS_SLHDSA_MAX_PK_BYTES];
    uint8_t *sig; /* hbs's signature (direction a), NULL if signing failed */
} xcase;

typedef struct {
    xcase *v;
    size_t n;
} case_list;

static int full_mode(void)
{
    const char *e = getenv("HBS_INTEROP_FULL");
    return e && *e && strcmp(e, "0") != 0;
}

static int is_fast_set(hbs_slhdsa_id id)
{
    const char *name = set_names[id];
    return name[strlen(name) - 1] == 'f';
}

/* ---- running noble.mjs ------------------------------------------------------------------ */

/* Wraps src in single quotes for /bin/sh; 0 if it does not fit. */
static int shell_quote(char *dst, size_t size, const char *src)
{
    size_t k = 0;
    if (size < 3)
        return 0;
    dst[k++] = '\'';
    for (; *src; src++) {
        const char *piece = *src == '\'' ? "'\\''" : NULL;
        size_t len = piece ? 4 : 1;
        if (k + len + 2 > size)
            return 0;
        if (piece)
            memcpy(dst + k, piece, len);
        else
            dst[k] = *src;
        k += len;
    }
    dst[k++] = '\'';
    dst[k] = '\0';
    return 1;
}

static const char *node_binary(void)
{
    const char *e = getenv("HBS_NODE");
    return e && *e ? e : "node";
}

/* 1 if node and the pinned noble are installed; otherwise the test is skipped, loudly. */
static int noble_ready(void)
{
    struct stat st;
    char cmd[4200], node[2100];
    if (stat(INTEROP_DIR "/noble.mjs", &st) != 0) {
        CHECK_MSG(0, "%s/noble.mjs is missing from the source tree", INTEROP_DIR);
        return 0;
    }
    if (!shell_quote(node, sizeof node, node_binary())) {
        CHECK_MSG(0, "HBS_NODE is too long");
        return 0;
    }
    snprintf(cmd, sizeof cmd, "%s --version >/dev/null 2>&1", node);
    if (system(cmd) != 0) {
        test_skip("Node.js (`%s`) not found: install Node.js >= 20.19, then run "
                  "`make interop-deps`",
                  node_binary());
        return 0;
    }
    if (stat(NOBLE_MODULE, &st) != 0) {
        test_skip("@noble/post-quantum is not installed in %s: run `make interop-deps`",
                  INTEROP_DIR);
        return 0;
    }
    return 1;
}

/* Reads a whole text file and cuts it into lines (in place). *lines is free()d by the caller,
 * and so is the returned text. */
static char *read_lines(const char *path, char ***lines, size_t *count)
{
    size_t len = 0, n = 0;
    char *text = (char *)test_read_file(path, &len);
    *lines = NULL;
    *count = 0;
    if (!text)
        return NULL;
    for (size_t i = 0; i < len; i++)
        n += text[i] == '\n';
    char **v = malloc((n + 1) * sizeof *v);
    if (!v) {
        free(text);
        return NULL;
    }
    size_t k = 0;
    char *s = text;
    while (*s) {
        char *nl = strchr(s, '\n');
        if (nl)
            *nl = '\0';
        v[k++] = s;
        if (!nl)
            break;
        s = nl + 1;
    }
    *lines = v;
    *count = k;
    return text;
}

/* Runs `node noble.mjs OP IN > OUT`. Noble's one-line summary (its standard error) becomes a
 * note of the test; on failure the whole of it is reported. Returns 1 on success. */
static int run_noble(const char *op, const char *in, const char *out)
{
    char err[600], q_node[2100], q_script[2100], q_in[1300], q_out[1300], q_err[1300];
    char cmd[9000];
    snprintf(err, sizeof err, "%s.err", out);
    if (!shell_quote(q_node, sizeof q_node, node_binary()) ||
        !shell_quote(q_script, sizeof q_script, INTEROP_DIR "/noble.mjs") ||
        !shell_quote(q_in, sizeof q_in, in) || !shell_quote(q_out, sizeof q_out, out) ||
        !shell_quote(q_err, sizeof q_err, err)) {
        CHECK_MSG(0, "paths too long for the noble command line");
        return 0;
    }
    snprintf(cmd, sizeof cmd, "%s %s %s %s >%s 2>%s", q_node, q_script, op, q_in, q_out,
             q_err);
    int status = system(cmd);
    char *text = (char *)test_read_file(err, NULL);
    const char *summary = NULL;
    if (text) {
        /* The summary is the last line that begins "noble ". */
        for (char *s = text; (s = strstr(s, "noble ")) != NULL; s++)
            if (s == text || s[-1] == '\n')
                summary = s;
    }
    int ok = status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (ok && summary) {
        size_t len = strcspn(summary, "\n");
        test_note("%.*s", (int)len, summary);
    }
    CHECK_MSG(ok, "`node noble.mjs %s` failed (status %d): %s", op, status,
              text && *text ? text : "(no message)");
    free(text);
    return ok;
}

/* Removes a batch's files once the test has passed; they stay for a look after a failure. */
static void remove_batch_files(const char *in, const char *out)
{
    char err[600];
    if (test_failed())
        return;
    snprintf(err, sizeof err, "%s.err", out);
    if (in)
        remove(in);
    remove(out);
    remove(err);
}

/* ---- cases ------------------------------------------------------------------------------ */

static void list_init(case_list *l)
{
    l->v = calloc(MAX_CASES, sizeof *l->v);
    l->n = 0;
    CHECK_MSG(l->v != NULL, "out of memory");
}

static void list_free(case_list *l)
{
    for (size_t i = 0; l->v && i < l->n; i++) {
        hbs_memzero(l->v[i].sk, sizeof l->v[i].sk);
        free(l->v[i].sig);
    }
    free(l->v);
    l->v = NULL;
}

/* Adds a case with fresh random seed, addrnd, context and message. */
static void add_case(case_list *l, hbs_slhdsa_id id, int iface, int ph, int rnd, size_t ctxlen,
                     size_t msglen)
{
    if (!l->v || l->n >= MAX_CASES) {
        CHECK_MSG(l->v == NULL, "more than %d interop cases", MAX_CASES);
        return;
    }
    xcase *c = &l->v[l->n];
    memset(c, 0, sizeof *c);
    c->id = id;
    c->p = hbs_slhdsa_params_by_name(set_names[id]);
    CHECK_MSG(c->p != NULL, "hbs_slhdsa_params_by_name(\"%s\") is NULL", set_names[id]);
    if (!c->p)
        return;
    CHECK_MSG(hbs_slhdsa_params_id(c->p) == id, "%s has the wrong id", set_names[id]);
    c->iface = iface;
    c->ph = ph;
    c->rnd = rnd;
    c->ctxlen = ctxlen;
    c->msglen = msglen;
    test_rand_bytes(c->seed, sizeof c->seed);
    test_rand_bytes(c->addrnd, sizeof c->addrnd);
    test_rand_bytes(c->ctx, sizeof c->ctx);
    test_rand_bytes(c->msg, sizeof c->msg);
    l->n++;
}

static void add_keys_only(case_list *l, hbs_slhdsa_id id)
{
    add_case(l, id, IFACE_PURE, -1, RND_DET, 0, 0);
    if (l->n && l->v[l->n - 1].id == id)
        l->v[l->n - 1].keys_only = 1;
}

/* Direction a (hbs signs): for f sets everything; for s sets a sample, and across the s sets
 * all 12 pre-hash functions. */
static void build_hbs_signs(case_list *l, int full)
{
    size_t s_index = 0;
    for (int i = 0; i < HBS_SLHDSA_NUM_PARAMS; i++) {
        hbs_slhdsa_id id = (hbs_slhdsa_id)i;
        if (is_fast_set(id) || full) {
            add_case(l, id, IFACE_PURE, -1, RND_DET, 0, 0);
            add_case(l, id, IFACE_PURE, -1, RND_GIVEN, 255, 64);
            add_case(l, id, IFACE_PURE, -1, RND_DET, 255, 1);
            add_case(l, id, IFACE_PURE, -1, RND_OWN, 11, 200);
            for (int h = 0; h < NUM_PH; h++) {
                size_t ctxlen = h % 4 == 0 ? 0 : h % 4 == 1 ? 255 : (size_t)(3 * h + 1);
                add_case(l, id, IFACE_PREHASH, h, h % 3, ctxlen, (size_t)(37 * h % 301));
            }
            add_case(l, id, IFACE_INTERNAL, -1, RND_DET, 0, 50);
            add_case(l, id, IFACE_INTERNAL, -1, RND_GIVEN, 0, 1);
        } else {
            add_case(l, id, IFACE_PURE, -1, RND_DET, 0, 33);
            add_case(l, id, IFACE_PURE, -1, RND_OWN, 255, 100);
            add_case(l, id, IFACE_PREHASH, (int)(2 * s_index), RND_GIVEN, 0, 0);
            add_case(l, id, IFACE_PREHASH, (int)(2 * s_index + 1), RND_DET, 200, 300);
            add_case(l, id, IFACE_INTERNAL, -1, RND_GIVEN, 0, 40);
            s_index++;
        }
    }
}

/* Direction b (noble signs): noble is slow, so a few cases per set; across the f sets all 12
 * pre-hash functions. Noble's SHAKE-192s/256s signing (~40 s each) and more s-set cases
 * (pre-hash, internal) only with full. */
static void build_noble_signs(case_list *l, int full)
{
    size_t f_index = 0, s_index = 0;
    for (int i = 0; i < HBS_SLHDSA_NUM_PARAMS; i++) {
        hbs_slhdsa_id id = (hbs_slhdsa_id)i;
        if (is_fast_set(id)) {
            add_case(l, id, IFACE_PURE, -1, RND_DET, 255, 77);
            add_case(l, id, IFACE_PREHASH, (int)(2 * f_index), RND_DET, 0, 100);
            add_case(l, id, IFACE_PREHASH, (int)(2 * f_index + 1), RND_GIVEN, 9, 0);
            add_case(l, id, IFACE_INTERNAL, -1, RND_GIVEN, 0, 33);
            if (id < HBS_SLHDSA_SHAKE_128S) /* SHA2 sets: cheap enough for one more */
                add_case(l, id, IFACE_PURE, -1, RND_GIVEN, 0, 5);
            if (id == HBS_SLHDSA_SHA2_128F)
                add_case(l, id, IFACE_PURE, -1, RND_OWN, 1, 300);
            f_index++;
            continue;
        }
        int h = (int)(2 * s_index++); /* this s set's two pre-hash functions: h, h + 1 */
        if (!full && (id == HBS_SLHDSA_SHAKE_192S || id == HBS_SLHDSA_SHAKE_256S)) {
            add_keys_only(l, id);
            continue;
        }
        add_case(l, id, IFACE_PURE, -1, RND_DET, 0, 48);
        if (full) {
            add_case(l, id, IFACE_PREHASH, h, RND_GIVEN, 255, 20);
            add_case(l, id, IFACE_PREHASH, h + 1, RND_DET, 1, 0);
            add_case(l, id, IFACE_INTERNAL, -1, RND_GIVEN, 0, 40);
        }
    }
}

static hbs_prehash case_ph(const xcase *c)
{
    return c->ph >= 0 ? prehashes[c->ph].ph : HBS_PREHASH_NONE;
}

/* hbs's signature for the case, as the chosen API makes it. */
static int hbs_sign_case(const xcase *c, uint8_t *sig)
{
    const uint8_t *addrnd = c->rnd == RND_GIVEN ? c->addrnd : NULL;
    if (c->iface == IFACE_INTERNAL)
        return hbs_slhdsa_sign_internal(c->p, sig, c->msg, c->msglen, c->sk, addrnd);
    if (c->rnd == RND_OWN && c->iface == IFACE_PURE)
        return hbs_slhdsa_sign(c->p, sig, c->msg, c->msglen, c->ctx, c->ctxlen, c->sk);
    if (c->rnd == RND_OWN)
        return hbs_slhdsa_hash_sign(c->p, sig, c->msg, c->msglen, c->ctx, c->ctxlen,
                                    case_ph(c), c->sk);
    return hbs_slhdsa_sign_ex(c->p, sig, c->msg, c->msglen, c->ctx, c->ctxlen, case_ph(c),
                              c->sk, addrnd);
}

static int hbs_verify_case(const xcase *c, const uint8_t *sig, size_t siglen)
{
    if (c->iface == IFACE_INTERNAL)
        return hbs_slhdsa_verify_internal(c->p, sig, siglen, c->msg, c->msglen, c->pk);
    return hbs_slhdsa_verify_ex(c->p, sig, siglen, c->msg, c->msglen, c->ctx, c->ctxlen,
                                case_ph(c), c->pk);
}

static void put_hex(FILE *f, const uint8_t *b, size_t n)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        putc(digits[b[i] >> 4], f);
        putc(digits[b[i] & 15], f);
    }
}

static void put_field(FILE *f, const char *name, const uint8_t *b, size_t n)
{
    fprintf(f, ",\"%s\":\"", name);
    put_hex(f, b, n);
    putc('"', f);
}

static void describe(char *out, size_t size, const xcase *c, size_t k)
{
    snprintf(out, size, "case %zu: %s %s%s%s, %s, ctx %zu bytes, msg %zu bytes", k,
             set_names[c->id], iface_names[c->iface], c->ph >= 0 ? " " : "",
             c->ph >= 0 ? prehashes[c->ph].name : "", rnd_names[c->rnd], c->ctxlen,
             c->msglen);
}

/* ---- a. hbs signs, noble verifies ------------------------------------------------------- */

/* One verify line; the buffers may differ from the case's own (tampered copies). */
static void put_verify_line(FILE *f, const xcase *c, int iface, int ph, const uint8_t *pk,
                            const uint8_t *msg, size_t msglen, const uint8_t *ctx, size_t ctxlen,
                            const uint8_t *sig)
{
    fprintf(f, "{\"alg\":\"%s\",\"iface\":\"%s\",\"prehash\":\"%s\"", set_names[c->id],
            iface_names[iface], ph >= 0 ? prehashes[ph].name : "none");
    put_field(f, "pk", pk, hbs_slhdsa_pk_bytes(c->p));
    put_field(f, "msg", msg, msglen);
    put_field(f, "ctx", ctx, ctxlen);
    put_field(f, "sig", sig, hbs_slhdsa_sig_bytes(c->p));
    fputs("}\n", f);
}

/* Writes the k-th case with one change that must make it invalid; says which change. The
 * kinds rotate so every set meets several of them. */
static const char *put_tampered(FILE *f, const xcase *c, size_t k, uint8_t *sig)
{
    size_t siglen = hbs_slhdsa_sig_bytes(c->p), n = hbs_slhdsa_n(c->p);
    uint8_t pk[HBS_SLHDSA_MAX_PK_BYTES], msg[MAX_MSG + 1], ctx[HBS_SLHDSA_MAX_CONTEXT_BYTES];
    size_t msglen = c->msglen, ctxlen = c->ctxlen;
    int iface = c->iface, ph = c->ph;
    const char *what;
    memcpy(sig, c->sig, siglen);
    memcpy(pk, c->pk, sizeof pk);
    memcpy(msg, c->msg, sizeof msg);
    memcpy(ctx, c->ctx, sizeof ctx);
    switch (k % 5) {
    case 1:
        if (msglen) {
            msg[k % msglen] ^= 1;
            what = "one message bit flipped";
        } else {
            msglen = 1;
            what = "one byte appended to the empty message";
        }
        break;
    case 2:
        if (iface == IFACE_INTERNAL) {
            sig[k % n] ^= 0x80; /* internal has no context: change R instead */
            what = "one bit of R flipped";
        } else if (ctxlen) {
            ctx[k % ctxlen] ^= 2;
            what = "one context bit flipped";
        } else {
            ctxlen = 1;
            ctx[0] = 0;
            what = "a one-byte context instead of the empty one";
        }
        break;
    case 3:
        pk[n + k % n] ^= 4;
        what = "one bit of PK.root flipped";
        break;
    case 4:
        if (iface == IFACE_PREHASH) {
            ph = (ph + 1) % NUM_PH;
            what = "verified with the next pre-hash function";
        } else if (iface == IFACE_PURE) {
            iface = IFACE_PREHASH;
            ph = (int)(k % NUM_PH);
            what = "pure signature verified as HashSLH-DSA";
        } else {
            iface = IFACE_PURE;
            ctxlen = 0;
            what = "internal signature verified as pure with empty context";
        }
        break;
    default:
        sig[(k * 7919 + 13) % siglen] ^= (uint8_t)(1u << (k % 8));
        what = "one signature bit flipped";
        break;
    }
    put_verify_line(f, c, iface, ph, pk, msg, msglen, ctx, ctxlen, sig);
    return what;
}

static void sign_all_with_hbs(case_list *l)
{
    for (size_t k = 0; k < l->n; k++) {
        xcase *c = &l->v[k];
        char where[200];
        describe(where, sizeof where, c, k);
        int rc = hbs_slhdsa_keygen_from_seed(c->p, c->sk, c->pk, c->seed);
        CHECK_MSG(rc == 0, "%s: keygen_from_seed returned %d", where, rc);
        if (rc != 0)
            continue;
        c->sig = malloc(hbs_slhdsa_sig_bytes(c->p));
        CHECK_MSG(c->sig != NULL, "out of memory");
        if (!c->sig)
            continue;
        rc = hbs_sign_case(c, c->sig);
        CHECK_MSG(rc == 0, "%s: hbs signing returned %d", where, rc);
        if (rc != 0) {
            free(c->sig);
            c->sig = NULL;
        }
    }
}

static void check_coverage(const case_list *l, const char *what)
{
    unsigned hashes = 0, ifaces = 0, rnds = 0;
    for (size_t k = 0; k < l->n; k++) {
        const xcase *c = &l->v[k];
        if (c->keys_only)
            continue;
        ifaces |= 1u << c->iface;
        rnds |= 1u << c->rnd;
        if (c->ph >= 0)
            hashes |= 1u << c->ph;
    }
    CHECK_MSG(hashes == (1u << NUM_PH) - 1, "%s: not every pre-hash function is covered", what);
    CHECK_MSG(ifaces == 7 && rnds == 7, "%s: an interface or randomness kind is missing", what);
}

static void test_noble_verifies_hbs(void)
{
    if (!noble_ready())
        return;
    case_list l;
    list_init(&l);
    build_hbs_signs(&l, full_mode());
    check_coverage(&l, "hbs signs");
    sign_all_with_hbs(&l);

    char in[512], out[512];
    snprintf(in, sizeof in, "%s/noble-verify-in.jsonl", test_tmpdir());
    snprintf(out, sizeof out, "%s/noble-verify-out.txt", test_tmpdir());
    FILE *f = fopen(in, "w");
    uint8_t *scratch = malloc(HBS_SLHDSA_MAX_SIG_BYTES);
    const char **tamper = calloc(l.n ? l.n : 1, sizeof *tamper);
    CHECK_MSG(f && scratch && tamper, "cannot write %s", in);
    size_t lines = 0;
    for (size_t k = 0; f && scratch && tamper && k < l.n; k++) {
        const xcase *c = &l.v[k];
        if (!c->sig)
            continue;
        put_verify_line(f, c, c->iface, c->ph, c->pk, c->msg, c->msglen, c->ctx, c->ctxlen,
                        c->sig);
        tamper[k] = put_tampered(f, c, k, scratch);
        lines += 2;
    }
    if (f)
        CHECK_MSG(fclose(f) == 0, "error writing %s", in);

    char **ans = NULL, *text = NULL;
    size_t nans = 0, valid_ok = 0, tampered_ok = 0, signed_cases = lines / 2;
    if (f && run_noble("verify", in, out))
        text = read_lines(out, &ans, &nans);
    CHECK_MSG(!text || nans == lines, "noble answered %zu lines for %zu cases", nans, lines);
    for (size_t k = 0, j = 0; text && nans == lines && k < l.n; k++) {
        const xcase *c = &l.v[k];
        char where[200];
        if (!c->sig)
            continue;
        describe(where, sizeof where, c, k);
        const char *good = ans[j++], *bad = ans[j++];
        CHECK_MSG(strcmp(good, "1") == 0, "%s: noble says \"%s\" for hbs's signature", where,
                  good);
        CHECK_MSG(strcmp(bad, "0") == 0, "%s, %s: noble says \"%s\", expected \"0\"", where,
                  tamper[k], bad);
        valid_ok += strcmp(good, "1") == 0;
        tampered_ok += strcmp(bad, "0") == 0;
    }
    test_note("noble accepted %zu/%zu hbs signatures (12 sets, pure/prehash/internal, "
              "deterministic and hedged), rejected %zu/%zu tampered copies",
              valid_ok, signed_cases, tampered_ok, signed_cases);
    free(ans);
    free(text);
    free(tamper);
    free(scratch);
    list_free(&l);
    remove_batch_files(in, out);
}

/* ---- b. noble signs, hbs verifies and agrees byte for byte ------------------------------ */

static void put_sign_line(FILE *f, const xcase *c)
{
    fprintf(f, "{\"alg\":\"%s\",\"iface\":\"%s\",\"prehash\":\"%s\"", set_names[c->id],
            iface_names[c->iface], c->ph >= 0 ? prehashes[c->ph].name : "none");
    put_field(f, "seed", c->seed, hbs_slhdsa_seed_bytes(c->p));
    put_field(f, "msg", c->msg, c->msglen);
    put_field(f, "ctx", c->ctx, c->ctxlen);
    if (c->rnd == RND_GIVEN)
        put_field(f, "addrnd", c->addrnd, hbs_slhdsa_n(c->p));
    else if (c->rnd == RND_DET)
        fputs(",\"addrnd\":\"\"", f);
    else
        fputs(",\"addrnd\":null", f);
    if (c->keys_only)
        fputs(",\"keygen_only\":true", f);
    fputs("}\n", f);
}

/* What check_noble_answer found to agree. */
enum { AGREE_KEYS = 1, AGREE_VERIFY = 2, AGREE_BYTES = 4 };

/* Checks one answer of `noble.mjs sign` against hbs; returns AGREE_* flags. */
static int check_noble_answer(xcase *c, const char *where, const char *line, uint8_t *mine)
{
    size_t pklen = 0, sklen = 0, siglen = 0;
    if (line[0] != '{') {
        CHECK_MSG(0, "%s: noble could not sign: %s", where, line);
        return 0;
    }
    json *doc = json_parse(line, strlen(line));
    uint8_t *pk = json_hex(doc, "pk", &pklen), *sk = json_hex(doc, "sk", &sklen);
    uint8_t *sig = c->keys_only ? NULL : json_hex(doc, "sig", &siglen);
    json_free(doc);
    int agree = 0;
    int rc = hbs_slhdsa_keygen_from_seed(c->p, c->sk, c->pk, c->seed);
    if (!pk || !sk || (!c->keys_only && !sig)) {
        CHECK_MSG(0, "%s: noble's answer lacks pk, sk or sig", where);
    } else if (rc != 0) {
        CHECK_MSG(0, "%s: hbs keygen_from_seed returned %d", where, rc);
    } else if (pklen != hbs_slhdsa_pk_bytes(c->p) || memcmp(pk, c->pk, pklen) != 0 ||
               sklen != hbs_slhdsa_sk_bytes(c->p) || memcmp(sk, c->sk, sklen) != 0) {
        CHECK_MSG(0, "%s: noble's keys from the seed differ from hbs's", where);
    } else {
        agree |= AGREE_KEYS;
    }
    if ((agree & AGREE_KEYS) && !c->keys_only) {
        CHECK_MSG(siglen == hbs_slhdsa_sig_bytes(c->p), "%s: noble's signature has %zu bytes",
                  where, siglen);
        rc = hbs_verify_case(c, sig, siglen);
        CHECK_MSG(rc == 0, "%s: hbs rejects noble's signature (%d: %s)", where, rc,
                  hbs_strerror(rc));
        if (rc == 0 && siglen == hbs_slhdsa_sig_bytes(c->p)) {
            size_t flip = (siglen / 3 + 5) % siglen;
            sig[flip] ^= 0x10;
            rc = hbs_verify_case(c, sig, siglen);
            sig[flip] ^= 0x10;
            CHECK_MSG(rc == HBS_ERR_VERIFY_FAILED,
                      "%s: hbs accepts noble's signature with a flipped bit (rc %d)", where, rc);
            if (rc == HBS_ERR_VERIFY_FAILED)
                agree |= AGREE_VERIFY;
            if (c->rnd != RND_OWN) {
                rc = hbs_sign_case(c, mine);
                int same = rc == 0 && memcmp(mine, sig, siglen) == 0;
                CHECK_MSG(same, "%s: hbs's signature differs from noble's (sign rc %d)", where,
                          rc);
                if (same)
                    agree |= AGREE_BYTES;
            }
        }
    }
    free(pk);
    if (sk)
        hbs_memzero(sk, sklen);
    free(sk);
    free(sig);
    return agree;
}

static void test_hbs_verifies_noble(void)
{
    if (!noble_ready())
        return;
    int full = full_mode();
    case_list l;
    list_init(&l);
    build_noble_signs(&l, full);
    check_coverage(&l, "noble signs");

    char in[512], out[512];
    snprintf(in, sizeof in, "%s/noble-sign-in.jsonl", test_tmpdir());
    snprintf(out, sizeof out, "%s/noble-sign-out.jsonl", test_tmpdir());
    FILE *f = fopen(in, "w");
    CHECK_MSG(f != NULL, "cannot write %s", in);
    for (size_t k = 0; f && k < l.n; k++)
        put_sign_line(f, &l.v[k]);
    if (f)
        CHECK_MSG(fclose(f) == 0, "error writing %s", in);

    char **ans = NULL, *text = NULL;
    size_t nans = 0, keys = 0, verified = 0, same_bytes = 0, sigs = 0, keys_only = 0;
    size_t deterministic = 0;
    uint8_t *mine = malloc(HBS_SLHDSA_MAX_SIG_BYTES);
    CHECK_MSG(mine != NULL, "out of memory");
    if (f && mine && run_noble("sign", in, out))
        text = read_lines(out, &ans, &nans);
    CHECK_MSG(!text || nans == l.n, "noble answered %zu lines for %zu cases", nans, l.n);
    for (size_t k = 0; text && nans == l.n && k < l.n; k++) {
        xcase *c = &l.v[k];
        char where[200];
        describe(where, sizeof where, c, k);
        int agree = check_noble_answer(c, where, ans[k], mine);
        keys += (size_t)((agree & AGREE_KEYS) != 0);
        verified += (size_t)((agree & AGREE_VERIFY) != 0);
        same_bytes += (size_t)((agree & AGREE_BYTES) != 0);
        keys_only += (size_t)c->keys_only;
        sigs += (size_t)!c->keys_only;
        deterministic += (size_t)(!c->keys_only && c->rnd != RND_OWN);
    }
    test_note("hbs verified %zu/%zu noble signatures (all 12 pre-hash functions, internal, "
              "hedged) and made %zu/%zu of them byte for byte; keys equal in %zu/%zu cases",
              verified, sigs, same_bytes, deterministic, keys, l.n);
    if (keys_only)
        test_note("SHAKE-192s/256s: keys only, noble needs ~40 s per signature there "
                  "(HBS_INTEROP_FULL=1 signs them too)");
    free(ans);
    free(text);
    free(mine);
    list_free(&l);
    remove_batch_files(in, out);
}

/* ---- c. the NIST prompt signatures of the vectors group --------------------------------- */

static void test_noble_verifies_prompt_signatures(void)
{
    char in[512], out[512];
    struct stat st;
    snprintf(in, sizeof in, "%s/prompt-signatures.jsonl", test_tmpdir());
    snprintf(out, sizeof out, "%s/prompt-signatures-noble.txt", test_tmpdir());
    if (stat(in, &st) != 0) {
        test_skip("no %s: it is written by vectors/acvp_siggen_prompt earlier in the same "
                  "run; run the whole suite, or `hbs_tests acvp_siggen_prompt interop`",
                  in);
        return;
    }
    if (!noble_ready())
        return;
    char **cases = NULL, **ans = NULL;
    size_t ncases = 0, nans = 0, valid = 0;
    size_t per_iface[3] = {0, 0, 0};
    char *case_text = read_lines(in, &cases, &ncases);
    char *text = NULL;
    CHECK_MSG(case_text != NULL, "cannot read %s", in);
    if (case_text && run_noble("verify", in, out))
        text = read_lines(out, &ans, &nans);
    CHECK_MSG(!text || nans == ncases, "noble answered %zu lines for %zu signatures", nans,
              ncases);
    for (size_t k = 0; text && nans == ncases && k < ncases; k++) {
        int good = strcmp(ans[k], "1") == 0;
        valid += (size_t)good;
        for (int i = 0; i < 3; i++) {
            char key[40];
            snprintf(key, sizeof key, "\"iface\":\"%s\"", iface_names[i]);
            if (good && strstr(cases[k], key))
                per_iface[i]++;
        }
        if (!good) {
            /* Name the case by its tcId and set, which lead the line. */
            CHECK_MSG(0, "prompt signature %.80s...: noble says \"%s\"", cases[k], ans[k]);
        }
    }
    CHECK_MSG(ncases > 0, "%s is empty", in);
    test_note("noble accepted %zu/%zu NIST prompt signatures made by hbs (%zu pure, %zu "
              "prehash, %zu internal)",
              valid, ncases, per_iface[0], per_iface[1], per_iface[2]);
    free(cases);
    free(case_text);
    free(ans);
    free(text);
    remove_batch_files(NULL, out); /* the input belongs to the vectors group */
}

const hbs_test hbs_tests_interop[] = {
    {"noble_verifies_hbs", test_noble_verifies_hbs},
    {"hbs_verifies_noble", test_hbs_verifies_noble},
    {"noble_verifies_prompt_signatures", test_noble_verifies_prompt_signatures},
    {NULL, NULL},
};
