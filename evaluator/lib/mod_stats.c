/* evaluator/lib/mod_stats.c: the statistics module, statistics.NormalDist and scipy.stats.norm.
 *
 * CPython's statistics sums exact fractions (mean, variance, harmonic_mean) and converts at
 * the end; here the exact rational is the result, an int where CPython's is an int. The
 * functions CPython writes with float arithmetic (fmean, quantiles, covariance, ...) are
 * written here with the evaluator's own operators and math.fsum, so types, infinities and
 * error messages are the operators'. Square roots (stdev, correlation), geometric_mean and
 * the normal distribution are correctly rounded (num_math.c) and inexact. */
#include "evaluator/lib/lib.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- a method's arguments, as CPython binds a def's --------------------------------------- */

enum { B_POSONLY = 1, B_SELF = 2 };   /* bind()'s flags; B_SELF: a method, self counted */

/* params[0..npos) positional (positional-only with B_POSONLY), the rest keyword-only; the
 * first nreq are required. out[i] (one per param): the argument or NULL. 0, -1 raised. (A
 * module's function has had its arguments bound by its registry row.) */
static int bind(eval_cx *cx, eval_args *a, const char *fn, const char *const *params,
                size_t npos, size_t nreq, int flags, val **out, const ir_node *at)
{
    reg_sig s = { .name = fn };
    while (params[s.np] && s.np < REG_MAXP) { s.p[s.np] = params[s.np]; s.np++; }
    s.npos = (unsigned char)npos;
    s.nposonly = flags & B_POSONLY ? s.npos : 0;
    return eval_bind_def(cx, a, &s, nreq, flags & B_SELF ? 1 : 0, 0, out, at);
}

/* StatisticsError: a ValueError (as CPython's subclass is caught) that names itself. */
static val *st_error(eval_cx *cx, const ir_node *at, const char *msg)
{
    eval_raise(cx, CR_EPY_VALUE, at, "%s", msg);
    snprintf(cx->err.type, sizeof cx->err.type, "StatisticsError");
    return NULL;
}

static val *items(eval_cx *cx, val *v, const ir_node *at)
{
    val *l = eval_list_of(cx, v, V_LIST);
    if (!l) eval_at(cx, at);
    return l;
}

static val *call_builtin(eval_cx *cx, int id, val *x, const ir_node *at)
{
    eval_args a = { &x, 1, NULL, NULL, 0 };
    return eval_builtin_call(cx, id, &a, at);
}

/* Borrowed item i of a list. */
#define IT(l, i) ((l)->u.seq.it[i])

static val *binop_steal(eval_cx *cx, int op, val *a, val *b, const ir_node *at)
{
    val *r = a && b ? eval_binop(cx, op, a, b, at) : NULL;
    eval_decref(cx, a);
    eval_decref(cx, b);
    return r;
}

/* ---- exact sums (CPython's _sum over Fractions) ----------------------------------------- */

typedef struct {
    mpq_t s;
    int is_float, inexact, special;   /* special: a NaN or infinity was summed, into nf */
    int is_dec;            /* a Decimal was summed: the result is one, as CPython's _convert */
    double nf;
} acc;

static void acc_init(acc *c)
{
    mpq_init(c->s);
    c->is_float = c->inexact = c->special = c->is_dec = 0;
    c->nf = 0;
}

static int is_decimal(const val *x)
{
    return x->kind == V_OBJ && strcmp(x->u.obj.cls->name, "decimal.Decimal") == 0;
}

/* A finite Decimal's exact value (its class's rational hook) into q. 0, or -1 raised: a NaN
 * or infinite Decimal is not summed in-process. */
static int decimal_value(eval_cx *cx, val *x, mpq_t q, const ir_node *at)
{
    int rc = x->u.obj.cls->rational ? x->u.obj.cls->rational(cx, x, q) : 0;
    if (rc == 0)
        eval_raise(cx, CR_EPY_TYPE, at, "can't convert type '%s' to numerator/denominator",
                   eval_type_name(x));
    return rc > 0 ? 0 : -1;
}
static void acc_clear(acc *c) { mpq_clear(c->s); }

/* Adds x (sq: x*x) as _exact_ratio would read it. 0, -1 raised. */
static int acc_add(eval_cx *cx, acc *c, val *x, int sq, const ir_node *at)
{
    if (x->kind == V_INF) {
        double d;
        eval_to_double(cx, x, &d, at);
        c->nf += sq ? d * d : d;
        c->special = c->is_float = 1;
        return 0;
    }
    if (is_decimal(x) || (c->is_dec && x->kind == V_FLOAT)) {
        /* CPython's _coerce: int goes with either, float and Decimal with neither (its
         * message names them in this order whichever came first) */
        if (c->is_float || x->kind == V_FLOAT) {
            eval_raise(cx, CR_EPY_TYPE, at, "don't know how to coerce float and Decimal");
            return -1;
        }
        mpq_t d;
        mpq_init(d);
        int rc = decimal_value(cx, x, d, at);
        if (rc == 0) {
            if (sq) mpq_mul(d, d, d);
            mpq_add(c->s, c->s, d);
            c->is_dec = 1;
        }
        mpq_clear(d);
        return rc;
    }
    if (!IS_NUM(x)) {
        eval_raise(cx, CR_EPY_TYPE, at, "can't convert type '%s' to numerator/denominator",
                   eval_type_name(x));
        return -1;
    }
    /* the sum is no larger than its terms together: charge their size */
    if (eval_walk(cx, 1, (mpz_size(mpq_numref(c->s)) + mpz_size(mpq_denref(x->u.q)) +
                          mpz_size(mpq_numref(x->u.q))) * sizeof(mp_limb_t) * (sq ? 3 : 1), at) < 0)
        return -1;
    c->is_float |= x->kind == V_FLOAT;
    c->inexact |= !!(x->flags & VF_INEXACT);
    if (sq) {
        mpq_t t;
        mpq_init(t);
        mpq_mul(t, x->u.q, x->u.q);
        mpq_add(c->s, c->s, t);
        mpq_clear(t);
    } else {
        mpq_add(c->s, c->s, x->u.q);
    }
    return 0;
}

/* CPython's _convert: an int when every item was one and the value is integral; else
 * float(Fraction), whose int division raises past the double's range. */
static val *acc_value(eval_cx *cx, const acc *c, mpq_ptr q, const ir_node *at)
{
    if (c->special) return eval_nonfinite(cx, c->nf);
    if (c->is_dec) {
        /* Decimal(numerator) / Decimal(denominator), in the current context */
        val *cls = eval_dec_class(cx, at), *part[2] = { NULL, NULL }, *r = NULL;
        for (int i = 0; cls && i < 2; i++) {
            val *z = eval_num(cx, V_INT);
            if (!z) break;
            mpz_set(mpq_numref(z->u.q), i ? mpq_denref(q) : mpq_numref(q));
            if (!(z = eval_num_done(cx, z))) break;
            part[i] = eval_call1(cx, cls, z, at);
            eval_decref(cx, z);
            if (!part[i]) break;
        }
        if (part[0] && part[1]) r = eval_binop(cx, IR_DIV, part[0], part[1], at);
        eval_decref(cx, part[0]);
        eval_decref(cx, part[1]);
        eval_decref(cx, cls);
        return r;
    }
    int is_int = !c->is_float && mpz_cmp_ui(mpq_denref(q), 1) == 0, exact = 1;
    if (!is_int && num_double_range(q, &exact) > 0)
        return eval_raise(cx, CR_EPY_OVERFLOW, at, "integer division result too large for a float");
    val *r = eval_num(cx, is_int ? V_INT : V_FLOAT);
    if (!r) return NULL;
    mpq_set(r->u.q, q);
    return eval_num_finish(cx, r, c->inexact || !exact);
}

/* ---- mean, fmean, geometric_mean, harmonic_mean ---------------------------------------- */

val *eval_st_mean(eval_cx *cx, eval_args *a, const ir_node *at)
{
    val *l, *r = NULL;
    if (!(l = items(cx, a->pos[0], at))) return NULL;
    acc c;
    acc_init(&c);
    size_t n = l->u.seq.len, i;
    for (i = 0; i < n && acc_add(cx, &c, IT(l, i), 0, at) == 0; i++) {}
    if (i < n) {
    } else if (!n) {
        st_error(cx, at, "mean requires at least one data point");
    } else {
        mpq_t q;
        mpq_init(q);
        mpq_set_ui(q, (unsigned long)n, 1);
        mpq_div(q, c.s, q);
        r = acc_value(cx, &c, q, at);
        mpq_clear(q);
    }
    acc_clear(&c);
    eval_decref(cx, l);
    return r;
}

/* math.fsum(l): a float, exact here; infinities and errors as math.fsum's. */
static val *fsum(eval_cx *cx, val *l, const ir_node *at)
{
    return call_builtin(cx, M_FSUM, l, at);
}

static val *int_val(eval_cx *cx, size_t n) { return eval_int_si(cx, (long)n); }

val *eval_st_fmean(eval_cx *cx, eval_args *a, const ir_node *at)
{
    val *arg[REG_MAXP], *l, *w = NULL, *num = NULL, *r = NULL;
    eval_bound(ST_FMEAN, a, arg);
    if (!(l = items(cx, arg[0], at))) return NULL;
    size_t n = l->u.seq.len;
    if (!arg[1] || arg[1]->kind == V_NONE) {
        val *t = fsum(cx, l, at);
        if (t && !n) {
            eval_decref(cx, t);
            st_error(cx, at, "fmean requires at least one data point");
        } else if (t) {
            r = binop_steal(cx, IR_DIV, t, int_val(cx, n), at);
        }
        eval_decref(cx, l);
        return r;
    }
    /* fsum(map(mul, data, weights)) stops at the shorter, then the lengths are compared */
    val *prod = NULL;
    if (!(w = items(cx, arg[1], at))) goto out;
    size_t m = n < w->u.seq.len ? n : w->u.seq.len;
    if (!(prod = eval_seq_new(cx, V_LIST, m))) goto out;
    for (size_t i = 0; i < m; i++) {
        val *p = eval_binop(cx, IR_MUL, IT(l, i), IT(w, i), at);
        if (!p || eval_seq_push(cx, prod, p) < 0) goto out;
    }
    if (!(num = fsum(cx, prod, at))) goto out;
    if (n != w->u.seq.len) {
        st_error(cx, at, "data and weights must be the same length");
        goto out;
    }
    val *den = fsum(cx, w, at);
    int t = den ? eval_truth(cx, den) : -1;
    if (t == 0) {
        eval_decref(cx, den);
        st_error(cx, at, "sum of weights must be non-zero");
    } else if (t > 0) {
        r = binop_steal(cx, IR_DIV, num, den, at);
        num = NULL;
    }
out:
    eval_decref(cx, num);
    eval_decref(cx, prod);
    eval_decref(cx, w);
    eval_decref(cx, l);
    return r;
}

/* z[0] = z[0] * ... * z[n-1], as a balanced tree (fast multiplication of near-equal
 * sizes, not n products of a growing one), each level charged by its size. 0, -1 raised. */
static int product_tree(eval_cx *cx, mpz_t *z, size_t n, size_t bytes, const ir_node *at)
{
    while (n > 1) {
        if (eval_walk(cx, n, bytes, at) < 0) return -1;
        for (size_t i = 0; i < n / 2; i++) mpz_mul(z[i], z[2 * i], z[2 * i + 1]);
        if (n % 2) mpz_swap(z[n / 2], z[n - 1]);
        n = (n + 1) / 2;
    }
    return 0;
}

/* exp(fmean(map(log, data))) is the n-th root of the product: that, correctly rounded. */
val *eval_st_geometric_mean(eval_cx *cx, eval_args *a, const ir_node *at)
{
    static const char *const msg =
        "geometric mean requires a non-empty dataset containing positive numbers";
    val *l, *r = NULL;
    if (!(l = items(cx, a->pos[0], at))) return NULL;
    size_t n = l->u.seq.len, i, m = 0, bytes = 0;
    int inexact = 0, nan = 0, inf = 0;
    for (i = 0; i < n; i++) {   /* CPython's order: log() of each item in turn */
        val *x = IT(l, i);
        if (x->kind == V_INF) {
            if (x->sub == INF_NEG) break;
            nan |= x->sub == INF_NAN;
            inf |= x->sub == INF_POS;
            continue;
        }
        if (!IS_NUM(x)) {
            eval_raise(cx, CR_EPY_TYPE, at, "must be real number, not %s", eval_type_name(x));
            break;
        }
        if (mpq_sgn(eval_decided(cx, x, 0)) <= 0) break;
        bytes += (mpz_size(mpq_numref(x->u.q)) + mpz_size(mpq_denref(x->u.q))) * sizeof(mp_limb_t);
        inexact |= !!(x->flags & VF_INEXACT);
        m++;
    }
    if (i < n || !n) {
        if (cx->err.code == CR_OK) st_error(cx, at, msg);
    } else if (nan || inf) {
        r = eval_nonfinite(cx, nan ? NAN : INFINITY);
    } else if (eval_mem_room(cx, 2 * bytes + 2 * m * sizeof(mpz_t)) == 0 &&
               eval_count(cx, 16, at) == 0) {
        /* numerators and denominators multiplied apart: one gcd at the end */
        mpz_t *z = malloc(2 * m * sizeof(mpz_t));
        if (!z) {
            eval_raise(cx, CR_ENOMEM, at, "out of memory");
            goto out;
        }
        for (i = 0; i < m; i++) {
            mpz_init_set(z[i], mpq_numref(IT(l, i)->u.q));
            mpz_init_set(z[m + i], mpq_denref(IT(l, i)->u.q));
        }
        mpq_t p, e;
        mpq_inits(p, e, (mpq_ptr)0);
        int exact = 1;
        if (product_tree(cx, z, m, bytes, at) == 0 && product_tree(cx, z + m, m, bytes, at) == 0 &&
            (r = eval_num(cx, V_FLOAT))) {
            mpz_swap(mpq_numref(p), z[0]);
            mpz_swap(mpq_denref(p), z[m]);
            mpq_canonicalize(p);
            mpq_set_ui(e, 1, (unsigned long)n);
            if (num_pow(r->u.q, &exact, p, e, 1, &cx->nc) != CR_OK) {
                eval_decref(cx, r);   /* the root of positive numbers lies among them */
                r = eval_raise(cx, CR_EINTERNAL, at, "geometric_mean: root failed");
            } else {
                r = eval_num_finish(cx, r, inexact || !exact);
            }
        }
        mpq_clears(p, e, (mpq_ptr)0);
        for (i = 0; i < 2 * m; i++) mpz_clear(z[i]);
        free(z);
    }
out:
    eval_decref(cx, l);
    return r;
}

/* CPython's _fail_neg: `x < 0` raises. 0, -1 raised. */
static int fail_neg(eval_cx *cx, val *x, const char *msg, const ir_node *at)
{
    if (!IS_REAL(x)) {
        eval_raise(cx, CR_EPY_TYPE, at, "'<' not supported between instances of '%s' and 'int'",
                   eval_type_name(x));
        return -1;
    }
    if (x->kind == V_INF ? x->sub == INF_NEG : mpq_sgn(eval_decided(cx, x, 0)) < 0) {
        st_error(cx, at, msg);
        return -1;
    }
    return 0;
}

val *eval_st_harmonic_mean(eval_cx *cx, eval_args *a, const ir_node *at)
{
    static const char *const neg = "harmonic mean does not support negative values";
    val *arg[REG_MAXP], *l, *w = NULL, *r = NULL;
    eval_bound(ST_HARMONIC_MEAN, a, arg);
    if (!(l = items(cx, arg[0], at))) return NULL;
    int noweights = !arg[1] || arg[1]->kind == V_NONE;
    size_t n = l->u.seq.len, i;
    acc sw, tot;
    acc_init(&sw);
    acc_init(&tot);
    if (n < 1) {
        st_error(cx, at, "harmonic_mean requires at least one data point");
        goto out;
    }
    if (n == 1 && noweights) {
        val *x = IT(l, 0);
        if (!IS_REAL(x)) eval_raise(cx, CR_EPY_TYPE, at, "unsupported type");
        else if (fail_neg(cx, x, neg, at) == 0) { r = x; EV_INCREF(r); }
        goto out;
    }
    if (noweights) {
        mpq_set_ui(sw.s, (unsigned long)n, 1);
    } else {
        if (!(w = items(cx, arg[1], at))) goto out;
        if (w->u.seq.len != n) {
            st_error(cx, at, "Number of weights does not match data size");
            goto out;
        }
        for (i = 0; i < n; i++)
            if (fail_neg(cx, IT(w, i), neg, at) < 0 || acc_add(cx, &sw, IT(w, i), 0, at) < 0)
                goto out;
    }
    /* sum(w / x if w else 0): x checked for sign as it comes; a zero x makes the mean 0 */
    for (i = 0; i < n; i++) {
        val *x = IT(l, i), *wi = noweights ? NULL : IT(w, i), *t;
        if (fail_neg(cx, x, neg, at) < 0) goto out;
        int wt = wi ? eval_truth(cx, wi) : 1;
        if (wt < 0) goto out;
        if (!wt) {
            if (!(t = eval_int_si(cx, 0))) goto out;
        } else {
            if (x->kind != V_INF && !mpq_sgn(x->u.q)) {
                r = eval_int_si(cx, 0);
                goto out;
            }
            val *one = wi ? NULL : eval_int_si(cx, 1);
            t = wi || one ? eval_binop(cx, IR_DIV, wi ? wi : one, x, at) : NULL;
            eval_decref(cx, one);
            if (!t) goto out;
        }
        int rc = acc_add(cx, &tot, t, 0, at);
        eval_decref(cx, t);
        if (rc < 0) goto out;
    }
    if (!tot.special && mpq_sgn(tot.s) <= 0) {
        st_error(cx, at, "Weighted sum must be positive");
    } else if (tot.special || sw.special) {
        r = eval_nonfinite(cx, (sw.special ? sw.nf : mpq_get_d(sw.s)) /
                                   (tot.special ? tot.nf : mpq_get_d(tot.s)));
    } else {
        mpq_t q;
        mpq_init(q);
        mpq_div(q, sw.s, tot.s);
        tot.inexact |= sw.inexact;
        r = acc_value(cx, &tot, q, at);
        mpq_clear(q);
    }
out:
    acc_clear(&tot);
    acc_clear(&sw);
    eval_decref(cx, w);
    eval_decref(cx, l);
    return r;
}

/* ---- median, mode, quantiles ------------------------------------------------------------ */

static val *sorted(eval_cx *cx, val *v, const ir_node *at)
{
    return call_builtin(cx, B_SORTED, v, at);
}

/* which: 0 median, -1 median_low, 1 median_high */
static val *median(eval_cx *cx, eval_args *a, int which, const ir_node *at)
{
    val *l, *r = NULL;
    if (!(l = sorted(cx, a->pos[0], at))) return NULL;
    size_t n = l->u.seq.len;
    if (!n) {
        st_error(cx, at, "no median for empty data");
    } else if (n % 2 || which > 0) {
        r = IT(l, n / 2);
        EV_INCREF(r);
    } else if (which < 0) {
        r = IT(l, n / 2 - 1);
        EV_INCREF(r);
    } else {
        r = binop_steal(cx, IR_DIV, eval_binop(cx, IR_ADD, IT(l, n / 2 - 1), IT(l, n / 2), at),
                        eval_int_si(cx, 2), at);
    }
    eval_decref(cx, l);
    return r;
}

val *eval_st_median(eval_cx *cx, eval_args *a, const ir_node *at)
{
    return median(cx, a, 0, at);
}

val *eval_st_median_low(eval_cx *cx, eval_args *a, const ir_node *at)
{
    return median(cx, a, -1, at);
}

val *eval_st_median_high(eval_cx *cx, eval_args *a, const ir_node *at)
{
    return median(cx, a, 1, at);
}

/* The counts of data's values in first-seen order (a dict, as collections.Counter), and the
 * largest count. */
static val *counts(eval_cx *cx, eval_args *a, long *max, const ir_node *at)
{
    val *l, *d;
    if (!(l = items(cx, a->pos[0], at))) return NULL;
    if (!(d = eval_dict_new(cx, V_DICT))) { eval_decref(cx, l); return NULL; }
    *max = 0;
    for (size_t i = 0; i < l->u.seq.len; i++) {
        int err = 0;
        val *k = IT(l, i), *c = eval_dict_get(cx, d, k, &err), *nc;
        long n = c ? mpz_get_si(mpq_numref(c->u.q)) + 1 : 1;
        if (err || eval_count(cx, 1, at) < 0 || !(nc = eval_int_si(cx, n))) goto fail;
        EV_INCREF(k);
        if (eval_dict_set(cx, d, k, nc) < 0) goto fail;
        if (n > *max) *max = n;
    }
    eval_decref(cx, l);
    return d;
fail:
    eval_at(cx, at);
    eval_decref(cx, d);
    eval_decref(cx, l);
    return NULL;
}

val *eval_st_mode(eval_cx *cx, eval_args *a, const ir_node *at)
{
    long max;
    val *d = counts(cx, a, &max, at), *r = NULL;
    if (!d) return NULL;
    for (size_t i = 0; i < d->u.d.used && !r; i++) {
        dict_ent *e = &d->u.d.ent[i];
        if (e->key && mpz_cmp_si(mpq_numref(e->value->u.q), max) == 0) {
            r = e->key;
            EV_INCREF(r);
        }
    }
    eval_decref(cx, d);
    return r ? r : st_error(cx, at, "no mode for empty data");
}

val *eval_st_multimode(eval_cx *cx, eval_args *a, const ir_node *at)
{
    long max;
    val *d = counts(cx, a, &max, at), *r;
    if (!d) return NULL;
    if ((r = eval_seq_new(cx, V_LIST, 0)))
        for (size_t i = 0; i < d->u.d.used; i++) {
            dict_ent *e = &d->u.d.ent[i];
            if (!e->key || mpz_cmp_si(mpq_numref(e->value->u.q), max) != 0) continue;
            EV_INCREF(e->key);
            if (eval_seq_push(cx, r, e->key) < 0) {
                eval_decref(cx, r);
                r = NULL;
                break;
            }
        }
    eval_decref(cx, d);
    return r;
}

/* (data[j] * (n - delta) + data[j + 1] * delta) / n, with the evaluator's operators */
static val *interpolate(eval_cx *cx, val *lo, val *hi, long n, long delta, const ir_node *at)
{
    val *x = binop_steal(cx, IR_MUL, (EV_INCREF(lo), lo), eval_int_si(cx, n - delta), at), *y;
    if (!x) return NULL;
    if (!(y = binop_steal(cx, IR_MUL, (EV_INCREF(hi), hi), eval_int_si(cx, delta), at))) {
        eval_decref(cx, x);
        return NULL;
    }
    return binop_steal(cx, IR_DIV, binop_steal(cx, IR_ADD, x, y, at), eval_int_si(cx, n), at);
}

val *eval_st_quantiles(eval_cx *cx, eval_args *a, const ir_node *at)
{
    val *arg[REG_MAXP], *l = NULL, *r = NULL, *ms = NULL;
    eval_bound(ST_QUANTILES, a, arg);
    val *nv = arg[1], *mv = arg[2];
    long n = 4;
    if (nv) {
        if (nv->kind == V_INT || nv->kind == V_BOOL) {
            if (mpz_cmp_si(mpq_numref(nv->u.q), 1) < 0) return st_error(cx, at, "n must be at least 1");
            /* a list of 2^31 cut points passes any memory limit; below it, i * m fits */
            if (mpz_cmp_ui(mpq_numref(nv->u.q), 1ul << 31) > 0) return eval_limit(cx, at, "memory");
            n = mpz_get_si(mpq_numref(nv->u.q));
        } else if (!IS_REAL(nv)) {
            return eval_raise(cx, CR_EPY_TYPE, at,
                              "'<' not supported between instances of '%s' and 'int'",
                              eval_type_name(nv));
        } else if (nv->kind == V_INF ? nv->sub == INF_NEG
                                     : mpq_cmp_ui(eval_decided(cx, nv, 0), 1, 1) < 0) {
            return st_error(cx, at, "n must be at least 1");
        }
    }
    if (!(l = sorted(cx, arg[0], at))) return NULL;
    long ld = (long)l->u.seq.len;   /* < 2^31: a list longer passes any memory limit */
    int incl = 0;
    if (ld < 2) {
        st_error(cx, at, "must have at least two data points");
        goto out;
    }
    if (mv && mv->kind == V_STR && strcmp(mv->u.str.s, "inclusive") == 0) {
        incl = 1;
    } else if (mv && !(mv->kind == V_STR && strcmp(mv->u.str.s, "exclusive") == 0)) {
        if ((ms = eval_to_str(cx, mv, 1)))
            eval_raise(cx, CR_EPY_VALUE, at, "Unknown method: %s", ms->u.str.s);
        goto out;
    }
    if (nv && nv->kind != V_INT && nv->kind != V_BOOL) {
        eval_raise(cx, CR_EPY_TYPE, at, "'%s' object cannot be interpreted as an integer",
                   eval_type_name(nv));
        goto out;
    }
    if (!(r = eval_seq_new(cx, V_LIST, 0))) goto out;
    long m = incl ? ld - 1 : ld + 1;
    for (long i = 1; i < n; i++) {
        long j = i * m / n, delta;
        if (incl) {
            delta = i * m % n;
        } else {
            j = j < 1 ? 1 : j > ld - 1 ? ld - 1 : j;
            delta = i * m - j * n;
            j--;
        }
        val *q = eval_count(cx, 1, at) < 0 ? NULL : interpolate(cx, IT(l, j), IT(l, j + 1), n, delta, at);
        if (!q || eval_seq_push(cx, r, q) < 0) {
            eval_decref(cx, r);
            r = NULL;
            break;
        }
    }
out:
    eval_decref(cx, ms);
    eval_decref(cx, l);
    return r;
}

/* ---- variance and standard deviation (CPython's _ss) ------------------------------------ */

/* The exact sum of squared deviations of l from c (NULL: from the exact mean) into *ss. */
static int sum_sq(eval_cx *cx, val *l, val *c, acc *ss, const ir_node *at)
{
    size_t n = l->u.seq.len;
    if (c && c->kind != V_NONE) {
        for (size_t i = 0; i < n; i++) {
            val *d = eval_binop(cx, IR_SUB, IT(l, i), c, at);
            int rc = d ? acc_add(cx, ss, d, 1, at) : -1;
            eval_decref(cx, d);
            if (rc < 0) return -1;
        }
        return 0;
    }
    acc sx;
    acc_init(&sx);
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++)
        rc = acc_add(cx, &sx, IT(l, i), 0, at) < 0 || acc_add(cx, ss, IT(l, i), 1, at) < 0 ? -1 : 0;
    if (rc == 0 && sx.special) {
        ss->nf = sx.nf;   /* CPython's _ss: the deviation of a NaN or infinity is the sum */
    } else if (rc == 0 && n) {
        /* ss = sxx - sx^2 / n */
        mpq_t t;
        mpq_init(t);
        mpq_mul(t, sx.s, sx.s);
        mpq_set_ui(sx.s, (unsigned long)n, 1);
        mpq_div(t, t, sx.s);
        mpq_sub(ss->s, ss->s, t);
        mpq_clear(t);
    }
    acc_clear(&sx);
    return rc;
}

/* which: 0 variance, 1 pvariance, 2 stdev, 3 pstdev */
static val *spread(eval_cx *cx, eval_args *a, int which, const ir_node *at)
{
    static const int ids[] = { ST_VARIANCE, ST_PVARIANCE, ST_STDEV, ST_PSTDEV };
    static const char *const msgs[] = {
        "variance requires at least two data points", "pvariance requires at least one data point",
        "stdev requires at least two data points", "pstdev requires at least one data point" };
    int pop = which & 1;
    val *arg[REG_MAXP], *l, *r = NULL;
    eval_bound(ids[which], a, arg);
    if (!(l = items(cx, arg[0], at))) return NULL;
    size_t n = l->u.seq.len;
    acc ss;
    acc_init(&ss);
    if (sum_sq(cx, l, arg[1], &ss, at) < 0) goto out;
    if (n < (size_t)(pop ? 1 : 2)) {
        st_error(cx, at, msgs[which]);
        goto out;
    }
    mpq_t q;
    mpq_init(q);
    mpq_set_ui(q, (unsigned long)(pop ? n : n - 1), 1);
    mpq_div(q, ss.s, q);
    if (which < 2) {
        r = acc_value(cx, &ss, q, at);
    } else if (ss.is_dec) {
        /* CPython's _decimal_sqrt_of_frac steps with next_plus/next_minus, which this
         * Decimal lacks: refused, as before Decimal data were read */
        eval_raise(cx, CR_EPY_TYPE, at,
                   "can't convert type 'decimal.Decimal' to numerator/denominator");
    } else if (ss.special) {
        /* CPython reads the fraction's numerator from the float sum */
        eval_raise(cx, CR_EPY_ATTRIBUTE, at, "'float' object has no attribute 'numerator'");
    } else if (eval_count(cx, 16, at) == 0 && (r = eval_num(cx, V_FLOAT))) {
        int exact = 1;
        num_sqrt(r->u.q, &exact, q, &cx->nc);   /* q >= 0: a sum of squares */
        r = eval_num_finish(cx, r, ss.inexact || !exact);
    }
    mpq_clear(q);
out:
    acc_clear(&ss);
    eval_decref(cx, l);
    return r;
}

val *eval_st_variance(eval_cx *cx, eval_args *a, const ir_node *at) { return spread(cx, a, 0, at); }
val *eval_st_pvariance(eval_cx *cx, eval_args *a, const ir_node *at) { return spread(cx, a, 1, at); }
val *eval_st_stdev(eval_cx *cx, eval_args *a, const ir_node *at) { return spread(cx, a, 2, at); }
val *eval_st_pstdev(eval_cx *cx, eval_args *a, const ir_node *at) { return spread(cx, a, 3, at); }

/* ---- covariance, correlation, linear_regression ----------------------------------------- */

/* The sums the three share, as CPython writes them with fsum and float operators:
 * xbar = fsum(x)/n, ybar, sxy = fsum((xi - xbar) * (yi - ybar)), sxx, syy (each wanted one
 * not NULL; proportional: the sums of xi*yi and xi*xi, about 0). s[]: sxy, sxx, syy. */
typedef struct {
    val *x, *y, *xbar, *ybar, *s[3];
    size_t n;
} pair_sums;

static void pair_free(eval_cx *cx, pair_sums *p)
{
    val *all[] = { p->x, p->y, p->xbar, p->ybar, p->s[0], p->s[1], p->s[2] };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) eval_decref(cx, all[i]);
}

/* fsum(f(i) for i) where f(i) = (u[i] - ubar) * (v[i] - vbar) (a bar NULL: no subtraction) */
static val *fsum_products(eval_cx *cx, val *u, val *ubar, val *v, val *vbar, size_t n,
                          const ir_node *at)
{
    val *l = eval_seq_new(cx, V_LIST, n), *r;
    if (!l) return NULL;
    for (size_t i = 0; i < n; i++) {
        val *p = ubar ? eval_binop(cx, IR_SUB, IT(u, i), ubar, at) : (EV_INCREF(IT(u, i)), IT(u, i));
        val *q = vbar ? eval_binop(cx, IR_SUB, IT(v, i), vbar, at) : (EV_INCREF(IT(v, i)), IT(v, i));
        val *pq = binop_steal(cx, IR_MUL, p, q, at);
        if (!pq || eval_seq_push(cx, l, pq) < 0) {
            eval_decref(cx, l);
            return NULL;
        }
    }
    r = fsum(cx, l, at);
    eval_decref(cx, l);
    return r;
}

static int pair_init(eval_cx *cx, eval_args *a, const char *what, int want_yy,
                     int proportional, pair_sums *p, const ir_node *at)
{
    val *arg[2] = { a->pos[0], a->pos[1] };
    char msg[128];
    memset(p, 0, sizeof *p);
    size_t ny;
    if (eval_len(cx, arg[0], &p->n) < 0 || eval_len(cx, arg[1], &ny) < 0) return eval_at(cx, at);
    if (ny != p->n) {
        snprintf(msg, sizeof msg, "%s requires that both inputs have same number of data points", what);
        return st_error(cx, at, msg), -1;
    }
    if (p->n < 2) {
        snprintf(msg, sizeof msg, "%s requires at least two data points", what);
        return st_error(cx, at, msg), -1;
    }
    if (!(p->x = items(cx, arg[0], at)) || !(p->y = items(cx, arg[1], at))) return -1;
    size_t n = p->n;
    if (!proportional) {
        if (!(p->xbar = binop_steal(cx, IR_DIV, fsum(cx, p->x, at), int_val(cx, n), at)) ||
            !(p->ybar = binop_steal(cx, IR_DIV, fsum(cx, p->y, at), int_val(cx, n), at)))
            return -1;
    }
    if (!(p->s[0] = fsum_products(cx, p->x, p->xbar, p->y, p->ybar, n, at)) ||
        !(p->s[1] = fsum_products(cx, p->x, p->xbar, p->x, p->xbar, n, at)) ||
        (want_yy && !(p->s[2] = fsum_products(cx, p->y, p->ybar, p->y, p->ybar, n, at))))
        return -1;
    return 0;
}

val *eval_st_covariance(eval_cx *cx, eval_args *a, const ir_node *at)
{
    pair_sums p;
    val *r = NULL;
    if (pair_init(cx, a, "covariance", 0, 0, &p, at) == 0)
        r = binop_steal(cx, IR_DIV, (EV_INCREF(p.s[0]), p.s[0]), int_val(cx, p.n - 1), at);
    pair_free(cx, &p);
    return r;
}

val *eval_st_correlation(eval_cx *cx, eval_args *a, const ir_node *at)
{
    static const char *const constant = "at least one of the inputs is constant";
    pair_sums p;
    val *r = NULL;
    if (pair_init(cx, a, "correlation", 1, 0, &p, at) < 0) goto out;
    val *sxy = p.s[0], *sxx = p.s[1], *syy = p.s[2];
    if (IS_NUM(sxy) && IS_NUM(sxx) && IS_NUM(syy)) {
        /* sxy / sqrt(sxx * syy) as one rounding: sign(sxy) * sqrt(sxy^2 / (sxx * syy)) */
        if (!mpq_sgn(sxx->u.q) || !mpq_sgn(syy->u.q)) {
            st_error(cx, at, constant);
            goto out;
        }
        if (eval_count(cx, 16, at) < 0 || !(r = eval_num(cx, V_FLOAT))) goto out;
        int exact = 1;
        mpq_t d;
        mpq_init(d);
        mpq_mul(r->u.q, sxy->u.q, sxy->u.q);
        mpq_mul(d, sxx->u.q, syy->u.q);
        mpq_div(r->u.q, r->u.q, d);
        num_sqrt(r->u.q, &exact, r->u.q, &cx->nc);
        if (mpq_sgn(sxy->u.q) < 0) mpq_neg(r->u.q, r->u.q);
        mpq_clear(d);
        r = eval_num_finish(cx, r, !exact || ((sxy->flags | sxx->flags | syy->flags) & VF_INEXACT));
        goto out;
    }
    /* a NaN or infinity on the way: CPython's float operations */
    val *pr = eval_binop(cx, IR_MUL, sxx, syy, at), *den = pr ? call_builtin(cx, M_SQRT, pr, at) : NULL;
    eval_decref(cx, pr);
    if (den && den->kind != V_INF && !mpq_sgn(den->u.q)) {
        st_error(cx, at, constant);
        eval_decref(cx, den);
    } else if (den) {
        r = binop_steal(cx, IR_DIV, (EV_INCREF(sxy), sxy), den, at);
    }
out:
    pair_free(cx, &p);
    return r;
}

/* ---- objects of two values -------------------------------------------------------------
 * LinearRegression, NormalDist and a frozen norm each hold two numbers: their data is two
 * val pointers, which one drop releases and one repr shows as `Name(a=x, b=y)`. */

static void drop2(eval_cx *cx, val *self)
{
    val **v = self->u.obj.data;
    eval_decref(cx, v[0]);
    eval_decref(cx, v[1]);
}

/* head: "Name(a=", mid: ", b=" */
static int repr2(eval_cx *cx, cr_buf *b, val *self, const char *head, const char *mid)
{
    val **v = self->u.obj.data;
    if (eval_put(cx, b, head, strlen(head)) < 0 || eval_repr(cx, b, v[0], 0) < 0 ||
        eval_put(cx, b, mid, strlen(mid)) < 0 || eval_repr(cx, b, v[1], 0) < 0)
        return -1;
    return eval_put(cx, b, ")", 1);
}

/* ---- LinearRegression: a named tuple (slope, intercept) --------------------------------- */

typedef struct { val *slope, *intercept; } lr_data;
_Static_assert(sizeof(lr_data) == 2 * sizeof(val *), "drop2 reads two values");

static int lr_repr(eval_cx *cx, cr_buf *b, val *self, int as_str)
{
    (void)as_str;
    return repr2(cx, b, self, "LinearRegression(slope=", ", intercept=");
}

static val *lr_attr(eval_cx *cx, val *self, const char *name, const ir_node *at)
{
    (void)cx; (void)at;
    lr_data *d = self->u.obj.data;
    val *r = strcmp(name, "slope") == 0 ? d->slope : strcmp(name, "intercept") == 0 ? d->intercept : NULL;
    if (r) EV_INCREF(r);
    return r;
}

static val *lr_items(eval_cx *cx, val *self)
{
    lr_data *d = self->u.obj.data;
    val *t = eval_seq_new(cx, V_TUPLE, 2);
    if (!t) return NULL;
    EV_INCREF(d->slope);
    EV_INCREF(d->intercept);
    if (eval_seq_push(cx, t, d->slope) < 0 || eval_seq_push(cx, t, d->intercept) < 0) {
        eval_decref(cx, t);
        return NULL;
    }
    return t;
}

static const eval_class lr_class = {
    .name = "LinearRegression", .drop = drop2, .repr = lr_repr,
    .attr = lr_attr, .items = lr_items,
};

val *eval_st_linear_regression(eval_cx *cx, eval_args *a, const ir_node *at)
{
    pair_sums p;
    val *r = NULL, *slope = NULL, *icpt = NULL, *prop = eval_kwarg(a, "proportional");
    int pr = 0;
    /* proportional is read before the sums (it decides them) */
    if (prop && (pr = eval_truth(cx, prop)) < 0) return NULL;
    if (pair_init(cx, a, "linear regression", 0, pr, &p, at) < 0) goto out;
    val *sxx = p.s[1];
    if ((IS_NUM(sxx) && !mpq_sgn(sxx->u.q))) {
        st_error(cx, at, "x is constant");
        goto out;
    }
    if (!(slope = eval_binop(cx, IR_DIV, p.s[0], sxx, at))) goto out;
    if (pr) {
        if (!(icpt = eval_num(cx, V_FLOAT)) || !(icpt = eval_num_done(cx, icpt))) goto out;
    } else if (!(icpt = binop_steal(cx, IR_SUB, (EV_INCREF(p.ybar), p.ybar),
                                    eval_binop(cx, IR_MUL, slope, p.xbar, at), at))) {
        goto out;
    }
    if ((r = eval_obj_new(cx, &lr_class, sizeof(lr_data)))) {
        lr_data *d = r->u.obj.data;
        d->slope = slope;
        d->intercept = icpt;
        slope = icpt = NULL;
    }
out:
    eval_decref(cx, slope);
    eval_decref(cx, icpt);
    pair_free(cx, &p);
    return r;
}

/* ---- the normal distribution ------------------------------------------------------------ */

/* How a distribution function meets a NaN or an infinity (x or z = (x - mu) / sigma): the
 * IEEE value CPython's formula gives. */
enum { NF_CDF, NF_SF, NF_PDF };

static val *nonfinite_result(eval_cx *cx, int f, val *z)
{
    if (IS_NAN(z)) return eval_nonfinite(cx, NAN);
    int pos = z->sub == INF_POS;
    val *r = eval_num(cx, V_FLOAT);
    if (!r) return NULL;
    mpq_set_ui(r->u.q, f == NF_PDF ? 0 : (f == NF_CDF) == pos, 1);
    return eval_num_finish(cx, r, 0);
}

/* f at z (a number); pdf divides by sigma. */
static val *norm_at(eval_cx *cx, int f, val *z, val *sigma, const ir_node *at)
{
    if (z->kind == V_INF) return nonfinite_result(cx, f, z);
    val *r;
    if (eval_count(cx, 64, at) < 0 || !(r = eval_num(cx, V_FLOAT))) return NULL;
    int exact = 1;
    cr_code rc;
    if (f == NF_PDF) {
        rc = num_norm_pdf(r->u.q, &exact, z->u.q, sigma->u.q, &cx->nc);
    } else {
        mpq_set(r->u.q, z->u.q);
        if (f == NF_SF) mpq_neg(r->u.q, r->u.q);
        rc = num_norm_cdf(r->u.q, &exact, r->u.q, &cx->nc);
    }
    if (rc != CR_OK) {
        eval_decref(cx, r);
        return eval_raise(cx, rc, at, "math range error");
    }
    return eval_num_finish(cx, r, !exact || ((z->flags | sigma->flags) & VF_INEXACT));
}

/* mu + sigma * Phi^-1(p), 0 < p < 1, both numbers */
static val *norm_ppf(eval_cx *cx, val *p, val *mu, val *sigma, const ir_node *at)
{
    val *r;
    if (eval_count(cx, 256, at) < 0 || !(r = eval_num(cx, V_FLOAT))) return NULL;
    int exact = 1;
    cr_code rc = num_norm_ppf(r->u.q, &exact, p->u.q, mu->u.q, sigma->u.q, &cx->nc);
    if (rc != CR_OK) {
        eval_decref(cx, r);
        return eval_raise(cx, rc, at, "math range error");
    }
    return eval_num_finish(cx, r, !exact || ((p->flags | mu->flags | sigma->flags) & VF_INEXACT));
}

/* NormalDist(mu, sigma): two floats */
typedef struct { val *mu, *sigma; } nd_data;
_Static_assert(sizeof(nd_data) == 2 * sizeof(val *), "drop2 reads two values");

static const eval_class nd_class;

/* A new NormalDist of mu and sigma (new references, stolen; floats already). */
static val *nd_new(eval_cx *cx, val *mu, val *sigma)
{
    val *r = mu && sigma ? eval_obj_new(cx, &nd_class, sizeof(nd_data)) : NULL;
    if (!r) {
        eval_decref(cx, mu);
        eval_decref(cx, sigma);
        return NULL;
    }
    nd_data *d = r->u.obj.data;
    d->mu = mu;
    d->sigma = sigma;
    return r;
}

static val *to_float(eval_cx *cx, val *x, const ir_node *at)
{
    if (x->kind == V_FLOAT || x->kind == V_INF) { EV_INCREF(x); return x; }
    return call_builtin(cx, B_FLOAT, x, at);
}

static int nd_repr(eval_cx *cx, cr_buf *b, val *self, int as_str)
{
    (void)as_str;
    return repr2(cx, b, self, "NormalDist(mu=", ", sigma=");
}

static int nd_eq(eval_cx *cx, val *a, val *b)
{
    if (a->kind != V_OBJ || b->kind != V_OBJ || a->u.obj.cls != b->u.obj.cls) return 0;
    nd_data *x = a->u.obj.data, *y = b->u.obj.data;
    int e = eval_eq(cx, x->mu, y->mu);
    return e == 1 ? eval_eq(cx, x->sigma, y->sigma) : e;
}

static int nd_hash(eval_cx *cx, val *self, uint64_t *h)
{
    nd_data *d = self->u.obj.data;
    uint64_t a, b;
    if (eval_hash(cx, d->mu, &a) < 0 || eval_hash(cx, d->sigma, &b) < 0) return -1;
    *h = a * 1000003u ^ b;
    return 0;
}

static val *nd_attr(eval_cx *cx, val *self, const char *name, const ir_node *at)
{
    nd_data *d = self->u.obj.data;
    if (strcmp(name, "mean") == 0 || strcmp(name, "median") == 0 || strcmp(name, "mode") == 0) {
        EV_INCREF(d->mu);
        return d->mu;
    }
    if (strcmp(name, "stdev") == 0) {
        EV_INCREF(d->sigma);
        return d->sigma;
    }
    if (strcmp(name, "variance") == 0) return eval_binop(cx, IR_MUL, d->sigma, d->sigma, at);
    return NULL;
}

/* sigma == 0 (a decision) */
static int sigma_zero(eval_cx *cx, val *sigma)
{
    return sigma->kind != V_INF && !mpq_sgn(eval_decided(cx, sigma, 0));
}

static val *nd_method(eval_cx *cx, val *self, int id, eval_args *a, const ir_node *at)
{
    static const char *const px[] = { "x", NULL }, *const pp[] = { "p", NULL };
    nd_data *d = self->u.obj.data;
    val *x, *z, *r;
    switch (id) {
    case MT_CDF: case MT_PDF: case MT_ZSCORE: {
        const char *fn = id == MT_CDF ? "cdf" : id == MT_PDF ? "pdf" : "zscore";
        char msg[64];
        snprintf(msg, sizeof msg, "NormalDist.%s", fn);
        if (bind(cx, a, msg, px, 1, 1, B_SELF, &x, at) < 0) return NULL;
        if (sigma_zero(cx, d->sigma)) {
            snprintf(msg, sizeof msg, "%s() not defined when sigma is zero", fn);
            return st_error(cx, at, msg);
        }
        z = binop_steal(cx, IR_DIV, eval_binop(cx, IR_SUB, x, d->mu, at),
                        (EV_INCREF(d->sigma), d->sigma), at);
        if (!z || id == MT_ZSCORE) return z;
        if (d->sigma->kind == V_INF && id == MT_PDF && !IS_NAN(z))
            r = nonfinite_result(cx, NF_PDF, d->sigma);   /* exp(-0) / inf */
        else
            r = norm_at(cx, id == MT_CDF ? NF_CDF : NF_PDF, z, d->sigma, at);
        eval_decref(cx, z);
        return r;
    }
    case MT_INV_CDF:
        if (bind(cx, a, "NormalDist.inv_cdf", pp, 1, 1, B_SELF, &x, at) < 0) return NULL;
        if (!IS_REAL(x))
            return eval_raise(cx, CR_EPY_TYPE, at,
                              "'<=' not supported between instances of '%s' and 'float'",
                              eval_type_name(x));
        if (x->kind == V_INF ? !IS_NAN(x)
                             : (mpq_sgn(eval_decided(cx, x, 0)) <= 0 ||
                                mpq_cmp_ui(eval_decided(cx, x, 0), 1, 1) >= 0))
            return st_error(cx, at, "p must be in the range 0.0 < p < 1.0");
        if (d->sigma->kind == V_INF ? d->sigma->sub != INF_POS
                                    : mpq_sgn(eval_decided(cx, d->sigma, 0)) <= 0)
            return st_error(cx, at, "cdf() not defined when sigma at or below zero");
        if (IS_NAN(x) || d->mu->kind == V_INF || d->sigma->kind == V_INF)
            return eval_nonfinite(cx, NAN);   /* rare: IEEE arithmetic in CPython */
        return norm_ppf(cx, x, d->mu, d->sigma, at);
    case MT_MEAN:   /* a property: d.mean() calls the float */
        return eval_raise(cx, CR_EPY_TYPE, at, "'float' object is not callable");
    default:
        return NULL;
    }
}

static val *nd_binop(eval_cx *cx, int op, val *a, val *b, const ir_node *at)
{
    int left = a->kind == V_OBJ && a->u.obj.cls == &nd_class;
    val *o = left ? a : b, *k = left ? b : a;
    nd_data *d = o->u.obj.data;
    if (k->kind == V_OBJ && k->u.obj.cls == &nd_class) {
        if (op != IR_ADD && op != IR_SUB) return NULL;
        /* X ± Y: mu1 ± mu2, hypot(sigma1, sigma2) */
        nd_data *e = k->u.obj.data;
        val *mu = eval_binop(cx, op, d->mu, e->mu, at), *s2 = NULL, *sg = NULL;
        if (mu && (s2 = binop_steal(cx, IR_ADD, eval_binop(cx, IR_MUL, d->sigma, d->sigma, at),
                                    eval_binop(cx, IR_MUL, e->sigma, e->sigma, at), at)))
            sg = call_builtin(cx, s2->kind == V_INF ? B_FLOAT : M_SQRT, s2, at);
        eval_decref(cx, s2);
        return nd_new(cx, mu, sg);
    }
    if (!IS_REAL(k)) return NULL;
    switch (op) {
    case IR_ADD: case IR_SUB:
        if (!left && op == IR_SUB) {   /* k - X = -(X - k) */
            val *mu = eval_binop(cx, IR_SUB, k, d->mu, at);
            EV_INCREF(d->sigma);
            return nd_new(cx, mu, d->sigma);
        }
        EV_INCREF(d->sigma);
        return nd_new(cx, eval_binop(cx, op, d->mu, k, at), d->sigma);
    case IR_MUL: case IR_DIV: {
        if (!left && op == IR_DIV) return NULL;
        val *mu = eval_binop(cx, op, d->mu, k, at), *ak = NULL, *sg = NULL;
        if (mu && (ak = call_builtin(cx, B_ABS, k, at))) sg = eval_binop(cx, op, d->sigma, ak, at);
        eval_decref(cx, ak);
        return nd_new(cx, mu, sg);
    }
    default:
        return NULL;
    }
}

static val *nd_unary(eval_cx *cx, int op, val *self, const ir_node *at)
{
    nd_data *d = self->u.obj.data;
    val *mu = d->mu;
    if (op == IR_NEG) {
        val *zero = eval_num(cx, V_FLOAT);
        mu = zero ? eval_binop(cx, IR_SUB, (zero = eval_num_done(cx, zero)), d->mu, at) : NULL;
        eval_decref(cx, zero);
    } else {
        EV_INCREF(mu);
    }
    EV_INCREF(d->sigma);
    return nd_new(cx, mu, d->sigma);
}

static const eval_class nd_class = {
    .name = "NormalDist", .drop = drop2, .repr = nd_repr, .eq = nd_eq, .hash = nd_hash,
    .binop = nd_binop, .unary = nd_unary, .attr = nd_attr, .method = nd_method,
};

/* The class object: calling it makes a NormalDist. */
static val *ndc_call(eval_cx *cx, val *self, eval_args *a, const ir_node *at)
{
    (void)self;
    static const char *const params[] = { "mu", "sigma", NULL };
    val *arg[2];
    if (bind(cx, a, "NormalDist.__init__", params, 2, 0, B_SELF, arg, at) < 0) return NULL;
    val *one = NULL, *mu = NULL, *sg;
    if (arg[0]) mu = to_float(cx, arg[0], at);
    else if ((mu = eval_num(cx, V_FLOAT))) mu = eval_num_done(cx, mu);
    if (!mu) return NULL;
    if (!arg[1] && (one = eval_num(cx, V_FLOAT))) {
        mpq_set_ui(one->u.q, 1, 1);
        one = eval_num_done(cx, one);
    }
    sg = arg[1] ? to_float(cx, arg[1], at) : one;
    if (!sg) { eval_decref(cx, mu); return NULL; }
    if (sg->kind == V_INF ? sg->sub == INF_NEG : mpq_sgn(eval_decided(cx, sg, 0)) < 0) {
        eval_decref(cx, mu);
        eval_decref(cx, sg);
        return st_error(cx, at, "sigma must be non-negative");
    }
    return nd_new(cx, mu, sg);
}

static int ndc_repr(eval_cx *cx, cr_buf *b, val *self, int as_str)
{
    (void)self; (void)as_str;
    return eval_put(cx, b, "<class 'statistics.NormalDist'>", 31);
}

static val *ndc_builtin(eval_cx *cx, int bid, val *self, eval_args *a, const ir_node *at)
{
    (void)self; (void)at;
    if (bid != B_ISINSTANCE || a->npos != 2) return NULL;
    val *x = a->pos[0];
    return eval_bool(cx, x->kind == V_OBJ && x->u.obj.cls == &nd_class);
}

static const eval_class ndc_class = {
    .name = "type", .repr = ndc_repr, .call = ndc_call, .builtin = ndc_builtin,
};

val *eval_st_normaldist(eval_cx *cx, const ir_node *at)
{
    (void)at;
    return eval_obj_new(cx, &ndc_class, 0);
}

/* ---- scipy.stats.norm ----------------------------------------------------------------------
 * norm.cdf/sf/pdf/ppf/isf(x, loc=0, scale=1) on scalars, as scipy computes them (ndtr and
 * ndtri are accurate in both tails): a scale that is not positive gives nan, as do ppf's p
 * outside [0, 1]; ppf(0) is -inf and ppf(1) inf. scipy returns numpy.float64 scalars; here
 * they are floats, which print() shows as every numpy does, and repr() (a list of them
 * printed) as numpy 1.x does: 0.5, where numpy 2 shows np.float64(0.5). The sandbox's final
 * value reads a float64 as a float too. */

static int norm_repr(eval_cx *cx, cr_buf *b, val *self, int as_str)
{
    (void)self; (void)as_str;
    static const char s[] = "<scipy.stats._continuous_distns.norm_gen object>";
    return eval_put(cx, b, s, sizeof s - 1);
}

static const char *norm_fn_name(int id)
{
    switch (id) {
    case MT_CDF: return "cdf";
    case MT_SF: return "sf";
    case MT_PDF: return "pdf";
    case MT_PPF: return "ppf";
    case MT_ISF: return "isf";
    default: return NULL;
    }
}

/* norm.<id>(x, loc, scale); loc, scale NULL: 0 and 1 */
static val *norm_fn(eval_cx *cx, int id, val *x, val *loc, val *scale, const ir_node *at)
{
    val *arg[3] = { x, loc, scale }, *zero = NULL, *one = NULL, *r = NULL;
    for (int i = 0; i < 3; i++)
        if (arg[i] && !IS_REAL(arg[i]))
            return eval_raise(cx, CR_EPY_TYPE, at,
                              "%s: scipy.stats.norm takes numbers in-process, not %s",
                              norm_fn_name(id), eval_type_name(arg[i]));
    if (!loc && (zero = eval_num(cx, V_INT))) loc = zero = eval_num_done(cx, zero);
    if (!scale && (one = eval_num(cx, V_INT))) {
        mpq_set_ui(one->u.q, 1, 1);
        scale = one = eval_num_done(cx, one);
    }
    if (!loc || !scale) goto out;
    if (IS_NAN(x) || IS_NAN(loc) || IS_NAN(scale) || scale->kind == V_INF ||
        mpq_sgn(eval_decided(cx, scale, 0)) <= 0) {
        r = eval_nonfinite(cx, NAN);   /* scipy: an invalid scale gives nan */
        goto out;
    }
    if (id == MT_PPF || id == MT_ISF) {
        int c0 = x->kind == V_INF ? (x->sub == INF_POS ? 1 : -1) : mpq_sgn(eval_decided(cx, x, 0));
        int c1 = x->kind == V_INF ? c0 : mpq_cmp_ui(eval_decided(cx, x, 0), 1, 1);
        if (c0 < 0 || c1 > 0) {
            r = eval_nonfinite(cx, NAN);
        } else if (c0 == 0 || c1 == 0) {
            int up = (c1 == 0) == (id == MT_PPF);
            r = eval_nonfinite(cx, loc->kind == V_INF && (loc->sub == INF_POS) != up ? NAN
                                   : up ? INFINITY : -INFINITY);
        } else if (loc->kind == V_INF) {
            r = eval_nonfinite(cx, loc->sub == INF_POS ? INFINITY : -INFINITY);
        } else if (id == MT_ISF) {
            val *q = binop_steal(cx, IR_SUB, eval_int_si(cx, 1), (EV_INCREF(x), x), at);
            if (q) r = norm_ppf(cx, q, loc, scale, at);
            eval_decref(cx, q);
        } else {
            r = norm_ppf(cx, x, loc, scale, at);
        }
        goto out;
    }
    val *z = binop_steal(cx, IR_DIV, eval_binop(cx, IR_SUB, x, loc, at), (EV_INCREF(scale), scale), at);
    if (z) r = norm_at(cx, id == MT_CDF ? NF_CDF : id == MT_SF ? NF_SF : NF_PDF, z, scale, at);
    eval_decref(cx, z);
out:
    eval_decref(cx, zero);
    eval_decref(cx, one);
    return r;
}

/* norm.mean/std/var(loc, scale): loc, scale and scale**2 as floats, nan for a scale that is
 * not positive (loc, scale NULL: 0 and 1) */
static val *norm_moment(eval_cx *cx, int id, val *loc, val *s, const ir_node *at)
{
    val *one = NULL, *r;
    if ((loc && !IS_REAL(loc)) || (s && !IS_REAL(s)))
        return eval_raise(cx, CR_EPY_TYPE, at, "scipy.stats.norm takes numbers in-process, not %s",
                          eval_type_name(loc && !IS_REAL(loc) ? loc : s));
    if (!s && !(s = one = eval_int_si(cx, 1))) return NULL;
    if ((loc && IS_NAN(loc)) || IS_NAN(s) || s->kind == V_INF || mpq_sgn(eval_decided(cx, s, 0)) <= 0)
        r = eval_nonfinite(cx, NAN);
    else if (id == MT_VAR)
        r = binop_steal(cx, IR_MUL, to_float(cx, s, at), (EV_INCREF(s), s), at);
    else if (id == MT_STD || loc)
        r = to_float(cx, id == MT_MEAN ? loc : s, at);
    else if ((r = eval_num(cx, V_FLOAT)))
        r = eval_num_done(cx, r);   /* mean() of the standard normal: 0.0 */
    eval_decref(cx, one);
    return r;
}

static const char *const P_NX[] = { "x", "loc", "scale", NULL };
static const char *const P_NQ[] = { "q", "loc", "scale", NULL };

static val *norm_method(eval_cx *cx, val *self, int id, eval_args *a, const ir_node *at)
{
    (void)self;
    const char *fn = norm_fn_name(id);
    val *arg[3];
    if (!fn) {
        static const char *const pm[] = { "loc", "scale", NULL };
        if (id != MT_MEAN && id != MT_STD && id != MT_VAR) return NULL;
        if (bind(cx, a, eval_method_name(id), pm, 2, 0, 0, arg, at) < 0) return NULL;
        return norm_moment(cx, id, arg[0], arg[1], at);
    }
    if (bind(cx, a, fn, id == MT_PPF || id == MT_ISF ? P_NQ : P_NX, 3, 1, 0, arg, at) < 0)
        return NULL;
    return norm_fn(cx, id, arg[0], arg[1], arg[2], at);
}

/* A frozen distribution, norm(loc, scale): the same functions of x alone. */
typedef struct { val *loc, *scale; } frozen_data;
_Static_assert(sizeof(frozen_data) == 2 * sizeof(val *), "drop2 reads two values");

static int frozen_repr(eval_cx *cx, cr_buf *b, val *self, int as_str)
{
    (void)self; (void)as_str;
    static const char s[] = "<scipy.stats._distn_infrastructure.rv_continuous_frozen object>";
    return eval_put(cx, b, s, sizeof s - 1);
}

static val *frozen_method(eval_cx *cx, val *self, int id, eval_args *a, const ir_node *at)
{
    frozen_data *d = self->u.obj.data;
    const char *fn = norm_fn_name(id);
    char name[32];
    val *x;
    if (fn) {
        snprintf(name, sizeof name, "rv_frozen.%s", fn);
        static const char *const px[] = { "x", NULL }, *const pq[] = { "q", NULL };
        if (bind(cx, a, name, id == MT_PPF || id == MT_ISF ? pq : px, 1, 1, B_SELF, &x, at) < 0)
            return NULL;
        return norm_fn(cx, id, x, d->loc, d->scale, at);
    }
    if (id != MT_MEAN && id != MT_STD && id != MT_VAR) return NULL;
    static const char *const none[] = { NULL };
    snprintf(name, sizeof name, "rv_frozen.%s", eval_method_name(id));
    if (bind(cx, a, name, none, 0, 0, B_SELF, &x, at) < 0) return NULL;
    return norm_moment(cx, id, d->loc, d->scale, at);
}

static const eval_class frozen_class = {
    .name = "rv_continuous_frozen", .drop = drop2, .repr = frozen_repr,
    .method = frozen_method,
};

/* norm(loc=0, scale=1) */
static val *norm_call(eval_cx *cx, val *self, eval_args *a, const ir_node *at)
{
    (void)self;
    static const char *const params[] = { "loc", "scale", NULL };
    val *arg[2], *r;
    if (bind(cx, a, "freeze", params, 2, 0, 0, arg, at) < 0) return NULL;
    for (int i = 0; i < 2; i++)
        if (arg[i] && !IS_REAL(arg[i]))
            return eval_raise(cx, CR_EPY_TYPE, at,
                              "scipy.stats.norm takes numbers in-process, not %s",
                              eval_type_name(arg[i]));
    if (!(r = eval_obj_new(cx, &frozen_class, sizeof(frozen_data)))) return NULL;
    frozen_data *d = r->u.obj.data;
    d->loc = arg[0] ? (EV_INCREF(arg[0]), arg[0]) : eval_int_si(cx, 0);
    d->scale = arg[1] ? (EV_INCREF(arg[1]), arg[1]) : eval_int_si(cx, 1);
    if (!d->loc || !d->scale) {
        eval_decref(cx, r);
        return NULL;
    }
    return r;
}

static const eval_class norm_class = {
    .name = "norm_gen", .repr = norm_repr, .method = norm_method, .call = norm_call,
};

val *eval_st_norm(eval_cx *cx, const ir_node *at)
{
    (void)at;
    return eval_obj_new(cx, &norm_class, 0);
}
