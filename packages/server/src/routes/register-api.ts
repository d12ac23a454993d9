import type { FastifyInstance } from "fastify";
import { bearerToken, unknownTokenError } from "../auth/bearer-token.js";
import { PROJECT_HEADER, RequestScope } from "../auth/request-scope.js";
import { ProjectsDisabledError } from "../http/api-errors.js";
import { validateRequest } from "../http/request-validation.js";
import type { ApiDeps } from "./api-deps.js";
import { registerAuthConnectionRoutes } from "./auth-connection-routes.js";
import { registerBrowserRoutes } from "./browser-routes.js";
import { registerExtensionRoutes } from "./extension-routes.js";
import { registerLimitRoutes } from "./limit-routes.js";
import { registerProjectRoutes } from "./project-routes.js";
import { registerWebMcpRoutes } from "./webmcp-routes.js";

/**
 * Every operation of the spec, behind the checks each request passes in order:
 * authentication and the project header (401, 403, 404 `project_not_found`) before the
 * body is read; then `projects_disabled`, org-wide-only operations (403) and the
 * generated request validators (400); then the handler.
 */
export async function registerApi(app: FastifyInstance, deps: ApiDeps): Promise<void> {
  app.decorateRequest("scope");
  await app.register(async (api) => {
    api.addHook("onRequest", async (request) => {
      const credential = deps.stores.apiKeys.authenticate(bearerToken(request.headers.authorization));
      if (!credential) throw unknownTokenError();
      const header = request.headers[PROJECT_HEADER];
      request.scope = new RequestScope(credential, deps.stores.organizations.get(credential.orgId), deps.stores.projects, Array.isArray(header) ? header.join(",") : header);
    });
    api.addHook("preValidation", async (request) => {
      const config = request.routeOptions.config;
      if (config.projectAdmin && deps.projectsDisabled) throw new ProjectsDisabledError();
      if (config.orgWideOnly !== undefined) request.scope.requireOrgWide(config.orgWideOnly);
      validateRequest(request);
    });
    registerProjectRoutes(api, deps);
    registerLimitRoutes(api, deps);
    registerAuthConnectionRoutes(api, deps);
    registerBrowserRoutes(api, deps);
    registerWebMcpRoutes(api, deps);
    await registerExtensionRoutes(api, deps);
  });
}
