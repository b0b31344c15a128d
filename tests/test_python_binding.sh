#!/bin/sh
# The Python binding's unittest suite against the library just built.
B=${BUILD:-build}
case "$B" in *asan*)
    echo "SKIP python binding: python3 cannot load a sanitizer build of the library" >&2
    echo "0 passed, 0 failed, 1 skipped"; exit 0 ;;
esac
out=$(mktemp)
CALCROUTE_LIB="$B/libcalcroute.so" PYTHONPATH=bindings/python \
    /usr/bin/python3 -m unittest discover -s bindings/python/tests -p "test_*.py" >"$out" 2>&1
rc=$?
cat "$out" >&2
ran=$(sed -nE 's/^Ran ([0-9]+) tests?.*/\1/p' "$out")
f1=$(sed -nE 's/.*FAILED \(.*failures=([0-9]+).*/\1/p' "$out")
f2=$(sed -nE 's/.*FAILED \(.*errors=([0-9]+).*/\1/p' "$out")
failed=$(( ${f1:-0} + ${f2:-0} ))
rm -f "$out"
ran=${ran:-0}; failed=${failed:-0}
[ "$rc" = 0 ] || [ "$failed" != 0 ] || failed=1
echo "$((ran - failed)) passed, $failed failed, 0 skipped"
[ "$failed" = 0 ]
