/* tests/test_sandbox_util.h: running code in a sandbox tier from the sandbox tests: the ns
 * tier, or the tier a test file names before including this (tests/test_kvm_attacks.c runs
 * the ns tier's attack suite, unchanged, on the kvm tier). */
#ifndef CR_TEST_SANDBOX_UTIL_H
#define CR_TEST_SANDBOX_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox/sandbox.h"
#include "tests/testlib.h"   /* SECS() */

#ifndef SANDBOX_TEST_TIER
#define SANDBOX_TEST_TIER CR_TIER_NS
#endif

static char ns_why[256];
/* When set, run_ns() goes through this warm pool (sandbox_pool_run()) instead of a cold
 * start: the same suite then runs on warm workers. */
static sandbox_pool *test_pool;

/* Fills *lim with small limits that keep the suite fast: 5 s wall, 256 MiB, 32 processes. */
static void small_limits(sandbox_limits *lim)
{
    memset(lim, 0, sizeof *lim);
    lim->wall_s = SECS(5);
    lim->memory_bytes = 256u << 20;
    lim->max_procs = 32;
    lim->tmp_bytes = 16u << 20;
    lim->artifact_bytes = 16u << 20;
    lim->max_artifacts = 16;
    lim->max_stdout = 64u << 10;
    lim->max_stderr = 64u << 10;
    sandbox_limits_resolve(lim);
}

/* Runs `code` in the tier under test; *oc is the caller's (sandbox_outcome_free). Returns the code of
 * sandbox_run() and prints its error when it is not CR_OK. */
static cr_code run_ns(const char *code, const sandbox_limits *lim, const char *data_dir,
                      const char *out_dir, const char *globals_json, sandbox_outcome *oc)
{
    sandbox_job job;
    cr_error err = { 0 };
    cr_code rc;
    sandbox_job_init(&job);
    job.tier = SANDBOX_TEST_TIER;
    job.code = code;
    job.code_len = strlen(code);
    job.data_dir = data_dir;
    job.out_dir = out_dir;
    job.globals_json = globals_json;
    if (lim) job.limits = *lim;
    else small_limits(&job.limits);
    rc = test_pool ? sandbox_pool_run(test_pool, &job, oc, &err) : sandbox_run(&job, oc, &err);
    if (rc != CR_OK) fprintf(stderr, "sandbox_run: %s\n", err.message);
    return rc;
}

static const char *out_text(const sandbox_outcome *oc)
{
    return oc->stdout_buf.p ? oc->stdout_buf.p : "";
}

/* Runs code with the small limits and checks its exact stdout and that no limit was hit. */
#define CHECK_PRINTS(code, want) do { \
    sandbox_outcome oc_; \
    if (run_ns((code), NULL, NULL, NULL, NULL, &oc_) == CR_OK) { \
        CHECK_STR(out_text(&oc_), (want)); \
        if (oc_.limit != SANDBOX_LIMIT_NONE || !oc_.exited) \
            fprintf(stderr, "  limit %s, exit %d, signal %d, stderr: %s\n", \
                    sandbox_limit_name(oc_.limit), oc_.exit_code, oc_.term_signal, \
                    oc_.stderr_buf.p ? oc_.stderr_buf.p : ""); \
        CHECK_INT(oc_.limit, SANDBOX_LIMIT_NONE); \
    } else CHECK(!"sandbox_run failed"); \
    sandbox_outcome_free(&oc_); \
} while (0)

/* A fresh directory under TMPDIR (or /tmp), world-readable for the sandbox's user. */
static inline char *make_dir(const char *tag)
{
    const char *base = getenv("TMPDIR");
    char *p = malloc(256);
    if (!p) return NULL;
    snprintf(p, 256, "%s/cr-sbx-%s-XXXXXX", base && *base ? base : "/tmp", tag);
    if (!mkdtemp(p)) { free(p); return NULL; }
    chmod(p, 0755);
    return p;
}

static inline void remove_tree(const char *dir)
{
    char cmd[512];
    if (!dir || strncmp(dir, "/", 1) != 0 || !strstr(dir, "/cr-sbx-")) return;
    snprintf(cmd, sizeof cmd, "rm -rf -- '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
}

/* Whole file as a string (NULL when unreadable); the caller frees it. Read to its end, not
 * to the size the file reports: /proc's files report 0. */
static inline char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t len = 0, cap = 0, n;
    if (!f) return NULL;
    do {
        if (cap - len < 4096) {
            char *p = realloc(buf, cap = cap * 2 + 4096);
            if (!p) { free(buf); fclose(f); return NULL; }
            buf = p;
        }
        len += n = fread(buf + len, 1, cap - len - 1, f);
    } while (n > 0);
    if (ferror(f)) { free(buf); buf = NULL; }
    else buf[len] = 0;
    fclose(f);
    return buf;
}

#endif
