/* tests/test_mod_stats.c: the statistics module, statistics.NormalDist and scipy.stats.norm
 * in-process. Each program's expected stdout is what CPython 3.11 prints for it; scipy is not
 * installed where the expectations were made, so a scipy program's expected output is what
 * CPython prints for the same program written with statistics.NormalDist (the same values
 * to double precision). Values that do not terminate are printed rounded (round(x, 12),
 * f"{x:.10f}"): unrounded, the in-process result shows the policy's 34 digits, by design. */
#include <stdlib.h>

#include "evaluator/evaluator.h"
#include "parser/parser.h"
#include "tests/testlib.h"

/* Runs src in-process (a program outside the subset fails the test) into *r. */
static int exec_src(const char *src, const cr_policy *pol, eval_result *r)
{
    cr_policy def;
    cr_policy_default(&def);
    if (!pol) pol = &def;
    ir_module *m = NULL;
    cr_error err = { 0 };
    memset(r, 0, sizeof *r);
    if (parser_parse_python(src, strlen(src), &pol->limits, &m, &err) != CR_OK) {
        fprintf(stderr, "parse failed: %s\n  in: %s\n", err.message, src);
        return -1;
    }
    if (m->nreasons) {
        fprintf(stderr, "not in-process: %s\n  in: %s\n", m->reasons[0].code, src);
        ir_module_free(m);
        return -1;
    }
    cr_code rc = eval_run(m, NULL, 0, pol, r, &err);
    ir_module_free(m);
    if (rc != CR_OK) {
        fprintf(stderr, "eval_run failed: %s\n  in: %s\n", err.message, src);
        eval_result_free(r);
        return -1;
    }
    return 0;
}

static int prints(const char *src, const char *want)
{
    eval_result r;
    if (exec_src(src, NULL, &r) < 0) return 0;
    int ok = r.status == CR_OK && strcmp(r.stdout_text, want) == 0;
    if (!ok)
        fprintf(stderr, "got [%s] %s: %s\nwant [%s]\n  in: %s\n", r.stdout_text, r.error.type,
                r.error.message, want, src);
    eval_result_free(&r);
    return ok;
}

static int raises(const char *src, const char *type, const char *msg, int line)
{
    eval_result r;
    if (exec_src(src, NULL, &r) < 0) return 0;
    int ok = r.status != CR_OK && strcmp(r.error.type, type) == 0 &&
             strcmp(r.error.message, msg) == 0 && r.error.line == line;
    if (!ok)
        fprintf(stderr, "got %s: %s (line %d)\nwant %s: %s (line %d)\n  in: %s\n", r.error.type,
                r.error.message, r.error.line, type, msg, line, src);
    eval_result_free(&r);
    return ok;
}

static void test_cpython_outputs(void)
{
    static const struct { const char *src, *out; } t[] = {
    { "import statistics as st\nprint(st.mean([1, 2, 3]), st.mean([1.5, 2]), st.mean([True, False]), st.mean(range(101)))",
      "2 1.75 0.5 50\n" },
    { "import statistics as st\nprint(round(st.mean(x * 0.5 for x in [1, 2, 4]), 12), st.mean([0.1, 0.2, 0.3]), round(st.fmean([1, 2, 4]), 12))",
      "1.166666666667 0.2 2.333333333333\n" },
    { "import statistics as st\nprint(st.fmean([1, 2], weights=[1, 3]), st.fmean((x for x in [3, 4])), st.fmean([0.25]))",
      "1.75 3.5 0.25\n" },
    { "import statistics as st\nprint(st.variance([1, 2, 3]), round(st.variance([1, 2, 3, 4]), 12), st.pvariance([2, 4], mu=1), round(st.pvariance([1.5, 2.5, 3.5], 2.5), 12))",
      "1 1.666666666667 5 0.666666666667\n" },
    { "import statistics as st\nprint(st.variance([1, 2, 3], 2), st.variance([1, 2, 3], xbar=2.5), round(st.variance(range(10)), 12))",
      "1 1.375 9.166666666667\n" },
    { "import statistics as st\nprint(st.stdev([1, 2, 3]), st.pstdev([2, 2, 2]), round(st.stdev([1, 3]), 12), round(st.pstdev([1, 2, 3, 4]), 12), round(st.stdev([2.5, 3.5, 4.5, 10]), 12))",
      "1.0 0.0 1.414213562373 1.11803398875 3.350994877147\n" },
    { "import statistics as st\nprint(st.median([3, 1, 2]), st.median([1, 2, 3, 4]), st.median([1.5, 2]), st.median_low([1, 2, 3, 4]), st.median_high([1, 2, 3, 4]), st.median(['a', 'c', 'b']))",
      "2 2.5 1.75 2 3 b\n" },
    { "import statistics as st\nprint(st.mode('aab'), st.mode([1.5, 2, 2]), st.mode([3, 1, 1, 3]), st.multimode('aabbc'), st.multimode([]))",
      "a 2 3 ['a', 'b'] []\n" },
    { "import statistics as st\nprint(st.quantiles([1, 2, 3, 4, 5]), st.quantiles([1, 2, 3, 4, 5], n=10, method='inclusive'))",
      "[1.5, 3.0, 4.5] [1.4, 1.8, 2.2, 2.6, 3.0, 3.4, 3.8, 4.2, 4.6]\n" },
    { "import statistics as st\nprint([round(q, 12) for q in st.quantiles(range(10), n=3)], st.quantiles([1.5, 2.25], n=3, method='inclusive'), st.quantiles([10, 20], n=1))",
      "[2.666666666667, 6.333333333333] [1.75, 2.0] []\n" },
    { "import statistics as st\nprint(st.geometric_mean([4, 9]), round(st.geometric_mean([1.05, 1.1, 0.97, 1.2]), 12), st.geometric_mean([2]))",
      "6.0 1.076796762511 2.0\n" },
    { "import statistics as st\nprint(st.harmonic_mean([40, 60]), st.harmonic_mean([40, 60], weights=[5, 30]), st.harmonic_mean([2]), st.harmonic_mean([1, 0]), round(st.harmonic_mean([2.5, 3, 10]), 12))",
      "48.0 56.0 2 0 3.6\n" },
    { "import statistics as st\nprint(st.covariance([1, 2, 3], [3, 1, 2]), st.correlation([1, 2, 3], [3, 1, 2]), st.correlation([1, 2, 3], [2, 4, 6]), round(st.correlation([1, 2, 3, 4], [1.5, 2.5, 4, 3]), 12))",
      "-0.5 -0.5 1.0 0.744208407535\n" },
    { "import statistics as st\nlr = st.linear_regression([1, 2, 3], [2, 4, 6])\nprint(lr)\nslope, intercept = st.linear_regression([1, 2, 3, 4.5], [1.5, 2.5, 4, 3])\nprint(round(slope, 12), round(intercept, 12))\nprint(lr.slope, lr.intercept, st.linear_regression([1, 2], [3, 5], proportional=True))\nfor v in lr:\n    print(v)\nprint(lr[0], lr[-1], len(lr), lr == (2.0, 0.0), list(lr))",
      "LinearRegression(slope=2.0, intercept=0.0)\n0.467289719626 1.523364485981\n2.0 0.0 LinearRegression(slope=2.6, intercept=0.0)\n2.0\n0.0\n2.0 0.0 2 True [2.0, 0.0]\n" },
    { "import statistics as st\nprint(st.mean([1, float('inf')]), st.mean([1, float('inf'), -float('inf')]), st.variance([1, float('inf')]), st.fmean([1, float('inf')]), st.median([1, float('inf'), 2]), st.geometric_mean([1, float('inf')]))",
      "inf nan inf inf 2 inf\n" },
    { "from statistics import NormalDist\nd = NormalDist(1, 2)\nprint(d, d.mean, d.median, d.mode, d.stdev, d.variance, d.zscore(2), d.cdf(1))\nprint(NormalDist(), NormalDist(3), NormalDist(sigma=3), NormalDist('1.5', 2))",
      "NormalDist(mu=1.0, sigma=2.0) 1.0 1.0 1.0 2.0 4.0 0.5 0.5\nNormalDist(mu=0.0, sigma=1.0) NormalDist(mu=3.0, sigma=1.0) NormalDist(mu=0.0, sigma=3.0) NormalDist(mu=1.5, sigma=2.0)\n" },
    { "from statistics import NormalDist\nd = NormalDist(100, 15)\nprint(round(d.cdf(130), 12), round(d.pdf(110), 12), round(d.inv_cdf(0.99), 10), d.inv_cdf(0.5))\nprint(round(NormalDist().inv_cdf(0.975), 12), round(NormalDist().inv_cdf(1e-10), 10), round(NormalDist().pdf(0), 15))",
      "0.977249868052 0.021296533701 134.8952181106 100.0\n1.95996398454 -6.3613409024 0.398942280401433\n" },
    { "from statistics import NormalDist\nd = NormalDist(2, 3)\nprint(d + 1, 1 - d, d * -2, d / 2, -d, NormalDist(3, 4) + NormalDist(1, 3), NormalDist(3, 4) - NormalDist(1, 3))\nprint(d == NormalDist(2, 3.0), d == 5, isinstance(d, NormalDist), isinstance(3, NormalDist), NormalDist(1, 2).cdf(float('inf')), NormalDist(1, 2).pdf(float('inf')))",
      "NormalDist(mu=3.0, sigma=3.0) NormalDist(mu=-1.0, sigma=3.0) NormalDist(mu=-4.0, sigma=6.0) NormalDist(mu=1.0, sigma=1.5) NormalDist(mu=-2.0, sigma=3.0) NormalDist(mu=4.0, sigma=5.0) NormalDist(mu=2.0, sigma=5.0)\nTrue False True False 1.0 0.0\n" },
    { "from scipy.stats import norm\nprint(norm.cdf(0), norm.ppf(0.5), norm.ppf(0), norm.ppf(1), norm.ppf(1.5), norm.ppf(-0.1), norm.cdf(float('inf')), norm.cdf(-float('inf')), norm.cdf(1, scale=0), norm.pdf(float('inf')))",
      "0.5 0.0 -inf inf nan nan 1.0 0.0 nan 0.0\n" },
    { "from scipy.stats import norm\nprint(round(norm.cdf(1.96), 12), round(norm.ppf(0.975), 12), round(norm.pdf(0), 12), round(norm.sf(1.96), 12))",
      "0.975002104852 1.95996398454 0.398942280401 0.024997895148\n" },
    { "from scipy.stats import norm\nprint(round(norm.cdf(1, 0.5, 2), 12), round(norm.cdf(1, loc=0.5, scale=2), 12), round(norm.pdf(1.5, 1, 0.5), 12), round(norm.ppf(0.99, 100, 15), 9), round(norm.ppf(0.01, loc=100, scale=15), 9), round(norm.isf(0.05), 12))",
      "0.598706325683 0.598706325683 0.483941449038 134.895218111 65.104781889 1.644853626951\n" },
    { "import scipy.stats as st\nfrom scipy import stats\nimport scipy.stats\nd = st.norm(8, 14)\nprint(round(d.cdf(11) - d.cdf(8), 12), round(stats.norm.cdf(0.3), 12), round(scipy.stats.norm.ppf(0.95), 12), d.mean(), d.std(), d.var(), round(st.norm(loc=8, scale=14).ppf(0.9), 10))",
      "0.084837871172 0.617911422189 1.644853626951 8.0 14.0 196.0 25.9417219176\n" },
    { "from math import log, sqrt, exp\nfrom scipy.stats import norm\n\ndef black_scholes(S, K, T, r, s):\n    d1 = (log(S / K) + (r + s * s / 2) * T) / (s * sqrt(T))\n    d2 = d1 - s * sqrt(T)\n    call = S * norm.cdf(d1) - K * exp(-r * T) * norm.cdf(d2)\n    put = K * exp(-r * T) * norm.cdf(-d2) - S * norm.cdf(-d1)\n    return call, put\n\ncall, put = black_scholes(100, 95, 0.5, 0.05, 0.2)\nprint(f'{call:.10f} {put:.10f}')\nprint(round(call - put - (100 - 95 * exp(-0.05 * 0.5)), 12))",
      "9.8727424004 2.5271840431\n0.0\n" },
        /* scipy's moments, as NormalDist(8, 14).mean, .stdev, .variance and the standard
         * normal's print them (scipy: nan for a scale that is not positive) */
        { "from scipy.stats import norm\nprint(norm.mean(), norm.std(), norm.var(), norm.mean(8, 14), norm.std(loc=8, scale=14), norm.var(8, 14), norm.mean(1, -1))",
          "0.0 1.0 1.0 8.0 14.0 196.0 nan\n" },
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) CHECK(prints(t[i].src, t[i].out));
}

/* Where CPython's floats are wrong, the exact or correctly rounded value (34 digits, the
 * default precision), checked against an independent 60-digit evaluation. */
static void test_exact_values(void)
{
    /* CPython: False (0.1, 0.2, 0.3 are binary fractions there) */
    CHECK(prints("import statistics as st\nprint(st.pvariance([0.1, 0.2, 0.3]) == 0.02 / 3)",
                 "True\n"));
    /* sqrt(5/3); CPython 1.2909944487358056 */
    CHECK(prints("import statistics as st\nprint(st.stdev([1, 2, 3, 4]))",
                 "1.290994448735805628393088466594133\n"));
    /* (1.05 * 1.1 * 0.97 * 1.2) ** (1/4); CPython 1.0767967625113656 */
    CHECK(prints("import statistics as st\nprint(st.geometric_mean([1.05, 1.1, 0.97, 1.2]))",
                 "1.076796762511365524864602437895047\n"));
    /* Phi^-1(0.975); CPython 1.959963984540054 */
    CHECK(prints("from scipy.stats import norm\nprint(norm.ppf(0.975))",
                 "1.959963984540054235524594430520552\n"));
    /* Phi(-10): CPython's NormalDist computes 0.5 * (1 + erf(x)) and prints 0.0; scipy's
     * ndtr and this are accurate in the tail; and the inverse undoes it to the digits shown */
    CHECK(prints("from statistics import NormalDist\nprint(NormalDist().cdf(-10))",
                 "7.619853024160526065973343251599308e-24\n"));
    CHECK(prints("from scipy.stats import norm\nprint(norm.sf(10) == norm.cdf(-10), norm.ppf(norm.cdf(-10)) == -10)",
                 "True True\n"));
}

/* Errors with CPython's type and message (StatisticsError is a ValueError here, named). */
static void test_errors(void)
{
    static const struct { const char *src, *type, *msg; int line; } t[] = {
    { "import statistics as st\nlr = st.linear_regression([1, 2], [2, 4])\nlr[2]", "IndexError", "tuple index out of range", 3 },
    /* a method name of another class: CPython's AttributeError, and a property called */
    { "import statistics as st\nlr = st.linear_regression([1, 2], [2, 4])\nprint(lr.cdf(1))", "AttributeError", "'LinearRegression' object has no attribute 'cdf'", 3 },
    { "from statistics import NormalDist\nNormalDist().mean()", "TypeError", "'float' object is not callable", 2 },
    { "import statistics as st\nst.mean([])", "StatisticsError", "mean requires at least one data point", 2 },
    { "import statistics as st\nst.fmean([])", "StatisticsError", "fmean requires at least one data point", 2 },
    { "import statistics as st\nst.fmean([1, 2], [1])", "StatisticsError", "data and weights must be the same length", 2 },
    { "import statistics as st\nst.fmean([1, 2], [0, 0])", "StatisticsError", "sum of weights must be non-zero", 2 },
    { "import statistics as st\nst.median([])", "StatisticsError", "no median for empty data", 2 },
    { "import statistics as st\nst.mode([])", "StatisticsError", "no mode for empty data", 2 },
    { "import statistics as st\nst.variance([1])", "StatisticsError", "variance requires at least two data points", 2 },
    { "import statistics as st\nst.pvariance([])", "StatisticsError", "pvariance requires at least one data point", 2 },
    { "import statistics as st\nst.stdev([])", "StatisticsError", "stdev requires at least two data points", 2 },
    { "import statistics as st\nst.pstdev([])", "StatisticsError", "pstdev requires at least one data point", 2 },
    { "import statistics as st\nst.geometric_mean([1, 0])", "StatisticsError", "geometric mean requires a non-empty dataset containing positive numbers", 2 },
    { "import statistics as st\nst.geometric_mean([])", "StatisticsError", "geometric mean requires a non-empty dataset containing positive numbers", 2 },
    { "import statistics as st\nst.harmonic_mean([-1, 2])", "StatisticsError", "harmonic mean does not support negative values", 2 },
    { "import statistics as st\nst.harmonic_mean([])", "StatisticsError", "harmonic_mean requires at least one data point", 2 },
    { "import statistics as st\nst.harmonic_mean([2.5, 3], weights=[1])", "StatisticsError", "Number of weights does not match data size", 2 },
    { "import statistics as st\nst.quantiles([1, 2], n=0)", "StatisticsError", "n must be at least 1", 2 },
    { "import statistics as st\nst.quantiles([1], n=2)", "StatisticsError", "must have at least two data points", 2 },
    { "import statistics as st\nst.quantiles([1, 2], method='x')", "ValueError", "Unknown method: 'x'", 2 },
    { "import statistics as st\nst.correlation([1, 2, 3], [1, 1, 1])", "StatisticsError", "at least one of the inputs is constant", 2 },
    { "import statistics as st\nst.correlation([1, 2], [3])", "StatisticsError", "correlation requires that both inputs have same number of data points", 2 },
    { "import statistics as st\nst.covariance([1], [3])", "StatisticsError", "covariance requires at least two data points", 2 },
    { "import statistics as st\nst.linear_regression([1, 1], [3, 5])", "StatisticsError", "x is constant", 2 },
    { "import statistics as st\nst.linear_regression([1], [3])", "StatisticsError", "linear regression requires at least two data points", 2 },
    { "import statistics as st\nst.mean(['a'])", "TypeError", "can't convert type 'str' to numerator/denominator", 2 },
    { "import statistics as st\nst.mean([1, None])", "TypeError", "can't convert type 'NoneType' to numerator/denominator", 2 },
    { "import statistics as st\nst.mean(5)", "TypeError", "'int' object is not iterable", 2 },
    { "import statistics as st\nst.mean([1, 2], 3)", "TypeError", "mean() takes 1 positional argument but 2 were given", 2 },
    { "import statistics as st\nst.mean()", "TypeError", "mean() missing 1 required positional argument: 'data'", 2 },
    { "import statistics as st\nst.mean(dat=[1])", "TypeError", "mean() got an unexpected keyword argument 'dat'", 2 },
    { "import statistics as st\nst.stdev([1, float('inf')])", "AttributeError", "'float' object has no attribute 'numerator'", 2 },
    { "import statistics as st\nst.harmonic_mean(['a'])", "TypeError", "unsupported type", 2 },
    { "import statistics as st\nst.linear_regression(x=[1, 2], y=[3, 5])", "TypeError", "linear_regression() got some positional-only arguments passed as keyword arguments: 'x, y'", 2 },
    { "import statistics as st\nst.median([1, 'a'])", "TypeError", "'<' not supported between instances of 'str' and 'int'", 2 },
    { "import statistics as st\nst.mode([[1]])", "TypeError", "unhashable type: 'list'", 2 },
    { "import statistics as st\nst.quantiles([1, 2], n=2.5)", "TypeError", "'float' object cannot be interpreted as an integer", 2 },
    { "from statistics import NormalDist\nNormalDist(0, -1)", "StatisticsError", "sigma must be non-negative", 2 },
    { "from statistics import NormalDist\nNormalDist(1, 2).inv_cdf(0)", "StatisticsError", "p must be in the range 0.0 < p < 1.0", 2 },
    { "from statistics import NormalDist\nNormalDist(1, 0).cdf(2)", "StatisticsError", "cdf() not defined when sigma is zero", 2 },
    { "from statistics import NormalDist\nNormalDist(1, 0).pdf(2)", "StatisticsError", "pdf() not defined when sigma is zero", 2 },
    { "from statistics import NormalDist\nNormalDist(1, 0).zscore(2)", "StatisticsError", "zscore() not defined when sigma is zero", 2 },
    { "from statistics import NormalDist\nNormalDist(1, 0).inv_cdf(0.5)", "StatisticsError", "cdf() not defined when sigma at or below zero", 2 },
    { "from statistics import NormalDist\nNormalDist(1, 2).cdf('a')", "TypeError", "unsupported operand type(s) for -: 'str' and 'float'", 2 },
    { "from statistics import NormalDist\nNormalDist('a')", "ValueError", "could not convert string to float: 'a'", 2 },
    { "from statistics import NormalDist\nNormalDist(1, 2, 3)", "TypeError", "NormalDist.__init__() takes from 1 to 3 positional arguments but 4 were given", 2 },
    { "from statistics import NormalDist\nNormalDist(1, 2).cdf(1, 2)", "TypeError", "NormalDist.cdf() takes 2 positional arguments but 3 were given", 2 },
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        CHECK(raises(t[i].src, t[i].type, t[i].msg, t[i].line));
}

int main(void)
{
    test_cpython_outputs();
    test_exact_values();
    test_errors();
    return TEST_SUMMARY();
}
