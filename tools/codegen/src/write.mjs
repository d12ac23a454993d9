import { mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** Replaces the output folder's contents with exactly these files. */
export function writeFiles(outDir, files) {
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  for (const [name, text] of Object.entries(files).sort(([a], [b]) => a.localeCompare(b))) {
    writeFileSync(join(outDir, name), text);
  }
  return readdirSync(outDir);
}
