/* audit/ledger.c: the SQLite ledger: durable chained appends, iteration (the schema and the
 * connection's limits are in audit/schema.c). */
#include "audit/audit_int.h"

#include <sodium.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
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

static cr_code audit_prepare(audit_db *db, sqlite3_stmt **st, const char *sql, cr_error *err)
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

/* A writer appends to the head: one that does not verify (its hash, its link to the record
 * before) is refused, so no new record is chained onto a tampered one. */
static cr_code check_head(audit_db *db, cr_error *err)
{
    uint64_t head;
    uint8_t h[AUDIT_HASH_LEN], prev[AUDIT_HASH_LEN] = {0};
    cr_code rc = audit_head(db, &head, h, err);
    if (rc != CR_OK || head == 0) return rc;
    audit_iter *it = NULL;
    audit_entry e;
    cr_buf enc;
    cr_buf_init(&enc, 0);
    int s = 0, ok = 0;
    uint64_t want = head > 1 ? head - 1 : head;
    if ((rc = audit_iter_open(db, want, head, &it, err)) != CR_OK) return rc;
    while ((s = audit_iter_next(it, &e, err)) == 1) {
        if (e.seq != want) break;
        if (e.seq < head) {
            if (e.hash_len == AUDIT_HASH_LEN) memcpy(prev, e.hash, AUDIT_HASH_LEN);
            want = head;
            continue;
        }
        uint8_t got[AUDIT_HASH_LEN];
        if (audit_encode(&e.rec, e.seq, &enc) != CR_OK) {
            s = -1;
            rc = cr_error_set(err, CR_ENOMEM, 0, 0, "audit: record encoding");
            break;
        }
        audit_chain_hash(prev, enc.p, enc.len, got);
        ok = !e.bad[0] && e.hash_len == AUDIT_HASH_LEN && e.prev_hash_len == AUDIT_HASH_LEN &&
             memcmp(e.prev_hash, prev, AUDIT_HASH_LEN) == 0 &&
             memcmp(e.hash, got, AUDIT_HASH_LEN) == 0;
        break;
    }
    audit_iter_close(it);
    cr_buf_free(&enc);
    if (s < 0) return err ? err->code : CR_EAUDIT;
    if (!ok)
        return cr_error_set(err, CR_ELEDGER, 0, 0, "audit: the ledger's last record (seq %llu) "
                            "does not verify: nothing is appended to it (calc-audit verify "
                            "names what is wrong)", (unsigned long long)head);
    return CR_OK;
}

cr_code audit_open(const char *path, int flags, audit_db **out, cr_error *err)
{
    cr_code rc;
    *out = NULL;
    if (!path || !*path) return cr_error_set(err, CR_EUSAGE, 0, 0, "audit: no ledger path");
    if (sodium_init() < 0) return cr_error_set(err, CR_EAUDIT, 0, 0, "audit: libsodium init");
    audit_db *db = calloc(1, sizeof *db);
    if (!db) return cr_error_set(err, CR_ENOMEM, 0, 0, "audit: ledger handle");
    pthread_mutex_init(&db->mu, NULL);
    pthread_cond_init(&db->cv, NULL);
    db->tail = &db->queue;
    db->readonly = (flags & AUDIT_OPEN_READONLY) != 0;
    int oflags = db->readonly ? SQLITE_OPEN_READONLY
                              : SQLITE_OPEN_READWRITE | ((flags & AUDIT_OPEN_CREATE)
                                                         ? SQLITE_OPEN_CREATE : 0);
    if (sqlite3_open_v2(path, &db->sql, oflags | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
        char why[PATH_MAX + 64];
        open_failure(path, db->readonly, (flags & AUDIT_OPEN_CREATE) != 0, why, sizeof why);
        rc = cr_error_set(err, CR_EAUDIT, 0, 0, "audit: open %s: %s%s", path,
                          db->sql ? sqlite3_errmsg(db->sql) : "out of memory", why);
        goto fail;
    }
    /* Other processes append too: wait for their write lock instead of failing at once. */
    sqlite3_busy_timeout(db->sql, AUDIT_BUSY_MS);
    if ((rc = audit_schema_open(db, flags, err)) != CR_OK) goto fail;
    if (!db->readonly && (rc = check_head(db, err)) != CR_OK) goto fail;
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
    pthread_cond_destroy(&db->cv);
    pthread_mutex_destroy(&db->mu);
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
    const audit_span parts[] = {
        { AUDIT_TAG_RECORD, sizeof AUDIT_TAG_RECORD - 1 }, { prev, AUDIT_HASH_LEN }, { enc, len },
    };
    audit_sha256(parts, 3, out);
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
    if (s == SQLITE_TOOBIG)
        return cr_error_set(err, CR_EAUDIT, 0, 0, "audit: the record is larger than %d MiB,"
                            " the ledger's limit for a row", AUDIT_MAX_ROW >> 20);
    if (s != SQLITE_DONE) return audit_sqlite_fail(db, err, "insert record");
    memcpy(prev, hash, AUDIT_HASH_LEN);
    return CR_OK;
}

/* Waits until no commit is under way on this handle and marks one as under way; the caller
 * then owns the connection until commit_end(). */
static void commit_begin(audit_db *db)
{
    pthread_mutex_lock(&db->mu);
    while (db->committing) pthread_cond_wait(&db->cv, &db->mu);
    db->committing = 1;
    pthread_mutex_unlock(&db->mu);
}

static void commit_end(audit_db *db)
{
    pthread_mutex_lock(&db->mu);
    db->committing = 0;
    pthread_cond_broadcast(&db->cv);
    pthread_mutex_unlock(&db->mu);
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
    commit_begin(db);
    audit_budget(db);
    /* BEGIN IMMEDIATE, not BEGIN: take the write lock before reading the head hash, or two
     * writers could both chain onto the same prev_hash. */
    if ((rc = audit_exec(db, "BEGIN IMMEDIATE", err)) != CR_OK) goto out;
    if ((rc = audit_head_locked(db, &seq, prev, err)) != CR_OK) goto rollback;
    if (first_seq) *first_seq = seq + 1;
    for (size_t k = 0; k < n; k++)
        if ((rc = insert_one(db, &recs[k], seq + 1 + k, prev, &enc, err)) != CR_OK) goto rollback;
    if ((rc = audit_exec(db, "COMMIT", err)) != CR_OK) goto rollback;
    db->commits++;
    if (last_hash) memcpy(last_hash, prev, AUDIT_HASH_LEN);
    goto out;
rollback:
    sqlite3_exec(db->sql, "ROLLBACK", NULL, NULL, NULL);
out:
    commit_end(db);
    cr_buf_free(&enc);
    return rc;
}

static void group_fail(audit_waiter *w, cr_code rc, const cr_error *err)
{
    for (; w; w = w->next)
        if (w->rc == CR_OK) {
            w->rc = rc;
            if (err) w->err = *err;
        }
}

/* One transaction for every waiter of the group, in queue order. A record that cannot be
 * stored (too large) fails alone: its statement is undone and the chain goes on without it;
 * a failure of the transaction itself (the write lock, the disk, the commit) fails them all,
 * and nothing of the group is stored. */
static void commit_group(audit_db *db, audit_waiter *group)
{
    uint64_t seq;
    uint8_t prev[AUDIT_HASH_LEN];
    cr_buf enc;
    cr_error err = {0};
    cr_code rc;
    cr_buf_init(&enc, 0);
    audit_budget(db);
    if ((rc = audit_exec(db, "BEGIN IMMEDIATE", &err)) != CR_OK) {
        group_fail(group, rc, &err);
        goto out;
    }
    if ((rc = audit_head_locked(db, &seq, prev, &err)) != CR_OK) goto rollback;
    for (audit_waiter *w = group; w; w = w->next) {
        w->rc = insert_one(db, w->rec, seq + 1, prev, &enc, &w->err);
        if (w->rc == CR_OK) {
            w->seq = ++seq;
            memcpy(w->hash, prev, AUDIT_HASH_LEN);
        } else if (sqlite3_get_autocommit(db->sql)) {   /* SQLite ended the transaction */
            rc = w->rc;
            err = w->err;
            goto rollback;
        }
    }
    if ((rc = audit_exec(db, "COMMIT", &err)) == CR_OK) {
        db->commits++;
        goto out;
    }
rollback:
    sqlite3_exec(db->sql, "ROLLBACK", NULL, NULL, NULL);
    for (audit_waiter *w = group; w; w = w->next) w->rc = CR_OK;
    group_fail(group, rc, &err);
out:
    cr_buf_free(&enc);
}

cr_code audit_append(audit_db *db, const audit_record *rec, uint64_t *seq,
                     uint8_t hash[AUDIT_HASH_LEN], cr_error *err)
{
    if (!rec) return cr_error_set(err, CR_EUSAGE, 0, 0, "audit: no record");
    if (!db) return cr_error_set(err, CR_EUSAGE, 0, 0, "audit: no ledger");
    if (db->readonly) return cr_error_set(err, CR_EUSAGE, 0, 0, "audit: ledger opened read-only");
    audit_waiter w = { .rec = rec };
    pthread_mutex_lock(&db->mu);
    *db->tail = &w;
    db->tail = &w.next;
    while (!w.done) {
        if (db->committing) {
            pthread_cond_wait(&db->cv, &db->mu);
            continue;
        }
        /* No commit under way: this thread commits the queue (up to AUDIT_GROUP_MAX), its own
         * record among them unless the queue was longer. */
        audit_waiter *group = db->queue, **cut = &db->queue;
        for (int k = 0; *cut && k < AUDIT_GROUP_MAX; k++) cut = &(*cut)->next;
        db->queue = *cut;
        *cut = NULL;
        if (!db->queue) db->tail = &db->queue;
        db->committing = 1;
        pthread_mutex_unlock(&db->mu);
        commit_group(db, group);
        pthread_mutex_lock(&db->mu);
        for (audit_waiter *x = group, *next; x; x = next) {
            next = x->next;   /* x may be gone once done is seen */
            x->done = 1;
        }
        db->committing = 0;
        pthread_cond_broadcast(&db->cv);
    }
    pthread_mutex_unlock(&db->mu);
    if (w.rc != CR_OK) {
        if (err) *err = w.err;
        return w.rc;
    }
    if (seq) *seq = w.seq;
    if (hash) memcpy(hash, w.hash, AUDIT_HASH_LEN);
    return CR_OK;
}

cr_code audit_head(audit_db *db, uint64_t *seq, uint8_t hash[AUDIT_HASH_LEN], cr_error *err)
{
    cr_code rc;
    audit_budget(db);
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
    audit_budget(db);
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

static void check_classes(sqlite3_stmt *st, char *bad, size_t n)
{
    static const char *const names[] = { "?", "an integer", "a real", "text", "a blob", "NULL" };
    bad[0] = '\0';
    for (int i = 0; i < (int)sizeof col_class; i++) {
        int t = sqlite3_column_type(st, i);
        /* Absent strings are NULL; nothing else may be. */
        if (t == col_class[i] || (t == SQLITE_NULL && col_class[i] == SQLITE_TEXT)) continue;
        snprintf(bad, n, "column %s holds %s, expected %s", sqlite3_column_name(st, i),
                 names[t], names[col_class[i]]);
        return;
    }
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
    check_classes(st, e->bad, sizeof e->bad);
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
