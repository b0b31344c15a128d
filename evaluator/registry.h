/* evaluator/registry.h: the ids registry.def's rows give: modules, functions and methods.
 * The parser includes this (names only, through registry.def) as well as the evaluator. */
#ifndef CR_REGISTRY_H
#define CR_REGISTRY_H

enum {
#define MODULE(id, name) id,
#include "evaluator/registry.def"
    MOD_COUNT
};

/* Function ids, in row order (a builtin function value's val.sub). */
enum {
#define FUNC(mod, name, id, impl, lo, hi, style, sig) id,
#include "evaluator/registry.def"
    B_COUNT
};

enum {
#define METHOD(id, name, kinds) id,
#include "evaluator/registry.def"
    MT_COUNT_END
};

/* How CPython words a wrong argument count: each family of its functions has its own. A
 * FUNC row's lo..hi and sig fill the words in: `name` below is sig's name (the row's own
 * when sig is ""), and "mod." before it in AR_O and AR_NOARGS rows of a module. */
typedef enum {
    AR_O,        /* METH_O: "name() takes exactly one argument (N given)" */
    AR_NOARGS,   /* METH_NOARGS: "name() takes no arguments (N given)" */
    AR_CHECK,    /* _PyArg_CheckPositional: "name expected [at least |at most ]K argument[s],
                  * got N" */
    AR_CLINIC,   /* Argument Clinic's _PyArg_UnpackKeywords over sig's parameters (a "/"
                  * ends the positional-only ones, a "*" begins the keyword-only ones):
                  * "name() takes at most K arguments (N given)", "name() takes exactly K
                  * positional arguments (N given)", "name() missing required argument 'p'
                  * (pos K)"; a required one given by keyword counts as missing (the
                  * impls read them by position) */
    AR_VECTOR,   /* enumerate's own vectorcall: as AR_CLINIC, without " (pos K)" */
    AR_DEF,      /* a def: "name() takes [from J to ]K positional argument[s] but N were
                  * given" (K: sig's positional parameters), "name() missing N required
                  * positional argument[s]: 'p'[, 'q'[,] and 'r']"; too few only without
                  * keywords (one may give a parameter), the rest is the impl's binding */
    AR_UFUNC,    /* a numpy ufunc: "name() takes from J to K positional arguments but N were
                  * given" for too few as well */
    AR_OWN,      /* words of the function's own (map, math.log): impl checks the count */
} ar_style;
#define AR_MANY 255   /* hi: no limit */

/* A row of registry.def, as both sides read it. */
typedef enum { REG_FUNC, REG_VALUE, REG_MODULE } reg_kind;

/* The module a dotted name names, or -1. */
int registry_module(const char *name);
/* The row of module mod named `name`: its kind, and for a function its id; -1 when none. A
 * module "a.b" is the REG_MODULE attribute b of a (*id: its module id). */
int registry_attr(int mod, const char *name, int *id);
const char *registry_module_name(int mod);
const char *registry_func_name(int id);
/* A function row's arity: positional arguments lo..hi, the message style and sig. */
void registry_func_arity(int id, int *lo, int *hi, int *style, const char **sig);
int registry_func_module(int id);
const char *registry_method_name(int id);
/* The first row at or after i of module mod (its name in *name), or -1: a walk over a
 * module's names is `for (i = registry_next(m, 0, &n); i >= 0; i = registry_next(m, i + 1, &n))`. */
int registry_next(int mod, int i, const char **name);
/* Whether some value kind has a method / an attribute of this name. */
int registry_method(const char *name);      /* MT_* id or -1 */
int registry_is_attr(const char *name);

#endif
