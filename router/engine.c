/* router/engine.c: the engine and the life of one request: parse, decide, run, record.
 * The decision comes from the parse and the policy alone, never from trying the evaluator
 * and falling back, so it can be explained before anything runs. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "dsl/dsl.h"
#include "evaluator/evaluator.h"
#include "parser/parser.h"
#include "audit/audit.h"
#include "router/router.h"
#include "sandbox/sandbox.h"

/* pool=auto: CR_DEFAULT_POOL_PER_CPU warm sandboxes a CPU the engine may use (starting one is
 * CPU-bound), and no more than one per CR_DEFAULT_POOL_MEMORY_SHARE-th of its memory divided
 * by a sandbox's limit, 1 to SANDBOX_POOL_MAX. */
static unsigned pool_auto_size(const cr_engine *e)
{
    double cpus, mem;
    sandbox_host_share(&cpus, &mem);
    double n = cpus * CR_DEFAULT_POOL_PER_CPU;
    double by_mem = mem / CR_DEFAULT_POOL_MEMORY_SHARE / ((double)e->memory_mib * 1048576.0);
    if (by_mem < n) n = floor(by_mem);
    return n < 1 ? 1 : n > SANDBOX_POOL_MAX ? SANDBOX_POOL_MAX : (unsigned)n;
}

/* The warm pool, made with what every sandboxed run of the engine gets. Only the ns tier has
 * one: where auto picks kvm (router_host_tier(), as the decision does), requests start cold.
 * pool=auto asks for one where it can be had and does without, saying why, elsewhere. */
static cr_code open_pool(cr_engine *e, const char *preload, const char *warmup, cr_error *err)
{
    sandbox_pool_config pc;
    router_host host = { .tier = e->tier };
    int autosize = e->cfg->v[CFG_POOL].u == CFG_AUTO;
    if (e->tier == CR_TIER_KVM || e->tier == CR_TIER_NONE) {
        if (autosize) {
            snprintf(e->pool_note, sizeof e->pool_note, "no warm pool: the %s tier has none",
                     sandbox_tier_word(e->tier));
            return CR_OK;
        }
        return cr_error_set(err, CR_EUSAGE, 0, 0, "warm pool: the %s tier has none (the ns "
                            "tier has)", sandbox_tier_word(e->tier));
    }
    if (e->tier == CR_TIER_AUTO) router_host_tier(e, &host);
    if (host.tier != CR_TIER_NS) {
        snprintf(e->pool_note, sizeof e->pool_note, "no warm pool: sandboxes run in the %s "
                 "tier here", sandbox_tier_word(host.tier));
        return CR_OK;
    }
    memset(&pc, 0, sizeof pc);
    pc.size = autosize ? pool_auto_size(e) : (unsigned)e->cfg->v[CFG_POOL].u;
    pc.queue = (unsigned)e->cfg->v[CFG_QUEUE].u;
    pc.preload = preload && strcmp(preload, "auto") == 0 ? CR_DEFAULT_PRELOAD_AUTO : preload;
    pc.warmup = warmup;
    pc.refill = e->cfg->v[CFG_REFILL].u != 0;
    pc.interpreter = e->interpreter;
    pc.data_dir = e->data_dir;
    pc.allow_dir = e->allow_dir;
    router_sandbox_limits(e, &pc.limits);
    cr_code rc = sandbox_pool_open(&pc, &e->pool, err);
    if (rc == CR_ESANDBOX && autosize) {
        snprintf(e->pool_note, sizeof e->pool_note, "no warm pool: %.140s", err->message);
        memset(err, 0, sizeof *err);
        return CR_OK;
    }
    if (rc == CR_OK) e->pool_size = pc.size;
    return rc;
}

cr_engine *cr_engine_open(const cr_config *cfg, cr_error *err)
{
    /* Every option was checked when it was set (cr_config_set()): what is left to check
     * here depends on more than one (the interpreter and allow_dir) or on the host. */
    cr_engine *e = calloc(1, sizeof *e);
    if (!e || !(e->cfg = router_config_dup(cfg))) {
        free(e);
        cr_error_set(err, CR_ENOMEM, 0, 0, "engine");
        return NULL;
    }
    const router_config_value *v = e->cfg->v;
    e->tier = (cr_tier)v[CFG_TIER].u;
    e->timeout_s = v[CFG_TIMEOUT].d;
    e->memory_mib = (unsigned)v[CFG_MEMORY].u;
    e->audit_path = v[CFG_AUDIT].text;
    e->interpreter = v[CFG_INTERPRETER].text ? v[CFG_INTERPRETER].text
                                             : SANDBOX_DEFAULT_INTERPRETER;
    e->data_dir = v[CFG_DATA].text;
    e->out_dir = v[CFG_OUT].text;
    e->allow_dir = v[CFG_ALLOW_DIR].text;
    e->kvm_dir = v[CFG_KVM_DIR].text;
    router_config_policy(e->cfg, &e->policy);
    e->policy.limits.interrupt_fd = &e->intr[0];
    if (pipe2(e->intr, O_CLOEXEC | O_NONBLOCK) < 0) {
        e->intr[0] = e->intr[1] = -1;
        cr_error_sys(err, CR_EINTERNAL, "engine: interrupt pipe", errno);
        cr_engine_close(e);
        return NULL;
    }
    /* A sandbox the caller configured fails now, not at its first request; the default
     * interpreter is checked when a request needs it, so a host without python can still
     * answer in-process. */
    if ((strcmp(e->interpreter, SANDBOX_DEFAULT_INTERPRETER) || e->allow_dir) &&
        sandbox_interpreter_check(e->interpreter, e->allow_dir, err) != CR_OK) {
        cr_engine_close(e);
        return NULL;
    }
    if (e->audit_path && audit_open(e->audit_path, AUDIT_OPEN_CREATE, &e->audit, err) != CR_OK) {
        cr_engine_close(e);
        return NULL;
    }
    /* Every audited sandboxed run records the data directory's manifest. */
    if (e->audit && e->data_dir && !(e->digests = router_digests_new())) {
        cr_error_set(err, CR_ENOMEM, 0, 0, "engine: data digests");
        cr_engine_close(e);
        return NULL;
    }
    if (v[CFG_POOL].u &&
        open_pool(e, v[CFG_PRELOAD].text, v[CFG_WARMUP].text, err) != CR_OK) {
        cr_engine_close(e);
        return NULL;
    }
    return e;
}

void cr_engine_close(cr_engine *e)
{
    if (!e) return;
    sandbox_pool_close(e->pool);
    audit_close(e->audit);
    router_digests_free(e->digests);
    if (e->intr[0] >= 0) close(e->intr[0]);
    if (e->intr[1] >= 0) close(e->intr[1]);
    cr_config_free(e->cfg);
    free(e);
}

const cr_config *cr_engine_config(const cr_engine *e)
{
    return e->cfg;
}

void cr_engine_pool_state(cr_engine *e, size_t *size, size_t *ready)
{
    *size = e->pool ? e->pool_size : 0;
    *ready = e->pool ? sandbox_pool_ready(e->pool, NULL, 0) : 0;
}

size_t cr_engine_pool_waiting(cr_engine *e)
{
    sandbox_pool_health h;
    sandbox_pool_state(e ? e->pool : NULL, &h);
    return h.waiting;
}

cr_code cr_engine_ready(cr_engine *e, const char *what, double seconds, cr_error *err)
{
    int pool = !what || strcmp(what, "pool") == 0, ledger = !what || strcmp(what, "ledger") == 0;
    if (!e || !(pool || ledger))
        return cr_error_set(err, CR_EUSAGE, 0, 0, "cr_engine_ready: want pool, ledger or NULL");
    if (pool && e->pool) {
        sandbox_pool_health h;
        sandbox_pool_state(e->pool, &h);
        if (!h.warm && seconds > 0) {
            sandbox_pool_wait_ready(e->pool, h.size, seconds);
            sandbox_pool_state(e->pool, &h);
        }
        if (!h.warm) return cr_error_set(err, CR_EBUSY, 0, 0, "pool: %s", h.why);
    }
    if (ledger && e->audit) {
        uint64_t seq;
        uint8_t hash[AUDIT_HASH_LEN];
        cr_code rc = audit_head(e->audit, &seq, hash, err);   /* the ledger answers a read */
        if (rc != CR_OK) return rc;
    }
    return CR_OK;
}

const char *cr_engine_pool_note(const cr_engine *e)
{
    return e && e->pool_note[0] ? e->pool_note : NULL;
}

/* Only a write(2), async-signal-safe. The pipe stays readable until resumed, so every run
 * under way, and each one started meanwhile, sees it (a full pipe is readable already). */
void cr_engine_interrupt(cr_engine *e)
{
    int saved = errno;
    if (!e) return;
    (void)!write(e->intr[1], "!", 1);
    errno = saved;
}

int cr_engine_interrupt_fd(const cr_engine *e)
{
    return e ? e->intr[1] : -1;
}

void cr_engine_resume(cr_engine *e)
{
    char buf[256];
    ssize_t n;
    if (!e) return;
    do n = read(e->intr[0], buf, sizeof buf); while (n > 0 || (n < 0 && errno == EINTR));
}

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static char *xstrdup(const char *s, int *oom)
{
    if (!s) return NULL;
    char *d = strdup(s);
    if (!d) *oom = 1;
    return d;
}

static cr_code copy_reasons(cr_result *res, const ir_module *m)
{
    if (!m->nreasons) return CR_OK;
    res->reasons = calloc(m->nreasons, sizeof *res->reasons);
    if (!res->reasons) return CR_ENOMEM;
    int oom = 0;
    for (size_t i = 0; i < m->nreasons; i++) {
        res->reasons[i].code = xstrdup(m->reasons[i].code, &oom);
        res->reasons[i].snippet = xstrdup(m->reasons[i].snippet, &oom);
        res->reasons[i].line = m->reasons[i].line;
        res->reasons[i].col = m->reasons[i].col;
        res->nreasons = i + 1;
    }
    return oom ? CR_ENOMEM : CR_OK;
}

static void take_eval(cr_result *res, eval_result *ev)
{
    res->status = ev->status;
    res->error = ev->error;
    res->stdout_text = ev->stdout_text;
    res->stdout_len = ev->stdout_len;
    res->stdout_truncated = ev->stdout_truncated;
    ev->stdout_text = NULL;
    res->has_value = ev->has_value;
    res->value_exact = ev->exact;
    res->value_repr = ev->value_repr;
    res->value_type = ev->value_type;
    res->value_fraction = ev->value_fraction;
    res->value_from = ev->value_from;
    res->value_native = ev->value_native;
    res->value_native_why = ev->value_native_why;
    ev->value_native = NULL;
    ev->value_native_why = NULL;
    ev->value_repr = ev->value_type = ev->value_fraction = ev->value_from = NULL;
    res->ops = ev->ops;
}

/* The FinQA DSL: the table (when given) and the program, lowered to the same IR. */
static cr_code dsl_front_end(const cr_request *req, const cr_policy *pol, ir_module **m,
                             cr_error *perr)
{
    dsl_table *t = NULL;
    cr_code rc = CR_OK;
    if (req->table) {
        char *text = router_table_json(req);
        if (!text) return cr_error_set(perr, CR_ENOMEM, 0, 0, "table");
        rc = dsl_table_from_json(text, strlen(text), &pol->limits, &t, perr);
        free(text);
    }
    if (rc == CR_OK)
        rc = dsl_compile(req->code ? req->code : "", req->code_len, t, &pol->limits, m, perr);
    dsl_table_free(t);
    return rc;
}

/* Parses the request's code into IR, in the request's language. CR_OK with *m set, or a
 * status for the result (CR_ESYNTAX, CR_ELIMIT, CR_EREJECTED for a program that does not
 * fit its table) with res->error filled, or an engine failure. */
static cr_code front_end_here(const cr_request *req, const cr_policy *pol, cr_result *res,
                              ir_module **m, cr_error *err)
{
    cr_error perr = {0};
    cr_code rc;
    if (res->lang == CR_LANG_DSL)
        rc = dsl_front_end(req, pol, m, &perr);
    else
        rc = parser_parse_python(req->code ? req->code : "", req->code_len, &pol->limits, m,
                                 &perr);
    if (rc == CR_OK) return CR_OK;
    if (rc == CR_ESYNTAX || rc == CR_ELIMIT || rc == CR_EUSAGE) {
        res->status = rc == CR_EUSAGE ? CR_EREJECTED : rc;
        res->error = perr;
        res->error.code = res->status;
        return CR_OK;
    }
    if (err) *err = perr;
    return rc;
}

/* Parsing and lowering recurse as deep as the syntax nests (limits.max_depth): up to
 * 170 KiB of stack at -O2 and 370 KiB under ASan (200 nested brackets), more than a small
 * thread a pipeline calls from may have left. Such a caller's request is parsed on a new
 * stack of FRONT_END_STACK * 8. */
#define FRONT_END_STACK ((size_t)1 << 20)

typedef struct {
    const cr_request *req;
    const cr_policy *pol;
    cr_result *res;
    ir_module **m;
    cr_error *err;
    cr_code rc;
} front_args;

static void front_end_run(void *p)
{
    front_args *a = p;
    a->rc = front_end_here(a->req, a->pol, a->res, a->m, a->err);
}

static cr_code front_end(const cr_request *req, const cr_policy *pol, cr_result *res,
                         ir_module **m, cr_error *err)
{
    if (cr_stack_left() >= FRONT_END_STACK) return front_end_here(req, pol, res, m, err);
    front_args a = { req, pol, res, m, err, CR_EINTERNAL };
    int e = cr_on_new_stack(FRONT_END_STACK * 8, front_end_run, &a);
    return e ? cr_error_sys(err, CR_ENOMEM, "a thread with a stack for the parser", e) : a.rc;
}

/* An interrupt before the run began: it does not begin. */
static int interrupted(const cr_policy *pol, cr_result *res)
{
    struct pollfd p = { .fd = *pol->limits.interrupt_fd, .events = POLLIN };
    if (poll(&p, 1, 0) != 1) return 0;
    res->status = cr_error_set(&res->error, CR_EINTERRUPTED, 0, 0, "interrupted before it ran");
    return 1;
}

/* The engine's policy with what the request sets. Names point into req. */
static void request_policy(const cr_engine *e, const cr_request *req, cr_policy *pol)
{
    *pol = e->policy;
    if (req->precision) pol->precision = req->precision;
    if (req->rounding >= 0) pol->rounding = (cr_rounding)req->rounding;
    if (req->answer_names[0]) {
        const char *p = req->answer_names;
        size_t i = 0;
        for (; i < 3 && *p; i++, p += strlen(p) + 1) pol->answer_vars[i] = p;
        pol->answer_vars[i] = NULL;
    }
}

/* Step 1: the request's language and its IR in *m, or *m NULL and res rejected (a syntax
 * error, a limit, a table given to Python) with res->error saying why. */
static cr_code parse(const cr_request *req, const cr_policy *pol, cr_result *res,
                     ir_module **m, cr_error *err)
{
    double t0 = now_us();
    res->lang = req->lang;
    if (res->lang == CR_LANG_AUTO)
        res->lang = req->code && dsl_looks_like(req->code, req->code_len) ? CR_LANG_DSL
                                                                         : CR_LANG_PYTHON;
    res->route = CR_ROUTE_REJECTED;
    if (res->lang == CR_LANG_PYTHON && req->table) {
        /* only the DSL's table_* operations read a table: Python code would run without it */
        res->status = cr_error_set(&res->error, CR_EREJECTED, 0, 0,
                                   "a table is read by DSL programs only (table_sum, ...), and "
                                   "this code is Python: pass the cells as variables");
        return CR_OK;
    }
    cr_code rc = front_end(req, pol, res, m, err);
    if (rc == CR_OK) res->parse_us = now_us() - t0;
    return rc;
}

/* Step 2: router_decide() on the parse, its reasons and its outcome into res. */
static cr_code decide(const cr_engine *e, const ir_module *m, cr_result *res,
                      router_decision *d, cr_error *err)
{
    router_host host, *h = NULL;
    if (copy_reasons(res, m) != CR_OK) return cr_error_set(err, CR_ENOMEM, 0, 0, "reasons");
    if (router_needs_host(m, e->tier)) router_host_tier(e, h = &host);
    router_decide(m, e->tier, h, d);
    res->route = d->route;
    if (d->status != CR_OK) {
        res->status = d->status;
        res->error = d->error;
    }
    if (d->tier_why[0] && !(res->tier_why = strdup(d->tier_why)))
        return cr_error_set(err, CR_ENOMEM, 0, 0, "result");
    return CR_OK;
}

/* Step 3: runs the decided tier, unless the request asked for the decision only. The IR
 * is freed (and *m set NULL) before a sandbox runs: the sandbox gets the source. */
static cr_code run_tier(cr_engine *e, const cr_request *req, const cr_policy *pol,
                        const router_decision *d, ir_module **m, cr_result *res, cr_error *err)
{
    if (req->explain) {
        res->explained = 1;
        return CR_OK;
    }
    if (d->route != CR_ROUTE_INPROCESS) {
        ir_module_free(*m);
        *m = NULL;
    }
    if (interrupted(pol, res)) return CR_OK;
    double t1 = now_us();
    cr_code rc;
    if (d->route == CR_ROUTE_INPROCESS) {
        eval_result ev;
        rc = eval_run(*m, req->binds, req->nbinds, pol, &ev, err);
        if (rc == CR_OK) take_eval(res, &ev);
        eval_result_free(&ev);
    } else {
        rc = router_run_sandbox(e, req, pol, d, res, err);
    }
    res->eval_us = now_us() - t1;
    return rc;
}

/* A request with its own interrupt watches one descriptor all the same: an epoll set of the
 * engine's pipe and the request's, readable while either is, which the sandbox's supervision
 * loop, the pool's queue and the evaluator's budget check poll as they poll the engine's
 * alone (so none of them learns of two). *ep the set. */
static cr_code interrupt_set(const cr_engine *e, int fd, int *ep, cr_error *err)
{
    struct epoll_event ev = { .events = EPOLLIN };
    *ep = epoll_create1(EPOLL_CLOEXEC);
    if (*ep >= 0 && epoll_ctl(*ep, EPOLL_CTL_ADD, e->intr[0], &ev) == 0 &&
        epoll_ctl(*ep, EPOLL_CTL_ADD, fd, &ev) == 0)
        return CR_OK;
    int saved = errno;
    if (*ep >= 0) close(*ep);
    *ep = -1;
    return cr_error_sys(err, saved == EBADF || saved == EPERM ? CR_EUSAGE : CR_EINTERNAL,
                        "the request's interrupt descriptor", saved);
}

/* Parse, decide, run the tier, record: each step leaves res as the caller gets it when the
 * steps after it do nothing (a rejected request runs nothing; an explained one is not
 * recorded). */
cr_code cr_run(cr_engine *e, const cr_request *req, cr_result **out, cr_error *err)
{
    if (out) *out = NULL;
    if (!e || !req || !out) return cr_error_set(err, CR_EUSAGE, 0, 0, "cr_run: NULL argument");
    double t0 = now_us();
    cr_result *res = calloc(1, sizeof *res);
    if (!res) return cr_error_set(err, CR_ENOMEM, 0, 0, "result");
    cr_policy pol;
    request_policy(e, req, &pol);
    int intr = -1;
    if (req->interrupt_fd >= 0) {
        cr_code rc = interrupt_set(e, req->interrupt_fd, &intr, err);
        if (rc != CR_OK) {
            free(res);
            return rc;
        }
        pol.limits.interrupt_fd = &intr;
    }
    ir_module *m = NULL;
    router_decision d;
    cr_code rc = parse(req, &pol, res, &m, err);
    if (rc == CR_OK && m) rc = decide(e, m, res, &d, err);
    if (rc == CR_OK && m && d.route != CR_ROUTE_REJECTED)
        rc = run_tier(e, req, &pol, &d, &m, res, err);
    ir_module_free(m);
    res->total_us = now_us() - t0;
    if (rc == CR_OK && !res->explained) rc = router_record(e, req, &pol, res, err);
    if (intr >= 0) close(intr);
    if (rc != CR_OK) {
        cr_result_free(res);
        return rc;
    }
    *out = res;
    return CR_OK;
}
