// Step 3, docs: `redocly build-docs` of the bundled document with docs/template.hbs ->
// <out>/docs/index.html, next to a copy of the Redoc bundle that ships with the CLI
// (redoc.standalone.js): the page loads nothing from the network, and the output is
// byte-identical from run to run.
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { basename, join, relative } from "node:path";
import { checkNoRemoteAssets } from "./no-remote-assets.mjs";
import { fail, size } from "./output.mjs";
import { configPath, redocBundle, redocly, specDir } from "./redocly.mjs";

const templatePath = join(specDir, "docs", "template.hbs");

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

/** Writes the Redoc bundle, its CDN logos pointed at local copies, into `docsDir`; returns its text. */
function copyRedoc(docsDir) {
  let redoc = readFileSync(redocBundle, "utf8");
  for (const [from, to] of LOGO_PATCHES) {
    const n = countOf(redoc, from);
    if (n !== 1) fail(`expected the Redoc bundle to name ${from} once, found ${n}; @redocly/cli changed, update LOGO_PATCHES in scripts/build/docs.mjs.`);
    redoc = redoc.replace(from, to);
    writeFileSync(join(docsDir, basename(to)), readFileSync(join(specDir, "docs", basename(to))));
  }
  // Icon-set base URLs are only used by pages that configure icons (this one does not;
  // the docs-site test fails on any request that leaves 127.0.0.1, and the template's CSP
  // blocks them). Any other CDN URL is new in this CLI version: look at it first.
  const leftover = (redoc.match(/https?:\/\/cdn\.[a-z.]+\/[^\s"'`)]*/g) ?? []).filter((url) => !url.startsWith("https://cdn.redocly.com/icons/"));
  if (leftover.length > 0) fail(`the Redoc bundle names a CDN URL that scripts/build/docs.mjs does not know: ${[...new Set(leftover)].join(", ")}`);
  writeFileSync(join(docsDir, "redoc.standalone.js"), redoc);
  return redoc;
}

/** Builds `outDir/docs` from the bundled JSON document; returns the step's summary. */
export function docs(bundledJson, outDir) {
  const docsDir = join(outDir, "docs");
  mkdirSync(docsDir, { recursive: true });
  if (!existsSync(redocBundle)) fail(`the Redoc bundle is not where @redocly/cli ships it: ${redocBundle}`);
  if (!existsSync(templatePath)) fail(`the docs template is missing: ${templatePath}`);
  const redoc = copyRedoc(docsDir);
  const integrity = `sha384-${createHash("sha384").update(redoc).digest("base64")}`;

  // The page, rendered by the CLI with our template.
  const html = join(docsDir, "index.html");
  const run = redocly([
    "build-docs",
    bundledJson,
    "--config",
    configPath,
    "--output",
    html,
    "--template",
    templatePath,
    `--templateOptions.redocIntegrity=${integrity}`,
    "--lint-config",
    "error",
  ]);
  if (run.status !== 0 || !existsSync(html)) fail(`redocly build-docs failed (exit ${run.status}):`, run.output);

  // build-docs puts the CDN URL of the same bundle into the page twice (a modulepreload
  // link in redocHead and the `import { hydrate }` in redocHTML); the template already
  // preloads the local copy, so the link goes and the import points next to the page.
  let page = readFileSync(html, "utf8");
  const cdnLinks = page.match(/<link rel="modulepreload" href="https:\/\/cdn\.redocly\.com\/[^"]+"[^>]*\/>/g) ?? [];
  const cdnImports = page.match(/import \{ hydrate \} from "https:\/\/cdn\.redocly\.com\/[^"]+";/g) ?? [];
  if (cdnLinks.length !== 1 || cdnImports.length !== 1) {
    fail(
      `build-docs output changed shape: expected one CDN modulepreload link and one CDN import, found ${cdnLinks.length} and ${cdnImports.length}; update scripts/build/docs.mjs.`,
    );
  }
  page = page.replace(cdnLinks[0], "").replace(cdnImports[0], 'import { hydrate } from "./redoc.standalone.js";');
  if (CDN_BUNDLE.test(page)) fail("the page still names the Redoc CDN after rewriting it.");
  writeFileSync(html, page);
  checkNoRemoteAssets(page, html);
  if (!page.includes(`integrity="${integrity}"`)) fail("the template did not put the Redoc bundle's integrity into the page (templateOptions.redocIntegrity).");

  return `${relative(specDir, html)} (${size(statSync(html).size)}) + redoc.standalone.js (${size(Buffer.byteLength(redoc))}), no remote assets`;
}
