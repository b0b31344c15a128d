#!/bin/sh
# calc-route serve under the traffic a platform meets: readiness that means a warm pool,
# the named refusals (429 queue_full with Retry-After, rate_limited and concurrency_limited
# with the RateLimit fields, 409/422 for an Idempotency-Key), a client that holds 200
# idle connections or sends its headers a byte at a time, and SIGTERM during a batch of
# one-second lines. Every wait is on an event the service shows (its metrics, a marker
# file, a line of output), never a fixed sleep.
B=${BUILD:-build}
R="$B/calc-route"
PY=/usr/bin/python3
. tests/lib.sh
serve_test test_serve_admission

# metric NAME: its value now ($url's /metrics, with the bearer token $token when set).
metric() { curl -s ${token:+-H "Authorization: Bearer $token"} "$url/metrics" | sed -n "s/^$1 //p"; }
# until_metric NAME VALUE: waits (60 s at most) until NAME reads VALUE.
until_metric() {
    tries=0
    while [ "$(metric "$1")" != "$2" ] && [ $tries -lt 1200 ]; do
        tries=$((tries + 1))
        sleep 0.05
    done
}
# until_ready: waits (120 s at most: the pool's zygote imports numpy and pandas) for /readyz.
until_ready() {
    tries=0
    while [ "$(curl -s -o /dev/null -w '%{http_code}' "$url/readyz")" != 200 ] &&
        [ $tries -lt 1200 ]; do
        tries=$((tries + 1))
        sleep 0.1
    done
}
# field JSON-FILE PYTHON-EXPR: the expression over the parsed object `j`.
field() { "$PY" -c "import json,sys; j=json.load(open(sys.argv[1])); print($2)" "$1"; }

# Sandboxes need user namespaces; where the ns tier cannot run (or under make check-tsan,
# which sets CR_TEST_NO_SANDBOX: the sandbox's clone() is more than ThreadSanitizer follows),
# the sandboxed checks are skipped, saying why (and counted).
if [ -n "${CR_TEST_NO_SANDBOX:-}" ]; then
    ns_why="CR_TEST_NO_SANDBOX is set"
else
    ns_why=$(printf '%s' '{"code":"import os\nprint(1)"}' | "$R" --batch --pool 0 --tier ns - |
        "$PY" -c 'import json,sys; j=json.loads(sys.stdin.read()); print("" if j["status"]=="ok" else j["error"]["message"])')
fi

"$R" --wait-ready 5 - </dev/null >/dev/null 2>"$tmp/err"
expect wait-ready-usage "2 calc-route: --wait-ready: only with --batch (serve says it on /readyz)
Try 'calc-route --help'." "$? $(cat "$tmp/err")"
"$R" --batch --wait-ready soon - </dev/null >/dev/null 2>"$tmp/err"
expect wait-ready-bad "2 calc-route: --wait-ready: want seconds above 0 (at most 86400), got 'soon'
Try 'calc-route --help'." "$? $(cat "$tmp/err")"

# ---- the probes, with and without a ledger ---------------------------------------------
start probes --tier none --audit "$tmp/probes.db"
expect livez '200 {"status":"ok"}' "$(curl -s -w '%{http_code} ' -o "$tmp/b" "$url/livez"; cat "$tmp/b")"
expect healthz-alias '200 {"status":"ok"}' "$(curl -s -w '%{http_code} ' -o "$tmp/b" "$url/healthz"; cat "$tmp/b")"
expect readyz '200 {"status":"ready"}' "$(curl -s -w '%{http_code} ' -o "$tmp/b" "$url/readyz"; cat "$tmp/b")"
expect readyz-verbose '200 {"status":"ready","checks":[{"name":"pool","ok":true,"detail":"no warm pool: the none tier has none"},{"name":"ledger","ok":true,"detail":"answers"},{"name":"signer","ok":true,"detail":"no --checkpoint-key"},{"name":"draining","ok":true,"detail":"serving"}]}' \
    "$(curl -s -w '%{http_code} ' -o "$tmp/b" "$url/readyz?verbose"; cat "$tmp/b")"
expect build-info "calcroute_build_info{version=\"$("$R" --version | sed 's/.* //')\"} 1" \
    "$(curl -s "$url/metrics" | grep '^calcroute_build_info')"
kill -TERM "$pid"
wait "$pid"

# ---- Idempotency-Key: the same key gives the same answer and the same record, once -------
start idem --tier none --audit "$tmp/idem.db"
idem() {   # KEY BODY: "CODE REPLAYED-HEADER|BODY"
    curl -s -D "$tmp/h" -o "$tmp/b" -w '%{http_code}' -H "Idempotency-Key: $1" --data-binary "$2" \
        "$url/v1/run" >"$tmp/code"
    printf '%s %s|%s' "$(cat "$tmp/code")" \
        "$(tr -d '\r' <"$tmp/h" | sed -n 's/^Idempotent-Replayed: //p')" "$(cat "$tmp/b")"
}
first=$(idem '"k-1"' '{"id":1,"code":"ans = 6 * 7"}')
again=$(idem '"k-1"' '{"id":1,"code":"ans = 6 * 7"}')
expect idem-first-ran "200 |" "$(echo "$first" | cut -d'|' -f1)|"
expect idem-replayed "200 true|${first#*|}" "$again"
expect idem-one-record 1 "$("$B/calc-audit" export "$tmp/idem.db" | wc -l)"
expect idem-mismatch 422:idempotency_mismatch \
    "$(idem '"k-1"' '{"id":1,"code":"ans = 6 * 8"}' >/dev/null; echo "$(cat "$tmp/code"):$(field "$tmp/b" 'j["reason"]')")"
expect idem-batch-refused 400:bad_request \
    "$(curl -s -o "$tmp/b" -w '%{http_code}' -H 'Idempotency-Key: x' --data-binary '{"code":"1"}' "$url/v1/batch"):$(field "$tmp/b" 'j["reason"]')"
kill -TERM "$pid"
wait "$pid"

# ---- token quotas ----------------------------------------------------------------------
printf '# rate-limited, then one at a time\ntok-rate rate=2 burst=2\ntok-one concurrent=1\n' >"$tmp/tokens"
start tokens --tier none --token-file "$tmp/tokens"
codes=""
for i in 1 2 3; do
    codes="$codes $(curl -s -D "$tmp/h" -o "$tmp/b" -w '%{http_code}' -H 'Authorization: Bearer tok-rate' \
        --data-binary '{"code":"1"}' "$url/v1/run")"
done
# Three at once against a bucket of two refilled at 2 a second: the third is refused unless
# half a second passed between the first and the third, which a loaded machine may do.
case "$codes" in
    " 200 200 429")
        expect rate-limited 'rate_limited
Retry-After: 1
RateLimit-Policy: "token";q=2;w=1
RateLimit: "token";r=0;t=1' "$(field "$tmp/b" 'j["reason"]')
$(tr -d '\r' <"$tmp/h" | grep -E '^(Retry-After|RateLimit-Policy|RateLimit):')" ;;
    " 200 200 200") ok; skip rate-limited "the three requests took over half a second" ;;
    *) bad "rate-limited: codes$codes" ;;
esac
"$R" --token-file /dev/null serve >/dev/null 2>"$tmp/err"
expect token-file-empty "2 calc-route: --token-file /dev/null:0: no token in it (a line: TOKEN [rate=N] [burst=N] [concurrent=N])" "$? $(cat "$tmp/err")"
printf 'ok-token\nbad-token rate=fast\n' >"$tmp/bad-tokens"
"$R" --token-file "$tmp/bad-tokens" serve >/dev/null 2>"$tmp/err"
expect token-file-bad "2 calc-route: --token-file $tmp/bad-tokens:2: 'rate=fast': want rate=N, burst=N or concurrent=N (1 to 1000000) after the token (a line: TOKEN [rate=N] [burst=N] [concurrent=N])" "$? $(cat "$tmp/err")"
kill -TERM "$pid"
wait "$pid"

# ---- 200 idle connections from one address; a client sending a byte at a time -----------
start idle --tier none --header-timeout 2
port=${url##*:}
"$PY" tests/serve/conns.py idle 127.0.0.1 "$port" 200 30 "$tmp/idle-marker" >"$tmp/idle" &
idle_pid=$!
tries=0
while [ ! -e "$tmp/idle-marker" ] && [ $tries -lt 600 ]; do tries=$((tries + 1)); sleep 0.05; done
expect second-address-readyz '200 {"status":"ready"}' "$("$PY" tests/serve/conns.py get 127.0.0.2 127.0.0.1 "$port" /readyz)"
expect second-address-livez '200 {"status":"ok"}' "$("$PY" tests/serve/conns.py get 127.0.0.2 127.0.0.1 "$port" /livez)"
wait "$idle_pid"
# One address holds its half (128) of the 256 connections; the deadline for a request's
# headers closes each of them (2 s here) well before the client's 30 s.
expect idle-held-and-closed "accepted 128 closed 128" "$(cat "$tmp/idle")"
expect slow-headers-closed "closed by the service" "$("$PY" tests/serve/conns.py slow 127.0.0.1 "$port" 30)"
expect header-timeouts-counted yes "$([ "$(metric 'calcroute_refusals_total{reason="header_timeout"}')" -ge 129 ] && echo yes)"
kill -TERM "$pid"
wait "$pid"

if [ -n "$ns_why" ]; then
    skip_all "the sandboxed checks" "the ns tier cannot run here: $ns_why"
fi

# ---- warm by default: ready means warm, and the first sandboxed request is warm ---------
start warm --tier ns
until_ready
size=$(metric calcroute_pool_size)
expect readyz-pool "200 $size of $size warm sandboxes ready" \
    "$(curl -s -o "$tmp/b" -w '%{http_code}' "$url/readyz?verbose") $(field "$tmp/b" '[c["detail"] for c in j["checks"] if c["name"]=="pool"][0]')"
curl -s -o "$tmp/b" --data-binary '{"code":"import numpy\nprint(numpy.__name__)"}' "$url/v1/run"
expect first-request-warm "ok numpy
 warm" "$(field "$tmp/b" 'j["status"], j["stdout"], j["timings"]["sandbox_start"]' | tr -d "(),'")"
kill -TERM "$pid"
wait "$pid"

# ---- --batch waits for its pool when asked: its first line is warm ------------------------
expect batch-wait-ready "ok warm" "$(printf '%s\n' '{"code":"import os\nprint(1)"}' |
    "$R" --batch --tier ns --pool 1 --wait-ready 120 - |
    "$PY" -c 'import json,sys; j=json.load(sys.stdin); print(j["status"], j["timings"]["sandbox_start"])')"

# ---- the queue: one running, one waiting, the next refused at once ----------------------
printf 'tok concurrent=5\ntok-one concurrent=1\n' >"$tmp/queue-tokens"
start queue --tier ns --pool 1 --queue 1 --preload '' --token-file "$tmp/queue-tokens"
token=tok
until_ready
SLEEP='{"id":%d,"code":"import time\\ntime.sleep(2)\\nprint(%d)"}'
printf "$SLEEP" 1 1 | curl -s -o "$tmp/q1" -H 'Authorization: Bearer tok-one' --data-binary @- "$url/v1/run" &
q1=$!
until_metric calcroute_pool_ready 0
expect concurrency-limited '429 concurrency_limited' \
    "$(curl -s -o "$tmp/b" -w '%{http_code}' -H 'Authorization: Bearer tok-one' --data-binary '{"code":"1"}' "$url/v1/run") $(field "$tmp/b" 'j["reason"]')"
printf "$SLEEP" 2 2 | curl -s -o "$tmp/q2" -H 'Authorization: Bearer tok' --data-binary @- "$url/v1/run" &
q2=$!
until_metric calcroute_pool_waiting 1
printf "$SLEEP" 3 3 | curl -s -D "$tmp/h" -o "$tmp/q3" -w '%{http_code}' -H 'Authorization: Bearer tok' \
    --data-binary @- "$url/v1/run" >"$tmp/code"
expect queue-full "429 queue_full 3 Retry-After: 1" \
    "$(cat "$tmp/code") $(field "$tmp/q3" 'j["reason"], j["id"]' | tr -d "(),'") $(tr -d '\r' <"$tmp/h" | grep '^Retry-After')"
wait "$q1" "$q2"
expect queued-ones-answered-warm "1 warm
2 warm" "$(for f in "$tmp/q1" "$tmp/q2"; do field "$f" 'j["stdout"].strip(), j["timings"]["sandbox_start"]' | tr -d "(),'"; done)"
kill -TERM "$pid"
wait "$pid"
token=

# ---- SIGTERM during a batch of 30 one-second lines -------------------------------------
start drain --tier ns --pool 2 --preload '' --drain-timeout 5
until_ready
i=1
while [ $i -le 30 ]; do
    printf '{"id":%d,"code":"import time\\ntime.sleep(1)\\nprint(%d)"}\n' $i $i
    i=$((i + 1))
done >"$tmp/lines"
curl -sN --data-binary @"$tmp/lines" "$url/v1/batch" >"$tmp/batch" &
curl_pid=$!
tries=0
while ! grep -qs '"id":1,' "$tmp/batch" && [ $tries -lt 600 ]; do tries=$((tries + 1)); sleep 0.05; done
kill -TERM "$pid"
t0=$(date +%s)
wait "$pid"
expect drain-exit 0 "$?"
wait "$curl_pid"
# Every line is answered: those run with their output, the rest named, in order.
expect drain-every-line "30 ids in order; ok then shutting_down" "$("$PY" - "$tmp/batch" <<'EOF2'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
ids = [l["id"] for l in lines]
st = [l["status"] for l in lines]
k = st.index("shutting_down") if "shutting_down" in st else len(st)
shape = "ok then shutting_down" if k >= 1 and all(s == "ok" for s in st[:k]) and \
    all(s == "shutting_down" for s in st[k:]) and k < 30 else str(st)
print(f"{len(ids)} ids {'in order' if ids == list(range(1, 31)) else ids}; {shape}")
EOF2
)"
expect drain-named 'ShuttingDown the service is stopping: this line was not run' \
    "$(grep '"shutting_down"' "$tmp/batch" | tail -1 | "$PY" -c 'import json,sys; e=json.load(sys.stdin)["error"]; print(e["type"], e["message"])')"
# Stopped within the drain timeout (5 s), not after the 29 lines left (29 s).
expect drain-within-timeout yes "$([ $(( $(date +%s) - t0 )) -le 15 ] && echo yes)"

# ---- a run past the drain timeout is interrupted, answered, and the head signed -----------
"$B/calc-audit" keygen "$tmp/key" >/dev/null 2>&1
start sign --tier ns --pool 1 --preload '' --drain-timeout 1 --drain-delay 0 --audit "$tmp/sign.db" --checkpoint-key "$tmp/key" --checkpoint-every 0
until_ready
curl -s -o /dev/null --data-binary '{"code":"ans = 1"}' "$url/v1/run"
curl -s -o "$tmp/long" --data-binary '{"id":9,"code":"import time\ntime.sleep(60)"}' "$url/v1/run" &
curl_pid=$!
until_metric calcroute_pool_ready 0
kill -TERM "$pid"
wait "$pid"
expect sign-exit 0 "$?"
wait "$curl_pid"
expect interrupted-answered "9 interrupted" "$(field "$tmp/long" 'j["id"], j["status"]' | tr -d "(),'")"
expect sign-stderr "calc-route: serve: --checkpoint-key read; the ledger is empty, nothing to sign yet
calc-route: serve: --drain-timeout 1 s passed: the runs under way are interrupted
calc-route: serve: checkpoint signed at seq 2
calc-route: serve: stopped, every request answered" "$(cat "$tmp/sign.err")"
expect signed-verifies "1 checkpoints verified with the given key, last at seq 2" \
    "$("$B/calc-audit" verify --pubkey "$tmp/key.pub" "$tmp/sign.db" | grep checkpoints)"

# ---- while records arrive, a checkpoint at most every --checkpoint-every seconds ----------
start cadence --tier none --drain-delay 0 --audit "$tmp/cadence.db" --checkpoint-key "$tmp/key" \
    --checkpoint-every 0.2
until_ready
for i in 1 2 3; do curl -s -o /dev/null --data-binary "{\"code\":\"ans = $i\"}" "$url/v1/run"; done
until_metric calcroute_checkpoint_seq 3
# While serve still runs, the ledger's newest checkpoint covers every answer given.
expect cadence-covers "3 seq 3" "$(metric calcroute_checkpoint_seq) $("$B/calc-audit" verify \
    --pubkey "$tmp/key.pub" "$tmp/cadence.db" | sed -n 's/.*last at \(seq [0-9]*\).*/\1/p')"
kill -TERM "$pid"
wait "$pid"
expect cadence-exit 0 "$?"
# The stop signs nothing more when the last checkpoint already covers the head.
expect cadence-stderr "calc-route: serve: --checkpoint-key read; the ledger is empty, nothing to sign yet
calc-route: serve: the head, seq 3, is signed already
calc-route: serve: stopped, every request answered" "$(cat "$tmp/cadence.err")"

finish
