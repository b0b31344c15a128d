#!/bin/sh
# calc-route's MCP server end to end with the official MCP TypeScript SDK's client (npm's
# @modelcontextprotocol/sdk, run by Debian's node; scripts/mcp-client.sh installs it once into
# build/mcp-client) on both transports: stdio (`calc-route mcp`) and Streamable HTTP (serve's
# /mcp: progress during a sandboxed call, cancellation by AbortSignal and by closing the
# stream). The SDK speaks the handshake revisions; 2026-07-28's rules for HTTP are held by hand
# here with curl: Origin (403), MCP-Protocol-Version (400, -32022), Mcp-Method and Mcp-Name
# against the body (400, -32020), its 404 for an unknown method, the bearer token. Without
# node, npm or the registry the SDK's part is skipped, saying why, but fails under CI=true.
. tests/lib.sh
B=${BUILD:-build}
R=$B/calc-route
DIR=${MCP_CLIENT_DIR:-build/mcp-client}
serve_test test_mcp_sdk
start mcp --tier ns --audit "$tmp/ledger.db" || finish

# post [CURL ARGS...]: a POST to /mcp; prints the status and the body.
post() {
    code=$(curl -s -o "$tmp/body" -w '%{http_code}' -H 'Content-Type: application/json' \
           -H 'Accept: application/json, text/event-stream' "$@" "$url/mcp")
    echo "$code $(cat "$tmp/body")"
}
V=2026-07-28
META='"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}'
LIST='{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{'$META'}}'
CALL='{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"calculate","arguments":{"code":"ans = 6 * 7"},'$META'}}'
INFO='"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"calc-route","title":"calcroute","version":"0.1.0"}}'
ANSWER='{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"= 42"}],"isError":false,"resultType":"complete",'$INFO'}}'
host=${url#http://}

expect origin-foreign '403 {"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Origin '"'"'http://calc.example.com'"'"' is not this server'"'"'s, nor loopback"}}' \
    "$(post -H 'Origin: http://calc.example.com' -H "MCP-Protocol-Version: $V" -H 'Mcp-Method: tools/list' -d "$LIST")"
expect origin-rebound '403 {"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Origin '"'"'http://127.0.0.1.calc.example.com'"'"' is not this server'"'"'s, nor loopback"}}' \
    "$(post -H 'Origin: http://127.0.0.1.calc.example.com' -H "MCP-Protocol-Version: $V" -H 'Mcp-Method: tools/list' -d "$LIST")"
for origin in "http://$host" http://localhost:3000 http://127.0.0.1 'http://[::1]:8080'; do
    got=$(post -H "Origin: $origin" -H "MCP-Protocol-Version: $V" -H 'Mcp-Method: tools/list' -d "$LIST")
    expect "origin $origin" 200 "${got%% *}"
done
expect version-unknown '400 {"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2026-07-28","2025-11-25","2025-06-18","2025-03-26","2024-11-05"],"requested":"1999-01-01"}}}' \
    "$(post -H 'MCP-Protocol-Version: 1999-01-01' -H 'Mcp-Method: tools/list' -d "$LIST")"
expect version-header-body '400 {"jsonrpc":"2.0","id":1,"error":{"code":-32020,"message":"Header mismatch: MCP-Protocol-Version header value '"'"'2025-11-25'"'"' does not match body value '"'"'2026-07-28'"'"'"}}' \
    "$(post -H 'MCP-Protocol-Version: 2025-11-25' -H 'Mcp-Method: tools/list' -d "$LIST")"
expect version-header-missing '400 {"jsonrpc":"2.0","id":1,"error":{"code":-32020,"message":"Header mismatch: MCP-Protocol-Version header missing"}}' \
    "$(post -H 'Mcp-Method: tools/list' -d "$LIST")"
expect method-mismatch '400 {"jsonrpc":"2.0","id":2,"error":{"code":-32020,"message":"Header mismatch: Mcp-Method header value '"'"'tools/list'"'"' does not match body value '"'"'tools/call'"'"'"}}' \
    "$(post -H "MCP-Protocol-Version: $V" -H 'Mcp-Method: tools/list' -H 'Mcp-Name: calculate' -d "$CALL")"
expect method-missing '400 {"jsonrpc":"2.0","id":1,"error":{"code":-32020,"message":"Header mismatch: Mcp-Method header missing"}}' \
    "$(post -H "MCP-Protocol-Version: $V" -d "$LIST")"
expect name-missing '400 {"jsonrpc":"2.0","id":2,"error":{"code":-32020,"message":"Header mismatch: Mcp-Name header missing"}}' \
    "$(post -H "MCP-Protocol-Version: $V" -H 'Mcp-Method: tools/call' -d "$CALL")"
expect name-mismatch '400 {"jsonrpc":"2.0","id":2,"error":{"code":-32020,"message":"Header mismatch: Mcp-Name header value '"'"'run_python'"'"' does not match body value '"'"'calculate'"'"'"}}' \
    "$(post -H "MCP-Protocol-Version: $V" -H 'Mcp-Method: tools/call' -H 'Mcp-Name: run_python' -d "$CALL")"
expect call-2026 "200 $ANSWER" \
    "$(post -H "MCP-Protocol-Version: $V" -H 'Mcp-Method: tools/call' -H 'Mcp-Name: calculate' -d "$CALL" |
       /usr/bin/python3 -c 'import json, sys
code, body = sys.stdin.read().split(" ", 1); r = json.loads(body)
r["result"].pop("structuredContent", None); print(code, json.dumps(r, separators=(",", ":")))')"
# Mcp-Name in the Base64 sentinel form ("calculate").
got=$(post -H "MCP-Protocol-Version: $V" -H 'Mcp-Method: tools/call' -H 'Mcp-Name: =?base64?Y2FsY3VsYXRl?=' -d "$CALL")
expect name-base64 200 "${got%% *}"
expect method-unknown '404 {"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"method not found: ping"}}' \
    "$(post -H "MCP-Protocol-Version: $V" -H 'Mcp-Method: ping' -d '{"jsonrpc":"2.0","id":3,"method":"ping","params":{'"$META"'}}')"
expect notification '202 ' \
    "$(post -H 'MCP-Protocol-Version: 2025-11-25' -d '{"jsonrpc":"2.0","method":"notifications/initialized"}')"
expect not-json '400 {"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: invalid token near '"'"'nope'"'"' (column 4)"}}' \
    "$(post -d 'nope')"
got=$(curl -s -o /dev/null -w '%{http_code}' "$url/mcp")
expect get-405 405 "$got"   # nothing to push: no server-initiated stream
mcp_url=$url
echo secret-token >"$tmp/token"
start token --tier none --token-file "$tmp/token" || finish
got=$(post -H 'MCP-Protocol-Version: 2025-11-25' -d '{"jsonrpc":"2.0","id":1,"method":"tools/list"}')
expect token-wanted 401 "${got%% *}"
got=$(post -H 'Authorization: Bearer secret-token' -H 'MCP-Protocol-Version: 2025-11-25' \
           -d '{"jsonrpc":"2.0","id":1,"method":"tools/list"}')
expect token-given 200 "${got%% *}"
url=$mcp_url

# The SDK's client: its own counts, added to these.
sdk() {
    /usr/bin/node "$DIR/sdk_client.mjs" "$@" >"$tmp/sdk.out"
    set -- $(tail -n 1 "$tmp/sdk.out")
    if [ "${2:-}" = passed, ]; then
        pass=$((pass + $1))
        fail=$((fail + $3))
        skip=$((skip + ${5:-0}))
    else
        bad "sdk_client.mjs said: $(cat "$tmp/sdk.out")"
    fi
}
if why=$(scripts/mcp-client.sh "$DIR" 2>&1); then
    # Node resolves the SDK from the script's own directory.
    cp tests/mcp/sdk_client.mjs "$DIR/sdk_client.mjs" || exit 1
    sdk stdio "$R" --tier ns
    sdk http "$url/mcp" "$B/calc-audit" "$tmp/ledger.db"
else
    unavailable "test_mcp_sdk's SDK client" "$why"
fi
finish
