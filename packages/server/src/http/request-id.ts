import { randomBytes } from "node:crypto";
import type { FastifyInstance } from "fastify";

const ID_BYTES = 10;
// Random bytes are drawn for many ids at once: one call to the system's generator per id
// cost more than the rest of a request's id handling.
const POOL_IDS = 512;
let pool = Buffer.alloc(0);
let poolOffset = 0;

/** A new request id: `req_` and 20 hex characters (80 random bits). */
export function newRequestId(): string {
  if (poolOffset + ID_BYTES > pool.length) {
    pool = randomBytes(ID_BYTES * POOL_IDS);
    poolOffset = 0;
  }
  const id = `req_${pool.toString("hex", poolOffset, poolOffset + ID_BYTES)}`;
  poolOffset += ID_BYTES;
  return id;
}

/** Puts the request's id in the `X-Request-Id` header of every response, errors and 404s included. */
export function installRequestIdHeader(app: FastifyInstance): void {
  // A callback hook: an async one costs a promise and a microtask on every response.
  app.addHook("onSend", (request, reply, payload, done) => {
    reply.header("x-request-id", request.id);
    done(null, payload);
  });
}
