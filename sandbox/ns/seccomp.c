/* sandbox/ns/seccomp.c: the system-call filter of the namespace tier.
 *
 * A deny list over an allow-all default: the interpreter and whatever libraries the code
 * imports need a large and changing set of calls, while what must never work is a short list
 * (the kernel attack surface that namespaces do not cover, and any way out of them). Denied
 * calls fail with EPERM so that Python raises PermissionError instead of dying. Calls of a
 * foreign ABI (32-bit int 0x80, x32) kill the process: libseccomp's default for a bad arch.
 *
 * Two classes the namespaces leave open are closed here. Kernel objects charged to the
 * caller's user on the host, not to the sandbox (inotify instances against
 * fs.inotify.max_user_instances, fanotify groups), or to the host (AIO contexts): a run could
 * use up the quota of the caller's other processes. And Unix sockets with a path: a socket file under /data (or any
 * host tree bound in) is a channel to a host service that no read-only mount closes. */
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

static pthread_once_t once = PTHREAD_ONCE_INIT;
static struct sock_fprog program;
static int built;
static char build_error[200];

static const char *const denied[] = {
    /* debugging and other processes' memory */
    "ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd",
    /* filesystems and the root */
    "mount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree", "fsopen", "fsmount",
    "fsconfig", "fspick", "mount_setattr", "name_to_handle_at", "open_by_handle_at",
    "quotactl", "quotactl_fd", "swapon", "swapoff", "sysfs", "ustat", "uselib", "acct",
    /* namespaces */
    "unshare", "setns", "clone3",
    /* kernel programmability and the kernel itself */
    "bpf", "perf_event_open", "kexec_load", "kexec_file_load", "init_module",
    "finit_module", "delete_module", "reboot", "syslog", "lookup_dcookie", "iopl", "ioperm",
    /* keyrings */
    "keyctl", "add_key", "request_key",
    /* page-fault handling and the io_uring surface */
    "userfaultfd", "io_uring_setup", "io_uring_enter", "io_uring_register",
    /* clocks and accounting that are host-wide */
    "settimeofday", "clock_settime", "clock_adjtime", "adjtimex", "vhangup",
    "nfsservctl", "_sysctl",
    /* charged to the caller's user on the host, or to the host as a whole (fs.aio-max-nr) */
    "inotify_init", "inotify_init1", "fanotify_init", "io_setup",
};

static int deny(scmp_filter_ctx ctx, int nr, unsigned n, const struct scmp_arg_cmp *args)
{
    return seccomp_rule_add_array(ctx, SCMP_ACT_ERRNO(EPERM), nr, n, args);
}

static void build(void)
{
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
    int rc = 0, fd = -1;
    const char *step = "seccomp_init";
    off_t size;

    if (!ctx) goto fail;
    step = "deny list";
    for (size_t i = 0; i < sizeof denied / sizeof denied[0] && rc == 0; i++) {
        int nr = seccomp_syscall_resolve_name(denied[i]);
        if (nr == __NR_SCMP_ERROR) continue;  /* not a call on this architecture */
        if (nr == seccomp_syscall_resolve_name("clone3"))
            /* clone3 passes its flags in memory the filter cannot read; ENOSYS makes glibc
             * fall back to clone(), whose flags it can. */
            rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), nr, 0);
        else
            rc = deny(ctx, nr, 0, NULL);
    }
    /* clone() creating any namespace. */
    step = "clone flags";
    static const unsigned long ns_flags[] = { CLONE_NEWNS, CLONE_NEWCGROUP, CLONE_NEWUTS,
                                              CLONE_NEWIPC, CLONE_NEWUSER, CLONE_NEWPID,
                                              CLONE_NEWNET };
    for (size_t i = 0; i < sizeof ns_flags / sizeof ns_flags[0] && rc == 0; i++) {
        struct scmp_arg_cmp a = SCMP_A0(SCMP_CMP_MASKED_EQ, ns_flags[i], ns_flags[i]);
        rc = deny(ctx, SCMP_SYS(clone), 1, &a);
    }
    /* socket(): AF_INET and AF_INET6 only (the network namespace has nothing but loopback);
     * no AF_UNIX, whose connect() and sendto() reach any socket file the code can name.
     * socketpair(): AF_UNIX streams and seqpackets only (multiprocessing, asyncio): born
     * connected, they cannot be pointed elsewhere, while a datagram pair could sendto() a
     * path. Families are small integers: everything outside the list is denied by ranges. */
    step = "socket families";
    {
        struct scmp_arg_cmp a;
        for (int fam = 0; fam < AF_INET6 && rc == 0; fam++) {
            if (fam == AF_INET) continue;
            a = (struct scmp_arg_cmp)SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)fam);
            rc = deny(ctx, SCMP_SYS(socket), 1, &a);
        }
        if (rc == 0) {
            a = (struct scmp_arg_cmp)SCMP_A0(SCMP_CMP_GT, AF_INET6);
            rc = deny(ctx, SCMP_SYS(socket), 1, &a);
        }
        if (rc == 0) {
            a = (struct scmp_arg_cmp)SCMP_A0(SCMP_CMP_NE, AF_UNIX);
            rc = deny(ctx, SCMP_SYS(socketpair), 1, &a);
        }
        /* The type's low four bits (SOCK_TYPE_MASK); the rest are SOCK_CLOEXEC and the like. */
        for (unsigned type = 0; type < 16 && rc == 0; type++) {
            if (type == SOCK_STREAM || type == SOCK_SEQPACKET) continue;
            a = (struct scmp_arg_cmp)SCMP_A1(SCMP_CMP_MASKED_EQ, 0xf, type);
            rc = deny(ctx, SCMP_SYS(socketpair), 1, &a);
        }
    }
    /* Faking terminal input (TIOCSTI) and console tricks (TIOCLINUX). */
    step = "ioctl";
    if (rc == 0) {
        struct scmp_arg_cmp a = SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, TIOCSTI);
        rc = deny(ctx, SCMP_SYS(ioctl), 1, &a);
    }
    if (rc == 0) {
        struct scmp_arg_cmp a = SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, TIOCLINUX);
        rc = deny(ctx, SCMP_SYS(ioctl), 1, &a);
    }
    /* personality(): only the query (0xffffffff) that libc and Python's platform use. */
    step = "personality";
    if (rc == 0) {
        struct scmp_arg_cmp a = SCMP_A0(SCMP_CMP_NE, 0xffffffffu);
        rc = deny(ctx, SCMP_SYS(personality), 1, &a);
    }
    if (rc != 0) { errno = -rc; goto fail; }

    /* Export once into memory, so the child only needs prctl(). */
    step = "export";
    if ((fd = memfd_create("calcroute-seccomp", MFD_CLOEXEC)) < 0) goto fail;
    if ((rc = seccomp_export_bpf(ctx, fd)) != 0) { errno = -rc; goto fail; }
    if ((size = lseek(fd, 0, SEEK_END)) <= 0 || size % sizeof(struct sock_filter)) goto fail;
    program.filter = malloc((size_t)size);
    if (!program.filter || pread(fd, program.filter, (size_t)size, 0) != size) goto fail;
    program.len = (unsigned short)(size / sizeof(struct sock_filter));
    close(fd);
    seccomp_release(ctx);
    built = 1;
    return;
fail:
    snprintf(build_error, sizeof build_error, "seccomp filter: %s: %s", step, strerror(errno));
    if (fd >= 0) close(fd);
    if (ctx) seccomp_release(ctx);
}

const struct sock_fprog *ns_seccomp_program(char *why, size_t why_len)
{
    pthread_once(&once, build);
    if (built) return &program;
    snprintf(why, why_len, "%s", build_error);
    return NULL;
}
