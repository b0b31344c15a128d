/* dsl/lower.c: a parsed DSL program (and its table) to the shared IR. */
#include "dsl/dsl.h"
#include "ir/build.h"

#include <stdio.h>
#include <string.h>

typedef struct {
    ir_module *m;
    const dsl_table *t;
    cr_buf cell;          /* scratch for one cell's value */
    cr_error *err;
} lctx;

static cr_code full(lctx *cx)
{
    if (cx->m->arena.nomem) return cr_error_set(cx->err, CR_ENOMEM, 0, 0, "dsl: out of memory");
    return cr_error_set(cx->err, CR_ELIMIT, 0, 0, "DSL program too large for the memory limit");
}

static ir_node *node(lctx *cx, ir_kind kind, int line, int col, uint32_t n)
{
    return ir_node_new(cx->m, kind, line, col, n);
}

static void span(ir_node *nd, int end_line, int end_col)
{
    nd->end_line = end_line;
    nd->end_col = end_col;
}

/* A leaf at line:col whose text is text[0..len); the caller spans it. */
static ir_node *leaf(lctx *cx, ir_kind kind, const char *text, size_t len, int line, int col)
{
    return ir_node_text(cx->m, kind, (ir_span){ line, col, line, col }, 0, text, len);
}

static ir_span step_span(const dsl_step *st)
{
    return (ir_span){ st->line, st->col, st->end_line, st->end_col };
}

/* A float-tagged number, negated through a unary minus as Python's parser would give it. */
static ir_node *number(lctx *cx, const char *text, size_t len, int neg, int line, int col)
{
    ir_node *num = leaf(cx, IR_NUM, text, len, line, col);
    if (!num) return NULL;
    num->flags = IRF_FLOAT;
    if (!neg) return num;
    return ir_prefix(cx->m, IR_UNARY, IR_NEG, line, col, num, (ir_span){ line, col, line, col });
}

static ir_node *name(lctx *cx, const char *text, int line, int col)
{
    return leaf(cx, IR_NAME, text, strlen(text), line, col);
}

/* "#k"; by hand, as this runs for every step and reference. */
static ir_node *step_name(lctx *cx, size_t k, int line, int col)
{
    char buf[24], *p = buf + sizeof buf;
    *--p = '\0';
    do *--p = (char)('0' + k % 10); while ((k /= 10) > 0);
    *--p = '#';
    return name(cx, p, line, col);
}

static ir_node *lower_arg(lctx *cx, const dsl_arg *a)
{
    ir_node *n = a->kind == DSL_ARG_REF ? step_name(cx, a->ref, a->line, a->col)
               : number(cx, a->value, strlen(a->value), a->neg, a->line, a->col);
    if (n) span(n, a->end_line, a->end_col);
    return n;
}

/* The numeric cells of the row `a` names, as a LIST of NUM nodes; *count gets their number. */
static cr_code row_list(lctx *cx, const dsl_step *st, ir_node **out, size_t *count)
{
    const dsl_arg *a = &st->arg[0];
    const char *op = dsl_op_name(st->op);
    if (!cx->t)
        return cr_error_set(cx->err, CR_EUSAGE, a->line, a->col,
                            "%s needs a table, and none was given", op);
    long r = dsl_table_find_row(cx->t, a->value, strlen(a->value));
    if (r < 0)
        return cr_error_set(cx->err, CR_EUSAGE, a->line, a->col,
                            "%s: no table row named '%.60s' (%zu rows; names match exactly, "
                            "else ignoring case and spaces)", op, a->value, cx->t->nrows);
    const dsl_row *row = &cx->t->rows[r];
    if (row->ncells == 0)
        return cr_error_set(cx->err, CR_EUSAGE, a->line, a->col,
                            "%s: table row '%.60s' has no cells after its name", op, row->name);
    ir_node *list = node(cx, IR_LIST, a->line, a->col, (uint32_t)row->ncells);
    if (!list) return full(cx);
    span(list, a->end_line, a->end_col);
    for (size_t c = 0; c < row->ncells; c++) {
        cr_error cerr;
        cr_buf_reset(&cx->cell);
        cr_code rc = dsl_cell_parse(row->cells[c], strlen(row->cells[c]), &cx->cell, &cerr);
        if (rc == CR_ENOMEM) return cr_error_set(cx->err, rc, 0, 0, "dsl: out of memory");
        if (rc != CR_OK)
            return cr_error_set(cx->err, rc, a->line, a->col,
                                "%s: table row '%.60s', column %zu of %zu: %s", op, row->name,
                                c + 1, row->ncells, cerr.message);
        const char *v = cx->cell.p;
        int neg = v[0] == '-';
        ir_node *num = number(cx, v + neg, cx->cell.len - (size_t)neg, neg, a->line, a->col);
        if (!num) return full(cx);
        span(num, a->end_line, a->end_col);
        list->kid[c] = num;
    }
    *out = list;
    *count = row->ncells;
    return CR_OK;
}

static ir_node *call(lctx *cx, const char *fn, ir_node *list, const dsl_step *st)
{
    ir_node *c = node(cx, IR_CALL, st->line, st->col, 2);
    if (!c) return NULL;
    span(c, st->end_line, st->end_col);
    if (!(c->kid[0] = name(cx, fn, st->line, st->col))) return NULL;
    c->kid[1] = list;
    return c;
}

static cr_code lower_table(lctx *cx, const dsl_step *st, ir_node **out)
{
    ir_node *list = NULL;
    size_t count = 0;
    cr_code rc = row_list(cx, st, &list, &count);
    if (rc != CR_OK) return rc;
    static const char *const fns[] = {
        [DSL_TABLE_MAX] = "max", [DSL_TABLE_MIN] = "min",
        [DSL_TABLE_SUM] = "sum", [DSL_TABLE_AVERAGE] = "sum",
    };
    ir_node *c = call(cx, fns[st->op], list, st);
    if (!c) return full(cx);
    if (st->op != DSL_TABLE_AVERAGE) {
        *out = c;
        return CR_OK;
    }
    /* FinQA's average is sum(row) / len(row); the count is an int, as len() gives. */
    char buf[24];
    snprintf(buf, sizeof buf, "%zu", count);
    ir_node *n = number(cx, buf, strlen(buf), 0, st->line, st->col);
    if (!n) return full(cx);
    n->flags = 0;
    span(n, st->end_line, st->end_col);
    *out = ir_binary(cx->m, IR_BINOP, IR_DIV, c, step_span(st), n, step_span(st));
    return *out ? CR_OK : full(cx);
}

static ir_node *str(lctx *cx, const char *s, const dsl_step *st)
{
    return ir_node_text(cx->m, IR_STR, step_span(st), 0, s, strlen(s));
}

static cr_code lower_greater(lctx *cx, const dsl_step *st, ir_node *a, ir_node *b,
                             ir_node **out)
{
    ir_node *cmp = node(cx, IR_COMPARE, st->line, st->col, 2);
    ir_node *ife = node(cx, IR_IFEXP, st->line, st->col, 3);
    if (!cmp || !ife || !(cmp->cmp = cr_arena_alloc(&cx->m->arena, 1))) return full(cx);
    span(cmp, st->end_line, st->end_col);
    span(ife, st->end_line, st->end_col);
    cmp->kid[0] = a;
    cmp->kid[1] = b;
    cmp->cmp[0] = IR_GT;
    ife->kid[0] = cmp;
    if (!(ife->kid[1] = str(cx, "yes", st)) || !(ife->kid[2] = str(cx, "no", st)))
        return full(cx);
    *out = ife;
    return CR_OK;
}

static cr_code lower_step(lctx *cx, const dsl_step *st, ir_node **out)
{
    if (dsl_op_is_table(st->op)) return lower_table(cx, st, out);
    ir_node *a = lower_arg(cx, &st->arg[0]), *b = lower_arg(cx, &st->arg[1]);
    if (!a || !b) return full(cx);
    if (st->op == DSL_GREATER) return lower_greater(cx, st, a, b, out);
    static const ir_binop ops[] = {
        [DSL_ADD] = IR_ADD, [DSL_SUBTRACT] = IR_SUB, [DSL_MULTIPLY] = IR_MUL,
        [DSL_DIVIDE] = IR_DIV, [DSL_EXP] = IR_POW,
    };
    *out = ir_binary(cx->m, IR_BINOP, ops[st->op], a, step_span(st), b, step_span(st));
    return *out ? CR_OK : full(cx);
}

cr_code dsl_lower(const dsl_program *p, const dsl_table *t, const cr_limits *lim,
                  ir_module **out, cr_error *err)
{
    *out = NULL;
    if (p->nsteps > UINT32_MAX) return cr_error_set(err, CR_ELIMIT, 0, 0, "too many steps");
    lctx cx = { .t = t, .err = err };
    cr_buf_init(&cx.cell, 0);
    cr_code rc = CR_OK;
    if (!(cx.m = ir_module_new(lim ? lim->max_memory : 0)))
        return cr_error_set(err, CR_ENOMEM, 0, 0, "dsl: out of memory");
    ir_node *root = node(&cx, IR_MODULE, 1, 1, (uint32_t)p->nsteps);
    if (!root) { rc = full(&cx); goto out; }
    for (size_t k = 0; k < p->nsteps; k++) {
        const dsl_step *st = &p->steps[k];
        ir_node *as = node(&cx, IR_ASSIGN, st->line, st->col, 2), *value = NULL;
        if (!as || !(as->kid[0] = step_name(&cx, k, st->line, st->col))) { rc = full(&cx); goto out; }
        if ((rc = lower_step(&cx, st, &value)) != CR_OK) goto out;
        span(as, st->end_line, st->end_col);
        span(as->kid[0], st->end_line, st->end_col);
        as->kid[1] = value;
        root->kid[k] = as;
    }
    if (p->nsteps) span(root, p->steps[p->nsteps - 1].end_line, p->steps[p->nsteps - 1].end_col);
    cx.m->root = root;
out:
    cr_buf_free(&cx.cell);
    if (rc != CR_OK) {
        ir_module_free(cx.m);
        return rc;
    }
    *out = cx.m;
    return CR_OK;
}

cr_code dsl_compile(const char *src, size_t len, const dsl_table *t, const cr_limits *lim,
                    ir_module **out, cr_error *err)
{
    dsl_program *p;
    *out = NULL;
    cr_code rc = dsl_parse(src, len, lim, &p, err);
    if (rc != CR_OK) return rc;
    rc = dsl_lower(p, t, lim, out, err);
    dsl_program_free(p);
    return rc;
}
