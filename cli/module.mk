# calc-route's subcommands (mcp, serve) and the request-line code they share with --batch are
# files of their own, linked into calc-route alone. serve and calc-audit witness load
# libmicrohttpd when they start (cli/mhd.h says why); its header is all the build needs.
# cli/openapi.c copies cli/openapi.json in (.incbin), so calc-route is rebuilt when the
# document changes.
CALC_ROUTE_SRC := cli/calc-route.c cli/line.c cli/mcp.c cli/mcp_http.c cli/serve.c cli/openapi.c \
    cli/mhd.c
$(B)/calc-route: $(CALC_ROUTE_SRC) cli/line.h cli/mcp.h cli/serve.h cli/mhd.h cli/openapi.json \
    $(B)/libcalcroute-dev.a
	$(CC) $(CPPFLAGS) $(CFLAGS) $(EXE_LDFLAGS) -o $@ $(CALC_ROUTE_SRC) $(B)/libcalcroute-dev.a $(STATIC_LIBS)

CALC_AUDIT_SRC := cli/calc-audit.c cli/mhd.c
$(B)/calc-audit: $(CALC_AUDIT_SRC) cli/mhd.h $(B)/libcalcroute-dev.a
	$(CC) $(CPPFLAGS) $(CFLAGS) $(EXE_LDFLAGS) -o $@ $(CALC_AUDIT_SRC) $(B)/libcalcroute-dev.a $(STATIC_LIBS)

# The MCP SDK's client that tests/test_mcp_sdk.sh drives calc-route mcp with (npm, cached).
MCP_CLIENT_DIR ?= build/mcp-client
.PHONY: mcp-client
mcp-client:
	scripts/mcp-client.sh $(MCP_CLIENT_DIR)
