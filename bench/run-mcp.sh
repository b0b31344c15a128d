#!/bin/sh
# MCP tools/call latency of calculate over stdio, beside the direct library calls.
B=${1:-build}
echo "== calc-route mcp: tools/call calculate round trip over stdio, beside direct calls"
"$B/bench/bench_mcp" "$B/calc-route" 5000
