import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type HttpEndpoint, serveHttp } from "../../src/index.js";

const token = "http-body-test-token-0123456789";
const tools = [{ name: "echo", inputSchema: { type: "object" as const } }];
let endpoint: HttpEndpoint;
let sessionId: string;

/** One POST to the endpoint, as an MCP client sends it. */
async function post(body: string, session?: string) {
  const response = await fetch(endpoint.url, {
    method: "POST",
    headers: {
      authorization: `Bearer ${token}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2025-06-18",
      ...(session !== undefined && { "mcp-session-id": session }),
    },
    body,
  });
  return { status: response.status, headers: response.headers, json: (await response.json()) as Record<string, any> };
}

beforeAll(async () => {
  // A real SDK server behind the real endpoint; only the bodies are under test here.
  const createServer = () => {
    const server = new Server({ name: "body-test", version: "1" }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
    return server;
  };
  endpoint = await serveHttp({ host: "127.0.0.1", port: 0, token, createServer, maxBodyBytes: 4096 });
  const init = await post(
    JSON.stringify({
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
    }),
  );
  sessionId = init.headers.get("mcp-session-id") as string;
  expect(sessionId).toBeTruthy();
});

afterAll(async () => {
  await endpoint.close();
});

describe("serveHttp request bodies in a session", () => {
  it("hands a session's POST, read by the bridge, to the session", async () => {
    const answer = await post(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }), sessionId);
    expect(answer.status).toBe(200);
    expect(answer.json).toEqual({ jsonrpc: "2.0", id: 1, result: { tools } });
  });

  it("answers a body that is not JSON with JSON-RPC's parse error", async () => {
    const answer = await post("{not json", sessionId);
    expect(answer.status).toBe(400);
    expect(answer.json.error.code).toBe(-32700);
  });

  it("refuses a body over the cap in a session too, not only at initialize", async () => {
    const answer = await post(JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list", params: { _meta: { pad: "x".repeat(5000) } } }), sessionId);
    expect(answer.status).toBe(413);
  });

  it("refuses an unknown session before reading its body", async () => {
    const answer = await post(JSON.stringify({ jsonrpc: "2.0", id: 3, method: "tools/list" }), "no-such-session");
    expect(answer.status).toBe(404);
  });
});
