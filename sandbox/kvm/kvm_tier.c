/* sandbox/kvm/kvm_tier.c: the kvm tier behind sandbox.h: is this host able to run it, and a
 * run. The guest kernel and initramfs are files the build makes (sandbox/kvm/fetch-kernel.sh,
 * sandbox/guest/); CR_KVM_KERNEL and CR_KVM_INITRD name other copies. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sandbox/kvm/vmm.h"
#include "sandbox/sandbox.h"

#define DEFAULT_KERNEL "build/kvm/kernel/vmlinuz"
#define DEFAULT_INITRD "build/kvm/guest/initrd.cpio.gz"

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

cr_code sandbox_kvm_run(const sandbox_job *job, sandbox_outcome *out, cr_error *err)
{
    char why[256];
    memset(out, 0, sizeof *out);
    if (!job) return cr_error_set(err, CR_EUSAGE, 0, 0, "kvm: no job");
    /* Fail fast, with the reason, where a Linux guest cannot run (a PVM host, say). */
    if (!sandbox_kvm_available(why, sizeof why))
        return cr_error_set(err, CR_ESANDBOX, 0, 0, "kvm: %s", why);
    return cr_error_set(err, CR_ESANDBOX, 0, 0, "kvm: booting the Linux guest is not "
                        "implemented yet; try --tier ns");
}
