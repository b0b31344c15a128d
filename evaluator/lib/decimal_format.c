/* evaluator/lib/decimal_format.c: Decimal.__format__, as CPython 3.11's _decimal formats. */
#include <stdlib.h>
#include <string.h>

#include "evaluator/lib/decimal_int.h"

/* ---- format ----------------------------------------------------------------------------- */

static int bad_format(eval_cx *cx, const ir_node *at)
{
    eval_raise(cx, CR_EPY_VALUE, at, "invalid format string");
    return -1;
}

/* Decimal.__format__: libmpdec's grammar [[fill]align][sign][z][0][width][,][.prec][type]
 * with types e E f F g G n % or none; the context's rounding. */
int dec_format(eval_cx *cx, cr_buf *b, val *self, const char *s, size_t n, const ir_node *at)
{
    if (n == 0) return dec_repr(cx, b, self, 1);
    num_layout l;
    memset(&l, 0, sizeof l);
    l.fill[0] = ' ';
    l.fill_len = 1;
    l.width = -1;
    size_t i = 0, cl = 1;
    unsigned char c0 = (unsigned char)s[0];
    if (c0 >= 0xf0) cl = 4; else if (c0 >= 0xe0) cl = 3; else if (c0 >= 0xc0) cl = 2;
    if (cl < n && strchr("<>=^", s[cl])) {
        memcpy(l.fill, s, cl);
        l.fill_len = cl;
        l.align = s[cl];
        i = cl + 1;
    } else if (strchr("<>=^", s[0])) {
        l.align = s[0];
        i = 1;
    }
    char sign = '-';
    int nonegz = 0;
    long prec = -1;
    if (i < n && (s[i] == '+' || s[i] == '-' || s[i] == ' ')) sign = s[i++];
    if (i < n && s[i] == 'z') { nonegz = 1; i++; }
    int zeropad = 0;
    if (i < n && s[i] == '0') {
        if (!l.align) { l.fill[0] = '0'; l.fill_len = 1; l.align = '='; zeropad = 1; }
        i++;
    }
    if (i < n && s[i] >= '0' && s[i] <= '9') {
        l.width = 0;
        while (i < n && s[i] >= '0' && s[i] <= '9') {
            if (l.width > 1000000) return eval_raise(cx, CR_ELIMIT, at, "format width or precision above 1000000"), -1;
            l.width = l.width * 10 + (s[i++] - '0');
        }
    }
    if (i < n && s[i] == ',') { l.group = ','; i++; }
    if (i < n && s[i] == '.') {
        i++;
        if (i >= n || s[i] < '0' || s[i] > '9') return bad_format(cx, at);
        prec = 0;
        while (i < n && s[i] >= '0' && s[i] <= '9') {
            if (prec > 1000000) return eval_raise(cx, CR_ELIMIT, at, "format width or precision above 1000000"), -1;
            prec = prec * 10 + (s[i++] - '0');
        }
    }
    char type = 0;
    if (i < n) type = s[i++];
    if (i < n || (type && !strchr("eEfFgGn%", type))) return bad_format(cx, at);
    if (!l.align) l.align = '>';
    dec d;
    dinit(&d);
    dcopy(&d, DEC_OF(self));
    cr_buf body;
    cr_buf_init(&body, 0);
    int rc = 0, neg = d.neg;
    size_t nint = 0;
    int mode = cx->dec.round;
    if (d.kind != DK_FIN) {
        d.neg = 0;
        rc = dec_sci(cx, &body, &d) < 0 ? -1 : 0;
        if (type == '%' && rc == 0) rc = cr_buf_putc(&body, '%') == CR_OK ? 0 : -1;
        l.group = 0;
        if (zeropad) { l.fill[0] = ' '; l.align = '>'; }   /* no zeros before NaN */
        if (rc < 0) goto out;
        goto layout;
    }
    if (type == '%') d.e += 2;
    char t = type ? type : 0;
    if (prec >= 0) {
        if (t == 'e' || t == 'E') {
            if (mpz_sgn(d.c) && (rc = dec_rescale(cx, &d, dec_adjusted(&d) - prec, mode, at)) >= 0 &&
                dec_ndigits(d.c) > prec + 1) rc = dec_rescale(cx, &d, d.e + 1, mode, at);
        } else if (t == 'f' || t == 'F' || t == '%') {
            rc = dec_rescale(cx, &d, -prec, mode, at);
        } else {
            long p = prec ? prec : 1;
            if (mpz_sgn(d.c) && dec_ndigits(d.c) > p && (rc = dec_rescale(cx, &d, dec_adjusted(&d) - p + 1, mode, at)) >= 0 &&
                dec_ndigits(d.c) > p) rc = dec_rescale(cx, &d, d.e + 1, mode, at);
        }
        if (rc < 0) goto out;
        rc = 0;
    }
    if (!mpz_sgn(d.c) && d.e > 0 && (t == 'f' || t == 'F' || t == '%')) d.e = 0;
    {
        if (eval_walk(cx, 1, mpz_size(d.c) * 8, at) < 0) { rc = -1; goto out; }
        char *digits = mpz_get_str(NULL, 10, d.c);
        int64_t nd = (int64_t)strlen(digits), left = d.e + nd, dot;
        if (t == 'e' || t == 'E') dot = !mpz_sgn(d.c) && prec >= 0 ? 1 - prec : 1;
        else if (t == 'f' || t == 'F' || t == '%') dot = left;
        else dot = d.e <= 0 && left > -6 ? left : 1;
        cr_code c = CR_OK;
        if (dot <= 0) {
            c = cr_buf_putc(&body, '0');
            nint = 1;
            if (c == CR_OK) c = cr_buf_putc(&body, '.');
            for (int64_t k = 0; k < -dot && c == CR_OK; k++) c = cr_buf_putc(&body, '0');
            if (c == CR_OK) c = cr_buf_puts(&body, digits);
        } else if (dot >= nd) {
            c = cr_buf_puts(&body, digits);
            for (int64_t k = nd; k < dot && c == CR_OK; k++) c = cr_buf_putc(&body, '0');
            nint = body.len;
        } else {
            c = cr_buf_put(&body, digits, (size_t)dot);
            nint = (size_t)dot;
            if (c == CR_OK) c = cr_buf_putc(&body, '.');
            if (c == CR_OK) c = cr_buf_puts(&body, digits + dot);
        }
        free(digits);
        int64_t ex = left - dot;
        if (c == CR_OK && (ex != 0 || t == 'e' || t == 'E'))
            c = cr_buf_printf(&body, "%c%+lld", t == 'e' || t == 'g' || t == 'n' ? 'e' : 'E', (long long)ex);
        if (c == CR_OK && t == '%') c = cr_buf_putc(&body, '%');
        if (c != CR_OK) { dec_fmt_fail(cx, c, at); rc = -1; goto out; }
        if (nonegz && !mpz_sgn(d.c)) neg = 0;
    }
layout: {
        char sc = neg ? '-' : sign == '-' ? 0 : sign;
        cr_code c = num_format_layout(b, &l, sc, body.p ? body.p : "", nint,
                                      body.p ? body.p + nint : "", body.len - nint);
        if (c != CR_OK) { dec_fmt_fail(cx, c, at); rc = -1; }
    }
out:
    cr_buf_free(&body);
    dclear(&d);
    return rc < 0 ? -1 : 0;
}
