/* tests/tools/parser_corpus.c: parses every `program` of the Python corpora and prints how
 * many parse, how often tree-sitter and CPython (the record's ast.parse_ok) disagree, the
 * share of parseable programs with no reason, and the most common reason codes.
 * Usage: parser_corpus [DIR] (default $CORPUS_DIR or ../shared/corpus/python). */
#include <dirent.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "parser/parser.h"

typedef struct { char code[64]; long n, programs; } tally;

static tally tallies[4096];
static size_t ntallies;

static void count(const char *code, int first_in_program)
{
    for (size_t i = 0; i < ntallies; i++)
        if (strcmp(tallies[i].code, code) == 0) {
            tallies[i].n++;
            tallies[i].programs += first_in_program;
            return;
        }
    if (ntallies == sizeof tallies / sizeof tallies[0]) return;
    snprintf(tallies[ntallies].code, sizeof tallies[ntallies].code, "%s", code);
    tallies[ntallies].n = 1;
    tallies[ntallies++].programs = first_in_program;
}

static int by_programs(const void *a, const void *b)
{
    const tally *x = a, *y = b;
    return (y->programs > x->programs) - (y->programs < x->programs);
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : getenv("CORPUS_DIR");
    if (!dir) dir = "../shared/corpus/python";
    DIR *d = opendir(dir);
    if (!d) { perror(dir); return 2; }
    cr_policy pol;
    cr_policy_default(&pol);
    long total = 0, ok = 0, syn = 0, lim = 0, clean = 0, agree = 0, ts_only = 0, py_only = 0,
         single_reason = 0;
    double secs = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (l < 6 || strcmp(e->d_name + l - 6, ".jsonl") != 0) continue;
        if (strcmp(e->d_name, "financemath_questions.jsonl") == 0) continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        FILE *f = fopen(path, "r");
        if (!f) { perror(path); continue; }
        char *line = NULL;
        size_t cap = 0;
        long f_ok = ok, f_clean = clean;
        while (getline(&line, &cap, f) > 0) {
            json_error_t je;
            json_t *rec = json_loads(line, 0, &je);
            if (!rec) continue;
            json_t *prog = json_object_get(rec, "program");
            int py_ok = json_is_true(json_object_get(json_object_get(rec, "ast"), "parse_ok"));
            const char *id = json_string_value(json_object_get(rec, "id"));
            if (!json_is_string(prog)) { json_decref(rec); continue; }
            ir_module *m = NULL;
            cr_error err = { 0 };
            struct timespec t0, t1;
            clock_gettime(CLOCK_MONOTONIC, &t0);
            cr_code rc = parser_parse_python(json_string_value(prog), json_string_length(prog),
                                             &pol.limits, &m, &err);
            clock_gettime(CLOCK_MONOTONIC, &t1);
            secs += (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
            total++;
            int ts_ok = rc == CR_OK;
            if (rc == CR_OK) ok++;
            else if (rc == CR_ESYNTAX) syn++;
            else lim++;
            if (ts_ok == py_ok) agree++;
            else {
                if (ts_ok) ts_only++; else py_only++;
                printf("DISAGREE %s tree-sitter=%s cpython=%s %d:%d %s\n", id ? id : "?",
                       ts_ok ? "ok" : "error", py_ok ? "ok" : "error", err.line, err.col,
                       ts_ok ? "" : err.message);
            }
            if (m) {
                if (m->nreasons == 0) clean++;
                for (size_t i = 0; i < m->nreasons; i++) {
                    int first = 1;
                    for (size_t j = 0; j < i; j++)
                        if (strcmp(m->reasons[j].code, m->reasons[i].code) == 0) first = 0;
                    count(m->reasons[i].code, first);
                }
                int distinct = 0;
                for (size_t i = 0; i < m->nreasons; i++) {
                    int first = 1;
                    for (size_t j = 0; j < i; j++)
                        if (strcmp(m->reasons[j].code, m->reasons[i].code) == 0) first = 0;
                    distinct += first;
                }
                if (distinct == 1) single_reason++;
            }
            ir_module_free(m);
            json_decref(rec);
        }
        free(line);
        fclose(f);
        printf("FILE %-36s parsed %5ld, no reasons %5ld (%.1f%%)\n", e->d_name, ok - f_ok,
               clean - f_clean, ok > f_ok ? 100.0 * (double)(clean - f_clean) / (double)(ok - f_ok) : 0.0);
    }
    closedir(d);
    qsort(tallies, ntallies, sizeof tallies[0], by_programs);
    printf("programs %ld: parse ok %ld, syntax error %ld, other %ld\n", total, ok, syn, lim);
    printf("agree with CPython %ld; tree-sitter ok but CPython not %ld; CPython ok but not tree-sitter %ld\n",
           agree, ts_only, py_only);
    printf("no reasons: %ld of %ld parsed (%.1f%%); exactly one distinct reason code: %ld\n", clean,
           ok, ok ? 100.0 * (double)clean / (double)ok : 0.0, single_reason);
    printf("parse+lower+whitelist: %.1f us per program on average\n", total ? secs * 1e6 / (double)total : 0);
    printf("%-40s %8s %8s\n", "reason code", "programs", "count");
    for (size_t i = 0; i < ntallies && i < 30; i++)
        printf("%-40s %8ld %8ld\n", tallies[i].code, tallies[i].programs, tallies[i].n);
    return 0;
}
