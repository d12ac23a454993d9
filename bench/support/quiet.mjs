// Waiting for a quiet machine before a timed step, so that the steps a bench compares
// start alike whatever else the shared machine does.
import { existsSync, readFileSync } from "node:fs";

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Busy and total CPU time of the machine so far, from /proc/stat. */
function cpuTimes() {
  const fields = readFileSync("/proc/stat", "utf8").split("\n")[0].trim().split(/\s+/).slice(1).map(Number);
  const idle = fields[3] + (fields[4] ?? 0);
  const total = fields.reduce((sum, value) => sum + value, 0);
  return { busy: total - idle, total };
}

/** Waits (10 s at most) until under 15 % of the CPU is busy over two 250 ms windows in a row. */
export async function quiet() {
  if (!existsSync("/proc/stat")) return sleep(300);
  const started = performance.now();
  for (let calm = 0; calm < 2 && performance.now() - started < 10_000; ) {
    const before = cpuTimes();
    await sleep(250);
    const after = cpuTimes();
    calm = (after.busy - before.busy) / Math.max(1, after.total - before.total) < 0.15 ? calm + 1 : 0;
  }
}
