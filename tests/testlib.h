/* tests/testlib.h: the tiny test harness every tests/test_*.c uses.
 * Each binary ends with one line "N passed, N failed, N skipped" (", N by design" after it
 * when there are any); tests/run.sh adds them up.
 *
 * What counts as one. A pass or a failure is one check the test names: a CHECK at one place
 * for one case (a line of the test, a row of a table of cases in it or of a data file it
 * reads with the expected answers, a call of a helper from one case). A check repeated over
 * inputs the test does not name one by one (every allocation of a program, every program of
 * a corpus, every cut of a ledger, every field of every row) counts once: SWEEP_BEGIN and
 * SWEEP_END fold the checks between them into one pass, or one failure (the failing inputs
 * still printed). So a count says how many things were checked, not how long it took.
 *
 * What was not checked is named, one line each on stderr, which tests/run.sh counts against
 * the closing line: "SKIP name: reason" for a check this host cannot run (SKIP(); the name
 * is the function's, and holds no colon), "BY-DESIGN name: reason" for a case left unchecked
 * on purpose (BY_DESIGN(); counted apart from skips). A part the suite needs that is missing
 * here goes through UNAVAILABLE(): a failure under CI, a skip elsewhere. */
#ifndef CR_TESTLIB_H
#define CR_TESTLIB_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calcroute.h"

static int t_pass, t_fail, t_skip, t_design;
/* Ends every failure line when set (" (CR_TEST_SEED=42)"): a failure shown without the
 * output before it (run.sh prints a failing test's last lines) still says how to repeat it. */
static char t_note[64] __attribute__((unused));

#define CHECK(c) ((c) ? (void)t_pass++ : (void)(t_fail++, \
    fprintf(stderr, "%s:%d: CHECK(%s) failed%s\n", __FILE__, __LINE__, #c, t_note)))

/* Compares two C strings and prints both when they differ. */
#define CHECK_STR(got, want) do { \
    const char *g_ = (got), *w_ = (want); \
    if (g_ && w_ && strcmp(g_, w_) == 0) t_pass++; \
    else { t_fail++; fprintf(stderr, "%s:%d: got [%s], want [%s]%s\n", __FILE__, __LINE__, \
                             g_ ? g_ : "(null)", w_ ? w_ : "(null)", t_note); } \
} while (0)

#define CHECK_INT(got, want) do { \
    long long g_ = (long long)(got), w_ = (long long)(want); \
    if (g_ == w_) t_pass++; \
    else { t_fail++; fprintf(stderr, "%s:%d: %s = %lld, want %lld%s\n", __FILE__, __LINE__, \
                             #got, g_, w_, t_note); } \
} while (0)

/* Seconds in the suite's limits and timing checks are multiplied by CR_TEST_TIME_SCALE (1 when
 * unset): the nested test host runs the kvm tier's guest under software emulation, tens of
 * times slower than hardware, and sets it there. Programs and expected outputs never change. */
static inline double time_scale(void)
{
    const char *s = getenv("CR_TEST_TIME_SCALE");
    double v = s ? atof(s) : 1;
    return v >= 1 && v <= 100 ? v : 1;
}
#define SECS(x) ((double)(x) * time_scale())

#define SKIP(...) do { t_skip++; fprintf(stderr, "SKIP %s: ", __func__); \
    fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } while (0)

/* CI (CI=true) installs everything the suite reads, the corpus at ../shared/corpus included:
 * there a missing part fails, where elsewhere it is a skip. tests/lib.sh's unavailable() is
 * the shell tests' twin. */
static inline int t_under_ci(void)
{
    const char *ci = getenv("CI");
    return ci && strcmp(ci, "true") == 0;
}
#define UNAVAILABLE(...) do { \
    if (!t_under_ci()) { SKIP(__VA_ARGS__); break; } \
    t_fail++; fprintf(stderr, "%s:%d: %s: ", __FILE__, __LINE__, __func__); \
    fprintf(stderr, __VA_ARGS__); fputs(" (under CI that fails)\n", stderr); } while (0)

/* A case left unchecked on purpose, named by `name` (no colon) and why. */
#define BY_DESIGN(name, ...) do { t_design++; fprintf(stderr, "BY-DESIGN %s: ", name); \
    fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } while (0)

/* The checks between SWEEP_BEGIN(s) and SWEEP_END(s) count as one (see the top). Sweeps
 * nest. */
typedef struct { int pass, fail; } t_sweep;
#define SWEEP_BEGIN(s) t_sweep s = { t_pass, t_fail }
#define SWEEP_END(s) do { int failed_ = t_fail != (s).fail; \
    t_pass = (s).pass + !failed_; t_fail = (s).fail + failed_; } while (0)

/* An engine with the options given as key, value pairs, ending with NULL:
 * t_engine(&err, "tier", "none", NULL). NULL with err filled when an option or the engine
 * fails. */
static inline cr_engine *t_engine(cr_error *err, ...)
{
    cr_config *cfg = cr_config_new();
    cr_engine *e = NULL;
    const char *key;
    va_list ap;
    va_start(ap, err);
    int ok = cfg != NULL;
    while (ok && (key = va_arg(ap, const char *)))
        ok = cr_config_set(cfg, key, va_arg(ap, const char *), err) == CR_OK;
    va_end(ap);
    if (ok) e = cr_engine_open(cfg, err);
    cr_config_free(cfg);
    return e;
}

static inline int t_summary(void)
{
    printf("%d passed, %d failed, %d skipped", t_pass, t_fail, t_skip);
    if (t_design) printf(", %d by design", t_design);
    putchar('\n');
    return t_fail != 0;
}
#define TEST_SUMMARY() t_summary()

#endif
