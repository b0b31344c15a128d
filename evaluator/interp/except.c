/* evaluator/interp/except.c: raise, try/except/finally, with and assert: how an exception
 * propagates and is caught. */
#include "evaluator/interp/interp.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- exceptions ------------------------------------------------------------------------
 * An exception propagates as cx->err (code, type name, message, place), the one form
 * callers see, plus cx->exc when it is an object err cannot describe. Only a Python
 * exception is caught: err_class() knows no class for CR_ELIMIT, CR_ENOMEM or CR_EINTERNAL,
 * so a limit passes every `except` and skips every `finally` (a `finally: return` would
 * otherwise swallow it). */

/* The class of the propagating error, or -1 when it is not a Python exception. */
static int err_class(const eval_cx *cx)
{
    if (cx->exc) return cx->exc->sub;
    /* a module's class names itself in err.type (StatisticsError, InvalidOperation) */
    int id = eval_exc_lookup(cx->err.type);
    if (id >= 0 && (cx->err.code == CR_EPY_EXCEPTION ||
                    eval_exc_is(id, eval_exc_of_code(cx->err.code))))
        return id;
    return cx->err.code == CR_EPY_EXCEPTION ? -1 : eval_exc_of_code(cx->err.code);
}

/* Where CPython 3.11 places a failed assert: its compiler leaves the location of the last
 * comparison that its conditional-jump pass reached (through `not`, `and`/`or` and the three
 * parts of `x if c else y`, in source order) on the raise, and the statement's otherwise. */
static const ir_node *assert_compare(const ir_node *n, const ir_node *last)
{
    if (!n) return last;
    switch (n->kind) {
    case IR_COMPARE: return n;
    case IR_UNARY: return n->op == IR_NOT ? assert_compare(n->kid[0], last) : last;
    case IR_BOOLOP:
    case IR_IFEXP:
        for (uint32_t i = 0; i < n->n; i++) last = assert_compare(n->kid[i], last);
        return last;
    default: return last;
    }
}

const ir_node *eval_assert_site(const ir_node *stmt)
{
    const ir_node *c = assert_compare(stmt->kid[0], NULL);
    return c ? c : stmt;
}

/* The propagating Python exception as an object (new reference), err cleared and kept in
 * *saved; NULL when err is not a Python exception (or making the object failed: err then
 * says why). An exception the evaluator raised has its message as its one argument. */
static val *take_exception(eval_cx *cx, cr_error *saved)
{
    int id = err_class(cx);
    if (id < 0) return NULL;
    *saved = cx->err;
    val *e = cx->exc, *m = NULL;
    cx->exc = NULL;
    memset(&cx->err, 0, sizeof cx->err);
    if (!e) {
        if (saved->message[0] && !(m = eval_str(cx, saved->message, strlen(saved->message))))
            return NULL;
        e = eval_exc_new1(cx, id, m);
        eval_decref(cx, m);
        if (!e) return NULL;
    }
    if (!e->u.exc.line) {
        e->u.exc.line = saved->line;
        e->u.exc.col = saved->col;
    }
    return e;
}

/* Puts back what take_exception() took. */
static void restore_exception(eval_cx *cx, val *e, const cr_error *saved)
{
    eval_decref(cx, cx->exc);
    cx->err = *saved;
    cx->exc = e;
}

/* `raise X` and `from Y` accept a class (called with no argument) or an instance; a new
 * reference, or NULL after TypeError(what). */
static val *exc_instance(eval_cx *cx, val *v, const ir_node *at, const char *what)
{
    if (v->kind == V_BUILTIN && IS_EXC_CLASS(v->sub)) return eval_exc_new1(cx, v->sub, NULL);
    if (v->kind == V_EXC) {
        EV_INCREF(v);
        return v;
    }
    return eval_raise(cx, CR_EPY_TYPE, at, "%s must derive from BaseException", what);
}

int eval_do_raise(eval_cx *cx, const ir_node *n)
{
    if (!n->kid[0]) {
        if (cx->handled) {
            EV_INCREF(cx->handled);
            return eval_raise_obj(cx, cx->handled, n);
        }
        eval_raise(cx, CR_EPY_EXCEPTION, n, "No active exception to reraise");
        snprintf(cx->err.type, sizeof cx->err.type, "RuntimeError");
        return -1;
    }
    val *v = eval_expr(cx, n->kid[0]), *e, *c;
    if (!v) return -1;
    e = exc_instance(cx, v, n, "exceptions");
    eval_decref(cx, v);
    if (!e) return -1;
    if (n->n > 1 && n->kid[1]) {
        /* the cause shows only in CPython's traceback: it is checked, then dropped */
        if (!(v = eval_expr(cx, n->kid[1]))) { eval_decref(cx, e); return -1; }
        c = v->kind == V_NONE ? eval_none(cx) : exc_instance(cx, v, n, "exception causes");
        eval_decref(cx, v);
        if (!c) { eval_decref(cx, e); return -1; }
        eval_decref(cx, c);
    }
    return eval_raise_obj(cx, e, n);
}

/* Whether exception class id matches an `except` clause's value: a class or a tuple of
 * classes. 1, 0, or -1 after CPython's TypeError for anything else. */
static int exc_matches(eval_cx *cx, int id, val *t, const ir_node *at)
{
    int hit = 0;
    val *const *it = &t;
    size_t n = 1;
    if (t->kind == V_TUPLE) {
        it = t->u.seq.it;
        n = t->u.seq.len;
        if (eval_walk(cx, n, 0, at) < 0) return -1;
    }
    for (size_t i = 0; i < n; i++) {
        if (it[i]->kind != V_BUILTIN || !IS_EXC_CLASS(it[i]->sub)) {
            eval_raise(cx, CR_EPY_TYPE, at,
                       "catching classes that do not inherit from BaseException is not allowed");
            return -1;
        }
        hit |= eval_exc_is(id, it[i]->sub);
    }
    return hit;
}

/* Runs the first handler of try statement n that matches the propagating exception, with
 * the exception bound to its `as` name and deleted after, as CPython does. X_ERROR with the
 * exception back in err when none matches. */
static xres handle(eval_cx *cx, const ir_node *n)
{
    cr_error saved;
    /* the object, its arguments and message, and the match: charged as a few steps */
    if (err_class(cx) < 0 || eval_count(cx, 4, n) < 0) return X_ERROR;
    val *e = take_exception(cx, &saved);
    if (!e) return X_ERROR;
    for (uint32_t i = 1; i + 2 < n->n; i++) {
        const ir_node *h = n->kid[i];
        if (h->kid[0]) {
            val *t = eval_expr(cx, h->kid[0]);
            int m = t ? exc_matches(cx, e->sub, t, h->kid[0]) : -1;
            eval_decref(cx, t);
            if (m < 0) { eval_decref(cx, e); return X_ERROR; }
            if (!m) continue;
        }
        int64_t last = cx->last_assigned;   /* the exception is not an answer */
        if (h->kid[1] && eval_assign(cx, h->kid[1], e) < 0) { eval_decref(cx, e); return X_ERROR; }
        cx->last_assigned = last;
        val *outer = cx->handled;
        cx->handled = e;
        xres x = eval_exec_block(cx, h->kid[2]);
        cx->handled = outer;
        eval_decref(cx, e);
        val **slot;
        if (h->kid[1] && (slot = eval_name_slot(cx, h->kid[1])) && *slot) {
            val *old = *slot;
            *slot = NULL;
            eval_decref(cx, old);
        }
        return x;
    }
    restore_exception(cx, e, &saved);
    return X_ERROR;
}

/* try/except/else/finally. The finally block runs after whatever left the rest (an
 * exception, return, break, continue); what it does itself (an exception, a return)
 * replaces that, else that goes on. */
xres eval_exec_try(eval_cx *cx, const ir_node *n)
{
    const ir_node *orelse = n->kid[n->n - 2], *fin = n->kid[n->n - 1];
    xres x = eval_exec_block(cx, n->kid[0]);
    if (x == X_ERROR && n->n > 3) x = handle(cx, n);
    else if (x == X_NORMAL && orelse) x = eval_exec_block(cx, orelse);
    if (!fin) return x;
    cr_error saved;
    val *e = NULL, *ret = NULL, *outer = cx->handled;
    if (x == X_ERROR) {
        if (!(e = take_exception(cx, &saved))) return X_ERROR;   /* not a Python exception */
        cx->handled = e;   /* as CPython: a bare `raise` in the finally re-raises it */
    } else if (x == X_RETURN) {
        ret = cx->retval;
        cx->retval = NULL;
    }
    xres f = eval_exec_block(cx, fin);
    cx->handled = outer;
    if (f != X_NORMAL) {
        eval_decref(cx, e);
        eval_decref(cx, ret);
        return f;
    }
    if (e) restore_exception(cx, e, &saved);
    if (ret) cx->retval = ret;
    return x;
}

/* `with` from item i of n on: the manager's exit runs however the rest ends (an exception,
 * return, break, continue), after the items that follow it have exited, as nesting them
 * would. */
xres eval_exec_with(eval_cx *cx, const ir_node *n, uint32_t i)
{
    if (i + 1 >= n->n) return eval_exec_block(cx, n->kid[n->n - 1]);
    const ir_node *it = n->kid[i];
    val *m = eval_expr(cx, it->kid[0]), *v;
    if (!m) return X_ERROR;
    const eval_class *c = m->kind == V_OBJ ? m->u.obj.cls : NULL;
    if (!c || !c->enter) {
        eval_raise(cx, CR_EPY_TYPE, it->kid[0], "'%s' object does not support the context "
                   "manager protocol", eval_type_name(m));
        eval_decref(cx, m);
        return X_ERROR;
    }
    if (eval_count(cx, 1, it) < 0 || !(v = c->enter(cx, m, it))) {
        eval_decref(cx, m);
        return X_ERROR;
    }
    xres x = X_NORMAL;
    if (it->kid[1]) {
        int64_t last = cx->last_assigned;   /* the manager's value is not an answer */
        if (eval_assign(cx, it->kid[1], v) < 0) x = X_ERROR;
        cx->last_assigned = last;
    }
    eval_decref(cx, v);
    if (x == X_NORMAL) x = eval_exec_with(cx, n, i + 1);
    c->exit(cx, m);
    eval_decref(cx, m);
    return x;
}
