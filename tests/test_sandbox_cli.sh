#!/bin/sh
# calc-route sending code outside the in-process subset to the ns tier: route, value, the
# exit status of each outcome (0 ok, 1 raised, 3 limit, 4 rejected), --timeout, --memory,
# --data, --out, and the --json fields that carry the sandbox's outcome.
B=${BUILD:-build}
R="$B/calc-route"
PY=/usr/bin/python3
. tests/lib.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"

# run CODE [ARGS...]: calc-route --json on CODE; the JSON in $tmp/json, exit status in $rc.
run() {
    code=$1
    shift
    printf '%s' "$code" | "$R" --json --tier ns "$@" >"$tmp/json" 2>"$tmp/err"
    rc=$?
}

# field PYEXPR: the repr() of a value read from $tmp/json (d is the object).
field() {
    "$PY" -c "import json,sys; d=json.load(open(sys.argv[1])); print(repr(($1)))" "$tmp/json" 2>/dev/null
}

# expect NAME WANT_RC PYEXPR WANT: the exit status of the last run and one field.
expect() {
    name=$1 want_rc=$2 expr=$3 want=$4
    got=$(field "$expr")
    if [ "$rc" = "$want_rc" ] && [ "$got" = "$want" ]; then pass=$((pass + 1)); else
        fail=$((fail + 1))
        printf 'FAIL %s: exit %s (want %s), %s = [%s], want [%s]\n' "$name" "$rc" "$want_rc" \
            "$expr" "$got" "$want" >&2
        cat "$tmp/err" >&2
    fi
}

[ -x "$R" ] || skip_all test_sandbox_cli "$R not built"
run 'import os
ans = 1'
if [ "$(field "d['route'], d['status']")" != "('ns', 'ok')" ]; then
    skip_all test_sandbox_cli \
        "the ns tier does not run here: $(field "d['error']") $(cat "$tmp/err")"
fi

run 'import fractions
print("mean")
ans = float(fractions.Fraction(7, 3))'
expect route 0 "d['route'], d['reasons'][0]['code']" "('ns', 'import:fractions')"
expect value 0 "d['value']['repr'], d['value']['type'], d['value']['from']" \
    "('2.3333333333333335', 'float', 'ans')"
expect stdout 0 "d['stdout']" "'mean\\n'"

# A container's native form, built by the code's process and checked by the runner, as the
# in-process evaluator gives one; a part without one leaves its repr.
run 'import os, decimal
ans = (2.0, [0.1, -0.5, float("nan")], {"k": {3}}, decimal.Decimal("1.10"), None, 2 ** 70)'
expect native-container 0 "d['value']['native'], d['value']['native_why']" \
    "({'tuple': [{'float': '2'}, {'list': [{'float': '1/10'}, {'float': '-1/2'}, {'float': 'nan'}]}, {'dict': [[{'str': 'k'}, {'set': [{'int': '3'}]}]]}, {'Decimal': '1.10'}, None, {'int': '1180591620717411303424'}]}, None)"
run 'import os
ans = {"r": range(2)}'
expect native-none 0 "d['value']['native'], d['value']['repr']" "(None, \"{'r': range(0, 2)}\")"

run 'import math
x = [1][2]'
expect raised 1 "d['error']['type'], d['error']['line']" "('IndexError', 2)"

run 'import time
time.sleep(30)' --timeout 0.5
expect wall-limit 3 "d['limit']['name'], d['status'], d['limit']['message']" \
    "('wall', 'limit', 'wall limit: wall clock 0.500 s')"

run 'import os
x = bytearray(1 << 30)' --memory 64
expect memory-limit 3 "d['limit']['name']" "'memory'"

run 'import sys
while True:
    print("x" * 1000)'
expect output-limit 3 "d['limit']['name'], d['stdout_truncated'], len(d['stdout'])" \
    "('output', True, 1048576)"

# Bytes that are not UTF-8 never drop a member: each ill-formed sequence shows as U+FFFD and
# a flag says so; a cap cuts on a character boundary (1048574 = 3 * 349524 + 2).
FFFD=$(printf '\357\277\275')
run 'import sys
sys.stdout.buffer.write(b"ok\xff\xfe\n")
sys.stderr.buffer.write(b"\xe2\x82")'
expect raw-bytes 0 "d['stdout'], d['stdout_replaced'], d['stderr'], d['stderr_replaced']" \
    "('ok$FFFD$FFFD\\n', True, '$FFFD', True)"
run 'import sys
sys.stdout.write("ab" + "\u20ac" * 400000)'
expect output-limit-utf8 3 \
    "d['stdout_truncated'], d['stdout_replaced'], len(d['stdout']), d['stdout'][-1] == '\u20ac'" \
    "(True, False, 349526, True)"
mkdir "$tmp/out2"
run 'open(b"/out/r\xe9sum\xe9.txt", "wb").write(b"abc")
open("/out/ok.txt", "w").write("abc")' --out "$tmp/out2"
expect artifact-bytes 0 "[(a['name'], a['name_base64'], a['size'], a['sha256']) for a in d['artifacts']]" \
    "[('ok.txt', None, 3, 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'), ('r${FFFD}sum$FFFD.txt', 'culzdW3pLnR4dA==', 3, 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad')]"
if [ "$(cat "$tmp/out2/r$(printf '\351')sum$(printf '\351').txt" 2>/dev/null)" = abc ]; then
    pass=$((pass + 1))
else
    fail=$((fail + 1)); echo "FAIL artifact-bytes-copy: no file under its exact name" >&2
fi

printf 'a,b\n1,2\n' >"$tmp/in.csv"
chmod 644 "$tmp/in.csv"
mkdir "$tmp/out"
run 'import csv
rows = list(csv.reader(open("/data/in.csv")))
open("/out/table.txt", "w").write("abc")
ans = int(rows[1][0]) + int(rows[1][1])' --data "$tmp" --out "$tmp/out"
expect data 0 "d['value']['repr']" "'3'"
expect artifact 0 "[(a['name'], a['size'], a['sha256']) for a in d['artifacts']]" \
    "[('table.txt', 3, 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad')]"
if [ "$(cat "$tmp/out/table.txt" 2>/dev/null)" = abc ]; then pass=$((pass + 1)); else
    fail=$((fail + 1)); echo "FAIL artifact-copy: $tmp/out/table.txt" >&2
fi

# The finance stack (scripts/install-deps.sh) imports and computes inside the sandbox, within
# its seccomp filter and limits: each line is what /usr/bin/python3 prints for it.
mkdir "$tmp/fin"
run 'import numpy as np, pandas as pd, scipy.optimize as so, sympy, statsmodels.api as sm
import datetime, dateutil.relativedelta as rd, matplotlib.pyplot as plt
df = pd.DataFrame({"k": ["a", "b", "a"], "v": [1.5, 2, 3]})
print(df.groupby("k")["v"].sum().to_dict())
print(round(so.brentq(lambda r: -100 + 60 / (1 + r) + 60 / (1 + r) ** 2, 0, 1), 6))
x = sympy.symbols("x")
print(sympy.solve(x ** 2 - 2, x), sympy.Rational(1, 3) + sympy.Rational(1, 6))
fit = sm.OLS(np.array([3.0, 5, 7, 9]), sm.add_constant(np.array([1.0, 2, 3, 4]))).fit()
print(np.round(fit.params, 6).tolist())
print(datetime.date(2020, 1, 31) + rd.relativedelta(months=1))
print((np.ones((300, 300)) @ np.ones((300, 300)))[0, 0])
plt.plot([1, 2, 3])
plt.savefig("chart.png")
ans = len(df)' --out "$tmp/fin" --timeout 60
expect finance-stack 0 "d['value']['repr'], d['stdout'], d['stderr']" \
    "('3', \"{'a': 4.5, 'b': 2.0}\\n0.130662\\n[-sqrt(2), sqrt(2)] 1/2\\n[1.0, 2.0]\\n2020-02-29\\n300.0\\n\", '')"
expect finance-savefig 0 "[a['name'] for a in d['artifacts']], open(d['artifacts'][0]['path'], 'rb').read(8)" \
    "(['chart.png'], b'\\x89PNG\\r\\n\\x1a\\n')"

# Another interpreter: a virtual environment's python under a directory the caller allows,
# bound read-only at the same path; its own site-packages and the system's both import.
/usr/bin/python3 -m venv --without-pip --system-site-packages "$tmp/venv"
site=$("$tmp/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')
mkdir "$site/tinypkg" && echo 'VALUE = 41' >"$site/tinypkg/__init__.py"
chmod -R a+rX "$tmp/venv"
run 'import tinypkg, sys, numpy
print(sys.prefix == sys.executable[:-len("/bin/python")], numpy.__name__)
ans = tinypkg.VALUE + 1' --interpreter "$tmp/venv/bin/python" --allow-dir "$tmp/venv"
expect venv 0 "d['value']['repr'], d['stdout']" "('42', 'True numpy\\n')"
# Each wrong configuration is a usage error (exit 2) that names the interpreter or directory.
usage_err() {
    name=$1 want=$2
    shift 2
    printf 'import os\nans = 1\n' | "$R" --tier ns "$@" >/dev/null 2>"$tmp/err"
    rc=$?
    got=$(sed "s|$tmp|TMP|g" "$tmp/err")
    if [ "$rc" = 2 ] && [ "$got" = "$want" ]; then pass=$((pass + 1)); else
        fail=$((fail + 1)); printf 'FAIL %s: exit %s, [%s]\nwant [%s]\n' "$name" "$rc" "$got" "$want" >&2
    fi
}
usage_err venv-not-allowed "calc-route: interpreter TMP/venv/bin/python: not under /usr or an allowed directory, all the sandbox sees" \
    --interpreter "$tmp/venv/bin/python"
usage_err interpreter-outside "calc-route: interpreter TMP/venv/bin/python: not under /usr or TMP/fin, all the sandbox sees" \
    --interpreter "$tmp/venv/bin/python" --allow-dir "$tmp/fin"
ln -s "$tmp/venv/pyvenv.cfg" "$tmp/fin/py"
usage_err interpreter-resolves-outside "calc-route: interpreter TMP/fin/py -> TMP/venv/pyvenv.cfg: not under /usr or TMP/fin, all the sandbox sees" \
    --interpreter "$tmp/fin/py" --allow-dir "$tmp/fin"
usage_err interpreter-not-executable "calc-route: interpreter TMP/venv/pyvenv.cfg: not an executable file" \
    --interpreter "$tmp/venv/pyvenv.cfg" --allow-dir "$tmp/venv"
usage_err interpreter-missing "calc-route: interpreter /usr/bin/no-such-python: No such file or directory" \
    --interpreter /usr/bin/no-such-python
usage_err interpreter-relative "calc-route: interpreter python3: want an absolute path" \
    --interpreter python3
usage_err allow-not-canonical "calc-route: allowed directory TMP/venv/../venv: want the canonical absolute path of a directory (as realpath gives it)" \
    --interpreter "$tmp/venv/bin/python" --allow-dir "$tmp/venv/../venv"
usage_err allow-covers-own "calc-route: allowed directory /etc: would cover the sandbox's own /etc" \
    --allow-dir /etc

# Deterministic answers: random and numpy.random (the global RandomState and an unseeded
# default_rng()) are seeded from the request's seed, given or derived from the code, and
# recorded; a program that never imports them does not get them imported.
rng='import random, numpy as np
print(random.random(), np.random.rand(), np.random.default_rng().integers(10**9))
ans = random.randint(1, 10**9)'
run "$rng"
first=$(field "d['seed'], d['stdout'], d['value']['repr']")
run "$rng"
expect rng-same-twice 0 "d['seed'], d['stdout'], d['value']['repr']" "$first"
run "$rng" --seed 5
want=$("$PY" -c 'import random, numpy as np
print(repr((5, "%r %r" % (random.seed(5) or random.random(), np.random.seed(5) or np.random.rand()))))')
expect rng-seed 0 "d['seed'], ' '.join(d['stdout'].split()[:2])" "$want"
seed5=$(field "d['stdout'], d['value']['repr']")
run "$rng" --seed 6
got=$(field "d['stdout'], d['value']['repr']")
if [ "$got" != "$seed5" ] && [ "$(field "d['seed']")" = 6 ]; then pass=$((pass + 1)); else
    fail=$((fail + 1)); echo "FAIL rng-other-seed: [$got] is seed 5's [$seed5]" >&2
fi
run 'import sys
print(hash("calcroute"), sorted(m for m in ("random", "numpy") if m in sys.modules))'
expect rng-lazy 0 "d['stdout']" \
    "$("$PY" -c 'import subprocess; print(repr(subprocess.run(["/usr/bin/python3", "-S", "-c", "print(hash(\"calcroute\"), [])"], env={"PYTHONHASHSEED": "0"}, capture_output=True, text=True).stdout))')"
usage_err rng-seed-range "calc-route: --seed: want a whole number from 0 to 4294967295, got '4294967296'
Try 'calc-route --help'." --seed 4294967296
got=$(printf '{"id": 1, "code": "import random\\nans = random.random()", "seed": 5}\n' |
      "$R" --batch --tier ns | "$PY" -c 'import json, sys; d = json.load(sys.stdin); print(d["seed"], d["value"]["repr"])')
if [ "$got" = "5 $("$PY" -c 'import random; random.seed(5); print(repr(random.random()))')" ]; then
    pass=$((pass + 1))
else
    fail=$((fail + 1)); echo "FAIL rng-batch-seed: [$got]" >&2
fi
# The seed is in the audit record's policy, and a replay re-runs with it: no difference.
printf '%s' "$rng" | "$R" --tier ns --audit "$tmp/rng.db" >/dev/null 2>&1
printf '%s' "$rng" | "$R" --tier ns --audit "$tmp/rng.db" --seed 77 >/dev/null 2>&1
got=$("$B/calc-audit" show "$tmp/rng.db" 2 | "$PY" -c 'import json, sys; print(json.load(sys.stdin)["policy"]["seed"])')
replay=$("$B/calc-audit" replay "$tmp/rng.db" --rerun-sandbox 2>&1)
if [ "$got" = 77 ] && [ "$replay" = "ok: 2 replayed, 2 identical, 0 differ, 0 sandboxed differ (not failures), 0 skipped" ]; then
    pass=$((pass + 1))
else
    fail=$((fail + 1)); echo "FAIL rng-replay: seed [$got], $replay" >&2
fi

# Files where users write them: the working directory is /out, so a bare name comes back as
# an artifact; what is left in /tmp is named as dropped (the libraries' caches aside), the
# names capped at 16 and the count whole.
mkdir "$tmp/cwd"
run 'import os
open("x.csv", "w").write("a,b\n")
os.makedirs("/tmp/d/e")
for i in range(20):
    open("/tmp/d/e/f%02d" % i, "w").close()
open("/tmp/lost.txt", "w").write("z")
ans = os.getcwd()' --out "$tmp/cwd"
expect cwd-artifact 0 "d['value']['repr'], [(a['name'], a['size']) for a in d['artifacts']]" \
    "(\"'/out'\", [('x.csv', 4)])"
expect dropped 0 "d['dropped']['count'], d['dropped']['names'][0], d['dropped']['names'][-1], len(d['dropped']['names'])" \
    "(21, '/tmp/d/e/f00', '/tmp/lost.txt', 16)"
run 'import matplotlib.pyplot as plt
plt.plot([1, 2])
plt.savefig("plot.png")'
expect dropped-none 0 "d['dropped'], [a['name'] for a in d['artifacts']]" "({'count': 0, 'names': []}, ['plot.png'])"
printf 'import os\nopen("/tmp/a\\tb", "w")\nans = 1\n' | "$R" --tier ns >/dev/null 2>"$tmp/text.err"
if [ "$(cat "$tmp/text.err")" = 'calc-route: 1 file written outside /out dropped (write under the working directory, /out, to keep one): /tmp/a\tb' ]; then
    pass=$((pass + 1))
else
    fail=$((fail + 1)); echo "FAIL dropped-text: $(cat "$tmp/text.err")" >&2
fi

# --data under a private (0700) parent, a file only its owner may read: as root (the sandbox
# is nobody outside, and reads through an idmapped mount), and as another user, who owns it.
mkdir -p "$tmp/home/data"
printf '7\n' >"$tmp/home/data/n.txt"
chmod 600 "$tmp/home/data/n.txt"
chmod 700 "$tmp/home/data" "$tmp/home"
run 'ans = int(open("/data/n.txt").read()) * 6' --data "$tmp/home/data"
expect data-private 0 "d['value']['repr'], d['tier_note']" "('42', None)"
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
    chown -R 65534:65534 "$tmp/home"
    printf '%s' 'ans = int(open("/data/n.txt").read()) * 6' |
        setpriv --reuid=65534 --regid=65534 --clear-groups "$R" --json --tier ns \
            --data "$tmp/home/data" - >"$tmp/json" 2>"$tmp/err"
    rc=$?
    if [ "$(field "d['route']")" = "'ns'" ]; then
        expect data-private-user 0 "d['value']['repr']" "'42'"
        # Every run of a caller who is not root, not only its first: the sandbox's set-up
        # shares the caller's memory until exec, and must leave it as it found it.
        printf '%s\n' '{"id": 1, "code": "import os\nans = 1"}' '{"id": 2, "code": "import os\nans = 2"}' \
            '{"id": 3, "code": "import os\nans = 3"}' >"$tmp/home/user.jsonl"
        chown 65534:65534 "$tmp/home/user.jsonl"
        got=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$R" --batch --tier ns \
            "$tmp/home/user.jsonl" 2>"$tmp/err" | "$PY" -c '
import json, sys
print(" ".join("%s:%s:%s" % (d["id"], d["status"], (d["value"] or {}).get("repr")) for d in map(json.loads, sys.stdin)))')
        if [ "$got" = "1:ok:1 2:ok:2 3:ok:3" ]; then pass=$((pass + 1)); else
            fail=$((fail + 1)); echo "FAIL batch-user: [$got]" >&2; cat "$tmp/err" >&2
        fi
    else
        why="no ns tier as uid 65534: $(cat "$tmp/err")"
        skip data-private-user "$why"
        skip batch-user "$why"
    fi
else
    skip data-private-user "needs root and setpriv to change user"
    skip batch-user "needs root and setpriv to change user"
fi

# Text mode: names and output the code chose cannot pass for calc-route's own lines.
mkdir "$tmp/out3"
printf '%s' 'import sys
open("/out/a\n= 9\tb\\\x01", "w").write("x")
print("calc-route: NameError: x", file=sys.stderr)
print("= 8")
ans = 7' | "$R" --tier ns --out "$tmp/out3" >"$tmp/text" 2>"$tmp/text.err"
rc=$?
want_err='\calc-route: NameError: x
calc-route: artifact /out/a\n= 9\tb\\\x01: 1 bytes, sha256 2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881'
if [ "$rc" = 0 ] && [ "$(cat "$tmp/text")" = '\= 8
= 7' ] && [ "$(cat "$tmp/text.err")" = "$want_err" ]; then pass=$((pass + 1)); else
    fail=$((fail + 1)); echo "FAIL text-forgery: exit $rc" >&2; cat "$tmp/text" "$tmp/text.err" >&2
fi

printf '%s' 'class X:
    def __repr__(self):
        return "1\n= 2"
ans = X()' | "$R" --tier ns >"$tmp/text" 2>&1
if [ "$(cat "$tmp/text")" = '= 1\n= 2  (inexact)' ]; then pass=$((pass + 1)); else
    fail=$((fail + 1)); echo "FAIL value-repr-one-line: $(cat "$tmp/text")" >&2
fi

printf '%s' 'import os
ans = 1' | "$R" --tier none >/dev/null 2>&1
rc=$?
if [ "$rc" = 4 ]; then pass=$((pass + 1)); else
    fail=$((fail + 1)); echo "FAIL tier-none: exit $rc, want 4" >&2
fi

# One final-value rule on both tiers: the same program in-process and, made to leave the
# subset by an `import os` it does not use, in the ns tier gives the same value and source;
# text mode says on both when there is none.
both() {
    name=$1 code=$2 want=$3
    for pre in '' 'import os
'; do
        got=$(printf '%s%s' "$pre" "$code" | "$R" --json --tier ns 2>/dev/null | "$PY" -c '
import json, sys
d = json.load(sys.stdin)
v = d["value"]
print(d["route"] != "inprocess", v and [v["from"], v["repr"]])')
        if [ "$got" = "$([ -n "$pre" ] && echo True || echo False) $want" ]; then
            pass=$((pass + 1))
        else
            fail=$((fail + 1)); printf 'FAIL both-%s: [%s], want %s\n' "$name" "$got" "$want" >&2
        fi
    done
}
both solution-local 'def solution():
    solution = 6 * 7
    return solution
' "['solution()', '42']"
both solution-main 'def solution():
    return 6 * 7
def main():
    print(solution())
if __name__ == "__main__":
    main()
' "['solution()', '42']"
both solution-last-call 'r = 1
def solution():
    return r * 10
print(solution())
r = 2
print(solution())
r = 3
' "['solution()', '20']"
both solution-other-function 'def solution(k=2):
    return k
def f():
    return solution(4)
y = f()
' "['solution()', '4']"
both solution-at-end 'ans = 1
def solution():
    return 7
' "['solution()', '7']"
both solution-parameters 'def solution(r):
    return r
z = [solution(k) for k in (1, 2)]
' "['z', '[1, 2]']"
both answer-first 'def solution():
    return 7
print(solution())
ans = 2
' "['ans', '2']"
both last-expression 'for v in [1, 2]:
    v * 3
' "['last expression', '6']"
both none 'def solution(r):
    return r
print(solution(3))
' "None"
printf '%s' 'import os
print(1)' | "$R" --tier ns >"$tmp/text" 2>"$tmp/text.err"
rc=$?
if [ "$rc" = 0 ] && [ "$(cat "$tmp/text")" = 1 ] && [ "$(cat "$tmp/text.err")" = 'calc-route: no final value (no solution(), answer variable, expression statement or module-level assignment gave one)' ]; then
    pass=$((pass + 1))
else
    fail=$((fail + 1)); echo "FAIL no-value-text: exit $rc" >&2; cat "$tmp/text" "$tmp/text.err" >&2
fi

# ---- SIGINT: the run under way ends at once (its 60 s timeout far away), is reported as
# interrupted, and calc-route exits 130 leaving none of its processes behind.

# tree PID: PID's descendants, one a line.
tree() {
    "$PY" -c '
import os, sys
kids = {}
for p in os.listdir("/proc"):
    try:
        f = open("/proc/%s/stat" % p).read()
    except (OSError, ValueError):
        continue
    if p.isdigit():
        kids.setdefault(int(f.rsplit(")", 1)[1].split()[1]), []).append(int(p))
todo, seen = [int(sys.argv[1])], []
while todo:
    for k in kids.get(todo.pop(), []):
        seen.append(k)
        todo.append(k)
print("\n".join(map(str, seen)))' "$1"
}

# catching PID: true once PID catches SIGINT. A background job of a non-interactive shell
# starts with SIGINT ignored, so a signal sent before calc-route's handler is in place is
# lost, and the test would wait for a run that was never told to end.
catching() {
    m=$(sed -n 's/^SigCgt:[[:space:]]*//p' "/proc/$1/status" 2>/dev/null)
    [ -n "$m" ] && [ $((0x$m & 2)) != 0 ]
}

# stop_within S: waits for $pid at most S seconds (then kills it), setting $rc: a run that
# ignored the signal fails its test instead of hanging the suite.
stop_within() {
    ( trap 'kill "$s" 2>/dev/null; exit 0' TERM
      sleep "$1" & s=$!
      wait "$s" && kill -KILL "$pid" ) >/dev/null 2>&1 &
    dog=$!
    wait "$pid"
    rc=$?
    kill "$dog" 2>/dev/null
    wait "$dog" 2>/dev/null
}

# interrupt NAME WAIT_FOR: SIGINT to calc-route (started in the background as $pid, its
# output in $tmp/json) once it catches SIGINT and one of its descendants is named WAIT_FOR
# ("": once it has one, and 1 s has passed; "-": after 1 s); sets $rc and checks that it
# ended within 10 s and left no process.
interrupt() {
    name=$1 want=$2 i=0
    while [ $i -lt 100 ]; do
        kids=$(tree "$pid")
        if ! catching "$pid"; then
            :
        elif [ "$want" = - ]; then
            [ $i -ge 10 ] && i=1000
        elif [ -n "$want" ]; then
            for k in $kids; do [ "$(cat /proc/"$k"/comm 2>/dev/null)" = "$want" ] && i=1000; done
        elif [ -n "$kids" ] && [ $i -ge 10 ]; then i=1000; fi
        [ $i -ge 1000 ] && break
        sleep 0.1
        i=$((i + 1))
    done
    t0=$(date +%s)
    kill -INT "$pid"
    stop_within 30
    t1=$(date +%s)
    left=""
    for k in $kids; do
        [ -d "/proc/$k" ] && [ "$(cut -d' ' -f3 "/proc/$k/stat" 2>/dev/null)" != Z ] && left="$left $k"
    done
    if [ $i -ge 1000 ] && [ $((t1 - t0)) -le 10 ] && [ -z "$left" ] &&
        { [ -n "$kids" ] || [ "$want" = - ]; }; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        echo "FAIL $name: waited for $want: $i; ended $((t1 - t0)) s after SIGINT; processes [$kids], left [$left]" >&2
    fi
}

for c in 'import os
print("started", flush=True)
while True: pass' 'import time
print("started", flush=True)
time.sleep(100)'; do
    printf '%s' "$c" >"$tmp/int.py"
    "$R" --json --tier ns --timeout 60 "$tmp/int.py" >"$tmp/json" 2>"$tmp/err" &
    pid=$!
    interrupt "interrupt-$(printf '%s' "$c" | tail -n 1)" ""
    expect interrupted 130 "d['status'], d['error']['message'][:17], d['limit']" \
        "('interrupted', 'interrupted after', None)"
done
printf 'x = 0\nwhile True:\n    x += 1\n' >"$tmp/int.py"
"$R" --json --tier ns --timeout 60 "$tmp/int.py" >"$tmp/json" 2>"$tmp/err" &
pid=$!
interrupt interrupt-inprocess -
expect interrupted-inprocess 130 "d['route'], d['status'], d['error']['message']" \
    "('inprocess', 'interrupted', 'interrupted')"

printf '%s' 'import subprocess
print("started", flush=True)
subprocess.run(["sleep", "100"])' >"$tmp/int.py"
"$R" --tier ns --timeout 60 "$tmp/int.py" >"$tmp/text" 2>"$tmp/err" &
pid=$!
interrupt interrupt-grandchild sleep
if [ "$rc" = 130 ] && [ "$(cat "$tmp/text")" = started ] &&
    grep -q '^calc-route: interrupted: interrupted after [0-9.]* s$' "$tmp/err"; then
    pass=$((pass + 1))
else
    fail=$((fail + 1)); echo "FAIL interrupt-text: exit $rc" >&2; cat "$tmp/text" "$tmp/err" >&2
fi

# --batch: the request under way is the last; its line says interrupted, and its record is
# in the ledger. Then a batch waiting for its next line: it stops at once.
printf '%s\n' '{"id": 1, "code": "import time\ntime.sleep(100)"}' '{"id": 2, "code": "import os\nans = 2"}' >"$tmp/batch.jsonl"
"$R" --batch --tier ns --timeout 60 --audit "$tmp/int.db" "$tmp/batch.jsonl" >"$tmp/json" 2>"$tmp/err" &
pid=$!
interrupt interrupt-batch ""
expect interrupt-batch 130 "d['id'], d['status']" "(1, 'interrupted')"
if [ "$(wc -l <"$tmp/json")" = 1 ] &&
    [ "$("$B/calc-audit" show "$tmp/int.db" 1 | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["status_name"])')" = interrupted ] &&
    [ "$("$B/calc-audit" head "$tmp/int.db" | cut -c1-2)" = "1 " ]; then
    pass=$((pass + 1))
else
    fail=$((fail + 1)); echo "FAIL interrupt-batch-ledger" >&2; cat "$tmp/json" >&2
    "$B/calc-audit" export "$tmp/int.db" >&2
fi
mkfifo "$tmp/fifo"
rm -f "$tmp/json"
"$R" --batch --tier ns <"$tmp/fifo" >"$tmp/json" 2>"$tmp/err" &
pid=$!
exec 9>"$tmp/fifo"
printf '%s\n' '{"id": 3, "code": "import os\nans = 3"}' >&9
i=0
while { [ ! -s "$tmp/json" ] || ! catching "$pid"; } && [ $i -lt 300 ]; do
    sleep 0.1
    i=$((i + 1))
done
kill -INT "$pid"
stop_within 30
exec 9>&-
expect interrupt-batch-idle 130 "d['id'], d['status'], d['value']['repr']" "(3, 'ok', '3')"

# --batch --jobs: lines run at once, results in input order, whichever finishes first. The
# sandboxed lines sleep less the later they come, so they finish in reverse; the in-process
# ones, a syntax error and a bad line come between; the lines under way at SIGINT are the last.
"$PY" -c '
import json
for i in range(8):
    code = ("import time\ntime.sleep(%.2f)\nans = %d" % ((8 - i) * 0.05, i) if i % 2 == 0
            else "ans = %d * 2" % i if i != 5 else "ans = = 1")
    print(json.dumps({"id": i, "code": code}))
print("not json")' >"$tmp/jobs.jsonl"
jobs_want="0 ns ok 0
1 inprocess ok 2
2 ns ok 2
3 inprocess ok 6
4 ns ok 4
5 rejected syntax_error None
6 ns ok 6
7 inprocess ok 14
None None bad_request None"
for j in 1 3 64; do
    got=$("$R" --batch --tier ns --jobs $j "$tmp/jobs.jsonl" 2>"$tmp/err" |
          "$PY" -c 'import json, sys
for l in sys.stdin:
    d = json.loads(l)
    print(d["id"], d.get("route"), d["status"], (d.get("value") or {}).get("repr"))')
    if [ "$got" = "$jobs_want" ]; then pass=$((pass + 1)); else
        fail=$((fail + 1)); printf 'FAIL batch-jobs-%s:\n%s\n' "$j" "$got" >&2; cat "$tmp/err" >&2
    fi
done
printf '%s\n' '{"id": 1, "code": "import time\ntime.sleep(100)"}' '{"id": 2, "code": "ans = 2"}' \
    '{"id": 3, "code": "import time\ntime.sleep(100)"}' >"$tmp/batch.jsonl"
"$R" --batch --tier ns --timeout 60 --jobs 3 "$tmp/batch.jsonl" >"$tmp/json" 2>"$tmp/err" &
pid=$!
i=0
while [ "$(ls /proc/$pid/task 2>/dev/null | wc -l)" -lt 4 ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
sleep 1
kill -INT "$pid"
wait "$pid"
rc=$?
got=$("$PY" -c 'import json, sys
for l in open(sys.argv[1]):
    d = json.loads(l)
    print(d["id"], d["status"])' "$tmp/json")
if [ "$rc" = 130 ] && [ "$got" = "1 interrupted
2 ok
3 interrupted" ]; then pass=$((pass + 1)); else
    fail=$((fail + 1)); printf 'FAIL batch-jobs-interrupt: exit %s\n%s\n' "$rc" "$got" >&2; cat "$tmp/err" >&2
fi
got=$("$R" --jobs 2 /dev/null 2>&1; echo "exit $?"; "$R" --batch --jobs 0 </dev/null 2>&1; echo "exit $?")
if [ "$got" = "calc-route: --jobs: only with --batch
Try 'calc-route --help'.
exit 2
calc-route: --jobs: want 1 to 64 lines at once, got '0'
Try 'calc-route --help'.
exit 2" ]; then pass=$((pass + 1)); else
    fail=$((fail + 1)); printf 'FAIL jobs-usage: [%s]\n' "$got" >&2
fi

# --pool with --warmup: the program runs where the warm sandboxes are forked from (what it
# sets, each has; its output reaches none); a file that cannot be read is a usage error.
printf 'import json\nprint("noise")\njson.warmed = 7\n' >"$tmp/warmup.py"
# (The line comes late, so that a warm sandbox is usually ready; a cold start has no warm-up.)
got=$( (sleep 2; printf '%s\n' '{"id": 1, "code": "import json\nprint(getattr(json, \"warmed\", 0))"}') |
      "$R" --batch --tier ns --pool 1 --preload json --warmup "$tmp/warmup.py" 2>"$tmp/err" |
      "$PY" -c 'import json, sys; d = json.load(sys.stdin); print(d["stdout"].strip(), d["status"], d["timings"]["sandbox_start"])')
if [ "$got" = "7 ok warm" ] || [ "$got" = "0 ok cold" ]; then pass=$((pass + 1)); else
    fail=$((fail + 1)); echo "FAIL warmup-batch: [$got]" >&2; cat "$tmp/err" >&2
fi
printf 'print(1)\n' | "$R" --tier ns --pool 1 --warmup "$tmp/none.py" >"$tmp/warm.out" 2>"$tmp/err"
rc=$?
if [ "$rc" = 2 ] && [ "$(cat "$tmp/err")" = "calc-route: --warmup $tmp/none.py: No such file or directory" ]; then
    pass=$((pass + 1))
else
    fail=$((fail + 1)); echo "FAIL warmup-missing: exit $rc" >&2; cat "$tmp/err" >&2
fi
# A sandboxed exception has CPython's line and column, which are the in-process evaluator's
# for the same program: "import os" sends it to the sandbox, "import math" keeps it in-process.
printf 'import os\nx = 1\ny = x / 0\n' | "$R" --tier ns >/dev/null 2>"$tmp/err"
rc=$?
got=$(tail -n 1 "$tmp/err")
if [ "$rc" = 1 ] && [ "$got" = "calc-route: ZeroDivisionError: division by zero (line 3, col 5)" ]; then
    pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL sandboxed-error-position: exit $rc [$got]" >&2; fi
pos_want="ns ZeroDivisionError 3 12
inprocess ZeroDivisionError 3 12
ns IndexError 4 9
inprocess IndexError 4 9
ns ZeroDivisionError 2 12
inprocess ZeroDivisionError 2 12
ns KeyError 3 1
inprocess KeyError 3 1
ns ValueError 7 5
inprocess ValueError 7 5
ns ZeroDivisionError 4 6
inprocess ZeroDivisionError 4 6
ns ZeroDivisionError 3 12
inprocess ZeroDivisionError 3 12"
pos_got=$(for body in 'def f(x):\n    return 1 / x\nf(0)\n' \
        'rows = [1, 2]\nfor r in rows:\n    y = [r][r]\n' \
        'y = ("\303\251", 1 / 0)\n' \
        'd = {}\nd["k"]\n' \
        'def g():\n    raise KeyError("q")\ntry:\n    g()\nexcept KeyError as e:\n    raise ValueError("w") from e\n' \
        'y = 2\nx = (1 +\n     y / 0)\n' \
        'def solution():\n    return 1 / 0\n'; do
    for m in os math; do
        printf "import $m\n$body" | "$R" --json --tier ns 2>/dev/null |
            "$PY" -c 'import json, sys; d = json.load(sys.stdin); e = d["error"]; print(d["route"], e["type"], e["line"], e["col"])'
    done
done)
if [ "$pos_got" = "$pos_want" ]; then pass=$((pass + 1)); else
    fail=$((fail + 1)); printf 'FAIL sandboxed-error-positions:\n%s\nwant:\n%s\n' "$pos_got" "$pos_want" >&2
fi

# What ps shows of a sandboxed process (/proc/PID/cmdline, its pid 1's the same): a short
# bootstrap, not the runner's text.
got=$(printf 'import os\nprint(open("/proc/self/cmdline", "rb").read().split(b"\\0"),\n      open("/proc/1/cmdline", "rb").read() == open("/proc/self/cmdline", "rb").read())\n' |
      "$R" --tier ns 2>"$tmp/err")
want="[b'/usr/bin/python3', b'-s', b'-S', b'-c', b'import posix;r=posix.pread(5,posix.fstat(5).st_size,0);posix.close(5);exec(r)', b'3', b'4', b''] True"
if [ "$got" = "$want" ]; then pass=$((pass + 1)); else
    fail=$((fail + 1)); echo "FAIL cmdline: [$got]" >&2; cat "$tmp/err" >&2
fi

finish
