#!/usr/bin/env node
// Build benchmark: the time of a cold `turbo run build` (turbo's local cache and every
// package's dist/ emptied, and --force) next to a rebuild with nothing changed, and their
// ratio. Fails (exit 1) if either build fails or if the rebuild was not a full cache hit
// according to turbo's run summary (every task a cache HIT, none executed).
//
//   node bench/build.mjs            (from anywhere; runs in the repository root)
//
// Runs `pnpm exec turbo run build` with the pinned pnpm (tools/repo/pnpm-env.mjs).
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { pnpmEnv } from "../tools/repo/pnpm-env.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));

function die(message, output) {
  console.error(`\nbench/build FAILED: ${message}`);
  if (output) console.error(output.replace(/\s+$/, "").split("\n").slice(-60).join("\n"));
  process.exit(1);
}

/** Every workspace package folder, as pnpm lists them. */
function workspacePackages(env) {
  const listed = spawnSync("pnpm", ["ls", "-r", "--depth", "-1", "--json"], { cwd: root, env, encoding: "utf8" });
  if (listed.status !== 0) die("could not list the workspace packages.", listed.stderr);
  return JSON.parse(listed.stdout).map((pkg) => pkg.path);
}

function emptyCaches(env) {
  const removed = [];
  for (const dir of [join(root, ".turbo", "cache"), join(root, "node_modules", ".cache", "turbo")]) {
    if (existsSync(dir)) {
      rmSync(dir, { recursive: true, force: true });
      removed.push(relative(root, dir));
    }
  }
  for (const pkg of workspacePackages(env)) {
    for (const dir of [join(pkg, "dist"), join(pkg, ".turbo")]) {
      if (existsSync(dir)) {
        rmSync(dir, { recursive: true, force: true });
        removed.push(relative(root, dir));
      }
    }
  }
  return removed;
}

/** Runs turbo with a run summary; returns wall time, output and the parsed summary. */
function turboBuild(env, label, extraArgs) {
  const args = ["exec", "turbo", "run", "build", "--summarize", "--output-logs=new-only", ...extraArgs];
  process.stdout.write(`  ${label.padEnd(24)} $ pnpm ${args.join(" ")} ... `);
  const runsDir = join(root, ".turbo", "runs");
  const before = new Set(existsSync(runsDir) ? readdirSync(runsDir) : []);
  const started = performance.now();
  const result = spawnSync("pnpm", args, { cwd: root, env, encoding: "utf8", maxBuffer: 256 * 1024 * 1024 });
  const seconds = (performance.now() - started) / 1000;
  const output = `${result.stdout ?? ""}\n${result.stderr ?? ""}`;
  if (result.error) die(`${label}: could not run turbo: ${result.error.message}`);
  if (result.status !== 0) {
    console.log("failed");
    die(`${label}: \`turbo run build\` exited with ${result.status}. Its output (last lines):`, output);
  }
  console.log(`${seconds.toFixed(2)} s`);
  const fresh = existsSync(runsDir) ? readdirSync(runsDir).filter((f) => f.endsWith(".json") && !before.has(f)) : [];
  const named = output.match(/Summary:\s+(\S+\.json)/);
  const summaryFile = named ? resolve(root, named[1]) : fresh.length === 1 ? join(runsDir, fresh[0]) : undefined;
  let summary;
  if (summaryFile && existsSync(summaryFile)) summary = JSON.parse(readFileSync(summaryFile, "utf8"));
  return { seconds, output, summary, summaryFile };
}

/** Tasks, cache hits and executed tasks, from the run summary (or turbo's closing lines). */
function cacheStats(run) {
  const tasks = run.summary?.tasks;
  if (Array.isArray(tasks)) {
    const hits = tasks.filter((t) => t.cache?.status === "HIT").length;
    const executed = tasks.filter((t) => t.cache?.status !== "HIT" && t.execution !== undefined && t.execution !== null).length;
    return {
      total: tasks.length,
      hits,
      executed,
      attempted: run.summary.execution?.attempted,
      cachedByTurbo: run.summary.execution?.cached,
      misses: tasks.filter((t) => t.cache?.status !== "HIT").map((t) => `${t.taskId} (${t.cache?.status ?? "no cache status"})`),
      source: relative(root, run.summaryFile),
    };
  }
  const cached = run.output.match(/Cached:\s+(\d+) cached, (\d+) total/);
  if (!cached) die("found neither a run summary (.turbo/runs/*.json) nor turbo's `Cached:` line.", run.output);
  const hits = Number(cached[1]);
  const total = Number(cached[2]);
  return { total, hits, executed: total - hits, misses: [], source: "turbo output" };
}

// ---------------------------------------------------------------- main

console.log(`bench/build: turbo run build in ${root}`);
let env;
try {
  env = { ...pnpmEnv(root), NO_COLOR: "1" };
} catch (error) {
  die(error.message);
}
const removed = emptyCaches(env);
console.log(`  emptied: ${removed.length ? removed.join(", ") : "(nothing to empty)"}`);

const cold = turboBuild(env, "cold (caches emptied)", ["--force"]);
const coldStats = cacheStats(cold);
const warm = turboBuild(env, "rebuild (no change)", []);
const warmStats = cacheStats(warm);

const ratio = warm.seconds > 0 ? cold.seconds / warm.seconds : Infinity;
const rows = [
  ["", "cold build", "no-change rebuild", "ratio"],
  ["wall time", `${cold.seconds.toFixed(2)} s`, `${warm.seconds.toFixed(2)} s`, `${ratio.toFixed(1)}x`],
  ["tasks", String(coldStats.total), String(warmStats.total), ""],
  ["cache hits", String(coldStats.hits), String(warmStats.hits), ""],
  ["executed", String(coldStats.executed), String(warmStats.executed), ""],
];
const widths = rows[0].map((_, col) => Math.max(...rows.map((row) => row[col].length)));
const line = (row) => `| ${row.map((cell, col) => (col === 0 ? cell.padEnd(widths[col]) : cell.padStart(widths[col]))).join(" | ")} |`;
console.log("");
console.log(line(rows[0]));
console.log(`|${widths.map((w, col) => (col === 0 ? ":" : "-").padEnd(w + 1, "-") + (col === 0 ? "-" : ":")).join("|")}|`);
for (const row of rows.slice(1)) console.log(line(row));
console.log(`\n  (cache figures from ${warmStats.source})`);

const fullHit =
  warmStats.total > 0 &&
  warmStats.hits === warmStats.total &&
  warmStats.executed === 0 &&
  (warmStats.attempted === undefined || warmStats.cachedByTurbo === undefined || warmStats.cachedByTurbo === warmStats.attempted);
if (!fullHit) {
  die(
    `the no-change rebuild was not a full cache hit: ${warmStats.hits} of ${warmStats.total} tasks from cache.` +
      (warmStats.misses.length ? ` Not cached: ${warmStats.misses.join(", ")}.` : "") +
      " A task whose inputs change on every build (timestamps, files written outside its outputs) or outputs that turbo.json does not list cause this.",
    warm.output,
  );
}
if (coldStats.hits > 0) die(`the cold build took ${coldStats.hits} task(s) from the cache; the cache was not empty.`, cold.output);
console.log(`bench/build: ok, the rebuild was a full cache hit (${warmStats.hits}/${warmStats.total} tasks) and ${ratio.toFixed(1)}x faster.`);
