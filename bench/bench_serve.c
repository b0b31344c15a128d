/* bench_serve: `calc-route serve` on loopback under 1, 8 and 64 keep-alive clients (a thread
 * and a connection each, one request in flight on each) sending POST /v1/run of an in-process
 * formula, beside the same work as direct library calls in this process on as many threads
 * over one engine (the request's JSON read, cr_run(), the result's JSON); then the same with
 * 1, 8 and 64 clients for a sandboxed request, with a warm pool of 8 on both sides, when the
 * ns tier runs here, and with 1 and 8 for the same request cold (--pool 0), each warm rate's
 * ratio to the cold one printed. Each step starts once the pools are ready. Requests per
 * second and p50/p99 latency of what each step completed in SECONDS; every answer is checked.
 * After each but the cold one, SIGTERM under load (drain_run(); only that with "drain").
 * Usage: bench_serve CALC-ROUTE [SECONDS [drain]] */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/bench.h"
#include "calcroute.h"

#define MAX_SAMPLES (1 << 20)
#define POOL "8"

/* A phase: the request sent, what every answer must carry, the engine's options; the drain's
 * code before each request's id (JSON text, as the request and the ledger's export have it). */
static const struct phase {
    const char *title, *body, *want, *tier, *pool;
    int max_clients;
    const char *drain_code;       /* NULL: no drain */
} phases[] = {
    { "a 3-line formula, in-process",
      "{\"code\":\"revenue = 5829\\nprior = 5735\\nans = (revenue - prior) / prior * 100\"}",
      "\"fraction\":\"1880/1147\"", "none", "0", 64, "ans = " },
    { "import os; ans = 6 * 7, in the ns sandbox with a warm pool of " POOL,
      "{\"code\":\"import os\\nans = 6 * 7\"}", "\"fraction\":\"42\"", "ns", POOL, 64,
      "import os\\nans = " },
    { "the same, cold (no pool)",
      "{\"code\":\"import os\\nans = 6 * 7\"}", "\"fraction\":\"42\"", "ns", "0", 8, NULL },
};
#define PHASE_WARM 1      /* the sandboxed phase whose rates are set against the cold one's */
#define PHASE_COLD 2
static double http_rate[3][3];   /* [phase][clients' index]: requests per second over HTTP */

static const struct phase *ph;
static int port;
static double seconds = 2;
static cr_engine *engine;   /* the direct calls' */

typedef struct {
    pthread_t thread;
    int direct;              /* 1: library calls; 0: HTTP */
    double *us;              /* latencies */
    size_t n;
    size_t wrong;            /* answers without WANT, or failed requests */
} client;

static int connect_loopback(void)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                             .sin_addr = { htonl(INADDR_LOOPBACK) } };
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
        if (fd >= 0) close(fd);
        return -1;
    }
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

/* Reads one answer on FD into buf (NUL-terminated): its length, with *body where its body
 * starts; 0 when the connection closed before a byte of it came, -1 when it closed part-way,
 * -2 when it is not an answer this client reads (no Content-Length, longer than buf, or more
 * bytes than one answer). */
static ssize_t read_answer(int fd, char *buf, size_t cap, char **body)
{
    size_t len = 0, total = 0;
    *body = NULL;
    for (;;) {
        if (len == cap - 1) return -2;
        ssize_t k = read(fd, buf + len, cap - 1 - len);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return len ? -1 : 0;
        len += (size_t)k;
        buf[len] = '\0';
        if (!*body && (*body = strstr(buf, "\r\n\r\n"))) {
            *body += 4;
            const char *cl = strcasestr(buf, "\r\nContent-Length:");
            if (!cl) return -2;
            total = (size_t)(*body - buf) + strtoul(cl + 17, NULL, 10);
        }
        if (*body && len >= total) return len == total ? (ssize_t)len : -2;
    }
}

/* One request on a kept-alive connection: 1 when the answer is 200 with WANT in its body. */
static int http_run(int fd, const char *req, size_t req_len, char *buf, size_t cap)
{
    char *body;
    if (write(fd, req, req_len) != (ssize_t)req_len || read_answer(fd, buf, cap, &body) <= 0)
        return -1;
    return strncmp(buf, "HTTP/1.1 200 ", 13) == 0 && strstr(body, ph->want) ? 1 : 0;
}

static int direct_run(void)
{
    cr_request *req = cr_request_new();
    cr_result *res = NULL;
    int ok = req && cr_request_set_json(req, ph->body, strlen(ph->body), NULL) == CR_OK &&
             cr_run(engine, req, &res, NULL) == CR_OK;
    const char *js = ok ? cr_result_json(res) : NULL;
    ok = js && strstr(js, ph->want);
    cr_result_free(res);
    cr_request_free(req);
    return ok;
}

static void *client_main(void *arg)
{
    client *c = arg;
    char req[512], buf[8192];
    int n = snprintf(req, sizeof req, "POST /v1/run HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                     "Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n%s",
                     strlen(ph->body), ph->body);
    int fd = c->direct ? -1 : connect_loopback();
    if (!c->direct && fd < 0) {
        c->wrong++;
        return NULL;
    }
    double end = now_ns() + seconds * 1e9;
    while (c->n < MAX_SAMPLES) {
        double t0 = now_ns();
        if (t0 >= end) break;
        int ok = c->direct ? direct_run() : http_run(fd, req, (size_t)n, buf, sizeof buf);
        if (ok < 0) {   /* the connection failed: a new one */
            close(fd);
            if ((fd = connect_loopback()) < 0) break;
        }
        if (ok != 1) c->wrong++;
        c->us[c->n++] = (now_ns() - t0) / 1e3;
    }
    if (fd >= 0) close(fd);
    return NULL;
}

static double step(int direct, int clients)
{
    client *cs = calloc((size_t)clients, sizeof *cs);
    double t0 = now_ns();
    int started = 0;
    for (int i = 0; i < clients; i++) {
        cs[i].direct = direct;
        cs[i].us = malloc(MAX_SAMPLES * sizeof *cs[i].us);
        if (cs[i].us && pthread_create(&cs[i].thread, NULL, client_main, &cs[i]) == 0) started++;
        else break;
    }
    size_t total = 0, wrong = 0;
    for (int i = 0; i < started; i++) {
        pthread_join(cs[i].thread, NULL);
        total += cs[i].n;
        wrong += cs[i].wrong;
    }
    double elapsed = (now_ns() - t0) / 1e9;
    double *all = malloc((total ? total : 1) * sizeof *all);
    size_t k = 0;
    for (int i = 0; i < started; i++) {
        memcpy(all + k, cs[i].us, cs[i].n * sizeof *all);
        k += cs[i].n;
        free(cs[i].us);
    }
    if (total) qsort(all, total, sizeof *all, cmp_d);
    double sum = 0;
    for (size_t i = 0; i < total; i++) sum += all[i];
    printf("%-6s %2d client%s %7.0f req/s  p50 %7.1f us  p99 %7.1f us  mean %7.1f us  (%zu "
           "requests, %zu wrong)\n", direct ? "direct" : "http", clients,
           clients == 1 ? " " : "s", (double)total / elapsed, total ? all[total / 2] : 0,
           total ? all[total * 99 / 100] : 0, total ? sum / (double)total : 0, total, wrong);
    fflush(stdout);
    free(all);
    free(cs);
    return (double)total / elapsed;
}

/* Until the service's GET /readyz answers 200 (its pool full once), up to `limit` seconds:
 * the steps measure a ready service, not its start. */
static int wait_readyz(double limit)
{
    for (double waited = 0; waited < limit; waited += 0.1) {
        char buf[1024];
        int fd = connect_loopback(), ok = 0;
        static const char req[] = "GET /readyz HTTP/1.1\r\nHost: bench\r\nConnection: close\r\n\r\n";
        if (fd >= 0 && write(fd, req, sizeof req - 1) == (ssize_t)(sizeof req - 1)) {
            ssize_t n = read(fd, buf, sizeof buf - 1);
            ok = n > 12 && strncmp(buf + 9, "200", 3) == 0;
        }
        if (fd >= 0) close(fd);
        if (ok) return 1;
        struct timespec t = { 0, 100 * 1000 * 1000 };
        nanosleep(&t, NULL);
    }
    return 0;
}

/* `calc-route serve` with the phase's options on a free port (and the ledger AUDIT when not
 * NULL); its pid, or -1. */
static pid_t start_server(const char *calc_route, const char *audit)
{
    /* No drain delay: the drain's figures are those of the stop itself. */
    const char *args[] = { calc_route, "--tier", ph->tier, "--pool", ph->pool,
                           "--connections", "128", "--drain-delay", "0", "--listen",
                           "127.0.0.1:0", "serve", NULL, NULL, NULL };
    if (audit) {   /* options come before the command */
        args[11] = "--audit";
        args[12] = audit;
        args[13] = "serve";
    }
    pid_t pid = bench_serve_start(args, &port);
    if (pid < 0) fprintf(stderr, "bench_serve: %s serve did not start\n", calc_route);
    return pid;
}

static int stop_server(pid_t pid)
{
    int status;
    kill(pid, SIGTERM);
    waitpid(pid, &status, 0);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}

/* ---- drain: SIGTERM under load ------------------------------------------------------------
 * As many keep-alive clients as the phase's last step (at most 64) send its kind of request,
 * each with its own id carried in the code ("ans = ID", so that the ledger's record of it
 * names it), to a service with a ledger; SIGTERM comes after SECONDS. Each request ends as one
 * of: */
enum { D_OK,        /* 200 with its own value and the ledger seq it was given */
       D_503,       /* a whole 503 answer: refused while stopping */
       D_RESET,     /* a new connection closed before a byte of answer: the kernel had
                       queued it for a listener that then closed */
       D_CLOSED,    /* a kept-alive connection closed before a byte of answer */
       D_TORN,      /* part of an answer, then the connection closed */
       D_WRONG,     /* a whole answer that is neither: another status, another value */
       D_KINDS };
static const char *const d_names[D_KINDS] = { "200", "503", "new connection reset",
                                              "kept connection closed unanswered", "torn",
                                              "wrong" };
#define DRAIN_MAX (1 << 20)   /* requests a client */

typedef struct {
    unsigned long long id;
    long long seq;            /* the answer's audit seq (D_OK), or the ledger's record */
} d_req;

typedef struct {
    pthread_t thread;
    unsigned idx;
    d_req *ok;                /* its 200 answers */
    size_t n_ok;
    size_t kinds[D_KINDS];
    size_t after_term;        /* requests begun after the SIGTERM was sent */
    size_t ok_after;          /* 200 answers that came after it */
    size_t refused;           /* connects refused (the client's last) */
} drainer;

static _Atomic int term_sent;

/* One request on FD; its D_ kind, *seq for D_OK, *close when the connection is not kept. */
static int drain_request(int fd, unsigned long long id, long long *seq, int *close_it)
{
    char req[512], buf[8192], want[64];
    char body[128];
    int bn = snprintf(body, sizeof body, "{\"id\":%llu,\"code\":\"%s%llu\"}", id,
                      ph->drain_code, id);
    int n = snprintf(req, sizeof req, "POST /v1/run HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                     "Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", bn, body);
    *close_it = 1;
    if (send(fd, req, (size_t)n, MSG_NOSIGNAL) != n) return D_CLOSED;
    char *start;
    ssize_t got = read_answer(fd, buf, sizeof buf, &start);
    if (got <= 0) return got == 0 ? D_CLOSED : got == -1 ? D_TORN : D_WRONG;
    *close_it = strcasestr(buf, "\r\nConnection: close\r\n") != NULL;
    if (strncmp(buf, "HTTP/1.1 503 ", 13) == 0)
        return strstr(start, "\"reason\":\"shutting_down\"") ? D_503 : D_WRONG;
    snprintf(want, sizeof want, "\"fraction\":\"%llu\"", id);
    const char *audit = strstr(start, "\"audit\":{\"seq\":");
    if (strncmp(buf, "HTTP/1.1 200 ", 13) != 0 || !strstr(start, want) || !audit)
        return D_WRONG;
    *seq = atoll(audit + 15);
    return D_OK;
}

static void *drain_main(void *arg)
{
    drainer *d = arg;
    int fd = -1, fresh = 1;
    for (unsigned long long k = 0; k < DRAIN_MAX; k++) {
        if (fd < 0 && (fd = connect_loopback()) < 0) {
            d->refused++;   /* the listener is closed: the service is stopping */
            break;
        }
        unsigned long long id = (unsigned long long)(d->idx + 1) * 10000000ull + k;
        long long seq = 0;
        int close_it;
        if (atomic_load(&term_sent)) d->after_term++;
        int kind = drain_request(fd, id, &seq, &close_it);
        if (kind == D_CLOSED && fresh) kind = D_RESET;
        fresh = 0;
        d->kinds[kind]++;
        if (kind == D_OK) {
            d->ok[d->n_ok++] = (d_req){ id, seq };
            if (atomic_load(&term_sent)) d->ok_after++;
        }
        if (close_it) {
            close(fd);
            fd = -1;
            fresh = 1;
        }
    }
    if (fd >= 0) close(fd);
    return NULL;
}

static int cmp_id(const void *a, const void *b)
{
    unsigned long long x = ((const d_req *)a)->id, y = ((const d_req *)b)->id;
    return (x > y) - (x < y);
}

/* The ledger's records as (id, seq), read back with `calc-audit export`; their number, or -1. */
static long read_ledger(const char *calc_audit, const char *db, d_req **out)
{
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "'%s' export '%s'", calc_audit, db);
    FILE *f = popen(cmd, "r");
    if (!f) return -1;
    size_t n = 0, cap = 1024, lcap = 0;
    d_req *recs = malloc(cap * sizeof *recs);
    char *line = NULL, want[64];
    snprintf(want, sizeof want, "\"code\":\"%s", ph->drain_code);
    long bad = 0;
    while (recs && getline(&line, &lcap, f) > 0) {
        /* Records are written by the engine, one JSON object a line: seq first, the code
         * later ("code":"ans = ID"). */
        const char *code = strstr(line, want);
        if (strncmp(line, "{\"seq\":", 7) != 0 || !code) {
            bad++;
            continue;
        }
        if (n == cap) {
            d_req *p = realloc(recs, (cap *= 2) * sizeof *recs);
            if (!p) break;
            recs = p;
        }
        recs[n++] = (d_req){ strtoull(code + strlen(want), NULL, 10), atoll(line + 7) };
    }
    free(line);
    if (pclose(f) != 0 || bad || !recs) {
        free(recs);
        return -1;
    }
    *out = recs;
    return (long)n;
}

/* Runs the drain and prints its figures; 0 when nothing was lost, answered twice or torn. */
static int drain_run(const char *calc_route)
{
    char dir[] = "/tmp/bench_serve.XXXXXX", db[64], calc_audit[4096];
    if (!mkdtemp(dir)) return 1;
    snprintf(db, sizeof db, "%s/ledger.db", dir);
    const char *slash = strrchr(calc_route, '/');
    snprintf(calc_audit, sizeof calc_audit, "%.*scalc-audit",
             slash ? (int)(slash - calc_route + 1) : 0, calc_route);
    atomic_store(&term_sent, 0);
    pid_t pid = start_server(calc_route, db);
    if (pid < 0) return 1;
    int clients = ph->max_clients < 64 ? ph->max_clients : 64, started = 0;
    drainer *ds = calloc((size_t)clients, sizeof *ds);
    for (int i = 0; ds && i < clients; i++) {
        ds[i].idx = (unsigned)i;
        ds[i].ok = malloc(DRAIN_MAX * sizeof *ds[i].ok);
        if (ds[i].ok && pthread_create(&ds[i].thread, NULL, drain_main, &ds[i]) == 0) started++;
        else break;
    }
    struct timespec load = { (time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9) };
    nanosleep(&load, NULL);
    double t_term = now_ns();
    atomic_store(&term_sent, 1);
    kill(pid, SIGTERM);
    int status;
    waitpid(pid, &status, 0);
    double stop_ms = (now_ns() - t_term) / 1e6;
    size_t kinds[D_KINDS] = {0}, n_ok = 0, after = 0, ok_after = 0, refused = 0, sent = 0;
    for (int i = 0; i < started; i++) {
        pthread_join(ds[i].thread, NULL);
        for (int k = 0; k < D_KINDS; k++) kinds[k] += ds[i].kinds[k], sent += ds[i].kinds[k];
        n_ok += ds[i].n_ok;
        after += ds[i].after_term;
        ok_after += ds[i].ok_after;
        refused += ds[i].refused;
    }
    d_req *ok = malloc((n_ok ? n_ok : 1) * sizeof *ok), *rec = NULL;
    size_t k = 0;
    for (int i = 0; i < started; i++) {
        memcpy(ok + k, ds[i].ok, ds[i].n_ok * sizeof *ok);
        k += ds[i].n_ok;
        free(ds[i].ok);
    }
    free(ds);
    long n_rec = read_ledger(calc_audit, db, &rec);
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "'%s' verify '%s' >/dev/null 2>&1", calc_audit, db);
    int verified = n_rec >= 0 && system(cmd) == 0;
    /* Both sides by id: an answer's record is the one with its id and the seq it was told. */
    size_t once = 0, lost = 0, unanswered = 0, twice = 0, other_seq = 0;
    if (n_rec >= 0) {
        qsort(ok, n_ok, sizeof *ok, cmp_id);
        qsort(rec, (size_t)n_rec, sizeof *rec, cmp_id);
        size_t i = 0, j = 0;
        while (i < n_ok || j < (size_t)n_rec) {
            if (j > 0 && j < (size_t)n_rec && rec[j].id == rec[j - 1].id) {
                twice++;
                j++;
            } else if (j == (size_t)n_rec || (i < n_ok && ok[i].id < rec[j].id)) {
                lost++;
                i++;
            } else if (i == n_ok || rec[j].id < ok[i].id) {
                unanswered++;
                j++;
            } else {
                if (rec[j].seq == ok[i].seq) once++;
                else other_seq++;
                i++;
                j++;
            }
        }
    }
    printf("drain: %d keep-alive clients, POST /v1/run of \"%sID\" with --tier %s --pool %s "
           "--audit, SIGTERM after %.1f s of load: exit %d after %.1f ms\n", started,
           ph->drain_code, ph->tier, ph->pool, seconds,
           WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), stop_ms);
    printf("  requests sent %zu (%zu begun after SIGTERM, %zu answered 200 after it):", sent,
           after, ok_after);
    for (int i = 0; i < D_KINDS; i++) printf("%s %s %zu", i ? "," : "", d_names[i], kinds[i]);
    printf("; connects refused %zu\n", refused);
    if (n_rec < 0)
        printf("  ledger: could not be read with %s export\n", calc_audit);
    else
        printf("  ledger %ld records, verify %s: 200 with its record once %zu, 200 without a "
               "record %zu, record with another seq %zu, record without a 200 %zu, id recorded "
               "twice %zu\n", n_rec, verified ? "ok" : "FAILED", once, lost, other_seq,
               unanswered, twice);
    fflush(stdout);
    free(ok);
    free(rec);
    static const char *const leftovers[] = { "ledger.db", "ledger.db-wal", "ledger.db-shm",
                                             "ledger.db-journal" };
    for (size_t i = 0; i < sizeof leftovers / sizeof *leftovers; i++) {
        char path[96];
        snprintf(path, sizeof path, "%s/%s", dir, leftovers[i]);
        unlink(path);
    }
    rmdir(dir);
    return !(WIFEXITED(status) && WEXITSTATUS(status) == 0) || n_rec < 0 || !verified ||
           lost || unanswered || twice || other_seq || kinds[D_TORN] || kinds[D_WRONG] ||
           once != n_ok;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_serve CALC-ROUTE [SECONDS [drain]]\n");
        return 2;
    }
    if (argc > 2) seconds = atof(argv[2]);
    int only_drain = argc > 3 && strcmp(argv[3], "drain") == 0;
    int failed = 0;
    static const int clients[] = { 1, 8, 64 };
    for (size_t p = 0; p < sizeof phases / sizeof *phases; p++) {
        ph = &phases[p];
        if (strcmp(ph->tier, "none") != 0 && getenv("CR_TEST_NO_SANDBOX")) {
            /* make check-tsan: the sandbox's clone() is more than the runtime follows */
            printf("%s: skipped: CR_TEST_NO_SANDBOX\n", ph->title);
            continue;
        }
        cr_config *cfg = cr_config_new();
        cr_error err = {0};
        engine = cfg && cr_config_set(cfg, "tier", ph->tier, &err) == CR_OK &&
                 cr_config_set(cfg, "pool", ph->pool, &err) == CR_OK
                 ? cr_engine_open(cfg, &err) : NULL;
        cr_config_free(cfg);
        if (!engine) {   /* the ns tier cannot run here: said, not failed */
            printf("%s: skipped: %s\n", ph->title, err.message);
            continue;
        }
        if (only_drain && !ph->drain_code) {
            cr_engine_close(engine);
            continue;
        }
        if (!only_drain) {
            pid_t pid = start_server(argv[1], NULL);
            if (pid < 0) return 1;
            if (!wait_readyz(120) || cr_engine_ready(engine, "pool", 120, &err) != CR_OK)
                printf("(a pool was not ready in 120 s: the first step includes its start)\n");
            printf("POST /v1/run of %s, keep-alive, %.0f s a step; direct: the same request as "
                   "cr_run() on as many threads\n", ph->title, seconds);
            for (size_t i = 0; i < sizeof clients / sizeof *clients; i++) {
                if (clients[i] > ph->max_clients) break;
                http_rate[p][i] = step(0, clients[i]);
                step(1, clients[i]);
            }
            failed |= stop_server(pid);
        }
        cr_engine_close(engine);
        if (ph->drain_code) failed |= drain_run(argv[1]);
    }
    for (size_t i = 0; !only_drain && i < sizeof clients / sizeof *clients; i++)
        if (http_rate[PHASE_WARM][i] > 0 && http_rate[PHASE_COLD][i] > 0)
            printf("sandboxed over HTTP, %d client%s: warm pool %.0f req/s, cold %.1f req/s: "
                   "%.1fx\n", clients[i], clients[i] == 1 ? "" : "s", http_rate[PHASE_WARM][i],
                   http_rate[PHASE_COLD][i], http_rate[PHASE_WARM][i] / http_rate[PHASE_COLD][i]);
    return failed;
}
