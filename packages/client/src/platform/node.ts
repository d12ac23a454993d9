import { Agent, type Dispatcher } from "undici";
import { type Transport, timedOut } from "../transport.js";
import { type ReceivedHeaders, ReceivedResponse, toHeaders } from "./received-response.js";

export { readFile } from "./files.js";

// One keep-alive pool per origin for the whole process, as fetch has (fetch is undici
// too, behind its Request, Response and web streams). Idle sockets follow the server's
// `Keep-Alive: timeout` hint and do not keep the process alive. undici's own limits (10 s
// to connect, 300 s for the headers and for each pause in the body) are off: each
// attempt's `timeoutMs` bounds the whole exchange, as it did over node:http.
const dispatcher = new Agent({ headersTimeout: 0, bodyTimeout: 0, connectTimeout: 0 });

// Headers about the connection itself, which the pool manages (undici refuses or drops
// them, as fetch does); a caller's are left out rather than failing every attempt.
const connectionHeaders = new Set(["connection", "keep-alive", "transfer-encoding", "upgrade", "expect"]);

/**
 * Node's transport: undici's `dispatch`, the layer under Node's own `fetch`, with the
 * body collected as the chunks arrive. A call costs less than through `fetch`, which
 * builds and checks its own Request and Response and moves every body through web
 * streams, and less than through `node:http` (`bench/client.mjs`); this client needs
 * neither streams nor a Response per call, since bodies are small JSON documents or
 * uploads that are read whole anyway; an event stream (`stream`) is the one body handed
 * over as it arrives.
 */
export const transport: Transport = (url, { method, headers, body, signal, stream = false }, timeoutMs) => {
  // The client reuses one Headers for the calls that add none (never changing it), so its
  // plain form is kept too; a body's content type is added to a copy below.
  let head = plainHeaders.get(headers);
  if (head === undefined) {
    head = {};
    headers.forEach((value, name) => {
      if (!connectionHeaders.has(name)) (head as Record<string, string>)[name] = value;
    });
    plainHeaders.set(headers, head);
  }
  // No body or a JSON text (every call but uploads) is sent at once, without a promise more.
  if (body === undefined || body === null || typeof body === "string") return exchange(url, method, head, body ?? undefined, signal, timeoutMs, stream);
  // FormData and other bodies are encoded as fetch would encode them, content type (with
  // a fresh multipart boundary) included.
  const encoded = new Response(body);
  const plain = head;
  return encoded.arrayBuffer().then((bytes) => {
    const withType = { ...plain, "content-type": plain["content-type"] ?? encoded.headers.get("content-type") ?? "application/octet-stream" };
    return exchange(url, method, withType, new Uint8Array(bytes), signal, timeoutMs, stream);
  });
};

const plainHeaders = new WeakMap<Headers, Record<string, string>>();

/**
 * One request and its whole response, under a timer and the caller's signal; with
 * `stream`, a 2xx response as soon as its headers arrive, its body a stream that the
 * caller's signal (not the timer) still stops.
 */
function exchange(
  url: string,
  method: string,
  head: Record<string, string>,
  bytes: string | Uint8Array | undefined,
  signal: AbortSignal | null | undefined,
  timeoutMs: number,
  stream: boolean,
): Promise<Response> {
  return new Promise((resolve, reject) => {
    // The request's controller exists only once undici starts sending it (a request may
    // wait for a free connection first); a timeout or an abort before then stops it there.
    let controller: Dispatcher.DispatchController | undefined;
    let stopped: Error | undefined;
    let settled = false;
    const stop = (reason: Error) => {
      if (settled) return;
      finish();
      stopped = reason;
      controller?.abort(reason);
      reject(reason);
    };
    // The body of a streamed response, while it is open.
    let body: ReadableStreamDefaultController<Uint8Array<ArrayBuffer>> | undefined;
    const endBody = (end: (body: ReadableStreamDefaultController<Uint8Array<ArrayBuffer>>) => void) => {
      signal?.removeEventListener("abort", onAbort);
      if (body) end(body);
      body = undefined;
    };
    // Listening to the signal here is cheaper than undici's `signal` option; a plain timer
    // is cheaper than an AbortController.
    const onAbort = () => {
      if (!body) return stop(abortReason(signal));
      const reason = abortReason(signal);
      endBody((b) => b.error(reason));
      controller?.abort(reason);
    };
    const timer = setTimeout(() => stop(timedOut), timeoutMs);
    const finish = () => {
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
    };
    let status = 0;
    let statusText = "";
    let received: ReceivedHeaders = {};
    const chunks: Buffer[] = [];
    const handler: Dispatcher.DispatchHandler = {
      onRequestStart(started) {
        controller = started;
        if (stopped !== undefined) started.abort(stopped);
      },
      onResponseStart(started, statusCode, responseHeaders, statusMessage) {
        status = statusCode;
        statusText = statusMessage ?? "";
        received = responseHeaders;
        if (!stream || settled || statusCode < 200 || statusCode > 299 || nullBodyStatuses.has(statusCode)) return;
        // Handed over now: the timer covered the headers; the caller's signal stays on.
        settled = true;
        clearTimeout(timer);
        const readable = new ReadableStream<Uint8Array<ArrayBuffer>>({
          start: (opened) => void (body = opened),
          // Paused when the reader fell behind (below), resumed when it asks for more.
          pull: () => started.resume(),
          cancel: (reason) => endBody(() => started.abort(reason instanceof Error ? reason : new Error("The stream was canceled."))),
        });
        resolve(new Response(readable, { status, statusText, headers: toHeaders(received) }));
      },
      onResponseData(started, chunk) {
        if (!body) return void (settled || chunks.push(chunk));
        body.enqueue(new Uint8Array(chunk));
        if ((body.desiredSize ?? 1) <= 0) started.pause();
      },
      onResponseEnd() {
        if (body) return endBody((b) => b.close());
        if (settled) return;
        finish();
        const whole = (chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)) as Uint8Array<ArrayBuffer>;
        // The request loop reads only what a ReceivedResponse has (status, headers, the body
        // as text or JSON), and hands callers its toResponse(); a Response is built only then.
        resolve(new ReceivedResponse(status, statusText, received, whole) as unknown as Response);
      },
      onResponseError(_, error) {
        if (body) return endBody((b) => b.error(error));
        if (settled) return;
        finish();
        reject(error);
      },
    };
    if (signal?.aborted) {
      onAbort();
      return;
    }
    signal?.addEventListener("abort", onAbort);
    const pathStart = url.indexOf("/", url.indexOf("//") + 2) >>> 0;
    // A malformed origin or header value comes back through onResponseError too.
    dispatcher.dispatch({ origin: url.slice(0, pathStart), path: url.slice(pathStart) || "/", method, headers: head, body: bytes ?? null }, handler);
  });
}

/** Statuses whose response may not carry a body (the Response constructor refuses one). */
const nullBodyStatuses = new Set([204, 205]);

/** What stops a request its caller aborted: the signal's reason when it is an Error. */
function abortReason(signal: AbortSignal | null | undefined): Error {
  const reason: unknown = signal?.reason;
  return reason instanceof Error ? reason : new Error("The request was aborted.");
}
