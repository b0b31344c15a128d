/* audit/verify.c: recomputing the chain, and Ed25519 checkpoints over (seq, head hash). */
#include "audit/audit_int.h"

#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* ---- keys ---------------------------------------------------------------------------- */

/* Key files hold hex text, one line: the 64-byte libsodium secret key (seed and public key),
 * or the 32-byte public key in the ".pub" file. */
cr_code audit_key_read(const char *path, uint8_t *key, size_t n, cr_error *err)
{
    char text[512];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return cr_error_set(err, CR_EIO, 0, 0, "audit: key %s: %s", path, strerror(errno));
    ssize_t got = read(fd, text, sizeof text - 1);
    int e = errno;
    close(fd);
    if (got < 0) return cr_error_set(err, CR_EIO, 0, 0, "audit: key %s: %s", path, strerror(e));
    text[got] = '\0';
    size_t bin_len = 0;
    const char *end = NULL;
    if (sodium_hex2bin(key, n, text, (size_t)got, " \r\n\t", &bin_len, &end) != 0
        || bin_len != n || (end && *end))
        return cr_error_set(err, CR_EUSAGE, 0, 0,
                            "audit: key %s: expected %zu hex digits and nothing else", path,
                            2 * n);
    return CR_OK;
}

static cr_code key_write(const char *path, const uint8_t *key, size_t n, mode_t mode,
                         cr_error *err)
{
    char hex[2 * crypto_sign_SECRETKEYBYTES + 2];
    sodium_bin2hex(hex, sizeof hex, key, n);
    size_t len = strlen(hex);
    hex[len++] = '\n';
    /* O_EXCL: never overwrite a key that may already sign a ledger. */
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
    if (fd < 0) return cr_error_set(err, CR_EIO, 0, 0, "audit: create %s: %s", path, strerror(errno));
    cr_code rc = CR_OK;
    if (write(fd, hex, len) != (ssize_t)len || fsync(fd) != 0)
        rc = cr_error_set(err, CR_EIO, 0, 0, "audit: write %s: %s", path, strerror(errno));
    close(fd);
    sodium_memzero(hex, sizeof hex);
    return rc;
}

cr_code audit_keygen(const char *key_path, cr_error *err)
{
    uint8_t pk[crypto_sign_PUBLICKEYBYTES], sk[crypto_sign_SECRETKEYBYTES];
    char pub_path[4096];
    if (sodium_init() < 0) return cr_error_set(err, CR_EAUDIT, 0, 0, "audit: libsodium init");
    if ((size_t)snprintf(pub_path, sizeof pub_path, "%s.pub", key_path) >= sizeof pub_path)
        return cr_error_set(err, CR_EUSAGE, 0, 0, "audit: key path too long");
    crypto_sign_keypair(pk, sk);
    cr_code rc = key_write(key_path, sk, sizeof sk, 0600, err);
    if (rc == CR_OK && (rc = key_write(pub_path, pk, sizeof pk, 0644, err)) != CR_OK)
        unlink(key_path);
    sodium_memzero(sk, sizeof sk);
    return rc;
}

/* What a checkpoint signs: tag, seq, head hash and time, fixed widths, big-endian. */
#define CKPT_MSG_LEN (sizeof AUDIT_TAG_CHECKPOINT - 1 + 8 + AUDIT_HASH_LEN + 8)
static void ckpt_message(uint64_t seq, const uint8_t head[AUDIT_HASH_LEN], int64_t time_us,
                         unsigned char msg[CKPT_MSG_LEN])
{
    size_t tag = sizeof AUDIT_TAG_CHECKPOINT - 1;
    memcpy(msg, AUDIT_TAG_CHECKPOINT, tag);
    audit_put_be64(msg + tag, seq);
    memcpy(msg + tag + 8, head, AUDIT_HASH_LEN);
    audit_put_be64(msg + tag + 8 + AUDIT_HASH_LEN, (uint64_t)time_us);
}

cr_code audit_checkpoint(audit_db *db, const uint8_t sk[64], uint64_t *seq_out,
                         uint8_t head_out[AUDIT_HASH_LEN], cr_error *err)
{
    cr_code rc;
    uint64_t seq;
    uint8_t head[AUDIT_HASH_LEN], sig[crypto_sign_BYTES], pk[crypto_sign_PUBLICKEYBYTES];
    unsigned char msg[CKPT_MSG_LEN];
    if (db->readonly) return cr_error_set(err, CR_EUSAGE, 0, 0, "audit: ledger opened read-only");
    db->store->budget(db);
    crypto_sign_ed25519_sk_to_pk(pk, sk);
    /* The append lock: the head we sign is the head when the checkpoint lands. */
    if ((rc = db->store->begin(db, AUDIT_TX_APPEND, err)) != CR_OK) return rc;
    if ((rc = db->store->head(db, &seq, head, err)) != CR_OK) goto rollback;
    if (seq == 0) {
        rc = cr_error_set(err, CR_EUSAGE, 0, 0, "audit: the ledger is empty: nothing to sign");
        goto rollback;
    }
    int64_t now = audit_now_us();
    ckpt_message(seq, head, now, msg);
    crypto_sign_detached(sig, NULL, msg, sizeof msg, sk);
    audit_ckpt_row c = { .seq = (int64_t)seq, .time_us = now, .head = head,
                         .head_len = sizeof head, .pk = pk, .pk_len = sizeof pk, .sig = sig,
                         .sig_len = sizeof sig };
    if ((rc = db->store->ckpt_insert(db, &c, err)) != CR_OK) goto rollback;
    if ((rc = db->store->commit(db, err)) != CR_OK) goto rollback;
    if (seq_out) *seq_out = seq;
    if (head_out) memcpy(head_out, head, AUDIT_HASH_LEN);
    return CR_OK;
rollback:
    db->store->rollback(db);
    return rc;
}

/* ---- verify -------------------------------------------------------------------------- */

typedef struct {
    int64_t id, seq, time_us;
    uint8_t head[AUDIT_HASH_LEN], pk[crypto_sign_PUBLICKEYBYTES], sig[crypto_sign_BYTES];
} ckpt;

static int report_bad(cr_audit_report *rep, uint64_t seq, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int report_bad(cr_audit_report *rep, uint64_t seq, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(rep->problem, sizeof rep->problem, fmt, ap);
    va_end(ap);
    rep->ok = 0;
    rep->bad_seq = seq;
    return 0;
}

static int blob_into(const uint8_t *b, size_t len, uint8_t *out, size_t n)
{
    if (!b || len != n) return 0;
    memcpy(out, b, n);
    return 1;
}

/* Steps to the next checkpoint that counts: signed by `pubkey` when given, with a valid
 * signature. Returns 1 with *c filled, 0 at the end, -1 when the report says what failed. */
static int next_ckpt(audit_iter *st, const uint8_t *pubkey, ckpt *c, cr_audit_report *rep)
{
    for (;;) {
        audit_ckpt_row r;
        int s = audit_ckpt_next(st, &r, NULL);
        if (s == 0) return 0;
        if (s < 0) return report_bad(rep, 0, "reading checkpoints failed"), -1;
        c->id = r.id;
        c->seq = r.seq;
        c->time_us = r.time_us;
        if (!blob_into(r.head, r.head_len, c->head, sizeof c->head)
            || !blob_into(r.pk, r.pk_len, c->pk, sizeof c->pk)
            || !blob_into(r.sig, r.sig_len, c->sig, sizeof c->sig)) {
            report_bad(rep, 0, "checkpoint %lld is malformed", (long long)c->id);
            return -1;
        }
        if (pubkey && sodium_memcmp(pubkey, c->pk, sizeof c->pk) != 0) {
            rep->foreign_checkpoints++;
            continue;
        }
        unsigned char msg[CKPT_MSG_LEN];
        ckpt_message((uint64_t)c->seq, c->head, c->time_us, msg);
        if (crypto_sign_verify_detached(c->sig, msg, sizeof msg, c->pk) != 0) {
            report_bad(rep, (uint64_t)c->seq > 0 ? (uint64_t)c->seq : 0,
                       "checkpoint %lld: bad signature", (long long)c->id);
            return -1;
        }
        return 1;
    }
}

/* ---- the walk: reading and hashing side by side ------------------------------------------
 * Hashing is a quarter of a verify's work and reading the rows most of the rest, so they
 * overlap: this thread reads rows and encodes them into one batch while a hashing thread
 * chains the batch before (the chain is sequential, so one hasher), then this thread checks
 * the hashed batch in seq order, checkpoints alongside, and stops at the first failure. The
 * report is what a single pass gives. Without a thread (pthread_create failed), the batch is
 * hashed here. */

#define VBATCH 256

/* A row as the checks need it once the walk has moved on: what was stored, its encoding's
 * place in the batch, and the chain hash computed over it. */
typedef struct {
    uint64_t seq;
    int64_t format;
    uint8_t prev_hash[AUDIT_HASH_LEN], hash[AUDIT_HASH_LEN], computed[AUDIT_HASH_LEN];
    size_t prev_hash_len, hash_len, off, len;
    int enc_failed;
    char bad[sizeof ((audit_entry *)0)->bad];
} vrow;

typedef struct {
    vrow rows[VBATCH];
    size_t n;
    cr_buf enc;
    int state;             /* 0 free, 1 to hash, 2 hashed */
} vbatch;

typedef struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    vbatch b[2];
    int next, stop, threaded;
    uint8_t chain[AUDIT_HASH_LEN];   /* the hasher's: the last hash it computed */
    pthread_t th;
} vpipe;

static void hash_batch(vpipe *p, vbatch *b)
{
    for (size_t i = 0; i < b->n; i++) {
        vrow *r = &b->rows[i];
        if (r->enc_failed) continue;
        audit_chain_hash(p->chain, b->enc.p + r->off, r->len, r->computed);
        memcpy(p->chain, r->computed, AUDIT_HASH_LEN);
    }
}

static void *hasher(void *arg)
{
    vpipe *p = arg;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        vbatch *b = &p->b[p->next];
        while (!p->stop && b->state != 1) pthread_cond_wait(&p->cv, &p->mu);
        if (b->state != 1) break;
        pthread_mutex_unlock(&p->mu);
        hash_batch(p, b);
        pthread_mutex_lock(&p->mu);
        b->state = 2;
        p->next ^= 1;
        pthread_cond_broadcast(&p->cv);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

static void submit(vpipe *p, vbatch *b)
{
    if (!p->threaded) {
        hash_batch(p, b);
        b->state = 2;
        return;
    }
    pthread_mutex_lock(&p->mu);
    b->state = 1;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

static void await(vpipe *p, vbatch *b)
{
    if (!p->threaded) return;
    pthread_mutex_lock(&p->mu);
    while (b->state != 2) pthread_cond_wait(&p->cv, &p->mu);
    pthread_mutex_unlock(&p->mu);
}

/* Takes the row: copies what the checks compare and encodes the record at the end of enc. */
static void take_row(vrow *r, cr_buf *enc, const audit_entry *e)
{
    r->seq = e->seq;
    r->format = e->format;
    memcpy(r->prev_hash, e->prev_hash, AUDIT_HASH_LEN);
    memcpy(r->hash, e->hash, AUDIT_HASH_LEN);
    r->prev_hash_len = e->prev_hash_len;
    r->hash_len = e->hash_len;
    memcpy(r->bad, e->bad, sizeof r->bad);
    r->off = enc->len;
    r->enc_failed = audit_encode(&e->rec, e->seq, enc) != CR_OK;
    r->len = r->enc_failed ? 0 : enc->len - r->off;
}

/* A row's place in the chain: its seq is the one due and its prev_hash the hash of the row
 * before; 0 with the report filled when not. Plain memcmp: the hashes are public, nothing here
 * needs constant time. */
static int check_link(const vrow *e, uint64_t want_seq, const uint8_t prev[AUDIT_HASH_LEN],
                      cr_audit_report *rep)
{
    if ((int64_t)e->seq < (int64_t)want_seq)
        return report_bad(rep, want_seq, "gap: found seq %lld where seq %llu belongs",
                          (long long)(int64_t)e->seq, (unsigned long long)want_seq);
    if (e->seq > want_seq)
        return report_bad(rep, want_seq, "gap: seq %llu is missing (next is seq %llu)",
                          (unsigned long long)want_seq, (unsigned long long)e->seq);
    if (e->prev_hash_len != AUDIT_HASH_LEN || memcmp(e->prev_hash, prev, AUDIT_HASH_LEN))
        return report_bad(rep, e->seq, "bad prev link: prev_hash does not match seq %llu's hash",
                          (unsigned long long)(want_seq - 1));
    return 1;
}

/* The row itself: its columns, its format, and its stored hash against the one computed. */
static int check_body(const vrow *e, cr_audit_report *rep)
{
    char a[2 * AUDIT_HASH_LEN + 1], b[2 * AUDIT_HASH_LEN + 1];
    if (e->bad[0]) return report_bad(rep, e->seq, "%s", e->bad);
    if (e->format != AUDIT_FORMAT_VERSION)
        return report_bad(rep, e->seq, "hash mismatch: unknown format version %lld",
                          (long long)e->format);
    if (e->enc_failed) return report_bad(rep, e->seq, "out of memory encoding the record");
    if (e->hash_len != AUDIT_HASH_LEN || memcmp(e->hash, e->computed, AUDIT_HASH_LEN)) {
        audit_hex(e->hash, a);
        audit_hex(e->computed, b);
        return report_bad(rep, e->seq, "hash mismatch: stored %.16s..., computed %.16s...", a, b);
    }
    return 1;
}

/* Checks one row against the chain so far; 0 with the report filled when it breaks. */
static int check_row(const vrow *e, uint64_t want_seq, const uint8_t prev[AUDIT_HASH_LEN],
                     cr_audit_report *rep)
{
    return check_link(e, want_seq, prev, rep) && check_body(e, rep);
}

typedef struct {
    audit_iter *cst;
    const uint8_t *pubkey;
    ckpt c;
    int have;              /* next_ckpt()'s: 1 a checkpoint waits in c, 0 none left, -1 failed */
    uint64_t want;
    uint8_t prev[AUDIT_HASH_LEN];
} vcheck;

/* The checks of a hashed batch, in order: 0 when one failed (the report says which). */
static int check_batch(vcheck *k, vbatch *b, cr_audit_report *rep)
{
    for (size_t i = 0; i < b->n; i++) {
        const vrow *e = &b->rows[i];
        if (!check_row(e, k->want, k->prev, rep)) return 0;
        memcpy(k->prev, e->computed, AUDIT_HASH_LEN);
        rep->records++;
        rep->head_seq = e->seq;
        k->want++;
        for (; k->have == 1 && k->c.seq <= (int64_t)e->seq;
             k->have = next_ckpt(k->cst, k->pubkey, &k->c, rep)) {
            if (k->c.seq < (int64_t)e->seq || memcmp(k->c.head, e->computed, AUDIT_HASH_LEN)) {
                report_bad(rep, (uint64_t)k->c.seq,
                           "checkpoint %lld: the chain at seq %lld differs from the signed head"
                           " (rewritten)", (long long)k->c.id, (long long)k->c.seq);
                return 0;
            }
            rep->checkpoints++;
            rep->checkpoint_seq = (uint64_t)k->c.seq;
        }
        if (k->have < 0) return 0;
    }
    return 1;
}

/* A checked batch, free to fill again. */
static void release(vpipe *p, vbatch *b)
{
    b->n = 0;
    cr_buf_reset(&b->enc);
    pthread_mutex_lock(&p->mu);
    b->state = 0;
    pthread_mutex_unlock(&p->mu);
}

/* After the last record: a checkpoint still waiting signs more than the chain holds. */
static void ckpt_end(const vcheck *k, cr_audit_report *rep)
{
    if (k->have == 1)
        report_bad(rep, (uint64_t)k->c.seq, "checkpoint %lld signs seq %lld but the chain ends at"
                   " seq %llu (truncated)", (long long)k->c.id, (long long)k->c.seq,
                   (unsigned long long)rep->head_seq);
    else if (k->pubkey && rep->checkpoints == 0)
        report_bad(rep, 0, "no checkpoint signed by this key");
}

/* One walk through the caller's handle, reading beside hashing (above). */
static cr_code verify_walk(audit_db *db, vcheck *k, cr_audit_report *rep, cr_error *err)
{
    cr_code rc;
    audit_iter *it = NULL;
    audit_entry e;
    vpipe *p = calloc(1, sizeof *p);
    if (!p) return cr_error_set(err, CR_ENOMEM, 0, 0, "audit: verify");
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    cr_buf_init(&p->b[0].enc, 0);
    cr_buf_init(&p->b[1].enc, 0);
    if ((rc = audit_iter_open(db, 0, 0, &it, err)) != CR_OK) goto free;
    /* Checkpoints in seq order, walked alongside the records. */
    if ((rc = audit_ckpt_open(db, &k->cst, err)) != CR_OK) goto out;
    k->have = next_ckpt(k->cst, k->pubkey, &k->c, rep);
    p->threaded = k->have >= 0 && pthread_create(&p->th, NULL, hasher, p) == 0;
    int s = 0, cur = 0, ok = k->have >= 0;
    while (ok) {
        vbatch *b = &p->b[cur], *other = &p->b[cur ^ 1];
        while (b->n < VBATCH && (s = audit_iter_next(it, &e, err)) == 1)
            take_row(&b->rows[b->n++], &b->enc, &e);
        if (b->n) submit(p, b);
        /* the batch before this one is hashed by now or soon: its checks come first */
        if (other->n) {
            await(p, other);
            if ((ok = check_batch(k, other, rep))) release(p, other);
        }
        if (!b->n || s != 1) {
            if (ok && b->n) {
                await(p, b);
                ok = check_batch(k, b, rep);
            }
            break;
        }
        cur ^= 1;
    }
    if (!ok) goto out;   /* the report says what failed */
    if (s < 0) {
        rc = err ? err->code : CR_EAUDIT;
        goto out;
    }
    ckpt_end(k, rep);
out:
    if (p->threaded) {
        pthread_mutex_lock(&p->mu);
        p->stop = 1;
        pthread_cond_broadcast(&p->cv);
        pthread_mutex_unlock(&p->mu);
        pthread_join(p->th, NULL);
    }
    audit_iter_close(it);
free:
    cr_buf_free(&p->b[0].enc);
    cr_buf_free(&p->b[1].enc);
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->mu);
    free(p);
    return rc;
}

/* ---- ranges side by side -------------------------------------------------------------------
 * One reader is as fast as the store reads, so a large ledger is cut into seq ranges, each
 * read, encoded and hashed by its own thread through its own handle. Each row is hashed over
 * its own stored prev_hash; its link (seq due, prev_hash equal to the hash of the row before)
 * is checked within the range, and for a range's first row when the ranges are joined. Where
 * every row before passed, that is the single pass's check: the first failure, its report and
 * the counts are the same. The ranges end at the last seq the caller's snapshot holds, and the
 * ledger is append-only, so later snapshots of the other handles hold the same rows. The
 * checkpoints are checked afterwards, as the single pass meets them: a passing row's stored
 * hash is its computed one. */

#define VRANGES_MAX 8
uint64_t audit_verify_range_min = 32768;
int audit_verify_ranges;

typedef struct {
    audit_db *db;            /* the caller's handle, or own (then with its own read snapshot) */
    int64_t from, to;        /* from 0: no lower bound (a tampered seq can be negative) */
    int own, linked;         /* linked: the first row's link is checked here (the first range) */
    int retry;               /* own handle could not start: read through the caller's instead */
    pthread_t th;
    int threaded;
    /* what the walk found */
    vrow first;              /* the first row, its link left to the join */
    int has_first, failed, s;
    uint64_t passed, last_seq;
    uint8_t last[AUDIT_HASH_LEN];
    cr_error err;            /* s < 0: the read error */
    cr_audit_report rep;     /* failed: its first failure */
} vrange;

static void range_walk(vrange *r)
{
    audit_iter *it = NULL;
    audit_entry e;
    cr_buf enc;
    vrow v;
    uint64_t want = 1;
    uint8_t prev[AUDIT_HASH_LEN] = {0};
    int began = 0;
    cr_buf_init(&enc, 0);
    if (r->own) {
        r->db->store->budget(r->db);
        began = r->db->store->begin(r->db, AUDIT_TX_READ, &r->err) == CR_OK;
    }
    if ((r->own && !began) ||
        audit_iter_open(r->db, (uint64_t)r->from, (uint64_t)r->to, &it, &r->err) != CR_OK) {
        r->s = -1;
        r->retry = r->own;
        goto out;
    }
    while ((r->s = audit_iter_next(it, &e, &r->err)) == 1) {
        cr_buf_reset(&enc);
        take_row(&v, &enc, &e);
        if (!v.enc_failed) audit_chain_hash(v.prev_hash, enc.p, v.len, v.computed);
        int ok;
        if (r->passed == 0 && !r->linked) {
            r->first = v;
            r->has_first = 1;
            ok = check_body(&v, &r->rep);
        } else {
            ok = check_row(&v, want, prev, &r->rep);
        }
        if (!ok) {
            r->failed = 1;
            break;
        }
        r->passed++;
        r->last_seq = v.seq;
        want = v.seq + 1;
        memcpy(prev, v.computed, AUDIT_HASH_LEN);
    }
    memcpy(r->last, prev, AUDIT_HASH_LEN);
out:
    audit_iter_close(it);
    if (began) r->db->store->commit(r->db, NULL);
    cr_buf_free(&enc);
}

static void *range_thread(void *arg)
{
    range_walk(arg);
    return NULL;
}

static void report_copy(cr_audit_report *rep, const cr_audit_report *from)
{
    rep->ok = 0;
    rep->bad_seq = from->bad_seq;
    memcpy(rep->problem, from->problem, sizeof rep->problem);
}

/* The stored hash of record seq, a record verified already. */
static cr_code hash_at(audit_db *db, uint64_t seq, uint8_t out[AUDIT_HASH_LEN], cr_error *err)
{
    audit_iter *it = NULL;
    audit_entry e;
    cr_code rc = audit_iter_open(db, seq, seq, &it, err);
    if (rc != CR_OK) return rc;
    int s = audit_iter_next(it, &e, err);
    if (s == 1) memcpy(out, e.hash, AUDIT_HASH_LEN);
    audit_iter_close(it);
    if (s < 0) return err ? err->code : CR_EAUDIT;
    if (s == 0)
        return cr_error_set(err, CR_EAUDIT, 0, 0, "audit: verify: seq %llu went missing",
                            (unsigned long long)seq);
    return CR_OK;
}

static cr_code verify_ranges(audit_db *db, int nr, int64_t last, vcheck *k,
                             cr_audit_report *rep, cr_error *err)
{
    cr_code rc;
    vrange *r = calloc((size_t)nr, sizeof *r);
    if (!r) return cr_error_set(err, CR_ENOMEM, 0, 0, "audit: verify");
    if ((rc = audit_ckpt_open(db, &k->cst, err)) != CR_OK) goto free;
    if ((k->have = next_ckpt(k->cst, k->pubkey, &k->c, rep)) < 0) goto free;
    uint64_t step = (uint64_t)last / (uint64_t)nr;
    for (int i = 0; i < nr; i++) {
        r[i].db = db;
        r[i].linked = i == 0;
        r[i].from = i ? (int64_t)(step * (uint64_t)i) + 1 : 0;
        r[i].to = i + 1 < nr ? (int64_t)(step * (uint64_t)(i + 1)) : last;
        if (i && audit_open_beside(db, &r[i].db, NULL) == CR_OK) {
            r[i].own = 1;
            r[i].threaded = pthread_create(&r[i].th, NULL, range_thread, &r[i]) == 0;
        } else if (i) {
            r[i].db = db;   /* no handle: read after the first range, through this one */
        }
    }
    range_walk(&r[0]);
    for (int i = 1; i < nr; i++) {
        if (r[i].threaded) pthread_join(r[i].th, NULL);
        else range_walk(&r[i]);
        if (r[i].retry) {
            audit_close(r[i].db);
            vrange again = { .db = db, .from = r[i].from, .to = r[i].to };
            r[i] = again;
            range_walk(&r[i]);
        }
    }
    /* Join the ranges in order: the first failure (or read error) ends the chain there. */
    uint64_t want = 1, passed = 0;
    uint8_t prev[AUDIT_HASH_LEN] = {0};
    const vrange *end = NULL;
    cr_audit_report link = {0};
    int link_failed = 0;
    for (int i = 0; i < nr && !end; i++) {
        const vrange *x = &r[i];
        if (x->has_first && !x->linked && !check_link(&x->first, want, prev, &link)) {
            link_failed = 1;
            break;
        }
        passed += x->passed;
        if (x->passed) {
            want = x->last_seq + 1;
            memcpy(prev, x->last, AUDIT_HASH_LEN);
        }
        if (x->failed || x->s < 0) end = x;
    }
    /* Records 1..passed passed, in order; a checkpoint is met at the first of them at or
     * after its seq. */
    while (k->have == 1 && passed && k->c.seq <= (int64_t)passed) {
        uint64_t at = k->c.seq < 1 ? 1 : (uint64_t)k->c.seq;
        if ((rc = hash_at(db, at, k->prev, err)) != CR_OK) goto free;
        rep->records = rep->head_seq = at;
        if (k->c.seq < (int64_t)at || memcmp(k->c.head, k->prev, AUDIT_HASH_LEN)) {
            report_bad(rep, (uint64_t)k->c.seq, "checkpoint %lld: the chain at seq %lld differs"
                       " from the signed head (rewritten)", (long long)k->c.id,
                       (long long)k->c.seq);
            goto free;
        }
        rep->checkpoints++;
        rep->checkpoint_seq = (uint64_t)k->c.seq;
        if ((k->have = next_ckpt(k->cst, k->pubkey, &k->c, rep)) < 0) goto free;
    }
    rep->records = rep->head_seq = passed;
    memcpy(k->prev, prev, AUDIT_HASH_LEN);
    if (link_failed) {
        report_copy(rep, &link);
    } else if (end && end->failed) {
        report_copy(rep, &end->rep);
    } else if (end) {
        rc = end->err.code ? end->err.code : CR_EAUDIT;
        if (err) *err = end->err;
    } else {
        ckpt_end(k, rep);
    }
free:
    for (int i = 1; i < nr; i++)
        if (r[i].own) audit_close(r[i].db);
    free(r);
    return rc;
}

cr_code audit_verify(audit_db *db, const uint8_t *pubkey, cr_audit_report *rep, cr_error *err)
{
    cr_code rc;
    vcheck k = { .pubkey = pubkey, .want = 1 };
    memset(rep, 0, sizeof *rep);
    rep->ok = 1;
    db->store->budget(db);
    /* One read transaction: a snapshot, however many appenders run meanwhile. */
    if ((rc = db->store->begin(db, AUDIT_TX_READ, err)) != CR_OK) return rc;
    int64_t last = 0;
    int nr = 1;
    if (db->store->last_seq) {
        if ((rc = db->store->last_seq(db, &last, err)) != CR_OK) goto out;
        long cpus = audit_verify_ranges ? audit_verify_ranges : sysconf(_SC_NPROCESSORS_ONLN);
        uint64_t min = audit_verify_range_min ? audit_verify_range_min : 1;
        uint64_t most = last > 0 ? (uint64_t)last / min : 0;
        nr = cpus < 1 ? 1 : cpus > VRANGES_MAX ? VRANGES_MAX : (int)cpus;
        if ((uint64_t)nr > most) nr = (int)most;
    }
    rc = nr >= 2 ? verify_ranges(db, nr, last, &k, rep, err) : verify_walk(db, &k, rep, err);
out:
    audit_hex(k.prev, rep->head_hash);
    audit_iter_close(k.cst);
    db->store->commit(db, NULL);
    return rc;
}
