/* router/replay.c: re-running recorded requests through the public API and comparing the
 * results byte for byte with what the ledger holds (what router/record.c wrote). Only
 * calcroute.h is used to run them, so a replay exercises exactly what a library user would;
 * the ledger is read through audit_walk() alone. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit/audit.h"
#include "calcroute.h"
#include "router/router.h"      /* router_data_manifest(): the one walk of a data directory */

#define REPLAY_ENGINES 4        /* engines kept open, one for each set of options met */

typedef struct {
    char *key;                  /* its options, as engine_for() writes them */
    cr_engine *e;
} replay_engine;

/* A recorded limit above what the replay grants: the record runs under the grant. */
typedef struct {
    const char *option;
    char recorded[32], granted[32];
} capped_limit;

typedef struct {
    replay_engine engines[REPLAY_ENGINES];
    unsigned evict;             /* the slot a new engine takes when every one is in use */
    cr_config *defaults;        /* the most a replay grants each limit, unless it trusts the
                                   ledger's (CR_REPLAY_TRUST_LIMITS) */
    void (*diff)(uint64_t, const char *, const char *, const char *, void *);
    void *arg;
    cr_audit_replay_report *rep;
    int flags;                  /* CR_REPLAY_* */
    int ndiff;                  /* fields that differed in the current record */
    const char *data_dir;       /* --data: the directory sandboxed records re-run with */
    json_t *data_files;         /* its manifest's "files", made on first use */
    json_t *data_by;            /* the same by name */
    cr_error data_err;          /* why it could not be made */
} replay_ctx;

static int field_is(const char *p, size_t len, const char *want)
{
    return p && strlen(want) == len && memcmp(p, want, len) == 0;
}

/* Reports one differing field. want and got are (pointer, length) pairs; NULL is absent. */
static void differ(replay_ctx *cx, uint64_t seq, const char *field, const char *w, size_t wl,
                   const char *g, size_t gl)
{
    cx->ndiff++;
    if (!cx->diff) return;
    char *ws = w ? strndup(w, wl) : NULL, *gs = g ? strndup(g, gl) : NULL;
    cx->diff(seq, field, ws, gs, cx->arg);
    free(ws);
    free(gs);
}

static void compare_bytes(replay_ctx *cx, uint64_t seq, const char *field, const char *w,
                          size_t wl, const char *g, size_t gl)
{
    if ((w == NULL) != (g == NULL) || (w && (wl != gl || memcmp(w, g, wl) != 0)))
        differ(cx, seq, field, w, wl, g, gl);
}

static void compare_str(replay_ctx *cx, uint64_t seq, const char *field, const char *w,
                        size_t wl, const char *g)
{
    compare_bytes(cx, seq, field, w, wl, g, g ? strlen(g) : 0);
}

static void compare_int(replay_ctx *cx, uint64_t seq, const char *field, long long w,
                        long long g)
{
    char ws[32], gs[32];
    if (w == g) return;
    snprintf(ws, sizeof ws, "%lld", w);
    snprintf(gs, sizeof gs, "%lld", g);
    differ(cx, seq, field, ws, strlen(ws), gs, strlen(gs));
}

/* Whether a LimitError's {name, message} is a clock's: the evaluator's CPU time or the
 * sandbox's wall clock or CPU time. Where a clock runs out is no property of the code: the
 * statement the evaluator was at, and how much it had printed by then, differ run to run. */
static int clock_limit(json_t *limit)
{
    const char *name = json_string_value(json_object_get(limit, "name"));
    const char *msg = json_string_value(json_object_get(limit, "message"));
    if (!name || !msg) return 0;
    return !strcmp(name, "wall") || !strcmp(name, "cpu")
        || (!strcmp(name, "evaluator")
            && !strncmp(msg, EVAL_CPU_LIMIT_TEXT, sizeof EVAL_CPU_LIMIT_TEXT - 1));
}

/* The record's error column and the result's counterpart: its JSON's "error" ({type,
 * message, line, col} or null), for a LimitError its "limit", which is what the record keeps
 * in its error column (router/record.c). */
typedef struct {
    json_t *want, *all, *got;   /* got is borrowed from all; want NULL: not JSON */
} errors;

static void errors_read(const audit_record *r, const cr_result *res, errors *x)
{
    /* A result's stdout may hold NUL bytes ("\u0000"), which jansson refuses unless told. */
    x->want = r->error ? json_loadb(r->error, r->error_len, JSON_DECODE_ANY | JSON_ALLOW_NUL,
                                    NULL)
                       : json_null();
    const char *rj = cr_result_json(res);
    x->all = rj ? json_loads(rj, JSON_ALLOW_NUL, NULL) : NULL;
    x->got = json_object_get(x->all, "error");
    if ((!x->got || json_is_null(x->got)) && cr_result_status(res) == CR_ELIMIT)
        x->got = json_object_get(x->all, "limit");
    if (!x->got) x->got = json_null();
}

static void errors_free(errors *x)
{
    json_decref(x->want);
    json_decref(x->all);
}

/* The errors must be equal, every string byte for byte, but for where a clock stopped both
 * runs (clock_limit()): then the same limit, by name and message, is the match. Returns 1 in
 * that case. */
static int compare_error(replay_ctx *cx, uint64_t seq, const audit_record *r,
                         const cr_result *res)
{
    errors x;
    errors_read(r, res, &x);
    int clock = r->status == CR_ELIMIT && cr_result_status(res) == CR_ELIMIT
             && clock_limit(x.want) && clock_limit(x.got)
             && json_equal(json_object_get(x.want, "name"), json_object_get(x.got, "name"))
             && json_equal(json_object_get(x.want, "message"),
                           json_object_get(x.got, "message"));
    if (!clock && (!x.want || !json_equal(x.want, x.got))) {
        char *g = json_dumps(x.got, JSON_COMPACT | JSON_ENCODE_ANY);
        differ(cx, seq, "error", r->error, r->error_len, g, g ? strlen(g) : 0);
        free(g);
    }
    errors_free(&x);
    return clock;
}

/* Which side alone a clock stopped: 1 the replay (the record's run ended before), -1 the
 * record's (the replay ended before), 0 neither or both. */
static int clock_alone(const audit_record *r, const cr_result *res)
{
    errors x;
    errors_read(r, res, &x);
    int rec = r->status == CR_ELIMIT && clock_limit(x.want);
    int got = cr_result_status(res) == CR_ELIMIT && clock_limit(x.got);
    errors_free(&x);
    return got - rec;
}

/* stdout or stderr: byte for byte, or after a clock stopped both runs, one a prefix of the
 * other (the code is deterministic, so the shorter run printed the start of the longer's). */
static void compare_output(replay_ctx *cx, uint64_t seq, const char *field, const char *w,
                           size_t wl, const char *g, size_t gl, int clock)
{
    size_t n = wl < gl ? wl : gl;
    if (clock && w && g && memcmp(w, g, n) == 0) return;
    compare_bytes(cx, seq, field, w, wl, g, gl);
}

/* Per-request policy from the record: precision, rounding, answer_vars, seed. */
static cr_code set_policy(cr_request *req, json_t *p, cr_error *err)
{
    cr_code rc = CR_OK;
    char num[32];
    json_t *v;
    if (json_is_integer(v = json_object_get(p, "precision"))) {
        snprintf(num, sizeof num, "%lld", (long long)json_integer_value(v));
        rc = cr_request_set_option(req, "precision", num, err);
    }
    if (rc == CR_OK && json_is_string(v = json_object_get(p, "rounding")))
        rc = cr_request_set_option(req, "rounding", json_string_value(v), err);
    if (rc == CR_OK && json_is_array(v = json_object_get(p, "answer_vars"))) {
        cr_buf b;
        cr_buf_init(&b, 256);
        size_t i;
        json_t *name;
        json_array_foreach(v, i, name)
            if (json_is_string(name))
                cr_buf_printf(&b, "%s%s", b.len ? "," : "", json_string_value(name));
        rc = cr_request_set_option(req, "answer_vars", b.p ? b.p : "", err);
        cr_buf_free(&b);
    } else if (rc == CR_OK && json_is_string(v)) {
        rc = cr_request_set_option(req, "answer_vars", json_string_value(v), err);
    }
    if (rc == CR_OK && json_is_integer(v = json_object_get(p, "seed"))) {
        snprintf(num, sizeof num, "%lld", (long long)json_integer_value(v));
        rc = cr_request_set_option(req, "seed", num, err);
    }
    return rc;
}

static cr_code build_request(const audit_record *r, json_t *policy, cr_request **out,
                             cr_error *err)
{
    cr_request *req = cr_request_new();
    cr_code rc = req ? CR_OK : cr_error_set(err, CR_ENOMEM, 0, 0, "replay: request");
    if (rc == CR_OK && r->code) rc = cr_request_set_code(req, r->code, r->code_len);
    if (rc == CR_OK)
        rc = cr_request_set_lang(req, field_is(r->lang, r->lang_len, "dsl") ? CR_LANG_DSL
                                      : field_is(r->lang, r->lang_len, "python")
                                      ? CR_LANG_PYTHON : CR_LANG_AUTO);
    if (rc == CR_OK && r->bindings)
        rc = cr_request_set_vars_json(req, r->bindings, r->bindings_len, err);
    if (rc == CR_OK && r->tables)
        rc = cr_request_set_table_json(req, r->tables, r->tables_len, err);
    if (rc == CR_OK) rc = set_policy(req, policy, err);
    if (rc != CR_OK) {
        cr_request_free(req);
        req = NULL;
    }
    *out = req;
    return rc;
}

/* Sets the limit `id` from the policy's value v, or the default when the record's is above
 * it and the replay does not trust the ledger's limits (then noted in capped). A ledger is
 * untrusted input: without the cap its records could ask a replay for a day of CPU each, or
 * a terabyte of the examiner's memory. */
static cr_code set_limit(replay_ctx *cx, cr_config *cfg, router_config_id id, const char *member,
                         json_t *v, capped_limit *capped, int *ncapped, cr_error *err)
{
    const char *key = cr_config_option(id);
    char text[32];
    if (json_is_integer(v))
        snprintf(text, sizeof text, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
    else if (json_is_real(v))
        snprintf(text, sizeof text, "%.17g", json_real_value(v));   /* the same double back */
    else
        return cr_error_set(err, CR_EUSAGE, 0, 0, "policy: %s: want a number", member);
    cr_code rc = cr_config_set(cfg, key, text, err);
    if (rc != CR_OK || (cx->flags & CR_REPLAY_TRUST_LIMITS)) return rc;
    const router_config_value *got = &cfg->v[id], *most = &cx->defaults->v[id];
    if (id == CFG_TIMEOUT ? got->d <= most->d : got->u <= most->u) return CR_OK;
    capped_limit *c = &capped[(*ncapped)++];
    c->option = key;
    snprintf(c->recorded, sizeof c->recorded, "%s", text);
    snprintf(c->granted, sizeof c->granted, "%s", cr_config_get(cx->defaults, key));
    return cr_config_set(cfg, key, c->granted, err);
}

/* Raises cfg's timeout to the most a replay grants: 0 when it is there already. */
static int grant_time(replay_ctx *cx, cr_config *cfg)
{
    if (cfg->v[CFG_TIMEOUT].d >= cx->defaults->v[CFG_TIMEOUT].d) return 0;
    return cr_config_set(cfg, "timeout", cr_config_get(cx->defaults, "timeout"), NULL) == CR_OK;
}

#define COUNT(id, member) +1
enum { NLIMITS = 0 ROUTER_RECORDED_LIMITS(COUNT) };
#undef COUNT

/* The options record r ran under: its tier, what its policy kept (the limits, the
 * interpreter of a sandboxed run) and the data directory given for the replay. CR_EUSAGE
 * naming a recorded value that no engine takes. */
static cr_code record_config(replay_ctx *cx, int which, json_t *policy, cr_config *cfg,
                             capped_limit capped[NLIMITS], int *ncapped, cr_error *err)
{
    static const char *const tiers[3] = { "none", "ns", "kvm" };
    const char *interp = json_string_value(json_object_get(policy, "interpreter"));
    json_t *v;
    cr_code rc = cr_config_set(cfg, "tier", tiers[which], err);
    if (rc == CR_OK && which > 0 && cx->data_dir) rc = cr_config_set(cfg, "data", cx->data_dir, err);
    if (rc == CR_OK && which > 0 && interp) rc = cr_config_set(cfg, "interpreter", interp, err);
    *ncapped = 0;
#define LIMIT(id, member) \
    if (rc == CR_OK && (v = json_object_get(policy, member))) \
        rc = set_limit(cx, cfg, CFG_##id, member, v, capped, ncapped, err);
    ROUTER_RECORDED_LIMITS(LIMIT)
#undef LIMIT
    return rc;
}

/* An engine with exactly cfg's options: one kept from an earlier record, or a new one. No
 * "audit": a replay must never append to any ledger. An in-process record replays where no
 * sandbox exists: if the router's decision changed, the result says rejected and the route
 * differs, and nothing runs. */
static cr_engine *engine_for(replay_ctx *cx, const cr_config *cfg, cr_error *err)
{
    cr_buf key;
    int failed = 0;
    cr_buf_init(&key, 0);
    for (size_t i = 0; cr_config_option(i); i++) {
        const char *v = cr_config_get(cfg, cr_config_option(i));
        failed |= cr_buf_printf(&key, "%zu:%s", v ? strlen(v) : 0, v ? v : "") != CR_OK;
    }
    char *k = failed ? NULL : cr_buf_take(&key, NULL);
    cr_buf_free(&key);
    if (!k) {
        cr_error_set(err, CR_ENOMEM, 0, 0, "replay: engine");
        return NULL;
    }
    for (int i = 0; i < REPLAY_ENGINES; i++)
        if (cx->engines[i].key && !strcmp(cx->engines[i].key, k)) {
            free(k);
            return cx->engines[i].e;
        }
    cr_engine *e = cr_engine_open(cfg, err);
    if (!e) {
        free(k);
        return NULL;
    }
    replay_engine *slot = &cx->engines[cx->evict++ % REPLAY_ENGINES];
    cr_engine_close(slot->e);
    free(slot->key);
    slot->key = k;
    slot->e = e;
    return e;
}

/* "N bytes, sha256 H" (or the entry's type) of one manifest entry, for a difference. */
static char *entry_text(json_t *f)
{
    char *t = NULL;
    json_t *type = json_object_get(f, "type"), *un = json_object_get(f, "unreadable");
    if (json_is_string(type)) t = strdup(json_string_value(type));
    else if (json_is_string(un)) t = strdup(json_string_value(un));
    else {
        const char *h = json_string_value(json_object_get(f, "sha256"));
        if (asprintf(&t, "%lld bytes, sha256 %s",
                     (long long)json_integer_value(json_object_get(f, "size")), h ? h : "?") < 0)
            t = NULL;
    }
    return t;
}

/* A manifest's files by name (a new reference; NULL when out of memory). */
static json_t *by_name(json_t *files)
{
    json_t *o = json_object(), *f;
    size_t i;
    json_array_foreach(files, i, f) {
        const char *name = json_string_value(json_object_get(f, "name"));
        if (o && name && json_object_set(o, name, f) != 0) {
            json_decref(o);
            o = NULL;
        }
    }
    return o;
}

/* Each file of `a` that `b` (by name) lacks or holds otherwise, as a difference "data/NAME"
 * (want is the recorded side). */
static void data_side(replay_ctx *cx, uint64_t seq, json_t *a, json_t *b, int a_recorded)
{
    size_t i;
    json_t *f;
    json_array_foreach(a, i, f) {
        const char *name = json_string_value(json_object_get(f, "name"));
        if (!name) continue;
        json_t *g = json_object_get(b, name);
        char *ft = entry_text(f), *gt = g ? entry_text(g) : NULL;
        if ((!g || strcmp(ft ? ft : "", gt ? gt : "")) && (a_recorded || !g)) {
            char field[ROUTER_DATA_NAME_MAX + 8];
            snprintf(field, sizeof field, "data/%s", name);
            const char *w = a_recorded ? ft : gt, *x = a_recorded ? gt : ft;
            differ(cx, seq, field, w, w ? strlen(w) : 0, x, x ? strlen(x) : 0);
        }
        free(ft);
        free(gt);
    }
}

/* The recorded manifest of the data directory against --data's, before anything runs: a file
 * added, missing or different is a difference naming it; so is a record that read a data
 * directory replayed without one. */
static void check_data(replay_ctx *cx, uint64_t seq, json_t *policy)
{
    json_t *want = json_object_get(json_object_get(json_object_get(policy, "inputs"), "data"),
                                   "files");
    if (!want) return;
    if (!cx->data_dir) {
        static const char w[] = "a data directory (replay with --data DIR)";
        differ(cx, seq, "data", w, sizeof w - 1, NULL, 0);
        return;
    }
    if (!cx->data_files && !cx->data_err.message[0]) {
        json_t *m = NULL;
        if (router_data_manifest(cx->data_dir, NULL, &m, &cx->data_err) == CR_OK) {
            cx->data_files = json_incref(json_object_get(m, "files"));
            json_decref(m);
        }
    }
    if (!cx->data_files) {
        differ(cx, seq, "data", "a data directory", 16, cx->data_err.message,
               strlen(cx->data_err.message));
        return;
    }
    json_t *want_by = by_name(want);
    if (!cx->data_by) cx->data_by = by_name(cx->data_files);
    if (!want_by || !cx->data_by) {
        differ(cx, seq, "data", "a data directory", 16, "out of memory", 13);
    } else {
        data_side(cx, seq, want, cx->data_by, 1);
        data_side(cx, seq, cx->data_files, want_by, 0);
    }
    json_decref(want_by);
}

/* The run's interpreter and packages against the record's: the interpreter's version, and
 * the version of each recorded package the re-run loaded too (a package loaded on one side
 * alone, such as a warm worker's preload, is no finding: a missing import shows in the
 * result). */
static void check_runtime(replay_ctx *cx, uint64_t seq, json_t *policy, const cr_result *res)
{
    json_t *want = json_object_get(policy, "inputs"), *got = res->sandbox_inputs;
    const char *wv = json_string_value(json_object_get(json_object_get(want, "interpreter"),
                                                       "version"));
    const char *gv = json_string_value(json_object_get(json_object_get(got, "interpreter"),
                                                       "version"));
    if (wv && gv) compare_str(cx, seq, "interpreter", wv, strlen(wv), gv);
    json_t *wp = json_object_get(want, "packages"), *gp = json_object_get(got, "packages"), *v;
    const char *name;
    json_object_foreach(wp, name, v) {
        const char *w = json_string_value(v), *g = json_string_value(json_object_get(gp, name));
        if (w && g && strcmp(w, g) != 0) {
            char field[300];
            snprintf(field, sizeof field, "packages/%s", name);
            compare_str(cx, seq, field, w, strlen(w), g);
        }
    }
}

/* The result against the record, field by field. */
static void compare_result(replay_ctx *cx, uint64_t seq, const audit_record *r,
                           const cr_result *res)
{
    size_t gl;
    const char *g;
    compare_str(cx, seq, "route", r->route, r->route_len, cr_route_name(cr_result_route(res)));
    compare_int(cx, seq, "status", r->status, cr_result_status(res));
    compare_str(cx, seq, "value_fraction", r->value_fraction, r->value_fraction_len,
                cr_result_value_fraction(res));
    compare_str(cx, seq, "value_repr", r->value_repr, r->value_repr_len,
                cr_result_value_repr(res));
    compare_str(cx, seq, "value_type", r->value_type, r->value_type_len,
                cr_result_value_type(res));
    int clock = compare_error(cx, seq, r, res);
    g = cr_result_stdout(res, &gl);
    compare_output(cx, seq, "stdout", r->out, r->out_len, g, g ? gl : 0, clock);
    g = cr_result_stderr(res, &gl);
    compare_output(cx, seq, "stderr", r->err_out, r->err_out_len, g, g ? gl : 0, clock);
}

/* Whether the result differs from the record, saying nothing. */
static int result_differs(replay_ctx *cx, uint64_t seq, const audit_record *r,
                          const cr_result *res)
{
    void (*diff)(uint64_t, const char *, const char *, const char *, void *) = cx->diff;
    int before = cx->ndiff;
    cx->diff = NULL;
    compare_result(cx, seq, r, res);
    cx->diff = diff;
    int differs = cx->ndiff != before;
    cx->ndiff = before;
    return differs;
}

/* The run against its record, where the environment was the same: a difference that only a
 * clock or a lowered limit made is named by that, not by the fields it changed. */
static void compare_run(replay_ctx *cx, uint64_t seq, const audit_record *r,
                        const cr_result *res, const capped_limit *capped, int ncapped)
{
    if (clock_alone(r, res) < 0) {
        /* The clock stopped the recorded run and not this one: the difference is the
         * machine's speed, and the fields would only restate it. */
        errors x;
        errors_read(r, res, &x);
        const char *m = json_string_value(json_object_get(x.want, "message"));
        static const char got[] = "not reached: the run ended within it here";
        differ(cx, seq, "timeout", m, m ? strlen(m) : 0, got, sizeof got - 1);
        errors_free(&x);
    } else if (ncapped && result_differs(cx, seq, r, res)) {
        /* Run under less than it was granted: the shortfall is what differs. */
        for (int i = 0; i < ncapped; i++) {
            char got[200];
            snprintf(got, sizeof got, "run under %s: a replay grants no more unless it trusts"
                     " the ledger's limits (--trust-limits)", capped[i].granted);
            differ(cx, seq, capped[i].option, capped[i].recorded, strlen(capped[i].recorded),
                   got, strlen(got));
        }
    } else {
        compare_result(cx, seq, r, res);
    }
}

/* audit_walk()'s visitor: one record, run under the options it ran under. Failing to replay
 * it is a difference, never a stop. */
static cr_code replay_one(const audit_entry *e, void *arg)
{
    replay_ctx *cx = arg;
    const audit_record *r = &e->rec;
    cr_error run_err = {0}, *err = &run_err;
    cx->ndiff = 0;
    int which = field_is(r->route, r->route_len, "inprocess") ? 0
              : field_is(r->route, r->route_len, "ns") ? 1
              : field_is(r->route, r->route_len, "kvm") ? 2 : -1;
    /* An interrupted run stopped wherever the interrupt found it: nothing to reproduce. */
    if (which < 0 || (which > 0 && !(cx->flags & CR_REPLAY_SANDBOX)) ||
        r->status == CR_EINTERRUPTED) {
        cx->rep->skipped++;
        return CR_OK;
    }
    json_t *policy = NULL;
    cr_config *cfg = NULL;
    cr_engine *eng = NULL;
    cr_request *req = NULL;
    cr_result *res = NULL;
    capped_limit capped[NLIMITS];
    int ncapped = 0, said = 0;
    cr_code rc = CR_OK;
    if (r->policy) {
        json_error_t je;
        policy = json_loadb(r->policy, r->policy_len, 0, &je);
        if (!json_is_object(policy))
            rc = cr_error_set(err, CR_EUSAGE, je.line, je.column, "policy: not a JSON object");
    }
    if (rc == CR_OK && which > 0) {
        check_data(cx, e->seq, policy);
        if (cx->ndiff) {
            /* Different inputs make different answers: the run would only restate that. */
            cx->rep->replayed++;
            cx->rep->differences++;
            json_decref(policy);
            return CR_OK;
        }
    }
    if (rc == CR_OK && !(cfg = cr_config_new()))
        rc = cr_error_set(err, CR_ENOMEM, 0, 0, "replay: engine");
    if (rc == CR_OK) rc = record_config(cx, which, policy, cfg, capped, &ncapped, err);
    if (rc == CR_OK && !(eng = engine_for(cx, cfg, err))) {
        rc = err->code ? err->code : CR_EINTERNAL;
        /* A sandboxed record's python that this host lacks: that part of its environment
         * cannot be had here. */
        const char *interp = json_string_value(json_object_get(policy, "interpreter"));
        if (which > 0 && interp) {
            differ(cx, e->seq, "interpreter", interp, strlen(interp), err->message,
                   strlen(err->message));
            said = 1;
        }
    }
    if (rc == CR_OK) rc = build_request(r, policy, &req, err);
    if (rc == CR_OK) rc = cr_run(eng, req, &res, err);
    /* The run ended within its timeout where it was recorded and not here: this machine is
     * slower, which is no property of the code. It runs again under what the replay grants
     * at most, and that result is compared. */
    if (rc == CR_OK && clock_alone(r, res) > 0 && grant_time(cx, cfg)) {
        cr_result_free(res);
        res = NULL;
        rc = (eng = engine_for(cx, cfg, err)) ? cr_run(eng, req, &res, err)
                                              : err->code ? err->code : CR_EINTERNAL;
    }
    if (rc != CR_OK && !said) {
        /* The request was accepted once; failing to rebuild or run it is a difference, with
         * the reason, not a reason to stop the whole replay. */
        differ(cx, e->seq, "run", "a result", 8, err->message, strlen(err->message));
    } else if (rc == CR_OK) {
        /* Another interpreter or package version: the result is that environment's, so the
         * difference named is the environment's, not a field the code printed. */
        if (which > 0) check_runtime(cx, e->seq, policy, res);
        if (cx->ndiff == 0) compare_run(cx, e->seq, r, res, capped, ncapped);
    }
    cx->rep->replayed++;
    if (cx->ndiff == 0) cx->rep->matched++;
    else if (which == 0) cx->rep->differences++;
    else cx->rep->sandbox_differences++;
    cr_result_free(res);
    cr_request_free(req);
    cr_config_free(cfg);
    json_decref(policy);
    return CR_OK;
}

cr_code cr_audit_replay_data(cr_audit *a, uint64_t from, uint64_t to, int flags,
                             const char *data_dir,
                             void (*diff)(uint64_t seq, const char *field, const char *want,
                                          const char *got, void *arg),
                             void *arg, cr_audit_replay_report *rep, cr_error *err)
{
    replay_ctx cx = { .diff = diff, .arg = arg, .rep = rep, .flags = flags,
                      .data_dir = data_dir, .defaults = cr_config_new() };
    memset(rep, 0, sizeof *rep);
    if (!cx.defaults) return cr_error_set(err, CR_ENOMEM, 0, 0, "replay");
    /* Records asked for that the ledger does not hold are a finding, not an empty success. */
    cr_code rc = audit_walk(a, "replay", from, to, replay_one, &cx, err);
    for (int i = 0; i < REPLAY_ENGINES; i++) {
        cr_engine_close(cx.engines[i].e);
        free(cx.engines[i].key);
    }
    cr_config_free(cx.defaults);
    json_decref(cx.data_files);
    json_decref(cx.data_by);
    return rc;
}

cr_code cr_audit_replay(cr_audit *a, uint64_t from, uint64_t to, int flags,
                        void (*diff)(uint64_t seq, const char *field, const char *want,
                                     const char *got, void *arg),
                        void *arg, cr_audit_replay_report *rep, cr_error *err)
{
    return cr_audit_replay_data(a, from, to, flags, NULL, diff, arg, rep, err);
}
