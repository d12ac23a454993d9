import type { FastifyInstance } from "fastify";
import { RequestTimeoutError } from "./api-errors.js";
import { writeRawError } from "./raw-error-response.js";

/**
 * Closes the connection of a request whose body stops arriving for `idleMs`: a client
 * that sends headers and then stalls must not hold a connection, a parser and a
 * handler open for good. The timer runs on the socket from the moment a request
 * arrives until its body has been read; it is then cleared, so a handler that waits (a
 * WebMCP invocation, up to its `timeout_sec`) is not cut off. A multipart upload is read
 * by its handler, so its timer runs until the response.
 */
export function installBodyIdleTimeout(app: FastifyInstance, idleMs: number): void {
  if (idleMs <= 0) return;
  app.addHook("onRequest", async (request, reply) => {
    if (!setIdleTimeout(request.raw.socket, idleMs)) return;
    // Listening here keeps Node from destroying the socket unanswered: the client is told why.
    request.raw.once("timeout", () => {
      const socket = request.raw.socket;
      if (!reply.sent && !reply.raw.headersSent && socket.writable) writeRawError(socket, new RequestTimeoutError(`No part of the request body arrived for ${idleMs / 1000} s; send it again without pausing.`));
      socket.destroy();
    });
  });
  app.addHook("preHandler", async (request) => {
    if (!/^multipart\//i.test(request.headers["content-type"] ?? "")) setIdleTimeout(request.raw.socket, 0);
  });
  app.addHook("onResponse", async (request) => {
    setIdleTimeout(request.raw.socket, 0);
  });
}

// In-process requests (`app.inject`) have a stand-in socket without timers: nothing to bound there.
function setIdleTimeout(socket: { setTimeout?: (ms: number) => unknown }, ms: number): boolean {
  if (typeof socket.setTimeout !== "function") return false;
  socket.setTimeout(ms);
  return true;
}
