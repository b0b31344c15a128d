/* router/router.h: the request lifecycle that ties the modules together (DESIGN.md,
 * "Router"): parse, decide, run in-process or in a sandbox, record, answer.
 * The public types cr_engine, cr_request and cr_result are defined here and nowhere else. */
#ifndef CR_ROUTER_H
#define CR_ROUTER_H

#include <jansson.h>

#include "calcroute.h"
#include "common/common.h"
#include "parser/ir.h"
#include "evaluator/evaluator.h"
#include "sandbox/sandbox.h"

struct cr_engine {
    cr_config cfg;          /* strings below are the engine's own copies */
    char *audit_path, *interpreter, *data_dir, *out_dir, *allow_dir, *kvm_dir;
    cr_policy policy;
    struct audit_db *audit; /* when cfg.audit_path is set */
    char tier_note[256];    /* why auto chose the tier it did */
    int intr[2];            /* a pipe, readable from cr_engine_interrupt() (or a byte written
                               to intr[1] by anyone) until cr_engine_resume() */
    sandbox_pool *pool;     /* warm ns workers (cfg.pool_size), or NULL */
};

struct cr_request {
    char *code;             /* malloc'd, NUL-terminated */
    size_t code_len;
    cr_lang lang;
    ir_module *binds_mod;   /* owns the binding values (constant IR expressions) */
    eval_binding *binds;    /* malloc'd; names and values live in binds_mod's arena */
    size_t nbinds, binds_cap;
    json_t *table;          /* list of rows, owned, or NULL */
    int precision;          /* 0: the engine's */
    int rounding;           /* -1: the engine's; else cr_rounding */
    int explain;            /* decide only, run nothing */
    char answer_names[96];  /* "answer_vars" option: NUL-separated names, or empty */
    int64_t seed;           /* "seed" option, or -1: derived from the request */
    int strip_fences;       /* "strip_fences" option: code is the reply's fenced code */
};

typedef struct {
    char *code;
    int line, col;
    char *snippet;
} router_reason;

struct cr_result {
    cr_route route;
    cr_lang lang;
    cr_code status;
    cr_error error;         /* valid when status != CR_OK */
    char *out, *err_text;
    size_t out_len, err_len;
    int out_truncated;
    char *value_repr, *value_type, *value_fraction, *value_from;
    int has_value, value_exact;
    json_t *value_native;   /* the value as tagged JSON (DESIGN.md), or NULL: value_native_why */
    char *value_native_why;
    router_reason *reasons;
    size_t nreasons;
    int explained;          /* --explain: decided, not run */
    double parse_us, eval_us, total_us;
    uint64_t ops;
    char *artifacts_json;   /* JSON list of {name, size, sha256, path}, or NULL */
    char *dropped_json;     /* sandboxed: {"count": N, "names": [...]} of files left outside
                               /out; NULL in-process */
    json_t *artifacts;      /* the same, parsed on first use by the accessors */
    char *tier_note;        /* the sandbox's note on its tier, or NULL */
    char *limit_name;       /* sandbox limit hit ("wall", "memory", ...), or NULL */
    double sandbox_wall_s, sandbox_cpu_s;
    int sandbox_warm;       /* a warm pool's worker ran it (wall and CPU from the handoff) */
    char *start_note;       /* why a request to an engine with a pool started cold, or NULL */
    uint64_t peak_memory;
    int has_seed;           /* a sandbox ran: seed is what random and numpy.random drew from */
    uint32_t seed;
    uint64_t audit_seq;
    char audit_hash[65];
    char *json;             /* built by cr_result_json() on first use */
};

/* Runs code outside the subset in the sandbox tier the engine names and fills res. CR_OK
 * when res holds an outcome (even "the sandbox could not be set up": status CR_ESANDBOX). */
cr_code router_run_sandbox(cr_engine *e, const cr_request *req, const cr_policy *pol,
                           cr_result *res, cr_error *err);
/* The limits every sandboxed run of the engine gets (and its warm pool is made with). */
void router_sandbox_limits(const cr_engine *e, sandbox_limits *lim);
/* Appends res's record to the engine's ledger (when it has one) and sets res->audit_*. */
cr_code router_record(cr_engine *e, const cr_request *req, const cr_policy *pol, cr_result *res,
                      cr_error *err);
const char *router_status_name(cr_code status);

/* The bindings as canonical JSON text ({"name": value, ...} in binding order, numbers as
 * their exact literal text), for the audit record and for replay. Malloc'd: caller frees. */
char *router_bindings_json(const cr_request *req);
/* The table as compact JSON text, or NULL when there is none. Malloc'd: caller frees. */
char *router_table_json(const cr_request *req);

#endif
