#!/bin/sh
# make install into a staging directory, then a C program and the Python binding use the
# installed library through pkg-config and the staged paths, not the build tree.
B=${BUILD:-build}
case "$B" in *asan*)
    echo "SKIP install: a sanitizer build cannot be loaded by an uninstrumented program or python3" >&2
    echo "0 passed, 0 failed, 1 skipped"; exit 0 ;;
esac
pass=0 fail=0
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
ok() { if [ "$1" = "$2" ]; then pass=$((pass + 1)); else fail=$((fail + 1)); printf 'FAIL %s: got [%s] want [%s]\n' "$3" "$1" "$2" >&2; fi; }

make -s install B="$B" DESTDIR="$stage" PREFIX=/usr >/dev/null 2>"$stage/install.err"
ok "$?" 0 "make install"
for f in usr/bin/calc-route usr/lib/libcalcroute.so.0 usr/lib/libcalcroute.a usr/include/calcroute.h \
         usr/lib/pkgconfig/calcroute.pc usr/share/man/man1/calc-route.1 usr/share/man/man3/libcalcroute.3 \
         usr/lib/python3/dist-packages/calcroute/__init__.py; do
    [ -e "$stage/$f" ]; ok "$?" 0 "installed $f"
done
# Only cr_* is exported.
others=$(nm -D --defined-only "$stage/usr/lib/libcalcroute.so.0" | awk '{print $3}' | grep -v '^cr_' | grep -v '^CALCROUTE_0$' | head -3)
ok "$others" "" "exported symbols other than cr_*"

export PKG_CONFIG_PATH="$stage/usr/lib/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$stage"
cc -std=c11 -Wall -Wextra -Werror examples/embed.c $(pkg-config --cflags --libs calcroute) \
   -o "$stage/embed" 2>"$stage/cc.err"
ok "$?" 0 "compile examples/embed.c against the installed library"
out=$(LD_LIBRARY_PATH="$stage/usr/lib" "$stage/embed")
ok "$out" "inprocess = 1.64 (41/25)" "examples/embed.c output"
# The program really loaded the staged library.
lib=$(LD_LIBRARY_PATH="$stage/usr/lib" ldd "$stage/embed" | sed -n 's/.*libcalcroute.so.0 => \([^ ]*\).*/\1/p')
ok "$lib" "$stage/usr/lib/libcalcroute.so.0" "libcalcroute resolved from the stage"

out=$(CALCROUTE_LIB="$stage/usr/lib/libcalcroute.so.0" PYTHONPATH="$stage/usr/lib/python3/dist-packages" \
      /usr/bin/python3 -c 'import calcroute; r = calcroute.run("ans = (5829 - 5735) / 5735"); print(r.route, r.value, calcroute.__file__.startswith("'"$stage"'"))')
ok "$out" "inprocess 94/5735 True" "python binding from the stage"
# The binding's whole unittest suite against the staged install.
CALCROUTE_LIB="$stage/usr/lib/libcalcroute.so.0" PYTHONPATH="$stage/usr/lib/python3/dist-packages" \
    /usr/bin/python3 -m unittest discover -s bindings/python/tests -p 'test_*.py' >"$stage/py.out" 2>&1
rc=$?
[ "$rc" = 0 ] || cat "$stage/py.out" >&2
ok "$rc" 0 "python unittest suite against the staged install"

echo "$pass passed, $fail failed, 0 skipped"
[ "$fail" = 0 ]
