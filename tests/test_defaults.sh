#!/bin/sh
# The documents that state a default say what common/defaults.h, the defaults' one home,
# defines: the man pages, the public header's option list, the Python binding's docstrings.
cd "$(dirname "$0")/.." || exit 1
pass=0 fail=0
def() { sed -nE "s/^#define $1 \"?([^\" ]+)\"?$/\1/p" common/defaults.h; }
check() {   # FILE TEXT: TEXT occurs in FILE
    if grep -qF -- "$2" "$1"; then pass=$((pass + 1)); else
        fail=$((fail + 1)); echo "FAIL $1 does not say [$2]" >&2
    fi
}
interp=$(def CR_DEFAULT_INTERPRETER) timeout=$(def CR_DEFAULT_TIMEOUT_S)
mem=$(def CR_DEFAULT_MEMORY_MIB) prec=$(def CR_DEFAULT_PRECISION)
evalmem=$(def CR_DEFAULT_MAX_EVAL_MEMORY) depth=$(def CR_DEFAULT_MAX_DEPTH)
recursion=$(def CR_DEFAULT_MAX_RECURSION)
for v in "$interp" "$timeout" "$mem" "$prec" "$evalmem" "$depth" "$recursion"; do
    [ -n "$v" ] || { echo "FAIL a default missing from common/defaults.h" >&2; fail=$((fail + 1)); }
done
check docs/calc-route.1 "default $timeout)."
check docs/calc-route.1 "Sandbox memory (default $mem)."
check docs/calc-route.1 "default $prec)."
check docs/calc-route.1 "(default \\fB$interp\\fR)"
for f in docs/libcalcroute.3 include/calcroute.h; do
    check $f "(default $timeout)"
    check $f "(default $mem)"
    check $f "(default $prec)"
    check $f "(default $interp)"
    check $f "(default $evalmem)"
    check $f "(default $depth)"
    check $f "(default $recursion, CPython's recursion limit)"
done
check bindings/python/calcroute/__init__.py "(default $timeout)."
check bindings/python/calcroute/__init__.py "(default $mem)."
check bindings/python/calcroute/__init__.py "(default $interp)"
check README.md "$interp"
echo "$pass passed, $fail failed, 0 skipped"
[ "$fail" = 0 ]
