/* evaluator/num/num_math.c: the math module on exact inputs. Each function runs in MPFR at a
 * working precision of work*log2(10) + 64 bits with a proven error bound, and the result is
 * rounded to num_work() significant decimal digits (the guard digits included) with GMP only
 * when the whole error interval rounds to the same decimal (Ziv's strategy); otherwise the
 * precision doubles. */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>

#include "evaluator/num/num_int.h"

/* Results below the smallest subnormal double are 0.0 in CPython too; keeping them would
 * also make denominators of millions of bits. */
#define UNDERFLOW_EXP (-1080)
#define ZIV_ROUNDS 8

/* One evaluation at working precision wp into y. Returns k: |y - f| <= 2^k ulp(y). */
typedef long (ziv_fn)(mpfr_t y, const void *arg, mpfr_prec_t wp);

typedef struct {
    const mpq_t *x, *y, *z;
    int which;
} fn_args;

static int is_int(const mpq_t x) { return mpz_cmp_ui(mpq_denref(x), 1) == 0; }

static long lmax(long a, long b) { return a > b ? a : b; }

static long bitlen(unsigned long v)
{
    long n = 0;
    while (v) { n++; v >>= 1; }
    return n;
}

/* out = y exactly (y finite). */
static void q_from_mpfr(mpq_t out, const mpfr_t y)
{
    mpfr_exp_t e = mpfr_get_z_2exp(mpq_numref(out), y);
    mpz_set_ui(mpq_denref(out), 1);
    if (e > 0) mpq_mul_2exp(out, out, (mp_bitcnt_t)e);
    else if (e < 0) mpq_div_2exp(out, out, (mp_bitcnt_t)-e);
}

static int past_double(const mpfr_t y)
{
    if (!mpfr_regular_p(y) || mpfr_get_exp(y) < 1024) return 0;
    return mpfr_sgn(y) > 0 ? mpfr_cmp_d(y, DBL_MAX) > 0 : mpfr_cmp_d(y, -DBL_MAX) < 0;
}

static mpfr_prec_t base_prec(const num_ctx *ctx)
{
    return (mpfr_prec_t)((double)num_work(ctx) * 3.3219280948873623) + 64;
}

/* Runs fn until its error interval rounds to one decimal of num_work(ctx) digits. */
static cr_code ziv(mpq_t out, ziv_fn fn, const void *arg, const num_ctx *ctx)
{
    mpfr_prec_t wp = base_prec(ctx);
    const int digits = num_work(ctx);
    mpfr_t y;
    mpq_t v, lo, hi, err;
    mpz_t dlo, dhi;
    mpfr_init2(y, wp);
    mpq_init(v);
    mpq_init(lo);
    mpq_init(hi);
    mpq_init(err);
    mpz_init(dlo);
    mpz_init(dhi);
    cr_code rc = CR_OK;
    for (int round = 0;; round++) {
        mpfr_set_prec(y, wp);
        long k = fn(y, arg, wp);
        if (mpfr_nan_p(y)) { rc = CR_EPY_VALUE; break; }
        if (mpfr_inf_p(y) || past_double(y)) { rc = CR_EPY_OVERFLOW; break; }
        /* Exact zeros are settled before ziv(), so a zero here is cancellation at this
         * precision (log(1 + 1e-60) at 177 bits): look closer. */
        if (mpfr_zero_p(y) && round < ZIV_ROUNDS) {
            wp *= 2;
            continue;
        }
        if (mpfr_zero_p(y) || mpfr_get_exp(y) < UNDERFLOW_EXP) {
            mpq_set_ui(out, 0, 1);
            break;
        }
        q_from_mpfr(v, y);
        mpq_set_ui(err, 1, 1);
        long ee = (long)mpfr_get_exp(y) - (long)wp + k;
        if (ee >= 0) mpq_mul_2exp(err, err, (mp_bitcnt_t)ee);
        else mpq_div_2exp(err, err, (mp_bitcnt_t)-ee);
        mpq_sub(lo, v, err);
        mpq_add(hi, v, err);
        if (mpq_sgn(lo) == mpq_sgn(hi) && mpq_sgn(lo) != 0) {
            long elo = num_round_sig(dlo, lo, digits, NUM_HALF_EVEN);
            long ehi = num_round_sig(dhi, hi, digits, NUM_HALF_EVEN);
            if (elo == ehi && mpz_cmp(dlo, dhi) == 0) {
                num_q_from_dec(out, dlo, elo - digits + 1);
                break;
            }
        }
        if (round >= ZIV_ROUNDS) {
            /* Only an exact decimal tie gets here (x ** (p/q) can be rational). */
            num_round_prec(out, v, digits);
            break;
        }
        wp *= 2;
    }
    mpz_clear(dhi);
    mpz_clear(dlo);
    mpq_clear(err);
    mpq_clear(hi);
    mpq_clear(lo);
    mpq_clear(v);
    mpfr_clear(y);
    return rc;
}

/* ---- the functions, with their error bounds ------------------------------------------------
 * The input x is rounded to wp bits (relative error <= 2^-wp), and MPFR rounds the result to
 * half an ulp. Propagated through f, the input error in ulps of y is about
 * |x f'(x) / f(x)| * 2, bounded below with exponents (|v| < 2^EXP(v)). */

enum { F_SQRT, F_EXP, F_LOG, F_LOG10, F_LOG2, F_ERF, F_ERFC, F_SIN, F_COS, F_TAN, F_ATAN,
       F_LOGB, F_POW, F_PI, F_E, F_NCDF, F_NPDF, F_NPPF, F_ATAN2,
       F_FN1 };   /* F_FN1 + num_fn: num_fn1()'s functions */

/* num_fn1()'s function `which` at x into y, and its condition number |x f'(x) / f(x)| as the
 * bound k (|y - f| <= 2^k ulp(y)): the input's rounding (relative 2^-wp) moves the result by
 * cond ulps at most, MPFR's own by half of one. The derivative is evaluated at wp too, and
 * doubled for margin; near a pole or a zero of f the bound grows and ziv() looks closer. */
static long fn1_cond(mpfr_t y, const mpfr_t x, int which, mpfr_prec_t wp)
{
    mpfr_t d, t;
    mpfr_init2(d, wp);
    mpfr_init2(t, wp);
    long k = -1;
    int s;
    switch (which) {
    case NUM_ASIN: case NUM_ACOS:
        if (which == NUM_ASIN) mpfr_asin(y, x, MPFR_RNDN);
        else mpfr_acos(y, x, MPFR_RNDN);
        mpfr_sqr(t, x, MPFR_RNDN);
        mpfr_ui_sub(t, 1, t, MPFR_RNDN);
        mpfr_sqrt(t, t, MPFR_RNDN);
        mpfr_ui_div(d, 1, t, MPFR_RNDN);
        break;
    case NUM_SINH: mpfr_sinh(y, x, MPFR_RNDN); mpfr_cosh(d, x, MPFR_RNDN); break;
    case NUM_COSH: mpfr_cosh(y, x, MPFR_RNDN); mpfr_sinh(d, x, MPFR_RNDN); break;
    case NUM_TANH:
        mpfr_tanh(y, x, MPFR_RNDN);
        mpfr_cosh(t, x, MPFR_RNDN);
        mpfr_sqr(t, t, MPFR_RNDN);
        mpfr_ui_div(d, 1, t, MPFR_RNDN);
        break;
    case NUM_ASINH: case NUM_ACOSH:
        if (which == NUM_ASINH) mpfr_asinh(y, x, MPFR_RNDN);
        else mpfr_acosh(y, x, MPFR_RNDN);
        mpfr_sqr(t, x, MPFR_RNDN);
        if (which == NUM_ASINH) mpfr_add_ui(t, t, 1, MPFR_RNDN);
        else mpfr_sub_ui(t, t, 1, MPFR_RNDN);
        mpfr_sqrt(t, t, MPFR_RNDN);
        mpfr_ui_div(d, 1, t, MPFR_RNDN);
        break;
    case NUM_ATANH:
        mpfr_atanh(y, x, MPFR_RNDN);
        mpfr_sqr(t, x, MPFR_RNDN);
        mpfr_ui_sub(t, 1, t, MPFR_RNDN);
        mpfr_ui_div(d, 1, t, MPFR_RNDN);
        break;
    case NUM_LOG1P:
        mpfr_log1p(y, x, MPFR_RNDN);
        mpfr_add_ui(t, x, 1, MPFR_RNDN);
        mpfr_ui_div(d, 1, t, MPFR_RNDN);
        break;
    case NUM_EXPM1: mpfr_expm1(y, x, MPFR_RNDN); mpfr_exp(d, x, MPFR_RNDN); break;
    case NUM_CBRT: mpfr_cbrt(y, x, MPFR_RNDN); k = 2; break;   /* cond 1/3 */
    case NUM_EXP2:
        mpfr_exp2(y, x, MPFR_RNDN);
        mpfr_const_log2(t, MPFR_RNDN);
        mpfr_mul(d, y, t, MPFR_RNDN);
        break;
    case NUM_GAMMA:
        mpfr_gamma(y, x, MPFR_RNDN);
        mpfr_digamma(t, x, MPFR_RNDN);
        mpfr_mul(d, y, t, MPFR_RNDN);
        break;
    case NUM_LGAMMA: mpfr_lgamma(y, &s, x, MPFR_RNDN); mpfr_digamma(d, x, MPFR_RNDN); break;
    case NUM_DEGREES: case NUM_RADIANS:
        /* three roundings (pi, the product, the quotient), cond 1 */
        mpfr_const_pi(t, MPFR_RNDN);
        if (which == NUM_DEGREES) {
            mpfr_mul_ui(y, x, 180, MPFR_RNDN);
            mpfr_div(y, y, t, MPFR_RNDN);
        } else {
            mpfr_mul(y, x, t, MPFR_RNDN);
            mpfr_div_ui(y, y, 180, MPFR_RNDN);
        }
        k = 3;
        break;
    }
    if (k < 0) {
        double c = 0;
        if (mpfr_regular_p(y)) {
            mpfr_mul(t, x, d, MPFR_RNDN);
            mpfr_div(t, t, y, MPFR_RNDN);
            c = fabs(mpfr_get_d(t, MPFR_RNDU));
        }
        /* a pole or a result that is 0 at this precision: no bound, look closer */
        k = !mpfr_regular_p(y) || !isfinite(c) || c > 0x1p60 ? (long)wp + 16
                                                             : bitlen((unsigned long)(2 * c + 1)) + 2;
    }
    mpfr_clear(t);
    mpfr_clear(d);
    return k;
}

static long norm_ppf(mpfr_t y, const fn_args *a, mpfr_prec_t wp);

static long eval_fn(mpfr_t y, const void *argp, mpfr_prec_t wp)
{
    const fn_args *a = argp;
    mpfr_t x;
    mpfr_init2(x, wp);
    long k = 2, ex = 0, ey;
    if (a->x) {
        mpfr_set_q(x, *a->x, MPFR_RNDN);
        ex = mpfr_zero_p(x) ? LONG_MIN / 4 : (long)mpfr_get_exp(x);
    }
    switch (a->which) {
    case F_SQRT: mpfr_sqrt(y, x, MPFR_RNDN); k = 2; break;
    case F_EXP: mpfr_exp(y, x, MPFR_RNDN); k = lmax(ex, 0) + 2; break;
    case F_LOG: case F_LOG10: case F_LOG2:
        if (a->which == F_LOG) mpfr_log(y, x, MPFR_RNDN);
        else if (a->which == F_LOG10) mpfr_log10(y, x, MPFR_RNDN);
        else mpfr_log2(y, x, MPFR_RNDN);
        k = mpfr_zero_p(y) ? 0 : lmax(-(long)mpfr_get_exp(y), 0) + 2;
        break;
    case F_ERF: mpfr_erf(y, x, MPFR_RNDN); k = 3; break;
    case F_ERFC: mpfr_erfc(y, x, MPFR_RNDN); k = lmax(2 * ex, 0) + 3; break;
    case F_SIN: case F_COS:
        if (a->which == F_SIN) mpfr_sin(y, x, MPFR_RNDN);
        else mpfr_cos(y, x, MPFR_RNDN);
        ey = mpfr_zero_p(y) ? 0 : (long)mpfr_get_exp(y);
        k = lmax(ex - ey, 0) + 2;
        break;
    case F_TAN:
        mpfr_tan(y, x, MPFR_RNDN);
        ey = mpfr_zero_p(y) ? 0 : (long)mpfr_get_exp(y);
        k = lmax(ex - ey, 0) + lmax(2 * ey, 0) + 3;
        break;
    case F_ATAN: mpfr_atan(y, x, MPFR_RNDN); k = 3; break;
    case F_LOGB: {
        mpfr_t b, lb;
        mpfr_init2(b, wp);
        mpfr_init2(lb, wp);
        mpfr_set_q(b, *a->y, MPFR_RNDN);
        mpfr_log(lb, b, MPFR_RNDN);
        mpfr_log(y, x, MPFR_RNDN);
        long elx = (long)mpfr_get_exp(y), elb = (long)mpfr_get_exp(lb);
        mpfr_div(y, y, lb, MPFR_RNDN);
        k = lmax(1 - elx, 0) + lmax(1 - elb, 0) + 4;
        mpfr_clear(lb);
        mpfr_clear(b);
        break;
    }
    case F_POW:
        if (is_int(*a->y)) {
            mpfr_pow_z(y, x, mpq_numref(*a->y), MPFR_RNDN);
            k = (long)mpz_sizeinbase(mpq_numref(*a->y), 2) + 2;
        } else {
            mpfr_t b;
            mpfr_init2(b, wp);
            mpfr_set_q(b, *a->y, MPFR_RNDN);
            mpfr_pow(y, x, b, MPFR_RNDN);
            ey = mpfr_regular_p(y) ? (long)mpfr_get_exp(y) : 0;
            k = lmax((long)mpfr_get_exp(b), 0) + bitlen((unsigned long)labs(ey)) + 3;
            mpfr_clear(b);
        }
        break;
    case F_PI: mpfr_const_pi(y, MPFR_RNDN); k = 1; break;
    case F_NCDF: {
        /* Phi(x) = erfc(-x/sqrt(2))/2: the erfc keeps the lower tail's relative accuracy,
         * where 0.5*(1 + erf) would cancel. The two roundings of t add 2 ulps of input
         * error, amplified by erfc's condition number (below 2t^2 + 1). */
        mpfr_t t;
        mpfr_init2(t, wp);
        mpfr_sqrt_ui(t, 2, MPFR_RNDN);
        mpfr_div(t, x, t, MPFR_RNDN);
        mpfr_neg(t, t, MPFR_RNDN);
        long et = mpfr_zero_p(t) ? 0 : (long)mpfr_get_exp(t);
        mpfr_erfc(y, t, MPFR_RNDN);
        mpfr_div_2ui(y, y, 1, MPFR_RNDN);
        k = lmax(2 * et, 0) + 5;
        mpfr_clear(t);
        break;
    }
    case F_NPDF: {
        /* exp(-x^2/2) / (sqrt(2 pi) * sigma), sigma = *y: exp's condition number is x^2/2 */
        mpfr_t t, s;
        mpfr_init2(t, wp);
        mpfr_init2(s, wp);
        mpfr_sqr(t, x, MPFR_RNDN);
        mpfr_div_2ui(t, t, 1, MPFR_RNDN);
        mpfr_neg(t, t, MPFR_RNDN);
        long et = mpfr_zero_p(t) ? 0 : (long)mpfr_get_exp(t);
        mpfr_exp(y, t, MPFR_RNDN);
        mpfr_const_pi(s, MPFR_RNDN);
        mpfr_mul_2ui(s, s, 1, MPFR_RNDN);
        mpfr_sqrt(s, s, MPFR_RNDN);
        mpfr_set_q(t, *a->y, MPFR_RNDN);
        mpfr_mul(s, s, t, MPFR_RNDN);
        mpfr_div(y, y, s, MPFR_RNDN);
        k = lmax(et, 0) + 4;
        mpfr_clear(s);
        mpfr_clear(t);
        break;
    }
    case F_NPPF: k = norm_ppf(y, a, wp); break;
    case F_E: mpfr_set_ui(x, 1, MPFR_RNDN); mpfr_exp(y, x, MPFR_RNDN); k = 1; break;
    case F_ATAN2: {
        /* |d atan2| <= (|x dy| + |y dx|) / (x^2 + y^2) <= 2^-wp for relative input errors
         * 2^-wp: an absolute error, 2^-EXP(result) ulps */
        mpfr_t b;
        mpfr_init2(b, wp);
        mpfr_set_q(b, *a->y, MPFR_RNDN);
        mpfr_atan2(y, x, b, MPFR_RNDN);
        ey = mpfr_regular_p(y) ? (long)mpfr_get_exp(y) : 0;
        k = lmax(-ey, 0) + 3;
        mpfr_clear(b);
        break;
    }
    default: k = fn1_cond(y, x, a->which - F_FN1, wp); break;
    }
    mpfr_clear(x);
    return k;
}

/* out may alias x or y: ziv() writes out only after its last evaluation. */
static cr_code run_fn(mpq_t out, int *exact, int which, const mpq_t x, const mpq_t y,
                      const num_ctx *ctx)
{
    fn_args a = { x ? (const mpq_t *)x : NULL, y ? (const mpq_t *)y : NULL, NULL, which };
    cr_code rc = ziv(out, eval_fn, &a, ctx);
    if (rc == CR_OK && exact) *exact = 0;
    return rc;
}

/* f(0) is exact (0 or 1) for every function below. */
static cr_code fn_of(mpq_t out, int *exact, int which, unsigned long f0, const mpq_t x,
                     const num_ctx *ctx)
{
    if (!mpq_sgn(x)) {
        mpq_set_ui(out, f0, 1);
        return CR_OK;
    }
    return run_fn(out, exact, which, x, NULL, ctx);
}

cr_code num_mpfr_pow(mpq_t out, const mpq_t a, const mpq_t b, const num_ctx *ctx)
{
    return run_fn(out, NULL, F_POW, a, b, ctx);
}

cr_code num_sqrt(mpq_t out, int *exact, const mpq_t x, const num_ctx *ctx)
{
    int s = mpq_sgn(x);
    if (s < 0) return CR_EPY_VALUE;
    if (s == 0) {
        mpq_set_ui(out, 0, 1);
        return CR_OK;
    }
    /* A canonical p/q is a square exactly when p and q are. */
    if (mpz_perfect_square_p(mpq_numref(x)) && mpz_perfect_square_p(mpq_denref(x))) {
        mpz_sqrt(mpq_numref(out), mpq_numref(x));
        mpz_sqrt(mpq_denref(out), mpq_denref(x));
        return CR_OK;
    }
    return run_fn(out, exact, F_SQRT, x, NULL, ctx);
}

cr_code num_exp(mpq_t out, int *exact, const mpq_t x, const num_ctx *ctx)
{
    /* Decide the far ends without computing: exp(710) passes DBL_MAX, and exp(-750) is
     * below the smallest subnormal (both as CPython). */
    if (mpq_cmp_ui(x, 710, 1) > 0) return CR_EPY_OVERFLOW;
    if (mpq_cmp_si(x, -750, 1) < 0) {
        mpq_set_ui(out, 0, 1);
        *exact = 0;
        return CR_OK;
    }
    return fn_of(out, exact, F_EXP, 1, x, ctx);
}

cr_code num_log(mpq_t out, int *exact, const mpq_t x, const num_ctx *ctx)
{
    if (mpq_sgn(x) <= 0) return CR_EPY_VALUE;
    if (mpq_cmp_ui(x, 1, 1) == 0) {
        mpq_set_ui(out, 0, 1);
        return CR_OK;
    }
    return run_fn(out, exact, F_LOG, x, NULL, ctx);
}

/* When x is base^k for an integer k (base 2 or 10), sets *k and returns 1. */
static int exact_power(const mpq_t x, unsigned long base, long *k)
{
    mpz_srcptr z;
    int sign;
    if (is_int(x)) { z = mpq_numref(x); sign = 1; }
    else if (mpz_cmp_ui(mpq_numref(x), 1) == 0) { z = mpq_denref(x); sign = -1; }
    else return 0;
    if (base == 2) {
        if (mpz_popcount(z) != 1) return 0;
        *k = sign * (long)mpz_scan1(z, 0);
        return 1;
    }
    mpz_t t, b;
    mpz_init(t);
    mpz_init_set_ui(b, base);
    mp_bitcnt_t n = mpz_remove(t, z, b);
    int ok = mpz_cmp_ui(t, 1) == 0;
    mpz_clear(b);
    mpz_clear(t);
    if (ok) *k = sign * (long)n;
    return ok;
}

static cr_code log_in_base(mpq_t out, int *exact, const mpq_t x, unsigned long base, int which,
                           const num_ctx *ctx)
{
    if (mpq_sgn(x) <= 0) return CR_EPY_VALUE;
    long k;
    if (exact_power(x, base, &k)) {
        mpq_set_si(out, k, 1);
        return CR_OK;
    }
    return run_fn(out, exact, which, x, NULL, ctx);
}

cr_code num_log10(mpq_t out, int *exact, const mpq_t x, const num_ctx *ctx)
{
    return log_in_base(out, exact, x, 10, F_LOG10, ctx);
}

cr_code num_log2(mpq_t out, int *exact, const mpq_t x, const num_ctx *ctx)
{
    return log_in_base(out, exact, x, 2, F_LOG2, ctx);
}

cr_code num_log_base(mpq_t out, int *exact, const mpq_t x, const mpq_t base, const num_ctx *ctx)
{
    if (mpq_sgn(x) <= 0 || mpq_sgn(base) <= 0) return CR_EPY_VALUE;
    /* CPython divides by log(base) = 0.0: ZeroDivisionError. */
    if (mpq_cmp_ui(base, 1, 1) == 0) return CR_EPY_ZERODIV;
    if (mpq_cmp_ui(x, 1, 1) == 0) {
        mpq_set_ui(out, 0, 1);
        return CR_OK;
    }
    if (is_int(base) && mpz_cmp_ui(mpq_numref(base), 10) == 0) return num_log10(out, exact, x, ctx);
    if (is_int(base) && mpz_cmp_ui(mpq_numref(base), 2) == 0) return num_log2(out, exact, x, ctx);
    return run_fn(out, exact, F_LOGB, x, base, ctx);
}

cr_code num_erf(mpq_t out, int *exact, const mpq_t x, const num_ctx *ctx)
{
    return fn_of(out, exact, F_ERF, 0, x, ctx);
}

cr_code num_erfc(mpq_t out, int *exact, const mpq_t x, const num_ctx *ctx)
{
    /* erfc(28) is below the smallest subnormal already. */
    if (mpq_cmp_ui(x, 30, 1) > 0) {
        mpq_set_ui(out, 0, 1);
        *exact = 0;
        return CR_OK;
    }
    return fn_of(out, exact, F_ERFC, 1, x, ctx);
}

cr_code num_sin(mpq_t out, int *exact, const mpq_t x, const num_ctx *ctx)
{
    return fn_of(out, exact, F_SIN, 0, x, ctx);
}

cr_code num_cos(mpq_t out, int *exact, const mpq_t x, const num_ctx *ctx)
{
    return fn_of(out, exact, F_COS, 1, x, ctx);
}

cr_code num_tan(mpq_t out, int *exact, const mpq_t x, const num_ctx *ctx)
{
    return fn_of(out, exact, F_TAN, 0, x, ctx);
}

cr_code num_atan(mpq_t out, int *exact, const mpq_t x, const num_ctx *ctx)
{
    return fn_of(out, exact, F_ATAN, 0, x, ctx);
}

/* Whether x is a perfect cube (p/q with p and q cubes): then *out is its cube root. */
static int exact_cbrt(mpq_t out, const mpq_t x)
{
    mpz_t p, q;
    mpz_inits(p, q, NULL);
    int ok = mpz_root(p, mpq_numref(x), 3) && mpz_root(q, mpq_denref(x), 3);
    if (ok) {
        mpz_set(mpq_numref(out), p);
        mpz_set(mpq_denref(out), q);
    }
    mpz_clears(p, q, NULL);
    return ok;
}

cr_code num_fn1(num_fn f, mpq_t out, int *exact, const mpq_t x, const num_ctx *ctx)
{
    int s = mpq_sgn(x), ci = mpq_cmp_ui(x, 1, 1), cm = mpq_cmp_si(x, -1, 1);
    /* |x| past these, the result passes the double's range (CPython: OverflowError) or is
     * within 1e-80 of its limit, far inside the guard digits */
    int big = mpz_sizeinbase(mpq_numref(x), 2) > mpz_sizeinbase(mpq_denref(x), 2) + 10;
    switch (f) {
    case NUM_ASIN: case NUM_ACOS:
        if (ci > 0 || cm < 0) return CR_EPY_VALUE;
        if (f == NUM_ACOS && ci == 0) { mpq_set_ui(out, 0, 1); return CR_OK; }
        break;
    case NUM_ACOSH:
        if (ci < 0) return CR_EPY_VALUE;
        if (ci == 0) { mpq_set_ui(out, 0, 1); return CR_OK; }
        break;
    case NUM_ATANH: if (ci >= 0 || cm <= 0) return CR_EPY_VALUE; break;
    case NUM_LOG1P: if (cm <= 0) return CR_EPY_VALUE; break;
    case NUM_SINH: case NUM_COSH: case NUM_EXPM1: case NUM_EXP2:
        if (big && (s > 0 || f == NUM_SINH || f == NUM_COSH)) return CR_EPY_OVERFLOW;
        if (big && f == NUM_EXP2) { mpq_set_ui(out, 0, 1); *exact = 0; return CR_OK; }
        if (big) { mpq_set_si(out, -1, 1); *exact = 0; return CR_OK; }
        if (f == NUM_EXP2 && is_int(x)) {
            long e = mpz_get_si(mpq_numref(x));
            if (e > 1023) return CR_EPY_OVERFLOW;
            mpq_set_ui(out, 1, 1);
            if (e >= 0) mpq_mul_2exp(out, out, (mp_bitcnt_t)e);
            else mpq_div_2exp(out, out, (mp_bitcnt_t)-e);
            return CR_OK;
        }
        break;
    case NUM_TANH:
        if (big) { mpq_set_si(out, s, 1); *exact = 0; return CR_OK; }
        break;
    case NUM_CBRT: if (exact_cbrt(out, x)) return CR_OK; break;
    case NUM_GAMMA: case NUM_LGAMMA:
        if (is_int(x) && s <= 0) return CR_EPY_VALUE;
        if (is_int(x) && f == NUM_LGAMMA && mpz_cmp_ui(mpq_numref(x), 2) <= 0) {
            mpq_set_ui(out, 0, 1);
            return CR_OK;
        }
        if (f == NUM_GAMMA && mpq_cmp_ui(x, 172, 1) > 0) return CR_EPY_OVERFLOW;
        if (f == NUM_GAMMA && is_int(x)) {   /* (n - 1)!, n <= 172 */
            mpz_fac_ui(mpq_numref(out), mpz_get_ui(mpq_numref(x)) - 1);
            mpz_set_ui(mpq_denref(out), 1);
            if (num_past_double(out)) return CR_EPY_OVERFLOW;
            return CR_OK;
        }
        if (f == NUM_GAMMA && mpq_cmp_si(x, -200, 1) < 0) {   /* |gamma| < 1/200! */
            mpq_set_ui(out, 0, 1);
            *exact = 0;
            return CR_OK;
        }
        break;
    case NUM_ASINH: case NUM_DEGREES: case NUM_RADIANS: break;
    }
    if (!s && f != NUM_GAMMA && f != NUM_LGAMMA && f != NUM_ACOS) {   /* 0, or cosh's 1 */
        mpq_set_ui(out, f == NUM_COSH, 1);
        return CR_OK;
    }
    return run_fn(out, exact, F_FN1 + (int)f, x, NULL, ctx);
}

cr_code num_atan2(mpq_t out, int *exact, const mpq_t y, const mpq_t x, const num_ctx *ctx)
{
    /* on an axis: 0 exactly, or a multiple of pi/2 */
    if (!mpq_sgn(y) && mpq_sgn(x) >= 0) {
        mpq_set_ui(out, 0, 1);
        return CR_OK;
    }
    return run_fn(out, exact, F_ATAN2, y, x, ctx);
}

/* ---- the normal distribution ------------------------------------------------------------ */

/* Beyond |x| = 40 Phi(x) is within 1e-349 of 0 or 1: below the smallest double, and far
 * inside the guard digits. */
cr_code num_norm_cdf(mpq_t out, int *exact, const mpq_t x, const num_ctx *ctx)
{
    if (!mpq_sgn(x)) {
        mpq_set_ui(out, 1, 2);
        return CR_OK;
    }
    if (mpq_cmp_si(x, -40, 1) < 0 || mpq_cmp_ui(x, 40, 1) > 0) {
        mpq_set_ui(out, mpq_sgn(x) > 0, 1);
        *exact = 0;
        return CR_OK;
    }
    return run_fn(out, exact, F_NCDF, x, NULL, ctx);
}

cr_code num_norm_pdf(mpq_t out, int *exact, const mpq_t x, const mpq_t sigma, const num_ctx *ctx)
{
    if (mpz_sizeinbase(mpq_numref(x), 2) > mpz_sizeinbase(mpq_denref(x), 2) + 64) {
        mpq_set_ui(out, 0, 1);   /* exp(-x^2/2) < 2^-(2^125): zero in any double */
        *exact = 0;
        return CR_OK;
    }
    return run_fn(out, exact, F_NPDF, x, sigma, ctx);
}

/* d = 2/sqrt(pi) exp(-t^2), erf's derivative */
static void erf_slope(mpfr_t d, const mpfr_t t)
{
    mpfr_sqr(d, t, MPFR_RNDN);
    mpfr_neg(d, d, MPFR_RNDN);
    mpfr_exp(d, d, MPFR_RNDN);
    mpfr_mul_d(d, d, M_2_SQRTPI, MPFR_RNDN);
}

/* t -= step; whether the step was below the last bits of wp (Newton has converged). */
static int newton_step(mpfr_t t, const mpfr_t step, mpfr_prec_t wp)
{
    mpfr_sub(t, t, step, MPFR_RNDN);
    return mpfr_zero_p(step) || mpfr_get_exp(step) < mpfr_get_exp(t) - wp + 2;
}

/* t > 0 with erfc(t) = c (0 < c < 1/2 in mpfr), to about wp bits: Newton on
 * log(erfc(t)) - log(c), whose concavity keeps the iteration from leaving t > 0 once near
 * the root, from Abramowitz & Stegun 26.2.23 (absolute error < 4.5e-4 in sqrt(2) t). */
static int erfc_inverse(mpfr_t t, const mpfr_t c, mpfr_prec_t wp)
{
    int done = 0;
    mpfr_t l, lc, d, e;
    mpfr_inits2(wp, l, lc, d, e, (mpfr_ptr)0);
    mpfr_log(lc, c, MPFR_RNDN);
    double lq = mpfr_get_d(lc, MPFR_RNDN) - M_LN2;    /* log of the upper tail's mass c/2 */
    double s = sqrt(-2 * lq);
    double z = s - (2.515517 + 0.802853 * s + 0.010328 * s * s) /
                   (1 + 1.432788 * s + 0.189269 * s * s + 0.001308 * s * s * s);
    mpfr_set_d(t, z > 0.1 ? z / M_SQRT2 : 0.1, MPFR_RNDN);
    for (int i = 0; i < 200; i++) {
        /* h = log erfc(t) - log c; h' = -erf'(t) / erfc(t) */
        mpfr_erfc(e, t, MPFR_RNDN);
        mpfr_log(l, e, MPFR_RNDN);
        mpfr_sub(l, l, lc, MPFR_RNDN);
        erf_slope(d, t);
        mpfr_div(d, d, e, MPFR_RNDN);
        mpfr_neg(d, d, MPFR_RNDN);
        mpfr_div(l, l, d, MPFR_RNDN);
        if ((done = newton_step(t, l, wp))) break;
    }
    mpfr_clears(l, lc, d, e, (mpfr_ptr)0);
    return done;
}

/* t with erf(t) = s (0 < s <= 1/2), by Newton from t = s sqrt(pi)/2: erf is concave there
 * and nearly linear, so the iteration converges from the first step. Both inverses return
 * whether Newton converged (it does in a few steps; otherwise the caller claims no bits). */
static int erf_inverse(mpfr_t t, const mpfr_t s, mpfr_prec_t wp)
{
    int done = 0;
    mpfr_t e, d;
    mpfr_inits2(wp, e, d, (mpfr_ptr)0);
    mpfr_div_d(t, s, M_2_SQRTPI, MPFR_RNDN);
    for (int i = 0; i < 200; i++) {
        mpfr_erf(e, t, MPFR_RNDN);
        mpfr_sub(e, e, s, MPFR_RNDN);
        erf_slope(d, t);
        mpfr_div(e, e, d, MPFR_RNDN);
        if ((done = newton_step(t, e, wp))) break;
    }
    mpfr_clears(e, d, (mpfr_ptr)0);
    return done;
}

/* y = mu + sigma * Phi^-1(p) for 0 < p < 1, p != 1/2 (x = p, y = mu, z = sigma). The
 * inverse is solved 64 bits past wp, where Newton's last step bounds its error far below an
 * ulp of t (|h'| > 0.9 on both branches); the one rounding of each later step adds an ulp,
 * and mu + sigma z adds the cancellation of its two terms. */
static long norm_ppf(mpfr_t y, const fn_args *a, mpfr_prec_t wp)
{
    mpfr_prec_t wp2 = wp + 64;
    mpq_t s;
    mpfr_t c, t, mu, sg;
    mpq_init(s);
    mpfr_inits2(wp2, c, t, mu, sg, (mpfr_ptr)0);
    /* s = 2p - 1, exact: the centre solves erf(t) = |s|, each tail erfc(t) = 1 - |s| */
    mpq_mul_2exp(s, *a->x, 1);
    mpz_sub(mpq_numref(s), mpq_numref(s), mpq_denref(s));   /* stays canonical */
    int neg = mpq_sgn(s) < 0;
    mpq_abs(s, s);
    int conv;
    if (mpq_cmp_ui(s, 1, 2) <= 0) {
        mpfr_set_q(c, s, MPFR_RNDN);
        conv = erf_inverse(t, c, wp2);
    } else {
        mpz_sub(mpq_numref(s), mpq_denref(s), mpq_numref(s));   /* 1 - s, canonical */
        mpfr_set_q(c, s, MPFR_RNDN);
        conv = erfc_inverse(t, c, wp2);
    }
    mpfr_sqrt_ui(c, 2, MPFR_RNDN);
    mpfr_mul(t, t, c, MPFR_RNDN);
    if (neg) mpfr_neg(t, t, MPFR_RNDN);
    mpfr_set_q(sg, *a->z, MPFR_RNDN);
    mpfr_mul(t, t, sg, MPFR_RNDN);
    long k = conv ? 3 : (long)wp, et = (long)mpfr_get_exp(t), emu = LONG_MIN / 4;
    mpfr_set_q(mu, *a->y, MPFR_RNDN);
    if (!mpfr_zero_p(mu)) emu = (long)mpfr_get_exp(mu);
    mpfr_add(t, t, mu, MPFR_RNDN);
    mpfr_set(y, t, MPFR_RNDN);
    if (!mpfr_zero_p(y)) k += lmax(lmax(et, emu) - (long)mpfr_get_exp(y), 0);
    mpfr_clears(c, t, mu, sg, (mpfr_ptr)0);
    mpq_clear(s);
    return k;
}

cr_code num_norm_ppf(mpq_t out, int *exact, const mpq_t p, const mpq_t mu, const mpq_t sigma,
                     const num_ctx *ctx)
{
    if (mpq_cmp_ui(p, 1, 2) == 0 || !mpq_sgn(sigma)) {
        mpq_set(out, mu);
        return CR_OK;
    }
    fn_args a = { (const mpq_t *)p, (const mpq_t *)mu, (const mpq_t *)sigma, F_NPPF };
    cr_code rc = ziv(out, eval_fn, &a, ctx);
    if (rc == CR_OK) *exact = 0;
    return rc;
}

void num_pi(mpq_t out, const num_ctx *ctx) { (void)run_fn(out, NULL, F_PI, NULL, NULL, ctx); }
void num_e(mpq_t out, const num_ctx *ctx) { (void)run_fn(out, NULL, F_E, NULL, NULL, ctx); }

/* ---- integer combinatorics: sizes from lgamma before any multiplication ------------------ */

/* log2(n!) as a double. */
static double log2_fact(double n) { return lgamma(n + 1.0) / M_LN2; }

cr_code num_factorial(mpz_t out, const mpz_t n, const num_ctx *ctx)
{
    if (mpz_sgn(n) < 0) return CR_EPY_VALUE;
    if (!mpz_fits_ulong_p(n) || log2_fact(mpz_get_d(n)) > (double)ctx->max_bits) return CR_ELIMIT;
    mpz_fac_ui(out, mpz_get_ui(n));
    return CR_OK;
}

/* The checks comb and perm share: negative arguments are a ValueError, k > n gives 0.
 * Returns 1 when *rc (and out) are the final answer. */
static int comb_done(mpz_t out, const mpz_t n, const mpz_t k, cr_code *rc)
{
    *rc = CR_OK;
    if (mpz_sgn(n) < 0 || mpz_sgn(k) < 0) {
        *rc = CR_EPY_VALUE;
        return 1;
    }
    if (mpz_cmp(k, n) > 0) {
        mpz_set_ui(out, 0);
        return 1;
    }
    return 0;
}

/* Whether n!/(n-k)! / divisor fits max_bits, divisor being k! for comb and 1 for perm:
 * k*log2(n) bounds it from above, lgamma gives it closely when n is a double. */
static int falling_fits(const mpz_t n, unsigned long k, int divide_kfact, const num_ctx *ctx)
{
    double dk = (double)k, max = (double)ctx->max_bits;
    if (dk * (double)mpz_sizeinbase(n, 2) <= max) return 1;
    double dn = mpz_get_d(n);
    if (!isfinite(dn) || dn > 1e15) return 0;
    double bits = log2_fact(dn) - log2_fact(dn - dk) - (divide_kfact ? log2_fact(dk) : 0);
    return bits <= max;
}

cr_code num_comb(mpz_t out, const mpz_t n, const mpz_t k, const num_ctx *ctx)
{
    cr_code rc;
    if (comb_done(out, n, k, &rc)) return rc;
    mpz_t kk;
    mpz_init(kk);
    mpz_sub(kk, n, k);
    if (mpz_cmp(kk, k) > 0) mpz_set(kk, k);
    rc = CR_ELIMIT;
    if (mpz_fits_ulong_p(kk) && falling_fits(n, mpz_get_ui(kk), 1, ctx)) {
        mpz_bin_ui(out, n, mpz_get_ui(kk));
        rc = CR_OK;
    }
    mpz_clear(kk);
    return rc;
}

cr_code num_perm(mpz_t out, const mpz_t n, const mpz_t k, const num_ctx *ctx)
{
    cr_code rc;
    if (comb_done(out, n, k, &rc)) return rc;
    if (!mpz_fits_ulong_p(k) || !falling_fits(n, mpz_get_ui(k), 0, ctx)) return CR_ELIMIT;
    /* n!/(n-k)! = C(n, k) * k!, both within the bound just checked. */
    unsigned long uk = mpz_get_ui(k);
    mpz_t f;
    mpz_init(f);
    mpz_fac_ui(f, uk);
    mpz_bin_ui(out, n, uk);
    mpz_mul(out, out, f);
    mpz_clear(f);
    return CR_OK;
}
