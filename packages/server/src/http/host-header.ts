import type { IncomingMessage } from "node:http";
import { BadRequestError } from "./api-errors.js";

// RFC 9110 7.2 / RFC 3986 3.2.2: uri-host [":" port]. The host is an IP literal in
// brackets or a reg-name (unreserved, percent-encoded and sub-delims characters, which
// covers IPv4 addresses); it may be empty.
const HOST = /^(?:\[[0-9A-Za-z:.]+\]|(?:[A-Za-z0-9\-._~!$&'()*+,;=]|%[0-9A-Fa-f]{2})*)(?::[0-9]*)?$/;

const malformed = (code: string, message: string): BadRequestError => new BadRequestError("The request is malformed (1 problem).", [{ code, message }]);

/**
 * What is wrong with a request's `Host` header, as the spec's 400, or `undefined`. RFC
 * 9112 3.2: a server must answer 400 to an HTTP/1.1 request without one, and to any
 * request with two or with one that is not a host and optional port. Node checks none
 * of it (it keeps the first of two), and the host a request names ends up in URLs the
 * server hands out (`cdp_ws_url`).
 */
export function hostHeaderError(request: IncomingMessage): BadRequestError | undefined {
  const hosts: string[] = [];
  const raw = request.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) if ((raw[i] as string).toLowerCase() === "host") hosts.push(raw[i + 1] as string);
  if (hosts.length === 0) return request.httpVersion === "1.1" ? malformed("host_required", "An HTTP/1.1 request needs a Host header.") : undefined;
  if (hosts.length > 1) return malformed("invalid_host", `The request has ${hosts.length} Host headers; send one.`);
  const host = hosts[0] as string;
  if (!HOST.test(host)) return malformed("invalid_host", `The Host header ${JSON.stringify(host.slice(0, 100))} is not a host and optional port.`);
  return undefined;
}
