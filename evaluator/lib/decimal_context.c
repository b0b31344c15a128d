/* evaluator/lib/decimal_context.c: decimal's contexts: the Context objects (the current one
 * is the run's eval_cx.dec, which every operation in mod_decimal.c reads), setcontext and
 * getcontext, localcontext's manager, and the ROUND_* names. */
#include <stdio.h>
#include <string.h>

#include "evaluator/lib/decimal_int.h"

/* A Context object: the current one is cx->dec (which every operation reads), the others
 * keep theirs here; `with localcontext()` swaps them (ctx_switch). */
#define CTX_OF(v) ((eval_decctx *)(v)->u.obj.data)

static void ctx_get(eval_cx *cx, val *self, eval_decctx *out)
{
    *out = self == cx->dec_cur ? cx->dec : *CTX_OF(self);
}

static void ctx_put(eval_cx *cx, val *self, const eval_decctx *c)
{
    if (self != cx->dec_cur) *CTX_OF(self) = *c;
    else cx->dec = *c;
}

/* The current context as an object (borrowed), made the first time one is asked for. */
static val *ctx_current(eval_cx *cx)
{
    if (!cx->dec_cur && (cx->dec_cur = eval_obj_new(cx, &dec_ctx_cls, sizeof(eval_decctx))))
        *CTX_OF(cx->dec_cur) = cx->dec;
    return cx->dec_cur;
}

/* setcontext(c): the current context's fields go home to its object, c's come in. */
static void ctx_switch(eval_cx *cx, val *c)
{
    eval_decctx now;
    val *old = cx->dec_cur;
    if (c == old) return;
    ctx_get(cx, old, &now);
    cx->dec_cur = c;
    ctx_put(cx, old, &now);
    EV_INCREF(c);
    ctx_put(cx, c, CTX_OF(c));
    eval_decref(cx, old);
}

/* The signals of `bits` as Context's repr lists them: libmpdec's order of conditions, the
 * first of InvalidOperation's three bits naming it. */
static cr_code put_signals(cr_buf *b, unsigned bits)
{
    static const uint8_t order[] = { SG_CLAMPED, SG_INVALID, SG_DIVZERO, SG_INV_DIV, SG_INEXACT,
                                     SG_INV_OP, SG_FLOAT, SG_OVERFLOW, SG_ROUNDED, SG_SUBNORMAL,
                                     SG_UNDERFLOW };
    cr_code rc = cr_buf_puts(b, "[");
    const char *sep = "";
    for (size_t i = 0; i < sizeof order && rc == CR_OK; i++) {
        int s = order[i];
        if (!(bits & (1u << s))) continue;
        if (s == SG_INV_DIV || s == SG_INV_OP) {
            if (bits & (1u << SG_INVALID)) continue;
            bits |= 1u << SG_INVALID;
            s = SG_INVALID;
        }
        rc = cr_buf_printf(b, "%s%s", sep, dec_sig_names[s]);
        sep = ", ";
    }
    return rc == CR_OK ? cr_buf_puts(b, "]") : rc;
}

static int ctx_repr(eval_cx *cx, cr_buf *b, val *self, int as_str)
{
    CR_UNUSED(as_str);
    eval_decctx c;
    ctx_get(cx, self, &c);
    cr_code rc = cr_buf_printf(b, "Context(prec=%lld, rounding=%s, Emin=%lld, Emax=%lld, "
                               "capitals=1, clamp=%d, flags=", (long long)(c.prec ? c.prec : 28),
                               dec_round_names[c.round], (long long)(DEC_EMIN + c.emin),
                               (long long)(DEC_EMAX - c.emax), c.clamp);
    if (rc == CR_OK) rc = put_signals(b, c.flags & ((1u << (SG_INV_OP + 1)) - 1));
    if (rc == CR_OK) rc = cr_buf_puts(b, ", traps=");
    if (rc == CR_OK) rc = put_signals(b, c.traps ^ DEFAULT_TRAPS);
    if (rc == CR_OK) rc = cr_buf_puts(b, ")");
    if (rc != CR_OK) dec_fmt_fail(cx, rc, NULL);
    return rc == CR_OK ? 0 : -1;
}

static val *ctx_attr(eval_cx *cx, val *self, const char *name, const ir_node *at)
{
    eval_decctx c;
    ctx_get(cx, self, &c);
    if (strcmp(name, "prec") == 0) return eval_int_si(cx, (long)(c.prec ? c.prec : 28));
    if (strcmp(name, "rounding") == 0) return eval_str(cx, dec_round_names[c.round], strlen(dec_round_names[c.round]));
    if (strcmp(name, "Emax") == 0) return eval_int_si(cx, (long)(DEC_EMAX - c.emax));
    if (strcmp(name, "Emin") == 0) return eval_int_si(cx, (long)(DEC_EMIN + c.emin));
    if (strcmp(name, "clamp") == 0) return eval_int_si(cx, c.clamp);
    if (strcmp(name, "capitals") == 0) return eval_int_si(cx, 1);
    return eval_raise(cx, CR_EPY_ATTRIBUTE, at, "'decimal.Context' object has no attribute '%s'", name);
}

/* The signal a class stands for (the subset has three of CPython's nine), or -1. */
static int signal_of(const val *v)
{
    if (v->kind != V_BUILTIN) return -1;
    return v->sub == B_INVALIDOPERATION ? SG_INVALID : v->sub == B_DIVISIONBYZERO ? SG_DIVZERO
         : v->sub == B_DECOVERFLOW ? SG_OVERFLOW : -1;
}

/* traps= or flags= as Context() takes them: a list of signals (a dict's keys whose values
 * are true are not in the subset yet). The bits, or -1 raised. */
static long signal_list(eval_cx *cx, val *v, const ir_node *at)
{
    long bits = 0;
    if (v->kind != V_LIST) {
        eval_raise(cx, CR_EUNSUPPORTED, at, "Context's signals other than a list are outside the subset");
        return -1;
    }
    for (size_t i = 0; i < v->u.seq.len; i++) {
        int s = signal_of(v->u.seq.it[i]);
        if (s < 0) {
            eval_raise(cx, CR_EPY_KEY, at, "invalid error flag in list");
            return -1;
        }
        bits |= 1L << s;
    }
    return bits;
}

/* An int setting within [lo, hi], or ValueError with CPython's message. 0, -1 raised. */
static int ctx_int(eval_cx *cx, val *v, int64_t lo, int64_t hi, const char *msg, int64_t *out,
                   const ir_node *at)
{
    if (eval_ssize_of(cx, v, "an integer is required", out, at) < 0) return -1;
    if (*out < lo || *out > hi) {
        eval_raise(cx, CR_EPY_VALUE, at, "%s", msg);
        return -1;
    }
    return 0;
}

static int ctx_setattr(eval_cx *cx, val *self, const char *name, val *v, const ir_node *at)
{
    eval_decctx c;
    int64_t n;
    long bits;
    ctx_get(cx, self, &c);
    if (strcmp(name, "prec") == 0) {
        if (ctx_int(cx, v, 1, DEC_MAX_PREC, "valid range for prec is [1, MAX_PREC]", &n, at) < 0) return -1;
        c.prec = n;
    } else if (strcmp(name, "rounding") == 0) {
        int mode = -1;
        if (dec_rounding_arg(cx, v->kind == V_STR ? v : &cx->none, &mode, at) < 0) return -1;
        c.round = (uint8_t)mode;
    } else if (strcmp(name, "Emax") == 0) {
        if (ctx_int(cx, v, 0, DEC_MAX_PREC, "valid range for Emax is [0, MAX_EMAX]", &n, at) < 0) return -1;
        c.emax = DEC_EMAX - n;
    } else if (strcmp(name, "Emin") == 0) {
        if (ctx_int(cx, v, -DEC_MAX_PREC, 0, "valid range for Emin is [MIN_EMIN, 0]", &n, at) < 0) return -1;
        c.emin = n - DEC_EMIN;
    } else if (strcmp(name, "clamp") == 0) {
        if (ctx_int(cx, v, 0, 1, "valid values for clamp are 0 or 1", &n, at) < 0) return -1;
        c.clamp = (uint8_t)n;
    } else if (strcmp(name, "capitals") == 0) {
        if (eval_ssize_of(cx, v, "an integer is required", &n, at) < 0) return -1;
        if (n != 1) {
            eval_raise(cx, CR_EUNSUPPORTED, at, "capitals=%lld is outside the subset", (long long)n);
            return -1;
        }
    } else if (strcmp(name, "traps") == 0 || strcmp(name, "flags") == 0) {
        if ((bits = signal_list(cx, v, at)) < 0) return -1;
        if (name[0] == 't') c.traps = (uint16_t)(bits ^ DEFAULT_TRAPS);
        else c.flags = (uint16_t)bits;
    } else {
        eval_raise(cx, CR_EPY_ATTRIBUTE, at, "'decimal.Context' object has no attribute '%s'", name);
        return -1;
    }
    ctx_put(cx, self, &c);
    return 0;
}

const eval_class dec_ctx_cls = {
    .name = "decimal.Context", .repr = ctx_repr, .attr = ctx_attr, .setattr = ctx_setattr,
};

val *eval_dec_getcontext(eval_cx *cx, eval_args *a, const ir_node *at)
{
    CR_UNUSED(a);
    val *c = ctx_current(cx);
    if (c) EV_INCREF(c);
    else eval_at(cx, at);
    return c;
}

/* setcontext(c): c itself becomes the current context (a later change to c changes it), as
 * CPython's does for any context but its templates, which the subset does not have. */
val *eval_dec_setcontext(eval_cx *cx, eval_args *a, const ir_node *at)
{
    val *c = a->pos[0];
    if (c->kind != V_OBJ || c->u.obj.cls != &dec_ctx_cls)
        return eval_raise(cx, CR_EPY_TYPE, at, "argument must be a context");
    if (!ctx_current(cx)) return eval_at(cx, at), NULL;
    ctx_switch(cx, c);
    return eval_none(cx);
}

static const char *const ctx_kws[] = { "prec", "rounding", "Emin", "Emax", "capitals", "clamp",
                                       "flags", "traps" };

/* A new context from the settings given and the defaults (CPython's DefaultContext: 28,
 * ROUND_HALF_EVEN, no flags), or from base's settings. NULL raised. */
static val *ctx_new(eval_cx *cx, val *base, val *const *set, const ir_node *at)
{
    val *c = eval_obj_new(cx, &dec_ctx_cls, sizeof(eval_decctx));
    if (!c) return eval_at(cx, at), NULL;
    if (base) ctx_get(cx, base, CTX_OF(c));
    for (int i = 0; i < 8; i++)
        if (set[i] && set[i]->kind != V_NONE && ctx_setattr(cx, c, ctx_kws[i], set[i], at) < 0) {
            eval_decref(cx, c);
            return NULL;
        }
    return c;
}

static int ctx_type_repr(eval_cx *cx, cr_buf *b, val *self, int as_str)
{
    CR_UNUSED(self);
    CR_UNUSED(as_str);
    cr_code rc = cr_buf_puts(b, "<class 'decimal.Context'>");
    if (rc != CR_OK) dec_fmt_fail(cx, rc, NULL);
    return rc == CR_OK ? 0 : -1;
}

static val *ctx_type_call(eval_cx *cx, val *self, eval_args *a, const ir_node *at)
{
    CR_UNUSED(self);
    val *arg[8];
    if (dec_method_args(cx, a, ctx_kws, 8, 0, arg, "Context", at) < 0) return NULL;
    return ctx_new(cx, NULL, arg, at);
}

static const eval_class ctx_type_cls = {
    .name = "type", .repr = ctx_type_repr, .eq = dec_type_eq, .hash = dec_type_hash,
    .call = ctx_type_call,
};

val *eval_dec_context_class(eval_cx *cx, const ir_node *at)
{
    CR_UNUSED(at);
    return eval_obj_new(cx, &ctx_type_cls, 0);
}

/* localcontext()'s manager: `local`, a copy made when it was called, is the current context
 * inside the block; `saved` is the one to go back to. */
typedef struct {
    val *local, *saved;
} dmgr;
#define MGR_OF(v) ((dmgr *)(v)->u.obj.data)

static void mgr_drop(eval_cx *cx, val *self)
{
    eval_decref(cx, MGR_OF(self)->local);
    eval_decref(cx, MGR_OF(self)->saved);
}

static int mgr_repr(eval_cx *cx, cr_buf *b, val *self, int as_str)
{
    CR_UNUSED(as_str);
    cr_code rc = cr_buf_printf(b, "<decimal.ContextManager object at %p>", (void *)self);
    if (rc != CR_OK) dec_fmt_fail(cx, rc, NULL);
    return rc == CR_OK ? 0 : -1;
}

static val *mgr_enter(eval_cx *cx, val *self, const ir_node *at)
{
    dmgr *m = MGR_OF(self);
    val *cur = ctx_current(cx);
    if (!cur) return eval_at(cx, at), NULL;
    EV_INCREF(cur);
    eval_decref(cx, m->saved);
    m->saved = cur;
    ctx_switch(cx, m->local);
    EV_INCREF(m->local);
    return m->local;
}

static void mgr_exit(eval_cx *cx, val *self)
{
    dmgr *m = MGR_OF(self);
    if (!m->saved) return;
    ctx_switch(cx, m->saved);
    eval_decref(cx, m->saved);
    m->saved = NULL;
}

static const eval_class mgr_cls = {
    .name = "decimal.ContextManager", .drop = mgr_drop, .repr = mgr_repr, .enter = mgr_enter,
    .exit = mgr_exit,
};

/* localcontext(ctx=None, prec=None, rounding=None, ...): a copy of ctx (or of the current
 * context) with the settings given. */
val *eval_dec_localcontext(eval_cx *cx, eval_args *a, const ir_node *at)
{
    static const char *const kws[] = { "ctx", "prec", "rounding", "Emin", "Emax", "capitals",
                                        "clamp", "flags", "traps" };
    val *arg[9], *base, *local, *mgr;
    if (dec_method_args(cx, a, kws, 9, 0, arg, "localcontext", at) < 0) return NULL;
    if (arg[0] && arg[0]->kind != V_NONE && !(arg[0]->kind == V_OBJ && arg[0]->u.obj.cls == &dec_ctx_cls))
        return eval_raise(cx, CR_EPY_TYPE, at, "optional argument must be a context");
    base = arg[0] && arg[0]->kind != V_NONE ? arg[0] : ctx_current(cx);
    if (!base || !(local = ctx_new(cx, base, arg + 1, at))) return NULL;
    if ((mgr = eval_obj_new(cx, &mgr_cls, sizeof(dmgr)))) MGR_OF(mgr)->local = local;
    else eval_decref(cx, local);
    return mgr;
}

static val *round_name(eval_cx *cx, int mode)
{
    return eval_str(cx, dec_round_names[mode], strlen(dec_round_names[mode]));
}
#define ROUND_GETTER(fn, mode) \
    val *fn(eval_cx *cx, const ir_node *at) { CR_UNUSED(at); return round_name(cx, mode); }
ROUND_GETTER(eval_dec_half_even, RD_HALF_EVEN)
ROUND_GETTER(eval_dec_half_up, RD_HALF_UP)
ROUND_GETTER(eval_dec_half_down, RD_HALF_DOWN)
ROUND_GETTER(eval_dec_up, RD_UP)
ROUND_GETTER(eval_dec_down, RD_DOWN)
ROUND_GETTER(eval_dec_ceiling, RD_CEILING)
ROUND_GETTER(eval_dec_floor, RD_FLOOR)
ROUND_GETTER(eval_dec_05up, RD_05UP)
