#!/bin/sh
# The audit ledger beside plain SQLite: durable and batched appends, verify over 1M records.
#   sh bench/run-audit.sh [BUILD_DIR]     (BENCH_AUDIT_ARGS="DURABLE BATCHED VERIFY")
B=${1:-build}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "== audit ledger: appends and verify"
# shellcheck disable=SC2086
"$B/bench/bench_audit" "$tmp" ${BENCH_AUDIT_ARGS:-500 100000 1000000}
