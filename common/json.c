/* common/json.c: text of any bytes as JSON strings that jansson cannot refuse. */
#include "common/json.h"

#include <sodium.h>
#include <stdlib.h>
#include <string.h>

json_t *cr_json_text(const char *p, size_t len, int *replaced)
{
    if (!p) p = "";
    if (cr_utf8_valid(p, len)) return json_stringn(p, len);
    cr_buf b;
    cr_buf_init(&b, 0);
    cr_code rc = CR_OK;
    for (size_t i = 0, n, bad; i < len && rc == CR_OK; i += n ? n : bad) {
        n = cr_utf8_step(p + i, len - i, &bad);
        rc = n ? cr_buf_put(&b, p + i, n) : cr_buf_put(&b, "\xEF\xBF\xBD", 3);
    }
    json_t *s = rc == CR_OK ? json_stringn_nocheck(b.p ? b.p : "", b.len) : NULL;
    cr_buf_free(&b);
    if (s && replaced) *replaced = 1;
    return s;
}

json_t *cr_json_str(const char *s) { return s ? cr_json_text(s, strlen(s), NULL) : json_null(); }

json_t *cr_json_bytes_if_not_utf8(const char *p, size_t len)
{
    if (!p || cr_utf8_valid(p, len)) return json_null();
    size_t n = sodium_base64_encoded_len(len, sodium_base64_VARIANT_ORIGINAL);
    char *t = malloc(n);
    if (!t) return NULL;
    sodium_bin2base64(t, n, (const unsigned char *)p, len, sodium_base64_VARIANT_ORIGINAL);
    json_t *s = json_string_nocheck(t);
    free(t);
    return s;
}

void cr_json_set(json_t *o, const char *key, json_t *v, int *failed)
{
    if (!v || json_object_set_new(o, key, v) != 0) *failed = 1;
}

void cr_json_append(json_t *a, json_t *v, int *failed)
{
    if (!v || json_array_append_new(a, v) != 0) *failed = 1;
}
