/* evaluator/num/num.c: the exact core of the numeric kernel: decimal rounding, literal and string
 * parsing, Python's floor division, modulo and power, round(), and repr. Values are GMP
 * rationals; nothing here ever goes through a binary double except size estimates. */
#include <ctype.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/defaults.h"
#include "evaluator/num/num_int.h"

/* Decimal digits per bit and back, for size predictions (log10(2), log2(10)). */
#define BITS_PER_DIGIT 3.3219280948873623
/* CPython 3.11 refuses int<->str conversions past this many decimal digits. */
#define PY_INT_MAX_STR_DIGITS 4300

void num_ctx_from_policy(num_ctx *ctx, const cr_policy *pol)
{
    ctx->prec = pol->precision > 0 ? pol->precision : CR_DEFAULT_PRECISION;
    ctx->work = ctx->prec + NUM_GUARD;
    ctx->rounding = pol->rounding;
    ctx->max_bits = pol->limits.max_int_bits ? pol->limits.max_int_bits : (1u << 20);
    /* A value rounded to work digits is ~2 * work digits of numerator and power-of-ten
     * denominator: twice that leaves room for a few exact steps between roundings. */
    ctx->float_bits = NUM_FLOAT_BITS;
    uint64_t wb = (uint64_t)(4 * ctx->work * BITS_PER_DIGIT);
    if (wb > ctx->float_bits) ctx->float_bits = wb;
    if (ctx->float_bits > ctx->max_bits) ctx->float_bits = ctx->max_bits;
}

/* ---- decimal rounding -------------------------------------------------------------------- */

static const unsigned long long POW10_U64[20] = {
    1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull, 10000000ull,
    100000000ull, 1000000000ull, 10000000000ull, 100000000000ull, 1000000000000ull,
    10000000000000ull, 100000000000000ull, 1000000000000000ull, 10000000000000000ull,
    100000000000000000ull, 1000000000000000000ull, 10000000000000000000ull,
};

void num_pow10(mpz_t out, unsigned long k)
{
    if (k < 20 && sizeof(unsigned long) >= 8) mpz_set_ui(out, (unsigned long)POW10_U64[k]);
    else mpz_ui_pow_ui(out, 10, k);
}

/* z *= 10^k without building 10^k when it fits a word. */
static void mul_pow10(mpz_t z, unsigned long k)
{
    if (k < 20 && sizeof(unsigned long) >= 8) {
        mpz_mul_ui(z, z, (unsigned long)POW10_U64[k]);
    } else {
        mpz_t p;
        mpz_init(p);
        mpz_ui_pow_ui(p, 10, k);
        mpz_mul(z, z, p);
        mpz_clear(p);
    }
}

/* Rounds the quotient q = n / d (already truncated, remainder r with the sign of n) by mode. */
static void round_quotient(mpz_t q, const mpz_t r, const mpz_t d, int nsign, num_mode mode)
{
    if (!mpz_sgn(r)) return;
    int away;
    switch (mode) {
    case NUM_TRUNC: away = 0; break;
    case NUM_FLOOR: away = nsign < 0; break;
    case NUM_CEIL: away = nsign > 0; break;
    default: {
        /* Compare 2|r| with |d| without a temporary: |r| against |d| - |r|. */
        mpz_t t;
        mpz_init(t);
        mpz_abs(t, r);
        mpz_mul_2exp(t, t, 1);
        int c = mpz_cmpabs(t, d);
        mpz_clear(t);
        if (c > 0) away = 1;
        else if (c < 0) away = 0;
        else away = mode == NUM_HALF_UP || mpz_odd_p(q);
        break;
    }
    }
    if (away) {
        if (nsign < 0) mpz_sub_ui(q, q, 1);
        else mpz_add_ui(q, q, 1);
    }
}

void num_round_scaled(mpz_t out, const mpq_t x, long scale, num_mode mode)
{
    mpz_srcptr num = mpq_numref(x), den = mpq_denref(x);
    if (scale == 0 && mpz_cmp_ui(den, 1) == 0) {
        mpz_set(out, num);
        return;
    }
    mpz_t n, d, r;
    mpz_init_set(n, num);
    mpz_init_set(d, den);
    mpz_init(r);
    if (scale > 0) mul_pow10(n, (unsigned long)scale);
    else if (scale < 0) mul_pow10(d, (unsigned long)-scale);
    int nsign = mpz_sgn(n);
    mpz_tdiv_qr(out, r, n, d);
    round_quotient(out, r, d, nsign, mode);
    mpz_clear(n);
    mpz_clear(d);
    mpz_clear(r);
}

/* log2|z| for z != 0. */
static double log2_abs_z(const mpz_t z)
{
    long ex;
    double m = fabs(mpz_get_d_2exp(&ex, z));
    return (double)ex + log2(m);
}

double num_log2_abs(const mpq_t x)
{
    return log2_abs_z(mpq_numref(x)) - log2_abs_z(mpq_denref(x));
}

/* Exact test of |x| >= 10^e. */
static int abs_ge_pow10(const mpq_t x, long e)
{
    mpz_t t;
    mpz_init(t);
    int c;
    if (e >= 0) {
        mpz_set(t, mpq_denref(x));
        mul_pow10(t, (unsigned long)e);
        c = mpz_cmpabs(mpq_numref(x), t);
    } else {
        mpz_abs(t, mpq_numref(x));
        mul_pow10(t, (unsigned long)-e);
        c = mpz_cmp(t, mpq_denref(x));
    }
    mpz_clear(t);
    return c >= 0;
}

long num_dec_exp(const mpq_t x)
{
    /* A double estimate is right except within rounding error of an integer; only then
     * settle it exactly. */
    double est = num_log2_abs(x) * 0.30102999566398120;
    double fl = floor(est);
    long e = (long)fl;
    double frac = est - fl;
    double margin = 1e-9 * (1.0 + fabs(est));
    if (frac > margin && frac < 1.0 - margin) return e;
    e -= 1;
    while (abs_ge_pow10(x, e + 1)) e++;
    while (!abs_ge_pow10(x, e)) e--;
    return e;
}

long num_round_sig(mpz_t out, const mpq_t x, int digits, num_mode mode)
{
    long e = num_dec_exp(x);
    num_round_scaled(out, x, (long)digits - 1 - e, mode);
    /* Rounding up can carry into a new digit: 9.99 -> 10.0. */
    if (mpz_sizeinbase(out, 10) > (size_t)digits) {
        mpz_t p;
        mpz_init(p);
        num_pow10(p, (unsigned long)digits);
        if (mpz_cmpabs(out, p) >= 0) {
            mpz_tdiv_q_ui(out, out, 10);
            e++;
        }
        mpz_clear(p);
    }
    return e;
}

void num_q_from_dec(mpq_t out, const mpz_t digits, long exp10)
{
    if (exp10 >= 0) {
        mpz_set(mpq_numref(out), digits);
        mul_pow10(mpq_numref(out), (unsigned long)exp10);
        mpz_set_ui(mpq_denref(out), 1);
    } else {
        mpz_set(mpq_numref(out), digits);
        num_pow10(mpq_denref(out), (unsigned long)-exp10);
        mpq_canonicalize(out);
    }
}

void num_round_prec(mpq_t out, const mpq_t x, int prec)
{
    if (!mpq_sgn(x)) {
        mpq_set_ui(out, 0, 1);
        return;
    }
    mpz_t d;
    mpz_init(d);
    long e = num_round_sig(d, x, prec, NUM_HALF_EVEN);
    num_q_from_dec(out, d, e - prec + 1);
    mpz_clear(d);
}

/* f (53 bits) = x rounded as IEEE binary64 rounds it, subnormals and overflow included (MPFR's
 * documented emulation); returns the ternary value (0: f is x exactly). */
static int binary64_of(mpfr_t f, const mpq_t x)
{
    mpfr_exp_t emin = mpfr_get_emin(), emax = mpfr_get_emax();
    mpfr_set_emin(-1073);
    mpfr_set_emax(1024);
    int t = mpfr_set_q(f, x, MPFR_RNDN);
    t = mpfr_subnormalize(f, t, MPFR_RNDN);
    mpfr_set_emin(emin);
    mpfr_set_emax(emax);
    return t;
}

double num_get_double(const mpq_t x)
{
    mpfr_t f;
    mpfr_init2(f, 53);
    binary64_of(f, x);
    double d = mpfr_get_d(f, MPFR_RNDN);
    mpfr_clear(f);
    return d;
}

/* x = the shortest decimal that reads back as d (finite, nonzero) */
static void shortest_of_double(mpq_t x, double d)
{
    char t[40];
    int p = 0;
    do snprintf(t, sizeof t, "%.*e", p, d);
    while (strtod(t, NULL) != d && ++p < 17);
    char *e = strchr(t, 'e');
    long exp10 = strtol(e + 1, NULL, 10) - p;
    *e = 0;
    char *dot = strchr(t, '.');
    if (dot) memmove(dot, dot + 1, strlen(dot));
    mpz_t m;
    mpz_init_set_str(m, t, 10);
    num_q_from_dec(x, m, exp10);
    mpz_clear(m);
}

int num_double_range_slow(mpq_t x, int *exact)
{
    if (!mpq_sgn(x)) return 0;
    long e = (long)mpz_sizeinbase(mpq_numref(x), 2) - (long)mpz_sizeinbase(mpq_denref(x), 2);
    /* |x| is in [2^(e-1), 2^(e+1)): a normal double's range holds it */
    if (e > -1021 && e < 1023) return 0;
    mpfr_t f;
    mpfr_init2(f, 53);
    int t = binary64_of(f, x), where = 0;
    if (mpfr_inf_p(f)) {
        where = 1;
    } else if (e < 0 && (mpfr_zero_p(f) || mpfr_get_exp(f) < -1021)) {
        where = -1;
        if (t) {
            *exact = 0;
            if (mpfr_zero_p(f)) mpq_set_ui(x, 0, 1);
            else mpfr_get_q(x, f);
        }
    }
    mpfr_clear(f);
    return where;
}

int num_int_past_double(const mpz_t z)
{
    size_t bits = mpz_sizeinbase(z, 2);
    if (bits != 1024) return bits > 1024;
    /* 2^1024 - 2^970 is halfway from DBL_MAX to 2^1024, and the tie rounds to the even 2^1024 */
    mpz_t t;   /* (2^54 - 1) * 2^970 */
    mpz_init_set_ui(t, (1UL << 54) - 1);
    mpz_mul_2exp(t, t, 970);
    int past = mpz_cmpabs(z, t) >= 0;
    mpz_clear(t);
    return past;
}

int num_past_double(const mpq_t x)
{
    if (!mpq_sgn(x)) return 0;
    double l2 = num_log2_abs(x);
    if (l2 < 1023.5) return 0;
    if (l2 > 1024.5) return 1;
    mpq_t m;
    mpq_init(m);
    mpq_set_d(m, DBL_MAX);
    int past = mpz_cmpabs(mpq_numref(x), mpq_numref(m)) > 0 && mpz_cmp_ui(mpq_denref(x), 1) == 0;
    if (mpz_cmp_ui(mpq_denref(x), 1) != 0) {
        mpq_t a;
        mpq_init(a);
        mpq_abs(a, x);
        past = mpq_cmp(a, m) > 0;
        mpq_clear(a);
    }
    mpq_clear(m);
    return past;
}

/* ---- parsing ----------------------------------------------------------------------------- */

/* Collected digits of a number, with Python's underscore rule: one underscore at a time,
 * only between digits (and, for prefixed ints, right after the prefix). */
typedef struct {
    char small[128];
    char *p;
    size_t n, cap;
} digbuf;

static void digbuf_init(digbuf *b) { b->p = b->small; b->n = 0; b->cap = sizeof b->small; }
static void digbuf_free(digbuf *b) { if (b->p != b->small) free(b->p); }

static int digbuf_ensure(digbuf *b, size_t need)
{
    if (need + 1 <= b->cap) return 0;
    char *q = malloc(need + 1);
    if (!q) return -1;
    memcpy(q, b->p, b->n);
    if (b->p != b->small) free(b->p);
    b->p = q;
    b->cap = need + 1;
    return 0;
}

static int digit_value(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'z') return c - 'a' + 10;
    if (c >= 'A' && c <= 'Z') return c - 'A' + 10;
    return 99;
}

/* Scans digits of `base` from s[*i], appending them to b (all of them; the caller has sized
 * b for len). Underscores: allowed between digits, and first when `lead_us`. Returns the
 * number of digits, or -1 on a misplaced underscore. */
static long scan_digits(const char *s, size_t len, size_t *i, int base, digbuf *b, int lead_us)
{
    long nd = 0;
    int prev_us = 0;
    while (*i < len) {
        char c = s[*i];
        if (c == '_') {
            if (prev_us || (nd == 0 && !lead_us)) return -1;
            prev_us = 1;
            (*i)++;
            continue;
        }
        if (digit_value(c) >= base) break;
        b->p[b->n++] = c;
        nd++;
        prev_us = 0;
        (*i)++;
    }
    if (prev_us) return -1;
    return nd;
}

/* Sets out from the digit string b (base 10 when it has no digits past 9). */
static void set_from_digits(mpz_t out, digbuf *b, int base)
{
    if (b->n <= 18 && base == 10) {
        unsigned long long v = 0;
        for (size_t k = 0; k < b->n; k++) v = v * 10 + (unsigned)(b->p[k] - '0');
        mpz_set_ui(out, (unsigned long)v);
        return;
    }
    b->p[b->n] = '\0';
    mpz_set_str(out, b->n ? b->p : "0", base);
}

/* A decimal number: digits [. digits] [e [sign] digits], or . digits [exp]. Returns CR_OK,
 * CR_EPY_VALUE on bad syntax (nothing left over allowed), CR_ELIMIT past max_bits. */
static cr_code parse_decimal(mpq_t out, const char *s, size_t len, int *is_float,
                             const num_ctx *ctx)
{
    digbuf b;
    digbuf_init(&b);
    cr_code rc = CR_EPY_VALUE;
    if (digbuf_ensure(&b, len)) { rc = CR_ENOMEM; goto out; }
    size_t i = 0;
    long nint = scan_digits(s, len, &i, 10, &b, 0);
    if (nint < 0) goto out;
    long nfrac = 0;
    int isf = 0;
    if (i < len && s[i] == '.') {
        isf = 1;
        i++;
        if (i < len && s[i] == '_') goto out;
        nfrac = scan_digits(s, len, &i, 10, &b, 0);
        if (nfrac < 0) goto out;
    }
    if (nint + nfrac == 0) goto out;
    long exp = 0;
    if (i < len && (s[i] == 'e' || s[i] == 'E')) {
        isf = 1;
        i++;
        int neg = 0;
        if (i < len && (s[i] == '+' || s[i] == '-')) neg = s[i++] == '-';
        int prev_us = 0;
        long nd = 0;
        for (; i < len; i++) {
            if (s[i] == '_') {
                if (prev_us || nd == 0) goto out;
                prev_us = 1;
                continue;
            }
            if (s[i] < '0' || s[i] > '9') break;
            if (exp < 1000000000000L) exp = exp * 10 + (s[i] - '0');
            nd++;
            prev_us = 0;
        }
        if (nd == 0 || prev_us) goto out;
        if (neg) exp = -exp;
    }
    if (i != len) goto out;
    *is_float = isf;

    /* Drop leading and trailing zeros of the mantissa: they only move the exponent. */
    size_t lead = 0;
    while (lead < b.n && b.p[lead] == '0') lead++;
    if (lead == b.n) {
        mpq_set_ui(out, 0, 1);
        rc = CR_OK;
        goto out;
    }
    size_t end = b.n;
    long exp10 = exp - nfrac;
    while (end > lead && b.p[end - 1] == '0') {
        end--;
        exp10++;
    }
    size_t sig = end - lead;
    double bits_num = ((double)sig + (exp10 > 0 ? (double)exp10 : 0)) * BITS_PER_DIGIT;
    double bits_den = (exp10 < 0 ? (double)-exp10 : 0) * BITS_PER_DIGIT;
    if (bits_num > (double)ctx->max_bits + 4 || bits_den > (double)ctx->max_bits + 4) {
        rc = CR_ELIMIT;
        goto out;
    }
    memmove(b.p, b.p + lead, sig);
    b.n = sig;
    set_from_digits(mpq_numref(out), &b, 10);
    if (exp10 >= 0) {
        mul_pow10(mpq_numref(out), (unsigned long)exp10);
        mpz_set_ui(mpq_denref(out), 1);
    } else {
        num_pow10(mpq_denref(out), (unsigned long)-exp10);
        mpq_canonicalize(out);
    }
    rc = CR_OK;
out:
    digbuf_free(&b);
    return rc;
}

/* Digits after a 0x/0o/0b prefix (or of int(s, base)), into out. */
static cr_code parse_based(mpz_t out, const char *s, size_t len, int base, int lead_us,
                           const num_ctx *ctx, int digit_limit)
{
    digbuf b;
    digbuf_init(&b);
    cr_code rc = CR_EPY_VALUE;
    if (digbuf_ensure(&b, len)) { rc = CR_ENOMEM; goto out; }
    size_t i = 0;
    long nd = scan_digits(s, len, &i, base, &b, lead_us);
    if (nd <= 0 || i != len) goto out;
    size_t lead = 0;
    while (lead + 1 < b.n && b.p[lead] == '0') lead++;
    size_t sig = b.n - lead;
    if ((double)sig * log2((double)base) > (double)ctx->max_bits + 8) { rc = CR_ELIMIT; goto out; }
    /* CPython refuses decimal-ish bases (not powers of two) past 4300 digits. */
    if (digit_limit && (base & (base - 1)) && sig > PY_INT_MAX_STR_DIGITS) goto out;
    memmove(b.p, b.p + lead, sig);
    b.n = sig;
    set_from_digits(out, &b, base);
    rc = CR_OK;
out:
    digbuf_free(&b);
    return rc;
}

static int prefix_base(const char *s, size_t len)
{
    if (len < 2 || s[0] != '0') return 0;
    switch (s[1]) {
    case 'x': case 'X': return 16;
    case 'o': case 'O': return 8;
    case 'b': case 'B': return 2;
    default: return 0;
    }
}

cr_code num_parse_literal(mpq_t out, const char *text, size_t len, int *is_float,
                          const num_ctx *ctx)
{
    *is_float = 0;
    if (len && (text[len - 1] == 'j' || text[len - 1] == 'J')) return CR_EPY_VALUE;
    int base = prefix_base(text, len);
    if (base) {
        cr_code rc = parse_based(mpq_numref(out), text + 2, len - 2, base, 1, ctx, 0);
        if (rc == CR_OK) mpz_set_ui(mpq_denref(out), 1);
        return rc;
    }
    /* Fast path: a plain integer or decimal ("0.05") of at most 18 digits, which fits a word
     * over a power of ten, reduced by a word gcd (within any max_bits of 64 or more). */
    if (len && len <= 19) {
        unsigned long long v = 0, den = 1;
        size_t k = 0;
        int dot = 0, nd = 0;
        for (; k < len; k++) {
            if (text[k] >= '0' && text[k] <= '9') {
                v = v * 10 + (unsigned)(text[k] - '0');
                nd++;
                den *= dot ? 10 : 1;
            } else if (text[k] == '.' && !dot) {
                dot = 1;
            } else {
                break;
            }
        }
        if (k == len && nd && nd <= 18 && (!dot || ctx->max_bits >= 64)) {
            unsigned long long a = v, g = den;
            while (a) {
                unsigned long long t = g % a;
                g = a;
                a = t;
            }
            *is_float = dot;
            mpq_set_ui(out, (unsigned long)(v / g), (unsigned long)(den / g));
            return CR_OK;
        }
    }
    return parse_decimal(out, text, len, is_float, ctx);
}

/* Python's str.strip() for the ASCII whitespace float() and int() skip. */
static void strip_space(const char **s, size_t *len)
{
    while (*len && isspace((unsigned char)**s)) { (*s)++; (*len)--; }
    while (*len && isspace((unsigned char)(*s)[*len - 1])) (*len)--;
}

cr_code num_parse_float_str(mpq_t out, const char *s, size_t len, const num_ctx *ctx)
{
    strip_space(&s, &len);
    int neg = 0;
    if (len && (s[0] == '+' || s[0] == '-')) { neg = s[0] == '-'; s++; len--; }
    int isf;
    cr_code rc = parse_decimal(out, s, len, &isf, ctx);
    if (rc == CR_OK && neg) mpq_neg(out, out);
    return rc;
}

cr_code num_parse_int_str(mpz_t out, const char *s, size_t len, int base, const num_ctx *ctx)
{
    if (base != 0 && (base < 2 || base > 36)) return CR_EPY_VALUE;
    strip_space(&s, &len);
    int neg = 0;
    if (len && (s[0] == '+' || s[0] == '-')) { neg = s[0] == '-'; s++; len--; }
    int lead_us = 0;
    int pb = prefix_base(s, len);
    if (pb && (base == 0 || base == pb)) {
        base = pb;
        s += 2;
        len -= 2;
        lead_us = 1;
    } else if (base == 0) {
        /* int('010', 0) is an error like the literal; '0', '00', '0_0' are fine. */
        base = 10;
        if (len > 1 && s[0] == '0') {
            for (size_t k = 0; k < len; k++)
                if (s[k] != '0' && s[k] != '_') return CR_EPY_VALUE;
        }
    }
    cr_code rc = parse_based(out, s, len, base, lead_us, ctx, 1);
    if (rc == CR_OK && neg) mpz_neg(out, out);
    return rc;
}

/* ---- arithmetic with Python's rules ------------------------------------------------------ */

static int is_int(const mpq_t x) { return mpz_cmp_ui(mpq_denref(x), 1) == 0; }

/* floor(a/b) or a - b*floor(a/b), with b != 0. */
static cr_code floor_divmod(mpq_t out, const mpq_t a, const mpq_t b, int want_mod)
{
    if (!mpq_sgn(b)) return CR_EPY_ZERODIV;
    if (is_int(a) && is_int(b)) {
        if (want_mod) mpz_fdiv_r(mpq_numref(out), mpq_numref(a), mpq_numref(b));
        else mpz_fdiv_q(mpq_numref(out), mpq_numref(a), mpq_numref(b));
        mpz_set_ui(mpq_denref(out), 1);
        return CR_OK;
    }
    /* a/b = (an*bd) / (ad*bn), and ad*bn has b's sign, so floor division of these integers
     * is Python's: the remainder over ad*bd is a % b with the sign of b. */
    mpz_t n, d;
    mpz_init(n);
    mpz_init(d);
    mpz_mul(n, mpq_numref(a), mpq_denref(b));
    mpz_mul(d, mpq_denref(a), mpq_numref(b));
    if (want_mod) {
        mpz_fdiv_r(n, n, d);
        mpz_mul(d, mpq_denref(a), mpq_denref(b));
        mpz_swap(mpq_numref(out), n);
        mpz_swap(mpq_denref(out), d);
        mpq_canonicalize(out);
    } else {
        mpz_fdiv_q(mpq_numref(out), n, d);
        mpz_set_ui(mpq_denref(out), 1);
    }
    mpz_clear(n);
    mpz_clear(d);
    return CR_OK;
}

cr_code num_floordiv(mpq_t out, const mpq_t a, const mpq_t b)
{
    return floor_divmod(out, a, b, 0);
}

cr_code num_mod(mpq_t out, const mpq_t a, const mpq_t b)
{
    return floor_divmod(out, a, b, 1);
}

void num_decided(mpq_t out, const mpq_t x, const num_ctx *ctx)
{
    num_round_prec(out, x, ctx->prec);
}

cr_code num_floordiv_decided(mpq_t out, const mpq_t a, const mpq_t b, int want_mod,
                             const num_ctx *ctx)
{
    if (!mpq_sgn(b)) return CR_EPY_ZERODIV;
    mpq_t q;
    mpz_t n;
    mpq_init(q);
    mpz_init(n);
    mpq_div(q, a, b);
    num_decided(q, q, ctx);
    mpz_fdiv_q(n, mpq_numref(q), mpq_denref(q));
    if (!want_mod) {
        mpq_set_z(out, n);
    } else if (is_int(q)) {
        mpq_set_ui(out, 0, 1);
    } else {
        /* Rounding is monotonic and n has fewer than prec digits here (else q would be
         * integral), so the true quotient lies strictly between n and n + 1: the remainder
         * has b's sign, as Python's. */
        mpq_set_z(q, n);
        mpq_mul(q, q, b);
        mpq_sub(out, a, q);
    }
    mpz_clear(n);
    mpq_clear(q);
    return CR_OK;
}

/* out = a ** e exactly, e an integer that fits a long, a != 0 or e >= 0. */
static void pow_exact(mpq_t out, const mpq_t a, long e)
{
    unsigned long ue = e < 0 ? (unsigned long)-(e + 1) + 1 : (unsigned long)e;
    mpz_pow_ui(mpq_numref(out), mpq_numref(a), ue);
    mpz_pow_ui(mpq_denref(out), mpq_denref(a), ue);
    if (e < 0) {
        mpz_swap(mpq_numref(out), mpq_denref(out));
        if (mpz_sgn(mpq_denref(out)) < 0) {
            mpz_neg(mpq_numref(out), mpq_numref(out));
            mpz_neg(mpq_denref(out), mpq_denref(out));
        }
    }
}

cr_code num_pow(mpq_t out, int *exact, const mpq_t a, const mpq_t b, int float_result,
                const num_ctx *ctx)
{
    int asgn = mpq_sgn(a), bsgn = mpq_sgn(b);
    if (bsgn == 0) {
        mpq_set_ui(out, 1, 1);
        return CR_OK;
    }
    if (asgn == 0) {
        if (bsgn < 0) return CR_EPY_ZERODIV;
        mpq_set_ui(out, 0, 1);
        return CR_OK;
    }
    if (!is_int(b)) {
        if (asgn < 0) return CR_EPY_VALUE;
        if (mpq_cmp_ui(a, 1, 1) == 0) {
            mpq_set_ui(out, 1, 1);
            return CR_OK;
        }
        /* x ** 0.5 is sqrt, which knows when it is exact (4 ** 0.5 == 2.0). */
        if (mpz_cmp_ui(mpq_numref(b), 1) == 0 && mpz_cmp_ui(mpq_denref(b), 2) == 0)
            return num_sqrt(out, exact, a, ctx);
        *exact = 0;
        return num_mpfr_pow(out, a, b, ctx);
    }

    /* Integer exponent. |a| == 1 needs no size at all. */
    mpz_srcptr en = mpq_numref(b);
    if (is_int(a) && mpz_cmpabs_ui(mpq_numref(a), 1) == 0) {
        int neg = asgn < 0 && mpz_odd_p(en);
        mpq_set_si(out, neg ? -1 : 1, 1);
        return CR_OK;
    }
    /* Predict the result's size before computing it: log2|result| and the bits of its
     * numerator and denominator, from a double view of the exponent (exact enough here). */
    double e = mpz_get_d(en);
    double lnum = log2_abs_z(mpq_numref(a));
    double lden = log2_abs_z(mpq_denref(a));
    double ae = fabs(e);
    double bits = (lnum + lden) * ae;
    double mag = (lnum - lden) * e;
    if (!float_result) {
        if ((lnum > lden ? lnum : lden) * ae > (double)ctx->max_bits + 1) return CR_ELIMIT;
    } else if (mag > 1025) {
        return CR_EPY_OVERFLOW;
    }
    if (float_result && bits > (double)ctx->float_bits) {
        *exact = 0;
        return num_mpfr_pow(out, a, b, ctx);
    }
    long le = mpz_get_si(en);
    pow_exact(out, a, le);
    if (!float_result) {
        if (num_bits(mpq_numref(out)) > ctx->max_bits || num_bits(mpq_denref(out)) > ctx->max_bits)
            return CR_ELIMIT;
    } else if (num_past_double(out)) {
        return CR_EPY_OVERFLOW;
    }
    return CR_OK;
}

void num_bound_float_slow(mpq_t v, int *exact, const num_ctx *ctx)
{
    if (num_bits(mpq_numref(v)) + num_bits(mpq_denref(v)) <= ctx->float_bits) return;
    num_round_prec(v, v, num_work(ctx));
    *exact = 0;
}

void num_round(mpq_t out, const mpq_t x, long ndigits, const num_ctx *ctx)
{
    if (!mpq_sgn(x)) {
        mpq_set_ui(out, 0, 1);
        return;
    }
    if (ndigits >= 0 && is_int(x)) {
        mpq_set(out, x);
        return;
    }
    /* More places than any integer of max_bits could hold change nothing we can show. */
    if (ndigits > 0 && (double)ndigits * BITS_PER_DIGIT > (double)ctx->max_bits) {
        mpq_set(out, x);
        return;
    }
    if (ndigits < 0) {
        /* Past the leading digit's place by two, the result is 0. */
        long e = num_dec_exp(x);
        if (-ndigits > e + 2) {
            mpq_set_ui(out, 0, 1);
            return;
        }
    }
    mpz_t d;
    mpz_init(d);
    num_round_scaled(d, x, ndigits, num_ctx_mode(ctx));
    num_q_from_dec(out, d, -ndigits);
    mpz_clear(d);
}

void num_trunc(mpz_t out, const mpq_t x) { mpz_tdiv_q(out, mpq_numref(x), mpq_denref(x)); }
void num_floor(mpz_t out, const mpq_t x) { mpz_fdiv_q(out, mpq_numref(x), mpq_denref(x)); }
void num_ceil(mpz_t out, const mpq_t x) { mpz_cdiv_q(out, mpq_numref(x), mpq_denref(x)); }

/* ---- rendering --------------------------------------------------------------------------- */

/* The decimal digits of n in buf (at least 21 bytes), NUL-terminated; returns their count.
 * snprintf's "%lu" and mpz_get_str cost several times as much, once per final value. */
static int put_ulong(char *buf, unsigned long n)
{
    char t[24];
    int k = 0;
    do t[k++] = (char)('0' + n % 10); while ((n /= 10) != 0);
    for (int i = 0; i < k; i++) buf[i] = t[k - 1 - i];
    buf[k] = '\0';
    return k;
}

/* Writes z in base 10 into out. */
static cr_code put_mpz(cr_buf *out, const mpz_t z)
{
    char small[64];
    if (mpz_size(z) <= 1) {   /* a word: most final values' numerator and denominator */
        small[0] = '-';
        int k = mpz_sgn(z) < 0;
        k += put_ulong(small + k, mpz_getlimbn(z, 0));
        return cr_buf_put(out, small, (size_t)k);
    }
    if (mpz_sizeinbase(z, 10) + 2 <= sizeof small) {
        mpz_get_str(small, 10, z);
        return cr_buf_puts(out, small);
    }
    char *s = mpz_get_str(NULL, 10, z);
    if (!s) return CR_ENOMEM;
    cr_code rc = cr_buf_puts(out, s);
    void (*freefn)(void *, size_t);
    mp_get_memory_functions(NULL, NULL, &freefn);
    freefn(s, strlen(s) + 1);
    return rc;
}

cr_code num_repr_int(cr_buf *out, const mpz_t v)
{
    /* CPython 3.11 raises ValueError rather than print an int of more than 4300 digits. */
    if (mpz_sizeinbase(v, 10) > PY_INT_MAX_STR_DIGITS + 1) return CR_EPY_VALUE;
    if (mpz_sizeinbase(v, 10) > PY_INT_MAX_STR_DIGITS) {
        mpz_t p;
        mpz_init(p);
        num_pow10(p, PY_INT_MAX_STR_DIGITS);
        int over = mpz_cmpabs(v, p) >= 0;
        mpz_clear(p);
        if (over) return CR_EPY_VALUE;
    }
    return put_mpz(out, v);
}

cr_code num_fraction_text(cr_buf *out, const mpq_t v)
{
    cr_code rc = put_mpz(out, mpq_numref(v));
    if (rc != CR_OK || is_int(v)) return rc;
    if ((rc = cr_buf_putc(out, '/')) != CR_OK) return rc;
    return put_mpz(out, mpq_denref(v));
}

/* Writes `n` copies of c. */
static cr_code put_rep(cr_buf *out, char c, size_t n)
{
    char chunk[64];
    memset(chunk, c, sizeof chunk);
    cr_code rc = CR_OK;
    while (n && rc == CR_OK) {
        size_t k = n < sizeof chunk ? n : sizeof chunk;
        rc = cr_buf_put(out, chunk, k);
        n -= k;
    }
    return rc;
}

/* Decimal digits of |x| rounded to prec significant digits, trailing zeros removed, in
 * *digs (malloc'd when it does not fit `small`); returns E. x != 0. */
/* The common case without GMP arithmetic: |x| = n / (2^a 5^b) with n * 10^k / den in a
 * word (k = max(a, b)), i.e. a short terminating decimal. Returns 0 when it does not apply. */
static int short_decimal(const mpq_t x, int prec, char *buf, size_t bufsz, size_t *nd, long *e)
{
    if (mpz_size(mpq_numref(x)) != 1 || mpz_size(mpq_denref(x)) != 1 || prec < 20 || bufsz < 24)
        return 0;
    unsigned long num = mpz_getlimbn(mpq_numref(x), 0), den = mpz_getlimbn(mpq_denref(x), 0);
    if (num >= (1UL << 62)) return 0;
    int a = __builtin_ctzl(den), b = 0;
    unsigned long r = den >> a;
    while (r % 5 == 0 && b <= 19) { r /= 5; b++; }
    int k = a > b ? a : b;
    if (r != 1 || k > 19) return 0;
    unsigned long mult = (unsigned long)POW10_U64[k] / den;
    unsigned long n;
    if (__builtin_mul_overflow(num, mult, &n)) return 0;
    int len = put_ulong(buf, n);
    long ex = len - 1 - k;
    while (len > 1 && buf[len - 1] == '0') len--;
    buf[len] = '\0';
    *nd = (size_t)len;
    *e = ex;
    return 1;
}

static long shortest_digits(const mpq_t x, int prec, char *small, size_t smallsz, char **digs,
                            size_t *nd)
{
    long e;
    if (short_decimal(x, prec, small, smallsz, nd, &e)) {
        *digs = small;
        return e;
    }
    mpz_t d;
    mpz_init(d);
    e = num_round_sig(d, x, prec, NUM_HALF_EVEN);
    mpz_abs(d, d);
    size_t need = mpz_sizeinbase(d, 10) + 2;
    char *p = need <= smallsz ? small : malloc(need);
    if (p) {
        mpz_get_str(p, 10, d);
        size_t n = strlen(p);
        while (n > 1 && p[n - 1] == '0') n--;
        p[n] = '\0';
        *nd = n;
    }
    *digs = p;
    mpz_clear(d);
    return e;
}

cr_code num_repr_double(cr_buf *out, double d, const num_ctx *ctx)
{
    if (d == 0) return cr_buf_put(out, signbit(d) ? "-0.0" : "0.0", signbit(d) ? 4 : 3);
    mpq_t x;
    mpq_init(x);
    shortest_of_double(x, d);
    cr_code rc = num_repr_float(out, x, ctx);
    mpq_clear(x);
    return rc;
}

cr_code num_repr_float(cr_buf *out, const mpq_t v, const num_ctx *ctx)
{
    int sgn = mpq_sgn(v);
    if (sgn == 0) return cr_buf_put(out, "0.0", 3);
    /* Fast path: an integral value below 1e16 prints as "N.0". */
    if (is_int(v) && mpz_cmpabs_ui(mpq_numref(v), 1000000000000000UL) < 0 &&
        mpz_size(mpq_numref(v)) <= 1) {
        char t[32];
        t[0] = '-';
        int k = sgn < 0;
        k += put_ulong(t + k, mpz_getlimbn(mpq_numref(v), 0));
        memcpy(t + k, ".0", 2);
        return cr_buf_put(out, t, (size_t)k + 2);
    }
    char small[80], *digs;
    size_t nd = 0;
    long e = shortest_digits(v, ctx->prec, small, sizeof small, &digs, &nd);
    if (!digs) return CR_ENOMEM;
    cr_code rc = CR_OK;
    if (sgn < 0) rc = cr_buf_putc(out, '-');
    if (e < -4 || e >= 16) {
        /* CPython's repr: d[.ddd]e+XX, at least two exponent digits. */
        if (rc == CR_OK) rc = cr_buf_putc(out, digs[0]);
        if (rc == CR_OK && nd > 1) {
            rc = cr_buf_putc(out, '.');
            if (rc == CR_OK) rc = cr_buf_put(out, digs + 1, nd - 1);
        }
        if (rc == CR_OK) rc = cr_buf_printf(out, "e%c%02ld", e < 0 ? '-' : '+', e < 0 ? -e : e);
    } else if (e >= 0) {
        size_t ip = (size_t)e + 1;
        if (nd <= ip) {
            if (rc == CR_OK) rc = cr_buf_put(out, digs, nd);
            if (rc == CR_OK) rc = put_rep(out, '0', ip - nd);
            if (rc == CR_OK) rc = cr_buf_put(out, ".0", 2);
        } else {
            if (rc == CR_OK) rc = cr_buf_put(out, digs, ip);
            if (rc == CR_OK) rc = cr_buf_putc(out, '.');
            if (rc == CR_OK) rc = cr_buf_put(out, digs + ip, nd - ip);
        }
    } else {
        if (rc == CR_OK) rc = cr_buf_put(out, "0.", 2);
        if (rc == CR_OK) rc = put_rep(out, '0', (size_t)(-e - 1));
        if (rc == CR_OK) rc = cr_buf_put(out, digs, nd);
    }
    if (digs != small) free(digs);
    return rc;
}
