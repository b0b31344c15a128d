/* audit/sqlite.c: the SQLite store, the embedded default: one file, WAL, synchronous=FULL,
 * BEGIN IMMEDIATE as the append lock (the schema and what a connection may do are in
 * audit/schema.c). */
#include "audit/audit_int.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The record's columns in the order of AUDIT_FIELDS (out is stdout, err_out is stderr); the
 * SELECT and the INSERT below bind and read them in that order. */
#define RECORD_COLS \
    "request_id, time_us, engine_version, grammar_version, lang, code, bindings, tables, " \
    "policy, route, reasons, status, value_fraction, value_repr, value_type, value_exact, " \
    "stdout, stderr, error, artifacts, timings"

cr_code audit_sqlite_fail(audit_db *db, cr_error *err, const char *step)
{
    if (!db || !db->sql) return cr_error_set(err, CR_EAUDIT, 0, 0, "audit: %s: no database", step);
    /* What the file did to us, as opposed to what the system did (I/O, locks, memory). */
    switch (sqlite3_errcode(db->sql) & 0xff) {
    case SQLITE_INTERRUPT:
        if (db->work) break;
        return cr_error_set(err, CR_ELEDGER, 0, 0, "audit: %s: not a ledger: the query took"
                            " more work than the file's size allows", step);
    case SQLITE_TOOBIG:
        return cr_error_set(err, CR_ELEDGER, 0, 0, "audit: %s: not a ledger: a value is"
                            " larger than %d MiB", step, AUDIT_MAX_ROW >> 20);
    case SQLITE_NOTADB:
    case SQLITE_CORRUPT:
        return cr_error_set(err, CR_ELEDGER, 0, 0, "audit: %s: not a ledger: %s", step,
                            sqlite3_errmsg(db->sql));
    }
    return cr_error_set(err, CR_EAUDIT, 0, 0, "audit: %s: %s", step, sqlite3_errmsg(db->sql));
}

cr_code audit_exec(audit_db *db, const char *sql, cr_error *err)
{
    if (sqlite3_exec(db->sql, sql, NULL, NULL, NULL) != SQLITE_OK)
        return audit_sqlite_fail(db, err, sql);
    return CR_OK;
}

static cr_code prepare(audit_db *db, sqlite3_stmt **st, const char *sql, cr_error *err)
{
    if (*st) {
        sqlite3_reset(*st);
        sqlite3_clear_bindings(*st);
        return CR_OK;
    }
    if (sqlite3_prepare_v2(db->sql, sql, -1, st, NULL) != SQLITE_OK)
        return audit_sqlite_fail(db, err, "prepare");
    return CR_OK;
}

/* Why SQLite could not open the ledger: its own text ("unable to open database file") does not
 * say, and its errno is that of its last attempt (a read-only retry), so the open is tried
 * here: " (reason)", or "" when it works. */
static void open_failure(const char *path, int readonly, int create, char *why, size_t n)
{
    why[0] = '\0';
    int fd = open(path, (readonly ? O_RDONLY : O_RDWR) | O_CLOEXEC);
    if (fd >= 0) {
        close(fd);
        return;
    }
    if (errno != ENOENT || !create) {
        snprintf(why, n, " (%s)", strerror(errno));
        return;
    }
    /* missing: the directory that would hold it must exist and take a new file */
    char dir[PATH_MAX];
    const char *slash = strrchr(path, '/');
    if (!slash) snprintf(dir, sizeof dir, ".");
    else snprintf(dir, sizeof dir, "%.*s", slash == path ? 1 : (int)(slash - path), path);
    if (access(dir, W_OK | X_OK) != 0) snprintf(why, n, " (%s: %s)", dir, strerror(errno));
}

static cr_code sq_open(audit_db *db, const char *path, int flags, cr_error *err)
{
    int oflags = db->readonly ? SQLITE_OPEN_READONLY
                              : SQLITE_OPEN_READWRITE | ((flags & AUDIT_OPEN_CREATE)
                                                         ? SQLITE_OPEN_CREATE : 0);
    if (sqlite3_open_v2(path, &db->sql, oflags | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
        char why[PATH_MAX + 64];
        open_failure(path, db->readonly, (flags & AUDIT_OPEN_CREATE) != 0, why, sizeof why);
        return cr_error_set(err, CR_EAUDIT, 0, 0, "audit: open %s: %s%s", path,
                            db->sql ? sqlite3_errmsg(db->sql) : "out of memory", why);
    }
    /* Other processes append too: wait for their write lock instead of failing at once. */
    sqlite3_busy_timeout(db->sql, AUDIT_BUSY_MS);
    /* The file's full name, which opens the same file after a chdir (verify's other handles);
     * empty for a database in memory, which no other handle sees. */
    const char *file = sqlite3_db_filename(db->sql, "main");
    char *full = file && *file ? strdup(file) : NULL;
    if (full) {
        free(db->where);
        db->where = full;
    }
    return audit_schema_open(db, flags, err);
}

static void sq_close(audit_db *db)
{
    sqlite3_finalize(db->st_head);
    sqlite3_finalize(db->st_insert);
    sqlite3_close(db->sql);
}

static cr_code sq_begin(audit_db *db, int kind, cr_error *err)
{
    /* BEGIN IMMEDIATE, not BEGIN, to append: take the write lock before reading the head
     * hash, or two writers could both chain onto the same prev_hash. */
    return audit_exec(db, kind == AUDIT_TX_APPEND ? "BEGIN IMMEDIATE" : "BEGIN", err);
}

static cr_code sq_commit(audit_db *db, cr_error *err)
{
    return audit_exec(db, "COMMIT", err);
}

static void sq_rollback(audit_db *db)
{
    sqlite3_exec(db->sql, "ROLLBACK", NULL, NULL, NULL);
}

static int sq_txn_alive(audit_db *db)
{
    return !sqlite3_get_autocommit(db->sql);
}

static cr_code sq_head(audit_db *db, uint64_t *seq, uint8_t hash[AUDIT_HASH_LEN], cr_error *err)
{
    cr_code rc = prepare(db, &db->st_head,
                         "SELECT seq, hash FROM records ORDER BY seq DESC LIMIT 1", err);
    if (rc != CR_OK) return rc;
    int s = sqlite3_step(db->st_head);
    if (s == SQLITE_DONE) {
        *seq = 0;
        memset(hash, 0, AUDIT_HASH_LEN);
    } else if (s == SQLITE_ROW) {
        int64_t q = sqlite3_column_int64(db->st_head, 0);
        const void *h = sqlite3_column_blob(db->st_head, 1);
        if (q < 1 || sqlite3_column_bytes(db->st_head, 1) != AUDIT_HASH_LEN || !h) {
            sqlite3_reset(db->st_head);
            return cr_error_set(err, CR_ELEDGER, 0, 0,
                                "audit: head record %lld is malformed; run calc-audit verify",
                                (long long)q);
        }
        *seq = (uint64_t)q;
        memcpy(hash, h, AUDIT_HASH_LEN);
    } else {
        rc = audit_sqlite_fail(db, err, "read head");
    }
    sqlite3_reset(db->st_head);
    return rc;
}

static void bind_str(sqlite3_stmt *st, int i, const char *p, size_t len)
{
    if (p) sqlite3_bind_text64(st, i, p, len, SQLITE_STATIC, SQLITE_UTF8);
    else sqlite3_bind_null(st, i);
}

static cr_code sq_insert(audit_db *db, uint64_t seq, const audit_record *r,
                         const uint8_t prev[AUDIT_HASH_LEN], const uint8_t hash[AUDIT_HASH_LEN],
                         cr_error *err)
{
    /* reset and cleared after each step below: every column is bound again here */
    cr_code rc = db->st_insert ? CR_OK
                               : prepare(db, &db->st_insert,
                                         "INSERT INTO records(seq, format, " RECORD_COLS
                                         ", prev_hash, hash) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,"
                                         "?,?,?,?,?,?,?,?,?,?,?)", err);
    if (rc != CR_OK) return rc;
    sqlite3_stmt *st = db->st_insert;
    int i = 1;
    sqlite3_bind_int64(st, i++, (int64_t)seq);
    sqlite3_bind_int64(st, i++, AUDIT_FORMAT_VERSION);
#define S(f) bind_str(st, i++, r->f, r->f##_len);
#define I(f) sqlite3_bind_int64(st, i++, r->f);
    AUDIT_FIELDS(S, I)
#undef S
#undef I
    sqlite3_bind_blob(st, i++, prev, AUDIT_HASH_LEN, SQLITE_STATIC);
    sqlite3_bind_blob(st, i++, hash, AUDIT_HASH_LEN, SQLITE_STATIC);
    int s = sqlite3_step(st);
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    if (s == SQLITE_TOOBIG) return audit_too_big(err);
    if (s != SQLITE_DONE) return audit_sqlite_fail(db, err, "insert record");
    return CR_OK;
}

/* ---- reading ------------------------------------------------------------------------- */

static cr_code walk_open(audit_iter *it, const char *sql, const char *what, cr_error *err)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(it->db->sql, sql, -1, &st, NULL) != SQLITE_OK)
        return audit_sqlite_fail(it->db, err, what);
    it->state = st;
    return CR_OK;
}

static cr_code sq_iter_open(audit_iter *it, int64_t from, int64_t to, cr_error *err)
{
    cr_code rc = walk_open(it, "SELECT seq, format, " RECORD_COLS ", prev_hash, hash FROM records"
                           " WHERE seq >= ? AND seq <= ? ORDER BY seq", "read records", err);
    if (rc == CR_OK) {
        sqlite3_bind_int64(it->state, 1, from);
        sqlite3_bind_int64(it->state, 2, to);
    }
    return rc;
}

static cr_code sq_last_seq(audit_db *db, int64_t *seq, cr_error *err)
{
    sqlite3_stmt *st = NULL;
    int s = SQLITE_ERROR;
    const char *file = sqlite3_db_filename(db->sql, "main");
    *seq = 0;
    if (!file || !*file) return CR_OK;   /* in memory: another handle would not see it */
    /* seq is the rowid: max() reads the last leaf, not the table */
    if (sqlite3_prepare_v2(db->sql, "SELECT max(seq) FROM records", -1, &st, NULL) == SQLITE_OK)
        s = sqlite3_step(st);
    if (s == SQLITE_ROW) *seq = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return s == SQLITE_ROW ? CR_OK : audit_sqlite_fail(db, err, "read records");
}

/* The storage class each selected column must have, in SELECT order: what the INSERT above
 * binds. Reads convert silently (text into an integer, a blob into text), so a value of
 * another class could hash like the genuine one; verify refuses it instead. */
static const unsigned char col_class[] = {
    SQLITE_INTEGER, SQLITE_INTEGER,
#define S(f) SQLITE_TEXT,
#define I(f) SQLITE_INTEGER,
    AUDIT_FIELDS(S, I)
#undef S
#undef I
    SQLITE_BLOB, SQLITE_BLOB,
};

/* Column i's value, its storage class checked against col_class (the first mismatch goes
 * into bad). One sqlite3_column_value() a column, not a column_type, column_blob and
 * column_bytes call each: a verify reads 25 columns of every row, and each column_ call pays
 * SQLite's API exit checks. The value is read on the statement's thread before the next
 * step, which is all SQLite asks of it. */
static sqlite3_value *col(sqlite3_stmt *st, int i, int *type, char *bad, size_t n)
{
    static const char *const names[] = { "?", "an integer", "a real", "text", "a blob", "NULL" };
    sqlite3_value *v = sqlite3_column_value(st, i);
    int t = *type = sqlite3_value_type(v);
    /* Absent strings are NULL; nothing else may be. */
    if (t != col_class[i] && !(t == SQLITE_NULL && col_class[i] == SQLITE_TEXT) && !bad[0])
        snprintf(bad, n, "column %s holds %s, expected %s", sqlite3_column_name(st, i),
                 names[t], names[col_class[i]]);
    return v;
}

static void col_str(sqlite3_value *v, int type, const char **p, size_t *len)
{
    if (type == SQLITE_NULL) {
        *p = NULL;
        *len = 0;
        return;
    }
    /* value_blob gives the stored bytes whatever the column's type; NULL for zero bytes. */
    const void *b = sqlite3_value_blob(v);
    *len = (size_t)sqlite3_value_bytes(v);
    *p = b ? (const char *)b : "";
}

static void col_hash(sqlite3_value *v, uint8_t out[AUDIT_HASH_LEN], size_t *len)
{
    const void *b = sqlite3_value_blob(v);
    *len = (size_t)sqlite3_value_bytes(v);
    memset(out, 0, AUDIT_HASH_LEN);
    if (b) memcpy(out, b, *len < AUDIT_HASH_LEN ? *len : AUDIT_HASH_LEN);
}

/* 1 on a row, 0 at the end, -1 with err filled. */
static int step(audit_iter *it, const char *what, cr_error *err)
{
    int s = sqlite3_step(it->state);
    if (s == SQLITE_ROW) return 1;
    if (s == SQLITE_DONE) return 0;
    audit_sqlite_fail(it->db, err, what);
    return -1;
}

static int sq_iter_next(audit_iter *it, audit_entry *e, cr_error *err)
{
    int s = step(it, "read records", err);
    if (s != 1) return s;
    sqlite3_stmt *st = it->state;
    audit_record *r = &e->rec;
    int i = 0, t;
    char *bad = e->bad;
    size_t nb = sizeof e->bad;
    bad[0] = '\0';
    e->seq = (uint64_t)sqlite3_value_int64(col(st, i, &t, bad, nb)), i++;
    e->format = sqlite3_value_int64(col(st, i, &t, bad, nb)), i++;
#define S(f) { sqlite3_value *v = col(st, i++, &t, bad, nb); col_str(v, t, &r->f, &r->f##_len); }
#define I(f) r->f = sqlite3_value_int64(col(st, i, &t, bad, nb)), i++;
    AUDIT_FIELDS(S, I)
#undef S
#undef I
    col_hash(col(st, i, &t, bad, nb), e->prev_hash, &e->prev_hash_len), i++;
    col_hash(col(st, i, &t, bad, nb), e->hash, &e->hash_len), i++;
    return 1;
}

static void sq_iter_close(audit_iter *it)
{
    sqlite3_finalize(it->state);
}

/* ---- checkpoints --------------------------------------------------------------------- */

static cr_code sq_ckpt_insert(audit_db *db, const audit_ckpt_row *c, cr_error *err)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db->sql, "INSERT INTO checkpoints(seq, head_hash, time_us, pubkey,"
                           " signature) VALUES(?,?,?,?,?)", -1, &st, NULL) != SQLITE_OK)
        return audit_sqlite_fail(db, err, "prepare checkpoint");
    sqlite3_bind_int64(st, 1, c->seq);
    sqlite3_bind_blob(st, 2, c->head, (int)c->head_len, SQLITE_STATIC);
    sqlite3_bind_int64(st, 3, c->time_us);
    sqlite3_bind_blob(st, 4, c->pk, (int)c->pk_len, SQLITE_STATIC);
    sqlite3_bind_blob(st, 5, c->sig, (int)c->sig_len, SQLITE_STATIC);
    cr_code rc = sqlite3_step(st) == SQLITE_DONE ? CR_OK
                                                 : audit_sqlite_fail(db, err, "insert checkpoint");
    sqlite3_finalize(st);
    return rc;
}

static cr_code sq_ckpt_open(audit_iter *it, cr_error *err)
{
    return walk_open(it, "SELECT id, seq, head_hash, time_us, pubkey, signature"
                     " FROM checkpoints ORDER BY seq, id", "read checkpoints", err);
}

static const uint8_t *col_blob(sqlite3_stmt *st, int i, size_t *len)
{
    *len = (size_t)sqlite3_column_bytes(st, i);
    return sqlite3_column_blob(st, i);
}

static int sq_ckpt_next(audit_iter *it, audit_ckpt_row *c, cr_error *err)
{
    int s = step(it, "read checkpoints", err);
    if (s != 1) return s;
    sqlite3_stmt *st = it->state;
    c->id = sqlite3_column_int64(st, 0);
    c->seq = sqlite3_column_int64(st, 1);
    c->time_us = sqlite3_column_int64(st, 3);
    c->head = col_blob(st, 2, &c->head_len);
    c->pk = col_blob(st, 4, &c->pk_len);
    c->sig = col_blob(st, 5, &c->sig_len);
    return 1;
}

const audit_store audit_store_sqlite = {
    .name = "sqlite",
    .open = sq_open, .close = sq_close, .budget = audit_budget,
    .begin = sq_begin, .commit = sq_commit, .rollback = sq_rollback, .txn_alive = sq_txn_alive,
    .head = sq_head, .insert = sq_insert,
    .iter_open = sq_iter_open, .iter_next = sq_iter_next, .iter_close = sq_iter_close,
    .ckpt_insert = sq_ckpt_insert, .ckpt_open = sq_ckpt_open, .ckpt_next = sq_ckpt_next,
    .last_seq = sq_last_seq,
};
