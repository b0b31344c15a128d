/* cli/mcp.h: `calc-route mcp`, a Model Context Protocol server (JSON-RPC 2.0, one message a
 * line on stdin and stdout) over one engine. */
#ifndef CR_CLI_MCP_H
#define CR_CLI_MCP_H

#include "calcroute.h"

/* The longest request line read; a longer one is answered with a JSON-RPC error, and the
 * server goes on with the next line. */
#define CR_MCP_MAX_LINE (1u << 20)

/* Serves requests read from in_fd, answering on out_fd, until the end of input (0) or until
 * stop_fd (-1: none) becomes readable (0 too: the caller knows why). `defaults` (may be NULL)
 * applies the command line's request options to each request before the tool's arguments.
 * 5 when the output cannot be written. */
int cr_mcp_serve(cr_engine *engine, int in_fd, int out_fd, int stop_fd,
                 cr_code (*defaults)(cr_request *, cr_error *));

#endif
