/* cli/mcp.h: calc-route's Model Context Protocol server: one message handler (cli/mcp.c) over
 * one engine, spoken by two transports, stdio (`calc-route mcp`, cli/mcp.c: JSON-RPC 2.0, one
 * message a line on stdin and stdout) and Streamable HTTP (`calc-route serve`'s /mcp,
 * cli/mcp_http.c). */
#ifndef CR_CLI_MCP_H
#define CR_CLI_MCP_H

#include <jansson.h>
#include <stddef.h>
#include <sys/types.h>

#include "calcroute.h"
#include "cli/line.h"

/* The longest request line read; a longer one is answered with a JSON-RPC error, and the
 * server goes on with the next line. */
#define CR_MCP_MAX_LINE (1u << 20)

/* The revision without initialize: each request names its version in _meta, under this key. */
#define CR_MCP_MODERN "2026-07-28"
#define CR_MCP_META_VERSION "io.modelcontextprotocol/protocolVersion"

/* JSON-RPC 2.0's codes, and those 2026-07-28 allocates (-32020 on). */
enum { CR_MCP_PARSE = -32700, CR_MCP_INVALID = -32600, CR_MCP_NO_METHOD = -32601,
       CR_MCP_PARAMS = -32602, CR_MCP_INTERNAL = -32603, CR_MCP_HEADER_MISMATCH = -32020,
       CR_MCP_BAD_VERSION = -32022 };

/* The tools over one engine, shared by every message of either transport, any thread. */
typedef struct cr_mcp cr_mcp;

/* `defaults` (may be NULL) applies the command line's request options to each call before
 * the tool's arguments. NULL when memory runs out. */
cr_mcp *cr_mcp_new(cr_engine *engine, cr_line_defaults defaults);
void cr_mcp_free(cr_mcp *m);

/* What the transport knows of one message. */
typedef struct {
    const char *version;   /* the protocol version the client speaks as far as the transport
                              knows (stdio: the one initialize negotiated; HTTP: the
                              MCP-Protocol-Version header), NULL: none; a request's _meta
                              version overrides it. initialize sets it to the one negotiated */
    int interrupt_fd;      /* once readable, a tools/call under way ends as interrupted
                              (cr_request_set_interrupt_fd()); -1: none */
} cr_mcp_call;

/* The answer to one message (a request, a notification, or under 2025-03-26 a batch of
 * them): a JSON-RPC response, or NULL when none is due (a notification, a batch of them).
 * The caller owns it. Blocks for a tools/call's run. */
json_t *cr_mcp_handle(cr_mcp *m, cr_mcp_call *call, json_t *msg);

/* The version as the server speaks it (a static string), NULL when it speaks no such one. */
const char *cr_mcp_supported(const char *version);
/* A JSON-RPC error response (id NULL: none); data may be NULL, and is not taken. */
json_t *cr_mcp_error(json_t *id, int code, const char *message, json_t *data);
/* 2026-07-28's UnsupportedProtocolVersionError: the versions spoken, and the one asked for. */
json_t *cr_mcp_bad_version(json_t *id, const char *requested);
/* notifications/progress for `token`. */
json_t *cr_mcp_progress(json_t *token, double progress, const char *message);
/* One message as compact plain-ASCII JSON without a newline (malloc'd); an out-of-memory
 * error response's text when it cannot be encoded, NULL only when that fails too. */
char *cr_mcp_dump(json_t *msg);

/* Serves requests read from in_fd, answering on out_fd, until the end of input (0) or until
 * stop_fd (-1: none) becomes readable (0 too: the caller knows why). 5 when the output cannot
 * be written. */
int cr_mcp_serve(cr_engine *engine, int in_fd, int out_fd, int stop_fd,
                 cr_line_defaults defaults);

/* ---- Streamable HTTP (cli/mcp_http.c), libmicrohttpd left to serve ---------------------- */

/* One POST /mcp as serve read it. The header values are NULL when absent. */
typedef struct {
    const char *body;
    size_t len;
    const char *origin, *host, *protocol_version, *method, *name;
    const char *client;    /* who may cancel this client's calls by notifications/cancelled:
                              its token and address as one string */
    int fd;                /* the connection's socket: its hangup cancels a call under way */
} cr_mcp_http_in;

/* The answer: a status, a Content-Type and either a body (`text`, malloc'd, the caller frees
 * it) or, for a streamed one (text NULL), `stream`, which serve hands to a callback response
 * with cr_mcp_http_read() and cr_mcp_http_free(). */
typedef struct {
    unsigned status;
    const char *type;
    char *text;
    struct cr_mcp_stream *stream;
} cr_mcp_http_out;

/* Answers one POST /mcp: refusals (403 for a foreign Origin, 400 for a version or header that
 * does not match the body), 202 for a notification, application/json for a request, or a
 * stream for a tools/call (text/event-stream for run_python, with notifications/progress
 * while it runs when the request asked for them). 0, or -1 when memory runs out. */
int cr_mcp_http(cr_mcp *m, const cr_mcp_http_in *in, cr_mcp_http_out *out);
/* libmicrohttpd's content reader: the stream's next bytes into buf (at most max); 0 never
 * (it waits for the run), -1 at its end, -2 when the client has gone (the call ended). */
ssize_t cr_mcp_http_read(struct cr_mcp_stream *st, char *buf, size_t max);
/* Ends the stream: a call still under way is interrupted and waited for. */
void cr_mcp_http_free(struct cr_mcp_stream *st);

#endif
