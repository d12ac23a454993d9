// One WebMCP test page server for every test and bench that drives a browser: the
// server's and the helpers' tests, the release consumer test and bench/webmcp.mjs. It is
// JavaScript (typed by page-server.d.mts) so that Node runs it as it is, without a build,
// from the TypeScript tests and from the benches' .mjs files alike.
import { once } from "node:events";
import { createServer } from "node:http";

/**
 * Test pages on 127.0.0.1, also reachable as localhost: two sites to Chromium, so a
 * localhost frame in a 127.0.0.1 page is a real cross-origin frame, and both are secure
 * contexts as WebMCP requires. Pages count their tool runs with `POST /runs/<name>`,
 * outside the page, so that a count survives navigation and closed tabs.
 */
export class PageServer {
  #pages = new Map();
  #runs = new Map();
  #server;
  #port = 0;

  constructor() {
    this.#server = createServer((request, response) => {
      const { pathname } = new URL(request.url ?? "/", "http://127.0.0.1");
      if (request.method === "POST" && pathname.startsWith("/runs/")) {
        const name = pathname.slice("/runs/".length);
        this.#runs.set(name, (this.#runs.get(name) ?? 0) + 1);
        // Pages on both hosts report here.
        response.writeHead(204, { "access-control-allow-origin": "*" }).end();
        return;
      }
      const page = this.#pages.get(pathname);
      if (page === undefined) {
        response.writeHead(404, { "content-type": "text/plain" }).end("no such test page");
        return;
      }
      response.writeHead(200, { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" });
      response.end(typeof page === "string" ? page : page(this.#port));
    });
  }

  /** Starts on an ephemeral port of 127.0.0.1. */
  static async start() {
    const pages = new PageServer();
    pages.#server.listen(0, "127.0.0.1");
    await once(pages.#server, "listening");
    pages.#port = pages.#server.address().port;
    return pages;
  }

  /** Serves `source` at `path`. */
  serve(path, source) {
    this.#pages.set(path, source);
  }

  /** The URL of `path` on 127.0.0.1 or localhost. */
  url(path, host = "127.0.0.1") {
    return `http://${host}:${this.#port}${path}`;
  }

  /** The origin of this server on 127.0.0.1 or localhost. */
  origin(host = "127.0.0.1") {
    return `http://${host}:${this.#port}`;
  }

  /** How many times pages reported running the tool counted as `name`. */
  runs(name) {
    return this.#runs.get(name) ?? 0;
  }

  /** Forgets every count (between tests). */
  resetRuns() {
    this.#runs.clear();
  }

  /** Stops the server, dropping open connections. */
  async close() {
    this.#server.closeAllConnections();
    this.#server.close();
    await once(this.#server, "close");
  }
}
