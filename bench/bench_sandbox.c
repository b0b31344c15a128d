/* bench/bench_sandbox.c: cold start of the ns tier beside bare `python3 -I` and bubblewrap
 * (`bwrap --unshare-all ...`) running the same code, interleaved in one run so that a busy
 * machine slows all three alike. Prints medians of wall time and of CPU time (user + system
 * of this process and all its descendants: what a run costs the machine, and a figure a
 * loaded machine disturbs far less than wall time), the overhead over bare python3, ratios.
 * bubblewrap's CPU cannot be counted this way (its monitor exits without reaping the
 * sandboxed process, so the kernel never adds that time to ours): shown as n/a.
 *
 *     build/bench/bench_sandbox [ROUNDS] [BWRAP]     (defaults: 20, bwrap on PATH)
 *
 * Figures only: nothing here passes or fails on time. */
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sandbox/sandbox.h"

extern char **environ;

#define PY "/usr/bin/python3"

static const char *const scripts[][2] = {
    { "print(1)", "print(1)\n" },
    { "small script",
      "import statistics\n"
      "cash = [-1000, 300, 420, 380, 250]\n"
      "def npv(r):\n"
      "    return sum(c / (1 + r) ** i for i, c in enumerate(cash))\n"
      "lo, hi = 0.0, 1.0\n"
      "for _ in range(60):\n"
      "    mid = (lo + hi) / 2\n"
      "    lo, hi = (mid, hi) if npv(mid) > 0 else (lo, mid)\n"
      "print(round(mid, 6), statistics.mean(cash[1:]))\n"
      "irr = mid\n" },
};
#define N_SCRIPTS (sizeof scripts / sizeof scripts[0])
/* The ns tier starts python with -I -S (its runner adds the package directories itself), so
 * bare python3 -I -S is shown too: the sandbox's own cost is the difference to that line. */
enum { WAY_BARE, WAY_BARE_S, WAY_BWRAP, WAY_NS, N_WAYS };
static const char *const way_names[N_WAYS] = { "python3 -I", "python3 -I -S",
                                               "bwrap --unshare-all", "ns tier" };

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* CPU seconds of this process and of every descendant it has reaped. */
static double cpu_now(void)
{
    struct rusage self, kids;
    getrusage(RUSAGE_SELF, &self);
    getrusage(RUSAGE_CHILDREN, &kids);
    return (double)(self.ru_utime.tv_sec + self.ru_stime.tv_sec + kids.ru_utime.tv_sec +
                    kids.ru_stime.tv_sec) +
           (double)(self.ru_utime.tv_usec + self.ru_stime.tv_usec + kids.ru_utime.tv_usec +
                    kids.ru_stime.tv_usec) / 1e6;
}

/* Runs argv with stdout and stderr to /dev/null; 0, or -1 when it failed. */
static double spawn_time(char *const argv[])
{
    posix_spawn_file_actions_t fa;
    pid_t pid;
    int st;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    if (posix_spawn(&pid, argv[0], &fa, NULL, argv, environ) != 0) {
        posix_spawn_file_actions_destroy(&fa);
        return -1;
    }
    posix_spawn_file_actions_destroy(&fa);
    while (waitpid(pid, &st, 0) < 0) {}
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

static double run_bare(const char *code, int no_site)
{
    char *argv[] = { PY, "-I", "-c", (char *)code, NULL };
    char *argv_s[] = { PY, "-I", "-S", "-c", (char *)code, NULL };
    return spawn_time(no_site ? argv_s : argv);
}

/* The bubblewrap line of the corpus README, the interpreter run the same way as ours. */
static double run_bwrap(const char *bwrap, const char *code)
{
    char *argv[] = { (char *)bwrap, "--unshare-all", "--die-with-parent", "--new-session",
                     "--ro-bind", "/usr", "/usr", "--symlink", "usr/lib", "/lib",
                     "--symlink", "usr/lib64", "/lib64", "--symlink", "usr/bin", "/bin",
                     "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp",
                     "--ro-bind", "/etc/alternatives", "/etc/alternatives",
                     "--ro-bind", "/etc/ld.so.cache", "/etc/ld.so.cache",
                     "--chdir", "/tmp", PY, "-I", "-c", (char *)code, NULL };
    return spawn_time(argv);
}

static double run_ns(const char *code)
{
    sandbox_job job;
    sandbox_outcome oc;
    cr_error err = { 0 };
    double t;
    sandbox_job_init(&job);
    job.tier = CR_TIER_NS;
    job.code = code;
    job.code_len = strlen(code);
    if (sandbox_run(&job, &oc, &err) != CR_OK) {
        fprintf(stderr, "ns tier: %s\n", err.message);
        return -1;
    }
    t = 0;
    if (!oc.exited || oc.exit_code != 0) t = -1;
    sandbox_outcome_free(&oc);
    return t;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n ? (n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2) : -1;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 20;
    const char *bwrap = argc > 2 ? argv[2] : "/usr/bin/bwrap";
    char why[256];
    int have_bwrap = access(bwrap, X_OK) == 0;
    static double samples[N_SCRIPTS][N_WAYS][1000], cpu[N_SCRIPTS][N_WAYS][1000];
    int count[N_SCRIPTS][N_WAYS] = { { 0 } };

    if (rounds < 1 || rounds > 1000) rounds = 20;
    if (!sandbox_tier_available(CR_TIER_NS, why, sizeof why)) {
        printf("ns tier unavailable: %s\n", why);
        return 0;
    }
    /* One warm-up of each, so page-cache misses do not land on whoever goes first. */
    for (size_t s = 0; s < N_SCRIPTS; s++) {
        run_bare(scripts[s][1], 0);
        run_bare(scripts[s][1], 1);
        if (have_bwrap) run_bwrap(bwrap, scripts[s][1]);
        run_ns(scripts[s][1]);
    }
    for (int r = 0; r < rounds; r++)
        for (size_t s = 0; s < N_SCRIPTS; s++)
            for (int w = 0; w < N_WAYS; w++) {
                /* Rotate the order each round: no way always runs right after another. */
                int way = (w + r) % N_WAYS;
                double t0 = now(), c0 = cpu_now();
                double ok = way == WAY_BARE ? run_bare(scripts[s][1], 0)
                          : way == WAY_BARE_S ? run_bare(scripts[s][1], 1)
                          : way == WAY_BWRAP ? (have_bwrap ? run_bwrap(bwrap, scripts[s][1]) : -1)
                                             : run_ns(scripts[s][1]);
                if (ok < 0) continue;
                samples[s][way][count[s][way]] = now() - t0;
                cpu[s][way][count[s][way]++] = cpu_now() - c0;
            }

    printf("== sandbox cold start: %d interleaved rounds; medians in ms (overhead over bare "
           "python3 -I, ratio)\n", rounds);
    for (size_t s = 0; s < N_SCRIPTS; s++) {
        double med[N_WAYS], mcpu[N_WAYS];
        for (int w = 0; w < N_WAYS; w++) {
            med[w] = median(samples[s][w], count[s][w]);
            mcpu[w] = median(cpu[s][w], count[s][w]);
        }
        printf("%s\n", scripts[s][0]);
        for (int w = 0; w < N_WAYS; w++) {
            if (!count[s][w]) { printf("  %-20s  n/a\n", way_names[w]); continue; }
            printf("  %-20s wall %7.2f (%+7.2f, x%.2f)", way_names[w], med[w] * 1e3,
                   (med[w] - med[WAY_BARE]) * 1e3, med[w] / med[WAY_BARE]);
            if (w == WAY_BWRAP) printf("   cpu     n/a                   ");
            else
                printf("   cpu %7.2f (%+7.2f, x%.2f)", mcpu[w] * 1e3,
                       (mcpu[w] - mcpu[WAY_BARE]) * 1e3, mcpu[w] / mcpu[WAY_BARE]);
            printf("  n=%d\n", count[s][w]);
        }
        if (count[s][WAY_BWRAP] && count[s][WAY_NS])
            printf("  ns overhead / bwrap overhead (wall): %.2f over python3 -I, %.2f over the "
                   "same interpreter flags (ns - python3 -I -S) / (bwrap - python3 -I)\n",
                   (med[WAY_NS] - med[WAY_BARE]) / (med[WAY_BWRAP] - med[WAY_BARE]),
                   (med[WAY_NS] - med[WAY_BARE_S]) / (med[WAY_BWRAP] - med[WAY_BARE]));
    }
    return 0;
}
