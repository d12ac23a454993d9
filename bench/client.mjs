#!/usr/bin/env node
// Client benchmark: requests per second of one list call (`GET /org/projects`, ten
// projects, `X-Has-More: false`) against a server in a separate Node process on
// 127.0.0.1, made by raw `fetch`, `node:http` with a keep-alive agent, openapi-fetch
// alone, @browser-service/client and @onkernel/sdk, sequentially and 16 at a time.
// Each case parses the JSON body. Rounds rotate the order of the cases and the table
// shows each case's median requests per second (ratios are to raw fetch) and the median
// CPU time the client process spent per request, which is steadier than wall-clock rates
// on a busy machine (the server process shares it).
//
//   node bench/client.mjs [--rounds 11] [--requests 1000]
//
// Targets: the client at least as fast as raw fetch and at least 1.4x @onkernel/sdk, and
// at least 0.9x node:http keep-alive sequentially and 0.85x at 16 in flight.
import { fork } from "node:child_process";
import { Agent, get } from "node:http";
import { parseArgs } from "node:util";
import { createClient } from "@browser-service/client";
import Kernel from "@onkernel/sdk";
import createOpenApiFetch from "openapi-fetch";

const { values } = parseArgs({ options: { rounds: { type: "string", default: "11" }, requests: { type: "string", default: "1000" } } });
const rounds = Number(values.rounds);
const requests = Number(values.requests);
const concurrency = 16;

const server = fork(new URL("./fixtures/list-server.mjs", import.meta.url), { stdio: ["ignore", "inherit", "inherit", "ipc"] });
const { port } = await new Promise((resolve, reject) => {
  server.once("message", resolve);
  server.once("exit", (code) => reject(new Error(`the list server exited with ${code} before listening`)));
});
const baseUrl = `http://127.0.0.1:${port}`;
const apiKey = "bench-key";
const url = `${baseUrl}/org/projects`;

const agent = new Agent({ keepAlive: true });
const nodeHttpGet = () =>
  new Promise((resolve, reject) => {
    get(url, { agent, headers: { Authorization: `Bearer ${apiKey}` } }, (res) => {
      const chunks = [];
      res.on("data", (chunk) => chunks.push(chunk));
      res.on("error", reject);
      res.on("end", () => resolve(JSON.parse(Buffer.concat(chunks).toString())));
    }).on("error", reject);
  });

const openapiFetch = createOpenApiFetch({ baseUrl, headers: { Authorization: `Bearer ${apiKey}` } });
const client = createClient({ apiKey, baseUrl });
const kernel = new Kernel({ apiKey, baseURL: baseUrl });

const cases = {
  fetch: async () => (await fetch(url, { headers: { Authorization: `Bearer ${apiKey}` } })).json(),
  "node:http keep-alive": nodeHttpGet,
  "openapi-fetch": async () => (await openapiFetch.GET("/org/projects")).data,
  "@browser-service/client": () => client.projects.list(),
  "@onkernel/sdk 0.84.0": async () => (await kernel.projects.list()).getPaginatedItems(),
};

// Every case must return the same ten projects, or the comparison means nothing.
for (const [name, call] of Object.entries(cases)) {
  const items = await call();
  if (!Array.isArray(items) || items.length !== 10) throw new Error(`${name} did not return the ten projects: ${JSON.stringify(items)}`);
}

/** Requests per second and CPU microseconds per request of one sample. */
async function run(call, workers) {
  const each = Math.ceil(requests / workers);
  const cpu = process.cpuUsage();
  const start = performance.now();
  await Promise.all(
    Array.from({ length: workers }, async () => {
      for (let i = 0; i < each; i++) await call();
    }),
  );
  const seconds = (performance.now() - start) / 1000;
  const { user, system } = process.cpuUsage(cpu);
  return { rate: (each * workers) / seconds, cpu: (user + system) / (each * workers) };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const names = Object.keys(cases);
const results = {};
for (const [mode, workers] of [
  ["sequential", 1],
  [`${concurrency} concurrent`, concurrency],
]) {
  const samples = Object.fromEntries(names.map((n) => [n, []]));
  for (const name of names) await run(cases[name], workers); // warm-up
  for (let round = 0; round < rounds; round++) {
    for (let i = 0; i < names.length; i++) {
      const name = names[(i + round) % names.length];
      samples[name].push(await run(cases[name], workers));
    }
  }
  results[mode] = Object.fromEntries(names.map((n) => [n, { rate: median(samples[n].map((s) => s.rate)), cpu: median(samples[n].map((s) => s.cpu)) }]));
}
server.disconnect();
agent.destroy();

const modes = Object.keys(results);
const rows = names.map((name) => [
  name,
  ...modes.flatMap((mode) => {
    const { rate, cpu } = results[mode][name];
    return [Math.round(rate).toLocaleString("en-US"), `${(rate / results[mode].fetch.rate).toFixed(2)}x`, cpu.toFixed(0)];
  }),
]);
const header = ["", ...modes.flatMap((mode) => [`${mode} req/s`, "vs fetch", "CPU µs/req"])];
const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
const line = (cells) => `| ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join(" | ")} |`;
console.log(`\nGET /org/projects (10 items), ${requests} requests per sample, median of ${rounds} rounds, Node ${process.version}\n`);
console.log(line(header));
console.log(`|${widths.map((w, i) => (i === 0 ? "-".repeat(w + 2) : `${"-".repeat(w + 1)}:`)).join("|")}|`);
for (const row of rows) console.log(line(row));

const ours = "@browser-service/client";
// Issue 14: within 10 % of node:http keep-alive one call at a time, 15 % with 16 in flight.
const nodeTarget = (mode) => (mode === "sequential" ? 0.9 : 0.85);
console.log("");
for (const mode of modes) {
  const r = Object.fromEntries(names.map((n) => [n, results[mode][n].rate]));
  const vsFetch = r[ours] / r.fetch;
  const vsKernel = r[ours] / r["@onkernel/sdk 0.84.0"];
  const vsNode = r[ours] / r["node:http keep-alive"];
  console.log(
    `${mode}: client/fetch ${vsFetch.toFixed(2)}x (target >= 1.00: ${vsFetch >= 1 ? "met" : "MISSED"}), ` +
      `client/@onkernel/sdk ${vsKernel.toFixed(2)}x (target >= 1.40: ${vsKernel >= 1.4 ? "met" : "MISSED"}), ` +
      `client/node:http ${vsNode.toFixed(2)}x (target >= ${nodeTarget(mode).toFixed(2)}: ${vsNode >= nodeTarget(mode) ? "met" : "MISSED"})`,
  );
}
