#!/bin/sh
# The dependency rule of docs/DESIGN.md: a module includes only its own headers and those of
# the modules upstream of it. The order is read from DESIGN.md's ```layers block (one home
# for the fact): a line is a layer, upstream first; modules on one line are peers and include
# none of each other. Also checks that every folder holding library sources is in that block
# and in DESIGN.md's Layout table, that no module includes another's private header (one
# whose name ends in _int.h), and that the checker itself catches a violation.
cd "$(dirname "$0")/.." || exit 1
. tests/lib.sh

# check ROOT DESIGN: prints one line per violation, "file:line: ..."; exit 0 either way.
check() {
    root=$1 design=$2
    awk '
        FNR == NR {
            if ($0 == "```layers") { in_block = 1; next }
            if (in_block && $0 ~ /^```/) { in_block = 0; next }
            if (in_block) { n++; for (i = 1; i <= NF; i++) { sub(/\/$/, "", $i); layer[$i] = n } }
            next
        }
        FNR == 1 {
            file = FILENAME; sub("^" root "/", "", file)
            own = file; sub(/\/.*/, "", own)
            dir = file; sub(/\/[^\/]*$/, "", dir)
            if (!(own in layer)) print file ":1: module " own "/ is not in the layers block"
        }
        /^[ \t]*#[ \t]*include[ \t]*"/ {
            t = $0; sub(/^[^"]*"/, "", t); sub(/".*/, "", t)
            if (t ~ /\//) { mod = t; sub(/\/.*/, "", mod) }
            else if (t == "calcroute.h") mod = "include"
            else mod = own   # a sibling header: the file'"'"'s own folder
            if (mod == own) next
            if (t ~ /_int\.h$/) { print file ":" FNR ": includes " t ", private to " mod "/"; next }
            if (!(mod in layer)) { print file ":" FNR ": includes " t " of " mod "/, which is in no layer"; next }
            if (layer[mod] > layer[own])
                print file ":" FNR ": includes " t ": " mod "/ is downstream of " own "/"
            else if (layer[mod] == layer[own])
                print file ":" FNR ": includes " t ": " mod "/ and " own "/ are peers"
        }
    ' root="$root" "$design" $(cd "$root" && for m in $(awk '
            $0 == "```layers" { b = 1; next } b && /^```/ { b = 0 } b { print }' "$design"); do
                [ -d "$m" ] && find "$m" \( -name '*.c' -o -name '*.h' -o -name '*.def' \) | sed "s|^|$root/|"
            done)
}

# The checker on a small tree with one violation of each kind, and one clean include.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/common" "$tmp/parser" "$tmp/dsl" "$tmp/router"
printf '```layers\ncommon\nparser dsl\nrouter\n```\n' >"$tmp/D.md"
printf '#include "common/common.h"\n#include "parser/x.h"\n' >"$tmp/router/ok.c"
printf '#include "router/router.h"\n' >"$tmp/common/up.c"
printf '/* peer */\n#include "dsl/dsl.h"\n' >"$tmp/parser/peer.c"
printf '#include "parser/parser_int.h"\n#include "router/router_int.h"\n' >"$tmp/router/private.c"
got=$(check "$tmp" "$tmp/D.md")
want='common/up.c:1: includes router/router.h: router/ is downstream of common/
parser/peer.c:2: includes dsl/dsl.h: dsl/ and parser/ are peers
router/private.c:1: includes parser/parser_int.h, private to parser/'
if [ "$got" = "$want" ]; then ok; else bad "checker self-test: got
$got"; fi

# The tree itself.
got=$(check "$PWD" docs/DESIGN.md)
if [ -z "$got" ]; then ok; else bad "dependency rule:"; echo "$got"; fi

# Every folder with library sources is a layer and a row of the Layout table.
modules=$(awk '$0 == "```layers" { b = 1; next } b && /^```/ { b = 0 } b { print }' docs/DESIGN.md |
    tr ' ' '\n' | sed 's|/$||' | grep .)
[ -n "$modules" ] && ok || bad "docs/DESIGN.md has no layers block"
for d in $(sed -n 's/^MODULE_DIRS := //p' Makefile) include cli; do
    top=${d%%/*}
    if echo "$modules" | grep -qx "$top"; then ok; else bad "$d/ (Makefile) is in no layer"; fi
    if grep -q "^| $top/ |" docs/DESIGN.md; then ok; else bad "$top/ has no row in DESIGN.md's Layout table"; fi
done
for m in $modules; do
    if [ -d "$m" ]; then ok; else bad "layer $m/ does not exist"; fi
done

finish
