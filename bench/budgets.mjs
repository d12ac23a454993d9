#!/usr/bin/env node
// What one tenant's browser can do to another's, with and without resource budgets, side
// by side in one run: the other tenant's WebMCP latency (p50, p99 of listing its tools,
// served from the server's snapshot, and of invoking one, a round trip into its page)
// while quiet, while the attacker's browser busy-loops in 4 tabs, and while it allocates
// memory past its budget. Also the cost of a browser's cgroups: a cold create
// with budgets vs without.
//
// Goal: with budgets, the victim's p99 under attack stays within 2x its quiet p50, shown
// as a ratio here (a bench, not a test: these machines are noisy).
//
//   node bench/budgets.mjs                   (after `pnpm build`; needs root or a delegated cgroup)
//   node bench/budgets.mjs --smoke           (a few requests each: that it runs, not its numbers)
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer as createHttpServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { chromium } from "playwright-core";
import { ChromiumLauncher, createServer, DEFAULT_RESOURCE_BUDGET } from "../packages/server/dist/index.js";
import { BrowserCgroups } from "../packages/server/dist/sandbox/browser-cgroups.js";

const { values } = parseArgs({ options: { smoke: { type: "boolean", default: false }, requests: { type: "string", default: "200" } } });
const REQUESTS = values.smoke ? 10 : Number(values.requests);
const COLD_CREATES = values.smoke ? 1 : 8;
const BUDGET = { ...DEFAULT_RESOURCE_BUDGET, memoryBytes: 1024 * 1024 * 1024 };

function fail(message) {
  console.error(`bench/budgets FAILED: ${message}`);
  process.exit(1);
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];

const TOOLS_PAGE = `<!doctype html><title>Victim</title><script>
document.modelContext.registerTool({ name: "echo", description: "Echoes.", inputSchema: { type: "object" }, execute: async (input) => input });
</script>`;
const BUSY_PAGE = "<!doctype html><title>Busy</title><script>setTimeout(() => { for (;;) {} }, 0);</script>";
const HOG_PAGE =
  "<!doctype html><title>Hog</title><script>const keep = []; setInterval(() => { const b = new Uint8Array(32 << 20); b.fill(1); keep.push(b); }, 20);</script>";

const pages = createHttpServer((request, response) => {
  const body = request.url === "/busy" ? BUSY_PAGE : request.url === "/hog" ? HOG_PAGE : TOOLS_PAGE;
  response.writeHead(200, { "content-type": "text/html" }).end(body);
});
await new Promise((resolve) => pages.listen(0, "127.0.0.1", resolve));
const pageUrl = (path) => `http://127.0.0.1:${pages.address().port}${path}`;

async function startServer(budgeted) {
  const dataDir = mkdtempSync(join(tmpdir(), "bench-budgets-"));
  const launcher = new ChromiumLauncher({ allowPrivateNetwork: true, budget: BUDGET, unsafeNoResourceLimits: !budgeted });
  const server = await createServer({ dataDir, port: 0, planLimit: 100, warmBrowsers: 0, launcher, rateLimits: { perKey: { rate: 0, burst: 1 } } });
  const baseUrl = await server.listen();
  const auth = { authorization: `Bearer ${server.firstStart.key.secret}` };
  const call = async (method, path, body) => {
    const response = await fetch(`${baseUrl}${path}`, {
      method,
      headers: { ...auth, ...(body ? { "content-type": "application/json" } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    const text = await response.text();
    return { status: response.status, body: text === "" ? undefined : JSON.parse(text) };
  };
  return {
    call,
    async create(startUrl) {
      const response = await call("POST", "/browsers", startUrl ? { start_url: startUrl } : {});
      if (response.status !== 201) fail(`POST /browsers: HTTP ${response.status} ${JSON.stringify(response.body)}`);
      return response.body;
    },
    async close() {
      await server.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Latencies of the victim's tool listing and of an invocation of its tool (a round trip
 * into its page's renderer, which competes for the CPU), in ms, sorted.
 */
async function victimCalls(service, victim) {
  const listing = [];
  const invoking = [];
  for (let i = 0; i < REQUESTS; i++) {
    let started = performance.now();
    const list = await service.call("GET", `/browsers/${victim.id}/webmcp/tools`);
    listing.push(performance.now() - started);
    if (list.status !== 200) fail(`GET webmcp/tools: HTTP ${list.status}`);
    started = performance.now();
    const invoked = await service.call("POST", `/browsers/${victim.id}/webmcp/invoke`, { tool_ref: victim.echo, input: { i } });
    invoking.push(performance.now() - started);
    if (invoked.status !== 200) fail(`POST webmcp/invoke: HTTP ${invoked.status} ${JSON.stringify(invoked.body)}`);
    await sleep(5);
  }
  return { listing: listing.sort((a, b) => a - b), invoking: invoking.sort((a, b) => a - b) };
}

async function run(budgeted) {
  const service = await startServer(budgeted);
  const victim = await service.create(pageUrl("/tools"));
  for (let i = 0; i < 100 && victim.echo === undefined; i++) {
    const { body } = await service.call("GET", `/browsers/${victim.id}/webmcp/tools`);
    victim.echo = body.tools.find((tool) => tool.name === "echo")?.tool_ref;
    await sleep(50);
  }
  if (victim.echo === undefined) fail("the victim's page never registered its tool");
  const quiet = await victimCalls(service, victim);

  // Busy loops in four tabs of the attacker's browser: four renderers that never yield.
  const attacker = await service.create();
  const driven = await chromium.connectOverCDP(attacker.cdp_ws_url);
  const context = driven.contexts()[0];
  for (let i = 0; i < 4; i++) {
    const page = await context.newPage();
    await page.goto(pageUrl("/busy"), { waitUntil: "commit" }).catch(() => undefined);
  }
  await sleep(500);
  const busy = await victimCalls(service, victim);
  await driven.close().catch(() => undefined);
  await service.call("DELETE", `/browsers/${attacker.id}`);

  // A page allocating without end: with a budget its browser is ended. Without one it would
  // take the host's memory, which a bench must not do: that row is left out.
  let hogged;
  let hogState;
  if (budgeted) {
    const hog = await service.create(pageUrl("/hog"));
    hogged = await victimCalls(service, victim);
    for (let i = 0; i < 100 && hogState?.status !== "crashed"; i++) {
      hogState = (await service.call("GET", `/browsers/${hog.id}`)).body;
      await sleep(100);
    }
    await service.call("DELETE", `/browsers/${hog.id}`);
  }

  const cold = [];
  for (let i = 0; i < COLD_CREATES; i++) {
    const started = performance.now();
    const browser = await service.create();
    cold.push(performance.now() - started);
    await service.call("DELETE", `/browsers/${browser.id}`);
  }
  cold.sort((a, b) => a - b);
  await service.close();
  return { quiet, busy, hogged, hogState, cold };
}

/** A browser's groups alone: made with its limits, a process placed in them, removed; ms each, sorted. */
async function groupCosts() {
  const { check, cgroups } = await BrowserCgroups.open(BUDGET);
  if (!check.usable) fail(`no cgroups here: ${check.problem}`);
  const times = [];
  for (let i = 0; i < (values.smoke ? 3 : 50); i++) {
    const started = performance.now();
    const group = await cgroups.create(`bench-${i}`);
    const child = spawn("/bin/sh", ["-c", "read -r _"], { stdio: ["pipe", "ignore", "ignore"] });
    await group.place(child.pid);
    child.stdin.end("\n");
    await once(child, "exit");
    await group.remove();
    times.push(performance.now() - started);
  }
  return times.sort((a, b) => a - b);
}

const fmt = (ms) => ms.toFixed(1).padStart(7);
const rows = [];
for (const budgeted of [true, false]) {
  const result = await run(budgeted);
  const line = (name, calls) =>
    ["listing", "invoking"].map((kind) => {
      const times = calls[kind];
      const quietP50 = percentile(result.quiet[kind], 50);
      return `${(budgeted ? "budgets  " : "no budget").padEnd(10)} ${`${kind}, ${name}`.padEnd(32)} p50 ${fmt(percentile(times, 50))} ms  p99 ${fmt(percentile(times, 99))} ms  p99 / quiet p50 ${(percentile(times, 99) / quietP50).toFixed(2)}x`;
    });
  rows.push(...line("quiet", result.quiet), ...line("4 busy tabs elsewhere", result.busy));
  if (result.hogged) {
    rows.push(...line("a page eating memory", result.hogged));
    if (result.hogState.crash_reason !== "out_of_memory") fail(`the memory eater was not ended for its memory: ${JSON.stringify(result.hogState)}`);
    rows.push(`budgets    the memory eater ended as: ${result.hogState.status} (${result.hogState.crash_reason})`);
  }
  rows.push(`${(budgeted ? "budgets  " : "no budget").padEnd(10)} cold create p50 ${fmt(percentile(result.cold, 50))} ms (${COLD_CREATES} creates)`);
}
const groups = await groupCosts();
rows.push(`a browser's cgroups alone (made, a process placed, removed): p50 ${fmt(percentile(groups, 50))} ms  p99 ${fmt(percentile(groups, 99))} ms`);
pages.close();
console.log(
  `bench/budgets: the other tenant's WebMCP listing and invocation, ${REQUESTS} requests each, budget ${BUDGET.memoryBytes / 1024 ** 2} MiB / ${BUDGET.maxProcesses} / ${BUDGET.cpus} CPU`,
);
for (const row of rows) console.log(row);
process.exit(0);
