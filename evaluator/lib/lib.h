/* evaluator/lib/lib.h: what a library of the evaluator (the builtins, the built-in types'
 * methods, the modules mod_*.c) uses beyond the value floor (value/value.h): the registry's
 * rows reached, argument binding and checks with CPython's messages, a call of a Python
 * function (through the interpreter's hook), and the implementations subset.def names.
 * Raising is the value floor's (eval_raise). A library never includes the interpreter's
 * header. */
#ifndef CR_EVAL_LIB_H
#define CR_EVAL_LIB_H

#include "evaluator/value/value.h"

/* A function of subset.def. eval_builtin_call has checked the count of positional
 * arguments against its row; it checks the rest (types, keywords). */
typedef val *(*eval_fn)(eval_cx *cx, eval_args *a, const ir_node *at);

/* ---- dispatch.c: subset.def's rows reached ---- */
val *eval_builtin_call(eval_cx *cx, int id, eval_args *a, const ir_node *at);
int eval_builtin_lookup(const char *name);               /* builtin (MOD_NONE) id or -1 */
val *eval_module(eval_cx *cx, int mod);                  /* the module value, new reference */
/* Attribute `name` of module mod (a function, a value, a submodule), new reference; raises
 * CPython's AttributeError when the registry has no such row. */
val *eval_module_attr(eval_cx *cx, int mod, const char *name, const ir_node *at);
val *eval_builtin_val(eval_cx *cx, int id);                /* new reference */
int eval_method_valid(const val *self, int id);
int eval_method_lookup(const char *name);                /* method id or -1 */
/* Argument checks with CPython's messages: lo..hi positional arguments, keywords among kws
 * (NULL-terminated, or NULL: none). 0, -1 raised. kwarg: the keyword's value or NULL. */
int eval_check_args(eval_cx *cx, eval_args *a, size_t lo, size_t hi, const char *const *kws,
                    const char *name, const ir_node *at);
val *eval_kwarg(eval_args *a, const char *name);
/* Keywords among kws only (the count is the registry row's to check): 0, -1 raised. */
int eval_check_kw(eval_cx *cx, eval_args *a, const char *const *kws, const char *name,
                  const ir_node *at);
/* The count only, lo..hi positional arguments (keywords are the caller's): 0, -1 raised. */
int eval_check_argc(eval_cx *cx, eval_args *a, size_t lo, size_t hi, const char *name,
                    const ir_node *at);
/* Row id's parameters as its call gave them, which eval_builtin_call has bound against the
 * row's sig: out[i] (one per parameter) the argument of parameter i or NULL. */
void eval_bound(int id, eval_args *a, val **out);
/* A Python function's binding of a's arguments to sig's parameters (out[i]: parameter i's
 * argument or NULL), with CPython's TypeErrors: lo parameters required, self 1 for a method
 * (counted in the messages), ufunc for a numpy ufunc's words. 0, -1 raised. */
int eval_bind_def(eval_cx *cx, eval_args *a, const reg_sig *s, size_t lo, size_t self, int ufunc,
                  val **out, const ir_node *at);
/* The binder of C functions that take keywords through PyArg_ParseTupleAndKeywords (datetime's
 * constructors and methods, decimal's), with its messages: types[i] per parameter, 'i' a C
 * int (into iv[i], eval_c_int), 'O' any object, 'U' / 's' a str, 'C' a one-character str;
 * the first nreq required, at most maxpos positional (the format's '$'). Conversions run
 * left to right as arguments are taken, so a bad type comes before a missing argument
 * further on. ov[i]: parameter i's argument or NULL. 0, -1 raised. */
typedef struct {
    const char *fn;              /* the format's name with "()", "replace()"; NULL: none */
    const char *types;
    const char *const *names;
    int nreq, maxpos;
} eval_argspec;
int eval_parse_args(eval_cx *cx, eval_args *a, const eval_argspec *sp, val **ov, long *iv,
                    const ir_node *at);
/* CPython's 'i' converter: an int within a C int. 0, -1 raised. */
int eval_c_int(eval_cx *cx, val *v, long *out, const ir_node *at);
/* A METH_NOARGS method's check ("date.weekday"): 0, -1 raised. */
int eval_no_args(eval_cx *cx, eval_args *a, const char *qual, const ir_node *at);
val *eval_call1(eval_cx *cx, val *f, val *x, const ir_node *at);   /* f(x), new reference */
/* self.name(...) of method id: an object's class first, then the built-in type's library
 * (str_methods.c, seq_methods.c, dict_methods.c). */
val *eval_method_call(eval_cx *cx, val *self, int id, eval_args *a, const ir_node *at);

/* ---- builtins.c ---- */
int eval_print(eval_cx *cx, eval_args *a, const ir_node *at);

/* ---- the built-in types' methods: id an MT_* of the type's (eval_method_call checked) ---- */
val *eval_str_method(eval_cx *cx, val *self, int id, eval_args *a, const ir_node *at);
val *eval_list_method(eval_cx *cx, val *self, int id, eval_args *a, const ir_node *at);
/* index and count, which list, tuple and str share */
val *eval_seq_index_count(eval_cx *cx, val *self, int id, eval_args *a, const ir_node *at);
val *eval_dict_method(eval_cx *cx, val *self, int id, eval_args *a, const ir_node *at);
val *eval_set_method(eval_cx *cx, val *self, int id, eval_args *a, const ir_node *at);
/* list.sort's sort of l in place, which sorted() shares: 0, -1 raised */
int eval_sort_list(eval_cx *cx, val *l, val *key, int reverse, const ir_node *at);
/* dict.update(src, **kwargs) of d, which dict() shares: 0, -1 raised */
int eval_dict_update(eval_cx *cx, val *d, val *src, eval_args *a, const ir_node *at);

/* The implementations subset.def's FUNC and VALUE rows name (a name in two rows is
 * declared twice, which C allows): builtins.c, mod_*.c, value/exceptions.c. */
#define FUNC(mod, name, id, impl, lo, hi, style, sig) \
    val *impl(eval_cx *cx, eval_args *a, const ir_node *at);
#define VALUE(mod, name, get) val *get(eval_cx *cx, const ir_node *at);
#include "ir/subset.def"

#endif
