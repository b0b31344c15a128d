/* tests/test_audit_replay.c: requests recorded by an engine replay through the public API with
 * identical results; a record whose result differs is named, field by field; a log built from
 * the corpus (FinQA DSL and PoT Python programs, CR_AUDIT_REPLAY_MAX of each, default 150)
 * replays with zero differences. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audit/audit.h"
#include "tests/testlib.h"

static char dir[256], ledger[400];

typedef struct {
    int n;
    char field[8][32], want[8][128], got[8][128];
} diffs;

static void keep_diff(uint64_t seq, const char *field, const char *want, const char *got,
                      void *arg)
{
    diffs *d = arg;
    (void)seq;
    if (d->n >= 8) return;
    snprintf(d->field[d->n], sizeof d->field[0], "%s", field);
    snprintf(d->want[d->n], sizeof d->want[0], "%s", want ? want : "(absent)");
    snprintf(d->got[d->n], sizeof d->got[0], "%s", got ? got : "(absent)");
    d->n++;
}

/* Replays a's records from..to with flags, checking that exactly one field differed, as
 * named; the report into rep. */
static void replay_one_diff(cr_audit *a, uint64_t from, uint64_t to, int flags,
                            cr_audit_replay_report *rep, const char *field, const char *want,
                            const char *got)
{
    cr_error err = {0};
    diffs d = {0};
    CHECK_INT(cr_audit_replay(a, from, to, flags, keep_diff, &d, rep, &err), CR_OK);
    CHECK_INT(d.n, 1);
    CHECK_STR(d.field[0], field);
    CHECK_STR(d.want[0], want);
    CHECK_STR(d.got[0], got);
}

/* Runs one request on `e`; returns the route, or -1 when the engine failed. */
static int run1(cr_engine *e, cr_lang lang, const char *code, const char *vars,
                const char *table, const char *precision)
{
    cr_error err = {0};
    cr_request *req = cr_request_new();
    cr_result *res = NULL;
    int route = -1;
    cr_request_set_code(req, code, strlen(code));
    cr_request_set_lang(req, lang);
    if (vars && cr_request_set_vars_json(req, vars, strlen(vars), &err) != CR_OK) goto out;
    if (table && cr_request_set_table_json(req, table, strlen(table), &err) != CR_OK) goto out;
    if (precision && cr_request_set_option(req, "precision", precision, &err) != CR_OK) goto out;
    if (cr_run(e, req, &res, &err) != CR_OK) goto out;
    route = cr_result_route(res);
    CHECK(cr_result_audit_seq(res) > 0);
out:
    if (route < 0) fprintf(stderr, "run %.40s: %s\n", code, err.message);
    cr_result_free(res);
    cr_request_free(req);
    return route;
}

static cr_engine *engine(void)
{
    cr_error err = {0};
    /* tier none: outside the subset is rejected, nothing sandboxed */
    cr_engine *e = t_engine(&err, "audit", ledger, "tier", "none", NULL);
    if (!e) fprintf(stderr, "engine: %s\n", err.message);
    return e;
}

/* Appends r to `path`, chained like any other record. Returns its seq, 0 on failure. */
static uint64_t append_rec(const char *path, const audit_record *r)
{
    audit_db *db = NULL;
    cr_error err = {0};
    uint64_t seq = 0;
    if (audit_open(path, AUDIT_OPEN_CREATE, &db, &err) != CR_OK) return 0;
    if (audit_append(db, r, &seq, NULL, &err) != CR_OK) seq = 0;
    audit_close(db);
    return seq;
}

/* Appends a record made by hand (not by an engine) to `path`; the value fields are set only
 * when repr is non-NULL, the policy when policy is. Returns its seq, 0 on failure. */
static uint64_t append_made_up(const char *path, const char *route, const char *code,
                               const char *policy, const char *fraction, const char *repr,
                               const char *out)
{
    audit_record r;
    memset(&r, 0, sizeof r);
    AUDIT_SET(&r, lang, "python");
    AUDIT_SET(&r, code, code);
    AUDIT_SET(&r, policy, policy);
    AUDIT_SET(&r, route, route);
    AUDIT_SET(&r, value_fraction, fraction);
    AUDIT_SET(&r, value_repr, repr);
    AUDIT_SET(&r, value_type, repr ? "float" : NULL);
    r.value_exact = repr ? 1 : -1;
    AUDIT_SET(&r, out, out);
    AUDIT_SET(&r, err_out, "");
    return append_rec(path, &r);
}

static void test_replay_identical_and_different(void)
{
    cr_engine *e = engine();
    CHECK(e != NULL);
    if (!e) return;
    CHECK_INT(run1(e, CR_LANG_PYTHON, "ans = 0.1 + 0.2", NULL, NULL, NULL), CR_ROUTE_INPROCESS);
    CHECK_INT(run1(e, CR_LANG_PYTHON, "print(7 // 2)\nans = 6 / 2", NULL, NULL, NULL),
              CR_ROUTE_INPROCESS);
    CHECK_INT(run1(e, CR_LANG_PYTHON, "ans = x * 3", "{\"x\": 0.1}", NULL, NULL),
              CR_ROUTE_INPROCESS);
    CHECK_INT(run1(e, CR_LANG_PYTHON, "ans = 2 ** 0.5", NULL, NULL, "10"), CR_ROUTE_INPROCESS);
    CHECK_INT(run1(e, CR_LANG_PYTHON, "x = 1\ny = x / 0", NULL, NULL, NULL), CR_ROUTE_INPROCESS);
    /* A LimitError: its error column holds the result's "limit" (a fuzz finding: replay
     * compared it with "error", which is null then). */
    CHECK_INT(run1(e, CR_LANG_PYTHON, "ans = 10 ** 10 ** 10", NULL, NULL, NULL),
              CR_ROUTE_INPROCESS);
    CHECK_INT(run1(e, CR_LANG_DSL, "subtract(5829, 5735), divide(#0, 5735)", NULL, NULL, NULL),
              CR_ROUTE_INPROCESS);
    CHECK_INT(run1(e, CR_LANG_PYTHON, "import os\nans = os.getpid()", NULL, NULL, NULL),
              CR_ROUTE_REJECTED);
    cr_engine_close(e);

    cr_error err = {0};
    cr_audit_replay_report rep;
    diffs d = {0};
    cr_audit *a = cr_audit_open(ledger, 0, &err);
    CHECK(a != NULL);
    if (!a) return;
    CHECK_INT(cr_audit_replay(a, 0, 0, 0, keep_diff, &d, &rep, &err), CR_OK);
    CHECK_INT(rep.replayed, 7);
    CHECK_INT(rep.matched, 7);
    CHECK_INT(rep.differences, 0);
    CHECK_INT(rep.skipped, 1);
    for (int i = 0; i < d.n; i++)
        fprintf(stderr, "diff %s: want %s got %s\n", d.field[i], d.want[i], d.got[i]);
    cr_audit_close(a);

    /* A record whose stored result is not what the code gives (as if an older engine had
     * computed it in binary floating point), chained properly. */
    uint64_t seq = append_made_up(ledger, "inprocess", "ans = 0.1 + 0.2", NULL, "3/10",
                                  "0.30000000000000004", "");
    CHECK_INT(seq, 9);

    a = cr_audit_open(ledger, 0, &err);
    replay_one_diff(a, 9, 9, 0, &rep, "value_repr", "0.30000000000000004", "0.3");
    CHECK_INT(rep.replayed, 1);
    CHECK_INT(rep.differences, 1);
    /* The whole log: one difference, the chain itself intact. */
    CHECK_INT(cr_audit_replay(a, 0, 0, 0, NULL, NULL, &rep, &err), CR_OK);
    CHECK_INT(rep.differences, 1);
    CHECK_INT(rep.matched, 7);
    cr_audit_report vr;
    CHECK_INT(cr_audit_verify(a, NULL, &vr, &err), CR_OK);
    CHECK_INT(vr.ok, 1);
    cr_audit_close(a);
}

/* Sandboxed records are skipped unless asked for; then differences are reported, not failed.
 * The stored stdout is wrong on purpose, so the record differs whether or not this host can
 * run the ns sandbox. */
static void test_replay_sandboxed(void)
{
    char path[400];
    cr_error err = {0};
    snprintf(path, sizeof path, "%s/sandboxed.db", dir);
    CHECK_INT(append_made_up(path, "ns", "import sys\nprint(1)", NULL, NULL, NULL, "2\n"), 1);

    cr_audit_replay_report rep;
    cr_audit *a = cr_audit_open(path, 0, &err);
    CHECK_INT(cr_audit_replay(a, 0, 0, 0, NULL, NULL, &rep, &err), CR_OK);
    CHECK_INT(rep.skipped, 1);
    CHECK_INT(rep.replayed, 0);
    diffs d = {0};
    CHECK_INT(cr_audit_replay(a, 0, 0, CR_REPLAY_SANDBOX, keep_diff, &d, &rep, &err), CR_OK);
    CHECK_INT(rep.replayed, 1);
    CHECK_INT(rep.sandbox_differences, 1);
    CHECK_INT(rep.differences, 0);
    CHECK(d.n >= 1);
    cr_audit_close(a);

    /* The interpreter and a package the re-run loaded in other versions: reported. */
    snprintf(path, sizeof path, "%s/runtime.db", dir);
    CHECK_INT(append_made_up(path, "ns", "import os, numpy\nprint(1)",
                             "{\"inputs\":{\"interpreter\":{\"version\":\"2.7\"},"
                             "\"packages\":{\"numpy\":\"0.0.1\",\"absent\":\"1\"}}}",
                             NULL, NULL, "1\n"), 1);
    a = cr_audit_open(path, 0, &err);
    memset(&d, 0, sizeof d);
    CHECK_INT(cr_audit_replay(a, 0, 0, CR_REPLAY_SANDBOX, keep_diff, &d, &rep, &err), CR_OK);
    if (d.n == 2) {
        CHECK_STR(d.field[0], "interpreter");
        CHECK_STR(d.want[0], "2.7");
        CHECK_STR(d.field[1], "packages/numpy");
        CHECK_STR(d.want[1], "0.0.1");
        CHECK_INT(rep.sandbox_differences, 1);
        CHECK_INT(rep.differences, 0);
    } else {
        SKIP("the ns sandbox did not run here (%d differences, the first %s: %s)", d.n,
             d.field[0], d.got[0]);
    }
    cr_audit_close(a);
}

/* A sandboxed run with a data directory: its record keeps the manifest, a replay with the
 * same directory matches, one with a file changed and one added fails naming both, before
 * anything runs (tests/test_audit_inputs.sh checks the digests and the CLI). */
static json_t *shown(const char *path, uint64_t seq);

static void test_replay_data(void)
{
    char path[400], data[400], file[500];
    cr_error err = {0};
    snprintf(path, sizeof path, "%s/data.db", dir);
    snprintf(data, sizeof data, "%s/data", dir);
    snprintf(file, sizeof file, "%s/rows.csv", data);
    FILE *f = (mkdir(data, 0755) == 0) ? fopen(file, "w") : NULL;
    CHECK(f != NULL);
    if (!f) return;
    fputs("a,b\n1,2\n", f);
    fclose(f);
    cr_engine *e = t_engine(&err, "audit", path, "tier", "ns", "data", data, NULL);
    CHECK(e != NULL);
    if (!e) return;
    int route = run1(e, CR_LANG_PYTHON, "ans = open('/data/rows.csv').read()", NULL, NULL,
                     NULL);
    cr_engine_close(e);
    json_t *j = shown(path, 1);
    json_t *files = json_object_get(json_object_get(json_object_get(
        json_object_get(j, "policy"), "inputs"), "data"), "files");
    CHECK_INT(json_array_size(files), 1);
    CHECK_STR(json_string_value(json_object_get(json_array_get(files, 0), "name")), "rows.csv");
    CHECK_INT(json_integer_value(json_object_get(json_array_get(files, 0), "size")), 8);
    json_decref(j);

    cr_audit_replay_report rep;
    diffs d = {0};
    cr_audit *a = cr_audit_open(path, 0, &err);
    if (route == CR_ROUTE_NS) {
        CHECK_INT(cr_audit_replay_data(a, 0, 0, CR_REPLAY_SANDBOX, data, keep_diff, &d, &rep,
                                       &err), CR_OK);
        CHECK_INT(rep.matched, 1);
        CHECK_INT(d.n, 0);
    } else {
        SKIP("the ns sandbox did not run here (route %d)", route);
    }
    if ((f = fopen(file, "a"))) {
        fputs("3,4\n", f);
        fclose(f);
    }
    snprintf(file, sizeof file, "%s/new.txt", data);
    if ((f = fopen(file, "w"))) fclose(f);
    memset(&d, 0, sizeof d);
    CHECK_INT(cr_audit_replay_data(a, 0, 0, CR_REPLAY_SANDBOX, data, keep_diff, &d, &rep, &err),
              CR_OK);
    CHECK_INT(rep.differences, 1);
    CHECK_INT(rep.matched, 0);
    CHECK_INT(d.n, 2);
    CHECK_STR(d.field[0], "data/rows.csv");
    CHECK_STR(d.field[1], "data/new.txt");
    CHECK_STR(d.want[1], "(absent)");
    CHECK_STR(d.got[1], "0 bytes, sha256 "
                        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    cr_audit_close(a);
}

static double cpu_seconds(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return (double)u.ru_utime.tv_sec + (double)u.ru_stime.tv_sec
         + ((double)u.ru_utime.tv_usec + (double)u.ru_stime.tv_usec) / 1e6;
}

/* Runs stopped by their limits replay under those limits, and so replay clean: two loops past
 * --timeout 0.2 (the clock stops them at different statements), one printing as it goes (its
 * output up to the stop differs in length), the step and memory limits lowered, a sandboxed
 * loop past 0.2 s and a sandboxed run past --memory 64. The record keeps every limit. Each
 * replayed its 10 s default before: the CPU the replay takes shows the recorded timeout
 * bounds it. A limit above its default is lowered to it unless the replay trusts the ledger's
 * limits, and the result that then differs is named by that limit. A clock that stopped one
 * side alone: a run that finished within its timeout where recorded runs again under the
 * default; one that was stopped and finishes here is named by its timeout. A recorded
 * interpreter this host lacks is named. */
static void test_replay_as_recorded(void)
{
    static const char loop[] = "i = 0\nwhile True:\n    i += 1\n    j = i * 2\n";
    static const char printing[] = "n = 0\nwhile True:\n    n += 1\n"
                                   "    if n % 20000 == 0:\n        print(n)\n";
    static const struct {
        const char *key, *value, *code;
        int route;
    } runs[] = {
        { "timeout", "0.2", loop, CR_ROUTE_INPROCESS },
        { "timeout", "0.2", loop, CR_ROUTE_INPROCESS },
        { "timeout", "0.3", printing, CR_ROUTE_INPROCESS },
        { "max_steps", "100000", loop, CR_ROUTE_INPROCESS },
        { "max_eval_memory", "2000000", "x = []\nwhile True:\n    x.append(len(x))\n",
          CR_ROUTE_INPROCESS },
        { "max_int_bits", "4194304", "ans = 2 ** 2000000 % 7\n", CR_ROUTE_INPROCESS },
        { "timeout", "0.2", "import sys\nwhile True:\n    pass\n", CR_ROUTE_NS },
        { "memory", "64", "import sys\nx = bytearray(200 * 1024 * 1024)\n", CR_ROUTE_NS },
    };
    static const char *const want_error[] = {
        "CPU time limit (0.2 s)", "CPU time limit (0.2 s)", "CPU time limit (0.3 s)",
        "operation limit (100000 steps)", "memory limit (2000000 bytes)", NULL,
        "wall limit: wall clock 0.200 s", "memory limit: the code got MemoryError",
    };
    char path[400];
    cr_error err = {0};
    int n = (int)(sizeof runs / sizeof runs[0]), sandboxed = 0;
    snprintf(path, sizeof path, "%s/limits.db", dir);
    for (int i = 0; i < n; i++) {
        cr_engine *e = t_engine(&err, "audit", path, "tier", "ns", runs[i].key, runs[i].value,
                                NULL);
        CHECK(e != NULL);
        if (!e) return;
        int route = run1(e, CR_LANG_PYTHON, runs[i].code, NULL, NULL, NULL);
        cr_engine_close(e);
        if (runs[i].route == CR_ROUTE_INPROCESS) CHECK_INT(route, CR_ROUTE_INPROCESS);
        else sandboxed += route == CR_ROUTE_NS;
        json_t *j = shown(path, (uint64_t)i + 1), *pol = json_object_get(j, "policy");
        const char *msg = json_string_value(json_object_get(json_object_get(j, "error"),
                                                             "message"));
        if (runs[i].route == CR_ROUTE_INPROCESS || route == CR_ROUTE_NS)
            CHECK_STR(msg ? msg : "(none)", want_error[i] ? want_error[i] : "(none)");
        if (!want_error[i])
            CHECK_STR(json_string_value(json_object_get(j, "value_repr")), "4");
        char *got = json_dumps(json_object_get(pol, !strcmp(runs[i].key, "timeout") ? "timeout_s"
                                               : !strcmp(runs[i].key, "memory") ? "memory_mib"
                                               : runs[i].key), JSON_ENCODE_ANY);
        CHECK_STR(got ? got : "(none)", !strcmp(runs[i].key, "timeout")
                                            ? (runs[i].value[2] == '2' ? "0.20000000000000001"
                                                                       : "0.29999999999999999")
                                            : runs[i].value);
        free(got);
        CHECK_INT(json_object_size(pol), (size_t)(14 + (route == CR_ROUTE_NS)
                                                  + (json_object_get(pol, "seed") != NULL)
                                                  + (json_object_get(pol, "inputs") != NULL)));
        json_decref(j);
    }
    /* Every recorded limit but max_int_bits's is at most its default: all but that record
     * replay clean; it is named by the limit it was run under. */
    cr_audit_replay_report rep;
    diffs d = {0};
    cr_audit *a = cr_audit_open(path, 0, &err);
    CHECK(a != NULL);
    if (!a) return;
    double cpu = cpu_seconds();
    replay_one_diff(a, 0, 0, 0, &rep, "max_int_bits", "4194304", "run under 1048576: a replay"
                    " grants no more unless it trusts the ledger's limits (--trust-limits)");
    cpu = cpu_seconds() - cpu;
    CHECK_INT(rep.replayed, 6);
    CHECK_INT(rep.matched, 5);
    CHECK_INT(rep.skipped, 2);
    CHECK_INT(rep.differences, 1);
    /* Three loops under their 0.2 to 0.3 s, the rest at once: under 5 s of CPU however loaded
     * the machine (30 s at least before). */
    if (cpu >= 5.0) fprintf(stderr, "replay took %.2f s of CPU\n", cpu);
    CHECK(cpu < 5.0);
    memset(&d, 0, sizeof d);
    CHECK_INT(cr_audit_replay(a, 0, 0, CR_REPLAY_TRUST_LIMITS | CR_REPLAY_SANDBOX, keep_diff,
                              &d, &rep, &err), CR_OK);
    CHECK_INT(rep.replayed, 8);
    CHECK_INT(rep.differences, 0);
    for (int i = 0; i < d.n; i++)
        fprintf(stderr, "diff %s: want %s got %s\n", d.field[i], d.want[i], d.got[i]);
    if (sandboxed == 2) {
        CHECK_INT(rep.matched, 8);
        CHECK_INT(rep.sandbox_differences, 0);
    } else {
        SKIP("the ns sandbox did not run here (%d of 2 runs)", sandboxed);
    }
    cr_audit_close(a);

    /* The clock alone stopped one side: a run that finished under its recorded 0.01 s (on
     * a faster machine, say) runs again under the default here and matches; one the clock
     * stopped that finishes here is named by its timeout. */
    snprintf(path, sizeof path, "%s/clock.db", dir);
    CHECK_INT(append_made_up(path, "inprocess", "n = 0\nfor i in range(10000000):\n    n += i\n"
                             "ans = n / 2\n", "{\"timeout_s\": 0.01}", "24999997500000",
                             "24999997500000.0", ""), 1);
    audit_record stopped;
    memset(&stopped, 0, sizeof stopped);
    AUDIT_SET(&stopped, lang, "python");
    AUDIT_SET(&stopped, code, "ans = 1\n");
    AUDIT_SET(&stopped, policy, "{\"timeout_s\": 5}");
    AUDIT_SET(&stopped, route, "inprocess");
    stopped.status = CR_ELIMIT;
    stopped.value_exact = -1;
    AUDIT_SET(&stopped, out, "");
    AUDIT_SET(&stopped, err_out, "");
    AUDIT_SET(&stopped, error, "{\"name\":\"evaluator\",\"message\":\"CPU time limit (5 s)\","
                               "\"line\":1,\"col\":1}");
    CHECK_INT(append_rec(path, &stopped), 2);
    a = cr_audit_open(path, 0, &err);
    replay_one_diff(a, 0, 0, 0, &rep, "timeout", "CPU time limit (5 s)",
                    "not reached: the run ended within it here");
    CHECK_INT(rep.matched, 1);
    CHECK_INT(rep.differences, 1);
    cr_audit_close(a);

    /* A recorded interpreter this host lacks: named, and nothing runs. */
    snprintf(path, sizeof path, "%s/interpreter.db", dir);
    CHECK_INT(append_made_up(path, "ns", "import sys\nprint(1)",
                             "{\"interpreter\":\"/usr/bin/python-none\"}", NULL, NULL, "1\n"), 1);
    a = cr_audit_open(path, 0, &err);
    replay_one_diff(a, 0, 0, CR_REPLAY_SANDBOX, &rep, "interpreter", "/usr/bin/python-none",
                    "interpreter /usr/bin/python-none: No such file or directory");
    CHECK_INT(rep.sandbox_differences, 1);
    cr_audit_close(a);
}

/* Record seq of `path` as parsed JSON (calc-audit show), or NULL. */
static json_t *shown(const char *path, uint64_t seq)
{
    cr_error err = {0};
    char *text = NULL;
    cr_audit *a = cr_audit_open(path, 0, &err);
    json_t *j = a && cr_audit_show(a, seq, &text, NULL, &err) == CR_OK
                    ? json_loads(text, 0, NULL) : NULL;
    free(text);
    cr_audit_close(a);
    return j;
}

/* Text that is not UTF-8, or that a cap cut inside a character, reaches the record whole: the
 * error message cut at 255 bytes inside an 'é', the sandboxed stdout's raw bytes, an artifact
 * named in raw bytes; and the records replay identically. */
static void test_record_text_not_utf8(void)
{
    char path[400];
    cr_error err = {0};
    snprintf(path, sizeof path, "%s/bytes.db", dir);
    cr_engine *e = t_engine(&err, "audit", path, "tier", "ns", NULL);
    CHECK(e != NULL);
    if (!e) return;
    char code[600] = "raise ValueError('";
    for (int i = 0; i < 200; i++) strcat(code, "\xC3\xA9");
    strcat(code, "')");
    CHECK_INT(run1(e, CR_LANG_PYTHON, code, NULL, NULL, NULL), CR_ROUTE_INPROCESS);
    /* A NUL byte in stdout is "\u0000" in the JSON, which replay must still read. */
    CHECK_INT(run1(e, CR_LANG_PYTHON, "print('a\\x00b')\nraise ValueError('x')", NULL, NULL,
                   NULL), CR_ROUTE_INPROCESS);
    int sandboxed = run1(e, CR_LANG_PYTHON, "import sys\nsys.stdout.buffer.write(b'ok\\xff')\n"
                         "open(b'/out/\\xff', 'wb').write(b'abc')\n", NULL, NULL, NULL);
    cr_engine_close(e);

    json_t *j = shown(path, 1), *err1 = json_object_get(j, "error");
    CHECK_STR(json_string_value(json_object_get(err1, "type")), "ValueError");
    CHECK_INT(json_string_length(json_object_get(err1, "message")), 254);
    json_decref(j);

    cr_audit_replay_report rep;
    cr_audit *a = cr_audit_open(path, 0, &err);
    diffs d = {0};
    CHECK_INT(cr_audit_replay(a, 0, 0, CR_REPLAY_SANDBOX, keep_diff, &d, &rep, &err), CR_OK);
    CHECK_INT(rep.differences, 0);
    for (int i = 0; i < d.n; i++)
        fprintf(stderr, "diff %s: want %s got %s\n", d.field[i], d.want[i], d.got[i]);
    cr_audit_close(a);

    j = shown(path, 3);
    if (sandboxed != CR_ROUTE_NS || !json_is_null(json_object_get(j, "error"))) {
        SKIP("the ns tier does not run here");
    } else {
        /* Export keeps every byte: raw stdout as base64, the artifact listed and hashed. */
        CHECK_STR(json_string_value(json_object_get(json_object_get(j, "stdout"), "base64")),
                  "b2v/");
        json_t *art = json_array_get(json_object_get(j, "artifacts"), 0);
        CHECK_STR(json_string_value(json_object_get(art, "name")), "\xEF\xBF\xBD");
        CHECK_STR(json_string_value(json_object_get(art, "name_base64")), "/w==");
        CHECK_STR(json_string_value(json_object_get(art, "sha256")),
                  "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        CHECK_INT(rep.sandbox_differences, 0);
    }
    json_decref(j);
}

/* Records an attacker wrote: the code is replayed in-process under the evaluator's default
 * limits (a ledger's policy can lower a limit, never raise one past its default unless the
 * replay trusts the ledger's limits), so a loop or a memory bomb ends with a LimitError, and
 * runaway recursion with CPython's RecursionError, that the replay reports as a difference
 * from the claimed result (a limit asked above its default, by that limit); an oversized
 * field or a policy out of range is a difference too. Each claims status 0 and the value 1. */
static void test_replay_hostile(void)
{
    static const struct { const char *code, *policy, *field, *got; } cases[] = {
        { "while True:\n    pass\n", NULL, "status", "6" },
        { "x = []\nwhile True:\n    x.append(x)\n", NULL, "status", "6" },
        { "x = [0] * (10 ** 10)\n", NULL, "status", "6" },
        { "s = 'ab' * (10 ** 9)\n", NULL, "status", "6" },
        { "def f(n):\n    return f(n + 1)\nans = f(0)\n", NULL, "status", "42" },
        { "ans = 9 ** 9 ** 9\n", NULL, "status", "6" },
        { NULL, NULL, "route", "rejected" },               /* 2 MiB of code: max_source */
        { "ans = 1\n", "{\"precision\": 1000000000}", "run", NULL },
        { "ans = 1\n", "[1, 2]", "run", "policy: not a JSON object" },
        { "x = [0] * (10 ** 10)\n", "{\"max_eval_memory\": 1099511627776}", "max_eval_memory",
          "run under 268435456: a replay grants no more unless it trusts the ledger's limits"
          " (--trust-limits)" },
        { "ans = 1\n", "{\"timeout_s\": \"forever\"}", "run", "policy: timeout_s: want a number" },
        { "ans = 1\n", "{\"timeout_s\": 0}", "run", "timeout: want seconds above 0 (at most"
          " 86400), got '0'" },
    };
    char path[400];
    snprintf(path, sizeof path, "%s/hostile.db", dir);
    size_t big_len = (size_t)2 << 20;
    char *big = malloc(big_len + 1);
    CHECK(big != NULL);
    if (!big) return;
    for (size_t i = 0; i < big_len; i++) big[i] = "ans = 1\n"[i % 8];
    big[big_len] = '\0';
    int n = (int)(sizeof cases / sizeof cases[0]);
    for (int i = 0; i < n; i++)
        CHECK_INT(append_made_up(path, "inprocess", cases[i].code ? cases[i].code : big,
                                 cases[i].policy, "1", "1", ""), (uint64_t)i + 1);
    free(big);
    cr_error err = {0};

    cr_audit *a = cr_audit_open(path, 0, &err);
    CHECK(a != NULL);
    if (!a) return;
    for (int i = 0; i < n; i++) {
        cr_audit_replay_report rep;
        diffs d = {0};
        CHECK_INT(cr_audit_replay(a, (uint64_t)i + 1, (uint64_t)i + 1, 0, keep_diff, &d, &rep,
                                  &err), CR_OK);
        CHECK_INT(rep.replayed, 1);
        CHECK_INT(rep.differences, 1);
        CHECK(d.n >= 1);
        CHECK_STR(d.field[0], cases[i].field);
        if (!strcmp(cases[i].field, "status")) CHECK_STR(d.want[0], "0");
        if (cases[i].got) CHECK_STR(d.got[0], cases[i].got);
        else CHECK(strstr(d.got[0], "precision") != NULL);
    }
    cr_audit_close(a);
}

/* Runs up to `max` programs of a corpus file; returns how many were in-process. */
static int run_corpus_file(cr_engine *e, const char *path, cr_lang lang, int max, int *runs)
{
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    char *line = NULL;
    size_t cap = 0;
    int inproc = 0;
    while (*runs < max && getline(&line, &cap, f) > 0) {
        json_t *rec = json_loads(line, 0, NULL);
        const char *code = json_string_value(json_object_get(rec, "program"));
        json_t *t = json_object_get(rec, "table");
        char *table = t ? json_dumps(t, JSON_COMPACT) : NULL;
        if (code) {
            int route = run1(e, lang, code, NULL, table, NULL);
            CHECK(route >= 0);
            inproc += route == CR_ROUTE_INPROCESS;
            (*runs)++;
        }
        free(table);
        json_decref(rec);
    }
    free(line);
    fclose(f);
    return inproc;
}

static void test_corpus_replay(void)
{
    const char *corpus = getenv("CR_CORPUS") ? getenv("CR_CORPUS") : "../shared/corpus";
    int max = getenv("CR_AUDIT_REPLAY_MAX") ? atoi(getenv("CR_AUDIT_REPLAY_MAX")) : 150;
    char p1[512], p2[512];
    snprintf(p1, sizeof p1, "%s/finqa/finqa_dev.jsonl", corpus);
    snprintf(p2, sizeof p2, "%s/python/pot_tatqa.jsonl", corpus);
    if (access(p1, R_OK) != 0 || access(p2, R_OK) != 0) {
        UNAVAILABLE("no corpus at %s (set CR_CORPUS)", corpus);
        return;
    }
    snprintf(ledger, sizeof ledger, "%s/corpus.db", dir);
    cr_engine *e = engine();
    if (!e) return;
    int runs_dsl = 0, runs_py = 0;
    SWEEP_BEGIN(sweep);   /* each program runs and is recorded: one check (tests/testlib.h) */
    int inproc = run_corpus_file(e, p1, CR_LANG_DSL, max, &runs_dsl)
               + run_corpus_file(e, p2, CR_LANG_PYTHON, max, &runs_py);
    SWEEP_END(sweep);
    cr_engine_close(e);
    CHECK_INT(runs_dsl + runs_py, 2 * max);
    CHECK(inproc > max);            /* most of these programs are inside the subset */

    cr_error err = {0};
    cr_audit_replay_report rep;
    diffs d = {0};
    cr_audit *a = cr_audit_open(ledger, 0, &err);
    CHECK_INT(cr_audit_replay(a, 0, 0, 0, keep_diff, &d, &rep, &err), CR_OK);
    CHECK_INT(rep.replayed, inproc);
    CHECK_INT(rep.differences, 0);
    CHECK_INT(rep.replayed + rep.skipped, 2 * max);
    for (int i = 0; i < d.n; i++)
        fprintf(stderr, "diff %s: want %s got %s\n", d.field[i], d.want[i], d.got[i]);
    fprintf(stderr, "corpus log: %d records, %d in-process replayed identically\n", 2 * max,
            (int)rep.matched);
    cr_audit_close(a);
}

int main(void)
{
    snprintf(dir, sizeof dir, "%s/cr-test-audit-replay-XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(dir)) return perror("mkdtemp"), 1;
    snprintf(ledger, sizeof ledger, "%s/r.db", dir);
    test_replay_identical_and_different();
    test_replay_sandboxed();
    test_replay_data();
    test_replay_as_recorded();
    test_record_text_not_utf8();
    test_replay_hostile();
    test_corpus_replay();
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return TEST_SUMMARY();
}
