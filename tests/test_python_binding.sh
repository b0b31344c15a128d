#!/bin/sh
# The Python package as a user gets it: `pip install --no-build-isolation .` into a fresh
# virtual environment (--system-site-packages: Debian's setuptools, wheel and pytest), then
# the binding's suite under Debian's pytest from outside the source tree, with no
# CALCROUTE_LIB or PYTHONPATH, so that the installed module and its own library are what run.
B=${BUILD:-build}
. tests/lib.sh
case "$B" in *asan*)
    skip_all "python binding" "python3 cannot load a sanitizer build of the library" ;;
esac
PY=/usr/bin/python3
src=$(pwd)
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
ok() { if [ "$1" = "$2" ]; then pass=$((pass + 1)); else fail=$((fail + 1)); printf 'FAIL %s: got [%s] want [%s]\n' "$3" "$1" "$2" >&2; fi; }

if ! $PY -m venv --system-site-packages "$stage/venv" >"$stage/venv.err" 2>&1; then
    unavailable "python binding" \
        "no virtual environment ($(tail -n 1 "$stage/venv.err")); install python3-venv"
    finish
fi
CALCROUTE_BUILD="$B" "$stage/venv/bin/pip" install -q --no-build-isolation --no-index . \
    >"$stage/pip.out" 2>&1
rc=$?
[ "$rc" = 0 ] || cat "$stage/pip.out" >&2
ok "$rc" 0 "pip install --no-build-isolation ."
rm -rf bindings/python/calcroute.egg-info

run() { (cd "$stage" && env -u CALCROUTE_LIB -u PYTHONPATH venv/bin/python "$@"); }
site=$(run -c 'import sysconfig; print(sysconfig.get_path("platlib"))')
out=$(run -c 'import calcroute; r = calcroute.run("ans = (5829 - 5735) / 5735"); print(calcroute.__file__, calcroute._lib._name, r.value)')
ok "$out" "$site/calcroute/__init__.py $site/calcroute/libcalcroute.so.0 94/5735" "import from the venv, its own library"
out=$(run -c 'import calcroute, typing; print(calcroute.__version__, typing.get_type_hints(calcroute.run)["return"].__name__)')
hv=$(sed -n 's/^#define CR_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\)$/\2/p' include/calcroute.h | paste -sd.)
ok "$out" "$hv Result" "version and type hints"
ok "$(run -c 'import calcroute; print(calcroute.library_version())')" "$hv" "the library's cr_version()"
[ -f "$site/calcroute/py.typed" ]; ok "$?" 0 "py.typed installed"
# The docstrings' examples, as help(calcroute) shows them, run as written (one is sandboxed).
out=$(run -c 'import doctest, calcroute; print(doctest.testmod(calcroute))' 2>&1)
ok "$out" "TestResults(failed=0, attempted=6)" "the docstrings' examples (doctest)"

if run -c 'import pytest' 2>/dev/null; then
    run -m pytest -p no:cacheprovider -q -rs "$src/bindings/python/tests" >"$stage/py.out" 2>&1
    rc=$?
    tail -n 1 "$stage/py.out" >&2
    # pytest's "SKIPPED [N] FILE:LINE: REASON" (N alike skips in one line) as N lines in the
    # suite's format
    sed -nE 's/^SKIPPED \[([0-9]+)\] (.*\/)?([^/:]+):([0-9]+): (.*)/\1 \3 line \4: \5/p' \
        "$stage/py.out" | while read -r k what; do
            while [ "$k" -gt 0 ]; do echo "SKIP $what"; k=$((k - 1)); done
        done >&2
    last=$(tail -n 1 "$stage/py.out")
    n() { echo "$last" | sed -nE "s/.*[^0-9]([0-9]+) $1.*/\1/p; s/^([0-9]+) $1.*/\1/p" | head -n 1; }
    p=$(n passed); f=$(n failed); e=$(n error); s=$(n skipped)
    [ "$rc" = 0 ] || cat "$stage/py.out" >&2
    pass=$((pass + ${p:-0})); fail=$((fail + ${f:-0} + ${e:-0})); skip=$((skip + ${s:-0}))
    [ "$rc" = 0 ] || [ "$(( ${f:-0} + ${e:-0} ))" != 0 ] || fail=$((fail + 1))
else
    unavailable pytest "not installed (Debian's python3-pytest); the suite runs under unittest"
    run -m unittest discover -s "$src/bindings/python/tests" -p 'test_*.py' >"$stage/py.out" 2>&1
    rc=$?
    [ "$rc" = 0 ] || cat "$stage/py.out" >&2
    ran=$(sed -nE 's/^Ran ([0-9]+) tests?.*/\1/p' "$stage/py.out")
    ok "$rc" 0 "the binding's suite under unittest"
    pass=$((pass + ${ran:-0}))
fi
finish
