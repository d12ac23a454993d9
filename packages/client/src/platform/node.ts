import { Agent as HttpAgent, type IncomingMessage, request as httpRequest } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import { UploadInputError } from "../errors.js";
import { timedOut, type Transport } from "../transport.js";
import { ReceivedResponse } from "./received-response.js";

// One keep-alive pool per protocol for the whole process, as fetch has. Idle sockets
// follow the server's `Keep-Alive: timeout` hint and do not keep the process alive.
const http = { send: httpRequest, agent: new HttpAgent({ keepAlive: true }) };
const https = { send: httpsRequest as typeof httpRequest, agent: new HttpsAgent({ keepAlive: true }) as HttpAgent };

function received(res: IncomingMessage, chunks: Buffer[]): Response {
  const bytes = (chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)) as Uint8Array<ArrayBuffer>;
  // The request loop reads only what a ReceivedResponse has (status, headers, the body as
  // text or JSON), and hands callers its toResponse(); a Response is built only then.
  return new ReceivedResponse(res.statusCode ?? 0, res.statusMessage ?? "", res.rawHeaders, bytes) as unknown as Response;
}

/**
 * Node's transport: `node:http` and `node:https` with keep-alive agents. A call costs
 * less than through `fetch`, which builds and checks its own Request and Response and
 * moves every body through web streams; this client does not need that, since bodies are
 * small JSON documents or uploads that are read whole anyway.
 */
export const transport: Transport = (url, { method, headers, body, signal }, timeoutMs) => {
  // The client reuses one Headers for the calls that add none (never changing it), so its
  // plain form is kept too; a body's content type is added to a copy below.
  let head = plainHeaders.get(headers);
  if (head === undefined) {
    head = {};
    headers.forEach((value, name) => {
      (head as Record<string, string>)[name] = value;
    });
    plainHeaders.set(headers, head);
  }
  // No body or a JSON text (every call but uploads) is sent at once, without a promise more.
  if (body === undefined || body === null || typeof body === "string") return exchange(url, method, head, body ?? undefined, signal, timeoutMs);
  // FormData and other bodies are encoded as fetch would encode them, content type (with
  // a fresh multipart boundary) included.
  const encoded = new Response(body);
  const plain = head;
  return encoded.arrayBuffer().then((bytes) => {
    const withType = { ...plain, "content-type": plain["content-type"] ?? encoded.headers.get("content-type") ?? "application/octet-stream" };
    return exchange(url, method, withType, new Uint8Array(bytes), signal, timeoutMs);
  });
};

/** One request and its whole response, under a timer and the caller's signal. */
function exchange(url: string, method: string, head: Record<string, string>, bytes: string | Uint8Array | undefined, signal: AbortSignal | null | undefined, timeoutMs: number): Promise<Response> {
  const { send, agent, options } = target(url);
  return new Promise((resolve, reject) => {
    let late = false;
    // Listening to the signal here is cheaper than http.request's `signal` option, which
    // also watches the request stream's end; a plain timer is cheaper than an AbortController.
    const onAbort = () => req.destroy(signal?.reason);
    const timer = setTimeout(() => {
      late = true;
      req.destroy(timedOut);
    }, timeoutMs);
    const settle = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
    };
    const fail = (error: unknown) => {
      settle();
      reject(late ? timedOut : error);
    };
    const req = send({ ...options, path: url.slice(options.origin.length), method, headers: head, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("error", fail);
      res.on("end", () => {
        settle();
        resolve(received(res, chunks));
      });
    });
    req.on("error", fail);
    if (signal?.aborted) onAbort();
    else signal?.addEventListener("abort", onAbort);
    req.end(bytes);
  });
}

const plainHeaders = new WeakMap<Headers, Record<string, string>>();

interface Target {
  send: typeof httpRequest;
  agent: HttpAgent;
  options: { origin: string; protocol: string; hostname: string; port: string };
}

// The parsed origin of each base URL seen: parsing the whole URL of every call (what
// http.request does with a string) cost more than the rest of building the request.
const targets = new Map<string, Target>();
const MAX_TARGETS = 64;

function target(url: string): Target {
  const origin = url.slice(0, url.indexOf("/", url.indexOf("//") + 2) >>> 0);
  let found = targets.get(origin);
  if (found === undefined) {
    const parsed = new URL(origin);
    const { send, agent } = parsed.protocol === "https:" ? https : http;
    // WHATWG keeps IPv6 hosts in brackets; http.request wants them bare.
    found = { send, agent, options: { origin, protocol: parsed.protocol, hostname: parsed.hostname.replace(/^\[(.*)\]$/, "$1"), port: parsed.port } };
    if (targets.size >= MAX_TARGETS) targets.delete(targets.keys().next().value as string);
    targets.set(origin, found);
  }
  return found;
}

/** The bytes of a file. `node:fs` is imported on first use only. */
export async function readFile(path: string): Promise<Uint8Array<ArrayBuffer>> {
  const fs = await import("node:fs/promises");
  try {
    return (await fs.readFile(path)) as Uint8Array<ArrayBuffer>;
  } catch (cause) {
    throw new UploadInputError("upload_file_unreadable", `Cannot read ${path}: ${(cause as Error).message}`, { cause });
  }
}
