/* tests/test_finqa_corpus.c: every FinQA program of the corpus (the finqa/ JSON Lines files
 * under $CR_CORPUS, default ../shared/corpus; required under CI) through the DSL front end and
 * the exact evaluator, compared with the gold `exe_ans_recomputed`.
 *
 * The rule: FinQA compares round(x, 5) of its binary-float result. We round our exact value
 * to 5 decimals half-to-even (what Python's round() does) and compare it with the gold value
 * rounded to 5 decimals (the gold JSON number is the double nearest that decimal, so rounding
 * it again recovers the decimal). "yes"/"no" answers compare as strings.
 * The tie allowance: where our exact value lies on a rounding boundary (…5 at the sixth
 * decimal, within 1e-12 relative), FinQA's float may have landed on either side, so a gold one
 * unit away at the fifth decimal still matches; such matches are counted apart.
 *
 * Every mismatch must be classified in tests/data/finqa_mismatches.tsv (id, class, evidence),
 * every entry there must still be a mismatch, and at least 99.5% must match.
 *
 * --lang auto on real code: every FinQA program must look like DSL, and no program of the
 * Python corpus (python/ JSON Lines files) may. */
#include <gmp.h>

#include "evaluator/num/num.h"
#include "tests/finqa_corpus.h"
#include "tests/testlib.h"

#define MISMATCH_FILE "tests/data/finqa_mismatches.tsv"
#define MAX_LISTED 1000

typedef struct {
    char id[64];
    char cls[64];
    int seen;
} listed;

static listed known[MAX_LISTED];
static size_t nknown;

/* id <TAB> class <TAB> ours <TAB> gold <TAB> evidence; '#' starts a comment line. */
static void load_known(void)
{
    FILE *f = fopen(MISMATCH_FILE, "r");
    if (!f) {
        fprintf(stderr, "cannot open %s\n", MISMATCH_FILE);
        t_fail++;
        return;
    }
    char line[2048];
    while (fgets(line, sizeof line, f) && nknown < MAX_LISTED) {
        if (line[0] == '#' || line[0] == '\n') continue;
        char *tab = strchr(line, '\t');
        if (!tab) continue;
        listed *k = &known[nknown++];
        snprintf(k->id, sizeof k->id, "%.*s", (int)(tab - line), line);
        char *tab2 = strchr(tab + 1, '\t');
        snprintf(k->cls, sizeof k->cls, "%.*s", tab2 ? (int)(tab2 - tab - 1) : 0, tab + 1);
    }
    fclose(f);
}

static listed *find_known(const char *id)
{
    for (size_t i = 0; i < nknown; i++)
        if (strcmp(known[i].id, id) == 0) return &known[i];
    return NULL;
}

/* 1: equal after rounding; 2: equal only within the tie allowance; 0: differ. */
static int numeric_match(const char *fraction, double gold, const num_ctx *ctx)
{
    mpq_t ours, g, ro, d, lim, half;
    mpq_inits(ours, g, ro, d, lim, half, NULL);
    int r = 0;
    if (mpq_set_str(ours, fraction, 10) != 0) goto out;
    mpq_canonicalize(ours);
    mpq_set_d(g, gold);
    num_round(g, g, 5, ctx);
    num_round(ro, ours, 5, ctx);
    if (mpq_equal(ro, g)) {
        r = 1;
        goto out;
    }
    /* | |ours - gold| - 0.000005 | <= 1e-12 * max(1, |ours|) */
    mpq_sub(d, ours, g);
    mpq_abs(d, d);
    mpq_set_ui(half, 5, 1000000);
    mpq_sub(d, d, half);
    mpq_abs(d, d);
    mpq_abs(lim, ours);
    if (mpq_cmp_ui(lim, 1, 1) < 0) mpq_set_ui(lim, 1, 1);
    mpq_set_ui(half, 1, 1000000000000UL);
    mpq_mul(lim, lim, half);
    r = mpq_cmp(d, lim) <= 0 ? 2 : 0;
out:
    mpq_clears(ours, g, ro, d, lim, half, NULL);
    return r;
}

/* The gold as JSON would have it, shortest text that reads back the same double. */
static void gold_text(const json_t *g, char *buf, size_t cap)
{
    if (json_is_string(g)) {
        snprintf(buf, cap, "'%s'", json_string_value(g));
        return;
    }
    double d = json_number_value(g);
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, cap, "%.*g", prec, d);
        if (strtod(buf, NULL) == d) return;
    }
}

/* The comparison itself, on values whose answer is known, so a corpus at 100% proves
 * something. */
static void test_compare_rule(const num_ctx *ctx)
{
    CHECK_INT(numeric_match("1/3", 0.33333, ctx), 1);
    CHECK_INT(numeric_match("1/3", 0.33334, ctx), 0);
    CHECK_INT(numeric_match("-2/3", -0.66667, ctx), 1);
    CHECK_INT(numeric_match("688", 688.0, ctx), 1);
    /* 0.123445 rounds half-even to 0.12344; a float just above the tie gave 0.12345. */
    CHECK_INT(numeric_match("24689/200000", 0.12344, ctx), 1);
    CHECK_INT(numeric_match("24689/200000", 0.12345, ctx), 2);
    CHECK_INT(numeric_match("24689/200000", 0.12343, ctx), 0);
    /* Not a tie: 0.1234449 is well inside the band of 0.12344. */
    CHECK_INT(numeric_match("1234449/10000000", 0.12345, ctx), 0);
    /* Large values: the gold double is not the 5-decimal number, rounding recovers it. */
    CHECK_INT(numeric_match("2255657953335/100", 22556579533.35, ctx), 1);
}

/* dsl_looks_like() over both corpora; every miss is listed. */
static void test_auto_detection(const char *dir, const finqa_set *finqa)
{
    size_t dsl_miss = 0, py_miss = 0;
    for (size_t i = 0; i < finqa->n; i++) {
        const char *p = finqa->v[i].program;
        if (!dsl_looks_like(p, finqa->v[i].program_len)) {
            dsl_miss++;
            printf("AUTO %s: FinQA program not taken for DSL: %s\n", finqa->v[i].id, p);
        }
    }
    finqa_set py;
    char why[512];
    int lr = corpus_load(dir, "python", 1, &py, why, sizeof why);
    if (lr == 1) {
        UNAVAILABLE("%s", why);
        return;
    }
    CHECK(lr == 0);
    if (lr != 0) {
        fprintf(stderr, "%s\n", why);
        return;
    }
    for (size_t i = 0; i < py.n; i++) {
        if (dsl_looks_like(py.v[i].program, py.v[i].program_len)) {
            py_miss++;
            printf("AUTO %s: Python program taken for DSL\n", py.v[i].id);
        }
    }
    printf("--lang auto: %zu of %zu FinQA programs read as DSL, %zu of %zu Python programs as "
           "Python\n", finqa->n - dsl_miss, finqa->n, py.n - py_miss, py.n);
    CHECK_INT(dsl_miss, 0);
    CHECK_INT(py_miss, 0);
    CHECK(py.n > 0);
    finqa_free(&py);
}

int main(void)
{
    const char *dir = finqa_corpus_dir();
    cr_policy pol;
    cr_policy_default(&pol);
    num_ctx ctx;
    num_ctx_from_policy(&ctx, &pol);
    ctx.rounding = CR_ROUND_HALF_EVEN;
    test_compare_rule(&ctx);

    finqa_set set;
    char why[512];
    int lr = finqa_load(dir, &set, why, sizeof why);
    if (lr == 1) {
        UNAVAILABLE("%s", why);
        return TEST_SUMMARY();
    }
    if (lr < 0) {
        fprintf(stderr, "%s\n", why);
        t_fail++;
        return TEST_SUMMARY();
    }
    load_known();

    size_t evaluated = 0, matched = 0, tie = 0, classified = 0;
    /* each program matches or its mismatch is listed, never both: one check for the corpus
     * (tests/testlib.h) */
    SWEEP_BEGIN(sweep);
    for (size_t i = 0; i < set.n; i++) {
        const finqa_item *it = &set.v[i];
        eval_result res;
        cr_error err = {0};
        cr_code rc = finqa_run(it, &pol, &res, &err);
        int ok = rc == CR_OK && res.status == CR_OK && res.has_value;
        int m = 0;
        if (ok) {
            evaluated++;
            if (json_is_string(it->gold))
                m = res.value_str && strcmp(res.value_str, json_string_value(it->gold)) == 0;
            else if (json_is_number(it->gold) && res.value_numeric && res.value_fraction)
                m = numeric_match(res.value_fraction, json_number_value(it->gold), &ctx);
        }
        if (m) matched++;
        if (m == 2) tie++;
        listed *k = find_known(it->id);
        if (k) k->seen = 1;
        if (!m) {
            char gold[64];
            gold_text(it->gold, gold, sizeof gold);
            printf("MISMATCH %s [%s] %s: ours %s (%s), gold %s\n", it->id,
                   k ? k->cls : "unclassified", it->program,
                   ok ? res.value_repr : rc != CR_OK ? err.message : res.error.message,
                   ok && res.value_fraction ? res.value_fraction : "-", gold);
            if (k) classified++;
            else fprintf(stderr, "%s: mismatch not classified in " MISMATCH_FILE "\n", it->id);
        }
        CHECK(m || k);
        if (m && k) fprintf(stderr, "%s: listed in " MISMATCH_FILE " but matches now\n", it->id);
        CHECK(!(m && k));
        eval_result_free(&res);
    }
    SWEEP_END(sweep);
    for (size_t i = 0; i < nknown; i++)
        if (!known[i].seen) {
            fprintf(stderr, "%s: listed in " MISMATCH_FILE " but not in the corpus\n", known[i].id);
            t_fail++;
        }
    double ev = set.n ? 100.0 * (double)evaluated / (double)set.n : 0;
    double ma = set.n ? 100.0 * (double)matched / (double)set.n : 0;
    printf("finqa corpus: %zu programs from %zu files\n", set.n, set.nfiles);
    printf("evaluates: %zu (%.2f%%)\n", evaluated, ev);
    printf("matches gold after round(x, 5), half-even on the exact value: %zu (%.2f%%), "
           "%zu of them only within the float tie allowance\n", matched, ma, tie);
    printf("mismatches: %zu, classified: %zu\n", set.n - matched, classified);
    CHECK(set.n > 0);
    CHECK(matched * 1000 >= set.n * 995);   /* at least 99.5% */
    test_auto_detection(dir, &set);
    finqa_free(&set);
    return TEST_SUMMARY();
}
