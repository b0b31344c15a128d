/* audit/tiles.c: the tree as C2SP tlog-tiles, the static form any HTTP cache can serve and
 * any mirror or witness can follow without database access.
 *
 * A tile is 256 consecutive hashes of one level, 8 KiB: at level 0 the leaf hashes, at level
 * l + 1 the root of each full tile of level l; the rightmost tile of a level is partial (its
 * width in the name) and never hashed into the level above. An entry bundle holds the same
 * 256 entries as level 0's tile, each a big-endian u16 length and the record's canonical
 * encoding (the leaf's data). Full tiles and bundles never change once the tree passes them,
 * so they are written once; partial ones are named by their width, so a tree that grew adds
 * files and replaces none but the checkpoint. */
#include "audit/audit_int.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#define H AUDIT_HASH_LEN
#define TILE_W 256
#define ENTRY_MAX 65535   /* the bundle's u16 length */

int audit_tile_path(char *out, size_t cap, int level, uint64_t n, unsigned width)
{
    unsigned el[8];
    int k = 0, len;
    do {
        el[k++] = (unsigned)(n % 1000);
        n /= 1000;
    } while (n);
    if (level < 0) len = snprintf(out, cap, "tile/entries/");
    else len = snprintf(out, cap, "tile/%d/", level);
    /* three digits an element; all but the last begin with x */
    while (len > 0 && (size_t)len < cap && k-- > 0)
        len += snprintf(out + len, cap - (size_t)len, k ? "x%03u/" : "%03u", el[k]);
    if (len > 0 && (size_t)len < cap && width && width < TILE_W)
        len += snprintf(out + len, cap - (size_t)len, ".p/%u", width);
    return len > 0 && (size_t)len < cap;
}

/* Makes every directory of dir/rel's parent. */
static int make_parents(char *path, size_t from)
{
    for (char *p = path + from; *p; p++) {
        if (*p != '/') continue;
        *p = '\0';
        int r = mkdir(path, 0755);
        *p = '/';
        if (r != 0 && errno != EEXIST) return -1;
    }
    return 0;
}

/* dir/rel holding data, replaced whole (a reader sees the old file or the new, never part):
 * written beside it, then renamed. keep: an immutable tile, left as it is when it holds
 * data already, and never replaced when it holds anything else: what a mirror may have
 * cached differs from this ledger's tree (another ledger's export, or a rewritten one). */
static cr_code put_file(const char *dir, const char *rel, const void *data, size_t len, int keep,
                        int *wrote, cr_error *err)
{
    char path[4096], tmp[4200], *old;
    size_t olen;
    cr_error ignored;
    if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, rel) >= sizeof path)
        return cr_error_set(err, CR_EUSAGE, 0, 0, "tiles: %s: path too long", dir);
    if (keep && access(path, F_OK) == 0) {
        int same = 0;
        if (audit_file_read(path, len, &old, &olen, &ignored) == CR_OK) {
            same = olen == len && memcmp(old, data, len) == 0;
            free(old);
        }
        return same ? CR_OK : cr_error_set(err, CR_ELEDGER, 0, 0, "tiles: %s holds other "
                                           "bytes than this ledger's (another ledger's export, "
                                           "or this one was rewritten)", path);
    }
    snprintf(tmp, sizeof tmp, "%s.tmp%ld", path, (long)getpid());
    if (make_parents(path, strlen(dir) + 1) != 0)
        return cr_error_set(err, CR_EIO, 0, 0, "tiles: %s: %s", path, strerror(errno));
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return cr_error_set(err, CR_EIO, 0, 0, "tiles: %s: %s", tmp, strerror(errno));
    const char *p = data;
    size_t left = len;
    while (left) {
        ssize_t w = write(fd, p, left);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) break;
        p += w;
        left -= (size_t)w;
    }
    int e = errno;
    if (close(fd) != 0 && !left) e = errno, left = 1;
    if (left || rename(tmp, path) != 0) {
        e = left ? e : errno;
        unlink(tmp);
        return cr_error_set(err, CR_EIO, 0, 0, "tiles: %s: %s", path, strerror(e ? e : EIO));
    }
    (*wrote)++;
    return CR_OK;
}

/* The tiles of one level (count hashes), and the next level's hashes in place: each full
 * tile's root. */
static cr_code write_level(const char *dir, int level, uint8_t (*h)[H], uint64_t count,
                           audit_tiles_report *rep, cr_error *err)
{
    char rel[128];
    cr_code rc = CR_OK;
    for (uint64_t n = 0; n * TILE_W < count && rc == CR_OK; n++) {
        uint64_t w = count - n * TILE_W < TILE_W ? count - n * TILE_W : TILE_W;
        audit_tile_path(rel, sizeof rel, level, n, (unsigned)w);
        rc = put_file(dir, rel, h[n * TILE_W], (size_t)w * H, w == TILE_W, &rep->files, err);
        rep->tiles++;
        if (w == TILE_W) audit_tree_root((const uint8_t (*)[H])h[n * TILE_W], TILE_W, h[n]);
    }
    return rc;
}

static cr_code write_entries(audit_db *db, const char *dir, uint64_t size,
                             audit_tiles_report *rep, cr_error *err)
{
    audit_iter *it = NULL;
    audit_entry e;
    cr_buf enc, bundle;
    char rel[128];
    uint64_t seq = 0, too_big = 0;
    int s = 0;
    cr_buf_init(&enc, 0);
    cr_buf_init(&bundle, 0);
    cr_code rc = size ? audit_iter_open(db, 1, size, &it, err) : CR_OK;
    while (rc == CR_OK && seq < size && (s = audit_iter_next(it, &e, err)) == 1) {
        cr_buf_reset(&enc);
        if (e.seq != ++seq || audit_encode(&e.rec, e.seq, &enc) != CR_OK) {
            rc = cr_error_set(err, CR_ELEDGER, 0, 0, "tiles: record %" PRIu64 " out of place "
                              "or not encodable (run calc-audit verify)", seq);
            break;
        }
        if (enc.len > ENTRY_MAX) {
            if (!too_big) too_big = seq;
        } else {
            unsigned char len[2] = { (unsigned char)(enc.len >> 8), (unsigned char)enc.len };
            if (cr_buf_put(&bundle, len, 2) != CR_OK || cr_buf_put(&bundle, enc.p, enc.len) != CR_OK)
                rc = cr_error_set(err, CR_ENOMEM, 0, 0, "tiles: entry bundle");
        }
        if (rc != CR_OK || (seq % TILE_W && seq != size)) continue;
        uint64_t n = (seq - 1) / TILE_W, w = seq - n * TILE_W;
        audit_tile_path(rel, sizeof rel, -1, n, (unsigned)w);
        if (too_big) {
            /* the format cannot hold it: the bundle is left out, the tiles still prove it */
            snprintf(rep->skipped, sizeof rep->skipped, "%s (record seq %" PRIu64 " is over "
                     "%d bytes)", rel, too_big, ENTRY_MAX);
            rep->bundles_skipped++;
        } else {
            rc = put_file(dir, rel, bundle.p, bundle.len, w == TILE_W, &rep->files, err);
            rep->bundles++;
        }
        cr_buf_reset(&bundle);
        too_big = 0;
    }
    if (s < 0) rc = err ? err->code : CR_EAUDIT;
    if (rc == CR_OK && seq != size)
        rc = cr_error_set(err, CR_ELEDGER, 0, 0, "tiles: %" PRIu64 " records read of %" PRIu64,
                          seq, size);
    audit_iter_close(it);
    cr_buf_free(&enc);
    cr_buf_free(&bundle);
    return rc;
}

cr_code audit_tiles_write(audit_db *db, const char *note, size_t note_len, const char *dir,
                          audit_tiles_report *rep, cr_error *err)
{
    const char *text_end;
    audit_tree t;
    uint8_t (*lv)[H], root[H];
    memset(rep, 0, sizeof *rep);
    cr_code rc = audit_note_split(note, note_len, &text_end, err);
    if (rc == CR_OK) rc = audit_note_text(note, text_end, &t, err);
    if (rc != CR_OK) return rc;
    if (mkdir(dir, 0755) != 0 && errno != EEXIST)
        return cr_error_set(err, CR_EIO, 0, 0, "tiles: %s: %s", dir, strerror(errno));
    uint64_t n = t.size;
    if (n && (rc = audit_tree_leaves(db, &n, &lv, err)) != CR_OK) return rc;
    if (!n) {
        lv = NULL;
        audit_tree_root(NULL, 0, root);
    } else {
        audit_tree_root((const uint8_t (*)[H])lv, n, root);
    }
    if (sodium_memcmp(root, t.root, H) != 0) {
        free(lv);
        return cr_error_set(err, CR_ELEDGER, 0, 0, "tiles: the checkpoint's root is not this "
                            "ledger's tree of %" PRIu64 " records", t.size);
    }
    rep->size = n;
    for (int level = 0; n > 0 && rc == CR_OK; level++, n /= TILE_W)
        rc = write_level(dir, level, lv, n, rep, err);
    free(lv);
    if (rc == CR_OK) rc = write_entries(db, dir, t.size, rep, err);
    /* last: a mirror that reads this checkpoint finds every tile it needs */
    if (rc == CR_OK) rc = put_file(dir, "checkpoint", note, note_len, 0, &rep->files, err);
    return rc;
}
