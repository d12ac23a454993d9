#!/usr/bin/env node
// Every bench, run once with the smallest counts that still go through all of its code:
// whether it still runs against today's packages, not its numbers (which need a quiet
// machine and full counts). `npm test` runs this, so that no bench rots unnoticed; a bench
// fails only on a wrong answer (an HTTP status, a missing tool, a bad frame), never a time.
//
//   node bench/smoke.mjs               (after `pnpm build`)
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const here = fileURLToPath(new URL(".", import.meta.url));
/** Each bench and the arguments that make it small. */
const RUNS = [
  ["build.mjs"],
  ["client.mjs", "--rounds", "1", "--requests", "50"],
  ["client-bundle.mjs"],
  ["validators.mjs"],
  ["server.mjs", "--requests", "200"],
  ["stores.mjs", "--calls", "200", "--rounds", "1"],
  ["rate-limit.mjs", "--seconds", "1"],
  ["cdp.mjs", "--evals", "50", "--shots", "2", "--rounds", "1"],
  ["telemetry.mjs", "--seconds", "2"],
  ["browsers.mjs", "--creates", "2", "--rounds", "1", "--seconds", "1"],
  ["budgets.mjs", "--smoke"],
  ["extensions.mjs", "--creates", "2"],
  ["profiles.mjs", "--creates", "1", "--mib", "2"],
  ["auth.mjs", "--logins", "3"],
  ["webmcp.mjs", "--requests", "10"],
  ["live-view.mjs", "--seconds", "1"],
  ["webmcp-helpers.mjs"],
  ["mcp.mjs", "--requests", "10", "--changes", "2"],
  ["nodes.mjs", "--requests", "100", "--creates", "2"],
  ["soak.mjs", "--seconds", "10", "--pending", "1000"],
];
/** The most one bench may take here; past it, it is killed and counted as failed. */
const LIMIT_MS = 5 * 60 * 1000;

function run(args) {
  return new Promise((resolve) => {
    const started = performance.now();
    const child = spawn(process.execPath, args, { cwd: here, stdio: ["ignore", "pipe", "pipe"], detached: true });
    let output = "";
    child.stdout.on("data", (chunk) => (output += chunk));
    child.stderr.on("data", (chunk) => (output += chunk));
    const timer = setTimeout(() => {
      output += `\n(killed after ${LIMIT_MS / 1000} s)`;
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {}
    }, LIMIT_MS);
    // On exit, not on close: a server the bench started and left behind (it failed half
    // way) would hold the pipes open. Its process group goes with it.
    child.on("exit", (code, signal) => {
      clearTimeout(timer);
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {}
      resolve({ ok: code === 0, code, signal, output, seconds: (performance.now() - started) / 1000 });
    });
  });
}

let failed = 0;
for (const args of RUNS) {
  const result = await run(args);
  console.log(`${result.ok ? "ok  " : "FAIL"} bench/${args.join(" ")} (${result.seconds.toFixed(1)} s)`);
  if (!result.ok) {
    failed++;
    console.log(result.output.split("\n").slice(-40).join("\n"));
  }
}
console.log(failed === 0 ? `bench smoke: all ${RUNS.length} benches ran` : `bench smoke: ${failed} of ${RUNS.length} benches failed`);
process.exit(failed === 0 ? 0 : 1);
