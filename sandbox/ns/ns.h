/* sandbox/ns/ns.h: the pieces of the namespace tier (internal to sandbox/ns/). */
#ifndef CR_SANDBOX_NS_H
#define CR_SANDBOX_NS_H

#include <limits.h>
#include <linux/filter.h>
#include <stdint.h>
#include <sys/types.h>

#include "sandbox/job/job.h"

/* The tier's entry points (its ops, sandbox_tier_ns, hold them): sandbox_run()'s contract,
 * job->tier ignored. */
cr_code sandbox_ns_run(const sandbox_job *job, sandbox_outcome *out, cr_error *err);
int sandbox_ns_available(char *why, size_t why_len);

/* ---- cgroup (cgroup.c) ---------------------------------------------------------------------
 * One fresh cgroup per run, under the caller's own cgroup, in whichever hierarchy the host
 * offers: cgroup v1 (separate memory, pids, cpuacct hierarchies) or v2 (one directory). A
 * controller the host lacks leaves its path empty and says so in `note`. */
typedef struct {
    int version;                  /* 0: none at all, 1, 2 */
    char mem[PATH_MAX];           /* v1 memory dir, or the v2 dir; "" when absent */
    char pids[PATH_MAX];          /* v1 pids dir ("" when absent; v2 uses mem) */
    char cpu[PATH_MAX];           /* v1 cpuacct dir ("" when absent; v2 uses mem) */
    int has_mem, has_pids, has_cpu;
    /* The figures' files, open from the start (-1: absent) and read again with pread(), so
     * a run's end walks no path (docs/DESIGN.md, warm pool). Closed by destroy. */
    int fd_cpu, fd_peak, fd_oom, fd_pids;
    char note[200];
} ns_cgroup;

/* Creates the cgroup(s) and writes the limits. Never fails the run: what cannot be made is
 * absent and named in cg->note (the tier then leans on rlimits). */
void ns_cgroup_create(ns_cgroup *cg, const sandbox_limits *lim);
/* Moves pid into every cgroup made. 0 or -errno. */
int ns_cgroup_attach(const ns_cgroup *cg, pid_t pid);
/* Figures after (or during) the run; -1 when unknown. */
int64_t ns_cgroup_cpu_ns(const ns_cgroup *cg);
int64_t ns_cgroup_peak_bytes(const ns_cgroup *cg);
int64_t ns_cgroup_oom_kills(const ns_cgroup *cg);
int64_t ns_cgroup_pids_refused(const ns_cgroup *cg);
/* SIGKILL to every process in the cgroup (cgroup.kill, else each listed pid, until a listing
 * names none not signalled). 0, or -1 when no cgroup could be read. */
int ns_cgroup_kill(const ns_cgroup *cg);
/* Waits up to `seconds` for the cgroup to hold no process: 1 when empty (or absent), else 0. */
int ns_cgroup_wait_empty(const ns_cgroup *cg, double seconds);
/* Removes what ns_cgroup_create() made (retrying while the last tasks leave). */
void ns_cgroup_destroy(ns_cgroup *cg);

/* What of /proc the tier masks for the code, cold and warm alike (child.c: the why, and how). */
typedef struct {
    const char *path;
    int dir;                      /* 1: a directory, which lists empty; 0: a file, read empty */
} ns_proc_mask;
extern const ns_proc_mask ns_proc_masked[];
extern const size_t ns_proc_masked_count;

/* ---- seccomp (seccomp.c) -------------------------------------------------------------------
 * The filter as a BPF program, built once per process with libseccomp and then only loaded
 * (prctl) in the child, where allocating is not safe; zygote 1: the warm pool's zygote's,
 * which also allows unshare(), mount(), sethostname() and capset(). NULL with `why` filled
 * on failure. Owned by the
 * module: never freed. */
const struct sock_fprog *ns_seccomp_program(int zygote, char *why, size_t why_len);

/* ---- why namespaces were refused (userns.c) -------------------------------------------------
 * What the kernel's error `err` from a clone() with CLONE_NEWUSER means on this host, read
 * from PROC (/proc; a test passes a directory of its own) for a caller that is root or not:
 * the setting or restriction that refused it, in `why` ("" for an errno it does not know). */
void ns_userns_refusal(const char *proc, int err, int root, char *why, size_t len);

/* ---- a run for the kvm tier's guest (ns.c) -------------------------------------------------
 * The guest init runs the ns tier inside its VM, so that the code meets the same sandbox on
 * both tiers; it gets the job already encoded and sends /out and the report on to the host,
 * which collects and parses them with the ns tier's own code. */
typedef struct {
    const char *job;              /* in: sandbox_job_encode()'s bytes, or NULL to encode *job */
    size_t job_len;
    int out_fd;                   /* out: /out as a descriptor (the caller closes it), not
                                     collected; -1 when the run never got that far */
    cr_buf report;                /* out: the runner's report as it came (cr_buf_free) */
} ns_handoff;

/* sandbox_ns_run(), handing /out and the report over when hand is non-NULL. On an error
 * nothing is handed over (out_fd -1, report empty). */
cr_code ns_run(const sandbox_job *job, ns_handoff *hand, sandbox_outcome *out, cr_error *err);

/* ---- a warm worker for the pool (ns.c, pool.c) ---------------------------------------------
 * ns_run_warm() makes the sandbox of `key` (interpreter, data_dir, limits; its code is
 * ignored) before any job exists: the runner starts in warm mode, imports `preload` and
 * forks the code's process. Once the runner says it is ready, ready() is called on this
 * thread (the one pid 1 dies with) with pid 1's pidfd; it blocks until a job is handed over
 * and returns it, whose key must match, or returns NULL to end the worker (the run then
 * fails with CR_ESANDBOX and nothing to free). From the handoff on, the run is the job's as
 * sandbox_ns_run() would make it, but that its wall clock and CPU time count from the
 * handoff and out->warm is 1.
 * With run_elsewhere set, the job's thread makes the run itself instead: while ready()
 * blocks, another thread calls ns_warm_run() with the job; ready() returns (non-NULL) once
 * that is over, and ns_run_warm() then only releases the worker (CR_OK, `out` empty). */
typedef struct ns_warm {
    const char *preload;          /* comma-separated module names; "" for none */
    /* in: 1 makes the pool's zygote instead: a warm runner that takes no job but forks
     * workers, each into namespaces of its own, on request over `chan`, which is set while
     * ready() runs (ready() must return NULL). */
    int zygote;
    const char *warmup;           /* in, for the zygote: the pool's warm-up program, or NULL */
    int cancel_fd;                /* in: readable when the pool closes: a start ends at once */
    /* in, for a worker: a zygote's channel to fork it from (the run closes it), or -1 to
     * start python afresh; out, for a zygote: its channel. */
    int chan;
    const sandbox_job *(*ready)(struct ns_warm *w, int pidfd, pid_t pid);
    int run_elsewhere;            /* in: see above */
    void *run;                    /* the run's state while ready() runs: ns_warm_run()'s */
    int lost;                     /* out: pid 1 was killed from outside with no sign of the
                                     job (the run fails; the job may run elsewhere) */
    int setup_failed;             /* out: a step of the sandbox's set-up failed */
    /* out: the run's cgroup, left for the caller to remove (ns_cgroup_destroy()) once it has
     * handed the outcome over: the kernel can take milliseconds to let an emptied cgroup go,
     * time no request should wait for. */
    ns_cgroup cg;
    int cg_left;
    /* out: pid 1, not yet reaped (or 0): a run ends once the runner's report is whole and
     * the streams are closed, before the kernel has torn its namespaces down; the caller
     * kills it and the cgroup (ns_cgroup_kill()) and reaps it after the handoff, before
     * removing the cgroup. */
    pid_t pid_left;
} ns_warm;
cr_code ns_run_warm(const sandbox_job *key, ns_warm *warm, sandbox_outcome *out, cr_error *err);
/* The job on a worker that waits in ready() with run_elsewhere set, made on the calling
 * thread: one hand-over between threads fewer each way. Once only, then ready() returns. */
cr_code ns_warm_run(ns_warm *warm, const sandbox_job *job, sandbox_outcome *out, cr_error *err);
/* What ns_run_warm() left to the caller (pid_left, cg_left), whether its worker was used or
 * ended idle: pid 1 killed with its cgroup and reaped, or for a worker the zygote forked
 * (forked 1: not our child, the zygote reaps it) its cgroup emptied; then the cgroup
 * removed. The one teardown of the pool's workers and zygotes and the kvm guest's unused
 * worker. */
void ns_warm_release(ns_warm *warm, int forked);
/* ns_run_warm() for the kvm guest's init, which holds the job already encoded: ready() sets
 * hand->job and hand->job_len before it returns the job (whose limits the run takes), and
 * /out and the report are handed over as ns_run() hands them. */
cr_code ns_run_warm_hand(const sandbox_job *key, ns_warm *warm, ns_handoff *hand,
                         sandbox_outcome *out, cr_error *err);

#endif
