/* sandbox/ns/warm.c: the namespace tier's warm protocol: a warm worker's start up to the
 * runner's "ready", the zygote's forks and its spec, and the job handed to a waiting worker.
 */

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/seccomp.h>
#include <math.h>
#include <net/if.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <sanitizer/asan_interface.h>

#include "sandbox/ns/ns_int.h"

#define WARM_START_S 120.0   /* a warm worker's set-up and imports, at most */

/* A warm worker's start: the control socket's end (the child exec'd, or says which step
 * failed), then the runner's "ready". The runner's pid (pid 1 of the worker's namespace, as
 * we see it), or 0 when the worker ends first (err says why, or *fail holds the failed
 * step). */
pid_t warm_wait(ns_warm *warm, int forked, pid_t pid, int pidfd, int ctl, int pv,
                int *out_dir_fd, int *runner_pidfd, struct ns_msg *fail, cr_error *err)
{
    double until = now_s() + WARM_START_S;
    int ctl_open = 1, ready = 0;
    pid_t runner = pid;
    /* A forked worker's end stays open to say how its runner ended (the zygote holds a copy
     * for the runner it cloned); its set-up is over once /out has come and its runner has
     * said hello. */
    while ((forked ? *out_dir_fd < 0 || *runner_pidfd < 0 : ctl_open) || !ready) {
        struct pollfd pfd[4] = { { ctl_open ? ctl : -1, POLLIN, 0 }, { ready ? -1 : pv, POLLIN, 0 },
                                 { pidfd, POLLIN, 0 }, { warm->cancel_fd, POLLIN, 0 } };
        int left = (int)((until - now_s()) * 1000);
        if (left <= 0) { ns_fail(err, "warm worker start", ETIMEDOUT); return 0; }
        if (poll(pfd, 4, left) < 0 && errno != EINTR) { ns_fail(err, "poll", errno); return 0; }
        if (pfd[3].revents) {
            cr_error_set(err, CR_ESANDBOX, 0, 0, "ns: the warm pool closed while the worker started");
            return 0;
        }
        if (pfd[0].revents) {
            struct ns_msg m;
            pid_t sender = 0;
            if (!recv_ctl(ctl, &m, out_dir_fd, &sender)) {
                ctl_open = 0;
                if (forked) {
                    cr_error_set(err, CR_ESANDBOX, 0, 0, "ns: the forked worker died while starting");
                    return 0;
                }
            } else if (m.kind == MSG_SETUP_FAILED) {
                *fail = m;
                return 0;
            } else if (m.kind == MSG_HELLO && forked && *runner_pidfd < 0 && sender > 0) {
                /* The worker's runner: its pid namespace's init, which a kill from outside
                 * must take for the worker to be gone at once. */
                if ((*runner_pidfd = (int)syscall(SYS_pidfd_open, sender, 0)) < 0) {
                    ns_fail(err, "pidfd_open", errno);
                    return 0;
                }
                runner = sender;
            }
            continue;
        }
        if (pfd[1].revents) {
            char c = 0;
            if (read(pv, &c, 1) != 1 || c != 'R') {
                cr_error_set(err, CR_ESANDBOX, 0, 0, "ns: the warm runner did not say it was ready");
                return 0;
            }
            ready = 1;
        }
        if (pfd[2].revents) {
            cr_error_set(err, CR_ESANDBOX, 0, 0, "ns: the warm worker died while starting");
            return 0;
        }
    }
    return runner;
}


/* Asks the zygote for a worker: the worker's ends of the run's channels go over (control,
 * stdout, stderr, job, report; ours are closed then, so that a zygote that dies with the
 * request unread hangs the control socket up), and its first message, whose credentials the
 * kernel fills in, names its pid as we see it. -1 with err set when there is none. */
pid_t zygote_fork(int chan, int ctl, int *const fds[5], cr_error *err)
{
    char req = 'F';
    struct iovec iov = { &req, 1 };
    union { char buf[CMSG_SPACE(5 * sizeof(int))]; struct cmsghdr align; } u;
    struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
                         .msg_controllen = sizeof u.buf };
    struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
    struct ns_msg m = { 0 };
    struct pollfd pf = { ctl, POLLIN, 0 };
    pid_t pid = -1;
    int on = 1, n, passed = -1;
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(5 * sizeof(int));
    for (int i = 0; i < 5; i++) memcpy(CMSG_DATA(c) + i * sizeof(int), fds[i], sizeof(int));
    if (setsockopt(ctl, SOL_SOCKET, SO_PASSCRED, &on, sizeof on) < 0) {
        ns_fail(err, "SO_PASSCRED", errno);
        return -1;
    }
    n = (int)sendmsg(chan, &mh, MSG_NOSIGNAL);
    for (int i = 0; i < 5; i++) {
        close(*fds[i]);
        *fds[i] = -1;
    }
    if (n < 0) {
        ns_fail(err, "ask the zygote for a worker", errno);
        return -1;
    }
    while ((n = poll(&pf, 1, (int)(WARM_START_S * 1000))) < 0 && errno == EINTR) {}
    if (n <= 0) {
        ns_fail(err, "the zygote's worker", n == 0 ? ETIMEDOUT : errno);
        return -1;
    }
    if (!recv_ctl(ctl, &m, &passed, &pid)) pid = -1;
    if (passed >= 0) close(passed);
    if (m.kind != MSG_HELLO || pid <= 0) {
        cr_error_set(err, CR_ESANDBOX, 0, 0, "ns: the zygote's worker did not say hello");
        return -1;
    }
    return pid;
}

/* The zygote's first message: what its workers make of themselves that a cold run's child
 * makes before exec (the tier's filter, rlimits, /tmp and /out, /proc's masks), and the pool's warm-up
 * program, in job records. */
cr_code zygote_spec(const ns_plan *p, const struct sock_fprog *tier, const char *warmup,
                    cr_buf *b, cr_error *err)
{
    static const struct { const char *name; size_t off; } rl[] = {
        { "cpu", offsetof(ns_plan, rl_cpu) }, { "nproc", offsetof(ns_plan, rl_nproc) },
        { "fsize", offsetof(ns_plan, rl_fsize) }, { "data", offsetof(ns_plan, rl_data) },
        { "nofile", offsetof(ns_plan, rl_nofile) }, { "core", offsetof(ns_plan, rl_core) },
        { "msgqueue", offsetof(ns_plan, rl_msgqueue) },
        { "sigpending", offsetof(ns_plan, rl_sigpending) },
        { "memlock", offsetof(ns_plan, rl_memlock) },
    };
    cr_code rc = CR_OK;
    char line[80];
    for (size_t i = 0; i < sizeof rl / sizeof rl[0] && rc == CR_OK; i++) {
        const struct rlimit *r = (const struct rlimit *)((const char *)p + rl[i].off);
        int n = snprintf(line, sizeof line, "%s %llu %llu", rl[i].name,
                         (unsigned long long)r->rlim_cur, (unsigned long long)r->rlim_max);
        rc = sandbox_record_put(b, "rlimit", line, (size_t)n);
    }
    if (rc == CR_OK) rc = sandbox_record_put(b, "tmp", p->tmp_opts, strlen(p->tmp_opts));
    if (rc == CR_OK) rc = sandbox_record_put(b, "out", p->out_opts, strlen(p->out_opts));
    if (rc == CR_OK)
        rc = sandbox_record_put(b, "filter", (const char *)tier->filter,
                                tier->len * sizeof(struct sock_filter));
    for (size_t i = 0; i < ns_proc_masked_count && rc == CR_OK; i++) {
        int n = snprintf(line, sizeof line, "%s %s", ns_proc_masked[i].dir ? "dir" : "file",
                         ns_proc_masked[i].path);
        rc = sandbox_record_put(b, "mask", line, (size_t)n);
    }
    if (rc == CR_OK) rc = sandbox_record_put(b, "mask_tmpfs", PROC_MASK_TMPFS,
                                             sizeof PROC_MASK_TMPFS - 1);
    if (rc == CR_OK && warmup) rc = sandbox_record_put(b, "warmup", warmup, strlen(warmup));
    return rc == CR_OK ? CR_OK : cr_error_set(err, rc, 0, 0, "ns: the zygote's set-up: %s",
                                              cr_strerror(rc));
}

/* A warm worker's job: from here on the run is the job's: its limits (the key's, but for
 * those the parent alone enforces), its wall clock from now; the job goes to the code's
 * process. */
cr_code warm_job_start(ns_run_state *r, const sandbox_job *real)
{
    const char *jp;
    size_t jn;
    cr_code rc;
    r->job = real;
    r->lim = real->limits;
    sandbox_limits_resolve(&r->lim);
    cr_buf_init(&r->out->stdout_buf, r->lim.max_stdout);
    cr_buf_init(&r->out->stderr_buf, r->lim.max_stderr);
    r->out->warm = 1;
    r->ctl_open = r->forked;
    r->t0 = now_s();
    r->cpu_next = r->t0 + CPU_POLL_MS / 1e3;
    if ((rc = job_bytes(r, &jp, &jn)) != CR_OK) return rc;
    for (size_t off = 0; off < jn;) {
        ssize_t n = send(r->warm_fd, jp + off, jn - off, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;   /* the code's process is gone: the run's end says how */
        off += (size_t)n;
    }
    close(r->warm_fd);
    r->warm_fd = -1;
    return CR_OK;
}

cr_code ns_warm_run(ns_warm *warm, const sandbox_job *job, sandbox_outcome *out, cr_error *err)
{
    ns_run_state *r = warm->run;
    cr_code rc;
    /* What the worker's set-up noted (its cgroup's note); no output yet. */
    *out = *r->out;
    r->out = out;
    r->err = err;
    if ((rc = warm_job_start(r, job)) == CR_OK && (rc = run_supervise(r)) == CR_OK)
        rc = run_collect(r);
    if (rc != CR_OK) sandbox_outcome_free(out);
    return rc;
}

void ns_warm_release(ns_warm *warm, int forked)
{
    if (warm->pid_left > 0) {
        kill(warm->pid_left, SIGKILL);
        if (warm->cg_left) ns_cgroup_kill(&warm->cg);
        while (waitpid(warm->pid_left, NULL, 0) < 0 && errno == EINTR) {}
    } else if (forked && warm->cg_left) {
        /* Not our child: the zygote reaps it; its cgroup says when all of it is gone. */
        ns_cgroup_kill(&warm->cg);
        ns_cgroup_wait_empty(&warm->cg, 3.0);
    }
    if (warm->cg_left) ns_cgroup_destroy(&warm->cg);
}
