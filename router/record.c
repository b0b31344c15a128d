/* router/record.c: one audit record per request, whatever its route or outcome. The result
 * is handed back only after its record committed, so a caller never holds an answer that the
 * ledger does not. */
#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "audit/audit.h"
#include "common/json.h"
#include "parser/parser.h"
#include "router/router.h"

static char *dump_member(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    return v && !json_is_null(v) ? json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
}


/* ---- the data directory's manifest ------------------------------------------------------
 * What a sandboxed run could read under /data, as the host sees it when the record is made
 * (right after the run; the sandbox mounts the directory read-only, so the code cannot have
 * changed it): every regular file's relative name, size and SHA-256, in name order, and each
 * symlink or other entry by name alone (never followed: the sandbox sees the same link). */

typedef struct {
    json_t *files;
    size_t budget;          /* directory entries left to read (sandbox_dir_names()) */
    size_t nfiles;
    char cut[160];          /* "" or why the walk stopped short */
    EVP_MD_CTX *md;
    router_digests *digests;
} manifest_walk;

/* ---- digests kept between requests ----------------------------------------------------
 * A service with a large --data directory would hash all of it for every audited sandboxed
 * request. A file is known by what stat says of it; a digest is kept only when the file's
 * ctime was at least CACHE_SETTLE_S old when it was read (timestamps advance by clock ticks,
 * so a write just after the read could leave them unchanged), and any change of content
 * changes ctime, which no caller can set. */
#define CACHE_SLOTS 16384   /* a power of two above ROUTER_DATA_MAX_FILES */
#define CACHE_SETTLE_S 1

typedef struct {
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtime, ctime;
    char hex[65];
    int used;
} digest_slot;

struct router_digests {
    pthread_mutex_t mu;
    digest_slot slot[CACHE_SLOTS];
};

router_digests *router_digests_new(void)
{
    router_digests *d = calloc(1, sizeof *d);
    if (d) pthread_mutex_init(&d->mu, NULL);
    return d;
}

void router_digests_free(router_digests *d)
{
    if (!d) return;
    pthread_mutex_destroy(&d->mu);
    free(d);
}

static digest_slot *slot_of(router_digests *d, const struct stat *sb)
{
    uint64_t h = ((uint64_t)sb->st_dev * 0x9E3779B97F4A7C15ull) ^ (uint64_t)sb->st_ino;
    h ^= h >> 29;
    return &d->slot[(h * 0xBF58476D1CE4E5B9ull >> 40) & (CACHE_SLOTS - 1)];
}

static int same_time(struct timespec a, struct timespec b)
{
    return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec;
}

/* The kept digest of the file sb describes into hex: 1 when there is one. */
static int digest_get(router_digests *d, const struct stat *sb, char hex[65])
{
    if (!d) return 0;
    pthread_mutex_lock(&d->mu);
    digest_slot *s = slot_of(d, sb);
    int hit = s->used && s->dev == sb->st_dev && s->ino == sb->st_ino && s->size == sb->st_size
              && same_time(s->mtime, sb->st_mtim) && same_time(s->ctime, sb->st_ctim);
    if (hit) memcpy(hex, s->hex, 65);
    pthread_mutex_unlock(&d->mu);
    return hit;
}

/* Keeps hex as the digest of the file sb described before it was read (a collision replaces
 * the slot's file: a miss later, never a wrong digest). */
static void digest_put(router_digests *d, const struct stat *sb, const char hex[65])
{
    struct timespec now;
    if (!d || clock_gettime(CLOCK_REALTIME, &now) != 0) return;
    if (sb->st_ctim.tv_sec > now.tv_sec - CACHE_SETTLE_S) return;   /* not settled */
    pthread_mutex_lock(&d->mu);
    digest_slot *s = slot_of(d, sb);
    *s = (digest_slot){ .dev = sb->st_dev, .ino = sb->st_ino, .size = sb->st_size,
                        .mtime = sb->st_mtim, .ctime = sb->st_ctim, .used = 1 };
    memcpy(s->hex, hex, 65);
    pthread_mutex_unlock(&d->mu);
}

/* SHA-256 of the open file fd, read to its end, into hex; its byte count in *size. */
static int file_sha256(manifest_walk *w, int fd, uint64_t *size, char hex[65])
{
    unsigned char buf[1 << 16], h[EVP_MAX_MD_SIZE];
    unsigned int hl = 0;
    ssize_t n;
    *size = 0;
    if (EVP_DigestInit_ex(w->md, EVP_sha256(), NULL) != 1) return -1;
    while ((n = read(fd, buf, sizeof buf)) != 0) {
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 || EVP_DigestUpdate(w->md, buf, (size_t)n) != 1) return -1;
        *size += (uint64_t)n;
    }
    if (EVP_DigestFinal_ex(w->md, h, &hl) != 1 || hl != 32) return -1;
    sodium_bin2hex(hex, 65, h, 32);
    return 0;
}

static void walk_cut(manifest_walk *w, const char *why, const char *rel)
{
    /* The first reason only; a long name is shortened to what the note holds. */
    if (!w->cut[0])
        snprintf(w->cut, sizeof w->cut, "%s%.*s", why, (int)(sizeof w->cut - 1 - strlen(why)),
                 rel);
}

static cr_code walk_dir(manifest_walk *w, int dirfd, const char *prefix, int depth)
{
    char **names;
    size_t n;
    cr_code rc = CR_OK;
    int failed = 0;
    if (sandbox_dir_names(dirfd, &w->budget, &names, &n) < 0) {
        if (errno == ENOMEM) return CR_ENOMEM;
        walk_cut(w, "unreadable directory: ", prefix);
        return CR_OK;
    }
    if (!w->budget) walk_cut(w, "more entries than ", CR_DEFAULT_TEXT(ROUTER_DATA_MAX_ENTRIES));
    for (size_t i = 0; i < n && rc == CR_OK && !failed; i++) {
        char rel[ROUTER_DATA_NAME_MAX], hex_kept[65];
        struct stat sb;
        if ((size_t)snprintf(rel, sizeof rel, "%s%s", prefix, names[i]) >= sizeof rel) {
            walk_cut(w, "name too long under ", prefix);
            continue;
        }
        if (fstatat(dirfd, names[i], &sb, AT_SYMLINK_NOFOLLOW) < 0) {
            walk_cut(w, "unreadable: ", rel);
            continue;
        }
        if (S_ISDIR(sb.st_mode)) {
            if (depth >= ROUTER_DATA_MAX_DEPTH) {
                walk_cut(w, "directory too deep: ", rel);
                continue;
            }
            size_t len = strlen(rel);
            if (len + 2 > sizeof rel) {
                walk_cut(w, "name too long: ", rel);
                continue;
            }
            int cfd = openat(dirfd, names[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (cfd < 0) { walk_cut(w, "unreadable directory: ", rel); continue; }
            rel[len] = '/';
            rel[len + 1] = 0;
            rc = walk_dir(w, cfd, rel, depth + 1);
            close(cfd);
            continue;
        }
        if (w->nfiles >= ROUTER_DATA_MAX_FILES) {
            walk_cut(w, "more files than ", CR_DEFAULT_TEXT(ROUTER_DATA_MAX_FILES));
            break;
        }
        w->nfiles++;
        json_t *o = json_object();
        failed |= !o;
        cr_json_set(o, "name", cr_json_text(rel, strlen(rel), NULL), &failed);
        json_t *raw = cr_json_bytes_if_not_utf8(rel, strlen(rel));
        if (json_is_null(raw)) json_decref(raw);
        else cr_json_set(o, "name_base64", raw, &failed);   /* the bytes, when not UTF-8 */
        if (S_ISREG(sb.st_mode) && digest_get(w->digests, &sb, hex_kept)) {
            cr_json_set(o, "size", json_integer((json_int_t)sb.st_size), &failed);
            cr_json_set(o, "sha256", json_string(hex_kept), &failed);
        } else if (S_ISREG(sb.st_mode)) {
            char hex[65];
            uint64_t size;
            struct stat at;
            int fd = openat(dirfd, names[i], O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
            errno = 0;
            if (fd < 0 || fstat(fd, &at) < 0 || file_sha256(w, fd, &size, hex) < 0) {
                cr_json_set(o, "unreadable", json_string(errno ? strerror(errno) : "SHA-256 failed"),
                            &failed);
            } else {
                cr_json_set(o, "size", json_integer((json_int_t)size), &failed);
                cr_json_set(o, "sha256", json_string(hex), &failed);
                /* kept under what stat said before the read, and only if the read saw that
                 * many bytes: a file changing meanwhile is hashed again next time */
                if ((uint64_t)at.st_size == size) digest_put(w->digests, &at, hex);
            }
            if (fd >= 0) close(fd);
        } else {
            cr_json_set(o, "type", json_string(S_ISLNK(sb.st_mode) ? "symlink" : "other"),
                        &failed);
        }
        cr_json_append(w->files, o, &failed);
    }
    sandbox_names_free(names, n);
    return failed ? CR_ENOMEM : rc;
}

cr_code router_data_manifest(const char *dir, router_digests *digests, json_t **out,
                             cr_error *err)
{
    manifest_walk w = { .files = json_array(), .budget = ROUTER_DATA_MAX_ENTRIES,
                        .md = EVP_MD_CTX_new(), .digests = digests };
    cr_code rc = w.files && w.md ? CR_OK : CR_ENOMEM;
    int failed = 0, fd = -1;
    *out = NULL;
    if (rc == CR_OK && (fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
        rc = cr_error_sys(err, CR_EUSAGE, dir, errno);
    else if (rc == CR_OK)
        rc = walk_dir(&w, fd, "", 1);
    if (fd >= 0) close(fd);
    EVP_MD_CTX_free(w.md);
    if (rc == CR_OK) {
        json_t *o = json_object();
        failed = !o;
        cr_json_set(o, "files", json_incref(w.files), &failed);
        cr_json_set(o, "max_files", json_integer(ROUTER_DATA_MAX_FILES), &failed);
        cr_json_set(o, "max_depth", json_integer(ROUTER_DATA_MAX_DEPTH), &failed);
        if (w.cut[0]) cr_json_set(o, "cut", cr_json_text(w.cut, strlen(w.cut), NULL), &failed);
        if (failed) json_decref(o);
        else *out = o;
    }
    json_decref(w.files);
    if (rc == CR_ENOMEM || failed)
        return cr_error_set(err, CR_ENOMEM, 0, 0, "data manifest of %s", dir);
    return rc;
}

static char *policy_json(const cr_engine *e, const cr_policy *pol, const cr_result *res,
                         json_t *inputs)
{
    static const char *const tiers[] = {"auto", "ns", "kvm", "none"};
    cr_buf names;
    cr_buf_init(&names, 0);
    for (int i = 0; i < 3 && pol->answer_vars[i]; i++)
        cr_buf_printf(&names, "%s%s", i ? "," : "", pol->answer_vars[i]);
    json_t *o = json_object();
    int failed = !o;
    cr_json_set(o, "precision", json_integer(pol->precision), &failed);
    cr_json_set(o, "rounding", json_string(pol->rounding == CR_ROUND_HALF_UP ? "half-up"
                                                                             : "half-even"),
                &failed);
    cr_json_set(o, "answer_vars", cr_json_text(names.p, names.len, NULL), &failed);
    cr_json_set(o, "tier", json_string(tiers[e->tier]), &failed);
    /* Every limit, so that a replay runs under the same ones (records have kept the timeout
     * and the memory from the start; older ones lack the evaluator's, and replay under the
     * defaults). */
    const router_config_value *v = e->cfg->v;
#define LIMIT(id, member) \
    cr_json_set(o, member, CFG_##id == CFG_TIMEOUT ? json_real(v[CFG_##id].d) \
                                                   : json_integer((json_int_t)v[CFG_##id].u), \
                &failed);
    ROUTER_RECORDED_LIMITS(LIMIT)
#undef LIMIT
    /* The python a sandboxed run started (the runner's own word on it is in "inputs"). */
    if (res->route == CR_ROUTE_NS || res->route == CR_ROUTE_KVM)
        cr_json_set(o, "interpreter", cr_json_text(e->interpreter, strlen(e->interpreter), NULL),
                    &failed);
    /* The seed a sandboxed run drew from, given or derived: replay passes it back. */
    if (res->has_seed) cr_json_set(o, "seed", json_integer(res->seed), &failed);
    /* What else a sandboxed run depended on (absent from older records, whose encoding is
     * thus unchanged): replay checks the data directory against it. */
    if (inputs) cr_json_set(o, "inputs", json_incref(inputs), &failed);
    cr_buf_free(&names);
    char *s = failed ? NULL : json_dumps(o, JSON_COMPACT);
    json_decref(o);
    return s;
}

/* A sandboxed run's inputs beyond the request (the seed is the policy's own member): what
 * the runner said of the interpreter and the packages loaded, and the data directory's
 * manifest when the engine has one. NULL for an in-process run, which reads nothing but the
 * request. */
static cr_code record_inputs(const cr_engine *e, const cr_result *res, json_t **out,
                             cr_error *err)
{
    *out = NULL;
    if (res->route != CR_ROUTE_NS && res->route != CR_ROUTE_KVM) return CR_OK;
    json_t *o = res->sandbox_inputs ? json_deep_copy(res->sandbox_inputs) : json_object();
    json_t *data = NULL;
    int failed = !o;
    if (e->data_dir) {
        cr_error why = {0};
        cr_code rc = router_data_manifest(e->data_dir, e->digests, &data, &why);
        if (rc == CR_EUSAGE && (data = json_object()))    /* gone since the run */
            cr_json_set(data, "unreadable", json_string(why.message), &failed);
        else if (rc != CR_OK) {
            json_decref(o);
            return cr_error_set(err, rc, 0, 0, "%s", why.message);
        }
        cr_json_set(data, "dir", cr_json_text(e->data_dir, strlen(e->data_dir), NULL), &failed);
        cr_json_set(o, "data", data, &failed);
    }
    if (failed || !json_object_size(o)) {
        json_decref(o);
        return failed ? cr_error_set(err, CR_ENOMEM, 0, 0, "audit record: inputs") : CR_OK;
    }
    *out = o;
    return CR_OK;
}

cr_code router_record(cr_engine *e, const cr_request *req, const cr_policy *pol, cr_result *res,
                      cr_error *err)
{
    if (!e->audit) return CR_OK;
    static const char *const langs[] = {"auto", "python", "dsl"};
    unsigned char idb[16];
    char id[33];
    randombytes_buf(idb, sizeof idb);
    sodium_bin2hex(id, sizeof id, idb, sizeof idb);
    json_t *rj = router_result_to_json(res);
    char *bindings = req->nbinds ? router_bindings_json(req) : NULL;
    char *tables = router_table_json(req);
    json_t *inputs = NULL;
    cr_code rc = record_inputs(e, res, &inputs, err);
    if (rc != CR_OK) {
        json_decref(rj);
        free(bindings);
        free(tables);
        return rc;
    }
    char *policy = policy_json(e, pol, res, inputs);
    json_decref(inputs);
    char *reasons = rj ? dump_member(rj, "reasons") : NULL;
    char *error = rj ? dump_member(rj, "error") : NULL;
    if (!error && rj && res->status == CR_ELIMIT) error = dump_member(rj, "limit");
    char *timings = rj ? dump_member(rj, "timings") : NULL;
    if (!rj || !policy || !reasons || !timings || (req->nbinds && !bindings)) {
        rc = cr_error_set(err, CR_ENOMEM, 0, 0, "audit record");
        goto out;
    }
    audit_record rec;
    memset(&rec, 0, sizeof rec);
    AUDIT_SET(&rec, request_id, id);
    AUDIT_SET(&rec, engine_version, CR_VERSION_STRING);
    AUDIT_SET(&rec, grammar_version, parser_grammar_version());
    AUDIT_SET(&rec, lang, langs[res->lang]);
    rec.code = req->code ? req->code : "";
    rec.code_len = req->code_len;
    AUDIT_SET(&rec, bindings, bindings);
    AUDIT_SET(&rec, tables, tables);
    AUDIT_SET(&rec, policy, policy);
    AUDIT_SET(&rec, route, cr_route_name(res->route));
    AUDIT_SET(&rec, reasons, reasons);
    rec.status = res->status;
    AUDIT_SET(&rec, value_fraction, res->has_value ? res->value_fraction : NULL);
    AUDIT_SET(&rec, value_repr, res->has_value ? res->value_repr : NULL);
    AUDIT_SET(&rec, value_type, res->has_value ? res->value_type : NULL);
    rec.value_exact = res->has_value ? res->value_exact : -1;
    rec.out = res->stdout_text ? res->stdout_text : "";
    rec.out_len = res->stdout_len;
    rec.err_out = res->stderr_text ? res->stderr_text : "";
    rec.err_out_len = res->stderr_len;
    AUDIT_SET(&rec, error, error);
    AUDIT_SET(&rec, artifacts, res->artifacts_json ? res->artifacts_json : "[]");
    AUDIT_SET(&rec, timings, timings);
    uint8_t hash[AUDIT_HASH_LEN];
    rc = audit_append(e->audit, &rec, &res->audit_seq, hash, err);   /* shares commits */
    if (rc == CR_OK) audit_hex(hash, res->audit_hash);
out:
    json_decref(rj);
    free(bindings);
    free(tables);
    free(policy);
    free(reasons);
    free(error);
    free(timings);
    return rc;
}
