#!/usr/bin/env node
// `POST /browsers` from the warm pool vs cold Chromium launches vs the hosted service's
// published 30 ms p50 / 105 ms p99, for 1 and 4 concurrent callers, side by side in one
// run; plus `DELETE` latency and the memory (RSS and PSS) of the warm pool. Each create
// has a start_url, so the warm numbers include the navigation being issued.
//
// - warm: the pool is full and the machine quiet before each create (1 caller) or each
//   burst of 4 (4 callers): the browsers launched or deleted just before (the pool's
//   refill, the cold side's) have finished starting or exiting, as a pool waiting for
//   the next user has; creates/s is creates over the time spent in them.
// - cold: a server without a pool, the same creates.
// - sustained: 4 callers creating and deleting without pause against a pool of 4; the
//   pool refills one browser at a time, so past its size creates launch cold. Wall-clock
//   creates/s, and how many came from the pool.
// - sandbox: every browser above runs in its sandbox (bwrap, egress proxy); the 1-caller
//   rows are repeated with --unsafe-no-sandbox in the same loop, for the sandbox's cost.
// - Chromium alone: the launcher starting a sandboxed, budgeted browser with no server
//   around it, beside the cold creates: the floor a cold create cannot go below.
// - loop: a user's sequential create, 600 ms of work, delete, 600 ms, as the server's
//   defaults serve it (pool of 2) and without a pool (cold).
// - page load: a 1 MB response fetched by a page through the egress proxy (sandboxed
//   browser) vs by a Chromium started directly without proxy (goal: >= 0.8x).
//
//   node bench/browsers.mjs                 (after `pnpm build`)
//   node bench/browsers.mjs --creates 40 --rounds 8 --seconds 5
import { fork } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { chromium } from "playwright-core";
import { ChromiumLauncher, createServer } from "../packages/server/dist/index.js";

const { values } = parseArgs({
  options: { creates: { type: "string", default: "20" }, rounds: { type: "string", default: "5" }, seconds: { type: "string", default: "3" } },
});
const CREATES = Number(values.creates);
const ROUNDS = Number(values.rounds);
const SUSTAINED_MS = Number(values.seconds) * 1000;
const POOL = 4;
const PAGE_BYTES = 1024 * 1024;
const PAGE_FETCHES = 20;

function fail(message) {
  console.error(`bench/browsers FAILED: ${message}`);
  process.exit(1);
}

/** Jiffies the machine spent busy and in all, from the first line of /proc/stat. */
function cpuTimes() {
  const [, ...fields] = readFileSync("/proc/stat", "utf8").split("\n", 1)[0].trim().split(/\s+/).map(Number);
  const idle = fields[3] + fields[4];
  const total = fields.slice(0, 8).reduce((sum, value) => sum + value, 0);
  return { busy: total - idle, total };
}

const QUIET_BUSY = 0.15;
const QUIET_WINDOW_MS = 250;
const QUIET_MAX_MS = 10_000;
const quietWaits = [];
/**
 * Waits until the machine is quiet: under 15 % of its CPU busy over two windows of 250 ms
 * in a row (Chromium's start-up and exit go on for a while after a launch or a delete
 * returned), 10 s at most; 300 ms where /proc/stat does not exist.
 */
async function quiet() {
  if (!existsSync("/proc/stat")) return sleep(300);
  const started = performance.now();
  let calm = 0;
  while (calm < 2 && performance.now() - started < QUIET_MAX_MS) {
    const before = cpuTimes();
    await sleep(QUIET_WINDOW_MS);
    const after = cpuTimes();
    const busy = (after.busy - before.busy) / Math.max(1, after.total - before.total);
    calm = busy < QUIET_BUSY ? calm + 1 : 0;
  }
  quietWaits.push({ ms: performance.now() - started, reached: calm >= 2 });
}

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Launches through Chromium and remembers each process (the pool's and cold creates' alike). */
class CountingLauncher {
  launched = [];
  #inner;
  constructor(sandboxed) {
    this.#inner = new ChromiumLauncher({ allowPrivateNetwork: true, unsafeNoSandbox: !sandboxed });
  }
  async launch(options) {
    const browser = await this.#inner.launch(options);
    this.launched.push(browser);
    return browser;
  }
}

async function startServer(warmBrowsers, { sandboxed = true } = {}) {
  const dataDir = mkdtempSync(join(tmpdir(), "bench-browsers-"));
  const launcher = new CountingLauncher(sandboxed);
  const server = await createServer({ dataDir, port: 0, planLimit: 100, warmBrowsers, launcher, rateLimits: { perKey: { rate: 0, burst: 1 } } });
  const baseUrl = await server.listen();
  const headers = { authorization: `Bearer ${server.firstStart.key.secret}`, "content-type": "application/json" };
  return {
    server,
    launcher,
    async create(startUrl) {
      const started = performance.now();
      const response = await fetch(`${baseUrl}/browsers`, { method: "POST", headers, body: JSON.stringify({ start_url: startUrl }) });
      const body = await response.json();
      const ms = performance.now() - started;
      if (response.status !== 201) fail(`POST /browsers: HTTP ${response.status} ${JSON.stringify(body)}`);
      return { id: body.id, ms };
    },
    async delete(id) {
      const started = performance.now();
      const response = await fetch(`${baseUrl}/browsers/${id}`, { method: "DELETE", headers: { authorization: headers.authorization } });
      await response.arrayBuffer();
      if (response.status !== 204) fail(`DELETE /browsers: HTTP ${response.status}`);
      return performance.now() - started;
    },
    async poolFull() {
      for (let waited = 0; server.warmPoolStats().ready < warmBrowsers; waited += 20) {
        if (waited > 60_000) fail("the warm pool did not fill within 60 s");
        await sleep(20);
      }
      // Let the last launched browser finish its own start-up work, and the cold side's
      // browsers theirs (or their exit), before measuring: a full pool, idle.
      await quiet();
    },
    async close() {
      await server.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Every process descended from `pid`, and `pid` itself. */
function processTree(pid) {
  const all = [pid];
  for (let index = 0; index < all.length; index++) {
    try {
      for (const task of readdirSync(`/proc/${all[index]}/task`)) {
        all.push(...readFileSync(`/proc/${all[index]}/task/${task}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number));
      }
    } catch {
      // The process ended while it was read.
    }
  }
  return all;
}

/** Sums RSS and PSS (from /proc/<pid>/smaps_rollup) over the process trees of these browsers (bwrap, socat and Chromium's processes). */
function groupMemory(pids) {
  let rss = 0;
  let pss = 0;
  for (const entry of pids.flatMap(processTree)) {
    try {
      const rollup = readFileSync(`/proc/${entry}/smaps_rollup`, "utf8");
      rss += Number(/^Rss:\s+(\d+)/m.exec(rollup)?.[1] ?? 0);
      pss += Number(/^Pss:\s+(\d+)/m.exec(rollup)?.[1] ?? 0);
    } catch {
      // The process ended while it was read.
    }
  }
  return { rssMiB: rss / 1024, pssMiB: pss / 1024 };
}

const page = fork(new URL("./fixtures/start-page.mjs", import.meta.url), { stdio: ["ignore", "inherit", "inherit", "ipc"] });
const { port: pagePort } = await new Promise((resolve, reject) => {
  page.once("message", resolve);
  page.once("exit", (code) => reject(new Error(`the start page exited with ${code} before listening`)));
});
const startUrl = `http://127.0.0.1:${pagePort}/start`;

const rows = [];
const deletes = [];
const row = (name, latencies, seconds, note) => {
  const sorted = [...latencies].sort((a, b) => a - b);
  rows.push({
    "POST /browsers": name,
    creates: latencies.length,
    "p50 ms": percentile(sorted, 50).toFixed(1),
    "p99 ms": percentile(sorted, 99).toFixed(1),
    "creates/s": (latencies.length / seconds).toFixed(1),
    note,
  });
};

const warm = await startServer(POOL);
const cold = await startServer(0);
const bareWarm = await startServer(POOL, { sandboxed: false });
const bareCold = await startServer(0, { sandboxed: false });
let poolMemory;
let bareMemory;
let loops;
let pageLoad;
try {
  // One unmeasured create each, so that every server's first request costs are paid.
  for (const side of [warm, cold, bareWarm, bareCold]) {
    await side.poolFull?.();
    const { id } = await side.create(startUrl);
    await side.delete(id);
  }

  // 1 caller: warm and cold, sandboxed and not, alternate, so machine noise hits all alike.
  const one = { warm: [], cold: [], bareWarm: [], bareCold: [], chromium: [] };
  // Chromium alone, as the launcher starts it in its sandbox and budget, no server around
  // it: the floor a cold create cannot go below.
  const alone = new ChromiumLauncher({ allowPrivateNetwork: true });
  for (let i = 0; i < CREATES; i++) {
    for (const [name, side] of [
      ["warm", warm],
      ["bareWarm", bareWarm],
    ]) {
      await side.poolFull();
      const created = await side.create(startUrl);
      one[name].push(created.ms);
      deletes.push(await side.delete(created.id));
    }
    if (i % 2 === 0) {
      for (const [name, side] of [
        ["cold", cold],
        ["bareCold", bareCold],
      ]) {
        const created = await side.create(startUrl);
        one[name].push(created.ms);
        deletes.push(await side.delete(created.id));
      }
      const started = performance.now();
      const launched = await alone.launch({ startUrl });
      one.chromium.push(performance.now() - started);
      await launched.close();
    }
  }
  await warm.poolFull();
  await bareWarm.poolFull();
  poolMemory = groupMemory(warm.launcher.launched.filter((browser) => !browser.cdp.closed).map((browser) => browser.pid));
  bareMemory = groupMemory(bareWarm.launcher.launched.filter((browser) => !browser.cdp.closed).map((browser) => browser.pid));
  await bareWarm.close();
  await bareCold.close();

  // 4 callers at once.
  const four = { warm: [], cold: [] };
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, side] of [
      ["warm", warm],
      ["cold", cold],
    ]) {
      if (name === "warm") await warm.poolFull();
      const created = await Promise.all(Array.from({ length: POOL }, () => side.create(startUrl)));
      four[name].push(...created.map((each) => each.ms));
      deletes.push(...(await Promise.all(created.map((each) => side.delete(each.id)))));
    }
  }

  // Sustained: 4 callers without pause against a pool of 4.
  await warm.poolFull();
  const takenBefore = warm.server.warmPoolStats().taken;
  const sustained = [];
  const began = performance.now();
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (performance.now() - began < SUSTAINED_MS) {
        const created = await warm.create(startUrl);
        sustained.push(created.ms);
        await warm.delete(created.id);
      }
    }),
  );
  const sustainedSeconds = (performance.now() - began) / 1000;
  const coldInSustained = sustained.length - (warm.server.warmPoolStats().taken - takenBefore);

  loops = await userLoops();
  pageLoad = await pageLoadThroughEgress();

  const seconds = (latencies, callers) => latencies.reduce((sum, ms) => sum + ms, 0) / 1000 / callers;
  row("warm pool, 1 caller", one.warm, seconds(one.warm, 1), "pool full before each create");
  row("  the same, --unsafe-no-sandbox", one.bareWarm, seconds(one.bareWarm, 1), "");
  row("cold launch, 1 caller", one.cold, seconds(one.cold, 1), "goal: p50 ≤ 250");
  row("  the same, --unsafe-no-sandbox", one.bareCold, seconds(one.bareCold, 1), "");
  row("  Chromium alone, sandboxed (no server)", one.chromium, seconds(one.chromium, 1), "the floor of a cold create");
  row(`warm pool, ${POOL} callers`, four.warm, seconds(four.warm, POOL), `pool of ${POOL} full before each burst of ${POOL}`);
  row(`cold launch, ${POOL} callers`, four.cold, seconds(four.cold, POOL), "");
  row(`sustained, 4 callers, pool of ${POOL}`, sustained, sustainedSeconds, `${sustained.length - coldInSustained} from the pool, ${coldInSustained} cold`);
  row(
    "loop: create, 600 ms, delete, 600 ms; pool of 2",
    loops.pooled.latencies,
    loops.pooled.seconds,
    `${loops.pooled.fromPool} from the pool; goal p50 ≤ 30, p99 ≤ 105`,
  );
  row("loop: the same without a pool", loops.cold.latencies, loops.cold.seconds, "goal: p50 ≤ 250");
  rows.push({
    "POST /browsers": "published (hosted service)",
    creates: "",
    "p50 ms": "30",
    "p99 ms": "105",
    "creates/s": "",
    note: "goal for warm: p50 ≤ 30, p99 ≤ 105",
  });
} finally {
  await warm.close();
  await cold.close();
  await bareWarm.close().catch(() => undefined);
  await bareCold.close().catch(() => undefined);
  page.disconnect();
}

console.log(
  `\nPOST /browsers with a start_url: warm pool vs cold launch (${CREATES} + ${Math.ceil(CREATES / 2)} creates by 1 caller, ${ROUNDS} bursts of ${POOL}, ${SUSTAINED_MS / 1000} s sustained)\n`,
);
console.table(rows);
const sortedDeletes = [...deletes].sort((a, b) => a - b);
console.log(
  `DELETE /browsers/{id}: p50 ${percentile(sortedDeletes, 50).toFixed(1)} ms, p99 ${percentile(sortedDeletes, 99).toFixed(1)} ms (${deletes.length} deletes)`,
);
const quietMs = quietWaits.map((wait) => wait.ms).sort((a, b) => a - b);
if (quietMs.length > 0) {
  console.log(
    `Before each warm create or burst: waited for a quiet machine (< ${QUIET_BUSY * 100} % CPU busy) ${percentile(quietMs, 50).toFixed(0)} ms p50, ${quietMs.at(-1).toFixed(0)} ms max; ${quietWaits.filter((wait) => !wait.reached).length} of ${quietWaits.length} waits gave up after ${QUIET_MAX_MS / 1000} s`,
  );
}
console.log(
  `Warm pool of ${POOL}, idle, sandboxed: RSS ${poolMemory.rssMiB.toFixed(0)} MiB (shared pages counted per process), PSS ${poolMemory.pssMiB.toFixed(0)} MiB (${(poolMemory.pssMiB / POOL).toFixed(0)} MiB per browser, bwrap and socat included)`,
);
console.log(
  `Warm pool of ${POOL}, idle, --unsafe-no-sandbox: RSS ${bareMemory.rssMiB.toFixed(0)} MiB, PSS ${bareMemory.pssMiB.toFixed(0)} MiB (${(bareMemory.pssMiB / POOL).toFixed(0)} MiB per browser)`,
);
console.log(`\nA page fetching ${PAGE_BYTES / 1024 / 1024} MB, ${PAGE_FETCHES} times (median MB/s):`);
console.table(pageLoad);

/**
 * A user's sequential loop as the server's defaults serve it: create, 600 ms of work,
 * delete, 600 ms, against a pool of 2 and against no pool (cold launches).
 */
async function userLoops() {
  const result = {};
  for (const [name, warmBrowsers] of [
    ["pooled", 2],
    ["cold", 0],
  ]) {
    const side = await startServer(warmBrowsers);
    try {
      await side.poolFull?.();
      const takenBefore = side.server.warmPoolStats().taken;
      const latencies = [];
      for (let i = 0; i < CREATES; i++) {
        const created = await side.create(startUrl);
        latencies.push(created.ms);
        await sleep(600);
        await side.delete(created.id);
        await sleep(600);
      }
      result[name] = { latencies, seconds: latencies.reduce((sum, ms) => sum + ms, 0) / 1000, fromPool: side.server.warmPoolStats().taken - takenBefore };
    } finally {
      await side.close();
    }
  }
  return result;
}

/** Median MB/s of a page fetching 1 MB from 127.0.0.1, `PAGE_FETCHES` times, in `evaluate`. */
async function fetchRate(evaluate, url) {
  await evaluate(`fetch(${JSON.stringify(url)}).then((response) => response.arrayBuffer())`);
  const rates = [];
  for (let i = 0; i < PAGE_FETCHES; i++) {
    const ms = await evaluate(
      `(async () => { const started = performance.now(); await (await fetch(${JSON.stringify(`${url}?${i}`)}, { cache: "no-store" })).arrayBuffer(); return performance.now() - started; })()`,
    );
    rates.push(PAGE_BYTES / 1024 / 1024 / (ms / 1000));
  }
  return rates.sort((a, b) => a - b)[Math.floor(rates.length / 2)];
}

/** The 1 MB page load through a sandboxed browser's egress proxy vs a Chromium without proxy, alternating; the bytes come from the page process. */
async function pageLoadThroughEgress() {
  const url = `http://127.0.0.1:${pagePort}/mb`;
  const launched = await new ChromiumLauncher({ allowPrivateNetwork: true }).launch({});
  const direct = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium", args: ["--no-sandbox", "--disable-gpu"] });
  try {
    const { targetId } = await launched.cdp.call("Target.createTarget", { url: "about:blank" });
    const { sessionId } = await launched.cdp.call("Target.attachToTarget", { targetId, flatten: true });
    await launched.cdp.call("Page.navigate", { url: startUrl }, sessionId);
    await sleep(500);
    const viaEgress = async (expression) =>
      (await launched.cdp.call("Runtime.evaluate", { expression, awaitPromise: true, returnByValue: true }, sessionId)).result.value;
    const directPage = await direct.newPage();
    await directPage.goto(startUrl);
    const viaDirect = (expression) => directPage.evaluate(expression);
    const rates = { egress: [], direct: [] };
    for (let round = 0; round < 3; round++) {
      rates.egress.push(await fetchRate(viaEgress, url));
      rates.direct.push(await fetchRate(viaDirect, url));
    }
    const median = (values) => values.sort((a, b) => a - b)[1];
    const egress = median(rates.egress);
    const plain = median(rates.direct);
    return [
      { path: "sandboxed: page → socat → egress proxy → 127.0.0.1", "MB/s": egress.toFixed(0), ratio: `${(egress / plain).toFixed(2)}x`, note: "goal ≥ 0.8x" },
      { path: "Chromium without proxy or sandbox", "MB/s": plain.toFixed(0), ratio: "1.00x", note: "" },
    ];
  } finally {
    await launched.close();
    await direct.close();
  }
}
