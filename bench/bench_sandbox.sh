#!/bin/sh
# Sandboxed code, request -> result: the engine's warm pool, a cold ns sandbox, bubblewrap and
# bare python3 -I, interleaved; then calc-route --batch's sustained throughput, a sandboxed
# print(1) and a pandas program, its default pool against --pool 0 (the ratio beside its
# goal), and the idle memory of a warm worker.
#   sh bench/bench_sandbox.sh [BUILD_DIR] [ROUNDS] [LIB_ROUNDS] [BATCH_WARM] [BATCH_COLD]
# (defaults 200, 30, 100, 10: the batches run N and 2N requests each, three rounds; about
# four minutes on a quiet 2-core machine. The batch section alone:
#   build/bench/bench_sandbox 1 1 100 10 "" build/calc-route batch)
B=${1:-build}
"$B/bench/bench_sandbox" "${2:-200}" "${3:-30}" "${4:-100}" "${5:-10}" "" "$B/calc-route"
