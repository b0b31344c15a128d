#!/bin/sh
# Builds the kvm tier's guest initramfs from this host's Debian python3: our static init (the
# ns tier linked in), python3 and the shared libraries it loads, the part of the standard
# library that the runner and common finance code import, the few programs code runs, and
# what the ns tier binds from its host (/usr, the lib directories, /etc/ld.so.cache,
# /etc/alternatives). Reproducible: sorted entries, fixed times and owners.
# Usage: sandbox/guest/build.sh [OUT]   (default build/kvm/guest) -> OUT/initrd.cpio
# Env: CC (default cc), PYTHON (default /usr/bin/python3), GUEST_MODULES (more modules),
# KVM_MODULES (the kernel modules' directory).
set -eu
out=${1:-build/kvm/guest}
py=${PYTHON:-/usr/bin/python3}
cc=${CC:-cc}
mkdir -p "$out"
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
chmod 0755 "$root"          # the image's /: the code runs as nobody and must traverse it

# Never sanitized (a static ASan binary does not run): its own objects, not the build's.
"$cc" -static -O2 -Wall -Wextra -std=gnu11 -D_GNU_SOURCE -I. -Iinclude \
    -ffunction-sections -fdata-sections -Wl,--gc-sections -o "$out/init" \
    sandbox/guest/init.c sandbox/ns/*.c sandbox/kvm/*.c sandbox/sandbox.c sandbox/job/*.c \
    common/*.c -lseccomp -lsodium -lpthread -lm
mkdir -p "$root/dev" "$root/proc" "$root/sys" "$root/tmp" "$root/usr/bin" "$root/etc/alternatives"
cp "$out/init" "$root/init"
# The host's layout of the lib directories (merged /usr: symlinks), which the ns tier copies.
for d in bin sbin lib lib64; do
    if [ -L "/$d" ]; then
        mkdir -p "$root/$(readlink "/$d")"
        ln -s "$(readlink "/$d")" "$root/$d"
    fi
done

. sandbox/guest/lib.sh
cp -L "$py" "$root/usr/bin/python3"
copy_libs "$py"
cp /etc/ld.so.cache "$root/etc/ld.so.cache"
# Debian's matplotlib reads its defaults here (the package image, build-pkgs.sh, has the rest).
if [ -f /etc/matplotlibrc ]; then cp -L /etc/matplotlibrc "$root/etc/matplotlibrc"; fi
# The modules that give the guest the package image as legacy persistent memory (the e820
# entry the VMM adds) and mount it, in load order; init loads them only when that device is
# there. From the kernel sandbox/kvm/fetch-kernel.sh unpacked (KVM_MODULES).
mods=${KVM_MODULES:-build/kvm/kernel/modules}
mkdir -p "$root/modules"
for m in libnvdimm nd_btt nd_pmem nd_e820 libcrc32c erofs; do
    if [ -f "$mods/$m.ko" ]; then cp "$mods/$m.ko" "$root/modules/$m.ko"; fi
done
# What code in the sandbox runs or probes: a shell, ls, and su (no PAM configuration here, so
# it fails, as the ns tier's does; copied without its setuid bit all the same).
for prog in /bin/sh /bin/ls /usr/bin/su; do
    real=$(readlink -f "$prog")
    copy "$real"
    copy_libs "$real"
    mkdir -p "$root$(dirname "$prog")"
    [ -e "$root$prog" ] || ln -s "$real" "$root$prog"
done

# The modules a run imports: the runner's, start-up's, what finance code reaches for (csv and
# pathlib for /data among them), and what code probing its sandbox tries (socket, ctypes,
# resource).
modules="linecache traceback ast tokenize math cmath decimal fractions statistics datetime
json re collections itertools functools operator random string numbers typing heapq bisect
copy textwrap calendar locale io os sys csv pathlib glob shutil struct subprocess socket
selectors ctypes fcntl termios signal resource unicodedata encodings.idna ${GUEST_MODULES:-}"
"$py" -I - $modules >"$root/.files" <<'PY'
import importlib, sys
for name in sys.argv[1:]:
    importlib.import_module(name)
import encodings, os
paths = set()
for m in list(sys.modules.values()):
    f = getattr(m, "__file__", None)
    if f and os.path.isfile(f):
        paths.add(f)
        c = getattr(m, "__cached__", None)
        if c and os.path.exists(c):
            paths.add(c)
d = os.path.dirname(encodings.__file__)
for f in os.listdir(d):
    if f.endswith(".py"):
        paths.add(os.path.join(d, f))
for p in sorted(paths):
    print(p)
PY
while read -r f; do
    copy "$f"
    case "$f" in *.so) copy_libs "$f" ;; esac
done <"$root/.files"
rm "$root/.files"

find "$root" -exec touch -h -d @0 {} +
# Not compressed: the guest kernel would spend longer inflating it than copying it.
(cd "$root" && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --reproducible 2>/dev/null) \
    >"$out/initrd.cpio.tmp"
mv "$out/initrd.cpio.tmp" "$out/initrd.cpio"
echo "guest: $out/initrd.cpio ($(wc -c <"$out/initrd.cpio") bytes)"
