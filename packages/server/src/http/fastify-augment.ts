import type { operations } from "@browser-service/types";

declare module "fastify" {
  interface FastifyRequest {
    /** The JSON body's text as it arrived (a request without one: `undefined`). */
    jsonText: string | undefined;
  }
  interface FastifyContextConfig {
    /** The spec's `operationId` of the route: it selects the request and response validators. */
    operationId?: keyof operations;
    /** A project administration route: 404 `projects_disabled` when the organization has projects disabled. */
    projectAdmin?: boolean;
    /** Set when only an org-wide key may call the route; names the action in the 403. */
    orgWideOnly?: string;
    /** The body is a form the handler reads and validates itself. */
    formBody?: boolean;
    /**
     * A web page of the service (the live view, the hosted login page) or a call only such
     * a page makes, not an operation of the spec: its success is the page's own (HTML, or
     * JSON for the page), its errors the spec's Error.
     */
    page?: boolean;
  }
}
