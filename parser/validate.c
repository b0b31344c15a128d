/* parser/validate.c: what CPython does to a program after its grammar accepted it, done once
 * on the IR whichever front end (fast.c or tree-sitter + lower.c) built it, so that the two
 * cannot differ: identifiers normalised to NFKC (`ａｎｓ` is `ans`), and the SyntaxErrors of
 * CPython 3.11's parser actions, symbol table and compiler that tree-sitter's grammar lets
 * through. Also the PEP 263 coding cookie, which decides how CPython decodes the bytes. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uninorm.h>

#include "parser/parser_int.h"

/* ---- a set of names (open addressing; the strings are borrowed) --------------------------- */

static size_t name_hash(const char *s)
{
    return cr_hash_name(s, strlen(s));
}

/* The slot holding name, or the empty slot where it would go (set->cap > 0). */
static size_t name_slot(const parser_nameset *set, const char *name, size_t h)
{
    size_t i = h & (set->cap - 1);
    while (set->slot[i] && set->slot[i] != name && strcmp(set->slot[i], name) != 0)
        i = (i + 1) & (set->cap - 1);
    return i;
}

int parser_nameset_has(const parser_nameset *set, const char *name)
{
    if (!set->cap || !name) return 0;
    return set->slot[name_slot(set, name, name_hash(name))] != NULL;
}

cr_code parser_nameset_add(parser_nameset *set, const char *name)
{
    if (!name) return CR_OK;
    size_t h = name_hash(name), j = 0;
    if (set->cap && set->slot[j = name_slot(set, name, h)]) return CR_OK;
    if (2 * (set->n + 1) > set->cap) {
        size_t cap = set->cap ? set->cap * 2 : 32;
        const char **slot = calloc(cap, sizeof *slot);
        if (!slot) return CR_ENOMEM;
        for (size_t i = 0; i < set->cap; i++) {
            if (!set->slot[i]) continue;
            size_t k = name_hash(set->slot[i]) & (cap - 1);
            while (slot[k]) k = (k + 1) & (cap - 1);
            slot[k] = set->slot[i];
        }
        if (set->own) free(set->slot);
        set->slot = slot;
        set->cap = cap;
        set->own = 1;
        j = name_slot(set, name, h);
    }
    set->slot[j] = name;
    set->n++;
    return CR_OK;
}

void parser_nameset_free(parser_nameset *set)
{
    if (set->own) free(set->slot);
    memset(set, 0, sizeof *set);
}

size_t parser_lines_offset(parser_lines *l, int line, int col, int *nomem)
{
    if (!l->start) {
        size_t lines = 1;
        for (size_t i = 0; i < l->len; i++) lines += l->src[i] == '\n';
        if (!(l->start = malloc(lines * sizeof *l->start))) {
            *nomem = 1;
            return l->len;
        }
        l->start[0] = 0;
        l->n = 1;
        for (size_t i = 0; i < l->len; i++)
            if (l->src[i] == '\n') l->start[l->n++] = (uint32_t)(i + 1);
    }
    if (line < 1 || (size_t)line > l->n || col < 1) return l->len;
    size_t off = (size_t)l->start[line - 1] + (size_t)(col - 1);
    return off > l->len ? l->len : off;
}

/* ---- the walk ----------------------------------------------------------------------------- */

/* CPython reports the errors of an earlier stage first: its parser's, then its symbol
 * table's, then its compiler's. Within the parser, the first in the source; within the
 * others, the first in their walk, which follows the source too. */
enum { ST_PARSER, ST_SYMTABLE, ST_COMPILER, ST_COUNT };

/* As in the whitelist: lowering bounds the depth by cr_limits.max_depth; a backstop. */
#define VD_MAX_DEPTH 100000

typedef struct {
    ir_module *m;
    const char *src;
    size_t len;
    parser_lines lines;
    int nomem;
    cr_error first[ST_COUNT];   /* code CR_OK: none yet */
    const ir_node *fstr;        /* the outermost f-string being walked */
    int spec_depth;             /* format specs around the node being walked, in that f-string */
    size_t nglobal;
} vd_ctx;

static size_t pos_to_offset(vd_ctx *v, int line, int col)
{
    return parser_lines_offset(&v->lines, line, col, &v->nomem);
}

static void report(vd_ctx *v, int stage, int line, int col, const char *fmt, const char *name)
{
    cr_error *e = &v->first[stage];
    if (e->code != CR_OK &&
        (stage != ST_PARSER || e->line < line || (e->line == line && e->col <= col)))
        return;
    cr_error_set(e, CR_ESYNTAX, line, col, fmt, name);
}

/* CPython turns every identifier into its NFKC form while parsing (PEP 3131); ASCII ones
 * already are. `*len`, when not 0, is the text's byte count, updated with it. */
static cr_code nfkc(vd_ctx *v, const char **text, uint32_t *len)
{
    const unsigned char *s = (const unsigned char *)*text;
    size_t n, outn;
    if (!s) return CR_OK;
    n = len && *len ? *len : strlen(*text);
    if (parser_ascii_span(s, n) == n) return CR_OK;   /* no NUL inside: a name */
    uint8_t buf[256];
    outn = sizeof buf;
    uint8_t *out = u8_normalize(UNINORM_NFKC, s, n, buf, &outn);
    if (!out) return CR_ENOMEM;
    char *copy = cr_arena_strndup(&v->m->arena, (const char *)out, outn);
    if (out != buf) free(out);
    if (!copy) return CR_ENOMEM;
    *text = copy;
    if (len && *len) *len = (uint32_t)outn;
    return CR_OK;
}

/* The text of n->kid[i] when it is a `kind` node (PARAM, KEYWORD), else NULL. */
static const char *kid_name(const ir_node *n, uint32_t i, ir_kind kind)
{
    return n->kid[i] && n->kid[i]->kind == kind ? n->kid[i]->text : NULL;
}

/* The index of the first `kind` kid of n (from `from` on) whose name an earlier one has, or
 * -1. Quadratic for the short lists of real code, a set past that. */
static long first_repeat(const ir_node *n, uint32_t from, ir_kind kind, cr_code *rc)
{
    *rc = CR_OK;
    if (n->n - from <= 32) {
        for (uint32_t i = from + 1; i < n->n; i++) {
            const char *a = kid_name(n, i, kind), *b;
            for (uint32_t j = from; a && j < i; j++)
                if ((b = kid_name(n, j, kind)) && strcmp(a, b) == 0) return (long)i;
        }
        return -1;
    }
    parser_nameset set = { 0 };
    long at = -1;
    for (uint32_t i = from; i < n->n && at < 0 && *rc == CR_OK; i++) {
        const char *a = kid_name(n, i, kind);
        if (!a) continue;
        if (parser_nameset_has(&set, a)) at = (long)i;
        else *rc = parser_nameset_add(&set, a);
    }
    parser_nameset_free(&set);
    return at;
}

/* A parameter's name comes after its `*` or `**`; CPython places the error there. */
static void param_name_pos(vd_ctx *v, const ir_node *p, int *line, int *col)
{
    size_t off = pos_to_offset(v, p->line, p->col);
    while (off < v->len && (v->src[off] == '*' || v->src[off] == ' ' || v->src[off] == '\t'))
        off++;
    parser_position_of(v->src, off, line, col);
}

static cr_code check_params(vd_ctx *v, const ir_node *ps)
{
    int dflt = 0, star = 0, line, col;
    cr_code rc;
    for (uint32_t i = 0; i < ps->n; i++) {
        const ir_node *p = ps->kid[i];
        const ir_node *prev = i ? ps->kid[i - 1] : NULL;
        if (!p || p->kind != IR_PARAM) {   /* a bare `*` (`/` keeps them positional) */
            star |= p && p->text && strcmp(p->text, "keyword_separator") == 0;
            continue;
        }
        if (prev && prev->kind == IR_PARAM && (prev->flags & IRF_KWARGS)) {
            report(v, ST_PARSER, p->line, p->col, "arguments cannot follow var-keyword argument%s", "");
            break;
        }
        if (p->flags & IRF_VARARGS) {
            if (star) {
                report(v, ST_PARSER, p->line, p->col, "* argument may appear only once%s", "");
                break;
            }
            star = 1;
        } else if (!star && !(p->flags & IRF_KWARGS)) {   /* keyword-only ones need no default */
            if (p->kid[0]) dflt = 1;
            else if (dflt) {
                report(v, ST_PARSER, p->line, p->col, "non-default argument follows default argument%s", "");
                break;
            }
        }
    }
    long at = first_repeat(ps, 0, IR_PARAM, &rc);
    /* The symbol table reports its first error only; finding the position costs a scan. */
    if (at >= 0 && v->first[ST_SYMTABLE].code == CR_OK) {
        param_name_pos(v, ps->kid[at], &line, &col);
        report(v, ST_SYMTABLE, line, col, "duplicate argument '%s' in function definition",
               ps->kid[at]->text);
    }
    return rc;
}

/* Arguments go positional (and `*xs`), then keywords (and `*xs`), then keywords and `**kw`:
 * CPython's grammar says so, tree-sitter's does not. */
static cr_code check_call(vd_ctx *v, const ir_node *call)
{
    int kw = 0, dstar = 0;
    cr_code rc = CR_OK;
    for (uint32_t i = 1; i < call->n; i++) {
        const ir_node *a = call->kid[i];
        if (!a) continue;
        if (a->kind == IR_KEYWORD) kw = 1;
        else if (a->kind == IR_DSTARRED) kw = dstar = 1;
        else if (a->kind == IR_STARRED) {
            if (dstar) {
                report(v, ST_PARSER, call->kid[1]->line, call->kid[1]->col,
                       "iterable argument unpacking follows keyword argument unpacking%s", "");
                break;
            }
        } else if (kw) {
            /* CPython's parser places it at the last token it read: the closing `)`. */
            report(v, ST_PARSER, call->end_line, call->end_col - 1,
                   "positional argument follows keyword argument%s", dstar ? " unpacking" : "");
            break;
        }
    }
    long at = call->n > 1 ? first_repeat(call, 1, IR_KEYWORD, &rc) : -1;
    if (at >= 0)
        report(v, ST_COMPILER, call->kid[at]->line, call->kid[at]->col,
               "keyword argument repeated: %s", call->kid[at]->text);
    return rc;
}

/* CPython checks an f-string's fields after it has read the token after the literal (or after
 * the last of adjacent literals): its errors stand there. */
static void fstring_error(vd_ctx *v, const char *msg)
{
    const ir_node *f = v->fstr;
    size_t off = pos_to_offset(v, f->end_line, f->end_col);
    int line, col;
    for (;;) {
        if (off < v->len && (v->src[off] == ' ' || v->src[off] == '\t' || v->src[off] == '\f')) off++;
        else if (off + 1 < v->len && v->src[off] == '\\' && v->src[off + 1] == '\n') off += 2;
        else break;
    }
    parser_position_of(v->src, off, &line, &col);
    report(v, ST_PARSER, line, col, "%s", msg);
}

/* CPython's tokenizer wants a digit of the base after every `_` of a number. */
static void check_number(vd_ctx *v, const ir_node *n)
{
    const char *t = n->text, *u = t ? strchr(t, '_') : NULL;
    int base = 10;
    if (!u) return;
    if (t[0] == '0' && t[1]) {
        char b = (char)(t[1] | 0x20);
        base = b == 'x' ? 16 : b == 'o' ? 8 : b == 'b' ? 2 : 10;
    }
    for (; u; u = strchr(u + 1, '_')) {
        unsigned char d = (unsigned char)u[1];
        int ok = base == 16 ? (d >= '0' && d <= '9') || ((d | 0x20) >= 'a' && (d | 0x20) <= 'f')
                            : d >= '0' && d < '0' + (base < 10 ? base : 10);
        if (!ok) {
            report(v, ST_PARSER, n->line, n->col + (int)(u - t), "invalid %s literal",
                   base == 16 ? "hexadecimal" : base == 8 ? "octal" : base == 2 ? "binary" : "decimal");
            return;
        }
    }
}

/* CPython's compiler refuses to bind __debug__ (its value is fixed at compile time); `t` is a
 * target, reported at its own position or at `at`. */
static int is_debug(const char *name) { return name && strcmp(name, "__debug__") == 0; }

static void debug_target(vd_ctx *v, const ir_node *t, const char *verb, int depth)
{
    if (!t || depth > VD_MAX_DEPTH) return;
    if (t->kind == IR_NAME && is_debug(t->text))
        report(v, ST_COMPILER, t->line, t->col, "cannot %s __debug__", verb);
    else if (t->kind == IR_TUPLE || t->kind == IR_LIST || t->kind == IR_STARRED)
        for (uint32_t i = 0; i < t->n; i++) debug_target(v, t->kid[i], verb, depth + 1);
}

static void debug_binds(vd_ctx *v, const ir_node *n, int depth)
{
    uint32_t i;
    switch (n->kind) {
    case IR_ASSIGN:
        for (i = 0; i + 1 < n->n; i++) debug_target(v, n->kid[i], "assign to", depth);
        break;
    case IR_AUGASSIGN: case IR_FOR: case IR_COMPFOR:
        debug_target(v, n->kid[0], "assign to", depth);
        break;
    case IR_WITHITEM:
        debug_target(v, n->kid[1], "assign to", depth);
        break;
    case IR_EXCEPT:   /* at the clause, as CPython */
        if (n->kid[1] && is_debug(n->kid[1]->text))
            report(v, ST_COMPILER, n->line, n->col, "cannot %s __debug__", "assign to");
        break;
    case IR_DEL:
        for (i = 0; i < n->n; i++) debug_target(v, n->kid[i], "delete", depth);
        break;
    case IR_IMPORT: case IR_IMPORT_FROM:
        if (is_debug(n->aux)) report(v, ST_COMPILER, n->line, n->col, "cannot %s __debug__", "assign to");
        break;
    case IR_FUNCDEF: case IR_LAMBDA: {
        const ir_node *ps = n->kid[0];
        int bad = n->kind == IR_FUNCDEF && is_debug(n->text);
        for (i = 0; ps && i < ps->n && !bad; i++) bad = ps->kid[i] && ps->kid[i]->kind == IR_PARAM && is_debug(ps->kid[i]->text);
        if (bad) report(v, ST_COMPILER, n->line, n->col, "cannot %s __debug__", "assign to");
        break;
    }
    case IR_CALL:
        for (i = 1; i < n->n; i++)
            if (n->kid[i] && n->kid[i]->kind == IR_KEYWORD && is_debug(n->kid[i]->text)) {
                report(v, ST_COMPILER, n->line, n->col, "cannot %s __debug__", "assign to");
                break;
            }
        break;
    default:
        break;
    }
}

/* What CPython's messages call an expression of this kind (_PyPegen_get_expr_name). */
static const char *expr_name(const ir_node *e)
{
    switch (e->kind) {
    case IR_NUM: case IR_STR: return "literal";
    case IR_BOOL: return e->op ? "True" : "False";
    case IR_NONE: return "None";
    case IR_ELLIPSIS: return "ellipsis";
    case IR_FSTRING: return "f-string expression";
    case IR_CALL: return "function call";
    case IR_COMPARE: return "comparison";
    case IR_IFEXP: return "conditional expression";
    case IR_LAMBDA: return "lambda";
    case IR_LISTCOMP: return "list comprehension";
    case IR_SETCOMP: return "set comprehension";
    case IR_DICTCOMP: return "dict comprehension";
    case IR_GENEXP: return "generator expression";
    case IR_DICT: return "dict literal";
    case IR_SET: return "set display";
    case IR_STARRED: return "starred";
    default: return "expression";
    }
}

/* A target of an assignment, a `for` or a `del`, as CPython's parser and compiler check it
 * (the evaluator met these only when it ran the statement). */
static void check_target(vd_ctx *v, const ir_node *t, int del, int depth)
{
    if (!t || depth > VD_MAX_DEPTH) return;
    switch (t->kind) {
    case IR_NAME: case IR_ATTR: case IR_SUBSCRIPT: case IR_UNSUPPORTED:
        return;
    case IR_TUPLE: case IR_LIST: {
        int stars = 0;
        for (uint32_t i = 0; i < t->n; i++) {
            const ir_node *k = t->kid[i];
            if (k && k->kind == IR_STARRED && !del) {
                if (++stars == 2)
                    report(v, ST_COMPILER, t->line, t->col, "multiple starred expressions in assignment%s", "");
                check_target(v, k->kid[0], del, depth + 1);
            } else {
                check_target(v, k, del, depth + 1);
            }
        }
        return;
    }
    case IR_STARRED:
        if (!del) {
            report(v, ST_COMPILER, t->line, t->col, "starred assignment target must be in a list or tuple%s", "");
            return;
        }
        break;
    default:
        break;
    }
    report(v, ST_PARSER, t->line, t->col, del ? "cannot delete %s" : "cannot assign to %s", expr_name(t));
}

/* Whether k, a kid of n, stands in parentheses of its own (`(*a)`), which lowering drops;
 * a call's parentheses are its own. */
static int grouped(vd_ctx *v, const ir_node *n, const ir_node *k)
{
    size_t at = pos_to_offset(v, k->line, k->col), z = pos_to_offset(v, k->end_line, k->end_col);
    while (at > 0 && (v->src[at - 1] == ' ' || v->src[at - 1] == '\t')) at--;
    while (z < v->len && (v->src[z] == ' ' || v->src[z] == '\t')) z++;
    if (!(at > 0 && v->src[at - 1] == '(' && z < v->len && v->src[z] == ')')) return 0;
    if (n->kind == IR_CALL && n->kid[0]) {
        size_t p = pos_to_offset(v, n->kid[0]->end_line, n->kid[0]->end_col);
        while (p < v->len && v->src[p] != '(') p++;
        return p != at - 1;
    }
    return 1;
}

/* Where `*x` may stand: displays, call arguments, subscripts (PEP 646), and targets (checked
 * above); anywhere else CPython's parser or compiler refuses it. */
static void check_starred(vd_ctx *v, const ir_node *n, uint32_t i)
{
    const ir_node *k = n->kid[i];
    switch (n->kind) {
    case IR_TUPLE:
        /* `(*a)` lowers as a tuple of one; CPython wants its comma. */
        if (n->n == 1 && !memchr(v->src + pos_to_offset(v, k->end_line, k->end_col), ',',
                                 pos_to_offset(v, n->end_line, n->end_col) -
                                 pos_to_offset(v, k->end_line, k->end_col)))
            break;
        return;
    case IR_LIST: case IR_SET: case IR_DEL: return;
    case IR_CALL: if (i >= 1 && !grouped(v, n, k)) return; break;
    case IR_SUBSCRIPT: if (i >= 1) return; break;
    case IR_ASSIGN: if (i + 1 < n->n) return; break;
    case IR_FOR: case IR_COMPFOR: if (i == 0) return; break;
    case IR_WITHITEM: if (i == 1) return; break;
    case IR_LISTCOMP: case IR_SETCOMP: case IR_GENEXP:
        if (i == 0) {
            report(v, ST_PARSER, k->line, k->col, "iterable unpacking cannot be used in comprehension%s", "");
            return;
        }
        break;
    default: break;
    }
    if (grouped(v, n, k))
        report(v, ST_PARSER, k->line, k->col, "cannot use starred expression here%s", "");
    else
        report(v, ST_COMPILER, k->line, k->col, "can't use starred expression here%s", "");
}

static void check_targets(vd_ctx *v, const ir_node *n, int depth)
{
    uint32_t i;
    switch (n->kind) {
    case IR_ASSIGN: for (i = 0; i + 1 < n->n; i++) check_target(v, n->kid[i], 0, depth); break;
    case IR_FOR: case IR_COMPFOR: check_target(v, n->kid[0], 0, depth); break;
    case IR_WITHITEM: check_target(v, n->kid[1], 0, depth); break;
    case IR_DEL: for (i = 0; i < n->n; i++) check_target(v, n->kid[i], 1, depth); break;
    default: break;
    }
}

static cr_code walk(vd_ctx *v, ir_node *n, int depth)
{
    cr_code rc = CR_OK;
    const ir_node *outer = v->fstr;
    int spec_depth = v->spec_depth;
    if (!n) return CR_OK;
    if (depth > VD_MAX_DEPTH) return CR_ELIMIT;
    switch (n->kind) {
    case IR_NAME: case IR_KEYWORD: case IR_ATTR: case IR_PARAM: case IR_FUNCDEF:
        rc = nfkc(v, &n->text, &n->len);
        break;
    case IR_IMPORT: case IR_IMPORT_FROM:
        if ((rc = nfkc(v, &n->text, &n->len)) == CR_OK) rc = nfkc(v, &n->aux, NULL);
        break;
    case IR_NUM:
        check_number(v, n);
        break;
    case IR_FSTRING:
        if (!v->fstr) v->fstr = n;
        break;
    case IR_FORMAT:
        /* Found in source order: only the first costs the scan for its position. */
        if (!v->fstr || v->first[ST_PARSER].code != CR_OK) break;
        if (n->op == '}')
            fstring_error(v, "f-string: expecting '}'");
        else if (n->op && n->op != 'r' && n->op != 's' && n->op != 'a')
            fstring_error(v, "f-string: invalid conversion character: expected 's', 'r', or 'a'");
        else if (v->spec_depth >= 2)   /* a field in a spec in a spec */
            fstring_error(v, "f-string: expressions nested too deeply");
        break;
    case IR_GLOBAL:
        v->nglobal++;
        break;
    case IR_TRY:
        for (uint32_t i = 1; i + 3 < n->n; i++)
            if (!n->kid[i]->kid[0]) {
                report(v, ST_COMPILER, n->kid[i]->line, n->kid[i]->col,
                       "default 'except:' must be last%s", "");
                break;
            }
        break;
    default:
        break;
    }
    for (uint32_t i = 0; i < n->n && rc == CR_OK; i++) {
        /* A field's expression is parsed afresh, nested f-strings and all; its spec nests. */
        if (n->kind == IR_FORMAT) {
            v->fstr = i == 0 ? NULL : outer;
            v->spec_depth = i == 0 ? 0 : spec_depth + 1;
        }
        if (n->kid[i] && n->kid[i]->kind == IR_STARRED) check_starred(v, n, i);
        rc = walk(v, n->kid[i], depth + 1);
    }
    v->fstr = outer;
    v->spec_depth = spec_depth;
    if (rc != CR_OK) return rc;
    debug_binds(v, n, depth);
    check_targets(v, n, depth);
    if (n->kind == IR_PARAMS) rc = check_params(v, n);
    else if (n->kind == IR_CALL) rc = check_call(v, n);
    return rc;
}

/* ---- `global` after a use: CPython's symbol table, for the scopes the subset has ---------- */

typedef struct {
    parser_nameset param, use, local;
} scope;

static cr_code scope_walk(vd_ctx *v, scope *s, const ir_node *n, int depth);

static cr_code scope_bind(vd_ctx *v, scope *s, const ir_node *t, int depth)
{
    cr_code rc = CR_OK;
    if (!t) return CR_OK;
    if (depth > VD_MAX_DEPTH) return CR_ELIMIT;
    switch (t->kind) {
    case IR_NAME: return parser_nameset_add(&s->local, t->text);
    case IR_TUPLE: case IR_LIST: case IR_STARRED:
        for (uint32_t i = 0; i < t->n && rc == CR_OK; i++) rc = scope_bind(v, s, t->kid[i], depth + 1);
        return rc;
    default:
        return scope_walk(v, s, t, depth + 1);   /* a subscript or attribute reads its parts */
    }
}

static void scope_free(scope *s)
{
    parser_nameset_free(&s->param);
    parser_nameset_free(&s->use);
    parser_nameset_free(&s->local);
}

/* A function or lambda: defaults are read where it is defined, the rest in a scope of its own. */
static cr_code scope_function(vd_ctx *v, scope *s, const ir_node *params, const ir_node *body,
                              int depth)
{
    scope inner = { 0 };
    cr_code rc = CR_OK;
    for (uint32_t i = 0; params && i < params->n && rc == CR_OK; i++)
        if (params->kid[i] && params->kid[i]->kind == IR_PARAM)
            rc = scope_walk(v, s, params->kid[i]->kid[0], depth + 1);
    for (uint32_t i = 0; params && i < params->n && rc == CR_OK; i++)
        if (params->kid[i] && params->kid[i]->kind == IR_PARAM)
            rc = parser_nameset_add(&inner.param, params->kid[i]->text);
    if (rc == CR_OK) rc = scope_walk(v, &inner, body, depth + 1);
    scope_free(&inner);
    return rc;
}

static cr_code scope_walk(vd_ctx *v, scope *s, const ir_node *n, int depth)
{
    cr_code rc = CR_OK;
    uint32_t from = 0;
    if (!n) return CR_OK;
    if (depth > VD_MAX_DEPTH) return CR_ELIMIT;
    switch (n->kind) {
    case IR_NAME: return parser_nameset_add(&s->use, n->text);
    case IR_UNSUPPORTED: case IR_IMPORT: case IR_IMPORT_FROM:
        return CR_OK;   /* an import binds without counting; the rest goes to the sandbox */
    case IR_ASSIGN:
        for (; from + 1 < n->n && rc == CR_OK; from++) rc = scope_bind(v, s, n->kid[from], depth);
        break;
    case IR_AUGASSIGN: case IR_FOR:
        rc = scope_bind(v, s, n->kid[0], depth);
        from = 1;
        break;
    case IR_EXCEPT: case IR_WITHITEM:
        if ((rc = scope_walk(v, s, n->kid[0], depth + 1)) == CR_OK)
            rc = scope_bind(v, s, n->kid[1], depth);
        from = 2;
        break;
    case IR_DEL:
        for (; from < n->n && rc == CR_OK; from++) rc = scope_bind(v, s, n->kid[from], depth);
        break;
    case IR_FUNCDEF:
        if ((rc = scope_function(v, s, n->kid[0], n->kid[1], depth)) == CR_OK)
            rc = parser_nameset_add(&s->local, n->text);
        return rc;
    case IR_LAMBDA:
        return scope_function(v, s, n->kid[0], n->kid[1], depth);
    case IR_LISTCOMP: case IR_SETCOMP: case IR_GENEXP: case IR_DICTCOMP: {
        /* Only the first iterable is read in this scope. */
        const ir_node *c = n->kid[n->kind == IR_DICTCOMP ? 2 : 1];
        return c && c->n > 1 ? scope_walk(v, s, c->kid[1], depth + 1) : CR_OK;
    }
    case IR_KEYWORD: case IR_ATTR:
        return scope_walk(v, s, n->kid[0], depth + 1);
    case IR_GLOBAL:
        for (uint32_t i = 0; i < n->n; i++) {
            const char *name = n->kid[i] ? n->kid[i]->text : NULL;
            const char *msg = parser_nameset_has(&s->param, name) ? "name '%s' is parameter and global"
                : parser_nameset_has(&s->use, name) ? "name '%s' is used prior to global declaration"
                : parser_nameset_has(&s->local, name) ? "name '%s' is assigned to before global declaration"
                : NULL;
            if (msg) {
                report(v, ST_SYMTABLE, n->line, n->col, msg, name);
                break;
            }
        }
        return CR_OK;
    default:
        break;
    }
    for (uint32_t i = from; i < n->n && rc == CR_OK; i++) rc = scope_walk(v, s, n->kid[i], depth + 1);
    return rc;
}

cr_code parser_validate(ir_module *m, const char *src, size_t len, cr_error *err)
{
    vd_ctx v = { .m = m, .src = src, .len = len, .lines = { .src = src, .len = len } };
    cr_code rc = walk(&v, m->root, 0);
    if (rc == CR_OK && v.nglobal && !v.first[ST_PARSER].code) {
        scope top = { 0 };
        rc = scope_walk(&v, &top, m->root, 0);
        scope_free(&top);
    }
    free(v.lines.start);
    if (rc == CR_OK && v.nomem) rc = CR_ENOMEM;
    if (rc == CR_ELIMIT) return cr_error_set(err, rc, 0, 0, "IR deeper than %d", VD_MAX_DEPTH);
    if (rc != CR_OK) return cr_error_set(err, rc, 0, 0, "out of memory in the syntax checks");
    for (int st = 0; st < ST_COUNT; st++)
        if (v.first[st].code != CR_OK) {
            if (err) *err = v.first[st];
            return CR_ESYNTAX;
        }
    return CR_OK;
}

/* ---- PEP 263 ------------------------------------------------------------------------------ */

/* CPython's get_normal_name(): "utf-8" for UTF-8 under any case or `_`, with any `-suffix`;
 * "iso-8859-1" for the latin-1 spellings; else the name as written. */
static void normal_name(const char *s, size_t n, char *out, size_t cap)
{
    char low[13];
    size_t k;
    for (k = 0; k < n && k < 12; k++) {
        char c = s[k];
        low[k] = c == '_' ? '-' : (c >= 'A' && c <= 'Z') ? (char)(c | 0x20) : c;
    }
    low[k] = '\0';
    if (strcmp(low, "utf-8") == 0 || strncmp(low, "utf-8-", 6) == 0) snprintf(out, cap, "utf-8");
    else if (strcmp(low, "latin-1") == 0 || strcmp(low, "iso-8859-1") == 0 ||
             strcmp(low, "iso-latin-1") == 0 || strncmp(low, "latin-1-", 8) == 0 ||
             strncmp(low, "iso-8859-1-", 11) == 0 || strncmp(low, "iso-latin-1-", 12) == 0)
        snprintf(out, cap, "iso-8859-1");
    else snprintf(out, cap, "%.*s", (int)n, s);
}

/* Python's own names for its UTF-8 codec, which decodes exactly as the tokenizer's default
 * (codecs.lookup() lowercases and reads `-` as `_`). */
static int utf8_alias(const char *name)
{
    static const char *const aliases[] = { "utf8", "u8", "utf", "utf8-ucs2", "utf8-ucs4",
                                           "cp65001", NULL };
    char low[16];
    size_t k;
    for (k = 0; name[k] && k + 1 < sizeof low; k++)
        low[k] = name[k] == '_' ? '-' : (name[k] >= 'A' && name[k] <= 'Z') ? (char)(name[k] | 0x20) : name[k];
    if (name[k]) return 0;
    low[k] = '\0';
    for (const char *const *a = aliases; *a; a++)
        if (strcmp(low, *a) == 0) return 1;
    return 0;
}

/* The coding spec of the line s[0..n) (its newline included) as CPython's tokenizer finds it:
 * the line is a comment, and holds "coding" then `:` or `=`, blanks, and [-\w.]+. */
static int coding_spec(const char *s, size_t n, size_t *at, size_t *name, size_t *name_len)
{
    size_t i;
    for (i = 0; i + 6 < n; i++) {
        if (s[i] == '#') break;
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\f') return 0;
    }
    *at = i;
    for (; i + 6 < n; i++) {
        if (memcmp(s + i, "coding", 6) != 0) continue;
        size_t t = i + 6;
        if (s[t] != ':' && s[t] != '=') continue;
        do t++; while (t < n && (s[t] == ' ' || s[t] == '\t'));
        size_t b = t;
        while (t < n && ((s[t] >= '0' && s[t] <= '9') || ((s[t] | 0x20) >= 'a' && (s[t] | 0x20) <= 'z') ||
                         s[t] == '-' || s[t] == '_' || s[t] == '.'))
            t++;
        if (t > b) {
            *name = b;
            *name_len = t - b;
            return 1;
        }
    }
    return 0;
}

/* Whether line s[0..n) holds nothing but blanks and perhaps a comment: only then does
 * CPython look for a cookie on the next line. */
static int blank_or_comment(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '#' || s[i] == '\n' || s[i] == '\r') return 1;
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\f') return 0;
    }
    return 1;
}

int parser_coding(const char *src, size_t len, parser_cookie *ck, cr_error *err)
{
    int bom = len >= 3 && memcmp(src, "\xef\xbb\xbf", 3) == 0;
    size_t start = bom ? 3 : 0;
    memset(ck, 0, sizeof *ck);
    for (int line = 1; line <= 2 && start < len; line++) {
        const char *s = src + start, *nl = memchr(s, '\n', len - start);
        size_t n = nl ? (size_t)(nl - s) + 1 : len - start, at, b, bl;
        if (coding_spec(s, n, &at, &b, &bl)) {
            normal_name(s + b, bl, ck->name, sizeof ck->name);
            if (bom && strcmp(ck->name, "utf-8") != 0) {
                cr_error_set(err, CR_ESYNTAX, line, 1, "encoding problem: %s with BOM", ck->name);
                return -1;
            }
            if (strcmp(ck->name, "utf-8") == 0 || utf8_alias(ck->name)) return 0;
            ck->line = line;
            ck->col = (int)(at + 1 + (line == 1 ? start : 0));
            ck->text = s + at;
            ck->text_len = n - at - (nl != NULL);
            return 1;
        }
        if (!blank_or_comment(s, n)) break;
        start += n;
    }
    return 0;
}
