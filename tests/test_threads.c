/* tests/test_threads.c: one engine shared by many threads (the documented model), each
 * running its own requests, with an audit ledger; `make check-tsan` runs it under
 * ThreadSanitizer. Every answer must be the one a single thread gets, and the ledger must
 * hold every request once, in a chain that verifies. The threads have the small stacks a
 * pipeline may give them, so the deep recursion moves to new stack segments as it runs. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "calcroute.h"
#include "tests/testlib.h"

#define THREADS 8
#define PER_THREAD 40
#define NPROG 7
#define STACK_KIB 256

static cr_engine *engine;
static int wrong[THREADS];

static const char *const programs[] = {
    "ans = (5829 - 5735) / 5735",
    "import math\nans = math.sqrt(2) * %d",
    "def solution():\n    r = 0.05 / 12\n    return round(%d * r / (1 - (1 + r) ** -360), 2)",
    "xs = [i * 0.1 for i in range(%d)]\nans = sum(xs)",
    "subtract(%d, 5735), divide(#0, 5735)",
    "ans = f'{%d:,.2f}'",
    "def f(n):\n    return 0 if n == 0 else 1 + f(n - 1)\nans = f(950 + %d)",
};

static void expected(int k, int i, char *want, size_t n)
{
    /* Computed once per (k, i) in the main thread before the race, by the same engine. */
    char code[256];
    snprintf(code, sizeof code, programs[k], i + 1);
    cr_request *req = cr_request_new();
    cr_request_set_code(req, code, strlen(code));
    cr_result *res = NULL;
    want[0] = '\0';
    if (cr_run(engine, req, &res, NULL) == CR_OK && cr_result_value_repr(res))
        snprintf(want, n, "%s", cr_result_value_repr(res));
    cr_result_free(res);
    cr_request_free(req);
}

static char wants[NPROG][PER_THREAD][128];

static void *worker(void *arg)
{
    int t = (int)(long)arg;
    for (int i = 0; i < PER_THREAD; i++) {
        int k = (t + i) % NPROG;
        char code[256];
        snprintf(code, sizeof code, programs[k], i + 1);
        cr_request *req = cr_request_new();
        cr_request_set_code(req, code, strlen(code));
        cr_result *res = NULL;
        if (cr_run(engine, req, &res, NULL) != CR_OK || !cr_result_value_repr(res) ||
            strcmp(cr_result_value_repr(res), wants[k][i]) != 0 || cr_result_audit_seq(res) == 0)
            wrong[t]++;
        cr_result_free(res);
        cr_request_free(req);
    }
    return NULL;
}

/* ---- cr_engine_interrupt() from another thread ---- */

static cr_result *run_one(cr_engine *eng, const char *code)
{
    cr_request *req = cr_request_new();
    cr_result *res = NULL;
    cr_request_set_code(req, code, strlen(code));
    if (cr_run(eng, req, &res, NULL) != CR_OK) res = NULL;
    cr_request_free(req);
    return res;
}

typedef struct { cr_engine *eng; const char *code; cr_result *res; int fd; } loop_arg;

static void *run_loop(void *p)
{
    loop_arg *a = p;
    cr_request *req = cr_request_new();
    cr_request_set_code(req, a->code, strlen(a->code));
    if (a->fd >= 0) cr_request_set_interrupt_fd(req, a->fd);
    if (cr_run(a->eng, req, &a->res, NULL) != CR_OK) a->res = NULL;
    cr_request_free(req);
    return NULL;
}

/* An endless in-process loop, with a timeout far away, ends when another thread interrupts
 * the engine (or writes a byte to its descriptor), as interrupted, recorded, and beyond the
 * reach of the code's `except`; a run started before cr_engine_resume() does not start; one
 * started after runs. */
static void test_interrupt(const char *db)
{
    static const char *const loops[] = {
        "x = 0\nwhile True:\n    x += 1\n",
        "try:\n    while True:\n        pass\nexcept BaseException:\n    ans = 1\nfinally:\n    ans = 2\n",
    };
    cr_error err = {0};
    cr_engine *eng = t_engine(&err, "tier", "none", "audit", db, "timeout", "600", NULL);
    CHECK(eng != NULL);
    if (!eng) return;
    CHECK(cr_engine_interrupt_fd(eng) >= 0);
    for (int k = 0; k < 2; k++) {
        loop_arg a = { eng, loops[k], NULL, -1 };
        pthread_t th;
        if (pthread_create(&th, NULL, run_loop, &a) != 0) { CHECK(!"pthread_create"); break; }
        usleep(200000);
        if (k == 0) cr_engine_interrupt(eng);
        else CHECK_INT(write(cr_engine_interrupt_fd(eng), "x", 1), 1);
        pthread_join(th, NULL);
        CHECK(a.res != NULL);
        if (!a.res) continue;
        CHECK_INT(cr_result_status(a.res), CR_EINTERRUPTED);
        CHECK_STR(cr_result_error(a.res)->message, "interrupted");
        CHECK(cr_result_value_repr(a.res) == NULL);
        CHECK(cr_result_audit_seq(a.res) > 0);
        CHECK(strstr(cr_result_json(a.res), "\"status\":\"interrupted\"") != NULL);
        cr_result_free(a.res);
        cr_result *res = run_one(eng, "ans = 6 * 7");
        CHECK(res && cr_result_status(res) == CR_EINTERRUPTED);
        if (res) CHECK_STR(cr_result_error(res)->message, "interrupted before it ran");
        cr_result_free(res);
        cr_engine_resume(eng);
        res = run_one(eng, "ans = 6 * 7");
        CHECK(res && cr_result_status(res) == CR_OK);
        if (res) CHECK_STR(cr_result_value_repr(res), "42");
        cr_result_free(res);
    }
    cr_engine_interrupt(NULL);
    cr_engine_resume(NULL);
    CHECK_INT(cr_engine_interrupt_fd(NULL), -1);
    cr_engine_close(eng);
}

/* cr_request_set_interrupt_fd(): of two endless runs on one engine, the one whose own
 * descriptor becomes readable ends (interrupted, recorded) and the other goes on until the
 * engine is interrupted; a request whose descriptor is readable already does not begin; a bad
 * descriptor is refused. */
static void test_request_interrupt(const char *db)
{
    cr_error err = {0};
    cr_engine *eng = t_engine(&err, "tier", "none", "audit", db, "timeout", "600", NULL);
    int p[2];
    CHECK(eng != NULL);
    CHECK_INT(pipe(p), 0);
    if (!eng) return;
    loop_arg mine = { eng, "x = 0\nwhile True:\n    x += 1\n", NULL, p[0] };
    loop_arg other = { eng, "y = 0\nwhile True:\n    y += 1\n", NULL, -1 };
    pthread_t t1, t2;
    CHECK_INT(pthread_create(&t1, NULL, run_loop, &mine), 0);
    CHECK_INT(pthread_create(&t2, NULL, run_loop, &other), 0);
    usleep(200000);
    CHECK_INT(write(p[1], "x", 1), 1);
    pthread_join(t1, NULL);
    CHECK(mine.res && cr_result_status(mine.res) == CR_EINTERRUPTED);
    if (mine.res) CHECK(cr_result_audit_seq(mine.res) > 0);
    cr_result_free(mine.res);
    CHECK(other.res == NULL);   /* still running: an endless loop with 600 s to go */
    cr_engine_interrupt(eng);
    pthread_join(t2, NULL);
    CHECK(other.res && cr_result_status(other.res) == CR_EINTERRUPTED);
    cr_result_free(other.res);
    cr_engine_resume(eng);

    cr_request *req = cr_request_new();
    cr_result *res = NULL;
    cr_request_set_code(req, "ans = 6 * 7", 11);
    CHECK_INT(cr_request_set_interrupt_fd(req, p[0]), CR_OK);   /* p[0] still readable */
    CHECK_INT(cr_run(eng, req, &res, &err), CR_OK);
    CHECK(res && cr_result_status(res) == CR_EINTERRUPTED);
    if (res) CHECK_STR(cr_result_error(res)->message, "interrupted before it ran");
    cr_result_free(res);
    res = NULL;
    CHECK_INT(cr_request_set_interrupt_fd(req, -1), CR_OK);
    CHECK_INT(cr_run(eng, req, &res, &err), CR_OK);
    if (res) CHECK_STR(cr_result_value_repr(res), "42");
    cr_result_free(res);
    CHECK_INT(cr_request_set_interrupt_fd(req, -2), CR_EUSAGE);
    CHECK_INT(cr_request_set_interrupt_fd(NULL, 3), CR_EUSAGE);
    close(p[0]);
    close(p[1]);
    /* Not open (descriptors are taken lowest first, so none is this high): cr_run refuses. */
    CHECK_INT(cr_request_set_interrupt_fd(req, 1 << 20), CR_OK);
    res = NULL;
    CHECK_INT(cr_run(eng, req, &res, &err), CR_EUSAGE);
    CHECK(res == NULL);
    cr_request_free(req);
    cr_engine_close(eng);
}

int main(void)
{
    char dir[] = "/tmp/cr-test-threads-XXXXXX";
    if (!mkdtemp(dir)) {
        SKIP("mkdtemp failed");
        return TEST_SUMMARY();
    }
    char db[128];
    snprintf(db, sizeof db, "%s/ledger.db", dir);
    cr_error err = {0};
    engine = t_engine(&err, "tier", "none", "audit", db, NULL);
    CHECK(engine != NULL);
    if (!engine) return TEST_SUMMARY();
    for (int k = 0; k < NPROG; k++)
        for (int i = 0; i < PER_THREAD; i++) expected(k, i, wants[k][i], sizeof wants[k][i]);
    CHECK_STR(wants[0][0], "0.01639058413251961639058413251961639");
    CHECK_STR(wants[4][0], "-0.9998256320836965998256320836965998");
    CHECK_STR(wants[6][PER_THREAD - 1], "990");
    pthread_t th[THREADS];
    pthread_attr_t at;
    CHECK_INT(pthread_attr_init(&at), 0);
    CHECK_INT(pthread_attr_setstacksize(&at, STACK_KIB << 10), 0);
    int started = 0;
    for (long t = 0; t < THREADS; t++)
        started += pthread_create(&th[t], &at, worker, (void *)t) == 0;
    CHECK_INT(started, THREADS);
    for (int t = 0; t < started; t++) pthread_join(th[t], NULL);
    pthread_attr_destroy(&at);
    int bad = 0;
    for (int t = 0; t < THREADS; t++) bad += wrong[t];
    CHECK_INT(bad, 0);
    cr_engine_close(engine);

    cr_audit *a = cr_audit_open(db, 0, &err);
    CHECK(a != NULL);
    if (a) {
        uint64_t seq = 0;
        char hex[65];
        CHECK_INT(cr_audit_head(a, &seq, hex, &err), CR_OK);
        CHECK_INT(seq, NPROG * PER_THREAD + THREADS * PER_THREAD);
        cr_audit_report rep;
        CHECK_INT(cr_audit_verify(a, NULL, &rep, &err), CR_OK);
        CHECK(rep.ok);
        cr_audit_close(a);
    }
    snprintf(db, sizeof db, "%s/interrupt.db", dir);
    test_interrupt(db);
    snprintf(db, sizeof db, "%s/request-interrupt.db", dir);
    test_request_interrupt(db);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK_INT(system(cmd), 0);
    return TEST_SUMMARY();
}
