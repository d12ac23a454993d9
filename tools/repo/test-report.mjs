// The closing lines of `npm test`, read from every package's vitest JSON report. CI shows
// only the end of a run's output, where one package's failure lines are long scrolled
// away: so the end names every failed test, with the start of its error.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { relative } from "node:path";

// The lines of each failure's message shown: enough for the assertion and where it failed.
const MESSAGE_LINES = 6;
const MAX_LINE = 300;

/**
 * The totals and failed tests of `reports` (parsed vitest JSON reports, by package file
 * name), as the lines to print; paths are shown relative to `root`.
 * @param {Array<{ name: string, report: any }>} reports
 * @param {string} root
 * @returns {string[]}
 */
export function summarize(reports, root) {
  const totals = { passed: 0, failed: 0, skipped: 0 };
  const failures = [];
  for (const { name, report } of reports) {
    totals.passed += report.numPassedTests;
    totals.failed += report.numFailedTests;
    totals.skipped += report.numPendingTests + report.numTodoTests;
    for (const file of report.testResults ?? []) {
      const where = relative(root, file.name);
      const failed = (file.assertionResults ?? []).filter((test) => test.status === "failed");
      // A file that failed without a failed test (an import error, a failing hook) says so in its message.
      if (failed.length === 0 && file.status === "failed") failures.push({ name, where, title: "(the file itself)", messages: [file.message ?? ""] });
      for (const test of failed) failures.push({ name, where, title: test.fullName, messages: test.failureMessages ?? [] });
    }
  }
  const lines = [`${reports.length} packages tested`, `${totals.passed} passed, ${totals.failed} failed, ${totals.skipped} skipped`];
  for (const failure of failures) {
    lines.push("", `FAILED ${failure.name}: ${failure.where} > ${failure.title}`);
    const text = failure.messages
      .join("\n")
      .split("\n")
      .filter((line) => line.trim() !== "");
    for (const line of text.slice(0, MESSAGE_LINES)) lines.push(`    ${line.length > MAX_LINE ? `${line.slice(0, MAX_LINE)}…` : line}`);
  }
  return lines;
}

/** The reports in `dir` (each package's `<name>.json`), sorted by name. */
export function readReports(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((file) => file.endsWith(".json"))
    .sort()
    .map((file) => ({ name: file.slice(0, -".json".length), report: JSON.parse(readFileSync(`${dir}/${file}`, "utf8")) }));
}
