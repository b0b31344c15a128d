/* evaluator/value/repr.c: how values print: CPython's repr() and str(), type names, and whether a
 * value holds an inexact part (the result's flag). */
#include "evaluator/value/value.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unictype.h>
#include <unistr.h>

static int repr_in(eval_cx *cx, cr_buf *b, val *v, int as_str, const struct rstack *up,
                   unsigned depth);
static int inexact_in(eval_cx *cx, val *v, const struct rstack *up, unsigned depth);
static int repr_deep(eval_cx *cx, void *p)
{
    walk_level *w = p;
    return repr_in(cx, w->buf, w->a, w->as_str, w->up, w->depth);
}
static int inexact_deep(eval_cx *cx, void *p)
{
    walk_level *w = p;
    return inexact_in(cx, w->a, w->up, w->depth);
}

static const char *const iter_names[] = {
    [IT_ZIP] = "zip", [IT_MAP] = "map", [IT_FILTER] = "filter", [IT_ENUMERATE] = "enumerate",
    [IT_REVERSED] = "list_reverseiterator", [IT_GENERATOR] = "generator",
    [IT_KEYS] = "dict_keys", [IT_VALUES] = "dict_values", [IT_ITEMS] = "dict_items",
};

static int is_type_builtin(int id)
{
    switch (id) {
    case B_BOOL: case B_DICT: case B_FLOAT: case B_INT: case B_LIST: case B_SET: case B_STR:
    case B_TUPLE: case B_RANGE: case B_ENUMERATE: case B_FILTER: case B_MAP: case B_ZIP:
    case B_REVERSED:
        return 1;
    default:
        return IS_EXC_CLASS(id);
    }
}

const char *eval_builtin_name(int id)
{
    return registry_func_name(id);
}

const char *eval_method_name(int id)
{
    return registry_method_name(id);
}

const char *eval_type_name(const val *v)
{
    switch (v->kind) {
    case V_NONE: return "NoneType";
    case V_BOOL: return "bool";
    case V_INT: return "int";
    case V_FLOAT: case V_INF: return "float";
    case V_STR: return "str";
    case V_LIST: return "list";
    case V_TUPLE: return "tuple";
    case V_DICT: return "dict";
    case V_SET: return "set";
    case V_RANGE: return "range";
    case V_ITER: return iter_names[v->sub];
    case V_FUNC: return "function";
    case V_BUILTIN: return is_type_builtin(v->sub) ? "type" : "builtin_function_or_method";
    case V_MODULE: return "module";
    case V_METHOD: return "builtin_function_or_method";
    case V_EXC: return eval_builtin_name(v->sub);
    case V_ELLIPSIS: return "ellipsis";
    case V_OBJ: return v->u.obj.cls->name;
    default: return "frame";
    }
}

/* ---- repr and str ---------------------------------------------------------------------- */

typedef struct rstack {
    const val *v;
    const struct rstack *up;
} rstack;

int eval_put(eval_cx *cx, cr_buf *b, const char *s, size_t n)
{
    size_t cap = b->cap;
    cr_code rc = cr_buf_put(b, s, n);
    if (rc == CR_OK) return b->cap == cap ? 0 : eval_mem_room(cx, b->cap);
    if (rc == CR_ELIMIT)
        eval_raise(cx, CR_ELIMIT, NULL, "string length limit (%llu characters)",
                   (unsigned long long)cx->lim->max_str_len);
    else
        eval_raise(cx, CR_ENOMEM, NULL, "out of memory");
    return -1;
}
#define PUTS(s) do { if (eval_put(cx, b, s, strlen(s)) < 0) return -1; } while (0)

static int num_rc(eval_cx *cx, cr_code rc)
{
    if (rc == CR_OK) return 0;
    if (rc == CR_ELIMIT)
        eval_raise(cx, CR_ELIMIT, NULL, "string length limit (%llu characters)",
                   (unsigned long long)cx->lim->max_str_len);
    else if (rc == CR_EPY_VALUE)       /* num_repr_int past CPython 3.11's conversion limit */
        eval_raise(cx, CR_EPY_VALUE, NULL,
                   "Exceeds the limit (4300 digits) for integer string conversion; use "
                   "sys.set_int_max_str_digits() to increase the limit");
    else
        eval_raise(cx, rc == CR_ENOMEM ? CR_ENOMEM : CR_EINTERNAL, NULL, "cannot render number");
    return -1;
}

/* Appends the escape repr() and ascii() write for code point cp: \xNN, \uNNNN or
 * \UNNNNNNNN, the shortest that holds it. */
static int put_escape(eval_cx *cx, cr_buf *b, ucs4_t cp)
{
    char tmp[16];
    int n = snprintf(tmp, sizeof tmp, cp < 0x100 ? "\\x%02x" : cp < 0x10000 ? "\\u%04x"
                                                                       : "\\U%08x", cp);
    return eval_put(cx, b, tmp, (size_t)n);
}

/* CPython's str.__repr__: single quotes unless the text holds ' and no ", and escapes for
 * what str.isprintable() refuses (the categories Cc Cf Cs Co Cn Zl Zp Zs but the space). */
static int repr_str(eval_cx *cx, cr_buf *b, const char *s, size_t len)
{
    char q = (memchr(s, '\'', len) && !memchr(s, '"', len)) ? '"' : '\'';
    const uint32_t unprintable = UC_CATEGORY_MASK_Cc | UC_CATEGORY_MASK_Cf | UC_CATEGORY_MASK_Cs |
                                 UC_CATEGORY_MASK_Co | UC_CATEGORY_MASK_Cn | UC_CATEGORY_MASK_Zl |
                                 UC_CATEGORY_MASK_Zp | UC_CATEGORY_MASK_Zs;
    if (eval_put(cx, b, &q, 1) < 0) return -1;
    size_t i = 0, run = 0;
    while (i < len) {
        unsigned char c = (unsigned char)s[i];
        const char *esc = NULL;
        ucs4_t cp = c;
        int n = 1;
        if (c >= 0x80) n = u8_mbtouc(&cp, (const uint8_t *)s + i, len - i);
        if (c == '\\') esc = "\\\\";
        else if (c == (unsigned char)q) esc = q == '\'' ? "\\'" : "\\\"";
        else if (c == '\n') esc = "\\n";
        else if (c == '\r') esc = "\\r";
        else if (c == '\t') esc = "\\t";
        if (esc || (cp != ' ' && uc_is_general_category_withtable(cp, unprintable))) {
            if (run && eval_put(cx, b, s + i - run, run) < 0) return -1;
            run = 0;
            if (esc ? eval_put(cx, b, esc, strlen(esc)) : put_escape(cx, b, cp)) return -1;
        } else {
            run += (size_t)n;
        }
        i += (size_t)n;
    }
    if (run && eval_put(cx, b, s + len - run, run) < 0) return -1;
    return eval_put(cx, b, &q, 1);
}

/* ascii(): b's text with every character outside ASCII escaped. */
static int ascii_of(eval_cx *cx, cr_buf *b)
{
    size_t i = 0;
    while (i < b->len && (unsigned char)b->p[i] < 0x80) i++;
    if (i == b->len) return 0;
    cr_buf a;
    cr_buf_init(&a, cx->lim->max_str_len);
    int rc = eval_put(cx, &a, b->p, i);
    while (rc == 0 && i < b->len) {
        size_t k = i;
        while (k < b->len && (unsigned char)b->p[k] < 0x80) k++;
        rc = eval_put(cx, &a, b->p + i, k - i);
        if (rc == 0 && k < b->len) {
            ucs4_t cp;
            int n = u8_mbtouc(&cp, (const uint8_t *)b->p + k, b->len - k);
            rc = put_escape(cx, &a, cp);
            k += (size_t)n;
        }
        i = k;
    }
    cr_buf_free(b);
    *b = a;
    return rc;
}

static int repr_items(eval_cx *cx, cr_buf *b, val **it, size_t n, const rstack *st,
                      unsigned depth)
{
    for (size_t i = 0; i < n; i++) {
        if (i) PUTS(", ");
        if (repr_in(cx, b, it[i], 0, st, depth + 1) < 0) return -1;
    }
    return 0;
}

/* Only these can hold themselves, so only they are looked for on the path (a one-shot
 * iterator prints no items). */
static int is_container(const val *v)
{
    return v->kind == V_LIST || v->kind == V_TUPLE || v->kind == V_DICT || v->kind == V_SET ||
           (v->kind == V_ITER && v->sub >= IT_KEYS);
}

static int repr_one(eval_cx *cx, cr_buf *b, val *v, int as_str, const rstack *up, unsigned depth)
{
    char tmp[96];
    rstack st = { v, up };
    /* each item is a step, and a container also pays for the look along its path (CPython
     * prints a container met again inside itself as [...] or {...}) */
    int cont = is_container(v);
    if (eval_count(cx, 1 + (cont ? depth / 16 : 0), NULL) < 0) return -1;
    if (cont)
        for (const rstack *s = up; s; s = s->up)
            if (s->v == v) {
                PUTS(v->kind == V_LIST ? "[...]" : v->kind == V_DICT ? "{...}"
                     : v->kind == V_ITER ? "..." : "(...)");
                return 0;
            }
    switch (v->kind) {
    case V_NONE: PUTS("None"); return 0;
    case V_ELLIPSIS: PUTS("Ellipsis"); return 0;
    case V_OBJ: return v->u.obj.cls->repr(cx, b, v, as_str);
    case V_BOOL: PUTS(mpq_sgn(v->u.q) ? "True" : "False"); return 0;
    case V_INT: return num_rc(cx, num_repr_int(b, mpq_numref(v->u.q)));
    case V_FLOAT:
        if (v->flags & VF_NEGZ) { PUTS("-0.0"); return 0; }
        if (v->flags & VF_DOUBLE) return num_rc(cx, num_repr_double(b, mpq_get_d(v->u.q), &cx->nc));
        return num_rc(cx, num_repr_float(b, v->u.q, &cx->nc));
    case V_INF: PUTS(v->sub == INF_NAN ? "nan" : v->sub ? "-inf" : "inf"); return 0;
    case V_STR:
        if (eval_walk(cx, 0, v->u.str.len, NULL) < 0) return -1;
        if (as_str) return eval_put(cx, b, v->u.str.s, v->u.str.len);
        return repr_str(cx, b, v->u.str.s, v->u.str.len);
    case V_LIST:
        PUTS("[");
        if (repr_items(cx, b, v->u.seq.it, v->u.seq.len, &st, depth) < 0) return -1;
        PUTS("]");
        return 0;
    case V_TUPLE:
        PUTS("(");
        if (repr_items(cx, b, v->u.seq.it, v->u.seq.len, &st, depth) < 0) return -1;
        PUTS(v->u.seq.len == 1 ? ",)" : ")");
        return 0;
    case V_DICT: case V_SET: {
        if (v->kind == V_SET && v->u.d.len == 0) { PUTS("set()"); return 0; }
        PUTS("{");
        int first = 1;
        for (size_t i = 0; i < v->u.d.used; i++) {
            dict_ent *e = &v->u.d.ent[i];
            if (!e->key) continue;
            if (!first) PUTS(", ");
            first = 0;
            if (repr_in(cx, b, e->key, 0, &st, depth + 1) < 0) return -1;
            if (v->kind == V_DICT) {
                PUTS(": ");
                if (repr_in(cx, b, e->value, 0, &st, depth + 1) < 0) return -1;
            }
        }
        PUTS("}");
        return 0;
    }
    case V_RANGE:
        if (v->u.rng.step == 1)
            snprintf(tmp, sizeof tmp, "range(%lld, %lld)", (long long)v->u.rng.start,
                     (long long)v->u.rng.stop);
        else
            snprintf(tmp, sizeof tmp, "range(%lld, %lld, %lld)", (long long)v->u.rng.start,
                     (long long)v->u.rng.stop, (long long)v->u.rng.step);
        PUTS(tmp);
        return 0;
    case V_ITER:
        if (v->sub >= IT_KEYS) {   /* its items for the while: the text is as long */
            val *l = eval_list_of(cx, v, V_LIST);
            if (!l) return -1;
            PUTS(iter_names[v->sub]);
            PUTS("([");
            int rc = repr_items(cx, b, l->u.seq.it, l->u.seq.len, &st, depth);
            eval_decref(cx, l);
            if (rc < 0) return -1;
            PUTS("])");
            return 0;
        }
        snprintf(tmp, sizeof tmp, "<%s object>", iter_names[v->sub]);
        PUTS(tmp);
        return 0;
    case V_FUNC:
        PUTS("<function ");
        PUTS(v->u.fn.sc->name);
        PUTS(">");
        return 0;
    case V_BUILTIN:
        snprintf(tmp, sizeof tmp, is_type_builtin(v->sub) ? "<class '%s'>"
                 : v->sub >= M_SQRT ? "<built-in function %s>" : "<built-in function %s>",
                 eval_builtin_name(v->sub));
        PUTS(tmp);
        return 0;
    case V_MODULE:
        PUTS("<module '");
        PUTS(registry_module_name(v->sub));
        PUTS(v->sub == MOD_MATH ? "' (built-in)>" : "'>");
        return 0;
    case V_METHOD:
        snprintf(tmp, sizeof tmp, "<built-in method %s of %s object>", eval_method_name(v->sub),
                 eval_type_name(v->u.meth.self));
        PUTS(tmp);
        return 0;
    case V_EXC:
    {
        /* str(): nothing for no argument; one argument's str (KeyError: its repr, as
         * str(KeyError('k')) is "'k'"); several: the tuple's repr. repr(): the class and
         * the arguments' reprs, ValueError('x') or ValueError(1, 2). */
        val *args = v->u.exc.args;
        size_t n = args ? args->u.seq.len : 0;
        if (as_str) {
            if (n == 1)
                return repr_in(cx, b, args->u.seq.it[0], v->sub != B_KEYERROR, &st, depth + 1);
            return n ? repr_in(cx, b, args, 0, &st, depth + 1) : 0;
        }
        PUTS(eval_builtin_name(v->sub));
        if (n == 1) {
            PUTS("(");
            if (repr_in(cx, b, args->u.seq.it[0], 0, &st, depth + 1) < 0) return -1;
            PUTS(")");
            return 0;
        }
        if (!n) { PUTS("()"); return 0; }
        return repr_in(cx, b, args, 0, &st, depth + 1);
    }
    default:
        PUTS("<frame>");
        return 0;
    }
}

/* Each value rendered is a level of CPython's recursion, as its PyObject_Repr() is. */
static int repr_in(eval_cx *cx, cr_buf *b, val *v, int as_str, const rstack *up, unsigned depth)
{
    if (eval_stack_low(cx))
        return eval_deep(cx, repr_deep, &(walk_level){ .a = v, .buf = b, .as_str = as_str,
                                                       .up = up, .depth = depth });
    if (eval_recurse(cx, as_str ? " while getting the str of an object"
                                : " while getting the repr of an object", NULL) < 0)
        return -1;
    int r = repr_one(cx, b, v, as_str, up, depth);
    cx->rdepth--;
    return r;
}

int eval_repr(eval_cx *cx, cr_buf *b, val *v, int as_str)
{
    return repr_in(cx, b, v, as_str, NULL, 0);
}

val *eval_to_str(eval_cx *cx, val *v, int as_repr)
{
    if (v->kind == V_STR && !as_repr) {
        EV_INCREF(v);
        return v;
    }
    cr_buf b;
    cr_buf_init(&b, cx->lim->max_str_len);
    if (eval_repr(cx, &b, v, !as_repr) < 0 || (as_repr == EVAL_ASCII && ascii_of(cx, &b) < 0)) {
        cr_buf_free(&b);
        return NULL;
    }
    int inexact = eval_inexact(cx, v);
    if (inexact < 0) {
        cr_buf_free(&b);
        return NULL;
    }
    val *s = eval_str_buf(cx, &b);
    if (s && inexact && !(s->flags & VF_IMMORTAL) && s->rc == 1) s->flags |= VF_INEXACT;
    return s;
}

/* A container met again on its own path adds nothing: it is being looked at already. As in
 * repr_in(), a container pays for the look along its path. */
static int inexact_in(eval_cx *cx, val *v, const rstack *up, unsigned depth)
{
    size_t i;
    int r = 0;
    if (v->flags & VF_INEXACT) return 1;
    if (v->kind == V_ITER && v->sub >= IT_KEYS) v = v->u.itr.dict;   /* as exact as its dict */
    if (!is_container(v)) return 0;
    if (eval_stack_low(cx))
        return eval_deep(cx, inexact_deep, &(walk_level){ .a = v, .up = up, .depth = depth });
    if (eval_count(cx, depth / 16, NULL) < 0) return -1;
    for (const rstack *s = up; s; s = s->up)
        if (s->v == v) return 0;
    rstack st = { v, up };
    if (v->kind == V_DICT || v->kind == V_SET) {
        for (i = 0; i < v->u.d.used && !r; i++) {
            dict_ent *e = &v->u.d.ent[i];
            if (!e->key) continue;
            if ((r = eval_count(cx, 1, NULL)) < 0) break;
            r = inexact_in(cx, e->key, &st, depth + 1);
            if (!r && e->value) r = inexact_in(cx, e->value, &st, depth + 1);
        }
    } else {
        for (i = 0; i < v->u.seq.len && !r; i++)
            if ((r = eval_count(cx, 1, NULL)) == 0)
                r = inexact_in(cx, v->u.seq.it[i], &st, depth + 1);
    }
    return r;
}

int eval_inexact(eval_cx *cx, val *v)
{
    return inexact_in(cx, v, NULL, 0);
}
