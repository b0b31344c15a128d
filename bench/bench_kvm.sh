#!/bin/sh
# The kvm tier's cold start beside QEMU's microvm, both booting the same kernel and initramfs
# with the same /dev/kvm. Figures only. Where this host cannot run a Linux guest (a PVM
# /dev/kvm), it runs inside the nested test host (tests/kvm-host/run.sh), where every
# instruction is emulated: there only the ratio between the two means anything. The wall
# time after the panic is the reset: microvm has no i8042, so Linux tries longer to reset it.
# Then the snapshot: restore -> result beside cold boot -> result (bench_kvm snapshot).
# BENCH_KVM_MODE=snapshot (make bench-kvm) runs only that part.
# Usage: bench/bench_kvm.sh [BUILD]   (needs the kvm directory, $CALCROUTE_KVM_DIR or
# build/kvm: make kvm-kernel kvm-guest)
set -eu
B=${1:-${BUILD:-build}}
N=${BENCH_KVM_RUNS:-3}
kernel=${CALCROUTE_KVM_DIR:-build/kvm}/vmlinuz
initrd=${CALCROUTE_KVM_DIR:-build/kvm}/initrd.cpio

if [ "${BENCH_KVM_INSIDE:-0}" != 1 ]; then
    if [ ! -c /dev/kvm ] || [ -d /sys/module/kvm_pvm ]; then
        echo "== kvm tier cold start (inside the nested test host: compare the ratio only)"
        KVMHOST_TESTS=bench/bench_kvm.sh KVMHOST_COPY="$B/bench/bench_kvm" \
        KVMHOST_EXTRA="$(command -v qemu-system-x86_64) /usr/share/qemu/bios-microvm.bin" \
        KVMHOST_ENV="BENCH_KVM_INSIDE=1 BENCH_KVM_RUNS=$N BENCH_KVM_MODE=${BENCH_KVM_MODE:-all}" \
            tests/kvm-host/run.sh "$B" |
            grep -v -E '^[0-9]+ passed, [0-9]+ failed|^kvm-host: .* did not finish|^\[ *[0-9.]+\] '
        exit 0
    fi
    echo "== kvm tier cold start (this host)"
fi

if [ "${BENCH_KVM_MODE:-all}" = snapshot ]; then
    "$B/bench/bench_kvm" snapshot "$N"
    [ "${BENCH_KVM_INSIDE:-0}" != 1 ] || echo "0 passed, 0 failed, 0 skipped"
    exit 0
fi
now() { cut -d' ' -f1 /proc/uptime; }
"$B/bench/bench_kvm" boot "$kernel" "$initrd" "$N"
echo "qemu-system-x86_64 -M microvm -enable-kvm, the same boot, $N runs"
cmd="console=ttyS0 quiet reboot=k panic=-1 pci=off acpi=off nomodule i8042.noaux i8042.nomux i8042.nopnp i8042.dumbkbd rdinit=/missing"
i=1
while [ "$i" -le "$N" ]; do
    t0=$(now)
    timeout 900 qemu-system-x86_64 -M microvm -enable-kvm -cpu host -m 320 -smp 1 -nodefaults \
        -no-user-config -display none -serial file:/tmp/qemu-console.log -no-reboot \
        -L /usr/share/qemu -kernel "$kernel" -initrd "$initrd" -append "$cmd" </dev/null \
        >/dev/null 2>/tmp/qemu.err || true
    t1=$(now)
    panic=$(grep -m1 'Kernel panic' /tmp/qemu-console.log | sed -n 's/^\[ *\([0-9.]*\)\].*/\1/p')
    echo "  run $i: $(echo "$t0 $t1" | awk '{printf "%.2f", $2 - $1}') s wall (uptime clock), kernel's own clock at the panic ${panic:--} s"
    [ -n "$panic" ] || { echo "  qemu said:"; tail -n 5 /tmp/qemu.err /tmp/qemu-console.log | sed 's/^/    /'; }
    i=$((i + 1))
done
"$B/bench/bench_kvm" run "$N"
"$B/bench/bench_kvm" snapshot "$N"
[ "${BENCH_KVM_INSIDE:-0}" != 1 ] || echo "0 passed, 0 failed, 0 skipped"
