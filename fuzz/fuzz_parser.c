/* fuzz/fuzz_parser.c: libFuzzer target for the Python front end (checks, tree-sitter,
 * lowering, whitelist). Crashes, leaks, hangs and UB reports are the only failures. */
#include <stdint.h>

#include "parser/parser.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cr_policy pol;
    cr_policy_default(&pol);
    pol.limits.max_source = 1u << 16;
    ir_module *m = NULL;
    cr_error err = { 0 };
    if (parser_parse_python((const char *)data, size, &pol.limits, &m, &err) == CR_OK) {
        cr_buf b;
        cr_buf_init(&b, 1u << 20);
        ir_dump(m->root, &b);
        cr_buf_free(&b);
        ir_module_free(m);
    }
    return 0;
}
