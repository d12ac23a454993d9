// Runs `redocly lint` (the CLI's own bin, as a subprocess) on the fixtures: each rule's
// bad fixture (rules/<name>.bad.yaml, next to the rule) breaks exactly that rule and must
// fail with its id and no other problem; the good fixture (fixtures/good) must pass the
// fixture config (the `spec` ruleset plus every house rule) and the real config
// (../redocly.yaml).
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import houseRulesPlugin, { PLUGIN_ID } from "./index.js";

const here = dirname(fileURLToPath(import.meta.url));
const fixtures = join(here, "fixtures");
const ruleDir = join(here, "rules");
const fixtureConfig = join(fixtures, "redocly.yaml");
const realConfig = join(here, "..", "redocly.yaml");
const cliBin = join(dirname(createRequire(import.meta.url).resolve("@redocly/cli/package.json")), "bin", "cli.js");

interface Problem {
  ruleId: string;
  severity: "error" | "warn";
  message: string;
  location: { source: { ref: string }; pointer?: string }[];
}

function lint(document: string, config: string): { status: number | null; problems: Problem[]; output: string } {
  const result = spawnSync(process.execPath, [cliBin, "lint", document, "--config", config, "--format", "json"], {
    cwd: here,
    encoding: "utf8",
    env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true", NO_COLOR: "1" },
    timeout: 60_000,
  });
  if (result.error) throw result.error;
  const output = `${result.stdout}\n${result.stderr}`;
  let problems: Problem[];
  try {
    problems = (JSON.parse(result.stdout) as { problems: Problem[] }).problems;
  } catch {
    throw new Error(`redocly lint printed no JSON report (exit ${result.status}):\n${output}`);
  }
  return { status: result.status, problems, output };
}

const ruleNames = Object.keys(houseRulesPlugin().rules.oas3);
const ruleFiles = readdirSync(ruleDir);
const badFixtures = ruleFiles.filter((name) => name.endsWith(".bad.yaml"));

describe("house lint rules", () => {
  it("has one bad fixture per rule, and one rule per bad fixture", () => {
    expect(badFixtures.map((name) => name.replace(/\.bad\.yaml$/, "")).sort()).toEqual([...ruleNames].sort());
  });

  it("keeps each rule in its own file, rules/<name>.js, which the plugin loads", () => {
    expect(
      ruleFiles
        .filter((name) => name.endsWith(".js"))
        .map((name) => name.replace(/\.js$/, ""))
        .sort(),
    ).toEqual([...ruleNames].sort());
  });

  it("turns every rule on in the plugin's `all` config", () => {
    expect(Object.keys(houseRulesPlugin().configs.all.rules).sort()).toEqual(ruleNames.map((name) => `${PLUGIN_ID}/${name}`).sort());
  });

  it.each(ruleNames)("%s: its bad fixture fails with that rule id and no other", (name) => {
    const ruleId = `${PLUGIN_ID}/${name}`;
    const fixture = join(ruleDir, `${name}.bad.yaml`);
    expect(existsSync(fixture), `missing fixture ${fixture}`).toBe(true);
    const { status, problems, output } = lint(fixture, fixtureConfig);
    expect(status, output).not.toBe(0);
    expect(problems.length, output).toBeGreaterThan(0);
    expect([...new Set(problems.map((p) => p.ruleId))], output).toEqual([ruleId]);
    for (const problem of problems) {
      expect(problem.severity).toBe("error");
      // Messages say what is wrong and how to fix it: at least two clauses, no placeholder.
      expect(problem.message.length).toBeGreaterThan(40);
      expect(problem.message).not.toMatch(/undefined|\[object Object\]/);
    }
  });

  it("passes the good fixture with the fixture config", () => {
    const { status, problems, output } = lint(join(fixtures, "good", "openapi.yaml"), fixtureConfig);
    expect(problems, output).toEqual([]);
    expect(status, output).toBe(0);
  });

  it("passes the good fixture with the real config (recommended-strict, built-in and house rules)", () => {
    const { status, problems, output } = lint(join(fixtures, "good", "openapi.yaml"), realConfig);
    expect(problems, output).toEqual([]);
    expect(status, output).toBe(0);
  });

  it("fails the real config on a bad fixture (the plugin is loaded there too)", () => {
    const { status, problems, output } = lint(join(ruleDir, "operation-id-camel-case.bad.yaml"), realConfig);
    expect(status, output).not.toBe(0);
    expect(
      problems.map((p) => p.ruleId),
      output,
    ).toContain(`${PLUGIN_ID}/operation-id-camel-case`);
  });
});
