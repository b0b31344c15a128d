/* cli/serve.h: `calc-route serve`, an HTTP/1.1 JSON service (libmicrohttpd) over one engine:
 * POST /v1/run, /v1/explain, /v1/batch; GET /healthz, /metrics. */
#ifndef CR_CLI_SERVE_H
#define CR_CLI_SERVE_H

#include <stddef.h>

#include "cli/line.h"

typedef struct {
    const char *listen;       /* HOST:PORT ([V6]:PORT); NULL: CR_SERVE_LISTEN. Port 0: any
                                 free one (the address served is printed on stdout) */
    int listen_public;        /* 1: a non-loopback address is allowed */
    const char *token_file;   /* a bearer token every request but /healthz must carry; NULL:
                                 none */
    unsigned connections;     /* connections at once; 0: CR_SERVE_CONNECTIONS */
    size_t max_body;          /* bytes of a request body; 0: CR_SERVE_MAX_BODY */
} cr_serve_opts;

#define CR_SERVE_LISTEN "127.0.0.1:8080"
#define CR_SERVE_CONNECTIONS 64u
#define CR_SERVE_MAX_BODY ((size_t)1 << 20)
/* Connections past --connections that are answered 503 (and closed); past these, one is
 * closed as soon as it is accepted. */
#define CR_SERVE_OVERFLOW 16u
/* Stopping: how long from the signal connections still open are kept at most once nothing is
 * under way, so that a request already on its way on one is answered 503 rather than cut off
 * unread. */
#define CR_SERVE_LINGER_MS 500

/* Sets option `name` (listen, listen-public, token-file, connections, max-body) from `value`;
 * 0, or -1 with the reason in why. */
int cr_serve_option(cr_serve_opts *o, const char *name, const char *value, char *why,
                    size_t why_len);

/* Serves until stop_fd (the signal pipe) becomes readable: then it stops accepting, answers
 * every request under way (a second byte on stop_fd interrupts the runs, which are answered
 * as interrupted) and returns 0; the caller closes the engine, which flushes the ledger.
 * 2 for a bad option (an address it may not or cannot serve, an unreadable token file), 5
 * when the service cannot start. `defaults` as in cli/line.h. */
int cr_serve(cr_engine *engine, const cr_serve_opts *o, int stop_fd,
             cr_line_defaults defaults);

/* The API's OpenAPI 3.1 description (cli/openapi.json, built in by cli/openapi.c): its bytes,
 * NUL-terminated, and in *len their number. Static: never freed. */
const char *cr_openapi_json(size_t *len);

#endif
