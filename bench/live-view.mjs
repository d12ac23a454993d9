#!/usr/bin/env node
// The live view against a screencast of one's own, side by side in one run on one browser.
// The page is a grid of coloured boxes with text (so frames weigh what a real page's do) and
// a 64 px square in its top-left corner whose grey level changes every --interval ms (16
// levels in turn, from requestAnimationFrame), each change's time recorded by the page.
// Phases of --seconds each, every stream started 0.5 s before it is timed: idle (nobody
// watches: the CPU baseline); raw (Playwright on the browser's cdp_ws_url, a CDP session on
// the tab running Page.startScreencast with the live view's parameters, each frame acked as
// it arrives); the live view with 1 and with 4 `ws` viewers of /browsers/{id}/live; raw again.
// The live rows are compared with the better raw row on each count, so drift counts against them.
// A frame's grey level, read off the DC coefficient of its JPEG's first 8x8 block (the first
// Huffman code of the scan: no decoder, microseconds; checked once against playwright-core's
// bundled jpeg-js), names the change it shows. Latency: from a change to the arrival here of
// the first frame showing it, the page's clock set to Node's by the evaluate round trip with
// the least delay before each phase (both are wall time at origin plus the monotonic clock).
// A change no frame showed (a newer came first) has none: "changes shown" counts the others.
// The server is a child process (its bin, --warm-browsers 0) so that the viewers' work here
// is not counted as its own: its CPU and its descendants' (Chromium) come from
// /proc/<pid>/stat before and after each timed phase (10 ms ticks). Bounded: fixed phases,
// then the server is stopped with its browser.
//
//   node bench/live-view.mjs                      (after `pnpm build`)
//   node bench/live-view.mjs --seconds 10 --interval 16   (a page changing every frame)
import { once } from "node:events";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { parseArgs } from "node:util";
import { chromium } from "playwright-core";
import { jpegjs } from "playwright-core/lib/utilsBundle";
import WebSocket from "ws";
import { DEFAULT_LIVE_VIEW_LIMITS } from "../packages/server/dist/index.js";
import { PageServer } from "../tools/test-pages/src/page-server.mjs";
import { startServerProcess } from "./support/child-server.mjs";

const { values } = parseArgs({ options: { seconds: { type: "string", default: "5" }, interval: { type: "string", default: "50" } } });
const SECONDS = Number(values.seconds);
const INTERVAL_MS = Number(values.interval);
const WARMUP_MS = 500;
// Frames still arriving after a phase's end may show changes made before it.
const GRACE_MS = 1000;
// The raw screencast asks for what the live view does.
const { quality, maxWidth, maxHeight, maxFps } = DEFAULT_LIVE_VIEW_LIMITS;
const SCREENCAST = { format: "jpeg", quality, maxWidth, maxHeight, everyNthFrame: 1 };
const LEVELS = 16;
const level = (index) => 8 + 16 * index;
// Base64 characters kept of each frame: its headers and the start of its scan.
const PREFIX = 4096;
const CLOCK_TICKS = 100;

class BenchFailure extends Error {}
function fail(message) {
  throw new BenchFailure(message);
}

const now = () => performance.timeOrigin + performance.now();
const f = (n, digits = 1) => (n === undefined ? "-" : n.toFixed(digits));
const percentile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];

/** Mean luma of the top-left 8x8 block of a baseline JPEG, from the DC coefficient of its first Huffman code. */
function topLeftLuma(jpeg) {
  const quant = [];
  const dc = [];
  let luma;
  for (let i = 2; i + 4 <= jpeg.length; ) {
    const marker = jpeg[i + 1];
    const end = i + 2 + jpeg.readUInt16BE(i + 2);
    let p = i + 4;
    if (marker === 0xdb) for (; p < end; p += 65 + 64 * (jpeg[p] >> 4)) quant[jpeg[p] & 15] = jpeg[p] >> 4 ? jpeg.readUInt16BE(p + 1) : jpeg[p + 1];
    else if (marker === 0xc4)
      while (p < end) {
        const counts = jpeg.subarray(p + 1, p + 17);
        const total = counts.reduce((sum, count) => sum + count, 0);
        if (jpeg[p] >> 4 === 0) dc[jpeg[p] & 15] = { counts, symbols: jpeg.subarray(p + 17, p + 17 + total) };
        p += 17 + total;
      }
    else if (marker === 0xc0) luma = { id: jpeg[p + 6], quant: jpeg[p + 8] };
    else if (marker === 0xda) {
      let table;
      for (let c = 0; c < jpeg[p]; c++) if (jpeg[p + 1 + 2 * c] === luma?.id) table = dc[jpeg[p + 2 + 2 * c] >> 4];
      if (!table || quant[luma.quant] === undefined) break;
      return 128 + (firstDc(jpeg, end, table) * quant[luma.quant]) / 8;
    }
    i = end;
  }
  fail("a frame is not a baseline JPEG");
}

function firstDc(jpeg, start, { counts, symbols }) {
  let pos = start;
  let bit = 8;
  let byte = 0;
  const next = () => {
    if (bit === 8) {
      if (pos >= jpeg.length) fail(`a frame's scan starts past its first ${PREFIX} base64 characters`);
      byte = jpeg[pos++];
      if (byte === 0xff) pos++; // a stuffed zero
      bit = 0;
    }
    return (byte >> (7 - bit++)) & 1;
  };
  let size;
  for (let length = 0, code = 0, value = 0, k = 0; length < 16 && size === undefined; length++) {
    value = (value << 1) | next();
    if (value - code < counts[length]) size = symbols[k + value - code];
    else [k, code] = [k + counts[length], (code + counts[length]) << 1];
  }
  let diff = 0;
  for (let j = 0; j < size; j++) diff = (diff << 1) | next();
  return size && diff < 1 << (size - 1) ? diff - (1 << size) + 1 : diff;
}

/** CPU ms used so far by the server process and by all its descendants (Chromium), from /proc. */
function cpuMs(serverPid) {
  const parent = new Map();
  const used = new Map();
  for (const pid of readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .map(Number)) {
    let stat;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    } catch {
      continue; // it exited while being listed
    }
    stat = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    parent.set(pid, Number(stat[1]));
    used.set(pid, ((Number(stat[11]) + Number(stat[12])) * 1000) / CLOCK_TICKS);
  }
  const below = (pid) => (parent.get(pid) === serverPid ? true : parent.get(pid) > 1 && below(parent.get(pid)));
  const chromium = [...used].reduce((sum, [pid, ms]) => (below(pid) ? sum + ms : sum), 0);
  return { server: used.get(serverPid) ?? fail("the server process is gone"), chromium };
}

/** Frames/s, mean frame bytes and the latency of each change shown, for one stream's frames. */
function streamStats(frames, changes, start, end) {
  const latencies = [];
  const shown = new Set();
  for (const { at, data } of frames) {
    const luma = topLeftLuma(Buffer.from(data, "base64"));
    const index = Math.round((luma - level(0)) / 16);
    if (index < 0 || index >= LEVELS || Math.abs(luma - level(index)) > 4) fail(`a frame's square has the grey level ${f(luma)}`);
    // The newest change to this level before the frame arrived is the one it shows.
    let n = changes.length - 1 - ((((changes.length - 1 - index) % LEVELS) + LEVELS) % LEVELS);
    while (n >= 0 && changes[n] > at) n -= LEVELS;
    if (n < 0 || shown.has(n)) continue;
    shown.add(n);
    if (changes[n] >= start && changes[n] <= end) latencies.push(at - changes[n]);
  }
  const timed = frames.filter(({ at }) => at >= start && at <= end);
  return { fps: timed.length / ((end - start) / 1000), bytes: timed.reduce((sum, frame) => sum + frame.bytes, 0) / timed.length, latencies };
}

// How much of the time work waited for a CPU over the last minute, before the run: this machine is shared.
const pressure = /some avg10=\S+ avg60=(\S+)/.exec(readFileSync("/proc/pressure/cpu", "utf8"))?.[1] ?? "?";
const pages = await PageServer.start();
const box = (i) => `<div style="display:inline-block;width:60px;height:40px;background:hsl(${i * 7},70%,50%)">${i} text</div>`;
pages.serve(
  "/changing",
  `<!doctype html><title>live view bench</title><body style="margin:0;font:13px sans-serif">
<div id="square" style="position:fixed;left:0;top:0;width:64px;height:64px;background:#000"></div>${Array.from({ length: 300 }, (_, i) => box(i)).join("")}
<script>
const changes = (window.changes = []);
let next = 0;
requestAnimationFrame(function tick() {
  if (performance.now() >= next) {
    const v = ${level(0)} + 16 * (changes.length % ${LEVELS});
    square.style.background = "rgb(" + v + "," + v + "," + v + ")";
    changes.push(performance.timeOrigin + performance.now());
    next = Math.max(next + ${INTERVAL_MS}, performance.now());
  }
  requestAnimationFrame(tick);
});
</script>`,
);
const dataDir = mkdtempSync(join(tmpdir(), "bench-live-view-"));
const flags = ["--rate-limit", "0", "--auth-failure-limit", "0", "--allow-private-network", "--warm-browsers", "0"];
const { child, url: base, key, exited } = await startServerProcess(dataDir, flags, { LOG_LEVEL: "error" });
let playwright;
let frameSize;
const rows = [];
try {
  const response = await fetch(`${base}/browsers`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ start_url: pages.url("/changing") }),
  });
  if (response.status !== 201) fail(`POST /browsers: HTTP ${response.status} ${await response.text()}`);
  const browser = await response.json();
  const liveUrl = new URL(browser.live_view_url);
  const token = new URLSearchParams(liveUrl.hash.slice(1)).get("token");
  [liveUrl.protocol, liveUrl.hash] = ["ws:", ""];
  playwright = await chromium.connectOverCDP(browser.cdp_ws_url);
  const context = playwright.contexts()[0];
  const page = context.pages().find((each) => each.url().endsWith("/changing")) ?? fail("the browser has no bench tab");
  await page.waitForFunction(() => window.changes.length > 5);

  let sample;
  const raw = async (onFrame) => {
    const cdp = await context.newCDPSession(page);
    cdp.on("Page.screencastFrame", ({ data, sessionId }) => {
      onFrame(0, data.slice(0, PREFIX), data.length);
      cdp.send("Page.screencastFrameAck", { sessionId }).catch(() => {});
      sample ??= data;
    });
    await cdp.send("Page.startScreencast", SCREENCAST);
    return () => cdp.send("Page.stopScreencast").then(() => cdp.detach());
  };
  const live = (viewers) => async (onFrame) => {
    const sockets = Array.from({ length: viewers }, (_, stream) => {
      const ws = new WebSocket(liveUrl, ["browser-service.live-view", `token.${token}`], { perMessageDeflate: false });
      ws.on("message", (message) => {
        // Not JSON.parse: what matters here is the server, not this process's parsing.
        if (message.toString("latin1", 0, 15) !== '{"type":"frame"') return;
        const at = message.indexOf('"data":"') + 8;
        onFrame(stream, message.toString("latin1", at, at + PREFIX), message.length - at - 2);
      });
      ws.on("close", (code, reason) => code !== 1005 && console.error(`a viewer was closed: ${code} ${reason}`));
      return ws;
    });
    await Promise.all(sockets.map((ws) => once(ws, "open")));
    return () => Promise.all(sockets.map((ws) => (ws.close(), once(ws, "close"))));
  };

  const phases = [
    ["idle (nobody watching)", 0],
    ["raw screencast", 1, raw],
    ["live view, 1 viewer", 1, live(1)],
    ["live view, 4 viewers", 4, live(4)],
  ];
  for (const [name, streams, open] of [...phases, ["raw screencast, again", 1, raw]]) {
    let clock;
    for (let i = 0; i < 20; i++) {
      const before = now();
      const pageNow = await page.evaluate(() => performance.timeOrigin + performance.now());
      const after = now();
      if (!clock || after - before < clock.rtt) clock = { rtt: after - before, offset: pageNow - (before + after) / 2 };
    }
    const frames = Array.from({ length: streams }, () => []);
    const close = await open?.((stream, data, bytes) => frames[stream].push({ at: now(), data, bytes }));
    await sleep(WARMUP_MS);
    const [start, cpuStart] = [now(), cpuMs(child.pid)];
    await sleep(SECONDS * 1000);
    const [end, cpuEnd] = [now(), cpuMs(child.pid)];
    await sleep(GRACE_MS);
    await close?.();
    const changes = (await page.evaluate(() => window.changes)).map((at) => at - clock.offset);
    const made = changes.filter((at) => at >= start && at <= end).length;
    const stats = frames.map((list) => streamStats(list, changes, start, end));
    if (stats.some((each) => each.fps === 0)) fail(`${name}: a stream got no frame`);
    const latencies = stats.flatMap((each) => each.latencies).sort((a, b) => a - b);
    const seconds = (end - start) / 1000;
    const mean = (key) => stats.reduce((sum, each) => sum + each[key], 0) / streams;
    const [server, chromium] = [(cpuEnd.server - cpuStart.server) / seconds, (cpuEnd.chromium - cpuStart.chromium) / seconds];
    const [p50, p99, shown] = [percentile(latencies, 0.5), percentile(latencies, 0.99), latencies.length / streams / made];
    rows.push({ name, streams, clock, fps: mean("fps"), kib: mean("bytes") / 1024, shown, changesPerS: made / seconds, p50, p99, server, chromium });
    await sleep(300);
  }
  // The DC read against a whole decode, once: the top-left pixel of a uniform block.
  const jpeg = Buffer.from(sample, "base64");
  const decoded = jpegjs.decode(jpeg);
  if (Math.abs(topLeftLuma(jpeg) - decoded.data[0]) > 3) fail(`the DC read gave ${f(topLeftLuma(jpeg))}, jpeg-js ${decoded.data[0]}`);
  frameSize = `${decoded.width}x${decoded.height}`;
} catch (error) {
  console.error(`bench/live-view FAILED: ${error instanceof BenchFailure ? error.message : error.stack}`);
  process.exitCode = 1;
} finally {
  await playwright?.close().catch(() => {});
  child.kill("SIGTERM");
  await exited;
  await pages.close();
  rmSync(dataDir, { recursive: true, force: true });
}
if (process.exitCode === 1) process.exit();

const [idle, raw, , , rawAgain] = rows;
// The better raw row of the two on each count: drift of this shared machine counts against the live view.
const reference = { fps: Math.max(raw.fps, rawAgain.fps), p50: Math.min(raw.p50, rawAgain.p50) };
console.log(
  `\nLive view vs a raw screencast: a page changing every ${INTERVAL_MS} ms, frames ${frameSize} px, JPEG q${quality}, live view cap ${maxFps} frames/s, ${SECONDS} s per phase; live rows against the better raw row on each count`,
);
console.log(
  `CPU pressure before the run ${pressure} %; idle: server ${f(idle.server)} CPU ms/s, Chromium ${f(idle.chromium)}; page clock - Node's: ${rows.map((row) => `${f(row.clock.offset, 2)} ± ${f(row.clock.rtt / 2, 2)} ms`).join(", ")}\n`,
);
console.log(
  "| path | page changes/s | frames/s per stream | x raw | KiB per frame | changes shown | latency p50 ms | p50 vs raw | p99 ms | server CPU ms/s above idle | per viewer | Chromium CPU ms/s above idle |",
);
console.log("| - | -: | -: | -: | -: | -: | -: | -: | -: | -: | -: | -: |");
for (const row of [raw, ...rows.slice(2)]) {
  const isLive = row.name.startsWith("live");
  const server = row.server - idle.server;
  const ratio = `${f(row.fps / reference.fps, 2)}x${isLive ? " (goal ≥ 0.80x)" : ""}`;
  const p50 = isLive ? `${row.p50 >= reference.p50 ? "+" : ""}${f(row.p50 - reference.p50)} (goal ≤ +20)` : "";
  console.log(
    `| ${row.name} | ${f(row.changesPerS)} | ${f(row.fps)} | ${ratio} | ${f(row.kib)} | ${f(row.shown * 100, 0)} % | ${f(row.p50)} | ${p50} | ${f(row.p99)} | ${f(server)} | ${isLive ? f(server / row.streams) : ""} | ${f(row.chromium - idle.chromium)} |`,
  );
}
