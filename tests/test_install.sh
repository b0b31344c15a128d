#!/bin/sh
# make install: into a staging root (DESTDIR, PREFIX=/usr/local, as a package build does) and
# to a prefix of its own; a C program builds through pkg-config against each, and the Python
# module imports from the staged tree with nothing but PYTHONPATH, loading the staged library.
B=${BUILD:-build}
. tests/lib.sh
case "$B" in *asan*)
    skip_all install "a sanitizer build cannot be loaded by an uninstrumented program or python3" ;;
esac
PY=/usr/bin/python3
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
ok() { if [ "$1" = "$2" ]; then pass=$((pass + 1)); else fail=$((fail + 1)); printf 'FAIL %s: got [%s] want [%s]\n' "$3" "$1" "$2" >&2; fi; }
site=$($PY -c 'import sys; print("/usr/local/lib/python%d.%d/dist-packages" % sys.version_info[:2])')

# The kvm guest takes minutes to build (make kvm-kernel kvm-guest): a stand-in kvm directory
# here, installed because it is there; the second install below has none.
mkdir -p "$stage/kvm"
echo kernel >"$stage/kvm/vmlinuz"
echo initramfs >"$stage/kvm/initrd.cpio"
make -s install B="$B" PYTHON=$PY DESTDIR="$stage/root" PREFIX=/usr/local KVM_DIR="$stage/kvm" \
    >/dev/null 2>"$stage/install.err"
rc=$?
[ "$rc" = 0 ] || cat "$stage/install.err" >&2
ok "$rc" 0 "make install DESTDIR PREFIX=/usr/local"
kvm=$stage/root/usr/local/lib/calcroute/kvm
ok "$(cat "$kvm/vmlinuz" "$kvm/initrd.cpio" 2>&1)" "kernel
initramfs" "the kvm directory installed"
ok "$(stat -c %a "$kvm/vmlinuz" "$kvm/initrd.cpio")" "644
644" "the kvm files' modes"
# A program of the library, installed, finds the kvm directory of its own prefix (staged or
# not): test_kvm_dir --resolve prints where the tier would look.
cp "$B/tests/test_kvm_dir" "$stage/root/usr/local/bin/"
ok "$(cd "$stage" && env -u CALCROUTE_KVM_DIR root/usr/local/bin/test_kvm_dir --resolve)" \
   "installed $kvm" "the installed kvm directory, found from the program's path"
ok "$(cd "$stage" && CALCROUTE_KVM_DIR=/elsewhere root/usr/local/bin/test_kvm_dir --resolve)" \
   '$CALCROUTE_KVM_DIR /elsewhere' "CALCROUTE_KVM_DIR over the installed kvm directory"
for f in bin/calc-route lib/libcalcroute.so.0 lib/libcalcroute.a include/calcroute.h \
         lib/pkgconfig/calcroute.pc share/man/man1/calc-route.1 share/man/man3/libcalcroute.3; do
    [ -e "$stage/root/usr/local/$f" ]; ok "$?" 0 "installed $f"
done
for f in __init__.py py.typed libcalcroute.so.0; do
    [ -e "$stage/root$site/calcroute/$f" ]; ok "$?" 0 "installed $site/calcroute/$f"
done
ok "$(readlink "$stage/root$site/calcroute/libcalcroute.so.0")" "../../../libcalcroute.so.0" "the package's link to the library"
ok "$(sed -n 's/^prefix=//p' "$stage/root/usr/local/lib/pkgconfig/calcroute.pc")" /usr/local "calcroute.pc prefix"
# Only cr_* is exported.
others=$(nm -D --defined-only "$stage/root/usr/local/lib/libcalcroute.so.0" | awk '{print $3}' | grep -v '^cr_' | grep -v '^CALCROUTE_0$' | head -3)
ok "$others" "" "exported symbols other than cr_*"

# Debian's python3 searches $site: PYTHONPATH stands for the staging root only.
out=$(cd "$stage" && env -u CALCROUTE_LIB PYTHONPATH="$stage/root$site" $PY -c 'import calcroute; r = calcroute.run("ans = (5829 - 5735) / 5735"); print(r.route, r.value, calcroute.__file__, calcroute._lib._name)')
ok "$out" "inprocess 94/5735 $stage/root$site/calcroute/__init__.py $stage/root$site/calcroute/libcalcroute.so.0" "python module from the stage"
ok "$($PY -c "import sys; print('$site' in sys.path)")" True "$site is on Debian's python3 path"

export PKG_CONFIG_PATH="$stage/root/usr/local/lib/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$stage/root"
cc -std=c11 -Wall -Wextra -Werror examples/embed.c $(pkg-config --cflags --libs calcroute) \
   -o "$stage/embed" 2>"$stage/cc.err"
ok "$?" 0 "compile examples/embed.c against the staged library"
out=$(LD_LIBRARY_PATH="$stage/root/usr/local/lib" "$stage/embed")
ok "$out" "inprocess = 1.64 (41/25)" "examples/embed.c output"
lib=$(LD_LIBRARY_PATH="$stage/root/usr/local/lib" ldd "$stage/embed" | sed -n 's/.*libcalcroute.so.0 => \([^ ]*\).*/\1/p')
ok "$lib" "$stage/root/usr/local/lib/libcalcroute.so.0" "libcalcroute resolved from the stage"

# Hardened as Debian builds (the Makefile's HARDEN_*): full RELRO (a GNU_RELRO segment and
# BIND_NOW), a position-independent calc-route, the stack protector's and _FORTIFY_SOURCE's
# checked calls.
for f in bin/calc-route bin/calc-audit lib/libcalcroute.so.0; do
    e=$stage/root/usr/local/$f
    ok "$(readelf -lW "$e" | grep -c GNU_RELRO)" 1 "$f: a RELRO segment"
    ok "$(readelf -d "$e" | grep -cE '\(FLAGS\) +BIND_NOW|\(FLAGS_1\) +Flags: NOW')" 2 "$f: BIND_NOW"
    readelf --dyn-syms -W "$e" | grep -q ' __stack_chk_fail@'; ok "$?" 0 "$f: -fstack-protector-strong"
    readelf --dyn-syms -W "$e" | grep -q ' __[a-z]*_chk@'; ok "$?" 0 "$f: _FORTIFY_SOURCE"
done
ok "$(readelf -h "$stage/root/usr/local/bin/calc-route" | sed -n 's/^ *Type: *//p')" \
   "DYN (Position-Independent Executable file)" "calc-route is PIE"

# A user's flags are kept, between the hardening (which they may turn off) and what the build
# needs (which they cannot drop).
make -nB B="$B" CFLAGS='-O1 -DUSER_CFLAG' CPPFLAGS=-DUSER_CPPFLAG LDFLAGS=-Wl,-O1 \
    "$B/libcalcroute.so" >"$stage/flags" 2>&1
ok "$(grep -c -- ' -D_FORTIFY_SOURCE=2 -DUSER_CPPFLAG -I. .*-fstack-protector-strong -O1 -DUSER_CFLAG -std=c11 .* -c common/common.c ' "$stage/flags")" 1 \
   "compiling with the user's CPPFLAGS and CFLAGS"
ok "$(grep -c -- ' -Wl,-z,relro -Wl,-z,now -Wl,-O1 -shared ' "$stage/flags")" 1 "linking with the user's LDFLAGS"

# uninstall takes away all that install put, and the __pycache__ an import leaves (made here
# whatever PYTHONDONTWRITEBYTECODE says).
$PY -m compileall -q "$stage/root$site/calcroute" >/dev/null
ok "$(find "$stage/root" -path '*/calcroute/__pycache__/*' | wc -l)" 1 "the package's __pycache__"
make -s uninstall B="$B" PYTHON=$PY DESTDIR="$stage/root" PREFIX=/usr/local >/dev/null 2>"$stage/un.err"
ok "$?" 0 "make uninstall DESTDIR PREFIX=/usr/local"
# Our copy of test_kvm_dir is the one file that must stay.
ok "$(find "$stage/root" ! -type d)" "$stage/root/usr/local/bin/test_kvm_dir" "left after uninstall"
ok "$(find "$stage/root" -name '*calcroute*')" "" "no calcroute directory left"

# A prefix of its own, no DESTDIR: calcroute.pc carries it, and pkg-config alone finds it.
unset PKG_CONFIG_SYSROOT_DIR
make -s install B="$B" PYTHON=$PY PREFIX="$stage/opt" KVM_DIR="$stage/nokvm" \
    >"$stage/install2.out" 2>"$stage/install2.err"
ok "$?" 0 "make install PREFIX=$stage/opt"
ok "$(grep kvm "$stage/install2.out")" "install: no kvm guest in $stage/nokvm (make install-kvm builds and installs it)" "make install without a kvm guest says so"
[ ! -e "$stage/opt/lib/calcroute" ]; ok "$?" 0 "no kvm directory installed without a guest"
export PKG_CONFIG_PATH="$stage/opt/lib/pkgconfig"
ok "$(pkg-config --variable=prefix calcroute)" "$stage/opt" "calcroute.pc prefix"
cc -std=c11 -Wall -Wextra -Werror examples/embed.c $(pkg-config --cflags --libs calcroute) \
   -Wl,-rpath,"$(pkg-config --variable=libdir calcroute)" -o "$stage/embed2" 2>"$stage/cc2.err"
ok "$?" 0 "compile examples/embed.c against $stage/opt"
ok "$("$stage/embed2")" "inprocess = 1.64 (41/25)" "examples/embed.c output from $stage/opt"
# The header's version and the library's agree with the one make installed.
printf '#include <calcroute.h>\n#include <stdio.h>\nint main(void) { printf("%%s %%s %%d\\n", CR_VERSION_STRING, cr_version(), CR_VERSION_MAJOR * 10000 + CR_VERSION_MINOR * 100 + CR_VERSION_PATCH); return 0; }\n' >"$stage/v.c"
cc -std=c11 -Wall -Wextra -Werror "$stage/v.c" $(pkg-config --cflags --libs calcroute) \
   -Wl,-rpath,"$stage/opt/lib" -o "$stage/v" 2>"$stage/cc3.err"
ok "$?" 0 "compile a cr_version() caller"
v=$(pkg-config --modversion calcroute)
ok "$("$stage/v")" "$v $v $(echo "$v" | awk -F. '{print $1 * 10000 + $2 * 100 + $3}')" "CR_VERSION_* and cr_version()"
optsite=$($PY bindings/python/sitedir.py "$stage/opt")
out=$(cd "$stage" && env -u CALCROUTE_LIB PYTHONPATH="$optsite" $PY -c 'import calcroute; print(calcroute.run("ans = 2 ** 100").repr, calcroute._lib._name)')
ok "$out" "1267650600228229401496703205376 $optsite/calcroute/libcalcroute.so.0" "python module from $stage/opt"

make -s uninstall B="$B" PYTHON=$PY PREFIX="$stage/opt" >/dev/null 2>"$stage/un2.err"
ok "$?" 0 "make uninstall PREFIX=$stage/opt"
ok "$(find "$stage/opt" ! -type d)" "" "left after uninstall from $stage/opt"

finish
