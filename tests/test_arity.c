/* tests/test_arity.c: every function row of ir/subset.def called in-process with one
 * positional argument too many (hi + 1) and, when lo > 0, one too few (lo - 1), each argument
 * the int 1; the error must be CPython 3.11's, type and message, as
 * tests/data/arity_cpython.tsv records it (tests/tools/arity_cpython.py wrote it by running
 * the same calls on /usr/bin/python3). A row's counts missing from the file fail the test:
 * the file is regenerated when a row's arity changes. The calls that cannot match are
 * listed below with the reason; the test checks that the reason still holds.
 *
 * Then keywords: tests/data/kwargs_cpython.tsv (tests/tools/kwargs_cpython.py) holds each
 * row's parameters as CPython's inspect.signature gives them, which the row's sig must
 * name alike, and calls made from the sig (each parameter by position and by keyword, twice,
 * unknown, missing), each with CPython's value or error, which the evaluator must give. */
#include <stdlib.h>

#include "evaluator/evaluator.h"
#include "ir/subset.h"
#include "parser/parser.h"
#include "tests/testlib.h"

#define DATA "tests/data/arity_cpython.tsv"
#define KWDATA "tests/data/kwargs_cpython.tsv"

/* Calls whose CPython error the evaluator does not give, and why. `unreachable`: the
 * whitelist keeps the call out of the evaluator (the test checks it does). */
static const struct {
    const char *mod, *name;
    int count, unreachable;
    const char *why;
} known[] = {
    { NULL, NULL, 0, 0, NULL },   /* none today */
};

/* numpy's and numpy_financial's functions take the arguments parser/whitelist.c's shapes
 * allow (fewer than numpy's: no out=, axis=; cash flows a list or a name); a call with
 * others goes to the sandbox. */
static int shaped(const char *mod)
{
    return strcmp(mod, "numpy") == 0 || strcmp(mod, "numpy_financial") == 0;
}

typedef struct {
    char mod[32], name[32], want[256];
    int count;
} line;

static line *lines;
static size_t nlines;

static int load(void)
{
    FILE *f = fopen(DATA, "r");
    if (!f) return -1;
    char buf[512];
    while (fgets(buf, sizeof buf, f)) {
        if (buf[0] == '#' || buf[0] == '\n') continue;
        buf[strcspn(buf, "\n")] = 0;
        line l = { 0 };
        char *t[4], *save = NULL;
        int n = 0;
        for (char *p = strtok_r(buf, "\t", &save); p && n < 4; p = strtok_r(NULL, "\t", &save))
            t[n++] = p;
        if (n != 4) continue;
        snprintf(l.mod, sizeof l.mod, "%s", t[0]);
        snprintf(l.name, sizeof l.name, "%s", t[1]);
        l.count = atoi(t[2]);
        snprintf(l.want, sizeof l.want, "%s", t[3]);
        line *nl = realloc(lines, (nlines + 1) * sizeof *lines);
        if (!nl) break;
        lines = nl;
        lines[nlines++] = l;
    }
    fclose(f);
    return 0;
}

static const char *want_of(const char *mod, const char *name, int count)
{
    for (size_t i = 0; i < nlines; i++)
        if (lines[i].count == count && strcmp(lines[i].mod, mod) == 0 &&
            strcmp(lines[i].name, name) == 0)
            return lines[i].want;
    return NULL;
}

static int known_index(const char *mod, const char *name, int count)
{
    for (size_t i = 0; known[i].mod; i++)
        if (known[i].count == count && strcmp(known[i].mod, mod) == 0 &&
            strcmp(known[i].name, name) == 0)
            return (int)i;
    return -1;
}

static int run_src(const char *src, int *in, char *got, size_t gotsz);

/* The call with `count` ones; *in: whether the whitelist let it in. got: "Type: message". */
static int call(int mod, const char *name, int count, int *in, char *got, size_t gotsz)
{
    char src[256];
    size_t n = 0;
    if (mod != MOD_NONE) {
        n += (size_t)snprintf(src + n, sizeof src - n, "import %s\n%s.", registry_module_name(mod),
                              registry_module_name(mod));
    }
    n += (size_t)snprintf(src + n, sizeof src - n, "%s(", name);
    for (int i = 0; i < count; i++)
        n += (size_t)snprintf(src + n, sizeof src - n, "%s1", i ? ", " : "");
    snprintf(src + n, sizeof src - n, ")\n");
    return run_src(src, in, got, gotsz);
}

/* Runs src; *in: whether the whitelist let it in. got: "Type: message", or the final
 * value's repr. */
static int run_src(const char *src, int *in, char *got, size_t gotsz)
{
    cr_policy pol;
    cr_policy_default(&pol);
    ir_module *m = NULL;
    cr_error err = { 0 };
    if (parser_parse_python(src, strlen(src), &pol.limits, &m, &err) != CR_OK) return -1;
    *in = m->nreasons == 0;
    if (!*in) {
        ir_module_free(m);
        return 0;
    }
    eval_result r;
    cr_code rc = eval_run(m, NULL, 0, &pol, &r, &err);
    ir_module_free(m);
    if (rc != CR_OK) return -1;
    if (r.status == CR_OK) snprintf(got, gotsz, "%s", r.has_value ? r.value_repr : "ok");
    else snprintf(got, gotsz, "%s: %s", r.error.type, r.error.message);
    eval_result_free(&r);
    return 0;
}

static void check_call(int mod, const char *name, int count)
{
    const char *mname = mod == MOD_NONE ? "builtins" : registry_module_name(mod);
    const char *want = want_of(mname, name, count);
    int in = 0, k = known_index(mname, name, count);
    char got[300], label[160];
    snprintf(label, sizeof label, "%s.%s(%d arguments)", mname, name, count);
    if (!want) {
        fprintf(stderr, "%s: not in " DATA " (regenerate it)\n", label);
        t_fail++;
        return;
    }
    if (call(mod, name, count, &in, got, sizeof got) < 0) {
        fprintf(stderr, "%s: did not run\n", label);
        t_fail++;
        return;
    }
    if (!in) {
        if (shaped(mname)) {
            BY_DESIGN(label, "out of the whitelist's shapes, the sandbox runs it (CPython: %s)",
                      want);
        } else {
            fprintf(stderr, "%s: not in-process\n", label);
            t_fail++;
        }
        return;
    }
    if (want[0] == '!') {
        /* CPython could not run it here: the error must still be a TypeError */
        BY_DESIGN(label, "%s (here: %s)", want + 1, got);
        if (strncmp(got, "TypeError: ", 11) != 0) {
            fprintf(stderr, "%s: %s\n", label, got);
            t_fail++;
        }
        return;
    }
    if (k >= 0) {
        BY_DESIGN(label, "%s (CPython: %s; here: %s)", known[k].why, want, got);
        if (strcmp(got, want) == 0) {
            fprintf(stderr, "%s matches CPython now: drop it from known[]\n", label);
            t_fail++;
        }
        return;
    }
    if (strcmp(got, want) == 0) {
        t_pass++;
    } else {
        fprintf(stderr, "%s: got [%s]\n  want [%s]\n", label, got, want);
        t_fail++;
    }
}

/* A row's sig as inspect.signature prints parameters: "(x, /)", without the name and the
 * whitelist's shape letters. */
static void sig_params(int id, char *out, size_t size)
{
    int lo, hi, style;
    const char *sig;
    registry_func_arity(id, &lo, &hi, &style, &sig);
    const char *p = strchr(sig, '(');
    size_t n = 0;
    for (p = p ? p : "()"; *p && n + 1 < size; p++) {
        if (*p == ':') { p++; continue; }   /* a shape letter */
        out[n++] = *p;
    }
    out[n] = 0;
}

static void check_kwargs(void)
{
    FILE *f = fopen(KWDATA, "r");
    if (!f) {
        fprintf(stderr, "cannot read " KWDATA "\n");
        t_fail++;
        return;
    }
    char buf[1024];
    while (fgets(buf, sizeof buf, f)) {
        if (buf[0] == '#' || buf[0] == '\n') continue;
        buf[strcspn(buf, "\n")] = 0;
        char *t[4], *save = NULL;
        int n = 0;
        for (char *p = strtok_r(buf, "\t", &save); p && n < 4; p = strtok_r(NULL, "\t", &save))
            t[n++] = p;
        if (n != 4) continue;
        int mod = strcmp(t[1], "builtins") == 0 ? MOD_NONE : registry_module(t[1]);
        if (strcmp(t[0], "sig") == 0) {
            int id;
            if (t[3][0] == '!') continue;   /* CPython has none to compare */
            if (mod < 0 || registry_attr(mod, t[2], &id) != REG_FUNC) {
                fprintf(stderr, "%s.%s: no row\n", t[1], t[2]);
                t_fail++;
                continue;
            }
            char mine[256];
            sig_params(id, mine, sizeof mine);
            if (strcmp(mine, t[3]) == 0) {
                t_pass++;
            } else {
                fprintf(stderr, "%s.%s: the row's parameters %s, CPython's %s\n", t[1], t[2], mine,
                        t[3]);
                t_fail++;
            }
            continue;
        }
        char src[1200];
        snprintf(src, sizeof src, "%s%s\n%s\n", mod == MOD_NONE ? "" : "import ",
                 mod == MOD_NONE ? "" : t[1], t[2]);
        int in = 0;
        char got[300] = "";
        if (run_src(src, &in, got, sizeof got) < 0) {
            fprintf(stderr, "%s: did not run\n", t[2]);
            t_fail++;
        } else if (!in && (shaped(t[1]) || strstr(t[2], "localcontext("))) {
            /* out of numpy's shapes, or past what localcontext has (the whitelist's managers
             * table): the sandbox runs it, and answers as CPython */
            BY_DESIGN(t[2], "the whitelist keeps it out, the sandbox runs it (CPython: %s)", t[3]);
        } else if (!in) {
            fprintf(stderr, "%s: not in-process\n", t[2]);
            t_fail++;
        } else if (strcmp(strstr(got, " at 0x") ? "<object>" : got, t[3]) == 0) {
            t_pass++;
        } else {
            fprintf(stderr, "%s: got [%s]\n  want [%s]\n", t[2], got, t[3]);
            t_fail++;
        }
    }
    fclose(f);
}

int main(void)
{
    if (load() < 0) {
        fprintf(stderr, "cannot read " DATA "\n");
        return 1;
    }
    for (int mod = 0; mod < MOD_COUNT; mod++) {
        const char *name;
        for (int i = registry_next(mod, 0, &name); i >= 0; i = registry_next(mod, i + 1, &name)) {
            int id, lo, hi, style;
            const char *sig;
            if (registry_attr(mod, name, &id) != REG_FUNC) continue;
            registry_func_arity(id, &lo, &hi, &style, &sig);
            if (hi != AR_MANY) check_call(mod, name, hi + 1);
            if (lo > 0) check_call(mod, name, lo - 1);
        }
    }
    free(lines);
    /* counts with keywords, where the row and the impl's binding share the work; each
     * expectation is /usr/bin/python3's for the same program */
    static const struct { const char *src, *want; } kw[] = {
        { "import statistics\nstatistics.mean(data=[1, 2])\n", "1.5" },
        { "import numpy\nnumpy.var(ddof=1)\n",
          "TypeError: var() missing 1 required positional argument: 'a'" },
        { "import numpy\nnumpy.round(decimals=1)\n",
          "TypeError: round_() missing 1 required positional argument: 'a'" },
        { "import decimal\nround(decimal.Decimal('1.5'), 2, 3)\n",
          "TypeError: round() takes at most 2 arguments (3 given)" },
        { "import decimal\nabs(decimal.Decimal('-1'), 2)\n",
          "TypeError: abs() takes exactly one argument (2 given)" },
        { "sorted(key=abs)\n", "TypeError: sorted expected 1 argument, got 0" },
        { "import statistics\nstatistics.covariance([1, 2], y=[1, 2])\n",
          "TypeError: covariance() got some positional-only arguments passed as keyword "
          "arguments: 'y'" },
        { "import statistics as st\nst.mean(dat=[1])\n",
          "TypeError: mean() got an unexpected keyword argument 'dat'" },
        /* the built-in types' methods without keyword parameters */
        { "'abc'.replace('a', 'b', count=1)\n",
          "TypeError: str.replace() takes no keyword arguments" },
        { "[3, 1].index(1, start=0)\n", "TypeError: list.index() takes no keyword arguments" },
        { "{'a': 1}.get(key='a')\n", "TypeError: dict.get() takes no keyword arguments" },
        { "{1}.update(x=1)\n", "TypeError: set.update() takes no keyword arguments" },
        { "(1, 2).count(value=1)\n", "TypeError: tuple.count() takes no keyword arguments" },
        { "'a'.upper(x=1)\n", "TypeError: str.upper() takes no keyword arguments" },
        { "{}.pop(1, 2, 3, k=1)\n", "TypeError: dict.pop() takes no keyword arguments" },
        { "'a b'.split(maxsplit=1)\n", "['a', 'b']" },
        { "x = {}\nx.update(a=1)\nx\n", "{'a': 1}" },
        { "sorted([1, 3, 2], reverse=True)\n", "[3, 2, 1]" },
    };
    for (size_t i = 0; i < sizeof kw / sizeof kw[0]; i++) {
        int in = 0;
        char got[300] = "";
        if (run_src(kw[i].src, &in, got, sizeof got) < 0 || !in) {
            fprintf(stderr, "did not run in-process: %s", kw[i].src);
            t_fail++;
            continue;
        }
        if (strcmp(got, kw[i].want) == 0) {
            t_pass++;
        } else {
            fprintf(stderr, "%sgot [%s]\n  want [%s]\n", kw[i].src, got, kw[i].want);
            t_fail++;
        }
    }
    check_kwargs();
    return TEST_SUMMARY();
}
