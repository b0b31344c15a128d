/* bench_mcp: the round trip of one MCP tools/call of `calculate` over stdio (write the request
 * line to `calc-route mcp`, read its answer line; one call in flight), beside the same work
 * as direct library calls in this process: cr_run() of the request once, and as calculate
 * does it (the routing decision, then the run) with the result's JSON. Microseconds, p50 and
 * p99 of N calls after a warm-up.
 * Usage: bench_mcp CALC-ROUTE [N] */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/bench.h"
#include "calcroute.h"

#define CODE "revenue = 5829\\nprior = 5735\\nans = (revenue - prior) / prior * 100"
#define ARGS "{\"code\":\"" CODE "\"}"

static int to_srv, from_srv;
static char rbuf[1 << 16];
static size_t rlen;

/* Reads up to and including the next newline; returns its length, or -1. */
static ssize_t read_reply(char *line, size_t cap)
{
    for (;;) {
        char *nl = memchr(rbuf, '\n', rlen);
        if (nl) {
            size_t n = (size_t)(nl - rbuf) + 1;
            if (n >= cap) return -1;
            memcpy(line, rbuf, n);
            line[n] = '\0';
            memmove(rbuf, rbuf + n, rlen - n);
            rlen -= n;
            return (ssize_t)n;
        }
        if (rlen == sizeof rbuf) return -1;
        ssize_t k = read(from_srv, rbuf + rlen, sizeof rbuf - rlen);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return -1;
        rlen += (size_t)k;
    }
}

static int send_line(const char *msg)
{
    size_t n = strlen(msg);
    return write(to_srv, msg, n) == (ssize_t)n ? 0 : -1;
}

static int rpc(const char *msg, char *reply, size_t cap)
{
    return send_line(msg) || read_reply(reply, cap) < 0 ? -1 : 0;
}

static void report(const char *what, double *us, int n)
{
    qsort(us, (size_t)n, sizeof *us, cmp_d);
    printf("%-56s p50 %7.1f us  p90 %7.1f us  p99 %7.1f us\n", what, us[n / 2],
           us[n * 9 / 10], us[n * 99 / 100]);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_mcp CALC-ROUTE [N]\n");
        return 2;
    }
    int n = argc > 2 ? atoi(argv[2]) : 5000, warm = n / 10 + 10;
    double *us = malloc(sizeof *us * (size_t)n);
    static char reply[1 << 16];
    int in[2], out[2];
    if (!us || pipe(in) || pipe(out)) return 1;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        close(in[1]);
        close(out[0]);
        execl(argv[1], argv[1], "--tier", "none", "mcp", (char *)NULL);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    to_srv = in[1];
    from_srv = out[0];
    if (rpc("{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{"
            "\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{"
            "\"name\":\"bench\",\"version\":\"1\"}}}\n", reply, sizeof reply) ||
        send_line("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n")) {
        fprintf(stderr, "bench_mcp: %s does not answer initialize\n", argv[1]);
        return 1;
    }
    static const char call[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
                               "\"params\":{\"name\":\"calculate\",\"arguments\":" ARGS "}}\n";
    for (int i = 0; i < warm + n; i++) {
        double t0 = now_ns();
        if (rpc(call, reply, sizeof reply)) {
            fprintf(stderr, "bench_mcp: no answer to tools/call\n");
            return 1;
        }
        if (i >= warm) us[i - warm] = (now_ns() - t0) / 1e3;
        if (i == 0 && !strstr(reply, "\"isError\":false")) {
            fprintf(stderr, "bench_mcp: calculate failed: %s", reply);
            return 1;
        }
    }
    char *text = strstr(reply, "\"text\":\""), *end = text ? strchr(text + 8, '"') : NULL;
    printf("calculate answers %.*s\n", end ? (int)(end - text - 8) : 0, end ? text + 8 : "");
    report("MCP tools/call calculate over stdio (round trip)", us, n);
    close(to_srv);
    int status;
    waitpid(pid, &status, 0);

    /* The library's share, in this process, on an engine like the server's. */
    cr_config *cfg = cr_config_new();
    cr_error e = {0};
    cr_engine *engine = cfg && cr_config_set(cfg, "tier", "none", &e) == CR_OK
                            ? cr_engine_open(cfg, &e) : NULL;
    cr_config_free(cfg);
    cr_request *req = cr_request_new();
    static const char args[] = ARGS;
    if (!engine || !req || cr_request_set_json(req, args, sizeof args - 1, &e) != CR_OK) {
        fprintf(stderr, "bench_mcp: %s\n", e.message);
        return 1;
    }
    for (int twice = 0; twice < 2; twice++) {
        for (int i = 0; i < warm + n; i++) {
            cr_result *res = NULL;
            double t0 = now_ns();
            if (twice) {
                cr_request_set_explain(req, 1);
                cr_run(engine, req, &res, &e);
                cr_result_free(res);
                cr_request_set_explain(req, 0);
            }
            if (cr_run(engine, req, &res, &e) != CR_OK || !cr_result_json(res)) return 1;
            cr_result_free(res);
            if (i >= warm) us[i - warm] = (now_ns() - t0) / 1e3;
        }
        report(twice ? "direct: decide, then cr_run() + its JSON (as calculate)"
                     : "direct: cr_run() + its JSON", us, n);
    }
    cr_request_free(req);
    cr_engine_close(engine);
    free(us);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
