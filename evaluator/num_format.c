/* evaluator/num_format.c: format(value, spec), Python's format mini-language on exact values. */
#include "evaluator/num_internal.h"

cr_code num_format(cr_buf *out, const mpq_t v, int is_float, const char *spec, size_t speclen,
                   const num_ctx *ctx, cr_error *err)
{
    CR_UNUSED(out); CR_UNUSED(v); CR_UNUSED(is_float); CR_UNUSED(spec); CR_UNUSED(speclen);
    CR_UNUSED(ctx);
    return cr_error_set(err, CR_EUNSUPPORTED, 0, 0, "format specs are not implemented yet");
}

cr_code num_format_str(cr_buf *out, const char *s, size_t len, const char *spec,
                       size_t speclen, cr_error *err)
{
    CR_UNUSED(out); CR_UNUSED(s); CR_UNUSED(len); CR_UNUSED(spec); CR_UNUSED(speclen);
    return cr_error_set(err, CR_EUNSUPPORTED, 0, 0, "format specs are not implemented yet");
}
