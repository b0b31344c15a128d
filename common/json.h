/* common/json.h: the one way text becomes JSON. jansson refuses a string that is not UTF-8
 * (json_string() returns NULL, and json_object_set_new() then drops the member without a
 * word), while stdout, stderr, exception messages and file names from the code may hold any
 * bytes. Every JSON string made from such text comes from cr_json_text(), which cannot refuse
 * it, and every member is set with cr_json_set(), which counts a failure instead of dropping
 * the member, so that an object is built whole or not at all. */
#ifndef CR_JSON_H
#define CR_JSON_H

#include <jansson.h>

#include "common/common.h"

/* A JSON string of p[0..len), any bytes: each maximal ill-formed UTF-8 subpart becomes one
 * U+FFFD, as Python's decode(errors="replace") does; NUL bytes are kept (\u0000). *replaced
 * (may be NULL) is set to 1 when something was replaced, else left alone. NULL only when
 * memory runs out. */
json_t *cr_json_text(const char *p, size_t len, int *replaced);
/* The same for a NUL-ended string; NULL gives JSON null. */
json_t *cr_json_str(const char *s);
/* p[0..len) as base64 text (a name that must stay identifiable byte for byte), JSON null
 * when p is valid UTF-8 already; NULL only when memory runs out. */
json_t *cr_json_bytes_if_not_utf8(const char *p, size_t len);

/* o[key] = v (the reference is taken, NULL included); a NULL v or a failed insertion sets
 * *failed, so the caller can refuse the whole object rather than hand it out short. */
void cr_json_set(json_t *o, const char *key, json_t *v, int *failed);
void cr_json_append(json_t *a, json_t *v, int *failed);

#endif
