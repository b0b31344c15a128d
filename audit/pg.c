/* audit/pg.c: the PostgreSQL store: one ledger shared by many processes on many machines,
 * named by a postgresql:// URI (libpq's syntax; the ledger's schema is found through the
 * connection's search_path when it opens, so `options=-csearch_path%3DNAME` puts a ledger in
 * its own schema).
 *
 * Every name the store's SQL uses is qualified: its tables by the ledger's schema, pinned on
 * open, and every built-in function, operator, type and catalog by pg_catalog. Whoever can
 * create objects in a schema that comes first on the role's or the database's search_path
 * could otherwise put their own octet_length(), `=` or int8 in place of the built-in (an
 * unqualified name resolves to the first match on the path, and pg_catalog can be put after
 * any schema), and a verify would read through the lie. The connection then also sets its
 * search_path to pg_catalog (pg_temp after it), so that a name left unqualified by mistake
 * finds a built-in or nothing, and format_type() names the built-in types plainly.
 *
 * Appends serialise on a transaction-level advisory lock keyed by the records table, taken
 * before the head is read (READ COMMITTED: the head read after the lock is the last committed
 * one); seq is the primary key, so even a writer that skipped the lock could not fork the
 * chain. Every commit is durable (synchronous_commit=on for this session whatever the server
 * default). Strings are stored as bytea: a record's bytes may hold NULs and need not be UTF-8,
 * and what is hashed is what is stored.
 *
 * libpq is loaded when the first PostgreSQL ledger is opened: linked in, its dependencies
 * (TLS, Kerberos, LDAP) would be bound by every one-shot run that never uses it.
 *
 * Reads go through cursors (a verify walks records and checkpoints side by side on one
 * connection), binary (bytea comes as its bytes), in batches whose size is bounded whatever
 * the table holds: the cursor over records leaves out every row over ROW_INLINE bytes, and
 * where its seqs jump the rows left out there are fetched alone, refused past AUDIT_MAX_ROW as
 * SQLite's limit refuses them. The cursor is a plain SELECT * with a filter: any computed
 * column would make the server build every row again (a third of its work for a verify). */
#include "audit/audit_int.h"

#include <dlfcn.h>
#include <sodium.h>
#include <inttypes.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PQ_SONAME "libpq.so.5"
#define PQ_FUNCTIONS(X) X(connectdb) X(status) X(errorMessage) X(finish) X(exec) \
    X(execParams) X(prepare) X(execPrepared) X(resultStatus) X(resultErrorMessage) \
    X(resultErrorField) X(clear) X(ntuples) X(nfields) X(getvalue) X(getlength) X(getisnull) \
    X(transactionStatus) X(setNoticeProcessor) X(reset)

static struct {
#define X(f) __typeof__(PQ##f) *f;
    PQ_FUNCTIONS(X)
#undef X
} pq;
static pthread_once_t pq_once = PTHREAD_ONCE_INIT;
static char pq_error[256];

static void pq_load(void)
{
    void *h = dlopen(PQ_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(pq_error, sizeof pq_error, "a PostgreSQL ledger needs libpq (Debian: libpq5):"
                 " %s", dlerror());
        return;
    }
#define X(f) \
    if (!(*(void **)&pq.f = dlsym(h, "PQ" #f))) { \
        snprintf(pq_error, sizeof pq_error, "%s has no PQ" #f, PQ_SONAME); \
        return; \
    }
    PQ_FUNCTIONS(X)
#undef X
}

/* A record row as read, the table's columns in order: seq, format, the fields, prev_hash,
 * hash (the schema check holds them to exactly these). */
#define RECORD_NCOLS (2 + AUDIT_NFIELDS + 2)
/* Rows of a batch; a row over ROW_INLINE bytes comes alone. */
#define FETCH_ROWS 256
#define ROW_INLINE (64 << 10)
/* The lock every appender of one ledger takes: "CRLG" in the high half, the records
 * table's oid in the low half (what every version of the store computes). */
#define APPEND_LOCK_TAG 1129466951ll
/* A schema's name quoted as an identifier: at most 63 bytes, each quote doubled. */
#define SCHEMA_MAX 132

struct audit_pg {
    PGconn *conn;
    int prepared;         /* the insert statement, once per connection */
    unsigned cursors;     /* names of this connection's cursors */
    PGresult *head;       /* the head read with an append's BEGIN, for pg_head() */
    char nsp[24];         /* the ledger's schema: its oid as text, */
    char schema[SCHEMA_MAX];   /* and its name quoted, which every table name is prefixed by */
    char append_sql[600]; /* BEGIN, the append lock, the head (begin_once()) */
    char *head_sql;       /* the head alone: the tail of append_sql */
};

/* The head as text (one parse for both ways it is read): seq, hex of at most 33 bytes of the
 * hash (a tampered one may be any size), the hash's length; ordered by the column, not by
 * the text that takes its name ("9" > "10"). substring(... for n) is SQL's syntax, which the
 * parser itself turns into pg_catalog.substring. */
#define HEAD_SQL "SELECT r.seq::pg_catalog.text, pg_catalog.encode(substring(r.hash for 33)," \
                 " 'hex'), pg_catalog.octet_length(r.hash) FROM %s.records r" \
                 " ORDER BY r.seq DESC LIMIT 1"

/* Builds SQL text in a buffer; a failed allocation anywhere makes the whole text NULL. */
typedef struct {
    cr_buf b;
    int bad;
} sqltext;
#define SQL(t, ...) ((t)->bad |= cr_buf_printf(&(t)->b, __VA_ARGS__) != CR_OK)

static const char *sql_done(sqltext *t)
{
    return t->bad ? NULL : t->b.p;
}

/* A built-in operator by its qualified name: `a OP("=") b`. */
#define OP(o) " OPERATOR(pg_catalog." o ") "

/* "lo <= seq <= hi" in SQL, the bounds as int8 literals (quoted: a negative one stays one
 * literal, with no minus operator to look up). */
static void seq_range(sqltext *t, int64_t lo, int64_t hi)
{
    SQL(t, "seq" OP(">=") "'%" PRId64 "'::pg_catalog.int8 AND seq" OP("<=")
        "'%" PRId64 "'::pg_catalog.int8", lo, hi);
}

/* ---- the schema: one table of columns for CREATE and for the check --------------------- */

typedef struct {
    const char *table, *name, *type;   /* type: as format_type() names it */
    int notnull;
} column;

/* A column's type as CREATE TABLE writes it: bigint is a keyword, which the parser itself
 * makes pg_catalog.int8; bytea is a name like any other. */
static const char *ddl_type(const column *c)
{
    return !strcmp(c->type, "bytea") ? "pg_catalog.bytea" : c->type;
}

#define REC_COL(f) (!strcmp(#f, "out") ? "stdout" : !strcmp(#f, "err_out") ? "stderr" : #f)
static const column columns[] = {
    { "schema_version", "version", "bigint", 1 },
    { "schema_version", "created_us", "bigint", 1 },
    { "records", "seq", "bigint", 1 },
    { "records", "format", "bigint", 1 },
#define S(f) { "records", NULL, "bytea", 0 },
#define I(f) { "records", NULL, "bigint", 1 },
    AUDIT_FIELDS(S, I)
#undef S
#undef I
    { "records", "prev_hash", "bytea", 1 },
    { "records", "hash", "bytea", 1 },
    { "checkpoints", "id", "bigint", 1 },
    { "checkpoints", "seq", "bigint", 1 },
    { "checkpoints", "head_hash", "bytea", 1 },
    { "checkpoints", "time_us", "bigint", 1 },
    { "checkpoints", "pubkey", "bytea", 1 },
    { "checkpoints", "signature", "bytea", 1 },
};
#define NCOLUMNS (sizeof columns / sizeof columns[0])
static const char *field_names[AUDIT_NFIELDS];
static const char *const tables[] = { "schema_version", "records", "checkpoints" };

static const char *col_name(size_t i)
{
    return columns[i].name ? columns[i].name : field_names[i - 4];
}

static void names_init(void)
{
    size_t i = 0;
#define S(f) field_names[i++] = REC_COL(f);
#define I(f) field_names[i++] = REC_COL(f);
    AUDIT_FIELDS(S, I)
#undef S
#undef I
}

/* What a PostgreSQL ledger adds to the columns: keys, the identity, the append-only guards
 * (for honest mistakes and for a role that was granted too much; the chain and the signed
 * checkpoints are what catch a superuser who disables them). %1$s is the ledger's schema. */
#define SCHEMA_EXTRA \
    "ALTER TABLE %1$s.records ADD PRIMARY KEY (seq);" \
    "ALTER TABLE %1$s.checkpoints ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY;" \
    "ALTER TABLE %1$s.checkpoints ADD PRIMARY KEY (id);" \
    "CREATE OR REPLACE FUNCTION %1$s.calcroute_append_only() RETURNS pg_catalog.trigger" \
    " LANGUAGE plpgsql AS $$BEGIN RAISE EXCEPTION 'audit ledger is append-only'; END$$;" \
    "CREATE TRIGGER records_append_only BEFORE UPDATE OR DELETE ON %1$s.records" \
    " FOR EACH ROW EXECUTE FUNCTION %1$s.calcroute_append_only();" \
    "CREATE TRIGGER records_no_truncate BEFORE TRUNCATE ON %1$s.records" \
    " FOR EACH STATEMENT EXECUTE FUNCTION %1$s.calcroute_append_only();" \
    "CREATE TRIGGER checkpoints_append_only BEFORE UPDATE OR DELETE ON %1$s.checkpoints" \
    " FOR EACH ROW EXECUTE FUNCTION %1$s.calcroute_append_only();" \
    "CREATE TRIGGER checkpoints_no_truncate BEFORE TRUNCATE ON %1$s.checkpoints" \
    " FOR EACH STATEMENT EXECUTE FUNCTION %1$s.calcroute_append_only();"

/* ---- errors and statements -------------------------------------------------------------- */

static cr_code pg_fail(audit_db *db, PGresult *res, cr_error *err, const char *step)
{
    char msg[300];
    /* The server's primary message without libpq's "ERROR:  " and context lines. */
    const char *m = res ? pq.resultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : NULL;
    if (!m && res) m = pq.resultErrorMessage(res);
    if (!m || !*m) m = pq.errorMessage(db->pg->conn);
    /* One line: libpq's connection messages continue on tab-indented lines. */
    size_t n = 0;
    for (const char *p = m && *m ? m : "failed"; *p && n < sizeof msg - 1; p++) {
        int space = *p == '\n' || *p == '\t' || *p == ' ';
        if (!space) msg[n++] = *p;
        else if (n && msg[n - 1] != ' ') msg[n++] = ' ';
    }
    while (n && msg[n - 1] == ' ') n--;
    msg[n] = '\0';
    if (res) pq.clear(res);
    return cr_error_set(err, CR_EAUDIT, 0, 0, "audit: %s: %s", step, msg);
}

/* Runs sql expecting `want`; the result is the caller's when out is non-NULL. */
static cr_code run(audit_db *db, const char *sql, ExecStatusType want, PGresult **out,
                   cr_error *err, const char *step)
{
    PGresult *res = pq.exec(db->pg->conn, sql);
    if (!res || pq.resultStatus(res) != want) return pg_fail(db, res, err, step);
    if (out) *out = res;
    else pq.clear(res);
    return CR_OK;
}

static cr_code cmd(audit_db *db, const char *sql, cr_error *err)
{
    return run(db, sql, PGRES_COMMAND_OK, NULL, err, sql);
}

static cr_code not_ledger(cr_error *err, const char *why, const char *what)
{
    return cr_error_set(err, CR_ELEDGER, 0, 0, "audit: not a ledger: %s%s", why, what);
}

/* An int8 column of a binary result; 0 when it is not one. */
static int get_i64(const PGresult *r, int row, int col, int64_t *v)
{
    if (pq.getisnull(r, row, col) || pq.getlength(r, row, col) != 8) return 0;
    *v = (int64_t)audit_get_be64(pq.getvalue(r, row, col));
    return 1;
}

/* ---- the schema check ------------------------------------------------------------------- */

/* Table `table` of the ledger's schema: an ordinary table without row-level security, its
 * columns exactly the ledger's; the records table's oid (text) into oid when asked. */
static cr_code check_table(audit_db *db, const char *table, char *oid, size_t oid_len,
                           cr_error *err)
{
    char sql[600], want[200], got[200];
    PGresult *r;
    snprintf(sql, sizeof sql, "SELECT c.relkind::pg_catalog.text,"
             " c.relrowsecurity::pg_catalog.text, c.oid::pg_catalog.text FROM pg_catalog.pg_class c"
             " WHERE c.relnamespace" OP("=") "'%s'::pg_catalog.oid"
             " AND c.relname" OP("=") "'%s'::pg_catalog.name", db->pg->nsp, table);
    cr_code rc = run(db, sql, PGRES_TUPLES_OK, &r, err, "read schema");
    if (rc != CR_OK) return rc;
    if (pq.ntuples(r) != 1) rc = not_ledger(err, "no table ", table);
    else if (strcmp(pq.getvalue(r, 0, 0), "r"))
        rc = not_ledger(err, "not an ordinary table: ", table);
    else if (strcmp(pq.getvalue(r, 0, 1), "false"))
        rc = not_ledger(err, "row-level security hides rows of ", table);
    else if (oid)
        snprintf(oid, oid_len, "%s", pq.getvalue(r, 0, 2));
    pq.clear(r);
    if (rc != CR_OK) return rc;
    /* format_type() names a type as the search_path sees it: pg_catalog's first (session()). */
    snprintf(sql, sizeof sql, "SELECT a.attname::pg_catalog.text,"
             " pg_catalog.format_type(a.atttypid, a.atttypmod), a.attnotnull::pg_catalog.text"
             " FROM pg_catalog.pg_attribute a, pg_catalog.pg_class c"
             " WHERE c.relnamespace" OP("=") "'%s'::pg_catalog.oid"
             " AND c.relname" OP("=") "'%s'::pg_catalog.name"
             " AND a.attrelid" OP("=") "c.oid AND a.attnum" OP(">") "0"
             " AND NOT a.attisdropped ORDER BY a.attnum", db->pg->nsp, table);
    if ((rc = run(db, sql, PGRES_TUPLES_OK, &r, err, "read schema")) != CR_OK) return rc;
    int row = 0, n = pq.ntuples(r);
    for (size_t i = 0; i < NCOLUMNS && rc == CR_OK; i++) {
        if (strcmp(columns[i].table, table)) continue;
        snprintf(want, sizeof want, "%s %s%s", col_name(i), columns[i].type,
                 columns[i].notnull ? " NOT NULL" : "");
        if (row >= n) {
            snprintf(got, sizeof got, "%s has no column %s", table, col_name(i));
            rc = not_ledger(err, got, "");
            break;
        }
        snprintf(got, sizeof got, "%.60s %.60s%s", pq.getvalue(r, row, 0), pq.getvalue(r, row, 1),
                 !strcmp(pq.getvalue(r, row, 2), "true") ? " NOT NULL" : "");
        if (strcmp(got, want)) {
            char why[480];
            snprintf(why, sizeof why, "table %s column %d is \"%s\", expected \"%s\"", table,
                     row + 1, got, want);
            rc = not_ledger(err, why, "");
        }
        row++;
    }
    if (rc == CR_OK && row < n) {
        snprintf(got, sizeof got, "table %s has an extra column %.60s", table,
                 pq.getvalue(r, row, 0));
        rc = not_ledger(err, got, "");
    }
    pq.clear(r);
    return rc;
}

/* The statements that name the records table's oid or build on the head's query. */
static cr_code append_sql(audit_db *db, const char *records_oid, cr_error *err)
{
    struct audit_pg *pg = db->pg;
    char *end;
    unsigned long long oid = strtoull(records_oid, &end, 10);
    if (*end || oid > UINT32_MAX)
        return cr_error_set(err, CR_EAUDIT, 0, 0, "audit: read schema: the records table's oid"
                            " is %.20s", records_oid);
    int n = snprintf(pg->append_sql, sizeof pg->append_sql,
                     "BEGIN; SELECT pg_catalog.pg_advisory_xact_lock(%lld); ",
                     (long long)((unsigned long long)APPEND_LOCK_TAG << 32 | oid));
    int m = snprintf(pg->append_sql + n, sizeof pg->append_sql - (size_t)n, HEAD_SQL, pg->schema);
    if (m < 0 || (size_t)(n + m) >= sizeof pg->append_sql)
        return cr_error_set(err, CR_EINTERNAL, 0, 0, "audit: the head's query is too long");
    pg->head_sql = pg->append_sql + n;
    return CR_OK;
}

static cr_code check_schema(audit_db *db, cr_error *err)
{
    cr_code rc = CR_OK;
    char oid[24] = "";
    for (size_t i = 0; i < sizeof tables / sizeof tables[0] && rc == CR_OK; i++)
        rc = check_table(db, tables[i], !strcmp(tables[i], "records") ? oid : NULL, sizeof oid,
                         err);
    if (rc != CR_OK) return rc;
    PGresult *r;
    char sql[400];
    snprintf(sql, sizeof sql, "SELECT pg_catalog.max(version)::pg_catalog.text FROM"
             " %s.schema_version", db->pg->schema);
    if ((rc = run(db, sql, PGRES_TUPLES_OK, &r, err, "read schema version")) != CR_OK)
        return rc;
    const char *v = pq.ntuples(r) == 1 && !pq.getisnull(r, 0, 0) ? pq.getvalue(r, 0, 0) : "none";
    if (strtoll(v, NULL, 10) != AUDIT_SCHEMA_VERSION || !strcmp(v, "none"))
        rc = cr_error_set(err, CR_ELEDGER, 0, 0, "audit: schema version %s, expected %d", v,
                          AUDIT_SCHEMA_VERSION);
    pq.clear(r);
    return rc == CR_OK ? append_sql(db, oid, err) : rc;
}

/* Creates the tables in the ledger's schema when it has none of them, under a lock so two
 * processes opening a fresh ledger at once cannot both create it. One that holds some of them
 * is left for check_schema() to name what is wrong. */
static cr_code create_schema(audit_db *db, cr_error *err)
{
    cr_code rc;
    PGresult *r;
    sqltext t = { .bad = 0 };
    char sql[400];
    if ((rc = cmd(db, "BEGIN", err)) != CR_OK) return rc;
    if ((rc = run(db, "SELECT pg_catalog.pg_advisory_xact_lock(1129466951)", PGRES_TUPLES_OK,
                  NULL, err, "lock schema")) != CR_OK)
        goto fail;
    snprintf(sql, sizeof sql, "SELECT NOT EXISTS (SELECT FROM pg_catalog.pg_class c WHERE"
             " c.relnamespace" OP("=") "'%s'::pg_catalog.oid AND c.relname"
             OP("=") "ANY ('{records,checkpoints,schema_version}'::"
             "pg_catalog.name[]))", db->pg->nsp);
    if ((rc = run(db, sql, PGRES_TUPLES_OK, &r, err, "read schema")) != CR_OK) goto fail;
    int empty = !strcmp(pq.getvalue(r, 0, 0), "t");
    pq.clear(r);
    if (!empty) return cmd(db, "COMMIT", err);
    cr_buf_init(&t.b, 0);
    for (size_t k = 0; k < sizeof tables / sizeof tables[0]; k++) {
        SQL(&t, "CREATE TABLE %s.%s(", db->pg->schema, tables[k]);
        const char *sep = "";
        for (size_t i = 0; i < NCOLUMNS; i++) {
            if (strcmp(columns[i].table, tables[k])) continue;
            SQL(&t, "%s%s %s%s", sep, col_name(i), ddl_type(&columns[i]),
                columns[i].notnull ? " NOT NULL" : "");
            sep = ", ";
        }
        SQL(&t, ");");
    }
    SQL(&t, SCHEMA_EXTRA "INSERT INTO %1$s.schema_version VALUES(%2$d, %3$" PRId64 ")",
        db->pg->schema, AUDIT_SCHEMA_VERSION, audit_now_us());
    const char *sql_all = sql_done(&t);
    rc = sql_all ? cmd(db, sql_all, err) : cr_error_set(err, CR_ENOMEM, 0, 0, "audit: schema");
    cr_buf_free(&t.b);
    if (rc != CR_OK) goto fail;
    return cmd(db, "COMMIT", err);
fail:
    pq.clear(pq.exec(db->pg->conn, "ROLLBACK"));
    return rc;
}

/* ---- the store -------------------------------------------------------------------------- */

static void quiet(void *arg, const char *message)
{
    (void)arg;
    (void)message;   /* NOTICEs (an existing object, a trigger) are for psql's user */
}

/* The ledger's schema, pinned for the connection's life: the one `beside` pinned (another
 * handle on the same ledger: verify's ranges must read the same tables whatever the path says
 * meanwhile), else the schema of the first table named records on the search_path, else the
 * one a CREATE TABLE would use (the first schema of the path that exists). Read before
 * session() sets the path to pg_catalog. */
static cr_code find_schema(audit_db *db, const audit_db *beside, int create, cr_error *err)
{
    char sql[700];
    if (beside)
        snprintf(sql, sizeof sql, "SELECT n.oid::pg_catalog.text,"
                 " pg_catalog.quote_ident(n.nspname) FROM pg_catalog.pg_namespace n"
                 " WHERE n.oid" OP("=") "'%s'::pg_catalog.oid", beside->pg->nsp);
    else
        snprintf(sql, sizeof sql, "SELECT n.oid::pg_catalog.text,"
                 " pg_catalog.quote_ident(n.nspname) FROM pg_catalog.pg_namespace n"
                 " WHERE n.oid" OP("=") "COALESCE("
                 "(SELECT c.relnamespace FROM pg_catalog.pg_class c WHERE c.oid"
                 OP("=") "pg_catalog.to_regclass('records')::pg_catalog.oid),"
                 " (SELECT m.oid FROM pg_catalog.pg_namespace m WHERE m.nspname"
                 OP("=") "pg_catalog.current_schema()))");
    PGresult *r;
    cr_code rc = run(db, sql, PGRES_TUPLES_OK, &r, err, "read schema");
    if (rc != CR_OK) return rc;
    if (pq.ntuples(r) != 1)
        rc = create ? cr_error_set(err, CR_EAUDIT, 0, 0, "audit: create the ledger: no schema"
                                   " on the search_path exists to hold it")
                    : not_ledger(err, "no table ", "records");
    else if ((size_t)pq.getlength(r, 0, 1) >= sizeof db->pg->schema)
        rc = cr_error_set(err, CR_EAUDIT, 0, 0, "audit: read schema: a schema name too long");
    else {
        snprintf(db->pg->nsp, sizeof db->pg->nsp, "%s", pq.getvalue(r, 0, 0));
        snprintf(db->pg->schema, sizeof db->pg->schema, "%s", pq.getvalue(r, 0, 1));
    }
    pq.clear(r);
    return rc;
}

/* What every connection of ours sets, whatever the server's defaults: commits durable, a wait
 * for another appender's lock bounded as SQLite's busy timeout bounds it, and a search_path
 * of pg_catalog alone (pg_temp after it: no relation of this session's is looked for
 * first). */
static cr_code session(audit_db *db, cr_error *err)
{
    char sql[200];
    snprintf(sql, sizeof sql, "SET synchronous_commit = on; SET lock_timeout = %d;"
             " SET search_path = pg_catalog, pg_temp%s", AUDIT_BUSY_MS,
             db->readonly ? "; SET default_transaction_read_only = on" : "");
    return cmd(db, sql, err);
}

static cr_code pg_open(audit_db *db, const char *uri, int flags, cr_error *err)
{
    static pthread_once_t names_once = PTHREAD_ONCE_INIT;
    pthread_once(&pq_once, pq_load);
    pthread_once(&names_once, names_init);
    if (pq_error[0]) return cr_error_set(err, CR_EAUDIT, 0, 0, "audit: %s", pq_error);
    if (!(db->pg = calloc(1, sizeof *db->pg)))
        return cr_error_set(err, CR_ENOMEM, 0, 0, "audit: ledger handle");
    db->pg->conn = pq.connectdb(uri);
    if (!db->pg->conn) return cr_error_set(err, CR_ENOMEM, 0, 0, "audit: PostgreSQL connection");
    if (pq.status(db->pg->conn) != CONNECTION_OK)
        return pg_fail(db, NULL, err, "connect to PostgreSQL");
    pq.setNoticeProcessor(db->pg->conn, quiet, NULL);
    int create = !db->readonly && (flags & AUDIT_OPEN_CREATE);
    cr_code rc = find_schema(db, db->beside, create, err);
    if (rc == CR_OK) rc = session(db, err);
    if (rc == CR_OK && create) rc = create_schema(db, err);
    if (rc == CR_OK) rc = check_schema(db, err);
    return rc;
}

static void pg_close(audit_db *db)
{
    if (!db->pg) return;
    pq.clear(db->pg->head);
    if (db->pg->conn) pq.finish(db->pg->conn);
    free(db->pg);
    db->pg = NULL;
}

static void pg_budget(audit_db *db)
{
    (void)db;   /* the server does the work; a read is bounded by its batches */
}

/* Makes a lost connection again: 1 when there is one to use. */
static int reconnect(audit_db *db)
{
    if (pq.status(db->pg->conn) == CONNECTION_OK) return 1;
    pq.reset(db->pg->conn);
    if (pq.status(db->pg->conn) != CONNECTION_OK) return 0;
    db->pg->prepared = 0;
    return session(db, NULL) == CR_OK;
}

static cr_code begin_once(audit_db *db, int kind, cr_error *err)
{
    if (kind == AUDIT_TX_READ) return cmd(db, "BEGIN ISOLATION LEVEL REPEATABLE READ", err);
    /* One round trip for the three: in READ COMMITTED each statement of the string takes its
     * own snapshot, so the head is read after the lock is held; pg_head() takes it. */
    pq.clear(db->pg->head);
    db->pg->head = NULL;
    cr_code rc = run(db, db->pg->append_sql, PGRES_TUPLES_OK, &db->pg->head, err,
                     "append lock");
    if (rc != CR_OK) pq.clear(pq.exec(db->pg->conn, "ROLLBACK"));
    return rc;
}

static cr_code pg_begin(audit_db *db, int kind, cr_error *err)
{
    /* A long-lived engine outlives a server restart or a failover: a connection found lost
     * when a transaction starts (nothing of it done yet) is made again and the start tried
     * once more; never inside a transaction. (A COMMIT whose answer was lost with the
     * connection may have committed: its records are then in the ledger although their
     * results were refused, never the other way round.) */
    if (!reconnect(db)) return pg_fail(db, NULL, err, "reconnect to PostgreSQL");
    cr_code rc = begin_once(db, kind, err);
    if (rc != CR_OK && pq.status(db->pg->conn) != CONNECTION_OK) {
        if (!reconnect(db)) return pg_fail(db, NULL, err, "reconnect to PostgreSQL");
        rc = begin_once(db, kind, err);
    }
    return rc;
}

static cr_code pg_commit(audit_db *db, cr_error *err)
{
    /* COMMIT of a failed transaction reports success as ROLLBACK: not a commit. */
    if (pq.transactionStatus(db->pg->conn) != PQTRANS_INTRANS) {
        pq.clear(pq.exec(db->pg->conn, "ROLLBACK"));
        return cr_error_set(err, CR_EAUDIT, 0, 0, "audit: commit: the transaction had failed");
    }
    return cmd(db, "COMMIT", err);
}

static void pg_rollback(audit_db *db)
{
    pq.clear(pq.exec(db->pg->conn, "ROLLBACK"));
}

static int pg_txn_alive(audit_db *db)
{
    return pq.transactionStatus(db->pg->conn) == PQTRANS_INTRANS;
}

static cr_code pg_head(audit_db *db, uint64_t *seq, uint8_t hash[AUDIT_HASH_LEN], cr_error *err)
{
    PGresult *r = db->pg->head;
    db->pg->head = NULL;
    if (!r) r = pq.exec(db->pg->conn, db->pg->head_sql);
    if (!r || pq.resultStatus(r) != PGRES_TUPLES_OK) return pg_fail(db, r, err, "read head");
    cr_code rc = CR_OK;
    if (pq.ntuples(r) == 0) {
        *seq = 0;
        memset(hash, 0, AUDIT_HASH_LEN);
    } else {
        char *end;
        const char *q = pq.getvalue(r, 0, 0), *hex = pq.getvalue(r, 0, 1);
        long long n = strtoll(q, &end, 10);
        size_t got = 0;
        if (*end || n < 1 || strcmp(pq.getvalue(r, 0, 2), "32") ||
            sodium_hex2bin(hash, AUDIT_HASH_LEN, hex, strlen(hex), NULL, &got, NULL) != 0 ||
            got != AUDIT_HASH_LEN)
            rc = cr_error_set(err, CR_ELEDGER, 0, 0, "audit: head record %.20s is malformed;"
                              " run calc-audit verify", q);
        else
            *seq = (uint64_t)n;
    }
    pq.clear(r);
    return rc;
}

#define NPARAMS (AUDIT_NFIELDS + 4)

static cr_code pg_insert(audit_db *db, uint64_t seq, const audit_record *rec,
                         const uint8_t prev[AUDIT_HASH_LEN], const uint8_t hash[AUDIT_HASH_LEN],
                         cr_error *err)
{
    if (audit_record_bytes(rec) > AUDIT_MAX_ROW) return audit_too_big(err);
    if (!db->pg->prepared) {
        char sql[512];
        int n = snprintf(sql, sizeof sql, "INSERT INTO %s.records VALUES(", db->pg->schema);
        for (int i = 1; i <= NPARAMS; i++)
            n += snprintf(sql + n, sizeof sql - (size_t)n, "%s$%d", i > 1 ? "," : "", i);
        snprintf(sql + n, sizeof sql - (size_t)n, ")");
        PGresult *r = pq.prepare(db->pg->conn, "calcroute_insert", sql, NPARAMS, NULL);
        if (!r || pq.resultStatus(r) != PGRES_COMMAND_OK) return pg_fail(db, r, err, "prepare");
        pq.clear(r);
        db->pg->prepared = 1;
    }
    /* Binary parameters: int8 as 8 big-endian bytes, bytea as its bytes. */
    const char *val[NPARAMS];
    int len[NPARAMS], fmt[NPARAMS];
    char ints[NPARAMS][8];
    int i = 0;
#define INT(v) (audit_put_be64(ints[i], (uint64_t)(v)), val[i] = ints[i], len[i] = 8, fmt[i++] = 1)
#define BYTES(p, n) (val[i] = (const char *)(p), len[i] = (int)(n), fmt[i++] = 1)
    INT(seq);
    INT(AUDIT_FORMAT_VERSION);
#define S(f) BYTES(rec->f, rec->f##_len);
#define I(f) INT(rec->f);
    AUDIT_FIELDS(S, I)
#undef S
#undef I
    BYTES(prev, AUDIT_HASH_LEN);
    BYTES(hash, AUDIT_HASH_LEN);
#undef INT
#undef BYTES
    PGresult *r = pq.execPrepared(db->pg->conn, "calcroute_insert", NPARAMS, val, len, fmt, 0);
    if (!r || pq.resultStatus(r) != PGRES_COMMAND_OK) return pg_fail(db, r, err, "insert record");
    pq.clear(r);
    return CR_OK;
}

/* ---- reading through cursors ------------------------------------------------------------ */

typedef struct {
    char name[32];
    int owns_txn;      /* the walk began its own snapshot: it ends it */
    int ncols;         /* what each row of its SELECT has */
    PGresult *batch, *big;
    int row;
    /* records: the rows not returned yet have seq >= next (none when done), up to `to` */
    int64_t next, to;
    int done;
} walk;

static cr_code walk_declare(audit_iter *it, const char *select, int records, cr_error *err)
{
    audit_db *db = it->db;
    walk *w = calloc(1, sizeof *w);
    if (!w) return cr_error_set(err, CR_ENOMEM, 0, 0, "audit: iterator");
    w->ncols = records ? RECORD_NCOLS : 6;
    snprintf(w->name, sizeof w->name, "calcroute_%u", ++db->pg->cursors);
    cr_code rc = CR_OK;
    /* A cursor lives in a transaction: a walk outside one takes its own snapshot. */
    PGTransactionStatusType ts = pq.transactionStatus(db->pg->conn);
    if (ts == PQTRANS_IDLE || ts == PQTRANS_UNKNOWN) {   /* unknown: the connection was lost */
        if ((rc = pg_begin(db, AUDIT_TX_READ, err)) != CR_OK) {
            free(w);
            return rc;
        }
        w->owns_txn = 1;
    }
    sqltext t = { .bad = 0 };
    cr_buf_init(&t.b, 0);
    SQL(&t, "DECLARE %s NO SCROLL CURSOR FOR %s", w->name, select);
    const char *sql = sql_done(&t);
    rc = sql ? cmd(db, sql, err) : cr_error_set(err, CR_ENOMEM, 0, 0, "audit: iterator");
    cr_buf_free(&t.b);
    if (rc != CR_OK) {
        if (w->owns_txn) pg_rollback(db);
        free(w);
        return rc;
    }
    it->state = w;
    return CR_OK;
}

/* A row's stored bytes (every bytea column, the hashes too: a tampered one may be any size),
 * what the cursor and the fetch of one row are bounded by; summed as int8 from the start
 * (int8 + int4 stays int8), where two values of 1 GiB would overflow an int4. */
static void row_size(sqltext *t)
{
    SQL(t, "(0::pg_catalog.int8");
    for (size_t i = 0; i < NCOLUMNS; i++)
        if (!strcmp(columns[i].table, "records") && !strcmp(columns[i].type, "bytea"))
            SQL(t, OP("+") "COALESCE(pg_catalog.octet_length(%s), 0)",
                col_name(i));
    SQL(t, ")");
}

/* Runs the SQL in t (binary results, expecting rows); NULL with err set when it fails. */
static PGresult *query(audit_db *db, sqltext *t, const char *what, cr_error *err)
{
    const char *sql = sql_done(t);
    PGresult *r = sql ? pq.execParams(db->pg->conn, sql, 0, NULL, NULL, NULL, NULL, 1) : NULL;
    cr_buf_free(&t->b);
    if (!sql) return cr_error_set(err, CR_ENOMEM, 0, 0, "audit: %s", what), NULL;
    if (!r || pq.resultStatus(r) != PGRES_TUPLES_OK) return pg_fail(db, r, err, what), NULL;
    return r;
}

static cr_code pg_iter_open(audit_iter *it, int64_t from, int64_t to, cr_error *err)
{
    sqltext t = { .bad = 0 };
    cr_buf_init(&t.b, 0);
    SQL(&t, "SELECT * FROM %s.records WHERE ", it->db->pg->schema);
    seq_range(&t, from, to);
    SQL(&t, " AND ");
    row_size(&t);
    SQL(&t, OP("<=") "%d ORDER BY seq", ROW_INLINE);
    const char *sql = sql_done(&t);
    cr_code rc = sql ? walk_declare(it, sql, 1, err)
                     : cr_error_set(err, CR_ENOMEM, 0, 0, "audit: iterator");
    cr_buf_free(&t.b);
    if (rc == CR_OK) {
        walk *w = it->state;
        w->next = from;
        w->to = to;
    }
    return rc;
}

/* The next row of the walk, left in place: 1 with *res and *row set, 0 at the end, -1 on
 * failure. */
static int walk_peek(audit_iter *it, PGresult **res, int *row, const char *what, cr_error *err)
{
    walk *w = it->state;
    if (!w->batch || w->row >= pq.ntuples(w->batch)) {
        char sql[64];
        if (w->batch && pq.ntuples(w->batch) < FETCH_ROWS) return 0;
        pq.clear(w->batch);
        snprintf(sql, sizeof sql, "FETCH %d FROM %s", FETCH_ROWS, w->name);
        w->batch = pq.execParams(it->db->pg->conn, sql, 0, NULL, NULL, NULL, NULL, 1);
        w->row = 0;
        if (!w->batch || pq.resultStatus(w->batch) != PGRES_TUPLES_OK) {
            PGresult *r = w->batch;
            w->batch = NULL;
            pg_fail(it->db, r, err, what);
            return -1;
        }
        if (pq.ntuples(w->batch) == 0) return 0;
        if (pq.nfields(w->batch) != w->ncols) {
            cr_error_set(err, CR_ELEDGER, 0, 0, "audit: %s: %d columns a row, expected %d", what,
                         pq.nfields(w->batch), w->ncols);
            return -1;
        }
    }
    *res = w->batch;
    *row = w->row;
    return 1;
}

/* The next row of the walk, taken. */
static int walk_row(audit_iter *it, PGresult **res, int *row, const char *what, cr_error *err)
{
    int s = walk_peek(it, res, row, what, err);
    if (s == 1) ((walk *)it->state)->row++;
    return s;
}

/* The first row the cursor left out with lo <= seq <= hi, alone in w->big: 1 with it there,
 * 0 when there is none, -1 on failure. */
static int big_row(audit_iter *it, int64_t lo, int64_t hi, cr_error *err)
{
    walk *w = it->state;
    sqltext t = { .bad = 0 };
    cr_buf_init(&t.b, 0);
    SQL(&t, "SELECT seq, ");
    row_size(&t);
    SQL(&t, " FROM %s.records WHERE ", it->db->pg->schema);
    seq_range(&t, lo, hi);
    SQL(&t, " ORDER BY seq LIMIT 1");
    PGresult *r = query(it->db, &t, "read records", err);
    if (!r) return -1;
    int64_t seq = 0, n = 0;
    int found = pq.ntuples(r) == 1 && get_i64(r, 0, 0, &seq) && get_i64(r, 0, 1, &n);
    pq.clear(r);
    if (!found) return 0;
    if (n > AUDIT_MAX_ROW) {
        cr_error_set(err, CR_ELEDGER, 0, 0, "audit: read records: not a ledger: a value is"
                     " larger than %d MiB", AUDIT_MAX_ROW >> 20);
        return -1;
    }
    /* The bound again in the same statement: the row cannot grow between the two. */
    cr_buf_init(&t.b, 0);
    SQL(&t, "SELECT * FROM %s.records WHERE ", it->db->pg->schema);
    seq_range(&t, seq, seq);
    SQL(&t, " AND ");
    row_size(&t);
    SQL(&t, OP("<=") "%d", AUDIT_MAX_ROW);
    pq.clear(w->big);
    if (!(w->big = query(it->db, &t, "read records", err))) return -1;
    if (pq.ntuples(w->big) != 1 || pq.nfields(w->big) != RECORD_NCOLS) {
        cr_error_set(err, CR_ELEDGER, 0, 0, "audit: read records: a row changed while it was"
                     " read");
        return -1;
    }
    return 1;
}

static void get_str(const PGresult *r, int row, int col, const char **p, size_t *len)
{
    if (pq.getisnull(r, row, col)) {
        *p = NULL;
        *len = 0;
        return;
    }
    *p = pq.getvalue(r, row, col);
    *len = (size_t)pq.getlength(r, row, col);
}

static int pg_iter_next(audit_iter *it, audit_entry *e, cr_error *err)
{
    walk *w = it->state;
    PGresult *r;
    int row, s = walk_peek(it, &r, &row, "read records", err);
    if (s < 0) return s;
    /* Rows the cursor left out lie where its seqs jump (or after its last): none in a ledger
     * of small rows, so that costs a query at the end. */
    int64_t seq = 0;
    if (s == 1) get_i64(r, row, 0, &seq);
    int b = 0;
    if (!w->done && (s == 1 ? w->next < seq : w->next <= w->to)
        && (b = big_row(it, w->next, s == 1 ? seq - 1 : w->to, err)) < 0)
        return b;
    if (b == 1) {
        r = w->big;
        row = 0;
    } else if (s == 0) {
        w->done = 1;
        return 0;
    } else {
        w->row++;
    }
    audit_record *rec = &e->rec;
    int i = 0;
    int64_t v = 0;
    e->bad[0] = '\0';
    get_i64(r, row, i++, &v);
    e->seq = (uint64_t)v;
    w->done = v == INT64_MAX;
    w->next = v + !w->done;
    get_i64(r, row, i++, &e->format);
#define S(f) get_str(r, row, i++, &rec->f, &rec->f##_len);
#define I(f) \
    if (!get_i64(r, row, i++, &rec->f) && !e->bad[0]) \
        snprintf(e->bad, sizeof e->bad, "column %s holds NULL, expected an integer", REC_COL(f));
    AUDIT_FIELDS(S, I)
#undef S
#undef I
    uint8_t *hashes[2] = { e->prev_hash, e->hash };
    size_t *lens[2] = { &e->prev_hash_len, &e->hash_len };
    for (int k = 0; k < 2; k++, i++) {
        size_t got = (size_t)pq.getlength(r, row, i);
        memset(hashes[k], 0, AUDIT_HASH_LEN);
        memcpy(hashes[k], pq.getvalue(r, row, i), got < AUDIT_HASH_LEN ? got : AUDIT_HASH_LEN);
        *lens[k] = got;
    }
    return 1;
}

static void pg_iter_close(audit_iter *it)
{
    walk *w = it->state;
    pq.clear(w->batch);
    pq.clear(w->big);
    char sql[64];
    snprintf(sql, sizeof sql, "CLOSE %s", w->name);
    if (pq.transactionStatus(it->db->pg->conn) == PQTRANS_INTRANS)
        pq.clear(pq.exec(it->db->pg->conn, sql));
    if (w->owns_txn) pg_rollback(it->db);   /* read only: nothing to commit */
    free(w);
}

static cr_code pg_ckpt_insert(audit_db *db, const audit_ckpt_row *c, cr_error *err)
{
    char seq[8], t[8];
    audit_put_be64(seq, (uint64_t)c->seq);
    audit_put_be64(t, (uint64_t)c->time_us);
    const char *val[5] = { seq, (const char *)c->head, t, (const char *)c->pk,
                           (const char *)c->sig };
    int len[5] = { 8, (int)c->head_len, 8, (int)c->pk_len, (int)c->sig_len };
    int fmt[5] = { 1, 1, 1, 1, 1 };
    char sql[512];
    snprintf(sql, sizeof sql, "INSERT INTO %s.checkpoints(seq, head_hash, time_us, pubkey,"
             " signature) VALUES($1::pg_catalog.int8, $2::pg_catalog.bytea, $3::pg_catalog.int8,"
             " $4::pg_catalog.bytea, $5::pg_catalog.bytea)", db->pg->schema);
    PGresult *r = pq.execParams(db->pg->conn, sql, 5, NULL, val, len, fmt, 0);
    if (!r || pq.resultStatus(r) != PGRES_COMMAND_OK)
        return pg_fail(db, r, err, "insert checkpoint");
    pq.clear(r);
    return CR_OK;
}

static cr_code pg_ckpt_open(audit_iter *it, cr_error *err)
{
    /* A genuine checkpoint's blobs are 32 to 64 bytes: longer ones are cut, and then fail
     * their length check as malformed. */
    char sql[400];
    snprintf(sql, sizeof sql, "SELECT id, seq, substring(head_hash for 65), time_us,"
             " substring(pubkey for 65), substring(signature for 65) FROM %s.checkpoints"
             " ORDER BY seq, id", it->db->pg->schema);
    return walk_declare(it, sql, 0, err);
}

static int pg_ckpt_next(audit_iter *it, audit_ckpt_row *c, cr_error *err)
{
    PGresult *r;
    int row, s = walk_row(it, &r, &row, "read checkpoints", err);
    if (s != 1) return s;
    get_i64(r, row, 0, &c->id);
    get_i64(r, row, 1, &c->seq);
    get_i64(r, row, 3, &c->time_us);
    c->head = (const uint8_t *)pq.getvalue(r, row, 2);
    c->head_len = (size_t)pq.getlength(r, row, 2);
    c->pk = (const uint8_t *)pq.getvalue(r, row, 4);
    c->pk_len = (size_t)pq.getlength(r, row, 4);
    c->sig = (const uint8_t *)pq.getvalue(r, row, 5);
    c->sig_len = (size_t)pq.getlength(r, row, 5);
    return 1;
}

/* Where verify's ranges end. Their own connections' later snapshots hold the same rows up to
 * it: appends commit in seq order under the append lock, so a snapshot that sees seq n sees
 * every seq before it, and the triggers refuse changes. */
static cr_code pg_last_seq(audit_db *db, int64_t *seq, cr_error *err)
{
    char sql[300];
    snprintf(sql, sizeof sql, "SELECT pg_catalog.max(seq) FROM %s.records", db->pg->schema);
    PGresult *r = pq.execParams(db->pg->conn, sql, 0, NULL, NULL, NULL, NULL, 1);
    if (!r || pq.resultStatus(r) != PGRES_TUPLES_OK) return pg_fail(db, r, err, "read last seq");
    *seq = 0;
    if (pq.ntuples(r) == 1) get_i64(r, 0, 0, seq);   /* NULL: empty */
    pq.clear(r);
    return CR_OK;
}

const audit_store audit_store_pg = {
    .name = "postgresql",
    .open = pg_open, .close = pg_close, .budget = pg_budget,
    .begin = pg_begin, .commit = pg_commit, .rollback = pg_rollback, .txn_alive = pg_txn_alive,
    .head = pg_head, .insert = pg_insert,
    .iter_open = pg_iter_open, .iter_next = pg_iter_next, .iter_close = pg_iter_close,
    .ckpt_insert = pg_ckpt_insert, .ckpt_open = pg_ckpt_open, .ckpt_next = pg_ckpt_next,
    .last_seq = pg_last_seq,
};
