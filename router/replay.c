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

typedef struct {
    cr_engine *engines[CR_TIER_NONE + 1]; /* by the tier a record ran in (none: in-process):
                                            opened on first use */
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

/* The recorded error is the "error" member of the result's JSON ({type, message, line, col}
 * or null); the new result's must be equal, every string byte for byte. */
static void compare_error(replay_ctx *cx, uint64_t seq, const audit_record *r,
                          const cr_result *res)
{
    /* A result's stdout may hold NUL bytes ("\u0000"), which jansson refuses unless told. */
    json_t *want = r->error ? json_loadb(r->error, r->error_len,
                                         JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL)
                            : json_null();
    const char *rj = cr_result_json(res);
    json_t *all = rj ? json_loads(rj, JSON_ALLOW_NUL, NULL) : NULL;
    json_t *got = json_object_get(all, "error");
    /* A LimitError's result has "error": null and the limit in "limit", which is what the
     * record keeps in its error column (router/record.c). */
    if ((!got || json_is_null(got)) && cr_result_status(res) == CR_ELIMIT)
        got = json_object_get(all, "limit");
    if (!got) got = json_null();
    if (!want || !json_equal(want, got)) {
        char *g = json_dumps(got, JSON_COMPACT | JSON_ENCODE_ANY);
        differ(cx, seq, "error", r->error, r->error_len, g, g ? strlen(g) : 0);
        free(g);
    }
    json_decref(want);
    json_decref(all);
}

/* Per-request policy from the record: precision, rounding, answer_vars, seed. */
static cr_code set_policy(cr_request *req, const audit_record *r, cr_error *err)
{
    if (!r->policy) return CR_OK;
    json_error_t je;
    json_t *p = json_loadb(r->policy, r->policy_len, 0, &je);
    if (!p || !json_is_object(p)) {
        json_decref(p);
        return cr_error_set(err, CR_EUSAGE, je.line, je.column, "policy: not a JSON object");
    }
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
    json_decref(p);
    return rc;
}

static cr_code build_request(const audit_record *r, cr_request **out, cr_error *err)
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
    if (rc == CR_OK) rc = set_policy(req, r, err);
    if (rc != CR_OK) {
        cr_request_free(req);
        req = NULL;
    }
    *out = req;
    return rc;
}

static cr_engine *engine_for(replay_ctx *cx, cr_tier which, cr_error *err)
{
    if (!cx->engines[which]) {
        /* No "audit": a replay must never append to any ledger. An in-process record
         * replays where no sandbox exists: if the router's decision changed, the result
         * says rejected and the route differs, and nothing runs. */
        cr_config *cfg = cr_config_new();
        if (!cfg) {
            cr_error_set(err, CR_ENOMEM, 0, 0, "replay: engine");
            return NULL;
        }
        if (cr_config_set(cfg, "tier", sandbox_tier_word(which), err) == CR_OK &&
            (!cx->data_dir || cr_config_set(cfg, "data", cx->data_dir, err) == CR_OK))
            cx->engines[which] = cr_engine_open(cfg, err);
        cr_config_free(cfg);
    }
    return cx->engines[which];
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
static void check_data(replay_ctx *cx, uint64_t seq, const audit_record *r)
{
    json_t *p = r->policy ? json_loadb(r->policy, r->policy_len, 0, NULL) : NULL;
    json_t *want = json_object_get(json_object_get(json_object_get(p, "inputs"), "data"),
                                   "files");
    if (!want) {
        json_decref(p);
        return;
    }
    if (!cx->data_dir) {
        static const char w[] = "a data directory (replay with --data DIR)";
        differ(cx, seq, "data", w, sizeof w - 1, NULL, 0);
    } else {
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
        } else {
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
    }
    json_decref(p);
}

/* The run's interpreter and packages against the record's: the interpreter's version, and
 * the version of each recorded package the re-run loaded too (a package loaded on one side
 * alone, such as a warm worker's preload, is no finding: a missing import shows in the
 * result). Differences of a sandboxed record: reported, not failed. */
static void check_runtime(replay_ctx *cx, uint64_t seq, const audit_record *r,
                          const cr_result *res)
{
    json_t *p = r->policy ? json_loadb(r->policy, r->policy_len, 0, NULL) : NULL;
    json_t *want = json_object_get(p, "inputs"), *got = res->sandbox_inputs;
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
    json_decref(p);
}

/* audit_walk()'s visitor: one record. Failing to replay it is a difference, never a stop. */
static cr_code replay_one(const audit_entry *e, void *arg)
{
    replay_ctx *cx = arg;
    const audit_record *r = &e->rec;
    cr_error run_err = {0}, *err = &run_err;
    cx->ndiff = 0;
    int which = field_is(r->route, r->route_len, "inprocess")
                    ? CR_TIER_NONE : sandbox_tier_find(r->route, r->route_len);
    /* An interrupted run stopped wherever the interrupt found it: nothing to reproduce. */
    if (which < 0 || (which != CR_TIER_NONE && !(cx->flags & CR_REPLAY_SANDBOX)) ||
        r->status == CR_EINTERRUPTED) {
        cx->rep->skipped++;
        return CR_OK;
    }
    cr_request *req = NULL;
    cr_result *res = NULL;
    if (which != CR_TIER_NONE) {
        check_data(cx, e->seq, r);
        if (cx->ndiff) {
            /* Different inputs make different answers: the run would only restate that. */
            cx->rep->replayed++;
            cx->rep->differences++;
            return CR_OK;
        }
    }
    cr_engine *eng = engine_for(cx, (cr_tier)which, err);
    cr_code rc = eng ? build_request(r, &req, err) : CR_EINTERNAL;
    if (rc == CR_OK) rc = cr_run(eng, req, &res, err);
    if (rc != CR_OK) {
        /* The request was accepted once; failing to rebuild or run it is a difference, with
         * the reason, not a reason to stop the whole replay. */
        differ(cx, e->seq, "run", "a result", 8, err->message, strlen(err->message));
    } else {
        size_t gl;
        const char *g;
        compare_str(cx, e->seq, "route", r->route, r->route_len,
                    cr_route_name(cr_result_route(res)));
        compare_int(cx, e->seq, "status", r->status, cr_result_status(res));
        compare_str(cx, e->seq, "value_fraction", r->value_fraction, r->value_fraction_len,
                    cr_result_value_fraction(res));
        compare_str(cx, e->seq, "value_repr", r->value_repr, r->value_repr_len,
                    cr_result_value_repr(res));
        compare_str(cx, e->seq, "value_type", r->value_type, r->value_type_len,
                    cr_result_value_type(res));
        g = cr_result_stdout(res, &gl);
        compare_bytes(cx, e->seq, "stdout", r->out, r->out_len, g, g ? gl : 0);
        g = cr_result_stderr(res, &gl);
        compare_bytes(cx, e->seq, "stderr", r->err_out, r->err_out_len, g, g ? gl : 0);
        compare_error(cx, e->seq, r, res);
        if (which != CR_TIER_NONE) check_runtime(cx, e->seq, r, res);
    }
    cx->rep->replayed++;
    if (cx->ndiff == 0) cx->rep->matched++;
    else if (which == CR_TIER_NONE) cx->rep->differences++;
    else cx->rep->sandbox_differences++;
    cr_result_free(res);
    cr_request_free(req);
    return CR_OK;
}

cr_code cr_audit_replay_data(cr_audit *a, uint64_t from, uint64_t to, int flags,
                             const char *data_dir,
                             void (*diff)(uint64_t seq, const char *field, const char *want,
                                          const char *got, void *arg),
                             void *arg, cr_audit_replay_report *rep, cr_error *err)
{
    replay_ctx cx = { .diff = diff, .arg = arg, .rep = rep, .flags = flags,
                      .data_dir = data_dir };
    memset(rep, 0, sizeof *rep);
    /* Records asked for that the ledger does not hold are a finding, not an empty success. */
    cr_code rc = audit_walk(a, "replay", from, to, replay_one, &cx, err);
    for (int i = 0; i <= CR_TIER_NONE; i++) cr_engine_close(cx.engines[i]);
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
