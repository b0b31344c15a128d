/* evaluator/lib/decimal_int.h: what mod_decimal.c (the numbers and their arithmetic) and
 * decimal_context.c (Context objects, localcontext, the rounding names) share. */
#ifndef CR_EVAL_DECIMAL_INT_H
#define CR_EVAL_DECIMAL_INT_H

#include "evaluator/lib/lib.h"

#define DEC_EMAX 999999
#define DEC_EMIN (-999999)
#define DEC_MAX_PREC 999999999999999999LL
#define DEC_PREC(cx) ((cx)->dec.prec ? (cx)->dec.prec : 28)
#define EMAX(cx) (DEC_EMAX - (cx)->dec.emax)
#define EMIN(cx) (DEC_EMIN + (cx)->dec.emin)

enum { DK_FIN, DK_INF, DK_NAN, DK_SNAN };
typedef struct {
    mpz_t c;               /* coefficient >= 0 (a NaN's payload) */
    int64_t e;
    uint8_t neg, kind;
} dec;

enum { RD_HALF_EVEN, RD_HALF_UP, RD_HALF_DOWN, RD_UP, RD_DOWN, RD_CEILING, RD_FLOOR, RD_05UP,
       RD_N };
extern const char *const dec_round_names[RD_N];

/* Signals, in the order Context's repr lists its flags. */
enum { SG_CLAMPED, SG_INVALID, SG_DIVZERO, SG_INEXACT, SG_FLOAT, SG_OVERFLOW, SG_ROUNDED,
       SG_SUBNORMAL, SG_UNDERFLOW, SG_N };
extern const char *const dec_sig_names[SG_N];
/* InvalidOperation's flag has three bits, after the conditions that raise it, since
 * Context's repr lists it where libmpdec's first such condition is: SG_INVALID for
 * ConversionSyntax (and a flags= list), SG_INV_DIV for DivisionImpossible and
 * DivisionUndefined, SG_INV_OP for the others. */
#define SG_INV_DIV SG_N
#define SG_INV_OP (SG_N + 1)
#define SG_INV_ALL (1u << SG_INVALID | 1u << SG_INV_DIV | 1u << SG_INV_OP)
/* Besides the sticky flags, bit SG_NOW says that the operation under way rounded its result
 * to the context (Inexact): such a Decimal is not the exact value of the program's
 * arithmetic and is marked inexact, as math.sqrt's results are. */
#define SG_NOW 15
#define FLAG(cx, s) ((cx)->dec.flags |= (uint16_t)(1u << (s) | ((s) == SG_INEXACT ? 1u << SG_NOW : 0)))
#define ROUNDING_START(cx) ((cx)->dec.flags &= (uint16_t)~(1u << SG_NOW))
#define ROUNDED(cx) (((cx)->dec.flags >> SG_NOW) & 1)
/* The traps are held as their difference from CPython's default ones, so zero is the default */
#define DEFAULT_TRAPS (1u << SG_INVALID | 1u << SG_DIVZERO | 1u << SG_OVERFLOW)
#define TRAPPED(cx, s) ((((cx)->dec.traps ^ DEFAULT_TRAPS) >> (s)) & 1)

extern const eval_class dec_ctx_cls;
#define IS_CTX(v) ((v)->kind == V_OBJ && (v)->u.obj.cls == &dec_ctx_cls)

#define DEC_OF(v) ((dec *)(v)->u.obj.data)
static inline void dinit(dec *d) { mpz_init(d->c); d->e = 0; d->neg = 0; d->kind = DK_FIN; }
static inline void dclear(dec *d) { mpz_clear(d->c); }
static inline void dcopy(dec *d, const dec *s)
{
    mpz_set(d->c, s->c);
    d->e = s->e;
    d->neg = s->neg;
    d->kind = s->kind;
}

int64_t dec_ndigits(const mpz_t c);
int64_t dec_adjusted(const dec *d);
int dec_rescale(eval_cx *cx, dec *d, int64_t e, int mode, const ir_node *at);
int dec_sci(eval_cx *cx, cr_buf *b, const dec *d);
int dec_repr(eval_cx *cx, cr_buf *b, val *self, int as_str);
int dec_format(eval_cx *cx, cr_buf *b, val *self, const char *s, size_t n, const ir_node *at);
void dec_fmt_fail(eval_cx *cx, cr_code c, const ir_node *at);
int dec_rounding_arg(eval_cx *cx, val *r, int *mode, const ir_node *at);
int dec_method_args(eval_cx *cx, eval_args *a, const char *const *kws, size_t max,
                    size_t need, val **out, const char *name, const ir_node *at);
int dec_type_eq(eval_cx *cx, val *a, val *b);
int dec_type_hash(eval_cx *cx, val *self, uint64_t *h);

#endif
