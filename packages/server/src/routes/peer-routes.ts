import type { FastifyInstance } from "fastify";
import { PEER_TOKENS_PATH } from "../nodes/cluster.js";
import type { ApiDeps } from "./api-deps.js";

// A page of browsers holds at most 100 (the spec's `limit`): a node never asks for more.
const MAX_IDS = 100;

/**
 * The route only other nodes call: the DevTools tokens of this node's running browsers,
 * which it keeps in memory only, so that any node can show a browser's `cdp_ws_url`.
 * Without the nodes' secret it is a path without an operation (404 `not_found`, as any
 * other), so clients learn nothing from it.
 */
export function registerPeerRoutes(app: FastifyInstance, { browsers, cluster }: ApiDeps): void {
  if (cluster === undefined) return;
  app.get<{ Querystring: { ids?: string } }>(PEER_TOKENS_PATH, { config: { peer: true } }, async (request, reply) => {
    if (!cluster.isPeer(request.headers)) return reply.callNotFound();
    const ids = typeof request.query.ids === "string" ? request.query.ids.split(",").slice(0, MAX_IDS) : [];
    const tokens: Record<string, string> = {};
    for (const id of ids) {
      const token = browsers.token(id);
      if (token !== undefined) tokens[id] = token;
    }
    return { tokens };
  });
}
