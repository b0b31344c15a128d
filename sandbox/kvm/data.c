/* sandbox/kvm/data.c: the job's data directory as an initramfs archive (cpio "newc", the
 * format the kernel unpacks) that the VMM places after the guest's own initramfs, so the
 * guest finds it at /data; the guest init then makes /data read-only.
 *
 * The guest sees what the ns tier's code sees through its read-only /data, as far as the
 * code can tell: the same names, symlinks with the same targets, and the permission bits
 * (write bits cleared) of files owned by root, which the code (running as nobody) meets as
 * "other". What the ns tier lets the code read as the file's owner or group, those being the
 * caller's (its idmapped /data makes them the sandbox's), is granted to "other" here, since
 * the guest cannot idmap. A file the code could not read on the ns tier goes without its
 * content. Fifos, sockets and devices are left out. Reproducible: entries in name order, times
 * 0, owner root. Bounded: depth, entries and bytes, each named when hit. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox/kvm/vmm.h"

#define DATA_MAX_DEPTH 32
#define DATA_MAX_ENTRIES 16384
#define DATA_NAME_MAX 4096

typedef struct {
    cr_buf *b;
    uint64_t max_bytes;
    uint32_t ino, entries;
    const char *root;                   /* for messages */
} cpio_ctx;

static cr_code too_big(cpio_ctx *c, cr_error *err)
{
    return cr_error_set(err, CR_ELIMIT, 0, 0, "kvm: the data directory %s is larger than the "
                        "kvm tier carries (%llu bytes, %d entries, %d levels); try --tier ns",
                        c->root, (unsigned long long)c->max_bytes, DATA_MAX_ENTRIES,
                        DATA_MAX_DEPTH);
}

static cr_code pad4(cr_buf *b)
{
    static const char zeros[4];
    return cr_buf_put(b, zeros, (4 - b->len % 4) % 4);
}

/* The archive's permission bits for a host file: see the top of the file. */
static uint32_t guest_perms(const struct stat *sb)
{
    uint32_t m = sb->st_mode & 0555, other = m & 05;
    if (sb->st_uid == geteuid()) other |= (m >> 6) & 05;
    if (sb->st_gid == getegid()) other |= (m >> 3) & 05;
    return m | other;
}

/* One header and name; the content, `size` bytes, is the caller's to append. */
static cr_code put_header(cpio_ctx *c, const char *name, uint32_t mode, uint64_t size,
                          cr_error *err)
{
    size_t nlen = strlen(name) + 1;
    if (c->b->len + 110 + nlen + size + 8 > c->max_bytes || size > UINT32_MAX) return too_big(c, err);
    char h[128];
    snprintf(h, sizeof h, "070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X",
             ++c->ino, mode, 0u, 0u, (mode & S_IFMT) == S_IFDIR ? 2u : 1u, 0u, (uint32_t)size,
             0u, 0u, 0u, 0u, (uint32_t)nlen, 0u);
    if (cr_buf_put(c->b, h, 110) != CR_OK || cr_buf_put(c->b, name, nlen) != CR_OK ||
        pad4(c->b) != CR_OK)
        return cr_error_set(err, CR_ENOMEM, 0, 0, "kvm: the data archive");
    return CR_OK;
}

static cr_code put_file(cpio_ctx *c, int dirfd, const char *base, const char *name,
                        const struct stat *sb, cr_error *err)
{
    uint32_t mode = S_IFREG | guest_perms(sb);
    int readable = (mode & S_IROTH) != 0;
    uint64_t size = readable ? (uint64_t)sb->st_size : 0;
    cr_code rc = put_header(c, name, mode, size, err);
    if (rc != CR_OK || !size) return rc;
    int fd = openat(dirfd, base, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return cr_error_sys(err, CR_ESANDBOX, "kvm: reading the data directory", errno);
    char buf[65536];
    uint64_t done = 0;
    while (done < size) {
        size_t want = size - done < sizeof buf ? (size_t)(size - done) : sizeof buf;
        ssize_t n = read(fd, buf, want);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        if (cr_buf_put(c->b, buf, (size_t)n) != CR_OK) {
            close(fd);
            return cr_error_set(err, CR_ENOMEM, 0, 0, "kvm: the data archive");
        }
        done += (uint64_t)n;
    }
    close(fd);
    if (done != size)
        return cr_error_set(err, CR_ESANDBOX, 0, 0, "kvm: %s/%s changed while it was read",
                            c->root, name + 5);
    return pad4(c->b) == CR_OK ? CR_OK : cr_error_set(err, CR_ENOMEM, 0, 0, "kvm: data archive");
}

/* The entries of dirfd (borrowed) under the archive name `prefix`, in name order. */
static cr_code walk(cpio_ctx *c, int dirfd, const char *prefix, int depth, cr_error *err)
{
    char **names;
    size_t n, budget = (size_t)DATA_MAX_ENTRIES + 1 - c->entries;   /* one more says "over" */
    cr_code rc = CR_OK;
    if (sandbox_dir_names(dirfd, &budget, &names, &n) < 0)
        return errno == ENOMEM ? cr_error_set(err, CR_ENOMEM, 0, 0, "kvm: data names")
                               : cr_error_sys(err, CR_ESANDBOX, "kvm: reading the data directory", errno);
    c->entries += (uint32_t)n;
    if (c->entries > DATA_MAX_ENTRIES) rc = too_big(c, err);
    for (size_t i = 0; i < n && rc == CR_OK; i++) {
        char name[DATA_NAME_MAX];
        struct stat sb;
        if ((size_t)snprintf(name, sizeof name, "%s/%s", prefix, names[i]) >= sizeof name) {
            rc = too_big(c, err);
            break;
        }
        if (fstatat(dirfd, names[i], &sb, AT_SYMLINK_NOFOLLOW) < 0) continue;
        if (S_ISDIR(sb.st_mode)) {
            if (depth >= DATA_MAX_DEPTH) { rc = too_big(c, err); break; }
            if ((rc = put_header(c, name, S_IFDIR | guest_perms(&sb), 0, err)) != CR_OK) break;
            int sub = openat(dirfd, names[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (sub < 0) continue;        /* not o+x for us either: empty, as the code sees it */
            rc = walk(c, sub, name, depth + 1, err);
            close(sub);
        } else if (S_ISLNK(sb.st_mode)) {
            char target[DATA_NAME_MAX];
            ssize_t len = readlinkat(dirfd, names[i], target, sizeof target);
            if (len < 0 || (size_t)len >= sizeof target) continue;
            if ((rc = put_header(c, name, S_IFLNK | 0777, (uint64_t)len, err)) == CR_OK &&
                (cr_buf_put(c->b, target, (size_t)len) != CR_OK || pad4(c->b) != CR_OK))
                rc = cr_error_set(err, CR_ENOMEM, 0, 0, "kvm: the data archive");
        } else if (S_ISREG(sb.st_mode)) {
            rc = put_file(c, dirfd, names[i], name, &sb, err);
        }
    }
    sandbox_names_free(names, n);
    return rc;
}

cr_code kvm_data_archive(const char *data_dir, uint64_t max_bytes, cr_buf *out, cr_error *err)
{
    cpio_ctx c = { .b = out, .max_bytes = max_bytes, .root = data_dir };
    struct stat sb;
    cr_code rc;
    int fd = open(data_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return cr_error_sys(err, CR_EUSAGE, data_dir, errno);   /* as the ns tier */
    if (fstat(fd, &sb) < 0) {
        rc = cr_error_sys(err, CR_ESANDBOX, "kvm: the data directory", errno);
        close(fd);
        return rc;
    }
    rc = put_header(&c, "data", S_IFDIR | guest_perms(&sb), 0, err);
    if (rc == CR_OK) rc = walk(&c, fd, "data", 1, err);
    close(fd);
    if (rc == CR_OK) rc = put_header(&c, "TRAILER!!!", 0, 0, err);
    return rc;
}
