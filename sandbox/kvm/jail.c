/* sandbox/kvm/jail.c: the VMM process's own sandbox, applied after set-up (the files are
 * read, /dev/kvm and the VM are open): a guest that escapes the VM lands in a process that
 * has no network and an empty read-only root, cannot gain privileges, and runs under a seccomp
 * filter that allows KVM_RUN and the few calls a running VMM makes, and ends it for anything
 * else. */
#include <errno.h>
#include <linux/kvm.h>
#include <sched.h>
#include <signal.h>
#include <seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sandbox/kvm/vmm.h"
#include "sandbox/ns/ns.h"

/* What the run loop, the result copy and stdio need, and nothing that opens, executes,
 * connects or changes identity. ioctl is allowed for KVM_RUN only. */
static const int allowed[] = {
    SCMP_SYS(read), SCMP_SYS(write), SCMP_SYS(close), SCMP_SYS(exit), SCMP_SYS(exit_group),
    SCMP_SYS(rt_sigreturn), SCMP_SYS(rt_sigprocmask), SCMP_SYS(clock_gettime),
    SCMP_SYS(gettimeofday), SCMP_SYS(time), SCMP_SYS(timer_create), SCMP_SYS(timer_settime),
    SCMP_SYS(timer_delete), SCMP_SYS(gettid), SCMP_SYS(getpid), SCMP_SYS(mmap),
    SCMP_SYS(munmap), SCMP_SYS(mremap), SCMP_SYS(brk), SCMP_SYS(madvise), SCMP_SYS(futex),
    SCMP_SYS(fstat), SCMP_SYS(newfstatat), SCMP_SYS(tgkill), SCMP_SYS(sched_yield),
    SCMP_SYS(sigaltstack),     /* AddressSanitizer sets one up on its first signal */
};

/* A call outside the filter ends the process with exit status VMM_JAIL_TRAPPED after naming
 * the call on stderr: the parent can then say which call a VMM change forgot. */
static void trapped(int sig, siginfo_t *si, void *uc)
{
    char msg[80] = "kvm: jail: system call outside the seccomp filter: ";
    size_t n = strlen(msg);
    unsigned v = (unsigned)si->si_syscall;
    char digits[12];
    int d = 0;
    CR_UNUSED(sig); CR_UNUSED(uc);
    do digits[d++] = (char)('0' + v % 10); while ((v /= 10) && d < 11);
    while (d) msg[n++] = digits[--d];
    msg[n++] = '\n';
    (void)!write(2, msg, n);
    _exit(VMM_JAIL_TRAPPED);
}

/* Our root becomes an empty read-only tmpfs, the host's tree detached: nothing of it is
 * reachable by path (the filter refuses open as well; this holds should it ever be loosened).
 * pivot_root(2) refuses an initramfs root (the nested test host's), where chroot stands in. */
static int empty_root(void)
{
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
        mount("jail", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RDONLY,
              "size=4k,nr_inodes=2,mode=0555") < 0 ||
        chdir("/tmp") < 0)
        return -1;
    if (syscall(SYS_pivot_root, ".", ".") == 0) {
        if (umount2(".", MNT_DETACH) < 0) return -1;
    } else if (chroot(".") < 0) {
        return -1;
    }
    return chdir("/");
}

static cr_code jail_fail(cr_error *err, const char *what, int e)
{
    return cr_error_set(err, CR_ESANDBOX, 0, 0, "kvm: jail: %s: %s", what, strerror(e));
}

cr_code vmm_jail(char *note, size_t note_len, cr_error *err)
{
    scmp_filter_ctx ctx = NULL;
    cr_code rc = CR_OK;
    int r;

    if (note_len) note[0] = '\0';
    /* The handler the run loop needs, installed while rt_sigaction is still allowed. */
    if ((rc = vmm_kick_init(err)) != CR_OK) return rc;
    /* New mount, network, IPC and UTS namespaces: as root directly, else inside a user
     * namespace. A host that allows neither still gets the filter; the note says what was
     * missing. */
    int ns = CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS;
    if (unshare(ns) < 0 && unshare(CLONE_NEWUSER | ns) < 0)
        snprintf(note, note_len, "VMM without namespaces (unshare: %s)", strerror(errno));
    else if (empty_root() < 0)
        snprintf(note, note_len, "VMM with the host's root (empty root: %s)", strerror(errno));
    struct rlimit none = { 0, 0 };
    if (setrlimit(RLIMIT_CORE, &none) < 0) return jail_fail(err, "RLIMIT_CORE", errno);
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
        return jail_fail(err, "PR_SET_NO_NEW_PRIVS", errno);

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = trapped;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGSYS, &sa, NULL) < 0) return jail_fail(err, "sigaction SIGSYS", errno);
    if (!(ctx = seccomp_init(SCMP_ACT_TRAP)))
        return jail_fail(err, "seccomp_init", ENOMEM);
    for (size_t i = 0; i < sizeof allowed / sizeof allowed[0]; i++)
        if ((r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, allowed[i], 0)) < 0) {
            rc = jail_fail(err, "seccomp_rule_add", -r);
            goto out;
        }
    if ((r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), 1,
                              SCMP_A1(SCMP_CMP_EQ, KVM_RUN))) < 0) {
        rc = jail_fail(err, "seccomp_rule_add ioctl", -r);
        goto out;
    }
    if ((r = seccomp_load(ctx)) < 0) rc = jail_fail(err, "seccomp_load", -r);
out:
    seccomp_release(ctx);
    return rc;
}

/* ---- the VMM's cgroup ------------------------------------------------------------------
 * The ns tier's (sandbox/ns/cgroup.c), with limits of the VMM's own. */

uint64_t vmm_cgroup_memory(const vmm_config *cfg)
{
    /* The region twice: the guest's and the VMM's copy of the result it sends back. */
    return cfg->mem_bytes + 2 * (uint64_t)cfg->shared_bytes + VMM_CGROUP_OVERHEAD;
}

void vmm_cgroup_create(ns_cgroup *cg, const vmm_config *cfg)
{
    sandbox_limits lim;
    memset(&lim, 0, sizeof lim);
    lim.memory_bytes = vmm_cgroup_memory(cfg);
    lim.max_procs = VMM_CGROUP_TASKS;
    ns_cgroup_create(cg, &lim);
    /* The ns tier's notes name its rlimits, which the VMM has not: what bounds it instead. */
    if (!cg->has_mem || !cg->has_pids)
        snprintf(cg->note, sizeof cg->note, "VMM without %s: %s%s%s",
                 !cg->has_mem && !cg->has_pids ? "a cgroup"
                 : !cg->has_mem ? "a memory cgroup" : "a pids cgroup",
                 cg->has_mem ? "" : "its memory bounded by the VM's size only",
                 !cg->has_mem && !cg->has_pids ? ", " : "",
                 cg->has_pids ? "" : "its tasks by its seccomp filter");
}

cr_code vmm_cgroup_join(const ns_cgroup *cg, cr_error *err)
{
    int r = ns_cgroup_attach(cg, getpid());
    return r < 0 ? jail_fail(err, "join cgroup", -r) : CR_OK;
}

void vmm_cgroup_note(const ns_cgroup *cg, const vmm_config *cfg, char *note, size_t len)
{
    char peak_s[80] = "";
    int64_t peak = ns_cgroup_peak_bytes(cg);
    if (peak >= 0)
        snprintf(peak_s, sizeof peak_s, "VMM memory peak %.1f MiB (cgroup max %llu MiB)",
                 (double)peak / (1 << 20), (unsigned long long)(vmm_cgroup_memory(cfg) >> 20));
    snprintf(note, len, "%s%s%s", cg->note, cg->note[0] && peak_s[0] ? "; " : "", peak_s);
}
