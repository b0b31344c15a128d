/* fuzz/fuzz_format.c: libFuzzer target for format specs, format(value, spec) for numbers
 * and strings (num_format, num_format_str). The first byte picks one of a few fixed values;
 * the rest is the spec. Besides crashes, a failure must come with its own code and message. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "evaluator/num/num.h"

static const struct {
    const char *q;      /* mpq_set_str text */
    int is_float;
} FORMAT_VALUES[] = {
    { "0", 0 }, { "7", 0 }, { "-1234567", 0 }, { "123456789012345678901234567890", 0 },
    { "0", 1 }, { "1/10", 1 }, { "1/3", 1 }, { "-2675/1000", 1 }, { "100000000000000000000", 1 },
    { "1/1000000000000000000000000000000", 1 }, { "-987654321/8", 1 }, { "5", 1 },
};
#define NVALUES (sizeof FORMAT_VALUES / sizeof FORMAT_VALUES[0])
static const char FORMAT_STR[] = "na\xc3\xafve \xe2\x82\xac";   /* "naïve €" */

static void format_check(cr_code rc, const cr_buf *b, const cr_error *err)
{
    if (rc == CR_OK) {
        if (!b->p && b->len) abort();
        return;
    }
    if (rc != CR_EPY_VALUE && rc != CR_EPY_TYPE && rc != CR_EPY_OVERFLOW && rc != CR_ELIMIT &&
        rc != CR_ENOMEM)
        abort();
    if (rc != CR_ENOMEM && (err->code != rc || !err->message[0])) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static mpq_t values[NVALUES];
    static int ready;
    static num_ctx ctx;
    if (!ready) {
        cr_policy pol;
        cr_policy_default(&pol);
        num_ctx_from_policy(&ctx, &pol);
        for (size_t i = 0; i < NVALUES; i++) {
            mpq_init(values[i]);
            mpq_set_str(values[i], FORMAT_VALUES[i].q, 10);
            mpq_canonicalize(values[i]);
        }
        ready = 1;
    }
    if (size == 0) return 0;
    size_t pick = data[0] % NVALUES;
    const char *spec = (const char *)data + 1;
    size_t speclen = size - 1;

    cr_buf b;
    cr_error err = { 0 };
    cr_buf_init(&b, 1u << 22);
    format_check(num_format(&b, values[pick], FORMAT_VALUES[pick].is_float, spec, speclen,
                            &ctx, &err), &b, &err);
    cr_buf_reset(&b);
    memset(&err, 0, sizeof err);
    format_check(num_format_str(&b, FORMAT_STR, sizeof FORMAT_STR - 1, spec, speclen, &err),
                 &b, &err);
    cr_buf_free(&b);
    return 0;
}
