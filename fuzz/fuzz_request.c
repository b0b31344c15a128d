/* fuzz/fuzz_request.c: libFuzzer target for the batch request line (calc-route --batch):
 * cr_request_set_json() decodes it; a request it accepts is run through the whole engine
 * (sandboxes off), so that vars, tables and options from JSON reach the evaluator. */
#include "fuzz/fuzz_engine.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cr_request *req = cr_request_new();
    if (!req) return 0;
    cr_error err = { 0 };
    cr_code rc = cr_request_set_json(req, (const char *)data, size, &err);
    if (rc == CR_OK)
        fuzz_run_checked(req);
    else if (rc == CR_EINTERNAL) {   /* bad input gets a usage error, never a bug */
        fprintf(stderr, "fuzz: cr_request_set_json: %s\n", err.message);
        abort();
    }
    cr_request_free(req);
    return 0;
}
