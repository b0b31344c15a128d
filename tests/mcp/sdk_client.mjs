// The official MCP TypeScript SDK's client against calc-route's MCP server, on either
// transport: stdio (`calc-route mcp`) or Streamable HTTP (`calc-route serve`'s /mcp). The SDK
// negotiates its newest protocol version; the test lists the tools, calls each one and checks
// the answers exactly (the SDK itself validates every structuredContent against the tool's
// outputSchema). Over HTTP also: notifications/progress during a sandboxed call, and
// cancellation both ways the SDK has, aborting the call's AbortSignal (its
// notifications/cancelled) and closing the transport under a call (the stream's hangup), each
// checked in the ledger as an interrupted run and by the next answer coming at once.
// Usage: node sdk_client.mjs stdio CALC-ROUTE [OPTIONS...]
//        node sdk_client.mjs http URL CALC-AUDIT LEDGER
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [mode, target, ...rest] = process.argv.slice(2);
let passed = 0, failed = 0, skipped = 0;
// A check that calls skip() is counted as skipped, not passed (tests/lib.sh's format).
function skip(name, why) {
    skipped++;
    console.error(`SKIP ${name}: ${why}`);
}
async function check(name, fn) {
    const before = skipped;
    try {
        await fn();
        if (skipped === before) passed++;
    } catch (e) {
        failed++;
        console.error(`FAIL ${mode} ${name}: ${e.message}`);
    }
}

function transportOf() {
    return mode === "http"
        ? new StreamableHTTPClientTransport(new URL(target))
        : new StdioClientTransport({ command: target, args: [...rest, "mcp"], stderr: "inherit" });
}

async function connect() {
    const transport = transportOf();
    // The version the SDK settles on, as it tells its transport (which over HTTP sends it
    // back in each request's MCP-Protocol-Version header).
    const set = transport.setProtocolVersion?.bind(transport);
    transport.setProtocolVersion = (v) => { transport.negotiated = v; set?.(v); };
    const client = new Client({ name: "calcroute-test", version: "1.0.0" });
    await client.connect(transport);
    return { client, transport };
}

const { client, transport } = await connect();
await check("protocol version", () => assert.equal(transport.negotiated, "2025-11-25"));
await check("server info", () => assert.deepEqual(client.getServerVersion(),
    { name: "calc-route", title: "calcroute", version: "0.1.0" }));
await check("capabilities", () => assert.deepEqual(client.getServerCapabilities(),
    { tools: { listChanged: false } }));
await check("ping", async () => assert.deepEqual(await client.ping(), {}));
await check("tools/list", async () => {
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name), ["calculate", "run_python", "explain"]);
});

const text = (r) => r.content.map((c) => c.text).join("\n");
await check("calculate", async () => {
    const r = await client.callTool({ name: "calculate", arguments: { code: "x = 0.1 + 0.2" } });
    assert.equal(text(r), "= 0.3  (exactly 3/10)");
    assert.equal(r.isError, false);
    const { route, status, value, stdout, error } = r.structuredContent;
    assert.deepEqual({ route, status, value, stdout, error }, {
        route: "inprocess", status: "ok", stdout: "", error: null,
        value: { repr: "0.3", type: "float", fraction: "3/10", exact: true, from: "x",
                 native: { float: "3/10" }, native_why: null } });
});
await check("calculate with vars", async () => {
    const r = await client.callTool({ name: "calculate", arguments: {
        code: "growth = (revenue - prior) / prior", vars: { revenue: 5829, prior: 5735 } } });
    assert.equal(text(r), "= 0.01639058413251961639058413251961639  (exactly 94/5735)");
});
await check("calculate refuses a sandbox", async () => {
    const r = await client.callTool({ name: "calculate",
                                      arguments: { code: "import pandas as pd\nx = 1" } });
    assert.equal(r.isError, true);
    assert.equal(r.structuredContent.status, "rejected");
    assert.deepEqual(r.structuredContent.reasons, [
        { code: "import:pandas", line: 1, col: 1, snippet: "import pandas as pd" }]);
});
await check("explain", async () => {
    const r = await client.callTool({ name: "explain", arguments: { code: "import sys" } });
    assert.equal(text(r), "route: ns\nwhy: 1 construct outside the in-process subset:\n" +
                          "  import:sys at 1:1: import sys");
    assert.equal(r.structuredContent.explained, true);
});
let sandbox = "";   // why the sandbox did not run, when it did not
await check("run_python", async () => {
    const r = await client.callTool({ name: "run_python",
                                      arguments: { code: "import sys\nprint(sys.version_info[0])" } });
    if (r.structuredContent.status === "sandbox_error") {
        sandbox = r.structuredContent.error.message;
        skip(`run_python in the sandbox over ${mode}`, sandbox);
        return;
    }
    assert.equal(text(r), "3");
    assert.equal(r.structuredContent.route, "ns");
    assert.equal(r.structuredContent.stdout, "3\n");
});
await check("run_python raises", async () => {
    const r = await client.callTool({ name: "run_python", arguments: { code: "x = 1 / 0" } });
    assert.equal(r.isError, true);
    assert.equal(text(r), "ZeroDivisionError: division by zero (line 1, col 5)");
});
await check("unknown tool", async () => {
    await assert.rejects(client.callTool({ name: "rm", arguments: {} }),
                         /-32602.*unknown tool 'rm'/);
});

if (mode === "http" && sandbox) {
    skip("progress and cancellation over http", `no sandbox: ${sandbox}`);
} else if (mode === "http") {
    const [audit, ledger] = rest;
    // The ledger's record of the run of `code`, once it has one (a run ends, then is
    // recorded; 60 s is far beyond either).
    const recordOf = async (code) => {
        for (let i = 0; i < 600; i++) {
            const lines = execFileSync(audit, ["export", ledger], { encoding: "utf8" });
            const hit = lines.split("\n").filter(Boolean).map((l) => JSON.parse(l))
                             .find((r) => r.code === code);
            if (hit) return hit;
            await new Promise((ok) => setTimeout(ok, 100));
        }
        throw new Error(`no record of ${code}`);
    };
    await check("progress during a sandboxed call", async () => {
        const seen = [];
        const r = await client.callTool(
            { name: "run_python", arguments: { code: "import time; time.sleep(1.5); print(1)" } },
            undefined, { onprogress: (p) => seen.push(p), timeout: 60000 });
        assert.equal(text(r), "1");
        assert.ok(seen.length >= 1, "no notifications/progress");
        assert.deepEqual(seen[0], { progress: 1, message: "running, 1 s" });
    });
    // Each cancellation comes at the call's first progress, so the run is surely under way;
    // the call would take a minute, the next answer must come in seconds.
    const cancelled = async (name, code, cancel) => {
        await check(name, async () => {
            const ac = new AbortController();
            let t0;
            const call = client2 => client2.callTool({ name: "run_python", arguments: { code } },
                undefined, { signal: ac.signal, timeout: 120000,
                             onprogress: () => { if (!t0) { t0 = Date.now(); cancel(ac); } } });
            await cancel.run(call);
            const next = await client.callTool({ name: "calculate", arguments: { code: "ans = 6 * 7" } });
            assert.equal(text(next), "= 42");
            const rec = await recordOf(code);
            assert.equal(rec.status_name, "interrupted");
            assert.ok(Date.now() - t0 < 30000, `the next answer took ${Date.now() - t0} ms`);
        });
    };
    const abort = (ac) => ac.abort("the test cancels");
    abort.run = (call) => assert.rejects(call(client), /cancels/);
    await cancelled("AbortSignal cancels (notifications/cancelled)",
                    "import time; time.sleep(60); print('a')", abort);
    const other = await connect();
    const hangup = () => { other.client.close(); };
    hangup.run = (call) => assert.rejects(call(other.client));
    await cancelled("closing the stream cancels",
                    "import time; time.sleep(60); print('b')", hangup);
}

await client.close();
console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(failed ? 1 : 0);
