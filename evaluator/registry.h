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
#define FUNC(mod, name, id, impl) id,
#define BUILTIN(mod, name, id) id,
#include "evaluator/registry.def"
    B_COUNT
};

enum {
#define METHOD(id, name, kinds) id,
#include "evaluator/registry.def"
    MT_COUNT_END
};

/* A row of registry.def, as both sides read it. */
typedef enum { REG_FUNC, REG_VALUE, REG_MODULE } reg_kind;

/* The module a dotted name names, or -1. */
int registry_module(const char *name);
/* The row of module mod named `name`: its kind, and for a function its id; -1 when none. A
 * module "a.b" is the REG_MODULE attribute b of a (*id: its module id). */
int registry_attr(int mod, const char *name, int *id);
const char *registry_module_name(int mod);
const char *registry_func_name(int id);
int registry_func_module(int id);
const char *registry_method_name(int id);
/* The first row at or after i of module mod (its name in *name), or -1: a walk over a
 * module's names is `for (i = registry_next(m, 0, &n); i >= 0; i = registry_next(m, i + 1, &n))`. */
int registry_next(int mod, int i, const char **name);
/* Whether some value kind has a method / an attribute of this name. */
int registry_method(const char *name);      /* MT_* id or -1 */
int registry_is_attr(const char *name);

#endif
