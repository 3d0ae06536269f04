/* libFuzzer target: the state-store file parser (src/state/store.c) on arbitrary bytes.
 *
 * Each input is tried twice: as it is (which nearly always fails the checksum), and with its
 * last 32 bytes replaced by the right SHA-256 (and, if the last byte is odd, the length field
 * made to match), so the checks behind the checksum are reached too. A fixed-up image with
 * the right magic also goes through the real file path (written as a key file, opened with
 * hbs_store_open). Promises checked:
 *  - the parser answers HBS_OK or HBS_ERR_STATE, and zeroes its outputs on error;
 *  - an accepted image encodes back to exactly the input (one encoding per state);
 *  - hbs_store_open agrees with the parser, returns the same fields, and never changes the
 *    file it reads.
 * A broken promise aborts, which libFuzzer reports as a crash. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hash/hash.h"
#include "state/store.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void require(int cond)
{
    if (!cond)
        abort();
}

/* Parses in; returns the result after checking the parser's promises. */
static int parse_checked(const uint8_t *in, size_t n, uint32_t *scheme, uint64_t *next,
                         const uint8_t **pl, size_t *len)
{
    int err = hbs_store_parse(in, n, scheme, next, pl, len);
    if (err != HBS_OK) {
        require(err == HBS_ERR_STATE);
        require(*scheme == 0 && *next == 0 && *pl == NULL && *len == 0);
        return err;
    }
    require(*pl == in + HBS_STORE_HEADER_BYTES && *len <= n);
    require(hbs_store_encoded_bytes(*len) == n);
    uint8_t *back = malloc(n);
    require(back != NULL);
    hbs_store_encode(back, *scheme, *next, *pl, *len);
    require(memcmp(back, in, n) == 0);
    free(back);
    return err;
}

/* A private directory for the key file, made once per process. */
static const char *key_path(void)
{
    static char path[512];
    if (!path[0]) {
        char dir[256];
        const char *base = getenv("TMPDIR");
        snprintf(dir, sizeof dir, "%s/hbs-fuzz-state-XXXXXX", base && *base ? base : "/tmp");
        require(mkdtemp(dir) != NULL);
        snprintf(path, sizeof path, "%s/key", dir);
    }
    return path;
}

static void through_file(const uint8_t *img, size_t n, int parsed, uint32_t scheme,
                         uint64_t next, const uint8_t *pl, size_t len)
{
    const char *path = key_path();
    FILE *f = fopen(path, "wb");
    require(f != NULL);
    require(n == 0 || fwrite(img, 1, n, f) == n);
    require(fclose(f) == 0);
    hbs_store *s = NULL;
    int err = hbs_store_open(&s, path, 0);
    require(err == parsed);
    if (err == HBS_OK) {
        size_t got;
        const uint8_t *p = hbs_store_payload(s, &got);
        require(hbs_store_scheme(s) == scheme && hbs_store_next(s) == next);
        require(got == len && (len == 0 || memcmp(p, pl, len) == 0));
        hbs_store_close(s);
    } else {
        require(s == NULL);
    }
    /* The file is untouched. */
    f = fopen(path, "rb");
    require(f != NULL);
    uint8_t *back = malloc(n + 1);
    require(back != NULL);
    size_t r = fread(back, 1, n + 1, f);
    fclose(f);
    require(r == n && (n == 0 || memcmp(back, img, n) == 0));
    free(back);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint32_t scheme;
    uint64_t next;
    const uint8_t *pl;
    size_t len;
    (void)parse_checked(data, size, &scheme, &next, &pl, &len);

    if (size < HBS_STORE_CHECKSUM_BYTES)
        return 0;
    uint8_t *fixed = malloc(size);
    require(fixed != NULL);
    memcpy(fixed, data, size);
    size_t body = size - HBS_STORE_CHECKSUM_BYTES;
    /* The last byte, overwritten by the checksum, chooses whether the length field is made
     * to match the size as well: that takes the mutator long to find on its own. */
    if (size >= HBS_STORE_HEADER_BYTES + HBS_STORE_CHECKSUM_BYTES && (data[size - 1] & 1)) {
        uint64_t l = (uint64_t)(body - HBS_STORE_HEADER_BYTES);
        for (int i = 0; i < 8; i++)
            fixed[24 + i] = (uint8_t)(l >> (56 - 8 * i));
    }
    hbs_sha256(fixed + body, fixed, body);
    int err = parse_checked(fixed, size, &scheme, &next, &pl, &len);
    /* The file path is slow: only for images that get past the magic. */
    if (err == HBS_OK || (size >= 8 && memcmp(fixed, "HBSSTATE", 8) == 0))
        through_file(fixed, size, err, scheme, next, pl, len);
    free(fixed);
    return 0;
}
