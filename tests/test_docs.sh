#!/bin/sh
# Every long option a tool's parser accepts is in its --help and in its man page: the option
# tables in the sources are the one list, read here, so an option added without its words
# fails this test.
cd "$(dirname "$0")/.." || exit 1
B=${BUILD:-build}
pass=0 fail=0
# The long names of the `struct option` table in C source FILE.
options() {
    sed -n '/struct option/,/{ *\(0\|NULL\), *0/p' "$1" | grep -oE '\{ *"[a-z][a-z-]*"' |
        sed -E 's/\{ *"//; s/"$//'
}
# The man page's text without its font escapes (\fB, \-).
plain() { sed -E 's/\\f[BIRP]//g; s/\\//g' "$1"; }
for tool in calc-route calc-audit; do
    names=$(options cli/$tool.c)
    if [ -z "$names" ]; then
        fail=$((fail + 1)); echo "FAIL cli/$tool.c: no option table found" >&2; continue
    fi
    help=$("$B/$tool" --help 2>&1)
    man=$(plain docs/$tool.1)
    for o in $names; do
        for where in help man; do
            eval "text=\$$where"
            if printf '%s\n' "$text" | grep -qE -- "--$o([^a-z-]|$)"; then pass=$((pass + 1)); else
                fail=$((fail + 1)); echo "FAIL $tool: --$o is not in its $where" >&2
            fi
        done
    done
done
echo "$pass passed, $fail failed, 0 skipped"
[ "$fail" = 0 ]
