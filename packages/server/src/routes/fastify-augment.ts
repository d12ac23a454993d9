import type { RequestScope } from "../auth/request-scope.js";
import type { BrowserRow } from "../browsers/browser-store.js";

declare module "fastify" {
  interface FastifyRequest {
    /** Who the request acts as and on which project; set by the authentication hook of register-api.ts. */
    scope: RequestScope;
    /** For a request another node forwarded: the browser row it read (trusted through the nodes' secret); else `undefined`. */
    forwardedBrowser: BrowserRow | undefined;
  }
}
