#!/bin/sh
# The audit ledger beside plain SQLite and plain PostgreSQL: durable and batched appends,
# verify over 1M records (200k on PostgreSQL).
#   sh bench/run-audit.sh [BUILD_DIR]     (BENCH_AUDIT_ARGS="DURABLE BATCHED VERIFY RUNS")
# PostgreSQL: a throwaway server (tests/pg-server.sh), or BENCH_AUDIT_PG=URI of a database.
B=${1:-build}
tmp=$(mktemp -d)
chmod 755 "$tmp"
started=
if [ -z "${BENCH_AUDIT_PG:-}" ] && sh tests/pg-server.sh start "$tmp/pg" >/dev/null 2>"$tmp/err"; then
    started=1
    BENCH_AUDIT_PG=$(sh tests/pg-server.sh db "$tmp/pg" bench)
fi
[ -n "${BENCH_AUDIT_PG:-}" ] || echo "(no PostgreSQL: $(head -c 200 "$tmp/err"))"
export BENCH_AUDIT_PG
trap '[ -z "$started" ] || sh tests/pg-server.sh stop "$tmp/pg"; rm -rf "$tmp"' EXIT
echo "== audit ledger: appends and verify"
# shellcheck disable=SC2086
"$B/bench/bench_audit" "$tmp" ${BENCH_AUDIT_ARGS:-500 100000 1000000}
