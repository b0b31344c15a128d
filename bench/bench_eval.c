/* bench/bench_eval.c: per-program latency of the in-process path over the Python corpus.
 *
 * For every corpus program that routes in-process, each timed afresh (no cache of parses or
 * results), side by side in one run: (a) tree-sitter's parse alone, the floor of the
 * tree-sitter path; (b) the parser's fast path alone (parser/fast.c), on the programs it
 * accepts; (c) the whole tree-sitter front end (parse + lower + whitelist); (d) calcroute's
 * whole cr_run (parse + lower + route + evaluate), which takes the fast path when it can.
 * It writes the programs it timed, with their cr_run time, to a JSON-lines file so that
 * bench/bench_eval_peer.py times CPython's compile()+exec() and a safe Decimal evaluator on
 * exactly the same programs in the same run and prints the ratio (bench/run.sh prints them
 * side by side).
 *
 * usage: bench_eval CORPUS_DIR PROGRAMS_OUT.jsonl [REPEAT [ONLY]]
 * ONLY (for callgrind: each selected program once, no timing) is one of none, ts, fast,
 * front, run: instructions per program = (I(ONLY) - I(none)) / programs. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <tree_sitter/api.h>

#include "bench/bench.h"
#include "calcroute.h"
#include "parser/parser_int.h"

static const char *const files[] = {
    "pot_tatqa.jsonl", "financemath_validation_llm.jsonl", "financemath_test_llm.jsonl",
    "financemath_expert.jsonl", "financereasoning.jsonl", "pot_convfinqa_dev.jsonl",
    "tatqa_derivations.jsonl", NULL,
};

static double median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_d);
    return n ? (n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2) : 0;
}

typedef struct {
    double *v;
    size_t n;
    double sum;
} series;

static void add(series *s, double us)
{
    s->v[s->n++] = us;
    s->sum += us;
}

static void row(const char *what, series *s)
{
    double mean = s->n ? s->sum / (double)s->n : 0;
    printf("%-46s %10.2f %10.2f %8zu\n", what, median(s->v, s->n), mean, s->n);
}

enum { ONLY_TIME, ONLY_NONE, ONLY_TS, ONLY_FAST, ONLY_FRONT, ONLY_RUN };

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: bench_eval CORPUS_DIR PROGRAMS_OUT.jsonl [REPEAT [ONLY]]\n");
        return 2;
    }
    int repeat = argc > 3 ? atoi(argv[3]) : 5;
    if (repeat < 1) repeat = 1;
    int only = ONLY_TIME;
    if (argc > 4) {
        static const char *const modes[] = { "", "none", "ts", "fast", "front", "run" };
        for (int k = 1; k < 6; k++)
            if (strcmp(argv[4], modes[k]) == 0) only = k;
        if (only == ONLY_TIME) {
            fprintf(stderr, "bench_eval: ONLY is none, ts, fast, front or run\n");
            return 2;
        }
    }
    FILE *progs = fopen(argv[2], "w");
    if (!progs) {
        perror(argv[2]);
        return 2;
    }
    cr_engine *eng = bench_engine("tier", "none");
    cr_policy pol;
    cr_policy_default(&pol);
    TSParser *ts = ts_parser_new();
    ts_parser_set_language(ts, tree_sitter_python());
    parser_scratch sc = { 0 };
    size_t cap = 1 << 15, n = 0, fast_ok = 0;
    series t_parse = { malloc(cap * sizeof(double)), 0, 0 }, t_fast = { malloc(cap * sizeof(double)), 0, 0 },
           t_front = { malloc(cap * sizeof(double)), 0, 0 }, t_full = { malloc(cap * sizeof(double)), 0, 0 },
           t_full_fast = { malloc(cap * sizeof(double)), 0, 0 };
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
            ir_module *m = NULL;
            if (cr_run(eng, req, &res, NULL) != CR_OK ||
                cr_result_route(res) != CR_ROUTE_INPROCESS ||
                cr_result_status(res) != CR_OK || n == cap) {
                cr_result_free(res);
                cr_request_free(req);
                json_decref(rec);
                continue;
            }
            cr_result_free(res);
            int accepted = parser_fast(code, len, &pol.limits, &sc, &m, NULL) == CR_OK;
            ir_module_free(m);
            fast_ok += accepted;
            if (only != ONLY_TIME) {
                /* One pass of the selected step, for callgrind. */
                if (only == ONLY_TS) ts_tree_delete(ts_parser_parse_string(ts, NULL, code, (uint32_t)len));
                else if (only == ONLY_FAST && parser_fast(code, len, &pol.limits, &sc, &m, NULL) == CR_OK)
                    ir_module_free(m);
                else if (only == ONLY_FRONT && parser_parse_python_ts(code, len, &pol.limits, &m, NULL) == CR_OK)
                    ir_module_free(m);
                else if (only == ONLY_RUN && cr_run(eng, req, &res, NULL) == CR_OK)
                    cr_result_free(res);
                n++;
                cr_request_free(req);
                json_decref(rec);
                continue;
            }
            double bp = 1e300, bq = 1e300, bl = 1e300, bf = 1e300;
            for (int r = 0; r < repeat; r++) {
                double t0 = now_ns();
                TSTree *tree = ts_parser_parse_string(ts, NULL, code, (uint32_t)len);
                double t1 = now_ns();
                ts_tree_delete(tree);
                if (t1 - t0 < bp) bp = t1 - t0;
                if (accepted) {
                    t0 = now_ns();
                    parser_fast(code, len, &pol.limits, &sc, &m, NULL);
                    t1 = now_ns();
                    ir_module_free(m);
                    if (t1 - t0 < bq) bq = t1 - t0;
                }
                t0 = now_ns();
                parser_parse_python_ts(code, len, &pol.limits, &m, NULL);
                t1 = now_ns();
                ir_module_free(m);
                if (t1 - t0 < bl) bl = t1 - t0;
                t0 = now_ns();
                cr_run(eng, req, &res, NULL);
                t1 = now_ns();
                cr_result_free(res);
                if (t1 - t0 < bf) bf = t1 - t0;
            }
            add(&t_parse, bp / 1e3);
            add(&t_front, bl / 1e3);
            add(&t_full, bf / 1e3);
            if (accepted) {
                add(&t_fast, bq / 1e3);
                add(&t_full_fast, bf / 1e3);
            }
            n++;
            json_t *o = json_pack("{s:s, s:f}", "program", code, "cr_run_us", bf / 1e3);
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
    printf("programs (in-process, ok): %zu; the fast path parses %zu (%.1f%%)\n", n, fast_ok,
           n ? 100.0 * (double)fast_ok / (double)n : 0);
    if (only == ONLY_TIME) {
        printf("best of %d runs each\n", repeat);
        printf("%-46s %10s %10s %8s\n", "", "median us", "mean us", "programs");
        row("tree-sitter parse alone", &t_parse);
        row("fast path parse alone (programs it parses)", &t_fast);
        row("tree-sitter front end (parse+lower+whitelist)", &t_front);
        row("calcroute cr_run (front end+route+eval)", &t_full);
        row("  cr_run on the programs the fast path parses", &t_full_fast);
    }
    free(t_parse.v);
    free(t_fast.v);
    free(t_front.v);
    free(t_full.v);
    free(t_full_fast.v);
    parser_scratch_free(&sc);
    ts_parser_delete(ts);
    cr_engine_close(eng);
    return 0;
}
