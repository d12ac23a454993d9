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
//
//   node bench/browsers.mjs                 (after `pnpm build`)
//   node bench/browsers.mjs --creates 40 --rounds 8 --seconds 5
import { fork } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { ChromiumLauncher, createServer } from "../packages/server/dist/index.js";

const { values } = parseArgs({ options: { creates: { type: "string", default: "20" }, rounds: { type: "string", default: "5" }, seconds: { type: "string", default: "3" } } });
const CREATES = Number(values.creates);
const ROUNDS = Number(values.rounds);
const SUSTAINED_MS = Number(values.seconds) * 1000;
const POOL = 4;

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
  #inner = new ChromiumLauncher();
  async launch(options) {
    const browser = await this.#inner.launch(options);
    this.launched.push(browser);
    return browser;
  }
}

async function startServer(warmBrowsers) {
  const dataDir = mkdtempSync(join(tmpdir(), "bench-browsers-"));
  const launcher = new CountingLauncher();
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

/** Sums a memory field (kB) of /proc/<pid>/smaps_rollup over every process of these process groups. */
function groupMemory(pgids) {
  const groups = new Set(pgids);
  let rss = 0;
  let pss = 0;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      if (!groups.has(Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[2]))) continue;
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
  rows.push({ "POST /browsers": name, creates: latencies.length, "p50 ms": percentile(sorted, 50).toFixed(1), "p99 ms": percentile(sorted, 99).toFixed(1), "creates/s": (latencies.length / seconds).toFixed(1), note });
};

const warm = await startServer(POOL);
const cold = await startServer(0);
let poolMemory;
try {
  // One unmeasured create each, so that both servers' first request costs are paid.
  for (const side of [warm, cold]) {
    await side.poolFull?.();
    const { id } = await side.create(startUrl);
    await side.delete(id);
  }

  // 1 caller: warm and cold alternate, so machine noise hits both alike.
  const one = { warm: [], cold: [] };
  for (let i = 0; i < CREATES; i++) {
    await warm.poolFull();
    const byWarm = await warm.create(startUrl);
    one.warm.push(byWarm.ms);
    deletes.push(await warm.delete(byWarm.id));
    if (i % 2 === 0) {
      const byCold = await cold.create(startUrl);
      one.cold.push(byCold.ms);
      deletes.push(await cold.delete(byCold.id));
    }
  }
  await warm.poolFull();
  poolMemory = groupMemory(warm.launcher.launched.filter((browser) => !browser.cdp.closed).map((browser) => browser.pid));

  // 4 callers at once.
  const four = { warm: [], cold: [] };
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, side] of [["warm", warm], ["cold", cold]]) {
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
  await Promise.all(Array.from({ length: 4 }, async () => {
    while (performance.now() - began < SUSTAINED_MS) {
      const created = await warm.create(startUrl);
      sustained.push(created.ms);
      await warm.delete(created.id);
    }
  }));
  const sustainedSeconds = (performance.now() - began) / 1000;
  const coldInSustained = sustained.length - (warm.server.warmPoolStats().taken - takenBefore);

  const seconds = (latencies, callers) => latencies.reduce((sum, ms) => sum + ms, 0) / 1000 / callers;
  row("warm pool, 1 caller", one.warm, seconds(one.warm, 1), "pool full before each create");
  row("cold launch, 1 caller", one.cold, seconds(one.cold, 1), "");
  row(`warm pool, ${POOL} callers`, four.warm, seconds(four.warm, POOL), `pool of ${POOL} full before each burst of ${POOL}`);
  row(`cold launch, ${POOL} callers`, four.cold, seconds(four.cold, POOL), "");
  row(`sustained, 4 callers, pool of ${POOL}`, sustained, sustainedSeconds, `${sustained.length - coldInSustained} from the pool, ${coldInSustained} cold`);
  rows.push({ "POST /browsers": "published (hosted service)", creates: "", "p50 ms": "30", "p99 ms": "105", "creates/s": "", note: "goal for warm: p50 ≤ 30, p99 ≤ 105" });
} finally {
  await warm.close();
  await cold.close();
  page.disconnect();
}

console.log(`\nPOST /browsers with a start_url: warm pool vs cold launch (${CREATES} + ${Math.ceil(CREATES / 2)} creates by 1 caller, ${ROUNDS} bursts of ${POOL}, ${SUSTAINED_MS / 1000} s sustained)\n`);
console.table(rows);
const sortedDeletes = [...deletes].sort((a, b) => a - b);
console.log(`DELETE /browsers/{id}: p50 ${percentile(sortedDeletes, 50).toFixed(1)} ms, p99 ${percentile(sortedDeletes, 99).toFixed(1)} ms (${deletes.length} deletes)`);
const quietMs = quietWaits.map((wait) => wait.ms).sort((a, b) => a - b);
if (quietMs.length > 0) {
  console.log(`Before each warm create or burst: waited for a quiet machine (< ${QUIET_BUSY * 100} % CPU busy) ${percentile(quietMs, 50).toFixed(0)} ms p50, ${quietMs.at(-1).toFixed(0)} ms max; ${quietWaits.filter((wait) => !wait.reached).length} of ${quietWaits.length} waits gave up after ${QUIET_MAX_MS / 1000} s`);
}
console.log(`Warm pool of ${POOL}, idle: RSS ${poolMemory.rssMiB.toFixed(0)} MiB (shared pages counted per process), PSS ${poolMemory.pssMiB.toFixed(0)} MiB (${(poolMemory.pssMiB / POOL).toFixed(0)} MiB per browser)`);
