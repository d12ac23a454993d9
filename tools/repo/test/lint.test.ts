// `pnpm lint` (which `npm test` runs first) checks the whole repository: Biome once from
// the root, then turbo's `lint` task, in which every workspace package that has a
// tsconfig.json type-checks it. A new package fails here until its lint script does.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../../..", import.meta.url));

type Manifest = { name?: string; scripts?: Record<string, string> };
const manifestOf = (dir: string): Manifest => JSON.parse(readFileSync(join(root, dir, "package.json"), "utf8"));
const steps = (script: string | undefined): string[] => (script ?? "").split("&&").map((step) => step.trim());

/** The workspace's package folders: pnpm-workspace.yaml's `packages` list, `dir/*` expanded. */
function workspaceDirs(): string[] {
  const lines = readFileSync(join(root, "pnpm-workspace.yaml"), "utf8").split("\n");
  const globs: string[] = [];
  for (const line of lines.slice(lines.indexOf("packages:") + 1)) {
    const entry = /^\s+-\s+["']?([^"'\s]+)["']?\s*$/.exec(line);
    if (!entry) break;
    globs.push(entry[1]!);
  }
  return globs.flatMap((glob) => {
    if (!glob.endsWith("/*")) return [glob];
    const parent = glob.slice(0, -2);
    return readdirSync(join(root, parent), { withFileTypes: true })
      .filter((entry) => entry.isDirectory() && existsSync(join(root, parent, entry.name, "package.json")))
      .map((entry) => `${parent}/${entry.name}`);
  });
}

describe("pnpm lint", () => {
  it("runs Biome's check over the repository once, then turbo's lint task", () => {
    const lint = steps(manifestOf(".").scripts?.lint);
    expect(lint.some((step) => step.startsWith("biome check"))).toBe(true);
    expect(lint).toContain("turbo run lint");
  });

  it("has `pnpm format` write Biome's formatting and safe fixes", () => {
    expect(manifestOf(".").scripts?.format).toBe("biome check --write");
  });

  it("type-checks every workspace package that has a tsconfig.json", () => {
    const dirs = workspaceDirs();
    expect(dirs).toContain("packages/server");
    const unchecked = dirs
      .filter((dir) => existsSync(join(root, dir, "tsconfig.json")))
      .filter((dir) => !steps(manifestOf(dir).scripts?.lint).some((step) => /^tsc -p tsconfig\.json\b/.test(step)))
      .map((dir) => `${dir} (${manifestOf(dir).name}): its "lint" script must run \`tsc -p tsconfig.json --noEmit\``);
    expect(unchecked).toEqual([]);
  });
});
