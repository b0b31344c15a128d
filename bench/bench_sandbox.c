/* bench/bench_sandbox.c: request -> result latency of sandboxed code, four ways side by side
 * in one run: the engine's warm pool (ns tier, the engine option pool with the program's imports
 * preloaded and, for a library program, a warm-up of the library), a cold ns sandbox, bubblewrap (`bwrap --unshare-all ...`) and bare
 * `python3 -I`, on print(1), a numpy + pandas aggregate and a scipy brentq IRR. The ways are
 * interleaved (the order rotates every round) so that a busy machine slows all alike, and
 * after each warm request the pool refills before anything else is timed, so its refill
 * lands on no one's clock. Prints p50 and p99 of wall time, p50 of CPU time (user + system of
 * this process and all its descendants: what a run costs the machine; for the warm pool, whose
 * workers are the zygote's children, the sandbox's own CPU from the handoff), then the sustained
 * throughput of `calc-route --batch` with its default pool and with none, on a sandboxed
 * print(1) and the pandas program (N and 2N requests each: the second N's rate, without the
 * process's start; interleaved rounds, the medians and their ratio), and the idle memory (PSS)
 * of a ready worker beside an idle bare interpreter. The warm pool's goals are printed beside
 * the figures, met or not.
 *
 *     build/bench/bench_sandbox [ROUNDS] [LIB_ROUNDS] [BATCH_WARM] [BATCH_COLD] [BWRAP] [CALC_ROUTE] [warm|batch]
 *     (defaults: 200 rounds of print(1), 30 of each library program, 100 and 10 batch
 *     requests (print(1): twice and five times as many), /usr/bin/bwrap (also when given as
 *     ""), calc-route in the directory above the bench's; "warm": the warm pool alone, no
 *     batch and no memory, to compare builds run after run on a busy machine; "batch": the
 *     batch throughput alone)
 *
 * Figures only: nothing here passes or fails on time. */
#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "router/router.h"   /* the engine's pool: to wait until it is ready, and its pids */
#include "sandbox/sandbox.h"

extern char **environ;

#define PY "/usr/bin/python3"
#define MAX_SAMPLES 1000
#define READY_S 120.0      /* a worker importing pandas on a loaded machine */

typedef struct {
    const char *name, *code;
    const char *preload;   /* the warm pool's: the modules the program imports */
    int library;           /* imports site-packages: LIB_ROUNDS, and no `python3 -I -S` */
    /* The warm pool's warm-up: what an operator would give it, a like use of the library,
     * not the program measured. */
    const char *warmup;
} program;

static const program programs[] = {
    { "print(1)", "print(1)\n", "", 0, NULL },
    { "numpy + pandas groupby",
      "import numpy as np\n"
      "import pandas as pd\n"
      "df = pd.DataFrame({'desk': ['rates', 'fx', 'rates', 'credit', 'fx', 'credit'],\n"
      "                   'pnl': np.array([120.5, -40.25, 310.0, 75.5, 12.75, -8.0])})\n"
      "print(df.groupby('desk')['pnl'].agg(['sum', 'mean']).to_string())\n",
      "numpy,pandas", 1,
      "import pandas as pd\n"
      "df = pd.DataFrame({'k': ['a', 'b', 'a'], 'v': [1.5, 2.0, -0.5]})\n"
      "df.groupby('k')['v'].agg(['sum', 'mean']).to_string()\n" },
    { "scipy brentq IRR",
      "from scipy.optimize import brentq\n"
      "cash = [-1000, 300, 420, 380, 250]\n"
      "def npv(r):\n"
      "    return sum(c / (1 + r) ** i for i, c in enumerate(cash))\n"
      "print(round(brentq(npv, -0.9, 1.0), 6))\n",
      "scipy.optimize", 1,
      "from scipy.optimize import brentq\nbrentq(lambda r: r * r - 0.25, 0.0, 1.0)\n" },
};
#define N_PROGRAMS (sizeof programs / sizeof programs[0])
#define PROGRAM_PANDAS 1

/* The ns tier starts python with -I -S (its runner adds the package directories itself), so
 * bare python3 -I -S is shown for print(1): the sandbox's own cost is the difference. */
enum { WAY_WARM, WAY_NS, WAY_BWRAP, WAY_BARE, WAY_BARE_S, N_WAYS };
static const char *const way_names[N_WAYS] = { "warm pool", "ns tier, cold",
                                               "bwrap --unshare-all", "python3 -I",
                                               "python3 -I -S" };

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

/* Runs argv, stdin from in_path (NULL: /dev/null), stdout to out_path (NULL: /dev/null),
 * stderr to /dev/null; 0 when it exited 0, else -1. */
static int spawn_wait(char *const argv[], const char *in_path, const char *out_path)
{
    posix_spawn_file_actions_t fa;
    pid_t pid;
    int st;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, in_path ? in_path : "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, out_path ? out_path : "/dev/null",
                                     O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    if (posix_spawn(&pid, argv[0], &fa, NULL, argv, environ) != 0) {
        posix_spawn_file_actions_destroy(&fa);
        return -1;
    }
    posix_spawn_file_actions_destroy(&fa);
    while (waitpid(pid, &st, 0) < 0) {}
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

static int run_bare(const char *code, int no_site)
{
    char *argv[] = { PY, "-I", "-c", (char *)code, NULL };
    char *argv_s[] = { PY, "-I", "-S", "-c", (char *)code, NULL };
    return spawn_wait(no_site ? argv_s : argv, NULL, NULL);
}

/* The bubblewrap line of the corpus README, the interpreter run the same way as ours. */
static int run_bwrap(const char *bwrap, const char *code)
{
    char *argv[] = { (char *)bwrap, "--unshare-all", "--die-with-parent", "--new-session",
                     "--ro-bind", "/usr", "/usr", "--symlink", "usr/lib", "/lib",
                     "--symlink", "usr/lib64", "/lib64", "--symlink", "usr/bin", "/bin",
                     "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp",
                     "--ro-bind", "/etc/alternatives", "/etc/alternatives",
                     "--ro-bind", "/etc/ld.so.cache", "/etc/ld.so.cache",
                     "--chdir", "/tmp", PY, "-I", "-c", (char *)code, NULL };
    return spawn_wait(argv, NULL, NULL);
}

/* A job as the engine makes it; pool NULL: a cold start. *warm: whether a worker ran it;
 * *inside, *inside_cpu: the sandbox's own wall and CPU time (from the handoff when warm). */
static int run_job(cr_engine *e, sandbox_pool *pool, const char *code, int *warm, double *inside,
                   double *inside_cpu)
{
    sandbox_job job;
    sandbox_outcome oc;
    cr_error err = { 0 };
    int rc;
    sandbox_job_init(&job);
    job.tier = CR_TIER_NS;
    job.code = code;
    job.code_len = strlen(code);
    job.interpreter = e->interpreter;
    router_sandbox_limits(e, &job.limits);
    if (sandbox_pool_run(pool, &job, &oc, &err) != CR_OK) {
        fprintf(stderr, "ns tier: %s\n", err.message);
        return -1;
    }
    rc = oc.exited && oc.exit_code == 0 ? 0 : -1;
    *warm = oc.warm;
    *inside = oc.wall_s;
    *inside_cpu = oc.cpu_s;
    sandbox_outcome_free(&oc);
    return rc;
}

/* A whole request through the engine: the result's JSON says whether it started warm, and
 * the sandbox's own wall and CPU time. */
static int run_request(cr_engine *e, const char *code, int *warm, double *inside,
                       double *inside_cpu)
{
    cr_request *req = cr_request_new();
    cr_result *res = NULL;
    cr_error err = { 0 };
    int rc = -1;
    if (req && cr_request_set_code(req, code, strlen(code)) == CR_OK &&
        cr_run(e, req, &res, &err) == CR_OK && cr_result_status(res) == CR_OK) {
        json_t *j = json_loads(cr_result_json(res), 0, NULL);
        json_t *tm = json_object_get(j, "timings");
        const char *start = json_string_value(json_object_get(tm, "sandbox_start"));
        *warm = start && !strcmp(start, "warm");
        *inside = json_number_value(json_object_get(tm, "sandbox_wall_s"));
        *inside_cpu = json_number_value(json_object_get(tm, "sandbox_cpu_s"));
        json_decref(j);
        rc = 0;
    } else if (res && cr_result_error(res)) {
        fprintf(stderr, "warm pool: %s\n", cr_result_error(res)->message);
    } else if (!res) {
        fprintf(stderr, "warm pool: %s\n", err.message);
    }
    cr_result_free(res);
    cr_request_free(req);
    return rc;
}

/* Where the engine sends the code: print(1) it answers in-process, so the warm way hands
 * that one to the engine's pool directly, as the engine would. */
static cr_route engine_route(cr_engine *e, const char *code)
{
    cr_request *req = cr_request_new();
    cr_result *res = NULL;
    cr_error err = { 0 };
    cr_route r = CR_ROUTE_REJECTED;
    if (req && cr_request_set_code(req, code, strlen(code)) == CR_OK &&
        cr_request_set_explain(req, 1) == CR_OK && cr_run(e, req, &res, &err) == CR_OK)
        r = cr_result_route(res);
    cr_result_free(res);
    cr_request_free(req);
    return r;
}

static cr_engine *open_pool_engine(unsigned size, const char *preload, const char *warmup)
{
    cr_error err = { 0 };
    cr_engine *e = NULL;
    cr_config *cfg = cr_config_new();
    char n[16];
    snprintf(n, sizeof n, "%u", size);
    if (cfg && cr_config_set(cfg, "tier", "ns", &err) == CR_OK &&
        cr_config_set(cfg, "pool", n, &err) == CR_OK &&
        cr_config_set(cfg, "preload", preload, &err) == CR_OK &&
        cr_config_set(cfg, "warmup", warmup, &err) == CR_OK)
        e = cr_engine_open(cfg, &err);
    if (!e) fprintf(stderr, "engine: %s\n", cfg ? err.message : "out of memory");
    cr_config_free(cfg);
    return e;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Nearest rank of sorted v: the smallest value with at least p of the samples at or below. */
static double pct(const double *v, int n, double p)
{
    int k = (int)ceil(p * n);
    return n ? v[k < 1 ? 0 : k - 1] : -1;
}

/* ---- PSS of a process tree ------------------------------------------------------------- */

static long long pss_kib(pid_t pid, long long *private_kib)
{
    char path[64], line[256];
    long long pss = -1, v;
    FILE *f;
    snprintf(path, sizeof path, "/proc/%d/smaps_rollup", (int)pid);
    if (!(f = fopen(path, "r"))) return -1;
    while (fgets(line, sizeof line, f)) {
        if (sscanf(line, "Pss: %lld kB", &v) == 1) pss = v;
        else if (sscanf(line, "Private_Clean: %lld kB", &v) == 1) *private_kib += v;
        else if (sscanf(line, "Private_Dirty: %lld kB", &v) == 1) *private_kib += v;
    }
    fclose(f);
    return pss;
}

static pid_t parent_of(pid_t pid)
{
    char path[64], buf[512], *p;
    int ppid = 0;
    FILE *f;
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    if (!(f = fopen(path, "r"))) return 0;
    if (fgets(buf, sizeof buf, f) && (p = strrchr(buf, ')'))) sscanf(p + 1, " %*c %d", &ppid);
    fclose(f);
    return (pid_t)ppid;
}

/* PSS and private memory (KiB) summed over root and all its descendants; the process count,
 * or -1 when root's memory could not be read. */
static int tree_memory(pid_t root, long long *pss, long long *private_kib)
{
    pid_t tree[256];
    int n = 1, grew = 1, readable = 0;
    DIR *d;
    struct dirent *de;
    tree[0] = root;
    /* Parents come before children in no guaranteed order: sweep until nothing joins. */
    while (grew && n < 256) {
        grew = 0;
        if (!(d = opendir("/proc"))) break;
        while ((de = readdir(d)) && n < 256) {
            pid_t pid = (pid_t)atoi(de->d_name), pp;
            int known = 0;
            if (pid <= 0) continue;
            for (int i = 0; i < n && !known; i++) known = tree[i] == pid;
            if (known || !(pp = parent_of(pid))) continue;
            for (int i = 0; i < n; i++)
                if (tree[i] == pp) { tree[n++] = pid; grew = 1; break; }
        }
        closedir(d);
    }
    *pss = *private_kib = 0;
    for (int i = 0; i < n; i++) {
        long long v = pss_kib(tree[i], private_kib);
        if (v >= 0) { *pss += v; readable++; }
    }
    return readable ? n : -1;
}

static void print_memory(const char *what, pid_t root)
{
    long long pss, priv;
    int n = tree_memory(root, &pss, &priv);
    if (n < 0) printf("  %-44s n/a (smaps_rollup unreadable)\n", what);
    else
        printf("  %-44s PSS %6.1f MiB   private %6.1f MiB   (%d process%s)\n", what,
               (double)pss / 1024, (double)priv / 1024, n, n == 1 ? "" : "es");
}

/* A bare interpreter that has imported `imports` and waits on stdin. */
static void bare_idle_memory(const char *imports, const char *what)
{
    char code[256];
    int in[2], out[2];
    char ready[8];
    pid_t pid;
    posix_spawn_file_actions_t fa;
    snprintf(code, sizeof code, "import sys%s%s\nprint('ready', flush=True)\nsys.stdin.read()\n",
             imports[0] ? ", " : "", imports);
    if (pipe(in) < 0) return;
    if (pipe(out) < 0) { close(in[0]); close(in[1]); return; }
    char *argv[] = { PY, "-I", "-c", code, NULL };
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, in[0], 0);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    posix_spawn_file_actions_addclose(&fa, in[1]);
    posix_spawn_file_actions_addclose(&fa, out[0]);
    int e = posix_spawn(&pid, PY, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(in[0]);
    close(out[1]);
    if (e == 0) {
        if (read(out[0], ready, sizeof ready) > 0) print_memory(what, pid);
        else printf("  %-44s n/a (it did not start)\n", what);
    }
    close(in[1]);
    close(out[0]);
    if (e == 0) while (waitpid(pid, NULL, 0) < 0) {}
}

static void pool_idle_memory(const char *preload, const char *what)
{
    cr_engine *e = open_pool_engine(1, preload, NULL);
    pid_t pid;
    if (!e) return;
    if (!e->pool || !sandbox_pool_wait_ready(e->pool, 1, READY_S) ||
        sandbox_pool_ready(e->pool, &pid, 1) != 1)
        printf("  %-44s n/a (no worker became ready)\n", what);
    else
        print_memory(what, pid);
    cr_engine_close(e);
}

static const char *met(int yes);

/* ---- calc-route --batch throughput ------------------------------------------------------ */

/* What the batch section runs: print(1) made to go to the sandbox (an import the in-process
 * subset does not take; the stdlib's os, which a warm worker has made already, as a cold run
 * makes it), and the pandas program. Sustained requests a second, the default pool
 * (`--batch` alone: pool and preload auto) against `--pool 0` (every request cold), with
 * the ratio the warm pool is meant to reach. */
/* warm_n, cold_n: requests a run, in BATCH_WARM and BATCH_COLD (the bench's arguments);
 * preload: the pool's, when not its default (auto: numpy and pandas). print(1)'s imports are
 * standard modules, so the default pool serves it from its lean zygote and the two rows
 * should agree; the pandas row pays for the address space of the zygote with the list. */
static const struct {
    const char *name, *code, *preload;
    int warm_n, cold_n;
    double goal;
} batch_programs[] = {
    { "import os; print(1)", "import os\nprint(1)\n", NULL, 2, 5, 10 },
    { "the same, --preload ''", "import os\nprint(1)\n", "", 2, 5, 10 },
    { "numpy + pandas groupby", NULL, NULL, 1, 1, 20 },
};
#define BATCH_ROUNDS 3     /* interleaved rounds; the median rate of each way is printed */

/* One run of n requests of code through calc_route --batch (pool: its default; else
 * --pool 0); *wall_out its wall time in seconds (-1 when it failed), *warm_out how many
 * started warm. */
static void batch(const char *calc_route, const char *code, const char *preload, int n,
                  int pool, double *wall_out, int *warm_out)
{
    char in_path[] = "/tmp/bench_sandbox_inXXXXXX", out_path[] = "/tmp/bench_sandbox_outXXXXXX";
    char line[65536];
    int fd_in = mkstemp(in_path), fd_out = mkstemp(out_path);
    int ok = 0, warm = 0;
    FILE *f;
    *wall_out = -1;
    *warm_out = 0;
    if (fd_in < 0 || fd_out < 0 || !(f = fdopen(fd_in, "w"))) goto out;
    fd_in = -1;
    for (int i = 0; i < n; i++) {
        json_t *o = json_pack("{s:s, s:i}", "code", code, "id", i);
        char *s = o ? json_dumps(o, JSON_COMPACT) : NULL;
        if (s) fprintf(f, "%s\n", s);
        free(s);
        json_decref(o);
    }
    fclose(f);
    char *argv_pool[] = { (char *)calc_route, "--batch", "--tier", "ns", NULL, NULL, NULL };
    if (preload) {
        argv_pool[4] = "--preload";
        argv_pool[5] = (char *)preload;
    }
    char *argv_cold[] = { (char *)calc_route, "--batch", "--tier", "ns", "--pool", "0", NULL };
    double t0 = now();
    int rc = spawn_wait(pool ? argv_pool : argv_cold, in_path, out_path);
    double wall = now() - t0;
    if ((f = fopen(out_path, "r"))) {
        while (fgets(line, sizeof line, f)) {
            ok += strstr(line, "\"status\":\"ok\"") != NULL;
            warm += strstr(line, "\"sandbox_start\":\"warm\"") != NULL;
        }
        fclose(f);
    }
    if (rc == 0 && ok == n) {
        *wall_out = wall;
        *warm_out = warm;
    }
out:
    if (fd_in >= 0) close(fd_in);
    if (fd_out >= 0) close(fd_out);
    unlink(in_path);
    unlink(out_path);
}

/* The sustained rate of a way: (2n - n) / (t2n - tn), without the process's start (the
 * pool's zygote importing pandas, a cold start's whole cost for the first request). */
static double sustained(const char *calc_route, const char *code, const char *preload, int n,
                        int pool, int *warm)
{
    double w1, w2;
    int warm1, warm2;
    batch(calc_route, code, preload, n, pool, &w1, &warm1);
    batch(calc_route, code, preload, 2 * n, pool, &w2, &warm2);
    *warm = warm2 - warm1;
    return w1 > 0 && w2 > w1 ? n / (w2 - w1) : -1;
}

static void batch_section(const char *calc_route, int batch_warm, int batch_cold)
{
    printf("\n== sustained throughput of %s --batch --tier ns: its default warm pool (pool and "
           "preload auto) against --pool 0 (every request cold), %d interleaved rounds, "
           "medians; req/s\n", calc_route, BATCH_ROUNDS);
    printf("  %-24s %8s %8s %8s %8s %8s   %s\n", "", "warm", "min", "cold", "min", "ratio",
           "goal");
    for (size_t i = 0; i < sizeof batch_programs / sizeof batch_programs[0]; i++) {
        const char *code = batch_programs[i].code ? batch_programs[i].code
                                                  : programs[PROGRAM_PANDAS].code;
        int wn = batch_warm * batch_programs[i].warm_n, cn = batch_cold * batch_programs[i].cold_n;
        double warm[BATCH_ROUNDS], cold[BATCH_ROUNDS];
        int nw = 0, nc = 0, started_cold = 0;
        for (int r = 0; r < BATCH_ROUNDS; r++) {
            int w, c;
            double x;
            /* Alternate which way goes first: a busy spell lands on both alike. */
            for (int k = 0; k < 2; k++) {
                if ((k == 0) == (r % 2 == 0)) {
                    if ((x = sustained(calc_route, code, batch_programs[i].preload, wn, 1, &w)) > 0) {
                        warm[nw++] = x;
                        started_cold += wn - w;
                    }
                } else if ((x = sustained(calc_route, code, NULL, cn, 0, &c)) > 0) {
                    cold[nc++] = x;
                }
            }
        }
        if (!nw || !nc) {
            printf("  %-24s n/a (a batch failed)\n", batch_programs[i].name);
            continue;
        }
        qsort(warm, (size_t)nw, sizeof(double), cmp_double);
        qsort(cold, (size_t)nc, sizeof(double), cmp_double);
        double wm = pct(warm, nw, 0.5), cm = pct(cold, nc, 0.5);
        printf("  %-24s %8.1f %8.1f %8.1f %8.1f %7.1fx   >= %.0fx: %s  (%d and %d requests a "
               "round; warm requests that started cold: %d)\n",
               batch_programs[i].name, wm, warm[0], cm, cold[0], wm / cm,
               batch_programs[i].goal, met(wm >= batch_programs[i].goal * cm), wn, cn,
               started_cold);
    }
}

static const char *met(int yes) { return yes ? "met" : "NOT met"; }

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 200;
    int lib_rounds = argc > 2 ? atoi(argv[2]) : 30;
    int batch_warm = argc > 3 ? atoi(argv[3]) : 100;
    int batch_cold = argc > 4 ? atoi(argv[4]) : 10;
    const char *bwrap = argc > 5 && argv[5][0] ? argv[5] : "/usr/bin/bwrap";
    char calc_route[4096], why[256];
    int have_bwrap = access(bwrap, X_OK) == 0;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    static double wall[N_PROGRAMS][N_WAYS][MAX_SAMPLES], cpu[N_PROGRAMS][N_WAYS][MAX_SAMPLES];
    static double inside[N_PROGRAMS][MAX_SAMPLES];   /* warm: the sandbox's wall_s */
    static double inside_cpu[N_PROGRAMS][MAX_SAMPLES];   /* warm: its cpu_s */
    int count[N_PROGRAMS][N_WAYS] = { { 0 } }, cold_warm[N_PROGRAMS] = { 0 };
    cr_engine *eng[N_PROGRAMS] = { 0 };
    int via_engine[N_PROGRAMS];
    int warm_only = argc > 7 && !strcmp(argv[7], "warm");

    if (rounds < 1 || rounds > MAX_SAMPLES) rounds = 200;
    if (lib_rounds < 1 || lib_rounds > MAX_SAMPLES) lib_rounds = 30;
    if (batch_warm < 1) batch_warm = 100;
    if (batch_cold < 1) batch_cold = 10;
    if (cores < 1) cores = 1;
    if (argc > 6) snprintf(calc_route, sizeof calc_route, "%s", argv[6]);
    else {
        /* build/bench/bench_sandbox -> build/calc-route */
        const char *slash = strrchr(argv[0], '/');
        snprintf(calc_route, sizeof calc_route, "%.*s%scalc-route",
                 slash ? (int)(slash - argv[0]) : 0, argv[0], slash ? "/../" : "../");
    }
    if (!sandbox_tier_available(CR_TIER_NS, why, sizeof why)) {
        printf("ns tier unavailable: %s\n", why);
        return 0;
    }
    if (argc > 7 && !strcmp(argv[7], "batch")) {
        batch_section(calc_route, batch_warm, batch_cold);
        return 0;
    }
    for (size_t s = 0; s < N_PROGRAMS; s++) {
        if (!(eng[s] = open_pool_engine(1, programs[s].preload, programs[s].warmup)) ||
            !eng[s]->pool) {
            printf("warm pool unavailable\n");
            for (size_t k = 0; k <= s; k++) cr_engine_close(eng[k]);
            return 0;
        }
        via_engine[s] = engine_route(eng[s], programs[s].code) == CR_ROUTE_NS;
    }
    /* One warm-up of each, so page-cache misses do not land on whoever goes first. */
    for (size_t s = 0; s < N_PROGRAMS; s++) {
        int w;
        double in, inc;
        if (!warm_only) {
            run_bare(programs[s].code, 0);
            if (!programs[s].library) run_bare(programs[s].code, 1);
            if (have_bwrap) run_bwrap(bwrap, programs[s].code);
            run_job(eng[s], NULL, programs[s].code, &w, &in, &inc);
        }
        sandbox_pool_wait_ready(eng[s]->pool, 1, READY_S);
        if (via_engine[s]) run_request(eng[s], programs[s].code, &w, &in, &inc);
        else run_job(eng[s], eng[s]->pool, programs[s].code, &w, &in, &inc);
        sandbox_pool_wait_ready(eng[s]->pool, 1, READY_S);
    }
    for (int r = 0; r < rounds || r < lib_rounds; r++)
        for (size_t s = 0; s < N_PROGRAMS; s++) {
            if (r >= (programs[s].library ? lib_rounds : rounds)) continue;
            for (int i = 0; i < N_WAYS; i++) {
                /* Rotate the order each round: no way always runs right after another. */
                int way = (i + r) % N_WAYS, warm = 0, ok;
                double t0, c0, t1, c1, in = 0, inc = 0;
                if (way == WAY_BARE_S && programs[s].library) continue;
                if (way == WAY_BWRAP && !have_bwrap) continue;
                if (warm_only && way != WAY_WARM) continue;
                t0 = now();
                c0 = cpu_now();
                ok = way == WAY_BARE ? run_bare(programs[s].code, 0)
                   : way == WAY_BARE_S ? run_bare(programs[s].code, 1)
                   : way == WAY_BWRAP ? run_bwrap(bwrap, programs[s].code)
                   : way == WAY_NS ? run_job(eng[s], NULL, programs[s].code, &warm, &in, &inc)
                   : via_engine[s] ? run_request(eng[s], programs[s].code, &warm, &in, &inc)
                                   : run_job(eng[s], eng[s]->pool, programs[s].code, &warm, &in,
                                             &inc);
                t1 = now();
                c1 = cpu_now();
                if (way == WAY_WARM) {
                    /* The refill's imports run now, on no one's clock. */
                    sandbox_pool_wait_ready(eng[s]->pool, 1, READY_S);
                    cold_warm[s] += !warm;
                }
                if (ok < 0) continue;
                if (way == WAY_WARM) {
                    inside[s][count[s][way]] = in;
                    inside_cpu[s][count[s][way]] = inc;
                }
                wall[s][way][count[s][way]] = t1 - t0;
                cpu[s][way][count[s][way]++] = c1 - c0;
            }
        }

    printf("== sandboxed code, request -> result: %d interleaved rounds of print(1), %d of each "
           "library program; ms\n", rounds, lib_rounds);
    printf("   (warm pool: the engine's, 1 worker, refilled before the next timing; cpu: this "
           "process and its reaped descendants)\n");
    for (size_t s = 0; s < N_PROGRAMS; s++) {
        double p50[N_WAYS], p99[N_WAYS], c50[N_WAYS];
        for (int w = 0; w < N_WAYS; w++) {
            qsort(wall[s][w], (size_t)count[s][w], sizeof(double), cmp_double);
            qsort(cpu[s][w], (size_t)count[s][w], sizeof(double), cmp_double);
            p50[w] = pct(wall[s][w], count[s][w], 0.5);
            p99[w] = pct(wall[s][w], count[s][w], 0.99);
            c50[w] = pct(cpu[s][w], count[s][w], 0.5);
        }
        printf("%s  [warm: %s, preload \"%s\"%s]\n", programs[s].name,
               via_engine[s] ? "cr_run through the engine"
                             : "the engine answers it in-process, so its job goes to the "
                               "engine's pool directly",
               programs[s].preload, programs[s].warmup ? ", a warm-up of the library" : "");
        printf("  %-20s %8s %8s %10s %8s %9s\n", "", "p50", "p99", "p50-bare", "x bare",
               "cpu p50");
        for (int w = 0; w < N_WAYS; w++) {
            if (w == WAY_BARE_S && programs[s].library) continue;
            if (warm_only && w != WAY_WARM) continue;
            if (w == WAY_BWRAP && !have_bwrap) {
                printf("  %-20s skipped: no executable %s\n", way_names[w], bwrap);
                continue;
            }
            if (!count[s][w]) { printf("  %-20s n/a (every run failed)\n", way_names[w]); continue; }
            if (warm_only)
                printf("  %-20s %8.2f %8.2f %10s %8s", way_names[w], p50[w] * 1e3, p99[w] * 1e3,
                       "", "");
            else
                printf("  %-20s %8.2f %8.2f %+10.2f %8.3f", way_names[w], p50[w] * 1e3,
                       p99[w] * 1e3, (p50[w] - p50[WAY_BARE]) * 1e3, p50[w] / p50[WAY_BARE]);
            /* bubblewrap's monitor exits without reaping the sandboxed process, so the kernel
             * never adds that time to ours; a warm worker's start-up CPU (its imports) is
             * reaped with the request that used it. Neither is the request's own cost. */
            if (w == WAY_BWRAP || w == WAY_WARM) printf(" %9s", "n/a");
            else printf(" %9.2f", c50[w] * 1e3);
            printf("  n=%d", count[s][w]);
            if (w == WAY_WARM) printf(", started cold %d", cold_warm[s]);
            printf("\n");
            if (w == WAY_WARM) {
                qsort(inside[s], (size_t)count[s][w], sizeof(double), cmp_double);
                qsort(inside_cpu[s], (size_t)count[s][w], sizeof(double), cmp_double);
                printf("    %-18s %8.2f %8.2f %10s %8s %9.2f  (the outcome's wall_s and "
                       "cpu_s: handoff to result in the sandbox; the rest: the host%s)\n",
                       "of which sandbox", pct(inside[s], count[s][w], 0.5) * 1e3,
                       pct(inside[s], count[s][w], 0.99) * 1e3, "", "",
                       pct(inside_cpu[s], count[s][w], 0.5) * 1e3,
                       via_engine[s] ? ", the engine" : "");
            }
        }
        if (s == 0 && count[s][WAY_BWRAP] && count[s][WAY_NS] && count[s][WAY_BARE_S])
            printf("  cold ns overhead / bwrap overhead: %.2f over python3 -I, %.2f over the "
                   "same interpreter flags ((ns - python3 -I -S) / (bwrap - python3 -I))\n",
                   (p50[WAY_NS] - p50[WAY_BARE]) / (p50[WAY_BWRAP] - p50[WAY_BARE]),
                   (p50[WAY_NS] - p50[WAY_BARE_S]) / (p50[WAY_BWRAP] - p50[WAY_BARE]));
        /* Wall time on a shared machine is mostly the other work's; the sandbox's CPU (sorted
         * above) says what a run itself costs. */
        if (count[s][WAY_WARM] && s == 0)
            printf("  goal: warm p50 <= 1 ms: %s (%.2f); warm p99 <= 5 ms: %s (%.2f); the "
                   "sandbox's CPU p50 %.2f\n", met(p50[WAY_WARM] <= 1e-3), p50[WAY_WARM] * 1e3,
                   met(p99[WAY_WARM] <= 5e-3), p99[WAY_WARM] * 1e3,
                   pct(inside_cpu[s], count[s][WAY_WARM], 0.5) * 1e3);
        if (count[s][WAY_WARM] && s == PROGRAM_PANDAS)
            printf("  goal: warm p50 <= 10 ms: %s (%.2f); the sandbox's CPU p50 %.2f\n",
                   met(p50[WAY_WARM] <= 10e-3), p50[WAY_WARM] * 1e3,
                   pct(inside_cpu[s], count[s][WAY_WARM], 0.5) * 1e3);
    }
    for (size_t s = 0; s < N_PROGRAMS; s++) cr_engine_close(eng[s]);
    if (warm_only) return 0;

    batch_section(calc_route, batch_warm, batch_cold);

    printf("\n== idle memory of one ready worker (its process tree) beside an idle bare "
           "interpreter\n");
    pool_idle_memory("", "warm worker, no preload");
    bare_idle_memory("", "python3 -I, idle");
    pool_idle_memory(programs[PROGRAM_PANDAS].preload, "warm worker, preload numpy,pandas");
    bare_idle_memory("numpy, pandas", "python3 -I, idle after import numpy, pandas");
    return 0;
}
