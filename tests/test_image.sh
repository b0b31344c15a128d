#!/bin/sh
# The OCI image (`make image`, deploy/module.mk) under podman: it builds (the Debian root only
# when deploy/module.mk changed, the tools' layer when they did), runs as the non-root user
# with serve as its entrypoint, imports the sandboxes' packages, and answers a request on a
# published loopback port exactly as calc-route serve does outside it. Where podman or
# mmdebstrap is missing, the Debian mirror unreachable or containers cannot run here: skipped,
# saying why, and failed under CI (tests/lib.sh's unavailable).
. tests/lib.sh
tmp=$(mktemp -d)
# Every container is named, so that one whose start failed is removed as well.
name=calcroute-test-$$
pgsock= pgdb=
cleanup() {
    ${P:-podman} rm -f --ignore "$name" "$name-probe" >/dev/null 2>&1
    if [ -n "$pgdb" ] && [ -n "${CR_TEST_PG:-}" ]; then dropdb -h "$pgsock" -U calcroute --if-exists "$pgdb"
    elif [ -n "$pgsock" ]; then sh tests/pg-server.sh stop "$pgsock"; fi
    rm -rf "$tmp"
}
trap cleanup EXIT

case "${BUILD:-build}" in *asan*|*tsan*)
    skip_all test_image \
        "the image holds the plain build; a sanitizer build's tools need a runtime it does not carry" ;;
esac
for tool in podman mmdebstrap curl; do
    command -v $tool >/dev/null 2>&1 ||
        { unavailable test_image "no $tool (Debian's $tool package)"; finish; }
done
podman info >"$tmp/info" 2>&1 ||
    { unavailable test_image "podman cannot run here: $(tail -n 1 "$tmp/info")"; finish; }
version=$(sed -n 's/^#define CR_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\)$/\2/p' include/calcroute.h | paste -sd.)
IMAGE=localhost/calcroute:$version
# Not the calling make's flags (check-asan's B=, a jobserver): the image of the plain build.
if ! MAKEFLAGS= MAKELEVEL= make -s image >"$tmp/make" 2>&1; then
    if grep -q 'mmdebstrap' "$tmp/make" && ! [ -f build/image/base.tar ]; then
        unavailable test_image \
            "mmdebstrap could not make the root (no Debian mirror?): $(grep '^E:' "$tmp/make" | tail -n 1)"
        finish
    fi
    bad "make image: $(tail -n 5 "$tmp/make")"
    finish
fi
ok

# How to run a container here: podman as it is; else, on a host where crun cannot (cgroup v1
# or a hybrid hierarchy, which crun refuses) and the limits podman sets by default cannot be
# raised (no CAP_SYS_RESOURCE), runc with lower ones. $CR_PODMAN (the command, e.g.
# "podman --runtime runc") and $CR_PODMAN_RUN_OPTS (options to its run) override both.
P=${CR_PODMAN:-podman} RUN=${CR_PODMAN_RUN_OPTS:-}
probe() {
    $P run --rm --name "$name-probe" $RUN --entrypoint /bin/true "$IMAGE" >"$tmp/probe" 2>&1 ||
        { $P rm -f "$name-probe" >/dev/null 2>&1; return 1; }
}
if [ -z "${CR_PODMAN:-}${CR_PODMAN_RUN_OPTS:-}" ] && ! probe; then
    first=$(tail -n 1 "$tmp/probe")
    P="podman --runtime runc" RUN="--ulimit nofile=1024:1024 --ulimit nproc=4096:4096"
    command -v runc >/dev/null 2>&1 && probe ||
        { unavailable test_image "podman cannot start a container here: $first"; finish; }
    skip "podman's defaults" "running with $P run $RUN instead: $first"
fi

expect "the image's entrypoint and user" \
    '[/usr/local/bin/calc-route serve --listen 0.0.0.0:8080 --listen-public] 10001:10001 map[8080/tcp:{}]' \
    "$(podman image inspect --format '{{.Config.Entrypoint}} {{.Config.User}} {{.Config.ExposedPorts}}' "$IMAGE" 2>&1)"

expect "the user and the sandboxes' packages inside" "10001
10001
ok" "$($P run --rm $RUN --entrypoint /bin/sh "$IMAGE" -c 'id -u; id -g; MPLCONFIGDIR=/tmp/mpl /usr/bin/python3 -c "
import numpy, pandas, scipy.optimize, scipy.stats, sympy, statsmodels.api, dateutil
import matplotlib; matplotlib.use(\"Agg\"); import matplotlib.pyplot
print(\"ok\")"' 2>&1)"

# The service, on a port podman picks, published on loopback only, with what deploy/serve.yaml
# gives a pod: its own user namespace (hostUsers: false), no capability, no_new_privs, a
# read-only root with a /tmp, the Localhost seccomp profile and an unmasked /proc. The ns tier
# must work under them.
POD="--uidmap 0:200000:65536 --gidmap 0:200000:65536 --cap-drop ALL --read-only --tmpfs /tmp
     --security-opt no-new-privileges --security-opt seccomp=deploy/seccomp/calcroute-ns.json
     --security-opt unmask=ALL"
if ! cid=$($P run -d --name "$name" $RUN $POD -p 127.0.0.1::8080 "$IMAGE" --tier ns 2>"$tmp/run.err"); then
    bad "podman run: $(cat "$tmp/run.err")"
else
    port=$($P port "$cid" 8080/tcp | sed -n 's/^127\.0\.0\.1://p' | head -n 1)
    i=0
    until [ -n "$port" ] && curl -sf "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 || [ $i -ge 100 ]; do
        sleep 0.1
        i=$((i + 1))
    done
    expect "GET /healthz" "200" \
        "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/healthz")"
    # run BODY: the answer and its status code, the timings (which vary) taken out.
    run() {
        printf '%s' "$1" | curl -s -w '%{http_code}' --data-binary @- \
            -H 'Content-Type: application/json' "http://127.0.0.1:$port/v1/run" |
            sed 's/"timings":{[^}]*},//'
    }
    expect "POST /v1/run" '{"id":1,"route":"inprocess","status":"ok","lang":"python","reasons":[],"value":{"repr":"0.9","type":"float","fraction":"9/10","exact":true,"from":"last expression","native":{"float":"9/10"},"native_why":null},"stdout":"","stdout_truncated":false,"stdout_replaced":false,"stderr":"","stderr_replaced":false,"error":null,"limit":null,"artifacts":[],"tier_note":null,"tier_why":null,"dropped":null,"seed":null,"ops":3,"explained":false,"audit":null}
200' "$(run '{"id":1,"code":"x = 0.1 + 0.2\nx * 3"}')"
    # The sandbox's answer; its tier_note depends on the host's cgroups, so three fields.
    expect "POST /v1/run in the ns tier" '"route":"ns","status":"ok"
"stdout":"2.5\n"
"error":null' "$(run '{"id":2,"code":"import pandas as pd\nprint(pd.Series([1, 4]).mean())"}' |
        grep -o '"route":"[a-z]*","status":"[a-z]*"\|"stdout":"[^"]*"\|"error":null')"
    expect "the service's first line" "calc-route: serving on http://0.0.0.0:8080" \
        "$($P logs "$cid" 2>&1 | head -n 1)"
    # SIGTERM: serve drains and exits 0.
    $P stop -t 10 "$cid" >/dev/null 2>&1
    expect "exit after SIGTERM" "0" "$($P inspect --format '{{.State.ExitCode}}' "$cid")"
fi

# deploy/batch-job.yaml's command (its folded scalar, joined as YAML joins it), as two pods of
# an Indexed Job run it: index 0 of 2 takes lines 1, 3, 5, index 1 lines 2 and 4.
job=$(sed -n '/^ *- >-$/,/^ *env:/{/>-$/d;/env:/d;s/^ *//;p}' deploy/batch-job.yaml | paste -sd' ')
mkdir -p "$tmp/corpus" && chmod 755 "$tmp" "$tmp/corpus"
printf '%s\n' '{"id":1,"code":"2**10"}' '{"id":2,"code":"import os\nprint(6*7)"}' \
    '{"id":3,"code":"1/4"}' '{"id":4,"code":"3*3"}' \
    '{"id":5,"code":"import numpy as np\nprint(np.arange(3).sum())"}' >"$tmp/corpus/lines.jsonl"
chmod 644 "$tmp/corpus/lines.jsonl"
# Both shards append to one PostgreSQL ledger, as the Job's pods do (its socket directory
# mounted where the URI points).
if [ -n "${CR_TEST_PG:-}" ]; then
    pgsock=$(echo "$CR_TEST_PG" | sed -n 's/.*[?&]host=\([^&]*\).*/\1/p')
else
    pgsock="$tmp/pg"
    sh tests/pg-server.sh start "$pgsock" >/dev/null 2>"$tmp/pgerr" || pgsock=
fi
ledger=
if [ -n "$pgsock" ]; then
    pgdb="crimage_$$"
    createdb -h "$pgsock" -U calcroute "$pgdb" && ledger="postgresql:///$pgdb?host=/pg&user=calcroute"
fi
for i in 0 1; do
    $P run --rm $RUN $POD -v "$tmp/corpus:/corpus:ro" ${ledger:+-v "$pgsock:/pg"} \
        -e JOB_COMPLETION_INDEX=$i -e CR_SHARDS=2 -e LEDGER_URI="${ledger:-/tmp/ledger.db}" \
        --entrypoint /bin/sh "$IMAGE" -c "$job" >"$tmp/shard$i" 2>&1
    echo "exit $?" >>"$tmp/shard$i"
done
expect "the Indexed Job's shards" '"id":1,"route":"inprocess","status":"ok" "fraction":"1024" "stdout":""
"id":3,"route":"inprocess","status":"ok" "fraction":"1/4" "stdout":""
"id":5,"route":"ns","status":"ok" "stdout":"3\n"
exit 0
"id":2,"route":"ns","status":"ok" "stdout":"42\n"
"id":4,"route":"inprocess","status":"ok" "fraction":"9" "stdout":""
exit 0' "$(for i in 0 1; do
    grep -v '^exit' "$tmp/shard$i" | while IFS= read -r l; do
        printf '%s\n' "$l" | grep -o '"id":[0-9]*,"route":"[a-z]*","status":"[a-z]*"\|"fraction":"[^"]*"\|"stdout":"[^"]*"' | paste -sd' '
    done
    grep '^exit' "$tmp/shard$i"
done)"
if [ -n "$ledger" ]; then
    expect "the shards' one ledger" "ok: 5 records, head seq 5" \
        "$("${BUILD:-build}/calc-audit" verify "postgresql:///$pgdb?host=$pgsock&user=calcroute" | head -n 1 | cut -d' ' -f1-6)"
else
    unavailable "the shards' ledger" \
        "no PostgreSQL server here: $(tail -n 1 "$tmp/pgerr" 2>/dev/null)"
fi

# Without the profile (the runtime's default seccomp), the ns tier cannot build its sandbox:
# why the manifests name a Localhost profile.
printf 'import os\nprint(6 * 7)\n' >"$tmp/job.py"
expect "the ns tier under the default seccomp profile" "calc-route: sandbox failure: ns" \
    "$($P run --rm $RUN $(echo "$POD" | sed 's/--security-opt seccomp=[^ ]*//') \
        -v "$tmp/job.py:/job.py:ro" --entrypoint /usr/local/bin/calc-route "$IMAGE" --tier ns \
        /job.py 2>&1 | cut -d: -f1-3)"

finish
