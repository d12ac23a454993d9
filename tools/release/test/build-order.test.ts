// turbo runs a package's tests after the builds of its workspace dependencies (`^build`).
// These tests pack and install every public package, so this package must depend on each.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, inject, it } from "vitest";
import { repoRoot } from "../src/workspace.mjs";

it("depends on every public package, so turbo builds them before these tests", () => {
  const manifest = JSON.parse(readFileSync(join(repoRoot, "tools", "release", "package.json"), "utf8"));
  const declared = { ...manifest.dependencies, ...manifest.devDependencies };
  expect(
    inject("packed")
      .filter((pkg) => declared[pkg.name] !== "workspace:*")
      .map((pkg) => pkg.name),
  ).toEqual([]);
});
