/* tests/test_kvm_tier.c: the kvm tier through sandbox.h: a Linux guest with our init and the
 * host's python3 runs the job. Where a Linux guest cannot run (this tier's build machines run
 * a PVM /dev/kvm), the tier must say why at once and `auto` must choose ns; the nested test
 * host (tests/kvm-host/, CR_EXPECT_KVM_LINUX=1) runs the guest for real. */
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <time.h>

#include "sandbox/sandbox.h"
#include "tests/testlib.h"

static char why[256];
static int available;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* What the run printed, when a check on it failed. */
static void show(const sandbox_outcome *oc)
{
    fprintf(stderr, "exited %d code %d signal %d limit %s\nstdout: %s\nstderr: %s\n",
            oc->exited, oc->exit_code, oc->term_signal, sandbox_limit_name(oc->limit),
            oc->stdout_buf.p ? oc->stdout_buf.p : "", oc->stderr_buf.p ? oc->stderr_buf.p : "");
}

/* A kvm-tier job for `code` with small limits; CPU time as long as the wall clock, since
 * python3 under nested emulation spends seconds of guest CPU. */
static void kvm_job(sandbox_job *job, const char *code, double wall_s)
{
    sandbox_job_init(job);
    job->tier = CR_TIER_KVM;
    job->code = code;
    job->code_len = strlen(code);
    job->limits.wall_s = wall_s;
    job->limits.cpu_s = wall_s;
    job->limits.max_stdout = 4096;       /* the other limits the defaults: the snapshot's
                                           warm python takes the job */
}

/* Runs `code` on the kvm tier with small limits; the code of sandbox_run(). */
static cr_code run(const char *code, double wall_s, sandbox_outcome *oc, cr_error *e)
{
    sandbox_job job;
    kvm_job(&job, code, wall_s);
    return sandbox_run(&job, oc, e);
}

static void test_unavailable_fails_fast(void)
{
    if (available) {
        SKIP("this host runs Linux guests");
        return;
    }
    sandbox_outcome oc;
    cr_error e = {0};
    double t0 = now();
    CHECK_INT(run("print(1)\n", 5, &oc, &e), CR_ESANDBOX);
    CHECK(now() - t0 < 1.0);
    CHECK(strstr(e.message, "try --tier ns") != NULL);
    CHECK(strncmp(e.message, "kvm: ", 5) == 0);
    char awhy[256];
    CHECK_INT(sandbox_tier_auto(NULL, awhy, sizeof awhy), CR_TIER_NS);
    CHECK(strncmp(awhy, "ns: kvm unavailable (", 21) == 0);
    CHECK(strstr(awhy, why) != NULL);
}

static void test_expectation(void)
{
    const char *expect = getenv("CR_EXPECT_KVM_LINUX");
    if (expect && !strcmp(expect, "1")) {
        if (!available) fprintf(stderr, "kvm tier unavailable: %s\n", why);
        CHECK_INT(available, 1);
    } else {
        CHECK(available ? why[0] == '\0' : strstr(why, "try --tier ns") != NULL);
    }
}

static void test_print_and_value(void)
{
    if (!available) { SKIP("%s", why); return; }
    sandbox_outcome oc;
    cr_error e = {0};
    if (run("import os\nprint(6*7, os.getuid())\nans = 2**70\n", 60, &oc, &e) != CR_OK) {
        fprintf(stderr, "run: %s\n", e.message);
        CHECK(0);
        return;
    }
    CHECK_INT(oc.tier, CR_TIER_KVM);
    if (oc.exit_code != 0) show(&oc);
    CHECK_INT(oc.exited, 1);
    CHECK_INT(oc.exit_code, 0);
    CHECK_INT(oc.limit, SANDBOX_LIMIT_NONE);
    /* Root of its own user namespace, as on the ns tier (nobody outside it). */
    CHECK_STR(oc.stdout_buf.p ? oc.stdout_buf.p : "", "42 0\n");
    CHECK_INT(oc.has_value, 1);
    CHECK_STR(oc.value_repr, "1180591620717411303424");
    CHECK_STR(oc.value_type, "int");
    fprintf(stderr, "print(6*7) on the kvm tier: %.3f s\n", oc.wall_s);
    sandbox_outcome_free(&oc);
}

/* The ns tier's system-call filter holds in the guest too: the code's refusals are the same. */
static void test_seccomp_in_guest(void)
{
    if (!available) { SKIP("%s", why); return; }
    sandbox_outcome oc;
    cr_error e = {0};
    /* netlink and AF_ALG sockets are open to any user without the filter. */
    static const char code[] =
        "import socket\n"
        "s = dict(l.split(':\\t') for l in open('/proc/self/status').read().splitlines() if ':\\t' in l)\n"
        "print(s['NoNewPrivs'], s['Seccomp'])\n"
        "for f in (16, 38):\n"
        "    try:\n"
        "        socket.socket(f, socket.SOCK_DGRAM if f == 16 else socket.SOCK_SEQPACKET)\n"
        "    except OSError as x:\n"
        "        print(x.errno)\n";
    if (run(code, 60, &oc, &e) != CR_OK) {
        fprintf(stderr, "run: %s\n", e.message);
        CHECK(0);
        return;
    }
    if (oc.exit_code != 0) show(&oc);
    CHECK_STR(oc.stdout_buf.p ? oc.stdout_buf.p : "", "1 2\n1\n1\n");
    sandbox_outcome_free(&oc);
}

static void test_exception_and_stderr(void)
{
    if (!available) { SKIP("%s", why); return; }
    sandbox_outcome oc;
    cr_error e = {0};
    if (run("import sys\nsys.stderr.write('w\\n')\nx = 1\ny = x / 0\n", 60, &oc, &e) != CR_OK) {
        fprintf(stderr, "run: %s\n", e.message);
        CHECK(0);
        return;
    }
    if (oc.exit_code != 1) show(&oc);
    CHECK_INT(oc.exit_code, 1);
    CHECK_INT(oc.raised, 1);
    CHECK_STR(oc.error_type, "ZeroDivisionError");
    CHECK_STR(oc.error_message, "division by zero");
    CHECK_INT(oc.error_line, 4);
    CHECK(oc.stderr_buf.p && strncmp(oc.stderr_buf.p, "w\n", 2) == 0);
    sandbox_outcome_free(&oc);
}

static void test_wall_limit_and_output_cap(void)
{
    if (!available) { SKIP("%s", why); return; }
    sandbox_outcome oc;
    cr_error e = {0};
    if (run("while True:\n    pass\n", 1, &oc, &e) != CR_OK) {
        fprintf(stderr, "run: %s\n", e.message);
        CHECK(0);
        return;
    }
    CHECK_INT(oc.limit, SANDBOX_LIMIT_WALL);
    CHECK_INT(oc.exited, 0);
    sandbox_outcome_free(&oc);

    if (run("print('x' * 10000)\n", 60, &oc, &e) != CR_OK) {
        fprintf(stderr, "run: %s\n", e.message);
        CHECK(0);
        return;
    }
    if (oc.limit != SANDBOX_LIMIT_OUTPUT) show(&oc);
    CHECK_INT(oc.limit, SANDBOX_LIMIT_OUTPUT);
    CHECK_INT(oc.stdout_buf.len, 4096);
    CHECK_INT(oc.stdout_buf.truncated, 1);
    sandbox_outcome_free(&oc);
}

/* A guest kernel that panics (here: no init to run) ends the run with a clean error that
 * quotes its last words; panic=-1 and reboot=k make it a reset the VMM sees at once. */
static void test_guest_panic(void)
{
    if (!available) { SKIP("%s", why); return; }
    sandbox_outcome oc;
    cr_error e = {0};
    setenv("CR_KVM_CMDLINE", "rdinit=/missing", 1);
    double t0 = now();
    CHECK_INT(run("print(1)\n", 60, &oc, &e), CR_ESANDBOX);
    unsetenv("CR_KVM_CMDLINE");
    fprintf(stderr, "boot to panic and reset: %.3f s\n", now() - t0);
    CHECK(strncmp(e.message, "kvm: the guest ended (reset) without a result; console: ",
                  56) == 0);
    if (!strstr(e.message, "Kernel panic")) fprintf(stderr, "panic run: %s\n", e.message);
    CHECK(strstr(e.message, "Kernel panic") != NULL);
}

/* /out comes back as on the ns tier: files by name with their hashes, copied to out_dir,
 * symlinks named and skipped, files past the count dropped, a full /out an ARTIFACTS limit. */
static void test_artifacts(void)
{
    if (!available) { SKIP("%s", why); return; }
    static const char code[] =
        "import os\n"
        "os.makedirs('/out/d')\n"
        "open('/out/d/a.csv', 'w').write('x,y\\n1,2\\n')\n"
        "open('/out/r.txt', 'w').write('42\\n')\n"
        "open('/out/z.txt', 'w').write('dropped')\n"
        "os.symlink('/etc/passwd', '/out/s')\n"
        "ans = len(os.listdir('/out'))\n";
    char dest[] = "/tmp/kvm-out.XXXXXX", path[64];
    if (!mkdtemp(dest)) {
        CHECK(0);
        return;
    }
    sandbox_job job;
    sandbox_outcome oc;
    cr_error e = {0};
    kvm_job(&job, code, 60);
    job.out_dir = dest;
    job.limits.max_artifacts = 2;
    if (sandbox_run(&job, &oc, &e) != CR_OK) {
        fprintf(stderr, "run: %s\n", e.message);
        CHECK(0);
        return;
    }
    if (oc.exit_code != 0) show(&oc);
    CHECK_STR(oc.value_repr, "4");
    CHECK_INT(oc.artifact_count, 2);
    if (oc.artifact_count == 2) {
        CHECK_STR(oc.artifacts[0].name, "d/a.csv");
        CHECK_STR(oc.artifacts[0].sha256,
                  "81bf9fa83c6f7f151bd491a98cd7d933de3965289e3ebd77c6c425f7eaa16392");
        CHECK_STR(oc.artifacts[1].name, "r.txt");
        CHECK_INT(oc.artifacts[1].size, 3);
        snprintf(path, sizeof path, "%s/r.txt", dest);
        CHECK_STR(oc.artifacts[1].path, path);
        FILE *f = fopen(path, "r");
        char got[8] = "";
        if (f) {
            if (!fgets(got, sizeof got, f)) got[0] = '\0';
            fclose(f);
        }
        CHECK_STR(got, "42\n");
    }
    CHECK_STR(oc.artifact_note, "skipped symlink: s; dropped over the artifact limits: z.txt");
    CHECK_INT(oc.limit, SANDBOX_LIMIT_ARTIFACTS);
    sandbox_outcome_free(&oc);

    static const char fill[] = "open('/out/big', 'wb').write(b'x' * (2 << 20))\n";
    job.code = fill;
    job.code_len = strlen(fill);
    job.out_dir = NULL;
    job.limits.artifact_bytes = 1 << 20;
    if (sandbox_run(&job, &oc, &e) != CR_OK) {
        fprintf(stderr, "run: %s\n", e.message);
        CHECK(0);
        return;
    }
    if (!oc.raised) show(&oc);
    CHECK_INT(oc.raised, 1);
    CHECK_STR(oc.error_type, "OSError");
    CHECK_INT(oc.limit, SANDBOX_LIMIT_ARTIFACTS);
    CHECK_STR(oc.limit_detail, "/out full (1048576 bytes)");
    sandbox_outcome_free(&oc);
}

/* /data as the ns tier gives it: readable, and every write refused with the ns tier's errors
 * (EROFS from the read-only mount, EACCES where permissions answer first). */
static void test_data_dir(void)
{
    if (!available) { SKIP("%s", why); return; }
    char dir[] = "/tmp/kvm-data.XXXXXX", path[64];
    if (!mkdtemp(dir)) {
        CHECK(0);
        return;
    }
    snprintf(path, sizeof path, "%s/in.txt", dir);
    FILE *f = fopen(path, "w");
    if (f) {
        fputs("payload\n", f);
        fclose(f);
    }
    /* World-readable, as the ns tier wants its data too: the code runs as nobody. */
    chmod(dir, 0755);
    chmod(path, 0644);
    static const char code[] =
        "import os\n"
        "def t(f):\n"
        "    try:\n"
        "        f()\n"
        "    except OSError as e:\n"
        "        return e.errno\n"
        "    return 0\n"
        "print(open('/data/in.txt').read().strip())\n"
        "print(t(lambda: open('/data/new', 'w')), t(lambda: open('/data/in.txt', 'a')),"
        " t(lambda: os.unlink('/data/in.txt')), t(lambda: os.chmod('/data/in.txt', 0o777)))\n";
    sandbox_job job;
    sandbox_outcome oc;
    cr_error e = {0};
    kvm_job(&job, code, 60);
    job.data_dir = dir;
    if (sandbox_run(&job, &oc, &e) != CR_OK) {
        fprintf(stderr, "run: %s\n", e.message);
        CHECK(0);
        return;
    }
    if (oc.exit_code != 0 || !oc.stdout_buf.p) show(&oc);
    CHECK_STR(oc.stdout_buf.p ? oc.stdout_buf.p : "", "payload\n30 13 30 30\n");
    sandbox_outcome_free(&oc);
    unlink(path);
    rmdir(dir);

    job.data_dir = "/nonexistent-data";
    CHECK_INT(sandbox_run(&job, &oc, &e), CR_EUSAGE);
    CHECK_STR(e.message, "/nonexistent-data: No such file or directory");
}

/* ---- the snapshot ----------------------------------------------------------------------
 * Runs restore a snapshot of a guest booted once (made by the first run that finds none);
 * CR_KVM_COLD=1 boots instead. */

static int has(const char *hay, const char *needle) { return hay && strstr(hay, needle); }

/* Runs code and returns its stdout (malloc'ed, "" on failure) and the tier note in note. */
static char *run_out(const char *code, char *note, size_t n)
{
    sandbox_outcome oc;
    cr_error e = {0};
    if (note && n) note[0] = '\0';
    if (run(code, 60, &oc, &e) != CR_OK) {
        fprintf(stderr, "run: %s\n", e.message);
        return strdup("");
    }
    if (oc.exit_code != 0) show(&oc);
    if (note) snprintf(note, n, "%s", oc.tier_note);
    char *out = strdup(oc.stdout_buf.p ? oc.stdout_buf.p : "");
    sandbox_outcome_free(&oc);
    return out;
}

/* The first run makes the snapshot (or finds it), the next restores it; both answer. */
static void test_snapshot_made_and_restored(void)
{
    if (!available) { SKIP("%s", why); return; }
    char note[512];
    double t0 = now();
    char *a = run_out("print(1)\n", note, sizeof note);
    CHECK_STR(a, "1\n");
    CHECK(has(note, "VM restore and stop"));
    fprintf(stderr, "first print(1): %.3f s (%s)\n", now() - t0, note);
    free(a);
    t0 = now();
    a = run_out("print(1)\n", note, sizeof note);
    CHECK_STR(a, "1\n");
    CHECK(has(note, "VM restore and stop") && !has(note, "snapshot made"));
    CHECK(has(note, "python warm in the snapshot"));
    fprintf(stderr, "restored print(1): %.3f s (%s)\n", now() - t0, note);
    free(a);
}

/* With the package image (make kvm-pkgs) beside the kernel, a restored VM answers with numpy
 * and pandas already imported by the snapshot's warm python, read from the image over /usr
 * through DAX. Skipped where the kvm directory has no image. */
static void test_finance_stack_restored(void)
{
    if (!available) { SKIP("%s", why); return; }
    const char *dir = getenv("CALCROUTE_KVM_DIR");
    char image[1024];
    snprintf(image, sizeof image, "%s/pkgs.erofs", dir && *dir ? dir : "build/kvm");
    if (access(image, R_OK) != 0) { SKIP("no package image at %s", image); return; }
    static const char code[] =
        "import sys\n"
        "print('pandas' in sys.modules, 'scipy' in sys.modules)\n"
        "import numpy as np, pandas as pd\n"
        "df = pd.DataFrame({'t': range(4), 'cash': [-100.0, 30, 40, 50]})\n"
        "print(f'{float((df.cash / 1.1 ** df.t).sum()):.6f}', np.cumsum(df.cash.to_numpy())[-1])\n"
        "usr = [l.split() for l in open('/proc/self/mountinfo') if l.split()[4] == '/usr']\n"
        "print(usr[-1][-3], 'dax=always' in usr[-1][-1], 'ro' in usr[-1][5].split(','))\n";
    char note[512];
    double t0 = now();
    char *a = run_out(code, note, sizeof note);
    CHECK_STR(a, "True False\n-2.103681 20.0\nerofs True True\n");
    CHECK(has(note, "VM restore and stop") && has(note, "python warm in the snapshot"));
    fprintf(stderr, "restored numpy+pandas NPV: %.3f s (%s)\n", now() - t0, note);
    free(a);
}

/* Cold boot stays available, and says so by its note. */
static void test_cold_boot_on_request(void)
{
    if (!available) { SKIP("%s", why); return; }
    char note[512];
    setenv("CR_KVM_COLD", "1", 1);
    double t0 = now();
    char *a = run_out("print(1)\n", note, sizeof note);
    unsetenv("CR_KVM_COLD");
    CHECK_STR(a, "1\n");
    CHECK(has(note, "VM start and stop") && !has(note, "restore"));
    fprintf(stderr, "cold print(1): %.3f s\n", now() - t0);
    free(a);
}

/* Two restored VMs share nothing the first changed: its /tmp file, its globals, and its
 * random state (the kernel's pool is reseeded from host entropy on each restore, so two
 * copies of one snapshot draw different bytes). */
static void test_restored_isolation(void)
{
    if (!available) { SKIP("%s", why); return; }
    static const char code[] =
        "import os, builtins\n"
        "print(os.path.exists('/tmp/mark'), hasattr(builtins, 'mark'))\n"
        "open('/tmp/mark', 'w').write('x')\n"
        "builtins.mark = 1\n"
        "print(os.urandom(16).hex())\n"
        "print(open('/proc/sys/kernel/random/boot_id').read().strip())\n";
    char *a = run_out(code, NULL, 0), *b = run_out(code, NULL, 0);
    CHECK(strncmp(a, "False False\n", 12) == 0);
    CHECK(strncmp(b, "False False\n", 12) == 0);
    char *ra = strchr(a, '\n'), *rb = strchr(b, '\n');
    CHECK(ra && rb && strlen(ra) > 33 && strlen(rb) > 33);
    if (ra && rb) {
        CHECK(strncmp(ra, rb, 33) != 0);          /* os.urandom differs */
        if (!strncmp(ra, rb, 33)) fprintf(stderr, "same random bytes:\n%s%s", a, b);
    }
    free(a);
    free(b);
    /* The guest's wall clock is the host's, not the snapshot's. */
    char *t = run_out("import time\nprint(int(time.time()))\n", NULL, 0);
    long guest = atol(t);
    CHECK(labs(guest - (long)time(NULL)) < 60);
    if (labs(guest - (long)time(NULL)) >= 60) fprintf(stderr, "guest clock %s", t);
    free(t);
}

/* A job of other memory and process limits takes the warm python all the same, set to its
 * limits: the code's process has the job's rlimits, and an allocation past the job's memory
 * fails as it would in a python started for it. */
static void test_warm_python_takes_other_limits(void)
{
    if (!available) { SKIP("%s", why); return; }
    static const char code[] =
        "for l in open('/proc/self/limits'):\n"
        "    if l.startswith(('Max data size', 'Max processes')):\n"
        "        print(l[26:46].strip())\n"
        "try:\n"
        "    b = bytearray(300 << 20)\n"
        "except MemoryError:\n"
        "    print('MemoryError')\n";
    sandbox_job job;
    sandbox_outcome oc;
    cr_error e = {0};
    kvm_job(&job, code, 60);
    job.limits.memory_bytes = 200u << 20;
    job.limits.max_procs = 16;
    if (sandbox_run(&job, &oc, &e) != CR_OK) {
        fprintf(stderr, "run: %s\n", e.message);
        CHECK(0);
        return;
    }
    if (oc.exit_code != 0) show(&oc);
    CHECK_STR(oc.stdout_buf.p ? oc.stdout_buf.p : "", "209715200\n17\nMemoryError\n");
    CHECK(has(oc.tier_note, "python warm in the snapshot"));
    if (!has(oc.tier_note, "python warm")) fprintf(stderr, "note: %s\n", oc.tier_note);
    sandbox_outcome_free(&oc);
}

/* A snapshot of another kernel is refused and made again: here the kernel's time changes. */
static void test_snapshot_of_other_kernel_refused(void)
{
    if (!available) { SKIP("%s", why); return; }
    const char *dir = getenv("CALCROUTE_KVM_DIR");
    if (!dir || !*dir) { SKIP("CALCROUTE_KVM_DIR is not set"); return; }
    char kernel[1024];
    snprintf(kernel, sizeof kernel, "%s/vmlinuz", dir);
    struct timespec times[2] = { { .tv_nsec = UTIME_OMIT }, { .tv_nsec = UTIME_NOW } };
    if (utimensat(AT_FDCWD, kernel, times, 0) != 0) {
        CHECK(0);
        return;
    }
    char note[512];
    char *a = run_out("print(2)\n", note, sizeof note);
    CHECK_STR(a, "2\n");
    if (!has(note, "kvm: snapshot made from another kernel: refused")) fprintf(stderr, "note: %s\n", note);
    CHECK(has(note, "snapshot made in") &&
          has(note, "kvm: snapshot made from another kernel: refused"));
    free(a);
}

/* In the nested host, each test's name before it runs: a stall of the emulation (its
 * heartbeat stops) is then placed in the console, not guessed at from timestamps. */
#define RUN(t) do { if (available) fprintf(stderr, "-- %s\n", #t); t(); } while (0)

int main(void)
{
    available = sandbox_tier_kvm.available(NULL, why, sizeof why);
    RUN(test_expectation);
    RUN(test_unavailable_fails_fast);
    RUN(test_snapshot_made_and_restored);
    RUN(test_finance_stack_restored);
    RUN(test_print_and_value);
    RUN(test_restored_isolation);
    RUN(test_warm_python_takes_other_limits);
    RUN(test_cold_boot_on_request);
    RUN(test_exception_and_stderr);
    RUN(test_seccomp_in_guest);
    RUN(test_wall_limit_and_output_cap);
    RUN(test_guest_panic);
    RUN(test_artifacts);
    RUN(test_data_dir);
    RUN(test_snapshot_of_other_kernel_refused);
    return TEST_SUMMARY();
}
