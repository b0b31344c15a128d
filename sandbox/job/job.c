/* sandbox/job/job.c: what the tiers share: defaults, the job encoding the runner reads, the
 * report it writes back, and the outcome's memory. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "sandbox/job/job.h"

#define REPORT_FIELD_MAX (64u << 20)

const char *sandbox_limit_name(sandbox_limit limit)
{
    static const char *const names[] = {
        [SANDBOX_LIMIT_NONE] = "none",     [SANDBOX_LIMIT_WALL] = "wall",
        [SANDBOX_LIMIT_CPU] = "cpu",       [SANDBOX_LIMIT_MEMORY] = "memory",
        [SANDBOX_LIMIT_PROCS] = "procs",   [SANDBOX_LIMIT_OUTPUT] = "output",
        [SANDBOX_LIMIT_DISK] = "disk",     [SANDBOX_LIMIT_ARTIFACTS] = "artifacts",
    };
    if ((unsigned)limit < sizeof names / sizeof names[0] && names[limit]) return names[limit];
    return "unknown";
}

void sandbox_limits_resolve(sandbox_limits *lim)
{
    if (!(lim->wall_s > 0)) lim->wall_s = CR_DEFAULT_TIMEOUT_S;
    if (!(lim->cpu_s > 0)) lim->cpu_s = lim->wall_s;
    if (!lim->memory_bytes) lim->memory_bytes = (uint64_t)CR_DEFAULT_MEMORY_MIB << 20;
    if (!lim->max_procs) lim->max_procs = CR_DEFAULT_SANDBOX_PROCS;
    if (!lim->max_stdout) lim->max_stdout = CR_DEFAULT_SANDBOX_STDOUT;
    if (!lim->max_stderr) lim->max_stderr = CR_DEFAULT_SANDBOX_STDERR;
    if (!lim->tmp_bytes) lim->tmp_bytes = (uint64_t)CR_DEFAULT_SANDBOX_TMP_MIB << 20;
    if (!lim->artifact_bytes) lim->artifact_bytes = (uint64_t)CR_DEFAULT_SANDBOX_OUT_MIB << 20;
    if (!lim->max_artifacts) lim->max_artifacts = CR_DEFAULT_SANDBOX_ARTIFACTS;
}

void sandbox_job_init(sandbox_job *job)
{
    memset(job, 0, sizeof *job);
    job->tier = CR_TIER_AUTO;
    job->interpreter = SANDBOX_DEFAULT_INTERPRETER;
    job->seed = -1;
    job->interrupt_fd = -1;
    sandbox_limits_resolve(&job->limits);
}

/* 1 when path is dir or lies under it, by its text. */
static int path_under(const char *path, const char *dir)
{
    size_t n = strlen(dir);
    return strncmp(path, dir, n) == 0 && (path[n] == '/' || path[n] == 0);
}

cr_code sandbox_interpreter_check(const char *interp, const char *allow, cr_error *err)
{
    /* The sandbox's own top-level directories: an allowed directory bound over or under one
     * of them would hide it or be hidden. /tmp itself too, but a directory under it is fine
     * (bound after the sandbox's /tmp is mounted). */
    static const char *const own[] = { "/proc", "/dev", "/etc", "/out", "/data", "/sys",
                                       "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32" };
    char real[PATH_MAX];
    struct stat st;
    if (!interp) interp = SANDBOX_DEFAULT_INTERPRETER;
    if (allow) {
        if (allow[0] != '/' || !realpath(allow, real) || strcmp(real, allow) != 0 ||
            stat(allow, &st) < 0 || !S_ISDIR(st.st_mode))
            return cr_error_set(err, CR_EUSAGE, 0, 0, "allowed directory %s: want the canonical "
                                "absolute path of a directory (as realpath gives it)", allow);
        if (!strcmp(allow, "/") || !strcmp(allow, "/tmp"))
            return cr_error_set(err, CR_EUSAGE, 0, 0, "allowed directory %s: would cover "
                                "the sandbox's own", allow);
        for (size_t i = 0; i < sizeof own / sizeof own[0]; i++)
            if (path_under(allow, own[i]))
                return cr_error_set(err, CR_EUSAGE, 0, 0, "allowed directory %s: would cover "
                                    "the sandbox's own %s", allow, own[i]);
    }
    if (interp[0] != '/')
        return cr_error_set(err, CR_EUSAGE, 0, 0, "interpreter %s: want an absolute path", interp);
    /* As written is what the sandbox executes; resolved is what it must be able to reach. */
    int seen = path_under(interp, "/usr") || (allow && path_under(interp, allow));
    if (seen && (!realpath(interp, real) || stat(real, &st) < 0))
        return cr_error_set(err, CR_EUSAGE, 0, 0, "interpreter %s: %s", interp, strerror(errno));
    if (!seen || !(path_under(real, "/usr") || (allow && path_under(real, allow))))
        return cr_error_set(err, CR_EUSAGE, 0, 0, "interpreter %s%s%s: not under /usr or %s, "
                            "all the sandbox sees", interp, seen ? " -> " : "", seen ? real : "",
                            allow ? allow : "an allowed directory");
    if (!S_ISREG(st.st_mode) || access(real, X_OK) < 0)
        return cr_error_set(err, CR_EUSAGE, 0, 0, "interpreter %s: not an executable file",
                            interp);
    return CR_OK;
}

int sandbox_job_host_python(const sandbox_job *job)
{
    return job->allow_dir ||
           (job->interpreter && strcmp(job->interpreter, SANDBOX_DEFAULT_INTERPRETER) != 0);
}

void sandbox_note_add(char *note, size_t cap, const char *fmt, ...)
{
    char part[512];
    size_t used = strlen(note);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(part, sizeof part, fmt, ap);
    va_end(ap);
    if (part[0] && used + 1 < cap) snprintf(note + used, cap - used, "%s%s", used ? "; " : "", part);
}

void sandbox_outcome_free(sandbox_outcome *out)
{
    if (!out) return;
    cr_buf_free(&out->stdout_buf);
    cr_buf_free(&out->stderr_buf);
    free(out->value_repr);
    free(out->value_type);
    free(out->value_decimal);
    free(out->value_native);
    free(out->value_from);
    free(out->error_type);
    free(out->error_message);
    for (size_t i = 0; i < out->artifact_count; i++) {
        free(out->artifacts[i].name);
        free(out->artifacts[i].path);
    }
    free(out->artifacts);
    free(out->dropped_names);
    free(out->imports);
    free(out->interpreter_path);
    free(out->interpreter_version);
    memset(out, 0, sizeof *out);
}

/* ---- records: "<key> <length>\n<bytes>\n" --------------------------------------------- */

cr_code sandbox_record_put(cr_buf *b, const char *key, const char *val, size_t len)
{
    cr_code rc;
    if ((rc = cr_buf_printf(b, "%s %zu\n", key, len)) != CR_OK) return rc;
    if ((rc = cr_buf_put(b, val, len)) != CR_OK) return rc;
    return cr_buf_putc(b, '\n');
}

uint32_t sandbox_job_seed(const sandbox_job *job)
{
    static const char tag[] = "calcroute seed";   /* its own domain: no other hash's prefix */
    crypto_hash_sha256_state st;
    unsigned char h[crypto_hash_sha256_BYTES];
    if (job->seed >= 0 && job->seed <= (int64_t)SANDBOX_SEED_MAX) return (uint32_t)job->seed;
    crypto_hash_sha256_init(&st);
    unsigned char len[8];
    for (int i = 0; i < 8; i++) len[i] = (unsigned char)((uint64_t)job->code_len >> (56 - 8 * i));
    crypto_hash_sha256_update(&st, (const unsigned char *)tag, sizeof tag);
    crypto_hash_sha256_update(&st, len, sizeof len);   /* where the code ends */
    crypto_hash_sha256_update(&st, (const unsigned char *)(job->code ? job->code : ""), job->code_len);
    if (job->globals_json)
        crypto_hash_sha256_update(&st, (const unsigned char *)job->globals_json,
                                  strlen(job->globals_json) + 1);
    crypto_hash_sha256_final(&st, h);
    return (uint32_t)h[0] << 24 | (uint32_t)h[1] << 16 | (uint32_t)h[2] << 8 | h[3];
}

cr_code sandbox_job_encode(const sandbox_job *job, cr_buf *buf, cr_error *err)
{
    cr_code rc;
    char seed[16];
    if ((rc = sandbox_record_put(buf, "code", job->code ? job->code : "", job->code_len)) != CR_OK)
        goto fail;
    for (size_t i = 0; job->answer_vars && i < CR_ANSWER_VARS_MAX && job->answer_vars[i]; i++)
        if ((rc = sandbox_record_put(buf, "var", job->answer_vars[i], strlen(job->answer_vars[i])))
            != CR_OK)
            goto fail;
    if (job->globals_json &&
        (rc = sandbox_record_put(buf, "globals", job->globals_json, strlen(job->globals_json))) != CR_OK)
        goto fail;
    snprintf(seed, sizeof seed, "%lu", (unsigned long)sandbox_job_seed(job));
    if ((rc = sandbox_record_put(buf, "seed", seed, strlen(seed))) != CR_OK) goto fail;
    static const char npf[] = "numpy_financial";
    if (job->code && memmem(job->code, job->code_len, npf, sizeof npf - 1) &&
        ((rc = cr_buf_printf(buf, "module %zu\n%s\n", sizeof npf + sandbox_npf_source_len, npf)) != CR_OK ||
         (rc = cr_buf_put(buf, sandbox_npf_source, sandbox_npf_source_len)) != CR_OK ||
         (rc = cr_buf_putc(buf, '\n')) != CR_OK))
        goto fail;
    return CR_OK;
fail:
    return cr_error_set(err, rc, 0, 0, "sandbox: encoding the job: %s", cr_strerror(rc));
}

static int key_is(const char *k, size_t klen, const char *want)
{
    return klen == strlen(want) && memcmp(k, want, klen) == 0;
}

static char *dup_field(const char *p, size_t n)
{
    char *s = malloc(n + 1);
    if (s) { memcpy(s, p, n); s[n] = 0; }
    return s;
}

/* A small decimal count (a line, an errno, a signal): 0..999999999, or -1. */
static int small_int(const char *p, size_t n)
{
    int v = 0;
    if (!n || n > 9) return -1;
    for (size_t i = 0; i < n; i++) {
        if (p[i] < '0' || p[i] > '9') return -1;
        v = v * 10 + (p[i] - '0');
    }
    return v;
}

/* A decimal number ("-12.50", "1e-05", "1.5E+16") as its sign and significant digits, no
 * leading or trailing zero ("-125"; zero is "+"), into a malloc'd string, with the power of
 * ten of the first digit in *exp10. NULL when it is not such a number (or out of memory). */
static char *number_digits(const char *p, size_t n, long *exp10)
{
    size_t i = 0, k = 1, lead;
    long whole = 0, e = 0;
    int point = 0, any = 0;
    char *d = malloc(n + 2);
    if (!d) return NULL;
    d[0] = i < n && p[i] == '-' ? (i++, '-') : '+';
    for (; i < n; i++) {
        if (p[i] >= '0' && p[i] <= '9') { d[k++] = p[i]; any = 1; whole += !point; }
        else if (p[i] == '.' && !point) point = 1;
        else break;
    }
    if (i < n && (p[i] == 'e' || p[i] == 'E')) {
        int neg = ++i < n && p[i] == '-';
        if (i < n && (p[i] == '-' || p[i] == '+')) i++;
        if (i == n || n - i > 9) any = 0;
        for (; i < n && any; i++) {
            if (p[i] < '0' || p[i] > '9') any = 0;
            else e = e * 10 + (p[i] - '0');
        }
        if (neg) e = -e;
    }
    if (!any || i != n) { free(d); return NULL; }
    for (lead = 1; lead < k && d[lead] == '0'; lead++) {}
    *exp10 = whole + e - (long)lead;
    memmove(d + 1, d + lead, k - lead);
    for (k -= lead - 1; k > 1 && d[k - 1] == '0'; k--) {}
    if (k == 1) { d[0] = '+'; *exp10 = 0; }   /* -0.0 is 0 */
    d[k] = 0;
    return d;
}

/* 1 when both texts are decimal numbers of the same value. */
static int same_number(const char *a, size_t an, const char *b, size_t bn)
{
    long ea, eb;
    char *da = number_digits(a, an, &ea), *db = number_digits(b, bn, &eb);
    int same = da && db && ea == eb && !strcmp(da, db);
    free(da);
    free(db);
    return same;
}

enum { R_ETYPE, R_EMESSAGE, R_ELINE, R_ECOL, R_ERRNO, R_EFILE, R_SIGNAL, R_DCOUNT, R_STATUS,
       R_DNAMES, R_IMPORTS, R_IPATH, R_IVERSION, R_COUNT };
static const char *const report_keys[R_COUNT] = {
    "error.type", "error.message", "error.line", "error.col", "error.errno", "error.filename",
    "exit.signal", "dropped.count", "exit.status", "dropped.names", "imports",
    "interpreter.path", "interpreter.version",
};

/* The record at buf[*i]: 1 with its key and value, the offset past it in *i; 0 at the end
 * or when cut short there (*cut set); -1 when malformed (*why set). */
static int report_record(const char *buf, size_t len, size_t *i, const char **key,
                         size_t *klen, const char **val, size_t *vlen, int *cut,
                         const char **why)
{
    const char *nl, *sp;
    size_t j, n = 0;
    if (*i >= len) return 0;
    if (!(nl = memchr(buf + *i, '\n', len - *i))) { *cut = 1; return 0; }
    sp = memchr(buf + *i, ' ', (size_t)(nl - (buf + *i)));
    if (!sp || sp == buf + *i) { *why = "a malformed record"; return -1; }
    for (j = 1; sp + j < nl && sp[j] >= '0' && sp[j] <= '9' && n <= REPORT_FIELD_MAX; j++)
        n = n * 10 + (size_t)(sp[j] - '0');
    if (sp + j != nl || j == 1 || n > REPORT_FIELD_MAX) { *why = "a malformed record"; return -1; }
    if ((size_t)(nl + 1 - buf) + n + 1 > len) { *cut = 1; return 0; }
    if (nl[1 + n] != '\n') { *why = "a record longer than its length"; return -1; }
    *key = buf + *i;
    *klen = (size_t)(sp - (buf + *i));
    *val = nl + 1;
    *vlen = n;
    *i = (size_t)(nl + 1 - buf) + n + 1;
    return 1;
}

int sandbox_report_status(const char *buf, size_t len)
{
    const char *key, *val, *why = NULL;
    size_t i = 0, klen, vlen;
    int cut = 0, status = -1;
    while (report_record(buf, len, &i, &key, &klen, &val, &vlen, &cut, &why) == 1)
        if (key_is(key, klen, "exit.status")) status = small_int(val, vlen);
    return cut || why || status > 255 ? -1 : status;
}

/* The final-value rule's candidates: one group of records "<group>.<field>" each. */
enum { G_SOLUTION, G_VAR0, G_EXPR = G_VAR0 + CR_ANSWER_VARS_MAX, G_ASSIGNED, G_COUNT };
static const char *const group_names[G_COUNT] = {
    "solution", "var0", "var1", "var2", "expr", "assigned",
};
_Static_assert(G_COUNT == 6, "a group name for each answer variable");
enum { F_REPR, F_TYPE, F_DECIMAL, F_NAME, F_BY, F_NATIVE, F_COUNT };
static const char *const field_names[F_COUNT] = { "repr", "type", "decimal", "name", "by",
                                                  "native" };

typedef struct {
    const char *p[F_COUNT];
    size_t n[F_COUNT];
} report_group;

/* Why the value's records disagree with each other, or NULL: the decimal text must denote
 * the number the repr shows, for the types whose repr shows one. */
static const char *value_disagrees(const report_group *g)
{
    const char *t = g->p[F_TYPE], *r = g->p[F_REPR], *d = g->p[F_DECIMAL];
    size_t tn = g->n[F_TYPE], rn = g->n[F_REPR], dn = g->n[F_DECIMAL];
    if (key_is(t, tn, "bool")) {
        if (d && ((key_is(r, rn, "True") && key_is(d, dn, "1")) ||
                  (key_is(r, rn, "False") && key_is(d, dn, "0"))))
            return NULL;
        return "a bool whose decimal is not 1 or 0";
    }
    if (key_is(t, tn, "int") && !(d && rn == dn && !memcmp(r, d, rn) && same_number(r, rn, d, dn)))
        return "an int whose decimal is not its repr";
    if (key_is(t, tn, "float") && !d) {
        if (key_is(r, rn, "inf") || key_is(r, rn, "-inf") || key_is(r, rn, "nan")) return NULL;
        return "a finite float without its decimal";
    }
    if (key_is(t, tn, "Decimal")) {
        if (rn < 11 || memcmp(r, "Decimal('", 9) || memcmp(r + rn - 2, "')", 2))
            return "a Decimal whose repr is not Decimal('...')";
        r += 9;
        rn -= 11;
    }
    if (key_is(t, tn, "Fraction")) {
        if (rn < 10 || memcmp(r, "Fraction(", 9) || r[rn - 1] != ')')
            return "a Fraction whose repr is not Fraction(n, d)";
        if (d) {
            long e;
            char *x = number_digits(d, dn, &e);
            free(x);
            if (!x) return "a Fraction whose decimal is not a number";
        }
        return NULL;
    }
    if (d && !same_number(r, rn, d, dn)) return "a repr that disagrees with its decimal";
    return NULL;
}

/* Why a candidate's records cannot be the runner's, or NULL. `cut`: the report ended early,
 * so a group may lack its last records (and is then no candidate). */
static const char *group_invalid(int gi, const report_group *g, int cut)
{
    int named = gi >= G_VAR0 && gi != G_EXPR, any = 0;
    for (int f = 0; f < F_COUNT; f++) any |= g->p[f] != NULL;
    if (!any) return NULL;
    if ((g->p[F_NAME] && !named) || (g->p[F_BY] && gi != G_SOLUTION))
        return "a record its value cannot have";
    /* the router checks the form itself (route_sandbox.c) */
    const char *t = g->p[F_TYPE];
    size_t tn = g->n[F_TYPE];
    if (g->p[F_NATIVE] && t && !key_is(t, tn, "list") && !key_is(t, tn, "tuple") &&
        !key_is(t, tn, "set") && !key_is(t, tn, "dict"))
        return "a native form on a value that is not a container";
    if (!cut && (!g->p[F_REPR] || !g->p[F_TYPE] || (named && !g->p[F_NAME]) ||
                 (gi == G_SOLUTION && !g->p[F_BY])))
        return "a value without its repr, type, name or caller";
    if (g->p[F_NAME] && !g->n[F_NAME]) return "a value with an empty name";
    if (g->p[F_BY] && !key_is(g->p[F_BY], g->n[F_BY], "program") &&
        !key_is(g->p[F_BY], g->n[F_BY], "end"))
        return "a solution() caller that is not program or end";
    return g->p[F_REPR] && g->p[F_TYPE] ? value_disagrees(g) : NULL;
}

/* "<group>.<field>" into its indices; 0, or -1 when the key is not one. */
static int group_key(const char *k, size_t klen, int *gi, int *fi)
{
    const char *dot = memchr(k, '.', klen);
    if (!dot) return -1;
    for (*gi = 0; *gi < G_COUNT && !key_is(k, (size_t)(dot - k), group_names[*gi]); ++*gi) {}
    for (*fi = 0; *fi < F_COUNT && !key_is(dot + 1, klen - (size_t)(dot + 1 - k), field_names[*fi]);
         ++*fi) {}
    return *gi < G_COUNT && *fi < F_COUNT ? 0 : -1;
}

cr_code sandbox_report_parse(const char *buf, size_t len, sandbox_outcome *out, cr_error *err)
{
    const char *v[R_COUNT] = { 0 };
    size_t n[R_COUNT] = { 0 }, i = 0;
    report_group grp[G_COUNT];
    int values = 0, errors = 0, cut = 0, num[R_COUNT];
    const char *why = NULL;

    memset(grp, 0, sizeof grp);
    /* Only the runner writes the report, once: a record it could not have written refuses the
     * whole report, while a record cut short at the end (the runner killed at a limit while
     * writing, the report's cap) ends it with what was whole. */
    for (;;) {
        const char *key, *val;
        size_t klen, vlen;
        int k, gi, fi;
        if (report_record(buf, len, &i, &key, &klen, &val, &vlen, &cut, &why) != 1) break;
        for (k = 0; k < R_COUNT && !key_is(key, klen, report_keys[k]); k++) {}
        if (k < R_COUNT) {
            if (v[k]) why = "a repeated record";
            else { v[k] = val; n[k] = vlen; }
        } else if (group_key(key, klen, &gi, &fi) == 0) {
            if (grp[gi].p[fi]) why = "a repeated record";
            else { grp[gi].p[fi] = val; grp[gi].n[fi] = vlen; values++; }
        } else {
            why = "an unknown record";
        }
        if (why) break;
    }
    for (int k = R_ETYPE; k <= R_EFILE; k++) errors += v[k] != NULL;
    for (int k = R_ELINE; k <= R_STATUS; k++)
        if (k != R_EFILE && (num[k] = v[k] ? small_int(v[k], n[k]) : 0) < 0 && !why)
            why = "a count that is not a number";
    if (!why && (v[R_DCOUNT] != NULL) != (v[R_DNAMES] != NULL) && !cut)
        why = "dropped files without their count or names";
    if (!why && v[R_DNAMES]) {
        size_t names = 1;
        for (size_t j = 0; j < n[R_DNAMES]; j++) names += v[R_DNAMES][j] == 0;
        if (!n[R_DNAMES] || names > SANDBOX_DROPPED_NAMES_MAX || (int)names > num[R_DCOUNT])
            why = "more dropped names than the runner reports";
    }
    if (!why && values && errors) why = "both a value and an exception";
    for (int g = 0; g < G_COUNT && !why; g++) why = group_invalid(g, &grp[g], cut);
    if (!why && errors && !v[R_ETYPE] && !cut) why = "an exception without its type";
    if (!why && v[R_SIGNAL] && (num[R_SIGNAL] < 1 || num[R_SIGNAL] >= 65))
        why = "a signal number out of range";
    if (!why && v[R_STATUS] && num[R_STATUS] > 255) why = "an exit status out of range";
    if (why)
        return cr_error_set(err, CR_ESANDBOX, 0, 0, "sandbox: the runner's report was refused: "
                            "%s at byte %zu", why, i);

    /* The runner reported every candidate; the rule the evaluator applies picks one. */
    cr_final_facts facts = { 0 };
    int vi = 0, chosen = -1;
    for (int g = 0; g < G_COUNT; g++) {
        if (!grp[g].p[F_REPR] || !grp[g].p[F_TYPE] || (g >= G_VAR0 && g != G_EXPR &&
                                                       !grp[g].p[F_NAME]))
            continue;         /* cut short: not a candidate */
        if (g == G_SOLUTION) {
            facts.solution = grp[g].p[F_BY] != NULL;
            facts.solution_at_end = grp[g].p[F_BY] && key_is(grp[g].p[F_BY], grp[g].n[F_BY], "end");
        }
        if (g >= G_VAR0 && g < G_EXPR) facts.vars |= 1u << (g - G_VAR0);
        facts.expr |= g == G_EXPR;
        facts.assigned |= g == G_ASSIGNED;
    }
    switch (cr_final_choose(&facts, &vi)) {
    case CR_FINAL_SOLUTION: chosen = G_SOLUTION; break;
    case CR_FINAL_VAR: chosen = G_VAR0 + vi; break;
    case CR_FINAL_EXPR: chosen = G_EXPR; break;
    case CR_FINAL_ASSIGNED: chosen = G_ASSIGNED; break;
    case CR_FINAL_NONE: break;
    }
    if (chosen >= 0) {
        const report_group *g = &grp[chosen];
        const char *src = chosen == G_SOLUTION ? "solution()" : "last expression";
        if (!(out->value_repr = dup_field(g->p[F_REPR], g->n[F_REPR])) ||
            !(out->value_type = dup_field(g->p[F_TYPE], g->n[F_TYPE])) ||
            (g->p[F_DECIMAL] &&
             !(out->value_decimal = dup_field(g->p[F_DECIMAL], g->n[F_DECIMAL]))) ||
            (g->p[F_NATIVE] &&
             !(out->value_native = dup_field(g->p[F_NATIVE], g->n[F_NATIVE]))) ||
            !(out->value_from = g->p[F_NAME] ? dup_field(g->p[F_NAME], g->n[F_NAME])
                                               : dup_field(src, strlen(src))))
            return cr_error_set(err, CR_ENOMEM, 0, 0, "sandbox: report field");
    }
    if ((v[R_ETYPE] && !(out->error_type = dup_field(v[R_ETYPE], n[R_ETYPE]))) ||
        (v[R_EMESSAGE] && !(out->error_message = dup_field(v[R_EMESSAGE], n[R_EMESSAGE]))))
        return cr_error_set(err, CR_ENOMEM, 0, 0, "sandbox: report field");
    out->error_line = num[R_ELINE];
    out->error_col = num[R_ECOL];
    if (v[R_DCOUNT] && v[R_DNAMES]) {
        out->dropped_count = (uint64_t)num[R_DCOUNT];
        out->dropped_names_len = n[R_DNAMES] + 1;
        if (!(out->dropped_names = dup_field(v[R_DNAMES], n[R_DNAMES])))
            return cr_error_set(err, CR_ENOMEM, 0, 0, "sandbox: report field");
    }
    /* What the run depended on, kept as said for the audit record. */
    if ((v[R_IMPORTS] && !(out->imports = dup_field(v[R_IMPORTS], n[R_IMPORTS]))) ||
        (v[R_IPATH] && !(out->interpreter_path = dup_field(v[R_IPATH], n[R_IPATH]))) ||
        (v[R_IVERSION] &&
         !(out->interpreter_version = dup_field(v[R_IVERSION], n[R_IVERSION]))))
        return cr_error_set(err, CR_ENOMEM, 0, 0, "sandbox: report field");
    if (v[R_STATUS] && !out->term_signal) {
        /* What the runner exits with: the run's status before pid 1 is reaped. */
        out->exited = 1;
        out->exit_code = num[R_STATUS];
    }
    if (v[R_SIGNAL]) {
        /* The code ran in a child of the runner: its death by a signal is the run's. */
        out->exited = 0;
        out->exit_code = 0;
        out->term_signal = num[R_SIGNAL];
    }
    out->has_value = out->value_repr != NULL && out->value_type != NULL;
    out->raised = out->error_type != NULL;
    if (out->raised && !out->error_message && !(out->error_message = dup_field("", 0)))
        return cr_error_set(err, CR_ENOMEM, 0, 0, "sandbox: report field");
    if (out->raised && out->limit == SANDBOX_LIMIT_NONE) {
        int err_no = num[R_ERRNO];
        int out_file = v[R_EFILE] && n[R_EFILE] >= 4 && !memcmp(v[R_EFILE], "/out", 4) &&
                       (n[R_EFILE] == 4 || v[R_EFILE][4] == '/');
        if (strcmp(out->error_type, "MemoryError") == 0) {
            out->limit = SANDBOX_LIMIT_MEMORY;
            snprintf(out->limit_detail, sizeof out->limit_detail, "the code got MemoryError");
        } else if (err_no == ENOSPC || err_no == EFBIG) {
            out->limit = out_file ? SANDBOX_LIMIT_ARTIFACTS : SANDBOX_LIMIT_DISK;
            snprintf(out->limit_detail, sizeof out->limit_detail, "%s full (%s)",
                     out_file ? "/out" : "a sandbox filesystem",
                     err_no == ENOSPC ? "ENOSPC" : "EFBIG");
        }
    }
    return CR_OK;
}

void sandbox_out_full(sandbox_outcome *out, const sandbox_limits *lim)
{
    /* A write error has no file name; a full /out tells which filesystem it was. */
    if (out->limit != SANDBOX_LIMIT_DISK) return;
    out->limit = SANDBOX_LIMIT_ARTIFACTS;
    snprintf(out->limit_detail, sizeof out->limit_detail, "/out full (%llu bytes)",
             (unsigned long long)lim->artifact_bytes);
}
