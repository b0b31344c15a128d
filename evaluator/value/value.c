/* evaluator/value/value.c: the value model: allocation and accounting, strings and lists,
 * equality, ordering, membership, truth and iteration. Dicts and sets (and hashing) are
 * hash.c's, how a value prints is repr.c's. */
#include "evaluator/value/value.h"
#include "evaluator/evaluator.h"

#include <pthread.h>
#include <stdarg.h>
#include <poll.h>
#include <stdio.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A number freed during a run keeps its mpq limbs for the next one: most values are small
 * numbers that live for one operation. */
#define NUM_FREE_MAX 1024

/* ...and up to NUM_POOL_MAX of them wait, per thread, for the thread's next run: a short
 * program otherwise spends more on malloc, mpq_init and mpq_clear for its few numbers than
 * on its arithmetic. The pointer is thread-local (a root for leak checkers); the key frees
 * the pool when its thread exits. */
#define NUM_POOL_MAX 128

typedef struct {
    val *head;
    size_t n;
} num_pool;

static _Thread_local num_pool *tl_pool;
static pthread_key_t pool_key;
static pthread_once_t pool_once = PTHREAD_ONCE_INIT;
static int pool_key_ok;

static void free_num_list(val *v)
{
    while (v) {
        val *next = v->gnext;
        mpq_clear(v->u.q);
        free(v);
        v = next;
    }
}

static void pool_destroy(void *p)
{
    num_pool *pool = p;
    free_num_list(pool->head);
    free(pool);
    tl_pool = NULL;
}

static void pool_key_init(void)
{
    pool_key_ok = pthread_key_create(&pool_key, pool_destroy) == 0;
}

void eval_pool_take(eval_cx *cx)
{
    num_pool *pool = tl_pool;
    if (!pool || !pool->n) return;
    cx->num_free = pool->head;
    cx->nnum_free = pool->n;
    pool->head = NULL;
    pool->n = 0;
}

/* A spare number may have held a large intermediate: its limbs stay allocated, and the pool
 * must not keep that memory for the life of the thread. (_mp_alloc is gmp.h's public field.) */
#define POOL_MAX_LIMBS 8

static int small_alloc(const val *v)
{
    return mpq_numref(v->u.q)->_mp_alloc <= POOL_MAX_LIMBS &&
           mpq_denref(v->u.q)->_mp_alloc <= POOL_MAX_LIMBS;
}

/* Gives back at most NUM_POOL_MAX of cx's spare numbers; frees the others. */
static void pool_give(eval_cx *cx)
{
    num_pool *pool = tl_pool;
    if (!pool && pthread_once(&pool_once, pool_key_init) == 0 && pool_key_ok &&
        (pool = calloc(1, sizeof *pool))) {
        if (pthread_setspecific(pool_key, pool) == 0) {
            tl_pool = pool;
        } else {
            free(pool);
            pool = NULL;
        }
    }
    val *rest = NULL;
    while (cx->num_free) {
        val *v = cx->num_free;
        cx->num_free = v->gnext;
        if (pool && pool->n < NUM_POOL_MAX && small_alloc(v)) {
            v->gnext = pool->head;
            pool->head = v;
            pool->n++;
        } else {
            v->gnext = rest;
            rest = v;
        }
    }
    free_num_list(rest);
    cx->num_free = NULL;
    cx->nnum_free = 0;
}

/* ---- errors and budgets ---------------------------------------------------------------- */

val *eval_raise(eval_cx *cx, cr_code code, const ir_node *at, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cr_error_vset(&cx->err, code, at ? at->line : 0, at ? at->col : 0, fmt, ap);
    va_end(ap);
    if (cx->exc) {             /* err now describes another error */
        val *e = cx->exc;
        cx->exc = NULL;
        eval_decref(cx, e);
    }
    return NULL;
}

int eval_at(eval_cx *cx, const ir_node *at)
{
    if (cx->err.line == 0 && at) {
        cx->err.line = at->line;
        cx->err.col = at->col;
    }
    return -1;
}

val *eval_limit(eval_cx *cx, const ir_node *at, const char *what)
{
    return eval_raise(cx, CR_ELIMIT, at, "%s", what);
}

/* Steps between two looks at the (monotonic, vDSO) clock: the first after CLOCK_FIRST, then
 * twice as far each time up to CLOCK_EVERY while the steps are quick (tens of nanoseconds),
 * so a look costs next to nothing; a look that comes more than CLOCK_SLOW late (steps
 * charged far below their cost) brings the next one 8 times closer, down to every step. */
#define CLOCK_FIRST 64
#define CLOCK_EVERY 4096
#define CLOCK_SLOW 0.002

static double clock_s(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void eval_clock_start(eval_cx *cx)
{
    cx->wall0 = cx->wall_last = cx->intr_last = clock_s(CLOCK_MONOTONIC);
    cx->cpu0 = -1;
    cx->clock_every = CLOCK_FIRST;
    cx->next_check = cx->max_ops < CLOCK_FIRST ? cx->max_ops : CLOCK_FIRST;
}

/* The thread's CPU clock is a system call (microseconds on some hypervisors), the monotonic
 * clock is not: a run reads the CPU clock once it has run a millisecond, and again only once
 * its wall time, which bounds its CPU time from above, has passed the limit. What ran before
 * the first reading counts at its wall time, or at the thread's whole CPU time when that is
 * less (a loaded machine can stretch that millisecond's wall time past the limit). */
static int cpu_over(eval_cx *cx, double wall)
{
    double lim = cx->lim->max_cpu_s, ran = wall - cx->wall0;
    if (lim <= 0) return 0;
    if (cx->cpu0 < 0 && ran >= 0.001) {
        cx->cpu0 = clock_s(CLOCK_THREAD_CPUTIME_ID);
        cx->cpu_lead = ran < cx->cpu0 ? ran : cx->cpu0;
    }
    if (ran < lim || cx->cpu0 < 0) return 0;
    return clock_s(CLOCK_THREAD_CPUTIME_ID) - cx->cpu0 + cx->cpu_lead >= lim;
}

double eval_cpu_used(const eval_cx *cx)
{
    return cx->cpu0 < 0 ? 0 : clock_s(CLOCK_THREAD_CPUTIME_ID) - cx->cpu0;
}

void eval_cpu_carry(eval_cx *cx, double used)
{
    if (cx->cpu0 >= 0) cx->cpu0 = clock_s(CLOCK_THREAD_CPUTIME_ID) - used;
}

/* The interrupt descriptor is a system call to look at: once every INTR_EVERY seconds of
 * the run at most, which is as soon as a person or a signal handler needs. */
#define INTR_EVERY 0.002
static int interrupted(eval_cx *cx, double wall)
{
    struct pollfd p;
    if (!cx->lim->interrupt_fd || wall - cx->intr_last < INTR_EVERY) return 0;
    cx->intr_last = wall;
    p = (struct pollfd){ .fd = *cx->lim->interrupt_fd, .events = POLLIN };
    return poll(&p, 1, 0) == 1;
}

int eval_count_slow(eval_cx *cx, const ir_node *at)
{
    if (cx->ops > cx->max_ops) {
        cx->next_check = cx->max_ops;
        eval_raise(cx, CR_ELIMIT, at, "operation limit (%llu steps)",
                   (unsigned long long)cx->max_ops);
        return -1;
    }
    double wall = clock_s(CLOCK_MONOTONIC);
    if (interrupted(cx, wall)) {
        cx->next_check = cx->ops;
        eval_raise(cx, CR_EINTERRUPTED, at, "interrupted");
        return -1;
    }
    if (cpu_over(cx, wall)) {
        cx->next_check = cx->ops;
        eval_raise(cx, CR_ELIMIT, at, EVAL_CPU_LIMIT_TEXT "%g s)", cx->lim->max_cpu_s);
        return -1;
    }
    if (wall - cx->wall_last > CLOCK_SLOW) cx->clock_every = cx->clock_every / 8 + 1;
    else if (cx->clock_every < CLOCK_EVERY) cx->clock_every *= 2;
    cx->wall_last = wall;
    cx->next_check = cx->max_ops - cx->ops < cx->clock_every ? cx->max_ops
                                                              : cx->ops + cx->clock_every;
    return 0;
}

static inline size_t num_cost(const val *v)
{
    size_t a = mpz_size(mpq_numref(v->u.q)), b = mpz_size(mpq_denref(v->u.q));
    return eval_heap_cost(sizeof *v) + eval_heap_cost((a ? a : 1) * sizeof(mp_limb_t)) +
           eval_heap_cost((b ? b : 1) * sizeof(mp_limb_t));
}

int eval_mem(eval_cx *cx, val *v, size_t newsz)
{
    cx->mem = cx->mem - v->msz + newsz;
    v->msz = newsz;
    if (!cx->lim->max_memory || cx->mem <= cx->lim->max_memory) return 0;
    eval_raise(cx, CR_ELIMIT, NULL, "memory limit (%zu bytes)", cx->lim->max_memory);
    return -1;
}

/* A temporary (a text being built, a copy about to become a value) is no value's yet, but
 * it takes memory while it lives: it must fit beside what the values hold. */
int eval_mem_room(eval_cx *cx, size_t n)
{
    size_t max = cx->lim->max_memory;
    if (!max || (cx->mem <= max && n <= max - cx->mem)) return 0;
    eval_raise(cx, CR_ELIMIT, NULL, "memory limit (%zu bytes)", max);
    return -1;
}

int eval_over_len(eval_cx *cx, uint64_t n, int is_str)
{
    if (n <= cx->lim->max_str_len) return 0;
    eval_raise(cx, CR_ELIMIT, NULL, is_str ? "string length limit (%llu characters)"
                                           : "container size limit (%llu elements)",
               (unsigned long long)cx->lim->max_str_len);
    return 1;
}

/* ---- allocation ------------------------------------------------------------------------ */

val *eval_track(eval_cx *cx, val *v)
{
    v->flags |= VF_TRACKED;
    v->gnext = cx->gc.gnext;
    v->gprev = &cx->gc;
    cx->gc.gnext->gprev = v;
    cx->gc.gnext = v;
    return v;
}

static void untrack(val *v)
{
    if (!(v->flags & VF_TRACKED)) return;
    v->gprev->gnext = v->gnext;
    v->gnext->gprev = v->gprev;
    v->flags &= (uint8_t)~VF_TRACKED;
}

static val *new_sized(eval_cx *cx, vkind kind, size_t size)
{
    val *v = malloc(size);
    if (!v) return eval_raise(cx, CR_ENOMEM, NULL, "out of memory");
    memset(v, 0, offsetof(val, u));
    memset(&v->u, 0, sizeof v->u);
    v->rc = 1;
    v->kind = (uint8_t)kind;
    if (eval_mem(cx, v, eval_heap_cost(size)) < 0) {
        cx->mem -= v->msz;
        free(v);
        return NULL;
    }
    switch (kind) {
    case V_LIST: case V_TUPLE: case V_DICT: case V_SET: case V_ITER: case V_FUNC:
    case V_METHOD: case V_FRAME:
        eval_track(cx, v);
        break;
    default:
        break;
    }
    return v;
}

val *eval_new(eval_cx *cx, vkind kind)
{
    return new_sized(cx, kind, sizeof(val));
}

val *eval_obj_new(eval_cx *cx, const eval_class *cls, size_t datasz)
{
    val *v = new_sized(cx, V_OBJ, sizeof(val));
    if (!v) return NULL;
    v->u.obj.cls = cls;
    if (datasz && (eval_mem(cx, v, v->msz + eval_heap_cost(datasz)) < 0 ||
                   !(v->u.obj.data = calloc(1, datasz)))) {
        if (cx->err.code == CR_OK) eval_raise(cx, CR_ENOMEM, NULL, "out of memory");
        eval_decref(cx, v);
        return NULL;
    }
    return v;
}

/* A frame and its slots in one allocation: a call costs one malloc. */
val *eval_new_frame(eval_cx *cx, size_t nslots)
{
    val *fr = new_sized(cx, V_FRAME, sizeof(val) + nslots * sizeof(val *));
    if (!fr) return NULL;
    fr->u.fr.slot = (val **)(fr + 1);
    memset(fr->u.fr.slot, 0, nslots * sizeof(val *));
    fr->u.fr.n = nslots;
    return fr;
}

val *eval_num(eval_cx *cx, vkind kind)
{
    val *v = cx->num_free;
    if (v) mpq_set_ui(v->u.q, 0, 1);
    return eval_num_any(cx, kind);
}

val *eval_num_any(eval_cx *cx, vkind kind)
{
    val *v = cx->num_free;
    if (v) {
        cx->num_free = v->gnext;
        cx->nnum_free--;
        v->rc = 1;
        v->kind = (uint8_t)kind;
        v->flags = 0;
        v->msz = 0;
        if (eval_mem(cx, v, NUM_COST_SMALL) < 0) {
            eval_val_free(cx, v);
            return NULL;
        }
        return v;
    }
    if (!(v = eval_new(cx, kind))) return NULL;
    mpq_init(v->u.q);
    if (eval_mem(cx, v, num_cost(v)) < 0) {
        eval_val_free(cx, v);
        return NULL;
    }
    return v;
}

/* noinline: inlined into every arithmetic path, GCC 12 loses track of the mpq_t size and
 * warns falsely (-Wstringop-overflow). */
__attribute__((noinline)) val *eval_num_finish_slow(eval_cx *cx, val *r, int inexact)
{
    if (r->kind == V_FLOAT) {
        int exact = 1;
        num_bound_float(r->u.q, &exact, &cx->nc);
        if (!exact) inexact = 1;
    }
    if (inexact) r->flags |= VF_INEXACT;
    return eval_num_done(cx, r);
}

val *eval_int_limit(eval_cx *cx, const ir_node *at)
{
    return eval_raise(cx, CR_ELIMIT, at, "integer size limit (%llu bits)",
                      (unsigned long long)cx->nc.max_bits);
}

val *eval_num_done(eval_cx *cx, val *v)
{
    size_t cost = num_cost(v);
    if (cost == v->msz) return v;
    if (eval_mem(cx, v, cost) < 0) {
        eval_decref(cx, v);
        return NULL;
    }
    return v;
}

val *eval_int_si(eval_cx *cx, long n)
{
    val *v = eval_num_any(cx, V_INT);
    if (v) eval_q_set_small(v->u.q, n, 1);
    return v;
}

val *eval_bool(eval_cx *cx, int b) { return b ? &cx->vtrue : &cx->vfalse; }
val *eval_none(eval_cx *cx) { return &cx->none; }
val *eval_ellipsis(eval_cx *cx) { return &cx->ellipsis; }

static size_t utf8_count(const char *s, size_t len)
{
    size_t n = 0;
    for (size_t i = 0; i < len; i++) n += ((unsigned char)s[i] & 0xC0) != 0x80;
    return n;
}

val *eval_str_take(eval_cx *cx, char *s, size_t len)
{
    size_t nch = utf8_count(s, len);
    if (len == 1 && (unsigned char)s[0] < 128 && cx->chars[(unsigned char)s[0]]) {
        val *c = cx->chars[(unsigned char)s[0]];
        free(s);
        EV_INCREF(c);
        return c;
    }
    /* every new text was just written and is read again here: charged once, at its birth */
    if (eval_over_len(cx, nch, 1) || eval_walk(cx, 0, len, NULL) < 0) { free(s); return NULL; }
    val *v = eval_new(cx, V_STR);
    if (!v) { free(s); return NULL; }
    v->u.str.s = s;
    v->u.str.len = len;
    v->u.str.nch = nch;
    /* The text's buffer often has room to spare (it grew while being built): its real size */
    if (eval_mem(cx, v, eval_heap_cost(sizeof *v) + malloc_usable_size(s) + 8) < 0) {
        eval_decref(cx, v);
        return NULL;
    }
    if (len == 1 && (unsigned char)s[0] < 128) {
        cx->chars[(unsigned char)s[0]] = v;
        cx->nchars++;
        EV_INCREF(v);
    }
    return v;
}

val *eval_str(eval_cx *cx, const char *s, size_t len)
{
    if (len == 1 && (unsigned char)s[0] < 128 && cx->chars[(unsigned char)s[0]]) {
        val *c = cx->chars[(unsigned char)s[0]];
        EV_INCREF(c);
        return c;
    }
    if (eval_over_len(cx, len / 4, 1)) return NULL;
    char *p = malloc(len + 1);
    if (!p) return eval_raise(cx, CR_ENOMEM, NULL, "out of memory");
    if (len) memcpy(p, s, len);
    p[len] = '\0';
    return eval_str_take(cx, p, len);
}

val *eval_str_buf(eval_cx *cx, cr_buf *b)
{
    size_t len;
    char *p = cr_buf_take(b, &len);
    if (!p) return eval_raise(cx, CR_ENOMEM, NULL, "out of memory");
    return eval_str_take(cx, p, len);
}

val *eval_str_buf_from(eval_cx *cx, cr_buf *b, int inexact)
{
    val *r = eval_str_buf(cx, b);
    if (r && inexact && r->rc == 1) r->flags |= VF_INEXACT;
    return r;
}

val *eval_seq_new(eval_cx *cx, vkind kind, size_t cap)
{
    val *v = eval_new(cx, kind);
    if (!v) return NULL;
    if (cap && eval_seq_reserve(cx, v, cap) < 0) { eval_decref(cx, v); return NULL; }
    return v;
}

val *eval_lazy_new(eval_cx *cx, int sub, uint32_t n)
{
    size_t sz = sizeof(eval_lazy) + n * sizeof(eval_iter);
    val *v = eval_new(cx, V_ITER);
    if (!v) return NULL;
    v->sub = (uint16_t)sub;
    if (eval_mem(cx, v, eval_heap_cost(sizeof *v) + eval_heap_cost(sz)) < 0) {
        eval_decref(cx, v);
        return NULL;
    }
    if (!(v->u.itr.lz = calloc(1, sz))) {
        eval_decref(cx, v);
        return eval_raise(cx, CR_ENOMEM, NULL, "out of memory");
    }
    v->u.itr.lz->n = n;
    return v;
}

int eval_seq_reserve(eval_cx *cx, val *l, size_t n)
{
    if (n <= l->u.seq.cap) return 0;
    if (eval_over_len(cx, n, 0)) return -1;
    size_t cap = l->u.seq.cap ? l->u.seq.cap : 4;
    while (cap < n) cap *= 2;
    if (eval_mem(cx, l, eval_heap_cost(sizeof *l) + eval_heap_cost(cap * sizeof(val *))) < 0)
        return -1;
    val **it = realloc(l->u.seq.it, cap * sizeof *it);
    if (!it) { eval_raise(cx, CR_ENOMEM, NULL, "out of memory"); return -1; }
    l->u.seq.it = it;
    l->u.seq.cap = cap;
    return 0;
}

int eval_seq_push(eval_cx *cx, val *l, val *v)
{
    if (l->u.seq.len == l->u.seq.cap && eval_seq_reserve(cx, l, l->u.seq.len + 1) < 0) {
        eval_decref(cx, v);
        return -1;
    }
    l->u.seq.it[l->u.seq.len++] = v;
    return 0;
}

void eval_swap_items(val *a, val *b)
{
    val t = *a;
    a->u = b->u;
    a->msz = b->msz;
    b->u = t.u;
    b->msz = t.msz;
}

/* ---- freeing --------------------------------------------------------------------------- */

static void free_contents(eval_cx *cx, val *v)
{
    size_t i;
    switch (v->kind) {
    case V_OBJ:
        if (v->u.obj.cls->drop && v->u.obj.data) v->u.obj.cls->drop(cx, v);
        free(v->u.obj.data);
        v->u.obj.data = NULL;
        break;
    case V_STR:
        free(v->u.str.s);
        v->u.str.s = NULL;
        break;
    case V_LIST: case V_TUPLE:
        for (i = 0; i < v->u.seq.len; i++) eval_decref(cx, v->u.seq.it[i]);
        free(v->u.seq.it);
        v->u.seq.it = NULL;
        v->u.seq.len = v->u.seq.cap = 0;
        break;
    case V_ITER:
        if (v->u.itr.lz) eval_lazy_free(cx, v);
        eval_decref(cx, v->u.itr.dict);
        v->u.itr.dict = NULL;
        break;
    case V_DICT: case V_SET:
        for (i = 0; i < v->u.d.used; i++) {
            eval_decref(cx, v->u.d.ent[i].key);
            eval_decref(cx, v->u.d.ent[i].value);
        }
        free(v->u.d.ent);
        free(v->u.d.idx);
        memset(&v->u.d, 0, sizeof v->u.d);
        break;
    case V_FUNC:
        if (v->u.fn.defs) {
            for (i = 0; i < v->u.fn.sc->nparams; i++) eval_decref(cx, v->u.fn.defs[i]);
            free(v->u.fn.defs);
            v->u.fn.defs = NULL;
        }
        eval_decref(cx, v->u.fn.env);
        v->u.fn.env = NULL;
        break;
    case V_METHOD:
        eval_decref(cx, v->u.meth.self);
        v->u.meth.self = NULL;
        break;
    case V_EXC:
        eval_decref(cx, v->u.exc.args);
        v->u.exc.args = NULL;
        break;
    case V_FRAME:
        for (i = 0; i < v->u.fr.n; i++) eval_decref(cx, v->u.fr.slot[i]);
        v->u.fr.n = 0;
        eval_decref(cx, v->u.fr.parent);
        v->u.fr.parent = NULL;
        break;
    default:
        break;
    }
}

static void release(eval_cx *cx, val *v)
{
    cx->mem -= v->msz;
    if (v->kind == V_INT || v->kind == V_FLOAT || v->kind == V_BOOL) {
        if (cx->nnum_free < NUM_FREE_MAX && mpz_size(mpq_numref(v->u.q)) <= 4 &&
            mpz_size(mpq_denref(v->u.q)) <= 4) {
            v->gnext = cx->num_free;
            cx->num_free = v;
            cx->nnum_free++;
            return;
        }
        mpq_clear(v->u.q);
    }
    free(v);
}

/* Freeing a deeply nested structure must not recurse as deep as it is nested (a loop can
 * build [[[...]]] a million levels deep): past a small depth, values wait on a list that
 * the outermost call drains. */
void eval_val_free(eval_cx *cx, val *v)
{
    untrack(v);
    if (cx->freeing) {
        v->gnext = cx->pending;
        cx->pending = v;
        return;
    }
    cx->freeing = 1;
    free_contents(cx, v);
    release(cx, v);
    while (cx->pending) {
        val *p = cx->pending;
        cx->pending = p->gnext;
        free_contents(cx, p);
        release(cx, p);
    }
    cx->freeing = 0;
}

/* Everything still alive at the end of a run is on the cycle list or reachable from it only
 * through values the list holds. Pin them all, empty them (which frees every untracked value
 * they alone held), then free the shells. */
void eval_free_all(eval_cx *cx)
{
    val *v;
    for (v = cx->gc.gnext; v != &cx->gc; v = v->gnext) v->rc++;
    for (v = cx->gc.gnext; v != &cx->gc; v = v->gnext) free_contents(cx, v);
    while ((v = cx->gc.gnext) != &cx->gc) {
        untrack(v);
        cx->mem -= v->msz;
        free(v);
    }
    for (int i = 0; i < 128 && cx->nchars; i++) {
        if (!cx->chars[i]) continue;
        eval_decref(cx, cx->chars[i]);
        cx->chars[i] = NULL;
        cx->nchars--;
    }
    pool_give(cx);
}

int eval_recurse(eval_cx *cx, const char *what, const ir_node *at)
{
    if (cx->rdepth >= cx->lim->max_call_depth) {
        eval_raise(cx, CR_EPY_RECURSION, at, "maximum recursion depth exceeded%s", what);
        return -1;
    }
    cx->rdepth++;
    return 0;
}

#define IN_CMP " in comparison"

static int eq_deep(eval_cx *cx, void *p) { walk_level *w = p; return eval_eq(cx, w->a, w->b); }
static int cmp_deep(eval_cx *cx, void *p)
{
    walk_level *w = p;
    return eval_cmp(cx, w->op, w->a, w->b);
}

/* ---- equality and ordering ------------------------------------------------------------- */

mpq_srcptr eval_shown(eval_cx *cx, val *v, int slot)
{
    if (!(v->flags & VF_INEXACT)) return v->u.q;
    num_decided(cx->dq[slot], v->u.q, &cx->nc);
    return cx->dq[slot];
}

mpq_srcptr eval_decided(eval_cx *cx, val *v, int slot)
{
    eval_decides(cx, v);
    return eval_shown(cx, v, slot);
}

static int num_eq(eval_cx *cx, val *a, val *b)
{
    if (!((a->flags | b->flags) & VF_INEXACT)) return mpq_equal(a->u.q, b->u.q) != 0;
    return mpq_equal(eval_decided(cx, a, 0), eval_decided(cx, b, 1)) != 0;
}

/* A named tuple (an object with items) equals any tuple of the same items. */
static int items_eq(eval_cx *cx, val *a, val *b)
{
    val *t[2] = { a, b };
    int r = -1;
    for (int i = 0; i < 2; i++)
        if (t[i]->kind == V_OBJ && t[i]->u.obj.cls->items) t[i] = t[i]->u.obj.cls->items(cx, t[i]);
        else EV_INCREF(t[i]);
    if (t[0] && t[1]) r = eval_eq(cx, t[0], t[1]);
    eval_decref(cx, t[0]);
    eval_decref(cx, t[1]);
    return r;
}

static int eq_inner(eval_cx *cx, val *a, val *b)
{
    size_t i;
    if (a == b) return 1;
    if (IS_NUM(a) && IS_NUM(b)) return num_eq(cx, a, b);
    if (a->kind == V_OBJ || b->kind == V_OBJ) {
        val *o = a->kind == V_OBJ && a->u.obj.cls->eq ? a : b;
        if (o->kind == V_OBJ && o->u.obj.cls->eq) return o->u.obj.cls->eq(cx, a, b);
        o = a->kind == V_OBJ && a->u.obj.cls->items ? a : b;
        return o->kind == V_OBJ && o->u.obj.cls->items ? items_eq(cx, a, b) : 0;
    }
    if (a->kind != b->kind) return 0;
    /* a string, or a container an inexact value made (str(x).split()), decides as a whole:
     * what it holds does not carry the flag */
    eval_decides(cx, a);
    eval_decides(cx, b);
    switch (a->kind) {
    case V_NONE: case V_ELLIPSIS: return 1;
    case V_INF: return a->sub == b->sub && a->sub != INF_NAN;
    case V_STR:
        if (a->u.str.len != b->u.str.len) return 0;
        if (eval_walk(cx, 0, a->u.str.len, NULL) < 0) return -1;
        return memcmp(a->u.str.s, b->u.str.s, a->u.str.len) == 0;
    case V_LIST: case V_TUPLE:
        if (a->u.seq.len != b->u.seq.len) return 0;
        for (i = 0; i < a->u.seq.len && i < b->u.seq.len; i++) {
            if (eval_count(cx, 1, NULL) < 0) return -1;
            int r = eval_eq(cx, a->u.seq.it[i], b->u.seq.it[i]);
            if (r <= 0) return r;
        }
        return 1;
    case V_DICT: case V_SET:
        if (a->u.d.len != b->u.d.len) return 0;
        for (i = 0; i < a->u.d.used; i++) {
            dict_ent *e = &a->u.d.ent[i];
            int err;
            if (!e->key) continue;
            if (eval_count(cx, 1, NULL) < 0) return -1;
            val *o = eval_dict_get(cx, b, e->key, &err);
            if (err) return -1;
            if (!o) return 0;
            if (a->kind == V_DICT) {
                int r = eval_eq(cx, e->value, o);
                if (r <= 0) return r;
            }
        }
        return 1;
    case V_RANGE: {
        size_t na, nb;
        eval_len(cx, a, &na);
        eval_len(cx, b, &nb);
        if (na != nb) return 0;
        if (na == 0) return 1;
        if (a->u.rng.start != b->u.rng.start) return 0;
        return na == 1 || a->u.rng.step == b->u.rng.step;
    }
    case V_BUILTIN: case V_EXC: case V_MODULE:
        return a->kind == V_BUILTIN && a->sub == b->sub;
    default:
        return 0;
    }
}

int eval_eq(eval_cx *cx, val *a, val *b)
{
    if (a == b) return 1;
    if (IS_NUM(a) && IS_NUM(b)) return eval_limb_walk(cx, a, b) < 0 ? -1 : num_eq(cx, a, b);
    if (eval_stack_low(cx)) return eval_deep(cx, eq_deep, &(walk_level){ .a = a, .b = b });
    if (eval_recurse(cx, IN_CMP, NULL) < 0) return -1;
    int r = eq_inner(cx, a, b);
    cx->rdepth--;
    return r;
}

static int cmp_result(int op, int c)
{
    switch (op) {
    case IR_LT: return c < 0;
    case IR_LE: return c <= 0;
    case IR_GT: return c > 0;
    default: return c >= 0;
    }
}

/* a <= b (strict: a < b) for two sets, by membership as CPython does. */
static int set_subset(eval_cx *cx, val *a, val *b, int strict)
{
    int err;
    if (a->u.d.len > b->u.d.len || (strict && a->u.d.len == b->u.d.len)) return 0;
    if (eval_walk(cx, a->u.d.len, 0, NULL) < 0) return -1;
    for (size_t i = 0; i < a->u.d.used; i++) {
        if (!a->u.d.ent[i].key) continue;
        if (!eval_dict_get(cx, b, a->u.d.ent[i].key, &err)) return err ? -1 : 0;
    }
    return 1;
}

/* -1 below every number, 0 a number, 1 above every number */
static int inf_rank(val *v) { return v->kind == V_INF ? (v->sub == INF_NEG ? -1 : 1) : 0; }

/* Two lists or two tuples: the first items that differ decide, else the lengths. */
static int seq_cmp(eval_cx *cx, int op, val *a, val *b)
{
    for (size_t i = 0; i < a->u.seq.len && i < b->u.seq.len; i++) {
        if (eval_count(cx, 1, NULL) < 0) return -1;
        int r = eval_eq(cx, a->u.seq.it[i], b->u.seq.it[i]);
        if (r < 0) return -1;
        if (!r) return eval_cmp(cx, op, a->u.seq.it[i], b->u.seq.it[i]);
    }
    return cmp_result(op, (a->u.seq.len > b->u.seq.len) - (a->u.seq.len < b->u.seq.len));
}

int eval_cmp(eval_cx *cx, int op, val *a, val *b)
{
    int numa = IS_REAL(a), numb = IS_REAL(b);
    if (numa && numb) {
        if (IS_NAN(a) || IS_NAN(b)) return 0;   /* every order is false */
        int ra = inf_rank(a), rb = inf_rank(b);
        if (ra || rb) return cmp_result(op, ra - rb);
        if (eval_limb_walk(cx, a, b) < 0) return -1;
        return cmp_result(op, mpq_cmp(eval_decided(cx, a, 0), eval_decided(cx, b, 1)));
    }
    eval_decides(cx, a);   /* as in eq_inner() */
    eval_decides(cx, b);
    if (a->kind == V_STR && b->kind == V_STR) {
        size_t n = a->u.str.len < b->u.str.len ? a->u.str.len : b->u.str.len;
        if (eval_walk(cx, 0, n, NULL) < 0) return -1;
        int c = memcmp(a->u.str.s, b->u.str.s, n);
        if (c == 0) c = (a->u.str.len > b->u.str.len) - (a->u.str.len < b->u.str.len);
        return cmp_result(op, c);
    }
    if (a->kind == V_SET && b->kind == V_SET) {
        if (op == IR_LT || op == IR_LE) return set_subset(cx, a, b, op == IR_LT);
        return set_subset(cx, b, a, op == IR_GT);
    }
    if (a->kind == b->kind && (a->kind == V_LIST || a->kind == V_TUPLE)) {
        if (eval_stack_low(cx))
            return eval_deep(cx, cmp_deep, &(walk_level){ .a = a, .b = b, .op = op });
        if (eval_recurse(cx, IN_CMP, NULL) < 0) return -1;
        int r = seq_cmp(cx, op, a, b);
        cx->rdepth--;
        return r;
    }
    for (int i = 0; i < 2; i++) {
        val *o = i ? b : a;
        if (o->kind == V_OBJ && o->u.obj.cls->cmp) {
            int r = o->u.obj.cls->cmp(cx, op, a, b);
            if (r != -2) return r;
        }
    }
    eval_raise(cx, CR_EPY_TYPE, NULL, "'%s' not supported between instances of '%s' and '%s'",
               ir_cmpop_src(op), eval_type_name(a), eval_type_name(b));
    return -1;
}

/* `x in c`: 1, 0, -1 raised (CPython's TypeError for a c that holds nothing) */
int eval_contains(eval_cx *cx, val *c, val *x, const ir_node *at)
{
    size_t i;
    int err;
    eval_decides(cx, c);   /* a string or a container an inexact value made decides whole */
    switch (c->kind) {
    case V_STR:
        if (x->kind != V_STR) {
            eval_raise(cx, CR_EPY_TYPE, at, "'in <string>' requires string as left operand, not %s",
                       eval_type_name(x));
            return -1;
        }
        if (eval_walk(cx, 0, c->u.str.len + x->u.str.len, at) < 0) return -1;
        eval_decides(cx, x);
        return x->u.str.len == 0 ||
               memmem(c->u.str.s, c->u.str.len, x->u.str.s, x->u.str.len) != NULL;
    case V_ITER:
        if (c->sub == IT_KEYS || c->sub == IT_ITEMS) {
            /* CPython's: a key is looked up; an item is a pair whose key is found with an
             * equal value */
            val *d = c->u.itr.dict, *k = x, *got;
            if (c->sub == IT_ITEMS) {
                if (x->kind != V_TUPLE || x->u.seq.len != 2) return 0;
                k = x->u.seq.it[0];
            }
            if (!(got = eval_dict_get(cx, d, k, &err))) return err ? -1 : 0;
            return c->sub == IT_KEYS ? 1 : eval_eq(cx, got, x->u.seq.it[1]);
        } else {   /* values, or a one-shot iterator consumed up to the item, as CPython */
            eval_iter it;
            val *y;
            int r;
            if (eval_iter_init(cx, &it, c) < 0) return -1;
            while ((r = eval_iter_next(cx, &it, &y)) > 0) {
                r = eval_count(cx, 1, at) < 0 ? -1 : eval_eq(cx, y, x);
                eval_decref(cx, y);
                if (r) break;
            }
            eval_iter_done(cx, &it);
            return r;
        }
    case V_LIST: case V_TUPLE:
        for (i = 0; i < c->u.seq.len; i++) {
            if (eval_count(cx, 1, at) < 0) return -1;
            int r = eval_eq(cx, c->u.seq.it[i], x);
            if (r) return r;
        }
        return 0;
    case V_DICT: case V_SET:
        if (eval_dict_get(cx, c, x, &err)) return 1;
        return err ? -1 : 0;
    case V_RANGE: {
        if (x->kind == V_OBJ && x->u.obj.cls->rational) {
            /* a number-like object (a Decimal) is in the range when it equals one of its ints */
            int r = x->u.obj.cls->rational(cx, x, cx->dq[0]);
            if (r <= 0) return r;
        } else if (!IS_NUM(x)) {
            return 0;
        }
        mpq_srcptr q = x->kind == V_OBJ ? cx->dq[0] : eval_decided(cx, x, 0);
        if (mpz_cmp_ui(mpq_denref(q), 1) != 0 || !mpz_fits_slong_p(mpq_numref(q))) return 0;
        int64_t v = mpz_get_si(mpq_numref(q)), s = c->u.rng.step;
        if (s > 0 ? (v < c->u.rng.start || v >= c->u.rng.stop)
                  : (v > c->u.rng.start || v <= c->u.rng.stop))
            return 0;
        return (v - c->u.rng.start) % s == 0;
    }
    default:
        eval_raise(cx, CR_EPY_TYPE, at, "argument of type '%s' is not iterable",
                   eval_type_name(c));
        return -1;
    }
}


int eval_truth(eval_cx *cx, val *v)
{
    eval_decides(cx, v);
    switch (v->kind) {
    case V_NONE: return 0;
    case V_BOOL: case V_INT: case V_FLOAT: return mpq_sgn(v->u.q) != 0;
    case V_STR: return v->u.str.len != 0;
    case V_LIST: case V_TUPLE: return v->u.seq.len != 0;
    case V_ITER: return v->sub < IT_KEYS || v->u.itr.dict->u.d.len != 0;
    case V_DICT: case V_SET: return v->u.d.len != 0;
    case V_RANGE:
        return v->u.rng.step > 0 ? v->u.rng.start < v->u.rng.stop
                                 : v->u.rng.start > v->u.rng.stop;
    case V_OBJ: return v->u.obj.cls->truth ? v->u.obj.cls->truth(cx, v) : 1;
    default: return 1;
    }
}

size_t eval_utf8_index(const val *s, size_t ci)
{
    if (s->u.str.nch == s->u.str.len) return ci;
    size_t i = 0, n = 0;
    for (; i < s->u.str.len; i++)
        if (((unsigned char)s->u.str.s[i] & 0xC0) != 0x80) {
            if (n == ci) return i;
            n++;
        }
    return s->u.str.len;
}

/* ---- iteration ------------------------------------------------------------------------- */

int eval_iter_init(eval_cx *cx, eval_iter *it, val *v)
{
    /* How many items a walk gives, and which, is decided by what an inexact value made (the
     * characters of str(x), the pieces of its split()): none of them carries the flag. */
    eval_decides(cx, v);
    it->i = 0;
    it->r = 0;
    it->sub = IT_KEYS;
    switch (v->kind) {
    case V_LIST: case V_TUPLE: case V_STR:
        break;
    case V_ITER:
        if (v->sub < IT_KEYS) break;   /* a one-shot iterator: the state is its own */
        it->sub = v->sub;
        v = v->u.itr.dict;
        __attribute__((fallthrough));
    case V_DICT: case V_SET:
        it->size = it->left = v->u.d.len;
        break;
    case V_RANGE:
        it->r = v->u.rng.start;
        break;
    case V_OBJ:
        if (v->u.obj.cls->items) {   /* walks its items' tuple, which it->src owns */
            if (!(it->src = v->u.obj.cls->items(cx, v))) return -1;
            return 0;
        }
        /* fallthrough */
    default:
        eval_raise(cx, CR_EPY_TYPE, NULL, "'%s' object is not iterable", eval_type_name(v));
        return -1;
    }
    it->src = v;
    EV_INCREF(v);
    return 0;
}

/* CPython's RuntimeError for a dict or set changed by the loop that walks it. */
static int iter_changed(eval_cx *cx, const char *what)
{
    eval_raise(cx, CR_EPY_EXCEPTION, NULL, "%s", what);
    snprintf(cx->err.type, sizeof cx->err.type, "RuntimeError");
    return -1;
}

typedef struct { val *v, **out; } lazy_level;

static int lazy_next_deep(eval_cx *cx, void *p)
{
    lazy_level *l = p;
    val *it = l->v;
    eval_iter w = { .src = it };
    return eval_iter_next(cx, &w, l->out);
}

int eval_iter_next(eval_cx *cx, eval_iter *it, val **out)
{
    val *v = it->src;
    switch (v->kind) {
    case V_LIST: case V_TUPLE:
        if (it->i >= v->u.seq.len) return 0;
        *out = v->u.seq.it[it->i++];
        EV_INCREF(*out);
        return 1;
    case V_ITER: {   /* its next may run code that iterates: a recursion level, as CPython's frame */
        if (eval_stack_low(cx))
            return eval_deep(cx, lazy_next_deep, &(lazy_level){ .v = v, .out = out });
        if (eval_recurse(cx, "", NULL) < 0) return -1;
        int rc = eval_lazy_next(cx, v, out);
        cx->rdepth--;
        return rc;
    }
    case V_STR: {
        if (it->i >= v->u.str.len) return 0;
        size_t j = it->i + 1;
        while (j < v->u.str.len && ((unsigned char)v->u.str.s[j] & 0xC0) == 0x80) j++;
        *out = eval_str(cx, v->u.str.s + it->i, j - it->i);
        it->i = j;
        return *out ? 1 : -1;
    }
    case V_DICT: case V_SET: {
        /* CPython's checks, in its order: the size first; then, for a dict, an item found
         * past the count it started with (keys deleted and others added) */
        if (v->u.d.len != it->size)
            return iter_changed(cx, v->kind == V_SET ? "Set changed size during iteration"
                                                     : "dictionary changed size during iteration");
        while (it->i < v->u.d.used && !v->u.d.ent[it->i].key) it->i++;
        if (it->i >= v->u.d.used) return 0;
        if (!it->left) {
            if (v->kind == V_SET) return 0;
            return iter_changed(cx, "dictionary keys changed during iteration");
        }
        it->left--;
        dict_ent *e = &v->u.d.ent[it->i++];
        if (it->sub == IT_ITEMS) {
            val *t = eval_seq_new(cx, V_TUPLE, 2);
            if (!t) return -1;
            t->u.seq.it[0] = e->key;
            t->u.seq.it[1] = e->value;
            t->u.seq.len = 2;
            EV_INCREF(e->key);
            EV_INCREF(e->value);
            *out = t;
            return 1;
        }
        *out = it->sub == IT_VALUES ? e->value : e->key;
        EV_INCREF(*out);
        return 1;
    }
    case V_RANGE: {
        int64_t r;
        if (!eval_range_step(it, &r)) return 0;
        *out = eval_int_si(cx, (long)r);
        return *out ? 1 : -1;
    }
    default:
        return 0;
    }
}

void eval_iter_done(eval_cx *cx, eval_iter *it)
{
    eval_decref(cx, it->src);
    it->src = NULL;
}

val *eval_list_of(eval_cx *cx, val *v, vkind kind)
{
    size_t n = 0;
    if (eval_len(cx, v, &n) < 0) {
        cx->err.code = CR_OK;
        n = 0;
    }
    val *l = eval_seq_new(cx, kind, n);
    if (!l) return NULL;
    eval_iter it;
    if (eval_iter_init(cx, &it, v) < 0) { eval_decref(cx, l); return NULL; }
    val *x;
    int r;
    while ((r = eval_iter_next(cx, &it, &x)) > 0) {
        if (eval_count(cx, 1, NULL) < 0) { eval_decref(cx, x); r = -1; break; }
        if (eval_seq_push(cx, l, x) < 0) { r = -1; break; }
    }
    eval_iter_done(cx, &it);
    if (r < 0) { eval_decref(cx, l); return NULL; }
    return l;
}

/* A value that iteration gives one by one, as a fresh list (the caller's). */
val *eval_items_of(eval_cx *cx, val *v, const ir_node *at)
{
    val *l = eval_list_of(cx, v, V_LIST);
    if (!l) eval_at(cx, at);
    return l;
}

static uint64_t range_len(const val *v)
{
    int64_t a = v->u.rng.start, b = v->u.rng.stop, s = v->u.rng.step;
    if (s > 0 && a < b) return ((uint64_t)b - (uint64_t)a - 1) / (uint64_t)s + 1;
    if (s < 0 && a > b) return ((uint64_t)a - (uint64_t)b - 1) / (0 - (uint64_t)s) + 1;
    return 0;
}

int eval_len(eval_cx *cx, val *v, size_t *n)
{
    switch (v->kind) {
    case V_STR: *n = v->u.str.nch; return 0;
    case V_LIST: case V_TUPLE: *n = v->u.seq.len; return 0;
    case V_DICT: case V_SET: *n = v->u.d.len; return 0;
    case V_RANGE: *n = (size_t)range_len(v); return 0;
    case V_ITER:
        if (v->sub >= IT_KEYS) {
            *n = v->u.itr.dict->u.d.len;
            return 0;
        }
        /* fallthrough */
    default:
        if (v->kind == V_OBJ && v->u.obj.cls->items) {
            val *t = v->u.obj.cls->items(cx, v);
            if (!t) return -1;
            *n = t->u.seq.len;
            eval_decref(cx, t);
            return 0;
        }
        eval_raise(cx, CR_EPY_TYPE, NULL, "object of type '%s' has no len()", eval_type_name(v));
        return -1;
    }
}

int eval_ssize_of(eval_cx *cx, val *v, const char *not_int, int64_t *out, const ir_node *at)
{
    if (v->kind != V_INT && v->kind != V_BOOL) {
        if (not_int)
            eval_raise(cx, CR_EPY_TYPE, at, "%s", not_int);
        else
            eval_raise(cx, CR_EPY_TYPE, at, "'%s' object cannot be interpreted as an integer",
                       eval_type_name(v));
        return -1;
    }
    if (!mpz_fits_slong_p(mpq_numref(v->u.q))) {
        eval_raise(cx, CR_EPY_OVERFLOW, at, "Python int too large to convert to C ssize_t");
        return -1;
    }
    *out = mpz_get_si(mpq_numref(v->u.q));
    return 0;
}

int eval_int_of(eval_cx *cx, val *v, int64_t *out)
{
    if (eval_ssize_of(cx, v, NULL, out, NULL) < 0) return -1;
    eval_decides(cx, v);
    return 0;
}
