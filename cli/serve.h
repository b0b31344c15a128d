/* cli/serve.h: `calc-route serve`, an HTTP/1.1 JSON service (libmicrohttpd) over one engine:
 * POST /v1/run, /v1/explain, /v1/batch, /mcp (cli/mcp_http.c); GET /livez (/healthz), /readyz,
 * /metrics. */
#ifndef CR_CLI_SERVE_H
#define CR_CLI_SERVE_H

#include <stddef.h>

#include "cli/line.h"

typedef struct {
    const char *listen;       /* HOST:PORT ([V6]:PORT); NULL: CR_SERVE_LISTEN. Port 0: any
                                 free one (the address served is printed on stdout) */
    int listen_public;        /* 1: a non-loopback address is allowed */
    const char *token_file;   /* bearer tokens, one a line with its quotas, that every request
                                 but the probes must carry; NULL: none */
    unsigned connections;     /* connections at once; 0: CR_SERVE_CONNECTIONS */
    unsigned per_address;     /* connections at once from one address; 0: CR_SERVE_PER_ADDRESS */
    size_t max_body;          /* bytes of a request body; 0: CR_SERVE_MAX_BODY */
    double header_timeout;    /* seconds from a connection's start (or its last answer) to a
                                 request's last body byte; 0: CR_SERVE_HEADER_TIMEOUT_S */
    double drain_timeout;     /* seconds from a stop's signal until the runs under way are
                                 interrupted; 0: CR_SERVE_DRAIN_TIMEOUT_S */
    double drain_delay;       /* seconds from a stop's signal during which /readyz fails
                                 but requests are still served (inside drain_timeout); 0:
                                 CR_SERVE_DRAIN_DELAY_S, -1: none */
    const char *checkpoint_key;   /* a ledger signing key (calc-audit keygen): the head is
                                     signed when serve starts and when it stops; NULL: none */
    double checkpoint_every;  /* with checkpoint_key, seconds between checkpoints while
                                 records arrive; 0: CR_SERVE_CHECKPOINT_EVERY_S, -1: only at
                                 the start and the stop */
    const char *tiles;            /* a directory: the ledger's tree as C2SP tlog-tiles, kept
                                     there (checkpoint_key signs it) and published read-only as
                                     GET /checkpoint and /tile/...; NULL: not published */
    const char *witnesses;        /* a tlog-policy: its witnesses with a URL cosign each
                                     checkpoint the tiles publish; NULL: none asked */
} cr_serve_opts;

#define CR_SERVE_LISTEN "127.0.0.1:8080"
/* A connection is a thread: a burst of this many clients at once is taken in, the sandboxed
 * ones then queued by the pool (or refused 429 past its queue), none refused unanswered. */
#define CR_SERVE_CONNECTIONS 256u
/* One address may hold half of them: a client that opens connections without end (or never
 * sends a header) leaves the other half to everyone else. Behind a proxy whose connections
 * all come from one address, raise it to --connections. */
#define CR_SERVE_PER_ADDRESS 128u
#define CR_SERVE_HEADER_TIMEOUT_S 10
/* Inside Kubernetes' default 30 s grace period, with room for the final checkpoint. */
#define CR_SERVE_DRAIN_TIMEOUT_S 25
/* Long enough for a balancer checking /readyz every second or so to see it fail twice. */
#define CR_SERVE_DRAIN_DELAY_S 2
#define CR_SERVE_MAX_BODY ((size_t)1 << 20)
/* A record is covered by a signed checkpoint within about this long of its answer (an
 * examiner's proof needs one), at one signature a second at most however busy serve is. */
#define CR_SERVE_CHECKPOINT_EVERY_S 1
/* Connections past --connections, kept for the probes (/livez, /readyz, /metrics): others on
 * them are answered 503 (and closed); past these, one is closed as soon as it is accepted. */
#define CR_SERVE_OVERFLOW 16u
/* Stopping: how long from the signal connections still open are kept at most once nothing is
 * under way, so that a request already on its way on one is answered 503 rather than cut off
 * unread. */
#define CR_SERVE_LINGER_MS 500

/* Sets option `name` (listen, listen-public, token-file, connections, per-address, max-body,
 * header-timeout, drain-timeout, drain-delay, checkpoint-key, checkpoint-every) from `value`; 0, or -1 with the reason in
 * why. */
int cr_serve_option(cr_serve_opts *o, const char *name, const char *value, char *why,
                    size_t why_len);

/* What the options say of themselves, checked before an engine (and its warm pool) is made
 * for them: the address and the token file. 0, or 2 with the reason on stderr. */
int cr_serve_check(const cr_serve_opts *o);

/* Serves until stop_fd (the signal pipe) becomes readable: then /readyz fails (for the
 * drain delay, requests are still served), it stops accepting, a batch under way answers its lines not yet run as shutting_down, the runs under
 * way are answered (past the drain timeout, or at a second byte on stop_fd, they are
 * interrupted and answered so), the head is signed (checkpoint_key) and it returns 0; the
 * caller closes the engine, which flushes the ledger.
 * 2 for a bad option (an address it may not or cannot serve, an unreadable token file), 5
 * when the service cannot start. `defaults` as in cli/line.h. */
int cr_serve(cr_engine *engine, const cr_serve_opts *o, int stop_fd,
             cr_line_defaults defaults);

/* The API's OpenAPI 3.1 description (cli/openapi.json, built in by cli/openapi.c): its bytes,
 * NUL-terminated, and in *len their number. Static: never freed. */
const char *cr_openapi_json(size_t *len);

#endif
