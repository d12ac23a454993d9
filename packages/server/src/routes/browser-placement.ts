import type { FastifyReply, FastifyRequest } from "fastify";
import type { Credential } from "../auth/api-key-store.js";
import type { BrowserRow } from "../browsers/browser-store.js";
import { type ApiError, ConflictError, InternalError, OutcomeUnknownError } from "../http/api-errors.js";
import type { PeerCall, PeerOperationName } from "../nodes/peer-calls.js";
import { PeerLostError, PeerUnreachableError } from "../nodes/peer-forwarder.js";
import type { Organization } from "../organization/organization-store.js";
import type { ProjectRow } from "../projects/project-store.js";
import type { ApiDeps } from "./api-deps.js";

/** What a node resolved for a request it forwards: the key, its organization, and the project acted on. */
export interface ResolvedScope {
  credential: Credential;
  org: Organization;
  project: ProjectRow;
}

/**
 * What this node resolved for `request` (its credential, organization and `project`), as
 * the scope claim of a forwarded request (base64url JSON), so that the node it forwards
 * to authenticates nothing again; the proof of the request covers it.
 */
export function resolvedScopeClaim(request: FastifyRequest, project: ProjectRow): string {
  const { credential, org } = request.scope;
  const scope: ResolvedScope = { credential, org, project };
  return Buffer.from(JSON.stringify(scope)).toString("base64url");
}

/** The browser a request names in its path, in the request's project: a 404 `not_found` when there is none. */
export function browserOfRequest(deps: ApiDeps, request: FastifyRequest<{ Params: { id_or_name: string } }>, project: ProjectRow): Promise<BrowserRow> {
  return deps.stores.browsers.getByIdOrName(project.id, request.params.id_or_name);
}

function operationOf(request: FastifyRequest): PeerOperationName {
  const op = request.routeOptions.config.operationId;
  if (op === undefined) throw new Error(`The route of ${request.method} ${request.routeOptions.url} has no operationId to forward.`);
  return op;
}

/**
 * Answers a request about a running browser of another node by sending its operation
 * there, so that the owner applies its own checks and limits, and says so (`true`);
 * `false` when this node serves it (its own browser, a crashed one, or a single server).
 * `unreachable` makes the error for an owner that cannot be reached (nothing ran there),
 * `options.lost` (default `unreachable`) for one that had the call and stopped answering.
 * The owner gets the browser's row read here (the caller may use it), so it reads nothing
 * again. `options.op` names the owner's operation for a route outside the spec (default:
 * the route's own); `options.headers` go with the call beside the request's own.
 */
export async function forwardToOwner(
  deps: ApiDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  row: BrowserRow,
  unreachable: (why: string) => ApiError,
  options: { leaveOnHalfClose?: boolean; lost?: (why: string) => ApiError; op?: PeerOperationName; headers?: Record<string, string> } = {},
): Promise<boolean> {
  const cluster = deps.cluster;
  if (cluster === undefined || row.status !== "running") return false;
  const where = cluster.locate(row.node_id);
  if (where === "self") return false;
  const forwarder = cluster.forwarder;
  if (where === "unreachable" || forwarder === undefined) throw unreachable(`its node (${row.node_id}) cannot be reached from this one`);
  const ifNoneMatch = request.headers["if-none-match"];
  try {
    await forwarder.call(request, reply, where, deps.rateLimits.clientKey(request.raw), {
      op: options.op ?? operationOf(request),
      browser: row,
      headers: { ...options.headers, ...(ifNoneMatch === undefined ? {} : { "if-none-match": ifNoneMatch }) },
      ...(options.leaveOnHalfClose === undefined ? {} : { leaveOnHalfClose: options.leaveOnHalfClose }),
    });
    return true;
  } catch (error) {
    if (error instanceof PeerUnreachableError) throw unreachable(`its node (${row.node_id}) does not answer`);
    if (error instanceof PeerLostError) throw (options.lost ?? unreachable)(`its node (${row.node_id}) stopped answering`);
    throw error;
  }
}

/**
 * The browser row a peer call names, as the owner's operations take it: one of this
 * node's (`nodeId`), or a 409 `conflict` (its node changed, or the row is not one).
 */
export function peerCallBrowser(call: PeerCall, nodeId: string): BrowserRow {
  const row = call.browser as Partial<BrowserRow>;
  if (typeof row.id !== "string" || row.node_id !== nodeId) {
    throw new ConflictError(`Browser ${String(row.id)} is not served by this node (${nodeId}); its node changed. Send the request again.`);
  }
  return row as BrowserRow;
}

/** The 409 of a WebMCP call or DevTools connection to a browser whose node does not answer. */
export function ownerUnreachable(row: BrowserRow): (why: string) => ConflictError {
  return (why) => new ConflictError(`Browser ${row.id} cannot be reached: ${why}. If the node is gone, the browser is marked crashed within seconds.`);
}

/**
 * The 504 `outcome_unknown` of an invocation whose browser's node had it and stopped
 * answering: the tool may have run, so the caller must not take it for not run.
 */
export function invocationLost(row: BrowserRow): (why: string) => OutcomeUnknownError {
  return (why) => new OutcomeUnknownError(`The invocation was sent to browser ${row.id}, but ${why}: the tool may have run.`, undefined);
}

/** The 500 of a delete of a browser whose node does not answer: it cannot be stopped from here. */
export function deleteUnreachable(row: BrowserRow): (why: string) => InternalError {
  return (why) =>
    new InternalError(`Browser ${row.id} cannot be stopped now: ${why}. If the node is gone, the browser is marked crashed within seconds; delete it then.`);
}
