#!/usr/bin/env node
// Bundle benchmark: esbuild's minified and gzipped size (platform browser, ESM,
// dependencies included) of a consumer that creates a client and lists projects, with
// @browser-service/client, openapi-fetch alone and @onkernel/sdk. Target: the client's
// consumer at most 5 KB (5120 bytes) gzipped; packages/client/test/size checks the same.
//
//   node bench/client-bundle.mjs
//
// Exits 1 if a consumer fails to build.
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { build } from "esbuild";

const budget = 5 * 1024;
const consumers = {
  "@browser-service/client": "bundle-consumer.mjs",
  "openapi-fetch alone": "bundle-openapi-fetch.mjs",
  "@onkernel/sdk 0.84.0": "bundle-onkernel.mjs",
};

const rows = [];
for (const [name, file] of Object.entries(consumers)) {
  const entry = fileURLToPath(new URL(`./fixtures/${file}`, import.meta.url));
  const result = await build({ entryPoints: [entry], bundle: true, minify: true, format: "esm", platform: "browser", write: false, logLevel: "error" });
  const bundle = result.outputFiles[0].contents;
  rows.push([name, bundle.length, gzipSync(bundle, { level: 9 }).length]);
}

const ours = rows[0][2];
const cells = [
  ["consumer (create a client, list projects)", "minified bytes", "gzipped bytes", "vs client"],
  ...rows.map(([n, min, gz]) => [n, min.toLocaleString("en-US"), gz.toLocaleString("en-US"), `${(gz / ours).toFixed(2)}x`]),
];
const widths = cells[0].map((_, i) => Math.max(...cells.map((r) => r[i].length)));
const line = (r) => `| ${r.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join(" | ")} |`;
console.log(`\nesbuild ${(await import("esbuild")).version}, minify, platform browser, ESM, gzip level 9\n`);
console.log(line(cells[0]));
console.log(`|${widths.map((w, i) => (i === 0 ? "-".repeat(w + 2) : `${"-".repeat(w + 1)}:`)).join("|")}|`);
for (const r of cells.slice(1)) console.log(line(r));
console.log(`\n@browser-service/client: ${ours} bytes gzipped, budget ${budget}: ${ours <= budget ? "met" : "MISSED"} (${budget - ours} bytes to spare)`);
