/* dsl/parse.c: the FinQA DSL parser, the --lang auto test, and the decimal scanner that
 * program arguments and table cells share. */
#include "dsl/dsl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const op_names[DSL_OP_END] = {
    [DSL_ADD] = "add",           [DSL_SUBTRACT] = "subtract",
    [DSL_MULTIPLY] = "multiply", [DSL_DIVIDE] = "divide",
    [DSL_EXP] = "exp",           [DSL_GREATER] = "greater",
    [DSL_TABLE_MAX] = "table_max", [DSL_TABLE_MIN] = "table_min",
    [DSL_TABLE_SUM] = "table_sum", [DSL_TABLE_AVERAGE] = "table_average",
};

#define OP_LIST "add, subtract, multiply, divide, exp, greater, table_max, table_min, " \
                "table_sum, table_average"
#define ARG_KINDS "a number, #N, const_N or const_m1"
/* Longest '#N' index we read; more digits than this cannot name a step of a bounded program. */
#define REF_MAX_DIGITS 9

const char *dsl_op_name(dsl_op op)
{
    return (unsigned)op < DSL_OP_END ? op_names[op] : "?";
}

int dsl_op_is_table(dsl_op op)
{
    return op >= DSL_TABLE_MAX && op <= DSL_TABLE_AVERAGE;
}

static int is_digit(char c) { return c >= '0' && c <= '9'; }
static int is_ident_start(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
static int is_ident(char c) { return is_ident_start(c) || is_digit(c); }
static int is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/* -1 when s[0..len) is not an operation name. */
static int op_lookup(const char *s, size_t len)
{
    for (int i = 0; i < DSL_OP_END; i++)
        if (strlen(op_names[i]) == len && memcmp(op_names[i], s, len) == 0) return i;
    return -1;
}

/* ---- decimals -------------------------------------------------------------------------- */

size_t dsl_scan_decimal(const char *s, size_t len, cr_buf *out)
{
    size_t i = 0;
    while (i < len && is_digit(s[i])) i++;
    size_t int_end = i;
    size_t frac_start = 0, frac_end = 0;
    /* Thousands groups only after a first group of 1-3 digits not starting with 0, so
     * "12345,678" and "0,5" stay two numbers. */
    size_t groups_end = i;
    if (int_end >= 1 && int_end <= 3 && s[0] != '0') {
        while (groups_end + 4 <= len && s[groups_end] == ',' && is_digit(s[groups_end + 1]) &&
               is_digit(s[groups_end + 2]) && is_digit(s[groups_end + 3]) &&
               (groups_end + 4 == len || !is_digit(s[groups_end + 4])))
            groups_end += 4;
    }
    i = groups_end;
    if (i + 1 < len && s[i] == '.' && is_digit(s[i + 1])) {
        frac_start = ++i;
        while (i < len && is_digit(s[i])) i++;
        frac_end = i;
    }
    if (int_end == 0 && frac_end == 0) return 0;

    /* Canonical text: no leading zeros ("007" is not a Python literal), separators gone. */
    size_t lead = 0;
    while (lead + 1 < int_end && s[lead] == '0') lead++;
    cr_code rc = CR_OK;
    if (int_end == 0) rc = cr_buf_putc(out, '0');
    else rc = cr_buf_put(out, s + lead, int_end - lead);
    for (size_t g = int_end; g < groups_end && rc == CR_OK; g += 4)
        rc = cr_buf_put(out, s + g + 1, 3);
    if (frac_end && rc == CR_OK) rc = cr_buf_put(out, s + frac_start - 1, frac_end - frac_start + 1);
    if (rc != CR_OK) out->truncated = 1;
    return rc == CR_OK ? i : 0;
}

cr_code dsl_decimal_percent(cr_buf *out, size_t from)
{
    if (from > out->len) return CR_EINTERNAL;
    size_t n = out->len - from;
    char *t = malloc(n + 1);
    if (!t) return CR_ENOMEM;
    memcpy(t, out->p + from, n);
    t[n] = '\0';
    const char *dot = memchr(t, '.', n);
    size_t ip = dot ? (size_t)(dot - t) : n;         /* digits before the point */
    char *d = malloc(n + 1);                          /* all digits, point removed */
    if (!d) { free(t); return CR_ENOMEM; }
    size_t nd = 0;
    for (size_t i = 0; i < n; i++)
        if (t[i] != '.') d[nd++] = t[i];
    free(t);

    out->len = from;
    cr_code rc = CR_OK;
    /* The point moves two places left: new integer part is d[0 .. ip-2). */
    size_t k = 0;
    if (ip <= 2) {
        rc = cr_buf_puts(out, "0.");
        for (size_t z = ip; z < 2 && rc == CR_OK; z++) rc = cr_buf_putc(out, '0');
    } else {
        while (k + 1 < ip - 2 && d[k] == '0') k++;   /* leading zeros, keep one */
        rc = cr_buf_put(out, d + k, ip - 2 - k);
        if (rc == CR_OK) rc = cr_buf_putc(out, '.');
        k = ip - 2;
    }
    if (rc == CR_OK) rc = cr_buf_put(out, d + k, nd - k);
    free(d);
    if (rc != CR_OK) return rc;
    /* Drop needless zeros after the point, and the point itself when nothing follows. */
    while (out->len > from && out->p[out->len - 1] == '0') out->len--;
    if (out->len > from && out->p[out->len - 1] == '.') out->len--;
    if (out->len == from) rc = cr_buf_putc(out, '0');
    out->p[out->len] = '\0';
    return rc;
}

/* ---- the parser ------------------------------------------------------------------------ */

typedef struct {
    const char *s;
    size_t len, pos;
    int line;
    size_t line_start;
    dsl_program *p;
    size_t steps_cap;
    cr_buf tmp;
    int grouped;          /* the last number read had thousands separators */
    cr_error *err;
} pstate;

static int col_at(const pstate *ps) { return (int)(ps->pos - ps->line_start) + 1; }

static void advance(pstate *ps, size_t n)
{
    for (size_t i = 0; i < n && ps->pos < ps->len; i++) {
        if (ps->s[ps->pos++] == '\n') {
            ps->line++;
            ps->line_start = ps->pos;
        }
    }
}

static void skip_ws(pstate *ps)
{
    while (ps->pos < ps->len && is_space(ps->s[ps->pos])) advance(ps, 1);
}

static char peek(const pstate *ps) { return ps->pos < ps->len ? ps->s[ps->pos] : '\0'; }

/* What stands at the current position, for messages: "'x'", "the end of the program". */
static const char *found(const pstate *ps, char *buf, size_t cap)
{
    if (ps->pos >= ps->len) return "the end of the program";
    size_t n = 0;
    while (ps->pos + n < ps->len && n < 12 && (is_ident(ps->s[ps->pos + n]) || n == 0) &&
           ps->s[ps->pos + n] != '\n')
        n++;
    /* Keep UTF-8 sequences whole. */
    while (ps->pos + n < ps->len && ((unsigned char)ps->s[ps->pos + n] & 0xC0) == 0x80 && n < 16)
        n++;
    snprintf(buf, cap, "'%.*s'", (int)n, ps->s + ps->pos);
    return buf;
}

static cr_code fail(pstate *ps, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static cr_code fail(pstate *ps, const char *fmt, ...)
{
    /* At the end of the text, point just past its last non-blank byte, not at the start of
     * the line after a trailing newline. */
    if (ps->pos >= ps->len) {
        size_t end = ps->len;
        while (end > 0 && is_space(ps->s[end - 1])) end--;
        ps->pos = 0;
        ps->line = 1;
        ps->line_start = 0;
        advance(ps, end);
    }
    va_list ap;
    va_start(ap, fmt);
    cr_error_vset(ps->err, CR_ESYNTAX, ps->line, col_at(ps), fmt, ap);
    va_end(ap);
    return CR_ESYNTAX;
}

static cr_code fail_arg(pstate *ps, const dsl_arg *a, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static cr_code fail_arg(pstate *ps, const dsl_arg *a, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cr_error_vset(ps->err, CR_ESYNTAX, a->line, a->col, fmt, ap);
    va_end(ap);
    return CR_ESYNTAX;
}

static cr_code nomem(pstate *ps)
{
    return cr_error_set(ps->err, CR_ENOMEM, 0, 0, "dsl: out of memory");
}

static void arg_begin(const pstate *ps, dsl_arg *a)
{
    a->line = ps->line;
    a->col = col_at(ps);
}

static void arg_end(const pstate *ps, dsl_arg *a)
{
    a->end_line = ps->line;
    a->end_col = col_at(ps);
}

/* After an argument only white space, ',' or ')' may follow. */
static cr_code expect_arg_end(pstate *ps, const char *what)
{
    char c = peek(ps);
    if (c == '\0' || c == ',' || c == ')' || is_space(c)) return CR_OK;
    char fb[40];
    return fail(ps, "unexpected %s after %s: expected ',' or ')'", found(ps, fb, sizeof fb), what);
}

static int at_minus_sign(const pstate *ps)
{
    return ps->pos + 3 <= ps->len && memcmp(ps->s + ps->pos, DSL_U_MINUS, 3) == 0;
}

static cr_code parse_number(pstate *ps, dsl_arg *a)
{
    int neg = 0;
    char c = peek(ps);
    if (c == '-' || c == '+' || at_minus_sign(ps)) {
        neg = c != '+';
        advance(ps, c == '-' || c == '+' ? 1 : 3);
        if (!is_digit(peek(ps)) && peek(ps) != '.') {
            char fb[40];
            return fail(ps, "expected a number after '%s', found %s",
                        c == '+' ? "+" : "-", found(ps, fb, sizeof fb));
        }
    }
    cr_buf_reset(&ps->tmp);
    size_t n = dsl_scan_decimal(ps->s + ps->pos, ps->len - ps->pos, &ps->tmp);
    if (n == 0) {
        if (ps->tmp.truncated) return nomem(ps);
        char fb[40];
        return fail(ps, "expected " ARG_KINDS ", found %s", found(ps, fb, sizeof fb));
    }
    ps->grouped = memchr(ps->s + ps->pos, ',', n) != NULL;
    advance(ps, n);
    if (peek(ps) == '%') {
        advance(ps, 1);
        cr_code rc = dsl_decimal_percent(&ps->tmp, 0);
        if (rc != CR_OK) return nomem(ps);
    }
    cr_code rc = expect_arg_end(ps, "the number");
    if (rc != CR_OK) return rc;
    a->kind = DSL_ARG_NUM;
    /* A zero has no sign: the IR should not make a -0.0 out of "-0". */
    int zero = strspn(ps->tmp.p, "0.") == ps->tmp.len;
    a->neg = neg && !zero;
    a->value = cr_arena_strndup(&ps->p->arena, ps->tmp.p, ps->tmp.len);
    return a->value ? CR_OK : nomem(ps);
}

static cr_code parse_ref(pstate *ps, dsl_arg *a, size_t step)
{
    advance(ps, 1);   /* '#' */
    size_t d = 0;
    while (ps->pos + d < ps->len && is_digit(ps->s[ps->pos + d])) d++;
    if (d == 0) {
        char fb[40];
        return fail(ps, "expected a step number after '#', found %s", found(ps, fb, sizeof fb));
    }
    if (d > REF_MAX_DIGITS) return fail(ps, "step number too long after '#'");
    uint32_t n = 0;
    for (size_t i = 0; i < d; i++) n = n * 10 + (uint32_t)(ps->s[ps->pos + i] - '0');
    if (n >= step && step == 0)
        return fail_arg(ps, a, "#%u refers to no step: the first step has no earlier result", n);
    if (n >= step)
        return fail_arg(ps, a, "#%u refers to a step that is not earlier: this is step #%zu, "
                               "so expected #0 to #%zu", n, step, step - 1);
    if (ps->p->steps[n].op == DSL_GREATER)
        return fail_arg(ps, a, "#%u is the yes/no result of greater: expected a number here", n);
    advance(ps, d);
    a->kind = DSL_ARG_REF;
    a->ref = n;
    return expect_arg_end(ps, "the step reference");
}

static size_t count_digits(const char *s, size_t len)
{
    size_t n = 0;
    while (n < len && is_digit(s[n])) n++;
    return n;
}

/* const_N, const_m1, none, or a word that is none of them. */
static cr_code parse_word(pstate *ps, dsl_arg *a, int none_ok)
{
    size_t n = 0;
    while (ps->pos + n < ps->len && is_ident(ps->s[ps->pos + n])) n++;
    const char *w = ps->s + ps->pos;
    if (n == 4 && memcmp(w, "none", 4) == 0) {
        if (!none_ok)
            return fail(ps, "none may only be the second argument of a table_* operation: "
                            "expected " ARG_KINDS);
        advance(ps, 4);
        a->kind = DSL_ARG_NONE;
        return expect_arg_end(ps, "none");
    }
    if (n > 6 && memcmp(w, "const_", 6) == 0) {
        const char *v = w + 6;
        size_t vn = n - 6;
        int neg = 0;
        if (vn == 2 && memcmp(v, "m1", 2) == 0) {
            v = "1";
            neg = 1;
        } else if (count_digits(v, vn) < vn) {   /* the source has no NUL to stop strspn */
            return fail(ps, "unknown constant '%.*s': expected const_ followed by digits "
                            "(const_100) or const_m1", (int)n, w);
        }
        cr_buf_reset(&ps->tmp);
        if (dsl_scan_decimal(v, neg ? 1 : vn, &ps->tmp) == 0) return nomem(ps);
        advance(ps, n);
        a->kind = DSL_ARG_NUM;
        a->neg = neg;
        a->value = cr_arena_strndup(&ps->p->arena, ps->tmp.p, ps->tmp.len);
        if (!a->value) return nomem(ps);
        return expect_arg_end(ps, "the constant");
    }
    return fail(ps, "expected " ARG_KINDS ", found '%.*s' (row names go only in "
                    "table_* operations)", (int)(n > 40 ? 40 : n), w);
}

static cr_code parse_value(pstate *ps, dsl_arg *a, size_t step, int none_ok)
{
    arg_begin(ps, a);
    ps->grouped = 0;
    char c = peek(ps);
    cr_code rc;
    if (c == '#') rc = parse_ref(ps, a, step);
    else if (is_digit(c) || c == '.' || c == '-' || c == '+' || at_minus_sign(ps))
        rc = parse_number(ps, a);
    else if (is_ident_start(c)) rc = parse_word(ps, a, none_ok);
    else if (c == ',' || c == ')') rc = fail(ps, "expected an argument (" ARG_KINDS ")");
    else {
        char fb[40];
        rc = fail(ps, "expected " ARG_KINDS ", found %s", found(ps, fb, sizeof fb));
    }
    if (rc == CR_OK) arg_end(ps, a);
    return rc;
}

/* A quoted row name: "..." with \" and \\ escapes. */
static cr_code parse_quoted_row(pstate *ps, dsl_arg *a)
{
    int line = ps->line, col = col_at(ps);
    advance(ps, 1);
    cr_buf_reset(&ps->tmp);
    for (;;) {
        if (ps->pos >= ps->len || peek(ps) == '\n')
            return cr_error_set(ps->err, CR_ESYNTAX, line, col,
                                "unterminated row name: expected '\"' to close it");
        char c = peek(ps);
        if (c == '"') break;
        if (c == '\\' && ps->pos + 1 < ps->len &&
            (ps->s[ps->pos + 1] == '"' || ps->s[ps->pos + 1] == '\\')) {
            advance(ps, 1);
            c = peek(ps);
        }
        if (cr_buf_putc(&ps->tmp, c) != CR_OK) return nomem(ps);
        advance(ps, 1);
    }
    advance(ps, 1);
    a->value = cr_arena_strndup(&ps->p->arena, ps->tmp.p ? ps->tmp.p : "", ps->tmp.len);
    if (!a->value) return nomem(ps);
    return expect_arg_end(ps, "the row name");
}

/* A bare row name runs to the ',' or ')' at parenthesis depth 0; white space at its ends
 * is not part of it. */
static cr_code parse_bare_row(pstate *ps, dsl_arg *a, const char *opname)
{
    size_t start = ps->pos, end = ps->pos;
    int depth = 0;
    for (;;) {
        char c = peek(ps);
        if (ps->pos >= ps->len || c == '\n')
            return fail(ps, "expected ',' and none after the row name of %s", opname);
        if (depth == 0 && (c == ',' || c == ')')) break;
        if (c == '(') depth++;
        else if (c == ')') depth--;
        advance(ps, 1);
        if (!is_space(c)) {
            end = ps->pos;
            a->end_line = ps->line;
            a->end_col = col_at(ps);
        }
    }
    if (end == start) return fail(ps, "expected a row name as the first argument of %s", opname);
    a->value = cr_arena_strndup(&ps->p->arena, ps->s + start, end - start);
    return a->value ? CR_OK : nomem(ps);
}

static cr_code parse_row(pstate *ps, dsl_arg *a, const char *opname)
{
    arg_begin(ps, a);
    a->kind = DSL_ARG_ROW;
    if (peek(ps) == '"') {
        cr_code rc = parse_quoted_row(ps, a);
        if (rc == CR_OK) arg_end(ps, a);
        return rc;
    }
    return parse_bare_row(ps, a, opname);
}

/* `what` is a format with one %s, the operation's name: the message is built only on failure. */
static cr_code expect_char(pstate *ps, char want, const char *what, const char *opname)
{
    skip_ws(ps);
    if (peek(ps) == want) {
        advance(ps, 1);
        return CR_OK;
    }
    char fb[40], exp[96];
    snprintf(exp, sizeof exp, what, opname);
    return fail(ps, "expected %s, found %s", exp, found(ps, fb, sizeof fb));
}

static cr_code parse_step(pstate *ps, dsl_step *st, size_t index)
{
    st->line = ps->line;
    st->col = col_at(ps);
    size_t n = 0;
    while (ps->pos + n < ps->len && is_ident(ps->s[ps->pos + n])) n++;
    if (n == 0 || !is_ident_start(peek(ps))) {
        char fb[40];
        return fail(ps, "expected an operation (" OP_LIST "), found %s", found(ps, fb, sizeof fb));
    }
    int op = op_lookup(ps->s + ps->pos, n);
    if (op < 0)
        return fail(ps, "unknown operation '%.*s': expected one of " OP_LIST,
                    (int)(n > 40 ? 40 : n), ps->s + ps->pos);
    st->op = (dsl_op)op;
    const char *name = op_names[op];
    advance(ps, n);
    cr_code rc = expect_char(ps, '(', "'(' after %s", name);
    if (rc != CR_OK) return rc;
    skip_ws(ps);
    int table = dsl_op_is_table(st->op);
    rc = table ? parse_row(ps, &st->arg[0], name) : parse_value(ps, &st->arg[0], index, 0);
    if (rc != CR_OK) return rc;
    skip_ws(ps);
    if (peek(ps) == ')' && !table && st->arg[0].kind == DSL_ARG_NUM && ps->grouped)
        return fail(ps, "expected ',' and a second argument: %s takes two (a ',' followed by "
                        "three digits groups thousands; to separate arguments write ', ')", name);
    if (peek(ps) == ')')
        return fail(ps, "expected ',' and a second argument: %s takes two", name);
    if ((rc = expect_char(ps, ',', "',' after the first argument of %s", name)) != CR_OK)
        return rc;
    skip_ws(ps);
    if (table) {
        dsl_arg *a = &st->arg[1];
        arg_begin(ps, a);
        size_t w = 0;
        while (ps->pos + w < ps->len && is_ident(ps->s[ps->pos + w])) w++;
        if (w != 4 || memcmp(ps->s + ps->pos, "none", 4) != 0) {
            char fb[40];
            return fail(ps, "expected none as the second argument of %s, found %s", name,
                        found(ps, fb, sizeof fb));
        }
        if ((rc = parse_word(ps, a, 1)) != CR_OK) return rc;
        arg_end(ps, a);
    } else if ((rc = parse_value(ps, &st->arg[1], index, 0)) != CR_OK) {
        return rc;
    }
    skip_ws(ps);
    if (peek(ps) == ',') return fail(ps, "expected ')': %s takes two arguments", name);
    if ((rc = expect_char(ps, ')', "')' after the second argument of %s", name)) != CR_OK)
        return rc;
    st->end_line = ps->line;
    st->end_col = col_at(ps);
    return CR_OK;
}

static cr_code push_step(pstate *ps, dsl_step **st)
{
    dsl_program *p = ps->p;
    if (p->nsteps == ps->steps_cap) {
        size_t cap = ps->steps_cap ? ps->steps_cap * 2 : 8;
        dsl_step *s = cr_arena_alloc(&p->arena, cap * sizeof *s);
        if (!s) return nomem(ps);
        if (p->nsteps) memcpy(s, p->steps, p->nsteps * sizeof *s);
        p->steps = s;
        ps->steps_cap = cap;
    }
    *st = &p->steps[p->nsteps];
    memset(*st, 0, sizeof **st);
    return CR_OK;
}

cr_code dsl_parse(const char *src, size_t len, const cr_limits *lim, dsl_program **out,
                  cr_error *err)
{
    *out = NULL;
    if (lim && lim->max_source && len > lim->max_source)
        return cr_error_set(err, CR_ELIMIT, 0, 0, "program of %zu bytes passes the limit of %zu",
                            len, lim->max_source);
    dsl_program *p = calloc(1, sizeof *p);
    if (!p) return cr_error_set(err, CR_ENOMEM, 0, 0, "dsl: out of memory");
    /* Every step takes at least 9 bytes ("add(1,2),"), so the arena is bounded by the
     * source size (already bounded above) times a constant. */
    cr_arena_init(&p->arena, 0);
    pstate ps = { .s = src, .len = len, .line = 1, .p = p, .err = err };
    cr_buf_init(&ps.tmp, 0);
    cr_code rc;

    skip_ws(&ps);
    if (ps.pos >= len) {
        rc = fail(&ps, "empty program: expected an operation such as subtract(5829, 5735)");
        goto out;
    }
    for (;;) {
        dsl_step *st = NULL;
        if ((rc = push_step(&ps, &st)) != CR_OK) goto out;
        if ((rc = parse_step(&ps, st, p->nsteps)) != CR_OK) goto out;
        p->nsteps++;
        skip_ws(&ps);
        if (ps.pos >= len) break;
        if (peek(&ps) != ',') {
            char fb[40];
            rc = fail(&ps, "expected ',' between steps or the end of the program, found %s",
                      found(&ps, fb, sizeof fb));
            goto out;
        }
        advance(&ps, 1);
        skip_ws(&ps);
        if (ps.pos >= len) {
            rc = fail(&ps, "expected an operation after ','");
            goto out;
        }
    }
    rc = CR_OK;
out:
    cr_buf_free(&ps.tmp);
    if (rc != CR_OK) {
        dsl_program_free(p);
        return rc;
    }
    *out = p;
    return CR_OK;
}

void dsl_program_free(dsl_program *p)
{
    if (!p) return;
    cr_arena_free(&p->arena);
    free(p);
}

/* ---- --lang auto ----------------------------------------------------------------------- */

int dsl_looks_like(const char *src, size_t len)
{
    size_t i = 0, steps = 0;
    for (;;) {
        while (i < len && is_space(src[i])) i++;
        if (i >= len) return steps > 0;
        size_t n = 0;
        while (i + n < len && is_ident(src[i + n])) n++;
        if (n == 0 || !is_ident_start(src[i]) || op_lookup(src + i, n) < 0) return 0;
        i += n;
        while (i < len && is_space(src[i])) i++;
        if (i >= len || src[i] != '(') return 0;
        /* Balanced parentheses; a double-quoted row name may hold any of them. */
        int depth = 0, quoted = 0;
        for (; i < len; i++) {
            char c = src[i];
            if (quoted) {
                if (c == '\\' && i + 1 < len) i++;
                else if (c == '"') quoted = 0;
                continue;
            }
            if (c == '"') quoted = 1;
            else if (c == '(') depth++;
            else if (c == ')' && --depth == 0) break;
        }
        if (i >= len) return 0;
        i++;
        steps++;
        while (i < len && is_space(src[i])) i++;
        if (i >= len) return 1;
        if (src[i] != ',') return 0;
        i++;
    }
}
