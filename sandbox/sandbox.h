/* sandbox/sandbox.h: the sandbox module's interface: the table of tiers, the dispatch to
 * them, the warm pool; and through sandbox/job/job.h, the job and outcome they share.
 *
 * A job (code, interpreter, data directory, artifact directory, limits) goes in; an outcome
 * (exit, limit hit, capped stdout/stderr, final value, exception, artifacts, timings) comes
 * out. The tiers differ only in how they isolate: sandbox/ns/ uses Linux namespaces +
 * seccomp, sandbox/kvm/ a microVM. Both run the same in-sandbox runner (sandbox_runner_source)
 * and parse its report with sandbox_report_parse(), so a value or an exception looks the same
 * whichever tier produced it.
 *
 * Typical use (the router):
 *
 *     sandbox_job job;
 *     sandbox_outcome oc;
 *     sandbox_job_init(&job);                  // defaults: python3, 10 s, 512 MiB, ...
 *     job.tier = CR_TIER_AUTO;                 // or CR_TIER_NS / CR_TIER_KVM
 *     job.code = code; job.code_len = len;
 *     job.data_dir = cfg->data_dir;            // NULL: no /data
 *     job.out_dir = cfg->out_dir;              // NULL: artifacts hashed, not kept
 *     job.limits.wall_s = cfg->timeout_s;
 *     job.limits.memory_bytes = (uint64_t)cfg->memory_mib << 20;
 *     if ((rc = sandbox_run(&job, &oc, err)) != CR_OK) return rc;  // setup failed
 *     if (oc.limit != SANDBOX_LIMIT_NONE) ...  // exit status 3; sandbox_limit_name(oc.limit)
 *     else if (oc.raised) ...                  // oc.error_type, oc.error_message, oc.error_line
 *     sandbox_outcome_free(&oc);
 */
#ifndef CR_SANDBOX_H
#define CR_SANDBOX_H

#include "sandbox/job/job.h"

/* ---- the tiers -------------------------------------------------------------------------
 * One row per sandbox tier, in the order of calcroute.h's cr_tier from CR_TIER_NS (and of
 * cr_route from CR_ROUTE_NS; sandbox.c asserts both): its id (CR_TIER_<id>), its word (the
 * "tier" option, --explain, the result's route, the ledger's record, replay), the route a
 * request it runs takes (CR_ROUTE_<route>), and its ops (sandbox_tier_<ops>, see
 * sandbox/job/job.h). Adding a tier is its directory and a row here (docs/DESIGN.md, "Adding
 * a sandbox tier"). */
#define SANDBOX_TIERS(X) \
    X(NS, "ns", NS, ns) \
    X(KVM, "kvm", KVM, kvm)

#define SANDBOX_TIER_DECLARE(id, word, route, ops) extern const sandbox_tier sandbox_tier_##ops;
SANDBOX_TIERS(SANDBOX_TIER_DECLARE)
#undef SANDBOX_TIER_DECLARE
/* The words of the "tier" option, in cr_tier's order: "auto|ns|kvm|none". */
#define SANDBOX_TIER_CHOICE(id, word, route, ops) word "|"
#define SANDBOX_TIER_CHOICES "auto|" SANDBOX_TIERS(SANDBOX_TIER_CHOICE) "none"

/* The tier's ops; NULL for CR_TIER_AUTO and CR_TIER_NONE, which run no sandbox. */
const sandbox_tier *sandbox_tier_ops(cr_tier tier);
/* A tier's word: a row's, "auto", "none"; "unknown" for another value. Static. */
const char *sandbox_tier_word(cr_tier tier);
/* The tier whose row has this word (len bytes, not NUL-ended), or -1. */
int sandbox_tier_find(const char *word, size_t len);
/* The route a request the tier runs takes (CR_ROUTE_REJECTED for AUTO and NONE), and back:
 * the tier that runs a route, CR_TIER_NONE for inprocess and rejected. */
cr_route sandbox_tier_route(cr_tier tier);
cr_tier sandbox_route_tier(cr_route route);


/* The tier the job runs in: its own, or for CR_TIER_AUTO what that resolves to for this job
 * on this host, with the reason in why (left untouched for another tier). */
cr_tier sandbox_job_tier(const sandbox_job *job, char *why, size_t why_len);
/* Runs the job in the tier it names. CR_OK when the code ran, whatever it did (raised, hit a
 * limit, was killed): see the outcome. CR_EUSAGE for a bad job, CR_ESANDBOX when the tier
 * could not be set up (err names the step and errno, e.g. "ns: mount proc: EPERM"); then the
 * outcome holds nothing to free, though freeing it is harmless. Safe to call from several
 * threads at once; the calling thread must stay alive until it returns (the sandbox dies with
 * it). */
cr_code sandbox_run(const sandbox_job *job, sandbox_outcome *out, cr_error *err);

/* 1 when the tier can run on this host; else 0 with the reason in why ("" on success).
 * CR_TIER_AUTO: 1 when either can. Cheap enough to call per request (probes are cached).
 * The kvm tier's files are looked for where kvm_dir_resolve(NULL) finds them. */
int sandbox_tier_available(cr_tier tier, char *why, size_t why_len);
/* The tier CR_TIER_AUTO resolves to on this host with the guest of kvm_dir (NULL: the
 * default places), with the reason in why. */
cr_tier sandbox_tier_auto(const char *kvm_dir, char *why, size_t why_len);

/* ---- warm pool (ns tier; sandbox/pool.c) ------------------------------------------------
 * Workers made before any job: each an ns sandbox (namespaces, tmpfs root, cgroup, seccomp)
 * whose runner has started, imported the preload modules and forked the code's process, and
 * waits for one job; it runs that job and is destroyed. What a worker is made with is its
 * key: interpreter, data directory, and the limits it bakes in (memory, processes, /tmp and
 * /out sizes and files, CPU seconds rounded up); the wall clock and output caps are the job's
 * own. A job whose key matches no ready worker, or that finds none ready, starts cold
 * (outcome.warm 0, start_note says why). A worker that dies before its job is replaced (with
 * refill on); close kills the idle ones and waits until every process and cgroup of theirs
 * is gone. Workers are forked by the pool's zygote, a warm runner that imported the preload
 * list once, each into namespaces of its own; where the zygote cannot run (it failed to
 * start three times, or the allowed directory lies under /tmp or /out, which workers mount
 * afresh) each worker starts python itself. */
#define SANDBOX_POOL_MAX 64          /* workers in one pool */
#define SANDBOX_PRELOAD_MAX 1024     /* bytes of the preload list */
#define SANDBOX_WARMUP_MAX 65536     /* bytes of the warm-up program */
#define SANDBOX_QUEUE_MAX 4096       /* requests waiting for a worker at once */
typedef struct sandbox_pool sandbox_pool;
typedef struct {
    unsigned size;            /* workers kept ready, 1..SANDBOX_POOL_MAX */
    const char *preload;      /* comma-separated modules imported before any job ("numpy,
                                 pandas"); NULL: none. One that fails to import is left to
                                 the job that imports it */
    int refill;               /* 1: a worker used or dead is replaced; 0: `size` workers in
                                 all, then every job starts cold */
    const char *interpreter;  /* the key (copied): NULL means SANDBOX_DEFAULT_INTERPRETER */
    const char *data_dir;     /* NULL: none */
    const char *allow_dir;    /* NULL: none */
    sandbox_limits limits;    /* 0 fields: the defaults */
    const char *warmup;       /* Python the zygote runs once after the preload imports (what
                                 it initialises, every worker starts with); output
                                 discarded, errors ignored. NULL: none. Copied */
    int no_zygote;            /* 1: every worker starts python itself (for comparison) */
    unsigned queue;           /* requests that may wait for a worker at once, first come,
                                 first served, each up to its job's wall clock; past them
                                 (or past its wait) a request fails with CR_EBUSY. 1 to
                                 SANDBOX_QUEUE_MAX */
} sandbox_pool_config;
/* Starts the pool (workers start in the background). CR_EUSAGE for a bad configuration,
 * CR_ESANDBOX when the ns tier cannot run here. The caller owns *pool: sandbox_pool_close(). */
cr_code sandbox_pool_open(const sandbox_pool_config *cfg, sandbox_pool **pool, cr_error *err);
/* sandbox_run() on a warm worker when one matches its key. None ready: the request waits its
 * turn for one being made while the pool can make one (else it starts cold); CR_EBUSY when
 * the queue is full or its wait outlasts the job's wall clock; an interrupt while waiting is
 * an interrupted outcome. pool NULL: sandbox_run(). Thread-safe; the pool must outlive every
 * call. */
cr_code sandbox_pool_run(sandbox_pool *pool, const sandbox_job *job, sandbox_outcome *out,
                         cr_error *err);
/* Ends every idle worker and waits for them (and one still starting, for its start). No call
 * of sandbox_pool_run() may be running. NULL is a no-op. */
void sandbox_pool_close(sandbox_pool *pool);
/* What a readiness check wants to know: workers ready now, requests waiting for one, and
 * whether the pool has been full once (`size` ready at once) and can still give a request
 * a warm worker (make one, or with refill off, one it made is unused yet); when it is not,
 * why says so. */
typedef struct {
    unsigned ready, waiting, size;
    int warm;
    char why[160];
} sandbox_pool_health;
void sandbox_pool_state(sandbox_pool *pool, sandbox_pool_health *h);
/* Ready workers now, and the host pid of up to max runners (pid 1 of each) in pids. */
size_t sandbox_pool_ready(sandbox_pool *pool, pid_t *pids, size_t max);
/* Waits up to `seconds` until n workers are ready: 1 when they are, 0 (timeout, workers
 * fail to start, or with refill off too few are left unused) otherwise. */
int sandbox_pool_wait_ready(sandbox_pool *pool, size_t n, double seconds);

#endif
