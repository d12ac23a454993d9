import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/** A page's HTML, given the server's port (to link 127.0.0.1 and localhost pages). */
export type PageSource = string | ((port: number) => string);

/**
 * Test pages on 127.0.0.1, also reachable as localhost: two sites to Chromium, so a
 * localhost frame in a 127.0.0.1 page is a real cross-origin frame, and both are secure
 * contexts as WebMCP requires. Pages count their tool runs with `POST /runs/<name>`,
 * outside the page, so that a count survives navigation and closed tabs.
 */
export class PageServer {
  readonly #pages = new Map<string, PageSource>();
  readonly #runs = new Map<string, number>();
  readonly #server: Server;
  #port = 0;

  private constructor() {
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
  static async start(): Promise<PageServer> {
    const pages = new PageServer();
    pages.#server.listen(0, "127.0.0.1");
    await once(pages.#server, "listening");
    pages.#port = (pages.#server.address() as AddressInfo).port;
    return pages;
  }

  /** Serves `source` at `path`. */
  serve(path: string, source: PageSource): void {
    this.#pages.set(path, source);
  }

  /** The URL of `path` on 127.0.0.1 or localhost. */
  url(path: string, host: "127.0.0.1" | "localhost" = "127.0.0.1"): string {
    return `http://${host}:${this.#port}${path}`;
  }

  /** The origin of this server on 127.0.0.1 or localhost. */
  origin(host: "127.0.0.1" | "localhost" = "127.0.0.1"): string {
    return `http://${host}:${this.#port}`;
  }

  /** How many times pages reported running the tool counted as `name`. */
  runs(name: string): number {
    return this.#runs.get(name) ?? 0;
  }

  /** Forgets every count (between tests). */
  resetRuns(): void {
    this.#runs.clear();
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    this.#server.close();
    await once(this.#server, "close");
  }
}
