import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

// ARCHITECTURE.md's "The server's floors", lowest first: a file imports its own folder and
// folders of lower floors only, never a sibling on its floor. A new folder fails here
// until it is given a floor, so the order is decided, not drifted into.
const FLOORS: readonly (readonly string[])[] = [
  // The ground floor: the one logger type, and where a meter will go.
  ["observe"],
  ["storage"],
  ["http"],
  // Reserved before they exist (ARCHITECTURE.md): jobs/, the scheduler of periodic work;
  // telemetry/, a browser's events, their store and their export.
  ["cdp", "egress", "jobs", "nodes", "sandbox", "secrets"],
  ["auth-connections", "credentials", "extensions", "fixtures", "limits", "organization", "profiles", "projects", "telemetry"],
  ["auth"],
  ["browsers"],
  ["managed-auth", "webmcp"],
  ["live-view"],
  ["routes"],
  ["app"],
];
/** The package's public entry, the one file of src/ outside a folder: it may import anything. */
const ENTRY = "index.ts";

const SRC = fileURLToPath(new URL("../src/", import.meta.url));

/** Files by path relative to src/, each with the src files it imports. */
type Graph = Map<string, string[]>;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith(".ts") ? [relative(SRC, path).split(sep).join("/")] : [];
  });
}

// Static imports and re-exports (`from "..."`, type-only ones too), side-effect imports
// and dynamic `import("...")`; only relative specifiers name files of src/.
const IMPORT = /(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s*)["'](\.{1,2}\/[^"']+)["']/gm;

function importGraph(): Graph {
  const graph: Graph = new Map();
  for (const file of sourceFiles(SRC)) {
    const text = readFileSync(join(SRC, file), "utf8");
    const targets = [...text.matchAll(IMPORT)].map((match) =>
      relative(SRC, resolve(SRC, dirname(file), match[1]!.replace(/\.js$/, ".ts")))
        .split(sep)
        .join("/"),
    );
    graph.set(file, targets);
  }
  return graph;
}

function floorOf(file: string): number | undefined {
  if (file === ENTRY) return FLOORS.length;
  const folder = file.includes("/") ? file.slice(0, file.indexOf("/")) : undefined;
  const floor = FLOORS.findIndex((folders) => folder !== undefined && folders.includes(folder));
  return floor === -1 ? undefined : floor;
}

/** Each import that names no src file, or goes sideways or up the floors. */
function wrongImports(graph: Graph): string[] {
  const wrong: string[] = [];
  for (const [file, targets] of graph) {
    const floor = floorOf(file);
    if (floor === undefined) wrong.push(`${file} is in no floor of FLOORS`);
    for (const target of targets) {
      if (!graph.has(target)) wrong.push(`${file} imports ${target}, not a file of src/`);
      else if (floor !== undefined && file.split("/")[0] !== target.split("/")[0] && !(floorOf(target)! < floor)) wrong.push(`${file} imports ${target}`);
    }
  }
  return wrong;
}

/** The files of each import cycle (strongly connected components of more than one file, or a file importing itself). */
function importCycles(graph: Graph): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (file: string): void => {
    index.set(file, index.size);
    low.set(file, index.get(file)!);
    stack.push(file);
    onStack.add(file);
    for (const target of graph.get(file) ?? []) {
      if (!graph.has(target)) continue;
      if (!index.has(target)) {
        visit(target);
        low.set(file, Math.min(low.get(file)!, low.get(target)!));
      } else if (onStack.has(target)) {
        low.set(file, Math.min(low.get(file)!, index.get(target)!));
      }
    }
    if (low.get(file) !== index.get(file)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== file);
    if (component.length > 1 || graph.get(file)!.includes(file)) cycles.push(component.sort());
  };
  for (const file of graph.keys()) if (!index.has(file)) visit(file);
  return cycles;
}

describe("the server's layering", () => {
  const graph = importGraph();

  it("reads the imports of every src file", () => {
    expect(graph.size).toBeGreaterThan(50);
    expect(graph.get("app/server.ts")).toContain("routes/register-api.ts");
  });

  it("imports only down the floors", () => {
    expect(wrongImports(graph)).toEqual([]);
  });

  it("has no file import cycle", () => {
    expect(importCycles(graph)).toEqual([]);
  });

  // The checks above pass on an empty answer; these keep them able to fail.
  it("would catch an import up the floors, sideways, or from an unplaced folder", () => {
    const bad: Graph = new Map([
      ["storage/database.ts", ["app/stores.ts"]],
      ["projects/project-store.ts", ["limits/usage-store.ts"]],
      ["limits/usage-store.ts", []],
      ["app/stores.ts", []],
      ["misc/helper.ts", []],
    ]);
    expect(wrongImports(bad)).toEqual([
      "storage/database.ts imports app/stores.ts",
      "projects/project-store.ts imports limits/usage-store.ts",
      "misc/helper.ts is in no floor of FLOORS",
    ]);
  });

  it("would catch a cycle", () => {
    const bad: Graph = new Map([
      ["browsers/a.ts", ["browsers/b.ts"]],
      ["browsers/b.ts", ["browsers/a.ts"]],
    ]);
    expect(importCycles(bad)).toEqual([["browsers/a.ts", "browsers/b.ts"]]);
  });
});
