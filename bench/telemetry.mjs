#!/usr/bin/env node
// A page that logs as fast as it can (about 10,000 lines a second, paced by timers), in a
// browser whose telemetry captures its console, beside the same page in a browser that
// captures nothing: side by side in one server, in one run. What it shows: the lines
// captured and dropped (the per-browser rate bound), the events kept (the per-browser
// cap), and the server's heap before, at its peak while the pages log, and after, for
// both runs. Bounded: each page logs for --seconds, then the browsers are deleted.
//
//   node bench/telemetry.mjs                 (after `pnpm build`)
//   node bench/telemetry.mjs --seconds 30
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer as createHttpServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { ChromiumLauncher, createServer } from "../packages/server/dist/index.js";

const { values } = parseArgs({ options: { seconds: { type: "string", default: "15" }, "max-events": { type: "string", default: "20000" } } });
const SECONDS = Number(values.seconds);
const MAX_EVENTS = Number(values["max-events"]);

function fail(message) {
  console.error(`bench/telemetry FAILED: ${message}`);
  process.exit(1);
}

// 100 lines every 10 ms: about 10,000 a second, each with a different text.
const page = createHttpServer((_request, response) => {
  response.setHeader("content-type", "text/html");
  response.end(`<!doctype html><title>flood</title><script>
    let n = 0;
    setInterval(() => { for (let i = 0; i < 100; i++) console.log("line " + n++ + " " + "x".repeat(80)); }, 10);
  </script>`);
});
page.listen(0, "127.0.0.1");
await once(page, "listening");
const dataDir = mkdtempSync(join(tmpdir(), "bench-telemetry-"));
const server = await createServer({
  dataDir,
  port: 0,
  launcher: new ChromiumLauncher({ allowPrivateNetwork: true }),
  telemetry: { maxEventsPerBrowser: MAX_EVENTS },
});
const mib = (bytes) => (bytes / 1024 / 1024).toFixed(1);
try {
  const baseUrl = await server.listen();
  const headers = { authorization: `Bearer ${server.firstStart.key.secret}`, "content-type": "application/json" };
  const rows = [];
  for (const [name, telemetry] of [
    ["console off", null],
    ["console on", { browser: { console: { enabled: true } } }],
  ]) {
    globalThis.gc?.();
    const before = process.memoryUsage().heapUsed;
    const created = await fetch(`${baseUrl}/browsers`, {
      method: "POST",
      headers,
      body: JSON.stringify({ start_url: `http://127.0.0.1:${page.address().port}/`, telemetry }),
    });
    if (created.status !== 201) fail(`POST /browsers: HTTP ${created.status}`);
    const browser = await created.json();
    let peak = before;
    const until = Date.now() + SECONDS * 1000;
    while (Date.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      peak = Math.max(peak, process.memoryUsage().heapUsed);
    }
    const read = await fetch(`${baseUrl}/browsers/${browser.id}/telemetry/events?order=desc&limit=1`, { headers });
    if (read.status !== 200) fail(`GET .../telemetry/events: HTTP ${read.status}`);
    const [newest] = await read.json();
    const captured = newest?.seq ?? 0;
    const dropped = Number(read.headers.get("x-telemetry-dropped"));
    if (telemetry !== null && captured === 0) fail("the console browser captured no line");
    if (telemetry === null && captured !== 0) fail("the browser without telemetry captured events");
    const deleted = await fetch(`${baseUrl}/browsers/${browser.id}`, { method: "DELETE", headers });
    if (deleted.status !== 204) fail(`DELETE /browsers: HTTP ${deleted.status}`);
    globalThis.gc?.();
    rows.push({
      browser: name,
      "lines captured": captured,
      "dropped (rate, caps)": dropped,
      "captured/s": Math.round(captured / SECONDS),
      "heap before MiB": mib(before),
      "heap peak MiB": mib(peak),
      "heap after MiB": mib(process.memoryUsage().heapUsed),
    });
  }
  console.log(`\nA page logging about 10,000 lines a second for ${SECONDS} s, with and without console telemetry (per-browser cap ${MAX_EVENTS})\n`);
  console.table(rows);
  const [off, on] = rows;
  console.log(
    `\nheap peak with console telemetry vs without: ${(Number(on["heap peak MiB"]) / Number(off["heap peak MiB"])).toFixed(2)}x; captured ≤ 2,000/s by design (goal: the peak stays bounded whatever the page logs)`,
  );
} finally {
  await server.close();
  page.close();
  rmSync(dataDir, { recursive: true, force: true });
}
