#!/bin/sh
# tests/run.sh itself, on fixture tests made here: skips and by-design cases counted apart and
# summed by reason; a closing line its SKIP lines do not bear out failed; under CI=true a skip
# the expected list does not name failed by name, one it names passed, and tests/lib.sh's
# unavailable() a failure; tests run side by side with each one's output kept together.
. tests/lib.sh
unset TEST_ONLY   # the runs below name their tests; the outer run's choice is not theirs
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/b/tests" "$tmp/t"
# fixture NAME BODY: an executable test $tmp/t/NAME running BODY
fixture() {
    printf '#!/bin/sh\n%s\n' "$2" >"$tmp/t/$1"
    chmod +x "$tmp/t/$1"
}
fixture test_skips.sh 'echo "SKIP widget: no widget here" >&2
echo "1 passed, 0 failed, 1 skipped"'
fixture test_design.sh 'echo "BY-DESIGN f(2 arguments): the sandbox answers it" >&2
echo "2 passed, 0 failed, 0 skipped, 1 by design"'
fixture test_miscount.sh 'echo "0 passed, 0 failed, 1 skipped"'
fixture test_unnamed.sh 'echo "SKIP: no name" >&2
echo "0 passed, 0 failed, 1 skipped"'
fixture test_unavailable.sh '. tests/lib.sh
unavailable registry "npm ci failed (registry unreachable?)"
finish'
for x in a b; do
    fixture "test_$x.sh" "for i in 1 2 3 4 5; do echo \"$x \$i\"; sleep 0.05; done
echo '0 passed, 1 failed, 0 skipped'
exit 1"
done
echo 'test_skips.sh widget: no widget*' >"$tmp/listed"
echo 'test_skips.sh widget: no gadget*' >"$tmp/unlisted"

# run LIST TEST...: tests/run.sh on the fixtures named, one at a time; its exit status and
# output with the times taken out (the slowest list, and each verdict's "[N s]").
run() {
    list=$1
    shift
    args=
    for t in "$@"; do args="$args $tmp/t/$t"; done
    out=$(TEST_JOBS=1 TEST_EXPECTED_SKIPS="$tmp/$list" sh tests/run.sh "$tmp/b" $args 2>&1)
    echo "$?"
    echo "$out" | sed -e '/^slowest:$/,/^[0-9]* passed/{/^slowest:$/d;/^ .* s  /d}' \
        -e 's/  \[[0-9.]* s\]$//'
}

expect skips-counted "0
ok   test_skips.sh: 1 passed, 0 failed, 1 skipped
     SKIP widget: no widget here
skips by reason:
     1  no widget here (test_skips.sh)
1 passed, 0 failed, 1 skipped" "$(CI= run unlisted test_skips.sh)"
expect by-design-apart "0
ok   test_design.sh: 2 passed, 0 failed, 0 skipped, 1 by design
by design, not skips: 1 (test_design.sh 1)
2 passed, 0 failed, 0 skipped, 1 by design" "$(CI= run unlisted test_design.sh)"
expect ci-unlisted-skip-fails "1
FAIL test_skips.sh: 1 passed, 0 failed, 1 skipped (a skip $tmp/unlisted does not list (CI=true): SKIP widget: no widget here)
SKIP widget: no widget here
1 passed, 0 failed, 1 skipped
skips by reason:
     1  no widget here (test_skips.sh)
1 passed, 1 failed, 1 skipped" "$(CI=true run unlisted test_skips.sh)"
expect ci-listed-skip-passes "0
ok   test_skips.sh: 1 passed, 0 failed, 1 skipped
     SKIP widget: no widget here
skips by reason:
     1  no widget here (test_skips.sh)
1 passed, 0 failed, 1 skipped" "$(CI=true run listed test_skips.sh)"
expect miscount-fails "1
FAIL test_miscount.sh: 0 passed, 0 failed, 1 skipped (1 skipped by its closing line but 0 SKIP lines)
0 passed, 0 failed, 1 skipped
0 passed, 1 failed, 1 skipped" "$(CI= run listed test_miscount.sh)"
expect unnamed-skip-fails "1
FAIL test_unnamed.sh: 0 passed, 0 failed, 1 skipped (1 skipped by its closing line but 0 SKIP lines, not in the form 'SKIP name: reason': SKIP: no name)
SKIP: no name
0 passed, 0 failed, 1 skipped
0 passed, 1 failed, 1 skipped" "$(CI= run listed test_unnamed.sh)"
expect unavailable-skips "0
ok   test_unavailable.sh: 0 passed, 0 failed, 1 skipped
     SKIP registry: npm ci failed (registry unreachable?)
skips by reason:
     1  npm ci failed (registry unreachable?) (test_unavailable.sh)
0 passed, 0 failed, 1 skipped" "$(CI= run listed test_unavailable.sh)"
expect ci-unavailable-fails "1
FAIL test_unavailable.sh: 0 passed, 1 failed, 0 skipped
FAIL registry: npm ci failed (registry unreachable?) (under CI that fails)
0 passed, 1 failed, 0 skipped
0 passed, 1 failed, 0 skipped" "$(CI=true run listed test_unavailable.sh)"

# Two at once, each printing over a quarter of a second: each one's lines together.
out=$(TEST_JOBS=2 sh tests/run.sh "$tmp/b" "$tmp/t/test_a.sh" "$tmp/t/test_b.sh" 2>&1)
expect side-by-side "1 5 5 0 passed, 2 failed, 0 skipped" \
    "$? $(echo "$out" | grep -c '^a [0-9]$') $(echo "$out" | grep -c '^b [0-9]$') $(echo "$out" | tail -n 1)"
for x in a b; do
    expect "$x-kept-together" "1 2 3 4 5" \
        "$(echo "$out" | grep -n "^$x [0-9]$" | awk -F: 'NR == 1 { n = $1 } { printf "%s%d", (NR > 1 ? " " : ""), $1 - n + 1 }')"
done
# every test's time, for the next run to start the longest first
expect times-kept "test_a.sh test_b.sh test_design.sh test_miscount.sh test_skips.sh test_unavailable.sh test_unnamed.sh" \
    "$(awk '{ print $2 }' "$tmp/b/tests/run-times" | sort | paste -sd' ')"
finish
