// Step 1, lint: `redocly lint` with redocly.yaml (recommended-strict, built-in rules and
// the house rules of lint/); any problem, error or warning, fails the build.
import { relative, resolve } from "node:path";
import { fail } from "./output.mjs";
import { configPath, redocly, specDir } from "./redocly.mjs";

/** Lints `root`; returns the step's summary, or fails the build listing every problem. */
export function lint(root) {
  const run = redocly(["lint", root, "--config", configPath, "--format", "json", "--max-problems", "100000", "--lint-config", "error"]);
  let report;
  try {
    report = JSON.parse(run.stdout);
  } catch {
    fail(`redocly lint did not run (exit ${run.status}); its output:`, run.output);
  }
  const problems = report.problems ?? [];
  const name = relative(specDir, resolve(specDir, root));
  if (problems.length === 0 && run.status === 0) {
    return `ok, ${name} has no problems${report.totals?.ignored ? ` (${report.totals.ignored} ignored)` : ""}`;
  }
  const lines = [];
  const byRule = new Map();
  for (const problem of problems) {
    const where = problem.location?.[0];
    const file = where?.source?.ref ?? "?";
    const position = where?.start ? `:${where.start.line}:${where.start.col}` : "";
    lines.push(`  ${file}${position}  ${problem.severity}  ${problem.ruleId}\n      ${problem.message}${where?.pointer ? `\n      at ${where.pointer}` : ""}`);
    byRule.set(problem.ruleId, (byRule.get(problem.ruleId) ?? 0) + 1);
  }
  const counts = [...byRule].sort((a, b) => b[1] - a[1]).map(([rule, n]) => `  ${String(n).padStart(5)}  ${rule}`);
  const errors = problems.filter((p) => p.severity === "error").length;
  fail(
    `lint found ${errors} error(s) and ${problems.length - errors} warning(s) in ${name}; every problem fails the build.`,
    `${lines.join("\n")}\n\nBy rule:\n${counts.join("\n")}\n\n` +
      "Fix each problem at the file and line shown (the message says how). The house rules are in lint/rules/, the\n" +
      "conventions in CONVENTIONS.md. `no-unresolved-refs` means a $ref points at a file that does not exist (yet).\n" +
      (problems.length === 0 ? `\nredocly exited with ${run.status}:\n${run.output}\n` : ""),
  );
}
