/* evaluator/interp/exec.c: executing statements: blocks, loops and each statement's dispatch. */
#include "evaluator/interp/interp.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static xres exec_stmt(eval_cx *cx, const ir_node *n);

/* An error raised without a position (a key's hash in `d[k] = v`, deep in a walk) takes its
 * statement's. */
static xres stmt_at(eval_cx *cx, const ir_node *n)
{
    xres x = exec_stmt(cx, n);
    if (x == X_ERROR && cx->err.line == 0) {
        cx->err.line = n->line;
        cx->err.col = n->col;
    }
    return x;
}

typedef struct {
    const ir_node *b;
    xres x;
} deep_block;

static int block_deep(eval_cx *cx, void *p)
{
    deep_block *d = p;
    d->x = eval_exec_block(cx, d->b);
    return 0;
}

xres eval_exec_block(eval_cx *cx, const ir_node *b)
{
    if (!b) return X_NORMAL;
    if (eval_stack_low(cx)) {
        deep_block d = { b, X_ERROR };
        return eval_deep(cx, block_deep, &d) < 0 ? X_ERROR : d.x;
    }
    if (b->kind != IR_BLOCK && b->kind != IR_MODULE) return stmt_at(cx, b);
    for (uint32_t i = 0; i < b->n; i++) {
        xres x = stmt_at(cx, b->kid[i]);
        if (x != X_NORMAL) return x;
    }
    return X_NORMAL;
}

static xres exec_for(eval_cx *cx, const ir_node *n)
{
    val *src = eval_expr(cx, n->kid[1]), *x;
    if (!src) return X_ERROR;
    eval_iter it;
    int rc = eval_iter_init(cx, &it, src);
    eval_decref(cx, src);
    if (rc < 0) return eval_at(cx, n->kid[1]), X_ERROR;
    xres res = X_NORMAL;
    for (;;) {
        if (!(rc = eval_next_in_place(cx, &it, n->kid[0], n))) {
            if ((rc = eval_iter_next(cx, &it, &x)) <= 0) break;
            rc = eval_count(cx, 1, n) < 0 ? -1 : eval_assign(cx, n->kid[0], x);
            eval_decref(cx, x);
        }
        if (rc < 0) { res = X_ERROR; break; }
        xres r = eval_exec_block(cx, n->kid[2]);
        if (r == X_BREAK) { res = X_BREAK; break; }
        if (r == X_RETURN || r == X_ERROR) { res = r; break; }
    }
    eval_iter_done(cx, &it);
    if (rc < 0) return eval_at(cx, n->kid[1]), X_ERROR;   /* the body changed a dict or set */
    if (res == X_BREAK) return X_NORMAL;
    if (res != X_NORMAL) return res;
    return n->n > 3 ? eval_exec_block(cx, n->kid[3]) : X_NORMAL;
}

static xres exec_while(eval_cx *cx, const ir_node *n)
{
    for (;;) {
        if (eval_count(cx, 1, n) < 0) return X_ERROR;
        val *t = eval_expr(cx, n->kid[0]);
        if (!t) return X_ERROR;
        int go = eval_truth(cx, t);
        eval_decref(cx, t);
        if (!go) break;
        xres r = eval_exec_block(cx, n->kid[1]);
        if (r == X_BREAK) return X_NORMAL;
        if (r == X_RETURN || r == X_ERROR) return r;
    }
    return n->n > 2 ? eval_exec_block(cx, n->kid[2]) : X_NORMAL;
}

static xres exec_stmt(eval_cx *cx, const ir_node *n)
{
    val *v;
    switch (n->kind) {
    case IR_EXPR:
        if (!(v = eval_expr(cx, n->kid[0]))) return X_ERROR;
        if (!cx->frame && v->kind != V_NONE && n != cx->docstring) {
            eval_decref(cx, cx->last_expr);
            cx->last_expr = v;
        } else {
            eval_decref(cx, v);
        }
        return X_NORMAL;
    case IR_ASSIGN: {
        if (n->n < 2) return X_NORMAL;
        if (!(v = eval_expr(cx, n->kid[n->n - 1]))) return X_ERROR;
        int rc = 0;
        for (uint32_t i = 0; i + 1 < n->n && rc == 0; i++) rc = eval_assign(cx, n->kid[i], v);
        eval_decref(cx, v);
        return rc < 0 ? X_ERROR : X_NORMAL;
    }
    case IR_AUGASSIGN: return eval_augassign(cx, n) < 0 ? X_ERROR : X_NORMAL;
    case IR_IF: {
        if (!(v = eval_expr(cx, n->kid[0]))) return X_ERROR;
        int t = eval_truth(cx, v);
        eval_decref(cx, v);
        if (t) return eval_exec_block(cx, n->kid[1]);
        return n->n > 2 ? eval_exec_block(cx, n->kid[2]) : X_NORMAL;
    }
    case IR_FOR: return exec_for(cx, n);
    case IR_WHILE: return exec_while(cx, n);
    case IR_BREAK: return X_BREAK;
    case IR_CONTINUE: return X_CONTINUE;
    case IR_PASS: case IR_GLOBAL: return X_NORMAL;
    case IR_RETURN:
        if (n->n && n->kid[0]) {
            if (!(v = eval_expr(cx, n->kid[0]))) return X_ERROR;
        } else {
            v = eval_none(cx);
        }
        eval_decref(cx, cx->retval);
        cx->retval = v;
        return X_RETURN;
    case IR_FUNCDEF: {
        if (!(v = eval_make_function(cx, n))) return X_ERROR;
        int64_t last = cx->last_assigned;
        int rc = eval_store_ref(cx, n, v);
        cx->last_assigned = last;   /* a def is not "the last variable assigned" */
        return rc < 0 ? X_ERROR : X_NORMAL;
    }
    case IR_IMPORT: case IR_IMPORT_FROM: {
        int mod = n->text ? registry_module(n->text) : -1;
        if (mod < 0) {
            eval_raise(cx, CR_EPY_EXCEPTION, n, "No module named '%s'", n->text ? n->text : "");
            snprintf(cx->err.type, sizeof cx->err.type, "ModuleNotFoundError");
            return X_ERROR;
        }
        if (n->kind == IR_IMPORT_FROM && strcmp(n->kid[0]->text, "*") == 0)
            return eval_import_star(cx, mod, n) < 0 ? X_ERROR : X_NORMAL;
        if (n->kind == IR_IMPORT) {
            /* `import a.b` binds a; `import a.b as c` binds a.b */
            const char *dot = strchr(n->text, '.');
            if (dot && strncmp(n->aux, n->text, (size_t)(dot - n->text)) == 0 &&
                n->aux[dot - n->text] == '\0') {
                char top[64];
                snprintf(top, sizeof top, "%.*s", (int)(dot - n->text), n->text);
                mod = registry_module(top);
            }
            if (mod < 0)
                return eval_raise(cx, CR_EINTERNAL, n, "no parent module of '%s'", n->text), X_ERROR;
            if (!(v = eval_module(cx, mod))) return X_ERROR;
        } else if (registry_attr(mod, n->kid[0]->text, NULL) < 0) {
            cx->err.code = CR_EPY_EXCEPTION;
            snprintf(cx->err.type, sizeof cx->err.type, "ImportError");
            snprintf(cx->err.message, sizeof cx->err.message,
                     "cannot import name '%s' from '%s' (unknown location)", n->kid[0]->text,
                     n->text);
            return X_ERROR;
        } else if (!(v = eval_module_attr(cx, mod, n->kid[0]->text, n))) {
            return X_ERROR;
        }
        int64_t last = cx->last_assigned;
        int rc = eval_store_ref(cx, n, v);
        cx->last_assigned = last;
        return rc < 0 ? X_ERROR : X_NORMAL;
    }
    case IR_RAISE: eval_do_raise(cx, n); return X_ERROR;
    case IR_TRY: return eval_exec_try(cx, n);
    case IR_WITH: return eval_exec_with(cx, n, 0);
    case IR_ASSERT: {
        if (!(v = eval_expr(cx, n->kid[0]))) return X_ERROR;
        int t = eval_truth(cx, v);
        eval_decref(cx, v);
        if (t) return X_NORMAL;
        val *m = NULL, *e;
        if (n->n > 1 && n->kid[1] && !(m = eval_expr(cx, n->kid[1]))) return X_ERROR;
        if ((e = eval_exc_new1(cx, B_ASSERTIONERROR, m)))
            eval_raise_obj(cx, e, eval_assert_site(n));
        eval_decref(cx, m);
        return X_ERROR;
    }
    case IR_DEL:
        for (uint32_t i = 0; i < n->n; i++)
            if (eval_del_target(cx, n->kid[i]) < 0) return X_ERROR;
        return X_NORMAL;
    case IR_BLOCK: return eval_exec_block(cx, n);
    default:
        if (!(v = eval_expr(cx, n))) return X_ERROR;
        eval_decref(cx, v);
        return X_NORMAL;
    }
}
