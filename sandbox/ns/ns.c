/* sandbox/ns/ns.c: the namespace tier.
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

#include "sandbox/ns/ns.h"

#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/asan_interface.h>
#endif

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

/* ---- the children -------------------------------------------------------------------------- */

static _Noreturn void child_fail(int ctl, enum ns_step step)
{
    struct ns_msg m = { .kind = MSG_SETUP_FAILED, .step = step, .err = errno };
    (void)!send(ctl, &m, sizeof m, MSG_NOSIGNAL);
    _exit(127);
}

/* Binds src read-only at dst. A remount in a user namespace must keep the flags the kernel
 * locked on the source mount (nosuid, noexec, atime...), or it fails with EPERM. */
static int bind_ro(const char *src, const char *dst, unsigned long extra)
{
    struct statvfs sv;
    unsigned long fl = MS_BIND | MS_REMOUNT | MS_RDONLY | extra;
    if (mount(src, dst, NULL, MS_BIND | MS_REC, NULL) < 0) return -1;
    if (statvfs(dst, &sv) < 0) return -1;
    if (sv.f_flag & ST_NOSUID) fl |= MS_NOSUID;
    if (sv.f_flag & ST_NODEV) fl |= MS_NODEV;
    if (sv.f_flag & ST_NOEXEC) fl |= MS_NOEXEC;
    if (sv.f_flag & ST_NOATIME) fl |= MS_NOATIME;
    if (sv.f_flag & ST_NODIRATIME) fl |= MS_NODIRATIME;
    if (sv.f_flag & ST_RELATIME) fl |= MS_RELATIME;
    return mount(NULL, dst, NULL, fl, NULL);
}

static int touch(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0444);
    if (fd < 0) return -1;
    close(fd);
    return 0;
}

static int bind_file_ro(const char *src, const char *dst, unsigned long extra)
{
    if (touch(dst) < 0) return -1;
    return bind_ro(src, dst, extra);
}

/* A device node: binds keep the host's node (a user namespace cannot mknod). Writable, so
 * /dev/null takes writes; no exec, no suid. */
static int bind_dev(const char *src, const char *dst)
{
    if (touch(dst) < 0) return -1;
    if (mount(src, dst, NULL, MS_BIND, NULL) < 0) return -1;
    return mount(NULL, dst, NULL, MS_BIND | MS_REMOUNT | MS_NOSUID | MS_NOEXEC, NULL);
}

/* What /proc would tell the code of its host that no namespace hides: the kernel's command
 * line and configuration, the boot's id, the host's keys, timers, scheduler and devices
 * (Docker's masked paths and these). A file is masked by /dev/null bound over it, so it reads
 * empty; a directory by an empty read-only tmpfs; a path this kernel lacks stays absent. The
 * cold child masks its /proc; a warm worker mounts a /proc of its own and masks it from the
 * zygote's spec (zygote_spec()), while the zygote's stays whole: a new pid namespace's proc
 * mounts only where no part of an existing one is hidden. */
const ns_proc_mask ns_proc_masked[] = {
    { "/proc/cmdline", 0 }, { "/proc/bootconfig", 0 }, { "/proc/config.gz", 0 },
    { "/proc/sys/kernel/random/boot_id", 0 }, { "/proc/keys", 0 }, { "/proc/kcore", 0 },
    { "/proc/timer_list", 0 }, { "/proc/timer_stats", 0 }, { "/proc/sched_debug", 0 },
    { "/proc/latency_stats", 0 }, { "/proc/acpi", 1 }, { "/proc/scsi", 1 },
    { "/proc/asound", 1 },
};
const size_t ns_proc_masked_count = sizeof ns_proc_masked / sizeof ns_proc_masked[0];
#define PROC_MASK_TMPFS "size=4k,nr_inodes=1,mode=0555"
#define PROC_MASK_FLAGS (MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC)

/* Masks ns_proc_masked[] under `root` (NEWROOT, before the pivot), with its /dev/null. */
static int mask_proc(const char *root)
{
    char null_dev[sizeof NEWROOT + 16], path[sizeof NEWROOT + 64];
    size_t n = strlen(root);
    memcpy(null_dev, root, n);
    memcpy(null_dev + n, "/dev/null", sizeof "/dev/null");
    for (size_t i = 0; i < ns_proc_masked_count; i++) {
        size_t len = strlen(ns_proc_masked[i].path);
        int rc;
        memcpy(path, root, n);
        memcpy(path + n, ns_proc_masked[i].path, len + 1);
        rc = ns_proc_masked[i].dir
                 ? mount("tmpfs", path, "tmpfs", PROC_MASK_FLAGS, PROC_MASK_TMPFS)
                 : mount(null_dev, path, NULL, MS_BIND, NULL);
        if (rc < 0 && errno != ENOENT) return -1;
    }
    return 0;
}

/* "/proc/self/fd/N" without stdio, which is not safe between clone() and exec. */
static void fd_path(char *buf, int fd)
{
    static const char prefix[] = "/proc/self/fd/";
    char digits[12];
    int n = 0;
    memcpy(buf, prefix, sizeof prefix - 1);
    do digits[n++] = (char)('0' + fd % 10); while ((fd /= 10) && n < 11);
    for (int i = 0; i < n; i++) buf[sizeof prefix - 1 + i] = digits[n - 1 - i];
    buf[sizeof prefix - 1 + n] = 0;
}

/* /data, read-only. A bind mount would do, but /proc/self/mountinfo names the root of every
 * mount as its path in the source filesystem: the host's path of the data directory. An
 * overlay of it (over an empty layer, since a lower-only overlay needs two) is a filesystem of
 * its own, whose root is "/" and whose lower layer is named as given: ".", our working
 * directory at the mount. Where the kernel has no overlayfs (or refuses the directory as a
 * layer), the bind is the fallback, and the path shows.
 *
 * The source is the parent's detached clone of the directory when it made one (data_open()):
 * overlayfs takes a layer only from a mount of our own namespace, so the clone is attached at
 * a staging point, layered, and detached again. Otherwise `path_fd`, which we opened by path
 * ourselves, as the user we are on the host. */
#define DATA_STAGE NEWROOT "/.data"
static int mount_data(const ns_plan *p, int path_fd, const char *path_src)
{
    static const char opts[] = "lowerdir=.:" NEWROOT "/proc";
    const unsigned long fl = MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC;
    int rc = -1;
    if (p->data_tree >= 0) {
        if (mkdir(DATA_STAGE, 0700) < 0 ||
            move_mount(p->data_tree, "", AT_FDCWD, DATA_STAGE, MOVE_MOUNT_F_EMPTY_PATH) < 0)
            return -1;
        if (chdir(DATA_STAGE) == 0) rc = mount("overlay", NEWROOT "/data", "overlay", fl, opts);
        if (chdir("/") < 0) return -1;
        rc = rc < 0 ? mount(DATA_STAGE, NEWROOT "/data", NULL, MS_MOVE, NULL)
                    : umount2(DATA_STAGE, MNT_DETACH);
        return rc < 0 ? -1 : rmdir(DATA_STAGE);
    }
    if (fchdir(path_fd) == 0) rc = mount("overlay", NEWROOT "/data", "overlay", fl, opts);
    if (rc < 0) rc = bind_ro(path_src, NEWROOT "/data", MS_NOSUID | MS_NODEV | MS_NOEXEC);
    return rc;
}

/* mkdir -p of the allowed directory's mount point, on a copy: the plan is the caller's
 * memory. */
static int make_mount_point(const char *path)
{
    char buf[sizeof ((ns_plan *)0)->allow_dst];
    size_t n = strlen(path);
    memcpy(buf, path, n + 1);
    for (size_t i = sizeof NEWROOT; i <= n; i++) {
        if (buf[i] != '/' && buf[i] != 0) continue;
        buf[i] = 0;
        if (mkdir(buf, 0755) < 0 && errno != EEXIST) return -1;
        buf[i] = path[i];
    }
    return 0;
}

static void build_root(const ns_plan *p)
{
    static const char *const dirs[] = { NEWROOT "/usr", NEWROOT "/etc",
        NEWROOT "/etc/alternatives", NEWROOT "/tmp", NEWROOT "/out", NEWROOT "/proc",
        NEWROOT "/dev" };
    int ctl = p->ctl, data_fd = -1, allow_fd = -1;
    char path[96], data_src[32], allow_src[32];

    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) child_fail(ctl, STEP_PRIVATE);
    /* Opened here, in our own mount namespace (a bind source must be), and before our root
     * tmpfs covers it should it live under NEWROOT. */
    if (p->data_dir && p->data_tree < 0) {
        if ((data_fd = open(p->data_dir, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
            child_fail(ctl, STEP_DATA);
        fd_path(data_src, data_fd);
    }
    if (p->allow_dir) {
        if ((allow_fd = open(p->allow_dir, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
            child_fail(ctl, STEP_ALLOW);
        fd_path(allow_src, allow_fd);
    }
    if (mount("tmpfs", NEWROOT, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,nr_inodes=256,mode=0755") < 0)
        child_fail(ctl, STEP_ROOT);
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++)
        if (mkdir(dirs[i], 0755) < 0) child_fail(ctl, STEP_MKDIR);
    if (bind_ro("/usr", NEWROOT "/usr", MS_NOSUID | MS_NODEV) < 0) child_fail(ctl, STEP_USR);
    for (size_t i = 0; i < N_LIB_DIRS; i++) {
        size_t n = strlen(lib_dirs[i]);
        memcpy(path, NEWROOT "/", sizeof NEWROOT);
        memcpy(path + sizeof NEWROOT, lib_dirs[i], n + 1);
        if (p->lib_kind[i] == 1 && symlink(p->lib_link[i], path) < 0) child_fail(ctl, STEP_LIBDIRS);
        if (p->lib_kind[i] == 2) {
            char src[16] = "/";
            memcpy(src + 1, lib_dirs[i], n + 1);
            if (mkdir(path, 0755) < 0 || bind_ro(src, path, MS_NOSUID | MS_NODEV) < 0)
                child_fail(ctl, STEP_LIBDIRS);
        }
    }
    /* The loader's cache and the alternatives links: without them numpy finds no BLAS. */
    if (bind_file_ro("/etc/ld.so.cache", NEWROOT "/etc/ld.so.cache", MS_NOSUID | MS_NODEV) < 0 ||
        bind_ro("/etc/alternatives", NEWROOT "/etc/alternatives", MS_NOSUID | MS_NODEV) < 0)
        child_fail(ctl, STEP_ETC);
    /* Debian's matplotlib keeps its defaults there (mpl-data/matplotlibrc links to it), and
     * refuses to import without them; fontconfig complains on stderr without its config. */
    if (p->has_mplrc &&
        bind_file_ro("/etc/matplotlibrc", NEWROOT "/etc/matplotlibrc", MS_NOSUID | MS_NODEV) < 0)
        child_fail(ctl, STEP_ETC);
    if (p->has_fonts &&
        (mkdir(NEWROOT "/etc/fonts", 0755) < 0 ||
         bind_ro("/etc/fonts", NEWROOT "/etc/fonts", MS_NOSUID | MS_NODEV) < 0))
        child_fail(ctl, STEP_ETC);
    if (p->data_dir && (mkdir(NEWROOT "/data", 0755) < 0 || mount_data(p, data_fd, data_src) < 0))
        child_fail(ctl, STEP_DATA);
    if (data_fd >= 0) close(data_fd);
    if (mount("tmpfs", NEWROOT "/tmp", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, p->tmp_opts) < 0)
        child_fail(ctl, STEP_TMP);
    if (mount("tmpfs", NEWROOT "/out", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, p->out_opts) < 0)
        child_fail(ctl, STEP_OUT);
    /* After /tmp, which it may lie under (a virtual environment made in a temporary
     * directory): executable, for an environment made with --copies. */
    if (p->allow_dir && (make_mount_point(p->allow_dst) < 0 ||
                         bind_ro(allow_src, p->allow_dst, MS_NOSUID | MS_NODEV) < 0 ||
                         close(allow_fd) < 0))
        child_fail(ctl, STEP_ALLOW);
    if (mount("tmpfs", NEWROOT "/dev", "tmpfs", MS_NOSUID | MS_NOEXEC, "size=16k,nr_inodes=32,mode=0755") < 0 ||
        bind_dev("/dev/null", NEWROOT "/dev/null") < 0 ||
        bind_dev("/dev/zero", NEWROOT "/dev/zero") < 0 ||
        bind_dev("/dev/urandom", NEWROOT "/dev/urandom") < 0 ||
        bind_dev("/dev/urandom", NEWROOT "/dev/random") < 0 ||
        symlink("/proc/self/fd", NEWROOT "/dev/fd") < 0 ||
        symlink("/proc/self/fd/0", NEWROOT "/dev/stdin") < 0 ||
        symlink("/proc/self/fd/1", NEWROOT "/dev/stdout") < 0 ||
        symlink("/proc/self/fd/2", NEWROOT "/dev/stderr") < 0 ||
        /* POSIX shared memory and semaphores (multiprocessing) live in /tmp's budget. */
        symlink("/tmp", NEWROOT "/dev/shm") < 0 ||
        mount(NULL, NEWROOT "/dev", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NOEXEC, NULL) < 0)
        child_fail(ctl, STEP_DEV);
    if (mount("proc", NEWROOT "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0 ||
        (!p->zygote && mask_proc(NEWROOT) < 0))
        child_fail(ctl, STEP_PROC);
    /* pivot_root(".", ".") stacks the old root under the new one; detaching it leaves no
     * path back to the host's tree. */
    if (chdir(NEWROOT) < 0 || syscall(SYS_pivot_root, ".", ".") < 0 ||
        umount2(".", MNT_DETACH) < 0 || chdir("/") < 0)
        child_fail(ctl, STEP_PIVOT);
    if (mount(NULL, "/", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL) < 0)
        child_fail(ctl, STEP_RO_ROOT);
}

static void loopback_up(int ctl)
{
    struct ifreq ifr;
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (s < 0) child_fail(ctl, STEP_LOOPBACK);
    memset(&ifr, 0, sizeof ifr);
    memcpy(ifr.ifr_name, "lo", 3);
    if (ioctl(s, SIOCGIFFLAGS, &ifr) < 0) child_fail(ctl, STEP_LOOPBACK);
    ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
    if (ioctl(s, SIOCSIFFLAGS, &ifr) < 0) child_fail(ctl, STEP_LOOPBACK);
    close(s);
}

static void send_out_dir(int ctl)
{
    struct ns_msg m = { .kind = MSG_OUT_DIR };
    struct iovec iov = { &m, sizeof m };
    union { char buf[CMSG_SPACE(sizeof(int))]; struct cmsghdr align; } u;
    struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
                         .msg_controllen = sizeof u.buf };
    struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
    int fd = open("/out", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) child_fail(ctl, STEP_SEND_OUT);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(c), &fd, sizeof fd);
    if (sendmsg(ctl, &mh, MSG_NOSIGNAL) < 0) child_fail(ctl, STEP_SEND_OUT);
    close(fd);
}

/* Capabilities: the bounding set first (so exec as uid 0 regains nothing), then ambient,
 * then the sets themselves. The zygote keeps CAP_SETFCAP in its own user namespace: a user
 * namespace may map its parent's root (uid 0 here) only if its creator had it there
 * (verify_root_map()), and each worker creates one (its runner drops everything). */
static void drop_privileges(const ns_plan *p)
{
    struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
    struct __user_cap_data_struct data[2];
    for (int cap = 0; cap < 64; cap++)
        if ((!p->zygote || cap != CAP_SETFCAP) && prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 &&
            errno != EINVAL)
            child_fail(p->ctl, STEP_CAPS);
    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0) child_fail(p->ctl, STEP_CAPS);
    memset(data, 0, sizeof data);
    if (p->zygote) data[0].effective = data[0].permitted = 1u << CAP_SETFCAP;
    if (syscall(SYS_capset, &hdr, data) < 0) child_fail(p->ctl, STEP_CAPS);
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) child_fail(p->ctl, STEP_NNP);
    /* Never unfiltered: without a program the run fails at this step. */
    if (!p->filter) errno = EINVAL;
    if (!p->filter || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, p->filter, 0, 0) < 0)
        child_fail(p->ctl, STEP_SECCOMP);
}

/* Signals: the parent blocks all of them around clone(); we put every caught one back to its
 * default (the caller's handlers must not run here), then unblock, just before exec. */
static void reset_signals(int ctl)
{
    sigset_t none;
    for (int sig = 1; sig < NSIG; sig++) {
        struct sigaction sa;
        if (sig == SIGKILL || sig == SIGSTOP || sigaction(sig, NULL, &sa) < 0) continue;
        if (sa.sa_handler != SIG_DFL && sa.sa_handler != SIG_IGN) {
            memset(&sa, 0, sizeof sa);
            sa.sa_handler = SIG_DFL;
            if (sigaction(sig, &sa, NULL) < 0) child_fail(ctl, STEP_FDS);
        }
    }
    sigemptyset(&none);
    if (sigprocmask(SIG_SETMASK, &none, NULL) < 0) child_fail(ctl, STEP_FDS);
}

/* The descriptors python gets: 0 /dev/null, 1 stdout, 2 stderr, 3 job, 4 report, 5 the
 * runner's source (SANDBOX_RUNNER_FD, which the bootstrap closes); the control socket stays
 * at 6 until exec closes it, to report a failed exec. */
static int runner_fds(const ns_plan *p)
{
    int ctl, in, out, errw, job, val, src;
    /* Out of the way first, so that dup2() onto 0..6 cannot clobber a source. */
    if ((ctl = fcntl(p->ctl, F_DUPFD_CLOEXEC, HIGH_FD)) < 0 ||
        (out = fcntl(p->out_w, F_DUPFD, HIGH_FD)) < 0 ||
        (errw = fcntl(p->err_w, F_DUPFD, HIGH_FD)) < 0 ||
        (job = fcntl(p->job_fd, F_DUPFD, HIGH_FD)) < 0 ||
        (val = fcntl(p->val_w, F_DUPFD, HIGH_FD)) < 0 ||
        (src = fcntl(p->runner_fd, F_DUPFD, HIGH_FD)) < 0 ||
        (in = open("/dev/null", O_RDONLY)) < 0)
        child_fail(p->ctl, STEP_FDS);
    if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(errw, 2) < 0 || dup2(job, 3) < 0 ||
        dup2(val, 4) < 0 || dup2(src, SANDBOX_RUNNER_FD) < 0 || dup3(ctl, 6, O_CLOEXEC) < 0)
        child_fail(ctl, STEP_FDS);
    if (syscall(SYS_close_range, 7, ~0u, 0) < 0) child_fail(6, STEP_FDS);
    return 6;
}

/* The child of clone(): pid 1 of the new pid namespace. It runs on the caller's memory
 * (CLONE_VM: no copy of a possibly large address space, which is most of the cost of a
 * fork) and its own stack, touching nothing but its stack and the plan, until it becomes
 * python by execve(). Python then stays pid 1: when it exits, the kernel kills whatever the
 * code left running in the namespace (a daemon), and it reaps nothing, so orphans linger as
 * zombies until then, counted by the process limit. */
static int ns_child(void *arg)
{
    const ns_plan *p = arg;
    char go;
    int ctl = p->ctl;

    struct pollfd alive = { .fd = ctl, .events = POLLRDHUP };

    /* Our copies of the parent's ends would keep the control socket open on both sides, so a
     * dead parent would go unnoticed below. */
    for (int i = 0; i < 4; i++) close(p->parent_fds[i]);
    /* Not PR_SET_DUMPABLE here, though we run on the caller's memory until exec: nothing
     * else runs in the sandbox before exec (the runner makes itself undumpable first thing),
     * while an undumpable memory makes our /proc files root's, so that a caller who is not
     * root could not write our uid/gid maps, and, the memory being the caller's, no later
     * run of that caller could either. */
    /* The parent writes our uid/gid maps and moves us into the cgroup, then says go. */
    if (recv(ctl, &go, 1, 0) != 1) child_fail(ctl, STEP_SYNC);
    /* The maps name who we are inside; until we switch, our ids are the host's and unmapped.
     * Raw system calls: glibc's wrappers would try to change the ids of every thread of the
     * caller, whose thread list we share (CLONE_VM). */
    if (syscall(SYS_setresgid, 0, 0, 0) < 0 || syscall(SYS_setresuid, 0, 0, 0) < 0)
        child_fail(ctl, STEP_SYNC);
    /* Die with the thread that cloned us, so a killed caller leaves no sandbox behind. Set
     * after the id change, which clears it; a parent gone before that shows as a hang-up. */
    if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0) child_fail(ctl, STEP_SYNC);
    if (poll(&alive, 1, 0) != 0) _exit(127);
    if (p->unbatch && sched_getscheduler(0) == SCHED_BATCH) {
        struct sched_param sp = { 0 };
        sched_setscheduler(0, SCHED_OTHER, &sp);
    }
    if (unshare(CLONE_NEWCGROUP) < 0) child_fail(ctl, STEP_CGROUP_NS);
    build_root(p);
    if (sethostname("calcroute", 9) < 0) child_fail(ctl, STEP_HOSTNAME);
    loopback_up(ctl);
    send_out_dir(ctl);
    drop_privileges(p);
    if (setsid() < 0) child_fail(ctl, STEP_FDS);
    ctl = runner_fds(p);
    /* Where a file the code writes by a bare name comes back as an artifact. */
    if (chdir("/out") < 0) child_fail(ctl, STEP_FDS);
    if (setrlimit(RLIMIT_CPU, &p->rl_cpu) < 0 || setrlimit(RLIMIT_NPROC, &p->rl_nproc) < 0 ||
        setrlimit(RLIMIT_FSIZE, &p->rl_fsize) < 0 || setrlimit(RLIMIT_DATA, &p->rl_data) < 0 ||
        setrlimit(RLIMIT_NOFILE, &p->rl_nofile) < 0 || setrlimit(RLIMIT_CORE, &p->rl_core) < 0 ||
        setrlimit(RLIMIT_MSGQUEUE, &p->rl_msgqueue) < 0 ||
        setrlimit(RLIMIT_SIGPENDING, &p->rl_sigpending) < 0 ||
        setrlimit(RLIMIT_MEMLOCK, &p->rl_memlock) < 0)
        child_fail(ctl, STEP_RLIMIT);
    reset_signals(ctl);
    execve(p->interpreter, p->argv, p->envp);
    child_fail(ctl, STEP_EXEC);
}

/* ---- the parent ---------------------------------------------------------------------------- */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static cr_code ns_fail(cr_error *err, const char *what, int errnum)
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
static int recv_ctl(int ctl, struct ns_msg *m, int *passed_fd, pid_t *sender)
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

#define WARM_START_S 120.0   /* a warm worker's set-up and imports, at most */

/* A warm worker's start: the control socket's end (the child exec'd, or says which step
 * failed), then the runner's "ready". The runner's pid (pid 1 of the worker's namespace, as
 * we see it), or 0 when the worker ends first (err says why, or *fail holds the failed
 * step). */
static pid_t warm_wait(ns_warm *warm, int forked, pid_t pid, int pidfd, int ctl, int pv,
                       int *out_dir_fd, int *runner_pidfd, struct ns_msg *fail, cr_error *err)
{
    double until = now_s() + WARM_START_S;
    int ctl_open = 1, ready = 0;
    pid_t runner = pid;
    /* A forked worker's end stays open to say how its runner ended (the zygote holds a copy
     * for the runner it cloned); its set-up is over once /out has come and its runner has
     * said hello. */
    while ((forked ? *out_dir_fd < 0 || *runner_pidfd < 0 : ctl_open) || !ready) {
        struct pollfd pfd[4] = { { ctl_open ? ctl : -1, POLLIN, 0 }, { ready ? -1 : pv, POLLIN, 0 },
                                 { pidfd, POLLIN, 0 }, { warm->cancel_fd, POLLIN, 0 } };
        int left = (int)((until - now_s()) * 1000);
        if (left <= 0) { ns_fail(err, "warm worker start", ETIMEDOUT); return 0; }
        if (poll(pfd, 4, left) < 0 && errno != EINTR) { ns_fail(err, "poll", errno); return 0; }
        if (pfd[3].revents) {
            cr_error_set(err, CR_ESANDBOX, 0, 0, "ns: the warm pool closed while the worker started");
            return 0;
        }
        if (pfd[0].revents) {
            struct ns_msg m;
            pid_t sender = 0;
            if (!recv_ctl(ctl, &m, out_dir_fd, &sender)) {
                ctl_open = 0;
                if (forked) {
                    cr_error_set(err, CR_ESANDBOX, 0, 0, "ns: the forked worker died while starting");
                    return 0;
                }
            } else if (m.kind == MSG_SETUP_FAILED) {
                *fail = m;
                return 0;
            } else if (m.kind == MSG_HELLO && forked && *runner_pidfd < 0 && sender > 0) {
                /* The worker's runner: its pid namespace's init, which a kill from outside
                 * must take for the worker to be gone at once. */
                if ((*runner_pidfd = (int)syscall(SYS_pidfd_open, sender, 0)) < 0) {
                    ns_fail(err, "pidfd_open", errno);
                    return 0;
                }
                runner = sender;
            }
            continue;
        }
        if (pfd[1].revents) {
            char c = 0;
            if (read(pv, &c, 1) != 1 || c != 'R') {
                cr_error_set(err, CR_ESANDBOX, 0, 0, "ns: the warm runner did not say it was ready");
                return 0;
            }
            ready = 1;
        }
        if (pfd[2].revents) {
            cr_error_set(err, CR_ESANDBOX, 0, 0, "ns: the warm worker died while starting");
            return 0;
        }
    }
    return runner;
}


/* Asks the zygote for a worker: the worker's ends of the run's channels go over (control,
 * stdout, stderr, job, report; ours are closed then, so that a zygote that dies with the
 * request unread hangs the control socket up), and its first message, whose credentials the
 * kernel fills in, names its pid as we see it. -1 with err set when there is none. */
static pid_t zygote_fork(int chan, int ctl, int *const fds[5], cr_error *err)
{
    char req = 'F';
    struct iovec iov = { &req, 1 };
    union { char buf[CMSG_SPACE(5 * sizeof(int))]; struct cmsghdr align; } u;
    struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
                         .msg_controllen = sizeof u.buf };
    struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
    struct ns_msg m = { 0 };
    struct pollfd pf = { ctl, POLLIN, 0 };
    pid_t pid = -1;
    int on = 1, n, passed = -1;
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(5 * sizeof(int));
    for (int i = 0; i < 5; i++) memcpy(CMSG_DATA(c) + i * sizeof(int), fds[i], sizeof(int));
    if (setsockopt(ctl, SOL_SOCKET, SO_PASSCRED, &on, sizeof on) < 0) {
        ns_fail(err, "SO_PASSCRED", errno);
        return -1;
    }
    n = (int)sendmsg(chan, &mh, MSG_NOSIGNAL);
    for (int i = 0; i < 5; i++) {
        close(*fds[i]);
        *fds[i] = -1;
    }
    if (n < 0) {
        ns_fail(err, "ask the zygote for a worker", errno);
        return -1;
    }
    while ((n = poll(&pf, 1, (int)(WARM_START_S * 1000))) < 0 && errno == EINTR) {}
    if (n <= 0) {
        ns_fail(err, "the zygote's worker", n == 0 ? ETIMEDOUT : errno);
        return -1;
    }
    if (!recv_ctl(ctl, &m, &passed, &pid)) pid = -1;
    if (passed >= 0) close(passed);
    if (m.kind != MSG_HELLO || pid <= 0) {
        cr_error_set(err, CR_ESANDBOX, 0, 0, "ns: the zygote's worker did not say hello");
        return -1;
    }
    return pid;
}

/* The zygote's first message: what its workers make of themselves that a cold run's child
 * makes before exec (the tier's filter, rlimits, /tmp and /out, /proc's masks), and the pool's warm-up
 * program, in job records. */
static cr_code zygote_spec(const ns_plan *p, const struct sock_fprog *tier, const char *warmup,
                           cr_buf *b, cr_error *err)
{
    static const struct { const char *name; size_t off; } rl[] = {
        { "cpu", offsetof(ns_plan, rl_cpu) }, { "nproc", offsetof(ns_plan, rl_nproc) },
        { "fsize", offsetof(ns_plan, rl_fsize) }, { "data", offsetof(ns_plan, rl_data) },
        { "nofile", offsetof(ns_plan, rl_nofile) }, { "core", offsetof(ns_plan, rl_core) },
        { "msgqueue", offsetof(ns_plan, rl_msgqueue) },
        { "sigpending", offsetof(ns_plan, rl_sigpending) },
        { "memlock", offsetof(ns_plan, rl_memlock) },
    };
    cr_code rc = CR_OK;
    char line[80];
    for (size_t i = 0; i < sizeof rl / sizeof rl[0] && rc == CR_OK; i++) {
        const struct rlimit *r = (const struct rlimit *)((const char *)p + rl[i].off);
        int n = snprintf(line, sizeof line, "%s %llu %llu", rl[i].name,
                         (unsigned long long)r->rlim_cur, (unsigned long long)r->rlim_max);
        rc = sandbox_record_put(b, "rlimit", line, (size_t)n);
    }
    if (rc == CR_OK) rc = sandbox_record_put(b, "tmp", p->tmp_opts, strlen(p->tmp_opts));
    if (rc == CR_OK) rc = sandbox_record_put(b, "out", p->out_opts, strlen(p->out_opts));
    if (rc == CR_OK)
        rc = sandbox_record_put(b, "filter", (const char *)tier->filter,
                                tier->len * sizeof(struct sock_filter));
    for (size_t i = 0; i < ns_proc_masked_count && rc == CR_OK; i++) {
        int n = snprintf(line, sizeof line, "%s %s", ns_proc_masked[i].dir ? "dir" : "file",
                         ns_proc_masked[i].path);
        rc = sandbox_record_put(b, "mask", line, (size_t)n);
    }
    if (rc == CR_OK) rc = sandbox_record_put(b, "mask_tmpfs", PROC_MASK_TMPFS,
                                             sizeof PROC_MASK_TMPFS - 1);
    if (rc == CR_OK && warmup) rc = sandbox_record_put(b, "warmup", warmup, strlen(warmup));
    return rc == CR_OK ? CR_OK : cr_error_set(err, rc, 0, 0, "ns: the zygote's set-up: %s",
                                              cr_strerror(rc));
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

/* The job's bytes for the runner: already encoded by the caller (the kvm guest), or encoded
 * here into r->jobbuf. */
static cr_code job_bytes(ns_run_state *r, const char **p, size_t *len)
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

static cr_code warm_job_start(ns_run_state *r, const sandbox_job *real);
static cr_code run_supervise(ns_run_state *r);
static cr_code run_collect(ns_run_state *r);

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

/* A warm worker's job: from here on the run is the job's: its limits (the key's, but for
 * those the parent alone enforces), its wall clock from now; the job goes to the code's
 * process. */
static cr_code warm_job_start(ns_run_state *r, const sandbox_job *real)
{
    const char *jp;
    size_t jn;
    cr_code rc;
    r->job = real;
    r->lim = real->limits;
    sandbox_limits_resolve(&r->lim);
    cr_buf_init(&r->out->stdout_buf, r->lim.max_stdout);
    cr_buf_init(&r->out->stderr_buf, r->lim.max_stderr);
    r->out->warm = 1;
    r->ctl_open = r->forked;
    r->t0 = now_s();
    r->cpu_next = r->t0 + CPU_POLL_MS / 1e3;
    if ((rc = job_bytes(r, &jp, &jn)) != CR_OK) return rc;
    for (size_t off = 0; off < jn;) {
        ssize_t n = send(r->warm_fd, jp + off, jn - off, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;   /* the code's process is gone: the run's end says how */
        off += (size_t)n;
    }
    close(r->warm_fd);
    r->warm_fd = -1;
    return CR_OK;
}

cr_code ns_warm_run(ns_warm *warm, const sandbox_job *job, sandbox_outcome *out, cr_error *err)
{
    ns_run_state *r = warm->run;
    cr_code rc;
    /* What the worker's set-up noted (its cgroup's note); no output yet. */
    *out = *r->out;
    r->out = out;
    r->err = err;
    if ((rc = warm_job_start(r, job)) == CR_OK && (rc = run_supervise(r)) == CR_OK)
        rc = run_collect(r);
    if (rc != CR_OK) sandbox_outcome_free(out);
    return rc;
}

/* Step 3: the streams read and the limits enforced until pid 1 is gone (or, warm, its report
 * is whole), then whatever is left of the run killed and its status taken. */
static cr_code run_supervise(ns_run_state *r)
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
static cr_code run_collect(ns_run_state *r)
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
