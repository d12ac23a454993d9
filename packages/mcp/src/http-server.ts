import { createHash, randomUUID, timingSafeEqual } from "node:crypto";
import { once } from "node:events";
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";

/** Options of {@link serveHttp}. */
export interface HttpOptions {
  /** Address to listen on; loopback by default in the CLI. */
  host: string;
  /** Port (0: any free one). */
  port: number;
  /** The bearer token every request must carry. */
  token: string;
  /** A new MCP server for each session. */
  createServer: () => Server;
  /** Most sessions at once; the least recently used goes to make room. Default 64. */
  maxSessions?: number;
  /** Largest request body read, in bytes. Default 4 MiB. */
  maxBodyBytes?: number;
}

/** A running Streamable HTTP endpoint. */
export interface HttpEndpoint {
  /** `http://<host>:<port>/mcp` */
  url: string;
  /** Closes every session and the server. */
  close(): Promise<void>;
}

/** The MCP endpoint's path. */
export const mcpPath = "/mcp";

interface Session {
  transport: StreamableHTTPServerTransport;
  server: Server;
  lastUsed: number;
}

const digest = (value: string) => createHash("sha256").update(value).digest();

/** JSON-RPC's code for a body that is not JSON; every other refusal here is -32000, as the SDK answers. */
const parseErrorCode = -32700;

/** Writes a JSON-RPC error as a plain HTTP answer (before any session is involved). */
function refuse(response: ServerResponse, status: number, message: string, headers: Record<string, string> = {}, code = -32000): void {
  response.writeHead(status, { "content-type": "application/json", ...headers });
  response.end(JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null }));
}

async function readJson(request: IncomingMessage, maxBytes: number): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > maxBytes) throw new RangeError(`The request body is over ${maxBytes} bytes.`);
    chunks.push(chunk as Buffer);
  }
  return JSON.parse(Buffer.concat(chunks).toString("utf8"));
}

const isLoopback = (host: string) => host === "127.0.0.1" || host === "::1" || host === "localhost" || host.startsWith("127.");

/**
 * Serves MCP over Streamable HTTP at `/mcp`, one session (and one MCP server) per
 * `initialize`, as the MCP spec's session management says (`Mcp-Session-Id`). Before a
 * request reaches a session it must carry `Authorization: Bearer <token>` (compared in
 * constant time; else 401), and on a loopback address its `Host` must name this
 * address and port and its `Origin`, if any, be such an origin (else 403): a web page the
 * user visits cannot reach the bridge through DNS rebinding.
 */
export async function serveHttp(options: HttpOptions): Promise<HttpEndpoint> {
  const { token, maxSessions = 64, maxBodyBytes = 4 * 1024 * 1024 } = options;
  const expected = digest(`Bearer ${token}`);
  const sessions = new Map<string, Session>();
  let allowedHosts = new Set<string>();

  const authorized = (request: IncomingMessage) => {
    const header = request.headers.authorization;
    return typeof header === "string" && timingSafeEqual(digest(header), expected);
  };

  const sameSite = (request: IncomingMessage) => {
    if (!isLoopback(options.host)) return true;
    if (!allowedHosts.has(String(request.headers.host ?? "").toLowerCase())) return false;
    const origin = request.headers.origin;
    if (origin === undefined) return true;
    return URL.canParse(origin) && allowedHosts.has(new URL(origin).host);
  };

  const makeRoom = async () => {
    if (sessions.size < maxSessions) return;
    const [oldestId, oldest] = [...sessions].reduce((a, b) => (a[1].lastUsed <= b[1].lastUsed ? a : b));
    sessions.delete(oldestId);
    await oldest.transport.close();
  };

  const open = async (request: IncomingMessage, response: ServerResponse, body: unknown) => {
    await makeRoom();
    const server = options.createServer();
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      // A result as one JSON body rather than an SSE stream per request: nothing here
      // streams within a request, and notifications go on the session's GET stream.
      enableJsonResponse: true,
      onsessioninitialized: (id) => {
        sessions.set(id, { transport, server, lastUsed: Date.now() });
      },
      onsessionclosed: (id) => {
        sessions.delete(id);
      },
    });
    transport.onclose = () => {
      if (transport.sessionId !== undefined) sessions.delete(transport.sessionId);
    };
    await server.connect(transport);
    await transport.handleRequest(request, response, body);
  };

  const handle = async (request: IncomingMessage, response: ServerResponse) => {
    const { pathname } = new URL(request.url ?? "/", "http://localhost");
    if (pathname !== mcpPath) return refuse(response, 404, `Not found: the MCP endpoint is ${mcpPath}.`);
    if (!sameSite(request)) return refuse(response, 403, "Forbidden: the Host or Origin header names another site.");
    if (!authorized(request)) return refuse(response, 401, "Unauthorized: send Authorization: Bearer <token>.", { "www-authenticate": 'Bearer realm="browser-service-mcp"' });
    const sessionId = request.headers["mcp-session-id"];
    if (typeof sessionId === "string") {
      const session = sessions.get(sessionId);
      if (!session) return refuse(response, 404, "Session not found: it ended or never existed; initialize a new one.");
      session.lastUsed = Date.now();
      if (request.method !== "POST") return session.transport.handleRequest(request, response);
    } else if (request.method !== "POST") return refuse(response, 400, "Bad request: no Mcp-Session-Id; start with an initialize request.");
    let body: unknown;
    try {
      // Read here with Node's stream rather than by the SDK through a web ReadableStream:
      // cheaper per request, and the size cap holds for every POST, not only the first.
      body = await readJson(request, maxBodyBytes);
    } catch (error) {
      if (error instanceof RangeError) return refuse(response, 413, error.message);
      return refuse(response, 400, "Parse error: the body is not JSON.", {}, parseErrorCode);
    }
    if (typeof sessionId === "string") {
      // Looked up again: the session may have ended while the body was read.
      const session = sessions.get(sessionId);
      if (!session) return refuse(response, 404, "Session not found: it ended or never existed; initialize a new one.");
      return session.transport.handleRequest(request, response, body);
    }
    if (!isInitializeRequest(body)) return refuse(response, 400, "Bad request: no Mcp-Session-Id; start with an initialize request.");
    return open(request, response, body);
  };

  const http: HttpServer = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      if (!response.headersSent) refuse(response, 500, `Internal error: ${error instanceof Error ? error.message : String(error)}`);
      else response.end();
    });
  });
  http.listen(options.port, options.host);
  await once(http, "listening");
  const { port } = http.address() as AddressInfo;
  const hostInUrl = options.host.includes(":") ? `[${options.host}]` : options.host;
  allowedHosts = new Set([`${hostInUrl}:${port}`, `localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`].map((h) => h.toLowerCase()));
  return {
    url: `http://${hostInUrl}:${port}${mcpPath}`,
    async close() {
      await Promise.all([...sessions.values()].map((session) => session.transport.close().catch(() => undefined)));
      sessions.clear();
      http.closeAllConnections();
      http.close();
      await once(http, "close");
    },
  };
}
