#!/usr/bin/env node
// Serves the built docs site (dist/site) on 127.0.0.1: files that exist, and 404 for
// anything else (no fallback page, so a broken link shows as one). Port from PORT,
// default 4100 (0 picks a free one).
//
//   pnpm docs        (at the repository root, after pnpm build)
//
// Exports startSiteServer for the docs-site test.
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { fileUnder, serveFromCommandLine, startStaticServer } from "@browser-service/static-server";

export const defaultSiteDir = fileURLToPath(new URL("../dist/site", import.meta.url));

/**
 * Starts the server on 127.0.0.1.
 * @param {{ port?: number, siteDir?: string }} [options]
 */
export function startSiteServer({ port = 4100, siteDir = defaultSiteDir } = {}) {
  return startStaticServer({ port, resolveFile: (urlPath) => fileUnder(siteDir, urlPath) });
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  if (!existsSync(join(defaultSiteDir, "index.html"))) {
    console.error(`No docs site at ${defaultSiteDir}: run \`pnpm build\` first.`);
    process.exit(1);
  }
  await serveFromCommandLine({
    defaultPort: 4100,
    resolveFile: (urlPath) => fileUnder(defaultSiteDir, urlPath),
    banner: (url) => `Docs site: ${url}  (Ctrl+C stops)`,
  });
}
