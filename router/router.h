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

struct cr_engine {
    cr_config cfg;          /* strings below are the engine's own copies */
    char *audit_path, *interpreter, *data_dir, *out_dir;
    cr_policy policy;
    void *audit;            /* audit_db *, when cfg.audit_path is set */
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
    router_reason *reasons;
    size_t nreasons;
    int explained;          /* --explain: decided, not run */
    double parse_us, eval_us, total_us;
    uint64_t ops;
    uint64_t audit_seq;
    char audit_hash[65];
    char *json;             /* built by cr_result_json() on first use */
};

/* The bindings as canonical JSON text ({"name": value, ...} in binding order, numbers as
 * their exact literal text), for the audit record and for replay. Malloc'd: caller frees. */
char *router_bindings_json(const cr_request *req);
/* The table as compact JSON text, or NULL when there is none. Malloc'd: caller frees. */
char *router_table_json(const cr_request *req);

#endif
