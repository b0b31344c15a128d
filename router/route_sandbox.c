/* router/route_sandbox.c: code outside the in-process subset, run in a sandbox tier, and the
 * outcome turned into the same result shape as an in-process run. */
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "evaluator/num/num.h"
#include "router/router.h"
#include "sandbox/sandbox.h"

/* The runner reports a number's exact decimal text ("-0.00001", "12"): as a fraction. */
static char *decimal_to_fraction(const char *dec, const cr_policy *pol)
{
    if (!dec || !*dec) return NULL;
    int neg = dec[0] == '-';
    num_ctx ctx;
    num_ctx_from_policy(&ctx, pol);
    mpq_t q;
    mpq_init(q);
    int is_float = 0;
    char *text = NULL;
    if (num_parse_literal(q, dec + neg, strlen(dec + neg), &is_float, &ctx) == CR_OK) {
        if (neg) mpq_neg(q, q);
        cr_buf b;
        cr_buf_init(&b, 0);
        if (num_fraction_text(&b, q) == CR_OK) text = cr_buf_take(&b, NULL);
        cr_buf_free(&b);
    }
    mpq_clear(q);
    return text;
}

/* The str a CPython str repr denotes: its quote, characters as themselves and the escapes
 * str.__repr__ writes (\\ \' \" \n \r \t \xhh \uhhhh \Uhhhhhhhh); NULL for any other text, or
 * a lone surrogate, which no UTF-8 text holds. */
static json_t *tagged_str(const char *p, size_t len)
{
    json_t *v = json_stringn(p, len);     /* NULL when p is not UTF-8 */
    json_t *o = v ? json_object() : NULL;
    if (o && json_object_set_new(o, "str", v) == 0) return o;
    if (!o) json_decref(v);
    json_decref(o);
    return NULL;
}

static json_t *str_of_repr(const char *r)
{
    size_t n = strlen(r);
    if (n < 2 || (r[0] != '\'' && r[0] != '"') || r[n - 1] != r[0]) return NULL;
    cr_buf b;
    cr_buf_init(&b, 0);
    int ok = 1;
    for (size_t i = 1; ok && i < n - 1; i++) {
        char c = r[i], e;
        if (c == r[0]) { ok = 0; break; }
        if (c != '\\') { ok = cr_buf_put(&b, &c, 1) == CR_OK; continue; }
        if (++i >= n - 1) { ok = 0; break; }
        int digits = 0;
        switch (r[i]) {
        case '\\': case '\'': case '"': e = r[i]; break;
        case 'n': e = '\n'; break;
        case 'r': e = '\r'; break;
        case 't': e = '\t'; break;
        case 'x': digits = 2; break;
        case 'u': digits = 4; break;
        case 'U': digits = 8; break;
        default: ok = 0; continue;
        }
        if (!digits) { ok = cr_buf_put(&b, &e, 1) == CR_OK; continue; }
        unsigned long cp = 0;
        for (int k = 0; k < digits && ok; k++) {
            char h = r[++i];
            int v = h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10 : -1;
            if (v < 0 || i >= n - 1) ok = 0;    /* repr writes lower-case hex */
            cp = cp * 16 + (unsigned long)(v < 0 ? 0 : v);
        }
        if (!ok || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) { ok = 0; break; }
        char u[4];
        size_t len = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
        if (len == 1) u[0] = (char)cp;
        else {
            for (size_t k = len - 1; k > 0; k--, cp >>= 6) u[k] = (char)(0x80 | (cp & 0x3F));
            u[0] = (char)((len == 2 ? 0xC0 : len == 3 ? 0xE0 : 0xF0) | cp);
        }
        ok = cr_buf_put(&b, u, len) == CR_OK;
    }
    json_t *j = ok ? tagged_str(b.p ? b.p : "", b.len) : NULL;
    cr_buf_free(&b);
    return j;
}

/* 1 when s is decimal digits with an optional '-', no leading zero; then, with `slash`, an
 * optional "/digits" whose first digit is not 0. */
static int number_text(const char *s, int slash)
{
    size_t i = *s == '-', d = strspn(s + i, "0123456789");
    if (!d || (s[i] == '0' && d > 1)) return 0;
    s += i + d;
    if (!*s) return 1;
    if (!slash || *s != '/' || s[1] < '1' || s[1] > '9') return 0;
    return strspn(s + 1, "0123456789") == strlen(s + 1);
}

/* Why the runner's native form of a container is not one (its shape, tag by tag: the runner
 * checked every number; this is the host's own check of what crosses the boundary), or
 * NULL. */
static const char *native_invalid(const json_t *v, int depth, size_t *parts)
{
    static const char *const containers[] = { "list", "tuple", "set", "dict" };
    if (++*parts > 1000001 || depth > 201) return "deeper or larger than the form allows";
    if (json_is_null(v) || json_is_boolean(v)) return NULL;
    if (!json_is_object(v) || json_object_size(v) != 1) return "a part that is not one tag";
    const char *tag = json_object_iter_key(json_object_iter((json_t *)v));
    const json_t *c = json_object_iter_value(json_object_iter((json_t *)v));
    for (int k = 0; k < 4; k++) {
        if (strcmp(tag, containers[k]) != 0) continue;
        size_t i;
        const json_t *y;
        if (!json_is_array(c)) return "a container's contents that are not a list";
        json_array_foreach(c, i, y) {
            const char *why;
            if (k == 3 && (!json_is_array(y) || json_array_size(y) != 2))
                return "a dict item that is not a pair";
            if (k == 3 && ((why = native_invalid(json_array_get(y, 0), depth + 1, parts)) ||
                           (why = native_invalid(json_array_get(y, 1), depth + 1, parts))))
                return why;
            if (k < 3 && (why = native_invalid(y, depth + 1, parts))) return why;
        }
        return NULL;
    }
    const char *s = json_string_value(c);
    if (!s) return "a tag whose contents are not text";
    if (strcmp(tag, "str") == 0) return NULL;
    if (strcmp(tag, "int") == 0 && number_text(s, 0)) return NULL;
    if ((strcmp(tag, "float") == 0 || strcmp(tag, "Fraction") == 0) &&
        (number_text(s, 1) || (tag[0] == 'f' && (!strcmp(s, "inf") || !strcmp(s, "-inf") ||
                                                  !strcmp(s, "nan")))))
        return NULL;
    if (strcmp(tag, "Decimal") == 0 && *s &&
        strspn(s, "0123456789.+-EINaifnty") == strlen(s))
        return NULL;
    return "a tag or number the form does not have";
}

/* The native form (DESIGN.md) of what the runner reported: its checked numbers, None, a str
 * from its repr, a container from the form the runner checked (`native`); other values come
 * as their repr only, and value_native_why says so. */
static int sandbox_native(cr_result *res, const char *native)
{
    const char *t = res->value_type, *r = res->value_repr, *f = res->value_fraction;
    const char *refused = NULL;
    json_t *j = NULL;
    if (native) {
        size_t parts = 0;
        json_t *tree = json_loads(native, JSON_REJECT_DUPLICATES, NULL);
        if (tree && json_object_get(tree, t) && !(refused = native_invalid(tree, 0, &parts)))
            j = tree;
        else {
            json_decref(tree);
            if (!refused) refused = "not JSON of the value's type";
        }
    } else if (strcmp(t, "NoneType") == 0 && strcmp(r, "None") == 0) {
        j = json_null();
    } else if (strcmp(t, "bool") == 0) {
        j = json_boolean(strcmp(r, "True") == 0);
    } else if (f && (strcmp(t, "int") == 0 || strncmp(t, "int", 3) == 0 || strncmp(t, "uint", 4) == 0 ||
                     strcmp(t, "longlong") == 0 || strcmp(t, "ulonglong") == 0)) {
        j = json_pack("{ss}", "int", f);
    } else if (strcmp(t, "float") == 0 || strncmp(t, "float", 5) == 0 || strcmp(t, "longdouble") == 0) {
        int special = !f && (!strcmp(r, "inf") || !strcmp(r, "-inf") || !strcmp(r, "nan"));
        if (f || special) j = json_pack("{ss}", "float", f ? f : r);
    } else if (strcmp(t, "str") == 0 && (j = str_of_repr(r))) {
        /* a str: its text rebuilt from the repr, exactly */
    } else if (strcmp(t, "Decimal") == 0 && strncmp(r, "Decimal('", 9) == 0) {
        j = json_pack("{ss#}", "Decimal", r + 9, (int)strlen(r + 9) - 2);
    } else if (strcmp(t, "Fraction") == 0 && strncmp(r, "Fraction(", 9) == 0) {
        /* the runner checked "Fraction(n, d)", lowest terms: n/d */
        size_t n = strlen(r + 9);
        char *q = malloc(n), *comma = strchr(r, ',');
        if (q && comma && n >= 4) {
            snprintf(q, n, "%.*s/%s", (int)(comma - r - 9), r + 9, comma + 2);
            q[strlen(q) - 1] = '\0';                     /* the closing parenthesis */
            j = json_pack("{ss}", "Fraction", q);
        }
        free(q);
    }
    if (j) {
        res->value_native = j;
        return 0;
    }
    char why[320];
    if (refused)
        snprintf(why, sizeof why, "the sandbox's native form of a %.100s was refused: %s", t,
                 refused);
    else if (strcmp(t, "str") == 0)
        snprintf(why, sizeof why, "the sandbox's str repr is no UTF-8 text (a lone surrogate?)");
    else if (!strcmp(t, "list") || !strcmp(t, "tuple") || !strcmp(t, "set") || !strcmp(t, "dict"))
        snprintf(why, sizeof why, "a part of the sandbox's %s has no native form (or it is "
                 "deeper than 200 or of more than a million parts); its repr is the text", t);
    else
        snprintf(why, sizeof why, "the sandbox reports a %.200s by its repr only", t);
    return !(res->value_native_why = strdup(why));
}

static char *dup_buf(const cr_buf *b, size_t *len)
{
    *len = b->len;
    char *p = malloc(b->len + 1);
    if (!p) return NULL;
    if (b->len) memcpy(p, b->p, b->len);
    p[b->len] = '\0';
    return p;
}

/* The artifact list as JSON text, NULL only when out of memory. A name (and so a path) that
 * is not UTF-8 is shown with U+FFFD and given byte for byte in name_base64, else null: the
 * file stays identifiable, and every artifact is listed whatever its name. */
static char *artifacts_json(const sandbox_outcome *oc)
{
    json_t *a = json_array();
    int failed = !a;
    for (size_t i = 0; i < oc->artifact_count; i++) {
        const sandbox_artifact *x = &oc->artifacts[i];
        size_t nlen = strlen(x->name);
        json_t *o = json_object();
        cr_json_set(o, "name", cr_json_text(x->name, nlen, NULL), &failed);
        cr_json_set(o, "size", json_integer((json_int_t)x->size), &failed);
        cr_json_set(o, "sha256", json_string(x->sha256), &failed);
        cr_json_set(o, "path", cr_json_str(x->path), &failed);
        cr_json_set(o, "name_base64", cr_json_bytes_if_not_utf8(x->name, nlen), &failed);
        cr_json_append(a, o, &failed);
    }
    char *s = failed ? NULL : json_dumps(a, JSON_COMPACT);
    json_decref(a);
    return s;
}

/* The files the code left outside /out, as JSON text; NULL only when out of memory. */
/* The runner's word on what the run depended on (sandbox_outcome's imports and interpreter)
 * as JSON; NULL only when out of memory. */
static json_t *inputs_json(const sandbox_outcome *oc)
{
    json_t *o = json_object(), *pk = oc->imports ? json_object() : NULL;
    int failed = !o || (oc->imports && !pk);
    if (oc->interpreter_path || oc->interpreter_version) {
        json_t *in = json_object();
        failed |= !in;
        cr_json_set(in, "path", cr_json_str(oc->interpreter_path), &failed);
        cr_json_set(in, "version", cr_json_str(oc->interpreter_version), &failed);
        cr_json_set(o, "interpreter", in, &failed);
    }
    for (const char *p = oc->imports; p && *p && !failed;) {
        const char *nl = strchr(p, '\n'), *end = nl ? nl : p + strlen(p);
        const char *sp = memchr(p, ' ', (size_t)(end - p));
        if (sp) {
            char *name = strndup(p, (size_t)(sp - p));
            failed |= !name;
            if (name) cr_json_set(pk, name, cr_json_text(sp + 1, (size_t)(end - sp - 1), NULL),
                                  &failed);
            free(name);
        }
        p = nl ? nl + 1 : end;
    }
    if (pk) cr_json_set(o, "packages", pk, &failed);
    if (failed) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static char *dropped_json(const sandbox_outcome *oc)
{
    json_t *o = json_object(), *names = json_array();
    int failed = !o || !names;
    for (size_t at = 0; oc->dropped_names && at < oc->dropped_names_len;) {
        size_t n = strlen(oc->dropped_names + at);
        cr_json_append(names, cr_json_text(oc->dropped_names + at, n, NULL), &failed);
        at += n + 1;
    }
    cr_json_set(o, "count", json_integer((json_int_t)oc->dropped_count), &failed);
    cr_json_set(o, "names", names, &failed);
    char *s = failed ? NULL : json_dumps(o, JSON_COMPACT);
    json_decref(o);
    return s;
}

void router_sandbox_limits(const cr_engine *e, sandbox_limits *lim)
{
    memset(lim, 0, sizeof *lim);
    lim->wall_s = e->timeout_s;
    lim->cpu_s = e->timeout_s;
    lim->memory_bytes = (uint64_t)e->memory_mib << 20;
}

/* What every sandboxed run of e shares (the tier left auto): the request adds its code, its
 * own parts and the tier decided. */
static void engine_job(const cr_engine *e, sandbox_job *job)
{
    sandbox_job_init(job);
    job->interpreter = e->interpreter;
    job->data_dir = e->data_dir;
    job->out_dir = e->out_dir;
    job->allow_dir = e->allow_dir;
    job->kvm_dir = e->kvm_dir;
    router_sandbox_limits(e, &job->limits);
    job->interrupt_fd = e->intr[0];
}

void router_host_tier(const cr_engine *e, router_host *host)
{
    sandbox_job job;
    engine_job(e, &job);
    host->why[0] = '\0';
    host->tier = sandbox_job_tier(&job, host->why, sizeof host->why);
}

cr_code router_run_sandbox(cr_engine *e, const cr_request *req, const cr_policy *pol,
                           const router_decision *d, cr_result *res, cr_error *err)
{
    sandbox_job job;
    sandbox_outcome oc;
    memset(&oc, 0, sizeof oc);
    engine_job(e, &job);
    job.tier = d->tier;   /* decided: the sandbox does not choose again */
    job.lean = d->lean;
    job.interrupt_fd = *pol->limits.interrupt_fd;   /* the engine's, or the request's set */
    job.code = req->code ? req->code : "";
    job.code_len = req->code_len;
    job.answer_vars = pol->answer_vars;
    char *globals = req->nbinds ? router_bindings_json(req) : NULL;
    job.globals_json = globals;
    job.seed = req->seed;
    res->seed = sandbox_job_seed(&job);
    res->has_seed = 1;
    cr_error serr = {0};
    cr_code rc = sandbox_pool_run(e->pool, &job, &oc, &serr);
    free(globals);
    if (rc == CR_ENOMEM) {
        sandbox_outcome_free(&oc);
        return cr_error_set(err, rc, 0, 0, "sandbox: out of memory");
    }
    /* Overloaded: nothing ran, so there is no result to give or record; the caller may send
     * the request again. */
    if (rc == CR_EBUSY) {
        sandbox_outcome_free(&oc);
        if (err) *err = serr;
        return rc;
    }
    if (rc != CR_OK) {
        /* The tier could not be set up (a host without user namespaces, say): a result that
         * says so, with the step that failed, rather than an engine failure. */
        res->status = cr_error_set(&res->error, CR_ESANDBOX, 0, 0, "%s", serr.message);
        sandbox_outcome_free(&oc);
        return CR_OK;
    }
    int oom = 0;
    if (oc.tier_note[0] && !(res->tier_note = strdup(oc.tier_note))) oom = 1;
    if (!(res->stdout_text = dup_buf(&oc.stdout_buf, &res->stdout_len))) oom = 1;
    if (!(res->stderr_text = dup_buf(&oc.stderr_buf, &res->stderr_len))) oom = 1;
    res->stdout_truncated = oc.stdout_buf.truncated;
    if (oc.interrupted) {
        res->status = cr_error_set(&res->error, CR_EINTERRUPTED, 0, 0,
                                   "interrupted after %.3f s", oc.wall_s);
    } else if (oc.limit != SANDBOX_LIMIT_NONE) {
        res->status = cr_error_set(&res->error, CR_ELIMIT, 0, 0, "%s limit: %s",
                                   sandbox_limit_name(oc.limit), oc.limit_detail);
        if (!(res->limit_name = strdup(sandbox_limit_name(oc.limit)))) oom = 1;
    } else if (oc.raised) {
        const char *type = oc.error_type ? oc.error_type : "Exception";
        cr_code code = cr_code_from_pytype(type, strlen(type));
        res->status = code != CR_OK ? code : CR_EPY_EXCEPTION;
        cr_error_set(&res->error, res->status, oc.error_line, oc.error_col, "%s",
                     oc.error_message ? oc.error_message : "");
        snprintf(res->error.type, sizeof res->error.type, "%s", type);
    } else if (!oc.exited || oc.exit_code != 0) {
        res->status = cr_error_set(&res->error, CR_ESANDBOX, 0, 0,
                                   oc.exited ? "the sandboxed run exited with status %d"
                                             : "the sandboxed run was killed by signal %d",
                                   oc.exited ? oc.exit_code : oc.term_signal);
    } else {
        res->status = CR_OK;
    }
    if (oc.has_value && res->status == CR_OK) {
        res->has_value = 1;
        res->value_repr = oc.value_repr;
        res->value_type = oc.value_type;
        oc.value_repr = oc.value_type = NULL;
        res->value_fraction = decimal_to_fraction(oc.value_decimal, pol);
        /* CPython's float is a binary double: its value is exact, but it was rounded on the
         * way, so only ints and bools count as exact answers. */
        res->value_exact = res->value_type && (strcmp(res->value_type, "int") == 0 ||
                                               strcmp(res->value_type, "bool") == 0);
        if (oc.value_from && !(res->value_from = strdup(oc.value_from))) oom = 1;
        if (res->value_type && res->value_repr && sandbox_native(res, oc.value_native)) oom = 1;
    }
    if (!(res->artifacts_json = artifacts_json(&oc))) oom = 1;
    if (!(res->dropped_json = dropped_json(&oc))) oom = 1;
    if (!(res->sandbox_inputs = inputs_json(&oc))) oom = 1;
    res->sandbox_warm = oc.warm;
    if (e->pool && oc.start_note[0] && !(res->start_note = strdup(oc.start_note))) oom = 1;
    res->sandbox_wall_s = oc.wall_s;
    res->sandbox_cpu_s = oc.cpu_s;
    res->peak_memory = oc.peak_memory_bytes;
    /* Without a note of the sandbox's own, auto's reason, as the sandbox gives a job of tier
     * auto (this one was handed the tier decided). */
    if (!res->tier_note && e->tier == CR_TIER_AUTO && !(res->tier_note = strdup(d->tier_why)))
        oom = 1;
    sandbox_outcome_free(&oc);
    return oom ? cr_error_set(err, CR_ENOMEM, 0, 0, "sandbox result") : CR_OK;
}
