// Global setup: packs every public package once, into a temporary folder outside the
// workspace, for the tests that look at what would be published.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { type PackedPackage, packPackage } from "../src/pack.mjs";
import { publicPackages } from "../src/workspace.mjs";

export interface PackedWorkspacePackage extends PackedPackage {
  dir: string;
  relativeDir: string;
}

declare module "vitest" {
  export interface ProvidedContext {
    packed: PackedWorkspacePackage[];
  }
}

export default function setup(project: TestProject) {
  const outDir = mkdtempSync(join(tmpdir(), "browser-service-packs-"));
  const packed = publicPackages().map((pkg) => ({ ...packPackage(pkg.dir, outDir), dir: pkg.dir, relativeDir: pkg.relativeDir }));
  project.provide("packed", packed);
  return () => rmSync(outDir, { recursive: true, force: true });
}
