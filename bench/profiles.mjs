#!/usr/bin/env node
// `POST /browsers` with a profile holding 10 MB of a site's IndexedDB beside the same
// create without one (launched cold, and from the warm pool), and the save at `DELETE`
// of a browser that saves into that profile beside a plain `DELETE`, in one run: what a
// profile costs. Goal: a profile adds ≤ 100 ms to a create's p50 (against a cold launch:
// a browser with a profile is always launched cold, its state unpacked before Chromium
// starts).
//
// The kinds alternate in one loop, so the machine's noise hits them alike; before each
// step the warm pool is full and the machine quiet. Every browser runs in its sandbox.
//
//   node bench/profiles.mjs            (after `pnpm build`)
//   node bench/profiles.mjs --creates 20 --mib 10
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer as createHttpServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { ChromiumLauncher, createServer } from "../packages/server/dist/index.js";
import { quiet } from "./support/quiet.mjs";

const { values } = parseArgs({ options: { creates: { type: "string", default: "12" }, mib: { type: "string", default: "10" } } });
const CREATES = Number(values.creates);
const MIB = Number(values.mib);

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];

function fail(message) {
  console.error(`bench/profiles: ${message}`);
  process.exit(1);
}

// The site: `/fill` stores MIB MiB in its IndexedDB (random, so nothing compresses it),
// then calls `/filled`.
let filled;
const site = createHttpServer((request, response) => {
  if (request.url === "/filled") {
    filled?.();
    return response.end("ok");
  }
  response.setHeader("content-type", "text/html");
  response.end(`<!doctype html><title>fill</title><script>
    const open = indexedDB.open("bench", 1);
    open.onupgradeneeded = () => open.result.createObjectStore("kv");
    open.onsuccess = () => {
      const tx = open.result.transaction("kv", "readwrite");
      for (let i = 0; i < ${MIB}; i++) {
        const chunk = new Uint8Array(1 << 20);
        // getRandomValues fills at most 64 KiB at a time.
        for (let at = 0; at < chunk.length; at += 65536) crypto.getRandomValues(chunk.subarray(at, at + 65536));
        tx.objectStore("kv").put(chunk, i);
      }
      tx.oncomplete = () => fetch("/filled");
    };
  </script>`);
}).listen(0, "127.0.0.1");
await once(site, "listening");
const siteUrl = `http://127.0.0.1:${site.address().port}`;

async function startServer(warmBrowsers) {
  const dataDir = mkdtempSync(join(tmpdir(), "bench-profiles-"));
  const launcher = new ChromiumLauncher({ allowPrivateNetwork: true });
  const server = await createServer({ dataDir, port: 0, planLimit: 100, warmBrowsers, launcher, rateLimits: { perKey: { rate: 0, burst: 1 } } });
  const baseUrl = await server.listen();
  const authorization = `Bearer ${server.firstStart.key.secret}`;
  const call = async (method, path, body, expected) => {
    const response = await fetch(`${baseUrl}${path}`, {
      method,
      headers: { authorization, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    if (response.status !== expected) fail(`${method} ${path}: HTTP ${response.status} ${text}`);
    return text ? JSON.parse(text) : undefined;
  };
  const ready = async () => {
    for (let waited = 0; server.warmPoolStats().ready < warmBrowsers; waited += 20) {
      if (waited > 60_000) fail("the warm pool did not fill within 60 s");
      await sleep(20);
    }
    await quiet();
  };
  return {
    call,
    /** Milliseconds of `POST /browsers` with `body`; the browser is deleted after. */
    async create(body) {
      await ready();
      const started = performance.now();
      const created = await call("POST", "/browsers", body, 201);
      const ms = performance.now() - started;
      await call("DELETE", `/browsers/${created.id}`, undefined, 204);
      return ms;
    },
    /** Milliseconds of `DELETE` of a browser created with `body` (saving, or not). */
    async remove(body) {
      const created = await call("POST", "/browsers", body, 201);
      await ready();
      const started = performance.now();
      await call("DELETE", `/browsers/${created.id}`, undefined, 204);
      return performance.now() - started;
    },
    async close() {
      await server.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

const warm = await startServer(1);
const cold = await startServer(0);
try {
  const profile = await cold.call("POST", "/profiles", { name: "bench" }, 201);
  const done = new Promise((resolve) => (filled = resolve));
  const filling = await cold.call("POST", "/browsers", { profile: { id: profile.id, save_changes: true }, start_url: `${siteUrl}/fill` }, 201);
  const late = setTimeout(() => fail("the site did not fill its storage within 60 s"), 60_000);
  await done;
  clearTimeout(late);
  await cold.call("DELETE", `/browsers/${filling.id}`, undefined, 204);
  const saved = await cold.call("GET", `/profiles/${profile.id}`, undefined, 200);
  if (saved.size_bytes < MIB * 1024 * 1024) fail(`the profile holds ${saved.size_bytes} bytes, less than the ${MIB} MiB the site stored`);

  const creates = [
    ["warm pool, no profile", warm, {}],
    ["cold launch, no profile", cold, {}],
    [`${MIB} MiB profile (always cold)`, cold, { profile: { id: profile.id } }],
  ];
  const deletes = [
    ["DELETE, no profile", cold, {}],
    [`DELETE saving ${MIB} MiB`, cold, { profile: { id: profile.id, save_changes: true } }],
  ];
  const latencies = new Map([...creates, ...deletes].map(([name]) => [name, []]));
  // One unmeasured round, so that first-request costs are paid.
  for (const [, side, body] of creates) await side.create(body);
  for (let i = 0; i < CREATES; i++) {
    for (const [name, side, body] of creates) latencies.get(name).push(await side.create(body));
    for (const [name, side, body] of deletes) latencies.get(name).push(await side.remove(body));
  }

  const p50 = new Map();
  const table = (kinds, what) =>
    kinds.map(([name]) => {
      const sorted = [...latencies.get(name)].sort((a, b) => a - b);
      p50.set(name, percentile(sorted, 50));
      return { [what]: name, runs: sorted.length, "p50 ms": percentile(sorted, 50).toFixed(1), "p99 ms": percentile(sorted, 99).toFixed(1) };
    });
  const createRows = table(creates, "POST /browsers");
  const added = p50.get(creates[2][0]) - p50.get(creates[1][0]);
  createRows[2].note = `${(p50.get(creates[2][0]) / p50.get(creates[1][0])).toFixed(2)}x of cold; +${added.toFixed(0)} ms (goal ≤ 100)`;
  const deleteRows = table(deletes, "DELETE /browsers/{id}");
  deleteRows[1].note = `${(p50.get(deletes[1][0]) / p50.get(deletes[0][0])).toFixed(2)}x of a plain DELETE`;
  console.log(`\nPOST /browsers with a ${MIB} MiB profile beside without one (${CREATES} each, alternating; saved state ${saved.size_bytes} bytes)\n`);
  console.table(createRows);
  console.log("\nThe save at DELETE\n");
  console.table(deleteRows);
} finally {
  await warm.close();
  await cold.close();
  site.close();
}
