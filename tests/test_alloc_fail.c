/* tests/test_alloc_fail.c: SQLite's habit. Each program below runs through the public API
 * from cr_config_new() to cr_engine_close() to count its allocations, N (twice: the first run
 * meets what the process allocates once); then N more times with the n-th allocation failing (n = 1..N), and N more with every allocation from
 * the n-th on failing. Every such run must end with CR_ENOMEM from the call that met the
 * failure (NULL from a constructor whose only failure it is), or, where the library
 * recovers from the failure by design, with a result identical to the first run's; never
 * with another code, a crash, or a block left allocated.
 *
 * Scope: the binary is linked with --wrap for malloc, calloc, realloc, free, strdup, strndup
 * and realpath (tests/module.mk), which redirects the calls made by our own objects only.
 * jansson's allocations are routed through the same counter (json_set_alloc_funcs), and fail
 * like ours, except inside its parser and its printer (json_loadb, json_loads, json_dumps,
 * wrapped too), which jansson 2.14 does not make fail cleanly: the lexer ignores a failed
 * append (lex_save), dropping characters of a string, and reports other failures as syntax
 * errors; the printer ignores a failed write of an object's key (do_dump), returning JSON
 * with a key missing. There allocations are counted, never failed. GMP and
 * MPFR (whose allocation functions may not return NULL), tree-sitter's runtime (which aborts
 * when an allocation fails, by design) and the grammar's external scanner (which does not
 * check its allocations: its object is linked with its calls renamed past the wrappers) and
 * SQLite (audit is off) are out of scope, as are sandboxed runs (tier none: nothing leaves
 * the process).
 *
 * A leak is found without LeakSanitizer: the wrappers keep the set of blocks they handed
 * out, which must be empty once the run's thread has ended (a fresh thread per run, so that
 * the per-thread caches, the parser's, the evaluator's number pool and the arena's spare
 * block, start empty and are freed by their destructors). CR_ALLOC_FAIL_STEP=k tries every
 * k-th n only (quick runs under a sanitizer); CR_ALLOC_FAIL_TRACE=NAME:N runs one case and
 * prints where it failed. */
#include <errno.h>
#include <execinfo.h>
#include <jansson.h>
#include <mpfr.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <unistd.h>

#include "tests/testlib.h"

/* ---- the wrappers ------------------------------------------------------------------------ */

void *__real_malloc(size_t size);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t size);
void __real_free(void *p);
char *__real_realpath(const char *path, char *resolved);

static struct {
    pthread_mutex_t mu;
    int on;                     /* counting, failing and tracking */
    unsigned long count;        /* allocations seen since switched on */
    unsigned long fail_at;      /* 0: none fails */
    int sticky;                 /* every allocation from fail_at on fails */
    unsigned long failed;       /* allocations failed */
    void **set;                 /* live blocks: open addressing, linear probing */
    size_t cap, n;
    int trace;                  /* CR_ALLOC_FAIL_TRACE: print where each failure is */
} af = { .mu = PTHREAD_MUTEX_INITIALIZER };

static size_t slot_of(const void *p, size_t cap)
{
    return (size_t)(((uintptr_t)p >> 4) * 0x9E3779B97F4A7C15ull) & (cap - 1);
}

static void set_add(void *p)
{
    if ((af.n + 1) * 2 > af.cap) {
        size_t cap = af.cap ? af.cap * 2 : 4096;
        void **set = __real_calloc(cap, sizeof *set);
        if (!set) abort();
        for (size_t i = 0; i < af.cap; i++) {
            if (!af.set[i]) continue;
            size_t j = slot_of(af.set[i], cap);
            while (set[j]) j = (j + 1) & (cap - 1);
            set[j] = af.set[i];
        }
        __real_free(af.set);
        af.set = set;
        af.cap = cap;
    }
    size_t i = slot_of(p, af.cap);
    while (af.set[i]) i = (i + 1) & (af.cap - 1);
    af.set[i] = p;
    af.n++;
}

/* Backward-shift deletion keeps every probe chain whole without tombstones. */
static void set_del(void *p)
{
    if (!af.n) return;
    size_t i = slot_of(p, af.cap);
    while (af.set[i] != p) {
        if (!af.set[i]) return;                /* not ours: allocated before or elsewhere */
        i = (i + 1) & (af.cap - 1);
    }
    af.set[i] = NULL;
    af.n--;
    for (size_t j = (i + 1) & (af.cap - 1); af.set[j]; j = (j + 1) & (af.cap - 1)) {
        size_t home = slot_of(af.set[j], af.cap);
        /* the entry at j may move to the hole at i unless its home lies in (i, j] */
        if ((j > i && (home <= i || home > j)) || (j < i && home <= i && home > j)) {
            af.set[i] = af.set[j];
            af.set[j] = NULL;
            i = j;
        }
    }
}

static void *trace_buf[32];

/* Inside jansson's parser or printer: allocations are counted, never failed. */
static _Thread_local int in_jansson_text;

/* Whether this allocation fails; counts it. */
static int fail_now(void)
{
    int f = 0;
    pthread_mutex_lock(&af.mu);
    if (af.on) {
        af.count++;
        f = !in_jansson_text && af.fail_at &&
            (af.count == af.fail_at || (af.sticky && af.count > af.fail_at));
        af.failed += (unsigned long)f;
    }
    pthread_mutex_unlock(&af.mu);
    if (f && af.trace) backtrace_symbols_fd(trace_buf, backtrace(trace_buf, 32), 2);
    if (f) errno = ENOMEM;
    return f;
}

static void *track(void *p)
{
    if (!p) return NULL;
    pthread_mutex_lock(&af.mu);
    if (af.on) set_add(p);
    pthread_mutex_unlock(&af.mu);
    return p;
}

static void untrack(void *p)
{
    if (!p) return;
    pthread_mutex_lock(&af.mu);
    set_del(p);
    pthread_mutex_unlock(&af.mu);
}

void *__wrap_malloc(size_t size)
{
    return fail_now() ? NULL : track(__real_malloc(size));
}

void *__wrap_calloc(size_t n, size_t size)
{
    return fail_now() ? NULL : track(__real_calloc(n, size));
}

void *__wrap_realloc(void *p, size_t size)
{
    if (fail_now()) return NULL;
    /* a block moved or freed by realloc leaves the set; the new one joins it, also when it
     * was allocated before tracking began (it is this run's now) */
    void *q = __real_realloc(p, size);
    if (q || !size) untrack(p);
    return track(q);
}

void __wrap_free(void *p)
{
    untrack(p);
    __real_free(p);
}

char *__wrap_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = __wrap_malloc(n);
    return d ? memcpy(d, s, n) : NULL;
}

char *__wrap_strndup(const char *s, size_t max)
{
    size_t n = strnlen(s, max);
    char *d = __wrap_malloc(n + 1);
    if (!d) return NULL;
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

char *__wrap_realpath(const char *path, char *resolved)
{
    if (!resolved && fail_now()) return NULL;
    char *r = __real_realpath(path, resolved);
    return resolved ? r : track(r);
}

json_t *__real_json_loadb(const char *buf, size_t len, size_t flags, json_error_t *error);
json_t *__real_json_loads(const char *input, size_t flags, json_error_t *error);

json_t *__wrap_json_loadb(const char *buf, size_t len, size_t flags, json_error_t *error)
{
    in_jansson_text++;
    json_t *j = __real_json_loadb(buf, len, flags, error);
    in_jansson_text--;
    return j;
}

json_t *__wrap_json_loads(const char *input, size_t flags, json_error_t *error)
{
    in_jansson_text++;
    json_t *j = __real_json_loads(input, flags, error);
    in_jansson_text--;
    return j;
}

char *__real_json_dumps(const json_t *json, size_t flags);

char *__wrap_json_dumps(const json_t *json, size_t flags)
{
    in_jansson_text++;
    char *s = __real_json_dumps(json, flags);
    in_jansson_text--;
    return s;
}

/* ---- the programs ------------------------------------------------------------------------ */

typedef struct {
    const char *name;
    cr_lang lang;
    const char *code;
    const char *vars;           /* JSON object, or NULL */
    const char *table;          /* JSON rows, or NULL */
    const char *request;        /* a whole request as JSON (then code is NULL) */
    const char *option, *value; /* one cr_request_set_option(), or NULL */
    const char *var, *var_value; /* one cr_request_set_var(), or NULL */
    int explain;
    cr_code status;             /* the result's status when nothing fails */
} program;

static const program progs[] = {
    { "arith", CR_LANG_PYTHON, "ans = (1.5 + 2) * 3 - 10 / 4\n", .status = CR_OK },
    { "function_loop", CR_LANG_PYTHON,
      "def growth(values):\n"
      "    out = []\n"
      "    for i in range(1, len(values)):\n"
      "        out.append((values[i] - values[i - 1]) / values[i - 1])\n"
      "    return out\n"
      "rates = growth([100, 110, 121, 133.1])\n"
      "ans = sum(rates) / len(rates)\n", .status = CR_OK },
    { "fstring", CR_LANG_PYTHON,
      "revenue = 1234567.891\n"
      "margin = 0.2345\n"
      "print(f\"Revenue: ${revenue:,.2f}, margin {margin:.1%} {revenue!r:>20}\")\n"
      "ans = f\"{revenue / 1e6:.3f}M\"\n", .status = CR_OK },
    { "format_percent", CR_LANG_PYTHON,
      "x = 12.3456\n"
      "print('%.2f %5d %s %r' % (x, 42, 'a', [1, 'b']))\n"
      "print('{:>10.3f}|{:<5}|{name}'.format(x, 7, name='n'))\n"
      "ans = format(x, '08.2f')\n", .status = CR_OK },
    { "dict_ops", CR_LANG_PYTHON,
      "d = {'a': 1, 'b': 2}\n"
      "d['c'] = 3\n"
      "d.update({'d': 4})\n"
      "del d['a']\n"
      "sq = {k: v * v for k, v in d.items() if v > 1}\n"
      "print(sorted(sq.items()), d.get('z', 0), list(d.keys()), 'b' in d)\n"
      "ans = sum(sq.values())\n", .status = CR_OK },
    { "set_ops", CR_LANG_PYTHON,
      "s = {1, 2, 3} | {3, 4}\n"
      "t = s & {2, 3, 9}\n"
      "u = set([10, 1]) - {1}\n"
      "print(sorted(s | u), sorted(t), len(s - t), {x % 3 for x in s}, 3 in s)\n"
      "ans = len(s ^ t)\n", .status = CR_OK },
    { "list_ops", CR_LANG_PYTHON,
      "xs = [5, 3, 8, 1]\n"
      "xs.append(7)\n"
      "xs.extend([2, 2])\n"
      "xs.sort(reverse=True)\n"
      "ys = [x * 2 for x in xs if x % 2 == 0]\n"
      "pairs = list(zip(xs, ys))\n"
      "print(xs[1:4], xs[::-1], max(xs), min(xs), xs.index(8), xs.count(2))\n"
      "print(list(enumerate(ys)), pairs, sorted(xs, key=lambda v: -v)[:2])\n"
      "ans = tuple(ys)\n", .status = CR_OK },
    { "str_methods", CR_LANG_PYTHON,
      "s = '  Net Income, Revenue ,Cost  '\n"
      "parts = [p.strip().lower() for p in s.split(',')]\n"
      "print('-'.join(parts).upper(), s.replace(' ', ''), s.strip().startswith('Net'))\n"
      "print(s.index('Rev'), s.count('e'), 'x y'.title(), '42'.zfill(5), repr(s[2:5]))\n"
      "ans = ' '.join(reversed(parts))\n", .status = CR_OK },
    { "bigint_fraction", CR_LANG_PYTHON,
      "a = 2 ** 200 + 7\n"
      "b = a // 3 + a % 1000\n"
      "print(divmod(a, 12345), pow(3, 100, 97), abs(-b), int('ff', 16), round(2.675, 2))\n"
      "ans = a / 7\n", .status = CR_OK },
    { "decimal", CR_LANG_PYTHON,
      "from decimal import Decimal, ROUND_HALF_UP, getcontext\n"
      "getcontext().prec = 20\n"
      "x = Decimal('1.005').quantize(Decimal('0.01'), rounding=ROUND_HALF_UP)\n"
      "y = Decimal(1) / Decimal(7)\n"
      "print(x, y, x + y, str(Decimal('3.50').normalize()))\n"
      "ans = y * 7\n", .status = CR_OK },
    { "datetime", CR_LANG_PYTHON,
      "from datetime import date, datetime, timedelta\n"
      "d = date(2024, 3, 1) - date(2023, 12, 31)\n"
      "t = datetime(2024, 1, 31, 12, 30) + timedelta(days=30, hours=5)\n"
      "print(d.days, t.isoformat(), t.strftime('%Y-%m-%d %H:%M'), date(2024, 2, 29).weekday())\n"
      "ans = d\n", .status = CR_OK },
    { "statistics", CR_LANG_PYTHON,
      "import statistics\n"
      "xs = [2.5, 3.1, 4.7, 5.0, 6.2, 3.3]\n"
      "print(statistics.mean(xs), statistics.median(xs), statistics.pstdev(xs))\n"
      "ans = statistics.stdev(xs)\n", .status = CR_OK },
    { "math_numpy", CR_LANG_PYTHON,
      "import math\n"
      "import numpy as np\n"
      "import numpy_financial as npf\n"
      "cagr = (150 / 100) ** (1 / 3) - 1\n"
      "print(math.sqrt(2), math.log(10), np.mean([1, 2, 3, 4]), np.std([1, 2, 3]))\n"
      "print(round(npf.npv(0.08, [-100, 30, 40, 50]), 4), math.floor(cagr * 1000))\n"
      "ans = npf.pmt(0.05 / 12, 360, 200000)\n", .status = CR_OK },
    { "solution_recursion", CR_LANG_PYTHON,
      "def fact(n):\n"
      "    return 1 if n <= 1 else n * fact(n - 1)\n"
      "def solution():\n"
      "    total = 0\n"
      "    k = 0\n"
      "    while True:\n"
      "        k += 1\n"
      "        if k > 20:\n"
      "            break\n"
      "        total += fact(k) % 7\n"
      "    return total\n", .status = CR_OK },
    { "try_except", CR_LANG_PYTHON,
      "def safe(a, b):\n"
      "    try:\n"
      "        return a / b\n"
      "    except ZeroDivisionError as e:\n"
      "        print('caught', e)\n"
      "        return None\n"
      "    finally:\n"
      "        print('done', a)\n"
      "r = [safe(1, 0), safe(3, 4)]\n"
      "try:\n"
      "    {}['missing']\n"
      "except KeyError as e:\n"
      "    print(repr(e))\n"
      "ans = r\n", .status = CR_OK },
    { "args_unpack", CR_LANG_PYTHON,
      "def f(a, b=2, *rest, scale=1, **kw):\n"
      "    return (a + b + sum(rest)) * scale, sorted(kw)\n"
      "x, (y, z) = 1, (2, 3)\n"
      "first, *middle, last = [1, 2, 3, 4, 5]\n"
      "print(f(1), f(*[1, 2, 3, 4], scale=2, q=1, p=2), middle, last)\n"
      "ans = f(x, y, z, **{'scale': 3})\n", .status = CR_OK },
    { "output_growth", CR_LANG_PYTHON,
      "for i in range(300):\n"
      "    print('line', i, i * 1.5, str(i) * 3)\n"
      "ans = i\n", .status = CR_OK },
    { "closures_iter", CR_LANG_PYTHON,
      "def make_scaler(k):\n"
      "    def scale(v):\n"
      "        return v * k\n"
      "    return scale\n"
      "double = make_scaler(2)\n"
      "xs = list(map(double, filter(lambda v: v % 3, range(12))))\n"
      "gen = (x * x for x in xs if x > 4)\n"
      "print(sum(gen), any(x > 20 for x in xs), all(xs), list(reversed(xs))[:3])\n"
      "print(sorted({'b': 2, 'a': 3}.items(), key=lambda kv: kv[1]), list(enumerate('ab', 1)))\n"
      "ans = [double(x) for x in range(3)]\n", .status = CR_OK },
    { "modules_more", CR_LANG_PYTHON,
      "import math\n"
      "import statistics\n"
      "from datetime import datetime, date\n"
      "from decimal import Decimal, localcontext\n"
      "d = datetime.strptime('2024-03-15 10:30', '%Y-%m-%d %H:%M')\n"
      "e = date.fromisoformat('2024-12-31') - d.date()\n"
      "nd = statistics.NormalDist(100, 15)\n"
      "lr = statistics.linear_regression([1, 2, 3, 4], [2, 4.1, 6.2, 7.9])\n"
      "with localcontext() as ctx:\n"
      "    ctx.prec = 5\n"
      "    q = Decimal(2).sqrt()\n"
      "print(d, e.days, round(nd.cdf(120), 6), lr, q, repr(q), math.comb(10, 3), ctx)\n"
      "print(math.fsum([0.1] * 10), math.isclose(0.1 + 0.2, 0.3), math.prod([1.5, 2, 3]))\n"
      "ans = (e.total_seconds(), nd, ctx)\n", .status = CR_OK },
    { "set_var_fences", CR_LANG_PYTHON,
      "Here is the code:\n```python\nstart = 1000\ngrowth = (end - start) / start\nprint(f'{growth:.2%}')\n```\n"
      "and then\n```\nanswer = round(growth * 100, 2)\n```\n",
      .option = "strip_fences", .value = "1", .var = "end", .var_value = "1250.75",
      .status = CR_OK },
    { "raises_value", CR_LANG_PYTHON,
      "def check(x):\n"
      "    if x < 0:\n"
      "        raise ValueError(f'negative amount: {x}')\n"
      "    return x\n"
      "print(check(5))\n"
      "check(-3)\n", .status = CR_EPY_VALUE },
    { "raises_zerodiv", CR_LANG_PYTHON,
      "rates = {'a': 0.0}\n"
      "ans = 100 / rates['a']\n", .status = CR_EPY_ZERODIV },
    { "raises_name", CR_LANG_PYTHON, "x = 1\nans = x + undefined_name\n", .status = CR_EPY_NAME },
    { "raises_custom", CR_LANG_PYTHON,
      "try:\n"
      "    raise Exception('first')\n"
      "except Exception as e:\n"
      "    raise RuntimeError('second: ' + str(e))\n", .status = CR_EPY_EXCEPTION },
    { "syntax_error", CR_LANG_PYTHON, "ans = (1 +\nprint('x'\n", .status = CR_ESYNTAX },
    /* a `;`, a lambda and a same-line suite: the fast parser declines, tree-sitter parses */
    { "treesitter", CR_LANG_PYTHON,
      "x = 3; y = 4\n"
      "f = lambda a, b=1: a * b + 2\n"
      "if len([x, y]) > 1: print(x, y)\n"
      "ans = f(x, y) + x\n", .status = CR_OK },
    { "treesitter_split", CR_LANG_PYTHON,
      "x = 1, 2\n"
      "[a, b] = x\n"
      "ans = a + b\n", .status = CR_OK },
    { "outside_subset", CR_LANG_PYTHON,
      "import os\nprint(os.getcwd())\nopen('/etc/passwd')\n", .status = CR_EUNSUPPORTED },
    { "explain_inprocess", CR_LANG_PYTHON, "ans = sum([1, 2, 3]) * 2\n", .explain = 1,
      .status = CR_OK },
    { "explain_rejected", CR_LANG_PYTHON, "import subprocess\nans = 1\n", .explain = 1,
      .status = CR_EUNSUPPORTED },
    { "limit_steps", CR_LANG_PYTHON, "i = 0\nwhile True:\n    i += 1\n",
      .option = "max_steps", .value = "5000", .status = CR_ELIMIT },
    { "vars_json", CR_LANG_PYTHON, "ans = revenue - cost * rate\n",
      .vars = "{\"revenue\": 1234.5, \"cost\": 100, \"rate\": 0.1234567890123456789,"
              " \"unused\": [1, \"two\", {\"k\": null}]}",
      .option = "precision", .value = "12", .status = CR_OK },
    { "request_json", CR_LANG_AUTO, NULL,
      .request = "{\"code\": \"```python\\nresult = x * 2\\nprint(result)\\n```\","
                 " \"vars\": {\"x\": 21.5}, \"answer_vars\": [\"result\"],"
                 " \"rounding\": \"half-up\", \"strip_fences\": true, \"id\": 123456789012345678901}",
      .status = CR_OK },
    { "dsl", CR_LANG_DSL, "subtract(5829, 5735), divide(#0, 5735), multiply(#1, const_100)",
      .status = CR_OK },
    { "dsl_auto", CR_LANG_AUTO, "add(1, 2), greater(#0, 2)", .status = CR_OK },
    { "dsl_table", CR_LANG_DSL,
      "table_sum(net income, none), table_average(revenue, none), divide(#0, #1)",
      .table = "[[\"\", \"2016\", \"2015\"], [\"net income\", \"$ 1,200\", \"(300)\"],"
               " [\"revenue\", \"5,000.5\", \"4,000\"]]", .status = CR_OK },
    { "dsl_zerodiv", CR_LANG_DSL, "subtract(5, 5), divide(10, #0)", .status = CR_EPY_ZERODIV },
    { "dsl_syntax", CR_LANG_DSL, "add(1, , 2)", .status = CR_ESYNTAX },
};
#define NPROGS (sizeof progs / sizeof progs[0])

/* ---- one run, from configuration to close ------------------------------------------------ */

/* What a run gave. `stage` names the call that failed ("" when none did); the rest is the
 * result, in fixed buffers: nothing here allocates while the wrappers count. */
typedef struct {
    const char *stage;
    cr_code code;               /* the failing call's code */
    char message[320];
    cr_code status;
    cr_route route;
    size_t nreasons;
    char id[64], out[8192], repr[512], type[32], frac[512], err[256];
    char json[65536];
} outcome;

static void copy(char *dst, size_t size, const char *src)
{
    snprintf(dst, size, "%s", src ? src : "(null)");
}

/* The call `stage` failed with `code`: the outcome says so. Returns 0 to stop the run. */
static int failed(outcome *o, const char *stage, cr_code code, const cr_error *err)
{
    o->stage = stage;
    o->code = code;
    copy(o->message, sizeof o->message, err ? err->message : "");
    return 0;
}

static void run_program(const program *p, outcome *o)
{
    cr_error err = {0};
    cr_config *cfg = NULL;
    cr_engine *e = NULL;
    cr_request *req = NULL;
    cr_result *res = NULL;
    cr_code rc;
    memset(o, 0, sizeof *o);
    o->stage = "";
    if (!(cfg = cr_config_new())) { failed(o, "cr_config_new", CR_ENOMEM, NULL); goto out; }
    if ((rc = cr_config_set(cfg, "tier", "none", &err)) != CR_OK) {
        failed(o, "cr_config_set", rc, &err);
        goto out;
    }
    if (p->option && strncmp(p->option, "max_", 4) == 0 &&
        (rc = cr_config_set(cfg, p->option, p->value, &err)) != CR_OK) {
        failed(o, "cr_config_set", rc, &err);
        goto out;
    }
    if (!(e = cr_engine_open(cfg, &err))) { failed(o, "cr_engine_open", err.code, &err); goto out; }
    if (!(req = cr_request_new())) { failed(o, "cr_request_new", CR_ENOMEM, NULL); goto out; }
    if (p->request && (rc = cr_request_set_json(req, p->request, strlen(p->request), &err))) {
        failed(o, "cr_request_set_json", rc, &err);
        goto out;
    }
    if (p->code && (rc = cr_request_set_code(req, p->code, strlen(p->code))) != CR_OK) {
        failed(o, "cr_request_set_code", rc, NULL);
        goto out;
    }
    if (!p->request && (rc = cr_request_set_lang(req, p->lang)) != CR_OK) {
        failed(o, "cr_request_set_lang", rc, NULL);
        goto out;
    }
    if (p->vars && (rc = cr_request_set_vars_json(req, p->vars, strlen(p->vars), &err))) {
        failed(o, "cr_request_set_vars_json", rc, &err);
        goto out;
    }
    if (p->table && (rc = cr_request_set_table_json(req, p->table, strlen(p->table), &err))) {
        failed(o, "cr_request_set_table_json", rc, &err);
        goto out;
    }
    if (p->var && (rc = cr_request_set_var(req, p->var, p->var_value, &err)) != CR_OK) {
        failed(o, "cr_request_set_var", rc, &err);
        goto out;
    }
    if (p->option && strncmp(p->option, "max_", 4) != 0 &&
        (rc = cr_request_set_option(req, p->option, p->value, &err)) != CR_OK) {
        failed(o, "cr_request_set_option", rc, &err);
        goto out;
    }
    if (p->explain && (rc = cr_request_set_explain(req, 1)) != CR_OK) {
        failed(o, "cr_request_set_explain", rc, NULL);
        goto out;
    }
    copy(o->id, sizeof o->id, cr_request_id(req));
    if ((rc = cr_run(e, req, &res, &err)) != CR_OK) {
        failed(o, "cr_run", rc, &err);
        if (err.code != rc) {                            /* err must say the same */
            snprintf(o->message, sizeof o->message, "err.code %d (%s) for %d", (int)err.code,
                     err.message, (int)rc);
            o->code = (cr_code)-1;
        }
        goto out;
    }
    o->status = cr_result_status(res);
    o->route = cr_result_route(res);
    o->nreasons = cr_result_reason_count(res);
    copy(o->out, sizeof o->out, cr_result_stdout(res, NULL));
    copy(o->repr, sizeof o->repr, cr_result_value_repr(res));
    copy(o->type, sizeof o->type, cr_result_value_type(res));
    copy(o->frac, sizeof o->frac, cr_result_value_fraction(res));
    copy(o->err, sizeof o->err, cr_result_error(res) ? cr_result_error(res)->message : "");
    /* cr_result_json()'s only failure is memory */
    const char *json = cr_result_json(res);
    if (!json) { failed(o, "cr_result_json", CR_ENOMEM, NULL); goto out; }
    copy(o->json, sizeof o->json, json);
out:
    cr_result_free(res);
    cr_request_free(req);
    cr_engine_close(e);
    cr_config_free(cfg);
}

/* Each run on a thread of its own (see the top). */
typedef struct {
    const program *p;
    outcome *o;
} job;

static void *job_run(void *arg)
{
    job *j = arg;
    run_program(j->p, j->o);
    /* MPFR's constants cache is per thread, for the thread to free before it ends (as
     * evaluator/value/stack.c does for its own threads); LeakSanitizer would count it */
    if (mpfr_buildopt_tls_p()) mpfr_free_cache2(MPFR_FREE_LOCAL_CACHE);
    return NULL;
}

/* The run under way, for the crash report. */
static volatile const char *cur_name;
static volatile unsigned long cur_n;
static volatile int cur_sticky;

/* Runs p with allocation fail_at failing (0: none; with sticky, every one from it on);
 * returns the allocations counted, and sets *live to the blocks left allocated and *nfailed
 * to the allocations failed. */
static unsigned long run_counted(const program *p, unsigned long fail_at, int sticky, outcome *o,
                                 size_t *live, unsigned long *nfailed)
{
    pthread_t th;
    pthread_attr_t at;
    job j = { p, o };
    cur_name = p->name;
    cur_n = fail_at;
    cur_sticky = sticky;
    pthread_mutex_lock(&af.mu);
    af.on = 1;
    af.count = af.failed = 0;
    af.fail_at = fail_at;
    af.sticky = sticky;
    pthread_mutex_unlock(&af.mu);
    pthread_attr_init(&at);
    pthread_attr_setstacksize(&at, (size_t)16 << 20);
    if (pthread_create(&th, &at, job_run, &j) != 0) abort();
    pthread_join(th, NULL);
    pthread_attr_destroy(&at);
    pthread_mutex_lock(&af.mu);
    af.on = 0;
    unsigned long count = af.count;
    *live = af.n;
    *nfailed = af.failed;
    /* forget the leaked blocks, so that the next run counts its own */
    if (af.set) memset(af.set, 0, af.cap * sizeof *af.set);
    af.n = 0;
    pthread_mutex_unlock(&af.mu);
    return count;
}

/* The result JSON without its timings, which differ from run to run. Called with the
 * wrappers off. */
static json_t *json_untimed(const char *text)
{
    json_t *j = json_loads(text, 0, NULL);
    json_object_del(j, "timings");
    return j;
}

static int same_result(const outcome *a, const outcome *b)
{
    json_t *ja = json_untimed(a->json), *jb = json_untimed(b->json);
    int same = ja && jb && json_equal(ja, jb);
    json_decref(ja);
    json_decref(jb);
    return same && !strcmp(a->id, b->id) && a->status == b->status && a->route == b->route &&
           a->nreasons == b->nreasons && !strcmp(a->out, b->out) && !strcmp(a->repr, b->repr) &&
           !strcmp(a->type, b->type) && !strcmp(a->frac, b->frac) && !strcmp(a->err, b->err);
}

static void on_crash(int sig)
{
    char msg[256];
    int n = snprintf(msg, sizeof msg, "crashed (signal %d) in program %s, allocation %lu%s "
                     "failing\n", sig, cur_name ? (const char *)cur_name : "?", cur_n,
                     cur_sticky ? " and on" : "");
    (void)!write(2, msg, (size_t)n);
    signal(sig, SIG_DFL);
    raise(sig);
}

static void *json_malloc(size_t size) { return __wrap_malloc(size); }
static void json_free(void *p) { __wrap_free(p); }

int main(void)
{
    static outcome ref, o;
    const char *step_env = getenv("CR_ALLOC_FAIL_STEP");
    unsigned long step = step_env && atol(step_env) > 0 ? (unsigned long)atol(step_env) : 1;
    unsigned long total_runs = 0;
    signal(SIGSEGV, on_crash);
    signal(SIGBUS, on_crash);
    signal(SIGABRT, on_crash);
    json_set_alloc_funcs(json_malloc, json_free);
    /* CR_ALLOC_FAIL_TRACE=NAME:N (N+ for every one from N on): that run alone, with the
     * stack of each failed allocation printed (addr2line -e on the offsets) */
    const char *trace = getenv("CR_ALLOC_FAIL_TRACE");
    unsigned long trace_n = 0;
    int trace_sticky = 0;
    if (trace && strchr(trace, ':')) {
        trace_n = strtoul(strchr(trace, ':') + 1, NULL, 10);
        trace_sticky = strchr(trace, '+') != NULL;
    }
    for (size_t i = 0; i < NPROGS; i++) {
        const program *p = &progs[i];
        size_t live;
        unsigned long nfailed, recovered = 0, exempt = 0, bad = 0;
        if (trace_n && (strncmp(trace, p->name, strlen(p->name)) ||
                        trace[strlen(p->name)] != ':'))
            continue;
        /* twice: the first one meets what a process allocates once (jansson's first use of
         * something in cr_result_json()), which later runs do not count */
        run_counted(p, 0, 0, &ref, &live, &nfailed);
        unsigned long n_alloc = run_counted(p, 0, 0, &ref, &live, &nfailed);
        if (trace_n) {
            af.trace = 1;
            run_counted(p, trace_n, trace_sticky, &o, &live, &nfailed);
            fprintf(stderr, "%s: stage '%s' gave %s [%s]; status %s [%s]; %zu blocks left\n",
                    p->name, o.stage, cr_strerror(o.code), o.message, cr_strerror(o.status),
                    o.err, live);
            fprintf(stderr, "%s\n%s\n", ref.json, o.json);
            return 0;
        }
        if (ref.stage[0] || ref.status != p->status || live) {
            t_fail++;
            fprintf(stderr, "%s: without failures: stage '%s' (%s), status %s (want %s), %zu "
                    "blocks left [%s]\n", p->name, ref.stage, ref.message,
                    cr_strerror(ref.status), cr_strerror(p->status), live, ref.err);
            continue;
        }
        t_pass++;
        /* each of the two sweeps is one check (tests/testlib.h) */
        for (int sticky = 0; sticky <= 1; sticky++) {
            SWEEP_BEGIN(sweep);
            for (unsigned long n = 1; n <= n_alloc; n += step) {
                unsigned long count = run_counted(p, n, sticky, &o, &live, &nfailed);
                const char *why = NULL;
                total_runs++;
                /* cr_result_json() prints the run's timings: a digit more or less there can
                 * move the count by one at the end */
                if (!nfailed && count < n && (n + 2 < n_alloc || !same_result(&o, &ref)))
                    why = "the count is not reproducible";
                else if (o.stage[0] && o.code != CR_ENOMEM) why = "not CR_ENOMEM";
                else if (!o.stage[0] && !same_result(&o, &ref)) why = "a different result";
                else if (live) why = "blocks left allocated";
                if (!nfailed) exempt++;           /* inside jansson's parser or printer */
                else if (!o.stage[0]) recovered++;
                if (!why) { t_pass++; continue; }
                t_fail++;
                if (bad++ < 5)
                    fprintf(stderr, "%s: allocation %lu%s of %lu failing: %s: %s gave %s (%d) "
                            "[%s]; status %s [%s]; %zu blocks left\n", p->name, n,
                            sticky ? " and on" : "", count, why, o.stage[0] ? o.stage : "nothing",
                            cr_strerror(o.code), (int)o.code, o.message, cr_strerror(o.status),
                            o.err, live);
            }
            SWEEP_END(sweep);
        }
        printf("%-20s %5lu allocations, %lu runs: %lu recovered, %lu inside jansson's text\n",
               p->name, n_alloc, 2 * ((n_alloc + step - 1) / step), recovered, exempt);
    }
    printf("%lu runs with a failing allocation\n", total_runs);
    return TEST_SUMMARY();
}
