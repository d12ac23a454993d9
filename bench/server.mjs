#!/usr/bin/env node
// Server benchmark: requests/s and p50/p99 latency of GET /org/projects and GET /org/limits
// with 1 and with 32 concurrent clients, side by side, against the reference server run as
// a child process on 127.0.0.1, plus the server's resident memory idle and at its peak
// under load. Beside them, a bare Fastify app (bench/fixtures/bare-fastify.mjs, another
// child) serving the same GET /org/projects JSON from memory: the framework's ceiling,
// and the ratio to it (goal ≥ 0.6x). Runs of the two alternate, so noise hits both alike.
// Every run is a fixed number of requests, so the whole benchmark is bounded.
//
//   node bench/server.mjs                 (after `pnpm build`; runs from anywhere)
//   node bench/server.mjs --requests 4000 (requests per run; default 3000)
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { Agent, request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { startListening, startServerProcess } from "./support/child-server.mjs";

const { values } = parseArgs({ options: { requests: { type: "string", default: "3000" } } });
const REQUESTS = Number(values.requests);
// Enough for the JIT to settle on both servers before anything is measured.
const WARMUP = 2000;
const CONCURRENCY = [1, 32];
const ENDPOINTS = ["/org/projects", "/org/limits"];
const SEEDED_PROJECTS = 19;

function die(message) {
  console.error(`bench/server FAILED: ${message}`);
  process.exit(1);
}

/** Resident memory of a process in MiB, from /proc (Linux): `VmRSS` now or `VmHWM` at its peak. */
function memoryMiB(pid, field) {
  const line = readFileSync(`/proc/${pid}/status`, "utf8")
    .split("\n")
    .find((l) => l.startsWith(`${field}:`));
  if (!line) die(`no ${field} in /proc/${pid}/status`);
  return Number(line.split(/\s+/)[1]) / 1024;
}

function startServer(dataDir) {
  // The per-key rate limit is off: this measures serving requests, not refusing them (bench/rate-limit.mjs measures the limit).
  // No warm browsers: Chromium starting beside the server would take the CPU being measured.
  return startServerProcess(dataDir, ["--rate-limit", "0", "--warm-browsers", "0"]);
}

/** The bare Fastify app, serving `rows` with `headers` on GET /org/projects. */
function startBare(rows, headers) {
  return startListening([fileURLToPath(new URL("fixtures/bare-fastify.mjs", import.meta.url))], { stdin: JSON.stringify({ rows, headers }) });
}

/** One request over a keep-alive agent; resolves with its latency in milliseconds. */
function timedRequest(agent, url, key, method = "GET", body) {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const req = request(url, { agent, method, headers: { authorization: `Bearer ${key}`, ...(body ? { "content-type": "application/json" } : {}) } }, (res) => {
      res.resume();
      res.on("end", () => {
        if (res.statusCode >= 300) reject(new Error(`${method} ${url}: HTTP ${res.statusCode}`));
        else resolve(Number(process.hrtime.bigint() - started) / 1e6);
      });
    });
    req.on("error", reject);
    req.end(body);
  });
}

/** `total` requests spread over `clients` concurrent loops; returns throughput and latency percentiles. */
async function run(url, key, clients, total) {
  const agent = new Agent({ keepAlive: true, maxSockets: clients });
  const latencies = [];
  let next = 0;
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (next < total) {
        next++;
        latencies.push(await timedRequest(agent, url, key));
      }
    }),
  );
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const at = (q) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))];
  return { rps: total / seconds, p50: at(0.5), p99: at(0.99) };
}

const dataDir = mkdtempSync(join(tmpdir(), "browser-service-bench-"));
const server = await startServer(dataDir);
let bare;
try {
  const seeding = new Agent({ keepAlive: true });
  for (let i = 0; i < SEEDED_PROJECTS; i++) {
    await timedRequest(seeding, `${server.url}/org/projects`, server.key, "POST", JSON.stringify({ name: `bench-${i}` }));
  }
  seeding.destroy();
  // The same rows and paging headers, for the bare app to serve.
  const sample = await fetch(`${server.url}/org/projects`, { headers: { authorization: `Bearer ${server.key}` } });
  const pagingHeaders = Object.fromEntries([...sample.headers].filter(([name]) => name.startsWith("x-has-more") || name.startsWith("x-next-offset")));
  bare = await startBare(await sample.json(), pagingHeaders);
  for (const endpoint of ENDPOINTS) await run(`${server.url}${endpoint}`, server.key, 4, WARMUP);
  await run(`${bare.url}/org/projects`, server.key, 4, WARMUP);
  const idleMiB = memoryMiB(server.child.pid, "VmRSS");

  const results = new Map();
  for (const endpoint of ENDPOINTS) {
    for (const clients of CONCURRENCY) {
      results.set(`${endpoint} ${clients}`, await run(`${server.url}${endpoint}`, server.key, clients, REQUESTS));
      if (endpoint === "/org/projects") results.set(`bare ${clients}`, await run(`${bare.url}/org/projects`, server.key, clients, REQUESTS));
    }
  }
  const peakMiB = memoryMiB(server.child.pid, "VmHWM");

  const fmt = (n, digits) => n.toFixed(digits).padStart(9);
  console.log(`\nReference server on ${server.url}: ${REQUESTS} requests per run, keep-alive, ${SEEDED_PROJECTS + 1} projects (one full page)\n`);
  console.log(
    `| endpoint           | ${CONCURRENCY.map((c) => `${String(c).padStart(2)} client${c === 1 ? " " : "s"} req/s |      p50 ms |      p99 ms`).join(" | ")} |`,
  );
  console.log(`| ------------------ | ${CONCURRENCY.map(() => "---------------: | ----------: | ----------:").join(" | ")} |`);
  for (const endpoint of ENDPOINTS) {
    const cells = CONCURRENCY.map((c) => {
      const r = results.get(`${endpoint} ${c}`);
      return `${fmt(r.rps, 0).padStart(16)} | ${fmt(r.p50, 2).padStart(11)} | ${fmt(r.p99, 2).padStart(11)}`;
    });
    console.log(`| GET ${endpoint.padEnd(14)} | ${cells.join(" | ")} |`);
  }
  const bareCells = CONCURRENCY.map((c) => {
    const r = results.get(`bare ${c}`);
    return `${fmt(r.rps, 0).padStart(16)} | ${fmt(r.p50, 2).padStart(11)} | ${fmt(r.p99, 2).padStart(11)}`;
  });
  console.log(`| bare Fastify, same JSON | ${bareCells.join(" | ")} |`);
  const ratios = CONCURRENCY.map(
    (c) => `${c} client${c === 1 ? "" : "s"}: ${(results.get(`/org/projects ${c}`).rps / results.get(`bare ${c}`).rps).toFixed(2)}x`,
  );
  console.log(`\nGET /org/projects vs bare Fastify (req/s): ${ratios.join(", ")} (goal ≥ 0.60x)`);
  console.log(`\n| server memory (RSS) | MiB |\n| ------------------- | --: |`);
  console.log(`| idle, after warm-up | ${idleMiB.toFixed(1)} |`);
  console.log(`| peak under load     | ${peakMiB.toFixed(1)} |`);
} finally {
  server.child.kill("SIGTERM");
  await server.exited;
  if (bare) {
    bare.child.kill("SIGTERM");
    await bare.exited;
  }
  rmSync(dataDir, { recursive: true, force: true });
}
