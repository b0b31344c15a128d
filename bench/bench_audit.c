/* bench/bench_audit.c: the audit ledger beside plain SQLite.
 *
 *   bench_audit DIR [DURABLE [BATCHED [VERIFY [RUNS]]]]
 *
 * Durable appends (one transaction per record, synchronous=FULL), the same from 16 threads
 * at once (4 x DURABLE records: the ledger's group commit against plain SQLite's connections
 * taking turns) and as whole audited answers (16 threads' cr_run on one engine), batched
 * appends (1000 per transaction), and verify over VERIFY records (default 1,000,000; these two
 * RUNS times in turns with their peers, default 3); the peer writes the same
 * rows with the same pragmas into a plain table with no hashing and no triggers, and its
 * "verify" reads every row and column without hashing. Files go under DIR and are removed.
 * With BENCH_AUDIT_PG set to a PostgreSQL database's URI (bench/run-audit.sh starts a
 * throwaway server), the same rows again on PostgreSQL: the ledger's PostgreSQL store beside
 * plain inserts into a table of the same columns (synchronous_commit=on, binary parameters,
 * no hashing), and verify beside a cursor reading every row. The ledger's tables there are
 * dropped before each run. Figures only: nothing here passes or fails on time. */
#include <libpq-fe.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "audit/audit_int.h"   /* AUDIT_FIELDS: the peer binds the same columns */

#define BATCH 1000

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* A typical in-process record: a short finance program, bindings, policy, value. */
static void sample(audit_record *r, char *id, size_t idsz, long i)
{
    memset(r, 0, sizeof *r);
    snprintf(id, idsz, "%032lx", i);
    AUDIT_SET(r, request_id, id);
    r->time_us = 1700000000000000LL + i;
    AUDIT_SET(r, engine_version, "0.1.0");
    AUDIT_SET(r, grammar_version, "tree-sitter-python 0.23.6 (ABI 14)");
    AUDIT_SET(r, lang, "python");
    AUDIT_SET(r, code, "revenue_2019 = 5829\nrevenue_2018 = 5735\n"
                       "change = revenue_2019 - revenue_2018\nans = change / revenue_2018\n"
                       "print(f\"{ans:.2%}\")\n");
    AUDIT_SET(r, bindings, "{\"revenue_2019\":5829,\"revenue_2018\":5735}");
    AUDIT_SET(r, policy, "{\"precision\":34,\"rounding\":\"half-even\",\"answer_vars\":"
                         "\"ans,result,answer\",\"tier\":\"auto\",\"timeout_s\":10.0,"
                         "\"memory_mib\":512}");
    AUDIT_SET(r, route, "inprocess");
    AUDIT_SET(r, reasons, "[]");
    AUDIT_SET(r, value_fraction, "47/2867");
    AUDIT_SET(r, value_repr, "0.016393442622950820");
    AUDIT_SET(r, value_type, "float");
    r->value_exact = 1;
    AUDIT_SET(r, out, "1.64%\n");
    AUDIT_SET(r, err_out, "");
    AUDIT_SET(r, artifacts, "[]");
    AUDIT_SET(r, timings, "{\"parse_us\":41.0,\"eval_us\":12.5,\"total_us\":60.2}");
}

/* ---- the peer: the same rows in plain SQLite ------------------------------------------- */

typedef struct {
    sqlite3 *db;
    sqlite3_stmt *ins;
} plain;

static int plain_open(plain *p, const char *path)
{
    memset(p, 0, sizeof *p);
    if (sqlite3_open(path, &p->db) != SQLITE_OK) return 0;
    sqlite3_busy_timeout(p->db, 60000);   /* connections of concurrent threads take turns */
    return sqlite3_exec(p->db,
        "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;"
        "CREATE TABLE IF NOT EXISTS records(seq INTEGER PRIMARY KEY, request_id TEXT,"
        " time_us INTEGER, engine_version TEXT, grammar_version TEXT, lang TEXT, code TEXT,"
        " bindings TEXT, tables TEXT, policy TEXT, route TEXT, reasons TEXT, status INTEGER,"
        " value_fraction TEXT, value_repr TEXT, value_type TEXT, value_exact INTEGER,"
        " stdout TEXT, stderr TEXT, error TEXT, artifacts TEXT, timings TEXT)",
        NULL, NULL, NULL) == SQLITE_OK
        && sqlite3_prepare_v2(p->db, "INSERT INTO records VALUES(NULL,?,?,?,?,?,?,?,?,?,?,?,?,"
                              "?,?,?,?,?,?,?,?,?)", -1, &p->ins, NULL) == SQLITE_OK;
}

static void bind_str(sqlite3_stmt *st, int i, const char *s, size_t len)
{
    if (s) sqlite3_bind_text64(st, i, s, len, SQLITE_STATIC, SQLITE_UTF8);
    else sqlite3_bind_null(st, i);
}

static int plain_insert(plain *p, const audit_record *r)
{
    sqlite3_stmt *st = p->ins;
    int i = 1;
#define S(f) bind_str(st, i++, r->f, r->f##_len);
#define I(f) sqlite3_bind_int64(st, i++, r->f);
    AUDIT_FIELDS(S, I)
#undef S
#undef I
    int ok = sqlite3_step(st) == SQLITE_DONE;
    sqlite3_reset(st);
    return ok;
}

static double plain_run(const char *path, long n, int per_txn)
{
    plain p;
    char id[40];
    audit_record r;
    unlink(path);
    if (!plain_open(&p, path)) return -1;
    double t0 = now_s();
    for (long i = 0; i < n; i += per_txn) {
        sqlite3_exec(p.db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
        for (long k = i; k < i + per_txn && k < n; k++) {
            sample(&r, id, sizeof id, k);
            if (!plain_insert(&p, &r)) return -1;
        }
        if (sqlite3_exec(p.db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) return -1;
    }
    double dt = now_s() - t0;
    sqlite3_finalize(p.ins);
    sqlite3_close(p.db);
    return (double)n / dt;
}

/* Reads every column of every row, which is what verify must do before hashing. */
static double plain_scan(const char *path, long *rows)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    size_t bytes = 0;
    *rows = 0;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) return -1;
    sqlite3_prepare_v2(db, "SELECT * FROM records ORDER BY seq", -1, &st, NULL);
    double t0 = now_s();
    while (sqlite3_step(st) == SQLITE_ROW) {
        for (int c = 0; c < sqlite3_column_count(st); c++) {
            sqlite3_column_blob(st, c);
            bytes += (size_t)sqlite3_column_bytes(st, c);
        }
        (*rows)++;
    }
    double dt = now_s() - t0;
    sqlite3_finalize(st);
    sqlite3_close(db);
    return bytes ? (double)*rows / dt : -1;
}

/* ---- the ledger ------------------------------------------------------------------------ */

static int is_pg(const char *where)
{
    return !strncmp(where, "postgresql://", 13);
}

static void pg_drop(const char *uri, int ledger);

/* An empty place for a ledger: no file, or no ledger tables. */
static void fresh(const char *where)
{
    if (is_pg(where)) pg_drop(where, 1);
    else unlink(where);
}

static double ledger_run(const char *path, long n, int per_txn)
{
    audit_db *db = NULL;
    cr_error err = {0};
    audit_record *recs = calloc((size_t)per_txn, sizeof *recs);
    char (*ids)[40] = calloc((size_t)per_txn, sizeof *ids);
    double rate = -1;
    fresh(path);
    if (!recs || !ids || audit_open(path, AUDIT_OPEN_CREATE, &db, &err) != CR_OK) goto out;
    double t0 = now_s();
    for (long i = 0; i < n; i += per_txn) {
        size_t m = 0;
        for (long k = i; k < i + per_txn && k < n; k++, m++)
            sample(&recs[m], ids[m], sizeof ids[m], k);
        if (audit_append_batch(db, recs, m, NULL, NULL, &err) != CR_OK) goto out;
    }
    rate = (double)n / (now_s() - t0);
out:
    if (rate < 0) fprintf(stderr, "bench_audit: %s\n", err.message);
    audit_close(db);
    free(recs);
    free(ids);
    return rate;
}

static double ledger_verify(const char *path, long *rows)
{
    audit_db *db = NULL;
    cr_error err = {0};
    cr_audit_report rep;
    if (audit_open(path, AUDIT_OPEN_READONLY, &db, &err) != CR_OK) return -1;
    double t0 = now_s();
    cr_code rc = audit_verify(db, NULL, &rep, &err);
    double dt = now_s() - t0;
    audit_close(db);
    if (rc != CR_OK || !rep.ok)
        fprintf(stderr, "bench_audit: verify: %s\n", rc != CR_OK ? err.message : rep.problem);
    *rows = (long)rep.records;
    return rc == CR_OK && rep.ok ? (double)rep.records / dt : -1;
}

/* ---- the peer on PostgreSQL: the same columns, plain inserts ---------------------------- */

static PGconn *pg_connect(const char *uri)
{
    PGconn *c = PQconnectdb(uri);
    if (PQstatus(c) != CONNECTION_OK) {
        fprintf(stderr, "bench_audit: %s", PQerrorMessage(c));
        PQfinish(c);
        return NULL;
    }
    PQclear(PQexec(c, "SET client_min_messages = warning; SET synchronous_commit = on"));
    return c;
}

static int pg_ok(PGresult *r)
{
    int ok = r && (PQresultStatus(r) == PGRES_COMMAND_OK || PQresultStatus(r) == PGRES_TUPLES_OK);
    if (!ok) fprintf(stderr, "bench_audit: %s", r ? PQresultErrorMessage(r) : "no result\n");
    PQclear(r);
    return ok;
}

/* The ledger's tables gone (ledger = 1), or the peer's table empty and new. */
static void pg_drop(const char *uri, int ledger)
{
    PGconn *c = pg_connect(uri);
    if (!c) return;
    if (ledger)
        pg_ok(PQexec(c, "DROP TABLE IF EXISTS records, checkpoints, schema_version;"
                        " DROP FUNCTION IF EXISTS calcroute_append_only() CASCADE"));
    else
        pg_ok(PQexec(c, "DROP TABLE IF EXISTS plain_records;"
                    " CREATE TABLE plain_records(seq bigserial PRIMARY KEY, request_id bytea,"
                    " time_us bigint, engine_version bytea, grammar_version bytea, lang bytea,"
                    " code bytea, bindings bytea, tables bytea, policy bytea, route bytea,"
                    " reasons bytea, status bigint, value_fraction bytea, value_repr bytea,"
                    " value_type bytea, value_exact bigint, stdout bytea, stderr bytea,"
                    " error bytea, artifacts bytea, timings bytea)"));
    PQfinish(c);
}

static void be64(char *p, uint64_t v)
{
    for (int i = 7; i >= 0; i--, v >>= 8) p[i] = (char)(v & 0xff);
}

static int pg_plain_insert(PGconn *c, const audit_record *r)
{
    const char *val[AUDIT_NFIELDS];
    int len[AUDIT_NFIELDS], fmt[AUDIT_NFIELDS];
    char ints[AUDIT_NFIELDS][8];
    int i = 0;
#define S(f) (val[i] = r->f, len[i] = (int)r->f##_len, fmt[i++] = 1);
#define I(f) (be64(ints[i], (uint64_t)r->f), val[i] = ints[i], len[i] = 8, fmt[i++] = 1);
    AUDIT_FIELDS(S, I)
#undef S
#undef I
    return pg_ok(PQexecPrepared(c, "ins", AUDIT_NFIELDS, val, len, fmt, 0));
}

static PGconn *pg_plain_open(const char *uri)
{
    PGconn *c = pg_connect(uri);
    if (c && !pg_ok(PQprepare(c, "ins", "INSERT INTO plain_records(request_id, time_us,"
                              " engine_version, grammar_version, lang, code, bindings, tables,"
                              " policy, route, reasons, status, value_fraction, value_repr,"
                              " value_type, value_exact, stdout, stderr, error, artifacts,"
                              " timings) VALUES($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,"
                              "$15,$16,$17,$18,$19,$20,$21)", AUDIT_NFIELDS, NULL))) {
        PQfinish(c);
        return NULL;
    }
    return c;
}

static double pg_plain_run(const char *uri, long n, int per_txn)
{
    char id[40];
    audit_record r;
    pg_drop(uri, 0);
    PGconn *c = pg_plain_open(uri);
    if (!c) return -1;
    double t0 = now_s();
    for (long i = 0; i < n; i += per_txn) {
        if (!pg_ok(PQexec(c, "BEGIN"))) return -1;
        for (long k = i; k < i + per_txn && k < n; k++) {
            sample(&r, id, sizeof id, k);
            if (!pg_plain_insert(c, &r)) return -1;
        }
        if (!pg_ok(PQexec(c, "COMMIT"))) return -1;
    }
    double dt = now_s() - t0;
    PQfinish(c);
    return (double)n / dt;
}

/* Every column of every row through a cursor, binary, as the ledger's store reads. */
static double pg_plain_scan(const char *uri, long *rows)
{
    PGconn *c = pg_connect(uri);
    size_t bytes = 0;
    *rows = 0;
    if (!c) return -1;
    double t0 = now_s();
    pg_ok(PQexec(c, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"));
    pg_ok(PQexec(c, "DECLARE s NO SCROLL CURSOR FOR SELECT * FROM plain_records ORDER BY seq"));
    for (;;) {
        PGresult *r = PQexecParams(c, "FETCH 256 FROM s", 0, NULL, NULL, NULL, NULL, 1);
        int n = PQresultStatus(r) == PGRES_TUPLES_OK ? PQntuples(r) : 0;
        for (int i = 0; i < n; i++)
            for (int k = 0; k < PQnfields(r); k++) bytes += (size_t)PQgetlength(r, i, k);
        *rows += n;
        PQclear(r);
        if (n < 256) break;
    }
    double dt = now_s() - t0;
    pg_ok(PQexec(c, "COMMIT"));
    PQfinish(c);
    return bytes ? (double)*rows / dt : -1;
}

/* ---- concurrent requests ---------------------------------------------------------------- */

#define CONCURRENT 16

typedef struct {
    const char *path;       /* the peer's file, or PostgreSQL database */
    audit_db *db;           /* the ledger's side: one handle shared by every thread */
    cr_engine *engine;      /* the engine's side */
    long n;
    int t, failed;
} worker;

static void *ledger_worker(void *p)
{
    worker *w = p;
    char id[40];
    audit_record r;
    cr_error err = {0};
    for (long i = 0; i < w->n; i++) {
        sample(&r, id, sizeof id, w->t * w->n + i);
        if (audit_append(w->db, &r, NULL, NULL, &err) != CR_OK) w->failed = 1;
    }
    return NULL;
}

/* The peer without group commit: each thread its own connection, one insert per
 * transaction, SQLite's write lock serializing them. */
static void *pg_plain_worker(void *p)
{
    worker *w = p;
    char id[40];
    audit_record r;
    PGconn *c = pg_plain_open(w->path);
    if (!c) w->failed = 1;
    for (long i = 0; i < w->n && !w->failed; i++) {
        sample(&r, id, sizeof id, w->t * w->n + i);
        if (!pg_ok(PQexec(c, "BEGIN")) || !pg_plain_insert(c, &r) || !pg_ok(PQexec(c, "COMMIT")))
            w->failed = 1;
    }
    PQfinish(c);
    return NULL;
}

static void *plain_worker(void *p)
{
    worker *w = p;
    plain pl;
    char id[40];
    audit_record r;
    if (!plain_open(&pl, w->path)) {
        w->failed = 1;
        return NULL;
    }
    for (long i = 0; i < w->n && !w->failed; i++) {
        sample(&r, id, sizeof id, w->t * w->n + i);
        if (sqlite3_exec(pl.db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK ||
            !plain_insert(&pl, &r) || sqlite3_exec(pl.db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
            w->failed = 1;
    }
    sqlite3_finalize(pl.ins);
    sqlite3_close(pl.db);
    return NULL;
}

/* A whole audited answer: an in-process request through a shared engine. */
static void *engine_worker(void *p)
{
    worker *w = p;
    static const char code[] = "revenue_2019 = 5829\nrevenue_2018 = 5735\n"
                               "ans = (revenue_2019 - revenue_2018) / revenue_2018\n";
    cr_request *req = cr_request_new();
    cr_error err = {0};
    if (!req || cr_request_set_code(req, code, sizeof code - 1) != CR_OK) w->failed = 1;
    for (long i = 0; i < w->n && !w->failed; i++) {
        cr_result *res = NULL;
        if (cr_run(w->engine, req, &res, &err) != CR_OK || cr_result_audit_seq(res) == 0)
            w->failed = 1;
        cr_result_free(res);
    }
    cr_request_free(req);
    return NULL;
}

static double concurrent(void *(*fn)(void *), worker *proto, long n)
{
    pthread_t th[CONCURRENT];
    worker w[CONCURRENT];
    double t0 = now_s();
    for (int t = 0; t < CONCURRENT; t++) {
        w[t] = *proto;
        w[t].t = t;
        w[t].n = n / CONCURRENT;
        if (pthread_create(&th[t], NULL, fn, &w[t]) != 0) return -1;
    }
    int failed = 0;
    for (int t = 0; t < CONCURRENT; t++) {
        pthread_join(th[t], NULL);
        failed |= w[t].failed;
    }
    return failed ? -1 : (double)(n / CONCURRENT * CONCURRENT) / (now_s() - t0);
}

static void unlink_db(const char *p)
{
    char side[560];
    unlink(p);
    snprintf(side, sizeof side, "%s-wal", p);
    unlink(side);
    snprintf(side, sizeof side, "%s-shm", p);
    unlink(side);
}

static void row(const char *what, double ours, double peer)
{
    printf("%-48s %14.0f/s %14.0f/s %8.2fx\n", what, ours, peer, peer > 0 ? ours / peer : 0);
}

/* The batched and verify rows are taken in turns, RUNS times: the best of each side, and the
 * ratio of each turn, so a neighbour's load shows as a spread rather than as a figure. */
typedef struct {
    double a, b, lo, hi;
    int n;
} turns;

static void turn(turns *t, double a, double b)
{
    double q = b > 0 ? a / b : 0;
    if (a > t->a) t->a = a;
    if (b > t->b) t->b = b;
    if (!t->n || q < t->lo) t->lo = q;
    if (!t->n || q > t->hi) t->hi = q;
    t->n++;
}

static void turns_row(const char *what, const turns *t)
{
    row(what, t->a, t->b);
    if (t->n > 1)
        printf("    best of %d turns each; ratio in each turn %.2f-%.2fx\n", t->n, t->lo, t->hi);
}

/* One store's table: the ledger at `ours` beside plain inserts at `peer` (the same database
 * on PostgreSQL, whose peer table is plain_records). */
static int bench_store(const char *ours, const char *peer, long durable, long batched,
                       long verify, int runs)
{
    int pg = is_pg(ours);
    char line[96];
    printf("%-48s %16s %16s %9s\n", "", "calcroute audit", pg ? "plain PG" : "plain SQLite",
           "ratio");
    double (*plain_rate)(const char *, long, int) = pg ? pg_plain_run : plain_run;

    snprintf(line, sizeof line, "durable appends, 1 per transaction (%ld)", durable);
    double a = ledger_run(ours, durable, 1), b = plain_rate(peer, durable, 1);
    row(line, a, b);

    /* 16 requests at once: the ledger's appends share commits; the peer's cannot */
    long nconc = durable * 4;
    audit_db *db = NULL;
    cr_error err = {0};
    if (pg) {
        fresh(ours);
    } else {
        unlink_db(ours);
        unlink_db(peer);
    }
    worker proto = { .path = peer };
    if (audit_open(ours, AUDIT_OPEN_CREATE, &db, &err) != CR_OK) {
        fprintf(stderr, "bench_audit: %s\n", err.message);
        return 1;
    }
    proto.db = db;
    a = concurrent(ledger_worker, &proto, nconc);
    uint64_t commits = db->commits;
    audit_close(db);
    if (!pg) {
        plain first;   /* the file and table made before the threads open it */
        if (!plain_open(&first, peer)) return 1;
        sqlite3_finalize(first.ins);
        sqlite3_close(first.db);
    } else {
        pg_drop(peer, 0);
    }
    b = concurrent(pg ? pg_plain_worker : plain_worker, &proto, nconc);
    snprintf(line, sizeof line, "durable appends, %d concurrent (%ld)", CONCURRENT, nconc);
    row(line, a, b);
    printf("    %.1f records per commit\n", commits ? (double)nconc / (double)commits : 0);

    cr_config *cfg = cr_config_new();
    if (pg) fresh(ours);
    else unlink_db(ours);
    if (!cfg || cr_config_set(cfg, "audit", ours, &err) != CR_OK) return 1;
    proto.engine = cr_engine_open(cfg, &err);
    cr_config_free(cfg);
    if (!proto.engine) return 1;
    a = concurrent(engine_worker, &proto, nconc);
    cr_engine_close(proto.engine);
    snprintf(line, sizeof line, "audited answers, %d concurrent cr_run (%ld)", CONCURRENT, nconc);
    row(line, a, b);

    snprintf(line, sizeof line, "batched appends, %d per transaction (%ld)", BATCH, batched);
    turns t = {0};
    for (int run = 0; run < runs; run++)
        turn(&t, ledger_run(ours, batched, BATCH), plain_rate(peer, batched, BATCH));
    turns_row(line, &t);

    /* The verified ledger is written in big batches; only verify is timed. */
    long rows_a = 0, rows_b = 0;
    if (ledger_run(ours, verify, 10000) < 0 || plain_rate(peer, verify, 10000) < 0) return 1;
    t = (turns){0};
    for (int run = 0; run < runs; run++)
        turn(&t, ledger_verify(ours, &rows_a),
             pg ? pg_plain_scan(peer, &rows_b) : plain_scan(peer, &rows_b));
    snprintf(line, sizeof line, "verify (peer: read all rows), %ld records", rows_a);
    turns_row(line, &t);
    if (rows_a != verify || rows_b != verify) fprintf(stderr, "bench_audit: row counts differ\n");
    if (pg) {
        pg_drop(ours, 1);
        pg_drop(peer, 0);
    } else {
        unlink_db(ours);
        unlink_db(peer);
    }
    return a > 0 && b > 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_audit DIR [DURABLE [BATCHED [VERIFY [RUNS]]]]\n");
        return 2;
    }
    long durable = argc > 2 ? atol(argv[2]) : 500, batched = argc > 3 ? atol(argv[3]) : 100000,
         verify = argc > 4 ? atol(argv[4]) : 1000000;
    int runs = argc > 5 ? atoi(argv[5]) : 3;
    if (runs < 1) runs = 1;
    char ours[512], peer[512];
    snprintf(ours, sizeof ours, "%s/bench-ledger.db", argv[1]);
    snprintf(peer, sizeof peer, "%s/bench-plain.db", argv[1]);
    char id[40];
    audit_record r;
    cr_buf enc;
    cr_buf_init(&enc, 0);
    sample(&r, id, sizeof id, 0);
    audit_encode(&r, 1, &enc);
    printf("audit ledger: records of %zu encoded bytes\n", enc.len);
    cr_buf_free(&enc);
    printf("SQLite: WAL, synchronous=FULL\n");
    int rc = bench_store(ours, peer, durable, batched, verify, runs);
    const char *pg = getenv("BENCH_AUDIT_PG");
    if (pg && *pg) {
        /* A server's commits cost a round trip each: a fifth of the verified records. */
        printf("PostgreSQL: synchronous_commit=on, one connection per handle\n");
        rc |= bench_store(pg, pg, durable, batched, verify / 5, runs);
    }
    return rc;
}
