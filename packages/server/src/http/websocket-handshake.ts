import type { IncomingMessage } from "node:http";
import { ApiError } from "./api-errors.js";

// What a WebSocket handshake needs before ws may complete it: ws's own refusal is plain
// text, where every refusal of this server carries the spec's Error body.

/** RFC 6455 4.2.1: a key of 16 bytes in base64, and version 13 (ws also takes 8). */
const WEBSOCKET_KEY = /^[+/0-9A-Za-z]{22}==$/;
const WEBSOCKET_VERSIONS = ["13", "8"];
/** RFC 9110 5.6.2: a token. */
const WEBSOCKET_PROTOCOL = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** The 400 (with the Error body) for a WebSocket handshake that cannot be completed, or `undefined`; the DevTools endpoint and the live view use it. */
export function handshakeError(request: IncomingMessage): ApiError | undefined {
  const key = request.headers["sec-websocket-key"];
  const version = request.headers["sec-websocket-version"];
  const problem = (message: string, headers: Record<string, string> = {}) =>
    new ApiError(400, "bad_request", "The WebSocket handshake is invalid (1 problem).", {
      details: [{ code: "invalid_websocket_handshake", message }],
      headers,
    });
  // A handshake is a GET without a body: bytes after its head would be read as frames, and a
  // proxy in front could have read them as another request.
  if (request.headers["transfer-encoding"] !== undefined || Number(request.headers["content-length"] ?? 0) !== 0)
    return problem("A WebSocket handshake carries no body (no Content-Length or Transfer-Encoding).");
  if (key === undefined || !WEBSOCKET_KEY.test(key.trim())) return problem("Sec-WebSocket-Key must be 16 bytes in base64 (RFC 6455).");
  // RFC 6455 4.4: the refusal names the versions the server speaks.
  if (version === undefined || !WEBSOCKET_VERSIONS.includes(version.trim()))
    return problem(`Sec-WebSocket-Version must be 13; received ${JSON.stringify(version ?? null)}.`, { "sec-websocket-version": "13, 8" });
  // RFC 6455 4.1: a list of distinct tokens; ws refuses any other in plain text.
  const protocols = request.headers["sec-websocket-protocol"];
  if (protocols !== undefined) {
    const names = protocols.split(",").map((name) => name.trim());
    if (names.some((name) => !WEBSOCKET_PROTOCOL.test(name)) || new Set(names).size !== names.length)
      return problem("Sec-WebSocket-Protocol must be a comma-separated list of distinct tokens (RFC 6455).");
  }
  return undefined;
}
