/* evaluator/value/arith.c: the operators on values (CPython's abstract.c): numbers exactly,
 * infinities and NaN as IEEE doubles, sequences and sets, a module object's own operators;
 * o[k] on a value. */
#include "evaluator/value/value.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* `inplace`: the augmented form, which CPython names "-=" (and "**=", not "** or pow()=");
 * otherwise ir/ops.def's CPython spelling. */
static val *unsupported(eval_cx *cx, int op, val *a, val *b, int inplace, const ir_node *at)
{
    return eval_raise(cx, CR_EPY_TYPE, at, "unsupported operand type(s) for %s%s: '%s' and '%s'",
                      inplace ? ir_binop_src(op) : ir_binop_py(op), inplace ? "=" : "",
                      eval_type_name(a), eval_type_name(b));
}

/* The operators sets (| & - ^) and dicts (|) have. */
static int set_op(int op, const val *a, const val *b)
{
    if (a->kind != b->kind) return 0;
    if (a->kind == V_DICT) return op == IR_BITOR;
    return a->kind == V_SET && (op == IR_BITOR || op == IR_BITAND || op == IR_SUB || op == IR_BITXOR);
}

static uint64_t bits_of(const val *v)
{
    return mpz_sizeinbase(mpq_numref(v->u.q), 2) + mpz_sizeinbase(mpq_denref(v->u.q), 2) - 1;
}

static size_t limbs_of(const val *v)
{
    return mpz_size(mpq_numref(v->u.q)) + mpz_size(mpq_denref(v->u.q));
}

/* Large operands cost more than one step. Arithmetic on fractions (products and gcds)
 * grows about quadratically with the size, so an operation on w limbs counts w*w/128 steps
 * once past 32 limbs; on integers GMP is near linear, so w/64. Floats are rounded past
 * float_bits, so their operations cost at most ~128 steps at the default precision, while
 * fractions of huge ints meet the operation budget in well under a second and 2 ** 600000
 * stays cheap. */
static int charge(eval_cx *cx, int op, const val *a, const val *b, const ir_node *at)
{
    uint64_t w = limbs_of(a) + limbs_of(b);
    if (op == IR_POW && mpz_cmp_ui(mpq_denref(b->u.q), 1) == 0) {
        uint64_t e = mpz_fits_ulong_p(mpq_numref(b->u.q)) ? mpz_get_ui(mpq_numref(b->u.q))
                     : UINT64_MAX;
        if (mpz_sgn(mpq_numref(b->u.q)) < 0) {
            mpz_srcptr n = mpq_numref(b->u.q);
            e = mpz_cmpabs_ui(n, 1u << 30) > 0 ? UINT64_MAX : (uint64_t)-mpz_get_si(n);
        }
        /* a float result past float_bits is computed by MPFR at the working precision
         * instead (num_pow): its cost is that of reading a, not of the exact power */
        int fr = a->kind == V_FLOAT || b->kind == V_FLOAT || mpz_sgn(mpq_numref(b->u.q)) < 0;
        uint64_t cap = fr ? cx->nc.float_bits / GMP_NUMB_BITS + limbs_of(a) + 2
                          : cx->nc.max_bits / GMP_NUMB_BITS * 2 + 2;
        w = limbs_of(a) > cap / (e ? e : 1) ? cap : limbs_of(a) * (e ? e : 1);
    }
    if (w <= 32) return 0;
    int integers = mpz_cmp_ui(mpq_denref(a->u.q), 1) == 0 && mpz_cmp_ui(mpq_denref(b->u.q), 1) == 0;
    return eval_count(cx, integers ? w / 64 : w * w / 128, at);
}

/* Whether a + b or a - b (r), with an inexact operand, is what two values that print and
 * compare equal leave: only their guard digits, noise that exact math would not have
 * (math.sqrt(2) ** 2 - 2 is 0.0, as `math.sqrt(2) ** 2 == 2` is True). Only a result far
 * below the operands is looked at closer. */
static long log2_about(mpq_srcptr q)   /* log2|q| within 1, q != 0 */
{
    return (long)mpz_sizeinbase(mpq_numref(q), 2) - (long)mpz_sizeinbase(mpq_denref(q), 2);
}

static int cancels(eval_cx *cx, int op, val *a, val *b, mpq_srcptr r)
{
    if (!mpq_sgn(r) || !mpq_sgn(a->u.q) || !mpq_sgn(b->u.q)) return 0;
    long la = log2_about(a->u.q), lb = log2_about(b->u.q);
    if (log2_about(r) > (la > lb ? la : lb) - (long)(cx->nc.prec * 3.32) + 8) return 0;
    mpq_srcptr p = eval_shown(cx, a, 0), q = eval_shown(cx, b, 1);
    if (op == IR_SUB) return mpq_equal(p, q);
    return mpz_cmpabs(mpq_numref(p), mpq_numref(q)) == 0 &&
           mpz_cmp(mpq_denref(p), mpq_denref(q)) == 0 && mpq_sgn(p) == -mpq_sgn(q);
}

/* Float literals and what they make have powers of two as denominators (0.5, 0.25): those
 * take shifts where others take divisions (tens of cycles each). */
#define POW2(d) (((d) & ((d) - 1)) == 0)
static inline uint64_t udiv_exact(uint64_t n, uint64_t d)
{
    return POW2(d) ? n >> __builtin_ctzll(d) : n / d;
}
static inline int64_t sdiv_exact(int64_t n, uint64_t d)   /* d divides n */
{
    return POW2(d) ? n >> __builtin_ctzll(d) : n / (int64_t)d;
}

static uint64_t gcd64_slow(uint64_t a, uint64_t b)   /* a >= b > 1, b no power of two */
{
    if (!(a %= b)) return b;        /* one division brings the larger to the smaller's size */
    int k = __builtin_ctzll(a | b);
    a >>= __builtin_ctzll(a);
    do {
        b >>= __builtin_ctzll(b);
        if (a > b) { uint64_t t = a; a = b; b = t; }
        b -= a;
    } while (b);
    return a << k;
}

/* The common cases inline: a loop's operands are mostly integers and halves. */
static inline uint64_t gcd64(uint64_t a, uint64_t b)
{
    if (a < b) { uint64_t t = a; a = b; b = t; }
    if (b <= 1) return b ? 1 : a;   /* an integer's denominator */
    if (POW2(b)) {
        uint64_t low = a & -a;      /* a's largest power-of-two factor */
        return low < b ? low : b;
    }
    return gcd64_slow(a, b);
}

/* q's numerator and denominator, when each fits 62 bits. */
static inline int small_q(mpq_srcptr q, int64_t *n, uint64_t *d)
{
#if GMP_NUMB_BITS == 64 && GMP_NAIL_BITS == 0
    /* gmp.h's public fields, as eval_q_set_small writes them: a canonical denominator is
     * positive, so its size is 1 here; the numerator's is -1, 0 or 1 */
    mpz_srcptr a = mpq_numref(q), b = mpq_denref(q);
    int sa = a->_mp_size;
    if (b->_mp_size != 1 || sa < -1 || sa > 1) return 0;
    uint64_t la = sa ? a->_mp_d[0] : 0, lb = b->_mp_d[0];
    if ((la | lb) >> 62) return 0;
    *n = sa < 0 ? -(int64_t)la : (int64_t)la;
    *d = lb;
    return 1;
#else
    mpz_srcptr a = mpq_numref(q), b = mpq_denref(q);
    if (mpz_size(a) > 1 || mpz_size(b) > 1) return 0;
    uint64_t la = mpz_getlimbn(a, 0), lb = mpz_getlimbn(b, 0);
    if ((la | lb) >> 62) return 0;
    *n = mpz_sgn(a) < 0 ? -(int64_t)la : (int64_t)la;
    *d = lb;
    return 1;
#endif
}

/* x + y, x - y or x * y as *rn / *rd in machine words when the parts are small, as Knuth's
 * algorithms (4.5.1) reduce them, so the result is canonical: 1 done, 0 not small (mpq's own
 * operations spend most of a loop's time in general gcd code). */
static int small_rat(int op, int64_t *rn, uint64_t *rd, mpq_srcptr x, mpq_srcptr y)
{
    int64_t xn, yn;
    uint64_t xd, yd;
    __int128 n;
    unsigned __int128 d;
    if (!small_q(x, &xn, &xd) || !small_q(y, &yn, &yd)) return 0;
    if (op == IR_SUB) yn = -yn;
    if (op == IR_MUL && (!xn || !yn)) {
        *rn = 0;
        *rd = 1;
        return 1;
    }
    if (xd == 1 || yd == 1) {
        /* an integer operand (i * 0.5, x + 1, s + i): a sum keeps the other's denominator,
         * already coprime to its numerator; a product divides one gcd out */
        int64_t k = yd == 1 ? yn : xn, m = yd == 1 ? xn : yn, n1;
        uint64_t d1 = yd == 1 ? xd : yd;
        if (op != IR_MUL) {
            if (__builtin_mul_overflow(k, (int64_t)d1, &n1) || __builtin_add_overflow(n1, m, &n1))
                return 0;
            if (!n1) d1 = 1;
        } else {
            uint64_t g = gcd64((uint64_t)(k < 0 ? -k : k), d1);
            if (g > 1) { k = sdiv_exact(k, g); d1 = udiv_exact(d1, g); }
            if (__builtin_mul_overflow(k, m, &n1)) return 0;
        }
        if (n1 == INT64_MIN) return 0;
        *rn = n1;
        *rd = d1;
        return 1;
    }
    if (op == IR_MUL) {
        uint64_t d1 = gcd64((uint64_t)(xn < 0 ? -xn : xn), yd);
        uint64_t d2 = gcd64((uint64_t)(yn < 0 ? -yn : yn), xd);
        if (d1 > 1) { xn = sdiv_exact(xn, d1); yd = udiv_exact(yd, d1); }
        if (d2 > 1) { yn = sdiv_exact(yn, d2); xd = udiv_exact(xd, d2); }
        n = (__int128)xn * yn;
        d = (unsigned __int128)xd * yd;
    } else {
        uint64_t g = gcd64(xd, yd), g2 = 1;
        if (g > 1) { xd = udiv_exact(xd, g); yd = udiv_exact(yd, g); }
        n = (__int128)xn * (int64_t)yd + (__int128)yn * (int64_t)xd;
        if (n > INT64_MAX || n < -INT64_MAX) return 0;
        int64_t n64 = (int64_t)n;
        if (g > 1) {
            uint64_t an = (uint64_t)(n64 < 0 ? -n64 : n64);
            g2 = gcd64(g, POW2(g) ? an & (g - 1) : an % g);
            n64 = sdiv_exact(n64, g2);
        }
        n = n64;
        d = n64 ? (unsigned __int128)xd * udiv_exact(g, g2) * yd : 1;
    }
    if (n > INT64_MAX || n < -INT64_MAX || d > UINT64_MAX / 2) return 0;
    *rn = (int64_t)n;
    *rd = (uint64_t)d;
    return 1;
}

/* The result's value: a new one, or `reuse` (a, whose only reference its caller drops). */
static val *num_out(eval_cx *cx, vkind kind, val *reuse)
{
    if (!reuse) return eval_num(cx, kind);
    reuse->kind = (uint8_t)kind;
    reuse->flags = 0;
    EV_INCREF(reuse);
    return reuse;
}

static val *num_binop_q(eval_cx *cx, int op, val *a, val *b, int inplace, val *reuse,
                        const ir_node *at)
{
    int fl = a->kind == V_FLOAT || b->kind == V_FLOAT;
    int inexact = ((a->flags | b->flags) & VF_INEXACT) != 0;
    const mpq_srcptr x = a->u.q, y = b->u.q;
    val *r;
    cr_code rc;
    int64_t sn;
    uint64_t sd;
    int exact = 1;
    /* the common case first: parts of a word each, a result of a word each (an int result
     * within max_bits); no charge is due at this size */
    if ((op == IR_ADD || op == IR_SUB || op == IR_MUL) && (fl || cx->nc.max_bits >= 64) &&
        small_rat(op, &sn, &sd, x, y)) {
        vkind k = fl ? V_FLOAT : V_INT;
        if (!(r = reuse ? num_out(cx, k, reuse) : eval_num_any(cx, k))) return NULL;
        eval_q_set_small(r->u.q, sn, sd);   /* canonical already */
        if (inexact && fl && op != IR_MUL && cancels(cx, op, a, b, r->u.q)) mpq_set_ui(r->u.q, 0, 1);
        return eval_num_finish(cx, r, inexact);
    }
    if (charge(cx, op, a, b, at) < 0) return NULL;
    if (fl && (eval_int_past_double(a) || eval_int_past_double(b)))
        return eval_raise(cx, CR_EPY_OVERFLOW, at, "int too large to convert to float");
    if (!fl && (op == IR_ADD || op == IR_SUB || op == IR_MUL)) {
        /* integers: numerators only, no canonicalisation; the size is predicted from limbs
         * first, exactly only near the limit */
        mpz_srcptr p = mpq_numref(x), q = mpq_numref(y);
        size_t lp = mpz_size(p), lq = mpz_size(q);
        uint64_t bound = op == IR_MUL ? (uint64_t)(lp + lq) * GMP_NUMB_BITS
                                      : (uint64_t)((lp > lq ? lp : lq) + 1) * GMP_NUMB_BITS;
        if (bound > cx->nc.max_bits) {
            uint64_t bp = mpz_sizeinbase(p, 2), bq = mpz_sizeinbase(q, 2);
            uint64_t need = op == IR_MUL ? bp + bq - 1 : (bp > bq ? bp : bq) + 1;
            if (need > cx->nc.max_bits) return eval_int_limit(cx, at);
        }
        if (!(r = num_out(cx, V_INT, reuse))) return NULL;
        mpz_ptr z = mpq_numref(r->u.q);
        if (op == IR_ADD) mpz_add(z, p, q);
        else if (op == IR_SUB) mpz_sub(z, p, q);
        else mpz_mul(z, p, q);
        if (inexact) r->flags |= VF_INEXACT;
        return eval_num_done(cx, r);
    }
    switch (op) {
    case IR_ADD: case IR_SUB:
        if (!fl) {
            size_t ba = mpz_sizeinbase(mpq_numref(x), 2), bb = mpz_sizeinbase(mpq_numref(y), 2);
            if ((ba > bb ? ba : bb) + 1 > cx->nc.max_bits) return eval_int_limit(cx, at);
        }
        /* each way below writes the whole result: a new value need not be zeroed first */
        r = reuse ? num_out(cx, fl ? V_FLOAT : V_INT, reuse) : eval_num_any(cx, fl ? V_FLOAT : V_INT);
        if (!r) return NULL;
        if (op == IR_ADD) {
            mpq_add(r->u.q, x, y);
        } else {
            mpq_sub(r->u.q, x, y);
        }
        if (inexact && cancels(cx, op, a, b, r->u.q)) mpq_set_ui(r->u.q, 0, 1);
        return eval_num_finish(cx, r, inexact);
    case IR_MUL: {
        if (!fl && bits_of(a) + bits_of(b) > cx->nc.max_bits) return eval_int_limit(cx, at);
        if (!(r = eval_num_any(cx, fl ? V_FLOAT : V_INT))) return NULL;
        mpq_mul(r->u.q, x, y);
        return eval_num_finish(cx, r, inexact);
    }
    case IR_DIV:
        if (!mpq_sgn(y))
            return eval_raise(cx, CR_EPY_ZERODIV, at, fl ? "float division by zero"
                                                         : "division by zero");
        if (!(r = eval_num(cx, V_FLOAT))) return NULL;
        mpq_div(r->u.q, x, y);
        if (!fl && num_double_range(r->u.q, &exact) > 0) {
            eval_decref(cx, r);
            return eval_raise(cx, CR_EPY_OVERFLOW, at,
                              "integer division result too large for a float");
        }
        return eval_num_finish(cx, r, inexact || !exact);
    case IR_FLOORDIV: case IR_MOD:
        if (!mpq_sgn(y))
            return eval_raise(cx, CR_EPY_ZERODIV, at, "%s",
                              op == IR_MOD ? (fl ? "float modulo" : "integer modulo by zero")
                              : fl ? "float floor division by zero"
                                   : "integer division or modulo by zero");
        if (!(r = eval_num(cx, fl ? V_FLOAT : V_INT))) return NULL;
        if (inexact) {
            cx->inexact_decided = 1;
            rc = num_floordiv_decided(r->u.q, x, y, op == IR_MOD, &cx->nc);
        } else {
            rc = op == IR_MOD ? num_mod(r->u.q, x, y) : num_floordiv(r->u.q, x, y);
        }
        if (rc != CR_OK) {
            eval_decref(cx, r);
            return eval_raise(cx, rc, at, "division failed");
        }
        return eval_num_finish(cx, r, inexact);
    case IR_POW: {
        int neg_int_exp = mpq_sgn(y) < 0 && mpz_cmp_ui(mpq_denref(y), 1) == 0;
        int fr = fl || neg_int_exp || mpz_cmp_ui(mpq_denref(y), 1) != 0;
        if (!(r = eval_num(cx, fr ? V_FLOAT : V_INT))) return NULL;
        rc = num_pow(r->u.q, &exact, x, y, fr, &cx->nc);
        if (rc != CR_OK) {
            eval_decref(cx, r);
            switch (rc) {
            case CR_EPY_ZERODIV:
                return eval_raise(cx, rc, at, "0.0 cannot be raised to a negative power");
            case CR_EPY_VALUE:
                return eval_raise(cx, rc, at,
                                  "negative number cannot be raised to a fractional power");
            case CR_EPY_OVERFLOW:
                return eval_raise(cx, rc, at, "(34, 'Numerical result out of range')");
            case CR_ELIMIT: return eval_int_limit(cx, at);
            default: return eval_raise(cx, rc, at, "power failed");
            }
        }
        return eval_num_finish(cx, r, inexact || !exact);
    }
    case IR_LSHIFT: case IR_RSHIFT: case IR_BITAND: case IR_BITOR: case IR_BITXOR: {
        if (fl) return unsupported(cx, op, a, b, inplace, at);
        const mpz_srcptr p = mpq_numref(x), q = mpq_numref(y);
        vkind k = a->kind == V_BOOL && b->kind == V_BOOL && op >= IR_BITAND ? V_BOOL : V_INT;
        if (op == IR_LSHIFT || op == IR_RSHIFT) {
            if (mpz_sgn(q) < 0) return eval_raise(cx, CR_EPY_VALUE, at, "negative shift count");
            if (op == IR_LSHIFT && mpz_sgn(p) &&
                (!mpz_fits_ulong_p(q) ||
                 mpz_sizeinbase(p, 2) + mpz_get_ui(q) > cx->nc.max_bits))
                return eval_int_limit(cx, at);
        }
        if (k == V_BOOL) {
            int va = mpq_sgn(x) != 0, vb = mpq_sgn(y) != 0;
            int res = op == IR_BITAND ? (va & vb) : op == IR_BITOR ? (va | vb) : (va ^ vb);
            return eval_bool(cx, res);
        }
        if (!(r = eval_num(cx, V_INT))) return NULL;
        mpz_ptr z = mpq_numref(r->u.q);
        switch (op) {
        case IR_LSHIFT: mpz_mul_2exp(z, p, mpz_get_ui(q)); break;
        case IR_RSHIFT:
            if (mpz_fits_ulong_p(q)) mpz_fdiv_q_2exp(z, p, mpz_get_ui(q));
            else mpz_set_si(z, mpz_sgn(p) < 0 ? -1 : 0);
            break;
        case IR_BITAND: mpz_and(z, p, q); break;
        case IR_BITOR: mpz_ior(z, p, q); break;
        default: mpz_xor(z, p, q); break;
        }
        return eval_num_finish(cx, r, inexact);
    }
    default:
        return unsupported(cx, op, a, b, inplace, at);
    }
}

/* A float's sign bit: CPython's -0.0 has one. */
static int sign_bit(const val *v)
{
    return mpq_sgn(v->u.q) < 0 || (v->flags & VF_NEGZ);
}

/* The sign IEEE arithmetic gives a float result that is zero, from its operands' (read before
 * the operation, whose result may take a's storage): -0.0 + -0.0, 0.0 * -1, 0.0 / -5 are
 * -0.0; a zero remainder takes the divisor's sign (CPython's float_rem); a zero floor
 * quotient the sign of a / b; (-0.0) ** odd n is -0.0. A zero the range check gave an
 * underflowing result keeps the sign it set. */
static int zero_sign(int op, int az, int an, int bz, int bn, const val *b, int under)
{
    switch (op) {
    case IR_ADD: return az && bz ? an && bn : under;
    case IR_SUB: return az && bz ? an && !bn : under;
    case IR_MUL: return az || bz ? an != bn : under;
    case IR_DIV: return az ? an != bn : under;
    case IR_FLOORDIV: return an != bn;
    case IR_MOD: return bn;
    case IR_POW:
        return az ? an && mpz_cmp_ui(mpq_denref(b->u.q), 1) == 0 && mpz_odd_p(mpq_numref(b->u.q)) &&
                    mpq_sgn(b->u.q) > 0 : under;
    default: return 0;
    }
}

static val *num_binop(eval_cx *cx, int op, val *a, val *b, int inplace, val *reuse,
                      const ir_node *at)
{
    int az = !mpq_sgn(a->u.q), an = sign_bit(a), bz = !mpq_sgn(b->u.q), bn = sign_bit(b);
    val *r = num_binop_q(cx, op, a, b, inplace, reuse, at);
    if (r && r->kind == V_FLOAT && !mpq_sgn(r->u.q) &&
        (az || bz || op == IR_MOD || (r->flags & VF_NEGZ))) {
        if (zero_sign(op, az, an, bz, bn, b, (r->flags & VF_NEGZ) != 0)) r->flags |= VF_NEGZ;
        else r->flags &= (uint8_t)~VF_NEGZ;
    }
    return r;
}

static val *seq_concat(eval_cx *cx, val *a, val *b, const ir_node *at)
{
    if (a->kind == V_STR) {
        if ((uint64_t)a->u.str.nch + b->u.str.nch > cx->lim->max_str_len)
            return eval_raise(cx, CR_ELIMIT, at, "string length limit (%llu characters)",
                              (unsigned long long)cx->lim->max_str_len);
        if (eval_mem_room(cx, a->u.str.len + b->u.str.len + 1) < 0) return NULL;
        char *p = malloc(a->u.str.len + b->u.str.len + 1);
        if (!p) return eval_raise(cx, CR_ENOMEM, at, "out of memory");
        memcpy(p, a->u.str.s, a->u.str.len);
        memcpy(p + a->u.str.len, b->u.str.s, b->u.str.len);
        p[a->u.str.len + b->u.str.len] = '\0';
        return eval_str_take(cx, p, a->u.str.len + b->u.str.len);
    }
    if (eval_walk(cx, a->u.seq.len + b->u.seq.len, 0, at) < 0) return NULL;
    val *r = eval_seq_new(cx, (vkind)a->kind, a->u.seq.len + b->u.seq.len);
    if (!r) return NULL;
    for (size_t i = 0; i < a->u.seq.len; i++) {
        EV_INCREF(a->u.seq.it[i]);
        r->u.seq.it[r->u.seq.len++] = a->u.seq.it[i];
    }
    for (size_t i = 0; i < b->u.seq.len; i++) {
        EV_INCREF(b->u.seq.it[i]);
        r->u.seq.it[r->u.seq.len++] = b->u.seq.it[i];
    }
    return r;
}

static val *seq_repeat(eval_cx *cx, val *s, val *n, const ir_node *at)
{
    if (n->kind != V_INT && n->kind != V_BOOL)
        return eval_raise(cx, CR_EPY_TYPE, at, "can't multiply sequence by non-int of type '%s'",
                          eval_type_name(n));
    int is_str = s->kind == V_STR;
    uint64_t len = is_str ? s->u.str.nch : s->u.seq.len, times = 0;
    eval_decides(cx, n);
    if (mpq_sgn(n->u.q) > 0) {
        if (!mpz_fits_ulong_p(mpq_numref(n->u.q))) times = UINT64_MAX;
        else times = mpz_get_ui(mpq_numref(n->u.q));
    }
    if (len && times > cx->lim->max_str_len / len)
        return eval_raise(cx, CR_ELIMIT, at, is_str ? "string length limit (%llu characters)"
                                                    : "container size limit (%llu elements)",
                          (unsigned long long)cx->lim->max_str_len);
    if (!len) times = 0;
    if (is_str ? eval_walk(cx, 0, times * s->u.str.len, at) < 0
               : eval_walk(cx, times * len, 0, at) < 0)
        return NULL;
    if (is_str) {
        size_t bl = s->u.str.len;
        if (eval_mem_room(cx, bl * times + 1) < 0) return NULL;
        char *p = malloc(bl * times + 1);
        if (!p) return eval_raise(cx, CR_ENOMEM, at, "out of memory");
        for (uint64_t i = 0; i < times; i++) memcpy(p + i * bl, s->u.str.s, bl);
        p[bl * times] = '\0';
        return eval_str_take(cx, p, bl * times);
    }
    val *r = eval_seq_new(cx, (vkind)s->kind, len * times);
    if (!r) return NULL;
    for (uint64_t i = 0; i < times; i++)
        for (size_t j = 0; j < len; j++) {
            EV_INCREF(s->u.seq.it[j]);
            r->u.seq.it[r->u.seq.len++] = s->u.seq.it[j];
        }
    return r;
}

val *eval_nonfinite(eval_cx *cx, double d)
{
    val *r = eval_new(cx, V_INF);
    if (r) r->sub = isnan(d) ? INF_NAN : d < 0 ? INF_NEG : INF_POS;
    return r;
}

int eval_to_double(eval_cx *cx, val *v, double *out, const ir_node *at)
{
    if (v->kind == V_INF) {
        *out = v->sub == INF_NAN ? NAN : v->sub == INF_NEG ? -INFINITY : INFINITY;
        return 0;
    }
    if (v->kind != V_FLOAT && mpz_sizeinbase(mpq_numref(v->u.q), 2) > 1024) {
        eval_raise(cx, CR_EPY_OVERFLOW, at, "int too large to convert to float");
        return -1;
    }
    *out = mpq_get_d(eval_decided(cx, v, 0));
    if (v->flags & VF_NEGZ) *out = -0.0;
    return 0;
}

/* CPython's float_pow on the cases where an operand is infinite or NaN. */
static double pow_nonfinite(double x, double y)
{
    if (y == 0) return 1.0;
    if (isnan(x)) return x;
    if (isnan(y)) return x == 1.0 ? 1.0 : y;
    if (isinf(y)) {
        x = fabs(x);
        return x == 1.0 ? 1.0 : (y > 0) == (x > 1.0) ? fabs(y) : 0.0;
    }
    int odd = fmod(fabs(y), 2.0) == 1.0;
    if (y > 0) return odd ? x : fabs(x);
    return odd ? copysign(0.0, x) : 0.0;
}

/* Arithmetic with an infinity or NaN operand, in doubles as CPython's float does: the finite
 * operand matters only through its double. A finite result is 0, -1, 1 or the finite operand
 * itself (x % inf), and is given exactly. */
static val *nonfinite_binop(eval_cx *cx, int op, val *a, val *b, int inplace, const ir_node *at)
{
    double x, y, r, m;
    if (op != IR_ADD && op != IR_SUB && op != IR_MUL && op != IR_DIV && op != IR_FLOORDIV &&
        op != IR_MOD && op != IR_POW)
        return unsupported(cx, op, a, b, inplace, at);
    if (eval_to_double(cx, a, &x, at) < 0 || eval_to_double(cx, b, &y, at) < 0) return NULL;
    if (y == 0 && (op == IR_DIV || op == IR_FLOORDIV || op == IR_MOD))
        return eval_raise(cx, CR_EPY_ZERODIV, at, "%s", op == IR_DIV ? "float division by zero"
                          : op == IR_MOD ? "float modulo" : "float floor division by zero");
    switch (op) {
    case IR_ADD: r = x + y; break;
    case IR_SUB: r = x - y; break;
    case IR_MUL: r = x * y; break;
    case IR_DIV: r = x / y; break;
    case IR_POW: r = pow_nonfinite(x, y); break;
    default:   /* CPython's _float_div_mod */
        m = fmod(x, y);
        r = (x - m) / y;
        if (m != 0 && (y < 0) != (m < 0)) {
            m += y;
            r -= 1.0;
        }
        if (op == IR_MOD) r = m != 0 ? m : 0.0;
        else if (r != 0 && !isnan(r) && !isinf(r)) r = floor(r) + (r - floor(r) > 0.5);
        break;
    }
    if (isnan(r) || isinf(r)) return eval_nonfinite(cx, r);
    val *fin = a->kind == V_INF ? b : a, *v = eval_num(cx, V_FLOAT);
    if (!v) return NULL;
    if (r == x || r == y) mpq_set(v->u.q, fin->u.q);
    else mpq_set_d(v->u.q, r);
    if (r == 0 && signbit(r)) v->flags |= VF_NEGZ;
    return eval_num_finish(cx, v, r == x || r == y ? (fin->flags & VF_INEXACT) != 0 : 0);
}

val *eval_operate(eval_cx *cx, int op, val *a, val *b, int inplace, const ir_node *at)
{
    if (eval_count(cx, 1, at) < 0) return NULL;
    if (IS_NUM(a) && IS_NUM(b)) return num_binop(cx, op, a, b, inplace, NULL, at);
    if ((a->kind == V_INF || b->kind == V_INF) && IS_REAL(a) && IS_REAL(b))
        return nonfinite_binop(cx, op, a, b, inplace, at);
    if (set_op(op, a, b)) return eval_set_binop(cx, op, a, b, inplace, at);
    if (a->kind == V_OBJ || b->kind == V_OBJ) {
        /* the left operand's class first, then the right's, as CPython's reflected ops */
        for (int i = 0; i < 2; i++) {
            val *o = i ? b : a;
            if (o->kind != V_OBJ || !o->u.obj.cls->binop || (i && b->u.obj.cls == a->u.obj.cls &&
                                                            a->kind == V_OBJ))
                continue;
            val *r = o->u.obj.cls->binop(cx, op, a, b, at);
            if (r || cx->err.code != CR_OK) return r;
        }
    }
    int seq_a = a->kind == V_STR || a->kind == V_LIST || a->kind == V_TUPLE;
    switch (op) {
    case IR_ADD:
        if (seq_a && a->kind == b->kind)   /* str(x) + 'a', str(x).split() + [] */
            return eval_carry_inexact(cx, seq_concat(cx, a, b, at),
                                 ((a->flags | b->flags) & VF_INEXACT) != 0);
        if (seq_a)
            return eval_raise(cx, CR_EPY_TYPE, at, "can only concatenate %s (not \"%s\") to %s",
                              eval_type_name(a), eval_type_name(b), eval_type_name(a));
        break;
    case IR_MUL:
        if (seq_a)
            return eval_carry_inexact(cx, seq_repeat(cx, a, b, at), (a->flags & VF_INEXACT) != 0);
        if (b->kind == V_STR || b->kind == V_LIST || b->kind == V_TUPLE)
            return eval_carry_inexact(cx, seq_repeat(cx, b, a, at), (b->flags & VF_INEXACT) != 0);
        break;
    case IR_MOD:
        if (a->kind == V_STR) return eval_str_percent(cx, a, b, at);
        break;
    default:
        break;
    }
    return unsupported(cx, op, a, b, inplace, at);
}

/* sum()'s step, acc + x, where acc is the caller's reference, dropped after: when it is the
 * only one and both are exact numbers, acc's storage takes the result (no allocation a step;
 * small_rat and GMP read their operands before they write). */
val *eval_sum_add(eval_cx *cx, val *acc, val *x, const ir_node *at)
{
    if (acc->rc != 1 || (acc->flags & VF_IMMORTAL) || (acc->kind != V_INT && acc->kind != V_FLOAT) ||
        !IS_NUM(x) || ((acc->flags | x->flags) & VF_INEXACT))
        return eval_operate(cx, IR_ADD, acc, x, 0, at);
    if (eval_count(cx, 1, at) < 0) return NULL;
    return num_binop(cx, IR_ADD, acc, x, 0, acc, at);
}


val *eval_inf_error(eval_cx *cx, val *x, const ir_node *at)
{
    if (IS_NAN(x)) return eval_raise(cx, CR_EPY_VALUE, at, "cannot convert float NaN to integer");
    return eval_raise(cx, CR_EPY_OVERFLOW, at, "cannot convert float infinity to integer");
}

int eval_norm_index(eval_cx *cx, val *idx, size_t len, int64_t *out, const char *what,
                    val *obj, const ir_node *at)
{
    if (idx->kind != V_INT && idx->kind != V_BOOL) {
        if (obj->kind == V_STR)
            eval_raise(cx, CR_EPY_TYPE, at, "string indices must be integers, not '%s'",
                       eval_type_name(idx));
        else
            eval_raise(cx, CR_EPY_TYPE, at, "%s indices must be integers or slices, not %s",
                       eval_type_name(obj), eval_type_name(idx));
        return -1;
    }
    int64_t i;
    eval_decides(cx, idx);
    if (!mpz_fits_slong_p(mpq_numref(idx->u.q))) {
        eval_raise(cx, CR_EPY_INDEX, at, "cannot fit 'int' into an index-sized integer");
        return -1;
    }
    i = mpz_get_si(mpq_numref(idx->u.q));
    if (i < 0) i += (int64_t)len;
    if (i < 0 || i >= (int64_t)len) {
        eval_raise(cx, CR_EPY_INDEX, at, "%s index out of range", what);
        return -1;
    }
    *out = i;
    return 0;
}

val *eval_get_item(eval_cx *cx, val *o, val *k, const ir_node *at)
{
    int64_t i;
    switch (o->kind) {
    case V_LIST: case V_TUPLE:
        if (eval_norm_index(cx, k, o->u.seq.len, &i, eval_type_name(o), o, at) < 0) return NULL;
        EV_INCREF(o->u.seq.it[i]);
        return o->u.seq.it[i];
    case V_STR: {
        if (eval_norm_index(cx, k, o->u.str.nch, &i, "string", o, at) < 0) return NULL;
        /* past ASCII, finding the character reads the text up to it */
        if (o->u.str.nch != o->u.str.len && eval_walk(cx, 0, (uint64_t)i * 2, at) < 0)
            return NULL;
        size_t p = eval_utf8_index(o, (size_t)i), q = p + 1;
        while (q < o->u.str.len && ((unsigned char)o->u.str.s[q] & 0xC0) == 0x80) q++;
        return eval_str(cx, o->u.str.s + p, q - p);
    }
    case V_DICT: {
        int err;
        val *v = eval_dict_get(cx, o, k, &err);
        if (err) return NULL;
        if (!v) return eval_key_error(cx, k, at);
        EV_INCREF(v);
        return v;
    }
    case V_RANGE: {
        size_t len;
        eval_len(cx, o, &len);
        if (eval_norm_index(cx, k, len, &i, "range object", o, at) < 0) return NULL;
        return eval_int_si(cx, (long)(o->u.rng.start + i * o->u.rng.step));
    }
    case V_OBJ:
        if (o->u.obj.cls->items) {   /* a named tuple indexes as its tuple */
            val *t = o->u.obj.cls->items(cx, o), *r = t ? eval_get_item(cx, t, k, at) : NULL;
            eval_decref(cx, t);
            return r;
        }
        /* fallthrough */
    default:
        return eval_raise(cx, CR_EPY_TYPE, at, "'%s' object is not subscriptable",
                          eval_type_name(o));
    }
}
