import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const packageDir = fileURLToPath(new URL("..", import.meta.url));
const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");

describe("README", () => {
  it("shows the output its usage example prints", () => {
    const [, example] = /## Usage\n\n```js\n([\s\S]*?)```/.exec(readme) ?? [];
    const [, output] = /Output:\n\n```text\n([\s\S]*?)```/.exec(readme) ?? [];
    expect(example).toBeDefined();
    // The example imports the package by name, which resolves to the built package from its own folder.
    const run = spawnSync(process.execPath, ["--input-type=module", "-e", example!], { cwd: packageDir, encoding: "utf8" });
    expect(run.stderr).toBe("");
    expect(run.stdout).toBe(output);
  });
});
