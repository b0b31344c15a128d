#!/bin/sh
# Installs the official MCP TypeScript SDK (its client end) into DIR (default build/mcp-client)
# with npm, once: tests/test_mcp_sdk.sh talks to `calc-route mcp` through it. The version is
# pinned, so a run is repeatable; a second call finds it there and does nothing. Exit 1 with
# the reason on stderr when node, npm or the registry is not to be had.
set -u
DIR=${1:-build/mcp-client}
SDK_VERSION=1.32.2
NODE=/usr/bin/node
have=$DIR/node_modules/@modelcontextprotocol/sdk/package.json
[ -x "$NODE" ] || { echo "no $NODE (Debian's nodejs package)" >&2; exit 1; }
command -v npm >/dev/null 2>&1 || { echo "no npm (Debian's npm package)" >&2; exit 1; }
if [ -f "$have" ] && grep -q "\"version\": \"$SDK_VERSION\"" "$have"; then exit 0; fi
mkdir -p "$DIR" || exit 1
printf '{"private": true, "type": "module"}\n' >"$DIR/package.json"
# npm's own cache lives in the build directory too, so that a rebuild of it needs no network.
if ! timeout 300 npm install --prefix "$DIR" --cache "$DIR/.npm-cache" --prefer-offline \
        --no-audit --no-fund --loglevel=error --save-exact \
        "@modelcontextprotocol/sdk@$SDK_VERSION" >"$DIR/npm.log" 2>&1; then
    echo "npm install @modelcontextprotocol/sdk@$SDK_VERSION failed (registry unreachable?):" \
         "$(tail -n 3 "$DIR/npm.log" | tr '\n' ' ')" >&2
    exit 1
fi
