# calc-route's mcp subcommand is a file of its own, linked into calc-route alone.
$(B)/calc-route: cli/calc-route.c cli/mcp.c cli/mcp.h $(B)/libcalcroute-dev.a
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ cli/calc-route.c cli/mcp.c $(B)/libcalcroute-dev.a $(STATIC_LIBS)

# The MCP SDK's client that tests/test_mcp_sdk.sh drives calc-route mcp with (npm, cached).
MCP_CLIENT_DIR ?= build/mcp-client
.PHONY: mcp-client
mcp-client:
	scripts/mcp-client.sh $(MCP_CLIENT_DIR)
