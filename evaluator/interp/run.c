/* evaluator/interp/run.c: the run itself (eval_run), with DESIGN.md's final-value rule and
 * the final value's native form. */
#include "common/json.h"
#include "evaluator/interp/interp.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the run --------------------------------------------------------------------------- */

static int sym_of(eval_cx *cx, const char *name)
{
    return resolve_find(&cx->rs, name);   /* only names the program mentions hold values */
}

static char *dupstr(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = malloc(n);
    if (p) memcpy(p, s, n);
    return p;
}

/* The final value as tagged JSON, from which a caller rebuilds it exactly without parsing a
 * repr (DESIGN.md, "The value's native form"). A part with no such form, a structure deeper
 * than NATIVE_DEPTH (a container holding itself is one) or larger than NATIVE_NODES (shared
 * parts count each time they are met) leaves the whole value without one: *why says so. */
enum { NATIVE_DEPTH = 200, NATIVE_NODES = 1000000 };

typedef struct {
    eval_cx *cx;
    cr_buf b;
    size_t nodes;
    char why[160];
    int failed;            /* out of memory, or the evaluator raised (a limit) */
    const char *fraction;  /* the top-level number's fraction, made already, or NULL */
} native_cx;

static json_t *tagged(const char *tag, json_t *v)
{
    json_t *o = json_object();
    if (o && v && json_object_set_new(o, tag, v) == 0) return o;
    if (!o) json_decref(v);
    json_decref(o);
    return NULL;
}

static json_t *native_of(native_cx *n, val *v, int depth)
{
    if (n->why[0] || n->failed) return NULL;
    if (depth > NATIVE_DEPTH || ++n->nodes > NATIVE_NODES) {
        snprintf(n->why, sizeof n->why, depth > NATIVE_DEPTH
                 ? "nested more than %d deep, or holding itself" : "more than %d parts",
                 depth > NATIVE_DEPTH ? NATIVE_DEPTH : NATIVE_NODES);
        return NULL;
    }
    json_t *r = NULL;
    const char *tag = NULL;
    switch (v->kind) {
    case V_NONE: r = json_null(); break;
    case V_BOOL: r = json_boolean(mpq_sgn(v->u.q) != 0); break;
    case V_INT: case V_FLOAT:
        /* an inexact float is the value it prints, as the top-level fraction is */
        if (!depth && n->fraction && (v->kind == V_FLOAT || !(v->flags & VF_INEXACT))) {
            r = tagged(v->kind == V_INT ? "int" : "float", json_string(n->fraction));
            break;
        }
        cr_buf_reset(&n->b);
        if (num_fraction_text(&n->b, v->kind == V_INT ? v->u.q : eval_shown(n->cx, v, 0)) != CR_OK)
            break;
        r = tagged(v->kind == V_INT ? "int" : "float", json_stringn(n->b.p, n->b.len));
        break;
    case V_INF:
        r = tagged("float", json_string(v->sub == INF_NAN ? "nan" : v->sub == INF_POS ? "inf" : "-inf"));
        break;
    case V_STR: r = tagged("str", cr_json_text(v->u.str.s, v->u.str.len, NULL)); break;
    case V_LIST: tag = "list"; /* fall through */
    case V_TUPLE: {
        json_t *a = json_array();
        for (size_t i = 0; a && i < v->u.seq.len; i++)
            if (json_array_append_new(a, native_of(n, v->u.seq.it[i], depth + 1))) {
                json_decref(a);
                return NULL;
            }
        r = tagged(tag ? tag : "tuple", a);
        break;
    }
    case V_DICT: case V_SET: {
        json_t *a = json_array();
        for (size_t i = 0; a && i < v->u.d.used; i++) {
            dict_ent *e = &v->u.d.ent[i];
            if (!e->key) continue;
            json_t *k = native_of(n, e->key, depth + 1), *item = k;
            if (k && v->kind == V_DICT) item = json_pack("[oo]", k, native_of(n, e->value, depth + 1));
            if (json_array_append_new(a, item)) {
                json_decref(a);
                return NULL;
            }
        }
        r = tagged(v->kind == V_DICT ? "dict" : "set", a);
        break;
    }
    case V_OBJ:
        if (strcmp(v->u.obj.cls->name, "decimal.Decimal") == 0) {
            cr_buf_reset(&n->b);
            if (eval_repr(n->cx, &n->b, v, 1) < 0) break;
            r = tagged("Decimal", json_stringn(n->b.p, n->b.len));
            break;
        }
        /* fall through */
    default:
        snprintf(n->why, sizeof n->why, "a %s has no native form", eval_type_name(v));
        return NULL;
    }
    if (!r && !n->why[0]) n->failed = 1;
    return r;
}

static cr_code fill_native(eval_cx *cx, val *v, eval_result *res)
{
    native_cx n = {.cx = cx, .fraction = IS_NUM(v) ? res->value_fraction : NULL};
    cr_buf_init(&n.b, cx->lim->max_str_len);
    json_t *j = native_of(&n, v, 0);
    cr_buf_free(&n.b);
    if (j) {
        res->value_native = j;
        return CR_OK;
    }
    if (n.failed || !n.why[0]) return cx->err.code != CR_OK ? cx->err.code : CR_ENOMEM;
    return (res->value_native_why = dupstr(n.why)) ? CR_OK : CR_ENOMEM;
}

static cr_code fill_value(eval_cx *cx, val *v, const char *from, eval_result *res)
{
    cr_buf b;
    size_t n = 0;
    res->has_value = 1;
    const char *tn = eval_type_name(v), *dot = strrchr(tn, '.');
    if (!(res->value_from = dupstr(from)) || !(res->value_type = dupstr(dot ? dot + 1 : tn)))
        return CR_ENOMEM;
    cr_buf_init(&b, cx->lim->max_str_len);
    if (eval_repr(cx, &b, v, 0) < 0) { cr_buf_free(&b); return cx->err.code; }
    res->value_repr = cr_buf_take(&b, &n);
    /* str() differs from repr() only for a string or an exception itself (containers show
     * their items' repr), so the costly float rendering is done once */
    if (v->kind == V_STR || v->kind == V_EXC) {
        if (eval_repr(cx, &b, v, 1) < 0) { cr_buf_free(&b); return cx->err.code; }
        res->value_str = cr_buf_take(&b, NULL);
    } else if (res->value_repr && (res->value_str = malloc(n + 1))) {
        memcpy(res->value_str, res->value_repr, n + 1);
    }
    if (IS_NUM(v)) {
        /* an inexact value's guard digits are noise: it is the value it prints and decides as */
        res->value_numeric = 1;
        if (num_fraction_text(&b, eval_shown(cx, v, 0)) != CR_OK) {
            cr_buf_free(&b);
            return CR_ENOMEM;
        }
        res->value_fraction = cr_buf_take(&b, NULL);
    } else if (v->kind == V_OBJ && v->u.obj.cls->rational) {
        mpq_t q;
        mpq_init(q);
        int rc = v->u.obj.cls->rational(cx, v, q);
        if (rc > 0 && num_fraction_text(&b, q) != CR_OK) rc = -2;
        mpq_clear(q);
        if (rc < 0) {
            cr_buf_free(&b);
            return rc == -2 ? CR_ENOMEM : cx->err.code;
        }
        if (rc > 0) res->value_fraction = cr_buf_take(&b, NULL);
    }
    cr_buf_free(&b);
    cr_code rc = fill_native(cx, v, res);
    if (rc != CR_OK) return rc;
    int inexact = eval_inexact(cx, v);
    if (inexact < 0) return cx->err.code;
    res->exact = !cx->inexact_decided && !inexact;
    if (!res->value_from || !res->value_type || !res->value_repr || !res->value_str)
        return CR_ENOMEM;
    return CR_OK;
}

/* `def answer(): ...` names code, not an answer */
static int is_code(const val *v)
{
    return v->kind == V_FUNC || v->kind == V_BUILTIN || v->kind == V_MODULE;
}

/* DESIGN.md's final-value rule: the candidates this run left, chosen by cr_final_choose(),
 * which the sandbox host applies to its runner's report too. */
static cr_code final_value(eval_cx *cx, eval_result *res)
{
    cr_final_facts facts = { 0 };
    val *vars[CR_ANSWER_VARS_MAX] = { 0 };
    int s = sym_of(cx, "solution"), vi = 0;
    val *f = s >= 0 ? cx->globals[s] : NULL;
    if (f && f->kind == V_FUNC && f->u.fn.sc->is_solution) {
        if (!cx->solution_called) {
            /* the PAL/PoT convention: nobody called it, so it is called once, now */
            eval_args a = { 0 };
            EV_INCREF(f);
            val *r = eval_call(cx, f, &a, f->u.fn.node);
            eval_decref(cx, f);
            if (!r) return CR_OK;
            eval_decref(cx, r);     /* call_function kept it as solution_value */
            facts.solution_at_end = 1;
        }
        facts.solution = cx->solution_value != NULL;
    }
    for (int i = 0; i < CR_ANSWER_VARS_MAX && cx->pol->answer_vars[i]; i++) {
        s = sym_of(cx, cx->pol->answer_vars[i]);
        if (s >= 0 && cx->globals[s] && !is_code(cx->globals[s])) {
            vars[i] = cx->globals[s];
            facts.vars |= 1u << i;
        }
    }
    facts.expr = cx->last_expr != NULL;
    facts.assigned = cx->last_assigned >= 0 && cx->globals[cx->last_assigned];
    switch (cr_final_choose(&facts, &vi)) {
    case CR_FINAL_SOLUTION: return fill_value(cx, cx->solution_value, "solution()", res);
    case CR_FINAL_VAR: return fill_value(cx, vars[vi], cx->pol->answer_vars[vi], res);
    case CR_FINAL_EXPR: return fill_value(cx, cx->last_expr, "last expression", res);
    case CR_FINAL_ASSIGNED:
        return fill_value(cx, cx->globals[cx->last_assigned], cx->rs.syms[cx->last_assigned],
                          res);
    case CR_FINAL_NONE: break;
    }
    return CR_OK;
}

static cr_code bind(eval_cx *cx, const eval_binding *binds, size_t nbinds)
{
    for (size_t i = 0; i < nbinds; i++) {
        int s = resolve_sym(cx, binds[i].name);
        if (s < 0) return CR_ENOMEM;
    }
    if (!(cx->globals = calloc(cx->rs.nsyms ? cx->rs.nsyms : 1, sizeof(val *))))
        return CR_ENOMEM;
    for (size_t i = 0; i < nbinds; i++) {
        int s = resolve_sym(cx, binds[i].name);
        val *v = eval_expr(cx, binds[i].value);
        if (!v) return cx->err.code;
        eval_decref(cx, cx->globals[s]);
        cx->globals[s] = v;
    }
    return CR_OK;
}

/* What the floors below reach of the interpreter (value/value.h). */
static const eval_hooks hooks = { eval_call, eval_gen_next };

static void cx_init(eval_cx *cx, const cr_policy *pol)
{
    memset(cx, 0, offsetof(eval_cx, scratch));
    cx->pol = pol;
    cx->lim = &pol->limits;
    cx->hooks = &hooks;
    num_ctx_from_policy(&cx->nc, pol);
    cx->max_ops = pol->limits.max_ops;
    cx->rdepth = 1;   /* the module's frame */
    eval_clock_start(cx);
    eval_stack_start(cx);
    cx->none.kind = V_NONE;
    cx->ellipsis.kind = V_ELLIPSIS;
    cx->vtrue.kind = cx->vfalse.kind = V_BOOL;
    cx->none.flags = cx->vtrue.flags = cx->vfalse.flags = cx->ellipsis.flags = VF_IMMORTAL;
    cx->none.rc = cx->vtrue.rc = cx->vfalse.rc = cx->ellipsis.rc = 1;
    /* read-only limbs: True and False are never written, and need no mpq_init/mpq_clear */
    static const mp_limb_t one = 1;
    mpz_roinit_n(mpq_numref(cx->vtrue.u.q), &one, 1);
    mpz_roinit_n(mpq_denref(cx->vtrue.u.q), &one, 1);
    mpz_roinit_n(mpq_numref(cx->vfalse.u.q), &one, 0);
    mpz_roinit_n(mpq_denref(cx->vfalse.u.q), &one, 1);
    cx->gc.gnext = cx->gc.gprev = &cx->gc;
    cx->last_assigned = -1;
    mpq_init(cx->dq[0]);
    mpq_init(cx->dq[1]);
    cr_buf_init(&cx->out, pol->limits.max_stdout);
    eval_pool_take(cx);
}

static void cx_free(eval_cx *cx)
{
    size_t i;
    eval_decref(cx, cx->retval);
    eval_decref(cx, cx->exc);
    eval_decref(cx, cx->last_expr);
    eval_decref(cx, cx->solution_value);
    eval_decref(cx, cx->dec_cur);
    for (i = 0; i < MOD_COUNT; i++) eval_decref(cx, cx->mods[i]);
    for (i = 0; i < B_COUNT && cx->nbvals; i++)
        if (cx->bvals[i]) {
            eval_decref(cx, cx->bvals[i]);
            cx->nbvals--;
        }
    if (cx->globals)
        for (i = 0; i < cx->rs.nsyms; i++) eval_decref(cx, cx->globals[i]);
    free(cx->globals);
    for (i = 0; i < cx->nconsts; i++) eval_decref(cx, cx->consts[i]);
    eval_free_all(cx);
    resolve_free(cx);
    cr_buf_free(&cx->out);
    mpq_clear(cx->dq[0]);
    mpq_clear(cx->dq[1]);
}

cr_code eval_run(const ir_module *prog, const eval_binding *binds, size_t nbinds,
                 const cr_policy *pol, eval_result *res, cr_error *err)
{
    eval_cx cx;
    cr_code rc;
    memset(res, 0, sizeof *res);
    res->exact = 1;
    if (!prog || !prog->root || !pol)
        return cr_error_set(err, CR_EUSAGE, 0, 0, "eval_run: no program or policy");
    if (prog->nreasons)
        return cr_error_set(err, CR_EUSAGE, 0, 0,
                            "eval_run: the program has %zu reasons to leave the in-process "
                            "subset", prog->nreasons);
    cx_init(&cx, pol);
    if ((rc = resolve_module(&cx, prog->root, err)) != CR_OK) goto out;
    if ((rc = bind(&cx, binds, nbinds)) != CR_OK && rc < CR_ELIMIT) goto engine;
    if (rc == CR_OK) {
        const ir_node *first = prog->root->n ? prog->root->kid[0] : NULL;
        if (first && first->kind == IR_EXPR && first->kid[0]->kind == IR_STR) cx.docstring = first;
        xres x = eval_exec_block(&cx, prog->root);
        if (x == X_BREAK || x == X_CONTINUE)
            eval_raise(&cx, CR_ESYNTAX, NULL, "'%s' outside loop",
                       x == X_BREAK ? "break" : "continue");
        else if (x == X_RETURN)
            eval_raise(&cx, CR_ESYNTAX, NULL, "'return' outside function");
    }
    if (cx.err.code == CR_OK) {
        rc = final_value(&cx, res);
        if (rc != CR_OK && cx.err.code == CR_OK) cx.err.code = rc;
    }
    res->status = cx.err.code;
    if (res->status != CR_OK) {
        eval_result_free(res);      /* drop a value half filled before the error */
        res->status = cx.err.code;
        res->error = cx.err;
    }
    rc = CR_OK;
    if (res->status == CR_ENOMEM || res->status == CR_EINTERNAL) {
        rc = res->status;
        if (err) *err = cx.err;
    }
    res->stdout_truncated = cx.out.truncated;
    res->stdout_text = cr_buf_take(&cx.out, &res->stdout_len);
    res->ops = cx.ops;
    goto out;
engine:
    if (cx.err.code != CR_OK && err) *err = cx.err;
    else cr_error_set(err, rc, 0, 0, "evaluator: out of memory");
out:
    cx_free(&cx);
    if (!res->stdout_text && !(res->stdout_text = calloc(1, 1)) && rc == CR_OK)
        rc = cr_error_set(err, CR_ENOMEM, 0, 0, "evaluator: out of memory");
    return rc;
}

void eval_result_free(eval_result *res)
{
    if (!res) return;
    free(res->stdout_text);
    free(res->value_from);
    free(res->value_type);
    free(res->value_repr);
    free(res->value_str);
    free(res->value_fraction);
    free(res->value_native_why);
    json_decref(res->value_native);
    memset(res, 0, sizeof *res);
}
