/* fuzz/fuzz_fastpath.c: differential libFuzzer target for the parser's fast path
 * (parser/fast.c). parser_parse_python() (fast path first) and parser_parse_python_ts()
 * (tree-sitter only) must agree on every input: the same code; on CR_OK the same IR node by
 * node, positions included, and the same reasons; otherwise the same error and position.
 * Any disagreement aborts, as do crashes, leaks and UB. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "parser/parser_int.h"
#include "tests/ir_compare.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cr_policy pol;
    cr_policy_default(&pol);
    pol.limits.max_source = 1u << 16;
    ir_module *a = NULL, *b = NULL;
    cr_error ea = { 0 }, eb = { 0 };
    char why[512];
    const char *src = (const char *)data;
    cr_code ra = parser_parse_python(src, size, &pol.limits, &a, &ea);
    cr_code rb = parser_parse_python_ts(src, size, &pol.limits, &b, &eb);
    int bad = 0;
    if (ra != rb) {
        fprintf(stderr, "fast path: code %d (%d:%d %s), tree-sitter: %d (%d:%d %s)\n", ra,
                ea.line, ea.col, ea.message, rb, eb.line, eb.col, eb.message);
        bad = 1;
    } else if (ra == CR_OK && !ir_compare_modules(a, b, why, sizeof why)) {
        fprintf(stderr, "fast path and tree-sitter differ: %s\n", why);
        bad = 1;
    } else if (ra != CR_OK && (ea.line != eb.line || ea.col != eb.col ||
                               strcmp(ea.message, eb.message) != 0)) {
        fprintf(stderr, "errors differ: %d:%d %s / %d:%d %s\n", ea.line, ea.col, ea.message,
                eb.line, eb.col, eb.message);
        bad = 1;
    }
    ir_module_free(a);
    ir_module_free(b);
    if (bad) abort();
    return 0;
}
