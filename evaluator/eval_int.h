/* evaluator/eval_int.h: what the evaluator's libraries and interpreter share above the value
 * floor (value/value.h): scope resolution and the helpers each file offers the others. Not a
 * contract: only the evaluator's own files include it. */
#ifndef CR_EVAL_INT_H
#define CR_EVAL_INT_H

#include "evaluator/evaluator.h"
#include "evaluator/value/value.h"

/* ---- scope resolution (resolve.c) ---- */
typedef enum { REF_GLOBAL, REF_LOCAL, REF_FREE } ref_kind;

typedef struct {
    uint8_t kind;          /* ref_kind (for an ATTR node: idx is its method id or -1) */
    uint16_t depth;        /* REF_FREE: frames up from the current frame's parent (0 = parent) */
    uint32_t idx;          /* REF_GLOBAL: symbol; otherwise the slot */
} name_ref;

struct res_ent {
    const void *key;       /* an ir_node */
    name_ref ref;
    union {
        scope *sc;         /* FUNCDEF, LAMBDA, comprehensions: their own scope */
        val *k;            /* NUM, STR: the constant, parsed on first use (one reference) */
    };
    uint32_t sym;          /* a NAME that collect() met: its symbol + 1 (0: not yet known) */
};

/* A function of subset.def. eval_builtin_call has checked the count of positional
 * arguments against its row; it checks the rest (types, keywords). */
typedef val *(*eval_fn)(eval_cx *cx, eval_args *a, const ir_node *at);

/* ---- eval.c ---- */
int eval_gen_next(eval_cx *cx, val *g, val **out);       /* a generator's next, as eval_iter_next */
val *eval_call(eval_cx *cx, val *f, eval_args *a, const ir_node *at);
val *eval_binop(eval_cx *cx, int op, val *a, val *b, const ir_node *at);
val *eval_sum_add(eval_cx *cx, val *acc, val *x, const ir_node *at);   /* sum()'s step */
val *eval_get_item(eval_cx *cx, val *o, val *k, const ir_node *at);   /* o[k], new reference */
val *eval_nonfinite(eval_cx *cx, double d);   /* inf, -inf or nan */
/* A real number as CPython's float() sees it; an int past the double range raises. 0, -1 */
int eval_to_double(eval_cx *cx, val *v, double *out, const ir_node *at);

/* Raises KeyError(k) (str: repr(k)); NULL. */
val *eval_key_error(eval_cx *cx, val *k, const ir_node *at);

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
/* int(x), round(x), math.floor(x), ... of an infinity or NaN: CPython's error; NULL. */
val *eval_inf_error(eval_cx *cx, val *x, const ir_node *at);

/* ---- format.c ---- */
val *eval_str_percent(eval_cx *cx, val *fmt, val *args, const ir_node *at);
int eval_format(eval_cx *cx, cr_buf *b, val *v, const char *spec, size_t len,
                const ir_node *at);
val *eval_str_format(eval_cx *cx, val *self, eval_args *a, const ir_node *at);

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
 * declared twice, which C allows): builtins.c, exceptions.c, format.c, mod_*.c. */
#define FUNC(mod, name, id, impl, lo, hi, style, sig) \
    val *impl(eval_cx *cx, eval_args *a, const ir_node *at);
#define VALUE(mod, name, get) val *get(eval_cx *cx, const ir_node *at);
#include "ir/subset.def"

/* ---- resolve.c ---- */
int resolve_module(eval_cx *cx, const ir_node *root, cr_error *err);
int resolve_sym(eval_cx *cx, const char *name);           /* interns; -1 on ENOMEM */
static inline uint64_t resolve_hash_ptr(const void *p)
{
    uint64_t x = (uint64_t)(uintptr_t)p;
    x ^= x >> 29;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 32;
    return x;
}
/* A node's entry, or NULL; inline: every name and literal evaluated asks it. */
static inline const res_ent *resolve_get(const resolver *rs, const void *node)
{
    if (!rs->cap) return NULL;
    size_t mask = rs->cap - 1;
    for (size_t i = resolve_hash_ptr(node) & mask;; i = (i + 1) & mask) {
        if (rs->ent[i].key == node) return &rs->ent[i];
        if (!rs->ent[i].key) return NULL;
    }
}
int resolve_find(const resolver *rs, const char *name);    /* symbol or -1, never adds */
void resolve_free(eval_cx *cx);
void *resolve_alloc(eval_cx *cx, size_t size);             /* zeroed; NULL on ENOMEM */


#endif
