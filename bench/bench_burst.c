/* bench_burst: `calc-route serve` as the public sandbox benchmarks drive a service: 100
 * requests one after another (sequential), 100 started 200 ms apart (staggered) and 100 at
 * once (burst), each on a connection of its own, for `print(1)` and a numpy program. The
 * service runs with its default warm pool, beside the same service with `--pool 0` (every run
 * cold) in the same run. For each: the share answered 200, those refused 429 (named) and
 * anything else, how many 200s ran cold, and p50/p95/p99 of the answered requests' latency.
 * The default pool is measured after /readyz says ready, as a balancer would send it traffic.
 * Usage: bench_burst CALC-ROUTE [N [STAGGER_MS]] */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/bench.h"

static int port;

static const struct program {
    const char *name, *body, *want;
} programs[] = {
    { "print(1)", "{\"code\":\"import os\\nprint(1)\"}", "\"stdout\":\"1\\n\"" },
    { "numpy", "{\"code\":\"import numpy as np\\nr = np.array([0.05, 0.07, -0.02])\\n"
               "print(round(float(np.prod(1 + r) - 1), 6))\"}", "\"stdout\":\"0.10103\\n\"" },
};

typedef struct {
    pthread_t thread;
    const struct program *p;
    double start_ns;          /* when to send (absolute, now_ns()) */
    double ms;                /* its latency */
    int code;                 /* HTTP status, 0: no answer */
    int cold, right;
} req;

/* One request on a new connection: fills r->code, r->ms, r->cold, r->right. */
static void one(req *r)
{
    char out[1024], buf[65536];
    int n = snprintf(out, sizeof out, "POST /v1/run HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                     "Connection: close\r\nContent-Type: application/json\r\n"
                     "Content-Length: %zu\r\n\r\n%s", strlen(r->p->body), r->p->body);
    double t0 = now_ns();
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                             .sin_addr = { htonl(INADDR_LOOPBACK) } };
    size_t len = 0;
    if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) == 0) {
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        if (write(fd, out, (size_t)n) == n)
            for (;;) {
                ssize_t k = read(fd, buf + len, sizeof buf - 1 - len);
                if (k < 0 && errno == EINTR) continue;
                if (k <= 0 || (len += (size_t)k) == sizeof buf - 1) break;
            }
    }
    if (fd >= 0) close(fd);
    buf[len] = '\0';
    r->ms = (now_ns() - t0) / 1e6;
    r->code = len > 12 && strncmp(buf, "HTTP/1.1 ", 9) == 0 ? atoi(buf + 9) : 0;
    r->cold = strstr(buf, "\"sandbox_start\":\"cold\"") != NULL;
    r->right = r->code == 200 && strstr(buf, r->p->want);
}

static void *req_main(void *arg)
{
    req *r = arg;
    double wait = r->start_ns - now_ns();
    if (wait > 0) {
        struct timespec ts = { (time_t)(wait / 1e9), (long)((long long)wait % 1000000000LL) };
        while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {}
    }
    one(r);
    return NULL;
}

/* Sequential (gap_ms < 0), staggered (gap_ms apart) or a burst (0): n requests. */
static void pattern(const char *title, const struct program *p, int n, double gap_ms,
                    const char *pool)
{
    req *rs = calloc((size_t)n, sizeof *rs);
    double t0 = now_ns() + 20e6;
    for (int i = 0; i < n; i++) {
        rs[i].p = p;
        if (gap_ms < 0) {
            one(&rs[i]);
            continue;
        }
        rs[i].start_ns = t0 + gap_ms * 1e6 * i;
        if (pthread_create(&rs[i].thread, NULL, req_main, &rs[i]) != 0) rs[i].code = -1;
    }
    if (gap_ms >= 0)
        for (int i = 0; i < n; i++)
            if (rs[i].code != -1) pthread_join(rs[i].thread, NULL);
    int ok = 0, busy = 0, other = 0, cold = 0, wrong = 0;
    double *ms = malloc((size_t)n * sizeof *ms);
    for (int i = 0; i < n; i++) {
        if (rs[i].code == 200) {
            ms[ok++] = rs[i].ms;
            cold += rs[i].cold;
            wrong += !rs[i].right;
        } else if (rs[i].code == 429) busy++;
        else other++;
    }
    qsort(ms, (size_t)ok, sizeof *ms, cmp_d);
#define PCT(q) (ok ? ms[(size_t)((ok - 1) * (q))] : 0)
    printf("  %-10s %-9s pool %-4s  200: %5.1f%%  429: %3d  other: %3d  cold: %3d  "
           "p50 %7.1f ms  p95 %7.1f ms  p99 %7.1f ms%s\n", title, p->name, pool,
           100.0 * ok / n, busy, other, cold, PCT(0.5), PCT(0.95), PCT(0.99),
           wrong ? "  (WRONG ANSWERS)" : "");
    fflush(stdout);
    free(ms);
    free(rs);
}

/* Its /readyz status. */
static int readyz(void)
{
    char buf[512];
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                             .sin_addr = { htonl(INADDR_LOOPBACK) } };
    static const char q[] = "GET /readyz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    ssize_t k = -1;
    if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
        write(fd, q, sizeof q - 1) == (ssize_t)sizeof q - 1)
        k = read(fd, buf, sizeof buf - 1);
    if (fd >= 0) close(fd);
    return k > 12 ? atoi(buf + 9) : 0;
}

static pid_t start(const char *calc_route, const char *pool)
{
    const char *args[] = { calc_route, "--tier", "ns", "--listen", "127.0.0.1:0",
                           "--drain-delay", "0", "serve", NULL, NULL, NULL };
    if (pool) {   /* options come before the command */
        args[7] = "--pool";
        args[8] = pool;
        args[9] = "serve";
    }
    return bench_serve_start(args, &port);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_burst CALC-ROUTE [N [STAGGER_MS]]\n");
        return 2;
    }
    int n = argc > 2 ? atoi(argv[2]) : 100;
    double gap = argc > 3 ? atof(argv[3]) : 200;
    if (n < 1 || n > 4096 || gap <= 0) return 2;
    signal(SIGPIPE, SIG_IGN);
    for (int side = 0; side < 2; side++) {
        const char *pool = side ? "0" : NULL;
        pid_t pid = start(argv[1], pool);
        if (pid < 0) {
            printf("skipped: %s serve --tier ns did not start\n", argv[1]);
            return 0;
        }
        double t0 = now_ns();
        while (readyz() != 200 && now_ns() - t0 < 180e9) usleep(50000);
        printf("serve --tier ns %s: ready after %.2f s\n",
               pool ? "--pool 0 (every run cold)" : "with its default pool", (now_ns() - t0) / 1e9);
        for (size_t p = 0; p < sizeof programs / sizeof *programs; p++) {
            pattern("sequential", &programs[p], n, -1, pool ? "0" : "auto");
            pattern("staggered", &programs[p], n, gap, pool ? "0" : "auto");
            pattern("burst", &programs[p], n, 0, pool ? "0" : "auto");
        }
        kill(pid, SIGTERM);
        waitpid(pid, NULL, 0);
    }
    return 0;
}
