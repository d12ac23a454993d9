import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { generators, loadDocument } from "@browser-service/codegen";
import { describe, expect, it } from "vitest";
import * as validators from "../src/index.js";

const generatedDir = new URL("../src/generated/", import.meta.url);
const repositoryRoot = fileURLToPath(new URL("../../..", import.meta.url));

describe("generation", () => {
  it("is reproducible byte for byte, and matches what the build wrote", async () => {
    const first = await generators.validators(loadDocument());
    const second = await generators.validators(loadDocument());
    expect(second).toEqual(first);
    expect(readdirSync(generatedDir).sort()).toEqual(Object.keys(first).sort());
    for (const [name, text] of Object.entries(first)) expect(readFileSync(new URL(name, generatedDir), "utf8"), name).toBe(text);
  });

  it("writes no machine-specific path", async () => {
    const files = await generators.validators(loadDocument());
    const leaking = Object.entries(files).filter(([, text]) => text.includes(repositoryRoot.replace(/\/$/, "")));
    expect(leaking.map(([name]) => name)).toEqual([]);
  });

  it("exports validateX, isX and assertX for every component schema of the document", () => {
    const names = Object.keys(loadDocument().components.schemas);
    const missing = names
      .flatMap((name) => [`validate${name}`, `is${name}`, `assert${name}`])
      .filter((fn) => typeof (validators as Record<string, unknown>)[fn] !== "function");
    expect(names.length).toBeGreaterThan(0);
    expect(missing).toEqual([]);
  });
});
