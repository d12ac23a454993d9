import type { CreateBrowserRequest } from "@browser-service/types";
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { CreateBrowserInput } from "../browsers/browser-service.js";
import { type BrowserExtension, type BrowserRow, toBrowser } from "../browsers/browser-store.js";
import { resolveExtensionRefs } from "../extensions/extension-refs.js";
import { pageOf, setPageHeaders } from "../http/paging.js";
import { PLACED_HEADER } from "../nodes/peer-auth.js";
import { PeerUnreachableError } from "../nodes/peer-forwarder.js";
import type { ProjectRow } from "../projects/project-store.js";
import type { ApiDeps } from "./api-deps.js";
import { browserOfRequest, deleteUnreachable, forwardToOwner, peerCallBrowser, resolvedScopeHeader } from "./browser-placement.js";

// A page holds at most 100 browsers; their tokens are read from their nodes this many at a time.
const TOKEN_READS_AT_ONCE = 8;

/** `/browsers` and `/browsers/{id_or_name}`: the minimal browser operations. */
export function registerBrowserRoutes(app: FastifyInstance, deps: ApiDeps): void {
  const { stores, browsers, browserUrls, cluster } = deps;
  // `cdp_ws_url` names the host this request reached, and carries the token while the browser
  // runs (another node's browsers' tokens come from their node: see `tokens` below).
  // Its extensions are read here, where a Browser is shown, once per page of them.
  const show = (request: FastifyRequest, row: BrowserRow, extensions: Map<string, BrowserExtension[]>, tokens?: Map<string, string>) =>
    toBrowser(row, browserUrls.forBrowser(request.headers, row.id, browsers.token(row.id) ?? tokens?.get(row.id)), extensions.get(row.id) ?? []);
  const showOne = async (request: FastifyRequest, row: BrowserRow) => show(request, row, await stores.browsers.extensionsOf([row.id]));
  /**
   * The tokens of the running browsers of other nodes among `rows`: each asked of its node
   * as the `GET /browsers/{id}` of this request (its scope resolved here, so the node reads
   * nothing again and counts nothing), a few at a time. A browser whose node does not
   * answer is shown without its token; its API key still opens it.
   */
  const tokens = async (request: FastifyRequest, rows: readonly BrowserRow[], project: ProjectRow): Promise<Map<string, string>> => {
    const found = new Map<string, string>();
    const forwarder = cluster?.forwarder;
    if (cluster === undefined || forwarder === undefined) return found;
    const foreign = rows.flatMap((row) => {
      const where = row.status === "running" ? cluster.locate(row.node_id) : "self";
      return typeof where === "object" ? [{ row, url: where.url }] : [];
    });
    const clientKey = deps.rateLimits.clientKey(request.raw);
    for (let start = 0; start < foreign.length; start += TOKEN_READS_AT_ONCE) {
      await Promise.all(
        foreign.slice(start, start + TOKEN_READS_AT_ONCE).map(async ({ row, url }) => {
          try {
            const shown = (await forwarder.getJson(url, `/browsers/${encodeURIComponent(row.id)}`, clientKey, {
              host: request.headers.host ?? "",
              ...resolvedScopeHeader(request, project, row),
            })) as { cdp_ws_url?: unknown };
            const token = typeof shown.cdp_ws_url === "string" ? new URL(shown.cdp_ws_url).searchParams.get("token") : null;
            if (token !== null) found.set(row.id, token);
          } catch (error) {
            request.log.warn({ err: error, browser: row.id, node: row.node_id }, "could not read the DevTools token of another node's browser");
          }
        }),
      );
    }
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
    const project = await request.scope.project();
    const page = await stores.browsers.list(project.id, offset, limit);
    setPageHeaders(reply, offset, page.items.length, page.hasMore);
    const [extensions, foreignTokens] = await Promise.all([
      stores.browsers.extensionsOf(page.items.map((row) => row.id)),
      tokens(request, page.items, project),
    ]);
    return page.items.map((row) => show(request, row, extensions, foreignTokens));
  });

  app.get<{ Params: { id_or_name: string } }>("/browsers/:id_or_name", { config: { operationId: "getBrowser" } }, async (request) => {
    const project = await request.scope.project();
    const row = await browserOfRequest(deps, request, project);
    return show(request, row, await stores.browsers.extensionsOf([row.id]), await tokens(request, [row], project));
  });

  app.delete<{ Params: { id_or_name: string } }>("/browsers/:id_or_name", { config: { operationId: "deleteBrowser" } }, async (request, reply) => {
    const project = await request.scope.project();
    const row = await browserOfRequest(deps, request, project);
    if (await forwardToOwner(deps, request, reply, row, deleteUnreachable(row))) return reply;
    await browsers.delete(row);
    return reply.code(204).send();
  });

  // Another node's delete of one of this node's browsers: the same stop.
  const nodeId = cluster?.nodeId;
  if (deps.peerCalls === undefined || nodeId === undefined) return;
  deps.peerCalls.handle("deleteBrowser", async (call) => {
    // Read again, as a stop is rare and final: a row that is no more is 404, as for a direct delete.
    const claimed = peerCallBrowser(call, nodeId);
    await browsers.delete(await stores.browsers.getByIdOrName(claimed.project_id, claimed.id));
    return { status: 204, headers: {} };
  });
}
