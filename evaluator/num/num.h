/* evaluator/num/num.h: the exact numeric kernel. Values are GMP rationals; whether a value is a
 * Python int or float is the caller's tag, passed where it changes the answer.
 *
 * Conventions: functions return CR_OK or the Python exception code (CR_EPY_ZERODIV,
 * CR_EPY_VALUE, CR_EPY_OVERFLOW, CR_EPY_TYPE) or CR_ELIMIT, and write no message unless they
 * take a cr_error: the evaluator words messages as CPython does, since the wording depends on
 * the operand types. Outputs may alias inputs. `*exact` is set to 0 when a result was rounded
 * to the precision and left alone otherwise, so inexactness accumulates in the caller's flag. */
#ifndef CR_NUM_H
#define CR_NUM_H

#include <gmp.h>
#include <stdint.h>

#include "common/common.h"

/* Guard digits an inexact result carries past the policy's precision. Rounded values are
 * computed to prec + NUM_GUARD digits, but shown and compared at prec digits (num_decided):
 * the guard digits absorb the error rounding accumulates, so math.sqrt(2) ** 2 prints,
 * compares and truncates as 2, as in exact math. */
#define NUM_GUARD 8

/* Bits (numerator + denominator) a float-tagged value may have and stay an exact rational;
 * an operation whose float result is larger rounds it to work digits, inexact, as math.sqrt
 * is. Exact rationals grow with every step of a loop (daily compounding by 1 + 0.05/365,
 * 7301/7300, adds ~13 bits to each of numerator and denominator per step; a Newton iteration
 * doubles them) while an mpq operation costs about the square of its size (products and
 * gcds): under 1 us for the < 200-bit values of typical finance code, ~12 us at 4 096 bits,
 * ~30 us and 128 operation steps at 8 192. 8 192 keeps the most common finance formula, a
 * 30-year monthly annuity ((1 + 0.05/12)**360, 5 700 bits), exact, while a 10 950-step
 * daily compounding loop still takes milliseconds and rounds every ~300 steps (error
 * < 1e-41 each, far inside the guard digits); (1 + 0.05/12)**720, 11 400 bits, is rounded.
 * A policy precision whose rounded values need more raises it (num_ctx_from_policy). */
#define NUM_FLOAT_BITS 8192

typedef struct {
    int prec;              /* significant decimal digits shown for inexact results, and the
                            * digits an inexact value decides with */
    int work;              /* digits inexact results are computed to: prec + NUM_GUARD */
    cr_rounding rounding;  /* round() and format specs: half-even (Python) or half-up */
    uint64_t max_bits;     /* bits of an exact integer, numerator or denominator: past it
                            * an int result is a LimitError */
    uint64_t float_bits;   /* a float-tagged value whose numerator + denominator pass this
                            * many bits is rounded to work digits (and marked inexact):
                            * NUM_FLOAT_BITS, or more for a high precision */
} num_ctx;

void num_ctx_from_policy(num_ctx *ctx, const cr_policy *pol);

/* ---- parsing ---- */
/* A Python numeric literal as tree-sitter gives it: "1_000", "0.1", "1e-3", ".5", "5.",
 * "0x1F", "0o17", "0b101". *is_float is set for a float literal. A decimal exponent whose
 * value would pass ctx->max_bits is CR_ELIMIT; "1j" is CR_EPY_VALUE. */
cr_code num_parse_literal(mpq_t out, const char *text, size_t len, int *is_float,
                          const num_ctx *ctx);
/* float(str) rules: surrounding whitespace, sign, underscores between digits, exponent.
 * "inf"/"nan" and anything else unreadable: CR_EPY_VALUE. */
cr_code num_parse_float_str(mpq_t out, const char *s, size_t len, const num_ctx *ctx);
/* int(str, base) rules (base 0 or 2..36; whitespace, sign, underscores). CR_EPY_VALUE. */
cr_code num_parse_int_str(mpz_t out, const char *s, size_t len, int base, const num_ctx *ctx);

/* ---- arithmetic with Python's rules ---- */
cr_code num_floordiv(mpq_t out, const mpq_t a, const mpq_t b);   /* floor(a/b); /0: ZERODIV */
cr_code num_mod(mpq_t out, const mpq_t a, const mpq_t b);        /* sign of b, as Python */
/* The value an inexact x decides with (comparisons, int(), //, %, round(), format): x rounded
 * to ctx->prec digits, so that an error within the guard digits cannot flip the decision. */
void num_decided(mpq_t out, const mpq_t x, const num_ctx *ctx);
/* a // b (want_mod 0) or a % b when an operand is inexact: the quotient decides as
 * num_decided() sees it, and one that is an integer there leaves the remainder 0. */
cr_code num_floordiv_decided(mpq_t out, const mpq_t a, const mpq_t b, int want_mod,
                             const num_ctx *ctx);
/* a ** b. Integer b: exact, with the result's size predicted before computing (an int result
 * past max_bits is CR_ELIMIT; a float result too large to be exact is computed to work digits
 * instead, inexact). Non-integer b: to work digits, inexact; negative base → CR_EPY_VALUE.
 * 0 ** negative → CR_EPY_ZERODIV. A float result beyond the double range (~1.8e308) is
 * CR_EPY_OVERFLOW, as CPython raises. `float_result`: the result is float-tagged. */
cr_code num_pow(mpq_t out, int *exact, const mpq_t a, const mpq_t b, int float_result,
                const num_ctx *ctx);
/* Bounds a float-tagged value (see float_bits). Cheap when nothing needs doing. */
void num_bound_float_slow(mpq_t v, int *exact, const num_ctx *ctx);
static inline void num_bound_float(mpq_t v, int *exact, const num_ctx *ctx)
{
    /* limbs first, inline: the common small value costs two loads and no call */
    size_t limbs = mpz_size(mpq_numref(v)) + mpz_size(mpq_denref(v));
    if ((uint64_t)limbs * GMP_NUMB_BITS > ctx->float_bits) num_bound_float_slow(v, exact, ctx);
}
/* Where a float-tagged x stands against the double's range, which CPython's float is held in:
 * 0 within it (x unchanged, exact); 1 past it (CPython's float is +-inf: x unchanged); -1 below
 * the normal doubles: x replaced by the double it rounds to exactly (a subnormal, or 0 when it
 * underflows), *exact cleared if that changed it. Cheap when x is well inside. */
int num_double_range_slow(mpq_t x, int *exact);
/* Whether int z rounds past the largest double (CPython's "int too large to convert to
 * float"). */
int num_int_past_double(const mpz_t z);
static inline int num_double_range(mpq_t x, int *exact)
{
    /* |x| is within [2^-960, 2^960) while the limbs of its parts differ by 14 at most */
    size_t n = mpz_size(mpq_numref(x)), d = mpz_size(mpq_denref(x));
    if (n + 14 >= d && d + 14 >= n) return 0;
    return num_double_range_slow(x, exact);
}
/* Python's round(x, ndigits) on the exact value: half-even (or ctx->rounding), ndigits may
 * be negative. */
void num_round(mpq_t out, const mpq_t x, long ndigits, const num_ctx *ctx);
void num_trunc(mpz_t out, const mpq_t x);      /* int(x): toward zero */
void num_floor(mpz_t out, const mpq_t x);
void num_ceil(mpz_t out, const mpq_t x);

/* ---- math module, to work significant digits, correctly rounded, inexact unless the
 * result is exactly representable (sqrt(4) = 2 exactly). Domain errors: CR_EPY_VALUE
 * ("math domain error"). */
cr_code num_sqrt(mpq_t out, int *exact, const mpq_t x, const num_ctx *ctx);
cr_code num_exp(mpq_t out, int *exact, const mpq_t x, const num_ctx *ctx);  /* OVERFLOW past double range */
cr_code num_log(mpq_t out, int *exact, const mpq_t x, const num_ctx *ctx);  /* natural */
cr_code num_log_base(mpq_t out, int *exact, const mpq_t x, const mpq_t base, const num_ctx *ctx);
cr_code num_log10(mpq_t out, int *exact, const mpq_t x, const num_ctx *ctx);
cr_code num_log2(mpq_t out, int *exact, const mpq_t x, const num_ctx *ctx);
cr_code num_erf(mpq_t out, int *exact, const mpq_t x, const num_ctx *ctx);
cr_code num_erfc(mpq_t out, int *exact, const mpq_t x, const num_ctx *ctx);
cr_code num_sin(mpq_t out, int *exact, const mpq_t x, const num_ctx *ctx);
cr_code num_cos(mpq_t out, int *exact, const mpq_t x, const num_ctx *ctx);
cr_code num_tan(mpq_t out, int *exact, const mpq_t x, const num_ctx *ctx);
cr_code num_atan(mpq_t out, int *exact, const mpq_t x, const num_ctx *ctx);
/* The normal distribution (statistics.NormalDist, scipy.stats.norm), correctly rounded in
 * both tails: Phi(x); phi(x) / sigma; mu + sigma * Phi^-1(p) for 0 < p < 1 (exact mu when
 * p = 1/2 or sigma = 0). */
cr_code num_norm_cdf(mpq_t out, int *exact, const mpq_t x, const num_ctx *ctx);
cr_code num_norm_pdf(mpq_t out, int *exact, const mpq_t x, const mpq_t sigma, const num_ctx *ctx);
cr_code num_norm_ppf(mpq_t out, int *exact, const mpq_t p, const mpq_t mu, const mpq_t sigma,
                     const num_ctx *ctx);
/* The rest of CPython's math, with its domain errors (CR_EPY_VALUE) and overflows
 * (CR_EPY_OVERFLOW); exact where the value is (cbrt of a cube, exp2 of an int, gamma of a
 * positive int, f(0)). */
typedef enum {
    NUM_ASIN, NUM_ACOS, NUM_SINH, NUM_COSH, NUM_TANH, NUM_ASINH, NUM_ACOSH, NUM_ATANH,
    NUM_LOG1P, NUM_EXPM1, NUM_CBRT, NUM_EXP2, NUM_GAMMA, NUM_LGAMMA, NUM_DEGREES, NUM_RADIANS
} num_fn;
cr_code num_fn1(num_fn f, mpq_t out, int *exact, const mpq_t x, const num_ctx *ctx);
cr_code num_atan2(mpq_t out, int *exact, const mpq_t y, const mpq_t x, const num_ctx *ctx);
/* x rounded to the nearest double as IEEE binary64 rounds (subnormals, +-inf past the range):
 * CPython's float of x. */
double num_get_double(const mpq_t x);
/* repr() of the double d (finite), as CPython's: its shortest decimal that reads back as d,
 * laid out as num_repr_float() lays a value out. */
cr_code num_repr_double(cr_buf *out, double d, const num_ctx *ctx);
void num_pi(mpq_t out, const num_ctx *ctx);    /* inexact */
void num_e(mpq_t out, const num_ctx *ctx);     /* inexact */
cr_code num_factorial(mpz_t out, const mpz_t n, const num_ctx *ctx);  /* size predicted: LIMIT */
cr_code num_comb(mpz_t out, const mpz_t n, const mpz_t k, const num_ctx *ctx);
cr_code num_perm(mpz_t out, const mpz_t n, const mpz_t k, const num_ctx *ctx);

/* ---- rendering ---- */
/* repr()/str() of a float-tagged value, CPython's layout on the exact value: the exact
 * decimal when it terminates within prec significant digits, else rounded to prec digits
 * (half-even); integral values end in ".0"; exponent notation when the decimal exponent is
 * < -4 or >= 16, as repr does ("1e-05", "1.5e+16"). */
cr_code num_repr_float(cr_buf *out, const mpq_t v, const num_ctx *ctx);
/* CR_EPY_VALUE past 4300 decimal digits, as CPython 3.11 raises ("Exceeds the limit (4300
 * digits) for integer string conversion"); num_parse_int_str() refuses the same. */
cr_code num_repr_int(cr_buf *out, const mpz_t v);
/* The shortest exact text of v as "p/q" (or "p" when integral), for audit and JSON. */
cr_code num_fraction_text(cr_buf *out, const mpq_t v);

/* format(value, spec) for numbers: fill, align (< > ^ =), sign (+ - space), z, #, 0, width,
 * grouping (, _), .precision, type (b c d e E f F g G n o x X %, or none). `is_float` is the
 * value's tag (an int-tagged value must be integral). Errors are ValueError with CPython's
 * message in err ("Unknown format code 'd' for object of type 'float'", "Invalid format
 * specifier"); widths and precisions are bounded (CR_ELIMIT past 10^6). */
#define NUM_NEG_ZERO 2   /* or'd into num_format's is_float: v is 0 and the float is -0.0 */
cr_code num_format(cr_buf *out, const mpq_t v, int is_float, const char *spec, size_t speclen,
                   const num_ctx *ctx, cr_error *err);
/* The padding and grouping of a number another type renders itself (decimal.Decimal): its
 * sign character (0: none), integer digits int[0..nint) and the rest (point, fraction,
 * exponent), laid out as num_format() does: fill (UTF-8, 1..4 bytes), align (< > ^ =),
 * width (-1: none), zero padding through grouping ',' (0: none). */
typedef struct {
    char fill[5];
    size_t fill_len;
    char align, group;
    long width;
} num_layout;
cr_code num_format_layout(cr_buf *out, const num_layout *l, char sign, const char *ints,
                          size_t nint, const char *rest, size_t nrest);
/* format(str, spec): fill, align, width, .precision (truncates), type s or none. */
cr_code num_format_str(cr_buf *out, const char *s, size_t len, const char *spec,
                       size_t speclen, cr_error *err);

/* Decimal rounding, for a library that rounds as numpy does (the kernel's own helpers are
 * num_int.h's). How a rounding breaks ties (and the directed modes int() and friends need): */
typedef enum {
    NUM_HALF_EVEN, NUM_HALF_UP, NUM_FLOOR, NUM_CEIL, NUM_TRUNC
} num_mode;
/* Digits an inexact result is computed to (a context that names none: prec). */
static inline int num_work(const num_ctx *ctx)
{
    return ctx->work > ctx->prec ? ctx->work : ctx->prec;
}

/* out = 10^k (k >= 0). */
void num_pow10(mpz_t out, unsigned long k);
/* out = round(x * 10^scale) to an integer; scale may be negative. */
void num_round_scaled(mpz_t out, const mpq_t x, long scale, num_mode mode);
/* x rounded to prec significant digits, half-even, as a rational (x == 0 stays 0). */
void num_round_prec(mpq_t out, const mpq_t x, int prec);

#endif
