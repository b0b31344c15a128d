// The official MCP TypeScript SDK's client against `calc-route mcp`: connect over stdio
// (the SDK negotiates its newest protocol version), list the tools, call each one, and check
// the answers exactly. The SDK itself validates every structuredContent against the tool's
// outputSchema. Usage: node sdk_client.mjs CALC-ROUTE [OPTIONS...]
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [route, ...options] = process.argv.slice(2);
let passed = 0, failed = 0;
async function check(name, fn) {
    try {
        await fn();
        passed++;
    } catch (e) {
        failed++;
        console.error(`FAIL ${name}: ${e.message}`);
    }
}

const transport = new StdioClientTransport({ command: route, args: [...options, "mcp"],
                                             stderr: "inherit" });
// The version the SDK settles on, as it tells its transport.
let negotiated;
transport.setProtocolVersion = (v) => { negotiated = v; };
const client = new Client({ name: "calcroute-test", version: "1.0.0" });
await client.connect(transport);

await check("protocol version", () => assert.equal(negotiated, "2025-11-25"));

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
await check("run_python", async () => {
    const r = await client.callTool({ name: "run_python",
                                      arguments: { code: "import sys\nprint(sys.version_info[0])" } });
    if (r.structuredContent.status === "sandbox_error") {
        console.error(`SKIP run_python in the sandbox: ${r.structuredContent.error.message}`);
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

await client.close();
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
