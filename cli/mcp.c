/* cli/mcp.c: the Model Context Protocol's message handler, one for both transports (the tools,
 * the methods, version negotiation for the handshake revisions and 2026-07-28's stateless one),
 * and `calc-route mcp`, its stdio transport (one JSON-RPC 2.0 message a line, no embedded
 * newlines) over one engine, so that a warm pool and the ledger live as long as the agent's
 * session. There requests are answered one at a time, in order, on the calling thread; a
 * reader thread takes the input meanwhile, so that a notifications/cancelled reaches the
 * request it names while that one runs or waits. */
#include "cli/mcp.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "cli/line.h"
#include "common/defaults.h"
#include "common/json.h"
#include "sandbox/sandbox.h"   /* SANDBOX_TIERS: the routes' words */

/* Newest first. 2026-07-28 has no initialize (a request names its version in _meta); the
 * others are negotiated by initialize, which answers with the client's version when it is
 * one of them, else the newest of them. 2025-03-26 is the one revision with JSON-RPC batches
 * (2025-06-18 removed them). */
static const char *const versions[] = { CR_MCP_MODERN, "2025-11-25", "2025-06-18",
                                        "2025-03-26", "2024-11-05" };
#define NVERSIONS (sizeof versions / sizeof *versions)
#define HANDSHAKE_VERSIONS (versions + 1)   /* those initialize negotiates */
#define BATCH_VERSION "2025-03-26"
/* The revision that brought structuredContent: older clients get the JSON as text too. */
#define STRUCTURED_VERSION "2025-06-18"
/* How long a client may keep tools/list and server/discover (2026-07-28's ttlMs): they never
 * change while the server runs, and a new calc-route may have other tools, so an hour. */
#define CACHE_TTL_MS 3600000
#define INSTRUCTIONS "calculate: exact in-process arithmetic (refuses what needs a sandbox); " \
                     "run_python: any Python, sandboxed when needed; explain: where code " \
                     "would run and why."

/* The tools' arguments are `calc-route --batch`'s line format (cr_request_set_json() reads
 * them, one home for their meaning); the output is `--json`'s object, whose members the
 * output schema names (the rest, such as timings, are there too). */
#define INPUT_SCHEMA \
    "{\"type\":\"object\",\"properties\":{" \
    "\"code\":{\"type\":\"string\",\"description\":\"Python (or FinQA DSL) source\"}," \
    "\"lang\":{\"type\":\"string\",\"enum\":[\"auto\",\"python\",\"dsl\"]}," \
    "\"vars\":{\"type\":\"object\",\"description\":\"variables bound before the code runs; " \
    "a number's decimal text is exact (0.1 is 1/10)\"}," \
    "\"table\":{\"type\":\"array\",\"items\":{\"type\":\"array\"},\"description\":" \
    "\"a FinQA table for DSL programs: rows of cells, first cell the row name\"}," \
    "\"precision\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":1000,\"description\":" \
    "\"significant digits of inexact results (default " \
    CR_DEFAULT_TEXT(CR_DEFAULT_PRECISION) ")\"}," \
    "\"rounding\":{\"type\":\"string\",\"enum\":[\"half-even\",\"half-up\"]}," \
    "\"answer_vars\":{\"anyOf\":[{\"type\":\"string\"},{\"type\":\"array\",\"items\":" \
    "{\"type\":\"string\"}}],\"description\":\"variables tried in order for the final " \
    "value (default ans, result, answer)\"}," \
    "\"seed\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":4294967295}," \
    "\"strip_fences\":{\"type\":\"boolean\",\"description\":\"code is a model's reply: run " \
    "its ```python blocks\"}},\"required\":[\"code\"]}"

#define ERROR_SCHEMA(kind) \
    "{\"type\":[\"object\",\"null\"],\"properties\":{\"" kind "\":{\"type\":\"string\"}," \
    "\"message\":{\"type\":\"string\"},\"line\":{\"type\":\"integer\"}," \
    "\"col\":{\"type\":\"integer\"}}}"

#define ROUTE_WORD(id, word, route, ops) "\"" word "\","
#define OUTPUT_SCHEMA \
    "{\"type\":\"object\",\"properties\":{" \
    "\"route\":{\"type\":\"string\",\"enum\":[\"inprocess\"," SANDBOX_TIERS(ROUTE_WORD) "\"rejected\"]}," \
    "\"status\":{\"type\":\"string\",\"description\":\"ok, raised, limit, syntax_error, " \
    "rejected, sandbox_error, interrupted\"}," \
    "\"lang\":{\"type\":\"string\"}," \
    "\"reasons\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"properties\":{" \
    "\"code\":{\"type\":\"string\"},\"line\":{\"type\":\"integer\"},\"col\":{\"type\":" \
    "\"integer\"},\"snippet\":{\"type\":\"string\"}}}}," \
    "\"value\":{\"type\":[\"object\",\"null\"],\"properties\":{" \
    "\"repr\":{\"type\":\"string\",\"description\":\"Python's repr of the exact value\"}," \
    "\"type\":{\"type\":\"string\"}," \
    "\"fraction\":{\"type\":[\"string\",\"null\"],\"description\":\"the exact value, p/q\"}," \
    "\"exact\":{\"type\":\"boolean\"}}}," \
    "\"stdout\":{\"type\":\"string\"},\"stderr\":{\"type\":\"string\"}," \
    "\"error\":" ERROR_SCHEMA("type") ",\"limit\":" ERROR_SCHEMA("name") "," \
    "\"explained\":{\"type\":\"boolean\"}," \
    "\"audit\":{\"type\":[\"object\",\"null\"],\"properties\":{\"seq\":{\"type\":" \
    "\"integer\"},\"hash\":{\"type\":\"string\"}}}}," \
    "\"required\":[\"route\",\"status\",\"reasons\",\"value\",\"stdout\",\"error\"]}"

/* The tools, one row each: what tools/list says of it, and how tools/call runs it: decide
 * first (explain), then run only what stays in-process (inprocess_only: nothing starts a
 * sandbox), and whether a status other than ok is the call's error. */
typedef struct {
    const char *name, *title, *description, *annotations;
    int explain, inprocess_only, status_is_error;
} mcp_tool;

static const mcp_tool tools[] = {
    { "calculate", "Exact arithmetic",
      "Runs finance arithmetic written as Python (or FinQA DSL) in-process on exact decimals "
      "and fractions (0.1 + 0.2 is exactly 3/10). Refuses, with the reasons, code that would "
      "need a sandbox (imports outside the subset, I/O, ...): use run_python for that.",
      "{\"readOnlyHint\":true,\"idempotentHint\":true,\"openWorldHint\":false}", 1, 1, 1 },
    { "run_python", "Run Python safely",
      "Runs Python (or FinQA DSL): the whitelisted subset in-process on exact decimals, "
      "anything else in a sandbox (no network, bounded time and memory). Gives the final "
      "value, stdout and any error.",
      "{\"readOnlyHint\":false,\"destructiveHint\":false,\"idempotentHint\":true,"
      "\"openWorldHint\":false}", 0, 0, 1 },
    { "explain", "Explain the route",
      "Says where code would run (inprocess, or a sandbox: ns, kvm; or rejected) and why, "
      "listing each construct outside the in-process subset. Runs nothing.",
      "{\"readOnlyHint\":true,\"idempotentHint\":true,\"openWorldHint\":false}", 1, 0, 0 },
};
#define NTOOLS (sizeof tools / sizeof tools[0])

/* A message read and waiting to be handled. */
struct cr_mcp {
    cr_engine *engine;
    cr_line_defaults defaults;
    json_t *tool_list;        /* tools/list's result, built once */
};

json_t *cr_mcp_error(json_t *id, int code, const char *message, json_t *data)
{
    json_t *e = json_pack("{s:i, s:s}", "code", code, "message", message);
    if (e && data) json_object_set(e, "data", data);
    return json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", id ? id : json_null(),
                     "error", e);
}

static json_t *rpc_result(json_t *id, json_t *result)
{
    return json_pack("{s:s, s:O, s:O}", "jsonrpc", "2.0", "id", id, "result", result);
}

/* JSON_COMPACT never emits a newline (one message, one line on stdio, one SSE data line), and
 * ENSURE_ASCII keeps it plain bytes whatever the code printed. */
char *cr_mcp_dump(json_t *msg)
{
    static const char oom[] = "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32603,"
                              "\"message\":\"out of memory\"}}";
    char *text = msg ? json_dumps(msg, JSON_COMPACT | JSON_ENSURE_ASCII | JSON_REAL_PRECISION(6))
                     : NULL;
    return text ? text : strdup(oom);
}

static json_t *server_info(void)
{
    return json_pack("{s:s, s:s, s:s}", "name", "calc-route", "title", "calcroute",
                     "version", CR_VERSION_STRING);
}

static json_t *version_list(void)
{
    json_t *a = json_array();
    for (size_t i = 0; i < NVERSIONS; i++) json_array_append_new(a, json_string(versions[i]));
    return a;
}

const char *cr_mcp_supported(const char *v)
{
    for (size_t i = 0; v && i < NVERSIONS; i++)
        if (strcmp(v, versions[i]) == 0) return versions[i];
    return NULL;
}

json_t *cr_mcp_bad_version(json_t *id, const char *requested)
{
    json_t *data = json_pack("{s:o, s:s}", "supported", version_list(), "requested",
                             requested ? requested : "");
    json_t *r = cr_mcp_error(id, CR_MCP_BAD_VERSION, "Unsupported protocol version", data);
    json_decref(data);
    return r;
}

json_t *cr_mcp_progress(json_t *token, double progress, const char *message)
{
    return json_pack("{s:s, s:s, s:{s:O, s:f, s:s}}", "jsonrpc", "2.0",
                     "method", "notifications/progress", "params", "progressToken", token,
                     "progress", progress, "message", message);
}

/* A version without the handshake (2026-07-28 and later ones): results say what they are
 * (resultType) and who made them (_meta), and lists how long they keep. */
static int stateless(const char *v) { return v && strcmp(v, CR_MCP_MODERN) >= 0; }

static json_t *build_tool_list(void)
{
    json_t *list = json_array();
    int failed = !list;
    for (size_t t = 0; t < NTOOLS; t++) {
        json_t *o = json_object();
        failed |= !o;
        cr_json_set(o, "name", json_string(tools[t].name), &failed);
        cr_json_set(o, "title", json_string(tools[t].title), &failed);
        cr_json_set(o, "description", json_string(tools[t].description), &failed);
        cr_json_set(o, "inputSchema", json_loads(INPUT_SCHEMA, 0, NULL), &failed);
        cr_json_set(o, "outputSchema", json_loads(OUTPUT_SCHEMA, 0, NULL), &failed);
        cr_json_set(o, "annotations", json_loads(tools[t].annotations, 0, NULL), &failed);
        cr_json_append(list, o, &failed);
    }
    json_t *r = failed ? NULL : json_pack("{s:o}", "tools", list);
    if (!r) json_decref(list);
    return r;
}

cr_mcp *cr_mcp_new(cr_engine *engine, cr_line_defaults defaults)
{
    cr_mcp *m = calloc(1, sizeof *m);
    if (m && !(m->tool_list = build_tool_list())) {
        free(m);
        m = NULL;
    }
    if (m) m->engine = engine, m->defaults = defaults;
    return m;
}

void cr_mcp_free(cr_mcp *m)
{
    if (!m) return;
    json_decref(m->tool_list);
    free(m);
}

/* ---- tools ------------------------------------------------------------------------------ */

static void text_put(cr_buf *b, const char *s) { cr_buf_put(b, s, strlen(s)); }

static void text_reasons(cr_buf *b, json_t *o)
{
    json_t *r;
    size_t i;
    json_array_foreach(json_object_get(o, "reasons"), i, r) {
        char at[64];
        text_put(b, "\n  ");
        text_put(b, json_string_value(json_object_get(r, "code")));
        snprintf(at, sizeof at, " at %d:%d: ", (int)json_integer_value(json_object_get(r, "line")),
                 (int)json_integer_value(json_object_get(r, "col")));
        text_put(b, at);
        text_put(b, json_string_value(json_object_get(r, "snippet")));
    }
}

/* "type: message (line L, col C)" of the error or the limit, if there is one. */
static int text_error(cr_buf *b, json_t *o)
{
    json_t *err = json_object_get(o, "error"), *e = json_is_object(err) ? err
                                                                      : json_object_get(o, "limit");
    if (!json_is_object(e)) return 0;
    char at[64] = "";
    int line = (int)json_integer_value(json_object_get(e, "line"));
    int col = (int)json_integer_value(json_object_get(e, "col"));
    if (line) snprintf(at, sizeof at, col ? " (line %d, col %d)" : " (line %d)", line, col);
    /* a limit's JSON names the limit; its exception, as the CLI prints it, is LimitError */
    text_put(b, e == err ? json_string_value(json_object_get(e, "type")) : "LimitError");
    text_put(b, ": ");
    text_put(b, json_string_value(json_object_get(e, "message")));
    text_put(b, at);
    text_put(b, "\n");
    return 1;
}

/* What a person reads: the output, then "= value" (with the exact fraction when the repr
 * does not show it) or the error; for an explanation or a refusal, the route and why. */
static char *human_text(json_t *o)
{
    cr_buf b;
    cr_buf_init(&b, 0);
    json_t *v = json_object_get(o, "value");
    const char *out = json_string_value(json_object_get(o, "stdout"));
    const char *status = json_string_value(json_object_get(o, "status"));
    size_t nreasons = json_array_size(json_object_get(o, "reasons"));
    int explained = json_is_true(json_object_get(o, "explained")), failed;
    if (out && *out) {
        text_put(&b, out);
        if (out[strlen(out) - 1] != '\n') text_put(&b, "\n");
    }
    failed = text_error(&b, o);
    if (explained || (nreasons && status && strcmp(status, "rejected") == 0)) {
        text_put(&b, "route: ");
        text_put(&b, json_string_value(json_object_get(o, "route")));
        if (nreasons) {
            char why[96];
            snprintf(why, sizeof why, "\nwhy: %zu construct%s outside the in-process subset:",
                     nreasons, nreasons == 1 ? "" : "s");
            text_put(&b, why);
            text_reasons(&b, o);
        } else if (!failed)
            text_put(&b, "\nwhy: every construct is inside the in-process subset");
        text_put(&b, "\n");
    } else if (!failed && json_is_object(v)) {
        const char *repr = json_string_value(json_object_get(v, "repr"));
        const char *frac = json_string_value(json_object_get(v, "fraction"));
        text_put(&b, "= ");
        text_put(&b, repr ? repr : "");
        if (frac && repr && strcmp(frac, repr) != 0) {
            text_put(&b, json_is_true(json_object_get(v, "exact")) ? "  (exactly " : "  (");
            text_put(&b, frac);
            text_put(&b, ")");
        }
        if (!json_is_true(json_object_get(v, "exact"))) text_put(&b, "  (inexact)");
        text_put(&b, "\n");
    } else if (!failed && !(out && *out))
        text_put(&b, "(no final value)\n");
    if (cr_buf_put(&b, "", 1) != CR_OK) {
        cr_buf_free(&b);
        return NULL;
    }
    if (b.len > 1 && b.p[b.len - 2] == '\n') b.p[b.len - 2] = '\0';
    return b.p;
}

/* calculate's refusal: what the engine says of such code when sandboxes are off (status
 * rejected, error naming the first construct), so an agent reads one shape either way. */
static void refuse(json_t *o)
{
    json_t *reasons = json_object_get(o, "reasons"), *first = json_array_get(reasons, 0);
    size_t n = json_array_size(reasons);
    char msg[256];
    snprintf(msg, sizeof msg, "calculate runs in-process only, and %zu construct%s need%s a "
             "sandbox (route %s); first %s: run_python runs it", n, n == 1 ? "" : "s",
             n == 1 ? "s" : "", json_string_value(json_object_get(o, "route")),
             json_string_value(json_object_get(first, "code")));
    json_object_set_new(o, "status", json_string("rejected"));
    json_object_set_new(o, "error", json_pack("{s:s, s:s, s:O, s:O}",
                                              "type", cr_strerror(CR_EUNSUPPORTED),
                                              "message", msg,
                                              "line", json_object_get(first, "line"),
                                              "col", json_object_get(first, "col")));
}

/* A tool's failure to run (bad arguments, the engine failing): a result with isError, which
 * the model sees, as the protocol wants for errors it can correct. */
static json_t *tool_error(const char *type, const cr_error *e)
{
    char text[320];
    snprintf(text, sizeof text, "%s: %s", type, e->message);
    json_t *content = json_pack("[{s:s, s:s}]", "type", "text", "text", text);
    return json_pack("{s:o, s:b}", "content", content, "isError", 1);
}

/* One run of the request; *o the result's JSON object. */
static cr_code run_one(cr_mcp *m, cr_request *req, json_t **o, cr_error *e)
{
    cr_result *res = NULL;
    cr_code rc = cr_run(m->engine, req, &res, e);
    if (rc == CR_OK) {
        const char *js = cr_result_json(res);
        *o = js ? json_loads(js, 0, NULL) : NULL;
        if (!*o) rc = cr_error_set(e, CR_ENOMEM, 0, 0, "building the result's JSON");
    }
    cr_result_free(res);
    return rc;
}

static json_t *call_tool(cr_mcp *m, const cr_mcp_call *call, const char *version,
                         const mcp_tool *t, json_t *args)
{
    cr_error e = {0};
    cr_request *req = NULL;
    char *text = json_dumps(args, JSON_COMPACT);
    cr_code rc = !text ? cr_error_set(&e, CR_ENOMEM, 0, 0, "out of memory")
               : cr_line_request(text, strlen(text), m->defaults, &req, &e);
    free(text);
    if (rc != CR_OK) {
        cr_request_free(req);
        return tool_error(rc == CR_ENOMEM ? "internal error" : "invalid arguments", &e);
    }
    json_t *o = NULL;
    cr_request_set_interrupt_fd(req, call->interrupt_fd);
    if (t->explain) cr_request_set_explain(req, 1);
    rc = run_one(m, req, &o, &e);
    int refused = 0;
    if (rc == CR_OK && t->inprocess_only) {
        /* Decide first, run only what stays in-process: nothing here starts a sandbox. */
        const char *route = json_string_value(json_object_get(o, "route"));
        const char *status = json_string_value(json_object_get(o, "status"));
        if (strcmp(route, "inprocess") == 0 && strcmp(status, "explained") == 0) {
            json_decref(o);
            o = NULL;
            cr_request_set_explain(req, 0);
            rc = run_one(m, req, &o, &e);
        } else if (strcmp(status, "explained") == 0) {
            refuse(o);
            refused = 1;
        }
    }
    cr_request_free(req);
    if (rc != CR_OK) return tool_error(cr_strerror(rc), &e);
    const char *status = json_string_value(json_object_get(o, "status"));
    int is_error = refused || (t->status_is_error && strcmp(status, "ok") != 0);
    char *human = human_text(o);
    json_t *content = json_pack("[{s:s, s:s?}]", "type", "text", "text", human);
    free(human);
    /* Clients older than structuredContent read the object as text (the protocol's advice). */
    if (content && version && strcmp(version, STRUCTURED_VERSION) < 0) {
        char *js = json_dumps(o, JSON_COMPACT | JSON_ENSURE_ASCII | JSON_REAL_PRECISION(6));
        json_array_append_new(content, json_pack("{s:s, s:s?}", "type", "text", "text", js));
        free(js);
    }
    return json_pack("{s:o*, s:o, s:b}", "content", content, "structuredContent", o,
                     "isError", is_error);
}

/* ---- dispatch --------------------------------------------------------------------------- */

/* A method: its result object (NULL: out of memory), or NULL with *answer set to the whole
 * answer (an error). */
typedef json_t *mcp_method_fn(cr_mcp *m, cr_mcp_call *call, json_t *id, json_t *params,
                              const char *v, int in_batch, json_t **answer);

static json_t *m_initialize(cr_mcp *m, cr_mcp_call *call, json_t *id, json_t *params,
                            const char *v, int in_batch, json_t **answer)
{
    (void)m, (void)v;
    if (in_batch) {
        *answer = cr_mcp_error(id, CR_MCP_INVALID, "initialize cannot be part of a batch", NULL);
        return NULL;
    }
    const char *want = json_string_value(json_object_get(params, "protocolVersion"));
    if (!want) {
        *answer = cr_mcp_error(id, CR_MCP_PARAMS, "initialize: protocolVersion wanted", NULL);
        return NULL;
    }
    call->version = HANDSHAKE_VERSIONS[0];
    for (size_t i = 0; i < NVERSIONS - 1; i++)
        if (strcmp(want, HANDSHAKE_VERSIONS[i]) == 0) call->version = HANDSHAKE_VERSIONS[i];
    return json_pack("{s:s, s:{s:{s:b}}, s:o, s:s}", "protocolVersion", call->version,
                     "capabilities", "tools", "listChanged", 0, "serverInfo", server_info(),
                     "instructions", INSTRUCTIONS);
}

static json_t *m_ping(cr_mcp *m, cr_mcp_call *call, json_t *id, json_t *params,
                      const char *v, int in_batch, json_t **answer)
{
    (void)m, (void)call, (void)id, (void)params, (void)v, (void)in_batch, (void)answer;
    return json_object();
}

static json_t *m_discover(cr_mcp *m, cr_mcp_call *call, json_t *id, json_t *params,
                          const char *v, int in_batch, json_t **answer)
{
    (void)m, (void)call, (void)id, (void)params, (void)v, (void)in_batch, (void)answer;
    return json_pack("{s:o, s:{s:{s:b}}, s:s}", "supportedVersions", version_list(),
                     "capabilities", "tools", "listChanged", 0, "instructions", INSTRUCTIONS);
}

static json_t *m_tools_list(cr_mcp *m, cr_mcp_call *call, json_t *id, json_t *params,
                            const char *v, int in_batch, json_t **answer)
{
    (void)call, (void)id, (void)params, (void)v, (void)in_batch, (void)answer;
    return json_copy(m->tool_list);
}

static json_t *m_tools_call(cr_mcp *m, cr_mcp_call *call, json_t *id, json_t *params,
                            const char *v, int in_batch, json_t **answer)
{
    (void)in_batch;
    const char *name = json_string_value(json_object_get(params, "name"));
    json_t *args = json_object_get(params, "arguments");
    size_t t = 0;
    while (name && t < NTOOLS && strcmp(name, tools[t].name) != 0) t++;
    if (!name || t == NTOOLS) {
        char why[160], names[64] = "";
        for (size_t i = 0; i < NTOOLS; i++)
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s",
                     i ? ", " : "", tools[i].name);
        snprintf(why, sizeof why, "unknown tool '%.100s' (%s)", name ? name : "", names);
        *answer = cr_mcp_error(id, CR_MCP_PARAMS, why, NULL);
        return NULL;
    }
    if (args && !json_is_object(args)) {
        *answer = cr_mcp_error(id, CR_MCP_PARAMS, "arguments must be an object", NULL);
        return NULL;
    }
    json_t *none = args ? NULL : json_object();
    json_t *r = call_tool(m, call, v, &tools[t], args ? args : none);
    json_decref(none);
    return r;
}

/* The methods, one row each. Flags: M_BARE, answered as it is, without what a stateless
 * revision adds to every result; M_STATEFUL, gone from the stateless revisions (2026); M_CACHED,
 * a result a stateless client may keep (ttlMs, cacheScope). Notifications are never answered
 * (the stdio transport acts on notifications/cancelled itself). */
enum { M_BARE = 1, M_STATEFUL = 2, M_CACHED = 4 };
static const struct {
    const char *name;
    int flags;
    mcp_method_fn *fn;
} methods[] = {
    { "initialize", M_BARE, m_initialize },
    { "ping", M_STATEFUL, m_ping },
    { "server/discover", M_CACHED, m_discover },
    { "tools/list", M_CACHED, m_tools_list },
    { "tools/call", 0, m_tools_call },
};

/* The answer to one request (NULL for a notification, which is never answered). */
static json_t *handle_one(cr_mcp *m, cr_mcp_call *call, json_t *msg, int in_batch)
{
    json_t *id = json_object_get(msg, "id");
    json_t *method = json_object_get(msg, "method");
    json_t *params = json_object_get(msg, "params");
    if (!json_is_object(msg))
        return cr_mcp_error(NULL, CR_MCP_INVALID, "a request is a JSON object", NULL);
    int notification = id == NULL;
    if (!method && (json_object_get(msg, "result") || json_object_get(msg, "error")))
        return NULL;   /* a response: this server sends no requests, so it awaits none */
    if (id && !json_is_string(id) && !json_is_integer(id))
        return cr_mcp_error(NULL, CR_MCP_INVALID, "id must be a string or an integer", NULL);
    if (!json_is_string(method) ||
        !json_is_string(json_object_get(msg, "jsonrpc")) ||
        strcmp(json_string_value(json_object_get(msg, "jsonrpc")), "2.0") != 0)
        return notification ? NULL : cr_mcp_error(id, CR_MCP_INVALID,
                                                  "want jsonrpc \"2.0\" and a method name",
                                                  NULL);
    if (params && !json_is_object(params))
        return notification ? NULL
                            : cr_mcp_error(id, CR_MCP_PARAMS, "params must be an object", NULL);
    const char *m_name = json_string_value(method);
    if (notification) return NULL;   /* notifications/initialized, cancelled, ...: nothing to do */

    /* A request names its version in _meta under 2026-07-28; a known one is accepted, and
     * is the version it is answered in, whatever initialize said. */
    json_t *meta_v = json_object_get(json_object_get(params, "_meta"), CR_MCP_META_VERSION);
    if (meta_v && !cr_mcp_supported(json_string_value(meta_v)))
        return cr_mcp_bad_version(id, json_string_value(meta_v));
    const char *v = meta_v ? cr_mcp_supported(json_string_value(meta_v)) : call->version;
    size_t k = 0;
    while (k < sizeof methods / sizeof methods[0] &&
           (strcmp(m_name, methods[k].name) != 0 ||
            ((methods[k].flags & M_STATEFUL) && stateless(v))))
        k++;
    if (k == sizeof methods / sizeof methods[0]) {
        char why[160];
        snprintf(why, sizeof why, "method not found: %.100s", m_name);
        return cr_mcp_error(id, CR_MCP_NO_METHOD, why, NULL);
    }
    json_t *answer = NULL;
    json_t *r = methods[k].fn(m, call, id, params, v, in_batch, &answer);
    if (answer) return answer;
    int failed = !r;
    if (r && stateless(v) && !(methods[k].flags & M_BARE)) {
        if (methods[k].flags & M_CACHED) {
            cr_json_set(r, "ttlMs", json_integer(CACHE_TTL_MS), &failed);
            cr_json_set(r, "cacheScope", json_string("public"), &failed);
        }
        cr_json_set(r, "resultType", json_string("complete"), &failed);
        cr_json_set(r, "_meta", json_pack("{s:o}", "io.modelcontextprotocol/serverInfo",
                                          server_info()), &failed);
    }
    json_t *a = failed && !(methods[k].flags & M_BARE)
                    ? cr_mcp_error(id, CR_MCP_INTERNAL, "out of memory", NULL)
                    : rpc_result(id, r);
    json_decref(r);
    return a;
}

json_t *cr_mcp_handle(cr_mcp *m, cr_mcp_call *call, json_t *msg)
{
    if (!json_is_array(msg)) return handle_one(m, call, msg, 0);
    /* JSON-RPC batches: in the one revision that has them, else refused whole. */
    if (!call->version || strcmp(call->version, BATCH_VERSION) != 0) {
        char why[160];
        snprintf(why, sizeof why, "batches are not part of protocol version %s",
                 call->version ? call->version : "(none negotiated)");
        return cr_mcp_error(NULL, CR_MCP_INVALID, why, NULL);
    }
    if (json_array_size(msg) == 0)
        return cr_mcp_error(NULL, CR_MCP_INVALID, "an empty batch", NULL);
    json_t *reply = json_array(), *one;
    size_t i;
    json_array_foreach(msg, i, one) {
        json_t *a = handle_one(m, call, one, 1);
        if (a) json_array_append_new(reply, a);
    }
    if (json_array_size(reply) == 0) {
        json_decref(reply);
        reply = NULL;
    }
    return reply;
}

/* ---- stdio ------------------------------------------------------------------------------ */

typedef struct item {
    struct item *next;
    json_t *msg;              /* NULL: a line that is not one, answered with code and why */
    int code;
    char *why;
    char *id;                 /* msg's id as compact JSON, for a cancellation; NULL: none */
} item;

/* At most this many messages wait; the reader reads on when one is taken (the pipe holds the
 * rest, as it did before there was a reader). */
#define QUEUE_MAX 64

typedef struct {
    cr_mcp *mcp;
    cr_mcp_call call;         /* version: negotiated by initialize; interrupt_fd: cancel[0] */
    int in_fd, out_fd, stop_fd, write_failed;
    /* Shared with the reader, under lock: */
    pthread_mutex_t lock;
    pthread_cond_t changed;   /* an item queued or taken, the reader done, or quit */
    item *head, **tail;
    size_t queued;
    int reader_done;          /* end of input, a read error, or stop_fd readable */
    int quit;                 /* the server is ending: the reader stops */
    char *running;            /* the request under way: its id as compact JSON; NULL */
    int cancelled;            /* and it was cancelled: a byte is in cancel[] */
    int cancel[2];            /* the running request's own interrupt */
    int wake[2];              /* quit wakes the reader's poll through this */
} server;

/* A client that stops reading makes write() fail with EPIPE and the server end (status 5),
 * instead of SIGPIPE killing it mid-way: the signal is blocked in this thread for the write
 * and a pending one taken back, not ignored process-wide, which the sandbox's children would
 * inherit. */
static int write_all(server *s, const char *p, size_t n)
{
    sigset_t pipe_set, old;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
    while (n && !s->write_failed) {
        ssize_t k = write(s->out_fd, p, n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) s->write_failed = 1;
        else {
            p += k;
            n -= (size_t)k;
        }
    }
    if (s->write_failed && !sigismember(&old, SIGPIPE)) {
        static const struct timespec now = { 0, 0 };
        while (sigtimedwait(&pipe_set, NULL, &now) == SIGPIPE) {}
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return !s->write_failed;
}

static void send_message(server *s, json_t *msg)
{
    char *text = cr_mcp_dump(msg);
    if (!text) {
        s->write_failed = 1;
        return;
    }
    size_t n = strlen(text);
    char *line = realloc(text, n + 1);   /* room for the newline; the NUL is not sent */
    if (!line) {
        free(text);
        s->write_failed = 1;
        return;
    }
    line[n] = '\n';
    write_all(s, line, n + 1);
    free(line);
}

/* One message read: answered, or (a notification, a batch of them, a cancelled request) not.
 * A cancellation of this one while it runs ends its run through its own interrupt, taken back
 * here under the lock the reader cancels under, so that it cannot reach the next request. */
static void handle_item(server *s, item *it)
{
    json_t *reply;
    if (!it->msg) {
        reply = cr_mcp_error(NULL, it->code, it->why ? it->why : "out of memory", NULL);
        send_message(s, reply);
        json_decref(reply);
        return;
    }
    pthread_mutex_lock(&s->lock);
    s->running = it->id;
    pthread_mutex_unlock(&s->lock);
    reply = cr_mcp_handle(s->mcp, &s->call, it->msg);
    pthread_mutex_lock(&s->lock);
    int cancelled = s->cancelled;
    s->running = NULL;
    s->cancelled = 0;
    if (cancelled) {
        char buf[16];
        while (read(s->cancel[0], buf, sizeof buf) > 0) {}
    }
    pthread_mutex_unlock(&s->lock);
    if (reply && !cancelled) send_message(s, reply);   /* a cancelled one is not answered */
    json_decref(reply);
}

static void item_free(item *it)
{
    if (!it) return;
    json_decref(it->msg);
    free(it->why);
    free(it->id);
    free(it);
}

/* ---- the reader ------------------------------------------------------------------------- */

/* notifications/cancelled for ID (compact JSON): the request under way with that id is
 * interrupted (through its own interrupt: the engine's would end any other run, the warm
 * pool's preloading included), or a waiting one dropped; an id neither has (answered already,
 * or never sent) changes nothing. A cancellation inside a batch is an ordinary notification,
 * and a batch's requests are not cancelled one by one. Under s->lock. */
static void cancel(server *s, const char *id)
{
    if (s->running && strcmp(s->running, id) == 0) {
        if (!s->cancelled) (void)!write(s->cancel[1], "!", 1);
        s->cancelled = 1;
        return;
    }
    for (item **p = &s->head; *p; p = &(*p)->next)
        if ((*p)->id && strcmp((*p)->id, id) == 0) {
            item *it = *p;
            *p = it->next;
            if (!*p) s->tail = p;
            s->queued--;
            item_free(it);
            return;
        }
}

/* A line read (or, line NULL, one past the limit): parsed here, so that a cancellation acts
 * at once; anything else waits its turn. */
static void take_line(server *s, const char *line, size_t n)
{
    item *it = calloc(1, sizeof *it);
    if (!it) return;   /* dropped unanswered: the protocol has no way to say which */
    json_error_t jerr;
    char why[200];
    it->msg = line ? json_loadb(line, n, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &jerr) : NULL;
    json_t *id = json_object_get(it->msg, "id");
    if (!line) {
        snprintf(why, sizeof why, "request line longer than %u bytes", CR_MCP_MAX_LINE);
        it->code = CR_MCP_INVALID;
        it->why = strdup(why);
    } else if (!it->msg) {
        snprintf(why, sizeof why, "parse error: %s (column %d)", jerr.text, jerr.column);
        it->code = CR_MCP_PARSE;
        it->why = strdup(why);
    } else if (json_is_string(id) || json_is_integer(id))
        it->id = json_dumps(id, JSON_COMPACT | JSON_ENCODE_ANY);
    const char *method = json_string_value(json_object_get(it->msg, "method"));
    json_t *target = json_object_get(json_object_get(it->msg, "params"), "requestId");
    char *cancel_id = !id && method && strcmp(method, "notifications/cancelled") == 0 &&
                      (json_is_string(target) || json_is_integer(target))
                      ? json_dumps(target, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
    pthread_mutex_lock(&s->lock);
    if (cancel_id) {
        cancel(s, cancel_id);
        item_free(it);   /* a notification: nothing more to do or answer */
    } else {
        while (s->queued >= QUEUE_MAX && !s->quit) pthread_cond_wait(&s->changed, &s->lock);
        *s->tail = it;
        s->tail = &it->next;
        s->queued++;
        pthread_cond_broadcast(&s->changed);
    }
    pthread_mutex_unlock(&s->lock);
    free(cancel_id);
}

/* Reads lines until the end of input, stop_fd or quit; a line past CR_MCP_MAX_LINE is read
 * to its end and dropped, answered with an error. */
static void *reader_main(void *arg)
{
    server *s = arg;
    size_t cap = 65536, len = 0;
    char *buf = malloc(cap);
    int too_long = 0;
    while (buf) {
        if (len == cap && cap <= CR_MCP_MAX_LINE) {
            char *b = realloc(buf, cap * 2);
            if (!b) too_long = 1, len = 0;
            else buf = b, cap *= 2;
        }
        struct pollfd p[3] = { { s->in_fd, POLLIN, 0 }, { s->wake[0], POLLIN, 0 },
                               { s->stop_fd, POLLIN, 0 } };
        if (poll(p, 3, -1) < 0) {
            if (errno == EINTR) continue;
            break;
        }
        if (p[1].revents || p[2].revents) break;
        ssize_t k = read(s->in_fd, buf + len, cap - len);
        if (k < 0 && (errno == EINTR || errno == EAGAIN)) continue;
        if (k <= 0) {   /* a last line without its newline is still a message */
            if (len && !too_long) take_line(s, buf, len);
            break;
        }
        size_t start = 0, end = len + (size_t)k;
        for (char *nl; (nl = memchr(buf + len, '\n', end - len)); len = start) {
            size_t n = (size_t)(nl - buf) - start;
            if (too_long || n > CR_MCP_MAX_LINE) {
                take_line(s, NULL, 0);
                too_long = 0;
            } else if (n && !(n == 1 && buf[start] == '\r'))
                take_line(s, buf + start, n && buf[start + n - 1] == '\r' ? n - 1 : n);
            start = (size_t)(nl - buf) + 1;
        }
        len = end;
        if (start) {
            memmove(buf, buf + start, end - start);
            len = end - start;
        }
        if (len > CR_MCP_MAX_LINE) {
            too_long = 1;   /* keep reading to its newline, keeping nothing */
            len = 0;
        }
    }
    free(buf);
    pthread_mutex_lock(&s->lock);
    s->reader_done = 1;
    pthread_cond_broadcast(&s->changed);
    pthread_mutex_unlock(&s->lock);
    return NULL;
}

static int stop_requested(int stop_fd)
{
    struct pollfd p = { stop_fd, POLLIN, 0 };
    return stop_fd >= 0 && poll(&p, 1, 0) > 0;
}

int cr_mcp_serve(cr_engine *engine, int in_fd, int out_fd, int stop_fd,
                 cr_line_defaults defaults)
{
    server s = { .mcp = cr_mcp_new(engine, defaults), .call = { NULL, -1 }, .in_fd = in_fd,
                 .out_fd = out_fd, .stop_fd = stop_fd, .cancel = { -1, -1 },
                 .wake = { -1, -1 } };
    s.tail = &s.head;
    pthread_mutex_init(&s.lock, NULL);
    pthread_cond_init(&s.changed, NULL);
    /* The reader takes no signal: the caller's handler runs on this thread. */
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    pthread_t reader;
    int started = 0;
    if (s.mcp && pipe2(s.cancel, O_CLOEXEC | O_NONBLOCK) == 0 && pipe2(s.wake, O_CLOEXEC) == 0) {
        s.call.interrupt_fd = s.cancel[0];
        pthread_sigmask(SIG_BLOCK, &block, &old);
        started = pthread_create(&reader, NULL, reader_main, &s) == 0;
        pthread_sigmask(SIG_SETMASK, &old, NULL);
    }
    while (started && !s.write_failed) {
        pthread_mutex_lock(&s.lock);
        while (!s.head && !s.reader_done) pthread_cond_wait(&s.changed, &s.lock);
        item *it = s.head;
        if (it && !(s.head = it->next)) s.tail = &s.head;
        if (it) s.queued--;
        pthread_cond_broadcast(&s.changed);
        pthread_mutex_unlock(&s.lock);
        if (!it || stop_requested(stop_fd)) {
            item_free(it);
            break;
        }
        handle_item(&s, it);
        item_free(it);
    }
    if (started) {
        pthread_mutex_lock(&s.lock);
        s.quit = 1;
        pthread_cond_broadcast(&s.changed);
        pthread_mutex_unlock(&s.lock);
        (void)!write(s.wake[1], "", 1);
        pthread_join(reader, NULL);
    }
    while (s.head) {
        item *it = s.head;
        s.head = it->next;
        item_free(it);
    }
    for (int i = 0; i < 2; i++) {
        if (s.wake[i] >= 0) close(s.wake[i]);
        if (s.cancel[i] >= 0) close(s.cancel[i]);
    }
    pthread_cond_destroy(&s.changed);
    pthread_mutex_destroy(&s.lock);
    cr_mcp_free(s.mcp);
    return !started ? 5 : s.write_failed ? 5 : 0;
}
