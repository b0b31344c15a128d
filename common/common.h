/* common/common.h: what every module shares: error setting, bounded buffers, an arena, and
 * the limits and policy that bound everything the input controls. */
#ifndef CR_COMMON_H
#define CR_COMMON_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "calcroute.h"

#define CR_UNUSED(x) ((void)(x))

/* Sets *err (when non-NULL) and returns `code`, so that reporting stays one statement.
 * The type field is filled from the code (Python exception name, "LimitError", or ""). */
cr_code cr_error_set(cr_error *err, cr_code code, int line, int col, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
cr_code cr_error_vset(cr_error *err, cr_code code, int line, int col, const char *fmt,
                      va_list ap);
/* For failures of a system call: "what: strerror(errno)". */
cr_code cr_error_sys(cr_error *err, cr_code code, const char *what, int errnum);
/* The Python exception name for a CR_EPY_* code, "LimitError" for CR_ELIMIT, else "". */
const char *cr_code_pytype(cr_code code);
/* Maps a Python exception class name back to its code; CR_OK when not one of ours. */
cr_code cr_code_from_pytype(const char *name, size_t len);

/* ---- UTF-8 ------------------------------------------------------------------------------
 * Text the code produced (stdout, stderr, exception messages, file names) may hold any bytes.
 * cr_utf8_valid() says whether p[0..len) is well-formed UTF-8 (NUL bytes allowed);
 * cr_utf8_cut() is the length of the longest prefix of p[0..len) that does not end inside a
 * character that was well-formed so far: where a cap cuts text. */
int cr_utf8_valid(const char *p, size_t len);
size_t cr_utf8_cut(const char *p, size_t len);
/* The well-formed character at p[0..len) (len > 0): its length; else 0 and *bad is the
 * length of its maximal ill-formed subpart, which a decoder replaces by one U+FFFD. */
size_t cr_utf8_step(const char *p, size_t len, size_t *bad);

/* ---- bounded growable byte buffer ------------------------------------------------------
 * The buffer owns `p` (malloc'd, always NUL-terminated when non-NULL). `max` bounds `len`;
 * 0 means no bound. A write past `max` keeps what fits, cut back so that no UTF-8 character
 * is split (capped buffers hold text: stdout, stderr), sets `truncated`, takes nothing more
 * and returns CR_ELIMIT, so a caller can record the cut and go on or stop as it needs. */
typedef struct {
    char *p;
    size_t len, cap, max;
    int truncated;
} cr_buf;

void cr_buf_init(cr_buf *b, size_t max);
void cr_buf_free(cr_buf *b);
void cr_buf_reset(cr_buf *b);          /* len = 0, keeps the memory */
cr_code cr_buf_put(cr_buf *b, const void *data, size_t len);
cr_code cr_buf_putc(cr_buf *b, char c);
cr_code cr_buf_puts(cr_buf *b, const char *s);
cr_code cr_buf_printf(cr_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* n more bytes at the end of an unbounded buffer (max 0), for the caller to fill: one
 * reservation where a writer knows the size beforehand. NULL without memory (or when the
 * buffer has a bound, which this cannot honour). */
char *cr_buf_extend(cr_buf *b, size_t n);
/* Hands `p` to the caller (malloc'd; "" when empty) and leaves the buffer empty. */
char *cr_buf_take(cr_buf *b, size_t *len);

/* ---- arena ------------------------------------------------------------------------------
 * Bump allocation in blocks; everything goes at once with cr_arena_free(). `max` bounds the
 * total bytes (0: no bound); cr_arena_alloc() returns NULL past it or when malloc fails, and
 * `nomem` says which (1: malloc) for the last NULL. */
typedef struct cr_arena_block cr_arena_block;
typedef struct {
    cr_arena_block *head;
    size_t used, max;
    int nomem;
} cr_arena;

void cr_arena_init(cr_arena *a, size_t max);
void cr_arena_free(cr_arena *a);
void *cr_arena_alloc(cr_arena *a, size_t size);      /* zeroed, 16-byte aligned */
char *cr_arena_strndup(cr_arena *a, const char *s, size_t len);

/* A hash of the bytes s[0..len) for the name tables of the parser, the registry and the
 * resolver: eight bytes a step, since every mention of a name is hashed. */
uint32_t cr_hash_name(const char *s, size_t len);

/* ---- the C stack (stack.c) -------------------------------------------------------------
 * cr_stack_lo(): the lowest address of the calling thread's stack, 0 when unknown;
 * cr_stack_left(): the bytes below the caller's frame, 0 when unknown (or when the caller
 * runs on a stack that is not its thread's). cr_on_new_stack()
 * runs fn(arg) on a new thread with a stack of `size` bytes (mapped, committed as it is
 * touched) and waits for it: 0, or the errno value that kept the thread from starting. */
uintptr_t cr_stack_lo(void);
size_t cr_stack_left(void);
int cr_on_new_stack(size_t size, void (*fn)(void *arg), void *arg);

/* ---- limits and policy ------------------------------------------------------------------
 * Every loop and allocation that input controls is bounded by one of these. */
typedef struct {
    size_t max_source;        /* bytes of source code */
    uint32_t max_depth;       /* nesting depth of the syntax tree */
    uint64_t max_ops;         /* evaluation steps (loop iterations, calls, operations) */
    uint64_t max_int_bits;    /* bits of any integer, or of a numerator or denominator */
    uint64_t max_str_len;     /* characters of any string; elements of any list/dict */
    uint32_t max_call_depth;  /* recursion limit, as CPython's sys.getrecursionlimit() */
    size_t max_stdout;        /* bytes printed */
    size_t max_memory;        /* bytes of evaluator memory (arena + values), approximate */
    double max_cpu_s;         /* CPU seconds of an in-process run (the engine's timeout); 0: none */
    const int *interrupt_fd;  /* a descriptor that, once readable, ends the run
                                 (CR_EINTERRUPTED); NULL: none */
} cr_limits;

typedef enum { CR_ROUND_HALF_EVEN = 0, CR_ROUND_HALF_UP = 1 } cr_rounding;

typedef struct {
    int precision;            /* significant digits for inexact results (sqrt, log, x**0.5) */
    cr_rounding rounding;     /* round() and format specs */
    const char *answer_vars[4]; /* final-value variable names tried in order; NULL ends */
    cr_limits limits;
} cr_policy;

/* Defaults: precision CR_DEFAULT_PRECISION, half-even, answer vars ans/result/answer, and
 * limits sized for real finance programs with a wide margin (common/defaults.h). */
void cr_policy_default(cr_policy *p);

/* ---- the final-value rule (DESIGN.md, Value semantics) ----------------------------------
 * Each tier gathers the candidates a run leaves (the evaluator from its own state, the
 * sandbox runner in its report); this function alone chooses among them, so the two tiers
 * cannot disagree on which one is the answer. */
#define CR_ANSWER_VARS_MAX 3  /* policy answer variables, as cr_policy.answer_vars holds */

typedef enum {
    CR_FINAL_NONE = 0,
    CR_FINAL_SOLUTION,        /* "solution()" */
    CR_FINAL_VAR,             /* the answer variable var_index names */
    CR_FINAL_EXPR,            /* "last expression" */
    CR_FINAL_ASSIGNED         /* the last module-level assignment's variable */
} cr_final_kind;

typedef struct {
    int solution;             /* a module-level `def solution` callable with no argument is
                                 what `solution` names at the end, and a call of it returned */
    int solution_at_end;      /* ... that call was made after the module body, because the
                                 program never called it */
    unsigned vars;            /* bit i: answer variable i holds a value that is not code */
    int expr;                 /* a module-level expression statement's value that is not None */
    int assigned;             /* the last variable assigned at module level holds a value */
} cr_final_facts;

/* The candidate that is the program's value; *var_index is set for CR_FINAL_VAR. */
cr_final_kind cr_final_choose(const cr_final_facts *f, int *var_index);

#endif
