/* evaluator/builtins.c: the whitelisted builtins, the math module, the methods of str, list,
 * tuple, dict and set, format()/str.format()/printf-style formatting and print(). */
#include "evaluator/eval_int.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unicase.h>
#include <unictype.h>
#include <unistr.h>

/* ---- the registry's rows ---------------------------------------------------------------- */

/* The value kinds each method exists on (subset.def's METHOD rows). */
#define K(k) (1u << (k))
#define KO K(V_OBJ)
static const unsigned mt_kinds[MT_COUNT_END] = {
#define METHOD(id, name, kinds) [id] = kinds,
#include "ir/subset.def"
};

typedef val *(*value_get)(eval_cx *cx, const ir_node *at);
static const value_get value_impl[] = {
#define VALUE(mod, name, get) get,
#include "ir/subset.def"
    NULL
};

int eval_builtin_lookup(const char *name)
{
    int id;
    return registry_attr(MOD_NONE, name, &id) == REG_FUNC ? id : -1;
}

const char *eval_builtin_name(int id)
{
    return registry_func_name(id);
}

int eval_method_lookup(const char *name)
{
    return registry_method(name);
}

const char *eval_method_name(int id)
{
    return registry_method_name(id);
}

int eval_method_valid(const val *self, int id)
{
    return id >= 0 && id < MT_COUNT_END && (mt_kinds[id] & K(self->kind));
}

/* A function or module value: one per run, made on first use. */
static val *cached(eval_cx *cx, val **slot, vkind kind, int sub)
{
    if (!*slot) {
        if (!(*slot = eval_new(cx, kind))) return NULL;
        (*slot)->sub = (uint16_t)sub;
    }
    EV_INCREF(*slot);
    return *slot;
}

val *eval_builtin_val(eval_cx *cx, int id)
{
    return cached(cx, &cx->bvals[id], V_BUILTIN, id);
}

val *eval_module(eval_cx *cx, int mod)
{
    return cached(cx, &cx->mods[mod], V_MODULE, mod);
}

val *eval_module_attr(eval_cx *cx, int mod, const char *name, const ir_node *at)
{
    int id;
    switch (registry_attr(mod, name, &id)) {
    case REG_FUNC: return eval_builtin_val(cx, id);
    case REG_VALUE: return value_impl[id](cx, at);
    case REG_MODULE: return eval_module(cx, id);
    default:
        return eval_raise(cx, CR_EPY_ATTRIBUTE, at, "module '%s' has no attribute '%s'",
                          registry_module_name(mod), name);
    }
}

/* ---- argument helpers ------------------------------------------------------------------ */

static int argc_check(eval_cx *cx, eval_args *a, size_t lo, size_t hi, const char *name,
                      const ir_node *at)
{
    if (a->npos >= lo && a->npos <= hi) return 0;
    if (lo == hi)
        eval_raise(cx, CR_EPY_TYPE, at, "%s() takes exactly %s (%zu given)", name,
                   lo == 1 ? "one argument" : lo == 2 ? "2 arguments" : "no arguments", a->npos);
    else if (a->npos < lo)
        eval_raise(cx, CR_EPY_TYPE, at, "%s expected at least %zu argument%s, got %zu", name, lo,
                   lo == 1 ? "" : "s", a->npos);
    else
        eval_raise(cx, CR_EPY_TYPE, at, "%s expected at most %zu argument%s, got %zu", name, hi,
                   hi == 1 ? "" : "s", a->npos);
    return -1;
}

int eval_check_kw(eval_cx *cx, eval_args *a, const char *const *allowed, const char *name,
                  const ir_node *at)
{
    for (size_t i = 0; i < a->nkw; i++) {
        int ok = 0;
        for (size_t j = 0; allowed && allowed[j]; j++) ok |= strcmp(allowed[j], a->kwname[i]) == 0;
        if (!ok) {
            eval_raise(cx, CR_EPY_TYPE, at, "'%s' is an invalid keyword argument for %s()",
                       a->kwname[i], name);
            return -1;
        }
    }
    return 0;
}

#define kw_check eval_check_kw

val *eval_kwarg(eval_args *a, const char *name)
{
    for (size_t i = 0; i < a->nkw; i++)
        if (strcmp(a->kwname[i], name) == 0) return a->kw[i];
    return NULL;
}
#define kwarg eval_kwarg

int eval_check_args(eval_cx *cx, eval_args *a, size_t lo, size_t hi, const char *const *kws,
                    const char *name, const ir_node *at)
{
    return argc_check(cx, a, lo, hi, name, at) < 0 || kw_check(cx, a, kws, name, at) < 0 ? -1 : 0;
}
#define check eval_check_args

static val *num_copy(eval_cx *cx, val *x, vkind kind)
{
    val *r = eval_num(cx, kind);
    if (!r) return NULL;
    mpq_set(r->u.q, x->u.q);
    r->flags |= x->flags & VF_INEXACT;
    return eval_num_done(cx, r);
}

/* int(x), round(x), math.floor(x), ... of an infinity or NaN */
static val *inf_error(eval_cx *cx, val *x, const ir_node *at)
{
    if (IS_NAN(x)) return eval_raise(cx, CR_EPY_VALUE, at, "cannot convert float NaN to integer");
    return eval_raise(cx, CR_EPY_OVERFLOW, at, "cannot convert float infinity to integer");
}

static int need_real(eval_cx *cx, val *x, const ir_node *at)
{
    if (IS_NUM(x)) return 0;
    if (x->kind == V_INF)
        eval_raise(cx, CR_EPY_VALUE, at,
                   "infinity has no exact value: math.inf can only be compared");
    else
        eval_raise(cx, CR_EPY_TYPE, at, "must be real number, not %s", eval_type_name(x));
    return -1;
}

/* A value that iteration gives one by one, as a fresh list (the caller's). */
static val *items_of(eval_cx *cx, val *v, const ir_node *at)
{
    val *l = eval_list_of(cx, v, V_LIST);
    if (!l) eval_at(cx, at);
    return l;
}

static val *call1(eval_cx *cx, val *f, val *x, const ir_node *at)
{
    val *argv[1] = { x };
    eval_args a = { argv, 1, NULL, NULL, 0 };
    return eval_call(cx, f, &a, at);
}

/* ---- sorting --------------------------------------------------------------------------- */

typedef struct {
    eval_cx *cx;
    int failed;
} sort_cx;

static int sort_lt(sort_cx *s, val *a, val *b)
{
    if (s->failed) return 0;
    if (eval_count(s->cx, 1, NULL) < 0) { s->failed = 1; return 0; }
    int r = eval_cmp(s->cx, IR_LT, a, b);
    if (r < 0) { s->failed = 1; return 0; }
    return r;
}

/* Stable merge sort of keys[] carrying vals[] along (Python's sort is stable). */
static void merge_sort(sort_cx *s, val **keys, val **vals, val **tk, val **tv, size_t n)
{
    if (n < 2) return;
    size_t h = n / 2;
    merge_sort(s, keys, vals, tk, tv, h);
    merge_sort(s, keys + h, vals + h, tk, tv, n - h);
    if (s->failed) return;
    memcpy(tk, keys, n * sizeof *tk);
    memcpy(tv, vals, n * sizeof *tv);
    size_t i = 0, j = h, k = 0;
    while (i < h && j < n) {
        if (sort_lt(s, tk[j], tk[i])) { keys[k] = tk[j]; vals[k++] = tv[j++]; }
        else { keys[k] = tk[i]; vals[k++] = tv[i++]; }
    }
    while (i < h) { keys[k] = tk[i]; vals[k++] = tv[i++]; }
    while (j < n) { keys[k] = tk[j]; vals[k++] = tv[j++]; }
}

static void reverse_items(val **keys, val **vals, size_t n)
{
    for (size_t i = 0, j = n; i + 1 < j; i++, j--) {
        val *t = keys[i]; keys[i] = keys[j - 1]; keys[j - 1] = t;
        t = vals[i]; vals[i] = vals[j - 1]; vals[j - 1] = t;
    }
}

/* CPython's sort of fewer than 64 items: the leading run (a strictly descending one
 * reversed), then binary insertion. Under a consistent order any stable sort agrees; with
 * a NaN among the items only the same comparisons give CPython's order. */
static void small_sort(sort_cx *s, val **keys, val **vals, size_t n)
{
    size_t run = 1;
    if (n > 1) {
        int desc = sort_lt(s, keys[1], keys[0]);
        for (run = 2; run < n && sort_lt(s, keys[run], keys[run - 1]) == desc; run++) {}
        if (desc && !s->failed) reverse_items(keys, vals, run);
    }
    for (size_t st = run; st < n && !s->failed; st++) {
        size_t l = 0, r = st;
        val *pk = keys[st], *pv = vals[st];
        while (l < r) {
            size_t p = l + (r - l) / 2;
            if (sort_lt(s, pk, keys[p])) r = p;
            else l = p + 1;
        }
        memmove(keys + l + 1, keys + l, (st - l) * sizeof *keys);
        memmove(vals + l + 1, vals + l, (st - l) * sizeof *vals);
        keys[l] = pk;
        vals[l] = pv;
    }
}

/* Sorts list l in place. key and reverse as in list.sort(). As in CPython, the list is
 * emptied while the key function and the comparisons run: its items move to `hold`, which
 * keeps their references, so a key function that appends to or pops from the list frees
 * nothing the sort still uses; whatever the list holds afterwards is dropped and reported. */
static int sort_list(eval_cx *cx, val *l, val *key, int reverse, const ir_node *at)
{
    size_t n = l->u.seq.len, i;
    if (key && key->kind == V_NONE) key = NULL;
    if (n == 0 || (n == 1 && !key)) return 0;   /* a lone item still meets the key */
    val *hold = eval_new(cx, V_LIST), tmp = { 0 }, **keys = NULL, **tk = NULL;
    if (!hold) return -1;
    eval_swap_items(l, hold);
    int rc = -1;
    /* keys[], and tk[] of 2n for the merges: charged like any value, through `tmp` */
    if (eval_mem(cx, &tmp, 3 * n * sizeof *keys) < 0) goto out;
    if (!(keys = calloc(n, sizeof *keys)) || !(tk = malloc(2 * n * sizeof *tk))) {
        eval_raise(cx, CR_ENOMEM, at, "out of memory");
        goto out;
    }
    val **vals = hold->u.seq.it;
    for (i = 0; i < n; i++) {
        if (key) {
            if (!(keys[i] = call1(cx, key, vals[i], at))) goto out;
        } else {
            keys[i] = vals[i];
            EV_INCREF(keys[i]);
        }
    }
    /* reverse=True sorts the reversed list and reverses the result, as CPython: stable.
     * A comparison that raises leaves the items as CPython's sort leaves them (a program
     * may catch the error and look): the comparisons done so far applied, the result still
     * reversed back (the merges of 64 items or more are not CPython's) */
    sort_cx s = { cx, 0 };
    if (reverse) reverse_items(keys, vals, n);
    if (n < 64) small_sort(&s, keys, vals, n);
    else merge_sort(&s, keys, vals, tk, tk + n, n);
    if (reverse) reverse_items(keys, vals, n);
    if (!s.failed) rc = 0;
out:
    if (keys)
        for (i = 0; i < n; i++) eval_decref(cx, keys[i]);
    free(keys);
    free(tk);
    cx->mem -= tmp.msz;
    int touched = l->u.seq.it || l->u.seq.len;
    eval_swap_items(l, hold);
    eval_decref(cx, hold);
    if (rc == 0 && touched) {
        eval_raise(cx, CR_EPY_VALUE, at, "list modified during sort");
        rc = -1;
    }
    return rc < 0 ? eval_at(cx, at) : 0;
}

/* ---- builtins -------------------------------------------------------------------------- */

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
    r->flags |= x->flags & VF_INEXACT;
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

static int dict_update(eval_cx *cx, val *d, val *src, eval_args *a, const ir_node *at)
{
    if (src && src->kind == V_DICT) {
        for (size_t i = 0; i < src->u.d.used; i++) {
            dict_ent *e = &src->u.d.ent[i];
            if (!e->key) continue;
            if (eval_count(cx, 1, at) < 0) return -1;   /* before the references it would leak */
            EV_INCREF(e->key);
            EV_INCREF(e->value);
            if (eval_dict_set(cx, d, e->key, e->value) < 0) return -1;
        }
    } else if (src) {
        val *l = items_of(cx, src, at);
        if (!l) return -1;
        for (size_t i = 0; i < l->u.seq.len; i++) {
            val *p = l->u.seq.it[i];
            size_t n = 0;
            if (p->kind != V_LIST && p->kind != V_TUPLE && p->kind != V_STR) {
                eval_raise(cx, CR_EPY_TYPE, at,
                           "cannot convert dictionary update sequence element #%zu to a sequence",
                           i);
                eval_decref(cx, l);
                return -1;
            }
            val *pl = eval_list_of(cx, p, V_LIST);
            if (!pl) { eval_decref(cx, l); return -1; }
            n = pl->u.seq.len;
            if (n != 2) {
                eval_raise(cx, CR_EPY_VALUE, at,
                           "dictionary update sequence element #%zu has length %zu; 2 is required",
                           i, n);
                eval_decref(cx, pl);
                eval_decref(cx, l);
                return -1;
            }
            EV_INCREF(pl->u.seq.it[0]);
            EV_INCREF(pl->u.seq.it[1]);
            int rc = eval_dict_set(cx, d, pl->u.seq.it[0], pl->u.seq.it[1]);
            eval_decref(cx, pl);
            if (rc < 0 || eval_count(cx, 1, at) < 0) { eval_decref(cx, l); return -1; }
        }
        eval_decref(cx, l);
    }
    for (size_t i = 0; a && i < a->nkw; i++) {
        val *k = eval_str(cx, a->kwname[i], strlen(a->kwname[i]));
        if (!k) return -1;
        EV_INCREF(a->kw[i]);
        if (eval_dict_set(cx, d, k, a->kw[i]) < 0) return -1;
    }
    return 0;
}

static val *b_float(eval_cx *cx, val *x, const ir_node *at)
{
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
    if (rc != CR_OK) {
        eval_decref(cx, r);
        if (rc == CR_ELIMIT)
            return eval_int_limit(cx, at);
        val *s = eval_to_str(cx, x, 1);
        if (!s) return NULL;
        eval_raise(cx, CR_EPY_VALUE, at, "could not convert string to float: %s", s->u.str.s);
        eval_decref(cx, s);
        return NULL;
    }
    return eval_num_finish(cx, r, 0);
}

val *eval_b_int(eval_cx *cx, eval_args *a, const ir_node *at)
{
    val *bv = a->npos > 1 ? a->pos[1] : kwarg(a, "base");
    if (a->npos == 0)
        return bv ? eval_raise(cx, CR_EPY_TYPE, at, "int() missing string argument")
                  : eval_int_si(cx, 0);
    val *x = a->pos[0];
    if (bv && x->kind != V_STR)
        return eval_raise(cx, CR_EPY_TYPE, at, "int() can't convert non-string with explicit base");
    if (x->kind == V_INF) return inf_error(cx, x, at);
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
        eval_decref(cx, r);
        if (rc == CR_ELIMIT)
            return eval_int_limit(cx, at);
        val *s = eval_to_str(cx, x, 1);
        if (!s) return NULL;
        eval_raise(cx, CR_EPY_VALUE, at, "invalid literal for int() with base %d: %s", (int)base,
                   s->u.str.s);
        eval_decref(cx, s);
        return NULL;
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
    val *key = kwarg(a, "key"), *dflt = kwarg(a, "default"), *best = NULL, *bestk = NULL;
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
        } else if (!(k = call1(cx, key, x, at))) {
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
    val *x = a->pos[0], *nd = a->npos > 1 ? a->pos[1] : kwarg(a, "ndigits");
    if (nd && nd->kind == V_NONE) nd = NULL;
    int64_t n = 0;
    if (nd && eval_int_of(cx, nd, &n) < 0) return NULL;
    if (x->kind == V_INF) {
        if (!nd) return inf_error(cx, x, at);
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
    return eval_num_finish(cx, r, (x->flags & VF_INEXACT) != 0);
}

val *eval_b_sum(eval_cx *cx, eval_args *a, const ir_node *at)
{
    val *start = a->npos > 1 ? a->pos[1] : kwarg(a, "start");
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

/* CPython's exception classes that the evaluator has, each with its base (-1: the root). */
static int exc_base(int id)
{
    switch (id) {
    case B_BASEEXCEPTION: return -1;
    case B_EXCEPTION: return B_BASEEXCEPTION;
    case B_ZERODIV: case B_OVERFLOWERROR: return B_ARITHERROR;
    case B_INDEXERROR: case B_KEYERROR: return B_LOOKUPERROR;
    case B_UNBOUNDERROR: return B_NAMEERROR;
    case B_RECURSIONERROR: return B_RUNTIMEERROR;
    case B_STATISTICSERROR: return B_VALUEERROR;
    case B_DECIMALEXCEPTION: return B_ARITHERROR;
    case B_INVALIDOPERATION: case B_DIVISIONBYZERO: case B_DECOVERFLOW: return B_DECIMALEXCEPTION;
    default: return B_EXCEPTION;
    }
}

/* A second base, for the classes CPython derives from two (DivisionByZero is also a
 * ZeroDivisionError); -1: none. */
static int exc_base2(int id)
{
    return id == B_DIVISIONBYZERO ? B_ZERODIV : -1;
}

int eval_exc_lookup(const char *name)
{
    for (int id = B_EXCEPTION; id <= B_EXC_LAST; id++)
        if (strcmp(eval_builtin_name(id), name) == 0) return id;
    return -1;
}

int eval_exc_is(int id, int cls)
{
    for (; id >= 0; id = exc_base(id))
        if (id == cls || (exc_base2(id) >= 0 && eval_exc_is(exc_base2(id), cls))) return 1;
    return 0;
}

static val *b_exception(eval_cx *cx, int id, eval_args *a)
{
    val *e = eval_new(cx, V_EXC);
    if (!e) return NULL;
    e->sub = (uint16_t)id;
    if (a->npos) {
        val *t = eval_seq_new(cx, V_TUPLE, a->npos);
        if (!t) { eval_decref(cx, e); return NULL; }
        for (size_t i = 0; i < a->npos; i++) {
            EV_INCREF(a->pos[i]);
            t->u.seq.it[t->u.seq.len++] = a->pos[i];
        }
        e->u.exc.args = t;
    }
    return e;
}

int eval_print(eval_cx *cx, eval_args *a, const ir_node *at)
{
    static const char *const kws[] = { "sep", "end", "flush", "file", NULL };
    if (kw_check(cx, a, kws, "print", at) < 0) return -1;
    val *sep = kwarg(a, "sep"), *end = kwarg(a, "end"), *file = kwarg(a, "file");
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
    val *st = a->npos > 1 ? a->pos[1] : kwarg(a, "start");
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
    val *l = items_of(cx, a->pos[0], at), *rev = kwarg(a, "reverse");
    if (!l) return NULL;
    if (sort_list(cx, l, kwarg(a, "key"), rev && eval_truth(cx, rev), at) < 0) {
        eval_decref(cx, l);
        return NULL;
    }
    return l;
}

/* ---- math ------------------------------------------------------------------------------ */

static val *math_result(eval_cx *cx, cr_code rc, val *r, int exact, val *x, const ir_node *at)
{
    if (rc != CR_OK) {
        eval_decref(cx, r);
        if (rc == CR_EPY_OVERFLOW) return eval_raise(cx, rc, at, "math range error");
        if (rc == CR_ELIMIT)
            return eval_int_limit(cx, at);
        if (rc == CR_EPY_ZERODIV) rc = CR_EPY_VALUE;
        return eval_raise(cx, rc, at, "math domain error");
    }
    return eval_num_finish(cx, r, !exact || (x && (x->flags & VF_INEXACT)));
}

typedef cr_code (*unary_fn)(mpq_t, int *, const mpq_t, const num_ctx *);

static unary_fn unary_of(int id)
{
    switch (id) {
    case M_SQRT: return num_sqrt;
    case M_EXP: return num_exp;
    case M_LOG10: return num_log10;
    case M_LOG2: return num_log2;
    case M_ERF: return num_erf;
    case M_ERFC: return num_erfc;
    case M_SIN: return num_sin;
    case M_COS: return num_cos;
    case M_TAN: return num_tan;
    case M_ATAN: return num_atan;
    default: return NULL;
    }
}

static int int_arg(eval_cx *cx, val *x, const ir_node *at)
{
    if (x->kind == V_INT || x->kind == V_BOOL) return 0;
    eval_raise(cx, CR_EPY_TYPE, at, "'%s' object cannot be interpreted as an integer",
               eval_type_name(x));
    return -1;
}

static val *math_comb_perm(eval_cx *cx, int id, eval_args *a, const ir_node *at)
{
    val *n = a->pos[0], *k = a->npos > 1 ? a->pos[1] : NULL;
    if (int_arg(cx, n, at) < 0 || (k && int_arg(cx, k, at) < 0)) return NULL;
    if (mpq_sgn(n->u.q) < 0)
        return eval_raise(cx, CR_EPY_VALUE, at, k ? "n must be a non-negative integer"
                                                  : "factorial() not defined for negative values");
    if (k && mpq_sgn(k->u.q) < 0)
        return eval_raise(cx, CR_EPY_VALUE, at, "k must be a non-negative integer");
    val *r = eval_num(cx, V_INT);
    if (!r) return NULL;
    cr_code rc;
    if (!k) rc = num_factorial(mpq_numref(r->u.q), mpq_numref(n->u.q), &cx->nc);
    else if (id == M_COMB)
        rc = num_comb(mpq_numref(r->u.q), mpq_numref(n->u.q), mpq_numref(k->u.q), &cx->nc);
    else rc = num_perm(mpq_numref(r->u.q), mpq_numref(n->u.q), mpq_numref(k->u.q), &cx->nc);
    return math_result(cx, rc, r, 1, NULL, at);
}

/* A one-argument math function of inf, -inf or nan, through the C library as CPython's
 * math_1: a NaN from a non-NaN argument is a domain error. The finite results (exp(-inf),
 * erf(inf), erfc(-inf)) are 0, 1 or 2, exact; atan(±inf) is ±pi/2 to the precision. */
static val *math_nonfinite(eval_cx *cx, int id, val *x, const ir_node *at)
{
    double d, r;
    eval_to_double(cx, x, &d, at);   /* cannot fail on a non-finite value */
    switch (id) {
    case M_SQRT: r = sqrt(d); break;
    case M_EXP: r = exp(d); break;
    case M_LOG: r = d < 0 ? NAN : log(d); break;
    case M_LOG10: r = d < 0 ? NAN : log10(d); break;
    case M_LOG2: r = d < 0 ? NAN : log2(d); break;
    case M_ERF: r = erf(d); break;
    case M_ERFC: r = erfc(d); break;
    case M_ATAN: r = atan(d); break;
    case M_FABS: r = fabs(d); break;
    default: r = NAN; break;   /* sin, cos, tan */
    }
    if (isnan(r) && !isnan(d)) return eval_raise(cx, CR_EPY_VALUE, at, "math domain error");
    if (isnan(r) || isinf(r)) return eval_nonfinite(cx, r);
    val *v = eval_num(cx, V_FLOAT);
    if (!v) return NULL;
    if (id != M_ATAN) {
        mpq_set_d(v->u.q, r);
        return eval_num_finish(cx, v, 0);
    }
    num_pi(v->u.q, &cx->nc);
    mpq_div_2exp(v->u.q, v->u.q, 1);
    if (r < 0) mpq_neg(v->u.q, v->u.q);
    return eval_num_finish(cx, v, 1);
}

/* math.log(x, base) with an infinite or NaN operand: log(x) / log(base) as CPython. Beside
 * an infinity or NaN only the sign of a finite log matters, so it stands for the log: -1, 0
 * (log(1): a division by zero) or 1; a finite result (finite / inf) is 0. */
static val *log_base_nonfinite(eval_cx *cx, val *x, val *base, const ir_node *at)
{
    double d[2];
    val *v[2] = { x, base };
    for (int i = 0; i < 2; i++) {
        if (v[i]->kind == V_INF) {
            if (eval_to_double(cx, v[i], &d[i], at) < 0) return NULL;
            if (d[i] < 0) return eval_raise(cx, CR_EPY_VALUE, at, "math domain error");
            continue;
        }
        mpq_srcptr q = eval_decided(cx, v[i], 0);
        if (mpq_sgn(q) <= 0) return eval_raise(cx, CR_EPY_VALUE, at, "math domain error");
        int c = mpq_cmp_ui(q, 1, 1);
        d[i] = c < 0 ? -1 : c > 0;
    }
    if (d[1] == 0) return eval_raise(cx, CR_EPY_ZERODIV, at, "float division by zero");
    double r = d[0] / d[1];
    if (isnan(r) || isinf(r)) return eval_nonfinite(cx, r);
    val *z = eval_num(cx, V_FLOAT);
    return z ? eval_num_finish(cx, z, 0) : NULL;
}

static val *math_call(eval_cx *cx, int id, eval_args *a, const ir_node *at)
{
    const char *name = eval_builtin_name(id);
    val *r, *x;
    cr_code rc = CR_OK;
    int exact = 1;
    unary_fn fn = unary_of(id);
    if (id == M_ISNAN || id == M_ISINF || id == M_ISFINITE) {
        double d;
        x = a->pos[0];
        if (x->kind != V_INF && need_real(cx, x, at) < 0) return NULL;
        if (eval_to_double(cx, x, &d, at) < 0) return NULL;
        return eval_bool(cx, id == M_ISNAN ? isnan(d) : id == M_ISINF ? isinf(d) : isfinite(d));
    }
    if ((fn || id == M_FABS || (id == M_LOG && a->npos == 1)) && a->npos == 1 && !a->nkw &&
        a->pos[0]->kind == V_INF)
        return math_nonfinite(cx, id, a->pos[0], at);
    if (id == M_POW && a->npos == 2 && !a->nkw &&
        (a->pos[0]->kind == V_INF || a->pos[1]->kind == V_INF) &&
        IS_REAL(a->pos[0]) && IS_REAL(a->pos[1]))
        return eval_binop(cx, IR_POW, a->pos[0], a->pos[1], at);   /* float pow's rules */
    if (fn) {
        if (need_real(cx, a->pos[0], at) < 0)
            return NULL;
        x = a->pos[0];
        if (eval_count(cx, 16, at) < 0 || !(r = eval_num(cx, V_FLOAT))) return NULL;
        rc = fn(r->u.q, &exact, x->u.q, &cx->nc);
        return math_result(cx, rc, r, exact, x, at);
    }
    switch (id) {
    case M_LOG:
        if (a->npos == 2 && !a->nkw && IS_REAL(a->pos[0]) && IS_REAL(a->pos[1]) &&
            (a->pos[0]->kind == V_INF || a->pos[1]->kind == V_INF))
            return log_base_nonfinite(cx, a->pos[0], a->pos[1], at);
        if (a->npos < 1 || a->npos > 2)   /* CPython's words of its own (the row: AR_OWN) */
            return eval_raise(cx, CR_EPY_TYPE, at, "math.log requires 1 to 2 arguments");
        if (need_real(cx, a->pos[0], at) < 0 ||
            (a->npos > 1 && need_real(cx, a->pos[1], at) < 0))
            return NULL;
        x = a->pos[0];
        if (eval_count(cx, 16, at) < 0 || !(r = eval_num(cx, V_FLOAT))) return NULL;
        if (a->npos > 1) rc = num_log_base(r->u.q, &exact, x->u.q, a->pos[1]->u.q, &cx->nc);
        else rc = num_log(r->u.q, &exact, x->u.q, &cx->nc);
        if (a->npos > 1 && (a->pos[1]->flags & VF_INEXACT)) exact = 0;
        return math_result(cx, rc, r, exact, x, at);
    case M_POW:
        if (need_real(cx, a->pos[0], at) < 0 ||
            need_real(cx, a->pos[1], at) < 0)
            return NULL;
        if (!(r = eval_num(cx, V_FLOAT))) return NULL;
        rc = num_pow(r->u.q, &exact, a->pos[0]->u.q, a->pos[1]->u.q, 1, &cx->nc);
        if (rc == CR_ELIMIT) rc = CR_EPY_OVERFLOW;
        if ((a->pos[0]->flags | a->pos[1]->flags) & VF_INEXACT) exact = 0;
        return math_result(cx, rc, r, exact, NULL, at);
    case M_FABS:
        if (need_real(cx, a->pos[0], at) < 0)
            return NULL;
        if (!(r = eval_num(cx, V_FLOAT))) return NULL;
        mpq_abs(r->u.q, a->pos[0]->u.q);
        return math_result(cx, CR_OK, r, 1, a->pos[0], at);
    case M_FLOOR: case M_CEIL: case M_TRUNC:
        if (a->pos[0]->kind == V_INF) return inf_error(cx, a->pos[0], at);
        if (need_real(cx, a->pos[0], at) < 0 || !(r = eval_num(cx, V_INT))) return NULL;
        x = a->pos[0];
        mpq_srcptr xq = eval_decided(cx, x, 0);
        if (id == M_FLOOR) num_floor(mpq_numref(r->u.q), xq);
        else if (id == M_CEIL) num_ceil(mpq_numref(r->u.q), xq);
        else num_trunc(mpq_numref(r->u.q), xq);
        mpz_set_ui(mpq_denref(r->u.q), 1);
        return math_result(cx, CR_OK, r, 1, x, at);
    case M_FACTORIAL:
        if (int_arg(cx, a->pos[0], at) < 0) return NULL;
        return math_comb_perm(cx, M_PERM, a, at);
    case M_COMB: case M_PERM:
        return math_comb_perm(cx, id, a, at);
    case M_ISCLOSE: {
        val *p = a->pos[0], *q = a->pos[1], *rt = kwarg(a, "rel_tol"), *at_ = kwarg(a, "abs_tol");
        if (p->kind == V_INF || q->kind == V_INF)
            return eval_bool(cx, p->kind == V_INF && q->kind == V_INF && p->sub == q->sub &&
                                 !IS_NAN(p));
        if (need_real(cx, p, at) < 0 || need_real(cx, q, at) < 0 ||
            (rt && need_real(cx, rt, at) < 0) || (at_ && need_real(cx, at_, at) < 0))
            return NULL;
        if ((rt && mpq_sgn(rt->u.q) < 0) || (at_ && mpq_sgn(at_->u.q) < 0))
            return eval_raise(cx, CR_EPY_VALUE, at, "tolerances must be non-negative");
        mpq_t d, m, t;
        mpq_inits(d, m, t, NULL);
        mpq_sub(d, p->u.q, q->u.q);
        mpq_abs(d, d);
        mpq_abs(m, p->u.q);
        mpq_abs(t, q->u.q);
        if (mpq_cmp(t, m) > 0) mpq_set(m, t);
        if (rt) mpq_mul(m, m, rt->u.q);
        else { mpq_set_ui(t, 1, 1000000000); mpq_mul(m, m, t); }
        if (at_ && mpq_cmp(at_->u.q, m) > 0) mpq_set(m, at_->u.q);
        int close = mpq_cmp(d, m) <= 0;
        mpq_clears(d, m, t, NULL);
        return eval_bool(cx, close);
    }
    case M_FSUM: {
        val *l = items_of(cx, a->pos[0], at);
        if (!l) return NULL;
        /* a float sum through `+`: exact while small, bounded (NUM_FLOAT_BITS) and charged
         * by size when the partial sums grow */
        if (!(r = eval_num(cx, V_FLOAT))) { eval_decref(cx, l); return NULL; }
        double special = 0, infs = 0;   /* CPython's sums of the non-finite items */
        for (size_t i = 0; i < l->u.seq.len && r; i++) {
            x = l->u.seq.it[i];
            if (x->kind == V_INF) {
                double d;
                eval_to_double(cx, x, &d, at);
                special += d;
                infs += isinf(d) ? d : 0;
                continue;
            }
            if (need_real(cx, x, at) < 0 || eval_count(cx, 1, at) < 0) {
                eval_decref(cx, r);
                r = NULL;
                break;
            }
            val *n = eval_binop(cx, IR_ADD, r, x, at);
            eval_decref(cx, r);
            r = n;
        }
        eval_decref(cx, l);
        if (r && special != 0) {   /* NaN too */
            eval_decref(cx, r);
            if (isnan(infs)) return eval_raise(cx, CR_EPY_VALUE, at, "-inf + inf in fsum");
            return eval_nonfinite(cx, special);
        }
        return r;
    }
    case M_PROD: {
        val *acc = kwarg(a, "start");
        if (acc) EV_INCREF(acc);
        else if (!(acc = eval_int_si(cx, 1))) return NULL;
        val *l = items_of(cx, a->pos[0], at);
        if (!l) { eval_decref(cx, acc); return NULL; }
        for (size_t i = 0; i < l->u.seq.len && acc; i++) {
            val *n = eval_binop(cx, IR_MUL, acc, l->u.seq.it[i], at);
            eval_decref(cx, acc);
            acc = n;
        }
        eval_decref(cx, l);
        return acc;
    }
    default:
        return eval_raise(cx, CR_EINTERNAL, at, "math.%s is not implemented", name);
    }
}

static val *math_const(eval_cx *cx, void (*set)(mpq_t, const num_ctx *))
{
    val *r = eval_num(cx, V_FLOAT);
    if (!r) return NULL;
    set(r->u.q, &cx->nc);
    r->flags |= VF_INEXACT;
    return eval_num_done(cx, r);
}

val *eval_math_pi(eval_cx *cx, const ir_node *at) { (void)at; return math_const(cx, num_pi); }
val *eval_math_e(eval_cx *cx, const ir_node *at) { (void)at; return math_const(cx, num_e); }
val *eval_math_inf(eval_cx *cx, const ir_node *at) { (void)at; return eval_nonfinite(cx, INFINITY); }
val *eval_math_nan(eval_cx *cx, const ir_node *at) { (void)at; return eval_nonfinite(cx, NAN); }

val *eval_b_repr(eval_cx *cx, eval_args *a, const ir_node *at)
{
    (void)at;
    return eval_to_str(cx, a->pos[0], 1);
}

/* ---- dispatch -------------------------------------------------------------------------- */

/* math's functions take an object that has a float (a Decimal) as CPython's do, through
 * float() of it (the object's builtin hook); other arguments pass as they are. */
static val *math_call_objs(eval_cx *cx, int id, eval_args *a, const ir_node *at)
{
    val *conv[4] = { 0 }, *r = NULL;
    size_t n = a->npos <= 4 ? a->npos : 0;
    int any = 0;
    for (size_t i = 0; i < n; i++) {
        val *x = a->pos[i];
        if (x->kind != V_OBJ || !x->u.obj.cls->builtin) continue;
        eval_args one = { .pos = &a->pos[i], .npos = 1 };
        conv[i] = x->u.obj.cls->builtin(cx, B_FLOAT, x, &one, at);
        if (cx->err.code != CR_OK) goto out;
        any |= conv[i] != NULL;
    }
    if (!any) return math_call(cx, id, a, at);
    val *pos[4];
    for (size_t i = 0; i < n; i++) pos[i] = conv[i] ? conv[i] : a->pos[i];
    eval_args b = *a;
    b.pos = pos;
    r = math_call(cx, id, &b, at);
out:
    for (size_t i = 0; i < n; i++) eval_decref(cx, conv[i]);
    return r;
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
    if (r && dict_update(cx, r, a->npos ? a->pos[0] : NULL, a, at) < 0) {
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

IMPL(eval_b_format)
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
    val *r = eval_str_buf(cx, &b);
    if (r && inexact && r->rc == 1) r->flags |= VF_INEXACT;
    return r;
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
    val *l = items_of(cx, a->pos[0], at);
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
    val *strict = kwarg(a, "strict");
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
        val *o = a->npos > i + 1 ? a->pos[i + 1] : kwarg(a, opt[i]);
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

/* math's functions: math_call_objs on the row's id */
#define MATH(name, id) IMPL(eval_m_##name) { return math_call_objs(cx, id, a, at); }
MATH(sqrt, M_SQRT) MATH(exp, M_EXP) MATH(log, M_LOG) MATH(log10, M_LOG10) MATH(log2, M_LOG2)
MATH(pow, M_POW) MATH(fabs, M_FABS) MATH(floor, M_FLOOR) MATH(ceil, M_CEIL)
MATH(trunc, M_TRUNC) MATH(erf, M_ERF) MATH(erfc, M_ERFC) MATH(factorial, M_FACTORIAL)
MATH(comb, M_COMB) MATH(perm, M_PERM) MATH(isclose, M_ISCLOSE) MATH(fsum, M_FSUM)
MATH(prod, M_PROD) MATH(sin, M_SIN) MATH(cos, M_COS) MATH(tan, M_TAN) MATH(atan, M_ATAN)
MATH(isnan, M_ISNAN) MATH(isinf, M_ISINF) MATH(isfinite, M_ISFINITE)
#undef MATH

/* the exception classes: an instance of the row's class */
#define EXC(mod, name, id, sig) IMPL(eval_exc_##id) { (void)at; return b_exception(cx, id, a); }
#include "ir/subset.def"
#undef IMPL

/* ---- calls ----------------------------------------------------------------------------- */

/* A call's arguments bound to a row's parameters (its sig, subset.h's reg_sig), with the
 * TypeError CPython raises when they do not fit, in the words of the row's family (its
 * ar_style). out[i]: parameter i's argument or NULL. 0, or -1 raised. */

static size_t param_of(const reg_sig *s, const char *name, size_t from)
{
    for (size_t i = from; i < s->np; i++)
        if (strcmp(s->p[i], name) == 0) return i;
    return SIZE_MAX;
}

static int type_error(eval_cx *cx, const ir_node *at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int type_error(eval_cx *cx, const ir_node *at, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    eval_raise(cx, CR_EPY_TYPE, at, "%s", msg);
    return -1;
}

static void positional(const reg_sig *s, eval_args *a, val **out)
{
    for (size_t i = 0; i < s->np; i++) out[i] = i < a->npos && i < s->npos ? a->pos[i] : NULL;
}

/* A Python function's binding (CPython's initialize_locals): the keywords first, then the
 * count of positional arguments, then the required ones missing. self: 1 for a method (its
 * messages count self). A numpy ufunc (AR_UFUNC, ufunc != 0) checks the count first, in
 * words of its own, and takes no parameter before "/" by keyword. */
int eval_bind_def(eval_cx *cx, eval_args *a, const reg_sig *s, size_t lo, size_t self, int ufunc,
                  val **out, const ir_node *at)
{
    const char *fn = s->name;
    size_t n = a->npos, kwonly = 0;
    positional(s, a, out);
    if (ufunc && (n < lo || n > s->npos))
        return type_error(cx, at, "%s() takes from %zu to %u positional arguments but %zu were given",
                          fn, lo, s->npos, n);
    for (size_t k = 0; k < a->nkw; k++) {
        size_t i = param_of(s, a->kwname[k], s->nposonly);
        if (i == SIZE_MAX && s->varkw) continue;
        if (i == SIZE_MAX && !ufunc && param_of(s, a->kwname[k], 0) < s->nposonly) {
            char names[96] = "";   /* CPython names every positional-only one passed so */
            for (size_t j = 0, len = 0; j < a->nkw && len < sizeof names; j++)
                if (param_of(s, a->kwname[j], 0) < s->nposonly)
                    len += (size_t)snprintf(names + len, sizeof names - len, "%s%s",
                                            len ? ", " : "", a->kwname[j]);
            return type_error(cx, at, "%s() got some positional-only arguments passed as keyword "
                              "arguments: '%s'", fn, names);
        }
        if (i == SIZE_MAX)
            return type_error(cx, at, "%s() got an unexpected keyword argument '%s'", fn,
                              a->kwname[k]);
        if (out[i])
            return type_error(cx, at, "%s() got multiple values for argument '%s'", fn, s->p[i]);
        out[i] = a->kw[k];
        kwonly += i >= s->npos;
    }
    if (n > s->npos && !s->varargs) {
        size_t given = n + self;
        char more[96] = "";
        if (kwonly)
            snprintf(more, sizeof more, " positional argument%s (and %zu keyword-only argument%s)",
                     given == 1 ? "" : "s", kwonly, kwonly == 1 ? "" : "s");
        const char *verb = given == 1 && !kwonly ? "was" : "were";
        if (lo == s->npos)
            return type_error(cx, at, "%s() takes %zu positional argument%s but %zu%s %s given", fn,
                              lo + self, lo + self == 1 ? "" : "s", given, more, verb);
        return type_error(cx, at, "%s() takes from %zu to %zu positional arguments but %zu%s %s given",
                          fn, lo + self, s->npos + self, given, more, verb);
    }
    const char *miss[REG_MAXP];
    size_t nmiss = 0;
    for (size_t i = 0; i < lo && i < s->np; i++)
        if (!out[i]) miss[nmiss++] = s->p[i];
    if (!nmiss) return 0;
    char list[160] = "";
    for (size_t i = 0, len = 0; i < nmiss && len < sizeof list; i++)
        len += (size_t)snprintf(list + len, sizeof list - len, "%s'%s'",
                                i == 0 ? "" : i + 1 < nmiss ? ", " : nmiss > 2 ? ", and " : " and ",
                                miss[i]);
    return type_error(cx, at, "%s() missing %zu required positional argument%s: %s", fn, nmiss,
                      nmiss == 1 ? "" : "s", list);
}

/* Argument Clinic's _PyArg_UnpackKeywords (AR_CLINIC). An AR_CHECK row with keyword
 * parameters (sorted, max, print, zip) has had its positional arguments counted apart, as
 * CPython does; its keywords are parsed so with its positional-only parameters left out
 * (skip). AR_VECTOR (enumerate's vectorcall): the arguments fill the first parameters, each
 * keyword one that no positional argument has filled, and a missing one is named without
 * its position. */
static int bind_clinic(eval_cx *cx, eval_args *a, const reg_sig *s, size_t lo, int style,
                       val **out, const ir_node *at)
{
    const char *fn = s->name;
    size_t n = a->npos, skip = style == AR_CHECK ? s->nposonly : 0;
    size_t on = n < s->npos ? n : s->npos;   /* positional arguments on named parameters */
    size_t nargs = style != AR_CHECK ? n : on > skip ? on - skip : 0;
    size_t maxargs = s->np - skip, total = nargs + a->nkw;
    positional(s, a, out);
    if (total > maxargs && !s->varkw && style == AR_VECTOR && n < lo)
        return type_error(cx, at, "%s() missing required argument '%s'", fn, s->p[n]);
    if (total > maxargs && !s->varkw)
        return type_error(cx, at, "%s() takes at most %zu %sargument%s (%zu given)", fn, maxargs,
                          nargs || style == AR_VECTOR ? "" : "keyword ", maxargs == 1 ? "" : "s",
                          total);
    if (style == AR_CLINIC) {
        size_t minpo = s->nposonly < lo ? s->nposonly : lo;
        if (n > s->npos)
            return type_error(cx, at, "%s() takes %s %u positional argument%s (%zu given)", fn,
                              lo < s->npos ? "at most" : "exactly", s->npos,
                              s->npos == 1 ? "" : "s", n);
        if (n < minpo)
            return type_error(cx, at, "%s() takes %s %zu positional argument%s (%zu given)", fn,
                              minpo < s->npos ? "at least" : "exactly", minpo,
                              minpo == 1 ? "" : "s", n);
    }
    size_t matched = 0;
    if (style == AR_VECTOR) {
        for (size_t k = 0; k < a->nkw; k++) {
            size_t i = param_of(s, a->kwname[k], n);
            if (i >= total || out[i])
                return type_error(cx, at, "'%s' is an invalid keyword argument for %s()",
                                  a->kwname[k], fn);
            out[i] = a->kw[k];
        }
        for (size_t i = 0; i < lo; i++)
            if (!out[i]) return type_error(cx, at, "%s() missing required argument '%s'", fn, s->p[i]);
        return 0;
    }
    for (size_t i = on > s->nposonly ? on : s->nposonly; i < s->np; i++) {
        val *v = eval_kwarg(a, s->p[i]);
        if (v) {
            out[i] = v;
            matched++;
        } else if (i < lo && i < s->npos) {
            return type_error(cx, at, "%s() missing required argument '%s' (pos %zu)", fn, s->p[i],
                              i + 1);
        }
    }
    if (matched == a->nkw || s->varkw) return 0;
    for (size_t i = s->nposonly; i < on; i++)
        if (eval_kwarg(a, s->p[i]))
            return type_error(cx, at, "argument for %s() given by name ('%s') and position (%zu)",
                              fn, s->p[i], i + 1);
    for (size_t k = 0; k < a->nkw; k++)
        if (param_of(s, a->kwname[k], s->nposonly) == SIZE_MAX)
            return type_error(cx, at, "'%s' is an invalid keyword argument for %s()",
                              a->kwname[k], fn);
    return 0;
}

void eval_bound(int id, eval_args *a, val **out)
{
    reg_sig s;
    registry_func_sig(id, &s);
    for (size_t i = 0; i < s.np; i++)
        out[i] = i < a->npos && i < s.npos ? a->pos[i] : eval_kwarg(a, s.p[i]);
}

/* Row id's parameters bound to a's arguments: into *s and out[]. */
static int bind_row(eval_cx *cx, int id, eval_args *a, reg_sig *s, val **out, const ir_node *at)
{
    int lo, hi, style;
    const char *sig;
    registry_func_arity(id, &lo, &hi, &style, &sig);
    registry_func_sig(id, s);
    size_t n = a->npos;
    const char *row = registry_func_name(id);
    /* a module's function as vectorcall names it ("math.sqrt"); METH_VARARGS (AR_OWN here)
     * and a class, by its own name */
    char qual[64];
    int mod = registry_func_module(id);
    if (mod != MOD_NONE && style != AR_OWN && !IS_EXC_CLASS(id))
        snprintf(qual, sizeof qual, "%s.%s", registry_module_name(mod), row);
    else
        snprintf(qual, sizeof qual, "%s", row);
    memset(out, 0, REG_MAXP * sizeof *out);
    if (a->nkw && !s->varkw && s->nposonly == s->np && style != AR_DEF && style != AR_UFUNC)
        return type_error(cx, at, "%s() takes no keyword arguments", qual);
    int rc = 0;
    switch (style) {
    case AR_OWN:
        return 0;
    case AR_O:
        if (n != 1) return type_error(cx, at, "%s() takes exactly one argument (%zu given)", qual, n);
        break;
    case AR_NOARGS:
        if (n) return type_error(cx, at, "%s() takes no arguments (%zu given)", qual, n);
        break;
    case AR_CHECK:   /* _PyArg_CheckPositional, in the row's name */
        if (n < (size_t)lo || (n > (size_t)hi && hi != AR_MANY)) {
            if (lo == hi)
                return type_error(cx, at, "%s expected %d argument%s, got %zu", row, lo,
                                  lo == 1 ? "" : "s", n);
            if (n < (size_t)lo)
                return type_error(cx, at, "%s expected at least %d argument%s, got %zu", row, lo,
                                  lo == 1 ? "" : "s", n);
            return type_error(cx, at, "%s expected at most %d argument%s, got %zu", row, hi,
                              hi == 1 ? "" : "s", n);
        }
        if (a->nkw) rc = bind_clinic(cx, a, s, (size_t)lo, style, out, at);
        break;
    case AR_CLINIC: case AR_VECTOR:
        rc = bind_clinic(cx, a, s, (size_t)lo, style, out, at);
        break;
    default:   /* AR_DEF, AR_UFUNC */
        rc = eval_bind_def(cx, a, s, (size_t)lo, 0, style == AR_UFUNC, out, at);
        break;
    }
    if (rc < 0 || hi == AR_MANY || n <= (size_t)hi) return rc;
    /* a count CPython takes but the subset does not (the whitelist keeps numpy's out) */
    return type_error(cx, at, "%s expected at most %d argument%s, got %zu", row, hi,
                      hi == 1 ? "" : "s", n);
}

/* Each row's implementation and count, by id: the one way a call reaches a function. */
static const struct {
    eval_fn impl;
    unsigned char lo, hi, style;
} funcs[B_COUNT] = {
#define FUNC(mod, name, id, impl, lo, hi, style, sig) [id] = { impl, lo, hi, style },
#include "ir/subset.def"
};

static val *call_impl(eval_cx *cx, int id, eval_args *a, const ir_node *at)
{
    /* a builtin's first argument that is an object may answer for itself (abs of a Decimal) */
    if (id < B_EXCEPTION && a->npos && a->pos[0]->kind == V_OBJ && a->pos[0]->u.obj.cls->builtin) {
        val *r = a->pos[0]->u.obj.cls->builtin(cx, id, a->pos[0], a, at);
        if (r || cx->err.code != CR_OK) return r;
    }
    return funcs[id].impl(cx, a, at);
}

val *eval_builtin_call(eval_cx *cx, int id, eval_args *a, const ir_node *at)
{
    size_t n = a->npos;
    if (!a->nkw && n >= funcs[id].lo && (n <= funcs[id].hi || funcs[id].hi == AR_MANY))
        return call_impl(cx, id, a, at);
    reg_sig s;
    val *out[REG_MAXP];
    if (bind_row(cx, id, a, &s, out, at) < 0) return NULL;
    if (!a->nkw || s.varargs || s.varkw || funcs[id].style == AR_OWN || n > REG_MAXP)
        return call_impl(cx, id, a, at);
    /* the impls read parameter i as pos[i], or by keyword when an earlier optional one is
     * absent: the keywords that continue the positional arguments become positional */
    val *pos[REG_MAXP], *kw[REG_MAXP];
    const char *kwname[REG_MAXP];
    size_t k = 0, nk = 0;
    for (; k < n && k < REG_MAXP; k++) pos[k] = a->pos[k];
    for (; k < s.npos && out[k]; k++) pos[k] = out[k];
    for (size_t j = 0; j < a->nkw && nk < REG_MAXP; j++)
        if (param_of(&s, a->kwname[j], 0) >= k) {
            kwname[nk] = a->kwname[j];
            kw[nk++] = a->kw[j];
        }
    eval_args b = { pos, k, kwname, kw, nk };
    return call_impl(cx, id, &b, at);
}

/* ---- formatting ------------------------------------------------------------------------ */

static int format_error(eval_cx *cx, cr_code rc, cr_error *e, const ir_node *at)
{
    if (rc == CR_ENOMEM) { eval_raise(cx, CR_ENOMEM, at, "out of memory"); return -1; }
    eval_raise(cx, rc, at, "%s", e->message[0] ? e->message : "Invalid format specifier");
    return -1;
}

/* format() of inf, -inf or nan: the spec is checked as a float's (num_format on 0 raises
 * what CPython does), then sign, fill, align and width apply to "inf" or "nan" (upper case
 * for E F G, a '%' after it for %); precision and grouping have nothing to act on. */
static cr_code format_nonfinite(eval_cx *cx, cr_buf *b, val *v, const char *spec, size_t len,
                                cr_error *e)
{
    cr_buf tmp;
    mpq_t z;
    cr_buf_init(&tmp, cx->lim->max_str_len);
    mpq_init(z);
    cr_code rc = num_format(&tmp, z, 1, spec, len, &cx->nc, e);
    mpq_clear(z);
    cr_buf_free(&tmp);
    if (rc != CR_OK) return rc;
    size_t i = 0, k = 1, fl = 1;
    const char *fill = " ";
    char align = 0, sign = 0, t = len ? spec[len - 1] : 0;
    while (k < len && ((unsigned char)spec[k] & 0xC0) == 0x80) k++;
    if (k < len && strchr("<>=^", spec[k])) {
        fill = spec;
        fl = k;
        align = spec[k];
        i = k + 1;
    } else if (len && strchr("<>=^", spec[0])) {
        align = spec[i++];
    }
    if (i < len && strchr("+- ", spec[i])) sign = spec[i++];
    while (i < len && (spec[i] == 'z' || spec[i] == '#')) i++;
    if (i < len && spec[i] == '0' && !align) {
        fill = "0";
        align = '=';
    }
    size_t width = 0;
    for (; i < len && spec[i] >= '0' && spec[i] <= '9'; i++) width = width * 10 + (size_t)(spec[i] - '0');
    char body[8];
    snprintf(body, sizeof body, "%s%s%s",
             v->sub == INF_NEG ? "-" : sign == '+' ? "+" : sign == ' ' ? " " : "",
             !strchr("EFG", t) ? (IS_NAN(v) ? "nan" : "inf") : IS_NAN(v) ? "NAN" : "INF",
             t == '%' ? "%" : "");
    size_t n = strlen(body), pad = width > n ? width - n : 0;
    size_t before = align == '<' ? 0 : align == '^' ? pad / 2 : pad;
    size_t sl = align == '=' && (body[0] < 'A') ? 1 : 0;   /* '=': the sign goes before the fill */
    rc = cr_buf_put(b, body, sl);
    for (size_t j = 0; j < before && rc == CR_OK; j++) rc = cr_buf_put(b, fill, fl);
    if (rc == CR_OK) rc = cr_buf_put(b, body + sl, n - sl);
    for (size_t j = before; j < pad && rc == CR_OK; j++) rc = cr_buf_put(b, fill, fl);
    return rc;
}

int eval_format(eval_cx *cx, cr_buf *b, val *v, const char *spec, size_t len, const ir_node *at)
{
    cr_error e;
    cr_code rc;
    memset(&e, 0, sizeof e);
    if (v->kind == V_OBJ && v->u.obj.cls->format) return v->u.obj.cls->format(cx, b, v, spec, len, at);
    if (len == 0) return eval_repr(cx, b, v, 1);
    if (IS_NUM(v)) {
        /* an inexact value rounds as it prints; the text it makes carries the flag, so the
         * run is not marked */
        rc = num_format(b, eval_shown(cx, v, 0), v->kind == V_FLOAT, spec, len, &cx->nc, &e);
        return rc == CR_OK ? 0 : format_error(cx, rc, &e, at);
    }
    if (v->kind == V_STR) {
        rc = num_format_str(b, v->u.str.s, v->u.str.len, spec, len, &e);
        return rc == CR_OK ? 0 : format_error(cx, rc, &e, at);
    }
    if (v->kind == V_INF) {
        rc = format_nonfinite(cx, b, v, spec, len, &e);
        return rc == CR_OK ? 0 : format_error(cx, rc, &e, at);
    }
    eval_raise(cx, CR_EPY_TYPE, at, "unsupported format string passed to %s.__format__",
               eval_type_name(v));
    return -1;
}

/* KeyError(name) for a replacement field naming no argument. */
static void field_key_error(eval_cx *cx, const char *f, size_t nl, const ir_node *at)
{
    val *k = eval_str(cx, f, nl);
    if (k) eval_key_error(cx, k, at);
    eval_decref(cx, k);
}

/* One replacement field of str.format: "name!conv:spec" between the braces. */
static int format_one(eval_cx *cx, cr_buf *b, const char *f, size_t n, eval_args *a,
                      size_t *autoi, int *mode, const ir_node *at, int depth)
{
    size_t i = 0;
    while (i < n && f[i] != '!' && f[i] != ':' && f[i] != '[' && f[i] != '.') i++;
    size_t nl = i;
    val *v = NULL;
    if (nl == 0) {
        if (*mode == 2) {
            eval_raise(cx, CR_EPY_VALUE, at,
                       "cannot switch from manual field specification to automatic field "
                       "numbering");
            return -1;
        }
        *mode = 1;
        if (*autoi >= a->npos) {
            eval_raise(cx, CR_EPY_INDEX, at,
                       "Replacement index %zu out of range for positional args tuple", *autoi);
            return -1;
        }
        v = a->pos[(*autoi)++];
    } else if (f[0] >= '0' && f[0] <= '9') {
        if (*mode == 1) {
            eval_raise(cx, CR_EPY_VALUE, at,
                       "cannot switch from automatic field numbering to manual field "
                       "specification");
            return -1;
        }
        *mode = 2;
        size_t k = 0;
        for (size_t j = 0; j < nl; j++) {
            if (f[j] < '0' || f[j] > '9' || k > 100000000) {
                field_key_error(cx, f, nl, at);
                return -1;
            }
            k = k * 10 + (size_t)(f[j] - '0');
        }
        if (k >= a->npos) {
            eval_raise(cx, CR_EPY_INDEX, at,
                       "Replacement index %zu out of range for positional args tuple", k);
            return -1;
        }
        v = a->pos[k];
    } else {
        for (size_t j = 0; j < a->nkw && !v; j++)
            if (strlen(a->kwname[j]) == nl && memcmp(a->kwname[j], f, nl) == 0) v = a->kw[j];
        if (!v) {
            field_key_error(cx, f, nl, at);
            return -1;
        }
    }
    EV_INCREF(v);
    /* v[key] and v[index] lookups, as "{0[1]}" and "{d[name]}" */
    while (i < n && f[i] == '[') {
        size_t j = i + 1;
        while (j < n && f[j] != ']') j++;
        if (j >= n) {
            eval_decref(cx, v);
            eval_raise(cx, CR_EPY_VALUE, at, "expected '}' before end of string");
            return -1;
        }
        val *k;
        int digits = j > i + 1;
        for (size_t q = i + 1; q < j; q++) digits &= f[q] >= '0' && f[q] <= '9';
        if (digits && j - i - 1 < 15) {
            char tmp[16];
            memcpy(tmp, f + i + 1, j - i - 1);
            tmp[j - i - 1] = '\0';
            k = eval_int_si(cx, atol(tmp));
        } else {
            k = eval_str(cx, f + i + 1, j - i - 1);
        }
        val *nv = NULL;
        if (k) {
            if (v->kind == V_DICT) {
                int err;
                nv = eval_dict_get(cx, v, k, &err);
                if (nv) EV_INCREF(nv);
                else if (!err) eval_key_error(cx, k, at);
            } else if ((v->kind == V_LIST || v->kind == V_TUPLE) && k->kind == V_INT &&
                       mpz_fits_ulong_p(mpq_numref(k->u.q)) &&
                       mpz_get_ui(mpq_numref(k->u.q)) < v->u.seq.len) {
                nv = v->u.seq.it[mpz_get_ui(mpq_numref(k->u.q))];
                EV_INCREF(nv);
            } else {
                eval_raise(cx, CR_EPY_INDEX, at, "%s index out of range", eval_type_name(v));
            }
        }
        eval_decref(cx, k);
        eval_decref(cx, v);
        if (!(v = nv)) return -1;
        i = j + 1;
    }
    if (i < n && f[i] == '.') {
        eval_decref(cx, v);
        eval_raise(cx, CR_EPY_ATTRIBUTE, at, "attribute lookup in format fields is not supported");
        return -1;
    }
    if (i < n && f[i] == '!') {
        if (i + 1 >= n || (f[i + 1] != 'r' && f[i + 1] != 's' && f[i + 1] != 'a')) {
            eval_decref(cx, v);
            eval_raise(cx, CR_EPY_VALUE, at, "Unknown conversion specifier %c",
                       i + 1 < n ? f[i + 1] : '?');
            return -1;
        }
        val *s = eval_to_str(cx, v, f[i + 1] == 'a' ? EVAL_ASCII : f[i + 1] == 'r');
        eval_decref(cx, v);
        if (!(v = s)) return -1;
        i += 2;
    }
    const char *spec = "";
    size_t sl = 0;
    cr_buf sb;
    cr_buf_init(&sb, 4096);
    if (i < n && f[i] == ':') {
        spec = f + i + 1;
        sl = n - i - 1;
        if (memchr(spec, '{', sl)) {
            /* nested fields in the spec: "{:{w}.{p}f}" */
            if (depth > 1) {
                eval_decref(cx, v);
                eval_raise(cx, CR_EPY_VALUE, at, "Max string recursion exceeded");
                return -1;
            }
            for (size_t j = 0; j < sl;) {
                if (spec[j] == '{') {
                    size_t q = j + 1;
                    while (q < sl && spec[q] != '}') q++;
                    if (format_one(cx, &sb, spec + j + 1, q - j - 1, a, autoi, mode, at,
                                   depth + 1) < 0) {
                        cr_buf_free(&sb);
                        eval_decref(cx, v);
                        return -1;
                    }
                    j = q + 1;
                } else {
                    cr_buf_putc(&sb, spec[j++]);
                }
            }
            spec = sb.p ? sb.p : "";
            sl = sb.len;
        }
    } else if (i < n) {
        eval_decref(cx, v);
        eval_raise(cx, CR_EPY_VALUE, at, "expected ':' after conversion specifier");
        return -1;
    }
    int rc = eval_format(cx, b, v, spec, sl, at);
    cr_buf_free(&sb);
    eval_decref(cx, v);
    return rc;
}

static val *str_format(eval_cx *cx, val *self, eval_args *a, const ir_node *at)
{
    const char *s = self->u.str.s;
    size_t n = self->u.str.len, i = 0, autoi = 0;
    int mode = 0, inexact = 0;
    cr_buf b;
    cr_buf_init(&b, cx->lim->max_str_len);
    for (size_t k = 0; k < a->npos + a->nkw; k++) {
        int r = eval_inexact(cx, k < a->npos ? a->pos[k] : a->kw[k - a->npos]);
        if (r < 0) goto fail;
        inexact |= r;
    }
    while (i < n) {
        char c = s[i];
        if (c == '{' && i + 1 < n && s[i + 1] == '{') { cr_buf_putc(&b, '{'); i += 2; continue; }
        if (c == '}' && i + 1 < n && s[i + 1] == '}') { cr_buf_putc(&b, '}'); i += 2; continue; }
        if (c == '}') {
            eval_raise(cx, CR_EPY_VALUE, at, "Single '}' encountered in format string");
            goto fail;
        }
        if (c != '{') {
            size_t j = i;
            while (j < n && s[j] != '{' && s[j] != '}') j++;
            if (eval_put(cx, &b, s + i, j - i) < 0) goto fail;
            i = j;
            continue;
        }
        size_t j = i + 1;
        int lvl = 1;
        while (j < n && lvl) {
            if (s[j] == '{') lvl++;
            else if (s[j] == '}') lvl--;
            if (lvl) j++;
        }
        if (j >= n) {
            eval_raise(cx, CR_EPY_VALUE, at, "%s",
                       i + 1 >= n ? "Single '{' encountered in format string"
                                  : "expected '}' before end of string");
            goto fail;
        }
        if (eval_count(cx, 1, at) < 0 ||
            format_one(cx, &b, s + i + 1, j - i - 1, a, &autoi, &mode, at, 0) < 0)
            goto fail;
        i = j + 1;
    }
    val *r = eval_str_buf(cx, &b);
    if (r && inexact && r->rc == 1) r->flags |= VF_INEXACT;
    return r;
fail:
    cr_buf_free(&b);
    return NULL;
}

/* A `*` width or precision of "%*.*f" % (w, p, x): the next argument, an int. 0, or -1
 * raised. */
static int percent_star(eval_cx *cx, val **av, size_t na, size_t *ai, int64_t *out,
                        const ir_node *at)
{
    if (*ai >= na) {
        eval_raise(cx, CR_EPY_TYPE, at, "not enough arguments for format string");
        return -1;
    }
    val *v = av[(*ai)++];
    if (v->kind != V_INT && v->kind != V_BOOL) {
        eval_raise(cx, CR_EPY_TYPE, at, "* wants int");
        return -1;
    }
    if (!mpz_fits_slong_p(mpq_numref(v->u.q))) {
        eval_raise(cx, CR_EPY_OVERFLOW, at, "Python int too large to convert to C ssize_t");
        return -1;
    }
    *out = mpz_get_si(mpq_numref(v->u.q));
    return 0;
}

/* %c's argument as a one-character string (new reference), or NULL raised. */
static val *percent_char(eval_cx *cx, val *v, const ir_node *at)
{
    if (v->kind == V_STR && v->u.str.nch == 1) {
        EV_INCREF(v);
        return v;
    }
    if (v->kind != V_INT && v->kind != V_BOOL)
        return eval_raise(cx, CR_EPY_TYPE, at, "%%c requires int or char");
    mpz_srcptr z = mpq_numref(v->u.q);
    if (mpz_sgn(z) < 0 || mpz_cmp_ui(z, 0x10FFFF) > 0)
        return eval_raise(cx, CR_EPY_OVERFLOW, at, "%%c arg not in range(0x110000)");
    uint8_t u[6];
    int k = u8_uctomb(u, (ucs4_t)mpz_get_ui(z), sizeof u);
    return k > 0 ? eval_str(cx, (const char *)u, (size_t)k)
                 : eval_raise(cx, CR_EPY_VALUE, at, "%%c arg is a surrogate");
}

/* printf-style "%.2f" % x, translated to format specs. `args` that can be subscripted (a
 * dict, list or range, as CPython's mapping test) is one argument, and `%(key)s` takes
 * args[key]; after a key the one argument left is that value. */
val *eval_str_percent(eval_cx *cx, val *fmt, val *args, const ir_node *at)
{
    const char *s = fmt->u.str.s;
    size_t n = fmt->u.str.len, i = 0, ai = 0;
    val **av = &args, *keyed = NULL, *conv = NULL;
    size_t na = 1;
    int mapping = args->kind == V_DICT || args->kind == V_LIST || args->kind == V_RANGE;
    int inexact = eval_inexact(cx, args);
    if (inexact < 0) return NULL;
    if (args->kind == V_TUPLE) {
        av = args->u.seq.it;
        na = args->u.seq.len;
    }
    cr_buf b;
    cr_buf_init(&b, cx->lim->max_str_len);
    while (i < n) {
        if (s[i] != '%') {
            size_t j = i;
            while (j < n && s[j] != '%') j++;
            if (eval_put(cx, &b, s + i, j - i) < 0) goto fail;
            i = j;
            continue;
        }
        i++;
        if (i < n && s[i] == '%') { cr_buf_putc(&b, '%'); i++; continue; }
        char spec[64], flags[8];
        size_t nf = 0, sp = 0;
        int64_t width = -1, prec = -1;
        if (i < n && s[i] == '(') {
            size_t ks = ++i, depth = 1;
            if (!mapping) {
                eval_raise(cx, CR_EPY_TYPE, at, "format requires a mapping");
                goto fail;
            }
            for (; i < n && depth; i++) depth += s[i] == '(' ? 1 : s[i] == ')' ? -1 : 0;
            if (depth) {
                eval_raise(cx, CR_EPY_VALUE, at, "incomplete format key");
                goto fail;
            }
            val *key = eval_str(cx, s + ks, i - 1 - ks);
            if (!key) goto fail;
            eval_decref(cx, keyed);
            keyed = eval_get_item(cx, args, key, at);
            eval_decref(cx, key);
            if (!keyed) goto fail;
            av = &keyed;
            na = 1;
            ai = 0;
        }
        while (i < n && strchr("-+ 0#", s[i]) && nf < sizeof flags - 1) flags[nf++] = s[i++];
        flags[nf] = '\0';
        size_t ws = i;
        if (i < n && s[i] == '*') {
            if (percent_star(cx, av, na, &ai, &width, at) < 0) goto fail;
            i++;
        } else {
            while (i < n && s[i] >= '0' && s[i] <= '9') i++;
            if (i - ws > 6) width = 10000000;   /* past the format's limit, which raises */
            else if (i > ws) width = atol(s + ws);
        }
        if (i < n && s[i] == '.') {
            size_t ps = ++i;
            if (i < n && s[i] == '*') {
                if (percent_star(cx, av, na, &ai, &prec, at) < 0) goto fail;
                i++;
            } else {
                while (i < n && s[i] >= '0' && s[i] <= '9') i++;
                prec = i - ps > 6 ? 10000000 : atol(s + ps);
            }
            if (prec < 0) prec = 0;
        }
        while (i < n && strchr("hlL", s[i])) i++;   /* C's length modifiers: ignored */
        if (i >= n) {
            eval_raise(cx, CR_EPY_VALUE, at, "incomplete format");
            goto fail;
        }
        char t = s[i++];
        if (ai >= na) {
            eval_raise(cx, CR_EPY_TYPE, at, "not enough arguments for format string");
            goto fail;
        }
        val *v = av[ai++];
        int left = strchr(flags, '-') != NULL || width < -1;
        if (width < -1) width = width < -10000000 ? 10000000 : -width;   /* "%*d" % (-5, x) */
        if (left) spec[sp++] = '<';
        else if (t == 's' || t == 'r' || t == 'a' || t == 'c') spec[sp++] = '>';
        if (strchr(flags, '+')) spec[sp++] = '+';
        else if (strchr(flags, ' ')) spec[sp++] = ' ';
        if (strchr(flags, '#')) spec[sp++] = '#';
        if (strchr(flags, '0') && !left && !strchr("srac", t)) spec[sp++] = '0';
        /* a width or precision past 10^7 is cut there: the format's own limit raises */
        if (width > 10000000) width = 10000000;
        if (prec > 10000000) prec = 10000000;
        if (width >= 0) sp += (size_t)snprintf(spec + sp, 16, "%ld", (long)width);
        if (prec >= 0 && t != 'c') sp += (size_t)snprintf(spec + sp, 16, ".%ld", (long)prec);
        int rc;
        if (t == 's' || t == 'r' || t == 'a' || t == 'c') {
            val *str = t == 'c' ? percent_char(cx, v, at)
                                : eval_to_str(cx, v, t == 'a' ? EVAL_ASCII : t == 'r');
            if (!str) goto fail;
            rc = eval_format(cx, &b, str, spec, sp, at);
            eval_decref(cx, str);
        } else if (strchr("dieEfFgGxXo", t)) {
            int want_int = strchr("xXo", t) != NULL;
            if (v->kind == V_OBJ && v->u.obj.cls->builtin && !want_int) {
                /* a number-like object (a Decimal) formats as its float(), as in CPython */
                eval_args one = { .pos = &v, .npos = 1 };
                eval_decref(cx, conv);
                conv = v->u.obj.cls->builtin(cx, B_FLOAT, v, &one, at);
                if (cx->err.code != CR_OK) goto fail;
                if (conv) v = conv;
            }
            if (!IS_REAL(v) || (want_int && v->kind != V_INT && v->kind != V_BOOL)) {
                eval_raise(cx, CR_EPY_TYPE, at, "%%%c format: %s is required, not %s", t,
                           strchr("xXo", t) ? "an integer" : "a real number", eval_type_name(v));
                goto fail;
            }
            if ((t == 'd' || t == 'i') && v->kind == V_INF) {
                inf_error(cx, v, at);
                goto fail;
            }
            if (strchr("dixXo", t)) {
                val *iv = eval_num(cx, V_INT);
                if (!iv) goto fail;
                num_trunc(mpq_numref(iv->u.q), eval_decided(cx, v, 0));
                mpz_set_ui(mpq_denref(iv->u.q), 1);
                spec[sp++] = t == 'i' ? 'd' : t;
                rc = eval_format(cx, &b, iv, spec, sp, at);
                eval_decref(cx, iv);
            } else {
                if (strchr("eEfFgG", t) && prec < 0) {
                    memcpy(spec + sp, ".6", 2);
                    sp += 2;
                }
                spec[sp++] = t;
                if (v->kind == V_INF) {
                    rc = eval_format(cx, &b, v, spec, sp, at);
                } else {
                    val *fv = eval_num(cx, V_FLOAT);
                    if (!fv) goto fail;
                    mpq_set(fv->u.q, v->u.q);
                    rc = eval_format(cx, &b, fv, spec, sp, at);
                    eval_decref(cx, fv);
                }
            }
        } else {
            eval_raise(cx, CR_EPY_VALUE, at, "unsupported format character '%c' (0x%x) at index %zu",
                       t, (unsigned char)t, i - 1);
            goto fail;
        }
        if (rc < 0) goto fail;
    }
    if (ai < na && !mapping) {
        eval_raise(cx, CR_EPY_TYPE, at, "not all arguments converted during string formatting");
        goto fail;
    }
    eval_decref(cx, keyed);
    eval_decref(cx, conv);
    val *r = eval_str_buf(cx, &b);
    if (r && inexact && r->rc == 1) r->flags |= VF_INEXACT;
    return r;
fail:
    eval_decref(cx, keyed);
    eval_decref(cx, conv);
    cr_buf_free(&b);
    return NULL;
}

/* ---- methods --------------------------------------------------------------------------- */

/* Bytes of the UTF-8 character starting at s (n > 0), and of the one ending at s + n. */
static size_t char_len(const char *s, size_t n)
{
    size_t k = 1;
    while (k < n && ((unsigned char)s[k] & 0xC0) == 0x80) k++;
    return k;
}

static size_t char_len_back(const char *s, size_t n)
{
    size_t k = 1;
    while (k < n && ((unsigned char)s[n - k] & 0xC0) == 0x80) k++;
    return k;
}

/* Bytes of the whitespace character at s[0..n) by str.isspace()'s rule (Unicode White_Space
 * and the separators U+001C..U+001F), 0 for any other; back: the one ending at s + n. */
static size_t space_at(const char *s, size_t n, int back)
{
    if (!n) return 0;
    size_t k = back ? char_len_back(s, n) : char_len(s, n);
    const uint8_t *u = (const uint8_t *)s + (back ? n - k : 0);
    ucs4_t c = u[0];
    if (k > 1 && u8_mbtouc(&c, u, k) != (int)k) return 0;
    return uc_is_property_white_space(c) || (c >= 0x1C && c <= 0x1F) ? k : 0;
}

/* Whether the character c (k bytes) is one of the characters of cs. */
static int in_chars(const char *cs, size_t cn, const char *c, size_t k)
{
    for (size_t i = 0; i < cn; i += char_len(cs + i, cn - i))
        if (char_len(cs + i, cn - i) == k && memcmp(cs + i, c, k) == 0) return 1;
    return 0;
}

static val *str_strip(eval_cx *cx, val *self, eval_args *a, int which, const ir_node *at)
{
    if (check(cx, a, 0, 1, NULL, eval_method_name(which), at) < 0) return NULL;
    val *chars = a->npos ? a->pos[0] : NULL;
    if (chars && chars->kind == V_NONE) chars = NULL;
    if (chars && chars->kind != V_STR)
        return eval_raise(cx, CR_EPY_TYPE, at, "%s arg must be None or str", eval_method_name(which));
    const char *s = self->u.str.s;
    size_t lo = 0, hi = self->u.str.len;
    size_t k;
    if (!chars) {
        if (eval_walk(cx, 0, hi, at) < 0) return NULL;
        if (which != MT_RSTRIP)
            while ((k = space_at(s + lo, hi - lo, 0))) lo += k;
        if (which != MT_LSTRIP)
            while ((k = space_at(s + lo, hi - lo, 1))) hi -= k;
        return eval_str(cx, s + lo, hi - lo);
    }
    /* a character is stripped when it is one of chars' characters, whole. ASCII ones are
     * looked up in a table (a search of chars for each made a long chars quadratic); a
     * non-ASCII one searches chars, and is charged for it. */
    const char *cs = chars->u.str.s;
    size_t cn = chars->u.str.len;
    unsigned char ascii[128] = { 0 };
    int wide = 0, bad = 0;
    if (eval_walk(cx, 0, cn + hi, at) < 0) return NULL;
    for (size_t i = 0; i < cn; i++) {
        unsigned char c = (unsigned char)cs[i];
        if (c < 128) ascii[c] = 1; else wide = 1;
    }
#define STRIPPABLE(p, k) ((k) == 1 && (unsigned char)*(p) < 128 ? ascii[(unsigned char)*(p)] : \
    wide && !(bad = eval_walk(cx, 0, cn, at) < 0) && in_chars(cs, cn, p, k))
    if (which != MT_RSTRIP)
        while (lo < hi && (k = char_len(s + lo, hi - lo)) && STRIPPABLE(s + lo, k)) lo += k;
    if (which != MT_LSTRIP)
        while (hi > lo && (k = char_len_back(s + lo, hi - lo)) && STRIPPABLE(s + hi - k, k))
            hi -= k;
#undef STRIPPABLE
    if (bad) return NULL;
    return eval_str(cx, s + lo, hi - lo);
}

static val *str_split(eval_cx *cx, val *self, eval_args *a, const ir_node *at)
{
    static const char *const kws[] = { "sep", "maxsplit", NULL };
    if (check(cx, a, 0, 2, kws, "split", at) < 0) return NULL;
    val *sep = a->npos ? a->pos[0] : kwarg(a, "sep"), *ms = a->npos > 1 ? a->pos[1]
                                                                          : kwarg(a, "maxsplit");
    int64_t max = -1;
    if (ms && eval_int_of(cx, ms, &max) < 0) return NULL;
    if (sep && sep->kind == V_NONE) sep = NULL;
    if (sep && sep->kind != V_STR)
        return eval_raise(cx, CR_EPY_TYPE, at, "must be str or None, not %s", eval_type_name(sep));
    if (sep && sep->u.str.len == 0) return eval_raise(cx, CR_EPY_VALUE, at, "empty separator");
    if (eval_walk(cx, 0, self->u.str.len, at) < 0) return NULL;
    val *l = eval_seq_new(cx, V_LIST, 0);
    if (!l) return NULL;
    const char *s = self->u.str.s;
    size_t n = self->u.str.len, i = 0;
    int64_t done = 0;
    if (!sep) {
        size_t k;
        for (;;) {
            while ((k = space_at(s + i, n - i, 0))) i += k;
            if (i >= n) break;
            size_t j = i;
            if (max >= 0 && done >= max) {
                j = n;
                while ((k = space_at(s + i, j - i, 1))) j -= k;
            } else {
                while (j < n && !space_at(s + j, n - j, 0)) j += char_len(s + j, n - j);
            }
            val *p = eval_str(cx, s + i, j - i);
            if (!p || eval_seq_push(cx, l, p) < 0 || eval_count(cx, 1, at) < 0) goto fail;
            done++;
            i = j;
        }
        return l;
    }
    for (;;) {
        const char *hit = (max < 0 || done < max)
                              ? memmem(s + i, n - i, sep->u.str.s, sep->u.str.len) : NULL;
        size_t j = hit ? (size_t)(hit - s) : n;
        val *p = eval_str(cx, s + i, j - i);
        if (!p || eval_seq_push(cx, l, p) < 0 || eval_count(cx, 1, at) < 0) goto fail;
        if (!hit) break;
        done++;
        i = j + sep->u.str.len;
    }
    return l;
fail:
    eval_decref(cx, l);
    return NULL;
}

static val *str_join(eval_cx *cx, val *self, eval_args *a, const ir_node *at)
{
    if (check(cx, a, 1, 1, NULL, "join", at) < 0) return NULL;
    val *l = items_of(cx, a->pos[0], at);
    if (!l) return NULL;
    cr_buf b;
    cr_buf_init(&b, cx->lim->max_str_len);
    int inexact = 0;
    for (size_t i = 0; i < l->u.seq.len; i++) {
        val *x = l->u.seq.it[i];
        if (x->kind != V_STR) {
            eval_raise(cx, CR_EPY_TYPE, at, "sequence item %zu: expected str instance, %s found",
                       i, eval_type_name(x));
            goto fail;
        }
        inexact |= x->flags & VF_INEXACT;
        if (eval_walk(cx, 1, self->u.str.len + x->u.str.len, at) < 0) goto fail;
        if ((i && eval_put(cx, &b, self->u.str.s, self->u.str.len) < 0) ||
            eval_put(cx, &b, x->u.str.s, x->u.str.len) < 0)
            goto fail;
    }
    eval_decref(cx, l);
    val *r = eval_str_buf(cx, &b);
    if (r && inexact && r->rc == 1) r->flags |= VF_INEXACT;
    return r;
fail:
    eval_decref(cx, l);
    cr_buf_free(&b);
    return NULL;
}

static val *str_replace(eval_cx *cx, val *self, eval_args *a, const ir_node *at)
{
    if (check(cx, a, 2, 3, NULL, "replace", at) < 0) return NULL;
    for (int k = 0; k < 2; k++)
        if (a->pos[k]->kind != V_STR)
            return eval_raise(cx, CR_EPY_TYPE, at, "replace() argument %d must be str, not %s",
                              k + 1, eval_type_name(a->pos[k]));
    int64_t count = -1;
    if (a->npos > 2 && eval_int_of(cx, a->pos[2], &count) < 0) return NULL;
    val *o = a->pos[0], *nw = a->pos[1];
    const char *s = self->u.str.s;
    size_t n = self->u.str.len, i = 0;
    if (eval_walk(cx, 0, n, at) < 0) return NULL;
    cr_buf b;
    cr_buf_init(&b, cx->lim->max_str_len);
    int64_t done = 0;
    if (o->u.str.len == 0) {
        /* an empty pattern matches between every two characters */
        while (i <= n) {
            if (count < 0 || done < count) {
                if (eval_put(cx, &b, nw->u.str.s, nw->u.str.len) < 0) goto fail;
                done++;
            }
            if (i == n) break;
            size_t j = i + 1;
            while (j < n && ((unsigned char)s[j] & 0xC0) == 0x80) j++;
            if (eval_put(cx, &b, s + i, j - i) < 0 || eval_count(cx, 1, at) < 0) goto fail;
            i = j;
        }
        return eval_str_buf(cx, &b);
    }
    for (;;) {
        const char *hit = (count < 0 || done < count)
                              ? memmem(s + i, n - i, o->u.str.s, o->u.str.len) : NULL;
        size_t j = hit ? (size_t)(hit - s) : n;
        if (eval_put(cx, &b, s + i, j - i) < 0) goto fail;
        if (!hit) break;
        if (eval_put(cx, &b, nw->u.str.s, nw->u.str.len) < 0 || eval_count(cx, 1, at) < 0)
            goto fail;
        done++;
        i = j + o->u.str.len;
    }
    return eval_str_buf(cx, &b);
fail:
    cr_buf_free(&b);
    return NULL;
}

static val *str_affix(eval_cx *cx, val *self, eval_args *a, int ends, const ir_node *at)
{
    const char *name = ends ? "endswith" : "startswith";
    if (check(cx, a, 1, 3, NULL, name, at) < 0) return NULL;
    val *p = a->pos[0];
    int64_t lo = 0, hi = (int64_t)self->u.str.nch;
    if (a->npos > 1 && a->pos[1]->kind != V_NONE && eval_int_of(cx, a->pos[1], &lo) < 0)
        return NULL;
    if (a->npos > 2 && a->pos[2]->kind != V_NONE && eval_int_of(cx, a->pos[2], &hi) < 0)
        return NULL;
    int64_t len = (int64_t)self->u.str.nch;
    if (self->u.str.nch != self->u.str.len && eval_walk(cx, 0, self->u.str.len, at) < 0)
        return NULL;
    if (lo < 0) lo = lo + len < 0 ? 0 : lo + len;
    if (hi < 0) hi = hi + len < 0 ? 0 : hi + len;
    if (hi > len) hi = len;
    if (lo > len) return eval_bool(cx, 0);
    size_t bl = eval_utf8_index(self, (size_t)lo), bh = hi < lo ? bl : eval_utf8_index(self, (size_t)hi);
    val **cand = &p;
    size_t nc = 1;
    if (p->kind == V_TUPLE) {
        cand = p->u.seq.it;
        nc = p->u.seq.len;
    }
    for (size_t k = 0; k < nc; k++) {
        val *c = cand[k];
        if (c->kind != V_STR)
            return eval_raise(cx, CR_EPY_TYPE, at,
                              "%s first arg must be str or a tuple of str, not %s", name,
                              eval_type_name(c));
        size_t cl = c->u.str.len;
        if (eval_walk(cx, 1, cl, at) < 0) return NULL;
        if (cl > bh - bl) continue;
        const char *at_ = ends ? self->u.str.s + bh - cl : self->u.str.s + bl;
        if (memcmp(at_, c->u.str.s, cl) == 0) return eval_bool(cx, 1);
    }
    return eval_bool(cx, 0);
}

/* Python's case mappings on UTF-8 through libunistring: full mappings ('straße'.upper() is
 * 'STRASSE', 'İ'.lower() is 'i̇') with Final_Sigma. title() and capitalize() title-case
 * the first character of each run of cased characters (Python's rule, not Unicode's word
 * breaks: "they're".title() is "They'Re"), one character at a time, and lower-case the
 * rest of the run with the text around it as context. */
static int case_piece(eval_cx *cx, cr_buf *b, const uint8_t *s, size_t n, size_t lo, size_t hi,
                      int id, const ir_node *at)
{
    size_t len = 0;
    uint8_t *m;
    casing_prefix_context_t pre = unicase_empty_prefix_context;
    casing_suffix_context_t suf = unicase_empty_suffix_context;
    if (id != MT_TITLE) {
        pre = u8_casing_prefix_context(s, lo);
        suf = u8_casing_suffix_context(s + hi, n - hi);
    }
    switch (id) {
    case MT_UPPER: m = u8_ct_toupper(s + lo, hi - lo, pre, suf, NULL, NULL, NULL, &len); break;
    case MT_TITLE: m = u8_ct_totitle(s + lo, hi - lo, pre, suf, NULL, NULL, NULL, &len); break;
    default: m = u8_ct_tolower(s + lo, hi - lo, pre, suf, NULL, NULL, NULL, &len); break;
    }
    if (!m) {
        eval_raise(cx, CR_ENOMEM, at, "out of memory");
        return -1;
    }
    int rc = eval_put(cx, b, (const char *)m, len);
    free(m);
    return rc;
}

static val *str_case(eval_cx *cx, val *self, int id, eval_args *a, const ir_node *at)
{
    if (check(cx, a, 0, 0, NULL, eval_method_name(id), at) < 0) return NULL;
    const uint8_t *s = (const uint8_t *)self->u.str.s;
    size_t n = self->u.str.len;
    if (eval_walk(cx, 0, n, at) < 0 || eval_mem_room(cx, n + 1) < 0) return NULL;
    cr_buf b;
    cr_buf_init(&b, cx->lim->max_str_len);
    if (id == MT_UPPER || id == MT_LOWER) {
        if (n && case_piece(cx, &b, s, n, 0, n, id, at) < 0) goto fail;
        return eval_str_buf(cx, &b);
    }
    /* title(): a character after a cased one is lowered, any other titled; capitalize():
     * the first character titled, the rest lowered. Runs of lowered characters go whole. */
    int prev_cased = 0;
    size_t run = 0, i = 0;
    while (i < n) {
        ucs4_t c;
        int k = u8_mbtouc(&c, s + i, n - i);
        int lower = id == MT_CAPITALIZE ? i > 0 : prev_cased;
        if (!lower) {
            if ((run < i && case_piece(cx, &b, s, n, run, i, MT_LOWER, at) < 0) ||
                case_piece(cx, &b, s, n, i, i + (size_t)k, MT_TITLE, at) < 0)
                goto fail;
            run = i + (size_t)k;
        }
        prev_cased = uc_is_property_cased(c);
        i += (size_t)k;
    }
    if (run < n && case_piece(cx, &b, s, n, run, n, MT_LOWER, at) < 0) goto fail;
    return eval_str_buf(cx, &b);
fail:
    cr_buf_free(&b);
    return NULL;
}

static val *str_zfill(eval_cx *cx, val *self, eval_args *a, const ir_node *at)
{
    int64_t w;
    if (check(cx, a, 1, 1, NULL, "zfill", at) < 0 || eval_int_of(cx, a->pos[0], &w) < 0)
        return NULL;
    size_t n = self->u.str.nch;
    if (w <= (int64_t)n) { EV_INCREF(self); return self; }
    if ((uint64_t)w > cx->lim->max_str_len)
        return eval_raise(cx, CR_ELIMIT, at, "string length limit (%llu characters)",
                          (unsigned long long)cx->lim->max_str_len);
    size_t pad = (size_t)w - n, bl = self->u.str.len;
    if (eval_mem_room(cx, bl + pad + 1) < 0) return NULL;
    char *p = malloc(bl + pad + 1);
    if (!p) return eval_raise(cx, CR_ENOMEM, at, "out of memory");
    const char *s = self->u.str.s;
    size_t sign = bl && (s[0] == '+' || s[0] == '-');
    memcpy(p, s, sign);
    memset(p + sign, '0', pad);
    memcpy(p + sign + pad, s + sign, bl - sign);
    p[bl + pad] = '\0';
    return eval_str_take(cx, p, bl + pad);
}

static val *seq_index_count(eval_cx *cx, val *self, int id, eval_args *a, const ir_node *at)
{
    const char *name = eval_method_name(id);
    if (check(cx, a, 1, id == MT_INDEX ? 3 : (self->kind == V_STR ? 3 : 1), NULL, name, at) < 0)
        return NULL;
    val *x = a->pos[0];
    if (self->kind == V_STR) {
        if (x->kind != V_STR)
            return eval_raise(cx, CR_EPY_TYPE, at, "must be str, not %s", eval_type_name(x));
        const char *s = self->u.str.s;
        size_t n = self->u.str.len;
        if (eval_walk(cx, 0, n + x->u.str.len, at) < 0) return NULL;
        if (id == MT_COUNT) {
            long c = 0;
            if (!x->u.str.len) return eval_int_si(cx, (long)self->u.str.nch + 1);
            for (size_t i = 0; i + x->u.str.len <= n;) {
                const char *h = memmem(s + i, n - i, x->u.str.s, x->u.str.len);
                if (!h) break;
                c++;
                i = (size_t)(h - s) + x->u.str.len;
            }
            return eval_int_si(cx, c);
        }
        const char *h = memmem(s, n, x->u.str.s, x->u.str.len);
        if (!h) return eval_raise(cx, CR_EPY_VALUE, at, "substring not found");
        size_t ci = 0;
        for (const char *q = s; q < h; q++) ci += ((unsigned char)*q & 0xC0) != 0x80;
        return eval_int_si(cx, (long)ci);
    }
    long c = 0;
    for (size_t i = 0; i < self->u.seq.len; i++) {
        if (eval_count(cx, 1, at) < 0) return NULL;
        int r = eval_eq(cx, self->u.seq.it[i], x);
        if (r < 0) return NULL;
        if (r && id == MT_INDEX) return eval_int_si(cx, (long)i);
        c += r;
    }
    if (id == MT_COUNT) return eval_int_si(cx, c);
    val *s = eval_to_str(cx, x, 1);
    if (!s) return NULL;
    eval_raise(cx, CR_EPY_VALUE, at, "%s is not in %s", s->u.str.s,
               self->kind == V_LIST ? "list" : "tuple");
    eval_decref(cx, s);
    return NULL;
}

/* A view holds no items: its readers walk the dict (eval_iter, contains, repr). */
static val *dict_view(eval_cx *cx, val *d, int sub)
{
    val *r = eval_new(cx, V_ITER);
    if (!r) return NULL;
    r->sub = (uint16_t)sub;
    r->u.itr.dict = d;
    EV_INCREF(d);
    return r;
}

static val *copy_of(eval_cx *cx, val *self)
{
    if (self->kind == V_LIST) return eval_list_of(cx, self, V_LIST);
    if (eval_walk(cx, self->u.d.used, 0, NULL) < 0) return NULL;
    val *d = eval_dict_new(cx, (vkind)self->kind);
    if (!d) return NULL;
    for (size_t i = 0; i < self->u.d.used; i++) {
        dict_ent *e = &self->u.d.ent[i];
        if (!e->key) continue;
        EV_INCREF(e->key);
        if (e->value) EV_INCREF(e->value);
        if (eval_dict_set(cx, d, e->key, e->value) < 0) { eval_decref(cx, d); return NULL; }
    }
    return d;
}

static val *list_method(eval_cx *cx, val *self, int id, eval_args *a, const ir_node *at)
{
    const char *name = eval_method_name(id);
    int64_t i;
    switch (id) {
    case MT_APPEND:
        if (check(cx, a, 1, 1, NULL, name, at) < 0) return NULL;
        EV_INCREF(a->pos[0]);
        return eval_seq_push(cx, self, a->pos[0]) < 0 ? NULL : eval_none(cx);
    case MT_EXTEND: {
        if (check(cx, a, 1, 1, NULL, name, at) < 0) return NULL;
        val *l = items_of(cx, a->pos[0], at);
        if (!l) return NULL;
        if (eval_walk(cx, l->u.seq.len, 0, at) < 0) { eval_decref(cx, l); return NULL; }
        for (size_t k = 0; k < l->u.seq.len; k++) {
            EV_INCREF(l->u.seq.it[k]);
            if (eval_seq_push(cx, self, l->u.seq.it[k]) < 0) { eval_decref(cx, l); return NULL; }
        }
        eval_decref(cx, l);
        return eval_none(cx);
    }
    case MT_INSERT: {
        if (a->npos != 2)
            return eval_raise(cx, CR_EPY_TYPE, at, "insert expected 2 arguments, got %zu", a->npos);
        if (eval_int_of(cx, a->pos[0], &i) < 0) return NULL;
        int64_t n = (int64_t)self->u.seq.len;
        if (i < 0) i = i + n < 0 ? 0 : i + n;
        if (i > n) i = n;
        if (eval_walk(cx, 0, (uint64_t)(n - i) * sizeof(val *), at) < 0) return NULL;
        EV_INCREF(a->pos[1]);
        if (eval_seq_push(cx, self, a->pos[1]) < 0) return NULL;
        memmove(self->u.seq.it + i + 1, self->u.seq.it + i, (size_t)(n - i) * sizeof(val *));
        self->u.seq.it[i] = a->pos[1];
        return eval_none(cx);
    }
    case MT_POP: {
        if (check(cx, a, 0, 1, NULL, name, at) < 0) return NULL;
        int64_t n = (int64_t)self->u.seq.len;
        i = -1;
        if (a->npos && eval_int_of(cx, a->pos[0], &i) < 0) return NULL;
        if (n == 0) return eval_raise(cx, CR_EPY_INDEX, at, "pop from empty list");
        if (i < 0) i += n;
        if (i < 0 || i >= n) return eval_raise(cx, CR_EPY_INDEX, at, "pop index out of range");
        if (eval_walk(cx, 0, (uint64_t)(n - i - 1) * sizeof(val *), at) < 0) return NULL;
        val *r = self->u.seq.it[i];
        memmove(self->u.seq.it + i, self->u.seq.it + i + 1, (size_t)(n - i - 1) * sizeof(val *));
        self->u.seq.len--;
        return r;
    }
    case MT_SORT: {
        static const char *const kws[] = { "key", "reverse", NULL };
        if (check(cx, a, 0, 0, kws, name, at) < 0) return NULL;
        val *rev = kwarg(a, "reverse");
        if (sort_list(cx, self, kwarg(a, "key"), rev && eval_truth(cx, rev), at) < 0)
            return NULL;
        return eval_none(cx);
    }
    case MT_REVERSE:
        if (check(cx, a, 0, 0, NULL, name, at) < 0 ||
            eval_walk(cx, 0, self->u.seq.len * sizeof(val *), at) < 0)
            return NULL;
        for (size_t p = 0, q = self->u.seq.len; p + 1 < q; p++, q--) {
            val *t = self->u.seq.it[p];
            self->u.seq.it[p] = self->u.seq.it[q - 1];
            self->u.seq.it[q - 1] = t;
        }
        return eval_none(cx);
    case MT_COPY:
        if (check(cx, a, 0, 0, NULL, name, at) < 0) return NULL;
        return copy_of(cx, self);
    default:
        return seq_index_count(cx, self, id, a, at);
    }
}

static val *dict_method(eval_cx *cx, val *self, int id, eval_args *a, const ir_node *at)
{
    const char *name = eval_method_name(id);
    int err;
    val *v;
    switch (id) {
    case MT_ITEMS: case MT_KEYS: case MT_VALUES:
        if (check(cx, a, 0, 0, NULL, name, at) < 0) return NULL;
        return dict_view(cx, self, id == MT_ITEMS ? IT_ITEMS : id == MT_KEYS ? IT_KEYS : IT_VALUES);
    case MT_GET: case MT_SETDEFAULT:
        if (a->npos < 1 || a->npos > 2) {
            return eval_raise(cx, CR_EPY_TYPE, at, "%s expected %s 1 argument%s, got %zu", name,
                              a->npos ? "at most" : "at least", "", a->npos);
        }
        if (kw_check(cx, a, NULL, name, at) < 0) return NULL;
        v = eval_dict_get(cx, self, a->pos[0], &err);
        if (err) return NULL;
        if (v) { EV_INCREF(v); return v; }
        v = a->npos > 1 ? a->pos[1] : eval_none(cx);
        if (id == MT_SETDEFAULT) {
            EV_INCREF(a->pos[0]);
            EV_INCREF(v);
            if (eval_dict_set(cx, self, a->pos[0], v) < 0) return NULL;
        }
        EV_INCREF(v);
        return v;
    case MT_POP:
        if (check(cx, a, 1, 2, NULL, name, at) < 0) return NULL;
        v = eval_dict_get(cx, self, a->pos[0], &err);
        if (err) return NULL;
        if (!v) {
            if (a->npos > 1) { EV_INCREF(a->pos[1]); return a->pos[1]; }
            return eval_key_error(cx, a->pos[0], at);
        }
        EV_INCREF(v);
        if (eval_dict_del(cx, self, a->pos[0]) < 0) { eval_decref(cx, v); return NULL; }
        return v;
    case MT_UPDATE:
        if (argc_check(cx, a, 0, 1, name, at) < 0) return NULL;
        return dict_update(cx, self, a->npos ? a->pos[0] : NULL, a, at) < 0 ? NULL : eval_none(cx);
    default:
        if (check(cx, a, 0, 0, NULL, name, at) < 0) return NULL;
        return copy_of(cx, self);
    }
}

static val *set_method(eval_cx *cx, val *self, int id, eval_args *a, const ir_node *at)
{
    const char *name = eval_method_name(id);
    if (id == MT_COPY) {
        if (check(cx, a, 0, 0, NULL, name, at) < 0) return NULL;
        return copy_of(cx, self);
    }
    if (id == MT_POP) {
        if (check(cx, a, 0, 0, NULL, name, at) < 0) return NULL;
        /* the slots of popped keys stay until the next rebuild: the scan is charged */
        size_t i = 0;
        while (i < self->u.d.used && !self->u.d.ent[i].key) i++;
        if (eval_walk(cx, 1, i * sizeof(dict_ent), at) < 0) return NULL;
        for (; i < self->u.d.used; i++)
            if (self->u.d.ent[i].key) {
                val *k = self->u.d.ent[i].key;
                EV_INCREF(k);
                if (eval_dict_del(cx, self, k) < 0) { eval_decref(cx, k); return NULL; }
                return k;
            }
        val *m = eval_str(cx, "pop from an empty set", 21);
        if (m) eval_key_error(cx, m, at);
        eval_decref(cx, m);
        return NULL;
    }
    if (kw_check(cx, a, NULL, name, at) < 0) return NULL;
    for (size_t k = 0; k < a->npos; k++) {
        val *l = items_of(cx, a->pos[k], at);
        if (!l) return NULL;
        for (size_t i = 0; i < l->u.seq.len; i++) {
            if (eval_count(cx, 1, at) < 0) {
                eval_decref(cx, l);
                return NULL;
            }
            EV_INCREF(l->u.seq.it[i]);
            if (eval_dict_set(cx, self, l->u.seq.it[i], NULL) < 0) {
                eval_decref(cx, l);
                return NULL;
            }
        }
        eval_decref(cx, l);
    }
    return eval_none(cx);
}

val *eval_method_call(eval_cx *cx, val *self, int id, eval_args *a, const ir_node *at)
{
    if (self->kind == V_OBJ && self->u.obj.cls->method) {
        val *r = self->u.obj.cls->method(cx, self, id, a, at);
        if (r || cx->err.code != CR_OK) return r;
    }
    /* an object's class answers for itself: what it leaves is no method of its */
    if (!eval_method_valid(self, id) || self->kind == V_OBJ)
        return eval_raise(cx, CR_EPY_ATTRIBUTE, at, "'%s' object has no attribute '%s'",
                          eval_type_name(self), eval_method_name(id));
    /* the built-in types' methods are C functions: those without keyword parameters refuse
     * any keyword before they count their arguments, in the qualified name */
    if (a->nkw && id != MT_SORT && id != MT_SPLIT && id != MT_FORMAT &&
        !(id == MT_UPDATE && self->kind == V_DICT))
        return eval_raise(cx, CR_EPY_TYPE, at, "%s.%s() takes no keyword arguments",
                          eval_type_name(self), eval_method_name(id));
    switch (self->kind) {
    case V_LIST: return list_method(cx, self, id, a, at);
    case V_TUPLE: return seq_index_count(cx, self, id, a, at);
    case V_DICT: return dict_method(cx, self, id, a, at);
    case V_SET: return set_method(cx, self, id, a, at);
    default: break;
    }
    switch (id) {
    case MT_FORMAT: return str_format(cx, self, a, at);
    case MT_STRIP: case MT_LSTRIP: case MT_RSTRIP: return str_strip(cx, self, a, id, at);
    case MT_SPLIT: return str_split(cx, self, a, at);
    case MT_JOIN: return str_join(cx, self, a, at);
    case MT_REPLACE: return str_replace(cx, self, a, at);
    case MT_STARTSWITH: case MT_ENDSWITH: return str_affix(cx, self, a, id == MT_ENDSWITH, at);
    case MT_ZFILL: return str_zfill(cx, self, a, at);
    case MT_INDEX: case MT_COUNT: return seq_index_count(cx, self, id, a, at);
    default: return str_case(cx, self, id, a, at);
    }
}
