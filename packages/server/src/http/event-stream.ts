import type { ServerResponse } from "node:http";
import type { FastifyReply, FastifyRequest } from "fastify";

/**
 * Takes a request's answer over as a Server-Sent Events stream: `200` with
 * `text/event-stream`, never cached, and its headers sent at once (a stream may have
 * nothing to say for a while, and its reader waits for them). Every error must be
 * answered before this: from here on only events can be written.
 */
export function openEventStream(request: FastifyRequest, reply: FastifyReply): ServerResponse {
  reply.hijack();
  const raw = reply.raw;
  raw.writeHead(200, {
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-store",
    connection: "keep-alive",
    "x-request-id": request.id,
  });
  raw.flushHeaders();
  return raw;
}
