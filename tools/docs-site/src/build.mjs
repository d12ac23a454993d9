#!/usr/bin/env node
// Builds the docs site into dist/site (`pnpm build` runs it through turbo after every
// package it documents, and caches it):
//
//   index.html         links to everything below, one entry per public package
//   api/               the API reference (Redoc) that @browser-service/openapi builds,
//                      with the bundled openapi.json and openapi.yaml beside it
//   packages/<name>/   TypeDoc of each public package with a TypeScript API
//   guides/<slug>.html the guides (guides/*.md), whose code test/guides.test.ts runs
//   guides/images/     the guides' pictures (guides/images/, taken by
//                      src/live-view-screenshots.mjs), which they show as images/<name>
//
// Nothing is loaded from the network, then or when the site is viewed. A public package
// that the site cannot document (no declarations to run TypeDoc on) is listed without a
// link, and the docs-site test fails on it: the build itself only fails when a tool does.
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { hasTypeScriptApi, publicPackages, repoRoot } from "@browser-service/release/workspace";
import { guidePage, guidesDir, loadGuides } from "./guides.mjs";
import { landingPage } from "./landing-page.mjs";
import { buildTypeDoc } from "./typedoc.mjs";

const siteDir = fileURLToPath(new URL("../dist/site", import.meta.url));
/** The package whose build writes the API reference to dist/docs. */
const apiPackage = "@browser-service/openapi";

/**
 * @param {string} message
 * @returns {never}
 */
function fail(message) {
  console.error(`\ndocs-site build FAILED: ${message}`);
  process.exit(1);
}

/**
 * Runs `task` over `items`, at most `limit` at a time.
 * @template T
 * @param {T[]} items
 * @param {number} limit
 * @param {(item: T) => Promise<void>} task
 */
async function inParallel(items, limit, task) {
  const queue = [...items];
  const worker = async () => {
    for (let item = queue.shift(); item !== undefined; item = queue.shift()) await task(item);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/** `@browser-service/client` -> `client`: the folder of its TypeDoc under dist/site/packages/. */
const slug = (/** @type {string} */ name) => name.replace(/^@[^/]+\//, "");

const started = performance.now();
const packages = publicPackages();
const api = packages.find((pkg) => pkg.name === apiPackage);
if (!api) fail(`${apiPackage}, which builds the API reference, is not a public package of the workspace.`);

rmSync(siteDir, { recursive: true, force: true });

const specDist = join(api.dir, "dist");
for (const file of ["docs/index.html", "openapi.json", "openapi.yaml"]) {
  if (!existsSync(join(specDist, file))) fail(`${join(specDist, file)} is missing: build ${apiPackage} first (pnpm build).`);
}
cpSync(join(specDist, "docs"), join(siteDir, "api"), { recursive: true });
for (const file of ["openapi.json", "openapi.yaml"]) cpSync(join(specDist, file), join(siteDir, "api", file));
console.log(`  api       ${relative(repoRoot, specDist)}/docs -> dist/site/api`);

const documented = packages.filter(hasTypeScriptApi);
await inParallel(documented, availableParallelism(), async (pkg) => {
  const out = join(siteDir, "packages", slug(pkg.name));
  try {
    const warnings = await buildTypeDoc(pkg, out);
    console.log(
      `  typedoc   ${pkg.name} -> dist/site/packages/${slug(pkg.name)}${warnings.length > 0 ? `\n${warnings.map((line) => `            ${line}`).join("\n")}` : ""}`,
    );
  } catch (error) {
    fail(`TypeDoc failed for ${pkg.name} (is it built?):\n${error instanceof Error ? error.message : error}`);
  }
});

const guides = loadGuides();
mkdirSync(join(siteDir, "guides"), { recursive: true });
for (const guide of guides) writeFileSync(join(siteDir, "guides", `${guide.slug}.html`), guidePage(guide, guides));
if (existsSync(join(guidesDir, "images"))) cpSync(join(guidesDir, "images"), join(siteDir, "guides", "images"), { recursive: true });
console.log(`  guides    ${guides.length} guides -> dist/site/guides`);

const root = JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8"));
const html = landingPage({
  title: "browser-service docs",
  description: root.description,
  apiReference: "api/index.html",
  documents: [
    { href: "api/openapi.json", label: "openapi.json" },
    { href: "api/openapi.yaml", label: "openapi.yaml" },
  ],
  guides: guides.map((guide) => ({ href: `guides/${guide.slug}.html`, title: guide.title })),
  packages: packages.map((pkg) => ({
    name: pkg.name,
    version: pkg.manifest.version,
    description: pkg.manifest.description ?? "",
    ...(pkg === api
      ? { href: "api/index.html", docsLabel: "API reference" }
      : hasTypeScriptApi(pkg)
        ? { href: `packages/${slug(pkg.name)}/index.html`, docsLabel: "TypeDoc" }
        : { href: undefined, docsLabel: "none: no declarations to document" }),
  })),
});
writeFileSync(join(siteDir, "index.html"), html);
console.log(`docs-site: dist/site/index.html, ${documented.length} packages with TypeDoc, in ${((performance.now() - started) / 1000).toFixed(1)}s`);
