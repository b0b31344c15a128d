/* cli/serve.c: `calc-route serve`, an HTTP/1.1 JSON service over one engine, so that a warm
 * pool and the ledger live as long as the service. libmicrohttpd runs a thread a connection
 * (`connections` of them, and CR_SERVE_OVERFLOW more that are only told 503), and each thread
 * runs its requests on the shared engine (cr_run() is thread-safe). Request bodies are --batch's lines (cli/line.h), answers are
 * --batch's result lines, so that the three front ends mean and answer the same. */
#include "cli/serve.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
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
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <microhttpd.h>
#include <signal.h>
#include <sodium.h>

#include "cli/mcp.h"
#include "cli/mhd.h"
#include "common/defaults.h"

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

static int parse_seconds(const char *value, double *out)
{
    char *end;
    double d = strtod(value, &end);
    if (*value == '\0' || *end || !(d > 0) || d > 86400) return -1;
    *out = d;
    return 0;
}

int cr_serve_option(cr_serve_opts *o, const char *name, const char *value, char *why,
                    size_t why_len)
{
    unsigned long long n;
    if (strcmp(name, "listen") == 0) o->listen = value;
    else if (strcmp(name, "listen-public") == 0) o->listen_public = 1;
    else if (strcmp(name, "token-file") == 0) o->token_file = value;
    else if (strcmp(name, "checkpoint-key") == 0) o->checkpoint_key = value;
    else if (strcmp(name, "tiles") == 0) o->tiles = value;
    else if (strcmp(name, "witnesses") == 0) o->witnesses = value;
    else if (strcmp(name, "connections") == 0 || strcmp(name, "per-address") == 0) {
        if (parse_count(value, 4096, &n) < 0) {
            snprintf(why, why_len, "--%s: want 1 to 4096, got '%s'", name, value);
            return -1;
        }
        *(name[0] == 'c' ? &o->connections : &o->per_address) = (unsigned)n;
    } else if (strcmp(name, "max-body") == 0) {
        if (parse_count(value, 1u << 30, &n) < 0) {
            snprintf(why, why_len, "--max-body: want 1 to 1073741824 bytes, got '%s'", value);
            return -1;
        }
        o->max_body = (size_t)n;
    } else if (strcmp(name, "drain-delay") == 0) {
        if (strcmp(value, "0") == 0) o->drain_delay = -1;   /* none, where 0 is the default's */
        else if (parse_seconds(value, &o->drain_delay) < 0) {
            snprintf(why, why_len, "--drain-delay: want seconds from 0 to 86400, got '%s'", value);
            return -1;
        }
    } else if (strcmp(name, "checkpoint-every") == 0) {
        if (strcmp(value, "0") == 0) o->checkpoint_every = -1;   /* none between */
        else if (parse_seconds(value, &o->checkpoint_every) < 0) {
            snprintf(why, why_len, "--checkpoint-every: want seconds from 0 to 86400, got '%s'",
                     value);
            return -1;
        }
    } else if (strcmp(name, "header-timeout") == 0 || strcmp(name, "drain-timeout") == 0) {
        if (parse_seconds(value, name[0] == 'h' ? &o->header_timeout : &o->drain_timeout) < 0) {
            snprintf(why, why_len, "--%s: want seconds above 0 (at most 86400), got '%s'",
                     name, value);
            return -1;
        }
    } else {
        snprintf(why, why_len, "no serve option '%s'", name);
        return -1;
    }
    return 0;
}

/* ---- routes and refusals ---------------------------------------------------------------- */

/* The routes, one row each: id, path (also the route's label in /metrics), flags, and the
 * handler that answers once the body is read (on_body_done()). Adding an endpoint is a row
 * here, its handler, and its entry in cli/openapi.json (docs/DESIGN.md). */
enum { RT_POST = 1,     /* POST with a body, else GET (and HEAD) */
       RT_OPEN = 2,     /* no token wanted */
       RT_PROBE = 4,    /* answered past --connections and while stopping; no quota */
       RT_IDEM = 8,     /* takes an Idempotency-Key */
       RT_EXPLAIN = 16, /* a line answered as --explain answers it */
       RT_TLOG = 32,    /* only with --tiles */
       RT_PREFIX = 64 };  /* the path and anything after it */
#define ROUTES(X) \
    X(RUN, "/v1/run", RT_POST | RT_IDEM, answer_line) \
    X(EXPLAIN, "/v1/explain", RT_POST | RT_EXPLAIN, answer_line) \
    X(BATCH, "/v1/batch", RT_POST, answer_batch) \
    X(LIVEZ, "/livez", RT_OPEN | RT_PROBE, answer_alive) \
    X(HEALTHZ, "/healthz", RT_OPEN | RT_PROBE, answer_alive) \
    X(READYZ, "/readyz", RT_OPEN | RT_PROBE, answer_ready) \
    X(METRICS, "/metrics", RT_PROBE, answer_metrics) \
    X(OPENAPI, "/openapi.json", RT_OPEN, answer_openapi) \
    X(MCP, "/mcp", RT_POST, mcp_answer) \
    X(CHECKPOINT, "/checkpoint", RT_PROBE | RT_TLOG, tlog_answer) \
    X(TILE, "/tile/", RT_PROBE | RT_TLOG | RT_PREFIX, tlog_answer) \
    X(OTHER, "other", 0, NULL)
#define ROUTE_ID(id, path, flags, fn) R_##id,
enum route { ROUTES(ROUTE_ID) NROUTES };
#undef ROUTE_ID
#define ROUTE_ROW(id, path, flags, fn) { path, flags },
static const struct { const char *path; unsigned flags; } routes[NROUTES] = { ROUTES(ROUTE_ROW) };
#undef ROUTE_ROW

/* Every named refusal: its status, and whether a client may send the same request again
 * later (Retry-After says when). The reason is the problem's type, /problems/REASON (RFC
 * 9457), and the `status` word of a batch's line. */
#define REFUSALS(X) \
    X(bad_request, 400, 0, "The request is not a request") \
    X(unauthorized, 401, 0, "A valid bearer token is wanted") \
    X(not_found, 404, 0, "No such path") \
    X(method_not_allowed, 405, 0, "The path takes another method") \
    X(idempotency_conflict, 409, 1, "A request with this Idempotency-Key is under way") \
    X(too_large, 413, 0, "The request body is too large") \
    X(idempotency_mismatch, 422, 0, "The Idempotency-Key was used with another request") \
    X(queue_full, 429, 1, "Every warm sandbox is busy and the queue is full") \
    X(queue_timeout, 429, 1, "No warm sandbox came within the run's timeout") \
    X(rate_limited, 429, 1, "The token's requests a second are spent") \
    X(concurrency_limited, 429, 1, "The token has its requests at once under way") \
    X(engine_error, 500, 0, "The engine failed to answer") \
    X(ledger_unavailable, 503, 5, "The audit ledger cannot record the answer, so none is given") \
    X(shutting_down, 503, 0, "The service is stopping") \
    X(unavailable, 503, 1, "Too many connections at once") \
    X(header_timeout, 408, 0, "The request's headers and body took too long")
#define REFUSAL_ID(name, code, retry, title) F_##name,
enum refusal { REFUSALS(REFUSAL_ID) NREFUSALS };
#undef REFUSAL_ID
#define REFUSAL_ROW(name, code, retry, title) { #name, code, retry, title },
static const struct {
    const char *name;
    unsigned code, retry;   /* retry: seconds for Retry-After, 0: none */
    const char *title;
} refusals[NREFUSALS] = { REFUSALS(REFUSAL_ROW) };
#undef REFUSAL_ROW

static enum refusal refusal_named(const char *name)
{
    for (int f = 0; f < NREFUSALS; f++)
        if (strcmp(refusals[f].name, name) == 0) return (enum refusal)f;
    return F_engine_error;
}

/* ---- metrics ---------------------------------------------------------------------------- */

static const unsigned codes[] = { 200, 400, 401, 404, 405, 409, 413, 422, 429, 500, 503 };
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
    atomic_ullong refused[NREFUSALS];
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

/* A bearer token (hashed) and its quotas, from one line of the token file. */
typedef struct {
    unsigned char hash[crypto_generichash_BYTES];
    double rate, burst;         /* requests a second, and at once from rest; 0: no bound */
    unsigned concurrent;        /* requests under way at once; 0: no bound */
    double tokens;              /* the bucket, refilled at `rate`; under the server's lock */
    struct timespec filled;
    unsigned under_way;
} token;

/* A connection, from its start to its close: the deadline for its requests' headers and
 * body is kept from here (libmicrohttpd's own timeout restarts at every byte, which a client
 * sending one byte at a time would keep alive for ever). */
typedef struct conn {
    int fd;                     /* our own copy of its socket: shutdown() through it can
                                   never reach another socket that reused the number */
    int reading;                /* waiting for a request's headers or body */
    int cut;                    /* shut down by the deadline */
    struct timespec since;      /* when it began waiting */
    struct conn *next, **prev;
} conn;

/* An answer kept for its Idempotency-Key: the same key (of the same token) gets it again,
 * unrun; another request under the key is refused. */
typedef struct idem {
    unsigned char key[crypto_generichash_BYTES], body[crypto_generichash_BYTES];
    int done;
    unsigned code;
    char *text;
    struct timespec at;
    struct idem *next;
} idem;
#define IDEM_MAX 4096
#define IDEM_TTL_S 86400

typedef struct {
    cr_engine *engine;
    cr_line_defaults defaults;
    size_t max_body;
    token *tokens;
    size_t ntokens;
    atomic_int unready;         /* stopping: /readyz fails, requests are still served */
    atomic_int draining;        /* then: nothing new is run */
    pthread_mutex_t lock;
    pthread_cond_t idle;
    unsigned in_flight;         /* requests begun and not yet completed; under lock */
    unsigned connections;       /* --connections */
    atomic_uint open;           /* connections open now */
    double header_timeout;
    conn *conns;                /* under lock */
    idem *idems;                /* under lock */
    unsigned nidems;
    int signer;                 /* --checkpoint-key: 1 once the start's signing worked */
    char signer_why[256];
    const char *signer_key;
    double signer_every;        /* seconds between checkpoints; 0: none between */
    pthread_t signer_thread;
    int signing;                /* the signer goes on; under lock */
    atomic_ullong checkpoints;  /* signed by this process */
    atomic_ullong checkpoint_seq;   /* the newest of them covers records 1..this */
    pthread_t watchdog;
    int watching;               /* the watchdog goes on; under lock */
    metrics m;
    cr_mcp *mcp;                /* POST /mcp's tools (cli/mcp_http.c) */
    const char *tiles, *tiles_key;  /* --tiles, --checkpoint-key */
    cr_cosigners *cosigners;        /* --witnesses; under tiles_lock */
    pthread_mutex_t tiles_lock;     /* one export at a time; tiles_size under it */
    uint64_t tiles_size;            /* the records the published checkpoint covers */
    int tiles_made;
} server;

/* One request, from its headers to its completion. */
typedef struct {
    enum route route;
    unsigned code;              /* the status queued; 0 before */
    struct timespec t0;
    char *body;
    size_t len, cap;
    int too_large;
    token *tok;                 /* the token it came with (quotas), or NULL */
    int holds;                  /* it counts in tok->under_way */
    idem *idem;                 /* its Idempotency-Key's entry, running */
    unsigned char idem_key[crypto_generichash_BYTES];
    int has_idem;
    char tile[80];              /* GET /tile/...: the path after /tile/ ("" when too long) */
} request;

static double since(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) * 1e-9;
}

/* The token's quota as the IETF ratelimit-headers draft spells it: the policy (quota q in a
 * window of w seconds) and what is left of it (r, and t seconds until it has more). Under
 * the server's lock. */
static void ratelimit_headers(struct MHD_Response *resp, const token *t)
{
    if (!t || t->rate <= 0) return;
    char v[96];
    snprintf(v, sizeof v, "\"token\";q=%.0f;w=%.0f", t->burst, ceil(t->burst / t->rate));
    mhd.add_response_header(resp, "RateLimit-Policy", v);
    double left = floor(t->tokens);
    snprintf(v, sizeof v, "\"token\";r=%.0f;t=%.0f", left < 0 ? 0 : left,
             left >= 1 ? 0 : ceil((1 - t->tokens) / t->rate));
    mhd.add_response_header(resp, "RateLimit", v);
}

static enum MHD_Result queue(server *s, struct MHD_Connection *c, request *r, unsigned code,
                             struct MHD_Response *resp, const char *type)
{
    if (!resp) return MHD_NO;   /* out of memory: the connection is closed */
    mhd.add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    if (r->tok && r->tok->rate > 0) {
        pthread_mutex_lock(&s->lock);
        ratelimit_headers(resp, r->tok);
        pthread_mutex_unlock(&s->lock);
    }
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

/* A body of text and its newline; text is taken (NULL: out of memory, the connection
 * closes). */
static struct MHD_Response *text_body(char *text)
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

/* An RFC 9457 problem: type /problems/REASON, title, status, detail, reason, and the members
 * of --json's error shape: the request's id (null when unknown) and error {type, message,
 * line, col}. `line` (NULL: none) is the error line the engine's front end made, whose id
 * and error are kept. */
static char *problem_text(enum refusal f, const char *detail, const char *line)
{
    json_t *from = line ? json_loads(line, 0, NULL) : NULL;
    json_t *id = from ? json_object_get(from, "id") : NULL;
    json_t *error = from ? json_object_get(from, "error") : NULL;
    char type[64];
    snprintf(type, sizeof type, "/problems/%s", refusals[f].name);
    if (!detail && error) detail = json_string_value(json_object_get(error, "message"));
    if (!detail) detail = refusals[f].title;
    json_t *p = json_pack("{s:s, s:s, s:i, s:s, s:s, s:O?, s:O?}", "type", type,
                          "title", refusals[f].title, "status", (int)refusals[f].code,
                          "detail", detail, "reason", refusals[f].name,
                          "id", id ? id : json_null(), "error", error);
    if (p && !error)
        json_object_set_new(p, "error", json_pack("{s:s, s:s, s:i, s:i}", "type", "HTTPError",
                                                  "message", detail, "line", 0, "col", 0));
    char *text = p ? json_dumps(p, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(p);
    json_decref(from);
    return text;
}

static void retry_after(struct MHD_Response *resp, unsigned seconds)
{
    char v[16];
    snprintf(v, sizeof v, "%u", seconds);
    mhd.add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, v);
}

static enum MHD_Result refuse_with(server *s, struct MHD_Connection *c, request *r,
                                   enum refusal f, const char *detail, const char *line)
{
    struct MHD_Response *resp = text_body(problem_text(f, detail, line));
    atomic_fetch_add(&s->m.refused[f], 1);
    if (resp && f == F_unauthorized)
        mhd.add_response_header(resp, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer");
    if (resp && f == F_method_not_allowed)
        mhd.add_response_header(resp, MHD_HTTP_HEADER_ALLOW,
                                routes[r->route].flags & RT_POST ? "POST" : "GET");
    if (resp && refusals[f].retry) retry_after(resp, refusals[f].retry);
    return queue(s, c, r, refusals[f].code, resp, "application/problem+json");
}

static enum MHD_Result refuse(server *s, struct MHD_Connection *c, request *r, enum refusal f,
                              const char *detail)
{
    return refuse_with(s, c, r, f, detail, NULL);
}

/* The token the request carries (its bearer token compared as hashes in constant time:
 * neither its bytes nor its length show in the time a wrong one takes): 1 and *out, or 0. */
static int authorized(server *s, struct MHD_Connection *c, token **out)
{
    *out = NULL;
    if (!s->ntokens) return 1;
    const char *h = mhd.lookup_connection_value(c, MHD_HEADER_KIND,
                                                MHD_HTTP_HEADER_AUTHORIZATION);
    if (!h || strncasecmp(h, "Bearer ", 7) != 0) return 0;
    h += 7;
    while (*h == ' ') h++;
    unsigned char got[crypto_generichash_BYTES];
    crypto_generichash(got, sizeof got, (const unsigned char *)h, strlen(h), NULL, 0);
    int found = 0;
    for (size_t i = 0; i < s->ntokens; i++)
        if (sodium_memcmp(got, s->tokens[i].hash, sizeof got) == 0) {
            *out = &s->tokens[i];
            found = 1;
        }
    return found;
}

/* The token's quotas for one more request: F_rate_limited or F_concurrency_limited when
 * spent, else NREFUSALS with the request counted under way. */
static enum refusal admit(server *s, request *r)
{
    token *t = r->tok;
    enum refusal f = NREFUSALS;
    if (!t) return f;
    pthread_mutex_lock(&s->lock);
    if (t->rate > 0) {
        double add = since(&t->filled) * t->rate;
        clock_gettime(CLOCK_MONOTONIC, &t->filled);
        t->tokens = t->tokens + add > t->burst ? t->burst : t->tokens + add;
        if (t->tokens < 1) f = F_rate_limited;
    }
    if (f == NREFUSALS && t->concurrent && t->under_way >= t->concurrent)
        f = F_concurrency_limited;
    if (f == NREFUSALS) {
        if (t->rate > 0) t->tokens -= 1;
        t->under_way++;
        r->holds = 1;
    }
    pthread_mutex_unlock(&s->lock);
    return f;
}

/* ---- readiness -------------------------------------------------------------------------- */

/* /readyz: the pool has been full once and has warm workers to give, the ledger answers, the
 * signing key signed, and the service is not stopping. 503 when one fails; ?verbose lists
 * every check with what it found. */
static void add_check(json_t *checks, json_t *failed, const char *name, int ok,
                      const char *detail)
{
    if (!ok) json_array_append_new(failed, json_string(name));
    json_array_append_new(checks, json_pack("{s:s, s:b, s:s}", "name", name, "ok", ok,
                                            "detail", detail));
}

static char *readiness(server *s, int verbose, unsigned *code)
{
    json_t *checks = json_array(), *failed = json_array();
    char detail[300];
    cr_error e = {0};
    size_t size, ready;
    int ok = cr_engine_ready(s->engine, "pool", 0, &e) == CR_OK;
    const char *note = cr_engine_pool_note(s->engine);
    cr_engine_pool_state(s->engine, &size, &ready);
    if (!ok) snprintf(detail, sizeof detail, "%s", e.message);
    else if (size) snprintf(detail, sizeof detail, "%zu of %zu warm sandboxes ready", ready, size);
    else snprintf(detail, sizeof detail, "%s", note ? note : "no warm pool (pool 0)");
    add_check(checks, failed, "pool", ok, detail);
    ok = cr_engine_ready(s->engine, "ledger", 0, &e) == CR_OK;
    add_check(checks, failed, "ledger", ok, !ok ? e.message
              : cr_config_get(cr_engine_config(s->engine), "audit") ? "answers" : "no ledger");
    /* serve does not start with a key it cannot sign with: while serving, the key works. */
    add_check(checks, failed, "signer", 1, s->signer ? "key checked at start"
                                                     : "no --checkpoint-key");
    ok = !atomic_load(&s->unready);
    add_check(checks, failed, "draining", ok, ok ? "serving" : "shutting_down");
    int all = json_array_size(failed) == 0;
    *code = all ? MHD_HTTP_OK : MHD_HTTP_SERVICE_UNAVAILABLE;
    json_t *o = json_pack("{s:s}", "status", all ? "ready" : "not_ready");
    if (o && !all) json_object_set(o, "failed", failed);
    if (o && verbose) json_object_set(o, "checks", checks);
    char *text = o ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(o);
    json_decref(checks);
    json_decref(failed);
    return text;
}

/* /metrics: Prometheus' text exposition format, named by its conventions. */
static char *metrics_text(server *s)
{
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    if (!f) return NULL;
    metrics *m = &s->m;
    fprintf(f, "# HELP calcroute_build_info The build serving: its version.\n"
            "# TYPE calcroute_build_info gauge\n"
            "calcroute_build_info{version=\"%s\"} 1\n", cr_version());
    fputs("# HELP calcroute_requests_total HTTP requests answered, by route and status.\n"
          "# TYPE calcroute_requests_total counter\n", f);
    for (int r = 0; r < NROUTES; r++)
        for (size_t k = 0; k < NCODES; k++) {
            unsigned long long v = atomic_load(&m->requests[r][k]);
            if (v || (r == R_RUN && codes[k] == 200))
                fprintf(f, "calcroute_requests_total{route=\"%s\",code=\"%u\"} %llu\n",
                        routes[r].path, codes[k], v);
        }
    fputs("# HELP calcroute_request_duration_seconds Time from a request's headers to its "
          "answer's last byte.\n"
          "# TYPE calcroute_request_duration_seconds histogram\n", f);
    for (int r = 0; r < NROUTES; r++) {
        unsigned long long cum = 0;
        for (size_t b = 0; b <= NBUCKETS; b++) {
            cum += atomic_load(&m->le[r][b]);
            if (b < NBUCKETS)
                fprintf(f, "calcroute_request_duration_seconds_bucket{route=\"%s\","
                        "le=\"%g\"} %llu\n", routes[r].path, buckets[b], cum);
            else
                fprintf(f, "calcroute_request_duration_seconds_bucket{route=\"%s\","
                        "le=\"+Inf\"} %llu\n", routes[r].path, cum);
        }
        fprintf(f, "calcroute_request_duration_seconds_sum{route=\"%s\"} %.9f\n"
                "calcroute_request_duration_seconds_count{route=\"%s\"} %llu\n",
                routes[r].path, (double)atomic_load(&m->sum_ns[r]) * 1e-9, routes[r].path, cum);
    }
    fputs("# HELP calcroute_refusals_total Requests (and batch lines) refused, by named "
          "reason.\n# TYPE calcroute_refusals_total counter\n", f);
    for (int r = 0; r < NREFUSALS; r++)
        fprintf(f, "calcroute_refusals_total{reason=\"%s\"} %llu\n", refusals[r].name,
                atomic_load(&m->refused[r]));
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
    fprintf(f, "# HELP calcroute_pool_size Warm sandboxes kept (option pool).\n"
            "# TYPE calcroute_pool_size gauge\n"
            "calcroute_pool_size %zu\n"
            "# HELP calcroute_pool_ready Warm sandboxes ready now.\n"
            "# TYPE calcroute_pool_ready gauge\n"
            "calcroute_pool_ready %zu\n"
            "# HELP calcroute_pool_waiting Requests waiting now for a warm sandbox.\n"
            "# TYPE calcroute_pool_waiting gauge\n"
            "calcroute_pool_waiting %zu\n"
            "# HELP calcroute_checkpoints_total Checkpoints of the ledger signed (--checkpoint-key).\n"
            "# TYPE calcroute_checkpoints_total counter\n"
            "calcroute_checkpoints_total %llu\n"
            "# HELP calcroute_checkpoint_seq The last record the newest checkpoint signed covers.\n"
            "# TYPE calcroute_checkpoint_seq gauge\n"
            "calcroute_checkpoint_seq %llu\n"
            "# HELP calcroute_in_flight Requests being answered now.\n"
            "# TYPE calcroute_in_flight gauge\n"
            "calcroute_in_flight %u\n"
            "# HELP calcroute_connections Connections open now.\n"
            "# TYPE calcroute_connections gauge\n"
            "calcroute_connections %u\n",
            pool_size, pool_ready, cr_engine_pool_waiting(s->engine),
            atomic_load(&s->checkpoints), atomic_load(&s->checkpoint_seq),
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
        char *text;
        /* Stopping: the lines not yet run are answered, each by name, at once. */
        if (atomic_load(&b->s->draining)) {
            cr_request *req = NULL;
            cr_error e = {0};
            cr_line_request(line, n, NULL, &req, &e);
            const char *id = req ? cr_request_id(req) : NULL;
            text = cr_line_error(id, "shutting_down", "ShuttingDown",
                                 "the service is stopping: this line was not run", 0, 0);
            cr_request_free(req);
            atomic_fetch_add(&b->s->m.refused[F_shutting_down], 1);
        } else {
            text = cr_line_result(b->s->engine, line, n, NULL, 0, b->s->defaults, &info);
            count_line(&b->s->m, &info);
            if (info.outcome != CR_LINE_DONE && info.reason)
                atomic_fetch_add(&b->s->m.refused[refusal_named(info.reason)], 1);
        }
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

/* ---- POST /mcp: the MCP's Streamable HTTP transport (cli/mcp_http.c) ---------------------- */

static ssize_t mcp_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)pos;
    return cr_mcp_http_read(cls, buf, max);
}

static void mcp_free(void *cls) { cr_mcp_http_free(cls); }

static enum MHD_Result mcp_answer(server *s, struct MHD_Connection *c, request *r)
{
#define H(name) mhd.lookup_connection_value(c, MHD_HEADER_KIND, name)
    cr_mcp_http_in in = { r->body ? r->body : "", r->len, H("Origin"), H("Host"),
                          H("MCP-Protocol-Version"), H("Mcp-Method"), H("Mcp-Name"), NULL, -1 };
#undef H
    /* notifications/cancelled reaches only calls of the same token and address. */
    char client[NI_MAXHOST + 32], host[NI_MAXHOST] = "";
    const union MHD_ConnectionInfo *ci =
        mhd.get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (ci && ci->client_addr)
        getnameinfo(ci->client_addr, ci->client_addr->sa_family == AF_INET6
                    ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in),
                    host, sizeof host, NULL, 0, NI_NUMERICHOST);
    snprintf(client, sizeof client, "%td %s", r->tok ? r->tok - s->tokens : -1, host);
    in.client = client;
    if ((ci = mhd.get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD)))
        in.fd = ci->connect_fd;
    cr_mcp_http_out out;
    if (cr_mcp_http(s->mcp, &in, &out) < 0) return MHD_NO;
    struct MHD_Response *resp;
    if (out.stream) {
        resp = mhd.create_response_from_callback(MHD_SIZE_UNKNOWN, 16384, mcp_read, out.stream,
                                                 mcp_free);
        if (!resp) cr_mcp_http_free(out.stream);
        else {
            mhd.add_response_header(resp, "Cache-Control", "no-cache");
            mhd.add_response_header(resp, "X-Accel-Buffering", "no");
        }
    } else
        resp = mhd.create_response_from_buffer(out.text ? strlen(out.text) : 0,
                                               out.text ? out.text : "",
                                               out.text ? MHD_RESPMEM_MUST_FREE
                                                        : MHD_RESPMEM_PERSISTENT);
    return queue(s, c, r, out.status, resp, out.type);
}

/* ---- Idempotency-Key -------------------------------------------------------------------- */

/* Looks the request's key up: NREFUSALS with r->idem a new running entry (run it), or with
 * *replay the kept answer's copy and *code (send it again), or the refusal. Under no lock. */
static enum refusal idem_begin(server *s, request *r, char **replay, unsigned *code)
{
    unsigned char body[crypto_generichash_BYTES];
    enum refusal f = NREFUSALS;
    crypto_generichash_state st;
    crypto_generichash_init(&st, NULL, 0, sizeof body);
    crypto_generichash_update(&st, (const unsigned char *)routes[r->route].path,
                              strlen(routes[r->route].path) + 1);
    crypto_generichash_update(&st, (const unsigned char *)(r->body ? r->body : ""), r->len);
    crypto_generichash_final(&st, body, sizeof body);
    *replay = NULL;
    pthread_mutex_lock(&s->lock);
    idem **oldest = NULL, *hit = NULL;
    for (idem **pi = &s->idems; *pi;) {
        idem *x = *pi;
        if (x->done && since(&x->at) > IDEM_TTL_S) {   /* expired */
            *pi = x->next;
            free(x->text);
            free(x);
            s->nidems--;
            continue;
        }
        if (memcmp(x->key, r->idem_key, sizeof x->key) == 0) hit = x;
        if (x->done) oldest = pi;   /* newest first: the last done one is the oldest */
        pi = &x->next;
    }
    if (hit && memcmp(hit->body, body, sizeof body) != 0) f = F_idempotency_mismatch;
    else if (hit && !hit->done) f = F_idempotency_conflict;
    else if (hit) {
        *code = hit->code;
        if (!(*replay = strdup(hit->text))) f = F_engine_error;
    } else {
        if (s->nidems >= IDEM_MAX && oldest) {
            idem *x = *oldest;
            *oldest = x->next;
            free(x->text);
            free(x);
            s->nidems--;
        }
        idem *x = calloc(1, sizeof *x);
        if (!x) f = F_engine_error;
        else {
            memcpy(x->key, r->idem_key, sizeof x->key);
            memcpy(x->body, body, sizeof body);
            clock_gettime(CLOCK_MONOTONIC, &x->at);
            x->next = s->idems;
            s->idems = x;
            s->nidems++;
            r->idem = x;
        }
    }
    pthread_mutex_unlock(&s->lock);
    return f;
}

/* The request's answer: kept when it is the answer to give again (a result, or a bad
 * request), else its entry goes so that the same request may be sent again (refused as
 * overloaded, or the ledger down). text NULL: the entry goes. */
static void idem_end(server *s, request *r, unsigned code, const char *text)
{
    if (!r->idem) return;
    pthread_mutex_lock(&s->lock);
    int keep = text && (code == MHD_HTTP_OK || code == MHD_HTTP_BAD_REQUEST);
    if (keep && (r->idem->text = strdup(text))) {
        r->idem->done = 1;
        r->idem->code = code;
        clock_gettime(CLOCK_MONOTONIC, &r->idem->at);
    } else {
        for (idem **pi = &s->idems; *pi; pi = &(*pi)->next)
            if (*pi == r->idem) {
                *pi = r->idem->next;
                free(r->idem->text);
                free(r->idem);
                s->nidems--;
                break;
            }
    }
    r->idem = NULL;
    pthread_mutex_unlock(&s->lock);
}

/* ---- dispatch --------------------------------------------------------------------------- */

static enum route route_of(const server *s, const char *url)
{
    for (int r = 0; r < R_OTHER; r++) {
        if (routes[r].flags & RT_TLOG && !s->tiles) continue;
        if (routes[r].flags & RT_PREFIX ? strncmp(url, routes[r].path, strlen(routes[r].path)) == 0
                                        : strcmp(url, routes[r].path) == 0)
            return (enum route)r;
    }
    return R_OTHER;
}

static conn *conn_of(struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *ci =
        mhd.get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return ci ? ci->socket_context : NULL;
}

/* Answered before the body is read when its length is known (no 100 Continue), else once the
 * body, kept no further than the limit, has been read. */
static enum MHD_Result too_large(server *s, struct MHD_Connection *c, request *r)
{
    char why[96];
    snprintf(why, sizeof why, "a request body is at most %zu bytes", s->max_body);
    return refuse(s, c, r, F_too_large, why);
}

/* The first call for a request: what can be answered from its headers alone. MHD_YES with
 * nothing queued: read the body. */
static enum MHD_Result on_headers(server *s, struct MHD_Connection *c, request *r,
                                  const char *method)
{
    int post = strcmp(method, MHD_HTTP_METHOD_POST) == 0;
    int get = strcmp(method, MHD_HTTP_METHOD_GET) == 0 ||
              strcmp(method, MHD_HTTP_METHOD_HEAD) == 0;
    unsigned flags = routes[r->route].flags;
    char why[200];
    if (r->route == R_OTHER)
        return refuse(s, c, r, F_not_found,
                      "no such path: POST /v1/run, /v1/explain, /v1/batch, /mcp; GET /livez, "
                      "/readyz, /healthz, /metrics, /openapi.json");
    if (flags & RT_POST ? !post : !get) {
        snprintf(why, sizeof why, "%s takes %s, not %.40s", routes[r->route].path,
                 flags & RT_POST ? "POST" : "GET", method);
        return refuse(s, c, r, F_method_not_allowed, why);
    }
    if (!(flags & RT_OPEN) && !authorized(s, c, &r->tok))
        return refuse(s, c, r, F_unauthorized,
                      "a valid bearer token is wanted (Authorization: Bearer TOKEN)");
    if (flags & RT_PROBE) return MHD_YES;   /* on_body_done() */
    if (atomic_load(&s->draining))
        return refuse(s, c, r, F_shutting_down, "the service is stopping");
    if (atomic_load(&s->open) > s->connections)
        return refuse(s, c, r, F_unavailable, "too many connections at once: try again");
    const char *cl = mhd.lookup_connection_value(c, MHD_HEADER_KIND,
                                                 MHD_HTTP_HEADER_CONTENT_LENGTH);
    if (cl && strtoull(cl, NULL, 10) > s->max_body) return too_large(s, c, r);
    const char *key = mhd.lookup_connection_value(c, MHD_HEADER_KIND, "Idempotency-Key");
    if (key && !(flags & RT_IDEM))
        return refuse(s, c, r, F_bad_request, "Idempotency-Key: only POST /v1/run takes one");
    if (key) {
        /* A structured-field string ("..."), or the bare text. */
        size_t n = strlen(key);
        if (n >= 2 && key[0] == '"' && key[n - 1] == '"') key++, n -= 2;
        if (n == 0 || n > 255)
            return refuse(s, c, r, F_bad_request, "Idempotency-Key: want 1 to 255 characters");
        size_t ti = r->tok ? (size_t)(r->tok - s->tokens) : 0;
        crypto_generichash_state st;
        crypto_generichash_init(&st, NULL, 0, sizeof r->idem_key);
        crypto_generichash_update(&st, (const unsigned char *)&ti, sizeof ti);
        crypto_generichash_update(&st, (const unsigned char *)key, n);
        crypto_generichash_final(&st, r->idem_key, sizeof r->idem_key);
        r->has_idem = 1;
    }
    enum refusal f = admit(s, r);
    if (f != NREFUSALS)
        return refuse(s, c, r, f, f == F_rate_limited ? "the token's requests a second are spent"
                                                      : "the token's requests at once are under way");
    return MHD_YES;
}

/* ?verbose, with or without a value. */
static enum MHD_Result is_verbose(void *cls, enum MHD_ValueKind kind, const char *key,
                                  const char *value)
{
    (void)kind;
    (void)value;
    if (strcmp(key, "verbose") == 0) *(int *)cls = 1;
    return MHD_YES;
}

/* ---- the ledger as tiles (--tiles) ------------------------------------------------------ */

/* Brings the published tiles up to the ledger's head, so that a checkpoint a reader fetches
 * covers every answer given before it. The export recomputes the whole tree, so it runs once
 * a new head, not once a request; full tiles already written are kept. */
static int tiles_refresh(server *s, char *why, size_t why_len)
{
    const char *path = cr_config_get(cr_engine_config(s->engine), "audit");
    cr_error e = {0};
    uint64_t seq = 0;
    char hash[65];
    cr_audit_tiles_report rep;
    pthread_mutex_lock(&s->tiles_lock);
    cr_audit *a = path ? cr_audit_open(path, 0, &e) : NULL;
    int ok = a && cr_audit_head(a, &seq, hash, &e) == CR_OK;
    if (ok && (!s->tiles_made || seq != s->tiles_size)) {
        char *note = NULL, *cosigned = NULL, wwhy[512];
        int got = 0;
        ok = cr_audit_note(a, s->tiles_key, NULL, 0, &note, &e) == CR_OK;
        if (ok && s->cosigners) {
            ok = cr_cosigners_gather(s->cosigners, a, note, &cosigned, &got, wwhy, sizeof wwhy,
                                     &e) == CR_OK;
            /* published all the same: a checkpoint short of its quorum is still the log's */
            if (ok && wwhy[0]) fprintf(stderr, "calc-route: serve: witnesses: %s\n", wwhy);
        }
        ok = ok && cr_audit_tiles_note(a, s->tiles, cosigned ? cosigned : note, &rep,
                                       &e) == CR_OK;
        free(note);
        free(cosigned);
        if (ok) {
            s->tiles_size = rep.size;
            s->tiles_made = 1;
        }
    }
    pthread_mutex_unlock(&s->tiles_lock);
    cr_audit_close(a);
    if (!ok)
        snprintf(why, why_len, "--tiles %.60s: %.150s", s->tiles,
                 path ? e.message : "wants --audit (the ledger it publishes)");
    return ok ? 0 : -1;
}

/* The whole of a regular file of 1 to max bytes (the caller frees), or NULL. */
static char *read_whole(const char *path, size_t max, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat sb;
    char *buf = NULL;
    *len = 0;
    if (fd >= 0 && fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size > 0 &&
        (size_t)sb.st_size <= max && (buf = malloc((size_t)sb.st_size))) {
        while (*len < (size_t)sb.st_size) {
            ssize_t got = read(fd, buf + *len, (size_t)sb.st_size - *len);
            if (got < 0 && errno == EINTR) continue;
            if (got <= 0) break;
            *len += (size_t)got;
        }
        if (*len != (size_t)sb.st_size) {
            free(buf);
            buf = NULL;
        }
    }
    if (fd >= 0) close(fd);
    return buf;
}

/* GET /checkpoint (brought up to the head first) and GET /tile/...: files of the export. A
 * tile's name says its width, and the tree only grows, so what a name holds never changes:
 * cacheable for ever; the checkpoint moves. */
static enum MHD_Result tlog_answer(server *s, struct MHD_Connection *c, request *r)
{
    char why[256], path[4096];
    size_t len;
    int checkpoint = r->route == R_CHECKPOINT;
    if (checkpoint && tiles_refresh(s, why, sizeof why) < 0)
        return refuse(s, c, r, F_unavailable, why);
    /* only a tile's own characters: nothing outside the export can be named */
    const char *rel = checkpoint ? "checkpoint" : r->tile;
    int ok = *rel && !strstr(rel, "..");
    for (const char *p = rel; *p && ok; p++)
        ok = isalnum((unsigned char)*p) || *p == '.' || *p == '/';
    snprintf(path, sizeof path, "%s/%s%s", s->tiles, checkpoint ? "" : "tile/", rel);
    /* an entry bundle: 256 entries of at most 2 + 65535 bytes */
    char *body = ok ? read_whole(path, ((size_t)256 << 16) + 513, &len) : NULL;
    if (!body)
        return refuse(s, c, r, F_not_found, "no such tile in the published tree (tiles are "
                      "published for the sizes of the checkpoints served)");
    struct MHD_Response *resp = mhd.create_response_from_buffer(len, body,
                                                                MHD_RESPMEM_MUST_FREE);
    if (resp)
        mhd.add_response_header(resp, "Cache-Control", checkpoint ? "no-cache"
                                : "public, max-age=31536000, immutable");
    return queue(s, c, r, MHD_HTTP_OK, resp, checkpoint ? "text/plain; charset=utf-8"
                                                        : "application/octet-stream");
}

static enum MHD_Result answer_alive(server *s, struct MHD_Connection *c, request *r)
{
    return queue(s, c, r, MHD_HTTP_OK, text_body(strdup("{\"status\":\"ok\"}")),
                 "application/json");
}

static enum MHD_Result answer_ready(server *s, struct MHD_Connection *c, request *r)
{
    unsigned code;
    int verbose = 0;
    mhd.get_connection_values(c, MHD_GET_ARGUMENT_KIND, is_verbose, &verbose);
    char *text = readiness(s, verbose, &code);
    return queue(s, c, r, code, text_body(text), "application/json");
}

static enum MHD_Result answer_metrics(server *s, struct MHD_Connection *c, request *r)
{
    char *text = metrics_text(s);
    return queue(s, c, r, MHD_HTTP_OK,
                 text ? mhd.create_response_from_buffer(strlen(text), text,
                                                        MHD_RESPMEM_MUST_FREE) : NULL,
                 "text/plain; version=0.0.4; charset=utf-8");
}

/* The API's description (cli/openapi.json). */
static enum MHD_Result answer_openapi(server *s, struct MHD_Connection *c, request *r)
{
    size_t n;
    const char *doc = cr_openapi_json(&n);
    return queue(s, c, r, MHD_HTTP_OK,
                 mhd.create_response_from_buffer(n, (void *)doc, MHD_RESPMEM_PERSISTENT),
                 "application/json");
}

static enum MHD_Result answer_batch(server *s, struct MHD_Connection *c, request *r)
{
    batch *b = calloc(1, sizeof *b);
    if (!b) return MHD_NO;
    b->s = s;
    b->r = r;
    struct MHD_Response *resp = mhd.create_response_from_callback(MHD_SIZE_UNKNOWN, 16384,
                                                                  batch_read, b, batch_free);
    if (!resp) batch_free(b);
    return queue(s, c, r, MHD_HTTP_OK, resp, "application/x-ndjson");
}

static enum MHD_Result answer_line(server *s, struct MHD_Connection *c, request *r)
{
    if (r->has_idem) {
        char *replay;
        unsigned code;
        enum refusal f = idem_begin(s, r, &replay, &code);
        if (f != NREFUSALS) return refuse(s, c, r, f, NULL);
        if (replay) {
            struct MHD_Response *resp = text_body(replay);
            if (resp) mhd.add_response_header(resp, "Idempotent-Replayed", "true");
            return queue(s, c, r, code, resp, "application/json");
        }
    }
    cr_line_info info;
    char *text = cr_line_result(s->engine, r->body ? r->body : "", r->len, NULL,
                                (routes[r->route].flags & RT_EXPLAIN) != 0, s->defaults, &info);
    count_line(&s->m, &info);
    if (info.outcome == CR_LINE_DONE) {
        idem_end(s, r, MHD_HTTP_OK, text);
        return queue(s, c, r, MHD_HTTP_OK, text_body(text), "application/json");
    }
    enum refusal f = refusal_named(info.reason ? info.reason : "engine_error");
    char *problem = text ? problem_text(f, NULL, text) : NULL;
    free(text);
    idem_end(s, r, refusals[f].code, problem);
    struct MHD_Response *resp = text_body(problem);
    atomic_fetch_add(&s->m.refused[f], 1);
    if (resp && refusals[f].retry) retry_after(resp, refusals[f].retry);
    return queue(s, c, r, refusals[f].code, resp, "application/problem+json");
}

#define ROUTE_FN(id, path, flags, fn) fn,
static enum MHD_Result (*const route_fns[NROUTES])(server *, struct MHD_Connection *,
                                                   request *) = { ROUTES(ROUTE_FN) };
#undef ROUTE_FN

/* An answer queued at the first call, before the (empty) body is read, makes libmicrohttpd
 * close the connection after it: errors only; GETs come here, so a kept-alive probe or scraper
 * keeps its connection. */
static enum MHD_Result on_body_done(server *s, struct MHD_Connection *c, request *r)
{
    return route_fns[r->route](s, c, r);
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
        r->route = route_of(s, url);
        if (r->route == R_TILE && strlen(url) - 6 < sizeof r->tile) strcpy(r->tile, url + 6);
        *state = r;
        pthread_mutex_lock(&s->lock);
        s->in_flight++;
        pthread_mutex_unlock(&s->lock);
        return on_headers(s, c, r, method);
    }
    if (r->code) {   /* answered from the headers: the body is not read */
        *upload_size = 0;
        return MHD_YES;
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
    /* The whole request is in: the read deadline stops here, the run has its own. */
    conn *k = conn_of(c);
    if (k) {
        pthread_mutex_lock(&s->lock);
        k->reading = 0;
        pthread_mutex_unlock(&s->lock);
    }
    return r->too_large ? too_large(s, c, r) : on_body_done(s, c, r);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **state,
                         enum MHD_RequestTerminationCode why)
{
    server *s = cls;
    request *r = *state;
    (void)why;
    if (!r) return;
    double t = since(&r->t0);
    size_t k = 0, b = 0;
    while (k < NCODES && codes[k] != r->code) k++;
    while (b < NBUCKETS && t > buckets[b]) b++;
    if (k < NCODES) atomic_fetch_add(&s->m.requests[r->route][k], 1);
    atomic_fetch_add(&s->m.le[r->route][b], 1);
    atomic_fetch_add(&s->m.sum_ns[r->route], (unsigned long long)llround(t * 1e9));
    idem_end(s, r, 0, NULL);   /* ended before its answer was made */
    conn *cn = conn_of(c);
    pthread_mutex_lock(&s->lock);
    if (r->holds) r->tok->under_way--;
    /* Kept alive: the deadline for its next request starts now. */
    if (cn) {
        cn->reading = 1;
        clock_gettime(CLOCK_MONOTONIC, &cn->since);
    }
    if (--s->in_flight == 0) pthread_cond_broadcast(&s->idle);
    pthread_mutex_unlock(&s->lock);
    free(r->body);
    free(r);
    *state = NULL;
}

/* Counts the connections open, so that those past --connections (libmicrohttpd takes a few
 * more, then closes any further one unanswered) are told why, and keeps each one's read
 * deadline. */
static void on_connection(void *cls, struct MHD_Connection *c, void **state,
                          enum MHD_ConnectionNotificationCode what)
{
    server *s = cls;
    if (what == MHD_CONNECTION_NOTIFY_STARTED) {
        atomic_fetch_add(&s->open, 1);
        const union MHD_ConnectionInfo *ci =
            mhd.get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
        conn *k = ci ? calloc(1, sizeof *k) : NULL;
        if (k && (k->fd = fcntl(ci->connect_fd, F_DUPFD_CLOEXEC, 0)) < 0) {
            free(k);
            k = NULL;
        }
        if (k) {
            k->reading = 1;
            clock_gettime(CLOCK_MONOTONIC, &k->since);
            pthread_mutex_lock(&s->lock);
            k->next = s->conns;
            if (s->conns) s->conns->prev = &k->next;
            k->prev = &s->conns;
            s->conns = k;
            pthread_mutex_unlock(&s->lock);
        }
        *state = k;
        return;
    }
    atomic_fetch_sub(&s->open, 1);
    conn *k = *state;
    if (!k) return;
    pthread_mutex_lock(&s->lock);
    *k->prev = k->next;
    if (k->next) k->next->prev = k->prev;
    pthread_mutex_unlock(&s->lock);
    close(k->fd);
    free(k);
    *state = NULL;
}

/* Shuts down every connection that has waited longer than --header-timeout for a request's
 * headers and body: its thread sees the end of the stream and closes it. */
static void *watchdog_main(void *arg)
{
    server *s = arg;
    pthread_mutex_lock(&s->lock);
    while (s->watching) {
        for (conn *k = s->conns; k; k = k->next)
            if (k->reading && !k->cut && since(&k->since) > s->header_timeout) {
                shutdown(k->fd, SHUT_RDWR);
                k->cut = 1;
                atomic_fetch_add(&s->m.refused[F_header_timeout], 1);
            }
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += 200000000;
        if (until.tv_nsec >= 1000000000) until.tv_sec++, until.tv_nsec -= 1000000000;
        pthread_cond_timedwait(&s->idle, &s->lock, &until);
    }
    pthread_mutex_unlock(&s->lock);
    return NULL;
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

/* One line of the token file: TOKEN [rate=N] [burst=N] [concurrent=N]. 0, or -1 with why. */
static int token_line(char *line, token *t, char *why, size_t why_len)
{
    char *save, *tok = strtok_r(line, " \t", &save), *kv;
    memset(t, 0, sizeof *t);
    crypto_generichash(t->hash, sizeof t->hash, (unsigned char *)tok, strlen(tok), NULL, 0);
    while ((kv = strtok_r(NULL, " \t", &save))) {
        char *end;
        double v = strtod(strchr(kv, '=') ? strchr(kv, '=') + 1 : "", &end);
        int ok = strchr(kv, '=') && *end == '\0' && v >= 1 && v <= 1e6;
        if (ok && strncmp(kv, "rate=", 5) == 0) t->rate = v;
        else if (ok && strncmp(kv, "burst=", 6) == 0) t->burst = v;
        else if (ok && strncmp(kv, "concurrent=", 11) == 0 && v == floor(v)) t->concurrent = (unsigned)v;
        else {
            snprintf(why, why_len, "'%.40s': want rate=N, burst=N or concurrent=N (1 to "
                     "1000000) after the token", kv);
            return -1;
        }
    }
    if (t->rate > 0 && t->burst < 1) t->burst = ceil(t->rate);
    t->tokens = t->burst;
    clock_gettime(CLOCK_MONOTONIC, &t->filled);
    return 0;
}

/* The token file: one token a line, each with its quotas; blank lines and lines starting
 * with '#' aside. */
static int read_tokens(server *s, const char *path)
{
    FILE *f = fopen(path, "r");
    char line[4096], why[160] = "";
    int lineno = 0, rc = 0;
    if (!f) {
        fprintf(stderr, "calc-route: --token-file %s: %s\n", path, strerror(errno));
        return -1;
    }
    while (rc == 0 && fgets(line, sizeof line, f)) {
        lineno++;
        size_t n = strlen(line);
        if (n == sizeof line - 1 && line[n - 1] != '\n') {
            snprintf(why, sizeof why, "a line is at most 4095 bytes");
            rc = -1;
            break;
        }
        while (n && (line[n - 1] == '\n' || line[n - 1] == '\r' || line[n - 1] == ' ')) n--;
        line[n] = '\0';
        char *p = line + strspn(line, " \t");
        if (*p == '\0' || *p == '#') continue;
        token *more = realloc(s->tokens, (s->ntokens + 1) * sizeof *more);
        if (!more) {
            snprintf(why, sizeof why, "out of memory");
            rc = -1;
            break;
        }
        s->tokens = more;
        if (token_line(p, &s->tokens[s->ntokens], why, sizeof why) < 0) rc = -1;
        else s->ntokens++;
    }
    sodium_memzero(line, sizeof line);
    fclose(f);
    if (rc == 0 && s->ntokens == 0) {
        snprintf(why, sizeof why, "no token in it");
        rc = -1;
    }
    if (rc < 0)
        fprintf(stderr, "calc-route: --token-file %s:%d: %s (a line: TOKEN [rate=N] "
                "[burst=N] [concurrent=N])\n", path, lineno, why);
    return rc;
}

/* Signs the ledger's head with --checkpoint-key: at the start (which also says the key and
 * the ledger work; an empty ledger has nothing to sign, and the key is only read) and once
 * every request has been answered. */
/* Signs a checkpoint of a's head unless the newest this process signed covers it already:
 * 1 signed (the counts of /metrics moved), 0 nothing new, -1 with e filled. *seq: the head. */
static int sign_new(server *s, cr_audit *a, const char *key, uint64_t *seq, cr_error *e)
{
    char hash[65];
    if (cr_audit_head(a, seq, hash, e) != CR_OK) return -1;
    if (*seq == 0 || *seq == atomic_load(&s->checkpoint_seq)) return 0;
    if (cr_audit_checkpoint(a, key, seq, hash, e) != CR_OK) return -1;
    atomic_fetch_add(&s->checkpoints, 1);
    atomic_store(&s->checkpoint_seq, *seq);
    return 1;
}

static int sign_head(server *s, const char *key, char *why, size_t why_len)
{
    const char *path = cr_config_get(cr_engine_config(s->engine), "audit");
    cr_error e = {0};
    uint64_t seq = 0;
    char *note = NULL;
    cr_audit *a = path ? cr_audit_open(path, 1, &e) : NULL;
    int got = a ? sign_new(s, a, key, &seq, &e) : -1;
    /* An empty ledger has nothing to sign; a note of it checks the key all the same. */
    if (got == 0 && seq == 0 && cr_audit_note(a, key, NULL, 0, &note, &e) != CR_OK) got = -1;
    free(note);
    cr_audit_close(a);
    if (got < 0) {
        snprintf(why, why_len, "--checkpoint-key %.40s: %.150s", key,
                 path ? e.message : "wants --audit (the ledger it signs)");
        return -1;
    }
    if (got)
        fprintf(stderr, "calc-route: serve: checkpoint signed at seq %llu\n",
                (unsigned long long)seq);
    else if (seq)
        fprintf(stderr, "calc-route: serve: the head, seq %llu, is signed already\n",
                (unsigned long long)seq);
    else
        fprintf(stderr, "calc-route: serve: --checkpoint-key read; the ledger is empty, "
                "nothing to sign yet\n");
    return 0;
}

/* Between the start's checkpoint and the stop's: every --checkpoint-every seconds, one over
 * the records appended since the last (none when nothing was), on a ledger handle of its own
 * kept open. A failure is said once, and again only once signing worked in between. */
static void *signer_main(void *arg)
{
    server *s = arg;
    const char *path = cr_config_get(cr_engine_config(s->engine), "audit");
    cr_error e = {0};
    cr_audit *a = cr_audit_open(path, 1, &e);
    int failing = 0;
    struct timespec next;
    clock_gettime(CLOCK_REALTIME, &next);
    pthread_mutex_lock(&s->lock);
    while (s->signing) {
        next.tv_sec += (time_t)s->signer_every;
        next.tv_nsec += (long)((s->signer_every - (time_t)s->signer_every) * 1e9);
        if (next.tv_nsec >= 1000000000) next.tv_sec++, next.tv_nsec -= 1000000000;
        while (s->signing && pthread_cond_timedwait(&s->idle, &s->lock, &next) != ETIMEDOUT) {}
        if (!s->signing) break;
        pthread_mutex_unlock(&s->lock);
        uint64_t seq = 0;
        int ok = a && sign_new(s, a, s->signer_key, &seq, &e) >= 0;
        if (!ok && !failing)
            fprintf(stderr, "calc-route: serve: a checkpoint: %s\n",
                    a ? e.message : "the ledger did not open");
        failing = !ok;
        pthread_mutex_lock(&s->lock);
    }
    pthread_mutex_unlock(&s->lock);
    cr_audit_close(a);
    return NULL;
}

/* Waits until no request is under way and no connection is open, or until no request is
 * under way once CR_SERVE_LINGER_MS have passed since it began. Every answer given while
 * stopping closes its connection, so the clients that were busy go at once; one idle on a
 * kept-alive connection may have sent a request that crossed the stop, which the wait lets in
 * to be answered 503 (when it comes later, it meets a closed connection, unread and not
 * run). Past the drain timeout, or at a byte more on stop_fd (a second signal), the runs
 * under way are ended and answered as interrupted. */
static void drain(server *s, int stop_fd, double timeout)
{
    struct timespec begun;
    int interrupted = 0;
    clock_gettime(CLOCK_MONOTONIC, &begun);
    pthread_mutex_lock(&s->lock);
    while (s->in_flight || (atomic_load(&s->open) && since(&begun) * 1e3 < CR_SERVE_LINGER_MS)) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += s->in_flight ? 100000000 : 10000000;
        if (until.tv_nsec >= 1000000000) until.tv_sec++, until.tv_nsec -= 1000000000;
        pthread_cond_timedwait(&s->idle, &s->lock, &until);
        char byte;
        if (!interrupted && ((stop_fd >= 0 && read(stop_fd, &byte, 1) == 1) ||
                             since(&begun) > timeout)) {
            if (since(&begun) > timeout)
                fprintf(stderr, "calc-route: serve: --drain-timeout %g s passed: the runs "
                        "under way are interrupted\n", timeout);
            cr_engine_interrupt(s->engine);
            interrupted = 1;
        }
    }
    pthread_mutex_unlock(&s->lock);
}

/* The address to listen on, as --listen and --listen-public allow: 0, or 2 (said why). */
static int listen_addr(const cr_serve_opts *o, struct sockaddr_storage *addr)
{
    const char *listen = o->listen ? o->listen : CR_SERVE_LISTEN;
    if (resolve(listen, addr) < 0) {
        fprintf(stderr, "calc-route: --listen: want HOST:PORT or [IPV6]:PORT, got '%s'\n",
                listen);
        return 2;
    }
    if (!is_loopback((struct sockaddr *)addr) && !o->listen_public) {
        fprintf(stderr, "calc-route: --listen %s: not a loopback address; serving beyond "
                "this machine wants --listen-public (and a --token-file)\n", listen);
        return 2;
    }
    return 0;
}

/* A listening TCP socket on addr (backlog 1024, the address reusable at once after a
 * restart); -1 with errno set. */
static int bind_listener(const struct sockaddr_storage *addr)
{
    int fd = socket(addr->ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1, e;
    if (fd < 0) return -1;
    socklen_t len = addr->ss_family == AF_INET6 ? sizeof(struct sockaddr_in6)
                                                : sizeof(struct sockaddr_in);
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) == 0 &&
        bind(fd, (const struct sockaddr *)addr, len) == 0 && listen(fd, 1024) == 0)
        return fd;
    e = errno;
    close(fd);
    errno = e;
    return -1;
}

int cr_serve_check(const cr_serve_opts *o)
{
    struct sockaddr_storage addr;
    server s = { .ntokens = 0 };
    int rc = listen_addr(o, &addr);
    if (!rc && o->token_file && (sodium_init() < 0 || read_tokens(&s, o->token_file) < 0))
        rc = 2;
    if (s.tokens) sodium_memzero(s.tokens, s.ntokens * sizeof *s.tokens);
    free(s.tokens);
    return rc;
}

int cr_serve(cr_engine *engine, const cr_serve_opts *o, int stop_fd,
             cr_line_defaults defaults)
{
    const char *listen = o->listen ? o->listen : CR_SERVE_LISTEN;
    struct sockaddr_storage addr;
    if (listen_addr(o, &addr)) return 2;
    if (cr_mhd_load("calc-route: serve") < 0) return 5;
    server *s = calloc(1, sizeof *s);
    if (!s || sodium_init() < 0) {
        free(s);
        return 5;
    }
    s->engine = engine;
    s->defaults = defaults;
    if (!(s->mcp = cr_mcp_new(engine, defaults))) {
        free(s);
        return 5;
    }
    s->max_body = o->max_body ? o->max_body : CR_SERVE_MAX_BODY;
    s->connections = o->connections ? o->connections : CR_SERVE_CONNECTIONS;
    s->header_timeout = o->header_timeout > 0 ? o->header_timeout : CR_SERVE_HEADER_TIMEOUT_S;
    double drain_timeout = o->drain_timeout > 0 ? o->drain_timeout : CR_SERVE_DRAIN_TIMEOUT_S;
    double drain_delay = o->drain_delay < 0 ? 0 : o->drain_delay > 0 ? o->drain_delay
                                                                      : CR_SERVE_DRAIN_DELAY_S;
    if (drain_delay > drain_timeout) drain_delay = drain_timeout;
    unsigned per_address = o->per_address ? o->per_address : CR_SERVE_PER_ADDRESS;
    if (per_address > s->connections + CR_SERVE_OVERFLOW)
        per_address = s->connections + CR_SERVE_OVERFLOW;
    pthread_mutex_init(&s->lock, NULL);
    pthread_mutex_init(&s->tiles_lock, NULL);
    pthread_cond_init(&s->idle, NULL);
    int rc = 0, watchdog = 0, signer = 0;
    if (o->witnesses && !o->tiles) {
        fprintf(stderr, "calc-route: --witnesses wants --tiles (the checkpoints it publishes)\n");
        rc = 2;
    }
    cr_error we = {0};
    if (!rc && o->witnesses && !(s->cosigners = cr_cosigners_open(o->witnesses, &we))) {
        fprintf(stderr, "calc-route: --witnesses %s: %s\n", o->witnesses, we.message);
        rc = 2;
    }
    if (o->tiles && !o->checkpoint_key) {
        fprintf(stderr, "calc-route: --tiles wants --checkpoint-key (the key that signs the "
                "checkpoint it publishes)\n");
        rc = 2;
    }
    if (!rc && o->token_file && read_tokens(s, o->token_file) < 0) rc = 2;
    if (!rc && o->checkpoint_key) {
        if (sign_head(s, o->checkpoint_key, s->signer_why, sizeof s->signer_why) < 0) {
            fprintf(stderr, "calc-route: %s\n", s->signer_why);
            rc = 2;
        } else {
            s->signer = 1;
        }
    }
    s->tiles = o->tiles;
    s->tiles_key = o->checkpoint_key;
    if (!rc && s->tiles && tiles_refresh(s, s->signer_why, sizeof s->signer_why) < 0) {
        fprintf(stderr, "calc-route: %s\n", s->signer_why);
        rc = 2;
    }
    /* The engine's timeout bounds each run; a connection silent for longer than a run may
     * take, plus the slack a client needs, is closed. */
    const char *run_s = cr_config_get(cr_engine_config(engine), "timeout");
    unsigned timeout = (unsigned)ceil(run_s ? strtod(run_s, NULL) : CR_DEFAULT_TIMEOUT_S) + 30;
    unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
                     MHD_USE_POLL | MHD_USE_ITC | MHD_USE_ERROR_LOG |
                     (addr.ss_family == AF_INET6 ? MHD_USE_IPv6 : 0);
    /* The listener is ours: a refused address is said once, by us, with its cause
     * (libmicrohttpd's own bind names "port 0" for an address given whole). */
    int lfd = rc ? -1 : bind_listener(&addr);
    if (!rc && lfd < 0) {
        fprintf(stderr, "calc-route: serve: cannot listen on %s: %s\n", listen,
                strerror(errno));
        rc = 5;
    }
    struct MHD_Daemon *d = rc ? NULL : mhd.start_daemon(
        flags, 0, NULL, NULL, on_request, s,
        MHD_OPTION_LISTEN_SOCKET, lfd,
        MHD_OPTION_CONNECTION_LIMIT, s->connections + CR_SERVE_OVERFLOW,
        MHD_OPTION_PER_IP_CONNECTION_LIMIT, per_address,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)65536,
        MHD_OPTION_CONNECTION_TIMEOUT, timeout,
        MHD_OPTION_NOTIFY_COMPLETED, on_completed, s,
        MHD_OPTION_NOTIFY_CONNECTION, on_connection, s,
        MHD_OPTION_END);
    if (!d && !rc) {
        fprintf(stderr, "calc-route: serve: cannot serve on %s: libmicrohttpd did not start\n",
                listen);
        close(lfd);
        rc = 5;
    }
    if (d) {
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        s->watching = 1;
        watchdog = pthread_create(&s->watchdog, NULL, watchdog_main, s) == 0;
        s->signer_key = o->checkpoint_key;
        s->signer_every = o->checkpoint_every < 0 ? 0 : o->checkpoint_every > 0
                              ? o->checkpoint_every : CR_SERVE_CHECKPOINT_EVERY_S;
        s->signing = s->signer > 0 && s->signer_every > 0;
        signer = s->signing && pthread_create(&s->signer_thread, NULL, signer_main, s) == 0;
        pthread_sigmask(SIG_SETMASK, &old, NULL);
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
        /* /readyz fails first, while requests are still served: a balancer's health check
         * (on a new connection) sees the 503 and takes the service out before it stops
         * accepting, so that nothing it sends meanwhile is refused. A second signal cuts this
         * short. */
        atomic_store(&s->unready, 1);
        if (drain_delay > 0) {
            struct pollfd p = { stop_fd, POLLIN, 0 };
            while (poll(&p, 1, (int)(drain_delay * 1000)) < 0 && errno == EINTR) {}
        }
        /* Then stop accepting; the connections open go on, and a request that comes on one
         * now is answered 503 (closing it); those under way are answered. */
        atomic_store(&s->draining, 1);
        MHD_socket listener = mhd.quiesce_daemon(d);
        if (listener != MHD_INVALID_SOCKET) close(listener);
        drain(s, stop_fd, drain_timeout - drain_delay);
        pthread_mutex_lock(&s->lock);
        s->watching = 0;
        s->signing = 0;
        pthread_cond_broadcast(&s->idle);
        pthread_mutex_unlock(&s->lock);
        mhd.stop_daemon(d);
        if (watchdog) pthread_join(s->watchdog, NULL);
        if (signer) pthread_join(s->signer_thread, NULL);
        if (s->signer > 0 && sign_head(s, o->checkpoint_key, s->signer_why,
                                       sizeof s->signer_why) < 0)
            fprintf(stderr, "calc-route: serve: the final checkpoint: %s\n", s->signer_why);
        if (s->signer > 0 && s->tiles && tiles_refresh(s, s->signer_why,
                                                       sizeof s->signer_why) < 0)
            fprintf(stderr, "calc-route: serve: the final tiles: %s\n", s->signer_why);
        fprintf(stderr, "calc-route: serve: stopped, every request answered\n");
    }
    for (idem *x = s->idems, *next; x; x = next) {
        next = x->next;
        free(x->text);
        free(x);
    }
    if (s->tokens) sodium_memzero(s->tokens, s->ntokens * sizeof *s->tokens);
    free(s->tokens);
    cr_mcp_free(s->mcp);
    pthread_cond_destroy(&s->idle);
    pthread_mutex_destroy(&s->lock);
    pthread_mutex_destroy(&s->tiles_lock);
    cr_cosigners_close(s->cosigners);
    sodium_memzero(s, sizeof *s);
    free(s);
    return rc;
}
