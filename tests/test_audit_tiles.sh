#!/bin/sh
# calc-audit tiles: the ledger as C2SP tlog-tiles, followed by a mirror written here in
# Python from the spec alone: it reads the checkpoint (its signature checked by OpenSSL), the
# entry bundles and the tiles, rebuilds every leaf, every level-1 hash and the root, and
# proves an older checkpoint's tree a prefix of the newer from the tiles. Full tiles are
# written once (a re-export after growth keeps them), a checkpoint of another tree is refused,
# and a record too long for an entry bundle leaves that bundle out, named.
B=${BUILD:-build}
exec /usr/bin/python3 - "$B" <<'PY'
import base64, json, os, shutil, subprocess, sys

sys.path.insert(0, "tests")
from tlog_ref import Tally, leaf_hash, mth, openssl_verify

t = Tally(sys.argv[1])
check, run, route = t.check, t.run, t.route
ORIGIN = "example.com/tiles"
run("keygen", "k")
pk = bytes.fromhex(open("k.pub").read().strip())
have_openssl = shutil.which("openssl") is not None
if not have_openssl:
    t.skip("the checkpoint's signature by OpenSSL: no openssl (scripts/install-deps.sh installs it)")

def batch(db, codes):
    lines = "".join(json.dumps({"code": c}) + "\n" for c in codes)
    p = subprocess.run([route, "--batch", "--pool", "0", "--audit", db], input=lines,
                       capture_output=True, text=True)
    check(p.returncode == 0, f"batch into {db}: {p.returncode} {p.stderr}")

def files(d):
    return sorted(os.path.relpath(os.path.join(r, f), d) for r, _, fs in os.walk(d) for f in fs)

def mirror(d):
    """Everything a mirror knows from the directory alone: (origin, size, leaves), or None."""
    note = open(os.path.join(d, "checkpoint"), "rb").read()
    text, _, sigs = note.rpartition(b"\n\n")
    text += b"\n"
    origin, size, root = text.decode().split("\n")[:3]
    size, root = int(size), base64.b64decode(root)
    if have_openssl:
        blob = base64.b64decode(sigs.split(b" ")[2])
        ok = openssl_verify(pk, text, blob[4:])
        check(ok, f"{d}: the checkpoint's signature verifies")
    def name(level, n, w):
        digits = f"{n % 1000:03d}"
        n //= 1000
        while n:
            digits = f"x{n % 1000:03d}/" + digits
            n //= 1000
        return f"tile/{level}/{digits}" + (f".p/{w}" if w < 256 else "")
    leaves, entries = [], []
    for n in range((size + 255) // 256):
        w = min(256, size - n * 256)
        b = open(os.path.join(d, name("entries", n, w)), "rb").read()
        while b:
            l = int.from_bytes(b[:2], "big")
            entries.append(b[2:2 + l])
            b = b[2 + l:]
        tile = open(os.path.join(d, name(0, n, w)), "rb").read()
        check(tile == b"".join(leaf_hash(e) for e in entries[n * 256:]), f"{d}: level-0 tile {n} holds its entries' hashes")
        leaves += [tile[i:i + 32] for i in range(0, len(tile), 32)]
    check(len(entries) == size and all(int.from_bytes(e[4:12], "big") == i + 1 for i, e in enumerate(entries)),
          f"{d}: {len(entries)} entries, each naming its seq")
    level, count = 1, size // 256
    hashes = [mth(leaves[i * 256:(i + 1) * 256]) for i in range(count)]
    while count:
        for n in range((count + 255) // 256):
            w = min(256, count - n * 256)
            tile = open(os.path.join(d, name(level, n, w)), "rb").read()
            check(tile == b"".join(hashes[n * 256:n * 256 + w]), f"{d}: level-{level} tile {n}")
        level, count = level + 1, count // 256
        hashes = [mth(hashes[i * 256:(i + 1) * 256]) for i in range(count)]
    check(mth(leaves) == root, f"{d}: the root rebuilt from the tiles is the checkpoint's")
    return origin, size, leaves, entries

batch("led.db", [f"x = {i} * 3" for i in range(1, 601)])
rc, out, err = run("tiles", "led.db", "--out", "t", "--key", "k", "--origin", ORIGIN)
check(rc == 0 and out == "ok: the tree of 600 records as 4 tiles and 3 entry bundles in t (8 files written)\n",
      f"tiles of 600: {rc} {out!r} {err!r}")
check(files("t") == ["checkpoint", "tile/0/000", "tile/0/001", "tile/0/002.p/88", "tile/1/000.p/2",
                     "tile/entries/000", "tile/entries/001", "tile/entries/002.p/88"], f"the files: {files('t')}")
origin, size, leaves600, entries = mirror("t")
check((origin, size) == (ORIGIN, 600), f"the checkpoint: {origin} {size}")
for seq in (1, 256, 257, 600):
    _, proof, _ = run("prove", "led.db", str(seq))
    check(entries[seq - 1] == base64.b64decode(proof.split("\n")[3]), f"entry {seq} is record {seq}'s encoding")
shutil.copy("t/checkpoint", "c600.note")
ino = os.stat("t/tile/0/000").st_ino

batch("led.db", [f"y = {i} + 1" for i in range(300)])
rc, out, err = run("tiles", "led.db", "--out", "t", "--key", "k", "--origin", ORIGIN)
check(rc == 0 and out == "ok: the tree of 900 records as 5 tiles and 4 entry bundles in t (6 files written)\n",
      f"tiles of 900 over those of 600: {rc} {out!r} {err!r}")
check(os.stat("t/tile/0/000").st_ino == ino, "a full tile is written once")
_, size, leaves900, _ = mirror("t")
old = open("c600.note").read().split("\n")
check(size == 900 and mth(leaves900[:600]) == base64.b64decode(old[2]),
      "the old checkpoint's tree is a prefix of the new, from the tiles alone")

# a full tile already there with other bytes is not replaced: the export is refused
with open("t/tile/0/001", "r+b") as f:
    f.seek(100)
    f.write(b"X")
rc, out, err = run("tiles", "led.db", "--out", "t", "--key", "k", "--origin", ORIGIN)
check(rc == 1 and err == f"calc-audit: tiles: t/tile/0/001 holds other bytes than this ledger's (another ledger's export, or this one was rewritten)\n",
      f"a changed full tile: {rc} {out!r} {err!r}")

# a checkpoint given: its tree exported, whatever the ledger holds past it
rc, out, err = run("tiles", "led.db", "--out", "t600", "--checkpoint", "c600.note")
check(rc == 0 and out.startswith("ok: the tree of 600 records as 4 tiles") and
      open("t600/checkpoint").read() == open("c600.note").read(), f"tiles --checkpoint: {rc} {out!r} {err!r}")
with open("forged.note", "w") as f:
    f.write("\n".join(old[:2] + [base64.b64encode(leaves600[0]).decode()] + old[3:]))
rc, out, err = run("tiles", "led.db", "--out", "t2", "--checkpoint", "forged.note")
check(rc == 1 and err == "calc-audit: tiles: the checkpoint's root is not this ledger's tree of 600 records\n"
      and not os.path.exists("t2/checkpoint"), f"a checkpoint of another tree: {rc} {err!r}")

# a record over 65535 bytes: its bundle left out, its leaf still in the tiles
batch("long.db", ["x = 1", "x = 2", "x = 3", 's = "ab" * 40000\nprint(s)'])
rc, out, err = run("tiles", "long.db", "--out", "tl", "--key", "k")
check(rc == 0 and out == "ok: the tree of 4 records as 1 tiles and 0 entry bundles in tl (2 files written)\n"
      "1 entry bundles left out, the last tile/entries/000.p/4 (record seq 4 is over 65535 bytes)\n",
      f"a long record: {rc} {out!r} {err!r}")
check(files("tl") == ["checkpoint", "tile/0/000.p/4"], f"a long record's files: {files('tl')}")

for args in (["tiles", "led.db", "--key", "k"], ["tiles", "led.db", "--out", "x"],
             ["tiles", "led.db", "--out", "x", "--key", "k", "--checkpoint", "c600.note"]):
    rc, out, err = run(*args)
    check(rc == 2 and err.startswith("calc-audit: tiles wants --out DIR, and --checkpoint NOTE or --key FILE"),
          f"{args}: {rc} {err!r}")

# calc-route serve --tiles: the same files over HTTP, the checkpoint brought up to the head
import http.client, signal, urllib.request

def serve(*args):
    p = subprocess.Popen([route, "--pool", "0", *args, "--listen", "127.0.0.1:0", "serve"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = p.stdout.readline()
    if not line.startswith("calc-route: serving on "):
        p.kill()
        return p, None, p.stderr.read()
    return p, line.split()[-1].rstrip("/"), ""

def get(base, path):
    host, port = base.split("//")[1].split(":")
    c = http.client.HTTPConnection(host, int(port), timeout=60)
    c.request("GET", path)
    r = c.getresponse()
    return r.status, dict(r.getheaders()), r.read()

p, base, err = serve("--audit", "led.db", "--checkpoint-key", "k", "--tiles", "st")
check(base is not None, f"serve --tiles starts: {err}")
if base:
    status, headers, body = get(base, "/checkpoint")
    lines = body.decode().split("\n")
    check(status == 200 and headers.get("Cache-Control") == "no-cache" and
          headers.get("Content-Type") == "text/plain; charset=utf-8" and lines[1] == "900",
          f"GET /checkpoint: {status} {headers} {body[:80]!r}")
    # a mirror that has only the URL
    os.makedirs("http/tile", exist_ok=True)
    with open("http/checkpoint", "wb") as f:
        f.write(body)
    names = ["tile/0/000", "tile/0/001", "tile/0/002", "tile/0/003.p/132", "tile/1/000.p/3",
             "tile/entries/000", "tile/entries/001", "tile/entries/002", "tile/entries/003.p/132"]
    for n in names:
        status, headers, data = get(base, "/" + n)
        check(status == 200 and headers.get("Cache-Control") == "public, max-age=31536000, immutable" and
              headers.get("Content-Type") == "application/octet-stream", f"GET /{n}: {status} {headers}")
        os.makedirs(os.path.dirname(os.path.join("http", n)), exist_ok=True)
        with open(os.path.join("http", n), "wb") as f:
            f.write(data)
    _, size, leaves, _ = mirror("http")
    check(size == 900 and leaves == leaves900, "the mirror over HTTP rebuilds the tree of 900")
    req = urllib.request.Request(base + "/v1/run", data=b'{"code": "z = 41 + 1"}', method="POST")
    check(urllib.request.urlopen(req, timeout=60).status == 200, "a request answered")
    status, _, body = get(base, "/checkpoint")
    check(status == 200 and body.decode().split("\n")[1] == "901", f"the checkpoint covers it: {body[:60]!r}")
    status, _, data = get(base, "/tile/0/003.p/133")
    check(status == 200 and data[-32:] == leaf_hash(base64.b64decode(run("prove", "led.db", "901")[1].split("\n")[3])),
          "its leaf in the new partial tile")
    for bad in ("/tile/0/../../k", "/tile/0%2f..%2f..%2fk", "/tile/0/004", "/tile/"):
        status, _, body = get(base, bad)
        check(status == 404, f"GET {bad}: {status} {body[:100]!r}")
    p.send_signal(signal.SIGTERM)
    check(p.wait(timeout=120) == 0, "serve stops")
p, base, err = serve("--audit", "led.db")
if base:
    status, _, _ = get(base, "/checkpoint")
    check(status == 404, f"without --tiles, no /checkpoint: {status}")
    p.send_signal(signal.SIGTERM)
    p.wait(timeout=120)
p = subprocess.run([route, "--audit", "led.db", "--tiles", "x", "--listen", "127.0.0.1:0", "serve"],
                   capture_output=True, text=True, timeout=60)
check(p.returncode == 2 and "--tiles wants --checkpoint-key" in p.stderr, f"--tiles without a key: {p.returncode} {p.stderr!r}")

t.close()
PY
