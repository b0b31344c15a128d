/* bench/bench.h: what the benchmark programs share. */
#ifndef CR_BENCH_H
#define CR_BENCH_H

#include <time.h>

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

#endif
