/* evaluator/interp/resolve.c: one pass over the IR before a run that gives every name its place
 * (a global symbol, a local slot, or a slot of an enclosing function's frame), with Python's
 * rules: a name assigned anywhere in a function is local to all of it unless declared
 * `global`; a comprehension is a scope of its own whose first iterable belongs outside.
 * Evaluation then reads slots by index instead of looking names up. */
#include "evaluator/interp/interp.h"

#include <stdlib.h>
#include <string.h>

static int sym_is(const resolver *rs, uint32_t s, const char *name, size_t len, uint32_t h)
{
    return rs->symhash[s] == h && rs->symlen[s] == len && memcmp(rs->syms[s], name, len) == 0;
}

static res_ent *put_ent(eval_cx *cx, const void *node)
{
    resolver *rs = &cx->rs;
    if ((rs->n + 1) * 2 > rs->cap) {
        size_t cap = rs->cap ? rs->cap * 2 : 64;
        res_ent *ent = resolve_alloc(cx, cap * sizeof *ent);
        if (!ent) return NULL;
        for (size_t i = 0; i < rs->cap; i++) {
            if (!rs->ent[i].key) continue;
            size_t j = resolve_hash_ptr(rs->ent[i].key) & (cap - 1);
            while (ent[j].key) j = (j + 1) & (cap - 1);
            ent[j] = rs->ent[i];
        }
        rs->ent = ent;
        rs->cap = cap;
    }
    size_t mask = rs->cap - 1;
    size_t i = resolve_hash_ptr(node) & mask;
    while (rs->ent[i].key && rs->ent[i].key != node) i = (i + 1) & mask;
    if (!rs->ent[i].key) rs->n++;
    rs->ent[i].key = node;
    return &rs->ent[i];
}

/* Every per-symbol array at twice its capacity; 0, or -1 on ENOMEM. */
static int grow_syms(eval_cx *cx)
{
    resolver *rs = &cx->rs;
    size_t icap = rs->symicap ? rs->symicap * 2 : 64, cap = icap / 2, n = rs->nsyms;
    uint32_t *idx = resolve_alloc(cx, icap * sizeof *idx);
    const char **syms = resolve_alloc(cx, cap * sizeof *syms);
    uint32_t *len = resolve_alloc(cx, cap * sizeof *len);
    uint32_t *hash = resolve_alloc(cx, cap * sizeof *hash);
    int16_t *bi = resolve_alloc(cx, cap * sizeof *bi);
    if (!idx || !syms || !len || !hash || !bi) return -1;
    if (n) {
        memcpy(syms, rs->syms, n * sizeof *syms);
        memcpy(len, rs->symlen, n * sizeof *len);
        memcpy(hash, rs->symhash, n * sizeof *hash);
        memcpy(bi, rs->sym_builtin, n * sizeof *bi);
    }
    memset(idx, 0xff, icap * sizeof *idx);
    for (uint32_t s = 0; s < n; s++) {
        size_t j = hash[s] & (icap - 1);
        while (idx[j] != UINT32_MAX) j = (j + 1) & (icap - 1);
        idx[j] = s;
    }
    rs->syms = syms;
    rs->symlen = len;
    rs->symhash = hash;
    rs->sym_builtin = bi;
    rs->symidx = idx;
    rs->symicap = icap;
    return 0;
}

int resolve_sym(eval_cx *cx, const char *name)
{
    resolver *rs = &cx->rs;
    if ((rs->nsyms + 1) * 2 > rs->symicap && grow_syms(cx) < 0) return -1;
    size_t len = strlen(name), mask = rs->symicap - 1;
    uint32_t h = cr_hash_name(name, len);
    size_t j = h & mask;
    for (; rs->symidx[j] != UINT32_MAX; j = (j + 1) & mask)
        if (sym_is(rs, rs->symidx[j], name, len, h)) return (int)rs->symidx[j];
    uint32_t s = rs->nsyms++;
    rs->syms[s] = name;
    rs->symlen[s] = (uint32_t)len;
    rs->symhash[s] = h;
    rs->sym_builtin[s] = -2;   /* looked up on the first miss in the globals */
    rs->symidx[j] = s;
    return (int)s;
}

int resolve_find(const resolver *rs, const char *name)
{
    if (!rs->symicap) return -1;
    size_t len = strlen(name), mask = rs->symicap - 1;
    uint32_t h = cr_hash_name(name, len);
    for (size_t j = h & mask; rs->symidx[j] != UINT32_MAX; j = (j + 1) & mask)
        if (sym_is(rs, rs->symidx[j], name, len, h)) return (int)rs->symidx[j];
    return -1;
}

void *resolve_alloc(eval_cx *cx, size_t size)
{
    size = (size + 15) & ~(size_t)15;
    if (cx->scratch_used + size <= sizeof cx->scratch) {
        void *p = cx->scratch + cx->scratch_used;
        cx->scratch_used += size;
        memset(p, 0, size);
        return p;
    }
    unsigned char *c = calloc(1, 16 + size);
    if (!c) return NULL;
    memcpy(c, &cx->chunks, sizeof cx->chunks);
    cx->chunks = c;
    return c + 16;
}

void resolve_free(eval_cx *cx)
{
    while (cx->chunks) {
        unsigned char *next;
        memcpy(&next, cx->chunks, sizeof next);
        free(cx->chunks);
        cx->chunks = next;
    }
    memset(&cx->rs, 0, sizeof cx->rs);
}

/* ---- scopes ---- */

static int has(const uint32_t *a, uint32_t n, uint32_t s)
{
    for (uint32_t i = 0; i < n; i++)
        if (a[i] == s) return (int)i;
    return -1;
}

static int grow(eval_cx *cx, uint32_t **a, uint32_t n, uint32_t *cap)
{
    if (n < *cap) return 0;
    uint32_t nc = *cap ? *cap * 2 : 8;
    uint32_t *p = resolve_alloc(cx, nc * sizeof *p);
    if (!p) return -1;
    if (n) memcpy(p, *a, n * sizeof *p);
    *a = p;
    *cap = nc;
    return 0;
}

static int add_local_sym(eval_cx *cx, scope *sc, int s, int dup_ok)
{
    if (s < 0) return -1;
    if (has(sc->globals, sc->nglobals, (uint32_t)s) >= 0) return 0;
    if (dup_ok && has(sc->names, sc->nslots, (uint32_t)s) >= 0) return 0;
    if (grow(cx, &sc->names, sc->nslots, &sc->cap) < 0) return -1;
    sc->names[sc->nslots++] = (uint32_t)s;
    return 0;
}

static int add_local(eval_cx *cx, scope *sc, const char *name, int dup_ok)
{
    return add_local_sym(cx, sc, resolve_sym(cx, name), dup_ok);
}

static scope *new_scope(eval_cx *cx, scope *parent, const char *name)
{
    scope *sc = resolve_alloc(cx, sizeof *sc);
    if (!sc) return NULL;
    sc->parent = parent;
    sc->name = name;
    sc->varargs = sc->kwargs = -1;
    return sc;
}

static int collect_target(eval_cx *cx, scope *sc, const ir_node *t)
{
    if (!t) return 0;
    switch (t->kind) {
    case IR_NAME: {
        /* the symbol is noted on the node's entry: walk() meets this node again */
        res_ent *e = put_ent(cx, t);
        int s = resolve_sym(cx, t->text);
        if (!e || s < 0) return -1;
        e->sym = (uint32_t)s + 1;
        return add_local_sym(cx, sc, s, 1);
    }
    case IR_TUPLE: case IR_LIST:
        for (uint32_t i = 0; i < t->n; i++)
            if (collect_target(cx, sc, t->kid[i]) < 0) return -1;
        return 0;
    case IR_STARRED: return collect_target(cx, sc, t->kid[0]);
    default: return 0;
    }
}

/* The names a function body binds, not looking inside nested functions. */
static int collect(eval_cx *cx, scope *sc, const ir_node *n)
{
    uint32_t i;
    if (!n) return 0;
    switch (n->kind) {
    case IR_BLOCK: case IR_MODULE: case IR_TRY: case IR_WITH:
        for (i = 0; i < n->n; i++)
            if (collect(cx, sc, n->kid[i]) < 0) return -1;
        return 0;
    case IR_ASSIGN:
        for (i = 0; i + 1 < n->n; i++)
            if (collect_target(cx, sc, n->kid[i]) < 0) return -1;
        return 0;
    case IR_AUGASSIGN: return collect_target(cx, sc, n->kid[0]);
    case IR_WITHITEM: return collect_target(cx, sc, n->kid[1]);
    case IR_DEL:
        for (i = 0; i < n->n; i++)
            if (collect_target(cx, sc, n->kid[i]) < 0) return -1;
        return 0;
    case IR_IF:
        return collect(cx, sc, n->kid[1]) < 0 || collect(cx, sc, n->kid[2]) < 0 ? -1 : 0;
    case IR_WHILE:
        return collect(cx, sc, n->kid[1]) < 0 || collect(cx, sc, n->kid[2]) < 0 ? -1 : 0;
    case IR_FOR:
        if (collect_target(cx, sc, n->kid[0]) < 0) return -1;
        return collect(cx, sc, n->kid[2]) < 0 || collect(cx, sc, n->kid[3]) < 0 ? -1 : 0;
    case IR_EXCEPT:
        return collect_target(cx, sc, n->kid[1]) < 0 || collect(cx, sc, n->kid[2]) < 0 ? -1 : 0;
    case IR_FUNCDEF: return add_local(cx, sc, n->text, 1);
    case IR_IMPORT: case IR_IMPORT_FROM: return add_local(cx, sc, n->aux, 1);
    case IR_GLOBAL:
        for (i = 0; i < n->n; i++) {
            int s = resolve_sym(cx, n->kid[i]->text);
            if (s < 0 || grow(cx, &sc->globals, sc->nglobals, &sc->gcap) < 0) return -1;
            sc->globals[sc->nglobals++] = (uint32_t)s;
        }
        return 0;
    default:
        return 0;
    }
}

static int lookup_sym(scope *sc, int s, name_ref *ref)
{
    if (s < 0) return -1;
    ref->kind = REF_GLOBAL;
    ref->idx = (uint32_t)s;
    ref->depth = 0;
    if (!sc || has(sc->globals, sc->nglobals, (uint32_t)s) >= 0) return 0;
    int i = has(sc->names, sc->nslots, (uint32_t)s);
    if (i >= 0) {
        ref->kind = REF_LOCAL;
        ref->idx = (uint32_t)i;
        return 0;
    }
    uint16_t d = 0;
    for (scope *p = sc->parent; p; p = p->parent, d++) {
        if (has(p->globals, p->nglobals, (uint32_t)s) >= 0) return 0;
        if ((i = has(p->names, p->nslots, (uint32_t)s)) >= 0) {
            ref->kind = REF_FREE;
            ref->depth = d;
            ref->idx = (uint32_t)i;
            return 0;
        }
    }
    return 0;
}

static int lookup(eval_cx *cx, scope *sc, const char *name, name_ref *ref)
{
    return lookup_sym(sc, resolve_sym(cx, name), ref);
}

static int walk(eval_cx *cx, scope *sc, const ir_node *n);

static int walk_kids(eval_cx *cx, scope *sc, const ir_node *n, uint32_t from)
{
    for (uint32_t i = from; i < n->n; i++)
        if (walk(cx, sc, n->kid[i]) < 0) return -1;
    return 0;
}

static int walk_function(eval_cx *cx, scope *sc, const ir_node *n, const ir_node *params,
                         const ir_node *body, const char *name)
{
    res_ent *e;
    uint32_t i;
    /* defaults are evaluated where the def stands */
    for (i = 0; i < params->n; i++)
        if (params->kid[i]->n && walk(cx, sc, params->kid[i]->kid[0]) < 0) return -1;
    scope *fs = new_scope(cx, sc, name);
    if (!fs) return -1;
    for (i = 0; i < params->n; i++) {
        const ir_node *p = params->kid[i];
        if (p->flags & IRF_VARARGS) fs->varargs = (int32_t)i;
        if (p->flags & IRF_KWARGS) fs->kwargs = (int32_t)i;
        if (add_local(cx, fs, p->text, 0) < 0) return -1;
    }
    fs->nparams = params->n;
    /* the final-value rule's solution: a module-level def callable with no argument */
    fs->is_solution = n->kind == IR_FUNCDEF && !sc && strcmp(name, "solution") == 0;
    for (i = 0; i < params->n && fs->is_solution; i++) {
        const ir_node *p = params->kid[i];
        if (!(p->flags & (IRF_VARARGS | IRF_KWARGS)) && !(p->n && p->kid[0])) fs->is_solution = 0;
    }
    if (body->kind != IR_BLOCK) {
        if (walk(cx, fs, body) < 0) return -1;
    } else {
        /* `global` first, so that it wins over assignments wherever it stands */
        for (i = 0; i < body->n; i++)
            if (body->kid[i]->kind == IR_GLOBAL && collect(cx, fs, body->kid[i]) < 0) return -1;
        if (collect(cx, fs, body) < 0 || walk(cx, fs, body) < 0) return -1;
    }
    if (!(e = put_ent(cx, n))) return -1;
    e->sc = fs;
    if (n->kind == IR_FUNCDEF && lookup(cx, sc, n->text, &e->ref) < 0) return -1;
    return 0;
}

static const char *comp_name(int kind)
{
    switch (kind) {
    case IR_LISTCOMP: return "<listcomp>";
    case IR_SETCOMP: return "<setcomp>";
    case IR_DICTCOMP: return "<dictcomp>";
    default: return "<genexpr>";
    }
}

static int walk_comp(eval_cx *cx, scope *sc, const ir_node *n)
{
    uint32_t first = n->kind == IR_DICTCOMP ? 2 : 1, i;
    if (n->n <= first) return 0;
    if (walk(cx, sc, n->kid[first]->kid[1]) < 0) return -1;
    scope *cs = new_scope(cx, sc, comp_name(n->kind));
    if (!cs) return -1;
    for (i = first; i < n->n; i++)
        if (collect_target(cx, cs, n->kid[i]->kid[0]) < 0) return -1;
    for (i = 0; i < first; i++)
        if (walk(cx, cs, n->kid[i]) < 0) return -1;
    for (i = first; i < n->n; i++) {
        const ir_node *f = n->kid[i];
        if (walk(cx, cs, f->kid[0]) < 0) return -1;
        if (i > first && walk(cx, cs, f->kid[1]) < 0) return -1;
        if (walk_kids(cx, cs, f, 2) < 0) return -1;
    }
    res_ent *e = put_ent(cx, n);
    if (!e) return -1;
    e->sc = cs;
    return 0;
}

static int walk(eval_cx *cx, scope *sc, const ir_node *n)
{
    res_ent *e;
    if (!n) return 0;
    switch (n->kind) {
    case IR_NAME:
        if (!(e = put_ent(cx, n))) return -1;
        return lookup_sym(sc, e->sym ? (int)e->sym - 1 : resolve_sym(cx, n->text), &e->ref);
    case IR_FUNCDEF:
        return walk_function(cx, sc, n, n->kid[0], n->kid[1], n->text);
    case IR_LAMBDA:
        return walk_function(cx, sc, n, n->kid[0], n->kid[1], "<lambda>");
    case IR_LISTCOMP: case IR_SETCOMP: case IR_GENEXP: case IR_DICTCOMP:
        return walk_comp(cx, sc, n);
    case IR_IMPORT: case IR_IMPORT_FROM: {
        name_ref r;
        if (lookup(cx, sc, n->aux, &r) < 0 || !(e = put_ent(cx, n))) return -1;
        e->ref = r;
        return 0;
    }
    case IR_GLOBAL:
        return 0;
    case IR_NUM: case IR_STR:
        return put_ent(cx, n) ? 0 : -1;
    case IR_ATTR:
        if (!(e = put_ent(cx, n))) return -1;
        e->ref.idx = (uint32_t)eval_method_lookup(n->text);
        return walk_kids(cx, sc, n, 0);
    default:
        return walk_kids(cx, sc, n, 0);
    }
}

int resolve_module(eval_cx *cx, const ir_node *root, cr_error *err)
{
    if (walk(cx, NULL, root) < 0) return cr_error_set(err, CR_ENOMEM, 0, 0, "resolving names");
    return CR_OK;
}
