/* A small, strict JSON reader for test data (RFC 8259; no extensions).
 *
 * json_parse builds the whole tree in one pass, in time linear in the input: strings are
 * unescaped into one buffer sized from the input, and the items of every array and object
 * are laid out contiguously, so json_at is O(1). json_get scans an object's members in order
 * (the objects in test data have a handful of keys) and returns the first match.
 *
 * Every accessor accepts NULL and answers "missing", so lookups chain without checks:
 *   json_str(json_get(json_at(json_get(doc, "testGroups"), 0), "parameterSet"))
 */
#ifndef HBS_TEST_JSON_H
#define HBS_TEST_JSON_H

#include <stddef.h>
#include <stdint.h>

typedef struct json json;

/* Parses text[0..len) (need not be NUL-terminated); NULL on any syntax error, invalid UTF-8,
 * nesting deeper than 512, trailing garbage, or out of memory. */
json *json_parse(const char *text, size_t len);
/* Frees a tree returned by json_parse (only its root may be passed; NULL is fine). */
void json_free(json *v);

/* Member `key` of an object; NULL if missing or if obj is not an object. */
const json *json_get(const json *obj, const char *key);
/* Number of items of an array; 0 if not an array. */
size_t json_len(const json *arr);
/* Item i of an array; NULL if out of range or not an array. */
const json *json_at(const json *arr, size_t i);
/* The unescaped, NUL-terminated text of a string; NULL if not a string. (A string holding
 * \u0000 is cut short there.) */
const char *json_str(const json *v);
/* 1 only for the literal true. */
int json_is_true(const json *v);
/* The value of a number that is a whole number fitting a long long; dflt otherwise. */
long long json_int(const json *v, long long dflt);
/* Any number as a double; dflt if v is not a number. */
double json_num(const json *v, double dflt);

/* Decodes the hex string in field `key` of obj with test_unhex; NULL if the field is missing,
 * not a string, or not hex. "" gives a non-NULL buffer with *len = 0. free() the result. */
uint8_t *json_hex(const json *obj, const char *key, size_t *len);

#endif
