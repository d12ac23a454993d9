import type { FastifyReply, FastifyRequest } from "fastify";
import type { BrowserRow } from "../browsers/browser-store.js";
import { type ApiError, ConflictError, InternalError } from "../http/api-errors.js";
import { PeerUnreachableError } from "../nodes/peer-forwarder.js";
import type { ApiDeps } from "./api-deps.js";

/**
 * Answers a request about a running browser of another node by forwarding it there, so
 * that the owner applies its own checks and limits; `undefined` when this node serves it
 * (its own browser, a crashed one, or a single server). `unreachable` makes the error for
 * an owner that does not answer.
 */
export async function forwardToOwner(
  deps: ApiDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  row: BrowserRow,
  unreachable: (why: string) => ApiError,
): Promise<FastifyReply | undefined> {
  const cluster = deps.cluster;
  if (cluster === undefined || row.status !== "running") return undefined;
  const where = cluster.locate(row.node_id);
  if (where === "self") return undefined;
  const forwarder = cluster.forwarder;
  if (where === "unreachable" || forwarder === undefined) throw unreachable(`its node (${row.node_id}) cannot be reached from this one`);
  try {
    return await forwarder.forward(request, reply, where.url, deps.rateLimits.clientKey(request.raw));
  } catch (error) {
    if (error instanceof PeerUnreachableError) throw unreachable(`its node (${row.node_id}) does not answer`);
    throw error;
  }
}

/** The 409 of a WebMCP call or DevTools connection to a browser whose node does not answer. */
export function ownerUnreachable(row: BrowserRow): (why: string) => ConflictError {
  return (why) => new ConflictError(`Browser ${row.id} cannot be reached: ${why}. If the node is gone, the browser is marked crashed within seconds.`);
}

/** The 500 of a delete of a browser whose node does not answer: it cannot be stopped from here. */
export function deleteUnreachable(row: BrowserRow): (why: string) => InternalError {
  return (why) =>
    new InternalError(`Browser ${row.id} cannot be stopped now: ${why}. If the node is gone, the browser is marked crashed within seconds; delete it then.`);
}
