/* A strict JSON reader for test data: one pass, linear time, one allocation per few thousand
 * nodes. See json.h for the interface. */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "test.h"

enum { J_NULL, J_FALSE, J_TRUE, J_NUMBER, J_STRING, J_ARRAY, J_OBJECT };

#define JSON_MAX_DEPTH 512
#define JSON_CHUNK_NODES 4096

struct json {
    const char *key; /* member name when this node sits in an object, else NULL */
    union {
        json *items;     /* array or object: len nodes, contiguous */
        const char *str; /* string: len bytes plus a NUL */
    } u;
    size_t len;
    double num;
    long long inum; /* valid when is_int */
    unsigned char type;
    unsigned char is_int;
};

/* Nodes live in chunks; a container's items are copied into one chunk when it closes. */
typedef struct chunk {
    struct chunk *next;
    size_t cap, used;
    json nodes[];
} chunk;

/* The root is the first member, so json_free can find everything from it. */
typedef struct {
    json root;
    chunk *chunks;
    char *strings;
} json_doc;

typedef struct {
    const unsigned char *p, *end;
    char *sout;   /* next free byte of the string buffer */
    json *stack;  /* scratch: the items of the containers still open, innermost last */
    size_t sp, scap;
    chunk *chunks;
    int depth;
} parser;

static json *arena_alloc(parser *ps, size_t n)
{
    chunk *c = ps->chunks;
    if (!c || c->cap - c->used < n) {
        size_t cap = n > JSON_CHUNK_NODES ? n : JSON_CHUNK_NODES;
        c = malloc(sizeof(chunk) + cap * sizeof(json));
        if (!c)
            return NULL;
        c->cap = cap;
        c->used = 0;
        c->next = ps->chunks;
        ps->chunks = c;
    }
    json *r = c->nodes + c->used;
    c->used += n;
    return r;
}

static int stack_push(parser *ps, const json *v)
{
    if (ps->sp == ps->scap) {
        size_t cap = ps->scap ? 2 * ps->scap : 256;
        json *s = realloc(ps->stack, cap * sizeof(json));
        if (!s)
            return -1;
        ps->stack = s;
        ps->scap = cap;
    }
    ps->stack[ps->sp++] = *v;
    return 0;
}

static void skip_ws(parser *ps)
{
    while (ps->p < ps->end &&
           (*ps->p == ' ' || *ps->p == '\n' || *ps->p == '\r' || *ps->p == '\t'))
        ps->p++;
}

static int literal(parser *ps, const char *word)
{
    size_t n = strlen(word);
    if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, word, n) != 0)
        return -1;
    ps->p += n;
    return 0;
}

static int hex4(const unsigned char *s, unsigned *out)
{
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        unsigned c = s[i], d;
        if (c >= '0' && c <= '9')
            d = c - '0';
        else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
            d = (c | 0x20) - 'a' + 10;
        else
            return -1;
        v = v << 4 | d;
    }
    *out = v;
    return 0;
}

static char *put_utf8(char *o, unsigned cp)
{
    if (cp < 0x80) {
        *o++ = (char)cp;
    } else if (cp < 0x800) {
        *o++ = (char)(0xc0 | cp >> 6);
        *o++ = (char)(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
        *o++ = (char)(0xe0 | cp >> 12);
        *o++ = (char)(0x80 | (cp >> 6 & 0x3f));
        *o++ = (char)(0x80 | (cp & 0x3f));
    } else {
        *o++ = (char)(0xf0 | cp >> 18);
        *o++ = (char)(0x80 | (cp >> 12 & 0x3f));
        *o++ = (char)(0x80 | (cp >> 6 & 0x3f));
        *o++ = (char)(0x80 | (cp & 0x3f));
    }
    return o;
}

/* Length of the well-formed UTF-8 sequence at s (RFC 3629: no overlongs, no surrogates,
 * nothing above U+10FFFF), or 0 if it is not one. */
static size_t utf8_seq(const unsigned char *s, const unsigned char *end)
{
    unsigned c = s[0];
    size_t n;
    unsigned lo = 0x80, hi = 0xbf; /* allowed range of the second byte */
    if (c >= 0xc2 && c <= 0xdf) {
        n = 2;
    } else if (c >= 0xe0 && c <= 0xef) {
        n = 3;
        if (c == 0xe0)
            lo = 0xa0;
        else if (c == 0xed)
            hi = 0x9f;
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4;
        if (c == 0xf0)
            lo = 0x90;
        else if (c == 0xf4)
            hi = 0x8f;
    } else {
        return 0;
    }
    if ((size_t)(end - s) < n || s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < n; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    return n;
}

/* An escape after the backslash at ps->p[-1]; writes its UTF-8 to *o. */
static int parse_escape(parser *ps, char **o)
{
    if (ps->p >= ps->end)
        return -1;
    unsigned char c = *ps->p++;
    switch (c) {
    case '"': *(*o)++ = '"'; return 0;
    case '\\': *(*o)++ = '\\'; return 0;
    case '/': *(*o)++ = '/'; return 0;
    case 'b': *(*o)++ = '\b'; return 0;
    case 'f': *(*o)++ = '\f'; return 0;
    case 'n': *(*o)++ = '\n'; return 0;
    case 'r': *(*o)++ = '\r'; return 0;
    case 't': *(*o)++ = '\t'; return 0;
    case 'u': break;
    default: return -1;
    }
    unsigned cp, lo;
    if (ps->end - ps->p < 4 || hex4(ps->p, &cp) != 0)
        return -1;
    ps->p += 4;
    if (cp >= 0xdc00 && cp <= 0xdfff)
        return -1; /* a low surrogate alone */
    if (cp >= 0xd800 && cp <= 0xdbff) {
        /* "\uD83D\uDE00" is 12 input bytes for 4 output bytes, so the buffer still fits. */
        if (ps->end - ps->p < 6 || ps->p[0] != '\\' || ps->p[1] != 'u' ||
            hex4(ps->p + 2, &lo) != 0 || lo < 0xdc00 || lo > 0xdfff)
            return -1;
        ps->p += 6;
        cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
    }
    *o = put_utf8(*o, cp);
    return 0;
}

/* A string starting at the opening quote; its text goes to the string buffer. The output
 * never outgrows the input, so a buffer the size of the whole input always has room. */
static int parse_string(parser *ps, const char **out, size_t *outlen)
{
    char *start = ps->sout, *o = ps->sout;
    ps->p++; /* the quote */
    for (;;) {
        const unsigned char *run = ps->p;
        while (ps->p < ps->end && *ps->p >= 0x20 && *ps->p < 0x80 && *ps->p != '"' &&
               *ps->p != '\\')
            ps->p++;
        memcpy(o, run, (size_t)(ps->p - run));
        o += ps->p - run;
        if (ps->p >= ps->end)
            return -1;
        unsigned char c = *ps->p;
        if (c == '"') {
            ps->p++;
            break;
        }
        if (c == '\\') {
            ps->p++;
            if (parse_escape(ps, &o) != 0)
                return -1;
        } else if (c >= 0x80) {
            size_t n = utf8_seq(ps->p, ps->end);
            if (!n)
                return -1;
            memcpy(o, ps->p, n);
            o += n;
            ps->p += n;
        } else {
            return -1; /* a raw control character */
        }
    }
    *o++ = '\0';
    ps->sout = o;
    *out = start;
    *outlen = (size_t)(o - start - 1);
    return 0;
}

static int is_digit(const unsigned char *p, const unsigned char *end)
{
    return p < end && *p >= '0' && *p <= '9';
}

/* -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? */
static int parse_number(parser *ps, json *v)
{
    const unsigned char *s = ps->p, *p = ps->p, *end = ps->end;
    int neg = 0, whole = 1, overflow = 0;
    unsigned long long mag = 0;
    if (p < end && *p == '-') {
        neg = 1;
        p++;
    }
    if (!is_digit(p, end))
        return -1;
    if (*p == '0') {
        p++;
    } else {
        while (is_digit(p, end)) {
            unsigned d = *p++ - '0';
            if (mag > (~0ULL - d) / 10)
                overflow = 1;
            else
                mag = mag * 10 + d;
        }
    }
    if (p < end && *p == '.') {
        whole = 0;
        p++;
        if (!is_digit(p, end))
            return -1;
        while (is_digit(p, end))
            p++;
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        whole = 0;
        p++;
        if (p < end && (*p == '+' || *p == '-'))
            p++;
        if (!is_digit(p, end))
            return -1;
        while (is_digit(p, end))
            p++;
    }
    ps->p = p;
    v->type = J_NUMBER;
    /* LLONG_MIN's magnitude is one more than LLONG_MAX. */
    unsigned long long limit = (unsigned long long)LLONG_MAX + (neg ? 1u : 0u);
    if (whole && !overflow && mag <= limit) {
        v->is_int = 1;
        v->inum = !neg ? (long long)mag : mag ? -(long long)(mag - 1) - 1 : 0;
        v->num = (double)v->inum;
        return 0;
    }
    /* Rare in test data: strtod needs a NUL-terminated copy. */
    size_t n = (size_t)(p - s);
    char *tmp = malloc(n + 1);
    if (!tmp)
        return -1;
    memcpy(tmp, s, n);
    tmp[n] = '\0';
    v->num = strtod(tmp, NULL);
    free(tmp);
    return 0;
}

static int parse_value(parser *ps, json *v);

/* An array or object starting at its opening bracket. Items are parsed onto the scratch
 * stack, then moved into one contiguous block when the container closes. */
static int parse_container(parser *ps, json *v, int is_object)
{
    unsigned char close = is_object ? '}' : ']';
    size_t base = ps->sp;
    if (++ps->depth > JSON_MAX_DEPTH)
        return -1;
    ps->p++;
    skip_ws(ps);
    if (ps->p < ps->end && *ps->p == close) {
        ps->p++;
    } else {
        for (;;) {
            json item;
            memset(&item, 0, sizeof item);
            skip_ws(ps);
            if (is_object) {
                size_t klen;
                if (ps->p >= ps->end || *ps->p != '"' || parse_string(ps, &item.key, &klen) != 0)
                    return -1;
                skip_ws(ps);
                if (ps->p >= ps->end || *ps->p != ':')
                    return -1;
                ps->p++;
                skip_ws(ps);
            }
            if (parse_value(ps, &item) != 0 || stack_push(ps, &item) != 0)
                return -1;
            skip_ws(ps);
            if (ps->p >= ps->end)
                return -1;
            if (*ps->p == ',') {
                ps->p++;
                continue;
            }
            if (*ps->p != close)
                return -1;
            ps->p++;
            break;
        }
    }
    size_t n = ps->sp - base;
    v->type = is_object ? J_OBJECT : J_ARRAY;
    v->len = n;
    v->u.items = NULL;
    if (n) {
        v->u.items = arena_alloc(ps, n);
        if (!v->u.items)
            return -1;
        memcpy(v->u.items, ps->stack + base, n * sizeof(json));
    }
    ps->sp = base;
    ps->depth--;
    return 0;
}

/* A value at ps->p (whitespace already skipped); v->key is left as the caller set it. */
static int parse_value(parser *ps, json *v)
{
    if (ps->p >= ps->end)
        return -1;
    switch (*ps->p) {
    case '{': return parse_container(ps, v, 1);
    case '[': return parse_container(ps, v, 0);
    case '"': v->type = J_STRING; return parse_string(ps, &v->u.str, &v->len);
    case 't': v->type = J_TRUE; return literal(ps, "true");
    case 'f': v->type = J_FALSE; return literal(ps, "false");
    case 'n': v->type = J_NULL; return literal(ps, "null");
    default: return parse_number(ps, v);
    }
}

static void free_chunks(chunk *c)
{
    while (c) {
        chunk *next = c->next;
        free(c);
        c = next;
    }
}

json *json_parse(const char *text, size_t len)
{
    if (!text)
        return NULL;
    json_doc *doc = calloc(1, sizeof *doc);
    char *strings = malloc(len + 1);
    parser ps;
    memset(&ps, 0, sizeof ps);
    ps.p = (const unsigned char *)text;
    ps.end = ps.p + len;
    ps.sout = strings;
    int rc = -1;
    if (doc && strings) {
        skip_ws(&ps);
        rc = parse_value(&ps, &doc->root);
        skip_ws(&ps);
        if (rc == 0 && ps.p != ps.end)
            rc = -1;
    }
    free(ps.stack);
    if (rc != 0) {
        free_chunks(ps.chunks);
        free(strings);
        free(doc);
        return NULL;
    }
    doc->chunks = ps.chunks;
    doc->strings = strings;
    return &doc->root;
}

void json_free(json *v)
{
    if (!v)
        return;
    json_doc *doc = (json_doc *)(void *)v;
    free_chunks(doc->chunks);
    free(doc->strings);
    free(doc);
}

const json *json_get(const json *obj, const char *key)
{
    if (!obj || obj->type != J_OBJECT || !key)
        return NULL;
    for (size_t i = 0; i < obj->len; i++)
        if (strcmp(obj->u.items[i].key, key) == 0)
            return &obj->u.items[i];
    return NULL;
}

size_t json_len(const json *arr)
{
    return arr && arr->type == J_ARRAY ? arr->len : 0;
}

const json *json_at(const json *arr, size_t i)
{
    if (!arr || arr->type != J_ARRAY || i >= arr->len)
        return NULL;
    return &arr->u.items[i];
}

const char *json_str(const json *v)
{
    return v && v->type == J_STRING ? v->u.str : NULL;
}

int json_is_true(const json *v)
{
    return v && v->type == J_TRUE;
}

long long json_int(const json *v, long long dflt)
{
    if (!v || v->type != J_NUMBER)
        return dflt;
    if (v->is_int)
        return v->inum;
    /* 1e3 is a whole number too; the bounds keep the conversion defined. */
    if (v->num == floor(v->num) && v->num >= -9223372036854775808.0 &&
        v->num < 9223372036854775808.0)
        return (long long)v->num;
    return dflt;
}

double json_num(const json *v, double dflt)
{
    if (!v || v->type != J_NUMBER)
        return dflt;
    return v->is_int ? (double)v->inum : v->num;
}

uint8_t *json_hex(const json *obj, const char *key, size_t *len)
{
    const char *s = json_str(json_get(obj, key));
    if (!s)
        return NULL;
    return test_unhex(s, len);
}
