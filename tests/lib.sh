# tests/lib.sh: what the shell tests share, sourced from the repository's root: the counts,
# ok/bad/expect, and the closing line tests/run.sh reads.
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
