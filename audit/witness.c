/* audit/witness.c: a C2SP tlog-witness. It follows the logs a policy names (their `log`
 * lines), keeps for each the latest checkpoint it cosigned, and cosigns a new one only when
 * a consistency proof links it to that one: an operator who shows two histories can then not
 * have both witnessed. add-checkpoint's answers are the spec's: 400 a malformed request, 404
 * a log it does not follow, 403 a checkpoint no key of that log signed, 409 (with the size it
 * holds, text/x.tlog.size) an old size that is not its own or the same size with another root,
 * 422 a proof that does not hold, 200 the cosignature lines (tlog-cosignature, Ed25519).
 *
 * The state is a text file, rewritten whole (beside it, fsync, rename, the directory synced)
 * before the cosignature is given, under one lock with the check, so that two requests cannot
 * both pass against the same old size (the spec's rollback race). */
#include "audit/audit_int.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <netdb.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <pthread.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define H AUDIT_HASH_LEN
#define STATE_HEADER "calcroute/witness/state/v1"
#define STATE_MAX 64          /* logs followed at most (a policy names up to 32) */
#define PROOF_MAX 63          /* consistency proof lines: the spec's bound */

typedef struct {
    char origin[256];
    uint64_t size;
    uint8_t root[H];
} witnessed;

struct cr_witness {
    pthread_mutex_t lock;
    audit_policy *policy;
    uint8_t sk[64];
    char name[256], state[4096];
    witnessed log[STATE_MAX];
    int nlog;
};

static cr_code state_read(cr_witness *w, cr_error *err)
{
    char *text;
    size_t len;
    if (access(w->state, F_OK) != 0 && errno == ENOENT) return CR_OK;   /* nothing cosigned */
    cr_code rc = audit_file_read(w->state, 1u << 20, &text, &len, err);
    if (rc != CR_OK) return rc;
    const char *p = text, *end = text + len, *line;
    size_t ll;
    int ok = audit_next_line(&p, end, &line, &ll) && ll == strlen(STATE_HEADER) &&
             memcmp(line, STATE_HEADER, ll) == 0;
    while (ok && p < end) {
        witnessed *x = &w->log[w->nlog];
        const char *s1, *s2;
        ok = w->nlog < STATE_MAX && audit_next_line(&p, end, &line, &ll) &&
             (s1 = memchr(line, ' ', ll)) && (s2 = memchr(s1 + 1, ' ', (size_t)(line + ll - s1 - 1))) &&
             audit_name_ok(line, (size_t)(s1 - line)) && (size_t)(s1 - line) < sizeof x->origin &&
             audit_get_u64(s1 + 1, (size_t)(s2 - s1 - 1), &x->size) &&
             audit_b64_hash(s2 + 1, (size_t)(line + ll - s2 - 1), x->root);
        if (ok) {
            memcpy(x->origin, line, (size_t)(s1 - line));
            x->origin[s1 - line] = '\0';
            w->nlog++;
        }
    }
    free(text);
    return ok ? CR_OK : cr_error_set(err, CR_EUSAGE, 0, 0, "witness: %s is not a witness's "
                                     "state file", w->state);
}

static int state_write(const cr_witness *w)
{
    char tmp[4200], dir[4096];
    cr_buf b;
    cr_buf_init(&b, 0);
    int ok = cr_buf_puts(&b, STATE_HEADER "\n") == CR_OK;
    for (int i = 0; i < w->nlog && ok; i++) {
        ok = cr_buf_printf(&b, "%s %" PRIu64 " ", w->log[i].origin, w->log[i].size) == CR_OK &&
             audit_b64_put(&b, w->log[i].root, H) == CR_OK && cr_buf_putc(&b, '\n') == CR_OK;
    }
    snprintf(tmp, sizeof tmp, "%s.tmp", w->state);
    int fd = ok ? open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644) : -1;
    ok = fd >= 0 && write(fd, b.p, b.len) == (ssize_t)b.len && fsync(fd) == 0;
    if (fd >= 0 && close(fd) != 0) ok = 0;
    ok = ok && rename(tmp, w->state) == 0;
    cr_buf_free(&b);
    if (!ok) return 0;
    snprintf(dir, sizeof dir, "%s", w->state);
    int dfd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    ok = dfd >= 0 && fsync(dfd) == 0;
    if (dfd >= 0) close(dfd);
    return ok;
}

cr_witness *cr_witness_open(const char *state_path, const char *policy_path,
                            const char *key_path, const char *name, cr_error *err)
{
    cr_witness *w = calloc(1, sizeof *w);
    char *text = NULL;
    size_t len;
    if (!w || sodium_init() < 0) {
        free(w);
        cr_error_set(err, CR_ENOMEM, 0, 0, "witness: handle");
        return NULL;
    }
    cr_code rc = CR_OK;
    if (!audit_name_ok(name, strlen(name)) || strlen(name) >= sizeof w->name ||
        strlen(state_path) >= sizeof w->state)
        rc = cr_error_set(err, CR_EUSAGE, 0, 0, "witness: name '%s' or state path not usable",
                          name);
    if (rc == CR_OK) {
        snprintf(w->name, sizeof w->name, "%s", name);
        snprintf(w->state, sizeof w->state, "%s", state_path);
        rc = audit_key_read(key_path, w->sk, sizeof w->sk, err);
    }
    if (rc == CR_OK) rc = audit_file_read(policy_path, AUDIT_NOTE_MAX, &text, &len, err);
    if (rc == CR_OK) rc = audit_policy_parse(text, len, &w->policy, err);
    if (rc == CR_OK) rc = state_read(w, err);
    free(text);
    if (rc != CR_OK) {
        cr_witness_close(w);
        return NULL;
    }
    pthread_mutex_init(&w->lock, NULL);
    return w;
}

void cr_witness_close(cr_witness *w)
{
    if (!w) return;
    if (w->policy) pthread_mutex_destroy(&w->lock);
    audit_policy_free(w->policy);
    sodium_memzero(w->sk, sizeof w->sk);
    free(w);
}

static unsigned answer(unsigned code, const char *text, char **out)
{
    *out = strdup(text);
    return *out ? code : 500;
}

unsigned cr_witness_add(cr_witness *w, const char *body, size_t len, char **out,
                        const char **content_type)
{
    const char *p = body, *end = body + len, *line, *text_end;
    size_t ll, np = 0;
    uint64_t old;
    uint8_t proof[PROOF_MAX][H];
    char msg[320];
    *content_type = "text/plain; charset=utf-8";
    if (!audit_next_line(&p, end, &line, &ll) || ll < 5 || memcmp(line, "old ", 4) != 0 ||
        !audit_get_u64(line + 4, ll - 4, &old))
        return answer(400, "the first line is not 'old N'\n", out);
    for (;;) {
        if (!audit_next_line(&p, end, &line, &ll))
            return answer(400, "no blank line before the checkpoint\n", out);
        if (ll == 0) break;
        if (np == PROOF_MAX) return answer(400, "more than 63 proof lines\n", out);
        if (!audit_b64_hash(line, ll, proof[np++]))
            return answer(400, "a proof line that is not a base64 SHA-256 hash\n", out);
    }
    audit_tree t;
    audit_bundle_result res;
    cr_error err = {0};
    memset(&res, 0, sizeof res);
    if (audit_note_split(p, (size_t)(end - p), &text_end, &err) != CR_OK ||
        audit_note_text(p, text_end, &t, &err) != CR_OK) {
        snprintf(msg, sizeof msg, "%s\n", err.message);
        return answer(400, msg, out);
    }
    if (audit_checkpoint_check(p, (size_t)(end - p), w->policy, &t, &res, &err) != CR_OK) {
        snprintf(msg, sizeof msg, "%s\n", err.message);
        return answer(res.origin_unknown ? 404 : 403, msg, out);
    }
    if (old > t.size) return answer(400, "the old size is past the checkpoint's\n", out);
    unsigned code = 200;
    pthread_mutex_lock(&w->lock);
    witnessed *x = NULL;
    for (int i = 0; i < w->nlog && !x; i++)
        if (!strcmp(w->log[i].origin, t.origin)) x = &w->log[i];
    uint64_t held = x ? x->size : 0;
    if (old != held || (old == t.size && old && sodium_memcmp(x->root, t.root, H) != 0)) {
        code = 409;
        snprintf(msg, sizeof msg, "%" PRIu64 "\n", held);
    } else if (old < t.size &&
               (old ? !audit_consistency_check(old, t.size, x->root, t.root,
                                               (const uint8_t (*)[H])proof, np)
                    : np != 0)) {
        code = 422;
        snprintf(msg, sizeof msg, "the proof does not link the tree of %" PRIu64 " entries to "
                 "the one of %" PRIu64 "\n", old, t.size);
    } else if (!x && w->nlog == STATE_MAX) {
        code = 500;
        snprintf(msg, sizeof msg, "too many logs\n");
    } else {
        witnessed keep = x ? *x : (witnessed){ .size = 0 };
        if (!x) x = &w->log[w->nlog++];
        snprintf(x->origin, sizeof x->origin, "%s", t.origin);
        x->size = t.size;
        memcpy(x->root, t.root, H);
        if (!state_write(w)) {
            /* not durable, not given: the state stays what the file holds */
            if (keep.origin[0]) *x = keep;
            else w->nlog--;
            code = 500;
            snprintf(msg, sizeof msg, "the state could not be written: %s\n", strerror(errno));
        }
    }
    pthread_mutex_unlock(&w->lock);
    if (code == 409) *content_type = "text/x.tlog.size";
    if (code != 200) return answer(code, msg, out);
    cr_buf b;
    cr_buf_init(&b, 0);
    if (audit_cosign(w->name, w->sk, (uint64_t)time(NULL), p, (size_t)(text_end - p), &b,
                     &err) != CR_OK) {
        cr_buf_free(&b);
        return answer(500, "out of memory\n", out);
    }
    *out = cr_buf_take(&b, NULL);
    cr_buf_free(&b);
    return *out ? 200 : 500;
}

/* ---- the log's side: asking witnesses for cosignatures ---------------------------------- */

#define COSIGNERS_MAX 64
#define HTTP_ANSWER_MAX (64u << 10)
#define HTTP_TIMEOUT_S 10

struct cr_cosigners {
    audit_policy *policy;
    uint64_t held[COSIGNERS_MAX];   /* the size each witness holds, as far as we know */
};

cr_cosigners *cr_cosigners_open(const char *policy_path, cr_error *err)
{
    char *text;
    size_t len;
    cr_cosigners *c = calloc(1, sizeof *c);
    if (!c) {
        cr_error_set(err, CR_ENOMEM, 0, 0, "cosigners: handle");
        return NULL;
    }
    cr_code rc = audit_file_read(policy_path, AUDIT_NOTE_MAX, &text, &len, err);
    if (rc == CR_OK) {
        rc = audit_policy_parse(text, len, &c->policy, err);
        free(text);
    }
    if (rc != CR_OK) {
        free(c);
        return NULL;
    }
    return c;
}

void cr_cosigners_close(cr_cosigners *c)
{
    if (!c) return;
    audit_policy_free(c->policy);
    free(c);
}

/* POST body to url + "/add-checkpoint" (plain http://HOST[:PORT][/PREFIX]); the status, with
 * the answer's body in out, or 0 with *why set when no answer came. */
static unsigned http_post(const char *url, const char *body, size_t len, cr_buf *out,
                          const char **why)
{
    char host[256], port[8] = "80", path[512];
    const char *h = url + 7, *end = h + strcspn(h, ":/");
    *why = "not an http:// URL";
    if (strncmp(url, "http://", 7) != 0 || end == h || (size_t)(end - h) >= sizeof host) return 0;
    snprintf(host, sizeof host, "%.*s", (int)(end - h), h);
    if (*end == ':') {
        size_t n = strspn(end + 1, "0123456789");
        if (n == 0 || n >= sizeof port) return 0;
        snprintf(port, sizeof port, "%.*s", (int)n, end + 1);
        end += 1 + n;
    }
    snprintf(path, sizeof path, "%s/add-checkpoint", *end == '/' ? end : "");
    if (path[0] != '/') memmove(path + 1, path, strlen(path) + 1), path[0] = '/';
    struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai = NULL;
    *why = "no such host";
    if (getaddrinfo(host, port, &hints, &ai) != 0) return 0;
    int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct timeval tv = { HTTP_TIMEOUT_S, 0 };
    if (fd >= 0) {
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    }
    *why = "cannot connect";
    int ok = fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen) == 0;
    freeaddrinfo(ai);
    cr_buf req;
    cr_buf_init(&req, 0);
    ok = ok && cr_buf_printf(&req, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: text/plain\r\n"
                             "Content-Length: %zu\r\nConnection: close\r\n\r\n", path, host,
                             len) == CR_OK && cr_buf_put(&req, body, len) == CR_OK;
    for (size_t at = 0; ok && at < req.len;) {
        ssize_t w = send(fd, req.p + at, req.len - at, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) ok = 0, *why = "the request could not be sent";
        else at += (size_t)w;
    }
    cr_buf_free(&req);
    cr_buf ans;
    cr_buf_init(&ans, 0);
    char chunk[4096];
    while (ok) {
        ssize_t r = recv(fd, chunk, sizeof chunk, 0);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) ok = 0, *why = "no answer in time";
        if (r <= 0) break;
        if (ans.len + (size_t)r > HTTP_ANSWER_MAX || cr_buf_put(&ans, chunk, (size_t)r) != CR_OK)
            ok = 0, *why = "an answer over 64 KiB";
    }
    if (fd >= 0) close(fd);
    unsigned code = 0;
    const char *sep = ok && ans.len ? memmem(ans.p, ans.len, "\r\n\r\n", 4) : NULL;
    if (sep && ans.len > 12 && memcmp(ans.p, "HTTP/1.", 7) == 0 && ans.p[8] == ' ') {
        code = (unsigned)strtoul(ans.p + 9, NULL, 10);
        cr_buf_put(out, sep + 4, (size_t)(ans.p + ans.len - sep - 4));
    } else if (ok) {
        *why = "not an HTTP answer";
    }
    cr_buf_free(&ans);
    return code;
}

/* RFC 6962's PROOF(old, size) of the ledger's tree, one base64 hash a line. */
static cr_code proof_lines(audit_db *db, uint64_t old, uint64_t size, cr_buf *out,
                           cr_error *err)
{
    uint8_t (*lv)[H], p[PROOF_MAX + 2][H];
    uint64_t n = size;
    cr_code rc = audit_tree_leaves(db, &n, &lv, err);
    if (rc != CR_OK) return rc;
    size_t np = audit_consistency_path((const uint8_t (*)[H])lv, n, old, p);
    free(lv);
    for (size_t i = 0; i < np && rc == CR_OK; i++) {
        rc = audit_b64_put(out, p[i], H);
        if (rc == CR_OK) rc = cr_buf_putc(out, '\n');
    }
    return rc == CR_OK ? CR_OK : cr_error_set(err, CR_ENOMEM, 0, 0, "cosign: proof");
}

cr_code audit_cosigners_gather(cr_cosigners *c, audit_db *db, const char *note, cr_buf *out,
                               int *got, char *why, size_t why_len, cr_error *err)
{
    const char *text_end, *url, *name, *whyp;
    audit_tree t;
    size_t len = strlen(note);
    cr_code rc = audit_note_split(note, len, &text_end, err);
    if (rc == CR_OK) rc = audit_note_text(note, text_end, &t, err);
    if (rc != CR_OK) return rc;
    *got = 0;
    why[0] = '\0';
    if (cr_buf_put(out, note, len) != CR_OK) return cr_error_set(err, CR_ENOMEM, 0, 0, "cosign");
    for (int i = 0; i < COSIGNERS_MAX && (name = audit_policy_witness(c->policy, i, &url)); i++) {
        if (!url[0]) continue;
        unsigned code = 0;
        cr_buf body, ans;
        cr_buf_init(&body, 0);
        cr_buf_init(&ans, 0);
        /* a witness that holds another size than we thought says which (409): once more */
        for (int attempt = 0; attempt < 2; attempt++) {
            uint64_t old = c->held[i] <= t.size ? c->held[i] : 0;
            cr_buf_reset(&body);
            cr_buf_reset(&ans);
            cr_buf_printf(&body, "old %" PRIu64 "\n", old);
            if (old && old < t.size && (rc = proof_lines(db, old, t.size, &body, err)) != CR_OK)
                break;
            cr_buf_putc(&body, '\n');
            cr_buf_put(&body, note, len);
            code = http_post(url, body.p, body.len, &ans, &whyp);
            if (code != 409) break;
            uint64_t held;
            size_t n = strspn(ans.p ? ans.p : "", "0123456789");
            if (!n || !audit_get_u64(ans.p, n, &held)) break;
            c->held[i] = held;
        }
        if (code == 200 && ans.len > 4 && memcmp(ans.p, "\xe2\x80\x94 ", 4) == 0 &&
            ans.p[ans.len - 1] == '\n') {
            cr_buf_put(out, ans.p, ans.len);
            c->held[i] = t.size;
            (*got)++;
        } else {
            size_t at = strlen(why);
            snprintf(why + at, why_len - at, "%s%s: %s", at ? "; " : "", name,
                     code ? "refused" : whyp);
            if (code) {
                at = strlen(why);
                snprintf(why + at, why_len - at, " (%u %.*s)", code,
                         (int)strcspn(ans.p ? ans.p : "", "\n"), ans.p ? ans.p : "");
            }
        }
        cr_buf_free(&body);
        cr_buf_free(&ans);
        if (rc != CR_OK) return rc;
    }
    return CR_OK;
}
