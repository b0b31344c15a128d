#!/bin/sh
# Runs every test binary under $1/tests and every tests/test_*.sh, then prints the total as
# "N passed, N failed, N skipped". Exit status 1 when any test failed, crashed or ran past
# TEST_TIMEOUT seconds (default 1800).
B=${1:-build}
pass=0 fail=0 skip=0 bad=0
for t in "$B"/tests/test_* tests/test_*.sh; do
    [ -f "$t" ] || continue
    case "$t" in *.d|*.o) continue ;; esac
    [ -x "$t" ] || continue
    name=$(basename "$t")
    out=$(mktemp)
    # A test that hangs fails alone, named, instead of stopping the whole run.
    BUILD="$B" timeout -k 10 "${TEST_TIMEOUT:-1800}" "$t" >"$out" 2>"$out.err"
    rc=$?
    [ "$rc" = 124 ] || [ "$rc" = 137 ] &&
        echo "$name: still running after ${TEST_TIMEOUT:-1800} s, stopped" >>"$out.err"
    line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$out" | tail -n 1)
    if [ -z "$line" ]; then
        echo "FAIL $name: exit $rc with no summary line"; bad=$((bad + 1))
        tail -n 20 "$out" "$out.err"
    else
        p=$(echo "$line" | sed -E 's/^([0-9]+) passed.*/\1/')
        f=$(echo "$line" | sed -E 's/^[0-9]+ passed, ([0-9]+) failed.*/\1/')
        s=$(echo "$line" | sed -nE 's/.*, ([0-9]+) skipped.*/\1/p'); s=${s:-0}
        pass=$((pass + p)); fail=$((fail + f)); skip=$((skip + s))
        if [ "$f" != 0 ] || [ "$rc" != 0 ]; then
            echo "FAIL $name: $line (exit $rc)"; cat "$out.err" | tail -n 40
            [ "$f" != 0 ] || bad=$((bad + 1))
        else
            echo "ok   $name: $line"
            grep '^SKIP' "$out.err" | sed 's/^/     /'
        fi
    fi
    rm -f "$out" "$out.err"
done
fail=$((fail + bad))
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" = 0 ]
