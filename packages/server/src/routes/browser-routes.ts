import type { CreateBrowserRequest } from "@browser-service/types";
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { CreateBrowserInput } from "../browsers/browser-service.js";
import { type BrowserExtension, type BrowserRow, toBrowser } from "../browsers/browser-store.js";
import { resolveExtensionRefs } from "../extensions/extension-refs.js";
import { pageOf, setPageHeaders } from "../http/paging.js";
import { PLACED_HEADER } from "../nodes/peer-auth.js";
import { PeerUnreachableError } from "../nodes/peer-forwarder.js";
import type { ApiDeps } from "./api-deps.js";
import { browserOfRequest, deleteUnreachable, forwardToOwner, resolvedScopeHeader } from "./browser-placement.js";

/** `/browsers` and `/browsers/{id_or_name}`: the minimal browser operations. */
export function registerBrowserRoutes(app: FastifyInstance, deps: ApiDeps): void {
  const { stores, browsers, browserUrls, cluster } = deps;
  // `cdp_ws_url` names the host this request reached, and carries the token while the browser
  // runs (another node's browsers' tokens come from their node: see `tokens` below).
  // Its extensions are read here, where a Browser is shown, once per page of them.
  const show = (request: FastifyRequest, row: BrowserRow, extensions: Map<string, BrowserExtension[]>, tokens?: Map<string, string>) =>
    toBrowser(row, browserUrls.forBrowser(request.headers, row.id, browsers.token(row.id) ?? tokens?.get(row.id)), extensions.get(row.id) ?? []);
  const showOne = async (request: FastifyRequest, row: BrowserRow) => show(request, row, await stores.browsers.extensionsOf([row.id]));
  /** The tokens of the running browsers of other nodes among `rows`, asked of their nodes (one request per node). */
  const tokens = async (request: FastifyRequest, rows: readonly BrowserRow[]): Promise<Map<string, string>> => {
    const found = new Map<string, string>();
    if (cluster === undefined) return found;
    const byNode = new Map<string, string[]>();
    for (const row of rows) {
      if (row.status !== "running" || cluster.locate(row.node_id) === "self" || row.node_id === undefined) continue;
      byNode.set(row.node_id, [...(byNode.get(row.node_id) ?? []), row.id]);
    }
    await Promise.all(
      [...byNode].map(async ([nodeId, ids]) => {
        try {
          for (const [id, token] of await cluster.tokensOf(nodeId, ids)) found.set(id, token);
        } catch (error) {
          // Shown without its token (its API key still opens it); the node may be going away.
          request.log.warn({ err: error, node: nodeId }, "could not read the DevTools tokens of another node's browsers");
        }
      }),
    );
    return found;
  };

  app.post("/browsers", { config: { operationId: "createBrowser" } }, async (request, reply) => {
    const body = (request.body ?? {}) as CreateBrowserRequest;
    const project = await request.scope.project();
    // A create is started where there is room (see Cluster.place), unless another node
    // already chose this one for it.
    const placedHere = cluster?.isPeer(request.headers) === true && request.headers[PLACED_HEADER] === cluster.nodeId;
    const target = cluster === undefined || placedHere ? "self" : cluster.place();
    if (target !== "self" && cluster?.forwarder !== undefined) {
      try {
        await cluster.forwarder.forward(request, reply, target.url, deps.rateLimits.clientKey(request.raw), {
          headers: { [PLACED_HEADER]: target.nodeId, ...resolvedScopeHeader(request, project) },
        });
        return reply;
      } catch (error) {
        // Nothing was started there: it is started here instead.
        if (!(error instanceof PeerUnreachableError)) throw error;
        request.log.warn({ err: error, node: target.nodeId }, "the node chosen for a create did not answer; starting the browser here");
      }
    }
    const input: CreateBrowserInput = {};
    if (body.name !== undefined) input.name = body.name;
    if (body.start_url !== undefined) input.start_url = body.start_url;
    if (body.extensions !== undefined) {
      const uses = await resolveExtensionRefs(stores.extensions, project.id, body.extensions);
      input.extensions = await Promise.all(uses.map(async (use) => ({ ...use, archivePath: await stores.extensions.archivePath(use.id) })));
    }
    return reply.code(201).send(await showOne(request, await browsers.create(project, input)));
  });

  app.get("/browsers", { config: { operationId: "listBrowsers" } }, async (request, reply) => {
    const { offset, limit } = pageOf(request.query as { offset?: number; limit?: number });
    const page = await stores.browsers.list((await request.scope.project()).id, offset, limit);
    setPageHeaders(reply, offset, page.items.length, page.hasMore);
    const [extensions, foreignTokens] = await Promise.all([stores.browsers.extensionsOf(page.items.map((row) => row.id)), tokens(request, page.items)]);
    return page.items.map((row) => show(request, row, extensions, foreignTokens));
  });

  app.get<{ Params: { id_or_name: string } }>("/browsers/:id_or_name", { config: { operationId: "getBrowser" } }, async (request) => {
    const row = await stores.browsers.getByIdOrName((await request.scope.project()).id, request.params.id_or_name);
    return show(request, row, await stores.browsers.extensionsOf([row.id]), await tokens(request, [row]));
  });

  app.delete<{ Params: { id_or_name: string } }>("/browsers/:id_or_name", { config: { operationId: "deleteBrowser" } }, async (request, reply) => {
    const project = await request.scope.project();
    const row = await browserOfRequest(deps, request, project);
    if (await forwardToOwner(deps, request, reply, row, project, deleteUnreachable(row))) return reply;
    await browsers.delete(row);
    return reply.code(204).send();
  });
}
