#!/bin/sh
# calc-audit's transparency-log formats against an implementation we did not write: Go's
# golang.org/x/mod/sumdb/note and sumdb/tlog (tests/interop/main.go, built offline from
# Debian's golang-go and golang-golang-x-mod-dev in GOPATH mode). Our way: note.Open verifies
# our checkpoints with our key as a vkey, tlog.CheckRecord our bundles' inclusion paths with
# each record's canonical encoding, tlog.CheckTree our consistency proofs, and
# tlog.TileHashReader rebuilds the tree from our tiles alone (every entry bundle's entry
# hashed to its leaf); a changed record or another key
# fails there. Theirs: a log made with x/mod (its key, notes, ProveRecord, ProveTree) is
# verified by `calc-audit verify-proof`, bundles with --policy and --entry, and a changed
# entry is refused.
. tests/lib.sh
B=$(cd "${BUILD:-build}" && pwd)
A="$B/calc-audit"
R="$B/calc-route"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
XMOD=/usr/share/gocode/src/golang.org/x/mod/sumdb
if ! command -v go >/dev/null || [ ! -d "$XMOD/tlog" ]; then
    unavailable "the Go interop test" "no go or no $XMOD (scripts/install-deps.sh installs golang-go and golang-golang-x-mod-dev)"
    summary
    [ "$fail" = 0 ]
    exit
fi
# GOPATH mode against Debian's sources: no module download, no network, no go.mod
if ! (cd tests/interop && GO111MODULE=off GOPATH=/usr/share/gocode GOFLAGS= GOPROXY=off \
      GOCACHE="$tmp/gocache" CGO_ENABLED=0 go build -o "$tmp/interop" .) 2>"$tmp/build.err"; then
    bad "go build tests/interop: $(cat "$tmp/build.err")"
    summary
    exit 1
fi
I="$tmp/interop"
cd "$tmp" || exit 1
ORIGIN=example.com/interop
"$A" keygen k >/dev/null && "$A" keygen other >/dev/null
"$A" vkey k.pub --origin $ORIGIN >k.vkey
"$A" vkey other.pub --origin $ORIGIN >other.vkey
N=9
i=1
while [ $i -le $N ]; do
    printf 'x = %d * 11\nprint(x)\n' $i >p.py
    "$R" --audit led.db p.py >/dev/null 2>&1
    "$A" checkpoint led.db --key k --origin $ORIGIN >c$i.note 2>/dev/null
    i=$((i + 1))
done

# our checkpoints, read by note.Open
i=1
while [ $i -le $N ]; do
    expect "note.Open of checkpoint $i" "ok note $ORIGIN $i $(sed -n 3p c$i.note)" "$("$I" note k.vkey c$i.note 2>&1)"
    i=$((i + 1))
done
got=$("$I" note other.vkey c$N.note 2>&1)
expect "note.Open with another key" "interop: note.Open: note has no verifiable signatures" "$got"

# our bundles' paths, checked by tlog.CheckRecord with the record's own encoding
seq=1
while [ $seq -le $N ]; do
    "$A" prove led.db $seq --format tlog-proof --checkpoint c$N.note >b$seq
    "$A" prove led.db $seq | sed -n 4p | base64 -d >rec$seq
    expect "CheckRecord of seq $seq" "ok inclusion $((seq - 1)) in $N" "$("$I" inclusion k.vkey b$seq rec$seq 2>&1)"
    seq=$((seq + 1))
done
got=$("$I" inclusion k.vkey b3 rec4 2>&1)
expect "CheckRecord of another record" "interop: CheckRecord: invalid transparency proof" "$got"

# our consistency proofs, checked by tlog.CheckTree
m=1
while [ $m -lt $N ]; do
    "$A" prove led.db --consistency $m $N >cons$m
    expect "CheckTree $m -> $N" "ok consistency $m -> $N" "$("$I" consistency k.vkey c$m.note c$N.note cons$m 2>&1)"
    m=$((m + 1))
done
got=$("$I" consistency k.vkey c4.note c$N.note cons5 2>&1)
expect "CheckTree against the wrong old checkpoint" "interop: consistency: the proof links 5 and 9" "$got"

# our tiles (levels 0 and 1, partial tiles, entry bundles), followed by tlog.TileHashReader
i=1
while [ $i -le 600 ]; do
    printf '{"code": "x = %d * 13"}\n' $i
    i=$((i + 1))
done | "$R" --batch --pool 0 --audit big.db >/dev/null 2>&1
"$A" tiles big.db --out tiles --key k --origin $ORIGIN >/dev/null
expect "TileHashReader over our tiles" \
    "ok tiles $ORIGIN 600 entries, every leaf and the root proven from the tiles alone" \
    "$("$I" tiles k.vkey tiles 2>&1)"
cp -r tiles bad1
printf 'X' | dd of=bad1/tile/1/000.p/2 bs=1 seek=40 conv=notrunc 2>/dev/null
expect "TileHashReader over a changed level-1 tile" \
    "interop: tiles: the tree hash from the tiles is not the checkpoint's: downloaded inconsistent tile" \
    "$("$I" tiles k.vkey bad1 2>&1)"
# x/mod 0.7.0's TileHashReader authenticates the tiles it fetched past the first len(stx)
# (one a subtree of the tree hash; here 4 subtrees in 2 tiles), so it hands out leaf 257 from
# a changed full tile 0/001 unchecked: the entry bundle's hash check is what catches it
cp -r tiles bad0
printf 'X' | dd of=bad0/tile/0/001 bs=1 seek=40 conv=notrunc 2>/dev/null
expect "a changed level-0 tile" "interop: tiles: entry 257 does not hash to its leaf: <nil>" \
    "$("$I" tiles k.vkey bad0 2>&1)"

# their log, verified by calc-audit
mkdir go
expect "x/mod makes a log" "ok log example.org/go-log 13 entries" "$("$I" log go 13 2>&1)"
i=0
while [ $i -lt 13 ]; do
    leaf=$( (printf '\000'; cat go/entry.$i) | sha256sum | cut -d' ' -f1)
    expect "calc-audit verifies x/mod's bundle $i" \
        "ok: entry $i (leaf hash $leaf) is in the tree of 13 entries of example.org/go-log; no witness cosigned (quorum none)" \
        "$("$A" verify-proof go/bundle.$i --policy go/policy --entry go/entry.$i 2>&1)"
    i=$((i + 1))
done
expect "x/mod's bundle with another entry" \
    "FAIL: bundle: entry 5 is not in the signed tree (the path does not lead to its root)" \
    "$("$A" verify-proof go/bundle.5 --policy go/policy --entry go/entry.6 2>&1)"
expect "x/mod's bundle without its entry" \
    "FAIL: bundle: it names no entry (no calcroute extra data): give the entry" \
    "$("$A" verify-proof go/bundle.5 --policy go/policy 2>&1)"
expect "calc-audit verifies x/mod's consistency proof" \
    "ok: the tree of 13 records extends the tree of 6 records (example.org/go-log)" \
    "$("$A" verify-proof go/consistency.proof --checkpoint go/checkpoint --old-checkpoint go/old.note --pubkey go/log.pub 2>&1)"
expect "x/mod's checkpoint against our policy of another key" \
    "FAIL: checkpoint: origin example.org/go-log is not a log the policy names" \
    "$(printf 'log %s\nquorum none\n' "$(cat k.vkey)" >p2 && "$A" verify-proof go/bundle.5 --policy p2 --entry go/entry.5 2>&1)"

summary
[ "$fail" = 0 ]
