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

/* The tier's filter, and the warm pool's zygote's: the same but that it may unshare and mount,
 * which its workers do to leave its namespaces for their own before they load the tier's
 * filter over it (filters stack; the stricter answer wins). Only our runner ever runs under
 * the zygote's alone. */
typedef struct {
    pthread_once_t once;
    struct sock_fprog program;
    int built;
    char error[200];
} filter;
static filter filters[2] = { { .once = PTHREAD_ONCE_INIT }, { .once = PTHREAD_ONCE_INIT } };
static const char *const zygote_allowed[] = { "mount", "unshare" };

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

static int allowed(const char *name, int zygote)
{
    for (size_t i = 0; zygote && i < sizeof zygote_allowed / sizeof zygote_allowed[0]; i++)
        if (strcmp(name, zygote_allowed[i]) == 0) return 1;
    return 0;
}

static void build(filter *f, int zygote)
{
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
    int rc = 0, fd = -1;
    const char *step = "seccomp_init";
    off_t size;
    ssize_t got;

    if (!ctx) {
        errno = ENOMEM;   /* libseccomp says no more */
        goto fail;
    }
    step = "deny list";
    for (size_t i = 0; i < sizeof denied / sizeof denied[0] && rc == 0; i++) {
        int nr = seccomp_syscall_resolve_name(denied[i]);
        /* Not a call on this architecture, or one the zygote needs. */
        if (nr == __NR_SCMP_ERROR || allowed(denied[i], zygote)) continue;
        if (nr == seccomp_syscall_resolve_name("clone3"))
            /* clone3 passes its flags in memory the filter cannot read; ENOSYS makes glibc
             * fall back to clone(), whose flags it can. */
            rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), nr, 0);
        else
            rc = deny(ctx, nr, 0, NULL);
    }
    /* clone() creating any namespace. */
    if (rc == 0) step = "clone flags";
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
    if (rc == 0) step = "socket families";
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
    if (rc == 0) step = "ioctl";
    if (rc == 0) {
        struct scmp_arg_cmp a = SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, TIOCSTI);
        rc = deny(ctx, SCMP_SYS(ioctl), 1, &a);
    }
    if (rc == 0) {
        struct scmp_arg_cmp a = SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, TIOCLINUX);
        rc = deny(ctx, SCMP_SYS(ioctl), 1, &a);
    }
    /* personality(): only the query (0xffffffff) that libc and Python's platform use. */
    if (rc == 0) step = "personality";
    if (rc == 0) {
        struct scmp_arg_cmp a = SCMP_A0(SCMP_CMP_NE, 0xffffffffu);
        rc = deny(ctx, SCMP_SYS(personality), 1, &a);
    }
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
