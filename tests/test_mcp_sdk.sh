#!/bin/sh
# calc-route mcp end to end with the official MCP TypeScript SDK's client (npm's
# @modelcontextprotocol/sdk, run by Debian's node): scripts/mcp-client.sh installs it once
# into build/mcp-client; without node, npm or the registry the test is skipped, saying why.
B=${BUILD:-build}
DIR=${MCP_CLIENT_DIR:-build/mcp-client}
if ! why=$(scripts/mcp-client.sh "$DIR" 2>&1); then
    echo "SKIP mcp sdk client: $why" >&2
    echo "0 passed, 0 failed, 1 skipped"
    exit 0
fi
# Node resolves the SDK from the script's own directory.
cp tests/mcp/sdk_client.mjs "$DIR/sdk_client.mjs" || exit 1
exec /usr/bin/node "$DIR/sdk_client.mjs" "$B/calc-route" --tier ns
