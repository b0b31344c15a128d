/* tests/test_parser.c: Python → IR lowering (exact ir_dump output), syntax errors with their
 * positions, limits, and every whitelist reason with its position and snippet. */
#include <pthread.h>
#include <stdint.h>

#include "ir/subset.h"
#include "parser/parser.h"
#include "tests/testlib.h"

static char out[65536];

/* The dump of the module, or "E<code> line:col message" when parsing failed. */
static const char *parse_n(const char *src, size_t len, const cr_limits *lim)
{
    cr_policy pol;
    cr_policy_default(&pol);
    ir_module *m = NULL;
    cr_error err = { 0 };
    cr_code rc = parser_parse_python(src, len, lim ? lim : &pol.limits, &m, &err);
    if (rc != CR_OK) {
        snprintf(out, sizeof out, "E%d %d:%d %s", (int)rc, err.line, err.col, err.message);
        return out;
    }
    cr_buf b;
    cr_buf_init(&b, 0);
    ir_dump(m->root, &b);
    snprintf(out, sizeof out, "%s", b.p);
    cr_buf_free(&b);
    ir_module_free(m);
    return out;
}

static const char *ir(const char *src) { return parse_n(src, strlen(src), NULL); }

/* src parsed under the default policy, or NULL with "E line:col message" in out. */
static ir_module *parse_default(const char *src)
{
    cr_policy pol;
    cr_policy_default(&pol);
    ir_module *m = NULL;
    cr_error err = { 0 };
    out[0] = '\0';
    if (parser_parse_python(src, strlen(src), &pol.limits, &m, &err) != CR_OK) {
        snprintf(out, sizeof out, "E %d:%d %s", err.line, err.col, err.message);
        return NULL;
    }
    return m;
}

/* Reasons as "code line:col [snippet]" joined by "; ", "" when none. */
static const char *reasons(const char *src)
{
    ir_module *m = parse_default(src);
    if (!m) return out;
    size_t at = 0;
    for (size_t i = 0; i < m->nreasons && at < sizeof out; i++) {
        const ir_reason *r = &m->reasons[i];
        at += (size_t)snprintf(out + at, sizeof out - at, "%s%s %d:%d [%s]", i ? "; " : "",
                               r->code, r->line, r->col, r->snippet);
    }
    ir_module_free(m);
    return out;
}

/* Extents "line:col-end_line:end_col" of every BINOP in pre-order, joined by " ". */
static void binop_extents(const ir_node *n, cr_buf *b)
{
    if (!n) return;
    if (n->kind == IR_BINOP) {
        char t[64];
        int k = snprintf(t, sizeof t, "%s%d:%d-%d:%d", b->len ? " " : "", n->line, n->col,
                         n->end_line, n->end_col);
        cr_buf_put(b, t, (size_t)k);
    }
    for (uint32_t i = 0; i < n->n; i++) binop_extents(n->kid[i], b);
}

static const char *binops(const char *src)
{
    ir_module *m = parse_default(src);
    if (!m) return out;
    cr_buf b;
    cr_buf_init(&b, 0);
    binop_extents(m->root, &b);
    snprintf(out, sizeof out, "%s", b.p ? b.p : "");
    cr_buf_free(&b);
    ir_module_free(m);
    return out;
}

static void test_literals(void)
{
    CHECK_STR(ir("x = 1 + 2.5\n"), "(module (assign (name x) (binop + (num 1) (num 2.5 float))))");
    CHECK_STR(ir("1_000; 0x1F; 1e-3; 1_0.5e3; .5\n"),
              "(module (expr (num 1_000)) (expr (num 0x1F)) (expr (num 1e-3 float)) "
              "(expr (num 1_0.5e3 float)) (expr (num .5 float)))");
    CHECK_STR(ir("True; False; None\n"), "(module (expr (bool True)) (expr (bool False)) (expr (none)))");
    /* `...` as a placeholder body or value: the evaluator has the Ellipsis constant, so it is
     * no reason (WL_NAME_AND_ELLIPSIS in parser/whitelist.c). */
    CHECK_STR(ir("def f():\n    ...\nx = ...  # to do\ny = [..., (...)]\n"),
              "(module (funcdef f (params) (block (expr (ellipsis)))) (assign (name x) (ellipsis)) "
              "(assign (name y) (list (ellipsis) (ellipsis))))");
    CHECK_STR(reasons("def solution():\n    ratio = ...\n    return ratio\n"), "");
    CHECK_STR(ir("'a' \"b\" '''c'''\n"), "(module (expr (str \"abc\")))");
    CHECK_STR(ir("'\\n\\t\\\\\\'\\x41\\u00e9\\101\\q'\n"), "(module (expr (str \"\\n\\t\\\\'A\xc3\xa9" "A\\\\q\")))");
    CHECK_STR(ir("r'\\n\\d'\n"), "(module (expr (str \"\\\\n\\\\d\")))");
    CHECK_STR(ir("'a\\\nb'\n"), "(module (expr (str \"ab\")))");
    CHECK_STR(ir("''\n"), "(module (expr (str \"\")))");
    CHECK_STR(ir("'\\x00'\n"), "(module (expr (str \"\\x00\")))");
}

static void test_fstrings(void)
{
    CHECK_STR(ir("f'a{x}b'\n"), "(module (expr (fstring (str \"a\") (format (name x) _) (str \"b\"))))");
    CHECK_STR(ir("f'{x!r:>{w}.2f}'\n"),
              "(module (expr (fstring (format (name x) (fstring (str \">\") (format (name w) _) "
              "(str \".2f\")) !r))))");
    CHECK_STR(ir("f'{{x}}'\n"), "(module (expr (fstring (str \"{x}\"))))");
    CHECK_STR(ir("'a' f'{b:,}' 'c'\n"),
              "(module (expr (fstring (str \"a\") (format (name b) (fstring (str \",\"))) (str \"c\"))))");
    CHECK_STR(ir("f'{x = }'\n"), "(module (expr (fstring (str \"x = \") (format (name x) _ !r))))");
    CHECK_STR(ir("f'{d[\"k\"]:.1%}'\n"),
              "(module (expr (fstring (format (subscript (name d) (str \"k\")) (fstring (str \".1%\"))))))");
}

static void test_operators(void)
{
    CHECK_STR(ir("a // b % c ** d @ e\n"),
              "(module (expr (binop @ (binop % (binop // (name a) (name b)) (binop ** (name c) (name d))) (name e))))");
    CHECK_STR(ir("a << 1 | b >> 2 & c ^ d\n"),
              "(module (expr (binop | (binop << (name a) (num 1)) (binop ^ (binop & (binop >> (name b) (num 2)) (name c)) (name d)))))");
    /* tree-sitter ranks ^ above &; the IR follows Python. */
    CHECK_STR(ir("a & b ^ c; a ^ b & c\n"),
              "(module (expr (binop ^ (binop & (name a) (name b)) (name c))) "
              "(expr (binop ^ (name a) (binop & (name b) (name c)))))");
    CHECK_STR(ir("a ** b ** c - d - e * f\n"),
              "(module (expr (binop - (binop - (binop ** (name a) (binop ** (name b) (name c))) (name d)) "
              "(binop * (name e) (name f)))))");
    CHECK_STR(ir("-a + +b - ~c\n"),
              "(module (expr (binop - (binop + (unary - (name a)) (unary + (name b))) (unary ~ (name c)))))");
    CHECK_STR(ir("not a and b or c\n"),
              "(module (expr (boolop or (boolop and (unary not (name a)) (name b)) (name c))))");
    CHECK_STR(ir("a < b <= c == d != e > f >= g\n"),
              "(module (expr (compare (name a) < (name b) <= (name c) == (name d) != (name e) > (name f) >= (name g))))");
    CHECK_STR(ir("a in b not in c is d is not e\n"),
              "(module (expr (compare (name a) in (name b) not-in (name c) is (name d) is-not (name e))))");
    CHECK_STR(ir("a if b else c\n"), "(module (expr (ifexp (name b) (name a) (name c))))");
    CHECK_STR(ir("((x))\n"), "(module (expr (name x)))");
    CHECK_STR(ir("-x ** 2\n"), "(module (expr (unary - (binop ** (name x) (num 2)))))");
    /* A BinOp spans its operands' parentheses, as CPython 3.11's ast has it (col_offset + 1,
     * what its tracebacks point at); parentheses around the whole operation are outside. */
    CHECK_STR(binops("print((3 + 4) / 0)\n"), "1:7-1:18 1:8-1:13");
    CHECK_STR(binops("x = ((a)) * (b - c) ** (d)\n"), "1:5-1:27 1:13-1:27 1:14-1:19");
    CHECK_STR(binops("y = (a +\n     b) % c + d * (e)\n"), "1:5-2:22 1:5-2:12 1:6-2:7 2:15-2:22");
    CHECK_STR(binops("z = (1 + 2)\n"), "1:6-1:11");
    {   /* past 16 operands the extents live on the heap */
        char want[512], src[128] = "(a)";
        size_t at = 0;
        for (int k = 20; k >= 1; k--) {
            strcat(src, " + 1");
            at += (size_t)snprintf(want + at, sizeof want - at, "%s1:1-1:%d", k < 20 ? " " : "",
                                   4 + 4 * k);
        }
        strcat(src, "\n");
        CHECK_STR(binops(src), want);
    }
}

static void test_calls_and_access(void)
{
    CHECK_STR(ir("f(1, *a, k=2, **kw)\n"),
              "(module (expr (call (name f) (num 1) (starred (name a)) (keyword k (num 2)) (dstarred (name kw)))))");
    CHECK_STR(ir("sum(x for x in y)\n"),
              "(module (expr (call (name sum) (genexp (name x) (compfor (name x) (name y))))))");
    CHECK_STR(ir("a.b.c\n"), "(module (expr (attr (attr (name a) b) c)))");
    CHECK_STR(ir("a[1]; a[1:2]; a[::3]; a[:, 0]; a[1,]\n"),
              "(module (expr (subscript (name a) (num 1))) (expr (subscript (name a) (slice (num 1) (num 2) _))) "
              "(expr (subscript (name a) (slice _ _ (num 3)))) (expr (subscript (name a) (tuple (slice _ _ _) (num 0)))) "
              "(expr (subscript (name a) (tuple (num 1)))))");
}

static void test_displays(void)
{
    CHECK_STR(ir("[1, 2]; (1,); (); {1}; {'a': 1, 2: b}; {}\n"),
              "(module (expr (list (num 1) (num 2))) (expr (tuple (num 1))) (expr (tuple)) (expr (set (num 1))) "
              "(expr (dict (str \"a\") (num 1) (num 2) (name b))) (expr (dict)))");
    CHECK_STR(ir("[x*y for x in a if x if x > 1 for y in b]\n"),
              "(module (expr (listcomp (binop * (name x) (name y)) (compfor (name x) (name a) (name x) "
              "(compare (name x) > (num 1))) (compfor (name y) (name b)))))");
    CHECK_STR(ir("{k: v for k, v in d.items()}\n"),
              "(module (expr (dictcomp (name k) (name v) (compfor (tuple (name k) (name v)) (call (attr (name d) items))))))");
    CHECK_STR(ir("{x for x in s}\n"), "(module (expr (setcomp (name x) (compfor (name x) (name s)))))");
    CHECK_STR(ir("a, b\n"), "(module (expr (tuple (name a) (name b))))");
    CHECK_STR(ir("[*a, 1]\n"), "(module (expr (list (starred (name a)) (num 1))))");
}

static void test_assignments(void)
{
    CHECK_STR(ir("a = b = 1\n"), "(module (assign (name a) (name b) (num 1)))");
    CHECK_STR(ir("a, *b = c\n"), "(module (assign (tuple (name a) (starred (name b))) (name c)))");
    CHECK_STR(ir("(a, b), [c] = x\n"), "(module (assign (tuple (tuple (name a) (name b)) (list (name c))) (name x)))");
    CHECK_STR(ir("x = 1, 2\n"), "(module (assign (name x) (tuple (num 1) (num 2))))");
    CHECK_STR(ir("d['k'] = o.a = 1\n"),
              "(module (assign (subscript (name d) (str \"k\")) (attr (name o) a) (num 1)))");
    CHECK_STR(ir("x += 1; y //= 2; z **= 3; w >>= 1\n"),
              "(module (augassign += (name x) (num 1)) (augassign //= (name y) (num 2)) "
              "(augassign **= (name z) (num 3)) (augassign >>= (name w) (num 1)))");
    CHECK_STR(ir("x: float = 1.5\ny: int\n"), "(module (assign (name x) (num 1.5 float)) (pass))");
}

static void test_statements(void)
{
    CHECK_STR(ir("if a:\n    x = 1\nelif b:\n    pass\nelse:\n    y = 2\n"),
              "(module (if (name a) (block (assign (name x) (num 1))) (if (name b) (block (pass)) "
              "(block (assign (name y) (num 2))))))");
    CHECK_STR(ir("if a: pass\n"), "(module (if (name a) (block (pass)) _))");
    CHECK_STR(ir("for i, v in enumerate(x):\n    continue\nelse:\n    pass\n"),
              "(module (for (tuple (name i) (name v)) (call (name enumerate) (name x)) (block (continue)) (block (pass))))");
    CHECK_STR(ir("while x:\n    break\n"), "(module (while (name x) (block (break)) _))");
    CHECK_STR(ir("def f(a, b=2, *args, c, **kw):\n    '''doc'''\n    return a\n"),
              "(module (funcdef f (params (param a) (param b (num 2)) (param *args) (param c) (param **kw)) "
              "(block (expr (str \"doc\")) (return (name a)))))");
    CHECK_STR(ir("def f(x: float = 0.5) -> float:\n    return\n"),
              "(module (funcdef f (params (param x (num 0.5 float))) (block (return _))))");
    CHECK_STR(ir("g = lambda x, y=1: x + y\n"),
              "(module (assign (name g) (lambda (params (param x) (param y (num 1))) (binop + (name x) (name y)))))");
    CHECK_STR(ir("h = lambda: 0\n"), "(module (assign (name h) (lambda (params) (num 0))))");
    CHECK_STR(ir("import math\nimport math as m, os.path\nfrom math import sqrt, pi as p\n"),
              "(module (import math math) (import math m) (import os.path os) "
              "(import_from math (name sqrt) sqrt) (import_from math (name pi) p))");
    CHECK_STR(ir("raise ValueError('x')\nraise\nraise E from None\n"),
              "(module (raise (call (name ValueError) (str \"x\")) _) (raise _ _) "
              "(raise (name E) (none)))");
    /* try: body, handlers (class or _, name or _, block), else, finally */
    CHECK_STR(ir("try:\n    x = 1\nexcept (A, B) as e:  # c\n    pass\nexcept C:\n    y = 2\n"
                 "except:\n    z = 3\nelse:\n    w = 4\nfinally:  # d\n    v = 5\n"),
              "(module (try (block (assign (name x) (num 1))) "
              "(except (tuple (name A) (name B)) (name e) (block (pass))) "
              "(except (name C) _ (block (assign (name y) (num 2)))) "
              "(except _ _ (block (assign (name z) (num 3)))) "
              "(block (assign (name w) (num 4))) (block (assign (name v) (num 5)))))");
    CHECK_STR(ir("try:\n    pass\nfinally:\n    pass\n"),
              "(module (try (block (pass)) _ (block (pass))))");
    CHECK_STR(ir("def f():\n    try: return 1\n    except E as e: return e\n"),
              "(module (funcdef f (params) (block (try (block (return (num 1))) "
              "(except (name E) (name e) (block (return (name e)))) _ _))))");
    /* with: items (manager, target or _) in order, then the block; parentheses around the
     * items group them, around one `as` target only group it */
    CHECK_STR(ir("with a() as b, c:\n    pass\nwith (d() as (e, f), g()):\n    x = 1\n"
                 "with (h()) as (i):\n    pass\n"),
              "(module (with (withitem (call (name a)) (name b)) (withitem (name c) _) (block (pass))) "
              "(with (withitem (call (name d)) (tuple (name e) (name f))) (withitem (call (name g)) _) "
              "(block (assign (name x) (num 1)))) "
              "(with (withitem (call (name h)) (name i)) (block (pass))))");
    CHECK_STR(ir("with (a, b) as c:\n    pass\n"),
              "(module (with (withitem (tuple (name a) (name b)) (name c)) (block (pass))))");
    CHECK_STR(ir("with a() as *b:\n    pass\n"), "E4 1:13 starred assignment target must be in a list or tuple");
    CHECK_STR(ir("with a() as f():\n    pass\n"), "E4 1:13 cannot assign to function call");
    CHECK_STR(ir("def f():\n    with a() as x:\n        pass\n    global x\n"),
              "E4 4:5 name 'x' is assigned to before global declaration");
    CHECK_STR(ir("assert x, 'm'\nassert y\n"),
              "(module (assert (name x) (str \"m\")) (assert (name y) _))");
    CHECK_STR(ir("del a[0], b\n"), "(module (del (subscript (name a) (num 0)) (name b)))");
    CHECK_STR(ir("def f():\n    global g, h\n"), "(module (funcdef f (params) (block (global (name g) (name h)))))");
    CHECK_STR(ir("# only a comment\nx = 1  # trailing\n"), "(module (assign (name x) (num 1)))");
    CHECK_STR(ir(""), "(module)");
    CHECK_STR(ir("x = 1\r\nif x:\r\n\ty = 2\r\n"),
              "(module (assign (name x) (num 1)) (if (name x) (block (assign (name y) (num 2))) _))");
    CHECK_STR(ir("s = '''a\r\nb'''\r\n"), "(module (assign (name s) (str \"a\\nb\")))");
}

static void test_unsupported(void)
{
    CHECK_STR(ir("class A:\n    x = 1\n"),
              "(module (unsupported class_definition (name A) (block (assign (name x) (num 1)))))");
    CHECK_STR(reasons("class A:\n    import pandas\n"),
              "node:class_definition 1:1 [class A:]; import:pandas 2:5 [import pandas]");
    /* `with` enters only the managers the evaluator has (decimal's localcontext), with the
     * arguments it takes; what is inside is looked at as anywhere */
    CHECK_STR(reasons("with open('f') as f:\n    pass\n"),
              "with:open 1:6 [open('f')]; call:open 1:6 [open('f')]");
    CHECK_STR(reasons("import decimal as d\nfrom decimal import localcontext as lc\n"
                      "with d.localcontext() as c, lc(prec=5) as c2:\n    c.prec = 3\n"
                      "with d.localcontext(d.getcontext(), 4, d.ROUND_UP):\n    pass\n"), "");
    CHECK_STR(reasons("from decimal import *\nwith localcontext(rounding=ROUND_UP):\n    pass\n"), "");
    CHECK_STR(reasons("import decimal\nm = decimal.localcontext()\nwith m:\n    pass\n"
                      "with decimal.getcontext():\n    pass\nwith localcontext():\n    pass\n"),
              "with:name 3:6 [m]; with:getcontext 5:6 [decimal.getcontext()]; "
              "with:localcontext 7:6 [localcontext()]");
    CHECK_STR(reasons("import decimal\nwith decimal.localcontext(emin=-9):\n    import os\n"
                      "m = decimal.localcontext(None, 1, None, 3, 4, 1, 0, [], [], 5)\n"
                      "n = decimal.localcontext(Emin=-9, Emax=9, clamp=1, traps=[], flags=[])\n"),
              "args:decimal.localcontext 2:6 [decimal.localcontext(emin=-9)]; import:os 3:5 [import os]; "
              "args:decimal.localcontext 4:5 [decimal.localcontext(None, 1, None, 3, 4, 1, 0, [], [], 5)]");
    /* decimal.Context with what the evaluator's contexts have (prec, rounding); it is no
     * manager */
    CHECK_STR(reasons("import decimal\nfrom decimal import Context\n"
                      "decimal.setcontext(decimal.Context(prec=5, rounding=decimal.ROUND_UP))\n"
                      "c = Context(4, 'ROUND_DOWN')\n"), "");
    CHECK_STR(reasons("import decimal\nc = decimal.Context(emin=-9)\nd = decimal.Context(1, 2, 3, 4, 5, 6, 7, 8, 9)\n"
                      "with decimal.Context():\n    pass\n"),
              "args:decimal.Context 2:5 [decimal.Context(emin=-9)]; "
              "args:decimal.Context 3:5 [decimal.Context(1, 2, 3, 4, 5, 6, 7, 8, 9)]; "
              "with:Context 4:6 [decimal.Context()]");
    CHECK_STR(reasons("async def f():\n    async with g():\n        pass\n"),
              "node:async 1:1 [async def f():]; node:async 2:5 [async with g():]");
    CHECK_STR(reasons("try:\n    x = 1\nexcept Exception:\n    pass\n"), "");
    /* exception groups are not in the subset; what is inside is still looked at */
    CHECK_STR(reasons("try:\n    import os\nexcept* ValueError:\n    pass\n"),
              "node:except_group_clause 1:1 [try:]; import:os 2:5 [import os]");
    /* `except E as e` inside an unsupported construct is still lowered */
    CHECK_STR(reasons("class A:\n    try:\n        pass\n    except E as e:\n        open(e)\n"),
              "node:class_definition 1:1 [class A:]; call:open 5:9 [open(e)]");
    CHECK_STR(reasons("async def f():\n    pass\n"), "node:async 1:1 [async def f():]");
    CHECK_STR(reasons("def g():\n    yield 1\n"), "node:yield 2:5 [yield 1]");
    CHECK_STR(reasons("async def f():\n    await g()\n"),
              "node:async 1:1 [async def f():]; node:await 2:5 [await g()]");
    CHECK_STR(reasons("if (n := 10) > 5:\n    pass\n"), "node:named_expression 1:5 [n := 10]");
    CHECK_STR(reasons("match x:\n    case 1:\n        pass\n"), "node:match_statement 1:1 [match x:]; node:case_clause 2:5 [case 1:]");
    CHECK_STR(reasons("@dec\ndef f():\n    pass\n"), "node:decorated_definition 1:1 [@dec]");
    CHECK_STR(reasons("x = b'ab'\n"), "node:bytes 1:5 [b'ab']");
    CHECK_STR(reasons("x = 1j + 2.5J\n"), "node:imaginary 1:5 [1j]; node:imaginary 1:10 [2.5J]");
    CHECK_STR(reasons("d = {**a}\n"), "node:dictionary_splat 1:6 [**a]");
    CHECK_STR(reasons("def f(a, *, b):\n    pass\n"), "node:keyword_separator 1:10 [*]");
    CHECK_STR(reasons("def f():\n    nonlocal x\n"), "node:nonlocal_statement 2:5 [nonlocal x]");
    CHECK_STR(reasons("from __future__ import division\n"),
              "node:future_import_statement 1:1 [from __future__ import division]");
    CHECK_STR(reasons("x = '\\N{BULLET}'\n"), "node:escape_sequence 1:5 ['\\N{BULLET}']");
}

static void test_whitelist(void)
{
    CHECK_STR(reasons("import math\nimport math as m\nfrom math import sqrt\n"
                      "x = math.sqrt(2) + m.log(3) + sqrt(4) + math.pi + m.e\n"), "");
    CHECK_STR(reasons("import pandas as pd\nimport scipy.optimize\nfrom scipy.optimize import fsolve\n"),
              "import:pandas 1:1 [import pandas as pd]; import:scipy.optimize 2:1 [import scipy.optimize]; "
              "import:scipy.optimize 3:1 [from scipy.optimize import fsolve]");
    /* a module of the subset, a name it lacks */
    CHECK_STR(reasons("from scipy.stats import t\nimport scipy.stats as st\nx = st.binom.pmf(1, 2, 0.5)\n"),
              "import:scipy.stats.t 1:1 [from scipy.stats import t]; "
              "method:.pmf 3:5 [st.binom.pmf(1, 2, 0.5)]; attr:scipy.stats.binom 3:5 [st.binom]");
    /* scipy.stats.norm's functions are in the subset on numbers; an array argument is not */
    CHECK_STR(reasons("from scipy.stats import norm\nx = norm.cdf(1.5) + norm.ppf(0.9, loc=2)\n"
                      "y = norm.cdf([1, 2])\nz = norm.pdf(0, scale=(1, 2))\nv = norm.sf(i for i in [1])\n"),
              "args:.cdf 3:5 [norm.cdf([1, 2])]; args:.pdf 4:5 [norm.pdf(0, scale=(1, 2))]; "
              "args:.sf 5:5 [norm.sf(i for i in [1])]");
    CHECK_STR(reasons("from math import fmod\n"), "import:math.fmod 1:1 [from math import fmod]");
    /* `from math import *` runs in-process at module level; a name it would bind that the
     * evaluator's math lacks is a reason wherever it appears, as is the import in a def
     * (CPython's SyntaxError, which the sandbox reports). */
    CHECK_STR(reasons("from math import *\nfrom math import sqrt, pi\nx = sqrt(pi) + pow(2, 3) + e\n"
                      "def f(y):\n    return floor(y) + inf\n"), "");
    CHECK_STR(reasons("from math import *\nx = hypot(3, 4) + fmod\ngcd = 1\ndef lcm(): pass\n"),
              "import:math.hypot 2:5 [hypot]; import:math.fmod 2:19 [fmod]; import:math.gcd 3:1 [gcd]; "
              "import:math.lcm 4:1 [def lcm(): pass]");
    CHECK_STR(reasons("x = hypot(3, 4)\n"), "");
    CHECK_STR(reasons("import math\nx = math.isnan(math.nan) or math.isinf(1) or math.isfinite(2)\n"
                      "from math import nan, isnan\n"), "");
    CHECK_STR(reasons("def f():\n    from math import *\n"),
              "import:math.* 2:5 [from math import *]");
    /* the same for decimal's star import: what the registry lacks (most signal classes) is
     * a reason where it is used, and only there */
    CHECK_STR(reasons("from decimal import *\nx = Decimal('1.5').quantize(Decimal('0.1'), ROUND_HALF_UP)\n"
                      "getcontext().prec = 5\n"), "");
    CHECK_STR(reasons("from decimal import *\nc = localcontext()\ne = Clamped\nf = InvalidOperation\n"),
              "import:decimal.Clamped 3:5 [Clamped]");
    CHECK_STR(reasons("def f():\n    from decimal import *\n"),
              "import:decimal.* 2:5 [from decimal import *]");
    CHECK_STR(reasons("import math as m\ny = m.fmod(3) + m.frexp\n"),
              "call:math.fmod 2:5 [m.fmod(3)]; attr:math.frexp 2:17 [m.frexp]");
    CHECK_STR(reasons("x = 1\n  \ny = open('f').read()\n"),
              "method:.read 3:5 [open('f').read()]; call:open 3:5 [open('f')]");
    CHECK_STR(reasons("input()\neval('1')\nexec('x')\n__import__('os')\ngetattr(o, 'a')\nglobals()\n"),
              "call:input 1:1 [input()]; call:eval 2:1 [eval('1')]; call:exec 3:1 [exec('x')]; "
              "call:__import__ 4:1 [__import__('os')]; call:getattr 5:1 [getattr(o, 'a')]; "
              "call:globals 6:1 [globals()]");
    CHECK_STR(reasons("type = 3\ntype(x)\nf = eval\n"),
              "call:type 2:1 [type(x)]; name:eval 3:5 [eval]");
    /* Neither bound nor a builtin: the evaluator raises NameError in-process. */
    CHECK_STR(reasons("g(1)\nprint(solution())\n"), "");
    /* Builtins outside the whitelist need CPython, 3.10 and 3.11 additions included. */
    CHECK_STR(reasons("hex(1)\nascii(2)\naiter(x)\nExceptionGroup('m', [])\nlicense()\n__build_class__()\n"),
              "call:hex 1:1 [hex(1)]; call:ascii 2:1 [ascii(2)]; call:aiter 3:1 [aiter(x)]; "
              "call:ExceptionGroup 4:1 [ExceptionGroup('m', [])]; call:license 5:1 [license()]; "
              "call:__build_class__ 6:1 [__build_class__()]");
    CHECK_STR(reasons("def hex(x):\n    return x\nhex(1)\n"), "");    CHECK_STR(reasons("def f(k):\n    return k(2)\nh = lambda: 1\nh()\nfor p in []:\n    p()\nf(abs)\n"), "");
    CHECK_STR(reasons("x = [1]\nx.append(2)\n'{:.2f}'.format(3)\nd = {}\nd.items()\n"), "");
    CHECK_STR(reasons("df.head()\n"), "method:.head 1:1 [df.head()]");
    CHECK_STR(reasons("y = x.real\nobj.__class__\n"),
              "attr:.real 1:5 [x.real]; attr:.__class__ 2:1 [obj.__class__]");
    /* `__name__` is read-only: binding it is a reason, reading it is not (the evaluator gives
     * it "__main__"; WL_NAME_AND_ELLIPSIS in parser/whitelist.c). Other dunder names are
     * reasons. */
    CHECK_STR(ir("if __name__ == '__main__':\n    print(solution())\n"),
              "(module (if (compare (name __name__) == (str \"__main__\")) "
              "(block (expr (call (name print) (call (name solution))))) _))");
    CHECK_STR(reasons("if __name__ == '__main__':\n    print(solution())\n"), "");
    CHECK_STR(reasons("__name__ = 'x'\n__name__ += 'y'\nfor __name__ in []:\n    pass\n"
                      "def __name__(__name__):\n    pass\n"),
              "name:__name__ 1:1 [__name__]; name:__name__ 2:1 [__name__]; name:__name__ 3:5 [__name__]; "
              "name:__name__ 5:1 [def __name__(__name__):]; name:__name__ 5:14 [__name__]");
    CHECK_STR(reasons("x = __file__ or __builtins__\n__name__()\n"),
              "name:__file__ 1:5 [__file__]; name:__builtins__ 1:17 [__builtins__]; "
              "call:__name__ 2:1 [__name__()]");
    CHECK_STR(reasons("o.x = 1\n"), "attr:.x 1:1 [o.x]");
    /* an exception's args may be read, not written (CPython lets a program set them) */
    CHECK_STR(reasons("try:\n    pass\nexcept ValueError as e:\n    a = e.args\n"
                      "    e.args = ()\n    e.args += (1,)\n    del e.args\n"),
              "attr:.args 5:5 [e.args]; attr:.args 6:5 [e.args]; attr:.args 7:9 [e.args]");
    CHECK_STR(reasons("import math\nx = math.args\n"), "attr:math.args 2:5 [math.args]");
    CHECK_STR(reasons("x = ValueError.args\ny = ValueError('v').args\n"),
              "attr:.args 1:5 [ValueError.args]; attr:.args 2:5 [ValueError('v').args]");
    /* every exception class the evaluator raises can be named and caught */
    CHECK_STR(reasons("try:\n    pass\nexcept (BaseException, Exception, ArithmeticError, "
                      "ZeroDivisionError, OverflowError, LookupError, IndexError, KeyError, "
                      "ValueError, TypeError, NameError, UnboundLocalError, AttributeError, "
                      "RuntimeError, RecursionError, AssertionError):\n    raise RuntimeError('x')\n"), "");
    /* a builtin the evaluator lacks is a NameError in-process: reading one is a reason,
     * unless the program binds the name */
    CHECK_STR(reasons("try:\n    pass\nexcept (OSError, ValueError):\n    pass\nf = hex\n"),
              "name:OSError 3:9 [OSError]; name:hex 5:5 [hex]");
    CHECK_STR(reasons("hex = 1\nf = hex + 1\nx = Ellipsis\n"), "");
    CHECK_STR(reasons("print(round(abs(-1.5)), max(1, 2), len([]), sorted([2, 1]))\n"), "");
    /* dir(builtins) of CPython 3.11.2: 157 names, sorted (looked up by binary search), and
     * a superset of the registry's builtins. */
    int n = 0, sorted = 1, superset = 1, nb = 0;
    for (const char *const *p = parser_python_builtins; *p; p++, n++)
        if (n && strcmp(p[-1], p[0]) >= 0) sorted = 0;
    const char *name;
    for (int i = registry_next(MOD_NONE, 0, &name); i >= 0; i = registry_next(MOD_NONE, i + 1, &name), nb++) {
        int found = 0;
        for (const char *const *q = parser_python_builtins; *q && !found; q++) found = strcmp(name, *q) == 0;
        if (!found) superset = 0;
    }
    CHECK(nb >= 35);
    CHECK_INT(n, 157);
    CHECK(sorted);
    CHECK(superset);
}

static void test_syntax_errors(void)
{
    CHECK_STR(ir("x = (1 + 2\n"), "E4 1:5 '(' was never closed");
    CHECK_STR(ir("x = 1 )\n"), "E4 1:7 unmatched ')'");
    CHECK_STR(ir("def f(:\n    pass\n"), "E4 1:7 missing ')'");
    CHECK_STR(ir("x = 1\ny = $\n"), "E4 2:5 unexpected '$'");
    /* Where CPython's parser stops (each line and column is CPython 3.11's), not where
     * tree-sitter's recovery began: the token the parser could not take, ... */
    CHECK_STR(ir("a b\n"), "E4 1:3 unexpected 'b'");
    CHECK_STR(ir("x = 5 5\n"), "E4 1:7 unexpected '5'");
    CHECK_STR(ir("x = 1 +\\\n  2 3\n"), "E4 2:5 unexpected '3'");
    CHECK_STR(ir("x = (1,\n  2) 3\n"), "E4 2:6 unexpected '3'");
    CHECK_STR(ir("x = \xe2\x82\xac\n"), "E4 1:5 unexpected '\xe2\x82\xac'");
    /* ... or the line break that ends a statement cut short, or the end of the input ... */
    CHECK_STR(ir("x = 1 +\n"), "E4 1:8 invalid syntax");
    CHECK_STR(ir("y = 2 *\nz = 3\n"), "E4 1:8 invalid syntax");
    CHECK_STR(ir("x = 1 +"), "E4 1:8 invalid syntax");
    /* ... where a compound statement's header wants its colon. */
    CHECK_STR(ir("if x\n    y = 1\n"), "E4 1:5 expected ':'");
    CHECK_STR(ir("for i in range(3)\n    print(i)\n"), "E4 1:18 expected ':'");
    CHECK_STR(ir("def f(x)\n    return x\n"), "E4 1:9 expected ':'");
    CHECK_STR(ir("print 'x'\n"), "E4 1:1 Missing parentheses in call to 'print'");
    CHECK_STR(ir("x = 0777\n"), "E4 1:5 leading zeros in decimal integer literals are not permitted");
    CHECK_STR(ir("x = 0_7\n"), "E4 1:5 leading zeros in decimal integer literals are not permitted");
    CHECK_STR(ir("x = 0_0 + 00\n"), "(module (assign (name x) (binop + (num 0_0) (num 00))))");
    CHECK_STR(ir("return 1\n"), "E4 1:1 'return' outside function");
    CHECK_STR(ir("break\n"), "E4 1:1 'break' outside loop");
    CHECK_STR(ir("def f():\nx = 1\n"), "E4 1:9 expected an indented block");
    CHECK_STR(ir("def f():\n    a = 1\n   b = 2\n"), "E4 3:4 unindent does not match any outer indentation level");
    CHECK_STR(ir("x = 1\n    y = 2\n"), "E4 2:5 unexpected indent");
    CHECK_STR(ir("x = a *\n    b\n"), "E4 2:5 invalid syntax (a line break ends the statement)");
    /* tree-sitter reads these on into a subscript or a call of the next line; CPython ends
     * the statement at the line break, and so do we. */
    CHECK_STR(ir("x = m, 2\n[c, d] = e\n"),
              "(module (assign (name x) (tuple (name m) (num 2))) (assign (list (name c) (name d)) (name e)))");
    CHECK_STR(ir("m, 2\n[c, d] = e\n"),
              "(module (expr (tuple (name m) (num 2))) (assign (list (name c) (name d)) (name e)))");
    CHECK_STR(ir("x = 1, 2  # t\n(y) = 3\nz = 4\n"),
              "(module (assign (name x) (tuple (num 1) (num 2))) (assign (name y) (num 3)) (assign (name z) (num 4)))");
    CHECK_STR(ir("x = a *\n[b]\n"), "E4 2:1 invalid syntax (a line break ends the statement)");
    /* except clauses as CPython's grammar and compiler take them */
    CHECK_STR(ir("raise E, V\n"), "E4 1:8 invalid syntax");
    CHECK_STR(ir("x = 1\nraise  E , V, T\n"), "E4 2:10 invalid syntax");
    CHECK_STR(ir("raise (E, V)\n"), "(module (raise (tuple (name E) (name V)) _))");
    CHECK_STR(ir("try:\n    pass\nexcept E, e:\n    pass\n"),
              "E4 3:8 multiple exception types must be parenthesized");
    CHECK_STR(ir("try:\n    pass\nexcept E as e.x:\n    pass\n"), "E4 3:14 invalid syntax");
    CHECK_STR(ir("try:\n    pass\nexcept E as (a):\n    pass\n"), "E4 3:13 invalid syntax");
    CHECK_STR(ir("try:\n    pass\nexcept:\n    pass\nexcept E:\n    pass\n"),
              "E4 3:1 default 'except:' must be last");
    CHECK_STR(ir("try:\n    pass\nexcept E as __debug__:\n    pass\n"),
              "E4 3:1 cannot assign to __debug__");
    CHECK_STR(ir("def f():\n    try:\n        pass\n    except E as g:\n        pass\n    global g\n"),
              "E4 6:5 name 'g' is assigned to before global declaration");
    CHECK_STR(ir("for i in x:\n    try:\n        pass\n    finally:\n        continue\n"),
              "(module (for (name i) (name x) (block (try (block (pass)) _ (block (continue)))) _))");
    /* CPython's tokenizer names an unterminated string, and the line where it gave up. */
    CHECK_STR(ir("ans = 'abc\n"), "E4 1:7 unterminated string literal (detected at line 1)");
    CHECK_STR(ir("ans = \"abc\\\ndef\n"), "E4 1:7 unterminated string literal (detected at line 2)");
    CHECK_STR(ir("x = 1\nans = f'abc\n"), "E4 2:7 unterminated string literal (detected at line 2)");
    CHECK_STR(ir("ans = rb'abc"), "E4 1:7 unterminated string literal (detected at line 1)");
    CHECK_STR(ir("ans = 'a' + 'abc\ny = 2\n"), "E4 1:13 unterminated string literal (detected at line 1)");
    CHECK_STR(ir("ans = '''abc\nx = 1\n\n"),
              "E4 1:7 unterminated triple-quoted string literal (detected at line 3)");
    /* Augmented assignment takes a name, an attribute or a subscript only (CPython's words);
     * parentheses around a target only group, as in CPython. */
    CHECK_STR(ir("() += 1\n"), "E4 1:1 'tuple' is an illegal expression for augmented assignment");
    CHECK_STR(ir("a, b += 1\n"), "E4 1:1 'tuple' is an illegal expression for augmented assignment");
    CHECK_STR(ir("x = 1\n[a] += 1\n"),
              "E4 2:1 'list' is an illegal expression for augmented assignment");
    /* `*g(1)` after another argument: tree-sitter-python reads a call of `*g`; CPython (and
     * this IR) a starred call. */
    CHECK_STR(ir("print(1, *g(1)(2))\n"),
              "(module (expr (call (name print) (num 1) (starred (call (call (name g) (num 1)) (num 2))))))");
    CHECK_STR(ir("(x) = 1\n"), "(module (assign (name x) (num 1)))");
    CHECK_STR(ir("(x) += 1\n"), "(module (augassign += (name x) (num 1)))");
    CHECK_STR(ir("(x,) = y\n"), "(module (assign (tuple (name x)) (name y)))");
    CHECK_STR(ir("for (i) in r:\n    pass\n"), "(module (for (name i) (name r) (block (pass)) _))");
    CHECK_STR(ir("x = (a *\n    b)\ny = a + \\\n  b\n"),
              "(module (assign (name x) (binop * (name a) (name b))) (assign (name y) (binop + (name a) (name b))))");
}

/* What CPython does after its grammar accepted a program (parser/validate.c), on either path;
 * each message and position is CPython 3.11's. */
static void test_cpython_checks(void)
{
    /* Identifiers are NFKC-normalised (PEP 3131): fullwidth letters, ligatures, script forms. */
    CHECK_STR(ir("\xef\xbd\x81\xef\xbd\x8e\xef\xbd\x93 = 5\n"), "(module (assign (name ans) (num 5)))");
    CHECK_STR(ir("\xef\xac\x81 = 3\nans = fi + 1\n"),
              "(module (assign (name fi) (num 3)) (assign (name ans) (binop + (name fi) (num 1))))");
    CHECK_STR(ir("\xe2\x84\x8c = 2\n"), "(module (assign (name H) (num 2)))");
    CHECK_STR(ir("f(\xef\xbd\x8b=x.\xef\xbd\x92" "eal)\n"),
              "(module (expr (call (name f) (keyword k (attr (name x) real)))))");
    CHECK_STR(ir("def \xef\xbd\x86(\xef\xbd\x81=1):\n    return \xef\xbd\x81\n"),
              "(module (funcdef f (params (param a (num 1))) (block (return (name a)))))");
    CHECK_STR(ir("import \xef\xbd\x8d\xef\xbd\x81\xef\xbd\x94\xef\xbd\x88\n"), "(module (import math math))");
    {   /* ... its length too (the fuzzer compared 12 bytes of the 4 of "math") */
        cr_policy pol;
        cr_policy_default(&pol);
        ir_module *m = NULL;
        const char *src = "import \xef\xbd\x8d\xef\xbd\x81\xef\xbd\x94\xef\xbd\x88\n";
        CHECK(parser_parse_python(src, strlen(src), &pol.limits, &m, NULL) == CR_OK);
        CHECK(m && m->root->n == 1 && m->root->kid[0]->len == 4);
        ir_module_free(m);
    }
    /* The whitelist sees the normalised name: `__ｃlass__` is `__class__`. */
    CHECK_STR(reasons("y = x.__\xef\xbd\x83" "lass__\n"), "attr:.__class__ 1:5 [x.__\xef\xbd\x83" "lass__]");
    CHECK_STR(ir("def f(a, \xef\xbd\x81):\n    pass\n"), "E4 1:10 duplicate argument 'a' in function definition");

    /* Parameters. */
    CHECK_STR(ir("def f(a, a):\n    return a\n"), "E4 1:10 duplicate argument 'a' in function definition");
    CHECK_STR(ir("def f(a, *a):\n    pass\n"), "E4 1:11 duplicate argument 'a' in function definition");
    CHECK_STR(ir("def f(a, **a):\n    pass\n"), "E4 1:12 duplicate argument 'a' in function definition");
    CHECK_STR(ir("g = lambda a, a: 1\n"), "E4 1:15 duplicate argument 'a' in function definition");
    CHECK_STR(ir("def f(a, b, c, a=1):\n    pass\n"), "E4 1:16 duplicate argument 'a' in function definition");
    CHECK_STR(ir("def f(a=1, b):\n    return a\n"), "E4 1:12 non-default argument follows default argument");
    CHECK_STR(ir("f = lambda a=1, b: a\n"), "E4 1:17 non-default argument follows default argument");
    CHECK_STR(ir("def f(**k, a):\n    pass\n"), "E4 1:12 arguments cannot follow var-keyword argument");
    CHECK_STR(ir("def f(*a, *b):\n    pass\n"), "E4 1:11 * argument may appear only once");
    CHECK_STR(ir("x = 1\nans = f'{x!r }'\n"), "E4 2:16 f-string: expecting '}'");
    /* `/` keeps the parameters before and after it positional; a bare `*` does not. */
    CHECK_STR(reasons("def f(a, /, *b):\n    pass\n"), "node:positional_separator 1:10 [/]");
    CHECK_STR(ir("def f(a=1, /, b):\n    pass\n"), "E4 1:15 non-default argument follows default argument");
    CHECK_STR(ir("def f(a, *, b, *c):\n    pass\n"), "E4 1:16 * argument may appear only once");
    CHECK_STR(reasons("def f(a, *, b, c=1, d):\n    pass\n"), "node:keyword_separator 1:10 [*]");
    /* The parser's error comes before the symbol table's, wherever they stand. */
    CHECK_STR(ir("def g(a, a):\n    pass\ndef f(a=1, b):\n    pass\n"),
              "E4 3:12 non-default argument follows default argument");
    CHECK_STR(ir("def f(a=1, *b, c):\n    pass\n"),
              "(module (funcdef f (params (param a (num 1)) (param *b) (param c)) (block (pass))))");

    /* Call arguments. */
    CHECK_STR(ir("ans = f(a=1, a=2)\n"), "E4 1:14 keyword argument repeated: a");
    CHECK_STR(ir("ans = f(a=1, 2)\n"), "E4 1:15 positional argument follows keyword argument");
    CHECK_STR(ir("ans = f(a=1,\n 2,\n b=3)\n"), "E4 3:5 positional argument follows keyword argument");
    CHECK_STR(ir("ans = g(f(a=1, 2))\n"), "E4 1:17 positional argument follows keyword argument");
    CHECK_STR(ir("ans = f(b=1, *c, d)\n"), "E4 1:19 positional argument follows keyword argument");
    CHECK_STR(ir("ans = f(**k, 2)\n"), "E4 1:15 positional argument follows keyword argument unpacking");
    CHECK_STR(ir("ans = f(**k, *a)\n"),
              "E4 1:9 iterable argument unpacking follows keyword argument unpacking");
    CHECK_STR(ir("f(*a, b=1, *c)\n"),
              "(module (expr (call (name f) (starred (name a)) (keyword b (num 1)) (starred (name c)))))");

    /* f-string conversions: CPython places the error at the token after the literal(s). */
    CHECK_STR(ir("x = 1\nans = f'{x!z}'\n"),
              "E4 2:15 f-string: invalid conversion character: expected 's', 'r', or 'a'");
    CHECK_STR(ir("ans = f'{x!z}' + 'a'  # c\n"),
              "E4 1:16 f-string: invalid conversion character: expected 's', 'r', or 'a'");
    CHECK_STR(ir("ans = f'{x!z}'  # c\n"),
              "E4 1:17 f-string: invalid conversion character: expected 's', 'r', or 'a'");
    CHECK_STR(ir("ans = (f'{x!z}'\n  'b')\n"),
              "E4 2:6 f-string: invalid conversion character: expected 's', 'r', or 'a'");
    CHECK_STR(ir("ans = f'{x!r:>{x!q}}'\n"),
              "E4 1:22 f-string: invalid conversion character: expected 's', 'r', or 'a'");

    /* `global` after the name was used, assigned or is a parameter, in the same scope. */
    CHECK_STR(ir("x = 1\nprint(x)\nglobal x\nans = x\n"), "E4 3:1 name 'x' is used prior to global declaration");
    CHECK_STR(ir("def g():\n    x = 1\n    global x\n    return x\n"),
              "E4 3:5 name 'x' is assigned to before global declaration");
    CHECK_STR(ir("def f(a):\n    global a\n"), "E4 2:5 name 'a' is parameter and global");
    CHECK_STR(ir("def f(a):\n    for i in a:\n        pass\n    global i\n"),
              "E4 4:5 name 'i' is assigned to before global declaration");
    /* Other scopes do not count: a nested function's names, a comprehension's, an import. */
    CHECK_STR(ir("x = 1\ndef f():\n    global x\n    x = 2\n"),
              "(module (assign (name x) (num 1)) (funcdef f (params) (block (global (name x)) (assign (name x) (num 2)))))");
    CHECK_STR(ir("y = [i for i in r]\ndef g():\n    return j\nglobal i, j\n"),
              "(module (assign (name y) (listcomp (name i) (compfor (name i) (name r)))) (funcdef g (params) (block (return (name j)))) (global (name i) (name j)))");
    CHECK_STR(ir("import math\nglobal math\n"), "(module (import math math) (global (name math)))");

    /* f-string specs nest twice at most; a field's own expression starts afresh. */
    CHECK_STR(ir("ans = f'{x:{y:{z}}}'\n"), "E4 1:21 f-string: expressions nested too deeply");
    CHECK_STR(ir("ans = f'{x:{y:>{z}}}'\n"), "E4 1:22 f-string: expressions nested too deeply");
    CHECK(ir("ans = f'{f\"{x:{y}}\":{z}}'\n")[0] == '(');

    /* __debug__ is the compiler's constant: nothing binds it. */
    CHECK_STR(ir("__debug__ = 1\n"), "E4 1:1 cannot assign to __debug__");
    CHECK_STR(ir("x = 1\n__debug__ += 1\n"), "E4 2:1 cannot assign to __debug__");
    CHECK_STR(ir("x, (y, *__debug__) = 1, (2, 3)\n"), "E4 1:9 cannot assign to __debug__");
    CHECK_STR(ir("del __debug__\n"), "E4 1:5 cannot delete __debug__");
    CHECK_STR(ir("for __debug__ in []:\n    pass\n"), "E4 1:5 cannot assign to __debug__");
    CHECK_STR(ir("ans = [1 for __debug__ in []]\n"), "E4 1:14 cannot assign to __debug__");
    CHECK_STR(ir("def f(**k):\n    return 1\nans = f(__debug__=1)\n"), "E4 3:7 cannot assign to __debug__");
    CHECK_STR(ir("def f(__debug__):\n    return 1\n"), "E4 1:1 cannot assign to __debug__");
    CHECK_STR(ir("def __debug__():\n    pass\n"), "E4 1:1 cannot assign to __debug__");
    CHECK_STR(ir("g = lambda __debug__: 1\n"), "E4 1:5 cannot assign to __debug__");
    CHECK_STR(ir("import math as __debug__\n"), "E4 1:1 cannot assign to __debug__");
    CHECK_STR(ir("__\xef\xbd\x84" "ebug__ = 1\n"), "E4 1:1 cannot assign to __debug__");

    /* Every `_` in a number is followed by a digit of its base. */
    CHECK_STR(ir("ans = 1_000_ + 2\n"), "E4 1:12 invalid decimal literal");
    CHECK_STR(ir("ans = 1.5_\n"), "E4 1:10 invalid decimal literal");
    CHECK_STR(ir("ans = 1e1_\n"), "E4 1:10 invalid decimal literal");
    CHECK_STR(ir("ans = 1_.5\n"), "E4 1:8 invalid decimal literal");
    CHECK_STR(ir("ans = 0x_1 + 0_0 + 1_0.0_1e1_0\n"),
              "(module (assign (name ans) (binop + (binop + (num 0x_1) (num 0_0)) (num 1_0.0_1e1_0 float))))");

    /* The grammar reads `for x in a, b` in a comprehension as a tuple; CPython does not. */
    CHECK_STR(ir("ans = [x for x in 1, 2]\n"), "E4 1:20 invalid syntax");
    CHECK_STR(ir("ans = {x: 1 for x in a , b}\n"), "E4 1:24 invalid syntax");
    CHECK_STR(ir("ans = [x for x in a for y in b, c]\n"), "E4 1:31 invalid syntax");
    CHECK_STR(ir("ans = (x for x in a,)\n"), "E4 1:20 invalid syntax");
    CHECK_STR(ir("def f(*a):\n    return len(a)\nans = f(x for x in [1], 1)\n"),
              "E4 3:9 Generator expression must be parenthesized");
    CHECK_STR(ir("f(x for x in a for y in b, c)\n"), "E4 1:3 Generator expression must be parenthesized");
    CHECK_STR(ir("f(x for x in a)\n"),
              "(module (expr (call (name f) (genexp (name x) (compfor (name x) (name a))))))");

    /* Targets and `*x` are checked when the program is read, as CPython does, not when the
     * statement runs: an untaken branch does not hide them. */
    CHECK_STR(ir("ans = 1\nif ans > 5:\n    del ans + 1\n"), "E4 3:9 cannot delete expression");
    CHECK_STR(ir("print(1)\ndel f()\n"), "E4 2:5 cannot delete function call");
    CHECK_STR(ir("if 0:\n    del (a, f())\n"), "E4 2:13 cannot delete function call");
    CHECK_STR(ir("del *a, b\n"), "E4 1:5 cannot delete starred");
    CHECK_STR(ir("if 0:\n    *a, *b = [1, 2]\n"), "E4 2:5 multiple starred expressions in assignment");
    CHECK_STR(ir("x, (*a, *b) = 1, (2, 3)\n"), "E4 1:4 multiple starred expressions in assignment");
    CHECK_STR(ir("if 0:\n    *a = [1]\n"), "E4 2:5 starred assignment target must be in a list or tuple");
    CHECK_STR(ir("for *a in [[1]]:\n    pass\n"), "E4 1:5 starred assignment target must be in a list or tuple");
    CHECK_STR(ir("if 0:\n    x = *a\n"), "E4 2:9 can't use starred expression here");
    CHECK_STR(ir("def f():\n    return *a\n"), "E4 2:12 can't use starred expression here");
    CHECK_STR(ir("if 0:\n    x = (*a)\n"), "E4 2:10 cannot use starred expression here");
    CHECK_STR(ir("x = [1]\nprint((*x))\n"), "E4 2:8 cannot use starred expression here");
    CHECK_STR(ir("if 0:\n    print(*a for a in b)\n"), "E4 2:11 iterable unpacking cannot be used in comprehension");
    CHECK_STR(ir("x = [*a for a in b]\n"), "E4 1:6 iterable unpacking cannot be used in comprehension");
    CHECK_STR(ir("x = (*a,)\nprint(*x, *x)\n[*b] = x\n"),
              "(module (assign (name x) (tuple (starred (name a)))) (expr (call (name print) (starred (name x)) (starred (name x)))) (assign (list (starred (name b))) (name x)))");

    /* A vertical tab is whitespace to the grammar, not to CPython's tokenizer. */
    CHECK_STR(ir("ans = 1\v+2\n"), "E4 1:8 invalid non-printable character U+000B");
    CHECK_STR(ir("ans = (1 +\n\v 2)\n"), "E4 2:1 invalid non-printable character U+000B");
    CHECK_STR(ir("ans = '\v'  # \v\n"), "(module (assign (name ans) (str \"\\x0b\")))");
    CHECK_STR(ir("ans = 1\f+ 2\n"), "(module (assign (name ans) (binop + (num 1) (num 2))))");
}

/* PEP 263: CPython decodes the source with the cookie's codec; only UTF-8 is ours to read. */
static void test_coding_cookie(void)
{
    /* utf-7 decodes "+AAo-" to a newline: CPython runs `ans = 2`, which the whitelist never saw. */
    CHECK_STR(reasons("# -*- coding: utf-7 -*-\nans = 1 #+AAo-ans = 2\n"),
              "coding:utf-7 1:1 [# -*- coding: utf-7 -*-]");
    /* Bytes that are not UTF-8 are still the sandbox's, not a syntax error. */
    CHECK_STR(reasons("#!/usr/bin/python\n# coding=latin-1\nans = \"\xe9\"\n"),
              "coding:iso-8859-1 2:1 [# coding=latin-1]");
    CHECK_STR(reasons("import pandas\n# coding: latin-1\n"), "import:pandas 1:1 [import pandas]");
    CHECK_STR(reasons("\n  # vim: set fileencoding=cp1252 :\nx = 1\n"),
              "coding:cp1252 2:3 [# vim: set fileencoding=cp1252 :]");
    CHECK_STR(reasons("# coding: latin-1\nimport os\n"),
              "coding:iso-8859-1 1:1 [# coding: latin-1]; import:os 2:1 [import os]");
    /* UTF-8 under any of its names is read as usual. */
    CHECK_STR(ir("# coding: UTF_8\nans = 1\n"), "(module (assign (name ans) (num 1)))");
    CHECK_STR(ir("# coding: utf-8-sig\nans = 1\n"), "(module (assign (name ans) (num 1)))");
    CHECK_STR(ir("# coding=utf8\nans = 1\n"), "(module (assign (name ans) (num 1)))");
    CHECK_STR(ir("\n\n# coding: latin-1\nans = 1\n"), "(module (assign (name ans) (num 1)))");
    /* A BOM says UTF-8: any other cookie is CPython's SyntaxError. */
    CHECK_STR(ir("\xef\xbb\xbf# coding: latin-1\nans = 1\n"), "E4 1:1 encoding problem: iso-8859-1 with BOM");
    CHECK_STR(ir("\xef\xbb\xbf# coding: utf8\nans = 1\n"), "E4 1:1 encoding problem: utf8 with BOM");
    CHECK_STR(ir("\xef\xbb\xbf# coding: utf-8\nans = 1\n"), "(module (assign (name ans) (num 1)))");
}

static void test_bytes_and_limits(void)
{
    CHECK_STR(parse_n("x = 1\ny = \0\n", 11, NULL), "E4 2:5 source code cannot contain null bytes");
    CHECK_STR(ir("x = 1\ny = '\xff'\n"), "E4 2:6 invalid UTF-8 byte 0xff");
    CHECK_STR(ir("x = '\xc0\xaf'\n"), "E4 1:6 invalid UTF-8 byte 0xc0");          /* overlong */
    CHECK_STR(ir("x = '\xed\xa0\x80'\n"), "E4 1:6 invalid UTF-8 byte 0xed");      /* surrogate */
    CHECK_STR(ir("x = 'caf\xc3\xa9'\n"), "(module (assign (name x) (str \"caf\xc3\xa9\")))");
    /* One pass finds all three kinds; a NUL byte anywhere wins, then bad UTF-8, then depth. */
    CHECK_STR(parse_n("x = '\xff'\ny = \0\n", 14, NULL), "E4 2:5 source code cannot contain null bytes");
    CHECK_STR(parse_n("s = '\\\0'\n", 9, NULL), "E4 1:7 source code cannot contain null bytes");
    CHECK_STR(ir("# caf\xc3\xa9 \xe2\x82\xac\n\xc3\xa9t\xc3\xa9 = '\\\xc3\xa9'  # \xff\n"), "E4 2:18 invalid UTF-8 byte 0xff");
    CHECK_STR(ir("x = f'{a[\xc3\xa9]}' \xf0\x9f\x98\x80 \xf4\x90\x80\x80\n"), "E4 1:21 invalid UTF-8 byte 0xf4");
    CHECK_STR(ir("\xc3\xa9t\xc3\xa9 = 'caf\\\xc3\xa9'\n"),
              "(module (assign (name \xc3\xa9t\xc3\xa9) (str \"caf\\\\\xc3\xa9\")))");
    /* Comments and names are scanned eight bytes at a time: a bad byte past the first
     * word, a sequence cut by the end of the line or of the source, non-ASCII between ASCII. */
    CHECK_STR(ir("x = 1  # a comment of some length \xff and more\n"), "E4 1:35 invalid UTF-8 byte 0xff");
    CHECK_STR(parse_n("x = 1  # a comment of some length \0 and more\n", 45, NULL),
              "E4 1:35 source code cannot contain null bytes");
    CHECK_STR(ir("# 0123456789abcdef\xc3\nx = 1\n"), "E4 1:19 invalid UTF-8 byte 0xc3");
    CHECK_STR(ir("x = 1\n# 0123456789abcdef \xe2\x82"), "E4 2:20 invalid UTF-8 byte 0xe2");
    CHECK_STR(ir("# caf\xc3\xa9 0123456789 \xe2\x82\xac 0123456789 \xf0\x9f\x98\x80\nx = 1\n"),
              "(module (assign (name x) (num 1)))");
    CHECK_STR(ir("abcdefghijkl\xff = 1\n"), "E4 1:13 invalid UTF-8 byte 0xff");
    CHECK_STR(ir("abcdefgh\xc3\xa9ijklmnop\xc3\xa9qr = 1\n"),
              "(module (assign (name abcdefgh\xc3\xa9ijklmnop\xc3\xa9qr) (num 1)))");

    cr_policy pol;
    cr_policy_default(&pol);
    pol.limits.max_source = 8;
    CHECK_STR(parse_n("x = 12345\n", 10, &pol.limits), "E6 0:0 source is 10 bytes, more than 8 (max_source)");

    /* 100 000 nested parentheses: refused by the pre-scan at the 201st, CPython's SyntaxError
     * (its tokenizer holds 200); a lower depth limit is ours, a LimitError. */
    size_t n = 100000, len = 4 + 2 * n + 2;
    char *deep = malloc(len + 1);
    memcpy(deep, "x = ", 4);
    memset(deep + 4, '(', n);
    deep[4 + n] = '1';
    memset(deep + 5 + n, ')', n);
    deep[len - 1] = '\n';
    CHECK_STR(parse_n(deep, len, NULL), "E4 1:205 too many nested parentheses");
    memset(deep + 4, '[', n);                 /* unclosed: tree-sitter 0.20 would abort */
    CHECK_STR(parse_n(deep, 5 + n, NULL), "E4 1:205 too many nested parentheses");
    cr_policy_default(&pol);
    pol.limits.max_depth = 50;
    CHECK_STR(parse_n(deep, 5 + n, &pol.limits), "E6 1:55 nesting deeper than 50 (max_depth)");
    memset(deep + 4, '-', n);                 /* not brackets: the token bound */
    CHECK_STR(parse_n(deep, 5 + n, NULL), "E6 0:0 more than 60000 tokens (the parser's limit)");
    /* 300 unary minus signs: fine for tree-sitter, refused by the lowering depth. */
    deep[4 + 300] = '1';
    deep[5 + 300] = '\n';
    CHECK_STR(parse_n(deep, 6 + 300, NULL), "E6 1:204 nesting deeper than 200 (max_depth)");
    memset(deep + 4, '(', 300);               /* too deep, but a bad byte later wins */
    deep[4 + 300] = '\xc0';
    CHECK_STR(parse_n(deep, 6 + 300, NULL), "E4 1:305 invalid UTF-8 byte 0xc0");
    free(deep);

    /* 150 parentheses are within the default limit. */
    char ok[400];
    memset(ok, '(', 150);
    ok[150] = '7';
    memset(ok + 151, ')', 150);
    ok[301] = '\n';
    CHECK_STR(parse_n(ok, 302, NULL), "(module (expr (num 7)))");
}

/* Each thread parses with its own tree-sitter parser (kept for the thread, freed when it
 * exits: ASan's leak check sees a parser that is not). */
static void *parse_in_thread(void *arg)
{
    cr_policy pol;
    cr_policy_default(&pol);
    long ok = 0;
    for (int i = 0; i < 50; i++) {
        char src[64];
        int n = snprintf(src, sizeof src, "x = %d + %ld\n", i, (long)arg);
        ir_module *m = NULL;
        cr_error err = { 0 };
        if (parser_parse_python(src, (size_t)n, &pol.limits, &m, &err) != CR_OK) continue;
        cr_buf b;
        cr_buf_init(&b, 0);
        ir_dump(m->root, &b);
        char want[128];
        snprintf(want, sizeof want, "(module (assign (name x) (binop + (num %d) (num %ld))))", i, (long)arg);
        ok += strcmp(b.p, want) == 0;
        cr_buf_free(&b);
        ir_module_free(m);
    }
    return (void *)ok;
}

static void test_threads(void)
{
    pthread_t t[4];
    for (long i = 0; i < 4; i++) CHECK(pthread_create(&t[i], NULL, parse_in_thread, (void *)i) == 0);
    for (int i = 0; i < 4; i++) {
        void *ok = NULL;
        pthread_join(t[i], &ok);
        CHECK_INT((long)ok, 50);
    }
}

static void test_grammar_version(void)
{
    CHECK_STR(parser_grammar_version(), "tree-sitter-python 0.23.6 (ABI 14)");
}

/* A program that ends inside an unclosed f-string must not leave the thread's parser in
 * f-string mode for the next program (tree-sitter-python's scanner keeps that flag). */
static void test_no_state_between_parses(void)
{
    CHECK_STR(ir("print(f\"total {x"), "E4 1:6 '(' was never closed");
    CHECK_STR(ir("def f():\n    return 1\n\n# done\nprint(f())\n"),
              "(module (funcdef f (params) (block (return (num 1)))) "
              "(expr (call (name print) (call (name f)))))");
}

int main(void)
{
    test_no_state_between_parses();
    test_literals();
    test_fstrings();
    test_operators();
    test_calls_and_access();
    test_displays();
    test_assignments();
    test_statements();
    test_unsupported();
    test_whitelist();
    test_syntax_errors();
    test_cpython_checks();
    test_coding_cookie();
    test_bytes_and_limits();
    test_threads();
    test_grammar_version();
    return TEST_SUMMARY();
}
