/* evaluator/num/num_format.c: format(value, spec), Python's format mini-language, on exact
 * values. The spec grammar, the checks and their messages, the 'g' and repr thresholds and
 * the zero padding through grouping separators follow CPython 3.11 (Python/formatter_unicode.c
 * and Python/pystrtod.c); only the digits differ, since ours come from the exact value. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "evaluator/num/num_int.h"

/* Widths and precisions past this are a LimitError rather than a huge allocation. */
#define FORMAT_MAX_WIDTH 1000000L

typedef struct {
    char fill[5];
    size_t fill_len;
    int fill_given;
    char align;        /* '<', '>', '^', '=' or 0 when not given */
    char sign;         /* '+', '-', ' ' or 0 */
    int no_neg_0;      /* 'z' */
    int alt;           /* '#' */
    long width;        /* -1 when not given */
    char group;        /* ',', '_' or 0 */
    long prec;         /* -1 when not given */
    char type;         /* 0 when not given */
} fspec;

static int is_align(char c) { return c == '<' || c == '>' || c == '=' || c == '^'; }

/* Length of the UTF-8 sequence that starts with byte c (1 for a stray byte). */
static size_t utf8_len(unsigned char c)
{
    if (c >= 0xf0 && c < 0xf8) return 4;
    if (c >= 0xe0) return c < 0xf0 ? 3 : 1;
    if (c >= 0xc0) return 2;
    return 1;
}

/* Code points in s[0..n). */
static size_t utf8_count(const char *s, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (((unsigned char)s[i] & 0xc0) != 0x80) k++;
    return k;
}

static cr_code both_groups(cr_error *err)
{
    return cr_error_set(err, CR_EPY_VALUE, 0, 0, "Cannot specify both ',' and '_'.");
}

/* "Cannot specify ',' with 'x'." as CPython words it. */
static cr_code bad_group(cr_error *err, char group, char type)
{
    char t[8];
    if (type > 32 && type < 127) snprintf(t, sizeof t, "%c", type);
    else snprintf(t, sizeof t, "\\x%x", (unsigned)(unsigned char)type);
    return cr_error_set(err, CR_EPY_VALUE, 0, 0, "Cannot specify '%c' with '%s'.", group, t);
}

/* Reads decimal digits at *pos into *v; returns how many digits, or -1 past the bound. */
static long get_integer(const char *s, size_t n, size_t *pos, long *v)
{
    long k = 0;
    *v = 0;
    while (*pos < n && s[*pos] >= '0' && s[*pos] <= '9') {
        if (*v <= FORMAT_MAX_WIDTH) *v = *v * 10 + (s[*pos] - '0');
        (*pos)++;
        k++;
    }
    return k;
}

/* default_type: what CPython checks grouping against when the spec names no type ('s' for
 * str, so that "," on a string fails here, before the sign and '=' checks). */
static cr_code parse_spec(fspec *f, const char *s, size_t n, char default_align,
                          char default_type, const char *tyname, cr_error *err)
{
    memset(f, 0, sizeof *f);
    f->fill[0] = ' ';
    f->fill_len = 1;
    f->width = f->prec = -1;
    size_t pos = 0;
    size_t l0 = n ? utf8_len((unsigned char)s[0]) : 0;
    if (l0 > n) l0 = n;
    if (n > l0 && is_align(s[l0])) {
        memcpy(f->fill, s, l0);
        f->fill_len = l0;
        f->fill_given = 1;
        f->align = s[l0];
        pos = l0 + 1;
    } else if (n && is_align(s[0])) {
        f->align = s[0];
        pos = 1;
    }
    if (pos < n && (s[pos] == '+' || s[pos] == '-' || s[pos] == ' ')) f->sign = s[pos++];
    if (pos < n && s[pos] == 'z') { f->no_neg_0 = 1; pos++; }
    if (pos < n && s[pos] == '#') { f->alt = 1; pos++; }
    if (!f->fill_given && pos < n && s[pos] == '0') {
        f->fill[0] = '0';
        f->fill_len = 1;
        if (!f->align && default_align == '>') f->align = '=';
        pos++;
    }
    long w;
    if (get_integer(s, n, &pos, &w) > 0) f->width = w;
    if (pos < n && s[pos] == ',') { f->group = ','; pos++; }
    if (pos < n && s[pos] == '_') {
        if (f->group) return both_groups(err);
        f->group = '_';
        pos++;
    }
    if (pos < n && s[pos] == ',' && f->group == '_')
        return both_groups(err);
    if (pos < n && s[pos] == '.') {
        pos++;
        long p;
        if (get_integer(s, n, &pos, &p) == 0)
            return cr_error_set(err, CR_EPY_VALUE, 0, 0, "Format specifier missing precision");
        f->prec = p;
    }
    if (n - pos > 1) {
        char shown[200];
        snprintf(shown, sizeof shown, "%.*s", (int)(n < 150 ? n : 150), s);
        return cr_error_set(err, CR_EPY_VALUE, 0, 0,
                            "Invalid format specifier '%s' for object of type '%s'", shown, tyname);
    }
    if (pos < n) f->type = s[pos];
    if (f->width > FORMAT_MAX_WIDTH || f->prec > FORMAT_MAX_WIDTH)
        return cr_error_set(err, CR_ELIMIT, 0, 0, "format width or precision above %ld",
                            FORMAT_MAX_WIDTH);
    char type = f->type ? f->type : default_type;
    if (f->group) {
        switch (type) {
        case 'd': case 'e': case 'f': case 'g': case 'E': case 'G': case '%': case 'F': case 0:
            break;
        case 'b': case 'o': case 'x': case 'X':
            if (f->group == '_') break;
            return bad_group(err, f->group, type);
        default:
            return bad_group(err, f->group, type);
        }
    }
    if (!f->align) f->align = default_align;
    return CR_OK;
}

static cr_code unknown_code(cr_error *err, char type, const char *tyname)
{
    char t[8];
    if (type > 32 && type < 127) snprintf(t, sizeof t, "%c", type);
    else snprintf(t, sizeof t, "\\x%x", (unsigned)(unsigned char)type);
    return cr_error_set(err, CR_EPY_VALUE, 0, 0,
                        "Unknown format code '%s' for object of type '%s'", t, tyname);
}

/* ---- assembling: sign, prefix, grouped digits, the rest, padding ------------------------- */

static cr_code put_fill(cr_buf *out, const fspec *f, size_t n)
{
    cr_code rc = CR_OK;
    if (f->fill_len == 1) {
        char chunk[64];
        memset(chunk, f->fill[0], sizeof chunk);
        while (n && rc == CR_OK) {
            size_t k = n < sizeof chunk ? n : sizeof chunk;
            rc = cr_buf_put(out, chunk, k);
            n -= k;
        }
        return rc;
    }
    while (n-- && rc == CR_OK) rc = cr_buf_put(out, f->fill, f->fill_len);
    return rc;
}

/* Writes digits[0..nd) grouped by `size` with `sep` (0: none), zero-padded on the left to at
 * least min_width characters, into g, as CPython's _PyUnicode_InsertThousandsGrouping does:
 * a group never starts with a separator, so the padding may pass min_width by one. */
static cr_code group_digits(cr_buf *g, const char *digits, size_t nd, char sep, long size,
                            long min_width)
{
    if (!sep) {
        cr_code rc = CR_OK;
        for (long z = min_width - (long)nd; z > 0 && rc == CR_OK; z--) rc = cr_buf_putc(g, '0');
        return rc == CR_OK ? cr_buf_put(g, digits, nd) : rc;
    }
    /* Built right to left into a reversed buffer. */
    cr_buf r;
    cr_buf_init(&r, 0);
    cr_code rc = CR_OK;
    long remaining = (long)nd, mw = min_width;
    int first = 1;
    for (;;) {
        long l = remaining > mw ? remaining : mw;
        if (l < 1) l = 1;
        if (l > size) l = size;
        long nchars = remaining < l ? remaining : l;
        if (nchars < 0) nchars = 0;
        long nzeros = l - nchars;
        if (!first) rc = cr_buf_putc(&r, sep);
        for (long k = 0; k < nchars && rc == CR_OK; k++) rc = cr_buf_putc(&r, digits[remaining - 1 - k]);
        for (long k = 0; k < nzeros && rc == CR_OK; k++) rc = cr_buf_putc(&r, '0');
        if (rc != CR_OK) break;
        remaining -= nchars;
        mw -= l;
        if (remaining <= 0 && mw <= 0) break;
        mw -= 1;
        first = 0;
    }
    for (size_t k = r.len; k-- > 0 && rc == CR_OK;) rc = cr_buf_putc(g, r.p[k]);
    cr_buf_free(&r);
    return rc;
}

/* The pieces of a formatted number. `body` holds the integer digits [0, nint) followed by the
 * rest (decimal point, fraction, exponent, '%'), all ASCII except a 'c' character. */
typedef struct {
    char sign;
    const char *prefix;
    cr_buf body;
    size_t nint;
} parts;

static cr_code assemble(cr_buf *out, const fspec *f, parts *p)
{
    size_t nsign = p->sign ? 1 : 0, npre = strlen(p->prefix);
    size_t nrest = p->body.len - p->nint;
    long min_width = 0;
    if (f->fill_len == 1 && f->fill[0] == '0' && f->align == '=' && f->width > 0)
        min_width = f->width - (long)(nsign + npre + nrest);
    cr_buf g;
    cr_buf_init(&g, 0);
    cr_code rc = group_digits(&g, p->body.p ? p->body.p : "", p->nint, f->group,
                              f->group && (f->type == 'b' || f->type == 'o' || f->type == 'x' ||
                                           f->type == 'X') ? 4 : 3,
                              min_width);
    if (rc != CR_OK) goto out;
    size_t chars = nsign + npre + utf8_count(g.p ? g.p : "", g.len) + nrest;
    size_t pad = f->width > 0 && (size_t)f->width > chars ? (size_t)f->width - chars : 0;
    size_t left = 0, right = 0, mid = 0;
    switch (f->align) {
    case '<': right = pad; break;
    case '^': left = pad / 2; right = pad - left; break;
    case '=': mid = pad; break;
    default: left = pad; break;
    }
    if ((rc = put_fill(out, f, left)) != CR_OK) goto out;
    if (nsign && (rc = cr_buf_putc(out, p->sign)) != CR_OK) goto out;
    if ((rc = cr_buf_put(out, p->prefix, npre)) != CR_OK) goto out;
    if ((rc = put_fill(out, f, mid)) != CR_OK) goto out;
    if ((rc = cr_buf_put(out, g.p ? g.p : "", g.len)) != CR_OK) goto out;
    if ((rc = cr_buf_put(out, p->body.p + p->nint, nrest)) != CR_OK) goto out;
    rc = put_fill(out, f, right);
out:
    cr_buf_free(&g);
    return rc;
}

/* ---- the digits of floats ---------------------------------------------------------------- */

/* Appends |z| in base 10, left-padded with zeros to at least `minlen` digits. */
static cr_code put_digits(cr_buf *b, const mpz_t z, size_t minlen)
{
    size_t need = mpz_sizeinbase(z, 10) + 2;
    char small[96], *s = need <= sizeof small ? small : malloc(need);
    if (!s) return CR_ENOMEM;
    mpz_get_str(s, 10, z);
    char *d = s[0] == '-' ? s + 1 : s;
    size_t n = strlen(d);
    cr_code rc = CR_OK;
    for (size_t k = n; k < minlen && rc == CR_OK; k++) rc = cr_buf_putc(b, '0');
    if (rc == CR_OK) rc = cr_buf_put(b, d, n);
    if (s != small) free(s);
    return rc;
}

static cr_code put_exp(cr_buf *b, char e, long exp)
{
    return cr_buf_printf(b, "%c%c%02ld", e, exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
}

/* Fixed notation: |x| to prec decimals. Sets *zero when the rounded value is 0. */
static cr_code fixed_body(parts *p, const mpq_t x, long prec, int alt, num_mode mode, int *zero)
{
    mpz_t n;
    mpz_init(n);
    num_round_scaled(n, x, prec, mode);
    mpz_abs(n, n);
    *zero = mpz_sgn(n) == 0;
    cr_code rc = put_digits(&p->body, n, (size_t)prec + 1);
    mpz_clear(n);
    if (rc != CR_OK) return rc;
    p->nint = p->body.len - (size_t)prec;
    if (prec == 0 && !alt) return CR_OK;
    /* Insert the point: shift the fraction right by one. */
    if ((rc = cr_buf_putc(&p->body, '.')) != CR_OK) return rc;
    memmove(p->body.p + p->nint + 1, p->body.p + p->nint, (size_t)prec);
    p->body.p[p->nint] = '.';
    return CR_OK;
}

/* The significant digits of |x| (x may be 0) rounded to `digits`, as text in *s (the
 * caller's cr_buf), with the exponent of the leading digit. */
static long sig_digits(cr_buf *s, const mpq_t x, int digits, num_mode mode, cr_code *rc)
{
    mpz_t d;
    mpz_init(d);
    long e = 0;
    if (mpq_sgn(x)) e = num_round_sig(d, x, digits, mode);
    *rc = put_digits(s, d, (size_t)digits);
    mpz_clear(d);
    return e;
}

/* Scientific: d[.ddd]e+XX with prec digits after the point. */
static cr_code exp_body(parts *p, const mpq_t x, long prec, int alt, char e, num_mode mode)
{
    cr_code rc;
    long ex = sig_digits(&p->body, x, (int)prec + 1, mode, &rc);
    if (rc != CR_OK) return rc;
    p->nint = 1;
    if (prec > 0 || alt) {
        if ((rc = cr_buf_putc(&p->body, '.')) != CR_OK) return rc;
        memmove(p->body.p + 2, p->body.p + 1, (size_t)prec);
        p->body.p[1] = '.';
    }
    return put_exp(&p->body, e, ex);
}

/* Lays out significant digits ds[0..nd) with exponent ex as CPython's format_float_short:
 * exponent form when decpt <= -4 or decpt > limit; add_dot_0 gives integral fixed values a
 * ".0"; alt keeps the point. */
static cr_code layout_short(parts *p, const char *ds, size_t nd, long ex, long limit,
                            int add_dot_0, int alt, char e)
{
    long decpt = ex + 1;
    cr_code rc = CR_OK;
    cr_buf *b = &p->body;
    if (decpt <= -4 || decpt > limit) {
        p->nint = 1;
        rc = cr_buf_putc(b, ds[0]);
        if (rc == CR_OK && (nd > 1 || alt)) rc = cr_buf_putc(b, '.');
        if (rc == CR_OK && nd > 1) rc = cr_buf_put(b, ds + 1, nd - 1);
        return rc == CR_OK ? put_exp(b, e, ex) : rc;
    }
    if (decpt <= 0) {
        p->nint = 1;
        rc = cr_buf_put(b, "0.", 2);
        for (long k = 0; k < -decpt && rc == CR_OK; k++) rc = cr_buf_putc(b, '0');
        return rc == CR_OK ? cr_buf_put(b, ds, nd) : rc;
    }
    if ((size_t)decpt >= nd) {
        rc = cr_buf_put(b, ds, nd);
        for (size_t k = nd; k < (size_t)decpt && rc == CR_OK; k++) rc = cr_buf_putc(b, '0');
        p->nint = b->len;
        if (rc == CR_OK && (add_dot_0 || alt)) rc = cr_buf_putc(b, '.');
        if (rc == CR_OK && add_dot_0) rc = cr_buf_putc(b, '0');
        return rc;
    }
    rc = cr_buf_put(b, ds, (size_t)decpt);
    p->nint = (size_t)decpt;
    if (rc == CR_OK) rc = cr_buf_putc(b, '.');
    return rc == CR_OK ? cr_buf_put(b, ds + decpt, nd - (size_t)decpt) : rc;
}

/* 'g', 'n', and the none type (with add_dot_0): p significant digits, or the repr's digits
 * when p < 0 (none type without a precision). */
static cr_code general_body(parts *p, const mpq_t x, long prec, int alt, int add_dot_0, char e,
                            num_mode mode, int repr_digits)
{
    cr_buf ds;
    cr_buf_init(&ds, 0);
    cr_code rc;
    long digits = repr_digits ? repr_digits : (prec == 0 ? 1 : prec);
    long ex = sig_digits(&ds, x, (int)digits, repr_digits ? NUM_HALF_EVEN : mode, &rc);
    if (rc == CR_OK) {
        size_t nd = ds.len;
        if (!alt || repr_digits)
            while (nd > 1 && ds.p[nd - 1] == '0') nd--;
        long limit = repr_digits ? 16 : add_dot_0 ? digits - 1 : digits;
        rc = layout_short(p, ds.p, nd, ex, limit, add_dot_0, alt, e);
    }
    cr_buf_free(&ds);
    return rc;
}

static cr_code float_body(parts *p, const mpq_t v, const fspec *f, const num_ctx *ctx,
                          int *zero)
{
    num_mode mode = num_ctx_mode(ctx);
    long prec = f->prec < 0 ? 6 : f->prec;
    mpq_t x;
    mpq_init(x);
    mpq_abs(x, v);
    cr_code rc;
    *zero = 0;
    switch (f->type) {
    case 'f': case 'F':
        rc = fixed_body(p, x, prec, f->alt, mode, zero);
        break;
    case '%':
        mpz_mul_ui(mpq_numref(x), mpq_numref(x), 100);
        mpq_canonicalize(x);
        rc = fixed_body(p, x, prec, f->alt, mode, zero);
        if (rc == CR_OK) rc = cr_buf_putc(&p->body, '%');
        break;
    case 'e': case 'E':
        rc = exp_body(p, x, prec, f->alt, f->type, mode);
        break;
    case 'g': case 'G': case 'n':
        rc = general_body(p, x, prec, f->alt, 0, f->type == 'G' ? 'E' : 'e', mode, 0);
        break;
    default: /* none: repr without a precision, else 'g' with at least one decimal */
        rc = general_body(p, x, f->prec, f->alt, 1, 'e', mode, f->prec < 0 ? ctx->prec : 0);
        break;
    }
    mpq_clear(x);
    return rc;
}

/* ---- integers ---------------------------------------------------------------------------- */

static cr_code int_body(parts *p, const mpz_t z, const fspec *f, cr_error *err)
{
    int base = 10;
    switch (f->type) {
    case 'b': base = 2; p->prefix = f->alt ? "0b" : ""; break;
    case 'o': base = 8; p->prefix = f->alt ? "0o" : ""; break;
    case 'x': base = 16; p->prefix = f->alt ? "0x" : ""; break;
    case 'X': base = -16; p->prefix = f->alt ? "0X" : ""; break;
    case 'c': {
        if (!mpz_fits_slong_p(z))
            return cr_error_set(err, CR_EPY_OVERFLOW, 0, 0,
                                "Python int too large to convert to C long");
        if (mpz_sgn(z) < 0 || mpz_cmp_ui(z, 0x10ffff) > 0)
            return cr_error_set(err, CR_EPY_OVERFLOW, 0, 0, "%%c arg not in range(0x110000)");
        unsigned long c = mpz_get_ui(z);
        char u[4];
        size_t n;
        if (c < 0x80) { u[0] = (char)c; n = 1; }
        else if (c < 0x800) { u[0] = (char)(0xc0 | (c >> 6)); u[1] = (char)(0x80 | (c & 0x3f)); n = 2; }
        else if (c < 0x10000) {
            u[0] = (char)(0xe0 | (c >> 12)); u[1] = (char)(0x80 | ((c >> 6) & 0x3f));
            u[2] = (char)(0x80 | (c & 0x3f)); n = 3;
        } else {
            u[0] = (char)(0xf0 | (c >> 18)); u[1] = (char)(0x80 | ((c >> 12) & 0x3f));
            u[2] = (char)(0x80 | ((c >> 6) & 0x3f)); u[3] = (char)(0x80 | (c & 0x3f)); n = 4;
        }
        p->nint = n;
        return cr_buf_put(&p->body, u, n);
    }
    default: break;
    }
    size_t need = mpz_sizeinbase(z, base < 0 ? -base : base) + 2;
    char small[96], *s = need <= sizeof small ? small : malloc(need);
    if (!s) return CR_ENOMEM;
    mpz_get_str(s, base, z);
    const char *d = s[0] == '-' ? s + 1 : s;
    size_t n = strlen(d);
    cr_code rc = cr_buf_put(&p->body, d, n);
    p->nint = n;
    if (s != small) free(s);
    return rc;
}

cr_code num_format(cr_buf *out, const mpq_t v, int is_float, const char *spec, size_t speclen,
                   const num_ctx *ctx, cr_error *err)
{
    const char *tyname = is_float ? "float" : "int";
    fspec f;
    cr_code rc = parse_spec(&f, spec, speclen, '>', 0, tyname, err);
    if (rc != CR_OK) return rc;
    int float_type = 0;
    switch (f.type) {
    case 'e': case 'E': case 'f': case 'F': case 'g': case 'G': case '%':
        float_type = 1;
        break;
    case 0: case 'n':
        float_type = is_float;
        break;
    case 'b': case 'c': case 'd': case 'o': case 'x': case 'X':
        if (is_float) return unknown_code(err, f.type, tyname);
        break;
    default:
        return unknown_code(err, f.type, tyname);
    }
    if (!float_type) {
        if (f.prec >= 0)
            return cr_error_set(err, CR_EPY_VALUE, 0, 0,
                                "Precision not allowed in integer format specifier");
        if (f.no_neg_0)
            return cr_error_set(err, CR_EPY_VALUE, 0, 0,
                                "Negative zero coercion (z) not allowed in integer format specifier");
        if (f.type == 'c' && f.sign)
            return cr_error_set(err, CR_EPY_VALUE, 0, 0,
                                "Sign not allowed with integer format specifier 'c'");
        if (f.type == 'c' && f.alt)
            return cr_error_set(err, CR_EPY_VALUE, 0, 0,
                                "Alternate form (#) not allowed with integer format specifier 'c'");
    }
    parts p = { 0, "", { 0 }, 0 };
    cr_buf_init(&p.body, 0);
    int zero = 0;
    if (float_type) rc = float_body(&p, v, &f, ctx, &zero);
    else rc = int_body(&p, mpq_numref(v), &f, err);
    if (rc == CR_OK) {
        int neg = (mpq_sgn(v) < 0 || (is_float & NUM_NEG_ZERO)) && !(zero && f.no_neg_0);
        if (f.type == 'c') p.sign = 0;
        else if (neg) p.sign = '-';
        else if (f.sign == '+' || f.sign == ' ') p.sign = f.sign;
        rc = assemble(out, &f, &p);
    }
    cr_buf_free(&p.body);
    return rc;
}

cr_code num_format_layout(cr_buf *out, const num_layout *l, char sign, const char *ints,
                          size_t nint, const char *rest, size_t nrest)
{
    fspec f;
    memset(&f, 0, sizeof f);
    memcpy(f.fill, l->fill, sizeof f.fill);
    f.fill_len = l->fill_len;
    f.align = l->align;
    f.group = l->group;
    f.width = l->width;
    f.prec = -1;
    parts p = { sign, "", { 0 }, nint };
    cr_buf_init(&p.body, 0);
    cr_code rc = cr_buf_put(&p.body, ints, nint);
    if (rc == CR_OK) rc = cr_buf_put(&p.body, rest, nrest);
    if (rc == CR_OK) rc = assemble(out, &f, &p);
    cr_buf_free(&p.body);
    return rc;
}

cr_code num_format_str(cr_buf *out, const char *s, size_t len, const char *spec,
                       size_t speclen, cr_error *err)
{
    fspec f;
    cr_code rc = parse_spec(&f, spec, speclen, '<', 's', "str", err);
    if (rc != CR_OK) return rc;
    if (f.type && f.type != 's') return unknown_code(err, f.type, "str");
    if (f.sign)     /* CPython names the space apart (unicode_format.h) */
        return cr_error_set(err, CR_EPY_VALUE, 0, 0, "%s not allowed in string format specifier",
                            f.sign == ' ' ? "Space" : "Sign");
    if (f.no_neg_0)
        return cr_error_set(err, CR_EPY_VALUE, 0, 0,
                            "Negative zero coercion (z) not allowed in string format specifier");
    if (f.alt)
        return cr_error_set(err, CR_EPY_VALUE, 0, 0,
                            "Alternate form (#) not allowed in string format specifier");
    if (f.align == '=')
        return cr_error_set(err, CR_EPY_VALUE, 0, 0,
                            "'=' alignment not allowed in string format specifier");
    /* Precision cuts code points, not bytes. */
    size_t n = len, chars = 0;
    for (size_t i = 0; i < len; i++) {
        if (((unsigned char)s[i] & 0xc0) == 0x80) continue;
        if (f.prec >= 0 && chars == (size_t)f.prec) { n = i; break; }
        chars++;
    }
    size_t pad = f.width > 0 && (size_t)f.width > chars ? (size_t)f.width - chars : 0;
    size_t left = f.align == '>' ? pad : f.align == '^' ? pad / 2 : 0;
    if ((rc = put_fill(out, &f, left)) != CR_OK) return rc;
    if ((rc = cr_buf_put(out, s, n)) != CR_OK) return rc;
    return put_fill(out, &f, pad - left);
}
