/* tests/test_num.c: the exact numeric kernel (evaluator/num/num.h). Expected strings come from
 * CPython where CPython is exact, and from Python's decimal module at 34 digits where
 * CPython's binary floats differ by design. */
#include <time.h>

#include "evaluator/num/num.h"
#include "tests/testlib.h"

static num_ctx ctx;
static char sbuf[8][512];
static int sidx;

/* A rotating set of static result strings, so several can appear in one CHECK. */
static const char *keep(const cr_buf *b)
{
    char *s = sbuf[sidx++ % 8];
    snprintf(s, sizeof sbuf[0], "%s", b->p ? b->p : "");
    return s;
}

static const char *code_name(cr_code rc)
{
    switch (rc) {
    case CR_OK: return "OK";
    case CR_ELIMIT: return "LIMIT";
    case CR_EPY_ZERODIV: return "ZERODIV";
    case CR_EPY_VALUE: return "VALUE";
    case CR_EPY_OVERFLOW: return "OVERFLOW";
    case CR_EPY_TYPE: return "TYPE";
    default: return "OTHER";
    }
}

/* The text a check compares: the buffer on CR_OK, "!Type: message" when err was filled, else
 * the code's name. Frees b. */
static const char *outcome(cr_code rc, cr_buf *b, const cr_error *err)
{
    const char *s;
    if (rc == CR_OK) {
        s = keep(b);
    } else if (err && err->type[0]) {
        char *t = sbuf[sidx++ % 8];
        snprintf(t, sizeof sbuf[0], "!%s: %s", err->type, err->message);
        s = t;
    } else {
        s = code_name(rc);
    }
    cr_buf_free(b);
    return s;
}

/* Parses a literal (a leading '-' negates), aborting the test binary on failure. */
static void lit(mpq_t q, const char *s)
{
    int neg = s[0] == '-', isf;
    if (neg) s++;
    cr_code rc = num_parse_literal(q, s, strlen(s), &isf, &ctx);
    if (rc != CR_OK) {
        fprintf(stderr, "bad literal in test: %s\n", s);
        exit(2);
    }
    if (neg) mpq_neg(q, q);
}

/* repr of a float-tagged value, or the error code's name. */
static const char *frepr(const mpq_t q)
{
    cr_buf b;
    cr_buf_init(&b, 0);
    return outcome(num_repr_float(&b, q, &ctx), &b, NULL);
}

static const char *frac(const mpq_t q)
{
    cr_buf b;
    cr_buf_init(&b, 0);
    return outcome(num_fraction_text(&b, q), &b, NULL);
}

/* repr of an int result, or the name of the code that stopped it. */
static const char *irepr(cr_code rc, const mpz_t z)
{
    cr_buf b;
    cr_buf_init(&b, 0);
    return outcome(rc == CR_OK ? num_repr_int(&b, z) : rc, &b, NULL);
}

/* repr(float(literal)). */
static const char *repr_lit(const char *s)
{
    mpq_t q;
    mpq_init(q);
    lit(q, s);
    const char *r = frepr(q);
    mpq_clear(q);
    return r;
}

/* The literal's exact fraction, or the parse error's name. */
static const char *parse(const char *s, int want_float)
{
    mpq_t q;
    mpq_init(q);
    int isf = -1;
    cr_code rc = num_parse_literal(q, s, strlen(s), &isf, &ctx);
    const char *r = rc != CR_OK ? code_name(rc) : isf != want_float ? "WRONG-TAG" : frac(q);
    mpq_clear(q);
    return r;
}

typedef cr_code (*binop)(mpq_t, const mpq_t, const mpq_t);

/* a OP b with the result shown as a float repr (is_float) or as the exact fraction. */
static const char *bin(binop op, const char *a, const char *b, int is_float)
{
    mpq_t x, y, r;
    mpq_init(x);
    mpq_init(y);
    mpq_init(r);
    lit(x, a);
    lit(y, b);
    cr_code rc = op(r, x, y);
    const char *s = rc != CR_OK ? code_name(rc) : is_float ? frepr(r) : frac(r);
    mpq_clear(x);
    mpq_clear(y);
    mpq_clear(r);
    return s;
}

static const char *pw(const char *a, const char *b, int is_float, int *exact)
{
    mpq_t x, y, r;
    mpq_init(x);
    mpq_init(y);
    mpq_init(r);
    lit(x, a);
    lit(y, b);
    int ex = 1;
    cr_code rc = num_pow(r, &ex, x, y, is_float, &ctx);
    if (exact) *exact = ex;
    const char *s = rc != CR_OK ? code_name(rc) : is_float ? frepr(r) : frac(r);
    mpq_clear(x);
    mpq_clear(y);
    mpq_clear(r);
    return s;
}

static const char *rnd(const char *a, long nd)
{
    mpq_t x, r;
    mpq_init(x);
    mpq_init(r);
    lit(x, a);
    num_round(r, x, nd, &ctx);
    const char *s = frepr(r);
    mpq_clear(x);
    mpq_clear(r);
    return s;
}

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* ---- literals -------------------------------------------------------------------------- */

static void test_literals(void)
{
    CHECK_STR(parse("0.1", 1), "1/10");
    CHECK_STR(parse("1_000", 0), "1000");
    CHECK_STR(parse("1e-3", 1), "1/1000");
    CHECK_STR(parse(".5", 1), "1/2");
    CHECK_STR(parse("5.", 1), "5");
    CHECK_STR(parse("0x1F", 0), "31");
    CHECK_STR(parse("0o17", 0), "15");
    CHECK_STR(parse("0b101", 0), "5");
    CHECK_STR(parse("0x_ff", 0), "255");
    CHECK_STR(parse("1_000.000_1", 1), "10000001/10000");
    CHECK_STR(parse("2.5E+2", 1), "250");
    CHECK_STR(parse("1e1_0", 1), "10000000000");
    CHECK_STR(parse("0.000", 1), "0");
    CHECK_STR(parse("123456789012345678901234567890", 0), "123456789012345678901234567890");
    CHECK_STR(parse("1j", 0), "VALUE");
    CHECK_STR(parse("1e999999999", 1), "LIMIT");
    CHECK_STR(parse("1e-999999999", 1), "LIMIT");
    CHECK_STR(parse("0e999999999", 1), "0");
    CHECK_STR(parse("1__0", 0), "VALUE");
    CHECK_STR(parse("1_", 0), "VALUE");
}

static const char *pfloat(const char *s)
{
    mpq_t q;
    mpq_init(q);
    cr_code rc = num_parse_float_str(q, s, strlen(s), &ctx);
    const char *r = rc == CR_OK ? frac(q) : code_name(rc);
    mpq_clear(q);
    return r;
}

static const char *pint(const char *s, int base)
{
    mpz_t z;
    mpz_init(z);
    const char *r = irepr(num_parse_int_str(z, s, strlen(s), base, &ctx), z);
    mpz_clear(z);
    return r;
}

static void test_parse_strings(void)
{
    CHECK_STR(pfloat(" 3.25\n"), "13/4");
    CHECK_STR(pfloat("-1e-2"), "-1/100");
    CHECK_STR(pfloat("+.5"), "1/2");
    CHECK_STR(pfloat("1_0.5"), "21/2");
    CHECK_STR(pfloat("inf"), "VALUE");
    CHECK_STR(pfloat("nan"), "VALUE");
    CHECK_STR(pfloat("1,000"), "VALUE");
    CHECK_STR(pfloat(""), "VALUE");
    CHECK_STR(pfloat("."), "VALUE");
    CHECK_STR(pfloat("1e"), "VALUE");
    CHECK_STR(pfloat("_1"), "VALUE");
    CHECK_STR(pfloat("12%"), "VALUE");
    CHECK_STR(pint(" -42 ", 10), "-42");
    CHECK_STR(pint("0x1f", 16), "31");
    CHECK_STR(pint("0x1f", 0), "31");
    CHECK_STR(pint("z", 36), "35");
    CHECK_STR(pint("1_000", 0), "1000");
    CHECK_STR(pint("010", 0), "VALUE");
    CHECK_STR(pint("000", 0), "0");
    CHECK_STR(pint("3.5", 10), "VALUE");
    CHECK_STR(pint("12", 2), "VALUE");
    CHECK_STR(pint("", 10), "VALUE");
    CHECK_STR(pint("7", 1), "VALUE");
}

/* ---- floor division and modulo --------------------------------------------------------- */

static void test_floordiv_mod(void)
{
    CHECK_STR(bin(num_floordiv, "7", "2", 0), "3");
    CHECK_STR(bin(num_floordiv, "-7", "2", 0), "-4");
    CHECK_STR(bin(num_floordiv, "7", "-2", 0), "-4");
    CHECK_STR(bin(num_floordiv, "-7", "-2", 0), "3");
    CHECK_STR(bin(num_mod, "7", "3", 0), "1");
    CHECK_STR(bin(num_mod, "-7", "3", 0), "2");
    CHECK_STR(bin(num_mod, "7", "-3", 0), "-2");
    CHECK_STR(bin(num_mod, "-7", "-3", 0), "-1");
    CHECK_STR(bin(num_mod, "-7.5", "2", 1), "0.5");
    CHECK_STR(bin(num_mod, "7.5", "-2", 1), "-0.5");
    CHECK_STR(bin(num_mod, "7.5", "2", 1), "1.5");
    CHECK_STR(bin(num_mod, "-7.5", "-2", 1), "-1.5");
    CHECK_STR(bin(num_floordiv, "7.5", "2", 1), "3.0");
    CHECK_STR(bin(num_floordiv, "-7.5", "2", 1), "-4.0");
    CHECK_STR(bin(num_floordiv, "0.3", "0.1", 1), "3.0");   /* CPython: 2.0 (binary) */
    CHECK_STR(bin(num_mod, "0.3", "0.1", 1), "0.0");
    CHECK_STR(bin(num_floordiv, "1", "0", 0), "ZERODIV");
    CHECK_STR(bin(num_mod, "1.5", "0.0", 1), "ZERODIV");
}

/* An inexact operand decides within the guard digits: 2 - 1e-40 (sqrt(2) ** 2 carried to
 * work digits) floors as 2 and leaves no remainder; a quotient off an integer by more than
 * the shown digits decides as it is. */
static const char *dec_div(const char *a, const char *b, int want_mod)
{
    mpq_t x, y;
    mpq_init(x);
    mpq_init(y);
    lit(x, a);
    lit(y, b);
    cr_code rc = num_floordiv_decided(x, x, y, want_mod, &ctx);   /* in place */
    const char *s = rc != CR_OK ? code_name(rc) : frac(x);
    mpq_clear(x);
    mpq_clear(y);
    return s;
}

static void test_decided(void)
{
    const char *near2 = "1.9999999999999999999999999999999999999999";   /* 41 digits */
    const char *far2 = "1.99999999999999999999999999999999";            /* 33 digits */
    CHECK_STR(dec_div(near2, "1", 0), "2");
    CHECK_STR(dec_div(near2, "1", 1), "0");
    CHECK_STR(dec_div("-2.0000000000000000000000000000000000000001", "1", 0), "-2");
    CHECK_STR(dec_div(far2, "1", 0), "1");
    CHECK_STR(dec_div(far2, "1", 1), "99999999999999999999999999999999/100000000000000000000000000000000");
    CHECK_STR(dec_div("-7.5", "2", 0), "-4");
    CHECK_STR(dec_div("-7.5", "2", 1), "1/2");
    CHECK_STR(dec_div("7.5", "-2", 1), "-1/2");
    CHECK_STR(dec_div("1", "0", 1), "ZERODIV");
    mpq_t q;
    mpq_init(q);
    lit(q, near2);
    num_decided(q, q, &ctx);
    CHECK_STR(frac(q), "2");
    mpq_clear(q);
}

/* ---- rounding ---------------------------------------------------------------------------- */

static void test_round(void)
{
    CHECK_STR(rnd("0.5", 0), "0.0");
    CHECK_STR(rnd("1.5", 0), "2.0");
    CHECK_STR(rnd("2.5", 0), "2.0");
    CHECK_STR(rnd("-0.5", 0), "0.0");
    CHECK_STR(rnd("-1.5", 0), "-2.0");
    CHECK_STR(rnd("2.675", 2), "2.68");
    CHECK_STR(rnd("0.125", 2), "0.12");
    CHECK_STR(rnd("0.375", 2), "0.38");
    CHECK_STR(rnd("1250", -2), "1200.0");
    CHECK_STR(rnd("1350", -2), "1400.0");
    CHECK_STR(rnd("-1250", -2), "-1200.0");
    CHECK_STR(rnd("49", -2), "0.0");
    CHECK_STR(rnd("51", -2), "100.0");
    CHECK_STR(rnd("12345.6789", -10), "0.0");
    CHECK_STR(rnd("3.14159", 3), "3.142");
    CHECK_STR(rnd("7", 3), "7.0");
    ctx.rounding = CR_ROUND_HALF_UP;
    CHECK_STR(rnd("2.5", 0), "3.0");
    CHECK_STR(rnd("0.125", 2), "0.13");
    CHECK_STR(rnd("-0.125", 2), "-0.13");
    ctx.rounding = CR_ROUND_HALF_EVEN;

    mpq_t x;
    mpz_t z;
    mpq_init(x);
    mpz_init(z);
    lit(x, "-7.5");
    num_trunc(z, x);
    CHECK_INT(mpz_get_si(z), -7);
    num_floor(z, x);
    CHECK_INT(mpz_get_si(z), -8);
    num_ceil(z, x);
    CHECK_INT(mpz_get_si(z), -7);
    lit(x, "7.5");
    num_ceil(z, x);
    CHECK_INT(mpz_get_si(z), 8);
    mpq_clear(x);
    mpz_clear(z);
}

/* ---- powers ------------------------------------------------------------------------------ */

static void test_pow(void)
{
    int ex = 1;
    CHECK_STR(pw("2", "200", 0, NULL), "1606938044258990275541962092341162602522202993782792835301376");
    CHECK_STR(pw("2", "-2", 1, NULL), "0.25");
    CHECK_STR(pw("0", "-1", 0, NULL), "ZERODIV");
    CHECK_STR(pw("0", "0", 0, NULL), "1");
    CHECK_STR(pw("-8", "0.3333333333", 1, NULL), "VALUE");
    CHECK_STR(pw("-2", "3", 0, NULL), "-8");
    CHECK_STR(pw("-1", "99999999999999999999999", 0, NULL), "-1");
    CHECK_STR(pw("1.5", "2", 1, NULL), "2.25");
    /* (1 + 0.05/12) ** 360 stays exact (241/240 ** 360, ~5 700 bits); ** 720 (~11 400 bits)
     * passes NUM_FLOAT_BITS and is computed to work digits, correctly rounded, inexact. */
    CHECK_STR(pw("1.0041666666666666666666666666666666666666666666666666666666666", "0", 1, NULL),
              "1.0");
    mpq_t a, b, r;
    mpq_init(a);
    mpq_init(b);
    mpq_init(r);
    mpq_set_ui(a, 241, 240);
    mpq_set_ui(b, 120, 1);
    ex = 1;
    CHECK(num_pow(r, &ex, a, b, 1, &ctx) == CR_OK);
    CHECK_INT(ex, 1);
    CHECK_INT(mpz_sizeinbase(mpq_denref(r), 2) > 900, 1);
    CHECK_STR(frepr(r), "1.64700949769028303418567365430628");
    mpq_set_ui(b, 360, 1);
    CHECK(num_pow(r, &ex, a, b, 1, &ctx) == CR_OK);
    CHECK_INT(ex, 1);
    CHECK_STR(frepr(r), "4.467744314006132212428070110413016");
    mpq_set_ui(b, 720, 1);
    CHECK(num_pow(r, &ex, a, b, 1, &ctx) == CR_OK);
    CHECK_INT(ex, 0);
    CHECK_STR(frepr(r), "19.96073925533412491041553834361147");

    /* Sizes are predicted before any multiplication: these return at once. */
    double t0 = now_us();
    CHECK_STR(pw("10", "10000000000", 0, NULL), "LIMIT");
    CHECK_STR(pw("3999999", "3999999", 0, NULL), "LIMIT");
    CHECK_STR(pw("2", "99999999999999999999999999999", 0, NULL), "LIMIT");
    CHECK_STR(pw("1.5", "100000", 1, NULL), "OVERFLOW");
    CHECK_STR(pw("2.0", "5000", 1, NULL), "OVERFLOW");
    double dt = now_us() - t0;
    CHECK(dt < 5000);

    /* Too large to keep exact as a float: rounded to prec digits, inexact. */
    ex = 1;
    CHECK_STR(pw("1.0000001", "100000", 1, &ex), "1.010050166579143007794674059842474");
    CHECK_INT(ex, 0);
    ex = 1;
    CHECK_STR(pw("2", "0.5", 1, &ex), "1.414213562373095048801688724209698");
    CHECK_INT(ex, 0);
    ex = 1;
    CHECK_STR(pw("2.25", "0.5", 1, &ex), "1.5");
    CHECK_INT(ex, 1);
    ex = 1;
    CHECK_STR(pw("1.1", "0.2", 1, &ex), "1.019244876491456620652066601613276");
    CHECK_STR(pw("8", "1e-1", 1, NULL), "1.231144413344916284499393069167743");
    CHECK_STR(pw("1e300", "2", 1, NULL), "OVERFLOW");
    CHECK_STR(pw("10", "-3", 1, NULL), "0.001");
    CHECK_STR(pw("-0.5", "-3", 1, NULL), "-8.0");
    mpq_clear(a);
    mpq_clear(b);
    mpq_clear(r);
}

static void test_bound_float(void)
{
    mpq_t a, b, r;
    mpq_init(a);
    mpq_init(b);
    mpq_init(r);
    mpq_set_ui(a, 1, 3);
    int ex = 1;
    num_bound_float(a, &ex, &ctx);
    CHECK_INT(ex, 1);
    CHECK_STR(frac(a), "1/3");
    /* A float too big to be exact (3**-50000 has ~79000 bits of denominator) is rounded. */
    mpq_set_ui(a, 1, 3);
    mpq_set_ui(b, 50000, 1);
    CHECK(num_pow(r, &ex, a, b, 0, &ctx) == CR_OK);
    num_bound_float(r, &ex, &ctx);
    CHECK_INT(ex, 0);
    CHECK_STR(frepr(r), "8.654939110862330586373027281433254e-23857");
    mpq_clear(a);
    mpq_clear(b);
    mpq_clear(r);
}

/* ---- repr -------------------------------------------------------------------------------- */

static void test_repr(void)
{
    mpq_t a, b;
    mpq_init(a);
    mpq_init(b);
    lit(a, "0.1");
    lit(b, "0.2");
    mpq_add(a, a, b);
    CHECK_STR(frepr(a), "0.3");
    CHECK_STR(repr_lit("3.0"), "3.0");
    CHECK_STR(repr_lit("0"), "0.0");
    CHECK_STR(repr_lit("1e16"), "1e+16");
    CHECK_STR(repr_lit("1.5e16"), "1.5e+16");
    CHECK_STR(repr_lit("1e15"), "1000000000000000.0");
    CHECK_STR(repr_lit("9999999999999998.0"), "9999999999999998.0");
    CHECK_STR(repr_lit("1e-4"), "0.0001");
    CHECK_STR(repr_lit("1e-5"), "1e-05");
    CHECK_STR(repr_lit("0.00012345"), "0.00012345");
    CHECK_STR(repr_lit("0.000012345"), "1.2345e-05");
    CHECK_STR(repr_lit("123456789012345678.0"), "1.23456789012345678e+17");
    CHECK_STR(repr_lit("-2.5"), "-2.5");
    CHECK_STR(repr_lit("-1e100"), "-1e+100");
    CHECK_STR(repr_lit("1.25e-300"), "1.25e-300");
    CHECK_STR(repr_lit("123.456"), "123.456");
    CHECK_STR(repr_lit("100"), "100.0");
    mpq_set_ui(a, 1, 3);
    CHECK_STR(frepr(a), "0.3333333333333333333333333333333333");
    mpq_set_ui(a, 2, 3);
    CHECK_STR(frepr(a), "0.6666666666666666666666666666666667");
    mpq_set_si(a, -2, 3);
    CHECK_STR(frepr(a), "-0.6666666666666666666666666666666667");
    mpq_set_ui(a, 1, 30000);
    CHECK_STR(frepr(a), "3.333333333333333333333333333333333e-05");
    /* 34 nines and a 5 round up into a new digit. */
    CHECK_STR(repr_lit("9.99999999999999999999999999999999995"), "10.0");
    mpq_clear(a);
    mpq_clear(b);

    mpz_t z;
    mpz_init(z);
    mpz_ui_pow_ui(z, 10, 4299);
    cr_buf buf;
    cr_buf_init(&buf, 0);
    CHECK(num_repr_int(&buf, z) == CR_OK);
    CHECK_INT(buf.len, 4300);
    mpz_mul_ui(z, z, 10);
    CHECK(num_repr_int(&buf, z) == CR_EPY_VALUE);
    cr_buf_free(&buf);
    mpz_clear(z);
}

/* ---- math ---------------------------------------------------------------------------------- */

typedef cr_code (*unop)(mpq_t, int *, const mpq_t, const num_ctx *);

static const char *mf(unop fn, const char *a, int *exact)
{
    mpq_t x;
    mpq_init(x);
    lit(x, a);
    int ex = 1;
    cr_code rc = fn(x, &ex, x, &ctx);   /* in place: outputs may alias inputs */
    if (exact) *exact = ex;
    const char *s = rc == CR_OK ? frepr(x) : code_name(rc);
    mpq_clear(x);
    return s;
}

static const char *log_base(const char *a, const char *b)
{
    mpq_t x, y;
    mpq_init(x);
    mpq_init(y);
    lit(x, a);
    lit(y, b);
    int ex = 1;
    cr_code rc = num_log_base(x, &ex, x, y, &ctx);
    const char *s = rc == CR_OK ? frepr(x) : code_name(rc);
    mpq_clear(x);
    mpq_clear(y);
    return s;
}

static void test_math(void)
{
    int ex = 1;
    CHECK_STR(mf(num_sqrt, "2", &ex), "1.414213562373095048801688724209698");
    CHECK_INT(ex, 0);
    CHECK_STR(mf(num_sqrt, "4", &ex), "2.0");
    CHECK_INT(ex, 1);
    CHECK_STR(mf(num_sqrt, "0.0625", &ex), "0.25");
    CHECK_INT(ex, 1);
    CHECK_STR(mf(num_sqrt, "0.5", NULL), "0.707106781186547524400844362104849");
    CHECK_STR(mf(num_sqrt, "-1", NULL), "VALUE");
    CHECK_STR(mf(num_exp, "1", NULL), "2.718281828459045235360287471352662");
    CHECK_STR(mf(num_exp, "-1", NULL), "0.3678794411714423215955237701614609");
    CHECK_STR(mf(num_exp, "0.05", NULL), "1.051271096376024039697517636335645");
    CHECK_STR(mf(num_exp, "709", NULL), "8.218407461554972189241372386597816e+307");
    CHECK_STR(mf(num_exp, "1000", NULL), "OVERFLOW");
    CHECK_STR(mf(num_exp, "-1000", NULL), "0.0");
    CHECK_STR(mf(num_exp, "0", &ex), "1.0");
    CHECK_INT(ex, 1);
    CHECK_STR(mf(num_log, "10", NULL), "2.302585092994045684017991454684364");
    CHECK_STR(mf(num_log, "1.05", NULL), "0.04879016416943200306537440422316466");
    CHECK_STR(mf(num_log, "1.0000000001", NULL), "9.999999999500000000033333333330833e-11");
    /* 1 + 1e-60 rounds to 1 at the first working precision; the result must not. */
    CHECK_STR(mf(num_log, "1.000000000000000000000000000000000000000000000000000000000001", NULL),
              "1e-60");
    CHECK_STR(mf(num_log, "1", &ex), "0.0");
    CHECK_INT(ex, 1);
    CHECK_STR(mf(num_log, "0", NULL), "VALUE");
    CHECK_STR(mf(num_log, "-2", NULL), "VALUE");
    CHECK_STR(mf(num_log10, "1000", &ex), "3.0");
    CHECK_INT(ex, 1);
    CHECK_STR(mf(num_log10, "0.001", &ex), "-3.0");
    CHECK_INT(ex, 1);
    CHECK_STR(mf(num_log10, "2", &ex), "0.301029995663981195213738894724493");
    CHECK_INT(ex, 0);
    CHECK_STR(mf(num_log2, "1024", NULL), "10.0");
    CHECK_STR(mf(num_log2, "10", NULL), "3.32192809488736234787031942948939");
    CHECK_STR(log_base("100", "3"), "4.191806548578769208593135044042803");
    CHECK_STR(log_base("1000", "10"), "3.0");
    CHECK_STR(log_base("8", "1"), "ZERODIV");
    CHECK_STR(log_base("8", "0"), "VALUE");
    CHECK_STR(mf(num_erf, "0.5", NULL), "0.5204998778130465376827466538919645");
    CHECK_STR(mf(num_erf, "-1.5", NULL), "-0.9661051464753107270669762616459479");
    CHECK_STR(mf(num_erfc, "0.5", NULL), "0.4795001221869534623172533461080355");
    CHECK_STR(mf(num_sin, "1", NULL), "0.841470984807896506652502321630299");
    CHECK_STR(mf(num_sin, "100", NULL), "-0.5063656411097587936565576104597854");
    CHECK_STR(mf(num_cos, "1", NULL), "0.5403023058681397174009366074429766");
    CHECK_STR(mf(num_tan, "1", NULL), "1.55740772465490223050697480745836");
    CHECK_STR(mf(num_atan, "1", NULL), "0.7853981633974483096156608458198757");
    CHECK_STR(mf(num_atan, "0.5", NULL), "0.4636476090008061162142562314612144");
    CHECK_STR(mf(num_sin, "0", &ex), "0.0");
    mpq_t q;
    mpq_init(q);
    num_pi(q, &ctx);
    CHECK_STR(frepr(q), "3.141592653589793238462643383279503");
    num_e(q, &ctx);
    CHECK_STR(frepr(q), "2.718281828459045235360287471352662");
    mpq_clear(q);
}

static const char *comb_like(cr_code (*fn)(mpz_t, const mpz_t, const mpz_t, const num_ctx *),
                             long n, long k)
{
    mpz_t a, b, r;
    mpz_init_set_si(a, n);
    mpz_init_set_si(b, k);
    mpz_init(r);
    const char *s = irepr(fn(r, a, b, &ctx), r);
    mpz_clear(a);
    mpz_clear(b);
    mpz_clear(r);
    return s;
}

static const char *fact(long n)
{
    mpz_t a, r;
    mpz_init_set_si(a, n);
    mpz_init(r);
    const char *s = irepr(num_factorial(r, a, &ctx), r);
    mpz_clear(a);
    mpz_clear(r);
    return s;
}

static void test_combinatorics(void)
{
    CHECK_STR(fact(20), "2432902008176640000");
    CHECK_STR(fact(0), "1");
    CHECK_STR(fact(-1), "VALUE");
    double t0 = now_us();
    CHECK_STR(fact(100000000), "LIMIT");
    CHECK_STR(comb_like(num_comb, 2000000000, 1000000000), "LIMIT");
    CHECK_STR(comb_like(num_perm, 2000000000, 1000000), "LIMIT");
    CHECK(now_us() - t0 < 5000);
    CHECK_STR(comb_like(num_comb, 10, 3), "120");
    CHECK_STR(comb_like(num_comb, 10, 11), "0");
    CHECK_STR(comb_like(num_comb, 10, -1), "VALUE");
    CHECK_STR(comb_like(num_comb, 60, 30), "118264581564861424");
    CHECK_STR(comb_like(num_perm, 10, 3), "720");
    CHECK_STR(comb_like(num_perm, 5, 0), "1");
    CHECK_STR(comb_like(num_perm, 3, 5), "0");
    /* n past a double still works when the result is small. */
    mpz_t n, k, r;
    mpz_init(n);
    mpz_init_set_ui(k, 1);
    mpz_init(r);
    mpz_ui_pow_ui(n, 10, 400);
    CHECK(num_comb(r, n, k, &ctx) == CR_OK && mpz_cmp(r, n) == 0);
    CHECK(num_perm(r, n, k, &ctx) == CR_OK && mpz_cmp(r, n) == 0);
    mpz_clear(n);
    mpz_clear(k);
    mpz_clear(r);
}

/* ---- format() ------------------------------------------------------------------------------ */

/* format(value, spec), or "!Type: message" when it raises. */
static const char *fmt(const char *a, int is_float, const char *spec)
{
    mpq_t x;
    mpq_init(x);
    lit(x, a);
    cr_buf b;
    cr_buf_init(&b, 0);
    cr_error err;
    memset(&err, 0, sizeof err);
    const char *s = outcome(num_format(&b, x, is_float, spec, strlen(spec), &ctx, &err), &b, &err);
    mpq_clear(x);
    return s;
}

static const char *fmt_str(const char *str, const char *spec)
{
    cr_buf b;
    cr_buf_init(&b, 0);
    cr_error err;
    memset(&err, 0, sizeof err);
    return outcome(num_format_str(&b, str, strlen(str), spec, strlen(spec), &err), &b, &err);
}

/* Expected strings: CPython 3.11's format() on the same value where the binary double does
 * not change the digits, and Python's decimal module where it does (2.675, 0.35, 0.1). */
static void test_format(void)
{
    CHECK_STR(fmt("2.675", 1, ".2f"), "2.68");
    CHECK_STR(fmt("0.125", 1, ".2f"), "0.12");
    CHECK_STR(fmt("0.375", 1, ".2f"), "0.38");
    CHECK_STR(fmt("1234567.891", 1, ",.2f"), "1,234,567.89");
    CHECK_STR(fmt("0.1234", 1, ".1%"), "12.3%");
    CHECK_STR(fmt("5", 0, ".2f"), "5.00");
    CHECK_STR(fmt("1e20", 1, "g"), "1e+20");
    CHECK_STR(fmt("123.456", 1, ""), "123.456");
    CHECK_STR(fmt("-3", 0, "+05d"), "-0003");
    CHECK_STR(fmt("3.5", 1, "d"), "!ValueError: Unknown format code 'd' for object of type 'float'");
    CHECK_STR(fmt("5", 0, "s"), "!ValueError: Unknown format code 's' for object of type 'int'");
    CHECK_STR(fmt("1234", 0, "08,"), "0,001,234");
    CHECK_STR(fmt("1234", 0, "09,"), "0,001,234");
    CHECK_STR(fmt("1234", 0, "010,"), "00,001,234");
    CHECK_STR(fmt("1234", 0, "07,"), "001,234");
    CHECK_STR(fmt("1234", 0, "05,"), "1,234");
    CHECK_STR(fmt("1234.5", 1, "010,.1f"), "0,001,234.5");
    CHECK_STR(fmt("-1234", 0, "08,"), "-001,234");
    CHECK_STR(fmt("255", 0, "#010_x"), "0x000_00ff");
    CHECK_STR(fmt("255", 0, "#011_b"), "0b1111_1111");
    CHECK_STR(fmt("1234", 0, "0=8,"), "0,001,234");
    CHECK_STR(fmt("1234", 0, "*=8,"), "***1,234");
    CHECK_STR(fmt("1234", 0, "x<08,"), "1,234xxx");
    CHECK_STR(fmt("1234", 0, "<08"), "12340000");
    CHECK_STR(fmt("1234", 0, "^08"), "00123400");
    CHECK_STR(fmt("1.5", 1, "ff"), "!ValueError: Invalid format specifier 'ff' for object of type 'float'");
    CHECK_STR(fmt("1.5", 1, "."), "!ValueError: Format specifier missing precision");
    CHECK_STR(fmt("1.5", 1, ",_"), "!ValueError: Cannot specify both ',' and '_'.");
    CHECK_STR(fmt("1.5", 1, "_,"), "!ValueError: Cannot specify both ',' and '_'.");
    CHECK_STR(fmt("5", 0, ".2d"), "!ValueError: Precision not allowed in integer format specifier");
    CHECK_STR(fmt("5", 0, "+c"), "!ValueError: Sign not allowed with integer format specifier 'c'");
    CHECK_STR(fmt("5", 0, "#c"), "!ValueError: Alternate form (#) not allowed with integer format specifier 'c'");
    CHECK_STR(fmt("5", 0, "zd"), "!ValueError: Negative zero coercion (z) not allowed in integer format specifier");
    CHECK_STR(fmt("5", 0, ",x"), "!ValueError: Cannot specify ',' with 'x'.");
    CHECK_STR(fmt("5", 0, ",n"), "!ValueError: Cannot specify ',' with 'n'.");
    CHECK_STR(fmt("1.5", 1, ",n"), "!ValueError: Cannot specify ',' with 'n'.");
    CHECK_STR(fmt("5", 0, ".2"), "!ValueError: Precision not allowed in integer format specifier");
    CHECK_STR(fmt("1e16", 1, ".20"), "10000000000000000.0");
    CHECK_STR(fmt("1234.5", 1, ".2"), "1.2e+03");
    CHECK_STR(fmt("100.0", 1, ".3"), "1e+02");
    CHECK_STR(fmt("1e5", 1, ".3"), "1e+05");
    CHECK_STR(fmt("0.0", 1, "g"), "0");
    CHECK_STR(fmt("0.0", 1, "#g"), "0.00000");
    CHECK_STR(fmt("0.0", 1, "e"), "0.000000e+00");
    CHECK_STR(fmt("-0.001", 1, ".2f"), "-0.00");
    CHECK_STR(fmt("-0.001", 1, "z.2f"), "0.00");
    CHECK_STR(fmt("5", 0, "%"), "500.000000%");
    CHECK_STR(fmt("0", 0, "%"), "0.000000%");
    CHECK_STR(fmt("1e300", 1, "e"), "1.000000e+300");
    CHECK_STR(fmt("1.5", 1, "#.0f"), "2.");
    CHECK_STR(fmt("1.5", 1, ".0f"), "2");
    CHECK_STR(fmt("2.5", 1, ".0f"), "2");
    CHECK_STR(fmt("1.5", 1, "#.0e"), "2.e+00");
    CHECK_STR(fmt("12345.678", 1, "#.3g"), "1.23e+04");
    CHECK_STR(fmt("0.5", 1, ".0%"), "50%");
    CHECK_STR(fmt("65", 0, "c"), "A");
    CHECK_STR(fmt("1114112", 0, "c"), "!OverflowError: %c arg not in range(0x110000)");
    CHECK_STR(fmt("1.5", 1, "=^10"), "===1.5====");
    CHECK_STR(fmt("1.5", 1, "e"), "1.500000e+00");
    CHECK_STR(fmt("1.5", 1, "E"), "1.500000E+00");
    CHECK_STR(fmt("1.5e-10", 1, "G"), "1.5E-10");
    CHECK_STR(fmt("1e100", 1, "g"), "1e+100");
    CHECK_STR(fmt("123456789", 0, "n"), "123456789");
    CHECK_STR(fmt("0.0001", 1, ""), "0.0001");
    CHECK_STR(fmt("1e-5", 1, "10"), "     1e-05");
    CHECK_STR(fmt("5", 0, "="), "5");
    CHECK_STR(fmt("5", 0, "=+5"), "+   5");
    CHECK_STR(fmt("-5", 0, " 5"), "   -5");
    CHECK_STR(fmt("5", 0, " "), " 5");
    CHECK_STR(fmt("12", 0, "o"), "14");
    CHECK_STR(fmt("12", 0, "#o"), "0o14");
    CHECK_STR(fmt("12", 0, "#X"), "0XC");
    CHECK_STR(fmt("-12", 0, "#x"), "-0xc");
    CHECK_STR(fmt("3", 0, "b"), "11");
    CHECK_STR(fmt("1234567", 0, "_"), "1_234_567");
    CHECK_STR(fmt("1234567.125", 1, "_"), "1_234_567.125");
    CHECK_STR(fmt("1e16", 1, ","), "1e+16");
    CHECK_STR(fmt("1.0", 1, ".3"), "1.0");
    CHECK_STR(fmt("10.0", 1, ".1"), "1e+01");
    CHECK_STR(fmt("9.99", 1, ".2"), "1e+01");
    CHECK_STR(fmt("0.1", 1, ".0"), "0.1");
    CHECK_STR(fmt("0.1", 1, "#.0"), "0.1");
    CHECK_STR(fmt("123.0", 1, "#"), "123.0");
    CHECK_STR(fmt("5", 0, "#"), "5");
    CHECK_STR(fmt("1e22", 1, "f"), "10000000000000000000000.000000");
    CHECK_STR(fmt("1.5", 1, "5%"), "150.000000%");
    CHECK_STR(fmt("5", 0, "010.2%"), "000500.00%");
    CHECK_STR(fmt("3.14159", 1, "10.3f"), "     3.142");
    CHECK_STR(fmt("3.14159", 1, "<10.3f"), "3.142     ");
    CHECK_STR(fmt("3.14159", 1, "^10.3f"), "  3.142   ");
    CHECK_STR(fmt("-3.14159", 1, "=10.3f"), "-    3.142");
    CHECK_STR(fmt("-3.14159", 1, "010.3f"), "-00003.142");
    CHECK_STR(fmt("3.14159", 1, "+.2e"), "+3.14e+00");
    CHECK_STR(fmt("0.000123456", 1, "g"), "0.000123456");
    CHECK_STR(fmt("0.0000123456", 1, "g"), "1.23456e-05");
    CHECK_STR(fmt("123456789.0", 1, "g"), "1.23457e+08");
    CHECK_STR(fmt("1234567.0", 1, ".10g"), "1234567");
    CHECK_STR(fmt("0.5", 1, ".0f"), "0");
    CHECK_STR(fmt("1.5", 1, ".0e"), "2e+00");
    CHECK_STR(fmt("2.5", 1, ".0e"), "2e+00");
    CHECK_STR(fmt("0.25", 1, ".1f"), "0.2");
    CHECK_STR(fmt("0.35", 1, ".1f"), "0.4");
    CHECK_STR(fmt("1e-7", 1, ".3f"), "0.000");
    CHECK_STR(fmt("-1e-7", 1, "z.3f"), "0.000");
    CHECK_STR(fmt("1000000", 0, ",d"), "1,000,000");
    CHECK_STR(fmt("-1000000", 0, "_d"), "-1_000_000");
    CHECK_STR(fmt("42", 0, "*^9"), "***42****");
    CHECK_STR(fmt("42", 0, "x"), "2a");
    CHECK_STR(fmt("3735928559", 0, "X"), "DEADBEEF");
    CHECK_STR(fmt("3735928559", 0, "#_x"), "0xdead_beef");
    CHECK_STR(fmt("12.5", 1, "%"), "1250.000000%");
    CHECK_STR(fmt("0.075", 1, ".1%"), "7.5%");
    CHECK_STR(fmt("1.005", 1, ".2f"), "1.00");
    CHECK_STR(fmt("7", 0, "e"), "7.000000e+00");
    CHECK_STR(fmt("7", 0, "g"), "7");
    CHECK_STR(fmt("7", 0, ".3g"), "7");
    CHECK_STR(fmt("1e6", 1, "n"), "1e+06");
    CHECK_STR(fmt("123456.789", 1, "n"), "123457");
    CHECK_STR(fmt("1.25", 1, ".1f"), "1.2");
    CHECK_STR(fmt("100", 0, ">6"), "   100");
    CHECK_STR(fmt("100", 0, "<6|"), "!ValueError: Unknown format code '|' for object of type 'int'");
    CHECK_STR(fmt("5", 0, "é^7"), "ééé5ééé");
    CHECK_STR(fmt("1.5", 1, "é<8"), "1.5ééééé");
    CHECK_STR(fmt("-0.5", 1, "+.0f"), "-0");
    CHECK_STR(fmt("0.5", 1, " .0f"), " 0");
    CHECK_STR(fmt("1e15", 1, ""), "1000000000000000.0");
    CHECK_STR(fmt("1.5e16", 1, ""), "1.5e+16");
    CHECK_STR(fmt("123456789012.5", 1, ",.1f"), "123,456,789,012.5");
    CHECK_STR(fmt("1e-310", 1, ""), "1e-310");
    CHECK_STR(fmt("0.1", 1, ".30f"), "0.100000000000000000000000000000");
    CHECK_STR(fmt("1.23456789e-8", 1, ".3e"), "1.235e-08");
    CHECK_STR(fmt("99.99", 1, ".1f"), "100.0");
    CHECK_STR(fmt("99.95", 1, ".1f"), "100.0");
    CHECK_STR(fmt("0.045", 1, ".1%"), "4.5%");
    CHECK_STR(fmt("100", 0, "#b"), "0b1100100");
    CHECK_STR(fmt("-255", 0, "#06x"), "-0x0ff");
    CHECK_STR(fmt("255", 0, "+#x"), "+0xff");

}

static void test_format_more(void)
{
    CHECK_STR(fmt("100000000000000000000", 0, "c"),
              "!OverflowError: Python int too large to convert to C long");
    CHECK_STR(fmt("-1", 0, "c"), "!OverflowError: %c arg not in range(0x110000)");
    CHECK_STR(fmt("8364", 0, "^5c"), "  \xe2\x82\xac  ");
    CHECK_STR(fmt_str("abc", ".1"), "a");
    CHECK_STR(fmt_str("abc", "^7.2"), "  ab   ");
    CHECK_STR(fmt_str("abc", "s"), "abc");
    CHECK_STR(fmt_str("abc", ">10s"), "       abc");
    CHECK_STR(fmt_str("h\xc3\xa9llo", "*<7.2"), "h\xc3\xa9*****");
    CHECK_STR(fmt_str("abc", "d"), "!ValueError: Unknown format code 'd' for object of type 'str'");
    CHECK_STR(fmt_str("ab", "=5"), "!ValueError: '=' alignment not allowed in string format specifier");
    CHECK_STR(fmt_str("ab", "+5"), "!ValueError: Sign not allowed in string format specifier");
    CHECK_STR(fmt_str("ab", " 5"), "!ValueError: Space not allowed in string format specifier");
    CHECK_STR(fmt_str("ab", "=+,"), "!ValueError: Cannot specify ',' with 's'.");
    CHECK_STR(fmt_str("ab", "#5"), "!ValueError: Alternate form (#) not allowed in string format specifier");
    CHECK_STR(fmt_str("ab", ",5"), "!ValueError: Cannot specify ',' with '5'.");
    CHECK_STR(fmt_str("ab", ","), "!ValueError: Cannot specify ',' with 's'.");
    CHECK_STR(fmt("1.5", 1, "10000000000"), "!LimitError: format width or precision above 1000000");
    CHECK_STR(fmt("1.5", 1, ".10000000000f"), "!LimitError: format width or precision above 1000000");
    /* Exact values keep their digits past a double's 17. */
    CHECK_STR(fmt("0.1", 1, ".25f"), "0.1000000000000000000000000");
    CHECK_STR(fmt("123456789012345678901234567890", 0, ","),
              "123,456,789,012,345,678,901,234,567,890");
    CHECK_STR(fmt("123456789012345678.5", 1, ",.1f"), "123,456,789,012,345,678.5");
    ctx.rounding = CR_ROUND_HALF_UP;
    CHECK_STR(fmt("0.125", 1, ".2f"), "0.13");
    CHECK_STR(fmt("2.5", 1, ".0f"), "3");
    CHECK_STR(fmt("-2.5", 1, ".0e"), "-3e+00");
    ctx.rounding = CR_ROUND_HALF_EVEN;
    mpq_t third;
    mpq_init(third);
    mpq_set_ui(third, 1, 3);
    cr_buf b;
    cr_buf_init(&b, 0);
    CHECK(num_format(&b, third, 1, "", 0, &ctx, NULL) == CR_OK);
    CHECK_STR(b.p, "0.3333333333333333333333333333333333");
    cr_buf_reset(&b);
    CHECK(num_format(&b, third, 1, ".3", 2, &ctx, NULL) == CR_OK);
    CHECK_STR(b.p, "0.333");
    cr_buf_free(&b);
    mpq_clear(third);
}

int main(void)
{
    cr_policy pol;
    cr_policy_default(&pol);
    num_ctx_from_policy(&ctx, &pol);
    CHECK_INT(ctx.prec, 34);
    CHECK_INT(ctx.work, 34 + NUM_GUARD);
    CHECK_INT(ctx.float_bits, NUM_FLOAT_BITS);
    test_literals();
    test_parse_strings();
    test_floordiv_mod();
    test_decided();
    test_round();
    test_pow();
    test_bound_float();
    test_repr();
    test_math();
    test_combinatorics();
    test_format();
    test_format_more();
    return TEST_SUMMARY();
}
