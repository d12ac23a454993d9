// The static file server behind `pnpm docs` and the docs tests: files only, on
// 127.0.0.1, with no directory listings and nothing outside the folder it is given.
import { createReadStream, existsSync, statSync } from "node:fs";
import { createServer } from "node:http";
import { extname, normalize, resolve, sep } from "node:path";

const contentTypes = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
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
 * The file under `dir` that a URL path names (`/` and `/x/` are their `index.html`), or
 * undefined for a missing file or a path that would leave `dir`.
 * @param {string} dir
 * @param {string} urlPath
 * @returns {string | undefined}
 */
export function fileUnder(dir, urlPath) {
  let path;
  try {
    path = decodeURIComponent(urlPath);
  } catch {
    return undefined;
  }
  if (path.includes("\0")) return undefined;
  const file = resolve(dir, `.${normalize(path.endsWith("/") ? `${path}index.html` : path)}`);
  if (!file.startsWith(dir + sep)) return undefined;
  return existsSync(file) && statSync(file).isFile() ? file : undefined;
}

/**
 * Starts a server on 127.0.0.1 that answers GET and HEAD with the file `resolveFile`
 * names for a URL path, and 404 when it names none.
 * @param {{ port?: number, resolveFile: (urlPath: string) => string | undefined }} options
 * @returns {Promise<{ url: string, close: () => Promise<void> }>}
 */
export function startStaticServer({ port = 0, resolveFile }) {
  const server = createServer((request, response) => {
    if (request.method !== "GET" && request.method !== "HEAD") {
      response.writeHead(405, { Allow: "GET, HEAD", "Content-Type": "text/plain; charset=utf-8" }).end("Method not allowed\n");
      return;
    }
    const file = resolveFile(new URL(request.url ?? "/", "http://127.0.0.1").pathname);
    if (file === undefined) {
      response.writeHead(404, { "Content-Type": "text/plain; charset=utf-8" }).end("Not found\n");
      return;
    }
    response.writeHead(200, {
      "Content-Type": contentTypes[/** @type {keyof contentTypes} */ (extname(file))] ?? "application/octet-stream",
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

/**
 * Runs a server from the command line: port from PORT (or `defaultPort`), stops on
 * SIGINT and SIGTERM.
 * @param {{ defaultPort: number, resolveFile: (urlPath: string) => string | undefined, banner: (url: string) => string }} options
 */
export async function serveFromCommandLine({ defaultPort, resolveFile, banner }) {
  const port = process.env.PORT ? Number(process.env.PORT) : defaultPort;
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    console.error(`PORT must be a port number, got ${JSON.stringify(process.env.PORT)}.`);
    process.exit(2);
  }
  const { url, close } = await startStaticServer({ port, resolveFile });
  console.log(banner(url));
  for (const signal of /** @type {const} */ (["SIGINT", "SIGTERM"])) process.once(signal, () => close().then(() => process.exit(0)));
}
