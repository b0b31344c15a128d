/* fuzz/fuzz_python.c: libFuzzer target for the whole engine on Python source: parse, route,
 * evaluate in-process and build the result (cr_run with sandboxes off). Crashes, leaks,
 * hangs, UB reports and broken result invariants (fuzz_engine.h) are the failures. */
#include "fuzz/fuzz_engine.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cr_request *req = cr_request_new();
    if (!req) return 0;
    if (cr_request_set_code(req, (const char *)data, size) == CR_OK &&
        cr_request_set_lang(req, CR_LANG_PYTHON) == CR_OK)
        fuzz_run_checked(req);
    cr_request_free(req);
    return 0;
}
