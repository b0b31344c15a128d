/* parser/parse.c: the entry point: one pre-scan of the bytes, tree-sitter (one parser per
 * thread), the first syntax error in document order, then lowering (lower.c) and the
 * whitelist (whitelist.c). */
#include <pthread.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parser/parser_int.h"

/* tree-sitter 0.20.7 (Debian 12) aborts inside error recovery once about 65 536 tokens are
 * pending on its stack (e.g. 70 000 unclosed "(" or "-"); it never gets that far with fewer
 * tokens in the whole input, so we refuse larger inputs before calling it. Real programs
 * are under 5 000 tokens. */
#define PARSER_MAX_TOKENS 60000u

const char *parser_grammar_version(void) { return "tree-sitter-python 0.23.6 (ABI 14)"; }

void parser_position_of(const char *src, size_t off, int *line, int *col)
{
    int l = 1;
    size_t start = 0;
    for (size_t i = 0; i < off; i++)
        if (src[i] == '\n') { l++; start = i + 1; }
    *line = l;
    *col = (int)(off - start) + 1;
}

/* CPython's tokenizer keeps at most this many indentation levels, the outermost (column 0)
 * included; one more is "too many levels of indentation" (MAXINDENT in its tokenizer.h). */
#define PY_MAXINDENT 100
static const char TOO_DEEP_MSG[] = "too many levels of indentation";

/* The one pass over the source before tree-sitter sees it: NUL bytes, UTF-8, bracket depth,
 * a token count, and the indentation of each logical line. Errors keep the precedence
 * CPython's tokenizer gives them: a NUL byte anywhere, else the first byte that is not UTF-8,
 * else the first bracket too deep. An indentation error, or a vertical tab outside strings and
 * comments, is only noted (indent_at): CPython reports it unless the parser met a syntax error
 * earlier in the source, which only the parse can tell. */
typedef struct {
    const unsigned char *s;
    size_t len, i;
    uint32_t depth, max_depth;
    size_t tokens;
    size_t deep_at;         /* offset of the first bracket past max_depth; SIZE_MAX: none */
    size_t py_deep_at;      /* ... past PY_MAXLEVEL */
    /* CPython compares every indentation twice, with tabs to multiples of 8 and with tabs as
     * one column: when the two comparisons disagree, the meaning depends on the tab size,
     * which is its TabError. */
    uint32_t ind[PY_MAXINDENT], alt[PY_MAXINDENT];
    int nind;               /* levels on the stack; 0: stopped (past an error or a bad dedent) */
    size_t indent_at;       /* start of the first line with an indentation error; SIZE_MAX: none */
    const char *indent_msg;
} scan_ctx;

#define SCAN_BAD CR_ESYNTAX   /* scan_char() stopped on a NUL byte or bad UTF-8 at sc->i */

/* Steps over the character at sc->i (a whole UTF-8 sequence). ASCII takes the inline path:
 * this runs once per byte of the source. */
static cr_code scan_wide(scan_ctx *sc)
{
    size_t bad, n = sc->s[sc->i] ? cr_utf8_step((const char *)sc->s + sc->i, sc->len - sc->i, &bad) : 0;
    if (!n) return SCAN_BAD;
    sc->i += n;
    return CR_OK;
}

static inline cr_code scan_char(scan_ctx *sc)
{
    unsigned char c = sc->s[sc->i];
    if (c - 1u < 0x7Fu) {   /* 1..0x7F */
        sc->i++;
        return CR_OK;
    }
    return scan_wide(sc);
}

static void scan_open(scan_ctx *sc)
{
    sc->tokens++;
    if (++sc->depth > sc->max_depth && sc->deep_at == SIZE_MAX) sc->deep_at = sc->i;
    if (sc->depth > PY_MAXLEVEL && sc->py_deep_at == SIZE_MAX) sc->py_deep_at = sc->i;
}

/* Skips a string literal whose opening quote is at sc->i. Brackets inside f-strings are
 * counted (replacement fields hold code); `{{` and `}}` are literal braces. */
static cr_code scan_string(scan_ctx *sc, int fstring)
{
    const unsigned char *s = sc->s;
    unsigned char q = s[sc->i];
    int triple = sc->i + 2 < sc->len && s[sc->i + 1] == q && s[sc->i + 2] == q;
    uint32_t outer = sc->depth;
    sc->i += triple ? 3 : 1;
    sc->tokens += 3;
    while (sc->i < sc->len) {
        unsigned char c = s[sc->i];
        if (c == '\\') {
            sc->tokens++;
            if (++sc->i < sc->len && scan_char(sc) != CR_OK) return SCAN_BAD;
            continue;
        }
        if (c == q && (!triple || (sc->i + 2 < sc->len && s[sc->i + 1] == q && s[sc->i + 2] == q))) {
            sc->i += triple ? 3 : 1;
            break;
        }
        if (c == '\n' && !triple) break;   /* unterminated: tree-sitter reports it */
        if (fstring) {
            sc->tokens++;
            if ((c == '{' || c == '}') && sc->i + 1 < sc->len && s[sc->i + 1] == c) {
                sc->i += 2;
                continue;
            }
            if (c == '(' || c == '[' || c == '{') scan_open(sc);
            else if ((c == ')' || c == ']' || c == '}') && sc->depth > outer) sc->depth--;
        }
        if (scan_char(sc) != CR_OK) return SCAN_BAD;
    }
    sc->depth = outer;
    return CR_OK;
}

/* A string prefix: at most two of r, b, u, f in either case. */
static int string_prefix(const unsigned char *s, size_t n, int *fmt)
{
    if (n > 2) return 0;
    *fmt = 0;
    for (size_t k = 0; k < n; k++) {
        switch (s[k] | 0x20) {
        case 'f': *fmt = 1; break;
        case 'r': case 'b': case 'u': break;
        default: return 0;
        }
    }
    return 1;
}

static void indent_error(scan_ctx *sc, size_t at, const char *msg)
{
    if (sc->indent_at != SIZE_MAX) return;
    sc->indent_at = at;
    sc->indent_msg = msg;
    sc->nind = 0;
}

/* The indentation of the logical line starting at sc->i, as CPython's tokenizer measures and
 * checks it; steps over it. Blank and comment-only lines do not count. */
static void scan_indent(scan_ctx *sc)
{
    const unsigned char *s = sc->s;
    size_t at = sc->i;
    uint32_t col = 0, alt = 0;
    for (; sc->i < sc->len; sc->i++) {
        unsigned char c = s[sc->i];
        if (c == ' ') { col++; alt++; }
        else if (c == '\t') { col = (col / 8 + 1) * 8; alt++; }
        else if (c == '\f') col = alt = 0;
        else break;
        if (col > UINT32_MAX / 2) break;   /* a pathological line: the comparisons still hold */
    }
    if (!sc->nind || sc->i == sc->len || s[sc->i] == '#' || s[sc->i] == '\n' || s[sc->i] == '\r')
        return;
    int top = sc->nind - 1;
    if (col == sc->ind[top]) {
        if (alt != sc->alt[top]) indent_error(sc, at, "inconsistent use of tabs and spaces in indentation");
    } else if (col > sc->ind[top]) {
        if (sc->nind >= PY_MAXINDENT) indent_error(sc, at, TOO_DEEP_MSG);
        else if (alt <= sc->alt[top])
            indent_error(sc, at, "inconsistent use of tabs and spaces in indentation");
        else {
            sc->ind[sc->nind] = col;
            sc->alt[sc->nind++] = alt;
        }
    } else {
        while (sc->nind > 1 && col < sc->ind[sc->nind - 1]) sc->nind--;
        top = sc->nind - 1;
        if (col != sc->ind[top]) sc->nind = 0;   /* a bad dedent: the parse reports it */
        else if (alt != sc->alt[top])
            indent_error(sc, at, "inconsistent use of tabs and spaces in indentation");
    }
}

static cr_code prescan_all(scan_ctx *sc)
{
    const unsigned char *s = sc->s;
    size_t len = sc->len;
    sc->nind = 1;   /* column 0 */
    scan_indent(sc);
    while (sc->i < len) {
        unsigned char c = s[sc->i];
        if (c == '\n') {   /* newline, indent, dedent */
            sc->tokens += 3;
            sc->i++;
            if (sc->depth == 0) scan_indent(sc);
            continue;
        }
        if (c == '\\' && sc->i + 1 < len &&
            (s[sc->i + 1] == '\n' || (s[sc->i + 1] == '\r' && sc->i + 2 < len && s[sc->i + 2] == '\n'))) {
            sc->i += s[sc->i + 1] == '\n' ? 2 : 3;   /* a continuation: the logical line goes on */
            continue;
        }
        if (c == ' ' || c == '\t' || c == '\r' || c == '\f') { sc->i++; continue; }
        if (c == '\v') {   /* the grammar's blank, CPython's tokenizer error like a bad indent */
            indent_error(sc, sc->i++, "invalid non-printable character U+000B");
            continue;
        }
        if (c == '#') {
            const unsigned char *nl = memchr(s + sc->i, '\n', len - sc->i);
            size_t end = nl ? (size_t)(nl - s) : len;
            sc->tokens++;
            for (;;) {
                sc->i += parser_ascii_span(s + sc->i, end - sc->i);
                if (sc->i == end) break;
                if (scan_char(sc) != CR_OK) return SCAN_BAD;
            }
            continue;
        }
        if (parser_ascii_word(c) || c >= 0x80) {   /* a name, a keyword or a string's prefix */
            size_t start = sc->i;
            int fmt;
            for (;;) {
                size_t i = sc->i;   /* a local: a store through sc each byte doubles the cost */
                while (i < len && parser_ascii_word(s[i])) i++;
                sc->i = i;
                if (i == len || s[i] < 0x80) break;
                if (scan_wide(sc) != CR_OK) return SCAN_BAD;
            }
            if (sc->i < len && (s[sc->i] == '"' || s[sc->i] == '\'') &&
                string_prefix(s + start, sc->i - start, &fmt)) {
                if (scan_string(sc, fmt) != CR_OK) return SCAN_BAD;
            } else {
                sc->tokens++;
            }
            continue;
        }
        if (c == '"' || c == '\'') {
            if (scan_string(sc, 0) != CR_OK) return SCAN_BAD;
            continue;
        }
        if (c == 0) return SCAN_BAD;
        if (c == '(' || c == '[' || c == '{') scan_open(sc);
        else {
            if ((c == ')' || c == ']' || c == '}') && sc->depth > 0) sc->depth--;
            sc->tokens++;
        }
        sc->i++;
    }
    return CR_OK;
}

/* Bracket depth and a token count without tree-sitter: deep input must end in microseconds
 * with a LimitError, and must never reach the tree-sitter abort described above. */
static cr_code prescan(const char *src, size_t len, uint32_t max_depth, cr_error *indent,
                       cr_error *err)
{
    scan_ctx sc = { .s = (const unsigned char *)src, .len = len, .max_depth = max_depth,
                    .deep_at = SIZE_MAX, .py_deep_at = SIZE_MAX, .indent_at = SIZE_MAX };
    int line, col;
    indent->code = CR_OK;
    if (prescan_all(&sc) != CR_OK) {
        /* A NUL byte anywhere, even after the bad byte, is what CPython reports. */
        const char *nul = sc.s[sc.i] ? memchr(src + sc.i, '\0', len - sc.i) : src + sc.i;
        if (nul) {
            parser_position_of(src, (size_t)(nul - src), &line, &col);
            return cr_error_set(err, CR_ESYNTAX, line, col, "source code cannot contain null bytes");
        }
        parser_position_of(src, sc.i, &line, &col);
        return cr_error_set(err, CR_ESYNTAX, line, col, "invalid UTF-8 byte 0x%02x", sc.s[sc.i]);
    }
    if (sc.py_deep_at != SIZE_MAX && sc.py_deep_at <= sc.deep_at) {
        parser_position_of(src, sc.py_deep_at, &line, &col);
        return cr_error_set(err, CR_ESYNTAX, line, col, "too many nested parentheses");
    }
    if (sc.deep_at != SIZE_MAX) {
        parser_position_of(src, sc.deep_at, &line, &col);
        return cr_error_set(err, CR_ELIMIT, line, col, "nesting deeper than %u (max_depth)",
                            (unsigned)max_depth);
    }
    if (sc.tokens > PARSER_MAX_TOKENS)
        return cr_error_set(err, CR_ELIMIT, 0, 0,
                            "more than %u tokens (the parser's limit)", PARSER_MAX_TOKENS);
    if (sc.indent_at != SIZE_MAX) {
        parser_position_of(src, sc.indent_at, &line, &col);
        /* The grammar's scanner cannot hold that many indents either: its parse of such a
         * source fails at line 1, so there is no earlier syntax error to find. */
        if (sc.indent_msg == TOO_DEEP_MSG)
            return cr_error_set(err, CR_ESYNTAX, line, col, "%s", sc.indent_msg);
        cr_error_set(indent, CR_ESYNTAX, line, col, "%s", sc.indent_msg);
    }
    return CR_OK;
}

/* CPython reports a syntax error the parser meets before the line of an indentation error
 * (`indent`, noted by the prescan), and the indentation error otherwise: whatever the parse
 * of the rest came to (its own later syntax error, a limit, or success). */
static cr_code indent_first(const cr_error *indent, cr_code rc, cr_error *err)
{
    if (rc == CR_ESYNTAX && (err->line < indent->line ||
                             (err->line == indent->line && err->col < indent->col)))
        return rc;
    *err = *indent;
    return CR_ESYNTAX;
}

/* A copy of src where each CR not followed by LF is a LF: CPython ends a line there, the
 * grammar does not. Same length, so every line and column stays CPython's. NULL: none. */
static char *lone_cr_to_lf(const char *src, size_t len, int *nomem)
{
    const char *cr = memchr(src, '\r', len);
    char *copy;
    *nomem = 0;
    while (cr && (size_t)(cr - src) + 1 < len && cr[1] == '\n')
        cr = memchr(cr + 2, '\r', len - (size_t)(cr + 2 - src));
    if (!cr) return NULL;
    if (!(copy = malloc(len))) { *nomem = 1; return NULL; }
    memcpy(copy, src, len);
    for (size_t i = (size_t)(cr - src); i < len; i++)
        if (copy[i] == '\r' && (i + 1 == len || copy[i + 1] != '\n')) copy[i] = '\n';
    return copy;
}

static int is_error_node(TSNode n)
{
    return ts_node_is_missing(n) || ts_node_symbol(n) == (TSSymbol)-1;   /* ERROR */
}

/* The first ERROR or MISSING node in document order at or below `root` (strictly below when
 * `below`), walking only into subtrees that hold one; iterative: the tree may be deep. */
static int first_error(TSNode root, int below, TSNode *out)
{
    TSTreeCursor cur = ts_tree_cursor_new(root);
    int found = 0;
    if (below && !ts_tree_cursor_goto_first_child(&cur)) goto out;
    for (;;) {
        TSNode n = ts_tree_cursor_current_node(&cur);
        if (is_error_node(n)) { *out = n; found = 1; break; }
        if (ts_node_has_error(n) && ts_tree_cursor_goto_first_child(&cur)) continue;
        while (!ts_tree_cursor_goto_next_sibling(&cur))
            if (!ts_tree_cursor_goto_parent(&cur) || ts_node_eq(ts_tree_cursor_current_node(&cur), root))
                goto out;
    }
out:
    ts_tree_cursor_delete(&cur);
    return found;
}

static TSNode first_leaf(TSNode n)
{
    while (ts_node_child_count(n) > 0) n = ts_node_child(n, 0);
    return n;
}

/* Brackets are the most common cause of an ERROR: the first closing bracket that closes
 * nothing, or else the first opening one left open, among the ERROR's tokens. */
static cr_code unbalanced(const char *src, TSNode e, cr_error *err)
{
    enum { MAXOPEN = 64 };
    TSNode open[MAXOPEN];
    size_t nopen = 0, deep = 0;   /* `deep` counts opens past MAXOPEN */
    TSNode first_open = { 0 };
    int have_first = 0;
    cr_code rc = CR_OK;
    TSTreeCursor cur = ts_tree_cursor_new(e);
    for (;;) {
        TSNode n = ts_tree_cursor_current_node(&cur);
        if (ts_tree_cursor_goto_first_child(&cur)) continue;
        if (!ts_node_is_named(n) && !ts_node_is_missing(n) && ts_node_end_byte(n) > ts_node_start_byte(n)) {
            char c = src[ts_node_start_byte(n)];
            if (c == '(' || c == '[' || c == '{') {
                if (nopen < MAXOPEN) open[nopen++] = n;
                else deep++;
            } else if (c == ')' || c == ']' || c == '}') {
                if (deep) deep--;
                else if (nopen) nopen--;
                else {
                    TSPoint p = ts_node_start_point(n);
                    rc = cr_error_set(err, CR_ESYNTAX, (int)p.row + 1, (int)p.column + 1,
                                      "unmatched '%c'", c);
                    break;
                }
            }
        }
        while (!ts_tree_cursor_goto_next_sibling(&cur))
            if (!ts_tree_cursor_goto_parent(&cur)) goto done;
    }
done:
    if (rc == CR_OK && nopen) { first_open = open[0]; have_first = 1; }
    if (have_first) {
        TSPoint p = ts_node_start_point(first_open);
        rc = cr_error_set(err, CR_ESYNTAX, (int)p.row + 1, (int)p.column + 1,
                          "'%c' was never closed", src[ts_node_start_byte(first_open)]);
    }
    ts_tree_cursor_delete(&cur);
    return rc;
}

/* CPython's tokenizer error for a string literal opening at src[a] that never closes: 0 when
 * it closes (or is no string). Its line is where the tokenizer gave up: the end of the line
 * (a backslash continues it) or, for a triple-quoted one, the last line of the source. */
static int unterminated(const char *src, size_t len, size_t a, int line, cr_error *err)
{
    size_t i = a, k = 0;
    while (k < 2 && i < len && strchr("rRbBuUfF", src[i]) && src[i]) i++, k++;
    if (i >= len || (src[i] != '\'' && src[i] != '"')) return 0;
    char q = src[i];
    int triple = i + 2 < len && src[i + 1] == q && src[i + 2] == q;
    for (i += triple ? 3 : 1; i < len; i++) {
        if (src[i] == '\\' && i + 1 < len) {
            line += src[++i] == '\n';
            continue;
        }
        if (src[i] == q && (!triple || (i + 2 < len && src[i + 1] == q && src[i + 2] == q)))
            return 0;
        if (src[i] == '\n') {
            if (!triple) break;
            if (i + 1 < len) line++;
        }
    }
    cr_error_set(err, CR_ESYNTAX, err->line, err->col,
                 "unterminated %sstring literal (detected at line %d)", triple ? "triple-quoted " : "",
                 line);
    return 1;
}

/* Where CPython's parser stops. tree-sitter's ERROR node starts where its recovery began,
 * often the statement's first token ("x = 1 +* 2" at the x), but its parser detected the
 * error at one token, the lookahead it could not take: parsing again with a logger finds it.
 * Before that, a line break outside brackets that the grammar's scanner skipped (it skips
 * one where a NEWLINE token cannot follow: "y = 2 *" NEWLINE "z") is where CPython's
 * tokenizer ends the logical line, and so its error. */
typedef struct {
    const char *src;
    size_t len;
    size_t row_off;             /* the offset of line `row` */
    uint32_t row;
    size_t lex_at;              /* where the lexer began the lookahead (its padding first) */
    int zero_width;             /* the last lookahead was a NEWLINE, INDENT or DEDENT token */
    size_t newline_at;          /* the first skipped line break CPython would end a line at */
    size_t token_at, token_end; /* the lookahead at the first error; SIZE_MAX: none yet */
    int at_end;                 /* ... the end of the input */
    size_t cancel;              /* tree-sitter's cancellation flag: set once the point is known */
} error_probe;

static size_t probe_offset(error_probe *p, uint32_t row, uint32_t col)
{
    if (row < p->row) p->row = 0, p->row_off = 0;
    while (p->row < row) {
        const char *nl = memchr(p->src + p->row_off, '\n', p->len - p->row_off);
        if (!nl) break;
        p->row_off = (size_t)(nl - p->src) + 1;
        p->row++;
    }
    return p->row_off + col <= p->len ? p->row_off + col : p->len;
}

/* The bracket depth at `off` (outside any string), as the pre-scan counts it. */
static uint32_t depth_at(const char *src, size_t off)
{
    scan_ctx sc = { .s = (const unsigned char *)src, .len = off, .max_depth = UINT32_MAX,
                    .deep_at = SIZE_MAX, .py_deep_at = SIZE_MAX, .indent_at = SIZE_MAX };
    (void)prescan_all(&sc);
    return sc.depth;
}

static void probe_log(void *payload, TSLogType type, const char *msg)
{
    error_probe *p = payload;
    unsigned row, col, size;
    char sym[32];
    if (type != TSLogTypeParse || p->cancel) return;
    if (sscanf(msg, "lex_external state:%*u, row:%u, column:%u", &row, &col) == 2 ||
        sscanf(msg, "lex_internal state:%*u, row:%u, column:%u", &row, &col) == 2) {
        p->lex_at = probe_offset(p, row, col);
    } else if (sscanf(msg, "lexed_lookahead sym:%31[^,], size:%u", sym, &size) == 2) {
        size_t a = p->lex_at, b = a + size <= p->len ? a + size : p->len, i = a;
        /* The token itself starts past its padding: blanks, line breaks, continuations. */
        while (i < b && strchr(" \t\f\r\n\\", p->src[i])) i++;
        int zero = strcmp(sym, "_newline") == 0 || strcmp(sym, "_indent") == 0 ||
                   strcmp(sym, "_dedent") == 0;
        /* A comment is transparent: a line of its own is a blank one, and a line break
         * after one ends the line it ends. */
        if (strcmp(sym, "comment") == 0) return;
        if (p->newline_at == SIZE_MAX && !p->zero_width && !zero) {
            const char *nl = memchr(p->src + a, '\n', i - a);
            size_t at = nl ? (size_t)(nl - p->src) : SIZE_MAX;
            int continued = at != SIZE_MAX && at > 0 &&
                            (p->src[at - 1] == '\\' ||
                             (p->src[at - 1] == '\r' && at > 1 && p->src[at - 2] == '\\'));
            if (at != SIZE_MAX && !continued && depth_at(p->src, at) == 0) p->newline_at = at;
        }
        p->zero_width = zero;
        p->token_at = i;
        p->token_end = b;
        p->at_end = strcmp(sym, "end") == 0;
    } else if (strcmp(msg, "detect_error") == 0) {
        p->cancel = 1;
    } else if (strcmp(msg, "skip_unrecognized_character") == 0) {
        /* No token starts here ("$"): the error is that character. */
        size_t i = p->lex_at;
        while (i < p->len && strchr(" \t\f\r\n\\", p->src[i])) i++;
        p->token_at = i;
        p->token_end = i < p->len ? i + 1 : i;
        while (p->token_end < p->len && ((unsigned char)p->src[p->token_end] & 0xC0) == 0x80)
            p->token_end++;
        p->at_end = 0;
        p->cancel = 1;
    }
}

/* The first error's point, SIZE_MAX when the probe found none, and in *end where its token
 * ends: *end == the point for a line break (CPython's NEWLINE) or the end of the input. */
static size_t error_point(TSParser *ts, const char *src, size_t len, size_t *end)
{
    error_probe p = { .src = src, .len = len, .newline_at = SIZE_MAX, .token_at = SIZE_MAX };
    TSLogger saved = ts_parser_logger(ts);
    ts_parser_set_logger(ts, (TSLogger){ &p, probe_log });
    ts_parser_set_cancellation_flag(ts, &p.cancel);
    TSTree *t = ts_parser_parse_string(ts, NULL, src, (uint32_t)len);
    ts_parser_set_cancellation_flag(ts, NULL);
    ts_parser_set_logger(ts, saved);
    ts_parser_reset(ts);
    if (t) ts_tree_delete(t);
    if (!p.cancel || p.token_at == SIZE_MAX) return SIZE_MAX;
    if (p.newline_at != SIZE_MAX && p.newline_at < p.token_at) return *end = p.newline_at;
    *end = p.at_end ? p.token_at : p.token_end;
    return p.token_at;
}

/* Whether the logical line holding `at` begins with a compound statement's keyword (whose
 * header must end in ':'): CPython's "expected ':'" when it ends first. */
static int compound_header(const char *src, size_t at)
{
    static const char *const kw[] = { "if", "elif", "else", "while", "for", "def", "class",
                                      "with", "try", "except", "finally", "async" };
    size_t a = at;
    while (a > 0 && src[a - 1] != '\n') a--;
    while (src[a] == ' ' || src[a] == '\t' || src[a] == '\f') a++;
    for (size_t k = 0; k < sizeof kw / sizeof *kw; k++) {
        size_t n = strlen(kw[k]);
        if (strncmp(src + a, kw[k], n) == 0 && !parser_ascii_word((unsigned char)src[a + n]))
            return 1;
    }
    return 0;
}

/* "unexpected 'TOKEN'" for the token src[a, b) at line:col (its first line, at most 20
 * bytes of whole characters), or "invalid syntax" when nothing of it is left to show. */
static cr_code unexpected(const char *src, size_t a, size_t b, int line, int col, cr_error *err)
{
    size_t n = b - a;
    const char *nl = memchr(src + a, '\n', n);
    if (nl) n = (size_t)(nl - (src + a));
    if (n > 20) n = 20;
    while (n > 0 && a + n < b && ((unsigned char)src[a + n] & 0xC0) == 0x80) n--;
    return n ? cr_error_set(err, CR_ESYNTAX, line, col, "unexpected '%.*s'", (int)n, src + a)
             : cr_error_set(err, CR_ESYNTAX, line, col, "invalid syntax");
}

static cr_code syntax_error(TSParser *ts, const char *src, size_t len, TSNode root,
                            cr_error *err)
{
    TSNode e;
    cr_code rc;
    size_t end, at;
    int line, col;
    /* A MISSING hidden token (a NEWLINE: "(1,\n 2) 3") is no node a cursor visits. */
    if (!first_error(root, 0, &e)) {
        if ((at = error_point(ts, src, len, &end)) == SIZE_MAX) at = end = 0;
        parser_position_of(src, at, &line, &col);
        return unexpected(src, at, end, line, col, err);
    }
    /* An ERROR that wraps other ERROR/MISSING nodes: the inner one is the precise spot
     * (e.g. the "$" in "y = $"). */
    TSNode inner;
    if (!ts_node_is_missing(e) && first_error(e, 1, &inner)) e = inner;
    TSPoint p = ts_node_start_point(e);
    line = (int)p.row + 1;
    col = (int)p.column + 1;
    if (ts_node_is_missing(e)) {
        const char *t = ts_node_type(e);
        return ts_node_is_named(e)
            ? cr_error_set(err, CR_ESYNTAX, line, col, "missing %s", t)
            : cr_error_set(err, CR_ESYNTAX, line, col, "missing '%s'", t);
    }
    if ((rc = unbalanced(src, e, err)) != CR_OK) return rc;
    /* A string left open where the ERROR begins is the tokenizer's error, which comes first. */
    TSNode leaf = first_leaf(e);
    p = ts_node_start_point(leaf);
    uint32_t a = ts_node_start_byte(leaf), b = ts_node_end_byte(leaf);
    err->line = (int)p.row + 1;
    err->col = (int)p.column + 1;
    if (unterminated(src, len, a, err->line, err)) return CR_ESYNTAX;
    if ((at = error_point(ts, src, len, &end)) != SIZE_MAX) {
        parser_position_of(src, at, &line, &col);
        if (end == at)      /* a line break or the end of the input */
            return cr_error_set(err, CR_ESYNTAX, line, col, at < len && compound_header(src, at)
                                ? "expected ':'" : "invalid syntax");
        err->line = line;
        err->col = col;
        if (unterminated(src, len, at, line, err)) return CR_ESYNTAX;
        return unexpected(src, at, end, line, col, err);
    }
    return unexpected(src, a, b, err->line, err->col, err);
}

/* ---- one TSParser per thread ------------------------------------------------------------ */

/* A TSParser costs ~10k instructions to make and free, about as much as lowering a short
 * program, and it keeps its stacks warm between parses; lowering's buffers likewise. The
 * engine is shared by threads, so each thread gets its own, freed at thread exit by the
 * key's destructor. */
typedef struct {
    TSParser *ts;
    parser_scratch sc;
} thread_state;

static pthread_key_t tls_key;
static pthread_once_t tls_once = PTHREAD_ONCE_INIT;
static int tls_ok;

static void state_free(void *p)
{
    thread_state *st = p;
    if (!st) return;
    ts_parser_delete(st->ts);
    parser_scratch_free(&st->sc);
    free(st);
}

static void tls_init(void)
{
    tls_ok = pthread_key_create(&tls_key, state_free) == 0;
}

/* This thread's state, or NULL when there is no memory for one (*owned -1) or tree-sitter
 * refused the grammar. `*owned` is set when it could not be kept for the thread (no key): the
 * caller frees it with state_free(). */
static thread_state *thread_state_get(int *owned)
{
    thread_state *st;
    *owned = 0;
    pthread_once(&tls_once, tls_init);
    if (tls_ok && (st = pthread_getspecific(tls_key))) return st;
    if (!(st = calloc(1, sizeof *st))) {
        *owned = -1;
        return NULL;
    }
    if (!(st->ts = ts_parser_new()) || !ts_parser_set_language(st->ts, tree_sitter_python())) {
        state_free(st);
        return NULL;
    }
    if (!tls_ok || pthread_setspecific(tls_key, st) != 0) *owned = 1;
    return st;
}

/* What both paths do with the IR they built: CPython's checks and normalisation, the cookie's
 * reason, then the whitelist. */
static cr_code finish(ir_module *m, const char *src, size_t len, const parser_cookie *ck,
                      cr_error *err)
{
    cr_code rc;
    if ((rc = parser_validate(m, src, len, err)) != CR_OK) return rc;
    if (ck->line) {
        char code[64];
        snprintf(code, sizeof code, "coding:%s", ck->name);
        if ((rc = ir_add_reason(m, code, ck->line, ck->col, ck->text, ck->text_len)) != CR_OK)
            return cr_error_set(err, rc, 0, 0, "reason list");
    }
    return parser_whitelist(m, src, len, err);
}

/* Under a cookie that is not UTF-8, our reading of the bytes says nothing about CPython's,
 * syntax errors included: the module is the cookie's reason alone, for the sandbox. */
static cr_code cookie_only(const parser_cookie *ck, const cr_limits *lim, ir_module **out,
                           cr_error *err)
{
    char code[64];
    ir_module *m = ir_module_new(lim->max_memory);
    snprintf(code, sizeof code, "coding:%s", ck->name);
    if (!m || !(m->root = ir_node_new(m, IR_MODULE, 1, 1, 0)) ||
        ir_add_reason(m, code, ck->line, ck->col, ck->text, ck->text_len) != CR_OK) {
        ir_module_free(m);
        return cr_error_set(err, CR_ENOMEM, 0, 0, "IR module");
    }
    *out = m;
    return CR_OK;
}

#define SPLITS_MAX 16   /* statements tree-sitter read on across a line break, parsed again */

static cr_code parse_python(const char *src, size_t len, const cr_limits *lim, int fast,
                            ir_module **out, cr_error *err)
{
    thread_state *st = NULL;
    TSTree *tree = NULL;
    ir_module *m = NULL;
    cr_code rc;
    int owned = 0, nomem, cookie, early;
    cr_error indent;
    parser_cookie ck;
    char *copy, *split_src = NULL;
    const char *ts_src;
    size_t ts_len;

    *out = NULL;
    if (!src && len) return cr_error_set(err, CR_EUSAGE, 0, 0, "no source");
    if (!src) src = "";
    if ((lim->max_source && len > lim->max_source) || len > UINT32_MAX)
        return cr_error_set(err, CR_ELIMIT, 0, 0, "source is %zu bytes, more than %zu (max_source)",
                            len, lim->max_source);
    if ((copy = lone_cr_to_lf(src, len, &nomem))) src = copy;
    if (nomem) return cr_error_set(err, CR_ENOMEM, 0, 0, "source copy");
    indent.code = CR_OK;
    if ((cookie = parser_coding(src, len, &ck, err)) < 0) {
        rc = CR_ESYNTAX;
        goto out;
    }
    if (!(st = thread_state_get(&owned))) {
        rc = owned < 0 ? cr_error_set(err, CR_ENOMEM, 0, 0, "parser state")
                       : cr_error_set(err, CR_EINTERNAL, 0, 0,
                                      "tree-sitter refused the Python grammar");
        owned = 0;
        goto out;
    }
    /* The common subset skips tree-sitter (parser/fast.c); anything else is declined. On
     * ASCII without NUL bytes, in at most a third of the token limit (the pre-scan counts at
     * most three tokens a byte), the pre-scan finds nothing in what the fast path accepts: it
     * declines deeper brackets, and tabs, form feeds and vertical tabs outside strings. So
     * such a source goes there first, and the pre-scan only runs when it declines. */
    early = fast && len <= PARSER_MAX_TOKENS / 3 && parser_ascii_span((const unsigned char *)src, len) == len;
    if (!early && (rc = prescan(src, len, lim->max_depth, &indent, err)) != CR_OK) goto out;
    if (fast && indent.code == CR_OK &&
        (rc = parser_fast(src, len, lim, &st->sc, &m, NULL)) != PARSER_FAST_DECLINED) {
        if (rc == CR_OK && (rc = finish(m, src, len, &ck, err)) == CR_OK) { *out = m; m = NULL; }
        goto out;
    }
    if (early && (rc = prescan(src, len, lim->max_depth, &indent, err)) != CR_OK) goto out;
    ts_src = src;
    ts_len = len;
    /* tree-sitter-python 0.23.6's external scanner keeps `inside_f_string` across parses
     * (its deserialize clears only the stacks), so a program ending inside an unclosed
     * f-string would break every later parse on this thread: setting the language again
     * gives the parser a fresh scanner. */
    if (!ts_parser_set_language(st->ts, tree_sitter_python())) {
        rc = cr_error_set(err, CR_EINTERNAL, 0, 0, "tree-sitter refused the Python grammar");
        goto out;
    }
    /* tree-sitter reads a simple statement on across a line break outside brackets
     * (`x = a, b` NEWLINE `[c] = d` as one subscript); CPython's tokenizer ends it there. The
     * lowering says where, and the source is parsed again with a ';' at that point, which
     * reads as CPython does and moves no line or column: the IR is the same. When that
     * fails too, the program really is wrong there, and the first error stands. */
    for (int tries = 0;; tries++) {
        cr_error again = { 0 };
        uint32_t split;
        char *joined;
        if (!(tree = ts_parser_parse_string(st->ts, NULL, ts_src, (uint32_t)ts_len))) {
            ts_parser_reset(st->ts);
            rc = cr_error_set(err, CR_EINTERNAL, 0, 0, "tree-sitter returned no tree");
            goto out;
        }
        TSNode root = ts_tree_root_node(tree);
        if (ts_node_has_error(root)) {
            rc = tries ? CR_ESYNTAX : syntax_error(st->ts, src, len, root, err);
            goto out;
        }
        if (!(m = ir_module_new(lim->max_memory))) {
            rc = cr_error_set(err, CR_ENOMEM, 0, 0, "IR module");
            goto out;
        }
        rc = parser_lower(ts_src, ts_len, root, lim, &st->sc, m, tries ? &again : err, &split);
        if (rc == CR_ESYNTAX && split != UINT32_MAX && tries < SPLITS_MAX) {
            if (!(joined = malloc(ts_len + 2))) {
                rc = cr_error_set(err, CR_ENOMEM, 0, 0, "source copy");
                goto out;
            }
            memcpy(joined, ts_src, split);
            joined[split] = ';';
            memcpy(joined + split + 1, ts_src + split, ts_len - split);
            joined[++ts_len] = '\0';
            free(split_src);
            ts_src = split_src = joined;
            ts_tree_delete(tree);
            tree = NULL;
            ir_module_free(m);
            m = NULL;
            continue;
        }
        if (rc != CR_OK && tries && rc != CR_ESYNTAX) *err = again;
        if (rc != CR_OK) goto out;
        if (tries) memset(err, 0, sizeof *err);
        break;
    }
    if ((rc = finish(m, src, len, &ck, err)) != CR_OK) goto out;
    *out = m;
    m = NULL;
out:
    if (indent.code != CR_OK && rc != CR_ENOMEM && rc != CR_EINTERNAL &&
        (rc = indent_first(&indent, rc, err)) != CR_OK && *out) {
        ir_module_free(*out);
        *out = NULL;
    }
    if (rc == CR_ESYNTAX && cookie > 0) rc = cookie_only(&ck, lim, out, err);
    ir_module_free(m);
    if (tree) ts_tree_delete(tree);
    if (owned) state_free(st);
    free(copy);
    free(split_src);
    return rc;
}

cr_code parser_parse_python(const char *src, size_t len, const cr_limits *lim,
                            ir_module **out, cr_error *err)
{
    return parse_python(src, len, lim, 1, out, err);
}

cr_code parser_parse_python_ts(const char *src, size_t len, const cr_limits *lim,
                               ir_module **out, cr_error *err)
{
    return parse_python(src, len, lim, 0, out, err);
}
