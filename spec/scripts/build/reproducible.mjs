// The reproducibility check (`--check-reproducible`): bundle and docs built twice more
// into temporary folders must be byte-identical to the output, or generated files would
// change without a change to the spec.
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bundle } from "./bundle.mjs";
import { docs } from "./docs.mjs";
import { fail } from "./output.mjs";

function listFiles(dir, prefix = "") {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? listFiles(join(dir, entry.name), `${prefix}${entry.name}/`) : [`${prefix}${entry.name}`],
  );
}

/** Builds `root` twice more and compares every file with `outDir`'s; returns the step's summary. */
export function checkReproducible(root, outDir) {
  const runs = [];
  for (let i = 0; i < 2; i++) {
    const dir = mkdtempSync(join(tmpdir(), "spec-build-"));
    runs.push(dir);
    docs(bundle(root, dir).bundledJson, dir);
  }
  const differences = [];
  const files = [...new Set([...listFiles(outDir), ...runs.flatMap((dir) => listFiles(dir))])].sort();
  for (const file of files) {
    const hashes = [outDir, ...runs].map((dir) =>
      existsSync(join(dir, file))
        ? createHash("sha256")
            .update(readFileSync(join(dir, file)))
            .digest("hex")
        : "missing",
    );
    if (new Set(hashes).size > 1) differences.push(`  ${file}: ${hashes.map((h) => h.slice(0, 12)).join(" / ")}`);
  }
  for (const dir of runs) rmSync(dir, { recursive: true, force: true });
  if (differences.length > 0) fail("the build is not reproducible; these files differ between runs:", differences.join("\n"));
  return `3 builds, ${files.length} files byte-identical`;
}
