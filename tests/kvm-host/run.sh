#!/bin/sh
# The nested test host: boots Debian's cloud kernel under QEMU's software emulation with an
# emulated SVM CPU, loads kvm-amd there so that /dev/kvm is a real hardware-style KVM, runs
# every kvm-tier test binary inside, and reports their results here.
#
# Usage: tests/kvm-host/run.sh [BUILD]     (BUILD defaults to build; make check-kvm runs it)
# Needs: qemu-system-x86_64, busybox (static), cpio, gzip, and the kernel that
# sandbox/kvm/fetch-kernel.sh unpacks into BUILD/kvm/kernel (or KVMHOST_KERNEL), and the
# guest initramfs of sandbox/guest/build.sh in BUILD/kvm/guest (or KVMHOST_GUEST), with the
# package image of build-pkgs.sh beside it when there is one. Env: KVMHOST_TIMEOUT (seconds,
# default 2400 a boot), KVMHOST_MEM (MiB, default 2048, 3072 with the package image), KVMHOST_TESTS (binaries to run, default
# every BUILD/tests/test_kvm*), KVMHOST_RETRIES and KVMHOST_BUDGET (after a stall, below),
# KVMHOST_KEEP=1 keeps the work folder, KVMHOST_ENV="A=1 B=2"
# exports more variables inside (CR_KVM_CONSOLE=1 shows the guest console), KVMHOST_EXTRA
# names more host files (with their libraries) to copy in at the same paths, KVMHOST_COPY
# more repository files (with their libraries) to copy in without running them.
# Prints each test's output, then each one's verdict and the total as tests/run.sh does
# (tests/tally.sh); exit 1 on any failure, a test that did not finish, or a host that did not
# come up.
set -eu
B=${1:-build}
kernel=${KVMHOST_KERNEL:-$B/kvm/kernel}
guest=${KVMHOST_GUEST:-$B/kvm/guest}
timeout_s=${KVMHOST_TIMEOUT:-2400}
pkgs=$guest/pkgs.erofs
[ -f "$pkgs" ] || pkgs=
# The image sits in the nested host's RAM (its root is an initramfs) beside the guests'.
mem=${KVMHOST_MEM:-$([ -n "$pkgs" ] && echo 3072 || echo 2048)}
tests=${KVMHOST_TESTS:-$(ls "$B"/tests/test_kvm* 2>/dev/null | grep -v '\.d$' || true)}
tests=$(echo $tests)   # one line: it goes into the init script

for tool in qemu-system-x86_64 cpio gzip; do
    command -v "$tool" >/dev/null || { echo "kvm-host: $tool is missing"; exit 1; }
done
busybox=$(command -v busybox || true)
[ -n "$busybox" ] || { echo "kvm-host: busybox is missing"; exit 1; }
[ -f "$kernel/vmlinuz" ] || { echo "kvm-host: no $kernel/vmlinuz (run sandbox/kvm/fetch-kernel.sh)"; exit 1; }
[ -n "$tests" ] || { echo "kvm-host: no test binaries under $B/tests"; exit 1; }

work=$(mktemp -d)
[ "${KVMHOST_KEEP:-0}" = 1 ] || trap 'rm -rf "$work"' EXIT
root=$work/root
mkdir -p "$root/bin" "$root/proc" "$root/sys" "$root/dev" "$root/tmp" "$root/mod" "$root/work"
cp "$busybox" "$root/bin/busybox"
cp "$kernel"/modules/irqbypass.ko "$kernel"/modules/kvm.ko "$kernel"/modules/kvm-amd.ko "$root/mod/"

# Each binary at its path relative to the repository, with the shared libraries it loads.
copy_libs() {   # the shared libraries $1 loads, each at its own path
    ldd "$1" 2>/dev/null | sed -n 's/.*=> \(\/[^ ]*\) .*/\1/p; s/^[[:space:]]*\(\/[^ ]*\) .*/\1/p' |
    while read -r lib; do
        [ -f "$root$lib" ] && continue
        mkdir -p "$root$(dirname "$lib")"
        cp -L "$lib" "$root$lib"
    done
}
copy_with_libs() {
    mkdir -p "$root/work/$(dirname "$1")"
    cp "$1" "$root/work/$1"
    copy_libs "$1"
}
for t in $tests ${KVMHOST_COPY:-}; do copy_with_libs "$t"; done
# KVMHOST_EXTRA: absolute paths (a program and its data) wanted at the same place inside.
for f in ${KVMHOST_EXTRA:-}; do
    mkdir -p "$root$(dirname "$f")" && cp -L "$f" "$root$f"
    copy_libs "$f"
done
# The kvm tier's own guest: the same kernel, and the initramfs sandbox/guest/build.sh made.
mkdir -p "$root/guest"
cp "$kernel/vmlinuz" "$root/guest/vmlinuz"
[ ! -f "$guest/initrd.cpio" ] || cp "$guest/initrd.cpio" "$root/guest/"

# The init script for one boot: runs the binaries named in $1, then powers off.
write_init() {
    cat >"$root/init" <<INIT
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t tmpfs -o size=512m tmp /tmp
# A cgroup2 hierarchy with memory and pids for the children of its root, as a host's: the
# VMM's cgroup is made and limited there.
mount -t cgroup2 cgroup2 /sys/fs/cgroup && echo "+memory +pids" >/sys/fs/cgroup/cgroup.subtree_control || echo "KVMHOST: no cgroup2"
for m in irqbypass kvm kvm-amd; do insmod /mod/\$m.ko || echo "KVMHOST: insmod \$m failed"; done
[ -c /dev/kvm ] || echo "KVMHOST: no /dev/kvm"
# Everything inside is emulated instruction by instruction: give the guest boot its time (the
# snapshot's boot imports numpy and pandas from the package image: 90 s on a loaded machine),
# and the sandbox suites' limits and timing checks ten times theirs (the guest's python runs
# tens of times slower than on hardware; tests/testlib.h's SECS()).
export CR_KVM_BOOT_S=360 CR_TEST_TIME_SCALE=10 CR_EXPECT_KVM_LINUX=1 BUILD=$B CALCROUTE_KVM_DIR=/guest ${KVMHOST_ENV:-}
# A heartbeat on the second serial port: the host sees the nested host's clock go on.
( while :; do sleep 10; echo tick >/dev/ttyS1; done ) &
cd /work
for t in $1; do
    echo "KVMHOST-BEGIN \$t"
    s0=\$(date +%s)
    ./\$t 2>&1
    rc=\$?
    echo "KVMHOST-END \$t rc=\$rc s=\$((\$(date +%s) - s0))"
done
poweroff -f
INIT
    chmod +x "$root/init"
}

# One boot of the nested host running the binaries in $1; the console, cleaned, into $2.
# Measured here: now and then the nested host stops for good while it runs a guest (nothing
# printed, its clocks stopped), about once in a hundred guest runs, with or without idle=poll
# inside; the cause is in the emulation, not understood. Its heartbeat (ttyS1) stops with it:
# after 60 s without one the boot is ended, and `stalled` says so.
boot() {
    write_init "$1"
    (cd "$root" && find . | cpio -o -H newc 2>/dev/null | gzip -1) >"$work/initrd.gz"
    if [ -n "$pkgs" ]; then
        # The package image as an archive of its own, not compressed (inflating it under
        # emulation would take minutes), at a 512-byte boundary (the kernel skips the zeros
        # and finds it at a 4-byte one).
        pad=$(( (512 - $(wc -c <"$work/initrd.gz") % 512) % 512 ))
        head -c "$pad" /dev/zero >>"$work/initrd.gz"
        mkdir -p "$work/pk/guest"
        ln -sf "$(realpath "$pkgs")" "$work/pk/guest/pkgs.erofs"
        (cd "$work/pk" && echo guest/pkgs.erofs | cpio -o -H newc -L 2>/dev/null) >>"$work/initrd.gz"
    fi
    raw=$work/console.raw
    beat=$work/heartbeat
    : >"$beat"
    stalled=0
    qemu-system-x86_64 -accel tcg -cpu EPYC,+svm -m "$mem" -smp 1 \
        -display none -serial "file:$raw" -serial "file:$beat" -monitor none -no-reboot \
        -kernel "$kernel/vmlinuz" -initrd "$work/initrd.gz" \
        -append "console=ttyS0 quiet panic=-1" </dev/null 2>"$work/qemu.err" &
    qpid=$!
    t0=$(date +%s) quiet=0 last=0
    while kill -0 "$qpid" 2>/dev/null; do
        sleep 15
        now=$(wc -c <"$beat")
        # The first beat comes once the nested host is up (in well under a minute): its boot
        # is given four before it counts as a stall.
        if [ "$now" = "$last" ]; then quiet=$((quiet + 15)); else quiet=0; fi
        last=$now
        if [ "$quiet" -ge 60 ] && { [ "$now" -gt 0 ] || [ "$quiet" -ge 240 ]; }; then
            stalled=1; kill "$qpid"; break
        fi
        if [ $(( $(date +%s) - t0 )) -ge "$boot_s" ]; then kill "$qpid"; break; fi
    done
    wait "$qpid" 2>/dev/null || true
    # The console puts terminal escapes before the first marker: start each marker's own line.
    tr -d '\r' <"$raw" | sed 's/^.*KVMHOST/KVMHOST/' >"$2"
}

finished() {   # whether binary $1 ran to its end in log $2
    grep -q "^KVMHOST-END $1 " "$2"
}

start=$(date +%s)
log=$work/clean.log
boot_s=$timeout_s
boot "$tests" "$log"
sed -n '/^KVMHOST/,$p' "$log" | grep -v '^KVMHOST-END' | sed 's/^KVMHOST-BEGIN /== /'
if grep -q '^KVMHOST: ' "$log"; then echo "kvm-host: the nested host is not usable"; fi
# After a stall, the binaries that did not finish run again in a fresh boot, up to
# KVMHOST_RETRIES (5) times, all boots together within KVMHOST_BUDGET seconds (3000), which
# bounds the worst case whatever the count: a stall comes most often in the first binary's
# snapshot with pandas (two boots in three stalled there in one day's runs), and costs that
# binary's time so far and 60 s, so a budget holds five such.
# Each binary is counted from the boot it finished in.
retries=${KVMHOST_RETRIES:-5}
budget=${KVMHOST_BUDGET:-3000}
round=0
while [ "$stalled" = 1 ]; do
    rest=
    for t in $tests; do finished "$t" "$log" || rest="$rest $t"; done
    [ -n "$rest" ] || break
    if [ "$round" -ge "$retries" ] || [ $(( $(date +%s) - start )) -ge "$budget" ]; then
        echo "kvm-host: the nested host stalled; no more retries"
        break
    fi
    round=$((round + 1))
    boot_s=$((budget - $(date +%s) + start))
    [ "$boot_s" -le "$timeout_s" ] || boot_s=$timeout_s
    echo "kvm-host: the nested host stalled (no heartbeat for 60 s); again ($round of $retries):$rest"
    boot "$rest" "$work/retry.log"
    sed -n '/^KVMHOST/,$p' "$work/retry.log" | grep -v '^KVMHOST-END' |
        sed 's/^KVMHOST-BEGIN /== /'
    for t in $rest; do
        sed -n "\|^KVMHOST-BEGIN $t\$|,\|^KVMHOST-END $t |p" "$work/retry.log"
    done >>"$log"
done
end=$(date +%s)

# Each binary's verdict as tests/run.sh gives it on this machine (tests/tally.sh): its counts,
# its skips named, and under CI=true none that tests/expected-skips does not list.
. tests/tally.sh
mkdir "$work/tally"
for t in $tests; do
    name=${t##*/}
    endl=$(grep "^KVMHOST-END $t " "$log" || true)
    sed -n "\|^KVMHOST-BEGIN $t\$|,\|^KVMHOST-END $t |p" "$log" | sed '1d;$d' \
        >"$work/tally/$name.out"
    if [ -z "$endl" ]; then
        echo "FAIL $name: did not finish in the nested host"
        echo "$name 0 1 0 0 0" >"$work/tally/$name.tally"
        continue
    fi
    tally "$name" "$work/tally/$name.out" "$(echo "$endl" | sed -n 's/.* rc=\([0-9]*\).*/\1/p')" \
        "$(echo "$endl" | sed -n 's/.* s=\([0-9]*\).*/\1/p')" "$work/tally"
done
echo "kvm-host: $((end - start)) s in the nested host"
tally_summary "$work/tally"
