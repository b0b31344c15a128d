/* tests/test_audit.c: the ledger: encoding, chaining, append-only triggers, tampering of
 * every field of every row, deletion, reordering, truncation and consistent rewrites
 * against signed checkpoints, JSON export. */
#include <pthread.h>
#include <sodium.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "audit/audit_int.h"
#include "tests/testlib.h"

#define NROWS 4
/* SHA-256(tag, 32 zero bytes, encoding of sample record 3 as seq 1). */
#define GOLDEN_HASH "2f9fb8e964e321b463ee0f9d83bcfd74d78741e81e89a6a165366666bbbf9f26"

static char dir[256];

static const char *path_in(const char *name)
{
    static char bufs[4][512];
    static int k;
    char *p = bufs[k++ % 4];
    snprintf(p, 512, "%s/%s", dir, name);
    return p;
}

/* A deterministic record i: fixed time, fields of every shape (NULL, empty, JSON, bytes). */
static void sample(audit_record *r, int i, char *id, size_t idsz)
{
    static const char *const codes[] = { "ans = 0.1 + 0.2", "print(7 // 2)",
                                         "subtract(5829, 5735), divide(#0, 5735)",
                                         "x = 1/0" };
    memset(r, 0, sizeof *r);
    snprintf(id, idsz, "req-%d", i);
    AUDIT_SET(r, request_id, id);
    r->time_us = 1700000000000000LL + i;
    AUDIT_SET(r, engine_version, "0.1.0");
    AUDIT_SET(r, grammar_version, "tree-sitter-python 0.23.6 (ABI 14)");
    AUDIT_SET(r, lang, i == 2 ? "dsl" : "python");
    AUDIT_SET(r, code, codes[i % 4]);
    AUDIT_SET(r, bindings, i == 1 ? "{\"x\":0.1}" : NULL);
    AUDIT_SET(r, tables, NULL);
    AUDIT_SET(r, policy, "{\"precision\":34,\"rounding\":\"half-even\"}");
    AUDIT_SET(r, route, "inprocess");
    AUDIT_SET(r, reasons, "[]");
    r->status = i == 3 ? CR_EPY_ZERODIV : CR_OK;
    AUDIT_SET(r, value_fraction, i == 3 ? NULL : "3/10");
    AUDIT_SET(r, value_repr, i == 3 ? NULL : "0.3");
    AUDIT_SET(r, value_type, i == 3 ? NULL : "float");
    r->value_exact = i == 3 ? -1 : 1;
    AUDIT_SET(r, out, i == 1 ? "3\n" : "");
    AUDIT_SET(r, err_out, "");
    AUDIT_SET(r, error, i == 3 ? "{\"type\":\"ZeroDivisionError\",\"message\":\"division by"
                                 " zero\",\"line\":1,\"col\":5}" : NULL);
    AUDIT_SET(r, artifacts, "[]");
    AUDIT_SET(r, timings, "{\"total_us\":12}");
}

static audit_db *open_db(const char *path, int flags)
{
    audit_db *db = NULL;
    cr_error err = {0};
    if (audit_open(path, flags, &db, &err) != CR_OK)
        fprintf(stderr, "open %s: %s\n", path, err.message);
    return db;
}

/* Appends records 0..n-1 one transaction each (one check). */
static void fill(audit_db *db, int n)
{
    char id[32];
    audit_record r;
    cr_error err = {0};
    SWEEP_BEGIN(sweep);
    for (int i = 0; i < n; i++) {
        sample(&r, i, id, sizeof id);
        uint64_t seq = 0;
        CHECK_INT(audit_append(db, &r, &seq, NULL, &err), CR_OK);
        CHECK_INT(seq, (uint64_t)i + 1);
    }
    SWEEP_END(sweep);
}

/* Verify in `ranges` ranges read side by side (0: one pass); an error's message goes into
 * problem with ok -1. */
static cr_audit_report verify_cut(const char *path, const uint8_t *pk, int ranges)
{
    cr_audit_report rep;
    memset(&rep, 0, sizeof rep);
    cr_error err = {0};
    audit_verify_range_min = ranges ? 1 : UINT64_MAX;
    audit_verify_ranges = ranges;
    audit_db *db = NULL;
    /* A PostgreSQL role limited to one connection (tests/test_audit_pg.sh) has it back only
     * once the server has ended the session before, which closing the handle does not wait
     * for. */
    for (int tries = 0; audit_open(path, AUDIT_OPEN_READONLY, &db, &err) != CR_OK
                        && strstr(err.message, "too many connections") && tries < 100; tries++)
        usleep(20000);
    if (!db || audit_verify(db, pk, &rep, &err) != CR_OK) {
        rep.ok = -1;
        snprintf(rep.problem, sizeof rep.problem, "%s", err.message);
    }
    audit_close(db);
    return rep;
}

/* The single pass's report, and the same from the ledger cut into 2, 3, 4 and 7 ranges (as far
 * as it has records): each must equal it, field for field (one check). */
static cr_audit_report verify_path(const char *path, const uint8_t *pk)
{
    static const int cuts[] = { 2, 3, 4, 7 };
    uint64_t min = audit_verify_range_min;
    cr_audit_report rep = verify_cut(path, pk, 0);
    if (rep.ok < 0) fprintf(stderr, "verify %s: %s\n", path, rep.problem);
    SWEEP_BEGIN(sweep);
    for (size_t i = 0; i < sizeof cuts / sizeof *cuts; i++) {
        cr_audit_report cut = verify_cut(path, pk, cuts[i]);
        CHECK_INT(cut.ok, rep.ok);
        CHECK_INT(cut.records, rep.records);
        CHECK_INT(cut.head_seq, rep.head_seq);
        CHECK_STR(cut.head_hash, rep.head_hash);
        CHECK_INT(cut.bad_seq, rep.bad_seq);
        CHECK_STR(cut.problem, rep.problem);
        CHECK_INT(cut.checkpoints, rep.checkpoints);
        CHECK_INT(cut.checkpoint_seq, rep.checkpoint_seq);
        CHECK_INT(cut.foreign_checkpoints, rep.foreign_checkpoints);
    }
    SWEEP_END(sweep);
    audit_verify_range_min = min;
    audit_verify_ranges = 0;
    return rep;
}

static int copy_file(const char *from, const char *to)
{
    FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
    char buf[65536];
    size_t n;
    int ok = in && out;
    while (ok && (n = fread(buf, 1, sizeof buf, in)) > 0) ok = fwrite(buf, 1, n, out) == n;
    if (in) fclose(in);
    if (out && fclose(out) != 0) ok = 0;
    return ok;
}

/* An attacker's connection: plain sqlite3, the triggers dropped first. */
static sqlite3 *attacker(const char *path)
{
    sqlite3 *s = NULL;
    if (sqlite3_open(path, &s) != SQLITE_OK) return NULL;
    sqlite3_exec(s, "DROP TRIGGER records_no_update; DROP TRIGGER records_no_delete;"
                    "DROP TRIGGER checkpoints_no_update; DROP TRIGGER checkpoints_no_delete;",
                 NULL, NULL, NULL);
    return s;
}

static int exec_ok(sqlite3 *s, const char *sql)
{
    char *msg = NULL;
    int rc = sqlite3_exec(s, sql, NULL, NULL, &msg);
    if (rc != SQLITE_OK) fprintf(stderr, "%s: %s\n", sql, msg ? msg : "?");
    sqlite3_free(msg);
    return rc == SQLITE_OK;
}

/* A copy of ledger `from` named `name`, with `sql` run on it by an attacker (NULL: none). */
static const char *attacked(const char *name, const char *from, const char *sql)
{
    const char *p = path_in(name);
    unlink(p);
    CHECK(copy_file(path_in(from), p));
    if (sql) {
        sqlite3 *s = attacker(p);
        CHECK(exec_ok(s, sql));
        sqlite3_close(s);
    }
    return p;
}

/* ---- tests ------------------------------------------------------------------------------ */

/* The hash of a fixed record pins the encoding: the figure was computed independently (a
 * short Python script following the format described in audit/audit.h and ledger.c). */
static void test_golden_hash(void)
{
    char id[32], hex[65];
    audit_record r;
    cr_buf enc;
    uint8_t zero[AUDIT_HASH_LEN] = {0}, h[AUDIT_HASH_LEN];
    sample(&r, 3, id, sizeof id);
    cr_buf_init(&enc, 0);
    CHECK_INT(audit_encode(&r, 1, &enc), CR_OK);
    audit_chain_hash(zero, enc.p, enc.len, h);
    audit_hex(h, hex);
    CHECK_STR(hex, GOLDEN_HASH);
    cr_buf_free(&enc);
}

static void test_absent_differs_from_empty(void)
{
    char id[32];
    audit_record a, b;
    cr_buf ea, eb;
    sample(&a, 0, id, sizeof id);
    b = a;
    AUDIT_SET(&a, tables, NULL);
    AUDIT_SET(&b, tables, "");
    cr_buf_init(&ea, 0);
    cr_buf_init(&eb, 0);
    audit_encode(&a, 1, &ea);
    audit_encode(&b, 1, &eb);
    CHECK(ea.len != eb.len || memcmp(ea.p, eb.p, ea.len) != 0);
    /* Moving a byte from one field to the next must change the encoding too. */
    audit_record c = a, d = a;
    AUDIT_SET(&c, out, "ab");
    AUDIT_SET(&c, err_out, "");
    AUDIT_SET(&d, out, "a");
    AUDIT_SET(&d, err_out, "b");
    cr_buf_reset(&ea);
    cr_buf_reset(&eb);
    audit_encode(&c, 1, &ea);
    audit_encode(&d, 1, &eb);
    CHECK(ea.len != eb.len || memcmp(ea.p, eb.p, ea.len) != 0);
    cr_buf_free(&ea);
    cr_buf_free(&eb);
}

static void test_append_chain_head(void)
{
    audit_db *db = open_db(path_in("chain.db"), AUDIT_OPEN_CREATE);
    cr_error err = {0};
    uint64_t seq = 99;
    uint8_t head[AUDIT_HASH_LEN], last[AUDIT_HASH_LEN], zero[AUDIT_HASH_LEN] = {0};
    CHECK(db != NULL);
    if (!db) return;
    CHECK_INT(audit_head(db, &seq, head, &err), CR_OK);
    CHECK_INT(seq, 0);
    CHECK(memcmp(head, zero, sizeof zero) == 0);
    fill(db, NROWS);
    CHECK_INT(audit_head(db, &seq, head, &err), CR_OK);
    CHECK_INT(seq, NROWS);

    /* Each row links to the one before, the first to zeros, and its hash recomputes. */
    audit_iter *it = NULL;
    audit_entry e;
    uint8_t prev[AUDIT_HASH_LEN] = {0};
    cr_buf enc;
    cr_buf_init(&enc, 0);
    int n = 0;
    CHECK_INT(audit_iter_open(db, 0, 0, &it, &err), CR_OK);
    while (audit_iter_next(it, &e, &err) == 1) {
        n++;
        CHECK_INT(e.seq, n);
        CHECK(memcmp(e.prev_hash, prev, AUDIT_HASH_LEN) == 0);
        cr_buf_reset(&enc);
        audit_encode(&e.rec, e.seq, &enc);
        audit_chain_hash(prev, enc.p, enc.len, last);
        CHECK(memcmp(last, e.hash, AUDIT_HASH_LEN) == 0);
        memcpy(prev, e.hash, AUDIT_HASH_LEN);
        if (n == 4) {  /* absent stays absent, bytes stay bytes */
            CHECK(e.rec.value_repr == NULL && e.rec.bindings == NULL);
            CHECK(e.rec.out != NULL && e.rec.out_len == 0);
            CHECK_INT(e.rec.status, CR_EPY_ZERODIV);
            CHECK_INT(e.rec.value_exact, -1);
        }
    }
    audit_iter_close(it);
    CHECK_INT(n, NROWS);
    CHECK(memcmp(head, prev, AUDIT_HASH_LEN) == 0);

    /* A range. */
    CHECK_INT(audit_iter_open(db, 2, 3, &it, &err), CR_OK);
    n = 0;
    while (audit_iter_next(it, &e, &err) == 1) CHECK_INT(e.seq, 2 + n++);
    CHECK_INT(n, 2);
    audit_iter_close(it);

    /* A batch continues the same chain. */
    audit_record recs[3];
    char ids[3][32];
    for (int i = 0; i < 3; i++) sample(&recs[i], i, ids[i], sizeof ids[i]);
    uint64_t first = 0;
    CHECK_INT(audit_append_batch(db, recs, 3, &first, last, &err), CR_OK);
    CHECK_INT(first, NROWS + 1);
    CHECK_INT(audit_head(db, &seq, head, &err), CR_OK);
    CHECK_INT(seq, NROWS + 3);
    CHECK(memcmp(head, last, AUDIT_HASH_LEN) == 0);
    cr_buf_free(&enc);
    audit_close(db);

    cr_audit_report rep = verify_path(path_in("chain.db"), NULL);
    CHECK_INT(rep.ok, 1);
    CHECK_INT(rep.records, NROWS + 3);
    CHECK_INT(rep.head_seq, NROWS + 3);
}

/* A batch long enough to be hashed ahead by a helper thread (longer than the 256 records it
 * may run ahead, so it waits for the inserts) chains exactly as the same records appended in
 * short batches, hashed inline; records without a time get one, and the chain verifies. */
static void test_long_batch(void)
{
    enum { N = 700, SHORT = 50 };
    static audit_record recs[N];
    static char ids[N][32];
    cr_error err = {0};
    for (int i = 0; i < N; i++) sample(&recs[i], i, ids[i], sizeof ids[i]);
    audit_db *a = open_db(path_in("batch-long.db"), AUDIT_OPEN_CREATE);
    audit_db *b = open_db(path_in("batch-short.db"), AUDIT_OPEN_CREATE);
    CHECK(a && b);
    if (!a || !b) return;
    uint64_t first = 0;
    uint8_t last[AUDIT_HASH_LEN], head[AUDIT_HASH_LEN];
    CHECK_INT(audit_append_batch(a, recs, N, &first, last, &err), CR_OK);
    CHECK_INT(first, 1);
    for (int i = 0; i < N; i += SHORT)
        CHECK_INT(audit_append_batch(b, recs + i, SHORT, NULL, head, &err), CR_OK);
    CHECK(memcmp(last, head, AUDIT_HASH_LEN) == 0);
    for (int i = 0; i < N; i++) recs[i].time_us = i % 3 ? recs[i].time_us : 0;
    CHECK_INT(audit_append_batch(a, recs, 300, &first, last, &err), CR_OK);
    CHECK_INT(first, N + 1);
    audit_iter *it = NULL;
    audit_entry e;
    int untimed = 0;
    CHECK_INT(audit_iter_open(a, N + 1, 0, &it, &err), CR_OK);
    while (audit_iter_next(it, &e, &err) == 1) untimed += e.rec.time_us == 0;
    audit_iter_close(it);
    CHECK_INT(untimed, 0);
    audit_close(a);
    audit_close(b);
    cr_audit_report rep = verify_path(path_in("batch-long.db"), NULL);
    CHECK_INT(rep.ok, 1);
    CHECK_INT(rep.records, N + 300);
}

static void test_triggers_and_readonly(void)
{
    sqlite3 *s = NULL;
    char *msg = NULL;
    CHECK_INT(sqlite3_open(path_in("chain.db"), &s), SQLITE_OK);
    CHECK(sqlite3_exec(s, "UPDATE records SET code = 'x' WHERE seq = 1", NULL, NULL, &msg)
          != SQLITE_OK);
    CHECK(msg && strstr(msg, "append-only"));
    sqlite3_free(msg);
    msg = NULL;
    CHECK(sqlite3_exec(s, "DELETE FROM records WHERE seq = 2", NULL, NULL, &msg) != SQLITE_OK);
    CHECK(msg && strstr(msg, "append-only"));
    sqlite3_free(msg);
    sqlite3_close(s);

    audit_db *db = open_db(path_in("chain.db"), AUDIT_OPEN_READONLY);
    char id[32];
    audit_record r;
    cr_error err = {0};
    sample(&r, 0, id, sizeof id);
    CHECK_INT(audit_append(db, &r, NULL, NULL, &err), CR_EUSAGE);
    audit_close(db);

    /* Without AUDIT_OPEN_CREATE a missing ledger is an error, not a new file. */
    db = NULL;
    CHECK_INT(audit_open(path_in("missing.db"), 0, &db, &err), CR_EAUDIT);
    CHECK(db == NULL);
    CHECK(access(path_in("missing.db"), F_OK) != 0);
}

static void test_schema_version(void)
{
    audit_db *db = open_db(path_in("schema.db"), AUDIT_OPEN_CREATE);
    audit_close(db);
    sqlite3 *s = attacker(path_in("schema.db"));
    CHECK(exec_ok(s, "UPDATE schema_version SET version = 99"));
    sqlite3_close(s);
    cr_error err = {0};
    db = NULL;
    CHECK_INT(audit_open(path_in("schema.db"), 0, &db, &err), CR_ELEDGER);
    CHECK_STR(err.message, "audit: schema version 99, expected 1");
}

/* The template every tamper test copies: NROWS records, written and closed. */
static void make_template(void)
{
    audit_db *db = open_db(path_in("template.db"), AUDIT_OPEN_CREATE);
    fill(db, NROWS);
    audit_close(db);
}

/* Changes one byte (or, for a NULL, sets a value) of column `col` in row `seq`. */
static int tamper_field(sqlite3 *s, const char *col, int seq)
{
    char sql[256];
    sqlite3_stmt *st = NULL;
    snprintf(sql, sizeof sql, "SELECT %s, typeof(%s) FROM records WHERE seq = %d", col, col, seq);
    if (sqlite3_prepare_v2(s, sql, -1, &st, NULL) != SQLITE_OK || sqlite3_step(st) != SQLITE_ROW)
        return 0;
    const char *type = (const char *)sqlite3_column_text(st, 1);
    char kind = type[0];
    int64_t iv = sqlite3_column_int64(st, 0);
    int len = sqlite3_column_bytes(st, 0);
    unsigned char *bytes = malloc((size_t)len + 1);
    if (len) memcpy(bytes, sqlite3_column_blob(st, 0), (size_t)len);
    sqlite3_finalize(st);

    snprintf(sql, sizeof sql, "UPDATE records SET %s = ? WHERE seq = %d", col, seq);
    sqlite3_prepare_v2(s, sql, -1, &st, NULL);
    if (strcmp(col, "seq") == 0) {
        sqlite3_bind_int64(st, 1, iv + 1000);   /* a free number: the row moves away */
    } else if (kind == 'i') {
        sqlite3_bind_int64(st, 1, iv ^ 1);
    } else if (kind == 'n' || len == 0) {
        sqlite3_bind_text(st, 1, "x", 1, SQLITE_STATIC);
    } else {
        bytes[len / 2] ^= 0x01;
        if (kind == 'b') sqlite3_bind_blob(st, 1, bytes, len, SQLITE_TRANSIENT);
        else sqlite3_bind_text(st, 1, (char *)bytes, len, SQLITE_TRANSIENT);
    }
    int ok = sqlite3_step(st) == SQLITE_DONE && sqlite3_changes(s) == 1;
    sqlite3_finalize(st);
    free(bytes);
    return ok;
}

static void test_tamper_every_field(void)
{
    static const char *const cols[] = {
        "seq", "format", "request_id", "time_us", "engine_version", "grammar_version", "lang",
        "code", "bindings", "tables", "policy", "route", "reasons", "status", "value_fraction",
        "value_repr", "value_type", "value_exact", "stdout", "stderr", "error", "artifacts",
        "timings", "prev_hash", "hash", NULL };
    int cases = 0, named = 0;
    SWEEP_BEGIN(sweep);   /* every field of every row: one check (tests/testlib.h) */
    for (int seq = 1; seq <= NROWS; seq++) {
        for (int c = 0; cols[c]; c++) {
            const char *p = attacked("tamper.db", "template.db", NULL);
            sqlite3 *s = attacker(p);
            CHECK(tamper_field(s, cols[c], seq));
            sqlite3_close(s);
            cr_audit_report rep = verify_path(p, NULL);
            const char *want = !strcmp(cols[c], "seq") ? "gap"
                             : !strcmp(cols[c], "prev_hash") ? "bad prev link" : "hash mismatch";
            cases++;
            if (rep.ok == 0 && rep.bad_seq == (uint64_t)seq
                && strncmp(rep.problem, want, strlen(want)) == 0) {
                named++;
            } else {
                fprintf(stderr, "tamper %s of seq %d: ok=%d bad_seq=%llu problem=%s\n",
                        cols[c], seq, rep.ok, (unsigned long long)rep.bad_seq, rep.problem);
            }
        }
    }
    SWEEP_END(sweep);
    CHECK_INT(cases, 25 * NROWS);
    CHECK_INT(named, cases);
}

/* The records table's columns, for SQL that rebuilds or imitates it. */
#define REC_COLS "seq, format, request_id, time_us, engine_version, grammar_version, lang," \
    " code, bindings, tables, policy, route, reasons, status, value_fraction, value_repr," \
    " value_type, value_exact, stdout, stderr, error, artifacts, timings, prev_hash, hash"
/* The genuine declaration of records with `code`'s type replaced. */
#define REC_DECL(code_type) "(seq INTEGER PRIMARY KEY, format INTEGER NOT NULL," \
    " request_id TEXT, time_us INTEGER, engine_version TEXT, grammar_version TEXT, lang TEXT," \
    " code " code_type ", bindings TEXT, tables TEXT, policy TEXT, route TEXT, reasons TEXT," \
    " status INTEGER, value_fraction TEXT, value_repr TEXT, value_type TEXT," \
    " value_exact INTEGER, stdout TEXT, stderr TEXT, error TEXT, artifacts TEXT," \
    " timings TEXT, prev_hash BLOB NOT NULL, hash BLOB NOT NULL)"

/* A view that never yields a row and never ends; under ORDER BY seq its sort grows without
 * bound: what an old reader ran forever on. */
#define ENDLESS_VIEW "CREATE VIEW records AS WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL" \
    " SELECT n + 1 FROM r) SELECT n AS seq, 1 AS format, '' AS request_id, 0 AS time_us," \
    " '' AS engine_version, '' AS grammar_version, 'python' AS lang, 'ans = 1' AS code," \
    " NULL AS bindings, NULL AS tables, NULL AS policy, 'inprocess' AS route, '[]' AS reasons," \
    " 0 AS status, NULL AS value_fraction, NULL AS value_repr, NULL AS value_type," \
    " -1 AS value_exact, '' AS stdout, '' AS stderr, NULL AS error, '[]' AS artifacts," \
    " '{}' AS timings, zeroblob(32) AS prev_hash, zeroblob(32) AS hash FROM r WHERE n < 0"

/* Files an attacker may hand over in place of a ledger: each is refused on open, for reading
 * and for appending alike, with CR_ELEDGER and a message naming what is wrong, before any
 * query of the rows runs (so none of them can take long). */
static void test_hostile_schema(void)
{
    static const struct { const char *sql, *why; } cases[] = {
        { "DROP TABLE records;" ENDLESS_VIEW, "records is a view, not a table" },
        { "DROP TABLE checkpoints; CREATE VIEW checkpoints AS SELECT 1 AS id",
          "checkpoints is a view, not a table" },
        { "ALTER TABLE records RENAME TO old;" ENDLESS_VIEW, "unexpected table old" },
        { "CREATE TRIGGER evil AFTER INSERT ON records BEGIN"
          " INSERT INTO checkpoints SELECT * FROM checkpoints; END",
          "unexpected trigger evil on records" },
        { "CREATE TRIGGER records_no_update BEFORE UPDATE ON records BEGIN SELECT 1; END",
          "trigger records_no_update is not the ledger's" },
        { "CREATE VIEW v AS SELECT 1", "unexpected view v" },
        { "CREATE INDEX i ON records(length(code))", "unexpected index i on records" },
        { "CREATE TABLE extra(x)", "unexpected table extra" },
        { "DROP TABLE checkpoints", "no table checkpoints" },
        { "DROP TABLE schema_version", "no table schema_version" },
        { "ALTER TABLE records ADD COLUMN evil TEXT",
          "table records has an extra column evil TEXT" },
        { "ALTER TABLE records DROP COLUMN hash", "table records has no column hash" },
        { "ALTER TABLE records RENAME TO old; CREATE TABLE records" REC_DECL("BLOB") ";"
          "INSERT INTO records SELECT * FROM old; DROP TABLE old",
          "table records column 8 is \"code BLOB\", expected \"code TEXT\"" },
        { "ALTER TABLE records RENAME TO old; CREATE TABLE records" REC_DECL("TEXT")
          " WITHOUT ROWID; INSERT INTO records SELECT * FROM old; DROP TABLE old",
          "table records column 1 is \"seq INTEGER NOT NULL PRIMARY KEY\", expected"
          " \"seq INTEGER PRIMARY KEY\"" },
        { "ALTER TABLE records RENAME TO old; CREATE TABLE records" REC_DECL("TEXT CHECK(1)")
          "; INSERT INTO records SELECT " REC_COLS " FROM old; DROP TABLE old",
          "table records is not declared as the ledger's (constraints or options differ)" },
        { "ALTER TABLE records ADD COLUMN g INTEGER GENERATED ALWAYS AS (seq * 2)",
          "table records has an extra column g INTEGER (hidden or generated)" },
        { "DROP TABLE checkpoints; CREATE VIRTUAL TABLE checkpoints USING fts5(x)",
          "checkpoints is a virtual table, not an ordinary table" },
    };
    char name[32], want[256];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(name, sizeof name, "hostile%zu.db", i);
        const char *p = attacked(name, "template.db", cases[i].sql);
        snprintf(want, sizeof want, "audit: not a ledger: %s", cases[i].why);
        for (int flags = AUDIT_OPEN_READONLY; flags >= 0; flags -= AUDIT_OPEN_READONLY - 1) {
            audit_db *db = NULL;
            cr_error err = {0};
            CHECK_INT(audit_open(p, flags, &db, &err), CR_ELEDGER);
            CHECK(db == NULL);
            CHECK_STR(err.message, want);
            audit_close(db);
        }
    }

    /* What is not a SQLite database at all, an empty one, one in UTF-16. */
    audit_db *db = NULL;
    cr_error err = {0};
    FILE *f = fopen(path_in("text.db"), "w");
    CHECK(f && fputs("not a database, just text\n", f) >= 0 && fclose(f) == 0);
    CHECK_INT(audit_open(path_in("text.db"), AUDIT_OPEN_READONLY, &db, &err), CR_ELEDGER);
    CHECK_STR(err.message, "audit: read schema: not a ledger: file is not a database");
    CHECK_INT(audit_open(path_in("text.db"), AUDIT_OPEN_CREATE, &db, &err), CR_ELEDGER);
    sqlite3 *s = NULL;
    CHECK_INT(sqlite3_open(path_in("empty.db"), &s), SQLITE_OK);
    CHECK(exec_ok(s, "PRAGMA user_version = 7"));
    sqlite3_close(s);
    CHECK_INT(audit_open(path_in("empty.db"), AUDIT_OPEN_READONLY, &db, &err), CR_ELEDGER);
    CHECK_STR(err.message, "audit: not a ledger: the database is empty");
    /* another program's file says so in its header, even with a ledger's schema */
    const char *tagged = attacked("tagged.db", "template.db", "PRAGMA application_id = 42");
    for (int flags = AUDIT_OPEN_READONLY; flags >= 0; flags -= AUDIT_OPEN_READONLY) {
        CHECK_INT(audit_open(tagged, flags, &db, &err), CR_ELEDGER);
        CHECK_STR(err.message, "audit: not a ledger: its SQLite application_id is 0x0000002a,"
                               " another program's");
    }
    CHECK_INT(audit_open(path_in("fresh.db"), AUDIT_OPEN_CREATE, &db, &err), CR_OK);
    audit_close(db);
    CHECK_INT(sqlite3_open(path_in("fresh.db"), &s), SQLITE_OK);
    sqlite3_stmt *st = NULL;
    CHECK(sqlite3_prepare_v2(s, "PRAGMA application_id", -1, &st, NULL) == SQLITE_OK &&
          sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int64(st, 0) == AUDIT_APPLICATION_ID);
    sqlite3_finalize(st);
    sqlite3_close(s);
    CHECK_INT(sqlite3_open(path_in("utf16.db"), &s), SQLITE_OK);
    CHECK(exec_ok(s, "PRAGMA encoding = 'UTF-16le'; CREATE TABLE x(a); DROP TABLE x"));
    sqlite3_close(s);
    CHECK_INT(audit_open(path_in("utf16.db"), AUDIT_OPEN_CREATE, &db, &err), CR_ELEDGER);
    CHECK_STR(err.message, "audit: not a ledger: the text encoding is UTF-16le, not UTF-8");
    /* Another application's database is never turned into a ledger. */
    CHECK_INT(sqlite3_open(path_in("app.db"), &s), SQLITE_OK);
    CHECK(exec_ok(s, "CREATE TABLE users(name TEXT)"));
    sqlite3_close(s);
    CHECK_INT(audit_open(path_in("app.db"), AUDIT_OPEN_CREATE, &db, &err), CR_ELEDGER);
    CHECK_STR(err.message, "audit: not a ledger: unexpected table users");
    CHECK(db == NULL);
}

/* Dropped triggers are the attacker's first step, harmless to a reader: the ledger still
 * opens and verify finds the tampering itself. A stored value of another storage class than
 * the ledger writes fails verify even when its bytes hash like the genuine one. */
static void test_row_classes(void)
{
    const char *p = attacked("notriggers.db", "template.db", NULL);
    cr_audit_report rep = verify_path(p, NULL);
    CHECK_INT(rep.ok, 1);
    CHECK_INT(rep.records, NROWS);
    static const struct { const char *sql, *problem; } cases[] = {
        { "UPDATE records SET code = CAST(code AS BLOB) WHERE seq = 2",
          "column code holds a blob, expected text" },
        { "UPDATE records SET status = '0x' WHERE seq = 2",
          "column status holds text, expected an integer" },
        { "UPDATE records SET hash = CAST(hash AS TEXT) WHERE seq = 2",
          "column hash holds text, expected a blob" },
        { "UPDATE records SET time_us = NULL WHERE seq = 2",
          "column time_us holds NULL, expected an integer" },
        { "UPDATE records SET value_exact = 1.5 WHERE seq = 2",
          "column value_exact holds a real, expected an integer" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        p = attacked("class.db", "template.db", cases[i].sql);
        rep = verify_path(p, NULL);
        CHECK_INT(rep.ok, 0);
        CHECK_INT(rep.bad_seq, 2);
        CHECK_STR(rep.problem, cases[i].problem);
    }
}

/* A value longer than the ledger's limit is refused on read; a row longer is never written. */
static void test_oversized_row(void)
{
    /* In memory when /dev/shm is there: a loaded machine's disk takes long over 256 MiB. */
    char p[320];
    snprintf(p, sizeof p, "%s/cr-test-audit-big-%d.db",
             access("/dev/shm", W_OK) == 0 ? "/dev/shm" : dir, (int)getpid());
    CHECK(copy_file(path_in("template.db"), p));
    sqlite3 *s = attacker(p);
    CHECK(exec_ok(s, "UPDATE records SET stdout = zeroblob(256 * 1024 * 1024 + 1) WHERE seq = 3"));
    sqlite3_close(s);
    audit_db *db = open_db(p, AUDIT_OPEN_READONLY);
    audit_iter *it = NULL;
    audit_entry e;
    cr_error err = {0};
    CHECK(db && audit_iter_open(db, 0, 0, &it, &err) == CR_OK);
    if (it) {
        CHECK_INT(audit_iter_next(it, &e, &err), 1);
        CHECK_INT(audit_iter_next(it, &e, &err), 1);
        CHECK_INT(audit_iter_next(it, &e, &err), -1);
        CHECK_INT(err.code, CR_ELEDGER);
        CHECK_STR(err.message, "audit: read records: not a ledger: a value is larger than 256 MiB");
    }
    audit_iter_close(it);
    audit_close(db);
    char side[340];
    for (int i = 0; i < 3; i++) {
        snprintf(side, sizeof side, "%s%s", p, (const char *[]){ "", "-wal", "-shm" }[i]);
        unlink(side);
    }

    db = open_db(path_in("big-append.db"), AUDIT_OPEN_CREATE);
    if (!db) return;
    char id[32];
    audit_record r;
    sample(&r, 0, id, sizeof id);
    size_t n = (size_t)256 << 20;
    char *big = calloc(1, n);
    CHECK(big != NULL);
    r.out = big;
    r.out_len = n;
    CHECK_INT(audit_append(db, &r, NULL, NULL, &err), CR_EAUDIT);
    CHECK_STR(err.message, "audit: the record is larger than 256 MiB, the ledger's limit for a row");
    free(big);
    uint64_t seq = 9;
    uint8_t h[AUDIT_HASH_LEN];
    CHECK_INT(audit_head(db, &seq, h, &err), CR_OK);
    CHECK_INT(seq, 0);
    audit_close(db);
}

/* The backstop behind the schema check: whatever query runs on a ledger's connection stops
 * once it has taken the work the file's size allows, and says so. */
static void test_work_budget(void)
{
    audit_db *db = open_db(path_in("template.db"), AUDIT_OPEN_READONLY);
    cr_error err = {0};
    CHECK(db != NULL);
    if (!db) return;
    audit_budget(db);
    CHECK(db->work > AUDIT_WORK_BASE / AUDIT_PROGRESS_OPS);   /* charged to the file's size */
    CHECK_INT(audit_exec(db, "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r)"
                             " SELECT count(*) FROM r", &err), CR_ELEDGER);
    CHECK(strstr(err.message, ": not a ledger: the query took more work than the file's size"
                              " allows") != NULL);
    CHECK_INT(db->work, 0);
    /* The next operation has its own budget. */
    uint64_t seq = 0;
    uint8_t h[AUDIT_HASH_LEN];
    CHECK_INT(audit_head(db, &seq, h, &err), CR_OK);
    CHECK_INT(seq, NROWS);
    audit_close(db);
}

static void test_delete_and_reorder(void)
{
    const char *p = attacked("del.db", "template.db", "DELETE FROM records WHERE seq = 2");
    cr_audit_report rep = verify_path(p, NULL);
    CHECK_INT(rep.ok, 0);
    CHECK_INT(rep.bad_seq, 2);
    CHECK_STR(rep.problem, "gap: seq 2 is missing (next is seq 3)");
    CHECK_INT(rep.records, 1);

    /* Swap rows 2 and 3 (contents and hashes move, seq numbers stay). */
    p = attacked("swap.db", "template.db", "UPDATE records SET seq = -2 WHERE seq = 2;"
                                           "UPDATE records SET seq = 2 WHERE seq = 3;"
                                           "UPDATE records SET seq = 3 WHERE seq = -2;");
    rep = verify_path(p, NULL);
    CHECK_INT(rep.ok, 0);
    CHECK_INT(rep.bad_seq, 2);
    CHECK(strncmp(rep.problem, "bad prev link", 13) == 0);
}

/* Builds a ledger and checkpoint; returns the public key. */
static void signed_ledger(const char *name, int nrows, uint8_t pk[32])
{
    cr_error err = {0};
    uint8_t sk[64];
    uint64_t seq = 0;
    const char *key = path_in("k.key");
    char pub[600];
    snprintf(pub, sizeof pub, "%s.pub", key);
    if (access(key, F_OK) != 0) CHECK_INT(audit_keygen(key, &err), CR_OK);
    CHECK_INT(audit_key_read(key, sk, sizeof sk, &err), CR_OK);
    CHECK_INT(audit_key_read(pub, pk, 32, &err), CR_OK);
    unlink(path_in(name));
    audit_db *db = open_db(path_in(name), AUDIT_OPEN_CREATE);
    fill(db, nrows);
    CHECK_INT(audit_checkpoint(db, sk, &seq, NULL, &err), CR_OK);
    CHECK_INT(seq, nrows);
    audit_close(db);
}

static void test_keys(void)
{
    cr_error err = {0};
    uint8_t sk[64];
    const char *key = path_in("k2.key");
    CHECK_INT(audit_keygen(key, &err), CR_OK);
    CHECK_INT(audit_keygen(key, &err), CR_EIO);      /* never overwrites */
    CHECK(strstr(err.message, "File exists") != NULL);
    CHECK_INT(audit_key_read(path_in("k2.key.pub"), sk, sizeof sk, &err), CR_EUSAGE);
    CHECK_INT(audit_key_read(key, sk, sizeof sk, &err), CR_OK);

    /* An empty ledger has nothing to sign. */
    audit_db *db = open_db(path_in("empty.db"), AUDIT_OPEN_CREATE);
    CHECK_INT(audit_checkpoint(db, sk, NULL, NULL, &err), CR_EUSAGE);
    CHECK_STR(err.message, "audit: the ledger is empty: nothing to sign");
    audit_close(db);
}

static void test_checkpoints(void)
{
    uint8_t pk[32], other[32];
    signed_ledger("signed.db", NROWS, pk);
    cr_audit_report rep = verify_path(path_in("signed.db"), pk);
    CHECK_INT(rep.ok, 1);
    CHECK_INT(rep.checkpoints, 1);
    CHECK_INT(rep.checkpoint_seq, NROWS);

    /* Another key's view: the checkpoint is foreign and none is ours. */
    uint8_t osk[64];
    crypto_sign_keypair(other, osk);
    rep = verify_path(path_in("signed.db"), other);
    CHECK_INT(rep.ok, 0);
    CHECK_INT(rep.foreign_checkpoints, 1);
    CHECK_STR(rep.problem, "no checkpoint signed by this key");

    /* Truncate the tail behind the checkpoint: the chain alone still verifies. */
    const char *p = attacked("trunc.db", "signed.db", "DELETE FROM records WHERE seq >= 3");
    CHECK_INT(verify_path(p, NULL).ok, 0);
    rep = verify_path(p, pk);
    CHECK_INT(rep.ok, 0);
    CHECK_INT(rep.bad_seq, NROWS);
    CHECK_STR(rep.problem, "checkpoint 1 signs seq 4 but the chain ends at seq 2 (truncated)");

    /* Delete the checkpoints too: nothing signed by our key remains. */
    p = attacked("trunc2.db", "trunc.db", "DELETE FROM checkpoints");
    CHECK_INT(verify_path(p, NULL).ok, 1);
    rep = verify_path(p, pk);
    CHECK_INT(rep.ok, 0);
    CHECK_STR(rep.problem, "no checkpoint signed by this key");

    /* Rewrite the whole chain consistently (record 2 deleted, the rest renumbered and
     * rehashed) and keep the original checkpoint row. */
    p = path_in("rewrite.db");
    unlink(p);
    audit_db *db = open_db(p, AUDIT_OPEN_CREATE);
    char id[32];
    audit_record r;
    cr_error err = {0};
    for (int i = 0; i < NROWS + 1; i++) {
        if (i == 1) continue;
        sample(&r, i, id, sizeof id);
        CHECK_INT(audit_append(db, &r, NULL, NULL, &err), CR_OK);
    }
    audit_close(db);
    sqlite3 *s = attacker(p);
    char sql[1024];
    snprintf(sql, sizeof sql, "ATTACH '%s' AS orig; INSERT INTO checkpoints SELECT * FROM"
             " orig.checkpoints; DETACH orig;", path_in("signed.db"));
    CHECK(exec_ok(s, sql));
    sqlite3_close(s);
    CHECK_INT(verify_path(p, NULL).ok, 0);        /* the kept checkpoint's key is in the row */
    rep = verify_path(p, pk);
    CHECK_INT(rep.ok, 0);
    CHECK_INT(rep.bad_seq, NROWS);
    CHECK_STR(rep.problem,
              "checkpoint 1: the chain at seq 4 differs from the signed head (rewritten)");
    CHECK_INT(rep.records, NROWS);

    /* A forged signature under our key in the checkpoint row. */
    p = attacked("forged.db", "signed.db", "UPDATE checkpoints SET signature = zeroblob(64)");
    rep = verify_path(p, pk);
    CHECK_INT(rep.ok, 0);
    CHECK_STR(rep.problem, "checkpoint 1: bad signature");
}

static int keep_json(const char *json, size_t len, void *arg)
{
    cr_buf *b = arg;
    cr_buf_put(b, json, len);
    return cr_buf_putc(b, '\n') != CR_OK;
}

static void test_json(void)
{
    const char *p = path_in("json.db");
    audit_db *db = open_db(p, AUDIT_OPEN_CREATE);
    char id[32];
    audit_record r;
    cr_error err = {0};
    sample(&r, 1, id, sizeof id);
    r.reasons = "[\n1]";                      /* JSON with a newline: stays one line */
    r.reasons_len = 4;
    r.err_out = "\xff\xfe";                   /* not UTF-8: base64 */
    r.err_out_len = 2;
    r.policy = "{not json";
    r.policy_len = 9;
    CHECK_INT(audit_append(db, &r, NULL, NULL, &err), CR_OK);
    audit_close(db);

    cr_audit *a = cr_audit_open(p, 0, &err);
    CHECK(a != NULL);
    if (!a) return;
    char *json = NULL;
    size_t len = 0;
    CHECK_INT(cr_audit_show(a, 1, &json, &len, &err), CR_OK);
    CHECK(json && strlen(json) == len && !strchr(json, '\n'));
    CHECK(json && strstr(json, "\"seq\":1,\"format\":1,\"time\":\"2023-11-14T22:13:20.000001Z\","
                               "\"request_id\":\"req-1\",\"time_us\":1700000000000001,"));
    CHECK(json && strstr(json, ",\"bindings\":{\"x\":0.1},\"tables\":null,"
                               "\"policy\":\"{not json\",\"route\":\"inprocess\","
                               "\"reasons\":[ 1],\"status\":0,"));
    CHECK(json && strstr(json, ",\"stdout\":\"3\\n\",\"stderr\":{\"base64\":\"//4=\"},"
                               "\"error\":null,"));
    CHECK(json && strstr(json, ",\"status_name\":\"ok\",\"prev_hash\":\"0000000000"));
    free(json);
    CHECK_INT(cr_audit_show(a, 2, &json, &len, &err), CR_ELEDGER);
    CHECK_STR(err.message, "audit: no record with seq 2");
    char hex[65];
    uint64_t seq = 0;
    CHECK_INT(cr_audit_head(a, &seq, hex, &err), CR_OK);
    CHECK_INT(seq, 1);
    CHECK_INT(strlen(hex), 64);

    cr_buf b;
    cr_buf_init(&b, 0);
    cr_audit_close(a);
    a = cr_audit_open(path_in("template.db"), 0, &err);
    CHECK_INT(cr_audit_export(a, 2, 3, keep_json, &b, &err), CR_OK);
    CHECK(b.p && strncmp(b.p, "{\"seq\":2,", 9) == 0);
    CHECK(b.p && strstr(b.p, "\n{\"seq\":3,") != NULL);
    int lines = 0;
    for (size_t i = 0; i < b.len; i++) lines += b.p[i] == '\n';
    CHECK_INT(lines, 2);
    cr_buf_free(&b);
    cr_audit_close(a);
}

/* Group commit: 16 threads append to one handle at once. Every append gets its own seq and
 * the hash stored at it, the chain verifies, and the records share commits. */
#define GC_THREADS 16
#define GC_EACH 40
typedef struct {
    audit_db *db;
    int t, failures;
    uint64_t seq[GC_EACH];
    uint8_t hash[GC_EACH][AUDIT_HASH_LEN];
} gc_arg;

static void *gc_appender(void *p)
{
    gc_arg *a = p;
    for (int i = 0; i < GC_EACH; i++) {
        audit_record r;
        char id[32];
        cr_error err = {0};
        sample(&r, a->t * GC_EACH + i, id, sizeof id);
        if (audit_append(a->db, &r, &a->seq[i], a->hash[i], &err) != CR_OK) a->failures++;
    }
    return NULL;
}

static void test_group_commit(void)
{
    audit_db *db = open_db(path_in("group.db"), AUDIT_OPEN_CREATE);
    CHECK(db != NULL);
    if (!db) return;
    static gc_arg args[GC_THREADS];
    pthread_t th[GC_THREADS];
    for (int t = 0; t < GC_THREADS; t++) {
        args[t] = (gc_arg){ .db = db, .t = t };
        CHECK_INT(pthread_create(&th[t], NULL, gc_appender, &args[t]), 0);
    }
    for (int t = 0; t < GC_THREADS; t++) pthread_join(th[t], NULL);
    static char seen[GC_THREADS * GC_EACH + 1];
    int dup = 0, bad_hash = 0;
    audit_iter *it = NULL;
    audit_entry e;
    cr_error err = {0};
    for (int t = 0; t < GC_THREADS; t++) {
        CHECK_INT(args[t].failures, 0);
        for (int i = 0; i < GC_EACH; i++) {
            uint64_t q = args[t].seq[i];
            if (q < 1 || q > GC_THREADS * GC_EACH || seen[q]++) {
                dup++;
                continue;
            }
            /* the record at that seq is this thread's, with the hash it was given */
            char id[32];
            snprintf(id, sizeof id, "req-%d", t * GC_EACH + i);
            if (audit_iter_open(db, q, q, &it, &err) != CR_OK || audit_iter_next(it, &e, &err) != 1
                || e.rec.request_id_len != strlen(id) || memcmp(e.rec.request_id, id, strlen(id))
                || memcmp(e.hash, args[t].hash[i], AUDIT_HASH_LEN))
                bad_hash++;
            audit_iter_close(it);
        }
    }
    CHECK_INT(dup, 0);
    CHECK_INT(bad_hash, 0);
    cr_audit_report rep;
    CHECK_INT(audit_verify(db, NULL, &rep, &err), CR_OK);
    CHECK_INT(rep.ok, 1);
    CHECK_INT(rep.records, GC_THREADS * GC_EACH);
    /* 16 appenders with fsyncs between commits: groups form (about 16 a commit here) */
    if (db->commits >= GC_THREADS * GC_EACH)
        fprintf(stderr, "group commit: %llu commits for %d records\n",
                (unsigned long long)db->commits, GC_THREADS * GC_EACH);
    CHECK(db->commits < GC_THREADS * GC_EACH);
    audit_close(db);
}

/* A writer refuses a ledger whose last record does not verify (a reader still opens it, so
 * verify can say what is wrong); the record before it may be anything. */
#define RA_FIRST 50
#define RA_MORE 400

static void *range_appender(void *arg)
{
    audit_db *db = arg;
    char ids[10][32];
    audit_record r[10];
    cr_error err = {0};
    for (int i = 0; i < RA_MORE; i += 10) {
        for (int k = 0; k < 10; k++) sample(&r[k], RA_FIRST + i + k, ids[k], sizeof ids[k]);
        if (audit_append_batch(db, r, 10, NULL, NULL, &err) != CR_OK) {
            fprintf(stderr, "append under verify: %s\n", err.message);
            return db;
        }
    }
    return NULL;
}

/* Verify cut into ranges while another handle appends: the other ranges' handles take later
 * snapshots, but read only up to the last seq of the first's, so every run reports the whole
 * chain as it stood when it began. */
static void test_verify_ranges_under_appends(void)
{
    const char *p = path_in("ranges.db");
    audit_db *w = open_db(p, AUDIT_OPEN_CREATE);
    CHECK(w != NULL);
    if (!w) return;
    fill(w, RA_FIRST);
    pthread_t th;
    CHECK_INT(pthread_create(&th, NULL, range_appender, w), 0);
    uint64_t min = audit_verify_range_min, last = 0;
    audit_verify_range_min = 1;
    audit_verify_ranges = 3;
    int bad = 0;
    for (int i = 0; i < 30; i++) {
        cr_audit_report rep;
        cr_error err = {0};
        audit_db *db = open_db(p, AUDIT_OPEN_READONLY);
        if (!db || audit_verify(db, NULL, &rep, &err) != CR_OK || !rep.ok
            || rep.records < last || rep.head_seq != rep.records) {
            fprintf(stderr, "verify under appends: %s\n", db ? rep.problem : "open");
            bad++;
        }
        last = rep.records;
        audit_close(db);
    }
    void *fail = NULL;
    pthread_join(th, &fail);
    CHECK(fail == NULL);
    CHECK_INT(bad, 0);
    CHECK(last >= RA_FIRST);
    CHECK_INT(verify_path(p, NULL).records, RA_FIRST + RA_MORE);
    audit_verify_range_min = min;
    audit_verify_ranges = 0;
    audit_close(w);
}

static void test_head_checked_on_write(void)
{
    static const char *const edits[] = {
        "UPDATE records SET stdout = 'forged' WHERE seq = 4",
        "UPDATE records SET prev_hash = zeroblob(32) WHERE seq = 4",
        "UPDATE records SET hash = zeroblob(32) WHERE seq = 4",
    };
    char name[32];
    for (size_t i = 0; i < sizeof edits / sizeof edits[0]; i++) {
        snprintf(name, sizeof name, "head%zu.db", i);
        const char *p = attacked(name, "template.db", edits[i]);
        audit_db *db = NULL;
        cr_error err = {0};
        CHECK_INT(audit_open(p, 0, &db, &err), CR_ELEDGER);
        CHECK_STR(err.message, "audit: the ledger's last record (seq 4) does not verify: nothing"
                               " is appended to it (calc-audit verify names what is wrong)");
        CHECK_INT(audit_open(p, AUDIT_OPEN_READONLY, &db, &err), CR_OK);
        audit_close(db);
    }
    /* a head whose hash is not even a hash */
    audit_db *bad = NULL;
    cr_error e2 = {0};
    CHECK_INT(audit_open(attacked("head9.db", "template.db",
                                  "UPDATE records SET hash = x'00' WHERE seq = 4"), 0, &bad, &e2),
              CR_ELEDGER);
    CHECK_STR(e2.message, "audit: head record 4 is malformed; run calc-audit verify");
    /* an edit behind the head is verify's to find, not the writer's */
    const char *p = attacked("behind.db", "template.db",
                             "UPDATE records SET stdout = 'forged' WHERE seq = 2");
    audit_db *db = NULL;
    cr_error err = {0};
    CHECK_INT(audit_open(p, 0, &db, &err), CR_OK);
    audit_close(db);
}

/* test_audit --verify-cut LEDGER [PUBKEY]: verify_path on any store's ledger, a PostgreSQL
 * one from tests/test_audit_pg.sh: the single pass's report, then the checks that every cut
 * reported the same. */
static int verify_cut_main(int argc, char **argv)
{
    uint8_t pk[crypto_sign_PUBLICKEYBYTES];
    cr_error err = {0};
    if (argc > 3 && audit_key_read(argv[3], pk, sizeof pk, &err) != CR_OK) {
        fprintf(stderr, "%s\n", err.message);
        return 2;
    }
    cr_audit_report rep = verify_path(argv[2], argc > 3 ? pk : NULL);
    if (rep.ok > 0)
        printf("ok: %llu records, head seq %llu, %llu checkpoints\n",
               (unsigned long long)rep.records, (unsigned long long)rep.head_seq,
               (unsigned long long)rep.checkpoints);
    else if (rep.ok == 0)
        printf("FAIL seq %llu: %s\n", (unsigned long long)rep.bad_seq, rep.problem);
    return TEST_SUMMARY();
}

/* C2SP tlog-tiles' names: N in three-digit elements, all but the last with an x. */
static void test_tile_paths(void)
{
    static const struct {
        int level;
        uint64_t n;
        unsigned width;
        const char *want;
    } cases[] = {
        { 0, 0, 0, "tile/0/000" },
        { 0, 5, 17, "tile/0/005.p/17" },
        { 1, 999, 256, "tile/1/999" },
        { 2, 1000, 1, "tile/2/x001/000.p/1" },
        { 0, 1234067, 0, "tile/0/x001/x234/067" },
        { -1, 1234067, 255, "tile/entries/x001/x234/067.p/255" },
        { 63, UINT64_C(72057594037927935), 0, "tile/63/x072/x057/x594/x037/x927/935" },
    };
    char path[128];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        CHECK(audit_tile_path(path, sizeof path, cases[i].level, cases[i].n, cases[i].width));
        CHECK_STR(path, cases[i].want);
    }
    CHECK(!audit_tile_path(path, 12, 0, 1234067, 0));
}

int main(int argc, char **argv)
{
    if (argc > 2 && !strcmp(argv[1], "--verify-cut")) return verify_cut_main(argc, argv);
    snprintf(dir, sizeof dir, "%s/cr-test-audit-XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(dir) || sodium_init() < 0) {
        perror("mkdtemp");
        return 1;
    }
    test_golden_hash();
    test_absent_differs_from_empty();
    test_append_chain_head();
    test_long_batch();
    test_triggers_and_readonly();
    test_schema_version();
    make_template();
    test_tamper_every_field();
    test_hostile_schema();
    test_head_checked_on_write();
    test_verify_ranges_under_appends();
    test_row_classes();
    test_oversized_row();
    test_work_budget();
    test_delete_and_reorder();
    test_keys();
    test_checkpoints();
    test_json();
    test_tile_paths();
    test_group_commit();
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return TEST_SUMMARY();
}
