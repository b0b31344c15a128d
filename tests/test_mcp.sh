#!/bin/sh
# calc-route mcp spoken to line by line: the exact JSON-RPC answers to initialize (version
# negotiation), 2026-07-28's stateless requests (_meta's version, resultType, the cache hints,
# -32022), ping, tools/list, each tool, notifications (never answered), batches (only
# under 2025-03-26), the error codes, malformed and oversized lines (the server answers and
# goes on), a last line without its newline, EOF (exit 0), the ledger under --audit, and
# notifications/cancelled (a running call interrupted, a waiting one dropped).
B=${BUILD:-build}
exec /usr/bin/python3 - "$B" <<'PY'
import json, os, select, subprocess, sys, tempfile

B = os.path.abspath(sys.argv[1])
ROUTE = os.path.join(B, "calc-route")
passed = failed = skipped = 0

def check(cond, what):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print("FAIL", what, file=sys.stderr)

# Under make check-tsan (CR_TEST_NO_SANDBOX) the server keeps no warm pool, its default:
# the sandbox's clone() is more than ThreadSanitizer follows.
NO_POOL = ["--pool", "0"] if os.environ.get("CR_TEST_NO_SANDBOX") else []


class Server:
    def __init__(self, *args):
        self.p = subprocess.Popen([ROUTE, *NO_POOL, *args, "mcp"], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.buf = b""

    def send(self, obj_or_bytes):
        data = obj_or_bytes if isinstance(obj_or_bytes, bytes) else \
            json.dumps(obj_or_bytes).encode() + b"\n"
        self.p.stdin.write(data)
        self.p.stdin.flush()

    def line(self, timeout=30):
        """The next line of output, or None when none comes within the timeout."""
        fd = self.p.stdout.fileno()
        while b"\n" not in self.buf:
            r, _, _ = select.select([fd], [], [], timeout)
            if not r:
                return None
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                return None
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def ask(self, msg):
        self.send(msg)
        return self.line()

    def close(self):
        self.p.stdin.close()
        rc = self.p.wait(30)
        err = self.p.stderr.read()
        return rc, self.buf + self.p.stdout.read(), err

def init(s, version="2025-06-18", id=0):
    return s.ask({"jsonrpc": "2.0", "id": id, "method": "initialize",
                  "params": {"protocolVersion": version, "capabilities": {},
                             "clientInfo": {"name": "test", "version": "1"}}})

def call(s, tool, args, id=1):
    return s.ask({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                  "params": {"name": tool, "arguments": args}})

def err(id, code, message, data=None):
    e = {"code": code, "message": message}
    if data is not None:
        e["data"] = data
    return {"jsonrpc": "2.0", "id": id, "error": e}

def strip(sc):
    """The structured result without what varies from run to run."""
    sc = dict(sc)
    sc.pop("timings", None)
    return sc

VERSIONS = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"]   # initialize's
MODERN = "2026-07-28"   # no initialize: each request names it in _meta
ALL = [MODERN] + VERSIONS
INFO = {"name": "calc-route", "title": "calcroute", "version": "0.1.0"}

# ---- lifecycle ----
s = Server("--tier", "none")
r = init(s)
check(r == {"jsonrpc": "2.0", "id": 0, "result": {
    "protocolVersion": "2025-06-18", "capabilities": {"tools": {"listChanged": False}},
    "serverInfo": INFO,
    "instructions": "calculate: exact in-process arithmetic (refuses what needs a sandbox); "
                    "run_python: any Python, sandboxed when needed; explain: where code would "
                    "run and why."}}, f"initialize: {r}")
# A notification is never answered: the next line is the ping's.
s.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
s.send({"jsonrpc": "2.0", "method": "no/such/notification", "params": {}})
r = s.ask({"jsonrpc": "2.0", "id": "p", "method": "ping"})
check(r == {"jsonrpc": "2.0", "id": "p", "result": {}}, f"ping after notifications: {r}")
INSTRUCTIONS = ("calculate: exact in-process arithmetic (refuses what needs a sandbox); "
                "run_python: any Python, sandboxed when needed; explain: where code would "
                "run and why.")
r = s.ask({"jsonrpc": "2.0", "id": 2, "method": "server/discover"})
check(r == {"jsonrpc": "2.0", "id": 2, "result": {
    "supportedVersions": ALL, "capabilities": {"tools": {"listChanged": False}},
    "instructions": INSTRUCTIONS}}, f"server/discover: {r}")

# ---- 2026-07-28: stateless, each request with its version in _meta ----
def meta(**extra):
    return {"_meta": {"io.modelcontextprotocol/protocolVersion": MODERN,
                      "io.modelcontextprotocol/clientCapabilities": {},
                      "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"}},
            **extra}
STAMP = {"resultType": "complete", "_meta": {"io.modelcontextprotocol/serverInfo": INFO}}
m = Server("--tier", "none")   # no initialize first
r = m.ask({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": meta()})
check(r == {"jsonrpc": "2.0", "id": 1, "result": {
    "supportedVersions": ALL, "capabilities": {"tools": {"listChanged": False}},
    "instructions": INSTRUCTIONS, "ttlMs": 3600000, "cacheScope": "public", **STAMP}},
    f"2026-07-28 server/discover: {r}")
r = m.ask({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": meta()})
res = r["result"]
check([t["name"] for t in res.get("tools", [])] == ["calculate", "run_python", "explain"] and
      {k: v for k, v in res.items() if k != "tools"} ==
      {"ttlMs": 3600000, "cacheScope": "public", **STAMP}, f"2026-07-28 tools/list: {r}")
r = m.ask({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
           "params": meta(name="calculate", arguments={"code": "x = 0.1 + 0.2"})})
res = r["result"]
check(res["content"] == [{"type": "text", "text": "= 0.3  (exactly 3/10)"}] and
      res["isError"] is False and res["resultType"] == "complete" and
      res["_meta"] == STAMP["_meta"], f"2026-07-28 tools/call: {r}")
r = m.ask({"jsonrpc": "2.0", "id": 4, "method": "ping", "params": meta()})
check(r == err(4, -32601, "method not found: ping"), f"2026-07-28 has no ping: {r}")
r = m.ask({"jsonrpc": "2.0", "id": 5, "method": "tools/list", "params": {"_meta": {
    "io.modelcontextprotocol/protocolVersion": "2099-01-01"}}})
check(r == err(5, -32022, "Unsupported protocol version",
               {"supported": ALL, "requested": "2099-01-01"}), f"unsupported version: {r}")
# A handshake client asking for 2026-07-28 gets the newest revision that has a handshake.
r = init(m, MODERN, id=6)
check(r["result"]["protocolVersion"] == "2025-11-25", f"initialize {MODERN}: {r}")
check(m.close()[0] == 0, "2026-07-28 session ends with 0")

# ---- tools/list ----
r = s.ask({"jsonrpc": "2.0", "id": 3, "method": "tools/list"})
tools = r["result"]["tools"]
check([t["name"] for t in tools] == ["calculate", "run_python", "explain"], f"tool names: {tools}")
for t in tools:
    check(t["inputSchema"]["required"] == ["code"] and t["inputSchema"]["type"] == "object",
          f"{t['name']} inputSchema")
    check(t["outputSchema"]["required"] == ["route", "status", "reasons", "value", "stdout",
                                            "error"], f"{t['name']} outputSchema")
check(tools[0]["annotations"] == {"readOnlyHint": True, "idempotentHint": True,
                                  "openWorldHint": False}, "calculate's annotations")
check(list(r) == ["jsonrpc", "id", "result"] and list(r["result"]) == ["tools"],
      "tools/list has no nextCursor: one page")

# ---- calculate ----
r = call(s, "calculate", {"code": "x = 0.1 + 0.2"})
res = r["result"]
check(res["content"] == [{"type": "text", "text": "= 0.3  (exactly 3/10)"}] and
      res["isError"] is False, f"calculate text: {res}")
check(strip(res["structuredContent"]) == {
    "route": "inprocess", "status": "ok", "lang": "python", "reasons": [],
    "value": {"repr": "0.3", "type": "float", "fraction": "3/10", "exact": True, "from": "x",
              "native": {"float": "3/10"}, "native_why": None},
    "stdout": "", "stdout_truncated": False, "stdout_replaced": False, "stderr": "",
    "stderr_replaced": False, "error": None, "limit": None, "artifacts": [],
    "tier_note": None, "tier_why": None, "dropped": None, "seed": None, "ops": 2, "explained": False,
    "audit": None}, f"calculate structured: {res['structuredContent']}")
r = call(s, "calculate", {"code": "print(a * b)\nans = a * b", "vars": {"a": 0.1, "b": 3}})
res = r["result"]
# A JSON number is a Python float, as it would be in Python; its text is exact.
check(res["content"][0]["text"] == "0.30000000000000003\n= 0.30000000000000003  (exactly "
      "30000000000000003/100000000000000000)" and
      res["structuredContent"]["value"]["from"] == "ans", f"calculate vars: {res}")
r = call(s, "calculate", {"code": "(5829 - 5735) / 5735", "precision": 10})
check(r["result"]["content"][0]["text"] == "= 0.01639058413  (exactly 94/5735)",
      f"calculate precision: {r}")
r = call(s, "calculate", {"code": "1/0"})
res = r["result"]
check(res["isError"] is True and res["content"] == [
    {"type": "text", "text": "ZeroDivisionError: division by zero (line 1, col 1)"}] and
    res["structuredContent"]["status"] == "raised", f"calculate raised: {res}")
for code, text in (("x = 10 ** 10 ** 10",
                     "LimitError: integer size limit (1048576 bits) (line 1, col 5)"),
                   ("pass", "(no final value)"), ("print('hi')", "hi")):
    r = call(s, "calculate", {"code": code})
    check(r["result"]["content"] == [{"type": "text", "text": text}] and
          r["result"]["isError"] is (code.startswith("x")), f"calculate {code}: {r}")
r = call(s, "calculate", {"code": "x = (1 +"})
res = r["result"]
check(res["isError"] is True and res["structuredContent"]["status"] == "syntax_error" and
      res["structuredContent"]["route"] == "rejected", f"calculate syntax error: {res}")

# What needs a sandbox is refused whatever the tier, with the reasons.
s2 = Server("--tier", "ns")
init(s2)
for server in (s, s2):
    r = call(server, "calculate", {"code": "import pandas as pd\nx = pd.Series([1]).sum()"})
    res = r["result"]
    sc = res["structuredContent"]
    want_route = "rejected" if server is s else "ns"
    check(res["isError"] is True and sc["status"] == "rejected" and sc["route"] == want_route and
          [x["code"] for x in sc["reasons"]] == ["import:pandas", "method:.sum", "method:.Series"]
          and sc["value"] is None and sc["stdout"] == "", f"calculate refused: {res}")
    if server is s2:
        check(sc["error"] == {"type": "outside the in-process subset", "line": 1, "col": 1,
                              "message": "calculate runs in-process only, and 3 constructs need "
                                         "a sandbox (route ns); first import:pandas: run_python "
                                         "runs it"} and sc["explained"] is True,
              f"calculate's refusal: {sc['error']}")
        check(res["content"][0]["text"] ==
              "outside the in-process subset: calculate runs in-process only, and 3 constructs "
              "need a sandbox (route ns); first import:pandas: run_python runs it (line 1, col 1)"
              "\nroute: ns\nwhy: 3 constructs outside the in-process subset:\n"
              "  import:pandas at 1:1: import pandas as pd\n"
              "  method:.sum at 2:5: pd.Series([1]).sum()\n"
              "  method:.Series at 2:5: pd.Series([1])",
              f"calculate's refusal text: {res['content']}")

# ---- explain ----
r = call(s2, "explain", {"code": "import sys\nprint(sys.version_info[0])"})
res = r["result"]
check(res["isError"] is False and res["content"][0]["text"] ==
      "route: ns\nwhy: 2 constructs outside the in-process subset:\n"
      "  import:sys at 1:1: import sys\n  attr:.version_info at 2:7: sys.version_info" and
      res["structuredContent"]["explained"] is True and
      res["structuredContent"]["stdout"] == "", f"explain: {res}")
r = call(s2, "explain", {"code": "x = 2 * 3"})
check(r["result"]["content"][0]["text"] ==
      "route: inprocess\nwhy: every construct is inside the in-process subset",
      f"explain in-process: {r}")

# ---- run_python ----
r = call(s, "run_python", {"code": "x = 7 * 6"})
check(r["result"]["content"][0]["text"] == "= 42" and r["result"]["isError"] is False,
      f"run_python in-process: {r}")
r = call(s, "run_python", {"code": "import sys\nprint(sys.version_info[0])"})
res = r["result"]
check(res["isError"] is True and res["structuredContent"]["status"] == "rejected" and
      res["structuredContent"]["route"] == "rejected" and res["content"][0]["text"] ==
      "outside the in-process subset: 2 constructs outside the in-process subset and sandboxes "
      "are off; first import:sys (line 1, col 1)\nroute: rejected\nwhy: 2 constructs outside "
      "the in-process subset:\n  import:sys at 1:1: import sys\n"
      "  attr:.version_info at 2:7: sys.version_info", f"run_python with --tier none: {res}")
# (make check-tsan sets CR_TEST_NO_SANDBOX: the sandbox's clone() is more than ThreadSanitizer's
# runtime follows.)
r = None if os.environ.get("CR_TEST_NO_SANDBOX") else \
    call(s2, "run_python", {"code": "import sys\nprint(sys.version_info[0])"})
sc = r["result"]["structuredContent"] if r else {"error": {"message": "CR_TEST_NO_SANDBOX"}}
if not r or sc["status"] == "sandbox_error":
    print(f"SKIP run_python in the ns tier: {sc['error']['message']}", file=sys.stderr)
    skipped += 1
else:
    check(sc["route"] == "ns" and sc["status"] == "ok" and sc["stdout"] == "3\n" and
          r["result"]["content"][0]["text"] == "3" and r["result"]["isError"] is False,
          f"run_python sandboxed: {r}")

# ---- tool errors: isError results the model can correct ----
r = call(s, "calculate", {"cod": "1"})
check(r["result"]["isError"] is True and
      r["result"]["content"][0]["text"].startswith("invalid arguments: ") and
      "structuredContent" not in r["result"], f"bad arguments: {r}")
r = call(s, "calculate", {"code": "1", "precision": 0})
check(r["result"]["isError"] is True and
      r["result"]["content"][0]["text"].startswith("invalid arguments: "), f"precision 0: {r}")

# ---- protocol errors ----
cases = [
    (b"garbage\n", err(None, -32700, "parse error: invalid token near 'garbage' "
                                     "(column 7)")),
    (b'{"jsonrpc": "2.0", "id": 1, "method": "ping"\n',
     err(None, -32700, "parse error: '}' expected near end of file (column 44)")),
    (b'\xff\xfe\n', err(None, -32700, "parse error: unable to decode byte 0xff (column 0)")),
    (b'{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}\n',
     err(None, -32700, "parse error: duplicate object key near '\"id\"' (column 28)")),
    (b"42\n", err(None, -32600, "a request is a JSON object")),
    (b'"ping"\n', err(None, -32600, "a request is a JSON object")),
    (b'{"id": 5, "method": "ping"}\n',
     err(5, -32600, 'want jsonrpc "2.0" and a method name')),
    (b'{"jsonrpc": "2.0", "id": 5}\n', err(5, -32600, 'want jsonrpc "2.0" and a method name')),
    (b'{"jsonrpc": "2.0", "id": [1], "method": "ping"}\n',
     err(None, -32600, "id must be a string or an integer")),
    (b'{"jsonrpc": "2.0", "id": 1.5, "method": "ping"}\n',
     err(None, -32600, "id must be a string or an integer")),
    (b'{"jsonrpc": "2.0", "id": 6, "method": "resources/list"}\n',
     err(6, -32601, "method not found: resources/list")),
    (b'{"jsonrpc": "2.0", "id": 7, "method": "ping", "params": [1]}\n',
     err(7, -32602, "params must be an object")),
    (b'{"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {"name": "rm"}}\n',
     err(8, -32602, "unknown tool 'rm' (calculate, run_python, explain)")),
    (b'{"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {}}\n',
     err(9, -32602, "unknown tool '' (calculate, run_python, explain)")),
    (b'{"jsonrpc": "2.0", "id": 10, "method": "tools/call", '
     b'"params": {"name": "calculate", "arguments": "1+1"}}\n',
     err(10, -32602, "arguments must be an object")),
    (b'{"jsonrpc": "2.0", "id": 11, "method": "initialize", "params": {}}\n',
     err(11, -32602, "initialize: protocolVersion wanted")),
    (b'{"jsonrpc": "2.0", "id": 12, "method": "tools/list", "params": {"_meta": '
     b'{"io.modelcontextprotocol/protocolVersion": "2099-01-01"}}}\n',
     err(12, -32022, "Unsupported protocol version",
         {"supported": ALL, "requested": "2099-01-01"})),
    (b'[{"jsonrpc": "2.0", "id": 13, "method": "ping"}]\n',
     err(None, -32600, "batches are not part of protocol version 2025-06-18")),
]
for data, want in cases:
    s.send(data)
    got = s.line()
    check(got == want, f"{data[:60]!r}: got {got}, want {want}")
# A response from the client, a blank line and a CRLF line: the first two are not answered.
s.send(b'{"jsonrpc": "2.0", "id": 99, "result": {}}\n\n\r\n')
r = s.ask(b'{"jsonrpc": "2.0", "id": 14, "method": "ping"}\r\n')
check(r == {"jsonrpc": "2.0", "id": 14, "result": {}}, f"CRLF: {r}")
r = s.ask({"jsonrpc": "2.0", "id": 15, "method": "tools/list", "params": {"_meta": {
    "io.modelcontextprotocol/protocolVersion": "2025-06-18"}}})
check(r["id"] == 15 and "tools" in r["result"], "a supported _meta version is accepted")

# Oversized: one byte past 1 MiB is refused, and the server reads on; exactly 1 MiB is served.
MAX = 1 << 20
def padded(id, size):
    head = '{"jsonrpc":"2.0","id":%d,"method":"ping","params":{"pad":"' % id
    tail = '"}}'
    return (head + "x" * (size - len(head) - len(tail)) + tail).encode()
s.send(padded(16, MAX + 1) + b"\n")
r = s.line()
check(r == err(None, -32600, "request line longer than 1048576 bytes"), f"oversized: {r}")
r = s.ask(padded(17, MAX) + b"\n")
check(r == {"jsonrpc": "2.0", "id": 17, "result": {}}, f"exactly 1 MiB: {str(r)[:100]}")
s.send(b"x" * (8 * MAX) + b"\n")
r = s.line()
check(r == err(None, -32600, "request line longer than 1048576 bytes"), f"8 MiB line: {r}")

# The last line may lack its newline; EOF then ends the server with 0.
s.send(b'{"jsonrpc": "2.0", "id": 18, "method": "ping"}')
rc, rest, stderr = s.close()
check(rc == 0 and rest == b'{"jsonrpc":"2.0","id":18,"result":{}}\n' and stderr == b"",
      f"EOF: {rc} {rest!r} {stderr!r}")
rc, _, _ = s2.close()
check(rc == 0, f"EOF (ns): {rc}")

# ---- versions and batches ----
s = Server("--tier", "none")
r = init(s, "1999-01-01")
check(r["result"]["protocolVersion"] == "2025-11-25", f"unknown version: {r}")
r = init(s, "2024-11-05", id=1)
check(r["result"]["protocolVersion"] == "2024-11-05", f"2024-11-05: {r}")
r = call(s, "calculate", {"code": "x = 1 / 4"}, id=2)
content = r["result"]["content"]
check(len(content) == 2 and content[0]["text"] == "= 0.25  (exactly 1/4)" and
      json.loads(content[1]["text"]) == r["result"]["structuredContent"],
      f"before 2025-06-18 the structured result is text too: {content}")
s.send(b'[{"jsonrpc": "2.0", "id": 3, "method": "ping"}]\n')
r = s.line()
check(r == err(None, -32600, "batches are not part of protocol version 2024-11-05"),
      f"no batches in 2024-11-05: {r}")
r = init(s, "2025-03-26", id=4)
s.send(json.dumps([
    {"jsonrpc": "2.0", "id": 5, "method": "ping"},
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 6, "method": "tools/call",
     "params": {"name": "calculate", "arguments": {"code": "x = 2 ** 10"}}},
    {"jsonrpc": "2.0", "id": 7, "method": "initialize", "params": {"protocolVersion": "x"}},
    7]).encode() + b"\n")
r = s.line()
check(isinstance(r, list) and len(r) == 4 and r[0] == {"jsonrpc": "2.0", "id": 5, "result": {}}
      and r[1]["id"] == 6 and r[1]["result"]["content"][0]["text"] == "= 1024" and
      r[2] == err(7, -32600, "initialize cannot be part of a batch") and
      r[3] == err(None, -32600, "a request is a JSON object"), f"2025-03-26 batch: {r}")
s.send(b"[]\n")
check(s.line() == err(None, -32600, "an empty batch"), "empty batch")
s.send(b'[{"jsonrpc": "2.0", "method": "notifications/initialized"}]\n')
r = s.ask({"jsonrpc": "2.0", "id": 8, "method": "ping"})
check(r == {"jsonrpc": "2.0", "id": 8, "result": {}}, f"a batch of notifications: {r}")
rc, rest, _ = s.close()
check(rc == 0 and rest == b"", f"close: {rc} {rest!r}")

# ---- the ledger: every run recorded, explanations and refusals are not (nothing ran) ----
tmp = tempfile.mkdtemp()
db = os.path.join(tmp, "ledger.db")
s = Server("--tier", "none", "--audit", db)
init(s)
r1 = call(s, "calculate", {"code": "x = 0.1 * 3"}, id=1)
r2 = call(s, "run_python", {"code": "x = 2 + 2"}, id=2)
call(s, "explain", {"code": "x = 1"}, id=3)
r4 = call(s, "run_python", {"code": "import os"}, id=4)
rc, _, _ = s.close()
check(rc == 0, f"audited server exit: {rc}")
check(r1["result"]["structuredContent"]["audit"]["seq"] == 1 and
      r2["result"]["structuredContent"]["audit"]["seq"] == 2 and
      r4["result"]["structuredContent"]["audit"]["seq"] == 3, f"audit seqs: {r1} {r2} {r4}")
audit = subprocess.run([os.path.join(B, "calc-audit"), "export", db], capture_output=True,
                       text=True)
records = [json.loads(line) for line in audit.stdout.splitlines()]
check(audit.returncode == 0 and len(records) == 3, f"ledger records: {audit}")
v = subprocess.run([os.path.join(B, "calc-audit"), "verify", db], capture_output=True)
check(v.returncode == 0, f"ledger verifies: {v}")
for f in os.listdir(tmp):
    os.unlink(os.path.join(tmp, f))
os.rmdir(tmp)

# Mutated messages (seeded): whatever comes, an answer or none, never a crash; a ping after
# them is still answered and EOF still ends the server cleanly.
import random
rng = random.Random(19)
seeds = [json.dumps(m).encode() for m in (
    {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
     "params": {"name": "calculate", "arguments": {"code": "x = 0.1 * 3", "vars": {"a": 1}}}},
    {"jsonrpc": "2.0", "id": "a", "method": "initialize",
     "params": {"protocolVersion": "2025-03-26", "capabilities": {}}},
    [{"jsonrpc": "2.0", "id": 2, "method": "ping"}, {"jsonrpc": "2.0", "method": "x"}])]
s = Server("--tier", "none")
for i in range(400):
    m = bytearray(rng.choice(seeds))
    for _ in range(rng.randint(1, 6)):
        op, at = rng.randrange(3), rng.randrange(len(m))
        if op == 0:
            m[at] = rng.randrange(256)
        elif op == 1:
            del m[at]
        else:
            m[at:at] = bytes(rng.choice(b'{}[]",:0\\n') for _ in range(rng.randint(1, 4)))
    s.send(bytes(m).replace(b"\n", b" ") + b"\n")
    if i % 20 == 19 or i == 399:
        # a ping now and then, its answer awaited, so that neither pipe fills up
        r = s.ask({"jsonrpc": "2.0", "id": f"p{i}", "method": "ping"})
        while r is not None and not (isinstance(r, dict) and r.get("id") == f"p{i}"):
            r = s.line()
        if r != {"jsonrpc": "2.0", "id": f"p{i}", "result": {}}:
            break
rc, _, stderr = s.close()
check(r == {"jsonrpc": "2.0", "id": "p399", "result": {}} and rc == 0 and stderr == b"",
      f"mutated messages: {r} {rc} {stderr[-300:]!r}")

# A client that stops reading: the server's write fails, and it ends with 5, not by SIGPIPE.
s = Server("--tier", "none")
s.p.stdout.close()
try:
    s.send({"jsonrpc": "2.0", "id": 1, "method": "ping"})
    s.p.stdin.close()
except BrokenPipeError:
    pass
check(s.p.wait(30) == 5, f"stdout closed: {s.p.returncode}")

# SIGINT during a call: the run under way ends, is answered as interrupted, and the server
# exits 130 as calc-route's other modes do.
import signal, time
s = Server("--tier", "none", "--timeout", "60")
s.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "calculate",
        "arguments": {"code": "x = 0\nfor i in range(10 ** 9):\n    x += i"}}})
time.sleep(0.5)
s.p.send_signal(signal.SIGINT)
r = s.line()
check(r["result"]["structuredContent"]["status"] == "interrupted" and
      r["result"]["isError"] is True and s.p.wait(30) == 130, f"SIGINT: {r} {s.p.returncode}")

# notifications/cancelled: the running call ends at once (recorded as interrupted) and is
# not answered; a waiting one is dropped (neither run nor answered); a cancellation of what
# was answered already, or never sent, changes nothing; the next call runs as usual.
tmp = tempfile.mkdtemp()
db = os.path.join(tmp, "ledger.db")
s = Server("--tier", "none", "--timeout", "60", "--audit", db)
init(s)
LOOP = "x = 0\nfor i in range(10 ** 9):\n    x += i"
t0 = time.monotonic()
s.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "calculate", "arguments": {"code": LOOP}}})
s.send({"jsonrpc": "2.0", "id": "two", "method": "tools/call",
        "params": {"name": "calculate", "arguments": {"code": "x = 2"}}})
s.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "two"}})
time.sleep(0.3)
s.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 1, "reason": "the user pressed stop"}})
s.send({"jsonrpc": "2.0", "id": 3, "method": "ping"})
r3 = s.line()
s.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 3}})
s.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 99}})
r4 = call(s, "calculate", {"code": "x = 2 + 2"}, id=4)
elapsed = time.monotonic() - t0
rc, rest, _ = s.close()
check(r3 == {"jsonrpc": "2.0", "id": 3, "result": {}} and r4["id"] == 4 and
      r4["result"]["structuredContent"]["value"]["repr"] == "4" and rest == b"" and rc == 0,
      f"cancelled: {r3} {r4} {rest!r} {rc}")
check(elapsed < 10, f"cancelled: the run ended at once ({elapsed:.1f} s)")
audit = subprocess.run([os.path.join(B, "calc-audit"), "export", db], capture_output=True,
                       text=True)
check([(json.loads(line)["code"], json.loads(line)["status_name"])
       for line in audit.stdout.splitlines()] == [(LOOP, "interrupted"), ("x = 2 + 2", "ok")],
      f"cancelled: the ledger {audit.stdout}")
for f in os.listdir(tmp):
    os.unlink(os.path.join(tmp, f))
os.rmdir(tmp)

# SIGTERM ends the server like calc-route's other modes: 128 + 15.
s = Server("--tier", "none")
init(s)
s.p.terminate()
check(s.p.wait(30) == 143, "SIGTERM")

print(f"{passed} passed, {failed} failed, {skipped} skipped")
sys.exit(1 if failed else 0)
PY
