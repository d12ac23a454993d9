import type { CreateBrowserRequest } from "@browser-service/types";
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { CreateBrowserInput } from "../browsers/browser-service.js";
import { type BrowserExtension, type BrowserRow, toBrowser } from "../browsers/browser-store.js";
import { resolveExtensionRefs } from "../extensions/extension-refs.js";
import { pageOf, setPageHeaders } from "../http/paging.js";
import type { ApiDeps } from "./api-deps.js";

/** `/browsers` and `/browsers/{id_or_name}`: the minimal browser operations. */
export function registerBrowserRoutes(app: FastifyInstance, { stores, browsers, browserUrls }: ApiDeps): void {
  // `cdp_ws_url` names the host this request reached, and carries the token while the browser runs.
  // Its extensions are read here, where a Browser is shown, once per page of them.
  const show = (request: FastifyRequest, row: BrowserRow, extensions: Map<string, BrowserExtension[]>) =>
    toBrowser(row, browserUrls.forBrowser(request.headers, row.id, browsers.token(row.id)), extensions.get(row.id) ?? []);
  const showOne = async (request: FastifyRequest, row: BrowserRow) => show(request, row, await stores.browsers.extensionsOf([row.id]));

  app.post("/browsers", { config: { operationId: "createBrowser" } }, async (request, reply) => {
    const body = (request.body ?? {}) as CreateBrowserRequest;
    const project = await request.scope.project();
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
    const extensions = await stores.browsers.extensionsOf(page.items.map((row) => row.id));
    return page.items.map((row) => show(request, row, extensions));
  });

  app.get<{ Params: { id_or_name: string } }>("/browsers/:id_or_name", { config: { operationId: "getBrowser" } }, async (request) =>
    showOne(request, await stores.browsers.getByIdOrName((await request.scope.project()).id, request.params.id_or_name)),
  );

  app.delete<{ Params: { id_or_name: string } }>("/browsers/:id_or_name", { config: { operationId: "deleteBrowser" } }, async (request, reply) => {
    await browsers.delete(await stores.browsers.getByIdOrName((await request.scope.project()).id, request.params.id_or_name));
    return reply.code(204).send();
  });
}
