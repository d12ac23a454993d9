#!/usr/bin/env node
// Builds the spec package (`pnpm build` in spec/, or through turbo from the root):
//
//   1. lint    redocly lint openapi.yaml (redocly.yaml: recommended-strict, built-in
//              rules, the house rules of lint/house-rules.js); any problem, error or
//              warning, fails the build. `--lint-only` stops here (`pnpm lint`).
//   2. bundle  redocly bundle -> dist/openapi.json and dist/openapi.yaml
//   3. docs    redocly build-docs dist/openapi.json with docs/template.hbs ->
//              dist/docs/index.html, next to a copy of the Redoc bundle that ships with
//              the CLI (dist/docs/redoc.standalone.js): the page loads nothing from
//              the network, and the output is byte-identical from run to run.
//
// Options:
//   --lint-only            lint, then stop
//   --root <file>          another root document (default openapi.yaml), e.g. the
//                          complete fixture lint/fixtures/good/openapi.yaml
//   --out <dir>            another output folder (default dist)
//   --check-reproducible   build bundle and docs twice more into temporary folders and
//                          fail unless every output file is byte-identical
//
// Only Node and the installed @redocly/cli are used; the CLI runs with telemetry and
// update checks off and needs no network.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { basename, dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const specDir = fileURLToPath(new URL("..", import.meta.url));
const started = performance.now();

// ---------------------------------------------------------------- arguments

function parseArgs(argv) {
  const options = { lintOnly: false, root: "openapi.yaml", out: "dist", checkReproducible: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = () => {
      const next = argv[++i];
      if (next === undefined || next.startsWith("--")) fail(`${arg} needs a value.`);
      return next;
    };
    if (arg === "--lint-only") options.lintOnly = true;
    else if (arg === "--check-reproducible") options.checkReproducible = true;
    else if (arg === "--root") options.root = value();
    else if (arg === "--out") options.out = value();
    else if (arg === "--help" || arg === "-h") {
      console.log("usage: node scripts/build.mjs [--lint-only] [--root <openapi.yaml>] [--out <dir>] [--check-reproducible]");
      process.exit(0);
    } else fail(`Unknown option ${arg}. usage: node scripts/build.mjs [--lint-only] [--root <file>] [--out <dir>] [--check-reproducible]`);
  }
  return options;
}

// ---------------------------------------------------------------- output helpers

function fail(message, details) {
  console.error(`\nspec build FAILED: ${message}`);
  if (details) console.error(details.replace(/\s+$/, ""));
  process.exit(1);
}

function seconds(since) {
  return `${((performance.now() - since) / 1000).toFixed(1)}s`;
}

function size(bytes) {
  return bytes >= 1024 * 1024 ? `${(bytes / 1024 / 1024).toFixed(1)} MiB` : `${Math.ceil(bytes / 1024)} KiB`;
}

function step(name, detail, since) {
  console.log(`  ${name.padEnd(7)} ${detail}${since === undefined ? "" : `  (${seconds(since)})`}`);
}

/** Drops the CLI's banners (the boxed Node 20 deprecation notice) and blank runs. */
function cleanOutput(text) {
  return text
    .split("\n")
    .filter((line) => !/[║╔╚═]/.test(line))
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
}

// ---------------------------------------------------------------- the CLI

const require = createRequire(join(specDir, "package.json"));
let cliDir;
try {
  cliDir = dirname(require.resolve("@redocly/cli/package.json"));
} catch {
  fail("@redocly/cli is not installed in spec/node_modules.", "Run `corepack pnpm install` at the repository root.");
}
const cliBin = join(cliDir, "bin", "cli.js");
const redocBundle = join(cliDir, "lib", "chunks", "redoc.standalone.js");
const configPath = join(specDir, "redocly.yaml");
const templatePath = join(specDir, "docs", "template.hbs");

const cliEnv = {
  ...process.env,
  REDOCLY_TELEMETRY: "off",
  REDOCLY_SUPPRESS_UPDATE_NOTICE: "true",
  REDOCLY_SUPPRESS_NOTIFICATIONS: "true",
  NO_COLOR: "1",
};
delete cliEnv.FORCE_COLOR;

function redocly(args) {
  const result = spawnSync(process.execPath, [cliBin, ...args], {
    cwd: specDir,
    env: cliEnv,
    encoding: "utf8",
    maxBuffer: 256 * 1024 * 1024,
  });
  if (result.error) fail(`could not run redocly ${args[0]}: ${result.error.message}`);
  return { status: result.status, stdout: result.stdout ?? "", stderr: result.stderr ?? "", output: cleanOutput(`${result.stdout ?? ""}\n${result.stderr ?? ""}`) };
}

// ---------------------------------------------------------------- 1. lint

function lint(root) {
  const since = performance.now();
  const run = redocly(["lint", root, "--config", configPath, "--format", "json", "--max-problems", "100000", "--lint-config", "error"]);
  let report;
  try {
    report = JSON.parse(run.stdout);
  } catch {
    fail(`redocly lint did not run (exit ${run.status}); its output:`, run.output);
  }
  const problems = report.problems ?? [];
  if (problems.length === 0 && run.status === 0) {
    step("lint", `ok, ${relative(specDir, resolve(specDir, root))} has no problems${report.totals?.ignored ? ` (${report.totals.ignored} ignored)` : ""}`, since);
    return;
  }
  const lines = [];
  const byRule = new Map();
  for (const problem of problems) {
    const where = problem.location?.[0];
    const file = where?.source?.ref ?? "?";
    const position = where?.start ? `:${where.start.line}:${where.start.col}` : "";
    lines.push(`  ${file}${position}  ${problem.severity}  ${problem.ruleId}\n      ${problem.message}${where?.pointer ? `\n      at ${where.pointer}` : ""}`);
    byRule.set(problem.ruleId, (byRule.get(problem.ruleId) ?? 0) + 1);
  }
  const counts = [...byRule].sort((a, b) => b[1] - a[1]).map(([rule, n]) => `  ${String(n).padStart(5)}  ${rule}`);
  const errors = problems.filter((p) => p.severity === "error").length;
  fail(
    `lint found ${errors} error(s) and ${problems.length - errors} warning(s) in ${relative(specDir, resolve(specDir, root))}; every problem fails the build.`,
    `${lines.join("\n")}\n\nBy rule:\n${counts.join("\n")}\n\n` +
      "Fix each problem at the file and line shown (the message says how). The house rules are in lint/house-rules.js, the\n" +
      "conventions in CONVENTIONS.md. `no-unresolved-refs` means a $ref points at a file that does not exist (yet).\n" +
      (problems.length === 0 ? `\nredocly exited with ${run.status}:\n${run.output}\n` : ""),
  );
}

// ---------------------------------------------------------------- 2. bundle

function bundle(root, outDir) {
  const since = performance.now();
  const outputs = [];
  for (const ext of ["json", "yaml"]) {
    const output = join(outDir, `openapi.${ext}`);
    const run = redocly([
      "bundle", root, "--config", configPath, "--output", output, "--ext", ext,
      "--lint-config", "error", "--component-renaming-conflicts-severity", "error",
    ]);
    if (run.status !== 0 || !existsSync(output)) fail(`redocly bundle to ${relative(specDir, output)} failed (exit ${run.status}):`, run.output);
    if (/Renamed \S+ to /.test(run.output)) fail(`redocly bundle renamed a component (two schemas share a name); give them distinct names:`, run.output);
    outputs.push(output);
  }
  const bundled = JSON.parse(readFileSync(outputs[0], "utf8"));
  const external = [];
  (function findRefs(node, path) {
    if (Array.isArray(node)) node.forEach((item, i) => findRefs(item, `${path}/${i}`));
    else if (node && typeof node === "object") {
      for (const [key, value] of Object.entries(node)) {
        if (key === "$ref" && typeof value === "string" && !value.startsWith("#")) external.push(`${path}: ${value}`);
        else findRefs(value, `${path}/${key.replace(/~/g, "~0").replace(/\//g, "~1")}`);
      }
    }
  })(bundled, "#");
  if (external.length > 0) fail("the bundle still has external $refs:", external.join("\n"));
  const operations = Object.values(bundled.paths ?? {}).flatMap((item) =>
    Object.keys(item ?? {}).filter((k) => ["get", "put", "post", "delete", "options", "head", "patch", "trace", "query"].includes(k)),
  ).length;
  step("bundle", `${outputs.map((o) => `${relative(specDir, o)} (${size(statSync(o).size)})`).join(", ")}; ${operations} operations`, since);
  return join(outDir, "openapi.json");
}

// ---------------------------------------------------------------- 3. docs

// The Redoc bundle shows "API docs by Redocly" with a logo from this CDN; the copy next
// to the page points at local files instead (spec/docs/redocly-logo-*.svg).
const LOGO_PATCHES = [
  ["https://cdn.redoc.ly/redoc/logo-mini-full.svg", "./redocly-logo-mini-full.svg"],
  ["https://cdn.redoc.ly/redoc/logo-mini.svg", "./redocly-logo-mini.svg"],
];
const CDN_BUNDLE = /https:\/\/cdn\.redocly\.com\/redoc\/v[^"'\s]+\/bundles\/redoc\.standalone\.js/;

function countOf(text, needle) {
  return text.split(needle).length - 1;
}

function docs(bundledJson, outDir) {
  const since = performance.now();
  const docsDir = join(outDir, "docs");
  mkdirSync(docsDir, { recursive: true });
  if (!existsSync(redocBundle)) fail(`the Redoc bundle is not where @redocly/cli ships it: ${redocBundle}`);
  if (!existsSync(templatePath)) fail(`the docs template is missing: ${templatePath}`);

  // The Redoc bundle, with its two CDN logo URLs pointed at local files.
  let redoc = readFileSync(redocBundle, "utf8");
  for (const [from, to] of LOGO_PATCHES) {
    const n = countOf(redoc, from);
    if (n !== 1) fail(`expected the Redoc bundle to name ${from} once, found ${n}; @redocly/cli changed, update LOGO_PATCHES in scripts/build.mjs.`);
    redoc = redoc.replace(from, to);
    writeFileSync(join(docsDir, basename(to)), readFileSync(join(specDir, "docs", basename(to))));
  }
  // Icon-set base URLs are only used by pages that configure icons (this one does not;
  // the docs-site test fails on any request that leaves 127.0.0.1, and the template's CSP
  // blocks them). Any other CDN URL is new in this CLI version: look at it first.
  const leftover = (redoc.match(/https?:\/\/cdn\.[a-z.]+\/[^\s"'`)]*/g) ?? []).filter((url) => !url.startsWith("https://cdn.redocly.com/icons/"));
  if (leftover.length > 0) fail(`the Redoc bundle names a CDN URL that build.mjs does not know: ${[...new Set(leftover)].join(", ")}`);
  writeFileSync(join(docsDir, "redoc.standalone.js"), redoc);
  const integrity = `sha384-${createHash("sha384").update(redoc).digest("base64")}`;

  // The page, rendered by the CLI with our template.
  const html = join(docsDir, "index.html");
  const run = redocly([
    "build-docs", bundledJson, "--config", configPath, "--output", html, "--template", templatePath,
    `--templateOptions.redocIntegrity=${integrity}`, "--lint-config", "error",
  ]);
  if (run.status !== 0 || !existsSync(html)) fail(`redocly build-docs failed (exit ${run.status}):`, run.output);

  // build-docs puts the CDN URL of the same bundle into the page twice (a modulepreload
  // link in redocHead and the `import { hydrate }` in redocHTML); the template already
  // preloads the local copy, so the link goes and the import points next to the page.
  let page = readFileSync(html, "utf8");
  const cdnLinks = page.match(/<link rel="modulepreload" href="https:\/\/cdn\.redocly\.com\/[^"]+"[^>]*\/>/g) ?? [];
  const cdnImports = page.match(/import \{ hydrate \} from "https:\/\/cdn\.redocly\.com\/[^"]+";/g) ?? [];
  if (cdnLinks.length !== 1 || cdnImports.length !== 1) {
    fail(`build-docs output changed shape: expected one CDN modulepreload link and one CDN import, found ${cdnLinks.length} and ${cdnImports.length}; update scripts/build.mjs.`);
  }
  page = page.replace(cdnLinks[0], "").replace(cdnImports[0], 'import { hydrate } from "./redoc.standalone.js";');
  if (CDN_BUNDLE.test(page)) fail("the page still names the Redoc CDN after rewriting it.");
  writeFileSync(html, page);
  checkNoRemoteAssets(page, html);
  if (!page.includes(`integrity="${integrity}"`)) fail("the template did not put the Redoc bundle's integrity into the page (templateOptions.redocIntegrity).");

  step("docs", `${relative(specDir, html)} (${size(statSync(html).size)}) + redoc.standalone.js (${size(Buffer.byteLength(redoc))}), no remote assets`, since);
}

/** Fails if the page loads a script, style, font, image or module from http(s) or a protocol-relative URL. */
function checkNoRemoteAssets(page, file) {
  const remote = /^(?:[a-z][a-z0-9+.-]*:)?\/\//i;
  const found = [];
  for (const [tag] of page.matchAll(/<(script|link|img|iframe|source|embed|object|base)\b[^>]*>/gi)) {
    for (const [, attr, value] of tag.matchAll(/\s(src|href|data|srcset)\s*=\s*["']?([^"'\s>]+)/gi)) {
      // <a href> is navigation, not loading; <link> of these kinds loads something.
      if (/^<link/i.test(tag) && !/rel\s*=\s*["']?(stylesheet|modulepreload|preload|prefetch|icon|manifest|import)/i.test(tag)) continue;
      if (remote.test(value)) found.push(`${attr}=${value} in ${tag.slice(0, 120)}`);
    }
  }
  for (const [, specifier] of page.matchAll(/\bimport\s*(?:[^"'();]*?\bfrom\s*)?["']([^"']+)["']/g)) {
    if (remote.test(specifier)) found.push(`import ${specifier}`);
  }
  for (const [, specifier] of page.matchAll(/\bimport\(\s*["']([^"']+)["']\s*\)/g)) {
    if (remote.test(specifier)) found.push(`import(${specifier})`);
  }
  for (const [style] of page.matchAll(/<style\b[^>]*>[\s\S]*?<\/style>/gi)) {
    for (const [, url] of style.matchAll(/(?:@import\s+(?:url\()?|url\()\s*["']?([^"')\s]+)/gi)) {
      if (remote.test(url)) found.push(`css url(${url})`);
    }
  }
  if (found.length > 0) fail(`${relative(specDir, file)} loads remote assets; the docs must work offline:`, found.map((f) => `  ${f}`).join("\n"));
}

// ---------------------------------------------------------------- reproducibility

function listFiles(dir, prefix = "") {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? listFiles(join(dir, entry.name), `${prefix}${entry.name}/`) : [`${prefix}${entry.name}`],
  );
}

function checkReproducible(root, outDir) {
  const since = performance.now();
  const quiet = console.log;
  const runs = [];
  console.log = () => {};
  try {
    for (let i = 0; i < 2; i++) {
      const dir = mkdtempSync(join(tmpdir(), "spec-build-"));
      docs(bundle(root, dir), dir);
      runs.push(dir);
    }
  } finally {
    console.log = quiet;
  }
  const differences = [];
  const files = [...new Set([...listFiles(outDir), ...runs.flatMap((dir) => listFiles(dir))])].sort();
  for (const file of files) {
    const hashes = [outDir, ...runs].map((dir) => (existsSync(join(dir, file)) ? createHash("sha256").update(readFileSync(join(dir, file))).digest("hex") : "missing"));
    if (new Set(hashes).size > 1) differences.push(`  ${file}: ${hashes.map((h) => h.slice(0, 12)).join(" / ")}`);
  }
  for (const dir of runs) rmSync(dir, { recursive: true, force: true });
  if (differences.length > 0) fail("the build is not reproducible; these files differ between runs:", differences.join("\n"));
  step("repro", `3 builds, ${files.length} files byte-identical`, since);
}

// ---------------------------------------------------------------- main

const options = parseArgs(process.argv.slice(2));
const root = resolve(specDir, options.root);
const outDir = resolve(specDir, options.out);
if (!existsSync(root)) fail(`the root document ${root} does not exist.`);

console.log(`spec build: ${relative(process.cwd(), root) || root}${options.lintOnly ? " (lint only)" : ` -> ${relative(process.cwd(), outDir) || outDir}`}`);
lint(root);
if (!options.lintOnly) {
  // Start from an empty output folder, so nothing stale is published or cached.
  for (const name of ["openapi.json", "openapi.yaml", "docs"]) rmSync(join(outDir, name), { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  docs(bundle(root, outDir), outDir);
  if (options.checkReproducible) checkReproducible(root, outDir);
}
console.log(`spec build: done in ${seconds(started)}`);
