#!/usr/bin/env node
// Serves the built docs site (dist/docs) and the bundled document (dist/openapi.json,
// dist/openapi.yaml) on 127.0.0.1. Port from PORT, default 4000 (0 picks a free one).
//
//   node scripts/serve-docs.mjs          (pnpm --filter @browser-service/openapi serve-docs)
//
// Exports createDocsServer / startDocsServer for the docs-site test.
import { createReadStream, existsSync, statSync } from "node:fs";
import { createServer } from "node:http";
import { extname, join, normalize, resolve, sep } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

export const defaultDistDir = fileURLToPath(new URL("../dist", import.meta.url));

const CONTENT_TYPES = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json; charset=utf-8",
  ".yaml": "application/yaml; charset=utf-8",
  ".yml": "application/yaml; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".txt": "text/plain; charset=utf-8",
};

/** Resolves a URL path to a file under dist/docs (or the two bundled documents), or undefined. */
function resolveFile(distDir, urlPath) {
  const docsDir = join(distDir, "docs");
  let path;
  try {
    path = decodeURIComponent(urlPath);
  } catch {
    return undefined;
  }
  if (path.includes("\0")) return undefined;
  if (path === "/openapi.json" || path === "/openapi.yaml") return join(distDir, path.slice(1));
  const candidate = resolve(docsDir, "." + normalize(path.endsWith("/") ? `${path}index.html` : path));
  if (candidate !== docsDir && !candidate.startsWith(docsDir + sep)) return undefined; // outside dist/docs
  if (existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  // Redoc routes sections and operations by path (/projects/...): serve the page for
  // any extension-less path so that a reload or a shared link works.
  if (extname(path) === "") return join(docsDir, "index.html");
  return undefined;
}

/**
 * An http.Server (not listening yet) for dist/docs, /openapi.json and /openapi.yaml.
 * @param {{ distDir?: string }} [options]
 */
export function createDocsServer({ distDir = defaultDistDir } = {}) {
  return createServer((request, response) => {
    const method = request.method ?? "GET";
    if (method !== "GET" && method !== "HEAD") {
      response.writeHead(405, { Allow: "GET, HEAD", "Content-Type": "text/plain; charset=utf-8" });
      response.end("Method not allowed\n");
      return;
    }
    const { pathname } = new URL(request.url ?? "/", "http://127.0.0.1");
    const file = resolveFile(distDir, pathname);
    if (!file || !existsSync(file)) {
      response.writeHead(404, { "Content-Type": "text/plain; charset=utf-8" });
      response.end("Not found\n");
      return;
    }
    const { size } = statSync(file);
    response.writeHead(200, {
      "Content-Type": CONTENT_TYPES[extname(file)] ?? "application/octet-stream",
      "Content-Length": size,
      "Cache-Control": "no-cache",
      "X-Content-Type-Options": "nosniff",
    });
    if (method === "HEAD") {
      response.end();
      return;
    }
    createReadStream(file).pipe(response);
  });
}

/**
 * Starts the server on 127.0.0.1.
 * @param {{ port?: number, host?: string, distDir?: string }} [options]
 * @returns {Promise<{ server: import("node:http").Server, url: string, close: () => Promise<void> }>}
 */
export function startDocsServer({ port = 4000, host = "127.0.0.1", distDir = defaultDistDir } = {}) {
  const server = createDocsServer({ distDir });
  return new Promise((resolvePromise, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      const address = server.address();
      const actualPort = typeof address === "object" && address ? address.port : port;
      const close = () =>
        new Promise((done) => {
          server.close(() => done());
          server.closeAllConnections();
        });
      resolvePromise({ server, url: `http://${host}:${actualPort}/`, close });
    });
  });
}

async function main() {
  const distDir = defaultDistDir;
  if (!existsSync(join(distDir, "docs", "index.html"))) {
    console.error(`No docs site at ${join(distDir, "docs", "index.html")}: run \`pnpm build\` (or \`node scripts/build.mjs\` in spec/) first.`);
    process.exit(1);
  }
  const port = process.env.PORT === undefined || process.env.PORT === "" ? 4000 : Number(process.env.PORT);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    console.error(`PORT must be a port number, got ${JSON.stringify(process.env.PORT)}.`);
    process.exit(2);
  }
  let running;
  try {
    running = await startDocsServer({ port, distDir });
  } catch (error) {
    console.error(`Could not listen on 127.0.0.1:${port}: ${error instanceof Error ? error.message : error}`);
    process.exit(1);
  }
  console.log(`Docs: ${running.url}  (also ${running.url}openapi.json and ${running.url}openapi.yaml; Ctrl+C stops)`);
  const stop = (signal) => {
    console.log(`\n${signal}: stopping the docs server.`);
    // Static files only: nothing to flush, so do not wait long for open sockets.
    setTimeout(() => process.exit(0), 200).unref();
    running.close().then(() => process.exit(0));
  };
  process.once("SIGINT", () => stop("SIGINT"));
  process.once("SIGTERM", () => stop("SIGTERM"));
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  await main();
}
