#!/bin/sh
# calc-audit witness: C2SP tlog-witness's add-checkpoint over HTTP. A checkpoint is cosigned
# (tlog-cosignature, Ed25519: the key ID and the signature checked here with OpenSSL) only when
# the consistency proof links it to the last one the witness cosigned; 409 with that size
# (text/x.tlog.size) for another old size or a fork of the same size, 422 for a proof that
# does not hold (a rewritten ledger), 400, 403 and 404 as the spec says; the state survives a
# restart; a bundle whose checkpoint carries the cosignature meets a policy's quorum; and
# serve --tiles --witnesses has each checkpoint it publishes cosigned first.
B=${BUILD:-build}
exec /usr/bin/python3 - "$B" <<'PY'
import base64, http.client, os, shutil, signal, subprocess, sys, time

sys.path.insert(0, "tests")
from tlog_ref import H, Tally, b64, openssl_verify

t = Tally(sys.argv[1])
check, run, route = t.check, t.run, t.route
ORIGIN, WNAME = "example.com/w-log", "witness.example/w1"

def write(name, data):
    with open(name, "wb" if isinstance(data, bytes) else "w") as f:
        f.write(data)

def append(db, code):
    write("p.py", code)
    subprocess.run([route, "--audit", db, "p.py"], capture_output=True, check=True)

def note(db, key="k", origin=ORIGIN):
    rc, out, err = run("checkpoint", db, "--key", key, "--origin", origin)
    check(rc == 0, f"checkpoint {db}: {err}")
    return out

run("keygen", "k"), run("keygen", "other"), run("keygen", "wk")
wpk = bytes.fromhex(open("wk.pub").read().strip())
notes = {}
for i in range(1, 8):
    append("led.db", f"x = {i} * 5\n")
    if i == 4:
        shutil.copy("led.db", "fork.db")
    if i in (3, 5, 7):
        notes[i] = note("led.db")
append("fork.db", "x = 999\n")
fork5 = note("fork.db")
write("pol", f"log {run('vkey', 'k.pub', '--origin', ORIGIN)[1]}quorum none\n")

def start():
    p = subprocess.Popen([t.audit, "witness", "--listen", "127.0.0.1:0", "--key", "wk", "--origin", WNAME,
                          "--policy", "pol", "--state", "w.state"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    line = p.stdout.readline()
    check(line.startswith("calc-audit: witness on http://127.0.0.1:"), f"the witness starts: {line!r}")
    return p, int(line.rsplit(":", 1)[1])

def post(port, body, path="/add-checkpoint", method="POST"):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    c.request(method, path, body=body.encode() if isinstance(body, str) else body)
    r = c.getresponse()
    return r.status, r.getheader("Content-Type"), r.read().decode()

def consistency(old, new, db="led.db"):
    rc, out, err = run("prove", db, "--consistency", str(old), str(new))
    return out.split("\n")[3:-1]

def request(old, proof, n):
    return f"old {old}\n" + "".join(h + "\n" for h in proof) + "\n" + n

have_openssl = shutil.which("openssl") is not None
if not have_openssl:
    t.skip("OpenSSL's check of the cosignature: no openssl (scripts/install-deps.sh installs it)")

def cosigned(what, got, n, t0):
    status, ctype, body = got
    ok = status == 200 and ctype == "text/plain; charset=utf-8" and body.count("\n") == 1
    prefix = f"— {WNAME} "
    ok = ok and body.startswith(prefix)
    blob = base64.b64decode(body[len(prefix):-1]) if ok else b""
    ok = ok and len(blob) == 76 and blob[:4] == H(WNAME.encode() + b"\n\x04" + wpk)[:4]
    when = int.from_bytes(blob[4:12], "big") if ok else 0
    ok = ok and t0 <= when <= time.time() + 1
    if ok and have_openssl:
        text = n[:n.index("\n\n") + 1].encode()
        ok = openssl_verify(wpk, b"cosignature/v1\ntime %d\n" % when + text, blob[12:])
    check(ok, f"{what}: {got!r}")
    return body

def refused(what, got, code, body, ctype="text/plain; charset=utf-8"):
    check(got == (code, ctype, body), f"{what}: {got!r}, want {(code, ctype, body)!r}")

p, port = start()
t0 = int(time.time())
refused("an old size before any cosignature", post(port, request(3, consistency(3, 5), notes[5])), 409, "0\n",
        "text/x.tlog.size")
cs3 = cosigned("the first checkpoint (old 0)", post(port, request(0, [], notes[3])), notes[3], t0)
refused("old 0 again", post(port, request(0, [], notes[5])), 409, "3\n", "text/x.tlog.size")
cs5 = cosigned("3 -> 5 with its proof", post(port, request(3, consistency(3, 5), notes[5])), notes[5], t0)
cosigned("5 again (the same root)", post(port, request(5, [], notes[5])), notes[5], t0)
refused("a fork of size 5", post(port, request(5, [], fork5)), 409, "5\n", "text/x.tlog.size")
bad = consistency(5, 7)
h = bytearray(base64.b64decode(bad[0])); h[3] ^= 1
refused("a flipped proof 5 -> 7", post(port, request(5, [b64(h)] + bad[1:], notes[7])), 422,
        "the proof does not link the tree of 5 entries to the one of 7\n")
for i in range(6, 8):
    append("fork.db", f"y = {i}\n")
fork7 = note("fork.db")
refused("a rewritten ledger's 7 with its own proof", post(port, request(5, consistency(5, 7, "fork.db"), fork7)), 422,
        "the proof does not link the tree of 5 entries to the one of 7\n")
refused("an old size past the checkpoint", post(port, request(7, [], notes[5])), 400,
        "the old size is past the checkpoint's\n")
refused("old 0 with a proof", post(port, request(0, consistency(3, 5), notes[5])), 409, "5\n", "text/x.tlog.size")
refused("not a request", post(port, "hello\n"), 400, "the first line is not 'old N'\n")
refused("no checkpoint", post(port, "old 5\n"), 400, "no blank line before the checkpoint\n")
refused("a proof line that is no hash", post(port, "old 5\nxyz\n\n" + notes[7]), 400,
        "a proof line that is not a base64 SHA-256 hash\n")
refused("64 proof lines", post(port, request(5, [bad[0]] * 64, notes[7])), 400, "more than 63 proof lines\n")
refused("a checkpoint of a log it does not follow", post(port, request(5, [], note("led.db", origin="example.com/other"))), 404,
        "checkpoint: origin example.com/other is not a log the policy names\n")
refused("a checkpoint by another key", post(port, request(5, [], note("led.db", key="other"))), 403,
        f"checkpoint: not signed by the log's key ({ORIGIN})\n")
forged = notes[7].replace("\n7\n", "\n6\n", 1)
refused("a checkpoint whose size was changed", post(port, request(5, [], forged)), 403,
        f"checkpoint: the log's signature ({ORIGIN}) does not verify\n")
refused("GET", post(port, "", method="GET"), 405, "add-checkpoint takes POST\n")
refused("another path", post(port, request(5, [], notes[7]), path="/add"), 404, "no such path: POST /add-checkpoint\n")
refused("a body over 128 KiB", post(port, "old 5\n" + "A" * (130 << 10)), 413, "a request is at most 128 KiB\n")
check(open("w.state").read() == f"calcroute/witness/state/v1\n{ORIGIN} 5 {notes[5].split(chr(10))[2]}\n",
      f"the state: {open('w.state').read()!r}")
p.send_signal(signal.SIGTERM)
check(p.wait(timeout=60) == 0, "the witness stops")

# the state outlives the process
p, port = start()
refused("after a restart, old 3", post(port, request(3, consistency(3, 7), notes[7])), 409, "5\n", "text/x.tlog.size")
cs7 = cosigned("after a restart, 5 -> 7", post(port, request(5, consistency(5, 7), notes[7])), notes[7], t0)
p.send_signal(signal.SIGTERM)
p.wait(timeout=60)

# a bundle whose checkpoint carries the cosignature, against a policy that wants it
write("c7.note", notes[7] + cs7)
rc, bundle, err = run("prove", "led.db", "4", "--format", "tlog-proof", "--checkpoint", "c7.note")
write("b4", bundle)
wvkey = run("vkey", "wk.pub", "--origin", WNAME, "--witness")[1].strip()
write("wpol", open("pol").read().replace("quorum none\n", f"witness w1 {wvkey}\nquorum w1\n"))
rc, out, err = run("verify-proof", "b4", "--policy", "wpol")
check(rc == 0 and out.endswith("; cosigned by w1 (quorum w1)\n"), f"the bundle meets the quorum: {rc} {out!r} {err!r}")
write("c7.note", notes[7])
write("b4", run("prove", "led.db", "4", "--format", "tlog-proof", "--checkpoint", "c7.note")[1])
rc, out, err = run("verify-proof", "b4", "--policy", "wpol")
check(rc == 1 and out == "FAIL: checkpoint: the policy's quorum w1 is not met (cosigned by: none)\n",
      f"without the cosignature: {rc} {out!r}")

# serve --tiles --witnesses: each checkpoint it publishes asks the witness first
dflt = run("vkey", "k.pub")[1]
write("spol", f"log {dflt}quorum none\n")
p = subprocess.Popen([t.audit, "witness", "--listen", "127.0.0.1:0", "--key", "wk", "--origin", WNAME,
                      "--policy", "spol", "--state", "s.state"], stdout=subprocess.PIPE,
                     stderr=subprocess.DEVNULL, text=True)
wport = int(p.stdout.readline().rsplit(":", 1)[1])
write("wpol2", f"log {dflt}witness w1 {wvkey} http://127.0.0.1:{wport}\nquorum w1\n")
srv = subprocess.Popen([route, "--pool", "0", "--audit", "led.db", "--checkpoint-key", "k", "--tiles", "st",
                        "--witnesses", "wpol2", "--listen", "127.0.0.1:0", "serve"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
sport = int(srv.stdout.readline().strip().rstrip("/").rsplit(":", 1)[1])
def published(n):
    status, _, body = post(sport, "", path="/checkpoint", method="GET")
    lines = body.split("\n")
    check(status == 200 and lines[1] == str(n) and len(lines) == 7 and lines[5].startswith(f"— {WNAME} "),
          f"the published checkpoint of {n}, cosigned: {status} {body!r}")
    write("pub.note", body)
    rc, out, err = run("prove", "led.db", "2", "--format", "tlog-proof", "--checkpoint", "pub.note")
    write("pub.b", out)
    rc, out, err = run("verify-proof", "pub.b", "--policy", "wpol2")
    check(rc == 0 and out.endswith(f"entries of {dflt.split('+')[0]}; cosigned by w1 (quorum w1)\n"),
          f"a bundle against it meets the quorum: {rc} {out!r} {err!r}")
published(7)
c = http.client.HTTPConnection("127.0.0.1", sport, timeout=60)
c.request("POST", "/v1/run", body=b'{"code": "x = 1 + 1"}')
check(c.getresponse().status == 200, "a request answered")
published(8)
check(open("s.state").read().split("\n")[1].split(" ")[1] == "8", "the witness holds 8")
p.send_signal(signal.SIGTERM)
p.wait(timeout=60)
c = http.client.HTTPConnection("127.0.0.1", sport, timeout=60)
c.request("POST", "/v1/run", body=b'{"code": "x = 2 + 1"}')
c.getresponse().read()
status, _, body = post(sport, "", path="/checkpoint", method="GET")
check(status == 200 and body.split("\n")[1] == "9" and body.count("\n— ") == 1,
      f"the witness gone, the checkpoint is published uncosigned: {status} {body!r}")
srv.send_signal(signal.SIGTERM)
check(srv.wait(timeout=120) == 0, "serve stops")
err = srv.stderr.read()
check("calc-route: serve: witnesses: w1: cannot connect\n" in err, f"serve says which witness failed: {err!r}")

for args, message in [(["witness", "--listen", "127.0.0.1:0", "--key", "wk"], "witness wants --listen HOST:PORT"),
                      (["witness", "--listen", "nowhere", "--key", "wk", "--origin", WNAME, "--policy", "pol", "--state", "s"],
                       "witness: --listen nowhere: want an IPv4 HOST:PORT")]:
    rc, out, err = run(*args)
    check(rc == 2 and err.startswith("calc-audit: " + message), f"{args}: {rc} {err!r}")
write("bad.state", "not a state\n")
rc, out, err = run("witness", "--listen", "127.0.0.1:0", "--key", "wk", "--origin", WNAME, "--policy", "pol", "--state", "bad.state")
check(rc == 2 and err == "calc-audit: witness: bad.state is not a witness's state file\n", f"a bad state file: {rc} {err!r}")

t.close()
PY
