/* evaluator/interp/interp.h: the interpreter's own: scope resolution and what its files offer each
 * other, over the libraries (lib/lib.h) and the values (value/value.h). Not a contract: only
 * the interpreter's files include it. */
#ifndef CR_EVAL_INTERP_H
#define CR_EVAL_INTERP_H

#include "evaluator/evaluator.h"
#include "evaluator/lib/lib.h"

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

/* How a statement or block ended. */
typedef enum { X_NORMAL, X_BREAK, X_CONTINUE, X_RETURN, X_ERROR } xres;

/* ---- eval.c: expressions, and the statements made of targets ---- */
int eval_gen_next(eval_cx *cx, val *g, val **out);       /* a generator's next, as eval_iter_next */
val *eval_call(eval_cx *cx, val *f, eval_args *a, const ir_node *at);
val *eval_expr(eval_cx *cx, const ir_node *n);           /* new reference, or NULL raised */
val *eval_make_function(eval_cx *cx, const ir_node *n);  /* a def's or a lambda's value */
int eval_assign(eval_cx *cx, const ir_node *t, val *v);  /* binds target t to v (borrowed) */
int eval_store_ref(eval_cx *cx, const ir_node *n, val *v);   /* stores v (stolen) at name n */
val **eval_name_slot(eval_cx *cx, const ir_node *t);     /* the slot name t is stored in, or NULL */
/* A for loop's next item written into the target's own number: 1 bound, 0 not this way,
 * -1 raised (eval.c says when). */
int eval_next_in_place(eval_cx *cx, eval_iter *it, const ir_node *target, const ir_node *at);
int eval_augassign(eval_cx *cx, const ir_node *n);       /* 0, -1 raised */
int eval_del_target(eval_cx *cx, const ir_node *t);      /* 0, -1 raised */
int eval_import_star(eval_cx *cx, int mod, const ir_node *n);   /* 0, -1 raised */

/* ---- except.c: raise, try, with, assert ---- */
int eval_do_raise(eval_cx *cx, const ir_node *n);        /* -1 */
xres eval_exec_try(eval_cx *cx, const ir_node *n);
xres eval_exec_with(eval_cx *cx, const ir_node *n, uint32_t i);   /* from item i on */
const ir_node *eval_assert_site(const ir_node *stmt);    /* where a failed assert is placed */

/* ---- exec.c ---- */
xres eval_exec_block(eval_cx *cx, const ir_node *b);

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
