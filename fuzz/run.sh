#!/bin/sh
# Runs every fuzz target for SECONDS seconds, one after the other, and prints one line per
# target: runs, executions per second, corpus size, and the verdict. Exit status 1 when any
# target found something (crash, leak, timeout, out-of-memory, UB): its input is under
# FUZZ_B/findings/<target>/ and the log under FUZZ_B/logs/<target>.log.
#
# usage: fuzz/run.sh FUZZ_B SECONDS TARGET...
# With FUZZ_RUNS=N in the environment each target instead runs N inputs from seed 1: the same
# run on every machine from the same seeds, which is what CI wants (a time budget finds
# different inputs on a loaded machine and a quiet one).
set -u
FB=$1 SECS=$2
shift 2
failed=0 start=$(date +%s)
for t in "$@"; do
    corpus="$FB/corpus/$t" seeds="$FB/seeds/$t" findings="$FB/findings/$t/" log="$FB/logs/$t.log"
    mkdir -p "$corpus" "$seeds" "$findings" "$FB/logs"
    # -detect_leaks=0 on the targets that run the parser or the engine: a leak check after
    # each input (stopping every thread) cost them 2 to 3 times their speed. LeakSanitizer
    # still checks the whole run at exit and fails it, with the leaking stacks.
    case "$t" in
        fuzz_python|fuzz_parser|fuzz_fastpath)
            opts="-dict=fuzz/python.dict -max_len=8192 -detect_leaks=0" ;;
        fuzz_dsl_eval) opts="-dict=fuzz/dsl.dict -max_len=4096 -detect_leaks=0" ;;
        fuzz_mutate) opts="-max_len=256 -detect_leaks=0" ;;
        fuzz_dsl) opts="-dict=fuzz/dsl.dict -max_len=4096" ;;
        fuzz_request) opts="-dict=fuzz/request.dict -max_len=8192 -detect_leaks=0" ;;
        fuzz_audit) opts="-max_len=1024" ;;
        fuzz_doorbell|fuzz_tlog) opts="-max_len=2048" ;;
        *) opts="-max_len=64" ;;
    esac
    # -timeout: one input running 10 s is a hang; -rss_limit_mb: a blow-up; the new inputs
    # go to $corpus (kept between runs), the seeds are read only.
    # fuzz_mutate's every input is a whole program of callbacks that runs up to the fuzz
    # engine's operation limit, twice when exact: about 40 inputs a second against thousands
    # for the others, so a run count takes a twentieth of theirs (3 000 for CI's 60 000).
    runs=${FUZZ_RUNS:-}
    [ -z "$runs" ] || [ "$t" != fuzz_mutate ] || runs=$((runs / 20))
    if [ -n "$runs" ]; then budget="-runs=$runs -seed=1"; else budget="-max_total_time=$SECS"; fi
    t0=$(date +%s)
    # shellcheck disable=SC2086
    "$FB/$t" $opts $budget -timeout=10 -rss_limit_mb=2048 \
        -print_final_stats=1 -artifact_prefix="$findings" "$corpus" "$seeds" >"$log" 2>&1
    rc=$?
    took=$(( $(date +%s) - t0 ))
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    eps=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
    size=$(ls "$corpus" | wc -l)
    if [ "$rc" = 0 ]; then
        verdict=ok
    else
        verdict="FINDING (exit $rc): $(ls -t "$findings" | head -n 1)"
        failed=1
    fi
    printf '%-16s %4s s %10s runs %7s exec/s %6s corpus  %s\n' "$t" "$took" "${runs:-?}" \
        "${eps:-?}" "$size" "$verdict"
    if [ "$rc" != 0 ]; then
        # The target's own words just before the report (a differential target says what
        # differed), the report, and the input itself in base64 (at most 4 KiB of it), so a
        # finding on a machine we cannot reach can be replayed here.
        grep -B 4 -m 1 -E '^==[0-9]+==|runtime error' "$log" | grep -v -E '^#[0-9]+|^==[0-9]+==' |
            sed 's/^/    /'
        grep -E 'ERROR|SUMMARY|#[0-9]+ 0x' "$log" | head -n 30 | sed 's/^/    /'
        found=$(ls -t "$findings" | head -n 1)
        if [ -n "$found" ]; then
            echo "    input ($(wc -c <"$findings$found") bytes, base64):"
            head -c 4096 "$findings$found" | base64 | sed 's/^/    /'
        fi
    fi
done
echo "fuzz: $# targets, $(( $(date +%s) - start )) s in all"
[ "$failed" = 0 ]
