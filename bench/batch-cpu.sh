#!/bin/sh
# The CPU a sandboxed request costs the machine, every process of it counted (the host, the
# zygote, the workers and their exits): calc-route --batch in a cgroup of its own, in which
# the runs' cgroups nest, the extra N requests of a run of 2N against one of N (the start
# left out), `import os; print(1)`. Figures only; root, for the cgroup.
#   sh bench/batch-cpu.sh [BUILD_DIR] [N] [CALC-ROUTE OPTIONS ...]
#   e.g. sh bench/batch-cpu.sh build 300 --preload ''    (docs/DESIGN.md, the warm pool)
B=${1:-build}; N=${2:-300}
shift; shift
own=$(sed -n 's/^[0-9]*:[^:]*cpuacct[^:]*:\(.*\)$/\1/p' /proc/self/cgroup)
if [ -n "$own" ] && [ -d /sys/fs/cgroup/cpuacct ]; then
    G=/sys/fs/cgroup/cpuacct${own%/}/calcroute-bench-$$
    cpu_ns() { cat "$G/cpuacct.usage"; }
else
    own=$(sed -n 's/^0::\(.*\)$/\1/p' /proc/self/cgroup)
    G=/sys/fs/cgroup${own%/}/calcroute-bench-$$
    cpu_ns() { echo $(( $(sed -n 's/^usage_usec //p' "$G/cpu.stat") * 1000 )); }
fi
mkdir "$G" || exit 1
in=$(mktemp)
trap 'rm -f "$in" "$in.2"; rmdir "$G" 2>/dev/null' EXIT
i=0
while [ $i -lt "$N" ]; do printf '%s\n' '{"code":"import os\nprint(1)"}'; i=$((i + 1)); done > "$in"
cat "$in" "$in" > "$in.2"
measure() {
    c0=$(cpu_ns); t0=$(date +%s%N)
    sh -c 'echo $$ > "$1/cgroup.procs"; shift; exec "$@"' sh "$G" "$B/calc-route" --batch \
        --tier ns --wait-ready 120 "$@" - < "$file" > /dev/null
    t1=$(date +%s%N); sleep 0.5; c1=$(cpu_ns)
    echo $((c1 - c0)) $(((t1 - t0) / 1000000))
}
file=$in; set -- $(measure "$@") "$@"; c_n=$1; w_n=$2; shift; shift
file=$in.2; set -- $(measure "$@") "$@"; c_2n=$1; w_2n=$2; shift; shift
echo "calc-route --batch --tier ns $*: import os; print(1): $(( (c_2n - c_n) / N / 1000 )) us of CPU and $(( (w_2n - w_n) * 1000 / N )) us of wall a request (the extra $N of $((2 * N)) against $N; load $(cut -d' ' -f1 /proc/loadavg))"
