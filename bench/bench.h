/* bench/bench.h: what the benchmark programs share. */
#ifndef CR_BENCH_H
#define CR_BENCH_H

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "calcroute.h"

/* An engine with one option set (key "tier", value "none", say); NULL on failure. */
static inline cr_engine *bench_engine(const char *key, const char *value)
{
    cr_config *cfg = cr_config_new();
    cr_engine *e = cfg && cr_config_set(cfg, key, value, NULL) == CR_OK
                   ? cr_engine_open(cfg, NULL) : NULL;
    cr_config_free(cfg);
    return e;
}

static inline double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static inline int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* `calc-route ARGS... serve` started (args: NULL-ended, argv[0] the program, "serve" last):
 * its pid with *port the one its first line says it serves on, or -1. */
static inline pid_t bench_serve_start(const char *const *args, int *port)
{
    int out[2];
    if (pipe(out) < 0) return -1;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(out[1], 1);
        close(out[0]);
        close(out[1]);
        execv(args[0], (char *const *)args);
        _exit(127);
    }
    close(out[1]);
    char line[256];
    FILE *f = fdopen(out[0], "r");
    const char *at = f && fgets(line, sizeof line, f) ? strrchr(line, ':') : NULL;
    if (f) fclose(f);
    if (!at || (*port = atoi(at + 1)) <= 0) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        return -1;
    }
    return pid;
}

#endif
