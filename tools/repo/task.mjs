#!/usr/bin/env node
// The README's two commands: `npm start` (main job) and `npm test` (everything CI runs).
// Only Node 20.19+ and npm are assumed; the pinned pnpm comes through corepack.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { delimiter } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../..", import.meta.url));
const { packageManager } = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8"));

const quietEnv = {
  ...process.env,
  COREPACK_ENABLE_DOWNLOAD_PROMPT: "0",
  TURBO_TELEMETRY_DISABLED: "1",
  DO_NOT_TRACK: "1",
  REDOCLY_TELEMETRY: "off",
  REDOCLY_SUPPRESS_UPDATE_NOTICE: "true",
};

function run(cmd, args, env = quietEnv) {
  console.log(`\n$ ${[cmd, ...args].join(" ")}`);
  const result = spawnSync(cmd, args, { cwd: root, stdio: "inherit", env });
  if (result.error) throw result.error;
  return result.status ?? 1;
}

function must(cmd, args, env) {
  const status = run(cmd, args, env);
  if (status !== 0) process.exit(status);
}

/** Resolves how to call the pinned pnpm; corepack verifies npm signatures when it can. */
function pnpmEnv() {
  const probe = spawnSync("corepack", ["pnpm", "--version"], { cwd: root, env: quietEnv, encoding: "utf8" });
  if (probe.status === 0) return quietEnv;
  if (/signature/i.test(probe.stderr ?? "")) {
    // Registry mirrors that strip npm's signing metadata make corepack refuse every
    // download; the tarball integrity hash is still checked by corepack.
    console.warn(`corepack could not verify the npm signature of ${packageManager}; retrying with COREPACK_INTEGRITY_KEYS=0`);
    return { ...quietEnv, COREPACK_INTEGRITY_KEYS: "0" };
  }
  console.error(probe.stderr || probe.error?.message);
  console.error(`Could not run ${packageManager} through corepack (bundled with Node 20+).`);
  process.exit(1);
}

const resultsDir = `${root}/test-results/vitest`;

/** One closing line over every package's vitest JSON report, for people and for CI. */
function printTotals() {
  const totals = { passed: 0, failed: 0, skipped: 0 };
  const files = existsSync(resultsDir) ? readdirSync(resultsDir).filter((f) => f.endsWith(".json")) : [];
  for (const file of files) {
    const report = JSON.parse(readFileSync(`${resultsDir}/${file}`, "utf8"));
    totals.passed += report.numPassedTests;
    totals.failed += report.numFailedTests;
    totals.skipped += report.numPendingTests + report.numTodoTests;
  }
  console.log(`\n${files.length} packages tested`);
  console.log(`${totals.passed} passed, ${totals.failed} failed, ${totals.skipped} skipped`);
}

/**
 * turbo looks for `pnpm` on PATH; corepack puts its shims in a folder of the repo's own
 * instead of a global one, so nothing outside the clone changes.
 */
function withPnpmOnPath(env) {
  const shims = `${root}/.tools/bin`;
  mkdirSync(shims, { recursive: true });
  must("corepack", ["enable", "--install-directory", shims, "pnpm"], env);
  return { ...env, PATH: `${shims}${delimiter}${env.PATH ?? ""}` };
}

const task = process.argv[2];
const env = withPnpmOnPath(pnpmEnv());
const pnpm = (...args) => must("pnpm", args, env);

pnpm("install", "--frozen-lockfile");
switch (task) {
  case "start":
    pnpm("run", "build");
    pnpm("--filter", "@browser-service/openapi", "run", "serve-docs");
    break;
  case "test": {
    pnpm("run", "build");
    rmSync(resultsDir, { recursive: true, force: true });
    const status = run("pnpm", ["exec", "turbo", "run", "test", "--concurrency=1", "--continue"], env);
    printTotals();
    process.exit(status);
  }
  default:
    console.error("usage: node tools/repo/task.mjs start|test");
    process.exit(2);
}
