#!/usr/bin/env node
// Rate limit benchmark: the reference server run as a child process on 127.0.0.1 with a
// configured per-key rate and failed-authentication rate, hammered from 127.0.0.1 by 16
// keep-alive connections for a fixed time each. Side by side: the configured rate vs the
// rate the server let through once warmed up and past the burst (goal: within 5%), the
// 429s, and how many requests per second the server answered in all (a refusal is cheap:
// it never reaches the database).
//
//   node bench/rate-limit.mjs                 (after `pnpm build`; runs from anywhere)
//   node bench/rate-limit.mjs --seconds 5     (measured seconds per row; default 3)
import { mkdtempSync, rmSync } from "node:fs";
import { Agent, request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { startServerProcess } from "./support/child-server.mjs";

const { values } = parseArgs({ options: { seconds: { type: "string", default: "3" } } });
const SECONDS = Number(values.seconds);
const CLIENTS = 16;
// Connections, JIT and the burst settle first; only what follows is measured.
const WARMUP_SECONDS = 1;
// A second bound besides time, so that a very fast machine still stops.
const MAX_REQUESTS = 500_000;
const GOAL = 0.05;
const ROWS = [
  { name: "requests per API key", flags: ["--rate-limit", "200", "--rate-limit-burst", "20"], rate: 200, burst: 20, credential: "key", counted: 200 },
  {
    name: "failed authentications per address",
    flags: ["--auth-failure-limit", "10", "--auth-failure-burst", "20"],
    rate: 10,
    burst: 20,
    credential: "wrong",
    counted: 401,
  },
];

function die(message) {
  console.error(`bench/rate-limit FAILED: ${message}`);
  process.exit(1);
}

function get(agent, url, token) {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent, headers: { authorization: `Bearer ${token}` } }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode));
    });
    req.on("error", reject);
    req.end();
  });
}

/**
 * `CLIENTS` loops sending GET /org/limits for `WARMUP_SECONDS + SECONDS`; counts each
 * status in all and, separately, those answered after the warm-up.
 */
async function hammer(url, token) {
  const agent = new Agent({ keepAlive: true, maxSockets: CLIENTS });
  const statuses = new Map();
  const measured = new Map();
  let sent = 0;
  const started = performance.now();
  const warm = started + WARMUP_SECONDS * 1000;
  const deadline = warm + SECONDS * 1000;
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (performance.now() < deadline && sent < MAX_REQUESTS) {
        sent++;
        const status = await get(agent, `${url}/org/limits`, token);
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
        if (performance.now() >= warm) measured.set(status, (measured.get(status) ?? 0) + 1);
      }
    }),
  );
  const ended = performance.now();
  agent.destroy();
  return { statuses, measured, seconds: (ended - warm) / 1000, sent, totalSeconds: (ended - started) / 1000 };
}

const results = [];
for (const row of ROWS) {
  const dataDir = mkdtempSync(join(tmpdir(), "browser-service-bench-"));
  const server = await startServerProcess(dataDir, row.flags);
  try {
    const token = row.credential === "key" ? server.key : "bsk_thisIsNotAKeyThisIsNotAKey1234";
    const { statuses, measured, seconds, sent, totalSeconds } = await hammer(server.url, token);
    const counted = statuses.get(row.counted) ?? 0;
    const limited = statuses.get(429) ?? 0;
    const other = sent - counted - limited;
    if (other > 0) die(`${row.name}: ${other} responses were neither ${row.counted} nor 429 (${JSON.stringify([...statuses])})`);
    if ((measured.get(429) ?? 0) === 0) die(`${row.name}: no 429 after the warm-up, so the limit was never reached`);
    // Past the warm-up the burst is spent, so what gets through is the sustained rate alone.
    const achieved = (measured.get(row.counted) ?? 0) / seconds;
    results.push({ ...row, counted, limited, achieved, answered: sent / totalSeconds });
  } finally {
    server.child.kill("SIGTERM");
    await server.exited;
    rmSync(dataDir, { recursive: true, force: true });
  }
}

console.log(
  `\nReference server rate limits on 127.0.0.1: ${CLIENTS} keep-alive connections sending GET /org/limits, ${WARMUP_SECONDS} s warm-up + ${SECONDS} s measured per row\n`,
);
console.log(
  "| limit                              | configured /s | burst | let through | 429s   | sustained /s | vs configured | within 5% | answered req/s |",
);
console.log(
  "| ---------------------------------- | ------------: | ----: | ----------: | -----: | -----------: | ------------: | --------- | -------------: |",
);
for (const r of results) {
  const ratio = r.achieved / r.rate;
  console.log(
    `| ${r.name.padEnd(34)} | ${String(r.rate).padStart(13)} | ${String(r.burst).padStart(5)} | ${String(r.counted).padStart(11)} | ${String(r.limited).padStart(6)} | ${r.achieved.toFixed(1).padStart(12)} | ${`${(ratio * 100).toFixed(1)}%`.padStart(13)} | ${(Math.abs(ratio - 1) <= GOAL ? "yes" : "NO").padEnd(9)} | ${r.answered.toFixed(0).padStart(14)} |`,
  );
}
console.log(
  `\n"let through" and "429s" count the whole run: 200s (per key) or 401s (failed authentications); sustained /s counts them in the measured seconds only.`,
);
