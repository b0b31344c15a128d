/* ir/build.h: the node builders every front end calls (the tree-sitter lowering, the fast
 * path, the DSL), so that where a node stands and what a literal holds are decided once:
 * the fast path must build exactly the IR the lowering builds, and most disagreements
 * between the two were a rule each kept its own copy of. Each front end keeps only its
 * syntax. The builders return NULL when the module's arena is full. */
#ifndef CR_IR_BUILD_H
#define CR_IR_BUILD_H

#include "ir/ir.h"

/* Where a node, or an operand with its parentheses, stands: 1-based, end exclusive. */
typedef struct {
    int line, col, end_line, end_col;
} ir_span;

/* A node of `kind` over `at` with room for n children. */
ir_node *ir_node_span(ir_module *m, ir_kind kind, ir_span at, uint32_t n);

/* A node whose text is a copy of s[0..len) (NAME, NUM, ATTR, KEYWORD, STR ...). */
ir_node *ir_node_text(ir_module *m, ir_kind kind, ir_span at, uint32_t n, const char *s,
                      size_t len);

/* A STR node over `at` holding b's bytes (NUL bytes included); empties b. */
ir_node *ir_str_take(ir_module *m, ir_span at, cr_buf *b);

/* A BINOP or BOOLOP of l and r. It spans from the start of xl to the end of xr, the
 * operands' extents with their parentheses: tree-sitter places a binary_operator so, and so
 * does CPython's col_offset, which tracebacks report (`(3 + 4) / 0` fails at the `(`). */
ir_node *ir_binary(ir_module *m, ir_kind kind, int op, ir_node *l, ir_span xl, ir_node *r,
                   ir_span xr);

/* A UNARY, STARRED or DSTARRED over kid: from its operator at line:col to the end of xk, the
 * operand's extent with its parentheses. */
ir_node *ir_prefix(ir_module *m, ir_kind kind, int op, int line, int col, ir_node *kid,
                   ir_span xk);

/* The value of string literal text s[0..n) appended to b: CPython's escapes unless `raw`,
 * `{{` and `}}` as single braces when `fmt`, and \r\n or \r read as \n. *bad is set for
 * escapes it does not decode (\N{...}, surrogates, short \x). CR_ELIMIT past b's bound,
 * CR_ENOMEM. */
cr_code ir_decode_string(cr_buf *b, const char *s, size_t n, int raw, int fmt, int *bad);

/* Whether the decimal integer literal s[0..n) has the leading zeros CPython refuses ("01";
 * "000" and "0_0" are zero, as `300,000` is a tuple of them). CPython refuses "0_1" too,
 * which this lets through. */
int ir_int_leading_zeros(const char *s, size_t n);

/* tree-sitter-python reads an element that starts with a star (`*a - b`, `*g(1)`) as an
 * expression whose leftmost operand is the starred one; CPython's star takes the whole
 * element. Given the element n so misread, returns it rebuilt as CPython reads it: STARRED
 * over the element, whose leftmost operand starts after the star. n itself when no STARRED
 * stands at its left edge. */
ir_node *ir_starred_whole(ir_node *n);

#endif
