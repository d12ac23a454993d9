import type { FastifyInstance } from "fastify";
import type { ApiDeps } from "./api-deps.js";

/** `/auth/connections/{id}`: reading a managed auth connection of the request's project. */
export function registerAuthConnectionRoutes(app: FastifyInstance, { stores }: ApiDeps): void {
  app.get<{ Params: { id: string } }>(
    "/auth/connections/:id",
    { config: { operationId: "getAuthConnection" } },
    async (request) => await stores.authConnections.get((await request.scope.project()).id, request.params.id),
  );
}
