/* fuzz/fuzz_engine.h: the engine the whole-pipeline fuzz targets share (fuzz_python.c,
 * fuzz_dsl_eval.c, fuzz_request.c) and the checks every cr_run() outcome must pass.
 * Included once per target, and all at once by tests/test_fuzz_regressions.c. */
#ifndef CR_FUZZ_ENGINE_H
#define CR_FUZZ_ENGINE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "calcroute.h"

/* Sandboxes off: code outside the subset is rejected, so no input ever leaves the process.
 * Limits are the defaults scaled down so that one input costs milliseconds, not seconds;
 * every limit is still reachable and its error path exercised. */
static cr_engine *fuzz_engine_at(int precision)
{
    static cr_engine *engines[2];
    cr_engine **ep = &engines[precision != 0];
    cr_engine *e = *ep;
    if (e) return e;
    /* timeout 2: a run that outlives its steps is a finding, not a stall */
    static const char *const opts[][2] = {
        {"tier", "none"}, {"max_source", "65536"}, {"max_steps", "200000"},
        {"max_int_bits", "65536"}, {"max_str_len", "262144"}, {"max_stdout", "65536"},
        {"max_eval_memory", "33554432"}, {"timeout", "2"},
    };
    cr_config *cfg = cr_config_new();
    cr_error err = { 0 };
    char prec[16];
    snprintf(prec, sizeof prec, "%d", precision ? precision : 34);
    for (size_t i = 0; cfg && i < sizeof opts / sizeof opts[0] && err.code == CR_OK; i++)
        cr_config_set(cfg, opts[i][0], opts[i][1], &err);
    if (!cfg || err.code != CR_OK || cr_config_set(cfg, "precision", prec, &err) != CR_OK ||
        !(e = cr_engine_open(cfg, &err))) {
        fprintf(stderr, "fuzz: engine: %s\n", cfg ? err.message : "out of memory");
        abort();
    }
    cr_config_free(cfg);
    return *ep = e;
}

static cr_engine *fuzz_engine(void) { return fuzz_engine_at(0); }

/* A value marked exact cannot depend on the precision of rounded results: run again at
 * another precision, and an exact numeric answer there must be the same fraction. An
 * answer that an inexact value decided (int(math.sqrt(2) ** 2)) fails this when marked
 * exact. Runs that end otherwise (a limit) prove nothing either way. */
static void fuzz_check_exact(const cr_request *req, const cr_result *res)
{
    const char *frac = cr_result_value_fraction(res);
    if (!frac || !cr_result_value_exact(res)) return;
    cr_result *again = NULL;
    cr_error err = { 0 };
    if (cr_run(fuzz_engine_at(35), req, &again, &err) != CR_OK) return;
    const char *f2 = cr_result_value_fraction(again);
    if (cr_result_status(again) == CR_OK && f2 && cr_result_value_exact(again) &&
        strcmp(frac, f2) != 0) {
        fprintf(stderr, "fuzz: exact value %s at precision 34 but %s at 35\n", frac, f2);
        abort();
    }
    cr_result_free(again);
}

/* The JSON of a result must parse and hold every member with its type (a member jansson
 * refused used to vanish silently), and its stdout must be the result's own bytes unless it
 * says they were replaced. Aborts otherwise. */
static void fuzz_check_json(const cr_result *res)
{
    static const struct { const char *name; unsigned types; } members[] = {
#define T(t) (1u << JSON_##t)
        { "route", T(STRING) }, { "status", T(STRING) }, { "lang", T(STRING) },
        { "reasons", T(ARRAY) }, { "value", T(OBJECT) | T(NULL) }, { "stdout", T(STRING) },
        { "stdout_truncated", T(TRUE) | T(FALSE) }, { "stdout_replaced", T(TRUE) | T(FALSE) },
        { "stderr", T(STRING) }, { "stderr_replaced", T(TRUE) | T(FALSE) },
        { "error", T(OBJECT) | T(NULL) }, { "limit", T(OBJECT) | T(NULL) },
        { "artifacts", T(ARRAY) }, { "timings", T(OBJECT) }, { "tier_note", T(STRING) | T(NULL) },
        { "ops", T(INTEGER) }, { "explained", T(TRUE) | T(FALSE) },
        { "audit", T(OBJECT) | T(NULL) },
#undef T
    };
    const char *text = cr_result_json(res);
    json_t *j = text ? json_loads(text, JSON_ALLOW_NUL, NULL) : NULL;
    if (!j) abort();
    for (size_t i = 0; i < sizeof members / sizeof members[0]; i++) {
        json_t *v = json_object_get(j, members[i].name);
        if (!v || !(members[i].types & (1u << json_typeof(v)))) {
            fprintf(stderr, "fuzz: result JSON: member %s missing or mistyped\n", members[i].name);
            abort();
        }
    }
    size_t n = 0;
    const char *out = cr_result_stdout(res, &n);
    json_t *js = json_object_get(j, "stdout");
    if (!json_is_true(json_object_get(j, "stdout_replaced")) &&
        (json_string_length(js) != n || memcmp(json_string_value(js), out, n) != 0))
        abort();
    cr_code st = cr_result_status(res);
    if (json_is_null(json_object_get(j, "error")) != (st == CR_OK || st == CR_ELIMIT)) abort();
    if (json_array_size(json_object_get(j, "reasons")) != cr_result_reason_count(res)) abort();
    json_decref(j);
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
    fuzz_check_json(res);
    if (st == CR_OK) fuzz_check_exact(req, res);
    cr_result_free(res);
}

#endif
