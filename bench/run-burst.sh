#!/bin/sh
# calc-route serve driven as the public sandbox benchmarks drive a service: 100 requests one
# after another, 100 staggered 200 ms apart, 100 at once, each on its own connection, for
# print(1) and a numpy program; the default warm pool beside --pool 0 (every run cold).
B=${1:-build}
echo "== calc-route serve: sequential, staggered and burst requests, default pool beside --pool 0"
"$B/bench/bench_burst" "$B/calc-route" 100 200
