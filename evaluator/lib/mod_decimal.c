/* evaluator/lib/mod_decimal.c: the decimal module as CPython 3.11's _decimal (libmpdec) behaves.
 * A Decimal is exact: a sign, a GMP coefficient and a decimal exponent, so Decimal('1.10')
 * keeps its trailing zero. Each operation follows the General Decimal Arithmetic rules that
 * CPython implements: the exact result, its ideal exponent, then one rounding to the
 * context's precision with its rounding mode, within Emin/Emax (_fix below). The context is
 * per run (eval_cx's dec_* fields, zero = CPython's defaults); its traps are the default
 * ones (InvalidOperation, DivisionByZero, Overflow raise; the others only set flags).
 *
 * Exponents are int64 and coefficients have at most about prec digits after an operation; a
 * power of ten an operation needs is checked against the integer size limit first, so a
 * huge precision or exponent is a LimitError, never an unbounded computation. */
#include <mpfr.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "evaluator/lib/decimal_int.h"

const char *const dec_round_names[RD_N] = {
    "ROUND_HALF_EVEN", "ROUND_HALF_UP", "ROUND_HALF_DOWN", "ROUND_UP", "ROUND_DOWN",
    "ROUND_CEILING", "ROUND_FLOOR", "ROUND_05UP"
};
const char *const dec_sig_names[SG_N] = {
    "Clamped", "InvalidOperation", "DivisionByZero", "Inexact", "FloatOperation", "Overflow",
    "Rounded", "Subnormal", "Underflow"
};

static const eval_class dec_cls, type_cls;
static val *from_float(eval_cx *cx, eval_args *a, const ir_node *at);

static void set_inf(dec *r, int neg) { mpz_set_ui(r->c, 0); r->e = 0; r->kind = DK_INF; r->neg = (uint8_t)neg; }
static void set_zero(dec *r, int neg, int64_t e) { mpz_set_ui(r->c, 0); r->e = e; r->kind = DK_FIN; r->neg = (uint8_t)neg; }
#define IS_DEC(v) ((v)->kind == V_OBJ && (v)->u.obj.cls == &dec_cls)

/* A trapped signal: CPython raises decimal.<sig> with the list of conditions as message. The
 * type is the class's own name, as the sandbox reports type(e).__name__. */
static int dec_raise(eval_cx *cx, const ir_node *at, int sig, const char *cond)
{
    if (sig != SG_INVALID || strcmp(cond, "ConversionSyntax") == 0) FLAG(cx, sig);
    else FLAG(cx, cond[0] == 'D' ? SG_INV_DIV : SG_INV_OP);
    if (!TRAPPED(cx, sig)) return 0;
    eval_raise(cx, CR_EPY_EXCEPTION, at, "[<class 'decimal.%s'>]", cond);
    snprintf(cx->err.type, sizeof cx->err.type, "%s", dec_sig_names[sig]);
    return -1;
}
/* A signal whose result, when it is not trapped, is a quiet NaN (InvalidOperation and its
 * conditions) or an infinity of sign neg (DivisionByZero). 0, -1 raised. */
static int signal_to(eval_cx *cx, dec *r, int sig, const char *cond, int neg, const ir_node *at)
{
    if (dec_raise(cx, at, sig, cond) < 0) return -1;
    mpz_set_ui(r->c, 0);
    r->e = 0;
    r->neg = (uint8_t)(sig == SG_DIVZERO && neg);
    r->kind = sig == SG_DIVZERO ? DK_INF : DK_NAN;
    return 0;
}
#define invalid(cx, r, at) signal_to(cx, r, SG_INVALID, "InvalidOperation", 0, at)

/* A text being built failed: its limit, or memory. */
void dec_fmt_fail(eval_cx *cx, cr_code c, const ir_node *at)
{
    if (cx->err.code == CR_OK)
        eval_raise(cx, c, at, "%s", c == CR_ELIMIT ? "string length limit" : "out of memory");
}

/* 10**k into out, refused past the integer size limit and charged by its size. */
static int p10(eval_cx *cx, mpz_t out, uint64_t k, const ir_node *at)
{
    if ((double)k * 3.3219280948873623 > (double)cx->nc.max_bits + 64) {
        eval_int_limit(cx, at);
        return -1;
    }
    if (eval_walk(cx, 1, k / 2, at) < 0) return -1;
    mpz_ui_pow_ui(out, 10, k);
    return 0;
}

int64_t dec_ndigits(const mpz_t c)
{
    if (mpz_fits_ulong_p(c)) {
        unsigned long v = mpz_get_ui(c);
        int64_t n = 1;
        while (v >= 10) { v /= 10; n++; }
        return n;
    }
    size_t s = mpz_sizeinbase(c, 10);   /* exact or one too many */
    mpz_t p;
    mpz_init(p);
    mpz_ui_pow_ui(p, 10, s - 1);
    int lt = mpz_cmpabs(c, p) < 0;
    mpz_clear(p);
    return (int64_t)s - lt;
}
int64_t dec_adjusted(const dec *d) { return d->e + dec_ndigits(d->c) - 1; }

/* Whether dropping digits rounds the kept part up: `half` compares the dropped part with one
 * half of the last kept unit, `last` is the last kept digit. */
static int rounds_up(int mode, int neg, int last, int half, int nonzero)
{
    if (!nonzero) return 0;
    switch (mode) {
    case RD_DOWN: return 0;
    case RD_UP: return 1;
    case RD_HALF_UP: return half >= 0;
    case RD_HALF_DOWN: return half > 0;
    case RD_HALF_EVEN: return half > 0 || (half == 0 && (last & 1));
    case RD_CEILING: return !neg;
    case RD_FLOOR: return neg;
    default: return last == 0 || last == 5;
    }
}

/* _rescale: d to exponent e exactly (zeros appended) or rounded with `mode`. 1 when digits
 * that were not zero were dropped, 0 exact, -1 raised. The coefficient may gain a digit
 * (999 → 1000); the caller decides what that means. */
int dec_rescale(eval_cx *cx, dec *d, int64_t e, int mode, const ir_node *at)
{
    if (d->kind != DK_FIN) return 0;
    if (!mpz_sgn(d->c)) { d->e = e; return 0; }
    mpz_t p, r;
    if (e <= d->e) {
        mpz_init(p);
        int rc = p10(cx, p, (uint64_t)(d->e - e), at);
        if (rc == 0) { mpz_mul(d->c, d->c, p); d->e = e; }
        mpz_clear(p);
        return rc;
    }
    uint64_t k = (uint64_t)(e - d->e);
    int half, nonzero = 1, last;
    if (k > (uint64_t)dec_ndigits(d->c) + 1) {
        mpz_set_ui(d->c, 0);
        half = -1;
    } else {
        mpz_inits(p, r, NULL);
        if (p10(cx, p, k, at) < 0) { mpz_clears(p, r, NULL); return -1; }
        mpz_tdiv_qr(d->c, r, d->c, p);
        nonzero = mpz_sgn(r) != 0;
        mpz_mul_2exp(r, r, 1);
        half = mpz_cmp(r, p);
        half = half > 0 ? 1 : half < 0 ? -1 : 0;
        mpz_clears(p, r, NULL);
    }
    last = (int)mpz_fdiv_ui(d->c, 10);
    if (rounds_up(mode, d->neg, last, half, nonzero)) mpz_add_ui(d->c, d->c, 1);
    d->e = e;
    return nonzero;
}

/* Overflow: trapped, it raises; not, the result is an infinity or the largest finite number,
 * as the rounding goes (_fix's handling of Overflow). 0, -1 raised. */
static int overflow(eval_cx *cx, dec *d, int64_t prec, int mode, const ir_node *at)
{
    FLAG(cx, SG_INEXACT);
    FLAG(cx, SG_ROUNDED);
    if (dec_raise(cx, at, SG_OVERFLOW, "Overflow") < 0) return -1;
    if (mode == RD_HALF_UP || mode == RD_HALF_EVEN || mode == RD_HALF_DOWN || mode == RD_UP ||
        (mode == RD_CEILING && !d->neg) || (mode == RD_FLOOR && d->neg)) {
        set_inf(d, d->neg);
        return 0;
    }
    d->e = EMAX(cx) - prec + 1;
    return p10(cx, d->c, (uint64_t)prec, at) < 0 ? -1 : (mpz_sub_ui(d->c, d->c, 1), 0);
}

/* _fix: d rounded to prec digits with `mode`, kept within Emin/Emax, folded down to Etop
 * under clamp=1. 0, -1 raised. */
static int dfix(eval_cx *cx, dec *d, int64_t prec, int mode, const ir_node *at)
{
    if (d->kind != DK_FIN) return 0;
    int64_t etiny = EMIN(cx) - prec + 1, etop = EMAX(cx) - prec + 1;
    if (!mpz_sgn(d->c)) {
        int64_t top = cx->dec.clamp ? etop : EMAX(cx);
        int64_t ne = d->e < etiny ? etiny : d->e > top ? top : d->e;
        if (ne != d->e) { d->e = ne; FLAG(cx, SG_CLAMPED); }
        return 0;
    }
    int64_t emin = dec_ndigits(d->c) + d->e - prec;
    if (emin > etop) return overflow(cx, d, prec, mode, at);
    int sub = emin < etiny;
    if (sub) emin = etiny;
    if (d->e < emin) {
        int inexact = dec_rescale(cx, d, emin, mode, at);
        if (inexact < 0) return -1;
        if (dec_ndigits(d->c) > prec) { mpz_tdiv_q_ui(d->c, d->c, 10); d->e++; }
        if (d->e > etop) return overflow(cx, d, prec, mode, at);
        if (sub) {
            if (inexact) FLAG(cx, SG_UNDERFLOW);
            FLAG(cx, SG_SUBNORMAL);
        }
        if (inexact) FLAG(cx, SG_INEXACT);
        FLAG(cx, SG_ROUNDED);
        if (!mpz_sgn(d->c)) FLAG(cx, SG_CLAMPED);
        return 0;
    }
    if (sub) FLAG(cx, SG_SUBNORMAL);
    if (cx->dec.clamp && d->e > etop) {
        FLAG(cx, SG_CLAMPED);
        return dec_rescale(cx, d, etop, mode, at) < 0 ? -1 : 0;
    }
    return 0;
}
static int fix(eval_cx *cx, dec *d, const ir_node *at)
{
    return dfix(cx, d, DEC_PREC(cx), cx->dec.round, at);
}

/* ---- conversions ------------------------------------------------------------------------ */

static void from_z(dec *d, const mpz_t z)
{
    mpz_abs(d->c, z);
    d->neg = mpz_sgn(z) < 0;
    d->e = 0;
    d->kind = DK_FIN;
}

/* The exact value of the double nearest to q, as Decimal(float) gives it. */
static void from_double_q(dec *d, const mpq_t q)
{
    mpfr_t f;
    mpfr_init2(f, 53);
    mpfr_set_q(f, q, MPFR_RNDN);
    d->kind = DK_FIN;
    d->neg = mpfr_signbit(f) != 0;
    if (mpfr_zero_p(f)) {
        mpz_set_ui(d->c, 0);
        d->e = 0;
    } else {
        long ex = (long)mpfr_get_z_2exp(d->c, f);
        mpz_abs(d->c, d->c);
        unsigned long tz = mpz_scan1(d->c, 0);
        if (ex < 0) {
            unsigned long k = tz < (unsigned long)-ex ? tz : (unsigned long)-ex;
            mpz_tdiv_q_2exp(d->c, d->c, k);
            ex += (long)k;
        }
        if (ex >= 0) {
            mpz_mul_2exp(d->c, d->c, (unsigned long)ex);
            d->e = 0;
        } else {
            mpz_t p;
            mpz_init(p);
            mpz_ui_pow_ui(p, 5, (unsigned long)-ex);
            mpz_mul(d->c, d->c, p);
            mpz_clear(p);
            d->e = ex;
        }
    }
    mpfr_clear(f);
}

/* The rational value of a finite d. */
static int to_q(eval_cx *cx, mpq_t q, const dec *d, const ir_node *at)
{
    mpz_t p;
    mpz_init(p);
    int rc = p10(cx, p, (uint64_t)(d->e < 0 ? -d->e : d->e), at);
    if (rc == 0) {
        if (d->e >= 0) {
            mpz_mul(mpq_numref(q), d->c, p);
            mpz_set_ui(mpq_denref(q), 1);
        } else {
            mpz_set(mpq_numref(q), d->c);
            mpz_set(mpq_denref(q), p);
            mpq_canonicalize(q);
        }
        if (d->neg) mpq_neg(q, q);
    }
    mpz_clear(p);
    return rc;
}

/* A string as Decimal(str) reads it. 0, or 1 when it is not a number. */
static int parse(eval_cx *cx, dec *d, const char *s, size_t n)
{
    while (n && (*s == ' ' || (*s >= '\t' && *s <= '\r'))) { s++; n--; }
    while (n && (s[n - 1] == ' ' || (s[n - 1] >= '\t' && s[n - 1] <= '\r'))) n--;
    size_t i = 0;
    d->neg = 0;
    d->kind = DK_FIN;
    d->e = 0;
    mpz_set_ui(d->c, 0);
    if (i < n && (s[i] == '+' || s[i] == '-')) d->neg = s[i++] == '-';
    const char *w = s + i;
    size_t wn = n - i;
    if ((wn == 3 && strncasecmp(w, "inf", 3) == 0) || (wn == 8 && strncasecmp(w, "infinity", 8) == 0)) {
        d->kind = DK_INF;
        return 0;
    }
    int nan = wn >= 3 && strncasecmp(w, "nan", 3) == 0 ? 3 : wn >= 4 && strncasecmp(w, "snan", 4) == 0 ? 4 : 0;
    if (nan) {
        d->kind = nan == 3 ? DK_NAN : DK_SNAN;
        for (size_t k = nan; k < wn; k++)
            if (w[k] < '0' || w[k] > '9') return 1;
        /* the payload is read whole, whatever the precision (CPython reads at MAX_PREC);
         * an operation keeps its last digits (nans) */
        if (wn > (size_t)nan) mpz_set_str(d->c, w + nan, 10);
        return 0;
    }
    /* digits [. digits] [e [sign] digits], '_' only between two digits */
    char *buf = malloc(n + 1);
    if (!buf) return eval_raise(cx, CR_ENOMEM, NULL, "out of memory"), -1;
    size_t nb = 0, ndig = 0;
    int64_t frac = 0;
    int dot = 0;
    for (; i < n; i++) {
        char ch = s[i];
        if (ch >= '0' && ch <= '9') { buf[nb++] = ch; ndig++; frac += dot; }
        else if (ch == '.' && !dot) dot = 1;
        else if (ch == '_' && i > 0 && i + 1 < n && s[i - 1] >= '0' && s[i - 1] <= '9' &&
                 s[i + 1] >= '0' && s[i + 1] <= '9') continue;
        else break;
    }
    int bad = ndig == 0;
    int64_t ex = 0;
    if (!bad && i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        int eneg = 0;
        if (i < n && (s[i] == '+' || s[i] == '-')) eneg = s[i++] == '-';
        size_t ed = 0;
        for (; i < n; i++) {
            char ch = s[i];
            if (ch >= '0' && ch <= '9') {
                if (ex > 100000000000000000LL) bad = 1;   /* past any exponent libmpdec takes */
                else ex = ex * 10 + (ch - '0');
                ed++;
            } else if (ch == '_' && ed && i + 1 < n && s[i + 1] >= '0' && s[i + 1] <= '9') {
                continue;
            } else {
                break;
            }
        }
        if (!ed) bad = 1;
        if (eneg) ex = -ex;
    }
    if (i < n) bad = 1;
    if (!bad) {
        buf[nb] = '\0';
        mpz_set_str(d->c, buf, 10);
        d->e = ex - frac;
    }
    free(buf);
    return bad;
}

/* ---- objects ---------------------------------------------------------------------------- */

static val *dec_new(eval_cx *cx, dec *d, int inexact)
{
    val *v = eval_obj_new(cx, &dec_cls, sizeof(dec));
    if (!v) return NULL;
    dec *o = DEC_OF(v);
    mpz_init(o->c);
    mpz_swap(o->c, d->c);
    o->e = d->e;
    o->neg = d->neg;
    o->kind = d->kind;
    if (inexact) v->flags |= VF_INEXACT;
    size_t limbs = mpz_size(o->c) * sizeof(mp_limb_t);
    if (limbs && eval_mem(cx, v, v->msz + limbs) < 0) { eval_decref(cx, v); return NULL; }
    return v;
}

static void dec_drop(eval_cx *cx, val *self)
{
    CR_UNUSED(cx);
    mpz_clear(DEC_OF(self)->c);
    free(self->u.obj.data);
    self->u.obj.data = NULL;
}

/* An operand of an arithmetic operation or comparison: a Decimal, an int or a bool (exact).
 * 1: something else (the caller says what CPython says), 0 converted. */
static int operand(const val *v, dec *d)
{
    if (IS_DEC(v)) { dcopy(d, DEC_OF(v)); return 0; }
    if (v->kind == V_INT || v->kind == V_BOOL) { from_z(d, mpq_numref(v->u.q)); return 0; }
    return 1;
}

/* to_sci_string */
int dec_sci(eval_cx *cx, cr_buf *b, const dec *d)
{
    cr_code rc = CR_OK;
    if (d->neg) rc = cr_buf_putc(b, '-');
    if (d->kind == DK_INF) return cr_buf_puts(b, "Infinity") == CR_OK && rc == CR_OK ? 0 : -1;
    if (d->kind != DK_FIN) {
        rc = cr_buf_puts(b, d->kind == DK_NAN ? "NaN" : "sNaN");
        if (rc == CR_OK && mpz_sgn(d->c)) {
            char *t = mpz_get_str(NULL, 10, d->c);
            rc = cr_buf_puts(b, t);
            free(t);
        }
        return rc == CR_OK ? 0 : -1;
    }
    if (eval_walk(cx, 1, mpz_size(d->c) * 8, NULL) < 0) return -1;
    char *t = mpz_get_str(NULL, 10, d->c);
    if (!t) return -1;
    int64_t nd = (int64_t)strlen(t), left = d->e + nd, dot;
    dot = d->e <= 0 && left > -6 ? left : 1;
    if (dot <= 0) {
        rc = cr_buf_puts(b, "0.");
        for (int64_t k = 0; k < -dot && rc == CR_OK; k++) rc = cr_buf_putc(b, '0');
        if (rc == CR_OK) rc = cr_buf_puts(b, t);
    } else if (dot >= nd) {
        rc = cr_buf_puts(b, t);
        for (int64_t k = nd; k < dot && rc == CR_OK; k++) rc = cr_buf_putc(b, '0');
    } else {
        rc = cr_buf_put(b, t, (size_t)dot);
        if (rc == CR_OK) rc = cr_buf_putc(b, '.');
        if (rc == CR_OK) rc = cr_buf_puts(b, t + dot);
    }
    if (rc == CR_OK && left != dot) rc = cr_buf_printf(b, "E%+lld", (long long)(left - dot));
    free(t);
    if (rc != CR_OK) { dec_fmt_fail(cx, rc, NULL); return -1; }
    return 0;
}

int dec_repr(eval_cx *cx, cr_buf *b, val *self, int as_str)
{
    cr_code rc = as_str ? CR_OK : cr_buf_puts(b, "Decimal('");
    if (rc == CR_OK && dec_sci(cx, b, DEC_OF(self)) < 0) return -1;
    if (rc == CR_OK && !as_str) rc = cr_buf_puts(b, "')");
    if (rc != CR_OK) dec_fmt_fail(cx, rc, NULL);
    return rc == CR_OK ? 0 : -1;
}

/* Finite a against finite b: -1, 0, 1. */
static int fin_cmp(eval_cx *cx, const dec *a, const dec *b, const ir_node *at, int *err)
{
    int sa = mpz_sgn(a->c) ? (a->neg ? -1 : 1) : 0, sb = mpz_sgn(b->c) ? (b->neg ? -1 : 1) : 0;
    if (sa != sb || !sa) return sa < sb ? -1 : sa > sb;
    int64_t ea = dec_adjusted(a), eb = dec_adjusted(b);
    if (ea != eb) return (ea < eb ? -1 : 1) * sa;
    /* same leading position: aligning costs at most the longer coefficient */
    const dec *hi = a->e >= b->e ? a : b;
    mpz_t p, x;
    mpz_inits(p, x, NULL);
    int r = 0;
    if (p10(cx, p, (uint64_t)(hi->e - (hi == a ? b->e : a->e)), at) < 0) *err = 1;
    else {
        mpz_mul(x, hi->c, p);
        r = hi == a ? mpz_cmp(x, b->c) : mpz_cmp(a->c, x);
        r = (r > 0) - (r < 0);
    }
    mpz_clears(p, x, NULL);
    return r * sa;
}

/* a against b, both not NaN: -1, 0, 1; *err on a raise. */
static int dcmp(eval_cx *cx, const dec *a, const dec *b, const ir_node *at, int *err)
{
    int ia = a->kind == DK_INF ? (a->neg ? -1 : 1) : 0, ib = b->kind == DK_INF ? (b->neg ? -1 : 1) : 0;
    if (ia || ib) return ia < ib ? -1 : ia > ib;
    return fin_cmp(cx, a, b, at, err);
}

/* A comparison operand: Decimal, int, or a float compared exactly as the double it is. */
static int cmp_operand(eval_cx *cx, const val *v, dec *d)
{
    if (operand(v, d) == 0) return 0;
    if (v->kind == V_FLOAT) {
        FLAG(cx, SG_FLOAT);
        from_double_q(d, eval_decided(cx, (val *)v, 1));   /* as an inexact float decides */
        return 0;
    }
    if (v->kind == V_INF) {
        FLAG(cx, SG_FLOAT);
        d->kind = v->sub == INF_NAN ? DK_NAN : DK_INF;
        d->neg = v->sub == INF_NEG;
        return 0;
    }
    return 1;
}

static int dec_eq(eval_cx *cx, val *a, val *b)
{
    eval_decides(cx, a);
    eval_decides(cx, b);
    dec x, y;
    dinit(&x);
    dinit(&y);
    int r = 0, err = 0;
    if (cmp_operand(cx, a, &x) == 0 && cmp_operand(cx, b, &y) == 0) {
        if (x.kind == DK_SNAN || y.kind == DK_SNAN) r = dec_raise(cx, NULL, SG_INVALID, "InvalidOperation");
        else if (x.kind != DK_NAN && y.kind != DK_NAN) r = dcmp(cx, &x, &y, NULL, &err) == 0;
    }
    dclear(&x);
    dclear(&y);
    return err ? -1 : r;
}

static int dec_cmp(eval_cx *cx, int op, val *a, val *b)
{
    eval_decides(cx, a);
    eval_decides(cx, b);
    dec x, y;
    dinit(&x);
    dinit(&y);
    int r, err = 0;
    if (cmp_operand(cx, a, &x) || cmp_operand(cx, b, &y)) {
        eval_raise(cx, CR_EPY_TYPE, NULL, "'%s' not supported between instances of '%s' and '%s'",
                   op >= IR_LT && op <= IR_GE ? ir_cmpop_src(op) : "<", eval_type_name(a),
                   eval_type_name(b));
        r = -1;
    } else if (x.kind >= DK_NAN || y.kind >= DK_NAN) {
        r = dec_raise(cx, NULL, SG_INVALID, "InvalidOperation");
    } else {
        int c = dcmp(cx, &x, &y, NULL, &err);
        switch (op) {
        case IR_LT: r = c < 0; break;
        case IR_LE: r = c <= 0; break;
        case IR_GT: r = c > 0; break;
        case IR_GE: r = c >= 0; break;
        case IR_EQ: r = c == 0; break;
        default: r = c != 0; break;
        }
        if (err) r = -1;
    }
    dclear(&x);
    dclear(&y);
    return r;
}

static int dec_hash(eval_cx *cx, val *self, uint64_t *h)
{
    dec *d = DEC_OF(self);
    if (d->kind == DK_SNAN) {
        eval_raise(cx, CR_EPY_TYPE, NULL, "Cannot hash a signaling NaN value.");
        return -1;
    }
    if (d->kind != DK_FIN) { *h = d->kind == DK_NAN ? 0x7ff8ULL : d->neg ? -314159ULL : 314159; return 0; }
    mpq_t q;
    mpq_init(q);
    int rc = to_q(cx, q, d, NULL);
    if (rc == 0) *h = eval_hash_q(q);
    mpq_clear(q);
    return rc;
}

static int dec_truth(eval_cx *cx, val *self)
{
    eval_decides(cx, self);
    dec *d = DEC_OF(self);
    return d->kind != DK_FIN || mpz_sgn(d->c) != 0;
}

/* ---- arithmetic ------------------------------------------------------------------------- */

/* NaN operands: a signaling one is InvalidOperation, a quiet one is the result (the first).
 * 1 result set, 0 none, -1 raised. */
static int nans(eval_cx *cx, dec *r, const dec *a, const dec *b, const ir_node *at)
{
    const dec *n = a->kind == DK_SNAN ? a : b && b->kind == DK_SNAN ? b
                 : a->kind == DK_NAN ? a : b && b->kind == DK_NAN ? b : NULL;
    if (!n) return 0;
    if (n->kind == DK_SNAN && dec_raise(cx, at, SG_INVALID, "InvalidOperation") < 0) return -1;
    dcopy(r, n);
    r->kind = DK_NAN;
    /* _fix_nan: a payload keeps its last prec - clamp digits */
    int64_t keep = DEC_PREC(cx) - cx->dec.clamp;
    if (mpz_sgn(r->c) && dec_ndigits(r->c) > keep) {
        mpz_t p;
        mpz_init(p);
        if (p10(cx, p, (uint64_t)keep, at) < 0) { mpz_clear(p); return -1; }
        mpz_tdiv_r(r->c, r->c, p);
        mpz_clear(p);
    }
    return 1;
}


static int dadd(eval_cx *cx, dec *r, const dec *a, const dec *b0, int sub, int64_t prec, int mode,
                const ir_node *at)
{
    int rc = nans(cx, r, a, b0, at);   /* a NaN subtrahend keeps its sign */
    if (rc) return rc < 0 ? -1 : 0;
    dec b;
    dinit(&b);
    dcopy(&b, b0);
    if (sub) b.neg ^= 1;
    if (a->kind == DK_INF || b.kind == DK_INF) {
        if (a->kind == DK_INF && b.kind == DK_INF && a->neg != b.neg) rc = invalid(cx, r, at);
        else set_inf(r, a->kind == DK_INF ? a->neg : b.neg);
        goto out;
    }
    int64_t e = a->e < b.e ? a->e : b.e;
    int negzero = mode == RD_FLOOR && a->neg != b.neg;
    int za = !mpz_sgn(a->c), zb = !mpz_sgn(b.c);
    if (za && zb) {
        set_zero(r, negzero || (a->neg && b.neg), e);
        rc = dfix(cx, r, prec, mode, at);
        goto out;
    }
    if (za || zb) {
        const dec *o = za ? &b : a;
        if (e < o->e - prec - 1) e = o->e - prec - 1;
        dcopy(r, o);
        rc = dec_rescale(cx, r, e, mode, at);
        if (rc >= 0) rc = dfix(cx, r, prec, mode, at);
        goto out;
    }
    /* An operand far below the other's last digit that can matter acts only as a sticky
     * digit: replaced by one unit just below, the rounding is the same. */
    dec x;
    dinit(&x);
    dcopy(&x, a);
    dec *hi = x.e >= b.e ? &x : &b, *lo = hi == &x ? &b : &x;
    int64_t hl = dec_ndigits(hi->c), lim = hi->e + (hl - prec - 2 < -1 ? hl - prec - 2 : -1);
    if (dec_adjusted(lo) < lim) { mpz_set_ui(lo->c, 1); lo->e = lim; }
    mpz_t p;
    mpz_init(p);
    rc = p10(cx, p, (uint64_t)(hi->e - lo->e), at);
    if (rc == 0) {
        mpz_mul(hi->c, hi->c, p);
        hi->e = lo->e;
        if (x.neg) mpz_neg(x.c, x.c);
        if (b.neg) mpz_neg(b.c, b.c);
        mpz_add(r->c, x.c, b.c);
        r->kind = DK_FIN;
        r->e = x.e;
        if (!mpz_sgn(r->c)) r->neg = (uint8_t)negzero;
        else { r->neg = mpz_sgn(r->c) < 0; mpz_abs(r->c, r->c); }
        rc = dfix(cx, r, prec, mode, at);
    }
    mpz_clear(p);
    dclear(&x);
out:
    dclear(&b);
    return rc < 0 ? -1 : 0;
}

static int dmul(eval_cx *cx, dec *r, const dec *a, const dec *b, int64_t prec, int mode,
                const ir_node *at)
{
    int rc = nans(cx, r, a, b, at), neg = a->neg ^ b->neg;
    if (rc) return rc < 0 ? -1 : 0;
    if (a->kind == DK_INF || b->kind == DK_INF) {
        const dec *o = a->kind == DK_INF ? b : a;
        if (o->kind == DK_FIN && !mpz_sgn(o->c)) return invalid(cx, r, at);
        set_inf(r, neg);
        return 0;
    }
    if (eval_walk(cx, 1, (mpz_size(a->c) + 1) * (mpz_size(b->c) + 1) / 8, at) < 0) return -1;
    mpz_mul(r->c, a->c, b->c);
    r->e = a->e + b->e;
    r->neg = (uint8_t)neg;
    r->kind = DK_FIN;
    return dfix(cx, r, prec, mode, at);
}

static int ddiv(eval_cx *cx, dec *r, const dec *a, const dec *b, int64_t prec, int mode,
                const ir_node *at)
{
    int rc = nans(cx, r, a, b, at), neg = a->neg ^ b->neg;
    if (rc) return rc < 0 ? -1 : 0;
    if (a->kind == DK_INF) {
        if (b->kind == DK_INF) return invalid(cx, r, at);
        set_inf(r, neg);
        return 0;
    }
    if (b->kind == DK_INF) {
        FLAG(cx, SG_CLAMPED);
        set_zero(r, neg, EMIN(cx) - prec + 1);
        return 0;
    }
    if (!mpz_sgn(b->c)) {
        if (!mpz_sgn(a->c)) return signal_to(cx, r, SG_INVALID, "DivisionUndefined", 0, at);
        return signal_to(cx, r, SG_DIVZERO, "DivisionByZero", neg, at);
    }
    r->kind = DK_FIN;
    r->neg = (uint8_t)neg;
    if (!mpz_sgn(a->c)) {
        set_zero(r, neg, a->e - b->e);
        return dfix(cx, r, prec, mode, at);
    }
    int64_t shift = dec_ndigits(b->c) - dec_ndigits(a->c) + prec + 1, ideal = a->e - b->e;
    mpz_t p, q, rem;
    mpz_inits(p, q, rem, NULL);
    rc = p10(cx, p, (uint64_t)(shift < 0 ? -shift : shift), at);
    if (rc == 0) {
        if (shift >= 0) { mpz_mul(q, a->c, p); mpz_tdiv_qr(q, rem, q, b->c); }
        else { mpz_mul(p, b->c, p); mpz_tdiv_qr(q, rem, a->c, p); }
        int64_t e = a->e - b->e - shift;
        if (mpz_sgn(rem)) {
            if (mpz_divisible_ui_p(q, 5)) mpz_add_ui(q, q, 1);   /* a sticky digit */
        } else {
            while (e < ideal && mpz_divisible_ui_p(q, 10)) { mpz_divexact_ui(q, q, 10); e++; }
        }
        mpz_swap(r->c, q);
        r->e = e;
        rc = dfix(cx, r, prec, mode, at);
    }
    mpz_clears(p, q, rem, NULL);
    return rc;
}

/* _divide: the integer quotient (toward zero) and the remainder (sign of a), both finite,
 * b not zero. 0, -1 raised. */
static int ddivmod(eval_cx *cx, dec *q, dec *rm, const dec *a, const dec *b, const ir_node *at)
{
    int neg = a->neg ^ b->neg;
    int64_t ideal = b->kind == DK_INF ? a->e : a->e < b->e ? a->e : b->e;
    int64_t ediff = b->kind == DK_INF ? 0 : dec_adjusted(a) - dec_adjusted(b);
    if (!mpz_sgn(a->c) || b->kind == DK_INF || ediff <= -2) {
        set_zero(q, neg, 0);
        dcopy(rm, a);
        return dec_rescale(cx, rm, ideal, cx->dec.round, at) < 0 ? -1 : 0;
    }
    int64_t prec = DEC_PREC(cx);
    if (ediff <= prec) {
        mpz_t x, y, p;
        mpz_inits(x, y, p, NULL);
        int rc = p10(cx, p, (uint64_t)(a->e >= b->e ? a->e - b->e : b->e - a->e), at);
        if (rc == 0) {
            mpz_set(x, a->c);
            mpz_set(y, b->c);
            mpz_mul(a->e >= b->e ? x : y, a->e >= b->e ? x : y, p);
            mpz_tdiv_qr(q->c, rm->c, x, y);
            q->kind = rm->kind = DK_FIN;
            q->e = 0;
            q->neg = (uint8_t)neg;
            rm->e = ideal;
            rm->neg = a->neg;
            rc = p10(cx, p, (uint64_t)prec, at);
            if (rc == 0 && mpz_cmp(q->c, p) >= 0) rc = 1;
        }
        mpz_clears(x, y, p, NULL);
        if (rc <= 0) return rc;
    }
    if (signal_to(cx, q, SG_INVALID, "DivisionImpossible", 0, at) < 0) return -1;
    dcopy(rm, q);
    return 0;
}

static int dfloordiv(eval_cx *cx, dec *r, const dec *a, const dec *b, int want_mod,
                     const ir_node *at)
{
    int rc = nans(cx, r, a, b, at);
    if (rc) return rc < 0 ? -1 : 0;
    if (a->kind == DK_INF) {
        if (want_mod || b->kind == DK_INF) return invalid(cx, r, at);
        set_inf(r, a->neg ^ b->neg);
        return 0;
    }
    if (b->kind == DK_FIN && !mpz_sgn(b->c)) {
        if (!mpz_sgn(a->c)) return signal_to(cx, r, SG_INVALID, "DivisionUndefined", 0, at);
        return want_mod ? invalid(cx, r, at)
                        : signal_to(cx, r, SG_DIVZERO, "DivisionByZero", a->neg ^ b->neg, at);
    }
    dec other;
    dinit(&other);
    rc = want_mod ? ddivmod(cx, &other, r, a, b, at) : ddivmod(cx, r, &other, a, b, at);
    dclear(&other);
    if (rc == 0 && want_mod) rc = fix(cx, r, at);
    return rc;
}

/* a ** n for a finite nonzero a and an integer n past 62 bits: 1 when |a| is 1 (_power's
 * exponent: a's times prec for n > 0, 0 for n < 0, then at least 1 - prec), else an
 * overflow or a result below any subnormal. 0, -1 raised. */
static int dpow_huge(eval_cx *cx, dec *r, const dec *a, int neg_exp, int rneg, const ir_node *at)
{
    int64_t prec = DEC_PREC(cx), c = dec_adjusted(a);
    int unit = c == 0 && mpz_cmp_ui(a->c, 1) >= 0;
    if (unit) {
        mpz_t p;
        mpz_init(p);
        if (p10(cx, p, (uint64_t)(-a->e), at) < 0) { mpz_clear(p); return -1; }
        unit = mpz_cmp(a->c, p) == 0;
        mpz_clear(p);
    }
    r->kind = DK_FIN;
    r->neg = (uint8_t)rneg;
    if (unit) {
        int64_t e = neg_exp ? 0 : a->e * prec;
        if (e < 1 - prec) { e = 1 - prec; FLAG(cx, SG_ROUNDED); }
        r->e = e;
        if (p10(cx, r->c, (uint64_t)-e, at) < 0) return -1;
        return fix(cx, r, at);
    }
    if ((c >= 0) != neg_exp) return overflow(cx, r, DEC_PREC(cx), cx->dec.round, at);
    mpz_set_ui(r->c, 1);
    r->e = EMIN(cx) - prec - 2;
    return fix(cx, r, at);
}

/* a ** n for an integer n, as libmpdec: at prec + digits(n) + 2 digits (one more for 1/a when
 * n < 0), half-even, by left-to-right squaring, then rounded to the context. */
static int dpow_int(eval_cx *cx, dec *r, const dec *a, const dec *nd, const ir_node *at)
{
    mpz_t n;
    mpz_init(n);
    mpz_set(n, nd->c);
    /* n past 62 bits: the result is 1 (|a| = 1), overflows or underflows; such an n that is
     * a multiple of ten is even and is not written out */
    int huge = nd->e > 0 && mpz_sgn(nd->c) && dec_adjusted(nd) >= 19;
    if (huge) {
        mpz_set_ui(n, 10);
    } else if (nd->e > 0) {
        mpz_t p;
        mpz_init(p);
        if (p10(cx, p, (uint64_t)nd->e, at) < 0) { mpz_clears(n, p, NULL); return -1; }
        mpz_mul(n, n, p);
        mpz_clear(p);
    } else if (nd->e < 0) {
        mpz_t p;
        mpz_init(p);
        if (p10(cx, p, (uint64_t)-nd->e, at) < 0) { mpz_clears(n, p, NULL); return -1; }
        mpz_divexact(n, n, p);
        mpz_clear(p);
    }
    int neg_exp = nd->neg && mpz_sgn(n), odd = mpz_odd_p(n);
    int rneg = a->neg && odd;
    int rc = 0;
    if (a->kind == DK_INF) {
        if (!mpz_sgn(n)) { mpz_set_ui(r->c, 1); r->e = 0; r->neg = 0; r->kind = DK_FIN; }
        else if (neg_exp) set_zero(r, rneg, 0);
        else set_inf(r, rneg);
        goto out;
    }
    if (!mpz_sgn(a->c)) {
        if (!mpz_sgn(n)) { rc = invalid(cx, r, at); goto out; }
        if (neg_exp) set_inf(r, rneg);
        else set_zero(r, rneg, 0);
        goto out;
    }
    if (!mpz_sgn(n)) { mpz_set_ui(r->c, 1); r->e = 0; r->neg = 0; r->kind = DK_FIN; goto out; }
    if (huge || mpz_sizeinbase(n, 2) > 62) {
        rc = dpow_huge(cx, r, a, neg_exp, rneg, at);
        mpz_clear(n);
        return rc;
    }
    {
        int64_t prec = DEC_PREC(cx) + dec_ndigits(n) + 2 + neg_exp;
        dec base, one;
        dinit(&base);
        dinit(&one);
        mpz_set_ui(one.c, 1);
        if (neg_exp) rc = ddiv(cx, &base, &one, a, prec, RD_HALF_EVEN, at);
        else dcopy(&base, a);
        base.neg = 0;
        uint64_t k = mpz_get_ui(n);
        if (rc == 0) {
            dcopy(r, &base);
            int top = 63;
            while (!(k >> top & 1)) top--;
            for (int i = top - 1; i >= 0 && rc == 0; i--) {
                rc = dmul(cx, r, r, r, prec, RD_HALF_EVEN, at);
                if (rc == 0 && (k >> i & 1)) rc = dmul(cx, r, r, &base, prec, RD_HALF_EVEN, at);
                if (rc == 0 && eval_count(cx, 1, at) < 0) rc = -1;
            }
        }
        dclear(&base);
        dclear(&one);
        r->neg = (uint8_t)rneg;
    }
out:
    mpz_clear(n);
    return rc < 0 ? -1 : fix(cx, r, at);
}

static int is_integral(const dec *d, eval_cx *cx, const ir_node *at, int *err)
{
    if (d->kind != DK_FIN) return 0;
    if (d->e >= 0 || !mpz_sgn(d->c)) return 1;
    if ((uint64_t)-d->e > (uint64_t)dec_ndigits(d->c)) return 0;
    mpz_t p;
    mpz_init(p);
    int r = 0;
    if (p10(cx, p, (uint64_t)-d->e, at) < 0) *err = 1;
    else r = mpz_divisible_p(d->c, p);
    mpz_clear(p);
    return r;
}

/* ---- exp, ln, log10 and x ** y: Ziv's loop on certified enclosures ------------------------
 * Each bound is computed from the operands' exact coefficient and exponent with MPFR's
 * directed roundings, so the true value lies strictly between lo and hi (it is never a
 * representable decimal here: libmpdec flags these results Inexact). Both bounds become
 * decimals just outside them with a sticky digit inside, rounded with the mode: when the two
 * agree, so does the true value; else the precision doubles. */
enum { MF_POW, MF_EXP, MF_LN, MF_LOG10 };

static mpfr_rnd_t flip(mpfr_rnd_t r) { return r == MPFR_RNDD ? MPFR_RNDU : MPFR_RNDD; }

/* x beside d (finite, nonzero) on the side `rnd` (MPFR_RNDD or MPFR_RNDU). */
static void set_bound(mpfr_t x, const dec *d, mpfr_rnd_t rnd)
{
    mpfr_rnd_t mag = d->neg ? flip(rnd) : rnd;
    mpfr_t t;
    mpfr_init2(t, mpfr_get_prec(x));
    mpfr_set_z(x, d->c, mag);
    if (d->e >= 0) {
        mpfr_ui_pow_ui(t, 10, (unsigned long)d->e, mag);
        mpfr_mul(x, x, t, mag);
    } else {
        mpfr_ui_pow_ui(t, 10, (unsigned long)-d->e, flip(mag));
        mpfr_div(x, x, t, mag);
    }
    if (d->neg) mpfr_neg(x, x, MPFR_RNDN);
    mpfr_clear(t);
}

/* ln(a), or log10(a) when ten, beside a finite a > 0 other than 1 on the side rnd. Near 1 it
 * is log1p of a - 1 taken exactly, so nothing cancels; elsewhere ln(c) + e ln(10) (log10(c)
 * + e), whose terms cannot cancel. 0, -1 raised. */
static int log_bound(eval_cx *cx, mpfr_t x, const dec *a, int ten, mpfr_rnd_t rnd,
                     const ir_node *at)
{
    int64_t adj = dec_adjusted(a);
    mpfr_t t;
    mpfr_init2(t, mpfr_get_prec(x) + 64);
    int rc = 0;
    if (adj == 0 || adj == -1) {
        mpq_t q;
        mpq_init(q);
        if ((rc = to_q(cx, q, a, at)) == 0) {
            mpz_sub(mpq_numref(q), mpq_numref(q), mpq_denref(q));
            /* log1p grows with t, and ln(10) > 0 divides: t on the side rnd, then the
             * quotient's divisor on the other side when the value is positive */
            mpfr_set_q(t, q, rnd);
            mpfr_log1p(t, t, rnd);
            if (ten) {
                mpfr_t l10;
                mpfr_init2(l10, mpfr_get_prec(t));
                mpfr_log_ui(l10, 10, mpfr_sgn(t) > 0 ? flip(rnd) : rnd);
                mpfr_div(t, t, l10, rnd);
                mpfr_clear(l10);
            }
        }
        mpq_clear(q);
    } else {
        mpfr_t l10;
        mpfr_init2(l10, mpfr_get_prec(t));
        mpfr_set_z(t, a->c, rnd);
        if (ten) {
            mpfr_log10(t, t, rnd);
            mpfr_add_si(t, t, (long)a->e, rnd);
        } else {
            mpfr_log(t, t, rnd);
            mpfr_log_ui(l10, 10, a->e >= 0 ? rnd : flip(rnd));
            mpfr_mul_si(l10, l10, (long)a->e, rnd);
            mpfr_add(t, t, l10, rnd);
        }
        mpfr_clear(l10);
    }
    mpfr_set(x, t, rnd);
    mpfr_clear(t);
    return rc;
}

/* f(a[, b]) beside its true value on the side rnd. 0, -1 raised. */
static int fn_bound(eval_cx *cx, mpfr_t x, int fn, const dec *a, const dec *b, mpfr_rnd_t rnd,
                    const ir_node *at)
{
    if (fn == MF_EXP) {
        set_bound(x, a, rnd);
        mpfr_exp(x, x, rnd);
        return 0;
    }
    if (fn != MF_POW) return log_bound(cx, x, a, fn == MF_LOG10, rnd, at);
    /* a ** b = exp(b ln a): the product's bound on the side rnd is the least (or greatest) of
     * the products of the factors' bounds */
    mpfr_t l[2], y[2], p;
    mpfr_prec_t wp = mpfr_get_prec(x) + 64;
    mpfr_inits2(wp, l[0], l[1], y[0], y[1], p, (mpfr_ptr)0);
    int rc = log_bound(cx, l[0], a, 0, MPFR_RNDD, at);
    if (rc == 0) rc = log_bound(cx, l[1], a, 0, MPFR_RNDU, at);
    if (rc == 0) {
        set_bound(y[0], b, MPFR_RNDD);
        set_bound(y[1], b, MPFR_RNDU);
        for (int i = 0; i < 4; i++) {
            mpfr_mul(p, l[i >> 1], y[i & 1], rnd);
            if (i == 0 || (rnd == MPFR_RNDD ? mpfr_less_p(p, x) : mpfr_greater_p(p, x)))
                mpfr_set(x, p, rnd);
        }
        mpfr_exp(x, x, rnd);
    }
    mpfr_clears(l[0], l[1], y[0], y[1], p, (mpfr_ptr)0);
    return rc;
}

/* The decimal just outside bound v (on v's side rnd) with a sticky digit toward the inside,
 * so that it rounds as every value just inside v does; or (MPFR_RNDN) v's nearest decimal of
 * ndig digits, the representable value v stands for. 0, -1 raised. */
static int bound_dec(eval_cx *cx, dec *r, mpfr_t v, mpfr_rnd_t rnd, size_t ndig, const ir_node *at)
{
    mpfr_exp_t e10;
    char *t = mpfr_get_str(NULL, &e10, 10, ndig, v, rnd);
    if (!t) { eval_raise(cx, CR_ENOMEM, at, "out of memory"); return -1; }
    r->neg = t[0] == '-';
    r->kind = DK_FIN;
    mpz_set_str(r->c, t + r->neg, 10);
    r->e = (int64_t)e10 - (int64_t)ndig;
    if (rnd != MPFR_RNDN) {
        mpz_mul_ui(r->c, r->c, 10);
        if ((rnd == MPFR_RNDD) != r->neg) mpz_add_ui(r->c, r->c, 1);
        else mpz_sub_ui(r->c, r->c, 1);
        r->e--;
    }
    mpfr_free_str(t);
    return 0;
}

/* f(a[, b]) for finite, nonzero operands, correctly rounded to the context's precision with
 * `mode`. 0, -1 raised. */
static int mpfr_dec(eval_cx *cx, dec *r, int fn, const dec *a, const dec *b, int mode,
                    const ir_node *at)
{
    int64_t prec = DEC_PREC(cx);
    mpfr_prec_t wp = (mpfr_prec_t)((double)(prec + 12) * 3.33) + 64;
    mpfr_t lo, hi;
    mpfr_inits2(wp, lo, hi, (mpfr_ptr)0);
    dec cand[2];
    dinit(&cand[0]);
    dinit(&cand[1]);
    uint16_t flags0 = cx->dec.flags, traps0 = cx->dec.traps;
    int rc = 0;
    for (int round = 0; rc == 0; round++, wp *= 2) {
        if (eval_walk(cx, 1, (uint64_t)wp * (uint64_t)wp / 16, at) < 0) { rc = -1; break; }
        mpfr_set_prec(lo, wp);
        mpfr_set_prec(hi, wp);
        if ((rc = fn_bound(cx, lo, fn, a, b, MPFR_RNDD, at)) < 0 ||
            (rc = fn_bound(cx, hi, fn, a, b, MPFR_RNDU, at)) < 0)
            break;
        if (mpfr_inf_p(lo) || mpfr_inf_p(hi)) {   /* past MPFR's range: past any Emax */
            r->kind = DK_FIN;
            r->neg = 0;
            rc = overflow(cx, r, prec, mode, at);
            break;
        }
        if (mpfr_zero_p(lo) || mpfr_zero_p(hi)) {   /* below it: rounds to a zero or Etiny */
            set_zero(r, 0, 0);
            mpz_set_ui(r->c, 1);
            r->e = EMIN(cx) - prec - 2;
            rc = dfix(cx, r, prec, mode, at);
            break;
        }
        /* both candidates rounded with no trap, then the one taken again with the traps */
        cx->dec.traps = DEFAULT_TRAPS;
        for (int i = 0; i < 2 && rc == 0; i++) {
            cx->dec.flags = flags0;
            rc = bound_dec(cx, &cand[i], i ? hi : lo, i ? MPFR_RNDU : MPFR_RNDD,
                           (size_t)prec + 3, at);
            if (rc == 0) rc = dfix(cx, &cand[i], prec, mode, at);
        }
        cx->dec.traps = traps0;
        cx->dec.flags = flags0;
        if (rc < 0) break;
        if ((cand[0].kind == cand[1].kind && cand[0].neg == cand[1].neg && cand[0].e == cand[1].e &&
             !mpz_cmp(cand[0].c, cand[1].c)) || round == 5) {
            /* agreed; or, still apart after 32 times the precision, the bounds hold a
             * representable value, which only x ** y can be (4 ** 0.5): that value, flagged
             * Inexact as libmpdec flags it, since any mode rounds it to itself */
            int exact = round == 5;
            rc = bound_dec(cx, r, lo, exact ? MPFR_RNDN : MPFR_RNDD, (size_t)prec + 3, at);
            if (rc == 0) rc = dfix(cx, r, prec, mode, at);
            if (rc == 0 && exact) { FLAG(cx, SG_INEXACT); FLAG(cx, SG_ROUNDED); }
            break;
        }
    }
    dclear(&cand[0]);
    dclear(&cand[1]);
    mpfr_clears(lo, hi, (mpfr_ptr)0);
    return rc;
}

/* x ** y for a non-integral y: exp(y ln x), with the context's rounding. */
static int dpow_real(eval_cx *cx, dec *r, const dec *a, const dec *b, const ir_node *at)
{
    if (a->kind == DK_INF) {
        if (a->neg) return invalid(cx, r, at);
        if (b->neg) set_zero(r, 0, 0); else set_inf(r, 0);
        return 0;
    }
    if (a->neg && mpz_sgn(a->c)) return invalid(cx, r, at);
    if (!mpz_sgn(a->c)) {
        if (b->neg) set_inf(r, 0); else set_zero(r, 0, 0);
        return 0;
    }
    int c, err = 0;
    dec one;
    dinit(&one);
    mpz_set_ui(one.c, 1);
    c = fin_cmp(cx, a, &one, at, &err);
    dclear(&one);
    if (err) return -1;
    if (c == 0) {   /* 1 ** y: 1 with prec digits, whatever the rounding, as libmpdec */
        int64_t prec = DEC_PREC(cx);
        set_zero(r, 0, -(prec - 1));
        if (p10(cx, r->c, (uint64_t)(prec - 1), at) < 0) return -1;
        FLAG(cx, SG_INEXACT);
        FLAG(cx, SG_ROUNDED);
        return 0;
    }
    if (b->kind == DK_INF) {
        if ((c > 0) != b->neg) set_inf(r, 0); else set_zero(r, 0, 0);
        return 0;
    }
    return mpfr_dec(cx, r, MF_POW, a, b, cx->dec.round, at);
}

/* exp(), ln(), log10(): correctly rounded, half-even whatever the context's rounding; the
 * exact cases (exp(0), ln(1), log10 of a power of ten) exact as libmpdec gives them. */
static int dfunc(eval_cx *cx, dec *r, int fn, const dec *a, const ir_node *at)
{
    int rc = nans(cx, r, a, NULL, at);
    if (rc) return rc < 0 ? -1 : 0;
    int zero = a->kind == DK_FIN && !mpz_sgn(a->c);
    if (fn == MF_EXP) {
        if (a->kind == DK_INF) { if (a->neg) set_zero(r, 0, 0); else set_inf(r, 0); return 0; }
        if (zero) { set_zero(r, 0, 0); mpz_set_ui(r->c, 1); return 0; }
    } else {
        if (zero) { set_inf(r, 1); return 0; }
        if (a->neg) return invalid(cx, r, at);
        if (a->kind == DK_INF) { set_inf(r, 0); return 0; }
        /* a power of ten: ln(1) = 0, log10(10**k) = k */
        mpz_t c;
        mpz_init_set(c, a->c);
        int64_t e = a->e;
        while (mpz_divisible_ui_p(c, 10)) { mpz_divexact_ui(c, c, 10); e++; }
        int pow10 = mpz_cmp_ui(c, 1) == 0;
        mpz_clear(c);
        if (pow10 && (fn == MF_LOG10 || e == 0)) {
            dec k;
            dinit(&k);
            mpz_set_si(k.c, (long)(fn == MF_LN ? 0 : e));
            k.neg = mpz_sgn(k.c) < 0;
            mpz_abs(k.c, k.c);
            dcopy(r, &k);
            dclear(&k);
            return fix(cx, r, at);
        }
    }
    return mpfr_dec(cx, r, fn, a, NULL, RD_HALF_EVEN, at);
}

/* 0, or 1 when the result came through exp(y ln x), which libmpdec rounds correctly only
 * "almost always": such a result is marked inexact. -1 raised. */
static int dpow(eval_cx *cx, dec *r, const dec *a, const dec *b, const ir_node *at)
{
    int rc = nans(cx, r, a, b, at), err = 0;
    if (rc) return rc < 0 ? -1 : 0;
    if (b->kind == DK_FIN && is_integral(b, cx, at, &err)) return dpow_int(cx, r, a, b, at);
    if (err) return -1;
    rc = dpow_real(cx, r, a, b, at);
    return rc < 0 ? -1 : r->kind == DK_FIN && mpz_sgn(r->c) != 0;
}

static val *arith(eval_cx *cx, int op, const dec *x, const dec *y, int inexact, const ir_node *at)
{
    dec r;
    dinit(&r);
    int rc;
    int64_t prec = DEC_PREC(cx);
    ROUNDING_START(cx);
    switch (op) {
    case IR_ADD: rc = dadd(cx, &r, x, y, 0, prec, cx->dec.round, at); break;
    case IR_SUB: rc = dadd(cx, &r, x, y, 1, prec, cx->dec.round, at); break;
    case IR_MUL: rc = dmul(cx, &r, x, y, prec, cx->dec.round, at); break;
    case IR_DIV: rc = ddiv(cx, &r, x, y, prec, cx->dec.round, at); break;
    case IR_FLOORDIV: rc = dfloordiv(cx, &r, x, y, 0, at); break;
    case IR_MOD: rc = dfloordiv(cx, &r, x, y, 1, at); break;
    default:
        if ((rc = dpow(cx, &r, x, y, at)) > 0) inexact = 1;
        break;
    }
    val *v = rc < 0 ? NULL : dec_new(cx, &r, inexact || ROUNDED(cx));
    dclear(&r);
    return v;
}

static val *dec_binop(eval_cx *cx, int op, val *a, val *b, const ir_node *at)
{
    dec x, y;
    dinit(&x);
    dinit(&y);
    val *v = NULL;
    int ok = operand(a, &x) == 0 && operand(b, &y) == 0;
    if (ok && op <= IR_POW && op != IR_MATMUL) {
        v = arith(cx, op, &x, &y, ((a->flags | b->flags) & VF_INEXACT) != 0, at);
    } else {
        const val *o = IS_DEC(a) ? b : a;
        int seq = o->kind == V_STR || o->kind == V_LIST || o->kind == V_TUPLE;
        if (seq && op == IR_MUL)
            eval_raise(cx, CR_EPY_TYPE, at, "can't multiply sequence by non-int of type "
                       "'decimal.Decimal'");
        else if (seq && op == IR_ADD && o == a)
            eval_raise(cx, CR_EPY_TYPE, at, "can only concatenate %s (not \"decimal.Decimal\") to %s",
                       eval_type_name(a), eval_type_name(a));
        else if (!(op == IR_MOD && a->kind == V_STR))   /* 'text %s' % d: the string's formatting */
            eval_raise(cx, CR_EPY_TYPE, at, "unsupported operand type(s) for %s: '%s' and '%s'",
                       ir_binop_py(op), eval_type_name(a), eval_type_name(b));
    }
    dclear(&x);
    dclear(&y);
    return v;
}

static val *dec_unary(eval_cx *cx, int op, val *self, const ir_node *at)
{
    dec r;
    dinit(&r);
    dcopy(&r, DEC_OF(self));
    val *v = NULL;
    ROUNDING_START(cx);
    int rc = nans(cx, &r, &r, NULL, at);
    if (rc == 0) {
        if (r.kind == DK_FIN && !mpz_sgn(r.c) && cx->dec.round != RD_FLOOR) r.neg = 0;
        else if (op == IR_NEG) r.neg ^= 1;
        rc = fix(cx, &r, at);
    }
    if (rc >= 0) v = dec_new(cx, &r, (self->flags & VF_INEXACT) || ROUNDED(cx));
    dclear(&r);
    return v;
}

/* ---- construction ----------------------------------------------------------------------- */

static int from_tuple(eval_cx *cx, dec *d, val *t, const ir_node *at)
{
    if (t->u.seq.len != 3) {
        eval_raise(cx, CR_EPY_VALUE, at, "argument must be a sequence of length 3");
        return -1;
    }
    val *s = t->u.seq.it[0], *ds = t->u.seq.it[1], *e = t->u.seq.it[2];
    if (s->kind != V_INT || mpz_cmp_ui(mpq_numref(s->u.q), 1) > 0 || mpz_sgn(mpq_numref(s->u.q)) < 0) {
        eval_raise(cx, CR_EPY_VALUE, at, "sign must be an integer with the value 0 or 1");
        return -1;
    }
    d->neg = mpz_sgn(mpq_numref(s->u.q)) != 0;
    if (e->kind == V_STR && (strcmp(e->u.str.s, "F") == 0 || strcmp(e->u.str.s, "n") == 0 ||
                             strcmp(e->u.str.s, "N") == 0)) {
        d->kind = e->u.str.s[0] == 'F' ? DK_INF : e->u.str.s[0] == 'n' ? DK_NAN : DK_SNAN;
    } else if (e->kind == V_INT && mpz_fits_slong_p(mpq_numref(e->u.q))) {
        d->kind = DK_FIN;
        d->e = mpz_get_si(mpq_numref(e->u.q));
    } else {
        eval_raise(cx, CR_EPY_VALUE, at, "exponent must be an integer");
        return -1;
    }
    if (ds->kind != V_TUPLE && ds->kind != V_LIST) {
        eval_raise(cx, CR_EPY_VALUE, at, "coefficient must be a tuple of digits");
        return -1;
    }
    if (eval_walk(cx, ds->u.seq.len, 0, at) < 0) return -1;
    mpz_set_ui(d->c, 0);
    for (size_t i = 0; i < ds->u.seq.len; i++) {
        val *g = ds->u.seq.it[i];
        if (g->kind != V_INT || mpz_cmp_ui(mpq_numref(g->u.q), 9) > 0 || mpz_sgn(mpq_numref(g->u.q)) < 0) {
            eval_raise(cx, CR_EPY_VALUE, at, "coefficient must be a tuple of digits");
            return -1;
        }
        mpz_mul_ui(d->c, d->c, 10);
        mpz_add_ui(d->c, d->c, mpz_get_ui(mpq_numref(g->u.q)));
    }
    if (d->kind == DK_INF) mpz_set_ui(d->c, 0);
    return 0;
}

static val *make(eval_cx *cx, eval_args *a, const ir_node *at)
{
    static const char *const kws[] = { "value", "context", NULL };
    if (eval_check_args(cx, a, 0, 2, kws, "Decimal", at) < 0) return NULL;
    val *x = a->npos ? a->pos[0] : eval_kwarg(a, "value");
    val *c = a->npos > 1 ? a->pos[1] : eval_kwarg(a, "context");
    if (c && c->kind != V_NONE && !(c->kind == V_OBJ && c->u.obj.cls == &dec_ctx_cls))
        return eval_raise(cx, CR_EPY_TYPE, at, "optional argument must be a context");
    dec d;
    dinit(&d);
    val *v = NULL;
    int rc = 0, inexact = x && (x->flags & VF_INEXACT);
    if (!x) {
    } else if (IS_DEC(x)) {
        dcopy(&d, DEC_OF(x));
    } else if (x->kind == V_INT || x->kind == V_BOOL) {
        from_z(&d, mpq_numref(x->u.q));
    } else if (x->kind == V_FLOAT || x->kind == V_INF) {
        rc = cmp_operand(cx, x, &d);
    } else if (x->kind == V_STR) {
        if (eval_walk(cx, 1, x->u.str.len, at) < 0) rc = -1;
        else if ((rc = parse(cx, &d, x->u.str.s, x->u.str.len)) > 0)
            rc = signal_to(cx, &d, SG_INVALID, "ConversionSyntax", 0, at);
    } else if (x->kind == V_TUPLE || x->kind == V_LIST) {
        rc = from_tuple(cx, &d, x, at);
    } else {
        eval_raise(cx, CR_EPY_TYPE, at, "conversion from %s to Decimal is not supported",
                   eval_type_name(x));
        rc = -1;
    }
    if (rc == 0) v = dec_new(cx, &d, inexact);
    dclear(&d);
    return v;
}

/* ---- builtins on Decimals: abs, float, int, round, divmod, pow ---------------------------- */

static val *to_int(eval_cx *cx, const dec *d, int mode, const ir_node *at)
{
    if (d->kind == DK_INF)
        return eval_raise(cx, CR_EPY_OVERFLOW, at, "cannot convert Infinity to integer");
    if (d->kind != DK_FIN) return eval_raise(cx, CR_EPY_VALUE, at, "cannot convert NaN to integer");
    dec t;
    dinit(&t);
    dcopy(&t, d);
    val *v = NULL;
    if (t.e < 0 && dec_rescale(cx, &t, 0, mode, at) < 0) goto out;
    if (t.e > 0 && dec_rescale(cx, &t, 0, mode, at) < 0) goto out;
    if (mpz_sizeinbase(t.c, 2) > cx->nc.max_bits) { eval_int_limit(cx, at); goto out; }
    if (!(v = eval_num(cx, V_INT))) goto out;
    mpz_set(mpq_numref(v->u.q), t.c);
    if (t.neg) mpq_neg(v->u.q, v->u.q);
    v = eval_num_done(cx, v);
out:
    dclear(&t);
    return v;
}

static int quantize(eval_cx *cx, dec *r, const dec *x, const dec *q, int mode, const ir_node *at)
{
    int rc = nans(cx, r, x, q, at);
    if (rc) return rc < 0 ? -1 : 0;
    if (x->kind == DK_INF || q->kind == DK_INF) {
        if (x->kind == DK_INF && q->kind == DK_INF) { dcopy(r, x); return 0; }
        return invalid(cx, r, at);
    }
    int64_t prec = DEC_PREC(cx);
    if (q->e < EMIN(cx) - prec + 1 || q->e > EMAX(cx)) return invalid(cx, r, at);
    dcopy(r, x);
    if (!mpz_sgn(x->c)) { r->e = q->e; return fix(cx, r, at); }
    if (dec_adjusted(x) > EMAX(cx) || dec_adjusted(x) - q->e + 1 > prec) return invalid(cx, r, at);
    int inexact = dec_rescale(cx, r, q->e, mode, at);
    if (inexact < 0) return -1;
    if ((mpz_sgn(r->c) && dec_adjusted(r) > EMAX(cx)) || dec_ndigits(r->c) > prec) return invalid(cx, r, at);
    if (inexact) FLAG(cx, SG_INEXACT);
    if (r->e > x->e) FLAG(cx, SG_ROUNDED);
    return fix(cx, r, at);
}

static val *dec_builtin(eval_cx *cx, int bid, val *self, eval_args *a, const ir_node *at)
{
    dec *d = DEC_OF(self);
    int inexact = (self->flags & VF_INEXACT) != 0;
    switch (bid) {
    case B_ABS:
        if (a->npos != 1 || a->nkw) return NULL;
        return dec_unary(cx, d->neg ? IR_NEG : IR_POS, self, at);
    case B_FLOAT: {
        if (a->npos != 1 || a->nkw) return NULL;
        if (d->kind == DK_SNAN)
            return eval_raise(cx, CR_EPY_VALUE, at, "cannot convert signaling NaN to float");
        if (d->kind != DK_FIN) return eval_nonfinite(cx, d->kind == DK_INF ? (d->neg ? -1 : 1) * (1.0 / 0.0) : 0.0 / 0.0);
        /* a float is its exact value here, as a float literal is */
        val *v = eval_num(cx, V_FLOAT);
        if (!v) return NULL;
        if (to_q(cx, v->u.q, d, at) < 0) { eval_decref(cx, v); return NULL; }
        return eval_num_finish(cx, v, inexact);
    }
    case B_INT:
        if (a->npos != 1 || a->nkw) return NULL;
        eval_decides(cx, self);
        return to_int(cx, d, RD_DOWN, at);
    case B_ROUND: {
        static const char *const kws[] = { "ndigits", NULL };
        if (eval_check_kw(cx, a, kws, "round", at) < 0) return NULL;
        val *n = a->npos > 1 ? a->pos[1] : eval_kwarg(a, "ndigits");
        if (!n || n->kind == V_NONE) {
            eval_decides(cx, self);
            return to_int(cx, d, RD_HALF_EVEN, at);
        }
        if (n->kind != V_INT && n->kind != V_BOOL)
            return eval_raise(cx, CR_EPY_TYPE, at, "optional arg must be an integer");
        if (!mpz_fits_slong_p(mpq_numref(n->u.q))) {
            dec nan;
            dinit(&nan);
            val *v = invalid(cx, &nan, at) < 0 ? NULL : dec_new(cx, &nan, inexact);
            dclear(&nan);
            return v;
        }
        dec q, r;
        dinit(&q);
        dinit(&r);
        mpz_set_ui(q.c, 1);
        q.e = -mpz_get_si(mpq_numref(n->u.q));
        val *v = quantize(cx, &r, d, &q, cx->dec.round, at) < 0 ? NULL : dec_new(cx, &r, inexact);
        dclear(&q);
        dclear(&r);
        return v;
    }
    case B_DIVMOD: case B_POW: {
        if (a->npos != 2 || a->nkw) return NULL;
        dec x, y, q, r;
        dinit(&x); dinit(&y); dinit(&q); dinit(&r);
        val *v = NULL;
        inexact |= (a->pos[1]->flags & VF_INEXACT) != 0;
        if (operand(a->pos[0], &x) || operand(a->pos[1], &y)) {
            eval_raise(cx, CR_EPY_TYPE, at, "unsupported operand type(s) for %s: '%s' and '%s'",
                       bid == B_POW ? "** or pow()" : "divmod()", eval_type_name(a->pos[0]), eval_type_name(a->pos[1]));
        } else if (bid == B_POW) {
            v = arith(cx, IR_POW, &x, &y, inexact, at);
        } else if ((v = arith(cx, IR_FLOORDIV, &x, &y, inexact, at))) {
            val *m = arith(cx, IR_MOD, &x, &y, inexact, at), *t = m ? eval_seq_new(cx, V_TUPLE, 2) : NULL;
            if (!t) { eval_decref(cx, m); eval_decref(cx, v); v = NULL; }
            else if (eval_seq_push(cx, t, v) < 0 || eval_seq_push(cx, t, m) < 0) { eval_decref(cx, t); v = NULL; }
            else v = t;
        }
        dclear(&x); dclear(&y); dclear(&q); dclear(&r);
        return v;
    }
    default:
        return NULL;
    }
}

/* ---- methods ---------------------------------------------------------------------------- */

/* A rounding= argument: one of the ROUND_* strings (NULL: the context's). 0, -1 raised. */
int dec_rounding_arg(eval_cx *cx, val *r, int *mode, const ir_node *at)
{
    if (!r) return 0;
    if (r->kind == V_STR)
        for (int i = 0; i < RD_N; i++)
            if (strcmp(r->u.str.s, dec_round_names[i]) == 0) { *mode = i; return 0; }
    eval_raise(cx, CR_EPY_TYPE, at, "valid values for rounding are:\n"
               "  [ROUND_CEILING, ROUND_FLOOR, ROUND_UP, ROUND_DOWN,\n"
               "   ROUND_HALF_UP, ROUND_HALF_DOWN, ROUND_HALF_EVEN,\n"
               "   ROUND_05UP]");
    return -1;
}

/* The argument checks of _decimal's methods: PyArg_ParseTupleAndKeywords over the first
 * `max` of kws (its format names no function), the first `need` required, or METH_NOARGS
 * when max is 0; and a context= argument that is one. 0, -1 raised. */
int dec_method_args(eval_cx *cx, eval_args *a, const char *const *kws, size_t max,
                       size_t need, val **out, const char *name, const ir_node *at)
{
    if (!max) {
        char qual[64];
        snprintf(qual, sizeof qual, "Decimal.%s", name);
        return eval_no_args(cx, a, qual, at);
    }
    static const char objects[] = "OOOOOOOOO";
    if (max >= sizeof objects) return eval_raise(cx, CR_EINTERNAL, at, "too many parameters"), -1;
    eval_argspec sp = { NULL, objects + sizeof objects - 1 - max, kws, (int)need, (int)max };
    if (eval_parse_args(cx, a, &sp, out, NULL, at) < 0) return -1;
    if (kws[max - 1][0] == 'c' && out[max - 1] && out[max - 1]->kind != V_NONE &&
        !(out[max - 1]->kind == V_OBJ && out[max - 1]->u.obj.cls == &dec_ctx_cls)) {
        eval_raise(cx, CR_EPY_TYPE, at, "optional argument must be a context");
        return -1;
    }
    return 0;
}

/* ---- as_tuple(): DecimalTuple(sign, digits, exponent), a named tuple ----------------------
 * It holds its Decimal (an object, no container) and makes its items when they are read. */
static void dt_drop(eval_cx *cx, val *self) { eval_decref(cx, *(val **)self->u.obj.data); }

static val *dt_items(eval_cx *cx, val *self)
{
    const dec *d = DEC_OF(*(val **)self->u.obj.data);
    val *t = eval_seq_new(cx, V_TUPLE, 3), *digits = NULL, *x;
    char *s = NULL;
    size_t n = 0;
    if (!t) return NULL;
    /* an infinity's digits are (0,), a NaN's its payload's, () for none */
    if (d->kind == DK_INF) n = 1;
    else if (d->kind == DK_FIN || mpz_sgn(d->c)) n = mpz_sizeinbase(d->c, 10);
    if (eval_walk(cx, n, 0, NULL) < 0 || !(digits = eval_seq_new(cx, V_TUPLE, n))) goto fail;
    if (d->kind != DK_INF && n && !(s = mpz_get_str(NULL, 10, d->c))) goto fail;
    for (size_t i = 0; s ? s[i] : i < n; i++)
        if (!(x = eval_int_si(cx, s ? s[i] - '0' : 0)) || eval_seq_push(cx, digits, x) < 0) goto fail;
    x = d->kind == DK_FIN ? eval_int_si(cx, (long)d->e)
      : eval_str(cx, d->kind == DK_INF ? "F" : d->kind == DK_NAN ? "n" : "N", 1);
    val *sign = eval_int_si(cx, d->neg);
    if (eval_seq_push(cx, t, sign) < 0 || eval_seq_push(cx, t, digits) < 0) {
        digits = NULL;
        eval_decref(cx, x);
        goto fail;
    }
    digits = NULL;
    if (eval_seq_push(cx, t, x) < 0) goto fail;
    free(s);
    return t;
fail:
    free(s);
    eval_decref(cx, digits);
    eval_decref(cx, t);
    if (cx->err.code == CR_OK) eval_raise(cx, CR_ENOMEM, NULL, "out of memory");
    return NULL;
}

static const char *const dt_fields[] = { "sign", "digits", "exponent" };

static int dt_repr(eval_cx *cx, cr_buf *b, val *self, int as_str)
{
    CR_UNUSED(as_str);
    val *t = dt_items(cx, self);
    int rc = t ? eval_put(cx, b, "DecimalTuple(", 13) : -1;
    for (int i = 0; i < 3 && rc == 0; i++) {
        char head[16];
        int n = snprintf(head, sizeof head, "%s%s=", i ? ", " : "", dt_fields[i]);
        rc = eval_put(cx, b, head, (size_t)n) < 0 ? -1 : eval_repr(cx, b, t->u.seq.it[i], 0);
    }
    if (rc == 0) rc = eval_put(cx, b, ")", 1);
    eval_decref(cx, t);
    return rc;
}

static val *dt_attr(eval_cx *cx, val *self, const char *name, const ir_node *at)
{
    CR_UNUSED(at);
    for (int i = 0; i < 3; i++) {
        if (strcmp(name, dt_fields[i]) != 0) continue;
        val *t = dt_items(cx, self), *r = t ? t->u.seq.it[i] : NULL;
        if (r) EV_INCREF(r);
        eval_decref(cx, t);
        return r;
    }
    return NULL;
}

static const eval_class dt_cls = {
    .name = "DecimalTuple", .drop = dt_drop, .repr = dt_repr, .attr = dt_attr, .items = dt_items,
};

/* ---- methods on two or three operands, the predicates --------------------------------- */

/* Where a and b, numerically equal and finite or infinite, stand in compare_total's order:
 * the negative one first, then by exponent (reversed when negative). */
static int total_tie(const dec *a, const dec *b)
{
    if (a->neg != b->neg) return a->neg ? -1 : 1;
    int64_t ea = a->kind == DK_FIN ? a->e : 0, eb = b->kind == DK_FIN ? b->e : 0;
    int c = (ea > eb) - (ea < eb);
    return a->neg ? -c : c;
}

/* max, min, max_mag, min_mag: a quiet NaN loses to a number; otherwise _pydecimal's rule. */
static int dminmax(eval_cx *cx, dec *r, const dec *a, const dec *b, int want_max, int mag,
                   const ir_node *at)
{
    int an = a->kind == DK_NAN ? 1 : a->kind == DK_SNAN ? 2 : 0;
    int bn = b->kind == DK_NAN ? 1 : b->kind == DK_SNAN ? 2 : 0;
    if (an || bn) {
        if (bn == 1 && !an) { dcopy(r, a); return fix(cx, r, at); }
        if (an == 1 && !bn) { dcopy(r, b); return fix(cx, r, at); }
        return nans(cx, r, a, b, at) < 0 ? -1 : 0;
    }
    dec x, y;
    dinit(&x);
    dinit(&y);
    dcopy(&x, a);
    dcopy(&y, b);
    if (mag) x.neg = y.neg = 0;
    int err = 0, c = dcmp(cx, &x, &y, at, &err);
    if (c == 0) c = total_tie(a, b);
    dclear(&x);
    dclear(&y);
    if (err) return -1;
    dcopy(r, (c < 0) == want_max ? b : a);
    return fix(cx, r, at);
}

/* scaleb: b an integer of exponent 0 within 2 (Emax + prec). */
static int dscaleb(eval_cx *cx, dec *r, const dec *a, const dec *b, const ir_node *at)
{
    int rc = nans(cx, r, a, b, at);
    if (rc) return rc < 0 ? -1 : 0;
    int64_t lim = 2 * (EMAX(cx) + DEC_PREC(cx));
    if (b->kind != DK_FIN || b->e != 0 || !mpz_fits_slong_p(b->c) ||
        mpz_get_si(b->c) > lim)
        return invalid(cx, r, at);
    dcopy(r, a);
    if (a->kind == DK_INF) return 0;
    r->e += b->neg ? -mpz_get_si(b->c) : mpz_get_si(b->c);
    return fix(cx, r, at);
}

/* fma: a * b exactly, then + c with one rounding. */
static int dfma(eval_cx *cx, dec *r, const dec *a, const dec *b, const dec *c, const ir_node *at)
{
    dec p;
    dinit(&p);
    int rc = 0;
    if (a->kind == DK_SNAN || b->kind == DK_SNAN) {
        rc = nans(cx, r, a->kind == DK_SNAN ? a : b, NULL, at);
        dclear(&p);
        return rc < 0 ? -1 : 0;
    }
    if (a->kind == DK_NAN || b->kind == DK_NAN) {
        dcopy(&p, a->kind == DK_NAN ? a : b);
    } else if (a->kind == DK_INF || b->kind == DK_INF) {
        const dec *o = a->kind == DK_INF ? b : a;
        if (o->kind == DK_FIN && !mpz_sgn(o->c)) { dclear(&p); return invalid(cx, r, at); }
        set_inf(&p, a->neg ^ b->neg);
    } else {
        if (eval_walk(cx, 1, (mpz_size(a->c) + 1) * (mpz_size(b->c) + 1) / 8, at) < 0) rc = -1;
        mpz_mul(p.c, a->c, b->c);
        p.e = a->e + b->e;
        p.neg = a->neg ^ b->neg;
    }
    if (rc == 0) rc = dadd(cx, r, &p, c, 0, DEC_PREC(cx), cx->dec.round, at);
    dclear(&p);
    return rc;
}

/* An operand argument: a Decimal or an int, else CPython's TypeError. 0, -1 raised. */
static int arg_operand(eval_cx *cx, val *v, dec *d, int *inexact, const ir_node *at)
{
    if (operand(v, d) == 0) { *inexact |= (v->flags & VF_INEXACT) != 0; return 0; }
    eval_raise(cx, CR_EPY_TYPE, at, "conversion from %s to Decimal is not supported",
               eval_type_name(v));
    return -1;
}

/* The methods above and the predicates, or NULL with no error for another id. */
static val *dec_method2(eval_cx *cx, val *self, int id, eval_args *a, const ir_node *at)
{
    static const char *const kw2[] = { "other", "third", "context" };
    static const char *const kwr[] = { "rounding", "context" };
    const dec *d = DEC_OF(self);
    const char *name = eval_method_name(id);
    int inexact = (self->flags & VF_INEXACT) != 0, rc = 0;
    val *arg[3], *v = NULL;
    switch (id) {
    case MT_DEC_IS_FINITE: case MT_DEC_IS_QNAN: case MT_DEC_IS_SNAN: case MT_DEC_IS_CANONICAL:
        if (dec_method_args(cx, a, kw2, 0, 0, arg, name, at) < 0) return NULL;
        return eval_bool(cx, id == MT_DEC_IS_FINITE ? d->kind == DK_FIN
                             : id == MT_DEC_IS_QNAN ? d->kind == DK_NAN
                             : id == MT_DEC_IS_SNAN ? d->kind == DK_SNAN : 1);
    case MT_DEC_IS_NORMAL: case MT_DEC_IS_SUBNORMAL: {
        if (dec_method_args(cx, a, kw2 + 2, 1, 0, arg, name, at) < 0) return NULL;
        if (d->kind != DK_FIN || !mpz_sgn(d->c)) return eval_bool(cx, 0);
        int normal = dec_adjusted(d) >= EMIN(cx);
        return eval_bool(cx, id == MT_DEC_IS_NORMAL ? normal : !normal);
    }
    case MT_DEC_COMPARE: case MT_DEC_MAX: case MT_DEC_MIN: case MT_DEC_MAX_MAG:
    case MT_DEC_MIN_MAG: case MT_DEC_COPY_SIGN: case MT_DEC_SAME_QUANTUM: case MT_DEC_SCALEB:
    case MT_DEC_FMA: case MT_DEC_TO_INTEGRAL_EXACT:
        break;
    default:
        return NULL;
    }
    int fma = id == MT_DEC_FMA, tie = id == MT_DEC_TO_INTEGRAL_EXACT;
    if (tie ? dec_method_args(cx, a, kwr, 2, 0, arg, name, at) < 0
            : fma ? dec_method_args(cx, a, kw2, 3, 2, arg, name, at) < 0
                  : dec_method_args(cx, a, (const char *const[]){ "other", "context" }, 2, 1, arg,
                                    name, at) < 0)
        return NULL;
    dec x, y, r;
    dinit(&x);
    dinit(&y);
    dinit(&r);
    if (!tie && (arg_operand(cx, arg[0], &x, &inexact, at) < 0 ||
                 (fma && arg_operand(cx, arg[1], &y, &inexact, at) < 0)))
        goto out;
    ROUNDING_START(cx);
    switch (id) {
    case MT_DEC_COMPARE: {
        if ((rc = nans(cx, &r, d, &x, at)) != 0) break;
        int err = 0, c = dcmp(cx, d, &x, at, &err);
        if (err) { rc = -1; break; }
        set_zero(&r, c < 0, 0);
        mpz_set_ui(r.c, (unsigned long)(c != 0));
        break;
    }
    case MT_DEC_MAX: case MT_DEC_MIN: case MT_DEC_MAX_MAG: case MT_DEC_MIN_MAG:
        rc = dminmax(cx, &r, d, &x, id == MT_DEC_MAX || id == MT_DEC_MAX_MAG,
                     id == MT_DEC_MAX_MAG || id == MT_DEC_MIN_MAG, at);
        break;
    case MT_DEC_COPY_SIGN:
        dcopy(&r, d);
        r.neg = x.neg;
        break;
    case MT_DEC_SAME_QUANTUM:
        v = eval_bool(cx, d->kind != DK_FIN || x.kind != DK_FIN
                          ? (d->kind >= DK_NAN && x.kind >= DK_NAN) || (d->kind == DK_INF && x.kind == DK_INF)
                          : d->e == x.e);
        goto out;
    case MT_DEC_SCALEB: rc = dscaleb(cx, &r, d, &x, at); break;
    case MT_DEC_FMA: rc = dfma(cx, &r, d, &x, &y, at); break;
    default: {   /* to_integral_exact: to_integral_value that flags Rounded and Inexact */
        int mode = cx->dec.round;
        if (dec_rounding_arg(cx, arg[0] && arg[0]->kind != V_NONE ? arg[0] : NULL, &mode, at) < 0) {
            rc = -1;
            break;
        }
        if ((rc = nans(cx, &r, d, NULL, at)) != 0) break;
        dcopy(&r, d);
        if (d->kind != DK_FIN || d->e >= 0) break;
        if (!mpz_sgn(d->c)) { r.e = 0; break; }
        int changed = dec_rescale(cx, &r, 0, mode, at);
        if (changed < 0) { rc = -1; break; }
        if (changed) FLAG(cx, SG_INEXACT);
        FLAG(cx, SG_ROUNDED);
        break;
    }
    }
    if (rc >= 0) v = dec_new(cx, &r, inexact || ROUNDED(cx));
out:
    dclear(&x);
    dclear(&y);
    dclear(&r);
    return v;
}

static val *dec_method(eval_cx *cx, val *self, int id, eval_args *a, const ir_node *at)
{
    static const char *const kws[] = { "exp", "rounding", "context" };
    dec *d = DEC_OF(self);
    const char *name = eval_method_name(id);
    int inexact = (self->flags & VF_INEXACT) != 0, rc = 0;
    val *arg[3];
    dec r;
    switch (id) {
    case MT_DEC_FROM_FLOAT:
        return from_float(cx, a, at);
    case MT_DEC_QUANTIZE: case MT_DEC_TO_INTEGRAL: {
        int q = id == MT_DEC_QUANTIZE, mode = cx->dec.round;
        if (dec_method_args(cx, a, kws + !q, 2u + q, (size_t)q, arg, name, at) < 0) return NULL;
        val *e = q ? arg[0] : NULL, *rd = arg[q];
        if (rd && rd->kind == V_NONE) rd = NULL;
        if (dec_rounding_arg(cx, rd, &mode, at) < 0) return NULL;
        dec x;
        dinit(&x);
        dinit(&r);
        if (!q) {
            rc = nans(cx, &r, d, NULL, at);
            if (rc == 0) {
                dcopy(&r, d);
                if (d->kind == DK_FIN && d->e < 0) rc = dec_rescale(cx, &r, 0, mode, at) < 0 ? -1 : 0;
            }
        } else if (operand(e, &x)) {
            rc = -1;
            eval_raise(cx, CR_EPY_TYPE, at, "conversion from %s to Decimal is not supported",
                       eval_type_name(e));
        } else {
            inexact |= (e->flags & VF_INEXACT) != 0;
            rc = quantize(cx, &r, d, &x, mode, at);
        }
        val *v = rc < 0 ? NULL : dec_new(cx, &r, inexact);
        dclear(&x);
        dclear(&r);
        return v;
    }
    default: {
        val *v = dec_method2(cx, self, id, a, at);
        if (v || cx->err.code != CR_OK) return v;
        break;
    }
    }
    if (dec_method_args(cx, a, kws + 2, id == MT_DEC_SQRT || id == MT_DEC_NORMALIZE || id == MT_DEC_EXP ||
                    id == MT_DEC_LN || id == MT_DEC_LOG10, 0, arg, name, at) < 0)
        return NULL;
    switch (id) {
    case MT_DEC_IS_ZERO: return eval_bool(cx, d->kind == DK_FIN && !mpz_sgn(d->c));
    case MT_DEC_IS_NAN: return eval_bool(cx, d->kind >= DK_NAN);
    case MT_DEC_IS_INFINITE: return eval_bool(cx, d->kind == DK_INF);
    case MT_DEC_IS_SIGNED: return eval_bool(cx, d->neg);
    case MT_DEC_AS_TUPLE: {
        val *t = eval_obj_new(cx, &dt_cls, sizeof(val *));
        if (t) { *(val **)t->u.obj.data = self; EV_INCREF(self); }
        return t;
    }
    case MT_DEC_ADJUSTED: return eval_int_si(cx, d->kind == DK_FIN && mpz_sgn(d->c) ? (long)dec_adjusted(d) : d->kind == DK_FIN ? (long)d->e : 0);
    default: break;
    }
    dinit(&r);
    dcopy(&r, d);
    ROUNDING_START(cx);
    switch (id) {
    case MT_DEC_COPY_ABS: r.neg = 0; break;
    case MT_DEC_COPY_NEGATE: r.neg ^= 1; break;
    case MT_DEC_NORMALIZE:
        if ((rc = nans(cx, &r, d, NULL, at)) != 0 || r.kind != DK_FIN) break;
        if ((rc = fix(cx, &r, at)) < 0) break;
        if (!mpz_sgn(r.c)) { r.e = 0; break; }
        while (mpz_divisible_ui_p(r.c, 10) && r.e < (cx->dec.clamp ? EMAX(cx) - DEC_PREC(cx) + 1 : EMAX(cx))) { mpz_divexact_ui(r.c, r.c, 10); r.e++; }
        break;
    case MT_DEC_EXP: case MT_DEC_LN: case MT_DEC_LOG10:
        rc = dfunc(cx, &r, id == MT_DEC_EXP ? MF_EXP : id == MT_DEC_LN ? MF_LN : MF_LOG10, d, at);
        break;
    case MT_DEC_SQRT: {
        if ((rc = nans(cx, &r, d, NULL, at)) != 0) break;
        if (r.kind == DK_INF) { if (r.neg) rc = invalid(cx, &r, at); break; }
        if (!mpz_sgn(r.c)) { r.e = d->e >= 0 ? d->e / 2 : -((-d->e + 1) / 2); rc = fix(cx, &r, at); break; }
        if (r.neg) { rc = invalid(cx, &r, at); break; }
        /* the integer square root at prec + 1 digits; exact roots go to the ideal exponent
         * floor(e / 2), inexact ones get a sticky digit, then one half-even rounding */
        int64_t prec = DEC_PREC(cx) + 1, e = d->e >= 0 ? d->e / 2 : -((-d->e + 1) / 2), l;
        mpz_t c, rem, p;
        mpz_inits(c, rem, p, NULL);
        mpz_set(c, d->c);
        int64_t nd = dec_ndigits(d->c);
        if (d->e & 1) { mpz_mul_ui(c, c, 10); l = (nd >> 1) + 1; } else l = (nd + 1) >> 1;
        int64_t shift = prec - l;
        int exact = 1;
        if ((rc = p10(cx, p, (uint64_t)(2 * (shift < 0 ? -shift : shift)), at)) == 0) {
            if (shift >= 0) mpz_mul(c, c, p);
            else { mpz_tdiv_qr(c, rem, c, p); exact = !mpz_sgn(rem); }
            e -= shift;
            if (eval_walk(cx, 1, mpz_size(c) * mpz_size(c), at) < 0) rc = -1;
        }
        if (rc == 0) {
            mpz_sqrtrem(r.c, rem, c);
            if (mpz_sgn(rem)) exact = 0;
            if (exact) {
                rc = p10(cx, p, (uint64_t)(shift < 0 ? -shift : shift), at);
                if (rc == 0 && shift >= 0) mpz_tdiv_q(r.c, r.c, p);
                else if (rc == 0) mpz_mul(r.c, r.c, p);
                e += shift;
            } else if (mpz_divisible_ui_p(r.c, 5)) {
                mpz_add_ui(r.c, r.c, 1);
            }
            r.e = e;
            if (rc == 0) rc = dfix(cx, &r, DEC_PREC(cx), RD_HALF_EVEN, at);
        }
        mpz_clears(c, rem, p, NULL);
        break;
    }
    default:
        dclear(&r);
        return NULL;
    }
    val *v = rc < 0 ? NULL : dec_new(cx, &r, inexact || ROUNDED(cx));
    dclear(&r);
    return v;
}

static val *dec_attr(eval_cx *cx, val *self, const char *name, const ir_node *at)
{
    CR_UNUSED(self);
    return eval_raise(cx, CR_EPY_ATTRIBUTE, at, "'decimal.Decimal' object has no attribute '%s'", name);
}

/* The exact value as a fraction, or none (0) where that fraction would pass the integer size
 * limit: a Decimal is held as coefficient and exponent and is reported as CPython prints it
 * (x = Decimal('1E+400000') is a final value), never expanded merely to be reported. */
static int dec_rational(eval_cx *cx, val *self, mpq_t out)
{
    dec *d = DEC_OF(self);
    if (d->kind != DK_FIN) return 0;
    if (!mpz_sgn(d->c)) { mpq_set_ui(out, 0, 1); return 1; }
    double bits = (double)(d->e < 0 ? -d->e : d->e) * 3.3219280948873623 +
                  (double)mpz_sizeinbase(d->c, 2);
    if (bits > (double)cx->nc.max_bits) return 0;
    return to_q(cx, out, d, NULL) < 0 ? -1 : 1;
}

static const eval_class dec_cls = {
    .name = "decimal.Decimal", .drop = dec_drop, .repr = dec_repr, .eq = dec_eq, .cmp = dec_cmp,
    .hash = dec_hash, .truth = dec_truth, .binop = dec_binop, .unary = dec_unary,
    .attr = dec_attr, .method = dec_method, .format = dec_format, .builtin = dec_builtin,
    .rational = dec_rational,
};

/* ---- the class object, the context, the rounding constants ------------------------------- */

static int type_repr(eval_cx *cx, cr_buf *b, val *self, int as_str)
{
    CR_UNUSED(self);
    CR_UNUSED(as_str);
    cr_code rc = cr_buf_puts(b, "<class 'decimal.Decimal'>");
    if (rc != CR_OK) dec_fmt_fail(cx, rc, NULL);
    return rc == CR_OK ? 0 : -1;
}

static val *type_call(eval_cx *cx, val *self, eval_args *a, const ir_node *at)
{
    CR_UNUSED(self);
    return make(cx, a, at);
}

static val *type_builtin(eval_cx *cx, int bid, val *self, eval_args *a, const ir_node *at)
{
    CR_UNUSED(self);
    CR_UNUSED(at);
    if (bid != B_ISINSTANCE) return NULL;
    return eval_bool(cx, IS_DEC(a->pos[0]));
}

int dec_type_eq(eval_cx *cx, val *a, val *b)
{
    CR_UNUSED(cx);
    return a->kind == V_OBJ && b->kind == V_OBJ && a->u.obj.cls == b->u.obj.cls;
}

int dec_type_hash(eval_cx *cx, val *self, uint64_t *h)
{
    CR_UNUSED(cx);
    CR_UNUSED(self);
    *h = 0x44656331ULL;
    return 0;
}

/* Decimal.from_float(x): the exact value of an int or of a float's double, with no
 * FloatOperation signal (unlike Decimal(float)). */
static val *from_float(eval_cx *cx, eval_args *a, const ir_node *at)
{
    if (a->npos + a->nkw != 1 || a->nkw)
        return eval_raise(cx, CR_EPY_TYPE, at, "Decimal.from_float() takes exactly one argument "
                          "(%zu given)", a->npos + a->nkw);
    val *x = a->pos[0];
    dec d;
    dinit(&d);
    val *v = NULL;
    uint16_t flags = cx->dec.flags;
    if (x->kind == V_INT || x->kind == V_BOOL || x->kind == V_FLOAT || x->kind == V_INF) {
        if (cmp_operand(cx, x, &d) == 0) v = dec_new(cx, &d, (x->flags & VF_INEXACT) != 0);
        cx->dec.flags = flags;
    } else {
        eval_raise(cx, CR_EPY_TYPE, at, "argument must be int or float");
    }
    dclear(&d);
    return v;
}

static val *type_method(eval_cx *cx, val *self, int id, eval_args *a, const ir_node *at)
{
    CR_UNUSED(self);
    return id == MT_DEC_FROM_FLOAT ? from_float(cx, a, at) : NULL;
}

static const eval_class type_cls = {
    .name = "type", .repr = type_repr, .eq = dec_type_eq, .hash = dec_type_hash, .call = type_call,
    .builtin = type_builtin, .method = type_method,
};

val *eval_dec_class(eval_cx *cx, const ir_node *at)
{
    CR_UNUSED(at);
    return eval_obj_new(cx, &type_cls, 0);
}

