#!/bin/sh
# Unpacks Debian's cloud kernel (linux-image-cloud-amd64's current image package) into the
# build tree for the kvm tier and its nested test host. Never installs it: `apt-get download`
# and `dpkg -x` only. Usage: sandbox/kvm/fetch-kernel.sh [DEST]   (default build/kvm/kernel)
# Leaves DEST/vmlinuz, DEST/modules/ (kvm.ko, kvm-amd.ko, kvm-intel.ko, irqbypass.ko for the
# nested test host; libnvdimm.ko, nd_btt.ko, nd_pmem.ko, nd_e820.ko, libcrc32c.ko, erofs.ko for
# the guest's package image) and DEST/version. Does nothing when DEST/version already names
# the current package and every module is there.
set -eu
dest=${1:-build/kvm/kernel}
meta=linux-image-cloud-amd64
pkg=$(apt-cache depends "$meta" 2>/dev/null | sed -n 's/^ *Depends: \(linux-image-[0-9].*\)$/\1/p' | head -n 1)
if [ -z "$pkg" ]; then
    echo "fetch-kernel: apt-cache knows no $meta (run apt-get update)" >&2
    exit 1
fi
ver=$(apt-cache policy "$pkg" | sed -n 's/^ *Candidate: //p')
mods="virt/lib/irqbypass.ko arch/x86/kvm/kvm.ko arch/x86/kvm/kvm-amd.ko arch/x86/kvm/kvm-intel.ko
drivers/nvdimm/libnvdimm.ko drivers/nvdimm/nd_btt.ko drivers/nvdimm/nd_pmem.ko
drivers/nvdimm/nd_e820.ko lib/libcrc32c.ko fs/erofs/erofs.ko"
have=1
for m in $mods; do [ -f "$dest/modules/$(basename "$m")" ] || have=0; done
if [ "$have" = 1 ] && [ -f "$dest/version" ] && [ "$(cat "$dest/version")" = "$pkg $ver" ] &&
   [ -f "$dest/vmlinuz" ]; then
    exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# apt drops privileges to _apt for downloads; a world-writable folder keeps it quiet.
chmod 777 "$tmp"
(cd "$tmp" && apt-get download -q "$pkg" >/dev/null)
dpkg -x "$tmp"/"$pkg"_*.deb "$tmp/x"
mkdir -p "$dest/modules"
cp "$tmp"/x/boot/vmlinuz-* "$dest/vmlinuz"
for m in $mods; do
    f=$(find "$tmp"/x/lib/modules/*/kernel -path "*/$m*" | head -n 1)
    [ -n "$f" ] || { echo "fetch-kernel: $pkg has no $m" >&2; exit 1; }
    case "$f" in
        *.xz) xz -dc "$f" >"$dest/modules/$(basename "$m")" ;;
        *.zst) zstd -qdc "$f" >"$dest/modules/$(basename "$m")" ;;
        *) cp "$f" "$dest/modules/" ;;
    esac
done
echo "$pkg $ver" >"$dest/version"
echo "fetch-kernel: $pkg $ver in $dest"
