#!/bin/sh
# The Debian packages (make deb, debian/) as a user gets them: lintian finds no error in them;
# on a fresh Debian 12 root (mmdebstrap, minbase, from the mirror `make image` uses) `apt-get
# install ./*.deb` installs them, and there README's first example, a sandboxed run, the
# Python module and a C program built through `pkg-config --cflags --libs calcroute` give
# their exact output; a purge leaves nothing of them. The .debs are built again only when a file of the checkout
# changed since; the root (with gcc and pkg-config for the C program) is kept a day in
# build/test-deb. On a loaded 2-CPU machine (load 17): 1 min 45 s with both kept; 3 to 5 min
# with both made (the root 1 min, the packages 1.5 min, 3.5 with the kvm guest's).
. tests/lib.sh
case "${BUILD:-build}" in *asan*|*tsan*)
    echo "SKIP test_deb: the packages build their own tree; the plain build's run tests them" >&2
    echo "0 passed, 0 failed, 1 skipped"; exit 0 ;;
esac
done_() { summary; [ "$fail" = 0 ]; exit $?; }
if [ "$(id -u)" != 0 ]; then unavailable test_deb "not root (chroot and apt in the root need it)"; done_; fi
for tool in dpkg-buildpackage:dpkg-dev dh:debhelper dh_python3:dh-python lintian:lintian \
            mmdebstrap:mmdebstrap; do
    command -v "${tool%%:*}" >/dev/null 2>&1 ||
        { unavailable test_deb "no ${tool%%:*} (Debian's ${tool#*:}; scripts/install-deps.sh --test)"; done_; }
done

cache=build/test-deb
debs=build/debs
tmp=$(mktemp -d)
root=$tmp/root
trap 'umount "$root/proc" 2>/dev/null; rm -rf "$tmp"' EXIT
version=$(sed -n 's/^#define CR_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\)$/\2/p' include/calcroute.h | paste -sd.)

# The packages: built again when a file git knows is newer than the last build's .changes
# (or this is not a checkout). Without a kvm guest built (make kvm-kernel kvm-guest) its
# package is left out.
stale=1
if [ -f "$debs/calcroute.changes" ] && git rev-parse --git-dir >/dev/null 2>&1; then
    newest=$(git ls-files -z | xargs -0 stat -c %Y 2>/dev/null | sort -n | tail -n 1)
    [ "$newest" -gt "$(stat -c %Y "$debs/calcroute.changes")" ] || stale=
fi
kvm=0
[ -e build/kvm/vmlinuz ] && [ -e build/kvm/initrd.cpio ] && kvm=1
if [ -n "$stale" ]; then
    MAKEFLAGS= MAKELEVEL= make deb DEB_OUT=$debs $([ $kvm = 1 ] || echo DEB_PROFILES=nokvm) \
        >"$tmp/make" 2>&1 || { bad "make deb: $(tail -n 5 "$tmp/make")"; done_; }
fi
ls $debs/*.deb >"$tmp/debs"
want="calcroute_${version}_amd64.deb
libcalcroute-dev_${version}_amd64.deb
libcalcroute0_${version}_amd64.deb
python3-calcroute_${version}_all.deb"
[ $kvm = 1 ] && want="calcroute-kvm-guest_${version}_amd64.deb
$want"
expect "the packages" "$want" "$(xargs -n1 basename <"$tmp/debs")"

# lintian: no error; its warnings are shown.
lintian $(cat "$tmp/debs") >"$tmp/lintian" 2>&1
expect "lintian's errors" "" "$(grep '^E:' "$tmp/lintian")"
grep '^W:' "$tmp/lintian" | sed 's/^/lintian: /' >&2

# The root: Debian 12 with its updates and security suites, from make image's mirror.
mirror=$(sed -n 's/^IMAGE_MIRROR ?= //p' deploy/module.mk)
[ -n "$mirror" ] || { bad "deploy/module.mk sets no IMAGE_MIRROR"; done_; }
tar=$cache/bookworm-$(date -u +%Y%m%d).tar
if ! [ -f "$tar" ]; then
    mkdir -p "$cache" && rm -f "$cache"/bookworm-*.tar
    if ! mmdebstrap --variant=minbase --format=tar --include=gcc,libc6-dev,pkg-config bookworm "$tar.tmp" \
            "deb $mirror bookworm main" "deb $mirror bookworm-updates main" \
            "deb ${mirror%/debian}/debian-security bookworm-security main" >"$tmp/mm" 2>&1; then
        rm -f "$tar.tmp"
        unavailable test_deb "mmdebstrap could not make the root (no Debian mirror?): $(grep '^E:' "$tmp/mm" | tail -n 1)"
        done_
    fi
    mv "$tar.tmp" "$tar"
fi
mkdir "$root" && tar -C "$root" -xf "$tar" && mount -t proc proc "$root/proc"
expect "the root" 0 $?
cp /etc/resolv.conf "$root/etc/resolv.conf"
mkdir "$root/debs" && xargs cp -t "$root/debs" <"$tmp/debs"
# inroot CMD...: run in the root, as a login would (PATH of the root's own).
inroot() { chroot "$root" env -i PATH=/usr/bin:/bin:/usr/sbin:/sbin HOME=/root LANG=C.UTF-8 "$@"; }
if ! inroot sh -c 'apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends /debs/*.deb' \
        >"$tmp/apt" 2>&1; then
    if grep -q '^\(E\|W\): Failed to fetch' "$tmp/apt"; then
        unavailable test_deb "apt in the root cannot reach the mirror: $(grep 'Failed to fetch' "$tmp/apt" | tail -n 1)"
    else
        bad "apt-get install ./*.deb: $(tail -n 5 "$tmp/apt")"
    fi
    done_
fi
ok
pkgs=$(xargs -n1 basename <"$tmp/debs" | sed 's/_.*//' | sort)
expect "installed" "$(echo "$pkgs" | sed "s/\$/ $version/")" \
    "$(inroot dpkg-query -W -f '${Package} ${Version}\n' $pkgs | sort)"

# README's first example, the installed calc-route for the build's: its command (the set-up
# block's last), and the output README shows for it.
cmd=$(sed -n '/^## Set up/,/^## /p' README.md | sed -n '/^```$/{n;p;q}' | sed 's/.*&& //; s|build/calc-route|calc-route|')
shown=$(grep -Fx -A1 "\$ $cmd" README.md | sed -n 2p)
expect "README's example's shown output" "= 0.01639058413251961639058413251961639" "$shown"
expect "README's first example: $cmd" "$shown" "$(inroot sh -c "$cmd" 2>&1)"
expect "calc-audit" "calc-audit $version" "$(inroot calc-audit --version 2>&1)"

expect "python3 -c 'import calcroute'" \
    "inprocess 94/5735 /usr/lib/python3/dist-packages/calcroute/__init__.py libcalcroute.so.0" \
    "$(inroot python3 -c 'import calcroute; r = calcroute.run("ans = (5829 - 5735) / 5735"); print(r.route, r.value, calcroute.__file__, calcroute._lib._name)' 2>&1)"

# Code outside the in-process subset runs in the ns tier with the root's python3 (calcroute's
# Depends). Not from a chroot, where the kernel refuses user namespaces: from a mount
# namespace pivoted into the root.
printf 'import json\nans = json.loads("[1, 2]")[1]\n' >"$root/tmp/sandboxed.py"
out=$(unshare --mount --propagation private --fork sh -c 'mount --bind "$1" "$1" && cd "$1" &&
    mount -t proc proc proc && mount --rbind /sys sys && mount --rbind /dev dev &&
    mkdir .old && pivot_root . .old && umount -l /.old && rmdir /.old &&
    exec env -i PATH=/usr/bin:/bin LANG=C.UTF-8 calc-route --tier ns /tmp/sandboxed.py' sh "$root" 2>&1)
case "$out" in
*"cannot create user/pid/mount/net namespaces"*) unavailable "the ns tier from the packages" "$out" ;;
*) expect "a sandboxed run: json.loads" "= 2" "$out" ;;
esac

cp examples/embed.c "$root/tmp/embed.c"
# (pkg-config ends its line with a space.)
expect "pkg-config --cflags --libs calcroute" "-lcalcroute " "$(inroot pkg-config --cflags --libs calcroute 2>&1)"
expect "cc embed.c \$(pkg-config --cflags --libs calcroute)" "" \
    "$(inroot sh -c 'cc -std=c11 -Wall -Wextra -Werror -o /tmp/embed /tmp/embed.c $(pkg-config --cflags --libs calcroute)' 2>&1)"
expect "the C program" "inprocess = 1.64 (41/25)" "$(inroot /tmp/embed 2>&1)"

# The kvm guest's package holds the guest the build made, where an installed calc-route
# looks (sandbox/kvm/paths.c: lib/calcroute/kvm under its prefix).
if [ $kvm = 1 ]; then
    for f in vmlinuz initrd.cpio; do
        cmp -s "build/kvm/$f" "$root/usr/lib/calcroute/kvm/$f"; expect "/usr/lib/calcroute/kvm/$f" 0 $?
    done
fi

# A purge takes away what the packages put, the __pycache__ of the import above included.
inroot dpkg --purge $pkgs >"$tmp/purge" 2>&1
expect "dpkg --purge" 0 $?
expect "left after the purge" "" "$(cd "$root" && ls -d usr/bin/calc-* usr/lib/libcalcroute* usr/include/calcroute.h \
    usr/lib/python3/dist-packages/calcroute usr/lib/calcroute 2>/dev/null)"
done_
