#!/bin/sh
# The dependency rule of docs/DESIGN.md: a module includes only its own headers and those of
# the modules upstream of it. The order is read from DESIGN.md's ```layers block (one home
# for the fact): a line is a layer, upstream first; modules on one line are peers and include
# none of each other. Also checks that every folder holding library sources is in that block
# and in DESIGN.md's Layout table, that no module includes another's private header (one
# whose name ends in _int.h), and that the checker itself catches a violation.
# A module may have floors of its own, read from the ```floors block (a line is a floor, the
# lowest first; a folder is named whole, `evaluator/value/`): a file includes headers of its
# own floor and of the floors below, never of a floor above nor of a peer on the same line,
# and never another floor's _int.h; every folder of such a module is on a floor.
cd "$(dirname "$0")/.." || exit 1
. tests/lib.sh

# check ROOT DESIGN: prints one line per violation, "file:line: ..."; exit 0 either way.
check() {
    root=$1 design=$2
    awk '
        function floor_of(d) { return d in floor ? d : "" }   # every folder is named
        FNR == NR {
            if ($0 == "```layers") { in_block = 1; next }
            if ($0 == "```floors") { in_floors = 1; next }
            if ((in_block || in_floors) && $0 ~ /^```/) { in_block = in_floors = 0; next }
            if (in_block) { n++; for (i = 1; i <= NF; i++) { sub(/\/$/, "", $i); layer[$i] = n } }
            if (in_floors) {
                nf++
                for (i = 1; i <= NF; i++) {
                    sub(/\/$/, "", $i); floor[$i] = nf
                    m = $i; sub(/\/.*/, "", m); floored[m] = 1
                }
            }
            next
        }
        FNR == 1 {
            file = FILENAME; sub("^" root "/", "", file)
            own = file; sub(/\/.*/, "", own)
            dir = file; sub(/\/[^\/]*$/, "", dir)
            if (!(own in layer)) print file ":1: module " own "/ is not in the layers block"
            fl = own in floored ? floor_of(dir) : ""
            if (own in floored && fl == "") print file ":1: " dir "/ is on no floor"
        }
        /^[ \t]*#[ \t]*include[ \t]*"/ {
            t = $0; sub(/^[^"]*"/, "", t); sub(/".*/, "", t)
            if (t ~ /\//) { mod = t; sub(/\/.*/, "", mod) }
            else if (t == "calcroute.h") mod = "include"
            else mod = own   # a sibling header: the file'"'"'s own folder
            if (mod == own && fl != "") {
                td = t ~ /\// ? t : dir "/" t; sub(/\/[^\/]*$/, "", td)
                tf = floor_of(td)
                if (td != dir && t ~ /_int\.h$/)
                    print file ":" FNR ": includes " t ", private to " td "/"
                else if (tf != "" && floor[tf] > floor[fl])
                    print file ":" FNR ": includes " t ": " tf "/ is a floor above " fl "/"
                else if (tf != "" && tf != fl && floor[tf] == floor[fl])
                    print file ":" FNR ": includes " t ": " tf "/ and " fl "/ are peer floors"
            }
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
mkdir -p "$tmp/common" "$tmp/parser" "$tmp/dsl" "$tmp/router/lo" "$tmp/router/mid" \
    "$tmp/router/side" "$tmp/router/hi" "$tmp/router/stray"
printf '```layers\ncommon\nparser dsl\nrouter\n```\n' >"$tmp/D.md"
printf '```floors\nrouter/\nrouter/lo/\nrouter/mid/ router/side/\nrouter/hi/\n```\n' >>"$tmp/D.md"
printf '#include "common/common.h"\n#include "parser/x.h"\n' >"$tmp/router/ok.c"
printf '#include "router/router.h"\n' >"$tmp/common/up.c"
printf '/* peer */\n#include "dsl/dsl.h"\n' >"$tmp/parser/peer.c"
printf '#include "parser/parser_int.h"\n#include "router/router_int.h"\n' >"$tmp/router/private.c"
printf '#include "router/lo/lo.h"\n#include "router/mid/mid.h"\n#include "router/router.h"\n' \
    >"$tmp/router/hi/ok.c"
printf '#include "lo_int.h"\n#include "router/hi/hi.h"\n' >"$tmp/router/lo/up.c"
printf '#include "router/side/side.h"\n#include "router/lo/lo_int.h"\n' >"$tmp/router/mid/m.c"
printf '/* on no floor */\n' >"$tmp/router/stray/s.c"
got=$(check "$tmp" "$tmp/D.md" | sort)
want='common/up.c:1: includes router/router.h: router/ is downstream of common/
parser/peer.c:2: includes dsl/dsl.h: dsl/ and parser/ are peers
router/lo/up.c:2: includes router/hi/hi.h: router/hi/ is a floor above router/lo/
router/mid/m.c:1: includes router/side/side.h: router/side/ and router/mid/ are peer floors
router/mid/m.c:2: includes router/lo/lo_int.h, private to router/lo/
router/private.c:1: includes parser/parser_int.h, private to parser/
router/stray/s.c:1: router/stray/ is on no floor'
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
