# tests/lib.sh: what the shell tests share, sourced from the repository's root: the counts,
# ok/bad/expect, skips named the one way tests/run.sh counts them, the closing line it reads,
# and starting `calc-route serve`. (tests/testlib.h is the C tests' twin; its top comment
# says what counts as one check.)
pass=0 fail=0 skip=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); printf 'FAIL %s\n' "$*" >&2; }
# expect NAME WANT GOT: exact text.
expect() {
    if [ "$2" = "$3" ]; then ok; else bad "$1:
  got  [$3]
  want [$2]"; fi
}
summary() { echo "$pass passed, $fail failed, $skip skipped"; }
# finish: the closing line, and the exit status: 1 when anything failed.
finish() {
    summary
    [ "$fail" = 0 ]
    exit
}
# skip NAME WHY: one check (or one part) this host cannot run, counted, and named on stderr as
# "SKIP NAME: WHY", one line a skip (NAME holds no colon).
skip() {
    skip=$((skip + 1))
    printf 'SKIP %s: %s\n' "$1" "$2" >&2
}
# skip_all NAME WHY: the whole test cannot run here: its one skip and its closing line.
skip_all() {
    skip "$1" "$2"
    finish
}
# unavailable WHAT WHY: a part a test needs is not to be had here: under CI (CI=true), where
# everything is installed, that is a failure; elsewhere the part is skipped, saying why.
unavailable() {
    if [ "${CI:-}" = true ]; then
        bad "$1: $2 (under CI that fails)"
    else
        skip "$1" "$2"
    fi
}

# serve_test NAME: what a test of `calc-route serve` begins with: $tmp (removed on exit), the
# servers start() made killed on exit, and without curl the test NAME unavailable (above).
serve_test() {
    tmp=$(mktemp -d)
    pids=""
    trap 'for p in $pids; do kill "$p" 2>/dev/null; done; rm -rf "$tmp"' EXIT
    if ! command -v curl >/dev/null; then
        unavailable "$1" "no curl (scripts/install-deps.sh installs it)"
        finish
    fi
}

# start NAME ARGS...: `$R ARGS... serve` on a free loopback port, its output in $tmp/NAME.out
# and .err; sets $url and $pid, and adds the pid to $pids (for the caller's trap to kill).
start() {
    name=$1
    shift
    "$R" "$@" --listen 127.0.0.1:0 serve >"$tmp/$name.out" 2>"$tmp/$name.err" &
    pid=$!
    pids="$pids $pid"
    i=0
    while ! grep -qs '^calc-route: serving on ' "$tmp/$name.out" && [ $i -lt 100 ]; do
        sleep 0.1
        i=$((i + 1))
    done
    url=$(sed -n 's/^calc-route: serving on //p' "$tmp/$name.out")
    [ -n "$url" ] || { bad "$name: did not start: $(cat "$tmp/$name.err")"; return 1; }
}
