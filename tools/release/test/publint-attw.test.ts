// publint (is the package.json right for what is in the tarball?) and Are the Types Wrong
// (do TypeScript's resolution modes find the declarations?) on every public package's
// tarball, exactly as it would be published. A failure shows the tool's own report.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { publint } from "publint";
import { formatMessage } from "publint/utils";
import { describe, expect, inject, it } from "vitest";

const packed = inject("packed");
const require = createRequire(import.meta.url);
const attwBin = join(dirname(require.resolve("@arethetypeswrong/cli/package.json")), "dist", "index.js");

describe.each(packed)("$name", (pkg) => {
  it("passes publint, suggestions included", async () => {
    const tarball = readFileSync(pkg.tarball);
    const { messages, pkg: manifest } = await publint({
      pack: { tarball: tarball.buffer.slice(tarball.byteOffset, tarball.byteOffset + tarball.byteLength) },
      level: "suggestion",
      strict: true,
    });
    const report = messages.map((message) => `${message.type}: ${formatMessage(message, manifest, { color: false })}`);
    expect(report, `publint on ${pkg.tarball}`).toEqual([]);
  });

  // ESM only (see the root README): the esm-only profile leaves out the resolutions that
  // model CommonJS importers (node10, node16 from CJS); Node 20.19+ can require() these
  // packages anyway, which the consumer test checks on Node 20, 22 and 24.
  it("passes Are the Types Wrong (esm-only profile)", () => {
    const run = spawnSync(process.execPath, [attwBin, pkg.tarball, "--profile", "esm-only", "--format", "ascii", "--no-color", "--no-emoji"], {
      encoding: "utf8",
      env: { ...process.env, NO_COLOR: "1" },
    });
    expect(run.error).toBeUndefined();
    expect(run.status, `attw ${pkg.tarball} --profile esm-only:\n${run.stdout}${run.stderr}`).toBe(0);
  });
});
