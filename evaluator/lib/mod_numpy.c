/* evaluator/lib/mod_numpy.c: numpy's scalar functions and numpy_financial, as Debian 12's numpy
 * 1.24 computes them on Python numbers. The whitelist lets a call in only when its arguments
 * are scalars or list literals (parser/whitelist.c), so no array ever reaches here.
 *
 * numpy_financial: the ten functions with the formulas of numpy-financial 1.0 (values[0] of
 * npv is at t = 0; when='end' or 0, 'begin' or 1). The annuity formulas are rational in their
 * arguments, so they run on the evaluator's own arithmetic and stay exact for an integer
 * nper; what numpy computes as IEEE doubles without raising (x / 0, a negative base to a
 * fractional power, a log of a non-positive number) gives inf or nan here too. irr and rate
 * are roots: found at high precision with MPFR, rounded to the policy's work digits and
 * marked inexact; the decisions numpy takes (no positive root: nan; rate's Newton not
 * converging: nan) are taken as numpy takes them. Results are floats, as numpy's float64
 * prints. */
#include <math.h>
#include <mpfr.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "evaluator/lib/lib.h"

/* ---- arithmetic with numpy's IEEE outcomes ---------------------------------------------- */

/* The temporaries of one formula, released together; the first failure sticks. */
#define CALC_MAX 96   /* ppmt, the longest, keeps about 60 */
typedef struct {
    eval_cx *cx;
    const ir_node *at;
    val *v[CALC_MAX];
    int n, fail;
} calc;

static val *keep(calc *c, val *v)
{
    if (!v || c->n == CALC_MAX) {
        if (v) {
            eval_decref(c->cx, v);
            eval_raise(c->cx, CR_EINTERNAL, c->at, "numpy_financial: too many temporaries");
        }
        c->fail = 1;
        return NULL;
    }
    return c->v[c->n++] = v;
}

static void calc_done(calc *c)
{
    while (c->n) eval_decref(c->cx, c->v[--c->n]);
}

/* The result, with a reference of the caller's own (NULL when the formula failed). */
static val *calc_result(calc *c, val *r)
{
    if (!c->fail && r) EV_INCREF(r);
    else r = NULL;
    calc_done(c);
    return r;
}

static int is_zero(const val *v) { return IS_NUM(v) && mpq_sgn(v->u.q) == 0; }

static int sign_of(const val *v)
{
    if (v->kind == V_INF) return v->sub == INF_NAN ? 0 : v->sub == INF_NEG ? -1 : 1;
    return mpq_sgn(v->u.q);
}

static val *k_int(calc *c, long n) { return c->fail ? NULL : keep(c, eval_int_si(c->cx, n)); }

static val *k_nonfinite(calc *c, double d) { return keep(c, eval_nonfinite(c->cx, d)); }

static val *op(calc *c, int o, val *a, val *b)
{
    if (c->fail || !a || !b) { c->fail = 1; return NULL; }
    if (o == IR_DIV && is_zero(b)) {   /* float64 division: ±inf, or nan for 0/0 and nan/0 */
        int s = sign_of(a);
        return k_nonfinite(c, s > 0 ? INFINITY : s < 0 ? -INFINITY : NAN);
    }
    if (o == IR_POW && IS_NUM(a) && IS_NUM(b)) {
        if (mpq_sgn(a->u.q) < 0 && mpz_cmp_ui(mpq_denref(b->u.q), 1) != 0)
            return k_nonfinite(c, NAN);
        if (mpq_sgn(a->u.q) == 0 && mpq_sgn(b->u.q) < 0) return k_nonfinite(c, INFINITY);
    }
    val *r = eval_binop(c->cx, o, a, b, c->at);
    if (!r && c->cx->err.code == CR_EPY_OVERFLOW && o == IR_POW) {   /* float64 overflows to inf */
        memset(&c->cx->err, 0, sizeof c->cx->err);
        return k_nonfinite(c, INFINITY);
    }
    return keep(c, r);
}

static val *add(calc *c, val *a, val *b) { return op(c, IR_ADD, a, b); }
static val *sub(calc *c, val *a, val *b) { return op(c, IR_SUB, a, b); }
static val *mul(calc *c, val *a, val *b) { return op(c, IR_MUL, a, b); }
static val *dv(calc *c, val *a, val *b) { return op(c, IR_DIV, a, b); }
static val *neg(calc *c, val *a) { return sub(c, k_int(c, 0), a); }

/* numpy's log: -inf at 0, nan below, correctly rounded (inexact) elsewhere. */
static val *lg(calc *c, val *x)
{
    if (c->fail || !x) { c->fail = 1; return NULL; }
    if (x->kind == V_INF) return k_nonfinite(c, x->sub == INF_POS ? INFINITY : NAN);
    int s = mpq_sgn(x->u.q);
    if (s <= 0) return k_nonfinite(c, s ? NAN : -INFINITY);
    val *r = eval_num(c->cx, V_FLOAT);
    int exact = 1;
    if (!r) return keep(c, NULL);
    num_log(r->u.q, &exact, x->u.q, &c->cx->nc);
    return keep(c, eval_num_finish(c->cx, r, !exact || (x->flags & VF_INEXACT)));
}

/* float64(x): an int result becomes a float of the same value. */
static val *as_float(calc *c, val *x)
{
    if (c->fail || !x) { c->fail = 1; return NULL; }
    if (x->kind != V_INT && x->kind != V_BOOL) return x;
    val *r = eval_num(c->cx, V_FLOAT);
    if (!r) return keep(c, NULL);
    mpq_set(r->u.q, x->u.q);
    r->flags |= x->flags & VF_INEXACT;
    return keep(c, eval_num_done(c->cx, r));
}

/* A result stored into an array of rate's integer dtype (fv's np.empty_like(rate)): truncated,
 * and nan or inf become int64's minimum, as the cast gives on x86-64. */
static val *as_int64(calc *c, val *x)
{
    if (c->fail || !x) { c->fail = 1; return NULL; }
    if (x->kind == V_INF) return k_int(c, INT64_MIN);
    if (x->kind == V_INT) return x;
    val *r = eval_num(c->cx, V_INT);
    if (!r) return keep(c, NULL);
    num_trunc(mpq_numref(r->u.q), eval_decided(c->cx, x, 0));
    return keep(c, eval_num_finish(c->cx, r, x->flags & VF_INEXACT));
}

static int cmp_num(calc *c, val *a, int op_, long b)
{
    val *k = k_int(c, b);
    if (c->fail) return 0;
    int r = op_ == IR_EQ ? eval_eq(c->cx, a, k) : eval_cmp(c->cx, op_, a, k);
    if (r < 0) c->fail = 1;
    return r > 0;
}

/* ---- arguments ------------------------------------------------------------------------------ */

static int need_num(eval_cx *cx, val *v, const char *fname, const ir_node *at)
{
    if (IS_REAL(v)) return 0;
    eval_raise(cx, CR_EPY_TYPE, at, "%s() argument must be a real number, not '%s'", fname,
               eval_type_name(v));
    return -1;
}

/* `when`: numpy_financial's table, or the error its fallback (iterating `when`) raises. */
static int when_of(eval_cx *cx, val *w, const ir_node *at)
{
    static const char *const one[] = { "begin", "b", "beginning", "start", NULL };
    static const char *const zero[] = { "end", "e", "finish", NULL };
    if (!w) return 0;
    if (w->kind == V_STR) {
        for (int i = 0; one[i]; i++) if (strcmp(w->u.str.s, one[i]) == 0) return 1;
        for (int i = 0; zero[i]; i++) if (strcmp(w->u.str.s, zero[i]) == 0) return 0;
        size_t k = 0;   /* the first character that is not a key itself */
        while (k < w->u.str.len && strchr("be", w->u.str.s[k])) k++;
        if (k == w->u.str.len) k = 0;
        size_t n = w->u.str.len ? eval_utf8_index(w, 1) : 0;
        return eval_raise(cx, CR_EPY_KEY, at, "'%.*s'", (int)(k < w->u.str.len ? n : 0),
                          w->u.str.s + k), -1;
    }
    if (IS_NUM(w) && (mpq_cmp_ui(w->u.q, 0, 1) == 0 || mpq_cmp_ui(w->u.q, 1, 1) == 0))
        return mpq_sgn(w->u.q) != 0;
    return eval_raise(cx, CR_EPY_TYPE, at, "'%s' object is not iterable", eval_type_name(w)), -1;
}

/* ---- the annuity formulas --------------------------------------------------------------------- */

/* fv: when rate is an int the result takes its dtype (truncated), as numpy's does. */
static val *fv_of(calc *c, val *rate, val *nper, val *pmt, val *pv, int when)
{
    val *r;
    if (is_zero(rate)) {
        r = neg(c, add(c, pv, mul(c, pmt, nper)));
    } else {
        val *temp = op(c, IR_POW, add(c, k_int(c, 1), rate), nper);
        val *f = mul(c, dv(c, mul(c, pmt, add(c, k_int(c, 1), mul(c, rate, k_int(c, when)))), rate),
                     sub(c, temp, k_int(c, 1)));
        r = sub(c, mul(c, neg(c, pv), temp), f);
    }
    return rate->kind == V_INT || rate->kind == V_BOOL ? as_int64(c, r) : as_float(c, r);
}

/* (1 + rate*when) * ((1+rate)**nper - 1) / rate, or nper at rate 0: pmt's and pv's factor. */
static val *annuity_fact(calc *c, val *rate, val *nper, val *temp, int when)
{
    if (is_zero(rate)) return nper;
    return dv(c, mul(c, add(c, k_int(c, 1), mul(c, rate, k_int(c, when))), sub(c, temp, k_int(c, 1))),
              rate);
}

static val *pmt_of(calc *c, val *rate, val *nper, val *pv, val *fv, int when)
{
    val *temp = op(c, IR_POW, add(c, k_int(c, 1), rate), nper);
    val *fact = annuity_fact(c, rate, nper, temp, when);
    return as_float(c, dv(c, neg(c, add(c, fv, mul(c, pv, temp))), fact));
}

static val *ipmt_of(calc *c, val *rate, val *per, val *nper, val *pv, val *fv, int when)
{
    val *total = pmt_of(c, rate, nper, pv, fv, when);
    val *r = mul(c, fv_of(c, rate, sub(c, per, k_int(c, 1)), total, pv, when), rate);
    if (c->fail) return NULL;
    if (r->kind == V_INT) {   /* numpy stores a nan into rate's integer dtype, whatever per is */
        eval_raise(c->cx, CR_EPY_VALUE, c->at, "cannot convert float NaN to integer");
        c->fail = 1;
        return NULL;
    }
    if (cmp_num(c, per, IR_LT, 1)) return k_nonfinite(c, NAN);
    if (when == 1 && cmp_num(c, per, IR_EQ, 1)) return as_float(c, k_int(c, 0));
    if (when == 1 && cmp_num(c, per, IR_GT, 1)) r = dv(c, r, add(c, k_int(c, 1), rate));
    return r;
}

typedef enum { F_FV, F_PMT, F_PV, F_NPER, F_IPMT, F_PPMT } annuity;

static val *annuity_call(eval_cx *cx, annuity f, eval_args *a, const ir_node *at)
{
    static const int ids[] = { [F_FV] = NPF_FV, [F_PMT] = NPF_PMT, [F_PV] = NPF_PV,
                               [F_NPER] = NPF_NPER, [F_IPMT] = NPF_IPMT, [F_PPMT] = NPF_PPMT };
    const char *name = registry_func_name(ids[f]);
    val *x[REG_MAXP];
    eval_bound(ids[f], a, x);
    size_t nnum = f >= F_IPMT ? 5 : 4;
    int when = when_of(cx, x[nnum], at);
    if (when < 0 || eval_count(cx, 16, at) < 0) return NULL;
    calc c = { .cx = cx, .at = at };
    for (size_t i = 0; i < nnum; i++) {
        if (!x[i]) x[i] = k_int(&c, 0);   /* fv's default */
        else if (need_num(cx, x[i], name, at) < 0) return calc_done(&c), NULL;
    }
    val *r = NULL, *z;
    switch (f) {
    case F_FV: r = fv_of(&c, x[0], x[1], x[2], x[3], when); break;
    case F_PMT: r = pmt_of(&c, x[0], x[1], x[2], x[3], when); break;
    case F_PV: {
        val *temp = op(&c, IR_POW, add(&c, k_int(&c, 1), x[0]), x[1]);
        val *fact = annuity_fact(&c, x[0], x[1], temp, when);
        r = as_float(&c, dv(&c, neg(&c, add(&c, x[3], mul(&c, x[2], fact))), temp));
        break;
    }
    case F_NPER:
        if (is_zero(x[0])) {
            r = as_float(&c, dv(&c, neg(&c, add(&c, x[3], x[2])), x[1]));
            break;
        }
        z = dv(&c, mul(&c, x[1], add(&c, k_int(&c, 1), mul(&c, x[0], k_int(&c, when)))), x[0]);
        r = as_float(&c, dv(&c, lg(&c, dv(&c, add(&c, neg(&c, x[3]), z), add(&c, x[2], z))),
                            lg(&c, add(&c, k_int(&c, 1), x[0]))));
        break;
    case F_IPMT: r = as_float(&c, ipmt_of(&c, x[0], x[1], x[2], x[3], x[4], when)); break;
    case F_PPMT:
        r = as_float(&c, sub(&c, pmt_of(&c, x[0], x[2], x[3], x[4], when),
                             ipmt_of(&c, x[0], x[1], x[2], x[3], x[4], when)));
        break;
    }
    return calc_result(&c, r);
}

/* ---- cash-flow series -------------------------------------------------------------------------- */

/* The cash flows as numpy.asarray sees a list, tuple or range of numbers: a fresh list. */
static val *flows_of(eval_cx *cx, val *v, const char *fname, const ir_node *at)
{
    if (v->kind != V_LIST && v->kind != V_TUPLE && v->kind != V_RANGE)
        return eval_raise(cx, CR_EPY_TYPE, at, "%s() cash flows must be a list of numbers, not '%s'",
                          fname, eval_type_name(v));
    val *l = eval_list_of(cx, v, V_LIST);
    if (!l) return eval_at(cx, at), NULL;
    for (size_t i = 0; i < l->u.seq.len; i++)
        if (need_num(cx, l->u.seq.it[i], fname, at) < 0) {
            eval_decref(cx, l);
            return NULL;
        }
    return l;
}

/* Σ values[t] / (1 + rate)**t, t from 0; `sign` > 0 keeps only the positive flows, < 0 only
 * the negative ones (mirr's values*pos, values*neg). */
static val *npv_of(eval_cx *cx, val *rate, val *l, int sign, const ir_node *at)
{
    calc c = { .cx = cx, .at = at };
    val *acc = as_float(&c, k_int(&c, 0));
    if (c.fail) return calc_result(&c, NULL);
    EV_INCREF(acc);
    calc_done(&c);
    for (size_t t = 0; t < l->u.seq.len && acc; t++) {
        val *v = l->u.seq.it[t];
        calc d = { .cx = cx, .at = at };
        if (eval_count(cx, 1, at) < 0) d.fail = 1;
        if (sign && (sign > 0 ? sign_of(v) <= 0 : sign_of(v) >= 0) && !IS_NAN(v)) v = k_int(&d, 0);
        val *n = calc_result(&d, add(&d, acc, dv(&d, v, op(&d, IR_POW, add(&d, k_int(&d, 1), rate), k_int(&d, (long)t)))));
        eval_decref(cx, acc);
        acc = n;
    }
    return acc;
}

static val *absv(calc *c, val *x) { return c->fail || !x ? (c->fail = 1, NULL) : sign_of(x) < 0 ? neg(c, x) : x; }

val *eval_npf_npv(eval_cx *cx, eval_args *a, const ir_node *at)
{
    val *x[REG_MAXP];
    eval_bound(NPF_NPV, a, x);
    if (need_num(cx, x[0], "npv", at) < 0) return NULL;
    val *l = flows_of(cx, x[1], "npv", at), *r;
    if (!l) return NULL;
    r = npv_of(cx, x[0], l, 0, at);
    eval_decref(cx, l);
    return r;
}

val *eval_npf_mirr(eval_cx *cx, eval_args *a, const ir_node *at)
{
    val *x[REG_MAXP];
    eval_bound(NPF_MIRR, a, x);
    if (need_num(cx, x[1], "mirr", at) < 0 ||
        need_num(cx, x[2], "mirr", at) < 0)
        return NULL;
    val *l = flows_of(cx, x[0], "mirr", at);
    if (!l) return NULL;
    int pos = 0, negs = 0;
    for (size_t i = 0; i < l->u.seq.len; i++) {
        int s = sign_of(l->u.seq.it[i]);
        pos |= s > 0;
        negs |= s < 0;
    }
    calc c = { .cx = cx, .at = at };
    val *r;
    if (!pos || !negs) {
        r = k_nonfinite(&c, NAN);
    } else {
        val *numer = keep(&c, npv_of(cx, x[2], l, 1, at));
        val *denom = c.fail ? NULL : keep(&c, npv_of(cx, x[1], l, -1, at));
        val *e = as_float(&c, k_int(&c, 1));
        if (!c.fail) mpq_set_ui(e->u.q, 1, (unsigned long)(l->u.seq.len - 1));  /* 1/(n - 1): fresh */
        r = sub(&c, mul(&c, op(&c, IR_POW, dv(&c, absv(&c, numer), absv(&c, denom)), e),
                        add(&c, k_int(&c, 1), x[2])), k_int(&c, 1));
    }
    eval_decref(cx, l);
    return calc_result(&c, r);
}

/* ---- roots ------------------------------------------------------------------------------------- */

/* Bits MPFR works at: the work digits, and a margin for the rounding inside an evaluation. */
static mpfr_prec_t root_prec(const num_ctx *ctx)
{
    return (mpfr_prec_t)((double)num_work(ctx) * 3.3219280948873623) + 128;
}

/* A root found in MPFR as the result: rounded to the work digits, inexact. */
static val *root_val(eval_cx *cx, const mpfr_t r)
{
    val *v = eval_num(cx, V_FLOAT);
    if (!v) return NULL;
    mpfr_get_q(v->u.q, r);
    num_round_prec(v->u.q, v->u.q, num_work(&cx->nc));
    return eval_num_finish(cx, v, 1);
}

typedef struct { mpq_t *c; size_t d; } poly;   /* Σ c[i] x^i, c[d] != 0 (or d = 0) */

/* Pointer parameters, not mpq_t arrays: GCC's -Wstringop-overread took a span's pair of
 * rationals for one of size 16 */
static void poly_eval(mpq_ptr out, const poly *p, mpq_srcptr x, mpq_ptr t)
{
    mpq_set(out, p->c[p->d]);
    for (size_t i = p->d; i-- > 0;) {
        mpq_mul(t, out, x);
        mpq_add(out, t, p->c[i]);
    }
}

static int poly_init(eval_cx *cx, poly *p, size_t d, const ir_node *at)
{
    if (eval_mem_room(cx, (d + 1) * sizeof(mpq_t) * 4) < 0 || !(p->c = malloc((d + 1) * sizeof(mpq_t))))
        return eval_at(cx, at), eval_limit(cx, at, "memory"), -1;
    for (size_t i = 0; i <= d; i++) mpq_init(p->c[i]);
    p->d = d;
    return 0;
}

static void poly_free(poly *p)
{
    if (!p->c) return;
    for (size_t i = 0; i <= p->d; i++) mpq_clear(p->c[i]);
    free(p->c);
    p->c = NULL;
}

/* The Sturm sequence of p (p, p', -rem(...), ...): *n polynomials. */
static int sturm_build(eval_cx *cx, const poly *p, poly **out, size_t *n, const ir_node *at)
{
    size_t cap = p->d + 2, k = 0;
    poly *s = calloc(cap, sizeof *s);
    mpq_t q, t;
    if (!s) return eval_limit(cx, at, "memory"), -1;
    mpq_inits(q, t, NULL);
    int rc = poly_init(cx, &s[0], p->d, at);
    for (size_t i = 0; rc == 0 && i <= p->d; i++) mpq_set(s[0].c[i], p->c[i]);
    if (rc == 0 && p->d > 0 && (rc = poly_init(cx, &s[1], p->d - 1, at)) == 0)
        for (size_t i = 1; i <= p->d; i++) {
            mpq_set_ui(t, (unsigned long)i, 1);
            mpq_mul(s[1].c[i - 1], p->c[i], t);
        }
    k = rc == 0 ? (p->d > 0 ? 2 : 1) : 0;
    while (rc == 0 && k >= 2 && s[k - 1].d > 0) {
        const poly *a = &s[k - 2], *b = &s[k - 1];
        poly r;
        if ((rc = poly_init(cx, &r, a->d, at)) < 0) break;
        for (size_t i = 0; i <= a->d; i++) mpq_set(r.c[i], a->c[i]);
        uint64_t bits = 0;
        for (size_t i = a->d + 1; i-- > b->d;) {   /* r -= (r[i]/b[db]) x^(i-db) b */
            mpq_div(q, r.c[i], b->c[b->d]);
            for (size_t j = 0; j <= b->d; j++) {
                mpq_mul(t, q, b->c[j]);
                mpq_sub(r.c[i - b->d + j], r.c[i - b->d + j], t);
            }
            bits += mpz_sizeinbase(mpq_numref(q), 2) + mpz_sizeinbase(mpq_denref(q), 2);
        }
        if (eval_walk(cx, (uint64_t)(a->d + 1) * (b->d + 1), bits * (b->d + 1) / 8, at) < 0) {
            r.d = a->d;
            poly_free(&r);
            rc = -1;
            break;
        }
        size_t d = b->d;   /* the remainder has degree < deg b */
        while (d > 0 && mpq_sgn(r.c[d - 1]) == 0) d--;
        if (d == 0) { r.d = a->d; poly_free(&r); break; }   /* zero: b is the gcd */
        for (size_t i = d; i <= a->d; i++) mpq_clear(r.c[i]);
        r.d = d - 1;
        for (size_t i = 0; i <= r.d; i++) mpq_neg(r.c[i], r.c[i]);
        s[k++] = r;
    }
    mpq_clears(q, t, NULL);
    *out = s;
    *n = k;
    if (rc < 0) {
        for (size_t i = 0; i < cap; i++) poly_free(&s[i]);
        free(s);
        *out = NULL;
    }
    return rc;
}

/* Sign changes of the Sturm sequence at x (zeros skipped). */
static size_t sturm_var(const poly *s, size_t n, const mpq_t x, mpq_t v, mpq_t t)
{
    size_t var = 0;
    int last = 0;
    for (size_t i = 0; i < n; i++) {
        poly_eval(v, &s[i], x, t);
        int sg = mpq_sgn(v);
        if (sg && last && sg != last) var++;
        if (sg) last = sg;
    }
    return var;
}

/* p at x in MPFR (y's precision). */
static void poly_eval_fr(mpfr_t y, const mpfr_t *c, size_t d, const mpfr_t x)
{
    mpfr_set(y, c[d], MPFR_RNDN);
    for (size_t i = d; i-- > 0;) mpfr_fma(y, y, x, c[i], MPFR_RNDN);
}

/* The root of p in (a, b), where p changes sign, by bisection in MPFR; r = 1/x - 1 in out. */
static void refine_root(mpfr_t out, const mpfr_t *c, size_t d, const mpq_t a, const mpq_t b,
                        mpfr_prec_t wp)
{
    mpfr_t lo, hi, mid, y;
    mpfr_inits2(wp, lo, hi, mid, y, (mpfr_ptr)0);
    mpfr_set_q(lo, a, MPFR_RNDN);
    mpfr_set_q(hi, b, MPFR_RNDN);
    poly_eval_fr(y, c, d, lo);
    int slo = mpfr_sgn(y);
    for (mpfr_prec_t i = 0; i < wp + 64; i++) {
        mpfr_add(mid, lo, hi, MPFR_RNDN);
        mpfr_div_2ui(mid, mid, 1, MPFR_RNDN);
        if (mpfr_equal_p(mid, lo) || mpfr_equal_p(mid, hi)) break;
        poly_eval_fr(y, c, d, mid);
        int s = mpfr_sgn(y);
        if (s == 0) { mpfr_set(lo, mid, MPFR_RNDN); mpfr_set(hi, mid, MPFR_RNDN); break; }
        if (s == slo) mpfr_set(lo, mid, MPFR_RNDN);
        else mpfr_set(hi, mid, MPFR_RNDN);
    }
    mpfr_add(mid, lo, hi, MPFR_RNDN);
    mpfr_div_2ui(mid, mid, 1, MPFR_RNDN);
    mpfr_ui_div(out, 1, mid, MPFR_RNDN);
    mpfr_sub_ui(out, out, 1, MPFR_RNDN);
    mpfr_clears(lo, hi, mid, y, (mpfr_ptr)0);
}

/* Descartes' bound on the roots of p in (1, inf) (upper) or in (0, 1): the sign changes of
 * p(1 + y), or of (1 + y)^d p(1 / (1 + y)), by a Taylor shift of integer coefficients. -1 when
 * the walk's budget ran out (raised). */
static long side_changes(eval_cx *cx, const poly *p, int upper, const ir_node *at)
{
    size_t d = p->d;
    mpz_t l, *a = malloc((d + 1) * sizeof *a);
    if (!a) return eval_limit(cx, at, "memory"), -1;
    mpz_init_set_ui(l, 1);
    uint64_t bits = 0;
    for (size_t i = 0; i <= d; i++) mpz_lcm(l, l, mpq_denref(p->c[i]));
    for (size_t i = 0; i <= d; i++) {
        const mpq_t *c = &p->c[upper ? i : d - i];
        mpz_init(a[i]);
        mpz_divexact(a[i], l, mpq_denref(*c));
        mpz_mul(a[i], a[i], mpq_numref(*c));
        bits += mpz_sizeinbase(a[i], 2);
    }
    long changes = -1;
    /* the shift adds about d bits to each of d^2 / 2 additions */
    if (eval_walk(cx, (uint64_t)d * d / 2, (uint64_t)d * (bits + (uint64_t)d * d) / 16, at) == 0) {
        for (size_t i = 0; i < d; i++)
            for (size_t j = d; j-- > i;) mpz_add(a[j], a[j], a[j + 1]);
        int last = 0;
        changes = 0;
        for (size_t i = 0; i <= d; i++) {
            int sg = mpz_sgn(a[i]);
            if (sg && last && sg != last) changes++;
            if (sg) last = sg;
        }
    }
    for (size_t i = 0; i <= d; i++) mpz_clear(a[i]);
    free(a);
    mpz_clear(l);
    return changes;
}

/* numpy-financial's irr: the positive real roots x of Σ values[t] x^t (leading and trailing
 * zeros stripped), as rates 1/x - 1; the one closest to 0, or nan when there is none.
 * Descartes' rule counts the possible roots; one sign change means exactly one, found by
 * bisection, and so does one on each side of x = 1. More are isolated exactly with a Sturm
 * sequence first (its cost grows as the cube of the degree: charged, as every walk here). A
 * root of even multiplicity (no sign change) is not found: numpy's eigenvalues give it as a
 * complex pair almost always, and then numpy does not find it either. */
val *eval_npf_irr(eval_cx *cx, eval_args *a, const ir_node *at)
{
    val *x[REG_MAXP];
    eval_bound(NPF_IRR, a, x);
    val *l = flows_of(cx, x[0], "irr", at), *res = NULL;
    if (!l) return NULL;
    size_t n = l->u.seq.len, lo = 0, hi = n;
    for (size_t i = 0; i < n; i++)
        if (l->u.seq.it[i]->kind == V_INF) {   /* numpy's eigenvalues of nan: no root */
            eval_decref(cx, l);
            return eval_nonfinite(cx, NAN);
        }
    while (lo < hi && !mpq_sgn(l->u.seq.it[lo]->u.q)) lo++;
    while (hi > lo && !mpq_sgn(l->u.seq.it[hi - 1]->u.q)) hi--;
    if (lo == hi) {
        eval_decref(cx, l);
        return eval_raise(cx, CR_EPY_INDEX, at, "index 0 is out of bounds for axis 0 with size 0");
    }
    if (hi - lo == 1) {
        eval_decref(cx, l);
        return eval_raise(cx, CR_EPY_VALUE, at, "negative dimensions are not allowed");
    }
    poly p = { 0 }, *s = NULL;
    size_t ns = 0, var = 0;
    mpq_t bound, t, v, m, best, ra, rb;
    mpq_inits(bound, t, v, m, best, ra, rb, NULL);
    mpfr_prec_t wp = root_prec(&cx->nc);
    mpfr_t *c = NULL, r;
    mpfr_init2(r, wp);
    int found = 0;
    if (poly_init(cx, &p, hi - lo - 1, at) < 0) goto done;
    int last = 0;
    for (size_t i = lo; i < hi; i++) {   /* Descartes: sign changes, zeros skipped */
        mpq_set(p.c[i - lo], l->u.seq.it[i]->u.q);
        int sg = mpq_sgn(p.c[i - lo]);
        if (sg && last && sg != last) var++;
        if (sg) last = sg;
    }
    if (var == 0) { res = eval_nonfinite(cx, NAN); goto done; }
    /* a rate of exactly 0 (the flows sum to 0) is the closest there can be */
    mpq_set_ui(t, 1, 1);
    poly_eval(v, &p, t, m);
    if (!mpq_sgn(v)) {
        if ((res = eval_num(cx, V_FLOAT))) res = eval_num_finish(cx, res, 0);
        goto done;
    }
    /* Cauchy's bound: every root is below 1 + max |c_i / c_d| */
    for (size_t i = 0; i < p.d; i++) {
        mpq_div(t, p.c[i], p.c[p.d]);
        mpq_abs(t, t);
        if (mpq_cmp(t, bound) > 0) mpq_set(bound, t);
    }
    mpq_set_ui(t, 1, 1);
    mpq_add(bound, bound, t);
    if (eval_walk(cx, p.d * 8, 0, at) < 0 || !(c = malloc((p.d + 1) * sizeof *c))) {
        if (!c && cx->err.code == CR_OK) eval_limit(cx, at, "memory");
        goto done;
    }
    for (size_t i = 0; i <= p.d; i++) {
        mpfr_init2(c[i], wp);
        mpfr_set_q(c[i], p.c[i], MPFR_RNDN);
    }
    /* intervals (a, b] still to look at, with their root counts (or 1: Descartes) */
    typedef struct { mpq_t a, b; size_t k; } span;
    size_t cap = p.d + 2, ntodo = 0;   /* disjoint spans of one root at least */
    span *todo = calloc(cap, sizeof *todo);
    if (!todo) { eval_limit(cx, at, "memory"); goto done; }
    for (size_t i = 0; i < cap; i++) mpq_inits(todo[i].a, todo[i].b, NULL);
    /* Descartes on each side of x = 1 (rates below and above 0): at most one root a side,
     * the common case, needs no Sturm sequence; otherwise one counts the roots of each span */
    long below = var > 1 ? side_changes(cx, &p, 0, at) : 0;
    long above = var > 1 && below >= 0 ? side_changes(cx, &p, 1, at) : 0;
    if (below < 0 || above < 0) goto done_todo;
    if (var > 1 && below <= 1 && above <= 1) {
        mpq_set_ui(m, 1, 1);
        if (below) {
            mpq_set_ui(todo[ntodo].a, 0, 1);
            mpq_set(todo[ntodo].b, m);
            todo[ntodo++].k = 1;
        }
        if (above) {
            mpq_set(todo[ntodo].a, m);
            mpq_set(todo[ntodo].b, bound);
            todo[ntodo++].k = 1;
        }
    } else {
        if (var > 1 && sturm_build(cx, &p, &s, &ns, at) < 0) goto done_todo;
        mpq_set_ui(todo[0].a, 0, 1);
        mpq_set(todo[0].b, bound);
        todo[0].k = var > 1 ? sturm_var(s, ns, todo[0].a, v, t) - sturm_var(s, ns, bound, v, t) : 1;
        ntodo = todo[0].k ? 1 : 0;
    }
    while (ntodo) {
        span *sp = &todo[--ntodo];
        /* Sturm evaluations: (ns + 1) polynomials of d + 1 terms at a point of these bits */
        uint64_t bits = mpz_sizeinbase(mpq_numref(sp->b), 2) + mpz_sizeinbase(mpq_denref(sp->b), 2);
        if (eval_walk(cx, (ns + 1) * (p.d + 1), bits * (ns + 1) * (p.d + 1) / 8, at) < 0)
            goto done_todo;
        if (sp->k == 1) {
            poly_eval(v, &p, sp->a, t);
            int sa = mpq_sgn(v);
            poly_eval(v, &p, sp->b, t);
            if (sa * mpq_sgn(v) >= 0) continue;   /* an even root */
            if (eval_walk(cx, (uint64_t)(wp + 64) * (p.d + 1), 0, at) < 0) goto done_todo;
            refine_root(r, (const mpfr_t *)c, p.d, sp->a, sp->b, wp);
            if (!mpfr_number_p(r)) continue;
            mpfr_get_q(ra, r);
            mpq_abs(rb, ra);
            mpq_abs(t, best);
            if (!found || mpq_cmp(rb, t) < 0) mpq_set(best, ra);
            found = 1;
            continue;
        }
        /* split at a point that is not a root (p has at most d) */
        size_t k;
        for (k = 2; k < p.d + 4; k++) {
            mpq_sub(m, sp->b, sp->a);
            mpq_set_ui(t, 1, (unsigned long)k);
            mpq_mul(m, m, t);
            mpq_add(m, m, sp->a);
            poly_eval(v, &p, m, t);
            if (mpq_sgn(v)) break;
        }
        size_t kl = sturm_var(s, ns, sp->a, v, t) - sturm_var(s, ns, m, v, t);
        size_t kr = sp->k - kl;
        mpq_set(ra, sp->a);
        mpq_set(rb, sp->b);
        if (kl && ntodo < cap) {
            mpq_set(todo[ntodo].a, ra);
            mpq_set(todo[ntodo].b, m);
            todo[ntodo++].k = kl;
        }
        if (kr && ntodo < cap) {
            mpq_set(todo[ntodo].a, m);
            mpq_set(todo[ntodo].b, rb);
            todo[ntodo++].k = kr;
        }
    }
    if (!found) res = eval_nonfinite(cx, NAN);
    else {
        mpfr_set_q(r, best, MPFR_RNDN);
        res = root_val(cx, r);
    }
done_todo:
    for (size_t i = 0; i < cap; i++) mpq_clears(todo[i].a, todo[i].b, NULL);
    free(todo);
done:
    if (c) {
        for (size_t i = 0; i <= p.d; i++) mpfr_clear(c[i]);
        free(c);
    }
    for (size_t i = 0; s && i < p.d + 2; i++) poly_free(&s[i]);
    free(s);
    poly_free(&p);
    mpfr_clear(r);
    mpq_clears(bound, t, v, m, best, ra, rb, NULL);
    eval_decref(cx, l);
    return res;
}

/* ---- rate: numpy's Newton iteration decides, MPFR finds the root ------------------------------ */

typedef struct { double n, p, x, y, w; } rate_args;

/* g(r) / g'(r) in numpy-financial's operation order, in doubles as numpy runs it. */
static double g_div_gp(double r, const rate_args *q)
{
    double t1 = pow(r + 1, q->n), t2 = pow(r + 1, q->n - 1);
    double g = q->y + t1 * q->x + q->p * (t1 - 1) * (r * q->w + 1) / r;
    double gp = q->n * t2 * q->x - q->p * (t1 - 1) * (r * q->w + 1) / (r * r) +
                q->n * q->p * t2 * (r * q->w + 1) / r + q->p * (t1 - 1) * q->w / r;
    return g / gp;
}

/* The same in MPFR, on the exact arguments (n p x y: mpfr at out's precision). */
static void g_div_gp_fr(mpfr_t out, const mpfr_t r, const mpfr_t *a, long w)
{
    mpfr_prec_t wp = mpfr_get_prec(out);
    mpfr_t b, t1, t2, f, g, gp, u;
    mpfr_inits2(wp, b, t1, t2, f, g, gp, u, (mpfr_ptr)0);
    mpfr_add_ui(b, r, 1, MPFR_RNDN);
    mpfr_pow(t1, b, a[0], MPFR_RNDN);
    mpfr_sub_ui(u, a[0], 1, MPFR_RNDN);
    mpfr_pow(t2, b, u, MPFR_RNDN);
    mpfr_mul_si(f, r, w, MPFR_RNDN);
    mpfr_add_ui(f, f, 1, MPFR_RNDN);            /* f = 1 + r w */
    mpfr_sub_ui(u, t1, 1, MPFR_RNDN);
    mpfr_mul(u, u, a[1], MPFR_RNDN);            /* u = p (t1 - 1) */
    mpfr_mul(g, u, f, MPFR_RNDN);
    mpfr_div(g, g, r, MPFR_RNDN);
    mpfr_fma(g, t1, a[2], g, MPFR_RNDN);
    mpfr_add(g, g, a[3], MPFR_RNDN);            /* g = y + t1 x + u f / r */
    mpfr_mul(gp, a[0], t2, MPFR_RNDN);
    mpfr_mul(gp, gp, a[2], MPFR_RNDN);          /* n t2 x */
    mpfr_mul(b, u, f, MPFR_RNDN);
    mpfr_div(b, b, r, MPFR_RNDN);
    mpfr_div(b, b, r, MPFR_RNDN);
    mpfr_sub(gp, gp, b, MPFR_RNDN);             /* - u f / r^2 */
    mpfr_mul(b, a[0], a[1], MPFR_RNDN);
    mpfr_mul(b, b, t2, MPFR_RNDN);
    mpfr_mul(b, b, f, MPFR_RNDN);
    mpfr_div(b, b, r, MPFR_RNDN);
    mpfr_add(gp, gp, b, MPFR_RNDN);             /* + n p t2 f / r */
    mpfr_mul_si(b, u, w, MPFR_RNDN);
    mpfr_div(b, b, r, MPFR_RNDN);
    mpfr_add(gp, gp, b, MPFR_RNDN);             /* + u w / r */
    mpfr_div(out, g, gp, MPFR_RNDN);
    mpfr_clears(b, t1, t2, f, g, gp, u, (mpfr_ptr)0);
}

static double to_double(const val *v)
{
    if (v->kind == V_INF) return v->sub == INF_NAN ? NAN : v->sub == INF_NEG ? -INFINITY : INFINITY;
    mpfr_t t;
    mpfr_init2(t, 53);
    mpfr_set_q(t, v->u.q, MPFR_RNDN);
    double d = mpfr_get_d(t, MPFR_RNDN);
    mpfr_clear(t);
    return d;
}

val *eval_npf_rate(eval_cx *cx, eval_args *a, const ir_node *at)
{
    val *x[REG_MAXP];
    eval_bound(NPF_RATE, a, x);
    int when = when_of(cx, x[4], at);
    if (when < 0) return NULL;
    for (int i = 0; i < 8; i++)
        if (i != 4 && x[i] && need_num(cx, x[i], "rate", at) < 0) return NULL;
    rate_args q = { to_double(x[0]), to_double(x[1]), to_double(x[2]), to_double(x[3]), when };
    double rn = x[5] ? to_double(x[5]) : 0.1, tol = x[6] ? to_double(x[6]) : 1e-6;
    double maxiter = x[7] ? to_double(x[7]) : 100;
    int close = 0;
    for (double it = 0; it < maxiter && !close; it++) {
        if (eval_count(cx, 4, at) < 0) return NULL;
        double next = rn - g_div_gp(rn, &q);
        close = fabs(next - rn) < tol;
        rn = next;
    }
    if (!close || isinf(rn)) return eval_nonfinite(cx, close ? rn : NAN);
    for (int i = 0; i < 4; i++)   /* MPFR needs exact finite arguments */
        if (x[i]->kind == V_INF) return eval_nonfinite(cx, rn);
    /* Newton again from numpy's answer, now in MPFR on the exact arguments, to the root */
    mpfr_prec_t wp = root_prec(&cx->nc);
    mpfr_t r, d, args[4];
    mpfr_inits2(wp, r, d, args[0], args[1], args[2], args[3], (mpfr_ptr)0);
    for (int i = 0; i < 4; i++) mpfr_set_q(args[i], x[i]->u.q, MPFR_RNDN);
    mpfr_set_d(r, rn, MPFR_RNDN);
    int ok = 0;
    for (int i = 0; i < 200 && !ok; i++) {
        if (eval_count(cx, 16, at) < 0) break;
        g_div_gp_fr(d, r, (const mpfr_t *)args, when);
        if (!mpfr_number_p(d)) break;
        mpfr_sub(r, r, d, MPFR_RNDN);
        /* a step below the work digits (the evaluation's own noise is far below them) */
        ok = mpfr_zero_p(d) || mpfr_get_exp(d) < mpfr_get_exp(r) - (mpfr_exp_t)(wp - 96);
    }
    val *res = cx->err.code != CR_OK ? NULL : ok ? root_val(cx, r) : NULL;
    if (!res && cx->err.code == CR_OK && (res = eval_num(cx, V_FLOAT))) {   /* numpy's own */
        mpq_set_d(res->u.q, rn);
        res = eval_num_finish(cx, res, 1);
    }
    mpfr_clears(r, d, args[0], args[1], args[2], args[3], (mpfr_ptr)0);
    return res;
}

/* ---- numpy's scalar functions ------------------------------------------------------------------ */

static val *float_of_double(eval_cx *cx, double d, int inexact)
{
    if (!isfinite(d)) return eval_nonfinite(cx, d);
    val *r = eval_num(cx, V_FLOAT);
    if (!r) return NULL;
    mpq_set_d(r->u.q, d);
    return eval_num_finish(cx, r, inexact);
}

/* A double result as CPython prints it: the shortest decimal that reads back as d, exact
 * (2.67, not the binary fraction the double holds), as a float literal is. */
static val *float_shown(eval_cx *cx, double d, int inexact)
{
    if (!isfinite(d)) return eval_nonfinite(cx, d);
    char buf[40];
    for (int p = 1; p <= 17; p++) {
        snprintf(buf, sizeof buf, "%.*g", p, d);
        if (strtod(buf, NULL) == d) break;
    }
    val *r = eval_num(cx, V_FLOAT);
    if (!r) return NULL;
    num_parse_float_str(r->u.q, buf, strlen(buf), &cx->nc);
    return eval_num_finish(cx, r, inexact);
}

static val *np_arg1(eval_cx *cx, eval_args *a, const char *name, const ir_node *at)
{
    return need_num(cx, a->pos[0], name, at) < 0 ? NULL : a->pos[0];
}

typedef cr_code (*np_fn)(mpq_t, int *, const mpq_t, const num_ctx *);

/* exp, log, log10, sqrt: correctly rounded as math's; numpy's inf and nan where math raises. */
static val *np_unary(eval_cx *cx, eval_args *a, const char *name, np_fn fn, double (*cfn)(double),
                     int log_like, const ir_node *at)
{
    val *x = np_arg1(cx, a, name, at), *r;
    if (!x) return NULL;
    if (x->kind == V_INF) return float_of_double(cx, cfn(to_double(x)), 0);
    int s = mpq_sgn(x->u.q), exact = 1;
    if (fn != num_exp && s < 0) return eval_nonfinite(cx, NAN);
    if (log_like && s == 0) return eval_nonfinite(cx, -INFINITY);
    if (eval_count(cx, 16, at) < 0 || !(r = eval_num(cx, V_FLOAT))) return NULL;
    cr_code rc = fn(r->u.q, &exact, x->u.q, &cx->nc);
    if (rc == CR_EPY_OVERFLOW) {
        eval_decref(cx, r);
        return eval_nonfinite(cx, INFINITY);
    }
    return eval_num_finish(cx, r, !exact || (x->flags & VF_INEXACT));
}

val *eval_np_exp(eval_cx *cx, eval_args *a, const ir_node *at) { return np_unary(cx, a, "exp", num_exp, exp, 0, at); }
val *eval_np_log(eval_cx *cx, eval_args *a, const ir_node *at) { return np_unary(cx, a, "log", num_log, log, 1, at); }
val *eval_np_log10(eval_cx *cx, eval_args *a, const ir_node *at) { return np_unary(cx, a, "log10", num_log10, log10, 1, at); }
val *eval_np_sqrt(eval_cx *cx, eval_args *a, const ir_node *at) { return np_unary(cx, a, "sqrt", num_sqrt, sqrt, 0, at); }

val *eval_np_abs(eval_cx *cx, eval_args *a, const ir_node *at)
{
    val *x = np_arg1(cx, a, "absolute", at), *r;
    if (!x) return NULL;
    if (x->kind == V_INF) return float_of_double(cx, fabs(to_double(x)), 0);
    if (x->kind == V_BOOL || mpq_sgn(x->u.q) >= 0) return EV_INCREF(x), x;
    if (!(r = eval_num(cx, x->kind))) return NULL;
    mpq_abs(r->u.q, x->u.q);
    return eval_num_finish(cx, r, x->flags & VF_INEXACT);
}

static val *np_floor_ceil(eval_cx *cx, eval_args *a, int up, const ir_node *at)
{
    val *x = np_arg1(cx, a, up ? "ceil" : "floor", at), *r;
    if (!x) return NULL;
    if (x->kind == V_INF) return EV_INCREF(x), x;
    if (!(r = eval_num(cx, V_FLOAT))) return NULL;
    mpq_srcptr q = eval_decided(cx, x, 0);
    if (up) num_ceil(mpq_numref(r->u.q), q);
    else num_floor(mpq_numref(r->u.q), q);
    mpz_set_ui(mpq_denref(r->u.q), 1);
    return eval_num_finish(cx, r, x->flags & VF_INEXACT);
}

val *eval_np_floor(eval_cx *cx, eval_args *a, const ir_node *at) { return np_floor_ceil(cx, a, 0, at); }
val *eval_np_ceil(eval_cx *cx, eval_args *a, const ir_node *at) { return np_floor_ceil(cx, a, 1, at); }

/* numpy's round: half to even on the product in doubles (x * 10**d, rint, / 10**d), so
 * np.round(1.005, 2) is 1.0 and np.round(2.675, 2) is 2.68; an int keeps its type and rounds
 * exactly, half to even, for a negative d. */
val *eval_np_round(eval_cx *cx, eval_args *a, const ir_node *at)
{
    val *x[REG_MAXP];
    eval_bound(NP_ROUND, a, x);
    if (need_num(cx, x[0], "round", at) < 0)
        return NULL;
    long d = 0;
    if (x[1]) {
        int64_t v;
        if (x[1]->kind != V_INT && x[1]->kind != V_BOOL)
            return eval_raise(cx, CR_EPY_TYPE, at, "'%s' object cannot be interpreted as an integer",
                              eval_type_name(x[1]));
        if (eval_int_of(cx, x[1], &v) < 0) return NULL;
        d = v < -400 ? -400 : v > 400 ? 400 : (long)v;   /* past these every double rounds alike */
    }
    val *v = x[0], *r;
    if (v->kind == V_INT) {
        if (d >= 0) return EV_INCREF(v), v;
        if (!(r = eval_num(cx, V_INT))) return NULL;
        num_round_scaled(mpq_numref(r->u.q), v->u.q, d, NUM_HALF_EVEN);
        mpz_t p;
        mpz_init(p);
        num_pow10(p, (unsigned long)-d);
        mpz_mul(mpq_numref(r->u.q), mpq_numref(r->u.q), p);
        mpz_clear(p);
        return eval_num_finish(cx, r, v->flags & VF_INEXACT);
    }
    double y = to_double(v), f = pow(10.0, (double)(d >= 0 ? d : -d));
    y = d >= 0 ? nearbyint(y * f) / f : nearbyint(y / f) * f;
    return float_shown(cx, y, v->flags & VF_INEXACT);
}

val *eval_np_power(eval_cx *cx, eval_args *a, const ir_node *at)
{
    if (need_num(cx, a->pos[0], "power", at) < 0 ||
        need_num(cx, a->pos[1], "power", at) < 0)
        return NULL;
    val *x = a->pos[0], *y = a->pos[1];
    int ints = (x->kind == V_INT || x->kind == V_BOOL) && (y->kind == V_INT || y->kind == V_BOOL);
    if (ints && mpq_sgn(y->u.q) < 0)
        return eval_raise(cx, CR_EPY_VALUE, at, "Integers to negative integer powers are not allowed.");
    calc c = { .cx = cx, .at = at };
    return calc_result(&c, op(&c, IR_POW, x, y));
}

/* ---- reductions of a list literal (or a scalar) ---- */

typedef enum { R_SUM, R_PROD, R_MEAN, R_MAX, R_MIN, R_VAR, R_STD, R_MEDIAN } reduction;

static int by_value(eval_cx *cx, val *x, val *y)   /* x < y; nan never reaches here */
{
    return eval_cmp(cx, IR_LT, x, y);
}

static val *np_reduce(eval_cx *cx, reduction f, eval_args *a, const ir_node *at)
{
    static const char *const names[] = { "sum", "prod", "mean", "max", "min", "var", "std", "median" };
    const char *name = names[f];
    val *src = a->pos[0], *l;
    if (src->kind == V_LIST || src->kind == V_TUPLE) {
        if (!(l = flows_of(cx, src, name, at))) return NULL;
    } else {
        if (need_num(cx, src, name, at) < 0 || !(l = eval_seq_new(cx, V_LIST, 1))) return NULL;
        EV_INCREF(src);
        if (eval_seq_push(cx, l, src) < 0) { eval_decref(cx, l); return NULL; }
    }
    size_t n = l->u.seq.len;
    int is_float = 0, has_nan = 0;
    for (size_t i = 0; i < n; i++) {
        val *v = l->u.seq.it[i];
        is_float |= v->kind == V_FLOAT || v->kind == V_INF;
        has_nan |= IS_NAN(v);
    }
    calc c = { .cx = cx, .at = at };
    val *r = NULL, *ddof = eval_kwarg(a, "ddof");
    if (eval_walk(cx, n, 0, at) < 0) c.fail = 1;
    else if (ddof && need_num(cx, ddof, name, at) < 0) c.fail = 1;
    else if ((f == R_MAX || f == R_MIN) && n == 0) {
        eval_raise(cx, CR_EPY_VALUE, at, "zero-size array to reduction operation %s which has no identity",
                   f == R_MAX ? "maximum" : "minimum");
        c.fail = 1;
    } else if (f == R_SUM || f == R_PROD) {
        r = k_int(&c, f == R_SUM ? 0 : 1);
        for (size_t i = 0; i < n && !c.fail; i++) {
            val *t = op(&c, f == R_SUM ? IR_ADD : IR_MUL, r, l->u.seq.it[i]);
            if (t) EV_INCREF(t);
            calc_done(&c);
            r = t ? keep(&c, t) : NULL;
        }
        if (is_float || n == 0) r = as_float(&c, r);
    } else if (f == R_MAX || f == R_MIN) {
        r = l->u.seq.it[0];
        for (size_t i = 1; i < n && !has_nan; i++) {
            val *v = l->u.seq.it[i];
            int lt = f == R_MAX ? by_value(cx, r, v) : by_value(cx, v, r);
            if (lt < 0) { c.fail = 1; break; }
            if (lt) r = v;
        }
        r = has_nan ? k_nonfinite(&c, NAN) : is_float ? as_float(&c, r) : r;
    } else if (n == 0) {
        r = k_nonfinite(&c, NAN);   /* mean, var, std, median of nothing */
    } else if (f == R_MEDIAN) {
        if (has_nan) r = k_nonfinite(&c, NAN);
        else {
            val **it = l->u.seq.it;   /* insertion sort: charged above as n steps, and the lists
                                       * are literals of the program */
            for (size_t i = 1; i < n && !c.fail; i++)
                for (size_t j = i; j > 0; j--) {
                    int lt = by_value(cx, it[j], it[j - 1]);
                    if (lt < 0) { c.fail = 1; break; }
                    if (!lt) break;
                    val *t = it[j]; it[j] = it[j - 1]; it[j - 1] = t;
                }
            r = n % 2 ? as_float(&c, it[n / 2])
                      : dv(&c, add(&c, it[n / 2 - 1], it[n / 2]), k_int(&c, 2));
            r = as_float(&c, r);
        }
    } else {   /* mean, var, std */
        val *s = k_int(&c, 0);
        for (size_t i = 0; i < n && !c.fail; i++) s = add(&c, s, l->u.seq.it[i]);
        val *m = as_float(&c, dv(&c, s, k_int(&c, (long)n)));
        if (f == R_MEAN) r = m;
        else {
            val *ss = k_int(&c, 0);
            for (size_t i = 0; i < n && !c.fail; i++) {
                val *dlt = sub(&c, l->u.seq.it[i], m);
                ss = add(&c, ss, mul(&c, dlt, dlt));
            }
            val *cnt = sub(&c, k_int(&c, (long)n), ddof ? ddof : k_int(&c, 0));
            if (!c.fail && sign_of(cnt) < 0) cnt = k_int(&c, 0);
            r = as_float(&c, dv(&c, ss, cnt));
            if (f == R_STD && !c.fail) {
                if (r->kind == V_INF) r = k_nonfinite(&c, sqrt(to_double(r)));
                else {
                    val *q = eval_num(cx, V_FLOAT);
                    int exact = 1;
                    if (q) num_sqrt(q->u.q, &exact, r->u.q, &cx->nc);
                    r = q ? keep(&c, eval_num_finish(cx, q, !exact || (r->flags & VF_INEXACT))) : keep(&c, NULL);
                }
            }
        }
    }
    val *res = calc_result(&c, r);   /* before l goes: r may be one of its items */
    eval_decref(cx, l);
    return res;
}

/* The registry rows' functions that share an implementation. */
#define VIA(fn, impl, what) \
    val *fn(eval_cx *cx, eval_args *a, const ir_node *at) { return impl(cx, what, a, at); }
VIA(eval_npf_fv, annuity_call, F_FV)
VIA(eval_npf_pmt, annuity_call, F_PMT)
VIA(eval_npf_pv, annuity_call, F_PV)
VIA(eval_npf_nper, annuity_call, F_NPER)
VIA(eval_npf_ipmt, annuity_call, F_IPMT)
VIA(eval_npf_ppmt, annuity_call, F_PPMT)
VIA(eval_np_sum, np_reduce, R_SUM)
VIA(eval_np_prod, np_reduce, R_PROD)
VIA(eval_np_mean, np_reduce, R_MEAN)
VIA(eval_np_max, np_reduce, R_MAX)
VIA(eval_np_min, np_reduce, R_MIN)
VIA(eval_np_var, np_reduce, R_VAR)
VIA(eval_np_std, np_reduce, R_STD)
VIA(eval_np_median, np_reduce, R_MEDIAN)
