/* tests/test_pool.c: the ns tier's warm pool (sandbox/pool.c): a warm worker gives what a
 * cold start gives, takes one job and is gone, is replaced when used or dead, and the pool
 * leaves no process, cgroup or mount behind when it closes. The attack suite runs on warm
 * workers too (tests/test_sandbox_attacks.c). */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>

#include "testlib.h"
#include "test_sandbox_util.h"

#define READY_S 60.0      /* a worker's start on a loaded machine, at most */

static sandbox_pool *open_pool(unsigned size, const char *preload, int refill)
{
    sandbox_pool_config cfg = { .size = size, .preload = preload, .refill = refill };
    sandbox_pool *p = NULL;
    cr_error err = { 0 };
    small_limits(&cfg.limits);
    if (sandbox_pool_open(&cfg, &p, &err) != CR_OK) {
        fprintf(stderr, "sandbox_pool_open: %s\n", err.message);
        return NULL;
    }
    return p;
}

/* Runs code on the pool with the small limits, as a lean job (sandbox_job.lean) or not. */
static cr_code pool_run_as(sandbox_pool *p, const char *code, const char *globals, int lean,
                           sandbox_outcome *oc)
{
    sandbox_job job;
    cr_error err = { 0 };
    cr_code rc;
    sandbox_job_init(&job);
    job.tier = CR_TIER_NS;
    job.code = code;
    job.code_len = strlen(code);
    job.globals_json = globals;
    job.lean = lean;
    small_limits(&job.limits);
    rc = sandbox_pool_run(p, &job, oc, &err);
    if (rc != CR_OK) fprintf(stderr, "sandbox_pool_run: %s\n", err.message);
    return rc;
}

static cr_code pool_run(sandbox_pool *p, const char *code, const char *globals,
                        sandbox_outcome *oc)
{
    return pool_run_as(p, code, globals, 0, oc);
}

static const char *text(const char *s) { return s ? s : "(none)"; }

/* The same programs cold and warm: the same stdout, stderr, exit, value and exception. */
static void test_warm_same_as_cold(void)
{
    static const struct { const char *code, *globals; } progs[] = {
        { "print(1)\n", NULL },
        { "x = 6 * 7\nprint('x', x)\n", NULL },
        { "def solution():\n    return 2 ** 100\n", NULL },
        { "rate * 100\n", "{\"rate\": 0.25}" },
        { "import sys\nprint('err', file=sys.stderr)\nresult = 'done'\n", NULL },
        /* Output a warm run's parent leaves in the pipes for its first milliseconds: near
         * their size on both streams, and more than the output cap. */
        { "import sys\nsys.stderr.write('e' * 60000)\nprint('o' * 60000)\n", NULL },
        { "print('x' * 100000)\nprint('never')\n", NULL },
        { "1 / 0\n", NULL },
        { "def f(:\n", NULL },
        { "x = 1 is 1\nprint(x)\n", NULL },      /* a SyntaxWarning, shown once */
        { "import sys\nsys.exit(3)\n", NULL },
        { "import os\nos.kill(os.getpid(), 9)\n", NULL },
        { "import numpy_financial as npf\nans = round(npf.npv(0.1, [-100, 60, 60]), 6)\n", NULL },
        { "import os\nprint(os.getpid(), os.getppid(), os.getcwd(), sorted(os.listdir('/tmp')))\n", NULL },
        /* The sandbox a worker forked by the zygote makes for itself is the cold one: the
         * same privileges, ids, limits, devices and mounts (the user namespace's map is
         * shown relative to its parent's, which differs, and its filter is the tier's on
         * top of the zygote's), the same scheduling (the pool's threads' SCHED_BATCH is
         * theirs alone). */
        { "import os, resource, socket\n"
          "def status(*keys):\n"
          "    st = dict(l.split(':\\t') for l in open('/proc/self/status').read().splitlines() if ':\\t' in l)\n"
          "    return [st[k] for k in keys]\n"
          "print(status('CapInh', 'CapPrm', 'CapEff', 'CapBnd', 'CapAmb', 'NoNewPrivs', 'Seccomp', 'NSpid'))\n"
          "print(socket.gethostname(), os.getuid(), os.getgid(), os.getgroups(), os.getsid(0), os.getpgid(0))\n"
          "print(os.sched_getscheduler(0), os.getpriority(os.PRIO_PROCESS, 0))\n"
          "print(sorted(os.listdir('/dev')), sorted({l.split()[1] for l in open('/proc/self/mounts')}))\n"
          "print([resource.getrlimit(getattr(resource, 'RLIMIT_' + n)) for n in\n"
          "       ('CPU', 'NPROC', 'FSIZE', 'DATA', 'NOFILE', 'CORE', 'MSGQUEUE', 'SIGPENDING', 'MEMLOCK')])\n"
          "print(sorted(os.listdir('/proc/self/fd')), sorted(p for p in os.listdir('/proc') if p.isdigit()))\n"
          "print([l.split()[3] for l in open('/proc/net/dev').read().splitlines()[2:]])\n", NULL },
        /* A module the zygote imported is served to the code's import with what a cold
         * import leaves in sys.modules (test_stashed_imports). */
        { "import sys\nbefore = set(sys.modules)\nimport os, json, decimal, collections.abc\n"
          "import os.path\nprint(sorted(set(sys.modules) - before), len(sys.meta_path))\n", NULL },
        /* Nothing of the warm child's rehearsal shows. */
        { "import sys, builtins\nprint(sorted(globals()), 'math' in sys.modules,\n"
          "      sorted(k for k in vars(builtins) if k.startswith('__calcroute')))\nrows = 1\n", NULL },
    };
    sandbox_pool *p = open_pool(2, "", 1);
    if (!p) { CHECK(!"pool"); return; }
    for (size_t i = 0; i < sizeof progs / sizeof progs[0]; i++) {
        sandbox_outcome cold, warm;
        CHECK(sandbox_pool_wait_ready(p, 1, READY_S));
        if (run_ns(progs[i].code, NULL, NULL, NULL, progs[i].globals, &cold) != CR_OK) {
            CHECK(!"cold");
            continue;
        }
        if (pool_run(p, progs[i].code, progs[i].globals, &warm) != CR_OK) {
            CHECK(!"warm");
            sandbox_outcome_free(&cold);
            continue;
        }
        CHECK_INT(cold.warm, 0);
        CHECK_INT(warm.warm, 1);
        CHECK_STR(warm.start_note, "");
        CHECK_STR(out_text(&warm), out_text(&cold));
        CHECK_STR(text(warm.stderr_buf.p), text(cold.stderr_buf.p));
        CHECK_INT(warm.exited, cold.exited);
        CHECK_INT(warm.exit_code, cold.exit_code);
        CHECK_INT(warm.term_signal, cold.term_signal);
        CHECK_INT(warm.limit, cold.limit);
        CHECK_INT(warm.has_value, cold.has_value);
        CHECK_STR(text(warm.value_repr), text(cold.value_repr));
        CHECK_STR(text(warm.value_from), text(cold.value_from));
        CHECK_STR(text(warm.error_type), text(cold.error_type));
        CHECK_INT(warm.error_line, cold.error_line);
        CHECK_INT(warm.error_col, cold.error_col);
        sandbox_outcome_free(&cold);
        sandbox_outcome_free(&warm);
    }
    sandbox_pool_close(p);
}

/* The modules the zygote imported for itself and beside (ZYGOTE_IMPORTS in the runner) come
 * to a warm worker's import made already: none of their code runs again in the code's
 * process (it cost an `import os` 2 ms), where a cold run executes each. A module a seed
 * applies to (random) is imported afresh, and seeded, in both. */
static void test_stashed_imports(void)
{
    static const char code[] =
        "import sys\n"
        "ran = set()\n"
        "def tracer(frame, event, arg):\n"
        "    if event == 'call' and frame.f_code.co_name == '<module>':\n"
        "        ran.add(frame.f_globals.get('__name__'))\n"
        "sys.settrace(tracer)\n"
        "import os, json, decimal, re\n"
        "sys.settrace(None)\n"
        "print(sorted(ran & {'os', 'json', 'decimal', 're', 'stat', 'posixpath'}))\n"
        "import random\n"
        "print(random.random())\n";
    sandbox_pool *p = open_pool(1, "", 1);
    sandbox_outcome cold, warm;
    if (!p) { CHECK(!"pool"); return; }
    CHECK(sandbox_pool_wait_ready(p, 1, READY_S));
    if (run_ns(code, NULL, NULL, NULL, NULL, &cold) != CR_OK) { CHECK(!"cold"); goto out; }
    if (pool_run(p, code, NULL, &warm) != CR_OK) {
        CHECK(!"warm");
        sandbox_outcome_free(&cold);
        goto out;
    }
    CHECK_INT(warm.warm, 1);
    CHECK(strncmp(out_text(&cold), "['decimal', 'json', 'os', 'posixpath', 're', 'stat']\n", 53) == 0);
    CHECK(strncmp(out_text(&warm), "[]\n", 3) == 0);
    /* The same seed, the same draw: random was imported, and seeded, in both. */
    CHECK(strlen(out_text(&cold)) > 53);
    CHECK_STR(out_text(&warm) + 3, out_text(&cold) + 53);
    sandbox_outcome_free(&cold);
    sandbox_outcome_free(&warm);
out:
    sandbox_pool_close(p);
}

/* The packages a run reports (its "imports" record), warm as cold: a worker's report is made
 * before its job (by the zygote) and taken as it is at the job's end when the code imported
 * nothing more (packages_settled() in the runner), so each way of importing more must show:
 * an import, a module put into sys.modules by hand. */
static void test_imports_report(void)
{
    static const char *const progs[] = {
        "import pandas\nprint(1)\n",
        "import pandas, scipy.optimize\nprint(1)\n",
        "import sys, pandas\nsys.modules['fakepkg_x'] = pandas\nprint(1)\n",
    };
    sandbox_pool *p = open_pool(1, "numpy,pandas", 1);
    if (!p) { CHECK(!"pool"); return; }
    for (size_t i = 0; i < sizeof progs / sizeof progs[0]; i++) {
        sandbox_outcome cold, warm;
        CHECK(sandbox_pool_wait_ready(p, 1, READY_S));
        if (run_ns(progs[i], NULL, NULL, NULL, NULL, &cold) != CR_OK) { CHECK(!"cold"); continue; }
        if (pool_run(p, progs[i], NULL, &warm) != CR_OK) {
            CHECK(!"warm");
            sandbox_outcome_free(&cold);
            continue;
        }
        CHECK_INT(warm.warm, 1);
        CHECK(cold.imports && strstr(cold.imports, "pandas "));
        CHECK_STR(text(warm.imports), text(cold.imports));
        if (i == 1) CHECK(cold.imports && strstr(cold.imports, "scipy "));
        if (i == 2) CHECK(cold.imports && strstr(cold.imports, "fakepkg_x "));
        sandbox_outcome_free(&cold);
        sandbox_outcome_free(&warm);
    }
    sandbox_pool_close(p);
}

/* One job per worker: what a job left (a file in /tmp, a module global, a process) is not
 * there for the next, which is pid 2 again under a fresh pid 1. */
static void test_one_job_per_worker(void)
{
    sandbox_pool *p = open_pool(1, "json", 1);
    sandbox_outcome oc;
    if (!p) { CHECK(!"pool"); return; }
    for (int round = 0; round < 3; round++) {
        CHECK(sandbox_pool_wait_ready(p, 1, READY_S));
        if (pool_run(p, "import os, sys, json, builtins, subprocess\n"
                        "print(os.path.exists('/tmp/left'), hasattr(builtins, 'left'),\n"
                        "      hasattr(json, 'left'), os.getpid(), sorted(d for d in os.listdir('/proc') if d.isdigit()))\n"
                        "open('/tmp/left', 'w').write('x')\n"
                        "builtins.left = json.left = 1\n"
                        "subprocess.Popen(['/usr/bin/sleep', '30'])\n",
                     NULL, &oc) != CR_OK) { CHECK(!"run"); continue; }
        CHECK_INT(oc.warm, 1);
        CHECK_STR(out_text(&oc), "False False False 2 ['1', '2']\n");
        sandbox_outcome_free(&oc);
    }
    sandbox_pool_close(p);
}

/* The preload list is imported before the job; a module that does not exist is the job's
 * own ImportError, as it would be cold. */
static void test_preload(void)
{
    sandbox_pool *p = open_pool(1, "json,decimal,no_such_module_x", 1);
    sandbox_outcome oc;
    if (!p) { CHECK(!"pool"); return; }
    CHECK(sandbox_pool_wait_ready(p, 1, READY_S));
    if (pool_run(p, "import sys\nprint('json' in sys.modules, 'decimal' in sys.modules)\n"
                    "import no_such_module_x\n", NULL, &oc) == CR_OK) {
        CHECK_INT(oc.warm, 1);
        CHECK_STR(out_text(&oc), "True True\n");
        CHECK_STR(text(oc.error_type), "ModuleNotFoundError");
        sandbox_outcome_free(&oc);
    } else CHECK(!"run");
    sandbox_pool_close(p);
}

/* With a preload list the pool keeps a second, lean zygote without it: a lean job's worker
 * comes from it once it serves (the preloaded module is not in sys.modules, as cold), and a
 * job that is not lean then gets a worker with the list, warm, the lean one that held the
 * pool's only place ended for it. Lean jobs until one gets a lean worker (the first take the
 * worker made before the lean zygote served), up to a minute. */
static void test_lean(void)
{
    const char *code = "import sys\nprint('wave' in sys.modules)\n";
    sandbox_pool *p = open_pool(1, "wave", 1);
    sandbox_outcome oc;
    struct timespec t0, t;
    int lean = 0;
    if (!p) { CHECK(!"pool"); return; }
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do {
        if (pool_run_as(p, code, NULL, 1, &oc) != CR_OK) { CHECK(!"run"); break; }
        CHECK_INT(oc.warm, 1);
        lean = strcmp(out_text(&oc), "False\n") == 0;
        if (!lean) CHECK_STR(out_text(&oc), "True\n");
        sandbox_outcome_free(&oc);
        clock_gettime(CLOCK_MONOTONIC, &t);
    } while (!lean && t.tv_sec - t0.tv_sec < SECS(60));
    CHECK(lean);
    /* Its replacement is lean too: the pool's one place holds it once ready. */
    CHECK(sandbox_pool_wait_ready(p, 1, READY_S));
    if (pool_run(p, code, NULL, &oc) == CR_OK) {
        CHECK_INT(oc.warm, 1);
        CHECK_STR(out_text(&oc), "True\n");
        sandbox_outcome_free(&oc);
    } else CHECK(!"run");
    sandbox_pool_close(p);
}

/* Refill on: every job of a sequence gets a warm worker. Off: the first only, then cold,
 * saying why; the pool is warm for readiness while its one worker is unused, then not. */
static void test_refill(void)
{
    sandbox_outcome oc;
    sandbox_pool *p = open_pool(1, "", 1);
    if (!p) { CHECK(!"pool"); return; }
    for (int i = 0; i < 3; i++) {
        CHECK(sandbox_pool_wait_ready(p, 1, READY_S));
        if (pool_run(p, "print(7)\n", NULL, &oc) != CR_OK) { CHECK(!"run"); continue; }
        CHECK_INT(oc.warm, 1);
        CHECK_STR(out_text(&oc), "7\n");
        sandbox_outcome_free(&oc);
    }
    sandbox_pool_close(p);

    if (!(p = open_pool(1, "", 0))) { CHECK(!"pool"); return; }
    CHECK(sandbox_pool_wait_ready(p, 1, READY_S));
    sandbox_pool_health h;
    sandbox_pool_state(p, &h);
    CHECK_INT(h.warm, 1);
    CHECK_STR(h.why, "");
    for (int i = 0; i < 2; i++) {
        if (pool_run(p, "print(8)\n", NULL, &oc) != CR_OK) { CHECK(!"run"); continue; }
        CHECK_INT(oc.warm, i == 0);
        CHECK_STR(oc.start_note, i == 0 ? "" : "cold start: no warm worker ready");
        CHECK_STR(out_text(&oc), "8\n");
        sandbox_outcome_free(&oc);
    }
    sandbox_pool_state(p, &h);
    CHECK_INT(h.warm, 0);
    CHECK_STR(h.why, "every warm worker used (refill off)");
    /* Nothing left to wait for: at once, not after the whole wait. */
    CHECK(!sandbox_pool_wait_ready(p, 1, 3600));
    CHECK_INT(sandbox_pool_ready(p, NULL, 0), 0);
    sandbox_pool_close(p);
}

/* A worker killed before its job is replaced; a job that finds it dead runs all the same. */
static void test_worker_killed(void)
{
    sandbox_pool *p = open_pool(1, "", 1);
    sandbox_outcome oc;
    pid_t pid = 0, again = 0;
    if (!p) { CHECK(!"pool"); return; }
    CHECK(sandbox_pool_wait_ready(p, 1, READY_S));
    CHECK_INT(sandbox_pool_ready(p, &pid, 1), 1);
    CHECK(pid > 0 && kill(pid, SIGKILL) == 0);
    /* At once: the job either starts cold or finds the replacement. */
    if (pool_run(p, "print(9)\n", NULL, &oc) == CR_OK) {
        CHECK_STR(out_text(&oc), "9\n");
        CHECK(oc.exited && oc.exit_code == 0);
        sandbox_outcome_free(&oc);
    } else CHECK(!"run");
    CHECK(sandbox_pool_wait_ready(p, 1, READY_S));
    CHECK_INT(sandbox_pool_ready(p, &again, 1), 1);
    CHECK(again != pid);
    if (pool_run(p, "print(10)\n", NULL, &oc) == CR_OK) {
        CHECK_INT(oc.warm, 1);
        CHECK_STR(out_text(&oc), "10\n");
        sandbox_outcome_free(&oc);
    } else CHECK(!"run");
    sandbox_pool_close(p);
}

static int cgroup_left(void);

static pid_t parent_of(pid_t pid)
{
    char path[64], line[256];
    pid_t ppid = -1;
    FILE *f;
    snprintf(path, sizeof path, "/proc/%ld/status", (long)pid);
    if (!(f = fopen(path, "r"))) return -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "PPid: %d", &ppid) == 1) break;
    fclose(f);
    return ppid;
}

/* /proc/PID/cmdline, each NUL shown as '|' (no argument has one). */
static const char *cmdline_of(pid_t pid, char *buf, size_t size)
{
    char path[64];
    size_t n = 0;
    FILE *f;
    snprintf(path, sizeof path, "/proc/%ld/cmdline", (long)pid);
    if ((f = fopen(path, "r"))) {
        n = fread(buf, 1, size - 1, f);
        fclose(f);
    }
    for (size_t i = 0; i < n; i++)
        if (!buf[i]) buf[i] = '|';
    buf[n] = 0;
    return buf;
}

/* Workers are cloned by the zygote, our child (its pid namespace's init, so a ready worker
 * is its child): one that dies takes its workers with it, and the pool starts another; with
 * no_zygote, or an allowed directory under /tmp, each worker is our child. Every one of them
 * reads /data and answers. */
static void test_zygote(void)
{
    sandbox_pool_config cfg = { .size = 2, .preload = "json", .refill = 1 };
    sandbox_pool *p = NULL;
    cr_error err = { 0 };
    sandbox_outcome oc;
    pid_t pids[2] = { 0, 0 }, zygote = -1;
    char *data = make_dir("zygote"), path[512], venv[] = "/tmp/cr-sbx-venv-XXXXXX", cmd[512];
    FILE *f;
    if (!data || !mkdtemp(venv)) { CHECK(!"mkdtemp"); free(data); return; }
    snprintf(path, sizeof path, "%s/rates.csv", data);
    if ((f = fopen(path, "w"))) { fputs("0.05\n", f); fclose(f); }
    small_limits(&cfg.limits);
    cfg.data_dir = data;
    for (int mode = 0; mode < 3; mode++) {
        sandbox_job job;
        cfg.no_zygote = mode == 1;
        cfg.allow_dir = mode == 2 ? venv : NULL;
        if (sandbox_pool_open(&cfg, &p, &err) != CR_OK) { CHECK(!"pool"); continue; }
        CHECK(sandbox_pool_wait_ready(p, 2, READY_S));
        CHECK_INT(sandbox_pool_ready(p, pids, 2), 2);
        /* What ps shows of a worker: the bootstrap, the descriptors, the preload list, and
         * "zygote" for one forked by the zygote (it is the zygote's line). */
        CHECK_STR(cmdline_of(pids[0], cmd, sizeof cmd),
                  mode == 0 ? "/usr/bin/python3|-s|-S|-c|import posix;r=posix.pread(5,posix.fstat(5)"
                              ".st_size,0);posix.close(5);exec(r)|3|4|json|zygote|"
                            : "/usr/bin/python3|-s|-S|-c|import posix;r=posix.pread(5,posix.fstat(5)"
                              ".st_size,0);posix.close(5);exec(r)|3|4|json|");
        if (mode == 0) {
            /* A worker's runner, the zygote's child, cloned into its namespaces (the zygote
             * says how it ended). */
            zygote = parent_of(pids[0]);
            CHECK_INT(parent_of(pids[1]), zygote);
            CHECK_INT(parent_of(zygote), getpid());
        } else {
            CHECK_INT(parent_of(pids[0]), getpid());
            CHECK_INT(parent_of(pids[1]), getpid());
        }
        sandbox_job_init(&job);
        job.tier = CR_TIER_NS;
        job.code = "print(open('/data/rates.csv').read().strip())\n";
        job.code_len = strlen(job.code);
        job.data_dir = data;
        job.allow_dir = cfg.allow_dir;
        small_limits(&job.limits);
        if (sandbox_pool_run(p, &job, &oc, &err) == CR_OK) {
            CHECK_INT(oc.warm, 1);
            CHECK_STR(out_text(&oc), "0.05\n");
            sandbox_outcome_free(&oc);
        } else CHECK(!"run");
        if (mode == 0) {
            /* Nothing of the zygote's memory is shared with a worker but copy-on-write (a
             * shared writable mapping would be a channel between workers). */
            job.code = "print([l for l in open('/proc/self/maps') if l.split()[1][1:4:2] == 'ws'])\n";
            job.code_len = strlen(job.code);
            if (sandbox_pool_run(p, &job, &oc, &err) == CR_OK) {
                CHECK_INT(oc.warm, 1);
                CHECK_STR(out_text(&oc), "[]\n");
                sandbox_outcome_free(&oc);
            } else CHECK(!"run");
            job.code = "print(open('/data/rates.csv').read().strip())\n";
            job.code_len = strlen(job.code);
            /* The zygote killed: its workers go with it, a job runs all the same, and the
             * pool clones from a new one. */
            CHECK(kill(zygote, SIGKILL) == 0);
            if (sandbox_pool_run(p, &job, &oc, &err) == CR_OK) {
                CHECK_STR(out_text(&oc), "0.05\n");
                sandbox_outcome_free(&oc);
            } else CHECK(!"run");
            CHECK(sandbox_pool_wait_ready(p, 2, READY_S));
            CHECK_INT(sandbox_pool_ready(p, pids, 2), 2);
            CHECK(parent_of(pids[0]) != zygote);
            CHECK_INT(parent_of(parent_of(pids[0])), getpid());
        }
        sandbox_pool_close(p);
        CHECK(!cgroup_left());
    }
    remove_tree(data);
    free(data);
    rmdir(venv);
}

/* The warm-up program runs where the workers are forked from: what it sets up, every worker
 * has; its output reaches no job; one that raises changes nothing; one too long is refused. */
static void test_warmup(void)
{
    sandbox_pool_config cfg = { .size = 1, .preload = "json", .refill = 1,
                                .warmup = "import json, sys\nprint('warm-up noise')\n"
                                          "sys.stderr.write('more noise')\n"
                                          "json.calcroute_warmed = 42\n" };
    sandbox_pool *p = NULL;
    cr_error err = { 0 };
    sandbox_outcome oc;
    char *big;
    small_limits(&cfg.limits);
    for (int round = 0; round < 2; round++) {
        if (sandbox_pool_open(&cfg, &p, &err) != CR_OK) { CHECK(!"pool"); return; }
        for (int job = 0; job < 2; job++) {
            CHECK(sandbox_pool_wait_ready(p, 1, READY_S));
            if (pool_run(p, "import json\nprint(getattr(json, 'calcroute_warmed', None))\n",
                         NULL, &oc) == CR_OK) {
                CHECK_INT(oc.warm, 1);
                CHECK_STR(out_text(&oc), round == 0 ? "42\n" : "None\n");
                CHECK_STR(text(oc.stderr_buf.p), "(none)");
                CHECK_INT(oc.exit_code, 0);
                sandbox_outcome_free(&oc);
            } else CHECK(!"run");
        }
        sandbox_pool_close(p);
        cfg.warmup = "import json\nraise ValueError('warm-up')\n";
    }
    /* A warm-up that leaves a thread running: the zygote cannot fork, and the pool's workers
     * start python themselves (our children), warm all the same. */
    cfg.warmup = "import threading, time\n"
                 "threading.Thread(target=time.sleep, args=(600,), daemon=True).start()\n";
    if (sandbox_pool_open(&cfg, &p, &err) == CR_OK) {
        pid_t pid = 0;
        CHECK(sandbox_pool_wait_ready(p, 1, READY_S));
        CHECK_INT(sandbox_pool_ready(p, &pid, 1), 1);
        CHECK_INT(parent_of(pid), getpid());
        if (pool_run(p, "print(3)\n", NULL, &oc) == CR_OK) {
            CHECK_INT(oc.warm, 1);
            CHECK_STR(out_text(&oc), "3\n");
            sandbox_outcome_free(&oc);
        } else CHECK(!"run");
        sandbox_pool_close(p);
    } else CHECK(!"pool");
    if (!(big = malloc(SANDBOX_WARMUP_MAX + 2))) { CHECK(!"malloc"); return; }
    memset(big, '#', SANDBOX_WARMUP_MAX + 1);
    big[SANDBOX_WARMUP_MAX + 1] = 0;
    cfg.warmup = big;
    CHECK_INT(sandbox_pool_open(&cfg, &p, &err), CR_EUSAGE);
    CHECK_STR(err.message, "warm pool: warm-up program over 65536 bytes");
    free(big);
}

/* A job whose limits or data directory are not the pool's starts cold and says which. */
static void test_key_mismatch(void)
{
    sandbox_pool *p = open_pool(1, "", 1);
    sandbox_job job;
    sandbox_outcome oc;
    cr_error err = { 0 };
    char *data = make_dir("pooldata");
    if (!p || !data) { CHECK(!"setup"); sandbox_pool_close(p); free(data); return; }
    CHECK(sandbox_pool_wait_ready(p, 1, READY_S));
    sandbox_job_init(&job);
    job.tier = CR_TIER_NS;
    job.code = "print(11)\n";
    job.code_len = strlen(job.code);
    small_limits(&job.limits);
    job.limits.memory_bytes *= 2;
    if (sandbox_pool_run(p, &job, &oc, &err) == CR_OK) {
        CHECK_INT(oc.warm, 0);
        CHECK_STR(oc.start_note, "cold start: no warm worker has the job's memory limit");
        CHECK_STR(out_text(&oc), "11\n");
        sandbox_outcome_free(&oc);
    } else CHECK(!"run");
    small_limits(&job.limits);
    job.data_dir = data;
    if (sandbox_pool_run(p, &job, &oc, &err) == CR_OK) {
        CHECK_INT(oc.warm, 0);
        CHECK_STR(oc.start_note, "cold start: no warm worker has the job's data directory");
        sandbox_outcome_free(&oc);
    } else CHECK(!"run");
    /* The wall clock is the job's own: a warm worker takes it. */
    job.data_dir = NULL;
    job.limits.wall_s = SECS(1);
    job.code = "while True: pass\n";
    job.code_len = strlen(job.code);
    if (sandbox_pool_run(p, &job, &oc, &err) == CR_OK) {
        char want[64];
        snprintf(want, sizeof want, "wall clock %.3f s", job.limits.wall_s);
        CHECK_INT(oc.warm, 1);
        CHECK_INT(oc.limit, SANDBOX_LIMIT_WALL);
        CHECK_STR(oc.limit_detail, want);
        sandbox_outcome_free(&oc);
    } else CHECK(!"run");
    /* A bad artifact directory is the caller's error before any worker is spent. */
    job.limits.wall_s = 0;
    small_limits(&job.limits);
    job.out_dir = "/nonexistent-calcroute-out";
    CHECK(sandbox_pool_wait_ready(p, 1, READY_S));
    CHECK_INT(sandbox_pool_run(p, &job, &oc, &err), CR_EUSAGE);
    CHECK_INT(sandbox_pool_ready(p, NULL, 0), 1);
    sandbox_pool_close(p);
    remove_tree(data);
    free(data);
}

/* Requests from several threads at once share the pool; each gets its own answer. */
#define THREADS 4
#define JOBS 3
static sandbox_pool *shared;
static int thread_bad[THREADS];

static void *thread_main(void *arg)
{
    int id = (int)(long)arg;
    for (int j = 0; j < JOBS; j++) {
        char code[64], want[32];
        sandbox_outcome oc;
        snprintf(code, sizeof code, "print(%d * 100 + %d)\n", id, j);
        snprintf(want, sizeof want, "%d\n", id * 100 + j);
        if (pool_run(shared, code, NULL, &oc) != CR_OK) { thread_bad[id]++; continue; }
        if (strcmp(out_text(&oc), want)) thread_bad[id]++;
        sandbox_outcome_free(&oc);
    }
    return NULL;
}

static void test_threads(void)
{
    pthread_t t[THREADS];
    if (!(shared = open_pool(2, "", 1))) { CHECK(!"pool"); return; }
    CHECK(sandbox_pool_wait_ready(shared, 2, READY_S));
    for (long i = 0; i < THREADS; i++) pthread_create(&t[i], NULL, thread_main, (void *)i);
    for (int i = 0; i < THREADS; i++) {
        pthread_join(t[i], NULL);
        CHECK_INT(thread_bad[i], 0);
    }
    sandbox_pool_close(shared);
}

/* 1 when a directory calcroute-PID-* of ours exists in a cgroup hierarchy. */
static int cgroup_left(void)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd,
             "find /sys/fs/cgroup -maxdepth 6 -type d -name 'calcroute-%ld-*' 2>/dev/null | grep -q .",
             (long)getpid());
    return system(cmd) == 0;
}

static int count_lines(const char *path)
{
    FILE *f = fopen(path, "r");
    int n = 0, c;
    if (!f) return -1;
    while ((c = fgetc(f)) != EOF) n += c == '\n';
    fclose(f);
    return n;
}

static int count_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    int n = 0;
    if (!d) return -1;
    while (readdir(d)) n++;
    closedir(d);
    return n;
}

/* Closing a full pool, and one whose workers are still starting, leaves nothing: no process,
 * cgroup, mount or descriptor (a run's cgroup keeps its figures' files open). */
static void test_close_leaves_nothing(void)
{
    int mounts = count_lines("/proc/self/mountinfo"), fds = count_fds();
    sandbox_pool *p = open_pool(3, "json", 1);
    if (!p) { CHECK(!"pool"); return; }
    CHECK(sandbox_pool_wait_ready(p, 3, READY_S));
    sandbox_pool_close(p);
    CHECK_INT(waitpid(-1, NULL, WNOHANG), -1);
    CHECK_INT(errno, ECHILD);
    CHECK(!cgroup_left());
    if ((p = open_pool(2, "json", 1))) sandbox_pool_close(p);   /* at once: still starting */
    else CHECK(!"pool");
    CHECK_INT(waitpid(-1, NULL, WNOHANG), -1);
    CHECK(!cgroup_left());
    /* At once after a run, which ended before its pid 1 did (the report whole, the streams
     * closed) and left a process behind: the used worker's thread may still be killing and
     * reaping them and removing its cgroup. */
    if ((p = open_pool(1, "", 0))) {
        sandbox_outcome oc;
        CHECK(sandbox_pool_wait_ready(p, 1, READY_S));
        if (pool_run(p, "import os, sys, time\nprint(7, flush=True)\nif os.fork() == 0:\n"
                        "    os.close(1)\n    os.close(2)\n    time.sleep(60)\n    os._exit(0)\n"
                        "sys.exit(3)\n", NULL, &oc) == CR_OK) {
            CHECK(oc.warm);
            CHECK_STR(oc.stdout_buf.p ? oc.stdout_buf.p : "", "7\n");
            CHECK_INT(oc.exited, 1);
            CHECK_INT(oc.exit_code, 3);
            CHECK(oc.wall_s < 5);
            sandbox_outcome_free(&oc);
        } else {
            CHECK(!"run");
        }
        sandbox_pool_close(p);
    } else {
        CHECK(!"pool");
    }
    CHECK_INT(waitpid(-1, NULL, WNOHANG), -1);
    CHECK(!cgroup_left());
    CHECK_INT(count_lines("/proc/self/mountinfo"), mounts);
    CHECK_INT(count_fds(), fds);
}

static void test_bad_config(void)
{
    sandbox_pool_config cfg = { .size = 0 };
    sandbox_pool *p = NULL;
    cr_error err = { 0 };
    CHECK_INT(sandbox_pool_open(&cfg, &p, &err), CR_EUSAGE);
    CHECK_STR(err.message, "warm pool: size 0: want 1 to 64");
    cfg.size = 1;
    cfg.preload = "numpy; import os";
    CHECK_INT(sandbox_pool_open(&cfg, &p, &err), CR_EUSAGE);
    CHECK_STR(err.message, "warm pool: preload 'numpy; import os': want module names separated by commas");
    CHECK(p == NULL);
}

int main(void)
{
    if (!sandbox_tier_available(CR_TIER_NS, ns_why, sizeof ns_why)) {
        SKIP("ns tier unavailable on this host: %s", ns_why);
        return TEST_SUMMARY();
    }
    test_bad_config();
    test_warm_same_as_cold();
    test_one_job_per_worker();
    test_preload();
    test_lean();
    test_stashed_imports();
    test_imports_report();
    test_refill();
    test_worker_killed();
    test_key_mismatch();
    test_threads();
    test_zygote();
    test_warmup();
    test_close_leaves_nothing();
    return TEST_SUMMARY();
}
