/* evaluator/interp/eval.c: expressions: names, functions and their calls, subscripts and
 * slices, assignment targets, operators, displays, comprehensions and generators; the
 * statements that evaluate targets (augmented assignment, del, import). */
#include "evaluator/interp/interp.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- names ----------------------------------------------------------------------------- */

static val **frame_at(eval_cx *cx, const name_ref *r)
{
    val *f = cx->frame;
    if (r->kind == REF_FREE) {
        f = f->u.fr.parent;
        for (uint16_t d = 0; d < r->depth && f; d++) f = f->u.fr.parent;
    }
    return f ? &f->u.fr.slot[r->idx] : NULL;
}

static val *load(eval_cx *cx, const ir_node *n)
{
    const res_ent *e = resolve_get(&cx->rs, n);
    if (!e) return eval_raise(cx, CR_EINTERNAL, n, "unresolved name '%s'", n->text);
    if (e->ref.kind == REF_GLOBAL) {
        val *v = cx->globals[e->ref.idx];
        if (v) {
            EV_INCREF(v);
            return v;
        }
        int16_t *b = &cx->rs.sym_builtin[e->ref.idx];
        if (*b == -2) *b = (int16_t)eval_builtin_lookup(n->text);
        if (*b >= 0) return eval_builtin_val(cx, *b);
        /* Two names CPython defines beside the builtins we call: the program runs as the
         * main script (the `if __name__ == "__main__":` idiom), and `...` has a name. The
         * parser lets no program bind __name__; a binding (--var) may, and wins above. */
        if (strcmp(n->text, "__name__") == 0) return eval_str(cx, "__main__", 8);
        if (strcmp(n->text, "Ellipsis") == 0) return eval_ellipsis(cx);
        return eval_raise(cx, CR_EPY_NAME, n, "name '%s' is not defined", n->text);
    }
    val **slot = frame_at(cx, &e->ref);
    if (slot && *slot) {
        EV_INCREF(*slot);
        return *slot;
    }
    if (e->ref.kind == REF_LOCAL)
        return eval_raise(cx, CR_EPY_UNBOUND, n,
                          "cannot access local variable '%s' where it is not associated with a "
                          "value", n->text);
    return eval_raise(cx, CR_EPY_NAME, n,
                      "cannot access free variable '%s' where it is not associated with a value"
                      " in enclosing scope", n->text);
}

/* Stores v (stolen) where the resolver put the name of node n. */
int eval_store_ref(eval_cx *cx, const ir_node *n, val *v)
{
    const res_ent *e = resolve_get(&cx->rs, n);
    val **slot;
    if (!e) {
        eval_decref(cx, v);
        eval_raise(cx, CR_EINTERNAL, n, "unresolved name");
        return -1;
    }
    if (e->ref.kind == REF_GLOBAL) {
        slot = &cx->globals[e->ref.idx];
        if (!cx->frame) cx->last_assigned = e->ref.idx;
    } else {
        slot = frame_at(cx, &e->ref);
    }
    val *old = *slot;
    *slot = v;
    eval_decref(cx, old);
    return 0;
}

/* A loop over a range whose target is a plain name, when that name alone holds the last
 * item (an exact int nothing else took a reference to): the next item is written into it,
 * so the loop makes and frees no number an iteration. The step is charged at `at`. 1 bound,
 * 0 not this way (nothing taken: the caller takes the next item itself, or finds the end),
 * -1 raised. */
int eval_next_in_place(eval_cx *cx, eval_iter *it, const ir_node *target, const ir_node *at)
{
    if (it->src->kind != V_RANGE || target->kind != IR_NAME) return 0;
    const res_ent *e = resolve_get(&cx->rs, target);
    if (!e) return 0;
    val **slot = e->ref.kind == REF_GLOBAL ? &cx->globals[e->ref.idx] : frame_at(cx, &e->ref);
    val *cur = slot ? *slot : NULL;
    int64_t r;
    /* limbs already there: eval_q_set_small allocates none, so the accounting stays true */
    if (!cur || cur->kind != V_INT || cur->rc != 1 || cur->flags ||
        mpq_numref(cur->u.q)->_mp_alloc < 1 || mpq_denref(cur->u.q)->_mp_alloc < 1 ||
        !eval_range_step(it, &r))
        return 0;
    if (eval_count(cx, 1, at) < 0) return -1;
    eval_q_set_small(cur->u.q, r, 1);
    if (e->ref.kind == REF_GLOBAL && !cx->frame) cx->last_assigned = e->ref.idx;
    return 1;
}

/* ---- functions ------------------------------------------------------------------------- */

val *eval_make_function(eval_cx *cx, const ir_node *n)
{
    const res_ent *e = resolve_get(&cx->rs, n);
    if (!e || !e->sc) return eval_raise(cx, CR_EINTERNAL, n, "unresolved function");
    const scope *sc = e->sc;
    const ir_node *params = n->kid[0];
    val *f = eval_new(cx, V_FUNC);
    if (!f) return NULL;
    f->u.fn.node = n;
    f->u.fn.sc = sc;
    if (cx->frame) {
        f->u.fn.env = cx->frame;
        EV_INCREF(cx->frame);
    }
    int any = 0;
    for (uint32_t i = 0; i < params->n; i++) any |= params->kid[i]->n && params->kid[i]->kid[0];
    if (any) {
        if (!(f->u.fn.defs = calloc(sc->nparams, sizeof(val *)))) {
            eval_decref(cx, f);
            return eval_raise(cx, CR_ENOMEM, n, "out of memory");
        }
        for (uint32_t i = 0; i < params->n; i++) {
            const ir_node *p = params->kid[i];
            if (!p->n || !p->kid[0]) continue;
            if (!(f->u.fn.defs[i] = eval_expr(cx, p->kid[0]))) {
                eval_decref(cx, f);
                return NULL;
            }
        }
    }
    return f;
}

static const char *param_name(eval_cx *cx, const scope *sc, uint32_t i)
{
    return cx->rs.syms[sc->names[i]];
}

/* Raises when a parameter in [from, to) got no value: -1, else 0. */
static int missing_args(eval_cx *cx, val *f, val **slot, uint32_t from, uint32_t to,
                        const char *what, const ir_node *at)
{
    const scope *sc = f->u.fn.sc;
    char list[200];
    size_t len = 0;
    uint32_t miss[3], nmiss = 0, total = 0;
    for (uint32_t i = from; i < to; i++)
        if (!slot[i] && (int32_t)i != sc->varargs && (int32_t)i != sc->kwargs) {
            if (nmiss < 3) miss[nmiss++] = i;
            total++;
        }
    if (!total) return 0;
    list[0] = '\0';
    for (uint32_t k = 0; k < nmiss; k++) {
        const char *sep = k == 0 ? "" : (k == nmiss - 1 ? (nmiss == 2 ? " and " : ", and ") : ", ");
        len += (size_t)snprintf(list + len, sizeof list - len, "%s'%s'", sep,
                                param_name(cx, sc, miss[k]));
        if (len >= sizeof list) break;
    }
    eval_raise(cx, CR_EPY_TYPE, at, "%s() missing %u required %s argument%s: %s%s", sc->name,
               total, what, total == 1 ? "" : "s", list, total > nmiss ? ", ..." : "");
    return -1;
}

static int bind_args(eval_cx *cx, val *f, val **slot, eval_args *a, const ir_node *at)
{
    const scope *sc = f->u.fn.sc;
    uint32_t npar = sc->nparams;
    uint32_t npos = sc->varargs >= 0 ? (uint32_t)sc->varargs
                  : sc->kwargs >= 0 ? (uint32_t)sc->kwargs : npar;
    size_t i;
    if (a->npos > npos && sc->varargs < 0) {
        uint32_t req = 0;
        for (uint32_t k = 0; k < npos; k++) req += !(f->u.fn.defs && f->u.fn.defs[k]);
        if (req == npos)
            eval_raise(cx, CR_EPY_TYPE, at, "%s() takes %u positional argument%s but %zu %s given",
                       sc->name, npos, npos == 1 ? "" : "s", a->npos,
                       a->npos == 1 ? "was" : "were");
        else
            eval_raise(cx, CR_EPY_TYPE, at,
                       "%s() takes from %u to %u positional arguments but %zu %s given",
                       sc->name, req, npos, a->npos, a->npos == 1 ? "was" : "were");
        return -1;
    }
    for (i = 0; i < a->npos && i < npos; i++) {
        slot[i] = a->pos[i];
        EV_INCREF(a->pos[i]);
    }
    if (sc->varargs >= 0) {
        val *t = eval_seq_new(cx, V_TUPLE, a->npos > npos ? a->npos - npos : 0);
        if (!t) return -1;
        for (; i < a->npos; i++) {
            EV_INCREF(a->pos[i]);
            t->u.seq.it[t->u.seq.len++] = a->pos[i];
        }
        slot[sc->varargs] = t;
    }
    val *kw = NULL;
    if (sc->kwargs >= 0) {
        if (!(kw = eval_dict_new(cx, V_DICT))) return -1;
        slot[sc->kwargs] = kw;
    }
    for (i = 0; i < a->nkw; i++) {
        uint32_t k;
        for (k = 0; k < npar; k++)
            if ((int32_t)k != sc->varargs && (int32_t)k != sc->kwargs &&
                strcmp(param_name(cx, sc, k), a->kwname[i]) == 0)
                break;
        if (k < npar) {
            if (slot[k]) {
                eval_raise(cx, CR_EPY_TYPE, at, "%s() got multiple values for argument '%s'",
                           sc->name, a->kwname[i]);
                return -1;
            }
            slot[k] = a->kw[i];
            EV_INCREF(a->kw[i]);
        } else if (kw) {
            val *key = eval_str(cx, a->kwname[i], strlen(a->kwname[i]));
            if (!key) return -1;
            EV_INCREF(a->kw[i]);
            if (eval_dict_set(cx, kw, key, a->kw[i]) < 0) return -1;
        } else {
            eval_raise(cx, CR_EPY_TYPE, at, "%s() got an unexpected keyword argument '%s'",
                       sc->name, a->kwname[i]);
            return -1;
        }
    }
    if (f->u.fn.defs)
        for (uint32_t k = 0; k < npar; k++)
            if (!slot[k] && f->u.fn.defs[k]) {
                slot[k] = f->u.fn.defs[k];
                EV_INCREF(slot[k]);
            }
    if (missing_args(cx, f, slot, 0, npos, "positional", at) < 0 ||
        missing_args(cx, f, slot, npos, npar, "keyword-only", at) < 0)
        return -1;
    return 0;
}

static val *new_frame(eval_cx *cx, const scope *sc, val *parent)
{
    val *fr = eval_new_frame(cx, sc->nslots);
    if (!fr) return NULL;
    if (parent) {
        fr->u.fr.parent = parent;
        EV_INCREF(parent);
    }
    return fr;
}

/* A call or an expression moved to a new stack segment (eval_deep). */
typedef struct {
    val *f, *r;
    eval_args *a;
    const ir_node *n;
} deep_call;

static val *call_function(eval_cx *cx, val *f, eval_args *a, const ir_node *at);
static int call_deep(eval_cx *cx, void *p)
{
    deep_call *d = p;
    return (d->r = call_function(cx, d->f, d->a, d->n)) ? 0 : -1;
}

static val *call_function(eval_cx *cx, val *f, eval_args *a, const ir_node *at)
{
    const scope *sc = f->u.fn.sc;
    if (eval_stack_low(cx)) {
        deep_call d = { f, NULL, a, at };
        return eval_deep(cx, call_deep, &d) < 0 ? NULL : d.r;
    }
    if (eval_recurse(cx, "", at) < 0) return NULL;
    val *fr = new_frame(cx, sc, f->u.fn.env);
    if (!fr || bind_args(cx, f, fr->u.fr.slot, a, at) < 0) {
        eval_decref(cx, fr);
        cx->rdepth--;
        return NULL;
    }
    if (sc->is_solution) cx->solution_called = 1;
    val *saved = cx->frame, *r = NULL;
    cx->frame = fr;
    cx->call_depth++;
    const ir_node *body = f->u.fn.node->kid[1];
    if (f->u.fn.node->kind == IR_LAMBDA) {
        r = eval_expr(cx, body);
    } else {
        xres x = eval_exec_block(cx, body);
        if (x == X_RETURN) {
            r = cx->retval;
            cx->retval = NULL;
        } else if (x != X_ERROR) {
            r = eval_none(cx);
        }
    }
    cx->call_depth--;
    cx->rdepth--;
    cx->frame = saved;
    eval_decref(cx, fr);
    if (r && sc->is_solution) {
        eval_decref(cx, cx->solution_value);
    eval_decref(cx, cx->dec_cur);
        cx->solution_value = r;
        EV_INCREF(r);
    }
    return r;
}

/* eval_carry_inexact() for a builtin or method call; None says nothing about the values
 * (print, append), nor does isinstance(). */
static val *inexact_through(eval_cx *cx, val *r, int id, val *self, const eval_args *a)
{
    if (!r || r->kind == V_NONE || (!self && id == B_ISINSTANCE)) return r;
    int inexact = self && (self->flags & VF_INEXACT);
    for (size_t i = 0; i < a->npos && !inexact; i++) inexact = a->pos[i]->flags & VF_INEXACT;
    for (size_t i = 0; i < a->nkw && !inexact; i++) inexact = a->kw[i]->flags & VF_INEXACT;
    return eval_carry_inexact(cx, r, inexact);
}

static val *method_call(eval_cx *cx, val *self, int id, eval_args *a, const ir_node *at)
{
    return inexact_through(cx, eval_method_call(cx, self, id, a, at), id, self, a);
}

val *eval_call(eval_cx *cx, val *f, eval_args *a, const ir_node *at)
{
    if (eval_count(cx, 1, at) < 0) return NULL;
    switch (f->kind) {
    case V_FUNC: return call_function(cx, f, a, at);
    case V_BUILTIN:
        return inexact_through(cx, eval_builtin_call(cx, f->sub, a, at), f->sub, NULL, a);
    case V_METHOD: return method_call(cx, f->u.meth.self, f->sub, a, at);
    case V_OBJ:
        if (f->u.obj.cls->call) return f->u.obj.cls->call(cx, f, a, at);
        /* fall through */
    default:
        return eval_raise(cx, CR_EPY_TYPE, at, "'%s' object is not callable", eval_type_name(f));
    }
}

/* ---- call expressions ---- */

typedef struct {
    val *pbuf[8], *kbuf[4];
    const char *nbuf[4];
    val *keep[4];
    size_t pcap, kcap, nkeep;
    eval_args a;
} argv_t;

static void args_init(argv_t *g)
{
    g->a.pos = g->pbuf;
    g->a.kw = g->kbuf;
    g->a.kwname = g->nbuf;
    g->a.npos = g->a.nkw = 0;
    g->pcap = 8;
    g->kcap = 4;
    g->nkeep = 0;
}

static void args_free(eval_cx *cx, argv_t *g)
{
    for (size_t i = 0; i < g->a.npos; i++) eval_decref(cx, g->a.pos[i]);
    for (size_t i = 0; i < g->a.nkw; i++) eval_decref(cx, g->a.kw[i]);
    if (g->a.pos != g->pbuf) free(g->a.pos);
    if (g->a.kw != g->kbuf) {
        free(g->a.kw);
        free((void *)g->a.kwname);
    }
    for (size_t i = 0; i < g->nkeep; i++) eval_decref(cx, g->keep[i]);
}

static int args_pos(eval_cx *cx, argv_t *g, val *v)
{
    if (g->a.npos == g->pcap) {
        if (g->pcap >= cx->lim->max_str_len) {
            eval_decref(cx, v);
            eval_limit(cx, NULL, "too many arguments");
            return -1;
        }
        size_t cap = g->pcap * 2;
        /* f(*items): the arguments are a copy of the items, charged as they double */
        if (eval_walk(cx, g->pcap, 0, NULL) < 0 || eval_mem_room(cx, cap * sizeof(val *)) < 0) {
            eval_decref(cx, v);
            return -1;
        }
        val **p = g->a.pos == g->pbuf ? malloc(cap * sizeof *p) : realloc(g->a.pos, cap * sizeof *p);
        if (!p) {
            eval_decref(cx, v);
            eval_raise(cx, CR_ENOMEM, NULL, "out of memory");
            return -1;
        }
        if (g->a.pos == g->pbuf) memcpy(p, g->pbuf, sizeof g->pbuf);
        g->a.pos = p;
        g->pcap = cap;
    }
    g->a.pos[g->a.npos++] = v;
    return 0;
}

static int args_kw(eval_cx *cx, argv_t *g, const char *name, val *v)
{
    if (g->a.nkw == g->kcap) {
        size_t cap = g->kcap * 2;
        val **p = malloc(cap * sizeof *p);
        const char **nm = malloc(cap * sizeof *nm);
        if (!p || !nm || cap > 4096) {
            free(p);
            free(nm);
            eval_decref(cx, v);
            eval_raise(cx, CR_ENOMEM, NULL, "too many keyword arguments");
            return -1;
        }
        memcpy(p, g->a.kw, g->a.nkw * sizeof *p);
        memcpy(nm, g->a.kwname, g->a.nkw * sizeof *nm);
        if (g->a.kw != g->kbuf) {
            free(g->a.kw);
            free((void *)g->a.kwname);
        }
        g->a.kw = p;
        g->a.kwname = nm;
        g->kcap = cap;
    }
    g->a.kwname[g->a.nkw] = name;
    g->a.kw[g->a.nkw++] = v;
    return 0;
}

static int eval_arguments(eval_cx *cx, const ir_node *n, uint32_t from, argv_t *g)
{
    for (uint32_t i = from; i < n->n; i++) {
        const ir_node *k = n->kid[i];
        val *v = eval_expr(cx, k->kind == IR_KEYWORD || k->kind == IR_STARRED ||
                                   k->kind == IR_DSTARRED ? k->kid[0] : k);
        if (!v) return -1;
        if (k->kind == IR_KEYWORD) {
            if (args_kw(cx, g, k->text, v) < 0) return -1;
        } else if (k->kind == IR_STARRED) {
            eval_iter it;
            val *x;
            int r;
            if (eval_iter_init(cx, &it, v) < 0) {
                eval_decref(cx, v);
                return -1;
            }
            while ((r = eval_iter_next(cx, &it, &x)) > 0)
                if (args_pos(cx, g, x) < 0) { r = -1; break; }
            eval_iter_done(cx, &it);
            eval_decref(cx, v);
            if (r < 0) return -1;
        } else if (k->kind == IR_DSTARRED) {
            if (v->kind != V_DICT) {
                eval_raise(cx, CR_EPY_TYPE, k, "argument after ** must be a mapping, not %s",
                           eval_type_name(v));
                eval_decref(cx, v);
                return -1;
            }
            /* the keyword names point into the dict's keys: it stays referenced until the
             * call ends */
            if (g->nkeep == sizeof g->keep / sizeof g->keep[0]) {
                eval_raise(cx, CR_EPY_TYPE, k, "too many ** arguments in one call");
                eval_decref(cx, v);
                return -1;
            }
            g->keep[g->nkeep++] = v;
            for (size_t j = 0; j < v->u.d.used; j++) {
                dict_ent *e = &v->u.d.ent[j];
                if (!e->key) continue;
                if (e->key->kind != V_STR) {
                    eval_raise(cx, CR_EPY_TYPE, k, "keywords must be strings");
                    return -1;
                }
                EV_INCREF(e->value);
                if (args_kw(cx, g, e->key->u.str.s, e->value) < 0) return -1;
            }
        } else {
            if (args_pos(cx, g, v) < 0) return -1;
        }
    }
    return 0;
}

/* The method an attribute names, found once by the resolver; -1 when none. */
static int attr_method(eval_cx *cx, const ir_node *attr)
{
    const res_ent *e = resolve_get(&cx->rs, attr);
    return e ? (int)(int32_t)e->ref.idx : eval_method_lookup(attr->text);
}

static val *eval_call_expr(eval_cx *cx, const ir_node *n)
{
    const ir_node *callee = n->kid[0];
    val *f = NULL, *self = NULL, *r = NULL;
    int method = -1;
    argv_t g;
    args_init(&g);
    if (callee->kind == IR_ATTR) {
        if (!(self = eval_expr(cx, callee->kid[0]))) return NULL;
        if (self->kind == V_MODULE) {
            f = eval_module_attr(cx, self->sub, callee->text, callee);
            eval_decref(cx, self);
            self = NULL;
            if (!f) return NULL;
        } else if ((method = attr_method(cx, callee)) < 0) {
            eval_raise(cx, CR_EPY_ATTRIBUTE, callee, "'%s' object has no attribute '%s'",
                       eval_type_name(self), callee->text);
            eval_decref(cx, self);
            return NULL;
        }
    } else if (!(f = eval_expr(cx, callee))) {
        return NULL;
    }
    if (eval_arguments(cx, n, 1, &g) == 0) {
        if (self) {
            if (eval_count(cx, 1, n) == 0) r = method_call(cx, self, method, &g.a, n);
        } else {
            r = eval_call(cx, f, &g.a, n);
        }
    }
    args_free(cx, &g);
    eval_decref(cx, self);
    eval_decref(cx, f);
    return r;
}

/* ---- subscripts and slices ------------------------------------------------------------- */

typedef struct { int64_t start, stop, step, n; } slice_t;

static int slice_bound(eval_cx *cx, const ir_node *k, int64_t *out, int *given)
{
    *given = 0;
    if (!k) return 0;
    val *v = eval_expr(cx, k);
    if (!v) return -1;
    if (v->kind == V_NONE) return 0;
    if (v->kind != V_INT && v->kind != V_BOOL) {
        eval_decref(cx, v);
        eval_raise(cx, CR_EPY_TYPE, k,
                   "slice indices must be integers or None or have an __index__ method");
        return -1;
    }
    mpz_srcptr z = mpq_numref(v->u.q);
    *out = mpz_fits_slong_p(z) ? mpz_get_si(z) : (mpz_sgn(z) < 0 ? INT64_MIN / 2 : INT64_MAX / 2);
    eval_decides(cx, v);
    eval_decref(cx, v);
    *given = 1;
    return 0;
}

/* CPython's PySlice_AdjustIndices. */
static int eval_slice(eval_cx *cx, const ir_node *s, int64_t len, slice_t *sl)
{
    int g0, g1, g2;
    int64_t a = 0, b = 0, st = 1;
    if (slice_bound(cx, s->kid[0], &a, &g0) < 0 || slice_bound(cx, s->kid[1], &b, &g1) < 0 ||
        slice_bound(cx, s->kid[2], &st, &g2) < 0)
        return -1;
    if (!g2) st = 1;
    if (st == 0) {
        eval_raise(cx, CR_EPY_VALUE, s, "slice step cannot be zero");
        return -1;
    }
    if (!g0) a = st < 0 ? len - 1 : 0;
    else if (a < 0) { a += len; if (a < 0) a = st < 0 ? -1 : 0; }
    else if (a >= len) a = st < 0 ? len - 1 : len;
    if (!g1) b = st < 0 ? -1 : len;
    else if (b < 0) { b += len; if (b < 0) b = st < 0 ? -1 : 0; }
    else if (b >= len) b = st < 0 ? len - 1 : len;
    sl->start = a;
    sl->stop = b;
    sl->step = st;
    if (st < 0) sl->n = b < a ? (a - b - 1) / (-st) + 1 : 0;
    else sl->n = a < b ? (b - a - 1) / st + 1 : 0;
    return 0;
}

static val *get_slice(eval_cx *cx, val *o, const ir_node *s)
{
    slice_t sl;
    size_t len;
    if (o->kind != V_LIST && o->kind != V_TUPLE && o->kind != V_STR && o->kind != V_RANGE)
        return eval_raise(cx, CR_EPY_TYPE, s, "'%s' object is not subscriptable",
                          eval_type_name(o));
    eval_len(cx, o, &len);
    if (eval_slice(cx, s, (int64_t)len, &sl) < 0) return NULL;
    if (o->kind == V_RANGE) {
        val *r = eval_new(cx, V_RANGE);
        if (!r) return NULL;
        r->u.rng.step = o->u.rng.step * sl.step;
        r->u.rng.start = o->u.rng.start + sl.start * o->u.rng.step;
        r->u.rng.stop = r->u.rng.start + sl.n * r->u.rng.step;
        return r;
    }
    if (o->kind == V_STR) {
        const char *t = o->u.str.s;
        size_t len = o->u.str.len;
        int ascii = o->u.str.nch == len;
        /* one pass over the text: a character's byte offset is found from the previous one */
        if (eval_walk(cx, sl.step == 1 ? 0 : (uint64_t)sl.n, ascii ? 0 : len, s) < 0) return NULL;
        size_t p = ascii ? (size_t)sl.start : eval_utf8_index(o, (size_t)sl.start), q;
        if (sl.n && sl.step == 1) {
            q = ascii ? p + (size_t)sl.n : eval_utf8_index(o, (size_t)sl.stop);
            return eval_str(cx, t + p, q - p);
        }
        cr_buf b;
        cr_buf_init(&b, 0);
        for (int64_t k = 0; k < sl.n; k++) {
            for (int64_t m = k ? sl.step : 0; m > 0; m--)
                while (++p < len && ((unsigned char)t[p] & 0xC0) == 0x80) {}
            for (int64_t m = k ? sl.step : 0; m < 0; m++)
                while (--p > 0 && ((unsigned char)t[p] & 0xC0) == 0x80) {}
            for (q = p + 1; q < len && ((unsigned char)t[q] & 0xC0) == 0x80;) q++;
            if (cr_buf_put(&b, t + p, q - p) != CR_OK) {
                cr_buf_free(&b);
                return eval_raise(cx, CR_ENOMEM, s, "out of memory");
            }
        }
        return eval_str_buf(cx, &b);
    }
    if (eval_walk(cx, (uint64_t)sl.n, 0, s) < 0) return NULL;
    val *r = eval_seq_new(cx, (vkind)o->kind, (size_t)sl.n);
    if (!r) return NULL;
    for (int64_t k = 0, i = sl.start; k < sl.n; k++, i += sl.step) {
        EV_INCREF(o->u.seq.it[i]);
        r->u.seq.it[r->u.seq.len++] = o->u.seq.it[i];
    }
    return r;
}

static int tuple_holds_slice(const ir_node *n)
{
    if (n->kind != IR_TUPLE) return 0;
    for (uint32_t i = 0; i < n->n; i++)
        if (n->kid[i] && n->kid[i]->kind == IR_SLICE) return 1;
    return 0;
}

enum { SUB_LOAD, SUB_STORE, SUB_DELETE };

/* o[1:2, 3] (a load, a store or a delete): CPython makes a tuple holding a slice object,
 * which no container of ours accepts as an index or key, so the tuple is never built; raise
 * what CPython raises for it. */
static val *raise_slice_tuple(eval_cx *cx, const val *o, const ir_node *at, int op)
{
    const char *t = eval_type_name(o);
    if (o->kind == V_DICT) return eval_raise(cx, CR_EPY_TYPE, at, "unhashable type: 'slice'");
    if (o->kind == V_LIST ||
        (op == SUB_LOAD && (o->kind == V_TUPLE || o->kind == V_RANGE)))
        return eval_raise(cx, CR_EPY_TYPE, at, "%s indices must be integers or slices, not tuple",
                          t);
    if (op == SUB_LOAD && o->kind == V_STR)
        return eval_raise(cx, CR_EPY_TYPE, at, "string indices must be integers, not 'tuple'");
    if (op == SUB_LOAD)
        return eval_raise(cx, CR_EPY_TYPE, at, "'%s' object is not subscriptable", t);
    return eval_raise(cx, CR_EPY_TYPE, at, "'%s' object does not support item %s", t,
                      op == SUB_STORE ? "assignment" : "deletion");
}

static val *eval_subscript(eval_cx *cx, const ir_node *n)
{
    val *o = eval_expr(cx, n->kid[0]), *r;
    if (!o) return NULL;
    if (n->kid[1]->kind == IR_SLICE) {
        r = get_slice(cx, o, n->kid[1]);
    } else if (tuple_holds_slice(n->kid[1])) {
        r = raise_slice_tuple(cx, o, n, SUB_LOAD);
    } else {
        val *k = eval_expr(cx, n->kid[1]);
        r = k ? eval_get_item(cx, o, k, n) : NULL;
        eval_decref(cx, k);
    }
    /* str(x)[0], str(x).split()[0] */
    r = eval_carry_inexact(cx, r, (o->flags & VF_INEXACT) != 0);
    eval_decref(cx, o);
    return r;
}

/* Stores v (stolen) into o[k]. */
static int set_item(eval_cx *cx, val *o, val *k, val *v, const ir_node *at)
{
    int64_t i;
    if (o->kind == V_LIST) {
        if (eval_norm_index(cx, k, o->u.seq.len, &i, "list assignment", o, at) < 0) {
            eval_decref(cx, v);
            return -1;
        }
        val *old = o->u.seq.it[i];
        o->u.seq.it[i] = v;
        eval_decref(cx, old);
        return 0;
    }
    if (o->kind == V_DICT) {
        EV_INCREF(k);
        return eval_dict_set(cx, o, k, v);
    }
    eval_decref(cx, v);
    eval_raise(cx, CR_EPY_TYPE, at, "'%s' object does not support item assignment",
               eval_type_name(o));
    return -1;
}

/* o[slice] = v, or del o[slice] when v is NULL (lists only). */
static int set_slice(eval_cx *cx, val *o, const ir_node *s, val *v, const ir_node *at)
{
    slice_t sl;
    val *items = NULL;
    if (o->kind != V_LIST) {
        eval_raise(cx, CR_EPY_TYPE, at, "'%s' object does not support item %s",
                   eval_type_name(o), v ? "assignment" : "deletion");
        return -1;
    }
    if (eval_slice(cx, s, (int64_t)o->u.seq.len, &sl) < 0) return -1;
    if (v && !(items = eval_list_of(cx, v, V_LIST))) return -1;
    size_t m = items ? items->u.seq.len : 0;
    if (sl.step != 1) {
        if (items && m != (size_t)sl.n) {
            eval_raise(cx, CR_EPY_VALUE, at,
                       "attempt to assign sequence of size %zu to extended slice of size %lld",
                       m, (long long)sl.n);
            eval_decref(cx, items);
            return -1;
        }
        if (items) {
            if (eval_walk(cx, m, 0, at) < 0) {
                eval_decref(cx, items);
                return -1;
            }
            for (int64_t k = 0, i = sl.start; k < sl.n; k++, i += sl.step) {
                val *old = o->u.seq.it[i];
                o->u.seq.it[i] = items->u.seq.it[k];
                EV_INCREF(o->u.seq.it[i]);
                eval_decref(cx, old);
            }
            eval_decref(cx, items);
            return 0;
        }
        /* delete the chosen positions, keeping the others in order */
        if (eval_walk(cx, o->u.seq.len, 0, at) < 0) return -1;
        size_t w = 0;
        int64_t lo = sl.step > 0 ? sl.start : sl.start + (sl.n - 1) * sl.step;
        int64_t st = sl.step > 0 ? sl.step : -sl.step;
        for (size_t r = 0; r < o->u.seq.len; r++) {
            int64_t d = (int64_t)r - lo;
            if (sl.n && d >= 0 && d % st == 0 && d / st < sl.n) eval_decref(cx, o->u.seq.it[r]);
            else o->u.seq.it[w++] = o->u.seq.it[r];
        }
        o->u.seq.len = w;
        return 0;
    }
    size_t a = (size_t)sl.start, b = sl.stop > sl.start ? (size_t)sl.stop : a;
    size_t len = o->u.seq.len, nlen = len - (b - a) + m;
    if (eval_walk(cx, b - a + m, (len - b) * sizeof(val *), at) < 0) {
        eval_decref(cx, items);
        return -1;
    }
    if (nlen > len && eval_seq_reserve(cx, o, nlen) < 0) {
        eval_decref(cx, items);
        return -1;
    }
    for (size_t i = a; i < b; i++) eval_decref(cx, o->u.seq.it[i]);
    if (b < len)   /* an empty list may have no buffer at all: no pointer arithmetic on NULL */
        memmove(o->u.seq.it + a + m, o->u.seq.it + b, (len - b) * sizeof(val *));
    for (size_t i = 0; i < m; i++) {
        o->u.seq.it[a + i] = items->u.seq.it[i];
        EV_INCREF(items->u.seq.it[i]);
    }
    o->u.seq.len = nlen;
    eval_decref(cx, items);
    return 0;
}

/* ---- assignment targets ---------------------------------------------------------------- */

static int unpack(eval_cx *cx, const ir_node *t, val *v)
{
    if (v->kind != V_LIST && v->kind != V_TUPLE && v->kind != V_STR && v->kind != V_DICT &&
        v->kind != V_SET && v->kind != V_RANGE && v->kind != V_ITER &&
        !(v->kind == V_OBJ && v->u.obj.cls->items)) {
        eval_raise(cx, CR_EPY_TYPE, t, "cannot unpack non-iterable %s object", eval_type_name(v));
        return -1;
    }
    val *items = eval_list_of(cx, v, V_LIST);
    if (!items) return -1;
    uint32_t star = UINT32_MAX;
    for (uint32_t i = 0; i < t->n; i++)
        if (t->kid[i]->kind == IR_STARRED) star = i;
    size_t m = items->u.seq.len, want = t->n - (star != UINT32_MAX);
    int rc = 0;
    if (star == UINT32_MAX && m != t->n) {
        if (m > t->n)
            eval_raise(cx, CR_EPY_VALUE, t, "too many values to unpack (expected %u)", t->n);
        else
            eval_raise(cx, CR_EPY_VALUE, t, "not enough values to unpack (expected %u, got %zu)",
                       t->n, m);
        rc = -1;
    } else if (star != UINT32_MAX && m < want) {
        eval_raise(cx, CR_EPY_VALUE, t,
                   "not enough values to unpack (expected at least %zu, got %zu)", want, m);
        rc = -1;
    }
    size_t j = 0;
    for (uint32_t i = 0; rc == 0 && i < t->n; i++) {
        if (i == star) {
            size_t cnt = m - want;
            val *l = eval_seq_new(cx, V_LIST, cnt);
            if (!l) { rc = -1; break; }
            for (size_t k = 0; k < cnt; k++) {
                EV_INCREF(items->u.seq.it[j + k]);
                l->u.seq.it[l->u.seq.len++] = items->u.seq.it[j + k];
            }
            j += cnt;
            rc = eval_assign(cx, t->kid[i]->kid[0], l);
            eval_decref(cx, l);
        } else {
            rc = eval_assign(cx, t->kid[i], items->u.seq.it[j++]);
        }
    }
    eval_decref(cx, items);
    return rc;
}

/* Binds target t to v (borrowed). */
int eval_assign(eval_cx *cx, const ir_node *t, val *v)
{
    switch (t->kind) {
    case IR_NAME:
        EV_INCREF(v);
        return eval_store_ref(cx, t, v);
    case IR_TUPLE: case IR_LIST:
        return unpack(cx, t, v);
    case IR_SUBSCRIPT: {
        val *o = eval_expr(cx, t->kid[0]);
        int rc = -1;
        if (!o) return -1;
        if (t->kid[1]->kind == IR_SLICE) {
            rc = set_slice(cx, o, t->kid[1], v, t);
        } else if (tuple_holds_slice(t->kid[1])) {
            raise_slice_tuple(cx, o, t, SUB_STORE);
        } else {
            val *k = eval_expr(cx, t->kid[1]);
            if (k) {
                EV_INCREF(v);
                rc = set_item(cx, o, k, v, t);
                eval_decref(cx, k);
            }
        }
        eval_decref(cx, o);
        return rc;
    }
    case IR_ATTR: {
        val *o = eval_expr(cx, t->kid[0]);
        if (!o) return -1;
        int rc = -1;
        if (o->kind == V_OBJ && o->u.obj.cls->setattr)
            rc = o->u.obj.cls->setattr(cx, o, t->text, v, t);
        if (rc == -2 || (rc < 0 && cx->err.code == CR_OK))
            eval_raise(cx, CR_EPY_ATTRIBUTE, t, "'%s' object has no attribute '%s'",
                       eval_type_name(o), t->text);
        eval_decref(cx, o);
        return rc < 0 ? -1 : 0;
    }
    case IR_STARRED:
        eval_raise(cx, CR_ESYNTAX, t, "starred assignment target must be in a list or tuple");
        return -1;
    default:
        eval_raise(cx, CR_ESYNTAX, t, "cannot assign to %s", ir_kind_name((ir_kind)t->kind));
        return -1;
    }
}

/* ---- expressions ----------------------------------------------------------------------- */

/* Keeps a reference to v for the rest of the run; 0 when there is no room to note it. */
static int cache_const(eval_cx *cx, val *v)
{
    if (cx->nconsts == cx->constcap) {
        uint32_t cap = cx->constcap ? cx->constcap * 2 : 32;
        val **p = resolve_alloc(cx, cap * sizeof *p);
        if (!p) return 0;
        if (cx->nconsts) memcpy(p, cx->consts, cx->nconsts * sizeof *p);
        cx->consts = p;
        cx->constcap = cap;
    }
    EV_INCREF(v);
    cx->consts[cx->nconsts++] = v;
    return 1;
}

static val *constant(eval_cx *cx, const ir_node *n)
{
    res_ent *e = (res_ent *)resolve_get(&cx->rs, n);
    val *v;
    if (e && e->k) {
        EV_INCREF(e->k);
        return e->k;
    }
    if (n->kind == IR_STR) {
        v = eval_str(cx, n->text, n->len);
    } else {
        int is_float = 0;
        if (!(v = eval_num(cx, V_INT))) return NULL;
        cr_code rc = num_parse_literal(v->u.q, n->text, n->len, &is_float, &cx->nc);
        if (rc != CR_OK) {
            eval_decref(cx, v);
            if (rc == CR_ELIMIT) return eval_int_limit(cx, n);
            return eval_raise(cx, rc, n, "invalid number literal '%s'", n->text);
        }
        v->kind = (uint8_t)(is_float || (n->flags & IRF_FLOAT) ? V_FLOAT : V_INT);
        if (!(v = eval_num_done(cx, v))) return NULL;
    }
    if (v && e && cache_const(cx, v)) e->k = v;
    return v;
}

static val *eval_unary(eval_cx *cx, const ir_node *n)
{
    val *a = eval_expr(cx, n->kid[0]), *r;
    if (!a) return NULL;
    if (n->op == IR_NOT) {
        r = eval_bool(cx, !eval_truth(cx, a));
        eval_decref(cx, a);
        return r;
    }
    if (eval_count(cx, 1, n) < 0) { eval_decref(cx, a); return NULL; }
    if (a->kind == V_INF && n->op != IR_INVERT) {
        if (n->op == IR_POS) return a;
        r = eval_new(cx, V_INF);
        if (r) r->sub = a->sub == INF_NAN ? INF_NAN : !a->sub;
        eval_decref(cx, a);
        return r;
    }
    if (a->kind == V_OBJ && a->u.obj.cls->unary) {
        r = a->u.obj.cls->unary(cx, n->op, a, n);
        if (r || cx->err.code != CR_OK) {
            eval_decref(cx, a);
            return r;
        }
    }
    if (!IS_NUM(a) || (n->op == IR_INVERT && a->kind == V_FLOAT)) {
        eval_raise(cx, CR_EPY_TYPE, n, "bad operand type for unary %s: '%s'",
                   ir_unop_src(n->op), eval_type_name(a));
        eval_decref(cx, a);
        return NULL;
    }
    if (n->op == IR_POS && a->kind != V_BOOL) return a;
    r = eval_num(cx, a->kind == V_FLOAT ? V_FLOAT : V_INT);
    if (r) {
        if (n->op == IR_NEG) mpq_neg(r->u.q, a->u.q);
        else if (n->op == IR_POS) mpq_set(r->u.q, a->u.q);
        else { mpz_com(mpq_numref(r->u.q), mpq_numref(a->u.q)); }
        r->flags |= a->flags & (n->op == IR_NEG ? VF_INEXACT | VF_DOUBLE : VF_INEXACT);
        if (r->kind == V_FLOAT && !mpq_sgn(r->u.q))
            r->flags |= (n->op == IR_NEG ? ~a->flags : a->flags) & VF_NEGZ;
        r = eval_num_done(cx, r);
    }
    eval_decref(cx, a);
    return r;
}

static int same_object(val *a, val *b)
{
    if (a == b) return 1;
    if (a->kind != b->kind) return 0;
    if (a->kind == V_BUILTIN || a->kind == V_INF) return a->sub == b->sub && !IS_NAN(a);
    if (a->kind == V_INT) return mpq_equal(a->u.q, b->u.q) && mpz_cmp_si(mpq_numref(a->u.q), 256) <= 0 &&
                                 mpz_cmp_si(mpq_numref(a->u.q), -5) >= 0;
    return 0;
}

static int compare_one(eval_cx *cx, int op, val *a, val *b, const ir_node *at)
{
    if (eval_count(cx, 1, at) < 0) return -1;
    switch (op) {
    /* NaN equals nothing, itself included; eval_eq's identity rule is for containers */
    case IR_EQ: return IS_NAN(a) || IS_NAN(b) ? 0 : eval_eq(cx, a, b);
    case IR_NE: { int r = IS_NAN(a) || IS_NAN(b) ? 0 : eval_eq(cx, a, b); return r < 0 ? r : !r; }
    case IR_IN: return eval_contains(cx, b, a, at);
    case IR_NOT_IN: { int r = eval_contains(cx, b, a, at); return r < 0 ? r : !r; }
    case IR_IS: return same_object(a, b);
    case IR_IS_NOT: return !same_object(a, b);
    default: return eval_cmp(cx, op, a, b);
    }
}

static val *eval_compare(eval_cx *cx, const ir_node *n)
{
    val *a = eval_expr(cx, n->kid[0]);
    if (!a) return NULL;
    for (uint32_t i = 1; i < n->n; i++) {
        val *b = eval_expr(cx, n->kid[i]);
        if (!b) { eval_decref(cx, a); return NULL; }
        int r = compare_one(cx, n->cmp[i - 1], a, b, n);
        eval_decref(cx, a);
        a = b;
        if (r <= 0) {
            eval_decref(cx, b);
            return r < 0 ? NULL : eval_bool(cx, 0);
        }
    }
    eval_decref(cx, a);
    return eval_bool(cx, 1);
}

static val *eval_display(eval_cx *cx, const ir_node *n)
{
    vkind k = n->kind == IR_LIST ? V_LIST : n->kind == IR_TUPLE ? V_TUPLE : V_SET;
    val *r = k == V_SET ? eval_dict_new(cx, V_SET) : eval_seq_new(cx, k, n->n);
    if (!r) return NULL;
    for (uint32_t i = 0; i < n->n; i++) {
        const ir_node *e = n->kid[i];
        val *v = eval_expr(cx, e->kind == IR_STARRED ? e->kid[0] : e);
        if (!v) goto fail;
        if (e->kind == IR_STARRED) {
            eval_iter it;
            val *x;
            int rc;
            if (eval_iter_init(cx, &it, v) < 0) { eval_decref(cx, v); goto fail; }
            while ((rc = eval_iter_next(cx, &it, &x)) > 0) {
                if (eval_count(cx, 1, e) < 0) { eval_decref(cx, x); rc = -1; break; }
                if ((k == V_SET ? eval_dict_set(cx, r, x, NULL) : eval_seq_push(cx, r, x)) < 0) {
                    rc = -1;
                    break;
                }
            }
            eval_iter_done(cx, &it);
            eval_decref(cx, v);
            if (rc < 0) goto fail;
        } else if ((k == V_SET ? eval_dict_set(cx, r, v, NULL) : eval_seq_push(cx, r, v)) < 0) {
            goto fail;
        }
    }
    return r;
fail:
    eval_decref(cx, r);
    return NULL;
}

static val *eval_dict_display(eval_cx *cx, const ir_node *n)
{
    val *d = eval_dict_new(cx, V_DICT);
    if (!d) return NULL;
    for (uint32_t i = 0; i + 1 < n->n; i += 2) {
        val *k = eval_expr(cx, n->kid[i]);
        if (!k) goto fail;
        val *v = eval_expr(cx, n->kid[i + 1]);
        if (!v) { eval_decref(cx, k); goto fail; }
        if (eval_dict_set(cx, d, k, v) < 0) goto fail;
    }
    return d;
fail:
    eval_decref(cx, d);
    return NULL;
}

/* A for-clause f binds its target to x (taken) and tests its ifs: 1 kept, 0 skipped, -1. The
 * step is charged at `at`. */
static int comp_bind(eval_cx *cx, const ir_node *f, val *x, const ir_node *at)
{
    int rc = 0;
    if (x) {   /* NULL: eval_next_in_place() bound it */
        rc = eval_count(cx, 1, at) < 0 ? -1 : eval_assign(cx, f->kid[0], x);
        eval_decref(cx, x);
    }
    for (uint32_t c = 2; c < f->n && rc == 0; c++) {
        val *t = eval_expr(cx, f->kid[c]);
        if (!t) return -1;
        if (!eval_truth(cx, t)) rc = 1;
        eval_decref(cx, t);
    }
    return rc < 0 ? -1 : !rc;
}

/* Runs the comprehension's for-clauses from kid[i] on, adding each element to r. */
static int comp_loop(eval_cx *cx, const ir_node *n, uint32_t i, uint32_t first, val *src, val *r)
{
    const ir_node *f = n->kid[i];
    val *it_src = i == first ? src : eval_expr(cx, f->kid[1]);
    if (!it_src) return -1;
    eval_iter it;
    int rc = eval_iter_init(cx, &it, it_src);
    if (i != first) eval_decref(cx, it_src);
    if (rc < 0) return -1;
    val *x;
    for (;;) {
        x = NULL;
        if ((rc = eval_next_in_place(cx, &it, f->kid[0], f)) < 0) break;
        if (!rc && (rc = eval_iter_next(cx, &it, &x)) <= 0) break;
        if ((rc = comp_bind(cx, f, x, f)) < 0) break;
        if (!rc) continue;
        if (i + 1 < n->n) {
            if ((rc = comp_loop(cx, n, i + 1, first, NULL, r)) < 0) break;
            continue;
        }
        if (n->kind == IR_DICTCOMP) {
            val *k = eval_expr(cx, n->kid[0]), *v;
            if (!k) { rc = -1; break; }
            if (!(v = eval_expr(cx, n->kid[1]))) { eval_decref(cx, k); rc = -1; break; }
            rc = eval_dict_set(cx, r, k, v);
        } else {
            val *e = eval_expr(cx, n->kid[0]);
            if (!e) { rc = -1; break; }
            rc = r->kind == V_SET ? eval_dict_set(cx, r, e, NULL) : eval_seq_push(cx, r, e);
        }
        if (rc < 0) break;
    }
    eval_iter_done(cx, &it);
    return rc < 0 ? -1 : 0;
}

/* A generator expression: its first iterable is evaluated now, in the enclosing scope, the
 * rest of it as items are asked for (eval_gen_next), in its own frame. */
static val *new_generator(eval_cx *cx, const ir_node *n, const scope *sc)
{
    const ir_node *src_node = n->kid[1]->kid[1];
    val *src = eval_expr(cx, src_node), *g;
    if (!src) return NULL;
    if (!(g = eval_lazy_new(cx, IT_GENERATOR, n->n - 1))) { eval_decref(cx, src); return NULL; }
    eval_lazy *lz = g->u.itr.lz;
    lz->node = n;
    int rc = eval_iter_init(cx, &lz->its[0], src);
    eval_decref(cx, src);
    if (rc < 0) { eval_decref(cx, g); return eval_at(cx, src_node), NULL; }
    lz->k = 1;
    if (!(lz->f = new_frame(cx, sc, cx->frame))) { eval_decref(cx, g); return NULL; }
    return g;
}

/* The for-clauses are loops held open in its[0..k-1], resumed where the last item left
 * them: the innermost gives the next binding; one that ends closes and its outer goes on. */
int eval_gen_next(eval_cx *cx, val *g, val **out)
{
    eval_lazy *lz = g->u.itr.lz;
    const ir_node *n = lz->node;
    val *saved = cx->frame, *x;
    int rc = 0;
    cx->frame = lz->f;
    while (lz->k) {
        const ir_node *f = n->kid[lz->k];
        eval_iter *it = &lz->its[lz->k - 1];
        x = NULL;
        if ((rc = eval_next_in_place(cx, it, f->kid[0], NULL)) < 0) break;
        if (!rc && (rc = eval_iter_next(cx, it, &x)) < 0) { eval_at(cx, n); break; }
        if (rc == 0) {
            eval_iter_done(cx, it);
            lz->k--;
            continue;
        }
        /* the step is the consumer's, as eval_lazy_next's: a limit met here is placed there */
        if ((rc = comp_bind(cx, f, x, NULL)) < 0) break;
        if (!rc) continue;
        if (lz->k < lz->n) {
            const ir_node *sn = n->kid[lz->k + 1]->kid[1];
            val *s = eval_expr(cx, sn);
            if (!s) { rc = -1; break; }
            rc = eval_iter_init(cx, &lz->its[lz->k], s);
            eval_decref(cx, s);
            if (rc < 0) { eval_at(cx, sn); break; }
            lz->k++;
            continue;
        }
        rc = (*out = eval_expr(cx, n->kid[0])) ? 1 : -1;
        break;
    }
    cx->frame = saved;
    return rc;
}

static val *eval_comp(eval_cx *cx, const ir_node *n)
{
    const res_ent *e = resolve_get(&cx->rs, n);
    uint32_t first = n->kind == IR_DICTCOMP ? 2 : 1;
    val *r;
    if (!e || !e->sc || n->n <= first) return eval_raise(cx, CR_EINTERNAL, n, "bad comprehension");
    const scope *sc = e->sc;
    if (n->kind == IR_GENEXP) return new_generator(cx, n, sc);
    switch (n->kind) {
    case IR_LISTCOMP: r = eval_seq_new(cx, V_LIST, 0); break;
    case IR_SETCOMP: r = eval_dict_new(cx, V_SET); break;
    default: r = eval_dict_new(cx, V_DICT); break;
    }
    if (!r) return NULL;
    val *src = eval_expr(cx, n->kid[first]->kid[1]);
    if (!src) { eval_decref(cx, r); return NULL; }
    /* a comprehension is a frame of its own in CPython 3.11, as deep as a call */
    val *fr = NULL;
    if (eval_recurse(cx, "", n) == 0 && !(fr = new_frame(cx, sc, cx->frame))) cx->rdepth--;
    if (!fr) { eval_decref(cx, src); eval_decref(cx, r); return NULL; }
    val *saved = cx->frame;
    cx->frame = fr;
    int rc = comp_loop(cx, n, first, first, src, r);
    cx->frame = saved;
    cx->rdepth--;
    eval_decref(cx, fr);
    eval_decref(cx, src);
    if (rc < 0) { eval_decref(cx, r); return NULL; }
    return r;
}

static int fstring_into(eval_cx *cx, const ir_node *n, cr_buf *b, int *inexact);

static int format_field(eval_cx *cx, const ir_node *f, cr_buf *b, int *inexact)
{
    val *v = eval_expr(cx, f->kid[0]);
    if (!v) return -1;
    if (f->op == 'r' || f->op == 'a' || f->op == 's') {
        val *s = eval_to_str(cx, v, f->op == 'a' ? EVAL_ASCII : f->op == 'r');
        eval_decref(cx, v);
        if (!(v = s)) return -1;
    }
    int rc = eval_inexact(cx, v);
    if (rc < 0) {
        eval_decref(cx, v);
        return -1;
    }
    *inexact |= rc;
    if (f->n > 1 && f->kid[1]) {
        cr_buf spec;
        cr_buf_init(&spec, 4096);
        rc = fstring_into(cx, f->kid[1], &spec, inexact);
        if (rc == 0) rc = eval_format(cx, b, v, spec.p ? spec.p : "", spec.len, f);
        cr_buf_free(&spec);
    } else {
        rc = eval_format(cx, b, v, "", 0, f);
    }
    eval_decref(cx, v);
    return rc;
}

static int fstring_into(eval_cx *cx, const ir_node *n, cr_buf *b, int *inexact)
{
    for (uint32_t i = 0; i < n->n; i++) {
        const ir_node *p = n->kid[i];
        if (p->kind == IR_FORMAT) {
            if (format_field(cx, p, b, inexact) < 0) return -1;
        } else if (p->kind == IR_STR) {
            if (eval_put(cx, b, p->text, p->len) < 0) return -1;
        } else {
            val *v = eval_expr(cx, p);
            if (!v) return -1;
            int rc = eval_format(cx, b, v, "", 0, p);
            eval_decref(cx, v);
            if (rc < 0) return -1;
        }
    }
    return 0;
}

static val *eval_fstring(eval_cx *cx, const ir_node *n)
{
    cr_buf b;
    int inexact = 0;
    cr_buf_init(&b, cx->lim->max_str_len);
    if (fstring_into(cx, n, &b, &inexact) < 0) {
        cr_buf_free(&b);
        return NULL;
    }
    val *s = eval_str_buf(cx, &b);
    if (s && inexact && s->rc == 1) s->flags |= VF_INEXACT;
    return s;
}

static val *eval_attr(eval_cx *cx, const ir_node *n)
{
    val *o = eval_expr(cx, n->kid[0]);
    if (!o) return NULL;
    val *r = NULL;
    int m;
    if (o->kind == V_MODULE) {
        r = eval_module_attr(cx, o->sub, n->text, n);
    } else if (o->kind == V_EXC && strcmp(n->text, "args") == 0) {
        if ((r = o->u.exc.args)) EV_INCREF(r);
        else r = eval_seq_new(cx, V_TUPLE, 0);
    } else if (o->kind == V_OBJ && o->u.obj.cls->attr &&
               ((r = o->u.obj.cls->attr(cx, o, n->text, n)) || cx->err.code != CR_OK)) {
        ;
    } else if ((m = attr_method(cx, n)) >= 0 && eval_method_valid(o, m)) {
        if ((r = eval_new(cx, V_METHOD))) {
            r->sub = (uint16_t)m;
            r->u.meth.self = o;
            EV_INCREF(o);
        }
    } else {
        eval_raise(cx, CR_EPY_ATTRIBUTE, n, "'%s' object has no attribute '%s'",
                   eval_type_name(o), n->text);
    }
    eval_decref(cx, o);
    return r;
}

/* An operand: a name or a literal, the most common ones, without eval_expr's stack check
 * (they do not recurse) but placed as it places them. */
static val *operand(eval_cx *cx, const ir_node *n)
{
    if (n->kind != IR_NAME && n->kind != IR_NUM) return eval_expr(cx, n);
    val *r = n->kind == IR_NAME ? load(cx, n) : constant(cx, n);
    if (!r) eval_at(cx, n);
    return r;
}

static val *expr_inner(eval_cx *cx, const ir_node *n)
{
    val *a, *b, *r;
    switch (n->kind) {
    case IR_NUM: case IR_STR: return constant(cx, n);
    case IR_NAME: return load(cx, n);
    case IR_BOOL: return eval_bool(cx, n->op != 0);
    case IR_NONE: return eval_none(cx);
    case IR_ELLIPSIS: return eval_ellipsis(cx);
    case IR_BINOP:
        if (!(a = operand(cx, n->kid[0]))) return NULL;
        if (!(b = operand(cx, n->kid[1]))) { eval_decref(cx, a); return NULL; }
        r = eval_binop(cx, n->op, a, b, n);
        eval_decref(cx, a);
        eval_decref(cx, b);
        return r;
    case IR_UNARY: return eval_unary(cx, n);
    case IR_BOOLOP:
        if (!(a = eval_expr(cx, n->kid[0]))) return NULL;
        if (eval_truth(cx, a) == (n->op == IR_OR)) return a;
        eval_decref(cx, a);
        return eval_expr(cx, n->kid[1]);
    case IR_COMPARE: return eval_compare(cx, n);
    case IR_IFEXP:
        if (!(a = eval_expr(cx, n->kid[0]))) return NULL;
        r = eval_expr(cx, n->kid[eval_truth(cx, a) ? 1 : 2]);
        eval_decref(cx, a);
        return r;
    case IR_CALL: return eval_call_expr(cx, n);
    case IR_ATTR: return eval_attr(cx, n);
    case IR_SUBSCRIPT: return eval_subscript(cx, n);
    case IR_LIST: case IR_TUPLE: case IR_SET: return eval_display(cx, n);
    case IR_DICT: return eval_dict_display(cx, n);
    case IR_LISTCOMP: case IR_SETCOMP: case IR_GENEXP: case IR_DICTCOMP:
        return eval_comp(cx, n);
    case IR_LAMBDA: return eval_make_function(cx, n);
    case IR_FSTRING: return eval_fstring(cx, n);
    case IR_STARRED:
        return eval_raise(cx, CR_ESYNTAX, n, "can't use starred expression here");
    default:
        return eval_raise(cx, CR_EINTERNAL, n, "cannot evaluate %s",
                          ir_kind_name((ir_kind)n->kind));
    }
}

static int expr_deep(eval_cx *cx, void *p)
{
    deep_call *d = p;
    return (d->r = eval_expr(cx, d->n)) ? 0 : -1;
}

/* An expression's depth is bounded by the syntax tree's (limits.max_depth) in each frame;
 * only the stack is watched. */
val *eval_expr(eval_cx *cx, const ir_node *n)
{
    if (eval_stack_low(cx)) {
        deep_call d = { .n = n };
        return eval_deep(cx, expr_deep, &d) < 0 ? NULL : d.r;
    }
    val *r = expr_inner(cx, n);
    if (!r && cx->err.line == 0) {
        cx->err.line = n->line;
        cx->err.col = n->col;
    }
    return r;
}

/* ---- statements ------------------------------------------------------------------------ */

int eval_augassign(eval_cx *cx, const ir_node *n)
{
    const ir_node *t = n->kid[0];
    val *obj = NULL, *key = NULL, *cur = NULL, *v = NULL, *r = NULL;
    int rc = -1;
    if (t->kind == IR_NAME) {
        if (!(cur = load(cx, t))) return -1;
    } else if (t->kind == IR_SUBSCRIPT && t->kid[1]->kind != IR_SLICE) {
        if (!(obj = eval_expr(cx, t->kid[0]))) return -1;
        if (tuple_holds_slice(t->kid[1])) {   /* the load comes first, and fails */
            raise_slice_tuple(cx, obj, t, SUB_LOAD);
            goto out;
        }
        if (!(key = eval_expr(cx, t->kid[1]))) goto out;
        if (!(cur = eval_get_item(cx, obj, key, t))) goto out;
    } else {
        if (!(obj = eval_expr(cx, t->kid[0]))) return -1;
        eval_raise(cx, CR_EPY_ATTRIBUTE, t, "'%s' object has no attribute '%s'",
                   eval_type_name(obj), t->text ? t->text : "");
        goto out;
    }
    if (!(v = eval_expr(cx, n->kid[1]))) goto out;
    if (cur->kind == V_LIST && n->op == IR_ADD) {
        /* list += iterable extends in place, as CPython's __iadd__ */
        val *items = eval_list_of(cx, v, V_LIST);
        if (!items) goto out;
        rc = eval_walk(cx, items->u.seq.len, 0, n);
        for (size_t i = 0; i < items->u.seq.len && rc == 0; i++) {
            EV_INCREF(items->u.seq.it[i]);
            rc = eval_seq_push(cx, cur, items->u.seq.it[i]);
        }
        eval_decref(cx, items);
        if (rc < 0) goto out;
        r = cur;
        EV_INCREF(r);
    } else if (cur->kind == V_DICT && n->op == IR_BITOR && v->kind != V_DICT) {
        /* dict |= pairs takes what update() takes */
        eval_args ua = { .pos = &v, .npos = 1 };
        if (!(r = eval_method_call(cx, cur, eval_method_lookup("update"), &ua, n))) goto out;
        eval_decref(cx, r);
        r = cur;
        EV_INCREF(r);
    } else if (!(r = eval_operate(cx, n->op, cur, v, 1, n))) {
        goto out;
    }
    if (t->kind == IR_NAME) {
        rc = eval_store_ref(cx, t, r);
    } else {
        rc = set_item(cx, obj, key, r, t);
    }
    r = NULL;
out:
    eval_decref(cx, obj);
    eval_decref(cx, key);
    eval_decref(cx, cur);
    eval_decref(cx, v);
    eval_decref(cx, r);
    return rc;
}

/* `from m import *`, at module level (the whitelist sees to it): binds the names of m the
 * program mentions, which are the only ones it can read. */
int eval_import_star(eval_cx *cx, int mod, const ir_node *n)
{
    const char *name;
    for (int i = registry_next(mod, 0, &name); i >= 0; i = registry_next(mod, i + 1, &name)) {
        int sym = resolve_find(&cx->rs, name);
        if (sym < 0) continue;
        val *v = eval_module_attr(cx, mod, name, n);
        if (!v) return -1;
        eval_decref(cx, cx->globals[sym]);
        cx->globals[sym] = v;
    }
    return 0;
}

/* The slot a name is stored in, or NULL. */
val **eval_name_slot(eval_cx *cx, const ir_node *t)
{
    const res_ent *e = resolve_get(&cx->rs, t);
    return !e ? NULL : e->ref.kind == REF_GLOBAL ? &cx->globals[e->ref.idx] : frame_at(cx, &e->ref);
}

int eval_del_target(eval_cx *cx, const ir_node *t)
{
    if (t->kind == IR_NAME) {
        val **slot = eval_name_slot(cx, t);
        if (!slot || !*slot) {
            eval_raise(cx, CR_EPY_NAME, t, "name '%s' is not defined", t->text);
            return -1;
        }
        val *old = *slot;
        *slot = NULL;
        eval_decref(cx, old);
        return 0;
    }
    if (t->kind == IR_TUPLE || t->kind == IR_LIST) {
        for (uint32_t i = 0; i < t->n; i++)
            if (eval_del_target(cx, t->kid[i]) < 0) return -1;
        return 0;
    }
    if (t->kind != IR_SUBSCRIPT) {
        eval_raise(cx, CR_ESYNTAX, t, "cannot delete %s", ir_kind_name((ir_kind)t->kind));
        return -1;
    }
    val *o = eval_expr(cx, t->kid[0]), *k;
    int rc = -1;
    if (!o) return -1;
    if (t->kid[1]->kind == IR_SLICE) {
        rc = set_slice(cx, o, t->kid[1], NULL, t);
    } else if (tuple_holds_slice(t->kid[1])) {
        raise_slice_tuple(cx, o, t, SUB_DELETE);
    } else if ((k = eval_expr(cx, t->kid[1]))) {
        int64_t i;
        if (o->kind == V_LIST) {
            if (eval_norm_index(cx, k, o->u.seq.len, &i, "list assignment", o, t) == 0 &&
                eval_walk(cx, 0, (o->u.seq.len - (size_t)i) * sizeof(val *), t) == 0) {
                eval_decref(cx, o->u.seq.it[i]);
                memmove(o->u.seq.it + i, o->u.seq.it + i + 1,
                        (o->u.seq.len - (size_t)i - 1) * sizeof(val *));
                o->u.seq.len--;
                rc = 0;
            }
        } else if (o->kind == V_DICT) {
            rc = eval_dict_del(cx, o, k);
            if (rc == 0) { eval_key_error(cx, k, t); rc = -1; }
            else if (rc > 0) rc = 0;
        } else {
            eval_raise(cx, CR_EPY_TYPE, t, "'%s' object does not support item deletion",
                       eval_type_name(o));
        }
        eval_decref(cx, k);
    }
    eval_decref(cx, o);
    return rc;
}
