import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { describe, expect, it } from "vitest";

const packageDir = fileURLToPath(new URL("..", import.meta.url));
const distDir = join(packageDir, "dist");
const distIndex = join(distDir, "index.js");

const jsFiles = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? jsFiles(join(dir, entry.name)) : entry.name.endsWith(".js") ? [join(dir, entry.name)] : [],
  );
const distCode = jsFiles(distDir).map((file) => [file.slice(distDir.length + 1), readFileSync(file, "utf8")] as const);

/** Bundles a consumer module for the browser, as an app would. */
async function bundle(contents: string): Promise<string> {
  const result = await build({
    stdin: { contents, resolveDir: packageDir, loader: "js" },
    bundle: true,
    platform: "browser",
    format: "esm",
    write: false,
    logLevel: "silent",
  });
  return result.outputFiles[0]!.text;
}

describe("the built package", () => {
  it("is plain ES modules: no require, no code compiled at run time", () => {
    expect(distCode.length).toBeGreaterThan(0);
    const offending = distCode.filter(([, code]) => /\brequire\s*\(|\bnew Function\b|\beval\s*\(/.test(code)).map(([file]) => file);
    expect(offending).toEqual([]);
  });

  it("imports nothing from outside itself, so neither Ajv nor anything else that compiles", () => {
    const specifiers = distCode.flatMap(([, code]) => [...code.matchAll(/(?:\bfrom|\bimport)\s*\(?\s*["']([^"']+)["']/g)].map((m) => m[1]!));
    expect(specifiers.length).toBeGreaterThan(0);
    expect(specifiers.filter((s) => !s.startsWith("./") && !s.startsWith("../"))).toEqual([]);
  });

  it("works from its built files", async () => {
    const { validateRegion } = await import(distIndex);
    expect(validateRegion("eu-west")).toEqual({ ok: true, value: "eu-west" });
  });
});

describe("a browser bundle of a consumer", () => {
  it("builds, without require, and runs", async () => {
    const code = await bundle(`export { validateRegion } from ${JSON.stringify(distIndex)};`);
    expect(code).not.toMatch(/\brequire\s*\(/);
    const { validateRegion } = await import(`data:text/javascript,${encodeURIComponent(code)}`);
    expect(validateRegion("mars")).toEqual({
      ok: false,
      errors: [{ pointer: "", rule: "enum", message: 'The value must be one of "us-east", "eu-west" or "ap-southeast".' }],
    });
  });

  it("drops the validators the consumer does not use", async () => {
    const one = await bundle(`export { validateRegion } from ${JSON.stringify(distIndex)};`);
    const all = await bundle(`export * from ${JSON.stringify(distIndex)};`);
    // An enum value that only the TelemetryCdpMethod validator carries.
    expect(all).toContain("Input.dispatchMouseEvent");
    expect(one).not.toContain("Input.dispatchMouseEvent");
    expect(one.length).toBeLessThan(all.length / 4);
  });
});
