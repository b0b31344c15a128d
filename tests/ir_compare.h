/* tests/ir_compare.h: node-by-node equality of two IR trees and of two modules' reasons, every
 * field and every position (ir_dump() shows neither positions nor lengths). Shared by
 * tests/test_fastpath.c and fuzz/fuzz_fastpath.c. */
#ifndef CR_TESTS_IR_COMPARE_H
#define CR_TESTS_IR_COMPARE_H

#include <stdio.h>
#include <string.h>

#include "ir/ir.h"

/* 1 when a and b are equal; otherwise 0 and `why` names the first difference. */
static int ir_compare_nodes(const ir_node *a, const ir_node *b, char *why, size_t cap, int depth)
{
    if (!a || !b) {
        if (a == b) return 1;
        snprintf(why, cap, "%s node against NULL", ir_kind_name((ir_kind)(a ? a : b)->kind));
        return 0;
    }
    if (depth > 10000) {
        snprintf(why, cap, "tree too deep to compare");
        return 0;
    }
    const char *k = ir_kind_name((ir_kind)a->kind);
    if (a->kind != b->kind || a->op != b->op || a->flags != b->flags || a->n != b->n) {
        snprintf(why, cap, "%d:%d %s/%s: kind, op %u/%u, flags %u/%u or n %u/%u differ", a->line,
                 a->col, k, ir_kind_name((ir_kind)b->kind), a->op, b->op, a->flags, b->flags,
                 a->n, b->n);
        return 0;
    }
    if (a->line != b->line || a->col != b->col || a->end_line != b->end_line ||
        a->end_col != b->end_col) {
        snprintf(why, cap, "%s at %d:%d-%d:%d against %d:%d-%d:%d", k, a->line, a->col,
                 a->end_line, a->end_col, b->line, b->col, b->end_line, b->end_col);
        return 0;
    }
    if (a->len != b->len || !a->text != !b->text ||
        (a->text && memcmp(a->text, b->text, a->len) != 0)) {
        snprintf(why, cap, "%d:%d %s text [%.*s] against [%.*s]", a->line, a->col, k,
                 a->text ? (int)a->len : 6, a->text ? a->text : "(null)",
                 b->text ? (int)b->len : 6, b->text ? b->text : "(null)");
        return 0;
    }
    if (!a->aux != !b->aux || (a->aux && strcmp(a->aux, b->aux) != 0)) {
        snprintf(why, cap, "%d:%d %s aux [%s] against [%s]", a->line, a->col, k,
                 a->aux ? a->aux : "(null)", b->aux ? b->aux : "(null)");
        return 0;
    }
    if (a->kind == IR_COMPARE && a->n > 1 && (!a->cmp || !b->cmp || memcmp(a->cmp, b->cmp, a->n - 1) != 0)) {
        snprintf(why, cap, "%d:%d compare operators differ", a->line, a->col);
        return 0;
    }
    for (uint32_t i = 0; i < a->n; i++)
        if (!ir_compare_nodes(a->kid[i], b->kid[i], why, cap, depth + 1)) return 0;
    return 1;
}

static int ir_compare_modules(const ir_module *a, const ir_module *b, char *why, size_t cap)
{
    if (!ir_compare_nodes(a->root, b->root, why, cap, 0)) return 0;
    if (a->nreasons != b->nreasons) {
        snprintf(why, cap, "%zu reasons against %zu", a->nreasons, b->nreasons);
        return 0;
    }
    for (size_t i = 0; i < a->nreasons; i++) {
        const ir_reason *x = &a->reasons[i], *y = &b->reasons[i];
        if (strcmp(x->code, y->code) || x->line != y->line || x->col != y->col ||
            strcmp(x->snippet, y->snippet)) {
            snprintf(why, cap, "reason %s %d:%d [%s] against %s %d:%d [%s]", x->code, x->line,
                     x->col, x->snippet, y->code, y->line, y->col, y->snippet);
            return 0;
        }
    }
    return 1;
}

#endif
