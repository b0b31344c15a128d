/* evaluator/lib/dispatch.c: how a call reaches a function of subset.def: each row's
 * implementation, the binding of a call's arguments to the row's signature with CPython's
 * TypeErrors, the module values and their attributes, the argument checks the
 * implementations share, and the method call that hands a value to its type's methods. */
#include "evaluator/lib/lib.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

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

int eval_method_lookup(const char *name)
{
    return registry_method(name);
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
    cx->nbvals += !cx->bvals[id];
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

int eval_check_argc(eval_cx *cx, eval_args *a, size_t lo, size_t hi, const char *name,
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

val *eval_kwarg(eval_args *a, const char *name)
{
    for (size_t i = 0; i < a->nkw; i++)
        if (strcmp(a->kwname[i], name) == 0) return a->kw[i];
    return NULL;
}

int eval_check_args(eval_cx *cx, eval_args *a, size_t lo, size_t hi, const char *const *kws,
                    const char *name, const ir_node *at)
{
    return eval_check_argc(cx, a, lo, hi, name, at) < 0 || eval_check_kw(cx, a, kws, name, at) < 0
               ? -1 : 0;
}

int eval_c_int(eval_cx *cx, val *v, long *out, const ir_node *at)
{
    if (v->kind != V_INT && v->kind != V_BOOL) {
        eval_raise(cx, CR_EPY_TYPE, at, "'%s' object cannot be interpreted as an integer",
                   eval_type_name(v));
        return -1;
    }
    mpz_srcptr z = mpq_numref(v->u.q);
    if (!mpz_fits_slong_p(z)) {
        eval_raise(cx, CR_EPY_OVERFLOW, at, "Python int too large to convert to C long");
        return -1;
    }
    long n = mpz_get_si(z);
    if (n > INT32_MAX || n < INT32_MIN) {
        eval_raise(cx, CR_EPY_OVERFLOW, at, "signed integer is %s",
                   n > 0 ? "greater than maximum" : "less than minimum");
        return -1;
    }
    *out = n;
    return 0;
}

/* getargs.c's vgetargskeywords, in its order of checks. Without a name in the format CPython
 * says "function" where the name would stand, and "this function" of a bad keyword. */
int eval_parse_args(eval_cx *cx, eval_args *a, const eval_argspec *sp, val **ov, long *iv,
                    const ir_node *at)
{
    const char *fn = sp->fn ? sp->fn : "function";
    size_t n = strlen(sp->types), given = a->npos + a->nkw, used = 0;
    if (given > n) {
        eval_raise(cx, CR_EPY_TYPE, at, "%s takes at most %zu %sargument%s (%zu given)", fn, n,
                   a->npos ? "" : "keyword ", n == 1 ? "" : "s", given);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        if ((int)i == sp->maxpos && a->npos > i) {
            eval_raise(cx, CR_EPY_TYPE, at,
                       "%s takes at most %zu positional argument%s (%zu given)", fn, i,
                       i == 1 ? "" : "s", a->npos);
            return -1;
        }
        val *v = i < a->npos ? a->pos[i] : NULL;
        if (!v && (v = eval_kwarg(a, sp->names[i]))) used++;
        ov[i] = v;
        if (!v) {
            if ((int)i < sp->nreq) {
                eval_raise(cx, CR_EPY_TYPE, at, "%s missing required argument '%s' (pos %zu)",
                           fn, sp->names[i], i + 1);
                return -1;
            }
            continue;
        }
        char t = sp->types[i];
        if (t == 'i' && eval_c_int(cx, v, &iv[i], at) < 0) return -1;
        if ((t == 'U' || t == 's') && v->kind != V_STR) {
            eval_raise(cx, CR_EPY_TYPE, at, "%s argument %zu must be str, not %s", fn, i + 1,
                       eval_type_name(v));
            return -1;
        }
        if (t == 'C' && (v->kind != V_STR || v->u.str.nch != 1)) {
            eval_raise(cx, CR_EPY_TYPE, at, "%s argument %zu must be a unicode character, not %s",
                       fn, i + 1, eval_type_name(v));
            return -1;
        }
    }
    if (used == a->nkw) return 0;
    for (size_t i = 0; i < a->npos && i < n; i++)
        if (eval_kwarg(a, sp->names[i])) {
            eval_raise(cx, CR_EPY_TYPE, at,
                       "argument for %s given by name ('%s') and position (%zu)", fn,
                       sp->names[i], i + 1);
            return -1;
        }
    for (size_t k = 0; k < a->nkw; k++) {
        size_t i = 0;
        while (i < n && strcmp(sp->names[i], a->kwname[k]) != 0) i++;
        if (i == n) {
            eval_raise(cx, CR_EPY_TYPE, at, "'%s' is an invalid keyword argument for %s",
                       a->kwname[k], sp->fn ? sp->fn : "this function");
            return -1;
        }
    }
    return 0;
}

int eval_no_args(eval_cx *cx, eval_args *a, const char *qual, const ir_node *at)
{
    if (a->nkw) return eval_raise(cx, CR_EPY_TYPE, at, "%s() takes no keyword arguments", qual), -1;
    if (a->npos)
        return eval_raise(cx, CR_EPY_TYPE, at, "%s() takes no arguments (%zu given)", qual,
                          a->npos), -1;
    return 0;
}

val *eval_call1(eval_cx *cx, val *f, val *x, const ir_node *at)
{
    val *argv[1] = { x };
    eval_args a = { argv, 1, NULL, NULL, 0 };
    return cx->hooks->call(cx, f, &a, at);
}

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
        if (eval_no_args(cx, a, qual, at) < 0) return -1;
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
    case V_LIST: return eval_list_method(cx, self, id, a, at);
    case V_TUPLE: return eval_seq_index_count(cx, self, id, a, at);
    case V_DICT: return eval_dict_method(cx, self, id, a, at);
    case V_SET: return eval_set_method(cx, self, id, a, at);
    default: break;
    }
    return eval_str_method(cx, self, id, a, at);
}
