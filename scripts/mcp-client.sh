#!/bin/sh
# Installs the official MCP TypeScript SDK (its client end) into DIR (default build/mcp-client)
# with scripts/npm-pinned.sh: tests/test_mcp_sdk.sh talks to `calc-route mcp` through it.
exec "$(dirname "$0")/npm-pinned.sh" "${1:-build/mcp-client}" @modelcontextprotocol/sdk@1.32.2
