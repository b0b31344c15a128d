/* sandbox/guest/init.c: PID 1 of the kvm tier's guest (static; sandbox/guest/build.sh).
 *
 * Maps the job/result region (sandbox/kvm/proto.h) through /dev/mem and runs the job in the
 * ns tier itself, linked in: the code meets inside the VM the very sandbox it meets on a host
 * without KVM (namespaces, seccomp filter, cgroup limits, the same /, /tmp, /out and /dev), so
 * the two tiers differ only in what is underneath. Then it copies stdout, stderr, the
 * runner's report and /out into the region, rings the doorbell and powers off. Whatever
 * fails, it still rings, with CRVM_SETUP_FAILED and the reason as stderr, so the host always
 * learns why; when even the region cannot be mapped, the reason goes to the serial console
 * and the reset tells the host the guest gave up.
 */
#include <errno.h>
#include <math.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/random.h>
#include <sys/io.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sandbox/kvm/proto.h"
#include "sandbox/ns/ns.h"

static struct crvm_page *page;
static uint8_t *region;
static uint32_t region_size;            /* as mapped at boot */
static char failure[512];

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static volatile uint32_t *doorbell_page;   /* mapped after a restore (resume()) */

static void ring(uint32_t value)
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST);      /* the page before the doorbell */
    if (doorbell_page) *doorbell_page = value;
    else outl(value, CRVM_DOORBELL_PORT);
}

static _Noreturn void power_off(void)
{
    sync();
    reboot(RB_POWER_OFF);      /* reboot=k on the command line: the host sees the reset */
    for (;;) pause();
}

/* Records the first failure; the host then gets CRVM_SETUP_FAILED and this as stderr. */
static int fail(const char *fmt, ...)
{
    if (!failure[0]) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(failure, sizeof failure, fmt, ap);
        va_end(ap);
        size_t n = strlen(failure);
        if (errno) snprintf(failure + n, sizeof failure - n, ": %s", strerror(errno));
        n = strlen(failure);
        snprintf(failure + n, sizeof failure - n, "\n");
    }
    return -1;
}

static int mount_one(const char *src, const char *dir, const char *type, const char *opts)
{
    mkdir(dir, 0755);
    if (mount(src, dir, type, MS_NOSUID | MS_NODEV | MS_NOEXEC, opts) < 0)
        return fail("init: mount %s", dir);
    return 0;
}

/* pivot_root(2) refuses to move the initramfs (rootfs) away, and the ns tier pivots into a
 * root of its own: the image is bound onto itself and that mount made our root, with rootfs
 * only beneath it (what switch_root does, without copying anything). */
static int leave_rootfs(void)
{
    if (mkdir("/.image", 0700) < 0 || mount("/", "/.image", NULL, MS_BIND, NULL) < 0 ||
        chdir("/.image") < 0 || mount(".", "/", NULL, MS_MOVE, NULL) < 0 || chroot(".") < 0 ||
        chdir("/") < 0)
        return fail("init: leave the initramfs root");
    rmdir("/.image");
    return 0;
}

/* What the ns tier takes from its host: /dev's four devices, /proc, and a cgroup2 hierarchy
 * whose root hands memory and pids to the run's cgroup. */
static int mount_system(void)
{
    int fd;
    if (mount("dev", "/dev", "devtmpfs", MS_NOSUID | MS_NOEXEC, NULL) < 0)
        return fail("init: mount /dev");
    if (mount_one("proc", "/proc", "proc", NULL) < 0 || mount_one("sys", "/sys", "sysfs", NULL) < 0 ||
        mount_one("cgroup2", "/sys/fs/cgroup", "cgroup2", NULL) < 0)
        return -1;
    if ((fd = open("/sys/fs/cgroup/cgroup.subtree_control", O_WRONLY | O_CLOEXEC)) < 0)
        return fail("init: open cgroup.subtree_control");
    if (write(fd, "+memory +pids", 13) != 13) {
        close(fd);
        return fail("init: enable the memory and pids controllers");
    }
    close(fd);
    return 0;
}

/* ---- the package image -------------------------------------------------------------------
 * When the host gives the VM its package image (sandbox/guest/build-pkgs.sh), the kernel sees
 * legacy persistent memory in the e820 map and registers an "e820_pmem" platform device. The
 * modules in /modules (build.sh) make it /dev/pmem0 and read EROFS; the image is mounted
 * read-only over /usr, with DAX when the kernel can (the guest then maps the host file's
 * pages, copying none into its RAM), so the ns tier's bind of /usr carries it to the code.
 * Module loading is then turned off for the rest of the VM's life, image or not. */
static const char *const pkg_modules[] = { "libnvdimm", "nd_btt", "nd_pmem", "nd_e820",
                                           "libcrc32c", "erofs" };
static int pkgs_mounted;

static int load_module(const char *name)
{
    char path[64];
    snprintf(path, sizeof path, "/modules/%s.ko", name);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return fail("init: package image: module %s", name);
    long r = syscall(SYS_finit_module, fd, "", 0);
    close(fd);
    if (r < 0 && errno != EEXIST) return fail("init: package image: load %s", name);
    return 0;
}

static int mount_pkgs(void)
{
    int rc = 0;
    if (access("/sys/bus/platform/devices/e820_pmem", F_OK) == 0) {
        for (size_t i = 0; i < sizeof pkg_modules / sizeof pkg_modules[0] && rc == 0; i++)
            rc = load_module(pkg_modules[i]);
        /* The nvdimm bus probes its regions asynchronously. */
        for (int i = 0; rc == 0 && access("/dev/pmem0", F_OK) < 0; i++) {
            if (i == 6000) {
                errno = ETIMEDOUT;
                rc = fail("init: package image: no /dev/pmem0");
            }
            usleep(10000);
        }
        if (rc == 0) {
            unsigned long fl = MS_RDONLY | MS_NODEV | MS_NOSUID;
            /* Without DAX the image's pages are copied into the guest's page cache as read. */
            if (mount("/dev/pmem0", "/usr", "erofs", fl, "dax") < 0 &&
                mount("/dev/pmem0", "/usr", "erofs", fl, NULL) < 0)
                rc = fail("init: package image: mount /dev/pmem0 on /usr");
            pkgs_mounted = rc == 0;
        }
    }
    int fd = open("/proc/sys/kernel/modules_disabled", O_WRONLY | O_CLOEXEC);
    if (fd < 0 || write(fd, "1", 1) != 1) {
        if (fd >= 0) close(fd);
        return fail("init: turn module loading off");
    }
    close(fd);
    return rc;
}

/* The data directory came as a second initramfs archive (sandbox/kvm/data.c): read-only from
 * here on, as the ns tier's bind of it is; 1 when there is one. */
static int seal_data(void)
{
    struct stat sb;
    if (lstat("/data", &sb) < 0) return 0;              /* the job has no data directory */
    if (mount("/data", "/data", NULL, MS_BIND | MS_REC, NULL) < 0 ||
        mount(NULL, "/data", NULL, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV,
              NULL) < 0)
        return fail("init: make /data read-only");
    return 1;
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
    region_size = size;
    return 0;
}

/* ---- a VM restored from the snapshot ------------------------------------------------------
 * It wakes where the snapshot's VM rang CRVM_RING_READY, with that VM's clock and random
 * state, in a region the host has filled since: the header is checked again, the clock set
 * to the host's, the host's entropy fed to the kernel's pool and the pool reseeded, so that
 * no two restored VMs share random state; the job's /data comes in the region. */

static uint32_t hex8(const uint8_t *p)
{
    uint32_t v = 0;
    for (int i = 0; i < 8; i++) {
        uint8_t c = p[i];
        uint32_t d = c >= '0' && c <= '9' ? (uint32_t)(c - '0')
                   : c >= 'A' && c <= 'F' ? (uint32_t)(c - 'A' + 10)
                   : c >= 'a' && c <= 'f' ? (uint32_t)(c - 'a' + 10) : 16u;
        if (d == 16) return UINT32_MAX;
        v = v << 4 | d;
    }
    return v;
}

/* "data" or "data/..." with no empty, "." or ".." component. */
static int data_name_ok(const char *n)
{
    if (strncmp(n, "data", 4) || (n[4] && n[4] != '/')) return 0;
    for (const char *c = n; *c;) {
        const char *e = strchr(c, '/');
        size_t len = e ? (size_t)(e - c) : strlen(c);
        if (len == 0 || (len == 1 && c[0] == '.') || (len == 2 && c[0] == '.' && c[1] == '.'))
            return 0;
        c += len + (e ? 1 : 0);
        if (e && !*c) return 0;
    }
    return 1;
}

/* The cpio "newc" archive of sandbox/kvm/data.c, unpacked under / (as the kernel unpacks
 * it at a cold boot): directories, files and symlinks only, every length inside the span. */
static int unpack_data(const uint8_t *p, uint32_t n)
{
    uint32_t pos = 0;
    errno = EPROTO;
    while (pos + 110 <= n) {
        const uint8_t *h = p + pos;
        if (memcmp(h, "070701", 6)) return fail("init: data archive: bad header at %u", pos);
        uint32_t mode = hex8(h + 14), size = hex8(h + 54), nlen = hex8(h + 94);
        if (mode == UINT32_MAX || size == UINT32_MAX || nlen == UINT32_MAX || nlen == 0 ||
            nlen > 4096 || nlen > n - pos - 110)
            return fail("init: data archive: bad entry at %u", pos);
        const char *name = (const char *)h + 110;
        if (name[nlen - 1] != '\0') return fail("init: data archive: name at %u", pos);
        uint32_t data = (pos + 110 + nlen + 3) & ~3u;
        if (data > n || size > n - data) return fail("init: data archive: entry past the end");
        if (!strcmp(name, "TRAILER!!!")) return 0;
        if (!data_name_ok(name)) return fail("init: data archive: name %.64s", name);
        char path[4200];
        snprintf(path, sizeof path, "/%s", name);
        int ok;
        switch (mode & S_IFMT) {
        case S_IFDIR:
            ok = (mkdir(path, 0700) == 0 || errno == EEXIST) && chmod(path, mode & 07777) == 0;
            break;
        case S_IFLNK: {
            char target[4097];
            if (size >= sizeof target) return fail("init: data archive: long link");
            memcpy(target, p + data, size);
            target[size] = '\0';
            ok = symlink(target, path) == 0;
            break;
        }
        case S_IFREG: {
            int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
            ok = fd >= 0;
            for (uint32_t done = 0; ok && done < size;) {
                ssize_t w = write(fd, p + data + done, size - done);
                if (w < 0 && errno == EINTR) continue;
                if (w <= 0) ok = 0;
                else done += (uint32_t)w;
            }
            if (fd >= 0 && (fchmod(fd, mode & 07777) < 0 || close(fd) < 0)) ok = 0;
            break;
        }
        default:
            errno = EPROTO;
            ok = 0;
        }
        if (!ok) return fail("init: data archive: %.64s", name);
        pos = (data + size + 3) & ~3u;
    }
    errno = EPROTO;
    return fail("init: data archive: no trailer");
}

static int resume(void)
{
    /* From here on the doorbell is rung through memory (proto.h says why). */
    int fd = open("/dev/mem", O_RDWR | O_SYNC | O_CLOEXEC);
    void *bell = fd < 0 ? MAP_FAILED : mmap(NULL, 4096, PROT_WRITE, MAP_SHARED, fd,
                                            (off_t)CRVM_DOORBELL_GPA);
    if (fd >= 0) close(fd);
    if (bell == MAP_FAILED) return fail("init: map the doorbell page");
    doorbell_page = bell;
    if (page->magic != CRVM_MAGIC || page->version != CRVM_VERSION || page->size != region_size ||
        page->header_size != sizeof *page) {
        errno = EPROTO;
        return fail("init: restored into a region of another layout (size %u, was %u)",
                    page->size, region_size);
    }
    struct timespec ts = { (time_t)(page->host_realtime_ns / 1000000000ull),
                           (long)(page->host_realtime_ns % 1000000000ull) };
    if (page->host_realtime_ns && clock_settime(CLOCK_REALTIME, &ts) < 0)
        return fail("init: set the clock");
    if (page->entropy_len) {
        struct { struct rand_pool_info info; uint8_t buf[sizeof page->entropy]; } e;
        uint32_t n = page->entropy_len < sizeof e.buf ? page->entropy_len : sizeof e.buf;
        e.info.entropy_count = (int)(n * 8);
        e.info.buf_size = (int)n;
        memcpy(e.buf, page->entropy, n);
        int fd = open("/dev/urandom", O_WRONLY | O_CLOEXEC);
        if (fd < 0 || ioctl(fd, RNDADDENTROPY, &e) < 0 || ioctl(fd, RNDRESEEDCRNG) < 0) {
            if (fd >= 0) close(fd);
            return fail("init: reseed the kernel's random pool");
        }
        close(fd);
    }
    struct crvm_span d = page->data;
    if (d.len) {
        if (d.off < page->header_size || (uint64_t)d.off + d.len > page->size) {
            errno = EPROTO;
            return fail("init: data span %u+%u outside the region", d.off, d.len);
        }
        return unpack_data(region + d.off, d.len);
    }
    return 0;
}

/* Copies up to max bytes into the region at *pos and sets the span; 1 when it was cut. */
static int put_bytes(const void *p, size_t len, struct crvm_span *span, uint32_t max, uint32_t *pos)
{
    uint32_t room = page->size > *pos ? page->size - *pos : 0;
    uint32_t n = (uint32_t)(len < max ? len : max);
    if (n > room) n = room;
    span->off = *pos;
    span->len = n;
    if (n) memcpy(region + *pos, p, n);
    *pos += (n + 63) & ~63u;
    return len > n;
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

/* The walk of sandbox_artifacts_collect() (sandbox/job/artifact.c), entry for entry, so that the
 * host's copy of the tree yields what the ns tier's /out would. */
static void walk_out(art_walk *a, int dirfd, const char *prefix, int depth)
{
    char **names;
    size_t n, budget = SANDBOX_ARTIFACT_MAX_ENTRIES - a->entries;
    if (sandbox_dir_names(dirfd, &budget, &names, &n) < 0) return;
    a->entries = SANDBOX_ARTIFACT_MAX_ENTRIES - (uint32_t)budget;
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
        /* A file of two names is refused like a FIFO (the host notes it as a non-file). */
        if (!S_ISREG(sb.st_mode) || sb.st_nlink != 1) {
            if (put_entry(a, S_ISLNK(sb.st_mode) ? CRVM_ENT_SYMLINK : CRVM_ENT_OTHER, rel, -1,
                          0) < 0)
                break;
            continue;
        }
        int cfd = openat(dirfd, names[i], O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        if (cfd < 0) continue;
        int sent = -1;
        if (fstat(cfd, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_nlink == 1 &&
            a->files < page->max_artifacts &&
            a->bytes + (uint64_t)sb.st_size <= page->artifact_bytes &&
            (sent = put_entry(a, CRVM_ENT_FILE, rel, cfd, (uint32_t)sb.st_size)) == 0) {
            a->files++;
            a->bytes += (uint64_t)sb.st_size;
        }
        close(cfd);
        if (sent < 0 && put_entry(a, CRVM_ENT_DROPPED, rel, -1, 0) < 0) break;
    }
    sandbox_names_free(names, n);
}

/* Fills the artifacts span from *pos with what the code left in /out (fd: the ns tier's). */
static void put_artifacts(int fd, uint32_t *pos)
{
    uint32_t start = *pos < page->size ? *pos : page->size;
    uint64_t end = (uint64_t)start + page->max_artifact_span;
    art_walk a = { .pos = start, .end = end < page->size ? (uint32_t)end : page->size };
    if (fd >= 0) walk_out(&a, fd, "", 0);
    page->artifacts = (struct crvm_span){ start, a.pos - start };
    *pos = (a.pos + 63) & ~63u;
}

/* The limits the host set, as the ns tier takes them. */
static void page_limits(sandbox_limits *lim)
{
    memset(lim, 0, sizeof *lim);
    lim->wall_s = page->wall_ms / 1000.0;
    lim->cpu_s = page->cpu_ms / 1000.0;
    lim->memory_bytes = page->memory_bytes;
    lim->max_procs = page->max_procs;
    lim->max_stdout = page->max_stdout;
    lim->max_stderr = page->max_stderr;
    lim->tmp_bytes = page->tmp_bytes;
    lim->artifact_bytes = page->artifact_bytes;
    lim->max_artifacts = page->max_artifacts;
    sandbox_limits_resolve(lim);
}

/* ---- the warm python of the snapshot ----------------------------------------------------
 * The snapshot's init starts a warm ns worker (ns_run_warm_hand(): the runner started, the
 * preload list imported, the code's process forked) and rings ready from the worker's ready()
 * callback, so every restored VM wakes with python already waiting. The worker's sandbox is
 * made with the snapshot's limits (the host's defaults), as a pool's key. A job of other
 * memory or process limits takes it all the same, set to the job's limits first (retarget());
 * one of other /tmp or /out limits, more CPU time, or /data (the worker has none), is turned
 * away (ready() returns NULL) and runs cold as at a boot. */
#define GUEST_PRELOAD "decimal,fractions,statistics,datetime,json,csv,collections,math,re"
/* ... and with the package image, the finance stack's core (the rest is imported by the
 * code that wants it: scipy, sympy, statsmodels and matplotlib would each add seconds to
 * the snapshot's boot under emulation and memory to every restored VM's warm python). */
#define GUEST_PRELOAD_PKGS GUEST_PRELOAD ",numpy,pandas"

static uint64_t t_start, t_run, t_end;
static int restored;                    /* this VM woke from the snapshot */
static char warm_note[160];
static sandbox_limits warm_key;
static sandbox_job warm_job;
static ns_handoff *warm_hand;

static const char *limits_differ(const sandbox_limits *a, const sandbox_limits *b)
{
    if (a->tmp_bytes != b->tmp_bytes) return "/tmp size";
    if (a->artifact_bytes != b->artifact_bytes || a->max_artifacts != b->max_artifacts)
        return "/out size";
    /* The worker's RLIMIT_CPU is only a backstop: the job's own limit is the ns tier's clock
     * on the cgroup, so any job within it may use the worker. */
    if (ceil(a->cpu_s) > ceil(b->cpu_s)) return "CPU limit";
    return NULL;
}

/* The file's first line into buf; 0, or -1. */
static int read_line(const char *path, char *buf, size_t n)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t got = fd < 0 ? -1 : read(fd, buf, n - 1);
    if (fd >= 0) close(fd);
    if (got <= 0) return -1;
    buf[got] = '\0';
    buf[strcspn(buf, "\n")] = '\0';
    return 0;
}

static int write_text(const char *dir, const char *file, unsigned long long v)
{
    char path[512], num[32];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    int fd = open(path, O_WRONLY | O_CLOEXEC), n = snprintf(num, sizeof num, "%llu", v);
    int ok = fd >= 0 && write(fd, num, (size_t)n) == n;
    if (fd >= 0) close(fd);
    return ok ? 0 : -1;
}

/* The warm worker set to the job's memory and process limits where they are not the key's,
 * as the ns tier would have made it for the job: its cgroup's memory.max and pids.max
 * (cgroup.c) and the RLIMIT_DATA and RLIMIT_NPROC of its runner and of the code's process it
 * forked (ns.c's plan_rlimits()). What the warm python already holds counts against the job's
 * memory, as on a warm pool's worker; one that holds more, or more processes, than the job
 * may is refused: NULL, or what stopped it. */
static const char *retarget(pid_t runner, const sandbox_limits *job, const sandbox_limits *key)
{
    char path[352], line[256], dir[320];
    if (job->memory_bytes == key->memory_bytes && job->max_procs == key->max_procs) return NULL;
    /* The runner's cgroup, as init (in the root cgroup namespace) sees it: "0::/name". */
    snprintf(path, sizeof path, "/proc/%ld/cgroup", (long)runner);
    if (read_line(path, line, sizeof line) < 0 || strncmp(line, "0::/", 4) ||
        strchr(line + 4, '/'))
        return "its cgroup";
    snprintf(dir, sizeof dir, "/sys/fs/cgroup/%s", line + 4);
    snprintf(path, sizeof path, "%s/memory.current", dir);
    if (read_line(path, line, sizeof line) < 0 || strtoull(line, NULL, 10) >= job->memory_bytes)
        return "memory limit, below what the warm python holds";
    snprintf(path, sizeof path, "%s/pids.current", dir);
    if (read_line(path, line, sizeof line) < 0 || strtoull(line, NULL, 10) > job->max_procs)
        return "process limit";
    pid_t pids[2] = { runner, 0 };
    snprintf(path, sizeof path, "/proc/%ld/task/%ld/children", (long)runner, (long)runner);
    if (read_line(path, line, sizeof line) == 0) pids[1] = (pid_t)atol(line);
    struct rlimit data = { job->memory_bytes, job->memory_bytes };
    struct rlimit nproc = { job->max_procs + 1, job->max_procs + 1 };
    for (int i = 0; i < 2; i++)
        if (pids[i] > 0 && (prlimit(pids[i], RLIMIT_DATA, &data, NULL) < 0 ||
                            prlimit(pids[i], RLIMIT_NPROC, &nproc, NULL) < 0))
            return "rlimits";
    if (write_text(dir, "memory.max", (unsigned long long)job->memory_bytes) < 0 ||
        write_text(dir, "pids.max", job->max_procs) < 0)
        return "cgroup limits";
    return NULL;
}

static int job_span_ok(void)
{
    struct crvm_span j = page->job;
    if (j.off < page->header_size || (uint64_t)j.off + j.len > page->size) {
        errno = EPROTO;
        return fail("init: job span %u+%u outside the region", j.off, j.len);
    }
    return 0;
}

/* The snapshot point (and, in each restored VM, the return from it). */
static const sandbox_job *guest_ready(ns_warm *w, int pidfd, pid_t pid)
{
    const char *why;
    (void)w; (void)pidfd;
    ring(CRVM_RING_READY);
    restored = 1;
    t_start = mono_ns();
    if (resume() < 0 || job_span_ok() < 0) return NULL;
    sandbox_job_init(&warm_job);
    warm_job.tier = CR_TIER_NS;
    page_limits(&warm_job.limits);
    if (page->data.len) {
        snprintf(warm_note, sizeof warm_note, "python cold: the warm one has no /data");
        return NULL;
    }
    if ((why = limits_differ(&warm_job.limits, &warm_key))) {
        snprintf(warm_note, sizeof warm_note, "python cold: the job's %s differs from the "
                 "snapshot's", why);
        return NULL;
    }
    if ((why = retarget(pid, &warm_job.limits, &warm_key))) {
        snprintf(warm_note, sizeof warm_note, "python cold: the warm one could not take the "
                 "job's limits (%s)", why);
        return NULL;
    }
    warm_hand->job = (const char *)region + page->job.off;
    warm_hand->job_len = page->job.len;
    t_run = mono_ns();
    return &warm_job;
}

/* 1 when the job ran on the warm worker (oc and hand filled); 0 when it is still to run,
 * the VM restored (or, when the worker could not start, stopped at ready without it). */
static int run_warm(ns_handoff *hand, sandbox_outcome *oc)
{
    sandbox_job key;
    ns_warm w;
    cr_error err = { 0 };
    sandbox_job_init(&key);
    key.tier = CR_TIER_NS;
    page_limits(&key.limits);
    warm_key = key.limits;
    memset(&w, 0, sizeof w);
    w.preload = pkgs_mounted ? GUEST_PRELOAD_PKGS : GUEST_PRELOAD;
    w.chan = -1;
    w.cancel_fd = -1;
    w.ready = guest_ready;
    warm_hand = hand;
    cr_code rc = ns_run_warm_hand(&key, &w, hand, oc, &err);
    t_end = mono_ns();
    if (restored && rc == CR_OK && hand->job) return 1;
    /* Not used: its leftovers go before the job runs cold. */
    ns_warm_release(&w, 0);
    sandbox_outcome_free(oc);
    memset(oc, 0, sizeof *oc);
    if (hand->out_fd >= 0) close(hand->out_fd);
    cr_buf_free(&hand->report);
    hand->out_fd = -1;
    hand->job = NULL;
    if (!restored) {
        /* No warm python: the snapshot is taken without it. */
        snprintf(warm_note, sizeof warm_note, "python cold: no warm worker in the snapshot "
                 "(%.100s)", err.message);
        ring(CRVM_RING_READY);
        restored = 1;
        t_start = mono_ns();
        resume();
    } else if (rc != CR_OK && !warm_note[0]) {
        snprintf(warm_note, sizeof warm_note, "python cold: %.120s", err.message);
    }
    return 0;
}

int main(void)
{
    sandbox_outcome oc;
    ns_handoff hand = { .out_fd = -1 };
    int has_data = 0, warm = 0;

    t_start = mono_ns();
    memset(&oc, 0, sizeof oc);
    if (ioperm(CRVM_DOORBELL_PORT, 4, 1) < 0) fail("init: ioperm");
    else if (leave_rootfs() == 0 && mount_system() == 0 && map_region() == 0) ring(CRVM_RING_BOOTED);
    if (!page) {
        fprintf(stderr, "%s", failure);
        power_off();
    }
    if (!failure[0]) mount_pkgs();
    /* The snapshot is taken inside run_warm(); each restored VM goes on from there. */
    if (!failure[0] && (page->job_flags & CRVM_JOB_SNAPSHOT)) warm = run_warm(&hand, &oc);
    struct crvm_span j = page->job;
    if (!warm && !failure[0]) job_span_ok();
    if (!warm && !failure[0] && (has_data = seal_data()) >= 0) {
        sandbox_job job;
        cr_error err = { 0 };
        sandbox_job_init(&job);
        job.tier = CR_TIER_NS;
        job.data_dir = has_data ? "/data" : NULL;
        page_limits(&job.limits);
        hand.job = (const char *)region + j.off;
        hand.job_len = j.len;
        t_run = mono_ns();
        if (ns_run(&job, &hand, &oc, &err) != CR_OK) {
            errno = 0;
            fail("%s", err.message);
        }
        t_end = mono_ns();
    }

    /* Results after the job, whatever the host's layout. */
    uint64_t after = (uint64_t)page->job.off + page->job.len;
    uint32_t pos = after < page->size ? (uint32_t)((after + 63) & ~63ull) : page->size;
    page->result_flags = 0;
    page->limit = 0;
    page->limit_detail[0] = page->tier_note[0] = '\0';
    page->run_ns = page->cpu_ns = page->peak_bytes = 0;
    if (failure[0]) {
        page->exited = 1;
        page->exit_code = 2;
        page->term_signal = 0;
        page->result_flags = CRVM_SETUP_FAILED;
        put_bytes(failure, strlen(failure), &page->err, page->max_stderr, &pos);
        page->out = page->report = page->artifacts = (struct crvm_span){ pos, 0 };
    } else {
        page->exited = (uint32_t)oc.exited;
        page->exit_code = oc.exit_code;
        page->term_signal = (uint32_t)oc.term_signal;
        page->limit = (uint32_t)oc.limit;
        if (put_bytes(oc.stdout_buf.p, oc.stdout_buf.len, &page->out, page->max_stdout, &pos) ||
            oc.stdout_buf.truncated)
            page->result_flags |= CRVM_OUT_TRUNCATED;
        if (put_bytes(oc.stderr_buf.p, oc.stderr_buf.len, &page->err, page->max_stderr, &pos) ||
            oc.stderr_buf.truncated)
            page->result_flags |= CRVM_ERR_TRUNCATED;
        put_bytes(hand.report.p, hand.report.len, &page->report, page->max_report, &pos);
        put_artifacts(hand.out_fd, &pos);
        snprintf(page->limit_detail, sizeof page->limit_detail, "%s", oc.limit_detail);
        snprintf(page->tier_note, sizeof page->tier_note, "%.100s%s%s%.120s", oc.tier_note,
                 oc.tier_note[0] && (warm || warm_note[0]) ? "; " : "",
                 warm ? "python warm in the snapshot" : "", warm ? "" : warm_note);
        page->run_ns = (uint64_t)(oc.wall_s * 1e9);
        page->cpu_ns = (uint64_t)(oc.cpu_s * 1e9);
        page->peak_bytes = oc.peak_memory_bytes;
    }
    page->guest_ns[0] = t_start;
    page->guest_ns[1] = t_run;
    page->guest_ns[2] = t_end;
    page->guest_ns[3] = mono_ns();
    ring(CRVM_RING_RESULT);
    power_off();
}
