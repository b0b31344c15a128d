/* parser/lower.c: tree-sitter-python CST → IR (parser/ir.h).
 *
 * Each construct of the subset has one lowering function. Anything else becomes
 * IR_UNSUPPORTED with a reason `node:<tree-sitter type>`; its statements and expressions are
 * still lowered as its children so that the whitelist also reports what is inside (an
 * `import numpy` inside a `try`). Recursion is bounded by lim->max_depth: the CST of valid
 * input can be as deep as the input is long.
 *
 * Children are listed with one reused TSTreeCursor into a scratch stack (ts_node_child(i)
 * walks from the first child each time, which is quadratic on long lists). */
#include <pthread.h>
#include <string.h>

#include "parser/internal.h"

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
    X(aliased_import) X(wildcard_import) X(keyword_identifier)

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
    X(format_specifier) X(subscript) X(type_parameters)

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

static uint8_t *sym_map;            /* TSSymbol → S_*; named symbols only */
static uint32_t sym_count;
static TSFieldId field_ids[F_END];
static pthread_once_t tables_once = PTHREAD_ONCE_INIT;
static uint8_t sym_storage[4096];

static void tables_init(void)
{
    const TSLanguage *lang = tree_sitter_python();
    sym_count = ts_language_symbol_count(lang);
    if (sym_count > sizeof sym_storage) sym_count = sizeof sym_storage;
    sym_map = sym_storage;
    /* By name, not by ts_language_symbol_for_name(): aliases give one name several ids. */
    for (uint32_t s = 0; s < sym_count; s++) {
        if (ts_language_symbol_type(lang, (TSSymbol)s) != TSSymbolTypeRegular) continue;
        const char *name = ts_language_symbol_name(lang, (TSSymbol)s);
        for (int k = 1; k < S_END; k++)
            if (strcmp(name, sym_names[k]) == 0) { sym_map[s] = (uint8_t)k; break; }
    }
    for (int f = 0; f < F_END; f++)
        field_ids[f] = ts_language_field_id_for_name(lang, field_names[f],
                                                     (uint32_t)strlen(field_names[f]));
}

static int sym(TSNode n)
{
    TSSymbol s = ts_node_symbol(n);
    return s < sym_count && ts_node_is_named(n) ? sym_map[s] : S_OTHER;
}

/* ---- context ---------------------------------------------------------------------------- */

typedef struct {
    TSNode node;
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
    TSTreeCursor cur;
    kid_t *ks;              /* scratch stack of CST children (malloc'd) */
    size_t nks, capks;
    ir_node **is;           /* scratch stack of lowered nodes (malloc'd) */
    size_t nis, capis;
    cr_buf sbuf;            /* string literal being decoded */
} lower_ctx;

static cr_code lower_expr(lower_ctx *cx, TSNode ts, ir_node **out);
static cr_code lower_stmt(lower_ctx *cx, TSNode ts);
static cr_code lower_block(lower_ctx *cx, TSNode ts, ir_node **out);
static cr_code lower_target(lower_ctx *cx, TSNode ts, ir_node **out);

static cr_code nomem(lower_ctx *cx)
{
    return cr_error_set(cx->err, CR_ENOMEM, 0, 0, "out of memory building the IR");
}

static TSNode field(TSNode n, int f) { return ts_node_child_by_field_id(n, field_ids[f]); }

static const char *node_src(lower_ctx *cx, TSNode n) { return cx->src + ts_node_start_byte(n); }
static uint32_t node_len(TSNode n) { return ts_node_end_byte(n) - ts_node_start_byte(n); }

static ir_node *mk(lower_ctx *cx, ir_kind kind, TSNode ts, uint32_t n)
{
    TSPoint a = ts_node_start_point(ts), b = ts_node_end_point(ts);
    ir_node *node = ir_node_new(cx->m, kind, (int)a.row + 1, (int)a.column + 1, n);
    if (node) {
        node->end_line = (int)b.row + 1;
        node->end_col = (int)b.column + 1;
    }
    return node;
}

static const char *dup(lower_ctx *cx, const char *s, size_t len)
{
    return cr_arena_strndup(&cx->m->arena, s, len);
}

/* A node whose text is the source text of `ts` (NAME, NUM). */
static cr_code mk_text(lower_ctx *cx, ir_kind kind, TSNode ts, ir_node **out)
{
    ir_node *n = mk(cx, kind, ts, 0);
    if (!n || !(n->text = dup(cx, node_src(cx, ts), node_len(ts)))) return nomem(cx);
    n->len = node_len(ts);
    *out = n;
    return CR_OK;
}

/* Pushes the children of n (only the named ones when `named`; comments never) on cx->ks.
 * The caller reads cx->ks[base .. base+count) by index (the array may move) and pops them
 * with cx->nks = base. */
static cr_code kids(lower_ctx *cx, TSNode n, int named, size_t *base, size_t *count)
{
    *base = cx->nks;
    ts_tree_cursor_reset(&cx->cur, n);
    if (ts_tree_cursor_goto_first_child(&cx->cur)) {
        do {
            TSNode k = ts_tree_cursor_current_node(&cx->cur);
            if (ts_node_is_extra(k) || (named && !ts_node_is_named(k))) continue;
            if (cx->nks == cx->capks) {
                size_t cap = cx->capks ? cx->capks * 2 : 64;
                kid_t *p = realloc(cx->ks, cap * sizeof *p);
                if (!p) return nomem(cx);
                cx->ks = p;
                cx->capks = cap;
            }
            cx->ks[cx->nks].node = k;
            cx->ks[cx->nks].field = ts_tree_cursor_current_field_id(&cx->cur);
            cx->nks++;
        } while (ts_tree_cursor_goto_next_sibling(&cx->cur));
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
static cr_code pop_ir(lower_ctx *cx, ir_kind kind, TSNode ts, size_t base, ir_node **out)
{
    uint32_t n = (uint32_t)(cx->nis - base);
    ir_node *node = mk(cx, kind, ts, n);
    if (!node) return nomem(cx);
    if (n) memcpy(node->kid, cx->is + base, n * sizeof *node->kid);
    cx->nis = base;
    *out = node;
    return CR_OK;
}

static cr_code enter(lower_ctx *cx, TSNode ts)
{
    if (++cx->depth <= cx->lim->max_depth) return CR_OK;
    TSPoint p = ts_node_start_point(ts);
    return cr_error_set(cx->err, CR_ELIMIT, (int)p.row + 1, (int)p.column + 1,
                        "nesting deeper than %u (max_depth)", (unsigned)cx->lim->max_depth);
}

static cr_code syntax(lower_ctx *cx, TSNode ts, const char *msg)
{
    TSPoint p = ts_node_start_point(ts);
    return cr_error_set(cx->err, CR_ESYNTAX, (int)p.row + 1, (int)p.column + 1, "%s", msg);
}

static cr_code reason(lower_ctx *cx, const char *what, TSNode ts)
{
    char code[64];
    TSPoint p = ts_node_start_point(ts);
    snprintf(code, sizeof code, "node:%s", what);
    if (ir_add_reason(cx->m, code, (int)p.row + 1, (int)p.column + 1, node_src(cx, ts),
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
    case S_print_statement: case S_exec_statement:
        return 1;
    default:
        return 0;
    }
}

/* Lowers what can be lowered inside an unsupported construct, pushing the results. */
static cr_code scan_inside(lower_ctx *cx, TSNode ts)
{
    size_t base, count;
    cr_code rc;
    if ((rc = enter(cx, ts)) != CR_OK) return rc;
    if ((rc = kids(cx, ts, 1, &base, &count)) != CR_OK) return rc;
    for (size_t i = 0; i < count && rc == CR_OK; i++) {
        TSNode k = cx->ks[base + i].node;
        int s = sym(k);
        ir_node *n = NULL;
        if (s == S_block) {
            if ((rc = lower_block(cx, k, &n)) == CR_OK) rc = push_ir(cx, n);
        } else if (is_stmt_sym(s)) {
            rc = lower_stmt(cx, k);
        } else if (s == S_OTHER || s == S_else_clause || s == S_elif_clause ||
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
static cr_code unsupported_as(lower_ctx *cx, TSNode ts, const char *what, int scan,
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

static cr_code unsupported(lower_ctx *cx, TSNode ts, ir_node **out)
{
    return unsupported_as(cx, ts, ts_node_type(ts), 1, out);
}

/* ---- literals --------------------------------------------------------------------------- */

static cr_code lower_number(lower_ctx *cx, TSNode ts, int is_float, ir_node **out)
{
    const char *s = node_src(cx, ts);
    uint32_t n = node_len(ts);
    char last = n ? s[n - 1] : 0;
    if (last == 'j' || last == 'J') return unsupported_as(cx, ts, "imaginary", 0, out);
    if (last == 'l' || last == 'L') return syntax(cx, ts, "invalid decimal literal");
    /* CPython: "leading zeros in decimal integer literals are not permitted". */
    if (!is_float && n > 1 && s[0] == '0' && s[1] >= '0' && s[1] <= '9') {
        for (uint32_t i = 1; i < n; i++)
            if (s[i] != '0' && s[i] != '_')
                return syntax(cx, ts, "leading zeros in decimal integer literals are not permitted");
    }
    cr_code rc = mk_text(cx, IR_NUM, ts, out);
    if (rc == CR_OK && is_float) (*out)->flags |= IRF_FLOAT;
    return rc;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static cr_code put_utf8(cr_buf *b, uint32_t cp)
{
    char u[4];
    size_t n;
    if (cp < 0x80) { u[0] = (char)cp; n = 1; }
    else if (cp < 0x800) { u[0] = (char)(0xC0 | cp >> 6); u[1] = (char)(0x80 | (cp & 0x3F)); n = 2; }
    else if (cp < 0x10000) {
        u[0] = (char)(0xE0 | cp >> 12); u[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        u[2] = (char)(0x80 | (cp & 0x3F)); n = 3;
    } else {
        u[0] = (char)(0xF0 | cp >> 18); u[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        u[2] = (char)(0x80 | ((cp >> 6) & 0x3F)); u[3] = (char)(0x80 | (cp & 0x3F)); n = 4;
    }
    return cr_buf_put(b, u, n);
}

/* Appends the value of string text s[0..n) to cx->sbuf: CPython's escapes unless raw, `{{`
 * and `}}` in f-strings, and \r\n or \r read as \n (CPython reads source that way).
 * *bad is set for escapes we do not decode (\N{...}, surrogates). */
static cr_code decode_text(lower_ctx *cx, const char *s, size_t n, int raw, int fmt, int *bad)
{
    cr_buf *b = &cx->sbuf;
    cr_code rc = CR_OK;
    size_t i = 0;
    while (i < n && rc == CR_OK) {
        char c = s[i];
        if (c == '\r') {
            rc = cr_buf_putc(b, '\n');
            i += (i + 1 < n && s[i + 1] == '\n') ? 2 : 1;
            continue;
        }
        if (fmt && (c == '{' || c == '}') && i + 1 < n && s[i + 1] == c) {
            rc = cr_buf_putc(b, c);
            i += 2;
            continue;
        }
        if (c != '\\' || raw || i + 1 >= n) {
            rc = cr_buf_putc(b, c);
            i++;
            continue;
        }
        char e = s[i + 1];
        i += 2;
        switch (e) {
        case '\n': break;
        case '\r': if (i < n && s[i] == '\n') i++; break;
        case '\\': rc = cr_buf_putc(b, '\\'); break;
        case '\'': rc = cr_buf_putc(b, '\''); break;
        case '"': rc = cr_buf_putc(b, '"'); break;
        case 'a': rc = cr_buf_putc(b, '\a'); break;
        case 'b': rc = cr_buf_putc(b, '\b'); break;
        case 'f': rc = cr_buf_putc(b, '\f'); break;
        case 'n': rc = cr_buf_putc(b, '\n'); break;
        case 'r': rc = cr_buf_putc(b, '\r'); break;
        case 't': rc = cr_buf_putc(b, '\t'); break;
        case 'v': rc = cr_buf_putc(b, '\v'); break;
        case 'x': case 'u': case 'U': {
            int want = e == 'x' ? 2 : e == 'u' ? 4 : 8;
            uint32_t cp = 0;
            int k = 0;
            for (; k < want && i < n && hexval(s[i]) >= 0; k++, i++) cp = cp * 16 + (uint32_t)hexval(s[i]);
            if (k < want || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) *bad = 1;
            else rc = put_utf8(b, cp);
            break;
        }
        case 'N':
            *bad = 1;
            break;
        default:
            if (e >= '0' && e <= '7') {
                uint32_t cp = (uint32_t)(e - '0');
                for (int k = 1; k < 3 && i < n && s[i] >= '0' && s[i] <= '7'; k++, i++)
                    cp = cp * 8 + (uint32_t)(s[i] - '0');
                rc = put_utf8(b, cp);
            } else {
                /* CPython keeps unknown escapes as written (with a warning). */
                if ((rc = cr_buf_putc(b, '\\')) == CR_OK) rc = cr_buf_putc(b, e);
            }
        }
    }
    if (rc == CR_ELIMIT)
        return cr_error_set(cx->err, CR_ELIMIT, 0, 0, "string longer than %llu (max_str_len)",
                            (unsigned long long)cx->lim->max_str_len);
    return rc == CR_OK ? CR_OK : nomem(cx);
}

/* A STR node holding cx->sbuf; empties the buffer. */
static cr_code flush_str(lower_ctx *cx, TSNode ts, ir_node **out)
{
    ir_node *n = mk(cx, IR_STR, ts, 0);
    if (!n || !(n->text = dup(cx, cx->sbuf.p ? cx->sbuf.p : "", cx->sbuf.len))) return nomem(cx);
    n->len = (uint32_t)cx->sbuf.len;
    cr_buf_reset(&cx->sbuf);
    *out = n;
    return CR_OK;
}

static cr_code lower_interpolation(lower_ctx *cx, TSNode ts, ir_node **out);

/* A format spec after ':': literal runs and nested fields, as an FSTRING. */
static cr_code lower_spec(lower_ctx *cx, TSNode spec, ir_node **out)
{
    size_t base, count, ibase = cx->nis;
    uint32_t at = ts_node_start_byte(spec), end = ts_node_end_byte(spec);
    cr_code rc;
    if ((rc = kids(cx, spec, 0, &base, &count)) != CR_OK) return rc;
    for (size_t i = 0; i <= count && rc == CR_OK; i++) {
        TSNode k = i < count ? cx->ks[base + i].node : spec;
        uint32_t kstart = i < count ? ts_node_start_byte(k) : end;
        if (i < count && !ts_node_is_named(k)) {          /* the ':' */
            at = ts_node_end_byte(k);
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
            at = ts_node_end_byte(k);
        }
    }
    cx->nks = base;
    return rc == CR_OK ? pop_ir(cx, IR_FSTRING, spec, ibase, out) : rc;
}

/* `{expr!r:spec}` → FORMAT(expr, spec FSTRING or NULL), op the conversion letter. */
static cr_code lower_interpolation(lower_ctx *cx, TSNode ts, ir_node **out)
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
            f->op = node_len(k.node) >= 2 ? (uint16_t)(unsigned char)t[1] : 0;
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
static cr_code lower_debug_field(lower_ctx *cx, TSNode k, uint32_t eq_end)
{
    ir_node *lit, *f;
    uint32_t a = ts_node_start_byte(k) + 1;
    cr_code rc;
    if (cr_buf_put(&cx->sbuf, cx->src + a, eq_end - a) != CR_OK) return nomem(cx);
    if ((rc = flush_str(cx, k, &lit)) != CR_OK || (rc = push_ir(cx, lit)) != CR_OK) return rc;
    if ((rc = lower_interpolation(cx, k, &f)) != CR_OK) return rc;
    if (!f->op && !f->kid[1]) f->op = 'r';
    return push_ir(cx, f);
}

/* Where the "expr=" text of a `{x = }` field ends: CPython keeps the blanks after '=' too,
 * up to the conversion, the spec or the closing brace. 0 when not that form. */
static uint32_t debug_eq_end(TSNode interp)
{
    uint32_t nk = ts_node_child_count(interp);
    for (uint32_t q = 0; q + 1 < nk; q++) {
        TSNode e = ts_node_child(interp, q);
        if (!ts_node_is_named(e) && strcmp(ts_node_type(e), "=") == 0)
            return ts_node_start_byte(ts_node_child(interp, q + 1));
    }
    return 0;
}

/* One string node's parts: literal text into cx->sbuf, fields pushed as FORMAT nodes. */
static cr_code lower_string_parts(lower_ctx *cx, TSNode str, int raw, int fmt, int *bad)
{
    size_t base, count;
    cr_code rc;
    if ((rc = kids(cx, str, 1, &base, &count)) != CR_OK) return rc;
    for (size_t j = 0; j < count && rc == CR_OK; j++) {
        TSNode k = cx->ks[base + j].node;
        int s = sym(k);
        if (s == S_string_content) {
            rc = decode_text(cx, node_src(cx, k), node_len(k), raw, fmt, bad);
        } else if (s == S_interpolation) {
            ir_node *lit, *f;
            if (cx->sbuf.len && ((rc = flush_str(cx, k, &lit)) != CR_OK ||
                                 (rc = push_ir(cx, lit)) != CR_OK))
                break;
            uint32_t eq = debug_eq_end(k);
            if (eq) rc = lower_debug_field(cx, k, eq);
            else if ((rc = lower_interpolation(cx, k, &f)) == CR_OK) rc = push_ir(cx, f);
            cr_buf_reset(&cx->sbuf);   /* the field's own strings used the buffer */
        }
    }
    cx->nks = base;
    return rc;
}

/* string or concatenated_string → STR, or FSTRING when any part is an f-string. */
static cr_code lower_strings(lower_ctx *cx, TSNode ts, ir_node **out)
{
    size_t sbase = cx->nks, scount = 1, ibase = cx->nis;
    int single = sym(ts) == S_string, fmt_any = 0, bad = 0;
    cr_code rc = CR_OK;
    if (!single && (rc = kids(cx, ts, 1, &sbase, &scount)) != CR_OK) return rc;
    cr_buf_reset(&cx->sbuf);
    for (size_t i = 0; i < scount && rc == CR_OK; i++) {
        TSNode str = single ? ts : cx->ks[sbase + i].node;
        TSNode start = ts_node_child(str, 0);
        const char *p = node_src(cx, start);
        int raw = 0, fmt = 0, bytes = 0;
        for (uint32_t k = 0; k < node_len(start) && p[k] != '"' && p[k] != '\''; k++) {
            if (p[k] == 'r' || p[k] == 'R') raw = 1;
            if (p[k] == 'f' || p[k] == 'F') fmt = 1;
            if (p[k] == 'b' || p[k] == 'B') bytes = 1;
        }
        if (bytes) {
            cx->nks = sbase;
            cx->nis = ibase;
            cr_buf_reset(&cx->sbuf);
            return unsupported_as(cx, ts, "bytes", 0, out);
        }
        fmt_any |= fmt;
        rc = lower_string_parts(cx, str, raw, fmt, &bad);
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
static cr_code lower_field(lower_ctx *cx, TSNode ts, int f, ir_node **out)
{
    TSNode k = field(ts, f);
    *out = NULL;
    return ts_node_is_null(k) ? CR_OK : lower_expr(cx, k, out);
}

static int binop_of(const char *t, size_t n)
{
    static const char *const ops[] = {
        [IR_ADD] = "+", [IR_SUB] = "-", [IR_MUL] = "*", [IR_DIV] = "/", [IR_FLOORDIV] = "//",
        [IR_MOD] = "%", [IR_POW] = "**", [IR_MATMUL] = "@", [IR_LSHIFT] = "<<",
        [IR_RSHIFT] = ">>", [IR_BITAND] = "&", [IR_BITOR] = "|", [IR_BITXOR] = "^",
        [IR_AND] = "and", [IR_OR] = "or",
    };
    for (int i = 0; i < (int)(sizeof ops / sizeof ops[0]); i++)
        if (strlen(ops[i]) == n && memcmp(ops[i], t, n) == 0) return i;
    return -1;
}

static int cmpop_of(const char *t)
{
    static const char *const ops[] = {
        [IR_LT] = "<", [IR_LE] = "<=", [IR_EQ] = "==", [IR_NE] = "!=", [IR_GT] = ">",
        [IR_GE] = ">=", [IR_IN] = "in", [IR_NOT_IN] = "not in", [IR_IS] = "is",
        [IR_IS_NOT] = "is not",
    };
    for (int i = 0; i < (int)(sizeof ops / sizeof ops[0]); i++)
        if (strcmp(ops[i], t) == 0) return i;
    return -1;
}

/* Python's binding strength of a binary operator (The Python Language Reference, 6.17). */
static int binop_prec(int op)
{
    switch (op) {
    case IR_POW: return 7;
    case IR_MUL: case IR_DIV: case IR_FLOORDIV: case IR_MOD: case IR_MATMUL: return 6;
    case IR_ADD: case IR_SUB: return 5;
    case IR_LSHIFT: case IR_RSHIFT: return 4;
    case IR_BITAND: return 3;
    case IR_BITXOR: return 2;
    default: return 1;                                   /* IR_BITOR */
    }
}

/* Pushes the operands (cx->is) and operators (ops) of a chain of binary_operator nodes in
 * source order; parentheses end the chain, since they are parenthesized_expression nodes. */
static cr_code flatten_binary(lower_ctx *cx, TSNode ts, uint8_t *ops, size_t *nops, size_t max)
{
    cr_code rc;
    ir_node *e;
    if (sym(ts) != S_binary_operator || *nops >= max) {
        if ((rc = lower_expr(cx, ts, &e)) != CR_OK) return rc;
        return push_ir(cx, e);
    }
    if ((rc = enter(cx, ts)) != CR_OK) return rc;
    TSNode op = field(ts, F_operator);
    int o = binop_of(node_src(cx, op), node_len(op));
    if (o < 0 || o >= IR_AND) return syntax(cx, op, "invalid syntax");
    if ((rc = flatten_binary(cx, field(ts, F_left), ops, nops, max)) != CR_OK) return rc;
    ops[(*nops)++] = (uint8_t)o;
    rc = flatten_binary(cx, field(ts, F_right), ops, nops, max);
    cx->depth--;
    return rc;
}

static cr_code combine(lower_ctx *cx, size_t at, int op)
{
    ir_node *l = cx->is[at], *r = cx->is[at + 1];
    ir_node *n = ir_node_new(cx->m, IR_BINOP, l ? l->line : 0, l ? l->col : 0, 2);
    if (!n) return nomem(cx);
    n->op = (uint16_t)op;
    n->kid[0] = l;
    n->kid[1] = r;
    n->end_line = r ? r->end_line : n->line;
    n->end_col = r ? r->end_col : n->col;
    cx->is[at] = n;
    cx->nis = at + 1;
    return CR_OK;
}

/* tree-sitter-python 0.23 ranks `^` above `&` (so `a & b ^ c` comes out as a & (b ^ c));
 * the chain is rebuilt here with Python's precedences, `**` to the right, the rest left. */
static cr_code lower_binop(lower_ctx *cx, TSNode ts, ir_node **out)
{
    size_t max = node_len(ts) / 2 + 1, nops = 0, ibase = cx->nis, top = 0;
    uint8_t *ops = cr_arena_alloc(&cx->m->arena, 2 * max), *stack = ops + max;
    cr_code rc;
    if (!ops) return nomem(cx);
    if ((rc = flatten_binary(cx, ts, ops, &nops, max)) != CR_OK) return rc;
    /* Operands sit in cx->is[ibase..]; reduce with an operator stack (shunting-yard). The
     * operand stack is compacted in place: after i operators, it holds top+1 operands. */
    size_t next = ibase + 1;        /* next unread operand */
    size_t sp = ibase + 1;          /* end of the operand stack */
    for (size_t i = 0; i <= nops; i++) {
        int prec = i < nops ? binop_prec(ops[i]) : 0;
        while (top > 0) {
            int t = stack[top - 1], tp = binop_prec(t);
            if (tp < prec || (tp == prec && t == IR_POW)) break;
            size_t keep = cx->nis;
            cx->nis = sp;
            if ((rc = combine(cx, sp - 2, t)) != CR_OK) return rc;
            sp--;
            cx->nis = keep;
            top--;
        }
        if (i == nops) break;
        stack[top++] = ops[i];
        cx->is[sp++] = cx->is[next++];
    }
    *out = cx->is[ibase];
    cx->nis = ibase;
    return CR_OK;
}

/* A node of `kind` with two children lowered from fields fa and fb; op from the operator. */
static cr_code lower_binary(lower_ctx *cx, TSNode ts, ir_kind kind, ir_node **out)
{
    TSNode op = field(ts, F_operator);
    int o = binop_of(node_src(cx, op), node_len(op));
    ir_node *n = mk(cx, kind, ts, 2);
    cr_code rc;
    if (!n) return nomem(cx);
    if (o < 0) return syntax(cx, op, "invalid syntax");
    n->op = (uint16_t)o;
    if ((rc = lower_field(cx, ts, F_left, &n->kid[0])) != CR_OK) return rc;
    if ((rc = lower_field(cx, ts, F_right, &n->kid[1])) != CR_OK) return rc;
    *out = n;
    return CR_OK;
}

static cr_code lower_unary(lower_ctx *cx, TSNode ts, ir_node **out)
{
    ir_node *n = mk(cx, IR_UNARY, ts, 1);
    if (!n) return nomem(cx);
    if (sym(ts) == S_not_operator) {
        n->op = IR_NOT;
    } else {
        TSNode op = field(ts, F_operator);
        char c = node_len(op) ? *node_src(cx, op) : 0;
        n->op = c == '-' ? IR_NEG : c == '+' ? IR_POS : IR_INVERT;
    }
    *out = n;
    return lower_field(cx, ts, F_argument, &n->kid[0]);
}

static cr_code lower_compare(lower_ctx *cx, TSNode ts, ir_node **out)
{
    size_t base, count, ibase = cx->nis;
    cr_code rc;
    if ((rc = kids(cx, ts, 0, &base, &count)) != CR_OK) return rc;
    uint8_t *cmp = cr_arena_alloc(&cx->m->arena, count ? count : 1);
    uint32_t nops = 0;
    if (!cmp) return nomem(cx);
    for (size_t i = 0; i < count && rc == CR_OK; i++) {
        TSNode k = cx->ks[base + i].node;
        if (ts_node_is_named(k)) {
            ir_node *e;
            if ((rc = lower_expr(cx, k, &e)) == CR_OK) rc = push_ir(cx, e);
        } else {
            int o = cmpop_of(ts_node_type(k));
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
static cr_code lower_each(lower_ctx *cx, TSNode ts, ir_kind kind,
                          cr_code (*fn)(lower_ctx *, TSNode, ir_node **), ir_node **out)
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
static cr_code lower_only_child(lower_ctx *cx, TSNode ts, ir_kind kind,
                                cr_code (*fn)(lower_ctx *, TSNode, ir_node **), ir_node **out)
{
    TSNode k = ts_node_named_child(ts, 0);
    for (uint32_t i = 1; sym(k) == S_comment && i < ts_node_named_child_count(ts); i++)
        k = ts_node_named_child(ts, i);
    if (ts_node_is_null(k)) return syntax(cx, ts, "invalid syntax");
    if (kind == IR_KIND_END) return fn(cx, k, out);
    ir_node *n = mk(cx, kind, ts, 1);
    if (!n) return nomem(cx);
    *out = n;
    return fn(cx, k, &n->kid[0]);
}

static cr_code lower_dict(lower_ctx *cx, TSNode ts, ir_node **out)
{
    size_t base, count, ibase = cx->nis;
    cr_code rc;
    if ((rc = kids(cx, ts, 1, &base, &count)) != CR_OK) return rc;
    for (size_t i = 0; i < count && rc == CR_OK; i++) {
        TSNode k = cx->ks[base + i].node;
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

static int is_async(TSNode ts)
{
    TSNode k = ts_node_child(ts, 0);
    return !ts_node_is_null(k) && !ts_node_is_named(k) && strcmp(ts_node_type(k), "async") == 0;
}

/* `for T in I if C if D` → COMPFOR(T, I, C, D); the `if` clauses follow it in ks. */
static cr_code lower_compfor(lower_ctx *cx, TSNode clause, size_t at, size_t end, ir_node **out)
{
    uint32_t nif = 0;
    cr_code rc;
    while (at + 1 + nif < end && sym(cx->ks[at + 1 + nif].node) == S_if_clause) nif++;
    ir_node *n = mk(cx, IR_COMPFOR, clause, 2 + nif);
    if (!n) return nomem(cx);
    if ((rc = lower_target(cx, field(clause, F_left), &n->kid[0])) != CR_OK) return rc;
    if ((rc = lower_field(cx, clause, F_right, &n->kid[1])) != CR_OK) return rc;
    for (uint32_t i = 0; i < nif; i++) {
        TSNode c = cx->ks[at + 1 + i].node;
        if ((rc = lower_only_child(cx, c, IR_KIND_END, lower_expr, &n->kid[2 + i])) != CR_OK)
            return rc;
    }
    *out = n;
    return CR_OK;
}

static cr_code lower_comprehension(lower_ctx *cx, TSNode ts, ir_kind kind, ir_node **out)
{
    size_t base, count, ibase = cx->nis;
    cr_code rc;
    TSNode body = field(ts, F_body);
    ir_node *a, *b;
    if (kind == IR_DICTCOMP) {
        if ((rc = lower_field(cx, body, F_key, &a)) != CR_OK) return rc;
        if ((rc = lower_field(cx, body, F_value, &b)) != CR_OK) return rc;
        if ((rc = push_ir(cx, a)) != CR_OK || (rc = push_ir(cx, b)) != CR_OK) return rc;
    } else {
        if ((rc = lower_expr(cx, body, &a)) != CR_OK || (rc = push_ir(cx, a)) != CR_OK) return rc;
    }
    if ((rc = kids(cx, ts, 1, &base, &count)) != CR_OK) return rc;
    for (size_t i = 0; i < count && rc == CR_OK; i++) {
        TSNode k = cx->ks[base + i].node;
        if (sym(k) != S_for_in_clause) continue;
        if (is_async(k)) rc = unsupported_as(cx, k, "async", 1, &a);
        else rc = lower_compfor(cx, k, base + i, base + count, &a);
        if (rc == CR_OK) rc = push_ir(cx, a);
    }
    cx->nks = base;
    return rc == CR_OK ? pop_ir(cx, kind, ts, ibase, out) : rc;
}

/* KEYWORD or ATTR: text from the identifier `name`, kid[0] from field `f` of ts. */
static cr_code lower_named(lower_ctx *cx, TSNode ts, ir_kind kind, TSNode name, int f,
                           ir_node **out)
{
    ir_node *n = mk(cx, kind, ts, 1);
    if (!n || !(n->text = dup(cx, node_src(cx, name), node_len(name)))) return nomem(cx);
    n->len = node_len(name);
    *out = n;
    return lower_field(cx, ts, f, &n->kid[0]);
}

static cr_code lower_arg(lower_ctx *cx, TSNode k, ir_node **out)
{
    if (sym(k) != S_keyword_argument) return lower_expr(cx, k, out);
    return lower_named(cx, k, IR_KEYWORD, field(k, F_name), F_value, out);
}

static cr_code lower_call(lower_ctx *cx, TSNode ts, ir_node **out)
{
    size_t ibase = cx->nis, base, count;
    ir_node *f;
    cr_code rc;
    if ((rc = lower_field(cx, ts, F_function, &f)) != CR_OK || (rc = push_ir(cx, f)) != CR_OK)
        return rc;
    TSNode args = field(ts, F_arguments);
    if (sym(args) == S_generator_expression) {
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

static cr_code lower_attribute(lower_ctx *cx, TSNode ts, ir_node **out)
{
    return lower_named(cx, ts, IR_ATTR, field(ts, F_attribute), F_object, out);
}

/* `a:b:c`: the slice node has no fields, so the colons tell which bound is which. */
static cr_code lower_slice(lower_ctx *cx, TSNode ts, ir_node **out)
{
    size_t base, count;
    int part = 0;
    cr_code rc;
    ir_node *n = mk(cx, IR_SLICE, ts, 3);
    if (!n) return nomem(cx);
    if ((rc = kids(cx, ts, 0, &base, &count)) != CR_OK) return rc;
    for (size_t i = 0; i < count && rc == CR_OK; i++) {
        TSNode k = cx->ks[base + i].node;
        if (!ts_node_is_named(k)) part++;
        else if (part < 3) rc = lower_expr(cx, k, &n->kid[part]);
    }
    cx->nks = base;
    *out = n;
    return rc;
}

static cr_code lower_index(lower_ctx *cx, TSNode k, ir_node **out)
{
    return sym(k) == S_slice ? lower_slice(cx, k, out) : lower_expr(cx, k, out);
}

static cr_code lower_subscript(lower_ctx *cx, TSNode ts, ir_node **out)
{
    size_t base, count, ibase = cx->nis;
    int commas = 0;
    cr_code rc;
    ir_node *n = mk(cx, IR_SUBSCRIPT, ts, 2), *e;
    if (!n) return nomem(cx);
    if ((rc = lower_field(cx, ts, F_value, &n->kid[0])) != CR_OK) return rc;
    if ((rc = kids(cx, ts, 0, &base, &count)) != CR_OK) return rc;
    TSNode first = ts;
    for (size_t i = 0; i < count && rc == CR_OK; i++) {
        kid_t k = cx->ks[base + i];
        if (!ts_node_is_named(k.node) && strcmp(ts_node_type(k.node), ",") == 0) commas++;
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

static cr_code lower_conditional(lower_ctx *cx, TSNode ts, ir_node **out)
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

static cr_code lower_param(lower_ctx *cx, TSNode k, ir_node **out)
{
    int s = sym(k);
    TSNode name = k, value = { 0 };
    uint32_t flags = 0;
    int has_value = 0;
    if (s == S_default_parameter || s == S_typed_default_parameter) {
        name = field(k, F_name);
        value = field(k, F_value);
        has_value = 1;
    } else if (s == S_typed_parameter) {
        name = ts_node_named_child(k, 0);
    }
    if (sym(name) == S_list_splat_pattern) { flags = IRF_VARARGS; name = ts_node_named_child(name, 0); }
    else if (sym(name) == S_dictionary_splat_pattern) { flags = IRF_KWARGS; name = ts_node_named_child(name, 0); }
    if (sym(name) != S_identifier && sym(name) != S_keyword_identifier)
        return unsupported(cx, k, out);   /* `*`, `/`, a tuple pattern */
    ir_node *n = mk(cx, IR_PARAM, k, 1);
    if (!n || !(n->text = dup(cx, node_src(cx, name), node_len(name)))) return nomem(cx);
    n->len = node_len(name);
    n->flags = flags;
    *out = n;
    return has_value ? lower_expr(cx, value, &n->kid[0]) : CR_OK;
}

/* PARAMS from `parameters` / `lambda_parameters`, or an empty one at `at` when absent. */
static cr_code lower_params(lower_ctx *cx, TSNode ps, TSNode at, ir_node **out)
{
    if (ts_node_is_null(ps)) {
        *out = mk(cx, IR_PARAMS, at, 0);
        return *out ? CR_OK : nomem(cx);
    }
    return lower_each(cx, ps, IR_PARAMS, lower_param, out);
}

static cr_code lower_lambda(lower_ctx *cx, TSNode ts, ir_node **out)
{
    cr_code rc;
    ir_node *n = mk(cx, IR_LAMBDA, ts, 2);
    if (!n) return nomem(cx);
    if ((rc = lower_params(cx, field(ts, F_parameters), ts, &n->kid[0])) != CR_OK) return rc;
    *out = n;
    return lower_field(cx, ts, F_body, &n->kid[1]);
}

static cr_code lower_expr_in(lower_ctx *cx, TSNode ts, ir_node **out)
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
    case S_tuple: case S_expression_list: return lower_each(cx, ts, IR_TUPLE, lower_expr, out);
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

static cr_code lower_expr(lower_ctx *cx, TSNode ts, ir_node **out)
{
    cr_code rc;
    *out = NULL;
    if ((rc = enter(cx, ts)) != CR_OK) return rc;
    rc = lower_expr_in(cx, ts, out);
    cx->depth--;
    return rc;
}

/* An assignment or for target: names, tuples and lists of targets, starred, subscripts and
 * attributes. */
static cr_code lower_target(lower_ctx *cx, TSNode ts, ir_node **out)
{
    cr_code rc;
    *out = NULL;
    if ((rc = enter(cx, ts)) != CR_OK) return rc;
    switch (sym(ts)) {
    case S_pattern_list: case S_tuple_pattern: case S_tuple: case S_expression_list:
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
static cr_code lower_assignment(lower_ctx *cx, TSNode stmt, TSNode as)
{
    size_t ibase = cx->nis;
    cr_code rc;
    ir_node *n;
    for (;;) {
        if ((rc = lower_target(cx, field(as, F_left), &n)) != CR_OK) return rc;
        if ((rc = push_ir(cx, n)) != CR_OK) return rc;
        TSNode right = field(as, F_right);
        if (ts_node_is_null(right)) {
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

static cr_code lower_augmented(lower_ctx *cx, TSNode stmt, TSNode as)
{
    TSNode op = field(as, F_operator);
    int o = node_len(op) >= 2 ? binop_of(node_src(cx, op), node_len(op) - 1) : -1;
    ir_node *n = mk(cx, IR_AUGASSIGN, stmt, 2);
    cr_code rc;
    if (!n) return nomem(cx);
    if (o < 0 || o >= IR_AND) return syntax(cx, op, "invalid syntax");
    n->op = (uint16_t)o;
    if ((rc = lower_target(cx, field(as, F_left), &n->kid[0])) != CR_OK) return rc;
    if ((rc = lower_field(cx, as, F_right, &n->kid[1])) != CR_OK) return rc;
    return push_ir(cx, n);
}

static cr_code lower_expression_statement(lower_ctx *cx, TSNode ts)
{
    size_t base, count;
    cr_code rc;
    ir_node *n, *e;
    if ((rc = kids(cx, ts, 1, &base, &count)) != CR_OK) return rc;
    TSNode k = cx->ks[base].node;
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
static cr_code lower_else(lower_ctx *cx, TSNode ts, ir_node **out)
{
    TSNode alt = field(ts, F_alternative);
    *out = NULL;
    return ts_node_is_null(alt) ? CR_OK : lower_block(cx, field(alt, F_body), out);
}

static cr_code lower_if(lower_ctx *cx, TSNode ts)
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
            rc = lower_block(cx, field(k.node, F_body), &orelse);
            continue;
        }
        if (!(n = mk(cx, IR_IF, k.node, 3))) { rc = nomem(cx); break; }
        if ((rc = lower_field(cx, k.node, F_condition, &n->kid[0])) != CR_OK) break;
        if ((rc = lower_block(cx, field(k.node, F_consequence), &n->kid[1])) != CR_OK) break;
        n->kid[2] = orelse;
        orelse = n;
    }
    cx->nks = base;
    if (rc != CR_OK) return rc;
    if (!(n = mk(cx, IR_IF, ts, 3))) return nomem(cx);
    if ((rc = lower_field(cx, ts, F_condition, &n->kid[0])) != CR_OK) return rc;
    if ((rc = lower_block(cx, field(ts, F_consequence), &n->kid[1])) != CR_OK) return rc;
    n->kid[2] = orelse;
    return push_ir(cx, n);
}

static cr_code lower_loop_body(lower_ctx *cx, TSNode ts, ir_node **out)
{
    cx->in_loop++;
    cr_code rc = lower_block(cx, field(ts, F_body), out);
    cx->in_loop--;
    return rc;
}

static cr_code lower_for(lower_ctx *cx, TSNode ts)
{
    ir_node *n = mk(cx, IR_FOR, ts, 4);
    cr_code rc;
    if (!n) return nomem(cx);
    if ((rc = lower_target(cx, field(ts, F_left), &n->kid[0])) != CR_OK) return rc;
    if ((rc = lower_field(cx, ts, F_right, &n->kid[1])) != CR_OK) return rc;
    if ((rc = lower_loop_body(cx, ts, &n->kid[2])) != CR_OK) return rc;
    if ((rc = lower_else(cx, ts, &n->kid[3])) != CR_OK) return rc;
    return push_ir(cx, n);
}

static cr_code lower_while(lower_ctx *cx, TSNode ts)
{
    ir_node *n = mk(cx, IR_WHILE, ts, 3);
    cr_code rc;
    if (!n) return nomem(cx);
    if ((rc = lower_field(cx, ts, F_condition, &n->kid[0])) != CR_OK) return rc;
    if ((rc = lower_loop_body(cx, ts, &n->kid[1])) != CR_OK) return rc;
    if ((rc = lower_else(cx, ts, &n->kid[2])) != CR_OK) return rc;
    return push_ir(cx, n);
}

static cr_code lower_def(lower_ctx *cx, TSNode ts)
{
    TSNode name = field(ts, F_name);
    ir_node *n = mk(cx, IR_FUNCDEF, ts, 2);
    cr_code rc;
    if (!n || !(n->text = dup(cx, node_src(cx, name), node_len(name)))) return nomem(cx);
    n->len = node_len(name);
    if ((rc = lower_params(cx, field(ts, F_parameters), ts, &n->kid[0])) != CR_OK) return rc;
    int loop = cx->in_loop;
    cx->in_func++;
    cx->in_loop = 0;
    rc = lower_block(cx, field(ts, F_body), &n->kid[1]);
    cx->in_func--;
    cx->in_loop = loop;
    return rc == CR_OK ? push_ir(cx, n) : rc;
}

/* Source text of a dotted name without the blanks that `a . b` may hold. */
static const char *dotted(lower_ctx *cx, TSNode ts, uint32_t *len)
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
static cr_code lower_import(lower_ctx *cx, TSNode ts, int from)
{
    size_t base, count;
    cr_code rc = CR_OK;
    uint32_t mlen = 0;
    const char *module = NULL;
    if (from && !(module = dotted(cx, field(ts, F_module_name), &mlen))) return nomem(cx);
    if ((rc = kids(cx, ts, 1, &base, &count)) != CR_OK) return rc;
    for (size_t i = 0; i < count && rc == CR_OK; i++) {
        kid_t k = cx->ks[base + i];
        TSNode name = k.node, alias = { 0 };
        int star = sym(k.node) == S_wildcard_import;
        if (k.field != field_ids[F_name] && !star) continue;
        if (sym(k.node) == S_aliased_import) {
            name = field(k.node, F_name);
            alias = field(k.node, F_alias);
        }
        uint32_t nlen;
        const char *text = dotted(cx, name, &nlen);
        ir_node *n = mk(cx, from ? IR_IMPORT_FROM : IR_IMPORT, ts, from ? 1 : 0);
        if (!text || !n) { rc = nomem(cx); break; }
        if (!ts_node_is_null(alias)) {
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
static cr_code lower_simple(lower_ctx *cx, TSNode ts, ir_kind kind, uint32_t min,
                            cr_code (*fn)(lower_ctx *, TSNode, ir_node **))
{
    size_t base, count, ibase = cx->nis;
    cr_code rc;
    ir_node *n;
    if ((rc = kids(cx, ts, 1, &base, &count)) != CR_OK) return rc;
    for (size_t i = 0; i < count && rc == CR_OK; i++) {
        kid_t k = cx->ks[base + i];
        if (kind == IR_RAISE && k.field != 0) continue;    /* `from cause`: only the traceback */
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

static cr_code lower_leaf(lower_ctx *cx, TSNode ts, ir_kind kind)
{
    ir_node *n = mk(cx, kind, ts, 0);
    return n ? push_ir(cx, n) : nomem(cx);
}

/* Pushes the IR of one statement (an import of several modules gives several). */
static cr_code lower_stmt(lower_ctx *cx, TSNode ts)
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
        } else if (s == S_function_definition && !ts_node_is_null(field(ts, F_type_parameters))) {
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
    case S_raise_statement: rc = lower_simple(cx, ts, IR_RAISE, 1, lower_expr); break;
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
static int indent_of(lower_ctx *cx, TSNode ts, int *line_width_of_end)
{
    uint32_t at = ts_node_start_byte(ts), start = at;
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
        uint32_t e = ts_node_end_byte(ts), s2 = e;
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
static cr_code check_indent(lower_ctx *cx, TSNode prev, TSNode ts, int *block_w)
{
    int prev_w = 0;
    int w = indent_of(cx, ts, NULL);
    if (w < 0) return CR_OK;
    if (*block_w < 0) { *block_w = w; return CR_OK; }
    if (w == *block_w) return CR_OK;
    if (!ts_node_is_null(prev)) indent_of(cx, prev, &prev_w);
    if (w > *block_w && w >= prev_w) return syntax(cx, ts, "unexpected indent");
    return syntax(cx, ts, "unindent does not match any outer indentation level");
}

/* A simple statement is one logical line: tree-sitter reads on across a line break that is
 * outside brackets (`x = a *` NEWLINE `b`), CPython does not. */
static cr_code check_logical_line(lower_ctx *cx, TSNode ts)
{
    if (ts_node_start_point(ts).row == ts_node_end_point(ts).row) return CR_OK;
    TSTreeCursor cur = ts_tree_cursor_new(ts);
    TSNode prev = { 0 };
    int have_prev = 0, depth = 0;
    cr_code rc = CR_OK;
    for (;;) {
        TSNode n = ts_tree_cursor_current_node(&cur);
        int s = sym(n);
        int leaf = s == S_string || s == S_concatenated_string ||
                   ts_node_child_count(n) == 0;
        if (!leaf && ts_tree_cursor_goto_first_child(&cur)) continue;
        if (s != S_comment) {
            if (have_prev && sym(prev) != S_line_continuation && depth == 0 &&
                ts_node_start_point(n).row > ts_node_end_point(prev).row) {
                rc = syntax(cx, n, "invalid syntax (a line break ends the statement)");
                break;
            }
            if (!ts_node_is_named(n) && ts_node_end_byte(n) == ts_node_start_byte(n) + 1) {
                char c = cx->src[ts_node_start_byte(n)];
                if (c == '(' || c == '[' || c == '{') depth++;
                else if ((c == ')' || c == ']' || c == '}') && depth > 0) depth--;
            }
            prev = n;
            have_prev = 1;
        }
        while (!ts_tree_cursor_goto_next_sibling(&cur))
            if (!ts_tree_cursor_goto_parent(&cur)) goto out;
    }
out:
    ts_tree_cursor_delete(&cur);
    return rc;
}

static int is_simple_stmt(int s)
{
    return is_stmt_sym(s) && s != S_if_statement && s != S_for_statement &&
           s != S_while_statement && s != S_function_definition;
}

static cr_code lower_body(lower_ctx *cx, TSNode ts, ir_kind kind, ir_node **out)
{
    size_t base, count, ibase = cx->nis;
    int block_w = kind == IR_MODULE ? 0 : -1;
    TSNode prev = { 0 };
    cr_code rc;
    if (ts_node_is_null(ts)) return syntax(cx, ts, "missing block");
    if ((rc = kids(cx, ts, 1, &base, &count)) != CR_OK) return rc;
    if (count == 0 && kind == IR_BLOCK) rc = syntax(cx, ts, "expected an indented block");
    for (size_t i = 0; i < count && rc == CR_OK; i++) {
        TSNode k = cx->ks[base + i].node;
        if ((rc = check_indent(cx, prev, k, &block_w)) != CR_OK) break;
        if (is_simple_stmt(sym(k)) && (rc = check_logical_line(cx, k)) != CR_OK) break;
        rc = lower_stmt(cx, k);
        prev = k;
    }
    cx->nks = base;
    return rc == CR_OK ? pop_ir(cx, kind, ts, ibase, out) : rc;
}

static cr_code lower_block(lower_ctx *cx, TSNode ts, ir_node **out)
{
    return lower_body(cx, ts, IR_BLOCK, out);
}

cr_code parser_lower(const char *src, size_t len, TSNode root, const cr_limits *lim,
                     ir_module *m, cr_error *err)
{
    pthread_once(&tables_once, tables_init);
    lower_ctx cx = { .src = src, .len = len, .m = m, .lim = lim, .err = err };
    cx.cur = ts_tree_cursor_new(root);
    cr_buf_init(&cx.sbuf, lim->max_str_len);
    cr_code rc = lower_body(&cx, root, IR_MODULE, &m->root);
    ts_tree_cursor_delete(&cx.cur);
    free(cx.ks);
    free(cx.is);
    cr_buf_free(&cx.sbuf);
    return rc;
}
