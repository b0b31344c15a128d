/* ir/subset.h: the in-process subset's ids (modules, functions, methods), as subset.def's
 * rows give them, and its name lookups. Both the whitelist (parser/whitelist.c) and the
 * evaluator include this; the evaluator's dispatch (impl pointers) is its own
 * (evaluator/lib/dispatch.c). */
#ifndef CR_IR_SUBSET_H
#define CR_IR_SUBSET_H

enum {
#define MODULE(id, name) id,
#include "ir/subset.def"
    MOD_COUNT
};

/* Function ids, in row order (a builtin function value's val.sub). */
enum {
#define FUNC(mod, name, id, impl, lo, hi, style, sig) id,
#include "ir/subset.def"
    B_COUNT
};

enum {
#define METHOD(id, name, kinds) id,
#include "ir/subset.def"
    MT_COUNT_END
};

/* How CPython binds a call's arguments and words its TypeError: each family of its functions
 * has its own. A FUNC row's lo..hi and sig fill the words in: `name` below is sig's name. A
 * row whose sig has no parameter a keyword may name refuses any keyword first, as CPython
 * does: "q() takes no keyword arguments", q the row's name, "mod.name" for a module's
 * function (vectorcall's name for it) except AR_OWN rows and exception classes. */
typedef enum {
    AR_O,        /* METH_O: "q() takes exactly one argument (N given)" */
    AR_NOARGS,   /* METH_NOARGS: "q() takes no arguments (N given)" */
    AR_CHECK,    /* _PyArg_CheckPositional over the positional arguments: "row expected [at
                  * least |at most ]K argument[s], got N" (row: the row's own name); then
                  * keywords as AR_CLINIC over the parameters after "/" (sorted's are
                  * list.sort's: its sig is named "sort") */
    AR_CLINIC,   /* Argument Clinic's _PyArg_UnpackKeywords: "name() takes at most K
                  * [keyword ]arguments (N given)", "name() takes exactly K positional
                  * arguments (N given)", "name() missing required argument 'p' (pos K)",
                  * "argument for name() given by name ('p') and position (K)", "'k' is an
                  * invalid keyword argument for name()" */
    AR_VECTOR,   /* enumerate's own vectorcall: the arguments fill the first parameters, each
                  * keyword one that no positional argument filled; words as AR_CLINIC's,
                  * without " (pos K)" */
    AR_DEF,      /* a def: the keywords first ("name() got an unexpected keyword argument
                  * 'k'", "... multiple values for argument 'p'", "... some positional-only
                  * arguments passed as keyword arguments: 'p, q'"), then "name() takes [from
                  * J to ]K positional argument[s] but N were given" (K: sig's positional
                  * parameters), then "name() missing N required positional argument[s]:
                  * 'p'[, 'q'[,] and 'r']" */
    AR_UFUNC,    /* a numpy ufunc: "name() takes from J to K positional arguments but N were
                  * given" first, for too few as well; keywords as AR_DEF's */
    AR_OWN,      /* words of the function's own (map, math.log, print, localcontext): impl
                  * checks the count and the keywords */
} ar_style;
#define AR_MANY 255   /* hi: no limit */

/* A FUNC row's sig, parsed: "name(p, q, /, r, *, s)" as CPython's inspect.signature has it,
 * without defaults. A "/" ends the positional-only parameters, a "*" (or "*args") begins
 * the keyword-only ones, "**kwargs" takes any other keyword. A parameter may carry a shape
 * letter for the whitelist ("rate:S", parser/whitelist.c): in a module that has them, only
 * parameters with a letter are in the subset. */
#define REG_MAXP 12
typedef struct {
    const char *name;            /* the name CPython's messages print ("" sig: the row's) */
    const char *p[REG_MAXP];     /* parameter names, in order */
    char shape[REG_MAXP];        /* their shape letters, 0: none */
    unsigned char np, nposonly, npos, varargs, varkw;   /* [0,nposonly) positional-only,
                                  * [0,npos) positional, [npos,np) keyword-only */
    char buf[200];
} reg_sig;

/* A row of subset.def, as both sides read it. */
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
/* Function id's sig, parsed into *s (which the names point into). */
void registry_func_sig(int id, reg_sig *s);
/* Whether module mod's functions carry shape letters (the whitelist checks their arguments). */
int registry_module_shaped(int mod);
const char *registry_method_name(int id);
/* The first row at or after i of module mod (its name in *name), or -1: a walk over a
 * module's names is `for (i = registry_next(m, 0, &n); i >= 0; i = registry_next(m, i + 1, &n))`. */
int registry_next(int mod, int i, const char **name);
/* Whether some value kind has a method / an attribute of this name. */
int registry_method(const char *name);      /* MT_* id or -1 */
int registry_is_attr(const char *name);

#endif
