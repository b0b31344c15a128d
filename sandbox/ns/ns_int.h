/* sandbox/ns/ns_int.h: what the namespace tier's three files share (docs/DESIGN.md): the
 * plan the parent prepares for the child (child.c), the control messages, one run's state,
 * and the steps each calls in another. Private to sandbox/ns/. */
#ifndef CR_SANDBOX_NS_INT_H
#define CR_SANDBOX_NS_INT_H

#include <sys/resource.h>

#include "sandbox/ns/ns.h"

#define NS_FLAGS (CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | \
                  CLONE_NEWUTS)
#define NEWROOT "/tmp"           /* covered by our own tmpfs, in our mount namespace only */
#define REPORT_MAX (16u << 20)   /* bytes of runner report kept */
#define CPU_POLL_MS 20           /* how often the parent reads the cgroup's CPU clock */
#define DRAIN_S 3.0              /* after a kill, how long to wait for the pipes to close */
/* A warm run's first milliseconds, in which the parent leaves its output in the pipes (64 KiB
 * each) until the report comes: a short run then wakes it once, not also for its output while
 * the code's process and the runner are finishing, which on a busy machine took the CPU they
 * needed. */
#define QUIET_MS 10
#define HIGH_FD 100              /* where the runner's descriptors wait before dup2() */
#define OVERFLOW_ID 65534        /* the host's nobody/nogroup: who the sandbox is outside */

/* The steps of set-up, named in the error the parent reports. */
enum ns_step {
    STEP_NONE, STEP_SYNC, STEP_CGROUP_NS, STEP_PRIVATE, STEP_ROOT, STEP_MKDIR, STEP_USR,
    STEP_LIBDIRS, STEP_ETC, STEP_DATA, STEP_TMP, STEP_OUT, STEP_DEV, STEP_PROC, STEP_PIVOT,
    STEP_RO_ROOT, STEP_HOSTNAME, STEP_LOOPBACK, STEP_SEND_OUT, STEP_CAPS, STEP_NNP,
    STEP_SECCOMP, STEP_FDS, STEP_RLIMIT, STEP_EXEC, STEP_ALLOW,
    STEP_FORKED,       /* 26: runner.py's STEP_FORKED */
    STEP_COUNT
};

/* Control messages; runner.py's zygote and its workers send them too (MSG_*): HELLO, a forked
 * worker's first, whose credentials name its pid; EXIT, its runner's wait status (the zygote
 * sends it for the runner it cloned). */
enum { MSG_SETUP_FAILED = 1, MSG_OUT_DIR = 3, MSG_HELLO = 4, MSG_EXIT = 5 };
struct ns_msg { int kind, step, err, status; };

/* Host directories that may be symlinks into /usr (merged /usr) or real directories. */
static const char *const lib_dirs[] = { "bin", "sbin", "lib", "lib64", "lib32", "libx32" };
#define N_LIB_DIRS (sizeof lib_dirs / sizeof lib_dirs[0])

/* Everything the child needs, prepared by the parent before clone(). */
typedef struct {
    int ctl;                   /* child's end of the control socket */
    int parent_fds[4];         /* the parent's ends, which the child closes at once */
    int out_w, err_w, val_w;   /* write ends of stdout, stderr, report */
    int job_fd;                /* memfd with the encoded job */
    int runner_fd;             /* memfd with the runner's source */
    const char *data_dir;      /* the caller's data directory, or NULL */
    const char *allow_dir;     /* the caller's allowed directory outside /usr, or NULL */
    char allow_dst[PATH_MAX + sizeof NEWROOT];   /* where it goes: NEWROOT + allow_dir */
    int data_tree;             /* its detached clone (data_open()), or -1 */
    char tmp_opts[96], out_opts[96];
    const char *interpreter;
    char *argv[10];
    char *envp[16];
    const struct sock_fprog *filter;
    struct rlimit rl_cpu, rl_nproc, rl_fsize, rl_data, rl_nofile, rl_core;
    struct rlimit rl_msgqueue, rl_sigpending, rl_memlock;
    char lib_link[N_LIB_DIRS][64];   /* readlink() of each host lib dir; "" when a dir */
    int lib_kind[N_LIB_DIRS];        /* 0 absent, 1 symlink, 2 directory */
    int has_mplrc, has_fonts;        /* the host has /etc/matplotlibrc, /etc/fonts */
    int zygote;                      /* the warm pool's zygote: see drop_privileges() */
    int unbatch;                     /* a warm pool's: SCHED_BATCH is its threads', not ours */
} ns_plan;
/* How a masked /proc directory is covered (child.c, and the zygote's spec in warm.c). */
#define PROC_MASK_TMPFS "size=4k,nr_inodes=1,mode=0555"
#define PROC_MASK_FLAGS (MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC)

/* One run's state, from its plan to its outcome, passed through the steps of ns_run_at(). */
typedef struct {
    /* the call */
    const sandbox_job *job;    /* the key until a warm worker's job arrives, then the job */
    ns_handoff *hand;
    ns_warm *warm;
    sandbox_outcome *out;
    cr_error *err;
    sandbox_limits lim;        /* job->limits, resolved */
    int forked;                /* a worker the zygote forks (not our child: its runner's
                                  status comes as MSG_EXIT) */
    /* prepared */
    ns_plan plan;
    const struct sock_fprog *tier_filter;
    cr_buf jobbuf, report;
    int ctl[2], po[2], pe[2], pv[2];
    int job_fd, runner_fd;
    int warm_fd;               /* a warm worker's end of its job socket */
    int data_tree;             /* our descriptor of plan.data_tree, until the child has its
                                  own and the clone its id mapping; then -1 */
    char fdarg[2][8];
    /* started */
    ns_cgroup cg;
    int cg_made;
    pid_t pid;
    int pidfd;
    int runner_pidfd;          /* a forked worker's runner's (pidfd is the worker's) */
    void *stack;
    int out_dir_fd;            /* /out, as the child passed it */
    /* supervised */
    double t0;
    int64_t cpu_base;          /* a warm worker's CPU before its job */
    double cpu_next;           /* when the parent reads the cgroup's CPU clock next */
    int runner_status, setup_failed, killed, ctl_open, reaped, exit_known;
    int early;                 /* a warm run over before pid 1 was reaped: its status + 1 */
    int ran;                   /* a warm run that ns_warm_run() made on another thread */
    struct ns_msg fail;
    struct rusage ru;
} ns_run_state;

/* ---- across the files ----------------------------------------------------------------- */

/* child.c: the child's whole life, cloned by the parent with the plan as its argument. */
int ns_child(void *arg);
/* ns.c: the parent's steps that the warm protocol takes too. */
double now_s(void);
cr_code ns_fail(cr_error *err, const char *what, int errnum);
int recv_ctl(int ctl, struct ns_msg *m, int *passed_fd, pid_t *sender);
cr_code job_bytes(ns_run_state *r, const char **p, size_t *len);
cr_code run_supervise(ns_run_state *r);
cr_code run_collect(ns_run_state *r);
/* warm.c: the warm protocol's steps, which the parent's run takes for a warm worker. */
pid_t warm_wait(ns_warm *warm, int forked, pid_t pid, int pidfd, int ctl, int pv,
                int *out_dir_fd, int *runner_pidfd, struct ns_msg *fail, cr_error *err);
pid_t zygote_fork(int chan, int ctl, int *const fds[5], cr_error *err);
cr_code zygote_spec(const ns_plan *p, const struct sock_fprog *tier, const char *warmup,
                    cr_buf *b, cr_error *err);
cr_code warm_job_start(ns_run_state *r, const sandbox_job *real);

#endif
