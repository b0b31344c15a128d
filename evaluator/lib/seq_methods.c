/* evaluator/lib/seq_methods.c: the methods of list and tuple (and str's index/count), and the sort
 * list.sort and sorted() share. */
#include "evaluator/lib/lib.h"

#include <stdlib.h>
#include <string.h>

/* ---- sorting --------------------------------------------------------------------------- */

typedef struct {
    eval_cx *cx;
    int failed;
} sort_cx;

static int sort_lt(sort_cx *s, val *a, val *b)
{
    if (s->failed) return 0;
    if (eval_count(s->cx, 1, NULL) < 0) { s->failed = 1; return 0; }
    int r = eval_cmp(s->cx, IR_LT, a, b);
    if (r < 0) { s->failed = 1; return 0; }
    return r;
}

/* Stable merge sort of keys[] carrying vals[] along (Python's sort is stable). */
static void merge_sort(sort_cx *s, val **keys, val **vals, val **tk, val **tv, size_t n)
{
    if (n < 2) return;
    size_t h = n / 2;
    merge_sort(s, keys, vals, tk, tv, h);
    merge_sort(s, keys + h, vals + h, tk, tv, n - h);
    if (s->failed) return;
    memcpy(tk, keys, n * sizeof *tk);
    memcpy(tv, vals, n * sizeof *tv);
    size_t i = 0, j = h, k = 0;
    while (i < h && j < n) {
        if (sort_lt(s, tk[j], tk[i])) { keys[k] = tk[j]; vals[k++] = tv[j++]; }
        else { keys[k] = tk[i]; vals[k++] = tv[i++]; }
    }
    while (i < h) { keys[k] = tk[i]; vals[k++] = tv[i++]; }
    while (j < n) { keys[k] = tk[j]; vals[k++] = tv[j++]; }
}

static void reverse_items(val **keys, val **vals, size_t n)
{
    for (size_t i = 0, j = n; i + 1 < j; i++, j--) {
        val *t = keys[i]; keys[i] = keys[j - 1]; keys[j - 1] = t;
        t = vals[i]; vals[i] = vals[j - 1]; vals[j - 1] = t;
    }
}

/* CPython's sort of fewer than 64 items: the leading run (a strictly descending one
 * reversed), then binary insertion. Under a consistent order any stable sort agrees; with
 * a NaN among the items only the same comparisons give CPython's order. */
static void small_sort(sort_cx *s, val **keys, val **vals, size_t n)
{
    size_t run = 1;
    if (n > 1) {
        int desc = sort_lt(s, keys[1], keys[0]);
        for (run = 2; run < n && sort_lt(s, keys[run], keys[run - 1]) == desc; run++) {}
        if (desc && !s->failed) reverse_items(keys, vals, run);
    }
    for (size_t st = run; st < n && !s->failed; st++) {
        size_t l = 0, r = st;
        val *pk = keys[st], *pv = vals[st];
        while (l < r) {
            size_t p = l + (r - l) / 2;
            if (sort_lt(s, pk, keys[p])) r = p;
            else l = p + 1;
        }
        memmove(keys + l + 1, keys + l, (st - l) * sizeof *keys);
        memmove(vals + l + 1, vals + l, (st - l) * sizeof *vals);
        keys[l] = pk;
        vals[l] = pv;
    }
}

/* Sorts list l in place. key and reverse as in list.sort(). As in CPython, the list is
 * emptied while the key function and the comparisons run: its items move to `hold`, which
 * keeps their references, so a key function that appends to or pops from the list frees
 * nothing the sort still uses; whatever the list holds afterwards is dropped and reported. */
int eval_sort_list(eval_cx *cx, val *l, val *key, int reverse, const ir_node *at)
{
    size_t n = l->u.seq.len, i;
    if (key && key->kind == V_NONE) key = NULL;
    if (n == 0 || (n == 1 && !key)) return 0;   /* a lone item still meets the key */
    val *hold = eval_new(cx, V_LIST), tmp = { 0 }, **keys = NULL, **tk = NULL;
    if (!hold) return -1;
    eval_swap_items(l, hold);
    int rc = -1;
    /* keys[], and tk[] of 2n for the merges: charged like any value, through `tmp` */
    if (eval_mem(cx, &tmp, 3 * n * sizeof *keys) < 0) goto out;
    if (!(keys = calloc(n, sizeof *keys)) || !(tk = malloc(2 * n * sizeof *tk))) {
        eval_raise(cx, CR_ENOMEM, at, "out of memory");
        goto out;
    }
    val **vals = hold->u.seq.it;
    for (i = 0; i < n; i++) {
        if (key) {
            if (!(keys[i] = eval_call1(cx, key, vals[i], at))) goto out;
        } else {
            keys[i] = vals[i];
            EV_INCREF(keys[i]);
        }
    }
    /* reverse=True sorts the reversed list and reverses the result, as CPython: stable.
     * A comparison that raises leaves the items as CPython's sort leaves them (a program
     * may catch the error and look): the comparisons done so far applied, the result still
     * reversed back (the merges of 64 items or more are not CPython's) */
    sort_cx s = { cx, 0 };
    if (reverse) reverse_items(keys, vals, n);
    if (n < 64) small_sort(&s, keys, vals, n);
    else merge_sort(&s, keys, vals, tk, tk + n, n);
    if (reverse) reverse_items(keys, vals, n);
    if (!s.failed) rc = 0;
out:
    if (keys)
        for (i = 0; i < n; i++) eval_decref(cx, keys[i]);
    free(keys);
    free(tk);
    cx->mem -= tmp.msz;
    int touched = l->u.seq.it || l->u.seq.len;
    eval_swap_items(l, hold);
    eval_decref(cx, hold);
    if (rc == 0 && touched) {
        eval_raise(cx, CR_EPY_VALUE, at, "list modified during sort");
        rc = -1;
    }
    return rc < 0 ? eval_at(cx, at) : 0;
}

/* ---- list and tuple methods ------------------------------------------------------------ */

val *eval_seq_index_count(eval_cx *cx, val *self, int id, eval_args *a, const ir_node *at)
{
    const char *name = eval_method_name(id);
    size_t hi = id == MT_INDEX ? 3 : (self->kind == V_STR ? 3 : 1);
    if (eval_check_args(cx, a, 1, hi, NULL, name, at) < 0)
        return NULL;
    val *x = a->pos[0];
    if (self->kind == V_STR) {
        if (x->kind != V_STR)
            return eval_raise(cx, CR_EPY_TYPE, at, "must be str, not %s", eval_type_name(x));
        const char *s = self->u.str.s;
        size_t n = self->u.str.len;
        if (eval_walk(cx, 0, n + x->u.str.len, at) < 0) return NULL;
        if (id == MT_COUNT) {
            long c = 0;
            if (!x->u.str.len) return eval_int_si(cx, (long)self->u.str.nch + 1);
            for (size_t i = 0; i + x->u.str.len <= n;) {
                const char *h = memmem(s + i, n - i, x->u.str.s, x->u.str.len);
                if (!h) break;
                c++;
                i = (size_t)(h - s) + x->u.str.len;
            }
            return eval_int_si(cx, c);
        }
        const char *h = memmem(s, n, x->u.str.s, x->u.str.len);
        if (!h) return eval_raise(cx, CR_EPY_VALUE, at, "substring not found");
        size_t ci = 0;
        for (const char *q = s; q < h; q++) ci += ((unsigned char)*q & 0xC0) != 0x80;
        return eval_int_si(cx, (long)ci);
    }
    long c = 0;
    for (size_t i = 0; i < self->u.seq.len; i++) {
        if (eval_count(cx, 1, at) < 0) return NULL;
        int r = eval_eq(cx, self->u.seq.it[i], x);
        if (r < 0) return NULL;
        if (r && id == MT_INDEX) return eval_int_si(cx, (long)i);
        c += r;
    }
    if (id == MT_COUNT) return eval_int_si(cx, c);
    val *s = eval_to_str(cx, x, 1);
    if (!s) return NULL;
    eval_raise(cx, CR_EPY_VALUE, at, "%s is not in %s", s->u.str.s,
               self->kind == V_LIST ? "list" : "tuple");
    eval_decref(cx, s);
    return NULL;
}

val *eval_list_method(eval_cx *cx, val *self, int id, eval_args *a, const ir_node *at)
{
    const char *name = eval_method_name(id);
    int64_t i;
    switch (id) {
    case MT_APPEND:
        if (eval_check_args(cx, a, 1, 1, NULL, name, at) < 0) return NULL;
        EV_INCREF(a->pos[0]);
        return eval_seq_push(cx, self, a->pos[0]) < 0 ? NULL : eval_none(cx);
    case MT_EXTEND: {
        if (eval_check_args(cx, a, 1, 1, NULL, name, at) < 0) return NULL;
        val *l = eval_items_of(cx, a->pos[0], at);
        if (!l) return NULL;
        if (eval_walk(cx, l->u.seq.len, 0, at) < 0) { eval_decref(cx, l); return NULL; }
        for (size_t k = 0; k < l->u.seq.len; k++) {
            EV_INCREF(l->u.seq.it[k]);
            if (eval_seq_push(cx, self, l->u.seq.it[k]) < 0) { eval_decref(cx, l); return NULL; }
        }
        eval_decref(cx, l);
        return eval_none(cx);
    }
    case MT_INSERT: {
        if (a->npos != 2)
            return eval_raise(cx, CR_EPY_TYPE, at, "insert expected 2 arguments, got %zu", a->npos);
        if (eval_int_of(cx, a->pos[0], &i) < 0) return NULL;
        int64_t n = (int64_t)self->u.seq.len;
        if (i < 0) i = i + n < 0 ? 0 : i + n;
        if (i > n) i = n;
        if (eval_walk(cx, 0, (uint64_t)(n - i) * sizeof(val *), at) < 0) return NULL;
        EV_INCREF(a->pos[1]);
        if (eval_seq_push(cx, self, a->pos[1]) < 0) return NULL;
        memmove(self->u.seq.it + i + 1, self->u.seq.it + i, (size_t)(n - i) * sizeof(val *));
        self->u.seq.it[i] = a->pos[1];
        return eval_none(cx);
    }
    case MT_POP: {
        if (eval_check_args(cx, a, 0, 1, NULL, name, at) < 0) return NULL;
        int64_t n = (int64_t)self->u.seq.len;
        i = -1;
        if (a->npos && eval_int_of(cx, a->pos[0], &i) < 0) return NULL;
        if (n == 0) return eval_raise(cx, CR_EPY_INDEX, at, "pop from empty list");
        if (i < 0) i += n;
        if (i < 0 || i >= n) return eval_raise(cx, CR_EPY_INDEX, at, "pop index out of range");
        if (eval_walk(cx, 0, (uint64_t)(n - i - 1) * sizeof(val *), at) < 0) return NULL;
        val *r = self->u.seq.it[i];
        memmove(self->u.seq.it + i, self->u.seq.it + i + 1, (size_t)(n - i - 1) * sizeof(val *));
        self->u.seq.len--;
        return r;
    }
    case MT_SORT: {
        static const char *const kws[] = { "key", "reverse", NULL };
        if (eval_check_args(cx, a, 0, 0, kws, name, at) < 0) return NULL;
        val *rev = eval_kwarg(a, "reverse");
        if (eval_sort_list(cx, self, eval_kwarg(a, "key"), rev && eval_truth(cx, rev), at) < 0)
            return NULL;
        return eval_none(cx);
    }
    case MT_REVERSE:
        if (eval_check_args(cx, a, 0, 0, NULL, name, at) < 0 ||
            eval_walk(cx, 0, self->u.seq.len * sizeof(val *), at) < 0)
            return NULL;
        for (size_t p = 0, q = self->u.seq.len; p + 1 < q; p++, q--) {
            val *t = self->u.seq.it[p];
            self->u.seq.it[p] = self->u.seq.it[q - 1];
            self->u.seq.it[q - 1] = t;
        }
        return eval_none(cx);
    case MT_COPY:
        if (eval_check_args(cx, a, 0, 0, NULL, name, at) < 0) return NULL;
        return eval_list_of(cx, self, V_LIST);
    default:
        return eval_seq_index_count(cx, self, id, a, at);
    }
}
