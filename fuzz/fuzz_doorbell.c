/* fuzz/fuzz_doorbell.c: the kvm tier's result page, which the guest owns from boot to the
 * doorbell: everything the host reads there is untrusted. The target runs what the host runs
 * after a ring, without a VM: vmm_page_parse() over the region (the header copied once, every
 * span checked against the region and the limits), then kvm_tier's kvm_take_result() (the
 * limit's value checked, the runner's report parsed by sandbox_report_parse()).
 *
 * The input is XORed onto a well-formed page (header, stdout, stderr and a report with a
 * value and an exception), so the empty input is a good result and each mutation is a guest
 * that changed some bytes: a span's offset or length, a flag, the header, the report.
 *
 * Invariants beyond no crash, leak or UB: an accepted page's copies stay within the limits
 * and are NUL-ended, an outcome's strings are NUL-ended, and every artifact record that
 * kvm_entry_next() accepts lies inside the span with a relative path free of "." and "..". */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox/kvm/vmm.h"
#include "tests/kvm_span.h"

#define FD_REGION 8192u

static void fd_fail(const char *what)
{
    fprintf(stderr, "fuzz_doorbell: %s\n", what);
    abort();
}

/* The page a well-behaved guest leaves after `print(6 * 7)`, a final value and a few files
 * in /out. */
static void fd_template(uint8_t *region, const vmm_job_limits *lim)
{
    static const char out[] = "42\n", errs[] = "warning\n";
    static const char report[] =
        "var0.type 5\nfloat\nvar0.repr 3\n0.5\nvar0.decimal 3\n0.5\nvar0.name 3\nans\n"
        "expr.type 3\nint\nexpr.repr 2\n42\nexpr.decimal 2\n42\n";
    struct crvm_page h;
    memset(region, 0, FD_REGION);
    memset(&h, 0, sizeof h);
    h.magic = CRVM_MAGIC;
    h.version = CRVM_VERSION;
    h.size = FD_REGION;
    h.header_size = sizeof h;
    h.max_stdout = lim->max_stdout;
    h.max_stderr = lim->max_stderr;
    h.max_report = lim->max_report;
    h.exited = 1;
    h.exit_code = 0;
    h.run_ns = 1000000;
    snprintf(h.limit_detail, sizeof h.limit_detail, "processes 16");
    snprintf(h.tier_note, sizeof h.tier_note, "no pids cgroup");
    uint32_t off = 1024;
    h.out = (struct crvm_span){ off, sizeof out - 1 };
    memcpy(region + off, out, sizeof out - 1);
    off += 256;
    h.err = (struct crvm_span){ off, sizeof errs - 1 };
    memcpy(region + off, errs, sizeof errs - 1);
    off += 256;
    h.report = (struct crvm_span){ off, sizeof report - 1 };
    memcpy(region + off, report, sizeof report - 1);
    off += 256;
    size_t n = kvm_span_put(region + off, 0, CRVM_ENT_DIR, "d", NULL);
    n = kvm_span_put(region + off, n, CRVM_ENT_FILE, "d/a.csv", "x,y\n1,2\n");
    n = kvm_span_put(region + off, n, CRVM_ENT_SYMLINK, "s", NULL);
    n = kvm_span_put(region + off, n, CRVM_ENT_DROPPED, "z.bin", NULL);
    h.artifacts = (struct crvm_span){ off, (uint32_t)n };
    memcpy(region, &h, sizeof h);
}

static void fd_check_str(const char *s, const char *what)
{
    /* Reading it through: ASan stops at a missing NUL. */
    if (s && strlen(s) > FD_REGION) fd_fail(what);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static uint8_t region[FD_REGION];
    vmm_job_limits lim;
    memset(&lim, 0, sizeof lim);
    lim.max_stdout = 1024;
    lim.max_stderr = 512;
    lim.max_report = 2048;
    lim.max_artifact_span = 1024;
    if (size > FD_REGION) return 0;
    fd_template(region, &lim);
    for (size_t i = 0; i < size; i++) region[i] ^= data[i];

    vmm_page_result r;
    cr_error err = { 0 };
    if (vmm_page_parse(region, FD_REGION, &lim, &r, &err) != CR_OK) {
        if (r.stdout_text || r.stderr_text || r.report) fd_fail("a refused page left copies");
        return 0;
    }
    if (!r.stdout_text || !r.stderr_text || !r.report) fd_fail("an accepted page without its copies");
    if (r.stdout_len > lim.max_stdout || r.stderr_len > lim.max_stderr ||
        r.report_len > lim.max_report)
        fd_fail("a copy past its limit");
    if (r.stdout_text[r.stdout_len] || r.stderr_text[r.stderr_len] || r.report[r.report_len])
        fd_fail("a copy not NUL-ended");
    if (!r.artifacts || r.artifacts_len > lim.max_artifact_span)
        fd_fail("artifacts copy missing or past its limit");
    if (!memchr(r.limit_detail, '\0', sizeof r.limit_detail) ||
        !memchr(r.tier_note, '\0', sizeof r.tier_note))
        fd_fail("an accepted note not NUL-ended");

    const uint8_t *span = (const uint8_t *)r.artifacts;
    size_t pos = 0;
    kvm_entry e;
    while (pos < r.artifacts_len &&
           kvm_entry_next(span, r.artifacts_len, &pos, &e, &err) == CR_OK) {
        if ((const uint8_t *)e.path < span || e.data + e.size > span + r.artifacts_len ||
            pos > r.artifacts_len || e.path_len == 0 || e.path[0] == '/' ||
            memchr(e.path, '\0', e.path_len))
            fd_fail("an accepted artifact record outside its span or with a bad path");
        for (uint32_t i = 0; i < e.path_len; i++) {
            int start = i == 0 || e.path[i - 1] == '/';
            uint32_t rest = e.path_len - i;
            if (start && e.path[i] == '.' && (rest == 1 || e.path[i + 1] == '/' ||
                                              (e.path[i + 1] == '.' &&
                                               (rest == 2 || e.path[i + 2] == '/'))))
                fd_fail("an accepted artifact path with '.' or '..'");
        }
    }

    sandbox_outcome oc;
    memset(&oc, 0, sizeof oc);
    if (kvm_take_result(&r, &oc, &err) == CR_OK) {
        if (oc.limit > SANDBOX_LIMIT_ARTIFACTS) fd_fail("a limit out of range");
        fd_check_str(oc.value_repr, "value_repr");
        fd_check_str(oc.value_type, "value_type");
        fd_check_str(oc.value_decimal, "value_decimal");
        fd_check_str(oc.value_from, "value_from");
        fd_check_str(oc.error_type, "error_type");
        fd_check_str(oc.error_message, "error_message");
        if (!memchr(oc.limit_detail, '\0', sizeof oc.limit_detail))
            fd_fail("limit_detail not NUL-ended");
    }
    sandbox_outcome_free(&oc);
    vmm_page_result_free(&r);
    return 0;
}
