#!/bin/sh
# calc-route serve over loopback with curl: every endpoint's exact answer, malformed, oversized
# and misrouted requests (a clear 4xx, the service stays up), the bearer token, the address
# policy, 16 clients at once, and SIGTERM under load: the requests under way are answered,
# those after them refused (503 on a connection already open, else no connection), none is
# lost or answered twice, the exit is 0 and the ledger verifies with one record an answer.
B=${BUILD:-build}
R="$B/calc-route"
. tests/lib.sh
serve_test test_serve

# post PATH BODY [CURL ARGS...]: "CODE BODY", the timings (which vary) taken out.
post() {
    path=$1 body=$2
    shift 2
    printf '%s' "$body" | curl -s -o "$tmp/body" -w '%{http_code}' --data-binary @- \
        -H 'Content-Type: application/json' "$@" "$url$path" >"$tmp/code"
    printf '%s %s' "$(cat "$tmp/code")" "$(sed 's/"timings":{[^}]*},//' "$tmp/body")"
}
get() {
    curl -s -o "$tmp/body" -w '%{http_code}' "$@" >"$tmp/code"
    printf '%s %s' "$(cat "$tmp/code")" "$(cat "$tmp/body")"
}

# Background clients: their pids are in $curls.
wait_for_curls() {
    for j in $curls; do wait "$j"; done
    curls=""
}
# answered PREFIX VALUE...: how many of $tmp/PREFIX0, PREFIX1, ... answer their id i with
# the value VALUE number i.
answered() {
    p=$1 k=0 n=0
    shift
    for v in "$@"; do
        grep -q "^{\"id\":$k,.*\"value\":{\"repr\":\"$v\"" "$tmp/$p$k" && n=$((n + 1))
        k=$((k + 1))
    done
    echo $n
}

# A finance formula's exact answer (what the README shows).
V='"value":{"repr":"0.01639058413251961639058413251961639","type":"float","fraction":"94/5735","exact":true,"from":"last expression","native":{"float":"94/5735"},"native_why":null}'
REST='"stdout":"","stdout_truncated":false,"stdout_replaced":false,"stderr":"","stderr_replaced":false'
TAIL='"artifacts":[],"tier_note":null,"tier_why":null,"dropped":null,"seed":null'

start main --tier none || { summary; exit 1; }
main_pid=$pid

expect run "200 {\"id\":null,\"route\":\"inprocess\",\"status\":\"ok\",\"lang\":\"python\",\"reasons\":[],$V,$REST,\"error\":null,\"limit\":null,$TAIL,\"ops\":3,\"explained\":false,\"audit\":null}" \
    "$(post /v1/run '{"code":"(5829 - 5735) / 5735"}')"
expect run-id-vars "200 {\"id\":\"q1\",\"route\":\"inprocess\",\"status\":\"ok\",\"lang\":\"python\",\"reasons\":[],\"value\":{\"repr\":\"0.3\",\"type\":\"float\",\"fraction\":\"3/10\",\"exact\":true,\"from\":\"last expression\",\"native\":{\"float\":\"3/10\"},\"native_why\":null},$REST,\"error\":null,\"limit\":null,$TAIL,\"ops\":2,\"explained\":false,\"audit\":null}" \
    "$(post /v1/run '{"id":"q1","code":"a + b","vars":{"a":0.1,"b":0.2}}')"
expect run-raised "200 ZeroDivisionError division by zero" \
    "$(post /v1/run '{"code":"1/0"}' >/dev/null; printf '%s ' "$(cat "$tmp/code")"; sed 's/.*"error":{"type":"\([^"]*\)","message":"\([^"]*\)".*/\1 \2/' "$tmp/body")"
expect explain "200 {\"id\":null,\"route\":\"inprocess\",\"status\":\"explained\",\"lang\":\"python\",\"reasons\":[],\"value\":null,$REST,\"error\":null,\"limit\":null,$TAIL,\"ops\":0,\"explained\":true,\"audit\":null}" \
    "$(post /v1/explain '{"code":"(5829 - 5735) / 5735"}')"
# With sandboxes off (--tier none), code outside the subset is rejected, with the reasons.
expect explain-rejected "200 {\"id\":null,\"route\":\"rejected\",\"status\":\"rejected\",\"lang\":\"python\",\"reasons\":[{\"code\":\"import:os\",\"line\":1,\"col\":1,\"snippet\":\"import os\"}],\"value\":null,$REST,\"error\":{\"type\":\"outside the in-process subset\",\"message\":\"1 construct outside the in-process subset and sandboxes are off; first import:os\",\"line\":1,\"col\":1},\"limit\":null,$TAIL,\"ops\":0,\"explained\":false,\"audit\":null}" \
    "$(post /v1/explain '{"code":"import os"}')"

# /v1/batch: one line out a line in, in order, a bad line answered in its place.
printf '%s\n' '{"id":1,"code":"2**100"}' '{"id":2,"code":' '' '{"id":3,"code":"x = 7\nx * 6"}' \
    >"$tmp/batch.jsonl"
curl -s -D "$tmp/headers" --data-binary @"$tmp/batch.jsonl" "$url/v1/batch" |
    sed -e 's/"timings":{[^}]*},//' -e 's/,"value":{"repr":"\([^"]*\)".*/ \1/' \
        -e 's/"route".*"error":{[^}]*"message":"\([^"]*\)".*/\1/' >"$tmp/batch.out"
expect batch '{"id":1,"route":"inprocess","status":"ok","lang":"python","reasons":[] 1267650600228229401496703205376
{"id":null,"status":"bad_request","error":{"type":"UsageError","message":"request: unexpected token near end of file","line":1,"col":15}}
{"id":null,"status":"bad_request","error":{"type":"UsageError","message":"request: '"'"'['"'"' or '"'"'{'"'"' expected near end of file","line":1,"col":0}}
{"id":3,"route":"inprocess","status":"ok","lang":"python","reasons":[] 42' "$(cat "$tmp/batch.out")"
expect batch-streamed 'Content-Type: application/x-ndjson
Transfer-Encoding: chunked' "$(grep -E '^(Transfer-Encoding|Content-Type):' "$tmp/headers" | tr -d '\r')"

# Malformed and misrouted requests: JSON errors with --json's error fields.
expect bad-json '400 {"type":"/problems/bad_request","title":"The request is not a request","status":400,"detail":"request: '"'"'}'"'"' expected near end of file","reason":"bad_request","id":null,"error":{"type":"UsageError","message":"request: '"'"'}'"'"' expected near end of file","line":1,"col":9}}' \
    "$(post /v1/run '{"code":1')"
expect bad-key '400 {"type":"/problems/bad_request","title":"The request is not a request","status":400,"detail":"request: unknown or ill-typed key \"explain\"","reason":"bad_request","id":7,"error":{"type":"UsageError","message":"request: unknown or ill-typed key \"explain\"","line":0,"col":0}}' \
    "$(post /v1/run '{"id":7,"code":"1","explain":true}')"
expect empty-body '400 {"type":"/problems/bad_request","title":"The request is not a request","status":400,"detail":"request: '"'"'['"'"' or '"'"'{'"'"' expected near end of file","reason":"bad_request","id":null,"error":{"type":"UsageError","message":"request: '"'"'['"'"' or '"'"'{'"'"' expected near end of file","line":1,"col":0}}' \
    "$(post /v1/run '')"
expect not-found '404 {"type":"/problems/not_found","title":"No such path","status":404,"detail":"no such path: POST /v1/run, /v1/explain, /v1/batch, /mcp; GET /livez, /readyz, /healthz, /metrics, /openapi.json","reason":"not_found","id":null,"error":{"type":"HTTPError","message":"no such path: POST /v1/run, /v1/explain, /v1/batch, /mcp; GET /livez, /readyz, /healthz, /metrics, /openapi.json","line":0,"col":0}}' \
    "$(post /v1/nope '{}')"
expect wrong-method '405 {"type":"/problems/method_not_allowed","title":"The path takes another method","status":405,"detail":"/v1/run takes POST, not GET","reason":"method_not_allowed","id":null,"error":{"type":"HTTPError","message":"/v1/run takes POST, not GET","line":0,"col":0}}' \
    "$(get "$url/v1/run")"
expect wrong-method-allow 'Allow: POST' \
    "$(curl -s -D - -o /dev/null "$url/v1/batch" | tr -d '\r' | grep '^Allow:')"
TOO_LARGE='413 {"type":"/problems/too_large","title":"The request body is too large","status":413,"detail":"a request body is at most 1048576 bytes","reason":"too_large","id":null,"error":{"type":"HTTPError","message":"a request body is at most 1048576 bytes","line":0,"col":0}}'
head -c 2000000 /dev/zero | tr '\0' ' ' >"$tmp/big"
expect too-large "$TOO_LARGE" "$(post /v1/run "$(cat "$tmp/big")")"
# Without a length given beforehand (chunked): the body is read to the limit, then refused.
expect too-large-chunked "$TOO_LARGE" \
    "$(curl -s -o "$tmp/body" -w '%{http_code}' -H 'Transfer-Encoding: chunked' \
        --data-binary @"$tmp/big" "$url/v1/batch"; printf ' %s' "$(cat "$tmp/body")")"
# Headers past 64 KiB: libmicrohttpd's own 431.
head -c 70000 /dev/zero | tr '\0' x >"$tmp/header"
expect header-too-large 431 \
    "$(curl -s -o /dev/null -w '%{http_code}' -H "X-Big: $(cat "$tmp/header")" "$url/healthz")"
expect still-up '200 {"status":"ok"}' "$(get "$url/healthz")"

# 16 clients at once, each its own formula.
i=0 curls=""
while [ $i -lt 16 ]; do
    printf '{"id":%d,"code":"ans = %d * 1001 // 7"}' $i $i |
        curl -s --data-binary @- "$url/v1/run" >"$tmp/c$i" &
    curls="$curls $!"
    i=$((i + 1))
done
wait_for_curls
expect concurrent 16 "$(answered c $(seq 0 143 2145))"

# /metrics: Prometheus text; the counters above are in it.
get "$url/metrics" >/dev/null
expect metrics 'calcroute_requests_total{route="/v1/run",code="200"} 19
calcroute_requests_total{route="/v1/run",code="400"} 3
calcroute_requests_total{route="/v1/run",code="405"} 1
calcroute_requests_total{route="/v1/run",code="413"} 1
calcroute_requests_total{route="/v1/batch",code="200"} 1
calcroute_requests_total{route="/v1/batch",code="405"} 1
calcroute_requests_total{route="/v1/batch",code="413"} 1
calcroute_runs_total{route="inprocess"} 22
calcroute_bad_requests_total 5
calcroute_ledger_appends_total 0
calcroute_pool_size 0
calcroute_in_flight 1
calcroute_connections 1' "$(grep -E '^calcroute_(requests_total\{route="/v1/(run|batch)"|runs_total\{route="inprocess"|bad_req|ledger|pool_size|in_flight|connections)' "$tmp/body")"
expect metrics-histogram 'calcroute_request_duration_seconds_count{route="/v1/batch"} 3' \
    "$(grep '^calcroute_request_duration_seconds_count{route="/v1/batch"}' "$tmp/body")"
# The GETs keep their connection (a probe or a scraper reuses it): one connect for two.
expect get-keep-alive "1 0 " "$(curl -s -o /dev/null -o /dev/null -w '%{num_connects} ' \
    "$url/healthz" "$url/metrics")"
kill -TERM "$main_pid"
wait "$main_pid"
expect main-exit 0 "$?"

# The bearer token: every path but /healthz wants it.
printf 's3cret-token\n' >"$tmp/token"
start token --tier none --token-file "$tmp/token"
UNAUTH='401 {"type":"/problems/unauthorized","title":"A valid bearer token is wanted","status":401,"detail":"a valid bearer token is wanted (Authorization: Bearer TOKEN)","reason":"unauthorized","id":null,"error":{"type":"HTTPError","message":"a valid bearer token is wanted (Authorization: Bearer TOKEN)","line":0,"col":0}}'
expect no-token "$UNAUTH" "$(post /v1/run '{"code":"1"}')"
expect wrong-token "$UNAUTH" "$(post /v1/run '{"code":"1"}' -H 'Authorization: Bearer s3cret-tokeN')"
expect right-token 200 "$(post /v1/run '{"code":"1"}' -H 'Authorization: Bearer s3cret-token' | cut -d' ' -f1)"
expect token-healthz '200 {"status":"ok"}' "$(get "$url/healthz")"
expect token-metrics 401 "$(get "$url/metrics" | cut -d' ' -f1)"
kill -TERM "$pid"
wait "$pid"
head -c 5000 /dev/zero | tr '\0' x >"$tmp/long-token"
"$R" --token-file "$tmp/long-token" serve >"$tmp/out" 2>"$tmp/err"
expect token-too-long "2 calc-route: --token-file $tmp/long-token:1: a line is at most 4095 bytes (a line: TOKEN [rate=N] [burst=N] [concurrent=N])" \
    "$? $(cat "$tmp/err")"

# The address: loopback unless told; a bad one is a usage error.
"$R" --listen 0.0.0.0:0 serve >"$tmp/out" 2>"$tmp/err"
expect public-refused "2 calc-route: --listen 0.0.0.0:0: not a loopback address; serving beyond this machine wants --listen-public (and a --token-file)" \
    "$? $(cat "$tmp/err")"
"$R" --listen nowhere serve >"$tmp/out" 2>"$tmp/err"
expect bad-listen "2 calc-route: --listen: want HOST:PORT or [IPV6]:PORT, got 'nowhere'" "$? $(cat "$tmp/err")"
"$R" --listen 127.0.0.1:0 - </dev/null >"$tmp/out" 2>"$tmp/err"
expect listen-without-serve "2 calc-route: --listen, --token-file, ...: only with serve
Try 'calc-route --help'." "$? $(cat "$tmp/err")"

# Past --connections: 503. Two uploads that take their time hold the two connections; the
# kernel's table says when both are established (asking the service would take a connection
# of its own, which could be the one refused).
start limit --tier none --connections 2 --per-address 16
for i in 0 1; do
    (sleep 3; printf '{"id":%d,"code":"%d * 7"}' $i $i) |
        curl -s -T - -X POST "$url/v1/run" >"$tmp/l$i" &
    curls="$curls $!"
done
port_hex=$(printf ':%04X' "${url##*:}")
tries=0
while [ "$(awk -v p="$port_hex" '$2 ~ p"$" && $4 == "01"' /proc/net/tcp | wc -l)" -lt 2 ] &&
    [ $tries -lt 100 ]; do
    tries=$((tries + 1))
    sleep 0.05
done
sleep 0.3   # for the service to take them from the kernel's queue
busy=$(post /v1/run '{"code":"1"}')
# The probes have slots of their own past the limit.
expect over-limit-probe '200 {"status":"ok"}' "$(get "$url/livez")"
expect over-limit '503 {"type":"/problems/unavailable","title":"Too many connections at once","status":503,"detail":"too many connections at once: try again","reason":"unavailable","id":null,"error":{"type":"HTTPError","message":"too many connections at once: try again","line":0,"col":0}}' "$busy"
wait_for_curls
expect under-limit 2 "$(answered l 0 7)"
kill -TERM "$pid"
wait "$pid"

# SIGTERM under load. Under way when it comes: 8 requests whose bodies are held back until it
# has been taken (so none can finish first, however loaded the machine), each followed on its
# connection by another; and one kept-alive connection, idle, whose next request comes after
# it. The idle connection's request is answered 503; the 8 are answered, each answer closing
# its connection, so the 8 requests after them meet the closed listener (curl: 7, could not
# connect); the exit is 0; the ledger verifies and holds exactly one record for each 200, with
# the seq the answer gave, and none for anything else.
start drain --tier none --audit "$tmp/ledger.db"
# The idle connection: raw HTTP/1.1 through curl's telnet, its second request held back.
run_req() {
    printf 'POST /v1/run HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s' ${#1} "$1"
}
# await FILE PATTERN: until FILE has a line matching PATTERN (10 s at most).
await() {
    tries=0
    while ! grep -qs "$2" "$1" && [ $tries -lt 200 ]; do
        tries=$((tries + 1))
        sleep 0.05
    done
}
(run_req '{"id":200,"code":"ans = 200"}'
    while [ ! -e "$tmp/go-idle" ]; do sleep 0.05; done
    run_req '{"id":201,"code":"ans = 201"}') | curl -sN "telnet://${url#http://}" >"$tmp/idle" &
curls="$curls $!"
await "$tmp/idle" '^{"id":200,'
i=0
while [ $i -lt 8 ]; do
    printf '{"id":%d,"code":"ans = %d"}' $((100 + i)) $((100 + i)) >"$tmp/t$i"
    ( (while [ ! -e "$tmp/go" ]; do sleep 0.05; done
       printf '{"id":%d,"code":"ans = %d * 1001"}' $i $i) |
        curl -s -T - -X POST -o "$tmp/d$i" "$url/v1/run" \
            --next --data-binary @"$tmp/t$i" -o "$tmp/e$i" "$url/v1/run"
      echo $? >"$tmp/rc$i") &
    curls="$curls $!"
    i=$((i + 1))
done
# Until all 8 are under way (the metrics request itself is the ninth).
n=0 tries=0
while [ "$n" -lt 9 ] && [ $tries -lt 200 ]; do
    n=$(curl -s "$url/metrics" | sed -n 's/^calcroute_in_flight //p')
    [ -n "$n" ] || n=0
    tries=$((tries + 1))
    [ "$n" -ge 9 ] || sleep 0.05
done
expect drain-under-way 9 "$n"
kill -TERM "$pid"
tries=0
while curl -s "$url/healthz" >/dev/null && [ $tries -lt 200 ]; do
    tries=$((tries + 1))
    sleep 0.05
done
curl -s "$url/healthz" >/dev/null
expect drain-refuses-new 7 "$?"
# The idle connection's request first: the 8 still under way keep the service up for it.
touch "$tmp/go-idle"
await "$tmp/idle" '^HTTP/1.1 503'
touch "$tmp/go"
wait "$pid"
expect drain-exit 0 "$?"
wait_for_curls
expect drain-answered 8 "$(answered d $(seq 0 1001 7007))"
expect drain-next-refused "7 7 7 7 7 7 7 7 none" "$(cat "$tmp"/rc? | tr '\n' ' ')$(ls "$tmp"/e? 2>/dev/null || echo none)"
expect drain-idle '200
503
Connection: close
{"type":"/problems/shutting_down","title":"The service is stopping","status":503,"detail":"the service is stopping","reason":"shutting_down","id":null,"error":{"type":"HTTPError","message":"the service is stopping","line":0,"col":0}}' \
    "$(tr -d '\r' <"$tmp/idle" | sed -n -e 's/^HTTP\/1.1 \([0-9]*\) .*/\1/p' -e '/^Connection:/p' -e '/^{"type"/p')"
expect drain-stderr "calc-route: serve: stopped, every request answered" "$(cat "$tmp/drain.err")"
if [ -x "$B/calc-audit" ]; then
    "$B/calc-audit" verify "$tmp/ledger.db" >"$tmp/verify" 2>&1
    expect ledger-verifies 0 "$?"
    # "ID SEQ" for each 200 (its id and the seq its answer gave), and for each record (the id
    # its code carries and its seq): the same 9 lines.
    cat "$tmp"/d? "$tmp/idle" | sed -n 's/^{"id":\([0-9]*\),.*"audit":{"seq":\([0-9]*\),.*/\1 \2/p' |
        sort -n >"$tmp/answered"
    "$B/calc-audit" export "$tmp/ledger.db" |
        sed -n 's/^{"seq":\([0-9]*\),.*"code":"ans = \([0-9]*\).*/\2 \1/p' | sort -n >"$tmp/recorded"
    expect ledger-ids "0 1 2 3 4 5 6 7 200" "$(cut -d' ' -f1 "$tmp/recorded" | paste -sd' ')"
    expect ledger-records "9 $(cat "$tmp/answered")" "$("$B/calc-audit" export "$tmp/ledger.db" | wc -l) $(cat "$tmp/recorded")"
else
    skip "ledger checks" "no $B/calc-audit"
fi

# An address another process holds: said once, with its cause, exit 5, nothing served.
/usr/bin/python3 -c 'import socket, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen()
print(s.getsockname()[1], flush=True); time.sleep(120)' >"$tmp/held" &
holder=$!
i=0
until [ -s "$tmp/held" ] || [ "$i" -ge 600 ]; do sleep 0.05; i=$((i + 1)); done
held=$(cat "$tmp/held")
"$B/calc-route" serve --listen "127.0.0.1:$held" --pool 0 >"$tmp/busy.out" 2>"$tmp/busy.err"
expect address-in-use "5 [] [calc-route: serve: cannot listen on 127.0.0.1:$held: Address already in use]" \
    "$? [$(cat "$tmp/busy.out")] [$(cat "$tmp/busy.err")]"
kill "$holder" 2>/dev/null

finish
