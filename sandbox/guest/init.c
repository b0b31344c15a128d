/* sandbox/guest/init.c: PID 1 of the kvm tier's guest (static; sandbox/guest/build.sh).
 *
 * Mounts what python3 needs, maps the job/result region (sandbox/kvm/proto.h) through
 * /dev/mem, runs the in-sandbox runner on the job with the limits the host asked for, copies
 * stdout, stderr and the runner's report into the region, rings the doorbell and powers off.
 * Whatever fails, it still rings with exit code 2 and the reason in stderr, so the host
 * always learns why; when even the region cannot be mapped, the reason goes to the serial
 * console and the reset tells the host the guest gave up.
 */
#include <dirent.h>
#include <errno.h>
#include <grp.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/io.h>
#include <sys/mman.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/reboot.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sandbox/kvm/proto.h"
#include "sandbox/sandbox.h"          /* sandbox_limit: declarations only, nothing linked */

#define RUNNER "/runner.py"
#define PYTHON "/usr/bin/python3"
#define CAPTURE "/run/cr"
#define NOBODY 65534            /* stdout, stderr and report files, outside /tmp */

static struct crvm_page *page;
static uint8_t *region;
static char failure[512];

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void ring(uint32_t value)
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST);      /* the page before the doorbell */
    outl(value, CRVM_DOORBELL_PORT);
}

static _Noreturn void power_off(void)
{
    sync();
    reboot(RB_POWER_OFF);      /* reboot=k on the command line: the host sees the reset */
    for (;;) pause();
}

/* Records the first failure; the run then ends with exit code 2 and this as stderr. */
static int fail(const char *fmt, ...)
{
    if (!failure[0]) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(failure, sizeof failure, fmt, ap);
        va_end(ap);
        size_t n = strlen(failure);
        snprintf(failure + n, sizeof failure - n, ": %s\n", strerror(errno));
    }
    return -1;
}

static int mount_one(const char *src, const char *dir, const char *type, const char *opts)
{
    mkdir(dir, 0755);
    if (mount(src, dir, type, MS_NOSUID, opts) < 0) return fail("init: mount %s", dir);
    return 0;
}

/* What reaching the region needs; /tmp and /out wait for the sizes the host set there. */
static int mount_system(void)
{
    if (mount_one("dev", "/dev", "devtmpfs", NULL) < 0 ||
        mount_one("proc", "/proc", "proc", NULL) < 0 ||
        mount_one("sys", "/sys", "sysfs", NULL) < 0 ||
        mount_one("run", "/run", "tmpfs", "size=64m,mode=0700") < 0)
        return -1;
    return 0;
}

/* The data directory came as a second initramfs archive (sandbox/kvm/data.c): read-only from
 * here on, as the ns tier's bind mount is. */
static int seal_data(void)
{
    struct stat sb;
    if (lstat("/data", &sb) < 0) return 0;              /* the job has no data directory */
    if (mount("/data", "/data", NULL, MS_BIND | MS_REC, NULL) < 0 ||
        mount(NULL, "/data", NULL, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV,
              NULL) < 0)
        return fail("init: make /data read-only");
    return 0;
}

/* The ns tier's sizes: /tmp tmp_bytes; /out artifact_bytes, its inodes bounding the files. */
static int mount_scratch(void)
{
    char tmp[96], out[96];
    uint64_t tb = page->tmp_bytes ? page->tmp_bytes : 64ull << 20;
    uint64_t ob = page->artifact_bytes ? page->artifact_bytes : 64ull << 20;
    uint32_t files = page->max_artifacts ? page->max_artifacts : 64;
    snprintf(tmp, sizeof tmp, "size=%llu,nr_inodes=4096,mode=1777", (unsigned long long)tb);
    snprintf(out, sizeof out, "size=%llu,nr_inodes=%llu,mode=0777", (unsigned long long)ob,
             (unsigned long long)files * 2 + 8);
    if (mount_one("tmp", "/tmp", "tmpfs", tmp) < 0 || mount_one("out", "/out", "tmpfs", out) < 0)
        return -1;
    return 0;
}

/* The host wrote the header; still, nothing past the region is touched. */
static int map_region(void)
{
    int fd = open("/dev/mem", O_RDWR | O_SYNC | O_CLOEXEC);
    if (fd < 0) return fail("init: open /dev/mem");
    struct crvm_page *h = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, CRVM_SHARED_GPA);
    if (h == MAP_FAILED) {
        close(fd);
        return fail("init: map the region header");
    }
    uint32_t size = h->size, magic = h->magic;
    munmap(h, 4096);
    if (magic != CRVM_MAGIC || size < 4096 || size % 4096) {
        close(fd);
        errno = EPROTO;
        return fail("init: region magic 0x%x size %u", magic, size);
    }
    region = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, CRVM_SHARED_GPA);
    close(fd);
    if (region == MAP_FAILED) {
        region = NULL;
        return fail("init: map the region");
    }
    page = (struct crvm_page *)region;
    return 0;
}

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

/* A file holding `len` bytes at `p`, open for reading at offset 0 (the runner's JOB_FD). */
static int file_with(const char *path, const void *p, size_t len)
{
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) return fail("init: create %s", path);
    if (write_all(fd, p, len) < 0 || lseek(fd, 0, SEEK_SET) < 0) {
        close(fd);
        return fail("init: write %s", path);
    }
    return fd;
}

static char *read_runner(void)
{
    static char src[1 << 20];
    int fd = open(RUNNER, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return fail("init: open " RUNNER), NULL;
    ssize_t n = read(fd, src, sizeof src - 1);
    close(fd);
    if (n <= 0 || n == (ssize_t)sizeof src - 1) return fail("init: read " RUNNER), NULL;
    src[n] = '\0';
    return src;
}

static void set_limit(int res, uint64_t v, uint64_t hard_extra)
{
    struct rlimit r = { v, v + hard_extra };
    if (v && setrlimit(res, &r) < 0) _exit(126);
}

/* dup2() onto itself keeps close-on-exec: a descriptor already at its number needs the flag
 * cleared instead. The ones passed in are all above 2, so none is overwritten early except
 * by design (3 and 4 go last). */
static int move_fd(int fd, int to)
{
    if (fd == to) return fcntl(fd, F_SETFD, 0);
    return dup2(fd, to);
}

static _Noreturn void child(int job_fd, int out_fd, int err_fd, int rep_fd, const char *src)
{
    /* Fixed descriptor numbers for the runner: 3 = job, 4 = report. */
    if (move_fd(out_fd, 1) < 0 || move_fd(err_fd, 2) < 0 || move_fd(job_fd, 3) < 0 ||
        move_fd(rep_fd, 4) < 0)
        _exit(125);
    setsid();
    /* SIGXCPU at the limit, SIGKILL a second later if that is caught. */
    set_limit(RLIMIT_CPU, (page->cpu_ms + 999) / 1000, 1);
    set_limit(RLIMIT_AS, page->memory_bytes, 0);
    set_limit(RLIMIT_NPROC, page->max_procs, 0);
    /* The code runs as nobody: no /dev/mem, no I/O ports, so it cannot write the result
     * page or ring the doorbell itself (the host checks what it gets all the same). */
    if (setgroups(0, NULL) < 0 || setgid(NOBODY) < 0 || setuid(NOBODY) < 0) {
        dprintf(2, "init: cannot run as nobody: %s\n", strerror(errno));
        _exit(125);
    }
    /* The ns tier's system-call filter, as the host built it: the guest kernel's surface
     * narrowed the same way (no ptrace, mount, namespaces, bpf, keyrings, odd sockets...). */
    if (page->filter.len) {
        struct sock_fprog prog = { (unsigned short)(page->filter.len / sizeof(struct sock_filter)),
                                   (struct sock_filter *)(region + page->filter.off) };
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
            prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0) {
            dprintf(2, "init: seccomp filter: %s\n", strerror(errno));
            _exit(125);
        }
    }
    if (chdir("/tmp") < 0) {
        dprintf(2, "init: chdir /tmp: %s\n", strerror(errno));
        _exit(125);
    }
    char *argv[] = { "python3", "-I", "-c", (char *)src, "3", "4", NULL };
    char *envp[] = { "PATH=/usr/bin:/bin", "HOME=/tmp", "LANG=C.UTF-8", NULL };
    execve(PYTHON, argv, envp);
    _exit(127);
}

/* Waits for the runner, killing its session at the wall clock; 0 or -1. */
static int wait_runner(pid_t pid, int *status, int *timed_out)
{
    uint64_t deadline = mono_ns() + (uint64_t)(page->wall_ms ? page->wall_ms : 10000) * 1000000;
    *timed_out = 0;
    for (;;) {
        pid_t r = waitpid(pid, status, WNOHANG);
        if (r == pid) return 0;
        if (r < 0 && errno != EINTR) return fail("init: waitpid");
        if (mono_ns() >= deadline && !*timed_out) {
            *timed_out = 1;
            kill(-pid, SIGKILL);
            kill(pid, SIGKILL);
        }
        struct timespec ts = { 0, 1000000 };     /* 1 ms: the run's own time dwarfs it */
        nanosleep(&ts, NULL);
    }
}

/* Whether the runner's death by `sig` was RLIMIT_CPU's doing. */
static int cpu_limit_hit(int sig)
{
    struct rusage ru;
    if (sig == SIGXCPU) return 1;
    if (sig != SIGKILL || getrusage(RUSAGE_CHILDREN, &ru) < 0) return 0;
    uint64_t ms = (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000 +
                  (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1000;
    return ms >= page->cpu_ms;
}

/* Copies up to max bytes of the file into the region at *pos; sets the span. 1 when cut. */
static int put_file(int fd, struct crvm_span *span, uint32_t max, uint32_t *pos)
{
    struct stat st;
    uint32_t room = page->size > *pos ? page->size - *pos : 0;
    uint64_t want = 0;
    span->off = *pos;
    span->len = 0;
    if (fd < 0 || fstat(fd, &st) < 0) return 0;
    want = (uint64_t)st.st_size;
    uint32_t n = (uint32_t)(want < max ? want : max);
    if (n > room) n = room;
    ssize_t got = pread(fd, region + *pos, n, 0);
    if (got < 0) got = 0;
    span->len = (uint32_t)got;
    *pos += ((uint32_t)got + 63) & ~63u;
    return want > span->len;
}

/* ---- /out into the artifacts span (proto.h) -------------------------------------------- */

typedef struct {
    uint32_t pos, end;          /* the next free byte of the span, and its end */
    uint32_t files, entries;
    uint64_t bytes;
} art_walk;

/* One record; a file's content is read from fd. -1 when it does not fit. */
static int put_entry(art_walk *a, uint8_t type, const char *rel, int fd, uint32_t size)
{
    struct crvm_entry e = { .type = type, .path_len = (uint32_t)strlen(rel) };
    uint64_t need = sizeof e + (uint64_t)e.path_len + size;
    if (a->pos + need > a->end) return -1;
    uint8_t *p = region + a->pos;
    memcpy(p + sizeof e, rel, e.path_len);
    while (e.size < size) {
        ssize_t got = pread(fd, p + sizeof e + e.path_len + e.size, size - e.size, e.size);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) break;
        e.size += (uint32_t)got;
    }
    memcpy(p, &e, sizeof e);
    a->pos += (uint32_t)(sizeof e + e.path_len + e.size);
    return 0;
}

static int cmp_names(const void *x, const void *y)
{
    return strcmp(*(char *const *)x, *(char *const *)y);
}

/* The walk of sandbox_artifacts_collect() (sandbox/artifact.c), entry for entry, so that the
 * host's copy of the tree yields what the ns tier's /out would. */
static void walk_out(art_walk *a, int dirfd, const char *prefix, int depth)
{
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *de;
    int fd = dup(dirfd);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0) close(fd);
        return;
    }
    while ((de = readdir(d)) && a->entries < SANDBOX_ARTIFACT_MAX_ENTRIES) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
        a->entries++;
        if (n == cap) {
            char **nn = realloc(names, (cap = cap ? cap * 2 : 16) * sizeof *nn);
            if (!nn) break;
            names = nn;
        }
        if (!(names[n] = strdup(de->d_name))) break;
        n++;
    }
    if (n) qsort(names, n, sizeof *names, cmp_names);
    for (size_t i = 0; i < n; i++) {
        char rel[SANDBOX_ARTIFACT_NAME_MAX];
        struct stat sb;
        if ((size_t)snprintf(rel, sizeof rel, "%s%s", prefix, names[i]) >= sizeof rel ||
            fstatat(dirfd, names[i], &sb, AT_SYMLINK_NOFOLLOW) < 0)
            continue;
        if (S_ISDIR(sb.st_mode)) {
            char sub[SANDBOX_ARTIFACT_NAME_MAX];
            if (put_entry(a, CRVM_ENT_DIR, rel, -1, 0) < 0) break;
            if (depth >= SANDBOX_ARTIFACT_MAX_DEPTH) continue;
            int cfd = openat(dirfd, names[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (cfd < 0) continue;
            if ((size_t)snprintf(sub, sizeof sub, "%s/", rel) < sizeof sub)
                walk_out(a, cfd, sub, depth + 1);
            close(cfd);
            continue;
        }
        if (!S_ISREG(sb.st_mode)) {
            if (put_entry(a, S_ISLNK(sb.st_mode) ? CRVM_ENT_SYMLINK : CRVM_ENT_OTHER, rel, -1,
                          0) < 0)
                break;
            continue;
        }
        int cfd = openat(dirfd, names[i], O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        if (cfd < 0) continue;
        int sent = -1;
        if (fstat(cfd, &sb) == 0 && S_ISREG(sb.st_mode) && a->files < page->max_artifacts &&
            a->bytes + (uint64_t)sb.st_size <= page->artifact_bytes &&
            (sent = put_entry(a, CRVM_ENT_FILE, rel, cfd, (uint32_t)sb.st_size)) == 0) {
            a->files++;
            a->bytes += (uint64_t)sb.st_size;
        }
        close(cfd);
        if (sent < 0 && put_entry(a, CRVM_ENT_DROPPED, rel, -1, 0) < 0) break;
    }
    for (size_t i = 0; i < n; i++) free(names[i]);
    free(names);
    closedir(d);
}

/* Fills the artifacts span from *pos with what the code left in /out. */
static void put_artifacts(uint32_t *pos)
{
    uint32_t start = *pos < page->size ? *pos : page->size;
    uint64_t end = (uint64_t)start + page->max_artifact_span;
    art_walk a = { .pos = start, .end = end < page->size ? (uint32_t)end : page->size };
    int fd = open("/out", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        struct statvfs sv;
        if (fstatvfs(fd, &sv) == 0 && (sv.f_bavail == 0 || sv.f_favail == 0))
            page->result_flags |= CRVM_OUT_FULL;
        walk_out(&a, fd, "", 0);
        close(fd);
    }
    page->artifacts = (struct crvm_span){ start, a.pos - start };
    *pos = (a.pos + 63) & ~63u;
}

int main(void)
{
    uint64_t t0 = mono_ns(), t_run = 0, t_end = 0;
    int job_fd = -1, out_fd = -1, err_fd = -1, rep_fd = -1, status = 0, timed_out = 0;
    const char *src = NULL;
    pid_t pid = -1;

    if (ioperm(CRVM_DOORBELL_PORT, 4, 1) < 0) fail("init: ioperm");
    else if (mount_system() == 0 && map_region() == 0) ring(CRVM_RING_BOOTED);
    if (!page) {
        fprintf(stderr, "%s", failure);
        power_off();
    }
    if (!failure[0]) {
        struct crvm_span j = page->job;
        struct crvm_span fl = page->filter;
        if (j.off < page->header_size || (uint64_t)j.off + j.len > page->size) {
            errno = EPROTO;
            fail("init: job span %u+%u outside the region", j.off, j.len);
        } else if (fl.len && (fl.off < page->header_size || (uint64_t)fl.off + fl.len > page->size ||
                              fl.off % 8 || fl.len % sizeof(struct sock_filter) ||
                              fl.len / sizeof(struct sock_filter) > BPF_MAXINSNS)) {
            errno = EPROTO;
            fail("init: filter span %u+%u", fl.off, fl.len);
        }
        mkdir(CAPTURE, 0700);
        if (!failure[0] && mount_scratch() == 0 && seal_data() == 0 && (job_fd = file_with(CAPTURE "/job", region + j.off, j.len)) >= 0 &&
            (out_fd = file_with(CAPTURE "/stdout", "", 0)) >= 0 &&
            (err_fd = file_with(CAPTURE "/stderr", "", 0)) >= 0 &&
            (rep_fd = file_with(CAPTURE "/report", "", 0)) >= 0)
            src = read_runner();
    }
    if (src && !failure[0]) {
        t_run = mono_ns();
        if ((pid = fork()) < 0) fail("init: fork");
        else if (pid == 0) child(job_fd, out_fd, err_fd, rep_fd, src);
        else wait_runner(pid, &status, &timed_out);
        t_end = mono_ns();
    }
    kill(-1, SIGKILL);                    /* whatever the code left running */
    /* Reaped before /out is read, so that nothing still writes there (at most 2 s). */
    for (int i = 0; i < 2000 && waitpid(-1, NULL, WNOHANG) >= 0; i++) {
        struct timespec ts = { 0, 1000000 };
        nanosleep(&ts, NULL);
    }

    /* Results after the job and the filter, whatever the host's layout. */
    uint64_t after = (uint64_t)page->job.off + page->job.len;
    if (page->filter.len && (uint64_t)page->filter.off + page->filter.len > after)
        after = (uint64_t)page->filter.off + page->filter.len;
    uint32_t pos = after < page->size ? (uint32_t)((after + 63) & ~63ull) : page->size;
    page->result_flags = 0;
    page->limit = 0;
    if (failure[0]) {
        page->exited = 1;
        page->exit_code = 2;
        page->term_signal = 0;
        uint32_t n = (uint32_t)strlen(failure);
        if (n > page->max_stderr) n = page->max_stderr;
        if (pos + n > page->size) n = pos < page->size ? page->size - pos : 0;
        memcpy(region + pos, failure, n);
        page->err = (struct crvm_span){ pos, n };
        page->out = page->report = page->artifacts = (struct crvm_span){ pos, 0 };
    } else {
        page->exited = WIFEXITED(status) ? 1 : 0;
        page->exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 0;
        page->term_signal = WIFSIGNALED(status) ? (uint32_t)WTERMSIG(status) : 0;
        if (put_file(out_fd, &page->out, page->max_stdout, &pos)) {
            page->result_flags |= CRVM_OUT_TRUNCATED;
            page->limit = SANDBOX_LIMIT_OUTPUT;
        }
        if (put_file(err_fd, &page->err, page->max_stderr, &pos))
            page->result_flags |= CRVM_ERR_TRUNCATED;
        put_file(rep_fd, &page->report, page->max_report, &pos);
        put_artifacts(&pos);
        if (timed_out) page->limit = SANDBOX_LIMIT_WALL;
        else if (WIFSIGNALED(status) && cpu_limit_hit(WTERMSIG(status)))
            page->limit = SANDBOX_LIMIT_CPU;
    }
    page->guest_ns[0] = t0;
    page->guest_ns[1] = t_run;
    page->guest_ns[2] = t_end;
    page->guest_ns[3] = mono_ns();
    ring(CRVM_RING_RESULT);
    power_off();
}
