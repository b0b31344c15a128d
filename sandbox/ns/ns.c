/* sandbox/ns/ns.c: the namespace tier: the parent's steps (the child's are in child.c, the warm
 * protocol in warm.c, what they share in ns_int.h).
 *
 * The parent clones a child into new user, pid, mount, net, ipc and uts namespaces (and a
 * cgroup namespace once it sits in the run's cgroup). The child, pid 1 of its namespace,
 * builds a fresh root on a tmpfs (read-only binds of /usr, the /etc entries the interpreter
 * needs and the caller's allowed directory, /data read-only, size-capped /tmp and /out, a
 * /proc of its own pid namespace, a /dev of four devices), pivots into it, drops every
 * capability, sets no_new_privs, loads the seccomp filter and becomes the runner (python3
 * -s -S, in an environment of our own, working directory /out). The parent reads stdout,
 * stderr and the runner's report while the run goes on, enforces the wall clock, the CPU
 * time of the whole cgroup and the output cap until pid 1 is gone (whatever the code did
 * with its descriptors), and kills pid 1 and the cgroup at a limit.
 *
 * Artifacts come back through a descriptor of /out that the child passes over the control
 * socket before exec:
 * the parent reads the files after everything inside is dead, so nothing can swap them while
 * they are copied, and no mount or file of the run ever exists on the host.
 *
 * Between clone() and execve() the child only makes system calls on data the parent prepared
 * (no malloc, no stdio): it shares the caller's memory, and the caller may have threads. */

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/seccomp.h>
#include <math.h>
#include <net/if.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <sanitizer/asan_interface.h>

#include "sandbox/ns/ns_int.h"

#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/asan_interface.h>
#endif

static const char *const step_names[STEP_COUNT] = {
    [STEP_NONE] = "?", [STEP_SYNC] = "wait for the parent", [STEP_CGROUP_NS] = "unshare cgroup",
    [STEP_PRIVATE] = "make / private", [STEP_ROOT] = "mount root tmpfs",
    [STEP_MKDIR] = "create mount points", [STEP_USR] = "bind /usr",
    [STEP_LIBDIRS] = "bind /lib directories", [STEP_ETC] = "bind /etc files",
    [STEP_DATA] = "bind /data", [STEP_TMP] = "mount /tmp", [STEP_OUT] = "mount /out",
    [STEP_DEV] = "populate /dev", [STEP_PROC] = "mount proc", [STEP_PIVOT] = "pivot_root",
    [STEP_RO_ROOT] = "make root read-only", [STEP_HOSTNAME] = "sethostname",
    [STEP_LOOPBACK] = "bring up loopback", [STEP_SEND_OUT] = "pass /out to the parent",
    [STEP_CAPS] = "drop capabilities", [STEP_NNP] = "no_new_privs",
    [STEP_SECCOMP] = "load seccomp filter",
    [STEP_FDS] = "set up descriptors", [STEP_RLIMIT] = "setrlimit", [STEP_EXEC] = "exec python",
    [STEP_ALLOW] = "bind the allowed directory",
    [STEP_FORKED] = "set up a worker forked by the zygote",
};

/* ---- the parent ---------------------------------------------------------------------------- */

double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

cr_code ns_fail(cr_error *err, const char *what, int errnum)
{
    return cr_error_set(err, CR_ESANDBOX, 0, 0, "ns: %s: %s", what, strerror(errnum));
}

static int write_proc(pid_t pid, const char *file, const char *text)
{
    char path[64];
    int fd, rc = 0;
    snprintf(path, sizeof path, "/proc/%ld/%s", (long)pid, file);
    if ((fd = open(path, O_WRONLY | O_CLOEXEC)) < 0) return -1;
    if (write(fd, text, strlen(text)) != (ssize_t)strlen(text)) rc = -1;
    close(fd);
    return rc;
}

/* Who the sandbox is on the host. Root outside becomes nobody outside: inside it is uid 0
 * without capabilities, and a process that escaped would own nothing on the host. */
static int host_ids(uid_t *uid, gid_t *gid)
{
    *uid = geteuid();
    *gid = getegid();
    if (*uid != 0) return 0;
    *uid = *gid = OVERFLOW_ID;
    return 1;
}

static int write_maps(pid_t pid)
{
    char map[64];
    uid_t uid;
    gid_t gid;
    host_ids(&uid, &gid);
    snprintf(map, sizeof map, "0 %lu 1\n", (unsigned long)uid);
    if (write_proc(pid, "uid_map", map) < 0) return -1;
    if (write_proc(pid, "setgroups", "deny") < 0 && errno != ENOENT) return -1;
    snprintf(map, sizeof map, "0 %lu 1\n", (unsigned long)gid);
    return write_proc(pid, "gid_map", map);
}

/* The data directory as the caller reaches it. When the sandbox is another user than the
 * caller (root, mapped to nobody), a directory under a private parent would be out of its
 * reach, and the caller's own files unreadable: the caller clones the directory's mount here
 * (detached, read-only; mount_data() layers it), and data_idmap() maps the caller's ids onto
 * the sandbox's on that clone. Otherwise, or where the kernel has no open_tree(), -1: the
 * child opens the path itself, as the user it is on the host (the caller, unless root). */
static int data_open(const char *dir, sandbox_outcome *out)
{
    uid_t uid;
    gid_t gid;
    int fd;
    if (!host_ids(&uid, &gid)) return -1;
    if ((fd = open_tree(AT_FDCWD, dir, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC)) < 0)
        sandbox_note_add(out->tier_note, sizeof out->tier_note,
                         "/data opened inside as nobody (open_tree: %s)", strerror(errno));
    return fd;
}

/* Once the sandbox's user namespace is mapped, the clone takes its ids: a file the caller
 * (uid 0) owns is the sandbox's own (uid 0 inside). A kernel or filesystem without idmapped
 * mounts (before Linux 5.12, NFS, tmpfs before 6.3...) leaves the ids as they are, so the
 * sandbox reads /data as nobody (the note says so); the private parent stays no obstacle. */
static int data_idmap(int tree, pid_t pid, sandbox_outcome *out)
{
    char path[64];
    struct mount_attr a = { .attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID |
                                        MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC };
    int ns, rc;
    snprintf(path, sizeof path, "/proc/%ld/ns/user", (long)pid);
    if ((ns = open(path, O_RDONLY | O_CLOEXEC)) < 0) return -1;
    a.attr_set |= MOUNT_ATTR_IDMAP;
    a.userns_fd = (uint64_t)ns;
    if ((rc = mount_setattr(tree, "", AT_EMPTY_PATH, &a, sizeof a)) < 0) {
        sandbox_note_add(out->tier_note, sizeof out->tier_note,
                         "/data read as nobody: no idmapped mount (%s)", strerror(errno));
        a.attr_set &= ~(uint64_t)MOUNT_ATTR_IDMAP;
        rc = mount_setattr(tree, "", AT_EMPTY_PATH, &a, sizeof a);
    }
    close(ns);
    return rc;
}

static void plan_rlimits(ns_plan *p, const sandbox_limits *lim)
{
    rlim_t cpu = (rlim_t)ceil(lim->cpu_s);
    /* The per-process CPU rlimit is a backstop behind the parent's clock on the cgroup. */
    p->rl_cpu = (struct rlimit){ cpu + 1, cpu + 2 };
    /* One above the cgroup's pids.max, so that the cgroup refuses first and says so. */
    p->rl_nproc = (struct rlimit){ lim->max_procs + 1, lim->max_procs + 1 };
    rlim_t fsize = lim->tmp_bytes > lim->artifact_bytes ? lim->tmp_bytes : lim->artifact_bytes;
    p->rl_fsize = (struct rlimit){ fsize, fsize };
    p->rl_data = (struct rlimit){ lim->memory_bytes, lim->memory_bytes };
    p->rl_nofile = (struct rlimit){ 1024, 1024 };
    p->rl_core = (struct rlimit){ 0, 0 };
    /* Counted for the caller's user on the host as well as in here (the kernel charges every
     * user namespace up the chain), so what the run takes, the caller's other processes lose:
     * POSIX message queues and locked SysV shared memory not at all, queued signals a few. */
    p->rl_msgqueue = (struct rlimit){ 0, 0 };
    p->rl_sigpending = (struct rlimit){ 256, 256 };
    p->rl_memlock = (struct rlimit){ 0, 0 };
}

static void plan_lib_dirs(ns_plan *p)
{
    for (size_t i = 0; i < N_LIB_DIRS; i++) {
        char host[16] = "/";
        struct stat sb;
        ssize_t n;
        strcat(host, lib_dirs[i]);
        p->lib_kind[i] = 0;
        if (lstat(host, &sb) < 0) continue;
        if (S_ISLNK(sb.st_mode) &&
            (n = readlink(host, p->lib_link[i], sizeof p->lib_link[i] - 1)) > 0) {
            p->lib_link[i][n] = 0;
            p->lib_kind[i] = 1;
        } else if (S_ISDIR(sb.st_mode)) {
            p->lib_kind[i] = 2;
        }
    }
}

#define CHILD_STACK (256u << 10)

/* clone() sharing our memory (CLONE_VM), on a stack of its own that the caller unmaps with
 * unmap_stack(*stack) once the child has exec'd or exited. All signals stay blocked
 * across the call, so no handler of the caller's runs on the child's stack. */
static void unmap_stack(void *st)
{
#ifdef __SANITIZE_ADDRESS__
    /* The child's frames poisoned the sanitizer's shadow of it (shared: CLONE_VM) and it left
     * them without returning; whatever is mapped here next (SQLite's WAL index, say) must not
     * inherit that poison. */
    __asan_unpoison_memory_region(st, CHILD_STACK);
#endif
    munmap(st, CHILD_STACK);
}

static pid_t clone_vm(int (*fn)(void *), void *arg, int flags, void **stack)
{
    sigset_t all, old;
    pid_t pid;
    int e;
    void *st = mmap(NULL, CHILD_STACK, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (st == MAP_FAILED) return -1;
#ifdef __SANITIZE_ADDRESS__
    /* The sanitizer keeps shadow state of an earlier child's frames at this address, which
     * that child left without returning; start from a clean stack. */
    __asan_unpoison_memory_region(st, CHILD_STACK);
#endif
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pid = clone(fn, (char *)st + CHILD_STACK, CLONE_VM | flags | SIGCHLD, arg);
    e = errno;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (pid < 0) {
        munmap(st, CHILD_STACK);
        errno = e;
        return -1;
    }
    *stack = st;
    return pid;
}

static int probe_child(void *arg)
{
    (void)arg;
    return 0;
}

/* One probe per process: can we clone into every namespace we need? */
static atomic_int probe_state;   /* 0 unknown, 1 works, 2 does not */
static char probe_why[320];
static pthread_mutex_t probe_lock = PTHREAD_MUTEX_INITIALIZER;

int sandbox_ns_available(char *why, size_t why_len)
{
    char tmp[200] = "";
    if (!why || !why_len) { why = tmp; why_len = sizeof tmp; }
    if (atomic_load(&probe_state) == 0) {
        pthread_mutex_lock(&probe_lock);
        if (atomic_load(&probe_state) == 0) {
            int st = 0;
            pid_t pid;
            void *stack = NULL;
            if (!ns_seccomp_program(0, probe_why, sizeof probe_why)) {
                atomic_store(&probe_state, 2);
            } else if ((pid = clone_vm(probe_child, NULL, NS_FLAGS, &stack)) < 0) {
                int e = errno;
                char cause[160];
                ns_userns_refusal("/proc", e, geteuid() == 0, cause, sizeof cause);
                snprintf(probe_why, sizeof probe_why,
                         "cannot create user/pid/mount/net namespaces: %s%s%s%s", strerror(e),
                         cause[0] ? " (" : "", cause, cause[0] ? ")" : "");
                atomic_store(&probe_state, 2);
            } else {
                while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
                unmap_stack(stack);
                atomic_store(&probe_state, 1);
            }
        }
        pthread_mutex_unlock(&probe_lock);
    }
    if (atomic_load(&probe_state) == 1) { why[0] = 0; return 1; }
    snprintf(why, why_len, "%s", probe_why);
    return 0;
}

typedef struct {
    int fd;
    cr_buf *buf;
    int open;
} stream;

/* Receives one control message; returns 0 on EOF, 1 otherwise. A descriptor it carries goes
 * to *passed_fd (the first only); with SO_PASSCRED on, *sender is the sender's pid as we
 * see it. */
int recv_ctl(int ctl, struct ns_msg *m, int *passed_fd, pid_t *sender)
{
    struct iovec iov = { m, sizeof *m };
    union {
        char buf[CMSG_SPACE(sizeof(int)) + CMSG_SPACE(sizeof(struct ucred))];
        struct cmsghdr align;
    } u;
    struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
                         .msg_controllen = sizeof u.buf };
    ssize_t n;
    memset(m, 0, sizeof *m);
    do n = recvmsg(ctl, &mh, MSG_CMSG_CLOEXEC); while (n < 0 && errno == EINTR);
    if (n <= 0) return 0;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
            int fd;
            memcpy(&fd, CMSG_DATA(c), sizeof fd);
            if (*passed_fd < 0) *passed_fd = fd;
            else close(fd);
        } else if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS && sender) {
            struct ucred cred;
            memcpy(&cred, CMSG_DATA(c), sizeof cred);
            *sender = cred.pid;
        }
    if (n != sizeof *m) m->kind = 0;
    return 1;
}

/* Ends the run: pid 1, whose death takes its namespace with it, and the cgroup, should
 * anything of the run live outside that namespace. By its pidfd when there is one: a worker
 * the zygote forked is not our child, and its pid could be another process's once the
 * zygote has reaped it. */
static void kill_all(pid_t pid, int pidfd, const ns_cgroup *cg)
{
    if (pidfd < 0 || syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0) < 0) kill(pid, SIGKILL);
    ns_cgroup_kill(cg);
}

static void kill_run(pid_t pid, int pidfd, const ns_cgroup *cg, sandbox_outcome *out,
                     sandbox_limit why, const char *fmt, double figure)
{
    if (out->limit == SANDBOX_LIMIT_NONE) {
        out->limit = why;
        snprintf(out->limit_detail, sizeof out->limit_detail, fmt, figure);
    }
    kill_all(pid, pidfd, cg);
}

/* A new memfd holding len bytes of p, at offset 0; -1 with errno. */
static int memfd_of(const char *name, const char *p, size_t len)
{
    int fd = memfd_create(name, MFD_CLOEXEC), e;
    if (fd < 0) return -1;
    for (size_t off = 0; off < len;) {
        ssize_t n = write(fd, p + off, len - off);
        if (n < 0 && errno == EINTR) continue;
        if (n == 0) errno = EIO;
        if (n <= 0) goto fail;
        off += (size_t)n;
    }
    if (lseek(fd, 0, SEEK_SET) == 0) return fd;
fail:
    e = errno;
    close(fd);
    errno = e;
    return -1;
}

static int gone(int pidfd)
{
    struct pollfd pf = { pidfd, POLLIN, 0 };
    return poll(&pf, 1, 0) > 0;
}

static cr_code ns_run_at(const sandbox_job *job, ns_handoff *hand, ns_warm *warm,
                         sandbox_outcome *out, cr_error *err);

cr_code sandbox_ns_run(const sandbox_job *job, sandbox_outcome *out, cr_error *err)
{
    return ns_run_at(job, NULL, NULL, out, err);
}

static int ns_available(const char *dir, char *why, size_t why_len)
{
    (void)dir;   /* the tier has no files of its own */
    return sandbox_ns_available(why, why_len);
}

const sandbox_tier sandbox_tier_ns = {
    .available = ns_available,
    .run = sandbox_ns_run,
};

cr_code ns_run(const sandbox_job *job, ns_handoff *hand, sandbox_outcome *out, cr_error *err)
{
    return ns_run_at(job, hand, NULL, out, err);
}

cr_code ns_run_warm(const sandbox_job *key, ns_warm *warm, sandbox_outcome *out, cr_error *err)
{
    return ns_run_at(key, NULL, warm, out, err);
}

cr_code ns_run_warm_hand(const sandbox_job *key, ns_warm *warm, ns_handoff *hand,
                         sandbox_outcome *out, cr_error *err)
{
    return ns_run_at(key, hand, warm, out, err);
}


/* The job's bytes for the runner: already encoded by the caller (the kvm guest), or encoded
 * here into r->jobbuf. */
cr_code job_bytes(ns_run_state *r, const char **p, size_t *len)
{
    cr_code rc;
    if (r->hand && r->hand->job) {
        *p = r->hand->job;
        *len = r->hand->job_len;
        return CR_OK;
    }
    if ((rc = sandbox_job_encode(r->job, &r->jobbuf, r->err)) != CR_OK) return rc;
    *p = r->jobbuf.p;
    *len = r->jobbuf.len;
    return CR_OK;
}

/* The python command line and environment. */
static void plan_exec(ns_run_state *r)
{
    ns_plan *plan = &r->plan;
    ns_warm *warm = r->warm;
    /* argv[0] is the interpreter's own path, not a name found on PATH: a virtual
     * environment's python knows itself by it (pyvenv.cfg beside it). Not -I: its -E would
     * ignore PYTHONHASHSEED, and the environment is wholly ours anyway; PYTHONSAFEPATH is -P,
     * which an interpreter before 3.11 would refuse as an option. */
    plan->argv[0] = (char *)plan->interpreter;
    plan->argv[1] = "-s";
    plan->argv[2] = "-S";
    plan->argv[3] = "-c";
    plan->argv[4] = SANDBOX_RUNNER_BOOTSTRAP;
    plan->argv[5] = r->fdarg[0];
    plan->argv[6] = r->fdarg[1];
    if (warm) plan->argv[7] = (char *)warm->preload;
    plan->unbatch = warm != NULL;
    if (warm && warm->zygote) {
        plan->argv[8] = "zygote";
        plan->zygote = 1;
    }
    plan->envp[0] = "PATH=/usr/bin:/bin";
    plan->envp[1] = "HOME=/tmp";
    plan->envp[2] = "TMPDIR=/tmp";
    plan->envp[3] = "LANG=C.UTF-8";
    plan->envp[4] = "MPLBACKEND=Agg";
    plan->envp[5] = "PYTHONSAFEPATH=1";
    plan->envp[6] = "PYTHONHASHSEED=0";   /* set and dict order, hash(): the same every run */
    /* The libraries' caches (matplotlib's font list) in one place the dropped-file report
     * leaves out (SANDBOX_CACHE_DIR). */
    plan->envp[7] = "XDG_CACHE_HOME=" SANDBOX_CACHE_DIR;
    plan->envp[8] = "MPLCONFIGDIR=" SANDBOX_CACHE_DIR "/matplotlib";
    /* One BLAS thread: a float reduction then sums in the same order whatever the host's
     * core count, and OpenBLAS never meets the process limit with a thread per core. */
    plan->envp[9] = "OPENBLAS_NUM_THREADS=1";
    plan->envp[10] = "OMP_NUM_THREADS=1";
}

/* Step 1: everything the child needs, checked and made before anything runs: the plan, the
 * filters, the job and the runner as descriptors, the channels. */
static cr_code run_prepare(ns_run_state *r)
{
    const sandbox_job *job = r->job;
    ns_warm *warm = r->warm;
    ns_plan *plan = &r->plan;
    cr_error *err = r->err;
    char why[200];
    const char *enc = NULL;
    size_t enc_len = 0;
    cr_code rc;
    int fd;

    plan->interpreter = job->interpreter ? job->interpreter : SANDBOX_DEFAULT_INTERPRETER;
    if ((rc = sandbox_interpreter_check(plan->interpreter, job->allow_dir, err)) != CR_OK)
        return rc;
    if (job->allow_dir && strncmp(job->allow_dir, "/usr/", 5) != 0) {
        plan->allow_dir = job->allow_dir;
        snprintf(plan->allow_dst, sizeof plan->allow_dst, NEWROOT "%s", job->allow_dir);
    }
    if (!sandbox_ns_available(why, sizeof why))
        return cr_error_set(err, CR_ESANDBOX, 0, 0, "ns: %s", why);
    /* No filter, no run: the child loads plan->filter and nothing else stands in for it. */
    if (!(r->tier_filter = ns_seccomp_program(0, why, sizeof why)) ||
        !(plan->filter = ns_seccomp_program(warm && warm->zygote, why, sizeof why)))
        return cr_error_set(err, CR_ESANDBOX, 0, 0, "ns: %s", why);
    /* Both directories are checked now, so a bad one fails before anything runs; neither
     * descriptor is kept: the child opens /data itself (or takes the clone data_open()
     * makes), and /out comes back from the child. */
    if (job->out_dir) {
        if ((fd = open(job->out_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
            return cr_error_sys(err, CR_EUSAGE, job->out_dir, errno);
        close(fd);
    }
    if (job->data_dir) {
        if ((fd = open(job->data_dir, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
            return cr_error_sys(err, CR_EUSAGE, job->data_dir, errno);
        close(fd);
        plan->data_dir = job->data_dir;
    }
    r->data_tree = plan->data_tree =
        job->data_dir && !r->forked ? data_open(job->data_dir, r->out) : -1;
    if (warm) {
        /* The job comes later, through a socket (a closed reader fails a send(), where a
         * pipe would raise SIGPIPE); the zygote's requests are messages, each with its
         * descriptors. */
        int sv[2];
        if (socketpair(AF_UNIX, (warm->zygote ? SOCK_SEQPACKET : SOCK_STREAM) | SOCK_CLOEXEC,
                       0, sv) < 0)
            return ns_fail(err, "job socket", errno);
        r->job_fd = sv[1];
        r->warm_fd = sv[0];
    } else {
        if ((rc = job_bytes(r, &enc, &enc_len)) != CR_OK) return rc;
        if ((r->job_fd = memfd_of("calcroute-job", enc, enc_len)) < 0)
            return ns_fail(err, "write job", errno);
    }
    /* The runner comes as a descriptor, not as `-c`'s text: ps then shows a short line. One
     * per run, which costs microseconds: a descriptor kept for the process could be closed
     * or replaced under the library by a caller that closes what it did not open. */
    if (!r->forked && (r->runner_fd = memfd_of("calcroute-runner", sandbox_runner_source,
                                               sandbox_runner_source_len)) < 0)
        return ns_fail(err, "write the runner", errno);
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, r->ctl) < 0 ||
        pipe2(r->po, O_CLOEXEC) < 0 || pipe2(r->pe, O_CLOEXEC) < 0 || pipe2(r->pv, O_CLOEXEC) < 0)
        return ns_fail(err, "pipes", errno);
    plan->ctl = r->ctl[1];
    plan->parent_fds[0] = r->ctl[0];
    plan->parent_fds[1] = r->po[0];
    plan->parent_fds[2] = r->pe[0];
    plan->parent_fds[3] = r->pv[0];
    plan->out_w = r->po[1];
    plan->err_w = r->pe[1];
    plan->val_w = r->pv[1];
    plan->job_fd = r->job_fd;
    plan->runner_fd = r->runner_fd;
    snprintf(plan->tmp_opts, sizeof plan->tmp_opts, "size=%llu,nr_inodes=%u,mode=1777",
             (unsigned long long)r->lim.tmp_bytes, 4096u);
    /* Inodes bound the number of files (directories included) the code can leave in /out. */
    snprintf(plan->out_opts, sizeof plan->out_opts, "size=%llu,nr_inodes=%u,mode=0777",
             (unsigned long long)r->lim.artifact_bytes, r->lim.max_artifacts * 2 + 8);
    plan_exec(r);
    plan_rlimits(plan, &r->lim);
    plan_lib_dirs(plan);
    plan->has_mplrc = access("/etc/matplotlibrc", R_OK) == 0;
    plan->has_fonts = access("/etc/fonts/fonts.conf", R_OK) == 0;

    if (warm && warm->zygote) {
        /* Its workers' limits are the key's; the zygote itself lives as long as the pool,
         * forking them: its CPU time is not a run's, and its process count would be all of
         * theirs (the kernel counts a user's processes in every user namespace up the
         * chain), so it keeps the caller's limits there. */
        if ((rc = zygote_spec(plan, r->tier_filter, warm->warmup, &r->jobbuf, err)) != CR_OK)
            return rc;
        if (getrlimit(RLIMIT_CPU, &plan->rl_cpu) < 0 || getrlimit(RLIMIT_NPROC, &plan->rl_nproc) < 0)
            return ns_fail(err, "getrlimit", errno);
    }
    return CR_OK;
}

/* Step 2: the child in its cgroup and namespaces, told to go; a warm worker waits for its
 * job here, which is then sent and the run's clocks restarted (or, with run_elsewhere, the
 * whole run made by ns_warm_run() on another thread). */
static cr_code run_start(ns_run_state *r)
{
    ns_warm *warm = r->warm;
    cr_error *err = r->err;

    ns_cgroup_create(&r->cg, &r->lim);
    r->cg_made = 1;
    sandbox_note_add(r->out->tier_note, sizeof r->out->tier_note, "%s", r->cg.note);

    if (r->forked) {
        int *const fds[5] = { &r->ctl[1], &r->po[1], &r->pe[1], &r->job_fd, &r->pv[1] };
        r->pid = zygote_fork(warm->chan, r->ctl[0], fds, err);
        close(warm->chan);
        warm->chan = -1;
        if (r->pid < 0) return CR_ESANDBOX;
        if ((r->pidfd = (int)syscall(SYS_pidfd_open, r->pid, 0)) < 0)
            return ns_fail(err, "pidfd_open", errno);
    } else if ((r->pid = clone_vm(ns_child, &r->plan, NS_FLAGS, &r->stack)) < 0) {
        return ns_fail(err, "clone", errno);
    }
    if (!r->forked) {   /* zygote_fork() closed them */
        close(r->ctl[1]); r->ctl[1] = -1;
        /* Only the runner may hold the reading end of a warm job, so that its death fails
         * the send. */
        if (warm) { close(r->job_fd); r->job_fd = -1; }
        close(r->runner_fd); r->runner_fd = -1;
        close(r->po[1]); r->po[1] = -1;
        close(r->pe[1]); r->pe[1] = -1;
        close(r->pv[1]); r->pv[1] = -1;
    }
    if (!r->forked && write_maps(r->pid) < 0) return ns_fail(err, "write uid/gid map", errno);
    if (r->data_tree >= 0) {
        if (data_idmap(r->data_tree, r->pid, r->out) < 0)
            return ns_fail(err, "prepare /data", errno);
        /* The child has a descriptor of the clone of its own (clone() copied our table, the
         * number the same) and the mapping is the mount's: ours has done its part. The plan
         * keeps the number: the child reads it from our memory. */
        close(r->data_tree);
        r->data_tree = -1;
    }
    if (ns_cgroup_attach(&r->cg, r->pid) < 0) return ns_fail(err, "join cgroup", errno);
    if (send(r->ctl[0], "g", 1, MSG_NOSIGNAL) != 1) return ns_fail(err, "start the child", errno);

    if (r->pidfd < 0) r->pidfd = (int)syscall(SYS_pidfd_open, r->pid, 0);
    if (warm && warm->zygote) {
        for (size_t off = 0; off < r->jobbuf.len;) {   /* one message */
            ssize_t n = send(r->warm_fd, r->jobbuf.p + off, r->jobbuf.len - off, MSG_NOSIGNAL);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) return ns_fail(err, "the zygote's set-up", errno);
            off += (size_t)n;
        }
        warm->chan = r->warm_fd;
    }
    if (warm) {
        const int drop[2] = { r->po[0], r->pe[0] };
        const sandbox_job *real;
        pid_t runner;
        if (r->pidfd < 0) return ns_fail(err, "pidfd_open", errno);
        if (!(runner = warm_wait(warm, r->forked, r->pid, r->pidfd, r->ctl[0], r->pv[0],
                                 &r->out_dir_fd, &r->runner_pidfd, &r->fail, err))) {
            if (!r->fail.kind) return CR_ESANDBOX;
            r->setup_failed = warm->setup_failed = 1;
            return CR_OK;
        }
        /* Output of the warm-up is not the job's. */
        for (int i = 0; i < 2; i++) {
            char chunk[4096];
            struct pollfd p = { drop[i], POLLIN, 0 };
            while (poll(&p, 1, 0) == 1 && read(drop[i], chunk, sizeof chunk) > 0) {}
        }
        /* Idle from here until its job: the CPU time it spent so far is not the job's. */
        if (r->cg.has_cpu && (r->cpu_base = ns_cgroup_cpu_ns(&r->cg)) < 0) r->cpu_base = 0;
        warm->run = r;
        real = warm->ready(warm, r->forked ? r->runner_pidfd : r->pidfd, runner);
        warm->run = NULL;
        if (!real) {
            cr_error_set(err, CR_ESANDBOX, 0, 0, "ns: the warm worker ended before its job");
            return CR_ESANDBOX;
        }
        if (warm->run_elsewhere) {
            r->ran = 1;
            return CR_OK;
        }
        return warm_job_start(r, real);
    }
    return CR_OK;
}

/* Step 3: the streams read and the limits enforced until pid 1 is gone (or, warm, its report
 * is whole), then whatever is left of the run killed and its status taken. */
cr_code run_supervise(ns_run_state *r)
{
    const sandbox_job *job = r->job;
    sandbox_outcome *out = r->out;
    const sandbox_limits *lim = &r->lim;
    ns_cgroup *cg = &r->cg;
    /* The clocks are checked on every turn, whatever the code did with its descriptors: the
     * loop ends when pid 1 is gone and the streams are read, never merely because the code
     * closed them, and pid 1's exit wakes it (pidfd; without one, a short poll). */
    double deadline = r->t0 + lim->wall_s, drain_until = 0;
    double quiet_until = out->warm ? r->t0 + QUIET_MS / 1e3 : 0;
    stream st[3] = { { r->po[0], &out->stdout_buf, 1 }, { r->pe[0], &out->stderr_buf, 1 },
                     { r->pv[0], &r->report, 1 } };
    for (;;) {
        struct pollfd pfd[6];
        int nfd = 0, map[6], timeout_ms, quiet;
        double now = now_s();
        if (!r->reaped && !r->killed && now >= deadline) {
            kill_run(r->pid, r->pidfd, cg, out, SANDBOX_LIMIT_WALL, "wall clock %.3f s", lim->wall_s);
            r->killed = 1;
        }
        /* Every CPU_POLL_MS, not on every turn: a run that prints a line reads it thrice. */
        if (!r->reaped && !r->killed && cg->has_cpu && now >= r->cpu_next) {
            int64_t cpu = ns_cgroup_cpu_ns(cg);
            r->cpu_next = now + CPU_POLL_MS / 1e3;
            if (cpu >= 0 && (double)(cpu - r->cpu_base) / 1e9 >= lim->cpu_s) {
                kill_run(r->pid, r->pidfd, cg, out, SANDBOX_LIMIT_CPU, "CPU time %.3f s", lim->cpu_s);
                r->killed = 1;
            }
        }
        if (r->killed && !drain_until) drain_until = now + DRAIN_S;
        if (drain_until && now >= drain_until) break;
        quiet = now < quiet_until && !r->report.len && !r->killed && !r->reaped;
        for (int i = quiet ? 2 : 0; i < 3; i++)
            if (st[i].open) { pfd[nfd] = (struct pollfd){ st[i].fd, POLLIN, 0 }; map[nfd++] = i; }
        if (r->ctl_open) { pfd[nfd] = (struct pollfd){ r->ctl[0], POLLIN, 0 }; map[nfd++] = 3; }
        if (r->reaped && !nfd) break;
        if (!r->reaped && r->pidfd >= 0) {
            pfd[nfd] = (struct pollfd){ r->pidfd, POLLIN, 0 };
            map[nfd++] = 4;
        }
        /* The caller's interrupt stays readable once set: watched until it has killed. */
        if (!r->reaped && !r->killed && job->interrupt_fd >= 0) {
            pfd[nfd] = (struct pollfd){ job->interrupt_fd, POLLIN, 0 };
            map[nfd++] = 5;
        }
        timeout_ms = (int)(((drain_until ? drain_until : deadline) - now) * 1000) + 1;
        if (!r->reaped && (r->pidfd < 0 || (!r->killed && cg->has_cpu)) && timeout_ms > CPU_POLL_MS)
            timeout_ms = CPU_POLL_MS;
        if (quiet && timeout_ms > (int)((quiet_until - now) * 1000) + 1)
            timeout_ms = (int)((quiet_until - now) * 1000) + 1;
        if (poll(pfd, (nfds_t)nfd, timeout_ms < 0 ? 0 : timeout_ms) < 0 && errno != EINTR)
            return ns_fail(r->err, "poll", errno);
        for (int k = 0; k < nfd; k++) {
            if (!pfd[k].revents || map[k] == 4) continue;
            if (map[k] == 5) {
                if (!r->killed) {
                    out->interrupted = 1;
                    kill_all(r->pid, r->pidfd, cg);
                    r->killed = 1;
                }
                continue;
            }
            if (map[k] == 3) {
                struct ns_msg m;
                if (!recv_ctl(r->ctl[0], &m, &r->out_dir_fd, NULL)) { r->ctl_open = 0; continue; }
                if (m.kind == MSG_SETUP_FAILED && !r->setup_failed) { r->setup_failed = 1; r->fail = m; }
                if (m.kind == MSG_EXIT && r->forked) { r->runner_status = m.status; r->exit_known = 1; }
                continue;
            }
            char chunk[65536];
            stream *s = &st[map[k]];
            ssize_t n = read(s->fd, chunk, sizeof chunk);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) { s->open = 0; continue; }
            if (cr_buf_put(s->buf, chunk, (size_t)n) == CR_ELIMIT && s->buf == &out->stdout_buf &&
                !r->killed) {
                kill_run(r->pid, r->pidfd, cg, out, SANDBOX_LIMIT_OUTPUT, "stdout over %.0f bytes",
                         (double)lim->max_stdout);
                r->killed = 1;
            }
        }
        /* A warm run is over once the runner's report is whole (its exit status last) and
         * every stream is closed: pid 1 has nothing left to do but exit, and the teardown of
         * its namespaces, milliseconds with numpy loaded, need not hold the request. */
        if (r->warm && out->warm && !r->reaped && !r->killed && !st[0].open && !st[1].open &&
            !st[2].open && (r->early = sandbox_report_status(r->report.p, r->report.len) + 1) > 0) {
            r->runner_status = (r->early - 1) << 8;    /* as wait4() would give it */
            memset(&r->ru, 0, sizeof r->ru);
            break;
        }
        if (!r->reaped && (r->forked ? gone(r->pidfd)
                                     : wait4(r->pid, &r->runner_status, WNOHANG, &r->ru) == r->pid)) {
            r->reaped = 1;
            r->pid = -1;
            /* Its namespace died with it; what is left to read is already in the pipes. */
            if (!drain_until) drain_until = now_s() + DRAIN_S;
        }
    }
    if (r->forked) memset(&r->ru, 0, sizeof r->ru);
    if (r->early) {
        /* The worker's thread kills what is left (pid 1 on its way out, and anything the
         * code left running with its streams closed, which could still be writing to /out
         * while it is collected: the code's own files, in its own sandbox) and reaps pid 1
         * after the handoff: the kill alone took milliseconds. A forked worker is the
         * zygote's to reap; its cgroup's kill is enough. */
        r->warm->pid_left = r->forked ? 0 : r->pid;
        r->pid = -1;
    } else if (!r->reaped) {
        /* Killed, and the drain ended first: SIGKILL from outside cannot be ignored. */
        kill_all(r->pid, r->pidfd, cg);
        while (!r->forked && wait4(r->pid, &r->runner_status, 0, &r->ru) < 0) {
            if (errno != EINTR) { memset(&r->ru, 0, sizeof r->ru); r->runner_status = -1; break; }
        }
        r->pid = -1;
    }
    /* A forked worker that did not say how its runner ended was killed with it. */
    if (r->forked && !r->early && !r->exit_known) r->runner_status = SIGKILL;
    return CR_OK;
}

/* Step 4: the outcome from what the run left: its status, the report, the cgroup's figures
 * and which limit ended it, and /out (collected, or handed over). */
cr_code run_collect(ns_run_state *r)
{
    sandbox_outcome *out = r->out;
    const sandbox_limits *lim = &r->lim;
    ns_cgroup *cg = &r->cg;
    int status = r->runner_status;
    cr_code rc;

    /* The figures are final once no process of the run is left anywhere in its cgroup. */
    if (!r->early && !ns_cgroup_wait_empty(cg, 0)) {
        ns_cgroup_kill(cg);
        ns_cgroup_wait_empty(cg, DRAIN_S);
    }
    out->wall_s = now_s() - r->t0;
    if (r->setup_failed) {
        int step = r->fail.step > 0 && r->fail.step < STEP_COUNT ? r->fail.step : 0;
        return cr_error_set(r->err, CR_ESANDBOX, 0, 0, "ns: %s: %s", step_names[step],
                            strerror(r->fail.err));
    }

    /* Nothing inside can SIGKILL pid 1, and we did not: the worker was killed from outside
     * before its runner said anything of the job; the caller runs the job elsewhere. The
     * code's process, which takes the job itself, may have begun it while pid 1 died (its
     * output is dropped with the rest). */
    if (out->warm && !r->killed && status >= 0 && WIFSIGNALED(status) &&
        WTERMSIG(status) == SIGKILL && !r->report.len && ns_cgroup_oom_kills(cg) <= 0) {
        r->warm->lost = 1;
        return cr_error_set(r->err, CR_ESANDBOX, 0, 0, "ns: the warm worker was killed before its job");
    }
    if (status >= 0 && WIFEXITED(status)) {
        out->exited = 1;
        out->exit_code = WEXITSTATUS(status);
    } else {
        out->term_signal = status >= 0 ? WTERMSIG(status) : SIGKILL;
    }
    /* Before the limits are read from the run's end: the report says how the code's process
     * ended when it was not the runner itself. */
    if ((rc = sandbox_report_parse(r->report.p ? r->report.p : "", r->report.len, out, r->err)) != CR_OK)
        return rc;
    /* A run a limit stopped ends as the kill made it end: the code's process may have exited
     * by itself in the moment between its last write and our read of it, a race whose winner
     * must not change the outcome. */
    if (r->killed && out->limit != SANDBOX_LIMIT_NONE) {
        out->exited = 0;
        out->exit_code = 0;
        out->term_signal = SIGKILL;
    }
    {
        const struct rusage *ru = &r->ru;
        int64_t cpu = ns_cgroup_cpu_ns(cg), peak = ns_cgroup_peak_bytes(cg);
        out->cpu_s = cpu >= 0 ? (double)(cpu - r->cpu_base) / 1e9
                              : (double)(ru->ru_utime.tv_sec + ru->ru_stime.tv_sec) +
                                    (double)(ru->ru_utime.tv_usec + ru->ru_stime.tv_usec) / 1e6;
        out->peak_memory_bytes = peak >= 0 ? (uint64_t)peak : (uint64_t)ru->ru_maxrss * 1024;
    }
    /* A signal alone proves nothing: the code can send itself SIGXCPU. */
    if (out->limit == SANDBOX_LIMIT_NONE && !out->exited && out->cpu_s >= lim->cpu_s &&
        (out->term_signal == SIGXCPU || out->term_signal == SIGKILL)) {
        out->limit = SANDBOX_LIMIT_CPU;
        snprintf(out->limit_detail, sizeof out->limit_detail, "CPU time %.3f s", lim->cpu_s);
    }
    if (out->limit == SANDBOX_LIMIT_NONE && ns_cgroup_oom_kills(cg) > 0) {
        out->limit = SANDBOX_LIMIT_MEMORY;
        snprintf(out->limit_detail, sizeof out->limit_detail, "memory %llu bytes",
                 (unsigned long long)lim->memory_bytes);
    }
    if (ns_cgroup_pids_refused(cg) > 0) {
        size_t used = strlen(out->limit_detail);
        if (out->limit == SANDBOX_LIMIT_NONE) out->limit = SANDBOX_LIMIT_PROCS;
        snprintf(out->limit_detail + used, sizeof out->limit_detail - used, "%sprocesses %u",
                 used ? "; also " : "", lim->max_procs);
    }
    if (out->limit == SANDBOX_LIMIT_DISK && r->out_dir_fd >= 0) {
        struct statvfs sv;
        if (fstatvfs(r->out_dir_fd, &sv) == 0 && (sv.f_bavail == 0 || sv.f_favail == 0))
            sandbox_out_full(out, lim);
    }
    if (r->hand) {
        /* The caller collects /out and reads the report itself (the kvm guest sends both). */
        r->hand->out_fd = r->out_dir_fd;
        r->out_dir_fd = -1;
        r->hand->report = r->report;
        cr_buf_init(&r->report, 0);
        return CR_OK;
    }
    if (r->out_dir_fd >= 0)
        return sandbox_artifacts_collect(r->out_dir_fd, r->job->out_dir, lim, out, r->err);
    return CR_OK;
}

/* Whatever the steps left: a child still alive, the descriptors, the cgroup (a warm run's is
 * the caller's to remove). */
static void run_release(ns_run_state *r)
{
    ns_warm *warm = r->warm;
    if (r->pid > 0 && r->forked) {
        kill_all(r->pid, r->pidfd, &r->cg);
        ns_cgroup_wait_empty(&r->cg, DRAIN_S);
    } else if (r->pid > 0) {
        kill(r->pid, SIGKILL);
        while (waitpid(r->pid, NULL, 0) < 0 && errno == EINTR) {}
    }
    if (r->forked && warm->chan >= 0) {
        close(warm->chan);
        warm->chan = -1;
    }
    if (warm && warm->zygote) warm->chan = -1;   /* warm_fd, closed below */
    if (r->stack) unmap_stack(r->stack);   /* the child has exec'd or is gone */
    if (r->pidfd >= 0) close(r->pidfd);
    if (r->runner_pidfd >= 0) close(r->runner_pidfd);
    if (r->cg_made && warm) {
        warm->cg = r->cg;
        warm->cg_left = 1;
    } else if (r->cg_made) {
        ns_cgroup_destroy(&r->cg);
    }
    for (int i = 0; i < 2; i++) {
        if (r->ctl[i] >= 0) close(r->ctl[i]);
        if (r->po[i] >= 0) close(r->po[i]);
        if (r->pe[i] >= 0) close(r->pe[i]);
        if (r->pv[i] >= 0) close(r->pv[i]);
    }
    if (r->out_dir_fd >= 0) close(r->out_dir_fd);
    if (r->job_fd >= 0) close(r->job_fd);
    if (r->runner_fd >= 0) close(r->runner_fd);
    if (r->warm_fd >= 0) close(r->warm_fd);
    if (r->data_tree >= 0) close(r->data_tree);
    cr_buf_free(&r->jobbuf);
    cr_buf_free(&r->report);
}

static cr_code ns_run_at(const sandbox_job *job, ns_handoff *hand, ns_warm *warm,
                         sandbox_outcome *out, cr_error *err)
{
    ns_run_state *r, state = {
        .job = job, .hand = hand, .warm = warm, .out = out, .err = err, .lim = job->limits,
        .forked = warm && !warm->zygote && warm->chan >= 0,
        .ctl = { -1, -1 }, .po = { -1, -1 }, .pe = { -1, -1 }, .pv = { -1, -1 },
        .job_fd = -1, .runner_fd = -1, .warm_fd = -1, .data_tree = -1, .fdarg = { "3", "4" },
        .pid = -1, .pidfd = -1, .runner_pidfd = -1, .out_dir_fd = -1,
        .t0 = now_s(), .runner_status = -1, .ctl_open = 1,
    };
    cr_code rc;

    r = &state;
    r->plan.data_tree = -1;
    memset(out, 0, sizeof *out);
    cr_buf_init(&r->jobbuf, 0);
    if (hand) {
        hand->out_fd = -1;
        cr_buf_init(&hand->report, 0);
    }
    sandbox_limits_resolve(&r->lim);
    cr_buf_init(&out->stdout_buf, r->lim.max_stdout);
    cr_buf_init(&out->stderr_buf, r->lim.max_stderr);
    cr_buf_init(&r->report, REPORT_MAX);
    out->tier = CR_TIER_NS;

    if ((rc = run_prepare(r)) == CR_OK && (rc = run_start(r)) == CR_OK && !r->ran &&
        (rc = run_supervise(r)) == CR_OK)
        rc = run_collect(r);
    run_release(r);
    /* Nothing is handed over before the last step, which cannot fail. */
    if (rc != CR_OK) sandbox_outcome_free(out);
    return rc;
}
