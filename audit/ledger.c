/* audit/ledger.c: the ledger above its store: opening, the canonical encoding and the chain,
 * durable appends (group commit), the head, iteration. Where the rows live is the store's
 * (audit/sqlite.c, audit/pg.c). */
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

int64_t audit_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
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

/* A PostgreSQL URI names the PostgreSQL store; anything else is a SQLite file's path. */
static const audit_store *store_for(const char *where)
{
    if (!strncmp(where, "postgresql://", 13) || !strncmp(where, "postgres://", 11))
        return &audit_store_pg;
    return &audit_store_sqlite;
}

static cr_code open_db(const char *path, int flags, const audit_db *beside, audit_db **out,
                       cr_error *err)
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
    db->store = store_for(path);
    if (!(db->where = strdup(path))) {
        rc = cr_error_set(err, CR_ENOMEM, 0, 0, "audit: ledger handle");
        goto fail;
    }
    db->beside = beside;
    rc = db->store->open(db, path, flags, err);
    db->beside = NULL;
    if (rc != CR_OK) goto fail;
    if (!db->readonly && (rc = check_head(db, err)) != CR_OK) goto fail;
    *out = db;
    return CR_OK;
fail:
    audit_close(db);
    return rc;
}

cr_code audit_open(const char *path, int flags, audit_db **out, cr_error *err)
{
    return open_db(path, flags, NULL, out, err);
}

cr_code audit_open_beside(audit_db *db, audit_db **out, cr_error *err)
{
    return open_db(db->where, AUDIT_OPEN_READONLY, db, out, err);
}

void audit_close(audit_db *db)
{
    if (!db) return;
    db->store->close(db);
    free(db->where);
    pthread_cond_destroy(&db->cv);
    pthread_mutex_destroy(&db->mu);
    free(db);
}

/* ---- canonical encoding -------------------------------------------------------------- */

void audit_put_be64(void *out, uint64_t v)
{
    unsigned char *p = out;
    for (int i = 7; i >= 0; i--, v >>= 8) p[i] = (unsigned char)v;
}

uint64_t audit_get_be64(const void *in)
{
    const unsigned char *p = in;
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v = v << 8 | p[i];
    return v;
}

/* Each field: a kind byte, then for bytes an 8-byte big-endian length and the bytes, for an
 * integer its 8 bytes big-endian two's complement. Absent and empty differ by kind. The size
 * is summed first and the buffer grown once: verify encodes every record. */
enum { ENC_ABSENT = 0, ENC_BYTES = 1, ENC_INT = 2 };

static unsigned char *enc_bytes(unsigned char *p, const char *s, size_t len)
{
    if (!s) {
        *p = ENC_ABSENT;
        return p + 1;
    }
    *p = ENC_BYTES;
    audit_put_be64(p + 1, len);
    if (len) memcpy(p + 9, s, len);
    return p + 9 + len;
}

static unsigned char *enc_int(unsigned char *p, int64_t v)
{
    *p = ENC_INT;
    audit_put_be64(p + 1, (uint64_t)v);
    return p + 9;
}

cr_code audit_encode(const audit_record *r, uint64_t seq, cr_buf *out)
{
    size_t n = 16;
#define S(f) n += r->f ? 9 + r->f##_len : 1;
#define I(f) n += 9;
    AUDIT_FIELDS(S, I)
#undef S
#undef I
    unsigned char *p = (unsigned char *)cr_buf_extend(out, n);
    if (!p) return CR_ENOMEM;
    /* format version (4 bytes), seq (8), field count (4), all big-endian */
    audit_put_be64(p, ((uint64_t)AUDIT_FORMAT_VERSION << 32) | (seq >> 32));
    audit_put_be64(p + 8, (seq << 32) | AUDIT_NFIELDS);
    p += 16;
#define S(f) p = enc_bytes(p, r->f, r->f##_len);
#define I(f) p = enc_int(p, r->f);
    AUDIT_FIELDS(S, I)
#undef S
#undef I
    return CR_OK;
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

size_t audit_record_bytes(const audit_record *r)
{
    size_t n = 0;
#define S(f) n += r->f##_len;
#define I(f) n += sizeof r->f;
    AUDIT_FIELDS(S, I)
#undef S
#undef I
    return n;
}

cr_code audit_too_big(cr_error *err)
{
    return cr_error_set(err, CR_EAUDIT, 0, 0, "audit: the record is larger than %d MiB,"
                        " the ledger's limit for a row", AUDIT_MAX_ROW >> 20);
}

/* r's time (now, when it has none), its encoding at seq in enc and its chain hash after prev:
 * what a record is stored with. CR_ENOMEM only. */
static cr_code record_hash(audit_record *r, uint64_t seq, const uint8_t prev[AUDIT_HASH_LEN],
                           cr_buf *enc, uint8_t hash[AUDIT_HASH_LEN])
{
    if (r->time_us == 0) r->time_us = audit_now_us();
    cr_buf_reset(enc);
    if (audit_encode(r, seq, enc) != CR_OK) return CR_ENOMEM;
    audit_chain_hash(prev, enc->p, enc->len, hash);
    return CR_OK;
}

/* Encodes, chains and stores one record as seq; prev becomes its hash. */
static cr_code insert_one(audit_db *db, const audit_record *rec, uint64_t seq,
                          uint8_t prev[AUDIT_HASH_LEN], cr_buf *enc, cr_error *err)
{
    audit_record r = *rec;
    uint8_t hash[AUDIT_HASH_LEN];
    if (record_hash(&r, seq, prev, enc, hash) != CR_OK)
        return cr_error_set(err, CR_ENOMEM, 0, 0, "audit: record encoding");
    cr_code rc = db->store->insert(db, seq, &r, prev, hash, err);
    if (rc == CR_OK) memcpy(prev, hash, AUDIT_HASH_LEN);
    return rc;
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

/* ---- a batch: hashing ahead --------------------------------------------------------------
 * Encoding and chaining are a sixth of a batched append's work and need nothing from the
 * store, so a helper thread does them ahead of the inserts, on another core, and soon runs
 * thousands of records ahead. The chain is sequential: one record at a time is being hashed,
 * by whichever thread claimed it; until the helper runs (on a loaded machine a new thread may
 * wait a while for a core) the inserting thread hashes the records it needs itself. The
 * records go in as hashed, in order, each with the time it was hashed with. */

#define AHEAD 4096      /* records hashed and not yet stored, at most */
#define AHEAD_MIN 64    /* a batch this long or longer is worth a thread */

typedef struct {
    const audit_record *recs;
    size_t n;
    uint64_t seq;                          /* the first record's */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    uint8_t prev[AUDIT_HASH_LEN];          /* the last hash computed: record hashed - 1's */
    uint8_t hash[AHEAD][AUDIT_HASH_LEN];   /* record k's in slot k % AHEAD */
    int64_t time_us[AHEAD];
    size_t claimed, hashed, stored;        /* records claimed for hashing, hashed, stored */
    int stop, failed;                      /* failed: out of memory encoding a record */
    int started;                           /* the helper runs */
    int helper_waits, inserter_waits;      /* woken only when they sleep */
} ahead;

/* Hashes the record claimed as k (called and returning with the lock held, dropped while
 * hashing). */
static void hash_claimed(ahead *a, size_t k, cr_buf *enc)
{
    uint8_t prev[AUDIT_HASH_LEN], h[AUDIT_HASH_LEN];
    memcpy(prev, a->prev, AUDIT_HASH_LEN);
    pthread_mutex_unlock(&a->mu);
    audit_record r = a->recs[k];
    int failed = record_hash(&r, a->seq + k, prev, enc, h) != CR_OK;
    pthread_mutex_lock(&a->mu);
    if (failed) {
        a->failed = 1;
    } else {
        memcpy(a->prev, h, AUDIT_HASH_LEN);
        memcpy(a->hash[k % AHEAD], h, AUDIT_HASH_LEN);
        a->time_us[k % AHEAD] = r.time_us;
        a->hashed = k + 1;
    }
    if (a->helper_waits || a->inserter_waits) pthread_cond_broadcast(&a->cv);
}

static void *hash_ahead(void *arg)
{
    ahead *a = arg;
    cr_buf enc;
    cr_buf_init(&enc, 0);
    pthread_mutex_lock(&a->mu);
    a->started = 1;
    while (!a->stop && !a->failed && a->claimed < a->n) {
        /* the record before is still being hashed (by the inserter), or no room is left */
        if (a->claimed != a->hashed || a->claimed - a->stored >= AHEAD) {
            a->helper_waits = 1;
            pthread_cond_wait(&a->cv, &a->mu);
            a->helper_waits = 0;
            continue;
        }
        hash_claimed(a, a->claimed++, &enc);
    }
    pthread_mutex_unlock(&a->mu);
    cr_buf_free(&enc);
    return NULL;
}

/* Stores recs[0..n) as seq + 0.. while a thread hashes them ahead; prev is the head's hash
 * before and the last record's after. *ran 0: no thread could start, nothing was done. */
static cr_code insert_ahead(audit_db *db, const audit_record *recs, size_t n, uint64_t seq,
                            uint8_t prev[AUDIT_HASH_LEN], int *ran, cr_error *err)
{
    cr_code rc = CR_OK;
    pthread_t th;
    cr_buf enc;
    ahead *a = malloc(sizeof *a);
    *ran = 0;
    if (!a) return CR_OK;
    *a = (ahead){ .recs = recs, .n = n, .seq = seq };
    memcpy(a->prev, prev, AUDIT_HASH_LEN);
    pthread_mutex_init(&a->mu, NULL);
    pthread_cond_init(&a->cv, NULL);
    cr_buf_init(&enc, 0);
    if (pthread_create(&th, NULL, hash_ahead, a) != 0) goto free;
    *ran = 1;
    for (size_t k = 0; k < n; k++) {
        uint8_t hash[AUDIT_HASH_LEN];
        audit_record r = recs[k];
        pthread_mutex_lock(&a->mu);
        while (a->hashed <= k && !a->failed) {
            if (!a->started && a->claimed == a->hashed) {
                hash_claimed(a, a->claimed++, &enc);
                continue;
            }
            a->inserter_waits = 1;
            pthread_cond_wait(&a->cv, &a->mu);
            a->inserter_waits = 0;
        }
        int failed = a->hashed <= k;
        if (!failed) {
            memcpy(hash, a->hash[k % AHEAD], AUDIT_HASH_LEN);
            r.time_us = a->time_us[k % AHEAD];
        }
        pthread_mutex_unlock(&a->mu);
        if (failed) {
            rc = cr_error_set(err, CR_ENOMEM, 0, 0, "audit: record encoding");
            break;
        }
        if ((rc = db->store->insert(db, seq + k, &r, prev, hash, err)) != CR_OK) break;
        memcpy(prev, hash, AUDIT_HASH_LEN);
        pthread_mutex_lock(&a->mu);
        a->stored = k + 1;
        if (a->helper_waits && a->claimed - a->stored < AHEAD / 2) pthread_cond_broadcast(&a->cv);
        pthread_mutex_unlock(&a->mu);
    }
    pthread_mutex_lock(&a->mu);
    a->stop = 1;
    pthread_cond_broadcast(&a->cv);
    pthread_mutex_unlock(&a->mu);
    pthread_join(th, NULL);
free:
    cr_buf_free(&enc);
    pthread_cond_destroy(&a->cv);
    pthread_mutex_destroy(&a->mu);
    free(a);
    return rc;
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
    db->store->budget(db);
    if ((rc = db->store->begin(db, AUDIT_TX_APPEND, err)) != CR_OK) goto out;
    if ((rc = db->store->head(db, &seq, prev, err)) != CR_OK) goto rollback;
    if (first_seq) *first_seq = seq + 1;
    int ran = 0;
    if (n >= AHEAD_MIN) rc = insert_ahead(db, recs, n, seq + 1, prev, &ran, err);
    for (size_t k = 0; !ran && k < n; k++)
        if ((rc = insert_one(db, &recs[k], seq + 1 + k, prev, &enc, err)) != CR_OK) break;
    if (rc != CR_OK) goto rollback;
    if ((rc = db->store->commit(db, err)) != CR_OK) goto rollback;
    db->commits++;
    if (last_hash) memcpy(last_hash, prev, AUDIT_HASH_LEN);
    goto out;
rollback:
    db->store->rollback(db);
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
    db->store->budget(db);
    if ((rc = db->store->begin(db, AUDIT_TX_APPEND, &err)) != CR_OK) {
        group_fail(group, rc, &err);
        goto out;
    }
    if ((rc = db->store->head(db, &seq, prev, &err)) != CR_OK) goto rollback;
    for (audit_waiter *w = group; w; w = w->next) {
        w->rc = insert_one(db, w->rec, seq + 1, prev, &enc, &w->err);
        if (w->rc == CR_OK) {
            w->seq = ++seq;
            memcpy(w->hash, prev, AUDIT_HASH_LEN);
        } else if (!db->store->txn_alive(db)) {
            rc = w->rc;
            err = w->err;
            goto rollback;
        }
    }
    if ((rc = db->store->commit(db, &err)) == CR_OK) {
        db->commits++;
        goto out;
    }
rollback:
    db->store->rollback(db);
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
    /* Between commits: on a handle shared with appending threads (an engine's, asked by a
     * readiness probe) the connection is the committing thread's while one is under way. */
    commit_begin(db);
    db->store->budget(db);
    /* A read transaction so seq and hash come from the same snapshot. */
    if ((rc = db->store->begin(db, AUDIT_TX_READ, err)) == CR_OK) {
        rc = db->store->head(db, seq, hash, err);
        db->store->commit(db, NULL);
    }
    commit_end(db);
    return rc;
}

/* ---- iteration ----------------------------------------------------------------------- */

static cr_code walk_new(audit_db *db, audit_iter **out, cr_error *err)
{
    *out = calloc(1, sizeof **out);
    if (!*out) return cr_error_set(err, CR_ENOMEM, 0, 0, "audit: iterator");
    (*out)->db = db;
    db->store->budget(db);
    return CR_OK;
}

static cr_code walk_opened(audit_iter **out, cr_code rc)
{
    if (rc != CR_OK) {
        free(*out);
        *out = NULL;
    }
    return rc;
}

cr_code audit_iter_open(audit_db *db, uint64_t from, uint64_t to, audit_iter **out,
                        cr_error *err)
{
    cr_code rc = walk_new(db, out, err);
    if (rc != CR_OK) return rc;
    /* Bounds as signed: a tampered seq can be negative, and verify must see it. */
    return walk_opened(out, db->store->iter_open(*out, from ? (int64_t)from : INT64_MIN,
                                                 to ? (int64_t)to : INT64_MAX, err));
}

int audit_iter_next(audit_iter *it, audit_entry *e, cr_error *err)
{
    return it->db->store->iter_next(it, e, err);
}

void audit_iter_close(audit_iter *it)
{
    if (!it) return;
    if (it->state) it->db->store->iter_close(it);
    free(it);
}

cr_code audit_ckpt_open(audit_db *db, audit_iter **out, cr_error *err)
{
    cr_code rc = walk_new(db, out, err);
    if (rc != CR_OK) return rc;
    return walk_opened(out, db->store->ckpt_open(*out, err));
}

int audit_ckpt_next(audit_iter *it, audit_ckpt_row *c, cr_error *err)
{
    return it->db->store->ckpt_next(it, c, err);
}
