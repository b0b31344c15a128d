/* tests/test_fuzz_regressions.c: replays every input that once made a fuzz target fail,
 * through that same target's entry point, under whatever build this is (make check-asan
 * replays them under ASan + UBSan, as the fuzzer saw them).
 *
 * Layout: tests/data/fuzz-regressions/<target>/<input>, where <target> is a fuzz/fuzz_*.c
 * name without the prefix, each input beside <input>.txt, one line saying what it broke.
 * An input beside <input>.pending instead is a finding not fixed yet (that file says where
 * and who has it): it is skipped with that reason, so that the suite stays green until the
 * fix lands, when the .pending file becomes a .txt. CR_FUZZ_REGRESSIONS overrides the
 * directory. A crash fails the run; a target that returns passes. */
#include <dirent.h>
#include <stdint.h>
#include <sys/stat.h>

#include "tests/testlib.h"

#define LLVMFuzzerTestOneInput fuzz_python_one
#include "fuzz/fuzz_python.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_parser_one
#include "fuzz/fuzz_parser.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_dsl_one
#include "fuzz/fuzz_dsl.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_dsl_eval_one
#include "fuzz/fuzz_dsl_eval.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_format_one
#include "fuzz/fuzz_format.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_cell_one
#include "fuzz/fuzz_cell.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_request_one
#include "fuzz/fuzz_request.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_fastpath_one
#include "fuzz/fuzz_fastpath.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_audit_one
#include "fuzz/fuzz_audit.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_doorbell_one
#include "fuzz/fuzz_doorbell.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_mutate_one
#include "fuzz/fuzz_mutate.c"
#undef LLVMFuzzerTestOneInput

static const struct {
    const char *dir;
    int (*one)(const uint8_t *, size_t);
} TARGETS[] = {
    { "python", fuzz_python_one }, { "parser", fuzz_parser_one }, { "dsl", fuzz_dsl_one },
    { "dsl_eval", fuzz_dsl_eval_one }, { "format", fuzz_format_one },
    { "cell", fuzz_cell_one }, { "request", fuzz_request_one },
    { "fastpath", fuzz_fastpath_one }, { "audit", fuzz_audit_one },
    { "doorbell", fuzz_doorbell_one }, { "mutate", fuzz_mutate_one },
};

/* The whole file, malloc'd (never NULL on success: an empty file gives a 1-byte buffer). */
static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *p = NULL;
    size_t cap = 0, n = 0, got;
    do {
        if (n + 4096 > cap) {
            char *q = realloc(p, cap = cap * 2 + 4096);
            if (!q) break;
            p = q;
        }
        got = fread(p + n, 1, cap - n, f);
        n += got;
    } while (got > 0);
    fclose(f);
    *len = n;
    return p;
}

static int has_suffix(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && strcmp(s + a - b, suf) == 0;
}

/* The first line of path, or "" (for the skip reason). */
static void first_line(const char *path, char *out, size_t cap)
{
    size_t n = 0;
    char *p = slurp(path, &n);
    out[0] = '\0';
    if (!p) return;
    size_t i = 0;
    while (i < n && i + 1 < cap && p[i] != '\n') out[i] = p[i], i++;
    out[i] = '\0';
    free(p);
}

static void replay_dir(const char *root, const char *name, int (*one)(const uint8_t *, size_t))
{
    char dir[512], path[1024], side[1100], why[256];
    snprintf(dir, sizeof dir, "%s/%s", root, name);
    DIR *d = opendir(dir);
    if (!d) return;                         /* no regression for this target yet */
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.' || has_suffix(e->d_name, ".txt") ||
            has_suffix(e->d_name, ".pending"))
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        snprintf(side, sizeof side, "%s.pending", path);
        struct stat st;
        if (stat(side, &st) == 0) {
            first_line(side, why, sizeof why);
            SKIP("%s/%s: pending: %s", name, e->d_name, why);
            continue;
        }
        snprintf(side, sizeof side, "%s.txt", path);
        if (stat(side, &st) != 0) {
            t_fail++;
            fprintf(stderr, "%s: no %s.txt saying what it broke\n", path, e->d_name);
            continue;
        }
        size_t len = 0;
        char *data = slurp(path, &len);
        if (!data) {
            t_fail++;
            fprintf(stderr, "%s: cannot read\n", path);
            continue;
        }
        fprintf(stderr, "replay %s/%s\n", name, e->d_name);
        CHECK(one((const uint8_t *)data, len) == 0);
        free(data);
    }
    closedir(d);
}

int main(void)
{
    const char *root = getenv("CR_FUZZ_REGRESSIONS");
    if (!root) root = "tests/data/fuzz-regressions";
    struct stat st;
    if (stat(root, &st) != 0) {
        fprintf(stderr, "%s: missing (run from the repository root)\n", root);
        t_fail++;
    }
    for (size_t i = 0; i < sizeof TARGETS / sizeof TARGETS[0]; i++)
        replay_dir(root, TARGETS[i].dir, TARGETS[i].one);
    return TEST_SUMMARY();
}
