/* tests/test_mod_numpy.c: numpy_financial and numpy's scalar functions in-process (exact
 * stdout through the public API), the whitelist's argument shapes for them (what stays a
 * reason), and numpy_financial in the ns tier, where the runner serves our pure-Python module:
 * the same program prints the same there. Expected outputs are CPython 3.11's with
 * numpy-financial 1.0 and Debian 12's numpy 1.24, except where a comment says the exact value
 * is expected instead. */
#include <stdint.h>

#include "calcroute.h"
#include "tests/testlib.h"
#include "tests/test_sandbox_util.h"

static cr_engine *engine;

/* Runs code in-process (no sandbox); the result is the caller's, NULL when cr_run failed. */
static cr_result *run_code(const char *code)
{
    cr_request *req = cr_request_new();
    cr_result *res = NULL;
    cr_error err = { 0 };
    if (req && cr_request_set_code(req, code, strlen(code)) == CR_OK &&
        cr_run(engine, req, &res, &err) != CR_OK)
        fprintf(stderr, "cr_run: %s\n", err.message);
    cr_request_free(req);
    return res;
}

/* code runs in-process without raising and prints exactly want. */
static void check_prints(const char *code, const char *want, int line)
{
    cr_result *res = run_code(code);
    if (!res) { CHECK(!"cr_run failed"); return; }
    int in = cr_result_route(res) == CR_ROUTE_INPROCESS, ok = cr_result_status(res) == CR_OK;
    const char *out = cr_result_stdout(res, NULL);
    if (!in || !ok || strcmp(out, want) != 0) {
        const cr_error *e = cr_result_error(res);
        fprintf(stderr, "line %d: route %s, status %s%s%s, stdout [%s]\n  want [%s]\n", line,
                cr_route_name(cr_result_route(res)), ok ? "ok" : e->type, ok ? "" : ": ",
                ok ? "" : e->message, out, want);
    }
    CHECK(in && ok && strcmp(out, want) == 0);
    cr_result_free(res);
}
#define PRINTS(code, want) check_prints(code, want, __LINE__)

/* code raises type: message in-process. */
static void check_raises(const char *code, const char *type, const char *message, int line)
{
    cr_result *res = run_code(code);
    if (!res) { CHECK(!"cr_run failed"); return; }
    const cr_error *e = cr_result_error(res);
    int ok = cr_result_route(res) == CR_ROUTE_INPROCESS && e && strcmp(e->type, type) == 0 &&
             strcmp(e->message, message) == 0;
    if (!ok)
        fprintf(stderr, "line %d: got %s: %s, want %s: %s\n", line, e ? e->type : "no error",
                e ? e->message : "", type, message);
    CHECK(ok);
    cr_result_free(res);
}
#define RAISES(code, type, message) check_raises(code, type, message, __LINE__)

/* code is outside the subset, with `reason` among its reasons. */
static void check_reason(const char *code, const char *reason, int line)
{
    cr_result *res = run_code(code);
    if (!res) { CHECK(!"cr_run failed"); return; }
    int found = 0;
    for (size_t i = 0; i < cr_result_reason_count(res); i++)
        found |= strcmp(cr_result_reason(res, i, NULL, NULL, NULL), reason) == 0;
    if (!found)
        fprintf(stderr, "line %d: route %s, no reason %s\n", line,
                cr_route_name(cr_result_route(res)), reason);
    CHECK(cr_result_route(res) == CR_ROUTE_REJECTED && found);
    cr_result_free(res);
}
#define REASON(code, reason) check_reason(code, reason, __LINE__)

#define NPF "import numpy_financial as npf\n"
#define NP "import numpy as np\n"

/* The annuity functions (rounded to 8 places so that CPython's binary noise does not show). */
static void test_annuities(void)
{
    PRINTS(NPF "print(round(npf.pmt(0.075/12, 12*15, 200000), 8), npf.pmt(0, 10, 1000), "
               "round(npf.pmt(0.05/12, 360, -200000, when='begin'), 8))",
           "-1854.02472001 -100.0 1069.1882948\n");
    /* fv keeps an int rate's dtype: 1000, not 1000.0 */
    PRINTS(NPF "print(round(npf.fv(0.05/12, 10*12, -100, -100), 8), npf.fv(0, 10, -100, 0), "
               "round(npf.fv(0.1, 5, -100, 0, 1), 8))",
           "15692.92889434 1000 671.561\n");
    PRINTS(NPF "print(round(npf.pv(0.05/12, 10*12, -100, 15692.93), 8), "
               "round(npf.pv(0.08, 20, 1000, 0, 'begin'), 8))",
           "-100.00067132 -10603.59920005\n");
    PRINTS(NPF "print(round(npf.nper(0.07/12, -150, 8000), 8), npf.nper(0, -100, 1000))",
           "64.07334877 10.0\n");
    PRINTS(NPF "print(round(npf.ipmt(0.0824/12, 3, 12, 2500), 8), npf.ipmt(0.1, 0, 10, 100), "
               "npf.ipmt(0.1, 1, 10, 100, 0, 'begin'), round(npf.ipmt(0.1, 2, 10, 100, 0, 1), 8))",
           "-14.40255059 nan 0.0 -8.52049641\n");
    PRINTS(NPF "print(round(npf.ppmt(0.0824/12, 3, 12, 2500), 8))", "-203.34603977\n");
    /* keywords, and the exact value where CPython's double is off: 100 * 1.05**2 is
     * 110.25000000000001 there */
    PRINTS(NPF "print(npf.fv(rate=0.05, nper=2, pmt=0, pv=-100))", "110.25\n");
    /* numpy's IEEE outcomes: a division by zero is inf, a negative log nan */
    PRINTS(NPF "print(npf.pmt(0.05, 0, 100), npf.nper(0, 0, 100), round(npf.nper(0.1, 100, 1000), 8), "
               "npf.nper(0.1, -100, 1000))",
           "-inf -inf -7.2725409 nan\n");
    RAISES(NPF "npf.ipmt(0, 1, 10, 1000)", "ValueError", "cannot convert float NaN to integer");
    RAISES(NPF "npf.pmt(0.1, 10, 100, when='middle')", "KeyError", "'m'");
    RAISES(NPF "npf.pmt(0.1, 10)", "TypeError", "pmt() missing 1 required positional argument: 'pv'");
    RAISES(NPF "npf.fv(0.1, 10)", "TypeError", "fv() missing 2 required positional arguments: 'pmt' and 'pv'");
}

static void test_series(void)
{
    PRINTS(NPF "print(round(npf.npv(0.08, [-40000, 5000, 8000, 12000, 30000]), 8), npf.npv(0.1, []))",
           "3065.22266818 0.0\n");
    /* npv's values[0] is at t = 0. Exact: CPython's doubles give -1.4210854715202004e-14 */
    PRINTS(NPF "print(npf.npv(0.1, (-100, 110)), round(npf.npv(0.5, (0, 1, 2)), 8))", "0.0 1.55555556\n");
    PRINTS(NPF "print(round(npf.irr([-100, 39, 59, 55, 20]), 8), npf.irr([100, 20]), "
               "npf.irr([-100, 50, 50]), round(npf.irr([-100, 100, 0, -7]), 8), "
               "round(npf.irr([-5, 10.5, 1, -8, 1]), 8))",
           "0.28094842 nan 0.0 -0.08329967 0.08859834\n");
    /* several positive roots: the one closest to 0 (Sturm isolation) */
    PRINTS(NPF "print(round(npf.irr([-1, 6, -11, 6]), 8), round(npf.irr([1, -6, 11, -6]), 8))",
           "0.0 0.0\n");
    PRINTS(NPF "print(round(npf.irr([-100, 230, -132]), 8))", "0.1\n");
    PRINTS(NPF "print(round(npf.mirr([-100, 50, 60, 70], 0.1, 0.12), 8), npf.mirr([100, 50], 0.1, 0.1))",
           "0.25975304 nan\n");
    RAISES(NPF "npf.irr([0, 0])", "IndexError", "index 0 is out of bounds for axis 0 with size 0");
    PRINTS("from numpy_financial import npv, irr\ncf = [-1000, 300, 400, 500]\n"
           "print(round(npv(0.05, cf), 8), round(irr(cf), 8))",
           "80.44487636 0.08896339\n");
}

static void test_rate(void)
{
    PRINTS(NPF "print(round(npf.rate(10, 0, -100, 200), 8), npf.rate(10, 100, 100, 100))",
           "0.07177346 nan\n");
    PRINTS(NPF "print(round(npf.rate(12, -100, 1000, 0, guess=0.05, tol=1e-8, maxiter=50), 8))",
           "0.02922854\n");
    /* The root, where numpy-financial's Newton iteration stops at 0.012315107639 (its last
     * step was under tol = 1e-6): g(0.012315107474) is 0 to 30 digits. */
    PRINTS(NPF "print(round(npf.rate(360, -460.49, 37390.99, 0, 'begin'), 12))", "0.012315107474\n");
}

static void test_numpy_scalars(void)
{
    PRINTS(NP "print(np.exp(1), np.log(10), np.log10(1000), np.sqrt(2), np.sqrt(16))",
           /* exp/log/sqrt correctly rounded to the precision, as math's */
           "2.718281828459045235360287471352662 2.302585092994045684017991454684364 3.0 "
           "1.414213562373095048801688724209698 4.0\n");
    PRINTS(NP "print(np.log(0), np.log(-1), np.sqrt(-1), np.exp(1000), np.exp(-np.inf))",
           "-inf nan nan inf 0.0\n");
    PRINTS(NP "print(np.abs(-3), np.abs(-2.5), np.absolute(True), np.floor(3), np.ceil(-2.5))",
           "3 2.5 True 3.0 -2.0\n");
    /* numpy's round: x * 10**d, rint, / 10**d in doubles */
    PRINTS(NP "print(np.round(2.675, 2), np.around(1.005, 2), np.round(0.125, 2), np.round(2.5), "
              "np.round(1234.5678, -2), np.round(1250, -2), np.round(1350, -2), np.round(7, 1), "
              "np.round(3.14159, decimals=3))",
           "2.68 1.0 0.12 2.0 1200.0 1200 1400 7 3.142\n");
    PRINTS(NP "print(np.power(2, 10), np.power(2.0, -1), np.power(-8, 1/3))", "1024 0.5 nan\n");
    RAISES(NP "np.power(2, -1)", "ValueError", "Integers to negative integer powers are not allowed.");
    PRINTS(NP "print(round(np.pi, 10), round(np.e, 10))",
           "3.1415926536 2.7182818285\n");
}

static void test_numpy_reductions(void)
{
    PRINTS(NP "print(np.sum([1, 2, 3]), np.sum([0.5, 2]), np.sum([]), np.prod([1.5, 2, 4]), np.prod([]))",
           "6 2.5 0.0 12.0 1.0\n");
    PRINTS(NP "print(np.mean([1, 2]), np.max([3, 7, 2]), np.max([1, 2.5]), np.min((4.5, 1, 9)))",
           "1.5 7 2.5 1.0\n");
    PRINTS(NP "print(np.median([3, 1, 2]), np.median([1, 2, 3, 4]), np.var([1, 2, 3, 4]), "
              "np.std([1, 2, 3, 4], ddof=1) ** 2)",
           "2.0 2.5 1.25 1.666666666666666666666666666666667\n");
    PRINTS(NP "print(np.mean([]), np.var([5], ddof=1), np.max([1, np.nan]))", "nan nan nan\n");
    RAISES(NP "np.max([])", "ValueError", "zero-size array to reduction operation maximum which has no identity");
    /* exact sums where CPython's doubles show noise (0.30000000000000004) */
    PRINTS(NP "print(np.sum([0.1, 0.2]), np.mean([0.1, 0.2, 0.3]))", "0.3 0.2\n");
}

/* What the parse cannot show to be a scalar or a list literal stays a reason. */
static void test_shapes(void)
{
    REASON(NP "x = [1, 2]\nprint(np.mean(x))", "call:numpy.mean");
    REASON(NP "print(np.sqrt(np.array([1.0])))", "call:numpy.sqrt");
    REASON(NP "print(np.mean([1, 2], axis=0))", "call:numpy.mean");
    REASON(NP "print(np.sum([[1, 2], [3, 4]]))", "call:numpy.sum");
    REASON(NP "x = [4]\nprint(np.sqrt(x[0]))", "call:numpy.sqrt");
    REASON(NP "x = 4\nif x:\n    x = [x, 9]\nprint(np.sqrt(x))", "call:numpy.sqrt");
    REASON(NPF "rates = (0.05, 0.06)\nprint(npf.pmt(rates, 10, 100))", "call:numpy_financial.pmt");
    REASON(NP "print(np.sqrt(*[4]))", "call:numpy.sqrt");
    REASON("from numpy import mean as m\nprint(m([[1], [2]]))", "call:numpy.mean");
    REASON(NP "print(np.cumsum([1, 2]))", "call:numpy.cumsum");
    REASON(NPF "cf = [-100, 60]\nprint(npf.npv(0.1, cf * 2 + [1]))", "call:numpy_financial.npv");
    REASON(NPF "print(npf.pmt([0.1, 0.2], 10, 100))", "call:numpy_financial.pmt");
    REASON(NPF "print(npf.npv(0.1, range(3)))", "call:numpy_financial.npv");
    /* names, arithmetic and calls returning numbers are scalars */
    PRINTS(NP "import math\nr, t = 0.05, 2\nprint(round(np.exp(-r * t) * 100, 6), "
              "np.round(np.log(1 + r), 4), np.sqrt(float(t) ** 2), np.sum([r, 2 * r, math.sqrt(4)]))",
           "90.483742 0.0488 2.0 2.15\n");
    PRINTS("from numpy import mean\nprint(mean([1, 2, 3]))", "2.0\n");
}

/* The ns tier runs the same program with the runner's numpy_financial and prints the same. */
static void test_sandbox_tier(void)
{
    static const char body[] =
        "print(round(npf.pmt(0.075/12, 180, 200000), 8), round(npf.fv(0.05/12, 120, -100, -100), 8))\n"
        "print(npf.fv(0, 10, -100, 0), round(float(npf.nper(0.07/12, -150, 8000)), 8))\n"
        "print(round(npf.ipmt(0.1, 2, 10, 100, 0, 'begin'), 8), round(npf.ppmt(0.0824/12, 3, 12, 2500), 8))\n"
        "print(round(npf.npv(0.08, [-40000, 5000, 8000, 12000, 30000]), 8), npf.irr([100, 20]))\n"
        "print(round(npf.irr([-100, 39, 59, 55, 20]), 8), round(npf.irr([-1, 6, -11, 6]), 8))\n"
        "print(round(npf.mirr([-100, 50, 60, 70], 0.1, 0.12), 8), npf.rate(10, 100, 100, 100))\n"
        "print(round(npf.rate(360, -460.49, 37390.99, 0, 'begin'), 12), npf.pmt(0.05, 0, 100))\n";
    static const char want[] =
        "-1854.02472001 15692.92889434\n"
        "1000 64.07334877\n"
        "-8.52049641 -203.34603977\n"
        "3065.22266818 nan\n"
        "0.28094842 0.0\n"
        "0.25975304 nan\n"
        "0.012315107474 -inf\n";
    char prog[2048];
    snprintf(prog, sizeof prog, "%s%s", NPF, body);
    PRINTS(prog, want);
    if (!sandbox_tier_available(CR_TIER_NS, ns_why, sizeof ns_why)) {
        SKIP("ns tier unavailable on this host: %s", ns_why);
        return;
    }
    /* hex() is outside the subset: the whole program goes to the sandbox */
    snprintf(prog, sizeof prog, "%sh = hex(1)\n%s", NPF, body);
    CHECK_PRINTS(prog, want);
    /* an installed numpy_financial would win: ours is served only when the import finds none */
    CHECK_PRINTS("import numpy_financial, sys\nprint(numpy_financial.__spec__.origin)\n", "<calcroute>\n");
    /* a program that never names the module does not carry it */
    CHECK_PRINTS("import importlib.util as u\nprint(u.find_spec('numpy_' + 'financial'))\n", "None\n");
}

int main(void)
{
    cr_error err = { 0 };
    if (!(engine = t_engine(&err, "tier", "none", NULL))) {
        fprintf(stderr, "cr_engine_open: %s\n", err.message);
        return 1;
    }
    test_annuities();
    test_series();
    test_rate();
    test_numpy_scalars();
    test_numpy_reductions();
    test_shapes();
    test_sandbox_tier();
    cr_engine_close(engine);
    return TEST_SUMMARY();
}
