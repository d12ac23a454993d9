import { createServer, type Server } from "node:http";
import { once } from "node:events";
import type { AddressInfo } from "node:net";

/** A page's HTML, given the server's port (to link 127.0.0.1 and localhost pages to each other). */
export type PageSource = string | ((port: number) => string);

/**
 * Test pages over HTTP on 127.0.0.1. The same port answers as `127.0.0.1` and as
 * `localhost`, which are two sites to Chromium: a localhost frame inside a 127.0.0.1
 * page is a real cross-origin (out-of-process) iframe. Both are secure contexts, as
 * WebMCP requires.
 */
export class PageServer {
  readonly #pages = new Map<string, PageSource>();
  readonly #server: Server;
  #port = 0;

  private constructor() {
    this.#server = createServer((request, response) => {
      const page = this.#pages.get(new URL(request.url ?? "/", "http://127.0.0.1").pathname);
      if (page === undefined) {
        response.writeHead(404, { "content-type": "text/plain" }).end("no such test page");
        return;
      }
      response.writeHead(200, { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" });
      response.end(typeof page === "string" ? page : page(this.#port));
    });
  }

  /** Starts listening on an ephemeral port of 127.0.0.1. */
  static async start(): Promise<PageServer> {
    const pages = new PageServer();
    pages.#server.listen(0, "127.0.0.1");
    await once(pages.#server, "listening");
    pages.#port = (pages.#server.address() as AddressInfo).port;
    return pages;
  }

  /** Serves `source` at `path` (replacing what was there). */
  serve(path: string, source: PageSource): void {
    this.#pages.set(path, source);
  }

  /** The URL of `path` on `127.0.0.1` or on `localhost`. */
  url(path: string, host: "127.0.0.1" | "localhost" = "127.0.0.1"): string {
    return `http://${host}:${this.#port}${path}`;
  }

  /** Stops the server. */
  async close(): Promise<void> {
    this.#server.closeAllConnections();
    this.#server.close();
    await once(this.#server, "close");
  }
}
