/* tests/finqa_corpus.h: loading the FinQA corpus (the finqa/ JSON Lines files of the corpus)
 * and running one of its programs through the DSL front end and the evaluator. Shared by
 * tests/test_finqa_corpus.c and bench/bench_dsl.c; header-only, as each is one program. */
#ifndef CR_FINQA_CORPUS_H
#define CR_FINQA_CORPUS_H

#include <glob.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dsl/dsl.h"
#include "evaluator/evaluator.h"

/* A record's line is far below this; a longer one is a broken file, not a program. */
#define FINQA_MAX_LINE (1u << 20)
#define FINQA_MAX_ITEMS 100000

typedef struct {
    char *id;
    char *program;      /* NUL-terminated; may hold a NUL before program_len */
    size_t program_len;
    char *table_json;   /* NULL when the record has no table */
    json_t *gold;       /* exe_ans_recomputed: a real, or the string "yes"/"no" */
    char *file;         /* which corpus file, for messages */
} finqa_item;

typedef struct {
    finqa_item *v;
    size_t n, cap;
    size_t nfiles;
} finqa_set;

/* The corpus directory: $CR_CORPUS, else ../shared/corpus relative to the repo root. */
static const char *finqa_corpus_dir(void)
{
    const char *d = getenv("CR_CORPUS");
    return d && *d ? d : "../shared/corpus";
}

static void finqa_free(finqa_set *s)
{
    for (size_t i = 0; i < s->n; i++) {
        free(s->v[i].id);
        free(s->v[i].program);
        free(s->v[i].table_json);
        free(s->v[i].file);
        json_decref(s->v[i].gold);
    }
    free(s->v);
    memset(s, 0, sizeof *s);
}

static int finqa_add(finqa_set *s, json_t *rec, const char *file, int lenient, char *why,
                     size_t whylen)
{
    json_t *prog = json_object_get(rec, "program"), *id = json_object_get(rec, "id");
    json_t *table = json_object_get(rec, "table");
    if (!json_is_string(prog) || !json_is_string(id)) {
        if (lenient) return 0;
        snprintf(why, whylen, "%s: a record without id or program", file);
        return -1;
    }
    if (s->n == FINQA_MAX_ITEMS) {
        snprintf(why, whylen, "more than %d records", FINQA_MAX_ITEMS);
        return -1;
    }
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 1024;
        finqa_item *v = realloc(s->v, cap * sizeof *v);
        if (!v) return snprintf(why, whylen, "out of memory"), -1;
        s->v = v;
        s->cap = cap;
    }
    finqa_item *it = &s->v[s->n];
    memset(it, 0, sizeof *it);
    it->id = strdup(json_string_value(id));
    it->program_len = json_string_length(prog);
    if ((it->program = malloc(it->program_len + 1)))
        memcpy(it->program, json_string_value(prog), it->program_len + 1);
    it->file = strdup(file);
    it->table_json = table ? json_dumps(table, JSON_COMPACT) : NULL;
    it->gold = json_incref(json_object_get(rec, "exe_ans_recomputed"));
    s->n++;
    if (!it->id || !it->program || !it->file || (table && !it->table_json))
        return snprintf(why, whylen, "out of memory"), -1;
    return 0;
}

/* Loads every JSON Lines file of `dir`/`sub` (records with "id" and "program"; "table" and
 * "exe_ans_recomputed" when present; `lenient`: records without a program, such as question
 * files, are passed over instead of being an error). 0 on success; 1 when there is no such corpus (why says
 * so: the caller skips); -1 on a broken file (why says where). */
static int corpus_load(const char *dir, const char *sub, int lenient, finqa_set *s, char *why,
                       size_t whylen)
{
    char pat[4096];
    glob_t g;
    memset(s, 0, sizeof *s);
    snprintf(pat, sizeof pat, "%s/%s/*.jsonl", dir, sub);
    if (glob(pat, 0, NULL, &g) != 0) {
        snprintf(why, whylen, "no corpus at %s/%s (set CR_CORPUS)", dir, sub);
        return 1;
    }
    int rc = 0;
    char *line = NULL;
    size_t cap = 0;
    for (size_t f = 0; f < g.gl_pathc && rc == 0; f++) {
        FILE *fp = fopen(g.gl_pathv[f], "r");
        if (!fp) {
            snprintf(why, whylen, "cannot open %s", g.gl_pathv[f]);
            rc = -1;
            break;
        }
        s->nfiles++;
        ssize_t len;
        int lineno = 0;
        while (rc == 0 && (len = getline(&line, &cap, fp)) > 0) {
            lineno++;
            if ((size_t)len > FINQA_MAX_LINE) {
                snprintf(why, whylen, "%s:%d: line too long", g.gl_pathv[f], lineno);
                rc = -1;
                break;
            }
            json_error_t je;
            /* JSON_ALLOW_NUL: some model outputs hold a NUL byte. */
            json_t *rec = json_loadb(line, (size_t)len, JSON_ALLOW_NUL, &je);
            if (!rec) {
                snprintf(why, whylen, "%s:%d: %s", g.gl_pathv[f], lineno, je.text);
                rc = -1;
                break;
            }
            rc = finqa_add(s, rec, g.gl_pathv[f], lenient, why, whylen);
            json_decref(rec);
        }
        fclose(fp);
    }
    free(line);
    globfree(&g);
    if (rc != 0) finqa_free(s);
    return rc;
}

static int finqa_load(const char *dir, finqa_set *s, char *why, size_t whylen)
{
    return corpus_load(dir, "finqa", 0, s, why, whylen);
}

/* Table, program, IR, evaluation: all afresh. CR_OK when eval_run ran (res->status says how
 * the program ended); else the front end's code with err filled (res is then empty). */
static cr_code finqa_run(const finqa_item *it, const cr_policy *pol, eval_result *res,
                         cr_error *err)
{
    dsl_table *t = NULL;
    ir_module *m = NULL;
    cr_code rc = CR_OK;
    memset(res, 0, sizeof *res);
    if (it->table_json)
        rc = dsl_table_from_json(it->table_json, strlen(it->table_json), &pol->limits, &t, err);
    if (rc == CR_OK)
        rc = dsl_compile(it->program, it->program_len, t, &pol->limits, &m, err);
    if (rc == CR_OK) rc = eval_run(m, NULL, 0, pol, res, err);
    ir_module_free(m);
    dsl_table_free(t);
    return rc;
}

#endif
