/* cli/line.c: one request line in, one result line out (cli/line.h). */
#include "cli/line.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "common/json.h"

cr_code cr_line_request(const char *line, size_t n, cr_line_defaults defaults,
                        cr_request **req, cr_error *e)
{
    *req = cr_request_new();
    cr_code rc = !*req ? cr_error_set(e, CR_ENOMEM, 0, 0, "out of memory")
               : defaults ? defaults(*req, e) : CR_OK;
    return rc == CR_OK ? cr_request_set_json(*req, line, n, e) : rc;
}

char *cr_line_error(const char *id_text, const char *status, const char *type,
                    const char *message, int line, int col)
{
    json_t *o = json_object(), *eo = json_object();
    int failed = !o;
    cr_json_set(o, "status", json_string(status), &failed);
    cr_json_set(eo, "type", json_string(type), &failed);
    cr_json_set(eo, "message", cr_json_str(message), &failed);
    cr_json_set(eo, "line", json_integer(line), &failed);
    cr_json_set(eo, "col", json_integer(col), &failed);
    cr_json_set(o, "error", eo, &failed);
    char *js = failed ? NULL : json_dumps(o, JSON_COMPACT | JSON_ENSURE_ASCII), *out = NULL;
    json_decref(o);
    if (js && asprintf(&out, "{\"id\":%s,%s", id_text ? id_text : "null", js + 1) < 0)
        out = NULL;
    free(js);
    return out;
}

char *cr_line_result(cr_engine *engine, const char *line, size_t n, const char *refuse,
                     int explain, cr_line_defaults defaults, cr_line_info *info)
{
    cr_error e = {0};
    char *out = NULL;
    cr_request *req = NULL;
    cr_result *res = NULL;
    cr_code set;
    memset(info, 0, sizeof *info);
    if (refuse) {
        set = cr_error_set(&e, CR_EUSAGE, 0, 0, "%s", refuse);
        req = cr_request_new();
    } else
        set = cr_line_request(line, n, defaults, &req, &e);
    if (set == CR_OK && explain) set = cr_request_set_explain(req, 1);
    /* The caller's id, echoed as written so results can be matched to requests. */
    const char *id_text = req ? cr_request_id(req) : NULL;
    if (set == CR_OK && cr_run(engine, req, &res, &e) == CR_OK) {
        const char *js = cr_result_json(res);
        info->route = cr_result_route(res);
        info->status = cr_result_status(res);
        info->audited = cr_result_audit_seq(res) != 0;
        if (js && asprintf(&out, "{\"id\":%s,%s", id_text ? id_text : "null", js + 1) < 0)
            out = NULL;
        if (!js) {
            if (asprintf(&out, "{\"id\":%s,\"status\":\"engine_error\"}",
                         id_text ? id_text : "null") < 0)
                out = NULL;
            info->outcome = CR_LINE_ENGINE;
            info->reason = "engine_error";
        }
    } else {
        info->outcome = set == CR_OK ? CR_LINE_ENGINE : CR_LINE_BAD;
        info->reason = set != CR_OK ? "bad_request"
                     : e.code == CR_EAUDIT ? "ledger_unavailable"
                     : e.code == CR_EBUSY && strncmp(e.message, "queue_timeout", 13) == 0
                         ? "queue_timeout"
                     : e.code == CR_EBUSY ? "queue_full" : "engine_error";
        out = cr_line_error(id_text, info->reason,
                            set == CR_OK ? cr_strerror(e.code) : "UsageError", e.message,
                            e.line, e.col);
        if (!out) out = strdup("{\"status\":\"engine_error\"}");
    }
    cr_result_free(res);
    cr_request_free(req);
    return out;
}
