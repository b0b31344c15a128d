/* evaluator/lib/dict_methods.c: the methods of dict and set, and dict.update's merge that dict()
 * shares. The hash table itself is hash.c's. */
#include "evaluator/lib/lib.h"

#include <string.h>

int eval_dict_update(eval_cx *cx, val *d, val *src, eval_args *a, const ir_node *at)
{
    if (src && src->kind == V_DICT) {
        for (size_t i = 0; i < src->u.d.used; i++) {
            dict_ent *e = &src->u.d.ent[i];
            if (!e->key) continue;
            if (eval_count(cx, 1, at) < 0) return -1;   /* before the references it would leak */
            EV_INCREF(e->key);
            EV_INCREF(e->value);
            if (eval_dict_set(cx, d, e->key, e->value) < 0) return -1;
        }
    } else if (src) {
        val *l = eval_items_of(cx, src, at);
        if (!l) return -1;
        for (size_t i = 0; i < l->u.seq.len; i++) {
            val *p = l->u.seq.it[i];
            size_t n = 0;
            if (p->kind != V_LIST && p->kind != V_TUPLE && p->kind != V_STR) {
                eval_raise(cx, CR_EPY_TYPE, at,
                           "cannot convert dictionary update sequence element #%zu to a sequence",
                           i);
                eval_decref(cx, l);
                return -1;
            }
            val *pl = eval_list_of(cx, p, V_LIST);
            if (!pl) { eval_decref(cx, l); return -1; }
            n = pl->u.seq.len;
            if (n != 2) {
                eval_raise(cx, CR_EPY_VALUE, at,
                           "dictionary update sequence element #%zu has length %zu; 2 is required",
                           i, n);
                eval_decref(cx, pl);
                eval_decref(cx, l);
                return -1;
            }
            EV_INCREF(pl->u.seq.it[0]);
            EV_INCREF(pl->u.seq.it[1]);
            int rc = eval_dict_set(cx, d, pl->u.seq.it[0], pl->u.seq.it[1]);
            eval_decref(cx, pl);
            if (rc < 0 || eval_count(cx, 1, at) < 0) { eval_decref(cx, l); return -1; }
        }
        eval_decref(cx, l);
    }
    for (size_t i = 0; a && i < a->nkw; i++) {
        val *k = eval_str(cx, a->kwname[i], strlen(a->kwname[i]));
        if (!k) return -1;
        EV_INCREF(a->kw[i]);
        if (eval_dict_set(cx, d, k, a->kw[i]) < 0) return -1;
    }
    return 0;
}

/* A view holds no items: its readers walk the dict (eval_iter, contains, repr). */
static val *dict_view(eval_cx *cx, val *d, int sub)
{
    val *r = eval_new(cx, V_ITER);
    if (!r) return NULL;
    r->sub = (uint16_t)sub;
    r->u.itr.dict = d;
    EV_INCREF(d);
    return r;
}

static val *copy_of(eval_cx *cx, val *self)
{
    if (eval_walk(cx, self->u.d.used, 0, NULL) < 0) return NULL;
    val *d = eval_dict_new(cx, (vkind)self->kind);
    if (!d) return NULL;
    for (size_t i = 0; i < self->u.d.used; i++) {
        dict_ent *e = &self->u.d.ent[i];
        if (!e->key) continue;
        EV_INCREF(e->key);
        if (e->value) EV_INCREF(e->value);
        if (eval_dict_set(cx, d, e->key, e->value) < 0) { eval_decref(cx, d); return NULL; }
    }
    return d;
}

val *eval_dict_method(eval_cx *cx, val *self, int id, eval_args *a, const ir_node *at)
{
    const char *name = eval_method_name(id);
    int err;
    val *v;
    switch (id) {
    case MT_ITEMS: case MT_KEYS: case MT_VALUES:
        if (eval_check_args(cx, a, 0, 0, NULL, name, at) < 0) return NULL;
        return dict_view(cx, self, id == MT_ITEMS ? IT_ITEMS : id == MT_KEYS ? IT_KEYS : IT_VALUES);
    case MT_GET: case MT_SETDEFAULT:
        if (a->npos < 1 || a->npos > 2) {
            return eval_raise(cx, CR_EPY_TYPE, at, "%s expected %s 1 argument%s, got %zu", name,
                              a->npos ? "at most" : "at least", "", a->npos);
        }
        if (eval_check_kw(cx, a, NULL, name, at) < 0) return NULL;
        v = eval_dict_get(cx, self, a->pos[0], &err);
        if (err) return NULL;
        if (v) { EV_INCREF(v); return v; }
        v = a->npos > 1 ? a->pos[1] : eval_none(cx);
        if (id == MT_SETDEFAULT) {
            EV_INCREF(a->pos[0]);
            EV_INCREF(v);
            if (eval_dict_set(cx, self, a->pos[0], v) < 0) return NULL;
        }
        EV_INCREF(v);
        return v;
    case MT_POP:
        if (eval_check_args(cx, a, 1, 2, NULL, name, at) < 0) return NULL;
        v = eval_dict_get(cx, self, a->pos[0], &err);
        if (err) return NULL;
        if (!v) {
            if (a->npos > 1) { EV_INCREF(a->pos[1]); return a->pos[1]; }
            return eval_key_error(cx, a->pos[0], at);
        }
        EV_INCREF(v);
        if (eval_dict_del(cx, self, a->pos[0]) < 0) { eval_decref(cx, v); return NULL; }
        return v;
    case MT_UPDATE:
        if (eval_check_argc(cx, a, 0, 1, name, at) < 0) return NULL;
        if (eval_dict_update(cx, self, a->npos ? a->pos[0] : NULL, a, at) < 0) return NULL;
        return eval_none(cx);
    default:
        if (eval_check_args(cx, a, 0, 0, NULL, name, at) < 0) return NULL;
        return copy_of(cx, self);
    }
}

val *eval_set_method(eval_cx *cx, val *self, int id, eval_args *a, const ir_node *at)
{
    const char *name = eval_method_name(id);
    if (id == MT_COPY) {
        if (eval_check_args(cx, a, 0, 0, NULL, name, at) < 0) return NULL;
        return copy_of(cx, self);
    }
    if (id == MT_POP) {
        if (eval_check_args(cx, a, 0, 0, NULL, name, at) < 0) return NULL;
        /* the slots of popped keys stay until the next rebuild: the scan is charged */
        size_t i = 0;
        while (i < self->u.d.used && !self->u.d.ent[i].key) i++;
        if (eval_walk(cx, 1, i * sizeof(dict_ent), at) < 0) return NULL;
        for (; i < self->u.d.used; i++)
            if (self->u.d.ent[i].key) {
                val *k = self->u.d.ent[i].key;
                EV_INCREF(k);
                if (eval_dict_del(cx, self, k) < 0) { eval_decref(cx, k); return NULL; }
                return k;
            }
        val *m = eval_str(cx, "pop from an empty set", 21);
        if (m) eval_key_error(cx, m, at);
        eval_decref(cx, m);
        return NULL;
    }
    if (eval_check_kw(cx, a, NULL, name, at) < 0) return NULL;
    for (size_t k = 0; k < a->npos; k++) {
        val *l = eval_items_of(cx, a->pos[k], at);
        if (!l) return NULL;
        for (size_t i = 0; i < l->u.seq.len; i++) {
            if (eval_count(cx, 1, at) < 0) {
                eval_decref(cx, l);
                return NULL;
            }
            EV_INCREF(l->u.seq.it[i]);
            if (eval_dict_set(cx, self, l->u.seq.it[i], NULL) < 0) {
                eval_decref(cx, l);
                return NULL;
            }
        }
        eval_decref(cx, l);
    }
    return eval_none(cx);
}
