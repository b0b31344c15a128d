/* bench_serve: `calc-route serve` on loopback under 1, 8 and 64 keep-alive clients (a thread
 * and a connection each, one request in flight on each) sending POST /v1/run of an in-process
 * formula, beside the same work as direct library calls in this process on as many threads
 * over one engine (the request's JSON read, cr_run(), the result's JSON); then the same with
 * 1 and 8 clients for a sandboxed request, with a warm pool of 8 on both sides, when the ns
 * tier runs here. Requests per second and p50/p99 latency of what each step completed in
 * SECONDS; every answer is checked.
 * Usage: bench_serve CALC-ROUTE [SECONDS] */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
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

/* A phase: the request sent, what every answer must carry, the engine's options. */
static const struct phase {
    const char *title, *body, *want, *tier, *pool;
    int max_clients;
} phases[] = {
    { "a 3-line formula, in-process",
      "{\"code\":\"revenue = 5829\\nprior = 5735\\nans = (revenue - prior) / prior * 100\"}",
      "\"fraction\":\"1880/1147\"", "none", "0", 64 },
    { "import os; ans = 6 * 7, in the ns sandbox with a warm pool of " POOL,
      "{\"code\":\"import os\\nans = 6 * 7\"}", "\"fraction\":\"42\"", "ns", POOL, 8 },
};

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

/* One request on a kept-alive connection: 1 when the answer is 200 with WANT in its body. */
static int http_run(int fd, const char *req, size_t req_len, char *buf, size_t cap)
{
    if (write(fd, req, req_len) != (ssize_t)req_len) return -1;
    size_t len = 0, want = 0;
    char *body = NULL;
    for (;;) {
        if (len == cap - 1) return -1;
        ssize_t k = read(fd, buf + len, cap - 1 - len);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return -1;
        len += (size_t)k;
        buf[len] = '\0';
        if (!body && (body = strstr(buf, "\r\n\r\n"))) {
            body += 4;
            const char *cl = strcasestr(buf, "\r\nContent-Length:");
            if (!cl) return -1;
            want = (size_t)(body - buf) + strtoul(cl + 17, NULL, 10);
        }
        if (body && len >= want) break;
    }
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

static void step(int direct, int clients)
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
}

/* `calc-route serve` with the phase's options on a free port; its pid, or -1. */
static pid_t start_server(const char *calc_route)
{
    int out[2];
    if (pipe(out) < 0) return -1;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(out[1], 1);
        close(out[0]);
        close(out[1]);
        execl(calc_route, calc_route, "--tier", ph->tier, "--pool", ph->pool,
              "--connections", "128", "--listen", "127.0.0.1:0", "serve", (char *)NULL);
        _exit(127);
    }
    close(out[1]);
    char line[256];
    FILE *f = fdopen(out[0], "r");
    const char *at = f && fgets(line, sizeof line, f) ? strrchr(line, ':') : NULL;
    if (f) fclose(f);
    if (!at || (port = atoi(at + 1)) <= 0) {
        fprintf(stderr, "bench_serve: %s serve did not start\n", calc_route);
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        return -1;
    }
    return pid;
}

static int stop_server(pid_t pid)
{
    int status;
    kill(pid, SIGTERM);
    waitpid(pid, &status, 0);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_serve CALC-ROUTE [SECONDS]\n");
        return 2;
    }
    if (argc > 2) seconds = atof(argv[2]);
    int failed = 0;
    static const int clients[] = { 1, 8, 64 };
    for (size_t p = 0; p < sizeof phases / sizeof *phases; p++) {
        ph = &phases[p];
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
        pid_t pid = start_server(argv[1]);
        if (pid < 0) return 1;
        printf("POST /v1/run of %s, keep-alive, %.0f s a step; direct: the same request as "
               "cr_run() on as many threads\n", ph->title, seconds);
        for (size_t i = 0; i < sizeof clients / sizeof *clients; i++) {
            if (clients[i] > ph->max_clients) break;
            step(0, clients[i]);
            step(1, clients[i]);
        }
        cr_engine_close(engine);
        failed |= stop_server(pid);
    }
    return failed;
}
