/* audit/ledger.c: the SQLite ledger: schema, durable chained appends, iteration. */
#include "audit/audit_int.h"

#include <sodium.h>
#include <stdlib.h>
#include <time.h>

/* The record's columns in the order of AUDIT_FIELDS (out is stdout, err_out is stderr); the
 * SELECT and the INSERT below bind and read them in that order. */
#define RECORD_COLS \
    "request_id, time_us, engine_version, grammar_version, lang, code, bindings, tables, " \
    "policy, route, reasons, status, value_fraction, value_repr, value_type, value_exact, " \
    "stdout, stderr, error, artifacts, timings"

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
     * file can drop them, which is what the hash chain and the checkpoints are for. */
    "CREATE TRIGGER records_no_update BEFORE UPDATE ON records"
    " BEGIN SELECT RAISE(ABORT, 'audit ledger is append-only'); END;"
    "CREATE TRIGGER records_no_delete BEFORE DELETE ON records"
    " BEGIN SELECT RAISE(ABORT, 'audit ledger is append-only'); END;"
    "CREATE TRIGGER checkpoints_no_update BEFORE UPDATE ON checkpoints"
    " BEGIN SELECT RAISE(ABORT, 'audit ledger is append-only'); END;"
    "CREATE TRIGGER checkpoints_no_delete BEFORE DELETE ON checkpoints"
    " BEGIN SELECT RAISE(ABORT, 'audit ledger is append-only'); END;";

cr_code audit_sqlite_fail(audit_db *db, cr_error *err, const char *step)
{
    return cr_error_set(err, CR_EAUDIT, 0, 0, "audit: %s: %s", step,
                        db && db->sql ? sqlite3_errmsg(db->sql) : "no database");
}

cr_code audit_exec(audit_db *db, const char *sql, cr_error *err)
{
    if (sqlite3_exec(db->sql, sql, NULL, NULL, NULL) != SQLITE_OK)
        return audit_sqlite_fail(db, err, sql);
    return CR_OK;
}

cr_code audit_prepare(audit_db *db, sqlite3_stmt **st, const char *sql, cr_error *err)
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

int64_t audit_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static cr_code table_exists(audit_db *db, const char *name, int *yes, cr_error *err)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db->sql, "SELECT 1 FROM sqlite_master WHERE type='table' AND name=?",
                           -1, &st, NULL) != SQLITE_OK)
        return audit_sqlite_fail(db, err, "read schema");
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) return audit_sqlite_fail(db, err, "read schema");
    *yes = rc == SQLITE_ROW;
    return CR_OK;
}

static cr_code check_schema_version(audit_db *db, cr_error *err)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db->sql, "SELECT max(version) FROM schema_version", -1, &st, NULL)
        != SQLITE_OK)
        return audit_sqlite_fail(db, err, "read schema version");
    int64_t v = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -1;
    sqlite3_finalize(st);
    if (v != AUDIT_SCHEMA_VERSION)
        return cr_error_set(err, CR_EAUDIT, 0, 0, "audit: schema version %lld, expected %d",
                            (long long)v, AUDIT_SCHEMA_VERSION);
    return CR_OK;
}

/* Creates the schema unless another process already did; under BEGIN IMMEDIATE so two
 * processes opening a fresh file at once cannot both create it. */
static cr_code create_schema(audit_db *db, cr_error *err)
{
    cr_code rc;
    int yes = 0;
    if ((rc = audit_exec(db, "BEGIN IMMEDIATE", err)) != CR_OK) return rc;
    if ((rc = table_exists(db, "schema_version", &yes, err)) != CR_OK) goto fail;
    if (!yes) {
        if ((rc = audit_exec(db, schema_sql, err)) != CR_OK) goto fail;
        char ins[128];
        snprintf(ins, sizeof ins, "INSERT INTO schema_version VALUES(%d, %lld)",
                 AUDIT_SCHEMA_VERSION, (long long)audit_now_us());
        if ((rc = audit_exec(db, ins, err)) != CR_OK) goto fail;
    }
    return audit_exec(db, "COMMIT", err);
fail:
    sqlite3_exec(db->sql, "ROLLBACK", NULL, NULL, NULL);
    return rc;
}

cr_code audit_open(const char *path, int flags, audit_db **out, cr_error *err)
{
    cr_code rc;
    *out = NULL;
    if (!path || !*path) return cr_error_set(err, CR_EUSAGE, 0, 0, "audit: no ledger path");
    if (sodium_init() < 0) return cr_error_set(err, CR_EAUDIT, 0, 0, "audit: libsodium init");
    audit_db *db = calloc(1, sizeof *db);
    if (!db) return cr_error_set(err, CR_ENOMEM, 0, 0, "audit: ledger handle");
    db->readonly = (flags & AUDIT_OPEN_READONLY) != 0;
    int oflags = db->readonly ? SQLITE_OPEN_READONLY
                              : SQLITE_OPEN_READWRITE | ((flags & AUDIT_OPEN_CREATE)
                                                         ? SQLITE_OPEN_CREATE : 0);
    if (sqlite3_open_v2(path, &db->sql, oflags | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
        rc = cr_error_set(err, CR_EAUDIT, 0, 0, "audit: open %s: %s", path,
                          db->sql ? sqlite3_errmsg(db->sql) : "out of memory");
        goto fail;
    }
    /* Other processes append too: wait for their write lock instead of failing at once. */
    sqlite3_busy_timeout(db->sql, AUDIT_BUSY_MS);
    if (!db->readonly) {
        /* WAL so readers never block the appender; FULL so a commit that returned is on disk
         * even if the machine loses power right after. */
        if ((rc = audit_exec(db, "PRAGMA journal_mode=WAL", err)) != CR_OK) goto fail;
        if ((rc = audit_exec(db, "PRAGMA synchronous=FULL", err)) != CR_OK) goto fail;
        if ((flags & AUDIT_OPEN_CREATE) && (rc = create_schema(db, err)) != CR_OK) goto fail;
    }
    if ((rc = check_schema_version(db, err)) != CR_OK) goto fail;
    *out = db;
    return CR_OK;
fail:
    audit_close(db);
    return rc;
}

void audit_close(audit_db *db)
{
    if (!db) return;
    sqlite3_finalize(db->st_head);
    sqlite3_finalize(db->st_insert);
    sqlite3_close(db->sql);
    free(db);
}

/* ---- canonical encoding -------------------------------------------------------------- */

static void put_u64(unsigned char *p, uint64_t v)
{
    for (int i = 7; i >= 0; i--, v >>= 8) p[i] = (unsigned char)v;
}

/* Each field: a kind byte, then for bytes an 8-byte big-endian length and the bytes, for an
 * integer its 8 bytes big-endian two's complement. Absent and empty differ by kind. */
enum { ENC_ABSENT = 0, ENC_BYTES = 1, ENC_INT = 2 };

static cr_code enc_bytes(cr_buf *out, const char *p, size_t len)
{
    unsigned char h[9] = { ENC_ABSENT };
    if (!p) return cr_buf_put(out, h, 1);
    h[0] = ENC_BYTES;
    put_u64(h + 1, len);
    cr_code rc = cr_buf_put(out, h, sizeof h);
    return rc != CR_OK ? rc : cr_buf_put(out, p, len);
}

static cr_code enc_int(cr_buf *out, int64_t v)
{
    unsigned char h[9] = { ENC_INT };
    put_u64(h + 1, (uint64_t)v);
    return cr_buf_put(out, h, sizeof h);
}

cr_code audit_encode(const audit_record *r, uint64_t seq, cr_buf *out)
{
    /* format version (4 bytes), seq (8), field count (4), all big-endian */
    unsigned char head[16];
    put_u64(head, ((uint64_t)AUDIT_FORMAT_VERSION << 32) | (seq >> 32));
    put_u64(head + 8, (seq << 32) | AUDIT_NFIELDS);
    cr_code rc = cr_buf_put(out, head, sizeof head);
#define S(f) if (rc == CR_OK) rc = enc_bytes(out, r->f, r->f##_len);
#define I(f) if (rc == CR_OK) rc = enc_int(out, r->f);
    AUDIT_FIELDS(S, I)
#undef S
#undef I
    return rc;
}

void audit_chain_hash(const uint8_t prev[AUDIT_HASH_LEN], const void *enc, size_t len,
                      uint8_t out[AUDIT_HASH_LEN])
{
    crypto_hash_sha256_state st;
    crypto_hash_sha256_init(&st);
    crypto_hash_sha256_update(&st, (const unsigned char *)AUDIT_TAG_RECORD,
                              sizeof AUDIT_TAG_RECORD - 1);
    crypto_hash_sha256_update(&st, prev, AUDIT_HASH_LEN);
    crypto_hash_sha256_update(&st, enc, len);
    crypto_hash_sha256_final(&st, out);
}

void audit_hex(const uint8_t hash[AUDIT_HASH_LEN], char hex[2 * AUDIT_HASH_LEN + 1])
{
    sodium_bin2hex(hex, 2 * AUDIT_HASH_LEN + 1, hash, AUDIT_HASH_LEN);
}

/* ---- append -------------------------------------------------------------------------- */

cr_code audit_head_locked(audit_db *db, uint64_t *seq, uint8_t hash[AUDIT_HASH_LEN],
                          cr_error *err)
{
    cr_code rc = audit_prepare(db, &db->st_head,
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
            return cr_error_set(err, CR_EAUDIT, 0, 0,
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

static cr_code insert_one(audit_db *db, const audit_record *rec, uint64_t seq,
                          uint8_t prev[AUDIT_HASH_LEN], cr_buf *enc, cr_error *err)
{
    audit_record r = *rec;
    if (r.time_us == 0) r.time_us = audit_now_us();
    cr_buf_reset(enc);
    if (audit_encode(&r, seq, enc) != CR_OK)
        return cr_error_set(err, CR_ENOMEM, 0, 0, "audit: record encoding");
    uint8_t hash[AUDIT_HASH_LEN];
    audit_chain_hash(prev, enc->p, enc->len, hash);

    cr_code rc = audit_prepare(db, &db->st_insert,
                               "INSERT INTO records(seq, format, " RECORD_COLS ", prev_hash, hash)"
                               " VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", err);
    if (rc != CR_OK) return rc;
    sqlite3_stmt *st = db->st_insert;
    int i = 1;
    sqlite3_bind_int64(st, i++, (int64_t)seq);
    sqlite3_bind_int64(st, i++, AUDIT_FORMAT_VERSION);
#define S(f) bind_str(st, i++, r.f, r.f##_len);
#define I(f) sqlite3_bind_int64(st, i++, r.f);
    AUDIT_FIELDS(S, I)
#undef S
#undef I
    sqlite3_bind_blob(st, i++, prev, AUDIT_HASH_LEN, SQLITE_STATIC);
    sqlite3_bind_blob(st, i++, hash, AUDIT_HASH_LEN, SQLITE_STATIC);
    int s = sqlite3_step(st);
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    if (s != SQLITE_DONE) return audit_sqlite_fail(db, err, "insert record");
    memcpy(prev, hash, AUDIT_HASH_LEN);
    return CR_OK;
}

cr_code audit_append_batch(audit_db *db, const audit_record *recs, size_t n,
                           uint64_t *first_seq, uint8_t last_hash[AUDIT_HASH_LEN],
                           cr_error *err)
{
    cr_code rc;
    uint64_t seq;
    uint8_t prev[AUDIT_HASH_LEN];
    cr_buf enc;
    if (!db || (!recs && n)) return cr_error_set(err, CR_EUSAGE, 0, 0, "audit: no ledger");
    if (db->readonly) return cr_error_set(err, CR_EUSAGE, 0, 0, "audit: ledger opened read-only");
    cr_buf_init(&enc, 0);
    /* BEGIN IMMEDIATE, not BEGIN: take the write lock before reading the head hash, or two
     * writers could both chain onto the same prev_hash. */
    if ((rc = audit_exec(db, "BEGIN IMMEDIATE", err)) != CR_OK) goto out;
    if ((rc = audit_head_locked(db, &seq, prev, err)) != CR_OK) goto rollback;
    if (first_seq) *first_seq = seq + 1;
    for (size_t k = 0; k < n; k++)
        if ((rc = insert_one(db, &recs[k], seq + 1 + k, prev, &enc, err)) != CR_OK) goto rollback;
    if ((rc = audit_exec(db, "COMMIT", err)) != CR_OK) goto rollback;
    if (last_hash) memcpy(last_hash, prev, AUDIT_HASH_LEN);
    goto out;
rollback:
    sqlite3_exec(db->sql, "ROLLBACK", NULL, NULL, NULL);
out:
    cr_buf_free(&enc);
    return rc;
}

cr_code audit_append(audit_db *db, const audit_record *rec, uint64_t *seq,
                     uint8_t hash[AUDIT_HASH_LEN], cr_error *err)
{
    if (!rec) return cr_error_set(err, CR_EUSAGE, 0, 0, "audit: no record");
    return audit_append_batch(db, rec, 1, seq, hash, err);
}

cr_code audit_head(audit_db *db, uint64_t *seq, uint8_t hash[AUDIT_HASH_LEN], cr_error *err)
{
    cr_code rc;
    /* A read transaction so seq and hash come from the same snapshot. */
    if ((rc = audit_exec(db, "BEGIN", err)) != CR_OK) return rc;
    rc = audit_head_locked(db, seq, hash, err);
    sqlite3_exec(db->sql, "COMMIT", NULL, NULL, NULL);
    return rc;
}

/* ---- iteration ----------------------------------------------------------------------- */

struct audit_iter {
    audit_db *db;
    sqlite3_stmt *st;
};

cr_code audit_iter_open(audit_db *db, uint64_t from, uint64_t to, audit_iter **out,
                        cr_error *err)
{
    *out = NULL;
    audit_iter *it = calloc(1, sizeof *it);
    if (!it) return cr_error_set(err, CR_ENOMEM, 0, 0, "audit: iterator");
    it->db = db;
    if (sqlite3_prepare_v2(db->sql,
                           "SELECT seq, format, " RECORD_COLS ", prev_hash, hash FROM records"
                           " WHERE seq >= ? AND seq <= ? ORDER BY seq", -1, &it->st, NULL)
        != SQLITE_OK) {
        cr_code rc = audit_sqlite_fail(db, err, "read records");
        free(it);
        return rc;
    }
    /* Bounds as signed: a tampered seq can be negative, and verify must see it. */
    sqlite3_bind_int64(it->st, 1, from ? (int64_t)from : INT64_MIN);
    sqlite3_bind_int64(it->st, 2, to ? (int64_t)to : INT64_MAX);
    *out = it;
    return CR_OK;
}

static void col_str(sqlite3_stmt *st, int i, const char **p, size_t *len)
{
    if (sqlite3_column_type(st, i) == SQLITE_NULL) {
        *p = NULL;
        *len = 0;
        return;
    }
    /* column_blob gives the stored bytes whatever the column's type; NULL for zero bytes. */
    const void *b = sqlite3_column_blob(st, i);
    *len = (size_t)sqlite3_column_bytes(st, i);
    *p = b ? (const char *)b : "";
}

static void col_hash(sqlite3_stmt *st, int i, uint8_t out[AUDIT_HASH_LEN], size_t *len)
{
    const void *b = sqlite3_column_blob(st, i);
    *len = (size_t)sqlite3_column_bytes(st, i);
    memset(out, 0, AUDIT_HASH_LEN);
    if (b) memcpy(out, b, *len < AUDIT_HASH_LEN ? *len : AUDIT_HASH_LEN);
}

int audit_iter_next(audit_iter *it, audit_entry *e, cr_error *err)
{
    int s = sqlite3_step(it->st);
    if (s == SQLITE_DONE) return 0;
    if (s != SQLITE_ROW) {
        audit_sqlite_fail(it->db, err, "read records");
        return -1;
    }
    sqlite3_stmt *st = it->st;
    audit_record *r = &e->rec;
    int i = 0;
    e->seq = (uint64_t)sqlite3_column_int64(st, i++);
    e->format = sqlite3_column_int64(st, i++);
#define S(f) col_str(st, i++, &r->f, &r->f##_len);
#define I(f) r->f = sqlite3_column_int64(st, i++);
    AUDIT_FIELDS(S, I)
#undef S
#undef I
    col_hash(st, i++, e->prev_hash, &e->prev_hash_len);
    col_hash(st, i++, e->hash, &e->hash_len);
    return 1;
}

void audit_iter_close(audit_iter *it)
{
    if (!it) return;
    sqlite3_finalize(it->st);
    free(it);
}
