#!/bin/sh
# calc-route end to end: exact output, exit statuses, JSON shape, batch mode.
B=${BUILD:-build}
R="$B/calc-route"
. tests/lib.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# check NAME WANT_EXIT WANT_STDOUT WANT_STDERR CODE [ARGS...]: runs CODE through calc-route.
check() {
    name=$1 want_rc=$2 want_out=$3 want_err=$4 code=$5
    shift 5
    printf '%s' "$code" | "$R" "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    out=$(cat "$tmp/out")
    err=$(cat "$tmp/err")
    if [ "$rc" = "$want_rc" ] && [ "$out" = "$want_out" ] && [ "$err" = "$want_err" ]; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        printf 'FAIL %s: exit %s (want %s)\n  stdout [%s]\n  want   [%s]\n  stderr [%s]\n  want   [%s]\n' \
            "$name" "$rc" "$want_rc" "$out" "$want_out" "$err" "$want_err" >&2
    fi
}

# json_field NAME CODE JQPATH WANT [ARGS...]: one field of --json output (read with python).
json_field() {
    name=$1 code=$2 path=$3 want=$4
    shift 4
    got=$(printf '%s' "$code" | "$R" --json "$@" 2>/dev/null |
          /usr/bin/python3 -c "import json,sys; d=json.load(sys.stdin); print(json.dumps($path))")
    if [ "$got" = "$want" ]; then pass=$((pass + 1)); else
        fail=$((fail + 1)); printf 'FAIL %s: %s = %s, want %s\n' "$name" "$path" "$got" "$want" >&2
    fi
}

check exact-division 0 '= 0.01639058413251961639058413251961639' '' '(5829 - 5735) / 5735'
check float-noise 0 '0.3
= 0.3' '' 'ans = 0.1 + 0.2
print(ans)'
check round-half-even 0 '2.68
= 6' '' 'print(round(2.675, 2))
ans = round(2.5) + round(3.5)'
check floor-signs 0 '-4 2 -2.0
= None' '' 'ans = None
print(-7 // 2, -7 % 3, -7.0 // 4)'
check solution-convention 0 '= 1.05' '' 'def solution():
    principal = 1000
    return principal * 1.05 / 1000'
# The final value's source (--json value.from), and a line on stderr when there is none.
NOVALUE='calc-route: no final value (no solution(), answer variable, expression statement or module-level assignment gave one)'
json_field from-solution-local 'def solution():
    solution = 6 * 7
    return solution
print(solution())' '[d["value"]["from"], d["value"]["repr"]]' '["solution()", "42"]'
json_field from-solution-main 'def solution():
    return 6 * 7
def main():
    print(solution())
if __name__ == "__main__":
    main()' '[d["value"]["from"], d["value"]["repr"]]' '["solution()", "42"]'
json_field from-solution-last-call 'r = 1
def solution():
    return r * 10
print(solution())
r = 2
print(solution())
r = 3' '[d["value"]["from"], d["value"]["repr"]]' '["solution()", "20"]'
json_field from-solution-other-function 'def solution():
    return 5
def report():
    return solution() * 2
x = report()' '[d["value"]["from"], d["value"]["repr"]]' '["solution()", "5"]'
json_field from-solution-at-end 'def solution():
    return 0.5' '[d["value"]["from"], d["value"]["repr"]]' '["solution()", "0.5"]'
json_field from-solution-parameters 'def solution(r):
    return r
print(solution(3))' 'd["value"]' 'null'
json_field from-answer 'def solution():
    return 2
answer = solution() * 10' 'd["value"]["from"]' '"answer"'
json_field from-last-assigned 'total = 0
for v in [1, 2]:
    total += v' 'd["value"]["from"]' '"total"'
check no-value 0 '1.5' "$NOVALUE" 'def solution(r):
    return r
print(solution(1.5))'
check fstring-grouping 0 'Total: $1,234,567.89' "$NOVALUE" 'print(f"Total: ${1234567.891:,.2f}")'
check inexact-sqrt 0 '= 1.414213562  (inexact)' '' 'import math
ans = math.sqrt(2)' --precision 10
check half-up 0 '= 0.13' '' 'ans = round(0.125, 2)' --rounding half-up
check var-exact 0 '= 0.3' '' 'ans = rate * 3' --var rate=0.1
check var-string 0 "= 'million'" '' 'ans = unit' --var unit=million
printf '{"a": 0.1, "b": [1, 2.50], "big": 123456789012345678901234567890.5}' >"$tmp/vars.json"
check vars-json 0 '= 1.234567890123456789012345678931e+29' '' 'ans = a + b[1] + big' --vars "$tmp/vars.json"
# Integers past 64 bits and reals past a double's range keep their exact text.
printf '{"x": 123456789012345678901234567890, "y": [1e400, -5e-4]}' >"$tmp/bigvars.json"
check vars-json-big 0 '= (123456789012345678901234567891, [1e+400, -0.0005])' '' 'ans = (x + 1, y)' --vars "$tmp/bigvars.json"
check dsl 0 '= 0.01639058413251961639058413251961639' '' 'subtract(5829, 5735), divide(#0, 5735)'
printf '[["", "2019", "2018"], ["net sales", "$ 5,829", "$ 5,735"]]' >"$tmp/table.json"
check dsl-table 0 '= 5782.0' '' 'table_average(net sales, none)' --table "$tmp/table.json"
check table-with-python 4 '' 'calc-route: rejected: a table is read by DSL programs only (table_sum, ...), and this code is Python: pass the cells as variables' \
    'ans = 1' --table "$tmp/table.json"
check dsl-greater 0 "= 'yes'" '' 'greater(5829, 5735)' --lang dsl

# Text mode: nothing the program prints passes for the answer line or a note of calc-route's
# own; --json carries the bytes unchanged.
check forged-answer 0 '\= 42
\=
= 7' '' 'print("= 42")
print("=")
ans = 7'
check control-characters 0 '\x1b[2K\x0d= 43 \x7f \xc2\x85 €	é
= 7' '' 'print("\x1b[2K\r= 43 \x7f \x85 €\té")
ans = 7'
check unfinished-line 0 'partial
= 7' '' 'print("partial", end="")
ans = 7'
check forged-in-message 1 '' 'calc-route: ValueError: x\n= 42\x1b[1m (line 1, col 1)' 'raise ValueError("x\n= 42\x1b[1m")'
check escape-in-snippet 4 '' 'calc-route: rejected: 1 construct outside the in-process subset and sandboxes are off; first call:open
  call:open at 1:1: open("\x1b[2J")' "$(printf 'open("\033[2J")')" --tier none
json_field json-unescaped 'print("= 42\x1b", end="")' "d['stdout']" '"= 42\u001b"'
check raised 1 '' 'calc-route: ZeroDivisionError: division by zero (line 2, col 5)' 'x = 1
y = x / 0'
check raised-name 1 '' "calc-route: NameError: name 'revenue' is not defined (line 1, col 7)" 'ans = revenue * 2'
check syntax 4 '' "calc-route: syntax error: '(' was never closed (line 1, col 7)" 'ans = (1 +'
check raised-recursion 1 '' 'calc-route: RecursionError: maximum recursion depth exceeded (line 2, col 12)' 'def f(n):
    return f(n + 1)
ans = f(0)'
check recursion-990 0 '= 990' '' 'def f(n):
    return 0 if n == 0 else 1 + f(n - 1)
ans = f(990)'
check limit-digits 3 '' 'calc-route: LimitError: integer size limit (1048576 bits) (line 1, col 7)' 'ans = 10 ** 10 ** 10'
check limit-time 3 '' 'calc-route: LimitError: CPU time limit (0.3 s) (line 1, col 1)' 'while True: pass' --timeout 0.3
check limit-time-range 3 '' 'calc-route: LimitError: CPU time limit (0.3 s) (line 1, col 1)' 'for i in range(10**12): pass' --timeout 0.3
check rejected 4 '' 'calc-route: rejected: 2 constructs outside the in-process subset and sandboxes are off; first import:os
  import:os at 1:1: import os
  call:open at 2:1: open("/etc/passwd")' 'import os
open("/etc/passwd")' --tier none
check explain 0 'route: inprocess
why: every construct is inside the in-process subset' '' 'ans = 1 + 1' --explain
check usage-var 2 '' "calc-route: --var: want NAME=VALUE, got 'x'
Try 'calc-route --help'." '1' --var x
check usage-var-bytes 2 '' "calc-route: variables: the value of 'u' is not UTF-8
Try 'calc-route --help'." 'print(u)' --var "u=a$(printf '\377')b"
check usage-precision 2 '' "calc-route: --precision: want a whole number from 1 to 1000, got '0'
Try 'calc-route --help'." '1' --precision 0
check usage-file 2 '' 'calc-route: /nonexistent/prog.py: No such file or directory' '' /nonexistent/prog.py
check usage-directory 2 '' "calc-route: $tmp: Is a directory" '' "$tmp"
# --kvm-dir: checked when the engine opens; the kvm tier looks there once the host can run a
# guest at all (else what the host lacks comes first: installing a guest would not help).
check usage-kvm-dir 2 '' "calc-route: --kvm-dir: want a directory, got '/nonexistent-kvm'
Try 'calc-route --help'." 'ans = 1' \
    --kvm-dir /nonexistent-kvm
mkdir "$tmp/kvm"
if [ -d /sys/module/kvm_pvm ]; then
    kvm_why='/dev/kvm is kvm_pvm, a software hypervisor that cannot run a Linux guest'
elif [ ! -e /dev/kvm ] && grep -qw -e vmx -e svm /proc/cpuinfo; then
    kvm_why='no /dev/kvm on this host (the CPU has vmx/svm: load kvm_intel or kvm_amd)'
elif [ ! -e /dev/kvm ]; then
    kvm_why='no /dev/kvm on this host (the CPU has no vmx/svm: a VM without nested virtualization)'
else
    kvm_why="no vmlinuz and initrd.cpio in $tmp/kvm (the kvm directory configured): make install-kvm installs them, --kvm-dir names another directory"
fi
if [ -e /dev/kvm ] && ! { [ -r /dev/kvm ] && [ -w /dev/kvm ]; }; then
    skip kvm-dir-empty "/dev/kvm is not ours to open"
else
    check kvm-dir-empty 5 '' "calc-route: sandbox failure: kvm: $kvm_why; try --tier ns" \
        'import os' --tier kvm --kvm-dir "$tmp/kvm"
fi
check kvm-dir-auto 0 "route: ns
why: 1 construct outside the in-process subset:
  import:os at 1:1: import os
tier: ns: kvm unavailable ($kvm_why; try --tier ns)" '' 'import os' --explain --kvm-dir "$tmp/kvm"
check explain-tier 0 'route: ns
why: 1 construct outside the in-process subset:
  import:os at 1:1: import os
tier: ns: the tier option asks for it' '' 'import os' --explain --tier ns
json_field explain-tier-json 'import os' '(d["route"], d["tier_why"], d["tier_note"], d["explained"])' \
    '["ns", "ns: the tier option asks for it", null, true]' --explain --tier ns
# An explanation ran nothing: its status says so, and no sandbox figure is reported.
json_field explain-ran-nothing 'import os' '(d["status"], sorted(d["timings"]), d["value"])' \
    '["explained", ["eval_us", "parse_us", "total_us"], null]' --explain --tier ns
check kvm-dir-inprocess 0 '= 2' '' 'ans = 1 + 1' --tier kvm --kvm-dir "$tmp/kvm"

# An audit ledger that cannot be opened: SQLite's text and the reason.
check audit-no-directory 5 '' 'calc-route: audit: open /nonexistent/dir/l.db: unable to open database file (/nonexistent/dir: No such file or directory)' \
    'ans = 1' --audit /nonexistent/dir/l.db
check audit-directory 5 '' "calc-route: audit: open $tmp: unable to open database file (Is a directory)" \
    'ans = 1' --audit "$tmp"

# --strip-fences: a model's reply runs its ```python (py, untagged) blocks in order.
reply='The growth:

```python
x = (5829 - 5735) / 5735
```

As a shell line:
```sh
ans = 1
```
```py
ans = round(x * 100, 2)
```
That is 1.64%.'
check strip-fences 0 '= 1.64' '' "$reply" --strip-fences
check strip-fences-off 4 '' "calc-route: syntax error: unexpected 'growth' (line 1, col 5)" "$reply" --tier none
check strip-fences-none 0 '= 2' '' 'ans = 2' --strip-fences
# --out is made when missing (README's example), in a directory that must be there.
check out-made 0 '= 1' '' 'ans = 1' --out "$tmp/artifacts-new"
check out-is-there 0 "= 'directory'" '' "ans = '$( [ -d "$tmp/artifacts-new" ] && echo directory )'" --tier none
check out-no-parent 2 '' "calc-route: --out /nonexistent/x/y: No such file or directory (it is made when missing, in a directory that is there)
Try 'calc-route --help'." 'ans = 1' --out /nonexistent/x/y
json_field answer-vars-list '{"code": "total = 3\nans = 1\n", "answer_vars": ["total", "ans"]}' \
    'd["value"]["from"]' '"total"' --batch
json_field answer-vars-list-bad '{"code": "ans = 1", "answer_vars": ["a", 2]}' \
    'd["error"]["message"]' '"answer_vars: want up to 3 names, as a list of strings"' --batch
# --batch applies the command line's request options to every line; a line's key wins.
printf '{"id": 1, "code": "ans = x * 2"}\n{"id": 2, "code": "ans = x * 2", "vars": {"x": 5}}\n{"id": 3, "code": "ans = 1/3", "precision": 5}\n{"id": 4, "code": "t:\\n```python\\nans = x\\n```"}\n{"id": 5, "code": "```python\\nans = 1\\n```", "strip_fences": false}\n' >"$tmp/opts.jsonl"
printf '{"id": 6, "code": "table_sum(net sales, none)"}\n' >>"$tmp/opts.jsonl"
outcomes() {
    /usr/bin/python3 -c 'import json, sys
for l in sys.stdin:
    d = json.loads(l); print(d["id"], d["status"], d["value"] and d["value"]["repr"])'
}
got=$(head -n 5 "$tmp/opts.jsonl" | "$R" --batch --var x=21 --precision 10 --strip-fences | outcomes
      tail -n 1 "$tmp/opts.jsonl" | "$R" --batch --table "$tmp/table.json" | outcomes)
want='1 ok 42
2 ok 10
3 ok 0.33333
4 ok 21
5 syntax_error None
6 ok 11564.0'
if [ "$got" = "$want" ]; then pass=$((pass + 1)); else
    fail=$((fail + 1)); printf 'FAIL batch-options:\n%s\nwant\n%s\n' "$got" "$want" >&2; fi
got=$(head -n 3 "$tmp/opts.jsonl" | "$R" --batch --explain --var x=1 --tier none |
      /usr/bin/python3 -c 'import json, sys; print([(json.loads(l)["explained"], json.loads(l)["value"]) for l in sys.stdin])')
if [ "$got" = "[(True, None), (True, None), (True, None)]" ]; then pass=$((pass + 1)); else
    fail=$((fail + 1)); printf 'FAIL batch-explain: %s\n' "$got" >&2; fi
json_field strip-fences-batch '{"code": "x:\n```python\nans = 6 * 7\n```\n", "strip_fences": true}' \
    'd["value"]["repr"]' '"42"' --batch
check dsl-bad-row 4 '' "calc-route: rejected: table_sum: no table row named 'revenue' (2 rows; names match exactly, else ignoring case and spaces) (line 1, col 11)" 'table_sum(revenue, none)' --table "$tmp/table.json"

json_field json-route 'ans = 1/3' 'd["route"]' '"inprocess"'
json_field json-value '(5829 - 5735) / 5735' 'd["value"]' '{"repr": "0.01639058413251961639058413251961639", "type": "float", "fraction": "94/5735", "exact": true, "from": "last expression", "native": {"float": "94/5735"}, "native_why": null}'
json_field json-error 'x = [1, 2]
y = x[5]' 'd["error"]' '{"type": "IndexError", "message": "list index out of range", "line": 2, "col": 5}'
json_field json-status-raised '1/0' 'd["status"]' '"raised"'
json_field json-reasons 'import pandas as pd' 'd["reasons"]' '[{"code": "import:pandas", "line": 1, "col": 1, "snippet": "import pandas as pd"}]' --tier none
json_field json-keys 'ans = 1' 'sorted(d)' '["artifacts", "audit", "dropped", "error", "explained", "lang", "limit", "ops", "reasons", "route", "seed", "status", "stderr", "stderr_replaced", "stdout", "stdout_replaced", "stdout_truncated", "tier_note", "tier_why", "timings", "value"]'
# Text cut by a cap keeps whole characters, so no member is ever dropped: the output cap
# falls inside a 3-byte character (1048576 = 3 * 349525 + 1), a message inside a 2-byte one.
json_field json-cap-utf8 "print('\u20ac' * 600000)" \
    '[d["status"], d["stdout_truncated"], d["stdout_replaced"], len(d["stdout"]), d["stdout"][-1]]' \
    '["limit", true, false, 349525, "\u20ac"]'
json_field json-message-utf8 "raise ValueError('\u00e9' * 200)" \
    '[d["error"]["type"], d["error"]["message"] == "\u00e9" * 127]' '["ValueError", true]'
json_field json-limit 'ans = "a" * 10**9' 'd["limit"]["message"]' '"string length limit (16777216 characters)"'

# Batch: one result line per input line, in order, whatever each line holds.
{
    echo '{"id": 1, "code": "ans = 0.1 + 0.2"}'
    echo 'not json'
    echo '{"id": "b", "code": "ans = (1 +"}'
    echo ''
    echo '{"id": 3, "code": "ans = x * 2", "vars": {"x": 0.35}}'
    echo '{"id": 4, "code": "1/0"}'
    echo '{"id": 5, "code": "subtract(5, 3)", "lang": "dsl", "precision": 5}'
    echo '{"id": 6, "code": 5}'
    /usr/bin/python3 -c 'print("{\"id\": 7, \"code\": \"1\", \"a%s\": 1}" % ("\u00e9" * 150))'
} >"$tmp/batch.jsonl"
"$R" --batch "$tmp/batch.jsonl" >"$tmp/batch.out"
rc=$?
got=$(/usr/bin/python3 -c '
import json, sys
for line in open(sys.argv[1]):
    d = json.loads(line)
    v = d.get("value") or {}
    print(d.get("id"), d["status"], v.get("repr"))
# The message naming a long non-ASCII key is cut inside a character: still one whole error.
print(d["error"]["type"], d["error"]["message"][:31], len(d["error"]["message"]))' "$tmp/batch.out")
want='1 ok 0.3
None bad_request None
b syntax_error None
None bad_request None
3 ok 0.7
4 raised None
5 ok 2.0
6 bad_request None
7 bad_request None
UsageError request: unknown or ill-typed k 145'
if [ "$rc" = 0 ] && [ "$got" = "$want" ]; then pass=$((pass + 1)); else
    fail=$((fail + 1)); printf 'FAIL batch: exit %s\n%s\nwant\n%s\n' "$rc" "$got" "$want" >&2; fi

# The id is echoed as written, past 64 bits too, also on a line refused for another key.
printf '%s\n' '{"id": 1267650600228229401496703205376, "code": "ans = x", "vars": {"x": 2}}' \
    '{"code": "ans = 1", "vars": {"x": NaN}, "id": [7.50, "a"]}' '{"id": 0.10, "code": 5}' >"$tmp/ids.jsonl"
got=$("$R" --batch "$tmp/ids.jsonl" | cut -c1-42)
want='{"id":1267650600228229401496703205376,"rou
{"id":[7.5,"a"],"status":"bad_request","er
{"id":0.10,"status":"bad_request","error":'
if [ "$got" = "$want" ]; then pass=$((pass + 1)); else
    fail=$((fail + 1)); printf 'FAIL batch-ids:\n%s\nwant\n%s\n' "$got" "$want" >&2; fi

# A large mixed batch keeps one line out per line in, in order: valid, invalid JSON, syntax
# errors and code outside the subset (rejected here: sandboxes off to keep the test fast).
/usr/bin/python3 -c '
import json
kinds = ["{\"id\": %d, \"code\": \"ans = %d / 7\"}", "garbage %d %d", "{\"id\": %d, \"code\": \"ans = (%d\"}",
         "{\"id\": %d, \"code\": \"import os\\nans = %d\"}"]
for i in range(10000):
    print(kinds[i % 4] % (i, i))' >"$tmp/big.jsonl"
"$R" --batch --tier none "$tmp/big.jsonl" >"$tmp/big.out"
got=$(/usr/bin/python3 -c '
import json, sys
want = ["ok", "bad_request", "syntax_error", "rejected"]
n = 0
for i, line in enumerate(open(sys.argv[1])):
    d = json.loads(line)
    if d["status"] != want[i % 4] or (i % 4 != 1 and d["id"] != i):
        print("line", i, d["status"], d.get("id")); break
    n += 1
print(n)' "$tmp/big.out")
if [ "$got" = 10000 ]; then pass=$((pass + 1)); else
    fail=$((fail + 1)); echo "FAIL batch-10000: $got" >&2; fi

finish
