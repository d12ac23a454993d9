import type { RequestScope } from "../auth/request-scope.js";

declare module "fastify" {
  interface FastifyRequest {
    /** Who the request acts as and on which project; set by the authentication hook of register-api.ts. */
    scope: RequestScope;
  }
}
