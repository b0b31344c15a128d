"""The fleet test's driver (tests/test_fleet.sh makes the namespaces, the ledger's server and
the ledger, then runs this inside the load balancer's namespace). It starts three
`calc-route serve` hosts (each in its own namespace) and HAProxy, puts a bounded load through
HAProxy, SIGKILLs one host, SIGTERMs another, stops PostgreSQL and starts it again, then checks
the answers the clients got against the ledger. Prints `ok NAME` or `FAIL NAME: why` a check,
`info ...` lines, and exits 0 when the scenario ran to its end."""
import http.client
import json
import os
import signal
import subprocess
import sys
import threading
import time

BUILD, PGDIR, LEDGER, TOKEN, OUT, PORT = sys.argv[1:7]
HOSTS = sys.argv[7:10]            # namespace:address, for h1 h2 h3
CLIENTS = 4
MAX_REQUESTS = 40000              # the load's fixed ceiling
DEADLINE = time.monotonic() + 150  # its hard time cap
# The health check HAProxy and the test make; FLEET_HEALTH=/healthz runs the rest against a
# serve that has no /readyz.
HEALTH = os.environ.get("FLEET_HEALTH", "/readyz")
KILLED, TERMED, LAST = "h1", "h2", "h3"


def check(name, good, why=""):
    print(f"ok {name}" if good else f"FAIL {name}: {why}", flush=True)


def info(text):
    print(f"info {text}", flush=True)


# ---- the hosts and the load balancer --------------------------------------------------------

hosts = {}
for k, spec in enumerate(HOSTS, 1):
    ns, addr = spec.split(":")
    log = open(f"{OUT}/h{k}.log", "w")
    p = subprocess.Popen(["ip", "netns", "exec", ns, f"{BUILD}/calc-route", "serve",
                          "--listen-public", "--listen", f"{addr}:8080", "--audit", LEDGER,
                          "--token-file", TOKEN, "--pool", "1"],
                         stdout=log, stderr=subprocess.STDOUT)
    hosts[f"h{k}"] = {"proc": p, "addr": addr}

cfg = open(os.path.join(os.path.dirname(__file__), "haproxy.cfg")).read()
cfg = cfg.replace("@PORT@", PORT).replace("@HEALTH@", HEALTH)
for k in (1, 2, 3):
    cfg = cfg.replace(f"@HOST{k}@", f"{hosts[f'h{k}']['addr']}:8080")
open(f"{OUT}/haproxy.cfg", "w").write(cfg)
haproxy = subprocess.Popen(["haproxy", "-db", "-f", f"{OUT}/haproxy.cfg"],
                           stdout=open(f"{OUT}/haproxy.log", "w"), stderr=subprocess.STDOUT)


def get(addr, path, port=8080):
    """A GET on a connection of its own, as a health checker makes it: the status, or None
    when the connection is refused."""
    try:
        c = http.client.HTTPConnection(addr, port, timeout=5)
        c.request("GET", path)
        st = c.getresponse().status
        c.close()
        return st
    except (OSError, http.client.HTTPException):
        return None


def wait_for(what, pred, bound):
    """Polls pred until it holds or bound seconds pass (then the scenario stops, failing)."""
    end = min(time.monotonic() + bound, DEADLINE)
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.02)
    check(f"scenario: {what}", False, f"not within {bound} s")
    return False


# ---- the load -----------------------------------------------------------------------------

results = []          # one dict a request, appended when it ends
lock = threading.Lock()
sent = [0]
stop = threading.Event()
token = open(TOKEN).read().strip()


def code_of(n):
    # Every tenth request needs the sandbox (the warm pool); the rest run in-process. The
    # number makes each request's code its own.
    if n % 10 == 0:
        return f'import json\nans = json.loads("{n}") + 1'
    return f"ans = {n} + 1"


def send(n, addr="127.0.0.1", port=None, by=None):
    """POST /v1/run of request n through HAProxy (or straight to a host at addr, named by);
    its outcome is appended to results and returned."""
    r = {"n": n, "id": f"fleet-{n}", "code": code_of(n), "t0": time.monotonic()}
    body = json.dumps({"id": r["id"], "code": r["code"]})
    # A connection a request, so that a request its host dropped is answered 502 naming
    # the host (docs/DESIGN.md, serve in a fleet).
    conn = http.client.HTTPConnection(addr, int(port or PORT), timeout=60)
    try:
        conn.request("POST", "/v1/run", body,
                     {"Content-Type": "application/json", "Connection": "close",
                      "Authorization": f"Bearer {token}"})
        resp = conn.getresponse()
        raw = resp.read()
        r["status"] = resp.status
        r["by"] = by or resp.getheader("X-Served-By", "")
        r["type"] = resp.getheader("Content-Type", "")
        try:
            r["body"] = json.loads(raw)
        except ValueError:
            r["body"] = raw.decode("utf-8", "replace")[:200]
    except (OSError, http.client.HTTPException) as e:
        # Never sent again: each id is one attempt, so the ledger can be held to it.
        r["status"], r["by"], r["type"], r["body"] = None, "", "", repr(e)
    conn.close()
    r["t1"] = time.monotonic()
    with lock:
        results.append(r)
    return r


def next_n():
    with lock:
        if sent[0] >= MAX_REQUESTS:
            return None
        sent[0] += 1
        return 1000000 + sent[0]


def client():
    while not stop.is_set() and time.monotonic() < DEADLINE:
        n = next_n()
        if n is None:
            return
        send(n)
        time.sleep(0.003)   # a paced load: the ledger stays small enough to check fast


def count(pred):
    with lock:
        return sum(1 for r in results if pred(r))


def ok_from(h, after=0.0):
    return count(lambda r: r["status"] == 200 and r["by"] == h and r["t0"] > after)


def ledger_down(r):
    b = r.get("body")
    return (r["status"] == 503 and r["type"].startswith("application/problem+json") and
            isinstance(b, dict) and b.get("reason") == "ledger_unavailable")


# ---- the scenario ---------------------------------------------------------------------------

ev = {}
poll = []             # (time, status) of h2's health check during its stop


def poller(addr):
    while time.monotonic() < DEADLINE:
        st = get(addr, HEALTH)
        poll.append((time.monotonic(), st))
        if st is None and hosts[TERMED]["proc"].poll() is not None:
            return
        time.sleep(0.01)


def scenario():
    for h in hosts:
        if not wait_for(f"{h} ready", lambda: get(hosts[h]["addr"], HEALTH) in (200, 404), 60):
            return
        st = get(hosts[h]["addr"], HEALTH)
        if st != 200:
            check(f"scenario: {h} ready", False, f"GET {HEALTH}: {st}")
            return
    if not wait_for("HAProxy listening", lambda: get("127.0.0.1", "/", int(PORT)) is not None, 30):
        return
    threads = [threading.Thread(target=client) for _ in range(CLIENTS)]
    for t in threads:
        t.start()
    ev["threads"] = threads
    if not wait_for("each host answers through HAProxy",
                    lambda: all(ok_from(h) >= 20 for h in hosts), 60):
        return
    # SIGKILL: whatever h1 was running is lost with it.
    ev["kill"] = time.monotonic()
    hosts[KILLED]["proc"].send_signal(signal.SIGKILL)
    hosts[KILLED]["proc"].wait()
    if not wait_for("answers after the SIGKILL",
                    lambda: ok_from(LAST, ev["kill"]) + ok_from(TERMED, ev["kill"]) >= 30, 30):
        return
    # SIGTERM: h2 fails its health check, drains, exits 0.
    pt = threading.Thread(target=poller, args=(hosts[TERMED]["addr"],), daemon=True)
    pt.start()
    if not wait_for("h2's health check seen passing", lambda: any(s == 200 for _, s in poll), 10):
        return
    ev["term"] = time.monotonic()
    hosts[TERMED]["proc"].send_signal(signal.SIGTERM)
    try:
        ev["term_rc"] = hosts[TERMED]["proc"].wait(timeout=60)
    except subprocess.TimeoutExpired:
        check("scenario: h2 exits after SIGTERM", False, "still running after 60 s")
        return
    pt.join()
    if not wait_for("answers after the SIGTERM", lambda: ok_from(LAST, ev["term"]) >= 30, 30):
        return
    # The ledger's server goes away, stays away until serve has refused requests for it, and
    # comes back; serve reconnects by itself.
    subprocess.run(["sh", "tests/pg-server.sh", "stop", PGDIR], check=True)
    ev["down"] = time.monotonic()
    wait_for("requests refused while the ledger is down",
             lambda: count(lambda r: r["t0"] > ev["down"] and r["status"] != 200) >= 5, 30)
    # Through HAProxy, a host whose /readyz fails for the ledger is soon out of the rotation
    # and HAProxy answers for it: straight to a host, the request must be refused by name.
    def direct_refused():
        n = next_n()
        return n is not None and ledger_down(send(n, hosts[LAST]["addr"], 8080, LAST))
    wait_for("a request straight to a host refused as ledger_unavailable", direct_refused, 30)
    ev["readyz_down"] = get(hosts[LAST]["addr"], HEALTH)
    ev["up0"] = time.monotonic()
    # restart on a stopped server starts it with the options it last ran with.
    subprocess.run(["sh", "tests/pg-server.sh", "restart", PGDIR], check=True,
                   stderr=subprocess.DEVNULL)
    ev["up"] = time.monotonic()
    if not wait_for("answers once the ledger is back", lambda: ok_from(LAST, ev["up"]) >= 30, 60):
        return
    ev["done"] = True


scenario()
stop.set()
for t in ev.get("threads", []):
    t.join()
for h in (TERMED, LAST):
    p = hosts[h]["proc"]
    if p.poll() is None:
        p.send_signal(signal.SIGTERM)
last_rc = hosts[LAST]["proc"].wait(timeout=60)
haproxy.terminate()
haproxy.wait(timeout=30)
if "done" not in ev:
    sys.exit(1)

# ---- the checks -----------------------------------------------------------------------------

info(f"{len(results)} requests by {CLIENTS} clients")
A = f"{BUILD}/calc-audit"
head = subprocess.run([A, "head", LEDGER], capture_output=True, text=True).stdout.strip()
v = subprocess.run([A, "verify", LEDGER], capture_output=True, text=True)
nrec = head.split(" ")[0]
check("verify", v.returncode == 0 and v.stdout == f"ok: {nrec} records, head seq {head}\n"
      "no checkpoints: a consistent rewrite of the whole file would go unnoticed; sign with "
      "`calc-audit checkpoint`\n",
      f"exit {v.returncode}: {v.stdout!r} {v.stderr!r}")

ex = subprocess.run([A, "export", LEDGER], capture_output=True, text=True, check=True).stdout
records = [json.loads(line) for line in ex.splitlines()]
check("export", str(len(records)) == nrec, f"{len(records)} records exported, head {head}")
by_code = {}
for rec in records:
    by_code.setdefault(rec["code"], []).append(rec)
by_req = {r["code"]: r for r in results}
foreign = [c for c in by_code if c not in by_req]
check("no record of a request not sent", not foreign, f"{len(foreign)}: {foreign[:3]}")
twice = [c for c, l in by_code.items() if len(l) > 1]
check("no request recorded twice", not twice, f"{len(twice)}: {twice[:3]}")

# 2. every 200 has its record: at the seq and hash it gave, the code it sent, the right answer.
bad = []
for r in results:
    if r["status"] != 200:
        continue
    b, recs = r["body"], by_code.get(r["code"], [])
    want = str(r["n"] + 1)
    if not (isinstance(b, dict) and b.get("id") == r["id"] and b.get("status") == "ok" and
            b.get("value", {}).get("repr") == want):
        bad.append(f"{r['id']}: answer {str(b)[:120]}")
    elif len(recs) != 1 or recs[0]["seq"] != b["audit"]["seq"] or \
            recs[0]["hash"] != b["audit"]["hash"] or recs[0]["value_repr"] != want:
        bad.append(f"{r['id']}: audit {b.get('audit')} records {[x['seq'] for x in recs]}")
oks = count(lambda r: r["status"] == 200)
check("every 200 has its one record", not bad and oks > 0, f"{len(bad)} of {oks}: {bad[:3]}")


# 3. what was not answered 200, and why; the records of requests not answered 200.
def kind(r):
    b = r["body"]
    if r["status"] == 200:
        return "ok"
    if r["status"] == 502 and r["by"] == KILLED:
        return "in flight at the killed host"
    # Not run there (the stray check below holds them to no record): refused while it
    # drained, or cut when its listener closed on a connection not yet taken.
    if r["status"] in (502, 503) and r["by"] == TERMED:
        return f"{r['status']} from the stopping host"
    if ledger_down(r):
        return "ledger unavailable"
    # HAProxy's own page: no host was up, or none it tried took the connection (it names the
    # last it tried); nothing was sent.
    if r["status"] == 503 and isinstance(b, str) and b.startswith("<html>"):
        return "503 from HAProxy"
    return "unexpected"


kinds = {}
for r in results:
    kinds.setdefault(kind(r), []).append(r)
info("outcomes: " + ", ".join(f"{k} {len(l)}" for k, l in sorted(kinds.items())))
odd = kinds.get("unexpected", [])
check("every failure has a cause", not odd,
      f"{len(odd)}: " + "; ".join(f"{r['id']} {r['status']} by '{r['by']}' {str(r['body'])[:160]}"
                                  for r in odd[:3]))
unanswered = [by_req[c] for c in by_code if c in by_req and by_req[c]["status"] != 200]
# A record without its answer: the host was killed after the commit, or PostgreSQL went down
# between a COMMIT and its acknowledgement (audit/pg.c: the record stands, the answer is
# refused). Nothing else may leave one.
stray = [r for r in unanswered if kind(r) not in ("in flight at the killed host",
                                                  "ledger unavailable")]
info(f"records without an answer: {len(unanswered)} "
     f"({sum(1 for r in unanswered if kind(r) == 'in flight at the killed host')} at the killed host)")
check("records without an answer only from the killed host", not stray,
      "; ".join(f"{r['id']} {r['status']} by '{r['by']}'" for r in stray[:3]))

# 4. the ledger down: serve answered 503 ledger_unavailable, nothing 200; back by itself.
during = [r for r in results if r["t0"] > ev["down"] and r["t1"] < ev["up0"]]
refused = [r for r in during if ledger_down(r)]
wrong = [r for r in during if r["by"] and not ledger_down(r)]
check("ledger down: 503 ledger_unavailable (problem+json)", refused and not wrong,
      f"{len(refused)} of {len(during)}; others: " +
      "; ".join(f"{r['status']} {r['type']} {str(r['body'])[:200]}" for r in wrong[:2]))
check(f"ledger down: {HEALTH} of a host 503", ev.get("readyz_down") == 503 or HEALTH != "/readyz",
      f"GET {HEALTH}: {ev.get('readyz_down')}")
check("ledger down: no 200", not any(r["status"] == 200 for r in during),
      f"{sum(1 for r in during if r['status'] == 200)} answered 200")
back = ok_from(LAST, ev["up"])
check("ledger back: answers again", back >= 30, f"{back} answered 200 after the restart")

# 5. the SIGTERMed host: its health check failed while it still listened, then it exited 0.
after = [s for t, s in poll if t >= ev["term"]]
first_gone = after.index(None) if None in after else len(after)
check("SIGTERM: exit 0", ev["term_rc"] == 0, f"exit {ev['term_rc']}")
check(f"SIGTERM: {HEALTH} 503 before it stopped listening", 503 in after[:first_gone],
      f"statuses after SIGTERM: {sorted(set(after), key=str)}")
check("last host: SIGTERM exit 0", last_rc == 0, f"exit {last_rc}")
sys.exit(0)
