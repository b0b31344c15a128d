/* tests/test_dectest.c: the IBM General Decimal Arithmetic test cases (the .decTest files that
 * Debian's libpython3.11-testsuite ships), read as CPython 3.11's Lib/test/test_decimal.py
 * reads them, each run in-process as a Python program: the context the directives set
 * (precision, rounding, maxexponent, minexponent, clamp) with no traps, the operands read
 * exactly with Decimal(v, c), the operation as a program writes it (a + b, a.sqrt(), ...),
 * then its str and the context's flags compared with the case's result and conditions.
 *
 * Skipped, each counted with its reason: the ids CPython's own test skips, its `rescale`, and
 * the operations the subset does not offer. A case that disagrees is a failure unless
 * known_failures names it with why; a known failure that passes is a failure too (the list
 * must shrink as fixes land). The closing lines give the share that agrees. */
#include <dirent.h>
#include <stdlib.h>

#include "evaluator/evaluator.h"
#include "parser/parser.h"
#include "tests/testlib.h"

#define DEFAULT_DIR "/usr/lib/python3.11/test/decimaltestdata"

/* test_decimal.py's skipped_test_ids, the C implementation's included. */
static const char *const cpython_skips[] = {
    "scbx164", "scbx165", "expx901", "expx902", "expx903", "expx905", "lnx901", "lnx902",
    "lnx903", "lnx905", "logx901", "logx902", "logx903", "logx905", "powx1183", "powx1184",
    "powx4001", "powx4002", "powx4003", "powx4005", "powx4008", "powx4010", "powx4012",
    "powx4014", "pwsx803", "pwsx805", "powx4302", "powx4303", "powx4342", "powx4343",
    "pwmx325", "pwmx326", NULL
};

/* Cases that disagree with CPython today, with why. */
static const struct { const char *id, *why; } known_failures[] = {
    { NULL, NULL }
};

/* The operations the subset offers, as a program writes them with operands a, b. */
static const struct { const char *op, *expr; int nargs, logical; } ops[] = {
    { "add", "a + b", 2, 0 }, { "subtract", "a - b", 2, 0 }, { "multiply", "a * b", 2, 0 },
    { "divide", "a / b", 2, 0 }, { "divideint", "a // b", 2, 0 },
    { "remainder", "a % b", 2, 0 }, { "power", "a ** b", 2, 0 }, { "abs", "abs(a)", 1, 0 },
    { "minus", "-a", 1, 0 }, { "plus", "+a", 1, 0 }, { "squareroot", "a.sqrt()", 1, 0 },
    { "exp", "a.exp()", 1, 0 }, { "ln", "a.ln()", 1, 0 }, { "log10", "a.log10()", 1, 0 },
    { "quantize", "a.quantize(b)", 2, 0 }, { "tointegral", "a.to_integral_value()", 1, 0 },
    { "reduce", "a.normalize()", 1, 0 }, { "copyabs", "a.copy_abs()", 1, 0 },
    { "copynegate", "a.copy_negate()", 1, 0 }, { "isnan", "a.is_nan()", 1, 1 },
    { "isinfinite", "a.is_infinite()", 1, 1 }, { "issigned", "a.is_signed()", 1, 1 },
    { "iszero", "a.is_zero()", 1, 1 }, { "compare", "a.compare(b)", 2, 0 },
    { "max", "a.max(b)", 2, 0 }, { "min", "a.min(b)", 2, 0 }, { "maxmag", "a.max_mag(b)", 2, 0 },
    { "minmag", "a.min_mag(b)", 2, 0 }, { "max_mag", "a.max_mag(b)", 2, 0 },
    { "min_mag", "a.min_mag(b)", 2, 0 }, { "copysign", "a.copy_sign(b)", 2, 0 },
    { "samequantum", "a.same_quantum(b)", 2, 1 }, { "scaleb", "a.scaleb(b)", 2, 0 },
    { "fma", "a.fma(b, c)", 3, 0 }, { "tointegralx", "a.to_integral_exact()", 1, 0 },
    { "isfinite", "a.is_finite()", 1, 1 }, { "isnormal", "a.is_normal()", 1, 1 },
    { "issubnormal", "a.is_subnormal()", 1, 1 }, { "isqnan", "a.is_qnan()", 1, 1 },
    { "issnan", "a.is_snan()", 1, 1 }, { "iscanonical", "a.is_canonical()", 1, 1 },
};
#define NOPS (sizeof ops / sizeof ops[0])

static const char *const rounding_names[][2] = {
    { "ceiling", "ROUND_CEILING" }, { "down", "ROUND_DOWN" }, { "floor", "ROUND_FLOOR" },
    { "half_down", "ROUND_HALF_DOWN" }, { "half_even", "ROUND_HALF_EVEN" },
    { "half_up", "ROUND_HALF_UP" }, { "up", "ROUND_UP" }, { "05up", "ROUND_05UP" },
};

/* The conditions as the signals CPython's flags hold (ErrorNames). */
static const char *const cond_names[][2] = {
    { "clamped", "Clamped" }, { "conversion_syntax", "InvalidOperation" },
    { "division_by_zero", "DivisionByZero" }, { "division_impossible", "InvalidOperation" },
    { "division_undefined", "InvalidOperation" }, { "inexact", "Inexact" },
    { "invalid_context", "InvalidOperation" }, { "invalid_operation", "InvalidOperation" },
    { "overflow", "Overflow" }, { "rounded", "Rounded" }, { "subnormal", "Subnormal" },
    { "underflow", "Underflow" },
};
static const char *const signal_order[] = {
    "Clamped", "InvalidOperation", "DivisionByZero", "Inexact", "Overflow", "Rounded",
    "Subnormal", "Underflow",
};
#define NSIG (sizeof signal_order / sizeof signal_order[0])

typedef struct {
    long long prec, emax, emin;
    int clamp;
    const char *rounding;
} context;

static long long n_run, n_agree, n_known, skip_cpython, skip_rescale, skip_ops;
static long long skip_op_count[64];
static char skip_op_name[64][24];
static int n_skip_names;

static int in_list(const char *const *l, const char *s)
{
    for (; *l; l++)
        if (strcmp(*l, s) == 0) return 1;
    return 0;
}

static const char *known_why(const char *id)
{
    for (size_t i = 0; known_failures[i].id; i++)
        if (strcmp(known_failures[i].id, id) == 0) return known_failures[i].why;
    return NULL;
}

static void skip_op(const char *op)
{
    skip_ops++;
    for (int i = 0; i < n_skip_names; i++)
        if (strcmp(skip_op_name[i], op) == 0) { skip_op_count[i]++; return; }
    if (n_skip_names < 64) {
        snprintf(skip_op_name[n_skip_names], sizeof skip_op_name[0], "%s", op);
        skip_op_count[n_skip_names++] = 1;
    }
}

/* Signal names in `s` (conditions or a flags list) as a bit set over signal_order. */
static unsigned sig_bit(const char *name)
{
    for (unsigned i = 0; i < NSIG; i++)
        if (strcmp(signal_order[i], name) == 0) return 1u << i;
    return 1u << 31;   /* a name not known: never agrees */
}

/* FixQuotes: quotes removed, doubled quotes kept as one. */
static void fix_quotes(const char *in, char *out)
{
    size_t o = 0;
    for (size_t i = 0; in[i]; i++) {
        if ((in[i] == '\'' || in[i] == '"') && in[i + 1] == in[i]) { out[o++] = in[i++]; continue; }
        if (in[i] == '\'' || in[i] == '"') continue;
        out[o++] = in[i];
    }
    out[o] = 0;
}

/* A Python string literal of s. */
static void py_str(char *out, size_t cap, const char *s)
{
    size_t o = 0;
    out[o++] = '\'';
    for (size_t i = 0; s[i] && o + 6 < cap; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '\\' || c == '\'') { out[o++] = '\\'; out[o++] = (char)c; }
        else if (c < 32 || c >= 127) o += (size_t)snprintf(out + o, cap - o, "\\x%02x", c);
        else out[o++] = (char)c;
    }
    out[o++] = '\'';
    out[o] = 0;
}

/* Runs one case; 1 agrees, 0 not (with what it gave in got). */
static int run_case(const context *cx, const char *expr, int logical, char vals[][512], int nv,
                    const char *want, unsigned want_sig, char *got, size_t gotcap)
{
    static char src[8192];
    char lit[1100];
    int n = snprintf(src, sizeof src,
                     "from decimal import Decimal, Context, setcontext, %s\n"
                     "ctx = Context(prec=%lld, rounding=%s, Emin=%lld, Emax=%lld, clamp=%d, traps=[])\n"
                     "setcontext(ctx)\n", cx->rounding, cx->prec, cx->rounding, cx->emin, cx->emax,
                     cx->clamp);
    for (int i = 0; i < nv; i++) {
        py_str(lit, sizeof lit, vals[i]);
        n += snprintf(src + n, sizeof src - (size_t)n, "%c = Decimal(%s, ctx)\n", 'a' + i, lit);
    }
    snprintf(src + n, sizeof src - (size_t)n, "r = %s\nprint(%s)\nprint(ctx)\n", expr,
             logical ? "int(r)" : "r");
    cr_policy pol;
    cr_policy_default(&pol);
    ir_module *m = NULL;
    cr_error err = { 0 };
    eval_result res;
    memset(&res, 0, sizeof res);
    if (parser_parse_python(src, strlen(src), &pol.limits, &m, &err) != CR_OK) {
        snprintf(got, gotcap, "parse failed: %s", err.message);
        return 0;
    }
    if (m->nreasons) {
        snprintf(got, gotcap, "not in-process: %s", m->reasons[0].code);
        ir_module_free(m);
        return 0;
    }
    cr_code rc = eval_run(m, NULL, 0, &pol, &res, &err);
    ir_module_free(m);
    if (rc != CR_OK) {
        snprintf(got, gotcap, "eval_run: %s", err.message);
        return 0;
    }
    int ok = 0;
    if (res.status != CR_OK) {
        snprintf(got, gotcap, "raised %s: %s", res.error.type, res.error.message);
    } else {
        const char *out = res.stdout_text, *nl = strchr(out, '\n');
        const char *fl = strstr(out, "flags=[");
        unsigned sig = 0;
        if (fl) {
            fl += 7;
            while (*fl && *fl != ']') {
                char name[32];
                size_t k = 0;
                while (*fl == ' ' || *fl == ',') fl++;
                while (*fl && *fl != ',' && *fl != ']' && k < sizeof name - 1) name[k++] = *fl++;
                name[k] = 0;
                if (k) sig |= sig_bit(name);
            }
        }
        size_t vlen = nl ? (size_t)(nl - out) : strlen(out);
        ok = nl && fl && vlen == strlen(want) && memcmp(out, want, vlen) == 0 && sig == want_sig;
        snprintf(got, gotcap, "%.*s flags %#x (want %#x)", (int)vlen, out, sig, want_sig);
    }
    eval_result_free(&res);
    return ok;
}

static void eval_equation(const context *cx, char *s)
{
    char *arrow = strstr(s, "->");
    if (!arrow) return;
    *arrow = 0;
    char *lhs = s, *rhs = arrow + 2, *save = NULL;
    char *id = strtok_r(lhs, " \t", &save), *op = strtok_r(NULL, " \t", &save);
    if (!id || !op) return;
    for (char *p = op; *p; p++) *p = (char)(*p >= 'A' && *p <= 'Z' ? *p + 32 : *p);
    if (in_list(cpython_skips, id)) { skip_cpython++; return; }
    if (strcmp(op, "rescale") == 0) { skip_rescale++; return; }
    /* the operands, a quoted one possibly holding spaces */
    char vals[4][512];
    int nv = 0, quote = 0;
    char conglomerate[512] = "";
    for (char *t = strtok_r(NULL, " \t", &save); t; t = strtok_r(NULL, " \t", &save)) {
        int q = 0;
        for (char *p = t; *p; p++) q += *p == '\'';
        if (q % 2) quote = !quote;
        if (quote) {
            size_t l = strlen(conglomerate);
            snprintf(conglomerate + l, sizeof conglomerate - l, " %s", t);
            continue;
        }
        char whole[1024];
        snprintf(whole, sizeof whole, "%s%s", conglomerate, t);
        conglomerate[0] = 0;
        if (nv < 4) fix_quotes(whole, vals[nv]);
        nv++;
    }
    size_t k;
    for (k = 0; k < NOPS; k++)
        if (strcmp(ops[k].op, op) == 0 && ops[k].nargs == nv) break;
    if (k == NOPS) {
        char name[24];
        snprintf(name, sizeof name, "%s%s", op, strcmp(op, "power") == 0 ? "/3" : "");
        skip_op(name);
        return;
    }
    char *save2 = NULL, want[512];
    char *ans = strtok_r(rhs, " \t", &save2);
    if (!ans) return;
    fix_quotes(ans, want);
    unsigned want_sig = 0;
    for (char *c = strtok_r(NULL, " \t", &save2); c; c = strtok_r(NULL, " \t", &save2)) {
        for (char *p = c; *p; p++) *p = (char)(*p >= 'A' && *p <= 'Z' ? *p + 32 : *p);
        unsigned b = 1u << 31;
        for (size_t i = 0; i < sizeof cond_names / sizeof cond_names[0]; i++)
            if (strcmp(cond_names[i][0], c) == 0) b = sig_bit(cond_names[i][1]);
        want_sig |= b;
    }
    char got[1200];
    n_run++;
    int ok = run_case(cx, ops[k].expr, ops[k].logical, vals, nv, want, want_sig, got, sizeof got);
    const char *why = known_why(id);
    if (ok && !why) { n_agree++; t_pass++; return; }
    if (ok) {
        t_fail++;
        fprintf(stderr, "%s agrees now: take it out of known_failures\n", id);
        return;
    }
    if (why) { n_known++; t_pass++; return; }
    t_fail++;
    fprintf(stderr, "FAIL %s %s -> %s: got %s\n", id, op, want, got);
}

static void eval_file(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) { t_fail++; fprintf(stderr, "cannot open %s\n", path); return; }
    context cx = { 28, 999999, -999999, 0, "ROUND_HALF_EVEN" };   /* Context() */
    char line[4096];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = 0;
        char *s = line;
        char *arrow = strstr(s, " -> ");
        if (arrow && strncmp(s, "--", 2) != 0 && strncmp(s, "  --", 4) != 0) {
            char *c = strstr(arrow, "--");
            if (c) *c = 0;
        } else {
            char *c = strstr(s, "--");
            if (c) *c = 0;
        }
        while (*s == ' ' || *s == '\t') s++;
        size_t l = strlen(s);
        while (l && (s[l - 1] == ' ' || s[l - 1] == '\t')) s[--l] = 0;
        if (!*s || strchr(s, '#')) continue;
        char *colon = strchr(s, ':');
        if (colon) {
            *colon = 0;
            char *name = s, *value = colon + 1;
            while (*value == ' ' || *value == '\t') value++;
            for (char *p = name; *p; p++) *p = (char)(*p >= 'A' && *p <= 'Z' ? *p + 32 : *p);
            for (char *p = value; *p; p++) *p = (char)(*p >= 'A' && *p <= 'Z' ? *p + 32 : *p);
            l = strlen(name);
            while (l && (name[l - 1] == ' ' || name[l - 1] == '\t')) name[--l] = 0;
            if (strcmp(name, "precision") == 0) cx.prec = atoll(value);
            else if (strcmp(name, "maxexponent") == 0) cx.emax = atoll(value);
            else if (strcmp(name, "minexponent") == 0) cx.emin = atoll(value);
            else if (strcmp(name, "clamp") == 0) cx.clamp = atoi(value);
            else if (strcmp(name, "rounding") == 0)
                for (size_t i = 0; i < sizeof rounding_names / sizeof rounding_names[0]; i++)
                    if (strcmp(rounding_names[i][0], value) == 0) cx.rounding = rounding_names[i][1];
            continue;
        }
        eval_equation(&cx, s);
    }
    fclose(f);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(void)
{
    const char *dir = getenv("CR_DECTEST_DIR");
    if (!dir) dir = DEFAULT_DIR;
    DIR *d = opendir(dir);
    if (!d) {
        SKIP("no decTest files in %s (Debian's libpython3.11-testsuite)", dir);
        return TEST_SUMMARY();
    }
    char *names[512];
    size_t n = 0;
    for (struct dirent *e; (e = readdir(d)) && n < 512;)
        if (strstr(e->d_name, ".decTest") && e->d_name[0] != '.') names[n++] = strdup(e->d_name);
    closedir(d);
    qsort(names, n, sizeof names[0], by_name);
    const char *only = getenv("CR_DECTEST_ONLY");
    for (size_t i = 0; i < n; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        if (!only || strstr(names[i], only)) eval_file(path);
        free(names[i]);
    }
    printf("decTest: %lld cases run, %lld agree with CPython (%.2f%%), %lld known failures, "
           "%lld disagree\n", n_run, n_agree, n_run ? 100.0 * (double)n_agree / (double)n_run : 0.0,
           n_known, n_run - n_agree - n_known);
    /* the skips, one SKIP line a reason (tests/tally.sh counts the lines), with its cases */
    printf("skipped: %lld cases\n", skip_cpython + skip_rescale + skip_ops);
    if (skip_cpython) {
        t_skip++;
        fprintf(stderr, "SKIP decTest: %lld cases that CPython's test_decimal.py skips "
                "(its skipped_test_ids)\n", skip_cpython);
    }
    if (skip_rescale) {
        t_skip++;
        fprintf(stderr, "SKIP decTest: %lld rescale cases (test_decimal.py skips the operation)\n",
                skip_rescale);
    }
    for (int i = 0; i < n_skip_names; i++) {
        t_skip++;
        fprintf(stderr, "SKIP decTest: %lld %s cases: the operation is outside the subset\n",
                skip_op_count[i], skip_op_name[i]);
    }
    return TEST_SUMMARY();
}
