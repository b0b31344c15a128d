/* cli/mcp_http.c: the MCP's Streamable HTTP transport, as serve answers POST /mcp: the checks
 * the transport adds to a message (Origin, MCP-Protocol-Version, Mcp-Method and Mcp-Name
 * against the body), then cli/mcp.c's handler. Stateless: no Mcp-Session-Id is minted (2026-07-28
 * has none, and the handshake revisions make it optional), so the version a handshake client
 * negotiated comes back in each request's MCP-Protocol-Version header. A tools/call runs on a
 * thread of its own while the connection's thread waits on it and on the client's socket: a
 * hangup interrupts the call (the request's own interrupt), and a run_python call answers as
 * an event stream that carries notifications/progress each second while it runs. */
#include "cli/mcp.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

/* How often a run_python call that asked for progress (a progressToken) hears of it. */
#define PROGRESS_MS 1000
/* What a client without an MCP-Protocol-Version header speaks: the transport's first
 * revision, as the protocol allows (2025-06-18 brought the header). */
#define HEADERLESS_VERSION "2025-03-26"

struct cr_mcp_stream {
    cr_mcp *m;
    json_t *msg;
    cr_mcp_call call;
    int intr[2];              /* the call's own interrupt */
    int done[2];              /* written by the worker when it has the answer */
    int fd;                   /* the client's socket */
    int sse;                  /* text/event-stream, else one JSON object */
    json_t *token;            /* the progressToken, or NULL */
    pthread_t worker;
    int running;              /* the worker is to be joined */
    json_t *reply;            /* its answer */
    int finished, cancelled;  /* the answer is out (or, cancelled, will not be) */
    char *out;                /* the bytes being sent */
    size_t out_len, out_off;
    struct timespec t0;
    unsigned ticks;
    /* notifications/cancelled finds a call by its client and id, among these: */
    char *client, *id;
    struct cr_mcp_stream *next, **prev;
};

static pthread_mutex_t calls_lock = PTHREAD_MUTEX_INITIALIZER;
static struct cr_mcp_stream *calls;

/* ---- the checks ------------------------------------------------------------------------- */

static int loopback_host(const char *h, size_t n)
{
    return (n == 9 && strncasecmp(h, "localhost", 9) == 0) || (n == 5 && memcmp(h, "[::1]", 5) == 0) ||
           (n >= 4 && memcmp(h, "127.", 4) == 0 && strspn(h, "0123456789.") >= n);
}

/* A browser's page may reach a server on this machine through DNS rebinding, so an Origin is
 * taken only when it is the server's own (its Host) or a loopback one: http(s)://HOST[:PORT]. */
static int origin_allowed(const char *origin, const char *host)
{
    const char *h = strstr(origin, "://");
    if (!h) return 0;
    h += 3;
    size_t n = strlen(h), name = n;
    if (host && strcasecmp(h, host) == 0) return 1;
    if (*h == '[') name = strchr(h, ']') ? (size_t)(strchr(h, ']') - h) + 1 : n;
    else if (strchr(h, ':')) name = (size_t)(strchr(h, ':') - h);
    if (name < n && (h[name] != ':' || strspn(h + name + 1, "0123456789") != n - name - 1))
        return 0;
    return loopback_host(h, name);
}

/* A header value as the client meant it: the Base64 sentinel (=?base64?...?=) decoded. NULL
 * when it is not valid Base64. */
static char *header_value(const char *v)
{
    size_t n = strlen(v);
    if (n < 11 || strncmp(v, "=?base64?", 9) != 0 || strcmp(v + n - 2, "?=") != 0)
        return strdup(v);
    size_t len, cap = n;
    char *out = malloc(cap + 1);
    if (out && sodium_base642bin((unsigned char *)out, cap, v + 9, n - 11, NULL, &len, NULL,
                                 sodium_base64_VARIANT_ORIGINAL) == 0) {
        out[len] = '\0';
        if (strlen(out) == len) return out;
    }
    free(out);
    return NULL;
}

/* 2026-07-28's HeaderMismatch: a header missing, malformed, or not what the body says. */
static int mismatch(cr_mcp_http_out *out, json_t *id, const char *header, const char *got,
                    const char *want)
{
    char why[320];
    if (!got) snprintf(why, sizeof why, "Header mismatch: %s header missing", header);
    else snprintf(why, sizeof why, "Header mismatch: %s header value '%.100s' does not match "
                  "body value '%.100s'", header, got, want ? want : "");
    json_t *e = cr_mcp_error(id, CR_MCP_HEADER_MISMATCH, why, NULL);
    out->status = 400;
    out->text = cr_mcp_dump(e);
    json_decref(e);
    return 0;
}

/* Mcp-Method and Mcp-Name beside the body's method and tool name: checked when sent, and
 * wanted under 2026-07-28, which defines them. 1 when they agree, else 0 with out filled. */
static int headers_agree(const cr_mcp_http_in *in, json_t *msg, int modern, cr_mcp_http_out *out)
{
    json_t *id = json_object_get(msg, "id");
    const char *method = json_string_value(json_object_get(msg, "method"));
    if (in->method ? !method || strcmp(in->method, method) != 0 : modern && method)
        return mismatch(out, id, "Mcp-Method", in->method, method);
    if (!method || strcmp(method, "tools/call") != 0) return 1;
    const char *name = json_string_value(json_object_get(json_object_get(msg, "params"), "name"));
    if (!in->name) return modern ? mismatch(out, id, "Mcp-Name", NULL, name) : 1;
    char *got = header_value(in->name);
    int same = got && name && strcmp(got, name) == 0;
    free(got);
    return same ? 1 : mismatch(out, id, "Mcp-Name", in->name, name);
}

/* A synchronous answer's status: 2026-07-28 puts its version and header refusals at 400 and
 * an unknown method at 404; any other answer is 200, its error (if any) in the body. */
static unsigned status_of(json_t *reply, const char *version)
{
    json_int_t code = json_integer_value(json_object_get(json_object_get(reply, "error"), "code"));
    if (code == CR_MCP_BAD_VERSION || code == CR_MCP_HEADER_MISMATCH) return 400;
    if (code == CR_MCP_NO_METHOD && strcmp(version, CR_MCP_MODERN) >= 0) return 404;
    return 200;
}

/* ---- a tools/call, run on a thread of its own -------------------------------------------- */

static void *worker_main(void *arg)
{
    struct cr_mcp_stream *st = arg;
    st->reply = cr_mcp_handle(st->m, &st->call, st->msg);
    (void)!write(st->done[1], "", 1);
    return NULL;
}

/* notifications/cancelled, from a handshake revision's client (2026-07-28's closes the stream
 * instead): without sessions a request id is the client's own only with its token and address
 * beside it, and a call is cancelled only when exactly one under way has all three. */
static void cancel_call(const char *client, json_t *target)
{
    char *id = json_dumps(target, JSON_COMPACT | JSON_ENCODE_ANY);
    struct cr_mcp_stream *hit = NULL;
    int n = 0;
    pthread_mutex_lock(&calls_lock);
    for (struct cr_mcp_stream *st = calls; id && st; st = st->next)
        if (st->id && strcmp(st->id, id) == 0 && strcmp(st->client, client) == 0) hit = st, n++;
    if (n == 1 && !hit->cancelled) {
        hit->cancelled = 1;
        (void)!write(hit->intr[1], "!", 1);
    }
    pthread_mutex_unlock(&calls_lock);
    free(id);
}

static int stream_start(cr_mcp *m, const cr_mcp_http_in *in, json_t *msg, const char *version,
                        cr_mcp_http_out *out)
{
    struct cr_mcp_stream *st = calloc(1, sizeof *st);
    if (!st) return -1;
    st->intr[0] = st->intr[1] = st->done[0] = st->done[1] = -1;
    st->m = m;
    st->msg = json_incref(msg);
    st->fd = in->fd;
    json_t *params = json_object_get(msg, "params");
    st->sse = strcmp(json_string_value(json_object_get(params, "name")), "run_python") == 0;
    json_t *token = json_object_get(json_object_get(params, "_meta"), "progressToken");
    if (json_is_string(token) || json_is_integer(token)) st->token = json_incref(token);
    st->client = strdup(in->client ? in->client : "");
    st->id = json_dumps(json_object_get(msg, "id"), JSON_COMPACT | JSON_ENCODE_ANY);
    clock_gettime(CLOCK_MONOTONIC, &st->t0);
    if (!st->client || !st->id || pipe2(st->intr, O_CLOEXEC | O_NONBLOCK) < 0 ||
        pipe2(st->done, O_CLOEXEC) < 0) {
        cr_mcp_http_free(st);
        return -1;
    }
    st->call = (cr_mcp_call){ version, st->intr[0] };
    pthread_mutex_lock(&calls_lock);
    st->next = calls;
    if (calls) calls->prev = &st->next;
    st->prev = &calls;
    calls = st;
    pthread_mutex_unlock(&calls_lock);
    if (pthread_create(&st->worker, NULL, worker_main, st) != 0) {
        cr_mcp_http_free(st);
        return -1;
    }
    st->running = 1;
    out->status = 200;
    out->type = st->sse ? "text/event-stream" : "application/json";
    out->stream = st;
    return 0;
}

/* The next bytes to send: an event (data: MESSAGE, a blank line) or the JSON object. */
static int stream_put(struct cr_mcp_stream *st, json_t *msg)
{
    char *text = cr_mcp_dump(msg);
    json_decref(msg);
    if (!text) return -1;
    size_t n = strlen(text);
    free(st->out);
    st->out = malloc(n + 9);
    if (!st->out) {
        free(text);
        return -1;
    }
    st->out_len = (size_t)sprintf(st->out, st->sse ? "data: %s\n\n" : "%s\n", text);
    st->out_off = 0;
    free(text);
    return 0;
}

static int elapsed_ms(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int)((t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000);
}

ssize_t cr_mcp_http_read(struct cr_mcp_stream *st, char *buf, size_t max)
{
    while (st->out_off == st->out_len) {
        if (st->finished) return -1;
        int wait = -1;
        if (st->sse && st->token) {
            wait = (int)(st->ticks + 1) * PROGRESS_MS - elapsed_ms(&st->t0);
            if (wait < 0) wait = 0;
        }
        /* POLLRDHUP alone: a request the client sends next on the connection is no hangup. */
        struct pollfd p[2] = { { st->done[0], POLLIN, 0 }, { st->fd, POLLRDHUP, 0 } };
        int k = poll(p, st->fd >= 0 ? 2 : 1, wait);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) return -2;
        if (p[0].revents) {
            pthread_join(st->worker, NULL);
            st->running = 0;
            st->finished = 1;
            pthread_mutex_lock(&calls_lock);
            int cancelled = st->cancelled;
            pthread_mutex_unlock(&calls_lock);
            if (cancelled) return -1;   /* a cancelled request is not answered */
            json_t *reply = st->reply;
            st->reply = NULL;
            if (stream_put(st, reply ? reply : cr_mcp_error(json_object_get(st->msg, "id"),
                                                           CR_MCP_INTERNAL, "out of memory",
                                                           NULL)) < 0)
                return -2;
        } else if (k && p[1].revents) {
            return -2;   /* the client has gone: cr_mcp_http_free() ends the call */
        } else if (k == 0) {
            char what[64];
            st->ticks++;
            snprintf(what, sizeof what, "running, %u s", st->ticks * PROGRESS_MS / 1000);
            if (stream_put(st, cr_mcp_progress(st->token, st->ticks, what)) < 0) return -2;
        }
    }
    size_t n = st->out_len - st->out_off < max ? st->out_len - st->out_off : max;
    memcpy(buf, st->out + st->out_off, n);
    st->out_off += n;
    return (ssize_t)n;
}

void cr_mcp_http_free(struct cr_mcp_stream *st)
{
    if (!st) return;
    if (st->prev) {
        pthread_mutex_lock(&calls_lock);
        *st->prev = st->next;
        if (st->next) st->next->prev = st->prev;
        pthread_mutex_unlock(&calls_lock);
    }
    if (st->running) {
        (void)!write(st->intr[1], "!", 1);
        pthread_join(st->worker, NULL);
    }
    for (int i = 0; i < 2; i++) {
        if (st->intr[i] >= 0) close(st->intr[i]);
        if (st->done[i] >= 0) close(st->done[i]);
    }
    json_decref(st->msg);
    json_decref(st->token);
    json_decref(st->reply);
    free(st->out);
    free(st->client);
    free(st->id);
    free(st);
}

/* ---- one POST ---------------------------------------------------------------------------- */

int cr_mcp_http(cr_mcp *m, const cr_mcp_http_in *in, cr_mcp_http_out *out)
{
    *out = (cr_mcp_http_out){ 200, "application/json", NULL, NULL };
    json_t *reply = NULL;
    if (in->origin && !origin_allowed(in->origin, in->host)) {
        char why[200];
        snprintf(why, sizeof why, "Origin '%.100s' is not this server's, nor loopback",
                 in->origin);
        out->status = 403;
        reply = cr_mcp_error(NULL, CR_MCP_INVALID, why, NULL);
        goto answer;
    }
    json_error_t jerr;
    json_t *msg = json_loadb(in->body, in->len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &jerr);
    if (!msg) {
        char why[200];
        snprintf(why, sizeof why, "parse error: %s (column %d)", jerr.text, jerr.column);
        out->status = 400;
        reply = cr_mcp_error(NULL, CR_MCP_PARSE, why, NULL);
        goto answer;
    }
    json_t *id = json_object_get(msg, "id");
    const char *hv = in->protocol_version;
    json_t *meta = json_object_get(json_object_get(json_object_get(msg, "params"), "_meta"),
                                   CR_MCP_META_VERSION);
    const char *bv = json_string_value(meta);
    if (hv && !cr_mcp_supported(hv)) {
        out->status = 400;
        reply = cr_mcp_bad_version(id, hv);
    } else if (meta && !cr_mcp_supported(bv)) {
        out->status = 400;
        reply = cr_mcp_bad_version(id, bv);
    } else if ((bv || (hv && strcmp(hv, CR_MCP_MODERN) >= 0 && id)) &&
               (!hv || !bv || strcmp(hv, bv) != 0)) {
        mismatch(out, id, "MCP-Protocol-Version", hv, bv);
    }
    const char *version = bv ? cr_mcp_supported(bv) : hv ? cr_mcp_supported(hv)
                                                         : HEADERLESS_VERSION;
    if (reply || out->text || (json_is_object(msg) &&
                               !headers_agree(in, msg, strcmp(version, CR_MCP_MODERN) >= 0, out))) {
        json_decref(msg);
        goto answer;
    }
    const char *method = json_string_value(json_object_get(msg, "method"));
    if (json_is_object(msg) && !id) {   /* a notification (or a response): nothing answers */
        json_t *target = json_object_get(json_object_get(msg, "params"), "requestId");
        if (method && strcmp(method, "notifications/cancelled") == 0 &&
            (json_is_string(target) || json_is_integer(target)))
            cancel_call(in->client ? in->client : "", target);
        json_decref(msg);
        out->status = 202;
        return 0;
    }
    json_t *params = json_object_get(msg, "params");
    if (method && strcmp(method, "tools/call") == 0 &&
        json_is_string(json_object_get(params, "name")) && (json_is_string(id) || json_is_integer(id))) {
        int rc = stream_start(m, in, msg, version, out);
        json_decref(msg);
        return rc;
    }
    cr_mcp_call call = { version, -1 };
    reply = cr_mcp_handle(m, &call, msg);
    json_decref(msg);
    if (!reply) {
        out->status = 202;
        return 0;
    }
    out->status = status_of(reply, version);
answer:
    if (!out->text) out->text = cr_mcp_dump(reply);
    json_decref(reply);
    return out->text ? 0 : -1;
}
