/* sandbox/ns/seccomp.c: the system-call filter of the namespace tier.
 *
 * An allow-list, as Docker's default profile and nsjail's configurations are: `calls` names
 * every system call the interpreter (Debian's python3), the runner and the finance stack
 * (numpy, pandas, scipy, statsmodels, matplotlib, dateutil) were seen to make under the
 * sandbox's test suites, the corpus's programs and an exercise of each library (traced with
 * strace -f), and the few they reach on paths those runs did not take (the vDSO's fallbacks,
 * abort(), shutil.copystat's attributes). Any other call, and every call a later kernel adds,
 * fails with ENOSYS: what a kernel without it says, so glibc and Python fall back where they
 * can (clone3 to clone) and raise OSError where they cannot. A few calls are refused by name
 * with EPERM instead (the attack suite reads a PermissionError), and a few are allowed only
 * for the arguments argument_rules() lists (clone's flags, socket families, ioctl commands,
 * personality). Calls of a foreign ABI (32-bit int 0x80, x32) kill the process: libseccomp's
 * default for a bad arch.
 *
 * Two classes the namespaces leave open are refused with EPERM. Kernel objects charged to
 * the caller's user on the host, not to the sandbox (inotify instances against
 * fs.inotify.max_user_instances, fanotify groups), or to the host (AIO contexts): a run could
 * use up the quota of the caller's other processes. And Unix sockets with a path: a socket
 * file under /data (or any host tree bound in) is a channel to a host service that no
 * read-only mount closes. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sandbox/ns/ns.h"

/* The tier's filter, and the warm pool's zygote's: the same but that it may clone into new
 * namespaces, unshare, mount, name its host and drop capabilities, which it and its workers
 * do to leave its namespaces for their own before they load the tier's filter over it
 * (filters stack; the stricter answer wins).
 * Only our runner ever runs under the zygote's alone. */
typedef struct {
    pthread_once_t once;
    struct sock_fprog program;
    int built;
    char error[200];
} filter;
static filter filters[2] = { { .once = PTHREAD_ONCE_INIT }, { .once = PTHREAD_ONCE_INIT } };

enum how {
    ALLOW,    /* whatever the arguments */
    ARGS,     /* for the arguments argument_rules() lists; EPERM for the rest */
    REFUSE,   /* EPERM */
    ZYGOTE,   /* EPERM, but allowed in the zygote's filter */
};

/* The one table. A name libseccomp does not know on this architecture is skipped. */
static const struct { const char *name; enum how how; } calls[] = {
    /* Memory: the allocator and the loader's mappings, numpy's buffers, numpy.memmap's flush
     * (msync), ctypes' and libffi's trampolines (memfd_create). */
    { "brk", ALLOW }, { "mmap", ALLOW }, { "munmap", ALLOW }, { "mprotect", ALLOW },
    { "mremap", ALLOW }, { "madvise", ALLOW }, { "msync", ALLOW }, { "memfd_create", ALLOW },
    /* Descriptors: the job, the runner, stdout, stderr and the report (pread, pwrite,
     * ftruncate on the report), pipes (subprocess), shutil's copies (sendfile), sqlite3's
     * journal and os.fsync (fdatasync, fsync). */
    { "read", ALLOW }, { "write", ALLOW }, { "pread64", ALLOW }, { "pwrite64", ALLOW },
    { "lseek", ALLOW }, { "close", ALLOW }, { "close_range", ALLOW }, { "dup", ALLOW },
    { "dup2", ALLOW }, { "dup3", ALLOW }, { "fcntl", ALLOW }, { "pipe2", ALLOW },
    { "ftruncate", ALLOW }, { "sendfile", ALLOW }, { "fdatasync", ALLOW }, { "fsync", ALLOW },
    /* isatty() (TCGETS), socket.setblocking (FIONBIO), os.set_inheritable (FIOCLEX); not
     * TIOCSTI nor TIOCLINUX (faking terminal input, console tricks). */
    { "ioctl", ARGS },
    /* Paths: imports (stat, open, getdents of sys.path), the code's files under /tmp and
     * /out (mkdir, rename, unlink, chmod, fchown by sqlite3), tempfile and shutil.rmtree
     * (rmdir, unlinkat), shutil.copy2 (utimensat, and the extended attributes: copystat
     * raises on ENOSYS), os.mkfifo (mknodat, which makes no device without CAP_MKNOD on
     * the host). */
    { "openat", ALLOW }, { "newfstatat", ALLOW }, { "statx", ALLOW }, { "statfs", ALLOW },
    { "fstatfs", ALLOW }, { "access", ALLOW }, { "readlink", ALLOW }, { "getdents64", ALLOW },
    { "getcwd", ALLOW }, { "chdir", ALLOW }, { "mkdir", ALLOW }, { "rmdir", ALLOW },
    { "rename", ALLOW }, { "unlink", ALLOW }, { "unlinkat", ALLOW }, { "link", ALLOW },
    { "symlink", ALLOW }, { "chmod", ALLOW }, { "fchown", ALLOW }, { "utimensat", ALLOW },
    { "mknodat", ALLOW }, { "listxattr", ALLOW }, { "llistxattr", ALLOW },
    { "getxattr", ALLOW }, { "lgetxattr", ALLOW }, { "setxattr", ALLOW },
    { "lsetxattr", ALLOW },
    /* Waiting: the runner's poll on its job and children, subprocess and selectors (poll,
     * epoll), asyncio (epoll), time.sleep (clock_nanosleep), the kernel's restart of an
     * interrupted one. */
    { "poll", ALLOW }, { "epoll_create1", ALLOW }, { "epoll_ctl", ALLOW },
    { "epoll_wait", ALLOW }, { "clock_nanosleep", ALLOW }, { "restart_syscall", ALLOW },
    /* Time: time.process_time and the vDSO's fallbacks (a guest's clock source may have
     * none), os.times and resource.getrusage. */
    { "clock_gettime", ALLOW }, { "clock_getres", ALLOW }, { "gettimeofday", ALLOW },
    { "time", ALLOW }, { "times", ALLOW }, { "getrusage", ALLOW },
    /* Processes and threads: the runner forks the code's process, subprocess forks (vfork)
     * and execs, multiprocessing, concurrent.futures and the code start processes and
     * threads (clone without namespaces: clone3 is absent, its flags being out of the
     * filter's reach), glibc's thread set-up (robust lists, rseq, arch_prctl for TLS),
     * futexes, the runner's waits (pidfd_open, wait4), raise() and abort() (tgkill), the
     * runner's prctl (dumpable, the process name). */
    { "clone", ARGS }, { "vfork", ALLOW }, { "execve", ALLOW }, { "exit", ALLOW },
    { "exit_group", ALLOW }, { "wait4", ALLOW }, { "kill", ALLOW }, { "tgkill", ALLOW },
    { "pidfd_open", ALLOW }, { "set_tid_address", ALLOW }, { "set_robust_list", ALLOW },
    { "rseq", ALLOW }, { "futex", ALLOW }, { "arch_prctl", ALLOW }, { "prctl", ALLOW },
    /* The process's own facts: ids (read only), session and group (the runner's setsid),
     * limits (resource, prlimit64), os.cpu_count and the BLAS's count of cores
     * (sched_getaffinity, sysinfo), the scheduler (a warm worker leaves SCHED_BATCH),
     * os.nice's query, platform and uname; personality only as the query. */
    { "getpid", ALLOW }, { "getppid", ALLOW }, { "gettid", ALLOW }, { "getuid", ALLOW },
    { "geteuid", ALLOW }, { "getgid", ALLOW }, { "getgroups", ALLOW }, { "getpgid", ALLOW },
    { "getsid", ALLOW }, { "setsid", ALLOW }, { "prlimit64", ALLOW }, { "sysinfo", ALLOW },
    { "uname", ALLOW }, { "getpriority", ALLOW }, { "sched_yield", ALLOW },
    { "sched_getaffinity", ALLOW }, { "sched_getscheduler", ALLOW },
    { "sched_setscheduler", ALLOW }, { "personality", ARGS },
    /* Signals: the runner's handlers (SIGINT, SIGCHLD) and every handler's return. */
    { "rt_sigaction", ALLOW }, { "rt_sigprocmask", ALLOW }, { "rt_sigreturn", ALLOW },
    /* Randomness: hash seeds, random, secrets, uuid, numpy's seeding. */
    { "getrandom", ALLOW },
    /* Sockets: loopback only (the network namespace has nothing else), for code that talks
     * to 127.0.0.1, the resolver's try, multiprocessing's and asyncio's connected pairs;
     * socket() and socketpair() for the families and types argument_rules() lists. */
    { "socket", ARGS }, { "socketpair", ARGS }, { "connect", ALLOW }, { "getsockname", ALLOW },
    { "getpeername", ALLOW }, { "sendto", ALLOW }, { "recvfrom", ALLOW }, { "sendmsg", ALLOW },
    { "recvmsg", ALLOW }, { "sendmmsg", ALLOW }, { "setsockopt", ALLOW },
    { "getsockopt", ALLOW },

    /* Refused with EPERM: a way out of the sandbox or the kernel's surface that namespaces
     * do not cover (the attack suite reads PermissionError for each). */
    { "ptrace", REFUSE }, { "chroot", REFUSE }, { "pivot_root", REFUSE }, { "umount2", REFUSE },
    { "setns", REFUSE }, { "bpf", REFUSE }, { "perf_event_open", REFUSE },
    { "userfaultfd", REFUSE }, { "io_uring_setup", REFUSE }, { "keyctl", REFUSE },
    { "add_key", REFUSE }, { "kexec_load", REFUSE }, { "init_module", REFUSE },
    { "finit_module", REFUSE }, { "delete_module", REFUSE },
    /* Charged to the caller's user on the host, or to the host as a whole (fs.aio-max-nr). */
    { "inotify_init", REFUSE }, { "inotify_init1", REFUSE }, { "fanotify_init", REFUSE },
    { "io_setup", REFUSE },
    /* The zygote's workers make their namespaces, mounts and host name and drop their
     * capabilities with these. */
    { "mount", ZYGOTE }, { "unshare", ZYGOTE }, { "sethostname", ZYGOTE }, { "capset", ZYGOTE },
};

static int rule(scmp_filter_ctx ctx, uint32_t action, int nr, unsigned n,
                const struct scmp_arg_cmp *args)
{
    return seccomp_rule_add_array(ctx, action, nr, n, args);
}

/* The arguments under which the ARGS calls are allowed, and EPERM for the rest. libseccomp
 * lets an unconditional rule win over conditional ones of the same call, so each call's
 * rules here are conditional throughout. */
static int argument_rules(scmp_filter_ctx ctx, int zygote)
{
    const uint32_t ok = SCMP_ACT_ALLOW, no = SCMP_ACT_ERRNO(EPERM);
    struct scmp_arg_cmp a[2];
    int rc = 0;

    /* clone(): without a namespace flag, but in the zygote, which clones each worker's pid 1
     * into namespaces of its own (runner.py's clone_worker()). */
    static const unsigned long ns_flags[] = { CLONE_NEWNS, CLONE_NEWCGROUP, CLONE_NEWUTS,
                                              CLONE_NEWIPC, CLONE_NEWUSER, CLONE_NEWPID,
                                              CLONE_NEWNET };
    unsigned long any_ns = 0;
    if (zygote) rc = rule(ctx, ok, SCMP_SYS(clone), 0, NULL);
    for (size_t i = 0; i < sizeof ns_flags / sizeof ns_flags[0] && rc == 0 && !zygote; i++) {
        any_ns |= ns_flags[i];
        a[0] = (struct scmp_arg_cmp)SCMP_A0(SCMP_CMP_MASKED_EQ, ns_flags[i], ns_flags[i]);
        rc = rule(ctx, no, SCMP_SYS(clone), 1, a);
    }
    a[0] = (struct scmp_arg_cmp)SCMP_A0(SCMP_CMP_MASKED_EQ, any_ns, 0);
    if (rc == 0 && !zygote) rc = rule(ctx, ok, SCMP_SYS(clone), 1, a);

    /* socket(): AF_INET and AF_INET6 only (the network namespace has nothing but loopback);
     * no AF_UNIX, whose connect() and sendto() reach any socket file the code can name.
     * Families are small integers: everything outside the list is refused by ranges. */
    for (int fam = 0; fam <= AF_INET6 && rc == 0; fam++) {
        a[0] = (struct scmp_arg_cmp)SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)fam);
        rc = rule(ctx, fam == AF_INET || fam == AF_INET6 ? ok : no, SCMP_SYS(socket), 1, a);
    }
    a[0] = (struct scmp_arg_cmp)SCMP_A0(SCMP_CMP_GT, AF_INET6);
    if (rc == 0) rc = rule(ctx, no, SCMP_SYS(socket), 1, a);

    /* socketpair(): AF_UNIX streams and seqpackets only (multiprocessing, asyncio): born
     * connected, they cannot be pointed elsewhere, while a datagram pair could sendto() a
     * path. The type's low four bits (SOCK_TYPE_MASK); the rest are SOCK_CLOEXEC and the
     * like. */
    a[0] = (struct scmp_arg_cmp)SCMP_A0(SCMP_CMP_NE, AF_UNIX);
    if (rc == 0) rc = rule(ctx, no, SCMP_SYS(socketpair), 1, a);
    for (unsigned type = 0; type < 16 && rc == 0; type++) {
        a[0] = (struct scmp_arg_cmp)SCMP_A0(SCMP_CMP_EQ, AF_UNIX);
        a[1] = (struct scmp_arg_cmp)SCMP_A1(SCMP_CMP_MASKED_EQ, 0xf, type);
        rc = rule(ctx, type == SOCK_STREAM || type == SOCK_SEQPACKET ? ok : no,
                  SCMP_SYS(socketpair), 2, a);
    }

    /* ioctl(): not faking terminal input (TIOCSTI) nor console tricks (TIOCLINUX), compared
     * on the command's 32 bits, as the kernel reads it. The rest is allowed on a condition
     * every libc call meets (the descriptor's upper half clear; the kernel reads an int)
     * rather than none, which would win over the two refusals. */
    static const unsigned long refused_ioctls[] = { TIOCSTI, TIOCLINUX };
    for (size_t i = 0; i < sizeof refused_ioctls / sizeof refused_ioctls[0] && rc == 0; i++) {
        a[0] = (struct scmp_arg_cmp)SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, refused_ioctls[i]);
        rc = rule(ctx, no, SCMP_SYS(ioctl), 1, a);
    }
    a[0] = (struct scmp_arg_cmp)SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffffffff00000000ull, 0);
    if (rc == 0) rc = rule(ctx, ok, SCMP_SYS(ioctl), 1, a);

    /* personality(): only the query (0xffffffff) that libc and Python's platform use. */
    a[0] = (struct scmp_arg_cmp)SCMP_A0(SCMP_CMP_EQ, 0xffffffffu);
    if (rc == 0) rc = rule(ctx, ok, SCMP_SYS(personality), 1, a);
    a[0] = (struct scmp_arg_cmp)SCMP_A0(SCMP_CMP_NE, 0xffffffffu);
    if (rc == 0) rc = rule(ctx, no, SCMP_SYS(personality), 1, a);
    return rc;
}

static void build(filter *f, int zygote)
{
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ERRNO(ENOSYS));
    int rc = 0, fd = -1;
    const char *step = "seccomp_init";
    off_t size;
    ssize_t got;

    if (!ctx) {
        errno = ENOMEM;   /* libseccomp says no more */
        goto fail;
    }
    step = "call table";
    for (size_t i = 0; i < sizeof calls / sizeof calls[0] && rc == 0; i++) {
        int nr = seccomp_syscall_resolve_name(calls[i].name);
        enum how how = calls[i].how;
        if (nr == __NR_SCMP_ERROR || how == ARGS) continue;
        rc = rule(ctx, how == ALLOW || (how == ZYGOTE && zygote) ? SCMP_ACT_ALLOW
                                                                   : SCMP_ACT_ERRNO(EPERM),
                  nr, 0, NULL);
    }
    if (rc == 0) step = "argument rules";
    if (rc == 0) rc = argument_rules(ctx, zygote);
    if (rc != 0) { errno = -rc; goto fail; }

    /* Export once into memory, so the child only needs prctl(). */
    step = "export";
    if ((fd = memfd_create("calcroute-seccomp", MFD_CLOEXEC)) < 0) goto fail;
    if ((rc = seccomp_export_bpf(ctx, fd)) != 0) { errno = -rc; goto fail; }
    if ((size = lseek(fd, 0, SEEK_END)) < 0) goto fail;
    if (size == 0 || size % sizeof(struct sock_filter)) {
        errno = EIO;   /* not a whole program */
        goto fail;
    }
    step = "read back";
    if (!(f->program.filter = malloc((size_t)size))) goto fail;
    if ((got = pread(fd, f->program.filter, (size_t)size, 0)) != size) {
        if (got >= 0) errno = EIO;   /* short */
        goto fail;
    }
    f->program.len = (unsigned short)(size / sizeof(struct sock_filter));
    close(fd);
    seccomp_release(ctx);
    f->built = 1;
    return;
fail:
    snprintf(f->error, sizeof f->error, "seccomp filter: %s: %s", step, strerror(errno));
    free(f->program.filter);
    f->program.filter = NULL;
    if (fd >= 0) close(fd);
    if (ctx) seccomp_release(ctx);
}

static void build_tier(void) { build(&filters[0], 0); }
static void build_zygote(void) { build(&filters[1], 1); }

const struct sock_fprog *ns_seccomp_program(int zygote, char *why, size_t why_len)
{
    filter *f = &filters[zygote != 0];
    pthread_once(&f->once, zygote ? build_zygote : build_tier);
    if (f->built) return &f->program;
    snprintf(why, why_len, "%s", f->error);
    return NULL;
}
