// Packs packages the way `pnpm publish` (and so `changeset publish`) would: the tarball
// holds the manifest with `workspace:` ranges replaced by real versions.
import { spawnSync } from "node:child_process";

/**
 * @typedef {object} PackedPackage
 * @property {string} name
 * @property {string} version
 * @property {string} tarball absolute path of the .tgz
 * @property {string[]} files paths inside the tarball, relative to `package/`
 */

/**
 * Runs `pnpm pack` in `dir` and writes the tarball to `outDir`.
 * @param {string} dir
 * @param {string} outDir
 * @returns {PackedPackage}
 */
export function packPackage(dir, outDir) {
  const packed = spawnSync("pnpm", ["pack", "--json", "--pack-destination", outDir], { cwd: dir, encoding: "utf8" });
  if (packed.error || packed.status !== 0) {
    throw new Error(`\`pnpm pack\` failed in ${dir}:\n${packed.error?.message ?? ""}${packed.stdout}${packed.stderr}`);
  }
  /** @type {{ name: string, version: string, filename: string, files: { path: string }[] }} */
  const report = JSON.parse(packed.stdout);
  return { name: report.name, version: report.version, tarball: report.filename, files: report.files.map((file) => file.path) };
}

/**
 * The package.json inside a tarball, as the registry would serve it.
 * @param {string} tarball
 * @returns {Record<string, any>}
 */
export function packedManifest(tarball) {
  const extracted = spawnSync("tar", ["-xOzf", tarball, "package/package.json"], { encoding: "utf8" });
  if (extracted.error || extracted.status !== 0)
    throw new Error(`Could not read package/package.json from ${tarball}: ${extracted.error?.message ?? extracted.stderr}`);
  return JSON.parse(extracted.stdout);
}
