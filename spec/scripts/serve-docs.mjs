#!/usr/bin/env node
// Serves the built docs page (dist/docs) and the bundled document (dist/openapi.json,
// dist/openapi.yaml) on 127.0.0.1. Port from PORT, default 4000 (0 picks a free one).
//
//   node scripts/serve-docs.mjs          (pnpm --filter @browser-service/openapi serve-docs)
//
// Exports startDocsServer for the docs page test.
import { existsSync } from "node:fs";
import { extname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { fileUnder, serveFromCommandLine, startStaticServer } from "@browser-service/static-server";

export const defaultDistDir = fileURLToPath(new URL("../dist", import.meta.url));

/** A URL path's file: the two bundled documents, a file of dist/docs, or the page itself. */
function docsFile(distDir, urlPath) {
  if (urlPath === "/openapi.json" || urlPath === "/openapi.yaml") return join(distDir, urlPath.slice(1));
  const docsDir = join(distDir, "docs");
  // Redoc routes sections and operations by path (/projects/...): serve the page for any
  // extension-less path so that a reload or a shared link works.
  return fileUnder(docsDir, urlPath) ?? (extname(urlPath) === "" ? join(docsDir, "index.html") : undefined);
}

/**
 * Starts the docs server on 127.0.0.1.
 * @param {{ port?: number, distDir?: string }} [options]
 */
export function startDocsServer({ port = 4000, distDir = defaultDistDir } = {}) {
  return startStaticServer({ port, resolveFile: (urlPath) => docsFile(distDir, urlPath) });
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  if (!existsSync(join(defaultDistDir, "docs", "index.html"))) {
    console.error("No docs page in dist/docs: run `pnpm build` (or `node scripts/build.mjs` in spec/) first.");
    process.exit(1);
  }
  await serveFromCommandLine({
    defaultPort: 4000,
    resolveFile: (urlPath) => docsFile(defaultDistDir, urlPath),
    banner: (url) => `Docs: ${url}  (also ${url}openapi.json and ${url}openapi.yaml; Ctrl+C stops)`,
  });
}
