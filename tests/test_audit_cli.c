/* tests/test_audit_cli.c: calc-audit end to end on ledgers written with audit_append():
 * outputs and exit statuses of every command, each usage error's exact message, init on a
 * new file and on a ledger, a tampered row, signed checkpoints. */
#include <stdarg.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "audit/audit.h"
#include "tests/testlib.h"

static char dir[256], tool[512], route_tool[512], out[65536];

static int starts_with(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Runs `prog` with the arguments: stdout (or with `errs` stderr alone) into `out`; the exit
 * status. */
static int vrun(const char *prog, int errs, const char *fmt, va_list ap)
{
    char args[1024], cmd[2048];
    vsnprintf(args, sizeof args, fmt, ap);
    snprintf(cmd, sizeof cmd, "'%s' %s %s", prog, args, errs ? "2>&1 >/dev/null" : "2>/dev/null");
    FILE *p = popen(cmd, "r");
    size_t n = p ? fread(out, 1, sizeof out - 1, p) : 0;
    out[n] = '\0';
    int st = p ? pclose(p) : -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* calc-audit: stdout into `out`. */
static int run(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = vrun(tool, 0, fmt, ap);
    va_end(ap);
    return rc;
}

/* `prog` (calc-audit or calc-route): stderr into `out`. */
static int run_errs(const char *prog, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = vrun(prog, 1, fmt, ap);
    va_end(ap);
    return rc;
}

static void make_ledger(const char *path, int n)
{
    audit_db *db = NULL;
    cr_error err = {0};
    CHECK_INT(audit_open(path, AUDIT_OPEN_CREATE, &db, &err), CR_OK);
    for (int i = 0; i < n; i++) {
        audit_record r;
        char id[16];
        memset(&r, 0, sizeof r);
        snprintf(id, sizeof id, "r%d", i + 1);
        AUDIT_SET(&r, request_id, id);
        r.time_us = 1700000000000000LL;
        AUDIT_SET(&r, lang, "python");
        AUDIT_SET(&r, code, "ans = 6 / 2");
        AUDIT_SET(&r, route, "inprocess");
        AUDIT_SET(&r, value_fraction, "3");
        AUDIT_SET(&r, value_repr, "3.0");
        AUDIT_SET(&r, value_type, "float");
        r.value_exact = 1;
        AUDIT_SET(&r, out, "");
        AUDIT_SET(&r, err_out, "");
        CHECK_INT(audit_append(db, &r, NULL, NULL, &err), CR_OK);
    }
    audit_close(db);
}

/* A usage error: exit 2, nothing on stdout, and on stderr the message, then the usage text
 * (--help's). */
static void check_usage(const char *help, const char *args, const char *message)
{
    static char want[sizeof out + 256];
    CHECK_INT(run("%s", args), 2);
    CHECK_STR(out, "");
    snprintf(want, sizeof want, "calc-audit: %s\n%s", message, help);
    CHECK_INT(run_errs(tool, "%s", args), 2);
    CHECK_STR(out, want);
}

static void test_usage(void)
{
    static char help[sizeof out];
    CHECK_INT(run("--help"), 0);
    CHECK(starts_with(out, "usage: calc-audit COMMAND"));
    CHECK(strstr(out, "exit status: 0 ok; 1 verification, a proof or replay failed, a record"
                      " or tree size the\nledger does not hold, or DB is not a ledger")
          != NULL);
    snprintf(help, sizeof help, "%s", out);
    CHECK_INT(run_errs(tool, "--help"), 0);
    CHECK_STR(out, "");
    CHECK_INT(run("-h"), 0);
    CHECK_STR(out, help);
    CHECK_INT(run("--version"), 0);
    CHECK_STR(out, "calc-audit " CR_VERSION_STRING "\n");
    check_usage(help, "", "no command");
    check_usage(help, "frobnicate x.db", "unknown command frobnicate");
    check_usage(help, "verify", "verify: wrong number of arguments");
    check_usage(help, "verify a.db b.db", "verify: wrong number of arguments");
    check_usage(help, "verify a.db --bogus", "unknown option --bogus");
    check_usage(help, "export a.db --from x", "--from wants a record number");
    check_usage(help, "checkpoint a.db", "checkpoint wants --key FILE");
    check_usage(help, "keygen", "keygen wants one FILE");
    check_usage(help, "verify-proof p --pubkey k", "verify-proof wants --checkpoint NOTE and"
                " --pubkey FILE");
    CHECK_INT(run("verify %s/missing.db", dir), 5);
    CHECK_STR(out, "");
    CHECK_INT(run_errs(tool, "verify %s/missing.db", dir), 5);
    char want[600];
    snprintf(want, sizeof want, "calc-audit: audit: open %s/missing.db: unable to open database"
             " file (No such file or directory)\n", dir);
    CHECK_STR(out, want);
}

/* `init` on SQLite: a new ledger that verify accepts; on a ledger, what it holds, unchanged;
 * a file that is not a ledger is refused. */
static void test_init(void)
{
    static char head[sizeof out];
    char db[400], want[1024];
    snprintf(db, sizeof db, "%s/init.db", dir);
    CHECK_INT(run("init %s", db), 0);
    CHECK_STR(out, "ok: a ledger of 0 records\n");
    CHECK_INT(run("verify %s", db), 0);
    CHECK_STR(out, "ok: 0 records, head seq 0 0000000000000000000000000000000000000000000000000"
                   "000000000000000\nno checkpoints: a consistent rewrite of the whole file would"
                   " go unnoticed; sign with `calc-audit checkpoint`\n");
    make_ledger(db, 3);
    CHECK_INT(run("head %s", db), 0);
    snprintf(head, sizeof head, "%s", out);
    CHECK_INT(run("init %s", db), 0);
    CHECK_STR(out, "ok: a ledger of 3 records\n");
    CHECK_INT(run("head %s", db), 0);
    CHECK_STR(out, head);
    CHECK_INT(run("verify %s", db), 0);
    CHECK(starts_with(out, "ok: 3 records, head seq 3 "));

    sqlite3 *s = NULL;
    snprintf(db, sizeof db, "%s/other.db", dir);
    CHECK_INT(sqlite3_open(db, &s), SQLITE_OK);
    CHECK_INT(sqlite3_exec(s, "CREATE TABLE foo(x)", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(s);
    CHECK_INT(run_errs(tool, "init %s", db), 1);
    CHECK_STR(out, "calc-audit: audit: not a ledger: unexpected table foo\n");
    snprintf(db, sizeof db, "%s/no-such-dir/init.db", dir);
    CHECK_INT(run_errs(tool, "init %s", db), 5);
    snprintf(want, sizeof want, "calc-audit: audit: open %s: unable to open database file (%s/"
             "no-such-dir: No such file or directory)\n", db, dir);
    CHECK_STR(out, want);
}

static void test_inspect(void)
{
    char db[400], head[128];
    snprintf(db, sizeof db, "%s/l.db", dir);
    make_ledger(db, 3);
    CHECK_INT(run("head %s", db), 0);
    CHECK_INT(strlen(out), 2 + 64 + 1);
    CHECK(starts_with(out, "3 "));
    snprintf(head, sizeof head, "%.66s", out);

    CHECK_INT(run("verify %s", db), 0);
    char want[512];
    snprintf(want, sizeof want, "ok: 3 records, head seq %s\nno checkpoints: a consistent"
             " rewrite of the whole file would go unnoticed; sign with `calc-audit"
             " checkpoint`\n", head);
    CHECK_STR(out, want);

    CHECK_INT(run("show %s 2", db), 0);
    CHECK(starts_with(out, "{\"seq\":2,\"format\":1,\"time\":\"2023-11-14T22:13:20.000000Z\","
                           "\"request_id\":\"r2\","));
    CHECK(strstr(out, "\"code\":\"ans = 6 / 2\"") && strstr(out, "\"value_repr\":\"3.0\""));
    CHECK(strchr(out, '\n') == out + strlen(out) - 1);
    /* a missing record: what was asked for is not there */
    CHECK_INT(run_errs(tool, "show %s 4", db), 1);
    CHECK_STR(out, "calc-audit: audit: no record with seq 4\n");
    CHECK_INT(run_errs(tool, "show %s 0", db), 2);
    CHECK_STR(out, "calc-audit: audit: records start at seq 1\n");

    CHECK_INT(run("export %s", db), 0);
    int lines = 0;
    for (char *p = out; *p; p++) lines += *p == '\n';
    CHECK_INT(lines, 3);
    CHECK(starts_with(out, "{\"seq\":1,"));
    CHECK_INT(run("export %s --from 2 --to 2", db), 0);
    CHECK(starts_with(out, "{\"seq\":2,") && strstr(out, "\n{") == NULL);

    CHECK_INT(run("replay %s", db), 0);
    CHECK_STR(out, "ok: 3 replayed, 3 identical, 0 differ, 0 sandboxed differ (not failures),"
                   " 0 skipped\n");

    /* An attacker changes one byte of row 2 behind the triggers. */
    sqlite3 *s = NULL;
    CHECK_INT(sqlite3_open(db, &s), SQLITE_OK);
    CHECK_INT(sqlite3_exec(s, "DROP TRIGGER records_no_update;"
                              "UPDATE records SET code = 'ans = 6 / 3' WHERE seq = 2",
                           NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(s);
    CHECK_INT(run("verify %s", db), 1);
    CHECK(starts_with(out, "FAIL seq 2: hash mismatch: stored "));
    CHECK(strstr(out, "\n1 records verified before the failure\n") != NULL);
    /* Replay runs the changed code and names what no longer matches. */
    /* past the end: the records asked for are not there */
    CHECK_INT(run_errs(tool, "replay %s --from 9", db), 1);
    CHECK_STR(out, "calc-audit: replay: no record with seq 9 (the ledger ends at 3)\n");
    CHECK_INT(run_errs(tool, "replay %s --from 1 --to 4", db), 1);
    CHECK_STR(out, "calc-audit: replay: no record with seq 4 (the ledger ends at 3)\n");
    CHECK_INT(run("replay %s --from 2", db), 1);
    CHECK_STR(out, "seq 2: value_fraction differs\n  recorded: \"3\"\n  replayed: \"2\"\n"
                   "seq 2: value_repr differs\n  recorded: \"3.0\"\n  replayed: \"2.0\"\n"
                   "FAIL: 2 replayed, 1 identical, 1 differ, 0 sandboxed differ (not failures),"
                   " 0 skipped\n");
}

/* A replayed field is shown JSON-escaped and cut to 300 bytes on a character boundary; bytes
 * that are not UTF-8 show as U+FFFD, said so, instead of hiding the whole value. */
static void test_replay_shows_any_bytes(void)
{
    char db[400], code[64], rec_out[512], want[2048];
    snprintf(db, sizeof db, "%s/bytes.db", dir);
    audit_db *adb = NULL;
    cr_error err = {0};
    CHECK_INT(audit_open(db, AUDIT_OPEN_CREATE, &adb, &err), CR_OK);
    const char *outs[2] = { rec_out, "\xFF\n" };
    strcpy(rec_out, "x");
    for (int i = 0; i < 200; i++) strcat(rec_out, "\xC3\xA9");    /* 'x' + 200 'é' */
    for (int i = 0; i < 2; i++) {
        audit_record r;
        memset(&r, 0, sizeof r);
        snprintf(code, sizeof code, i ? "print('a')" : "print('x' + '\xC3\xA9' * 199)");
        AUDIT_SET(&r, lang, "python");
        AUDIT_SET(&r, code, code);
        AUDIT_SET(&r, route, "inprocess");
        AUDIT_SET(&r, out, outs[i]);
        AUDIT_SET(&r, err_out, "");
        CHECK_INT(audit_append(adb, &r, NULL, NULL, &err), CR_OK);
    }
    audit_close(adb);
    CHECK_INT(run("replay %s", db), 1);
    char shown[400] = "\"x";
    for (int i = 0; i < 149; i++) strcat(shown, "\xC3\xA9");     /* 299 bytes, not 300 */
    snprintf(want, sizeof want, "seq 1: stdout differs\n  recorded: %s\"\xE2\x80\xA6 (401 bytes)\n"
             "  replayed: %s\"\xE2\x80\xA6 (400 bytes)\n"
             "seq 2: stdout differs\n  recorded: \"\xEF\xBF\xBD\\n\" (not UTF-8: U+FFFD marks each"
             " ill-formed sequence)\n  replayed: \"a\\n\"\n"
             "FAIL: 2 replayed, 0 identical, 2 differ, 0 sandboxed differ (not failures),"
             " 0 skipped\n", shown, shown);
    CHECK_STR(out, want);
}

static void test_checkpoints(void)
{
    char db[400], key[400];
    snprintf(db, sizeof db, "%s/s.db", dir);
    snprintf(key, sizeof key, "%s/k", dir);
    make_ledger(db, 2);
    CHECK_INT(run("keygen %s", key), 0);
    CHECK_INT(access(key, R_OK), 0);
    CHECK_INT(run_errs(tool, "keygen %s", key), 5);   /* never overwrites a key */
    char want[600];
    snprintf(want, sizeof want, "calc-audit: audit: create %s: File exists\n", key);
    CHECK_STR(out, want);
    CHECK_INT(run_errs(tool, "checkpoint %s --key %s", db, key), 0);
    CHECK(starts_with(out, "checkpoint: seq 2 "));   /* stdout has the tree's note */
    CHECK_INT(run("verify %s --pubkey %s.pub", db, key), 0);
    CHECK(strstr(out, "\n1 checkpoints verified with the given key, last at seq 2\n") != NULL);
    make_ledger(db, 1);                              /* one more record, not yet signed */
    CHECK_INT(run("verify --pubkey %s.pub %s", key, db), 0);
    CHECK(strstr(out, "last at seq 2; later records are not signed yet\n") != NULL);
    CHECK_INT(run_errs(tool, "verify %s --pubkey %s", db, key), 2);   /* a secret key */
    snprintf(want, sizeof want, "calc-audit: audit: key %s: expected 64 hex digits and nothing"
             " else\n", key);
    CHECK_STR(out, want);

    /* Truncation behind the checkpoint. */
    sqlite3 *s = NULL;
    CHECK_INT(sqlite3_open(db, &s), SQLITE_OK);
    CHECK_INT(sqlite3_exec(s, "DROP TRIGGER records_no_delete; DELETE FROM records WHERE seq > 1",
                           NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(s);
    CHECK_INT(run("verify %s", db), 1);
    CHECK_INT(run("verify %s --pubkey %s.pub", db, key), 1);
    CHECK(starts_with(out, "FAIL seq 2: checkpoint 1 signs seq 2 but the chain ends at seq 1"
                           " (truncated)\n"));
}

/* A file that is not a ledger fails every command, and an append, on open: the exit status
 * of a failed check, a message naming what is wrong, and no query of its rows. Here records
 * is a view that never yields a row and never ends (sorted by seq, it would also fill the
 * temp directory), and the second file has a trigger that would run on every append. */
static void test_not_a_ledger(void)
{
    static const struct { const char *name, *sql, *why; } files[] = {
        { "view.db", "DROP TABLE records; CREATE VIEW records AS WITH RECURSIVE"
          " r(seq, format, request_id, time_us, engine_version, grammar_version, lang, code,"
          " bindings, tables, policy, route, reasons, status, value_fraction, value_repr,"
          " value_type, value_exact, stdout, stderr, error, artifacts, timings, prev_hash,"
          " hash) AS (SELECT 1, 1, '', 0, '', '', 'python', 'ans = 1', NULL, NULL, NULL,"
          " 'inprocess', '[]', 0, NULL, NULL, NULL, -1, '', '', NULL, '[]', '{}',"
          " zeroblob(32), zeroblob(32) UNION ALL SELECT seq + 1, format, request_id, time_us,"
          " engine_version, grammar_version, lang, code, bindings, tables, policy, route,"
          " reasons, status, value_fraction, value_repr, value_type, value_exact, stdout,"
          " stderr, error, artifacts, timings, prev_hash, hash FROM r) SELECT * FROM r"
          " WHERE seq < 0", "records is a view, not a table" },
        { "trigger.db", "CREATE TRIGGER spread AFTER INSERT ON records BEGIN INSERT INTO"
          " checkpoints(seq, head_hash, time_us, pubkey, signature) SELECT seq, hash, 0, x'',"
          " x'' FROM records; END", "unexpected trigger spread on records" },
    };
    static const char *const cmds[] = { "verify %s", "replay %s", "show %s 1", "export %s",
                                        "head %s", "checkpoint %s --key %s/k", "prove %s 1",
                                        "prove %s --consistency 1 2" };
    char db[400], want[300];
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
        snprintf(db, sizeof db, "%s/%s", dir, files[f].name);
        make_ledger(db, 2);
        sqlite3 *s = NULL;
        CHECK_INT(sqlite3_open(db, &s), SQLITE_OK);
        CHECK_INT(sqlite3_exec(s, "DROP TRIGGER records_no_update; DROP TRIGGER"
                                  " records_no_delete", NULL, NULL, NULL), SQLITE_OK);
        CHECK_INT(sqlite3_exec(s, files[f].sql, NULL, NULL, NULL), SQLITE_OK);
        sqlite3_close(s);
        snprintf(want, sizeof want, "calc-audit: audit: not a ledger: %s\n", files[f].why);
        for (size_t c = 0; c < sizeof cmds / sizeof cmds[0]; c++) {
            char fmt[700];
            snprintf(fmt, sizeof fmt, "timeout 60 '%s' %s", tool, cmds[c]);
            CHECK_INT(run_errs("env", fmt, db, dir), 1);
            CHECK_STR(out, want);
        }
        /* calc-route --audit: the ledger's path is a bad argument; nothing runs. */
        char code[420];
        snprintf(code, sizeof code, "%s/c.py", dir);
        FILE *cf = fopen(code, "w");
        CHECK(cf && fputs("ans = 1\n", cf) >= 0 && fclose(cf) == 0);
        CHECK_INT(run_errs(route_tool, "--tier none --audit %s %s", db, code), 2);
        snprintf(want, sizeof want, "calc-route: audit: not a ledger: %s\n", files[f].why);
        CHECK_STR(out, want);
    }
    /* Not a database at all. */
    snprintf(db, sizeof db, "%s/text.db", dir);
    FILE *tf = fopen(db, "w");
    CHECK(tf && fputs("just text, not a ledger\n", tf) >= 0 && fclose(tf) == 0);
    CHECK_INT(run_errs(tool, "verify %s", db), 1);
    CHECK_STR(out, "calc-audit: audit: read schema: not a ledger: file is not a database\n");
}

int main(void)
{
    const char *b = getenv("BUILD") ? getenv("BUILD") : "build";
    snprintf(tool, sizeof tool, "%s/calc-audit", b);
    snprintf(route_tool, sizeof route_tool, "%s/calc-route", b);
    if (access(tool, X_OK) != 0) {
        SKIP("%s is not built", tool);
        return TEST_SUMMARY();
    }
    snprintf(dir, sizeof dir, "%s/cr-test-audit-cli-XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(dir)) return perror("mkdtemp"), 1;
    test_usage();
    test_init();
    test_inspect();
    test_replay_shows_any_bytes();
    test_checkpoints();
    test_not_a_ledger();
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return TEST_SUMMARY();
}
