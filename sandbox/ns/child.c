/* sandbox/ns/child.c: the namespace tier's child, pid 1 of its namespaces, from clone() to
 * execve(): the fresh root, the privileges dropped, the descriptors set, the runner exec'd.
 * Only system calls on data the parent prepared (ns_plan): no malloc, no stdio. */

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
int ns_child(void *arg)
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
