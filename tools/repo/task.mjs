#!/usr/bin/env node
// The README's two commands: `npm start` (main job) and `npm test` (everything CI runs:
// the lint, the build and every package's tests).
// Only Node 20.19+ and npm are assumed; the pinned pnpm comes through corepack.
import { spawnSync } from "node:child_process";
import { rmSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { ensureChromium } from "./chromium.mjs";
import { pnpmEnv } from "./pnpm-env.mjs";
import { ensurePodman } from "./podman.mjs";
import { ensurePostgres } from "./postgres.mjs";
import { ensureSandboxTools } from "./sandbox-tools.mjs";
import { readReports, summarize } from "./test-report.mjs";

const root = fileURLToPath(new URL("../..", import.meta.url));
const resultsDir = `${root}/test-results/vitest`;

function run(args, env) {
  console.log(`\n$ pnpm ${args.join(" ")}`);
  const result = spawnSync("pnpm", args, { cwd: root, stdio: "inherit", env });
  if (result.error) throw result.error;
  return result.status ?? 1;
}

const task = process.argv[2];
if (task !== "start" && task !== "test") {
  console.error("usage: node tools/repo/task.mjs start|test");
  process.exit(2);
}
// First, so that a machine without Chromium learns it within seconds, not after the build.
try {
  console.log(ensureChromium({ task }));
  console.log(ensureSandboxTools({ task }));
  if (task === "test") console.log(ensurePostgres({ task }));
  // Never stops `npm test`: without Podman only the container image's test is skipped, and says why.
  if (task === "test") console.log(ensurePodman().message);
} catch (error) {
  console.error(`\n${error.message}`);
  process.exit(1);
}
const env = pnpmEnv(root);
const must = (...args) => {
  const status = run(args, env);
  if (status !== 0) process.exit(status);
};

must("install", "--frozen-lockfile");
if (task === "test") {
  // The lint before the build: its Biome check (formatting, import order, lint rules) answers
  // in seconds, and its type-checks build what they need, which the build then finds in
  // turbo's cache.
  const status = run(["run", "lint"], env);
  if (status !== 0) {
    console.error(
      [
        "\n`pnpm lint` failed, so no test ran.",
        "Formatting, import order and Biome's safe fixes: `pnpm format` (`pnpm exec biome check --write`) writes them.",
        "Then `pnpm lint` again: the lint findings and type errors it still lists need a fix by hand.",
      ].join("\n"),
    );
    process.exit(status);
  }
}
must("run", "build");
if (task === "start") {
  // Pages a developer serves on this machine (localhost, 127.0.0.1) are reachable from the
  // browsers; the server says so when it starts. `npx browser-service-server` does not.
  must("--filter", "@browser-service/server", "run", "start", "--allow-private-network");
} else {
  rmSync(resultsDir, { recursive: true, force: true });
  const status = run(["exec", "turbo", "run", "test", "--concurrency=1", "--continue"], env);
  console.log(`\n${summarize(readReports(resultsDir), root).join("\n")}`);
  process.exit(status);
}
