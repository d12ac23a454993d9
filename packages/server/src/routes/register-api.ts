import type { FastifyInstance, FastifyRequest } from "fastify";
import type { Credential } from "../auth/api-key-store.js";
import { bearerToken, hasAuthorization, unknownTokenError } from "../auth/bearer-token.js";
import { PROJECT_HEADER, RequestScope } from "../auth/request-scope.js";
import { ProjectsDisabledError, UnauthorizedError } from "../http/api-errors.js";
import { validateRequest } from "../http/request-validation.js";
import type { Organization } from "../organization/organization-store.js";
import type { ProjectRow } from "../projects/project-store.js";
import type { ApiDeps } from "./api-deps.js";
import "./fastify-augment.js";
import { registerAuthConnectionRoutes } from "./auth-connection-routes.js";
import { registerBrowserRoutes } from "./browser-routes.js";
import { registerExtensionRoutes } from "./extension-routes.js";
import { registerLimitRoutes } from "./limit-routes.js";
import { registerProjectRoutes } from "./project-routes.js";
import { registerWebMcpRoutes } from "./webmcp-routes.js";

/**
 * The key the request's bearer token names. A missing, malformed or unknown token is 401;
 * a malformed or unknown one counts as a failed authentication of the client, and while
 * the client has none left every credential it sends is 429, before the key store is read.
 */
async function authenticate(deps: ApiDeps, request: FastifyRequest): Promise<Credential> {
  const header = request.headers.authorization;
  // No credential guesses nothing and reaches no key lookup: it is neither counted nor
  // refused, so that pages flooding 127.0.0.1 with bare requests cannot lock out the keys used there.
  const client = hasAuthorization(header) ? deps.rateLimits.clientKey(request.raw) : undefined;
  if (client !== undefined) {
    // Before the credential is read: a blocked client costs a map lookup, never a key lookup.
    const blocked = deps.rateLimits.checkClient(client);
    if (blocked) throw blocked;
  }
  try {
    const credential = await deps.stores.apiKeys.authenticate(bearerToken(header));
    if (!credential) throw unknownTokenError();
    return credential;
  } catch (error) {
    if (client !== undefined && error instanceof UnauthorizedError) deps.rateLimits.recordFailedAuth(client);
    throw error;
  }
}

/**
 * Every operation of the spec, behind the checks each request passes in order, before
 * the body is read: the failed-authentication limit of the client, for a request that
 * carries a credential (429 `rate_limited`), authentication (401), the key's rate limit
 * (429 `rate_limited`) and the project header (403, 404 `project_not_found`); then `projects_disabled`,
 * org-wide-only operations (403) and the generated request validators (400); then the
 * handler.
 */
export async function registerApi(app: FastifyInstance, deps: ApiDeps): Promise<void> {
  app.decorateRequest("scope");
  await app.register(async (api) => {
    api.addHook("onRequest", async (request) => {
      // Forwarded by another node, which authenticated it, counted it and resolved its project.
      const resolved = deps.cluster?.declaredScope<{ credential: Credential; org: Organization; project: ProjectRow }>(request.headers);
      if (resolved !== undefined) {
        request.scope = RequestScope.resolved(resolved.credential, resolved.org, deps.stores.projects, resolved.project);
        return;
      }
      const credential = await authenticate(deps, request);
      const limited = deps.rateLimits.takeKeyRequest(credential.keyId);
      if (limited) throw limited;
      const header = request.headers[PROJECT_HEADER];
      request.scope = await RequestScope.of(
        credential,
        await deps.stores.organizations.get(credential.orgId),
        deps.stores.projects,
        Array.isArray(header) ? header.join(",") : header,
      );
    });
    // A callback hook (a thrown error is passed to `done`): an async hook costs a promise
    // and a microtask on every request, which showed in profiles of the control plane.
    api.addHook("preValidation", (request, _reply, done) => {
      try {
        const config = request.routeOptions.config;
        if (config.projectAdmin && deps.projectsDisabled) throw new ProjectsDisabledError();
        if (config.orgWideOnly !== undefined) request.scope.requireOrgWide(config.orgWideOnly);
        validateRequest(request);
      } catch (error) {
        done(error as Error);
        return;
      }
      done();
    });
    registerProjectRoutes(api, deps);
    registerLimitRoutes(api, deps);
    registerAuthConnectionRoutes(api, deps);
    registerBrowserRoutes(api, deps);
    registerWebMcpRoutes(api, deps);
    await registerExtensionRoutes(api, deps);
  });
}
