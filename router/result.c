/* router/result.c: result accessors and the JSON shape of `calc-route --json`. */
#include <stdlib.h>
#include <string.h>

#include "router/router.h"

void cr_result_free(cr_result *res)
{
    if (!res) return;
    free(res->out);
    free(res->err_text);
    free(res->value_repr);
    free(res->value_type);
    free(res->value_fraction);
    free(res->value_from);
    for (size_t i = 0; i < res->nreasons; i++) {
        free(res->reasons[i].code);
        free(res->reasons[i].snippet);
    }
    free(res->reasons);
    free(res->artifacts_json);
    json_decref(res->artifacts);
    free(res->tier_note);
    free(res->limit_name);
    free(res->json);
    free(res);
}

static const char *const route_names[] = {
    [CR_ROUTE_INPROCESS] = "inprocess",
    [CR_ROUTE_NS] = "ns",
    [CR_ROUTE_KVM] = "kvm",
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
    if (len) *len = res && res->out ? res->out_len : 0;
    return res && res->out ? res->out : "";
}

const char *cr_result_stderr(const cr_result *res, size_t *len)
{
    if (len) *len = res && res->err_text ? res->err_len : 0;
    return res && res->err_text ? res->err_text : "";
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

static json_t *str_or_null(const char *s) { return s ? json_string(s) : json_null(); }

/* Builds the JSON object; NULL only when out of memory. */
json_t *router_result_to_json(const cr_result *res)
{
    json_t *o = json_object();
    if (!o) return NULL;
    static const char *const langs[] = {"auto", "python", "dsl"};
    json_object_set_new(o, "route", json_string(cr_route_name(res->route)));
    json_object_set_new(o, "status", json_string(router_status_name(res->status)));
    json_object_set_new(o, "lang", json_string(langs[res->lang]));
    json_t *reasons = json_array();
    for (size_t i = 0; i < res->nreasons; i++)
        json_array_append_new(reasons, json_pack("{s:s, s:i, s:i, s:s}",
                                                 "code", res->reasons[i].code,
                                                 "line", res->reasons[i].line,
                                                 "col", res->reasons[i].col,
                                                 "snippet", res->reasons[i].snippet));
    json_object_set_new(o, "reasons", reasons);
    if (res->has_value) {
        json_t *v = json_object();
        json_object_set_new(v, "repr", json_string(res->value_repr));
        json_object_set_new(v, "type", json_string(res->value_type));
        json_object_set_new(v, "fraction", str_or_null(res->value_fraction));
        json_object_set_new(v, "exact", json_boolean(res->value_exact));
        json_object_set_new(v, "from", str_or_null(res->value_from));
        json_object_set_new(o, "value", v);
    } else {
        json_object_set_new(o, "value", json_null());
    }
    json_object_set_new(o, "stdout", json_stringn(res->out ? res->out : "", res->out_len));
    json_object_set_new(o, "stdout_truncated", json_boolean(res->out_truncated));
    json_object_set_new(o, "stderr",
                        json_stringn(res->err_text ? res->err_text : "", res->err_len));
    if (res->status != CR_OK && res->status != CR_ELIMIT) {
        json_object_set_new(o, "error", json_pack("{s:s, s:s, s:i, s:i}",
                                                  "type", res->error.type[0] ? res->error.type
                                                                 : cr_strerror(res->status),
                                                  "message", res->error.message,
                                                  "line", res->error.line,
                                                  "col", res->error.col));
    } else {
        json_object_set_new(o, "error", json_null());
    }
    json_object_set_new(o, "limit", res->status == CR_ELIMIT
                                        ? json_pack("{s:s, s:s, s:i, s:i}",
                                                    "name", res->limit_name ? res->limit_name
                                                                            : "evaluator",
                                                    "message", res->error.message,
                                                    "line", res->error.line,
                                                    "col", res->error.col)
                                        : json_null());
    json_t *arts = res->artifacts_json ? json_loads(res->artifacts_json, 0, NULL) : NULL;
    json_object_set_new(o, "artifacts", arts ? arts : json_array());
    json_t *tm = json_pack("{s:f, s:f, s:f}", "parse_us", res->parse_us, "eval_us",
                           res->eval_us, "total_us", res->total_us);
    if (res->route == CR_ROUTE_NS || res->route == CR_ROUTE_KVM) {
        json_object_set_new(tm, "sandbox_wall_s", json_real(res->sandbox_wall_s));
        json_object_set_new(tm, "sandbox_cpu_s", json_real(res->sandbox_cpu_s));
        json_object_set_new(tm, "peak_memory_bytes", json_integer((json_int_t)res->peak_memory));
    }
    json_object_set_new(o, "timings", tm);
    json_object_set_new(o, "tier_note", res->tier_note ? json_string(res->tier_note)
                                                        : json_null());
    json_object_set_new(o, "ops", json_integer((json_int_t)res->ops));
    json_object_set_new(o, "explained", json_boolean(res->explained));
    json_object_set_new(o, "audit", res->audit_seq
                                        ? json_pack("{s:I, s:s}", "seq",
                                                    (json_int_t)res->audit_seq,
                                                    "hash", res->audit_hash)
                                        : json_null());
    return o;
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
