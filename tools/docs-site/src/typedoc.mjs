// TypeDoc pages of one package, generated from the declarations it publishes (the
// `types` of its main export), so the docs show exactly what users of the tarball get.
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { mustRun } from "@browser-service/release/run";

const require = createRequire(import.meta.url);
const typedocBin = join(dirname(require.resolve("typedoc/package.json")), "bin", "typedoc");
const tsconfig = fileURLToPath(new URL("../typedoc.tsconfig.json", import.meta.url));

/**
 * Writes the package's TypeDoc site to `outDir`, with its README (if it has one yet) as
 * the front page.
 * Resolves with TypeDoc's warnings (such as a public type that is not exported).
 * @param {{ name: string, dir: string, manifest: Record<string, any> }} pkg
 * @param {string} outDir
 */
export async function buildTypeDoc(pkg, outDir) {
  const readme = join(pkg.dir, "README.md");
  const { stdout, stderr } = await mustRun(
    process.execPath,
    [
      typedocBin,
      "--entryPoints",
      join(pkg.dir, pkg.manifest.exports["."].types),
      "--tsconfig",
      tsconfig,
      "--out",
      outDir,
      "--name",
      pkg.name,
      "--includeVersion",
      "--readme",
      existsSync(readme) ? readme : "none",
      // Offline and reproducible: no links to a repository commit, no generator footer.
      "--disableSources",
      "--hideGenerator",
      "--logLevel",
      "Warn",
    ],
    { env: { ...process.env, NO_COLOR: "1", FORCE_COLOR: "0" } },
  );
  return `${stdout}${stderr}`.split("\n").filter((line) => line.trim() !== "");
}
