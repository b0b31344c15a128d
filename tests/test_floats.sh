#!/bin/sh
# Floats past the double's range and -0.0 (issue 32): a program's output in-process must be
# CPython's (/usr/bin/python3 runs the same file), and a value CPython's double rounded (inf,
# an underflow to 0) must not be reported exact.
. tests/lib.sh
B=${BUILD:-build}
R="$B/calc-route"
PY=/usr/bin/python3
D=tests/data/floats
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# field JSON KEY...: a field of calc-route --json's answer
field() { $PY -c 'import json, sys
v = json.load(open(sys.argv[1]))
for k in sys.argv[2:]: v = v[k]
sys.stdout.write(str(v))' "$@"; }

if [ ! -x "$PY" ]; then
    unavailable floats "no $PY to compare with"
    summary
    exit 0
fi
for f in "$D"/*.py; do
    name=$(basename "$f" .py)
    $PY "$f" >"$tmp/want" 2>&1
    "$R" --json --tier none "$f" >"$tmp/got.json"
    expect "$name: route" inprocess "$(field "$tmp/got.json" route)"
    field "$tmp/got.json" stdout >"$tmp/got"
    if cmp -s "$tmp/want" "$tmp/got"; then ok; else bad "$name: output differs from CPython's:
$(diff "$tmp/got" "$tmp/want")"; fi
done

# exact: VALUE_REPR EXACT PROGRAM
exact() {
    printf '%s\n' "$3" >"$tmp/p.py"
    "$R" --json --tier none "$tmp/p.py" >"$tmp/p.json"
    expect "$3: value" "$1" "$(field "$tmp/p.json" value repr)"
    expect "$3: exact" "$2" "$(field "$tmp/p.json" value exact)"
}
exact inf False 'x = 1e308 * 10'
exact True False 'x = 1e308 * 10 == float("inf")'
exact 0.0 False 'x = 1e-200 * 1e-200'
exact True False 'x = 1e-200 * 1e-200 == 0'
exact -0.0 False 'x = -1e-200 * 1e-200'
exact -0.0 True 'x = 0.0 * -1'
exact -0.0 True 'x = round(-0.001, 2)'
exact 0.0 True 'x = -0.0 + 0.0'
exact 1.5e+308 True 'x = 1e308 * 1.5'
exact inf False 'x = 1e308 * 2 / 10'
# math.pi is CPython's double, so a pole is where CPython's is; cbrt(27) is 3 exactly (CPython's
# libm: 3.0000000000000004)
exact 1.633123935319536975596773704152892e+16 False 'import math
x = math.tan(math.pi / 2)'
exact 3.0 True 'import math
x = math.cbrt(27)'
exact 24.0 True 'import math
x = math.gamma(5)'
summary
