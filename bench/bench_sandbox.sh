#!/bin/sh
# Sandbox cold start: the ns tier beside bare python3 -I and bubblewrap, interleaved.
#   sh bench/bench_sandbox.sh [BUILD_DIR] [ROUNDS]
B=${1:-build}
"$B/bench/bench_sandbox" "${2:-20}"
