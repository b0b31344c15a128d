# tests/lib.sh: what the shell tests share, sourced from the repository's root: the counts,
# ok/bad/expect, the closing line tests/run.sh reads, and starting `calc-route serve`.
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
# unavailable WHAT WHY: a part a test needs is not to be had here: under CI (CI=true), where
# everything is installed, that is a failure; elsewhere the part is skipped, saying why.
unavailable() {
    if [ "${CI:-}" = true ]; then
        bad "$1: $2 (under CI that fails)"
    else
        echo "SKIP $1: $2" >&2
        skip=$((skip + 1))
    fi
}

# serve_test NAME: what a test of `calc-route serve` begins with: $tmp (removed on exit), the
# servers start() made killed on exit, and the test NAME skipped, saying why, without curl.
serve_test() {
    tmp=$(mktemp -d)
    pids=""
    trap 'for p in $pids; do kill "$p" 2>/dev/null; done; rm -rf "$tmp"' EXIT
    if ! command -v curl >/dev/null; then
        echo "SKIP $1: no curl (scripts/install-deps.sh installs it)" >&2
        echo "0 passed, 0 failed, 1 skipped"
        exit 0
    fi
}

# start NAME ARGS...: `$R ARGS... serve` on a free loopback port, its output in $tmp/NAME.out
# and .err; sets $url and $pid, and adds the pid to $pids (for the caller's trap to kill).
# Waits for the line that says it serves while the process lives, 60 s at most (a loaded
# machine; the nested test host, tests/kvm-host/, emulates every instruction).
start() {
    name=$1
    shift
    "$R" "$@" --listen 127.0.0.1:0 serve >"$tmp/$name.out" 2>"$tmp/$name.err" &
    pid=$!
    pids="$pids $pid"
    i=0
    while ! grep -qs '^calc-route: serving on ' "$tmp/$name.out" && [ $i -lt 600 ] &&
        kill -0 "$pid" 2>/dev/null; do
        sleep 0.1
        i=$((i + 1))
    done
    url=$(sed -n 's/^calc-route: serving on //p' "$tmp/$name.out")
    [ -n "$url" ] || { bad "$name: did not start: $(cat "$tmp/$name.err")"; return 1; }
}
