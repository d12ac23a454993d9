// The repository's root holds what README.md's "Layout" says it holds, and nothing else:
// a log, a pid file or a scratch script committed by accident fails here.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../../..", import.meta.url));

/** The root's entries README.md describes: the folders of its Layout block and the files named after it. */
function described(): Set<string> {
  const readme = readFileSync(join(root, "README.md"), "utf8");
  const section = readme.slice(readme.indexOf("## Layout"), readme.indexOf("\n## ", readme.indexOf("## Layout") + 1));
  const block = section.slice(section.indexOf("```") + 3, section.indexOf("```", section.indexOf("```") + 3));
  const folders = block
    .split("\n")
    .map((line) => /^(\S+)\/\s/.exec(line)?.[1])
    .filter((name): name is string => name !== undefined);
  const prose = section.slice(section.indexOf("```", section.indexOf("```") + 3) + 3);
  const files = [...prose.matchAll(/`([^`/\s]+)`/g)].map((match) => match[1] as string);
  return new Set([...folders, ...files]);
}

/** The root's entries git tracks (a folder once, by its name). */
function tracked(): string[] {
  const files = execFileSync("git", ["ls-files", "-z"], { cwd: root, encoding: "utf8" }).split("\0").filter(Boolean);
  return [...new Set(files.map((file) => file.split("/")[0] as string))].sort();
}

describe("the repository's root", () => {
  it("holds only what README.md's Layout describes", () => {
    const known = described();
    expect(known).toContain("packages");
    expect(known).toContain("package.json");
    expect(tracked().filter((entry) => !known.has(entry))).toEqual([]);
  });

  it("describes nothing that is not there", () => {
    const present = new Set(tracked());
    expect([...described()].filter((entry) => !present.has(entry))).toEqual([]);
  });
});
