import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
// @ts-expect-error: a plain .mjs script of the repo, without type declarations.
import { readReports, summarize } from "../test-report.mjs";

function report(files: unknown[], counts: { passed: number; failed: number; pending?: number }) {
  return { numPassedTests: counts.passed, numFailedTests: counts.failed, numPendingTests: counts.pending ?? 0, numTodoTests: 0, testResults: files };
}

describe("summarize", () => {
  it("adds up the packages' counts", () => {
    const lines = summarize(
      [
        { name: "client", report: report([], { passed: 3, failed: 0, pending: 1 }) },
        { name: "server", report: report([], { passed: 5, failed: 0 }) },
      ],
      "/repo",
    );
    expect(lines).toEqual(["2 packages tested", "8 passed, 0 failed, 1 skipped"]);
  });

  it("names each failed test after the totals, with the start of its error", () => {
    const failure = ["AssertionError: expected 500 to be 413", "", "- Expected", "+ Received", "a", "b", "c", "d: too far down"].join("\n");
    const lines = summarize(
      [
        {
          name: "server",
          report: report(
            [
              {
                name: "/repo/packages/server/test/nodes.test.ts",
                status: "failed",
                assertionResults: [
                  { status: "passed", fullName: "nodes forwards a list", failureMessages: [] },
                  { status: "failed", fullName: "nodes answers 413 through either node", failureMessages: [failure] },
                ],
              },
            ],
            { passed: 1, failed: 1 },
          ),
        },
      ],
      "/repo",
    );
    expect(lines.slice(0, 2)).toEqual(["1 packages tested", "1 passed, 1 failed, 0 skipped"]);
    expect(lines.slice(2)).toEqual([
      "",
      "FAILED server: packages/server/test/nodes.test.ts > nodes answers 413 through either node",
      "    AssertionError: expected 500 to be 413",
      "    - Expected",
      "    + Received",
      "    a",
      "    b",
      "    c",
    ]);
  });

  it("names a file that failed without a failed test (an import error, a hook)", () => {
    const lines = summarize(
      [
        {
          name: "mcp",
          report: report([{ name: "/repo/packages/mcp/test/a.test.ts", status: "failed", message: "Cannot find module 'x'", assertionResults: [] }], {
            passed: 0,
            failed: 0,
          }),
        },
      ],
      "/repo",
    );
    expect(lines).toContain("FAILED mcp: packages/mcp/test/a.test.ts > (the file itself)");
    expect(lines).toContain("    Cannot find module 'x'");
  });

  it("cuts a very long line of an error", () => {
    const lines = summarize(
      [
        {
          name: "x",
          report: report(
            [{ name: "/repo/t.test.ts", status: "failed", assertionResults: [{ status: "failed", fullName: "t", failureMessages: ["y".repeat(1000)] }] }],
            { passed: 0, failed: 1 },
          ),
        },
      ],
      "/repo",
    );
    expect(lines.at(-1)).toBe(`    ${"y".repeat(300)}…`);
  });
});

describe("readReports", () => {
  it("reads each package's report by name, in order, and nothing when there is no folder", () => {
    const dir = mkdtempSync(join(tmpdir(), "reports-"));
    writeFileSync(join(dir, "server.json"), JSON.stringify({ numPassedTests: 1 }));
    writeFileSync(join(dir, "client.json"), JSON.stringify({ numPassedTests: 2 }));
    writeFileSync(join(dir, "notes.txt"), "not a report");
    expect(readReports(dir)).toEqual([
      { name: "client", report: { numPassedTests: 2 } },
      { name: "server", report: { numPassedTests: 1 } },
    ]);
    expect(readReports(join(dir, "missing"))).toEqual([]);
  });
});
