import { type IncomingMessage, request } from "node:http";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type HttpEndpoint, type SessionOptions, serveHttp } from "../../src/index.js";

// A session's server hears whether its client reads the session's event stream (its GET):
// log messages are dropped rather than queued behind a client that does not read.

const token = "http-backlog-test-token-0123456789";
let endpoint: HttpEndpoint;
let server: Server;
let session: SessionOptions;

beforeAll(async () => {
  endpoint = await serveHttp({
    host: "127.0.0.1",
    port: 0,
    token,
    createServer: (options) => {
      session = options;
      server = new Server({ name: "backlog-test", version: "1" }, { capabilities: { logging: {} } });
      return server;
    },
  });
});

afterAll(async () => {
  await endpoint.close();
});

const headers = (sessionId?: string) => ({
  authorization: `Bearer ${token}`,
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
  "mcp-protocol-version": "2025-06-18",
  ...(sessionId !== undefined && { "mcp-session-id": sessionId }),
});

describe("a Streamable HTTP session's backlog", () => {
  it("is false while the client reads its event stream, true once it stops reading, false when the stream closes", async () => {
    const init = await fetch(endpoint.url, {
      method: "POST",
      headers: headers(),
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 0,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
      }),
    });
    const sessionId = init.headers.get("mcp-session-id") as string;
    await init.text();
    expect(session.backlogged?.()).toBe(false);

    // The event stream, opened and then never read.
    const target = new URL(endpoint.url);
    const stream = await new Promise<IncomingMessage>((resolve, reject) => {
      const get = request({ host: target.hostname, port: target.port, path: target.pathname, method: "GET", headers: headers(sessionId) }, resolve);
      get.on("error", reject);
      get.end();
    });
    expect(stream.statusCode).toBe(200);
    stream.pause();
    stream.socket.pause();
    expect(session.backlogged?.()).toBe(false);

    const data = "x".repeat(64 * 1024);
    let sent = 0;
    while (!session.backlogged?.() && sent < 2000) {
      await server.sendLoggingMessage({ level: "info", data });
      sent++;
      // Let the stream's pump write to the socket.
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(session.backlogged?.()).toBe(true);

    stream.destroy();
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(session.backlogged?.()).toBe(false);
  });
});
