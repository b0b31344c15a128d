#!/bin/sh
# tests/run.sh [BUILD [TEST...]]: runs every test binary under BUILD/tests (BUILD defaults to
# build) and every tests/test_*.sh, or only the TESTs named, several at once; prints each
# test's verdict and wall time as it ends (its output kept together), then the skips by
# reason, the by-design count, the ten slowest tests and the total, "N passed, N failed,
# N skipped" (tests/tally.sh reads each test's output). Exit status 1 when any test failed,
# crashed, ran past TEST_TIMEOUT seconds (default 1800), printed counts its lines do not bear
# out, or, under CI=true, skipped a check tests/expected-skips does not list.
#   TEST_JOBS  tests at once (default: the CPUs this process may run on, nproc)
#   TEST_ONLY  names of the tests to run (globs, space-separated), of those found
#
# Tests run side by side, except those in SERIAL: each runs alone, one after another, before
# the others start, because it either reads what the whole machine shares, or holds a
# wall-clock bound that a second test beside it could break on two cores:
#   test_sandbox_attacks  lists /tmp and /dev/shm for whatever any run named calcroute*
#                         left, and bounds CPU seconds within wall seconds;
#   test_sandbox          interrupts a run it waits to see start, within a wall-clock bound;
#   test_audit_crash      counts appends between SIGKILLs against a stall deadline;
#   test_kvm*             boot guests, whose memory and timing bounds assume a quiet host.
# Every other test keeps to its own: temporary directories from mktemp, ports the kernel
# picks (127.0.0.1:0), network namespaces and PostgreSQL databases named by its pid, run
# cgroups named by its pid (sandbox/ns/cgroup.c), processes counted by those cgroups.
SERIAL='test_sandbox_attacks test_sandbox test_audit_crash test_kvm*'

. tests/tally.sh

# run_one BUILD DIR TEST: one test, its verdict printed whole under DIR's lock.
run_one() {
    name=${3##*/}
    t0=$(date +%s.%N)
    BUILD="$1" timeout -k 10 "${TEST_TIMEOUT:-1800}" "$3" >"$2/$name.out" 2>&1 </dev/null
    rc=$?
    secs=$(echo "$t0 $(date +%s.%N)" | awk '{ printf "%.1f", $2 - $1 }')
    tally "$name" "$2/$name.out" "$rc" "$secs" "$2" >"$2/$name.verdict"
    flock "$2/.print" cat "$2/$name.verdict"
    rm -f "$2/$name.out"
}
if [ "${1:-}" = --one ]; then
    shift
    run_one "$@"
    exit
fi

B=${1:-build}
[ $# = 0 ] || shift
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# named: each of those found whose name TEST_ONLY matches, when it is set
named() {
    [ -n "${TEST_ONLY:-}" ] || return 0
    for pat in $TEST_ONLY; do
        case $1 in $pat) return 0 ;; esac
    done
    return 1
}
[ $# -gt 0 ] || set -- "$B"/tests/test_* tests/test_*.sh
set -f   # SERIAL's and TEST_ONLY's globs are matched against names, not the files here
for t in "$@"; do
    [ -f "$t" ] && [ -x "$t" ] || continue
    case $t in *.d|*.o) continue ;; esac
    named "${t##*/}" || continue
    list=parallel
    for pat in $SERIAL; do
        case ${t##*/} in $pat) list=serial ;; esac
    done
    echo "$t" >>"$dir/$list"
done
set +f

for t in $(cat "$dir/serial" 2>/dev/null); do run_one "$B" "$dir" "$t"; done
# The longest first, by the times the last run kept (a test without one first of all), so
# that no long test starts last.
times=$B/tests/run-times
if [ -s "$dir/parallel" ]; then
    awk -v times="$times" '
        BEGIN { while ((getline l < times) > 0) { split(l, f, " "); s[f[2]] = f[1] } }
        { n = $0; sub(".*/", "", n); print (n in s ? s[n] : 1e9), $0 }' "$dir/parallel" |
        sort -k1,1gr | cut -d' ' -f2- |
        xargs -n 1 -P "${TEST_JOBS:-$(nproc)}" sh "$0" --one "$B" "$dir"
fi
if [ -d "$B/tests" ]; then
    cat "$dir"/*.tally 2>/dev/null | awk '{ print $6, $1 }' |
        cat - "$times" 2>/dev/null | awk '!seen[$2]++' >"$dir/times" && cp "$dir/times" "$times"
fi
tally_summary "$dir"
