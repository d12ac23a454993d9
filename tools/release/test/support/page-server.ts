// Serves one HTML file on 127.0.0.1 (a secure context, so WebMCP is available to it).
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

/** Resolves with the page's URL and a function that stops the server. */
export function servePage(file: string, path: string): Promise<{ url: string; close: () => Promise<void> }> {
  const html = readFileSync(file);
  const server = createServer((request, response) => {
    const found = new URL(request.url ?? "/", "http://127.0.0.1").pathname === path;
    response.writeHead(found ? 200 : 404, { "Content-Type": found ? "text/html; charset=utf-8" : "text/plain; charset=utf-8" });
    response.end(found ? html : "Not found\n");
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        url: `http://127.0.0.1:${port}${path}`,
        close: () =>
          new Promise((done) => {
            server.close(() => done());
            server.closeAllConnections();
          }),
      });
    });
  });
}
