import { request } from "node:http";
import { networkInterfaces } from "node:os";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { describe, expect, it } from "vitest";
import { type HttpEndpoint, type HttpOptions, serveHttp } from "../../src/index.js";

const token = "http-host-test-token-0123456789";
const initialize = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
});

/** Serves a real SDK server behind the real endpoint on `host`, runs `body`, and closes it. */
async function withEndpoint(
  options: Partial<HttpOptions> & { host: string },
  body: (endpoint: HttpEndpoint, port: number, warnings: string[]) => Promise<void>,
): Promise<void> {
  const warnings: string[] = [];
  const endpoint = await serveHttp({
    port: 0,
    token,
    createServer: () => new Server({ name: "host-test", version: "1" }, { capabilities: {} }),
    log: (message) => warnings.push(message),
    ...options,
  });
  try {
    await body(endpoint, Number(new URL(endpoint.url).port), warnings);
  } finally {
    await endpoint.close();
  }
}

/**
 * An `initialize` with the right token, sent to `address`:`port` with the `Host` (and
 * `Origin`) a browser would send after DNS rebinding; node:http sets Host as asked.
 */
function initializeVia(address: string, port: number, host: string, origin?: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const headers = {
      host,
      authorization: `Bearer ${token}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...(origin !== undefined && { origin }),
    };
    const req = request({ host: address, port, path: "/mcp", method: "POST", headers }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on("error", reject);
    req.end(initialize);
  });
}

/** A non-loopback IPv4 address of this machine, if it has one. */
const lanAddress = Object.values(networkInterfaces())
  .flat()
  .find((entry) => entry !== undefined && entry.family === "IPv4" && !entry.internal)?.address;

describe("serveHttp's Host and Origin check, whatever the bind address", () => {
  it("on 127.0.0.1: serves its address and localhost, refuses another Host, a userinfo trick and a foreign Origin, and warns of nothing", async () => {
    await withEndpoint({ host: "127.0.0.1" }, async (endpoint, port, warnings) => {
      expect(endpoint.loopback).toBe(true);
      expect(await initializeVia("127.0.0.1", port, `127.0.0.1:${port}`)).toBe(200);
      expect(await initializeVia("127.0.0.1", port, `LOCALHOST:${port}`)).toBe(200);
      expect(await initializeVia("127.0.0.1", port, `evil.example:${port}`)).toBe(403);
      expect(await initializeVia("127.0.0.1", port, `evil.example@127.0.0.1:${port}`)).toBe(403);
      expect(await initializeVia("127.0.0.1", port, `127.0.0.1:${port}`, "http://evil.example")).toBe(403);
      expect(await initializeVia("127.0.0.1", port, `127.0.0.1:${port}`, `http://localhost:${port}`)).toBe(200);
      expect(warnings).toEqual([]);
    });
  });

  it("on an IPv4-mapped loopback address (::ffff:127.0.0.1): checks Host and Origin too, in any spelling of the address", async () => {
    await withEndpoint({ host: "::ffff:127.0.0.1" }, async (endpoint, port, warnings) => {
      expect(endpoint.loopback).toBe(true);
      expect(await initializeVia("127.0.0.1", port, `evil.example:${port}`)).toBe(403);
      expect(await initializeVia("127.0.0.1", port, `localhost:${port}`, "http://evil.example")).toBe(403);
      expect(await initializeVia("127.0.0.1", port, `[::ffff:7f00:1]:${port}`)).toBe(200);
      expect(await initializeVia("127.0.0.1", port, `127.0.0.1:${port}`)).toBe(200);
      // The URL it prints is one a client can use as it is.
      const answer = await fetch(endpoint.url, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: initialize,
      });
      expect(answer.status).toBe(200);
      expect(warnings).toEqual([]);
    });
  });

  it("on 0.0.0.0: refuses a foreign Host or Origin, serves this machine's addresses, and warns that it is not loopback", async () => {
    await withEndpoint({ host: "0.0.0.0" }, async (endpoint, port, warnings) => {
      expect(endpoint.loopback).toBe(false);
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatch(/^warning: listening on 0\.0\.0\.0, which is not a loopback address: other machines can reach the bridge/);
      for (const address of ["127.0.0.1", ...(lanAddress === undefined ? [] : [lanAddress])]) {
        expect(await initializeVia(address, port, `evil.example:${port}`)).toBe(403);
        expect(await initializeVia(address, port, `${address}:${port}`, "http://evil.example")).toBe(403);
        expect(await initializeVia(address, port, `${address}:${port}`)).toBe(200);
      }
      expect(endpoint.url).toBe(`http://127.0.0.1:${port}/mcp`);
    });
  });

  it.runIf(lanAddress !== undefined)("on a LAN address: serves that address only, and warns", async () => {
    await withEndpoint({ host: lanAddress as string }, async (_endpoint, port, warnings) => {
      expect(warnings[0]).toMatch(/not a loopback address/);
      expect(await initializeVia(lanAddress as string, port, `evil.example:${port}`)).toBe(403);
      expect(await initializeVia(lanAddress as string, port, `localhost:${port}`)).toBe(403);
      expect(await initializeVia(lanAddress as string, port, `${lanAddress}:${port}`)).toBe(200);
    });
  });

  it("accepts the extra hosts it is given: a name with any of its ports' forms, a name:port only as given", async () => {
    await withEndpoint({ host: "127.0.0.1", allowedHosts: ["bridge.example", "proxy.example:8443"] }, async (_, port) => {
      expect(await initializeVia("127.0.0.1", port, "bridge.example")).toBe(200);
      expect(await initializeVia("127.0.0.1", port, `bridge.example:${port}`, "https://bridge.example")).toBe(200);
      expect(await initializeVia("127.0.0.1", port, "proxy.example:8443", "https://proxy.example:8443")).toBe(200);
      expect(await initializeVia("127.0.0.1", port, "proxy.example")).toBe(403);
      expect(await initializeVia("127.0.0.1", port, "other.example")).toBe(403);
    });
  });
});
