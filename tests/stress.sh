#!/bin/sh
# tests/stress.sh [ROUNDS]: the suite on a loaded machine, on demand (a bench, not part of
# make test): ROUNDS rounds (default 3) of `make test` and `make check-kvm`, each run beside
# `stress-ng --cpu 2`, which keeps both cores of the build machines busy throughout; prints each
# run's verdict, its closing line, its wall time and the load average at its end. A verdict
# that holds here holds on a shared machine. Exit status 1 when any run failed.
#   STRESS_CPUS    stress-ng's CPU workers (default 2)
#   STRESS_KVM=0   no make check-kvm
#   STRESS_LOG     where each run's output is kept (default: a new temporary directory)
#   TEST_ONLY, KVMHOST_TESTS   a part of either suite (tests/run.sh, tests/kvm-host/run.sh)
set -u
rounds=${1:-3}
command -v stress-ng >/dev/null ||
    { echo "stress.sh: no stress-ng (scripts/install-deps.sh installs it)" >&2; exit 2; }
log=${STRESS_LOG:-$(mktemp -d)}
mkdir -p "$log"
targets=test
[ "${STRESS_KVM:-1}" = 0 ] || targets="test check-kvm"
stress-ng --cpu "${STRESS_CPUS:-2}" --quiet >"$log/stress-ng.log" 2>&1 &
spid=$!
trap 'kill "$spid" 2>/dev/null; wait "$spid" 2>/dev/null' EXIT
trap 'exit 1' INT TERM
echo "stress.sh: $rounds rounds of make $targets beside stress-ng --cpu ${STRESS_CPUS:-2}; output in $log"
failed=0 round=1
while [ "$round" -le "$rounds" ]; do
    for target in $targets; do
        out=$log/$target-$round.log
        t0=$(date +%s)
        make "$target" >"$out" 2>&1
        rc=$?
        secs=$(($(date +%s) - t0))
        line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$out" | tail -n 1)
        verdict=ok
        [ "$rc" = 0 ] || { verdict=FAIL; failed=$((failed + 1)); }
        kill -0 "$spid" 2>/dev/null || verdict="$verdict (stress-ng had stopped)"
        printf 'round %d: make %-9s %-4s %5d s  load %s  %s\n' "$round" "$target" "$verdict" \
            "$secs" "$(cut -d' ' -f1-3 /proc/loadavg)" "${line:-(no closing line: $out)}"
    done
    round=$((round + 1))
done
[ "$failed" = 0 ]
