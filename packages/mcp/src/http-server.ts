import { createHash, randomUUID, timingSafeEqual } from "node:crypto";
import { once } from "node:events";
import { createServer, type Server as HttpServer, type IncomingMessage, type ServerResponse } from "node:http";
import { type AddressInfo, isIPv4, isIPv6 } from "node:net";
import { networkInterfaces } from "node:os";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import type { SessionOptions } from "./session-server.js";

/** Options of {@link serveHttp}. */
export interface HttpOptions {
  /** Address to listen on; loopback by default in the CLI. Any other address is warned about through `log`. */
  host: string;
  /** Port (0: any free one). */
  port: number;
  /** The bearer token every request must carry. */
  token: string;
  /**
   * A new MCP server for each session; `session.backlogged()` tells whether the
   * session's event stream (its `GET`) has output its client has not read yet.
   */
  createServer: (session: SessionOptions) => Server;
  /** Most sessions at once; the least recently used goes to make room. Default 64. */
  maxSessions?: number;
  /** Largest request body read, in bytes. Default 4 MiB. */
  maxBodyBytes?: number;
  /**
   * More `Host` values to accept besides the addresses served (a name clients use, a
   * reverse proxy's host): `name` accepts `name` and `name:<port>`; `name:8443` only that.
   */
  allowedHosts?: readonly string[];
  /** Where warnings go (a bind address that is not loopback). Default: nowhere. */
  log?: (message: string) => void;
}

/** A running Streamable HTTP endpoint. */
export interface HttpEndpoint {
  /** `http://<host>:<port>/mcp`; for a wildcard bind (`0.0.0.0`, `::`), the loopback address of its family. */
  url: string;
  /** Every `Host` value requests may name (canonical `host[:port]`): the addresses served, and `allowedHosts`. */
  allowedHosts: readonly string[];
  /** Whether the server listens on a loopback address only. */
  loopback: boolean;
  /** Closes every session and the server. */
  close(): Promise<void>;
}

/** The MCP endpoint's path. */
export const mcpPath = "/mcp";

interface Session {
  transport: StreamableHTTPServerTransport;
  server: Server;
  lastUsed: number;
  /** The response of the session's open `GET` (its event stream), where notifications go. */
  events: { response: ServerResponse | undefined };
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

/** An IP address or `localhost` without brackets, lowercase. */
const bare = (host: string) => host.toLowerCase().replace(/^\[(.*)\]$/, "$1");

/** A host (name, IPv4, or IPv6 with or without brackets) as it appears in a URL. */
const urlHost = (host: string) => (isIPv6(bare(host)) ? `[${bare(host)}]` : host);

// The characters of a Host header's host and port: anything else ("@", "/", "%") is refused
// before parsing, since URL parsing would read "evil@127.0.0.1" as 127.0.0.1.
const hostSyntax = /^(?:[a-z0-9.-]+|\[[0-9a-f:.]+\])(?::\d{1,5})?$/i;

/**
 * `value` (`host` or `host:port`) as URL parsing writes a host: lowercase, IPv6 compressed
 * and bracketed (`[::ffff:127.0.0.1]` is `[::ffff:7f00:1]`), the default port 80 dropped,
 * so that one address has one spelling; `undefined` for anything else.
 */
function canonicalHost(value: string): string | undefined {
  if (!hostSyntax.test(value)) return undefined;
  try {
    return new URL(`http://${value}`).host;
  } catch {
    return undefined;
  }
}

/** Whether `address` is a loopback address (127.0.0.0/8, `::1`, either IPv4-mapped) or `localhost`. */
export function isLoopbackAddress(address: string): boolean {
  const host = bare(address);
  if (host === "localhost") return true;
  if (isIPv4(host)) return host.startsWith("127.");
  if (!isIPv6(host)) return false;
  const canonical = new URL(`http://[${host}]`).hostname;
  return canonical === "[::1]" || /^\[::ffff:7f[0-9a-f]{2}:[0-9a-f]{1,4}\]$/.test(canonical);
}

/** The IPv4 address inside an IPv4-mapped IPv6 address (`::ffff:127.0.0.1`), which IPv4 clients connect to. */
function mappedIPv4(address: string): string | undefined {
  const host = bare(address);
  if (!isIPv6(host)) return undefined;
  const match = /^\[::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})\]$/.exec(new URL(`http://[${host}]`).hostname);
  if (!match) return undefined;
  const [high, low] = [Number.parseInt(match[1] as string, 16), Number.parseInt(match[2] as string, 16)];
  return [high >> 8, high & 255, low >> 8, low & 255].join(".");
}

/**
 * The hosts a server bound to `bound` serves: that address (and the IPv4 form of an
 * IPv4-mapped one), every address of this machine for a wildcard bind (`0.0.0.0`: the
 * IPv4 ones; `::`: all), the name it was told (`host`), and `localhost` when any is loopback.
 */
function servedAddresses(host: string, bound: string): string[] {
  const addresses = new Set([host, bound]);
  const mapped = mappedIPv4(bound);
  if (mapped !== undefined) addresses.add(mapped);
  if (bound === "0.0.0.0" || bound === "::") {
    for (const entries of Object.values(networkInterfaces())) {
      for (const entry of entries ?? []) if (bound === "::" || entry.family === "IPv4") addresses.add(entry.address);
    }
    addresses.delete("0.0.0.0");
    addresses.delete("::");
  }
  if ([...addresses].some(isLoopbackAddress)) addresses.add("localhost");
  return [...addresses];
}

/**
 * Serves MCP over Streamable HTTP at `/mcp`, one session (and one MCP server) per
 * `initialize`, as the MCP spec's session management says (`Mcp-Session-Id`). Before a
 * request reaches a session it must carry `Authorization: Bearer <token>` (compared in
 * constant time; else 401), and, whatever the bind address, its `Host` must name an
 * address the server listens on (with its port), `localhost` when that is loopback, or
 * one of `allowedHosts`, and its `Origin`, if any, such a host (else 403): a web page the
 * user visits cannot reach the bridge through DNS rebinding, on this machine or another.
 * A bind address that is not loopback is reported through `log` as a warning.
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
    const host = canonicalHost(String(request.headers.host ?? ""));
    if (host === undefined || !allowedHosts.has(host)) return false;
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
    const events: Session["events"] = { response: undefined };
    // Node holds what the client has not read past the socket's buffer: then the stream waits to drain.
    const server = options.createServer({ backlogged: () => events.response?.writableNeedDrain === true });
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      // A result as one JSON body rather than an SSE stream per request: nothing here
      // streams within a request, and notifications go on the session's GET stream.
      enableJsonResponse: true,
      onsessioninitialized: (id) => {
        sessions.set(id, { transport, server, lastUsed: Date.now(), events });
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
    if (!authorized(request))
      return refuse(response, 401, "Unauthorized: send Authorization: Bearer <token>.", { "www-authenticate": 'Bearer realm="browser-service-mcp"' });
    const sessionId = request.headers["mcp-session-id"];
    if (typeof sessionId === "string") {
      const session = sessions.get(sessionId);
      if (!session) return refuse(response, 404, "Session not found: it ended or never existed; initialize a new one.");
      session.lastUsed = Date.now();
      const { events } = session;
      // The SDK keeps one event stream per session (a second GET is refused with 409): the open one is watched.
      if (request.method === "GET" && (events.response === undefined || events.response.destroyed || events.response.writableEnded)) {
        events.response = response;
        response.once("close", () => {
          if (events.response === response) events.response = undefined;
        });
      }
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
  const { port, address } = http.address() as AddressInfo;
  const served = servedAddresses(options.host, address).map((each) => `${urlHost(each)}:${port}`);
  const extra = (options.allowedHosts ?? []).flatMap((each) =>
    /:\d+$/.test(each) && !/^\[[^\]]*\]$/.test(each) ? [each] : [each, `${urlHost(each)}:${port}`],
  );
  allowedHosts = new Set([...served, ...extra].map(canonicalHost).filter((each): each is string => each !== undefined));
  const loopback = isLoopbackAddress(address);
  if (!loopback) {
    options.log?.(
      `warning: listening on ${address}, which is not a loopback address: other machines can reach the bridge, and anyone with the token can run the browser's tools. Requests must name one of these hosts (Host, Origin): ${[...allowedHosts].join(", ")}.`,
    );
  }
  const wildcard = address === "0.0.0.0" ? "127.0.0.1" : address === "::" ? "::1" : undefined;
  return {
    url: `http://${urlHost(wildcard ?? options.host)}:${port}${mcpPath}`,
    allowedHosts: [...allowedHosts],
    loopback,
    async close() {
      await Promise.all([...sessions.values()].map((session) => session.transport.close().catch(() => undefined)));
      sessions.clear();
      http.closeAllConnections();
      http.close();
      await once(http, "close");
    },
  };
}
