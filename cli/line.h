/* cli/line.h: one request in `calc-route --batch`'s line format (a JSON object: code, vars,
 * ...), made into a request and answered with `--json`'s result object. The front ends that
 * take such lines (--batch, serve, mcp's tool arguments) share it, so that a line means the
 * same and answers the same whichever way it came. */
#ifndef CR_CLI_LINE_H
#define CR_CLI_LINE_H

#include <stddef.h>

#include "calcroute.h"

/* The command line's request options, applied to each request before the line's own keys
 * (NULL: none). */
typedef cr_code (*cr_line_defaults)(cr_request *, cr_error *);

/* A new request in *req: the defaults, then the line's keys. Not CR_OK with *e set: CR_ENOMEM
 * (*req may be NULL), or the line's fault (its message names the key, or the line:col of bad
 * JSON; *req holds what was read, such as the caller's id). The caller frees *req. */
cr_code cr_line_request(const char *line, size_t n, cr_line_defaults defaults,
                        cr_request **req, cr_error *e);

/* What became of a line, beyond its text. */
typedef struct {
    enum { CR_LINE_DONE, CR_LINE_BAD, CR_LINE_ENGINE } outcome;   /* ran; not a request; the
                                                                     engine failed */
    cr_route route;           /* CR_LINE_DONE: where it ran */
    cr_code status;           /* CR_LINE_DONE: the run's status */
    int audited;              /* a ledger record was appended */
    const char *reason;       /* CR_LINE_BAD, CR_LINE_ENGINE: the error line's status word,
                                 a static string: "bad_request", "engine_error", or a named
                                 refusal a client may retry ("queue_full", "queue_timeout":
                                 the engine is overloaded; "ledger_unavailable": the result
                                 could not be recorded, so it is not given) */
} cr_line_info;

/* The result line (no newline) of one input line: the --json object with the caller's id
 * first (null when none), or an error object {id, status: bad_request or engine_error, error:
 * {type, message, line, col}}. `refuse` (NULL: none) answers the line with that bad_request
 * message unread; `explain` asks where it would run instead of running it. NULL on ENOMEM. */
char *cr_line_result(cr_engine *engine, const char *line, size_t n, const char *refuse,
                     int explain, cr_line_defaults defaults, cr_line_info *info);

/* An error object as above: {"id":ID,"status":STATUS,"error":{type, message, line, col}};
 * id_text is JSON text (NULL: null). NULL on ENOMEM. */
char *cr_line_error(const char *id_text, const char *status, const char *type,
                    const char *message, int line, int col);

#endif
