import type { FastifyInstance, FastifyRequest } from "fastify";
import { type Credential, keyReaches } from "../auth/api-key-store.js";
import { bearerToken, hasAuthorization, unknownTokenError } from "../auth/bearer-token.js";
import { PROJECT_HEADER, RequestScope } from "../auth/request-scope.js";
import { ProjectNotFoundError, ProjectsDisabledError, UnauthorizedError } from "../http/api-errors.js";
import { validateRequest } from "../http/request-validation.js";
import { bodyDigest, type VerifiedPeer } from "../nodes/peer-auth.js";
import type { ApiDeps } from "./api-deps.js";
import type { ResolvedScope } from "./browser-placement.js";
import "./fastify-augment.js";
import { registerAuthConnectionRoutes } from "./auth-connection-routes.js";
import { registerBrowserRoutes } from "./browser-routes.js";
import { registerCredentialRoutes } from "./credential-routes.js";
import { registerExtensionRoutes } from "./extension-routes.js";
import { registerLimitRoutes } from "./limit-routes.js";
import { registerProfileRoutes } from "./profile-routes.js";
import { registerProjectRoutes } from "./project-routes.js";
import { registerTelemetryRoutes } from "./telemetry-routes.js";
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

/** A plain client's request: its credential authenticated, counted against its key, and its project header checked. */
async function clientScope(deps: ApiDeps, request: FastifyRequest): Promise<RequestScope> {
  const credential = await authenticate(deps, request);
  const limited = deps.rateLimits.takeKeyRequest(credential.keyId);
  if (limited) throw limited;
  const header = request.headers[PROJECT_HEADER];
  return RequestScope.of(
    credential,
    await deps.stores.organizations.get(credential.orgId),
    deps.stores.projects,
    Array.isArray(header) ? header.join(",") : header,
  );
}

/** The scope claim of a forwarded request, when it has the shape this node's own claims have. */
function scopeClaim(text: string): ResolvedScope | undefined {
  let claim: unknown;
  try {
    claim = JSON.parse(Buffer.from(text, "base64url").toString("utf8"));
  } catch {
    return undefined;
  }
  const { credential, project } = (claim ?? {}) as Partial<Record<keyof ResolvedScope, Record<string, unknown>>>;
  const str = (value: unknown) => typeof value === "string";
  if (!str(credential?.keyId) || !str(credential?.orgId) || !(credential?.projectId === null || str(credential?.projectId)) || !str(project?.id))
    return undefined;
  return claim as ResolvedScope;
}

/**
 * The scope of a request another node forwarded (its proof checked by the cluster): the
 * one that node resolved, once the body read here is the one the proof covers, the
 * organization read again and the project found active in it (404 `project_not_found`
 * otherwise, as for a client naming it). A request whose body is not the one signed, or
 * whose claim is not one a node makes, is a plain client's.
 */
async function forwardedScope(deps: ApiDeps, request: FastifyRequest, sender: VerifiedPeer & { scope: string }): Promise<RequestScope> {
  const claim = scopeClaim(sender.scope);
  if (claim === undefined || bodyDigest(request.jsonText) !== sender.bodySha256) return clientScope(deps, request);
  const { credential } = claim;
  const org = await deps.stores.organizations.get(credential.orgId);
  const project = await deps.stores.projects.findById(org.id, claim.project.id);
  if (project?.status !== "active") throw new ProjectNotFoundError(`No active project has the id "${claim.project.id}"; it was archived or deleted.`);
  if (!keyReaches(credential, project)) return clientScope(deps, request);
  return RequestScope.resolved(credential, org, deps.stores.projects, project);
}

/** Checks every request passes once its scope is known, in order. */
function checkRequest(deps: ApiDeps, request: FastifyRequest): void {
  const config = request.routeOptions.config;
  if (config.projectAdmin && deps.projectsDisabled) throw new ProjectsDisabledError();
  if (config.orgWideOnly !== undefined) request.scope.requireOrgWide(config.orgWideOnly);
  validateRequest(request);
}

/**
 * Every operation of the spec, behind the checks each request passes in order, before
 * the body is read: the failed-authentication limit of the client, for a request that
 * carries a credential (429 `rate_limited`), authentication (401), the key's rate limit
 * (429 `rate_limited`) and the project header (403, 404 `project_not_found`); then `projects_disabled`,
 * org-wide-only operations (403) and the generated request validators (400); then the
 * handler. A request another node forwarded with a valid proof and the scope it resolved
 * is not authenticated again: its body is read, then its scope checked (see {@link forwardedScope}).
 */
export async function registerApi(app: FastifyInstance, deps: ApiDeps): Promise<void> {
  app.decorateRequest("scope");
  await app.register(async (api) => {
    api.addHook("onRequest", async (request) => {
      // Forwarded by another node, which authenticated it, counted it and resolved its
      // project: settled once its body is read (preValidation), since the proof covers it.
      const sender = await deps.cluster?.peerOf(request.raw);
      // A node's connection carries many clients' requests, each counted where it arrived.
      if (sender !== undefined) deps.connections?.countAs(request.raw.socket, "");
      if (sender?.scope !== undefined) return;
      request.scope = await clientScope(deps, request);
    });
    // A callback hook (a thrown error is passed to `done`): an async hook costs a promise
    // and a microtask on every request, which showed in profiles of the control plane.
    api.addHook("preValidation", (request, _reply, done) => {
      const sender = deps.cluster?.verifiedPeer(request.raw);
      if (sender?.scope !== undefined) {
        forwardedScope(deps, request, sender as VerifiedPeer & { scope: string })
          .then((scope) => {
            request.scope = scope;
            checkRequest(deps, request);
          })
          .then(() => done(), done);
        return;
      }
      try {
        checkRequest(deps, request);
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
    registerTelemetryRoutes(api, deps);
    await registerExtensionRoutes(api, deps);
    registerCredentialRoutes(api, deps);
    registerProfileRoutes(api, deps);
  });
}
