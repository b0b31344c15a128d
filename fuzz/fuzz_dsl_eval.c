/* fuzz/fuzz_dsl_eval.c: libFuzzer target for a DSL program evaluated against a table, the
 * whole engine (cr_run, sandboxes off). The input is "program \0 table": the table text has
 * one row per line and cells separated by tabs, turned into the JSON the API takes, so that
 * the fuzzer mutates cells directly instead of JSON syntax. No NUL: the program alone. */
#include <jansson.h>

#include "common/json.h"
#include "fuzz/fuzz_engine.h"

/* Rows of tab-separated cells as a JSON list of lists of strings; NULL when there are none.
 * A cell's bytes that are not UTF-8 (which JSON cannot carry) become U+FFFD. */
static char *dsl_eval_table_json(const char *s, size_t len)
{
    json_t *rows = json_array();
    size_t i = 0;
    while (rows && i < len) {
        size_t end = i;
        while (end < len && s[end] != '\n') end++;
        json_t *row = json_array();
        size_t c = i;
        for (;;) {
            size_t ce = c;
            while (ce < end && s[ce] != '\t') ce++;
            json_array_append_new(row, cr_json_text(s + c, ce - c, NULL));
            if (ce >= end) break;
            c = ce + 1;
        }
        json_array_append_new(rows, row);
        i = end + 1;
    }
    char *text = rows && json_array_size(rows) ? json_dumps(rows, JSON_COMPACT) : NULL;
    json_decref(rows);
    return text;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *s = (const char *)data;
    const char *sep = memchr(s, '\0', size);
    size_t plen = sep ? (size_t)(sep - s) : size;
    cr_request *req = cr_request_new();
    if (!req) return 0;
    char *table = sep ? dsl_eval_table_json(sep + 1, size - plen - 1) : NULL;
    cr_error err = { 0 };
    if (cr_request_set_code(req, s, plen) == CR_OK &&
        cr_request_set_lang(req, CR_LANG_DSL) == CR_OK &&
        (!table || cr_request_set_table_json(req, table, strlen(table), &err) == CR_OK))
        fuzz_run_checked(req);
    free(table);
    cr_request_free(req);
    return 0;
}
