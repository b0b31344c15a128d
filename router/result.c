/* router/result.c: result accessors and the JSON shape of `calc-route --json`. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "router/router.h"

void cr_result_free(cr_result *res)
{
    if (!res) return;
    free(res->stdout_text);
    free(res->stderr_text);
    free(res->value_repr);
    free(res->value_type);
    free(res->value_fraction);
    free(res->value_from);
    json_decref(res->value_native);
    free(res->value_native_why);
    for (size_t i = 0; i < res->nreasons; i++) {
        free(res->reasons[i].code);
        free(res->reasons[i].snippet);
    }
    free(res->reasons);
    free(res->artifacts_json);
    free(res->dropped_json);
    json_decref(res->sandbox_inputs);
    json_decref(res->artifacts);
    free(res->tier_note);
    free(res->tier_why);
    free(res->start_note);
    free(res->limit_name);
    free(res->json);
    free(res);
}

#define ROUTE_NAME(id, word, route, ops) [CR_ROUTE_##route] = word,
static const char *const route_names[] = {
    [CR_ROUTE_INPROCESS] = "inprocess",
    SANDBOX_TIERS(ROUTE_NAME)
    [CR_ROUTE_REJECTED] = "rejected",
};

const char *cr_route_name(cr_route route)
{
    if ((unsigned)route < sizeof route_names / sizeof route_names[0]) return route_names[route];
    return "unknown";
}

/* The status word of the JSON output; the CLI's exit status follows the same grouping. */
const char *router_status_name(cr_code status)
{
    switch (status) {
    case CR_OK: return "ok";
    case CR_ELIMIT: return "limit";
    case CR_ESYNTAX: return "syntax_error";
    case CR_EUNSUPPORTED:
    case CR_EREJECTED: return "rejected";
    case CR_ESANDBOX: return "sandbox_error";
    case CR_EINTERRUPTED: return "interrupted";
    default: return status >= CR_EPY_BASE && status < CR_EPY_END ? "raised" : "error";
    }
}

cr_route cr_result_route(const cr_result *res) { return res ? res->route : CR_ROUTE_REJECTED; }
cr_code cr_result_status(const cr_result *res) { return res ? res->status : CR_EUSAGE; }

const cr_error *cr_result_error(const cr_result *res)
{
    return res && res->status != CR_OK ? &res->error : NULL;
}

const char *cr_result_stdout(const cr_result *res, size_t *len)
{
    if (len) *len = res && res->stdout_text ? res->stdout_len : 0;
    return res && res->stdout_text ? res->stdout_text : "";
}

const char *cr_result_stderr(const cr_result *res, size_t *len)
{
    if (len) *len = res && res->stderr_text ? res->stderr_len : 0;
    return res && res->stderr_text ? res->stderr_text : "";
}

const char *cr_result_value_repr(const cr_result *res)
{
    return res && res->has_value ? res->value_repr : NULL;
}

const char *cr_result_value_type(const cr_result *res)
{
    return res && res->has_value ? res->value_type : NULL;
}

const char *cr_result_value_fraction(const cr_result *res)
{
    return res && res->has_value ? res->value_fraction : NULL;
}

int cr_result_value_exact(const cr_result *res) { return res && res->has_value && res->value_exact; }

size_t cr_result_reason_count(const cr_result *res) { return res ? res->nreasons : 0; }

const char *cr_result_reason(const cr_result *res, size_t i, int *line, int *col,
                             const char **snippet)
{
    if (!res || i >= res->nreasons) return NULL;
    if (line) *line = res->reasons[i].line;
    if (col) *col = res->reasons[i].col;
    if (snippet) *snippet = res->reasons[i].snippet;
    return res->reasons[i].code;
}

static json_t *artifacts_of(const cr_result *res)
{
    if (!res || !res->artifacts_json) return NULL;
    /* Parsed lazily and cached: most results have no artifacts and never ask. */
    if (!res->artifacts) ((cr_result *)res)->artifacts = json_loads(res->artifacts_json, 0, NULL);
    return res->artifacts;
}

size_t cr_result_artifact_count(const cr_result *res)
{
    json_t *a = artifacts_of(res);
    return a ? json_array_size(a) : 0;
}

const char *cr_result_artifact(const cr_result *res, size_t i, uint64_t *size,
                               const char **sha256)
{
    json_t *a = artifacts_of(res), *x = a ? json_array_get(a, i) : NULL;
    if (!x) return NULL;
    if (size) *size = (uint64_t)json_integer_value(json_object_get(x, "size"));
    if (sha256) *sha256 = json_string_value(json_object_get(x, "sha256"));
    return json_string_value(json_object_get(x, "name"));
}

uint64_t cr_result_audit_seq(const cr_result *res) { return res ? res->audit_seq : 0; }

const char *cr_result_audit_hash(const cr_result *res)
{
    return res && res->audit_seq ? res->audit_hash : NULL;
}

/* A non-finite figure would make jansson refuse the number: null says "not measured". */
static json_t *real_or_null(double x) { return isfinite(x) ? json_real(x) : json_null(); }

/* The error and limit members: {type or name, message, line, col}. */
static json_t *error_json(const char *key, const char *first, const cr_error *e)
{
    json_t *o = json_object();
    int failed = !o;
    cr_json_set(o, key, cr_json_str(first), &failed);
    cr_json_set(o, "message", cr_json_str(e->message), &failed);
    cr_json_set(o, "line", json_integer(e->line), &failed);
    cr_json_set(o, "col", json_integer(e->col), &failed);
    if (failed) json_decref(o);
    return failed ? NULL : o;
}

/* Builds the JSON object, every member present; NULL only when out of memory. Text that came
 * from the code may hold any bytes: cr_json_text() replaces what is not UTF-8, and the
 * stdout_replaced and stderr_replaced flags say so (the exact bytes stay in
 * cr_result_stdout(), cr_result_stderr() and the audit record). */
json_t *router_result_to_json(const cr_result *res)
{
    static const char *const langs[] = {"auto", "python", "dsl"};
    json_t *o = json_object();
    int failed = !o, out_rep = 0, err_rep = 0;
    cr_json_set(o, "route", json_string(cr_route_name(res->route)), &failed);
    /* An explanation ran nothing: its status says so rather than "ok", and its timings have
     * no sandbox figures (no sandbox started, none was warm or cold). */
    cr_json_set(o, "status", json_string(res->explained ? "explained"
                                                        : router_status_name(res->status)),
                &failed);
    cr_json_set(o, "lang", json_string(langs[res->lang]), &failed);
    json_t *reasons = json_array();
    for (size_t i = 0; i < res->nreasons && reasons; i++) {
        json_t *r = json_object();
        cr_json_set(r, "code", cr_json_str(res->reasons[i].code), &failed);
        cr_json_set(r, "line", json_integer(res->reasons[i].line), &failed);
        cr_json_set(r, "col", json_integer(res->reasons[i].col), &failed);
        cr_json_set(r, "snippet", cr_json_str(res->reasons[i].snippet), &failed);
        cr_json_append(reasons, r, &failed);
    }
    cr_json_set(o, "reasons", reasons, &failed);
    json_t *v = json_null();
    if (res->has_value) {
        v = json_object();
        cr_json_set(v, "repr", cr_json_str(res->value_repr), &failed);
        cr_json_set(v, "type", cr_json_str(res->value_type), &failed);
        cr_json_set(v, "fraction", cr_json_str(res->value_fraction), &failed);
        cr_json_set(v, "exact", json_boolean(res->value_exact), &failed);
        cr_json_set(v, "from", cr_json_str(res->value_from), &failed);
        cr_json_set(v, "native", res->value_native ? json_incref(res->value_native) : json_null(),
                    &failed);
        cr_json_set(v, "native_why", cr_json_str(res->value_native_why), &failed);
    }
    cr_json_set(o, "value", v, &failed);
    cr_json_set(o, "stdout", cr_json_text(res->stdout_text, res->stdout_text ? res->stdout_len : 0, &out_rep),
                &failed);
    cr_json_set(o, "stdout_truncated", json_boolean(res->stdout_truncated), &failed);
    cr_json_set(o, "stdout_replaced", json_boolean(out_rep), &failed);
    cr_json_set(o, "stderr",
                cr_json_text(res->stderr_text, res->stderr_text ? res->stderr_len : 0, &err_rep), &failed);
    cr_json_set(o, "stderr_replaced", json_boolean(err_rep), &failed);
    cr_json_set(o, "error", res->status != CR_OK && res->status != CR_ELIMIT
                                ? error_json("type", res->error.type[0] ? res->error.type
                                                     : cr_strerror(res->status), &res->error)
                                : json_null(), &failed);
    cr_json_set(o, "limit", res->status == CR_ELIMIT
                                ? error_json("name", res->limit_name ? res->limit_name
                                                     : "evaluator", &res->error)
                                : json_null(), &failed);
    /* Built by the router from cr_json_text() strings, so it always parses. */
    cr_json_set(o, "artifacts", res->artifacts_json ? json_loads(res->artifacts_json, 0, NULL)
                                                    : json_array(), &failed);
    json_t *tm = json_object();
    cr_json_set(tm, "parse_us", real_or_null(res->parse_us), &failed);
    cr_json_set(tm, "eval_us", real_or_null(res->eval_us), &failed);
    cr_json_set(tm, "total_us", real_or_null(res->total_us), &failed);
    if (sandbox_route_tier(res->route) != CR_TIER_NONE && !res->explained) {
        cr_json_set(tm, "sandbox_wall_s", real_or_null(res->sandbox_wall_s), &failed);
        cr_json_set(tm, "sandbox_cpu_s", real_or_null(res->sandbox_cpu_s), &failed);
        /* Warm: a pool's worker ran it, and the two figures above count from its handoff. */
        cr_json_set(tm, "sandbox_start", json_string(res->sandbox_warm ? "warm" : "cold"), &failed);
        if (res->start_note)
            cr_json_set(tm, "sandbox_start_note", json_string(res->start_note), &failed);
        cr_json_set(tm, "peak_memory_bytes", json_integer((json_int_t)res->peak_memory), &failed);
    }
    cr_json_set(o, "timings", tm, &failed);
    cr_json_set(o, "tier_note", cr_json_str(res->tier_note), &failed);
    cr_json_set(o, "tier_why", cr_json_str(res->tier_why), &failed);
    cr_json_set(o, "dropped", res->dropped_json ? json_loads(res->dropped_json, 0, NULL)
                                                : json_null(), &failed);
    cr_json_set(o, "seed", res->has_seed ? json_integer(res->seed) : json_null(), &failed);
    cr_json_set(o, "ops", json_integer((json_int_t)res->ops), &failed);
    cr_json_set(o, "explained", json_boolean(res->explained), &failed);
    json_t *audit = json_null();
    if (res->audit_seq) {
        audit = json_object();
        cr_json_set(audit, "seq", json_integer((json_int_t)res->audit_seq), &failed);
        cr_json_set(audit, "hash", json_string(res->audit_hash), &failed);
    }
    cr_json_set(o, "audit", audit, &failed);
    if (failed) json_decref(o);
    return failed ? NULL : o;
}

const char *cr_result_json(const cr_result *res)
{
    if (!res) return NULL;
    if (!res->json) {
        json_t *o = router_result_to_json(res);
        if (!o) return NULL;
        /* The only reals are timings: six significant digits, not a double's seventeen
         * ("parse_us":393.638, not 393.63799667358398). */
        ((cr_result *)res)->json =
            json_dumps(o, JSON_COMPACT | JSON_ENSURE_ASCII | JSON_REAL_PRECISION(6));
        json_decref(o);
    }
    return res->json;
}
