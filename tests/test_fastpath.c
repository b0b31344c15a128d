/* tests/test_fastpath.c: the parser's fast path (parser/fast.c) against the tree-sitter path.
 *
 * The invariant: whenever the fast path accepts a source, the tree-sitter path gives CR_OK
 * and the identical IR, node by node, every field and every position, and the same
 * whitelist reasons, or both give the same error of CPython's later checks (parser_validate);
 * whenever it declines, parser_parse_python() gives exactly what the tree-sitter path gives.
 * Checked on every program of the Python corpus (CR_CORPUS, default ../shared/corpus; when
 * absent skipped with the reason, failed under CI), on snippets that must be accepted, and on
 * snippets that must be declined (syntax errors, constructs lowered as unsupported, forms
 * whose IR or positions the fast path does not reproduce). Prints the coverage. */
#include <dirent.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "parser/parser_int.h"
#include "tests/ir_compare.h"
#include "tests/testlib.h"

static parser_scratch scratch;
static cr_policy pol;

typedef struct {
    int fast_ok;        /* the fast path accepted */
    int ts_ok;          /* tree-sitter path: CR_OK */
    int inprocess;      /* ... with no reason */
    int fast_invalid;   /* the fast path accepted and parser_validate() rejected */
    const char *why;    /* why the fast path declined */
} outcome;

/* Both paths on one source; every disagreement is a failure printed with `label`. */
static outcome differential(const char *src, size_t len, const char *label)
{
    outcome o = { 0 };
    ir_module *f = NULL, *t = NULL, *full = NULL;
    cr_error e_ts = { 0 }, e_full = { 0 }, e_fast = { 0 };
    char why[512];
    cr_code frc = parser_fast(src, len, &pol.limits, &scratch, &f, &o.why);
    cr_code trc = parser_parse_python_ts(src, len, &pol.limits, &t, &e_ts);
    cr_code prc = parser_parse_python(src, len, &pol.limits, &full, &e_full);
    o.fast_ok = frc == CR_OK;
    o.ts_ok = trc == CR_OK;
    o.inprocess = trc == CR_OK && t->nreasons == 0;
    if (frc != CR_OK && frc != PARSER_FAST_DECLINED) {
        t_fail++;
        fprintf(stderr, "%s: fast path returned %d\n", label, (int)frc);
    }
    if (frc == CR_OK && (o.fast_invalid = parser_validate(f, src, len, &e_fast) != CR_OK)) {
        if (trc != CR_ESYNTAX || e_fast.line != e_ts.line || e_fast.col != e_ts.col ||
            strcmp(e_fast.message, e_ts.message) != 0) {
            t_fail++;
            fprintf(stderr, "%s: fast path + checks: %d:%d %s, tree-sitter path: %d:%d %s\n", label,
                    e_fast.line, e_fast.col, e_fast.message, e_ts.line, e_ts.col, e_ts.message);
        } else {
            t_pass++;
        }
    } else if (frc == CR_OK) {
        if (trc != CR_OK) {
            t_fail++;
            fprintf(stderr, "%s: fast path accepted, tree-sitter path: %d:%d %s\n", label,
                    e_ts.line, e_ts.col, e_ts.message);
        } else if (!ir_compare_nodes(f->root, t->root, why, sizeof why, 0)) {
            t_fail++;
            fprintf(stderr, "%s: IR differs: %s\n", label, why);
        } else {
            t_pass++;
        }
    }
    if (prc != trc) {
        t_fail++;
        fprintf(stderr, "%s: parser_parse_python %d, tree-sitter path %d\n", label, prc, trc);
    } else if (prc == CR_OK && !ir_compare_modules(full, t, why, sizeof why)) {
        t_fail++;
        fprintf(stderr, "%s: modules differ: %s\n", label, why);
    } else if (prc != CR_OK && (e_full.line != e_ts.line || e_full.col != e_ts.col ||
                                strcmp(e_full.message, e_ts.message) != 0)) {
        t_fail++;
        fprintf(stderr, "%s: errors differ: %s / %s\n", label, e_full.message, e_ts.message);
    }
    ir_module_free(f);
    ir_module_free(t);
    ir_module_free(full);
    return o;
}

/* Supported forms, each with positions that are easy to get wrong: the fast path must take
 * them, and give tree-sitter's IR. */
static const char *const accepted[] = {
    "x = 1\n",
    "x = 1",
    "\n\n# lead\n  \nx = 1\n\n\n",
    /* tree-sitter reads the tuple on into a subscript of the next line; CPython does not */
    "x = m, 2\n[c, d] = e\n", "if x:\n    y = m, 2  # c\n    [c, d] = e\n",
    "def solution():\n    a = 1  # t\n    return a  # last\n\nprint(solution())\n",
    "def f(a, b=2):\n    # c0\n    x = 1  # t\n    if x:\n        y = 2\n        # deep\n"
    "    # mid\n  # low\n    return (x, y)\n\n# end\nprint(f(1))\n",
    "def f():\n    for i in range(3):\n        x = 1 # a\n            # b\n      # c\n"
    "    # d\n# e\ny = 2",
    "def f():\n    if a:\n        b = 1\n    elif c:\n        b = 2\n    elif d:\n        b = 3\n"
    "    else:\n        b = 4\n    return b\n",
    "x = (a + b) * (c - d) / e ** -f ** g // h % i\n",
    "x = a | b ^ c & d << e >> f\n",
    "x = -a ** 2 + ~b - +c\n",
    "x = a < b <= c == d != e > f >= g\ny = a in b\nz = a not in b\nw = a is not None\nv = a is b\n",
    "x = not a and b or not (c or d) and e\n",
    "x = a if b else c if d else e\n",
    "x = f(a, b=1, *c, **d)\ny = g(1,)\nz = h()\n",
    "x = a.b.c(d)[e][1:2][::3][a:b:c][1:, 2][(1), 2]\n",
    "x = [1, 2, 3,]\ny = (1,)\nz = ()\nw = {}\nv = {1: 2, 'a': [3],}\nu = {1, 2}\n",
    "x = 'a' \"b\" '''c\nd''' r'\\n'\ny = 'tab\\tnl\\n\\x41\\u00e9\\101'\n",
    "x = f'{a:>10.2f} and {b!r} {c:,} {{lit}} {d:{w}.{p}f}' 'tail'\n",
    "x = f\"{a}\" f'{b:}' f''\ny = 'p' f'{a}' 's'\nz = F'{x[\"k\"]}'\n",
    "x = [i * 2 for i in range(10) if i % 2 if i > 3]\ny = {k: v for k, v in d.items()}\n"
    "z = sum(x for x in y)\nw = {a for a in b}\nv = list((a for a in b))\n",
    "a, b = 1, 2\n[c, d] = e\nf, *g = h\ni = j = k = 0\nl[0] = m.n = 1\n",
    "x += 1\ny[0] -= 2\nz.w *= 3\nv //= 4\nu **= 5\n",
    "for i, x in enumerate(y):\n    if x:\n        continue\n    break\nelse:\n    pass\n",
    "while x > 0:\n    x -= 1\nelse:\n    y = 2\n",
    "import math\nimport numpy as np, os.path\nfrom math import sqrt, log as ln\n",
    "x = 1e-3 + 2.5 + .5 + 1. + 1_000 + 1_000.5e+3 + 0 + 0.5\n",
    "x = True\ny = False\nz = None\nw = ...\n",
    "def f(x,\n      y=(1,\n         2)):\n    return x, y\n",
    "x = [\n    1,  # one\n    2,  # two\n]\n",
    "print(f'Answer: {round(x, 2)}%')\n",
    "def f():\n    return\n",
    "x = a[1:]\ny = a[:-1]\nz = a[:]\nw = a[::]\n",
    "def f():\n    x = 1\n\n\n\n    # trailing comment in f\n\n\n",
    "if a:\n    if b:\n        x = 1\n        # c1\n    # c2\n# c3\ny = 2\n",
    "x = 1\n# only a comment at the end",
    "x = 'é' + f'{y}€'  # ünïcode\n",
    "x = (  # why\n    a\n    + b  # more\n)\n",
    "", "\n\n", "  \n # c\n", "# c", "x0 = 93 - 103; ans = x0 / 103\n",
    "def f():\n    a = 1; b = 2  # c\n    return a\n",
    "[a, *b] = x\n(c, *d) = y\nfor e, *f in z:\n    pass\n",
    "if a:\n    b = 1\n    # in if\n        # deeper\n  # between\nelse:\n    c = 2  # t\n# out",
    "for i in x:\n    if i:\n        pass\n    # loop\n# top\n    # back in?\nz = 1\n",
    "def f():\n    def g():\n        return 1\n            # g\n    # f\n    return g\n",
    "while a:\n    a -= 1\n\n    # after blank\n\n\n# gone\n\n",
    "x = f'{a}{b}' f'{c!s:^{w}}' \"{d}\" f\"{e:{f}{g}}\"\n",
    "x = f'''{a}\n{b:>3}\n'''\ny = f\"\"\"x\"\"\"\n",
    "x = a[1:2, ::3]\ny = a[:, 0]\nz = a[(1), (2):(3)]\n",
    "def f(a, b=1, c=(2), d=[3]):\n    return (a)\n",
    "lambda: 1\n", "x = lambda a: a\n", "y = sorted(x, key=lambda t: t[1], reverse=True)\n",
    "f = lambda a, b=2: a + b\ng = lambda: x if y else z\nh = lambda a: lambda b: a * b\n",
    "x = 300,000\ny = 0_0 + 00\n",
    "raise ValueError('bad')\n", "raise\n", "raise E from e  # why\n",
    "try:\n    x = 1\nexcept E:\n    pass\n",
    "try:\n    x = 1 / y\nexcept (ZeroDivisionError, ValueError) as e:  # why\n    print(e)\n"
    "except KeyError:\n    pass\nexcept:\n    raise\nelse:\n    z = 2\nfinally:\n    w = 3\n# end\n",
    "def f(a):\n    try:\n        return 1 / a\n    finally:\n        print('done')\n\n    # trailing\n",
    "for i in r:\n    try:\n        continue\n    except (E) as e:\n        break\n    finally:\n"
    "        pass\nelse:\n    pass\n",
    "try:\n    try:\n        pass\n    except E:\n        pass\nexcept E as e:\n    raise F('x') from e\n",
    "try:\n    pass\nexcept E:\n    pass\n  # comment\nx = 1\n",
    "assert x > 0, f'{x} must be positive'\nassert y\n",
    "def f():\n    m = p * (r * (1 + r) ** n) / \\\n        ((1 + r) ** n - 1)\n    return m\n",
    "x = (a + 1) * \\\n    (b - 1) ** \\\n    2\n",
    NULL,
};

/* Must be declined: the fast path does not build these (syntax errors, unsupported
 * constructs, forms whose tree-sitter IR it does not reproduce). */
static const char *const declined[] = {
    "x = (1\n", "x = 1)\n", "x = [1, 2\n", "def f(:\n    pass\n", "x = = 1\n", "x +\n",
    "if x:\npass\n", "if x:\n    a = 1\n  b = 2\n", "  x = 1\n", "x = 1\n    y = 2\n",
    "if x: y = 1\n", "x = 1\r\ny = 2\n",
    "if x:\n\ty = 1\n", "x = 01\n", "x = 1j\n", "x = 0x1F\n", "x = 1L\n", "x = 1__0\n",
    "x = 1_\n", "x = 1.2.3\n", "x = 1if y else 2\n", "print x\n", "print 'a'\n",
    "exec('x')\n", "class A:\n    pass\n",
    "try:\n    pass\nexcept* E:\n    pass\n", "try:\n    pass\nexcept A if c else B as e:\n    pass\n",
    "try:\n    pass\nexcept E, e:\n    pass\n", "try:\n    pass\nexcept E as e.x:\n    pass\n",
    "try:\n    pass\nelse:\n    pass\n", "try:\n    pass\n", "x = 1; try:\n    pass\nfinally:\n    pass\n",
    "try: x = 1\nexcept E: pass\n",
    "with a as b:\n    pass\n", "x = lambda *a: a\n", "x = lambda a,: a\n",
    "x = [y for y in lambda: z]\n", "x = (y := 1)\n",
    "async def f():\n    pass\n", "x = yield 1\n", "del x\n", "global x\n", "assert\n", "assert a, b, c\n",
    "raise E, V\n", "raise E from\n", "x = b'a'\n", "x = u'a'\n", "x = '\\N{DASH}'\n", "x = '\\x4'\n",
    "x = f'{a=}'\n", "x = f'{a}}'\n", "x = f'{}'\n", "x = f'{a!x}'\n", "x = f'{a\\n}'\n",
    "x = 'abc\n", "x = '''abc\n", "return 1\n", "break\n", "for x in y:\n    pass\ncontinue\n",
    "f() = 1\n", "a + b = 1\n", "(a, b) += 1\n", "x = *a\n", "*a\n",
    "f(x for x in y, 1)\n", "def f(*a):\n    pass\n", "def f() -> int:\n    return 1\n",
    "x: int = 1\n", "@d\ndef f():\n    pass\n", "x = a if b\n", "x = [x for x in a, b]\n",
    "import .a\n", "from . import a\n", "from a import *\n", "from a import (b)\n", "from __future__ import division\n",
    "from a.\tb import c\n", "import a\t.b\n", "from a .b import c\n", "import a.\\\nb\n",
    "match = 1\n", "type = 1\n", "x = a.match\n", "nonlocal x\n", "x = __debug__\n",
    "x = 1 +\\ \n2\n", "x = 'a' 'b\n", "if x:\n",
    "def f():\n    pass\n  x = 1\n", "x = a not b\n", "x = a == not b\n", "x = ä\n",
    "x = f'{a:{b:{c}}}'\n", "x = f\"{'a' 'b'}\" f'{a:\\n}'\n",
    "x = 1 \f+ 2\n", "add(1, 2), ", "a, b,\nc = 1\n", "x = 1,\n", "def f():\n    return 1, 2,\n", "x = a * b, * (c)\n", "x = [*a, 1]\n", "(x) += 1\n",
    "f((*a, b))\n", "(o) = 2\n", "a, (b) = 1, 2\n", "for (i) in x:\n    pass\n",
    "x = 1;\n", "x = 1; if y:\n    pass\n", "def f():\n    x = (1 +\n  2)\n",
    "def f():\n    x = 1 + \\\n  2\n", "x = 1 + \\\n\n", "x = 1 \\ 2\n", "a, *\\\n z = range(2)\n", "x = (\\\n a)\n",
    "f(**\\\n k)\n", "x = [a for a in b if \\\n a]\n", "x = [i for i in range(3)] = 1\n", "x = (*a)\n", "for x, in y:\n    pass\n",
    NULL,
};

/* The grammar takes them, CPython does not: the fast path must build them, and the one check
 * both paths share must reject them alike. */
static const char *const invalid[] = {
    "f(a=1, a=2)\n", "f(a=1, b)\n", "f(**k, b)\n", "f(**k, *b)\n", "def f(a, a):\n    pass\n",
    "def f(a=1, b):\n    pass\n", "g = lambda a, b=1, c: a\n", "x = f(a=1,\n      b)\n",
    "x = f(g(a=1, b=2, a=3))\n", NULL,
};

static int corpus(const char *root)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/python", root);
    DIR *d = opendir(dir);
    if (!d) return -1;
    int shown = 0;
    size_t total = 0, fast = 0, fast_inproc = 0, inproc = 0, inproc_fast = 0;
    enum { MAXWHY = 64 };
    const char *whys[MAXWHY];
    size_t counts[MAXWHY], nwhy = 0;
    struct dirent *de;
    char **names = NULL;
    size_t nnames = 0;
    while ((de = readdir(d))) {
        size_t n = strlen(de->d_name);
        if (n < 7 || strcmp(de->d_name + n - 6, ".jsonl") != 0) continue;
        names = realloc(names, (nnames + 1) * sizeof *names);
        names[nnames++] = strdup(de->d_name);
    }
    closedir(d);
    SWEEP_BEGIN(sweep);   /* every program of the corpus: one check (tests/testlib.h) */
    for (size_t fi = 0; fi < nnames; fi++) {
        char path[8192];
        snprintf(path, sizeof path, "%s/%s", dir, names[fi]);
        FILE *in = fopen(path, "r");
        if (!in) continue;
        char *line = NULL;
        size_t cap = 0, lineno = 0;
        while (getline(&line, &cap, in) > 0) {
            lineno++;
            json_t *rec = json_loads(line, 0, NULL);
            json_t *p = rec ? json_object_get(rec, "program") : NULL;
            if (!json_is_string(p)) {
                json_decref(rec);
                continue;
            }
            char label[512];
            snprintf(label, sizeof label, "%s:%zu", names[fi], lineno);
            outcome o = differential(json_string_value(p), json_string_length(p), label);
            total++;
            fast += o.fast_ok;
            fast_inproc += o.fast_ok && o.inprocess;
            inproc += o.inprocess;
            inproc_fast += o.inprocess && o.fast_ok;
            if (o.inprocess && !o.fast_ok && o.why) {
                const char *show = getenv("CR_FASTPATH_SHOW");   /* examples of one reason */
                if (show && strcmp(show, o.why) == 0 && shown++ < 3)
                    printf("---- %s declined (%s):\n%s\n", label, o.why, json_string_value(p));
                size_t k = 0;
                while (k < nwhy && strcmp(whys[k], o.why) != 0) k++;
                if (k == nwhy && nwhy < MAXWHY) { whys[nwhy] = o.why; counts[nwhy++] = 0; }
                if (k < nwhy) counts[k]++;
            }
            json_decref(rec);
        }
        free(line);
        fclose(in);
        free(names[fi]);
    }
    SWEEP_END(sweep);
    free(names);
    printf("corpus: %zu programs; the fast path accepts %zu (%.1f%%), of which %zu (%.1f%%) "
           "the tree-sitter path routes in-process\n", total, fast,
           total ? 100.0 * fast / total : 0, fast_inproc, fast ? 100.0 * fast_inproc / fast : 0);
    printf("corpus: %zu programs route in-process; the fast path parses %zu of them (%.1f%%)\n",
           inproc, inproc_fast, inproc ? 100.0 * inproc_fast / inproc : 0);
    for (size_t k = 0; k < nwhy; k++)
        for (size_t j = k + 1; j < nwhy; j++)
            if (counts[j] > counts[k]) {
                size_t c = counts[j]; counts[j] = counts[k]; counts[k] = c;
                const char *w = whys[j]; whys[j] = whys[k]; whys[k] = w;
            }
    printf("declined among the in-process programs, most often:");
    for (size_t k = 0; k < nwhy && k < 8; k++) printf(" %s %zu;", whys[k], counts[k]);
    printf("\n");
    /* The coverage may only go up: raise the floor when the subset grows. */
    CHECK(inproc == 0 || (double)inproc_fast / (double)inproc >= 0.995);
    return 0;
}

/* Each snippet of `list` through differential(); the fast path must have taken it (ACCEPT),
 * declined it (DECLINE), or built it for parser_validate() to reject (INVALID). */
enum { ACCEPT, DECLINE, INVALID };

static void snippets(const char *const *list, const char *name, int want)
{
    static const char *const what[] = { "declined", "accepted", "not built and rejected" };
    for (int i = 0; list[i]; i++) {
        char label[64];
        snprintf(label, sizeof label, "%s[%d]", name, i);
        outcome o = differential(list[i], strlen(list[i]), label);
        int ok = want == ACCEPT ? o.fast_ok : want == DECLINE ? !o.fast_ok : o.fast_invalid;
        if (!ok) {
            t_fail++;
            fprintf(stderr, "%s: %s (%s): %s\n", label, what[want], o.why ? o.why : "-", list[i]);
        } else if (want == DECLINE) {
            t_pass++;
        }
    }
}

int main(void)
{
    cr_policy_default(&pol);
    snippets(accepted, "accepted", ACCEPT);
    snippets(declined, "declined", DECLINE);
    snippets(invalid, "invalid", INVALID);
    const char *root = getenv("CR_CORPUS");
    if (corpus(root && *root ? root : "../shared/corpus") < 0)
        UNAVAILABLE("no corpus at %s/python (set CR_CORPUS)",
                    root && *root ? root : "../shared/corpus");
    parser_scratch_free(&scratch);
    return TEST_SUMMARY();
}
