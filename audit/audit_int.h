/* audit/audit_int.h: shared by the audit module's own files (and bench/bench_audit.c) only;
 * other modules use audit/audit.h. */
#ifndef CR_AUDIT_INT_H
#define CR_AUDIT_INT_H

#include <sqlite3.h>

#include "audit/audit.h"

#define AUDIT_BUSY_MS 30000   /* how long an append waits for another process's write lock */

/* The record's fields in canonical order, for X-macros: S names a string field, I an
 * integer one. The encoding, the INSERT, the SELECT and the JSON all follow this list. */
#define AUDIT_FIELDS(S, I) \
    S(request_id) I(time_us) S(engine_version) S(grammar_version) S(lang) S(code) \
    S(bindings) S(tables) S(policy) S(route) S(reasons) I(status) S(value_fraction) \
    S(value_repr) S(value_type) I(value_exact) S(out) S(err_out) S(error) S(artifacts) \
    S(timings)
#define AUDIT_NFIELDS 21

struct audit_db {
    sqlite3 *sql;
    int readonly;
    sqlite3_stmt *st_head, *st_insert;   /* prepared once, reused by every append */
};

cr_code audit_sqlite_fail(audit_db *db, cr_error *err, const char *step);
cr_code audit_exec(audit_db *db, const char *sql, cr_error *err);
int64_t audit_now_us(void);
/* The head, inside a transaction the caller holds. */
cr_code audit_head_locked(audit_db *db, uint64_t *seq, uint8_t hash[AUDIT_HASH_LEN],
                          cr_error *err);

/* The ledger behind a public handle (audit/api.c). */
audit_db *audit_from_public(cr_audit *a);

#endif
