#!/bin/sh
# One validation: calc-route's flags, --vars, a --batch line's keys and the Python binding
# accept and refuse the same values with the same message (the library's), for engine
# options, request options and variables (big integers, Decimal and Fraction, NaN and the
# infinities). Each case gives one message that every path must print.
B=${BUILD:-build}
R="$B/calc-route"
PY=/usr/bin/python3
. tests/lib.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ok() { if [ "$1" = "$2" ]; then pass=$((pass + 1)); else fail=$((fail + 1)); printf 'FAIL %s: got [%s] want [%s]\n' "$3" "$1" "$2" >&2; fi; }
printf 'ans = x\n' >"$tmp/code.py"
# The binding loads the library of this build ($B's, not an installed one).
case "$B" in *asan*) python=0 ;; *) python=1 ;; esac
[ $python = 1 ] ||
    skip "the Python binding's cases" "python3 cannot load a sanitizer build of the library"
py() { CALCROUTE_LIB="$B/libcalcroute.so" PYTHONPATH=bindings/python $PY -c '
import calcroute, decimal, fractions, sys
from decimal import Decimal
from fractions import Fraction
try:
    r = eval(sys.argv[1])
    print(r.value if isinstance(r, calcroute.Result) else r)
except calcroute.CalcrouteError as e:
    print(e)' "$1"; }

# calc-route's message without its "calc-route: " and a flag's "--".
cli_msg() { sed -n '1{s/^calc-route: //; s/^--//; p}'; }
batch_msg() { $PY -c 'import json, sys; d = json.loads(sys.stdin.readline()); print(d["error"]["message"] if d["status"] == "bad_request" else d["value"]["repr"])'; }

# Engine options: the flag, the binding's keyword, --config.
engine_case() {   # name flag value python-literal message
    ok "$("$R" "--$2" "$3" "$tmp/code.py" 2>&1 </dev/null | cli_msg)" "$5" "$1: --$2"
    ok "$("$R" --config "$2=$3" "$tmp/code.py" 2>&1 </dev/null | sed -n '1s/^calc-route: --config: //p')" \
       "$5" "$1: --config"
    [ $python = 1 ] && ok "$(py "calcroute.Engine($2=$4)")" "$5" "$1: Engine($2=...)"
}
engine_case timeout-0 timeout 0 0 "timeout: want seconds above 0 (at most 86400), got '0'"
engine_case timeout-nan timeout nan 'float("nan")' "timeout: want seconds above 0 (at most 86400), got 'nan'"
engine_case timeout-inf timeout inf 'float("inf")' "timeout: want seconds above 0 (at most 86400), got 'inf'"
engine_case memory-frac memory 1.5 1.5 "memory: want MiB from 16 to 1048576, got '1.5'"
engine_case memory-big memory 4294967312 '2**32 + 16' "memory: want MiB from 16 to 1048576, got '4294967312'"
engine_case pool-65 pool 65 65 "pool: want auto or 0 to 64 warm sandboxes, got '65'"
engine_case tier tier docker '"docker"' "tier: want auto, ns, kvm or none, got 'docker'"
engine_case data data "$tmp/none" "\"$tmp/none\"" "data: want a directory, got '$tmp/none'"

# An evaluator limit, set and hit the same way from each.
ok "$(printf 'n = 0\nfor i in range(10 ** 6):\n    n += i\n' | "$R" --config max_steps=1000 --tier none 2>&1)" \
   "calc-route: LimitError: operation limit (1000 steps) (line 2, col 1)" "max_steps hit: calc-route"
[ $python = 1 ] && ok "$(py 'calcroute.Engine(tier="none", max_steps=1000).run("n = 0\nfor i in range(10 ** 6):\n    n += i\n")')" \
   "operation limit (1000 steps)" "max_steps hit: Engine"
ok "$("$R" --config max_stepz=1 "$tmp/code.py" 2>&1 </dev/null | sed -n 1p)" \
   "calc-route: --config: unknown option 'max_stepz'" "unknown option: --config"
[ $python = 1 ] && ok "$(py 'calcroute.Engine(max_stepz=1)')" "unknown option 'max_stepz'" "unknown option: Engine"

# Request options: the flag, a --batch line's key, the binding's keyword.
request_case() {  # name key cli-value json-value python-literal message
    ok "$("$R" "--$2" "$3" "$tmp/code.py" 2>&1 </dev/null | cli_msg)" "$6" "$1: --$2"
    ok "$(printf '{"code": "ans = 1", "%s": %s}\n' "$2" "$4" | "$R" --batch | batch_msg)" "$6" "$1: --batch"
    [ $python = 1 ] && ok "$(py "calcroute.run('ans = 1', $2=$5)")" "$6" "$1: run($2=...)"
}
request_case precision-0 precision 0 0 0 "precision: want a whole number from 1 to 1000, got '0'"
request_case precision-frac precision 34.5 34.5 34.5 "precision: want a whole number from 1 to 1000, got '34.5'"
request_case seed-big seed 4294967296 4294967296 '2**32' "seed: want a whole number from 0 to 4294967295, got '4294967296'"
request_case rounding rounding up '"up"' '"up"' "rounding: want half-even or half-up, got 'up'"

# Variables: --var's text, --vars's JSON, a --batch line's "vars", the binding's vars=.
var_case() {      # name cli-text json-text python-literal message-or-repr
    ok "$("$R" --var "x=$2" --tier none "$tmp/code.py" 2>&1 </dev/null | sed -n '1{s/^calc-route: //; s/^= //; p}')" \
       "$5" "$1: --var"
    printf '{"x": %s}\n' "$3" >"$tmp/vars.json"
    ok "$("$R" --vars "$tmp/vars.json" --tier none "$tmp/code.py" 2>&1 </dev/null |
          sed -n '1{s/^calc-route: --vars [^ ]*:[0-9]*:[0-9]*: //; s/^= //; p}')" "$5" "$1: --vars"
    ok "$(printf '{"code": "ans = x", "vars": {"x": %s}}\n' "$3" | "$R" --batch --tier none | batch_msg)" \
       "$5" "$1: --batch"
    [ $python = 1 ] && ok "$(py "calcroute.run('ans = x', vars={'x': $4}, tier='none').repr")" "$5" "$1: vars="
}
big=1267650600228229401496703205376
var_case int-past-64-bits "$big" "$big" '2**100' "$big"
var_case int-past-64-bits-neg "-$big" "-$big" '-2**100' "-$big"
var_case decimal 0.1 0.1 'Decimal("0.1")' "0.1"
var_case decimal-exp 1e400 1e400 'Decimal("1e400")' "1e+400"
var_case fraction-ending 0.375 0.375 'Fraction(3, 8)' "0.375"
var_case nan NaN NaN 'float("nan")' "variables: 'x': want finite numbers, got NaN"
var_case decimal-nan NaN NaN 'Decimal("NaN")' "variables: 'x': want finite numbers, got NaN"
var_case inf Infinity Infinity 'float("inf")' "variables: 'x': want finite numbers, got Infinity"
var_case minus-inf -Infinity -Infinity 'Decimal("-Infinity")' "variables: 'x': want finite numbers, got -Infinity"
var_case nested-nan NaN '[1, NaN]' '[1, float("nan")]' "variables: 'x': want finite numbers, got NaN"
# Python's float() spellings on the command line are the same numbers.
ok "$("$R" --var x=-inf "$tmp/code.py" 2>&1 | sed -n 1p)" "calc-route: variables: 'x': want finite numbers, got -inf" "--var x=-inf"
# A name that is not Python's, from each.
ok "$("$R" --var a-b=1 "$tmp/code.py" 2>&1 </dev/null | sed -n '1s/^calc-route: //p')" \
   "variables: 'a-b' is not a Python name" "bad name: --var"
printf '{"a-b": 1}\n' >"$tmp/vars.json"
ok "$("$R" --vars "$tmp/vars.json" "$tmp/code.py" 2>&1 </dev/null | sed -n '1s/^calc-route: --vars [^ ]*:[0-9]*:[0-9]*: //p')" \
   "variables: 'a-b' is not a Python name" "bad name: --vars"
ok "$(printf '{"code": "ans = 1", "vars": {"a-b": 1}}\n' | "$R" --batch | batch_msg)" \
   "variables: 'a-b' is not a Python name" "bad name: --batch"
[ $python = 1 ] && ok "$(py "calcroute.run('ans = 1', vars={'a-b': 1})")" "variables: 'a-b' is not a Python name" "bad name: vars="
# A Fraction whose decimal expansion does not end has no exact JSON text: the binding says so.
[ $python = 1 ] && ok "$(py "calcroute.run('ans = x', vars={'x': Fraction(1, 3)})")" \
   "variables: Fraction(1, 3) has no exact decimal text (JSON has no fractions): pass it as a str and convert it in the code" \
   "Fraction(1, 3)"
finish
