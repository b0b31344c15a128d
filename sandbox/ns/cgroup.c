/* sandbox/ns/cgroup.c: one cgroup per run for memory, processes and CPU accounting.
 *
 * The run's cgroup sits under the caller's own (from /proc/self/cgroup), so a caller already
 * confined by a container or a service manager stays confined, and we only ever touch a
 * directory we created. Hierarchies are found through /proc/self/mountinfo rather than
 * assumed at /sys/fs/cgroup/<name>, because joined hierarchies ("cpu,cpuacct") are common. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include "sandbox/ns/ns.h"

static atomic_uint seq;

static int write_file(const char *dir, const char *file, const char *text)
{
    char path[PATH_MAX + 64];
    int fd, rc = 0;
    snprintf(path, sizeof path, "%s/%s", dir, file);
    if ((fd = open(path, O_WRONLY | O_CLOEXEC)) < 0) return -errno;
    if (write(fd, text, strlen(text)) < 0) rc = -errno;
    close(fd);
    return rc;
}

static int read_file(const char *dir, const char *file, char *buf, size_t len)
{
    char path[PATH_MAX + 64];
    ssize_t n;
    int fd;
    snprintf(path, sizeof path, "%s/%s", dir, file);
    if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) return -1;
    n = read(fd, buf, len - 1);
    close(fd);
    if (n < 0) return -1;
    buf[n] = 0;
    return 0;
}

/* A figure's file, open since the cgroup was made (fd), else by its path. */
static int read_figure(int fd, const char *dir, const char *file, char *buf, size_t len)
{
    ssize_t n;
    if (fd < 0) return !dir[0] ? -1 : read_file(dir, file, buf, len);
    if ((n = pread(fd, buf, len - 1, 0)) < 0) return -1;
    buf[n] = 0;
    return 0;
}

static int64_t read_int(int fd, const char *dir, const char *file)
{
    char buf[64];
    if (read_figure(fd, dir, file, buf, sizeof buf) < 0) return -1;
    return strtoll(buf, NULL, 10);
}

/* The value after "key " in a flat keyed file (memory.events, pids.events, oom_control). */
static int64_t read_key(int fd, const char *dir, const char *file, const char *key)
{
    char buf[1024];
    size_t klen = strlen(key);
    if (read_figure(fd, dir, file, buf, sizeof buf) < 0) return -1;
    for (char *line = buf; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL)
        if (!strncmp(line, key, klen) && line[klen] == ' ') return strtoll(line + klen + 1, NULL, 10);
    return -1;
}

static int open_figure(int has, const char *dir, const char *file)
{
    char path[PATH_MAX + 64];
    if (!has || !dir[0]) return -1;
    snprintf(path, sizeof path, "%s/%s", dir, file);
    return open(path, O_RDONLY | O_CLOEXEC);
}

/* 1 when `tok` is one of the comma-separated words of `list` (which it leaves intact). */
static int has_token(const char *list, const char *tok)
{
    size_t n = strlen(tok);
    for (const char *p = list; p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
        if (!strncmp(p, tok, n) && (p[n] == ',' || p[n] == 0)) return 1;
    return 0;
}

/* Our cgroup path in the hierarchy that has `controller` (v1), or in v2 when controller is
 * NULL. 0 on success. */
static int own_path(const char *controller, char *out, size_t len)
{
    char line[1024];
    FILE *f = fopen("/proc/self/cgroup", "re");
    int found = -1;
    if (!f) return -1;
    while (found < 0 && fgets(line, sizeof line, f)) {
        char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2) continue;
        *c2 = 0;
        line[strcspn(line, "\n")] = 0;
        c2[1 + strcspn(c2 + 1, "\n")] = 0;
        if (controller ? has_token(c1 + 1, controller) : c1[1] == 0) {
            snprintf(out, len, "%s", c2 + 1);
            found = 0;
        }
    }
    fclose(f);
    return found;
}

/* Mount point of the v1 hierarchy holding `controller`, or of cgroup2 (controller NULL). */
static int mount_point(const char *controller, char *out, size_t len)
{
    char line[4096];
    FILE *f = fopen("/proc/self/mountinfo", "re");
    int found = -1;
    if (!f) return -1;
    while (found < 0 && fgets(line, sizeof line, f)) {
        /* id parent maj:min root mountpoint options ... - fstype source superoptions */
        char *fields[5], *sep = strstr(line, " - "), *p = line, *fstype, *src, *opts;
        int i;
        if (!sep) continue;
        for (i = 0; i < 5 && p; i++) { fields[i] = p; p = strchr(p, ' '); if (p) *p++ = 0; }
        if (i < 5) continue;
        fstype = sep + 3;
        if (!(src = strchr(fstype, ' '))) continue;
        *src++ = 0;
        if (!(opts = strchr(src, ' '))) continue;
        *opts++ = 0;
        opts[strcspn(opts, "\n")] = 0;
        if (!controller) {
            if (strcmp(fstype, "cgroup2")) continue;
        } else {
            if (strcmp(fstype, "cgroup") || !has_token(opts, controller)) continue;
        }
        /* Only a mount of the hierarchy's root lets us map our path onto it. */
        if (strcmp(fields[3], "/")) continue;
        snprintf(out, len, "%s", fields[4]);
        found = 0;
    }
    fclose(f);
    return found;
}

/* Removes the run cgroups that a caller killed before its clean-up left behind: ours are
 * named calcroute-PID-N, and one whose PID is gone is empty (its processes died with the
 * caller, PR_SET_PDEATHSIG), so rmdir() takes it; a busy one fails and stays. */
static void sweep(const char *parent)
{
    DIR *d = opendir(parent);
    struct dirent *de;
    int seen = 0;
    if (!d) return;
    while ((de = readdir(d)) && seen++ < 10000) {
        char path[PATH_MAX];
        long pid;
        if (strncmp(de->d_name, "calcroute-", 10) != 0) continue;
        pid = strtol(de->d_name + 10, NULL, 10);
        if (pid <= 0 || pid == (long)getpid() || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
            continue;
        if ((size_t)snprintf(path, sizeof path, "%s/%s", parent, de->d_name) < sizeof path)
            rmdir(path);
    }
    closedir(d);
}

/* Where our run cgroups go in each hierarchy (the mount point joined with our own cgroup's
 * path), found once a process: reading /proc/self/mountinfo and /proc/self/cgroup for every
 * run cost more than the rest of the cgroup's making. A caller moved to another cgroup since
 * is found again when mkdir() fails there. The sweep of what killed callers left runs at most
 * once a second (SWEEP_S) a hierarchy, not at every run, for the same reason. */
#define SWEEP_S 1.0
enum { H_MEMORY, H_PIDS, H_CPUACCT, H_V2, H_COUNT };
static const char *const hierarchy_controller[H_COUNT] = { "memory", "pids", "cpuacct", NULL };
static struct { int known, rc; double swept; char dir[PATH_MAX]; } parents[H_COUNT];
static pthread_mutex_t parents_lock = PTHREAD_MUTEX_INITIALIZER;

static double monotonic_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int find_parent(int h, char *out, size_t len)
{
    const char *controller = hierarchy_controller[h];
    char mnt[PATH_MAX / 2], own[PATH_MAX / 2];
    if (mount_point(controller, mnt, sizeof mnt) < 0 || own_path(controller, own, sizeof own) < 0)
        return -ENOENT;
    if ((size_t)snprintf(out, len, "%s%s", mnt, strcmp(own, "/") ? own : "") >= len)
        return -ENAMETOOLONG;
    return 0;
}

void sandbox_host_share(double *cpus, double *memory)
{
    cpu_set_t set;
    char dir[PATH_MAX], text[64];
    *cpus = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set)
                                                         : (double)sysconf(_SC_NPROCESSORS_ONLN);
    *memory = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
    if (find_parent(H_V2, dir, sizeof dir) < 0) return;
    /* cpu.max: "QUOTA PERIOD" or "max PERIOD"; memory.max: bytes or "max". */
    double quota, period, limit;
    if (read_file(dir, "cpu.max", text, sizeof text) == 0 &&
        sscanf(text, "%lf %lf", &quota, &period) == 2 && period > 0 && quota / period < *cpus)
        *cpus = ceil(quota / period);
    if (read_file(dir, "memory.max", text, sizeof text) == 0 && sscanf(text, "%lf", &limit) == 1 &&
        limit > 0 && limit < *memory)
        *memory = limit;
}

static int make_dir(int h, const char *name, char *out, size_t len)
{
    for (int again = 0; again < 2; again++) {
        char parent[PATH_MAX];
        int rc;
        pthread_mutex_lock(&parents_lock);
        if (!parents[h].known || again) {
            parents[h].rc = find_parent(h, parents[h].dir, sizeof parents[h].dir);
            parents[h].known = 1;
            parents[h].swept = 0;
        }
        if ((rc = parents[h].rc) == 0 && (!parents[h].swept || monotonic_s() - parents[h].swept >= SWEEP_S)) {
            sweep(parents[h].dir);
            parents[h].swept = monotonic_s();
        }
        memcpy(parent, parents[h].dir, sizeof parent);
        pthread_mutex_unlock(&parents_lock);
        if (rc < 0) return rc;
        if ((size_t)snprintf(out, len, "%s/%s", parent, name) >= len) return -ENAMETOOLONG;
        if (mkdir(out, 0755) == 0) return 0;
        rc = -errno;
        out[0] = 0;
        if (rc != -ENOENT) return rc;
    }
    return -ENOENT;
}

static void add_note(ns_cgroup *cg, const char *what)
{
    size_t used = strlen(cg->note);
    snprintf(cg->note + used, sizeof cg->note - used, "%s%s", used ? "; " : "", what);
}

void ns_cgroup_create(ns_cgroup *cg, const sandbox_limits *lim)
{
    char name[64], num[32];
    memset(cg, 0, sizeof *cg);
    cg->fd_cpu = cg->fd_peak = cg->fd_oom = cg->fd_pids = -1;
    snprintf(name, sizeof name, "calcroute-%ld-%u", (long)getpid(), atomic_fetch_add(&seq, 1));
    snprintf(num, sizeof num, "%llu", (unsigned long long)lim->memory_bytes);

    if (make_dir(H_MEMORY, name, cg->mem, sizeof cg->mem) == 0) {
        cg->version = 1;
        cg->has_mem = write_file(cg->mem, "memory.limit_in_bytes", num) == 0;
        /* Swap counts too where the kernel accounts it; absent file: no swap accounting. */
        write_file(cg->mem, "memory.memsw.limit_in_bytes", num);
        if (make_dir(H_PIDS, name, cg->pids, sizeof cg->pids) == 0) {
            snprintf(num, sizeof num, "%u", lim->max_procs);
            cg->has_pids = write_file(cg->pids, "pids.max", num) == 0;
        }
        cg->has_cpu = make_dir(H_CPUACCT, name, cg->cpu, sizeof cg->cpu) == 0;
    } else if (make_dir(H_V2, name, cg->mem, sizeof cg->mem) == 0) {
        char ctl[256] = "";
        cg->version = 2;
        read_file(cg->mem, "cgroup.controllers", ctl, sizeof ctl);
        cg->has_mem = strstr(ctl, "memory") && write_file(cg->mem, "memory.max", num) == 0;
        if (cg->has_mem) write_file(cg->mem, "memory.swap.max", "0");
        snprintf(num, sizeof num, "%u", lim->max_procs);
        cg->has_pids = strstr(ctl, "pids") && write_file(cg->mem, "pids.max", num) == 0;
        cg->has_cpu = 1;  /* cpu.stat's usage_usec exists without the cpu controller */
    }
    if (cg->version) {
        int v1 = cg->version == 1;
        cg->fd_cpu = open_figure(cg->has_cpu, v1 ? cg->cpu : cg->mem, v1 ? "cpuacct.usage" : "cpu.stat");
        cg->fd_peak = open_figure(cg->has_mem, cg->mem, v1 ? "memory.max_usage_in_bytes" : "memory.peak");
        cg->fd_oom = open_figure(cg->has_mem, cg->mem, v1 ? "memory.oom_control" : "memory.events");
        cg->fd_pids = open_figure(cg->has_pids, v1 ? cg->pids : cg->mem, "pids.events");
    }
    if (!cg->version) add_note(cg, "no cgroup could be made: memory bounded by RLIMIT_DATA, processes by RLIMIT_NPROC");
    else {
        if (!cg->has_mem) add_note(cg, "no memory cgroup: memory bounded by RLIMIT_DATA only");
        if (!cg->has_pids) add_note(cg, "no pids cgroup: processes bounded by RLIMIT_NPROC only");
    }
}

int ns_cgroup_attach(const ns_cgroup *cg, pid_t pid)
{
    char num[32];
    int rc = 0;
    snprintf(num, sizeof num, "%ld", (long)pid);
    if (cg->mem[0] && (rc = write_file(cg->mem, "cgroup.procs", num)) < 0) return rc;
    if (cg->pids[0] && (rc = write_file(cg->pids, "cgroup.procs", num)) < 0) return rc;
    if (cg->cpu[0] && (rc = write_file(cg->cpu, "cgroup.procs", num)) < 0) return rc;
    return 0;
}

int64_t ns_cgroup_cpu_ns(const ns_cgroup *cg)
{
    if (cg->version == 1) return read_int(cg->fd_cpu, cg->cpu, "cpuacct.usage");
    if (cg->version == 2) {
        int64_t us = read_key(cg->fd_cpu, cg->mem, "cpu.stat", "usage_usec");
        return us < 0 ? -1 : us * 1000;
    }
    return -1;
}

int64_t ns_cgroup_peak_bytes(const ns_cgroup *cg)
{
    if (!cg->has_mem) return -1;
    return read_int(cg->fd_peak, cg->mem,
                    cg->version == 1 ? "memory.max_usage_in_bytes" : "memory.peak");
}

int64_t ns_cgroup_oom_kills(const ns_cgroup *cg)
{
    if (!cg->has_mem) return -1;
    if (cg->version == 1) return read_key(cg->fd_oom, cg->mem, "memory.oom_control", "oom_kill");
    return read_key(cg->fd_oom, cg->mem, "memory.events", "oom_kill");
}

int64_t ns_cgroup_pids_refused(const ns_cgroup *cg)
{
    if (!cg->has_pids) return -1;
    return read_key(cg->fd_pids, cg->version == 1 ? cg->pids : cg->mem, "pids.events", "max");
}

#define KILLED_MAX 256   /* pids remembered as signalled by one ns_cgroup_kill() */

/* SIGKILL to every process listed in dir's cgroup.procs that is not in killed[] yet (which
 * it adds to); the number newly signalled, or -1 when unreadable. */
static int kill_listed(const char *dir, pid_t *killed, int *n_killed)
{
    char buf[8192];
    int n = 0;
    if (!dir[0] || read_file(dir, "cgroup.procs", buf, sizeof buf) < 0) return -1;
    for (char *p = buf, *end; *p; p = end) {
        long pid = strtol(p, &end, 10);
        int seen = 0;
        if (end == p) break;
        for (int i = 0; i < *n_killed && !seen; i++) seen = killed[i] == (pid_t)pid;
        if (pid <= 0 || seen) continue;
        kill((pid_t)pid, SIGKILL);
        if (*n_killed < KILLED_MAX) killed[(*n_killed)++] = (pid_t)pid;
        n++;
    }
    return n;
}

int ns_cgroup_kill(const ns_cgroup *cg)
{
    /* cgroup.kill (Linux 5.14) takes every process at once, forks racing it included. Else
     * the listing is read until it names no process not signalled already: one with SIGKILL
     * pending forks no more, and those still listed are only leaving (killing them again,
     * round after round until they were gone, was most of a worker's teardown). A fork bomb
     * cannot outrun it for long: pids.max bounds how many there are. In v1 the run's
     * processes are in each hierarchy's directory alike (attached to all three before they
     * run, their children inheriting, and nothing inside can move itself): one listing,
     * the first there is, names them all. */
    const char *dir = cg->mem[0] ? cg->mem : cg->pids[0] ? cg->pids : cg->cpu;
    pid_t killed[KILLED_MAX];
    int n_killed = 0;
    if (cg->version == 2 && write_file(cg->mem, "cgroup.kill", "1") == 0) return 0;
    for (int round = 0; round < 100; round++) {
        int n = kill_listed(dir, killed, &n_killed);
        if (n <= 0) return n < 0 ? -1 : 0;
    }
    return -1;
}

int ns_cgroup_wait_empty(const ns_cgroup *cg, double seconds)
{
    const char *dir = cg->mem[0] ? cg->mem : cg->pids[0] ? cg->pids : cg->cpu;
    for (long waited_ms = 0;; waited_ms += 5) {
        char buf[64];
        if (!dir[0]) return 1;
        if (cg->version == 2 ? read_key(-1, dir, "cgroup.events", "populated") == 0
                             : read_file(dir, "cgroup.procs", buf, sizeof buf) == 0 && !buf[0])
            return 1;
        if (waited_ms >= seconds * 1000) return 0;
        struct timespec ts = { 0, 5 * 1000 * 1000 };
        nanosleep(&ts, NULL);
    }
}

static void remove_dir(char *dir)
{
    if (!dir[0]) return;
    /* The last tasks of a killed namespace may still be leaving: retry for up to ~1 s. */
    for (int i = 0; i < 200 && rmdir(dir) < 0 && errno == EBUSY; i++) {
        struct timespec ts = { 0, 5 * 1000 * 1000 };
        nanosleep(&ts, NULL);
    }
    dir[0] = 0;
}

void ns_cgroup_destroy(ns_cgroup *cg)
{
    int *fds[] = { &cg->fd_cpu, &cg->fd_peak, &cg->fd_oom, &cg->fd_pids };
    for (size_t i = 0; i < sizeof fds / sizeof fds[0]; i++)
        if (*fds[i] >= 0) {
            close(*fds[i]);
            *fds[i] = -1;
        }
    remove_dir(cg->mem);
    remove_dir(cg->pids);
    remove_dir(cg->cpu);
}
