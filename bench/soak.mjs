#!/usr/bin/env node
// Soak: a bounded run of mixed traffic against the reference server (a child process on
// 127.0.0.1, as users run it): project and limit calls, browsers created and deleted,
// pages navigating, WebMCP discovery and invocation, for all of --seconds (default 300):
//
// - the first half quiet;
// - then a short fixed phase of its own (not counted in --seconds; about 20 s at the
//   default budget of 2,000 messages/s): one DevTools client of a third project sends
//   --pending (100,000) commands that Chromium never answers (`Runtime.evaluate` of a
//   promise that never settles, on a page session), as fast as it can, reading every
//   answer; the server's RSS before, when the first command is refused past
//   `--cdp-max-pending`, and after (goal: growth bounded by the cap; the refused ones hold
//   nothing);
// - an eighth with a hostile page open (6,000 tools of 8 KB, a 1 MB title and a 1 MB URL);
// - an eighth with 6 clients GETting that page's snapshot (the 32 MB cap) at once, round
//   after round;
// - two eighths of a DevTools flood from the third project: four clients on its own
//   browser's `cdp_ws_url`, each writing as fast as its socket drains a 6.4 MB command the
//   server refuses after parsing it (`Target.sendMessageToTarget`) then 1,000 small ones,
//   over and over (bench/support/cdp-flood.mjs); the first eighth's large commands are one
//   long string (as in the original report), the second's are 6.4 MB of `{}`, the JSON
//   that costs the most to parse per byte. Printed with what got through the server's
//   budgets (goal: the project's, at most 32 MiB/s, a character of JSON structure
//   counting as 256 bytes, and 4,000 messages/s).
//
// Prints the server's RSS and open file descriptors and the number of Chromium processes
// at the start, the middle, after the snapshots and at the end (goal: no growth after
// warm-up; none left after the last delete), and the p50 and p99 of another project's
// GET /org/limits quiet, and in each phase beside its quiet ones (goal: p99 within 2x).
//
// RSS is a high-water mark: after the hostile page, V8 keeps the pages it grew into even
// though the heap itself returns to its size before (checked in-process with
// --expose-gc: ~14 MiB used after each of four hostile browsers was deleted, no growth).
//
//   node bench/soak.mjs                 (after `pnpm build`)
//   node bench/soak.mjs --seconds 60
import { execFile } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer as createHttpServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { Worker } from "node:worker_threads";
import { chromium } from "playwright-core";
import WebSocket from "ws";
import { DEFAULT_CONFIG } from "../packages/server/dist/index.js";
import { startServerProcess } from "./support/child-server.mjs";

// The server's own defaults, which the soak runs with.
const PROJECT_BYTE_RATE_MIB = DEFAULT_CONFIG.cdpProjectByteRate / 1024 / 1024;
const PROJECT_MESSAGE_RATE = DEFAULT_CONFIG.cdpProjectMessageRate;

const { values } = parseArgs({ options: { seconds: { type: "string", default: "300" }, pending: { type: "string", default: "100000" } } });
const SECONDS = Number(values.seconds);
const PENDING_COMMANDS = Number(values.pending);

function fail(message) {
  console.error(`bench/soak FAILED: ${message}`);
  // What the server logged (errors only) says why.
  const logged = serverOut?.().trim();
  if (logged) console.error(`The server's log:\n${logged.split("\n").slice(-20).join("\n")}`);
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
// The pages are served on 127.0.0.1, which browsers reach only with --allow-private-network.
const {
  child,
  url: baseUrl,
  key,
  exited,
  out: serverOut,
} = await startServerProcess(dataDir, ["--rate-limit", "0", "--auth-failure-limit", "0", "--allow-private-network"], { LOG_LEVEL: "error" });

async function api(method, path, body, apiKey = key) {
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${apiKey}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
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

const rssMiB = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, "utf8"))?.[1] ?? 0) / 1024;

function sample(label) {
  return {
    moment: label,
    "server RSS MiB": rssMiB().toFixed(1),
    "server open fds": readdirSync(`/proc/${child.pid}/fd`).length,
    "Chromium processes": chromiumProcesses(),
  };
}

const percentile = (samples, p) => {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
};

// The tenant whose latency is measured: a project other than the Default one, whose
// browsers (the hostile one included) the rest of the traffic uses; its key is issued by
// `keys create`, which asks the running server.
const serverBin = fileURLToPath(new URL("../packages/server/bin/browser-service-server.mjs", import.meta.url));
let otherKey;

async function issueProjectKey(name) {
  const project = (await api("POST", "/org/projects", { name })).body;
  return new Promise((resolve, reject) =>
    execFile(process.execPath, [serverBin, "keys", "create", "--project", project.id, "--data-dir", dataDir], (error, stdout) =>
      error ? reject(error) : resolve(stdout.trim()),
    ),
  );
}

/** Another project's GET /org/limits (and control-plane calls) until `until`; latencies of the limits calls. */
async function controlPlane(until) {
  const latencies = [];
  const timed = (async () => {
    while (Date.now() < until) {
      const started = process.hrtime.bigint();
      const { status } = await api("GET", "/org/limits", undefined, otherKey);
      if (status !== 200) fail(`the other project's GET /org/limits: HTTP ${status}`);
      latencies.push(Number(process.hrtime.bigint() - started) / 1e6);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  })();
  // Beside the timed loop, not inside it: when the server stalls, an untimed call in the
  // same loop would take the stall and leave the timed ones out of it.
  const untimed = (async () => {
    for (let i = 0; Date.now() < until; i++) {
      await api("GET", "/org/projects?limit=20");
      if (i % 5 === 0) await api("PATCH", "/org/limits", { default_project_max_concurrent_sessions: 5 + (i % 3) });
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  })();
  await Promise.all([timed, untimed]);
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

// The snapshot clients run in a worker thread: reading 6 bodies of megabytes at once on
// this thread would delay its own timing of /org/limits, which is what is measured.
const SNAPSHOT_CLIENTS_SOURCE = `
const { workerData, parentPort } = require("node:worker_threads");
(async () => {
  const { url, key, clients, until } = workerData;
  let rounds = 0;
  let bytes = 0;
  while (Date.now() < until) {
    const answers = await Promise.all(Array.from({ length: clients }, async () => {
      const response = await fetch(url, { headers: { authorization: "Bearer " + key } });
      let size = 0;
      for await (const chunk of response.body) size += chunk.length;
      return { status: response.status, size };
    }));
    const refused = answers.find((answer) => answer.status !== 200);
    if (refused) throw new Error("GET the snapshot: HTTP " + refused.status);
    bytes = answers[0].size;
    rounds++;
  }
  parentPort.postMessage({ rounds, bytes });
})().catch((error) => parentPort.postMessage({ error: String(error && error.stack || error) }));
`;

/** `clients` GETs of a browser's snapshot at once, round after round, until `until`: how many rounds, and the body's size. */
async function concurrentSnapshots(browserId, clients, until) {
  const worker = new Worker(SNAPSHOT_CLIENTS_SOURCE, { eval: true, workerData: { url: `${baseUrl}/browsers/${browserId}/webmcp/tools`, key, clients, until } });
  const [result] = await once(worker, "message");
  await worker.terminate();
  if (result.error) fail(result.error);
  return result;
}

/**
 * One DevTools client sends `count` commands Chromium never answers, as fast as its socket
 * takes them, and reads every answer: the server's RSS before, when the first is refused
 * past the cap, and after the last answer; how many were held and refused.
 */
async function pendingCommands(browser, count) {
  const ws = new WebSocket(browser.cdp_ws_url, { perMessageDeflate: false });
  await once(ws, "open");
  const waiting = new Map();
  // Ids above the never-answered commands', so an answer tells which it is.
  let setupId = count;
  const call = (method, params, sessionId) =>
    new Promise((resolve, reject) => {
      const id = ++setupId;
      waiting.set(id, (message) => (message.error ? reject(new Error(`${method}: ${message.error.message}`)) : resolve(message.result)));
      ws.send(JSON.stringify({ id, method, params, ...(sessionId === undefined ? {} : { sessionId }) }));
    });
  const stats = {
    answered: 0,
    refusedAtCap: 0,
    otherErrors: 0,
    results: 0,
    firstRefusedId: undefined,
    answeredBeforeFirstRefusal: 0,
    rssAtCap: NaN,
    rssHalfway: NaN,
    refusedHalfway: 0,
  };
  // Halfway through the refusals too: RSS that grew with what the refused commands held would keep growing; garbage levels off.
  const halfway = Math.floor((count - SERVER_MAX_PENDING) / 2);
  ws.on("message", (data) => {
    const message = JSON.parse(data.toString());
    if (message.id === undefined) return;
    const setup = waiting.get(message.id);
    if (setup) {
      waiting.delete(message.id);
      setup(message);
      return;
    }
    stats.answered++;
    if (message.error?.message.includes("awaiting the browser's answer")) {
      if (stats.firstRefusedId === undefined) {
        stats.firstRefusedId = message.id;
        stats.answeredBeforeFirstRefusal = stats.answered - 1;
        stats.rssAtCap = rssMiB();
      }
      stats.refusedAtCap++;
      if (stats.refusedAtCap === halfway) {
        stats.rssHalfway = rssMiB();
        stats.refusedHalfway = halfway;
      }
    } else if (message.error) stats.otherErrors++;
    else stats.results++;
  });
  const { targetInfos } = await call("Target.getTargets", {});
  const page = targetInfos.find((target) => target.type === "page") ?? (await call("Target.createTarget", { url: "about:blank" }));
  const { sessionId } = await call("Target.attachToTarget", { targetId: page.targetId, flatten: true });
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const rssBefore = rssMiB();
  const started = performance.now();
  const deadline = Date.now() + 120_000;
  let sent = 0;
  for (let id = 1; id <= count && Date.now() < deadline; id++) {
    const text = `{"id":${id},"method":"Runtime.evaluate","params":{"expression":"new Promise(() => {})","awaitPromise":true},"sessionId":"${sessionId}"}`;
    // Waiting for every thousandth write keeps the sending side bounded, and no slower than the socket.
    if (id % 1000 === 0) await new Promise((resolve) => ws.send(text, resolve));
    else ws.send(text);
    sent++;
  }
  // The held ones never answer: done when the rest has, or when answers stop coming.
  let last = -1;
  let quietSince = Date.now();
  while (Date.now() < deadline) {
    if (stats.firstRefusedId !== undefined && stats.answered >= sent - (stats.firstRefusedId - 1 - stats.answeredBeforeFirstRefusal)) break;
    if (stats.answered !== last) {
      last = stats.answered;
      quietSince = Date.now();
    } else if (Date.now() - quietSince > 5000) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const seconds = (performance.now() - started) / 1000;
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const rssAfter = rssMiB();
  ws.close();
  return {
    sent,
    seconds,
    rssBefore,
    rssAfter,
    ...stats,
    held: sent - stats.answered,
    heldAtCap: stats.firstRefusedId === undefined ? NaN : stats.firstRefusedId - 1 - stats.answeredBeforeFirstRefusal,
  };
}

// The server's --cdp-max-pending, left at its default; only where to sample depends on it.
const SERVER_MAX_PENDING = 10_000;
const FLOOD_CLIENTS = 4;
const FLOOD_MESSAGE_BYTES = 6_400_000;
const FLOOD_SMALL_PER_LARGE = 1000;

/**
 * The DevTools flood (bench/support/cdp-flood.mjs, a worker thread) on `browser`, from when
 * its clients are connected and `startPhase()` is called until the end that returns: what
 * got through the server's budgets, counted after their first second.
 */
async function devtoolsFlood(browser, shape, startPhase) {
  const worker = new Worker(new URL("./support/cdp-flood.mjs", import.meta.url), {
    workerData: { url: browser.cdp_ws_url, clients: FLOOD_CLIENTS, shape, largeBytes: FLOOD_MESSAGE_BYTES, smallPerLarge: FLOOD_SMALL_PER_LARGE },
  });
  const failed = once(worker, "error").then(([error]) => fail(`the DevTools flood: ${error.stack ?? error}`));
  await Promise.race([once(worker, "message"), failed]);
  const until = startPhase();
  // A phase of under 2 s is counted from its middle instead.
  worker.postMessage({ until, settledAt: Math.min(Date.now() + 1000, (Date.now() + until) / 2) });
  const [result] = await Promise.race([once(worker, "message"), failed]);
  await worker.terminate();
  return result;
}

const SNAPSHOT_CLIENTS = 6;
const rows = [];
let hostileBrowser;
let floodBrowser;
try {
  otherKey = await issueProjectKey("soak-other");
  // The DevTools flood's tenant: its own project, key and browsers.
  const floodKey = await issueProjectKey("soak-flood");
  // Warm-up, then the first sample.
  await browserChurn(Date.now() + 5_000);
  rows.push(sample("start (after warm-up)"));
  const half = (SECONDS * 1000) / 2;
  const [quiet, quietCycles] = await Promise.all([controlPlane(Date.now() + half), browserChurn(Date.now() + half)]);
  rows.push(sample("middle"));

  // Alone, so that nothing else moves the server's RSS meanwhile.
  floodBrowser = (await api("POST", "/browsers", {}, floodKey)).body;
  const pending = await pendingCommands(floodBrowser, PENDING_COMMANDS);
  await api("DELETE", `/browsers/${floodBrowser.id}`, undefined, floodKey);
  floodBrowser = undefined;

  hostileBrowser = (await api("POST", "/browsers", { start_url: pageUrl("/hostile") })).body;
  const eighth = half / 4;
  const hostileUntil = Date.now() + eighth;
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
  const crowdedUntil = Date.now() + eighth;
  const [crowded, crowdedCycles, snapshots] = await Promise.all([
    controlPlane(crowdedUntil),
    browserChurn(crowdedUntil),
    concurrentSnapshots(hostileBrowser.id, SNAPSHOT_CLIENTS, crowdedUntil),
  ]);
  await api("DELETE", `/browsers/${hostileBrowser.id}`);
  hostileBrowser = undefined;
  await new Promise((resolve) => setTimeout(resolve, 1000));
  rows.push(sample("after the snapshots (hostile browser deleted)"));

  floodBrowser = (await api("POST", "/browsers", {}, floodKey)).body;
  const floods = [];
  let floodCycles = 0;
  for (const shape of ["strings", "objects"]) {
    let measured;
    const flood = await devtoolsFlood(floodBrowser, shape, () => {
      const until = Date.now() + eighth;
      measured = Promise.all([controlPlane(until), browserChurn(until)]);
      return until;
    });
    const [latencies, cycles] = await measured;
    floodCycles += cycles;
    floods.push({ shape, flood, latencies });
  }
  await api("DELETE", `/browsers/${floodBrowser.id}`, undefined, floodKey);
  floodBrowser = undefined;
  await new Promise((resolve) => setTimeout(resolve, 1000));
  rows.push(sample("end (after the DevTools flood, its browser deleted)"));

  console.log(
    `\nSoak: ${SECONDS} s of mixed traffic (${quietCycles + noisyCycles + crowdedCycles + floodCycles} browser cycles): the first half quiet, ` +
      `then an eighth each with a hostile page open, with ${SNAPSHOT_CLIENTS} clients GETting its snapshot at once, and two of a DevTools flood; ` +
      `besides, ${pending.seconds.toFixed(1)} s of ${PENDING_COMMANDS} never-answered DevTools commands after the quiet half\n`,
  );
  console.table(rows);
  const row = (what, latencies, quietOnes) => ({
    "another project's GET /org/limits": what,
    requests: latencies.length,
    "p50 ms": percentile(latencies, 50).toFixed(2),
    "p99 ms": percentile(latencies, 99).toFixed(2),
    "p50 / quiet": quietOnes === undefined ? "" : `${(percentile(latencies, 50) / percentile(quietOnes, 50)).toFixed(2)}x`,
    "p99 / quiet": quietOnes === undefined ? "" : `${(percentile(latencies, 99) / percentile(quietOnes, 99)).toFixed(2)}x`,
  });
  const shapeName = { strings: "a string", objects: "{}" };
  console.table([
    row("quiet (no hostile page)", quiet),
    row("with the hostile page (goal: p99 ≤ 2x)", noisy, quiet),
    row(`while ${SNAPSHOT_CLIENTS} clients GET its ${(snapshots.bytes / 1e6).toFixed(1)} MB snapshot at once (${snapshots.rounds} rounds)`, crowded, quiet),
    ...floods.map(({ shape, latencies }) =>
      row(`DevTools flood, ${FLOOD_CLIENTS} clients, ${FLOOD_MESSAGE_BYTES / 1e6} MB commands of ${shapeName[shape]} (goal: p99 ≤ 2x)`, latencies, quiet),
    ),
  ]);
  console.log(`the hostile page's snapshot said it omitted: ${omitted}`);

  const MIB = 1024 * 1024;
  console.log(
    `\nWhat the flood got through, after the budgets' first second (goal: the project's budget, ${FLOOD_CLIENTS} clients of ${FLOOD_SMALL_PER_LARGE} small commands after each large one)`,
  );
  console.table(
    floods.map(({ shape, flood }) => ({
      "large commands of": shapeName[shape],
      seconds: flood.seconds.toFixed(1),
      "large/s": (flood.large / flood.seconds).toFixed(1),
      "small/s": Math.round(flood.small / flood.seconds),
      "MiB/s": (flood.bytes / MIB / flood.seconds).toFixed(1),
      [`MiB/s / budget (${PROJECT_BYTE_RATE_MIB})`]: `${(flood.bytes / MIB / flood.seconds / PROJECT_BYTE_RATE_MIB).toFixed(2)}x`,
      [`messages/s / budget (${PROJECT_MESSAGE_RATE})`]: `${((flood.large + flood.small) / flood.seconds / PROJECT_MESSAGE_RATE).toFixed(2)}x`,
      "closed by the server": flood.closes.length === 0 ? "none" : flood.closes.join(", "),
    })),
  );

  const perCommand = (mib, commands) => (commands > 0 ? `${Math.round((mib * MIB) / commands)} B` : "");
  console.log(`\nNever-answered commands: one client sent ${pending.sent} in ${pending.seconds.toFixed(1)} s (goal: RSS growth bounded by the cap)`);
  console.table([
    { moment: "before", "server RSS MiB": pending.rssBefore.toFixed(1), "commands held": 0, "refused past the cap": 0, "RSS growth per command": "" },
    {
      moment: "the cap reached (first refusal)",
      "server RSS MiB": pending.rssAtCap.toFixed(1),
      "commands held": pending.heldAtCap,
      "refused past the cap": 0,
      "RSS growth per command": `${perCommand(pending.rssAtCap - pending.rssBefore, pending.heldAtCap)} per held`,
    },
    {
      moment: "halfway through the refusals",
      "server RSS MiB": pending.rssHalfway.toFixed(1),
      "commands held": pending.heldAtCap,
      "refused past the cap": pending.refusedHalfway,
      "RSS growth per command": `${perCommand(pending.rssHalfway - pending.rssAtCap, pending.refusedHalfway)} per refused since the cap`,
    },
    {
      moment: "after the last answer (+1 s)",
      "server RSS MiB": pending.rssAfter.toFixed(1),
      "commands held": pending.held,
      "refused past the cap": pending.refusedAtCap,
      "RSS growth per command": `${perCommand(pending.rssAfter - pending.rssBefore, pending.held)} per held, ${perCommand(pending.rssAfter - pending.rssAtCap, pending.refusedAtCap)} per refused since the cap`,
    },
  ]);
  if (pending.otherErrors + pending.results > 0) console.log(`also answered: ${pending.otherErrors} other errors, ${pending.results} results`);
} finally {
  if (hostileBrowser) await api("DELETE", `/browsers/${hostileBrowser.id}`).catch(() => undefined);
  if (floodBrowser) await api("DELETE", `/browsers/${floodBrowser.id}`).catch(() => undefined);
  child.kill("SIGTERM");
  await exited;
  pages.close();
  rmSync(dataDir, { recursive: true, force: true });
}
