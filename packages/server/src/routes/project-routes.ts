import type { ListProjectsQuery } from "@browser-service/types";
import type { FastifyInstance } from "fastify";
import { pageOf, setPageHeaders } from "../http/paging.js";
import type { BodyOf } from "../http/request-validation.js";
import { type ProjectListQuery, type ProjectRow, toProject } from "../projects/project-store.js";
import type { ApiDeps } from "./api-deps.js";

/** `/org/projects` and `/org/projects/{id}`: project administration. */
export function registerProjectRoutes(app: FastifyInstance, { stores }: ApiDeps): void {
  // The JSON of each page, for as long as the store hands back the same page array: it
  // does until the next write of any kind, so a renamed or archived project shows at once.
  const pageBodies = new WeakMap<readonly ProjectRow[], string>();

  app.get("/org/projects", { config: { operationId: "listProjects", projectAdmin: true } }, async (request, reply) => {
    const query = request.query as ListProjectsQuery;
    const { offset, limit } = pageOf(query);
    const scope = request.scope;
    const filter: ProjectListQuery = { offset, limit };
    if (query.name !== undefined) filter.name = query.name;
    if (query.query !== undefined) filter.query = query.query;
    // A project-scoped key sees only its own project.
    if (scope.credential.projectId !== null) filter.onlyId = scope.credential.projectId;
    const page = await stores.projects.list(scope.org.id, filter);
    setPageHeaders(reply, offset, page.items.length, page.hasMore);
    let body = pageBodies.get(page.items);
    if (body === undefined) {
      body = JSON.stringify(page.items.map(toProject));
      pageBodies.set(page.items, body);
    }
    return reply.type("application/json; charset=utf-8").send(body);
  });

  app.post<{ Body: BodyOf<"createProject"> }>(
    "/org/projects",
    { config: { operationId: "createProject", projectAdmin: true, orgWideOnly: "Creating a project" } },
    async (request, reply) => {
      const body = request.body;
      return reply.code(201).send(toProject(await stores.projects.create(request.scope.org.id, body.name)));
    },
  );

  app.get<{ Params: { id: string } }>("/org/projects/:id", { config: { operationId: "getProject", projectAdmin: true } }, async (request) => {
    return toProject(await request.scope.visibleProject(request.params.id));
  });

  app.patch<{ Params: { id: string }; Body: BodyOf<"updateProject"> }>(
    "/org/projects/:id",
    { config: { operationId: "updateProject", projectAdmin: true } },
    async (request) => {
      const body = request.body;
      const scope = request.scope;
      // A project-scoped key may rename its own project while it is active, and nothing else.
      const project = await scope.visibleProject(request.params.id);
      if (body.status !== undefined) scope.requireOrgWide("Archiving or activating a project");
      scope.requireChangeable(project);
      const change: { name?: string; status?: "active" | "archived" } = {};
      if (body.name !== undefined) change.name = body.name;
      if (body.status !== undefined) change.status = body.status;
      return toProject(await stores.projects.update(scope.org.id, project, change));
    },
  );

  app.delete<{ Params: { id: string } }>(
    "/org/projects/:id",
    { config: { operationId: "deleteProject", projectAdmin: true, orgWideOnly: "Deleting a project" } },
    async (request, reply) => {
      const project = await stores.projects.getByIdOrName(request.scope.org.id, request.params.id);
      await stores.projects.delete(request.scope.org.id, project);
      return reply.code(204).send();
    },
  );
}
