/* fuzz/fuzz_dsl.c: libFuzzer target for the FinQA DSL front end: the program parser and
 * lowering against a small table, the --lang auto test, the cell reader and the table JSON
 * reader, all on the same input. Crashes, leaks, hangs and UB reports are the only failures. */
#include <stdint.h>
#include <string.h>

#include "dsl/dsl.h"

static const char TABLE[] =
    "[[\"\", \"2016\", \"2015\"], [\"net sales\", \"$ 1,234.5\", \"( 12 )\"],"
    " [\"a, b\", \"12.5%\", \"-\"], [\"bad\", \"n/a\", \"1\"]]";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cr_policy pol;
    cr_policy_default(&pol);
    pol.limits.max_source = 1u << 16;
    pol.limits.max_memory = 1u << 24;
    const char *s = (const char *)data;
    cr_error err = { 0 };
    dsl_table *t = NULL;
    if (dsl_table_from_json(TABLE, sizeof TABLE - 1, &pol.limits, &t, &err) != CR_OK) return 0;

    ir_module *m = NULL;
    if (dsl_compile(s, size, t, &pol.limits, &m, &err) == CR_OK) {
        cr_buf b;
        cr_buf_init(&b, 1u << 20);
        ir_dump(m->root, &b);
        cr_buf_free(&b);
        ir_module_free(m);
    }
    dsl_table_free(t);
    (void)dsl_looks_like(s, size);

    cr_buf cell;
    cr_buf_init(&cell, 0);
    (void)dsl_cell_parse(s, size, &cell, &err);
    cr_buf_free(&cell);

    dsl_table *u = NULL;
    if (dsl_table_from_json(s, size, &pol.limits, &u, &err) == CR_OK && u->nrows > 0)
        (void)dsl_table_find_row(u, u->rows[0].name, strlen(u->rows[0].name));
    dsl_table_free(u);
    return 0;
}
