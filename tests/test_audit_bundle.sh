#!/bin/sh
# calc-audit's C2SP tlog-proof bundles and tlog-policy checks against an independent reading
# of the specs: the bundle of every record built here in Python (hashlib) byte for byte, vkeys
# and key IDs computed here, witness cosignatures (tlog-cosignature, Ed25519) made by OpenSSL;
# then every field of a bundle, its checkpoint and its policy tampered with, each refused
# with its own reason. calc-route --json --proof's answer carries a bundle that verifies.
B=${BUILD:-build}
exec /usr/bin/python3 - "$B" <<'PY'
import base64, json, os, shutil, subprocess, sys

sys.path.insert(0, "tests")
from tlog_ref import H, Tally, b64, leaf_hash, mth, path, vkey

t = Tally(sys.argv[1])
check, run, route = t.check, t.run, t.route

def write(name, data):
    with open(name, "wb" if isinstance(data, bytes) else "w") as f:
        f.write(data)

ORIGIN = "example.com/ledger"
run("keygen", "k")
run("keygen", "other")
pk = bytes.fromhex(open("k.pub").read().strip())
other = bytes.fromhex(open("other.pub").read().strip())
N = 7
for i in range(1, N + 1):
    write("p.py", f"x = {i} * 7\nprint(x)\n")
    subprocess.run([route, "--audit", "led.db", "p.py"], capture_output=True, check=True)
rc, note, err = run("checkpoint", "led.db", "--key", "k", "--origin", ORIGIN)
check(rc == 0, f"checkpoint: {rc} {err}")
write("c.note", note)
records = []
for seq in range(1, N + 1):
    rc, proof, _ = run("prove", "led.db", str(seq))
    records.append(base64.b64decode(proof.split("\n")[3]))
    write(f"rec{seq}", records[-1])
leaves = [leaf_hash(r) for r in records]

# vkeys
rc, out, err = run("vkey", "k.pub", "--origin", ORIGIN)
check(rc == 0 and out == vkey(ORIGIN, 1, pk) + "\n", f"vkey: {rc} {out!r} {err!r}")
default = "calcroute.audit/" + H(pk)[:8].hex()
rc, out, err = run("vkey", "k.pub")
check(rc == 0 and out == vkey(default, 1, pk) + "\n", f"vkey, default name: {rc} {out!r}")
rc, out, err = run("vkey", "k.pub", "--origin", "w.example", "--witness")
check(rc == 0 and out == vkey("w.example", 4, pk) + "\n", f"vkey --witness: {rc} {out!r}")
rc, out, err = run("vkey", "k.pub", "--origin", "a b")
check(rc == 2 and "key name 'a b'" in err, f"vkey with a space in the name: {rc} {err!r}")

def policy(text, name="pol"):
    write(name, text)
    return name

log_line = f"log {vkey(ORIGIN, 1, pk)}\n"
policy(log_line + "quorum none\n")

# every record's bundle, byte for byte, and its verification
for seq in range(1, N + 1):
    rc, bundle, err = run("prove", "led.db", str(seq), "--format", "tlog-proof", "--checkpoint", "c.note")
    extra = f"calcroute/audit/entry/v1\nseq {seq}\nleaf {leaves[seq - 1].hex()}\n".encode()
    want = (f"c2sp.org/tlog-proof@v1\nextra {b64(extra)}\nindex {seq - 1}\n"
            + "".join(b64(h) + "\n" for h in path(seq - 1, leaves)) + "\n" + note)
    check(rc == 0 and bundle == want, f"bundle {seq}: {rc} {bundle!r} {err!r}")
    write(f"b{seq}", bundle)
    rc, out, err = run("verify-proof", f"b{seq}", "--policy", "pol")
    check(rc == 0 and out == f"ok: entry {seq - 1} (record seq {seq}, leaf hash {leaves[seq - 1].hex()}) "
          f"is in the tree of {N} entries of {ORIGIN}; no witness cosigned (quorum none)\n",
          f"verify bundle {seq}: {rc} {out!r} {err!r}")
    rc, out, err = run("verify-proof", f"b{seq}", "--policy", "pol", "--entry", f"rec{seq}")
    check(rc == 0 and out.startswith(f"ok: entry {seq - 1} (record seq {seq}, "),
          f"verify bundle {seq} with its entry: {rc} {out!r} {err!r}")

# a bundle signed on the spot, of a smaller tree
rc, bundle, err = run("prove", "led.db", "2", "--format", "tlog-proof", "--key", "k", "--size", "5")
lines = bundle.split("\n")
check(rc == 0 and lines[2] == "index 1" and lines[3:6] == [b64(h) for h in path(1, leaves[:5])]
      and lines[7:10] == [default, "5", b64(mth(leaves[:5]))], f"prove --key --size: {bundle!r} {err!r}")

def refused(what, got, message, code=1):
    rc, out, err = got
    if code == 1:
        check(rc == 1 and out == "FAIL: " + message + "\n", f"{what}: {rc} {out!r} {err!r}")
    else:
        check(rc == code and err.startswith("calc-audit: " + message + "\n"), f"{what}: {rc} {out!r} {err!r}")

def verify(text, pol="pol", entry=None):
    write("t.tlog-proof", text)
    return run("verify-proof", "t.tlog-proof", "--policy", pol, *(["--entry", entry] if entry else []))

b3 = open("b3").read()
L = b3.split("\n")   # 0 header, 1 extra, 2 index, 3..5 path, 6 blank, 7.. note
def with_line(i, s):
    return "\n".join(L[:i] + [s] + L[i + 1:])
def extra_of(text):
    return "extra " + b64(text.encode())
nl = "\n"

refused("a header of another format", verify(with_line(0, "c2sp.org/tlog-proof@v2")),
        "bundle: line 1 is not c2sp.org/tlog-proof@v1")
refused("extra data that is not base64", verify(with_line(1, "extra !!!!")),
        "bundle: the extra line is not base64")
refused("extra data naming another seq",
        verify(with_line(1, extra_of(f"calcroute/audit/entry/v1\nseq 4\nleaf {leaves[2].hex()}\n"))),
        "bundle: the extra data's record seq 4 is not entry 2's (seq 3)")
refused("extra data naming another leaf",
        verify(with_line(1, extra_of(f"calcroute/audit/entry/v1\nseq 3\nleaf {leaves[3].hex()}\n"))),
        "bundle: entry 2 is not in the signed tree (the path does not lead to its root)")
refused("no extra data and no entry", verify(nl.join(L[:1] + L[2:])),
        "bundle: it names no entry (no calcroute extra data): give the entry")
rc, out, err = verify(nl.join(L[:1] + L[2:]), entry="rec3")
check(rc == 0 and out.startswith("ok: entry 2 (leaf hash "), f"no extra data, the entry given: {rc} {out!r}")
refused("another record given as the entry", verify(b3, entry="rec4"),
        "bundle: the entry given is not the one the extra data names")
refused("another index", verify(with_line(2, "index 3")),
        "bundle: the extra data's record seq 3 is not entry 3's (seq 4)")
refused("another index, its entry given", verify(nl.join(L[:1] + [L[2].replace("2", "3")] + L[3:]), entry="rec4"),
        "bundle: entry 3 is not in the signed tree (the path does not lead to its root)")
refused("an index with a leading zero", verify(with_line(2, "index 02")),
        "bundle: the index line is not 'index N'")
refused("an index past the tree", verify(with_line(2, "index 7")),
        "bundle: index 7 is outside the checkpoint's tree of 7 entries")
h = bytearray(base64.b64decode(L[4])); h[9] ^= 4
refused("a flipped path hash", verify(with_line(4, b64(h))),
        "bundle: entry 2 is not in the signed tree (the path does not lead to its root)")
refused("a dropped path hash", verify(nl.join(L[:4] + L[5:])),
        "bundle: entry 2 is not in the signed tree (the path does not lead to its root)")
refused("an extra path hash", verify(nl.join(L[:6] + [L[5]] + L[6:])),
        "bundle: entry 2 is not in the signed tree (the path does not lead to its root)")
refused("a path line that is not a hash", verify(with_line(4, "hello")),
        "bundle: a proof line that is not a base64 SHA-256 hash")
refused("no blank line before the checkpoint", verify(nl.join(L[:6] + L[7:])),
        "bundle: a proof line that is not a base64 SHA-256 hash")
refused("no checkpoint", verify(nl.join(L[:6]) + nl), "bundle: no blank line before the checkpoint")
refused("the checkpoint's size changed", verify(with_line(8, "8")),
        f"checkpoint: the log's signature ({ORIGIN}) does not verify")
refused("the checkpoint's root changed", verify(with_line(9, b64(leaves[0]))),
        f"checkpoint: the log's signature ({ORIGIN}) does not verify")
refused("the log's signature removed", verify(nl.join(L[:11]) + nl),
        f"checkpoint: not signed by the log's key ({ORIGIN})")
sig = bytearray(base64.b64decode(L[11].split(" ")[2])); sig[30] ^= 1
refused("the log's signature flipped", verify(with_line(11, f"— {ORIGIN} {b64(sig)}")),
        f"checkpoint: the log's signature ({ORIGIN}) does not verify")
refused("a checkpoint of a log the policy does not name", verify(b3, pol=policy(f"log {vkey('example.com/other', 1, pk)}\nquorum none\n", "p2")),
        f"checkpoint: origin {ORIGIN} is not a log the policy names")
refused("the log's name with another key", verify(b3, pol=policy(f"log {vkey(ORIGIN, 1, other)}\nquorum none\n", "p2")),
        f"checkpoint: not signed by the log's key ({ORIGIN})")

# the checkpoint cosigned by witnesses (OpenSSL signs: a second Ed25519 implementation)
if shutil.which("openssl") is None:
    t.skip("the witness checks: no openssl (scripts/install-deps.sh installs it)")
else:
    text = note[:note.index("\n\n") + 1].encode()
    wit = {}
    for w in ("w1", "w2", "w3"):
        subprocess.run(["openssl", "genpkey", "-algorithm", "ed25519", "-out", f"{w}.pem"], check=True)
        der = subprocess.run(["openssl", "pkey", "-in", f"{w}.pem", "-pubout", "-outform", "DER"],
                             capture_output=True, check=True).stdout
        wit[w] = der[-32:]
    def cosign(w, t=1700000000 + 7, body=text):
        write("msg", b"cosignature/v1\ntime %d\n" % t + body)
        subprocess.run(["openssl", "pkeyutl", "-sign", "-rawin", "-inkey", f"{w}.pem", "-in", "msg",
                        "-out", "sig"], check=True)
        name = f"witness.example/{w}"
        kid = H(name.encode() + b"\n\x04" + wit[w])[:4]
        return f"— {name} {b64(kid + t.to_bytes(8, 'big') + open('sig', 'rb').read())}"
    cs = {w: cosign(w) for w in wit}
    wpol = (log_line + "".join(f"witness {w} {vkey('witness.example/' + w, 4, wit[w])}\n" for w in wit)
            + "# two of three\ngroup two 2 w1 w2 w3\nquorum two\n")
    policy(wpol, "wpol")
    base = "\n".join(L[:12])
    cosigned = base + "\n" + cs["w1"] + "\n" + cs["w3"] + "\n"
    rc, out, err = verify(cosigned, pol="wpol")
    check(rc == 0 and out == f"ok: entry 2 (record seq 3, leaf hash {leaves[2].hex()}) is in the tree "
          f"of {N} entries of {ORIGIN}; cosigned by w1 w3 (quorum two)\n", f"cosigned by two of three: {rc} {out!r} {err!r}")
    write("cosigned.note", note + cs["w1"] + "\n" + cs["w3"] + "\n")
    rc, bundle, err = run("prove", "led.db", "3", "--format", "tlog-proof", "--checkpoint", "cosigned.note")
    check(rc == 0 and bundle == cosigned, f"prove keeps the cosignatures: {rc} {bundle!r} {err!r}")
    refused("one cosignature of the two needed", verify(base + "\n" + cs["w2"] + "\n", pol="wpol"),
            "checkpoint: the policy's quorum two is not met (cosigned by: w2)")
    refused("no cosignature", verify(b3, pol="wpol"),
            "checkpoint: the policy's quorum two is not met (cosigned by: none)")
    forged = cs["w3"].split(" ")
    blob = bytearray(base64.b64decode(forged[2])); blob[7] ^= 1   # the timestamp
    refused("a cosignature's time changed", verify(base + "\n" + cs["w1"] + "\n" + " ".join(forged[:2] + [b64(blob)]) + "\n", pol="wpol"),
            "checkpoint: the cosignature by witness w3 (witness.example/w3) does not verify")
    other_body = text.replace(b"\n7\n", b"\n6\n")
    refused("a cosignature of another checkpoint", verify(base + "\n" + cs["w1"] + "\n" + cosign("w2", body=other_body) + "\n", pol="wpol"),
            "checkpoint: the cosignature by witness w2 (witness.example/w2) does not verify")
    policy(log_line + f"witness w1 {vkey('witness.example/w1', 4, wit['w1'])}\nquorum w1\n", "p1")
    rc, out, err = verify(cosigned, pol="p1")
    check(rc == 0 and out.endswith("; cosigned by w1 (quorum w1)\n"), f"quorum of one witness: {rc} {out!r}")
    policy(log_line + "".join(f"witness {w} {vkey('witness.example/' + w, 4, wit[w])}\n" for w in wit)
           + "group a all w1 w3\ngroup b any w2\ngroup ab all a b\nquorum ab\n", "nested")
    refused("nested groups, one unmet", verify(cosigned, pol="nested"),
            "checkpoint: the policy's quorum ab is not met (cosigned by: w1 w3)")
    rc, out, err = verify(base + "\n" + cs["w1"] + "\n" + cs["w2"] + "\n" + cs["w3"] + "\n", pol="nested")
    check(rc == 0 and out.endswith("; cosigned by w1 w2 w3 (quorum ab)\n"), f"nested groups met: {rc} {out!r}")

# policies that are not policies (usage: exit 2)
vk = vkey(ORIGIN, 1, pk)
wk = vkey("witness.example/x", 4, other)
for what, text, message in [
    ("no quorum", log_line, "policy: no quorum line ('quorum none' asks for no witness)"),
    ("no log", "quorum none\n", "policy: no log line (a bundle is checked against the log's key)"),
    ("two quorums", log_line + "quorum none\nquorum none\n", "policy line 3: a second quorum"),
    ("an unknown keyword", log_line + "trust me\nquorum none\n", "policy line 2: not log, witness, group or quorum: 'trust'"),
    ("a vkey whose ID is wrong", f"log {vk[:len(ORIGIN) + 1]}00000000{vk[len(ORIGIN) + 9:]}\nquorum none\n",
     f"policy line 1: not a verifier key: '{ORIGIN}+00000000{vk[len(ORIGIN) + 9:]}'"),
    ("a witness key as the log's", f"log {wk}\nquorum none\n", f"policy line 1: a log's key is an Ed25519 signed-note key (type 1): '{wk}'"),
    ("a log key as a witness's", log_line + f"witness x {vk}\nquorum x\n", f"policy line 2: a witness's key is an Ed25519 cosignature key (type 4): '{vk}'"),
    ("a key twice", log_line + f"witness x {vkey('w', 4, pk)}\nquorum x\n", f"policy line 2: a key listed twice: '{vkey('w', 4, pk)}'"),
    ("a quorum of an unknown name", log_line + "quorum w9\n", "policy line 2: a name not defined above: 'w9'"),
    ("a group of an unknown member", log_line + f"witness x {wk}\ngroup g any x y\nquorum g\n", "policy line 3: a member not defined above: 'y'"),
    ("a member twice", log_line + f"witness x {wk}\ngroup g 1 x x\nquorum g\n", "policy line 3: a member listed twice: 'x'"),
    ("a threshold above the members", log_line + f"witness x {wk}\ngroup g 2 x\nquorum g\n", "policy line 3: a threshold that is not all, any or 1..members: '2'"),
    ("a name taken twice", log_line + f"witness x {wk}\ngroup x any x\nquorum x\n", "policy line 3: a name already taken: 'x'"),
    ("a control character", log_line + "quorum none\r\n", "policy: a control character"),
]:
    refused(what, verify(b3, pol=policy(text, "bad")), message, code=2)
rc, out, err = verify(b3, pol=policy("  # the ledger's key\n\t" + log_line.replace(" ", " \t ") + "\nquorum   none  \n", "spaced"))
check(rc == 0, f"a policy with comments, tabs and blank lines: {rc} {out!r} {err!r}")

# prove's refusals
rc, out, err = run("prove", "led.db", "8", "--format", "tlog-proof", "--checkpoint", "c.note")
check(rc == 2 and "seq 8 is not in the checkpoint's tree of 7 records" in err, f"a seq past the note: {rc} {err!r}")
shutil.copy("led.db", "other.db")
write("p.py", "print(99)\n")
subprocess.run([route, "--audit", "other.db", "p.py"], capture_output=True, check=True)
_, n8, _ = run("checkpoint", "other.db", "--key", "k", "--origin", ORIGIN)
write("c8.note", n8)
rc, out, err = run("prove", "led.db", "3", "--format", "tlog-proof", "--checkpoint", "c8.note")
check(rc == 1 and "tree size 8 is past the ledger's last record (seq 7)" in err, f"a note of a longer ledger: {rc} {err!r}")
write("forged.note", note.replace(note.split("\n")[2], b64(leaves[1])))
rc, out, err = run("prove", "led.db", "3", "--format", "tlog-proof", "--checkpoint", "forged.note")
check(rc == 1 and "the checkpoint's root is not this ledger's tree of 7 records" in err, f"a note of another tree: {rc} {err!r}")
for args, message in [
    (["prove", "led.db", "3", "--format", "json", "--key", "k"], "prove: unknown --format json"),
    (["prove", "led.db", "3", "--format", "tlog-proof"], "prove --format tlog-proof: one record, and --checkpoint NOTE or --key FILE"),
    (["prove", "led.db", "3", "--format", "tlog-proof", "--checkpoint", "c.note", "--size", "3"], "prove: the checkpoint NOTE sets the tree"),
    (["verify-proof", "b3", "--policy", "pol", "--pubkey", "k.pub"], "verify-proof --policy: the bundle carries its checkpoint"),
    (["verify-proof", "b3", "--entry", "rec3", "--checkpoint", "c.note", "--pubkey", "k.pub"], "verify-proof: --entry is for a bundle"),
]:
    rc, out, err = run(*args)
    check(rc == 2 and err.startswith("calc-audit: " + message), f"{args}: {rc} {err!r}")
rc, out, err = run("verify-proof", "missing", "--policy", "pol")
check(rc == 5 and "missing: No such file or directory" in err, f"a missing bundle: {rc} {err!r}")

# calc-route --json --proof: the answer and its bundle together
write("q.py", "x = 6 * 7\n")
p = subprocess.run([route, "--audit", "led.db", "--json", "--proof", "k", "q.py"], capture_output=True, text=True)
ans = json.loads(p.stdout) if p.returncode == 0 else {}
seq = ans.get("audit", {}).get("seq")
check(p.returncode == 0 and seq == N + 1 and ans.get("value", {}).get("repr") == "42", f"--proof's answer: {p.returncode} {p.stdout[:200]!r} {p.stderr!r}")
write("answer.tlog-proof", ans.get("proof", ""))
rc, proof, _ = run("prove", "led.db", str(seq))
rec = base64.b64decode(proof.split("\n")[3])
policy(f"log {vkey(default, 1, pk)}\nquorum none\n", "dpol")
rc, out, err = run("verify-proof", "answer.tlog-proof", "--policy", "dpol")
check(rc == 0 and out == f"ok: entry {seq - 1} (record seq {seq}, leaf hash {leaf_hash(rec).hex()}) is in the tree of "
      f"{seq} entries of {default}; no witness cosigned (quorum none)\n", f"--proof's bundle verifies: {rc} {out!r} {err!r}")
rc, out, err = run("verify", "led.db", "--pubkey", "k.pub")
check(rc == 0 and f"checkpoints verified with the given key, last at seq {seq}\n" in out, f"--proof's checkpoint is stored: {out!r}")
for args in (["--json", "--proof", "k", "q.py"], ["--audit", "led.db", "--proof", "k", "q.py"]):
    p = subprocess.run([route, *args], capture_output=True, text=True)
    check(p.returncode == 2 and p.stderr.startswith("calc-route: --proof: with --json and --audit, for one program"),
          f"{args}: {p.returncode} {p.stderr!r}")

t.close()
PY
