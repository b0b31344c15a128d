/* evaluator/value/exceptions.c: the exception classes of subset.def's EXC rows: CPython's hierarchy
 * among them, the status code each raises with, and their instances. How an exception
 * propagates and is caught is the interpreter's (eval.c). */
#include "evaluator/value/value.h"

#include <stdio.h>
#include <string.h>

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

/* The exception classes with a status code of their own; the others are CR_EPY_EXCEPTION
 * with the class name as err.type. */
static const struct { uint16_t id; cr_code code; } exc_codes[] = {
    { B_ZERODIV, CR_EPY_ZERODIV }, { B_NAMEERROR, CR_EPY_NAME },
    { B_UNBOUNDERROR, CR_EPY_UNBOUND }, { B_TYPEERROR, CR_EPY_TYPE },
    { B_VALUEERROR, CR_EPY_VALUE }, { B_OVERFLOWERROR, CR_EPY_OVERFLOW },
    { B_INDEXERROR, CR_EPY_INDEX }, { B_KEYERROR, CR_EPY_KEY },
    { B_ATTRIBUTEERROR, CR_EPY_ATTRIBUTE }, { B_ASSERTIONERROR, CR_EPY_ASSERTION },
    { B_RECURSIONERROR, CR_EPY_RECURSION },
};

cr_code eval_exc_code(int id)
{
    for (size_t i = 0; i < sizeof exc_codes / sizeof exc_codes[0]; i++)
        if (exc_codes[i].id == id) return exc_codes[i].code;
    return CR_EPY_EXCEPTION;
}

int eval_exc_of_code(cr_code c)
{
    for (size_t i = 0; i < sizeof exc_codes / sizeof exc_codes[0]; i++)
        if (exc_codes[i].code == c) return exc_codes[i].id;
    return -1;
}

val *eval_exc_new(eval_cx *cx, int id, val **args, size_t n)
{
    val *e = eval_new(cx, V_EXC);
    if (!e) return NULL;
    e->sub = (uint16_t)id;
    if (n) {
        val *t = eval_seq_new(cx, V_TUPLE, n);
        if (!t) { eval_decref(cx, e); return NULL; }
        for (size_t i = 0; i < n; i++) {
            EV_INCREF(args[i]);
            t->u.seq.it[t->u.seq.len++] = args[i];
        }
        e->u.exc.args = t;
    }
    return e;
}

val *eval_exc_new1(eval_cx *cx, int id, val *arg)
{
    return eval_exc_new(cx, id, &arg, arg != NULL);
}

/* Raises e (stolen): err says str(e) at `at`, or where e was first raised. -1. */
int eval_raise_obj(eval_cx *cx, val *e, const ir_node *at)
{
    val *msg = eval_to_str(cx, e, 0);
    if (!msg) { eval_decref(cx, e); return -1; }
    cr_code c = eval_exc_code(e->sub);
    eval_raise(cx, c, at, "%s", msg->u.str.s);
    eval_decref(cx, msg);
    if (c == CR_EPY_EXCEPTION)
        snprintf(cx->err.type, sizeof cx->err.type, "%s", eval_builtin_name(e->sub));
    if (e->u.exc.line) {
        cx->err.line = e->u.exc.line;
        cx->err.col = e->u.exc.col;
    }
    cx->exc = e;
    return -1;
}

val *eval_key_error(eval_cx *cx, val *k, const ir_node *at)
{
    val *e = eval_exc_new1(cx, B_KEYERROR, k);
    if (e) eval_raise_obj(cx, e, at);
    return NULL;
}

/* the exception classes' rows: an instance of the row's class */
#define EXC(mod, name, id, sig) \
    val *eval_exc_##id(eval_cx *cx, eval_args *a, const ir_node *at) \
    { \
        (void)at; \
        return eval_exc_new(cx, id, a->pos, a->npos); \
    }
#include "ir/subset.def"
