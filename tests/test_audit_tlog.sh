#!/bin/sh
# calc-audit's transparency-log view checked against an independent reading of the specs:
# RFC 6962's tree hash, PATH and PROOF written here in Python (hashlib), C2SP signed-note key
# IDs, and every Ed25519 signature checked by OpenSSL. Every inclusion proof (seq, size) and
# consistency proof (old, new) of a 13-record ledger must equal the Python one byte for byte
# and verify; forged proofs and notes, a rewritten ledger and a truncated one must not.
B=${BUILD:-build}
exec /usr/bin/python3 - "$B" <<'PY'
import base64, os, shutil, sqlite3, subprocess, sys

sys.path.insert(0, "tests")
from tlog_ref import H, Tally, leaf_hash, mth, openssl_verify, path, subproof

t = Tally(sys.argv[1])
check, run, route = t.check, t.run, t.route

have_openssl = shutil.which("openssl") is not None
if not have_openssl:
    t.skip("openssl's checks: no openssl: Ed25519 signatures are checked by calc-audit alone")
run("keygen", "k")
run("keygen", "other")
pk = bytes.fromhex(open("k.pub").read().strip())
N = 13
for i in range(1, N + 1):
    with open("p.py", "w") as f:
        f.write(f"x = {i} * 7\nprint(x)\n")
    subprocess.run([route, "--audit", "led.db", "p.py"], capture_output=True, check=True)
    rc, note, err = run("checkpoint", "led.db", "--key", "k", *(["--origin", "example.com/ledger"] if i == N else []))
    check(rc == 0 and err.startswith(f"checkpoint: seq {i} "), f"checkpoint {i}: {rc} {err}")
    with open(f"c{i}.note", "w") as f:
        f.write(note)

# the records' canonical encodings, as inclusion proofs carry them
records = []
for seq in range(1, N + 1):
    rc, proof, _ = run("prove", "led.db", str(seq))
    lines = proof.split("\n")
    check(rc == 0 and lines[:3] == ["calcroute/audit/inclusion-proof/v1", str(N), str(seq - 1)],
          f"prove {seq} header: {lines[:3]}")
    rec = base64.b64decode(lines[3])
    check(int.from_bytes(rec[4:12], "big") == seq, f"record {seq} encodes its seq")
    records.append(rec)
lv = [leaf_hash(r) for r in records]

# notes: text, key ID, signature, root
default_origin = "calcroute.audit/" + H(pk)[:8].hex()
for n in range(1, N + 1):
    note = open(f"c{n}.note", "rb").read()
    origin = "example.com/ledger" if n == N else default_origin
    text, _, sigs = note.rpartition(b"\n\n")
    text += b"\n"
    want_text = f"{origin}\n{n}\n".encode() + base64.b64encode(mth(lv[:n])) + b"\n"
    check(text == want_text, f"note {n} text: {text!r} want {want_text!r}")
    prefix = "— ".encode() + origin.encode() + b" "
    check(sigs.startswith(prefix) and sigs.endswith(b"\n") and sigs.count(b"\n") == 1,
          f"note {n} signature line {sigs!r}")
    blob = base64.b64decode(sigs[len(prefix):-1])
    kid = H(origin.encode() + b"\n\x01" + pk)[:4]
    check(len(blob) == 68 and blob[:4] == kid, f"note {n} key ID")
    if have_openssl:
        check(openssl_verify(pk, text, blob[4:]), f"note {n}: OpenSSL verifies the signature")

# every inclusion proof
for n in range(1, N + 1):
    for seq in range(1, n + 1):
        rc, proof, err = run("prove", "led.db", str(seq), "--size", str(n))
        want = (f"calcroute/audit/inclusion-proof/v1\n{n}\n{seq - 1}\n"
                + base64.b64encode(records[seq - 1]).decode() + "\n"
                + "".join(base64.b64encode(h).decode() + "\n" for h in path(seq - 1, lv[:n])))
        check(rc == 0 and proof == want, f"inclusion {seq} in {n}: {proof!r}")
        with open("proof", "w") as f:
            f.write(proof)
        rc, out, err = run("verify-proof", "proof", "--checkpoint", f"c{n}.note", "--pubkey", "k.pub")
        lh = leaf_hash(records[seq - 1]).hex()
        origin = "example.com/ledger" if n == N else default_origin
        check(rc == 0 and out == f"ok: record seq {seq} (leaf hash {lh}) is in the tree of {n} records ({origin})\n",
              f"verify inclusion {seq} in {n}: {rc} {out} {err}")

# every consistency proof
for n in range(1, N + 1):
    for m in range(1, n + 1):
        rc, proof, err = run("prove", "led.db", "--consistency", str(m), str(n))
        hashes = subproof(m, lv[:n], True) if m < n else []
        want = (f"calcroute/audit/consistency-proof/v1\n{m}\n{n}\n"
                + "".join(base64.b64encode(h).decode() + "\n" for h in hashes))
        check(rc == 0 and proof == want, f"consistency {m} -> {n}: {proof!r}")
        with open("proof", "w") as f:
            f.write(proof)
        rc, out, err = run("verify-proof", "proof", "--checkpoint", f"c{n}.note",
                           "--old-checkpoint", f"c{m}.note", "--pubkey", "k.pub")
        origin = "example.com/ledger" if n == N else default_origin
        check(rc == 0 and out == f"ok: the tree of {n} records extends the tree of {m} records ({origin})\n",
              f"verify consistency {m} -> {n}: {rc} {out} {err}")

def verify(proof_text, note="c9.note", old=None, key="k.pub"):
    with open("proof", "w") as f:
        f.write(proof_text)
    args = ["verify-proof", "proof", "--checkpoint", note, "--pubkey", key]
    if old:
        args += ["--old-checkpoint", old]
    return run(*args)

def refused(what, got, message):
    rc, out, err = got
    check(rc == 1 and out == "FAIL: " + message + "\n", f"{what}: {rc} {out!r} {err!r}")

# forgeries
_, p3, _ = run("prove", "led.db", "3", "--size", "9")
lines = p3.split("\n")
h = bytearray(base64.b64decode(lines[4])); h[0] ^= 1
refused("a flipped path hash", verify("\n".join(lines[:4] + [base64.b64encode(h).decode()] + lines[5:])),
        "proof: record seq 3 is not in the signed tree (the path does not lead to its root)")
rec = bytearray(records[2]); rec[-1] ^= 1
refused("an altered record", verify("\n".join(lines[:3] + [base64.b64encode(rec).decode()] + lines[4:])),
        "proof: record seq 3 is not in the signed tree (the path does not lead to its root)")
refused("another leaf's index", verify("\n".join(lines[:2] + ["3"] + lines[3:])),
        "proof: the record's seq is not its leaf's")
refused("a proof for another tree size", verify(p3, note="c8.note"),
        "proof: for a tree of 9 records, the checkpoint signs 8")
refused("a dropped hash", verify("\n".join(lines[:4] + lines[5:])),
        "proof: record seq 3 is not in the signed tree (the path does not lead to its root)")
refused("an extra hash", verify(p3 + lines[4] + "\n"),
        "proof: record seq 3 is not in the signed tree (the path does not lead to its root)")
refused("not a proof", verify("hello\n"), "proof: not a calcroute proof (line 1)")
refused("a checkpoint by another key", verify(p3, key="other.pub"),
        "c9.note: checkpoint: not signed by this key")
note = open("c9.note").read()
with open("forged.note", "w") as f:
    f.write(note.replace("\n9\n", "\n10\n", 1))
refused("a note whose size was changed", verify(p3, note="forged.note"),
        "forged.note: checkpoint: the signature by this key does not verify")
with open("forged.note", "w") as f:
    f.write(note.replace("\n\n", "\n", 1))
refused("a note without its blank line", verify(p3, note="forged.note"),
        "forged.note: checkpoint: no blank line before the signatures")
_, c59, _ = run("prove", "led.db", "--consistency", "5", "9")
refused("a consistency proof checked against the wrong old checkpoint", verify(c59, old="c6.note"),
        "proof: it links trees of 5 and 9 records, the checkpoints sign 6 and 9")
cl = c59.split("\n")
h = bytearray(base64.b64decode(cl[3])); h[5] ^= 0x80
refused("a flipped consistency hash", verify("\n".join(cl[:3] + [base64.b64encode(h).decode()] + cl[4:]), old="c5.note"),
        "proof: the tree of 9 records does not extend the one of 5 (rewritten or truncated)")
rc, out, err = verify(c59)
check(rc == 2 and "old checkpoint" in err, f"a consistency proof without the old checkpoint: {rc} {err!r}")

# a rewritten ledger: record 4 changed (its chain and the later ones recomputed by whoever
# rewrote it would not help: the tree differs from the one the old checkpoint signed)
shutil.copy("led.db", "rewritten.db")
db = sqlite3.connect("rewritten.db")
db.execute("DROP TRIGGER records_no_update")
db.execute("UPDATE records SET stdout = '29\n' WHERE seq = 4")
db.commit(); db.close()
rc, note, err = run("checkpoint", "rewritten.db", "--key", "k")
with open("rewritten.note", "w") as f:
    f.write(note)
_, c, _ = run("prove", "rewritten.db", "--consistency", "9", str(N))
refused("a rewritten ledger against an old checkpoint", verify(c, note="rewritten.note", old="c9.note"),
        f"proof: the tree of {N} records does not extend the one of 9 (rewritten or truncated)")
_, p, _ = run("prove", "rewritten.db", "4", "--size", "9")
refused("a rewritten record against the old checkpoint", verify(p),
        "proof: record seq 4 is not in the signed tree (the path does not lead to its root)")

# a truncated ledger cannot prove what it no longer holds
shutil.copy("led.db", "short.db")
db = sqlite3.connect("short.db")
db.execute("DROP TRIGGER records_no_delete")
db.execute("DELETE FROM records WHERE seq > 9")
db.commit(); db.close()
rc, out, err = run("prove", "short.db", "--consistency", "9", str(N))
check(rc == 1 and err.startswith(f"calc-audit: audit: tree size {N} is past the ledger's last record (seq 9)"),
      f"a truncated ledger: {rc} {err!r}")
rc, out, err = run("prove", "short.db", "12")
check(rc == 1 and err.startswith("calc-audit: audit: no record with seq 12 (the ledger ends at 9)"),
      f"a truncated ledger's missing record: {rc} {err!r}")
rc, out, err = run("verify-proof", "missing", "--checkpoint", "c9.note", "--pubkey", "k.pub")
check(rc == 5 and "missing: No such file or directory" in err, f"a missing proof file: {rc} {err!r}")

t.close()
PY
