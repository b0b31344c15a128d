#!/bin/sh
# A sandboxed record's inputs: the interpreter and the packages the code loaded, as the runner
# reports them, and the --data directory's manifest (relative names, sizes,
# SHA-256, computed here independently with sha256sum) in the record's policy, covered by the
# chain; `calc-audit replay --rerun-sandbox --data DIR` passes with the same data and names
# each file changed, missing or added (exit 1), before anything runs.
B=${BUILD:-build}
R="$B/calc-route"
A="$B/calc-audit"
PY=/usr/bin/python3
. tests/lib.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"

# check NAME GOT WANT
check() {
    if [ "$2" = "$3" ]; then pass=$((pass + 1)); else
        fail=$((fail + 1))
        printf 'FAIL %s:\n--- got\n%s\n--- want\n%s\n' "$1" "$2" "$3" >&2
    fi
}

if ! printf 'import os\nans = 1' | "$R" --tier ns >/dev/null 2>"$tmp/err"; then
    skip_all test_audit_inputs "the ns sandbox cannot run here: $(head -c 200 "$tmp/err")"
fi

d="$tmp/data"
mkdir -p "$d/sub/deeper"
printf 'year,revenue\n2019,100\n2020,120\n' >"$d/rev.csv"
printf 'hello' >"$d/sub/notes.txt"
: >"$d/sub/deeper/empty"
ln -s rev.csv "$d/link"
code='import numpy, numpy_financial
rows = open("/data/rev.csv").read().splitlines()[1:]
ans = sum(int(r.split(",")[1]) for r in rows)'
printf '%s' "$code" | "$R" --tier ns --data "$d" --audit "$tmp/l.db" >/dev/null 2>"$tmp/err"
check run-status "$?" 0

# The manifest as the record shows it, against sizes and digests taken here.
got=$("$A" show "$tmp/l.db" 1 | "$PY" -c '
import json, sys
p = json.load(sys.stdin)["policy"]
d = p["inputs"]["data"]
print(d["dir"], d["max_files"], d["max_depth"], "cut" in d)
for f in d["files"]:
    print(f["name"], f.get("size", "-"), f.get("sha256", f.get("type")))')
sum_of() { sha256sum "$d/$1" | cut -d" " -f1; }
check manifest "$got" "$d 10000 32 False
link - symlink
rev.csv $(wc -c <"$d/rev.csv") $(sum_of rev.csv)
sub/deeper/empty 0 $(sum_of sub/deeper/empty)
sub/notes.txt 5 $(sum_of sub/notes.txt)"
# The interpreter as the runner saw it, the packages the code's process loaded with their
# versions (numpy's as the same interpreter gives it; numpy_financial is the one we serve).
got=$("$A" show "$tmp/l.db" 1 | "$PY" -c '
import json, sys
i = json.load(sys.stdin)["policy"]["inputs"]
print(i["interpreter"]["path"], i["interpreter"]["version"])
print(sorted(i["packages"].items()))')
check interpreter-packages "$got" "$PY $("$PY" -c 'import sys; print(sys.version)')
[('numpy', '$("$PY" -c 'import numpy; print(numpy.__version__)')'), ('numpy_financial', 'calcroute')]"
check verify "$("$A" verify "$tmp/l.db" | head -n 1 | cut -d" " -f1-3)" "ok: 1 records,"

# Same data: the run is reproduced.
out=$("$A" replay "$tmp/l.db" --rerun-sandbox --data "$d" 2>&1)
check replay-same "$? $out" "0 ok: 1 replayed, 1 identical, 0 differ, 0 sandboxed differ (not failures), 0 skipped"

# No data directory given for a record that read one.
out=$("$A" replay "$tmp/l.db" --rerun-sandbox 2>&1)
check replay-none "$? $out" '1 seq 1: data differs
  recorded: "a data directory (replay with --data DIR)"
  replayed: (absent)
FAIL: 1 replayed, 0 identical, 1 differ, 0 sandboxed differ (not failures), 0 skipped'

# A changed file, named with both sizes and digests.
cp -a "$d" "$tmp/changed"
printf 'year,revenue\n2019,100\n2020,121\n' >"$tmp/changed/rev.csv"
out=$("$A" replay "$tmp/l.db" --rerun-sandbox --data "$tmp/changed" 2>&1)
check replay-changed "$? $out" "1 seq 1: data/rev.csv differs
  recorded: \"31 bytes, sha256 $(sum_of rev.csv)\"
  replayed: \"31 bytes, sha256 $(sha256sum "$tmp/changed/rev.csv" | cut -d" " -f1)\"
FAIL: 1 replayed, 0 identical, 1 differ, 0 sandboxed differ (not failures), 0 skipped"

# A missing and an added file.
cp -a "$d" "$tmp/moved"
mv "$tmp/moved/sub/notes.txt" "$tmp/moved/notes.txt"
out=$("$A" replay "$tmp/l.db" --rerun-sandbox --data "$tmp/moved" 2>&1)
check replay-moved "$? $out" "1 seq 1: data/sub/notes.txt differs
  recorded: \"5 bytes, sha256 $(sum_of sub/notes.txt)\"
  replayed: (absent)
seq 1: data/notes.txt differs
  recorded: (absent)
  replayed: \"5 bytes, sha256 $(sum_of sub/notes.txt)\"
FAIL: 1 replayed, 0 identical, 1 differ, 0 sandboxed differ (not failures), 0 skipped"

# --data belongs to the sandbox's re-runs.
"$A" replay "$tmp/l.db" --data "$d" >/dev/null 2>&1
check data-alone "$?" 2

# A walk cut short says so: 33 levels of directories, one more than are entered.
deep="$tmp/deep"
p=$deep
for i in $(seq 1 33); do p="$p/d"; done
mkdir -p "$p"
printf 'x' >"$p/f"
printf 'import os\nans = 1' | "$R" --tier ns --data "$deep" --audit "$tmp/l.db" >/dev/null 2>&1
got=$("$A" show "$tmp/l.db" 2 | "$PY" -c '
import json, sys
d = json.load(sys.stdin)["policy"]["inputs"]["data"]
print(d["files"], d["cut"])')
check cut "$got" "[] directory too deep: $(printf 'd/%.0s' $(seq 1 31))d"

# An in-process record keeps no inputs and no interpreter: its policy is the arithmetic's and
# the limits'.
printf 'ans = 1 + 2' | "$R" --data "$d" --audit "$tmp/l.db" >/dev/null 2>&1
got=$("$A" show "$tmp/l.db" 3 | "$PY" -c 'import json, sys; print(sorted(json.load(sys.stdin)["policy"]))')
check inprocess-policy "$got" "['answer_vars', 'max_depth', 'max_eval_memory', 'max_int_bits', 'max_recursion', 'max_source', 'max_stdout', 'max_steps', 'max_str_len', 'memory_mib', 'precision', 'rounding', 'tier', 'timeout_s']"

# One engine, many requests: a file's digest is kept while the file is unchanged, and a file
# rewritten with its size and mtime put back (only its ctime moves) is hashed again.
k="$tmp/kept"
mkdir "$k"
printf 'a,1\nb,2\n' >"$k/t.csv"
cp -p "$k/t.csv" "$tmp/t.orig"
sleep 1.1   # a digest is kept only for a file whose ctime has settled
mkfifo "$tmp/lines"
: >"$tmp/k.out"   # there before the engine's shell opens it, for the wait below
"$R" --batch --tier ns --data "$k" --audit "$tmp/k.db" - <"$tmp/lines" >"$tmp/k.out" 2>&1 &
kpid=$!
exec 3>"$tmp/lines"
line='{"code":"import os\nans = len(open(\"/data/t.csv\").read())"}'
printf "%s\n" "$line" >&3
printf "%s\n" "$line" >&3
n=0
while [ "$(wc -l <"$tmp/k.out")" -lt 2 ] && [ $n -lt 300 ]; do sleep 0.1; n=$((n + 1)); done
printf 'a,7\nb,2\n' >"$k/t.csv"
touch -r "$tmp/t.orig" "$k/t.csv"
printf "%s\n" "$line" >&3
exec 3>&-
wait $kpid
grep -q "\"status\":\"ok\"" "$tmp/k.out" || cat "$tmp/k.out" >&2
digest() { "$A" show "$tmp/k.db" "$1" | "$PY" -c '
import json, sys; print(json.load(sys.stdin)["policy"]["inputs"]["data"]["files"][0]["sha256"])'; }
check kept-digests "$(digest 1) $(digest 2) $(digest 3)" \
    "$(sha256sum "$tmp/t.orig" | cut -d' ' -f1) $(sha256sum "$tmp/t.orig" | cut -d' ' -f1) $(sha256sum "$k/t.csv" | cut -d' ' -f1)"

finish
