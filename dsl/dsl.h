/* dsl/dsl.h: the FinQA DSL front end. A program is a list of steps separated by commas,
 *
 *     subtract(5829, 5735), divide(#0, 5735)
 *
 * each step an operation on two arguments. It is parsed here, checked, and lowered to the
 * IR of ir/ir.h, so that the shared exact evaluator runs it like Python code.
 *
 * Operations (all take exactly two arguments):
 *   add subtract multiply divide   a + b, a - b, a * b, a / b
 *   exp                            a ** b (FinQA's "exp" is a power, not e**x)
 *   greater                        "yes" if a > b else "no"
 *   table_max table_min            max / min / sum / sum÷count of the numeric cells of a
 *   table_sum table_average        table row: table_sum(net sales, none)
 *
 * Arguments:
 *   numbers   5829, -12.5 (or U+2212 −12.5), +3, .5, 1,234,567.8 (',' + exactly three digits is a thousands
 *             separator, so "add(1,234)" is ONE argument 1234: write "add(1, 234)"),
 *             6.9% (= 0.069, exact: "%" divides by 100)
 *   #N        the result of step N (0-based); only earlier steps may be named, and not a
 *             `greater` step, whose result is a string
 *   const_N   the number N (const_100, const_1000000); const_m1 is -1
 *   row name  first argument of a table_* op: the text up to the ',' or ')' that ends it,
 *             parentheses inside kept when balanced ("minimum rental ( a )"), or a double-
 *             quoted string with \" and \\ escapes for names holding ',' or unbalanced '('
 *   none      second argument of a table_* op (FinQA's filler), and nowhere else
 *
 * Number type: every number of a program and of a table is float-tagged, as FinQA computes
 * in binary floats: divide(6, 2) renders 3.0, subtract(11503, 10815) 688.0. The values stay
 * exact rationals (5829 is 5829, 6.9% is 69/1000); only the rendering follows Python floats.
 *
 * Table rows (dsl_table_find_row): the program's row name is matched
 *   1. exactly (bytes);
 *   2. failing that, ignoring ASCII case and all white space ("Net  Sales" = "net sales");
 * and when several rows match at the same rule, the LAST one wins, as FinQA's own evaluator
 * builds a dict from the rows in order. No match is an error naming the row.
 *
 * Which cells a table op reads: every cell of the row after the name (FinQA's rule: a row
 * is one line item across all periods). Cells are read by dsl_cell_parse(); a cell it cannot
 * read is an error naming the row, the column and the text, never a silent skip.
 *
 * Errors: dsl_parse() fails with CR_ESYNTAX, a 1-based line and column (bytes of the line,
 * plus one) and a message saying what was expected there. Problems between the program and
 * the table (no table given, no such row, an unreadable cell) are CR_EUSAGE, positioned at
 * the row argument. Bad table JSON is CR_EUSAGE with the JSON's own line:col. */
#ifndef CR_DSL_H
#define CR_DSL_H

#include <stddef.h>
#include <stdint.h>

#include "common/common.h"
#include "ir/ir.h"

typedef enum {
    DSL_ADD, DSL_SUBTRACT, DSL_MULTIPLY, DSL_DIVIDE, DSL_EXP, DSL_GREATER,
    DSL_TABLE_MAX, DSL_TABLE_MIN, DSL_TABLE_SUM, DSL_TABLE_AVERAGE,
    DSL_OP_END
} dsl_op;

typedef enum {
    DSL_ARG_NUM,    /* value: the unsigned exact decimal ("0.069" for 6.9%), neg: its sign */
    DSL_ARG_REF,    /* ref: the step index of #N */
    DSL_ARG_ROW,    /* value: the row name (quotes and escapes removed) */
    DSL_ARG_NONE
} dsl_arg_kind;

typedef struct {
    dsl_arg_kind kind;
    int neg;                 /* NUM: 1 when negative (never for a zero) */
    uint32_t ref;            /* REF */
    const char *value;       /* NUM, ROW: NUL-terminated, in the program's arena */
    int line, col;           /* 1-based start of the argument as written */
    int end_line, end_col;   /* exclusive end */
} dsl_arg;

typedef struct {
    dsl_op op;
    int line, col;           /* of the operation name */
    int end_line, end_col;   /* just past its ')' */
    dsl_arg arg[2];
} dsl_step;

/* A parsed program. Owns its arena (steps and strings). */
typedef struct {
    dsl_step *steps;
    size_t nsteps;
    cr_arena arena;
} dsl_program;

/* "add", "table_average", ...; "?" past the end. */
const char *dsl_op_name(dsl_op op);
/* Whether op reads a table row (table_max/min/sum/average). */
int dsl_op_is_table(dsl_op op);

/* Parses a program. CR_OK: *out is the caller's (dsl_program_free()). CR_ESYNTAX: err has
 * the position and what was expected; *out is NULL. CR_ELIMIT: len > lim->max_source.
 * CR_ENOMEM. `src` is borrowed and need not be NUL-terminated. */
cr_code dsl_parse(const char *src, size_t len, const cr_limits *lim, dsl_program **out,
                  cr_error *err);
void dsl_program_free(dsl_program *p);   /* NULL is a no-op */

/* Whether `src` is a DSL program rather than Python, for --lang auto. The rule: the text
 * is one or more `op(...)` separated by commas (white space and newlines allowed between
 * them), every op one of the ten DSL operation names, parentheses balanced, nothing else:
 * no '=', no statement, no comment, no other call. Arguments are not checked here, so a
 * malformed DSL program still goes to dsl_parse() and gets its DSL error. Such text is a
 * bare call of an undefined function in Python (a NameError), so reading it as DSL takes
 * nothing away from Python: `divide(5, 2)` is DSL; `print(divide(5, 2))`, `x = add(1, 2)`
 * and `divide(5, 2)  # note` are Python. Empty text is not DSL. */
int dsl_looks_like(const char *src, size_t len);

/* ---- tables ---------------------------------------------------------------------------- */

typedef struct {
    const char *name;        /* first cell */
    const char **cells;      /* the other cells, as written */
    size_t ncells;
} dsl_row;

/* A FinQA table: rows in order, header row included (it is a row like the others). Owns its
 * arena. */
typedef struct {
    dsl_row *rows;
    size_t nrows;
    cr_arena arena;
} dsl_table;

/* Reads FinQA's table JSON: a list of rows, each a non-empty list whose first cell is the
 * row name; cells are strings, or JSON integers (kept exactly). A JSON real is refused
 * (its text is lost to a binary double): write "1.5", not 1.5. Bounded by lim->max_source
 * (bytes) and lim->max_str_len (cells). CR_OK: *out is the caller's (dsl_table_free()).
 * CR_EUSAGE with line:col of the JSON, or a message naming the row and cell. `json` is
 * borrowed. */
cr_code dsl_table_from_json(const char *json, size_t len, const cr_limits *lim,
                            dsl_table **out, cr_error *err);
void dsl_table_free(dsl_table *t);   /* NULL is a no-op */

/* The index of the row `name` names under the rules at the top of this file; -1 if none. */
long dsl_table_find_row(const dsl_table *t, const char *name, size_t len);

/* Reads one table cell as filings write numbers and appends its exact value to `out` as a
 * signed decimal ("-12.3", "0.125", "1234.5"):
 *   "$ 1,234.5"  "1234.5"  "-12"  "+12"  "−12" (U+2212)   → as written, '$' and ',' dropped
 *   "( 12.3 )"  "(12.3)"  "$ ( 12.3 )"  "( $ 12.3 )"      → negative (accounting style)
 *   "12.5%"  "12.5 %"  "( 1.5 )%"                           → divided by 100
 *   "-6129 ( 6129 )"  "11.4% ( 11.4 % )"  "1,234 ( a )"  "12.3*"  "12.3 †"
 *                       → a trailing parenthesis or mark after a number is a footnote or a
 *                         restatement and is dropped (FinQA: everything from '(' on)
 *   "-"  "—" (em dash)  "–" (en dash)                      → 0: a nil amount in a filing
 * Fails with CR_EUSAGE and a message naming the text for anything else: empty cells and
 * "n/a", "nm", "none" (no value), words, two numbers, an unclosed '('. FinQA tables write an
 * em dash that lost its encoding as the number "2014"; nothing can tell it from the year, so
 * it reads as 2014, as FinQA itself reads it. */
cr_code dsl_cell_parse(const char *s, size_t len, cr_buf *out, cr_error *err);

/* ---- lowering -------------------------------------------------------------------------- */

/* Lowers `p` to an IR module the evaluator runs: step k becomes `#k = <expr>` (an IR_ASSIGN
 * to NAME "#k"), so the final value (the last variable assigned) is the last step's.
 *   add/subtract/multiply/divide  (binop + - * / A B)        exp  (binop ** A B)
 *   greater      (ifexp (compare A > B) (str "yes") (str "no"))
 *   table_max/min/sum  (call (name max|min|sum) (list (num c1 float) ...))
 *   table_average      (binop / (call (name sum) (list ...)) (num COUNT))
 *   a number  (num 5829 float); negative: (unary - (num 12 float))   #N  (name #N)
 * `t` may be NULL when the program has no table op (else CR_EUSAGE). CR_OK: *out is the
 * caller's (ir_module_free()); its arena is bounded by lim->max_memory. Both inputs are
 * borrowed and may be freed once this returns. */
cr_code dsl_lower(const dsl_program *p, const dsl_table *t, const cr_limits *lim,
                  ir_module **out, cr_error *err);

/* dsl_parse() then dsl_lower(): source to IR in one call. Same ownership and codes. */
cr_code dsl_compile(const char *src, size_t len, const dsl_table *t, const cr_limits *lim,
                    ir_module **out, cr_error *err);

/* ---- shared by the parser and the cell reader ------------------------------------------ */

/* U+2212 MINUS SIGN in UTF-8: filings and typeset answers write it for '-'. */
#define DSL_U_MINUS "\xe2\x88\x92"

/* Scans an unsigned decimal at s[0..len): digits with optional thousands separators
 * ("1,234,567": ',' then exactly three digits, the first group at most three digits) and an
 * optional fraction, or ".5". Appends the digits and point, separators removed, to `out`.
 * Returns the bytes consumed, 0 when s does not start with a number or `out` could not take
 * it (out->truncated is then set, also when malloc failed). */
size_t dsl_scan_decimal(const char *s, size_t len, cr_buf *out);
/* Divides the unsigned decimal in out->p[from..] by 100 ("14.5" → "0.145", "5" → "0.05",
 * "250" → "2.5"), leaving no needless zeros. */
cr_code dsl_decimal_percent(cr_buf *out, size_t from);

#endif
