/* bench/bench_eval.c: per-program latency of the in-process path over the Python corpus.
 *
 * For every corpus program that routes in-process, each timed afresh (no cache of parses or
 * results): (a) tree-sitter's parse alone, the floor; (b) calcroute's whole cr_run (parse +
 * lower + route + evaluate). It writes the programs it timed to a JSON-lines file so that
 * bench/bench_eval_peer.py times CPython's compile()+exec() and a safe Decimal evaluator on
 * exactly the same programs in the same run (bench/run.sh prints them side by side).
 *
 * usage: bench_eval CORPUS_DIR PROGRAMS_OUT.jsonl [REPEAT] */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <tree_sitter/api.h>

#include "calcroute.h"

const TSLanguage *tree_sitter_python(void);

static const char *const files[] = {
    "pot_tatqa.jsonl", "financemath_validation_llm.jsonl", "financemath_test_llm.jsonl",
    "financemath_expert.jsonl", "financereasoning.jsonl", "pot_convfinqa_dev.jsonl",
    "tatqa_derivations.jsonl", NULL,
};

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_d);
    return n ? (n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2) : 0;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: bench_eval CORPUS_DIR PROGRAMS_OUT.jsonl [REPEAT]\n");
        return 2;
    }
    int repeat = argc > 3 ? atoi(argv[3]) : 5;
    if (repeat < 1) repeat = 1;
    FILE *progs = fopen(argv[2], "w");
    if (!progs) {
        perror(argv[2]);
        return 2;
    }
    cr_config cfg;
    cr_config_default(&cfg);
    cfg.tier = CR_TIER_NONE;
    cr_engine *eng = cr_engine_open(&cfg, NULL);
    TSParser *ts = ts_parser_new();
    ts_parser_set_language(ts, tree_sitter_python());
    size_t cap = 1 << 15, n = 0;
    double *t_parse = malloc(cap * sizeof *t_parse), *t_full = malloc(cap * sizeof *t_full);
    double sum_parse = 0, sum_full = 0;
    for (int f = 0; files[f]; f++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/python/%s", argv[1], files[f]);
        FILE *in = fopen(path, "r");
        if (!in) continue;
        char *line = NULL;
        size_t lcap = 0;
        while (getline(&line, &lcap, in) > 0) {
            json_t *rec = json_loads(line, 0, NULL);
            json_t *p = rec ? json_object_get(rec, "program") : NULL;
            if (!json_is_string(p) || json_object_get(rec, "context_json") ||
                json_object_get(rec, "nondeterminism_risk")) {
                json_decref(rec);
                continue;
            }
            const char *code = json_string_value(p);
            size_t len = strlen(code);
            cr_request *req = cr_request_new();
            cr_request_set_code(req, code, len);
            cr_request_set_lang(req, CR_LANG_PYTHON);
            cr_result *res = NULL;
            if (cr_run(eng, req, &res, NULL) != CR_OK ||
                cr_result_route(res) != CR_ROUTE_INPROCESS ||
                cr_result_status(res) != CR_OK || n == cap) {
                cr_result_free(res);
                cr_request_free(req);
                json_decref(rec);
                continue;
            }
            cr_result_free(res);
            double bp = 1e300, bf = 1e300;
            for (int r = 0; r < repeat; r++) {
                double t0 = now_ns();
                TSTree *tree = ts_parser_parse_string(ts, NULL, code, (uint32_t)len);
                double t1 = now_ns();
                ts_tree_delete(tree);
                if (t1 - t0 < bp) bp = t1 - t0;
                t0 = now_ns();
                cr_run(eng, req, &res, NULL);
                t1 = now_ns();
                cr_result_free(res);
                if (t1 - t0 < bf) bf = t1 - t0;
            }
            t_parse[n] = bp / 1e3;
            t_full[n] = bf / 1e3;
            sum_parse += t_parse[n];
            sum_full += t_full[n];
            n++;
            json_t *o = json_pack("{s:s}", "program", code);
            char *s = json_dumps(o, JSON_COMPACT);
            fprintf(progs, "%s\n", s);
            free(s);
            json_decref(o);
            cr_request_free(req);
            json_decref(rec);
        }
        free(line);
        fclose(in);
    }
    fclose(progs);
    double mp = median(t_parse, n), mf = median(t_full, n);
    printf("programs timed (in-process, ok): %zu, best of %d runs each\n", n, repeat);
    printf("%-44s %10s %10s\n", "", "median us", "mean us");
    printf("%-44s %10.2f %10.2f\n", "tree-sitter parse alone (floor)", mp, n ? sum_parse / n : 0);
    printf("%-44s %10.2f %10.2f\n", "calcroute cr_run (parse+lower+route+eval)", mf,
           n ? sum_full / n : 0);
    printf("%-44s %9.0f%% %9.0f%%\n", "  added on top of the parse", mp ? 100 * (mf - mp) / mp : 0,
           sum_parse ? 100 * (sum_full - sum_parse) / sum_parse : 0);
    free(t_parse);
    free(t_full);
    ts_parser_delete(ts);
    cr_engine_close(eng);
    return 0;
}
