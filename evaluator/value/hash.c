/* evaluator/value/hash.c: hashing values, the insertion-ordered hash table dicts and sets share,
 * and the set operators. */
#include "evaluator/value/value.h"

#include <stdlib.h>
#include <string.h>

static int hash_deep(eval_cx *cx, void *p) { walk_level *w = p; return eval_hash(cx, w->a, w->h); }

/* ---- hashing --------------------------------------------------------------------------- */

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

/* Hashing or comparing numbers reads their limbs: a million-bit integer is 16 000 of them,
 * so past a few they are charged. */
int eval_limb_walk(eval_cx *cx, const val *a, const val *b)
{
    size_t n = mpz_size(mpq_numref(a->u.q)) + mpz_size(mpq_denref(a->u.q));
    if (b) n += mpz_size(mpq_numref(b->u.q)) + mpz_size(mpq_denref(b->u.q));
    return n <= 16 ? 0 : eval_walk(cx, 0, n * sizeof(mp_limb_t), NULL);
}

static uint64_t hash_mpz(const mpz_t z)
{
    uint64_t h = (uint64_t)mpz_sgn(z);
    size_t n = mpz_size(z);
    for (size_t i = 0; i < n; i++) h = mix(h ^ (uint64_t)mpz_getlimbn(z, (mp_size_t)i));
    return h;
}

/* Equal numbers hash equal whatever their tag: 1 == 1.0 == True is one dict key. */
uint64_t eval_hash_q(mpq_srcptr q)
{
    uint64_t h = hash_mpz(mpq_numref(q));
    return mpz_cmp_ui(mpq_denref(q), 1) != 0 ? mix(h ^ hash_mpz(mpq_denref(q))) : h;
}

int eval_hash(eval_cx *cx, val *v, uint64_t *h)
{
    eval_decides(cx, v);   /* as in eq_inner() */
    switch (v->kind) {
    case V_NONE: *h = 0x9e3779b97f4a7c15ULL; return 0;
    case V_ELLIPSIS: *h = 0x2545f4914f6cdd1dULL; return 0;   /* fixed: set order replays */
    case V_BOOL: case V_INT: case V_FLOAT: {
        /* mixing a limb costs more than reading it: counted twice */
        if (eval_limb_walk(cx, v, v) < 0) return -1;
        *h = eval_hash_q(eval_decided(cx, v, 0));   /* hashes as it compares */
        return 0;
    }
    case V_INF: *h = v->sub ? 0x1234567ULL : 0x7654321ULL; return 0;
    case V_OBJ:
        if (v->u.obj.cls->hash) return v->u.obj.cls->hash(cx, v, h);
        if (v->u.obj.cls->items) {   /* a named tuple hashes as its tuple */
            val *t = v->u.obj.cls->items(cx, v);
            int rc = t ? eval_hash(cx, t, h) : -1;
            eval_decref(cx, t);
            return rc;
        }
        eval_raise(cx, CR_EPY_TYPE, NULL, "unhashable type: '%s'", eval_type_name(v));
        return -1;
    case V_STR:
        if (!v->u.str.hash) {
            if (eval_walk(cx, 0, v->u.str.len, NULL) < 0) return -1;
            uint64_t x = 0xcbf29ce484222325ULL;
            for (size_t i = 0; i < v->u.str.len; i++)
                x = (x ^ (unsigned char)v->u.str.s[i]) * 0x100000001b3ULL;
            v->u.str.hash = x | 1;
        }
        *h = v->u.str.hash;
        return 0;
    case V_TUPLE: {
        /* CPython's tuple hash has no recursion limit: only the stack is watched */
        if (eval_stack_low(cx)) return eval_deep(cx, hash_deep, &(walk_level){ .a = v, .h = h });
        uint64_t x = 0x345678;
        for (size_t i = 0; i < v->u.seq.len; i++) {
            uint64_t e;
            if (eval_count(cx, 1, NULL) < 0 || eval_hash(cx, v->u.seq.it[i], &e) < 0) return -1;
            x = mix(x ^ e) + i;
        }
        *h = x;
        return 0;
    }
    case V_RANGE: case V_LIST: case V_DICT: case V_SET: case V_ITER:
        if (v->kind != V_ITER || v->sub >= IT_KEYS) {
            eval_raise(cx, CR_EPY_TYPE, NULL, "unhashable type: '%s'", eval_type_name(v));
            return -1;
        }
        /* iterators hash by identity */
        __attribute__((fallthrough));
    default:
        *h = mix((uint64_t)(uintptr_t)v ^ ((uint64_t)v->kind << 56) ^ v->sub);
        return 0;
    }
}

/* ---- dicts and sets -------------------------------------------------------------------- */

static int32_t dict_find(eval_cx *cx, val *d, val *k, uint64_t h, size_t *slot, int *err)
{
    *err = 0;
    if (!d->u.d.icap) return -1;
    size_t mask = d->u.d.icap - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
        int32_t e = d->u.d.idx[i];
        if (e < 0) { *slot = i; return -1; }
        dict_ent *en = &d->u.d.ent[e];
        if (!en->key || en->hash != h) continue;
        if (en->key == k) return e;
        int eq = eval_eq(cx, en->key, k);
        if (eq < 0) { *err = 1; return -1; }
        if (eq) return e;
    }
}

static int dict_rebuild(eval_cx *cx, val *d, size_t cap)
{
    size_t icap = 8;
    while (icap < cap * 2) icap *= 2;
    if (eval_mem(cx, d, eval_heap_cost(sizeof *d) + eval_heap_cost(cap * sizeof(dict_ent)) +
                            eval_heap_cost(icap * sizeof(int32_t))) < 0)
        return -1;
    dict_ent *ent = malloc(cap * sizeof *ent);
    int32_t *idx = malloc(icap * sizeof *idx);
    if (!ent || !idx) {
        free(ent);
        free(idx);
        eval_raise(cx, CR_ENOMEM, NULL, "out of memory");
        return -1;
    }
    memset(idx, 0xff, icap * sizeof *idx);
    size_t n = 0;
    for (size_t i = 0; i < d->u.d.used; i++) {
        if (!d->u.d.ent[i].key) continue;
        ent[n] = d->u.d.ent[i];
        size_t j = ent[n].hash & (icap - 1);
        while (idx[j] >= 0) j = (j + 1) & (icap - 1);
        idx[j] = (int32_t)n;
        n++;
    }
    free(d->u.d.ent);
    free(d->u.d.idx);
    d->u.d.ent = ent;
    d->u.d.idx = idx;
    d->u.d.cap = cap;
    d->u.d.icap = icap;
    d->u.d.used = n;
    return 0;
}

val *eval_dict_new(eval_cx *cx, vkind kind)
{
    return eval_new(cx, kind);
}

int eval_dict_set(eval_cx *cx, val *d, val *k, val *v)
{
    uint64_t h;
    size_t slot = 0;
    int err;
    if (eval_hash(cx, k, &h) < 0) goto fail;
    int32_t e = dict_find(cx, d, k, h, &slot, &err);
    if (err) goto fail;
    if (e >= 0) {
        eval_decref(cx, k);
        eval_decref(cx, d->u.d.ent[e].value);
        d->u.d.ent[e].value = v;
        return 0;
    }
    if (d->u.d.used == d->u.d.cap) {
        if (eval_over_len(cx, d->u.d.len + 1, 0)) goto fail;
        size_t cap = d->u.d.len + 1 > d->u.d.cap / 2 ? (d->u.d.cap ? d->u.d.cap * 2 : 4)
                                                     : d->u.d.cap;
        if (dict_rebuild(cx, d, cap) < 0) goto fail;
        dict_find(cx, d, k, h, &slot, &err);
    }
    e = (int32_t)d->u.d.used++;
    d->u.d.ent[e].key = k;
    d->u.d.ent[e].value = v;
    d->u.d.ent[e].hash = h;
    d->u.d.idx[slot] = e;
    d->u.d.len++;
    return 0;
fail:
    eval_decref(cx, k);
    eval_decref(cx, v);
    return -1;
}

val *eval_dict_get(eval_cx *cx, val *d, val *k, int *err)
{
    uint64_t h;
    size_t slot;
    *err = 0;
    if (eval_hash(cx, k, &h) < 0) { *err = 1; return NULL; }
    int32_t e = dict_find(cx, d, k, h, &slot, err);
    if (e < 0) return NULL;
    return d->kind == V_SET ? d->u.d.ent[e].key : d->u.d.ent[e].value;
}

int eval_dict_del(eval_cx *cx, val *d, val *k)
{
    uint64_t h;
    size_t slot;
    int err;
    if (eval_hash(cx, k, &h) < 0) return -1;
    int32_t e = dict_find(cx, d, k, h, &slot, &err);
    if (err) return -1;
    if (e < 0) return 0;
    val *ok = d->u.d.ent[e].key, *ov = d->u.d.ent[e].value;
    d->u.d.ent[e].key = NULL;
    d->u.d.ent[e].value = NULL;
    d->u.d.len--;
    eval_decref(cx, ok);
    eval_decref(cx, ov);
    return 1;
}

/* Adds d's entry i to r (a set's value is NULL). */
static int dict_put_ent(eval_cx *cx, val *r, val *d, size_t i)
{
    val *k = d->u.d.ent[i].key, *v = d->u.d.ent[i].value;
    EV_INCREF(k);
    if (v) EV_INCREF(v);
    return eval_dict_set(cx, r, k, v);
}

/* 1 when d's entry i is in o, 0 not, -1 error. */
static int dict_ent_in(eval_cx *cx, val *d, size_t i, val *o)
{
    int err;
    return eval_dict_get(cx, o, d->u.d.ent[i].key, &err) ? 1 : err ? -1 : 0;
}

val *eval_set_binop(eval_cx *cx, int op, val *a, val *b, int inplace, const ir_node *at)
{
    val *r = a;
    int rc = 0;
    if (op == IR_BITAND && inplace) {   /* CPython: the intersection, then a takes its items */
        if (!(r = eval_set_binop(cx, op, a, b, 0, at))) return NULL;
        eval_swap_items(a, r);
        eval_decref(cx, r);
        EV_INCREF(a);
        return a;
    }
    if (eval_walk(cx, a->u.d.len + b->u.d.len, 0, at) < 0) return NULL;
    if (inplace) {
        EV_INCREF(a);
    } else if (!(r = eval_dict_new(cx, a->kind))) {
        return NULL;
    }
    if (op == IR_BITAND && a->u.d.len >= b->u.d.len) {   /* walks b unless a is smaller */
        val *t = a; a = b; b = t;
    }
    /* Entries are read by index and a deletion only empties a slot, so walking b while r
     * (which may be b itself, as in s -= s) changes is safe. */
    switch (op) {
    case IR_BITOR:
        for (size_t i = 0; i < a->u.d.used && !inplace && rc == 0; i++)
            if (a->u.d.ent[i].key) rc = dict_put_ent(cx, r, a, i);
        for (size_t i = 0; i < b->u.d.used && rc == 0; i++)
            if (b->u.d.ent[i].key) rc = dict_put_ent(cx, r, b, i);
        break;
    case IR_BITAND: case IR_SUB:
        for (size_t i = 0; i < a->u.d.used && rc == 0; i++) {
            if (!a->u.d.ent[i].key || (rc = dict_ent_in(cx, a, i, b)) < 0) continue;
            if (rc == (op == IR_SUB)) rc = inplace ? eval_dict_del(cx, r, a->u.d.ent[i].key) : 0;
            else rc = inplace ? 0 : dict_put_ent(cx, r, a, i);
            if (rc > 0) rc = 0;
        }
        break;
    default:   /* IR_BITXOR */
        if (inplace && a == b) {
            for (size_t i = 0; i < a->u.d.used && rc == 0; i++)
                if (a->u.d.ent[i].key) rc = eval_dict_del(cx, a, a->u.d.ent[i].key) < 0 ? -1 : 0;
            break;
        }
        for (size_t i = 0; i < a->u.d.used && !inplace && rc == 0; i++) {
            if (!a->u.d.ent[i].key || (rc = dict_ent_in(cx, a, i, b)) < 0) continue;
            rc = rc ? 0 : dict_put_ent(cx, r, a, i);
        }
        for (size_t i = 0; i < b->u.d.used && rc == 0; i++) {
            if (!b->u.d.ent[i].key || (rc = dict_ent_in(cx, b, i, a)) < 0) continue;
            if (rc && inplace) rc = eval_dict_del(cx, r, b->u.d.ent[i].key) < 0 ? -1 : 0;
            else rc = rc ? 0 : dict_put_ent(cx, r, b, i);
        }
        break;
    }
    if (rc < 0) {
        eval_decref(cx, r);
        eval_at(cx, at);
        return NULL;
    }
    return r;
}
