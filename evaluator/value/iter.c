/* evaluator/value/iter.c: the one-shot iterators (map, filter, zip, enumerate, reversed and
 * generator expressions), lazy as CPython's: each item is made when it is asked for, from
 * sources walked on demand, so an iterator's memory does not depend on its length.
 *
 * A source that has ended is released and stays ended (CPython's list iterator does not
 * resume when its list grows), unless it is itself a one-shot iterator: that one may be
 * running further up the C stack (a map whose function consumes the same map), so it is held
 * until its consumer is freed, and its own state says it has ended. */
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "evaluator/value/value.h"

static int is_lazy(const val *v)
{
    return v->kind == V_ITER && v->sub < IT_KEYS;
}

static int src_next(eval_cx *cx, eval_iter *it, val **out)
{
    if (!it->src) return 0;
    int rc = eval_iter_next(cx, it, out);
    if (rc == 0 && !is_lazy(it->src)) eval_iter_done(cx, it);
    return rc;
}

/* Releases what the iterator holds; it gives nothing more. */
static void lazy_close(eval_cx *cx, eval_lazy *lz)
{
    lz->ended = 1;
    for (uint32_t i = 0; i < lz->n; i++) eval_iter_done(cx, &lz->its[i]);
    lz->k = 0;
    val *f = lz->f;
    lz->f = NULL;
    eval_decref(cx, f);
}

void eval_lazy_free(eval_cx *cx, val *v)
{
    eval_lazy *lz = v->u.itr.lz;
    v->u.itr.lz = NULL;
    lazy_close(cx, lz);
    free(lz);
}

val *eval_lazy_of(eval_cx *cx, int sub, val *f, val **srcs, size_t n, int64_t start,
                  const ir_node *at)
{
    val *v = eval_lazy_new(cx, sub, (uint32_t)n), *rs = NULL;
    if (!v) return eval_at(cx, at), NULL;
    eval_lazy *lz = v->u.itr.lz;
    if (f) { lz->f = f; EV_INCREF(f); }
    lz->count = start;
    if (sub == IT_REVERSED) {   /* a sequence is indexed from its end; anything else listed */
        val *s = srcs[0];
        if (s->kind != V_LIST && s->kind != V_TUPLE && s->kind != V_STR && s->kind != V_RANGE) {
            if (!(rs = eval_list_of(cx, s, V_LIST))) goto fail;
            s = rs;
        }
        if (eval_iter_init(cx, &lz->its[0], s) < 0) goto fail;
        size_t len;
        eval_len(cx, s, &len);
        lz->count = s->kind == V_STR ? (int64_t)s->u.str.len : (int64_t)len;
        eval_decref(cx, rs);
        return v;
    }
    for (size_t i = 0; i < n; i++)
        if (eval_iter_init(cx, &lz->its[i], srcs[i]) < 0) goto fail;
    return v;
fail:
    eval_decref(cx, rs);
    eval_decref(cx, v);
    return eval_at(cx, at), NULL;
}

static int reversed_next(eval_cx *cx, eval_lazy *lz, val **out)
{
    val *s = lz->its[0].src;
    int64_t c = lz->count;
    if (s->kind == V_RANGE) {
        /* the items by their index, in modular arithmetic: an item fits int64 whatever the
         * length (which may pass INT64_MAX) */
        uint64_t u = (uint64_t)c;
        if (!u) return 0;
        lz->count = (int64_t)--u;
        *out = eval_int_si(cx, (long)((uint64_t)s->u.rng.start + u * (uint64_t)s->u.rng.step));
        return *out ? 1 : -1;
    }
    if (s->kind == V_STR) {
        if (c <= 0) return 0;
        int64_t j = c - 1;
        while (j > 0 && ((unsigned char)s->u.str.s[j] & 0xC0) == 0x80) j--;
        lz->count = j;
        *out = eval_str(cx, s->u.str.s + j, (size_t)(c - j));
        return *out ? 1 : -1;
    }
    /* CPython's list_reverseiterator: a list that shrank below the position ends it */
    if (c <= 0 || (uint64_t)c > s->u.seq.len) {
        lazy_close(cx, lz);
        return 0;
    }
    lz->count = c - 1;
    *out = s->u.seq.it[c - 1];
    EV_INCREF(*out);
    return 1;
}

val *eval_pair(eval_cx *cx, val *a, val *b)
{
    val *t = eval_seq_new(cx, V_TUPLE, 2);
    if (!t) {
        eval_decref(cx, a);
        eval_decref(cx, b);
        return NULL;
    }
    t->u.seq.it[0] = a;
    t->u.seq.it[1] = b;
    t->u.seq.len = 2;
    return t;
}

/* zip(strict=True) when source i has ended: the others must end with it, or CPython's
 * ValueError names the first that does not. 0, -1 raised. */
static int zip_strict_end(eval_cx *cx, eval_lazy *lz, uint32_t i)
{
    const char *what = "shorter";
    uint32_t j = i;
    if (i == 0) {
        for (j = 1; j < lz->n; j++) {
            val *x;
            int rc = src_next(cx, &lz->its[j], &x);
            if (rc < 0) return rc;
            if (rc > 0) { eval_decref(cx, x); break; }
        }
        if (j == lz->n) return 0;
        what = "longer";
    }
    char others[32] = "1";
    if (j > 1) snprintf(others, sizeof others, "1-%u", j);
    eval_raise(cx, CR_EPY_VALUE, NULL, "zip() argument %u is %s than argument%s %s", j + 1, what,
               j > 1 ? "s" : "", others);
    return -1;
}

static int lazy_step(eval_cx *cx, val *v, eval_lazy *lz, val **out)
{
    val *x, *t;
    int rc;
    switch (v->sub) {
    case IT_ZIP: case IT_MAP: {   /* CPython's order: a source that ends drops what came before */
        if (!lz->n) return 0;
        if (!(t = eval_seq_new(cx, V_TUPLE, lz->n))) return -1;
        for (uint32_t i = 0; i < lz->n; i++) {
            if ((rc = src_next(cx, &lz->its[i], &x)) <= 0) {
                eval_decref(cx, t);
                return rc == 0 && v->sub == IT_ZIP && lz->count ? zip_strict_end(cx, lz, i) : rc;
            }
            t->u.seq.it[t->u.seq.len++] = x;
        }
        if (v->sub == IT_ZIP) {
            *out = t;
            return 1;
        }
        eval_args fa = { t->u.seq.it, lz->n, NULL, NULL, 0 };
        *out = cx->hooks->call(cx, lz->f, &fa, NULL);
        eval_decref(cx, t);
        return *out ? 1 : -1;
    }
    case IT_FILTER:
        for (;;) {
            if ((rc = src_next(cx, &lz->its[0], &x)) <= 0) return rc;
            int keep;
            if (eval_count(cx, 1, NULL) < 0) {
                keep = -1;
            } else if (lz->f->kind == V_NONE) {
                keep = eval_truth(cx, x);
            } else {
                eval_args fa = { &x, 1, NULL, NULL, 0 };
                keep = (t = cx->hooks->call(cx, lz->f, &fa, NULL)) ? eval_truth(cx, t) : -1;
                eval_decref(cx, t);
            }
            if (keep > 0) { *out = x; return 1; }
            eval_decref(cx, x);
            if (keep < 0) return -1;
        }
    case IT_ENUMERATE:
        if ((rc = src_next(cx, &lz->its[0], &x)) <= 0) return rc;
        if (!(t = eval_int_si(cx, (long)lz->count))) { eval_decref(cx, x); return -1; }
        lz->count++;
        return (*out = eval_pair(cx, t, x)) ? 1 : -1;
    case IT_REVERSED:
        return reversed_next(cx, lz, out);
    default:
        return cx->hooks->gen_next(cx, v, out);
    }
}

int eval_lazy_next(eval_cx *cx, val *v, val **out)
{
    eval_lazy *lz = v->u.itr.lz;
    if (lz->ended) return 0;
    if (lz->running && v->sub == IT_GENERATOR) {
        eval_raise(cx, CR_EPY_VALUE, NULL, "generator already executing");
        return -1;
    }
    if (eval_count(cx, 1, NULL) < 0) return -1;
    lz->running++;
    int rc = lazy_step(cx, v, lz, out);
    lz->running--;
    /* a generator that ended or raised is finished, as CPython's */
    if (rc <= 0 && v->sub == IT_GENERATOR) lazy_close(cx, lz);
    return rc;
}
