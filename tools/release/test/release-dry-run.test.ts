// A release without publishing: the pending changesets are applied by `changeset version`
// to a scratch copy of the repository, and the result is checked against an independent
// reading of the same changesets: versions (the fixed group moves as one), changelogs,
// and the internal dependency ranges that `pnpm publish` would write into the tarballs.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Bump, bumpVersion, compareVersions, largerBump, matchesGroupEntry, readChangesets } from "../src/changesets.mjs";
import { packedManifest, packPackage } from "../src/pack.mjs";
import { copyWorkingTree, linkWorkspaceDependencies } from "../src/scratch-copy.mjs";
import { repoRoot, type WorkspacePackage, workspacePackages } from "../src/workspace.mjs";

const require = createRequire(import.meta.url);
const changesetBin = require.resolve("@changesets/cli/bin.js");
const config = JSON.parse(readFileSync(join(repoRoot, ".changeset", "config.json"), "utf8"));
const before = workspacePackages();
const publicBefore = before.filter((pkg) => pkg.manifest.private !== true);
const changesets = readChangesets(repoRoot);

describe("changesets config", () => {
  it("puts every public package, and only those, into one fixed group", () => {
    const groups: string[][] = config.fixed;
    const inGroup = (name: string) => groups.findIndex((group) => group.some((entry) => matchesGroupEntry(entry, name)));
    expect(groups).toHaveLength(1);
    expect(publicBefore.filter((pkg) => inGroup(pkg.name) !== 0).map((pkg) => pkg.name)).toEqual([]);
    // Private packages are never versioned, so a glob that also matches them is harmless.
    expect(config.privatePackages).toEqual({ version: false, tag: false });
    expect(config.linked).toEqual([]);
  });

  it("has pending changesets that name only public packages", () => {
    const publicNames = new Set(publicBefore.map((pkg) => pkg.name));
    const unknown = changesets.flatMap((changeset) =>
      changeset.releases.filter((release) => !publicNames.has(release.name)).map((release) => `${changeset.file}: ${release.name}`),
    );
    expect(unknown).toEqual([]);
  });

  // Before the first release, release notes say what a user gets, not how it was built: one
  // entry per package, and the first version is 0.1.0. (Once released, this holds no more.)
  it.runIf(publicBefore.every((pkg) => pkg.manifest.version === "0.0.0"))(
    "before the first release: one minor changeset per public package, naming only it, for 0.1.0",
    () => {
      const named = changesets.map((changeset) => changeset.releases.map((release) => `${release.name}@${release.bump}`).join(" "));
      expect(named.sort()).toEqual(publicBefore.map((pkg) => `${pkg.name}@minor`).sort());
      expect(bumpVersion("0.0.0", "minor")).toBe("0.1.0");
    },
  );
});

describe.runIf(changesets.length > 0)("changeset version on a scratch copy", () => {
  let scratch: string;
  let after: WorkspacePackage[];
  const packedAfter = new Map<string, Record<string, any>>();
  // The fixed group releases together: from the highest current version, by the largest pending bump.
  const groupBump = changesets.flatMap((c) => c.releases).reduce<Bump | undefined>((bump, release) => largerBump(bump, release.bump), undefined)!;
  const groupFrom = publicBefore
    .map((pkg) => pkg.manifest.version as string)
    .sort(compareVersions)
    .at(-1)!;
  const expectedVersion = bumpVersion(groupFrom, groupBump);

  beforeAll(() => {
    scratch = mkdtempSync(join(tmpdir(), "browser-service-release-"));
    copyWorkingTree(repoRoot, scratch);
    const run = spawnSync(process.execPath, [changesetBin, "version"], { cwd: scratch, encoding: "utf8", env: { ...process.env, NO_COLOR: "1" } });
    if (run.status !== 0) throw new Error(`changeset version failed (exit ${run.status}):\n${run.stdout}${run.stderr}`);
    after = workspacePackages(scratch);
    linkWorkspaceDependencies(after);
    const packs = join(scratch, ".packs");
    for (const pkg of after.filter((p) => p.manifest.private !== true)) packedAfter.set(pkg.name, packedManifest(packPackage(pkg.dir, packs).tarball));
  });

  afterAll(() => {
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  it(`gives every public package the same new version (${expectedVersion})`, () => {
    const versions = Object.fromEntries(after.filter((pkg) => pkg.manifest.private !== true).map((pkg) => [pkg.name, pkg.manifest.version]));
    expect(versions).toEqual(Object.fromEntries(publicBefore.map((pkg) => [pkg.name, expectedVersion])));
  });

  it("leaves private packages alone", () => {
    const privateAfter = after.filter((pkg) => pkg.manifest.private === true);
    expect(privateAfter.map((pkg) => [pkg.name, pkg.manifest.version])).toEqual(
      before.filter((pkg) => pkg.manifest.private === true).map((pkg) => [pkg.name, pkg.manifest.version]),
    );
    expect(privateAfter.filter((pkg) => existsSync(join(pkg.dir, "CHANGELOG.md"))).map((pkg) => pkg.name)).toEqual([]);
  });

  it("consumes the pending changesets", () => {
    expect(readdirSync(join(scratch, ".changeset")).filter((file) => file.endsWith(".md") && file !== "README.md")).toEqual([]);
  });

  it("writes each changeset's summary under the new version of every package it names", () => {
    const missing: string[] = [];
    for (const pkg of after.filter((p) => p.manifest.private !== true)) {
      const changelog = existsSync(join(pkg.dir, "CHANGELOG.md")) ? readFileSync(join(pkg.dir, "CHANGELOG.md"), "utf8") : "";
      const newest = changelog.split(/^## /m)[1] ?? "";
      if (!changelog.startsWith(`# ${pkg.name}\n`) || !newest.startsWith(`${expectedVersion}\n`)) {
        missing.push(`${pkg.relativeDir}/CHANGELOG.md does not start with "# ${pkg.name}" and "## ${expectedVersion}"`);
        continue;
      }
      for (const changeset of changesets) {
        const release = changeset.releases.find((r) => r.name === pkg.name);
        if (!release) continue;
        const heading = `### ${release.bump[0]!.toUpperCase()}${release.bump.slice(1)} Changes`;
        const firstLine = changeset.summary.split("\n")[0]!;
        if (!newest.includes(heading) || !newest.includes(`- ${firstLine}`))
          missing.push(`${pkg.name} ${expectedVersion}: no "${heading}" entry for ${changeset.file}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it("publishes internal dependencies with ranges of the new version", () => {
    const ranges: string[] = [];
    const wrong: string[] = [];
    for (const pkg of after.filter((p) => p.manifest.private !== true)) {
      const published = packedAfter.get(pkg.name)!;
      for (const field of ["dependencies", "peerDependencies", "optionalDependencies"] as const) {
        for (const [name, declared] of Object.entries<string>(pkg.manifest[field] ?? {})) {
          if (!declared.startsWith("workspace:")) continue;
          // pnpm publish turns workspace:^ into ^<version>, workspace:~ into ~<version>,
          // workspace:* into <version>, and workspace:<range> into <range>.
          const spec = declared.slice("workspace:".length);
          const expected = spec === "*" ? expectedVersion : spec === "^" || spec === "~" ? `${spec}${expectedVersion}` : spec;
          ranges.push(`${pkg.name} ${field}.${name}`);
          if (published[field]?.[name] !== expected)
            wrong.push(`${pkg.name} ${field}.${name}: published ${published[field]?.[name]}, expected ${expected} (declared ${declared})`);
        }
      }
    }
    expect(ranges.length).toBeGreaterThan(0);
    expect(wrong).toEqual([]);
  });
});
