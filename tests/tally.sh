# tests/tally.sh: what the two runners share, sourced by tests/run.sh (this machine) and
# tests/kvm-host/run.sh (inside the nested test host): a test's verdict read from its output,
# and the run's summary from every verdict.
#
# A test ends with its closing line, "N passed, N failed, N skipped" (", N by design" after it
# when it has any), and names each skipped check, and each case left unchecked on purpose, on
# a line of its own on stderr (tests/testlib.h's SKIP() and BY_DESIGN(), tests/lib.sh's skip
# and unavailable):
#   SKIP name: reason
#   BY-DESIGN name: reason
# The closing line's counts must be those lines' counts. Under CI=true a skip must match a
# pattern of the expected list, tests/expected-skips ($TEST_EXPECTED_SKIPS names another), or
# its test fails.

TALLY_SKIP='^SKIP [^:]+: .'
TALLY_DESIGN='^BY-DESIGN [^:]+: .'

# tally NAME OUT RC SECS DIR: the verdict of test NAME, whose output (stdout and stderr) is in
# OUT, which ended with status RC after SECS seconds: on stdout its line, "ok" or "FAIL" with
# its closing line and time, and below it its SKIP lines, or on FAIL the end of its output;
# into DIR/NAME.tally its counts ("NAME PASSED FAILED SKIPPED BY-DESIGN SECS"), into
# DIR/NAME.skips its SKIP lines.
tally() {
    _name=$1 _out=$2 _rc=$3 _secs=$4 _dir=$5
    _line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$_out" | tail -n 1)
    _p=$(echo "$_line" | sed -nE 's/^([0-9]+) passed.*/\1/p')
    _f=$(echo "$_line" | sed -nE 's/^[0-9]+ passed, ([0-9]+) failed.*/\1/p')
    _s=$(echo "$_line" | sed -nE 's/.*, ([0-9]+) skipped.*/\1/p')
    _d=$(echo "$_line" | sed -nE 's/.*, ([0-9]+) by design.*/\1/p')
    _p=${_p:-0} _f=${_f:-0} _s=${_s:-0} _d=${_d:-0}
    grep -E "$TALLY_SKIP" "$_out" >"$_dir/$_name.skips" || :   # (safe under set -e)
    _ns=$(wc -l <"$_dir/$_name.skips")
    _nd=$(grep -cE "$TALLY_DESIGN" "$_out" || :)
    # What is wrong beside the test's own failures, each a reason its verdict is FAIL.
    _why=
    case $_rc in
    124|137) _why="still running after ${TEST_TIMEOUT:-1800} s, stopped" ;;
    0) ;;
    *) [ "$_rc" = 1 ] && [ "$_f" != 0 ] || _why="exit $_rc" ;;   # 1 is a failing test's own
    esac
    [ -n "$_line" ] || _why="$_why, no closing line"
    [ "$_ns" = "$_s" ] || _why="$_why, $_s skipped by its closing line but $_ns SKIP lines"
    [ "$_nd" = "$_d" ] || _why="$_why, $_d by design by its closing line but $_nd BY-DESIGN lines"
    _odd=$(grep -E '^SKIP( |:|$)' "$_out" | grep -vE "$TALLY_SKIP" | head -n 3 | paste -sd'|')
    [ -z "$_odd" ] || _why="$_why, not in the form 'SKIP name: reason': $_odd"
    if [ "${CI:-}" = true ]; then
        _list=${TEST_EXPECTED_SKIPS:-tests/expected-skips}
        while IFS= read -r _sk; do
            tally_expected "$_name ${_sk#SKIP }" "$_list" ||
                _why="$_why, a skip $_list does not list (CI=true): $_sk"
        done <"$_dir/$_name.skips"
    fi
    _why=${_why#, }
    if [ "$_f" = 0 ] && [ -z "$_why" ]; then
        echo "ok   $_name: $_line  [$_secs s]"
        sed 's/^/     /' "$_dir/$_name.skips"
    else
        echo "FAIL $_name: ${_line:-(no closing line)}${_why:+ ($_why)}  [$_secs s]"
        tail -n 40 "$_out"
        # a verdict of FAIL counts at least one failure
        [ "$_f" != 0 ] || _f=1
    fi
    echo "$_name $_p $_f $_s $_d $_secs" >"$_dir/$_name.tally"
}

# tally_expected "TEST NAME: REASON" LIST: whether a pattern of LIST (one a line, '#' begins a
# comment, shell glob syntax) matches this skip of TEST.
tally_expected() {
    grep -v -e '^#' -e '^[[:space:]]*$' "$2" 2>/dev/null | {
        while IFS= read -r _pat; do
            case "$1" in $_pat) exit 0 ;; esac
        done
        exit 1
    }
}

# tally_summary DIR: from DIR's verdicts, the skips by reason, the by-design count, the ten
# slowest tests and the closing line, "N passed, N failed, N skipped" (", N by design" after
# it when there are any); status 1 when anything failed.
tally_summary() {
    cat "$1"/*.tally 2>/dev/null >"$1/all" || : >"$1/all"
    # the reason is what follows "SKIP name: ", counted with the tests it came from
    for _f in "$1"/*.skips; do
        [ -s "$_f" ] || continue
        _t=${_f##*/}
        sed -E "s/^SKIP [^:]+: /${_t%.skips}\t/" "$_f"
    done | awk -F '\t' '
        { n[$2]++
          if (index(", " ts[$2] ", ", ", " $1 ", ") == 0) ts[$2] = ts[$2] (ts[$2] ? ", " : "") $1 }
        END {
            for (r in n) { if (!any++) { print "skips by reason:"; fflush() }
                           printf "%6d  %s (%s)\n", n[r], r, ts[r] | "sort -k1,1nr -k2" }
            close("sort -k1,1nr -k2")
        }'
    awk '$5 > 0 { d += $5; who = who (who ? ", " : "") $1 " " $5 }
         END { if (d) print "by design, not skips: " d " (" who ")" }' "$1/all"
    if [ "$(wc -l <"$1/all")" -gt 1 ]; then
        echo "slowest:"
        sort -k6,6nr "$1/all" | head -n 10 | awk '{ printf "%8.1f s  %s\n", $6, $1 }'
    fi
    awk '{ p += $2; f += $3; s += $4; d += $5 }
         END { printf "%d passed, %d failed, %d skipped", p, f, s
               if (d) printf ", %d by design", d
               printf "\n"; exit f != 0 }' "$1/all"
}
