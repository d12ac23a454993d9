import type { FastifyReply, FastifyRequest } from "fastify";
import type { BrowserRow } from "../browsers/browser-store.js";
import { type ApiError, ConflictError, InternalError } from "../http/api-errors.js";
import { PEER_SCOPE_HEADER } from "../nodes/peer-auth.js";
import { PeerUnreachableError } from "../nodes/peer-forwarder.js";
import type { ProjectRow } from "../projects/project-store.js";
import type { ApiDeps } from "./api-deps.js";

/**
 * The header carrying what this node resolved for `request` (its credential, organization
 * and `project`), so that the node it forwards to reads none of it again.
 */
export function resolvedScopeHeader(request: FastifyRequest, project: ProjectRow, browser?: BrowserRow): Record<string, string> {
  const { credential, org } = request.scope;
  return { [PEER_SCOPE_HEADER]: Buffer.from(JSON.stringify({ credential, org, project, browser })).toString("base64url") };
}

/**
 * The browser a request names in its path: read from the store, or, for a request another
 * node forwarded, the row that node read (it sends it with the scope), so that a
 * forwarded request costs the owner no read. A 404 `not_found` when there is none.
 */
export function browserOfRequest(deps: ApiDeps, request: FastifyRequest<{ Params: { id_or_name: string } }>, project: ProjectRow): Promise<BrowserRow> {
  const forwarded = request.forwardedBrowser;
  if (forwarded !== undefined && forwarded.id === request.params.id_or_name && forwarded.project_id === project.id) return Promise.resolve(forwarded);
  return deps.stores.browsers.getByIdOrName(project.id, request.params.id_or_name);
}

/**
 * Answers a request about a running browser of another node by forwarding it there, so
 * that the owner applies its own checks and limits, and says so (`true`); `false` when this node serves it
 * (its own browser, a crashed one, or a single server). `unreachable` makes the error for
 * an owner that does not answer. The owner gets the browser by its id and the scope
 * resolved here (`project` is the request's), so it reads neither again.
 */
export async function forwardToOwner(
  deps: ApiDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  row: BrowserRow,
  project: ProjectRow,
  unreachable: (why: string) => ApiError,
  options: { leaveOnHalfClose?: boolean } = {},
): Promise<boolean> {
  const cluster = deps.cluster;
  if (cluster === undefined || row.status !== "running") return false;
  const where = cluster.locate(row.node_id);
  if (where === "self") return false;
  const forwarder = cluster.forwarder;
  if (where === "unreachable" || forwarder === undefined) throw unreachable(`its node (${row.node_id}) cannot be reached from this one`);
  try {
    // `/browsers/{id_or_name}/rest?query` with the id: the owner finds the row in one read.
    const url = request.raw.url ?? "/";
    const path = url.replace(/^\/browsers\/[^/?]+/, `/browsers/${encodeURIComponent(row.id)}`);
    await forwarder.forward(request, reply, where.url, deps.rateLimits.clientKey(request.raw), {
      headers: resolvedScopeHeader(request, project, row),
      path,
      ...(options.leaveOnHalfClose === undefined ? {} : { leaveOnHalfClose: options.leaveOnHalfClose }),
    });
    return true;
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
