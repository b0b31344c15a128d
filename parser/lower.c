/* parser/lower.c: tree-sitter-python CST → IR (ir/ir.h).
 *
 * Each construct of the subset has one lowering function. Anything else becomes
 * IR_UNSUPPORTED with a reason `node:<tree-sitter type>`; its statements and expressions are
 * still lowered as its children so that the whitelist also reports what is inside (an
 * `import numpy` inside a `try`). Recursion is bounded by lim->max_depth: the CST of valid
 * input can be as deep as the input is long.
 *
 * tree-sitter's node API is costly per call (ts_node_child_by_field_id walks the parent's
 * children and field map each time): the CST is first copied in one TSTreeCursor walk into a
 * flat preorder array of plain structs (symbol codes, field ids, positions), and lowering
 * reads only that. The array and the scratch stacks live in the thread's parser_scratch and
 * are reused from one parse to the next. */
#include <pthread.h>
#include <string.h>

#include "ir/build.h"
#include "parser/parser_int.h"

/* ---- symbols and fields, resolved once ------------------------------------------------- */

#define SYMBOLS(X) \
    X(module) X(block) X(comment) X(line_continuation) \
    X(expression_statement) X(assignment) X(augmented_assignment) X(if_statement) \
    X(elif_clause) X(else_clause) X(for_statement) X(while_statement) X(break_statement) \
    X(continue_statement) X(pass_statement) X(return_statement) X(function_definition) \
    X(import_statement) X(import_from_statement) X(raise_statement) X(assert_statement) \
    X(delete_statement) X(global_statement) X(print_statement) X(exec_statement) \
    X(identifier) X(integer) X(float) X(true) X(false) X(none) X(string) \
    X(concatenated_string) X(string_start) X(string_content) X(string_end) \
    X(interpolation) X(format_specifier) X(format_expression) X(type_conversion) \
    X(binary_operator) X(unary_operator) X(not_operator) X(boolean_operator) \
    X(comparison_operator) X(conditional_expression) X(call) X(argument_list) \
    X(keyword_argument) X(list_splat) X(dictionary_splat) X(attribute) X(subscript) \
    X(slice) X(list) X(tuple) X(set) X(dictionary) X(pair) X(list_comprehension) \
    X(set_comprehension) X(dictionary_comprehension) X(generator_expression) \
    X(for_in_clause) X(if_clause) X(parenthesized_expression) X(expression_list) \
    X(pattern_list) X(tuple_pattern) X(list_pattern) X(list_splat_pattern) \
    X(dictionary_splat_pattern) X(lambda) X(lambda_parameters) X(parameters) \
    X(default_parameter) X(typed_parameter) X(typed_default_parameter) X(dotted_name) \
    X(aliased_import) X(wildcard_import) X(keyword_identifier) X(ellipsis) \
    X(try_statement) X(except_clause) X(except_group_clause) X(finally_clause) \
    X(as_pattern) X(as_pattern_target) X(with_statement) X(with_clause) X(with_item)

enum {
    S_OTHER = 0,
#define X(name) S_##name,
    SYMBOLS(X)
#undef X
    S_END
};

static const char *const sym_names[S_END] = {
#define X(name) [S_##name] = #name,
    SYMBOLS(X)
#undef X
};

#define FIELDS(X) \
    X(left) X(right) X(operator) X(condition) X(consequence) X(alternative) X(body) \
    X(name) X(parameters) X(value) X(function) X(arguments) X(object) X(attribute) \
    X(argument) X(key) X(module_name) X(alias) X(expression) X(type_conversion) \
    X(format_specifier) X(subscript) X(type_parameters) X(cause)

enum {
#define X(name) F_##name,
    FIELDS(X)
#undef X
    F_END
};

static const char *const field_names[F_END] = {
#define X(name) [F_##name] = #name,
    FIELDS(X)
#undef X
};

/* Anonymous tokens the lowering looks at, by symbol too (the operators: ir/ops.def). */
enum { T_NONE, T_comma, T_eq, T_colon, T_async };

/* What one symbol means to the lowering; filled once from the grammar's symbol names. */
typedef struct {
    uint8_t s;          /* S_*: named symbols */
    uint8_t named;      /* a named (regular) symbol */
    uint8_t tok;        /* T_*: anonymous tokens */
    uint8_t binop;      /* ir_binop + 1 of an operator token, 0 if none */
    uint8_t augop;      /* ir_binop + 1 of an augmented assignment token ("+="), 0 if none */
    uint8_t cmpop;      /* ir_cmpop + 1 of a comparison token, 0 if none */
    uint8_t fields;     /* lowering reads the field ids of this symbol's children */
} sym_info;

/* ts_tree_cursor_current_field_id() costs about as much as a step of the cursor, so the
 * flat CST records field ids only under the symbols whose children lowering asks for by
 * field (field() and kid_t.field); elsewhere they read as 0. */
#define FIELD_PARENTS(X) \
    X(interpolation) X(binary_operator) X(boolean_operator) X(unary_operator) \
    X(not_operator) X(pair) X(for_in_clause) X(list_comprehension) X(set_comprehension) \
    X(dictionary_comprehension) X(generator_expression) X(keyword_argument) X(call) \
    X(attribute) X(subscript) X(default_parameter) X(typed_default_parameter) X(lambda) \
    X(assignment) X(augmented_assignment) X(if_statement) X(elif_clause) X(else_clause) \
    X(for_statement) X(while_statement) X(function_definition) X(import_statement) \
    X(import_from_statement) X(aliased_import) X(raise_statement) X(format_expression) \
    X(except_clause) X(as_pattern) X(with_statement) X(with_item)

static sym_info sym_table[2048];
static uint32_t sym_count;
static TSFieldId field_ids[F_END];
static pthread_once_t tables_once = PTHREAD_ONCE_INIT;

static void tables_init(void)
{
    static const struct { int op; const char *name; } binops[] = {
#define BINOP(id, src, prec, py) { id, src },
#define BOOLOP(id, src) { id, src },
#include "ir/ops.def"
    }, cmpops[] = {
#define CMPOP(id, src, dump) { id, src },
#include "ir/ops.def"
    };
    static const char *const toks[] = { [T_comma] = ",", [T_eq] = "=", [T_colon] = ":",
                                        [T_async] = "async" };
    const TSLanguage *lang = tree_sitter_python();
    sym_count = ts_language_symbol_count(lang);
    if (sym_count > sizeof sym_table / sizeof sym_table[0])
        sym_count = sizeof sym_table / sizeof sym_table[0];
    /* By name, not by ts_language_symbol_for_name(): aliases give one name several ids. */
    for (uint32_t s = 0; s < sym_count; s++) {
        sym_info *si = &sym_table[s];
        TSSymbolType type = ts_language_symbol_type(lang, (TSSymbol)s);
        const char *name = ts_language_symbol_name(lang, (TSSymbol)s);
        if (!name) continue;
        if (type == TSSymbolTypeRegular) {
            si->named = 1;
            for (int k = 1; k < S_END; k++)
                if (strcmp(name, sym_names[k]) == 0) { si->s = (uint8_t)k; break; }
            switch (si->s) {
#define X(name) case S_##name:
            FIELD_PARENTS(X)
#undef X
                si->fields = 1;
                break;
            default:
                break;
            }
            continue;
        }
        if (type != TSSymbolTypeAnonymous) continue;
        size_t n = strlen(name);
        for (size_t k = 0; k < sizeof binops / sizeof binops[0]; k++) {
            size_t bn = strlen(binops[k].name);
            if (n == bn && memcmp(name, binops[k].name, n) == 0) si->binop = (uint8_t)(binops[k].op + 1);
            if (n == bn + 1 && memcmp(name, binops[k].name, bn) == 0 && name[bn] == '=' &&
                binops[k].op < IR_AND)
                si->augop = (uint8_t)(binops[k].op + 1);
        }
        for (size_t k = 0; k < sizeof cmpops / sizeof cmpops[0]; k++)
            if (strcmp(name, cmpops[k].name) == 0) si->cmpop = (uint8_t)(cmpops[k].op + 1);
        for (size_t k = 1; k < sizeof toks / sizeof toks[0]; k++)
            if (strcmp(name, toks[k]) == 0) si->tok = (uint8_t)k;
    }
    for (int f = 0; f < F_END; f++)
        field_ids[f] = ts_language_field_id_for_name(lang, field_names[f],
                                                     (uint32_t)strlen(field_names[f]));
}

/* ---- the flat CST ----------------------------------------------------------------------- */

enum { CN_NAMED = 1, CN_EXTRA = 2 };

/* One CST node. Children follow their parent in preorder: the first child (if any) is the
 * next entry, the others are chained by `next`, and the subtree ends before `last`. */
typedef struct cnode {
    uint32_t start, end;            /* bytes */
    uint32_t srow, scol, erow, ecol;
    uint32_t parent, next, last;    /* indexes; next == 0: no next sibling */
    uint32_t nkids;                 /* visible children, extras included */
    TSSymbol symbol;                /* after aliases, as ts_node_symbol() */
    TSFieldId field;
    uint8_t flags;                  /* CN_* */
} cnode;

typedef const cnode *cn;            /* NULL: no such node */

static const sym_info *info(cn n)
{
    static const sym_info none;
    return n && n->symbol < sym_count ? &sym_table[n->symbol] : &none;
}

static int sym(cn n) { return n && (n->flags & CN_NAMED) ? info(n)->s : S_OTHER; }
static int tok(cn n) { return n && !(n->flags & CN_NAMED) ? info(n)->tok : T_NONE; }
static int is_named(cn n) { return n && (n->flags & CN_NAMED); }
static int is_extra(cn n) { return n->flags & CN_EXTRA; }
static cn first_child(cn n) { return n->nkids ? n + 1 : NULL; }
static cn next_sibling(const cnode *base, cn n) { return n->next ? base + n->next : NULL; }

static const char *node_type(cn n)
{
    const char *t = ts_language_symbol_name(tree_sitter_python(), n->symbol);
    return t ? t : "?";
}

/* ---- context ---------------------------------------------------------------------------- */

typedef struct {
    cn node;
    TSFieldId field;
} kid_t;

typedef struct {
    const char *src;
    size_t len;
    ir_module *m;
    const cr_limits *lim;
    cr_error *err;
    uint32_t depth;
    int in_func, in_loop;   /* for CPython's "'return' outside function" and the like */
    int call_genexp;        /* the comprehension being lowered is a call's `f(x for x in y)` */
    parser_scratch *sc;     /* the thread's buffers; the ones below are borrowed from it */
    const cnode *cst;       /* the flat CST, cst[0] the module */
    kid_t *ks;              /* scratch stack of CST children */
    size_t nks, capks;
    ir_node **is;           /* scratch stack of lowered nodes */
    size_t nis, capis;
    cr_buf sbuf;            /* string literal being decoded */
    uint32_t *split;        /* out: see parser_lower() */
} lower_ctx;

static cr_code lower_expr(lower_ctx *cx, cn ts, ir_node **out);
static cr_code lower_stmt(lower_ctx *cx, cn ts);
static cr_code lower_block(lower_ctx *cx, cn ts, ir_node **out);
static cr_code lower_target(lower_ctx *cx, cn ts, ir_node **out);

static cr_code nomem(lower_ctx *cx)
{
    return cr_error_set(cx->err, CR_ENOMEM, 0, 0, "out of memory building the IR");
}

/* The first child of n in field f (ts_node_child_by_field_id), or NULL. */
static cn field(lower_ctx *cx, cn n, int f)
{
    if (!n) return NULL;
    TSFieldId id = field_ids[f];
    for (cn k = first_child(n); k; k = next_sibling(cx->cst, k))
        if (k->field == id && !is_extra(k)) return k;
    return NULL;
}

/* The i-th named child of n, comments included (ts_node_named_child), or NULL. */
static cn named_child(lower_ctx *cx, cn n, uint32_t i)
{
    for (cn k = n ? first_child(n) : NULL; k; k = next_sibling(cx->cst, k))
        if (is_named(k) && i-- == 0) return k;
    return NULL;
}

static const char *node_src(lower_ctx *cx, cn n) { return cx->src + n->start; }
static uint32_t node_len(cn n) { return n->end - n->start; }

static ir_span span_of(cn ts)
{
    return (ir_span){ (int)ts->srow + 1, (int)ts->scol + 1, (int)ts->erow + 1, (int)ts->ecol + 1 };
}

static ir_node *mk(lower_ctx *cx, ir_kind kind, cn ts, uint32_t n)
{
    return ir_node_span(cx->m, kind, span_of(ts), n);
}

/* A node over ts whose text is the source text of `name`. */
static ir_node *mk_named(lower_ctx *cx, ir_kind kind, cn ts, uint32_t n, cn name)
{
    return ir_node_text(cx->m, kind, span_of(ts), n, node_src(cx, name), node_len(name));
}

static const char *dup(lower_ctx *cx, const char *s, size_t len)
{
    return cr_arena_strndup(&cx->m->arena, s, len);
}

/* A node whose text is the source text of `ts` (NAME, NUM). */
static cr_code mk_text(lower_ctx *cx, ir_kind kind, cn ts, ir_node **out)
{
    ir_node *n = mk_named(cx, kind, ts, 0, ts);
    if (!n) return nomem(cx);
    *out = n;
    return CR_OK;
}

/* Pushes the children of n (only the named ones when `named`; comments never) on cx->ks.
 * The caller reads cx->ks[base .. base+count) by index (the array may move) and pops them
 * with cx->nks = base. */
static cr_code kids(lower_ctx *cx, cn n, int named, size_t *base, size_t *count)
{
    *base = cx->nks;
    for (cn k = first_child(n); k; k = next_sibling(cx->cst, k)) {
        if (is_extra(k) || (named && !is_named(k))) continue;
        if (cx->nks == cx->capks) {
            size_t cap = cx->capks ? cx->capks * 2 : 64;
            kid_t *p = realloc(cx->ks, cap * sizeof *p);
            if (!p) return nomem(cx);
            cx->ks = p;
            cx->capks = cap;
        }
        cx->ks[cx->nks].node = k;
        cx->ks[cx->nks].field = k->field;
        cx->nks++;
    }
    *count = cx->nks - *base;
    return CR_OK;
}

static cr_code push_ir(lower_ctx *cx, ir_node *n)
{
    if (cx->nis == cx->capis) {
        size_t cap = cx->capis ? cx->capis * 2 : 64;
        ir_node **p = realloc(cx->is, cap * sizeof *p);
        if (!p) return nomem(cx);
        cx->is = p;
        cx->capis = cap;
    }
    cx->is[cx->nis++] = n;
    return CR_OK;
}

/* A node of `kind` whose children are the lowered nodes pushed since `base`; pops them. */
static cr_code pop_ir(lower_ctx *cx, ir_kind kind, cn ts, size_t base, ir_node **out)
{
    uint32_t n = (uint32_t)(cx->nis - base);
    ir_node *node = mk(cx, kind, ts, n);
    if (!node) return nomem(cx);
    if (n) memcpy(node->kid, cx->is + base, n * sizeof *node->kid);
    cx->nis = base;
    *out = node;
    return CR_OK;
}

/* 1-based line and column of a node's start (1:1 for a missing node). */
static int line_of(cn n) { return n ? (int)n->srow + 1 : 1; }
static int col_of(cn n) { return n ? (int)n->scol + 1 : 1; }

static cr_code enter(lower_ctx *cx, cn ts)
{
    if (++cx->depth <= cx->lim->max_depth) return CR_OK;
    return cr_error_set(cx->err, CR_ELIMIT, line_of(ts), col_of(ts),
                        "nesting deeper than %u (max_depth)", (unsigned)cx->lim->max_depth);
}

static cr_code syntax(lower_ctx *cx, cn ts, const char *msg)
{
    return cr_error_set(cx->err, CR_ESYNTAX, line_of(ts), col_of(ts), "%s", msg);
}

static cr_code reason(lower_ctx *cx, const char *what, cn ts)
{
    char code[64];
    snprintf(code, sizeof code, "node:%s", what);
    if (ir_add_reason(cx->m, code, line_of(ts), col_of(ts), node_src(cx, ts),
                      node_len(ts)) != CR_OK)
        return nomem(cx);
    return CR_OK;
}

static int is_stmt_sym(int s)
{
    switch (s) {
    case S_expression_statement: case S_if_statement: case S_for_statement:
    case S_while_statement: case S_break_statement: case S_continue_statement:
    case S_pass_statement: case S_return_statement: case S_function_definition:
    case S_import_statement: case S_import_from_statement: case S_raise_statement:
    case S_assert_statement: case S_delete_statement: case S_global_statement:
    case S_print_statement: case S_exec_statement: case S_try_statement:
    case S_with_statement:
        return 1;
    default:
        return 0;
    }
}

/* Lowers what can be lowered inside an unsupported construct, pushing the results. */
static cr_code scan_inside(lower_ctx *cx, cn ts)
{
    size_t base, count;
    cr_code rc;
    if ((rc = enter(cx, ts)) != CR_OK) return rc;
    if ((rc = kids(cx, ts, 1, &base, &count)) != CR_OK) return rc;
    for (size_t i = 0; i < count && rc == CR_OK; i++) {
        cn k = cx->ks[base + i].node;
        int s = sym(k);
        ir_node *n = NULL;
        if (s == S_block) {
            if ((rc = lower_block(cx, k, &n)) == CR_OK) rc = push_ir(cx, n);
        } else if (is_stmt_sym(s)) {
            rc = lower_stmt(cx, k);
        } else if (s == S_OTHER || s == S_else_clause || s == S_elif_clause ||
                   s == S_except_clause || s == S_except_group_clause || s == S_finally_clause ||
                   s == S_as_pattern || s == S_as_pattern_target || s == S_with_clause ||
                   s == S_with_item ||
                   s == S_argument_list || s == S_parameters || s == S_dotted_name ||
                   s == S_aliased_import || s == S_keyword_argument) {
            rc = scan_inside(cx, k);
        } else {
            if ((rc = lower_expr(cx, k, &n)) == CR_OK) rc = push_ir(cx, n);
        }
    }
    cx->nks = base;
    cx->depth--;
    return rc;
}

/* IR_UNSUPPORTED for ts, with the reason `node:<what>`; its children are what could be
 * lowered inside it when `scan` (not for literals: a bytes string has no inside). */
static cr_code unsupported_as(lower_ctx *cx, cn ts, const char *what, int scan,
                              ir_node **out)
{
    cr_code rc;
    size_t base = cx->nis;
    if ((rc = reason(cx, what, ts)) != CR_OK) return rc;
    if (scan && (rc = scan_inside(cx, ts)) != CR_OK) return rc;
    if ((rc = pop_ir(cx, IR_UNSUPPORTED, ts, base, out)) != CR_OK) return rc;
    if (!((*out)->text = dup(cx, what, strlen(what)))) return nomem(cx);
    (*out)->len = (uint32_t)strlen(what);
    return CR_OK;
}

static cr_code unsupported(lower_ctx *cx, cn ts, ir_node **out)
{
    return unsupported_as(cx, ts, node_type(ts), 1, out);
}

/* ---- literals --------------------------------------------------------------------------- */

static cr_code lower_number(lower_ctx *cx, cn ts, int is_float, ir_node **out)
{
    const char *s = node_src(cx, ts);
    uint32_t n = node_len(ts);
    char last = n ? s[n - 1] : 0;
    if (last == 'j' || last == 'J') return unsupported_as(cx, ts, "imaginary", 0, out);
    if (last == 'l' || last == 'L') return syntax(cx, ts, "invalid decimal literal");
    /* CPython: "leading zeros in decimal integer literals are not permitted". */
    if (!is_float && ir_int_leading_zeros(s, n))
        return syntax(cx, ts, "leading zeros in decimal integer literals are not permitted");
    cr_code rc = mk_text(cx, IR_NUM, ts, out);
    if (rc == CR_OK && is_float) (*out)->flags |= IRF_FLOAT;
    return rc;
}

static cr_code decode_text(lower_ctx *cx, const char *s, size_t n, int raw, int fmt, int *bad)
{
    cr_code rc = ir_decode_string(&cx->sbuf, s, n, raw, fmt, bad);
    if (rc == CR_ELIMIT)
        return cr_error_set(cx->err, CR_ELIMIT, 0, 0, "string longer than %llu (max_str_len)",
                            (unsigned long long)cx->lim->max_str_len);
    return rc == CR_OK ? CR_OK : nomem(cx);
}

/* A STR node holding cx->sbuf; empties the buffer. */
static cr_code flush_str(lower_ctx *cx, cn ts, ir_node **out)
{
    ir_node *n = ir_str_take(cx->m, span_of(ts), &cx->sbuf);
    if (!n) return nomem(cx);
    *out = n;
    return CR_OK;
}

static cr_code lower_interpolation(lower_ctx *cx, cn ts, ir_node **out);

/* A format spec after ':': literal runs and nested fields, as an FSTRING. */
static cr_code lower_spec(lower_ctx *cx, cn spec, ir_node **out)
{
    size_t base, count, ibase = cx->nis;
    uint32_t at = spec->start, end = spec->end;
    cr_code rc;
    if ((rc = kids(cx, spec, 0, &base, &count)) != CR_OK) return rc;
    for (size_t i = 0; i <= count && rc == CR_OK; i++) {
        cn k = i < count ? cx->ks[base + i].node : spec;
        uint32_t kstart = i < count ? k->start : end;
        if (i < count && !is_named(k)) {                  /* the ':' */
            at = k->end;
            continue;
        }
        if (kstart > at) {
            ir_node *s;
            cr_buf_reset(&cx->sbuf);
            if ((rc = cr_buf_put(&cx->sbuf, cx->src + at, kstart - at)) != CR_OK) return nomem(cx);
            if ((rc = flush_str(cx, spec, &s)) == CR_OK) rc = push_ir(cx, s);
        }
        if (i < count && rc == CR_OK) {
            ir_node *f;
            if ((rc = lower_interpolation(cx, k, &f)) == CR_OK) rc = push_ir(cx, f);
            at = k->end;
        }
    }
    cx->nks = base;
    return rc == CR_OK ? pop_ir(cx, IR_FSTRING, spec, ibase, out) : rc;
}

/* `{expr!r:spec}` → FORMAT(expr, spec FSTRING or NULL), op the conversion letter. */
static cr_code lower_interpolation(lower_ctx *cx, cn ts, ir_node **out)
{
    cr_code rc;
    size_t base, count;
    ir_node *f = mk(cx, IR_FORMAT, ts, 2);
    if (!f) return nomem(cx);
    if ((rc = enter(cx, ts)) != CR_OK) return rc;
    if ((rc = kids(cx, ts, 0, &base, &count)) != CR_OK) return rc;
    for (size_t i = 0; i < count && rc == CR_OK; i++) {
        kid_t k = cx->ks[base + i];
        if (k.field == field_ids[F_expression]) {
            int s = sym(k.node);
            if (s == S_expression_list || s == S_pattern_list) rc = lower_target(cx, k.node, &f->kid[0]);
            else rc = lower_expr(cx, k.node, &f->kid[0]);
        } else if (k.field == field_ids[F_type_conversion]) {
            const char *t = node_src(cx, k.node);
            char after = k.node->end < cx->len ? cx->src[k.node->end] : 0;
            f->op = node_len(k.node) >= 2 ? (uint16_t)(unsigned char)t[1] : 0;
            if (after != ':' && after != '}') f->op = '}';   /* `{x!r }`: see ir.h */
        } else if (k.field == field_ids[F_format_specifier]) {
            rc = lower_spec(cx, k.node, &f->kid[1]);
        }
    }
    cx->nks = base;
    cx->depth--;
    *out = f;
    return rc;
}

/* The `{x=}` form: CPython prints the source text up to and including '=' first, then the
 * value with repr() unless a conversion or spec is given. Pushes both parts. */
static cr_code lower_debug_field(lower_ctx *cx, cn k, uint32_t eq_end)
{
    ir_node *lit, *f;
    uint32_t a = k->start + 1;
    cr_code rc;
    if (cr_buf_put(&cx->sbuf, cx->src + a, eq_end - a) != CR_OK) return nomem(cx);
    if ((rc = flush_str(cx, k, &lit)) != CR_OK || (rc = push_ir(cx, lit)) != CR_OK) return rc;
    if ((rc = lower_interpolation(cx, k, &f)) != CR_OK) return rc;
    if (!f->op && !f->kid[1]) f->op = 'r';
    return push_ir(cx, f);
}

/* Where the "expr=" text of a `{x = }` field ends: CPython keeps the blanks after '=' too,
 * up to the conversion, the spec or the closing brace. 0 when not that form. */
static uint32_t debug_eq_end(lower_ctx *cx, cn interp)
{
    for (cn e = first_child(interp); e; e = next_sibling(cx->cst, e)) {
        cn after = next_sibling(cx->cst, e);
        if (after && tok(e) == T_eq) return after->start;
    }
    return 0;
}

/* One string node's parts: literal text into cx->sbuf, fields pushed as FORMAT nodes. The
 * text is the source between the opening quotes, the fields and the closing quotes rather
 * than the string_content nodes: tree-sitter-python's scanner files the text of some raw
 * strings into string_end (r'\\' has no content node at all), while CPython keeps every
 * character. `quotes` is 1 or 3. */
static cr_code lower_string_parts(lower_ctx *cx, cn str, int raw, int fmt, int quotes,
                                  int *bad)
{
    size_t base, count;
    cr_code rc;
    if ((rc = kids(cx, str, 1, &base, &count)) != CR_OK) return rc;
    uint32_t at = str->start, end = str->end >= str->start + (uint32_t)quotes
                                        ? str->end - (uint32_t)quotes : str->start;
    for (size_t j = 0; j < count && rc == CR_OK; j++) {
        cn k = cx->ks[base + j].node;
        int s = sym(k);
        if (s == S_string_start) at = k->end;
        if (s != S_interpolation) continue;
        if (k->start > at) rc = decode_text(cx, cx->src + at, k->start - at, raw, fmt, bad);
        at = k->end;
        ir_node *lit, *f;
        if (rc != CR_OK || (cx->sbuf.len && ((rc = flush_str(cx, k, &lit)) != CR_OK ||
                                             (rc = push_ir(cx, lit)) != CR_OK)))
            break;
        uint32_t eq = debug_eq_end(cx, k);
        if (eq) rc = lower_debug_field(cx, k, eq);
        else if ((rc = lower_interpolation(cx, k, &f)) == CR_OK) rc = push_ir(cx, f);
        cr_buf_reset(&cx->sbuf);   /* the field's own strings used the buffer */
    }
    if (rc == CR_OK && end > at) rc = decode_text(cx, cx->src + at, end - at, raw, fmt, bad);
    cx->nks = base;
    return rc;
}

/* string or concatenated_string → STR, or FSTRING when any part is an f-string. */
static cr_code lower_strings(lower_ctx *cx, cn ts, ir_node **out)
{
    size_t sbase = cx->nks, scount = 1, ibase = cx->nis;
    int single = sym(ts) == S_string, fmt_any = 0, bad = 0;
    cr_code rc = CR_OK;
    if (!single && (rc = kids(cx, ts, 1, &sbase, &scount)) != CR_OK) return rc;
    cr_buf_reset(&cx->sbuf);
    for (size_t i = 0; i < scount && rc == CR_OK; i++) {
        cn str = single ? ts : cx->ks[sbase + i].node;
        cn start = first_child(str);
        if (!start) return syntax(cx, str, "invalid syntax");
        const char *p = node_src(cx, start);
        int raw = 0, fmt = 0, bytes = 0;
        uint32_t k = 0;
        for (; k < node_len(start) && p[k] != '"' && p[k] != '\''; k++) {
            if (p[k] == 'r' || p[k] == 'R') raw = 1;
            if (p[k] == 'f' || p[k] == 'F') fmt = 1;
            if (p[k] == 'b' || p[k] == 'B') bytes = 1;
        }
        int quotes = node_len(start) - k >= 3 ? 3 : 1;
        if (bytes) {
            cx->nks = sbase;
            cx->nis = ibase;
            cr_buf_reset(&cx->sbuf);
            return unsupported_as(cx, ts, "bytes", 0, out);
        }
        fmt_any |= fmt;
        rc = lower_string_parts(cx, str, raw, fmt, quotes, &bad);
    }
    cx->nks = sbase;
    if (rc != CR_OK) return rc;
    if (bad) {
        cx->nis = ibase;
        cr_buf_reset(&cx->sbuf);
        return unsupported_as(cx, ts, "escape_sequence", 0, out);
    }
    if (!fmt_any) return flush_str(cx, ts, out);
    if (cx->sbuf.len) {
        ir_node *lit;
        if ((rc = flush_str(cx, ts, &lit)) != CR_OK || (rc = push_ir(cx, lit)) != CR_OK) return rc;
    }
    return pop_ir(cx, IR_FSTRING, ts, ibase, out);
}

/* ---- expressions ------------------------------------------------------------------------ */

/* The child in field f lowered as an expression, or NULL when absent. */
static cr_code lower_field(lower_ctx *cx, cn ts, int f, ir_node **out)
{
    cn k = field(cx, ts, f);
    *out = NULL;
    return k ? lower_expr(cx, k, out) : CR_OK;
}

/* Pushes the operands (cx->is) and operators (ops) of a chain of binary_operator nodes in
 * source order, and the extent of operand k in ext[k], its parentheses included (the
 * lowered operand has no node for them, and ir_binary() spans them); parentheses end the
 * chain, since they are parenthesized_expression nodes. */
static cr_code flatten_binary(lower_ctx *cx, cn ts, uint8_t *ops, ir_span *ext, size_t *nops,
                              size_t max)
{
    cr_code rc;
    ir_node *e;
    if (sym(ts) != S_binary_operator || *nops >= max) {
        if ((rc = lower_expr(cx, ts, &e)) != CR_OK) return rc;
        ext[*nops] = span_of(ts);
        return push_ir(cx, e);
    }
    if ((rc = enter(cx, ts)) != CR_OK) return rc;
    cn op = field(cx, ts, F_operator);
    int o = info(op)->binop - 1;
    if (o < 0 || o >= IR_AND) return syntax(cx, op ? op : ts, "invalid syntax");
    if ((rc = flatten_binary(cx, field(cx, ts, F_left), ops, ext, nops, max)) != CR_OK) return rc;
    ops[(*nops)++] = (uint8_t)o;
    rc = flatten_binary(cx, field(cx, ts, F_right), ops, ext, nops, max);
    cx->depth--;
    return rc;
}

/* Joins operands `at` and `at + 1` (extents xl and xr) into one BinOp; xl becomes its extent. */
static cr_code combine(lower_ctx *cx, size_t at, int op, ir_span *xl, const ir_span *xr)
{
    ir_node *n = ir_binary(cx->m, IR_BINOP, op, cx->is[at], *xl, cx->is[at + 1], *xr);
    if (!n) return nomem(cx);
    xl->end_line = xr->end_line;
    xl->end_col = xr->end_col;
    cx->is[at] = n;
    cx->nis = at + 1;
    return CR_OK;
}

/* tree-sitter-python 0.23 ranks `^` above `&` (so `a & b ^ c` comes out as a & (b ^ c));
 * the chain is rebuilt here with Python's precedences, `**` to the right, the rest left. */
static cr_code lower_binop(lower_ctx *cx, cn ts, ir_node **out)
{
    size_t max = node_len(ts) / 2 + 1, nops = 0, ibase = cx->nis, top = 0;
    uint8_t *ops = cr_arena_alloc(&cx->m->arena, 2 * max), *stack = ops + max;
    ir_span small[16], *ext = small;          /* most chains are short: no allocation */
    cr_code rc;
    if (!ops) return nomem(cx);
    if (max + 1 > sizeof small / sizeof small[0] && !(ext = malloc((max + 1) * sizeof *ext)))
        return nomem(cx);
    if ((rc = flatten_binary(cx, ts, ops, ext, &nops, max)) != CR_OK) goto out;
    /* Operands sit in cx->is[ibase..] (extents in ext[0..]); reduce with an operator stack
     * (shunting-yard). The operand stack is compacted in place: after i operators, it holds
     * top+1 operands. */
    size_t next = ibase + 1;        /* next unread operand */
    size_t sp = ibase + 1;          /* end of the operand stack */
    for (size_t i = 0; i <= nops; i++) {
        int prec = i < nops ? ir_binop_prec(ops[i]) : 0;
        while (top > 0) {
            int t = stack[top - 1], tp = ir_binop_prec(t);
            if (tp < prec || (tp == prec && t == IR_POW)) break;
            size_t keep = cx->nis;
            cx->nis = sp;
            rc = combine(cx, sp - 2, t, &ext[sp - 2 - ibase], &ext[sp - 1 - ibase]);
            if (rc != CR_OK) goto out;
            sp--;
            cx->nis = keep;
            top--;
        }
        if (i == nops) break;
        stack[top++] = ops[i];
        ext[sp - ibase] = ext[next - ibase];
        cx->is[sp++] = cx->is[next++];
    }
    *out = cx->is[ibase];
    cx->nis = ibase;
out:
    if (ext != small) free(ext);
    return rc;
}

/* A node of `kind` with two children lowered from fields fa and fb; op from the operator. */
static cr_code lower_binary(lower_ctx *cx, cn ts, ir_kind kind, ir_node **out)
{
    cn op = field(cx, ts, F_operator);
    int o = info(op)->binop - 1;
    ir_node *n = mk(cx, kind, ts, 2);
    cr_code rc;
    if (!n) return nomem(cx);
    if (o < 0) return syntax(cx, op ? op : ts, "invalid syntax");
    n->op = (uint16_t)o;
    if ((rc = lower_field(cx, ts, F_left, &n->kid[0])) != CR_OK) return rc;
    if ((rc = lower_field(cx, ts, F_right, &n->kid[1])) != CR_OK) return rc;
    *out = n;
    return CR_OK;
}

static cr_code lower_unary(lower_ctx *cx, cn ts, ir_node **out)
{
    ir_node *n = mk(cx, IR_UNARY, ts, 1);
    if (!n) return nomem(cx);
    if (sym(ts) == S_not_operator) {
        n->op = IR_NOT;
    } else {
        cn op = field(cx, ts, F_operator);
        char c = op && node_len(op) ? *node_src(cx, op) : 0;
        n->op = c == '-' ? IR_NEG : c == '+' ? IR_POS : IR_INVERT;
    }
    *out = n;
    return lower_field(cx, ts, F_argument, &n->kid[0]);
}

static cr_code lower_compare(lower_ctx *cx, cn ts, ir_node **out)
{
    size_t base, count, ibase = cx->nis;
    cr_code rc;
    if ((rc = kids(cx, ts, 0, &base, &count)) != CR_OK) return rc;
    uint8_t *cmp = cr_arena_alloc(&cx->m->arena, count ? count : 1);
    uint32_t nops = 0;
    if (!cmp) return nomem(cx);
    for (size_t i = 0; i < count && rc == CR_OK; i++) {
        cn k = cx->ks[base + i].node;
        if (is_named(k)) {
            ir_node *e;
            if ((rc = lower_expr(cx, k, &e)) == CR_OK) rc = push_ir(cx, e);
        } else {
            int o = info(k)->cmpop - 1;
            if (o < 0) rc = syntax(cx, k, "invalid syntax");
            else cmp[nops++] = (uint8_t)o;
        }
    }
    cx->nks = base;
    if (rc != CR_OK || (rc = pop_ir(cx, IR_COMPARE, ts, ibase, out)) != CR_OK) return rc;
    (*out)->cmp = cmp;
    return CR_OK;
}

/* The named children of ts, each lowered by `fn`, as one node of `kind`. */
static cr_code lower_each(lower_ctx *cx, cn ts, ir_kind kind,
                          cr_code (*fn)(lower_ctx *, cn, ir_node **), ir_node **out)
{
    size_t base, count, ibase = cx->nis;
    cr_code rc;
    if ((rc = kids(cx, ts, 1, &base, &count)) != CR_OK) return rc;
    for (size_t i = 0; i < count && rc == CR_OK; i++) {
        ir_node *e;
        if ((rc = fn(cx, cx->ks[base + i].node, &e)) == CR_OK) rc = push_ir(cx, e);
    }
    cx->nks = base;
    return rc == CR_OK ? pop_ir(cx, kind, ts, ibase, out) : rc;
}

/* Wraps the single named child of ts (list_splat, parenthesized_expression) as `kind`, or
 * returns the child itself when kind is IR_KIND_END. */
static cr_code lower_only_child(lower_ctx *cx, cn ts, ir_kind kind,
                                cr_code (*fn)(lower_ctx *, cn, ir_node **), ir_node **out)
{
    cn k = first_child(ts);
    while (k && (!is_named(k) || sym(k) == S_comment)) k = next_sibling(cx->cst, k);
    if (!k) return syntax(cx, ts, "invalid syntax");
    if (kind == IR_KIND_END) return fn(cx, k, out);
    ir_node *n = mk(cx, kind, ts, 1);
    if (!n) return nomem(cx);
    *out = n;
    return fn(cx, k, &n->kid[0]);
}

static cr_code lower_dict(lower_ctx *cx, cn ts, ir_node **out)
{
    size_t base, count, ibase = cx->nis;
    cr_code rc;
    if ((rc = kids(cx, ts, 1, &base, &count)) != CR_OK) return rc;
    for (size_t i = 0; i < count && rc == CR_OK; i++) {
        cn k = cx->ks[base + i].node;
        ir_node *a, *b;
        if (sym(k) != S_pair) {
            if ((rc = unsupported(cx, k, &a)) == CR_OK) rc = push_ir(cx, a);
            continue;
        }
        if ((rc = lower_field(cx, k, F_key, &a)) != CR_OK) break;
        if ((rc = lower_field(cx, k, F_value, &b)) != CR_OK) break;
        if ((rc = push_ir(cx, a)) == CR_OK) rc = push_ir(cx, b);
    }
    cx->nks = base;
    return rc == CR_OK ? pop_ir(cx, IR_DICT, ts, ibase, out) : rc;
}

static int is_async(cn ts)
{
    return tok(first_child(ts)) == T_async;
}

/* `for T in I if C if D` → COMPFOR(T, I, C, D); the `if` clauses follow it in ks. `bare`:
 * the element of a call's unparenthesized generator. */
static cr_code lower_compfor(lower_ctx *cx, cn clause, size_t at, size_t end, cn bare,
                             ir_node **out)
{
    uint32_t nif = 0;
    cr_code rc;
    /* The grammar reads `for x in a, b` as a tuple CPython does not (in a call, it takes the
     * comma for the end of a generator argument that needed parentheses). */
    for (cn k = first_child(clause); k; k = next_sibling(cx->cst, k))
        if (tok(k) == T_comma)
            return bare ? syntax(cx, bare, "Generator expression must be parenthesized")
                        : syntax(cx, k, "invalid syntax");
    while (at + 1 + nif < end && sym(cx->ks[at + 1 + nif].node) == S_if_clause) nif++;
    ir_node *n = mk(cx, IR_COMPFOR, clause, 2 + nif);
    if (!n) return nomem(cx);
    if ((rc = lower_target(cx, field(cx, clause, F_left), &n->kid[0])) != CR_OK) return rc;
    if ((rc = lower_field(cx, clause, F_right, &n->kid[1])) != CR_OK) return rc;
    for (uint32_t i = 0; i < nif; i++) {
        cn c = cx->ks[at + 1 + i].node;
        if ((rc = lower_only_child(cx, c, IR_KIND_END, lower_expr, &n->kid[2 + i])) != CR_OK)
            return rc;
    }
    *out = n;
    return CR_OK;
}

static cr_code lower_comprehension(lower_ctx *cx, cn ts, ir_kind kind, ir_node **out)
{
    size_t base, count, ibase = cx->nis;
    cr_code rc;
    cn body = field(cx, ts, F_body), bare = cx->call_genexp ? body : NULL;
    ir_node *a, *b;
    cx->call_genexp = 0;
    if (kind == IR_DICTCOMP) {
        if ((rc = lower_field(cx, body, F_key, &a)) != CR_OK) return rc;
        if ((rc = lower_field(cx, body, F_value, &b)) != CR_OK) return rc;
        if ((rc = push_ir(cx, a)) != CR_OK || (rc = push_ir(cx, b)) != CR_OK) return rc;
    } else {
        if ((rc = lower_expr(cx, body, &a)) != CR_OK || (rc = push_ir(cx, a)) != CR_OK) return rc;
    }
    if ((rc = kids(cx, ts, 1, &base, &count)) != CR_OK) return rc;
    for (size_t i = 0; i < count && rc == CR_OK; i++) {
        cn k = cx->ks[base + i].node;
        if (sym(k) != S_for_in_clause) continue;
        if (is_async(k)) rc = unsupported_as(cx, k, "async", 1, &a);
        else rc = lower_compfor(cx, k, base + i, base + count, bare, &a);
        if (rc == CR_OK) rc = push_ir(cx, a);
    }
    cx->nks = base;
    return rc == CR_OK ? pop_ir(cx, kind, ts, ibase, out) : rc;
}

/* KEYWORD or ATTR: text from the identifier `name`, kid[0] from field `f` of ts. */
static cr_code lower_named(lower_ctx *cx, cn ts, ir_kind kind, cn name, int f,
                           ir_node **out)
{
    ir_node *n = mk_named(cx, kind, ts, 1, name);
    if (!n) return nomem(cx);
    *out = n;
    return lower_field(cx, ts, f, &n->kid[0]);
}

/* tree-sitter-python reads an argument after another argument, or an element of a tuple
 * without parentheses, that starts with a star as an expression whose leftmost operand is
 * the starred one: `*g(1)` as call(list_splat(g), 1), `*a - b` as
 * binary_operator(list_splat(a), b), and so on through calls, attributes, subscripts and
 * operators. CPython's star takes the whole element. The CST tells the misreading from
 * `(*a) - b` (parenthesized, which CPython rejects); the IR is rebuilt as CPython reads it:
 * STARRED over the element, whose leftmost operand starts after the star. */
static int splat_leftmost(lower_ctx *cx, cn k)
{
    for (int first = 1; k; first = 0) {
        switch (sym(k)) {
        case S_list_splat: return !first;
        case S_call: k = field(cx, k, F_function); break;
        case S_attribute: k = field(cx, k, F_object); break;
        case S_subscript: k = field(cx, k, F_value); break;
        case S_binary_operator: case S_boolean_operator: case S_comparison_operator:
        case S_conditional_expression:
            k = named_child(cx, k, 0);
            break;
        default: return 0;
        }
    }
    return 0;
}

/* An element lowered as CPython reads it (see splat_leftmost()). */
static cr_code lower_element(lower_ctx *cx, cn k, ir_node **out)
{
    cr_code rc = lower_expr(cx, k, out);
    if (rc == CR_OK && splat_leftmost(cx, k)) *out = ir_starred_whole(*out);
    return rc;
}

static cr_code lower_arg(lower_ctx *cx, cn k, ir_node **out)
{
    if (sym(k) == S_keyword_argument)
        return lower_named(cx, k, IR_KEYWORD, field(cx, k, F_name), F_value, out);
    return lower_element(cx, k, out);
}

static cr_code lower_call(lower_ctx *cx, cn ts, ir_node **out)
{
    size_t ibase = cx->nis, base, count;
    ir_node *f;
    cr_code rc;
    if ((rc = lower_field(cx, ts, F_function, &f)) != CR_OK || (rc = push_ir(cx, f)) != CR_OK)
        return rc;
    cn args = field(cx, ts, F_arguments);
    if (sym(args) == S_generator_expression) {
        cx->call_genexp = 1;
        if ((rc = lower_expr(cx, args, &f)) != CR_OK || (rc = push_ir(cx, f)) != CR_OK) return rc;
        return pop_ir(cx, IR_CALL, ts, ibase, out);
    }
    if ((rc = kids(cx, args, 1, &base, &count)) != CR_OK) return rc;
    for (size_t i = 0; i < count && rc == CR_OK; i++) {
        if ((rc = lower_arg(cx, cx->ks[base + i].node, &f)) == CR_OK) rc = push_ir(cx, f);
    }
    cx->nks = base;
    return rc == CR_OK ? pop_ir(cx, IR_CALL, ts, ibase, out) : rc;
}

static cr_code lower_attribute(lower_ctx *cx, cn ts, ir_node **out)
{
    return lower_named(cx, ts, IR_ATTR, field(cx, ts, F_attribute), F_object, out);
}

/* `a:b:c`: the slice node has no fields, so the colons tell which bound is which. */
static cr_code lower_slice(lower_ctx *cx, cn ts, ir_node **out)
{
    size_t base, count;
    int part = 0;
    cr_code rc;
    ir_node *n = mk(cx, IR_SLICE, ts, 3);
    if (!n) return nomem(cx);
    if ((rc = kids(cx, ts, 0, &base, &count)) != CR_OK) return rc;
    for (size_t i = 0; i < count && rc == CR_OK; i++) {
        cn k = cx->ks[base + i].node;
        if (!is_named(k)) part++;
        else if (part < 3) rc = lower_expr(cx, k, &n->kid[part]);
    }
    cx->nks = base;
    *out = n;
    return rc;
}

static cr_code lower_index(lower_ctx *cx, cn k, ir_node **out)
{
    return sym(k) == S_slice ? lower_slice(cx, k, out) : lower_expr(cx, k, out);
}

static cr_code lower_subscript(lower_ctx *cx, cn ts, ir_node **out)
{
    size_t base, count, ibase = cx->nis;
    int commas = 0;
    cr_code rc;
    ir_node *n = mk(cx, IR_SUBSCRIPT, ts, 2), *e;
    if (!n) return nomem(cx);
    if ((rc = lower_field(cx, ts, F_value, &n->kid[0])) != CR_OK) return rc;
    if ((rc = kids(cx, ts, 0, &base, &count)) != CR_OK) return rc;
    cn first = ts;
    for (size_t i = 0; i < count && rc == CR_OK; i++) {
        kid_t k = cx->ks[base + i];
        if (tok(k.node) == T_comma) commas++;
        if (k.field != field_ids[F_subscript]) continue;
        if (cx->nis == ibase) first = k.node;
        if ((rc = lower_index(cx, k.node, &e)) == CR_OK) rc = push_ir(cx, e);
    }
    cx->nks = base;
    if (rc != CR_OK) return rc;
    if (commas == 0 && cx->nis == ibase + 1) {
        n->kid[1] = cx->is[ibase];
        cx->nis = ibase;
    } else if ((rc = pop_ir(cx, IR_TUPLE, first, ibase, &n->kid[1])) != CR_OK) {
        return rc;
    }
    *out = n;
    return CR_OK;
}

static cr_code lower_conditional(lower_ctx *cx, cn ts, ir_node **out)
{
    size_t base, count;
    cr_code rc;
    ir_node *n = mk(cx, IR_IFEXP, ts, 3);
    if (!n) return nomem(cx);
    if ((rc = kids(cx, ts, 1, &base, &count)) != CR_OK) return rc;
    /* Source order is body, test, orelse; the IR wants test first. */
    static const int slot[3] = { 1, 0, 2 };
    for (size_t i = 0; i < count && i < 3 && rc == CR_OK; i++)
        rc = lower_expr(cx, cx->ks[base + i].node, &n->kid[slot[i]]);
    cx->nks = base;
    *out = n;
    return rc;
}

static cr_code lower_param(lower_ctx *cx, cn k, ir_node **out)
{
    int s = sym(k);
    cn name = k, value = NULL;
    uint32_t flags = 0;
    int has_value = 0;
    if (s == S_default_parameter || s == S_typed_default_parameter) {
        name = field(cx, k, F_name);
        value = field(cx, k, F_value);
        has_value = 1;
    } else if (s == S_typed_parameter) {
        name = named_child(cx, k, 0);
    }
    if (sym(name) == S_list_splat_pattern) { flags = IRF_VARARGS; name = named_child(cx, name, 0); }
    else if (sym(name) == S_dictionary_splat_pattern) { flags = IRF_KWARGS; name = named_child(cx, name, 0); }
    if (sym(name) != S_identifier && sym(name) != S_keyword_identifier)
        return unsupported(cx, k, out);   /* `*`, `/`, a tuple pattern */
    ir_node *n = mk_named(cx, IR_PARAM, k, 1, name);
    if (!n) return nomem(cx);
    n->flags = flags;
    *out = n;
    return has_value ? lower_expr(cx, value, &n->kid[0]) : CR_OK;
}

/* PARAMS from `parameters` / `lambda_parameters`, or an empty one at `at` when absent. */
static cr_code lower_params(lower_ctx *cx, cn ps, cn at, ir_node **out)
{
    if (!(ps)) {
        *out = mk(cx, IR_PARAMS, at, 0);
        return *out ? CR_OK : nomem(cx);
    }
    return lower_each(cx, ps, IR_PARAMS, lower_param, out);
}

static cr_code lower_lambda(lower_ctx *cx, cn ts, ir_node **out)
{
    cr_code rc;
    ir_node *n = mk(cx, IR_LAMBDA, ts, 2);
    if (!n) return nomem(cx);
    if ((rc = lower_params(cx, field(cx, ts, F_parameters), ts, &n->kid[0])) != CR_OK) return rc;
    *out = n;
    return lower_field(cx, ts, F_body, &n->kid[1]);
}

static cr_code lower_expr_in(lower_ctx *cx, cn ts, ir_node **out)
{
    ir_node *n;
    switch (sym(ts)) {
    case S_identifier: case S_keyword_identifier: return mk_text(cx, IR_NAME, ts, out);
    case S_integer: return lower_number(cx, ts, 0, out);
    case S_float: return lower_number(cx, ts, 1, out);
    case S_true: case S_false:
        if (!(n = mk(cx, IR_BOOL, ts, 0))) return nomem(cx);
        n->op = sym(ts) == S_true;
        *out = n;
        return CR_OK;
    case S_none:
        return (*out = mk(cx, IR_NONE, ts, 0)) ? CR_OK : nomem(cx);
    case S_ellipsis:
        return (*out = mk(cx, IR_ELLIPSIS, ts, 0)) ? CR_OK : nomem(cx);
    case S_string: case S_concatenated_string: return lower_strings(cx, ts, out);
    case S_binary_operator: return lower_binop(cx, ts, out);
    case S_boolean_operator: return lower_binary(cx, ts, IR_BOOLOP, out);
    case S_unary_operator: case S_not_operator: return lower_unary(cx, ts, out);
    case S_comparison_operator: return lower_compare(cx, ts, out);
    case S_conditional_expression: return lower_conditional(cx, ts, out);
    case S_call: return lower_call(cx, ts, out);
    case S_attribute: return lower_attribute(cx, ts, out);
    case S_subscript: return lower_subscript(cx, ts, out);
    case S_slice: return lower_slice(cx, ts, out);
    case S_list: return lower_each(cx, ts, IR_LIST, lower_expr, out);
    case S_set: return lower_each(cx, ts, IR_SET, lower_expr, out);
    case S_tuple: case S_expression_list: return lower_each(cx, ts, IR_TUPLE, lower_element, out);
    case S_dictionary: return lower_dict(cx, ts, out);
    case S_list_comprehension: return lower_comprehension(cx, ts, IR_LISTCOMP, out);
    case S_set_comprehension: return lower_comprehension(cx, ts, IR_SETCOMP, out);
    case S_generator_expression: return lower_comprehension(cx, ts, IR_GENEXP, out);
    case S_dictionary_comprehension: return lower_comprehension(cx, ts, IR_DICTCOMP, out);
    case S_list_splat: return lower_only_child(cx, ts, IR_STARRED, lower_expr, out);
    case S_dictionary_splat: return lower_only_child(cx, ts, IR_DSTARRED, lower_expr, out);
    case S_lambda: return lower_lambda(cx, ts, out);
    case S_pattern_list: case S_tuple_pattern: case S_list_pattern: case S_list_splat_pattern:
        return lower_target(cx, ts, out);
    case S_parenthesized_expression: {
        /* Parentheses make no IR node, so they cost no depth of their own. */
        cx->depth--;
        cr_code rc = lower_only_child(cx, ts, IR_KIND_END, lower_expr, out);
        cx->depth++;
        return rc;
    }
    default:
        return unsupported(cx, ts, out);
    }
}

static cr_code lower_expr(lower_ctx *cx, cn ts, ir_node **out)
{
    cr_code rc;
    *out = NULL;
    if ((rc = enter(cx, ts)) != CR_OK) return rc;
    rc = lower_expr_in(cx, ts, out);
    cx->depth--;
    return rc;
}

/* A tuple_pattern that is `(` target `)`, without a comma. */
static int paren_target(lower_ctx *cx, cn ts)
{
    size_t base, count;
    if (kids(cx, ts, 0, &base, &count) != CR_OK) return 0;
    int one = count == 3 && is_named(cx->ks[base + 1].node);
    cx->nks = base;
    return one;
}

/* An assignment or for target: names, tuples and lists of targets, starred, subscripts and
 * attributes. */
static cr_code lower_target(lower_ctx *cx, cn ts, ir_node **out)
{
    cr_code rc;
    *out = NULL;
    if ((rc = enter(cx, ts)) != CR_OK) return rc;
    switch (sym(ts)) {
    case S_tuple_pattern:
        /* The grammar reads the target `(x)` as a one-element tuple_pattern; for CPython the
         * parentheses only group (`(x) = 1` binds x), while `(x,)` and `()` are tuples. */
        if (paren_target(cx, ts)) {
            rc = lower_only_child(cx, ts, IR_KIND_END, lower_target, out);
            break;
        }
        /* fall through */
    case S_pattern_list: case S_tuple: case S_expression_list:
        rc = lower_each(cx, ts, IR_TUPLE, lower_target, out);
        break;
    case S_list_pattern: case S_list:
        rc = lower_each(cx, ts, IR_LIST, lower_target, out);
        break;
    case S_list_splat_pattern: case S_list_splat:
        rc = lower_only_child(cx, ts, IR_STARRED, lower_target, out);
        break;
    case S_parenthesized_expression:
        rc = lower_only_child(cx, ts, IR_KIND_END, lower_target, out);
        break;
    default:
        rc = lower_expr_in(cx, ts, out);
    }
    cx->depth--;
    return rc;
}

/* ---- statements ------------------------------------------------------------------------- */

/* `a = b = v`: tree-sitter nests the second assignment in the first's right side. */
static cr_code lower_assignment(lower_ctx *cx, cn stmt, cn as)
{
    size_t ibase = cx->nis;
    cr_code rc;
    ir_node *n;
    for (;;) {
        if ((rc = lower_target(cx, field(cx, as, F_left), &n)) != CR_OK) return rc;
        if ((rc = push_ir(cx, n)) != CR_OK) return rc;
        cn right = field(cx, as, F_right);
        if (!(right)) {
            /* `x: float` only annotates: nothing runs. */
            cx->nis = ibase;
            if (!(n = mk(cx, IR_PASS, stmt, 0))) return nomem(cx);
            return push_ir(cx, n);
        }
        if (sym(right) == S_assignment) { as = right; continue; }
        if (sym(right) == S_augmented_assignment) return syntax(cx, right, "invalid syntax");
        if ((rc = lower_expr(cx, right, &n)) != CR_OK || (rc = push_ir(cx, n)) != CR_OK) return rc;
        break;
    }
    if ((rc = pop_ir(cx, IR_ASSIGN, stmt, ibase, &n)) != CR_OK) return rc;
    return push_ir(cx, n);
}

static cr_code lower_augmented(lower_ctx *cx, cn stmt, cn as)
{
    cn op = field(cx, as, F_operator);
    int o = info(op)->augop - 1;
    ir_node *n = mk(cx, IR_AUGASSIGN, stmt, 2);
    cr_code rc;
    if (!n) return nomem(cx);
    if (o < 0 || o >= IR_AND) return syntax(cx, op ? op : stmt, "invalid syntax");
    n->op = (uint16_t)o;
    cn left = field(cx, as, F_left);
    if ((rc = lower_target(cx, left, &n->kid[0])) != CR_OK) return rc;
    /* The grammar takes any target here; CPython only a name, an attribute or a subscript. */
    ir_kind k = (ir_kind)n->kid[0]->kind;
    const char *what = k == IR_TUPLE ? "tuple" : k == IR_LIST ? "list"
                     : k == IR_STARRED ? "starred" : NULL;
    if (what)
        return cr_error_set(cx->err, CR_ESYNTAX, line_of(left), col_of(left),
                            "'%s' is an illegal expression for augmented assignment", what);
    if ((rc = lower_field(cx, as, F_right, &n->kid[1])) != CR_OK) return rc;
    return push_ir(cx, n);
}

static cr_code lower_expression_statement(lower_ctx *cx, cn ts)
{
    size_t base, count;
    cr_code rc;
    ir_node *n, *e;
    if ((rc = kids(cx, ts, 1, &base, &count)) != CR_OK) return rc;
    cn k = cx->ks[base].node;
    cx->nks = base;
    if (count == 1 && sym(k) == S_assignment) return lower_assignment(cx, ts, k);
    if (count == 1 && sym(k) == S_augmented_assignment) return lower_augmented(cx, ts, k);
    if (!(n = mk(cx, IR_EXPR, ts, 1))) return nomem(cx);
    if (count == 1) rc = lower_expr(cx, k, &e);
    else rc = lower_each(cx, ts, IR_TUPLE, lower_expr, &e);   /* `a, b` */
    if (rc != CR_OK) return rc;
    n->kid[0] = e;
    return push_ir(cx, n);
}

/* The body block of an else_clause, or NULL. */
static cr_code lower_else(lower_ctx *cx, cn ts, ir_node **out)
{
    cn alt = field(cx, ts, F_alternative);
    *out = NULL;
    return !(alt) ? CR_OK : lower_block(cx, field(cx, alt, F_body), out);
}

static cr_code lower_if(lower_ctx *cx, cn ts)
{
    size_t base, count;
    cr_code rc;
    ir_node *orelse = NULL, *n;
    if ((rc = kids(cx, ts, 1, &base, &count)) != CR_OK) return rc;
    /* elif chains nest from the last clause back to the first. */
    for (size_t i = count; i-- > 0 && rc == CR_OK;) {
        kid_t k = cx->ks[base + i];
        if (k.field != field_ids[F_alternative]) continue;
        if (sym(k.node) == S_else_clause) {
            rc = lower_block(cx, field(cx, k.node, F_body), &orelse);
            continue;
        }
        if (!(n = mk(cx, IR_IF, k.node, 3))) { rc = nomem(cx); break; }
        if ((rc = lower_field(cx, k.node, F_condition, &n->kid[0])) != CR_OK) break;
        if ((rc = lower_block(cx, field(cx, k.node, F_consequence), &n->kid[1])) != CR_OK) break;
        n->kid[2] = orelse;
        orelse = n;
    }
    cx->nks = base;
    if (rc != CR_OK) return rc;
    if (!(n = mk(cx, IR_IF, ts, 3))) return nomem(cx);
    if ((rc = lower_field(cx, ts, F_condition, &n->kid[0])) != CR_OK) return rc;
    if ((rc = lower_block(cx, field(cx, ts, F_consequence), &n->kid[1])) != CR_OK) return rc;
    n->kid[2] = orelse;
    return push_ir(cx, n);
}

static cr_code lower_loop_body(lower_ctx *cx, cn ts, ir_node **out)
{
    cx->in_loop++;
    cr_code rc = lower_block(cx, field(cx, ts, F_body), out);
    cx->in_loop--;
    return rc;
}

static cr_code lower_for(lower_ctx *cx, cn ts)
{
    ir_node *n = mk(cx, IR_FOR, ts, 4);
    cr_code rc;
    if (!n) return nomem(cx);
    if ((rc = lower_target(cx, field(cx, ts, F_left), &n->kid[0])) != CR_OK) return rc;
    if ((rc = lower_field(cx, ts, F_right, &n->kid[1])) != CR_OK) return rc;
    if ((rc = lower_loop_body(cx, ts, &n->kid[2])) != CR_OK) return rc;
    if ((rc = lower_else(cx, ts, &n->kid[3])) != CR_OK) return rc;
    return push_ir(cx, n);
}

static cr_code lower_while(lower_ctx *cx, cn ts)
{
    ir_node *n = mk(cx, IR_WHILE, ts, 3);
    cr_code rc;
    if (!n) return nomem(cx);
    if ((rc = lower_field(cx, ts, F_condition, &n->kid[0])) != CR_OK) return rc;
    if ((rc = lower_loop_body(cx, ts, &n->kid[1])) != CR_OK) return rc;
    if ((rc = lower_else(cx, ts, &n->kid[2])) != CR_OK) return rc;
    return push_ir(cx, n);
}

static cr_code lower_def(lower_ctx *cx, cn ts)
{
    cn name = field(cx, ts, F_name);
    ir_node *n = mk_named(cx, IR_FUNCDEF, ts, 2, name);
    cr_code rc;
    if (!n) return nomem(cx);
    if ((rc = lower_params(cx, field(cx, ts, F_parameters), ts, &n->kid[0])) != CR_OK) return rc;
    int loop = cx->in_loop;
    cx->in_func++;
    cx->in_loop = 0;
    rc = lower_block(cx, field(cx, ts, F_body), &n->kid[1]);
    cx->in_func--;
    cx->in_loop = loop;
    return rc == CR_OK ? push_ir(cx, n) : rc;
}

/* Source text of a dotted name without the blanks that `a . b` may hold. */
static const char *dotted(lower_ctx *cx, cn ts, uint32_t *len)
{
    const char *s = node_src(cx, ts);
    uint32_t n = node_len(ts), k = 0;
    char *p = cr_arena_alloc(&cx->m->arena, n + 1);
    if (!p) return NULL;
    for (uint32_t i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\\' && s[i] != '\n' && s[i] != '\r') p[k++] = s[i];
    *len = k;
    return p;
}

/* One IMPORT (from == 0) or IMPORT_FROM node per imported name, all at the statement. */
static cr_code lower_import(lower_ctx *cx, cn ts, int from)
{
    size_t base, count;
    cr_code rc = CR_OK;
    uint32_t mlen = 0;
    const char *module = NULL;
    if (from && !(module = dotted(cx, field(cx, ts, F_module_name), &mlen))) return nomem(cx);
    if ((rc = kids(cx, ts, 1, &base, &count)) != CR_OK) return rc;
    for (size_t i = 0; i < count && rc == CR_OK; i++) {
        kid_t k = cx->ks[base + i];
        cn name = k.node, alias = NULL;
        int star = sym(k.node) == S_wildcard_import;
        if (k.field != field_ids[F_name] && !star) continue;
        if (sym(k.node) == S_aliased_import) {
            name = field(cx, k.node, F_name);
            alias = field(cx, k.node, F_alias);
        }
        uint32_t nlen;
        const char *text = dotted(cx, name, &nlen);
        ir_node *n = mk(cx, from ? IR_IMPORT_FROM : IR_IMPORT, ts, from ? 1 : 0);
        if (!text || !n) { rc = nomem(cx); break; }
        if (!!(alias)) {
            n->aux = dup(cx, node_src(cx, alias), node_len(alias));
        } else if (from) {
            n->aux = text;
        } else {
            const char *dot = memchr(text, '.', nlen);   /* `import a.b` binds a */
            n->aux = dup(cx, text, dot ? (size_t)(dot - text) : nlen);
        }
        if (!n->aux) { rc = nomem(cx); break; }
        if (from) {
            n->text = module;
            n->len = mlen;
            if (!(n->kid[0] = mk(cx, IR_NAME, name, 0))) { rc = nomem(cx); break; }
            n->kid[0]->text = text;
            n->kid[0]->len = nlen;
        } else {
            n->text = text;
            n->len = nlen;
        }
        rc = push_ir(cx, n);
    }
    cx->nks = base;
    return rc;
}

/* return / raise / assert / del / global: a node of `kind` over named children. `min` is the
 * number of slots present even when empty (return → 1, assert → 2). */
static cr_code lower_simple(lower_ctx *cx, cn ts, ir_kind kind, uint32_t min,
                            cr_code (*fn)(lower_ctx *, cn, ir_node **))
{
    size_t base, count, ibase = cx->nis;
    cr_code rc;
    ir_node *n;
    if ((rc = kids(cx, ts, 1, &base, &count)) != CR_OK) return rc;
    for (size_t i = 0; i < count && rc == CR_OK; i++) {
        kid_t k = cx->ks[base + i];
        if (kind == IR_DEL && sym(k.node) == S_expression_list) {
            size_t b2, c2;
            if ((rc = kids(cx, k.node, 1, &b2, &c2)) != CR_OK) break;
            for (size_t j = 0; j < c2 && rc == CR_OK; j++)
                if ((rc = fn(cx, cx->ks[b2 + j].node, &n)) == CR_OK) rc = push_ir(cx, n);
            cx->nks = b2;
            continue;
        }
        if ((rc = fn(cx, k.node, &n)) == CR_OK) rc = push_ir(cx, n);
    }
    cx->nks = base;
    while (rc == CR_OK && cx->nis - ibase < min) rc = push_ir(cx, NULL);
    if (rc != CR_OK || (rc = pop_ir(cx, kind, ts, ibase, &n)) != CR_OK) return rc;
    return push_ir(cx, n);
}

/* `raise E from C`: RAISE(E, C). */
static cr_code lower_raise(lower_ctx *cx, cn ts)
{
    ir_node *n = mk(cx, IR_RAISE, ts, 2);
    cr_code rc = CR_OK;
    if (!n) return nomem(cx);
    for (cn k = first_child(ts); k && rc == CR_OK; k = next_sibling(cx->cst, k)) {
        if (!is_named(k) || is_extra(k) || k->field != 0) continue;
        if (sym(k) == S_expression_list)   /* Python 2's `raise E, V`: CPython stops at the comma */
            for (cn c = first_child(k); c; c = next_sibling(cx->cst, c))
                if (tok(c) == T_comma) return syntax(cx, c, "invalid syntax");
        rc = lower_expr(cx, k, &n->kid[0]);
    }
    if (rc == CR_OK) rc = lower_field(cx, ts, F_cause, &n->kid[1]);
    return rc == CR_OK ? push_ir(cx, n) : rc;
}

/* One `except [E [as name]]:` clause. tree-sitter reads `except E as name` as an as_pattern
 * in the value field, and lets through what CPython's grammar refuses: `except A, B:` (Python
 * 2) and a target that is not a plain name. */
static cr_code lower_except(lower_ctx *cx, cn ts, ir_node **out)
{
    ir_node *n = mk(cx, IR_EXCEPT, ts, 3);
    cn value = field(cx, ts, F_value), block = NULL;
    cr_code rc;
    if (!n) return nomem(cx);
    for (cn k = first_child(ts); k; k = next_sibling(cx->cst, k)) {
        if (sym(k) == S_block) block = k;
        else if (tok(k) == T_comma)
            return syntax(cx, value, "multiple exception types must be parenthesized");
    }
    if (sym(value) == S_as_pattern) {
        cn target = field(cx, value, F_alias), name = named_child(cx, target, 0);
        if (sym(name) != S_identifier && sym(name) != S_keyword_identifier) {
            /* CPython stops at the token after a leading name (`e.x`), else at the target */
            cn first = named_child(cx, name, 0);
            if (first && sym(first) == S_identifier && first->start == name->start) {
                uint32_t e = first->end;
                int line, col;
                while (e < cx->len && (cx->src[e] == ' ' || cx->src[e] == '\t')) e++;
                parser_position_of(cx->src, e, &line, &col);
                return cr_error_set(cx->err, CR_ESYNTAX, line, col, "%s", "invalid syntax");
            }
            return syntax(cx, name ? name : target, "invalid syntax");
        }
        if ((rc = lower_expr(cx, named_child(cx, value, 0), &n->kid[0])) != CR_OK) return rc;
        if ((rc = lower_expr(cx, name, &n->kid[1])) != CR_OK) return rc;
    } else if (value && (rc = lower_expr(cx, value, &n->kid[0])) != CR_OK) {
        return rc;
    }
    if ((rc = lower_block(cx, block, &n->kid[2])) != CR_OK) return rc;
    *out = n;
    return CR_OK;
}

/* TRY(body, handlers..., else, finally); `except*` (exception groups) is outside the subset. */
static cr_code lower_try(lower_ctx *cx, cn ts)
{
    size_t base, count, ibase = cx->nis;
    cr_code rc;
    ir_node *n, *orelse = NULL, *fin = NULL, *body = NULL;
    for (cn k = first_child(ts); k; k = next_sibling(cx->cst, k))
        if (sym(k) == S_except_group_clause) {
            if ((rc = unsupported_as(cx, ts, "except_group_clause", 1, &n)) != CR_OK) return rc;
            return push_ir(cx, n);
        }
    if ((rc = kids(cx, ts, 1, &base, &count)) != CR_OK) return rc;
    for (size_t i = 0; i < count && rc == CR_OK; i++) {
        cn k = cx->ks[base + i].node;
        switch (sym(k)) {
        case S_block:
            if ((rc = lower_block(cx, k, &body)) == CR_OK) rc = push_ir(cx, body);
            break;
        case S_except_clause:
            if ((rc = lower_except(cx, k, &n)) == CR_OK) rc = push_ir(cx, n);
            break;
        case S_else_clause: rc = lower_block(cx, field(cx, k, F_body), &orelse); break;
        case S_finally_clause:
            for (cn b = first_child(k); b; b = next_sibling(cx->cst, b))
                if (sym(b) == S_block) rc = lower_block(cx, b, &fin);
            break;
        default: break;
        }
    }
    cx->nks = base;
    if (rc == CR_OK) rc = push_ir(cx, orelse);
    if (rc == CR_OK) rc = push_ir(cx, fin);
    if (rc != CR_OK || (rc = pop_ir(cx, IR_TRY, ts, ibase, &n)) != CR_OK) return rc;
    return push_ir(cx, n);
}

/* One item of a with clause: tree-sitter reads `m as t` as an as_pattern in its value. */
static cr_code lower_with_item(lower_ctx *cx, cn ts, ir_node **out)
{
    ir_node *n = mk(cx, IR_WITHITEM, ts, 2);
    cn value = field(cx, ts, F_value);
    cr_code rc;
    if (!n) return nomem(cx);
    if (!value) value = named_child(cx, ts, 0);
    if (sym(value) == S_as_pattern) {
        if ((rc = lower_expr(cx, named_child(cx, value, 0), &n->kid[0])) != CR_OK) return rc;
        cn target = field(cx, value, F_alias);
        if ((rc = lower_target(cx, named_child(cx, target, 0), &n->kid[1])) != CR_OK) return rc;
    } else if ((rc = lower_expr(cx, value, &n->kid[0])) != CR_OK) {
        return rc;
    }
    *out = n;
    return CR_OK;
}

/* WITH(items..., body); `async with` is outside the subset. */
static cr_code lower_with(lower_ctx *cx, cn ts)
{
    size_t base, count, ibase = cx->nis;
    cr_code rc = CR_OK;
    ir_node *n;
    for (cn k = first_child(ts); k && rc == CR_OK; k = next_sibling(cx->cst, k)) {
        if (sym(k) != S_with_clause) continue;
        if ((rc = kids(cx, k, 1, &base, &count)) != CR_OK) return rc;
        for (size_t i = 0; i < count && rc == CR_OK; i++)
            if (sym(cx->ks[base + i].node) == S_with_item &&
                (rc = lower_with_item(cx, cx->ks[base + i].node, &n)) == CR_OK)
                rc = push_ir(cx, n);
        cx->nks = base;
    }
    if (rc == CR_OK && (rc = lower_block(cx, field(cx, ts, F_body), &n)) == CR_OK)
        rc = push_ir(cx, n);
    if (rc != CR_OK || (rc = pop_ir(cx, IR_WITH, ts, ibase, &n)) != CR_OK) return rc;
    return push_ir(cx, n);
}

static cr_code lower_leaf(lower_ctx *cx, cn ts, ir_kind kind)
{
    ir_node *n = mk(cx, kind, ts, 0);
    return n ? push_ir(cx, n) : nomem(cx);
}

/* Pushes the IR of one statement (an import of several modules gives several). */
static cr_code lower_stmt(lower_ctx *cx, cn ts)
{
    cr_code rc;
    ir_node *n;
    if ((rc = enter(cx, ts)) != CR_OK) return rc;
    int s = sym(ts);
    switch (s) {
    case S_expression_statement: rc = lower_expression_statement(cx, ts); break;
    case S_if_statement: rc = lower_if(cx, ts); break;
    case S_for_statement: case S_while_statement: case S_function_definition:
        if (is_async(ts)) {
            if ((rc = unsupported_as(cx, ts, "async", 1, &n)) == CR_OK) rc = push_ir(cx, n);
        } else if (s == S_function_definition && !!(field(cx, ts, F_type_parameters))) {
            if ((rc = unsupported(cx, ts, &n)) == CR_OK) rc = push_ir(cx, n);
        } else {
            rc = s == S_for_statement ? lower_for(cx, ts)
               : s == S_while_statement ? lower_while(cx, ts) : lower_def(cx, ts);
        }
        break;
    case S_break_statement:
        rc = cx->in_loop ? lower_leaf(cx, ts, IR_BREAK) : syntax(cx, ts, "'break' outside loop");
        break;
    case S_continue_statement:
        rc = cx->in_loop ? lower_leaf(cx, ts, IR_CONTINUE)
                         : syntax(cx, ts, "'continue' not properly in loop");
        break;
    case S_pass_statement: rc = lower_leaf(cx, ts, IR_PASS); break;
    case S_return_statement:
        rc = cx->in_func ? lower_simple(cx, ts, IR_RETURN, 1, lower_expr)
                         : syntax(cx, ts, "'return' outside function");
        break;
    case S_raise_statement: rc = lower_raise(cx, ts); break;
    case S_try_statement: rc = lower_try(cx, ts); break;
    case S_with_statement:
        if (is_async(ts)) {
            if ((rc = unsupported_as(cx, ts, "async", 1, &n)) == CR_OK) rc = push_ir(cx, n);
        } else {
            rc = lower_with(cx, ts);
        }
        break;
    case S_assert_statement: rc = lower_simple(cx, ts, IR_ASSERT, 2, lower_expr); break;
    case S_delete_statement: rc = lower_simple(cx, ts, IR_DEL, 0, lower_target); break;
    case S_global_statement: rc = lower_simple(cx, ts, IR_GLOBAL, 0, lower_expr); break;
    case S_import_statement: rc = lower_import(cx, ts, 0); break;
    case S_import_from_statement: rc = lower_import(cx, ts, 1); break;
    case S_print_statement:
        rc = syntax(cx, ts, "Missing parentheses in call to 'print'");
        break;
    case S_exec_statement:
        rc = syntax(cx, ts, "Missing parentheses in call to 'exec'");
        break;
    default:
        if ((rc = unsupported(cx, ts, &n)) == CR_OK) rc = push_ir(cx, n);
    }
    cx->depth--;
    return rc;
}

/* Width of the indentation before `ts` (tabs to the next multiple of 8, as CPython), or -1
 * when something else precedes it on its line (`a = 1; b = 2`, `if x: y`). */
static int indent_of(lower_ctx *cx, cn ts, int *line_width_of_end)
{
    uint32_t at = ts->start, start = at;
    while (start > 0 && cx->src[start - 1] != '\n') start--;
    int w = 0;
    for (uint32_t i = start; i < at; i++) {
        char c = cx->src[i];
        if (c == ' ') w++;
        else if (c == '\t') w = (w / 8 + 1) * 8;
        else if (c == '\f') w = 0;
        else return -1;
    }
    if (line_width_of_end) {
        /* indentation of the line on which ts ends */
        uint32_t e = ts->end, s2 = e;
        while (s2 > 0 && cx->src[s2 - 1] != '\n') s2--;
        int w2 = 0;
        for (uint32_t i = s2; i < e && (cx->src[i] == ' ' || cx->src[i] == '\t'); i++)
            w2 = cx->src[i] == ' ' ? w2 + 1 : (w2 / 8 + 1) * 8;
        *line_width_of_end = w2;
    }
    return w;
}

/* tree-sitter accepts indentation that CPython rejects; statements of one block must start
 * at one width (module level: 0). */
static cr_code check_indent(lower_ctx *cx, cn prev, cn ts, int *block_w)
{
    int prev_w = 0;
    int w = indent_of(cx, ts, NULL);
    if (w < 0) return CR_OK;
    if (*block_w < 0) { *block_w = w; return CR_OK; }
    if (w == *block_w) return CR_OK;
    if (!!(prev)) indent_of(cx, prev, &prev_w);
    if (w > *block_w && w >= prev_w) return syntax(cx, ts, "unexpected indent");
    return syntax(cx, ts, "unindent does not match any outer indentation level");
}

/* Whether every line break in the source [a, b) is escaped by a backslash: tree-sitter makes
 * no line_continuation node where a string follows one (`x = \\` NEWLINE `'s'`), since the
 * string's scanner skips it as blank. */
static int escaped_breaks(lower_ctx *cx, uint32_t a, uint32_t b)
{
    for (uint32_t i = a; i < b; i++) {
        if (cx->src[i] != '\n') continue;
        uint32_t j = i > a && cx->src[i - 1] == '\r' ? i - 1 : i;
        if (j == a || cx->src[j - 1] != '\\') return 0;
    }
    return 1;
}

/* A simple statement is one logical line: tree-sitter reads on across a line break that is
 * outside brackets (`x = a *` NEWLINE `b`), CPython does not. */
static cr_code check_logical_line(lower_ctx *cx, cn ts)
{
    if (ts->srow == ts->erow) return CR_OK;
    cn prev = NULL, end = cx->cst + ts->last;
    int depth = 0;
    /* Preorder over the subtree: the leaves in source order; strings count as one leaf. */
    for (cn n = ts; n < end;) {
        int s = sym(n);
        int leaf = s == S_string || s == S_concatenated_string || n->nkids == 0;
        if (!leaf) { n++; continue; }
        if (s != S_comment) {
            if (prev && sym(prev) != S_line_continuation && depth == 0 && n->srow > prev->erow &&
                !escaped_breaks(cx, prev->end, n->start)) {
                *cx->split = prev->end;
                return syntax(cx, n, "invalid syntax (a line break ends the statement)");
            }
            if (!is_named(n) && n->end == n->start + 1) {
                char c = cx->src[n->start];
                if (c == '(' || c == '[' || c == '{') depth++;
                else if ((c == ')' || c == ']' || c == '}') && depth > 0) depth--;
            }
            prev = n;
        }
        n = cx->cst + n->last;
    }
    return CR_OK;
}

static int is_simple_stmt(int s)
{
    return is_stmt_sym(s) && s != S_if_statement && s != S_for_statement &&
           s != S_while_statement && s != S_function_definition && s != S_try_statement &&
           s != S_with_statement;
}

static cr_code lower_body(lower_ctx *cx, cn ts, ir_kind kind, ir_node **out)
{
    size_t base, count, ibase = cx->nis;
    int block_w = kind == IR_MODULE ? 0 : -1;
    cn prev = NULL;
    cr_code rc;
    if (!(ts)) return syntax(cx, ts, "missing block");
    if ((rc = kids(cx, ts, 1, &base, &count)) != CR_OK) return rc;
    if (count == 0 && kind == IR_BLOCK) rc = syntax(cx, ts, "expected an indented block");
    for (size_t i = 0; i < count && rc == CR_OK; i++) {
        cn k = cx->ks[base + i].node;
        if ((rc = check_indent(cx, prev, k, &block_w)) != CR_OK) break;
        if (is_simple_stmt(sym(k)) && (rc = check_logical_line(cx, k)) != CR_OK) break;
        rc = lower_stmt(cx, k);
        prev = k;
    }
    cx->nks = base;
    return rc == CR_OK ? pop_ir(cx, kind, ts, ibase, out) : rc;
}

static cr_code lower_block(lower_ctx *cx, cn ts, ir_node **out)
{
    return lower_body(cx, ts, IR_BLOCK, out);
}

/* Copies the tree under `root` into sc->cst in one cursor walk (iterative: the CST can be as
 * deep as the input is long). Its size is bounded by the tree's, which the pre-scan's token
 * limit bounds. Child counts come from ts_node_child_count(), so the walk never asks the
 * cursor for a first child or a next sibling that is not there (in tree-sitter 0.20 a
 * failed step costs as much as a successful one). */
static cr_code build_cst(lower_ctx *cx, TSNode root, uint32_t *count)
{
    parser_scratch *sc = cx->sc;
    cnode *a = sc->cst;
    size_t cap = sc->cst_cap;
    uint32_t n = 0, parent = UINT32_MAX, prev = 0;
    TSTreeCursor tc = ts_tree_cursor_new(root);
    cr_code rc = CR_OK;
    int want_field = 0;
    for (;;) {
        if (n == cap) {
            size_t ncap = cap ? cap * 2 : 1024;
            cnode *p = n < UINT32_MAX / 2 ? realloc(a, ncap * sizeof *p) : NULL;
            if (!p) { rc = nomem(cx); break; }
            sc->cst = a = p;
            sc->cst_cap = cap = ncap;
        }
        TSNode node = ts_tree_cursor_current_node(&tc);
        TSPoint sp = ts_node_start_point(node), ep = ts_node_end_point(node);
        cnode *c = &a[n];
        uint32_t cur = n++;
        c->start = ts_node_start_byte(node);
        c->end = ts_node_end_byte(node);
        c->srow = sp.row;
        c->scol = sp.column;
        c->erow = ep.row;
        c->ecol = ep.column;
        c->parent = parent;
        c->next = 0;
        c->nkids = ts_node_child_count(node);
        c->symbol = ts_node_symbol(node);
        c->field = want_field ? ts_tree_cursor_current_field_id(&tc) : 0;
        const sym_info *si = c->symbol < sym_count ? &sym_table[c->symbol] : NULL;
        c->flags = (uint8_t)((si && si->named ? CN_NAMED : 0) | (ts_node_is_extra(node) ? CN_EXTRA : 0));
        c->last = 0;                    /* here: children seen so far; set when closed */
        if (parent != UINT32_MAX) {
            a[parent].last++;
            if (a[parent].last > 1) a[prev].next = cur;
        }
        if (c->nkids && ts_tree_cursor_goto_first_child(&tc)) {
            parent = cur;
            want_field = si && si->fields;
            continue;
        }
        c->nkids = 0;
        /* Close finished subtrees until one has a sibling to come. */
        for (;;) {
            uint32_t p = a[cur].parent;
            a[cur].last = n;
            if (p == UINT32_MAX) goto done;
            if (a[p].last < a[p].nkids && ts_tree_cursor_goto_next_sibling(&tc)) {
                prev = cur;
                parent = p;
                break;
            }
            a[p].nkids = a[p].last;     /* the children really seen */
            if (!ts_tree_cursor_goto_parent(&tc)) { a[p].last = n; goto done; }
            cur = p;
            const sym_info *pi = a[p].parent != UINT32_MAX && a[a[p].parent].symbol < sym_count
                                 ? &sym_table[a[a[p].parent].symbol] : NULL;
            want_field = pi && pi->fields;
        }
        {
            const sym_info *pi = a[parent].symbol < sym_count ? &sym_table[a[parent].symbol] : NULL;
            want_field = pi && pi->fields;
        }
    }
done:
    ts_tree_cursor_delete(&tc);
    *count = n;
    return rc;
}

/* Scratch bigger than this is given back after the parse rather than kept for the thread. */
#define KEEP_CST_NODES (1u << 16)

void parser_scratch_free(parser_scratch *sc)
{
    free(sc->fast_toks);
    free(sc->fast_stk);
    free(sc->cst);
    free(sc->ks);
    free(sc->is);
    memset(sc, 0, sizeof *sc);
}

cr_code parser_lower(const char *src, size_t len, TSNode root, const cr_limits *lim,
                     parser_scratch *sc, ir_module *m, cr_error *err, uint32_t *split)
{
    pthread_once(&tables_once, tables_init);
    lower_ctx cx = { .src = src, .len = len, .m = m, .lim = lim, .err = err, .sc = sc,
                     .ks = sc->ks, .capks = sc->ks_cap, .is = sc->is, .capis = sc->is_cap,
                     .split = split };
    *split = UINT32_MAX;
    uint32_t count = 0;
    cr_buf_init(&cx.sbuf, lim->max_str_len);
    cr_code rc = build_cst(&cx, root, &count);
    cx.cst = sc->cst;
    if (rc == CR_OK && count) rc = lower_body(&cx, cx.cst, IR_MODULE, &m->root);
    else if (rc == CR_OK) rc = syntax(&cx, NULL, "invalid syntax");
    sc->ks = cx.ks;
    sc->ks_cap = cx.capks;
    sc->is = cx.is;
    sc->is_cap = cx.capis;
    if (sc->cst_cap > KEEP_CST_NODES) parser_scratch_free(sc);
    cr_buf_free(&cx.sbuf);
    return rc;
}
