/* audit/schema.c: the ledger's schema, and what a connection to a ledger may do. A ledger is
 * a file that anybody may have edited with plain SQLite before handing it over, and SQLite
 * runs whatever the file's schema says: a view named records can recurse forever, a trigger
 * can fire on an append, a virtual table or a function can do anything its module allows.
 * So before any statement touches a row, the connection refuses views and untrusted schema
 * code, caps lengths and work, and the file's schema must be exactly the one below. */
#include "audit/audit_int.h"

#include <stdarg.h>
#include <stdio.h>

static const char schema_sql[] =
    "CREATE TABLE schema_version(version INTEGER NOT NULL, created_us INTEGER NOT NULL);"
    "CREATE TABLE records("
    " seq INTEGER PRIMARY KEY, format INTEGER NOT NULL,"
    " request_id TEXT, time_us INTEGER, engine_version TEXT, grammar_version TEXT, lang TEXT,"
    " code TEXT, bindings TEXT, tables TEXT, policy TEXT, route TEXT, reasons TEXT,"
    " status INTEGER, value_fraction TEXT, value_repr TEXT, value_type TEXT,"
    " value_exact INTEGER, stdout TEXT, stderr TEXT, error TEXT, artifacts TEXT,"
    " timings TEXT, prev_hash BLOB NOT NULL, hash BLOB NOT NULL);"
    "CREATE TABLE checkpoints("
    " id INTEGER PRIMARY KEY, seq INTEGER NOT NULL, head_hash BLOB NOT NULL,"
    " time_us INTEGER NOT NULL, pubkey BLOB NOT NULL, signature BLOB NOT NULL);"
    /* The ledger is append-only; these stop mistakes and honest tools. An attacker with the
     * file can drop them, which is what the hash chain and the checkpoints are for, so a
     * ledger without them still opens; one with other triggers does not. */
    "CREATE TRIGGER records_no_update BEFORE UPDATE ON records"
    " BEGIN SELECT RAISE(ABORT, 'audit ledger is append-only'); END;"
    "CREATE TRIGGER records_no_delete BEFORE DELETE ON records"
    " BEGIN SELECT RAISE(ABORT, 'audit ledger is append-only'); END;"
    "CREATE TRIGGER checkpoints_no_update BEFORE UPDATE ON checkpoints"
    " BEGIN SELECT RAISE(ABORT, 'audit ledger is append-only'); END;"
    "CREATE TRIGGER checkpoints_no_delete BEFORE DELETE ON checkpoints"
    " BEGIN SELECT RAISE(ABORT, 'audit ledger is append-only'); END;";

/* ---- the connection's limits --------------------------------------------------------- */

static int on_progress(void *arg)
{
    audit_db *db = arg;
    if (db->work == 0) return 1;
    db->work--;
    return 0;
}

/* Every query of ours over the checked schema is a scan or a sort of ordinary tables, so the
 * work one operation may take is charged to the file's size: AUDIT_WORK_BASE plus
 * AUDIT_WORK_PER_BYTE VM steps per byte, far above what a genuine ledger needs and finite
 * whatever the file holds. */
void audit_budget(audit_db *db)
{
    sqlite3_stmt *st = NULL;
    int64_t bytes = 0;
    db->work = AUDIT_WORK_BASE / AUDIT_PROGRESS_OPS;
    if (sqlite3_prepare_v2(db->sql, "SELECT p.page_count * s.page_size FROM"
                           " pragma_page_count() p, pragma_page_size() s", -1, &st, NULL)
            == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        bytes = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    if (bytes > 0) db->work += (uint64_t)bytes * AUDIT_WORK_PER_BYTE / AUDIT_PROGRESS_OPS;
}

/* Set before the file's schema is first read (SQLite reads it on the first statement). */
static cr_code harden(audit_db *db, cr_error *err)
{
    sqlite3 *s = db->sql;
    int ok = 1;
    /* No views at all: the ledger has none, and a view is how a query loops forever. */
    ok &= sqlite3_db_config(s, SQLITE_DBCONFIG_ENABLE_VIEW, 0, NULL) == SQLITE_OK;
    /* No function or virtual table may run from the file's schema (PRAGMA trusted_schema). */
    ok &= sqlite3_db_config(s, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL) == SQLITE_OK;
    /* No edits of sqlite_schema, no deliberate corruption through this connection. */
    ok &= sqlite3_db_config(s, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL) == SQLITE_OK;
    ok &= sqlite3_db_config(s, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, NULL) == SQLITE_OK;
    if (!ok) return audit_sqlite_fail(db, err, "configure");
    /* A row (and so any value) longer than this fails with SQLITE_TOOBIG, on append and on
     * read alike, so a reader never holds more than a few rows' worth. */
    sqlite3_limit(s, SQLITE_LIMIT_LENGTH, AUDIT_MAX_ROW);
    sqlite3_limit(s, SQLITE_LIMIT_SQL_LENGTH, 1 << 16);
    sqlite3_limit(s, SQLITE_LIMIT_COLUMN, 64);
    sqlite3_limit(s, SQLITE_LIMIT_EXPR_DEPTH, 64);
    sqlite3_limit(s, SQLITE_LIMIT_COMPOUND_SELECT, 4);
    sqlite3_limit(s, SQLITE_LIMIT_ATTACHED, 0);
    sqlite3_limit(s, SQLITE_LIMIT_TRIGGER_DEPTH, 1);
    sqlite3_limit(s, SQLITE_LIMIT_WORKER_THREADS, 0);
    sqlite3_progress_handler(s, AUDIT_PROGRESS_OPS, on_progress, db);
    db->work = AUDIT_WORK_BASE / AUDIT_PROGRESS_OPS;
    /* Sorts (the checkpoints, in seq order) stay in memory: nothing of a ledger's is ever
     * written to the temp directory. */
    return audit_exec(db, "PRAGMA temp_store=MEMORY", err);
}

/* ---- the schema check ---------------------------------------------------------------- */

static cr_code not_ledger(cr_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static cr_code not_ledger(cr_error *err, const char *fmt, ...)
{
    char why[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    return cr_error_set(err, CR_ELEDGER, 0, 0, "audit: not a ledger: %s", why);
}

static const char *text_or_empty(sqlite3_stmt *st, int i)
{
    const char *t = (const char *)sqlite3_column_text(st, i);
    return t ? t : "";
}

/* One column as PRAGMA table_xinfo sees it, written like a declaration. */
static void column_decl(sqlite3_stmt *st, char *out, size_t n)
{
    int dflt = sqlite3_column_type(st, 4) != SQLITE_NULL;
    const char *type = text_or_empty(st, 2);
    snprintf(out, n, "%.40s%s%.20s%s%s%s%.20s%s", text_or_empty(st, 1), *type ? " " : "", type,
             sqlite3_column_int(st, 3) ? " NOT NULL" : "",
             sqlite3_column_int(st, 5) ? " PRIMARY KEY" : "", dflt ? " DEFAULT " : "",
             dflt ? text_or_empty(st, 4) : "",
             sqlite3_column_int(st, 6) ? " (hidden or generated)" : "");
}

/* Names the first column where table `name` differs from the reference's. Only called on a
 * file's ordinary table, whose declaration SQLite has already parsed. */
static cr_code diff_columns(audit_db *db, sqlite3 *ref, const char *name, cr_error *err)
{
    static const char q[] = "SELECT cid, name, type, \"notnull\", dflt_value, pk, hidden"
                            " FROM pragma_table_xinfo(?)";
    sqlite3_stmt *a = NULL, *b = NULL;
    cr_code rc = CR_OK;
    if (sqlite3_prepare_v2(db->sql, q, -1, &a, NULL) != SQLITE_OK
        || sqlite3_prepare_v2(ref, q, -1, &b, NULL) != SQLITE_OK) {
        rc = audit_sqlite_fail(db, err, "read schema");
        goto out;
    }
    sqlite3_bind_text(a, 1, name, -1, SQLITE_STATIC);
    sqlite3_bind_text(b, 1, name, -1, SQLITE_STATIC);
    for (int i = 1;; i++) {
        int sa = sqlite3_step(a), sb = sqlite3_step(b);
        char da[160], db_[160];
        if (sa != SQLITE_ROW && sa != SQLITE_DONE) {
            rc = audit_sqlite_fail(db, err, "read schema");
            break;
        }
        if (sa == SQLITE_DONE && sb != SQLITE_ROW) {
            rc = not_ledger(err, "table %s is not declared as the ledger's (constraints or"
                            " options differ)", name);
            break;
        }
        if (sa == SQLITE_DONE) {
            rc = not_ledger(err, "table %s has no column %s", name, text_or_empty(b, 1));
            break;
        }
        column_decl(a, da, sizeof da);
        if (sb != SQLITE_ROW) {
            rc = not_ledger(err, "table %s has an extra column %s", name, da);
            break;
        }
        column_decl(b, db_, sizeof db_);
        if (strcmp(da, db_) != 0) {
            rc = not_ledger(err, "table %s column %d is \"%s\", expected \"%s\"", name, i, da,
                            db_);
            break;
        }
    }
out:
    sqlite3_finalize(a);
    sqlite3_finalize(b);
    return rc;
}

/* The file's schema objects, each against the reference database built from schema_sql:
 * every table must be there as declared there, our triggers may be missing but not changed,
 * and nothing else may exist. The first difference is the error. */
static cr_code check_objects(audit_db *db, sqlite3 *ref, cr_error *err)
{
    sqlite3_stmt *fs = NULL, *rs = NULL;
    cr_code rc = CR_OK;
    int objects = 0;
    if (sqlite3_prepare_v2(db->sql, "SELECT type, name, tbl_name, sql FROM main.sqlite_schema",
                           -1, &fs, NULL) != SQLITE_OK) {
        rc = audit_sqlite_fail(db, err, "read schema");
        goto out;
    }
    if (sqlite3_prepare_v2(ref, "SELECT type, sql FROM sqlite_schema WHERE name = ?1",
                           -1, &rs, NULL) != SQLITE_OK) {
        rc = cr_error_set(err, CR_EINTERNAL, 0, 0, "audit: reference schema: %s",
                          sqlite3_errmsg(ref));
        goto out;
    }
    int s;
    while (rc == CR_OK && (s = sqlite3_step(fs)) == SQLITE_ROW) {
        const char *type = (const char *)sqlite3_column_text(fs, 0);
        const char *name = (const char *)sqlite3_column_text(fs, 1);
        const char *tbl = (const char *)sqlite3_column_text(fs, 2);
        const char *sql = (const char *)sqlite3_column_text(fs, 3);
        if (!type || !name) {
            rc = not_ledger(err, "a schema entry has no type or name");
            break;
        }
        objects++;
        sqlite3_reset(rs);
        sqlite3_bind_text(rs, 1, name, -1, SQLITE_TRANSIENT);
        if (sqlite3_step(rs) != SQLITE_ROW) {
            if (!strcmp(type, "table") || !strcmp(type, "view"))
                rc = not_ledger(err, "unexpected %s %.60s", type, name);
            else
                rc = not_ledger(err, "unexpected %s %.60s on %.60s", type, name, tbl ? tbl : "?");
            break;
        }
        const char *want_type = (const char *)sqlite3_column_text(rs, 0);
        const char *want_sql = (const char *)sqlite3_column_text(rs, 1);
        if (strcmp(type, want_type) != 0) {
            rc = not_ledger(err, "%s is a %s, not a %s", name, type, want_type);
        } else if (!sql || strcmp(sql, want_sql) != 0) {
            if (strcmp(type, "table") != 0)
                rc = not_ledger(err, "%s %s is not the ledger's", type, name);
            else if (sql && !strncmp(sql, "CREATE VIRTUAL TABLE", 20))
                rc = not_ledger(err, "%s is a virtual table, not an ordinary table", name);
            else
                rc = diff_columns(db, ref, name, err);
        }
    }
    if (rc != CR_OK) goto out;
    if (s != SQLITE_DONE) {
        rc = audit_sqlite_fail(db, err, "read schema");
        goto out;
    }
    if (objects == 0) {
        rc = not_ledger(err, "the database is empty");
        goto out;
    }
    /* Every object of the file's is one of ours; now each of our tables must be there. */
    sqlite3_finalize(rs);
    rs = NULL;
    if (sqlite3_prepare_v2(ref, "SELECT name FROM sqlite_schema WHERE type = 'table'", -1, &rs,
                           NULL) != SQLITE_OK) {
        rc = cr_error_set(err, CR_EINTERNAL, 0, 0, "audit: reference schema: %s",
                          sqlite3_errmsg(ref));
        goto out;
    }
    sqlite3_finalize(fs);
    if (sqlite3_prepare_v2(db->sql, "SELECT 1 FROM main.sqlite_schema WHERE name = ?", -1, &fs,
                           NULL) != SQLITE_OK) {
        fs = NULL;
        rc = audit_sqlite_fail(db, err, "read schema");
        goto out;
    }
    while (rc == CR_OK && sqlite3_step(rs) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(rs, 0);
        sqlite3_reset(fs);
        sqlite3_bind_text(fs, 1, name, -1, SQLITE_TRANSIENT);
        if (sqlite3_step(fs) != SQLITE_ROW) rc = not_ledger(err, "no table %s", name);
    }
out:
    sqlite3_finalize(fs);
    sqlite3_finalize(rs);
    return rc;
}

static cr_code check_schema_version(audit_db *db, cr_error *err)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db->sql, "SELECT max(version) FROM schema_version", -1, &st, NULL)
        != SQLITE_OK)
        return audit_sqlite_fail(db, err, "read schema version");
    int s = sqlite3_step(st);
    int64_t v = s == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -1;
    sqlite3_finalize(st);
    if (s != SQLITE_ROW) return audit_sqlite_fail(db, err, "read schema version");
    if (v != AUDIT_SCHEMA_VERSION)
        return cr_error_set(err, CR_ELEDGER, 0, 0, "audit: schema version %lld, expected %d",
                            (long long)v, AUDIT_SCHEMA_VERSION);
    return CR_OK;
}

static cr_code check_schema(audit_db *db, cr_error *err)
{
    sqlite3 *ref = NULL;
    cr_code rc;
    /* The reference is schema_sql itself run on an empty database: one home for the schema,
     * and SQLite stores each CREATE's text as written, so a genuine ledger matches exactly. */
    if (sqlite3_open_v2(":memory:", &ref, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL)
            != SQLITE_OK
        || sqlite3_exec(ref, schema_sql, NULL, NULL, NULL) != SQLITE_OK) {
        rc = cr_error_set(err, CR_ENOMEM, 0, 0, "audit: reference schema: %s",
                          ref ? sqlite3_errmsg(ref) : "out of memory");
        sqlite3_close(ref);
        return rc;
    }
    /* One snapshot for the whole check. */
    if ((rc = audit_exec(db, "BEGIN", err)) != CR_OK) goto out;
    sqlite3_stmt *st = NULL;
    const char *enc = NULL;
    if (sqlite3_prepare_v2(db->sql, "PRAGMA encoding", -1, &st, NULL) == SQLITE_OK
        && sqlite3_step(st) == SQLITE_ROW)
        enc = (const char *)sqlite3_column_text(st, 0);
    if (!enc) rc = audit_sqlite_fail(db, err, "read schema");
    /* Records hash the stored bytes, which are UTF-8 only in a UTF-8 database. */
    else if (strcmp(enc, "UTF-8") != 0)
        rc = not_ledger(err, "the text encoding is %.16s, not UTF-8", enc);
    sqlite3_finalize(st);
    if (rc == CR_OK) rc = check_objects(db, ref, err);
    if (rc == CR_OK) rc = check_schema_version(db, err);
    sqlite3_exec(db->sql, "COMMIT", NULL, NULL, NULL);
out:
    sqlite3_close(ref);
    return rc;
}

/* Creates the schema in a database that holds nothing yet, unless another process just did;
 * under BEGIN IMMEDIATE so two processes opening a fresh file at once cannot both create it.
 * A database holding anything else is left alone for check_schema() to refuse. */
static cr_code create_schema(audit_db *db, cr_error *err)
{
    cr_code rc;
    sqlite3_stmt *st = NULL;
    if ((rc = audit_exec(db, "BEGIN IMMEDIATE", err)) != CR_OK) return rc;
    if (sqlite3_prepare_v2(db->sql, "SELECT count(*) FROM main.sqlite_schema", -1, &st, NULL)
            != SQLITE_OK || sqlite3_step(st) != SQLITE_ROW) {
        rc = audit_sqlite_fail(db, err, "read schema");
        sqlite3_finalize(st);
        goto fail;
    }
    int empty = sqlite3_column_int64(st, 0) == 0;
    sqlite3_finalize(st);
    if (empty) {
        if ((rc = audit_exec(db, schema_sql, err)) != CR_OK) goto fail;
        char ins[128];
        snprintf(ins, sizeof ins, "PRAGMA application_id = %d", AUDIT_APPLICATION_ID);
        if ((rc = audit_exec(db, ins, err)) != CR_OK) goto fail;
        snprintf(ins, sizeof ins, "INSERT INTO schema_version VALUES(%d, %lld)",
                 AUDIT_SCHEMA_VERSION, (long long)audit_now_us());
        if ((rc = audit_exec(db, ins, err)) != CR_OK) goto fail;
    }
    return audit_exec(db, "COMMIT", err);
fail:
    sqlite3_exec(db->sql, "ROLLBACK", NULL, NULL, NULL);
    return rc;
}

/* Another program's SQLite file says so in its header: refused before anything else. */
static cr_code check_application_id(audit_db *db, cr_error *err)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db->sql, "PRAGMA application_id", -1, &st, NULL) != SQLITE_OK ||
        sqlite3_step(st) != SQLITE_ROW) {
        sqlite3_finalize(st);
        return audit_sqlite_fail(db, err, "read schema");   /* the header is the first read */
    }
    uint32_t id = (uint32_t)sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    if (id != 0 && id != AUDIT_APPLICATION_ID)
        return cr_error_set(err, CR_ELEDGER, 0, 0, "audit: not a ledger: its SQLite "
                            "application_id is 0x%08x, another program's", (unsigned)id);
    return CR_OK;
}

cr_code audit_schema_open(audit_db *db, int flags, cr_error *err)
{
    cr_code rc;
    if ((rc = harden(db, err)) != CR_OK) return rc;
    if (!db->readonly) {
        /* FULL so a commit that returned is on disk even if the machine loses power right
         * after; set before the schema may be created. */
        if ((rc = audit_exec(db, "PRAGMA synchronous=FULL", err)) != CR_OK) return rc;
    }
    if ((rc = check_application_id(db, err)) != CR_OK) return rc;
    if (!db->readonly && (flags & AUDIT_OPEN_CREATE) && (rc = create_schema(db, err)) != CR_OK)
        return rc;
    if ((rc = check_schema(db, err)) != CR_OK) return rc;
    /* WAL so readers never block the appender; only once the file is known to be a ledger,
     * so a database that is not one is never converted. */
    if (!db->readonly && (rc = audit_exec(db, "PRAGMA journal_mode=WAL", err)) != CR_OK)
        return rc;
    return CR_OK;
}
