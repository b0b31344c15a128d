/* Using libcalcroute from C: one engine, one request, the exact answer.
 *     cc embed.c $(pkg-config --cflags --libs calcroute) -o embed && ./embed */
#include <calcroute.h>
#include <stdio.h>
#include <string.h>

int main(void)
{
    cr_error err = {0};
    cr_config *cfg = cr_config_new();
    if (!cfg) return 1;
    /* in-process only: reject anything else */
    cr_engine *engine = cr_config_set(cfg, "tier", "none", &err) == CR_OK
                        ? cr_engine_open(cfg, &err) : NULL;
    cr_config_free(cfg);                     /* the engine keeps its own copy */
    if (!engine) {
        fprintf(stderr, "engine: %s\n", err.message);
        return 1;
    }
    const char *code = "growth = (revenue_2023 - revenue_2022) / revenue_2022\n"
                       "ans = round(growth * 100, 2)\n";
    cr_request *req = cr_request_new();
    cr_request_set_code(req, code, strlen(code));
    cr_request_set_var(req, "revenue_2022", "5735", &err);
    cr_request_set_var(req, "revenue_2023", "5829", &err);
    cr_result *res = NULL;
    int rc = 1;
    if (cr_run(engine, req, &res, &err) != CR_OK) {
        fprintf(stderr, "run: %s\n", err.message);
    } else if (cr_result_status(res) != CR_OK) {
        const cr_error *e = cr_result_error(res);
        fprintf(stderr, "%s: %s at %d:%d\n", e->type, e->message, e->line, e->col);
    } else {
        printf("%s = %s (%s)\n", cr_route_name(cr_result_route(res)), cr_result_value_repr(res),
               cr_result_value_fraction(res));
        rc = 0;
    }
    cr_result_free(res);
    cr_request_free(req);
    cr_engine_close(engine);
    return rc;
}
