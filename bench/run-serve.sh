#!/bin/sh
# calc-route serve on loopback: requests per second and latency with 1, 8 and 64 keep-alive
# clients, beside direct library calls on as many threads; then SIGTERM under load, every
# request's outcome matched against the ledger.
B=${1:-build}
echo "== calc-route serve: POST /v1/run over loopback (in-process, then warm-pool sandbox), beside direct calls; SIGTERM under load"
"$B/bench/bench_serve" "$B/calc-route" 2
