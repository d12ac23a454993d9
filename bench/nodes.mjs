#!/usr/bin/env node
// Nodes benchmark: the reference server on SQLite (one node), on PostgreSQL (one node) and
// as two nodes sharing one PostgreSQL, side by side in one run on this machine:
//   - GET /org/projects requests/s (32 clients; with two nodes, clients alternate nodes);
//   - POST /browsers creates/s (cold launches, 4 at a time, each browser deleted after);
//   - WebMCP GET tools p50 and DevTools Runtime.evaluate p50 of one browser, through the
//     node that runs it and through the other node (goal: forwarding adds <= 1 ms at p50).
// Rounds alternate between the setups so that noise hits all alike. Every run is a fixed
// number of requests; the PostgreSQL server is a throwaway one (tools/repo/postgres-cluster.mjs).
//
//   node bench/nodes.mjs                      (after `pnpm build`; needs Debian's postgresql)
//   node bench/nodes.mjs --requests 3000 --creates 8 --rounds 3
import { spawnSync } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { Agent, createServer as createHttpServer, request } from "node:http";
import { createServer as createNetServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import WebSocket from "ws";
import { findPostgresBin, startPostgresCluster } from "../tools/repo/postgres-cluster.mjs";
import { startListening, startServerProcess } from "./support/child-server.mjs";

const { values } = parseArgs({
  options: {
    requests: { type: "string", default: "3000" },
    creates: { type: "string", default: "8" },
    calls: { type: "string", default: "500" },
    rounds: { type: "string", default: "3" },
  },
});
const REQUESTS = Number(values.requests);
const CREATES = Number(values.creates);
const CALLS = Number(values.calls);
const ROUNDS = Number(values.rounds);
const SECRET = "bench-nodes-secret-0123456789abcdef";
const SECRETS_KEY = "b".repeat(64);
const bin = new URL("../packages/server/bin/browser-service-server.mjs", import.meta.url).pathname;

function fail(message) {
  console.error(`bench/nodes FAILED: ${message}`);
  process.exit(1);
}

async function freePort() {
  const server = createNetServer();
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const dirs = [];
const children = [];
function newDir() {
  const dir = mkdtempSync(join(tmpdir(), "bench-nodes-"));
  dirs.push(dir);
  return dir;
}

// No rate limit (this measures serving, not refusing), no warm pool (cold launches are compared).
const COMMON = ["--rate-limit", "0", "--warm-browsers", "0", "--allow-private-network", "--max-client-connections", "0"];

async function sqliteSetup() {
  const started = await startServerProcess(newDir(), COMMON);
  children.push(started.child);
  return { name: "1 node, SQLite", urls: [started.url], key: started.key };
}

async function postgresSetup(cluster, name, count) {
  const database = `bench_${count}_${Date.now()}`;
  const created = spawnSync(join(findPostgresBin(), "createdb"), ["-h", cluster.socketDir, "-U", "postgres", database], { encoding: "utf8" });
  if (created.status !== 0) fail(`createdb: ${created.stderr}`);
  const urls = [];
  let key;
  for (let i = 0; i < count; i++) {
    const port = await freePort();
    const flags = [
      ...COMMON,
      "--database",
      cluster.url(database),
      "--node-id",
      `n${i}`,
      "--port",
      String(port),
      "--advertise-url",
      `http://127.0.0.1:${port}`,
      "--node-secret",
      SECRET,
      // Every node of a database seals and opens its secrets with the same key.
      "--secrets-key",
      SECRETS_KEY,
    ];
    const started = await startListening([bin, "--data-dir", newDir(), "--host", "127.0.0.1", ...flags]);
    children.push(started.child);
    key ??= /BROWSER_SERVICE_API_KEY=(bsk_\w+)/.exec(started.out())?.[1];
    urls.push(started.url);
  }
  if (!key) fail("the first node printed no API key");
  return { name, urls, key };
}

function call(agent, url, key, method = "GET", body) {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const req = request(url, { agent, method, headers: { authorization: `Bearer ${key}`, ...(body ? { "content-type": "application/json" } : {}) } }, (res) => {
      const chunks = [];
      res.on("data", (chunk) => chunks.push(chunk));
      res.on("end", () => {
        if (res.statusCode >= 300) reject(new Error(`${method} ${url}: HTTP ${res.statusCode} ${Buffer.concat(chunks)}`));
        else resolve({ ms: Number(process.hrtime.bigint() - started) / 1e6, body: Buffer.concat(chunks).toString() });
      });
    });
    req.on("error", reject);
    req.end(body);
  });
}

/** Requests/s of `count` GETs of /org/projects by 32 clients, spread over the setup's nodes. */
async function readsPerSecond(setup, count) {
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  let next = 0;
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: 32 }, async () => {
      while (next < count) {
        const i = next++;
        await call(agent, `${setup.urls[i % setup.urls.length]}/org/projects`, setup.key);
      }
    }),
  );
  agent.destroy();
  return count / (Number(process.hrtime.bigint() - started) / 1e9);
}

/** Creates/s of `count` cold creates, 4 at a time, sent to the nodes in turn; each browser is deleted after. */
async function createsPerSecond(setup, count) {
  const agent = new Agent({ keepAlive: true, maxSockets: 8 });
  const ids = [];
  let next = 0;
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (next < count) {
        const i = next++;
        const { body } = await call(agent, `${setup.urls[i % setup.urls.length]}/browsers`, setup.key, "POST", "{}");
        ids.push(JSON.parse(body).id);
      }
    }),
  );
  const rate = count / (Number(process.hrtime.bigint() - started) / 1e9);
  for (const id of ids) await call(agent, `${setup.urls[0]}/browsers/${id}`, setup.key, "DELETE");
  agent.destroy();
  return rate;
}

const median = (list) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)];
const p50 = (list) => median(list);

/** A raw DevTools client over a WebSocket URL. */
async function devtools(url) {
  const ws = new WebSocket(url, { perMessageDeflate: false });
  await once(ws, "open");
  let nextId = 1;
  const waiting = new Map();
  ws.on("message", (data) => {
    const message = JSON.parse(data.toString());
    waiting.get(message.id)?.(message);
    waiting.delete(message.id);
  });
  const send = async (method, params = {}, sessionId) => {
    const id = nextId++;
    const answered = new Promise((resolve) => waiting.set(id, resolve));
    ws.send(JSON.stringify({ id, method, params, ...(sessionId === undefined ? {} : { sessionId }) }));
    const message = await answered;
    if (message.error) fail(`${method}: ${message.error.message}`);
    return message.result;
  };
  const { targetInfos } = await send("Target.getTargets");
  const page = targetInfos.find((info) => info.type === "page");
  const { sessionId } = await send("Target.attachToTarget", { targetId: page.targetId, flatten: true });
  return { send, sessionId, close: () => ws.close() };
}

/** p50s through the owner and through the other node, in alternating rounds: WebMCP GET tools and Runtime.evaluate. */
async function forwarding(setup, pageUrl) {
  const agent = new Agent({ keepAlive: true, maxSockets: 4 });
  // Created on the first node while it runs no browser: placed there.
  const { body } = await call(agent, `${setup.urls[0]}/browsers`, setup.key, "POST", JSON.stringify({ start_url: pageUrl }));
  const browser = JSON.parse(body);
  const owner = setup.urls[0];
  const other = setup.urls[1];
  const host = (url) => new URL(url).host;
  const cdp = { owner: await devtools(browser.cdp_ws_url.replace(host(browser.cdp_ws_url), host(owner))) };
  cdp.other = await devtools(browser.cdp_ws_url.replace(host(browser.cdp_ws_url), host(other)));
  const tools = { owner: [], other: [] };
  const evals = { owner: [], other: [] };
  for (let round = 0; round < ROUNDS * 2; round++) {
    for (const via of round % 2 === 0 ? ["owner", "other"] : ["other", "owner"]) {
      const base = via === "owner" ? owner : other;
      for (let i = 0; i < CALLS / (ROUNDS * 2); i++) {
        tools[via].push((await call(agent, `${base}/browsers/${browser.id}/webmcp/tools`, setup.key)).ms);
        const started = process.hrtime.bigint();
        const result = await cdp[via].send("Runtime.evaluate", { expression: "1+1", returnByValue: true }, cdp[via].sessionId);
        evals[via].push(Number(process.hrtime.bigint() - started) / 1e6);
        if (result.result.value !== 2) fail("Runtime.evaluate did not answer 2");
      }
    }
  }
  cdp.owner.close();
  cdp.other.close();
  await call(agent, `${owner}/browsers/${browser.id}`, setup.key, "DELETE");
  agent.destroy();
  return { tools, evals };
}

async function main() {
  if (findPostgresBin() === undefined) fail("PostgreSQL is not installed (Debian: apt-get install -y postgresql).");
  const cluster = await startPostgresCluster();
  const pages = createHttpServer((_req, res) => {
    res.setHeader("content-type", "text/html");
    res.end(`<!doctype html><title>Tools</title><script>
      document.modelContext.registerTool({ name: "add", description: "Adds.", execute: async ({ a, b }) => ({ sum: a + b }) });
    </script>`);
  });
  await new Promise((resolve) => pages.listen(0, "127.0.0.1", resolve));
  const pageUrl = `http://127.0.0.1:${pages.address().port}/tools`;
  try {
    const setups = [await sqliteSetup(), await postgresSetup(cluster, "1 node, PostgreSQL", 1), await postgresSetup(cluster, "2 nodes, PostgreSQL", 2)];
    // Warm-up: the JIT and the pools settle on every node before anything counts.
    for (const setup of setups) await readsPerSecond(setup, 2000);
    const reads = new Map(setups.map((setup) => [setup.name, []]));
    const creates = new Map(setups.map((setup) => [setup.name, []]));
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? setups : [...setups].reverse();
      for (const setup of order) reads.get(setup.name).push(await readsPerSecond(setup, REQUESTS));
      for (const setup of order) creates.get(setup.name).push(await createsPerSecond(setup, CREATES));
    }
    const base = median(reads.get(setups[0].name));
    console.log(`\nControl plane (${ROUNDS} rounds, medians; GET: ${REQUESTS} requests by 32 clients; POST: ${CREATES} cold creates, 4 at a time)\n`);
    console.log("| setup | GET /org/projects req/s | vs SQLite | POST /browsers creates/s |");
    console.log("|---|---:|---:|---:|");
    for (const setup of setups) {
      const r = median(reads.get(setup.name));
      console.log(`| ${setup.name} | ${r.toFixed(0)} | ${(r / base).toFixed(2)}x | ${median(creates.get(setup.name)).toFixed(2)} |`);
    }
    const { tools, evals } = await forwarding(setups[2], pageUrl);
    console.log(`\nOne browser of node n0, ${CALLS} calls each way, alternating rounds (p50, ms)\n`);
    console.log("| call | through its node | through the other node | forwarding adds |");
    console.log("|---|---:|---:|---:|");
    for (const [name, list] of [
      ["WebMCP GET tools", tools],
      ["DevTools Runtime.evaluate", evals],
    ]) {
      const own = p50(list.owner);
      const via = p50(list.other);
      console.log(`| ${name} | ${own.toFixed(2)} | ${via.toFixed(2)} | ${(via - own).toFixed(2)} |`);
    }
  } finally {
    for (const child of children) child.kill("SIGTERM");
    await Promise.all(children.map((child) => (child.exitCode === null ? once(child, "exit") : undefined)));
    pages.close();
    await cluster.stop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  }
}

await main();
