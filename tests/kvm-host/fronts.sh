#!/bin/sh
# The kvm tier through the front ends, where a Linux guest runs: `calc-route --tier kvm FILE`
# (text, --json, a raised exception), one POST /v1/run to `calc-route serve --tier kvm`, and
# the Python binding's tier="kvm", each compared exactly. make check-kvm runs it inside the
# nested test host (tests/kvm-host/run.sh, after the test_kvm* binaries, which leave the
# guest's snapshot made), with CR_EXPECT_KVM_LINUX=1: there a tier that cannot run fails;
# elsewhere that is a counted skip, saying why.
B=${BUILD:-build}
R="$B/calc-route"
PY=/usr/bin/python3
. tests/lib.sh
tmp=$(mktemp -d)
pids=""
trap 'for p in $pids; do kill "$p" 2>/dev/null; done; rm -rf "$tmp"' EXIT
# Every guest instruction is emulated in the nested host: a run's clock is generous.
T=600
t0=$(date +%s)

# A program that reaches the sandbox (import os) and the in-process checks' value.
printf 'import os\nprint("guest", os.uname().sysname, 6 * 7)\nans = 2 ** 70\n' >"$tmp/p.py"
"$R" --tier kvm --timeout $T "$tmp/p.py" >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" = 5 ] && grep -q '^calc-route: sandbox failure: kvm: ' "$tmp/err"; then
    if [ "${CR_EXPECT_KVM_LINUX:-}" = 1 ]; then
        bad "kvm-cli: the kvm tier does not run here: $(cat "$tmp/err")"
    else
        echo "SKIP kvm fronts: the kvm tier does not run here: $(cat "$tmp/err")" >&2
        skip=$((skip + 1))
    fi
    summary
    [ "$fail" = 0 ]
    exit
fi
expect kvm-cli "0 [guest Linux 42
= 1180591620717411303424] []" "$rc [$(cat "$tmp/out")] [$(cat "$tmp/err")]"

# field FILE EXPR: EXPR over the JSON object j in FILE, printed. restored(NOTE): "restored"
# when the tier note says the run restored the guest's snapshot, else the note. (Its other
# parts carry figures that vary, and whether the snapshot's python was warm, which depends on
# how loaded the machine was when the snapshot was made: test_kvm_tier's to check.)
field() { "$PY" -c "import json, re, sys
def restored(note):
    parts = (note or '').split('; ')
    ok = any(re.fullmatch('VM restore and stop [0-9]+[.][0-9]{3} s', p) for p in parts)
    return 'restored' if ok else note
j = json.load(open(sys.argv[1]))
print($2)" "$1"; }
RESULT='repr((j["route"], j["status"], j["stdout"], j["value"]["repr"], j["value"]["type"], j["tier_why"], restored(j["tier_note"])))'
WANT="('kvm', 'ok', 'guest Linux 42\\n', '1180591620717411303424', 'int', 'kvm: the tier option asks for it', 'restored')"
"$R" --tier kvm --timeout $T --json "$tmp/p.py" >"$tmp/json" 2>"$tmp/err"
expect kvm-cli-json "0 $WANT []" "$? $(field "$tmp/json" "$RESULT") [$(cat "$tmp/err")]"

# An exception in the guest has CPython's line and column, as the ns tier gives them.
printf 'import os\nx = 1\ny = x / 0\n' >"$tmp/raise.py"
"$R" --tier kvm --timeout $T "$tmp/raise.py" >"$tmp/out" 2>"$tmp/err"
expect kvm-cli-raised "1 [] [Traceback (most recent call last):
  File \"<code>\", line 3, in <module>
    y = x / 0
        ~~^~~
ZeroDivisionError: division by zero
calc-route: ZeroDivisionError: division by zero (line 3, col 5)]" \
    "$? [$(cat "$tmp/out")] [$(cat "$tmp/err")]"

# serve: one request, the same result; the kvm tier keeps no warm pool, and says so.
# http PATH [BODY]: "CODE BODY-FILE" of a GET (no BODY) or POST to $url, the body in $tmp/http.
http() {
    "$PY" - "$url$1" "${2:-}" "$tmp/http" <<'EOF'
import sys, urllib.error, urllib.request
url, body, out = sys.argv[1], sys.argv[2], sys.argv[3]
req = urllib.request.Request(url, data=body.encode() if body else None)
try:
    with urllib.request.urlopen(req, timeout=900) as r:
        code, data = r.status, r.read()
except urllib.error.HTTPError as e:
    code, data = e.code, e.read()
open(out, "wb").write(data)
print(code)
EOF
}
if start serve --tier kvm --timeout $T; then
    code=$(http /v1/run '{"id":"k1","code":"import os\nprint(\"guest\", os.uname().sysname, 6 * 7)\nans = 2 ** 70"}')
    expect kvm-serve "200 k1 $WANT" "$code $(field "$tmp/http" "j['id']") $(field "$tmp/http" "$RESULT")"
    code=$(http '/readyz?verbose')
    expect kvm-serve-readyz "200 no warm pool: the kvm tier has none" \
        "$code $(field "$tmp/http" '[c["detail"] for c in j["checks"] if c["name"]=="pool"][0]')"
    kill -TERM "$pid"
    wait "$pid"
    expect kvm-serve-exit "0 calc-route: serve: stopped, every request answered" "$? $(cat "$tmp/serve.err")"
fi

# The Python binding, from the source tree with this build's library.
CALCROUTE_LIB="$B/libcalcroute.so" PYTHONPATH=bindings/python "$PY" - $T >"$tmp/py" 2>&1 <<'EOF'
import sys
import calcroute
T = float(sys.argv[1])
r = calcroute.run('import os\nprint("guest", os.uname().sysname, 6 * 7)\nans = 2 ** 70',
                  tier="kvm", timeout=T)
print(r.route, r.status, repr(r.stdout), r.value)
with calcroute.Engine(tier="kvm", timeout=T) as eng:
    try:
        eng.run("import os\nx = 1\ny = x / 0\n")
    except calcroute.CodeError as e:
        print(type(e).__name__, e, e.result.route, e.result.error["line"], e.result.error["col"])
EOF
expect kvm-python "kvm ok 'guest Linux 42\\n' 1180591620717411303424
CodeError ZeroDivisionError: division by zero (line 3, col 5) kvm 3 5" "$(cat "$tmp/py")"

echo "fronts.sh: $(($(date +%s) - t0)) s" >&2
summary
[ "$fail" = 0 ]
