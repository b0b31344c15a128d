/* bench/bench_dsl.c: FinQA programs per second, in-process (table JSON, parse, lower,
 * evaluate: all afresh for every program), beside bench/bench_dsl.py evaluating the same
 * programs with Python's decimal module, measured in the same run.
 *
 * Usage: build/bench/bench_dsl [CORPUS_DIR [ROUNDS]]   (from the repo root; CORPUS_DIR defaults
 * to $CR_CORPUS, else ../shared/corpus; ROUNDS to 11). Each round times one pass of ours,
 * then runs the peer for one pass (its start-up and JSON loading are outside its timing).
 * Prints figures; never fails on time. */
#include <time.h>

#include "tests/finqa_corpus.h"

#define PYTHON "/usr/bin/python3"
#define PEER "bench/bench_dsl.py"
#define MAX_ROUNDS 200

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* One pass over every program; returns how many did not produce a value. */
static size_t pass(const finqa_set *set, const cr_policy *pol)
{
    size_t failed = 0;
    for (size_t i = 0; i < set->n; i++) {
        eval_result res;
        cr_error err = {0};
        cr_code rc = finqa_run(&set->v[i], pol, &res, &err);
        if (rc != CR_OK || res.status != CR_OK || !res.has_value) failed++;
        eval_result_free(&res);
    }
    return failed;
}

/* Runs the Python peer for one round; returns its seconds per round (0 when it failed). */
static double run_peer(const char *dir, int quiet)
{
    char cmd[4200], line[512];
    snprintf(cmd, sizeof cmd, PYTHON " " PEER " 1 '%s'/finqa/*.jsonl", dir);
    FILE *p = popen(cmd, "r");
    if (!p) return 0;
    double secs = 0;
    while (fgets(line, sizeof line, p)) {
        const char *at = strstr(line, "median ");
        if (at) secs = strtod(at + 7, NULL);
        else if (!quiet) fputs(line, stdout);
    }
    if (pclose(p) != 0) return 0;
    return secs;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof v[0], cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : finqa_corpus_dir();
    int rounds = argc > 2 ? atoi(argv[2]) : 11;
    if (rounds < 1 || rounds > MAX_ROUNDS) {
        fprintf(stderr, "bench_dsl: ROUNDS must be 1 to %d\n", MAX_ROUNDS);
        return 2;
    }
    finqa_set set;
    char why[512];
    int lr = finqa_load(dir, &set, why, sizeof why);
    if (lr != 0) {
        printf("skipped: %s\n", why);
        return lr < 0;
    }
    cr_policy pol;
    cr_policy_default(&pol);
    size_t failed = pass(&set, &pol);   /* warm-up: caches, allocator */
    /* Rounds alternate between the two sides, so a change in the machine's load over the
     * run weighs on both alike. */
    static double ours[MAX_ROUNDS], peer[MAX_ROUNDS];
    int npeer = 0, peer_ok = !strchr(dir, '\'');
    if (!peer_ok) fprintf(stderr, "bench_dsl: corpus path with a quote; Python peer skipped\n");
    for (int r = 0; r < rounds; r++) {
        double t0 = now_s();
        failed = pass(&set, &pol);
        ours[r] = now_s() - t0;
        if (peer_ok) {
            double s = run_peer(dir, r > 0);
            if (s > 0) peer[npeer++] = s;
        }
    }
    double med = median(ours, rounds), rate = (double)set.n / med;
    printf("calcroute in-process: %zu programs (%zu failed), median %.6f s per round, "
           "%.0f programs/s\n", set.n, failed, med, rate);
    if (npeer == rounds) {
        double pmed = median(peer, npeer), prate = (double)set.n / pmed;
        printf("python-decimal:       %zu programs, median %.6f s per round, %.0f programs/s\n",
               set.n, pmed, prate);
        printf("ratio: calcroute / python-decimal = %.2fx (%d rounds each, interleaved)\n",
               rate / prate, rounds);
    } else {
        printf("ratio: n/a (the Python peer did not run)\n");
    }
    finqa_free(&set);
    return 0;
}
