/* evaluator/num/num_int.h: helpers shared by num.c, num_math.c and num_format.c. Not part
 * of the module's contract (that is num.h). */
#ifndef CR_NUM_INTERNAL_H
#define CR_NUM_INTERNAL_H

#include <mpfr.h>

#include "evaluator/num/num.h"

/* The tie-breaking the policy asks for. */
static inline num_mode num_ctx_mode(const num_ctx *ctx)
{
    return ctx->rounding == CR_ROUND_HALF_UP ? NUM_HALF_UP : NUM_HALF_EVEN;
}

/* floor(log10(|x|)) for x != 0. */
long num_dec_exp(const mpq_t x);
/* x != 0 rounded to `digits` significant digits: |out| in [10^(digits-1), 10^digits) and the
 * value is out * 10^(E - digits + 1); returns E, the decimal exponent of the leading digit. */
long num_round_sig(mpz_t out, const mpq_t x, int digits, num_mode mode);
/* out = digits * 10^exp10, canonical. */
void num_q_from_dec(mpq_t out, const mpz_t digits, long exp10);

/* Bits of |z| (0 for 0). */
static inline uint64_t num_bits(const mpz_t z)
{
    return mpz_sgn(z) ? (uint64_t)mpz_sizeinbase(z, 2) : 0;
}

/* log2|x| as a double, for size predictions (x != 0). */
double num_log2_abs(const mpq_t x);

/* a ** b through MPFR for a > 0 (b any rational), correctly rounded to ctx->prec digits.
 * CR_EPY_OVERFLOW when |result| passes the double range, as CPython raises. */
cr_code num_mpfr_pow(mpq_t out, const mpq_t a, const mpq_t b, const num_ctx *ctx);

/* Whether |x| passes the largest finite double (OverflowError in CPython). */
int num_past_double(const mpq_t x);

#endif
