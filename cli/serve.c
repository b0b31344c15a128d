/* cli/serve.c: `calc-route serve`, an HTTP/1.1 JSON service over one engine, so that a warm
 * pool and the ledger live as long as the service. libmicrohttpd runs a thread a connection
 * (`connections` of them, and CR_SERVE_OVERFLOW more that are only told 503), and each thread
 * runs its requests on the shared engine (cr_run() is thread-safe). Request bodies are --batch's lines (cli/line.h), answers are
 * --batch's result lines, so that the three front ends mean and answer the same. */
#include "cli/serve.h"

#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>
#include <sodium.h>

#include "common/defaults.h"

/* ---- libmicrohttpd, loaded when serve starts ----------------------------------------------
 * Linked in, it would cost every one-shot calc-route run: its constructor initialises GnuTLS
 * (0.6M instructions with the static archive, which also binds p11-kit and libffi: 2.0M
 * against 0.9M for the whole run; 4.8M linked shared). serve loads it once instead. */
#define MHD_SONAME "libmicrohttpd.so.12"   /* the ABI microhttpd.h 0.9.x describes */
#define MHD_FUNCTIONS(X) X(start_daemon) X(stop_daemon) X(quiesce_daemon) X(get_daemon_info) \
    X(queue_response) X(destroy_response) X(add_response_header) \
    X(create_response_from_buffer) X(create_response_from_callback) \
    X(lookup_connection_value)

static struct {
#define X(f) __typeof__(MHD_##f) *f;
    MHD_FUNCTIONS(X)
#undef X
} mhd;

static int load_mhd(void)
{
    void *h = dlopen(MHD_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "calc-route: serve needs libmicrohttpd (Debian: libmicrohttpd12): %s\n",
                dlerror());
        return -1;
    }
#define X(f) \
    if (!(*(void **)&mhd.f = dlsym(h, "MHD_" #f))) { \
        fprintf(stderr, "calc-route: serve: %s has no MHD_" #f "\n", MHD_SONAME); \
        return -1; \
    }
    MHD_FUNCTIONS(X)
#undef X
    return 0;   /* kept loaded: the process ends soon after the service */
}

/* ---- options ---------------------------------------------------------------------------- */

static int parse_count(const char *value, unsigned long long max, unsigned long long *out)
{
    char *end;
    errno = 0;
    unsigned long long n = strtoull(value, &end, 10);
    if (*value < '0' || *value > '9' || *end || errno || n < 1 || n > max) return -1;
    *out = n;
    return 0;
}

int cr_serve_option(cr_serve_opts *o, const char *name, const char *value, char *why,
                    size_t why_len)
{
    unsigned long long n;
    if (strcmp(name, "listen") == 0) o->listen = value;
    else if (strcmp(name, "listen-public") == 0) o->listen_public = 1;
    else if (strcmp(name, "token-file") == 0) o->token_file = value;
    else if (strcmp(name, "connections") == 0) {
        if (parse_count(value, 4096, &n) < 0) {
            snprintf(why, why_len, "--connections: want 1 to 4096, got '%s'", value);
            return -1;
        }
        o->connections = (unsigned)n;
    } else if (strcmp(name, "max-body") == 0) {
        if (parse_count(value, 1u << 30, &n) < 0) {
            snprintf(why, why_len, "--max-body: want 1 to 1073741824 bytes, got '%s'", value);
            return -1;
        }
        o->max_body = (size_t)n;
    } else {
        snprintf(why, why_len, "no serve option '%s'", name);
        return -1;
    }
    return 0;
}

/* ---- metrics ---------------------------------------------------------------------------- */

enum route { R_RUN, R_EXPLAIN, R_BATCH, R_HEALTHZ, R_METRICS, R_OTHER, NROUTES };
static const char *const route_names[NROUTES] = { "/v1/run", "/v1/explain", "/v1/batch",
                                                  "/healthz", "/metrics", "other" };
static const unsigned codes[] = { 200, 400, 401, 404, 405, 413, 500, 503 };
#define NCODES (sizeof codes / sizeof *codes)
/* Seconds; a run in-process takes tens of microseconds, a cold sandbox tens of milliseconds. */
static const double buckets[] = { 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                  0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10 };
#define NBUCKETS (sizeof buckets / sizeof *buckets)

typedef struct {
    atomic_ullong requests[NROUTES][NCODES];
    atomic_ullong le[NROUTES][NBUCKETS + 1];   /* the last: +Inf */
    atomic_ullong sum_ns[NROUTES];
    atomic_ullong runs[4];                     /* by cr_route */
    atomic_ullong bad_lines, engine_errors, ledger_appends;
} metrics;

static void count_line(metrics *m, const cr_line_info *info)
{
    if (info->outcome == CR_LINE_BAD) atomic_fetch_add(&m->bad_lines, 1);
    else if (info->outcome == CR_LINE_ENGINE) atomic_fetch_add(&m->engine_errors, 1);
    else if ((unsigned)info->route < 4) atomic_fetch_add(&m->runs[info->route], 1);
    if (info->audited) atomic_fetch_add(&m->ledger_appends, 1);
}

/* ---- the server ------------------------------------------------------------------------- */

typedef struct {
    cr_engine *engine;
    cr_line_defaults defaults;
    size_t max_body;
    int has_token;
    unsigned char token_hash[crypto_generichash_BYTES];
    atomic_int draining;
    pthread_mutex_t lock;
    pthread_cond_t idle;
    unsigned in_flight;         /* requests begun and not yet completed; under lock */
    unsigned connections;       /* --connections */
    atomic_uint open;           /* connections open now */
    metrics m;
} server;

/* One request, from its headers to its completion. */
typedef struct {
    enum route route;
    unsigned code;              /* the status queued; 0 before */
    struct timespec t0;
    char *body;
    size_t len, cap;
    int too_large;
} request;

static double since(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) * 1e-9;
}

static enum MHD_Result queue(server *s, struct MHD_Connection *c, request *r, unsigned code,
                             struct MHD_Response *resp, const char *type)
{
    if (!resp) return MHD_NO;   /* out of memory: the connection is closed */
    mhd.add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    /* A body left unread, or a service stopping: the connection is not reused (a client
     * that sent another request on it would meet a service that no longer answers; it
     * connects again and is refused instead). */
    if (code == MHD_HTTP_CONTENT_TOO_LARGE || code == MHD_HTTP_SERVICE_UNAVAILABLE ||
        atomic_load(&s->draining))
        mhd.add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
    r->code = code;
    enum MHD_Result ok = mhd.queue_response(c, code, resp);
    mhd.destroy_response(resp);
    return ok;
}

/* A JSON body and its newline; text is taken (NULL: out of memory, the connection closes). */
static struct MHD_Response *json_body(char *text)
{
    size_t n = text ? strlen(text) : 0;
    char *t = text ? realloc(text, n + 2) : NULL;
    if (!t) {
        free(text);
        return NULL;
    }
    t[n] = '\n';
    t[n + 1] = '\0';
    return mhd.create_response_from_buffer(n + 1, t, MHD_RESPMEM_MUST_FREE);
}

/* An error in --json's error shape: {"id":null,"status":...,"error":{type, message, line,
 * col}}. */
static enum MHD_Result fail(server *s, struct MHD_Connection *c, request *r, unsigned code,
                            const char *status, const char *message)
{
    struct MHD_Response *resp = json_body(cr_line_error(NULL, status, "HTTPError", message,
                                                        0, 0));
    if (resp && code == MHD_HTTP_UNAUTHORIZED)
        mhd.add_response_header(resp, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer");
    if (resp && code == MHD_HTTP_METHOD_NOT_ALLOWED)
        mhd.add_response_header(resp, MHD_HTTP_HEADER_ALLOW,
                                r->route <= R_BATCH ? "POST" : "GET");
    return queue(s, c, r, code, resp, "application/json");
}

/* The bearer token, compared as hashes in constant time: neither its bytes nor its length
 * show in the time a wrong one takes. */
static int authorized(server *s, struct MHD_Connection *c)
{
    if (!s->has_token) return 1;
    const char *h = mhd.lookup_connection_value(c, MHD_HEADER_KIND,
                                                MHD_HTTP_HEADER_AUTHORIZATION);
    if (!h || strncasecmp(h, "Bearer ", 7) != 0) return 0;
    h += 7;
    while (*h == ' ') h++;
    unsigned char got[crypto_generichash_BYTES];
    crypto_generichash(got, sizeof got, (const unsigned char *)h, strlen(h), NULL, 0);
    return sodium_memcmp(got, s->token_hash, sizeof got) == 0;
}

/* /metrics: Prometheus' text exposition format. */
static char *metrics_text(server *s)
{
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    if (!f) return NULL;
    metrics *m = &s->m;
    fputs("# HELP calcroute_http_requests_total HTTP requests answered, by route and status.\n"
          "# TYPE calcroute_http_requests_total counter\n", f);
    for (int r = 0; r < NROUTES; r++)
        for (size_t k = 0; k < NCODES; k++) {
            unsigned long long v = atomic_load(&m->requests[r][k]);
            if (v || (r == R_RUN && codes[k] == 200))
                fprintf(f, "calcroute_http_requests_total{route=\"%s\",code=\"%u\"} %llu\n",
                        route_names[r], codes[k], v);
        }
    fputs("# HELP calcroute_http_request_duration_seconds Time from a request's headers to "
          "its answer's last byte.\n"
          "# TYPE calcroute_http_request_duration_seconds histogram\n", f);
    for (int r = 0; r < NROUTES; r++) {
        unsigned long long cum = 0;
        for (size_t b = 0; b <= NBUCKETS; b++) {
            cum += atomic_load(&m->le[r][b]);
            if (b < NBUCKETS)
                fprintf(f, "calcroute_http_request_duration_seconds_bucket{route=\"%s\","
                        "le=\"%g\"} %llu\n", route_names[r], buckets[b], cum);
            else
                fprintf(f, "calcroute_http_request_duration_seconds_bucket{route=\"%s\","
                        "le=\"+Inf\"} %llu\n", route_names[r], cum);
        }
        fprintf(f, "calcroute_http_request_duration_seconds_sum{route=\"%s\"} %.9f\n"
                "calcroute_http_request_duration_seconds_count{route=\"%s\"} %llu\n",
                route_names[r], (double)atomic_load(&m->sum_ns[r]) * 1e-9, route_names[r], cum);
    }
    fputs("# HELP calcroute_runs_total Requests the engine answered, by where they ran.\n"
          "# TYPE calcroute_runs_total counter\n", f);
    for (int t = 0; t < 4; t++)
        fprintf(f, "calcroute_runs_total{route=\"%s\"} %llu\n", cr_route_name((cr_route)t),
                atomic_load(&m->runs[t]));
    fprintf(f, "# HELP calcroute_bad_requests_total Request lines that were not requests.\n"
            "# TYPE calcroute_bad_requests_total counter\n"
            "calcroute_bad_requests_total %llu\n"
            "# HELP calcroute_engine_errors_total Requests the engine failed to answer.\n"
            "# TYPE calcroute_engine_errors_total counter\n"
            "calcroute_engine_errors_total %llu\n"
            "# HELP calcroute_ledger_appends_total Records appended to the audit ledger.\n"
            "# TYPE calcroute_ledger_appends_total counter\n"
            "calcroute_ledger_appends_total %llu\n",
            atomic_load(&m->bad_lines), atomic_load(&m->engine_errors),
            atomic_load(&m->ledger_appends));
    size_t pool_size, pool_ready;
    cr_engine_pool_state(s->engine, &pool_size, &pool_ready);
    pthread_mutex_lock(&s->lock);
    unsigned in_flight = s->in_flight;
    pthread_mutex_unlock(&s->lock);
    fprintf(f, "# HELP calcroute_pool_size Warm sandboxes configured (option pool).\n"
            "# TYPE calcroute_pool_size gauge\n"
            "calcroute_pool_size %zu\n"
            "# HELP calcroute_pool_ready Warm sandboxes ready now.\n"
            "# TYPE calcroute_pool_ready gauge\n"
            "calcroute_pool_ready %zu\n"
            "# HELP calcroute_in_flight Requests being answered now.\n"
            "# TYPE calcroute_in_flight gauge\n"
            "calcroute_in_flight %u\n"
            "# HELP calcroute_connections Connections open now.\n"
            "# TYPE calcroute_connections gauge\n"
            "calcroute_connections %u\n",
            pool_size, pool_ready,
            in_flight, atomic_load(&s->open));
    if (fclose(f) != 0) {
        free(text);
        return NULL;
    }
    return text;
}

/* ---- /v1/batch: one result line a request line, each sent as it is made ------------------- */

typedef struct {
    server *s;
    request *r;
    size_t next;          /* where the next request line starts in r->body */
    char *out;            /* the result line being sent, its newline included */
    size_t out_len, out_off;
} batch;

static ssize_t batch_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    batch *b = cls;
    request *r = b->r;
    (void)pos;
    while (b->out_off == b->out_len) {
        free(b->out);
        b->out = NULL;
        b->out_len = b->out_off = 0;
        if (b->next >= r->len) return MHD_CONTENT_READER_END_OF_STREAM;
        const char *line = r->body + b->next, *nl = memchr(line, '\n', r->len - b->next);
        size_t n = nl ? (size_t)(nl - line) : r->len - b->next;
        b->next += n + 1;
        while (n && line[n - 1] == '\r') n--;
        cr_line_info info;
        char *text = cr_line_result(b->s->engine, line, n, NULL, 0, b->s->defaults, &info);
        count_line(&b->s->m, &info);
        if (!text) return MHD_CONTENT_READER_END_WITH_ERROR;
        b->out_len = strlen(text) + 1;
        text[b->out_len - 1] = '\n';   /* the NUL becomes the line's end */
        b->out = text;
    }
    size_t k = b->out_len - b->out_off < max ? b->out_len - b->out_off : max;
    memcpy(buf, b->out + b->out_off, k);
    b->out_off += k;
    return (ssize_t)k;
}

static void batch_free(void *cls)
{
    batch *b = cls;
    free(b->out);
    free(b);
}

/* ---- dispatch --------------------------------------------------------------------------- */

static enum route route_of(const char *url)
{
    for (int r = 0; r < R_OTHER; r++)
        if (strcmp(url, route_names[r]) == 0) return (enum route)r;
    return R_OTHER;
}

/* Answered before the body is read when its length is known (no 100 Continue), else once the
 * body, kept no further than the limit, has been read. */
static enum MHD_Result too_large(server *s, struct MHD_Connection *c, request *r)
{
    char why[96];
    snprintf(why, sizeof why, "a request body is at most %zu bytes", s->max_body);
    return fail(s, c, r, MHD_HTTP_CONTENT_TOO_LARGE, "too_large", why);
}

/* The first call for a request: what can be answered from its headers alone. MHD_YES with
 * nothing queued: read the body. */
static enum MHD_Result on_headers(server *s, struct MHD_Connection *c, request *r,
                                  const char *method)
{
    int post = strcmp(method, MHD_HTTP_METHOD_POST) == 0;
    int get = strcmp(method, MHD_HTTP_METHOD_GET) == 0 ||
              strcmp(method, MHD_HTTP_METHOD_HEAD) == 0;
    char why[160];
    if (r->route == R_OTHER)
        return fail(s, c, r, MHD_HTTP_NOT_FOUND, "not_found",
                    "no such path: POST /v1/run, /v1/explain, /v1/batch; GET /healthz, "
                    "/metrics");
    if (r->route <= R_BATCH ? !post : !get) {
        snprintf(why, sizeof why, "%s takes %s, not %.40s", route_names[r->route],
                 r->route <= R_BATCH ? "POST" : "GET", method);
        return fail(s, c, r, MHD_HTTP_METHOD_NOT_ALLOWED, "method_not_allowed", why);
    }
    if (r->route != R_HEALTHZ && !authorized(s, c))
        return fail(s, c, r, MHD_HTTP_UNAUTHORIZED, "unauthorized",
                    "a valid bearer token is wanted (Authorization: Bearer TOKEN)");
    if (atomic_load(&s->draining))
        return fail(s, c, r, MHD_HTTP_SERVICE_UNAVAILABLE, "unavailable",
                    "the service is stopping");
    if (atomic_load(&s->open) > s->connections)
        return fail(s, c, r, MHD_HTTP_SERVICE_UNAVAILABLE, "unavailable",
                    "too many connections at once: try again");
    if (r->route == R_HEALTHZ || r->route == R_METRICS) return MHD_YES;   /* on_body_done() */
    const char *cl = mhd.lookup_connection_value(c, MHD_HEADER_KIND,
                                                 MHD_HTTP_HEADER_CONTENT_LENGTH);
    if (cl && strtoull(cl, NULL, 10) > s->max_body) return too_large(s, c, r);
    return MHD_YES;
}

/* An answer queued at the first call, before the (empty) body is read, makes libmicrohttpd
 * close the connection after it: errors only; GETs come here, so a kept-alive probe or scraper
 * keeps its connection. */
static enum MHD_Result on_body_done(server *s, struct MHD_Connection *c, request *r)
{
    if (r->route == R_HEALTHZ)
        return queue(s, c, r, MHD_HTTP_OK, json_body(strdup("{\"status\":\"ok\"}")),
                     "application/json");
    if (r->route == R_METRICS) {
        char *text = metrics_text(s);
        return queue(s, c, r, MHD_HTTP_OK,
                     text ? mhd.create_response_from_buffer(strlen(text), text,
                                                            MHD_RESPMEM_MUST_FREE) : NULL,
                     "text/plain; version=0.0.4; charset=utf-8");
    }
    if (r->route == R_BATCH) {
        batch *b = calloc(1, sizeof *b);
        if (!b) return MHD_NO;
        b->s = s;
        b->r = r;
        struct MHD_Response *resp = mhd.create_response_from_callback(MHD_SIZE_UNKNOWN, 16384,
                                                                      batch_read, b,
                                                                      batch_free);
        if (!resp) batch_free(b);
        return queue(s, c, r, MHD_HTTP_OK, resp, "application/x-ndjson");
    }
    cr_line_info info;
    char *text = cr_line_result(s->engine, r->body ? r->body : "", r->len, NULL,
                                r->route == R_EXPLAIN, s->defaults, &info);
    count_line(&s->m, &info);
    unsigned code = info.outcome == CR_LINE_BAD ? MHD_HTTP_BAD_REQUEST
                  : info.outcome == CR_LINE_ENGINE ? MHD_HTTP_INTERNAL_SERVER_ERROR
                  : MHD_HTTP_OK;
    return queue(s, c, r, code, json_body(text), "application/json");
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version,
                                  const char *upload, size_t *upload_size, void **state)
{
    server *s = cls;
    request *r = *state;
    (void)version;
    if (!r) {
        if (!(r = calloc(1, sizeof *r))) return MHD_NO;
        clock_gettime(CLOCK_MONOTONIC, &r->t0);
        r->route = route_of(url);
        *state = r;
        pthread_mutex_lock(&s->lock);
        s->in_flight++;
        pthread_mutex_unlock(&s->lock);
        /* GET /openapi.json: the API's description (cli/openapi.json), wanting no token, as
         * /healthz; answered below once the (empty) body is read, as the other GETs are, so
         * that the connection is kept. */
        if (strcmp(url, "/openapi.json") == 0 && (strcmp(method, MHD_HTTP_METHOD_GET) == 0 ||
                                                  strcmp(method, MHD_HTTP_METHOD_HEAD) == 0))
            return MHD_YES;
        return on_headers(s, c, r, method);
    }
    if (r->code) {   /* answered from the headers: the body is not read */
        *upload_size = 0;
        return MHD_YES;
    }
    if (r->route == R_OTHER && !*upload_size) {   /* /openapi.json: every other one has a code */
        size_t n;
        const char *doc = cr_openapi_json(&n);
        return queue(s, c, r, MHD_HTTP_OK,
                     mhd.create_response_from_buffer(n, (void *)doc, MHD_RESPMEM_PERSISTENT),
                     "application/json");
    }
    if (*upload_size) {
        size_t n = *upload_size;
        *upload_size = 0;
        if (r->too_large || n > s->max_body - r->len) {
            r->too_large = 1;
            return MHD_YES;
        }
        if (r->len + n + 1 > r->cap) {
            size_t cap = r->cap ? r->cap : 4096;
            while (cap < r->len + n + 1) cap *= 2;
            char *p = realloc(r->body, cap);
            if (!p) return MHD_NO;
            r->body = p;
            r->cap = cap;
        }
        memcpy(r->body + r->len, upload, n);
        r->len += n;
        r->body[r->len] = '\0';
        return MHD_YES;
    }
    return r->too_large ? too_large(s, c, r) : on_body_done(s, c, r);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **state,
                         enum MHD_RequestTerminationCode why)
{
    server *s = cls;
    request *r = *state;
    (void)c;
    (void)why;
    if (!r) return;
    double t = since(&r->t0);
    size_t k = 0, b = 0;
    while (k < NCODES && codes[k] != r->code) k++;
    while (b < NBUCKETS && t > buckets[b]) b++;
    if (k < NCODES) atomic_fetch_add(&s->m.requests[r->route][k], 1);
    atomic_fetch_add(&s->m.le[r->route][b], 1);
    atomic_fetch_add(&s->m.sum_ns[r->route], (unsigned long long)llround(t * 1e9));
    free(r->body);
    free(r);
    *state = NULL;
    pthread_mutex_lock(&s->lock);
    if (--s->in_flight == 0) pthread_cond_broadcast(&s->idle);
    pthread_mutex_unlock(&s->lock);
}

/* Counts the connections open, so that those past --connections (libmicrohttpd takes a few
 * more, then closes any further one unanswered) are told why. */
static void on_connection(void *cls, struct MHD_Connection *c, void **state,
                          enum MHD_ConnectionNotificationCode what)
{
    server *s = cls;
    (void)c;
    (void)state;
    if (what == MHD_CONNECTION_NOTIFY_STARTED) atomic_fetch_add(&s->open, 1);
    else atomic_fetch_sub(&s->open, 1);
}

/* ---- start and stop --------------------------------------------------------------------- */

static int is_loopback(const struct sockaddr *a)
{
    if (a->sa_family == AF_INET)
        return (ntohl(((const struct sockaddr_in *)a)->sin_addr.s_addr) >> 24) == 127;
    const struct in6_addr *v6 = &((const struct sockaddr_in6 *)a)->sin6_addr;
    return IN6_IS_ADDR_LOOPBACK(v6) ||
           (IN6_IS_ADDR_V4MAPPED(v6) && v6->s6_addr[12] == 127);
}

/* HOST:PORT or [V6]:PORT, numeric or a name, into *out. */
static int resolve(const char *listen, struct sockaddr_storage *out)
{
    char host[256];
    const char *colon = strrchr(listen, ':');
    if (!colon || colon == listen || (size_t)(colon - listen) >= sizeof host) return -1;
    size_t hn = (size_t)(colon - listen);
    if (listen[0] == '[' && listen[hn - 1] == ']') {
        memcpy(host, listen + 1, hn - 2);
        host[hn - 2] = '\0';
    } else {
        memcpy(host, listen, hn);
        host[hn] = '\0';
    }
    unsigned long long port;
    if (strcmp(colon + 1, "0") == 0) port = 0;
    else if (parse_count(colon + 1, 65535, &port) < 0) return -1;
    struct addrinfo hints = { .ai_flags = AI_NUMERICSERV, .ai_socktype = SOCK_STREAM }, *ai;
    char service[8];
    snprintf(service, sizeof service, "%llu", port);
    if (getaddrinfo(host, service, &hints, &ai) != 0) return -1;
    memcpy(out, ai->ai_addr, ai->ai_addrlen);
    freeaddrinfo(ai);
    return 0;
}

static int read_token(server *s, const char *path)
{
    FILE *f = fopen(path, "r");
    char tok[4096];
    size_t n = f ? fread(tok, 1, sizeof tok - 1, f) : 0;
    if (!f) {
        fprintf(stderr, "calc-route: --token-file %s: %s\n", path, strerror(errno));
        return -1;
    }
    int longer = n == sizeof tok - 1 && fgetc(f) != EOF;
    fclose(f);
    while (n && (tok[n - 1] == '\n' || tok[n - 1] == '\r' || tok[n - 1] == ' ')) n--;
    tok[n] = '\0';
    if (n == 0 || longer || strpbrk(tok, "\r\n")) {
        fprintf(stderr, "calc-route: --token-file %s: want one line, the token (at most "
                "4095 bytes)\n", path);
        sodium_memzero(tok, sizeof tok);
        return -1;
    }
    crypto_generichash(s->token_hash, sizeof s->token_hash, (unsigned char *)tok, n, NULL, 0);
    sodium_memzero(tok, sizeof tok);
    s->has_token = 1;
    return 0;
}

/* Waits until no request is under way and no connection is open, or until no request is under
 * way once CR_SERVE_LINGER_MS have passed since it began. Every answer given while stopping closes its
 * connection, so the clients that were busy go at once; one idle on a kept-alive connection may
 * have sent a request that crossed the stop, which the wait lets in to be answered 503 (when
 * it comes later, it meets a closed connection, unread and not run). A byte more on stop_fd (a
 * second signal) ends the runs under way, which are then answered as interrupted. */
static void drain(server *s, int stop_fd)
{
    struct timespec begun;
    clock_gettime(CLOCK_MONOTONIC, &begun);
    pthread_mutex_lock(&s->lock);
    while (s->in_flight || (atomic_load(&s->open) && since(&begun) * 1e3 < CR_SERVE_LINGER_MS)) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += s->in_flight ? 100000000 : 10000000;
        if (until.tv_nsec >= 1000000000) until.tv_sec++, until.tv_nsec -= 1000000000;
        pthread_cond_timedwait(&s->idle, &s->lock, &until);
        char byte;
        if (stop_fd >= 0 && read(stop_fd, &byte, 1) == 1) cr_engine_interrupt(s->engine);
    }
    pthread_mutex_unlock(&s->lock);
}

int cr_serve(cr_engine *engine, const cr_serve_opts *o, int stop_fd,
             cr_line_defaults defaults)
{
    const char *listen = o->listen ? o->listen : CR_SERVE_LISTEN;
    struct sockaddr_storage addr;
    if (resolve(listen, &addr) < 0) {
        fprintf(stderr, "calc-route: --listen: want HOST:PORT or [IPV6]:PORT, got '%s'\n",
                listen);
        return 2;
    }
    if (!is_loopback((struct sockaddr *)&addr) && !o->listen_public) {
        fprintf(stderr, "calc-route: --listen %s: not a loopback address; serving beyond "
                "this machine wants --listen-public (and a --token-file)\n", listen);
        return 2;
    }
    if (load_mhd() < 0) return 5;
    server *s = calloc(1, sizeof *s);
    if (!s || sodium_init() < 0) {
        free(s);
        return 5;
    }
    s->engine = engine;
    s->defaults = defaults;
    s->max_body = o->max_body ? o->max_body : CR_SERVE_MAX_BODY;
    s->connections = o->connections ? o->connections : CR_SERVE_CONNECTIONS;
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->idle, NULL);
    int rc = 0;
    if (o->token_file && read_token(s, o->token_file) < 0) rc = 2;
    /* The engine's timeout bounds each run; a connection silent for longer than a run may
     * take, plus the slack a client needs, is closed. */
    const char *run_s = cr_config_get(cr_engine_config(engine), "timeout");
    unsigned timeout = (unsigned)ceil(run_s ? strtod(run_s, NULL) : CR_DEFAULT_TIMEOUT_S) + 30;
    unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
                     MHD_USE_POLL | MHD_USE_ITC | MHD_USE_ERROR_LOG |
                     (addr.ss_family == AF_INET6 ? MHD_USE_IPv6 : 0);
    struct MHD_Daemon *d = rc ? NULL : mhd.start_daemon(
        flags, 0, NULL, NULL, on_request, s,
        MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr,
        MHD_OPTION_CONNECTION_LIMIT, s->connections + CR_SERVE_OVERFLOW,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)65536,
        MHD_OPTION_CONNECTION_TIMEOUT, timeout,
        MHD_OPTION_NOTIFY_COMPLETED, on_completed, s,
        MHD_OPTION_NOTIFY_CONNECTION, on_connection, s,
        MHD_OPTION_END);
    if (!d && !rc) {
        fprintf(stderr, "calc-route: serve: cannot listen on %s: %s\n", listen,
                strerror(errno));
        rc = 5;
    }
    if (d) {
        const union MHD_DaemonInfo *port = mhd.get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
        char host[INET6_ADDRSTRLEN] = "?";
        if (addr.ss_family == AF_INET6)
            inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&addr)->sin6_addr, host, sizeof host);
        else
            inet_ntop(AF_INET, &((struct sockaddr_in *)&addr)->sin_addr, host, sizeof host);
        printf(addr.ss_family == AF_INET6 ? "calc-route: serving on http://[%s]:%u\n"
                                          : "calc-route: serving on http://%s:%u\n",
               host, port ? port->port : 0);
        fflush(stdout);
        for (;;) {
            struct pollfd p = { stop_fd, POLLIN, 0 };
            if (stop_fd < 0 || poll(&p, 1, -1) > 0) break;
            if (errno != EINTR) break;
        }
        char byte;
        if (stop_fd >= 0) (void)!read(stop_fd, &byte, 1);
        /* Stop accepting; the connections open go on, and a request that comes on one now
         * is answered 503 (closing it); those under way are answered. */
        atomic_store(&s->draining, 1);
        MHD_socket listener = mhd.quiesce_daemon(d);
        if (listener != MHD_INVALID_SOCKET) close(listener);
        drain(s, stop_fd);
        mhd.stop_daemon(d);
        fprintf(stderr, "calc-route: serve: stopped, every request answered\n");
    }
    pthread_cond_destroy(&s->idle);
    pthread_mutex_destroy(&s->lock);
    sodium_memzero(s, sizeof *s);
    free(s);
    return rc;
}
