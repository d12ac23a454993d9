#!/usr/bin/env node
// WebMCP benchmark of the reference server, on real headless Chromium (CHROMIUM_PATH or
// /usr/bin/chromium) with test pages served on 127.0.0.1 and localhost:
//   1. discovery: p50/p99 latency of GET /browsers/{id}/webmcp/tools with 1, 10 and 30 tabs,
//      each tab with 3 frames (the page, a same-origin iframe, a cross-origin out-of-process
//      iframe) and 5 tools per document (15 per tab): a 200 with the body beside a 304 to an
//      If-None-Match of the current ETag (a poller's request), alternated so that both meet
//      the same machine; plus how long after the last tab's load event the snapshot held
//      every tool;
//   2. memory: resident (RSS) and proportional (PSS) memory of each browser's Chromium
//      processes at each size;
//   2b. tab titles: at 30 tabs, the same 200 from a second server that reads the tab titles
//      from Chromium for every listing (webmcpTitleMaxAgeMs 0) beside the default (one read
//      serves listings for up to page_title's x-max-age-ms), alternated;
//   3. invocation: round trip of POST /browsers/{id}/webmcp/invoke, sent with fetch and with
//      @browser-service/client, against calling WebMCP.invokeTool directly over CDP on the
//      same tab (the server's overhead), taking turns.
// Every run is a fixed number of requests and every browser is deleted, so it is bounded.
//
//   node bench/webmcp.mjs                    (after `pnpm build`; runs from anywhere)
//   node bench/webmcp.mjs --requests 300     (GETs per size and invocations per path; default 200)
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { createClient } from "@browser-service/client";
import { chromium } from "playwright-core";
import { ChromiumLauncher, createServer } from "../packages/server/dist/index.js";
import { PageServer } from "../tools/test-pages/src/page-server.mjs";
import { numberedTools } from "../tools/test-pages/src/shared-pages.mjs";

const { values } = parseArgs({ options: { requests: { type: "string", default: "200" } } });
const REQUESTS = Number(values.requests);
const TAB_COUNTS = [1, 10, 30];
const TOOLS_PER_DOCUMENT = 5;
const FRAMES_PER_TAB = 3;
// JIT and Chromium warm up over the first few dozen calls; they are not measured.
const WARMUP = 100;
const SNAPSHOT_WAIT_ATTEMPTS = 1200;

/** A failed step; thrown (never process.exit) so that every browser and server is closed first. */
class BenchFailure extends Error {}
function fail(message) {
  throw new BenchFailure(message);
}

// ---- pages -------------------------------------------------------------------------
const tools = (where) => numberedTools(where, TOOLS_PER_DOCUMENT);
// The tests' page server (tools/test-pages): a tab on 127.0.0.1 with a same-origin frame and
// a cross-origin (localhost) frame.
const pageServer = await PageServer.start();
pageServer.serve(
  "/tab",
  (port) =>
    `<!doctype html><title>Bench tab</title>${tools("top")}<iframe src="/frame?same"></iframe><iframe src="http://localhost:${port}/frame?cross" allow="tools"></iframe>`,
);
pageServer.serve("/frame", `<!doctype html><title>Bench frame</title>${tools("frame")}`);
const pageUrl = pageServer.url("/tab");

// ---- measurement helpers -----------------------------------------------------------
const percentile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
const summary = (samples) => {
  const sorted = [...samples].sort((a, b) => a - b);
  return { p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99) };
};
const msSince = (start) => Number(process.hrtime.bigint() - start) / 1e6;

/** RSS and PSS (MiB) summed over a browser's process group (Chromium is started as its own group). */
function groupMemoryMiB(leaderPid) {
  let rssKiB = 0;
  let pssKiB = 0;
  let processes = 0;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let stat;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      // Fields after the command name (which may hold spaces): state ppid pgrp ...
      const pgrp = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[2]);
      if (pgrp !== leaderPid) continue;
      const field = (text, name) => Number(new RegExp(`^${name}:\\s+(\\d+)`, "m").exec(text)?.[1] ?? 0);
      rssKiB += field(readFileSync(`/proc/${entry}/status`, "utf8"), "VmRSS");
      pssKiB += field(readFileSync(`/proc/${entry}/smaps_rollup`, "utf8"), "Pss");
      processes++;
    } catch (error) {
      // A helper process that exited while being read is simply not counted.
      if (error.code !== "ENOENT" && error.code !== "ESRCH") throw error;
    }
  }
  return { rss: rssKiB / 1024, pss: pssKiB / 1024, processes };
}

// ---- server --------------------------------------------------------------------------
class TrackingLauncher {
  launched = [];
  #inner = new ChromiumLauncher({ allowPrivateNetwork: true });
  async launch(options) {
    const browser = await this.#inner.launch(options);
    this.launched.push(browser);
    return browser;
  }
}
const launcher = new TrackingLauncher();
const dataDir = mkdtempSync(join(tmpdir(), "browser-service-bench-webmcp-"));
// The per-key rate limit is off: the rows measure WebMCP through the server, not the limit.
const server = await createServer({ dataDir, host: "127.0.0.1", port: 0, launcher, rateLimits: { perKey: { rate: 0, burst: 1 } } });
const base = await server.listen();
const authorization = `Bearer ${server.firstStart.key.secret}`;
// The same server reading tab titles for every listing, for the 30-tab comparison.
const freshDataDir = mkdtempSync(join(tmpdir(), "browser-service-bench-webmcp-fresh-"));
const freshServer = await createServer({
  dataDir: freshDataDir,
  host: "127.0.0.1",
  port: 0,
  launcher: new TrackingLauncher(),
  rateLimits: { perKey: { rate: 0, burst: 1 } },
  webmcpTitleMaxAgeMs: 0,
});
const fresh = { base: await freshServer.listen(), authorization: `Bearer ${freshServer.firstStart.key.secret}` };
// The project's own client (undici's dispatch), beside fetch: what a user of it waits.
const client = createClient({ baseUrl: base, apiKey: server.firstStart.key.secret, projectId: null, maxRetries: 0 });

async function api(method, path, body, target = { base, authorization }) {
  const response = await fetch(`${target.base}${path}`, {
    method,
    headers: body === undefined ? { authorization: target.authorization } : { authorization: target.authorization, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) fail(`${method} ${path}: HTTP ${response.status} ${text}`);
  return text === "" ? undefined : JSON.parse(text);
}

/** A GET of the tool snapshot: a 200 with its body read and parsed, or, with `etag`, the 304 to that If-None-Match. */
async function listTools(browserId, etag, target = { base, authorization }) {
  const response = await fetch(`${target.base}/browsers/${browserId}/webmcp/tools`, {
    headers: etag === undefined ? { authorization: target.authorization } : { authorization: target.authorization, "if-none-match": etag },
  });
  const text = await response.text();
  const expected = etag === undefined ? 200 : 304;
  if (response.status !== expected) fail(`GET tools: HTTP ${response.status}, expected ${expected}`);
  return { etag: response.headers.get("etag"), tools: etag === undefined ? JSON.parse(text).tools : undefined };
}

/**
 * Times `count` calls of each of `calls`, taking turns (each round starts with the next
 * one), so that all meet the same machine; returns their latency lists in order.
 */
async function timedTogether(count, ...calls) {
  const samples = calls.map(() => []);
  for (let i = 0; i < count; i++) {
    for (let j = 0; j < calls.length; j++) {
      const which = (i + j) % calls.length;
      const start = process.hrtime.bigint();
      await calls[which](i);
      samples[which].push(msSince(start));
    }
  }
  return samples;
}

/**
 * Creates a browser on `target`'s server, opens `tabs` tabs of the bench page in it over
 * its cdp_ws_url, and waits until the snapshot lists every tool; returns the browser, the
 * Playwright connection (to close), the pages and how long the snapshot took after the
 * last load event.
 */
async function openBrowser(tabs, target = { base, authorization }) {
  const browser = await api("POST", "/browsers", { name: `bench-${tabs}` }, target);
  const playwright = await chromium.connectOverCDP(browser.cdp_ws_url);
  const context = playwright.contexts()[0];
  const expected = tabs * FRAMES_PER_TAB * TOOLS_PER_DOCUMENT;
  const pages = [];
  for (let i = 0; i < tabs; i++) {
    const page = await context.newPage();
    await page.goto(`${pageUrl}?tab=${i}`);
    pages.push(page);
  }
  const allLoaded = process.hrtime.bigint();
  let listed = 0;
  for (let attempt = 0; attempt < SNAPSHOT_WAIT_ATTEMPTS && listed !== expected; attempt++) {
    listed = (await api("GET", `/browsers/${browser.id}/webmcp/tools`, undefined, target)).tools.length;
    if (listed !== expected) await new Promise((resolve) => setTimeout(resolve, 25));
  }
  if (listed !== expected) fail(`${tabs} tabs: the snapshot holds ${listed} tools, expected ${expected}`);
  return { browser, playwright, context, pages, expected, fullSnapshotMs: msSince(allLoaded) };
}

const discovery = [];
let titleRows;
let invocation;
try {
  for (const tabs of TAB_COUNTS) {
    const { browser, playwright, context, pages, expected, fullSnapshotMs } = await openBrowser(tabs);
    const launched = launcher.launched.at(-1);
    try {
      const { etag } = await listTools(browser.id);
      const full = () => listTools(browser.id);
      const notModified = () => listTools(browser.id, etag);
      await timedTogether(WARMUP, full, notModified);
      const before = server.webmcpSnapshotBuilds();
      const [fullSamples, notModifiedSamples] = await timedTogether(REQUESTS, full, notModified);
      const unbuilt = server.webmcpSnapshotBuilds().remembered - before.remembered;
      if (tabs === TAB_COUNTS.at(-1)) {
        // The same 30 tabs in a browser of the server that reads titles for every listing.
        const other = await openBrowser(tabs, fresh);
        try {
          const everyListing = () => listTools(other.browser.id, undefined, fresh);
          await timedTogether(WARMUP, full, everyListing);
          const [defaultSamples, everySamples] = await timedTogether(REQUESTS, full, everyListing);
          titleRows = { tabs, kept: summary(defaultSamples), every: summary(everySamples) };
        } finally {
          await other.playwright.close();
          await api("DELETE", `/browsers/${other.browser.id}`, undefined, fresh);
        }
      }
      discovery.push({
        tabs,
        tools: expected,
        full: summary(fullSamples),
        notModified: summary(notModifiedSamples),
        unbuilt,
        fullSnapshotMs,
        memory: groupMemoryMiB(launched.pid),
      });

      if (tabs === 1) {
        const [page] = pages;
        const snapshot = (await api("GET", `/browsers/${browser.id}/webmcp/tools`)).tools;
        const tool = snapshot.find((each) => each.name === "tool_0" && each.source.frame === null);
        const viaServer = (n) => api("POST", `/browsers/${browser.id}/webmcp/invoke`, { tool_ref: tool.tool_ref, input: { n }, timeout_sec: 30 });
        const viaClient = (n) => client.webmcp.invoke(browser.id, { tool_ref: tool.tool_ref, input: { n }, timeout_sec: 30 });
        const cdp = await context.newCDPSession(page);
        await cdp.send("WebMCP.enable");
        const frameId = (await cdp.send("Page.getFrameTree")).frameTree.frame.id;
        // toolResponded may arrive before invokeTool's reply is read: keep it until asked for.
        const arrived = new Map();
        const waiting = new Map();
        cdp.on("WebMCP.toolResponded", (event) => {
          const resolve = waiting.get(event.invocationId);
          if (resolve) resolve(event);
          else arrived.set(event.invocationId, event);
        });
        const direct = async (n) => {
          const { invocationId } = await cdp.send("WebMCP.invokeTool", { frameId, toolName: "tool_0", input: { n } });
          const event = arrived.get(invocationId) ?? (await new Promise((resolve) => waiting.set(invocationId, resolve)));
          arrived.delete(invocationId);
          waiting.delete(invocationId);
          if (event.status !== "Completed") fail(`direct invocation ended ${event.status}`);
        };
        await timedTogether(WARMUP, viaServer, viaClient, direct);
        const [serverSamples, clientSamples, directSamples] = await timedTogether(REQUESTS, viaServer, viaClient, direct);
        invocation = { server: summary(serverSamples), client: summary(clientSamples), direct: summary(directSamples) };
        await cdp.detach();
      }
    } finally {
      await playwright.close();
      await api("DELETE", `/browsers/${browser.id}`);
    }
  }
} catch (error) {
  console.error(`bench/webmcp FAILED: ${error instanceof BenchFailure ? error.message : error.stack}`);
  process.exitCode = 1;
} finally {
  await server.close();
  await freshServer.close();
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(freshDataDir, { recursive: true, force: true });
  await pageServer.close();
}
if (process.exitCode === 1) process.exit();

const f = (n, digits = 2) => n.toFixed(digits);
console.log(
  `\nWebMCP on Chromium (${process.env.CHROMIUM_PATH ?? "/usr/bin/chromium"}): ${REQUESTS} sequential requests per row, keep-alive, after ${WARMUP} warm-up requests`,
);
console.log(`Each tab: ${FRAMES_PER_TAB} frames (page, same-origin iframe, cross-origin iframe), ${TOOLS_PER_DOCUMENT} tools per document\n`);
console.log(
  "| tabs | tools | GET tools 200 p50 ms | 200 p99 ms | 304 p50 ms | 304 p99 ms | 304 / 200 p50 | 304s without a build | all listed after last load, ms | Chromium processes | RSS MiB | PSS MiB |",
);
console.log(
  "| ---: | ----: | -------------------: | ---------: | ---------: | ---------: | ------------: | -------------------: | -----------------------------: | -----------------: | ------: | ------: |",
);
for (const row of discovery) {
  const { full, notModified } = row;
  console.log(
    `| ${row.tabs} | ${row.tools} | ${f(full.p50)} | ${f(full.p99)} | ${f(notModified.p50)} | ${f(notModified.p99)} | ${f(notModified.p50 / full.p50)} | ${row.unbuilt} of ${REQUESTS} | ${f(row.fullSnapshotMs, 0)} | ${row.memory.processes} | ${f(row.memory.rss, 0)} | ${f(row.memory.pss, 0)} |`,
  );
}
const titleTable = [
  [`GET tools 200 at ${titleRows.tabs} tabs: titles read at most every 500 ms (default)`, titleRows.kept],
  ["GET tools 200: titles read for every listing (webmcpTitleMaxAgeMs 0)", titleRows.every],
  ["ratio (default / every listing)", { p50: titleRows.kept.p50 / titleRows.every.p50, p99: titleRows.kept.p99 / titleRows.every.p99 }],
];
const titleWidth = Math.max(...titleTable.map(([label]) => label.length));
console.log(`\n| ${"tab titles".padEnd(titleWidth)} | p50 ms | p99 ms |`);
console.log(`| ${"-".repeat(titleWidth)} | -----: | -----: |`);
for (const [label, { p50, p99 }] of titleTable) console.log(`| ${label.padEnd(titleWidth)} | ${f(p50).padStart(6)} | ${f(p99).padStart(6)} |`);
const invocationRows = [
  ["POST .../webmcp/invoke with fetch", invocation.server],
  ["POST .../webmcp/invoke with @browser-service/client", invocation.client],
  ["WebMCP.invokeTool over CDP", invocation.direct],
  ["ratio (fetch / direct)", { p50: invocation.server.p50 / invocation.direct.p50, p99: invocation.server.p99 / invocation.direct.p99 }],
  ["cost over direct, fetch", { p50: invocation.server.p50 - invocation.direct.p50, p99: invocation.server.p99 - invocation.direct.p99 }],
  ["cost over direct, @browser-service/client", { p50: invocation.client.p50 - invocation.direct.p50, p99: invocation.client.p99 - invocation.direct.p99 }],
];
const labelWidth = Math.max(...invocationRows.map(([label]) => label.length));
console.log(`\n| ${"invocation of one tool (1 tab)".padEnd(labelWidth)} | p50 ms | p99 ms |`);
console.log(`| ${"-".repeat(labelWidth)} | -----: | -----: |`);
for (const [label, { p50, p99 }] of invocationRows) console.log(`| ${label.padEnd(labelWidth)} | ${f(p50).padStart(6)} | ${f(p99).padStart(6)} |`);
