#!/usr/bin/env node
// Builds the spec package (`pnpm build` in spec/, or through turbo from the root), one
// named step per module in build/:
//
//   1. lint    build/lint.mjs: redocly lint openapi.yaml (redocly.yaml: recommended-strict,
//              built-in rules, the house rules of lint/); any problem, error or warning,
//              fails the build. `--lint-only` stops here (`pnpm lint`).
//   2. bundle  build/bundle.mjs: redocly bundle -> dist/openapi.json and dist/openapi.yaml
//   3. docs    build/docs.mjs: redocly build-docs dist/openapi.json with docs/template.hbs
//              -> dist/docs/index.html, next to a copy of the Redoc bundle that ships with
//              the CLI (dist/docs/redoc.standalone.js): the page loads nothing from the
//              network, and the output is byte-identical from run to run.
//   4. repro   build/reproducible.mjs, with `--check-reproducible` only: bundle and docs
//              twice more into temporary folders; every output file must be byte-identical.
//
// Options:
//   --lint-only            lint, then stop
//   --root <file>          another root document (default openapi.yaml), e.g. the
//                          complete fixture lint/fixtures/good/openapi.yaml
//   --out <dir>            another output folder (default dist)
//   --check-reproducible   step 4
//
// Only Node and the installed @redocly/cli are used; the CLI runs with telemetry and
// update checks off and needs no network.
import { existsSync, mkdirSync, rmSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { parseArgs } from "node:util";
import { bundle } from "./build/bundle.mjs";
import { docs } from "./build/docs.mjs";
import { lint } from "./build/lint.mjs";
import { fail, seconds, step } from "./build/output.mjs";
import { specDir } from "./build/redocly.mjs";
import { checkReproducible } from "./build/reproducible.mjs";

const USAGE = "usage: node scripts/build.mjs [--lint-only] [--root <openapi.yaml>] [--out <dir>] [--check-reproducible]";

function readOptions(argv) {
  try {
    const { values } = parseArgs({
      args: argv,
      strict: true,
      options: {
        "lint-only": { type: "boolean", default: false },
        "check-reproducible": { type: "boolean", default: false },
        root: { type: "string", default: "openapi.yaml" },
        out: { type: "string", default: "dist" },
        help: { type: "boolean", short: "h", default: false },
      },
    });
    return values;
  } catch (error) {
    return fail(`${error.message}\n${USAGE}`);
  }
}

/** Runs one step, printing its summary line with how long it took; returns what the step returns. */
function run(name, action) {
  const since = performance.now();
  const result = action();
  step(name, typeof result === "string" ? result : result.summary, since);
  return result;
}

const started = performance.now();
const options = readOptions(process.argv.slice(2));
if (options.help) {
  console.log(USAGE);
  process.exit(0);
}
const root = resolve(specDir, options.root);
const outDir = resolve(specDir, options.out);
if (!existsSync(root)) fail(`the root document ${root} does not exist.`);

console.log(
  `spec build: ${relative(process.cwd(), root) || root}${options["lint-only"] ? " (lint only)" : ` -> ${relative(process.cwd(), outDir) || outDir}`}`,
);
run("lint", () => lint(root));
if (!options["lint-only"]) {
  // Start from an empty output folder, so nothing stale is published or cached.
  for (const name of ["openapi.json", "openapi.yaml", "docs"]) rmSync(join(outDir, name), { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  const { bundledJson } = run("bundle", () => bundle(root, outDir));
  run("docs", () => docs(bundledJson, outDir));
  if (options["check-reproducible"]) run("repro", () => checkReproducible(root, outDir));
}
console.log(`spec build: done in ${seconds(started)}`);
