import type { FastifyInstance, FastifyRequest } from "fastify";
import { NotFoundError } from "../http/api-errors.js";
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
  // Every method, so that no 405 with an Allow header tells the path apart from an unknown
  // one; refused in onRequest, before a body is read, so that no parsing error (400, 413,
  // 415) tells it apart either.
  const hidden = async (request: FastifyRequest) => {
    if (request.method !== "GET" || !cluster.isPeer(request.headers)) {
      throw new NotFoundError(`No operation matches ${request.method} ${(request.raw.url ?? "/").split("?")[0]}; see the API reference for the paths.`);
    }
  };
  app.all<{ Querystring: { ids?: string } }>(PEER_TOKENS_PATH, { config: { peer: true }, onRequest: hidden }, async (request) => {
    const ids = typeof request.query.ids === "string" ? request.query.ids.split(",").slice(0, MAX_IDS) : [];
    const tokens: Record<string, string> = {};
    for (const id of ids) {
      const token = browsers.token(id);
      if (token !== undefined) tokens[id] = token;
    }
    return { tokens };
  });
}
