/* sandbox/kvm/kvm_tier.c: the kvm tier behind sandbox.h: is this host able to run it, and a
 * run. The guest kernel and initramfs are files the build makes (sandbox/kvm/fetch-kernel.sh,
 * sandbox/guest/), found in the kvm directory (paths.c). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sandbox/kvm/vmm.h"

/* The host probe opens /dev/kvm and reads /proc: once per process is enough. */
static pthread_once_t probe_once = PTHREAD_ONCE_INIT;
static int probe_ok;
static char probe_why[200];

static void probe(void)
{
    probe_ok = kvm_can_boot_linux(probe_why, sizeof probe_why);
}

/* The host first: where no Linux guest can run, installing one would not help. */
static int available(const char *kvm_dir, kvm_paths *paths, char *why, size_t why_len)
{
    if (pthread_once(&probe_once, probe) != 0) {
        snprintf(why, why_len, "kvm: host probe failed; try --tier ns");
        return 0;
    }
    if (!probe_ok) {
        snprintf(why, why_len, "%s", probe_why);
        return 0;
    }
    return kvm_dir_resolve(kvm_dir, paths, why, why_len);
}

int sandbox_kvm_available(const char *kvm_dir, char *why, size_t why_len)
{
    kvm_paths paths;
    return available(kvm_dir, &paths, why, why_len);
}

/* How a guest is sized from its job's limits, in one place: size_guest() for a job's VM,
 * snapshot_build() and choose_snapshot() for the snapshot's. */
static const struct {
    uint64_t overhead;        /* guest RAM beside the job's memory: the kernel, the unpacked
                                 initramfs and python3 itself */
    uint64_t mem_unit;        /* guest RAM is a whole number of these */
    uint32_t max_report;      /* bytes of runner report the shared region holds */
    uint64_t data_max;        /* bytes of /data the guest is given in its initramfs */
    uint32_t page;            /* the shared region's header, and its unit */
    uint32_t span_align;      /* each span of it (job, out, err, report, artifacts) starts so */
    unsigned spans;
    double boot_s;            /* the boot's own share of the wall clock; CR_KVM_BOOT_S */
    uint64_t max_exits;       /* exits to the VMM before it gives the guest up */
    /* The snapshot's guest (see below): a job that fits it is restored, others boot. */
    uint64_t snap_mem;
    uint32_t snap_shared;
    double snap_cpu_s;        /* its warm worker's RLIMIT_CPU backstop */
    uint32_t snap_stream;     /* its key's stdout, stderr, report and artifact span */
} sizing = {
    .overhead = 192ull << 20, .mem_unit = 1ull << 20, .max_report = 256u << 10,
    .data_max = 256ull << 20, .page = 4096, .span_align = 64, .spans = 5, .boot_s = 10.0,
    .max_exits = 10000000, .snap_mem = 1ull << 30, .snap_shared = (uint32_t)VMM_MAX_SHARED,
    .snap_cpu_s = 3600.0, .snap_stream = 4096,
};
/* No ACPI, and PCI configuration by the first mechanism: the VMM answers its address latch
 * alone, so the kernel enumerates no device, yet surveys its resources, which is where the
 * e820's persistent memory (the package image) is listed (with pci=off it never is).
 * Modules: only the package image's, which init loads from its initramfs before it turns
 * loading off. reboot=k and panic=-1 turn a power-off or a panic into an i8042 reset, which
 * ends the run at once. */
#define CMDLINE "console=ttyS0 quiet reboot=k panic=-1 pci=conf1 acpi=off " \
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
cr_code kvm_take_result(const vmm_page_result *r, sandbox_outcome *out, cr_error *err)
{
    if (r->limit > SANDBOX_LIMIT_ARTIFACTS)
        return cr_error_set(err, CR_ESANDBOX, 0, 0, "kvm: result page: limit %u", r->limit);
    if (r->flags & CRVM_SETUP_FAILED) {
        /* The guest's ns tier could not set up: its reason, on one line. */
        int n = (int)strcspn(r->stderr_text ? r->stderr_text : "", "\n");
        return cr_error_set(err, CR_ESANDBOX, 0, 0, "kvm: guest: %.*s", n > 200 ? 200 : n,
                            r->stderr_text ? r->stderr_text : "");
    }
    out->exited = r->exited;
    out->exit_code = r->exit_code;
    out->term_signal = r->term_signal;
    out->limit = (sandbox_limit)r->limit;
    snprintf(out->limit_detail, sizeof out->limit_detail, "%s", r->limit_detail);
    /* The guest's clocks: the run as its ns tier timed it, the VM's boot not included (the
     * caller's tier_note has that), so that figures and limits mean the same on both tiers. */
    out->wall_s = (double)r->run_ns / 1e9;
    out->cpu_s = (double)r->cpu_ns / 1e9;
    out->peak_memory_bytes = r->peak_bytes;
    set_buf(&out->stdout_buf, r->stdout_text, r->stdout_len, !!(r->flags & CRVM_OUT_TRUNCATED));
    set_buf(&out->stderr_buf, r->stderr_text, r->stderr_len, !!(r->flags & CRVM_ERR_TRUNCATED));
    return sandbox_report_parse(r->report, r->report_len, out, err);
}

/* ---- the VMM process ----------------------------------------------------------------------
 * The VM runs in a child process that jails itself once the VM is set up (vmm_jail()), so
 * neither a guest that escapes nor a VMM that crashes reaches the caller. It sends back this
 * header, then the stdout, stderr, report and console bytes it counts. */
#define CONSOLE_TAIL 240

struct wire {
    int32_t rc, stop;
    cr_error err;
    vmm_page_result res;          /* its scalars; the buffers follow, res's pointers mean nothing */
    uint32_t console_len;
    char note[256];               /* the jail's; the parent puts the cgroup's first */
    int32_t restore_failed;       /* the snapshot could not be restored (no guest ran) */
    int64_t own_kb, mapped_kb;    /* the VMM's memory after the run (memory_kb()), or -1 */
};

static int write_all(int fd, const void *p, size_t n)
{
    for (size_t done = 0; done < n;) {
        ssize_t w = write(fd, (const char *)p + done, n - done);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        done += (size_t)w;
    }
    return 0;
}

typedef struct {
    vmm_config cfg;
    vmm_job_limits lim;
    const char *job, *kernel, *initrd, *cmdline;
    const char *pmem;             /* the package image, or NULL */
    size_t job_len;
    const char *data;             /* the data directory's cpio archive, or NULL */
    size_t data_len;
    int console;                  /* copy the guest console to stderr */
    int memstat;                  /* measure the VMM's memory after the run */
    const char *snapshot;         /* restore from this snapshot instead of booting, or NULL */
    vmm_snap_id id;               /* what the snapshot must have been made from */
} vmm_plan;

/* From an open smaps_rollup, in KiB: the VMM's own memory (Anonymous: the guest's copies on
 * write, the region, the VMM's heap), returned, and in *mapped the rest of its resident
 * memory, pages of the snapshot's page cache that every restored VM shares (on a tmpfs they
 * count as private and dirty while one VM alone maps them); -1 when unreadable. Only read():
 * the jail allows nothing else. */
static int64_t memory_kb(int fd, int64_t *mapped)
{
    char buf[4096];
    ssize_t n = read(fd, buf, sizeof buf - 1);
    *mapped = -1;
    if (n <= 0) return -1;
    buf[n] = '\0';
    const char *rss = strstr(buf, "\nRss:"), *anon = strstr(buf, "\nAnonymous:");
    if (!rss || !anon) return -1;
    int64_t own = strtoll(anon + 11, NULL, 10);
    *mapped = strtoll(rss + 5, NULL, 10) - own;
    return own;
}

/* The child's whole life: join its cgroup, set up, jail, run, report. Never returns. */
static _Noreturn void vmm_child(const vmm_plan *p, const ns_cgroup *cg, int fd)
{
    struct wire w;
    vmm *vm = NULL;
    vmm_page_result r;
    vmm_stop stop = VMM_STOP_NONE;
    cr_code rc;
    const char *console = "";
    size_t clen = 0;

    memset(&w, 0, sizeof w);
    memset(&r, 0, sizeof r);
    if ((rc = vmm_cgroup_join(cg, &w.err)) != CR_OK) {
        /* nothing ran: the report says why */
    } else if (p->snapshot) {
        /* The data travels in the region; the guest gets the host's clock and entropy. */
        if ((rc = vmm_snapshot_restore(&p->cfg, p->snapshot, &p->id, &vm, &w.err)) != CR_OK ||
            (rc = vmm_page_write_ex(vm, p->job, p->job_len, p->data, p->data_len, 0, 1,
                                    &p->lim, &w.err)) != CR_OK)
            w.restore_failed = 1;
    } else if ((rc = vmm_open(&p->cfg, &vm, &w.err)) == CR_OK &&
               (rc = vmm_page_write(vm, p->job, p->job_len, &p->lim, &w.err)) == CR_OK) {
        rc = vmm_boot_linux(vm, p->kernel, p->initrd, p->data, p->data_len, p->cmdline, &w.err);
    }
    /* Opened before the jail, read once after the run: a /proc file is generated when read,
     * and so are KVM's counters. */
    int smaps = p->memstat ? open("/proc/self/smaps_rollup", O_RDONLY | O_CLOEXEC) : -1;
    int kst[2] = { -1, -1 };
    if (vm && p->console) vmm_stats_open(vm, kst);
    if (rc == CR_OK && (rc = vmm_jail(w.note, sizeof w.note, &w.err)) == CR_OK)
        rc = vmm_run(vm, &stop, &w.err);
    w.own_kb = smaps >= 0 ? memory_kb(smaps, &w.mapped_kb) : -1;
    if (vm) {
        console = vmm_serial(vm, &clen, NULL);
        if (p->console) {
            static char stats[1024], kvm_vm[2048], kvm_vcpu[2048];
            vmm_exit_stats(vm, stats, sizeof stats);
            vmm_stats_format(kst[0], kvm_vm, sizeof kvm_vm);
            vmm_stats_format(kst[1], kvm_vcpu, sizeof kvm_vcpu);
            fprintf(stderr, "%s\nkvm: %s: %s\nkvm: KVM's counters: VM%s; vCPU%s\n", console,
                    vmm_stop_name(stop), stats, kvm_vm, kvm_vcpu);
        }
        /* A panic's first line says why; the trace after it does not. */
        const char *panic = strstr(console, "Kernel panic");
        if (panic) {
            clen -= (size_t)(panic - console);
            console = panic;
            if (clen > CONSOLE_TAIL) clen = CONSOLE_TAIL;
        } else if (clen > CONSOLE_TAIL) {
            console += clen - CONSOLE_TAIL;
            clen = CONSOLE_TAIL;
        }
    }
    if (rc == CR_OK && stop == VMM_STOP_DOORBELL && (rc = vmm_page_read(vm, &r, &w.err)) == CR_OK)
        w.res = r;
    w.rc = rc;
    w.stop = stop;
    w.console_len = (uint32_t)clen;
    int bad = write_all(fd, &w, sizeof w) < 0 || write_all(fd, r.stdout_text, r.stdout_len) < 0 ||
              write_all(fd, r.stderr_text, r.stderr_len) < 0 ||
              write_all(fd, r.report, r.report_len) < 0 ||
              write_all(fd, r.artifacts, r.artifacts_len) < 0 || write_all(fd, console, clen) < 0;
    _exit(bad ? 3 : 0);
}

/* Reads exactly n bytes before the deadline; 0, or -1 with errno (ETIMEDOUT, EPIPE at EOF). */
static int read_full(int fd, void *p, size_t n, const struct timespec *deadline)
{
    for (size_t done = 0; done < n;) {
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        double left = (double)(deadline->tv_sec - now.tv_sec) +
                      (deadline->tv_nsec - now.tv_nsec) / 1e9;
        if (left <= 0) return errno = ETIMEDOUT, -1;
        struct pollfd pfd = { .fd = fd, .events = POLLIN };
        int r = poll(&pfd, 1, (int)(left * 1000) + 1);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return -1;
        if (r == 0) continue;
        ssize_t got = read(fd, (char *)p + done, n - done);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) return -1;
        if (got == 0) return errno = EPIPE, -1;
        done += (size_t)got;
    }
    return 0;
}

/* Runs the plan in a jailed child; fills *w and the buffers of *r (the caller frees them
 * with vmm_page_result_free()) and the console tail. The child is gone on return. */
static cr_code run_child(const vmm_plan *p, struct wire *w, vmm_page_result *r, char *console,
                         cr_error *err)
{
    int pfd[2], status = 0, hung = 0;
    cr_code rc = CR_OK;
    struct timespec deadline;
    ns_cgroup cg;
    char cg_note[sizeof cg.note + 80];

    memset(r, 0, sizeof *r);
    console[0] = '\0';
    if (pipe2(pfd, O_CLOEXEC) < 0) return cr_error_sys(err, CR_ESANDBOX, "kvm: pipe", errno);
    vmm_cgroup_create(&cg, &p->cfg);
    pid_t pid = fork();
    if (pid < 0) {
        rc = cr_error_sys(err, CR_ESANDBOX, "kvm: fork", errno);
        close(pfd[0]);
        close(pfd[1]);
        ns_cgroup_destroy(&cg);
        return rc;
    }
    if (pid == 0) {
        /* Nothing of the caller's stays open in the VMM (its ledger, its sockets): only
         * stderr, and the pipe as fd 3. */
        int null = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(pfd[1], 3) < 0 ||
            close_range(4, ~0u, 0) < 0)
            _exit(VMM_JAIL_TRAPPED + 1);
        prctl(PR_SET_PDEATHSIG, SIGKILL);      /* best effort: the VM dies with its caller */
        vmm_child(p, &cg, 3);
    }
    close(pfd[1]);
    /* The child's own clock ends the VM; this one only catches a VMM that hangs. */
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    deadline.tv_sec += (time_t)p->cfg.wall_s + 10;
    if (read_full(pfd[0], w, sizeof *w, &deadline) < 0) {
        hung = errno == ETIMEDOUT;
        rc = cr_error_sys(err, CR_ESANDBOX, "kvm: the VMM process sent no result", errno);
        goto out;
    }
    /* The child may be what a guest escaped into: its strings are cut to their arrays, its
     * code kept to what a VMM can fail with, its lengths checked like the guest's. */
    w->err.message[sizeof w->err.message - 1] = '\0';
    w->note[sizeof w->note - 1] = '\0';
    *r = w->res;
    r->stdout_text = r->stderr_text = r->report = r->artifacts = NULL;
    r->limit_detail[sizeof r->limit_detail - 1] = '\0';
    r->tier_note[sizeof r->tier_note - 1] = '\0';
    if (w->rc != CR_OK && w->rc != CR_ENOMEM && w->rc != CR_EUSAGE && w->rc != CR_ELIMIT)
        w->rc = CR_ESANDBOX;
    if (r->stdout_len > p->lim.max_stdout || r->stderr_len > p->lim.max_stderr ||
        r->report_len > p->lim.max_report || r->artifacts_len > p->lim.max_artifact_span ||
        w->console_len > CONSOLE_TAIL) {
        memset(r, 0, sizeof *r);
        rc = cr_error_set(err, CR_ESANDBOX, 0, 0, "kvm: the VMM process sent oversized lengths");
        goto out;
    }
    struct { char **p; size_t *len; size_t n; } parts[] = {
        { &r->stdout_text, &r->stdout_len, r->stdout_len },
        { &r->stderr_text, &r->stderr_len, r->stderr_len },
        { &r->report, &r->report_len, r->report_len },
        { &r->artifacts, &r->artifacts_len, r->artifacts_len },
    };
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        if (!(*parts[i].p = malloc((size_t)parts[i].n + 1))) {
            rc = cr_error_set(err, CR_ENOMEM, 0, 0, "kvm: result of %zu bytes", parts[i].n);
            goto out;
        }
        if (read_full(pfd[0], *parts[i].p, parts[i].n, &deadline) < 0) {
            hung = errno == ETIMEDOUT;
            rc = cr_error_sys(err, CR_ESANDBOX, "kvm: reading the VMM's result", errno);
            goto out;
        }
        (*parts[i].p)[parts[i].n] = '\0';
        *parts[i].len = parts[i].n;
    }
    if (read_full(pfd[0], console, w->console_len, &deadline) < 0) {
        hung = errno == ETIMEDOUT;
        rc = cr_error_sys(err, CR_ESANDBOX, "kvm: reading the VMM's console", errno);
        goto out;
    }
    console[w->console_len] = '\0';
out:
    close(pfd[0]);
    if (rc != CR_OK) kill(pid, SIGKILL);
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    /* A child that died says why in its exit status, not in its (absent) message. */
    if (!hung && WIFSIGNALED(status) && ns_cgroup_oom_kills(&cg) > 0)
        rc = cr_error_set(err, CR_ESANDBOX, 0, 0, "kvm: the VMM process was killed at its "
                          "cgroup's memory limit (%llu MiB)",
                          (unsigned long long)(vmm_cgroup_memory(&p->cfg) >> 20));
    else if (!hung && WIFSIGNALED(status))
        rc = cr_error_set(err, CR_ESANDBOX, 0, 0, "kvm: the VMM process was killed by signal "
                          "%d", WTERMSIG(status));
    if (!hung && WIFEXITED(status) && WEXITSTATUS(status) == VMM_JAIL_TRAPPED + 1)
        rc = cr_error_set(err, CR_ESANDBOX, 0, 0, "kvm: the VMM process could not close the "
                          "caller's descriptors");
    if (!hung && WIFEXITED(status) && WEXITSTATUS(status) == VMM_JAIL_TRAPPED)
        rc = cr_error_set(err, CR_ESANDBOX, 0, 0, "kvm: the VMM process made a system call "
                          "outside its seccomp filter (named on stderr)");
    vmm_cgroup_note(&cg, &p->cfg, cg_note, sizeof cg_note);
    ns_cgroup_destroy(&cg);
    if (rc == CR_OK && cg_note[0]) {
        char jail[sizeof w->note];
        memcpy(jail, w->note, sizeof jail);
        if (snprintf(w->note, sizeof w->note, "%s%s%s", cg_note, jail[0] ? "; " : "", jail) < 0)
            w->note[0] = '\0';
    }
    if (rc != CR_OK) vmm_page_result_free(r);
    return rc;
}

/* ---- the snapshot --------------------------------------------------------------------------
 * One guest booted to its ready point and saved (snapshot.c); each run restores a copy. Made
 * by the first run that finds none (or one of another kernel, initramfs or VMM build), in a
 * child process like the runs, and kept beside the initramfs. The guest's warm python is made
 * with the default limits: runs with the default memory, process, /tmp and /out limits (and
 * CPU time up to sizing.snap_cpu_s) find it ready; others start python in the restored VM (the tier
 * note says why). */

/* Where the snapshot of this initramfs lives: CR_KVM_SNAPSHOT, else "snapshot" in the
 * initramfs's directory. The one place that knows. */
static void snapshot_path(const char *initrd, char *buf, size_t n)
{
    const char *env = getenv("CR_KVM_SNAPSHOT");
    if (env && *env) {
        snprintf(buf, n, "%s", env);
        return;
    }
    const char *slash = strrchr(initrd, '/');
    int dir = slash ? (int)(slash - initrd) : 1;
    snprintf(buf, n, "%.*s/snapshot", dir, slash ? initrd : ".");
}

/* 1 when the file at path is a snapshot of id (its header read, nothing more); else 0 with
 * the reason. */
static int snapshot_usable(const char *path, const vmm_snap_id *id, char *why, size_t n)
{
    uint8_t head[VMM_SNAP_HEADER];
    vmm_snap_header h;
    cr_error e = {0};
    struct stat st;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(why, n, "no snapshot at %.200s", path);
        return 0;
    }
    ssize_t got = fstat(fd, &st) == 0 ? pread(fd, head, sizeof head, 0) : -1;
    close(fd);
    if (got < (ssize_t)sizeof h) {
        snprintf(why, n, "snapshot %.200s is unreadable", path);
        return 0;
    }
    if (vmm_snap_header_parse(head, (size_t)got, (uint64_t)st.st_size, id, &h, &e) != CR_OK) {
        snprintf(why, n, "%s", e.message);
        return 0;
    }
    return 1;
}

/* The snapshot's first job, in a VM restored from it (the caller's child): print(1) with
 * the warm worker's limits, whose pages vmm_snapshot_learn() keeps with it. */
static cr_code snapshot_learn(const char *path, const char *pmem, const vmm_snap_id *id,
                              const vmm_job_limits *jl, double wall_s)
{
    static const char code[] = "print(1)\n";
    vmm_config c;
    vmm *vm = NULL;
    vmm_stop stop = VMM_STOP_NONE;
    sandbox_job job;
    cr_error e = {0};
    cr_buf enc;
    cr_code rc;
    vmm_config_default(&c);
    c.wall_s = wall_s;
    c.max_exits = sizing.max_exits;
    c.pmem_path = pmem;
    sandbox_job_init(&job);
    job.code = code;
    job.code_len = sizeof code - 1;
    cr_buf_init(&enc, 0);
    if ((rc = sandbox_job_encode(&job, &enc, &e)) == CR_OK &&
        (rc = vmm_snapshot_restore(&c, path, id, &vm, &e)) == CR_OK &&
        (rc = vmm_page_write_ex(vm, enc.p, enc.len, NULL, 0, 0, 1, jl, &e)) == CR_OK &&
        (rc = vmm_run(vm, &stop, &e)) == CR_OK)
        rc = stop == VMM_STOP_DOORBELL ? vmm_snapshot_learn(vm, path, &e) : CR_ESANDBOX;
    vmm_close(vm);
    cr_buf_free(&enc);
    return rc;
}

/* Boots the guest with CRVM_JOB_SNAPSHOT until it rings ready and saves it at path, in a
 * child process (the VM's signals, timers and memory stay out of the caller). */
static cr_code snapshot_build(const vmm_plan *plan, const char *path, double boot_s,
                              cr_error *err)
{
    int pfd[2], status = 0;
    cr_error ce = {0};
    /* The warm worker's key: the default limits, CPU time an hour (a job's own CPU limit is
     * the ns tier's clock on the cgroup; RLIMIT_CPU is only its backstop). */
    sandbox_limits d;
    memset(&d, 0, sizeof d);
    d.cpu_s = sizing.snap_cpu_s;
    sandbox_limits_resolve(&d);
    vmm_job_limits key = {
        .wall_ms = (uint32_t)(d.wall_s * 1000), .cpu_ms = (uint32_t)(d.cpu_s * 1000),
        .max_procs = d.max_procs, .memory_bytes = d.memory_bytes,
        .max_stdout = sizing.snap_stream, .max_stderr = sizing.snap_stream,
        .max_report = sizing.snap_stream, .tmp_bytes = d.tmp_bytes,
        .artifact_bytes = d.artifact_bytes, .max_artifacts = d.max_artifacts,
        .max_artifact_span = sizing.snap_stream,
    };
    const vmm_job_limits *jl = &key;
    if (pipe2(pfd, O_CLOEXEC) < 0) return cr_error_sys(err, CR_ESANDBOX, "kvm: pipe", errno);
    pid_t pid = fork();
    if (pid < 0) {
        close(pfd[0]);
        close(pfd[1]);
        return cr_error_sys(err, CR_ESANDBOX, "kvm: fork", errno);
    }
    if (pid == 0) {
        vmm_config c;
        vmm *vm = NULL;
        vmm_stop stop = VMM_STOP_NONE;
        cr_code rc;
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        vmm_config_default(&c);
        c.mem_bytes = sizing.snap_mem;
        c.shared_bytes = sizing.snap_shared;
        c.wall_s = boot_s;
        c.max_exits = sizing.max_exits;
        c.pmem_path = plan->pmem;
        if ((rc = vmm_open(&c, &vm, &ce)) == CR_OK &&
            (rc = vmm_page_write_ex(vm, NULL, 0, NULL, 0, CRVM_JOB_SNAPSHOT, 0, jl, &ce)) == CR_OK &&
            (rc = vmm_boot_linux(vm, plan->kernel, plan->initrd, NULL, 0, plan->cmdline,
                                 &ce)) == CR_OK &&
            (rc = vmm_run(vm, &stop, &ce)) == CR_OK) {
            if (stop == VMM_STOP_READY) {
                /* Saved, and its working set learnt, under a name of its own: renamed into
                 * place whole. */
                char tmp[PATH_MAX + 32];
                snprintf(tmp, sizeof tmp, "%s.new.%ld", path, (long)getpid());
                if ((rc = vmm_snapshot_save(vm, &plan->id, tmp, &ce)) == CR_OK) {
                    vmm_close(vm);
                    vm = NULL;
                    /* Without its working set the snapshot still serves, slower. */
                    (void)snapshot_learn(tmp, plan->pmem, &plan->id, jl, boot_s);
                    if (rename(tmp, path) < 0)
                        rc = cr_error_set(&ce, CR_ESANDBOX, 0, 0, "kvm: snapshot: rename to "
                                          "%s: %s", path, strerror(errno));
                }
                if (rc != CR_OK) unlink(tmp);
            } else {
                /* The guest's own word on why, when it rang with a failure. */
                vmm_page_result r;
                int told = stop == VMM_STOP_DOORBELL && vmm_page_read(vm, &r, &ce) == CR_OK;
                rc = cr_error_set(&ce, CR_ESANDBOX, 0, 0, "kvm: snapshot: the guest stopped "
                                  "(%s) before its ready point%s%.120s", vmm_stop_name(stop),
                                  told ? ": " : "", told ? r.stderr_text : "");
                if (told) vmm_page_result_free(&r);
            }
        }
        ce.code = rc;
        (void)!write(pfd[1], &ce, sizeof ce);
        _exit(rc == CR_OK ? 0 : 1);
    }
    close(pfd[1]);
    struct timespec deadline;
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    deadline.tv_sec += (time_t)boot_s + 30;
    int got = read_full(pfd[0], &ce, sizeof ce, &deadline);
    close(pfd[0]);
    if (got < 0) kill(pid, SIGKILL);
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    if (got < 0)
        return cr_error_set(err, CR_ESANDBOX, 0, 0, "kvm: snapshot: the VMM process sent no "
                            "result (status 0x%x)", status);
    ce.message[sizeof ce.message - 1] = '\0';
    if (ce.code != CR_OK) return cr_error_set(err, CR_ESANDBOX, 0, 0, "%s", ce.message);
    return CR_OK;
}

/* The console's words on one line, short enough to fit an error message: a panic's first
 * line, else the last ones. */
static const char *one_line(char *s)
{
    size_t n = strlen(s);
    while (n && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' ')) s[--n] = '\0';
    for (char *p = s; *p; p++)
        if (*p == '\n' || *p == '\r' || (unsigned char)*p < 0x20) *p = ' ';
    if (!strncmp(s, "Kernel panic", 12)) {
        if (n > 150) s[150] = '\0';
        return s;
    }
    return n > 150 ? s + n - 150 : s;
}

/* Points plan at a usable snapshot (building it when there is none, or only one of other
 * files) and returns 1; or returns 0 with why the run boots instead in note. */
static int choose_snapshot(vmm_plan *plan, const sandbox_limits *lim, size_t job_len,
                           size_t data_len, double boot_s, char *path, size_t path_len,
                           char *note, size_t note_len)
{
    const char *cold = getenv("CR_KVM_COLD");
    char why[256];
    cr_error e = {0};
    struct timespec t0;

    if (cold && !strcmp(cold, "1")) return 0;                /* asked for: no note */
    /* A guest of other kernel arguments is one boot's business, not the shared snapshot's. */
    const char *extra = getenv("CR_KVM_CMDLINE");
    if (extra && *extra) {
        snprintf(note, note_len, "cold boot: CR_KVM_CMDLINE is set");
        return 0;
    }
    if (lim->memory_bytes + sizing.overhead + data_len > sizing.snap_mem) {
        snprintf(note, note_len, "cold boot: the job's memory and data pass the snapshot's "
                 "%llu MiB", (unsigned long long)(sizing.snap_mem >> 20));
        return 0;
    }
    if ((uint64_t)plan->cfg.shared_bytes + data_len + sizing.span_align > sizing.snap_shared ||
        job_len + data_len + sizing.page > sizing.snap_shared) {
        snprintf(note, note_len, "cold boot: the job's data and outputs pass the snapshot's "
                 "region");
        return 0;
    }
    if (vmm_snap_identity(plan->kernel, plan->initrd, plan->pmem, plan->cmdline, &plan->id,
                          &e) != CR_OK) {
        snprintf(note, note_len, "cold boot: %.200s", e.message);
        return 0;
    }
    snapshot_path(plan->initrd, path, path_len);
    if (!snapshot_usable(path, &plan->id, why, sizeof why)) {
        clock_gettime(CLOCK_MONOTONIC, &t0);
        if (snapshot_build(plan, path, boot_s, &e) != CR_OK) {
            snprintf(note, note_len, "cold boot: %.100s; %.120s", why, e.message);
            return 0;
        }
        snprintf(note, note_len, "snapshot made in %.3f s (%.100s)", elapsed(&t0), why);
    }
    plan->snapshot = path;
    return 1;
}

/* The VM for the job: its RAM (the job's memory, the guest's own and the data archive, which
 * sits in guest RAM beside what the kernel unpacks from it; /tmp and /out count in the run's
 * memory, as on the ns tier), the shared region (the job and everything that comes back),
 * the clock (the run's and the boot's) and the job's limits as the guest enforces them.
 * CR_ELIMIT when the region would pass what a VM has. */
static cr_code size_guest(vmm_plan *plan, const sandbox_limits *lim, size_t job_len,
                          size_t data_len, double boot_s, cr_error *err)
{
    vmm_config *c = &plan->cfg;
    vmm_config_default(c);
    uint64_t mem = lim->memory_bytes + sizing.overhead + 2 * (uint64_t)data_len;
    c->mem_bytes = mem > VMM_MAX_MEM ? VMM_MAX_MEM
                                     : (mem + sizing.mem_unit - 1) & ~(sizing.mem_unit - 1);
    /* Room for /out in full: its bytes, and a record header and a name for every entry. */
    uint64_t art_span = lim->artifact_bytes +
        (uint64_t)SANDBOX_ARTIFACT_MAX_ENTRIES * (sizeof(struct crvm_entry) + SANDBOX_ARTIFACT_NAME_MAX);
    uint64_t shared = sizing.page + job_len + lim->max_stdout + lim->max_stderr +
                      sizing.max_report + art_span + sizing.spans * sizing.span_align;
    shared = (shared + sizing.page - 1) & ~((uint64_t)sizing.page - 1);
    if (shared > VMM_MAX_SHARED)
        return cr_error_set(err, CR_ELIMIT, 0, 0, "kvm: job and output limits need %llu bytes "
                            "of shared memory (at most %llu)", (unsigned long long)shared,
                            VMM_MAX_SHARED);
    c->shared_bytes = (uint32_t)shared;
    c->wall_s = lim->wall_s + boot_s;
    c->max_exits = sizing.max_exits;
    plan->lim = (vmm_job_limits){
        .wall_ms = (uint32_t)(lim->wall_s * 1000), .cpu_ms = (uint32_t)(lim->cpu_s * 1000),
        .max_procs = lim->max_procs, .memory_bytes = lim->memory_bytes,
        .max_stdout = (uint32_t)lim->max_stdout, .max_stderr = (uint32_t)lim->max_stderr,
        .max_report = sizing.max_report, .tmp_bytes = lim->tmp_bytes,
        .artifact_bytes = lim->artifact_bytes, .max_artifacts = lim->max_artifacts,
        .max_artifact_span = (uint32_t)art_span,
    };
    return CR_OK;
}

/* The boot's share of the wall clock: CR_KVM_BOOT_S, else the table's. */
static double boot_allowance(void)
{
    const char *boot = getenv("CR_KVM_BOOT_S");
    return boot && atof(boot) > 0 ? atof(boot) : sizing.boot_s;
}

/* What boots and how: the kernel, the initramfs, the command line (cmdline, of cmdline_len
 * bytes, holds it). CR_KVM_CMDLINE adds kernel arguments ("loglevel=8"); CR_KVM_CONSOLE=1
 * copies the guest console to stderr after the run: the two ways to see a guest that went
 * wrong. CR_KVM_MEMSTAT=1 measures the VMM's memory after the run (memory_kb()). */
static void plan_boot(vmm_plan *plan, const kvm_paths *paths, char *cmdline, size_t cmdline_len)
{
    const char *extra = getenv("CR_KVM_CMDLINE"), *show = getenv("CR_KVM_CONSOLE");
    const char *memstat = getenv("CR_KVM_MEMSTAT");
    snprintf(cmdline, cmdline_len, "%s %s", CMDLINE, extra ? extra : "");
    plan->kernel = paths->kernel;
    plan->initrd = paths->initrd;
    plan->pmem = paths->has_pkgs ? paths->pkgs : NULL;
    plan->cfg.pmem_path = plan->pmem;
    plan->cmdline = cmdline;
    plan->console = show && !strcmp(show, "1");
    plan->memstat = memstat && !strcmp(memstat, "1");
}

/* One run's state through the steps of sandbox_kvm_run(). */
typedef struct {
    sandbox_limits lim;           /* the job's, resolved */
    double boot_s;                /* the boot's share of the wall clock */
    struct timespec t0;
    vmm_plan plan;
    struct wire w;                /* what the VMM process sent */
    vmm_page_result r;            /* the guest's result */
    char cmdline[1024], console[CONSOLE_TAIL + 1];
    char snap_path[1024];         /* plan.snapshot, when restored */
    char snap_note[256];          /* why it was not, or how the snapshot was made */
} kvm_run;

/* Runs the plan: a restored snapshot where the job fits it, else (or when it cannot be had)
 * the boot, with the reason in snap_note. */
static cr_code run_vm(kvm_run *k, cr_error *err)
{
    vmm_plan *plan = &k->plan;
    k->snap_note[0] = '\0';
    if (choose_snapshot(plan, &k->lim, plan->job_len, plan->data_len, k->boot_s, k->snap_path,
                        sizeof k->snap_path, k->snap_note, sizeof k->snap_note)) {
        vmm_config cold = plan->cfg;
        cr_code rc;
        plan->cfg.mem_bytes = sizing.snap_mem;
        plan->cfg.shared_bytes = sizing.snap_shared;
        rc = run_child(plan, &k->w, &k->r, k->console, err);
        if (rc != CR_OK || !k->w.restore_failed) return rc;
        k->w.err.message[sizeof k->w.err.message - 1] = '\0';
        snprintf(k->snap_note, sizeof k->snap_note, "cold boot: %.200s", k->w.err.message);
        plan->snapshot = NULL;
        plan->cfg = cold;
        vmm_page_result_free(&k->r);
        memset(&k->w, 0, sizeof k->w);
    }
    return run_child(plan, &k->w, &k->r, k->console, err);
}

/* The outcome from how the VM stopped: the guest's result (its figures, and the tier note:
 * the snapshot's word, the jail's, the guest's, then the VM's own start and stop), the wall
 * clock's end, or an error with the console's last words. */
static cr_code collect(kvm_run *k, const sandbox_job *job, sandbox_outcome *out, cr_error *err)
{
    const struct wire *w = &k->w;
    const vmm_page_result *r = &k->r;
    char *note = out->tier_note;
    const size_t cap = sizeof out->tier_note;
    cr_code rc;
    out->tier = CR_TIER_KVM;
    switch ((vmm_stop)w->stop) {
    case VMM_STOP_DOORBELL: {
        /* The guest's clock from its init's start to its ring: the VM's start and stop are
         * the rest. A note cut short is still a note. */
        double guest_s = r->guest_ns[3] >= r->guest_ns[0]
                             ? (double)(r->guest_ns[3] - r->guest_ns[0]) / 1e9 : 0;
        sandbox_note_add(note, cap, "%s", k->snap_note);
        sandbox_note_add(note, cap, "%s", w->note);
        sandbox_note_add(note, cap, "%s", r->tier_note);
        sandbox_note_add(note, cap, "VM %s and stop %.3f s",
                         k->plan.snapshot ? "restore" : "start", elapsed(&k->t0) - guest_s);
        if (k->plan.memstat && w->own_kb >= 0)
            sandbox_note_add(note, cap, "VMM memory %lld KiB its own, %lld KiB mapped from "
                             "the snapshot", (long long)w->own_kb, (long long)w->mapped_kb);
        if ((rc = kvm_take_result(r, out, err)) == CR_OK)
            rc = kvm_take_artifacts(r, job->out_dir, &k->lim, out, err);
        return rc;
    }
    case VMM_STOP_TIMEOUT:
        snprintf(note, cap, "%s", w->note);
        out->exited = 0;
        out->term_signal = SIGKILL;
        out->limit = SANDBOX_LIMIT_WALL;
        snprintf(out->limit_detail, sizeof out->limit_detail, "wall clock %.3f s (%.3f s of it "
                 "for the boot)", k->plan.cfg.wall_s, k->boot_s);
        return CR_OK;
    default:
        return cr_error_set(err, CR_ESANDBOX, 0, 0, "kvm: the guest ended (%s) without a result; "
                            "console: %s", vmm_stop_name((vmm_stop)w->stop), one_line(k->console));
    }
}

/* Steps: check and encode the job (and its /data), size the guest, plan the boot, run the VM,
 * collect the outcome. */
cr_code sandbox_kvm_run(const sandbox_job *job, sandbox_outcome *out, cr_error *err)
{
    char why[256];
    kvm_paths paths;
    cr_buf enc, data;
    kvm_run *k, run;
    cr_code rc;

    k = &run;
    memset(k, 0, sizeof *k);
    clock_gettime(CLOCK_MONOTONIC, &k->t0);
    memset(out, 0, sizeof *out);
    cr_buf_init(&enc, 0);
    cr_buf_init(&data, 0);
    if (!job) return cr_error_set(err, CR_EUSAGE, 0, 0, "kvm: no job");
    /* The guest runs the python of its initramfs: nothing of the host's tree is in it. */
    if (sandbox_job_host_python(job))
        return cr_error_set(err, CR_EUSAGE, 0, 0, "kvm: the guest has its own python; another "
                            "interpreter or an allowed directory needs the ns tier");
    /* Fail fast, with the reason, where a Linux guest cannot run (a PVM host, say). */
    if (!available(job->kvm_dir, &paths, why, sizeof why))
        return cr_error_set(err, CR_ESANDBOX, 0, 0, "kvm: %s", why);
    k->lim = job->limits;
    sandbox_limits_resolve(&k->lim);
    k->boot_s = boot_allowance();
    if ((rc = sandbox_job_encode(job, &enc, err)) != CR_OK) goto out;
    if (job->data_dir &&
        (rc = kvm_data_archive(job->data_dir, sizing.data_max, &data, err)) != CR_OK)
        goto out;
    if ((rc = size_guest(&k->plan, &k->lim, enc.len, data.len, k->boot_s, err)) != CR_OK)
        goto out;
    k->plan.job = enc.p;
    k->plan.job_len = enc.len;
    k->plan.data = data.len ? data.p : NULL;
    k->plan.data_len = data.len;
    plan_boot(&k->plan, &paths, k->cmdline, sizeof k->cmdline);
    if ((rc = run_vm(k, err)) != CR_OK) goto out;
    if (k->w.rc != CR_OK) {
        rc = cr_error_set(err, k->w.rc, 0, 0, "%s", k->w.err.message);
        goto out;
    }
    rc = collect(k, job, out, err);
out:
    if (k->w.stop != VMM_STOP_DOORBELL) out->wall_s = out->cpu_s = elapsed(&k->t0);
    vmm_page_result_free(&k->r);
    cr_buf_free(&enc);
    cr_buf_free(&data);
    if (rc != CR_OK) sandbox_outcome_free(out);
    return rc;
}

const sandbox_tier sandbox_tier_kvm = {
    .available = sandbox_kvm_available,
    .run = sandbox_kvm_run,
    .chosen = "/dev/kvm runs a guest",
};
