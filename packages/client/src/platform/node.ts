import { Agent as HttpAgent, type IncomingMessage, request as httpRequest } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import { UploadInputError } from "../errors.js";
import type { Transport } from "../transport.js";
import { BufferedResponse } from "./buffered-response.js";

// One keep-alive pool per protocol for the whole process, as fetch has. Idle sockets
// follow the server's `Keep-Alive: timeout` hint and do not keep the process alive.
const http = { send: httpRequest, agent: new HttpAgent({ keepAlive: true }) };
const https = { send: httpsRequest, agent: new HttpsAgent({ keepAlive: true }) };

// Statuses whose response may not carry a body (the Response constructor refuses one).
const nullBodyStatuses = new Set([101, 204, 205, 304]);

function toResponse(res: IncomingMessage, chunks: Buffer[]): Response {
  const headers = new Headers();
  for (let i = 0; i < res.rawHeaders.length; i += 2) headers.append(res.rawHeaders[i]!, res.rawHeaders[i + 1]!);
  const init = { status: res.statusCode ?? 0, statusText: res.statusMessage ?? "", headers };
  return nullBodyStatuses.has(init.status) ? new Response(null, init) : new BufferedResponse((chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)) as Uint8Array<ArrayBuffer>, init);
}

/**
 * Node's transport: `node:http` and `node:https` with keep-alive agents. A call costs
 * less than through `fetch`, which builds and checks its own Request and Response and
 * moves every body through web streams; this client does not need that, since bodies are
 * small JSON documents or uploads that are read whole anyway.
 */
export const transport: Transport = async (url, { method, headers, body, signal }) => {
  const head: Record<string, string> = {};
  headers.forEach((value, name) => {
    head[name] = value;
  });
  let bytes: string | Uint8Array | undefined;
  if (typeof body === "string") bytes = body;
  else if (body) {
    // FormData and other bodies are encoded as fetch would encode them, content type
    // (with a fresh multipart boundary) included.
    const encoded = new Response(body);
    bytes = new Uint8Array(await encoded.arrayBuffer());
    head["content-type"] ??= encoded.headers.get("content-type") ?? "application/octet-stream";
  }
  const { send, agent } = url.startsWith("https:") ? https : http;
  return new Promise((resolve, reject) => {
    // Listening to the signal here is cheaper than http.request's `signal` option, which
    // also watches the request stream's end.
    const onAbort = () => req.destroy(signal.reason);
    const fail = (error: unknown) => {
      signal.removeEventListener("abort", onAbort);
      reject(error);
    };
    const req = send(url, { method, headers: head, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("error", fail);
      res.on("end", () => {
        signal.removeEventListener("abort", onAbort);
        resolve(toResponse(res, chunks));
      });
    });
    req.on("error", fail);
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort);
    req.end(bytes);
  });
};

/** The bytes of a file. `node:fs` is imported on first use only. */
export async function readFile(path: string): Promise<Uint8Array<ArrayBuffer>> {
  const fs = await import("node:fs/promises");
  try {
    return (await fs.readFile(path)) as Uint8Array<ArrayBuffer>;
  } catch (cause) {
    throw new UploadInputError("upload_file_unreadable", `Cannot read ${path}: ${(cause as Error).message}`, { cause });
  }
}
