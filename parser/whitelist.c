/* parser/whitelist.c: the in-process subset's callables, and the check that reports every
 * import, call, attribute and method outside it, with its position. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/subset.h"
#include "parser/parser_int.h"

/* Every public name of CPython 3.11's math module: what `from math import *` binds. Those
 * the registry lacks would be bound by CPython and not by the evaluator. */
static const char *const math_all_names[] = {
    "acos", "acosh", "asin", "asinh", "atan", "atan2", "atanh", "cbrt", "ceil", "comb",
    "copysign", "cos", "cosh", "degrees", "dist", "e", "erf", "erfc", "exp", "exp2", "expm1",
    "fabs", "factorial", "floor", "fmod", "frexp", "fsum", "gamma", "gcd", "hypot", "inf",
    "isclose", "isfinite", "isinf", "isnan", "isqrt", "lcm", "ldexp", "lgamma", "log", "log10",
    "log1p", "log2", "modf", "nan", "nextafter", "perm", "pi", "pow", "prod", "radians",
    "remainder", "sin", "sinh", "sqrt", "tan", "tanh", "tau", "trunc", "ulp", NULL
};

/* CPython 3.11's `from decimal import *` names. */
static const char *const decimal_all_names[] = {
    "BasicContext", "Clamped", "Context", "ConversionSyntax", "Decimal", "DecimalException",
    "DecimalTuple", "DefaultContext", "DivisionByZero", "DivisionImpossible",
    "DivisionUndefined", "ExtendedContext", "FloatOperation", "HAVE_CONTEXTVAR", "HAVE_THREADS",
    "Inexact", "InvalidContext", "InvalidOperation", "MAX_EMAX", "MAX_PREC", "MIN_EMIN",
    "MIN_ETINY", "Overflow", "ROUND_05UP", "ROUND_CEILING", "ROUND_DOWN", "ROUND_FLOOR",
    "ROUND_HALF_DOWN", "ROUND_HALF_EVEN", "ROUND_HALF_UP", "ROUND_UP", "Rounded", "Subnormal",
    "Underflow", "getcontext", "localcontext", "setcontext", NULL
};

/* The modules whose `from m import *` is in the subset (at module level), with every name it
 * binds in CPython: one the registry lacks is a reason wherever it appears. */
static const struct {
    int mod;
    const char *const *names;
} star_mods[] = { { MOD_MATH, math_all_names }, { MOD_DECIMAL, decimal_all_names } };
#define NSTAR (sizeof star_mods / sizeof star_mods[0])

/* CPython 3.11's builtins, dir(builtins) in sorted order (the interactive helpers that the
 * site module adds, such as exit and license, included). A call of a name that the program
 * never binds and that is not one of these can only raise NameError, which the evaluator
 * does in-process; a builtin outside the whitelist needs the real interpreter. */
const char *const parser_python_builtins[] = {
    "ArithmeticError", "AssertionError", "AttributeError", "BaseException",
    "BaseExceptionGroup", "BlockingIOError", "BrokenPipeError", "BufferError",
    "BytesWarning", "ChildProcessError", "ConnectionAbortedError", "ConnectionError",
    "ConnectionRefusedError", "ConnectionResetError", "DeprecationWarning", "EOFError",
    "Ellipsis", "EncodingWarning", "EnvironmentError", "Exception", "ExceptionGroup",
    "False", "FileExistsError", "FileNotFoundError", "FloatingPointError", "FutureWarning",
    "GeneratorExit", "IOError", "ImportError", "ImportWarning", "IndentationError",
    "IndexError", "InterruptedError", "IsADirectoryError", "KeyError", "KeyboardInterrupt",
    "LookupError", "MemoryError", "ModuleNotFoundError", "NameError", "None",
    "NotADirectoryError", "NotImplemented", "NotImplementedError", "OSError",
    "OverflowError", "PendingDeprecationWarning", "PermissionError", "ProcessLookupError",
    "RecursionError", "ReferenceError", "ResourceWarning", "RuntimeError", "RuntimeWarning",
    "StopAsyncIteration", "StopIteration", "SyntaxError", "SyntaxWarning", "SystemError",
    "SystemExit", "TabError", "TimeoutError", "True", "TypeError", "UnboundLocalError",
    "UnicodeDecodeError", "UnicodeEncodeError", "UnicodeError", "UnicodeTranslateError",
    "UnicodeWarning", "UserWarning", "ValueError", "Warning", "ZeroDivisionError",
    "__build_class__", "__debug__", "__doc__", "__import__", "__loader__", "__name__",
    "__package__", "__spec__", "abs", "aiter", "all", "anext", "any", "ascii", "bin",
    "bool", "breakpoint", "bytearray", "bytes", "callable", "chr", "classmethod", "compile",
    "complex", "copyright", "credits", "delattr", "dict", "dir", "divmod", "enumerate",
    "eval", "exec", "exit", "filter", "float", "format", "frozenset", "getattr", "globals",
    "hasattr", "hash", "help", "hex", "id", "input", "int", "isinstance", "issubclass",
    "iter", "len", "license", "list", "locals", "map", "max", "memoryview", "min", "next",
    "object", "oct", "open", "ord", "pow", "print", "property", "quit", "range", "repr",
    "reversed", "round", "set", "setattr", "slice", "sorted", "staticmethod", "str", "sum",
    "super", "tuple", "type", "vars", "zip", NULL
};

/* How sandbox escapes look: reasons wherever they appear, even when the program assigns the
 * name, since a `del` or an untaken branch can bring the builtin back. */
static const char *const forbidden_names[] = {
    "open", "exec", "eval", "compile", "input", "globals", "locals", "vars", "getattr",
    "setattr", "delattr", "__import__", "breakpoint", "exit", "quit", "help", "memoryview",
    "type", "object", "super", "classmethod", "staticmethod", "property", "id", "hash", NULL
};

/* The IR of a program is as deep as lowering allowed (cr_limits.max_depth); this backstops
 * trees built by other front ends. */
#define WL_MAX_DEPTH 100000

static int in_list(const char *const *list, const char *name)
{
    for (; *list; list++)
        if ((*list)[0] == name[0] && strcmp(*list, name) == 0) return 1;   /* first byte: cheap */
    return 0;
}

/* Every name of the lists above, hashed once per process, with what the lists say of it:
 * the checks ask about every name a program reads or calls. */
enum { SN_BUILTIN = 1, SN_FORBIDDEN = 2, SN_STAR = 4 /* star_mods[k]: SN_STAR << k */ };
#define SN_CAP 1024
static struct { const char *name; unsigned flags; } specials[SN_CAP];
static pthread_once_t specials_once = PTHREAD_ONCE_INIT;

static size_t special_slot(const char *name)
{
    size_t i = cr_hash_name(name, strlen(name)) & (SN_CAP - 1);
    while (specials[i].name && strcmp(specials[i].name, name) != 0) i = (i + 1) & (SN_CAP - 1);
    return i;
}

static void specials_add(const char *const *list, unsigned flag)
{
    for (; *list; list++) {
        size_t i = special_slot(*list);
        specials[i].name = *list;
        specials[i].flags |= flag;
    }
}

static void specials_init(void)
{
    specials_add(parser_python_builtins, SN_BUILTIN);
    specials_add(forbidden_names, SN_FORBIDDEN);
    for (size_t k = 0; k < NSTAR; k++) specials_add(star_mods[k].names, SN_STAR << k);
}

static unsigned special(const char *name)
{
    return specials[special_slot(name)].flags;   /* specials_init() ran: parser_whitelist() */
}

static int is_python_builtin(const char *name) { return special(name) & SN_BUILTIN; }

/* Reading `__name__` (`if __name__ == "__main__":`) and the `...` constant are in the subset:
 * the evaluator gives them "__main__" and Ellipsis. 0 turns both back into reasons (for an
 * evaluator without them). */
#define WL_NAME_AND_ELLIPSIS 1

/* Names starting with "__" reach the interpreter's internals; `__name__` alone may be read,
 * never bound. */
static int dunder(const char *name)
{
    return name[0] == '_' && name[1] == '_';
}

static int is_name_dunder(const char *name)
{
    return strcmp(name, "__name__") == 0;
}

static int readable_dunder(const char *name)
{
    return WL_NAME_AND_ELLIPSIS && is_name_dunder(name);
}

/* ---- argument shapes ------------------------------------------------------------------------- */

/* Module functions that are in the subset only for some arguments: numpy's on scalars and list
 * literals (an array, or a name that may hold one, needs numpy itself), numpy_financial's on
 * scalars. Their registry rows give each parameter that is in the subset a letter (subset.h's
 * reg_sig), and an argument passed to it, by position or keyword, must have its shape:
 *   S a scalar: a number literal, a name, + - * / // % ** and unary - + of scalars, a call
 *     of float/int/abs/round/len, of a math function or of a function of these modules, or a
 *     constant of math or numpy. A name must hold a number when the call runs (a list there
 *     is a TypeError that numpy would not raise: the rule trusts names, not calls or items),
 *     so a name that some assignment binds to a list, tuple, set, dict or comprehension is
 *     not a scalar
 *   L a list or tuple literal of scalars, or a scalar other than a bare name (a name may
 *     hold a list of lists or an array: numpy's reductions flatten them)
 *   F cash flows: a list or tuple literal of scalars, or a name
 *   W numpy_financial's `when`: a string literal or a scalar
 * A parameter without a letter, and a function of such a module that has no row, is a
 * reason. */
static int shape_of(int mod, const char *name, reg_sig *s)
{
    int id;
    if (!registry_module_shaped(mod) || registry_attr(mod, name, &id) != REG_FUNC) return 0;
    if (s) registry_func_sig(id, s);
    return 1;
}

/* Functions and classes the evaluator has only in part: a call is in the subset with at most
 * `npos` positional arguments and keywords among `kws`. `with` may enter the calls of those marked `manager`; anything else a with
 * statement enters is a reason. */
static const struct {
    int mod;
    const char *name;
    size_t npos;
    const char *kws[10];
    int manager;
} managers[] = {
    { MOD_DECIMAL, "localcontext", 9,
      { "ctx", "prec", "rounding", "Emin", "Emax", "capitals", "clamp", "flags", "traps", NULL }, 1 },
    { MOD_DECIMAL, "Context", 8,
      { "prec", "rounding", "Emin", "Emax", "capitals", "clamp", "flags", "traps", NULL }, 0 },
};
#define NMANAGERS (sizeof managers / sizeof managers[0])

static int manager_of(int mod, const char *name)
{
    for (size_t i = 0; i < NMANAGERS; i++)
        if (managers[i].mod == mod && strcmp(managers[i].name, name) == 0) return (int)i + 1;
    return 0;
}

/* ---- the check -------------------------------------------------------------------------- */

typedef struct {
    ir_module *m;
    const char *src;
    size_t len;
    parser_lines lines;
    parser_nameset bound;              /* every name the program binds */
    parser_nameset mods[MOD_COUNT];    /* names each module is bound to */
    parser_nameset caught;             /* names an `except ... as` binds */
    unsigned star;                     /* bit k: the program has a star import of star_mods[k] */
    struct { const char *alias; int mod; const char *name; } *from;   /* `from numpy import x`s */
    parser_nameset containers;         /* names some assignment binds to a container display */
    size_t nfrom, fromcap;
    int fdepth;                        /* functions the check is inside */
} wl_ctx;

/* 1 + the star_mods index of `from m import *`, or 0. */
static int is_star_import(const ir_node *n)
{
    if (n->kind != IR_IMPORT_FROM || strcmp(n->kid[0]->text, "*") != 0) return 0;
    int m = registry_module(n->text);
    for (size_t k = 0; k < NSTAR; k++)
        if (star_mods[k].mod == m) return (int)k + 1;
    return 0;
}


static cr_code add_reason(wl_ctx *w, const ir_node *n, const char *fmt, const char *name)
{
    char code[64];
    snprintf(code, sizeof code, fmt, name);
    int nomem = 0;
    size_t a = parser_lines_offset(&w->lines, n->line, n->col, &nomem);
    size_t z = parser_lines_offset(&w->lines, n->end_line, n->end_col, &nomem);
    if (nomem) return CR_ENOMEM;
    return ir_add_reason(w->m, code, n->line, n->col, w->src + a, z > a ? z - a : 0);
}

static cr_code add_reason2(wl_ctx *w, const ir_node *n, const char *kind, int mod,
                           const char *name);

/* After `from math import *`, a name math binds that the evaluator's math lacks (hypot, tau)
 * would be math's in CPython, wherever it appears; the same for decimal (localcontext). */
static cr_code star_name(wl_ctx *w, const ir_node *n, const char *name)
{
    if (!w->star) return CR_OK;
    for (size_t k = 0; k < NSTAR; k++) {
        int m = star_mods[k].mod;
        if ((w->star >> k & 1) && (special(name) & SN_STAR << k) &&
            registry_attr(m, name, NULL) < 0)
            return add_reason2(w, n, "import:%s", m, name);
    }
    return CR_OK;
}

static cr_code bind_targets(wl_ctx *w, const ir_node *t)
{
    cr_code rc = CR_OK;
    if (!t) return CR_OK;
    switch (t->kind) {
    case IR_NAME: return parser_nameset_add(&w->bound, t->text);
    case IR_TUPLE: case IR_LIST: case IR_STARRED:
        for (uint32_t i = 0; i < t->n && rc == CR_OK; i++) rc = bind_targets(w, t->kid[i]);
        return rc;
    default:
        return CR_OK;
    }
}

/* Pass 1: the names the program binds, and the math module's aliases. Scopes are ignored:
 * a name bound anywhere may be called anywhere (a wrong guess ends in a NameError). */
static cr_code collect(wl_ctx *w, const ir_node *n, int depth)
{
    cr_code rc = CR_OK;
    if (!n) return CR_OK;
    if (depth > WL_MAX_DEPTH) return CR_ELIMIT;
    switch (n->kind) {
    case IR_FUNCDEF: case IR_PARAM: rc = parser_nameset_add(&w->bound, n->text); break;
    case IR_IMPORT_FROM: {
        int m = registry_module(n->text), sub;
        if (is_star_import(n)) w->star |= 1u << (is_star_import(n) - 1);
        rc = parser_nameset_add(&w->bound, n->aux);
        if (rc == CR_OK && m >= 0 && (registry_module_shaped(m) || manager_of(m, n->kid[0]->text))) {
            if (w->nfrom == w->fromcap) {
                size_t cap = w->fromcap ? 2 * w->fromcap : 8;
                void *p = realloc(w->from, cap * sizeof *w->from);
                if (!p) return CR_ENOMEM;
                w->from = p;
                w->fromcap = cap;
            }
            w->from[w->nfrom].alias = n->aux;
            w->from[w->nfrom].mod = m;
            w->from[w->nfrom++].name = n->kid[0]->text;
        }
        if (rc == CR_OK && m >= 0 && registry_attr(m, n->kid[0]->text, &sub) == REG_MODULE)
            rc = parser_nameset_add(&w->mods[sub], n->aux);
        break;
    }
    case IR_IMPORT: {
        /* `import a.b` binds a (the lowering's aux), `import a.b as c` binds a.b */
        int m = registry_module(n->text);
        if (m >= 0 && strcmp(n->aux, n->text) != 0 && strchr(n->text, '.') &&
            strncmp(n->text, n->aux, strlen(n->aux)) == 0 && n->text[strlen(n->aux)] == '.')
            m = registry_module(n->aux);
        if (m >= 0) rc = parser_nameset_add(&w->mods[m], n->aux);
        break;
    }
    case IR_ASSIGN: {
        const ir_node *v = n->n ? n->kid[n->n - 1] : NULL;
        int box = v && (v->kind == IR_LIST || v->kind == IR_TUPLE || v->kind == IR_SET ||
                        v->kind == IR_DICT || v->kind == IR_LISTCOMP || v->kind == IR_SETCOMP ||
                        v->kind == IR_DICTCOMP || v->kind == IR_GENEXP);
        for (uint32_t i = 0; i + 1 < n->n && rc == CR_OK; i++) {
            rc = bind_targets(w, n->kid[i]);
            if (rc == CR_OK && box && n->kid[i] && n->kid[i]->kind == IR_NAME)
                rc = parser_nameset_add(&w->containers, n->kid[i]->text);
        }
        break;
    }
    case IR_AUGASSIGN: case IR_FOR: case IR_COMPFOR:
        if (n->n) rc = bind_targets(w, n->kid[0]);
        break;
    case IR_WITHITEM:
        rc = bind_targets(w, n->kid[1]);
        break;
    case IR_EXCEPT:
        if ((rc = bind_targets(w, n->kid[1])) == CR_OK && n->kid[1])
            rc = parser_nameset_add(&w->caught, n->kid[1]->text);
        break;
    default:
        break;
    }
    for (uint32_t i = 0; i < n->n && rc == CR_OK; i++) rc = collect(w, n->kid[i], depth + 1);
    return rc;
}

/* The module an expression names (`np`, `scipy.stats`), or -1. Scopes are ignored as in
 * collect(): a wrong guess ends in an AttributeError or a NameError. */
static int module_of(wl_ctx *w, const ir_node *e)
{
    if (!e) return -1;
    if (e->kind == IR_NAME) {
        for (int m = 1; m < MOD_COUNT; m++)
            if (parser_nameset_has(&w->mods[m], e->text)) return m;
        return -1;
    }
    int m, sub;
    if (e->kind != IR_ATTR || !e->n || (m = module_of(w, e->kid[0])) < 0) return -1;
    return registry_attr(m, e->text, &sub) == REG_MODULE ? sub : -1;
}

/* The (module, name) a name bound by `from m import name as alias` stands for, if m has
 * shaped functions (or is a context manager). Scopes are ignored, as everywhere here. */
static int from_import_of(wl_ctx *w, const char *alias, int *mod, const char **name)
{
    for (size_t i = 0; i < w->nfrom; i++)
        if (strcmp(w->from[i].alias, alias) == 0) {
            *mod = w->from[i].mod;
            *name = w->from[i].name;
            return 1;
        }
    return 0;
}

static int from_import(wl_ctx *w, const char *alias)
{
    int m;
    const char *name;
    return from_import_of(w, alias, &m, &name) && shape_of(m, name, NULL);
}

static cr_code add_reason2(wl_ctx *w, const ir_node *n, const char *kind, int mod,
                           const char *name)
{
    char what[160];
    snprintf(what, sizeof what, "%s.%s", registry_module_name(mod), name);
    return add_reason(w, n, kind, what);
}

static cr_code check(wl_ctx *w, const ir_node *n, int depth);

/* The S shape (depth bounds the walk as check() does). */
static int is_scalar(wl_ctx *w, const ir_node *e, int depth)
{
    static const char *const numeric_builtins[] = { "float", "int", "abs", "round", "len", NULL };
    if (!e || depth > WL_MAX_DEPTH) return 0;
    switch (e->kind) {
    case IR_NUM: case IR_BOOL:
        return 1;
    case IR_NAME:
        return module_of(w, e) < 0 && !parser_nameset_has(&w->containers, e->text);
    case IR_UNARY:
        return (e->op == IR_NEG || e->op == IR_POS) && is_scalar(w, e->kid[0], depth + 1);
    case IR_BINOP:
        return e->op <= IR_POW && /* IR_ADD .. IR_POW: arithmetic */
               is_scalar(w, e->kid[0], depth + 1) &&
               is_scalar(w, e->kid[1], depth + 1);
    case IR_ATTR: {
        int m = module_of(w, e->kid[0]);
        return m == MOD_MATH || m == MOD_NUMPY;
    }
    case IR_CALL: {
        const ir_node *f = e->kid[0];
        if (f->kind == IR_NAME)
            return (in_list(numeric_builtins, f->text) && !parser_nameset_has(&w->bound, f->text)) ||
                   from_import(w, f->text);
        int m = f->kind == IR_ATTR ? module_of(w, f->kid[0]) : -1;
        return m == MOD_MATH || (m >= 0 && shape_of(m, f->text, NULL));
    }
    default:
        return 0;
    }
}

static int is_list_literal(wl_ctx *w, const ir_node *e, int depth)
{
    if (!e || (e->kind != IR_LIST && e->kind != IR_TUPLE)) return 0;
    for (uint32_t i = 0; i < e->n; i++)
        if (!is_scalar(w, e->kid[i], depth + 1)) return 0;
    return 1;
}

static int shape_ok(wl_ctx *w, char letter, const ir_node *e, int depth)
{
    switch (letter) {
    case 'S': return is_scalar(w, e, depth);
    case 'L': return is_list_literal(w, e, depth) || (e->kind != IR_NAME && is_scalar(w, e, depth));
    case 'F': return is_list_literal(w, e, depth) || (e->kind == IR_NAME && module_of(w, e) < 0);
    case 'W': return e->kind == IR_STR || is_scalar(w, e, depth);
    default: return 0;
    }
}

/* A call of a function of a module with shaped rows: a reason unless its arguments have
 * the shapes of its row. */
static cr_code check_shapes(wl_ctx *w, const ir_node *call, int mod, const char *name, int depth)
{
    reg_sig s;
    int ok = shape_of(mod, name, &s);
    size_t npos = 0;
    for (uint32_t i = 1; ok && i < call->n; i++) {
        const ir_node *arg = call->kid[i];
        if (arg->kind == IR_KEYWORD) {
            size_t k = s.nposonly;
            while (k < s.np && strcmp(s.p[k], arg->text) != 0) k++;
            ok = k < s.np && shape_ok(w, s.shape[k], arg->kid[0], depth);
        } else {
            ok = arg->kind != IR_STARRED && arg->kind != IR_DSTARRED && npos < s.npos &&
                 shape_ok(w, s.shape[npos], arg, depth);
            npos++;
        }
    }
    return ok ? CR_OK : add_reason2(w, call, "call:%s", mod, name);
}

/* A module's name that the program also binds to something else (`import datetime` and
 * `from datetime import datetime`): which one a use sees depends on the run, so what the
 * other value may have is let through too; when it is the module, the evaluator raises the
 * AttributeError CPython raises for a name the real module lacks as well. */
static int rebound(wl_ctx *w, const ir_node *obj)
{
    return obj && obj->kind == IR_NAME && parser_nameset_has(&w->bound, obj->text);
}

/* `obj.name` read or written (not called): a module's registry rows, an attribute some
 * object of the registry has, and `args` read from a name an `except ... as` binds (an
 * exception there; `ValueError.args` is a descriptor the evaluator lacks). */
static cr_code check_attr(wl_ctx *w, const ir_node *n, int depth, int write)
{
    cr_code rc;
    const ir_node *obj = n->n ? n->kid[0] : NULL;
    int m = module_of(w, obj);
    if (!write && obj && obj->kind == IR_NAME && parser_nameset_has(&w->caught, obj->text) &&
        strcmp(n->text, "args") == 0) {
        /* read below */
    } else if (m >= 0) {
        if (registry_attr(m, n->text, NULL) < 0 &&
            !(rebound(w, obj) && registry_is_attr(n->text)) &&
            (rc = add_reason2(w, n, "attr:%s", m, n->text)) != CR_OK)
            return rc;
    } else if (!registry_is_attr(n->text) && (rc = add_reason(w, n, "attr:.%s", n->text)) != CR_OK) {
        return rc;
    }
    return check(w, obj, depth + 1);
}

/* Format directives that CPython's datetime takes and the evaluator's refuses (it has no
 * time zone, no locale tables, no week-number parsing): a literal format holding one sends
 * the program to the sandbox instead of to a ValueError. `arg`: the format's position
 * among the call's arguments (or its keyword). strptime also refuses a directive repeated,
 * which CPython's regular expression rejects with an error of its own. */
static const struct {
    const char *method, *kw, *refused;
    uint32_t arg;
    int once;
} literal_formats[] = {
    { "strptime", NULL, "zZcxXUWwuGV", 2, 1 },
    { "strftime", "format", "s", 1, 0 },
};

/* A literal that datetime.fromisoformat would read as aware (a 'Z' or '+', or a '-' past
 * the longest date form): the evaluator has no time zones. Strings CPython rejects may match
 * too; the sandbox then gives CPython's error. */
static cr_code offset_reason(wl_ctx *w, const ir_node *call)
{
    const ir_node *s = call->n == 2 ? call->kid[1] : NULL;
    if (!s || s->kind != IR_STR || !s->text) return CR_OK;
    for (uint32_t i = 0; i < s->len; i++)
        if (s->text[i] == 'Z' || s->text[i] == '+' || (s->text[i] == '-' && i > 10))
            return add_reason(w, s, "format:%s", "fromisoformat offset");
    return CR_OK;
}

static cr_code format_reason(wl_ctx *w, const ir_node *call, const char *method)
{
    if (strcmp(method, "fromisoformat") == 0) return offset_reason(w, call);
    for (size_t t = 0; t < sizeof literal_formats / sizeof literal_formats[0]; t++) {
        if (strcmp(literal_formats[t].method, method) != 0) continue;
        const ir_node *f = NULL;
        for (uint32_t i = 1; i < call->n; i++) {
            const ir_node *k = call->kid[i];
            if (k && k->kind == IR_KEYWORD && literal_formats[t].kw && k->text &&
                strcmp(k->text, literal_formats[t].kw) == 0)
                f = k->kid[0];
            else if (k && k->kind != IR_KEYWORD && i == literal_formats[t].arg)
                f = k;
        }
        if (!f || f->kind != IR_STR || !f->text) return CR_OK;
        unsigned char seen[256] = { 0 };
        for (uint32_t i = 0; i + 1 < f->len; i++) {
            if (f->text[i] != '%') continue;
            unsigned char c = (unsigned char)f->text[++i];
            if (c == '%') continue;
            if (strchr(literal_formats[t].refused, c) || (literal_formats[t].once && seen[c]++)) {
                char what[32];
                snprintf(what, sizeof what, "%s %%%c", method, c);
                return add_reason(w, f, "format:%s", what);
            }
        }
    }
    return CR_OK;
}

/* Methods in the subset on numbers only (scipy.stats.norm's): an argument written as a list,
 * tuple, set or comprehension asks for scipy's element-wise array, which the sandbox has. */
static const char *const scalar_methods[] = { "cdf", "sf", "pdf", "ppf", "isf", NULL };

static int array_arg(const ir_node *call)
{
    for (uint32_t i = 1; i < call->n; i++) {
        const ir_node *e = call->kid[i];
        if (e && e->kind == IR_KEYWORD) e = e->n ? e->kid[0] : NULL;
        if (e && (e->kind == IR_LIST || e->kind == IR_TUPLE || e->kind == IR_SET ||
                  e->kind == IR_LISTCOMP || e->kind == IR_GENEXP))
            return 1;
    }
    return 0;
}

static cr_code check_callee(wl_ctx *w, const ir_node *call, int depth)
{
    const ir_node *f = call->kid[0];
    cr_code rc = CR_OK;
    if (!f) return CR_OK;
    if (f->kind == IR_NAME) {
        const char *name = f->text, *orig;
        int fm;
        if ((rc = star_name(w, f, name)) != CR_OK) return rc;
        if (from_import_of(w, name, &fm, &orig) && registry_module_shaped(fm))
            return check_shapes(w, call, fm, orig, depth);
        int ok = !(special(name) & SN_FORBIDDEN) && !dunder(name) &&
                 (registry_attr(MOD_NONE, name, NULL) == REG_FUNC ||
                  parser_nameset_has(&w->bound, name) ||
                  !is_python_builtin(name));
        return ok ? CR_OK : add_reason(w, call, "call:%s", name);
    }
    if (f->kind != IR_ATTR) return check(w, f, depth + 1);
    const ir_node *obj = f->n ? f->kid[0] : NULL;
    int m = module_of(w, obj), k;
    if (m >= 0) {
        /* a function, or a value that is a class (`datetime.date(...)`) */
        if ((k = registry_attr(m, f->text, NULL)) == REG_FUNC || k == REG_VALUE)
            return registry_module_shaped(m) ? check_shapes(w, call, m, f->text, depth) : CR_OK;
        if (rebound(w, obj) && registry_method(f->text) >= 0) return format_reason(w, call, f->text);
        return add_reason2(w, call, "call:%s", m, f->text);
    } else if (registry_method(f->text) < 0) {
        rc = add_reason(w, call, "method:.%s", f->text);
    } else if (in_list(scalar_methods, f->text) && array_arg(call)) {
        rc = add_reason(w, call, "args:.%s", f->text);
    } else {
        rc = format_reason(w, call, f->text);
    }
    return rc == CR_OK ? check(w, obj, depth + 1) : rc;
}

/* 1 + the managers[] index of the function a call calls, or 0: `m.name(...)` with m the
 * module, or `name(...)` after `from m import name` or `from m import *`. */
static int manager_call(wl_ctx *w, const ir_node *call)
{
    const ir_node *f = call && call->kind == IR_CALL && call->n ? call->kid[0] : NULL;
    int m;
    const char *orig;
    if (!f || !f->text) return 0;
    if (f->kind == IR_ATTR) return (m = module_of(w, f->n ? f->kid[0] : NULL)) >= 0 ? manager_of(m, f->text) : 0;
    if (f->kind != IR_NAME) return 0;
    if (from_import_of(w, f->text, &m, &orig)) return manager_of(m, orig);
    for (size_t k = 0; k < NSTAR; k++)
        if ((w->star >> k & 1) && (m = manager_of(star_mods[k].mod, f->text))) return m;
    return 0;
}

/* A call of a manager's function: a reason when it passes what the manager lacks. */
static cr_code manager_args(wl_ctx *w, const ir_node *call, int i)
{
    size_t npos = 0;
    for (uint32_t k = 1; k < call->n; k++) {
        const ir_node *a = call->kid[k];
        int ok = a->kind != IR_STARRED && a->kind != IR_DSTARRED;
        if (ok && a->kind == IR_KEYWORD) ok = in_list(managers[i - 1].kws, a->text);
        else if (ok) ok = ++npos <= managers[i - 1].npos;
        if (!ok) return add_reason2(w, call, "args:%s", managers[i - 1].mod, managers[i - 1].name);
    }
    return CR_OK;
}

/* An assignment, for or del target: names are written, not read. */
static cr_code check_target(wl_ctx *w, const ir_node *t, int depth)
{
    cr_code rc = CR_OK;
    if (!t) return CR_OK;
    switch (t->kind) {
    case IR_NAME:
        if ((rc = star_name(w, t, t->text)) != CR_OK) return rc;
        return is_name_dunder(t->text) ? add_reason(w, t, "name:%s", t->text) : CR_OK;
    case IR_TUPLE: case IR_LIST: case IR_STARRED:
        for (uint32_t i = 0; i < t->n && rc == CR_OK; i++) rc = check_target(w, t->kid[i], depth + 1);
        return rc;
    case IR_ATTR:
        return check_attr(w, t, depth, 1);
    default:
        return check(w, t, depth + 1);
    }
}

/* Pass 2: every import, call, attribute and name read, against the tables. */
static cr_code check(wl_ctx *w, const ir_node *n, int depth)
{
    cr_code rc = CR_OK;
    uint32_t first = 0;
    if (!n) return CR_OK;
    if (depth > WL_MAX_DEPTH) return CR_ELIMIT;
    switch (n->kind) {
    case IR_IMPORT:
        if (registry_module(n->text) < 0) rc = add_reason(w, n, "import:%s", n->text);
        return rc;
    case IR_IMPORT_FROM: {
        int m = registry_module(n->text);
        if (m < 0) rc = add_reason(w, n, "import:%s", n->text);
        else if (is_star_import(n) && w->fdepth == 0) rc = CR_OK;   /* a SyntaxError in a def */
        else if (registry_attr(m, n->kid[0]->text, NULL) < 0)
            rc = add_reason2(w, n, "import:%s", m, n->kid[0]->text);
        return rc;
    }
    case IR_NAME: {
        /* A builtin the evaluator lacks, read and never bound (`except OSError:`, `f = hex`),
         * is a value in CPython and a NameError here. */
        unsigned sp = special(n->text);
        if ((sp & SN_FORBIDDEN) || (dunder(n->text) && !readable_dunder(n->text)) ||
            ((sp & SN_BUILTIN) && registry_attr(MOD_NONE, n->text, NULL) != REG_FUNC &&
             !parser_nameset_has(&w->bound, n->text) && !readable_dunder(n->text) &&
             (!WL_NAME_AND_ELLIPSIS || strcmp(n->text, "Ellipsis") != 0)))
            rc = add_reason(w, n, "name:%s", n->text);
        return rc == CR_OK ? star_name(w, n, n->text) : rc;
    }
    case IR_AUGASSIGN:
        /* The target is read (below) and written. */
        if (n->n && n->kid[0] && n->kid[0]->kind == IR_ATTR &&
            (rc = check_attr(w, n->kid[0], depth, 1)) != CR_OK)
            return rc;
        if (n->n && n->kid[0] && n->kid[0]->kind == IR_NAME && readable_dunder(n->kid[0]->text) &&
            (rc = add_reason(w, n->kid[0], "name:%s", n->kid[0]->text)) != CR_OK)
            return rc;
        break;
    case IR_FUNCDEF: case IR_PARAM:
        if (n->text && is_name_dunder(n->text) && (rc = add_reason(w, n, "name:%s", n->text)) != CR_OK)
            return rc;
        if (n->kind == IR_FUNCDEF) {
            if (n->text && (rc = star_name(w, n, n->text)) != CR_OK) return rc;
            w->fdepth++;
            for (uint32_t i = 0; i < n->n && rc == CR_OK; i++) rc = check(w, n->kid[i], depth + 1);
            w->fdepth--;
            return rc;
        }
        break;
    case IR_ATTR:
        return check_attr(w, n, depth, 0);
    case IR_EXCEPT:
        if ((rc = check_target(w, n->kid[1], depth)) != CR_OK) return rc;
        break;
    case IR_CALL: {
        int mi = manager_call(w, n);
        if (n->n && (rc = check_callee(w, n, depth)) != CR_OK) return rc;
        if (mi && (rc = manager_args(w, n, mi)) != CR_OK) return rc;
        first = 1;
        break;
    }
    case IR_WITHITEM: {
        const ir_node *e = n->kid[0], *f = e->kind == IR_CALL && e->n ? e->kid[0] : NULL;
        int mi = manager_call(w, e);
        if (!(mi && managers[mi - 1].manager) &&
            (rc = add_reason(w, e, "with:%s", f && f->text ? f->text : ir_kind_name(e->kind))) != CR_OK)
            return rc;
        if ((rc = check_target(w, n->kid[1], depth)) != CR_OK) return rc;
        return check(w, e, depth + 1);
    }
    case IR_ASSIGN:
        for (uint32_t i = 0; i + 1 < n->n && rc == CR_OK; i++) rc = check_target(w, n->kid[i], depth);
        first = n->n ? n->n - 1 : 0;
        break;
    case IR_FOR: case IR_COMPFOR:
        if (n->n && (rc = check_target(w, n->kid[0], depth)) != CR_OK) return rc;
        first = 1;
        break;
    case IR_DEL:
        for (uint32_t i = 0; i < n->n && rc == CR_OK; i++) rc = check_target(w, n->kid[i], depth);
        first = n->n;
        break;
    case IR_GLOBAL:
        return CR_OK;
    case IR_ELLIPSIS:
        return WL_NAME_AND_ELLIPSIS ? CR_OK : add_reason(w, n, "node:%s", "ellipsis");
    default:
        break;
    }
    for (uint32_t i = first; i < n->n && rc == CR_OK; i++) rc = check(w, n->kid[i], depth + 1);
    return rc;
}

/* Reasons in source order (lowering and the whitelist find them in two passes); stable, and
 * "reasons:truncated" stays last. At most 1001 reasons, so insertion sort is enough. */
static void sort_reasons(ir_module *m)
{
    size_t n = m->nreasons;
    if (n && strcmp(m->reasons[n - 1].code, "reasons:truncated") == 0) n--;
    for (size_t i = 1; i < n; i++) {
        ir_reason r = m->reasons[i];
        size_t j = i;
        while (j > 0 && (m->reasons[j - 1].line > r.line ||
                         (m->reasons[j - 1].line == r.line && m->reasons[j - 1].col > r.col))) {
            m->reasons[j] = m->reasons[j - 1];
            j--;
        }
        m->reasons[j] = r;
    }
}

cr_code parser_whitelist(ir_module *m, const char *src, size_t len, cr_error *err)
{
    const char *bound[64] = { 0 };
    wl_ctx w = { .m = m, .src = src, .len = len, .lines = { .src = src, .len = len },
                 .bound = { .slot = bound, .cap = sizeof bound / sizeof bound[0] } };
    pthread_once(&specials_once, specials_init);
    cr_code rc = collect(&w, m->root, 0);
    if (rc == CR_OK) rc = check(&w, m->root, 0);
    if (rc == CR_OK) sort_reasons(m);
    free(w.lines.start);
    parser_nameset_free(&w.bound);
    for (int i = 0; i < MOD_COUNT; i++) parser_nameset_free(&w.mods[i]);
    free(w.from);
    parser_nameset_free(&w.containers);
    parser_nameset_free(&w.caught);
    if (rc == CR_ELIMIT) return cr_error_set(err, rc, 0, 0, "IR deeper than %d", WL_MAX_DEPTH);
    if (rc != CR_OK) return cr_error_set(err, rc, 0, 0, "out of memory in the whitelist check");
    return CR_OK;
}
