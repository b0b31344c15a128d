/* evaluator/value/value.h: the value floor: the value model, the run's context, iteration,
 * hashing, printing, formatting and raising, over the numeric kernel (num/). A file of this
 * floor includes this header and num/'s, never a library's (lib/) or the interpreter's
 * (interp/): where a value must run code (a generator's next, map's function) it calls
 * through the context's hooks, which the interpreter sets (eval_hooks).
 *
 * Values are reference counted (rc). Containers, functions and frames can form cycles (a
 * list that holds itself, a closure stored in the frame it captures), so they are also kept
 * on one list per run; eval_run ends by clearing and freeing whatever is still on it. Every
 * allocation is accounted in cx->mem against limits.max_memory.
 *
 * Exactness is a per-value flag (VF_INEXACT): a number computed from an inexact operand or by
 * a rounded operation (sqrt, x**0.5, a float past float_bits) carries it, and so does a string
 * rendered from such a number. A container is inexact when anything it holds is. An inexact
 * number carries NUM_GUARD digits past the policy's precision and decides (compares, hashes,
 * truncates, floors, rounds, formats) as it prints, rounded to the precision (eval_decided),
 * so an error within the guard digits cannot flip a decision exact math would take (and a
 * difference of two values that compare equal is 0, not their guard digits). Control
 * flow cannot carry a flag (`x > y` is the immortal True), so an inexact value that takes a
 * discrete decision of any kind marks the run (inexact_decided): its final value is then
 * never exact, whatever the decision chose. */
#ifndef CR_EVAL_VALUE_H
#define CR_EVAL_VALUE_H

#include <gmp.h>
#include <stdint.h>

#include "common/common.h"
#include "evaluator/num/num.h"
#include "ir/ir.h"
#include "ir/subset.h"

typedef enum {
    V_NONE, V_BOOL, V_INT, V_FLOAT, V_INF, V_STR, V_LIST, V_TUPLE, V_DICT, V_SET, V_RANGE,
    V_ITER, V_FUNC, V_BUILTIN, V_MODULE, V_METHOD, V_EXC, V_FRAME, V_ELLIPSIS, V_OBJ
} vkind;

enum {
    VF_INEXACT = 1u << 0,
    VF_TRACKED = 1u << 1,   /* on the run's cycle list */
    VF_IMMORTAL = 1u << 2,  /* None, True, False, Ellipsis: never freed by a decref */
    VF_NEGZ = 1u << 3,      /* a V_FLOAT whose value is 0: CPython's -0.0 */
    VF_DOUBLE = 1u << 4,    /* a V_FLOAT that is CPython's double exactly (math.pi, nextafter,
                             * a subnormal): repr prints the double's shortest repr, as
                             * CPython's; an operation's result drops it (negation keeps it) */
};

/* V_ITER sub-kinds. Below IT_KEYS, a one-shot iterator: its state (eval_lazy) walks its
 * sources on demand, so its memory does not depend on how many items it gives, and a second
 * pass finds it exhausted. From IT_KEYS on, a dict view: it holds no items; every reader
 * walks its `dict` itself, so a change is seen. */
enum { IT_ZIP, IT_MAP, IT_FILTER, IT_ENUMERATE, IT_REVERSED, IT_GENERATOR,
       IT_KEYS, IT_VALUES, IT_ITEMS };

/* V_INF sub-kinds: the floats with no rational value. Each is exact (nothing was rounded to
 * make it) and follows IEEE arithmetic as CPython's float does. */
enum { INF_POS, INF_NEG, INF_NAN };
#define IS_NAN(v) ((v)->kind == V_INF && (v)->sub == INF_NAN)

typedef struct val val;
typedef struct scope scope;
typedef struct eval_class eval_class;
typedef struct eval_lazy eval_lazy;

typedef struct {
    val *key, *value;      /* key NULL: a deleted slot */
    uint64_t hash;
} dict_ent;

struct val {
    uint32_t rc;
    uint8_t kind;          /* vkind */
    uint8_t flags;         /* VF_* */
    uint16_t sub;          /* builtin id, method id, exception id, iterator kind, INF_* */
    size_t msz;            /* bytes accounted in cx->mem for this value */
    val *gprev, *gnext;    /* cycle list (VF_TRACKED only) */
    union {
        mpq_t q;                                                   /* BOOL INT FLOAT */
        struct { char *s; size_t len, nch; uint64_t hash; } str;   /* STR (UTF-8) */
        struct { val **it; size_t len, cap; } seq;                 /* LIST TUPLE */
        struct { val *dict; eval_lazy *lz; } itr;   /* ITER: a view's dict, or the state */
        struct { dict_ent *ent; int32_t *idx; size_t len, used, cap, icap; } d; /* DICT SET */
        struct { int64_t start, stop, step; } rng;                 /* RANGE */
        struct { const ir_node *node; const scope *sc; val *env; val **defs; } fn; /* FUNC */
        struct { val *self; } meth;                                /* METHOD (sub: id) */
        struct { val *args; int line, col; } exc;   /* EXC (sub: class): args a TUPLE or
                                   * NULL for (); line:col where it was first raised, or 0 */
        struct { val *parent; size_t n; val **slot; } fr;          /* FRAME */
        struct { const eval_class *cls; void *data; } obj;        /* OBJ */
    } u;
};

/* A function, lambda or comprehension scope (resolve.c makes them): a function value's code,
 * as CPython's code object is. Slots 0..nparams-1 hold the parameters. */
struct scope {
    scope *parent;         /* NULL: the enclosing scope is the module */
    const char *name;      /* "f", "<lambda>", "<listcomp>" */
    uint32_t nslots, nparams;
    int32_t varargs, kwargs;   /* parameter index of *args / **kw, or -1 */
    int is_solution;       /* module-level def solution() callable with no argument: its
                              calls count for the final-value rule */
    uint32_t *names;       /* slot → symbol */
    uint32_t cap;
    uint32_t *globals;     /* symbols declared `global` */
    uint32_t nglobals, gcap;
};

/* The interpreter's name tables (resolve.c), held in the context, as the rest of the run's
 * state is: the floors below the interpreter never read them. Its tables live in
 * resolve_alloc() memory: freed all at once by resolve_free(). */
typedef struct res_ent res_ent;
typedef struct {
    res_ent *ent;
    size_t cap, n;
    const char **syms;     /* symbol id → name */
    uint32_t *symlen, *symhash;   /* symbol id → strlen(name), cr_hash_name(name) */
    uint32_t nsyms, symcap;
    uint32_t *symidx;      /* open addressing over syms */
    size_t symicap;
    int16_t *sym_builtin;  /* symbol id → builtin id, -1 none, -2 not looked up yet */
} resolver;

/* ---- run context ---- */
/* decimal's context (zero: CPython's defaults, so a run starts with them): precision
 * (0: 28), Emax and Emin as distances from the defaults (DEC_EMAX - Emax, Emin - DEC_EMIN in
 * mod_decimal.c), the signals raised so far and the traps as a difference from the default
 * traps (mod_decimal.c's SG_* bits), rounding mode (0: ROUND_HALF_EVEN), clamp. */
typedef struct {
    int64_t prec, emax, emin;
    uint16_t flags, traps;
    uint8_t round, clamp;
} eval_decctx;

typedef struct eval_cx {
    const cr_policy *pol;
    const cr_limits *lim;
    const struct eval_hooks *hooks;   /* the interpreter's services (eval_run sets them) */
    num_ctx nc;
    cr_error err;          /* err.code != CR_OK: an exception or limit is propagating */
    uint64_t ops, max_ops;
    uint64_t next_check;   /* ops at which eval_count looks at the limits and the clock */
    double wall0, wall_last; /* CLOCK_MONOTONIC seconds when the run began, at the last look */
    double intr_last;      /* ... and at the last look at limits.interrupt_fd */
    double cpu0, cpu_lead; /* thread CPU when first read (-1: not yet); wall time before it */
    uint32_t clock_every;  /* steps between two looks at the clock */
    uint32_t call_depth;   /* function calls under way */
    uint32_t rdepth;       /* CPython's recursion depth: eval_recurse() */
    uintptr_t stack_limit; /* below this address the next level takes a new segment */
    size_t mem;
    val none, vtrue, vfalse, ellipsis;   /* immortal singletons */
    val gc;                /* head of the cycle list (sentinel) */
    val *num_free;         /* freed numbers, mpq kept initialised */
    size_t nnum_free;
    val *pending;          /* values waiting to be freed (see eval_val_free) */
    int freeing;
    val *chars[128];       /* one-character ASCII strings, made on demand */
    uint32_t nchars;       /* how many of chars[] are set */
    cr_buf out;            /* stdout */
    /* the resolver's scopes: bump-allocated from `scratch`, then from malloc'd chunks, so a
     * small program's run makes no large allocation */
    unsigned char *chunks; /* list of chunks, linked through their first pointer */
    size_t scratch_used;
    resolver rs;
    val **consts;          /* the constants cached in rs's entries (resolve_alloc memory) */
    uint32_t nconsts, constcap;
    val **globals;         /* symbol id → value or NULL */
    val *frame;            /* current frame (NULL: module level) */
    val *retval;           /* IR_RETURN's value on its way out */
    /* The exception propagating as err, when it is an object that err cannot describe (a
     * user's instance, a KeyError's key), else NULL (eval_raise clears it); and the one the
     * innermost running `except` handles (what a bare `raise` re-raises; borrowed from
     * the handler), or NULL. */
    val *exc, *handled;
    int64_t last_assigned; /* symbol of the last module-level assignment, or -1 */
    val *last_expr;        /* last non-None module-level expression statement value */
    const ir_node *docstring; /* the module's docstring statement: not an expression's value */
    val *mods[MOD_COUNT];  /* module values, made on demand */
    val *bvals[B_COUNT];   /* builtin function values, made on demand */
    uint32_t nbvals;       /* how many of bvals[] are set (or more): cx_free stops there */
    int solution_called;
    val *solution_value;   /* what the last call of solution() that returned gave, whoever
                              called it */
    int inexact_decided;   /* an inexact value took a decision: the final value is inexact */
    mpq_t dq[2];           /* eval_decided()'s scratch */
    eval_decctx dec;       /* decimal's current context, per run */
    val *dec_cur;          /* the Context object these fields are, once one was asked for */
    _Alignas(16) unsigned char scratch[8192];   /* last: eval_run does not clear it */
} eval_cx;

/* The exception classes: B_EXCEPTION .. B_EXC_LAST (subset.def keeps them together) */
#define B_EXC_LAST B_DECOVERFLOW
#define IS_EXC_CLASS(id) ((id) >= B_EXCEPTION && (id) <= B_EXC_LAST)
/* ---- exceptions.c ---- */
int eval_exc_lookup(const char *name);   /* an exception class by name, or -1 */
/* Whether exception class `id` is `cls` or derives from it (CPython's hierarchy). */
int eval_exc_is(int id, int cls);
/* The status code class id raises with (CR_EPY_EXCEPTION: its name says it), and the class
 * a status code stands for (-1: none). */
cr_code eval_exc_code(int id);
int eval_exc_of_code(cr_code c);

typedef struct {
    val **pos;
    size_t npos;
    const char **kwname;
    val **kw;
    size_t nkw;
} eval_args;

/* An instance of exception class id with args args[0..n) (borrowed), or (arg,) / () when
 * arg is NULL. */
val *eval_exc_new(eval_cx *cx, int id, val **args, size_t n);
val *eval_exc_new1(eval_cx *cx, int id, val *arg);

/* A class of objects (V_OBJ) that a module brings: dates, decimals, distributions. An object
 * owns u.obj.data (accounted in its msz through eval_mem) and may hold numbers and strings
 * but never a container, so objects form no cycles and are not tracked. Every hook may be
 * NULL; a hook that returns NULL (or -2) without raising means "not supported here", and
 * the caller raises CPython's TypeError or AttributeError. A class object (`date`,
 * `Decimal`) is itself an object, of a class whose `call` makes instances. */
struct eval_class {
    const char *name;      /* the type's name as CPython's messages print it (tp_name:
                            * "decimal.Decimal"); the last component is type(x).__name__ */
    void (*drop)(eval_cx *cx, val *self);                   /* release u.obj.data */
    int (*repr)(eval_cx *cx, cr_buf *b, val *self, int as_str);   /* 0, -1 raised */
    int (*eq)(eval_cx *cx, val *a, val *b);     /* either is of this class: 1, 0, -1 */
    int (*cmp)(eval_cx *cx, int op, val *a, val *b);   /* IR_LT..: 1, 0, -1, -2 unorderable */
    int (*hash)(eval_cx *cx, val *self, uint64_t *h);   /* 0, -1 raised */
    int (*truth)(eval_cx *cx, val *self);               /* NULL: always true */
    val *(*binop)(eval_cx *cx, int op, val *a, val *b, const ir_node *at);
    val *(*unary)(eval_cx *cx, int op, val *self, const ir_node *at);  /* IR_NEG, IR_POS */
    val *(*attr)(eval_cx *cx, val *self, const char *name, const ir_node *at);
    int (*setattr)(eval_cx *cx, val *self, const char *name, val *v, const ir_node *at);
    val *(*method)(eval_cx *cx, val *self, int id, eval_args *a, const ir_node *at);  /* MT_* */
    val *(*call)(eval_cx *cx, val *self, eval_args *a, const ir_node *at);
    int (*format)(eval_cx *cx, cr_buf *b, val *self, const char *spec, size_t len,
                  const ir_node *at);   /* NULL: str(self) for an empty spec, else TypeError */
    /* builtin `bid` (abs, float, int, round, isinstance...) with self as its first argument
     * (for B_ISINSTANCE: self is the class object, its second argument) */
    val *(*builtin)(eval_cx *cx, int bid, val *self, eval_args *a, const ir_node *at);
    /* a tuple-like object (a named tuple): its items as a new tuple, which iteration,
     * unpacking, indexing, len(), == (without an eq hook) and hash read */
    val *(*items)(eval_cx *cx, val *self);
    /* a number that is no int or float (a Decimal): its exact value, for the result's
     * fraction as the sandbox gives it. 1 set, 0 it has none (NaN), -1 raised */
    int (*rational)(eval_cx *cx, val *self, mpq_t out);
    /* a context manager (`with`): enter gives what `as` binds (a new reference) or NULL
     * raised; exit runs however the block ended, an exception still pending in cx->err, and
     * suppresses none (no manager of the subset does) */
    val *(*enter)(eval_cx *cx, val *self, const ir_node *at);
    void (*exit)(eval_cx *cx, val *self);
};
val *eval_obj_new(eval_cx *cx, const eval_class *cls, size_t datasz);   /* data zeroed */

#define EV_INCREF(v) ((v)->rc++)
void eval_val_free(eval_cx *cx, val *v);
static inline void eval_decref(eval_cx *cx, val *v)
{
    if (v && !(v->flags & VF_IMMORTAL) && --v->rc == 0) eval_val_free(cx, v);
}
/* CPython's recursion limit (limits.max_call_depth, sys.getrecursionlimit()): the module's
 * frame, each call's and each comprehension's, and each level of the walks CPython guards
 * (==, <, repr, str) count one, and one more is RecursionError, "maximum recursion depth
 * exceeded" followed by `what`. 0 counted (the caller ends with rdepth--), or -1 raised. */
int eval_recurse(eval_cx *cx, const char *what, const ir_node *at);
/* One level of a walk (hash, ==, <, repr) moved to a new stack segment (eval_deep): the
 * same call again, there. */
struct rstack;
typedef struct {
    val *a, *b;
    int op, as_str;
    uint64_t *h;
    cr_buf *buf;
    const struct rstack *up;
    unsigned depth;
} walk_level;

/* ---- the C stack (stack.c) ----
 * Every recursion (calls, expressions, statements, walks) asks eval_stack_low() at each
 * level; when its thread's stack has less than EVAL_STACK_RESERVE left, the next level runs
 * on a new stack segment (eval_deep), so no depth a run reaches overflows the C stack,
 * whatever stack its caller gave it. */
static inline int eval_stack_low(const eval_cx *cx)
{
    return (uintptr_t)__builtin_frame_address(0) < cx->stack_limit;
}
void eval_stack_start(eval_cx *cx);    /* at the start of a run, on the caller's thread */
/* fn(cx, arg) on a new stack segment: its result, or -1 with a LimitError raised when no
 * segment could be made. */
int eval_deep(eval_cx *cx, int (*fn)(eval_cx *cx, void *arg), void *arg);
#define IS_NUM(v) ((v)->kind == V_INT || (v)->kind == V_FLOAT || (v)->kind == V_BOOL)
#define IS_REAL(v) (IS_NUM(v) || (v)->kind == V_INF)   /* a number, infinities and NaN too */

/* ---- value.c ---- */
val *eval_raise(eval_cx *cx, cr_code code, const ir_node *at, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
int eval_at(eval_cx *cx, const ir_node *at);   /* -1; places an error raised without a place */
val *eval_limit(eval_cx *cx, const ir_node *at, const char *what);
/* The step budget: 0 ok, -1 raised. Every few thousand steps the slow path also looks at
 * the CPU time (limits.max_cpu_s), so work that is charged too little still ends. */
int eval_count_slow(eval_cx *cx, const ir_node *at);
void eval_clock_start(eval_cx *cx);    /* at the start of a run */
/* The CPU limit reads the run's thread's clock: a run that moves to a stack segment's thread
 * and back carries what it used (eval_cpu_used() before it leaves a thread,
 * eval_cpu_carry() on arriving in the other). */
double eval_cpu_used(const eval_cx *cx);
void eval_cpu_carry(eval_cx *cx, double used);
static inline int eval_count(eval_cx *cx, uint64_t n, const ir_node *at)
{
    cx->ops += n;
    return cx->ops <= cx->next_check ? 0 : eval_count_slow(cx, at);
}
/* A walk over elems elements and bytes bytes of text or limbs, charged before it runs: a
 * step is an element, or EVAL_BYTES_PER_STEP bytes (a byte loop runs 1 to 3 ns a byte). */
#define EVAL_BYTES_PER_STEP 16
static inline int eval_walk(eval_cx *cx, uint64_t elems, uint64_t bytes, const ir_node *at)
{
    return eval_count(cx, elems + bytes / EVAL_BYTES_PER_STEP, at);
}
/* What a malloc'd block of n bytes takes from the heap: glibc's chunk (an 8-byte header,
 * 16-byte granules, 32 bytes at least). Counting requested sizes alone left the real resident
 * memory of number-heavy programs at about 1.9x the limit: most values are small blocks, and
 * a number is three of them (the value, its numerator's and its denominator's limbs). */
static inline size_t eval_heap_cost(size_t n)
{
    return n <= 24 ? 32 : (n + 8 + 15) & ~(size_t)15;
}
int eval_mem(eval_cx *cx, val *v, size_t newsz);             /* re-account v: 0 ok, -1 */
void eval_swap_items(val *a, val *b);   /* a's contents become b's and b's a's, with their memory */
int eval_mem_room(eval_cx *cx, size_t n);    /* a temporary of n bytes fits: 0 ok, -1 */
/* n characters (is_str) or elements past limits.max_str_len: 1 with a LimitError raised */
int eval_over_len(eval_cx *cx, uint64_t n, int is_str);
val *eval_new(eval_cx *cx, vkind kind);
val *eval_new_frame(eval_cx *cx, size_t nslots);          /* slots zeroed, held inline */
val *eval_num(eval_cx *cx, vkind kind);           /* mpq set to 0 */
val *eval_num_any(eval_cx *cx, vkind kind);       /* mpq of any value: the caller sets it all */

/* q = n / d, canonical already (d > 0; d == 1 when n == 0), into the limbs q has: what
 * mpq_set_si does, without its calls, on the hot path of machine-word arithmetic
 * (_mp_alloc, _mp_size, _mp_d: gmp.h's public fields). */
static inline void eval_q_set_small(mpq_ptr q, int64_t n, uint64_t d)
{
#if GMP_NUMB_BITS == 64 && GMP_NAIL_BITS == 0
    mpz_ptr a = mpq_numref(q), b = mpq_denref(q);
    if (a->_mp_alloc >= 1 && b->_mp_alloc >= 1) {
        a->_mp_d[0] = n < 0 ? -(uint64_t)n : (uint64_t)n;
        a->_mp_size = n < 0 ? -1 : n != 0;
        b->_mp_d[0] = d;
        b->_mp_size = 1;
        return;
    }
#endif
    mpq_set_si(q, (long)n, (unsigned long)d);
}
val *eval_num_done(eval_cx *cx, val *v);          /* accounts limbs; NULL past the memory */
/* Ends an arithmetic result: a float is bounded (num_bound_float), the inexact flag set
 * when `inexact` or the bounding rounded; then eval_num_done. */
val *eval_num_finish_slow(eval_cx *cx, val *r, int inexact);
/* What a number whose parts take a limb each at most is accounted (value.c's num_cost) */
#define NUM_COST_SMALL (eval_heap_cost(sizeof(val)) + 2 * eval_heap_cost(sizeof(mp_limb_t)))
static inline val *eval_num_finish(eval_cx *cx, val *r, int inexact)
{
    /* a value of a limb or two, accounted so already, is within every bound: the common
     * result of a loop's arithmetic takes no call */
    if (mpz_size(mpq_numref(r->u.q)) <= 1 && mpz_size(mpq_denref(r->u.q)) == 1 &&
        r->msz == NUM_COST_SMALL && cx->nc.float_bits >= 2 * GMP_NUMB_BITS) {
        if (inexact) r->flags |= VF_INEXACT;
        return r;
    }
    return eval_num_finish_slow(cx, r, inexact);
}
val *eval_int_limit(eval_cx *cx, const ir_node *at);
/* Whether an int-tagged number passes the double's range: CPython converts an int to a double
 * for float arithmetic and float(), and raises OverflowError. */
static inline int eval_int_past_double(const val *v)
{
    return v->kind != V_FLOAT && IS_NUM(v) && mpz_size(mpq_numref(v->u.q)) >= 1024 / GMP_NUMB_BITS &&
           num_int_past_double(mpq_numref(v->u.q));
}
val *eval_int_si(eval_cx *cx, long n);
val *eval_bool(eval_cx *cx, int b);               /* borrowed singleton, incref'd */
val *eval_none(eval_cx *cx);
val *eval_ellipsis(eval_cx *cx);                  /* the `...` singleton */
val *eval_str(eval_cx *cx, const char *s, size_t len);
val *eval_str_take(eval_cx *cx, char *s, size_t len);  /* takes malloc'd s, even on error */
val *eval_str_buf(eval_cx *cx, cr_buf *b);              /* takes b's text */
/* eval_str_buf() of a text made from inexact values (`inexact`): a new string is marked so
 * (a shared one, the empty string or a cached character, is left as it is) */
val *eval_str_buf_from(eval_cx *cx, cr_buf *b, int inexact);
val *eval_seq_new(eval_cx *cx, vkind kind, size_t cap);  /* LIST TUPLE ITER */
int eval_seq_push(eval_cx *cx, val *l, val *v);          /* steals v (also on error) */
int eval_seq_reserve(eval_cx *cx, val *l, size_t n);
int eval_eq(eval_cx *cx, val *a, val *b);                /* 1, 0, -1 error */
int eval_cmp(eval_cx *cx, int op, val *a, val *b);       /* IR_LT.. on orderable values */
int eval_contains(eval_cx *cx, val *c, val *x, const ir_node *at);   /* x in c: 1, 0, -1 */
int eval_truth(eval_cx *cx, val *v);
/* v takes a discrete decision (a truth test, an index, a lookup): an inexact v marks the run. */
static inline void eval_decides(eval_cx *cx, const val *v)
{
    if (v->flags & VF_INEXACT) cx->inexact_decided = 1;
}
/* The rational a number prints as: its own when exact; when inexact, num_decided()'s
 * rounding into cx->dq[slot] (slot 0 or 1). */
mpq_srcptr eval_shown(eval_cx *cx, val *v, int slot);
/* eval_shown() for a decision: an inexact v also marks the run. */
mpq_srcptr eval_decided(eval_cx *cx, val *v, int slot);
size_t eval_utf8_index(const val *s, size_t ci);          /* byte offset of char ci */
val *eval_track(eval_cx *cx, val *v);
void eval_free_all(eval_cx *cx);    /* spare numbers go to the thread's pool */
void eval_pool_take(eval_cx *cx);   /* the thread's spare numbers become cx's */

/* Iteration over any iterable. It holds a reference to what it walks and gives each item
 * with one of its own, so that a loop body or a callback may change or drop the container
 * without freeing what the walk still reads. A dict or set that changes size on the way is
 * an error, as in CPython. A one-shot iterator's next may run code (a generator's
 * expression, map's function) that meets the same iterator again: its state lives in the
 * iterator, not in the eval_iter, and a generator refuses to be re-entered. */
typedef struct {
    val *src;
    size_t i;
    int64_t r;
    size_t size, left;     /* DICT SET: len at the start, items not yet given */
    uint16_t sub;          /* DICT: IT_KEYS, IT_VALUES or IT_ITEMS */
} eval_iter;
int eval_iter_init(eval_cx *cx, eval_iter *it, val *v);   /* 0, or -1 not iterable */
int eval_iter_next(eval_cx *cx, eval_iter *it, val **out); /* 1 item (new ref), 0 end, -1 */
/* A range walk's next item into *r: 1, or 0 at its end. */
static inline int eval_range_step(eval_iter *it, int64_t *r)
{
    const val *v = it->src;
    *r = it->r;
    if (v->u.rng.step > 0 ? *r >= v->u.rng.stop : *r <= v->u.rng.stop) return 0;
    if (__builtin_add_overflow(*r, v->u.rng.step, &it->r))
        it->r = v->u.rng.step > 0 ? INT64_MAX : INT64_MIN;
    return 1;
}
void eval_iter_done(eval_cx *cx, eval_iter *it);

/* A one-shot iterator's state (iter.c). Errors are raised without a place, so that the
 * consumer places them, as CPython's traceback ends at the line that consumed; a generator's
 * own expressions carry theirs. */
struct eval_lazy {
    uint8_t running;       /* a next is under way (a generator refuses to re-enter) */
    uint8_t ended;         /* gives nothing more: a generator that ended or raised */
    uint32_t n;            /* its[]: the sources (ZIP MAP), the for-clauses (GENERATOR), 1 */
    uint32_t k;            /* GENERATOR: for-clauses open, its[0..k-1] */
    int64_t count;         /* ENUMERATE: the next index; REVERSED: the next position + 1;
                            * ZIP: strict=True */
    val *f;                /* MAP FILTER: the function (FILTER: maybe None); GENERATOR: frame */
    const ir_node *node;   /* GENERATOR: the expression */
    eval_iter its[];
};
/* A new one-shot iterator of kind sub with n sources, each its[i].src NULL (the caller
 * fills them); NULL past the memory limit. */
val *eval_lazy_new(eval_cx *cx, int sub, uint32_t n);
int eval_lazy_next(eval_cx *cx, val *v, val **out);       /* as eval_iter_next */
void eval_lazy_free(eval_cx *cx, val *v);                 /* its references, its state */
/* map(f, *srcs), filter(f, src), zip(*srcs), enumerate(src, start), reversed(src): the
 * iterator, or NULL raised (a source that is not iterable) at `at`. */
val *eval_lazy_of(eval_cx *cx, int sub, val *f, val **srcs, size_t n, int64_t start,
                  const ir_node *at);
val *eval_pair(eval_cx *cx, val *a, val *b);   /* the tuple (a, b), taking both (also on error) */
val *eval_list_of(eval_cx *cx, val *v, vkind kind);      /* items of an iterable */
/* eval_list_of(v) as a list, an error placed at `at`: NULL raised */
val *eval_items_of(eval_cx *cx, val *v, const ir_node *at);
int eval_len(eval_cx *cx, val *v, size_t *n);             /* -1: no len() */
int eval_int_of(eval_cx *cx, val *v, int64_t *out);       /* an index argument */
/* An int (or bool) as CPython converts it to a C ssize_t: 0, or -1 raised at `at`, TypeError
 * not_int (NULL: "'T' object cannot be interpreted as an integer") or OverflowError. Unlike
 * eval_int_of(), an inexact v takes no decision here: the caller marks one if it is. */
int eval_ssize_of(eval_cx *cx, val *v, const char *not_int, int64_t *out, const ir_node *at);

/* ---- hash.c ---- */
val *eval_dict_new(eval_cx *cx, vkind kind);             /* DICT SET */
int eval_dict_set(eval_cx *cx, val *d, val *k, val *v);  /* steals k and v */
val *eval_dict_get(eval_cx *cx, val *d, val *k, int *err); /* borrowed; NULL: absent/error */
int eval_dict_del(eval_cx *cx, val *d, val *k);          /* 1 deleted, 0 absent, -1 error */
/* a | b, a & b, a - b, a ^ b on two sets, or a | b on two dicts, in CPython's order: a's
 * entries, then b's. `inplace` (|= &= -= ^=): a itself is changed and returned. */
val *eval_set_binop(eval_cx *cx, int op, val *a, val *b, int inplace, const ir_node *at);
int eval_hash(eval_cx *cx, val *v, uint64_t *h);
/* A number's hash from its rational value: an object equal to a number hashes with this. */
uint64_t eval_hash_q(mpq_srcptr q);
/* Hashing or comparing numbers reads their limbs: past a few, charged. 0, -1 raised. */
int eval_limb_walk(eval_cx *cx, const val *a, const val *b);

/* ---- repr.c ---- */
int eval_put(eval_cx *cx, cr_buf *b, const char *s, size_t n);   /* 0, or -1 raised */
const char *eval_type_name(const val *v);
int eval_repr(eval_cx *cx, cr_buf *b, val *v, int as_str);   /* 0 ok, -1 error */
/* str(v) (as_repr 0), repr(v) (1) or ascii(v) (EVAL_ASCII: repr with every character
 * outside ASCII escaped); the text is inexact when v is. */
#define EVAL_ASCII 2
val *eval_to_str(eval_cx *cx, val *v, int as_repr);
int eval_inexact(eval_cx *cx, val *v);   /* 1, 0, -1 error (a charged walk) */
/* ---- arith.c ---- */
/* a op b, or the augmented a op= b when `inplace` (its messages name "-=") */
val *eval_operate(eval_cx *cx, int op, val *a, val *b, int inplace, const ir_node *at);
static inline val *eval_binop(eval_cx *cx, int op, val *a, val *b, const ir_node *at)
{
    return eval_operate(cx, op, a, b, 0, at);
}
val *eval_sum_add(eval_cx *cx, val *acc, val *x, const ir_node *at);   /* sum()'s step */
val *eval_get_item(eval_cx *cx, val *o, val *k, const ir_node *at);   /* o[k], new reference */
/* Index idx (an int; negative counts from the end) of obj, which has len items, into *out:
 * 0, or -1 raised as CPython does ("<what> index out of range"). */
int eval_norm_index(eval_cx *cx, val *idx, size_t len, int64_t *out, const char *what,
                    val *obj, const ir_node *at);
val *eval_nonfinite(eval_cx *cx, double d);   /* inf, -inf or nan */
/* A real number as CPython's float() sees it; an int past the double range raises. 0, -1 */
int eval_to_double(eval_cx *cx, val *v, double *out, const ir_node *at);
/* int(x), round(x), math.floor(x), ... of an infinity or NaN: CPython's error; NULL. */
val *eval_inf_error(eval_cx *cx, val *x, const ir_node *at);
/* What is computed from an inexact operand is inexact: a new value carries the flag
 * (len(str(x)), str(x).upper(), str(x)[0:3]); a shared one (True, a cached character, an
 * element picked) cannot, so the run is marked instead. */
static inline val *eval_carry_inexact(eval_cx *cx, val *r, int inexact)
{
    if (!r || !inexact || (r->flags & VF_INEXACT)) return r;
    if (r->rc == 1 && !(r->flags & VF_IMMORTAL)) r->flags |= VF_INEXACT;
    else cx->inexact_decided = 1;
    return r;
}

/* ---- exceptions.c: raising an exception object ---- */
/* Raises e (stolen): err says str(e) at `at`, or where e was first raised. -1. */
int eval_raise_obj(eval_cx *cx, val *e, const ir_node *at);
/* Raises KeyError(k) (str: repr(k)); NULL. */
val *eval_key_error(eval_cx *cx, val *k, const ir_node *at);

/* ---- format.c ---- */
val *eval_str_percent(eval_cx *cx, val *fmt, val *args, const ir_node *at);
int eval_format(eval_cx *cx, cr_buf *b, val *v, const char *spec, size_t len,
                const ir_node *at);
val *eval_str_format(eval_cx *cx, val *self, eval_args *a, const ir_node *at);


/* A builtin's or a method's name (subset.def's rows), as messages print it. */
const char *eval_builtin_name(int id);
const char *eval_method_name(int id);

/* What a value needs of the interpreter above it, reached through cx->hooks and never by
 * name (as Lua's luaD_call and CPython's tp_iternext): the floors below the interpreter call
 * code without knowing how it runs. */
typedef struct eval_hooks {
    val *(*call)(eval_cx *cx, val *f, eval_args *a, const ir_node *at);   /* f(*a), new ref */
    int (*gen_next)(eval_cx *cx, val *g, val **out);   /* a generator's next, as eval_iter_next */
} eval_hooks;

#endif
