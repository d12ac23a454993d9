import type { FastifyInstance } from "fastify";

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
  app.addHook("onRequest", async (request) => {
    setIdleTimeout(request.raw.socket, idleMs);
  });
  app.addHook("preHandler", async (request) => {
    if (!/^multipart\//i.test(request.headers["content-type"] ?? "")) setIdleTimeout(request.raw.socket, 0);
  });
  app.addHook("onResponse", async (request) => {
    setIdleTimeout(request.raw.socket, 0);
  });
}

// In-process requests (`app.inject`) have a stand-in socket without timers: nothing to bound there.
function setIdleTimeout(socket: { setTimeout?: (ms: number) => unknown }, ms: number): void {
  if (typeof socket.setTimeout === "function") socket.setTimeout(ms);
}
