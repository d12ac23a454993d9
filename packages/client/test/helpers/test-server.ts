import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, beforeEach } from "vitest";

/** One request as the server saw it. */
export interface SeenRequest {
  method: string;
  /** Path and query, as sent. */
  url: string;
  pathname: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** How the server answers one request. */
export type Reply =
  | {
      status?: number;
      headers?: Record<string, string>;
      /** A string or bytes are sent as they are; anything else as JSON. */
      body?: unknown;
      /** Wait this long before answering. */
      delayMs?: number;
    }
  /** Close the connection without an answer (the client sees a connection error). */
  | { reset: true }
  /** Never answer. */
  | { hang: true }
  /** Send the status and headers, then never send the body. */
  | { stallBody: true }
  | ((request: SeenRequest, response: ServerResponse) => void);

/** A node:http server on 127.0.0.1 that records every request and answers from a script. */
export interface TestServer {
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** Every request seen, in order. */
  requests: SeenRequest[];
  /**
   * Scripts `METHOD /path`: the n-th request gets the n-th reply, and the last reply
   * repeats. A path not scripted gets a 404 Error body that names it.
   */
  route(method: string, pathname: string, ...replies: Reply[]): void;
  /** The requests seen for one route. */
  seen(method: string, pathname: string): SeenRequest[];
  /** Resolves once `count` requests have arrived. */
  waitForRequests(count: number): Promise<void>;
  close(): Promise<void>;
}

function answer(reply: Reply, request: SeenRequest, response: ServerResponse): void {
  if (typeof reply === "function") return void reply(request, response);
  if ("reset" in reply) return void response.socket?.destroy();
  if ("hang" in reply) return;
  if ("stallBody" in reply) {
    response.writeHead(200, { "Content-Type": "application/json", "Content-Length": "100" });
    response.write("[");
    return;
  }
  const send = () => {
    const isRaw = typeof reply.body === "string" || Buffer.isBuffer(reply.body);
    const body = reply.body === undefined ? "" : isRaw ? (reply.body as string | Buffer) : JSON.stringify(reply.body);
    const headers = { ...(isRaw || reply.body === undefined ? {} : { "Content-Type": "application/json" }), ...reply.headers };
    response.writeHead(reply.status ?? 200, headers);
    response.end(body);
  };
  if (reply.delayMs) setTimeout(send, reply.delayMs);
  else send();
}

/**
 * The {@link TestServer} of one test file: started before its tests, its request log
 * cleared before each, closed after all. The object is filled in when `beforeAll` ran.
 */
export function useTestServer(): TestServer {
  const server = {} as TestServer;
  beforeAll(async () => {
    Object.assign(server, await startTestServer());
  });
  beforeEach(() => {
    server.requests.length = 0;
  });
  afterAll(() => server.close());
  return server;
}

/** Starts a {@link TestServer} on a free port of 127.0.0.1. */
export async function startTestServer(): Promise<TestServer> {
  const routes = new Map<string, Reply[]>();
  const counts = new Map<string, number>();
  const requests: SeenRequest[] = [];
  const waiters: { count: number; resolve: () => void }[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const url = new URL(req.url ?? "/", "http://127.0.0.1");
      const seen: SeenRequest = {
        method: req.method ?? "",
        url: req.url ?? "",
        pathname: url.pathname,
        query: url.searchParams,
        headers: req.headers,
        body: Buffer.concat(chunks),
      };
      requests.push(seen);
      for (const waiter of waiters.filter((w) => requests.length >= w.count)) waiter.resolve();
      const key = `${seen.method} ${seen.pathname}`;
      const replies = routes.get(key);
      if (!replies) {
        answer({ status: 404, body: { code: "not_found", message: `The test server has no route for ${key}.` } }, seen, res);
        return;
      }
      const n = counts.get(key) ?? 0;
      counts.set(key, n + 1);
      answer(replies[Math.min(n, replies.length - 1)]!, seen, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    route(method, pathname, ...replies) {
      routes.set(`${method} ${pathname}`, replies);
      counts.delete(`${method} ${pathname}`);
    },
    seen: (method, pathname) => requests.filter((r) => r.method === method && r.pathname === pathname),
    waitForRequests: (count) =>
      new Promise((resolve) => {
        if (requests.length >= count) resolve();
        else waiters.push({ count, resolve });
      }),
    close: () =>
      new Promise((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
