/* sandbox/kvm/artifacts.c: the guest's /out, sent as the artifacts span of the result page
 * (proto.h), turned into the outcome's artifacts.
 *
 * The span is rebuilt as a tree in a private directory of the host's, then collected by
 * sandbox_artifacts_collect(), the ns tier's own code: one walk decides names, hashes, notes
 * and limits for both tiers. The span comes from the guest, so every record is checked before
 * anything is made of it (kvm_entry_next()), the tree is made only with *at() calls under a
 * descriptor of that directory without following links, and the directory is removed after. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox/kvm/vmm.h"

cr_code kvm_entry_next(const uint8_t *p, size_t n, size_t *pos, kvm_entry *e, cr_error *err)
{
    struct crvm_entry h;
    size_t at = *pos;
    if (n - at < sizeof h)
        return cr_error_set(err, CR_ESANDBOX, 0, 0, "kvm: result page: artifact record at %zu "
                            "cut short", at);
    memcpy(&h, p + at, sizeof h);
    if (h.type < CRVM_ENT_FILE || h.type > CRVM_ENT_DROPPED || h.reserved[0] || h.reserved[1] ||
        h.reserved[2])
        return cr_error_set(err, CR_ESANDBOX, 0, 0, "kvm: result page: artifact record at %zu "
                            "of type %u", at, h.type);
    if (h.size && h.type != CRVM_ENT_FILE)
        return cr_error_set(err, CR_ESANDBOX, 0, 0, "kvm: result page: artifact record at %zu: "
                            "content for a type %u", at, h.type);
    if (h.path_len == 0 || h.path_len >= SANDBOX_ARTIFACT_NAME_MAX ||
        (uint64_t)h.path_len + h.size > n - at - sizeof h)
        return cr_error_set(err, CR_ESANDBOX, 0, 0, "kvm: result page: artifact record at %zu: "
                            "path of %u and content of %u bytes", at, h.path_len, h.size);
    const char *path = (const char *)p + at + sizeof h;
    /* Relative, '/'-separated, no empty, "." or ".." component, no deeper than the walk. */
    int depth = 0;
    for (size_t i = 0; i < h.path_len; depth++) {
        size_t j = i;
        while (j < h.path_len && path[j] != '/') {
            if (path[j] == '\0') j = h.path_len + 1;
            else j++;
        }
        size_t len = j - i;
        if (j > h.path_len || len == 0 || (len == 1 && path[i] == '.') ||
            (len == 2 && path[i] == '.' && path[i + 1] == '.') ||
            (j < h.path_len && j + 1 == h.path_len) || depth > SANDBOX_ARTIFACT_MAX_DEPTH)
            return cr_error_set(err, CR_ESANDBOX, 0, 0, "kvm: result page: artifact record at "
                                "%zu: bad path '%.*s'", at, (int)h.path_len, path);
        i = j + 1;
    }
    e->type = h.type;
    e->path = path;
    e->path_len = h.path_len;
    e->data = p + at + sizeof h + h.path_len;
    e->size = h.size;
    *pos = at + sizeof h + h.path_len + h.size;
    return CR_OK;
}

static int write_all(int fd, const uint8_t *p, size_t n)
{
    for (size_t done = 0; done < n;) {
        ssize_t w = write(fd, p + done, n - done);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        done += (size_t)w;
    }
    return 0;
}

/* Makes one entry under root; its parents must be directories made by earlier records, as
 * the guest's walk sends a directory before what it holds. */
static cr_code make_entry(int root, const kvm_entry *e, uint64_t dropped_size, cr_error *err)
{
    char path[SANDBOX_ARTIFACT_NAME_MAX];
    memcpy(path, e->path, e->path_len);
    path[e->path_len] = '\0';
    char *base = strrchr(path, '/');
    int dir = -1, fd = -1, bad;
    if (base) {
        *base++ = '\0';
        dir = openat(root, path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        base[-1] = '/';
        /* openat() of "a/b" follows nothing the guest made: every component is ours. Still,
         * O_NOFOLLOW on the last one, and a symlink record never becomes a parent. */
    } else {
        base = path;
        dir = dup(root);
    }
    if (dir < 0)
        return cr_error_set(err, CR_ESANDBOX, 0, 0, "kvm: result page: artifact '%s' before "
                            "its directory", path);
    switch (e->type) {
    case CRVM_ENT_DIR:
        bad = mkdirat(dir, base, 0755) < 0;
        break;
    case CRVM_ENT_SYMLINK:
        bad = symlinkat("(a symlink in the guest's /out)", dir, base) < 0;
        break;
    case CRVM_ENT_OTHER:
        bad = mkfifoat(dir, base, 0644) < 0;
        break;
    default:
        fd = openat(dir, base, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        /* A dropped file only has to be too big for the limits: a sparse one costs nothing. */
        bad = fd < 0 || (e->type == CRVM_ENT_FILE ? write_all(fd, e->data, e->size) < 0
                                                  : ftruncate(fd, (off_t)dropped_size) < 0);
        break;
    }
    int saved = errno;
    if (fd >= 0) close(fd);
    close(dir);
    if (bad && (saved == EEXIST || saved == ENOTDIR || saved == ELOOP))
        return cr_error_set(err, CR_ESANDBOX, 0, 0, "kvm: result page: artifact '%s' twice or "
                            "under a non-directory", path);
    if (bad) return cr_error_sys(err, CR_ESANDBOX, "kvm: rebuilding the guest's /out", saved);
    return CR_OK;
}

cr_code kvm_artifacts_unpack(const uint8_t *p, size_t n, int root, uint64_t dropped_size,
                             cr_error *err)
{
    size_t pos = 0, count = 0;
    cr_code rc;
    while (pos < n) {
        kvm_entry e;
        if (++count > SANDBOX_ARTIFACT_MAX_ENTRIES)
            return cr_error_set(err, CR_ESANDBOX, 0, 0, "kvm: result page: more than %d "
                                "artifact records", SANDBOX_ARTIFACT_MAX_ENTRIES);
        if ((rc = kvm_entry_next(p, n, &pos, &e, err)) != CR_OK ||
            (rc = make_entry(root, &e, dropped_size, err)) != CR_OK)
            return rc;
    }
    return CR_OK;
}

/* Removes what is under dirfd (which it closes): our own tree, at most the walk's depth. */
static void remove_under(int dirfd, int depth)
{
    DIR *d = fdopendir(dirfd);
    struct dirent *de;
    if (!d) {
        close(dirfd);
        return;
    }
    rewinddir(d);              /* the collection read it through a dup() of the same offset */
    while ((de = readdir(d))) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
        if (unlinkat(dirfd, de->d_name, 0) == 0 || errno != EISDIR) continue;
        int sub = depth < SANDBOX_ARTIFACT_MAX_DEPTH + 2
                      ? openat(dirfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                      : -1;
        if (sub >= 0) remove_under(sub, depth + 1);
        unlinkat(dirfd, de->d_name, AT_REMOVEDIR);
    }
    closedir(d);
}

cr_code kvm_take_artifacts(const vmm_page_result *r, const char *out_dir,
                           const sandbox_limits *lim, sandbox_outcome *out, cr_error *err)
{
    char dir[4096];
    const char *tmp = getenv("TMPDIR");
    cr_code rc;
    if ((size_t)snprintf(dir, sizeof dir, "%s/calcroute-kvm-out.XXXXXX",
                         tmp && *tmp == '/' ? tmp : "/tmp") >= sizeof dir)
        return cr_error_set(err, CR_EUSAGE, 0, 0, "kvm: TMPDIR too long");
    if (!mkdtemp(dir)) return cr_error_sys(err, CR_ESANDBOX, "kvm: a directory for /out", errno);
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        rc = cr_error_sys(err, CR_ESANDBOX, "kvm: a directory for /out", errno);
        rmdir(dir);
        return rc;
    }
    rc = kvm_artifacts_unpack((const uint8_t *)r->artifacts, r->artifacts_len, fd,
                              lim->artifact_bytes + 1, err);
    if (rc == CR_OK) rc = sandbox_artifacts_collect(fd, out_dir, lim, out, err);
    remove_under(fd, 0);
    if (rmdir(dir) < 0 && rc == CR_OK)
        rc = cr_error_sys(err, CR_ESANDBOX, "kvm: removing the copy of /out", errno);
    return rc;
}
