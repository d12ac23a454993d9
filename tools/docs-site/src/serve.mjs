#!/usr/bin/env node
// Serves the built docs site (dist/site) on 127.0.0.1: files that exist, and 404 for
// anything else (no fallback page, so a broken link shows as one). Port from PORT,
// default 4100 (0 picks a free one).
//
//   pnpm docs        (at the repository root, after pnpm build)
//
// Exports startSiteServer for the docs-site test.
import { createReadStream, existsSync, statSync } from "node:fs";
import { createServer } from "node:http";
import { extname, join, normalize, resolve, sep } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

export const defaultSiteDir = fileURLToPath(new URL("../dist/site", import.meta.url));

const CONTENT_TYPES = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json; charset=utf-8",
  // Shown in the browser rather than downloaded.
  ".yaml": "text/plain; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".txt": "text/plain; charset=utf-8",
};

/**
 * The file under `siteDir` that a URL path names (`/` and `/dir/` are their index.html),
 * or undefined.
 * @param {string} siteDir
 * @param {string} urlPath
 */
function fileFor(siteDir, urlPath) {
  let path;
  try {
    path = decodeURIComponent(urlPath);
  } catch {
    return undefined;
  }
  if (path.includes("\0")) return undefined;
  const file = resolve(siteDir, "." + normalize(path.endsWith("/") ? `${path}index.html` : path));
  if (!file.startsWith(siteDir + sep)) return undefined;
  return existsSync(file) && statSync(file).isFile() ? file : undefined;
}

/**
 * Starts the server on 127.0.0.1.
 * @param {{ port?: number, siteDir?: string }} [options]
 * @returns {Promise<{ url: string, close: () => Promise<void> }>}
 */
export function startSiteServer({ port = 4100, siteDir = defaultSiteDir } = {}) {
  const server = createServer((request, response) => {
    if (request.method !== "GET" && request.method !== "HEAD") {
      response.writeHead(405, { Allow: "GET, HEAD", "Content-Type": "text/plain; charset=utf-8" }).end("Method not allowed\n");
      return;
    }
    const file = fileFor(siteDir, new URL(request.url ?? "/", "http://127.0.0.1").pathname);
    if (file === undefined) {
      response.writeHead(404, { "Content-Type": "text/plain; charset=utf-8" }).end("Not found\n");
      return;
    }
    response.writeHead(200, {
      "Content-Type": CONTENT_TYPES[/** @type {keyof CONTENT_TYPES} */ (extname(file))] ?? "application/octet-stream",
      "Content-Length": statSync(file).size,
      "Cache-Control": "no-cache",
      "X-Content-Type-Options": "nosniff",
    });
    if (request.method === "HEAD") response.end();
    else createReadStream(file).pipe(response);
  });
  return new Promise((resolvePromise, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => {
      const address = server.address();
      const actualPort = typeof address === "object" && address ? address.port : port;
      resolvePromise({
        url: `http://127.0.0.1:${actualPort}/`,
        close: () =>
          new Promise((done) => {
            server.close(() => done());
            server.closeAllConnections();
          }),
      });
    });
  });
}

async function main() {
  if (!existsSync(join(defaultSiteDir, "index.html"))) {
    console.error(`No docs site at ${defaultSiteDir}: run \`pnpm build\` first.`);
    process.exit(1);
  }
  const port = process.env.PORT ? Number(process.env.PORT) : 4100;
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    console.error(`PORT must be a port number, got ${JSON.stringify(process.env.PORT)}.`);
    process.exit(2);
  }
  const { url, close } = await startSiteServer({ port });
  console.log(`Docs site: ${url}  (Ctrl+C stops)`);
  for (const signal of /** @type {const} */ (["SIGINT", "SIGTERM"])) process.once(signal, () => close().then(() => process.exit(0)));
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) await main();
