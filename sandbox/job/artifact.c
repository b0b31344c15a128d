/* sandbox/job/artifact.c: files the code left under /out, brought back to the host without ever
 * following a link the code planted: every step is an openat() relative to a directory
 * descriptor with O_NOFOLLOW, and the caller's directory is written the same way. Only
 * regular files with one link are copied, and each is written under a fresh name (O_EXCL)
 * and renamed over its destination, so nothing already in the caller's directory (a hard
 * link to another file, a FIFO that would block the copy) is ever opened. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox/job/job.h"

#define ARTIFACT_MAX_DEPTH SANDBOX_ARTIFACT_MAX_DEPTH
#define ARTIFACT_MAX_ENTRIES SANDBOX_ARTIFACT_MAX_ENTRIES
#define ARTIFACT_NAME_MAX SANDBOX_ARTIFACT_NAME_MAX

typedef struct {
    const sandbox_limits *lim;
    sandbox_outcome *out;
    const char *out_dir;
    uint64_t bytes;
    size_t entries, cap;
    int dropped;
} walk_ctx;

/* Appends "; <what><name>" to the note, cutting what does not fit. */
static void note(walk_ctx *w, const char *what, const char *name)
{
    char *n = w->out->artifact_note;
    size_t used = strlen(n), room = sizeof w->out->artifact_note - 1;
    const char *parts[3] = { used ? "; " : "", what, name };
    for (int i = 0; i < 3; i++)
        for (const char *p = parts[i]; *p && used < room; p++) n[used++] = *p;
    n[used] = 0;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void sandbox_names_free(char **names, size_t count)
{
    for (size_t i = 0; i < count; i++) free(names[i]);
    free(names);
}

int sandbox_dir_names(int dirfd, size_t *budget, char ***names, size_t *count)
{
    char **v = NULL;
    size_t n = 0, cap = 0;
    struct dirent *de;
    int fd = dup(dirfd), e;
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    *names = NULL;
    *count = 0;
    if (!d) {
        e = errno;
        if (fd >= 0) close(fd);
        errno = e;
        return -1;
    }
    rewinddir(d);    /* the descriptor is a dup: its position is shared */
    while (*budget > 0 && (de = readdir(d))) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
        (*budget)--;
        if (n == cap) {
            char **nv = realloc(v, (cap = cap ? cap * 2 : 16) * sizeof *nv);
            if (!nv) goto fail;
            v = nv;
        }
        if (!(v[n] = strdup(de->d_name))) goto fail;
        n++;
    }
    closedir(d);
    if (n) qsort(v, n, sizeof *v, cmp_names);
    *names = v;
    *count = n;
    return 0;
fail:
    closedir(d);
    sandbox_names_free(v, n);
    errno = ENOMEM;
    return -1;
}

/* Creates each directory of `rel` (its last component excluded) under dest, without following
 * symlinks; returns a descriptor of the innermost one, or -1. */
static int dest_parent(int dest, const char *rel, const char **base)
{
    char part[ARTIFACT_NAME_MAX];
    const char *p = rel, *slash;
    int fd = dup(dest);
    while (fd >= 0 && (slash = strchr(p, '/'))) {
        size_t n = (size_t)(slash - p);
        int next;
        memcpy(part, p, n);
        part[n] = 0;
        if (mkdirat(fd, part, 0755) < 0 && errno != EEXIST) { close(fd); return -1; }
        next = openat(fd, part, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        close(fd);
        fd = next;
        p = slash + 1;
    }
    *base = p;
    return fd;
}

#define TEMP_TRIES 8

/* A fresh file beside `base` in dir, named into tmp; -1 when `base` exists as anything but a
 * plain file (its own and only link), which is then left alone. */
static int dest_open(int dir, const char *base, char *tmp, size_t tmp_len)
{
    struct stat sb;
    if (fstatat(dir, base, &sb, AT_SYMLINK_NOFOLLOW) == 0 &&
        (!S_ISREG(sb.st_mode) || sb.st_nlink != 1)) {
        errno = EEXIST;
        return -1;
    }
    for (int i = 0; i < TEMP_TRIES; i++) {
        unsigned char r[8];
        char hex[2 * sizeof r + 1];
        int fd;
        randombytes_buf(r, sizeof r);
        sodium_bin2hex(hex, sizeof hex, r, sizeof r);
        snprintf(tmp, tmp_len, ".calcroute-%s.tmp", hex);
        fd = openat(dir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd >= 0 || errno != EEXIST) return fd;
    }
    return -1;
}

static cr_code keep_file(walk_ctx *w, int fd, const char *rel, uint64_t size, cr_error *err)
{
    crypto_hash_sha256_state st;
    unsigned char md[crypto_hash_sha256_BYTES], buf[65536];
    sandbox_artifact *a;
    int dfd = -1, pfd = -1;
    char *path = NULL, tmp[64] = "";
    const char *base = NULL;
    uint64_t done = 0;
    cr_code rc = CR_OK;

    if (w->out->artifact_count == w->cap) {
        size_t ncap = w->cap ? w->cap * 2 : 8;
        sandbox_artifact *n = realloc(w->out->artifacts, ncap * sizeof *n);
        if (!n) return cr_error_set(err, CR_ENOMEM, 0, 0, "sandbox: artifact list");
        w->out->artifacts = n;
        w->cap = ncap;
    }
    if (w->out_dir) {
        size_t plen = strlen(w->out_dir) + strlen(rel) + 2;
        int dest = open(w->out_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dest < 0) return cr_error_sys(err, CR_EIO, "sandbox: open artifact directory", errno);
        pfd = dest_parent(dest, rel, &base);
        close(dest);
        if (pfd >= 0) dfd = dest_open(pfd, base, tmp, sizeof tmp);
        if (dfd < 0) {
            note(w, "not copied (destination a link, a non-file or unwritable): ", rel);
            if (pfd >= 0) close(pfd);
            return CR_OK;
        }
        if (!(path = malloc(plen))) { rc = cr_error_set(err, CR_ENOMEM, 0, 0, "artifact path"); goto out; }
        snprintf(path, plen, "%s/%s", w->out_dir, rel);
    }
    crypto_hash_sha256_init(&st);
    while (done < size) {
        ssize_t n = read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        crypto_hash_sha256_update(&st, buf, (unsigned long long)n);
        for (ssize_t off = 0; dfd >= 0 && off < n;) {
            ssize_t m = write(dfd, buf + off, (size_t)(n - off));
            if (m < 0 && errno == EINTR) continue;
            if (m <= 0) { rc = cr_error_sys(err, CR_EIO, "sandbox: copy artifact", errno); goto out; }
            off += m;
        }
        done += (uint64_t)n;
    }
    crypto_hash_sha256_final(&st, md);
    if (dfd >= 0) {
        int e = close(dfd) < 0 ? errno : 0;
        dfd = -1;
        if (e) { rc = cr_error_sys(err, CR_EIO, "sandbox: copy artifact", e); goto out; }
        /* Refused where the destination is another user's in a sticky directory, say. */
        if (renameat(pfd, tmp, pfd, base) < 0) {
            note(w, "not copied (destination a link, a non-file or unwritable): ", rel);
            goto out;
        }
        tmp[0] = 0;
    }
    a = &w->out->artifacts[w->out->artifact_count];
    memset(a, 0, sizeof *a);
    if (!(a->name = strdup(rel))) { rc = cr_error_set(err, CR_ENOMEM, 0, 0, "artifact name"); goto out; }
    a->size = done;
    sodium_bin2hex(a->sha256, sizeof a->sha256, md, sizeof md);
    a->path = path;
    path = NULL;
    w->out->artifact_count++;
out:
    free(path);
    if (dfd >= 0) close(dfd);
    if (tmp[0]) unlinkat(pfd, tmp, 0);
    if (pfd >= 0) close(pfd);
    return rc;
}

static cr_code walk(walk_ctx *w, int dirfd, const char *prefix, int depth, cr_error *err)
{
    char **names;
    size_t n, budget = ARTIFACT_MAX_ENTRIES - w->entries;
    cr_code rc = CR_OK;

    if (sandbox_dir_names(dirfd, &budget, &names, &n) < 0)
        return errno == ENOMEM ? cr_error_set(err, CR_ENOMEM, 0, 0, "artifact names")
                               : cr_error_sys(err, CR_EIO, "sandbox: read /out", errno);
    w->entries = ARTIFACT_MAX_ENTRIES - budget;
    for (size_t i = 0; i < n && rc == CR_OK; i++) {
        char rel[ARTIFACT_NAME_MAX];
        struct stat sb;
        int cfd;
        if ((size_t)snprintf(rel, sizeof rel, "%s%s", prefix, names[i]) >= sizeof rel) {
            note(w, "name too long: ", names[i]);
            continue;
        }
        if (fstatat(dirfd, names[i], &sb, AT_SYMLINK_NOFOLLOW) < 0) continue;
        if (S_ISDIR(sb.st_mode)) {
            char sub[ARTIFACT_NAME_MAX];
            if (depth >= ARTIFACT_MAX_DEPTH) { note(w, "directory too deep: ", rel); continue; }
            cfd = openat(dirfd, names[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (cfd < 0) continue;
            if ((size_t)snprintf(sub, sizeof sub, "%s/", rel) < sizeof sub)
                rc = walk(w, cfd, sub, depth + 1, err);
            close(cfd);
            continue;
        }
        if (!S_ISREG(sb.st_mode)) {
            note(w, S_ISLNK(sb.st_mode) ? "skipped symlink: " : "skipped non-file: ", rel);
            continue;
        }
        /* Two names of one file: one of them is not the code's file to hand over. */
        if (sb.st_nlink != 1) {
            note(w, "skipped hard link: ", rel);
            continue;
        }
        if (w->out->artifact_count >= w->lim->max_artifacts ||
            w->bytes + (uint64_t)sb.st_size > w->lim->artifact_bytes) {
            note(w, "dropped over the artifact limits: ", rel);
            w->dropped = 1;
            continue;
        }
        cfd = openat(dirfd, names[i], O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        if (cfd < 0) continue;
        /* Checked again on the descriptor: what we opened is what we copy. */
        if (fstat(cfd, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_nlink == 1) {
            w->bytes += (uint64_t)sb.st_size;
            rc = keep_file(w, cfd, rel, (uint64_t)sb.st_size, err);
        }
        close(cfd);
    }
    sandbox_names_free(names, n);
    return rc;
}

cr_code sandbox_artifacts_collect(int dirfd, const char *out_dir, const sandbox_limits *lim,
                                  sandbox_outcome *out, cr_error *err)
{
    walk_ctx w = { .lim = lim, .out = out, .out_dir = out_dir };
    cr_code rc;
    if (sodium_init() < 0) return cr_error_set(err, CR_EINTERNAL, 0, 0, "libsodium init");
    rc = walk(&w, dirfd, "", 0, err);
    if (w.entries >= ARTIFACT_MAX_ENTRIES) {
        note(&w, "stopped: too many directory entries", "");
        w.dropped = 1;
    }
    if (rc == CR_OK && w.dropped && out->limit == SANDBOX_LIMIT_NONE) {
        out->limit = SANDBOX_LIMIT_ARTIFACTS;
        snprintf(out->limit_detail, sizeof out->limit_detail,
                 "artifacts: more than %u files or %llu bytes", lim->max_artifacts,
                 (unsigned long long)lim->artifact_bytes);
    }
    return rc;
}
