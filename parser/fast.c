/* parser/fast.c: the fast path of the Python front end.
 *
 * tree-sitter's parse costs more than evaluating a typical program, so the common subset of
 * LLM-written Python (functions, assignments, arithmetic, calls, f-strings, if/for/while,
 * lists, dicts, tuples, subscripts, imports) is read here by a hand-written tokenizer and a
 * recursive-descent parser that build the IR directly: exactly the IR parser_lower() builds
 * from tree-sitter's CST for the same source, positions included. That means reproducing
 * tree-sitter's node extents, not CPython's: a binary operation spans its operands'
 * parentheses, a block ends at its last statement or at the last comment the grammar's
 * scanner files into it, the module spans from its first token or comment to the end of
 * the input, and so on.
 *
 * Anything else declines (longjmp to parser_fast()), and the caller runs tree-sitter, which
 * also produces every error and every `node:` reason: a syntax error, a keyword outside the
 * subset, tabs or form feeds in indentation, backslash continuations, a `;`, a same-line
 * suite, unusual string prefixes or escapes, f-string debug fields, walrus, lambda,
 * annotations, nesting near the depth limit. Declining is always safe; accepting is only
 * right when tree-sitter + lowering would give CR_OK and the identical IR
 * (tests/test_fastpath.c and fuzz/fuzz_fastpath.c check that). CPython's checks after its
 * grammar (repeated or misordered parameters and arguments, ...) are not declined here:
 * parser_validate() runs them on the IR of either path. */
#include <setjmp.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "ir/build.h"
#include "parser/parser_int.h"

/* ---- tokens ----------------------------------------------------------------------------- */

enum {
    K_END, K_NEWLINE, K_INDENT, K_DEDENT, K_NAME, K_NUM, K_STR, K_OP, K_KW,
    K_FBEGIN,   /* an f-string: its whole extent; parts follow up to K_FEND */
    K_FLIT,     /* literal text of an f-string, [a, b) still to decode */
    K_FIELD,    /* `{`: extent up to its `}`; expression tokens, then K_CONV, K_SPEC, K_FIELD_END */
    K_CONV,     /* `!r`: op is the letter */
    K_SPEC,     /* `:`: extent up to the `}`; K_SPECLIT and nested K_FIELD parts follow */
    K_SPECLIT,  /* raw spec text [a, b) */
    K_FIELD_END,
    K_FEND,
};

enum {
    O_NONE, O_LPAR, O_RPAR, O_LSQB, O_RSQB, O_LBRACE, O_RBRACE, O_COMMA, O_COLON, O_DOT,
    O_SEMI, O_ASSIGN, O_ARROW, O_ELLIPSIS, O_WALRUS, O_BANG, O_TILDE,
    /* The operators carry their IR operator (ir/ops.def's order): */
    O_BIN,                      /* O_BIN + ir_binop: `+` ... `^` */
    O_CMP = O_BIN + IR_AND,     /* O_CMP + ir_cmpop: `<` ... `>=` (`in`, `is` are keywords) */
    O_AUG = O_CMP + IR_IN,      /* O_AUG + ir_binop: `+=` ... `^=` */
};

_Static_assert(IR_AND == IR_BITXOR + 1 && IR_IN == IR_GE + 1, "ir/ops.def's order");

/* The operators the grammar also reads as something else: signs, `*args`, `**kw`. */
enum { O_PLUS = O_BIN + IR_ADD, O_MINUS = O_BIN + IR_SUB, O_STAR = O_BIN + IR_MUL,
       O_DSTAR = O_BIN + IR_POW };

enum {
    KW_NONE_, KW_FALSE, KW_NONE, KW_TRUE, KW_AND, KW_AS, KW_BREAK, KW_CONTINUE, KW_DEF,
    KW_ELIF, KW_ELSE, KW_FOR, KW_FROM, KW_IF, KW_IMPORT, KW_IN, KW_IS, KW_NOT, KW_OR, KW_PASS,
    KW_RETURN, KW_WHILE, KW_LAMBDA, KW_RAISE, KW_ASSERT, KW_TRY, KW_EXCEPT, KW_FINALLY,
};

/* The keyword spelled w[0..n): KW_*, 0 for a plain name, -1 (with *why) for a keyword
 * outside the subset or a name the grammar treats specially (soft keywords, Python 2
 * statements), declined wherever it appears. `print` is KW_PRINT. */
enum { KW_PRINT = 100 };

static int keyword(const char *w, uint32_t n, const char **why)
{
#define KW(str, id) if (n == sizeof(str) - 1 && memcmp(w, str, n) == 0) return id
#define NO(str) if (n == sizeof(str) - 1 && memcmp(w, str, n) == 0) { *why = str; return -1; }
    switch (w[0]) {
    case 'F': KW("False", KW_FALSE); break;
    case 'N': KW("None", KW_NONE); break;
    case 'T': KW("True", KW_TRUE); break;
    case 'a': KW("and", KW_AND); KW("as", KW_AS); KW("assert", KW_ASSERT); NO("async"); NO("await"); break;
    case 'b': KW("break", KW_BREAK); break;
    case 'c': KW("continue", KW_CONTINUE); NO("class"); NO("case"); break;
    case 'd': KW("def", KW_DEF); NO("del"); break;
    case 'e': KW("elif", KW_ELIF); KW("else", KW_ELSE); KW("except", KW_EXCEPT); NO("exec"); break;
    case 'f': KW("for", KW_FOR); KW("from", KW_FROM); KW("finally", KW_FINALLY); break;
    case 'g': NO("global"); break;
    case 'i': KW("if", KW_IF); KW("import", KW_IMPORT); KW("in", KW_IN); KW("is", KW_IS); break;
    case 'l': KW("lambda", KW_LAMBDA); break;
    case 'm': NO("match"); break;
    case 'n': KW("not", KW_NOT); NO("nonlocal"); break;
    case 'o': KW("or", KW_OR); break;
    case 'p': KW("pass", KW_PASS); KW("print", KW_PRINT); break;
    case 'r': KW("return", KW_RETURN); KW("raise", KW_RAISE); break;
    case 't': KW("try", KW_TRY); NO("type"); break;
    case 'w': KW("while", KW_WHILE); NO("with"); break;
    case 'y': NO("yield"); break;
    case '_': NO("__debug__"); NO("__peg_parser__"); break;
    default: break;
    }
    return 0;
#undef KW
#undef NO
}

/* The operator at s[0..avail): O_* and its length in *len, or O_NONE. */
static int operator_at(const char *s, uint32_t avail, uint32_t *len)
{
    char c = s[0], d = avail > 1 ? s[1] : 0, e = avail > 2 ? s[2] : 0;
    *len = 1;
    switch (c) {
    case '(': return O_LPAR;
    case ')': return O_RPAR;
    case '[': return O_LSQB;
    case ']': return O_RSQB;
    case '{': return O_LBRACE;
    case '}': return O_RBRACE;
    case ',': return O_COMMA;
    case ';': return O_SEMI;
    case '~': return O_TILDE;
    case ':': if (d == '=') { *len = 2; return O_WALRUS; } return O_COLON;
    case '.': if (d == '.' && e == '.') { *len = 3; return O_ELLIPSIS; } return O_DOT;
    case '=': if (d == '=') { *len = 2; return O_CMP + IR_EQ; } return O_ASSIGN;
    case '!': if (d == '=') { *len = 2; return O_CMP + IR_NE; } return O_BANG;
    case '-':
        if (d == '>') { *len = 2; return O_ARROW; }
        if (d == '=') { *len = 2; return O_AUG + IR_SUB; }
        return O_MINUS;
    case '+': if (d == '=') { *len = 2; return O_AUG + IR_ADD; } return O_PLUS;
    case '%': if (d == '=') { *len = 2; return O_AUG + IR_MOD; } return O_BIN + IR_MOD;
    case '@': if (d == '=') { *len = 2; return O_AUG + IR_MATMUL; } return O_BIN + IR_MATMUL;
    case '&': if (d == '=') { *len = 2; return O_AUG + IR_BITAND; } return O_BIN + IR_BITAND;
    case '|': if (d == '=') { *len = 2; return O_AUG + IR_BITOR; } return O_BIN + IR_BITOR;
    case '^': if (d == '=') { *len = 2; return O_AUG + IR_BITXOR; } return O_BIN + IR_BITXOR;
    case '*':
        if (d == '*') { *len = e == '=' ? 3 : 2; return e == '=' ? O_AUG + IR_POW : O_DSTAR; }
        if (d == '=') { *len = 2; return O_AUG + IR_MUL; }
        return O_STAR;
    case '/':
        if (d == '/') { *len = e == '=' ? 3 : 2; return (e == '=' ? O_AUG : O_BIN) + IR_FLOORDIV; }
        if (d == '=') { *len = 2; return O_AUG + IR_DIV; }
        return O_BIN + IR_DIV;
    case '<':
        if (d == '<') { *len = e == '=' ? 3 : 2; return (e == '=' ? O_AUG : O_BIN) + IR_LSHIFT; }
        if (d == '=') { *len = 2; return O_CMP + IR_LE; }
        if (d == '>') { *len = 2; return O_CMP + IR_NE; }   /* `<>`: declined by the parser below */
        return O_CMP + IR_LT;
    case '>':
        if (d == '>') { *len = e == '=' ? 3 : 2; return (e == '=' ? O_AUG : O_BIN) + IR_RSHIFT; }
        if (d == '=') { *len = 2; return O_CMP + IR_GE; }
        return O_CMP + IR_GT;
    default: return O_NONE;
    }
}

enum { TF_FLOAT = 1, TF_RAW = 2 };

typedef struct {
    uint8_t kind, op, flags;
    uint32_t a, b;          /* bytes of the token; of a string's content */
    int sl, sc, el, ec;     /* 1-based start, exclusive end. K_DEDENT: el != 0 when the
                             * closed block ends at a comment filed into it */
} ftok;

#define FAST_MAX_INDENTS 64
#define FAST_MAX_COMMENTS 256
#define FAST_MAX_TOKENS 65536u
#define FAST_KEEP_TOKENS 8192u

typedef struct {
    int width, el, ec;
} comment;

typedef struct {
    const char *s;
    uint32_t len;
    const cr_limits *lim;
    ir_module *m;
    parser_scratch *sc;
    ftok *t;
    size_t nt, capt, i;
    ir_node **stk;
    size_t nstk, capstk;
    /* tokenizer */
    uint32_t pos, ls;       /* offset, start of its line */
    int line;
    int paren;
    /* Open brackets, f-string fields included, and the bracket bytes of strings inside
     * fields (parse.c's pre-scan counts those until the f-string ends): past nest_max the
     * pre-scan would refuse the source, so the fast path declines and leaves it to that. */
    int nest, nest_max, fextra;
    int ind[FAST_MAX_INDENTS];
    int nind;
    int tc_el, tc_ec;       /* a comment after the code of the logical line just ended */
    int first_l, first_c;   /* the first token or comment */
    /* parser */
    int in_func, in_loop, sdepth, rdepth;
    int after_semi;         /* the statement follows a `;` */
    const ir_node *bare_single; /* the last `x,` tuple written without parentheses */
    /* `*x` in displays, and those of them in targets: tree-sitter-python takes them only
     * in targets (`a, *b = c`), not in values (`x = a, *b`), which CPython accepts. */
    size_t nstar, nstar_target;
    cr_buf sbuf;
    const ir_node *parened[32];    /* nodes written in parentheses: `(x) = 1` */
    size_t nparened;
    const char *why;
    cr_code rc;
    jmp_buf jb;
    comment com[FAST_MAX_COMMENTS];   /* the comment lines before the next line of code */
} fast_ctx;

static _Noreturn void decline(fast_ctx *p, const char *why)
{
    p->why = why;
    longjmp(p->jb, 1);
}

/* ---- tokenizer -------------------------------------------------------------------------- */

static ftok *emit(fast_ctx *p, int kind, uint32_t a)
{
    if (p->nt == p->capt) {
        size_t cap = p->capt ? p->capt * 2 : 512;
        if (cap > FAST_MAX_TOKENS) decline(p, "too many tokens");
        ftok *n = realloc(p->t, cap * sizeof *n);
        if (!n) decline(p, "memory");
        p->t = n;
        p->capt = cap;
    }
    ftok *t = &p->t[p->nt++];
    *t = (ftok){ .kind = (uint8_t)kind, .a = a, .sl = p->line, .sc = (int)(a - p->ls) + 1 };
    if (!p->first_l && kind != K_NEWLINE && kind != K_INDENT && kind != K_DEDENT) {
        p->first_l = t->sl;
        p->first_c = t->sc;
    }
    return t;
}

/* Closes the token emitted at index k: it ends at p->pos. */
static void close_tok(fast_ctx *p, size_t k)
{
    ftok *t = &p->t[k];
    t->b = p->pos;
    t->el = p->line;
    t->ec = (int)(p->pos - p->ls) + 1;
}

static void newline(fast_ctx *p)
{
    p->pos++;
    p->line++;
    p->ls = p->pos;
}

static int is_id_start(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static int is_digit(unsigned char c) { return c >= '0' && c <= '9'; }

/* Digits with single underscores between them; returns how many digits. */
static int digits(fast_ctx *p)
{
    int n = 0;
    while (p->pos < p->len && is_digit((unsigned char)p->s[p->pos])) {
        p->pos++;
        n++;
        if (p->pos + 1 < p->len && p->s[p->pos] == '_' && is_digit((unsigned char)p->s[p->pos + 1]))
            p->pos++;
    }
    return n;
}

static void lex_number(fast_ctx *p)
{
    uint32_t a = p->pos;
    size_t k = p->nt;
    int is_float = 0;
    emit(p, K_NUM, a);
    if (p->s[a] != '.') digits(p);
    if (p->pos < p->len && p->s[p->pos] == '.') {
        p->pos++;
        is_float = 1;
        if (!digits(p) && p->pos == a + 1) decline(p, "number");
    }
    if (p->pos < p->len && (p->s[p->pos] | 0x20) == 'e') {
        p->pos++;
        if (p->pos < p->len && (p->s[p->pos] == '+' || p->s[p->pos] == '-')) p->pos++;
        if (!digits(p)) decline(p, "number");
        is_float = 1;
    }
    /* 1j, 1L, 0x1F, 1_, 1.2.3, 1if: left to tree-sitter and lowering. */
    if (p->pos < p->len &&
        (parser_ascii_word((unsigned char)p->s[p->pos]) || p->s[p->pos] == '.' ||
         (unsigned char)p->s[p->pos] >= 0x80))
        decline(p, "number suffix");
    /* Leading zeros: CPython refuses 01, accepts 000 (`300,000` is a tuple) and 0.5. */
    if (!is_float && ir_int_leading_zeros(p->s + a, p->pos - a)) decline(p, "leading zero");
    if (is_float && p->s[a] == '0' && p->pos > a + 1 && is_digit((unsigned char)p->s[a + 1]))
        decline(p, "leading zero");
    close_tok(p, k);
    if (is_float) p->t[k].flags = TF_FLOAT;
}

static void lex_token(fast_ctx *p, int *depth, char outer_q);

static void open_nest(fast_ctx *p)
{
    if (++p->nest + p->fextra > p->nest_max) decline(p, "nesting");
}

/* A string body from p->pos (the opening quote) whose prefix starts at `a`. */
static void lex_string(fast_ctx *p, uint32_t a, int raw, int fmt, char outer_q);

/* A replacement field at p->pos (`{`) of an f-string quoted by q; `level` 1 inside a spec. */
static void lex_field(fast_ctx *p, char q, int level)
{
    size_t k = p->nt;
    int depth = 0;
    emit(p, K_FIELD, p->pos);
    open_nest(p);
    p->pos++;
    size_t first = p->nt;
    for (;;) {
        if (p->pos >= p->len) decline(p, "f-string");
        char c = p->s[p->pos];
        if (c == ' ') { p->pos++; continue; }
        if (c == '\n' || c == '#' || c == '\\' || c == '\t' || c == '\r') decline(p, "f-string field");
        if (depth == 0) {
            if (c == '}' || c == ':') break;
            if (c == '!' && p->pos + 1 < p->len && p->s[p->pos + 1] != '=') break;
            if (c == '=' && p->pos + 1 < p->len && p->s[p->pos + 1] != '=') decline(p, "f-string =");
        }
        lex_token(p, &depth, q);
    }
    if (p->nt == first) decline(p, "f-string empty field");
    if (p->s[p->pos] == '!') {
        char conv = p->pos + 1 < p->len ? p->s[p->pos + 1] : 0;
        if (conv != 'r' && conv != 's' && conv != 'a') decline(p, "f-string conversion");
        ftok *t = emit(p, K_CONV, p->pos);
        t->op = (uint8_t)conv;
        p->pos += 2;
        if (p->pos >= p->len || (p->s[p->pos] != ':' && p->s[p->pos] != '}'))
            decline(p, "f-string conversion");
    }
    if (p->s[p->pos] == ':') {
        size_t ks = p->nt;
        emit(p, K_SPEC, p->pos);
        uint32_t lit = ++p->pos;
        /* `{e:=10}`: the grammar reads `:=` as a walrus (CPython: the spec "=10") */
        if (p->pos < p->len && p->s[p->pos] == '=') decline(p, "f-string spec `=`");
        for (;;) {
            if (p->pos >= p->len) decline(p, "f-string");
            char c = p->s[p->pos];
            if (c == '{' || c == '}') {
                if (p->pos > lit) {
                    ftok *t = emit(p, K_SPECLIT, lit);
                    t->b = p->pos;
                }
                if (c == '}') break;
                if (level > 0 || (p->pos + 1 < p->len && p->s[p->pos + 1] == '{'))
                    decline(p, "f-string nested spec");
                lex_field(p, q, 1);
                lit = p->pos;
                continue;
            }
            if (c == '\\' || c == '\n' || c == q || c == '\r') decline(p, "f-string spec");
            p->pos++;
        }
        close_tok(p, ks);
    }
    if (p->pos >= p->len || p->s[p->pos] != '}') decline(p, "f-string");
    p->pos++;
    p->nest--;
    emit(p, K_FIELD_END, p->pos);
    close_tok(p, k);
}

static void lex_string(fast_ctx *p, uint32_t a, int raw, int fmt, char outer_q)
{
    char q = p->s[p->pos];
    int triple = p->pos + 2 < p->len && p->s[p->pos + 1] == q && p->s[p->pos + 2] == q;
    if (outer_q && (q == outer_q || fmt || triple)) decline(p, "string in f-string");
    size_t k = p->nt;
    ftok *t = emit(p, fmt ? K_FBEGIN : K_STR, a);
    t->flags = raw ? TF_RAW : 0;
    p->pos += triple ? 3 : 1;
    uint32_t lit = p->pos;
    t->a = lit;
    for (;;) {
        if (p->pos >= p->len) decline(p, "unterminated string");
        char c = p->s[p->pos];
        if (c == '\\') {
            if (outer_q) decline(p, "backslash in f-string field");
            p->pos++;
            if (p->pos >= p->len) decline(p, "unterminated string");
            c = p->s[p->pos];
            if (c == '\r') decline(p, "carriage return");
            if (fmt && (c == '{' || c == '}' || c == 'N')) decline(p, "f-string escape");
            if (c == '\n') newline(p);
            else p->pos++;
            continue;
        }
        if (c == '\n') {
            if (!triple) decline(p, "unterminated string");
            newline(p);
            continue;
        }
        if (c == '\r') decline(p, "carriage return");
        if (c == q && (!triple || (p->pos + 2 < p->len && p->s[p->pos + 1] == q &&
                                   p->s[p->pos + 2] == q)))
            break;
        if (fmt && c == '{') {
            if (p->pos + 1 < p->len && p->s[p->pos + 1] == '{') { p->pos += 2; continue; }
            if (p->pos > lit) {
                ftok *l = emit(p, K_FLIT, lit);
                l->b = p->pos;
                l->flags = raw ? TF_RAW : 0;
            }
            lex_field(p, q, 0);
            lit = p->pos;
            continue;
        }
        if (fmt && c == '}') {
            if (p->pos + 1 < p->len && p->s[p->pos + 1] == '}') { p->pos += 2; continue; }
            decline(p, "single '}' in f-string");
        }
        if (outer_q && (c == '(' || c == '[' || c == '{')) {
            p->fextra++;
            open_nest(p);
            p->nest--;
        }
        p->pos++;
    }
    if (fmt) {
        if (p->pos > lit) {
            ftok *l = emit(p, K_FLIT, lit);
            l->b = p->pos;
            l->flags = raw ? TF_RAW : 0;
        }
        p->fextra = 0;             /* an f-string is never inside another here */
        size_t e = p->nt;
        emit(p, K_FEND, p->pos);
        p->pos += triple ? 3 : 1;
        close_tok(p, e);            /* K_FEND ends where the string does */
        close_tok(p, k);
        return;
    }
    uint32_t content_end = p->pos;
    p->pos += triple ? 3 : 1;
    close_tok(p, k);
    p->t[k].b = content_end;
}

static void lex_name(fast_ctx *p, char outer_q)
{
    uint32_t a = p->pos, e = a;
    while (e < p->len && parser_ascii_word((unsigned char)p->s[e])) e++;
    p->pos = e;
    if (p->pos < p->len && (unsigned char)p->s[p->pos] >= 0x80) decline(p, "non-ASCII name");
    uint32_t n = p->pos - a;
    const char *w = p->s + a;
    if (p->pos < p->len && (p->s[p->pos] == '"' || p->s[p->pos] == '\'')) {
        int raw = 0, fmt = 0;
        for (uint32_t k = 0; k < n; k++) {
            char c = (char)(w[k] | 0x20);
            if (c == 'r' && !raw) raw = 1;
            else if (c == 'f' && !fmt) fmt = 1;
            else decline(p, "string prefix");
        }
        lex_string(p, a, raw, fmt, outer_q);
        return;
    }
    const char *why = NULL;
    int kw = keyword(w, n, &why);
    if (kw < 0) decline(p, why);
    if (kw == KW_PRINT) {
        /* tree-sitter also knows Python 2's print statement: only print(...) is taken. */
        uint32_t j = p->pos;
        while (j < p->len && p->s[j] == ' ') j++;
        if (j >= p->len || p->s[j] != '(') decline(p, "print statement");
    } else if (kw) {
        size_t i = p->nt;
        emit(p, K_KW, a)->op = (uint8_t)kw;
        close_tok(p, i);
        return;
    }
    size_t i = p->nt;
    emit(p, K_NAME, a);
    close_tok(p, i);
}

/* One token at p->pos (not blank, not a newline, not a comment). `depth` counts the brackets
 * of the line or of the f-string field; `outer_q` is the quote of the enclosing f-string. */
static void lex_token(fast_ctx *p, int *depth, char outer_q)
{
    unsigned char c = (unsigned char)p->s[p->pos];
    if (is_id_start(c)) { lex_name(p, outer_q); return; }
    if (c >= 0x80) decline(p, "non-ASCII name");
    if (is_digit(c) || (c == '.' && p->pos + 1 < p->len && is_digit((unsigned char)p->s[p->pos + 1]))) {
        lex_number(p);
        return;
    }
    if (c == '"' || c == '\'') { lex_string(p, p->pos, 0, 0, outer_q); return; }
    uint32_t n;
    int op = operator_at(p->s + p->pos, p->len - p->pos, &n);
    if (op != O_NONE) {
        if (op == O_CMP + IR_NE && p->s[p->pos] == '<') decline(p, "<>");
        if (op == O_LPAR || op == O_LSQB || op == O_LBRACE) {
            (*depth)++;
            open_nest(p);
        } else if (op == O_RPAR || op == O_RSQB || op == O_RBRACE) {
            if (*depth == 0) decline(p, "unmatched bracket");
            (*depth)--;
            p->nest--;
        }
        size_t i = p->nt;
        emit(p, K_OP, p->pos)->op = (uint8_t)op;
        p->pos += n;
        close_tok(p, i);
        return;
    }
    decline(p, "character");
}

/* Steps over a comment to the end of its line (a source with a CR was declined whole). */
static void skip_comment(fast_ctx *p)
{
    const char *nl = memchr(p->s + p->pos, '\n', p->len - p->pos);
    p->pos = nl ? (uint32_t)(nl - p->s) : p->len;
}

/* At the start of a line outside brackets: skips blank and comment lines, then emits the
 * INDENT or DEDENTs of the next line of code, or the end. A DEDENT records where its block
 * ends when tree-sitter-python's scanner files a comment into it: the comment on the block's
 * last line of code, and each following comment line while the comment before it is
 * indented at least as deep as the block (the scanner closes a block only when the next
 * line of code and the next comment are both indented less than it). */
static int line_start(fast_ctx *p)
{
    int ncom = 0, width, eof = 0;
    for (;;) {
        width = 0;
        while (p->pos < p->len && p->s[p->pos] == ' ') { p->pos++; width++; }
        if (p->pos >= p->len) { eof = 1; width = 0; break; }
        char c = p->s[p->pos];
        if (c == '\n') { newline(p); continue; }
        if (c == '#') {
            if (ncom == FAST_MAX_COMMENTS) decline(p, "comments");
            if (!p->first_l) { p->first_l = p->line; p->first_c = (int)(p->pos - p->ls) + 1; }
            skip_comment(p);
            p->com[ncom++] = (comment){ width, p->line, (int)(p->pos - p->ls) + 1 };
            continue;
        }
        if (c == '\t' || c == '\f' || c == '\r' || c == '\v' || c == '\\')
            decline(p, "indentation");
        break;
    }
    int top = p->ind[p->nind - 1];
    if (width > top) {
        if (p->nind == FAST_MAX_INDENTS) decline(p, "indentation depth");
        p->ind[p->nind++] = width;
        emit(p, K_INDENT, p->pos);
    } else if (width < top) {
        int ovl[FAST_MAX_INDENTS] = { 0 }, ovc[FAST_MAX_INDENTS] = { 0 };
        int t = p->nind - 1;
        if (p->tc_el) { ovl[t] = p->tc_el; ovc[t] = p->tc_ec; }
        for (int k = 0; k < ncom; k++) {
            while (t > 0 && p->ind[t] > width && p->com[k].width < p->ind[t]) t--;
            if (p->ind[t] > width) { ovl[t] = p->com[k].el; ovc[t] = p->com[k].ec; }
        }
        while (p->nind > 1 && p->ind[p->nind - 1] > width) {
            ftok *d = emit(p, K_DEDENT, p->pos);
            d->el = ovl[p->nind - 1];
            d->ec = ovc[p->nind - 1];
            p->nind--;
        }
        if (p->ind[p->nind - 1] != width) decline(p, "unindent");
    }
    p->tc_el = 0;
    if (eof) emit(p, K_END, p->pos);
    return eof;
}

/* A backslash continuation becomes a line_continuation node inside whatever node is open,
 * and lowering reads some nodes' first named child (`(`, `*`, `**`, an `if` clause), so one
 * there would be lowered in place of the expression. Taken only after tokens where the open
 * node's children are read by field or with extras skipped. */
static int operand_end(const ftok *t)
{
    switch (t->kind) {
    case K_NAME: case K_NUM: case K_STR: case K_FEND: return 1;
    case K_KW: return t->op == KW_TRUE || t->op == KW_FALSE || t->op == KW_NONE;
    case K_OP: return t->op == O_RPAR || t->op == O_RSQB || t->op == O_RBRACE;
    default: return 0;
    }
}

static int continuation_ok(fast_ctx *p)
{
    if (!p->nt) return 0;
    const ftok *t = &p->t[p->nt - 1];
    /* `*` and `**` after an operand multiply; elsewhere they unpack. */
    if (t->kind == K_OP && (t->op == O_STAR || t->op == O_DSTAR))
        return p->nt > 1 && operand_end(&p->t[p->nt - 2]);
    switch (t->kind) {
    case K_NAME: case K_NUM: case K_STR: case K_FEND: return 1;
    case K_KW:
        return t->op == KW_AND || t->op == KW_OR || t->op == KW_NOT || t->op == KW_IN ||
               t->op == KW_IS || t->op == KW_RETURN || t->op == KW_TRUE || t->op == KW_FALSE ||
               t->op == KW_NONE;
    case K_OP:
        switch (t->op) {
        case O_RPAR: case O_RSQB: case O_RBRACE: case O_PLUS: case O_MINUS:
        case O_BIN + IR_DIV: case O_BIN + IR_FLOORDIV: case O_BIN + IR_MOD: case O_ASSIGN:
        case O_COMMA: case O_CMP + IR_LT: case O_CMP + IR_LE: case O_CMP + IR_EQ:
        case O_CMP + IR_NE: case O_CMP + IR_GT: case O_CMP + IR_GE:
            return 1;
        default:
            return 0;
        }
    default:
        return 0;
    }
}

static void tokenize(fast_ctx *p)
{
    int have_code = 0;
    if (line_start(p)) return;
    for (;;) {
        if (p->pos >= p->len) {
            if (p->paren) decline(p, "unclosed bracket");
            if (have_code) emit(p, K_NEWLINE, p->pos);
            line_start(p);
            return;
        }
        char c = p->s[p->pos];
        if (c == ' ' || c == '\t') { p->pos++; continue; }
        if (c == '\\' && p->pos + 1 < p->len && p->s[p->pos + 1] == '\n') {
            if (!continuation_ok(p)) decline(p, "backslash continuation");
            p->pos++;
            goto continuation;
        }
        if (c == '\n') {
            if (p->paren) {
            continuation:
                /* tree-sitter's scanner closes blocks inside brackets too: a continuation
                 * line indented less than the block is an error there, not in CPython. */
                newline(p);
                uint32_t j = p->pos;
                while (j < p->len && p->s[j] == ' ') j++;
                if (j < p->len && p->s[j] != '\n' && (p->s[j] == '\t' || p->s[j] == '\f' ||
                    (int)(j - p->pos) < p->ind[p->nind - 1]))
                    decline(p, "continuation line indented less than its block");
                if (!p->paren && (j >= p->len || p->s[j] == '\n' || p->s[j] == '#'))
                    decline(p, "backslash before a blank line");
                continue;
            }
            emit(p, K_NEWLINE, p->pos);
            have_code = 0;
            newline(p);
            if (line_start(p)) return;
            continue;
        }
        if (c == '#') {
            skip_comment(p);
            if (!p->paren) { p->tc_el = p->line; p->tc_ec = (int)(p->pos - p->ls) + 1; }
            continue;
        }
        if ((unsigned char)c < 0x20 || c == 0x7f || c == '\\') decline(p, "control character");
        lex_token(p, &p->paren, 0);
        have_code = 1;
    }
}

/* ---- IR building ------------------------------------------------------------------------ */

/* A parsed expression: its node, the extent of its CST node (parentheses included), and a
 * bound on the depth lowering reaches inside it (lowering stops at lim->max_depth). */
typedef struct {
    ir_node *n;
    int sl, sc, el, ec;
    int dep;
} ex;

static ftok *cur(fast_ctx *p) { return &p->t[p->i]; }
static ftok *prev(fast_ctx *p) { return &p->t[p->i - 1]; }
static int at_op(fast_ctx *p, int op) { return cur(p)->kind == K_OP && cur(p)->op == op; }
static int at_kw(fast_ctx *p, int kw) { return cur(p)->kind == K_KW && cur(p)->op == kw; }

static void expect_op(fast_ctx *p, int op)
{
    if (!at_op(p, op)) decline(p, "syntax");
    p->i++;
}

static ir_node *got(fast_ctx *p, ir_node *x)
{
    if (!x) decline(p, "memory");
    return x;
}

static ir_node *mkn(fast_ctx *p, ir_kind kind, int sl, int sc, int el, int ec, uint32_t n)
{
    return got(p, ir_node_span(p->m, kind, (ir_span){ sl, sc, el, ec }, n));
}

static const char *dup(fast_ctx *p, const char *s, size_t n)
{
    const char *d = cr_arena_strndup(&p->m->arena, s, n);
    if (!d) decline(p, "memory");
    return d;
}

/* A node over the tokens from `a` to the last one read. */
static ir_node *mk_tok(fast_ctx *p, ir_kind kind, const ftok *a, uint32_t n)
{
    return mkn(p, kind, a->sl, a->sc, prev(p)->el, prev(p)->ec, n);
}

static ir_span span_ex(ex e) { return (ir_span){ e.sl, e.sc, e.el, e.ec }; }

static ex ex_of(ir_node *n, int dep)
{
    return (ex){ n, n->line, n->col, n->end_line, n->end_col, dep };
}

static void push(fast_ctx *p, ir_node *n)
{
    if (p->nstk == p->capstk) {
        size_t cap = p->capstk ? p->capstk * 2 : 256;
        ir_node **s = realloc(p->stk, cap * sizeof *s);
        if (!s) decline(p, "memory");
        p->stk = s;
        p->capstk = cap;
    }
    p->stk[p->nstk++] = n;
}

/* Moves the nodes pushed since `base` into n's kid[] (n made with that many). */
static ir_node *pop_into(fast_ctx *p, ir_node *n, size_t base)
{
    if (n->n) memcpy(n->kid, p->stk + base, n->n * sizeof *n->kid);
    p->nstk = base;
    return n;
}

static ir_node *pop_node(fast_ctx *p, ir_kind kind, int sl, int sc, int el, int ec, size_t base)
{
    return pop_into(p, mkn(p, kind, sl, sc, el, ec, (uint32_t)(p->nstk - base)), base);
}

static int max_i(int a, int b) { return a > b ? a : b; }

static void enter(fast_ctx *p)
{
    if (++p->rdepth > (int)p->lim->max_depth / 2) decline(p, "depth");
}

static ex parse_test(fast_ctx *p);
static ex parse_or(fast_ctx *p);
static ex parse_binary(fast_ctx *p, int minprec);
static ex parse_factor(fast_ctx *p);

static int starts_expr(fast_ctx *p)
{
    ftok *t = cur(p);
    switch (t->kind) {
    case K_NAME: case K_NUM: case K_STR: case K_FBEGIN: return 1;
    case K_KW: return t->op == KW_TRUE || t->op == KW_FALSE || t->op == KW_NONE || t->op == KW_NOT;
    case K_OP:
        return t->op == O_LPAR || t->op == O_LSQB || t->op == O_LBRACE || t->op == O_MINUS ||
               t->op == O_PLUS || t->op == O_TILDE || t->op == O_STAR || t->op == O_ELLIPSIS;
    default: return 0;
    }
}

/* ---- strings ---- */

static void decode(fast_ctx *p, const ftok *t, int fmt)
{
    int bad = 0;
    cr_code rc = ir_decode_string(&p->sbuf, p->s + t->a, t->b - t->a, t->flags & TF_RAW, fmt, &bad);
    if (rc != CR_OK) decline(p, "string size");
    if (bad) decline(p, "escape");
}

static ir_node *flush_str(fast_ctx *p, int sl, int sc, int el, int ec)
{
    return got(p, ir_str_take(p->m, (ir_span){ sl, sc, el, ec }, &p->sbuf));
}

static ex parse_field(fast_ctx *p, int *dep);

/* The format spec after K_SPEC as an FSTRING: raw literal runs and nested fields. */
static ir_node *parse_spec(fast_ctx *p, int *dep)
{
    ftok *spec = cur(p);
    size_t base = p->nstk;
    p->i++;
    for (;;) {
        ftok *t = cur(p);
        if (t->kind == K_SPECLIT) {
            if (cr_buf_put(&p->sbuf, p->s + t->a, t->b - t->a) != CR_OK) decline(p, "string size");
            push(p, flush_str(p, spec->sl, spec->sc, spec->el, spec->ec));
            p->i++;
        } else if (t->kind == K_FIELD) {
            push(p, parse_field(p, dep).n);
        } else {
            break;
        }
    }
    return pop_node(p, IR_FSTRING, spec->sl, spec->sc, spec->el, spec->ec, base);
}

/* K_FIELD ... K_FIELD_END → FORMAT(expression, spec or NULL), op the conversion. */
static ex parse_field(fast_ctx *p, int *dep)
{
    ftok *f = cur(p);
    ir_node *n = mkn(p, IR_FORMAT, f->sl, f->sc, f->el, f->ec, 2);
    p->i++;
    ex e = parse_test(p);
    if (e.n->kind == IR_STARRED) decline(p, "starred in f-string");
    n->kid[0] = e.n;
    *dep = max_i(*dep, e.dep + 2);
    if (cur(p)->kind == K_CONV) {
        n->op = cur(p)->op;
        p->i++;
    }
    if (cur(p)->kind == K_SPEC) n->kid[1] = parse_spec(p, dep);
    if (cur(p)->kind != K_FIELD_END) decline(p, "f-string field");
    p->i++;
    return ex_of(n, *dep);
}

/* Adjacent string literals → one STR, or an FSTRING when any of them is an f-string. */
static ex parse_strings(fast_ctx *p)
{
    ftok *first = cur(p);
    size_t base = p->nstk;
    int fmt_any = 0, dep = 1;
    cr_buf_reset(&p->sbuf);
    while (cur(p)->kind == K_STR || cur(p)->kind == K_FBEGIN) {
        ftok *t = cur(p);
        p->i++;
        if (t->kind == K_STR) { decode(p, t, 0); continue; }
        fmt_any = 1;
        for (;;) {
            ftok *k = cur(p);
            if (k->kind == K_FEND) { p->i++; break; }
            if (k->kind == K_FLIT) { decode(p, k, 1); p->i++; continue; }
            if (k->kind != K_FIELD) decline(p, "f-string");
            if (p->sbuf.len) push(p, flush_str(p, k->sl, k->sc, k->el, k->ec));
            push(p, parse_field(p, &dep).n);
            cr_buf_reset(&p->sbuf);
        }
    }
    int el = prev(p)->el, ec = prev(p)->ec;   /* a K_STR, or a K_FEND ending its f-string */
    if (!fmt_any) return ex_of(flush_str(p, first->sl, first->sc, el, ec), 1);
    if (p->sbuf.len) push(p, flush_str(p, first->sl, first->sc, el, ec));
    return ex_of(pop_node(p, IR_FSTRING, first->sl, first->sc, el, ec, base), dep + 1);
}

/* ---- displays and comprehensions ---- */

static ex parse_star_or_test(fast_ctx *p)
{
    if (!at_op(p, O_STAR)) return parse_test(p);
    ftok *o = cur(p);
    p->i++;
    ex e = parse_binary(p, 1);
    p->nstar++;
    return ex_of(got(p, ir_prefix(p->m, IR_STARRED, 0, o->sl, o->sc, e.n, span_ex(e))), e.dep + 1);
}

static void check_target(fast_ctx *p, const ir_node *n, int in_seq)
{
    /* tree-sitter reads a parenthesized target as a one-element tuple pattern. */
    if (p->nparened == SIZE_MAX) decline(p, "parenthesized target");
    for (size_t k = 0; k < p->nparened; k++)
        if (p->parened[k] == n) decline(p, "parenthesized target");
    switch (n->kind) {
    case IR_NAME: case IR_ATTR: case IR_SUBSCRIPT: return;
    case IR_STARRED:
        if (!in_seq || n->kid[0]->kind == IR_STARRED) decline(p, "target");
        /* `a, *[b] = x`: CPython unpacks into the list; tree-sitter-python fails there */
        if (n->kid[0]->kind == IR_LIST || n->kid[0]->kind == IR_TUPLE) decline(p, "target");
        p->nstar_target++;
        check_target(p, n->kid[0], 0);
        return;
    case IR_TUPLE: case IR_LIST: {
        int stars = 0;
        if (n->n == 0) decline(p, "target");
        for (uint32_t k = 0; k < n->n; k++) {
            stars += n->kid[k]->kind == IR_STARRED;
            check_target(p, n->kid[k], 1);
        }
        if (stars > 1) decline(p, "target");
        return;
    }
    default:
        decline(p, "target");
    }
}

/* `a, *b` of a for target: star expressions and bitwise-or expressions. */
static ex parse_target_list(fast_ctx *p)
{
    ftok *a = cur(p);
    size_t base = p->nstk;
    int dep = 0;
    ex e;
    for (;;) {
        if (at_op(p, O_STAR)) e = parse_star_or_test(p);
        else e = parse_binary(p, 1);
        dep = max_i(dep, e.dep);
        if (!at_op(p, O_COMMA)) break;
        push(p, e.n);
        p->i++;
        if (at_kw(p, KW_IN)) decline(p, "trailing comma in target");
    }
    if (p->nstk == base) {
        check_target(p, e.n, 0);
        return e;
    }
    push(p, e.n);
    ex t = ex_of(pop_node(p, IR_TUPLE, a->sl, a->sc, e.el, e.ec, base), dep + 1);
    check_target(p, t.n, 0);
    return t;
}

/* `for T in I if C ...` clauses after a comprehension's element(s), pushed as COMPFOR. */
static int parse_compfors(fast_ctx *p)
{
    int dep = 0;
    while (at_kw(p, KW_FOR)) {
        ftok *f = cur(p);
        size_t base = p->nstk;
        p->i++;
        ex t = parse_target_list(p);
        if (!at_kw(p, KW_IN)) decline(p, "syntax");
        p->i++;
        ex it = parse_or(p);
        int el = it.el, ec = it.ec;
        push(p, t.n);
        push(p, it.n);
        dep = max_i(dep, max_i(t.dep, it.dep));
        while (at_kw(p, KW_IF)) {
            p->i++;
            ex c = parse_or(p);
            dep = max_i(dep, c.dep);
            push(p, c.n);
        }
        ir_node *n = pop_node(p, IR_COMPFOR, f->sl, f->sc, el, ec, base);
        push(p, n);
    }
    return dep + 1;
}

/* Elements up to `close`, after the first (already pushed); trailing comma allowed. */
static int parse_elements(fast_ctx *p, int close, int dep)
{
    while (at_op(p, O_COMMA)) {
        p->i++;
        if (at_op(p, close)) break;
        ex e = parse_star_or_test(p);
        dep = max_i(dep, e.dep);
        push(p, e.n);
    }
    return dep;
}

static ex parse_paren(fast_ctx *p)
{
    ftok *o = cur(p);
    size_t base = p->nstk;
    p->i++;
    if (at_op(p, O_RPAR)) {
        p->i++;
        return ex_of(mk_tok(p, IR_TUPLE, o, 0), 1);
    }
    ex first = parse_star_or_test(p);
    if (at_kw(p, KW_FOR)) {
        if (first.n->kind == IR_STARRED) decline(p, "starred");
        push(p, first.n);
        int dep = max_i(first.dep, parse_compfors(p));
        expect_op(p, O_RPAR);
        ir_node *n = mk_tok(p, IR_GENEXP, o, (uint32_t)(p->nstk - base));
        return ex_of(pop_into(p, n, base), dep + 1);
    }
    if (at_op(p, O_COMMA)) {
        push(p, first.n);
        int dep = parse_elements(p, O_RPAR, first.dep);
        expect_op(p, O_RPAR);
        ir_node *n = mk_tok(p, IR_TUPLE, o, (uint32_t)(p->nstk - base));
        return ex_of(pop_into(p, n, base), dep + 1);
    }
    expect_op(p, O_RPAR);
    if (first.n->kind == IR_STARRED) decline(p, "starred");
    if (p->nparened < sizeof p->parened / sizeof p->parened[0]) p->parened[p->nparened++] = first.n;
    else p->nparened = SIZE_MAX;
    return (ex){ first.n, o->sl, o->sc, prev(p)->el, prev(p)->ec, first.dep + 1 };
}

static ex parse_list(fast_ctx *p)
{
    ftok *o = cur(p);
    size_t base = p->nstk;
    int dep = 0;
    ir_kind kind = IR_LIST;
    p->i++;
    if (!at_op(p, O_RSQB)) {
        ex first = parse_star_or_test(p);
        push(p, first.n);
        if (at_kw(p, KW_FOR)) {
            if (first.n->kind == IR_STARRED) decline(p, "starred");
            kind = IR_LISTCOMP;
            dep = max_i(first.dep, parse_compfors(p));
        } else {
            dep = parse_elements(p, O_RSQB, first.dep);
        }
    }
    expect_op(p, O_RSQB);
    ir_node *n = mk_tok(p, kind, o, (uint32_t)(p->nstk - base));
    return ex_of(pop_into(p, n, base), dep + 1);
}

static ex parse_brace(fast_ctx *p)
{
    ftok *o = cur(p);
    size_t base = p->nstk;
    int dep = 0;
    ir_kind kind = IR_DICT;
    p->i++;
    if (!at_op(p, O_RBRACE)) {
        ex k = parse_test(p);
        push(p, k.n);
        dep = k.dep;
        if (at_op(p, O_COLON)) {
            p->i++;
            ex v = parse_test(p);
            push(p, v.n);
            dep = max_i(dep, v.dep);
            if (at_kw(p, KW_FOR)) {
                kind = IR_DICTCOMP;
                dep = max_i(dep, parse_compfors(p));
            } else {
                while (at_op(p, O_COMMA)) {
                    p->i++;
                    if (at_op(p, O_RBRACE)) break;
                    k = parse_test(p);
                    expect_op(p, O_COLON);
                    v = parse_test(p);
                    push(p, k.n);
                    push(p, v.n);
                    dep = max_i(dep, max_i(k.dep, v.dep));
                }
            }
        } else if (at_kw(p, KW_FOR)) {
            kind = IR_SETCOMP;
            dep = max_i(dep, parse_compfors(p));
        } else {
            kind = IR_SET;
            while (at_op(p, O_COMMA)) {
                p->i++;
                if (at_op(p, O_RBRACE)) break;
                ex e = parse_test(p);
                dep = max_i(dep, e.dep);
                push(p, e.n);
            }
        }
    }
    expect_op(p, O_RBRACE);
    ir_node *n = mk_tok(p, kind, o, (uint32_t)(p->nstk - base));
    return ex_of(pop_into(p, n, base), dep + 1);
}

static ex parse_atom(fast_ctx *p)
{
    ftok *t = cur(p);
    ir_node *n;
    switch (t->kind) {
    case K_NAME: case K_NUM:
        n = mkn(p, t->kind == K_NAME ? IR_NAME : IR_NUM, t->sl, t->sc, t->el, t->ec, 0);
        n->text = dup(p, p->s + t->a, t->b - t->a);
        n->len = t->b - t->a;
        if (t->flags & TF_FLOAT) n->flags = IRF_FLOAT;
        p->i++;
        return ex_of(n, 1);
    case K_STR: case K_FBEGIN:
        return parse_strings(p);
    case K_KW:
        if (t->op == KW_TRUE || t->op == KW_FALSE) {
            n = mkn(p, IR_BOOL, t->sl, t->sc, t->el, t->ec, 0);
            n->op = t->op == KW_TRUE;
        } else if (t->op == KW_NONE) {
            n = mkn(p, IR_NONE, t->sl, t->sc, t->el, t->ec, 0);
        } else {
            decline(p, "syntax");
        }
        p->i++;
        return ex_of(n, 1);
    case K_OP:
        switch (t->op) {
        case O_LPAR: return parse_paren(p);
        case O_LSQB: return parse_list(p);
        case O_LBRACE: return parse_brace(p);
        case O_ELLIPSIS:
            p->i++;
            return ex_of(mkn(p, IR_ELLIPSIS, t->sl, t->sc, t->el, t->ec, 0), 1);
        default: break;
        }
        break;
    default:
        break;
    }
    decline(p, "syntax");
}

/* ---- trailers ---- */

static ex parse_call(fast_ctx *p, ex fn)
{
    ftok *o = cur(p);
    size_t base = p->nstk;
    int dep = fn.dep, nargs = 0;
    push(p, fn.n);
    p->i++;
    while (!at_op(p, O_RPAR)) {
        ftok *a = cur(p);
        ir_node *n;
        if (at_op(p, O_STAR) || at_op(p, O_DSTAR)) {
            int dstar = at_op(p, O_DSTAR);
            p->i++;
            ex e = parse_test(p);
            n = got(p, ir_prefix(p->m, dstar ? IR_DSTARRED : IR_STARRED, 0, a->sl, a->sc, e.n,
                                 span_ex(e)));
            dep = max_i(dep, e.dep + 1);
        } else if (a->kind == K_NAME && p->t[p->i + 1].kind == K_OP && p->t[p->i + 1].op == O_ASSIGN) {
            p->i += 2;
            ex v = parse_test(p);
            n = mkn(p, IR_KEYWORD, a->sl, a->sc, v.el, v.ec, 1);
            n->text = dup(p, p->s + a->a, a->b - a->a);
            n->len = a->b - a->a;
            n->kid[0] = v.n;
            dep = max_i(dep, v.dep + 1);
        } else {
            ex e = parse_test(p);
            if (at_kw(p, KW_FOR)) {
                if (nargs) decline(p, "generator argument");
                push(p, e.n);
                size_t gbase = p->nstk - 1;
                int gdep = max_i(e.dep, parse_compfors(p));
                if (!at_op(p, O_RPAR)) decline(p, "generator argument");
                p->i++;
                ir_node *g = mk_tok(p, IR_GENEXP, o, (uint32_t)(p->nstk - gbase));
                pop_into(p, g, gbase);
                push(p, g);
                dep = max_i(dep, gdep + 1);
                goto done;
            }
            n = e.n;
            dep = max_i(dep, e.dep);
        }
        push(p, n);
        nargs++;
        if (!at_op(p, O_COMMA)) break;
        p->i++;
    }
    expect_op(p, O_RPAR);
done:;
    ir_node *call = mkn(p, IR_CALL, fn.sl, fn.sc, prev(p)->el, prev(p)->ec, (uint32_t)(p->nstk - base));
    return ex_of(pop_into(p, call, base), dep + 1);
}

/* One subscript item: an expression or a slice (tree-sitter's slice spans its tokens). */
static ex parse_index(fast_ctx *p)
{
    ftok *a = cur(p);
    ex lo = { 0 };
    if (!at_op(p, O_COLON)) {
        lo = parse_test(p);
        if (!at_op(p, O_COLON)) return lo;
    }
    ir_node *n = mkn(p, IR_SLICE, a->sl, a->sc, 0, 0, 3);
    int dep = lo.dep;
    n->kid[0] = lo.n;
    p->i++;
    if (!at_op(p, O_COLON) && !at_op(p, O_COMMA) && !at_op(p, O_RSQB)) {
        ex hi = parse_test(p);
        n->kid[1] = hi.n;
        dep = max_i(dep, hi.dep);
    }
    if (at_op(p, O_COLON)) {
        p->i++;
        if (!at_op(p, O_COMMA) && !at_op(p, O_RSQB)) {
            ex st = parse_test(p);
            n->kid[2] = st.n;
            dep = max_i(dep, st.dep);
        }
    }
    n->end_line = prev(p)->el;
    n->end_col = prev(p)->ec;
    return ex_of(n, dep + 1);
}

static ex parse_subscript(fast_ctx *p, ex obj)
{
    size_t base = p->nstk;
    int commas = 0, dep = obj.dep;
    ex first = { 0 };
    p->i++;
    while (!at_op(p, O_RSQB)) {
        ex e = parse_index(p);
        if (p->nstk == base) first = e;
        push(p, e.n);
        dep = max_i(dep, e.dep);
        if (!at_op(p, O_COMMA)) break;
        commas++;
        p->i++;
    }
    expect_op(p, O_RSQB);
    if (p->nstk == base) decline(p, "empty subscript");
    ir_node *n = mkn(p, IR_SUBSCRIPT, obj.sl, obj.sc, prev(p)->el, prev(p)->ec, 2);
    n->kid[0] = obj.n;
    if (commas == 0) {
        n->kid[1] = p->stk[base];
        p->nstk = base;
    } else {
        n->kid[1] = pop_node(p, IR_TUPLE, first.sl, first.sc, first.el, first.ec, base);
        dep++;
    }
    return ex_of(n, dep + 1);
}

static ex parse_power(fast_ctx *p)
{
    ex e = parse_atom(p);
    for (;;) {
        if (at_op(p, O_LPAR)) e = parse_call(p, e);
        else if (at_op(p, O_LSQB)) e = parse_subscript(p, e);
        else if (at_op(p, O_DOT)) {
            p->i++;
            ftok *name = cur(p);
            if (name->kind != K_NAME) decline(p, "attribute");
            p->i++;
            ir_span at = { e.sl, e.sc, name->el, name->ec };
            ir_node *n = got(p, ir_node_text(p->m, IR_ATTR, at, 1, p->s + name->a, name->b - name->a));
            n->kid[0] = e.n;
            e = ex_of(n, e.dep + 1);
        } else {
            break;
        }
        if (e.dep >= (int)p->lim->max_depth / 2) decline(p, "depth");
    }
    if (at_op(p, O_DSTAR)) {
        p->i++;
        ex r = parse_factor(p);
        ir_node *n = got(p, ir_binary(p->m, IR_BINOP, IR_POW, e.n, span_ex(e), r.n, span_ex(r)));
        /* Lowering walks a chain of binary operators as tree-sitter nests it; adding the
         * depths bounds that for any nesting. */
        return ex_of(n, e.dep + r.dep + 1);
    }
    return e;
}

static ex parse_factor(fast_ctx *p)
{
    ftok *o = cur(p);
    if (o->kind == K_OP && (o->op == O_MINUS || o->op == O_PLUS || o->op == O_TILDE)) {
        enter(p);
        p->i++;
        ex e = parse_factor(p);
        p->rdepth--;
        int op = o->op == O_MINUS ? IR_NEG : o->op == O_PLUS ? IR_POS : IR_INVERT;
        return ex_of(got(p, ir_prefix(p->m, IR_UNARY, op, o->sl, o->sc, e.n, span_ex(e))), e.dep + 1);
    }
    return parse_power(p);
}

/* Python's precedences (ir/ops.def; lower.c rebuilds tree-sitter's chains by them too);
 * left to right. `**` is parse_power()'s: it binds tighter than a sign on its left. A BINOP
 * spans its operands' extents, parentheses included. */
static ex parse_binary(fast_ctx *p, int minprec)
{
    ex l = parse_factor(p);
    for (;;) {
        ftok *t = cur(p);
        if (t->kind != K_OP || t->op < O_BIN || t->op >= O_CMP || t->op == O_DSTAR) break;
        int op = t->op - O_BIN, prec = ir_binop_prec(op);
        if (prec < minprec) break;
        p->i++;
        ex r = parse_binary(p, prec + 1);
        ir_node *n = got(p, ir_binary(p->m, IR_BINOP, op, l.n, span_ex(l), r.n, span_ex(r)));
        l = (ex){ n, l.sl, l.sc, r.el, r.ec, l.dep + r.dep + 1 };
        if (l.dep >= (int)p->lim->max_depth / 2) decline(p, "depth");
    }
    return l;
}

static int cmp_op(fast_ctx *p, int *ntok)
{
    ftok *t = cur(p);
    *ntok = 1;
    if (t->kind == K_OP) return t->op >= O_CMP && t->op < O_AUG ? t->op - O_CMP : -1;
    if (t->kind != K_KW) return -1;
    if (t->op == KW_IN) return IR_IN;
    if (t->op == KW_NOT && p->t[p->i + 1].kind == K_KW && p->t[p->i + 1].op == KW_IN) {
        *ntok = 2;
        return IR_NOT_IN;
    }
    if (t->op == KW_IS) {
        if (p->t[p->i + 1].kind == K_KW && p->t[p->i + 1].op == KW_NOT) {
            *ntok = 2;
            return IR_IS_NOT;
        }
        return IR_IS;
    }
    return -1;
}

static ex parse_comparison(fast_ctx *p)
{
    ex l = parse_binary(p, 1);
    int ntok, op = cmp_op(p, &ntok);
    if (op < 0) return l;
    size_t base = p->nstk;
    uint8_t ops[64];
    int nops = 0, dep = l.dep;
    ex r = l;
    push(p, l.n);
    while (op >= 0) {
        if (nops == (int)sizeof ops) decline(p, "comparison chain");
        ops[nops++] = (uint8_t)op;
        p->i += (size_t)ntok;
        r = parse_binary(p, 1);
        dep = max_i(dep, r.dep);
        push(p, r.n);
        op = cmp_op(p, &ntok);
    }
    ir_node *n = pop_node(p, IR_COMPARE, l.sl, l.sc, r.el, r.ec, base);
    uint8_t *cmp = cr_arena_alloc(&p->m->arena, (size_t)nops + 1);
    if (!cmp) decline(p, "memory");
    memcpy(cmp, ops, (size_t)nops);
    n->cmp = cmp;
    return ex_of(n, dep + 1);
}

static ex parse_not(fast_ctx *p)
{
    ftok *o = cur(p);
    if (!at_kw(p, KW_NOT)) return parse_comparison(p);
    enter(p);
    p->i++;
    ex e = parse_not(p);
    p->rdepth--;
    return ex_of(got(p, ir_prefix(p->m, IR_UNARY, IR_NOT, o->sl, o->sc, e.n, span_ex(e))), e.dep + 1);
}

static ex parse_boolop(fast_ctx *p, int kw)
{
    ex l = kw == KW_OR ? parse_boolop(p, KW_AND) : parse_not(p);
    while (at_kw(p, kw)) {
        p->i++;
        ex r = kw == KW_OR ? parse_boolop(p, KW_AND) : parse_not(p);
        int op = kw == KW_OR ? IR_OR : IR_AND;
        ir_node *n = got(p, ir_binary(p->m, IR_BOOLOP, op, l.n, span_ex(l), r.n, span_ex(r)));
        l = ex_of(n, max_i(l.dep, r.dep) + 1);
        if (l.dep >= (int)p->lim->max_depth / 2) decline(p, "depth");
    }
    return l;
}

static ex parse_or(fast_ctx *p) { return parse_boolop(p, KW_OR); }

/* Whether the token after a name or number ends the expression there: most operands are
 * that simple, and this spares them the walk down every precedence level. */
static int ends_operand(const ftok *t)
{
    if (t->kind == K_NEWLINE || t->kind == K_FIELD_END) return 1;
    if (t->kind != K_OP) return 0;
    switch (t->op) {
    case O_COMMA: case O_RPAR: case O_RSQB: case O_RBRACE: case O_ASSIGN: case O_SEMI:
        return 1;
    default:
        return 0;
    }
}

static ex parse_test(fast_ctx *p);

/* Parameters of a def (up to `close`) or a lambda (up to `:`): NAME or NAME=default, each a
 * PARAM pushed on the stack. Returns the deepest default. */
static int parse_params(fast_ctx *p, int close)
{
    int dep = 0;
    while (!at_op(p, close)) {
        ftok *a = cur(p);
        if (a->kind != K_NAME) decline(p, "parameter");
        p->i++;
        ir_node *prm;
        if (at_op(p, O_ASSIGN)) {
            p->i++;
            ex v = parse_test(p);
            prm = mkn(p, IR_PARAM, a->sl, a->sc, v.el, v.ec, 1);
            prm->kid[0] = v.n;
            dep = max_i(dep, v.dep);
        } else {
            prm = mkn(p, IR_PARAM, a->sl, a->sc, a->el, a->ec, 1);
        }
        prm->text = dup(p, p->s + a->a, a->b - a->a);
        prm->len = a->b - a->a;
        push(p, prm);
        if (!at_op(p, O_COMMA)) break;
        p->i++;
        if (close == O_COLON && at_op(p, O_COLON)) decline(p, "lambda trailing comma");
    }
    return dep;
}

/* `lambda a, b=1: body` → LAMBDA(PARAMS, body); the PARAMS span the parameters, or the
 * whole lambda when there are none. */
static ex parse_lambda(fast_ctx *p)
{
    ftok *kw = cur(p);
    size_t base = p->nstk;
    p->i++;
    ftok *first = cur(p);
    int dep = parse_params(p, O_COLON);
    ftok *last = prev(p);
    uint32_t np = (uint32_t)(p->nstk - base);
    ir_node *params = mkn(p, IR_PARAMS, first->sl, first->sc, last->el, last->ec, np);
    pop_into(p, params, base);
    expect_op(p, O_COLON);
    ex body = parse_test(p);
    ir_node *n = mkn(p, IR_LAMBDA, kw->sl, kw->sc, body.el, body.ec, 2);
    if (!np) {
        params->line = kw->sl;
        params->col = kw->sc;
        params->end_line = body.el;
        params->end_col = body.ec;
    }
    n->kid[0] = params;
    n->kid[1] = body.n;
    return ex_of(n, max_i(dep, body.dep) + 2);
}

static ex parse_test(fast_ctx *p)
{
    ftok *t = cur(p);
    if ((t->kind == K_NAME || t->kind == K_NUM) && ends_operand(t + 1)) return parse_atom(p);
    if (t->kind == K_KW && t->op == KW_LAMBDA) {
        enter(p);
        ex e = parse_lambda(p);
        p->rdepth--;
        return e;
    }
    enter(p);
    ex body = parse_or(p);
    if (at_kw(p, KW_IF)) {
        p->i++;
        ex test = parse_or(p);
        if (!at_kw(p, KW_ELSE)) decline(p, "syntax");
        p->i++;
        ex orelse = parse_test(p);
        ir_node *n = mkn(p, IR_IFEXP, body.sl, body.sc, orelse.el, orelse.ec, 3);
        n->kid[0] = test.n;
        n->kid[1] = body.n;
        n->kid[2] = orelse.n;
        body = ex_of(n, max_i(max_i(test.dep, body.dep), orelse.dep) + 1);
    }
    p->rdepth--;
    return body;
}

/* Expressions separated by commas (a tuple without parentheses spans its trailing comma). */
static ex parse_testlist(fast_ctx *p)
{
    ftok *a = cur(p);
    ex first = parse_star_or_test(p);
    if (!at_op(p, O_COMMA)) return first;
    size_t base = p->nstk;
    int dep = first.dep;
    push(p, first.n);
    while (at_op(p, O_COMMA)) {
        p->i++;
        /* `a, b,` then a line break: tree-sitter-python reads on into the next line. */
        if (!starts_expr(p)) decline(p, "trailing comma");
        ex e = parse_star_or_test(p);
        dep = max_i(dep, e.dep);
        push(p, e.n);
    }
    /* A statement `a, b` then a line starting with `[`: where that line is an assignment,
     * tree-sitter-python reads one pattern `a, b[...] = ...` across the line break. */
    const ftok *t = cur(p);
    int stmt_start = a == p->t || a[-1].kind == K_NEWLINE || a[-1].kind == K_INDENT ||
                     a[-1].kind == K_DEDENT;
    if (stmt_start && t->kind == K_NEWLINE) {
        while (t->kind == K_NEWLINE || t->kind == K_INDENT || t->kind == K_DEDENT) t++;
        if (t->kind == K_OP && t->op == O_LSQB) decline(p, "tuple before a line opening '['");
    }
    ir_node *n = mk_tok(p, IR_TUPLE, a, (uint32_t)(p->nstk - base));
    p->bare_single = n->n == 1 ? n : NULL;
    return ex_of(pop_into(p, n, base), dep + 1);
}

/* ---- statements ------------------------------------------------------------------------- */

typedef struct {
    int el, ec;     /* where the statement ends */
} stmt_end;

static stmt_end parse_stmt(fast_ctx *p);

static void check_dep(fast_ctx *p, int dep)
{
    if (p->sdepth + dep + 2 >= (int)p->lim->max_depth) decline(p, "depth");
}

/* `: NEWLINE INDENT statements DEDENT` → BLOCK, from its first statement to its last, or to
 * the last comment the grammar files into it. */
static ir_node *parse_block(fast_ctx *p, stmt_end *end)
{
    expect_op(p, O_COLON);
    if (cur(p)->kind != K_NEWLINE) decline(p, "same-line suite");
    p->i++;
    if (cur(p)->kind != K_INDENT) decline(p, "expected an indented block");
    p->i++;
    ftok *first = cur(p);
    size_t base = p->nstk;
    stmt_end e = { 0, 0 };
    while (cur(p)->kind != K_DEDENT) {
        if (cur(p)->kind == K_END) decline(p, "syntax");
        e = parse_stmt(p);
    }
    ftok *d = cur(p);
    p->i++;
    if (d->el) { e.el = d->el; e.ec = d->ec; }
    *end = e;
    return pop_node(p, IR_BLOCK, first->sl, first->sc, e.el, e.ec, base);
}

/* A simple statement ends the line, or a `;` and another simple statement follow. */
static void end_simple(fast_ctx *p)
{
    if (at_op(p, O_SEMI)) {
        p->i++;
        if (cur(p)->kind == K_NEWLINE) decline(p, "trailing ';'");
        p->after_semi = 1;
        return;
    }
    if (cur(p)->kind != K_NEWLINE) decline(p, "syntax");
    p->i++;
}

static stmt_end parse_if(fast_ctx *p, ftok *kw, int is_elif)
{
    stmt_end end;
    p->i++;
    ex test = parse_test(p);
    check_dep(p, test.dep);
    ir_node *n = mkn(p, IR_IF, kw->sl, kw->sc, 0, 0, 3);
    n->kid[0] = test.n;
    n->kid[1] = parse_block(p, &end);
    n->end_line = end.el;
    n->end_col = end.ec;
    if (at_kw(p, KW_ELIF)) {
        ftok *e = cur(p);
        stmt_end last = parse_if(p, e, 1);  /* an elif's IF spans its own clause only */
        n->kid[2] = p->stk[--p->nstk];
        end = last;
    } else if (at_kw(p, KW_ELSE)) {
        p->i++;
        n->kid[2] = parse_block(p, &end);
    }
    if (!is_elif) {
        n->end_line = end.el;
        n->end_col = end.ec;
    }
    push(p, n);
    return end;
}

static stmt_end parse_loop(fast_ctx *p, ftok *kw)
{
    stmt_end end;
    int is_for = kw->op == KW_FOR;
    ir_node *n = mkn(p, is_for ? IR_FOR : IR_WHILE, kw->sl, kw->sc, 0, 0, is_for ? 4 : 3);
    p->i++;
    if (is_for) {
        ex t = parse_target_list(p);
        if (!at_kw(p, KW_IN)) decline(p, "syntax");
        p->i++;
        ex it = parse_testlist(p);
        if (it.n->kind == IR_STARRED) decline(p, "starred");
        check_dep(p, max_i(t.dep, it.dep));
        n->kid[0] = t.n;
        n->kid[1] = it.n;
    } else {
        ex test = parse_test(p);
        check_dep(p, test.dep);
        n->kid[0] = test.n;
    }
    p->in_loop++;
    n->kid[is_for ? 2 : 1] = parse_block(p, &end);
    p->in_loop--;
    if (at_kw(p, KW_ELSE)) {
        p->i++;
        n->kid[is_for ? 3 : 2] = parse_block(p, &end);
    }
    n->end_line = end.el;
    n->end_col = end.ec;
    push(p, n);
    return end;
}

static stmt_end parse_def(fast_ctx *p, ftok *kw)
{
    stmt_end end;
    p->i++;
    ftok *name = cur(p);
    if (name->kind != K_NAME) decline(p, "syntax");
    p->i++;
    ftok *o = cur(p);
    expect_op(p, O_LPAR);
    size_t base = p->nstk;
    int dep = parse_params(p, O_RPAR);
    expect_op(p, O_RPAR);
    check_dep(p, dep + 2);
    ir_node *params = pop_node(p, IR_PARAMS, o->sl, o->sc, prev(p)->el, prev(p)->ec, base);
    ir_node *n = mkn(p, IR_FUNCDEF, kw->sl, kw->sc, 0, 0, 2);
    n->text = dup(p, p->s + name->a, name->b - name->a);
    n->len = name->b - name->a;
    n->kid[0] = params;
    int loop = p->in_loop;
    p->in_func++;
    p->in_loop = 0;
    n->kid[1] = parse_block(p, &end);
    p->in_func--;
    p->in_loop = loop;
    n->end_line = end.el;
    n->end_col = end.ec;
    push(p, n);
    return end;
}

/* try: TRY(body, EXCEPT(class or NULL, NAME or NULL, block)..., else, finally). Declined:
 * `except*`, and a class expression whose `as` tree-sitter reads inside it (`except A if c
 * else B as e`, a lambda). */
static stmt_end parse_try(fast_ctx *p, ftok *kw)
{
    stmt_end end;
    size_t base = p->nstk;
    uint32_t handlers = 0;
    p->i++;
    push(p, parse_block(p, &end));
    while (at_kw(p, KW_EXCEPT)) {
        ftok *e = cur(p);
        ir_node *h = mkn(p, IR_EXCEPT, e->sl, e->sc, 0, 0, 3);
        p->i++;
        if (at_op(p, O_STAR)) decline(p, "except*");
        if (!at_op(p, O_COLON)) {
            ex t = parse_test(p);
            if (t.n->kind == IR_IFEXP || t.n->kind == IR_LAMBDA || t.n->kind == IR_STARRED)
                decline(p, "except class");
            check_dep(p, t.dep);
            h->kid[0] = t.n;
            if (at_kw(p, KW_AS)) {
                p->i++;
                ftok *nm = cur(p);
                if (nm->kind != K_NAME) decline(p, "syntax");
                ir_node *name = mkn(p, IR_NAME, nm->sl, nm->sc, nm->el, nm->ec, 0);
                name->text = dup(p, p->s + nm->a, nm->b - nm->a);
                name->len = nm->b - nm->a;
                h->kid[1] = name;
                p->i++;
            }
        }
        h->kid[2] = parse_block(p, &end);
        h->end_line = end.el;
        h->end_col = end.ec;
        push(p, h);
        handlers++;
    }
    ir_node *orelse = NULL, *fin = NULL;
    if (at_kw(p, KW_ELSE)) {
        if (!handlers) decline(p, "syntax");
        p->i++;
        orelse = parse_block(p, &end);
    }
    if (at_kw(p, KW_FINALLY)) {
        p->i++;
        fin = parse_block(p, &end);
    }
    if (!handlers && !fin) decline(p, "syntax");
    push(p, orelse);
    push(p, fin);
    push(p, pop_node(p, IR_TRY, kw->sl, kw->sc, end.el, end.ec, base));
    return end;
}

/* A dotted module name without blanks; *first_len: the length of its first component. */
static const char *parse_dotted(fast_ctx *p, uint32_t *len, uint32_t *first_len)
{
    ftok *a = cur(p);
    if (a->kind != K_NAME) decline(p, "import");
    p->i++;
    *first_len = a->b - a->a;
    uint32_t tokens = *first_len;
    while (at_op(p, O_DOT)) {
        p->i++;
        if (cur(p)->kind != K_NAME) decline(p, "import");
        tokens += 1 + (cur(p)->b - cur(p)->a);
        p->i++;
    }
    ftok *z = prev(p);
    /* Only `a.b.c` written with nothing between its tokens (no blank of any kind, no line
       continuation): the text is then the source as is. */
    if (z->b - a->a != tokens) decline(p, "import");
    *len = z->b - a->a;
    return dup(p, p->s + a->a, *len);
}

static const char *parse_alias(fast_ctx *p)
{
    if (!at_kw(p, KW_AS)) return NULL;
    p->i++;
    ftok *a = cur(p);
    if (a->kind != K_NAME) decline(p, "import");
    p->i++;
    return dup(p, p->s + a->a, a->b - a->a);
}

/* One IMPORT / IMPORT_FROM per name, each spanning the whole statement. */
static stmt_end parse_import(fast_ctx *p, ftok *kw)
{
    size_t base = p->nstk;
    const char *module = NULL;
    uint32_t mlen = 0, flen;
    int from = kw->op == KW_FROM;
    p->i++;
    if (from) {
        module = parse_dotted(p, &mlen, &flen);
        if (strcmp(module, "__future__") == 0) decline(p, "future import");   /* its own node */
        if (!at_kw(p, KW_IMPORT)) decline(p, "import");
        p->i++;
    }
    for (;;) {
        ftok *a = cur(p);
        uint32_t nlen;
        const char *text = parse_dotted(p, &nlen, &flen);
        ftok *z = prev(p);
        if (from && nlen != flen) decline(p, "import");
        const char *alias = parse_alias(p);
        ir_node *n = mkn(p, from ? IR_IMPORT_FROM : IR_IMPORT, kw->sl, kw->sc, 0, 0, from ? 1 : 0);
        if (from) {
            n->text = module;
            n->len = mlen;
            n->aux = alias ? alias : text;
            n->kid[0] = mkn(p, IR_NAME, a->sl, a->sc, z->el, z->ec, 0);
            n->kid[0]->text = text;
            n->kid[0]->len = nlen;
        } else {
            n->text = text;
            n->len = nlen;
            n->aux = alias ? alias : dup(p, text, flen);
        }
        push(p, n);
        if (!at_op(p, O_COMMA)) break;
        p->i++;
    }
    stmt_end end = { prev(p)->el, prev(p)->ec };
    for (size_t k = base; k < p->nstk; k++) {
        p->stk[k]->end_line = end.el;
        p->stk[k]->end_col = end.ec;
    }
    end_simple(p);
    return end;
}

static stmt_end parse_expr_stmt(fast_ctx *p, ftok *a)
{
    ex e = parse_testlist(p);
    int dep = e.dep;
    ir_node *n;
    if (at_op(p, O_ASSIGN)) {
        size_t base = p->nstk;
        while (at_op(p, O_ASSIGN)) {
            check_target(p, e.n, 0);
            push(p, e.n);
            p->i++;
            e = parse_testlist(p);
            dep = max_i(dep, e.dep);
        }
        if (e.n->kind == IR_STARRED) decline(p, "starred");
        push(p, e.n);
        n = pop_node(p, IR_ASSIGN, a->sl, a->sc, e.el, e.ec, base);
    } else if (cur(p)->kind == K_OP && cur(p)->op >= O_AUG) {
        int op = cur(p)->op - O_AUG;
        if (e.n->kind != IR_NAME && e.n->kind != IR_ATTR && e.n->kind != IR_SUBSCRIPT)
            decline(p, "augmented target");
        check_target(p, e.n, 0);          /* no `(x) += 1` either */
        p->i++;
        ex v = parse_testlist(p);
        if (v.n->kind == IR_STARRED) decline(p, "starred");
        dep = max_i(dep, v.dep);
        n = mkn(p, IR_AUGASSIGN, a->sl, a->sc, v.el, v.ec, 2);
        n->op = (uint16_t)op;
        n->kid[0] = e.n;
        n->kid[1] = v.n;
    } else {
        if (e.n->kind == IR_STARRED) decline(p, "starred");
        /* The statement `x,` lowers as x alone (its one named child), not as a tuple. */
        if (e.n == p->bare_single) decline(p, "statement `x,`");
        n = mkn(p, IR_EXPR, e.sl, e.sc, e.el, e.ec, 1);
        n->kid[0] = e.n;
    }
    check_dep(p, dep + 1);
    push(p, n);
    stmt_end end = { n->end_line, n->end_col };
    end_simple(p);
    return end;
}

static stmt_end parse_stmt(fast_ctx *p)
{
    ftok *t = cur(p);
    stmt_end end;
    if (++p->sdepth >= (int)p->lim->max_depth / 2) decline(p, "depth");
    if (p->after_semi && t->kind == K_KW && (t->op == KW_IF || t->op == KW_FOR ||
                                             t->op == KW_WHILE || t->op == KW_DEF ||
                                             t->op == KW_TRY))
        decline(p, "compound statement after ';'");
    p->after_semi = 0;
    size_t stars = p->nstar, star_targets = p->nstar_target;
    if (t->kind == K_KW) {
        ir_kind leaf = IR_KIND_END;
        switch (t->op) {
        case KW_IF: end = parse_if(p, t, 0); goto out;
        case KW_FOR: case KW_WHILE: end = parse_loop(p, t); goto out;
        case KW_DEF: end = parse_def(p, t); goto out;
        case KW_TRY: end = parse_try(p, t); goto out;
        case KW_IMPORT: case KW_FROM: end = parse_import(p, t); goto out;
        case KW_PASS: leaf = IR_PASS; break;
        case KW_BREAK: if (!p->in_loop) decline(p, "break outside loop"); leaf = IR_BREAK; break;
        case KW_CONTINUE: if (!p->in_loop) decline(p, "continue outside loop"); leaf = IR_CONTINUE; break;
        case KW_RAISE: case KW_ASSERT: {
            /* `raise E [from C]` → RAISE(E, C or NULL); `assert T[, M]` → ASSERT(T, M or
             * NULL); both span the whole statement. */
            int is_raise = t->op == KW_RAISE;
            ir_node *n = mkn(p, is_raise ? IR_RAISE : IR_ASSERT, t->sl, t->sc, t->el, t->ec, 2);
            p->i++;
            int dep = 0;
            if (cur(p)->kind != K_NEWLINE && !at_op(p, O_SEMI)) {
                ex v = parse_test(p);
                n->kid[0] = v.n;
                dep = v.dep;
                if (is_raise ? at_kw(p, KW_FROM) : at_op(p, O_COMMA)) {
                    p->i++;
                    ex m = parse_test(p);
                    n->kid[1] = m.n;
                    dep = max_i(dep, m.dep);
                }
                n->end_line = prev(p)->el;
                n->end_col = prev(p)->ec;
            } else if (!is_raise) {
                decline(p, "syntax");
            }
            check_dep(p, dep + 1);
            push(p, n);
            end = (stmt_end){ n->end_line, n->end_col };
            end_simple(p);
            goto out;
        }
        case KW_RETURN: {
            if (!p->in_func) decline(p, "return outside function");
            ir_node *n = mkn(p, IR_RETURN, t->sl, t->sc, t->el, t->ec, 1);
            p->i++;
            if (cur(p)->kind != K_NEWLINE) {
                ex v = parse_testlist(p);
                if (v.n->kind == IR_STARRED) decline(p, "starred");
                check_dep(p, v.dep + 1);
                n->kid[0] = v.n;
                n->end_line = v.el;
                n->end_col = v.ec;
            }
            push(p, n);
            end = (stmt_end){ n->end_line, n->end_col };
            end_simple(p);
            goto out;
        }
        default: break;
        }
        if (leaf != IR_KIND_END) {
            push(p, mkn(p, leaf, t->sl, t->sc, t->el, t->ec, 0));
            p->i++;
            end = (stmt_end){ t->el, t->ec };
            end_simple(p);
            goto out;
        }
    }
    if (t->kind == K_INDENT || t->kind == K_DEDENT || t->kind == K_NEWLINE) decline(p, "indentation");
    end = parse_expr_stmt(p, t);
out:
    if (p->nstar - stars != p->nstar_target - star_targets) decline(p, "starred in a value");
    p->sdepth--;
    return end;
}

cr_code parser_fast(const char *src, size_t len, const cr_limits *lim, parser_scratch *sc,
                    ir_module **out, const char **why)
{
    fast_ctx ctx, *p = &ctx;
    memset(p, 0, offsetof(fast_ctx, jb));
    *out = NULL;
    p->s = src;
    p->len = (uint32_t)len;
    p->lim = lim;
    p->sc = sc;
    p->t = sc->fast_toks;
    p->capt = sc->fast_toks_cap;
    p->stk = sc->fast_stk;
    p->capstk = sc->fast_stk_cap;
    p->line = 1;
    p->nind = 1;
    p->nest_max = lim->max_depth < PY_MAXLEVEL ? (int)lim->max_depth : PY_MAXLEVEL;
    p->rc = PARSER_FAST_DECLINED;
    cr_buf_init(&p->sbuf, lim->max_str_len);
    if (setjmp(p->jb) == 0) {
        if (len > UINT32_MAX / 2 || memchr(src, '\r', len)) decline(p, "carriage return");
        tokenize(p);
        if (!(p->m = ir_module_new(lim->max_memory))) decline(p, "memory");
        while (cur(p)->kind != K_END) parse_stmt(p);
        /* The module spans from its first token or comment (the end when it has none) to
         * the end of the input. */
        int el = p->line, ec = (int)(p->len - p->ls) + 1;
        if (!p->first_l) { p->first_l = el; p->first_c = ec; }
        p->m->root = pop_node(p, IR_MODULE, p->first_l, p->first_c, el, ec, 0);
        *out = p->m;
        p->m = NULL;
        p->rc = CR_OK;
    }
    if (why) *why = p->why;
    ir_module_free(p->m);
    cr_buf_free(&p->sbuf);
    /* A thread keeps the buffers of ordinary programs, not those of a huge one. */
    if (p->capt > FAST_KEEP_TOKENS) {
        free(p->t);
        p->t = NULL;
        p->capt = 0;
    }
    if (p->capstk > FAST_KEEP_TOKENS) {
        free(p->stk);
        p->stk = NULL;
        p->capstk = 0;
    }
    sc->fast_toks = p->t;
    sc->fast_toks_cap = p->capt;
    sc->fast_stk = p->stk;
    sc->fast_stk_cap = p->capstk;
    return p->rc;
}
