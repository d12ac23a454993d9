// What every public package must declare to be installable and usable by anyone: the
// house policy on top of what publint checks. Each package gets one test listing all
// its problems, so a new package shows at once what it lacks.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, inject, it } from "vitest";
import { packedManifest } from "../src/pack.mjs";
import { repoRoot } from "../src/workspace.mjs";

const packed = inject("packed");
const rootManifest = JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8"));
const publicNames = new Set(packed.map((pkg) => pkg.name));
const repositoryUrl = "git+https://github.com/browser-service/browser-service.git";

/** Every problem of one package's manifest and README, as sentences. */
function problemsOf(pkg: (typeof packed)[number]): string[] {
  const manifest = JSON.parse(readFileSync(join(pkg.dir, "package.json"), "utf8"));
  const published = packedManifest(pkg.tarball);
  const problems: string[] = [];
  const check = (ok: unknown, problem: string) => {
    if (!ok) problems.push(problem);
  };

  check(manifest.type === "module", `"type" must be "module" (the packages are ESM only), found ${JSON.stringify(manifest.type)}`);
  check(typeof manifest.description === "string" && manifest.description.length > 0, `"description" is missing`);
  check(manifest.license === "MIT", `"license" must be "MIT" like every other package, found ${JSON.stringify(manifest.license)}`);
  check(
    manifest.engines?.node === rootManifest.engines.node,
    `"engines.node" must be ${JSON.stringify(rootManifest.engines.node)} (the repository's), found ${JSON.stringify(manifest.engines?.node)}`,
  );
  check(
    typeof manifest.sideEffects === "boolean" || Array.isArray(manifest.sideEffects),
    `"sideEffects" must say whether importing the package has side effects (false, or the files that do), found ${JSON.stringify(manifest.sideEffects)}`,
  );
  check(Array.isArray(manifest.files) && manifest.files.length > 0, `"files" must list what is published (such as ["dist"])`);
  check(
    manifest.repository?.type === "git" && manifest.repository?.url === repositoryUrl && manifest.repository?.directory === pkg.relativeDir,
    `"repository" must be { "type": "git", "url": "${repositoryUrl}", "directory": "${pkg.relativeDir}" }, found ${JSON.stringify(manifest.repository)}`,
  );

  const exportsMap = manifest.exports;
  const isMap = typeof exportsMap === "object" && exportsMap !== null && Object.keys(exportsMap).every((key) => key.startsWith("."));
  check(isMap, `"exports" must be a map of subpaths ("." , "./package.json", ...), found ${JSON.stringify(exportsMap)}`);
  if (isMap) {
    check(exportsMap["./package.json"] === "./package.json", `"exports" must map "./package.json" to itself, so tools can read the manifest`);
    for (const [subpath, target] of Object.entries<unknown>(exportsMap)) {
      // A JavaScript entry must come with its declarations, listed first as TypeScript requires.
      if (typeof target === "object" && target !== null) {
        const conditions = Object.keys(target);
        check(conditions[0] === "types", `"exports" ${subpath} must list "types" first, found ${JSON.stringify(conditions)}`);
        check(!("require" in target), `"exports" ${subpath} has a "require" condition, but the packages are ESM only (see the root README)`);
      } else if (typeof target === "string") {
        check(!/\.[cm]?js$/.test(target), `"exports" ${subpath} points at JavaScript (${target}) without a "types" condition`);
      }
    }
  }

  // The registry gets the packed manifest: internal ranges must be real versions of public packages.
  for (const field of ["dependencies", "peerDependencies", "optionalDependencies"] as const) {
    for (const [name, range] of Object.entries<string>(published[field] ?? {})) {
      check(!range.startsWith("workspace:"), `packed ${field}.${name} is still ${range}`);
      if (name.startsWith("@browser-service/")) {
        check(publicNames.has(name), `${field}.${name} is not a public package of this workspace, so installs from npm would fail`);
      }
    }
  }

  check(pkg.files.includes("README.md"), "the tarball has no README.md");
  const readme = pkg.files.includes("README.md") ? readFileSync(join(pkg.dir, "README.md"), "utf8") : "";
  const installLine = new RegExp(`npm (install|i)( --save-dev| -D)? ${pkg.name.replace("/", "\\/")}\\b`);
  check(installLine.test(readme), `README.md must show how to install it: \`npm install ${pkg.name}\``);
  const usesIt = [...readme.matchAll(/```(?:js|mjs|ts|sh)\n([\s\S]*?)```/g)].some(
    ([, code]) => code!.includes(`"${pkg.name}"`) || code!.includes(`"${pkg.name}/`) || Object.keys(manifest.bin ?? {}).some((bin) => code!.includes(bin)),
  );
  check(usesIt, `README.md must have an example (a js, ts or sh code block) that imports ${pkg.name} or runs its command`);
  return problems;
}

describe("every public package's manifest and README", () => {
  it("finds the public packages", () => {
    expect(packed.length).toBeGreaterThan(0);
  });

  for (const pkg of packed) {
    it(`${pkg.name} (${pkg.relativeDir})`, () => {
      expect(problemsOf(pkg)).toEqual([]);
    });
  }
});
