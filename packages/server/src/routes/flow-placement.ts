import type { FastifyReply, FastifyRequest } from "fastify";
import type { BrowserRow } from "../browsers/browser-store.js";
import { ConflictError } from "../http/api-errors.js";
import type { ApiDeps } from "./api-deps.js";
import { forwardToOwner } from "./browser-placement.js";

/** The header of a forwarded call naming the connection whose flow it is for. */
export const FLOW_CONNECTION_HEADER = "connection-id";

/**
 * The browser of connection `connectionId`'s flow when another node runs it: a submit or
 * delete goes there, where the flow waits in memory. `undefined` when this node runs it,
 * or none runs.
 */
async function flowBrowserElsewhere(deps: ApiDeps, projectId: string, connectionId: string): Promise<BrowserRow | undefined> {
  if (deps.cluster === undefined || deps.loginFlows.runs(connectionId)) return undefined;
  const record = (await deps.stores.authConnections.find(projectId, connectionId))?.record;
  if (record?.flow_status !== "IN_PROGRESS" || record.browser_session_id == null) return undefined;
  const browser = await deps.stores.browsers.findLaunched(record.browser_session_id);
  return browser?.project_id === projectId ? browser : undefined;
}

/**
 * Answers `request` (a submit or delete of connection `connectionId`, or the hosted page's
 * submit as `op`) by sending it to the node that runs the connection's flow, and says so
 * (`true`); `false` when this node answers it. The flow's node judges it as its own request.
 */
export async function forwardToFlow(
  deps: ApiDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  projectId: string,
  connectionId: string,
  op?: "submitAuthConnection",
): Promise<boolean> {
  const browser = await flowBrowserElsewhere(deps, projectId, connectionId);
  if (browser === undefined) return false;
  const unreachable = (why: string) =>
    new ConflictError(`The login flow of auth connection ${connectionId} runs on another node, which cannot be reached: ${why}. Try again.`);
  return forwardToOwner(deps, request, reply, browser, unreachable, {
    headers: { [FLOW_CONNECTION_HEADER]: connectionId },
    ...(op === undefined ? {} : { op }),
  });
}
