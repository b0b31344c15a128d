/* evaluator/value/stack.c: the C stack under deep recursion.
 *
 * The evaluator recurses on the C stack: a Python call is call_function → exec_block →
 * statement → expressions → call_function, and a walk over nested containers is a C call a
 * level. A Python call of `def f(n): return 0 if n == 0 else 1 + f(n - 1)` takes about
 * 1.4 KiB of stack at -O2, 4.3 KiB with ASan and UBSan at -O1 and 1.9 KiB with TSan at -O1
 * (measured by painting a thread's stack and running f(100) and f(900) on it), and a frame
 * whose expressions nest 90 deep takes 30 times that: CPython's recursion limit of 1000
 * frames does not fit the 256 KiB stack a pipeline may give the calling thread, nor, with
 * deep expressions, 8 MiB. So each level asks whether its thread's stack has
 * EVAL_STACK_RESERVE left (one compare, eval_stack_low); when it has not, that level runs on
 * a new segment of SEG_SIZE (cr_on_new_stack) that the run's thread waits for. A segment
 * costs a thread's start, tens of microseconds, and is charged as memory while it lives;
 * only a run past the stack its thread has makes one. */
#include "evaluator/value/value.h"

#include <mpfr.h>
#include <string.h>

/* The most a level may use between two looks at the stack: a few frames of the evaluator,
 * the temporaries GMP and MPFR place on the stack (tens of KiB in one call at most), libc's
 * formatting, with room for the frames' growth under sanitizers. */
#define EVAL_STACK_RESERVE ((uintptr_t)256 << 10)
#define SEG_SIZE ((size_t)8 << 20)

/* An unknown stack is treated as used up: the next level takes a segment, whose stack is
 * known. */
void eval_stack_start(eval_cx *cx)
{
    size_t left = cr_stack_left();
    cx->stack_limit = left ? cr_stack_lo() + EVAL_STACK_RESERVE : UINTPTR_MAX;
}

typedef struct {
    eval_cx *cx;
    int (*fn)(eval_cx *cx, void *arg);
    void *arg;
    int rc;
    double cpu;
} segment;

static void segment_run(void *p)
{
    segment *s = p;
    eval_cx *cx = s->cx;
    eval_stack_start(cx);
    if (cx->stack_limit == UINTPTR_MAX) {   /* not even a new stack is known: do not loop */
        eval_raise(cx, CR_ELIMIT, NULL, "stack limit (the size of a new stack is unknown)");
        return;
    }
    eval_cpu_carry(cx, s->cpu);
    s->rc = s->fn(cx, s->arg);
    s->cpu = eval_cpu_used(cx);
    /* MPFR keeps its constants (log 2, pi) per thread when built with TLS */
    if (mpfr_buildopt_tls_p()) mpfr_free_cache2(MPFR_FREE_LOCAL_CACHE);
}

int eval_deep(eval_cx *cx, int (*fn)(eval_cx *cx, void *arg), void *arg)
{
    segment s = { cx, fn, arg, -1, eval_cpu_used(cx) };
    uintptr_t limit = cx->stack_limit;
    if (eval_mem_room(cx, SEG_SIZE) < 0) return -1;
    cx->mem += SEG_SIZE;
    int e = cr_on_new_stack(SEG_SIZE, segment_run, &s);
    cx->mem -= SEG_SIZE;
    cx->stack_limit = limit;
    if (e != 0) {
        eval_raise(cx, CR_ELIMIT, NULL, "stack limit (a new stack segment: %s)", strerror(e));
        return -1;
    }
    eval_cpu_carry(cx, s.cpu);
    return s.rc;
}
