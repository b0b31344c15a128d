/* router/router.h: the request lifecycle that ties the modules together (DESIGN.md,
 * "Router"): parse, decide, run in-process or in a sandbox, record, answer.
 * The public types cr_engine, cr_request and cr_result are defined here and nowhere else. */
#ifndef CR_ROUTER_H
#define CR_ROUTER_H

#include <jansson.h>

#include "calcroute.h"
#include "common/common.h"
#include "common/defaults.h"
#include "ir/ir.h"
#include "evaluator/evaluator.h"
#include "sandbox/sandbox.h"

/* The engine's options (cr_config_set()), one line each: id, key, how its text is read,
 * default text, range of a number, and what a refusal says is wanted ("KEY: want WANT, got
 * 'VALUE'"): a choice's words ('|' between), or NULL for "a whole number from MIN to MAX".
 * Adding an option is a line here, its line in calcroute.h and libcalcroute(3) (which
 * tests/test_api.sh holds to the list), and its use. Defaults come from common/defaults.h. */
#define CR_CONFIG_OPTIONS(X) \
    X(AUDIT, "audit", CFG_STR, NULL, 0, 0, NULL) \
    X(TIER, "tier", CFG_CHOICE, "auto", 0, 0, "auto|ns|kvm|none") \
    X(TIMEOUT, "timeout", CFG_SECONDS, CR_DEFAULT_TEXT(CR_DEFAULT_TIMEOUT_S), 0, 86400, "seconds above 0 (at most 86400)") \
    X(MEMORY, "memory", CFG_UINT, CR_DEFAULT_TEXT(CR_DEFAULT_MEMORY_MIB), 16, 1048576, "MiB from 16 to 1048576") \
    X(PRECISION, "precision", CFG_UINT, CR_DEFAULT_TEXT(CR_DEFAULT_PRECISION), 1, 1000, NULL) \
    X(ROUNDING, "rounding", CFG_CHOICE, "half-even", 0, 0, "half-even|half-up") \
    X(INTERPRETER, "interpreter", CFG_STR, CR_DEFAULT_INTERPRETER, 0, 0, NULL) \
    X(DATA, "data", CFG_DIR, NULL, 0, 0, "a directory") \
    X(OUT, "out", CFG_DIR, NULL, 0, 0, "a directory") \
    X(ALLOW_DIR, "allow_dir", CFG_STR, NULL, 0, 0, NULL) \
    X(POOL, "pool", CFG_AUTO_UINT, "0", 0, 64, "auto or 0 to 64 warm sandboxes") \
    X(QUEUE, "queue", CFG_UINT, CR_DEFAULT_TEXT(CR_DEFAULT_POOL_QUEUE), 1, 4096, NULL) \
    X(PRELOAD, "preload", CFG_STR, NULL, 0, 0, NULL) \
    X(REFILL, "refill", CFG_CHOICE, "1", 0, 0, "0|1") \
    X(WARMUP, "warmup", CFG_STR, NULL, 0, 0, NULL) \
    X(KVM_DIR, "kvm_dir", CFG_DIR, NULL, 0, 0, "a directory") \
    X(MAX_STEPS, "max_steps", CFG_UINT, CR_DEFAULT_TEXT(CR_DEFAULT_MAX_STEPS), 1, 1ull << 62, NULL) \
    X(MAX_EVAL_MEMORY, "max_eval_memory", CFG_UINT, CR_DEFAULT_TEXT(CR_DEFAULT_MAX_EVAL_MEMORY), 1u << 20, 1ull << 40, NULL) \
    X(MAX_DEPTH, "max_depth", CFG_UINT, CR_DEFAULT_TEXT(CR_DEFAULT_MAX_DEPTH), 1, 200, NULL) \
    X(MAX_RECURSION, "max_recursion", CFG_UINT, CR_DEFAULT_TEXT(CR_DEFAULT_MAX_RECURSION), 1, 1000, NULL) \
    X(MAX_INT_BITS, "max_int_bits", CFG_UINT, CR_DEFAULT_TEXT(CR_DEFAULT_MAX_INT_BITS), 64, 1u << 26, NULL) \
    X(MAX_STR_LEN, "max_str_len", CFG_UINT, CR_DEFAULT_TEXT(CR_DEFAULT_MAX_STR_LEN), 1, 1u << 30, NULL) \
    X(MAX_SOURCE, "max_source", CFG_UINT, CR_DEFAULT_TEXT(CR_DEFAULT_MAX_SOURCE), 1, 64u << 20, NULL) \
    X(MAX_STDOUT, "max_stdout", CFG_UINT, CR_DEFAULT_TEXT(CR_DEFAULT_MAX_STDOUT), 1, 1u << 30, NULL)

/* The limits that bound a run, each kept by its record's policy under the member named here
 * (router/record.c) and set again for its replay (router/replay.c). The timeout is seconds
 * (a JSON real), the others whole numbers. */
#define ROUTER_RECORDED_LIMITS(X) \
    X(TIMEOUT, "timeout_s") X(MEMORY, "memory_mib") X(MAX_STEPS, "max_steps") \
    X(MAX_EVAL_MEMORY, "max_eval_memory") X(MAX_DEPTH, "max_depth") \
    X(MAX_RECURSION, "max_recursion") X(MAX_INT_BITS, "max_int_bits") \
    X(MAX_STR_LEN, "max_str_len") X(MAX_SOURCE, "max_source") X(MAX_STDOUT, "max_stdout")

typedef enum { CFG_STR, CFG_DIR, CFG_CHOICE, CFG_UINT, CFG_AUTO_UINT, CFG_SECONDS } router_config_kind;
/* A CFG_AUTO_UINT set to "auto": the engine works the number out when it opens. */
#define CFG_AUTO UINT64_MAX
#define CR_CONFIG_ID(id, ...) CFG_##id,
typedef enum { CR_CONFIG_OPTIONS(CR_CONFIG_ID) CFG_COUNT } router_config_id;
#undef CR_CONFIG_ID

/* An option's value: `text` as set (malloc'd; NULL: none), and for a number or a choice
 * what it reads as (a choice: its index). */
typedef struct {
    char *text;
    uint64_t u;
    double d;
} router_config_value;

struct cr_config {
    router_config_value v[CFG_COUNT];
};

/* The engine's reading of the options: its limits and policy, from cfg. */
void router_config_policy(const cr_config *cfg, cr_policy *pol);
/* Reads `value` as option i wants it into *v (v->text untouched); CR_EUSAGE with the
 * option's message. */
cr_code router_config_parse(router_config_id i, const char *value, router_config_value *v,
                            cr_error *err);
/* A copy of cfg (NULL: the defaults), or NULL on ENOMEM. */
cr_config *router_config_dup(const cr_config *cfg);
/* A whole number from min to max in decimal digits, or CR_EUSAGE with
 * "KEY: want WANT, got 'VALUE'" (want NULL: "a whole number from MIN to MAX"): the one
 * reading of every numeric option. */
cr_code router_parse_uint(const char *key, const char *value, uint64_t min, uint64_t max,
                          const char *want, uint64_t *out, cr_error *err);

struct cr_engine {
    cr_config *cfg;         /* the engine's own copy; the strings below are borrowed from it */
    cr_tier tier;
    double timeout_s;
    unsigned memory_mib;
    const char *audit_path, *interpreter, *data_dir, *out_dir, *allow_dir, *kvm_dir;
    cr_policy policy;
    struct audit_db *audit; /* when audit_path is set; its appends are thread-safe */
    int intr[2];            /* a pipe, readable from cr_engine_interrupt() (or a byte written
                               to intr[1] by anyone) until cr_engine_resume() */
    sandbox_pool *pool;     /* warm ns workers (option "pool"), or NULL */
    unsigned pool_size;     /* its size (pool=auto: what the machine allows) */
    char pool_note[160];    /* pool=auto and none: why ("the kvm tier has none", ...) */
    struct router_digests *digests;   /* the data directory's file digests, reused while a
                                         file is unchanged (router/record.c); NULL: none */
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
    char *id;               /* a JSON request's "id" as compact JSON, numbers as written, or
                               NULL (cr_request_id()) */
    int interrupt_fd;       /* cr_request_set_interrupt_fd(), or -1 */
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
    char *stdout_text, *stderr_text;
    size_t stdout_len, stderr_len;
    int stdout_truncated;
    char *value_repr, *value_type, *value_fraction, *value_from;
    int has_value, value_exact;
    json_t *value_native;   /* the value as tagged JSON (DESIGN.md), or NULL: value_native_why */
    char *value_native_why;
    router_reason *reasons;
    size_t nreasons;
    int explained;          /* --explain: decided, not run */
    double parse_us, eval_us, total_us;
    uint64_t ops;
    char *artifacts_json;   /* JSON list of {name, size, sha256, path, name_base64}, or NULL */
    char *dropped_json;     /* sandboxed: {"count": N, "names": [...]} of files left outside
                               /out; NULL in-process */
    json_t *artifacts;      /* the same, parsed on first use by the accessors */
    char *tier_note;        /* the sandbox's note on its tier (tier auto, none: tier_why), or
                               NULL */
    char *tier_why;         /* why the sandbox tier (router_decision), or NULL: none chosen */
    char *limit_name;       /* sandbox limit hit ("wall", "memory", ...), or NULL */
    double sandbox_wall_s, sandbox_cpu_s;
    int sandbox_warm;       /* a warm pool's worker ran it (wall and CPU from the handoff) */
    char *start_note;       /* why a request to an engine with a pool started cold, or NULL */
    uint64_t peak_memory;
    json_t *sandbox_inputs; /* sandboxed: {"interpreter": {path, version}, "packages": {name:
                               version}} as the runner reported them (absent members: not
                               reported), for the audit record; NULL in-process */
    int has_seed;           /* a sandbox ran: seed is what random and numpy.random drew from */
    uint32_t seed;
    uint64_t audit_seq;
    char audit_hash[65];
    char *json;             /* built by cr_result_json() on first use */
};

/* ---- the decision (router/decide.c) -----------------------------------------------------
 * Where a parsed request runs, from its parse and the policy alone, never by trying the
 * evaluator and falling back: cr_run() acts on it and --explain shows it. */

/* What the tier `auto` resolves to for the engine's sandbox on this host, and why
 * (router_host_tier()): the one input of the decision that is not the parse or the policy. */
typedef struct {
    cr_tier tier;           /* CR_TIER_NS or CR_TIER_KVM */
    char why[256];
} router_host;

typedef struct {
    cr_route route;
    cr_tier tier;           /* the sandbox tier when route is CR_ROUTE_NS or CR_ROUTE_KVM */
    char tier_why[256];     /* why that tier ("ns: kvm unavailable (...)"), else "" */
    cr_code status;         /* CR_OK, or CR_EUNSUPPORTED: the code needs a sandbox and the
                               policy has none (route CR_ROUTE_REJECTED) */
    cr_error error;         /* when status is not CR_OK */
    int lean;               /* sandboxed: its imports are the standard library's alone
                               (sandbox_job.lean) */
} router_decision;

/* 1 when deciding m under `tier` needs the host's answer: code outside the subset, tier auto. */
int router_needs_host(const ir_module *m, cr_tier tier);
/* The decision for m (a parse that succeeded; its reasons are the why of a sandbox route)
 * under the engine's tier option; host as router_needs_host() asks for it, else NULL. Pure. */
void router_decide(const ir_module *m, cr_tier tier, const router_host *host,
                   router_decision *d);
/* Asks the host what `auto` means for e's sandbox (router/route_sandbox.c). */
void router_host_tier(const cr_engine *e, router_host *host);

/* Runs code outside the subset in the tier decided (d->tier) and fills res. CR_OK when res
 * holds an outcome (even "the sandbox could not be set up": status CR_ESANDBOX). */
cr_code router_run_sandbox(cr_engine *e, const cr_request *req, const cr_policy *pol,
                           const router_decision *d, cr_result *res, cr_error *err);
/* The limits every sandboxed run of the engine gets (and its warm pool is made with). */
void router_sandbox_limits(const cr_engine *e, sandbox_limits *lim);
/* Appends res's record to the engine's ledger (when it has one) and sets res->audit_*. */
cr_code router_record(cr_engine *e, const cr_request *req, const cr_policy *pol, cr_result *res,
                      cr_error *err);
/* The manifest of a data directory (router/record.c): {"files": [{name, size, sha256} for a
 * regular file, {name, type} for a symlink (not followed) or other entry], "max_files",
 * "max_depth", and "cut" (why the walk stopped short) when it did}, names relative and in
 * bytewise order, depth first. The walk reads at most ROUTER_DATA_MAX_ENTRIES names, lists at
 * most ROUTER_DATA_MAX_FILES entries and enters ROUTER_DATA_MAX_DEPTH levels. What a record
 * keeps and what replay compares DIR against. CR_EUSAGE when dir cannot be opened. */
#define ROUTER_DATA_MAX_FILES 10000
#define ROUTER_DATA_MAX_ENTRIES 100000
#define ROUTER_DATA_MAX_DEPTH 32
#define ROUTER_DATA_NAME_MAX 4096
/* digests: a cache of the engine's (router_digests_new()) that spares hashing again a file
 * whose device, inode, size, mtime and ctime are what they were when it was hashed (and whose
 * ctime was then at least a second old, so a write in the same clock tick cannot hide), or
 * NULL to hash every file. */
typedef struct router_digests router_digests;
router_digests *router_digests_new(void);
void router_digests_free(router_digests *d);
cr_code router_data_manifest(const char *dir, router_digests *digests, json_t **out,
                             cr_error *err);
const char *router_status_name(cr_code status);
/* The result as cr_result_json() prints it (router/result.c), a new reference; NULL only when
 * out of memory. */
json_t *router_result_to_json(const cr_result *res);

/* The bindings as canonical JSON text ({"name": value, ...} in binding order, numbers as
 * their exact literal text), for the audit record and for replay. Malloc'd: caller frees. */
char *router_bindings_json(const cr_request *req);
/* The table as compact JSON text, or NULL when there is none. Malloc'd: caller frees. */
char *router_table_json(const cr_request *req);

#endif
