/* audit/audit_int.h: shared by the audit module's own files (and its white-box readers,
 * tests/test_audit.c and bench/bench_audit.c) only; other modules use audit/audit.h. */
#ifndef CR_AUDIT_INT_H
#define CR_AUDIT_INT_H

#include <pthread.h>
#include <sqlite3.h>

#include "audit/audit.h"

#define AUDIT_BUSY_MS 30000   /* how long an append waits for another process's write lock */
/* SQLITE_LIMIT_LENGTH: an append whose row would be longer fails, a read that meets a value
 * longer refuses the file. The largest record the default limits allow (1 MiB of stdout, a
 * 16 Mi-character string's repr, code as submitted) fits with room. */
#define AUDIT_MAX_ROW (256 << 20)
/* The work budget of one operation in SQLite VM steps: a base plus so many per byte of the
 * file, counted by a progress handler every AUDIT_PROGRESS_OPS steps (audit/schema.c). */
#define AUDIT_WORK_BASE 200000000ull
#define AUDIT_WORK_PER_BYTE 64ull
#define AUDIT_PROGRESS_OPS 1000

/* The record's fields in canonical order, for X-macros: S names a string field, I an
 * integer one. The encoding, the INSERT, the SELECT and the JSON all follow this list. */
#define AUDIT_FIELDS(S, I) \
    S(request_id) I(time_us) S(engine_version) S(grammar_version) S(lang) S(code) \
    S(bindings) S(tables) S(policy) S(route) S(reasons) I(status) S(value_fraction) \
    S(value_repr) S(value_type) I(value_exact) S(out) S(err_out) S(error) S(artifacts) \
    S(timings)
#define AUDIT_NFIELDS 21

/* An append waiting for a commit it shares with others (group commit, audit/ledger.c). The
 * record and the waiter live on the appending thread's stack until done is set. */
typedef struct audit_waiter audit_waiter;
struct audit_waiter {
    const audit_record *rec;
    uint64_t seq;
    uint8_t hash[AUDIT_HASH_LEN];
    cr_code rc;
    cr_error err;
    int done;
    audit_waiter *next;
};
#define AUDIT_GROUP_MAX 256   /* records in one shared commit at most */

/* One stored checkpoint as read back: blobs as stored (a tampered row may hold other
 * lengths), valid until the next read of the same walk. */
typedef struct {
    int64_t id, seq, time_us;
    const uint8_t *head, *pk, *sig;
    size_t head_len, pk_len, sig_len;
} audit_ckpt_row;

/* A walk over rows (records or checkpoints) of either store: the store keeps its cursor in
 * state. */
struct audit_iter {
    audit_db *db;
    void *state;
};

enum {
    AUDIT_TX_READ = 1,     /* one snapshot for several reads */
    AUDIT_TX_APPEND = 2,   /* holds the ledger's append lock: the head cannot move under us */
};

/* Where a ledger lives: SQLite, the embedded default (audit/sqlite.c), or PostgreSQL
 * (audit/pg.c, chosen by a postgresql:// URI). The chain, the encoding, group commit,
 * verify, checkpoints and proofs are written once above these operations. */
typedef struct {
    const char *name;
    cr_code (*open)(audit_db *db, const char *where, int flags, cr_error *err);
    void (*close)(audit_db *db);
    /* Refills the work budget of the operation that starts (SQLite; a no-op elsewhere). */
    void (*budget)(audit_db *db);
    cr_code (*begin)(audit_db *db, int kind, cr_error *err);   /* AUDIT_TX_* */
    cr_code (*commit)(audit_db *db, cr_error *err);
    void (*rollback)(audit_db *db);
    /* After insert() failed: 1 when the transaction is still usable (that record failed
     * alone), 0 when the store ended it. */
    int (*txn_alive)(audit_db *db);
    /* The last record, inside a transaction the caller holds. */
    cr_code (*head)(audit_db *db, uint64_t *seq, uint8_t hash[AUDIT_HASH_LEN], cr_error *err);
    cr_code (*insert)(audit_db *db, uint64_t seq, const audit_record *r,
                      const uint8_t prev[AUDIT_HASH_LEN], const uint8_t hash[AUDIT_HASH_LEN],
                      cr_error *err);
    /* Records with from <= seq <= to in seq order (bounds as signed: a tampered seq can be
     * negative and verify must see it). */
    cr_code (*iter_open)(audit_iter *it, int64_t from, int64_t to, cr_error *err);
    int (*iter_next)(audit_iter *it, audit_entry *e, cr_error *err);
    void (*iter_close)(audit_iter *it);
    cr_code (*ckpt_insert)(audit_db *db, const audit_ckpt_row *c, cr_error *err);
    /* Every checkpoint, by seq then id; closed with iter_close. */
    cr_code (*ckpt_open)(audit_iter *it, cr_error *err);
    int (*ckpt_next)(audit_iter *it, audit_ckpt_row *c, cr_error *err);
    /* The largest seq stored, inside a read transaction: where verify splits the records
     * into ranges read side by side through more handles on the same ledger. 0 when empty or
     * when no other handle would see the same rows (SQLite in memory); NULL: verify reads
     * through one handle. */
    cr_code (*last_seq)(audit_db *db, int64_t *seq, cr_error *err);
} audit_store;

extern const audit_store audit_store_sqlite, audit_store_pg;

/* Another read-only handle on db's ledger (verify's ranges): the same tables whatever has
 * changed since db opened (on PostgreSQL, the schema db pinned, not the one the search_path
 * would find now). */
cr_code audit_open_beside(audit_db *db, audit_db **out, cr_error *err);

/* The stored checkpoints, by seq then id (closed with audit_iter_close()); next as
 * audit_iter_next(). */
cr_code audit_ckpt_open(audit_db *db, audit_iter **out, cr_error *err);
int audit_ckpt_next(audit_iter *it, audit_ckpt_row *c, cr_error *err);

struct audit_pg;

struct audit_db {
    const audit_store *store;
    char *where;   /* where it lives (a SQLite file's full name): verify opens more handles */
    int readonly;
    /* Appends from many threads: they queue, and whichever finds no commit under way takes
     * the whole queue into one transaction (one fsync) while the others wait for it. */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    audit_waiter *queue, **tail;
    int committing;
    uint64_t commits;   /* appending transactions committed (records per commit: the bench) */
    /* SQLite's connection (audit/sqlite.c, audit/schema.c) */
    sqlite3 *sql;
    uint64_t work;                       /* progress callbacks left in this operation */
    sqlite3_stmt *st_head, *st_insert;   /* prepared once, reused by every append */
    /* PostgreSQL's (audit/pg.c) */
    struct audit_pg *pg;
    const audit_db *beside;   /* while it opens: the handle whose ledger it opens again */
};

/* Verify reads ranges side by side only when each would hold at least this many records (a
 * handle's open costs about a millisecond), in as many ranges as CPUs are online (at most 8)
 * or audit_verify_ranges when set: tests set both to cut small ledgers anywhere. */
extern uint64_t audit_verify_range_min;
extern int audit_verify_ranges;

/* SHA-256 of the concatenated parts (audit/hash.c): the ledger's one hash function. */
typedef struct {
    const void *p;
    size_t len;
} audit_span;
void audit_sha256(const audit_span *parts, size_t n, uint8_t out[AUDIT_HASH_LEN]);

/* ---- the SQLite store's own (audit/sqlite.c, audit/schema.c) ---- */

/* The error of the last SQLite call; CR_ELEDGER when the file caused it (too big, too much
 * work, not a database), CR_EAUDIT otherwise. */
cr_code audit_sqlite_fail(audit_db *db, cr_error *err, const char *step);
/* Limits the connection and checks that the file holds exactly the ledger's schema, creating
 * it first in an empty file with AUDIT_OPEN_CREATE (audit/schema.c). */
cr_code audit_schema_open(audit_db *db, int flags, cr_error *err);
/* Refills the work budget: called as each operation (append, head, verify, a read) starts. */
void audit_budget(audit_db *db);
cr_code audit_exec(audit_db *db, const char *sql, cr_error *err);

/* The signed-note text toolkit (audit/merkle.c) shared by checkpoints, proofs, bundles and
 * policies: standard base64 appended, and decoded into at most cap bytes (1 when s is that
 * and only that); a base64 SHA-256 hash; the next newline-ended line of [*p, end) (1 with
 * it in line and len, newline left out); a decimal as the formats write it (no sign, no
 * leading zero, below 2^63); a key name as signed-note allows. */
cr_code audit_b64_put(cr_buf *b, const void *p, size_t n);
int audit_b64_decode(const char *s, size_t len, uint8_t *out, size_t cap, size_t *got);
int audit_b64_hash(const char *s, size_t len, uint8_t out[AUDIT_HASH_LEN]);
int audit_next_line(const char **p, const char *end, const char **line, size_t *len);
int audit_get_u64(const char *s, size_t len, uint64_t *v);
int audit_name_ok(const char *s, size_t len);
/* RFC 6962's interior node hash. */
void audit_node_hash(const uint8_t l[AUDIT_HASH_LEN], const uint8_t r[AUDIT_HASH_LEN],
                     uint8_t out[AUDIT_HASH_LEN]);

int64_t audit_now_us(void);
/* 8 bytes big-endian: the encoding's integers, the checkpoint message, PostgreSQL's int8. */
void audit_put_be64(void *out, uint64_t v);
uint64_t audit_get_be64(const void *in);
/* A record's stored size (its strings' bytes): a store refuses one over AUDIT_MAX_ROW with
 * this error before it touches the transaction, so the record fails alone. */
size_t audit_record_bytes(const audit_record *r);
cr_code audit_too_big(cr_error *err);

#endif
