/* audit/json.c: a stored row as one line of JSON (calc-audit show and export). */
#include "audit/audit_int.h"
#include "common/json.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A JSON string; bytes that are not UTF-8 (stdout of a sandboxed program may hold any) go out
 * as {"base64": "..."} so that export never loses or invents a byte. */
static cr_code put_string(cr_buf *b, const char *p, size_t len)
{
    if (!p) return cr_buf_puts(b, "null");
    json_t *raw = cr_json_bytes_if_not_utf8(p, len), *s;
    if (!raw) return CR_ENOMEM;
    if (json_is_null(raw)) s = cr_json_text(p, len, NULL);
    else s = json_pack("{s:o}", "base64", raw);        /* takes raw */
    char *t = s ? json_dumps(s, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
    json_decref(s);
    if (!t) return CR_ENOMEM;
    cr_code rc = cr_buf_puts(b, t);
    free(t);
    return rc;
}

/* A field that holds JSON text goes out as that JSON, byte for byte, so exact decimals such as
 * 0.1 in the bindings are not turned into doubles by a re-encoding. Newlines can only be
 * whitespace in valid JSON, so they become spaces and the line stays one line. Text that does
 * not parse goes out as a string. */
static cr_code put_json_text(cr_buf *b, const char *p, size_t len)
{
    if (!p) return cr_buf_puts(b, "null");
    /* jansson stops at a NUL byte and accepts what came before it: "999\0" would go out
     * with the NUL in it, which ends the line for every C reader of the output. */
    if (memchr(p, '\0', len)) return put_string(b, p, len);
    json_t *j = json_loadb(p, len, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
    if (!j) return put_string(b, p, len);
    json_decref(j);
    cr_code rc = CR_OK;
    for (size_t i = 0; i < len && rc == CR_OK; i++)
        rc = cr_buf_putc(b, p[i] == '\n' || p[i] == '\r' ? ' ' : p[i]);
    return rc;
}

/* Which fields hold JSON text rather than plain text. */
static int is_json_field(const char *name)
{
    static const char *const names[] = { "bindings", "tables", "policy", "reasons", "error",
                                         "artifacts", "timings", NULL };
    for (int i = 0; names[i]; i++)
        if (strcmp(names[i], name) == 0) return 1;
    return 0;
}

static const char *field_key(const char *name)
{
    if (strcmp(name, "out") == 0) return "stdout";
    if (strcmp(name, "err_out") == 0) return "stderr";
    return name;
}

cr_code audit_entry_json(const audit_entry *e, cr_buf *b, cr_error *err)
{
    const audit_record *r = &e->rec;
    char hex[2 * AUDIT_HASH_LEN + 1], when[64] = "";
    time_t secs = (time_t)(r->time_us / 1000000);
    struct tm tm;
    if (r->time_us >= 0 && gmtime_r(&secs, &tm))
        snprintf(when, sizeof when, "%04d-%02d-%02dT%02d:%02d:%02d.%06dZ", tm.tm_year + 1900,
                 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                 (int)(r->time_us % 1000000));
    /* seq as SQLite stores it, a signed 64-bit integer: a tampered row's negative seq read
     * as unsigned is a number past what JSON readers (jansson among them) take. */
    cr_code rc = cr_buf_printf(b, "{\"seq\":%lld,\"format\":%lld,\"time\":\"%s\"",
                               (long long)e->seq, (long long)e->format, when);
#define S(f) if (rc == CR_OK) rc = cr_buf_printf(b, ",\"%s\":", field_key(#f)); \
    if (rc == CR_OK) rc = is_json_field(#f) ? put_json_text(b, r->f, r->f##_len) \
                                            : put_string(b, r->f, r->f##_len);
#define I(f) if (rc == CR_OK) rc = cr_buf_printf(b, ",\"%s\":%lld", #f, (long long)r->f);
    AUDIT_FIELDS(S, I)
#undef S
#undef I
    if (rc == CR_OK)
        rc = cr_buf_printf(b, ",\"status_name\":\"%s\"", cr_strerror((cr_code)r->status));
    audit_hex(e->prev_hash, hex);
    if (rc == CR_OK) rc = cr_buf_printf(b, ",\"prev_hash\":\"%s\"", hex);
    audit_hex(e->hash, hex);
    if (rc == CR_OK) rc = cr_buf_printf(b, ",\"hash\":\"%s\"}", hex);
    if (rc != CR_OK) return cr_error_set(err, CR_ENOMEM, 0, 0, "audit: record %llu as JSON",
                                         (unsigned long long)e->seq);
    return CR_OK;
}
