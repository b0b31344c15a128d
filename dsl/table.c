/* dsl/table.c: FinQA tables: reading the JSON, finding a row, reading a cell. */
#include "dsl/dsl.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Byte sequences of the few non-ASCII characters filings put in numbers. */
#define U_EMDASH "\xe2\x80\x94"  /* U+2014 */
#define U_ENDASH "\xe2\x80\x93"  /* U+2013 */
#define U_NBSP "\xc2\xa0"        /* U+00A0 no-break space */
#define U_DAGGER "\xe2\x80\xa0"  /* U+2020 */
#define U_DDAGGER "\xe2\x80\xa1" /* U+2021 */

/* How much of a cell an error message quotes. */
#define CELL_QUOTE_MAX 60

static int has(const char *s, size_t len, size_t i, const char *seq)
{
    size_t n = strlen(seq);
    return i + n <= len && memcmp(s + i, seq, n) == 0;
}

/* Bytes of white space at s[i]: ASCII blanks and the no-break space; 0 if none. */
static size_t space_at(const char *s, size_t len, size_t i)
{
    if (i >= len) return 0;
    char c = s[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') return 1;
    return has(s, len, i, U_NBSP) ? 2 : 0;
}

static size_t skip_space(const char *s, size_t len, size_t i)
{
    size_t n;
    while ((n = space_at(s, len, i)) > 0) i += n;
    return i;
}

static int lower(char c) { return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c; }

static int equal_folded(const char *a, size_t an, const char *b)
{
    size_t bn = strlen(b);
    if (an != bn) return 0;
    for (size_t i = 0; i < an; i++)
        if (lower(a[i]) != b[i]) return 0;
    return 1;
}

/* ---- cells ----------------------------------------------------------------------------- */

static cr_code cell_fail(cr_error *err, const char *s, size_t len, const char *what)
{
    int q = len > CELL_QUOTE_MAX ? CELL_QUOTE_MAX : (int)len;
    return cr_error_set(err, CR_EUSAGE, 0, 0, "'%.*s'%s %s", q, s, len > (size_t)q ? "..." : "",
                        what);
}

cr_code dsl_cell_parse(const char *s, size_t len, cr_buf *out, cr_error *err)
{
    static const char *const no_value[] = { "n/a", "na", "nm", "n.m.", "n/m", "none", NULL };
    size_t b = skip_space(s, len, 0), e = len;
    while (e > b) {   /* trim the end, no-break spaces included */
        if (e - b >= 2 && memcmp(s + e - 2, U_NBSP, 2) == 0) e -= 2;
        else if (space_at(s, len, e - 1) == 1) e--;
        else break;
    }
    const char *t = s + b;
    size_t n = e - b;
    if (n == 0) return cell_fail(err, s, len, "is an empty cell: no value");
    for (int k = 0; no_value[k]; k++)
        if (equal_folded(t, n, no_value[k])) return cell_fail(err, t, n, "has no value");
    if ((n == 1 && t[0] == '-') || (n == 3 && (has(t, n, 0, U_EMDASH) || has(t, n, 0, U_ENDASH))))
        return cr_buf_putc(out, '0');   /* a dash is a nil amount */

    int neg = 0, signed_ = 0, dollar = 0, paren = 0, pct = 0;
    size_t i = 0;
    /* Prefixes, each at most once, in any order filings use: "$ -5", "-$5", "( $ 5 )". */
    for (;;) {
        i = skip_space(t, n, i);
        if (!dollar && i < n && t[i] == '$') { dollar = 1; i++; continue; }
        if (!signed_ && i < n && (t[i] == '-' || t[i] == '+')) {
            signed_ = 1;
            neg = t[i] == '-';
            i++;
            continue;
        }
        if (!signed_ && has(t, n, i, DSL_U_MINUS)) { signed_ = neg = 1; i += 3; continue; }
        if (!paren && i < n && t[i] == '(') { paren = 1; i++; continue; }
        break;
    }
    size_t from = out->len;
    if (neg != paren && cr_buf_putc(out, '-') != CR_OK) return CR_ENOMEM;
    size_t digits_at = out->len;
    size_t used = dsl_scan_decimal(t + i, n - i, out);
    if (used == 0 && out->truncated) return CR_ENOMEM;
    if (used == 0) {
        out->len = from;
        if (out->p) out->p[from] = '\0';
        return cell_fail(err, t, n, "is not a number");
    }
    i = skip_space(t, n, i + used);
    if (i < n && t[i] == '%') { pct = 1; i = skip_space(t, n, i + 1); }
    if (paren) {
        if (i >= n || t[i] != ')') goto bad_paren;
        i = skip_space(t, n, i + 1);
        if (!pct && i < n && t[i] == '%') { pct = 1; i = skip_space(t, n, i + 1); }
    }
    /* Footnote marks and restatements after the number: "( a )", "( 6129 )", "*", "†". */
    while (i < n) {
        if (t[i] == '*') i++;
        else if (has(t, n, i, U_DAGGER) || has(t, n, i, U_DDAGGER)) i += 3;
        else if (t[i] == '(') {
            const char *close = memchr(t + i, ')', n - i);
            if (!close) goto bad_paren;
            i = (size_t)(close - t) + 1;
        } else {
            out->len = from;
            out->p[from] = '\0';
            char what[96];
            snprintf(what, sizeof what, "is not a number: unexpected '%.*s' after it",
                     (int)(n - i > 20 ? 20 : n - i), t + i);
            return cell_fail(err, t, n, what);
        }
        i = skip_space(t, n, i);
    }
    cr_code rc = pct ? dsl_decimal_percent(out, digits_at) : CR_OK;
    if (rc != CR_OK) return rc;
    if (out->len > digits_at && strspn(out->p + digits_at, "0.") == out->len - digits_at &&
        digits_at > from) {
        /* No sign on a zero: "-0" and "( 0 )" are 0. */
        memmove(out->p + from, out->p + digits_at, out->len - digits_at + 1);
        out->len -= digits_at - from;
    }
    return CR_OK;

bad_paren:
    out->len = from;
    out->p[from] = '\0';
    return cell_fail(err, t, n, "is not a number: '(' without ')'");
}

/* ---- rows ------------------------------------------------------------------------------ */

/* Compares ignoring ASCII case and all white space. */
static int same_loosely(const char *a, size_t an, const char *b, size_t bn)
{
    size_t i = 0, j = 0, k;
    for (;;) {
        while ((k = space_at(a, an, i)) > 0) i += k;
        while ((k = space_at(b, bn, j)) > 0) j += k;
        if (i >= an || j >= bn) return i >= an && j >= bn;
        if (lower(a[i]) != lower(b[j])) return 0;
        i++;
        j++;
    }
}

long dsl_table_find_row(const dsl_table *t, const char *name, size_t len)
{
    if (!t) return -1;
    /* Backwards: the last row of a name wins, as in FinQA's dict built from the rows. */
    for (size_t r = t->nrows; r-- > 0;) {
        const char *rn = t->rows[r].name;
        if (strlen(rn) == len && memcmp(rn, name, len) == 0) return (long)r;
    }
    for (size_t r = t->nrows; r-- > 0;) {
        const char *rn = t->rows[r].name;
        if (same_loosely(rn, strlen(rn), name, len)) return (long)r;
    }
    return -1;
}

/* ---- JSON ------------------------------------------------------------------------------ */

/* A cell's text: a string as is, an integer printed exactly; anything else is refused. */
static cr_code cell_text(dsl_table *t, json_t *v, size_t row, size_t col, const char **out,
                         cr_error *err)
{
    char num[32];
    if (json_is_string(v)) {
        *out = cr_arena_strndup(&t->arena, json_string_value(v), json_string_length(v));
    } else if (json_is_integer(v)) {
        snprintf(num, sizeof num, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        *out = cr_arena_strndup(&t->arena, num, strlen(num));
    } else if (json_is_real(v)) {
        return cr_error_set(err, CR_EUSAGE, 0, 0, "table: row %zu, cell %zu: write decimal "
                            "numbers as strings (\"1.5\", not 1.5) so they stay exact", row, col);
    } else {
        return cr_error_set(err, CR_EUSAGE, 0, 0, "table: row %zu, cell %zu: expected a string",
                            row, col);
    }
    return *out ? CR_OK : cr_error_set(err, CR_ENOMEM, 0, 0, "table: out of memory");
}

cr_code dsl_table_from_json(const char *json, size_t len, const cr_limits *lim,
                            dsl_table **out, cr_error *err)
{
    *out = NULL;
    if (lim && lim->max_source && len > lim->max_source)
        return cr_error_set(err, CR_ELIMIT, 0, 0, "table of %zu bytes passes the limit of %zu",
                            len, lim->max_source);
    json_error_t jerr;
    json_t *root = json_loadb(json, len, 0, &jerr);
    if (!root)
        return cr_error_set(err, CR_EUSAGE, 0, 0, "table: bad JSON at line %d, column %d: %s",
                            jerr.line, jerr.column, jerr.text);
    cr_code rc = CR_OK;
    dsl_table *t = calloc(1, sizeof *t);
    if (!t) {
        rc = cr_error_set(err, CR_ENOMEM, 0, 0, "table: out of memory");
        goto out;
    }
    cr_arena_init(&t->arena, lim ? lim->max_memory : 0);
    if (!json_is_array(root)) {
        rc = cr_error_set(err, CR_EUSAGE, 0, 0, "table: expected a JSON list of rows");
        goto out;
    }
    size_t nrows = json_array_size(root), total = 0;
    t->rows = cr_arena_alloc(&t->arena, (nrows ? nrows : 1) * sizeof *t->rows);
    if (!t->rows) {
        rc = t->arena.nomem
                 ? cr_error_set(err, CR_ENOMEM, 0, 0, "table: out of memory")
                 : cr_error_set(err, CR_ELIMIT, 0, 0, "table: too large for the memory limit");
        goto out;
    }
    for (size_t r = 0; r < nrows; r++) {
        json_t *row = json_array_get(root, r);
        size_t n = json_is_array(row) ? json_array_size(row) : 0;
        if (n == 0) {
            rc = cr_error_set(err, CR_EUSAGE, 0, 0, "table: row %zu: expected a non-empty list "
                              "whose first cell is the row name", r);
            goto out;
        }
        total += n;
        if (lim && lim->max_str_len && total > lim->max_str_len) {
            rc = cr_error_set(err, CR_ELIMIT, 0, 0, "table: more than %llu cells",
                              (unsigned long long)lim->max_str_len);
            goto out;
        }
        dsl_row *dr = &t->rows[r];
        if ((rc = cell_text(t, json_array_get(row, 0), r, 0, &dr->name, err)) != CR_OK) goto out;
        dr->ncells = n - 1;
        dr->cells = cr_arena_alloc(&t->arena, n * sizeof *dr->cells);
        if (!dr->cells) {
            rc = t->arena.nomem
                     ? cr_error_set(err, CR_ENOMEM, 0, 0, "table: out of memory")
                     : cr_error_set(err, CR_ELIMIT, 0, 0, "table: too large for the memory limit");
            goto out;
        }
        for (size_t c = 1; c < n; c++)
            if ((rc = cell_text(t, json_array_get(row, c), r, c, &dr->cells[c - 1], err)) != CR_OK)
                goto out;
        t->nrows = r + 1;
    }
out:
    json_decref(root);
    if (rc != CR_OK) {
        dsl_table_free(t);
        return rc;
    }
    *out = t;
    return CR_OK;
}

void dsl_table_free(dsl_table *t)
{
    if (!t) return;
    cr_arena_free(&t->arena);
    free(t);
}
