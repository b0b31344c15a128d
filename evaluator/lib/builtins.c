/* evaluator/lib/builtins.c: the builtin functions of subset.def's MOD_NONE rows (abs .. zip,
 * print), CPython's bltinmodule.c. The exception classes are exceptions.c's, format() is
 * format.c's, and sorted() sorts as list.sort does (seq_methods.c). */
#include "evaluator/lib/lib.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

static val *num_copy(eval_cx *cx, val *x, vkind kind)
{
    val *r = eval_num(cx, kind);
    if (!r) return NULL;
    mpq_set(r->u.q, x->u.q);
    r->flags |= x->flags & (kind == V_FLOAT ? VF_INEXACT | VF_NEGZ : VF_INEXACT);
    return eval_num_done(cx, r);
}

/* int(x), round(x), math.floor(x), ... of an infinity or NaN */
static val *b_abs(eval_cx *cx, val *x, const ir_node *at)
{
    if (x->kind == V_INF) {
        val *r = eval_new(cx, V_INF);
        if (r) r->sub = x->sub == INF_NAN ? INF_NAN : INF_POS;
        return r;
    }
    if (!IS_NUM(x))
        return eval_raise(cx, CR_EPY_TYPE, at, "bad operand type for abs(): '%s'",
                          eval_type_name(x));
    val *r = eval_num(cx, x->kind == V_FLOAT ? V_FLOAT : V_INT);
    if (!r) return NULL;
    mpq_abs(r->u.q, x->u.q);
    r->flags |= x->flags & (VF_INEXACT | VF_DOUBLE);
    return eval_num_done(cx, r);
}

static val *b_all_any(eval_cx *cx, val *x, int any, const ir_node *at)
{
    eval_iter it;
    val *e;
    int r, found = 0;
    if (eval_iter_init(cx, &it, x) < 0) return NULL;
    while ((r = eval_iter_next(cx, &it, &e)) > 0) {
        int t = eval_truth(cx, e);
        eval_decref(cx, e);
        if (eval_count(cx, 1, at) < 0) { r = -1; break; }
        if (t == any) { found = 1; break; }
    }
    eval_iter_done(cx, &it);
    if (r < 0) return NULL;
    return eval_bool(cx, any ? found : !found);
}

/* float(s) or int(s) of a string that is no number (rc from num_parse_*: r, the number being
 * made, is dropped): CPython's ValueError, "what: repr(s)", or the limit's error. NULL. */
static val *not_a_number(eval_cx *cx, cr_code rc, val *r, val *x, const char *what,
                         const ir_node *at)
{
    eval_decref(cx, r);
    if (rc == CR_ELIMIT) return eval_int_limit(cx, at);
    val *s = eval_to_str(cx, x, 1);
    if (!s) return NULL;
    eval_raise(cx, CR_EPY_VALUE, at, "%s: %s", what, s->u.str.s);
    eval_decref(cx, s);
    return NULL;
}

static val *b_float(eval_cx *cx, val *x, const ir_node *at)
{
    if (eval_int_past_double(x))
        return eval_raise(cx, CR_EPY_OVERFLOW, at, "int too large to convert to float");
    if (IS_NUM(x)) return num_copy(cx, x, V_FLOAT);
    if (x->kind == V_INF) { EV_INCREF(x); return x; }
    if (x->kind != V_STR)
        return eval_raise(cx, CR_EPY_TYPE, at,
                          "float() argument must be a string or a real number, not '%s'",
                          eval_type_name(x));
    /* [sign] inf, infinity or nan in any case, between whitespace: no rational value */
    const char *p = x->u.str.s, *z = p + x->u.str.len;
    while (p < z && strchr(" \t\n\r\f\v", *p)) p++;
    while (z > p && strchr(" \t\n\r\f\v", z[-1])) z--;
    int neg = p < z && *p == '-';
    if (p < z && (*p == '-' || *p == '+')) p++;
    if ((z - p == 3 || z - p == 8) && (!strncasecmp(p, "infinity", (size_t)(z - p)) ||
                                       (z - p == 3 && !strncasecmp(p, "nan", 3))))
        return eval_nonfinite(cx, (p[0] | 32) == 'n' ? NAN : neg ? -INFINITY : INFINITY);
    val *r = eval_num(cx, V_FLOAT);
    if (!r) return NULL;
    cr_code rc = num_parse_float_str(r->u.q, x->u.str.s, x->u.str.len, &cx->nc);
    if (rc != CR_OK) return not_a_number(cx, rc, r, x, "could not convert string to float", at);
    if (neg && !mpq_sgn(r->u.q)) r->flags |= VF_NEGZ;
    return eval_num_finish(cx, r, 0);
}

val *eval_b_int(eval_cx *cx, eval_args *a, const ir_node *at)
{
    val *bv = a->npos > 1 ? a->pos[1] : eval_kwarg(a, "base");
    if (a->npos == 0)
        return bv ? eval_raise(cx, CR_EPY_TYPE, at, "int() missing string argument")
                  : eval_int_si(cx, 0);
    val *x = a->pos[0];
    if (bv && x->kind != V_STR)
        return eval_raise(cx, CR_EPY_TYPE, at, "int() can't convert non-string with explicit base");
    if (x->kind == V_INF) return eval_inf_error(cx, x, at);
    if (IS_NUM(x)) {
        if (x->kind == V_INT) { EV_INCREF(x); return x; }
        val *r = eval_num(cx, V_INT);
        if (!r) return NULL;
        num_trunc(mpq_numref(r->u.q), eval_decided(cx, x, 0));
        mpz_set_ui(mpq_denref(r->u.q), 1);
        r->flags |= x->flags & VF_INEXACT;
        return eval_num_done(cx, r);
    }
    if (x->kind != V_STR)
        return eval_raise(cx, CR_EPY_TYPE, at,
                          "int() argument must be a string, a bytes-like object or a real "
                          "number, not '%s'", eval_type_name(x));
    int64_t base = 10;
    if (bv && eval_int_of(cx, bv, &base) < 0) return NULL;
    if (base != 0 && (base < 2 || base > 36))
        return eval_raise(cx, CR_EPY_VALUE, at, "int() base must be >= 2 and <= 36, or 0");
    val *r = eval_num(cx, V_INT);
    if (!r) return NULL;
    cr_code rc = num_parse_int_str(mpq_numref(r->u.q), x->u.str.s, x->u.str.len, (int)base,
                                   &cx->nc);
    if (rc != CR_OK) {
        char what[64];
        snprintf(what, sizeof what, "invalid literal for int() with base %d", (int)base);
        return not_a_number(cx, rc, r, x, what, at);
    }
    return eval_num_done(cx, r);
}

static int type_matches(val *x, int id)
{
    switch (id) {
    case B_INT: return x->kind == V_INT || x->kind == V_BOOL;
    case B_FLOAT: return x->kind == V_FLOAT || x->kind == V_INF;
    case B_BOOL: return x->kind == V_BOOL;
    case B_STR: return x->kind == V_STR;
    case B_LIST: return x->kind == V_LIST;
    case B_TUPLE: return x->kind == V_TUPLE;
    case B_DICT: return x->kind == V_DICT;
    case B_SET: return x->kind == V_SET;
    case B_RANGE: return x->kind == V_RANGE;
    default:
        if (IS_EXC_CLASS(id)) return x->kind == V_EXC && eval_exc_is(x->sub, id);
        return x->kind == V_ITER && ((id == B_ZIP && x->sub == IT_ZIP) ||
                                     (id == B_MAP && x->sub == IT_MAP) ||
                                     (id == B_FILTER && x->sub == IT_FILTER) ||
                                     (id == B_ENUMERATE && x->sub == IT_ENUMERATE));
    }
}

static int is_type(val *t)
{
    if (t->kind != V_BUILTIN) return 0;
    switch (t->sub) {
    case B_INT: case B_FLOAT: case B_BOOL: case B_STR: case B_LIST: case B_TUPLE: case B_DICT:
    case B_SET: case B_RANGE: case B_ZIP: case B_MAP: case B_FILTER: case B_ENUMERATE:
        return 1;
    default:
        return IS_EXC_CLASS(t->sub);
    }
}

typedef struct {
    val *x, *t, *r;
    const ir_node *at;
} isinstance_level;

static val *b_isinstance(eval_cx *cx, val *x, val *t, const ir_node *at);
static int isinstance_deep(eval_cx *cx, void *p)
{
    isinstance_level *l = p;
    return (l->r = b_isinstance(cx, l->x, l->t, l->at)) ? 0 : -1;
}

/* A tuple of types nests: each level is one of CPython's recursion. */
static val *b_isinstance(eval_cx *cx, val *x, val *t, const ir_node *at)
{
    if (t->kind == V_TUPLE) {
        isinstance_level l = { x, t, NULL, at };
        if (eval_stack_low(cx)) return eval_deep(cx, isinstance_deep, &l) < 0 ? NULL : l.r;
        if (eval_recurse(cx, " in __instancecheck__", at) < 0) return NULL;
        val *r = eval_bool(cx, 0);
        for (size_t i = 0; i < t->u.seq.len && r == &cx->vfalse; i++) {
            eval_decref(cx, r);
            r = b_isinstance(cx, x, t->u.seq.it[i], at);
        }
        cx->rdepth--;
        return r;
    }
    if (t->kind == V_OBJ && t->u.obj.cls->builtin) {
        val *args[2] = { x, t };
        eval_args a = { .pos = args, .npos = 2 };
        val *r = t->u.obj.cls->builtin(cx, B_ISINSTANCE, t, &a, at);
        if (r || cx->err.code != CR_OK) return r;
    }
    if (!is_type(t))
        return eval_raise(cx, CR_EPY_TYPE, at,
                          "isinstance() arg 2 must be a type, a tuple of types, or a union");
    return eval_bool(cx, type_matches(x, t->sub));
}

static val *b_minmax(eval_cx *cx, eval_args *a, int is_max, const ir_node *at)
{
    const char *name = is_max ? "max" : "min";
    val *key = eval_kwarg(a, "key"), *dflt = eval_kwarg(a, "default"), *best = NULL, *bestk = NULL;
    if (key && key->kind == V_NONE) key = NULL;
    if (a->npos > 1 && dflt)
        return eval_raise(cx, CR_EPY_TYPE, at,
                          "Cannot specify a default for %s() with multiple positional "
                          "arguments", name);
    /* one argument is walked as it stands, as CPython does, for a key function may change
     * it; each candidate and the best so far are held by reference */
    eval_iter it;
    int rc = 0;
    size_t i = 0;
    if (a->npos == 1 && eval_iter_init(cx, &it, a->pos[0]) < 0) return eval_at(cx, at), NULL;
    for (;;) {
        val *x, *k;
        if (a->npos > 1) {
            if (i == a->npos) break;
            x = a->pos[i++];
            EV_INCREF(x);
        } else if ((rc = eval_iter_next(cx, &it, &x)) <= 0) {
            break;
        }
        if (eval_count(cx, 1, at) < 0) { eval_decref(cx, x); rc = -1; break; }
        if (!key) {
            k = x;
            EV_INCREF(k);
        } else if (!(k = eval_call1(cx, key, x, at))) {
            eval_decref(cx, x);
            rc = -1;
            break;
        }
        int r = best ? eval_cmp(cx, is_max ? IR_GT : IR_LT, k, bestk) : 1;
        if (r < 0) rc = -1;
        if (r > 0) {
            eval_decref(cx, best);
            eval_decref(cx, bestk);
            best = x;
            bestk = k;
        } else {
            eval_decref(cx, x);
            eval_decref(cx, k);
        }
        if (rc < 0) break;
    }
    if (a->npos == 1) eval_iter_done(cx, &it);
    eval_decref(cx, bestk);
    if (rc < 0) {
        eval_decref(cx, best);
        return eval_at(cx, at), NULL;
    }
    if (best) return best;
    if (dflt) { EV_INCREF(dflt); return dflt; }
    return eval_raise(cx, CR_EPY_VALUE, at, "%s() arg is an empty sequence", name);
}

static val *b_pow3(eval_cx *cx, val *b, val *e, val *m, const ir_node *at)
{
    if (!(b->kind == V_INT || b->kind == V_BOOL) || !(e->kind == V_INT || e->kind == V_BOOL) ||
        !(m->kind == V_INT || m->kind == V_BOOL))
        return eval_raise(cx, CR_EPY_TYPE, at,
                          "pow() 3rd argument not allowed unless all arguments are integers");
    mpz_srcptr bz = mpq_numref(b->u.q), ez = mpq_numref(e->u.q), mz = mpq_numref(m->u.q);
    if (!mpz_sgn(mz)) return eval_raise(cx, CR_EPY_VALUE, at, "pow() 3rd argument cannot be 0");
    val *r = eval_num(cx, V_INT);
    if (!r) return NULL;
    mpz_ptr rz = mpq_numref(r->u.q);
    mpz_t am, base;
    mpz_init(am);
    mpz_init_set(base, bz);
    mpz_abs(am, mz);
    if (eval_count(cx, mpz_sizeinbase(ez, 2) * (mpz_size(am) + 1) / 8, at) < 0) goto fail;
    if (mpz_sgn(ez) < 0 && !mpz_invert(base, base, am)) {
        eval_raise(cx, CR_EPY_VALUE, at, "base is not invertible for the given modulus");
        goto fail;
    }
    mpz_t ae;
    mpz_init(ae);
    mpz_abs(ae, ez);
    mpz_powm(rz, base, ae, am);
    mpz_clear(ae);
    if (mpz_sgn(mz) < 0 && mpz_sgn(rz)) mpz_add(rz, rz, mz);
    mpz_clear(am);
    mpz_clear(base);
    return eval_num_done(cx, r);
fail:
    mpz_clear(am);
    mpz_clear(base);
    eval_decref(cx, r);
    return NULL;
}

val *eval_b_range(eval_cx *cx, eval_args *a, const ir_node *at)
{
    int64_t v[3] = { 0, 0, 1 };
    for (size_t i = 0; i < a->npos; i++)
        if (eval_int_of(cx, a->pos[i], &v[a->npos == 1 ? 1 : i]) < 0) return NULL;
    if (v[2] == 0) return eval_raise(cx, CR_EPY_VALUE, at, "range() arg 3 must not be zero");
    val *r = eval_new(cx, V_RANGE);
    if (!r) return NULL;
    r->u.rng.start = v[0];
    r->u.rng.stop = v[1];
    r->u.rng.step = v[2];
    return r;
}

/* noinline: GCC 12 loses track of the mpq_t size when this is inlined and warns falsely
 * (-Wstringop-overread). */
__attribute__((noinline)) static void round_into(eval_cx *cx, val *r, val *x, long n)
{
    num_round(r->u.q, eval_decided(cx, x, 0), n, &cx->nc);
}

val *eval_b_round(eval_cx *cx, eval_args *a, const ir_node *at)
{
    val *x = a->pos[0], *nd = a->npos > 1 ? a->pos[1] : eval_kwarg(a, "ndigits");
    if (nd && nd->kind == V_NONE) nd = NULL;
    int64_t n = 0;
    if (nd && eval_int_of(cx, nd, &n) < 0) return NULL;
    if (x->kind == V_INF) {
        if (!nd) return eval_inf_error(cx, x, at);
        EV_INCREF(x);
        return x;
    }
    if (!IS_NUM(x))
        return eval_raise(cx, CR_EPY_TYPE, at, "type %s doesn't define __round__ method",
                          eval_type_name(x));
    vkind k = (!nd || x->kind != V_FLOAT) ? V_INT : V_FLOAT;
    if (x->kind != V_FLOAT && (!nd || n >= 0)) return num_copy(cx, x, V_INT);
    val *r = eval_num(cx, k);
    if (!r) return NULL;
    /* digits past the value's own size change nothing, and would build huge powers of ten */
    int64_t big = (int64_t)mpz_sizeinbase(mpq_numref(x->u.q), 10) + 2;
    if (n < -big) {
        mpq_set_ui(r->u.q, 0, 1);
    } else if (n > 100000) {
        mpq_set(r->u.q, x->u.q);
    } else {
        round_into(cx, r, x, (long)n);
    }
    if (k == V_INT && mpz_cmp_ui(mpq_denref(r->u.q), 1) != 0) {
        eval_decref(cx, r);
        return eval_raise(cx, CR_EINTERNAL, at, "round() gave a fraction");
    }
    /* a float rounded to zero keeps its sign: round(-0.001, 2) is -0.0 */
    if (k == V_FLOAT && !mpq_sgn(r->u.q) && (mpq_sgn(x->u.q) < 0 || (x->flags & VF_NEGZ)))
        r->flags |= VF_NEGZ;
    return eval_num_finish(cx, r, (x->flags & VF_INEXACT) != 0);
}

val *eval_b_sum(eval_cx *cx, eval_args *a, const ir_node *at)
{
    val *start = a->npos > 1 ? a->pos[1] : eval_kwarg(a, "start");
    if (start && start->kind == V_STR)
        return eval_raise(cx, CR_EPY_TYPE, at,
                          "sum() can't sum strings [use ''.join(seq) instead]");
    val *acc = start ? start : NULL;
    if (acc) EV_INCREF(acc);
    else if (!(acc = eval_int_si(cx, 0))) return NULL;
    eval_iter it;
    val *x;
    int r;
    if (eval_iter_init(cx, &it, a->pos[0]) < 0) { eval_decref(cx, acc); return NULL; }
    while ((r = eval_iter_next(cx, &it, &x)) > 0) {
        val *n = eval_sum_add(cx, acc, x, at);
        eval_decref(cx, x);
        eval_decref(cx, acc);
        if (!(acc = n)) { r = -1; break; }
    }
    eval_iter_done(cx, &it);
    if (r < 0) { eval_decref(cx, acc); return NULL; }
    return acc;
}

int eval_print(eval_cx *cx, eval_args *a, const ir_node *at)
{
    static const char *const kws[] = { "sep", "end", "flush", "file", NULL };
    if (eval_check_kw(cx, a, kws, "print", at) < 0) return -1;
    val *sep = eval_kwarg(a, "sep"), *end = eval_kwarg(a, "end"), *file = eval_kwarg(a, "file");
    if (file && file->kind != V_NONE) {
        eval_raise(cx, CR_EPY_TYPE, at, "print(file=...) is not supported in-process");
        return -1;
    }
    if (sep && sep->kind != V_NONE && sep->kind != V_STR) {
        eval_raise(cx, CR_EPY_TYPE, at, "sep must be None or a string, not %s", eval_type_name(sep));
        return -1;
    }
    if (end && end->kind != V_NONE && end->kind != V_STR) {
        eval_raise(cx, CR_EPY_TYPE, at, "end must be None or a string, not %s", eval_type_name(end));
        return -1;
    }
    cr_buf b;
    cr_buf_init(&b, cx->lim->max_str_len);
    for (size_t i = 0; i < a->npos; i++) {
        if (i) {
            if (sep && sep->kind == V_STR) cr_buf_put(&b, sep->u.str.s, sep->u.str.len);
            else cr_buf_putc(&b, ' ');
        }
        if (eval_repr(cx, &b, a->pos[i], 1) < 0) { cr_buf_free(&b); return -1; }
    }
    if (end && end->kind == V_STR) cr_buf_put(&b, end->u.str.s, end->u.str.len);
    else cr_buf_putc(&b, '\n');
    cr_code rc = b.truncated ? CR_ELIMIT : cr_buf_put(&cx->out, b.p ? b.p : "", b.len);
    cr_buf_free(&b);
    if (rc == CR_OK) return 0;
    if (rc == CR_ELIMIT)
        eval_raise(cx, CR_ELIMIT, at, "output limit (%zu bytes)", cx->lim->max_stdout);
    else
        eval_raise(cx, CR_ENOMEM, at, "out of memory");
    return -1;
}

static val *b_reversed(eval_cx *cx, val *x, const ir_node *at)
{
    if (x->kind != V_LIST && x->kind != V_TUPLE && x->kind != V_STR && x->kind != V_RANGE &&
        x->kind != V_DICT && !(x->kind == V_ITER && x->sub >= IT_KEYS))
        return eval_raise(cx, CR_EPY_TYPE, at, "'%s' object is not reversible", eval_type_name(x));
    return eval_lazy_of(cx, IT_REVERSED, NULL, &x, 1, 0, at);
}

val *eval_b_enumerate(eval_cx *cx, eval_args *a, const ir_node *at)
{
    val *st = a->npos > 1 ? a->pos[1] : eval_kwarg(a, "start");
    int64_t start = 0;
    if (st && eval_int_of(cx, st, &start) < 0) return NULL;
    return eval_lazy_of(cx, IT_ENUMERATE, NULL, a->pos, 1, start, at);
}

static val *b_divmod(eval_cx *cx, val *x, val *y, const ir_node *at)
{
    if (IS_REAL(x) && IS_NUM(y) && !mpq_sgn(y->u.q))
        return eval_raise(cx, CR_EPY_ZERODIV, at, "%s",
                          x->kind == V_FLOAT || x->kind == V_INF || y->kind == V_FLOAT
                              ? "float divmod()" : "integer division or modulo by zero");
    if (!IS_REAL(x) || !IS_REAL(y))
        return eval_raise(cx, CR_EPY_TYPE, at,
                          "unsupported operand type(s) for divmod(): '%s' and '%s'",
                          eval_type_name(x), eval_type_name(y));
    val *q = eval_binop(cx, IR_FLOORDIV, x, y, at), *m;
    if (!q) return NULL;
    if (!(m = eval_binop(cx, IR_MOD, x, y, at))) { eval_decref(cx, q); return NULL; }
    return eval_pair(cx, q, m);
}

val *eval_b_sorted(eval_cx *cx, eval_args *a, const ir_node *at)
{
    val *l = eval_items_of(cx, a->pos[0], at), *rev = eval_kwarg(a, "reverse");
    if (!l) return NULL;
    if (eval_sort_list(cx, l, eval_kwarg(a, "key"), rev && eval_truth(cx, rev), at) < 0) {
        eval_decref(cx, l);
        return NULL;
    }
    return l;
}

val *eval_b_repr(eval_cx *cx, eval_args *a, const ir_node *at)
{
    (void)at;
    return eval_to_str(cx, a->pos[0], 1);
}

static val *b_seq(eval_cx *cx, eval_args *a, vkind kind, const ir_node *at)
{
    if (!a->npos) return eval_seq_new(cx, kind, 0);
    if (kind == V_TUPLE && a->pos[0]->kind == V_TUPLE) {
        EV_INCREF(a->pos[0]);
        return a->pos[0];
    }
    val *r = eval_list_of(cx, a->pos[0], kind);
    if (!r && cx->err.line == 0) { cx->err.line = at->line; cx->err.col = at->col; }
    return r;
}

#define IMPL(name) val *name(eval_cx *cx, eval_args *a, const ir_node *at)

IMPL(eval_b_abs)
{
    return b_abs(cx, a->pos[0], at);
}
IMPL(eval_b_all)
{
    return b_all_any(cx, a->pos[0], 0, at);
}
IMPL(eval_b_any)
{
    return b_all_any(cx, a->pos[0], 1, at);
}
IMPL(eval_b_bool)
{
    (void)at;
    return eval_bool(cx, a->npos && eval_truth(cx, a->pos[0]));
}

IMPL(eval_b_dict)
{
    val *r = eval_dict_new(cx, V_DICT);
    if (r && eval_dict_update(cx, r, a->npos ? a->pos[0] : NULL, a, at) < 0) {
        eval_decref(cx, r);
        return NULL;
    }
    return r;
}

IMPL(eval_b_divmod)
{
    return b_divmod(cx, a->pos[0], a->pos[1], at);
}

IMPL(eval_b_filter)
{
    return eval_lazy_of(cx, IT_FILTER, a->pos[0], a->pos + 1, 1, 0, at);
}

IMPL(eval_b_float)
{
    if (!a->npos) return eval_num(cx, V_FLOAT);
    return b_float(cx, a->pos[0], at);
}

IMPL(eval_b_isinstance)
{
    return b_isinstance(cx, a->pos[0], a->pos[1], at);
}

IMPL(eval_b_len)
{
    size_t n;
    (void)at;
    if (eval_len(cx, a->pos[0], &n) < 0) return NULL;
    return eval_int_si(cx, (long)n);
}

IMPL(eval_b_list)
{
    return b_seq(cx, a, V_LIST, at);
}

IMPL(eval_b_tuple)
{
    return b_seq(cx, a, V_TUPLE, at);
}

IMPL(eval_b_set)
{
    val *r;
    if (!(r = eval_dict_new(cx, V_SET))) return NULL;
    if (!a->npos) return r;
    val *l = eval_items_of(cx, a->pos[0], at);
    if (!l) { eval_decref(cx, r); return NULL; }
    for (size_t i = 0; i < l->u.seq.len; i++) {
        EV_INCREF(l->u.seq.it[i]);
        if (eval_dict_set(cx, r, l->u.seq.it[i], NULL) < 0) {
            eval_decref(cx, l);
            eval_decref(cx, r);
            return NULL;
        }
    }
    eval_decref(cx, l);
    return r;
}

IMPL(eval_b_map)
{
    if (a->npos < 2)
        return eval_raise(cx, CR_EPY_TYPE, at, "map() must have at least two arguments.");
    return eval_lazy_of(cx, IT_MAP, a->pos[0], a->pos + 1, a->npos - 1, 0, at);
}

IMPL(eval_b_zip)
{
    val *strict = eval_kwarg(a, "strict");
    int st = strict ? eval_truth(cx, strict) : 0;
    return st < 0 ? NULL : eval_lazy_of(cx, IT_ZIP, NULL, a->pos, a->npos, st, at);
}

IMPL(eval_b_max) { return b_minmax(cx, a, 1, at); }
IMPL(eval_b_min) { return b_minmax(cx, a, 0, at); }

IMPL(eval_b_pow)
{
    if (a->npos == 3 && a->pos[2]->kind != V_NONE)
        return b_pow3(cx, a->pos[0], a->pos[1], a->pos[2], at);
    return eval_binop(cx, IR_POW, a->pos[0], a->pos[1], at);
}

IMPL(eval_b_print) { return eval_print(cx, a, at) < 0 ? NULL : eval_none(cx); }

IMPL(eval_b_reversed)
{
    return b_reversed(cx, a->pos[0], at);
}

IMPL(eval_b_str)
{
    /* an encoding or errors decodes bytes, which the subset has none of */
    static const char *const opt[] = { "encoding", "errors" };
    int decode = 0;
    for (size_t i = 0; i < 2; i++) {
        val *o = a->npos > i + 1 ? a->pos[i + 1] : eval_kwarg(a, opt[i]);
        if (o && o->kind != V_STR)
            return eval_raise(cx, CR_EPY_TYPE, at, "str() argument '%s' must be str, not %s",
                              opt[i], eval_type_name(o));
        decode |= o != NULL;
    }
    if (!a->npos) return eval_str(cx, "", 0);
    if (decode && a->pos[0]->kind == V_STR)
        return eval_raise(cx, CR_EPY_TYPE, at, "decoding str is not supported");
    if (decode)
        return eval_raise(cx, CR_EPY_TYPE, at, "decoding to str: need a bytes-like object, %s found",
                          eval_type_name(a->pos[0]));
    return eval_to_str(cx, a->pos[0], 0);
}

#undef IMPL

val *eval_b_format(eval_cx *cx, eval_args *a, const ir_node *at)
{
    val *spec = a->npos > 1 ? a->pos[1] : NULL;
    if (spec && spec->kind != V_STR)
        return eval_raise(cx, CR_EPY_TYPE, at, "format() argument 2 must be str, not %s",
                          eval_type_name(spec));
    cr_buf b;
    cr_buf_init(&b, cx->lim->max_str_len);
    if (eval_format(cx, &b, a->pos[0], spec ? spec->u.str.s : "", spec ? spec->u.str.len : 0,
                    at) < 0) {
        cr_buf_free(&b);
        return NULL;
    }
    int inexact = eval_inexact(cx, a->pos[0]);
    if (inexact < 0) {
        cr_buf_free(&b);
        return NULL;
    }
    return eval_str_buf_from(cx, &b, inexact);
}
