import type { IncomingMessage } from "node:http";
import { BadRequestError } from "./api-errors.js";

/**
 * What is wrong with a request's target, as the spec's 400, or `undefined`. This server
 * is an origin server, not a proxy: a request names a path (origin form, RFC 9112
 * 3.2.1), never a URL with a host (`GET http://host/x`, absolute form), a host and port
 * (authority form) or `*` (asterisk form). Node parses each of them into `url`, and a
 * router would serve `POST http://elsewhere/browsers` as `POST /browsers`, leaving a host
 * the client chose in the URL that code builds from it.
 */
export function requestTargetError(request: IncomingMessage): BadRequestError | undefined {
  const url = request.url ?? "";
  if (url.startsWith("/")) return undefined;
  return new BadRequestError("The request is malformed (1 problem).", [
    {
      code: "invalid_request_target",
      message: `The request target ${JSON.stringify(url.slice(0, 100))} is not a path: this server is not a proxy, so a request names a path such as /browsers, never a URL or a host.`,
    },
  ]);
}
