/* fuzz/fuzz_audit.c: the audit ledger's read side on a tampered file. An examiner runs
 * calc-audit on a database that anybody with the file may have edited, so every column of
 * every row is untrusted input to verify, show, export and replay.
 *
 * Once per process a genuine ledger is written through the engine (an in-process Python
 * record, a DSL record with a table and variables, a syntax error, a LimitError). Each input
 * then edits a fresh copy of it with plain SQLite, triggers dropped, as an attacker would,
 * and runs the whole read side on the copy. The input is a list of edits, each
 *   row (1 byte) | column (1 byte) | kind (1 byte) | length (1 byte) | bytes
 * where the row picks a stored record, a new row copied from one, a deletion or a change of
 * the schema, the column one of the records table's 25 (or which schema change), and the
 * kind NULL, an integer, text or a blob.
 *
 * Invariants, beyond no crash, leak, hang or UB: verify and replay always finish, a ledger
 * that verify passes replays without a difference (what the chain protects, replay must find
 * unchanged), and a file whose schema was changed is refused on open as not a ledger. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>
#include <sqlite3.h>

#include "calcroute.h"

static const char *const fa_columns[] = {
    "seq", "format", "request_id", "time_us", "engine_version", "grammar_version", "lang",
    "code", "bindings", "tables", "policy", "route", "reasons", "status", "value_fraction",
    "value_repr", "value_type", "value_exact", "stdout", "stderr", "error", "artifacts",
    "timings", "prev_hash", "hash",
};
#define FA_NCOLUMNS (sizeof fa_columns / sizeof fa_columns[0])
#define FA_RECORDS 4

/* Schema changes, each leaving a file that is not a ledger; none undoes another. */
static const char *const fa_schema[] = {
    "DROP TABLE records; CREATE VIEW records AS WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL"
    " SELECT n + 1 FROM r) SELECT n AS seq FROM r WHERE n < 0",
    "ALTER TABLE checkpoints RENAME TO c0; CREATE VIEW checkpoints AS SELECT * FROM c0",
    "CREATE TRIGGER t0 AFTER INSERT ON records BEGIN SELECT 1; END",
    "CREATE TRIGGER t1 BEFORE UPDATE ON checkpoints BEGIN SELECT 1; END",
    "CREATE INDEX i0 ON records(length(code))",
    "ALTER TABLE records ADD COLUMN x0 TEXT",
    "ALTER TABLE checkpoints ADD COLUMN x1 BLOB",
    "CREATE TABLE e0(a)",
    "CREATE VIEW v0 AS SELECT * FROM records",
    "CREATE VIRTUAL TABLE f0 USING fts5(a)",
    "DROP TABLE schema_version",
};
#define FA_NSCHEMA (sizeof fa_schema / sizeof fa_schema[0])

static char fa_dir[64], fa_base[96], fa_work[96];

static void fa_cleanup(void)
{
    char p[128];
    const char *suffix[] = { "", "-wal", "-shm", "-journal" };
    for (int i = 0; i < 4; i++) {
        snprintf(p, sizeof p, "%s%s", fa_base, suffix[i]);
        unlink(p);
        snprintf(p, sizeof p, "%s%s", fa_work, suffix[i]);
        unlink(p);
    }
    rmdir(fa_dir);
}

static void fa_die(const char *what, const char *why)
{
    fprintf(stderr, "fuzz_audit: %s: %s\n", what, why ? why : "?");
    abort();
}

/* The genuine ledger, written once through the engine. */
static void fa_setup(void)
{
    const char *tmp = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    snprintf(fa_dir, sizeof fa_dir, "%s/cr-fuzz-audit-XXXXXX", tmp);
    if (!mkdtemp(fa_dir)) fa_die("mkdtemp", fa_dir);
    snprintf(fa_base, sizeof fa_base, "%s/base.db", fa_dir);
    snprintf(fa_work, sizeof fa_work, "%s/work.db", fa_dir);
    atexit(fa_cleanup);

    cr_config *cfg = cr_config_new();
    cr_error err = { 0 };
    if (!cfg || cr_config_set(cfg, "tier", "none", &err) != CR_OK ||
        cr_config_set(cfg, "audit", fa_base, &err) != CR_OK)
        fa_die("config", cfg ? err.message : "out of memory");
    cr_engine *e = cr_engine_open(cfg, &err);
    cr_config_free(cfg);
    if (!e) fa_die("engine", err.message);
    static const struct { const char *code, *vars, *table; cr_lang lang; } runs[FA_RECORDS] = {
        { "def solution():\n    return round(0.1 + 0.2, 2)\nprint(f'{1234.5:,.2f}')\n", NULL,
          NULL, CR_LANG_PYTHON },
        { "subtract(revenue, 3), divide(#0, x)", "{\"x\": 0.25}",
          "[[\"revenue\", \"$ 1,234.5\", \"( 12.3 )\"]]", CR_LANG_DSL },
        { "x = (1 +\n", NULL, NULL, CR_LANG_PYTHON },
        { "ans = 10 ** 10 ** 10\n", NULL, NULL, CR_LANG_PYTHON },
    };
    for (int i = 0; i < FA_RECORDS; i++) {
        cr_request *req = cr_request_new();
        cr_result *res = NULL;
        if (!req) fa_die("request", "out of memory");
        cr_request_set_code(req, runs[i].code, strlen(runs[i].code));
        cr_request_set_lang(req, runs[i].lang);
        if ((runs[i].vars && cr_request_set_vars_json(req, runs[i].vars, strlen(runs[i].vars), &err) != CR_OK) ||
            (runs[i].table && cr_request_set_table_json(req, runs[i].table, strlen(runs[i].table), &err) != CR_OK))
            fa_die("request", err.message);
        if (cr_run(e, req, &res, &err) != CR_OK) fa_die("run", err.message);
        cr_result_free(res);
        cr_request_free(req);
    }
    cr_engine_close(e);
}

/* The work copy: the base ledger's pages copied by SQLite's backup API. */
static sqlite3 *fa_fresh_copy(void)
{
    static sqlite3 *base;
    sqlite3 *s = NULL;
    if (!base && sqlite3_open_v2(fa_base, &base, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
        fa_die("open", fa_base);
    unlink(fa_work);
    if (sqlite3_open(fa_work, &s) != SQLITE_OK) fa_die("open", fa_work);
    sqlite3_backup *b = sqlite3_backup_init(s, "main", base, "main");
    if (!b || sqlite3_backup_step(b, -1) != SQLITE_DONE) fa_die("backup", sqlite3_errmsg(s));
    sqlite3_backup_finish(b);
    sqlite3_exec(s, "PRAGMA synchronous=OFF", NULL, NULL, NULL);
    return s;
}

/* Applies the input's edits to the work copy; returns how many SQL statements ran, and sets
 * *foreign when a schema change took. */
static int fa_tamper(sqlite3 *s, const uint8_t *d, size_t n, int *foreign)
{
    int applied = 0;
    sqlite3_exec(s, "DROP TRIGGER records_no_update; DROP TRIGGER records_no_delete;",
                 NULL, NULL, NULL);
    for (size_t i = 0; i + 4 <= n && applied < 64;) {
        unsigned row = d[i] % (FA_RECORDS + 3), col = d[i + 1] % FA_NCOLUMNS;
        unsigned kind = d[i + 2] % 4, len = d[i + 3];
        i += 4;
        if (len > n - i) len = (unsigned)(n - i);
        const uint8_t *bytes = d + i;
        i += len;
        char sql[160];
        if (row == FA_RECORDS) {            /* a new row, a copy of the last one, then edited */
            sqlite3_exec(s, "INSERT INTO records SELECT seq + 1, format, request_id, time_us,"
                            " engine_version, grammar_version, lang, code, bindings, tables,"
                            " policy, route, reasons, status, value_fraction, value_repr,"
                            " value_type, value_exact, stdout, stderr, error, artifacts,"
                            " timings, prev_hash, hash FROM records ORDER BY seq DESC LIMIT 1",
                         NULL, NULL, NULL);
            snprintf(sql, sizeof sql, "UPDATE records SET %s = ?1 WHERE seq ="
                     " (SELECT MAX(seq) FROM records)", fa_columns[col]);
        } else if (row == FA_RECORDS + 2) { /* a schema change: the file's last edit */
            applied++;
            if (sqlite3_exec(s, fa_schema[col % FA_NSCHEMA], NULL, NULL, NULL) != SQLITE_OK)
                continue;
            *foreign = 1;
            break;
        } else if (row == FA_RECORDS + 1) { /* a deletion */
            snprintf(sql, sizeof sql, "DELETE FROM records WHERE seq = %u", 1 + kind);
            sqlite3_exec(s, sql, NULL, NULL, NULL);
            applied++;
            continue;
        } else {
            snprintf(sql, sizeof sql, "UPDATE records SET %s = ?1 WHERE seq = %u",
                     fa_columns[col], row + 1);
        }
        sqlite3_stmt *st = NULL;
        if (sqlite3_prepare_v2(s, sql, -1, &st, NULL) != SQLITE_OK) fa_die("prepare", sql);
        switch (kind) {
        case 0: sqlite3_bind_null(st, 1); break;
        case 1: {
            int64_t v = 0;
            memcpy(&v, bytes, len < sizeof v ? len : sizeof v);
            sqlite3_bind_int64(st, 1, v);
            break;
        }
        case 2: sqlite3_bind_text(st, 1, (const char *)bytes, (int)len, SQLITE_TRANSIENT); break;
        default: sqlite3_bind_blob(st, 1, bytes, (int)len, SQLITE_TRANSIENT); break;
        }
        sqlite3_step(st);   /* a constraint may refuse it: then the row stays as it was */
        sqlite3_finalize(st);
        applied++;
    }
    return applied;
}

static int fa_each(const char *json, size_t len, void *arg)
{
    /* The exported text is one line holding one JSON object with a member for every column,
     * whatever bytes the columns hold. */
    json_t *j = memchr(json, '\n', len) ? NULL : json_loadb(json, len, JSON_ALLOW_NUL, NULL);
    if (!json_is_object(j)) fa_die("export", json);
    for (size_t i = 0; i < FA_NCOLUMNS; i++)
        if (!json_object_get(j, fa_columns[i])) fa_die("export: no member", fa_columns[i]);
    json_decref(j);
    ++*(size_t *)arg;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int ready;
    if (!ready) {
        fa_setup();
        ready = 1;
    }
    if (size > 4096) return 0;
    sqlite3 *s = fa_fresh_copy();
    int foreign = 0;
    fa_tamper(s, data, size, &foreign);
    sqlite3_close(s);

    cr_error err = { 0 };
    cr_audit *a = cr_audit_open(fa_work, 0, &err);
    if (foreign && (a || err.code != CR_ELEDGER)) {
        fprintf(stderr, "fuzz_audit: a changed schema was not refused: %s\n",
                a ? "opened" : err.message);
        abort();
    }
    if (!a) return 0;   /* the edits may leave a file the ledger refuses to open: fine */
    cr_audit_report rep;
    memset(&rep, 0, sizeof rep);
    cr_code vrc = cr_audit_verify(a, NULL, &rep, &err);
    for (uint64_t seq = 0; seq <= FA_RECORDS + 2; seq++) {
        char *json = NULL;
        size_t len = 0;
        if (cr_audit_show(a, seq, &json, &len, &err) == CR_OK && (!json || len != strlen(json)))
            fa_die("show", "length");
        free(json);
    }
    size_t exported = 0;
    cr_audit_export(a, 0, 0, fa_each, &exported, &err);
    cr_audit_replay_report rr;
    memset(&rr, 0, sizeof rr);
    cr_code rrc = cr_audit_replay(a, 0, 0, 0, NULL, NULL, &rr, &err);
    if (vrc == CR_OK && rep.ok && rrc == CR_OK && rr.differences) {
        fprintf(stderr, "fuzz_audit: verify passed a ledger whose replay differs (%llu)\n",
                (unsigned long long)rr.differences);
        abort();
    }
    cr_audit_close(a);
    return 0;
}
