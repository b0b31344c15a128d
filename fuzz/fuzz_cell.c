/* fuzz/fuzz_cell.c: libFuzzer target for table cells as filings write them (dsl_cell_parse).
 * Besides crashes: a cell that reads must come out as a plain signed decimal ("-12.5",
 * "0.125"), which the evaluator then takes as exact; one that does not must say why. */
#include <stdint.h>
#include <stdlib.h>

#include "dsl/dsl.h"

/* -?[0-9]+(\.[0-9]+)? */
static int cell_is_decimal(const char *s, size_t len)
{
    size_t i = 0, digits = 0;
    if (i < len && s[i] == '-') i++;
    while (i < len && s[i] >= '0' && s[i] <= '9') i++, digits++;
    if (!digits) return 0;
    if (i < len && s[i] == '.') {
        size_t frac = 0;
        for (i++; i < len && s[i] >= '0' && s[i] <= '9'; i++) frac++;
        if (!frac) return 0;
    }
    return i == len;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cr_buf b;
    cr_error err = { 0 };
    cr_buf_init(&b, 0);
    cr_code rc = dsl_cell_parse((const char *)data, size, &b, &err);
    if (rc == CR_OK) {
        if (!b.p || !cell_is_decimal(b.p, b.len)) abort();
    } else if (rc != CR_EUSAGE || err.code != rc || !err.message[0]) {
        abort();
    }
    cr_buf_free(&b);
    return 0;
}
