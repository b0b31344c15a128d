/* tests/test_math_cases.c: every math function the subset offers against CPython's own test
 * data (Lib/test/math_testcases.txt, and the real cases of cmath_testcases.txt as CPython's
 * test_math.test_testfile reads them: imaginary parts zero), from Debian's
 * libpython3.11-testsuite. CPython's test allows some ulps; ours must be the correctly
 * rounded double itself: MPFR evaluates each function at the input double, rounded once to
 * binary64 (subnormals included), and our in-process value (42 digits), rounded to a double,
 * must be that double bit for bit (-0.0 included), or raise the error the case's flags name
 * (invalid, divide-by-zero: ValueError; overflow: OverflowError). Where /usr/bin/python3 is
 * there, CPython's own results are compared too, and the cases where CPython's libm misses
 * the correctly rounded double are named: there we are right and CPython is not. */
#include <math.h>
#include <mpfr.h>
#include <stdlib.h>
#include <unistd.h>

#include "evaluator/evaluator.h"
#include "evaluator/num/num.h"
#include "parser/parser.h"
#include "tests/testlib.h"

#define DIR_DEFAULT "/usr/lib/python3.11/test"
#define MAXCASES 4096

typedef struct {
    char id[32], fn[16];
    double arg;
    char want[16];      /* "" for a value, else "ValueError" or "OverflowError" */
    double ref;         /* the correctly rounded result */
    char cpy[64];       /* CPython's result: float.hex() or the exception's name */
} mcase;

static mcase cases[MAXCASES];
static size_t ncases;

typedef int (*mpfr_fn)(mpfr_ptr, mpfr_srcptr, mpfr_rnd_t);
static int lgamma_fn(mpfr_ptr y, mpfr_srcptr x, mpfr_rnd_t r) { int s; return mpfr_lgamma(y, &s, x, r); }
static int log_fn(mpfr_ptr y, mpfr_srcptr x, mpfr_rnd_t r) { return mpfr_log(y, x, r); }

static const struct { const char *name; mpfr_fn f; } fns[] = {
    { "erf", mpfr_erf }, { "erfc", mpfr_erfc }, { "expm1", mpfr_expm1 }, { "gamma", mpfr_gamma },
    { "lgamma", lgamma_fn }, { "log1p", mpfr_log1p }, { "log2", mpfr_log2 },
    { "acos", mpfr_acos }, { "acosh", mpfr_acosh }, { "asin", mpfr_asin }, { "asinh", mpfr_asinh },
    { "atan", mpfr_atan }, { "atanh", mpfr_atanh }, { "cos", mpfr_cos }, { "cosh", mpfr_cosh },
    { "exp", mpfr_exp }, { "log", log_fn }, { "log10", mpfr_log10 }, { "sin", mpfr_sin },
    { "sinh", mpfr_sinh }, { "sqrt", mpfr_sqrt }, { "tan", mpfr_tan }, { "tanh", mpfr_tanh },
};

static mpfr_fn fn_of(const char *name)
{
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++)
        if (strcmp(fns[i].name, name) == 0) return fns[i].f;
    return NULL;
}

/* f(x) correctly rounded to a double: MPFR's f is correctly rounded at any precision, so f at
 * 1100 bits is within 2^-1000 relative of f(x), and num_get_double rounds it as binary64
 * does (no double rounding unless f(x) lies within 2^-1000 of a midpoint). */
static double reference(mpfr_fn f, double x)
{
    mpfr_t a, y;
    mpfr_init2(a, 53);
    mpfr_init2(y, 1100);
    mpfr_set_d(a, x, MPFR_RNDN);
    f(y, a, MPFR_RNDN);
    double d;
    if (!mpfr_number_p(y) || mpfr_zero_p(y)) {
        d = mpfr_get_d(y, MPFR_RNDN);
    } else {
        mpq_t q;
        mpq_init(q);
        mpfr_get_q(q, y);
        d = num_get_double(q);
        mpq_clear(q);
    }
    mpfr_clear(y);
    mpfr_clear(a);
    return d;
}

/* A rational "p/q" rounded to the nearest double as binary64 rounds. */
static double double_of(const char *frac)
{
    mpq_t q;
    mpq_init(q);
    mpq_set_str(q, frac, 10);
    mpq_canonicalize(q);
    double d = num_get_double(q);
    mpq_clear(q);
    return d;
}

static int same_double(double a, double b)
{
    if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
    return a == b && signbit(a) == signbit(b);
}

/* One case's line; 0 when it is no case of a function we offer. `complex`: cmath's layout
 * (id fn ar ai -> er ei flags), kept only when both imaginary parts are zero. */
static int parse_line(char *line, int complex, mcase *c)
{
    char *tok[16];
    int n = 0;
    for (char *p = strtok(line, " \t\n"); p && n < 16; p = strtok(NULL, " \t\n")) tok[n++] = p;
    if (n < 4 || strncmp(tok[0], "--", 2) == 0) return 0;
    int arrow = complex ? 4 : 3;
    if (n < arrow + (complex ? 3 : 2) || strcmp(tok[arrow], "->") != 0) return 0;
    if (complex && (strtod(tok[3], NULL) != 0 || strtod(tok[6], NULL) != 0)) return 0;
    if (!fn_of(tok[1]) || strlen(tok[0]) >= sizeof c->id) return 0;
    memset(c, 0, sizeof *c);
    snprintf(c->id, sizeof c->id, "%s", tok[0]);
    snprintf(c->fn, sizeof c->fn, "%s", tok[1]);
    c->arg = strtod(tok[2], NULL);
    for (int i = arrow + (complex ? 3 : 2); i < n; i++) {
        if (strcmp(tok[i], "invalid") == 0 || strcmp(tok[i], "divide-by-zero") == 0)
            strcpy(c->want, "ValueError");
        else if (strcmp(tok[i], "overflow") == 0 && !c->want[0])
            strcpy(c->want, "OverflowError");
    }
    c->ref = reference(fn_of(c->fn), c->arg);
    return 1;
}

static int read_file(const char *path, int complex)
{
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    char line[512];
    while (fgets(line, sizeof line, f) && ncases < MAXCASES)
        if (parse_line(line, complex, &cases[ncases])) ncases++;
    fclose(f);
    return 0;
}

/* The argument as an exact expression of the program: the double's rational value. */
static void arg_text(char *out, size_t n, double x)
{
    if (isnan(x)) { snprintf(out, n, "float('nan')"); return; }
    if (isinf(x)) { snprintf(out, n, "float('%sinf')", x < 0 ? "-" : ""); return; }
    if (x == 0) { snprintf(out, n, "%s0.0", signbit(x) ? "-" : ""); return; }
    int e;
    double m = frexp(fabs(x), &e);
    long long mi = (long long)ldexp(m, 53);
    e -= 53;
    if (e >= 0) snprintf(out, n, "%s(%lld * 2 ** %d * 1.0)", x < 0 ? "-" : "", mi, e);
    else snprintf(out, n, "%s(%lld / 2 ** %d)", x < 0 ? "-" : "", mi, -e);
}

/* Our result for c: *got the double, or the exception's type in err. */
static int ours(const mcase *c, double *got, char *err, size_t errn)
{
    char src[256], a[96];
    arg_text(a, sizeof a, c->arg);
    snprintf(src, sizeof src, "import math\nx = math.%s(%s)\n", c->fn, a);
    cr_policy pol;
    cr_policy_default(&pol);
    ir_module *m = NULL;
    cr_error e = { 0 };
    eval_result r;
    memset(&r, 0, sizeof r);
    err[0] = 0;
    if (parser_parse_python(src, strlen(src), &pol.limits, &m, &e) != CR_OK) return -1;
    if (m->nreasons) {
        fprintf(stderr, "not in-process: %s\n  in: %s", m->reasons[0].code, src);
        ir_module_free(m);
        return -1;
    }
    cr_code rc = eval_run(m, NULL, 0, &pol, &r, &e);
    ir_module_free(m);
    if (rc != CR_OK) return -1;
    int ok = 0;
    if (r.status != CR_OK) snprintf(err, errn, "%s", r.error.type);
    else if (r.value_repr && strcmp(r.value_repr, "nan") == 0) *got = NAN;
    else if (r.value_repr && strcmp(r.value_repr, "inf") == 0) *got = INFINITY;
    else if (r.value_repr && strcmp(r.value_repr, "-inf") == 0) *got = -INFINITY;
    else if (r.value_repr && strcmp(r.value_repr, "-0.0") == 0) *got = -0.0;
    else if (r.value_fraction) *got = double_of(r.value_fraction);
    else ok = -1;
    eval_result_free(&r);
    return ok;
}

/* CPython's results for every case, one line each, through /usr/bin/python3. 0: read. */
static int cpython_results(void)
{
    char tmpl[] = "/tmp/cr-mathcases-XXXXXX";
    int fd = mkstemp(tmpl);
    if (fd < 0) return -1;
    FILE *f = fdopen(fd, "w");
    fprintf(f, "import math, sys\n");
    fprintf(f, "def run(fn, x):\n    try:\n        return getattr(math, fn)(x).hex()\n"
               "    except Exception as e:\n        return type(e).__name__\n");
    for (size_t i = 0; i < ncases; i++)
        fprintf(f, "print(run('%s', float.fromhex('%a')))\n", cases[i].fn, cases[i].arg);
    fclose(f);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 %s", tmpl);
    FILE *p = popen(cmd, "r");
    size_t i = 0;
    char line[128];
    while (p && i < ncases && fgets(line, sizeof line, p)) {
        line[strcspn(line, "\n")] = 0;
        line[sizeof cases[0].cpy - 1] = 0;
        memcpy(cases[i++].cpy, line, sizeof cases[0].cpy);
    }
    int rc = p && pclose(p) == 0 && i == ncases ? 0 : -1;
    unlink(tmpl);
    return rc;
}

int main(void)
{
    const char *dir = getenv("CR_MATH_TESTCASES");
    char path[512];
    if (!dir) dir = DIR_DEFAULT;
    snprintf(path, sizeof path, "%s/math_testcases.txt", dir);
    if (read_file(path, 0) < 0) {
        SKIP("no %s (Debian's libpython3.11-testsuite; scripts/install-deps.sh installs it, "
             "or set CR_MATH_TESTCASES)", path);
        return TEST_SUMMARY();
    }
    size_t nmath = ncases;
    snprintf(path, sizeof path, "%s/cmath_testcases.txt", dir);
    if (read_file(path, 1) < 0) SKIP("no %s: its real cases are not run", path);
    int have_py = access("/usr/bin/python3", X_OK) == 0 && cpython_results() == 0;
    if (!have_py) SKIP("no /usr/bin/python3: CPython's own results are not compared");
    size_t agree = 0, cpy_agree = 0;
    for (size_t i = 0; i < ncases; i++) {
        mcase *c = &cases[i];
        double got = 0;
        char err[64];
        int ok;
        if (ours(c, &got, err, sizeof err) < 0) {
            ok = 0;
            fprintf(stderr, "%s: math.%s(%a) did not run in-process\n", c->id, c->fn, c->arg);
        } else if (c->want[0]) {
            ok = strcmp(err, c->want) == 0;
            if (!ok)
                fprintf(stderr, "%s: math.%s(%a): got %s%a, want %s\n", c->id, c->fn, c->arg,
                        err, err[0] ? 0.0 : got, c->want);
        } else {
            ok = !err[0] && same_double(got, c->ref);
            if (!ok)
                fprintf(stderr, "%s: math.%s(%a): got %s %a, want %a\n", c->id, c->fn, c->arg,
                        err, got, c->ref);
        }
        agree += ok;
        if (ok) t_pass++;
        else t_fail++;
        if (!have_py) continue;
        int cok = c->want[0] ? strcmp(c->cpy, c->want) == 0
                             : same_double(strtod(c->cpy, NULL), c->ref) &&
                               strstr(c->cpy, "Error") == NULL;
        if (c->cpy[0] && !c->want[0] && strcmp(c->cpy, "nan") == 0) cok = isnan(c->ref);
        cpy_agree += cok;
        if (!cok)
            printf("CPython not correctly rounded: %s math.%s(%a) = %s, correctly rounded %a\n",
                   c->id, c->fn, c->arg, c->cpy, c->ref);
    }
    printf("math cases: %zu run (%zu of math_testcases.txt, %zu real cases of "
           "cmath_testcases.txt); %zu agree with the correctly rounded double",
           ncases, nmath, ncases - nmath, agree);
    if (have_py) printf("; CPython %zu", cpy_agree);
    printf("\n");
    return TEST_SUMMARY();
}
