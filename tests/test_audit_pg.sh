#!/bin/sh
# The ledger on PostgreSQL: a real server (tests/pg-server.sh: initdb into a temporary
# directory, an unprivileged owner, a Unix socket only), the same commands as on SQLite:
# appends from many processes, SIGKILL during appends (test_audit_crash on a PostgreSQL
# ledger), verify naming a tampered row by seq and a truncation after a checkpoint, verify cut
# into ranges read through their own connections (the same reports as one pass), show,
# export, head, checkpoint, inclusion and consistency proofs checked offline, replay (a
# changed data file named), the roles an operator creates, a hostile search_path (the
# built-ins shadowed), and refusals (not a ledger, no server). CR_TEST_PG: the base URI of a
# server that is already running (CI starts one).
. tests/lib.sh
B=${BUILD:-build}
R="$B/calc-route"
A="$B/calc-audit"
PY=/usr/bin/python3
tmp=$(mktemp -d)
chmod 755 "$tmp"
srv="$tmp/pg"
cleanup() {
    if [ -n "${CR_TEST_PG:-}" ]; then   # a shared server keeps running: leave it as found
        for k in $(seq 1 "$(cat "$tmp/n" 2>/dev/null || echo 0)"); do
            dropdb -h "$host" -U "$user" --if-exists "crtest_$$_$k" 2>/dev/null
        done
        for r in crw_$$ crr_$$ crowner_$$ crl_$$ crevil_$$; do
            psql -X -q -h "$host" -U "$user" -d postgres -c "DROP ROLE IF EXISTS $r" 2>/dev/null
        done
    else
        sh tests/pg-server.sh stop "$srv"
    fi
    rm -rf "$tmp"
}
trap cleanup EXIT

if [ -n "${CR_TEST_PG:-}" ]; then
    base=$CR_TEST_PG
else
    base=$(sh tests/pg-server.sh start "$srv" 2>"$tmp/err")
    st=$?
    if [ "$st" != 0 ]; then
        unavailable test_audit_pg \
            "no PostgreSQL server could start here (exit $st): $(head -c 300 "$tmp/err")"
        finish
    fi
fi
# base is postgresql:///?host=DIR&user=NAME: a database NAME is postgresql:///NAME?host=...
host=$(echo "$base" | sed -n 's/.*[?&]host=\([^&]*\).*/\1/p')
user=$(echo "$base" | sed -n 's/.*[?&]user=\([^&]*\).*/\1/p')
uri() { echo "postgresql:///$1?host=$host&user=${2:-$user}"; }
# A fresh database for a fresh ledger (called in $(...): the count lives in a file).
echo 0 >"$tmp/n"
newdb() {
    k=$(($(cat "$tmp/n") + 1))
    echo "$k" >"$tmp/n"
    createdb -h "$host" -U "$user" "crtest_$$_$k" && uri "crtest_$$_$k"
}
dbname() { x=${1#postgresql:///}; echo "${x%%\?*}"; }
sql() { psql -X -q -A -t -h "$host" -U "$user" -d "$1" -v ON_ERROR_STOP=1 -c "$2"; }

# ---- appends from several processes -------------------------------------------------------
L=$(newdb)
db=$(dbname "$L")
printf 'ans = 6 * 7\n' >"$tmp/p.py"
expect first "= 42 0" "$("$R" --audit "$L" "$tmp/p.py" 2>&1 | tr '\n' ' ')$?"
expect second "= 42 0" "$("$R" --audit "$L" "$tmp/p.py" 2>&1 | tr '\n' ' ')$?"
for w in 1 2 3 4; do
    (for i in $(seq 1 12); do "$R" --audit "$L" "$tmp/p.py" >/dev/null || echo "append failed" >&2; done) &
done
wait
expect concurrent-head "50" "$("$A" head "$L" | cut -d' ' -f1)"
expect concurrent-verify "0 ok: 50 records, head seq 50" \
    "$("$A" verify "$L" | head -n 1 | cut -d' ' -f1-6 | sed 's/^/0 /')"
expect seqs "1 50 50" "$(sql "$db" "SELECT min(seq), max(seq), count(DISTINCT seq) FROM records" | tr '|' ' ')"
# The chain in the rows: each prev_hash is the hash before it.
expect linked "0" "$(sql "$db" "SELECT count(*) FROM records a JOIN records b ON b.seq = a.seq + 1 WHERE b.prev_hash <> a.hash")"

# ---- show, export, head, a missing record -------------------------------------------------
got=$("$A" show "$L" 3 | "$PY" -c 'import json,sys; r=json.load(sys.stdin); print(r["seq"], r["code"].strip(), r["value_repr"], r["route"])')
expect show "3 ans = 6 * 7 42 inprocess" "$got"
expect export "50 1 50" "$("$A" export "$L" | "$PY" -c '
import json, sys
s = [json.loads(l)["seq"] for l in sys.stdin]
print(len(s), s[0], s[-1])')"
expect export-range "3 4 5" "$("$A" export "$L" --from 3 --to 5 | "$PY" -c '
import json, sys; print(*[json.loads(l)["seq"] for l in sys.stdin])')"
out=$("$A" show "$L" 51 2>&1)
expect missing "1 calc-audit: audit: no record with seq 51" "$? $out"

# ---- SIGKILL during appends: no acknowledged record lost ----------------------------------
if "$B/tests/test_audit_crash" "$(newdb)" >"$tmp/crash.out" 2>"$tmp/crash.err"; then ok; else
    bad "test_audit_crash on PostgreSQL: $(tail -n 5 "$tmp/crash.out" "$tmp/crash.err")"
fi

# ---- checkpoints and proofs ---------------------------------------------------------------
"$A" keygen "$tmp/k" >/dev/null
"$A" checkpoint "$L" --key "$tmp/k" --origin example.com/ledger >"$tmp/note50" 2>/dev/null
expect note "example.com/ledger 50" "$(head -n 2 "$tmp/note50" | tr '\n' ' ' | sed 's/ $//')"
"$A" prove "$L" 17 >"$tmp/proof17"
out=$("$A" verify-proof "$tmp/proof17" --checkpoint "$tmp/note50" --pubkey "$tmp/k.pub")
expect inclusion "0 ok: record seq 17" "$? $(echo "$out" | cut -d' ' -f1-4)"
"$R" --audit "$L" "$tmp/p.py" >/dev/null
"$A" checkpoint "$L" --key "$tmp/k" --origin example.com/ledger >"$tmp/note51" 2>/dev/null
"$A" prove "$L" --consistency 50 51 >"$tmp/cons"
out=$("$A" verify-proof "$tmp/cons" --checkpoint "$tmp/note51" --old-checkpoint "$tmp/note50" --pubkey "$tmp/k.pub")
expect consistency "0" "$?"
# A forged proof: one hash of the path replaced.
"$PY" - "$tmp/proof17" "$tmp/forged" <<'EOF'
import sys
lines = open(sys.argv[1]).read().split("\n")
lines[-2] = "A" * 43 + "="
open(sys.argv[2], "w").write("\n".join(lines))
EOF
"$A" verify-proof "$tmp/forged" --checkpoint "$tmp/note50" --pubkey "$tmp/k.pub" >/dev/null 2>&1
expect forged "1" "$?"
# The proof's hashes are those an independent RFC 6962 computation gives from the records.
"$A" export "$L" --to 50 >"$tmp/all.jsonl"
expect root-independent "ok" "$("$PY" - "$tmp/note50" "$L" "$A" <<'EOF'
import base64, hashlib, subprocess, sys
note, ledger, audit = sys.argv[1:4]
root = base64.b64decode(open(note).read().split("\n")[2])
# leaf data: the canonical encoding, which `prove` carries; take it for every record
leaves = []
for seq in range(1, 51):
    p = subprocess.run([audit, "prove", ledger, str(seq), "--size", "50"], capture_output=True, text=True).stdout.split("\n")
    enc = base64.b64decode(p[3])
    leaves.append(hashlib.sha256(b"\0" + enc).digest())
def mth(l):
    if len(l) == 1: return l[0]
    k = 1
    while k * 2 < len(l): k *= 2
    return hashlib.sha256(b"\1" + mth(l[:k]) + mth(l[k:])).digest()
print("ok" if mth(leaves) == root else "root differs")
EOF
)"
expect verify-key "0 ok: 51 records, head seq 51" "$("$A" verify "$L" --pubkey "$tmp/k.pub" | head -n 1 | cut -d' ' -f1-6 | sed 's/^/0 /')"

# ---- roles: the writer may append, never change; the reader only reads ---------------------
sql "$db" "CREATE ROLE crw_$$ LOGIN; CREATE ROLE crr_$$ LOGIN;
  GRANT SELECT, INSERT ON records, checkpoints, schema_version TO crw_$$;
  GRANT SELECT ON records, checkpoints, schema_version TO crr_$$"
W=$(uri "$db" "crw_$$")
expect writer-append "= 42 0" "$("$R" --audit "$W" "$tmp/p.py" 2>&1 | tr '\n' ' ')$?"
"$A" checkpoint "$W" --key "$tmp/k" >/dev/null 2>&1
expect writer-checkpoint "0" "$?"
out=$(psql -X -q -h "$host" -U "crw_$$" -d "$db" -c "UPDATE records SET route = 'x' WHERE seq = 1" 2>&1)
expect writer-update "ERROR:  permission denied for table records" "$out"
out=$(sql "$db" "DELETE FROM records WHERE seq = 1" 2>&1)
expect owner-delete "ERROR:  audit ledger is append-only" "$(echo "$out" | head -n 1)"
expect reader-verify "0 ok: 52 records, head seq 52" "$("$A" verify "$(uri "$db" "crr_$$")" | head -n 1 | cut -d' ' -f1-6 | sed 's/^/0 /')"
out=$("$R" --audit "$(uri "$db" "crr_$$")" "$tmp/p.py" 2>&1)
expect reader-append "5 calc-route: internal failure: audit ledger failure: audit: insert record: permission denied for table records" "$? $out"

expect replay "ok: 52 replayed, 52 identical, 0 differ, 0 sandboxed differ (not failures), 0 skipped 0" \
    "$("$A" replay "$L" 2>&1 | tr -d '\n'; echo " $?")"

# ---- a ledger in its own schema, made by the role that owns it -------------------------------
S=$(newdb)
sdb=$(dbname "$S")
sql "$sdb" "CREATE ROLE crowner_$$ LOGIN; CREATE SCHEMA ledger AUTHORIZATION crowner_$$"
SO="$(uri "$sdb" "crowner_$$")&options=-csearch_path%3Dledger"
expect init "ok: a ledger of 0 records 0" "$("$A" init "$SO" 2>&1) $?"
expect init-again "ok: a ledger of 0 records 0" "$("$A" init "$SO" 2>&1) $?"
sql "$sdb" "GRANT USAGE ON SCHEMA ledger TO crw_$$;
  GRANT SELECT, INSERT ON ledger.records, ledger.checkpoints, ledger.schema_version TO crw_$$"
SW="$(uri "$sdb" "crw_$$")&options=-csearch_path%3Dledger"
expect schema-append "= 42 0" "$("$R" --audit "$SW" "$tmp/p.py" 2>&1 | tr '\n' ' ')$?"
expect schema-tables "ledger.checkpoints ledger.records ledger.schema_version" \
    "$(sql "$sdb" "SELECT string_agg(schemaname || '.' || tablename, ' ' ORDER BY tablename) FROM pg_tables WHERE tableowner = 'crowner_$$'")"
expect schema-verify "ok: 1 records, head seq 1" "$("$A" verify "$SW" | head -n 1 | cut -d' ' -f1-6)"

# ---- tampering: a changed row named by seq; a truncation after a checkpoint ----------------
sql "$db" "SET session_replication_role = replica; UPDATE records SET stdout = convert_to('43', 'UTF8') WHERE seq = 7"
out=$("$A" verify "$L" 2>&1)
expect tampered "1 FAIL seq 7: hash mismatch:" "$? $(echo "$out" | head -n 1 | cut -d' ' -f1-5)"
T=$(newdb)
tdb=$(dbname "$T")
for i in 1 2 3 4; do "$R" --audit "$T" "$tmp/p.py" >/dev/null; done
"$A" checkpoint "$T" --key "$tmp/k" >/dev/null 2>&1
sql "$tdb" "SET session_replication_role = replica; DELETE FROM records WHERE seq = 4"
out=$("$A" verify "$T" 2>&1)
expect truncated "1 FAIL seq 4: checkpoint 1 signs seq 4 but the chain ends at seq 3 (truncated)" "$? $(echo "$out" | head -n 1)"
# A writer refuses to chain onto a head that does not verify.
sql "$tdb" "SET session_replication_role = replica; UPDATE records SET code = convert_to('x', 'UTF8') WHERE seq = 3"
out=$("$R" --audit "$T" "$tmp/p.py" 2>&1)
expect bad-head "2 calc-route: audit: the ledger's last record (seq 3) does not verify: nothing is appended to it (calc-audit verify names what is wrong)" "$? $out"

# ---- verify cut into ranges, each read through its own connection -------------------------
# test_audit --verify-cut: the report of one pass, and the checks that the ledger cut into 2,
# 3, 4 and 7 ranges gave the same, field for field. Rows past the cursor's batch bound (64 KiB)
# lie inside a range, first in one and last in the ledger.
V=$(newdb)
vdb=$(dbname "$V")
for i in $(seq 1 40); do
    case $i in
    13 | 21 | 40) echo "{\"id\":$i,\"code\":\"print('x' * 100000)\"}" ;;
    *) echo "{\"id\":$i,\"code\":\"$i * 2\"}" ;;
    esac
done | "$R" --batch --audit "$V" >/dev/null
"$A" checkpoint "$V" --key "$tmp/k" >/dev/null 2>&1
vcut() { "$B/tests/test_audit" --verify-cut "$@" 2>>"$tmp/cut.err" | paste -sd' ' -; }
all="1 passed, 0 failed, 0 skipped"   # one check: every cut's report is the single pass's
expect ranges "ok: 40 records, head seq 40, 1 checkpoints $all" "$(vcut "$V" "$tmp/k.pub")"
expect ranges-big-row "100001" "$("$A" show "$V" 21 | "$PY" -c 'import json,sys; print(len(json.load(sys.stdin)["stdout"]))')"
# A role allowed one connection: every range falls back to the caller's.
sql "$vdb" "CREATE ROLE crl_$$ LOGIN CONNECTION LIMIT 1; GRANT SELECT ON records, checkpoints, schema_version TO crl_$$"
expect ranges-one-connection "ok: 40 records, head seq 40, 1 checkpoints $all" "$(vcut "$(uri "$vdb" "crl_$$")" "$tmp/k.pub")"
# Tampered in a later range (the 2nd of 2, the 3rd of 3 and of 4, the 6th of 7), a large row,
# a gap where a large row was, a stored hash too large for a batch: the first is named, by
# calc-audit verify's words.
tamper() {
    sql "$vdb" "SET session_replication_role = replica; $2"
    first=$("$A" verify "$V" 2>&1 | head -n 1)
    expect "ranges-$1" "$3" "$(echo "$first" | cut -c1-${#3})"
    expect "ranges-$1-cut" "$first $all" "$(vcut "$V")"
}
tamper 30 "UPDATE records SET stdout = convert_to('43', 'UTF8') WHERE seq = 30" "FAIL seq 30: hash mismatch: stored "
tamper 21 "UPDATE records SET stdout = stdout || '\\x79'::bytea WHERE seq = 21" "FAIL seq 21: hash mismatch: stored "
tamper 13 "DELETE FROM records WHERE seq = 13" "FAIL seq 13: gap: seq 13 is missing (next is seq 14)"
tamper 5 "UPDATE records SET hash = decode(repeat('ab', 70000), 'hex') WHERE seq = 5" "FAIL seq 5: hash mismatch: stored abababababababab..., computed "

# ---- a hostile search_path: the built-ins the store uses, shadowed ---------------------------
# The role that owns the database puts a schema of its own first on its search_path, pg_catalog
# after it, holding a function, an aggregate, an operator, a type or a catalog table by the name
# of each built-in the store's SQL uses, every one lying (octet_length() says 300 MB, which
# made verify call every row too large; encode() gives a hash of zeros; `=` is false; int8 is
# an int4; pg_class has no rows ...). The store qualifies each name (pg_catalog., the ledger's
# schema for its tables), so through that role appends chain, and verify (in ranges too),
# head, replay, export, show and prove print what they print through a clean connection, byte
# for byte; a fresh ledger made through that role (in the shadowing schema, the first on its
# path) works the same.
cat >"$tmp/shadow.sql" <<'EOF'
CREATE SCHEMA evil;
CREATE FUNCTION evil.octet_length(bytea) RETURNS integer LANGUAGE sql AS 'SELECT 300000000';
CREATE FUNCTION evil.encode(bytea, text) RETURNS text LANGUAGE sql AS $$SELECT pg_catalog.repeat('0', 64)$$;
CREATE FUNCTION evil.format_type(oid, integer) RETURNS text LANGUAGE sql AS $$SELECT 'text'$$;
CREATE FUNCTION evil.to_regclass(text) RETURNS regclass LANGUAGE sql AS 'SELECT NULL::regclass';
CREATE FUNCTION evil.current_schema() RETURNS name LANGUAGE sql AS $$SELECT 'pg_toast'::name$$;
CREATE FUNCTION evil.quote_ident(text) RETURNS text LANGUAGE sql AS $$SELECT 'pg_toast'$$;
CREATE FUNCTION evil.pg_advisory_xact_lock(bigint) RETURNS void LANGUAGE plpgsql AS 'BEGIN NULL; END';
CREATE FUNCTION evil.zero(bigint, bigint) RETURNS bigint LANGUAGE sql AS 'SELECT 0::bigint';
CREATE AGGREGATE evil.max(bigint) (sfunc = evil.zero, stype = bigint, initcond = '0');
CREATE FUNCTION evil.no(bigint, bigint) RETURNS boolean LANGUAGE sql AS 'SELECT false';
CREATE FUNCTION evil.no(bigint, integer) RETURNS boolean LANGUAGE sql AS 'SELECT false';
CREATE FUNCTION evil.no(oid, oid) RETURNS boolean LANGUAGE sql AS 'SELECT false';
CREATE FUNCTION evil.no(name, name) RETURNS boolean LANGUAGE sql AS 'SELECT false';
CREATE FUNCTION evil.no(smallint, integer) RETURNS boolean LANGUAGE sql AS 'SELECT false';
CREATE FUNCTION evil.big(bigint, integer) RETURNS bigint LANGUAGE sql AS 'SELECT 300000000::bigint';
CREATE OPERATOR evil.= (leftarg = bigint, rightarg = bigint, function = evil.no);
CREATE OPERATOR evil.>= (leftarg = bigint, rightarg = bigint, function = evil.no);
CREATE OPERATOR evil.<= (leftarg = bigint, rightarg = bigint, function = evil.no);
CREATE OPERATOR evil.= (leftarg = bigint, rightarg = integer, function = evil.no);
CREATE OPERATOR evil.>= (leftarg = bigint, rightarg = integer, function = evil.no);
CREATE OPERATOR evil.<= (leftarg = bigint, rightarg = integer, function = evil.no);
CREATE OPERATOR evil.= (leftarg = oid, rightarg = oid, function = evil.no);
CREATE OPERATOR evil.= (leftarg = name, rightarg = name, function = evil.no);
CREATE OPERATOR evil.> (leftarg = smallint, rightarg = integer, function = evil.no);
CREATE OPERATOR evil.+ (leftarg = bigint, rightarg = integer, function = evil.big);
CREATE DOMAIN evil.text AS pg_catalog.varchar(1);
CREATE DOMAIN evil.int8 AS pg_catalog.int4;
CREATE DOMAIN evil.bytea AS pg_catalog.bytea CHECK (false);
CREATE TABLE evil.pg_class(oid oid, relnamespace oid, relname name, relkind "char",
  relrowsecurity boolean);
CREATE TABLE evil.pg_attribute(attrelid oid, attname name, atttypid oid, atttypmod integer,
  attnotnull boolean, attnum smallint, attisdropped boolean);
CREATE TABLE evil.pg_namespace(oid oid, nspname name);
EOF
evil="crevil_$$"
E=$(newdb)
edb=$(dbname "$E")
sql "$edb" "CREATE ROLE $evil LOGIN; ALTER DATABASE $edb OWNER TO $evil"
EV=$(uri "$edb" "$evil")
"$A" init "$EV" >/dev/null
for i in 1 2 3; do "$R" --audit "$EV" "$tmp/p.py" >/dev/null; done
"$A" checkpoint "$EV" --key "$tmp/k" >/dev/null 2>&1
psql -X -q -h "$host" -U "$evil" -d "$edb" -v ON_ERROR_STOP=1 -f "$tmp/shadow.sql" &&
    psql -X -q -h "$host" -U "$evil" -d "$edb" -c "ALTER ROLE $evil SET search_path = evil, pg_catalog, public"
# The lies are live for the role, so this part can fail.
expect shadows-live "300000000|f|1" "$(psql -X -A -t -h "$host" -U "$evil" -d "$edb" \
    -c "SELECT octet_length('\\x00'::bytea), 1::bigint = 1::bigint, '12'::text")"
expect hostile-append "= 42 0" "$("$R" --audit "$EV" "$tmp/p.py" 2>&1 | tr '\n' ' ')$?"
"$A" checkpoint "$EV" --key "$tmp/k" >/dev/null 2>&1
expect hostile-checkpoint "0" "$?"
# (verify's age of the newest checkpoint taken out: the two reads are not the same second)
reads() {
    for c in verify head replay export; do
        out=$("$A" $c "$1" 2>&1)
        rc=$?
        printf '%s\n' "$out" | sed 's/, [0-9]* s ago$//'
        echo "$c $rc"
    done
    out=$("$A" verify "$1" --pubkey "$tmp/k.pub" 2>&1)
    rc=$?
    printf '%s\n' "$out" | sed 's/, [0-9]* s ago$//'
    echo "verify-key $rc"
    "$A" show "$1" 2 2>&1; echo "show $?"
    "$A" prove "$1" 2 2>&1; echo "prove $?"
}
reads "$EV" >"$tmp/hostile.out"
reads "$E" >"$tmp/clean.out"
expect hostile-reads "" "$(diff "$tmp/clean.out" "$tmp/hostile.out" | head -n 6)"
expect hostile-verify "ok: 4 records, head seq 4 $(sed -n '/^verify 0$/{n;p;}' "$tmp/clean.out" | cut -d' ' -f2)
2 checkpoints verified (each by its own key), last at seq 4
newest checkpoint signed $(sed -n 's/^newest checkpoint signed \([0-9TZ:-]*\)$/\1/p' "$tmp/clean.out" | head -n 1)
verify 0" "$(head -n 4 "$tmp/hostile.out")"
expect hostile-ranges "ok: 4 records, head seq 4, 2 checkpoints $all" "$(vcut "$EV" "$tmp/k.pub")"
# A ledger made through that role lands in the first schema of its path, beside the lies.
F=$(newdb)
fdb=$(dbname "$F")
sql "$fdb" "ALTER DATABASE $fdb OWNER TO $evil"
psql -X -q -h "$host" -U "$evil" -d "$fdb" -v ON_ERROR_STOP=1 -f "$tmp/shadow.sql"
FV=$(uri "$fdb" "$evil")
expect hostile-init "ok: a ledger of 0 records 0" "$("$A" init "$FV" 2>&1) $?"
expect hostile-init-append "= 42 0" "$("$R" --audit "$FV" "$tmp/p.py" 2>&1 | tr '\n' ' ')$?"
expect hostile-init-tables "evil.checkpoints evil.records evil.schema_version" \
    "$(sql "$fdb" "SELECT string_agg(schemaname || '.' || tablename, ' ' ORDER BY tablename) FROM pg_tables WHERE tablename IN ('records', 'checkpoints', 'schema_version')")"
expect hostile-init-verify "0 ok: 1 records, head seq 1" \
    "$("$A" verify "$FV" | head -n 1 | cut -d' ' -f1-6 | sed 's/^/0 /')"
expect hostile-init-clean "$("$A" verify "$F&options=-csearch_path%3Devil" 2>&1; echo $?)" \
    "$("$A" verify "$FV" 2>&1; echo $?)"

# ---- a server restart under a long-lived engine: it connects again ---------------------------
C=$(newdb)
mkfifo "$tmp/in"
: >"$tmp/batch.out"   # there before the engine's shell opens it, for the wait below
"$R" --batch --audit "$C" <"$tmp/in" >"$tmp/batch.out" 2>"$tmp/batch.err" &
bpid=$!
exec 3>"$tmp/in"
echo '{"id":1,"code":"1 + 1"}' >&3
k=0
while [ "$(wc -l <"$tmp/batch.out")" -lt 1 ] && [ $k -lt 100 ]; do sleep 0.1; k=$((k + 1)); done
sh tests/pg-server.sh restart "$host" 3>&-   # the server must not hold the pipe open
echo '{"id":2,"code":"2 + 2"}' >&3
exec 3>&-
wait $bpid
expect restart-batch "0 2 ok ok" "$? $(grep -c '"status":"ok"' "$tmp/batch.out") $(sed -n 's/.*"id":\([0-9]*\),"route":"inprocess","status":"\(ok\)".*/\2/p' "$tmp/batch.out" | paste -sd' ')"
expect restart-ledger "ok: 2 records, head seq 2" "$("$A" verify "$C" | head -n 1 | cut -d' ' -f1-6)"

# ---- not a ledger, no server -----------------------------------------------------------------
O=$(newdb)
odb=$(dbname "$O")
sql "$odb" "CREATE TABLE records(id int)"
out=$("$A" verify "$O" 2>&1)
expect other-table '1 calc-audit: audit: not a ledger: no table schema_version' "$? $out"
sql "$odb" "DROP TABLE records; CREATE TABLE schema_version(version bigint NOT NULL, created_us bigint NOT NULL); CREATE TABLE records(seq bigint, format bigint)"
out=$("$R" --audit "$O" "$tmp/p.py" 2>&1)
expect other-columns '2 calc-route: audit: not a ledger: table records column 1 is "seq bigint", expected "seq bigint NOT NULL"' "$? $out"
out=$("$A" verify "postgresql:///x?host=$tmp/none&user=$user" 2>&1)
expect no-server "5 calc-audit: audit: connect to PostgreSQL: connection to server on socket \"$tmp/none/.s.PGSQL.5432\" failed: No such file or directory Is the server running locally and accepting connections on that socket?" "$? $out"

# ---- replay under the limits recorded ----------------------------------------------------------
# A loop stopped by --timeout 0.2 replays under 0.2 s and matches; a limit raised above its
# default is lowered to it unless --trust-limits, and the result that then differs is named by
# that limit.
Q=$(newdb)
printf 'i = 0\nwhile True:\n    i += 1\n' | "$R" --timeout 0.2 --audit "$Q" 2>/dev/null
printf 'ans = 2 ** 2000000 %% 7\n' | "$R" --config max_int_bits=4194304 --audit "$Q" >/dev/null
out=$("$A" replay "$Q" 2>&1)
expect replay-limits "1 seq 2: max_int_bits differs
  recorded: \"4194304\"
  replayed: \"run under 1048576: a replay grants no more unless it trusts the ledger's limits (--trust-limits)\"
FAIL: 2 replayed, 1 identical, 1 differ, 0 sandboxed differ (not failures), 0 skipped" "$? $out"
out=$("$A" replay "$Q" --trust-limits 2>&1)
expect replay-limits-trusted "0 ok: 2 replayed, 2 identical, 0 differ, 0 sandboxed differ (not failures), 0 skipped" "$? $out"

# ---- replay, and a changed data file named ---------------------------------------------------
if printf 'import os\nans = 1' | "$R" --tier ns >/dev/null 2>"$tmp/err"; then
    D=$(newdb)
    mkdir "$tmp/data"
    printf 'year,revenue\n2019,100\n2020,120\n' >"$tmp/data/rev.csv"
    printf 'rows = open("/data/rev.csv").read().splitlines()[1:]\nans = sum(int(r.split(",")[1]) for r in rows)' |
        "$R" --tier ns --data "$tmp/data" --audit "$D" >/dev/null 2>&1
    out=$("$A" replay "$D" --rerun-sandbox --data "$tmp/data" 2>&1)
    expect replay-data "0 ok: 1 replayed, 1 identical, 0 differ, 0 sandboxed differ (not failures), 0 skipped" "$? $out"
    old=$(sha256sum "$tmp/data/rev.csv" | cut -d' ' -f1)
    printf 'year,revenue\n2019,100\n2020,121\n' >"$tmp/data/rev.csv"
    out=$("$A" replay "$D" --rerun-sandbox --data "$tmp/data" 2>&1)
    expect replay-data-changed "1 seq 1: data/rev.csv differs
  recorded: \"31 bytes, sha256 $old\"
  replayed: \"31 bytes, sha256 $(sha256sum "$tmp/data/rev.csv" | cut -d' ' -f1)\"
FAIL: 1 replayed, 0 identical, 1 differ, 0 sandboxed differ (not failures), 0 skipped" "$? $out"
else
    why="the ns sandbox cannot run here: $(head -c 200 "$tmp/err")"
    skip replay-data "$why"
    skip replay-data-changed "$why"
fi
finish
