#!/usr/bin/env node
// `POST /browsers` with one small uploaded extension (a content script) beside the same
// creates without it, from the warm pool and launched cold, in one run: what loading an
// extension costs a create. Goal: warm with one extension p50 ≤ 200 ms.
//
// Warm: the pool is full and the machine quiet before each create. The four kinds
// alternate in one loop, so the machine's noise hits them alike. Every browser runs in
// its sandbox.
//
//   node bench/extensions.mjs            (after `pnpm build`)
//   node bench/extensions.mjs --creates 30
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { ChromiumLauncher, createServer } from "../packages/server/dist/index.js";
import { quiet } from "./support/quiet.mjs";

const { values } = parseArgs({ options: { creates: { type: "string", default: "15" } } });
const CREATES = Number(values.creates);

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];

function fail(message) {
  console.error(`bench/extensions: ${message}`);
  process.exit(1);
}

/** A content-script extension zipped by the system's `zip`, or by Python when it has none. */
function extensionArchive() {
  const dir = mkdtempSync(join(tmpdir(), "bench-extension-"));
  const script = [
    "import json, sys, zipfile",
    "with zipfile.ZipFile(sys.argv[1], 'w', zipfile.ZIP_DEFLATED) as z:",
    "    z.writestr('manifest.json', json.dumps({'manifest_version': 3, 'name': 'Bench', 'version': '1.0', 'content_scripts': [{'matches': ['<all_urls>'], 'js': ['mark.js']}]}))",
    "    z.writestr('mark.js', 'document.documentElement.dataset.marked = \"yes\";')",
  ].join("\n");
  const path = join(dir, "bench.zip");
  execFileSync("python3", ["-c", script, path]);
  const bytes = readFileSync(path);
  rmSync(dir, { recursive: true, force: true });
  return bytes;
}

async function startServer(warmBrowsers) {
  const dataDir = mkdtempSync(join(tmpdir(), "bench-extensions-"));
  const launcher = new ChromiumLauncher({ allowPrivateNetwork: true });
  const server = await createServer({ dataDir, port: 0, planLimit: 100, warmBrowsers, launcher, rateLimits: { perKey: { rate: 0, burst: 1 } } });
  const baseUrl = await server.listen();
  const authorization = `Bearer ${server.firstStart.key.secret}`;
  const form = new FormData();
  form.append("file", new Blob([extensionArchive()], { type: "application/zip" }), "bench.zip");
  form.append("name", "bench");
  const upload = await fetch(`${baseUrl}/extensions`, { method: "POST", headers: { authorization }, body: form });
  if (upload.status !== 201) fail(`POST /extensions: HTTP ${upload.status} ${await upload.text()}`);
  return {
    async create(body) {
      if (warmBrowsers > 0) {
        for (let waited = 0; server.warmPoolStats().ready < warmBrowsers; waited += 20) {
          if (waited > 60_000) fail("the warm pool did not fill within 60 s");
          await sleep(20);
        }
      }
      await quiet();
      const started = performance.now();
      const response = await fetch(`${baseUrl}/browsers`, {
        method: "POST",
        headers: { authorization, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      const created = await response.json();
      const ms = performance.now() - started;
      if (response.status !== 201) fail(`POST /browsers: HTTP ${response.status} ${JSON.stringify(created)}`);
      const deleted = await fetch(`${baseUrl}/browsers/${created.id}`, { method: "DELETE", headers: { authorization } });
      if (deleted.status !== 204) fail(`DELETE /browsers: HTTP ${deleted.status}`);
      return ms;
    },
    async close() {
      await server.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

const warm = await startServer(1);
const cold = await startServer(0);
const kinds = [
  ["warm pool, no extension", warm, {}],
  ["warm pool, 1 extension", warm, { extensions: [{ name: "bench" }] }],
  ["cold launch, no extension", cold, {}],
  ["cold launch, 1 extension", cold, { extensions: [{ name: "bench" }] }],
];
const latencies = new Map(kinds.map(([name]) => [name, []]));
try {
  // One unmeasured create each, so that first-request costs are paid.
  for (const [, side, body] of kinds) await side.create(body);
  for (let i = 0; i < CREATES; i++) for (const [name, side, body] of kinds) latencies.get(name).push(await side.create(body));
} finally {
  await warm.close();
  await cold.close();
}

const p50 = new Map();
const rows = kinds.map(([name]) => {
  const sorted = [...latencies.get(name)].sort((a, b) => a - b);
  p50.set(name, percentile(sorted, 50));
  return { "POST /browsers": name, creates: sorted.length, "p50 ms": percentile(sorted, 50).toFixed(1), "p99 ms": percentile(sorted, 99).toFixed(1) };
});
rows[1].note = `${(p50.get(kinds[1][0]) / p50.get(kinds[0][0])).toFixed(2)}x of no extension; goal p50 ≤ 200`;
rows[3].note = `${(p50.get(kinds[3][0]) / p50.get(kinds[2][0])).toFixed(2)}x of no extension`;
console.log(`\nPOST /browsers with and without one small extension, warm and cold (${CREATES} creates each, alternating)\n`);
console.table(rows);
