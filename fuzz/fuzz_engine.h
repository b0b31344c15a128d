/* fuzz/fuzz_engine.h: the engine the whole-pipeline fuzz targets share (fuzz_python.c,
 * fuzz_dsl_eval.c, fuzz_request.c) and the checks every cr_run() outcome must pass.
 * Included once per target, and all at once by tests/test_fuzz_regressions.c. */
#ifndef CR_FUZZ_ENGINE_H
#define CR_FUZZ_ENGINE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calcroute.h"
#include "router/router.h"   /* only to shrink the engine's limits (no public setter) */

/* Sandboxes off: code outside the subset is rejected, so no input ever leaves the process.
 * Limits are the defaults scaled down so that one input costs milliseconds, not seconds;
 * every limit is still reachable and its error path exercised. */
static cr_engine *fuzz_engine(void)
{
    static cr_engine *e;
    if (e) return e;
    cr_config cfg;
    cr_config_default(&cfg);
    cfg.tier = CR_TIER_NONE;
    cr_error err = { 0 };
    if (!(e = cr_engine_open(&cfg, &err))) {
        fprintf(stderr, "fuzz: engine: %s\n", err.message);
        abort();
    }
    cr_limits *l = &e->policy.limits;
    l->max_source = 1u << 16;
    l->max_ops = 200000;
    l->max_int_bits = 1u << 16;
    l->max_str_len = 1u << 18;
    l->max_stdout = 1u << 16;
    l->max_memory = 32u << 20;
    l->max_cpu_s = 2;     /* a run that outlives its steps is a finding, not a stall */
    return e;
}

/* Runs req and reads every part of its result; aborts on an outcome that breaks the API's
 * promises, so that libFuzzer records the input. */
static void fuzz_run_checked(const cr_request *req)
{
    cr_result *res = NULL;
    cr_error err = { 0 };
    cr_code rc = cr_run(fuzz_engine(), req, &res, &err);
    if (rc != CR_OK) {
        if (res) abort();                              /* *out must be NULL on failure */
        if (rc == CR_ENOMEM) return;
        /* Any other failure of the engine on untrusted code is a bug: cr_run() must turn
         * bad code into a result. */
        fprintf(stderr, "fuzz: cr_run failed: %s: %s\n", cr_strerror(rc), err.message);
        abort();
    }
    cr_code st = cr_result_status(res);
    const cr_error *e = cr_result_error(res);
    if ((st == CR_OK) != (e == NULL)) abort();         /* an error exactly when not OK */
    if (st == CR_EINTERNAL) {
        fprintf(stderr, "fuzz: internal error: %s\n", e->message);
        abort();
    }
    if (e && (e->line < 0 || e->col < 0 || !memchr(e->message, '\0', sizeof e->message)))
        abort();
    size_t n = 0;
    const char *out = cr_result_stdout(res, &n);
    if (out && strlen(out) > n) abort();
    const char *repr = cr_result_value_repr(res);
    if (repr && !cr_result_value_type(res)) abort();
    for (size_t i = 0; i < cr_result_reason_count(res); i++) {
        int line = 0, col = 0;
        const char *snippet = NULL;
        if (!cr_result_reason(res, i, &line, &col, &snippet)) abort();
    }
    if (!cr_result_json(res)) abort();
    cr_result_free(res);
}

#endif
