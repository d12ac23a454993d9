import type { IncomingHttpHeaders } from "node:http";
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
  // Callback hooks: an async one costs a promise and a microtask on every request.
  app.addHook("onRequest", (request, reply, done) => {
    // A request without a body (no Content-Length, or 0, and no Transfer-Encoding: every
    // GET a client sends) has nothing left to stall on: no timer, no listener.
    if (hasBody(request.headers) && setIdleTimeout(request.raw.socket, idleMs)) {
      armed.add(request.raw);
      // Listening here keeps Node from destroying the socket unanswered: the client is told why.
      request.raw.once("timeout", () => {
        const socket = request.raw.socket;
        if (!reply.sent && !reply.raw.headersSent && socket.writable)
          writeRawError(socket, new RequestTimeoutError(`No part of the request body arrived for ${idleMs / 1000} s; send it again without pausing.`));
        socket.destroy();
      });
    }
    done();
  });
  app.addHook("preHandler", (request, _reply, done) => {
    if (armed.has(request.raw) && !/^multipart\//i.test(request.headers["content-type"] ?? "")) disarm(request.raw);
    done();
  });
  app.addHook("onResponse", (request, _reply, done) => {
    if (armed.has(request.raw)) disarm(request.raw);
    done();
  });
}

// The requests whose socket has the timer running.
const armed = new WeakSet<object>();

function disarm(raw: { socket: { setTimeout?: (ms: number) => unknown } }): void {
  armed.delete(raw);
  setIdleTimeout(raw.socket, 0);
}

function hasBody(headers: IncomingHttpHeaders): boolean {
  return headers["transfer-encoding"] !== undefined || (headers["content-length"] !== undefined && headers["content-length"] !== "0");
}

// In-process requests (`app.inject`) have a stand-in socket without timers: nothing to bound there.
function setIdleTimeout(socket: { setTimeout?: (ms: number) => unknown }, ms: number): boolean {
  if (typeof socket.setTimeout !== "function") return false;
  socket.setTimeout(ms);
  return true;
}
