/* sandbox/pool.c: the warm pool of the ns tier, above the dispatch (a job it cannot serve warm
 * runs cold through sandbox_run()).
 *
 * A worker is an ns sandbox made before any code is known (ns_run_warm()): namespaces, fresh
 * tmpfs root, cgroup, seccomp, the runner started, the preload modules imported and the code's
 * process forked, blocked on its job. It takes one job and dies with it, so nothing of one
 * request is ever seen by another. Each worker lives on a thread of its own, because pid 1
 * dies with the thread that cloned it (PR_SET_PDEATHSIG); a manager thread, as long-lived
 * as the pool, starts workers and reaps their threads: those that died before a job, and
 * those whose request has its outcome already (a used worker's thread kills and reaps pid 1
 * and removes the cgroup after the handoff, off the request's path, and its replacement
 * starts after that). A request takes a ready worker whose key (interpreter, data directory,
 * every limit the sandbox bakes in) matches its job and makes the run on it from its own
 * thread (ns_warm_run(), the same code as a cold run's), while the worker's thread waits:
 * a hand-over between threads each way was a tenth of a print(1)'s time; without one it
 * starts cold.
 *
 * Workers are made by the pool's zygote (ns_warm.zygote), a warm runner of its own, started
 * first, that imported the preload list once and clones a worker on each request (as a fork
 * would, runner.py's clone_worker()); the worker enters namespaces of its own (user, mount with its own /tmp and /out, pid, net, ipc, uts,
 * cgroup) and the cgroup the worker's thread moved it into, loads the tier's filter and
 * becomes a warm runner there, its imports the zygote's pages, shared copy-on-write. Starting
 * one is then milliseconds of CPU where starting python and importing pandas was a third of
 * a second, which is what bounded the pool's sustained throughput. Where the zygote cannot
 * serve (it or its workers failed FAILURES_MAX times, or the allowed directory lies under
 * /tmp or /out, which each worker mounts afresh), workers start python themselves.
 *
 * With a preload list the pool keeps a second, lean zygote that imported none of it: most of
 * a worker's making is the kernel copying, faulting and freeing the zygote's address space
 * (twice: pid 1 and the code's process), and pandas makes that space five times larger. A
 * job whose imports are the standard library's alone (job->lean, the router's reading of
 * the code) takes a lean worker first, or any; another never takes a lean one. The next
 * worker made is of the kind of the job at the head of the queue, or of the last that came;
 * a job that is not lean, first in line while every place holds a lean worker and none with
 * the list is being made, ends one of them (make_room()).
 *
 * Lock order: the pool's mutex only; nothing blocks while holding it but condition waits. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sandbox/ns/ns.h"
#include "sandbox/sandbox.h"

#define FAILURES_MAX 3     /* workers in a row that fail to start: the pool stops trying */
#define WAIT_SLICE_S 0.05  /* a waiting request looks at its interrupt descriptor this often */

/* The zygotes: Z_FAT imported the preload list; Z_LEAN, kept only when there is one, imported
 * none of it, for jobs whose imports are the standard library's alone (job->lean). */
enum { Z_FAT, Z_LEAN, Z_KINDS };

/* W_RETIRING: its request has the outcome; its thread is still removing the cgroup. */
enum { W_STARTING, W_READY, W_TAKEN, W_RETIRING, W_ENDING, W_DEAD };

typedef struct worker {
    ns_warm warm;                 /* first: ns_run_warm() hands it back to worker_ready() */
    struct sandbox_pool *pool;
    pthread_t thread;
    int state;
    int wake[2];                  /* a byte on it: the job is set, or the pool closes */
    int pidfd;                    /* pid 1's, while ready */
    pid_t pid;
    const sandbox_job *job;       /* set by the request that takes it */
    atomic_int taken;             /* the same, for its thread to read without the lock */
    int finished;                 /* its run is over */
    int forked;                   /* made by a zygote */
    int kind;                     /* the zygote's (Z_FAT for one that started python) */
    int busy;                     /* counted in the pool's busy */
    int woken;                    /* the zygote: told to end */
    pthread_cond_t done;
    struct worker *next;
} worker;

/* A request waiting for a worker: the queue is first come, first served, and only its head
 * is woken when a worker becomes ready (the others sleep on their own condition). */
typedef struct waiter {
    pthread_cond_t cv;
    int lean;                     /* its job's */
    struct waiter *next;
} waiter;

struct sandbox_pool {
    pthread_mutex_t lock;
    pthread_cond_t changed;       /* a worker changed state, or the pool closes */
    pthread_t manager;
    sandbox_job key;              /* what every worker is made with (code unused) */
    char *interpreter, *data_dir, *allow_dir, *preload, *warmup;
    unsigned size, parallel;      /* workers kept; workers started at once */
    int refill, closing;
    unsigned spawned, failures;
    unsigned busy;                /* workers running a request: still counted as kept */
    cr_error last_error;          /* why the last worker failed to start */
    worker *workers;              /* all but those a request took */
    int use_zygote;               /* the configuration allows it */
    int kinds;                    /* zygotes kept: 2 with a preload list, else 1 */
    int want;                     /* the kind of the last job that came: the next worker's */
    unsigned zfailures[Z_KINDS];  /* each zygote's, and its workers' */
    worker *zygote[Z_KINDS];      /* their threads, while they have one */
    int zchan[Z_KINDS];           /* their channels while they are ready, else -1 */
    unsigned queue;               /* requests that may wait for a worker at once */
    unsigned waiting;             /* requests waiting now */
    waiter *head, *tail;          /* their queue */
    int warmed;                   /* `size` workers were ready at once, at least once */
    pthread_condattr_t clock;     /* CLOCK_MONOTONIC, for every condition of the pool */
};

/* `seconds` from now on the clock of the pool's condition. */
static struct timespec deadline(double seconds)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    t.tv_sec += (time_t)seconds;
    t.tv_nsec += (long)((seconds - floor(seconds)) * 1e9);
    if (t.tv_nsec >= 1000000000L) { t.tv_sec++; t.tv_nsec -= 1000000000L; }
    return t;
}

static void pool_lock(sandbox_pool *p) { pthread_mutex_lock(&p->lock); }
static void pool_unlock(sandbox_pool *p) { pthread_mutex_unlock(&p->lock); }

/* A worker changed state, or the pool closes: the manager and the request at the head of the
 * queue look again. Called with the lock held. */
static void changed(sandbox_pool *p)
{
    pthread_cond_broadcast(&p->changed);
    if (p->head) pthread_cond_signal(&p->head->cv);
}

/* Workers ready now (and the pids of up to max of them). Called with the lock held. */
static unsigned count_ready(const sandbox_pool *p, pid_t *pids, size_t max)
{
    unsigned n = 0;
    for (const worker *w = p->workers; w; w = w->next)
        if (w->state == W_READY) {
            if (pids && n < max) pids[n] = w->pid;
            n++;
        }
    return n;
}

/* Whether the pool can still make the worker a waiting request needs. */
static int can_make(const sandbox_pool *p)
{
    return !p->closing && p->failures < FAILURES_MAX && (p->refill || p->spawned < p->size);
}

/* Whether a request may still get a warm worker: one can be made, or, with refill off once
 * all `size` are made, one of them is unused yet (ready, or still starting). Called with the
 * lock held. */
static int has_warm(const sandbox_pool *p)
{
    if (can_make(p)) return 1;
    if (p->closing || p->failures >= FAILURES_MAX) return 0;
    for (const worker *w = p->workers; w; w = w->next)
        if (w->state == W_STARTING || w->state == W_READY) return 1;
    return 0;
}

static void wake(worker *w)
{
    while (write(w->wake[1], "w", 1) < 0 && errno == EINTR) {}
}

/* Called by ns_run_warm() on the worker's thread once the runner waits for its job: returns
 * once the request that took it has made its run (ns_warm_run()), or NULL when the worker
 * died idle or the pool closes. */
static const sandbox_job *worker_ready(ns_warm *nw, int pidfd, pid_t pid)
{
    worker *w = (worker *)nw;
    sandbox_pool *p = w->pool;
    const sandbox_job *job;
    struct pollfd f[2] = { { pidfd, POLLIN, 0 }, { w->wake[0], POLLIN, 0 } };
    pool_lock(p);
    if (p->closing) {
        w->state = W_ENDING;
        pool_unlock(p);
        return NULL;
    }
    w->pidfd = pidfd;
    w->pid = pid;
    w->state = W_READY;
    p->failures = 0;
    if (!p->warmed) p->warmed = count_ready(p, NULL, 0) >= p->size;
    changed(p);
    pool_unlock(p);
    /* From here this thread only waits, then tears the worker down: woken at a request's end,
     * it must not take the CPU from the request's thread, which has its answer to return. */
    setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 19);
    while (poll(f, 2, -1) < 0 && errno == EINTR) {}
    /* Taken: the request makes the run and writes a byte on the wake pipe once it is over.
     * Woken before that (pid 1's exit comes first), we wait for the byte, not on the pool's
     * lock, which the request needs at its end. */
    if (atomic_load(&w->taken)) {
        char c;
        while (read(w->wake[0], &c, 1) < 0 && errno == EINTR) {}
    }
    pool_lock(p);
    /* Taken: whatever woke us (the run's end, pid 1's exit), the run is the request's until
     * it says it is over. */
    while (w->job && !w->finished) pthread_cond_wait(&w->done, &p->lock);
    job = w->job;
    if (!job) w->state = W_ENDING;          /* died idle, or the pool closes */
    pool_unlock(p);
    return job;
}

/* Called by ns_run_warm() on the zygote's thread once it serves: it does until it dies or
 * the pool closes or gives it up. */
static const sandbox_job *zygote_ready(ns_warm *nw, int pidfd, pid_t pid)
{
    worker *z = (worker *)nw;
    sandbox_pool *p = z->pool;
    struct pollfd f[2] = { { pidfd, POLLIN, 0 }, { z->wake[0], POLLIN, 0 } };
    pool_lock(p);
    if (!p->closing) {
        z->pidfd = pidfd;
        z->pid = pid;
        z->state = W_READY;
        p->zchan[z->kind] = nw->chan;
        changed(p);
        pool_unlock(p);
        while (poll(f, 2, -1) < 0 && errno == EINTR) {}
        pool_lock(p);
    }
    /* Before the run closes the channel: no worker thread may take a copy after that. */
    p->zchan[z->kind] = -1;
    z->state = W_ENDING;
    pool_unlock(p);
    return NULL;
}

/* The last step of a worker's or the zygote's thread: the manager may join it. */
static void *thread_end(worker *w)
{
    sandbox_pool *p = w->pool;
    pool_lock(p);
    if (w->busy) p->busy--;      /* now the manager starts its replacement */
    w->state = W_DEAD;
    changed(p);
    pool_unlock(p);
    return NULL;
}

static void *zygote_main(void *arg)
{
    worker *z = arg;
    sandbox_pool *p = z->pool;
    sandbox_outcome out;
    cr_error err = { 0 };
    ns_run_warm(&p->key, &z->warm, &out, &err);
    pool_lock(p);
    if (!p->closing) {
        /* Dead while starting or serving: its workers died with it. */
        p->zfailures[z->kind]++;
        if (z->state == W_STARTING) p->last_error = err;
    }
    pool_unlock(p);
    ns_warm_release(&z->warm, 0);
    return thread_end(z);
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    sandbox_pool *p = w->pool;
    sandbox_outcome out;
    cr_error err = { 0 };
    ns_run_warm(&p->key, &w->warm, &out, &err);
    /* Empty when the request made the run: its outcome is the request's. */
    sandbox_outcome_free(&out);
    /* The teardown is nobody's wait (worker_ready() lowered it already for a ready worker). */
    setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 19);
    pool_lock(p);
    /* With a job, the request has its outcome already: the teardown below is off its path. */
    if (!w->job) {
        if (w->state == W_STARTING && !p->closing) {
            /* A forked worker's set-up failing says the zygote's way does not work here:
             * after a few the pool starts python for each worker instead. One that died
             * with its zygote says nothing of the kind. */
            if (!w->forked) p->failures++;
            else if (w->warm.setup_failed) p->zfailures[w->kind]++;
            p->last_error = err;
        }
    }
    pool_unlock(p);
    ns_warm_release(&w->warm, w->forked);
    return thread_end(w);
}

static void worker_free(worker *w)
{
    close(w->wake[0]);
    close(w->wake[1]);
    pthread_cond_destroy(&w->done);
    free(w);
}

/* A new worker of `kind` (made by that zygote when it is ready), or with zygote set that
 * zygote, on a thread of its own (signals blocked: the caller's handlers run on its own
 * threads, never on ours). Called with the lock held. */
static void spawn(sandbox_pool *p, int zygote, int kind)
{
    worker *w = calloc(1, sizeof *w);
    sigset_t all, old;
    unsigned *failures = zygote ? &p->zfailures[kind] : &p->failures;
    int e;
    if (!w) { (*failures)++; return; }
    w->pool = p;
    w->kind = kind;
    /* The lean zygote has neither the preload list nor the warm-up, which would import it. */
    w->warm.preload = kind == Z_LEAN ? "" : p->preload;
    w->warm.ready = zygote ? zygote_ready : worker_ready;
    w->warm.run_elsewhere = !zygote;
    w->warm.zygote = zygote;
    w->warm.warmup = kind == Z_LEAN ? NULL : p->warmup;
    w->warm.cancel_fd = -1;
    /* The worker's own copy of the zygote's channel: the zygote's thread closes its own
     * when the zygote dies. */
    w->warm.chan = !zygote && p->zchan[kind] >= 0 ? fcntl(p->zchan[kind], F_DUPFD_CLOEXEC, 0) : -1;
    w->forked = w->warm.chan >= 0;
    w->state = W_STARTING;
    w->pidfd = -1;
    if (pipe2(w->wake, O_CLOEXEC) < 0) {
        (*failures)++;
        if (w->forked) close(w->warm.chan);
        free(w);
        return;
    }
    w->warm.cancel_fd = w->wake[0];
    pthread_cond_init(&w->done, NULL);
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    e = pthread_create(&w->thread, NULL, zygote ? zygote_main : worker_main, w);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (e) {
        cr_error_sys(&p->last_error, CR_ESANDBOX, "warm pool: a worker thread", e);
        (*failures)++;
        if (w->forked) close(w->warm.chan);
        worker_free(w);
        return;
    }
    if (zygote) {
        p->zygote[kind] = w;
        return;
    }
    p->spawned++;
    w->next = p->workers;
    p->workers = w;
}

/* Reaps the threads of workers that ended without a job; keeps `size` workers starting or
 * ready (with refill off, only the first `size` are ever made). */
static void *manager_main(void *arg)
{
    sandbox_pool *p = arg;
    struct sched_param sp = { 0 };
    /* The pool's threads (this one and the worker threads it starts, which inherit it) never
     * preempt on waking: a request's thread that wakes them at its end keeps its CPU until it
     * has returned (woken at once, a refill's start took it for milliseconds at p90). The
     * sandboxes they start go back to SCHED_OTHER (ns_child()). */
    pthread_setschedparam(pthread_self(), SCHED_BATCH, &sp);
    pool_lock(p);
    for (;;) {
        unsigned starting = 0, live = 0;
        int use[Z_KINDS], kind;
        for (int k = 0; k < Z_KINDS; k++) {
            worker *z = p->zygote[k];
            use[k] = p->use_zygote && k < p->kinds && p->zfailures[k] < FAILURES_MAX;
            if (z && z->state == W_DEAD) {
                pthread_join(z->thread, NULL);
                worker_free(z);
                p->zygote[k] = z = NULL;
            }
            /* Once: the pool closes (a zygote still starting ends too), or gives it up. */
            if (z && !z->woken && (p->closing || (!use[k] && z->state == W_READY))) {
                z->woken = 1;
                wake(z);
            }
        }
        /* A lean worker for the job at the head of the queue, or with none waiting the last
         * that came, when it is lean and the lean zygote serves. */
        kind = (p->head ? p->head->lean : p->want == Z_LEAN) && use[Z_LEAN] &&
               p->zchan[Z_LEAN] >= 0 ? Z_LEAN : Z_FAT;
        for (worker **pw = &p->workers; *pw;) {
            worker *w = *pw;
            if (w->state == W_DEAD) {
                *pw = w->next;
                pthread_join(w->thread, NULL);
                worker_free(w);
                continue;
            }
            if (w->state == W_RETIRING) {   /* no longer one of the `size` */
                pw = &w->next;
                continue;
            }
            starting += w->state == W_STARTING;
            live++;
            pw = &w->next;
        }
        if (p->closing) {
            if (!p->workers && !p->zygote[Z_FAT] && !p->zygote[Z_LEAN]) break;
            pthread_cond_wait(&p->changed, &p->lock);
            continue;
        }
        int wanted = (p->refill || p->spawned < p->size) && live + p->busy < p->size &&
                     starting < p->parallel && p->failures < FAILURES_MAX;
        if (wanted && use[Z_FAT] && !p->zygote[Z_FAT])
            spawn(p, 1, Z_FAT);
        else if (use[Z_LEAN] && !p->zygote[Z_LEAN] && (p->zchan[Z_FAT] >= 0 || !use[Z_FAT]))
            spawn(p, 1, Z_LEAN);   /* beside the first, once it serves: a python of its own */
        else if (wanted && (kind == Z_LEAN || !use[Z_FAT] || p->zchan[Z_FAT] >= 0))
            spawn(p, 0, kind);
        else
            pthread_cond_wait(&p->changed, &p->lock);
    }
    pool_unlock(p);
    return NULL;
}

/* What a pool holds once no thread of its runs: the close's end, or an open that failed. */
static void pool_free(sandbox_pool *p)
{
    free(p->interpreter);
    free(p->data_dir);
    free(p->allow_dir);
    free(p->preload);
    free(p->warmup);
    pthread_cond_destroy(&p->changed);
    pthread_condattr_destroy(&p->clock);
    pthread_mutex_destroy(&p->lock);
    free(p);
}

cr_code sandbox_pool_open(const sandbox_pool_config *cfg, sandbox_pool **out, cr_error *err)
{
    sandbox_pool *p;
    char why[320];
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    sigset_t all, old;
    int e;
    *out = NULL;
    if (!cfg || cfg->size < 1 || cfg->size > SANDBOX_POOL_MAX)
        return cr_error_set(err, CR_EUSAGE, 0, 0, "warm pool: size %u: want 1 to %u",
                            cfg ? cfg->size : 0, SANDBOX_POOL_MAX);
    if (cfg->preload && strlen(cfg->preload) > SANDBOX_PRELOAD_MAX)
        return cr_error_set(err, CR_EUSAGE, 0, 0, "warm pool: preload list over %u bytes",
                            SANDBOX_PRELOAD_MAX);
    for (const char *c = cfg->preload ? cfg->preload : ""; *c; c++)
        if (!(*c == ',' || *c == '.' || *c == '_' || (*c >= '0' && *c <= '9') ||
              (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z')))
            return cr_error_set(err, CR_EUSAGE, 0, 0, "warm pool: preload '%s': want module "
                                "names separated by commas", cfg->preload);
    if (cfg->queue > SANDBOX_QUEUE_MAX)
        return cr_error_set(err, CR_EUSAGE, 0, 0, "warm pool: queue %u: want at most %u",
                            cfg->queue, SANDBOX_QUEUE_MAX);
    if (cfg->warmup && strlen(cfg->warmup) > SANDBOX_WARMUP_MAX)
        return cr_error_set(err, CR_EUSAGE, 0, 0, "warm pool: warm-up program over %u bytes",
                            SANDBOX_WARMUP_MAX);
    if (!sandbox_ns_available(why, sizeof why))
        return cr_error_set(err, CR_ESANDBOX, 0, 0, "warm pool: ns: %s", why);
    if (!(p = calloc(1, sizeof *p))) return cr_error_set(err, CR_ENOMEM, 0, 0, "warm pool");
    sandbox_job_init(&p->key);
    p->key.tier = CR_TIER_NS;
    p->key.code = "";
    p->key.limits = cfg->limits;
    sandbox_limits_resolve(&p->key.limits);
    p->interpreter = strdup(cfg->interpreter ? cfg->interpreter : SANDBOX_DEFAULT_INTERPRETER);
    p->data_dir = cfg->data_dir ? strdup(cfg->data_dir) : NULL;
    p->allow_dir = cfg->allow_dir ? strdup(cfg->allow_dir) : NULL;
    p->preload = strdup(cfg->preload ? cfg->preload : "");
    p->warmup = cfg->warmup ? strdup(cfg->warmup) : NULL;
    p->key.interpreter = p->interpreter;
    p->key.data_dir = p->data_dir;
    p->key.allow_dir = p->allow_dir;
    p->size = cfg->size;
    p->queue = cfg->queue ? cfg->queue : CR_DEFAULT_POOL_QUEUE;
    p->refill = cfg->refill;
    p->zchan[Z_FAT] = p->zchan[Z_LEAN] = -1;
    /* Each worker mounts /tmp and /out afresh: an allowed directory there would vanish. */
    p->use_zygote = !cfg->no_zygote &&
                    !(cfg->allow_dir && (strncmp(cfg->allow_dir, "/tmp/", 5) == 0 ||
                                         strncmp(cfg->allow_dir, "/out/", 5) == 0));
    p->kinds = p->use_zygote && p->preload && p->preload[strspn(p->preload, ",")] ? 2 : 1;
    /* Starting a worker is CPU-bound (python and its imports): one per core at most. */
    p->parallel = cpus < 1 ? 1 : cpus < (long)p->size ? (unsigned)cpus : p->size;
    pthread_mutex_init(&p->lock, NULL);
    pthread_condattr_init(&p->clock);
    pthread_condattr_setclock(&p->clock, CLOCK_MONOTONIC);
    pthread_cond_init(&p->changed, &p->clock);
    if (!p->interpreter || (cfg->data_dir && !p->data_dir) || (cfg->allow_dir && !p->allow_dir) ||
        !p->preload || (cfg->warmup && !p->warmup)) {
        e = ENOMEM;
    } else {
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        e = pthread_create(&p->manager, NULL, manager_main, p);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
    }
    if (e) {
        pool_free(p);
        return cr_error_sys(err, e == ENOMEM ? CR_ENOMEM : CR_ESANDBOX, "warm pool", e);
    }
    *out = p;
    return CR_OK;
}

void sandbox_pool_close(sandbox_pool *p)
{
    if (!p) return;
    pool_lock(p);
    p->closing = 1;
    for (worker *w = p->workers; w; w = w->next) wake(w);
    changed(p);
    pool_unlock(p);
    /* The manager leaves once every worker's thread is joined: their sandboxes are gone,
     * cgroups removed. */
    pthread_join(p->manager, NULL);
    pool_free(p);
}

/* What of the job differs from the pool's key, or NULL when a worker can take it. */
static const char *key_mismatch(const sandbox_pool *p, const sandbox_job *job)
{
    sandbox_limits a = job->limits;
    const sandbox_limits *b = &p->key.limits;
    sandbox_limits_resolve(&a);
    if (strcmp(job->interpreter ? job->interpreter : SANDBOX_DEFAULT_INTERPRETER, p->interpreter))
        return "interpreter";
    if (!job->data_dir != !p->data_dir || (job->data_dir && strcmp(job->data_dir, p->data_dir)))
        return "data directory";
    if (!job->allow_dir != !p->allow_dir || (job->allow_dir && strcmp(job->allow_dir, p->allow_dir)))
        return "allowed directory";
    if (a.memory_bytes != b->memory_bytes) return "memory limit";
    if (a.max_procs != b->max_procs) return "process limit";
    if (a.tmp_bytes != b->tmp_bytes) return "/tmp size";
    if (a.artifact_bytes != b->artifact_bytes || a.max_artifacts != b->max_artifacts)
        return "/out size";
    /* RLIMIT_CPU, the backstop behind the parent's clock, is set in whole seconds. */
    if (ceil(a.cpu_s) != ceil(b->cpu_s)) return "CPU limit";
    return NULL;
}

static cr_code run_cold(const sandbox_job *job, sandbox_outcome *out, cr_error *err,
                        const char *why, const char *what)
{
    cr_code rc = sandbox_run(job, out, err);
    if (rc == CR_OK && why)
        snprintf(out->start_note, sizeof out->start_note, "%s%s", why, what ? what : "");
    return rc;
}

/* A ready worker, alive, off the list, for a job that is lean or not: a lean job takes a
 * lean one before any, a job that is not lean never takes one (it would import the preload
 * list itself); NULL when none. Called with the lock held. */
static worker *take_ready(sandbox_pool *p, int lean)
{
    worker *pick = NULL, **at = NULL;
    for (worker *x = p->workers, **px = &p->workers; x; px = &x->next, x = x->next) {
        struct pollfd alive = { x->pidfd, POLLIN, 0 };
        if (x->state != W_READY || (x->kind == Z_LEAN && !lean) || poll(&alive, 1, 0) != 0)
            continue;
        if (!pick || x->kind == Z_LEAN) {
            pick = x;
            at = px;
        }
        if (pick->kind == Z_LEAN || !lean) break;
    }
    if (pick) *at = pick->next;
    return pick;
}

/* A job that is not lean at the head of the queue while every place in the pool holds a
 * lean worker and no other is being made: the first ready lean one ends, and the manager
 * makes one of the preload list's in its place (p->want). Called with the lock held. */
static void make_room(sandbox_pool *p)
{
    worker *lean = NULL;
    unsigned live = 0;
    for (worker *w = p->workers; w; w = w->next) {
        if (w->state == W_DEAD || w->state == W_RETIRING) continue;
        if (w->state == W_STARTING && w->kind == Z_FAT) return;
        live++;
        if (!lean && w->state == W_READY && w->kind == Z_LEAN) lean = w;
    }
    if (lean && live + p->busy >= p->size) {
        lean->state = W_ENDING;
        wake(lean);
    }
}

/* Waits at the queue's tail until a worker is ready for the request at its head: 0 with *w
 * taken; ETIMEDOUT past the job's wall clock; EINTR when its interrupt descriptor became
 * readable; ECANCELED when the pool can no longer make one (*w NULL: the request starts
 * cold). Called with the lock held. */
static int wait_turn(sandbox_pool *p, const sandbox_job *job, worker **w)
{
    waiter me = { .next = NULL, .lean = job->lean };
    struct timespec until = deadline(job->limits.wall_s > 0 ? job->limits.wall_s : 1);
    int rc = 0;
    pthread_cond_init(&me.cv, &p->clock);
    if (p->tail) p->tail->next = &me;
    else p->head = &me;
    p->tail = &me;
    p->waiting++;
    for (;;) {
        if (p->head == &me && (*w = take_ready(p, job->lean))) break;
        if (p->head == &me && !job->lean && p->kinds > 1) make_room(p);
        if (!can_make(p)) {
            rc = ECANCELED;
            break;
        }
        struct timespec slice = deadline(WAIT_SLICE_S);
        int last = slice.tv_sec > until.tv_sec ||
                   (slice.tv_sec == until.tv_sec && slice.tv_nsec >= until.tv_nsec);
        int e = pthread_cond_timedwait(&me.cv, &p->lock, last ? &until : &slice);
        struct pollfd intr = { job->interrupt_fd, POLLIN, 0 };
        if (job->interrupt_fd >= 0 && poll(&intr, 1, 0) > 0) {
            rc = EINTR;
            break;
        }
        if (e == ETIMEDOUT && last) {
            rc = ETIMEDOUT;
            break;
        }
    }
    /* Off the queue; the next in line looks for itself. */
    waiter **pp = &p->head, *prev = NULL;
    while (*pp != &me) prev = *pp, pp = &(*pp)->next;
    *pp = me.next;
    if (p->tail == &me) p->tail = prev;
    p->waiting--;
    if (p->head) pthread_cond_signal(&p->head->cv);
    pthread_cond_destroy(&me.cv);
    return rc == ECANCELED ? 0 : rc;
}

cr_code sandbox_pool_run(sandbox_pool *p, const sandbox_job *job, sandbox_outcome *out,
                         cr_error *err)
{
    char why[256] = "";
    const char *miss;
    worker *w = NULL;
    cr_tier tier;
    cr_code rc;
    int lost;
    if (!p || !job) return run_cold(job, out, err, NULL, NULL);
    tier = job->tier == CR_TIER_AUTO ? sandbox_tier_auto(job->kvm_dir, why, sizeof why) : job->tier;
    if (tier != CR_TIER_NS) return run_cold(job, out, err, "cold start: the warm pool is the ns tier's", NULL);
    if ((miss = key_mismatch(p, job)))
        return run_cold(job, out, err, "cold start: no warm worker has the job's ", miss);
    if (!job->code && job->code_len) return run_cold(job, out, err, NULL, NULL);
    if (job->out_dir) {
        /* As the cold run checks it: before anything runs. */
        int fd = open(job->out_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0) {
            memset(out, 0, sizeof *out);
            return cr_error_sys(err, CR_EUSAGE, job->out_dir, errno);
        }
        close(fd);
    }
    pool_lock(p);
    /* The next worker is made for a job like this one: a lean one costs less to make. */
    p->want = job->lean ? Z_LEAN : Z_FAT;
    /* Behind nobody: a ready worker now, if any. */
    if (!p->head) w = take_ready(p, job->lean);
    if (!w && can_make(p)) {
        /* A worker being made is milliseconds away (a fork of the zygote), or, while the pool
         * starts, as far as python's start and imports, which a cold run would pay too and
         * on top of the pool's: the request waits its turn, up to its own time limit. */
        if (p->waiting >= p->queue) {
            pool_unlock(p);
            memset(out, 0, sizeof *out);
            return cr_error_set(err, CR_EBUSY, 0, 0, "queue_full: %u requests wait for a "
                                "warm sandbox already", p->queue);
        }
        int rc_wait = wait_turn(p, job, &w);
        if (rc_wait) {
            pool_unlock(p);
            memset(out, 0, sizeof *out);
            if (rc_wait == EINTR) {
                out->tier = CR_TIER_NS;
                out->interrupted = 1;
                out->exited = 1;
                return CR_OK;
            }
            return cr_error_set(err, CR_EBUSY, 0, 0, "queue_timeout: no warm sandbox within "
                                "%.3g s", job->limits.wall_s);
        }
    }
    if (w) {
        /* Its replacement starts once the run (and, for a worker that started python
         * itself, its teardown) is over: on a small machine a worker starting would slow the
         * run it replaces. */
        w->state = W_TAKEN;
        w->job = job;
        atomic_store(&w->taken, 1);
        p->busy++;
        w->busy = 1;
    } else if (p->failures >= FAILURES_MAX) {
        snprintf(why, sizeof why, "cold start: warm workers fail to start: %.180s",
                 p->last_error.message);
    }
    pool_unlock(p);
    if (!w) return run_cold(job, out, err, why[0] ? why : "cold start: no warm worker ready", NULL);
    {
        cr_error run_err = { 0 };
        rc = ns_warm_run(&w->warm, job, out, &run_err);
        if (rc != CR_OK && err) *err = run_err;
    }
    pool_lock(p);
    lost = w->warm.lost;
    w->finished = 1;
    /* Back on the list for the manager to join once its thread has removed the cgroup. */
    w->state = W_RETIRING;
    w->next = p->workers;
    p->workers = w;
    /* A forked worker's replacement costs a fork, not a start of python: it need not wait
     * for the teardown. */
    if (w->forked) {
        p->busy--;
        w->busy = 0;
    }
    /* Its thread waits in worker_ready() for this byte (or, in a race with pid 1's death, on
     * the condition), then for the lock: w is ours until we let the lock go. */
    wake(w);
    pthread_cond_broadcast(&w->done);
    changed(p);
    pool_unlock(p);
    if (lost) {
        sandbox_outcome_free(out);
        return run_cold(job, out, err, "cold start: the warm worker died before its job", NULL);
    }
    if (rc == CR_OK && job->tier == CR_TIER_AUTO && !out->tier_note[0])
        snprintf(out->tier_note, sizeof out->tier_note, "%s", why);
    return rc;
}

void sandbox_pool_state(sandbox_pool *p, sandbox_pool_health *h)
{
    memset(h, 0, sizeof *h);
    if (!p) return;
    pool_lock(p);
    h->ready = count_ready(p, NULL, 0);
    h->waiting = p->waiting;
    h->size = p->size;
    h->warm = p->warmed && has_warm(p);
    if (p->failures >= FAILURES_MAX)
        snprintf(h->why, sizeof h->why, "warm workers fail to start: %.120s",
                 p->last_error.message);
    else if (!has_warm(p))
        snprintf(h->why, sizeof h->why, "%s", p->closing ? "closing" : "every warm worker used "
                 "(refill off)");
    else if (!p->warmed)
        snprintf(h->why, sizeof h->why, "warming: %u of %u workers ready", h->ready, p->size);
    pool_unlock(p);
}

size_t sandbox_pool_ready(sandbox_pool *p, pid_t *pids, size_t max)
{
    size_t n;
    if (!p) return 0;
    pool_lock(p);
    n = count_ready(p, pids, max);
    pool_unlock(p);
    return n;
}

int sandbox_pool_wait_ready(sandbox_pool *p, size_t n, double seconds)
{
    struct timespec until = deadline(seconds);
    int ok = 0;
    if (!p) return 0;
    pool_lock(p);
    for (;;) {
        if ((ok = count_ready(p, NULL, 0) >= n) || !has_warm(p)) break;
        if (pthread_cond_timedwait(&p->changed, &p->lock, &until) == ETIMEDOUT) break;
    }
    pool_unlock(p);
    return ok;
}
