/* bench/bench_loop.c: nanoseconds per iteration of in-process loops, beside CPython.
 *
 * Each program runs REPEAT times through cr_run (a fresh evaluation each time, the parse
 * included: tens of microseconds against N iterations); the figure of one run is its thread
 * CPU time divided by N (CPU rather than wall time: on a shared machine the wall time
 * mostly measures the other tenants). It prints the median and the 99th percentile over the runs, and writes them
 * as JSON lines so that bench/bench_loop_peer.py times /usr/bin/python3 on the same programs
 * in the same run and prints the ratio (bench/run.sh prints them side by side).
 *
 * usage: bench_loop OUT.jsonl [N [REPEAT]] */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/bench.h"
#include "calcroute.h"

static const struct {
    const char *name, *fmt;
} progs[] = {
    { "for loop (s += i)", "s = 0\nfor i in range(%ld):\n    s += i\n" },
    { "generator sum (i * 0.5)", "s = sum(i * 0.5 for i in range(%ld))\n" },
};

static double cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* The q-quantile of n sorted values, by the nearest rank. */
static double rank(const double *v, int n, double q)
{
    int i = (int)(q * n + 0.999999) - 1;
    return v[i < 0 ? 0 : i >= n ? n - 1 : i];
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_loop OUT.jsonl [N [REPEAT]]\n");
        return 2;
    }
    long n = argc > 2 ? atol(argv[2]) : 200000;
    int repeat = argc > 3 ? atoi(argv[3]) : 21;
    if (n < 1) n = 1;
    if (repeat < 1) repeat = 1;
    FILE *out = fopen(argv[1], "w");
    if (!out) {
        perror(argv[1]);
        return 2;
    }
    cr_engine *eng = bench_engine("tier", "none");
    double *t = malloc((size_t)repeat * sizeof *t);
    if (!eng || !t) return 2;
    printf("N = %ld iterations, %d runs each\n", n, repeat);
    printf("%-28s %14s %14s\n", "calcroute in-process", "median ns/it", "p99 ns/it");
    for (size_t p = 0; p < sizeof progs / sizeof progs[0]; p++) {
        char code[256];
        snprintf(code, sizeof code, progs[p].fmt, n);
        cr_request *req = cr_request_new();
        cr_request_set_code(req, code, strlen(code));
        cr_request_set_lang(req, CR_LANG_PYTHON);
        int ok = 1;
        for (int r = 0; r < repeat && ok; r++) {
            cr_result *res = NULL;
            double t0 = cpu_ns();
            ok = cr_run(eng, req, &res, NULL) == CR_OK && cr_result_status(res) == CR_OK &&
                 cr_result_route(res) == CR_ROUTE_INPROCESS;
            t[r] = (cpu_ns() - t0) / (double)n;
            cr_result_free(res);
        }
        cr_request_free(req);
        if (!ok) {
            printf("%-28s did not run in-process\n", progs[p].name);
            continue;
        }
        qsort(t, (size_t)repeat, sizeof *t, cmp_d);
        double med = rank(t, repeat, 0.5), p99 = rank(t, repeat, 0.99);
        printf("%-28s %14.1f %14.1f\n", progs[p].name, med, p99);
        json_t *o = json_pack("{s:s, s:s, s:i, s:f, s:f}", "name", progs[p].name, "program",
                              code, "n", (json_int_t)n, "median_ns", med, "p99_ns", p99);
        char *s = json_dumps(o, JSON_COMPACT);
        fprintf(out, "%s\n", s);
        free(s);
        json_decref(o);
    }
    fclose(out);
    free(t);
    cr_engine_close(eng);
    return 0;
}
