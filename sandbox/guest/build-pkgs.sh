#!/bin/sh
# Builds the kvm tier's package image: a read-only EROFS filesystem of this host's /usr as the
# guest's python needs it, python3 and its standard library, the Debian python3-* packages
# that sandboxed code may import (scripts/install-deps.sh installs them) without their test
# suites, the shared libraries all of it loads, the programs build.sh gives the guest, and
# the time zone database and matplotlib's data. The guest init mounts it over the initramfs's
# /usr (DAX: its pages are the host file's, never copied into guest RAM). Files are stored
# whole, not inlined in their inodes, so that every one can be mapped with DAX; the file is
# padded to a multiple of 2 MiB, the unit the VMM maps it in (sandbox/kvm/vmm.h:
# VMM_PMEM_ALIGN).
# Reproducible: fixed times and owners. Needs mkfs.erofs (erofs-utils).
# Usage: sandbox/guest/build-pkgs.sh [OUT]   (default build/kvm/guest) -> OUT/pkgs.erofs
# Env: PYTHON (default /usr/bin/python3), GUEST_PKGS (top-level names under dist-packages;
# default the finance stack and what it imports).
set -eu
out=${1:-build/kvm/guest}
py=${PYTHON:-/usr/bin/python3}
command -v mkfs.erofs >/dev/null || { echo "build-pkgs: mkfs.erofs is missing (erofs-utils)" >&2; exit 1; }
mkdir -p "$out"
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
chmod 0755 "$root"
. sandbox/guest/lib.sh
# The host's merged /usr: a library ldd names under /lib lands in the image's usr/lib.
for d in bin sbin lib lib64; do
    if [ -L "/$d" ]; then
        mkdir -p "$root/$(readlink "/$d")"
        ln -s "$(readlink "/$d")" "$root/$d"
    fi
done

pkgs=${GUEST_PKGS:-numpy pandas scipy sympy statsmodels matplotlib mpl_toolkits dateutil
six.py pytz patsy mpmath PIL cycler.py kiwisolver pyparsing packaging contourpy fontTools}
stdlib=$("$py" -I -c 'import sysconfig; print(sysconfig.get_path("stdlib"))')
site=$("$py" -I -c 'import numpy, os; print(os.path.dirname(os.path.dirname(numpy.__file__)))')
list=
for p in $pkgs; do
    if [ -e "$site/$p" ]; then list="$list ${site#/}/$p"; fi
done
# Debian's matplotlib reads its data (matplotlibrc, fonts) from /usr/share.
if [ -d /usr/share/matplotlib ]; then list="$list usr/share/matplotlib"; fi
# Dereferenced (matplotlib's data and fonts are symlinks into /usr/share); the standard
# library's and the packages' tests, the static libpython and the IDE left out.
tar -ch -C / --exclude=tests --exclude="${stdlib#/}/test" --exclude="${stdlib#/}/idlelib" \
    --exclude="${stdlib#/}/tkinter" --exclude="${stdlib#/}/turtledemo" \
    --exclude="${stdlib#/}/lib2to3" --exclude="${stdlib#/}/ensurepip" \
    --exclude="${stdlib#/}/dist-packages" --exclude="${stdlib#/}/config-*" \
    "${stdlib#/}" usr/share/zoneinfo $list | tar -x -C "$root"
mkdir -p "$root/usr/bin"
cp -L "$py" "$root/usr/bin/python3"
copy_libs "$py"
for prog in /bin/sh /bin/ls /usr/bin/su; do
    real=$(readlink -f "$prog")
    copy "$real"
    copy_libs "$real"
    [ -e "$root$prog" ] || ln -s "$real" "$root$prog"
done
find "$root/usr" -name '*.so*' -type f | while read -r f; do copy_libs "$f"; done

find "$root" -exec touch -h -d @0 {} +
rm -f "$out/pkgs.erofs.tmp"
mkfs.erofs --quiet -Enoinline_data -T0 --all-root "$out/pkgs.erofs.tmp" "$root/usr"
size=$(wc -c <"$out/pkgs.erofs.tmp")
truncate -s $(( (size + 2097151) / 2097152 * 2097152 )) "$out/pkgs.erofs.tmp"
mv "$out/pkgs.erofs.tmp" "$out/pkgs.erofs"
echo "guest: $out/pkgs.erofs ($(wc -c <"$out/pkgs.erofs") bytes)"
