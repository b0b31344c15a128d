#!/usr/bin/python3
"""The examiner's side, in figures (never pass/fail): the ledger's append rate, a checkpoint's
way to its cosignature with one local witness (sign, prove consistency, add-checkpoint), and
the rate `calc-route serve --tiles` serves a full tile and the checkpoint at.

    /usr/bin/python3 bench/bench_tlog.py [BUILD_DIR] [RECORDS] [ROUNDS]

The anchor (issue 33): Tessera, ~10,000 appends/s a node, checkpoints integrated in 1-3 s."""
import http.client, json, os, shutil, statistics, subprocess, sys, tempfile, threading, time

B = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build")
N = int(sys.argv[2]) if len(sys.argv) > 2 else 5000
ROUNDS = int(sys.argv[3]) if len(sys.argv) > 3 else 50
route, audit = os.path.join(B, "calc-route"), os.path.join(B, "calc-audit")
tmp = tempfile.mkdtemp()
os.chdir(tmp)


def run(*args, **kw):
    return subprocess.run([audit, *args], capture_output=True, text=True, check=True, **kw).stdout


def batch(n, start=0):
    lines = "".join(json.dumps({"code": f"x = {i} * 3"}) + "\n" for i in range(start, start + n))
    t0 = time.perf_counter()
    subprocess.run([route, "--batch", "--jobs", "8", "--pool", "0", "--audit", "led.db"], input=lines,
                   capture_output=True, text=True, check=True)
    return time.perf_counter() - t0


def server(*argv):
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    line = p.stdout.readline()
    return p, int(line.strip().rstrip("/").rsplit(":", 1)[1])


def post(port, body):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    c.request("POST", "/add-checkpoint", body=body.encode())
    r = c.getresponse()
    return r.status, r.read().decode()


run("keygen", "k")
run("keygen", "w")
s = batch(N)
print(f"ledger: {N} records appended by one calc-route --batch --jobs 8 in {s:.2f} s: {N / s:.0f} records/s "
      "(in-process arithmetic, group commit)")

origin = "example.com/bench"
with open("pol", "w") as f:
    f.write(f"log {run('vkey', 'k.pub', '--origin', origin)}quorum none\n")
w, port = server(audit, "witness", "--listen", "127.0.0.1:0", "--key", "w", "--origin",
                 "witness.example/bench", "--policy", "pol", "--state", "w.state")
note = run("checkpoint", "led.db", "--key", "k", "--origin", origin)
post(port, "old 0\n\n" + note)
held, whole, witness = N, [], []
for r in range(ROUNDS):
    batch(1, N + r)
    t0 = time.perf_counter()
    note = run("checkpoint", "led.db", "--key", "k", "--origin", origin)
    proof = run("prove", "led.db", "--consistency", str(held), "0").split("\n")[3:-1]
    body = f"old {held}\n" + "".join(h + "\n" for h in proof) + "\n" + note
    t1 = time.perf_counter()
    status, _ = post(port, body)
    t2 = time.perf_counter()
    if status != 200:
        sys.exit(f"the witness answered {status}")
    held += 1
    whole.append(t2 - t0)
    witness.append(t2 - t1)
w.terminate()
w.wait()
q = lambda xs, p: sorted(xs)[min(len(xs) - 1, int(p * len(xs)))] * 1000
print(f"checkpoint to cosignature, {ROUNDS} rounds on a tree of ~{N} records: median "
      f"{statistics.median(whole) * 1000:.1f} ms, p95 {q(whole, 0.95):.1f} ms (signing, proving "
      f"and add-checkpoint; the witness's part: median {statistics.median(witness) * 1000:.2f} ms,"
      f" p95 {q(witness, 0.95):.2f} ms, its state fsynced each time)")

srv, sport = server(route, "--pool", "0", "--audit", "led.db", "--checkpoint-key", "k",
                    "--tiles", "tiles", "--listen", "127.0.0.1:0", "serve")


def rate(path, threads=4, seconds=3.0):
    count = [0] * threads
    stop = time.perf_counter() + seconds

    def one(i):
        c = http.client.HTTPConnection("127.0.0.1", sport, timeout=60)
        while time.perf_counter() < stop:
            c.request("GET", path)
            r = c.getresponse()
            r.read()
            if r.status != 200:
                raise SystemExit(f"GET {path}: {r.status}")
            count[i] += 1
    ts = [threading.Thread(target=one, args=(i,)) for i in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return sum(count) / seconds


print(f"serve --tiles: GET /tile/0/000 (8 KiB) {rate('/tile/0/000'):.0f}/s, GET /checkpoint "
      f"(head unchanged) {rate('/checkpoint'):.0f}/s, 4 keep-alive clients (Python's, on the same "
      "2 cores)")
srv.terminate()
srv.wait()
shutil.rmtree(tmp)
