// The packages of the pnpm workspace, as pnpm itself lists them, so that every release
// check covers each public package, including packages added after the check was written.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** The repository root (where pnpm-workspace.yaml is). */
export const repoRoot = resolve(fileURLToPath(new URL("../../..", import.meta.url)));

/**
 * @typedef {object} WorkspacePackage
 * @property {string} name
 * @property {string} dir absolute directory
 * @property {string} relativeDir directory relative to the repository root, with `/`
 * @property {Record<string, any>} manifest the parsed package.json
 */

/**
 * Every package of the workspace but the root, sorted by name.
 * @param {string} [root]
 * @returns {WorkspacePackage[]}
 */
export function workspacePackages(root = repoRoot) {
  const listed = spawnSync("pnpm", ["ls", "--recursive", "--depth", "-1", "--json"], { cwd: root, encoding: "utf8" });
  if (listed.error || listed.status !== 0) {
    throw new Error(
      `\`pnpm ls --recursive\` failed in ${root}: ${listed.error?.message ?? listed.stderr}. Run this through pnpm (pnpm build, pnpm test:only), so that pnpm is on PATH.`,
    );
  }
  /** @type {{ path: string }[]} */
  const entries = JSON.parse(listed.stdout);
  return entries
    .map((entry) => resolve(entry.path))
    .filter((dir) => dir !== root)
    .map((dir) => ({
      dir,
      relativeDir: relative(root, dir).split("\\").join("/"),
      manifest: JSON.parse(readFileSync(join(dir, "package.json"), "utf8")),
    }))
    .map((pkg) => ({ name: pkg.manifest.name, ...pkg }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

/**
 * The packages that get published: every workspace package not marked `private`.
 * @param {string} [root]
 */
export function publicPackages(root = repoRoot) {
  return workspacePackages(root).filter((pkg) => pkg.manifest.private !== true);
}

/**
 * Whether a package has a TypeScript API (its main export has a `types` condition), so
 * that it gets TypeDoc pages and a strict-TypeScript consumer can import it.
 * @param {WorkspacePackage} pkg
 */
export function hasTypeScriptApi(pkg) {
  const main = pkg.manifest.exports?.["."];
  return typeof main === "object" && main !== null && typeof main.types === "string";
}
