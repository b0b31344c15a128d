/* evaluator/lib/mod_math.c: the math module (subset.def's MOD_MATH rows): its functions on exact
 * rationals and floats through num.h, and its constants. */
#include "evaluator/lib/lib.h"

#include <math.h>

static int need_real(eval_cx *cx, val *x, const ir_node *at)
{
    if (IS_NUM(x)) return 0;
    if (x->kind == V_INF)
        eval_raise(cx, CR_EPY_VALUE, at,
                   "infinity has no exact value: math.inf can only be compared");
    else
        eval_raise(cx, CR_EPY_TYPE, at, "must be real number, not %s", eval_type_name(x));
    return -1;
}

static val *math_result(eval_cx *cx, cr_code rc, val *r, int exact, val *x, const ir_node *at)
{
    if (rc != CR_OK) {
        eval_decref(cx, r);
        if (rc == CR_EPY_OVERFLOW) return eval_raise(cx, rc, at, "math range error");
        if (rc == CR_ELIMIT)
            return eval_int_limit(cx, at);
        if (rc == CR_EPY_ZERODIV) rc = CR_EPY_VALUE;
        return eval_raise(cx, rc, at, "math domain error");
    }
    return eval_num_finish(cx, r, !exact || (x && (x->flags & VF_INEXACT)));
}

typedef cr_code (*unary_fn)(mpq_t, int *, const mpq_t, const num_ctx *);

static unary_fn unary_of(int id)
{
    switch (id) {
    case M_SQRT: return num_sqrt;
    case M_EXP: return num_exp;
    case M_LOG10: return num_log10;
    case M_LOG2: return num_log2;
    case M_ERF: return num_erf;
    case M_ERFC: return num_erfc;
    case M_SIN: return num_sin;
    case M_COS: return num_cos;
    case M_TAN: return num_tan;
    case M_ATAN: return num_atan;
    default: return NULL;
    }
}

/* num_fn1()'s function for a row, or -1 */
static int fn1_of(int id)
{
    switch (id) {
    case M_ASIN: return NUM_ASIN;
    case M_ACOS: return NUM_ACOS;
    case M_SINH: return NUM_SINH;
    case M_COSH: return NUM_COSH;
    case M_TANH: return NUM_TANH;
    case M_ASINH: return NUM_ASINH;
    case M_ACOSH: return NUM_ACOSH;
    case M_ATANH: return NUM_ATANH;
    case M_LOG1P: return NUM_LOG1P;
    case M_EXPM1: return NUM_EXPM1;
    case M_CBRT: return NUM_CBRT;
    case M_EXP2: return NUM_EXP2;
    case M_GAMMA: return NUM_GAMMA;
    case M_LGAMMA: return NUM_LGAMMA;
    case M_DEGREES: return NUM_DEGREES;
    case M_RADIANS: return NUM_RADIANS;
    default: return -1;
    }
}

/* The sign bit of a real (-0.0's included; a NaN's taken as clear). */
static int sign_of(const val *x)
{
    if (x->kind == V_INF) return x->sub == INF_NEG;
    return mpq_sgn(x->u.q) < 0 || (x->flags & VF_NEGZ);
}

/* A double CPython's math gives as itself (nextafter, ulp, pi), exactly, marked as a double
 * (it prints as CPython's repr) and inexact: it stands for no exact quantity. */
static val *double_result(eval_cx *cx, double d)
{
    if (isnan(d) || isinf(d)) return eval_nonfinite(cx, d);
    val *r = eval_num(cx, V_FLOAT);
    if (!r) return NULL;
    mpq_set_d(r->u.q, d);
    if (d != 0) r->flags |= VF_DOUBLE;
    else if (signbit(d)) r->flags |= VF_NEGZ;
    return eval_num_finish(cx, r, d != 0);
}

/* x as CPython's math holds it, a double; an int past its range: OverflowError. */
static int double_arg(eval_cx *cx, val *x, double *d, const ir_node *at)
{
    if (x->kind == V_INF) return eval_to_double(cx, x, d, at);
    if (need_real(cx, x, at) < 0) return -1;
    if (eval_int_past_double(x)) {
        eval_raise(cx, CR_EPY_OVERFLOW, at, "int too large to convert to float");
        return -1;
    }
    *d = num_get_double(eval_decided(cx, x, 0));
    if (x->flags & VF_NEGZ) *d = -0.0;
    return 0;
}

static int int_arg(eval_cx *cx, val *x, const ir_node *at)
{
    if (x->kind == V_INT || x->kind == V_BOOL) return 0;
    eval_raise(cx, CR_EPY_TYPE, at, "'%s' object cannot be interpreted as an integer",
               eval_type_name(x));
    return -1;
}

static val *math_comb_perm(eval_cx *cx, int id, eval_args *a, const ir_node *at)
{
    val *n = a->pos[0], *k = a->npos > 1 ? a->pos[1] : NULL;
    if (int_arg(cx, n, at) < 0 || (k && int_arg(cx, k, at) < 0)) return NULL;
    if (mpq_sgn(n->u.q) < 0)
        return eval_raise(cx, CR_EPY_VALUE, at, k ? "n must be a non-negative integer"
                                                  : "factorial() not defined for negative values");
    if (k && mpq_sgn(k->u.q) < 0)
        return eval_raise(cx, CR_EPY_VALUE, at, "k must be a non-negative integer");
    val *r = eval_num(cx, V_INT);
    if (!r) return NULL;
    cr_code rc;
    if (!k) rc = num_factorial(mpq_numref(r->u.q), mpq_numref(n->u.q), &cx->nc);
    else if (id == M_COMB)
        rc = num_comb(mpq_numref(r->u.q), mpq_numref(n->u.q), mpq_numref(k->u.q), &cx->nc);
    else rc = num_perm(mpq_numref(r->u.q), mpq_numref(n->u.q), mpq_numref(k->u.q), &cx->nc);
    return math_result(cx, rc, r, 1, NULL, at);
}

/* A one-argument math function of inf, -inf or nan, through the C library as CPython's
 * math_1: a NaN from a non-NaN argument is a domain error. The finite results (exp(-inf),
 * erf(inf), erfc(-inf)) are 0, 1 or 2, exact; atan(±inf) is ±pi/2 to the precision. */
static val *math_nonfinite(eval_cx *cx, int id, val *x, const ir_node *at)
{
    double d, r;
    eval_to_double(cx, x, &d, at);   /* cannot fail on a non-finite value */
    switch (id) {
    case M_SQRT: r = sqrt(d); break;
    case M_EXP: r = exp(d); break;
    case M_LOG: r = d < 0 ? NAN : log(d); break;
    case M_LOG10: r = d < 0 ? NAN : log10(d); break;
    case M_LOG2: r = d < 0 ? NAN : log2(d); break;
    case M_ERF: r = erf(d); break;
    case M_ERFC: r = erfc(d); break;
    case M_ATAN: r = atan(d); break;
    case M_FABS: r = fabs(d); break;
    case M_ASIN: case M_ACOS: case M_ATANH: r = NAN; break;
    case M_SINH: r = sinh(d); break;
    case M_COSH: r = cosh(d); break;
    case M_TANH: r = tanh(d); break;
    case M_ASINH: r = asinh(d); break;
    case M_ACOSH: r = acosh(d); break;
    case M_LOG1P: r = log1p(d); break;
    case M_EXPM1: r = expm1(d); break;
    case M_CBRT: r = cbrt(d); break;
    case M_EXP2: r = exp2(d); break;
    case M_GAMMA: r = tgamma(d); break;
    case M_LGAMMA: r = lgamma(d); break;
    case M_DEGREES: case M_RADIANS: r = d; break;
    default: r = NAN; break;   /* sin, cos, tan */
    }
    if (isnan(r) && !isnan(d)) return eval_raise(cx, CR_EPY_VALUE, at, "math domain error");
    if (isnan(r) || isinf(r)) return eval_nonfinite(cx, r);
    val *v = eval_num(cx, V_FLOAT);
    if (!v) return NULL;
    if (id != M_ATAN) {
        mpq_set_d(v->u.q, r);
        return eval_num_finish(cx, v, 0);
    }
    num_pi(v->u.q, &cx->nc);
    mpq_div_2exp(v->u.q, v->u.q, 1);
    if (r < 0) mpq_neg(v->u.q, v->u.q);
    return eval_num_finish(cx, v, 1);
}

/* math.log(x, base) with an infinite or NaN operand: log(x) / log(base) as CPython. Beside
 * an infinity or NaN only the sign of a finite log matters, so it stands for the log: -1, 0
 * (log(1): a division by zero) or 1; a finite result (finite / inf) is 0. */
static val *log_base_nonfinite(eval_cx *cx, val *x, val *base, const ir_node *at)
{
    double d[2];
    val *v[2] = { x, base };
    for (int i = 0; i < 2; i++) {
        if (v[i]->kind == V_INF) {
            if (eval_to_double(cx, v[i], &d[i], at) < 0) return NULL;
            if (d[i] < 0) return eval_raise(cx, CR_EPY_VALUE, at, "math domain error");
            continue;
        }
        mpq_srcptr q = eval_decided(cx, v[i], 0);
        if (mpq_sgn(q) <= 0) return eval_raise(cx, CR_EPY_VALUE, at, "math domain error");
        int c = mpq_cmp_ui(q, 1, 1);
        d[i] = c < 0 ? -1 : c > 0;
    }
    if (d[1] == 0) return eval_raise(cx, CR_EPY_ZERODIV, at, "float division by zero");
    double r = d[0] / d[1];
    if (isnan(r) || isinf(r)) return eval_nonfinite(cx, r);
    val *z = eval_num(cx, V_FLOAT);
    return z ? eval_num_finish(cx, z, 0) : NULL;
}

/* An odd function's zero result from -0.0 is -0.0, as C's (sin, asin, expm1, ...). */
static val *odd_zero(val *r, val *x)
{
    if (r && r->kind == V_FLOAT && !mpq_sgn(r->u.q) && (x->flags & VF_NEGZ)) r->flags |= VF_NEGZ;
    return r;
}

static val *math_call(eval_cx *cx, int id, eval_args *a, const ir_node *at)
{
    const char *name = eval_builtin_name(id);
    val *r, *x;
    cr_code rc = CR_OK;
    int exact = 1;
    unary_fn fn = unary_of(id);
    if (id == M_ISNAN || id == M_ISINF || id == M_ISFINITE) {
        double d;
        x = a->pos[0];
        if (x->kind != V_INF && need_real(cx, x, at) < 0) return NULL;
        if (eval_to_double(cx, x, &d, at) < 0) return NULL;
        return eval_bool(cx, id == M_ISNAN ? isnan(d) : id == M_ISINF ? isinf(d) : isfinite(d));
    }
    int f1 = fn1_of(id);
    if ((fn || f1 >= 0 || id == M_FABS || (id == M_LOG && a->npos == 1)) && a->npos == 1 && !a->nkw &&
        a->pos[0]->kind == V_INF)
        return math_nonfinite(cx, id, a->pos[0], at);
    if (id == M_POW && a->npos == 2 && !a->nkw &&
        (a->pos[0]->kind == V_INF || a->pos[1]->kind == V_INF) &&
        IS_REAL(a->pos[0]) && IS_REAL(a->pos[1]))
        return eval_binop(cx, IR_POW, a->pos[0], a->pos[1], at);   /* float pow's rules */
    if (fn) {
        if (need_real(cx, a->pos[0], at) < 0)
            return NULL;
        x = a->pos[0];
        /* CPython takes the double of x; only log10 and log2 read a big int themselves */
        if (id != M_LOG10 && id != M_LOG2 && eval_int_past_double(x))
            return eval_raise(cx, CR_EPY_OVERFLOW, at, "int too large to convert to float");
        if (eval_count(cx, 16, at) < 0 || !(r = eval_num(cx, V_FLOAT))) return NULL;
        rc = fn(r->u.q, &exact, x->u.q, &cx->nc);
        return odd_zero(math_result(cx, rc, r, exact, x, at), x);
    }
    if (f1 >= 0) {
        x = a->pos[0];
        if (need_real(cx, x, at) < 0) return NULL;
        if (eval_int_past_double(x))
            return eval_raise(cx, CR_EPY_OVERFLOW, at, "int too large to convert to float");
        if (eval_count(cx, 16, at) < 0 || !(r = eval_num(cx, V_FLOAT))) return NULL;
        rc = num_fn1((num_fn)f1, r->u.q, &exact, x->u.q, &cx->nc);
        if (rc == CR_EPY_OVERFLOW && (id == M_DEGREES || id == M_RADIANS)) {
            eval_decref(cx, r);   /* CPython multiplies: inf, no error */
            cx->inexact_decided = 1;
            return eval_nonfinite(cx, sign_of(x) ? -INFINITY : INFINITY);
        }
        r = odd_zero(math_result(cx, rc, r, exact, x, at), x);
        if (r && id == M_GAMMA && !mpq_sgn(r->u.q) && mpq_sgn(x->u.q) < 0) {
            /* an underflow keeps gamma's sign: negative where floor(x) is odd */
            mpz_t fl;
            mpz_init(fl);
            num_floor(fl, x->u.q);
            if (mpz_odd_p(fl)) r->flags |= VF_NEGZ;
            mpz_clear(fl);
        }
        return r;
    }
    switch (id) {
    case M_LOG:
        if (a->npos == 2 && !a->nkw && IS_REAL(a->pos[0]) && IS_REAL(a->pos[1]) &&
            (a->pos[0]->kind == V_INF || a->pos[1]->kind == V_INF))
            return log_base_nonfinite(cx, a->pos[0], a->pos[1], at);
        if (a->npos < 1 || a->npos > 2)   /* CPython's words of its own (the row: AR_OWN) */
            return eval_raise(cx, CR_EPY_TYPE, at, "math.log requires 1 to 2 arguments");
        if (need_real(cx, a->pos[0], at) < 0 ||
            (a->npos > 1 && need_real(cx, a->pos[1], at) < 0))
            return NULL;
        x = a->pos[0];
        if (eval_count(cx, 16, at) < 0 || !(r = eval_num(cx, V_FLOAT))) return NULL;
        if (a->npos > 1) rc = num_log_base(r->u.q, &exact, x->u.q, a->pos[1]->u.q, &cx->nc);
        else rc = num_log(r->u.q, &exact, x->u.q, &cx->nc);
        if (a->npos > 1 && (a->pos[1]->flags & VF_INEXACT)) exact = 0;
        return math_result(cx, rc, r, exact, x, at);
    case M_POW:
        if (need_real(cx, a->pos[0], at) < 0 ||
            need_real(cx, a->pos[1], at) < 0)
            return NULL;
        if (!(r = eval_num(cx, V_FLOAT))) return NULL;
        rc = num_pow(r->u.q, &exact, a->pos[0]->u.q, a->pos[1]->u.q, 1, &cx->nc);
        if (rc == CR_ELIMIT) rc = CR_EPY_OVERFLOW;
        if ((a->pos[0]->flags | a->pos[1]->flags) & VF_INEXACT) exact = 0;
        return math_result(cx, rc, r, exact, NULL, at);
    case M_FABS:
        if (need_real(cx, a->pos[0], at) < 0)
            return NULL;
        if (!(r = eval_num(cx, V_FLOAT))) return NULL;
        mpq_abs(r->u.q, a->pos[0]->u.q);
        return math_result(cx, CR_OK, r, 1, a->pos[0], at);
    case M_FLOOR: case M_CEIL: case M_TRUNC:
        if (a->pos[0]->kind == V_INF) return eval_inf_error(cx, a->pos[0], at);
        if (need_real(cx, a->pos[0], at) < 0 || !(r = eval_num(cx, V_INT))) return NULL;
        x = a->pos[0];
        mpq_srcptr xq = eval_decided(cx, x, 0);
        if (id == M_FLOOR) num_floor(mpq_numref(r->u.q), xq);
        else if (id == M_CEIL) num_ceil(mpq_numref(r->u.q), xq);
        else num_trunc(mpq_numref(r->u.q), xq);
        mpz_set_ui(mpq_denref(r->u.q), 1);
        return math_result(cx, CR_OK, r, 1, x, at);
    case M_FACTORIAL:
        if (int_arg(cx, a->pos[0], at) < 0) return NULL;
        return math_comb_perm(cx, M_PERM, a, at);
    case M_COMB: case M_PERM:
        return math_comb_perm(cx, id, a, at);
    case M_ISCLOSE: {
        val *p = a->pos[0], *q = a->pos[1];
        val *rt = eval_kwarg(a, "rel_tol"), *at_ = eval_kwarg(a, "abs_tol");
        if (p->kind == V_INF || q->kind == V_INF)
            return eval_bool(cx, p->kind == V_INF && q->kind == V_INF && p->sub == q->sub &&
                                 !IS_NAN(p));
        if (need_real(cx, p, at) < 0 || need_real(cx, q, at) < 0 ||
            (rt && need_real(cx, rt, at) < 0) || (at_ && need_real(cx, at_, at) < 0))
            return NULL;
        if ((rt && mpq_sgn(rt->u.q) < 0) || (at_ && mpq_sgn(at_->u.q) < 0))
            return eval_raise(cx, CR_EPY_VALUE, at, "tolerances must be non-negative");
        mpq_t d, m, t;
        mpq_inits(d, m, t, NULL);
        mpq_sub(d, p->u.q, q->u.q);
        mpq_abs(d, d);
        mpq_abs(m, p->u.q);
        mpq_abs(t, q->u.q);
        if (mpq_cmp(t, m) > 0) mpq_set(m, t);
        if (rt) mpq_mul(m, m, rt->u.q);
        else { mpq_set_ui(t, 1, 1000000000); mpq_mul(m, m, t); }
        if (at_ && mpq_cmp(at_->u.q, m) > 0) mpq_set(m, at_->u.q);
        int close = mpq_cmp(d, m) <= 0;
        mpq_clears(d, m, t, NULL);
        return eval_bool(cx, close);
    }
    case M_ATAN2: {
        val *y = a->pos[0];
        x = a->pos[1];
        double dy, dx;
        if (y->kind == V_INF || x->kind == V_INF) {   /* C's atan2: a multiple of pi/4 */
            if (double_arg(cx, y, &dy, at) < 0 || double_arg(cx, x, &dx, at) < 0) return NULL;
            double t = atan2(dy, dx);
            if (isnan(t) || t == 0) return double_result(cx, t);
            if (!(r = eval_num(cx, V_FLOAT))) return NULL;
            num_pi(r->u.q, &cx->nc);
            mpq_t m;
            mpq_init(m);
            mpq_set_si(m, (long)lround(t / (M_PI / 4)), 4);
            mpq_mul(r->u.q, r->u.q, m);
            mpq_clear(m);
            return eval_num_finish(cx, r, 1);
        }
        if (need_real(cx, y, at) < 0 || need_real(cx, x, at) < 0) return NULL;
        if (eval_count(cx, 16, at) < 0 || !(r = eval_num(cx, V_FLOAT))) return NULL;
        rc = num_atan2(r->u.q, &exact, y->u.q, x->u.q, &cx->nc);
        if ((y->flags | x->flags) & VF_INEXACT) exact = 0;
        r = math_result(cx, rc, r, exact, NULL, at);
        /* atan2(+-0, x >= 0) is +-0; atan2(+-0, -0.0) is +-pi */
        if (r && !mpq_sgn(y->u.q) && (x->flags & VF_NEGZ) && r->kind == V_FLOAT) {
            num_pi(r->u.q, &cx->nc);
            r->flags |= VF_INEXACT;
        }
        if (r && sign_of(y) && r->kind == V_FLOAT && mpq_sgn(r->u.q) > 0) mpq_neg(r->u.q, r->u.q);
        return odd_zero(r, y);
    }
    case M_COPYSIGN: {
        x = a->pos[0];
        val *y = a->pos[1];
        if (!IS_REAL(x)) return need_real(cx, x, at) < 0 ? NULL : NULL;
        if (!IS_REAL(y)) return need_real(cx, y, at) < 0 ? NULL : NULL;
        int neg = sign_of(y);
        if (x->kind == V_INF)
            return eval_nonfinite(cx, IS_NAN(x) ? NAN : neg ? -INFINITY : INFINITY);
        if (eval_int_past_double(x))
            return eval_raise(cx, CR_EPY_OVERFLOW, at, "int too large to convert to float");
        if (!(r = eval_num(cx, V_FLOAT))) return NULL;
        mpq_abs(r->u.q, x->u.q);
        if (neg) mpq_neg(r->u.q, r->u.q);
        if (neg && !mpq_sgn(r->u.q)) r->flags |= VF_NEGZ;
        return math_result(cx, CR_OK, r, 1, x, at);
    }
    case M_NEXTAFTER: case M_ULP: {
        double d, e = 0;
        if (double_arg(cx, a->pos[0], &d, at) < 0 ||
            (id == M_NEXTAFTER && double_arg(cx, a->pos[1], &e, at) < 0))
            return NULL;
        if (id == M_NEXTAFTER) return double_result(cx, nextafter(d, e));
        /* CPython's math_ulp */
        if (isnan(d) || isinf(d)) return double_result(cx, fabs(d));
        d = fabs(d);
        double n = nextafter(d, INFINITY);
        return double_result(cx, isinf(n) ? d - nextafter(d, 0) : n - d);
    }
    case M_FSUM: {
        val *l = eval_items_of(cx, a->pos[0], at);
        if (!l) return NULL;
        /* a float sum through `+`: exact while small, bounded (NUM_FLOAT_BITS) and charged
         * by size when the partial sums grow */
        if (!(r = eval_num(cx, V_FLOAT))) { eval_decref(cx, l); return NULL; }
        double special = 0, infs = 0;   /* CPython's sums of the non-finite items */
        for (size_t i = 0; i < l->u.seq.len && r; i++) {
            x = l->u.seq.it[i];
            if (x->kind == V_INF) {
                double d;
                eval_to_double(cx, x, &d, at);
                special += d;
                infs += isinf(d) ? d : 0;
                continue;
            }
            if (need_real(cx, x, at) < 0 || eval_count(cx, 1, at) < 0) {
                eval_decref(cx, r);
                r = NULL;
                break;
            }
            val *n = eval_binop(cx, IR_ADD, r, x, at);
            eval_decref(cx, r);
            r = n;
        }
        eval_decref(cx, l);
        if (r && special != 0) {   /* NaN too */
            eval_decref(cx, r);
            if (isnan(infs)) return eval_raise(cx, CR_EPY_VALUE, at, "-inf + inf in fsum");
            return eval_nonfinite(cx, special);
        }
        return r;
    }
    case M_PROD: {
        val *acc = eval_kwarg(a, "start");
        if (acc) EV_INCREF(acc);
        else if (!(acc = eval_int_si(cx, 1))) return NULL;
        val *l = eval_items_of(cx, a->pos[0], at);
        if (!l) { eval_decref(cx, acc); return NULL; }
        for (size_t i = 0; i < l->u.seq.len && acc; i++) {
            val *n = eval_binop(cx, IR_MUL, acc, l->u.seq.it[i], at);
            eval_decref(cx, acc);
            acc = n;
        }
        eval_decref(cx, l);
        return acc;
    }
    default:
        return eval_raise(cx, CR_EINTERNAL, at, "math.%s is not implemented", name);
    }
}

/* math.pi, e and tau are doubles in CPython, and a program computes with those: tan(pi / 2)
 * is 1.633123935319537e+16 because pi is not pi. */
val *eval_math_pi(eval_cx *cx, const ir_node *at) { (void)at; return double_result(cx, M_PI); }
val *eval_math_e(eval_cx *cx, const ir_node *at) { (void)at; return double_result(cx, M_E); }
val *eval_math_tau(eval_cx *cx, const ir_node *at) { (void)at; return double_result(cx, 2 * M_PI); }
val *eval_math_inf(eval_cx *cx, const ir_node *at) { (void)at; return eval_nonfinite(cx, INFINITY); }
val *eval_math_nan(eval_cx *cx, const ir_node *at) { (void)at; return eval_nonfinite(cx, NAN); }

/* math's functions take an object that has a float (a Decimal) as CPython's do, through
 * float() of it (the object's builtin hook); other arguments pass as they are. */
static val *math_call_objs(eval_cx *cx, int id, eval_args *a, const ir_node *at)
{
    val *conv[4] = { 0 }, *r = NULL;
    size_t n = a->npos <= 4 ? a->npos : 0;
    int any = 0;
    for (size_t i = 0; i < n; i++) {
        val *x = a->pos[i];
        if (x->kind != V_OBJ || !x->u.obj.cls->builtin) continue;
        eval_args one = { .pos = &a->pos[i], .npos = 1 };
        conv[i] = x->u.obj.cls->builtin(cx, B_FLOAT, x, &one, at);
        if (cx->err.code != CR_OK) goto out;
        any |= conv[i] != NULL;
    }
    if (!any) return math_call(cx, id, a, at);
    val *pos[4];
    for (size_t i = 0; i < n; i++) pos[i] = conv[i] ? conv[i] : a->pos[i];
    eval_args b = *a;
    b.pos = pos;
    r = math_call(cx, id, &b, at);
out:
    for (size_t i = 0; i < n; i++) eval_decref(cx, conv[i]);
    return r;
}

#define IMPL(name) val *name(eval_cx *cx, eval_args *a, const ir_node *at)

/* math's functions: math_call_objs on the row's id */
#define MATH(name, id) IMPL(eval_m_##name) { return math_call_objs(cx, id, a, at); }
MATH(sqrt, M_SQRT) MATH(exp, M_EXP) MATH(log, M_LOG) MATH(log10, M_LOG10) MATH(log2, M_LOG2)
MATH(pow, M_POW) MATH(fabs, M_FABS) MATH(floor, M_FLOOR) MATH(ceil, M_CEIL)
MATH(trunc, M_TRUNC) MATH(erf, M_ERF) MATH(erfc, M_ERFC) MATH(factorial, M_FACTORIAL)
MATH(comb, M_COMB) MATH(perm, M_PERM) MATH(isclose, M_ISCLOSE) MATH(fsum, M_FSUM)
MATH(prod, M_PROD) MATH(sin, M_SIN) MATH(cos, M_COS) MATH(tan, M_TAN) MATH(atan, M_ATAN)
MATH(isnan, M_ISNAN) MATH(isinf, M_ISINF) MATH(isfinite, M_ISFINITE)
MATH(asin, M_ASIN) MATH(acos, M_ACOS) MATH(sinh, M_SINH) MATH(cosh, M_COSH) MATH(tanh, M_TANH) MATH(asinh, M_ASINH) MATH(acosh, M_ACOSH) MATH(atanh, M_ATANH) MATH(log1p, M_LOG1P) MATH(expm1, M_EXPM1) MATH(cbrt, M_CBRT) MATH(exp2, M_EXP2) MATH(gamma, M_GAMMA) MATH(lgamma, M_LGAMMA) MATH(degrees, M_DEGREES) MATH(radians, M_RADIANS) MATH(ulp, M_ULP) MATH(atan2, M_ATAN2) MATH(copysign, M_COPYSIGN) MATH(nextafter, M_NEXTAFTER)
#undef MATH

#undef IMPL
