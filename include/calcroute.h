/* calcroute.h: the one public header of libcalcroute.
 *
 * calcroute answers code that a language model wrote for a finance question: whitelisted
 * arithmetic runs in-process on exact decimals, everything else in a sandbox, and every
 * request leaves a record in a tamper-evident audit chain.
 *
 * Ownership: every function that returns a pointer says who owns it. Free functions accept
 * NULL. Nothing here calls exit() or abort().
 *
 * Thread safety: each group of declarations below says it for every function of the group
 * ("Thread safety: ..."). In short: functions on no object (cr_version, cr_strerror,
 * cr_route_name, cr_config_option) from any thread at any time; an engine shared by any
 * number of threads; every other object (a cr_config, a request, a result, an audit handle)
 * used by one thread at a time, distinct objects by distinct threads freely. The library
 * keeps no global state that this could break.
 */
#ifndef CALCROUTE_H
#define CALCROUTE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CR_API __attribute__((visibility("default")))

/* The version of this header; cr_version() gives the library's, which may be newer. */
#define CR_VERSION_MAJOR 0
#define CR_VERSION_MINOR 1
#define CR_VERSION_PATCH 0
#define CR_VERSION_STR_(x) #x
#define CR_VERSION_STR(x) CR_VERSION_STR_(x)
#define CR_VERSION_STRING CR_VERSION_STR(CR_VERSION_MAJOR) "." CR_VERSION_STR(CR_VERSION_MINOR) \
    "." CR_VERSION_STR(CR_VERSION_PATCH)

/* Status codes. Codes below CR_EPY_BASE are failures of calcroute or of the request; codes
 * from CR_EPY_BASE on are Python exceptions raised by the user's code (a *result*, not a
 * failure of the engine). cr_strerror() names each. */
typedef enum {
    CR_OK = 0,
    CR_ENOMEM,       /* an allocation failed */
    CR_EUSAGE,       /* a bad argument from the caller */
    CR_EIO,          /* reading or writing a file failed */
    CR_ESYNTAX,      /* the code does not parse */
    CR_EUNSUPPORTED, /* the code is outside the in-process subset (see the reasons) */
    CR_ELIMIT,       /* a resource limit was hit (LimitError); the message names the limit */
    CR_EREJECTED,    /* the policy forbids running this code */
    CR_ESANDBOX,     /* a sandbox could not be set up or run */
    CR_EAUDIT,       /* the audit ledger could not be written or read */
    CR_EINTERNAL,    /* a bug in calcroute */
    CR_ELEDGER,      /* the file is not an audit ledger as calcroute writes it (schema, types,
                      * sizes); the message names what is wrong */
    CR_EINTERRUPTED, /* cr_engine_interrupt() ended the run (Ctrl-C, SIGINT, SIGTERM) */
    CR_EBUSY,        /* overloaded: the warm pool's queue is full, or no warm sandbox came
                      * within the run's timeout; nothing ran or was recorded, and the same
                      * request may be sent again later. The message starts with the reason,
                      * "queue_full:" or "queue_timeout:" */
    CR_EPY_BASE = 32,
    CR_EPY_ZERODIV = CR_EPY_BASE, /* ZeroDivisionError */
    CR_EPY_NAME,                  /* NameError */
    CR_EPY_UNBOUND,               /* UnboundLocalError */
    CR_EPY_TYPE,                  /* TypeError */
    CR_EPY_VALUE,                 /* ValueError */
    CR_EPY_OVERFLOW,              /* OverflowError */
    CR_EPY_INDEX,                 /* IndexError */
    CR_EPY_KEY,                   /* KeyError */
    CR_EPY_ATTRIBUTE,             /* AttributeError */
    CR_EPY_ASSERTION,             /* AssertionError */
    CR_EPY_RECURSION,             /* RecursionError */
    CR_EPY_EXCEPTION,             /* Exception (raised by the user's code) */
    CR_EPY_END
} cr_code;

/* An error the caller provides; filled when a function fails. line and col are 1-based and
 * 0 when the error has no position in the code. `type` is the Python exception name for
 * CR_EPY_* codes, "LimitError" for CR_ELIMIT, and "" otherwise. */
typedef struct {
    cr_code code;
    int line, col;
    char type[32];
    char message[256];
} cr_error;

/* A static string naming the code ("ZeroDivisionError", "syntax error", ...). Never NULL.
 * Thread safety: any thread, any time. */
CR_API const char *cr_strerror(cr_code code);


/* ---- engine, request, result -------------------------------------------------------------
 * An engine holds configuration and the audit ledger; a request is one piece of code with
 * its inputs; a result is what came of it. All three are opaque. */
typedef struct cr_engine cr_engine;
typedef struct cr_request cr_request;
typedef struct cr_result cr_result;

typedef enum { CR_LANG_AUTO = 0, CR_LANG_PYTHON, CR_LANG_DSL } cr_lang;
typedef enum { CR_TIER_AUTO = 0, CR_TIER_NS, CR_TIER_KVM, CR_TIER_NONE } cr_tier;
typedef enum {
    CR_ROUTE_INPROCESS = 0, CR_ROUTE_NS, CR_ROUTE_KVM, CR_ROUTE_REJECTED
} cr_route;

/* "MAJOR.MINOR.PATCH" of the library loaded (CR_VERSION_STRING when it was built).
 * Thread safety: any thread, any time (a static string). */
CR_API const char *cr_version(void);

/* ---- engine options ----------------------------------------------------------------------
 * An engine's options, set by name as text, so that a new option is a new name, never a new
 * layout (callers built against an older header, and bindings, keep working). Every value
 * is checked by cr_config_set() itself, once, the same for every caller (calc-route's flags
 * and the Python binding go through it): a refusal is CR_EUSAGE with the message
 * "KEY: want WHAT, got 'VALUE'", or "unknown option 'KEY'". A NULL value restores the
 * default. Numbers are decimal digits; "timeout" also takes a fraction ("2.5").
 *
 *   audit         SQLite ledger every request is appended to (default: none)
 *   tier          where code outside the subset goes: auto (default), ns, kvm, none (reject)
 *   timeout       seconds: sandbox wall clock and in-process CPU time, above 0, at most
 *                 86400 (default 10)
 *   memory        sandbox memory, MiB from 16 to 1048576 (default 512)
 *   precision     significant digits of inexact results, 1 to 1000 (default 34)
 *   rounding      half-even (Python's, default) or half-up
 *   interpreter   the sandbox's python (default /usr/bin/python3): under /usr or allow_dir,
 *                 an executable file, checked by cr_engine_open()
 *   data          an existing directory mounted read-only at /data in the sandbox
 *   out           an existing directory where sandbox artifacts are copied
 *   allow_dir     a host directory (canonical absolute path) the sandbox sees read-only at
 *                 the same path, e.g. a virtual environment whose bin/python is the
 *                 interpreter
 *   pool          warm pool (ns tier): sandboxes made before requests arrive, each taking one
 *                 request and then destroyed, 0 to 64 or auto (default 0). auto: 2 a CPU the
 *                 process may use, fewer where a quarter of its memory (the cgroup's limit
 *                 counts) would not hold that many sandboxes' memory limits; none, said by
 *                 cr_engine_pool_note(), where sandboxes do not run in the ns tier. A request
 *                 that finds none ready waits its turn for one being made (first come, first
 *                 served, up to its timeout); it starts cold only when the pool cannot make
 *                 one. The result's JSON timings say which ("sandbox_start"). Worth it for a
 *                 long-lived engine (a server, --batch, the Python binding: their default)
 *   queue         requests that may wait for a warm sandbox at once, 1 to 4096 (default
 *                 128); one past them, or one that waited its whole timeout, fails at once
 *                 with CR_EBUSY, neither run nor recorded
 *   preload       comma-separated modules the warm sandboxes import first ("numpy,pandas");
 *                 auto: the finance stack (numpy, pandas), each where installed
 *   refill        1 (default): each warm sandbox used or dead is replaced; 0: not
 *   warmup        Python run once where the warm sandboxes are forked from, after the
 *                 imports (e.g. a small DataFrame groupby): what it initialises, each one
 *                 starts with. Output discarded, errors ignored; at most 64 KiB
 *   kvm_dir       the kvm tier's directory (vmlinuz, initrd.cpio), an existing directory
 *                 (default: $CALCROUTE_KVM_DIR, else PREFIX/lib/calcroute/kvm of the
 *                 installed library (make install-kvm), else build/kvm from a checkout's top)
 *   The in-process evaluator's limits (hitting one is a LimitError naming it):
 *   max_steps     evaluation steps, 1 to 2^62 (default 10^11; the timeout usually ends a run
 *                 first)
 *   max_eval_memory  bytes of evaluator memory, 1 MiB to 1 TiB (default 268435456)
 *   max_depth     nesting depth of the syntax tree, 1 to 200 (default 200)
 *   max_recursion call depth, 1 to 1000 (default 1000, CPython's recursion limit)
 *   max_int_bits  bits of an integer, numerator or denominator, 64 to 2^26 (default 2^20)
 *   max_str_len   characters of a string, elements of a list or dict, 1 to 2^30
 *                 (default 2^24)
 *   max_source    bytes of code, 1 to 64 MiB (default 1 MiB)
 *   max_stdout    bytes printed, 1 to 1 GiB (default 1 MiB)
 *
 * Thread safety: a cr_config is used by one thread at a time; cr_engine_open() copies it,
 * so it may be changed or freed afterwards. */
typedef struct cr_config cr_config;

/* A new set of options, each at its default; NULL on ENOMEM. The caller owns it:
 * cr_config_free(). */
CR_API cr_config *cr_config_new(void);
CR_API void cr_config_free(cr_config *cfg);          /* NULL is a no-op */
/* Sets option `key` from `value` (copied), or back to its default when value is NULL. On a
 * refusal the option keeps its previous value. */
CR_API cr_code cr_config_set(cr_config *cfg, const char *key, const char *value,
                             cr_error *err);
/* The option's value as text (the text it was set from), NULL when it has none ("audit"
 * unset) or `key` is not an option. Borrowed: valid until the option is set again. */
CR_API const char *cr_config_get(const cr_config *cfg, const char *key);
/* The name of the i-th option (0, 1, ...), NULL past the last: the list above. Thread
 * safety: any thread, any time (static strings). */
CR_API const char *cr_config_option(size_t i);

/* NULL on failure, with err filled. The caller owns the engine: cr_engine_close().
 * Thread safety: one engine may be shared by any number of threads, cr_run() on it from all
 * of them at once (the audit ledger's appends are serialized), and cr_engine_interrupt_fd()
 * too; cr_engine_open() from any thread (engines are independent); cr_engine_close() once, when
 * no run or other call on the engine is under way. */
CR_API cr_engine *cr_engine_open(const cr_config *cfg, cr_error *err);
CR_API void cr_engine_close(cr_engine *engine);      /* NULL is a no-op */
/* The options the engine was opened with: its own copy, read with cr_config_get(); valid
 * until cr_engine_close(). Any thread. */
CR_API const cr_config *cr_engine_config(const cr_engine *engine);
/* The warm pool now: *size the sandboxes it keeps (0: the engine has no pool), *ready those
 * ready to take a request. Any thread, any time (a service's metrics). */
CR_API void cr_engine_pool_state(cr_engine *engine, size_t *size, size_t *ready);
/* Requests waiting now for a warm sandbox (option "queue" bounds them). Any thread, any time. */
CR_API size_t cr_engine_pool_waiting(cr_engine *engine);
/* Readiness, for a service's probe or a caller that wants its first requests warm. `what`:
 * "pool" (the warm pool has been full once, waiting up to `seconds` for it, and can still
 * make workers; an engine without a pool passes), "ledger" (the audit ledger answers a read
 * now; a lost PostgreSQL connection is made again; none passes), or NULL for both. CR_OK
 * when ready; otherwise CR_EBUSY (the pool: its message says what it lacks, "pool: warming:
 * 1 of 4 workers ready") or the ledger's own error (CR_EAUDIT), with err filled. Any thread,
 * any time; blocks for up to `seconds` and for a ledger commit under way. */
CR_API cr_code cr_engine_ready(cr_engine *engine, const char *what, double seconds,
                               cr_error *err);
/* Why an engine opened with pool=auto has no pool (the tier it runs sandboxes in has none,
 * the ns tier cannot run here), or NULL. Borrowed, valid until cr_engine_close(). */
CR_API const char *cr_engine_pool_note(const cr_engine *engine);
/* Ends the engine's runs at once: each run under way, and each one started until
 * cr_engine_resume(), returns a result with status CR_EINTERRUPTED (a sandboxed run is killed
 * with everything it started; the in-process evaluator stops at its next budget check, within
 * milliseconds), keeping the output it had, and is recorded as interrupted. Async-signal-safe
 * and callable from any thread: meant for a SIGINT handler, or a thread that saw Ctrl-C.
 * NULL is a no-op. */
CR_API void cr_engine_interrupt(cr_engine *engine);
/* The same for a runtime whose signal handler can only write to a descriptor (Python's
 * signal.set_wakeup_fd()): any byte written to this one is cr_engine_interrupt(). It is
 * non-blocking, and the engine's: do not close it. -1 for NULL. */
CR_API int cr_engine_interrupt_fd(const cr_engine *engine);
/* Lets runs started from now on go ahead again (and empties the descriptor above). Not
 * async-signal-safe; from any thread, with runs under way or not. */
CR_API void cr_engine_resume(cr_engine *engine);

/* A new empty request (language auto). NULL on ENOMEM. The caller owns it.
 * Thread safety: a request is used by one thread at a time, cr_run() included (each setter
 * changes it; cr_run() reads it); distinct requests by distinct threads freely. */
CR_API cr_request *cr_request_new(void);
CR_API void cr_request_free(cr_request *req);        /* NULL is a no-op */
/* The setters copy what they are given; the caller keeps its own buffers. */
CR_API cr_code cr_request_set_code(cr_request *req, const char *code, size_t len);
CR_API cr_code cr_request_set_lang(cr_request *req, cr_lang lang);
/* Variables. Every way in (the three below; the Python binding goes through the JSON one)
 * reads a value the same way and refuses the same values with the same message: a number
 * is exact at any size ("0.1" is exactly 1/10, an integer past 64 bits is that integer); NaN
 * and the infinities (JSON's NaN, Infinity, -Infinity, or Python's spellings "nan", "inf",
 * "-infinity", any case, on the command line) are refused with CR_EUSAGE and
 * "variables: 'NAME': want finite numbers, got NaN"; a name that is not a Python name with
 * "variables: 'NAME' is not a Python name".
 *
 * One variable from text as on the command line: a number, or else a string. */
CR_API cr_code cr_request_set_var(cr_request *req, const char *name, const char *value,
                                  cr_error *err);
/* Variables from a JSON object {"name": value}; numbers keep their exact decimal text. */
CR_API cr_code cr_request_set_vars_json(cr_request *req, const char *json, size_t len,
                                        cr_error *err);
/* A whole request as one JSON object, the line format of `calc-route --batch`:
 * {"code": "...", "lang": "auto|python|dsl", "vars": {...}, "table": [[...]],
 *  "precision": 34, "rounding": "half-even", "answer_vars": "ans,result" (or a list of
 *  names: ["ans", "result"]), "seed": 7,
 *  "strip_fences": true, "id": any}
 * Only "code" is required; "id" does not change the request (cr_request_id() gives it, for
 * the caller to echo). Numbers in "vars" keep their exact decimal text; "precision" and "seed"
 * are checked as cr_request_set_option() checks them. */
CR_API cr_code cr_request_set_json(cr_request *req, const char *json, size_t len,
                                   cr_error *err);
/* The "id" of the last cr_request_set_json() object as compact JSON text, also when the
 * object was refused for another key: a number as written (past 64 bits too), a string,
 * list or object re-encoded. NULL when it had none, was no JSON object, or a number inside
 * a list or object is past a double's range. Borrowed from `req`: valid until the next
 * cr_request_set_json() or cr_request_free(). */
CR_API const char *cr_request_id(const cr_request *req);
/* Per-request policy: "precision" (1..1000 significant digits of inexact results),
 * "rounding" ("half-even" or "half-up"), "answer_vars" (up to 3 comma-separated variable
 * names tried in order for the final value; default "ans,result,answer"), "seed" (0 to
 * 4294967295: what a sandboxed run seeds random and numpy.random with; default derived from
 * the code and variables, so the same request draws the same numbers; the JSON's "seed" and
 * the audit record's policy give the seed used), "strip_fences" ("1": the code, set before or
 * after, is a model's reply: the code of its Markdown fenced blocks tagged python, py,
 * python3 or nothing runs, in order, and text without one runs whole; "0": code set from
 * then on is taken whole). */
CR_API cr_code cr_request_set_option(cr_request *req, const char *key, const char *value,
                                     cr_error *err);
/* Decide only (route and reasons), run nothing: what `calc-route --explain` shows. */
CR_API cr_code cr_request_set_explain(cr_request *req, int on);
/* This request's own interrupt, for a service running many requests on one engine that must
 * end one of them (its client went away) and not the others: once `fd` is readable, the run
 * of this request ends as cr_engine_interrupt() ends them all (status CR_EINTERRUPTED, a
 * sandbox killed, the evaluator stopped at its next budget check, recorded as interrupted),
 * and a run not yet begun does not begin. The caller keeps fd open until cr_run() returns and
 * makes it readable (a byte written to a pipe, an eventfd), from any thread. -1 (the
 * default): the engine's interrupt only. CR_EUSAGE for a NULL request or fd below -1. */
CR_API cr_code cr_request_set_interrupt_fd(cr_request *req, int fd);
/* A FinQA-style table: a JSON list of rows, each a list of strings, first cell the row name. */
CR_API cr_code cr_request_set_table_json(cr_request *req, const char *json, size_t len,
                                         cr_error *err);

/* Runs one request. CR_OK when a result exists, whatever the code did (it may have raised,
 * hit a limit or been rejected: see the accessors); *out is then the caller's, to free with
 * cr_result_free(). Another code means the engine failed (err says why; *out is NULL), and
 * nothing was recorded as a success. `req` is only borrowed.
 * Thread safety: see cr_engine_open() (any number at once on one engine) and
 * cr_request_new() (one request is not run by two threads at once). */
CR_API cr_code cr_run(cr_engine *engine, const cr_request *req, cr_result **out,
                      cr_error *err);
CR_API void cr_result_free(cr_result *res);          /* NULL is a no-op */

/* Accessors. Strings are borrowed from `res`: valid until cr_result_free(res).
 * Thread safety: a result is used by one thread at a time, cr_result_free() included
 * (cr_result_json() and the artifact accessors build what they give on first use); distinct
 * results by distinct threads freely. cr_route_name(): any thread, any time. */
CR_API cr_route cr_result_route(const cr_result *res);
CR_API const char *cr_route_name(cr_route route);    /* "inprocess", "ns", "kvm", "rejected" */
/* CR_OK, a CR_EPY_* code when the code raised, CR_ELIMIT, CR_ESYNTAX, CR_EUNSUPPORTED,
 * CR_EREJECTED, CR_ESANDBOX, CR_EINTERRUPTED. */
CR_API cr_code cr_result_status(const cr_result *res);
CR_API const cr_error *cr_result_error(const cr_result *res);   /* NULL when status is CR_OK */
CR_API const char *cr_result_stdout(const cr_result *res, size_t *len);
CR_API const char *cr_result_stderr(const cr_result *res, size_t *len);
/* The final value: NULL when there is none. repr is CPython's layout on the exact value;
 * fraction is "p/q" or "p" for numbers, NULL otherwise; exact is 0 when rounding fed it. */
CR_API const char *cr_result_value_repr(const cr_result *res);
CR_API const char *cr_result_value_type(const cr_result *res);
CR_API const char *cr_result_value_fraction(const cr_result *res);
CR_API int cr_result_value_exact(const cr_result *res);
CR_API size_t cr_result_reason_count(const cr_result *res);
/* The i-th reason: its code ("import:numpy"), and where. NULL past the end. */
CR_API const char *cr_result_reason(const cr_result *res, size_t i, int *line, int *col,
                                    const char **snippet);
/* Files the sandboxed code wrote under /out: the i-th one's name, size and SHA-256 (64 hex
 * digits); NULL past the end. Borrowed from `res`. A name that is not UTF-8 is given with
 * U+FFFD for each ill-formed sequence; its exact bytes are the JSON's "name_base64". */
CR_API size_t cr_result_artifact_count(const cr_result *res);
CR_API const char *cr_result_artifact(const cr_result *res, size_t i, uint64_t *size,
                                      const char **sha256);
/* The audit record: seq (0 when not recorded) and the record's hash as 64 hex digits. */
CR_API uint64_t cr_result_audit_seq(const cr_result *res);
CR_API const char *cr_result_audit_hash(const cr_result *res);
/* The whole result as one JSON object (the shape of `calc-route --json`), every member
 * present; NULL only when memory runs out. Text that is not UTF-8 (stdout, stderr, messages
 * and names from sandboxed code) is shown with U+FFFD for each ill-formed sequence, as
 * Python's errors="replace" does; "stdout_replaced"/"stderr_replaced" say when that
 * happened, and cr_result_stdout()/cr_result_stderr() keep the exact bytes. */
CR_API const char *cr_result_json(const cr_result *res);

/* ---- audit ledger (audit/): declared below this line ---- */

/* A ledger opened for inspection (calc-audit). Engines record through their option "audit";
 * these functions read, verify, sign and replay. Hashes are 64 lowercase hex digits.
 * A ledger is a SQLite file's path, or a PostgreSQL URI (postgresql://... or postgres://...,
 * libpq's syntax; libpq5 is loaded when the first such ledger opens).
 * Thread safety: a handle is used by one thread at a time, from cr_audit_open() to
 * cr_audit_close(); distinct handles (on the same ledger too: the store serialises appends)
 * by distinct threads freely; cr_audit_keygen() from any thread. */
typedef struct cr_audit cr_audit;

/* cr_audit_open()'s writable: creates the ledger (a SQLite file, PostgreSQL tables) when
 * there is none yet, then opens it writable. */
#define CR_AUDIT_CREATE 2
/* Opens a ledger; writable (1) adds checkpoints; without CR_AUDIT_CREATE the ledger must
 * exist. NULL on failure with err filled; the caller owns the handle: cr_audit_close(). */
CR_API cr_audit *cr_audit_open(const char *path, int writable, cr_error *err);
CR_API void cr_audit_close(cr_audit *a);             /* NULL is a no-op */

/* The last record: seq 0 and 64 zeros when empty. */
CR_API cr_code cr_audit_head(cr_audit *a, uint64_t *seq, char hash_hex[65], cr_error *err);

/* What cr_audit_verify() found. ok is 1 when every check passed; otherwise bad_seq names the
 * first broken seq (0 when the problem has no seq) and problem says why ("hash mismatch",
 * "gap", "bad prev link", a checkpoint that does not match, ...). */
typedef struct {
    int ok;
    uint64_t records;             /* rows checked */
    uint64_t head_seq;
    char head_hash[65];
    uint64_t bad_seq;
    char problem[256];
    uint64_t checkpoints;         /* checkpoints whose signature and head matched */
    uint64_t checkpoint_seq;      /* the highest of them; records after it are not signed */
    uint64_t foreign_checkpoints; /* signed by another key than pubkey_path's (ignored) */
} cr_audit_report;

/* Recomputes the whole chain and checks every checkpoint. With pubkey_path (a file written by
 * cr_audit_keygen()), only checkpoints by that key count and at least one must exist, which
 * detects a chain rewritten or truncated behind it. CR_OK when the verification ran (see
 * rep->ok); another code when the ledger could not be read. */
CR_API cr_code cr_audit_verify(cr_audit *a, const char *pubkey_path, cr_audit_report *rep,
                               cr_error *err);

/* Record `seq` as one JSON object. On CR_OK *json is the caller's (malloc'd, NUL-terminated):
 * free() it. CR_ELEDGER when there is no such record. */
CR_API cr_code cr_audit_show(cr_audit *a, uint64_t seq, char **json, size_t *len,
                             cr_error *err);
/* Calls `each` with every record from..to (0: no bound) as one JSON object, in seq order.
 * The text is borrowed for the call. A nonzero return from `each` stops with CR_EIO. */
CR_API cr_code cr_audit_export(cr_audit *a, uint64_t from, uint64_t to,
                               int (*each)(const char *json, size_t len, void *arg), void *arg,
                               cr_error *err);

/* Writes a new Ed25519 key pair: key_path (secret, mode 0600) and key_path + ".pub". Fails
 * rather than overwrite an existing file. */
CR_API cr_code cr_audit_keygen(const char *key_path, cr_error *err);
/* Signs the current head (seq and hash) with the secret key in key_path and stores the
 * checkpoint in the ledger. *seq and hash_hex receive what was signed. */
CR_API cr_code cr_audit_checkpoint(cr_audit *a, const char *key_path, uint64_t *seq,
                                   char hash_hex[65], cr_error *err);

/* The transparency-log view: the records are the leaves of an RFC 6962 Merkle tree (leaf
 * i is record seq i + 1, its data the record's canonical encoding). Every output is
 * NUL-ended text the caller frees with free().
 *
 * cr_audit_note(): the tree of records 1..size (0: all) as a C2SP tlog-checkpoint note
 * (origin line, tree size, base64 root hash, blank line, Ed25519 signature line whose key
 * name is the origin), signed with the secret key in key_path. origin NULL:
 * "calcroute.audit/" and 16 hex digits of the SHA-256 of the public key. */
CR_API cr_code cr_audit_note(cr_audit *a, const char *key_path, const char *origin,
                             uint64_t size, char **note, cr_error *err);
/* An inclusion proof of record seq in the tree of `size` records (0: all), carrying the
 * record itself, and a consistency proof that the tree of old_size records is a prefix of
 * the one of new_size (0: all). CR_ELEDGER for a seq or size the ledger does not have. */
CR_API cr_code cr_audit_prove(cr_audit *a, uint64_t seq, uint64_t size, char **proof,
                              cr_error *err);
CR_API cr_code cr_audit_prove_consistency(cr_audit *a, uint64_t old_size, uint64_t new_size,
                                          char **proof, cr_error *err);

/* What cr_audit_verify_proof() checked. */
typedef struct {
    int consistency;          /* 0: an inclusion proof of record seq; 1: a consistency one */
    uint64_t seq, size, old_size;
    char origin[256];         /* the checkpoint's */
    char leaf_hash[65];       /* inclusion: the record's leaf hash */
} cr_audit_proof_report;
/* Checks a proof file offline, without the ledger: the checkpoint note at note_path must be
 * signed by the public key at pubkey_path (cr_audit_keygen()'s ".pub" file), and the proof
 * must lead to its root; a consistency proof also needs the older checkpoint (old_note_path,
 * same key). CR_OK when everything holds; CR_ELEDGER naming the first thing that does not
 * (a bad signature, a malformed note or proof, a record not in the tree, a tree that does
 * not extend the old one); CR_EIO or CR_EUSAGE when a file cannot be read. Thread-safe. */
CR_API cr_code cr_audit_verify_proof(const char *proof_path, const char *note_path,
                                     const char *old_note_path, const char *pubkey_path,
                                     cr_audit_proof_report *rep, cr_error *err);

/* Proofs to carry away, in the public formats (C2SP tlog-proof, tlog-policy, signed-note
 * vkeys), checked with no ledger and no network.
 *
 * cr_audit_prove_bundle(): the tlog-proof bundle of record seq: the checkpoint note at
 * note_path verbatim (its cosignatures too; the tree is its size and its root must be this
 * ledger's), or with note_path NULL one signed now with key_path (origin as cr_audit_note()
 * takes it) for the tree of `size` records (0: all). Its extra data names the record's seq
 * and leaf hash. */
CR_API cr_code cr_audit_prove_bundle(cr_audit *a, uint64_t seq, const char *note_path,
                                     const char *key_path, const char *origin, uint64_t size,
                                     char **bundle, cr_error *err);
/* The signed-note verifier key ("name+hex ID+base64") of the public key at pubkey_path, a
 * log's (type 1, Ed25519 note signatures) or with witness set a witness's (type 4,
 * tlog-cosignature); name NULL: cr_audit_note()'s default origin. NUL-ended, newline-ended;
 * the caller frees. */
CR_API cr_code cr_audit_vkey(const char *pubkey_path, const char *name, int witness,
                             char **vkey, cr_error *err);
/* What cr_audit_verify_bundle() checked. */
typedef struct {
    uint64_t index, size;
    uint64_t seq;             /* the record the extra data names (index + 1), or 0 */
    char leaf_hash[65];
    char origin[256], quorum[256];
    char witnesses[2048];     /* the policy's names of the witnesses that cosigned */
    int nwitnesses;
} cr_audit_bundle_report;
/* Checks the bundle at bundle_path against the policy at policy_path: the checkpoint
 * signed by a log the policy names (its key name the origin), every signature by a key it
 * names valid, the quorum of witness cosignatures met, and the path leading from the entry's
 * leaf hash to the signed root. The entry is the file at entry_path (its bytes, hashed as an
 * RFC 6962 leaf) or, NULL, the leaf hash the bundle's extra data names. CR_ELEDGER naming
 * the first thing that does not hold; CR_EUSAGE for a malformed policy; CR_EIO when a file
 * cannot be read. Thread-safe. */
CR_API cr_code cr_audit_verify_bundle(const char *bundle_path, const char *policy_path,
                                      const char *entry_path, cr_audit_bundle_report *rep,
                                      cr_error *err);

/* What cr_audit_tiles() wrote. */
typedef struct {
    uint64_t size, tiles, bundles;
    uint64_t bundles_skipped;  /* entry bundles left out: a record over 65535 bytes */
    int files;                 /* files written (full tiles already there are kept) */
    char skipped[256];         /* the last bundle left out, and why; "" when none */
} cr_audit_tiles_report;
/* Writes the tree as C2SP tlog-tiles under dir, for any HTTP server or mirror: tile/L/N and
 * tile/entries/N (N as x001/x234/067; partial tiles with .p/W), then `checkpoint`: the note at
 * note_path, or one signed now with key_path (origin as cr_audit_note() takes it). The
 * note's root must be this ledger's; full tiles already present are kept. */
CR_API cr_code cr_audit_tiles(cr_audit *a, const char *dir, const char *note_path,
                              const char *key_path, const char *origin,
                              cr_audit_tiles_report *rep, cr_error *err);
/* The same against a note given as text (NUL-ended): cr_cosigners_gather()'s, say. */
CR_API cr_code cr_audit_tiles_note(cr_audit *a, const char *dir, const char *note,
                                   cr_audit_tiles_report *rep, cr_error *err);

/* A C2SP tlog-witness (calc-audit witness serves it over HTTP). It follows the logs whose
 * `log` lines the tlog-policy at policy_path names, keeps the latest checkpoint it cosigned
 * of each in the file at state_path (created at the first cosignature), and cosigns with the
 * secret key at key_path (cr_audit_keygen()) under the key name `name` (its vkey:
 * cr_audit_vkey() with witness set). NULL with err filled when a file cannot be read. */
typedef struct cr_witness cr_witness;
CR_API cr_witness *cr_witness_open(const char *state_path, const char *policy_path,
                                   const char *key_path, const char *name, cr_error *err);
/* add-checkpoint: the request body (old size line, consistency proof lines, a blank line,
 * the checkpoint); returns the HTTP status (200, 400, 403, 404, 409, 422; 500 when the
 * state cannot be written) with the answer's body in *answer (NUL-ended; the caller frees)
 * and its Content-Type. The state is durable before 200 is returned. Thread-safe. */
CR_API unsigned cr_witness_add(cr_witness *w, const char *body, size_t len, char **answer,
                               const char **content_type);
CR_API void cr_witness_close(cr_witness *w);            /* NULL is a no-op */

/* The log's side: the witnesses a tlog-policy names with a URL (`witness NAME VKEY URL`, the
 * URL a plain http:// submission prefix), asked to cosign the checkpoints. A handle keeps
 * the size each witness holds between calls (one thread at a time). */
typedef struct cr_cosigners cr_cosigners;
CR_API cr_cosigners *cr_cosigners_open(const char *policy_path, cr_error *err);
/* The checkpoint note (a cr_audit_note() of this ledger) with the cosignatures of the
 * witnesses that gave one, in *cosigned (the caller frees); *got counts them and `why` (at
 * least 1 byte) names each witness that did not, and why. */
CR_API cr_code cr_cosigners_gather(cr_cosigners *c, cr_audit *a, const char *note,
                                   char **cosigned, int *got, char *why, size_t why_len,
                                   cr_error *err);
CR_API void cr_cosigners_close(cr_cosigners *c);        /* NULL is a no-op */

/* Replay: re-runs records through cr_run() on an engine without audit and compares status,
 * route, value (fraction, repr), stdout and error byte for byte. In-process records must match
 * (a difference fails); sandboxed records are re-run only with CR_REPLAY_SANDBOX and their
 * differences are reported without failing; others are skipped.
 * Each record runs under what its policy kept: precision, rounding, answer variables, seed,
 * the limits (timeout, memory and the evaluator's max_*; older records lack the latter and
 * run under the defaults) and a sandboxed run's interpreter. A recorded limit above the
 * option's default is lowered to it unless flags has CR_REPLAY_TRUST_LIMITS (a ledger is
 * untrusted input); when the result then differs, the difference is that limit ("timeout":
 * recorded "30", replayed "run under 10: ..."), not the fields. Two runs stopped by the same
 * clock (the evaluator's CPU time, the sandbox's wall clock or CPU time) match when their
 * limit's name and message do and one's stdout and stderr begin the other's: where a clock
 * runs out is no property of the code. Nor is whether it runs out: a run that ended within its
 * recorded timeout and not here runs again under the default timeout and is compared; one
 * the clock stopped that ends within it here is the difference "timeout" (recorded: the
 * limit's message). */
enum { CR_REPLAY_SANDBOX = 1, CR_REPLAY_TRUST_LIMITS = 2 };
typedef struct {
    uint64_t replayed, matched, skipped;
    uint64_t differences;         /* in-process records that differ, sandboxed ones whose data
                                     directory does not match: replay failed */
    uint64_t sandbox_differences; /* reported, not failures */
} cr_audit_replay_report;
/* `diff` (may be NULL) is called once per differing field; strings are borrowed for the
 * call, NULL meaning absent. CR_OK when the replay ran (see rep->differences); CR_ELEDGER
 * when from or to names a record past the ledger's end (nothing is replayed then). */
CR_API cr_code cr_audit_replay(cr_audit *a, uint64_t from, uint64_t to, int flags,
                               void (*diff)(uint64_t seq, const char *field, const char *want,
                                            const char *got, void *arg),
                               void *arg, cr_audit_replay_report *rep, cr_error *err);
/* cr_audit_replay() with sandboxed records re-run with data_dir (NULL: none) as their data
 * directory. A sandboxed record that keeps a manifest of its data directory is first checked
 * against data_dir's: each file added, missing or differing in size or SHA-256 is a
 * difference "data/NAME" (a record replayed without data_dir, one difference "data"); such
 * a record is not run and counts in rep->differences, a failure. A recorded interpreter this
 * host lacks ("interpreter", the engine's refusal as replayed) and, after a re-run, another
 * interpreter version ("interpreter") or a recorded package loaded in another version
 * ("packages/NAME") is a sandboxed difference, and the result's fields are not compared: they
 * are that other environment's. */
CR_API cr_code cr_audit_replay_data(cr_audit *a, uint64_t from, uint64_t to, int flags,
                                    const char *data_dir,
                                    void (*diff)(uint64_t seq, const char *field,
                                                 const char *want, const char *got,
                                                 void *arg),
                                    void *arg, cr_audit_replay_report *rep, cr_error *err);

#ifdef __cplusplus
}
#endif
#endif
