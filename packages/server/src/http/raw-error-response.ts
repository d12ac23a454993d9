import { type ServerResponse, STATUS_CODES } from "node:http";
import type { Duplex } from "node:stream";
import type { ApiError } from "./api-errors.js";
import { newRequestId } from "./request-id.js";

/**
 * Writes an error as a whole HTTP/1.1 response straight to a socket, with the spec's
 * Error body, `X-Request-Id` and `Connection: close`, for answers given outside Fastify's
 * reply: Node's client errors, a refused WebSocket upgrade, a stalled body. The caller
 * ends or destroys the socket.
 */
export function writeRawError(socket: Duplex, error: ApiError): void {
  const body = JSON.stringify(error.toBody());
  const headers: Record<string, string> = {
    ...error.headers,
    "content-type": "application/json; charset=utf-8",
    "content-length": String(Buffer.byteLength(body)),
    "x-request-id": newRequestId(),
    connection: "close",
  };
  const head = Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join("");
  socket.write(`HTTP/1.1 ${error.status} ${STATUS_CODES[error.status] ?? ""}\r\n${head}\r\n${body}`);
}

/**
 * Answers a request Fastify never sees (its target refused before routing) with the
 * error, its Error body and `X-Request-Id`, and closes the connection after it: what the
 * client sent past its head is not read.
 */
export function answerRawError(response: ServerResponse, error: ApiError): void {
  const body = JSON.stringify(error.toBody());
  response.shouldKeepAlive = false;
  response.writeHead(error.status, {
    ...error.headers,
    "content-type": "application/json; charset=utf-8",
    "content-length": String(Buffer.byteLength(body)),
    "x-request-id": newRequestId(),
    connection: "close",
  });
  response.end(body);
}
