#!/usr/bin/env node
// The MCP bridge (@browser-service/mcp) against the API it is built on, on the reference
// server with real headless Chromium (CHROMIUM_PATH or /usr/bin/chromium) and test pages
// on 127.0.0.1 and localhost, side by side in one run:
//   1. tools/list through the bridge (the real `browser-service-mcp` command, over stdio
//      and over Streamable HTTP, with the MCP SDK's Client) at 1, 10 and 30 tabs, against
//      GET /browsers/{id}/webmcp/tools straight from the client; goal: <= 1.5x + 1 ms;
//   2. tools/call through the bridge against the helpers' invokeTool with the same tool;
//      goal: <= 1 ms more at p50;
//   3. the time from a page registering a tool to notifications/tools/list_changed
//      reaching the client, with the default poll interval; goal: <= one interval + 50 ms.
// Each tab is a page with a cross-origin (localhost) frame, 5 tools in each document.
// Every run is a fixed number of requests and every browser is deleted, so it is bounded.
//
//   node bench/mcp.mjs                     (after `pnpm build`; runs from anywhere)
//   node bench/mcp.mjs --requests 300      (requests per row; default 200)
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { createClient } from "@browser-service/client";
import { showBrowserToolName } from "@browser-service/mcp";
import { invokeTool } from "@browser-service/webmcp-helpers";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { chromium } from "playwright-core";
import { createServer } from "../packages/server/dist/index.js";
import { PageServer } from "../tools/test-pages/src/page-server.mjs";
import { numberedTools } from "../tools/test-pages/src/shared-pages.mjs";

const { values } = parseArgs({ options: { requests: { type: "string", default: "200" }, changes: { type: "string", default: "10" } } });
const REQUESTS = Number(values.requests);
const CHANGES = Number(values.changes);
const TAB_COUNTS = [1, 10, 30];
const TOOLS_PER_DOCUMENT = 5;
const POLL_INTERVAL_MS = 1000; // the bridge's default
const WARMUP = 30;
const WAIT_ATTEMPTS = 1200;
const bin = fileURLToPath(new URL("../packages/mcp/bin/browser-service-mcp.mjs", import.meta.url));

/** A failed step; thrown (never process.exit) so that every browser and process is closed first. */
class BenchFailure extends Error {}
function fail(message) {
  throw new BenchFailure(message);
}

// ---- pages ---------------------------------------------------------------------------
const tools = (where) => numberedTools(where, TOOLS_PER_DOCUMENT);
const pageServer = await PageServer.start();
pageServer.serve(
  "/tab",
  (port) => `<!doctype html><title>Bench tab</title>${tools("top")}<iframe src="http://localhost:${port}/frame" allow="tools"></iframe>`,
);
pageServer.serve("/frame", `<!doctype html><title>Bench frame</title>${tools("frame")}`);

// ---- helpers -------------------------------------------------------------------------
const percentile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
const summary = (samples) => {
  const sorted = [...samples].sort((a, b) => a - b);
  return { p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99), max: sorted.at(-1) };
};
const msSince = (start) => Number(process.hrtime.bigint() - start) / 1e6;
async function timed(count, call) {
  const samples = [];
  for (let i = 0; i < count; i++) {
    const start = process.hrtime.bigint();
    await call(i);
    samples.push(msSince(start));
  }
  return samples;
}
async function until(what, check) {
  for (let attempt = 0; attempt < WAIT_ATTEMPTS; attempt++) {
    const value = await check();
    if (value) return value;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  fail(`timed out waiting for ${what}`);
}

// ---- server and bridges --------------------------------------------------------------
const dataDir = mkdtempSync(join(tmpdir(), "browser-service-bench-mcp-"));
const server = await createServer({ dataDir, host: "127.0.0.1", port: 0, allowPrivateNetwork: true, rateLimits: { perKey: { rate: 0, burst: 1 } } });
const baseUrl = await server.listen();
const apiKey = server.firstStart.key.secret;
const client = createClient({ baseUrl, apiKey, projectId: null, maxRetries: 0 });
const bridgeEnv = { PATH: process.env.PATH, BROWSER_SERVICE_BASE_URL: baseUrl, BROWSER_SERVICE_API_KEY: apiKey };

/** An MCP client of the bin over stdio, counting list_changed notifications. */
async function stdioBridge(browser) {
  const mcp = new Client({ name: "bench", version: "1" });
  const session = { mcp, changes: 0, close: () => mcp.close() };
  mcp.setNotificationHandler(ToolListChangedNotificationSchema, () => session.changes++);
  await mcp.connect(new StdioClientTransport({ command: process.execPath, args: [bin, "--browser", browser], env: bridgeEnv, stderr: "ignore" }));
  return session;
}

/** An MCP client of the bin over Streamable HTTP. */
async function httpBridge(browser) {
  const token = "bench-token-0123456789abcdef";
  const child = spawn(process.execPath, [bin, "--browser", browser, "--http", "0"], {
    env: { ...bridgeEnv, BROWSER_SERVICE_MCP_TOKEN: token },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let log = "";
  const url = await new Promise((resolve, reject) => {
    child.stderr.on("data", (chunk) => {
      log += chunk;
      const found = /Streamable HTTP on (\S+)/.exec(log);
      if (found) resolve(found[1]);
    });
    child.once("exit", () => reject(new BenchFailure(`the HTTP bridge stopped:\n${log}`)));
  });
  const mcp = new Client({ name: "bench", version: "1" });
  await mcp.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
  return {
    mcp,
    async close() {
      await mcp.close();
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
    },
  };
}

const listing = [];
let calls;
let changeLatency;
try {
  for (const tabs of TAB_COUNTS) {
    const browser = await client.browsers.create({ name: `bench-mcp-${tabs}` });
    const playwright = await chromium.connectOverCDP(browser.cdp_ws_url);
    const bridges = [];
    try {
      const context = playwright.contexts()[0];
      const pages = [];
      for (let i = 0; i < tabs; i++) {
        const page = await context.newPage();
        await page.goto(`${pageServer.url("/tab")}?tab=${i}`);
        pages.push(page);
      }
      const expected = tabs * 2 * TOOLS_PER_DOCUMENT;
      await until(`${expected} tools`, async () => (await client.webmcp.listTools(browser.id)).tools.length === expected);
      const stdio = await stdioBridge(browser.id);
      bridges.push(stdio);
      const http = await httpBridge(browser.id);
      bridges.push(http);
      for (const each of [stdio, http]) {
        // The pages' tools, beside the bridge's own (show_browser, the live view).
        const listed = (await each.mcp.listTools()).tools.filter((tool) => tool.name !== showBrowserToolName).length;
        if (listed !== expected) fail(`${tabs} tabs: the bridge lists ${listed} page tools, expected ${expected}`);
      }
      const get = () => client.webmcp.listTools(browser.id);
      await timed(WARMUP, get);
      await timed(WARMUP, () => stdio.mcp.listTools());
      await timed(WARMUP, () => http.mcp.listTools());
      listing.push({
        tabs,
        tools: expected,
        get: summary(await timed(REQUESTS, get)),
        stdio: summary(await timed(REQUESTS, () => stdio.mcp.listTools())),
        http: summary(await timed(REQUESTS, () => http.mcp.listTools())),
      });

      if (tabs === 1) {
        // tools/call: the same top-level tool through the helpers and through the bridge.
        const snapshot = (await client.webmcp.listTools(browser.id)).tools;
        const tool = snapshot.find((each) => each.name === "tool_0" && each.source.frame === null);
        const direct = async (n) => {
          const result = await invokeTool(client, browser.id, { toolRef: tool, input: { n }, timeoutSec: 30 });
          if (result.status !== "completed") fail(`invokeTool ended ${result.status}`);
        };
        const mcpName = (await stdio.mcp.listTools()).tools.find((each) => each.description.includes("Tool 0 of the top document")).name;
        const viaBridge = (mcp) => async (n) => {
          const result = await mcp.callTool({ name: mcpName, arguments: { n } });
          if (result.isError) fail(`tools/call failed: ${result.content[0]?.text}`);
        };
        await timed(WARMUP, direct);
        await timed(WARMUP, viaBridge(stdio.mcp));
        await timed(WARMUP, viaBridge(http.mcp));
        calls = {
          direct: summary(await timed(REQUESTS, direct)),
          stdio: summary(await timed(REQUESTS, viaBridge(stdio.mcp))),
          http: summary(await timed(REQUESTS, viaBridge(http.mcp))),
        };

        // list_changed: a page registers a tool; the time until the client hears of it.
        // The tool is unregistered again (another change) before the next sample.
        const [page] = pages;
        const samples = [];
        for (let i = 0; i < CHANGES; i++) {
          const before = stdio.changes;
          const start = process.hrtime.bigint();
          await page.evaluate((n) => {
            window.benchUnregister = new AbortController();
            document.modelContext.registerTool(
              { name: `added_${n}`, description: "Added.", execute: async () => ({}) },
              { signal: window.benchUnregister.signal },
            );
          }, i);
          await until("list_changed after a registration", () => stdio.changes > before);
          samples.push(msSince(start));
          const removed = stdio.changes;
          await page.evaluate(() => window.benchUnregister.abort());
          await until("list_changed after an unregistration", () => stdio.changes > removed);
          // Start the next sample at a random point of the poll cycle, as a page would.
          await new Promise((resolve) => setTimeout(resolve, Math.random() * POLL_INTERVAL_MS));
        }
        changeLatency = summary(samples);
      }
    } finally {
      for (const bridge of bridges) await bridge.close();
      await playwright.close();
      await client.browsers.delete(browser.id);
    }
  }
} catch (error) {
  console.error(`bench/mcp FAILED: ${error instanceof BenchFailure ? error.message : error.stack}`);
  process.exitCode = 1;
} finally {
  await server.close();
  rmSync(dataDir, { recursive: true, force: true });
  await pageServer.close();
}
if (process.exitCode === 1) process.exit();

const f = (n) => n.toFixed(2);
const goal = (ok) => (ok ? "yes" : "NO");
console.log(
  `\nMCP bridge on Chromium (${process.env.CHROMIUM_PATH ?? "/usr/bin/chromium"}): ${REQUESTS} sequential requests per row after ${WARMUP} warm-up requests`,
);
console.log("\n1. tools/list through the bridge vs GET .../webmcp/tools from the client (ms; goal: bridge p50 <= 1.5 x GET p50 + 1 ms)");
console.log("| tabs | tools | GET p50 | GET p99 | stdio p50 | stdio p99 | HTTP p50 | HTTP p99 | stdio / GET | HTTP / GET | goal met (stdio, HTTP) |");
console.log("| -: | -: | -: | -: | -: | -: | -: | -: | -: | -: | - |");
for (const row of listing) {
  const limit = 1.5 * row.get.p50 + 1;
  console.log(
    `| ${row.tabs} | ${row.tools} | ${f(row.get.p50)} | ${f(row.get.p99)} | ${f(row.stdio.p50)} | ${f(row.stdio.p99)} | ${f(row.http.p50)} | ${f(row.http.p99)} | ${f(row.stdio.p50 / row.get.p50)}x | ${f(row.http.p50 / row.get.p50)}x | ${goal(row.stdio.p50 <= limit)}, ${goal(row.http.p50 <= limit)} |`,
  );
}
console.log("\n2. tools/call through the bridge vs the helpers' invokeTool, same tool, 1 tab (ms; goal: <= 1 ms more at p50)");
console.log("| path | p50 | p99 | p50 overhead | goal met |");
console.log("| - | -: | -: | -: | - |");
console.log(`| invokeTool (client) | ${f(calls.direct.p50)} | ${f(calls.direct.p99)} | | |`);
for (const [label, row] of [
  ["bridge over stdio", calls.stdio],
  ["bridge over HTTP", calls.http],
]) {
  console.log(`| ${label} | ${f(row.p50)} | ${f(row.p99)} | ${f(row.p50 - calls.direct.p50)} | ${goal(row.p50 - calls.direct.p50 <= 1)} |`);
}
console.log(
  `\n3. A page registers a tool -> notifications/tools/list_changed at the client (poll interval ${POLL_INTERVAL_MS} ms; ${CHANGES} changes; goal: <= ${POLL_INTERVAL_MS + 50} ms)`,
);
console.log("| p50 | p99 | max | goal met (max) |");
console.log("| -: | -: | -: | - |");
console.log(`| ${f(changeLatency.p50)} | ${f(changeLatency.p99)} | ${f(changeLatency.max)} | ${goal(changeLatency.max <= POLL_INTERVAL_MS + 50)} |`);
