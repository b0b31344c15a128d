/* sandbox/kvm/kvm_tier.c: the kvm tier behind sandbox.h: is this host able to run it, and a
 * run. The guest kernel and initramfs are files the build makes (sandbox/kvm/fetch-kernel.sh,
 * sandbox/guest/); CR_KVM_KERNEL and CR_KVM_INITRD name other copies. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sandbox/kvm/vmm.h"
#include "sandbox/sandbox.h"

#define DEFAULT_KERNEL "build/kvm/kernel/vmlinuz"
#define DEFAULT_INITRD "build/kvm/guest/initrd.cpio"

static const char *guest_file(const char *env, const char *dflt)
{
    const char *p = getenv(env);
    return p && *p ? p : dflt;
}

/* The host probe opens /dev/kvm and reads /proc: once per process is enough. */
static pthread_once_t probe_once = PTHREAD_ONCE_INIT;
static int probe_ok;
static char probe_why[200];

static void probe(void)
{
    probe_ok = kvm_can_boot_linux(probe_why, sizeof probe_why);
}

int sandbox_kvm_available(char *why, size_t why_len)
{
    const char *kernel = guest_file("CR_KVM_KERNEL", DEFAULT_KERNEL);
    const char *initrd = guest_file("CR_KVM_INITRD", DEFAULT_INITRD);

    if (pthread_once(&probe_once, probe) != 0) {
        snprintf(why, why_len, "kvm: host probe failed; try --tier ns");
        return 0;
    }
    if (!probe_ok) {
        snprintf(why, why_len, "%s", probe_why);
        return 0;
    }
    if (access(kernel, R_OK) != 0) {
        snprintf(why, why_len, "no guest kernel at %s (sandbox/kvm/fetch-kernel.sh makes it); "
                 "try --tier ns", kernel);
        return 0;
    }
    if (access(initrd, R_OK) != 0) {
        snprintf(why, why_len, "no guest initramfs at %s; try --tier ns", initrd);
        return 0;
    }
    if (why_len) why[0] = '\0';
    return 1;
}

/* What the guest needs beside the job's own memory: the kernel, the unpacked initramfs and
 * python3 itself. */
#define GUEST_OVERHEAD (192ull << 20)
#define MAX_REPORT (256u << 10)
#define BOOT_ALLOWANCE_S 10.0       /* the boot's own share of the wall clock; CR_KVM_BOOT_S */
/* No PCI, no ACPI, no modules: the guest has nothing to find. reboot=k and panic=-1 turn a
 * power-off or a panic into an i8042 reset, which ends the run at once. */
#define CMDLINE "console=ttyS0 quiet reboot=k panic=-1 pci=off acpi=off nomodule " \
                "i8042.noaux i8042.nomux i8042.nopnp i8042.dumbkbd rdinit=/init"

static double elapsed(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) + (t.tv_nsec - t0->tv_nsec) / 1e9;
}

static void set_buf(cr_buf *b, const char *p, size_t len, int truncated)
{
    cr_buf_init(b, 0);
    if (len) (void)cr_buf_put(b, p, len);     /* ENOMEM leaves it short; it stays valid */
    b->truncated = truncated;
}

/* The guest's result into the outcome; the guest is not trusted with the limit's value. */
static cr_code take_result(const vmm_page_result *r, sandbox_outcome *out, cr_error *err)
{
    if (r->limit > SANDBOX_LIMIT_ARTIFACTS)
        return cr_error_set(err, CR_ESANDBOX, 0, 0, "kvm: result page: limit %u", r->limit);
    out->exited = r->exited;
    out->exit_code = r->exit_code;
    out->term_signal = r->term_signal;
    out->limit = (sandbox_limit)r->limit;
    set_buf(&out->stdout_buf, r->out, r->out_len, !!(r->flags & CRVM_OUT_TRUNCATED));
    set_buf(&out->stderr_buf, r->errs, r->err_len, !!(r->flags & CRVM_ERR_TRUNCATED));
    return sandbox_report_parse(r->report, r->report_len, out, err);
}

/* The serial console's last lines: what a guest that died without a result said last. */
static const char *serial_tail(const vmm *vm)
{
    size_t len;
    const char *s = vmm_serial(vm, &len, NULL);
    return len > 160 ? s + len - 160 : s;
}

cr_code sandbox_kvm_run(const sandbox_job *job, sandbox_outcome *out, cr_error *err)
{
    char why[256], cmdline[1024];
    struct timespec t0;
    sandbox_limits lim;
    cr_buf enc;
    vmm *vm = NULL;
    vmm_config c;
    vmm_page_result r;
    vmm_stop stop = VMM_STOP_NONE;
    cr_code rc;

    clock_gettime(CLOCK_MONOTONIC, &t0);
    memset(out, 0, sizeof *out);
    memset(&r, 0, sizeof r);
    cr_buf_init(&enc, 0);
    if (!job) return cr_error_set(err, CR_EUSAGE, 0, 0, "kvm: no job");
    /* Fail fast, with the reason, where a Linux guest cannot run (a PVM host, say). */
    if (!sandbox_kvm_available(why, sizeof why))
        return cr_error_set(err, CR_ESANDBOX, 0, 0, "kvm: %s", why);
    lim = job->limits;
    sandbox_limits_resolve(&lim);
    if ((rc = sandbox_job_encode(job, &enc, err)) != CR_OK) goto out;

    vmm_config_default(&c);
    uint64_t mem = lim.memory_bytes + GUEST_OVERHEAD;
    c.mem_bytes = mem > VMM_MAX_MEM ? VMM_MAX_MEM : (mem + 0xfffff) & ~0xfffffull;
    uint64_t shared = 4096 + enc.len + lim.max_stdout + lim.max_stderr + MAX_REPORT + 4 * 64;
    shared = (shared + 4095) & ~4095ull;
    if (shared > VMM_MAX_SHARED) {
        rc = cr_error_set(err, CR_ELIMIT, 0, 0, "kvm: job and output limits need %llu bytes of "
                          "shared memory (at most %llu)", (unsigned long long)shared,
                          VMM_MAX_SHARED);
        goto out;
    }
    c.shared_bytes = (uint32_t)shared;
    const char *boot = getenv("CR_KVM_BOOT_S");
    double boot_s = boot && atof(boot) > 0 ? atof(boot) : BOOT_ALLOWANCE_S;
    c.wall_s = lim.wall_s + boot_s;
    c.max_exits = 10000000;
    vmm_job_limits jl = {
        .wall_ms = (uint32_t)(lim.wall_s * 1000), .cpu_ms = (uint32_t)(lim.cpu_s * 1000),
        .max_procs = lim.max_procs, .memory_bytes = lim.memory_bytes,
        .max_stdout = (uint32_t)lim.max_stdout, .max_stderr = (uint32_t)lim.max_stderr,
        .max_report = MAX_REPORT,
    };
    if ((rc = vmm_open(&c, &vm, err)) != CR_OK) goto out;
    if ((rc = vmm_page_write(vm, enc.p, enc.len, &jl, err)) != CR_OK) goto out;
    /* CR_KVM_CMDLINE adds kernel arguments ("loglevel=8"); CR_KVM_CONSOLE=1 copies the guest
     * console to stderr after the run: the two ways to see a guest that went wrong. */
    const char *extra = getenv("CR_KVM_CMDLINE");
    snprintf(cmdline, sizeof cmdline, "%s %s", CMDLINE, extra ? extra : "");
    if ((rc = vmm_boot_linux(vm, guest_file("CR_KVM_KERNEL", DEFAULT_KERNEL),
                             guest_file("CR_KVM_INITRD", DEFAULT_INITRD), cmdline, err)) != CR_OK)
        goto out;
    rc = vmm_run(vm, &stop, err);
    const char *console = getenv("CR_KVM_CONSOLE");
    if (console && !strcmp(console, "1")) {
        char stats[1024];
        vmm_exit_stats(vm, stats, sizeof stats);
        fprintf(stderr, "%s\nkvm: %s in %.3f s: %s\n", vmm_serial(vm, NULL, NULL),
                vmm_stop_name(stop), elapsed(&t0), stats);
    }
    if (rc != CR_OK) goto out;
    out->tier = CR_TIER_KVM;
    switch (stop) {
    case VMM_STOP_DOORBELL:
        if ((rc = vmm_page_read(vm, &r, err)) == CR_OK) rc = take_result(&r, out, err);
        break;
    case VMM_STOP_TIMEOUT:
        out->exited = 0;
        out->term_signal = 9;
        out->limit = SANDBOX_LIMIT_WALL;
        snprintf(out->limit_detail, sizeof out->limit_detail, "wall clock %.3f s (%.3f s of it "
                 "for the boot)", c.wall_s, boot_s);
        break;
    default:
        rc = cr_error_set(err, CR_ESANDBOX, 0, 0, "kvm: the guest ended (%s) without a result; "
                          "console: %s", vmm_stop_name(stop), serial_tail(vm));
        break;
    }
out:
    out->wall_s = out->cpu_s = elapsed(&t0);
    vmm_page_result_free(&r);
    vmm_close(vm);
    cr_buf_free(&enc);
    if (rc != CR_OK) sandbox_outcome_free(out);
    return rc;
}
