#!/usr/bin/env node
// Soak: a bounded run of mixed traffic against the reference server (a child process on
// 127.0.0.1, as users run it): project and limit calls, browsers created and deleted,
// pages navigating, WebMCP discovery and invocation; for its second half, one browser
// keeps a hostile page open (6,000 tools of 8 KB, a 1 MB title and a 1 MB URL). Prints the
// server's RSS and open file descriptors and the number of Chromium processes at the
// start, the middle and the end (goal: no growth after warm-up; none left after the last
// delete), and the p99 of GET /org/limits without and with the hostile page (goal: within
// 2x). It stops by itself after --seconds (default 300).
//
// RSS is a high-water mark: after the hostile page, V8 keeps the pages it grew into even
// though the heap itself returns to its size before (checked in-process with
// --expose-gc: ~14 MiB used after each of four hostile browsers was deleted, no growth).
//
//   node bench/soak.mjs                 (after `pnpm build`)
//   node bench/soak.mjs --seconds 60
import { once } from "node:events";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer as createHttpServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { chromium } from "playwright-core";
import { startServerProcess } from "./support/child-server.mjs";

const { values } = parseArgs({ options: { seconds: { type: "string", default: "300" } } });
const SECONDS = Number(values.seconds);

function fail(message) {
  console.error(`bench/soak FAILED: ${message}`);
  process.exit(1);
}

const NORMAL = `<!doctype html><title>normal</title><script>
  document.modelContext.registerTool({ name: "add", description: "Adds.", execute: async ({ a, b }) => ({ sum: a + b }) });
</script>`;
const HOSTILE = `<!doctype html><title>hostile</title><script>
  document.title = "T".repeat(1000000);
  history.replaceState(null, "", "/hostile?" + "q".repeat(1000000));
  const description = "D".repeat(8192);
  for (let i = 0; i < 6000; i++) document.modelContext.registerTool({ name: "h" + i, description, execute: async () => ({}) });
</script>`;
const pages = createHttpServer((request, response) => {
  response.setHeader("content-type", "text/html");
  response.end(request.url.startsWith("/hostile") ? HOSTILE : NORMAL);
});
pages.listen(0, "127.0.0.1");
await once(pages, "listening");
const pageUrl = (path) => `http://127.0.0.1:${pages.address().port}${path}`;

const dataDir = mkdtempSync(join(tmpdir(), "bench-soak-"));
const { child, url: baseUrl, key, exited } = await startServerProcess(dataDir, ["--rate-limit", "0", "--auth-failure-limit", "0"], { LOG_LEVEL: "error" });

async function api(method, path, body) {
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (response.status >= 500) fail(`${method} ${path}: HTTP ${response.status} ${text.slice(0, 300)}`);
  return { status: response.status, body: text === "" ? undefined : JSON.parse(text) };
}

function chromiumProcesses() {
  let count = 0;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, "utf8").includes("browser-service-chromium-")) count++;
    } catch {
      // Ended while listed.
    }
  }
  return count;
}

function sample(label) {
  const status = readFileSync(`/proc/${child.pid}/status`, "utf8");
  const rss = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
  return { moment: label, "server RSS MiB": rss.toFixed(1), "server open fds": readdirSync(`/proc/${child.pid}/fd`).length, "Chromium processes": chromiumProcesses() };
}

const percentile = (samples, p) => {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
};

/** GET /org/limits (and other control-plane calls) until `until`; latencies of the limits calls. */
async function controlPlane(until) {
  const latencies = [];
  let i = 0;
  while (Date.now() < until) {
    const started = process.hrtime.bigint();
    await api("GET", "/org/limits");
    latencies.push(Number(process.hrtime.bigint() - started) / 1e6);
    if (i % 10 === 0) await api("GET", "/org/projects?limit=20");
    if (i % 50 === 0) await api("PATCH", "/org/limits", { default_project_max_concurrent_sessions: 5 + (i % 3) });
    i++;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return latencies;
}

/** Browsers created, driven, navigated, discovered, invoked and deleted, one after another, until `until`. */
async function browserChurn(until) {
  let cycles = 0;
  while (Date.now() < until) {
    const created = await api("POST", "/browsers", { start_url: pageUrl("/normal") });
    if (created.status !== 201) fail(`POST /browsers: ${created.status} ${JSON.stringify(created.body)}`);
    const browser = created.body;
    const playwright = await chromium.connectOverCDP(browser.cdp_ws_url);
    const page = await playwright.contexts()[0].newPage();
    for (let n = 0; n < 3; n++) {
      await page.goto(pageUrl(`/normal?n=${n}`));
      let tools = [];
      for (let attempt = 0; attempt < 100 && tools.length < 2; attempt++) tools = (await api("GET", `/browsers/${browser.id}/webmcp/tools`)).body.tools;
      const add = tools.find((tool) => tool.source.page_url.endsWith(`n=${n}`));
      if (add) {
        const result = await api("POST", `/browsers/${browser.id}/webmcp/invoke`, { tool_ref: add.tool_ref, input: { a: n, b: 1 } });
        if (result.body?.output?.sum !== n + 1) fail(`invoke answered ${JSON.stringify(result.body)}`);
      }
    }
    await playwright.close();
    await api("DELETE", `/browsers/${browser.id}`);
    cycles++;
  }
  return cycles;
}

const rows = [];
let hostileBrowser;
try {
  // Warm-up, then the first sample.
  await browserChurn(Date.now() + 5_000);
  rows.push(sample("start (after warm-up)"));
  const half = (SECONDS * 1000) / 2;
  const [quiet, quietCycles] = await Promise.all([controlPlane(Date.now() + half), browserChurn(Date.now() + half)]);
  rows.push(sample("middle"));

  hostileBrowser = (await api("POST", "/browsers", { start_url: pageUrl("/hostile") })).body;
  const hostileUntil = Date.now() + half;
  const hostileDiscovery = (async () => {
    let omitted;
    while (Date.now() < hostileUntil) {
      // Read as text: parsing megabytes here would stall this process's own timing of /org/limits.
      const response = await fetch(`${baseUrl}/browsers/${hostileBrowser.id}/webmcp/tools`, { headers: { authorization: `Bearer ${key}` } });
      const text = await response.text();
      if (response.status !== 200) fail(`GET the hostile page's tools: HTTP ${response.status}`);
      omitted = /"omitted":(\[[^\]]*\])\}$/.exec(text.slice(-1000))?.[1] ?? omitted;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    return omitted;
  })();
  const [noisy, noisyCycles, omitted] = await Promise.all([controlPlane(hostileUntil), browserChurn(hostileUntil), hostileDiscovery]);
  await api("DELETE", `/browsers/${hostileBrowser.id}`);
  hostileBrowser = undefined;
  await new Promise((resolve) => setTimeout(resolve, 1000));
  rows.push(sample("end (after the last delete)"));

  console.log(`\nSoak: ${SECONDS} s of mixed traffic (${quietCycles + noisyCycles} browser cycles); the second half with a hostile page open\n`);
  console.table(rows);
  const quietP99 = percentile(quiet, 99);
  const noisyP99 = percentile(noisy, 99);
  console.table([
    { "GET /org/limits": "without the hostile page", requests: quiet.length, "p50 ms": percentile(quiet, 50).toFixed(2), "p99 ms": quietP99.toFixed(2) },
    { "GET /org/limits": "with the hostile page", requests: noisy.length, "p50 ms": percentile(noisy, 50).toFixed(2), "p99 ms": noisyP99.toFixed(2) },
    { "GET /org/limits": "ratio (goal ≤ 2x)", requests: "", "p50 ms": "", "p99 ms": `${(noisyP99 / quietP99).toFixed(2)}x` },
  ]);
  console.log(`the hostile page's snapshot said it omitted: ${omitted}`);
} finally {
  if (hostileBrowser) await api("DELETE", `/browsers/${hostileBrowser.id}`).catch(() => undefined);
  child.kill("SIGTERM");
  await exited;
  pages.close();
  rmSync(dataDir, { recursive: true, force: true });
}
