#!/bin/sh
# calc-route serve on loopback: requests per second and latency with 1, 8 and 64 keep-alive
# clients, beside direct library calls on as many threads.
B=${1:-build}
echo "== calc-route serve: POST /v1/run over loopback (in-process, then warm-pool sandbox), beside direct calls"
"$B/bench/bench_serve" "$B/calc-route" 2
