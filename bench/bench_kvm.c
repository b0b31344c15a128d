/* bench/bench_kvm.c: cold start of our VMM, as figures (it never passes or fails on time).
 *
 *   bench_kvm boot KERNEL INITRD [N]   N cold boots of the guest kernel with the initramfs up
 *                                       to the point where it would run init (rdinit names a
 *                                       missing file, so the kernel panics there and resets):
 *                                       the same work `qemu-system-x86_64 -M microvm` does in
 *                                       bench/bench_kvm.sh. Prints wall seconds and the
 *                                       kernel's own timestamp of the panic.
 *   bench_kvm run [N]                   N runs of print(1) through the kvm tier (its kvm
 *                                       directory, $CALCROUTE_KVM_DIR): cold start to result.
 *   bench_kvm snapshot [N]              restore -> result beside cold boot -> result, N runs
 *                                       each, for print(1), a standard-library finance
 *                                       program and, with the package image, a numpy+pandas
 *                                       one; the medians, the line "kvm restore/cold
 *                                       ratio: N" (print(1)'s), and the VMM's private memory
 *                                       after the finance answer (smaps_rollup, restored).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "sandbox/kvm/vmm.h"
#include "sandbox/sandbox.h"

#define BOOT_CMDLINE "console=ttyS0 quiet reboot=k panic=-1 pci=off acpi=off nomodule " \
                     "i8042.noaux i8042.nomux i8042.nopnp i8042.dumbkbd rdinit=/missing"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The printk timestamp of the line holding `what` ("[    1.234567] ...what"), or -1. */
static double kernel_stamp(const char *console, const char *what)
{
    const char *hit = strstr(console, what), *open = NULL;
    if (!hit) return -1;
    for (const char *p = console; p < hit; p++)
        if (*p == '[') open = p;
    return open ? atof(open + 1) : -1;
}

static int bench_boot(const char *kernel, const char *initrd, int n)
{
    printf("our VMM, boot to init (rdinit missing -> panic -> reset), %d runs\n", n);
    for (int i = 0; i < n; i++) {
        vmm_config c;
        vmm *vm = NULL;
        cr_error e = {0};
        vmm_stop stop = VMM_STOP_NONE;
        vmm_config_default(&c);
        c.mem_bytes = 320ull << 20;
        c.wall_s = 600;
        c.max_serial = 1 << 20;
        double t0 = now();
        if (vmm_open(&c, &vm, &e) != CR_OK ||
            vmm_boot_linux(vm, kernel, initrd, NULL, 0, BOOT_CMDLINE, &e) != CR_OK ||
            vmm_run(vm, &stop, &e) != CR_OK) {
            fprintf(stderr, "bench_kvm: %s\n", e.message);
            vmm_close(vm);
            return 1;
        }
        double dt = now() - t0;
        const char *con = vmm_serial(vm, NULL, NULL);
        char stats[512];
        vmm_exit_stats(vm, stats, sizeof stats);
        printf("  run %d: %.3f s wall, stop %s, kernel's own clock at the panic %.3f s; "
               "%.60s...\n", i + 1, dt, vmm_stop_name(stop), kernel_stamp(con, "Kernel panic"),
               stats);
        vmm_close(vm);
    }
    return 0;
}

/* One run of code on the kvm tier: wall seconds, or -1; the tier note into note. */
static double timed_run(const char *code, char *note, size_t n)
{
    sandbox_job job;
    sandbox_outcome oc;
    cr_error e = {0};
    sandbox_job_init(&job);
    job.tier = CR_TIER_KVM;
    job.code = code;
    job.code_len = strlen(code);
    /* Else the defaults: the warm python's. A cold pandas import takes minutes under
     * nested emulation. */
    job.limits.wall_s = job.limits.cpu_s = 600;
    double t0 = now();
    if (sandbox_run(&job, &oc, &e) != CR_OK) {
        fprintf(stderr, "bench_kvm: %s\n", e.message);
        return -1;
    }
    double dt = now() - t0;
    snprintf(note, n, "%s", oc.tier_note);
    if (oc.exit_code != 0) fprintf(stderr, "bench_kvm: exit %d: %s\n", oc.exit_code,
                                   oc.stderr_buf.p ? oc.stderr_buf.p : "");
    sandbox_outcome_free(&oc);
    return dt;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#define FINANCE "from decimal import Decimal\nimport statistics\n" \
    "cf = [-1000, 300, 420, 680]\nr = Decimal('0.08')\n" \
    "npv = sum(Decimal(c) / (1 + r) ** i for i, c in enumerate(cf))\n" \
    "growth = [(b - a) / a for a, b in zip([120.5, 131.2, 140.9], [131.2, 140.9, 152.3])]\n" \
    "print(round(npv, 2), round(statistics.mean(growth) * 100, 2))\n"

/* With the package image: the finance stack, imported in the snapshot's warm python. */
#define PANDAS "import numpy as np, pandas as pd\n" \
    "df = pd.DataFrame({'t': range(4), 'cash': [-1000.0, 300, 420, 680]})\n" \
    "print(round(float((df.cash / 1.08 ** df.t).sum()), 2), np.cumsum(df.cash.to_numpy())[-1])\n"

/* The medians of n restored and n cold runs of code, taken in turns (restore, the restore
 * with less of its working set prefaulted, cold boot), so that a machine whose load changes
 * weighs on all alike; the first restore (which may make the snapshot) is not counted. */
static int compare(const char *name, const char *code, int n, double *ratio)
{
    /* CR_KVM_PREFAULT (snapshot.c): unset, then the written pages only, then none. */
    static const char *const modes[] = { NULL, "write", "0" };
    double warm[3][64], cold[64];
    char note[512];
    if (n > 64) n = 64;
    unsetenv("CR_KVM_COLD");
    if (timed_run(code, note, sizeof note) < 0) return 1;
    printf("  %s: first run %s\n", name, note);
    for (int i = 0; i < n; i++) {
        for (int m = 0; m < 3; m++) {
            if (modes[m]) setenv("CR_KVM_PREFAULT", modes[m], 1);
            warm[m][i] = timed_run(code, note, sizeof note);
            unsetenv("CR_KVM_PREFAULT");
            if (warm[m][i] < 0) return 1;
            if (!modes[m]) printf("    restore %d: %.3f s (%s)\n", i + 1, warm[m][i], note);
        }
        setenv("CR_KVM_COLD", "1", 1);
        cold[i] = timed_run(code, note, sizeof note);
        unsetenv("CR_KVM_COLD");
        if (cold[i] < 0) return 1;
    }
    for (int m = 1; m < 3; m++)
        printf("    restore, CR_KVM_PREFAULT=%s: median %.3f s\n", modes[m], median(warm[m], n));
    /* median() sorts: the fastest of each is then first, the figure a loaded machine
     * disturbs least. */
    double w = median(warm[0], n), c = median(cold, n);
    printf("  %s: restore -> result median %.3f s, cold boot -> result median %.3f s, %d runs "
           "each (cold/restore %.1f; fastest %.3f s and %.3f s, %.1f)\n", name, w, c, n, c / w,
           warm[0][0], cold[0], cold[0] / warm[0][0]);
    if (ratio) *ratio = c / w;
    return 0;
}

static int bench_snapshot(int n)
{
    double ratio = 0;
    char note[512];
    printf("kvm tier: restored snapshot beside cold boot, to result\n");
    const char *dir = getenv("CALCROUTE_KVM_DIR"), *snap = getenv("CR_KVM_SNAPSHOT");
    char path[1024];
    struct stat st;
    snprintf(path, sizeof path, "%s/" KVM_PKGS_FILE, dir && *dir ? dir : KVM_DIR_BUILD);
    int pkgs = stat(path, &st) == 0;
    if (compare("print(1)", "print(1)\n", n, &ratio) != 0 ||
        compare("finance (stdlib)", FINANCE, n, NULL) != 0 ||
        (pkgs && compare("numpy+pandas", PANDAS, n, NULL) != 0))
        return 1;
    if (!pkgs) printf("  numpy+pandas: no package image at %s\n", path);
    setenv("CR_KVM_MEMSTAT", "1", 1);
    double dt = timed_run(FINANCE, note, sizeof note);
    unsetenv("CR_KVM_MEMSTAT");
    const char *mem = strstr(note, "VMM memory ");
    printf("  after the finance answer (restored, %.3f s): %s\n", dt, mem ? mem : note);
    /* The snapshot beside the initramfs (kvm_tier.c's snapshot_path()), in the kvm directory
     * the bench runs with. */
    if (snap && *snap) snprintf(path, sizeof path, "%s", snap);
    else snprintf(path, sizeof path, "%s/snapshot", dir && *dir ? dir : KVM_DIR_BUILD);
    if (stat(path, &st) == 0)
        printf("  snapshot %s: %.1f MiB apparent, %.1f MiB allocated (sparse)\n", path,
               st.st_size / 1048576.0, st.st_blocks * 512 / 1048576.0);
    printf("kvm restore/cold ratio: %.1f\n", ratio);
    return 0;
}

static int bench_run(int n)
{
    printf("kvm tier, print(1) cold start to result, %d runs\n", n);
    for (int i = 0; i < n; i++) {
        sandbox_job job;
        sandbox_outcome oc;
        cr_error e = {0};
        sandbox_job_init(&job);
        job.tier = CR_TIER_KVM;
        job.code = "print(1)\n";
        job.code_len = 9;
        job.limits.wall_s = job.limits.cpu_s = 120;
        job.limits.memory_bytes = 128ull << 20;
        double t0 = now();
        if (sandbox_run(&job, &oc, &e) != CR_OK) {
            fprintf(stderr, "bench_kvm: %s\n", e.message);
            return 1;
        }
        printf("  run %d: %.3f s (the run inside the VM %.3f s; %s), stdout %s", i + 1,
               now() - t0, oc.wall_s, oc.tier_note, oc.stdout_buf.p ? oc.stdout_buf.p : "(none)\n");
        sandbox_outcome_free(&oc);
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 4 && !strcmp(argv[1], "boot"))
        return bench_boot(argv[2], argv[3], argc > 4 ? atoi(argv[4]) : 3);
    if (argc >= 2 && !strcmp(argv[1], "run")) return bench_run(argc > 2 ? atoi(argv[2]) : 3);
    if (argc >= 2 && !strcmp(argv[1], "snapshot"))
        return bench_snapshot(argc > 2 && atoi(argv[2]) > 0 ? atoi(argv[2]) : 3);
    fprintf(stderr, "usage: bench_kvm boot KERNEL INITRD [N] | bench_kvm run [N] | "
            "bench_kvm snapshot [N]\n");
    return 2;
}
