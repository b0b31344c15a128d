/* sandbox/sandbox.c: what both tiers share: defaults, dispatch, the job encoding the runner
 * reads, the report it writes back, and the outcome's memory. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox/sandbox.h"

#define REPORT_FIELD_MAX (64u << 20)

const char *sandbox_limit_name(sandbox_limit limit)
{
    static const char *const names[] = {
        [SANDBOX_LIMIT_NONE] = "none",     [SANDBOX_LIMIT_WALL] = "wall",
        [SANDBOX_LIMIT_CPU] = "cpu",       [SANDBOX_LIMIT_MEMORY] = "memory",
        [SANDBOX_LIMIT_PROCS] = "procs",   [SANDBOX_LIMIT_OUTPUT] = "output",
        [SANDBOX_LIMIT_DISK] = "disk",     [SANDBOX_LIMIT_ARTIFACTS] = "artifacts",
    };
    if ((unsigned)limit < sizeof names / sizeof names[0] && names[limit]) return names[limit];
    return "unknown";
}

void sandbox_limits_resolve(sandbox_limits *lim)
{
    if (!(lim->wall_s > 0)) lim->wall_s = 10.0;
    if (!(lim->cpu_s > 0)) lim->cpu_s = lim->wall_s;
    if (!lim->memory_bytes) lim->memory_bytes = 512ull << 20;
    if (!lim->max_procs) lim->max_procs = 64;
    if (!lim->max_stdout) lim->max_stdout = 1u << 20;
    if (!lim->max_stderr) lim->max_stderr = 256u << 10;
    if (!lim->tmp_bytes) lim->tmp_bytes = 64ull << 20;
    if (!lim->artifact_bytes) lim->artifact_bytes = 64ull << 20;
    if (!lim->max_artifacts) lim->max_artifacts = 64;
}

void sandbox_job_init(sandbox_job *job)
{
    memset(job, 0, sizeof *job);
    job->tier = CR_TIER_AUTO;
    job->interpreter = SANDBOX_DEFAULT_INTERPRETER;
    sandbox_limits_resolve(&job->limits);
}

void sandbox_outcome_free(sandbox_outcome *out)
{
    if (!out) return;
    cr_buf_free(&out->stdout_buf);
    cr_buf_free(&out->stderr_buf);
    free(out->value_repr);
    free(out->value_type);
    free(out->value_decimal);
    free(out->value_source);
    free(out->error_type);
    free(out->error_message);
    for (size_t i = 0; i < out->artifact_count; i++) {
        free(out->artifacts[i].name);
        free(out->artifacts[i].path);
    }
    free(out->artifacts);
    memset(out, 0, sizeof *out);
}

int sandbox_tier_available(cr_tier tier, char *why, size_t why_len)
{
    char tmp[256];
    if (!why || !why_len) { why = tmp; why_len = sizeof tmp; }
    why[0] = 0;
    switch (tier) {
    case CR_TIER_NS: return sandbox_ns_available(why, why_len);
    case CR_TIER_KVM: return sandbox_kvm_available(why, why_len);
    case CR_TIER_AUTO: {
        char kwhy[256];
        if (sandbox_kvm_available(kwhy, sizeof kwhy)) return 1;
        if (sandbox_ns_available(why, why_len)) { why[0] = 0; return 1; }
        return 0;
    }
    default:
        snprintf(why, why_len, "no sandbox tier (policy forbids sandboxes)");
        return 0;
    }
}

cr_tier sandbox_tier_auto(char *why, size_t why_len)
{
    char kwhy[200] = "";
    char tmp[256];
    if (!why || !why_len) { why = tmp; why_len = sizeof tmp; }
    if (sandbox_kvm_available(kwhy, sizeof kwhy)) {
        snprintf(why, why_len, "kvm: /dev/kvm runs a guest");
        return CR_TIER_KVM;
    }
    snprintf(why, why_len, "ns: kvm unavailable (%s)", kwhy);
    return CR_TIER_NS;
}

cr_code sandbox_run(const sandbox_job *job, sandbox_outcome *out, cr_error *err)
{
    char why[256] = "";
    cr_tier tier;
    cr_code rc;

    memset(out, 0, sizeof *out);
    if (!job || (!job->code && job->code_len))
        return cr_error_set(err, CR_EUSAGE, 0, 0, "sandbox: no code");
    tier = job->tier;
    if (tier == CR_TIER_AUTO) tier = sandbox_tier_auto(why, sizeof why);
    switch (tier) {
    case CR_TIER_NS: rc = sandbox_ns_run(job, out, err); break;
    case CR_TIER_KVM: rc = sandbox_kvm_run(job, out, err); break;
    default:
        return cr_error_set(err, CR_EUSAGE, 0, 0, "sandbox: tier %d is not a sandbox", (int)tier);
    }
    if (rc == CR_OK && job->tier == CR_TIER_AUTO && !out->tier_note[0])
        snprintf(out->tier_note, sizeof out->tier_note, "%s", why);
    return rc;
}

/* ---- records: "<key> <length>\n<bytes>\n" --------------------------------------------- */

static cr_code put_record(cr_buf *b, const char *key, const char *val, size_t len)
{
    cr_code rc;
    if ((rc = cr_buf_printf(b, "%s %zu\n", key, len)) != CR_OK) return rc;
    if ((rc = cr_buf_put(b, val, len)) != CR_OK) return rc;
    return cr_buf_putc(b, '\n');
}

cr_code sandbox_job_encode(const sandbox_job *job, cr_buf *buf, cr_error *err)
{
    cr_code rc;
    if ((rc = put_record(buf, "code", job->code ? job->code : "", job->code_len)) != CR_OK)
        goto fail;
    for (size_t i = 0; job->answer_vars && job->answer_vars[i] && i < 64; i++)
        if ((rc = put_record(buf, "var", job->answer_vars[i], strlen(job->answer_vars[i])))
            != CR_OK)
            goto fail;
    if (job->globals_json &&
        (rc = put_record(buf, "globals", job->globals_json, strlen(job->globals_json))) != CR_OK)
        goto fail;
    return CR_OK;
fail:
    return cr_error_set(err, rc, 0, 0, "sandbox: encoding the job: %s", cr_strerror(rc));
}

static int key_is(const char *k, size_t klen, const char *want)
{
    return klen == strlen(want) && memcmp(k, want, klen) == 0;
}

static char *dup_field(const char *p, size_t n)
{
    char *s = malloc(n + 1);
    if (s) { memcpy(s, p, n); s[n] = 0; }
    return s;
}

static int small_int(const char *p, size_t n)
{
    long v = 0;
    for (size_t i = 0; i < n && i < 9; i++) {
        if (p[i] < '0' || p[i] > '9') return 0;
        v = v * 10 + (p[i] - '0');
    }
    return (int)v;
}

cr_code sandbox_report_parse(const char *buf, size_t len, sandbox_outcome *out, cr_error *err)
{
    size_t i = 0;
    int err_no = 0, out_file = 0;

    while (i < len) {
        const char *nl = memchr(buf + i, '\n', len - i), *sp, *val;
        size_t klen, n = 0, j;
        char **slot = NULL;
        if (!nl) break;
        sp = memchr(buf + i, ' ', (size_t)(nl - (buf + i)));
        if (!sp || sp == buf + i) break;
        klen = (size_t)(sp - (buf + i));
        for (j = 1; sp + j < nl; j++) {
            if (sp[j] < '0' || sp[j] > '9' || n > REPORT_FIELD_MAX) break;
            n = n * 10 + (size_t)(sp[j] - '0');
        }
        if (sp + j != nl || j == 1 || n > REPORT_FIELD_MAX) break;
        val = nl + 1;
        if ((size_t)(val - buf) + n + 1 > len || val[n] != '\n') break;
        const char *k = buf + i;
        if (key_is(k, klen, "value.repr")) slot = &out->value_repr;
        else if (key_is(k, klen, "value.type")) slot = &out->value_type;
        else if (key_is(k, klen, "value.decimal")) slot = &out->value_decimal;
        else if (key_is(k, klen, "value.source")) slot = &out->value_source;
        else if (key_is(k, klen, "error.type")) slot = &out->error_type;
        else if (key_is(k, klen, "error.message")) slot = &out->error_message;
        else if (key_is(k, klen, "error.line")) out->error_line = small_int(val, n);
        else if (key_is(k, klen, "error.col")) out->error_col = small_int(val, n);
        else if (key_is(k, klen, "error.errno")) err_no = small_int(val, n);
        else if (key_is(k, klen, "error.filename"))
            out_file = n >= 4 && memcmp(val, "/out", 4) == 0 && (n == 4 || val[4] == '/');
        if (slot) {
            free(*slot);
            if (!(*slot = dup_field(val, n)))
                return cr_error_set(err, CR_ENOMEM, 0, 0, "sandbox: report field");
        }
        i = (size_t)(val - buf) + n + 1;
    }
    out->has_value = out->value_repr != NULL && out->value_type != NULL;
    out->raised = out->error_type != NULL;
    if (out->raised && !out->error_message && !(out->error_message = dup_field("", 0)))
        return cr_error_set(err, CR_ENOMEM, 0, 0, "sandbox: report field");
    if (out->raised && out->limit == SANDBOX_LIMIT_NONE) {
        if (strcmp(out->error_type, "MemoryError") == 0) {
            out->limit = SANDBOX_LIMIT_MEMORY;
            snprintf(out->limit_detail, sizeof out->limit_detail, "the code got MemoryError");
        } else if (err_no == ENOSPC || err_no == EFBIG) {
            out->limit = out_file ? SANDBOX_LIMIT_ARTIFACTS : SANDBOX_LIMIT_DISK;
            snprintf(out->limit_detail, sizeof out->limit_detail, "%s full (%s)",
                     out_file ? "/out" : "a sandbox filesystem",
                     err_no == ENOSPC ? "ENOSPC" : "EFBIG");
        }
    }
    return CR_OK;
}

void sandbox_out_full(sandbox_outcome *out, const sandbox_limits *lim)
{
    /* A write error has no file name; a full /out tells which filesystem it was. */
    if (out->limit != SANDBOX_LIMIT_DISK) return;
    out->limit = SANDBOX_LIMIT_ARTIFACTS;
    snprintf(out->limit_detail, sizeof out->limit_detail, "/out full (%llu bytes)",
             (unsigned long long)lim->artifact_bytes);
}
