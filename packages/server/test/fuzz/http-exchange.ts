import { Agent, request as httpRequest } from "node:http";
import { connect } from "node:net";
import type { HttpRequest } from "./operation-requests.js";

/** What came back: a response, or the connection ending without one. */
export type Exchange = { status: number; headers: Record<string, string>; body: string } | { error: string };

// A request that hangs would stall the suite; none should take near this long.
const EXCHANGE_TIMEOUT_MS = 30_000;

/** Sends requests to one base URL over kept-alive connections, as ordinary clients do. */
export class HttpSender {
  readonly #agent: Agent;
  readonly #host: string;
  readonly #port: number;

  /** `connections`: how many requests may be in flight at once (1: one after another). */
  constructor(baseUrl: string, connections = 1) {
    this.#agent = new Agent({ keepAlive: true, maxSockets: connections });
    const url = new URL(baseUrl);
    this.#host = url.hostname;
    this.#port = Number(url.port);
  }

  /** Sends `request` and reads the whole response. */
  send(request: HttpRequest): Promise<Exchange> {
    return new Promise((resolve) => {
      let settled = false;
      const done = (exchange: Exchange) => {
        if (!settled) resolve(exchange);
        settled = true;
      };
      const headers = { ...request.headers, ...(request.body === undefined ? {} : { "content-length": String(request.body.length) }) };
      let responded = false;
      const outgoing = httpRequest(
        { host: this.#host, port: this.#port, method: request.method, path: request.target, headers, agent: this.#agent, timeout: EXCHANGE_TIMEOUT_MS },
        (response) => {
          responded = true;
          const chunks: Buffer[] = [];
          response.on("data", (chunk: Buffer) => chunks.push(chunk));
          response.on("end", () =>
            done({ status: response.statusCode ?? 0, headers: flatten(response.headers), body: Buffer.concat(chunks).toString("utf8") }),
          );
          response.on("error", (error) => done({ error: `response: ${error.message}` }));
          // After "end" this changes nothing; before it, the answer was cut short.
          response.on("close", () => done({ error: "the response was cut short" }));
        },
      );
      outgoing.on("timeout", () => outgoing.destroy(new Error(`no response within ${EXCHANGE_TIMEOUT_MS} ms`)));
      // A server may answer (413) and close before a large body is written: the answer
      // counts, the write error does not. Without an answer yet, one may still be on its way.
      outgoing.on("error", (error) => {
        if (!responded) setTimeout(() => done({ error: error.message }), 500);
      });
      outgoing.end(request.body);
    });
  }

  /** Closes the kept-alive connections. */
  close(): void {
    this.#agent.destroy();
  }
}

function flatten(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) if (value !== undefined) out[name] = Array.isArray(value) ? value.join(", ") : value;
  return out;
}

/**
 * Sends bytes as they are on a new connection (what no HTTP client would send) and reads
 * until the server closes it or `idleMs` pass without data after the first response.
 */
export function sendRaw(baseUrl: string, bytes: string | Buffer, options: { halfClose?: boolean } = {}): Promise<Exchange> {
  const url = new URL(baseUrl);
  return new Promise((resolve) => {
    const socket = connect(Number(url.port), url.hostname);
    const chunks: Buffer[] = [];
    let timer: NodeJS.Timeout | undefined;
    const finish = () => {
      clearTimeout(timer);
      socket.destroy();
      const text = Buffer.concat(chunks).toString("latin1");
      if (text === "") {
        resolve({ error: "the connection closed without a response" });
        return;
      }
      resolve(parseResponse(text));
    };
    timer = setTimeout(finish, EXCHANGE_TIMEOUT_MS);
    socket.on("data", (chunk: Buffer) => {
      chunks.push(chunk);
      // One response is all a case needs: stop once its body is complete.
      const parsed = parseResponse(Buffer.concat(chunks).toString("latin1"));
      if ("status" in parsed && parsed.complete) finish();
    });
    socket.on("error", () => undefined);
    socket.on("close", finish);
    if (options.halfClose === false) socket.write(bytes);
    else socket.end(bytes);
  });
}

/** Parses an HTTP/1.1 response from text; `complete` once the body has its Content-Length (or the head says it has none). */
function parseResponse(text: string): ({ status: number; headers: Record<string, string>; body: string } & { complete: boolean }) | { error: string } {
  const end = text.indexOf("\r\n\r\n");
  if (end < 0) return { error: `not an HTTP response: ${JSON.stringify(text.slice(0, 200))}` };
  const [statusLine = "", ...lines] = text.slice(0, end).split("\r\n");
  // An interim answer (100 Continue) comes before the one that counts; 101 is final for an upgrade.
  if (/^HTTP\/1\.[01] 1(?:0[02-9]|[1-9]\d) /.test(statusLine)) return parseResponse(text.slice(end + 4));
  const headers: Record<string, string> = {};
  for (const line of lines) headers[line.slice(0, line.indexOf(":")).toLowerCase()] = line.slice(line.indexOf(":") + 1).trim();
  const raw = Buffer.from(text.slice(end + 4), "latin1");
  const length = headers["content-length"] === undefined ? undefined : Number(headers["content-length"]);
  const status = Number(statusLine.split(" ")[1]);
  return { status, headers, body: raw.toString("utf8"), complete: length === undefined ? [101, 204, 304].includes(status) : raw.length >= length };
}
