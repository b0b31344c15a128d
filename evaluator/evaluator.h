/* evaluator/evaluator.h: runs an IR module in-process on exact values (DESIGN.md, "Value
 * semantics"): Python's behaviour where Python is right, exact decimals where it is not. */
#ifndef CR_EVALUATOR_H
#define CR_EVALUATOR_H

#include "common/common.h"
#include "ir/ir.h"

/* A variable bound before the program runs (--var, --vars, a table). The value is a constant
 * IR expression: NUM, STR, BOOL, NONE, or LIST/TUPLE/DICT of those, so a binding given as
 * "0.1" is exactly 1/10 like a literal. Both pointers are borrowed. */
typedef struct {
    const char *name;
    const ir_node *value;
} eval_binding;

/* What a run produced. Every pointer is owned by the result: eval_result_free(). */
typedef struct {
    cr_code status;        /* CR_OK; CR_EPY_* when the code raised; CR_ELIMIT */
    cr_error error;        /* status != CR_OK: type, message, line:col of the raising node */
    char *stdout_text;     /* what print() wrote (NUL-terminated) */
    size_t stdout_len;
    int stdout_truncated;  /* output passed limits.max_stdout */

    int has_value;         /* a final value was found (DESIGN.md's rule) */
    char *value_from;      /* "solution()", "ans", "last expression", "x" (last assigned) */
    char *value_type;      /* Python type name: "int", "float", "bool", "str", "list",
                            * "tuple", "dict", "NoneType", "function", "module" */
    char *value_repr;      /* repr() of the value, CPython's layout on our exact value */
    char *value_str;       /* str() of the value */
    int value_numeric;     /* int, float or bool: value_fraction is set */
    char *value_fraction;  /* exact value as "p/q" or "p" (numeric values only, else NULL) */
    struct json_t *value_native;  /* the value as tagged JSON (eval.c, native_of()), or NULL */
    char *value_native_why;       /* NULL, or why the value has no native form */
    int exact;             /* 0 when a rounded (inexact) operation fed the final value */
    uint64_t ops;          /* evaluation steps taken */
} eval_result;

/* How the LimitError of a run out of CPU time begins (its limit then, "0.2 s)"): where the clock
 * ran out is no property of the code, so replay (router/replay.c) knows such a stop by it. */
#define EVAL_CPU_LIMIT_TEXT "CPU time limit ("

/* Runs `prog` (which must have no reasons) with `binds` under `pol`.
 * Returns CR_OK when the run completed, whatever the user's code did: res->status says
 * whether it raised or hit a limit. Returns an error code only when the engine itself
 * failed (CR_ENOMEM, CR_EINTERNAL) or prog has reasons (CR_EUSAGE); res is then still
 * initialised and safe to free. The caller owns *res's contents: eval_result_free(). */
cr_code eval_run(const ir_module *prog, const eval_binding *binds, size_t nbinds,
                 const cr_policy *pol, eval_result *res, cr_error *err);
void eval_result_free(eval_result *res);   /* NULL is a no-op; leaves *res zeroed */

#endif
