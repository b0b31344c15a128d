#!/bin/sh
# make bench: every benchmark, each printing its figures beside a peer measured in the same
# run. Figures only: nothing here passes or fails on time.
B=${1:-build}
CORPUS=${CR_CORPUS:-../shared/corpus}
PY=/usr/bin/python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "== in-process latency per program (Python corpus), microseconds"
if [ -d "$CORPUS/python" ]; then
    "$B/bench/bench_eval" "$CORPUS" "$tmp/programs.jsonl" 5
    "$PY" bench/bench_eval_peer.py "$tmp/programs.jsonl" "$B/calc-route" 5
else
    echo "skipped: no corpus at $CORPUS (set CR_CORPUS)"
fi
echo
echo "== in-process loops: ns per iteration beside CPython (ratio: calcroute / CPython)"
"$B/bench/bench_loop" "$tmp/loops.jsonl" 200000 21
"$PY" bench/bench_loop_peer.py "$tmp/loops.jsonl" 21
echo
echo "== FinQA DSL programs per second"
if [ -d "$CORPUS/finqa" ]; then "$B/bench/bench_dsl" "$CORPUS"; else echo "skipped: no corpus"; fi
echo
echo "== Python binding: calls per second"
CALCROUTE_LIB="$B/libcalcroute.so" PYTHONPATH=bindings/python "$PY" bench/bench_binding.py 2
echo
sh bench/bench_sandbox.sh "$B"
echo
echo "== kvm tier: cold start, our VMM beside QEMU microvm (inside the nested test host)"
if make -s kvm-kernel kvm-guest >/dev/null 2>&1; then sh bench/bench_kvm.sh "$B"
else echo "skipped: the guest kernel or initramfs could not be built"; fi
for extra in bench/run-*.sh; do
    [ -f "$extra" ] || continue
    echo
    sh "$extra" "$B"
done
