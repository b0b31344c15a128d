/* ir/ir.c: IR modules, nodes, reasons, and the debug dump.
 *
 * ir_dump() format (tests assert it byte for byte, so it stays stable):
 *
 *   Every node prints as "(" head [attributes] [children] ")", items separated by one space,
 *   no newlines. The head is ir_kind_name(). A NULL child (an absent `else`, default, slice
 *   bound, return value, ...) prints as "_". Attributes by kind:
 *
 *     num         (num 1_000)  (num 2.5 float)        the literal as written; "float" flag
 *     str         (str "a\"b\n")                      C-style quoted: \" \\ \n \r \t, other
 *                                                     bytes < 0x20, 0x7f and NUL as \xNN;
 *                                                     bytes >= 0x80 (UTF-8) are copied as is
 *     name        (name x)
 *     bool        (bool True)  (bool False)
 *     none        (none)
 *     binop       (binop + L R)           + - * / // % ** @ << >> & | ^
 *     boolop      (boolop and L R)        and or
 *     unary       (unary - X)             - + ~ not
 *     augassign   (augassign += T V)      the operator followed by "="
 *     compare     (compare A < B not-in C) operands interleaved with < <= == != > >= in
 *                                          not-in is is-not
 *     format      (format X SPEC)  (format X SPEC !r)   conversion last when present
 *     keyword     (keyword name V)
 *     attr        (attr OBJ name)
 *     funcdef     (funcdef name (params ...) (block ...))
 *     param       (param x)  (param x DEFAULT)  (param *args)  (param **kw)
 *     import      (import module bound)       e.g. (import math m), (import os.path os)
 *     import_from (import_from module (name x) bound)
 *     unsupported (unsupported text KIDS...)  text: what was not lowered (tree-sitter type,
 *                                             "bytes", "async", ...), then what was lowered
 *                                             from inside it, e.g.
 *                                             (unsupported class_definition (name A) (block))
 *
 *   Every other kind prints its head and its children in order, e.g.
 *   (if TEST (block ...) _), (slice _ (num 2) _), (dict K V K V), (listcomp E (compfor T I C)).
 */
#include "ir/ir.h"

#include <stdlib.h>
#include <string.h>

#define IR_MAX_REASONS 1000
/* The dump recurses; lowering bounds depth by cr_limits.max_depth, this is a backstop for
 * trees built by hand. */
#define IR_DUMP_MAX_DEPTH 10000

static const char *const kind_names[IR_KIND_END] = {
    [IR_MODULE] = "module",       [IR_BLOCK] = "block",
    [IR_EXPR] = "expr",           [IR_ASSIGN] = "assign",
    [IR_AUGASSIGN] = "augassign", [IR_IF] = "if",
    [IR_FOR] = "for",             [IR_WHILE] = "while",
    [IR_BREAK] = "break",         [IR_CONTINUE] = "continue",
    [IR_PASS] = "pass",           [IR_RETURN] = "return",
    [IR_FUNCDEF] = "funcdef",     [IR_IMPORT] = "import",
    [IR_IMPORT_FROM] = "import_from", [IR_RAISE] = "raise",
    [IR_ASSERT] = "assert",       [IR_DEL] = "del",
    [IR_GLOBAL] = "global",       [IR_UNSUPPORTED] = "unsupported",
    [IR_TRY] = "try",             [IR_EXCEPT] = "except",
    [IR_WITH] = "with",           [IR_WITHITEM] = "withitem",
    [IR_NUM] = "num",             [IR_STR] = "str",
    [IR_FSTRING] = "fstring",     [IR_FORMAT] = "format",
    [IR_NAME] = "name",           [IR_BOOL] = "bool",
    [IR_NONE] = "none",           [IR_BINOP] = "binop",
    [IR_UNARY] = "unary",         [IR_BOOLOP] = "boolop",
    [IR_COMPARE] = "compare",     [IR_IFEXP] = "ifexp",
    [IR_CALL] = "call",           [IR_KEYWORD] = "keyword",
    [IR_STARRED] = "starred",     [IR_DSTARRED] = "dstarred",
    [IR_ATTR] = "attr",           [IR_SUBSCRIPT] = "subscript",
    [IR_SLICE] = "slice",         [IR_LIST] = "list",
    [IR_TUPLE] = "tuple",         [IR_SET] = "set",
    [IR_DICT] = "dict",           [IR_LISTCOMP] = "listcomp",
    [IR_SETCOMP] = "setcomp",     [IR_GENEXP] = "genexp",
    [IR_DICTCOMP] = "dictcomp",   [IR_COMPFOR] = "compfor",
    [IR_LAMBDA] = "lambda",       [IR_PARAMS] = "params",
    [IR_PARAM] = "param",         [IR_ELLIPSIS] = "ellipsis",
};

static const struct { const char *src, *py; int prec; } binops[] = {
#define BINOP(id, src, prec, py) [id] = { src, py, prec },
#define BOOLOP(id, src) [id] = { src, NULL, 0 },
#include "ir/ops.def"
};

static const char *const unop_names[] = {
#define UNOP(id, src) [id] = src,
#include "ir/ops.def"
};

static const struct { const char *src, *dump; } cmpops[] = {
#define CMPOP(id, src, dump) [id] = { src, dump },
#include "ir/ops.def"
};

#define NAME_OF(table, i) \
    ((unsigned)(i) < sizeof table / sizeof table[0] && table[i] ? table[i] : "?")
#define IN(table, i) ((unsigned)(i) < sizeof table / sizeof table[0])

const char *ir_kind_name(ir_kind k) { return NAME_OF(kind_names, k); }
const char *ir_binop_src(int op) { return IN(binops, op) ? binops[op].src : "?"; }
int ir_binop_prec(int op) { return IN(binops, op) ? binops[op].prec : 0; }
const char *ir_unop_src(int op) { return NAME_OF(unop_names, op); }
const char *ir_cmpop_src(int op) { return IN(cmpops, op) ? cmpops[op].src : "?"; }
static const char *cmpop_dump(int op) { return IN(cmpops, op) ? cmpops[op].dump : "?"; }

const char *ir_binop_py(int op)
{
    return IN(binops, op) && binops[op].py ? binops[op].py : "?";
}

/* root stays NULL: the front end builds the IR_MODULE node once it knows its size. */
ir_module *ir_module_new(size_t max_bytes)
{
    ir_module *m = calloc(1, sizeof *m);
    if (!m) return NULL;
    cr_arena_init(&m->arena, max_bytes);
    return m;
}

void ir_module_free(ir_module *m)
{
    if (!m) return;
    cr_arena_free(&m->arena);
    free(m->reasons);
    free(m);
}

ir_node *ir_node_new(ir_module *m, ir_kind kind, int line, int col, uint32_t n)
{
    /* one allocation for the node and its kid[] (most nodes have kids) */
    ir_node *node = cr_arena_alloc(&m->arena, sizeof *node + n * sizeof(ir_node *));
    if (!node) return NULL;
    if (n) node->kid = (ir_node **)(node + 1);
    node->kind = (uint16_t)kind;
    node->line = node->end_line = line;
    node->col = node->end_col = col;
    node->n = n;
    return node;
}

/* Longest prefix of s[0..len) that is at most `max` bytes, ends before a newline and does
 * not cut a UTF-8 sequence: a snippet is one line of text. */
static size_t snippet_cut(const char *s, size_t len, size_t max)
{
    const char *nl = memchr(s, '\n', len);
    if (nl) len = (size_t)(nl - s);
    if (len > 0 && s[len - 1] == '\r') len--;
    if (len <= max) return len;
    len = max;
    while (len > 0 && ((unsigned char)s[len] & 0xC0) == 0x80) len--;
    return len;
}

static cr_code reason_push(ir_module *m, const char *code, int line, int col,
                           const char *snippet, size_t snippet_len)
{
    if (m->nreasons == m->reasons_cap) {
        size_t cap = m->reasons_cap ? m->reasons_cap * 2 : 8;
        if (cap > IR_MAX_REASONS + 1) cap = IR_MAX_REASONS + 1;
        ir_reason *r = realloc(m->reasons, cap * sizeof *r);
        if (!r) return CR_ENOMEM;
        m->reasons = r;
        m->reasons_cap = cap;
    }
    ir_reason *r = &m->reasons[m->nreasons++];
    memset(r, 0, sizeof *r);
    size_t cl = strlen(code);
    if (cl >= sizeof r->code) cl = snippet_cut(code, cl, sizeof r->code - 1);
    memcpy(r->code, code, cl);
    r->line = line;
    r->col = col;
    if (snippet && snippet_len) {
        size_t sl = snippet_cut(snippet, snippet_len, sizeof r->snippet - 1);
        memcpy(r->snippet, snippet, sl);
    }
    return CR_OK;
}

cr_code ir_add_reason(ir_module *m, const char *code, int line, int col,
                      const char *snippet, size_t snippet_len)
{
    if (m->nreasons > IR_MAX_REASONS) return CR_OK;
    if (m->nreasons == IR_MAX_REASONS)
        return reason_push(m, "reasons:truncated", line, col, NULL, 0);
    return reason_push(m, code, line, col, snippet, snippet_len);
}

/* ---- dump ------------------------------------------------------------------------------ */

static cr_code dump_quoted(cr_buf *out, const char *s, size_t len)
{
    cr_code rc = cr_buf_putc(out, '"');
    for (size_t i = 0; i < len && rc == CR_OK; i++) {
        unsigned char c = (unsigned char)s[i];
        switch (c) {
        case '"': rc = cr_buf_puts(out, "\\\""); break;
        case '\\': rc = cr_buf_puts(out, "\\\\"); break;
        case '\n': rc = cr_buf_puts(out, "\\n"); break;
        case '\r': rc = cr_buf_puts(out, "\\r"); break;
        case '\t': rc = cr_buf_puts(out, "\\t"); break;
        default:
            if (c < 0x20 || c == 0x7f) rc = cr_buf_printf(out, "\\x%02x", c);
            else rc = cr_buf_putc(out, (char)c);
        }
    }
    return rc == CR_OK ? cr_buf_putc(out, '"') : rc;
}

static cr_code dump_text(cr_buf *out, const char *s)
{
    cr_code rc = cr_buf_putc(out, ' ');
    return rc == CR_OK ? cr_buf_puts(out, s ? s : "?") : rc;
}

static cr_code dump_node(const ir_node *n, cr_buf *out, int depth);

static cr_code dump_kid(const ir_node *k, cr_buf *out, int depth)
{
    cr_code rc = cr_buf_putc(out, ' ');
    if (rc != CR_OK) return rc;
    return k ? dump_node(k, out, depth + 1) : cr_buf_putc(out, '_');
}

static cr_code dump_node(const ir_node *n, cr_buf *out, int depth)
{
    cr_code rc;
    if (depth > IR_DUMP_MAX_DEPTH)
        return cr_error_set(NULL, CR_ELIMIT, 0, 0, "dump deeper than %d", IR_DUMP_MAX_DEPTH);
    if ((rc = cr_buf_putc(out, '(')) != CR_OK) return rc;
    if ((rc = cr_buf_puts(out, ir_kind_name((ir_kind)n->kind))) != CR_OK) return rc;

    uint32_t first = 0;   /* children already printed as attributes are skipped */
    switch (n->kind) {
    case IR_NUM:
        rc = dump_text(out, n->text);
        if (rc == CR_OK && (n->flags & IRF_FLOAT)) rc = cr_buf_puts(out, " float");
        break;
    case IR_STR:
        if ((rc = cr_buf_putc(out, ' ')) == CR_OK)
            rc = dump_quoted(out, n->text ? n->text : "", n->text ? n->len : 0);
        break;
    case IR_NAME: case IR_FUNCDEF: case IR_KEYWORD: case IR_UNSUPPORTED:
        rc = dump_text(out, n->text);
        break;
    case IR_BOOL:
        rc = cr_buf_puts(out, n->op ? " True" : " False");
        break;
    case IR_BINOP: case IR_BOOLOP:
        rc = dump_text(out, ir_binop_src(n->op));
        break;
    case IR_AUGASSIGN:
        if ((rc = dump_text(out, ir_binop_src(n->op))) == CR_OK)
            rc = cr_buf_putc(out, '=');
        break;
    case IR_UNARY:
        rc = dump_text(out, ir_unop_src(n->op));
        break;
    case IR_PARAM:
        rc = cr_buf_puts(out, n->flags & IRF_VARARGS ? " *" : n->flags & IRF_KWARGS ? " **" : " ");
        if (rc == CR_OK) rc = cr_buf_puts(out, n->text ? n->text : "?");
        if (rc == CR_OK && n->n > 0 && n->kid[0]) rc = dump_kid(n->kid[0], out, depth);
        first = n->n;
        break;
    case IR_IMPORT:
        if ((rc = dump_text(out, n->text)) == CR_OK) rc = dump_text(out, n->aux);
        break;
    case IR_IMPORT_FROM:
        if ((rc = dump_text(out, n->text)) != CR_OK) break;
        if (n->n > 0 && (rc = dump_kid(n->kid[0], out, depth)) != CR_OK) break;
        rc = dump_text(out, n->aux);
        first = n->n;
        break;
    case IR_COMPARE:
        for (uint32_t i = 0; i < n->n && rc == CR_OK; i++) {
            if (i > 0) rc = dump_text(out, n->cmp ? cmpop_dump(n->cmp[i - 1]) : "?");
            if (rc == CR_OK) rc = dump_kid(n->kid[i], out, depth);
        }
        first = n->n;
        break;
    default:
        break;
    }
    if (rc != CR_OK) return rc;
    if (n->kind == IR_ATTR) {
        if (n->n > 0 && (rc = dump_kid(n->kid[0], out, depth)) != CR_OK) return rc;
        if ((rc = dump_text(out, n->text)) != CR_OK) return rc;
        first = n->n;
    }
    for (uint32_t i = first; i < n->n; i++)
        if ((rc = dump_kid(n->kid[i], out, depth)) != CR_OK) return rc;
    if (n->kind == IR_FORMAT && n->op) {
        if ((rc = cr_buf_printf(out, " !%c", (char)n->op)) != CR_OK) return rc;
    }
    return cr_buf_putc(out, ')');
}

cr_code ir_dump(const ir_node *n, cr_buf *out)
{
    if (!n) return cr_buf_putc(out, '_');
    return dump_node(n, out, 0);
}
