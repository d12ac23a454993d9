import { randomBytes } from "node:crypto";
import type { FastifyInstance } from "fastify";

/** A new request id: `req_` and 20 hex characters. */
export function newRequestId(): string {
  return `req_${randomBytes(10).toString("hex")}`;
}

/** Puts the request's id in the `X-Request-Id` header of every response, errors and 404s included. */
export function installRequestIdHeader(app: FastifyInstance): void {
  app.addHook("onSend", async (request, reply, payload) => {
    reply.header("x-request-id", request.id);
    return payload;
  });
}
