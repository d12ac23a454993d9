#!/usr/bin/env node
// DevTools through the server's endpoint (`cdp_ws_url`: WebSocket, token, per-client
// session routing) vs a session straight on the browser's pipe, side by side in one run on
// one browser: `Runtime.evaluate("1+1")` round trips (p50/p99) and 1280x800
// `Page.captureScreenshot` per second. Rounds alternate between the two paths so that
// machine noise hits both alike. A third path is the endpoint to a browser that captures
// telemetry (its default categories): the same evaluations, and `Page.stopLoading` round
// trips (a command `cdp_command` events report) against the endpoint without telemetry.
// Bounded: a fixed number of calls, then everything stops.
//
//   node bench/cdp.mjs                       (after `pnpm build`)
//   node bench/cdp.mjs --evals 3000 --shots 60
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer as createHttpServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import WebSocket from "ws";
import { ChromiumLauncher, createServer } from "../packages/server/dist/index.js";

const { values } = parseArgs({
  options: { evals: { type: "string", default: "2000" }, shots: { type: "string", default: "40" }, rounds: { type: "string", default: "4" } },
});
const EVALS = Number(values.evals);
const SHOTS = Number(values.shots);
const ROUNDS = Number(values.rounds);

function fail(message) {
  console.error(`bench/cdp FAILED: ${message}`);
  process.exit(1);
}

/** A DevTools client over either path: `send` resolves with the result or rejects with the protocol error. */
function protocolClient(post) {
  let nextId = 1;
  const waiting = new Map();
  return {
    receive(message) {
      const resolve = waiting.get(message.id);
      if (!resolve) return;
      waiting.delete(message.id);
      resolve(message);
    },
    async send(method, params = {}, sessionId) {
      const id = nextId++;
      const answered = new Promise((resolve) => waiting.set(id, resolve));
      post({ id, method, params, ...(sessionId === undefined ? {} : { sessionId }) });
      const message = await answered;
      if (message.error) fail(`${method}: ${message.error.message}`);
      return message.result;
    },
  };
}

async function direct(router) {
  const channel = await router.openChannel();
  const client = protocolClient((message) => channel.send(message));
  // Large messages come still serialized; a client parses them as it would off a socket.
  channel.onMessage((message) => client.receive(typeof message === "string" ? JSON.parse(message) : message));
  return { ...client, close: () => channel.close() };
}

async function proxied(url) {
  const ws = new WebSocket(url, { perMessageDeflate: false });
  await once(ws, "open");
  const client = protocolClient((message) => ws.send(JSON.stringify(message)));
  ws.on("message", (data) => client.receive(JSON.parse(data.toString())));
  return { ...client, close: () => ws.close() };
}

/** Attaches to the page and sizes it to 1280x800; returns the page session. */
async function pageSession(client) {
  const { targetInfos } = await client.send("Target.getTargets");
  const page = targetInfos.find((info) => info.type === "page");
  if (!page) fail("the browser has no page");
  const { sessionId } = await client.send("Target.attachToTarget", { targetId: page.targetId, flatten: true });
  await client.send("Emulation.setDeviceMetricsOverride", { width: 1280, height: 800, deviceScaleFactor: 1, mobile: false }, sessionId);
  return sessionId;
}

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

async function evalLatencies(client, sessionId, count, into) {
  for (let i = 0; i < count; i++) {
    const started = process.hrtime.bigint();
    const result = await client.send("Runtime.evaluate", { expression: "1+1", returnByValue: true }, sessionId);
    into.push(Number(process.hrtime.bigint() - started) / 1e6);
    if (result.result.value !== 2) fail("Runtime.evaluate did not answer 2");
  }
}

async function reportedLatencies(client, sessionId, count, into) {
  for (let i = 0; i < count; i++) {
    const started = process.hrtime.bigint();
    await client.send("Page.stopLoading", {}, sessionId);
    into.push(Number(process.hrtime.bigint() - started) / 1e6);
  }
}

async function screenshots(client, sessionId, count) {
  const started = process.hrtime.bigint();
  for (let i = 0; i < count; i++) {
    const { data } = await client.send("Page.captureScreenshot", { format: "png" }, sessionId);
    if (data.length < 1000) fail("a screenshot came back empty");
  }
  return Number(process.hrtime.bigint() - started) / 1e9;
}

// A page with enough on it that a screenshot is real work for the browser.
const page = createHttpServer((_request, response) => {
  response.setHeader("content-type", "text/html");
  response.end(
    `<!doctype html><title>bench</title><body style="margin:0">${Array.from({ length: 200 }, (_, i) => `<div style="display:inline-block;width:60px;height:40px;background:hsl(${i * 7},70%,50%)">${i}</div>`).join("")}</body>`,
  );
});
page.listen(0, "127.0.0.1");
await once(page, "listening");
const dataDir = mkdtempSync(join(tmpdir(), "bench-cdp-"));
const launcher = new ChromiumLauncher({ allowPrivateNetwork: true });
const launched = [];
const server = await createServer({
  dataDir,
  port: 0,
  launcher: {
    launch: async (options) => {
      const browser = await launcher.launch(options);
      launched.push(browser);
      return browser;
    },
  },
});
try {
  const baseUrl = await server.listen();
  const key = server.firstStart.key.secret;
  const create = async (body) => {
    const response = await fetch(`${baseUrl}/browsers`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ start_url: `http://127.0.0.1:${page.address().port}/`, ...body }),
    });
    if (response.status !== 201) fail(`POST /browsers: HTTP ${response.status}`);
    return response.json();
  };
  const browser = await create({});
  const watched = await create({ telemetry: {} });
  if (watched.telemetry?.browser.control.enabled !== true) fail("the telemetry browser captures no control events");
  const paths = { direct: await direct(launched[0].cdp), proxy: await proxied(browser.cdp_ws_url), telemetry: await proxied(watched.cdp_ws_url) };
  const sessions = { direct: await pageSession(paths.direct), proxy: await pageSession(paths.proxy), telemetry: await pageSession(paths.telemetry) };
  const latencies = { direct: [], proxy: [], telemetry: [] };
  const reported = { proxy: [], telemetry: [] };
  const shotSeconds = { direct: 0, proxy: 0 };
  // Warm-up on every path, not counted.
  for (const name of ["direct", "proxy", "telemetry"]) await evalLatencies(paths[name], sessions[name], 200, []);
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? ["direct", "proxy", "telemetry"] : ["telemetry", "proxy", "direct"];
    for (const name of order) await evalLatencies(paths[name], sessions[name], EVALS / ROUNDS, latencies[name]);
    for (const name of order.filter((each) => each !== "direct")) await reportedLatencies(paths[name], sessions[name], EVALS / ROUNDS, reported[name]);
    for (const name of order.filter((each) => each !== "telemetry")) shotSeconds[name] += await screenshots(paths[name], sessions[name], SHOTS / ROUNDS);
  }
  for (const client of Object.values(paths)) client.close();
  // Every reported command became an event (read through the API, as a user would).
  const events = await fetch(`${baseUrl}/browsers/${watched.id}/telemetry/events?type=cdp_command&limit=1`, { headers: { authorization: `Bearer ${key}` } });
  if (events.status !== 200 || (await events.json()).length !== 1) fail("the telemetry browser recorded no cdp_command event");

  const row = (name) => {
    const sorted = [...latencies[name]].sort((a, b) => a - b);
    return { p50: percentile(sorted, 50), p99: percentile(sorted, 99), shotsPerSecond: SHOTS / shotSeconds[name] };
  };
  const median = (values) =>
    percentile(
      [...values].sort((a, b) => a - b),
      50,
    );
  const signed = (ms) => `${ms >= 0 ? "+" : ""}${ms.toFixed(3)}`;
  const d = row("direct");
  const p = row("proxy");
  const w = row("telemetry");
  console.log(
    `\nDevTools through cdp_ws_url vs straight on the pipe (${EVALS} evaluations, ${SHOTS} screenshots 1280x800 each, ${ROUNDS} alternating rounds)\n`,
  );
  console.table([
    { path: "pipe session (direct)", "evaluate p50 ms": d.p50.toFixed(3), "evaluate p99 ms": d.p99.toFixed(3), "screenshots/s": d.shotsPerSecond.toFixed(1) },
    { path: "cdp_ws_url (proxy)", "evaluate p50 ms": p.p50.toFixed(3), "evaluate p99 ms": p.p99.toFixed(3), "screenshots/s": p.shotsPerSecond.toFixed(1) },
    {
      path: "proxy vs direct",
      "evaluate p50 ms": `${signed(p.p50 - d.p50)} (goal ≤ +0.300)`,
      "evaluate p99 ms": signed(p.p99 - d.p99),
      "screenshots/s": `${(p.shotsPerSecond / d.shotsPerSecond).toFixed(2)}x (goal ≥ 0.80x)`,
    },
  ]);
  console.log("\nThe same endpoint to a browser capturing its default telemetry (control, connection, system, captcha) vs one capturing none\n");
  console.table([
    { path: "cdp_ws_url, no telemetry", "evaluate p50 ms": p.p50.toFixed(3), "Page.stopLoading p50 ms": median(reported.proxy).toFixed(3) },
    { path: "cdp_ws_url, telemetry", "evaluate p50 ms": w.p50.toFixed(3), "Page.stopLoading p50 ms": median(reported.telemetry).toFixed(3) },
    {
      path: "telemetry vs none",
      "evaluate p50 ms": `${signed(w.p50 - p.p50)} (goal ≤ +0.050)`,
      "Page.stopLoading p50 ms": `${signed(median(reported.telemetry) - median(reported.proxy))} (goal ≤ +0.050)`,
    },
  ]);
} finally {
  await server.close();
  page.close();
  rmSync(dataDir, { recursive: true, force: true });
}
