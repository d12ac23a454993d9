// Reads pending changesets and computes versions on its own, so that the release dry run
// checks what `changeset version` did against an independent reading of the same files.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

const BUMPS = ["patch", "minor", "major"];

/**
 * @typedef {"patch" | "minor" | "major"} Bump
 * @typedef {{ file: string, releases: { name: string, bump: Bump }[], summary: string }} Changeset
 */

/**
 * Every pending changeset in `<root>/.changeset` (the .md files other than README.md).
 * @param {string} root
 * @returns {Changeset[]}
 */
export function readChangesets(root) {
  const dir = join(root, ".changeset");
  return readdirSync(dir)
    .filter((file) => file.endsWith(".md") && file !== "README.md")
    .sort()
    .map((file) => parseChangeset(file, readFileSync(join(dir, file), "utf8")));
}

/**
 * @param {string} file
 * @param {string} text
 * @returns {Changeset}
 */
export function parseChangeset(file, text) {
  const match = /^---\r?\n([\s\S]*?)\r?\n---\r?\n([\s\S]*)$/.exec(text);
  if (!match) throw new Error(`.changeset/${file} does not start with a --- front matter --- block.`);
  const [, frontMatter = "", body = ""] = match;
  const releases = frontMatter
    .split(/\r?\n/)
    .filter((line) => line.trim() !== "")
    .map((line) => {
      const release = /^\s*["']?([^"':]+)["']?\s*:\s*(patch|minor|major)\s*$/.exec(line);
      if (!release) throw new Error(`.changeset/${file}: cannot read the release line ${JSON.stringify(line)}; expected "package": patch|minor|major.`);
      return { name: String(release[1]), bump: /** @type {Bump} */ (release[2]) };
    });
  return { file, releases, summary: body.trim() };
}

/**
 * The larger of two bumps (`undefined` is no bump).
 * @param {Bump | undefined} a
 * @param {Bump | undefined} b
 * @returns {Bump | undefined}
 */
export function largerBump(a, b) {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return BUMPS.indexOf(a) >= BUMPS.indexOf(b) ? a : b;
}

/**
 * `version` bumped as semver does it (release versions only: no pre mode here).
 * @param {string} version
 * @param {Bump} bump
 */
export function bumpVersion(version, bump) {
  const parts = /^(\d+)\.(\d+)\.(\d+)$/.exec(version);
  if (!parts) throw new Error(`Cannot bump ${version}: only x.y.z versions are used (changesets pre mode is not).`);
  const [major, minor, patch] = [Number(parts[1]), Number(parts[2]), Number(parts[3])];
  if (bump === "major") return `${major + 1}.0.0`;
  if (bump === "minor") return `${major}.${minor + 1}.0`;
  return `${major}.${minor}.${patch + 1}`;
}

/**
 * Compares two x.y.z versions.
 * @param {string} a
 * @param {string} b
 */
export function compareVersions(a, b) {
  const pa = a.split(".").map(Number);
  const pb = b.split(".").map(Number);
  for (let i = 0; i < 3; i++) {
    const difference = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (difference !== 0) return difference;
  }
  return 0;
}

/**
 * Whether a package name matches a changesets group entry: a name, or a glob where `*`
 * stands for any characters but `/` (as micromatch, which changesets uses, reads it).
 * @param {string} pattern
 * @param {string} name
 */
export function matchesGroupEntry(pattern, name) {
  const regex = new RegExp(
    `^${pattern
      .split("*")
      .map((part) => part.replace(/[.+?^${}()|[\]\\/]/g, "\\$&"))
      .join("[^/]*")}$`,
  );
  return regex.test(name);
}
