import type { RequestScope } from "../auth/request-scope.js";

declare module "fastify" {
  interface FastifyContextConfig {
    /** The spec's `operationId` of the route: it selects the request and response validators. */
    operationId?: string;
    /** A project administration route: 404 `projects_disabled` when the organization has projects disabled. */
    projectAdmin?: boolean;
    /** Set when only an org-wide key may call the route; names the action in the 403. */
    orgWideOnly?: string;
    /** The body is a form the handler reads and validates itself. */
    formBody?: boolean;
  }

  interface FastifyRequest {
    /** Who the request acts as and on which project; set by the authentication hook. */
    scope: RequestScope;
  }
}
